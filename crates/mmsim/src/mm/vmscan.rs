//! Page reclaim (mm/vmscan.c: v4.2 semantics with one zone per node, and the later rules
//! of `kernel.rs` as switches), per memory cgroup.
//!
//! - Reclaim works on lruvecs, one per (memcg, node). `shrink_node` walks the memcgs of the
//!   reclaim target's subtree (shrink_node_memcgs: the root for global reclaim, the memcg
//!   whose limit was hit for try_to_free_mem_cgroup_pages), skipping those protected by
//!   memory.min / memory.low, and shrinks each memcg's lruvec on the node.
//! - kswapd (one kthread per node) is woken by the allocator when a node's free pages fall
//!   below the low watermark and reclaims until they are above the high watermark
//!   (balance_pgdat), one shrink_node pass per step, from DEF_PRIORITY (12) down: a pass
//!   lowers the priority unless it scanned its target and reclaimed something
//!   (`kswapd_lower_priority`; 2.6.30: every pass, restarting after 32 reclaimed).
//! - Direct reclaim (try_to_free_pages) runs in the allocating task when even the min
//!   watermark cannot be met: priority 12 → 0 until SWAP_CLUSTER_MAX (32) pages are freed.
//! - shrink_lruvec scans each evictable list in batches of 32, `size >> priority` pages in
//!   total, balanced between anon and file by get_scan_count; active lists are scanned only
//!   when their inactive list is low.
//! - shrink_active_list deactivates (page_referenced only rotates mapped pages; with
//!   `exec-protect`, referenced file pages of VM_EXEC mappings stay active).
//! - shrink_inactive_list isolates from the tail, shrink_page_list decides per page
//!   (page_check_references: activate / keep / reclaim / reclaim-clean), dirty file pages are
//!   tagged PG_reclaim and left to the flusher unless the zone is flagged dirty for kswapd,
//!   clean pages are removed from the cache with a workingset shadow entry and freed.

use crate::machine::profile::KFunc;
use crate::mm::lru_deque::PREFETCH_AHEAD;
use crate::mm::memcontrol::{MemcgEvent, MemcgId, ROOT_MEM_CGROUP};
use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn};
use crate::mm::page_alloc::{int_sqrt, Gfp};
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// SWAP_CLUSTER_MAX.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// DEF_PRIORITY.
pub const DEF_PRIORITY: u32 = 12;
/// vm_swappiness's default (`[vm] swappiness` sets it).
pub const SWAPPINESS: u64 = 60;

/// struct scan_control: one reclaim request carried down the call tree.
#[derive(Clone, Copy, Debug)]
pub struct ScanControl {
    /// Pages to reclaim before stopping.
    pub nr_to_reclaim: u64,
    /// Scan priority: lists are scanned `size >> priority` per pass.
    pub priority: u32,
    /// May write dirty pages (pageout).
    pub may_writepage: bool,
    /// May unmap mapped pages.
    pub may_unmap: bool,
    /// May swap anonymous pages.
    pub may_swap: bool,
    /// Running in kswapd (current_is_kswapd).
    pub is_kswapd: bool,
    /// Allocation context.
    pub gfp: Gfp,
    /// Pages scanned so far.
    pub nr_scanned: u64,
    /// Pages reclaimed so far.
    pub nr_reclaimed: u64,
    /// The memcg whose subtree is reclaimed (the root for global reclaim).
    pub target_memcg: MemcgId,
    /// May reclaim memcgs below their memory.low (the retry when nothing else was left).
    pub memcg_low_reclaim: bool,
    /// A memcg was skipped for its memory.low.
    pub memcg_low_skipped: bool,
    /// DEACTIVATE_ANON (bit 0) / DEACTIVATE_FILE (bit 1): active lists may be shrunk (v5.5).
    pub may_deactivate: u8,
    /// Deactivate both types regardless (the retry after skipped deactivation).
    pub force_deactivate: bool,
    /// An active list was not shrunk because may_deactivate forbade it.
    pub skipped_deactivate: bool,
    /// Plenty of inactive file pages that are not thrashing: reclaim only them (v5.5).
    pub cache_trim_mode: bool,
    /// The node is almost out of file pages: reclaim anon (v5.5).
    pub file_is_tiny: bool,
    /// Never turn cache_trim_mode on (sc->no_cache_trim_mode: kswapd's retry, v6.10).
    pub no_cache_trim_mode: bool,
    /// A shrink_node in cache_trim_mode reclaimed nothing (sc->cache_trim_mode_failed,
    /// v6.10; only kswapd's balance_pgdat reads it).
    pub cache_trim_mode_failed: bool,
    /// The target lruvec's reclaim costs at the start of the pass (v5.8).
    pub anon_cost: u64,
    /// See `anon_cost`.
    pub file_cost: u64,
    /// Per-pass counts for the writeback throttling decisions (sc->nr).
    pub nr: ReclaimNr,
    /// The swappiness a write to memory.reclaim asked for (`swappiness=`, v6.11,
    /// sc->proactive_swappiness); None: vm_swappiness.
    pub proactive_swappiness: Option<u64>,
    /// Reclaim asked for by a write to memory.reclaim (sc->proactive).
    pub proactive: bool,
    /// nr_reclaimed when kswapd's pass began (sc->last_reclaimed, MGLRU of 6.1).
    pub last_reclaimed: u64,
    /// shrink_folio_list's ignore_references: reclaim without checking references
    /// (MADV_PAGEOUT from v6.10).
    pub ignore_references: bool,
    /// A shrink_node of this direct or limit reclaim found its target lruvec congested
    /// (LRUVEC_NODE_CONGESTED, which kswapd sets, or LRUVEC_CGROUP_CONGESTED) and
    /// reclaim_throttle(VMSCAN_THROTTLE_CONGESTED) would sleep: skip_throttle_noprogress
    /// did not let it off (v5.16).
    pub throttle_congested: bool,
    /// This global direct reclaim reached priority 1 without reclaiming anything and
    /// reclaim_throttle(VMSCAN_THROTTLE_NOPROGRESS) would sleep (consider_reclaim_throttle,
    /// v5.16; skip_throttle_noprogress did not let it off).
    pub throttle_noprogress: bool,
}

/// sc->nr: what shrink_page_list met in one shrink_node pass.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReclaimNr {
    /// Dirty pages seen.
    pub dirty: u64,
    /// Dirty pages not yet queued for IO.
    pub unqueued_dirty: u64,
    /// Dirty pages already under writeback (the backing device is congested).
    pub congested: u64,
    /// Pages under writeback.
    pub writeback: u64,
    /// Pages under writeback already marked for immediate reclaim.
    pub immediate: u64,
    /// File pages isolated.
    pub file_taken: u64,
    /// Pages isolated.
    pub taken: u64,
}

impl ScanControl {
    /// A request for `nr` pages.
    pub fn new(nr: u64, is_kswapd: bool, gfp: Gfp) -> ScanControl {
        ScanControl {
            nr_to_reclaim: nr,
            priority: DEF_PRIORITY,
            may_writepage: true,
            may_unmap: true,
            may_swap: true,
            is_kswapd,
            gfp,
            nr_scanned: 0,
            nr_reclaimed: 0,
            target_memcg: ROOT_MEM_CGROUP,
            memcg_low_reclaim: false,
            memcg_low_skipped: false,
            may_deactivate: DEACTIVATE_ANON | DEACTIVATE_FILE,
            force_deactivate: false,
            skipped_deactivate: false,
            cache_trim_mode: false,
            file_is_tiny: false,
            no_cache_trim_mode: false,
            cache_trim_mode_failed: false,
            anon_cost: 0,
            file_cost: 0,
            nr: ReclaimNr::default(),
            proactive_swappiness: None,
            proactive: false,
            last_reclaimed: 0,
            ignore_references: false,
            throttle_congested: false,
            throttle_noprogress: false,
        }
    }

    /// cgroup_reclaim: reclaim on behalf of a memcg limit.
    pub fn cgroup_reclaim(&self) -> bool {
        self.target_memcg != ROOT_MEM_CGROUP
    }
}

/// What memcg limit reclaim without cgroup writeback leaves the charging task to wait for
/// (the kernel waits inside the pass and scans on after; here the charge sleeps and its
/// retry reclaims again — a throttle ends the pass at its batch, `reclaim_pass_sleeps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReclaimWait {
    /// folio_wait_writeback of a page under writeback that it had marked PG_reclaim
    /// before (shrink_folio_list's case 3): at its end the page rotates to the inactive
    /// tail (folio_rotate_reclaimable), where the retried reclaim finds it first.
    Writeback(Pfn),
    /// reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK) on a node (v6.1, every page
    /// shrink_inactive_list isolated dirty and not queued for IO).
    Throttle(usize),
}

/// SWAPPINESS_ANON_ONLY (MAX_SWAPPINESS + 1): the swappiness of a memory.reclaim write
/// with `swappiness=max`, which reclaims anonymous pages only (v6.16).
pub const SWAPPINESS_ANON_ONLY: u64 = crate::mm::lru_gen::MAX_SWAPPINESS + 1;

/// DEACTIVATE_ANON.
pub const DEACTIVATE_ANON: u8 = 1;
/// DEACTIVATE_FILE.
pub const DEACTIVATE_FILE: u8 = 2;

/// enum page_references.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageReferences {
    /// Move to the active list.
    Activate,
    /// Keep on the inactive list.
    Keep,
    /// Reclaim.
    Reclaim,
    /// Reclaim only if clean.
    ReclaimClean,
}

/// Whether kswapd waits on its node's kswapd_wait (where wakeup_kswapd finds it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KswapdSleep {
    /// Running, or sleeping elsewhere (congestion_wait, reclaim_throttle): wakeup_kswapd
    /// does not wake it (its waitqueue is not active).
    #[default]
    Awake,
    /// kswapd_try_to_sleep's schedule_timeout(HZ/10), until the given time.
    Short(crate::machine::Ps),
    /// Asleep until woken (schedule()).
    Deep,
}

/// Per-node reclaim state (zone->flags, kswapd's progress, the shadow-node list_lru).
#[derive(Clone, Debug, Default)]
pub struct ReclaimState {
    /// ZONE_DIRTY: the tail of the inactive file list is full of dirty pages; kswapd may write.
    pub zone_dirty: bool,
    /// ZONE_WRITEBACK: pages at the tail are under writeback; kswapd should wait.
    pub zone_writeback: bool,
    /// kswapd's current priority within balance_pgdat.
    pub kswapd_priority: u32,
    /// Pages kswapd reclaimed since its priority loop began (balance_pgdat's
    /// sc.nr_reclaimed; 2.6.30: since loop_again).
    pub kswapd_reclaimed: u64,
    /// Pages it scanned since then (2.6.30's total_scanned).
    pub kswapd_scanned: u64,
    /// Where kswapd sleeps: on kswapd_wait (its short sleep or until woken) or not.
    pub kswapd_sleep: KswapdSleep,
    /// An allocator woke kswapd in its short sleep (schedule_timeout returned early).
    pub kswapd_woken_early: bool,
    /// balance_pgdat calls in a row that reclaimed nothing (pgdat->kswapd_failures, v4.11).
    pub kswapd_failures: u32,
    /// kswapd is between a wake-up and reaching the high watermark.
    pub kswapd_active: bool,
    /// kswapd met pages marked for immediate reclaim still under writeback: throttle it
    /// (v5.16).
    pub throttle_writeback: bool,
    /// Writeback completions on the node (NR_THROTTLED_WRITTEN).
    pub nr_throttled_written: u64,
    /// Its value when the first task started throttling (nr_reclaim_start).
    pub nr_reclaim_start: u64,
    /// balance_pgdat's sc.memcgs_need_aging (MGLRU of 6.1): false at its start, so its
    /// first pass skips the aging; cleared by a pass that found enough cold folios.
    pub kswapd_memcgs_need_aging: bool,
    /// balance_pgdat's sc.no_cache_trim_mode and sc.cache_trim_mode_failed (v6.10): its
    /// priority loop runs again without cache_trim_mode once, when it reclaimed nothing
    /// and cache_trim_mode failed in some pass.
    pub kswapd_no_cache_trim_mode: bool,
    /// See `kswapd_no_cache_trim_mode`.
    pub kswapd_cache_trim_mode_failed: bool,
}

impl Sim {
    /// lruvec_lru_size: pages on `lru` of `memcg`'s own lruvec on `node`.
    fn lru_size(&self, node: usize, memcg: MemcgId, lru: LruList) -> u64 {
        self.lruvec(memcg, node).lru_size(lru)
    }

    /// Total swap pages configured (0 without a swap device).
    pub fn total_swap_pages(&self) -> u64 {
        self.swap.as_ref().map(|s| s.nr_pages).unwrap_or(0)
    }

    /// inactive_list_is_low for `memcg`'s lruvec on `node`.
    ///
    /// v4.2: file: active > inactive; anon: inactive × ratio < active with ratio =
    /// int_sqrt(10 × GB), GB of the node for the root (of the lists for a memcg); false
    /// without swap. `lru-size-inactive-ratio` (v4.10; inactive_is_low of 6.x): the ratio
    /// from the GB of the two lists for both types; from v5.5 (`refault-deactivate`) the
    /// sizes are hierarchical (the memcg and its descendants).
    pub fn inactive_list_is_low(&self, node: usize, memcg: MemcgId, file: bool) -> bool {
        let (il, al) = if file {
            (LruList::InactiveFile, LruList::ActiveFile)
        } else {
            (LruList::InactiveAnon, LruList::ActiveAnon)
        };
        if !file && self.total_swap_pages() == 0 {
            return false;
        }
        let (inactive, active) = if self.features.refault_deactivate {
            (
                self.lruvec_page_state_lru(memcg, node, il),
                self.lruvec_page_state_lru(memcg, node, al),
            )
        } else {
            (
                self.lru_size(node, memcg, il),
                self.lru_size(node, memcg, al),
            )
        };
        if file && !self.features.lru_size_inactive_ratio {
            return active > inactive;
        }
        let gb = if self.features.lru_size_inactive_ratio || memcg != ROOT_MEM_CGROUP {
            (inactive + active) >> (30 - 12)
        } else {
            u64::from(self.nodes[node].present_pages) >> (30 - 12)
        };
        let ratio = if gb > 0 { int_sqrt(10 * gb).max(1) } else { 1 };
        inactive * ratio < active
    }

    /// can_reclaim_anon_pages: swap space `memcg` may still use.
    fn can_reclaim_anon_pages(&self, memcg: MemcgId) -> bool {
        if memcg == ROOT_MEM_CGROUP {
            self.swap_free_pages() > 0
        } else {
            self.mem_cgroup_get_nr_swap_pages(memcg) > 0
        }
    }

    /// The anon/file scan fractions (SCAN_FRACT) and their denominator.
    fn scan_fractions(&mut self, node: usize, memcg: MemcgId, sc: &ScanControl) -> ([u64; 2], u64) {
        let anon_prio = self.sc_swappiness(sc, memcg);
        let file_prio = 200 - anon_prio;
        if self.features.lru_cost_balance {
            // v5.8: pressure inversely proportional to each type's reclaim cost, at least
            // a third of it before swappiness.
            let total_cost = sc.anon_cost + sc.file_cost;
            let anon_cost = total_cost + sc.anon_cost;
            let file_cost = total_cost + sc.file_cost;
            let total_cost = anon_cost + file_cost;
            let ap = anon_prio * (total_cost + 1) / (anon_cost + 1);
            let fp = file_prio * (total_cost + 1) / (file_cost + 1);
            return ([ap, fp], ap + fp);
        }
        let size = |s: &Sim, l: LruList| s.lru_size(node, memcg, l);
        let anon = size(self, LruList::ActiveAnon) + size(self, LruList::InactiveAnon);
        let file_pages = size(self, LruList::ActiveFile) + size(self, LruList::InactiveFile);
        let lv = self.lruvec_mut(memcg, node);
        if lv.recent_scanned[0] > anon / 4 {
            lv.recent_scanned[0] /= 2;
            lv.recent_rotated[0] /= 2;
        }
        if lv.recent_scanned[1] > file_pages / 4 {
            lv.recent_scanned[1] /= 2;
            lv.recent_rotated[1] /= 2;
        }
        let ap = anon_prio * (lv.recent_scanned[0] + 1) / (lv.recent_rotated[0] + 1);
        let fp = file_prio * (lv.recent_scanned[1] + 1) / (lv.recent_rotated[1] + 1);
        ([ap, fp], ap + fp + 1)
    }

    /// get_scan_count: pages to scan per list [IA, AA, IF, AF] of `memcg`'s lruvec on
    /// `node` at this priority.
    pub fn get_scan_count(
        &mut self,
        node: usize,
        memcg: MemcgId,
        sc: &mut ScanControl,
    ) -> [u64; 4] {
        let prev = self.enter(KFunc::GetScanCount);
        let size = |s: &Sim, l: LruList| s.lru_size(node, memcg, l);
        #[derive(PartialEq)]
        enum Balance {
            Equal,
            Fract,
            Anon,
            File,
        }
        let mut fraction = [0u64; 2];
        let mut denominator = 1u64;
        let swappiness = self.sc_swappiness(sc, memcg);
        let balance = if !sc.may_swap || !self.can_reclaim_anon_pages(memcg) {
            Balance::File
        } else if sc.cgroup_reclaim() && swappiness == 0 {
            // memcg users disable swapping for a group with swappiness 0.
            Balance::File
        } else if swappiness == SWAPPINESS_ANON_ONLY {
            // memory.reclaim's swappiness=max (v6.16): anonymous pages only. As 6.16 has
            // it, after the tests above: without swap it scans file pages.
            Balance::Anon
        } else if sc.priority == 0 && swappiness != 0 {
            Balance::Equal
        } else if self.features.refault_deactivate {
            // v5.5: file_is_tiny and cache_trim_mode, decided at the reclaim root.
            if sc.file_is_tiny {
                Balance::Anon
            } else if sc.cache_trim_mode {
                Balance::File
            } else {
                (fraction, denominator) = self.scan_fractions(node, memcg, sc);
                Balance::Fract
            }
        } else if !sc.cgroup_reclaim()
            && size(self, LruList::ActiveFile)
                + size(self, LruList::InactiveFile)
                + self.node_free_pages(node)
                <= self.nodes[node].watermark.high
        {
            Balance::Anon
        } else if self.features.file_only_when_plenty
            && !self.inactive_list_is_low(node, memcg, true)
            && (size(self, LruList::InactiveFile) >> sc.priority) > 0
        {
            Balance::File
        } else {
            (fraction, denominator) = self.scan_fractions(node, memcg, sc);
            Balance::Fract
        };
        let (min, low) = self.mem_cgroup_protection(sc.target_memcg, memcg);
        let mut nr = [0u64; 4];
        for (i, lru) in [
            LruList::InactiveAnon,
            LruList::ActiveAnon,
            LruList::InactiveFile,
            LruList::ActiveFile,
        ]
        .into_iter()
        .enumerate()
        {
            let file = i >= 2;
            let lruvec_size = size(self, lru);
            let mut scan = if min > 0 || low > 0 {
                // Proportional memory.low / memory.min protection (v5.4).
                let protection = if !sc.memcg_low_reclaim && low > min {
                    sc.memcg_low_skipped = true;
                    low
                } else {
                    min
                };
                let cgroup_size = self.memcgs[memcg as usize].usage.max(protection);
                let s = lruvec_size
                    - (lruvec_size as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
                s.max(SWAP_CLUSTER_MAX)
            } else {
                lruvec_size
            };
            scan >>= sc.priority;
            nr[i] = match balance {
                Balance::Equal => scan,
                Balance::Fract => scan * fraction[file as usize] / denominator,
                Balance::File => {
                    if file {
                        scan
                    } else {
                        0
                    }
                }
                Balance::Anon => {
                    if file {
                        0
                    } else {
                        scan
                    }
                }
            };
        }
        self.leave(prev);
        nr
    }

    /// sc_swappiness: the swappiness this reclaim balances `memcg`'s lruvec with — a
    /// memory.reclaim write's `swappiness=`, else mem_cgroup_swappiness (vm.swappiness;
    /// on cgroup v1 the cgroup's memory.swappiness).
    pub fn sc_swappiness(&self, sc: &ScanControl, memcg: MemcgId) -> u64 {
        sc.proactive_swappiness
            .unwrap_or_else(|| self.mem_cgroup_swappiness(memcg))
    }

    /// prepare_scan_count (v5.5): at the reclaim root, decide which active lists may be
    /// deactivated (their inactive list is low, or refaults were seen since the last
    /// cycle), cache_trim_mode and file_is_tiny; take the reclaim costs.
    fn prepare_scan_count(&mut self, node: usize, sc: &mut ScanControl) {
        let target = sc.target_memcg;
        let (anon_cost, file_cost, refaults) = {
            let lv = self.lruvec(target, node);
            (lv.anon_cost, lv.file_cost, lv.refaults)
        };
        sc.anon_cost = anon_cost;
        sc.file_cost = file_cost;
        if !sc.force_deactivate {
            let st = self.workingset_activate_state(target, node);
            for (i, bit) in [(0usize, DEACTIVATE_ANON), (1, DEACTIVATE_FILE)] {
                if st[i] != refaults[i] || self.inactive_list_is_low(node, target, i == 1) {
                    sc.may_deactivate |= bit;
                } else {
                    sc.may_deactivate &= !bit;
                }
            }
        } else {
            sc.may_deactivate = DEACTIVATE_ANON | DEACTIVATE_FILE;
        }
        let file = self.lruvec_page_state_lru(target, node, LruList::InactiveFile);
        sc.cache_trim_mode = (file >> sc.priority) > 0
            && sc.may_deactivate & DEACTIVATE_FILE == 0
            && !sc.no_cache_trim_mode;
        sc.file_is_tiny = false;
        if !sc.cgroup_reclaim() {
            let free = self.node_free_pages(node);
            let file = self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, node, LruList::ActiveFile)
                + self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, node, LruList::InactiveFile);
            let anon = self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, node, LruList::InactiveAnon);
            sc.file_is_tiny = file + free <= self.nodes[node].watermark.high
                && sc.may_deactivate & DEACTIVATE_ANON == 0
                && (anon >> sc.priority) > 0;
        }
    }

    /// lruvec_page_state of WORKINGSET_ACTIVATE_{ANON,FILE} for `m` on `node`: as of the
    /// last flush under `memcg-stats-ratelimited`, else current.
    fn workingset_activate_state(&self, m: MemcgId, node: usize) -> [u64; 2] {
        if self.features.memcg_stats_ratelimited {
            self.lruvec(m, node).flushed.activate
        } else {
            self.workingset_activate_hier(m)
        }
    }

    /// workingset_activate_{anon,file} of `m` and its descendants.
    pub(crate) fn workingset_activate_hier(&self, m: MemcgId) -> [u64; 2] {
        let mut r = [0u64; 2];
        for c in self.memcg_subtree(m) {
            let st = &self.memcgs[c as usize].stat;
            r[0] += st.get(VmItem::WorkingsetActivateAnon) as u64;
            r[1] += st.get(VmItem::WorkingsetActivateFile) as u64;
        }
        r
    }

    /// snapshot_refaults: remember the target's workingset activations at the end of a
    /// reclaim cycle (v5.5).
    pub fn snapshot_refaults(&mut self, target: MemcgId, node: usize) {
        let r = self.workingset_activate_state(target, node);
        self.lruvec_mut(target, node).refaults = r;
    }

    /// shrink_node (shrink_zone in v4.2): reclaim from the memcgs of the target's subtree
    /// on one node (shrink_node_memcgs) and prune shadow nodes, as the slab shrinkers
    /// would; then the writeback throttling decisions.
    pub fn shrink_node(&mut self, node: usize, sc: &mut ScanControl) {
        let reclaimed = sc.nr_reclaimed;
        self.shrink_node_policy(node, sc);
        if sc.nr_reclaimed > reclaimed {
            // "On reclaim progress, reset the failure counter. A successful direct
            // reclaim run will revive a dormant kswapd." (v4.11)
            self.reclaim[node].kswapd_failures = 0;
        }
    }

    /// shrink_node of the node's reclaim policy.
    fn shrink_node_policy(&mut self, node: usize, sc: &mut ScanControl) {
        if let (Some(f), false) = (self.ops.shrink_node, sc.cgroup_reclaim()) {
            // Root reclaim under another policy (lru_gen_shrink_node).
            f(self, node, sc);
            return;
        }
        self.shrink_node_classic(node, sc);
    }

    /// shrink_node's own body: the memcgs of the target's subtree (shrink_node_memcgs,
    /// each through the policy's shrink_lruvec), the node's shadow nodes, the writeback
    /// throttling decisions.
    pub(crate) fn shrink_node_classic(&mut self, node: usize, sc: &mut ScanControl) {
        let prev = self.enter(KFunc::ShrinkNode);
        let reclaimed = sc.nr_reclaimed;
        sc.nr = ReclaimNr::default();
        if self.features.refault_deactivate {
            self.prepare_scan_count(node, sc);
        }
        self.shrink_node_memcgs(node, sc);
        if !self.features.shadow_lru_limit {
            // v4.2: one node-wide shadow list (kept on the root lruvec).
            self.scan_shadow_nodes(node);
        }
        if self.features.reclaim_throttle {
            self.shrink_node_throttle(node, sc);
        }
        if sc.nr_reclaimed == reclaimed && sc.cache_trim_mode {
            sc.cache_trim_mode_failed = true;
        }
        self.leave(prev);
    }

    /// shrink_node_memcgs: every memcg of the target's subtree, pre-order, honouring
    /// memory.min and memory.low.
    fn shrink_node_memcgs(&mut self, node: usize, sc: &mut ScanControl) {
        let target = sc.target_memcg;
        if self.nr_memcgs() > 1 {
            self.mem_cgroup_calculate_protection(target);
        }
        for m in self.memcg_subtree(target) {
            if self.mem_cgroup_below_min(target, m) {
                continue;
            }
            if self.mem_cgroup_below_low(target, m) {
                if !sc.memcg_low_reclaim {
                    sc.memcg_low_skipped = true;
                    continue;
                }
                self.memcg_memory_event(m, MemcgEvent::Low);
            }
            self.shrink_lruvec(node, m, sc);
            if self.reclaim_pass_sleeps() {
                break; // the reclaimer sleeps (shrink_lruvec)
            }
            if self.features.shadow_lru_limit {
                self.scan_shadow_nodes_memcg(node, m, sc.priority);
            }
            // shrink_slab; from 6.4 flush_reclaim_state counts the freed slab pages in root
            // reclaim only (a cgroup's reclaim may free other cgroups' objects), before in
            // every reclaim (`reclaim-state-root-only`).
            let freed = self.shrink_slab_vfs(node, m, sc.priority, sc.gfp, sc.is_kswapd);
            if !sc.cgroup_reclaim() || !self.features.reclaim_state_root_only {
                sc.nr_reclaimed += freed;
            }
        }
    }

    /// The v5.16 throttling at the end of shrink_node: flag the node for kswapd, wake the
    /// flushers when every dirty page met was unqueued, stall kswapd while pages marked
    /// for immediate reclaim are still under writeback, and mark the lruvec congested when
    /// every dirty page was already under writeback (direct reclaimers then wait).
    fn shrink_node_throttle(&mut self, node: usize, sc: &mut ScanControl) {
        let nr = sc.nr;
        if sc.is_kswapd {
            let st = &mut self.reclaim[node];
            if nr.writeback > 0 && nr.writeback == nr.taken {
                st.zone_writeback = true;
            }
            // "Allow kswapd to start writing pages during reclaim": every file page taken
            // was dirty and unqueued — before 6.13 (`pgdat-dirty-needs-dirty`) also when
            // none was taken.
            let met_dirty = nr.unqueued_dirty > 0 || !self.features.pgdat_dirty_needs_dirty;
            if met_dirty && nr.unqueued_dirty == nr.file_taken {
                st.zone_dirty = true;
            }
            if nr.immediate > 0 {
                st.throttle_writeback = true;
            }
        }
        // LRUVEC_CGROUP_CONGESTED only where writeback throttling is sane: legacy memcg
        // reclaim stalls on page writeback instead.
        if (sc.is_kswapd || (sc.cgroup_reclaim() && self.writeback_throttling_sane(sc)))
            && nr.dirty > 0
            && nr.dirty == nr.congested
        {
            let target = sc.target_memcg;
            self.lruvec_mut(target, node).congested = true;
        }
        // Stall direct reclaim for IO completions while its lruvec is congested — the
        // root's flagged by kswapd, a cgroup's by its own limit reclaim
        // (reclaim_throttle(VMSCAN_THROTTLE_CONGESTED)) — unless skip_throttle_noprogress
        // lets it off.
        if !sc.is_kswapd
            && self.lruvec(sc.target_memcg, node).congested
            && !self.skip_throttle_noprogress(node)
        {
            sc.throttle_congested = true;
        }
    }

    /// skip_throttle_noprogress (v5.16, "mm: vmscan: Reduce throttling due to a failure to
    /// make progress"): a VMSCAN_THROTTLE_CONGESTED or NOPROGRESS throttle on `node` is
    /// skipped when kswapd has given the node up, or when its pages waiting for writeback
    /// (dirty and under writeback, NR_ZONE_WRITE_PENDING) are at most half of its
    /// reclaimable pages (zone_reclaimable_pages: the file LRU, and the anonymous LRU while
    /// swap has free slots) — machine-wide counts of the node, whichever cgroup reclaims.
    pub fn skip_throttle_noprogress(&self, node: usize) -> bool {
        if self.kswapd_hopeless(node) {
            return true;
        }
        2 * self.nodes[node].nr_dirty_writeback <= self.zone_reclaimable_pages(node)
    }

    /// zone_reclaimable_pages of node `node` (a node is one zone here): its file LRU
    /// pages, and its anonymous ones while swap has free slots.
    pub fn zone_reclaimable_pages(&self, node: usize) -> u64 {
        let lru = |l| self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, node, l);
        let mut reclaimable = lru(LruList::InactiveFile) + lru(LruList::ActiveFile);
        if self.can_reclaim_anon_pages(ROOT_MEM_CGROUP) {
            reclaimable += lru(LruList::InactiveAnon) + lru(LruList::ActiveAnon);
        }
        reclaimable
    }

    /// Legacy limit reclaim throttled (reclaim_throttle after waking the flushers): the
    /// kernel's reclaimer sleeps there and scans on after, so the pass ends there
    /// (`Sim::memcg_reclaim_wait`). (A wait on a page's writeback, shrink_folio_list's
    /// case 3, lets the pass go on and is slept after it.)
    #[inline]
    pub(crate) fn reclaim_pass_sleeps(&self) -> bool {
        matches!(self.memcg_reclaim_wait, Some(ReclaimWait::Throttle(_)))
    }

    /// shrink_lruvec (see the module comment).
    pub fn shrink_lruvec(&mut self, node: usize, memcg: MemcgId, sc: &mut ScanControl) {
        if let Some(f) = self.ops.shrink_lruvec {
            // Limit reclaim under another policy (lru_gen_shrink_lruvec).
            f(self, node, memcg, sc);
            return;
        }
        let prev = self.enter(KFunc::ShrinkLruvec);
        let mut nr = self.get_scan_count(node, memcg, sc);
        let targets = nr;
        let mut nr_reclaimed = 0u64;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let mut scan_adjusted =
            !sc.is_kswapd && sc.priority == DEF_PRIORITY && !sc.cgroup_reclaim();
        self.init_tlb_ubc();
        const ORDER: [LruList; 4] = [
            LruList::InactiveAnon,
            LruList::ActiveAnon,
            LruList::InactiveFile,
            LruList::ActiveFile,
        ];
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            // Whether this round only met active lists that may not be deactivated.
            let mut idle = true;
            for (i, lru) in ORDER.into_iter().enumerate() {
                if nr[i] > 0 {
                    let n = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= n;
                    if let Some(r) = self.shrink_list(node, memcg, lru, n, sc) {
                        nr_reclaimed += r;
                        idle = false;
                    }
                }
            }
            if self.reclaim_pass_sleeps() {
                // Legacy memcg reclaim sleeps here (`Sim::memcg_reclaim_wait`): the pass
                // ends, the charge sleeps and starts reclaim again after it.
                break;
            }
            if nr_reclaimed < nr_to_reclaim || scan_adjusted {
                if idle {
                    // Nothing changed this round, so every round left would do the same
                    // nothing (the kernel goes on counting the active lists down by
                    // SWAP_CLUSTER_MAX): end the loop where it would end.
                    break;
                }
                continue;
            }
            // Target met: stop the smaller type, scale the other to its unscanned share.
            let nr_file = nr[2] + nr[3];
            let nr_anon = nr[0] + nr[1];
            if nr_file == 0 || nr_anon == 0 {
                break;
            }
            let (stop, other, percentage) = if nr_file > nr_anon {
                (
                    0usize,
                    2usize,
                    nr_anon * 100 / (targets[0] + targets[1] + 1),
                )
            } else {
                (
                    2usize,
                    0usize,
                    nr_file * 100 / (targets[2] + targets[3] + 1),
                )
            };
            nr[stop] = 0;
            nr[stop + 1] = 0;
            for k in [other, other + 1] {
                let scanned = targets[k] - nr[k];
                nr[k] = targets[k] * (100 - percentage) / 100;
                nr[k] -= scanned.min(nr[k]);
            }
            scan_adjusted = true;
        }
        sc.nr_reclaimed += nr_reclaimed;
        // Even if only file is scanned, keep the anon active list balanced.
        if self.inactive_list_is_low(node, memcg, false) {
            self.shrink_active_list(node, memcg, SWAP_CLUSTER_MAX, LruList::ActiveAnon, sc);
        }
        self.leave(prev);
    }

    /// shrink_list: an active list only when its inactive list is low (v5.5: when
    /// may_deactivate allows it). Returns the pages reclaimed, None when the list was an
    /// active one left alone (nothing scanned, nothing changed but `skipped_deactivate`).
    fn shrink_list(
        &mut self,
        node: usize,
        memcg: MemcgId,
        lru: LruList,
        n: u64,
        sc: &mut ScanControl,
    ) -> Option<u64> {
        match lru {
            LruList::ActiveFile | LruList::ActiveAnon => {
                let file = lru == LruList::ActiveFile;
                let deactivate = if self.features.refault_deactivate {
                    let bit = if file {
                        DEACTIVATE_FILE
                    } else {
                        DEACTIVATE_ANON
                    };
                    if sc.may_deactivate & bit == 0 {
                        sc.skipped_deactivate = true;
                    }
                    sc.may_deactivate & bit != 0
                } else {
                    self.inactive_list_is_low(node, memcg, file)
                };
                if !deactivate {
                    return None;
                }
                self.shrink_active_list(node, memcg, n, lru, sc);
                Some(0)
            }
            _ => Some(self.shrink_inactive_list(node, memcg, n, lru, sc)),
        }
    }

    /// isolate_lru_pages: take up to `n` pages from the tail of `lru` (lru_lock held),
    /// each with a reference and PG_lru cleared. Returns (scanned, taken), in pages (a
    /// large folio counts its pages, isolate_lru_folios' `scan += nr_pages`).
    fn isolate_lru_pages(
        &mut self,
        node: usize,
        memcg: MemcgId,
        n: u64,
        lru: LruList,
        out: &mut Vec<Pfn>,
    ) -> (u64, u64) {
        let prev = self.enter(KFunc::IsolateLruPages);
        let mut scanned = 0;
        let mut taken = 0;
        // The struct pages of the next pages to take load ahead (host hints).
        self.lruvec(memcg, node).lists[lru as usize].prefetch_tail_batch(&self.mem, n as usize);
        while scanned < n {
            let list = &self.lruvec(memcg, node).lists[lru as usize];
            list.prefetch_tail(&self.mem, PREFETCH_AHEAD);
            let tail = list.tail();
            if tail == crate::mm::page::NIL {
                break;
            }
            let nr = self.mem[tail as usize].nr_pages();
            scanned += nr;
            taken += nr;
            self.charge(self.costs.mem_access_ps);
            // __isolate_lru_page: get_page_unless_zero, ClearPageLRU.
            self.del_page_from_lru_list(tail, lru);
            self.get_page(tail);
            self.ClearPageLRU(tail);
            out.push(tail);
        }
        self.leave(prev);
        (scanned, taken)
    }

    /// lru_note_cost (v5.8): record the cost of reclaiming a type (IO × SWAP_CLUSTER_MAX
    /// plus rotations from v6.2, `lru-cost-rotations`; before, the IO alone) in the lruvec
    /// and its ancestors', halving both costs when they outgrow a quarter of the lruvec's
    /// LRU pages.
    pub fn lru_note_cost(
        &mut self,
        node: usize,
        memcg: MemcgId,
        file: bool,
        nr_io: u64,
        nr_rotated: u64,
    ) {
        if !self.features.lru_cost_balance {
            return;
        }
        let cost = if self.features.lru_cost_rotations {
            nr_io * SWAP_CLUSTER_MAX + nr_rotated
        } else {
            nr_io
        };
        let mut c = Some(memcg);
        while let Some(m) = c {
            let lrusize: u64 = [
                LruList::InactiveAnon,
                LruList::ActiveAnon,
                LruList::InactiveFile,
                LruList::ActiveFile,
            ]
            .into_iter()
            .map(|l| self.lruvec_lru_size_hier(m, node, l))
            .sum();
            let lv = self.lruvec_mut(m, node);
            if file {
                lv.file_cost += cost;
            } else {
                lv.anon_cost += cost;
            }
            if lv.file_cost + lv.anon_cost > lrusize / 4 {
                lv.file_cost /= 2;
                lv.anon_cost /= 2;
            }
            c = self.memcgs[m as usize].parent;
        }
    }

    /// shrink_active_list.
    pub fn shrink_active_list(
        &mut self,
        node: usize,
        memcg: MemcgId,
        n: u64,
        lru: LruList,
        sc: &mut ScanControl,
    ) {
        let prev = self.enter(KFunc::ShrinkActiveList);
        let file = lru == LruList::ActiveFile;
        let lv = self.lruvec_idx(memcg, node);
        self.lru_add_drain();
        self.lru_lock(lv);
        let mut hold = self.take_pfn_buf();
        let (scanned, taken) = self.isolate_lru_pages(node, memcg, n, lru, &mut hold);
        self.vmstat.add(isolated_item(file), taken as i64);
        // From v5.9 (`pgrefill-global-only`) the global counter is global reclaim's.
        if !(self.features.pgrefill_global_only && sc.cgroup_reclaim()) {
            self.vmstat.add(VmItem::Pgrefill, scanned as i64);
        }
        self.count_memcg_events(memcg, VmItem::Pgrefill, scanned as i64);
        self.lruvec_mut(memcg, node).recent_scanned[file as usize] += taken;
        self.lru_unlock(lv);
        let mut keep_active = self.take_pfn_buf();
        let mut deactivate = self.take_pfn_buf();
        let mut rotated = 0u64;
        for &pfn in &hold {
            if self.mem[pfn as usize].flags & (pg::UNEVICTABLE | pg::MLOCKED) != 0 {
                // !folio_evictable: folio_putback_lru (putback_one culls it).
                keep_active.push(pfn);
                continue;
            }
            let (referenced, vm_flags) = self.page_referenced(pfn, sc.target_memcg);
            let nr = self.mem[pfn as usize].nr_pages();
            if referenced > 0 {
                // v5.8 counts only the pages kept active as rotations (the reclaim cost).
                if !self.features.lru_cost_balance {
                    rotated += nr;
                }
                // Seed 001: referenced file pages of executable mappings get another trip
                // on the active list.
                if self.features.exec_protect
                    && vm_flags & crate::mm::rmap::VM_EXEC != 0
                    && !self.mem[pfn as usize].test(pg::SWAPBACKED)
                {
                    if self.features.lru_cost_balance {
                        rotated += nr;
                    }
                    keep_active.push(pfn);
                    continue;
                }
            }
            self.ClearPageActive(pfn);
            if self.features.workingset_restore {
                // v4.20: a deactivated page is part of the workingset (SetPageWorkingset).
                self.charge_atomic();
                self.mem[pfn as usize].flags |= pg::WORKINGSET;
            }
            deactivate.push(pfn);
        }
        self.lru_lock(lv);
        self.lruvec_mut(memcg, node).recent_rotated[file as usize] += rotated;
        self.give_pfn_buf(hold);
        let mut to_free = self.take_pfn_buf();
        let pm = self.enter(KFunc::MoveActivePagesToLru);
        for &pfn in &keep_active {
            self.move_page_to_lru(pfn, &mut to_free);
        }
        let mut moved = 0;
        for &pfn in &deactivate {
            let nr = self.mem[pfn as usize].nr_pages() as i64;
            if self.move_page_to_lru(pfn, &mut to_free) {
                moved += nr;
            }
        }
        self.give_pfn_buf(keep_active);
        self.give_pfn_buf(deactivate);
        self.leave(pm);
        self.vmstat.add(VmItem::Pgdeactivate, moved);
        self.count_memcg_events(memcg, VmItem::Pgdeactivate, moved);
        self.vmstat.add(isolated_item(file), -(taken as i64));
        self.lru_unlock(lv);
        for &pfn in &to_free {
            self.free_hot_cold_page(pfn);
        }
        self.give_pfn_buf(to_free);
        if rotated > 0 && self.features.lru_cost_rotations {
            self.lru_note_cost(node, memcg, file, 0, rotated);
        }
        // trace_mm_vmscan_lru_shrink_active.
        let t = &mut self.tracepoints.mm_vmscan_lru_shrink_active;
        t.events += 1;
        t.nr_taken += taken;
        t.nr_deactivated += moved as u64;
        self.leave(prev);
    }

    /// move_pages_to_lru, one page: `putback_one`, and from v5.9 (`anon-workingset`: "mm:
    /// workingset: age nonresident information alongside anonymous pages") a page that
    /// goes back active — activated by shrink_page_list, or kept active by
    /// shrink_active_list — advances its lruvec's nonresident age, as an activation by
    /// mark_page_accessed does: activations of either type push the refault distances of
    /// evicted pages out. Returns true if it went back on a list.
    fn move_page_to_lru(&mut self, pfn: Pfn, to_free: &mut Vec<Pfn>) -> bool {
        let back = self.putback_one(pfn, to_free);
        if back && self.features.anon_workingset && self.mem[pfn as usize].test(pg::ACTIVE) {
            let p = &self.mem[pfn as usize];
            let (memcg, node, nr) = (p.memcg, p.node as usize, p.nr_pages());
            self.charge_atomic();
            self.workingset_age_nonresident_by(memcg, node, nr);
        }
        back
    }

    /// Put an isolated page back on the list its flags name (lru_lock held) and drop the
    /// isolation reference; a page whose last reference that was is queued for freeing.
    /// Returns true if it went back on a list.
    pub(crate) fn putback_one(&mut self, pfn: Pfn, to_free: &mut Vec<Pfn>) -> bool {
        self.lru_add_cull_or_rescue(pfn);
        self.SetPageLRU(pfn);
        let lru = self.page_lru(pfn);
        self.add_page_to_lru_list(pfn, lru);
        self.charge_atomic();
        let p = &mut self.mem[pfn as usize];
        p.refcount -= 1;
        if p.refcount == 0 {
            // put_page_testzero under the lock: take it back off and free it.
            self.del_page_from_lru_list(pfn, lru);
            self.__ClearPageLRU(pfn);
            self.__ClearPageActive(pfn);
            to_free.push(pfn);
            return false;
        }
        true
    }

    /// shrink_inactive_list: returns pages reclaimed.
    pub fn shrink_inactive_list(
        &mut self,
        node: usize,
        memcg: MemcgId,
        n: u64,
        lru: LruList,
        sc: &mut ScanControl,
    ) -> u64 {
        let prev = self.enter(KFunc::ShrinkInactiveList);
        let file = lru == LruList::InactiveFile;
        let lv = self.lruvec_idx(memcg, node);
        self.lru_add_drain();
        self.lru_lock(lv);
        let mut list = self.take_pfn_buf();
        let (scanned, taken) = self.isolate_lru_pages(node, memcg, n, lru, &mut list);
        self.vmstat.add(isolated_item(file), taken as i64);
        let (scan_item, steal_item) = self.reclaim_items(sc);
        // Global counters count global reclaim only; the memcg's count every reclaim.
        if !sc.cgroup_reclaim() {
            self.vmstat.add(scan_item, scanned as i64);
        }
        self.count_memcg_events(memcg, scan_item, scanned as i64);
        let by_type = if file {
            (VmItem::PgscanFile, VmItem::PgstealFile)
        } else {
            (VmItem::PgscanAnon, VmItem::PgstealAnon)
        };
        self.vmstat.add(by_type.0, scanned as i64);
        self.count_memcg_events(memcg, by_type.0, scanned as i64);
        sc.nr_scanned += scanned;
        self.lru_unlock(lv);
        if taken == 0 {
            self.give_pfn_buf(list);
            self.leave(prev);
            return 0;
        }
        let stat = self.shrink_page_list(node, &mut list, sc);
        self.trace_shrink_inactive(scanned, &stat, sc.priority);
        self.lru_lock(lv);
        self.lruvec_mut(memcg, node).recent_scanned[file as usize] += taken;
        if !sc.cgroup_reclaim() {
            self.vmstat.add(steal_item, stat.reclaimed as i64);
        }
        self.count_memcg_events(memcg, steal_item, stat.reclaimed as i64);
        self.vmstat.add(by_type.1, stat.reclaimed as i64);
        self.count_memcg_events(memcg, by_type.1, stat.reclaimed as i64);
        let pb = self.enter(KFunc::PutbackInactivePages);
        let mut to_free = self.take_pfn_buf();
        for &pfn in &list {
            let active = self.mem[pfn as usize].test(pg::ACTIVE);
            let f = !self.mem[pfn as usize].test(pg::SWAPBACKED);
            let lv = self.page_lruvec_idx(pfn);
            let nr = self.mem[pfn as usize].nr_pages();
            if self.move_page_to_lru(pfn, &mut to_free) && active {
                self.lruvecs[lv].recent_rotated[f as usize] += nr;
            }
        }
        self.leave(pb);
        self.give_pfn_buf(list);
        self.vmstat.add(isolated_item(file), -(taken as i64));
        self.lru_unlock(lv);
        for &pfn in &to_free {
            self.free_hot_cold_page(pfn);
        }
        self.give_pfn_buf(to_free);
        self.lru_note_cost(
            node,
            memcg,
            file,
            stat.nr_pageout,
            scanned - stat.reclaimed.min(scanned),
        );
        sc.nr.dirty += stat.nr_dirty;
        sc.nr.congested += stat.nr_congested;
        sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
        sc.nr.writeback += stat.nr_writeback;
        sc.nr.immediate += stat.nr_immediate;
        sc.nr.taken += taken;
        if file {
            sc.nr.file_taken += taken;
        }
        if !self.features.reclaim_throttle {
            // Flag the zone for kswapd (v4.2): all isolated pages under writeback, or all
            // dirty and not queued for IO.
            let st = &mut self.reclaim[node];
            if stat.nr_writeback > 0 && stat.nr_writeback == taken {
                st.zone_writeback = true;
            }
            if stat.nr_unqueued_dirty == taken {
                st.zone_dirty = true;
            }
        }
        if self.features.vmscan_kick_flushers {
            // v4.11: every isolated page dirty and not queued for IO — the flushers are
            // not doing their job: wakeup_flusher_threads(WB_REASON_VMSCAN).
            if taken > 0 && stat.nr_unqueued_dirty == taken {
                for d in 0..self.devices.len() {
                    self.wakeup_flusher_threads(d);
                }
                // v6.1 ("mm/cgroup/reclaim: fix dirty pages throttling on cgroup v1"):
                // legacy memcg reclaim is throttled here, the flushers' pace being its
                // only dirty throttling.
                if self.features.memcg_v1_dirty_throttle
                    && !self.writeback_throttling_sane(sc)
                    && self.memcg_reclaim_wait.is_none()
                {
                    self.memcg_reclaim_wait = Some(ReclaimWait::Throttle(node));
                }
            }
        } else if stat.nr_unqueued_dirty > 0 {
            // Reclaim found dirty pages the flusher has not reached: kick it.
            for d in 0..self.devices.len() {
                self.wb_start_background_writeback(d);
            }
        }
        self.leave(prev);
        stat.reclaimed
    }

    /// page_check_references.
    pub fn page_check_references(&mut self, pfn: Pfn, target: MemcgId) -> PageReferences {
        if let Some(f) = self.ops.check_references {
            return f(self, pfn, target);
        }
        self.folio_check_references_classic(pfn, target)
    }

    /// folio_check_references's classic rules (also 6.1's MGLRU eviction's).
    /// `target` is the reclaim's target memcg (sc->target_mem_cgroup; the root for global
    /// reclaim).
    pub(crate) fn folio_check_references_classic(
        &mut self,
        pfn: Pfn,
        target: MemcgId,
    ) -> PageReferences {
        let (referenced_ptes, vm_flags) = self.page_referenced(pfn, target);
        let referenced_page = self.TestClearPageReferenced(pfn);
        if vm_flags & crate::mm::rmap::VM_LOCKED != 0 {
            // A VM_LOCKED mapping: from v5.18 (`mlock-count`) page_referenced mlocked the
            // page and it goes back, to the unevictable list (FOLIOREF_ACTIVATE, which
            // activate_locked does not activate); before, "mlock lost the isolation race
            // with us: let try_to_unmap() move the page to the unevictable list".
            return if self.features.mlock_count {
                PageReferences::Activate
            } else {
                PageReferences::Reclaim
            };
        }
        if !self.features.mapped_used_once {
            // Before v2.6.34: any reference (a young PTE or PG_referenced) activates a page
            // that is in use (page_mapping_inuse: mapped, in the swap cache, or of a file
            // somebody maps); an unused referenced page is reclaimed only if clean.
            if referenced_ptes == 0 && !referenced_page {
                return PageReferences::Reclaim;
            }
            let page = &self.mem[pfn as usize];
            let inuse = self.folio_mapped(pfn)
                || page.test(pg::SWAPCACHE)
                || (page.mapping & crate::mm::rmap::ANON_MAPPING == 0
                    && page.mapping != crate::mm::page::NO_MAPPING
                    && self.inodes[page.mapping as usize]
                        .as_ref()
                        .is_some_and(|i| !i.i_mmap.is_empty()));
            return if inuse {
                PageReferences::Activate
            } else {
                PageReferences::ReclaimClean
            };
        }
        let swapbacked = self.mem[pfn as usize].test(pg::SWAPBACKED);
        if referenced_ptes > 0 {
            // Before v5.9 a referenced swap-backed page was activated at once; from 5.9
            // (`anon-inactive-first`, "mm/vmscan: protect the workingset on anonymous LRU")
            // anon pages are looked at twice, as file pages are.
            if swapbacked && !self.features.anon_inactive_first {
                return PageReferences::Activate;
            }
            // All mapped pages start out with page table references from the instantiating
            // fault, so look twice: activate on the second reference.
            self.SetPageReferenced(pfn);
            if referenced_page || referenced_ptes > 1 {
                return PageReferences::Activate;
            }
            // File-backed executable pages after their first use.
            if vm_flags & crate::mm::rmap::VM_EXEC != 0 && !swapbacked {
                return PageReferences::Activate;
            }
            return PageReferences::Keep;
        }
        if referenced_page && !swapbacked {
            return PageReferences::ReclaimClean;
        }
        PageReferences::Reclaim
    }

    /// shrink_page_list: decide each isolated page's fate. Freed pages are returned to the
    /// allocator; the rest stay in `list` to be put back (with PG_active if activated).
    /// shrink_page_list for another policy's eviction (evict_folios).
    pub(crate) fn shrink_page_list_for(
        &mut self,
        node: usize,
        list: &mut Vec<Pfn>,
        sc: &mut ScanControl,
    ) -> ShrinkStat {
        self.shrink_page_list(node, list, sc)
    }

    fn shrink_page_list(
        &mut self,
        node: usize,
        list: &mut Vec<Pfn>,
        sc: &mut ScanControl,
    ) -> ShrinkStat {
        let prev = self.enter(KFunc::ShrinkPageList);
        let mut st = ShrinkStat::default();
        let mut ret = self.take_pfn_buf();
        let mut free = self.take_pfn_buf();
        for &pfn in list.iter() {
            self.charge(self.costs.mem_access_ps * 4);
            if !self.trylock_page(pfn) {
                ret.push(pfn);
                continue;
            }
            let p = &self.mem[pfn as usize];
            if !self.features.no_double_slab_pressure
                && (p.test(pg::SWAPCACHE) || self.folio_mapped(pfn))
            {
                sc.nr_scanned += 1; // mapped pages count twice (before v5.3)
            }
            if p.flags & (pg::UNEVICTABLE | pg::MLOCKED) != 0 {
                // !page_evictable: back it goes (to the unevictable list, putback_one).
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            let (dirty, writeback) = (p.test(pg::DIRTY), p.test(pg::WRITEBACK));
            // struct reclaim_stat counts pages (a folio's nr_pages).
            let nr_pages = p.nr_pages();
            // folio_check_dirty_writeback (3.11): what the throttling decisions count —
            // file LRU folios only: anonymous ones (a lazyfree one too) are written from
            // reclaim, not by the flushers, so reclaim does not stall on them.
            let file_lru = !p.test(pg::SWAPBACKED) && !self.page_anon(pfn);
            let (c_dirty, c_writeback) = (dirty && file_lru, writeback && file_lru);
            if c_dirty || c_writeback {
                st.nr_dirty += nr_pages;
            }
            // The unqueued count `vmscan-kick-flushers` compares with the pages taken.
            // Without it the count is of the dirty pages deferred to the flusher or
            // written below.
            let count_at_check = self.features.vmscan_kick_flushers;
            if count_at_check && c_dirty && !c_writeback {
                st.nr_unqueued_dirty += nr_pages;
            }
            if c_writeback && self.mem[pfn as usize].test(pg::RECLAIM) {
                st.nr_congested += nr_pages;
            }
            if writeback {
                // Case 1 (kswapd meets a page it already marked, on a node flagged for
                // writeback): counted for the v5.16 throttling.
                let immediate = self.features.reclaim_throttle
                    && sc.is_kswapd
                    && self.mem[pfn as usize].test(pg::RECLAIM)
                    && self.reclaim[node].zone_writeback;
                if immediate {
                    st.nr_immediate += nr_pages;
                } else if self.writeback_throttling_sane(sc)
                    || !self.mem[pfn as usize].test(pg::RECLAIM)
                    || !sc.gfp.fs
                {
                    // Case 2: tag for immediate reclaim at writeback end and move on
                    // (global reclaim, and cgroup v2's: writeback throttling is sane
                    // there; limit reclaim without cgroup writeback the first time).
                    st.nr_writeback += nr_pages;
                    self.SetPageReclaim(pfn);
                } else {
                    // Case 3: limit reclaim without cgroup writeback meets a page it
                    // tagged before: it waits for the writeback (folio_wait_writeback),
                    // then tries the page again.
                    if self.memcg_reclaim_wait.is_none() {
                        self.memcg_reclaim_wait = Some(ReclaimWait::Writeback(pfn));
                    }
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                if self.features.writeback_activate {
                    // v4.11: move it out of the reclaimer's way until it is written.
                    self.activate_locked(pfn, &mut st);
                }
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            let references = if sc.ignore_references {
                PageReferences::Reclaim
            } else {
                self.page_check_references(pfn, sc.target_memcg)
            };
            match references {
                PageReferences::Activate => {
                    self.activate_locked(pfn, &mut st);
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                PageReferences::Keep => {
                    st.nr_ref_keep += nr_pages;
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                PageReferences::Reclaim | PageReferences::ReclaimClean => {}
            }
            let anon = self.page_anon(pfn);
            if self.mem[pfn as usize].test(pg::SWAPBACKED)
                && !anon
                && !self.mem[pfn as usize].test(pg::SWAPCACHE)
                && (self.swap.is_none() || !sc.may_swap)
            {
                // shmem/tmpfs without swap: shmem_writepage has nowhere to write it
                // (`!total_swap_pages`: redirty, AOP_WRITEPAGE_ACTIVATE), the page stays
                // resident. With swap, a dirty tmpfs page is written by pageout below.
                // (A swap-cache page without an anon mapping is a swap-in nobody has mapped
                // yet, e.g. readahead, or a tmpfs page swapped out: clean and unmapped, it
                // is removed below.)
                self.activate_locked(pfn, &mut st);
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            // A lazyfree page (MADV_FREE: anonymous, not swap-backed) needs no swap.
            if anon
                && self.mem[pfn as usize].test(pg::SWAPBACKED)
                && !self.mem[pfn as usize].test(pg::SWAPCACHE)
                && (!sc.may_swap || !self.add_to_swap(pfn))
            {
                self.activate_locked(pfn, &mut st);
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            if self.folio_mapped(pfn) && sc.may_unmap {
                match self.try_to_unmap(pfn, true) {
                    crate::mm::rmap::TtuResult::Fail => {
                        self.activate_locked(pfn, &mut st);
                        self.unlock_page(pfn);
                        ret.push(pfn);
                        continue;
                    }
                    crate::mm::rmap::TtuResult::Again => {
                        self.unlock_page(pfn);
                        ret.push(pfn);
                        continue;
                    }
                    crate::mm::rmap::TtuResult::Success => {}
                }
            }
            if self.PageDirty(pfn) {
                let file = !self.mem[pfn as usize].test(pg::SWAPBACKED);
                // v3.2+: only kswapd writes file pages, and (v3.11) only under ZONE_DIRTY;
                // before, any reclaimer that may enter the filesystem wrote them.
                let defer_to_flusher = if self.features.kswapd_file_writeback {
                    // v4.11: and only a page the scanner has seen twice (PG_reclaim, set
                    // when it was deferred the first time).
                    !sc.is_kswapd
                        || !self.reclaim[node].zone_dirty
                        || (self.features.dirty_seen_twice && !self.PageReclaim(pfn))
                } else {
                    !sc.gfp.fs
                };
                if file && defer_to_flusher {
                    // Immediate reclaim when the flusher has written it.
                    st.nr_unqueued_dirty += nr_pages * u64::from(!count_at_check);
                    let nr = self.mem[pfn as usize].nr_pages() as i64;
                    self.vmstat.add(VmItem::NrVmscanImmediateReclaim, nr);
                    self.SetPageReclaim(pfn);
                    if self.features.writeback_activate {
                        self.activate_locked(pfn, &mut st);
                    }
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                if references == PageReferences::ReclaimClean || !sc.may_writepage {
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                // Dirty PTEs must be flushed before IO starts (seed 002).
                self.try_to_unmap_flush_dirty();
                if file && self.features.no_reclaim_file_writeback {
                    // v6.16: pageout() writes only shmem and swap-cache folios; a
                    // filesystem folio is PAGE_ACTIVATE, left to the flusher.
                    let pr = self.enter(KFunc::Pageout);
                    self.leave(pr);
                    st.nr_unqueued_dirty += nr_pages * u64::from(!count_at_check);
                    self.activate_locked(pfn, &mut st);
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                if !self.pageout(pfn) {
                    // shmem_writepage found no swap slot, or zswap kept the page in
                    // memory (memory.zswap.writeback off): redirtied, activated.
                    self.activate_locked(pfn, &mut st);
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                st.nr_unqueued_dirty += nr_pages * u64::from(!count_at_check);
                st.nr_pageout += nr_pages;
                // A synchronous write ("probably a ramdisk": zram) ended already: the page
                // is clean and off writeback, and is freed now if it can be locked again.
                // Otherwise it is under writeback (or was redirtied) and stays.
                if self.PageWriteback(pfn) || self.PageDirty(pfn) || !self.trylock_page(pfn) {
                    ret.push(pfn);
                    continue;
                }
            }
            if self.mem[pfn as usize].flags & crate::fs::jbd2::JBD_HELD != 0
                || (!anon && self.buffers_busy(pfn))
            {
                // filemap_release_folio fails: the journal, a CPU's bh_lrus or a waiting
                // reader holds a buffer of the page (try_to_free_buffers: buffer_busy).
                self.activate_locked(pfn, &mut st);
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            if anon && !self.mem[pfn as usize].test(pg::SWAPBACKED) {
                // A discarded lazyfree page: only the isolation's reference is left
                // (folio_ref_freeze(folio, 1)); it is freed with no mapping to leave.
                if self.mem[pfn as usize].refcount != 1 || self.mem[pfn as usize].mapped() {
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                self.mem[pfn as usize].refcount = 0;
                let nr = self.mem[pfn as usize].nr_pages() as i64;
                self.vmstat.add(VmItem::Pglazyfreed, nr);
                self.count_memcg_page_event(pfn, VmItem::Pglazyfreed, nr);
            } else if !self.__remove_mapping(pfn, Some(sc.target_memcg)) {
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            // The page is frozen at 0 references: a non-atomic unlock is legal.
            self.__ClearPageLocked(pfn);
            st.reclaimed += self.mem[pfn as usize].nr_pages();
            free.push(pfn);
            if self.features.shrink_free_batch && free.len() >= self.pagevec_size() {
                // v6.9: a full folio_batch of freed folios is freed at once.
                self.free_reclaimed(&mut free);
            }
        }
        self.vmstat.add(
            VmItem::Pgactivate,
            (st.nr_activate[0] + st.nr_activate[1]) as i64,
        );
        self.free_reclaimed(&mut free);
        self.give_pfn_buf(free);
        // The caller's list takes the kept pages; its old buffer goes back to the pool.
        let old = std::mem::replace(list, ret);
        self.give_pfn_buf(old);
        self.leave(prev);
        st
    }

    /// Free the folios shrink_page_list reclaimed (mem_cgroup_uncharge_folios,
    /// try_to_unmap_flush, free_unref_folios): seed 002's rule, every deferred TLB flush
    /// happens before the pages are freed.
    fn free_reclaimed(&mut self, free: &mut Vec<Pfn>) {
        self.try_to_unmap_flush();
        for &pfn in free.iter() {
            self.free_hot_cold_page(pfn);
        }
        free.clear();
    }

    /// pageout: write a dirty page from reclaim (clear dirty, PG_reclaim, start writeback):
    /// a swap-cache page to its slot, a tmpfs page through shmem_writepage (false: no
    /// slot, the page stays dirty and locked), a file page to its filesystem.
    fn pageout(&mut self, pfn: Pfn) -> bool {
        let prev = self.enter(KFunc::Pageout);
        let swapbacked = self.mem[pfn as usize].test(pg::SWAPBACKED);
        if swapbacked && self.mem[pfn as usize].test(pg::SWAPCACHE) {
            if !self.swap_writepage(pfn) {
                self.leave(prev);
                return false;
            }
        } else if swapbacked {
            if !self.shmem_writepage(pfn) {
                self.leave(prev);
                return false;
            }
        } else {
            let ino = self.mem[pfn as usize].mapping;
            self.SetPageReclaim(pfn);
            if self.folio_start_writeback(pfn, ino) == 1 {
                self.unlock_page(pfn);
                let pages = self.pfn_buf_of(pfn);
                self.submit_write(ino, pages);
            } else {
                // A large folio: its dirty blocks (`fs::buffer`).
                let mut blocks = self.take_pfn_buf();
                self.folio_start_block_writes(pfn, &mut blocks);
                self.unlock_page(pfn);
                self.submit_write_runs(ino, &blocks);
                self.give_pfn_buf(blocks);
            }
        }
        self.vmstat.inc(VmItem::NrVmscanWrite);
        self.leave(prev);
        true
    }

    /// shrink_page_list's activate_locked: the isolated page goes back active
    /// (PG_active, pgactivate in its memcg; reclaim_stat's nr_activate, which the
    /// node's count adds at the end).
    fn activate_locked(&mut self, pfn: Pfn, st: &mut ShrinkStat) {
        if self.mem[pfn as usize].test(pg::MLOCKED) {
            // An mlocked page is not activated: it goes back to the unevictable list
            // (v4.x's cull_mlocked; `if (!folio_test_mlocked(folio))` since), and its swap
            // slot, if add_to_swap gave it one, is freed (try_to_free_swap).
            self.try_to_free_swap(pfn);
            return;
        }
        // "Not a candidate for swapping, so reclaim swap space": with the swap space (or
        // the cgroup's, `memcg-swap-full`) half used, an activated swap-cache page gives
        // its slot back.
        if self.PageSwapCache(pfn) && self.mem_cgroup_swap_full(pfn) {
            self.try_to_free_swap(pfn);
        }
        self.SetPageActive(pfn);
        let nr = self.mem[pfn as usize].nr_pages();
        // stat->nr_activate[type]: 0 anon, 1 file (folio_is_file_lru).
        let file = !self.mem[pfn as usize].test(pg::SWAPBACKED);
        st.nr_activate[usize::from(file)] += nr;
        self.count_memcg_page_event(pfn, VmItem::Pgactivate, nr as i64);
    }

    /// __remove_mapping: under tree_lock, freeze the page's references at 2 (cache +
    /// isolation), recheck dirty, and replace its slot by a workingset shadow entry when
    /// reclaim (of `target`'s subtree) evicts it.
    pub fn __remove_mapping(&mut self, pfn: Pfn, target: Option<MemcgId>) -> bool {
        let prev = self.enter(KFunc::RemoveMapping);
        if self.mem[pfn as usize].test(pg::SWAPCACHE) {
            let ok = self.remove_from_swap_cache_frozen(pfn, target);
            self.leave(prev);
            return ok;
        }
        let ino = self.mem[pfn as usize].mapping;
        if ino == crate::mm::page::NO_MAPPING {
            // Truncated while isolated: no mapping to remove it from. It is kept and put
            // back, and the isolation reference, its last, frees it there.
            self.leave(prev);
            return false;
        }
        self.tree_lock(ino);
        self.charge_atomic(); // page_ref_freeze cmpxchg
        if self.mem[pfn as usize].refcount != 2 || self.PageDirty(pfn) {
            self.tree_unlock(ino);
            self.leave(prev);
            return false;
        }
        self.mem[pfn as usize].refcount = 0;
        let index = self.mem[pfn as usize].index;
        let memcg = self.mem[pfn as usize].memcg;
        // Only file-LRU pages leave a shadow (folio_is_file_lru): a clean tmpfs page
        // (never written: its content is zeroes) just goes.
        let file_lru = !self.mem[pfn as usize].test(pg::SWAPBACKED);
        let shadow = match target {
            Some(t) if file_lru => {
                let pr = self.enter(KFunc::WorkingsetEviction);
                let s = self.workingset_eviction(pfn, t);
                self.leave(pr);
                s
            }
            _ => None,
        };
        let nr = self.mem[pfn as usize].nr_pages();
        self.__delete_from_page_cache(pfn, shadow);
        // A folio of a leaf's size or more (order 6 and up, aligned) leaves one
        // multi-index shadow entry above the leaf level in the kernel: its leaves are
        // freed, and no shadow node is left for the shadow shrinker (mmsim keeps the
        // shadows in the leaves and leaves them off the shadow lists).
        if shadow.is_some() && nr < crate::mm::radix_tree::RADIX_TREE_MAP_SIZE as u64 {
            self.shadow_node_track(ino, index, memcg);
        }
        self.tree_unlock(ino);
        self.leave(prev);
        true
    }

    /// try_to_free_pages: direct reclaim by the allocating task. Returns pages reclaimed.
    pub fn try_to_free_pages(&mut self, gfp: Gfp) -> u64 {
        let prev = self.enter(KFunc::TryToFreePages);
        self.vmstat.inc(VmItem::Allocstall);
        self.tracepoints.mm_vmscan_direct_reclaim_begin += 1;
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, false, gfp);
        let r = self.do_try_to_free_pages(&mut sc);
        self.reclaim_congested = sc.throttle_congested;
        self.reclaim_noprogress = sc.throttle_noprogress;
        self.leave(prev);
        r
    }

    /// try_to_free_mem_cgroup_pages: limit reclaim of `memcg`'s subtree only, for at least
    /// `nr_pages` (SWAP_CLUSTER_MAX) pages. Returns pages reclaimed.
    pub fn try_to_free_mem_cgroup_pages(
        &mut self,
        memcg: MemcgId,
        nr_pages: u64,
        gfp: Gfp,
        may_swap: bool,
    ) -> u64 {
        self.try_to_free_mem_cgroup_pages_swappiness(memcg, nr_pages, gfp, may_swap, None, false)
    }

    /// try_to_free_mem_cgroup_pages with the swappiness of a memory.reclaim write
    /// (`swappiness=`, v6.11; None: vm_swappiness); `proactive`: for memory.reclaim
    /// (MEMCG_RECLAIM_PROACTIVE).
    pub fn try_to_free_mem_cgroup_pages_swappiness(
        &mut self,
        memcg: MemcgId,
        nr_pages: u64,
        gfp: Gfp,
        may_swap: bool,
        swappiness: Option<u64>,
        proactive: bool,
    ) -> u64 {
        let prev = self.enter(KFunc::TryToFreeMemCgroupPages);
        self.tracepoints.mm_vmscan_memcg_reclaim_begin += 1;
        self.memcg_reclaim_wait = None;
        let mut sc = ScanControl::new(nr_pages.max(SWAP_CLUSTER_MAX), false, gfp);
        sc.target_memcg = memcg;
        sc.may_swap = may_swap;
        sc.proactive_swappiness = swappiness;
        sc.proactive = proactive;
        // A memory stall of the reclaiming task (memory.max, memory.high, memory.reclaim).
        let stalled = self.psi_memstall_enter();
        let r = self.do_try_to_free_pages(&mut sc);
        self.psi_memstall_leave(stalled);
        // The end of do_try_to_free_pages clears the target's LRUVEC_CGROUP_CONGESTED.
        let zl = self.zonelist_nodes();
        for &n in zl.iter() {
            self.lruvec_mut(memcg, n).congested = false;
        }
        self.reclaim_congested = sc.throttle_congested;
        self.leave(prev);
        r
    }

    /// do_try_to_free_pages: shrink the zonelist's nodes at falling priority until the
    /// target is met; retry once with forced deactivation (v5.5) and once reaching into
    /// memory.low-protected memcgs before giving up.
    fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) -> u64 {
        let zl = self.zonelist_nodes();
        loop {
            let writeback_threshold = sc.nr_to_reclaim + sc.nr_to_reclaim / 2;
            loop {
                for &n in zl.iter() {
                    if !sc.cgroup_reclaim() {
                        // shrink_zones: cgroup v1's soft limit reclaim of the node first.
                        let (r, s) = self.memcg1_soft_limit_reclaim(n, sc.gfp, false);
                        sc.nr_reclaimed += r;
                        sc.nr_scanned += s;
                    }
                    self.shrink_node(n, sc);
                    if sc.nr_reclaimed >= sc.nr_to_reclaim || self.reclaim_pass_sleeps() {
                        break;
                    }
                }
                if sc.nr_reclaimed >= sc.nr_to_reclaim || self.reclaim_pass_sleeps() {
                    break;
                }
                self.consider_reclaim_throttle(zl[0], sc);
                if !self.features.reclaim_throttle && sc.nr_scanned > writeback_threshold {
                    for d in 0..self.devices.len() {
                        self.wb_start_background_writeback(d);
                    }
                }
                if sc.priority == 0 {
                    break;
                }
                sc.priority -= 1;
            }
            if self.features.refault_deactivate {
                for &n in zl.iter() {
                    self.snapshot_refaults(sc.target_memcg, n);
                }
            }
            if sc.nr_reclaimed > 0 || self.reclaim_pass_sleeps() {
                break;
            }
            // Deactivation was skipped: retry with it forced (v5.5).
            if self.features.refault_deactivate && sc.skipped_deactivate && !sc.force_deactivate {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = true;
                sc.skipped_deactivate = false;
                continue;
            }
            // Untapped memory.low reserves: don't OOM, retry.
            if sc.memcg_low_skipped && !sc.memcg_low_reclaim {
                sc.priority = DEF_PRIORITY;
                sc.force_deactivate = false;
                sc.memcg_low_reclaim = true;
                sc.memcg_low_skipped = false;
                continue;
            }
            break;
        }
        sc.nr_reclaimed
    }

    /// consider_reclaim_throttle (v5.16) after shrink_zones' pass over the zonelist, for
    /// its first node: a global direct reclaim that has reclaimed nothing by the end of its
    /// pass at priority 1 would sleep a jiffy in reclaim_throttle(VMSCAN_THROTTLE_NOPROGRESS)
    /// unless skip_throttle_noprogress lets it off. A step cannot sleep inside the pass:
    /// the sleep is taken after the reclaim, before the allocation's next round
    /// (`ScanControl::throttle_noprogress`). Not modelled: the wake-up of NOPROGRESS
    /// sleepers by a reclaimer that frees more than an eighth of what it scans.
    fn consider_reclaim_throttle(&mut self, node: usize, sc: &mut ScanControl) {
        if !self.features.reclaim_throttle
            || sc.cgroup_reclaim()
            || sc.priority != 1
            || sc.nr_reclaimed > 0
        {
            return;
        }
        if !self.skip_throttle_noprogress(node) {
            sc.throttle_noprogress = true;
        }
    }

    /// Wake kswapd of a node that is not balanced (wakeup_kswapd): only when kswapd waits
    /// on kswapd_wait (its short sleep or its sleep until woken), not while it runs or
    /// sleeps in congestion_wait or reclaim_throttle.
    pub fn wakeup_kswapd(&mut self, node: usize) {
        let Some(t) = self.kswapd.get(node).copied().flatten() else {
            return;
        };
        let st = &self.reclaim[node];
        if st.kswapd_sleep == KswapdSleep::Awake {
            return;
        }
        if self.kswapd_hopeless(node) {
            // Hopeless node, leave it to direct reclaim.
            return;
        }
        if self.zone_watermark_ok(node, self.nodes[node].watermark.high) && !st.kswapd_active {
            return;
        }
        if matches!(st.kswapd_sleep, KswapdSleep::Short(_)) {
            self.reclaim[node].kswapd_woken_early = true;
        }
        self.reclaim[node].kswapd_sleep = KswapdSleep::Awake;
        let now = self.now();
        self.wake_up(t, now);
    }

    /// kswapd_try_to_sleep, kswapd `tid` of `node` going to sleep (the node is balanced or
    /// hopeless): HZ/10 first with `kswapd-short-sleep`, else until woken. Returns false
    /// (not runnable).
    fn kswapd_try_to_sleep(&mut self, tid: crate::sched::TaskId, node: usize) -> bool {
        self.kswapd_psi_leave();
        if self.features.kswapd_short_sleep {
            let until = self.now() + KSWAPD_SHORT_SLEEP_PS;
            self.reclaim[node].kswapd_sleep = KswapdSleep::Short(until);
            self.sleep_on(tid, crate::sched::Wait::Until(until));
            return false;
        }
        self.reclaim[node].kswapd_sleep = KswapdSleep::Deep;
        self.set_sleeping(tid);
        false
    }

    /// A timer of kswapd task `task` firing at `t` that its sleep no longer has: kswapd
    /// sleeps until woken, or is in a short sleep that ends at another time (an earlier
    /// wait's timer, whose sleep ended early: schedule_timeout deletes its timer then).
    pub fn kswapd_timer_is_stale(&self, task: crate::sched::TaskId, t: crate::machine::Ps) -> bool {
        let crate::sched::TaskBody::Kthread(crate::sched::KThread::Kswapd(node)) =
            self.tasks[task].body
        else {
            return false;
        };
        match self.reclaim[node].kswapd_sleep {
            KswapdSleep::Awake => false,
            KswapdSleep::Short(until) => t != until,
            KswapdSleep::Deep => true,
        }
    }

    /// One step of kswapd: one shrink_node pass of balance_pgdat, or go to sleep when the
    /// node is balanced. Returns true if it stays runnable.
    pub fn kswapd_step(&mut self, tid: crate::sched::TaskId, node: usize) -> bool {
        let prev = self.enter(KFunc::Kswapd);
        let high = self.nodes[node].watermark.high;
        if let KswapdSleep::Short(_) = self.reclaim[node].kswapd_sleep {
            // The short sleep's timeout ran out (an allocator's wake ends it in
            // wakeup_kswapd): asleep until woken if still balanced, else reclaim again.
            self.reclaim[node].kswapd_sleep = KswapdSleep::Awake;
            if self.zone_watermark_ok(node, high) || self.kswapd_hopeless(node) {
                self.reclaim[node].kswapd_sleep = KswapdSleep::Deep;
                self.set_sleeping(tid);
                self.leave(prev);
                return false;
            }
            self.vmstat.inc(VmItem::KswapdHighWmarkHitQuickly);
        }
        if std::mem::take(&mut self.reclaim[node].kswapd_woken_early) {
            self.vmstat.inc(VmItem::KswapdLowWmarkHitQuickly);
        }
        if self.zone_watermark_ok(node, high) {
            // Balanced: the end of balance_pgdat (snapshot_refaults, v5.5); clear the
            // zone flags and sleep until woken.
            if self.features.refault_deactivate && self.reclaim[node].kswapd_active {
                self.snapshot_refaults(ROOT_MEM_CGROUP, node);
            }
            // clear_pgdat_congested: the root lruvec's congested flags too.
            self.lruvec_mut(ROOT_MEM_CGROUP, node).congested = false;
            let st = &mut self.reclaim[node];
            st.zone_dirty = false;
            st.zone_writeback = false;
            st.kswapd_active = false;
            st.kswapd_priority = DEF_PRIORITY;
            st.kswapd_reclaimed = 0;
            st.kswapd_scanned = 0;
            st.kswapd_memcgs_need_aging = false;
            st.kswapd_no_cache_trim_mode = false;
            st.kswapd_cache_trim_mode_failed = false;
            self.leave(prev);
            return self.kswapd_try_to_sleep(tid, node);
        }
        if !self.reclaim[node].kswapd_active {
            self.reclaim[node].kswapd_active = true;
            self.reclaim[node].kswapd_priority = DEF_PRIORITY;
            self.reclaim[node].kswapd_reclaimed = 0;
            self.reclaim[node].kswapd_scanned = 0;
            self.reclaim[node].kswapd_memcgs_need_aging = false;
            self.reclaim[node].kswapd_no_cache_trim_mode = false;
            self.reclaim[node].kswapd_cache_trim_mode_failed = false;
            self.vmstat.inc(VmItem::Pageoutrun);
        }
        // balance_pgdat runs as a memory stall of kswapd (psi_memstall_enter at its start,
        // leave at its end: `kswapd_psi_leave`), its throttling sleeps included.
        self.psi_memstall_enter();
        let pb = self.enter(KFunc::BalancePgdat);
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX.max(high), true, Gfp::KERNEL);
        sc.priority = self.reclaim[node].kswapd_priority;
        sc.may_writepage = true;
        sc.no_cache_trim_mode = self.reclaim[node].kswapd_no_cache_trim_mode;
        sc.cache_trim_mode_failed = self.reclaim[node].kswapd_cache_trim_mode_failed;
        if let Some(f) = self.ops.age_node {
            // kswapd_age_node.
            f(self, node, &mut sc);
        }
        // cgroup v1: soft limit reclaim before shrink_node.
        let (soft, _) = self.memcg1_soft_limit_reclaim(node, sc.gfp, true);
        sc.nr_reclaimed += soft;
        self.shrink_node(node, &mut sc);
        self.reclaim[node].kswapd_cache_trim_mode_failed = sc.cache_trim_mode_failed;
        self.leave(pb);
        // 2.6.30: "kswapd is getting into trouble. Take a nap, then take another pass
        // across the zones": congestion_wait(WRITE, HZ/10) after a pass below priority 10
        // once the loop has scanned anything (before the SWAP_CLUSTER_MAX check).
        let nap = !self.features.kswapd_flat_priority
            && self.reclaim[node].kswapd_scanned + sc.nr_scanned > 0
            && sc.priority < DEF_PRIORITY - 2;
        let loop_end = self.kswapd_lower_priority(node, &sc);
        if nap {
            let at = self.now() + KSWAPD_NAP_PS;
            self.congestion_waiters.push((tid, at));
            self.leave(prev);
            self.sleep_on(tid, crate::sched::Wait::Until(at));
            return false;
        }
        if let Some(fruitless) = loop_end {
            // balance_pgdat returns (v5.5: snapshot_refaults at its end).
            if self.features.refault_deactivate {
                self.snapshot_refaults(ROOT_MEM_CGROUP, node);
            }
            if fruitless && self.features.kswapd_failures {
                self.reclaim[node].kswapd_failures += 1;
                if self.kswapd_hopeless(node) {
                    // prepare_kswapd_sleep: a hopeless node lets kswapd sleep.
                    self.reclaim[node].kswapd_active = false;
                    self.leave(prev);
                    return self.kswapd_try_to_sleep(tid, node);
                }
                // Not balanced: balance_pgdat again at once.
                self.vmstat.inc(VmItem::Pageoutrun);
                self.leave(prev);
                return true;
            }
            if self.features.kswapd_flat_priority {
                // kswapd calls balance_pgdat again (at once, or after backing off).
                self.vmstat.inc(VmItem::Pageoutrun);
            }
            if fruitless {
                // The priority loop ran out without reclaiming anything: back off
                // (wait_iff_congested) rather than spin; the allocator's OOM path handles
                // true exhaustion.
                let at = self.now() + CONGESTION_WAIT_PS;
                self.leave(prev);
                self.kswapd_psi_leave();
                self.sleep_on(tid, crate::sched::Wait::Until(at));
                return false;
            }
        }
        if self.features.reclaim_throttle {
            if std::mem::take(&mut self.reclaim[node].throttle_writeback) {
                // v5.16: pages cycle through the LRU faster than they are written.
                let w = self.reclaim_throttle(tid, node);
                self.leave(prev);
                self.sleep_on(tid, w);
                return false;
            }
            self.leave(prev);
            return true;
        }
        let st = &mut self.reclaim[node];
        if st.zone_writeback && sc.nr_reclaimed < sc.nr_scanned / 4 {
            // Pages at the tail are under writeback: throttle (congestion_wait).
            st.zone_writeback = false;
            let at = self.now() + CONGESTION_WAIT_PS;
            self.leave(prev);
            self.sleep_on(tid, crate::sched::Wait::Until(at));
            return false;
        }
        self.leave(prev);
        true
    }
}

impl Sim {
    /// The scan and steal counters of a reclaimer (PGSCAN_KSWAPD + reclaimer_offset):
    /// kswapd's, proactive reclaim's (from v6.15, `proactive-reclaim-stats`), else direct
    /// reclaim's.
    pub fn reclaim_items(&self, sc: &ScanControl) -> (VmItem, VmItem) {
        if sc.is_kswapd {
            (VmItem::PgscanKswapd, VmItem::PgstealKswapd)
        } else if sc.proactive && self.features.proactive_reclaim_stats {
            (VmItem::PgscanProactive, VmItem::PgstealProactive)
        } else {
            (VmItem::PgscanDirect, VmItem::PgstealDirect)
        }
    }

    /// balance_pgdat returned: kswapd's memory stall ends (psi_memstall_leave).
    fn kswapd_psi_leave(&mut self) {
        self.psi_memstall_leave(false);
    }

    /// The end of one balance_pgdat pass of kswapd on `node` (`sc` is the pass's scan
    /// control, its priority the one the pass ran at: MGLRU's set_initial_priority may have
    /// moved it): the priority of the next pass. Returns `Some(fruitless)` when the
    /// priority loop ended (balance_pgdat returns), `fruitless` when it reclaimed nothing
    /// since it began; `None` while it goes on.
    ///
    /// - `kswapd-flat-priority` (v3.11): lower the priority unless the pass met its target
    ///   — kswapd_shrink_node's `nr_scanned >= nr_to_reclaim` — and reclaimed something
    ///   (`raise_priority || !nr_reclaimed`); below 1 balance_pgdat returns, and kswapd, not
    ///   balanced, calls it again from DEF_PRIORITY.
    /// - Off (2.6.30): every pass lowers the priority, down to 0; once SWAP_CLUSTER_MAX
    ///   pages were reclaimed since the loop began, `goto loop_again` restarts it at
    ///   DEF_PRIORITY within the same call. (The caller naps after a pass below priority 10.)
    pub fn kswapd_lower_priority(&mut self, node: usize, sc: &ScanControl) -> Option<bool> {
        let flat = self.features.kswapd_flat_priority;
        let st = &mut self.reclaim[node];
        st.kswapd_reclaimed += sc.nr_reclaimed;
        st.kswapd_scanned += sc.nr_scanned;
        let loop_done = if flat {
            let met_target = sc.nr_scanned.max(sc.nr_reclaimed) >= sc.nr_to_reclaim;
            let mut priority = sc.priority;
            if !met_target || sc.nr_reclaimed == 0 {
                priority = priority.saturating_sub(1);
            }
            st.kswapd_priority = priority;
            priority < 1
        } else if st.kswapd_reclaimed >= SWAP_CLUSTER_MAX {
            // loop_again, having made progress.
            st.kswapd_priority = DEF_PRIORITY;
            st.kswapd_reclaimed = 0;
            st.kswapd_scanned = 0;
            return None;
        } else if sc.priority == 0 {
            true
        } else {
            st.kswapd_priority = sc.priority - 1;
            false
        };
        if !loop_done {
            return None;
        }
        let fruitless = st.kswapd_reclaimed == 0;
        st.kswapd_priority = DEF_PRIORITY;
        st.kswapd_reclaimed = 0;
        st.kswapd_scanned = 0;
        if fruitless
            && self.features.kswapd_cache_trim_retry
            && !st.kswapd_no_cache_trim_mode
            && st.kswapd_cache_trim_mode_failed
        {
            // v6.10: the loop went all the way down without reclaiming while
            // cache_trim_mode failed: restart it at DEF_PRIORITY without cache_trim_mode
            // (the same balance_pgdat call: no new pageoutrun, no failure yet).
            st.kswapd_no_cache_trim_mode = true;
            return None;
        }
        st.kswapd_memcgs_need_aging = false;
        st.kswapd_no_cache_trim_mode = false;
        st.kswapd_cache_trim_mode_failed = false;
        Some(fruitless)
    }

    /// kswapd gave up on `node` (`kswapd-failures`, v4.11): MAX_RECLAIM_RETRIES
    /// balance_pgdat calls in a row reclaimed nothing; reclaim progress on the node
    /// revives it.
    pub fn kswapd_hopeless(&self, node: usize) -> bool {
        self.features.kswapd_failures
            && self.reclaim[node].kswapd_failures >= crate::mm::memcontrol::MAX_RECLAIM_RETRIES
    }
}

/// kswapd_try_to_sleep's short sleep, HZ/10 (v2.6.32).
pub const KSWAPD_SHORT_SLEEP_PS: u64 = 100_000_000_000;
/// kswapd's nap in 2.6.30's balance_pgdat: congestion_wait(WRITE, HZ/10), 100 ms unless a
/// write request completes first.
pub const KSWAPD_NAP_PS: u64 = 100_000_000_000;
/// congestion_wait(BLK_RW_ASYNC, HZ/50): how long reclaim backs off when the pages it finds
/// are all under writeback, 20 ms.
pub const CONGESTION_WAIT_PS: u64 = 20_000_000_000;
/// reclaim_throttle's timeout for VMSCAN_THROTTLE_WRITEBACK, HZ/10.
pub const THROTTLE_WRITEBACK_PS: u64 = 100_000_000_000;

impl Sim {
    /// writeback_throttling_sane: global reclaim, or limit reclaim with cgroup writeback
    /// (the dirty throttling of the cgroup's own writeback domain keeps its LRU from
    /// filling with dirty pages). Without it (cgroup v1's legacy hierarchy, kernels before
    /// 4.2) limit reclaim waits on writeback itself.
    pub fn writeback_throttling_sane(&self, sc: &ScanControl) -> bool {
        !sc.cgroup_reclaim() || self.cgroup_writeback()
    }

    /// reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK) (v5.16): task `tid` sleeps until
    /// SWAP_CLUSTER_MAX pages per throttled task have completed writeback on the node
    /// since throttling began, or HZ/10 passed. Returns the wait.
    pub fn reclaim_throttle(
        &mut self,
        tid: crate::sched::TaskId,
        node: usize,
    ) -> crate::sched::Wait {
        let now = self.now();
        let list = &mut self.reclaim_throttled[node];
        list.retain(|&(t, _)| t != tid);
        if list.is_empty() {
            // The first sleeper: completions count from here (nr_reclaim_start).
            self.reclaim[node].nr_reclaim_start = self.reclaim[node].nr_throttled_written;
        }
        self.tracepoints.mm_vmscan_throttled.writeback += 1;
        let until = now + THROTTLE_WRITEBACK_PS;
        self.reclaim_throttled[node].push((tid, until));
        self.tasks[tid].reclaim_throttled_on = Some(node as u32);
        crate::sched::Wait::Until(until)
    }

    /// Task `tid` runs again after a reclaim_throttle sleep on `node` (woken by
    /// completions or by its timeout): it leaves the node's throttled tasks (the kernel's
    /// atomic_dec of nr_writeback_throttled once schedule_timeout returns). Until then
    /// the writeback completing on the node counts in nr_throttled_written.
    pub fn reclaim_throttle_done(&mut self, tid: crate::sched::TaskId) {
        if let Some(node) = self.tasks[tid].reclaim_throttled_on.take() {
            self.reclaim_throttled[node as usize].retain(|&(t, _)| t != tid);
        }
    }

    /// The timer of task `tid`'s sleep fired at `t`: when that sleep is a
    /// VMSCAN_THROTTLE_WRITEBACK throttle, nothing woke it before its timeout
    /// (`mm_vmscan_throttled.writeback_timeouts`).
    pub(crate) fn reclaim_throttle_timed_out(
        &mut self,
        tid: crate::sched::TaskId,
        t: crate::machine::Ps,
    ) {
        if self
            .reclaim_throttled
            .iter()
            .any(|l| l.iter().any(|&(x, until)| x == tid && until == t))
        {
            self.tracepoints.mm_vmscan_throttled.writeback_timeouts += 1;
        }
    }

    /// trace_mm_vmscan_lru_shrink_inactive: the counts of one shrink_folio_list call of
    /// shrink_inactive_list or (MGLRU) evict_folios, `scanned` pages isolated for it.
    pub(crate) fn trace_shrink_inactive(&mut self, scanned: u64, stat: &ShrinkStat, priority: u32) {
        let t = &mut self.tracepoints.mm_vmscan_lru_shrink_inactive;
        t.events += 1;
        t.nr_scanned += scanned;
        t.nr_reclaimed += stat.reclaimed;
        t.nr_dirty += stat.nr_dirty;
        t.nr_writeback += stat.nr_writeback;
        t.nr_congested += stat.nr_congested;
        t.nr_immediate += stat.nr_immediate;
        t.nr_activate_anon += stat.nr_activate[0];
        t.nr_activate_file += stat.nr_activate[1];
        t.nr_ref_keep += stat.nr_ref_keep;
        let p = (priority as usize).min(crate::mm::tracepoints::NR_PRIORITIES - 1);
        t.by_priority[p] += 1;
    }

    /// __acct_reclaim_writeback: a page on a node with throttled reclaimers completed
    /// writeback (nr_throttled_written, /proc/vmstat from 5.16); wake them once enough did.
    pub fn acct_reclaim_writeback(&mut self, pfn: Pfn, nr: u64) {
        let node = self.mem[pfn as usize].node as usize;
        if self.reclaim_throttled[node].is_empty() {
            return;
        }
        // (A sleeper leaves once it runs again, `reclaim_throttle_done`.)
        let now = self.now();
        self.vmstat.add(VmItem::NrThrottledWritten, nr as i64);
        let st = &mut self.reclaim[node];
        st.nr_throttled_written += nr;
        let written = st.nr_throttled_written - st.nr_reclaim_start;
        let n = self.reclaim_throttled[node].len() as u64;
        if written > SWAP_CLUSTER_MAX * n {
            // Woken, they still count as throttled until they run: the rest of this
            // completion's pages are counted too (NR_THROTTLED_WRITTEN).
            for i in 0..self.reclaim_throttled[node].len() {
                let (t, until) = self.reclaim_throttled[node][i];
                if until > now {
                    self.reclaim_throttled[node][i].1 = now;
                    self.wake_up(t, now);
                }
            }
        }
    }
}

/// Counters from one shrink_page_list call (struct reclaim_stat).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ShrinkStat {
    pub(crate) reclaimed: u64,
    pub(crate) nr_writeback: u64,
    pub(crate) nr_unqueued_dirty: u64,
    pub(crate) nr_dirty: u64,
    pub(crate) nr_congested: u64,
    pub(crate) nr_immediate: u64,
    pub(crate) nr_pageout: u64,
    /// Pages activated, [anon, file] (nr_activate[type]).
    pub(crate) nr_activate: [u64; 2],
    /// Mapped pages referenced once and kept for another trip (FOLIOREF_KEEP).
    pub(crate) nr_ref_keep: u64,
}

fn isolated_item(file: bool) -> VmItem {
    if file {
        VmItem::NrIsolatedFile
    } else {
        VmItem::NrIsolatedAnon
    }
}
