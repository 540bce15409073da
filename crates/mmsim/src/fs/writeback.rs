//! Dirty pages and writeback (mm/page-writeback.c, fs/fs-writeback.c, mm/filemap.c).
//!
//! - set_page_dirty: on a dirty-accounted mapping (blockfs) the first dirtying accounts the
//!   page (nr_dirty, nr_dirtied) and puts the inode on its device's b_dirty list; tmpfs
//!   (shmem) only sets PG_dirty.
//! - The dirty limits: dirtyable memory = free pages less the zones' reserve + file LRU
//!   pages (+ 1; each era's form: `dirtyable_memory`); background threshold = 10 %, dirty
//!   threshold = 20 % of it (vm.dirty_background_ratio, vm.dirty_ratio, in 1/PAGE_SIZE
//!   units from 4.2: `dirty_thresholds`; `[vm]` sets them; a background ratio at or above
//!   the dirty one counts as half of it); a memory cgroup's writeback domain likewise
//!   (memcg_dirty_domain). /proc/vmstat's nr_dirty_threshold and
//!   nr_dirty_background_threshold are computed when the report reads them. From 3.2
//!   (`io-less-dirty-throttling`) balance_dirty_pages is the rate controller of
//!   `dirty_throttle.rs`; before, a simplified throttle: above the background threshold
//!   the flusher is woken, above the dirty threshold the writer pauses for DIRTY_PAUSE_PS
//!   and retries.
//! - The flusher (wb_workfn) wakes every dirty_writeback_interval (5 s), or when kicked; it
//!   writes inodes dirtied more than dirty_expire (30 s) ago, and everything while above the
//!   background threshold, MAX_WRITEBACK_PAGES (1024) per step.
//! - write_cache_pages: clear_page_dirty_for_io, set_page_writeback, unlock, contiguous pages
//!   batched into one bio of up to BIO_MAX_VECS (256) vectors: an order-0 page is one
//!   vector (1 MiB of them), a large folio's contiguous blocks one (bio_add_folio merges
//!   them), so a bio of large folios holds up to 256 folios. The block layer splits a bio
//!   larger than the device's max_sectors_kb into requests (bio_split_rw); its pages end
//!   writeback together when its last request completes (bio_endio of the chained bio).
//!   Physically contiguous order-0 pages, which the kernel merges into one vector too,
//!   are not merged here.
//! - IO errors (fault injection, `fs/blockdev.rs`), as mpage_end_io / end_swap_bio_*: a
//!   failed read leaves the page locked-then-unlocked, not uptodate, with PG_error (the
//!   reader gets EIO); a failed file write sets PG_error and AS_EIO on the mapping
//!   (mapping_set_error) — the page stays clean and the device keeps the old data, a
//!   reported loss returned by the next fsync / close (filemap_check_errors); a failed
//!   swap-out redirties the page, which stays in the swap cache and in RAM.

use crate::fs::{BlockDevice, IoKind, IoRequest};
use crate::machine::profile::KFunc;
use crate::machine::{Event, Mode, Ps};
use crate::mm::page::{pg, Pfn, PAGE_SIZE};
use crate::mm::radix_tree::Entry;
use crate::mm::vmstat::VmItem;
use crate::sched::{TaskId, Wait};
use crate::sim::{Ctx, Sim};

/// The page counts global_dirtyable_memory reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyablePages {
    /// NR_FREE_PAGES.
    pub free: u64,
    /// The file LRU (NR_INACTIVE_FILE + NR_ACTIVE_FILE).
    pub file: u64,
    /// The anonymous LRU when swap has free slots (global_reclaimable_pages), else 0.
    pub anon: u64,
    /// totalreserve_pages (`Sim::totalreserve_pages`).
    pub reserve: u64,
}

/// The era rules of global_dirtyable_memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DirtyableRules {
    /// `dirtyable-reserve` (3.3): the reserve is not dirtyable.
    pub reserve: bool,
    /// `dirtyable-file-only` (3.14): free pages less the reserve, plus the file LRU; before,
    /// free + file + anonymous LRU, less the reserve.
    pub file_only: bool,
}

/// global_dirtyable_memory: the pages the global dirty limits are a share of, never 0
/// (the kernel's `+ 1`).
pub fn dirtyable_memory(p: DirtyablePages, rules: DirtyableRules) -> u64 {
    let reserve = if rules.reserve { p.reserve } else { 0 };
    let x = if rules.file_only {
        p.free - p.free.min(reserve) + p.file
    } else {
        let x = p.free + p.file + p.anon;
        x - x.min(reserve)
    };
    x + 1
}

/// vm.dirty_ratio, dirty_background_ratio, dirty_bytes and dirty_background_bytes, and
/// whether the ratios are taken in 1/PAGE_SIZE units (`dirty-ratio-page-units`, 4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirtySettings {
    /// vm.dirty_ratio (percent).
    pub ratio: u64,
    /// vm.dirty_background_ratio (percent).
    pub bg_ratio: u64,
    /// vm.dirty_bytes (0: the ratio applies).
    pub bytes: u64,
    /// vm.dirty_background_bytes (0: the ratio applies).
    pub bg_bytes: u64,
    /// `dirty-ratio-page-units`.
    pub page_units: bool,
}

/// domain_dirty_limits: (background, dirty) thresholds in pages of a domain of `avail`
/// dirtyable pages. A ratio's threshold is avail × ratio / 100, or from 4.2 (`page_units`)
/// avail × ((ratio × 4096) / 100) / 4096; a byte setting's is its pages, rounded up. In a
/// memcg domain (`global_avail`: the global domain's dirtyable pages) a byte setting
/// becomes a share of the global domain in 1/PAGE_SIZE units (at most 1), applied to the
/// cgroup's. A background threshold at or above the dirty one is taken as half of it.
/// Real-time tasks' raised limits are not modelled.
pub fn dirty_thresholds(s: DirtySettings, avail: u64, global_avail: Option<u64>) -> (u64, u64) {
    let threshold = |bytes: u64, ratio: u64| match global_avail {
        _ if bytes == 0 && s.page_units => ratio * PAGE_SIZE / 100 * avail / PAGE_SIZE,
        _ if bytes == 0 => avail * ratio / 100,
        None => bytes.div_ceil(PAGE_SIZE),
        Some(g) => bytes.div_ceil(g.max(1)).min(PAGE_SIZE) * avail / PAGE_SIZE,
    };
    let thresh = threshold(s.bytes, s.ratio);
    let bg = threshold(s.bg_bytes, s.bg_ratio);
    (if bg >= thresh { thresh / 2 } else { bg }, thresh)
}

/// How long a writer over the dirty limit pauses before retrying (10 ms).
pub const DIRTY_PAUSE_PS: Ps = 10_000_000_000;
/// Pages written by one flusher step (MAX_WRITEBACK_PAGES).
pub const MAX_WRITEBACK_PAGES: u64 = 1024;
/// BIO_MAX_VECS: the vectors of a writeback bio (an order-0 page, or a large folio's
/// contiguous blocks, each one).
pub const BIO_MAX_VECS: usize = 256;
/// vm.dirty_background_ratio's default, %.
pub const DIRTY_BACKGROUND_RATIO: u64 = 10;
/// vm.dirty_ratio's default, %.
pub const DIRTY_RATIO: u64 = 20;

/// Writeback mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    /// WB_SYNC_NONE: skip busy pages.
    None,
    /// WB_SYNC_ALL: wait for busy pages (fsync).
    All,
}

impl Sim {
    /// folio_mark_dirty (set_page_dirty): a page dirtied through a mapping (a fault, a
    /// dirty PTE met by unmap, zap or an MGLRU walk) or by shmem_write_end first loses
    /// PG_reclaim — a readahead marker or a reclaim mark left from before would otherwise
    /// rotate it at its next writeback end — then is dirtied as by [`Sim::set_page_dirty`].
    pub fn folio_mark_dirty(&mut self, pfn: Pfn) {
        let head = self.folio_head(pfn);
        if self.PageReclaim(head) {
            self.ClearPageReclaim(head);
        }
        self.set_page_dirty(head);
    }

    /// The dirtying of a page-cache page (a large folio whole) without folio_mark_dirty's
    /// PG_reclaim clearing: mark_buffer_dirty's __folio_mark_dirty for the block
    /// filesystem's buffered writes, partial-page zeroing and metadata;
    /// __set_page_dirty_no_writeback for shmem.
    pub fn set_page_dirty(&mut self, pfn: Pfn) {
        // folio_mark_dirty(page_folio(page)): a large folio is dirtied whole.
        let pfn = self.folio_head(pfn);
        let ino = self.mem[pfn as usize].mapping;
        let account = self.inode(ino).mapping.account_dirty;
        if !account {
            // shmem: __set_page_dirty_no_writeback.
            if !self.PageDirty(pfn) {
                self.SetPageDirty(pfn);
            }
            return;
        }
        let prev = self.enter(KFunc::SetPageDirty);
        if !self.TestSetPageDirty(pfn) {
            self.tree_lock(ino);
            self.account_page_dirtied(pfn, ino);
            self.tree_unlock(ino);
            self.__mark_inode_dirty(ino);
        }
        self.leave(prev);
    }

    /// folio_account_dirtied: every page of the folio `pfn` heads counts (NR_FILE_DIRTY,
    /// NR_DIRTIED, the wb's and the task's).
    fn account_page_dirtied(&mut self, pfn: Pfn, ino: u32) {
        let prev = self.enter(KFunc::AccountPageDirtied);
        let nr = self.mem[pfn as usize].nr_pages();
        self.charge_atomic();
        self.charge_atomic();
        self.mod_dirty_writeback_stat(pfn, VmItem::NrDirty, nr as i64);
        self.vmstat.add(VmItem::NrDirtied, nr as i64);
        self.inode_mut(ino).nr_dirty += nr;
        self.wb_page_dirtied(pfn, ino, nr);
        self.leave(prev);
    }

    /// Undo the dirty accounting of a page (a folio's head: all its pages) that stops
    /// being dirty without IO (folio_account_cleaned, from cancel_dirty_page or
    /// clear_page_dirty_for_io).
    pub fn account_page_cleaned(&mut self, pfn: Pfn, ino: u32) {
        if self.inode(ino).mapping.account_dirty {
            let nr = self.mem[pfn as usize].nr_pages();
            self.mod_dirty_writeback_stat(pfn, VmItem::NrDirty, -(nr as i64));
            let i = self.inode_mut(ino);
            i.nr_dirty -= nr;
            self.wb_page_cleaned(pfn, ino, nr);
        }
    }

    /// __mark_inode_dirty(I_DIRTY_SYNC): the inode itself changed (`fs/jbd2.rs`).
    pub fn mark_inode_dirty_sync(&mut self, ino: u32) {
        self.__mark_inode_dirty(ino);
    }

    fn __mark_inode_dirty(&mut self, ino: u32) {
        if self.inode(ino).dirtied_when().is_some() {
            return;
        }
        let now = self.now();
        self.inode_mut(ino).dirtied_when_ps = now;
        let fs = self.inode(ino).fs;
        if let Some(dev) = self.fss[fs].device {
            self.devices[dev].dirty_inodes.push(ino);
        }
    }

    /// global_dirtyable_memory under the era's rules ([`dirtyable_memory`]).
    pub fn global_dirtyable_memory(&self) -> u64 {
        let get = |i: VmItem| self.vmstat.get(i).max(0) as u64;
        self.dirtyable_under_rules(
            get(VmItem::NrFreePages),
            get(VmItem::NrInactiveFile) + get(VmItem::NrActiveFile),
            || get(VmItem::NrInactiveAnon) + get(VmItem::NrActiveAnon),
            self.totalreserve_pages(),
        )
    }

    /// [`dirtyable_memory`] of `free` pages, `file` LRU pages, the anonymous LRU (`anon`,
    /// looked at only where the era counts it: before 3.14, while swap has room) and a
    /// reserve, under the run's rules.
    fn dirtyable_under_rules(
        &self,
        free: u64,
        file: u64,
        anon: impl FnOnce() -> u64,
        reserve: u64,
    ) -> u64 {
        let file_only = self.features.dirtyable_file_only;
        let anon = if file_only || self.swap_free_pages() == 0 {
            0
        } else {
            anon()
        };
        dirtyable_memory(
            DirtyablePages {
                free,
                file,
                anon,
                reserve,
            },
            DirtyableRules {
                reserve: self.features.dirtyable_reserve,
                file_only,
            },
        )
    }

    /// The `[vm]` dirty settings and the era's arithmetic for [`dirty_thresholds`].
    fn dirty_settings(&self) -> DirtySettings {
        DirtySettings {
            ratio: self.vm.dirty_ratio,
            bg_ratio: self.vm.dirty_background_ratio,
            bytes: self.vm.dirty_bytes,
            bg_bytes: self.vm.dirty_background_bytes,
            page_units: self.features.dirty_ratio_page_units,
        }
    }

    /// domain_dirty_limits of a domain of `avail` dirtyable pages ([`dirty_thresholds`]).
    fn domain_dirty_limits(&self, avail: u64, global_avail: Option<u64>) -> (u64, u64) {
        dirty_thresholds(self.dirty_settings(), avail, global_avail)
    }

    /// lruvec_stat_mod_folio of NR_FILE_DIRTY (`VmItem::NrDirty`) or NR_WRITEBACK by `nr`
    /// pages of `pfn`'s folio: the machine's count, its node's (node_dirty_ok's
    /// `PgData::nr_dirty_writeback`) and its memory cgroup's move together.
    #[inline(always)]
    pub(crate) fn mod_dirty_writeback_stat(&mut self, pfn: Pfn, item: VmItem, nr: i64) {
        debug_assert!(matches!(item, VmItem::NrDirty | VmItem::NrWriteback));
        self.vmstat.add(item, nr);
        let n = self.mem[pfn as usize].node as usize;
        let c = &mut self.nodes[n].nr_dirty_writeback;
        *c = c.wrapping_add_signed(nr);
        self.count_memcg_page_event(pfn, item, nr);
    }

    /// node_dirtyable_memory: node `n`'s share of global_dirtyable_memory — its free pages
    /// less its reserve and its file LRU (and, before 3.14, its anonymous LRU while swap
    /// has room), without the global `+ 1`.
    pub fn node_dirtyable_memory(&self, n: usize) -> u64 {
        use crate::mm::memcontrol::ROOT_MEM_CGROUP;
        use crate::mm::node::LruList;
        let lru = |l| self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, n, l);
        self.dirtyable_under_rules(
            self.node_free_pages(n),
            lru(LruList::InactiveFile) + lru(LruList::ActiveFile),
            || lru(LruList::InactiveAnon) + lru(LruList::ActiveAnon),
            self.node_reserve_pages(n),
        ) - 1
    }

    /// node_dirty_ok: node `n`'s dirty and writeback pages are within its dirty limit —
    /// vm.dirty_ratio of its dirtyable memory (a plain percentage in every era), or with
    /// vm.dirty_bytes the node's share of them by dirtyable memory.
    pub fn node_dirty_ok(&self, n: usize) -> bool {
        let node_memory = self.node_dirtyable_memory(n);
        let limit = if self.vm.dirty_bytes > 0 {
            self.vm.dirty_bytes.div_ceil(PAGE_SIZE) * node_memory / self.global_dirtyable_memory()
        } else {
            self.vm.dirty_ratio * node_memory / 100
        };
        self.nodes[n].nr_dirty_writeback <= limit
    }

    /// /proc/vmstat of the run's era (`VmStat::entries_of`), with nr_dirty_threshold and
    /// nr_dirty_background_threshold computed as a read of the file computes them
    /// (vmstat_start's global_dirty_limits).
    pub fn proc_vmstat(&self) -> Vec<(&'static str, i64)> {
        let (bg, thresh) = self.global_dirty_limits();
        let mut entries = self.vmstat.entries_of(&self.features);
        for (name, v) in &mut entries {
            if *name == VmItem::NrDirtyThreshold.name() {
                *v = thresh as i64;
            } else if *name == VmItem::NrDirtyBackgroundThreshold.name() {
                *v = bg as i64;
            }
        }
        entries
    }

    /// global_dirty_limits: (background, dirty) thresholds in pages.
    pub fn global_dirty_limits(&self) -> (u64, u64) {
        self.domain_dirty_limits(self.global_dirtyable_memory(), None)
    }

    /// The memcg writeback domain of `memcg` (mem_cgroup_wb_stats + mdtc_calc_avail +
    /// domain_dirty_limits): (dirty + writeback pages, background threshold, dirty
    /// threshold). The memcg's dirtyable memory is its file pages plus what it could
    /// still grow by (the headroom below memory.max / memory.high up its ancestry),
    /// bounded by the clean memory the rest of the system has.
    pub fn memcg_dirty_domain(&self, memcg: crate::mm::memcontrol::MemcgId) -> (u64, u64, u64) {
        use crate::mm::node::LruList;
        let sub = self.memcg_subtree(memcg);
        let stat = |i: VmItem| -> u64 {
            sub.clone()
                .map(|c| self.memcgs[c as usize].stat.get(i))
                .sum::<i64>()
                .max(0) as u64
        };
        let dirty = stat(VmItem::NrDirty) + stat(VmItem::NrWriteback);
        let filepages: u64 = (0..self.nodes.len())
            .map(|n| {
                self.lruvec_lru_size_hier(memcg, n, LruList::InactiveFile)
                    + self.lruvec_lru_size_hier(memcg, n, LruList::ActiveFile)
            })
            .sum();
        let mut headroom = u64::MAX;
        let mut c = Some(memcg);
        while let Some(m) = c {
            let mc = &self.memcgs[m as usize];
            if mc.parent.is_none() {
                break;
            }
            let ceiling = mc.max.min(mc.high);
            headroom = headroom.min(ceiling - ceiling.min(mc.usage));
            c = mc.parent;
        }
        let g_avail = self.global_dirtyable_memory();
        let g_dirty =
            (self.vmstat.get(VmItem::NrDirty) + self.vmstat.get(VmItem::NrWriteback)).max(0) as u64;
        let clean = filepages - filepages.min(dirty);
        let global_clean = g_avail - g_avail.min(g_dirty);
        let other_clean = global_clean - global_clean.min(clean);
        let avail = filepages + headroom.min(other_clean);
        let (bg, thresh) = self.domain_dirty_limits(avail, Some(g_avail));
        (dirty, bg, thresh)
    }

    /// balance_dirty_pages_ratelimited after the running task dirtied a page of `ino`: how
    /// long the writer must pause, if at all. Under `io-less-dirty-throttling` the
    /// controller of `fs/dirty_throttle.rs`; without it (2.6.30's era) a simplified throttle:
    /// the flusher is kicked above the background threshold and the writer pauses
    /// DIRTY_PAUSE_PS while above the dirty threshold. A writer in a memory cgroup is also
    /// held to its cgroup's writeback domain (cgroup writeback).
    pub fn balance_dirty_pages_ratelimited(&mut self, ino: u32) -> Option<Ps> {
        if !self.inode(ino).mapping.account_dirty {
            return None;
        }
        if self.features.io_less_dirty_throttling {
            let prev = self.enter(KFunc::BalanceDirtyPages);
            let pause = self.balance_dirty_pages_io_less(ino);
            self.leave(prev);
            return pause;
        }
        let prev = self.enter(KFunc::BalanceDirtyPages);
        let (bg, limit) = self.global_dirty_limits();
        let dirty =
            (self.vmstat.get(VmItem::NrDirty) + self.vmstat.get(VmItem::NrWriteback)).max(0) as u64;
        let mut pause = false;
        let mut kick = dirty > bg;
        if kick {
            pause = dirty > limit;
        }
        let memcg = self.wb_memcg(self.current_memcg());
        if memcg != crate::mm::memcontrol::ROOT_MEM_CGROUP {
            let (m_dirty, m_bg, m_limit) = self.memcg_dirty_domain(memcg);
            if m_dirty > m_bg {
                kick = true;
                pause |= m_dirty > m_limit;
            }
            if pause {
                self.memcgs[memcg as usize].dirty_throttled += 1;
            }
        }
        if kick {
            let fs = self.inode(ino).fs;
            if let Some(dev) = self.fss[fs].device {
                self.wb_start_background_writeback(dev);
            }
        }
        self.leave(prev);
        pause.then_some(DIRTY_PAUSE_PS)
    }

    /// A memcg writeback domain above its background threshold (wb_over_bg_thresh of a
    /// cgroup's wb): the flusher keeps writing. None without cgroup writeback.
    fn memcg_over_bg_thresh(&self) -> bool {
        self.cgroup_writeback()
            && (1..self.memcgs.len()).any(|m| {
                let (d, bg, _) = self.memcg_dirty_domain(m as crate::mm::memcontrol::MemcgId);
                d > bg
            })
    }

    /// Wake the flusher of `dev` now.
    pub fn wb_start_background_writeback(&mut self, dev: usize) {
        if self.features.io_less_dirty_throttling {
            self.wb_bandwidth_estimate_start(dev);
        }
        if let Some(t) = self.devices[dev].flusher {
            let now = self.now();
            self.wake_up(t, now);
        }
    }

    /// wakeup_flusher_threads(WB_REASON_VMSCAN) for `dev` (`vmscan-kick-flushers`): a
    /// start-all work (wb_start_writeback, WB_start_all) — the flusher writes every inode
    /// dirty now, whatever its age — and the flusher woken.
    pub fn wakeup_flusher_threads(&mut self, dev: usize) {
        let now = self.now();
        let d = &mut self.devices[dev];
        if d.dirty_inodes.is_empty() {
            return; // get_nr_dirty_pages() == 0: no work queued
        }
        d.start_all_before = Some(now);
        self.wb_start_background_writeback(dev);
    }

    /// One step of the flusher kthread (wb_workfn). Returns true if it stays runnable.
    /// An inode with no dirty pages left (written, or dirty only itself: I_DIRTY_SYNC,
    /// whose ->write_inode ext4 makes write nothing for WB_SYNC_NONE — the inode is in its
    /// table block already, `fs/jbd2.rs`) is clean: it leaves b_dirty and, unused, goes
    /// onto its inode list (inode_sync_complete → inode_add_lru).
    pub fn flusher_step(&mut self, tid: TaskId, dev: usize) -> bool {
        let prev = self.enter(KFunc::WbWorkfn);
        let now = self.now();
        let (bg, _) = self.global_dirty_limits();
        let over_bg = self.vmstat.get(VmItem::NrDirty).max(0) as u64 > bg
            || (self.memcgs.len() > 1 && self.memcg_over_bg_thresh());
        // The periodic (kupdate) pass writes the inodes dirty longer than
        // dirty_expire_centisecs; none without the periodic writeback.
        let expire = self
            .vm
            .dirty_writeback_interval_ps()
            .map(|_| self.vm.dirty_expire_ps());
        let start_all = self.devices[dev].start_all_before;
        let mut budget = MAX_WRITEBACK_PAGES;
        let mut i = 0;
        let mut cleaned = false;
        while budget > 0 && i < self.devices[dev].dirty_inodes.len() {
            let ino = self.devices[dev].dirty_inodes[i];
            let when = self.inodes[ino as usize]
                .as_ref()
                .and_then(|n| n.dirtied_when());
            let Some(when) = when else {
                i += 1; // cleaned earlier in this step
                continue;
            };
            let due =
                expire.is_some_and(|e| now >= when + e) || start_all.is_some_and(|t| when <= t);
            if !(over_bg || due) {
                i += 1;
                continue;
            }
            // (An inode dirty only itself has no page to write: do_writepages finds no
            // dirty tag.)
            let written = if self.inode(ino).nr_dirty == 0 {
                0
            } else {
                self.write_cache_pages(ino, budget, SyncMode::None)
                    .unwrap_or_default()
            };
            budget -= written.min(budget);
            // do_writepages: the wbs' write bandwidth, every BANDWIDTH_INTERVAL.
            self.wb_update_bandwidth_dev(dev);
            if self.inode(ino).nr_dirty == 0 {
                // Off b_dirty below, in one pass over the list.
                self.inode_mut(ino).dirtied_when_ps = crate::fs::NOT_DIRTIED;
                cleaned = true;
                self.inode_add_lru(ino, false);
                i += 1;
            } else if written == 0 {
                i += 1;
            }
        }
        if cleaned {
            let inodes = &self.inodes;
            self.devices[dev].dirty_inodes.retain(|&ino| {
                inodes[ino as usize]
                    .as_ref()
                    .is_some_and(|n| n.dirtied_when().is_some())
            });
        }
        let did_work = budget < MAX_WRITEBACK_PAGES;
        self.leave(prev);
        if budget > 0 {
            // The start-all work found nothing more to write.
            self.devices[dev].start_all_before = None;
        }
        let still_over = self.vmstat.get(VmItem::NrDirty).max(0) as u64
            > self.global_dirty_limits().0
            || (self.memcgs.len() > 1 && self.memcg_over_bg_thresh());
        if did_work && (still_over || self.devices[dev].start_all_before.is_some()) {
            return true; // more to do: stay runnable
        }
        // Sleep until the periodic timer (or, without one, until kicked).
        let Some(interval) = self.vm.dirty_writeback_interval_ps() else {
            self.set_sleeping(tid);
            return false;
        };
        let next = self.now() + interval;
        let due = self.devices[dev].timer_at_ps;
        if due.is_none_or(|d| d <= self.now()) {
            self.devices[dev].timer_at_ps = Some(next);
            self.sleep_on(tid, Wait::Until(next));
        } else {
            self.set_sleeping(tid);
        }
        false
    }

    /// Take an inode off its device's b_dirty list once it has no dirty pages.
    pub fn clear_inode_dirty(&mut self, ino: u32) {
        let fs = self.inode(ino).fs;
        self.inode_mut(ino).dirtied_when_ps = crate::fs::NOT_DIRTIED;
        if let Some(dev) = self.fss[fs].device {
            self.devices[dev].dirty_inodes.retain(|i| *i != ino);
        }
    }

    /// write_cache_pages: write up to `max` dirty pages of `ino` from its writeback_index
    /// (from 0 for WB_SYNC_ALL). Returns pages submitted; in WB_SYNC_ALL mode a dirty page
    /// that is locked or already under writeback makes it return `Err(Wait)`.
    pub fn write_cache_pages(&mut self, ino: u32, max: u64, mode: SyncMode) -> Result<u64, Wait> {
        self.write_cache_pages_in(ino, None, max, mode)
    }

    /// __filemap_fdatawrite_range(WB_SYNC_NONE) of the pages `[start, end]` of `ino`
    /// (fadvise's POSIX_FADV_DONTNEED): start writeback of the dirty ones that are not
    /// locked or already under writeback; the file's writeback_index stays (not
    /// range_cyclic). Nothing on a mapping without dirty accounting (tmpfs) or without
    /// dirty pages (mapping_tagged(PAGECACHE_TAG_DIRTY)). Returns pages submitted.
    pub fn filemap_fdatawrite_range(&mut self, ino: u32, start: u64, end: u64) -> u64 {
        if !self.inode(ino).mapping.account_dirty || self.inode(ino).nr_dirty == 0 {
            return 0;
        }
        self.write_cache_pages_in(ino, Some((start, end)), u64::MAX, SyncMode::None)
            .unwrap_or(0)
    }

    /// write_cache_pages over the whole file (range_cyclic, `range` None) or over the
    /// pages `[start, end]`.
    fn write_cache_pages_in(
        &mut self,
        ino: u32,
        range: Option<(u64, u64)>,
        max: u64,
        mode: SyncMode,
    ) -> Result<u64, Wait> {
        let prev = self.enter(KFunc::Writepages);
        let mut index = match range {
            Some((start, _)) => start,
            None if mode == SyncMode::All => 0,
            None => self.inode(ino).writeback_index,
        };
        let range_end = range.map_or(u64::MAX, |(_, end)| end);
        let mut written = 0u64;
        let mut batch: Vec<Pfn> = self.take_pfn_buf();
        let mut bvecs = 0;
        let mut wrapped = range.is_some() || mode == SyncMode::All || index == 0;
        let mut entries = Vec::with_capacity(self.pagevec_size());
        let mut result = Ok(0);
        'outer: loop {
            entries.clear();
            self.charge_tree_walk(ino);
            let n =
                self.inode(ino)
                    .mapping
                    .tree
                    .gang_lookup(index, self.pagevec_size(), &mut entries);
            if n == 0 {
                if !wrapped {
                    wrapped = true;
                    index = 0;
                    continue;
                }
                break;
            }
            for &(idx, e) in entries.iter().take(n) {
                if idx > range_end {
                    break 'outer;
                }
                if idx < index {
                    continue; // a page of a large folio written below
                }
                index = idx + 1;
                let Entry::Page(page) = e else { continue };
                // A large folio is written whole, from its head (the lookup returns the
                // folio holding `idx`).
                let pfn = self.folio_head(page);
                if !self.PageDirty(pfn) {
                    continue;
                }
                if !self.trylock_page(pfn) {
                    if mode == SyncMode::All {
                        result = Err(Wait::PageLocked(pfn));
                        break 'outer;
                    }
                    continue;
                }
                if self.PageWriteback(pfn) {
                    self.unlock_page(pfn);
                    if mode == SyncMode::All {
                        result = Err(Wait::PageWriteback(pfn));
                        break 'outer;
                    }
                    continue;
                }
                // clear_page_dirty_for_io (folio_mkclean first: a shared mapping's next
                // write faults) + ->writepage
                self.folio_mkclean(pfn);
                let pr = self.enter(KFunc::Writepage);
                let nr = self.folio_start_writeback(pfn, ino);
                let mut blocks = self.take_pfn_buf();
                if nr == 1 {
                    blocks.push(pfn);
                } else {
                    self.folio_start_block_writes(pfn, &mut blocks);
                    index = self.mem[pfn as usize].index + nr;
                }
                self.unlock_page(pfn);
                self.leave(pr);
                for &b in &blocks {
                    self.bio_add_or_submit(ino, &mut batch, &mut bvecs, b);
                }
                self.give_pfn_buf(blocks);
                written += nr;
                if written >= max {
                    break 'outer;
                }
            }
        }
        if batch.is_empty() {
            self.give_pfn_buf(batch);
        } else {
            self.submit_write(ino, batch);
        }
        if mode == SyncMode::None && range.is_none() {
            self.inode_mut(ino).writeback_index = index;
        }
        self.leave(prev);
        result.map(|_: u64| written)
    }

    /// folio_clear_dirty_for_io + __folio_start_writeback of the locked dirty folio `pfn`
    /// heads (or page): it is clean and under writeback, every page of it counted
    /// (NR_WRITEBACK, WB_WRITEBACK). Returns its pages.
    pub(crate) fn folio_start_writeback(&mut self, pfn: Pfn, ino: u32) -> u64 {
        let nr = self.mem[pfn as usize].nr_pages();
        if self.TestClearPageDirty(pfn) {
            self.account_page_cleaned(pfn, ino);
        }
        self.SetPageWriteback(pfn);
        self.mod_dirty_writeback_stat(pfn, VmItem::NrWriteback, nr as i64);
        self.wb_page_writeback_start(pfn, ino, nr);
        nr
    }

    /// Submit the frames of `blocks` (in index order, under writeback) of one inode, each
    /// run of contiguous ones as one bio.
    pub(crate) fn submit_write_runs(&mut self, ino: u32, blocks: &[Pfn]) {
        let mut run = self.take_pfn_buf();
        let mut bvecs = 0;
        for &b in blocks {
            self.bio_add_or_submit(ino, &mut run, &mut bvecs, b);
        }
        self.submit_write(ino, run);
    }

    /// Add block `b` to the bio being built (`bio_add_block`), submitting the bio first
    /// when `b` does not fit in it.
    fn bio_add_or_submit(&mut self, ino: u32, bio: &mut Vec<Pfn>, bvecs: &mut usize, b: Pfn) {
        if !self.bio_add_block(bio, bvecs, b) {
            let full = std::mem::replace(bio, self.take_pfn_buf());
            self.submit_write(ino, full);
            *bvecs = 0;
            self.bio_add_block(bio, bvecs, b);
        }
    }

    /// io_submit_add_bh's bio_add_folio: add block `b` (a frame under writeback) to the bio
    /// being built, `bio` of `bvecs` vectors; false (nothing added) when the bio must be
    /// submitted first — `b` does not follow its last block, or would need a vector past
    /// BIO_MAX_VECS. A block of the folio of the bio's last block extends that vector.
    fn bio_add_block(&self, bio: &mut Vec<Pfn>, bvecs: &mut usize, b: Pfn) -> bool {
        let new_vec = match bio.last() {
            None => true,
            Some(&last) => {
                if self.mem[last as usize].index + 1 != self.mem[b as usize].index {
                    return false;
                }
                self.folio_head(last) != self.folio_head(b)
            }
        };
        if new_vec {
            if *bvecs >= BIO_MAX_VECS {
                return false;
            }
            *bvecs += 1;
        }
        bio.push(b);
        true
    }

    /// Submit writeback of contiguous pages (already PG_writeback) of one inode.
    pub fn submit_write(&mut self, ino: u32, pages: Vec<Pfn>) {
        let fs = self.inode(ino).fs;
        let dev = self.fss[fs]
            .device
            .expect("writeback on a device-less filesystem");
        let first = self.mem[pages[0] as usize].index;
        self.vmstat.add(
            VmItem::Pgpgout,
            (pages.len() as u64 * PAGE_SIZE / 1024) as i64,
        );
        let req = IoRequest {
            dev,
            kind: IoKind::Write,
            ino,
            pages,
            cpu: self.cur.cpu,
        };
        self.submit_bio(req, BlockDevice::sector_of(ino, first));
    }

    /// submit_bio: queue a request on its device and schedule its completion.
    pub fn submit_bio(&mut self, req: IoRequest, sector: u64) {
        if self.devices[req.dev].synchronous {
            self.submit_bio_sync(req);
            return;
        }
        let prev = self.enter(KFunc::SubmitBio);
        self.charge(self.costs.bio_submit_ps);
        let now = self.now();
        let nr = match req.kind {
            IoKind::Journal(n) => u64::from(n),
            _ => req.pages.len() as u64,
        };
        let io_pages = self.devices[req.dev].io_pages.max(1);
        let done = if req.kind == IoKind::Write && nr > io_pages {
            // bio_split_rw: requests of at most max_sectors_kb, one after the other; the
            // bio (its pages' writeback) ends with the last.
            let mut done = now;
            let mut off = 0;
            while off < nr {
                let part = (nr - off).min(io_pages);
                done = done.max(self.devices[req.dev].submit(now, req.kind, sector + off, part));
                off += part;
            }
            done
        } else {
            self.devices[req.dev].submit(now, req.kind, sector, nr)
        };
        let id = match self.io_free.pop() {
            Some(id) => id,
            None => {
                self.io.push(None);
                (self.io.len() - 1) as u32
            }
        };
        if self.io_versions.len() <= id as usize {
            self.io_versions.resize(id as usize + 1, Vec::new());
        }
        // A write carries the pages' contents as they are now (the content oracle's
        // versions): a store through a stale TLB entry after submission is not in the IO.
        // (The slot's list is reused.)
        let mut versions = std::mem::take(&mut self.io_versions[id as usize]);
        versions.clear();
        if req.kind == IoKind::Write {
            versions.extend(req.pages.iter().map(|p| self.mem[*p as usize].version));
        }
        self.io_versions[id as usize] = versions;
        self.io[id as usize] = Some(req);
        self.events.push(done, Event::IoComplete(id));
        self.leave(prev);
    }

    /// A request completed at `t`: the completion interrupt runs on the submitting CPU.
    pub fn io_complete(&mut self, id: u32, t: Ps) {
        let req = self.io[id as usize].take().expect("live request");
        self.io_free.push(id);
        if !self.stepping_mask.test(req.cpu) {
            // (A CPU in the middle of a step takes the interrupt within it, see ipi_arrive.)
            self.cpu_idle_until(req.cpu, t);
        }
        let saved = self.switch_ctx(Ctx {
            cpu: req.cpu,
            mode: Mode::Irq,
            ..self.cur
        });
        let irq_start = self.now();
        self.cpus[req.cpu].interrupts += 1;
        match req.kind {
            IoKind::Read => {
                self.set_func(KFunc::EndBioRead);
                for &pfn in &req.pages {
                    self.end_bio_read_page(req.dev, req.ino, pfn);
                }
            }
            IoKind::Write => {
                self.set_func(KFunc::EndPageWriteback);
                for (k, &pfn) in req.pages.iter().enumerate() {
                    let v = self.io_versions[id as usize].get(k).copied();
                    self.end_bio_write_page(req.dev, req.ino, pfn, v, false);
                }
            }
            IoKind::Journal(_) => {
                self.set_func(KFunc::Jbd2Commit);
                self.jbd2_commit_done(req.ino);
            }
        }
        if req.kind == IoKind::Write && !self.congestion_waiters.is_empty() {
            // The request is freed below the congestion-off threshold:
            // clear_bdi_congested wakes congestion_wait's sleepers.
            for (tid, until) in std::mem::take(&mut self.congestion_waiters) {
                // (A sleeper whose timeout already passed is no longer in the wait.)
                if t < until && self.tasks[tid].state == crate::sched::TaskState::Sleeping {
                    self.wake_up(tid, t);
                }
            }
        }
        if !self.orphans.is_empty() {
            self.evict_orphans();
        }
        self.give_pfn_buf(req.pages);
        self.psi_account_irqtime(req.cpu, irq_start);
        self.switch_ctx(saved);
    }

    /// Where page `pfn` of an IO on inode `ino` is: its index in the file, or its swap slot
    /// (a swap read's page may have no owner yet: readahead).
    fn io_page_index(&self, ino: u32, pfn: Pfn) -> u64 {
        if ino == crate::mm::swapfile::SWAP_INO {
            u64::from(self.mem[pfn as usize].private)
        } else {
            self.mem[pfn as usize].index
        }
    }

    /// The completion of one page of a read from `dev` of inode `ino` (or swap): the data
    /// arrives (uptodate, unlocked), or the read failed (PG_error, not uptodate).
    fn end_bio_read_page(&mut self, dev: usize, ino: u32, pfn: Pfn) {
        self.charge(self.costs.bio_complete_page_ps);
        let swap = ino == crate::mm::swapfile::SWAP_INO;
        let index = self.io_page_index(ino, pfn);
        if self.io_fault(dev, IoKind::Read, ino, index) {
            // The read failed: PG_error, not uptodate; waiters see it.
            let how = if swap {
                "swap-in: PG_error, not uptodate: SIGBUS to the faulting task"
            } else {
                "PG_error, not uptodate: EIO to read(2); a page fault reads again"
            };
            self.record_io_error(dev, "read", ino, index, how);
            if self.mem[pfn as usize].test(pg::TAIL) {
                // A large folio's read fails as a whole (its head completed first).
                let head = self.folio_head(pfn);
                self.ClearPageUptodate(head);
                self.SetPageError(head);
                return;
            }
            self.SetPageError(pfn);
            self.unlock_page(pfn);
            return;
        }
        let v = if swap {
            let off = self.mem[pfn as usize].private as usize;
            self.swap.as_ref().map_or(0, |s| s.versions[off])
        } else {
            let idx = self.mem[pfn as usize].index;
            self.inode(ino).disk_at(idx)
        };
        self.mem[pfn as usize].version = v;
        if self.mem[pfn as usize].test(pg::TAIL) {
            // A large folio is uptodate and unlocked with its head.
            return;
        }
        self.SetPageUptodate(pfn);
        self.unlock_page(pfn);
    }

    /// The completion of one page of a write to `dev` of inode `ino` (or swap) that carried
    /// content `version` (None: the page's own): end_page_writeback, after an error when
    /// the device failed it (`failed`, zram's -ENOMEM) or fault injection does.
    fn end_bio_write_page(
        &mut self,
        dev: usize,
        ino: u32,
        pfn: Pfn,
        version: Option<u32>,
        failed: bool,
    ) {
        self.charge(self.costs.bio_complete_page_ps);
        let swap = ino == crate::mm::swapfile::SWAP_INO;
        let index = self.io_page_index(ino, pfn);
        let injected = self.io_fault(dev, IoKind::Write, ino, index);
        if injected && swap {
            self.record_io_error(
                dev,
                "swap-out",
                ino,
                index,
                "page kept: redirtied, stays in the swap cache",
            );
        } else if injected {
            self.record_io_error(
                dev,
                "write",
                ino,
                index,
                "AS_EIO on the mapping: EIO from the next fsync/fdatasync or close",
            );
        }
        self.completing_version = version;
        self.end_page_writeback_err(pfn, ino, injected || failed);
        self.completing_version = None;
    }

    /// submit_bio to a synchronous device (zram, `mm/zram.rs`): the request is served and
    /// completes in the submitter's context before this returns — each page compressed
    /// (write) or decompressed (read) on this CPU, then its completion — with no event,
    /// no interrupt and no sleep.
    fn submit_bio_sync(&mut self, req: IoRequest) {
        let n = req.pages.len() as u64;
        let d = &mut self.devices[req.dev];
        match req.kind {
            IoKind::Read => {
                d.nr_reads += 1;
                d.pages_read += n;
                for &pfn in &req.pages {
                    self.zram_read_page(pfn);
                    self.end_bio_read_page(req.dev, req.ino, pfn);
                }
            }
            IoKind::Write => {
                d.nr_writes += 1;
                d.pages_written += n;
                for &pfn in &req.pages {
                    let off = self.mem[pfn as usize].private;
                    let stored = self.zram_write_page(off);
                    let v = Some(self.mem[pfn as usize].version);
                    self.end_bio_write_page(req.dev, req.ino, pfn, v, !stored);
                }
            }
            IoKind::Journal(nblocks) => {
                d.nr_writes += 1;
                d.pages_written += u64::from(nblocks);
                self.jbd2_commit_done(req.ino);
            }
        }
        self.give_pfn_buf(req.pages);
    }

    /// end_page_writeback: persist the content version, clear PG_writeback, rotate a
    /// PG_reclaim page to the inactive tail, wake waiters.
    pub fn end_page_writeback(&mut self, pfn: Pfn, ino: u32) {
        self.end_page_writeback_err(pfn, ino, false);
    }

    /// end_page_writeback after a write that failed (`err`) or not. A failed swap-out
    /// redirties the page and clears PG_reclaim (end_swap_bio_write); a failed file write
    /// sets AS_EIO on the mapping (mapping_set_error) and records the lost version. Either
    /// way PG_error is set and the device keeps its old contents.
    pub fn end_page_writeback_err(&mut self, pfn: Pfn, ino: u32, err: bool) {
        let p = &self.mem[pfn as usize];
        // The version the IO carried (captured at submission), else the page's.
        let (idx, v) = (p.index, self.completing_version.unwrap_or(p.version));
        let large = p.flags & (pg::HEAD | pg::TAIL) != 0;
        let page = pfn;
        // A block of a large folio (`fs::buffer`): its data reaches the disk, and the
        // folio's writeback ends with its last block (end_buffer_async_write).
        let pfn = self.folio_head(pfn);
        if err {
            self.SetPageError(pfn);
            if ino == crate::mm::swapfile::SWAP_INO {
                self.SetPageDirty(pfn);
                self.ClearPageReclaim(pfn);
            } else if let Some(inode) = self.inodes[ino as usize].as_mut() {
                inode.mapping.wb_err = true;
                let fs = inode.fs;
                if let Some(dev) = self.fss[fs].device {
                    self.devices[dev].lost_versions.insert(v);
                }
            }
        } else if ino == crate::mm::swapfile::SWAP_INO {
            self.end_swap_writeback(pfn);
        } else if let Some(inode) = self.inodes[ino as usize].as_mut() {
            if inode.disk_at(idx) == 0 {
                inode.nr_blocks += 1;
            }
            inode.disk.set(idx, v);
        }
        if large && !self.folio_end_block_write(pfn, page) {
            return;
        }
        self.folio_end_writeback(pfn, ino);
    }

    /// __folio_end_writeback's counting of `nr` pages of `pfn`'s folio whose writeback
    /// ended: NR_WRITEBACK, the memcg's, the wb's completions (a file's), the throttled
    /// reclaimers' written count, NR_WRITTEN.
    pub(crate) fn account_writeback_end(&mut self, pfn: Pfn, ino: u32, nr: u64) {
        self.mod_dirty_writeback_stat(pfn, VmItem::NrWriteback, -(nr as i64));
        if ino != crate::mm::swapfile::SWAP_INO {
            self.wb_page_writeback_end(pfn, ino, nr);
        }
        self.acct_reclaim_writeback(pfn, nr);
        self.vmstat.add(VmItem::NrWritten, nr as i64);
    }

    /// folio_end_writeback of the folio `pfn` heads (or page): PG_writeback cleared,
    /// every page counted (NR_WRITEBACK, NR_WRITTEN, the wb's completions), a PG_reclaim
    /// folio rotated to the inactive tail, waiters woken.
    fn folio_end_writeback(&mut self, pfn: Pfn, ino: u32) {
        let nr = self.mem[pfn as usize].nr_pages();
        if self.TestClearPageReclaim(pfn) {
            self.rotate_reclaimable_page(pfn);
        }
        let prev = self.enter(KFunc::TestClearPageWriteback);
        let was = self.TestClearPageWriteback(pfn);
        debug_assert!(was, "end_page_writeback on a page not under writeback");
        self.account_writeback_end(pfn, ino, nr);
        self.leave(prev);
        self.wake_up_page(pfn);
        if self.mem[pfn as usize].test(pg::DROPBEHIND) {
            // filemap_end_dropbehind_write: the end of an RWF_DONTCACHE write's writeback
            // drops the page (the filesystem completes such writeback in task context).
            self.get_page(pfn);
            if self.trylock_page(pfn) {
                self.filemap_end_dropbehind(pfn);
                self.unlock_page(pfn);
            }
            self.put_page(pfn);
        }
    }

    /// filemap_check_errors: return (and clear) the mapping's pending writeback error.
    pub fn filemap_check_errors(&mut self, ino: u32) -> bool {
        match self.inodes.get_mut(ino as usize).and_then(|i| i.as_mut()) {
            Some(i) => std::mem::take(&mut i.mapping.wb_err),
            None => false,
        }
    }

    /// filemap_write_and_wait_range for fdatasync: phase 0 writes every dirty page
    /// (WB_SYNC_ALL), phase 1 waits for all writeback of the file to end.
    pub fn filemap_write_and_wait(&mut self, ino: u32, phase: &mut u64) -> Result<(), Wait> {
        if !self.inode(ino).mapping.account_dirty {
            return Ok(()); // tmpfs: nothing to write
        }
        let prev = self.enter(KFunc::VfsFsync);
        if *phase == 0 {
            if let Err(w) = self.write_cache_pages(ino, u64::MAX, SyncMode::All) {
                self.leave(prev);
                return Err(w);
            }
            if self.inode(ino).nr_dirty == 0 {
                self.clear_inode_dirty(ino);
            }
            *phase = 1;
        }
        // filemap_fdatawait_range
        let pr = self.enter(KFunc::FileFdatawait);
        let mut entries = Vec::new();
        let mut index = 0;
        let mut r = Ok(());
        'scan: loop {
            entries.clear();
            let n = self
                .inode(ino)
                .mapping
                .tree
                .gang_lookup(index, 64, &mut entries);
            if n == 0 {
                break;
            }
            for &(idx, e) in &entries {
                index = idx + 1;
                if let Entry::Page(pfn) = e {
                    if self.mem[pfn as usize].test(pg::WRITEBACK) {
                        r = Err(Wait::PageWriteback(pfn));
                        break 'scan;
                    }
                }
            }
        }
        self.leave(pr);
        self.leave(prev);
        r
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::Sim;

    fn sim() -> Sim {
        let sc = crate::scenario::load_scenario(
            "dd-blockfs",
            &["machine.memory_per_node=64MiB".to_string()],
        )
        .expect("valid");
        Sim::new(
            &sc,
            crate::kernel::KernelEra::V6_18.features("patched").unwrap(),
        )
        .unwrap()
    }

    /// domain_dirty_limits of a memcg domain: a byte setting is a share of the global
    /// domain's dirtyable memory, in 1/PAGE_SIZE units rounded up and at most all of it,
    /// applied to the cgroup's: 1 MiB of a global 10,000 pages is ceil(1,048,576 /
    /// 10,000) = 105/4096 — 102 of the cgroup's 4,000 pages (4,000 × 105 / 4,096); 64 MiB
    /// is more than the global domain, so all of it. The background ratio stays 10 %: on
    /// 6.18 (`dirty-ratio-page-units`) 409/4096 of the 4,000 pages, 399.
    #[test]
    fn byte_settings_are_ratios_in_a_memcg_domain() {
        let mut s = sim();
        s.vm.dirty_bytes = 1 << 20;
        s.vm.dirty_ratio = 0;
        // The background ratio's 400 pages are above that: half of it.
        assert_eq!(s.domain_dirty_limits(4000, Some(10_000)), (51, 102));
        assert_eq!(
            s.domain_dirty_limits(4000, None),
            (128, 256),
            "global: the bytes"
        );
        s.vm.dirty_bytes = 64 << 20;
        assert_eq!(s.domain_dirty_limits(4000, Some(10_000)), (399, 4000));
        s.vm.dirty_background_bytes = 1 << 20;
        s.vm.dirty_background_ratio = 0;
        assert_eq!(s.domain_dirty_limits(4000, Some(10_000)).0, 102);
    }

    use super::{
        dirty_thresholds, dirtyable_memory, DirtySettings, DirtyablePages, DirtyableRules,
    };

    fn ratios(ratio: u64, bg_ratio: u64, page_units: bool) -> DirtySettings {
        DirtySettings {
            ratio,
            bg_ratio,
            bytes: 0,
            bg_bytes: 0,
            page_units,
        }
    }

    /// The thresholds Linux 6.18.44 reported in /proc/vmstat (the project's VM,
    /// 2026-12-01: nr_dirty_threshold and nr_dirty_background_threshold read with
    /// nr_free_pages and the file LRU, totalreserve_pages from /proc/zoneinfo — each
    /// zone's high watermark plus its largest protection, 54,127 pages), against the
    /// dirtyable memory of that reading: vm.dirty_ratio 2 and dirty_background_ratio 1 of
    /// 5,940,361 pages gave 117,472 and 58,011 (81/4096 and 40/4096 of it; 2 % would be
    /// 118,807), 1 and 1 of 5,938,881 gave 57,996 and half of it, 28,998.
    #[test]
    fn thresholds_are_the_kernels_per_page_size_ratios() {
        assert_eq!(
            dirty_thresholds(ratios(2, 1, true), 5_940_361, None),
            (58_011, 117_472)
        );
        assert_eq!(
            dirty_thresholds(ratios(1, 1, true), 5_938_881, None),
            (28_998, 57_996)
        );
        // Before 4.2 the percentage itself.
        assert_eq!(
            dirty_thresholds(ratios(2, 1, false), 5_940_361, None),
            (59_403, 118_807)
        );
    }

    /// global_dirtyable_memory in each era's form, by hand: 1,000 free pages, 500 on the
    /// file LRU, 300 on the anonymous LRU (swap has room), a reserve of 200.
    #[test]
    fn dirtyable_memory_follows_the_eras() {
        let p = DirtyablePages {
            free: 1000,
            file: 500,
            anon: 300,
            reserve: 200,
        };
        let rules = |reserve, file_only| DirtyableRules { reserve, file_only };
        // 3.14 on: free less the reserve, plus the file LRU, plus one.
        assert_eq!(dirtyable_memory(p, rules(true, true)), 1000 - 200 + 500 + 1);
        // 3.3 to 3.13: everything reclaimable, less the reserve.
        assert_eq!(
            dirtyable_memory(p, rules(true, false)),
            1000 + 500 + 300 - 200 + 1
        );
        // Before 3.3: no reserve.
        assert_eq!(
            dirtyable_memory(p, rules(false, false)),
            1000 + 500 + 300 + 1
        );
        // From 3.14 the reserve takes free pages only, never file pages.
        let low = DirtyablePages { free: 100, ..p };
        assert_eq!(dirtyable_memory(low, rules(true, true)), 500 + 1);
        assert_eq!(
            dirtyable_memory(DirtyablePages::default(), rules(true, true)),
            1
        );
    }

    /// A run's nr_dirty_threshold is global_dirty_limits of its state as the era computes
    /// it: on 6.18 the reserve (the node's high watermark) is not dirtyable and the ratio
    /// is 819/4096; on 3.2 (before both rules, after the anonymous pages' exclusion: no
    /// swap here) free + file pages + 1, 20 %.
    #[test]
    fn the_report_reads_the_thresholds_as_proc_vmstat_does() {
        use crate::kernel::KernelEra;
        use crate::mm::vmstat::VmItem;
        for (era, reserve, num, den) in [
            (KernelEra::V6_18, true, 819, 4096),
            (KernelEra::new(3, 2), false, 20, 100),
        ] {
            let sc = crate::scenario::load_scenario(
                "dd-blockfs",
                &["machine.memory_per_node=64MiB".to_string()],
            )
            .expect("valid");
            let mut s = Sim::new(&sc, era.features("patched").unwrap()).unwrap();
            s.run(u64::MAX);
            let get = |i| s.vmstat.get(i) as u64;
            let high = s.nodes[0].watermark.high;
            let free = get(VmItem::NrFreePages);
            let free = if reserve { free - high } else { free };
            let avail = free + get(VmItem::NrInactiveFile) + get(VmItem::NrActiveFile) + 1;
            let v: std::collections::HashMap<_, _> = s.proc_vmstat().into_iter().collect();
            let thresh = v["nr_dirty_threshold"] as u64;
            assert_eq!(thresh, avail * num / den, "{era}");
            assert!(v["nr_dirty_background_threshold"] < v["nr_dirty_threshold"]);
        }
    }
}
