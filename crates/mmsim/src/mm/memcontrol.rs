//! Memory cgroups (mm/memcontrol.c, cgroup v2 semantics).
//!
//! Every page on an LRU belongs to one memcg (`Page::memcg`, the kernel's folio_memcg):
//! the root cgroup unless the task that brought the page in runs in a `[[cgroups]]`
//! cgroup. Each (memcg, node) pair has its own lruvec (`Sim::lruvecs`, index
//! `memcg × nodes + node`), so reclaim can work on one cgroup's pages only.
//!
//! - **Charging** (`mem_cgroup_charge`, try_charge_memcg): a page-cache insertion, an
//!   anonymous or COW fault and a swap-in charge the page to a memcg: the running task's,
//!   or for a swap-in the one recorded in the swap slot (swap_cgroup). The charge counts
//!   in the page counter of the memcg and of every ancestor (hierarchical usage). A charge
//!   that would take any of them above `memory.max` reclaims from the memcg whose limit
//!   is hit (try_to_free_mem_cgroup_pages, only its subtree), retries up to
//!   MAX_RECLAIM_RETRIES times (a pass that freed pages uses up no retry), then runs the
//!   memcg OOM killer, which picks a victim
//!   inside that subtree only. Charging the root costs nothing (the kernel does not
//!   count the root's page counter); a non-root charge costs one atomic per level.
//!   From 2.6.33 (`memcg-charge-stock`) the counters are charged a batch at a time
//!   (MEMCG_CHARGE_BATCH: 32 pages, 64 from 6.0) and the rest waits in the CPU's stock
//!   (`Sim::memcg_stock`; several memcgs per CPU from 6.16), which a charge at memory.max
//!   drains before it gives up. Freeing a page uncharges it (`mem_cgroup_uncharge`).
//! - **memory.high**: a charge that leaves a memcg above its high limit queues the
//!   over-high work; when the task returns to user space (`mem_cgroup_handle_over_high`)
//!   it reclaims the excess from that memcg (each pass counting a `high` event) and, from
//!   5.4 (`memcg-high-throttle`), retries and, if usage stays above high, sleeps for the
//!   quadratic penalty of calculate_high_delay (at most 2 s). From 5.18
//!   (`memcg-sync-high`) a charge that leaves more than a batch of that work queued runs
//!   it at once (its sleep is taken on the return to user space).
//! - **Protection**: global reclaim walks every memcg (`shrink_node_memcgs` in vmscan.rs);
//!   a memcg below its effective memory.min is skipped, one below its effective memory.low
//!   is skipped unless nothing else could be reclaimed (memcg_low_reclaim, counting a `low`
//!   event), and one above its protection is scanned in proportion to the unprotected part
//!   (get_scan_count). Effective protection is distributed down the tree as
//!   effective_protection does (without memory_recursiveprot).
//! - **Swap**: swapping a page out charges the memcg's swap counter (memory.swap.max);
//!   a memcg at its swap limit cannot swap and its anon pages stay resident.
//! - **Events**: memory.events `low`, `high`, `max`, `oom`, `oom_kill`, `oom_group_kill`
//!   (local counts; the report sums them up the tree as memory.events does).
//! - **OOM**: the memcg OOM killer picks its victim inside the subtree of the memcg whose
//!   limit was hit; memory.oom.group and oom_score_adj are in `mm/oom_kill.rs`.
//!
//! - **Kernel memory**: page-table pages are charged to the faulting task's memcg from
//!   4.7 (`memcg-kmem-pgtables`, `Sim::__pte_alloc`), memory.stat `pagetables`.
//!
//! - **Slab**: the VFS caches' dentries and inodes are charged by slab page from 4.5
//!   (`memcg-kmem-vfs`, `mm/slab.rs`), by object bytes through the memcg's obj_cgroup
//!   from 5.9 (`memcg-kmem-objcg`: `Sim::obj_cgroup_precharge`; one byte stock per
//!   memcg where the kernel has one per CPU and objcg->nr_charged_bytes).
//!
//! Not modelled: struct file and other accounted slab caches, cgroup v1.

use crate::machine::profile::KFunc;
use crate::mm::node::{LruList, Lruvec};
use crate::mm::page::{pg, Pfn};
use crate::mm::page_alloc::{AllocError, Gfp};
use crate::mm::vmscan::ReclaimWait;
use crate::mm::vmstat::{VmItem, VmStat};
use crate::sched::Wait;
use crate::sim::Sim;

/// A memory cgroup's index in `Sim::memcgs` (mem_cgroup_id).
pub type MemcgId = u16;
/// The root memory cgroup.
pub const ROOT_MEM_CGROUP: MemcgId = 0;
/// A page charged to no memcg (free, or not yet charged).
pub const NO_MEMCG: MemcgId = u16::MAX;
/// MAX_RECLAIM_RETRIES.
pub const MAX_RECLAIM_RETRIES: u32 = 16;

/// A bound on try_charge's retries after reclaim that freed pages (which use up no
/// MAX_RECLAIM_RETRIES retry): the kernel has none, but there other tasks run meanwhile;
/// here a charge runs within one engine step.
pub const MAX_PROGRESS_RETRIES: u32 = 1024;
/// "max": no limit.
pub const PAGE_COUNTER_MAX: u64 = u64::MAX;
/// A page-counter limit in pages as the cgroup files show it: bytes, or None for "max".
pub fn limit_bytes(pages: u64) -> Option<u64> {
    (pages != PAGE_COUNTER_MAX).then(|| pages * crate::mm::page::PAGE_SIZE)
}
/// NR_MEMCG_STOCK (v6.16): the memcgs one CPU's charge stock holds (one before).
pub const NR_MEMCG_STOCK: usize = 7;

/// memcg_stock_pcp: one CPU's pages charged to a memcg's counters ahead of use, per slot
/// (`memcg-charge-stock`; one slot before v6.16, `memcg-multi-stock`).
#[derive(Clone, Copy, Debug)]
pub struct MemcgStock {
    /// (memcg, pages) per slot; `NO_MEMCG` when the slot is empty.
    pub slots: [(MemcgId, u64); NR_MEMCG_STOCK],
}

impl Default for MemcgStock {
    fn default() -> MemcgStock {
        MemcgStock {
            slots: [(NO_MEMCG, 0); NR_MEMCG_STOCK],
        }
    }
}
/// One jiffy (HZ = 1000), ps.
pub const JIFFY_PS: u64 = 1_000_000_000;
/// MEMCG_MAX_HIGH_DELAY_JIFFIES: the longest memory.high throttling sleep (2 s).
pub const MEMCG_MAX_HIGH_DELAY_JIFFIES: u64 = 2_000;
/// MEMCG_DELAY_PRECISION_SHIFT.
const MEMCG_DELAY_PRECISION_SHIFT: u32 = 20;
/// MEMCG_DELAY_SCALING_SHIFT.
const MEMCG_DELAY_SCALING_SHIFT: u32 = 14;

/// memory.events (local counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemcgEvents {
    /// Reclaimed although below memory.low (no other memory was left).
    pub low: u64,
    /// reclaim_high found usage above memory.high (the over-high work on the return to
    /// user space, once per memcg and pass).
    pub high: u64,
    /// A charge hit memory.max.
    pub max: u64,
    /// The OOM killer was invoked for memory.max.
    pub oom: u64,
    /// A task of this cgroup was killed by an OOM killer.
    pub oom_kill: u64,
    /// This cgroup's memory.oom.group made an OOM kill take all its tasks
    /// (MEMCG_OOM_GROUP_KILL, 5.17).
    pub oom_group_kill: u64,
}

/// memory.swap.events (local counts; the report sums a cgroup's subtree, as
/// memcg_memory_event propagates them to every ancestor below the root).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MemcgSwapEvents {
    /// The over-high work found swap usage above memory.swap.high (MEMCG_SWAP_HIGH,
    /// swap_find_max_overage: once per memcg and pass).
    pub high: u64,
    /// A swap-out was refused at memory.swap.max (MEMCG_SWAP_MAX).
    pub max: u64,
    /// A swap-out found no slot, or was refused at memory.swap.max (MEMCG_SWAP_FAIL).
    pub fail: u64,
}

/// Which memory.events counter to bump (enum memcg_memory_event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemcgEvent {
    /// MEMCG_LOW.
    Low,
    /// MEMCG_HIGH.
    High,
    /// MEMCG_MAX.
    Max,
    /// MEMCG_OOM.
    Oom,
    /// MEMCG_OOM_KILL.
    OomKill,
    /// MEMCG_OOM_GROUP_KILL.
    OomGroupKill,
}

/// struct mem_cgroup.
#[derive(Clone, Debug)]
pub struct MemCgroup {
    /// Path below the root ("" for the root, "a/b" for a child of "a").
    pub name: String,
    /// Parent (None for the root).
    pub parent: Option<MemcgId>,
    /// The memcgs are stored in pre-order: this one's subtree is `id..subtree_end`.
    pub subtree_end: MemcgId,
    /// memory.max, pages.
    pub max: u64,
    /// memory.high, pages.
    pub high: u64,
    /// memory.low, pages.
    pub low: u64,
    /// memory.min, pages.
    pub min: u64,
    /// memory.swap.max, pages.
    pub swap_max: u64,
    /// Swap usage when memory.swap.max was last lowered below it (0 otherwise): a write
    /// reclaims no swap, so usage may stay above the new limit, never above this (the
    /// checker's bound).
    pub swap_max_ceiling: u64,
    /// memory.current: pages charged to this memcg and its descendants.
    pub usage: u64,
    /// memory.peak.
    pub peak: u64,
    /// memory.swap.current: swap slots charged here and below.
    pub swap_usage: u64,
    /// memory.swap.high, pages (5.8): swap usage above it throttles the cgroup's
    /// allocations (mem_cgroup_handle_over_high); it reclaims nothing.
    pub swap_high: u64,
    /// memory.swap.peak (6.5): the most `swap_usage` has been.
    pub swap_peak: u64,
    /// memory.swap.events of the pages charged here (local).
    pub swap_events: MemcgSwapEvents,
    /// cgroup v1 memory.memsw.limit_in_bytes in pages (PAGE_COUNTER_MAX: none): the
    /// memsw counter, memory and swap together, is `usage + swap_usage` (on v1 a slot
    /// is charged from the page's swap-out to its swap-in, `Sim::mem_cgroup_swapout`).
    pub memsw_max: u64,
    /// cgroup v1 memory.memsw.failcnt: charges the memsw counter refused.
    pub memsw_failcnt: u64,
    /// cgroup v1 memory.soft_limit_in_bytes in pages (PAGE_COUNTER_MAX: none; the soft
    /// limit tree, `mm::memcontrol_v1`).
    pub soft_limit: u64,
    /// cgroup v1 memory.swappiness (None: vm.swappiness; a cgroup takes its parent's
    /// at creation, `build_memcgs`). See [`Sim::mem_cgroup_swappiness`].
    pub swappiness: Option<u64>,
    /// cgroup v1 memory.memsw.max_usage_in_bytes, pages: the memsw counter's watermark,
    /// raised where try_charge charges it (with the memory counter; a swap-out moves a
    /// page's charge to its slot without touching it).
    pub memsw_peak: u64,
    /// cgroup v1 memory.failcnt: charges the memory counter refused
    /// (page_counter_try_charge's failcnt of the level over its limit; a batch that does
    /// not fit counts too).
    pub failcnt: u64,
    /// cgroup v1 memory.stat `pgpgin` (local): folios charged here, one event per folio
    /// whatever its size (memcg1_charge_statistics); kernel memory is not counted.
    pub pgpgin: u64,
    /// cgroup v1 memory.stat `pgpgout` (local): folios uncharged from here (uncharge_batch's
    /// pgpgout, one per folio).
    pub pgpgout: u64,
    /// Effective memory.min (computed by mem_cgroup_calculate_protection).
    pub emin: u64,
    /// Effective memory.low.
    pub elow: u64,
    /// memory.events.local.
    pub events: MemcgEvents,
    /// Local event and state counters under /proc/vmstat names (memory.stat's sources).
    pub stat: VmStat,
    /// Times a writer of this memcg was paused by balance_dirty_pages.
    pub dirty_throttled: u64,
    /// memory.oom.group (4.19): an OOM kill of a task in this subtree kills all of it.
    pub oom_group: bool,
    /// memory.zswap.max in pages (5.19; PAGE_COUNTER_MAX: no limit): obj_cgroup_may_zswap.
    pub zswap_max: u64,
    /// memory.zswap.writeback (6.8): false keeps this subtree's pages off the swap device.
    pub zswap_writeback: bool,
    /// `memcg-kmem-objcg`: bytes of this memcg's own slab objects, reclaimable and
    /// unreclaimable (NR_SLAB_RECLAIMABLE_B / NR_SLAB_UNRECLAIMABLE_B of its lruvecs).
    pub slab_bytes: [u64; 2],
    /// `memcg-kmem-objcg`: bytes its obj_cgroup has charged but no object uses (the
    /// per-CPU obj stocks and objcg->nr_charged_bytes, one pool here).
    pub obj_stock_bytes: u64,
    /// `memcg-kmem-objcg`: pages charged for its objects (obj_cgroup_charge_pages less
    /// obj_cgroup_uncharge_pages; MEMCG_KMEM): `(slab_bytes + obj_stock_bytes -
    /// obj_debt_bytes) / PAGE_SIZE`.
    pub obj_pages: u64,
    /// Bytes of objects whose charge could not wait (`Sim::obj_cgroup_charge_forced`) and
    /// no page covers yet: paid by the next charge that may reclaim, or by freed objects.
    pub obj_debt_bytes: u64,
    /// Page charges for its objects in progress (each may reclaim, and the reclaim may
    /// charge an object of this memcg in turn).
    pub obj_charging: u32,
    /// A charge nested in another's reclaim refilled the stock, and the outer charge's
    /// page joined it anyway (obj_cgroup_charge refills the stock after
    /// obj_cgroup_charge_pages whatever happened meanwhile): the stock may hold two pages
    /// or more until a freed object's refill (allow_uncharge) brings it under a page.
    pub obj_stock_nested: bool,
}

impl MemCgroup {
    /// A memcg with no limits.
    pub fn new(name: &str, parent: Option<MemcgId>) -> MemCgroup {
        MemCgroup {
            name: name.to_string(),
            parent,
            subtree_end: 0,
            max: PAGE_COUNTER_MAX,
            high: PAGE_COUNTER_MAX,
            low: 0,
            min: 0,
            swap_max: PAGE_COUNTER_MAX,
            swap_max_ceiling: 0,
            usage: 0,
            peak: 0,
            swap_usage: 0,
            swap_high: PAGE_COUNTER_MAX,
            swap_peak: 0,
            swap_events: MemcgSwapEvents::default(),
            memsw_max: PAGE_COUNTER_MAX,
            memsw_failcnt: 0,
            memsw_peak: 0,
            soft_limit: PAGE_COUNTER_MAX,
            swappiness: None,
            failcnt: 0,
            pgpgin: 0,
            pgpgout: 0,
            emin: 0,
            elow: 0,
            events: MemcgEvents::default(),
            stat: VmStat::default(),
            dirty_throttled: 0,
            oom_group: false,
            zswap_max: PAGE_COUNTER_MAX,
            zswap_writeback: true,
            slab_bytes: [0; 2],
            obj_stock_bytes: 0,
            obj_charging: 0,
            obj_stock_nested: false,
            obj_pages: 0,
            obj_debt_bytes: 0,
        }
    }
}

/// Build the memcg tree of a scenario in pre-order (root first, each cgroup followed by
/// its subtree, children in declaration order). Returns the memcgs and, per scenario
/// cgroup name, its id.
pub fn build_memcgs(specs: &[crate::scenario::CgroupSpec]) -> Result<Vec<MemCgroup>, String> {
    fn parent_of(name: &str) -> &str {
        name.rsplit_once('/').map_or("", |(p, _)| p)
    }
    fn pages(b: Option<u64>) -> u64 {
        b.map_or(PAGE_COUNTER_MAX, |b| b / crate::mm::page::PAGE_SIZE)
    }
    let mut out = vec![MemCgroup::new("", None)];
    // Depth-first from the root, children in declaration order.
    fn visit(
        specs: &[crate::scenario::CgroupSpec],
        parent_name: &str,
        parent: MemcgId,
        out: &mut Vec<MemCgroup>,
    ) -> Result<(), String> {
        for s in specs.iter().filter(|s| parent_of(&s.name) == parent_name) {
            if out.len() >= usize::from(NO_MEMCG) {
                return Err("too many cgroups (at most 65534)".into());
            }
            let id = out.len() as MemcgId;
            let mut m = MemCgroup::new(&s.name, Some(parent));
            m.max = pages(s.memory_max);
            m.high = pages(s.memory_high);
            m.low = s.memory_low / crate::mm::page::PAGE_SIZE;
            m.min = s.memory_min / crate::mm::page::PAGE_SIZE;
            m.swap_max = pages(s.swap_max);
            m.swap_high = pages(s.swap_high);
            m.oom_group = s.oom_group;
            m.zswap_max = pages(s.zswap_max);
            m.zswap_writeback = s.zswap_writeback;
            m.memsw_max = pages(s.memsw_max);
            m.soft_limit = pages(s.soft_limit);
            // mem_cgroup_css_alloc: a new cgroup starts with its parent's swappiness.
            m.swappiness = s.swappiness.or(out[parent as usize].swappiness);
            out.push(m);
            visit(specs, &s.name, id, out)?;
            out[id as usize].subtree_end = out.len() as MemcgId;
        }
        Ok(())
    }
    visit(specs, "", ROOT_MEM_CGROUP, &mut out)?;
    out[0].subtree_end = out.len() as MemcgId;
    if out.len() != specs.len() + 1 {
        let missing: Vec<&str> = specs
            .iter()
            .filter(|s| !out.iter().any(|m| m.name == s.name))
            .map(|s| s.name.as_str())
            .collect();
        return Err(format!(
            "cgroups {} have no declared parent",
            missing.join(", ")
        ));
    }
    Ok(out)
}

/// effective_protection: a child's share of its parent's effective protection. Children
/// that together claim more than the parent has get it in proportion to their claims.
pub fn effective_protection(
    usage: u64,
    setting: u64,
    parent_effective: u64,
    siblings_protected: u64,
) -> u64 {
    let protected = usage.min(setting);
    if siblings_protected > parent_effective {
        return ((protected as u128 * parent_effective as u128) / siblings_protected as u128)
            as u64;
    }
    protected
}

/// calculate_overage: how far `usage` is above `high`, in 2^-20 units of `high`.
fn calculate_overage(usage: u64, high: u64) -> u64 {
    if usage <= high {
        return 0;
    }
    // Prevent division by 0 in overage calculation by acting as if it was a threshold of 1.
    let high = high.max(1);
    (((usage - high) as u128) << MEMCG_DELAY_PRECISION_SHIFT).div_ceil(high as u128) as u64
}

/// calculate_high_delay: the throttling penalty for `nr_pages` charged over memory.high
/// at the largest overage `max_overage` of the memcg's ancestry, in jiffies, scaled per
/// `batch` pages (MEMCG_CHARGE_BATCH).
pub fn calculate_high_delay(max_overage: u64, nr_pages: u64, batch: u64) -> u64 {
    if max_overage == 0 {
        return 0;
    }
    // overage² × HZ, scaled down by the precision and the scaling shifts.
    let penalty = ((max_overage as u128 * max_overage as u128 * 1000)
        >> (MEMCG_DELAY_PRECISION_SHIFT + MEMCG_DELAY_SCALING_SHIFT))
        .min(u64::MAX as u128) as u64;
    // Scale by the pages charged over, as a share of a charge batch.
    penalty.saturating_mul(nr_pages) / batch
}

/// `m` unless it is the root: the walks up a memcg's ancestry stop below the root, whose
/// page counter the kernel does not use.
#[inline]
fn nonroot(m: MemcgId) -> Option<MemcgId> {
    (m != ROOT_MEM_CGROUP).then_some(m)
}

/// PAGE_ALLOC_COSTLY_ORDER: above it a charge does not call the memcg OOM killer.
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;

/// FLUSH_TIME: the period of the memcg stats flush worker (2 × HZ), ps.
pub const FLUSH_TIME_PS: u64 = 2_000_000_000_000;

/// Where a run with scenario seed `seed` starts in the 2 s memcg stats flush cycle: the
/// time of its first periodic flush, in [0, FLUSH_TIME), a SplitMix64 of the seed (its own
/// stream: no other draw moves).
pub fn memcg_stats_flush_phase(seed: u64) -> u64 {
    let mut z = (seed ^ 0x6d65_6d63_675f_7374).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % FLUSH_TIME_PS
}

impl Sim {
    /// The parent of `m` unless that is the root (see `nonroot`).
    #[inline]
    fn parent_below_root(&self, m: MemcgId) -> Option<MemcgId> {
        self.memcgs[m as usize].parent.and_then(nonroot)
    }

    /// Number of memcgs (root included).
    #[inline]
    pub fn nr_memcgs(&self) -> usize {
        self.memcgs.len()
    }

    /// The index in `lruvecs` of `memcg`'s lruvec on `node`.
    #[inline]
    pub fn lruvec_idx(&self, memcg: MemcgId, node: usize) -> usize {
        memcg as usize * self.nodes.len() + node
    }

    /// mem_cgroup_lruvec: the lruvec of `memcg` on `node`.
    #[inline]
    pub fn lruvec(&self, memcg: MemcgId, node: usize) -> &Lruvec {
        &self.lruvecs[self.lruvec_idx(memcg, node)]
    }

    /// mem_cgroup_lruvec, mutable.
    #[inline]
    pub fn lruvec_mut(&mut self, memcg: MemcgId, node: usize) -> &mut Lruvec {
        let i = self.lruvec_idx(memcg, node);
        &mut self.lruvecs[i]
    }

    /// The index in `lruvecs` of the lruvec a page belongs to (folio_lruvec).
    #[inline]
    pub fn page_lruvec_idx(&self, pfn: Pfn) -> usize {
        let p = &self.mem[pfn as usize];
        let m = if p.memcg == NO_MEMCG {
            ROOT_MEM_CGROUP
        } else {
            p.memcg
        };
        m as usize * self.nodes.len() + p.node as usize
    }

    /// The memcgs of the subtree rooted at `m`, in pre-order (mem_cgroup_iter).
    #[inline]
    pub fn memcg_subtree(&self, m: MemcgId) -> std::ops::Range<MemcgId> {
        m..self.memcgs[m as usize].subtree_end
    }

    /// True if `m` is `ancestor` or below it (mem_cgroup_is_descendant).
    pub fn mem_cgroup_is_descendant(&self, m: MemcgId, ancestor: MemcgId) -> bool {
        self.memcg_subtree(ancestor).contains(&m)
    }

    /// The memcg of the running task (get_mem_cgroup_from_mm(current->mm)); the root for
    /// kernel threads and interrupts.
    #[inline]
    pub fn current_memcg(&self) -> MemcgId {
        match self.cur.task {
            Some(t) => self.tasks[t].memcg,
            None => ROOT_MEM_CGROUP,
        }
    }

    /// mem_cgroup_swappiness: vm.swappiness on cgroup v2 (no per-cgroup value) and for
    /// the root; on v1 the cgroup's memory.swappiness.
    #[inline]
    pub fn mem_cgroup_swappiness(&self, m: MemcgId) -> u64 {
        if !self.cgroup_v1 || m == ROOT_MEM_CGROUP || m == NO_MEMCG {
            return self.vm.swappiness;
        }
        self.memcgs[m as usize]
            .swappiness
            .unwrap_or(self.vm.swappiness)
    }

    /// LRU pages of `lru` in the lruvecs of `m`'s subtree on `node` (lruvec_page_state,
    /// hierarchical).
    pub fn lruvec_lru_size_hier(&self, m: MemcgId, node: usize, lru: LruList) -> u64 {
        self.memcg_subtree(m)
            .map(|c| self.lruvec(c, node).lru_size(lru))
            .sum()
    }

    /// The time of the run's first periodic memcg stats flush (`memcg-stats-ratelimited`;
    /// then every FLUSH_TIME).
    pub fn memcg_stats_flush_phase(&self) -> crate::machine::Ps {
        self.memcg_stats_flush_phase_ps
    }

    /// flush_memcg_stats_dwork (`memcg-stats-ratelimited`): the periodic rstat flush of the
    /// whole tree, every FLUSH_TIME (2 s) from a point of the cycle drawn from the scenario
    /// seed (`memcg_stats_flush_phase`: a workload starts at any point of a running
    /// machine's cycle), and of the starting state at the first action — deferrable, so it
    /// runs at the engine's first action at or after the due time. Each lruvec's `flushed`
    /// counters take the current hierarchical values; reclaim reads those until the next flush, since from v6.12 its
    /// own flushes are ratelimited (mem_cgroup_flush_stats_ratelimited flushes only when the
    /// periodic one is a full cycle late, which it never is here). The kworker's time is not
    /// charged.
    pub fn memcg_stats_flush(&mut self, now: crate::machine::Ps) {
        let phase = self.memcg_stats_flush_phase_ps;
        let k = if now < phase {
            0
        } else {
            (now - phase) / FLUSH_TIME_PS + 1
        };
        self.memcg_stats_next_flush_ps = phase + k * FLUSH_TIME_PS;
        for m in 0..self.memcgs.len() as MemcgId {
            self.memcg_stats_flush_one(m);
        }
    }

    /// A user's read of memory.stat (memory_stat_show → mem_cgroup_flush_stats): the
    /// cgroup's subtree is flushed (`memcg-stats-ratelimited`; its ancestors' aggregates
    /// wait for the next flush of their own). The kernel skips the flush when fewer than
    /// MEMCG_CHARGE_BATCH × CPUs updates are pending; a cgroup being read while it works
    /// has more, and mmsim does not count them.
    pub fn memcg_stats_flush_subtree(&mut self, m: MemcgId) {
        if !self.features.memcg_stats_ratelimited {
            return;
        }
        for c in self.memcg_subtree(m) {
            self.memcg_stats_flush_one(c);
        }
    }

    /// The flushed counters of `m`'s lruvecs take their current hierarchical values.
    fn memcg_stats_flush_one(&mut self, m: MemcgId) {
        let activate = self.workingset_activate_hier(m);
        for n in 0..self.nodes.len() {
            let lru = [0, 1, 2, 3].map(|i| self.lruvec_lru_size_hier(m, n, LruList::ALL[i]));
            let lru_local = self.lruvec(m, n).nr_lru_pages();
            let slab_local = self.lruvec_vfs_slab_pages(m, n);
            self.lruvec_mut(m, n).flushed = crate::mm::node::FlushedStats {
                lru,
                activate,
                lru_local,
                slab_local,
            };
        }
    }

    /// lruvec_page_state of an LRU size (from v5.5 the memcg's and its descendants'): the
    /// counters of the last flush under `memcg-stats-ratelimited`, else the current ones.
    pub fn lruvec_page_state_lru(&self, m: MemcgId, node: usize, lru: LruList) -> u64 {
        if self.features.memcg_stats_ratelimited {
            self.lruvec(m, node).flushed.lru[lru as usize]
        } else {
            self.lruvec_lru_size_hier(m, node, lru)
        }
    }

    /// memcg_memory_event: count an event in memory.events.
    pub fn memcg_memory_event(&mut self, m: MemcgId, ev: MemcgEvent) {
        let e = &mut self.memcgs[m as usize].events;
        match ev {
            MemcgEvent::Low => e.low += 1,
            MemcgEvent::High => e.high += 1,
            MemcgEvent::Max => e.max += 1,
            MemcgEvent::Oom => e.oom += 1,
            MemcgEvent::OomKill => e.oom_kill += 1,
            MemcgEvent::OomGroupKill => e.oom_group_kill += 1,
        }
    }

    /// count_memcg_events: a memory.stat event counter of `m`.
    #[inline]
    pub fn count_memcg_events(&mut self, m: MemcgId, item: VmItem, n: i64) {
        if m != NO_MEMCG {
            self.memcgs[m as usize].stat.add(item, n);
        }
    }

    /// count_memcg_page_event / mod_lruvec_page_state: a counter of the page's memcg.
    #[inline]
    pub fn count_memcg_page_event(&mut self, pfn: Pfn, item: VmItem, n: i64) {
        let m = self.mem[pfn as usize].memcg;
        self.count_memcg_events(m, item, n);
    }

    /// mod_lruvec_page_state of a counter only the cgroups' memory.stat shows
    /// (`file_mapped`, `shmem`): a run without `[[cgroups]]` reports no cgroup, so it
    /// skips the count.
    #[inline]
    pub fn mod_memcg_page_stat(&mut self, pfn: Pfn, item: VmItem, n: i64) {
        if self.memcgs.len() > 1 {
            self.count_memcg_page_event(pfn, item, n);
        }
    }

    /// mem_cgroup_margin: pages `m` can still charge before a limit of it or an ancestor.
    pub fn mem_cgroup_margin(&self, m: MemcgId) -> u64 {
        let mut margin = u64::MAX;
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            margin = margin.min(mc.max.saturating_sub(mc.usage));
            c = self.parent_below_root(id);
        }
        margin
    }

    /// mem_cgroup_get_nr_swap_pages: swap pages `m` may still use (its and its
    /// ancestors' memory.swap.max, and the free swap).
    pub fn mem_cgroup_get_nr_swap_pages(&self, m: MemcgId) -> u64 {
        let mut nr = self.swap_free_pages();
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            nr = nr.min(mc.swap_max.saturating_sub(mc.swap_usage));
            c = self.parent_below_root(id);
        }
        nr
    }

    /// Allocate a page and charge it to `memcg` (the allocation, then mem_cgroup_charge,
    /// as filemap_alloc_folio + filemap_add_folio and the fault paths do). A charge that
    /// fails frees the page again.
    pub fn alloc_page_charged(&mut self, gfp: Gfp, memcg: MemcgId) -> Result<Pfn, AllocError> {
        let pfn = self.alloc_page(gfp)?;
        if let Err(e) = self.mem_cgroup_charge(pfn, memcg, gfp) {
            self.put_page(pfn);
            return Err(e);
        }
        Ok(pfn)
    }

    /// [`Sim::alloc_page_charged`] of a kernel page (__GFP_ACCOUNT: a page table, a slab
    /// page): charged by [`Sim::memcg_kmem_charge_page`].
    pub(crate) fn alloc_kmem_page_charged(
        &mut self,
        gfp: Gfp,
        memcg: MemcgId,
    ) -> Result<Pfn, AllocError> {
        let pfn = self.alloc_page(gfp)?;
        if let Err(e) = self.memcg_kmem_charge_page(pfn, memcg, gfp) {
            self.put_page(pfn);
            return Err(e);
        }
        Ok(pfn)
    }

    /// mem_cgroup_charge from a reclaiming context (PF_MEMALLOC): try_charge_memcg never
    /// reclaims there and forces a charge past memory.max, with a `max` event.
    pub(crate) fn mem_cgroup_charge_memalloc(&mut self, pfn: Pfn, memcg: MemcgId) {
        debug_assert_eq!(self.mem[pfn as usize].memcg, NO_MEMCG, "page charged twice");
        if memcg != ROOT_MEM_CGROUP {
            let prev = self.enter(KFunc::MemCgroupCharge);
            if let Some(over) = self.mem_over_limit(memcg, 1) {
                self.memcgs[over as usize].failcnt += 1;
                self.memcg_memory_event(over, MemcgEvent::Max);
            }
            self.page_counter_charge(memcg, 1);
            self.leave(prev);
        }
        let root = &mut self.memcgs[ROOT_MEM_CGROUP as usize];
        root.usage += 1;
        root.peak = root.peak.max(root.usage);
        self.mem[pfn as usize].memcg = memcg;
        self.memcgs[memcg as usize].pgpgin += 1;
        self.memcg1_events(memcg, 1, pfn);
    }

    /// mem_cgroup_charge: charge a new page to `memcg` (try_charge + commit_charge), one
    /// v1 `pgpgin` event.
    pub fn mem_cgroup_charge(
        &mut self,
        pfn: Pfn,
        memcg: MemcgId,
        gfp: Gfp,
    ) -> Result<(), AllocError> {
        self.memcg_kmem_charge_page(pfn, memcg, gfp)?;
        self.memcgs[memcg as usize].pgpgin += 1;
        // memcg1_commit_charge: the events and the soft limit tree.
        self.memcg1_events(memcg, 1, pfn);
        Ok(())
    }

    /// __memcg_kmem_charge_page: charge a kernel page (a page table, a slab page) to
    /// `memcg` — the same counters as a user page's, no v1 `pgpgin` event. The frame's
    /// TABLE or SLAB flag, set by its user, stays on it until it is freed, so its
    /// uncharge counts no `pgpgout` either.
    pub(crate) fn memcg_kmem_charge_page(
        &mut self,
        pfn: Pfn,
        memcg: MemcgId,
        gfp: Gfp,
    ) -> Result<(), AllocError> {
        debug_assert_eq!(self.mem[pfn as usize].memcg, NO_MEMCG, "page charged twice");
        if memcg != ROOT_MEM_CGROUP {
            self.try_charge_in_profile(memcg, gfp, 1)?;
        }
        // commit_charge: the root's counter is free (the kernel does not count it).
        let root = &mut self.memcgs[ROOT_MEM_CGROUP as usize];
        root.usage += 1;
        root.peak = root.peak.max(root.usage);
        self.mem[pfn as usize].memcg = memcg;
        Ok(())
    }

    /// mem_cgroup_charge of a large folio (`frames`, head first): one try_charge_memcg of
    /// all its pages (reclaiming at least that many), then every frame committed.
    pub(crate) fn mem_cgroup_charge_folio(
        &mut self,
        frames: &[Pfn],
        memcg: MemcgId,
        gfp: Gfp,
    ) -> Result<(), AllocError> {
        let nr = frames.len() as u64;
        if memcg != ROOT_MEM_CGROUP {
            self.try_charge_in_profile(memcg, gfp, nr)?;
        }
        let root = &mut self.memcgs[ROOT_MEM_CGROUP as usize];
        root.usage += nr;
        root.peak = root.peak.max(root.usage);
        for &p in frames {
            debug_assert_eq!(self.mem[p as usize].memcg, NO_MEMCG, "page charged twice");
            self.mem[p as usize].memcg = memcg;
        }
        self.memcgs[memcg as usize].pgpgin += 1;
        self.memcg1_events(memcg, nr, frames[0]);
        Ok(())
    }

    /// The memcg of `m`'s ancestry (excluding the root) whose cgroup v1
    /// memory.memsw.limit_in_bytes `nr` more pages would exceed, if any: try_charge_memcg
    /// charges the memsw counter first, and a memcg it refuses is reclaimed without
    /// swapping (swapping moves a page's charge from memory to swap, not out of memsw).
    pub(crate) fn memsw_over_limit(&self, m: MemcgId, nr: u64) -> Option<MemcgId> {
        if !self.memsw_limited {
            return None;
        }
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            if mc.usage + mc.swap_usage + nr > mc.memsw_max {
                return Some(id);
            }
            c = self.parent_below_root(id);
        }
        None
    }

    /// The memcg of `m`'s ancestry (excluding the root) whose memory.max `nr` more pages
    /// would exceed (mem_over_limit), if any.
    pub(crate) fn mem_over_limit(&self, m: MemcgId, nr: u64) -> Option<MemcgId> {
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            if mc.usage + nr > mc.max {
                return Some(id);
            }
            c = self.parent_below_root(id);
        }
        None
    }

    /// page_counter_charge of `nr` pages up the ancestry (excluding the root), one atomic
    /// per level; usage above memory.high, or swap usage above memory.swap.high, queues the
    /// over-high work for the return to user space (try_charge's
    /// memcg_nr_pages_over_high += batch; the `high` events are counted when that work
    /// runs: reclaim_high's and swap_find_max_overage's).
    pub(crate) fn page_counter_charge(&mut self, m: MemcgId, nr: u64) {
        let mut c = nonroot(m);
        let mut over_high = false;
        let v1 = self.cgroup_v1;
        while let Some(id) = c {
            self.charge_atomic();
            let mc = &mut self.memcgs[id as usize];
            mc.usage += nr;
            mc.peak = mc.peak.max(mc.usage);
            if v1 {
                // The memsw counter's watermark (v1 memory.memsw.max_usage_in_bytes).
                mc.memsw_peak = mc.memsw_peak.max(mc.usage + mc.swap_usage);
            }
            over_high |= mc.usage > mc.high || mc.swap_usage > mc.swap_high;
            c = self.parent_below_root(id);
            if c.is_none() && v1 {
                // The root's counter, the parent of every top-level cgroup's.
                let root = &mut self.memcg_v1_root_counter;
                root.0 += nr;
                root.1 = root.1.max(root.0);
            }
        }
        if over_high {
            if let Some(t) = self.cur.task {
                self.tasks[t].memcg_nr_pages_over_high += nr;
            }
        }
    }

    /// page_counter_uncharge of `nr` pages up the ancestry (excluding the root).
    #[inline(always)]
    pub(crate) fn page_counter_uncharge(&mut self, m: MemcgId, nr: u64) {
        let mut c = nonroot(m);
        while let Some(id) = c {
            self.charge_atomic();
            let mc = &mut self.memcgs[id as usize];
            debug_assert!(mc.usage >= nr, "memcg {} usage underflow", mc.name);
            mc.usage -= nr;
            c = self.parent_below_root(id);
            if c.is_none() && self.cgroup_v1 {
                // The root's counter, the parent of every top-level cgroup's.
                let root = &mut self.memcg_v1_root_counter;
                debug_assert!(root.0 >= nr, "root counter underflow");
                root.0 -= nr;
            }
        }
    }

    /// MEMCG_CHARGE_BATCH of the era: 32 pages, 64 from v6.0.
    pub fn memcg_charge_batch(&self) -> u64 {
        if self.features.memcg_charge_batch_64 {
            64
        } else {
            32
        }
    }

    /// The slots of a CPU's stock in use in the era: NR_MEMCG_STOCK from v6.16, else 1.
    fn memcg_stock_slots(&self) -> usize {
        if self.features.memcg_multi_stock {
            NR_MEMCG_STOCK
        } else {
            1
        }
    }

    /// consume_stock: take one page of `memcg`'s charge from the running CPU's stock.
    fn consume_stock(&mut self, memcg: MemcgId) -> bool {
        self.charge(self.costs.plain_rmw_ps);
        let cpu = self.cur.cpu;
        let n = self.memcg_stock_slots();
        match self.memcg_stock[cpu].slots[..n]
            .iter_mut()
            .find(|(m, pages)| *m == memcg && *pages > 0)
        {
            Some(slot) => {
                slot.1 -= 1;
                true
            }
            None => false,
        }
    }

    /// drain_stock: give a slot's pages back to its memcg's counters and empty it.
    fn drain_stock(&mut self, cpu: usize, slot: usize) {
        let (m, pages) = std::mem::replace(&mut self.memcg_stock[cpu].slots[slot], (NO_MEMCG, 0));
        if m != NO_MEMCG && pages > 0 {
            self.page_counter_uncharge(m, pages);
        }
    }

    /// refill_stock: keep `nr` pages charged to `memcg` in the running CPU's stock. One
    /// slot: another memcg's stock is drained first. Several (v6.16): `memcg`'s slot, else
    /// the first empty one, else a random one drained. A slot above MEMCG_CHARGE_BATCH is
    /// drained.
    fn refill_stock(&mut self, memcg: MemcgId, nr: u64) {
        let cpu = self.cur.cpu;
        let n = self.memcg_stock_slots();
        let slots = &self.memcg_stock[cpu].slots[..n];
        let i = match slots.iter().position(|(m, _)| *m == memcg) {
            Some(i) => i,
            None => {
                let i = if n == 1 {
                    0
                } else if let Some(e) = slots.iter().position(|(m, _)| *m == NO_MEMCG) {
                    e
                } else {
                    rand::Rng::gen_range(&mut self.memcg_stock_rng, 0..n)
                };
                self.drain_stock(cpu, i);
                self.memcg_stock[cpu].slots[i].0 = memcg;
                i
            }
        };
        self.memcg_stock[cpu].slots[i].1 += nr;
        if self.memcg_stock[cpu].slots[i].1 > self.memcg_charge_batch() {
            self.drain_stock(cpu, i);
        }
    }

    /// drain_all_stock: drain the stock of every CPU that holds pages of `root`'s subtree
    /// (drain_local_stock empties the whole stock of such a CPU). The kernel drains the
    /// other CPUs' stocks from a work item on each (schedule_work_on); here they are
    /// drained at once. A charge's retries after the drain (reclaim passes, up to
    /// MAX_RECLAIM_RETRIES) take long enough in the kernel for those kworkers to run,
    /// while here the charge runs within one engine step, where a queued drain could not
    /// run before the charge gave up and called the OOM killer.
    fn drain_all_stock(&mut self, root: MemcgId) {
        let n = self.memcg_stock_slots();
        for cpu in 0..self.memcg_stock.len() {
            let holds = self.memcg_stock[cpu].slots[..n].iter().any(|&(m, pages)| {
                pages > 0 && m != NO_MEMCG && self.mem_cgroup_is_descendant(m, root)
            });
            if holds {
                for i in 0..n {
                    self.drain_stock(cpu, i);
                }
            }
        }
    }

    /// try_charge_memcg's end (v5.18, `memcg-sync-high`): more than a batch of over-high
    /// work queued runs now (mem_cgroup_handle_over_high), not on the return to user
    /// space; the throttling it decides is owed until then.
    fn sync_over_high(&mut self, gfp: Gfp) {
        if !self.features.memcg_sync_high || !gfp.direct_reclaim {
            return;
        }
        let Some(t) = self.cur.task else {
            return;
        };
        if self.tasks[t].memcg_nr_pages_over_high > self.memcg_charge_batch() {
            let delay = self.mem_cgroup_handle_over_high(t);
            self.tasks[t].memcg_high_delay_ps += delay;
        }
    }

    /// Pages of each memcg held in the CPUs' charge stocks (charged, not yet used).
    pub fn memcg_stock_pages(&self) -> Vec<u64> {
        let mut v = vec![0; self.memcgs.len()];
        for st in &self.memcg_stock {
            for &(m, pages) in &st.slots {
                if m != NO_MEMCG {
                    v[m as usize] += pages;
                }
            }
        }
        v
    }

    /// [`Sim::try_charge`] of `nr` pages, its time in the profile's mem_cgroup_charge.
    fn try_charge_in_profile(
        &mut self,
        memcg: MemcgId,
        gfp: Gfp,
        nr: u64,
    ) -> Result<(), AllocError> {
        let prev = self.enter(KFunc::MemCgroupCharge);
        let r = self.try_charge(memcg, gfp, nr);
        self.leave(prev);
        r
    }

    /// try_charge_memcg for `nr` pages (one, or a large folio's): from the CPU's stock if
    /// it holds them for `memcg` (a page: consume_stock); else the counters are charged a
    /// batch (max(MEMCG_CHARGE_BATCH, nr); the rest goes to the stock), or `nr` pages
    /// when a batch would pass memory.max; a charge that `nr` pages would take above
    /// memory.max reclaims (at least `nr` pages), drains the stocks of the memcg over its
    /// limit once, retries (a reclaim pass that freed pages uses up no retry) and finally
    /// calls the memcg OOM killer.
    fn try_charge(&mut self, memcg: MemcgId, gfp: Gfp, nr: u64) -> Result<(), AllocError> {
        let stock = self.features.memcg_charge_stock;
        if stock && nr == 1 && self.consume_stock(memcg) {
            return Ok(());
        }
        let mut batch = if stock {
            self.memcg_charge_batch().max(nr)
        } else {
            nr
        };
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        let mut progress_retries = MAX_PROGRESS_RETRIES;
        let mut drained = false;
        loop {
            // cgroup v1 with memory.memsw.limit_in_bytes: the memsw counter first; a memcg
            // over it is reclaimed without swap (MEMCG_RECLAIM_MAY_SWAP cleared).
            let (over, may_swap) = match self.memsw_over_limit(memcg, batch) {
                Some(over) => {
                    // page_counter_try_charge counts a failure only for a counter that
                    // tracks them: since 6.15 a v1 memcg's memory counter, not its memsw.
                    if !self.features.memsw_failcnt_untracked {
                        self.memcgs[over as usize].memsw_failcnt += 1;
                    }
                    (over, false)
                }
                None => {
                    let Some(over) = self.mem_over_limit(memcg, batch) else {
                        self.page_counter_charge(memcg, batch);
                        if batch > nr {
                            self.refill_stock(memcg, batch - nr);
                        }
                        self.sync_over_high(gfp);
                        return Ok(());
                    };
                    self.memcgs[over as usize].failcnt += 1;
                    (over, true)
                }
            };
            if batch > nr {
                // A whole batch does not fit: charge the pages asked for (the kernel's
                // batch = nr_pages; goto retry).
                batch = nr;
                continue;
            }
            // A charge that may not block fails without a `max` event (the event is
            // raised after try_charge_memcg's gfpflags_allow_blocking test).
            if !gfp.direct_reclaim {
                return Err(AllocError::NoMem);
            }
            self.memcg_memory_event(over, MemcgEvent::Max);
            // A task the OOM killer already chose gives up (task_is_dying).
            if self.cur.task.is_some_and(|t| self.tasks[t].oom_killed) {
                return Err(AllocError::NoMem);
            }
            let reclaimed = self.try_to_free_mem_cgroup_pages(over, nr, gfp, may_swap);
            // Legacy memcg reclaim waited inside the pass (a page's writeback, or
            // reclaim_throttle): the charging task sleeps, then retries the charge.
            if let Some(w) = self.take_memcg_reclaim_wait() {
                return Err(AllocError::Wait(w));
            }
            if std::mem::take(&mut self.reclaim_congested) {
                // reclaim_throttle(VMSCAN_THROTTLE_CONGESTED): every dirty page the limit
                // reclaim met was already under writeback; sleep a jiffy, then retry.
                // Inside try_to_free_mem_cgroup_pages: a memstall.
                return Err(AllocError::Wait(self.reclaim_throttle_congested()));
            }
            // mem_cgroup_margin(mem_over_limit): room in the counter that refused the
            // charge (a still-full ancestor refuses the retry and is reclaimed next).
            let own = &self.memcgs[over as usize];
            let memsw_margin = own.memsw_max.saturating_sub(own.usage + own.swap_usage);
            if own.max.saturating_sub(own.usage).min(memsw_margin) >= nr {
                continue;
            }
            if stock && !drained {
                // Pages charged to the subtree may sit unused in the CPUs' stocks.
                self.drain_all_stock(over);
                drained = true;
                continue;
            }
            if gfp.noretry {
                return Err(AllocError::NoMem);
            }
            // "Even though the limit is exceeded at this point, reclaim may have been able
            // to free some pages. Retry the charge before killing the task": a pass that
            // freed pages does not use up a retry. Here the whole charge runs within one
            // engine step, where no other task frees or charges meanwhile, so the
            // progress retries are bounded (MAX_PROGRESS_RETRIES) in case reclaim frees
            // pages it then allocates again.
            if reclaimed > 0 && progress_retries > 0 {
                progress_retries -= 1;
                continue;
            }
            if nr_retries > 0 {
                nr_retries -= 1;
                continue;
            }
            // Pages of the subtree are still under writeback (swap-out or file IO that
            // reclaim started): the kernel's retries overlap their completion, while here
            // a charge runs within one engine step, so wait for the IO before declaring
            // OOM (as the global allocator's should_reclaim_retry does).
            if self.memcg_subtree_writeback(over) > 0 {
                // Standing for reclaim retries: a memstall.
                self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
                return Err(AllocError::Wait(crate::sched::Wait::Until(
                    self.now() + crate::mm::vmscan::CONGESTION_WAIT_PS,
                )));
            }
            // Reclaim cannot make room: the memcg OOM killer — not for a charge of more
            // than PAGE_ALLOC_COSTLY_ORDER (mem_cgroup_oom's OOM_SKIPPED: a large folio
            // fails, and its caller tries a smaller one).
            if nr > 1 << PAGE_ALLOC_COSTLY_ORDER {
                return Err(AllocError::NoMem);
            }
            return match self.mem_cgroup_out_of_memory(over) {
                OomOutcome::Killed | OomOutcome::VictimPending => {
                    // The victim frees its memory when it exits; retry after it ran.
                    Err(AllocError::Wait(crate::sched::Wait::Until(
                        self.now() + JIFFY_PS,
                    )))
                }
                OomOutcome::KilledCurrent => Err(AllocError::NoMem),
                OomOutcome::NoVictim => {
                    // OOM_FAILED: the kernel forces the charge past the limit.
                    self.page_counter_charge(memcg, nr);
                    Ok(())
                }
            };
        }
    }

    /// obj_cgroup_charge of one slab object of `size` bytes (its obj_full_size) to `memcg`,
    /// done ahead for `sizes` (the objects one lookup allocates, in order) so that a charge
    /// that must wait is found done when the lookup restarts: an object the stock holds
    /// enough bytes for takes them (consume_obj_stock); otherwise one page is charged
    /// (obj_cgroup_charge_pages: try_charge_memcg with the object's gfp, which may reclaim
    /// the memcg) and what the object leaves of it joins the stock (refill_obj_stock).
    /// The root is not charged (it has no obj_cgroup). The bytes are taken by
    /// [`Sim::obj_cgroup_take`].
    pub(crate) fn obj_cgroup_precharge(
        &mut self,
        memcg: MemcgId,
        sizes: &[(u64, Gfp)],
    ) -> Result<(), AllocError> {
        if memcg == ROOT_MEM_CGROUP {
            return Ok(());
        }
        if self.memcgs[memcg as usize].obj_charging > 0 {
            // Inside the reclaim of another charge of this memcg's objects.
            self.memcgs[memcg as usize].obj_stock_nested = true;
        }
        // A debt of forced charges is paid first, with the first object's gfp.
        while self.memcgs[memcg as usize].obj_debt_bytes > 0 {
            let mc = &mut self.memcgs[memcg as usize];
            let pay = mc.obj_debt_bytes.min(mc.obj_stock_bytes);
            mc.obj_debt_bytes -= pay;
            mc.obj_stock_bytes -= pay;
            if mc.obj_debt_bytes == 0 {
                break;
            }
            let gfp = sizes.first().map_or(Gfp::KERNEL, |&(_, g)| g);
            self.obj_cgroup_charge_page(memcg, gfp)?;
        }
        let mut avail = self.memcgs[memcg as usize].obj_stock_bytes;
        for &(size, gfp) in sizes {
            debug_assert!(size < crate::mm::page::PAGE_SIZE);
            if avail < size {
                self.obj_cgroup_charge_page(memcg, gfp)?;
                avail += crate::mm::page::PAGE_SIZE;
            }
            avail -= size;
        }
        Ok(())
    }

    /// obj_cgroup_charge_pages of one page for `memcg`'s objects (try_charge_memcg, which
    /// may reclaim), then the page joins the byte stock.
    fn obj_cgroup_charge_page(&mut self, memcg: MemcgId, gfp: Gfp) -> Result<(), AllocError> {
        self.memcgs[memcg as usize].obj_charging += 1;
        let r = self.try_charge_in_profile(memcg, gfp, 1);
        let mc = &mut self.memcgs[memcg as usize];
        mc.obj_charging -= 1;
        r?;
        mc.obj_pages += 1;
        mc.obj_stock_bytes += crate::mm::page::PAGE_SIZE;
        Ok(())
    }

    /// obj_cgroup_charge of one object of `size` bytes that cannot fail or wait (its
    /// allocation is done: mmsim charges a page-cache tree node after the store): from the
    /// byte stock, else as a debt (`MemCgroup::obj_debt_bytes`) the next charge that may
    /// reclaim pays with pages — so memory.max holds, and memory.current and `kernel`
    /// lag by the debt (under a page per node) meanwhile; its bytes join the memcg's
    /// reclaimable slab.
    pub(crate) fn obj_cgroup_charge_forced(&mut self, memcg: MemcgId, size: u64) {
        debug_assert!(memcg != ROOT_MEM_CGROUP && size < crate::mm::page::PAGE_SIZE);
        let mc = &mut self.memcgs[memcg as usize];
        if mc.obj_stock_bytes < size {
            mc.obj_debt_bytes += size;
            mc.slab_bytes[0] += size;
            return;
        }
        self.obj_cgroup_take(memcg, size, true);
    }

    /// The bytes of one object [`Sim::obj_cgroup_precharge`] charged ahead: out of the
    /// stock into the memcg's slab bytes (`reclaimable`: NR_SLAB_RECLAIMABLE_B).
    pub(crate) fn obj_cgroup_take(&mut self, memcg: MemcgId, size: u64, reclaimable: bool) {
        if memcg == ROOT_MEM_CGROUP {
            return;
        }
        let mc = &mut self.memcgs[memcg as usize];
        debug_assert!(mc.obj_stock_bytes >= size, "object not charged ahead");
        mc.obj_stock_bytes -= size;
        mc.slab_bytes[usize::from(!reclaimable)] += size;
    }

    /// obj_cgroup_uncharge of a freed object of `size` bytes: its bytes back to the stock
    /// (refill_obj_stock with allow_uncharge); whole pages beyond one go back to the
    /// memcg's page stock (obj_cgroup_uncharge_pages → refill_stock) and the stock keeps
    /// the rest below a page.
    pub(crate) fn obj_cgroup_uncharge(&mut self, memcg: MemcgId, size: u64, reclaimable: bool) {
        if memcg == ROOT_MEM_CGROUP {
            return;
        }
        let page = crate::mm::page::PAGE_SIZE;
        let mc = &mut self.memcgs[memcg as usize];
        mc.slab_bytes[usize::from(!reclaimable)] -= size;
        // A debt is paid by the bytes freed first.
        let pay = size.min(mc.obj_debt_bytes);
        mc.obj_debt_bytes -= pay;
        mc.obj_stock_bytes += size - pay;
        // Under a page now (whatever a nested charge left).
        mc.obj_stock_nested = false;
        if mc.obj_stock_bytes > page {
            let nr = mc.obj_stock_bytes / page;
            mc.obj_stock_bytes %= page;
            mc.obj_pages -= nr;
            if self.features.memcg_charge_stock {
                self.refill_stock(memcg, nr);
            } else {
                self.page_counter_uncharge(memcg, nr);
            }
        }
    }

    /// mem_cgroup_uncharge: a freed page leaves its memcg's counters. `folio_tail`: a
    /// large folio's tail, uncharged with its head (one v1 `pgpgout` for the folio); a
    /// kernel page (TABLE, SLAB) counts no `pgpgout`.
    pub fn mem_cgroup_uncharge(&mut self, pfn: Pfn, folio_tail: bool) {
        let m = self.mem[pfn as usize].memcg;
        if m == NO_MEMCG {
            return;
        }
        let user = self.mem[pfn as usize].flags & (pg::TABLE | pg::SLAB) == 0;
        if !folio_tail && user {
            self.memcgs[m as usize].pgpgout += 1;
        }
        self.mem[pfn as usize].memcg = NO_MEMCG;
        self.memcgs[ROOT_MEM_CGROUP as usize].usage -= 1;
        self.page_counter_uncharge(m, 1);
        if user {
            // memcg1_uncharge_batch: each page of a folio counts an event (a kernel page's
            // uncharge, obj_cgroup_uncharge_pages, counts none).
            self.memcg1_events(m, 1, pfn);
        }
    }

    /// mem_cgroup_swap_full: whether a swap-cache page should give its slot back once it is
    /// in use again (do_swap_page, reclaim's activate_locked): vm_swap_full() in every era;
    /// from v4.5 (`memcg-swap-full`, "mm: free swap cache aggressively if memcg swap is
    /// full") also when the page's memcg or an ancestor below the root uses half of its
    /// memory.swap.max or (5.8) memory.swap.high.
    pub fn mem_cgroup_swap_full(&self, pfn: Pfn) -> bool {
        if self.vm_swap_full() {
            return true;
        }
        let m = self.mem[pfn as usize].memcg;
        if !self.features.memcg_swap_full || m == NO_MEMCG {
            return false;
        }
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            if mc.swap_usage * 2 >= mc.swap_high || mc.swap_usage * 2 >= mc.swap_max {
                return true;
            }
            c = self.parent_below_root(id);
        }
        false
    }

    /// mem_cgroup_try_charge_swap: charge a swap slot to the page's memcg; false if the
    /// memcg or an ancestor is at memory.swap.max — a swap.events `max` and `fail` of the
    /// page's memcg (and, in the report, its ancestors).
    pub fn mem_cgroup_try_charge_swap(&mut self, pfn: Pfn, off: u32) -> bool {
        let m = self.mem[pfn as usize].memcg;
        if m == NO_MEMCG || self.cgroup_v1 {
            // cgroup v1 (do_memsw_account): the slot is charged at the swap-out,
            // `Sim::mem_cgroup_swapout`.
            return true;
        }
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            if mc.swap_usage + 1 > mc.swap_max {
                let e = &mut self.memcgs[m as usize].swap_events;
                e.max += 1;
                e.fail += 1;
                return false;
            }
            c = self.parent_below_root(id);
        }
        self.swap_counter_charge(m);
        if let Some(slot) = self.swap_cgroup.get_mut(off as usize) {
            *slot = m;
        }
        true
    }

    /// __mem_cgroup_try_charge_swap without a slot (folio_alloc_swap calls it even when
    /// the allocation failed): a swap.events `fail` of the page's memcg, not the root's.
    pub fn mem_cgroup_swap_fail(&mut self, pfn: Pfn) {
        let m = self.mem[pfn as usize].memcg;
        if m != NO_MEMCG && m != ROOT_MEM_CGROUP {
            self.memcgs[m as usize].swap_events.fail += 1;
        }
    }

    /// mem_cgroup_swapout (cgroup v1: do_memsw_account): the swap-cache page `pfn` of slot
    /// `off` leaves memory; the slot takes over its memsw charge (recorded in swap_cgroup,
    /// counted in MEMCG_SWAP up the hierarchy) and the page's memory charge goes when it is
    /// freed. Called before the page leaves the swap cache.
    pub(crate) fn mem_cgroup_swapout(&mut self, pfn: Pfn, off: u32) {
        let m = self.mem[pfn as usize].memcg;
        if !self.cgroup_v1 || m == NO_MEMCG {
            return;
        }
        let Some(slot) = self.swap_cgroup.get_mut(off as usize) else {
            return;
        };
        if *slot != NO_MEMCG {
            return; // still charged from an earlier swap-out
        }
        *slot = m;
        self.swap_counter_charge(m);
        // memcg1_swapout's pgpgout and event (the page's memory charge moves to the slot
        // here in the kernel) are counted when reclaim frees the page, by its uncharge.
    }

    /// One swap slot charged to `m`'s swap counter (v1: memsw's swap part) up the
    /// hierarchy, below the root.
    fn swap_counter_charge(&mut self, m: MemcgId) {
        let mut c = nonroot(m);
        while let Some(id) = c {
            let mc = &mut self.memcgs[id as usize];
            mc.swap_usage += 1;
            mc.swap_peak = mc.swap_peak.max(mc.swap_usage);
            c = self.parent_below_root(id);
        }
    }

    /// mem_cgroup_swapin_uncharge_swap (cgroup v1): a page charged for a swap-in of slot
    /// `off` took over the slot's memsw charge, which goes now rather than when the slot
    /// is freed (the slot may stay allocated in the swap cache for long).
    pub(crate) fn mem_cgroup_swapin_uncharge_swap(&mut self, off: u32) {
        if self.cgroup_v1 {
            self.mem_cgroup_uncharge_swap(off);
        }
    }

    /// mem_cgroup_uncharge_swap: a swap slot is freed.
    pub fn mem_cgroup_uncharge_swap(&mut self, off: u32) {
        let Some(slot) = self.swap_cgroup.get_mut(off as usize) else {
            return;
        };
        let m = std::mem::replace(slot, NO_MEMCG);
        if m == NO_MEMCG {
            return;
        }
        let mut c = nonroot(m);
        while let Some(id) = c {
            self.memcgs[id as usize].swap_usage -= 1;
            c = self.parent_below_root(id);
        }
    }

    /// The memcg a swap-in of slot `off` is charged to: the one recorded at swap-out
    /// (lookup_swap_cgroup_id), else the running task's.
    pub fn swapin_memcg(&self, off: u32) -> MemcgId {
        match self.swap_cgroup.get(off as usize) {
            Some(&m) if m != NO_MEMCG => m,
            _ => self.current_memcg(),
        }
    }

    /// mem_cgroup_calculate_protection for every memcg below `root` (the reclaim target):
    /// effective memory.min and memory.low, top-down. The target's own values are left as
    /// they were (page_counter_calculate_protection returns for the root: a target's are
    /// ignored while it is the target, and stay stale for the next reclaim that reads them).
    pub fn mem_cgroup_calculate_protection(&mut self, root: MemcgId) {
        let range = self.memcg_subtree(root);
        for m in range.start + 1..range.end {
            let parent = self.memcgs[m as usize].parent.expect("non-root memcg");
            let (usage, min, low) = {
                let mc = &self.memcgs[m as usize];
                (mc.usage, mc.min, mc.low)
            };
            let (emin, elow) = if parent == root {
                (min, low)
            } else {
                let p = &self.memcgs[parent as usize];
                // children_min_usage / children_low_usage: the siblings' claims.
                let (mut cmin, mut clow) = (0u64, 0u64);
                let mut c = parent + 1;
                while c < p.subtree_end {
                    let ch = &self.memcgs[c as usize];
                    cmin += ch.usage.min(ch.min);
                    clow += ch.usage.min(ch.low);
                    c = ch.subtree_end;
                }
                (
                    effective_protection(usage, min, p.emin, cmin),
                    effective_protection(usage, low, p.elow, clow),
                )
            };
            let mc = &mut self.memcgs[m as usize];
            mc.emin = emin;
            mc.elow = elow;
        }
    }

    /// mem_cgroup_below_min: `m` is fully protected by memory.min from reclaim of `target`.
    pub fn mem_cgroup_below_min(&self, target: MemcgId, m: MemcgId) -> bool {
        if m == target || m == ROOT_MEM_CGROUP {
            return false;
        }
        let mc = &self.memcgs[m as usize];
        mc.emin >= mc.usage
    }

    /// mem_cgroup_below_low: `m` is within its effective memory.low.
    pub fn mem_cgroup_below_low(&self, target: MemcgId, m: MemcgId) -> bool {
        if m == target || m == ROOT_MEM_CGROUP {
            return false;
        }
        let mc = &self.memcgs[m as usize];
        mc.elow >= mc.usage
    }

    /// mem_cgroup_protection: (effective min, effective low) of `m` under reclaim of
    /// `target`.
    pub fn mem_cgroup_protection(&self, target: MemcgId, m: MemcgId) -> (u64, u64) {
        if m == target || m == ROOT_MEM_CGROUP {
            return (0, 0);
        }
        let mc = &self.memcgs[m as usize];
        (mc.emin, mc.elow)
    }

    /// The memcg at path `name` below the root (`[[cgroups]]` name; "/" is the root).
    pub fn memcg_by_name(&self, name: &str) -> Option<MemcgId> {
        if name == "/" {
            return Some(ROOT_MEM_CGROUP);
        }
        self.memcgs
            .iter()
            .position(|m| *m.name == *name)
            .map(|m| m as MemcgId)
    }

    /// Pages of `memcg` and its descendants under writeback (their memory.stat
    /// file_writeback, swap-outs included).
    fn memcg_subtree_writeback(&self, memcg: MemcgId) -> i64 {
        self.memcg_subtree(memcg)
            .map(|c| self.memcgs[c as usize].stat.get(VmItem::NrWriteback))
            .sum()
    }

    /// memory_reclaim: a write of `bytes` to the memory.reclaim file of `cgroup` (cgroup v2,
    /// v5.19, "memcg: introduce per-memcg reclaim interface"): proactive reclaim from the
    /// cgroup and its descendants, swap allowed, until that much is reclaimed. Each round
    /// asks try_to_free_mem_cgroup_pages for all that is left, which overreclaims (each
    /// shrink_lruvec of the priority loop compares its own progress with the whole
    /// target); from v6.9 (`memcg-reclaim-batches`) for a quarter of it (either way at
    /// least SWAP_CLUSTER_MAX; 6.3–6.8's batches of SWAP_CLUSTER_MAX are not modelled). A
    /// round that reclaims nothing uses up one of MAX_RECLAIM_RETRIES retries, and the
    /// last round first drains the per-CPU LRU batches (lru_add_drain_all). Out of
    /// retries: EAGAIN. Before 5.19 (eras before 6.1) the file does not exist: ENOENT. The
    /// pages count as the memcg's proactive reclaim (pgscan_proactive, pgsteal_proactive;
    /// v6.15, `proactive-reclaim-stats`), before as its direct reclaim (the global counters
    /// count global reclaim only). `swappiness` is the write's `swappiness=N` (v6.11,
    /// `memory-reclaim-swappiness`: the anon/file balance of this reclaim, 0 = file only in
    /// a non-root cgroup); before, or above 200, the write is EINVAL, except
    /// SWAPPINESS_ANON_ONLY, `swappiness=max`: anonymous pages only (v6.16,
    /// `memory-reclaim-swappiness-max`).
    pub fn memory_reclaim(
        &mut self,
        cgroup: &str,
        bytes: u64,
        swappiness: Option<u64>,
        progress: &mut u64,
    ) -> Result<crate::workload::OpResult, crate::sched::Wait> {
        use crate::workload::{Errno, OpResult};
        // memory.reclaim: cgroup v2's, from 5.19 ("mm: memcontrol: introduce
        // memory.reclaim").
        if self.features.era < crate::kernel::KernelEra::new(5, 19) || self.cgroup_v1 {
            return Ok(OpResult::Err(Errno::ENOENT));
        }
        let known = |s: u64| {
            s <= crate::mm::lru_gen::MAX_SWAPPINESS
                || (s == crate::mm::vmscan::SWAPPINESS_ANON_ONLY
                    && self.features.memory_reclaim_swappiness_max)
        };
        if swappiness.is_some_and(|s| !self.features.memory_reclaim_swappiness || !known(s)) {
            return Ok(OpResult::Err(Errno::EINVAL));
        }
        let Some(memcg) = self.memcg_by_name(cgroup) else {
            return Ok(OpResult::Err(Errno::ENOENT));
        };
        let prev = self.enter(KFunc::MemoryReclaim);
        let nr_to_reclaim = bytes.div_ceil(crate::mm::page::PAGE_SIZE);
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        // Pages reclaimed before the write slept (resumed).
        let mut nr_reclaimed = *progress;
        let mut result = Ok(OpResult::Bytes(bytes));
        while nr_reclaimed < nr_to_reclaim {
            let left = nr_to_reclaim - nr_reclaimed;
            let batch = if self.features.memcg_reclaim_batches {
                left / 4
            } else {
                left
            };
            if nr_retries == 0 {
                self.lru_add_drain_all();
            }
            let reclaimed = self.try_to_free_mem_cgroup_pages_swappiness(
                memcg,
                batch,
                crate::mm::page_alloc::Gfp::KERNEL,
                true,
                swappiness,
                true,
            );
            nr_reclaimed += reclaimed;
            if std::mem::take(&mut self.reclaim_congested) {
                // reclaim_throttle(VMSCAN_THROTTLE_CONGESTED), as in try_charge.
                result = Err(self.reclaim_throttle_congested());
                break;
            }
            if reclaimed == 0 {
                if nr_retries == 0 {
                    // The kernel's rounds take long enough for the swap-outs and writes
                    // they started to complete; here the write runs within one engine
                    // step, so it waits for the subtree's writeback before giving up (as
                    // try_charge does before the OOM killer), then starts its rounds
                    // again.
                    result = if self.memcg_subtree_writeback(memcg) > 0 {
                        self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
                        Err(crate::sched::Wait::Until(
                            self.now() + crate::mm::vmscan::CONGESTION_WAIT_PS,
                        ))
                    } else {
                        Ok(OpResult::Err(Errno::EAGAIN))
                    };
                    break;
                }
                nr_retries -= 1;
            }
        }
        *progress = nr_reclaimed;
        self.leave(prev);
        result
    }

    /// memory_high_write: `bytes` (None: max) becomes `cgroup`'s memory.high, in whole
    /// pages; then, while usage is above it, the per-CPU stocks are drained once and the
    /// cgroup is reclaimed down to it (try_to_free_mem_cgroup_pages, swap allowed) until a
    /// pass reclaims nothing MAX_RECLAIM_RETRIES times, and the subtree's writeback is done
    /// (`wait_for_limit_writeback`: the write waits for it, then starts its passes again).
    /// The root has no memory.high: ENOENT, as for an unknown cgroup.
    pub fn memory_high_write(
        &mut self,
        cgroup: &str,
        bytes: Option<u64>,
    ) -> Result<crate::workload::OpResult, crate::sched::Wait> {
        use crate::workload::{Errno, OpResult};
        let Some(m) = self.memcg_by_name(cgroup).and_then(nonroot) else {
            return Ok(OpResult::Err(Errno::ENOENT));
        };
        if self.cgroup_v1 {
            return Ok(OpResult::Err(Errno::ENOENT)); // no memory.high on cgroup v1
        }
        let prev = self.enter(KFunc::MemoryHighWrite);
        let high = bytes.map_or(PAGE_COUNTER_MAX, |b| b / crate::mm::page::PAGE_SIZE);
        self.memcgs[m as usize].high = high;
        // `if (!reclaimed && !nr_retries--) break;`: MAX_RECLAIM_RETRIES + 1 passes.
        let r = self.reclaim_to_limit(m, high, MAX_RECLAIM_RETRIES + 1);
        self.leave(prev);
        r?;
        Ok(OpResult::Bytes(bytes.unwrap_or(0)))
    }

    /// reclaim_throttle(pgdat, VMSCAN_THROTTLE_CONGESTED) of direct or limit reclaim
    /// (v5.16): the reclaiming task sleeps a jiffy inside reclaim (a memory stall), then
    /// retries.
    pub(crate) fn reclaim_throttle_congested(&mut self) -> Wait {
        self.tracepoints.mm_vmscan_throttled.congested += 1;
        self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
        Wait::Until(self.now() + JIFFY_PS)
    }

    /// The sleep legacy memcg reclaim ended its pass at (`Sim::memcg_reclaim_wait`), as
    /// the running task's wait (a memory stall): a page's writeback, or reclaim_throttle.
    /// None without a task (the wait is dropped) or when the pass ran to its end.
    pub(crate) fn take_memcg_reclaim_wait(&mut self) -> Option<Wait> {
        let wait = match (self.memcg_reclaim_wait.take(), self.cur.task) {
            (Some(ReclaimWait::Writeback(pfn)), Some(_)) => Some(Wait::PageWriteback(pfn)),
            (Some(ReclaimWait::Throttle(node)), Some(tid)) => {
                Some(self.reclaim_throttle(tid, node))
            }
            _ => None,
        };
        if wait.is_some() {
            self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
        }
        wait
    }

    /// The reclaim loop of a limit write (memory_high_write, memory_max_write): while
    /// `m`'s usage is above `limit`, drain the CPUs' stocks once, then reclaim down to it
    /// (try_to_free_mem_cgroup_pages, swap allowed) until `passes` passes have reclaimed
    /// nothing, then wait for the subtree's writeback (`wait_for_limit_writeback`).
    /// Ok(true): the usage is within the limit; Ok(false): out of passes.
    fn reclaim_to_limit(
        &mut self,
        m: MemcgId,
        limit: u64,
        mut passes: u32,
    ) -> Result<bool, crate::sched::Wait> {
        let mut drained = false;
        loop {
            let usage = self.memcgs[m as usize].usage;
            if usage <= limit {
                return Ok(true);
            }
            if !drained && self.features.memcg_charge_stock {
                self.drain_all_stock(m);
                drained = true;
                continue;
            }
            if passes == 0 {
                return match self.wait_for_limit_writeback(m) {
                    Some(w) => Err(w),
                    None => Ok(false),
                };
            }
            let reclaimed = self.try_to_free_mem_cgroup_pages(m, usage - limit, Gfp::KERNEL, true);
            // The kernel's legacy reclaim sleeps inside its pass: the writer sleeps there,
            // and is resumed with its passes.
            if let Some(w) = self.take_memcg_reclaim_wait() {
                return Err(w);
            }
            if std::mem::take(&mut self.reclaim_congested) {
                // reclaim_throttle(VMSCAN_THROTTLE_CONGESTED), as in try_charge.
                return Err(self.reclaim_throttle_congested());
            }
            if reclaimed == 0 {
                passes -= 1;
            }
        }
    }

    /// A limit write out of reclaim passes: the kernel's passes take long enough for the
    /// swap-outs and writes they started to complete; here the write runs within one step,
    /// so while the subtree of `m` has pages under writeback it waits for them (a memory
    /// stall) and is resumed, starting its passes again (as memory_reclaim does).
    fn wait_for_limit_writeback(&mut self, m: MemcgId) -> Option<crate::sched::Wait> {
        if self.memcg_subtree_writeback(m) == 0 {
            return None;
        }
        self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
        Some(crate::sched::Wait::Until(
            self.now() + crate::mm::vmscan::CONGESTION_WAIT_PS,
        ))
    }

    /// `Op::CgroupWrite`: a write of `bytes` (None: "max", PAGE_COUNTER_MAX) to one of
    /// `cgroup`'s limit files, in whole pages. memory.high: `memory_high_write`.
    /// memory.max: `memory_max_write`. memory.swap.max and memory.swap.high take the new
    /// limit and reclaim nothing (swap_max_write, swap_high_write); memory.swap.high exists
    /// from 5.8 (`scenario::SWAP_HIGH_SINCE`: ENOENT before). The root has none of these
    /// files: ENOENT, as for an unknown cgroup.
    pub fn cgroup_write(
        &mut self,
        cgroup: &str,
        file: crate::workload::CgroupFile,
        bytes: Option<u64>,
    ) -> Result<crate::workload::OpResult, crate::sched::Wait> {
        use crate::workload::{CgroupFile, Errno, OpResult};
        let Some(m) = self.memcg_by_name(cgroup).and_then(nonroot) else {
            return Ok(OpResult::Err(Errno::ENOENT));
        };
        if self.cgroup_v1 && file != CgroupFile::MemoryMax {
            // cgroup v1 has memory.limit_in_bytes (memory.max here) and none of the others.
            return Ok(OpResult::Err(Errno::ENOENT));
        }
        let pages = bytes.map_or(PAGE_COUNTER_MAX, |b| b / crate::mm::page::PAGE_SIZE);
        match file {
            CgroupFile::MemoryHigh => return self.memory_high_write(cgroup, bytes),
            CgroupFile::MemoryMax => self.memory_max_write(m, pages)?,
            CgroupFile::SwapMax => {
                let mc = &mut self.memcgs[m as usize];
                mc.swap_max = pages;
                mc.swap_max_ceiling = if mc.swap_usage > pages {
                    mc.swap_usage
                } else {
                    0
                };
            }
            CgroupFile::SwapHigh => {
                if self.features.era < crate::scenario::SWAP_HIGH_SINCE {
                    return Ok(OpResult::Err(Errno::ENOENT));
                }
                self.memcgs[m as usize].swap_high = pages;
            }
            CgroupFile::OomGroup => {
                // memory_oom_group_write: 0 or 1 (the program checked the value).
                if self.features.era < crate::scenario::OOM_GROUP_SINCE {
                    return Ok(OpResult::Err(Errno::ENOENT));
                }
                self.memcgs[m as usize].oom_group = bytes == Some(1);
            }
            CgroupFile::ZswapMax => {
                // zswap_max_write: the limit only; stores over it are rejected from now.
                if self.features.era < crate::scenario::ZSWAP_MAX_SINCE {
                    return Ok(OpResult::Err(Errno::ENOENT));
                }
                self.memcgs[m as usize].zswap_max = pages;
            }
            CgroupFile::ZswapWriteback => {
                // zswap_writeback_write: 0 or 1.
                if self.features.era < crate::scenario::ZSWAP_WRITEBACK_SINCE {
                    return Ok(OpResult::Err(Errno::ENOENT));
                }
                self.memcgs[m as usize].zswap_writeback = bytes == Some(1);
            }
        }
        Ok(OpResult::Bytes(bytes.unwrap_or(0)))
    }

    /// memory_max_write: `max` pages become `m`'s memory.max; then, while usage is above
    /// it, the per-CPU stocks are drained once and the cgroup is reclaimed down to it
    /// (try_to_free_mem_cgroup_pages, swap allowed) until MAX_RECLAIM_RETRIES passes
    /// reclaimed nothing (and the subtree's writeback, which the kernel's passes outlast, is
    /// done: the write waits for it and starts again); then a MEMCG_OOM event and the
    /// memcg OOM killer. The writer waits
    /// a jiffy for the victim to exit and goes on (the kernel's loop spins until the
    /// victim's memory is freed); with nothing left to kill the write returns, usage still
    /// above the new max (charges then fail or OOM-kill at the limit).
    fn memory_max_write(&mut self, m: MemcgId, max: u64) -> Result<(), crate::sched::Wait> {
        let prev = self.enter(KFunc::MemoryMaxWrite);
        self.memcgs[m as usize].max = max;
        let r = match self.reclaim_to_limit(m, max, MAX_RECLAIM_RETRIES) {
            Ok(true) => Ok(()),
            Err(w) => Err(w),
            Ok(false) => match self.mem_cgroup_out_of_memory(m) {
                OomOutcome::NoVictim => Ok(()),
                // The victim frees its memory when it exits; the write is resumed then
                // (a killed writer exits at its next step).
                _ => Err(crate::sched::Wait::Until(self.now() + JIFFY_PS)),
            },
        };
        self.leave(prev);
        r
    }

    /// The reads of `Op::ReadCgroup`: memory.current, memory.stat's file and anon,
    /// memory.min, memory.max and memory.pressure of `cgroup` now (reading changes
    /// nothing: PSI is read as a copy, `crate::psi::Psi::read`). ENOENT for an unknown
    /// cgroup, and before PSI (4.20: the eras before 6.1).
    pub fn read_cgroup(&self, cgroup: &str) -> crate::workload::OpResult {
        use crate::mm::node::LruList;
        use crate::workload::{CgroupRead, Errno, OpResult};
        let Some(m) = self.memcg_by_name(cgroup) else {
            return OpResult::Err(Errno::ENOENT);
        };
        if !self.psi.enabled {
            return OpResult::Err(Errno::ENOENT);
        }
        let page = crate::mm::page::PAGE_SIZE;
        let lru = |l: LruList| -> u64 {
            (0..self.nodes.len())
                .map(|n| self.lruvec_lru_size_hier(m, n, l))
                .sum::<u64>()
                * page
        };
        let mc = &self.memcgs[m as usize];
        let pressure = self.psi.read(self.now());
        OpResult::Cgroup(Box::new(CgroupRead {
            current: mc.usage * page,
            file: lru(LruList::InactiveFile) + lru(LruList::ActiveFile),
            anon: lru(LruList::InactiveAnon) + lru(LruList::ActiveAnon),
            swappable: self.swap.is_some() && mc.swap_max > 0,
            min: mc.min * page,
            max: limit_bytes(mc.max),
            memory_some_us: pressure
                .get(m as usize)
                .map_or(0, |p| p.memory.some.total_us),
        }))
    }

    /// mem_cgroup_handle_over_high: on the return to user space after charges that left
    /// a memcg above memory.high, reclaim the excess (reclaim_high) and, while usage stays
    /// above high, throttle (v5.4 and v5.8, `memcg-high-throttle`: retried while reclaim
    /// makes progress or retries are left; before, one reclaim pass and no sleep). Returns
    /// how long the task must sleep, ps (0: none).
    pub fn mem_cgroup_handle_over_high(&mut self, tid: crate::sched::TaskId) -> u64 {
        let nr_pages = std::mem::take(&mut self.tasks[tid].memcg_nr_pages_over_high);
        if nr_pages == 0 {
            return 0;
        }
        let memcg = self.tasks[tid].memcg;
        let prev = self.enter(KFunc::MemCgroupHandleOverHigh);
        if !self.features.memcg_high_throttle {
            let (_, throttled) = self.reclaim_high(memcg, nr_pages);
            self.leave(prev);
            return throttled;
        }
        let batch = self.memcg_charge_batch();
        let mut nr_retries = MAX_RECLAIM_RETRIES;
        let mut in_retry = false;
        let mut throttled = 0;
        let penalty = loop {
            let want = if in_retry {
                crate::mm::vmscan::SWAP_CLUSTER_MAX
            } else {
                nr_pages
            };
            let (nr_reclaimed, slept) = self.reclaim_high(memcg, want);
            throttled += slept;
            let swap_overage = self.swap_find_max_overage(memcg);
            let penalty = (calculate_high_delay(self.mem_find_max_overage(memcg), nr_pages, batch)
                + calculate_high_delay(swap_overage, nr_pages, batch))
            .min(MEMCG_MAX_HIGH_DELAY_JIFFIES);
            // Not worth sleeping for less than HZ/100.
            if penalty <= 1000 / 100 {
                break 0;
            }
            // Reclaim making progress is better than throttling (`nr_reclaimed ||
            // nr_retries--`: a pass that reclaimed costs no retry).
            if nr_reclaimed > 0 || nr_retries > 0 {
                if nr_reclaimed == 0 {
                    nr_retries -= 1;
                }
                in_retry = true;
                continue;
            }
            break penalty;
        };
        self.leave(prev);
        penalty * JIFFY_PS + throttled
    }

    /// reclaim_high: reclaim `nr_pages` from every memcg of the ancestry above its high.
    /// Returns the pages reclaimed and how long its reclaim_throttle(VMSCAN_THROTTLE_
    /// CONGESTED) sleeps add to the task's sleep on the way back to user space, ps.
    fn reclaim_high(&mut self, memcg: MemcgId, nr_pages: u64) -> (u64, u64) {
        let mut reclaimed = 0;
        let mut throttled = 0;
        let mut c = nonroot(memcg);
        while let Some(id) = c {
            if self.memcgs[id as usize].usage > self.memcgs[id as usize].high {
                self.memcg_memory_event(id, MemcgEvent::High);
                reclaimed += self.try_to_free_mem_cgroup_pages(id, nr_pages, Gfp::KERNEL, true);
                if std::mem::take(&mut self.reclaim_congested) {
                    self.tracepoints.mm_vmscan_throttled.congested += 1;
                    throttled += JIFFY_PS;
                }
            }
            c = self.parent_below_root(id);
        }
        (reclaimed, throttled)
    }

    /// mem_find_max_overage: the largest memory.high overage of the ancestry.
    fn mem_find_max_overage(&self, memcg: MemcgId) -> u64 {
        let mut max = 0;
        let mut c = nonroot(memcg);
        while let Some(id) = c {
            let mc = &self.memcgs[id as usize];
            max = max.max(calculate_overage(mc.usage, mc.high));
            c = self.parent_below_root(id);
        }
        max
    }

    /// swap_find_max_overage: the largest memory.swap.high overage of the ancestry; each
    /// memcg over its swap.high counts a memory.swap.events `high`.
    fn swap_find_max_overage(&mut self, memcg: MemcgId) -> u64 {
        let mut max = 0;
        let mut c = nonroot(memcg);
        while let Some(id) = c {
            let mc = &mut self.memcgs[id as usize];
            let overage = calculate_overage(mc.swap_usage, mc.swap_high);
            if overage > 0 {
                mc.swap_events.high += 1;
            }
            max = max.max(overage);
            c = self.parent_below_root(id);
        }
        max
    }

    /// mem_cgroup_out_of_memory: the memcg OOM killer. Picks the task of `memcg`'s subtree
    /// with the most points (oom_badness over mem_cgroup_get_max; a task that never mapped
    /// memory has a footprint of 0 and can still be chosen), kills it (with its
    /// memory.oom.group, `mm/oom_kill.rs`), counts `oom` on `memcg` and `oom_kill` on each
    /// victim's memcg.
    pub fn mem_cgroup_out_of_memory(&mut self, memcg: MemcgId) -> OomOutcome {
        let prev = self.enter(KFunc::OomKill);
        let now = self.now();
        self.memcg_memory_event(memcg, MemcgEvent::Oom);
        let in_subtree = |s: &Sim, t: &crate::sched::Task| {
            !t.is_kthread()
                && t.state != crate::sched::TaskState::Exited
                && s.mem_cgroup_is_descendant(t.memcg, memcg)
        };
        if self
            .tasks
            .iter()
            .any(|t| in_subtree(self, t) && t.oom_killed)
        {
            self.leave(prev);
            return OomOutcome::VictimPending;
        }
        let totalpages = self.mem_cgroup_get_max(memcg);
        let victim = self.select_bad_process(totalpages, true, |s, t| {
            in_subtree(s, t).then(|| s.oom_footprint(t).unwrap_or(0))
        });
        let who = self
            .cur
            .task
            .map(|t| self.tasks[t].name.clone())
            .unwrap_or_default();
        let outcome = match victim {
            Some(v) => {
                let kill = self.oom_kill_process(v.task, memcg);
                let line = format!(
                    "t={} ns: memory cgroup out of memory in {} (cgroup {}: usage {} pages, max {}): {}",
                    now / 1000,
                    who,
                    self.memcgs[memcg as usize].name,
                    self.memcgs[memcg as usize].usage,
                    self.memcgs[memcg as usize].max,
                    self.oom_kill_words(&v, &kill)
                );
                if self.oom_reports.len() < 100 {
                    self.oom_reports.push(line);
                }
                if self.cur.task.is_some_and(|t| self.tasks[t].oom_killed) {
                    OomOutcome::KilledCurrent
                } else {
                    OomOutcome::Killed
                }
            }
            None => OomOutcome::NoVictim,
        };
        self.leave(prev);
        outcome
    }

    /// Pages charged directly to each memcg, counted from mem_map (for the checker).
    pub fn memcg_local_pages(&self) -> Vec<u64> {
        let mut v = vec![0u64; self.memcgs.len()];
        for p in &self.mem {
            if p.memcg != NO_MEMCG {
                v[p.memcg as usize] += 1;
            }
        }
        v
    }
}

/// What the memcg OOM killer did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OomOutcome {
    /// A task other than the charging one was killed.
    Killed,
    /// The charging task itself was killed.
    KilledCurrent,
    /// A victim chosen earlier has not exited yet.
    VictimPending,
    /// No task to kill.
    NoVictim,
}
