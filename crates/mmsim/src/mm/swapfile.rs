//! Swap (mm/swapfile.c, mm/swap_state.c, mm/page_io.c): one swap device, its slot map, the
//! swap cache, swap-out and swap-in.
//!
//! - A slot is free when no PTE refers to it (`swap_map` count 0) and no page is in the swap
//!   cache for it. get_swap_page scans for a free slot from where the last scan stopped.
//! - add_to_swap (reclaim of an anonymous page): allocate a slot, put the page in the swap
//!   cache (PG_swapcache, page_private = offset) and mark it dirty so pageout writes it.
//! - try_to_unmap turns each PTE into a swap entry (swap_duplicate); swap_writepage writes
//!   the page (pswpout); once clean and unmapped, __remove_mapping takes it out of the swap
//!   cache and frees it.
//! - do_swap_page: a swap PTE faults; the page is found in the swap cache (a minor fault)
//!   or read from the device (pswpin, a major fault), mapped, and the PTE's slot reference
//!   dropped. A write fault on a page only this PTE uses takes it out of the swap cache
//!   (reuse_swap_page) and dirties it; so does a read fault when more than half of the
//!   swap space is in use (vm_swap_full), the cgroup's swap is half used
//!   (mem_cgroup_swap_full, `memcg-swap-full`), or the page is locked; otherwise the page
//!   stays cached and clean, so reclaiming it again needs no IO.
//! - swapin_readahead: a swap-cache miss also reads the naturally aligned window around the
//!   faulting slot. 2.6.x–3.14 (feature `adaptive-swap-readahead` off): the whole
//!   cluster of 2^`page_cluster` slots around the faulting one (`[swap] page_cluster`,
//!   vm.page_cluster, default 3; 0 = one page per fault), clipped to the device. Every slot
//!   of the cluster in use by a PTE (swap_map > 0) and not in the swap cache (so not under
//!   writeback either) gets a page allocated as the fault's is (GFP_HIGHUSER_MOVABLE: below
//!   the min watermark, or in a cgroup at its limit, it reclaims), with one reclaim attempt
//!   and no sleeping (as file readahead's __GFP_NORETRY; the kernel's would retry and
//!   could even OOM); the first failure ends it — added to the swap cache locked
//!   and to the inactive anon list (lru_cache_add, drained at the end as the kernel's
//!   lru_add_drain), and read (pswpin, pgpgin each; pgmajfault only for the faulting page).
//!   Contiguous slots share one request. Readahead pages are not mapped and their owner is
//!   unknown (`mapping` NO_MAPPING, like the kernel's NULL page->mapping) until a fault on
//!   their slot finds them in the swap cache and maps them (a minor fault); otherwise
//!   reclaim drops them (clean, unmapped: __remove_mapping, no IO). v3.15+ (the feature
//!   on, both presets): readahead pages get PG_readahead, a fault that finds one counts a
//!   hit (lookup_swap_cache), and each miss sizes its window from the hits since the last
//!   miss (`SwapInfo::swapin_nr_pages`). The kernel also skips slot 0 (the swap header),
//!   which this swap area does not have.
//! - swap_vma_readahead (v4.14, feature `vma-swap-readahead`; from v4.16,
//!   `vma-swap-readahead-nonrot`, only when the swap device is not an `hdd`; `[swap]
//!   vma_ra_enabled`): an anonymous fault's readahead reads the swap entries of the PTEs
//!   around the faulting address instead of the slots around its slot. The window is
//!   __swapin_nr_pages over virtual page numbers with the VMA's own state
//!   (vma->swap_readahead_info: the last swap fault's address, its window, and the
//!   readahead pages faults found since): at most 2^min(page_cluster, 5) pages, starting
//!   at the fault when it follows the last one, ending at it when it precedes it, centred
//!   otherwise, clipped to the VMA and to the faulting PTE table. Every swap-cache lookup
//!   by a fault moves the VMA's address to it. tmpfs swap-in keeps the slot window.
//! - The content oracle: swap-out persists the page's version in the slot; swap-in (the
//!   faulting page and readahead pages alike) restores it when the read completes
//!   (`io_complete`).
//!
//! - Swap-in errors (`[swap] read_error_rate`): a failed read leaves the page in the swap
//!   cache unlocked and not uptodate (PG_error); the fault that waited for it, and any
//!   later fault on the slot, is VM_FAULT_SIGBUS and the task is killed with SIGBUS
//!   (do_swap_page's `!folio_test_uptodate` check).
//! - free_swap_and_cache: zapping a swap PTE (munmap, exit) frees the slot and, when the
//!   swap cache was its last user, drops the cached page at once.
//!
//! - tmpfs (shmem): reclaim writes a dirty tmpfs page with shmem_writepage: the page moves
//!   from its file's page cache to the swap cache, the file's slot keeps the swap entry
//!   (a reference on the swap slot), and the page is written like an anonymous one. The
//!   next read, write, fault or partial truncate of that page swaps it in
//!   (shmem_swapin_folio): from the swap cache, or read with the readahead window around
//!   the slot; the page goes back into the file dirty and the slot is freed. Truncating
//!   the file frees the slots of its swap entries (free_swap_and_cache). Without swap, or
//!   with the swap full, tmpfs pages stay resident (activated).
//!
//! - Slot allocation: the next-fit scan, or per-CPU clusters (`mm/swap_cluster.rs`);
//!   4.11–6.14 hand slots out and take them back in per-CPU batches of 64
//!   (`mm/swap_slots.rs`). With
//!   more than half of the swap in use, the next-fit scan takes back a slot that only the
//!   swap cache holds (its page unlocked and not under writeback; the page is dirtied), as
//!   scan_swap_map's __try_to_reclaim_swap does.
//!
//! Not modelled: swap priorities; shmem's own swap accounting in the inode
//! (info->swapped) and the huge (THP) tmpfs pages.

use crate::fs::{IoKind, IoRequest};
use crate::machine::profile::KFunc;
use crate::mm::memcontrol::MemcgId;
use crate::mm::memory::{pte, FaultResult};
use crate::mm::mmap::Vma;
use crate::mm::page::{pg, Pfn, NIL, NO_MAPPING, PAGE_SIZE};
use crate::mm::page_alloc::Gfp;
use crate::mm::rmap::{ANON_MAPPING, VM_WRITE};
use crate::mm::vmstat::VmItem;
use crate::sched::Wait;
use crate::sim::Sim;

/// The inode number IO requests use for the swap device.
pub const SWAP_INO: u32 = u32::MAX;

/// A swap device (swap_info_struct).
#[derive(Clone, Debug, Default)]
pub struct SwapInfo {
    /// Pages of swap space.
    pub nr_pages: u64,
    /// Free slots.
    pub free_pages: u64,
    /// PTE references per slot (swap_map without SWAP_HAS_CACHE).
    pub swap_map: Vec<u16>,
    /// The swap cache: the page cached for each slot, or NIL.
    pub cache: Vec<Pfn>,
    /// Content oracle: the version written to each slot.
    pub versions: Vec<u32>,
    /// Where the next free-slot scan starts.
    pub scan_next: usize,
    /// The block device the swap area lives on.
    pub dev: usize,
    /// vm.page_cluster: a swap-cache miss reads 2^page_cluster slots (0: just the one).
    pub page_cluster: u32,
    /// swapin_readahead_hits: readahead pages found by a fault since the last miss.
    pub readahead_hits: u32,
    /// swapin_nr_pages' prev_offset: the slot of the last miss that had no hits to go by.
    pub prev_offset: u32,
    /// swapin_nr_pages' last_readahead_pages.
    pub last_readahead_pages: u32,
    /// swap_use_vma_readahead: anonymous faults read ahead by virtual address (v4.14).
    pub vma_ra: bool,
    /// The clusters slots are allocated from (`mm/swap_cluster.rs`; v3.14 on a
    /// non-rotational device, v6.17 on every one); None: the next-fit scan alone.
    pub clusters: Option<crate::mm::swap_cluster::SwapClusters>,
    /// The per-CPU swap slots caches (`mm/swap_slots.c`, v4.11–6.14); None: slots are
    /// allocated and freed one at a time.
    pub slots_cache: Option<crate::mm::swap_slots::SwapSlotsCache>,
    /// SWAP_HAS_CACHE with no page: the slot sits in a CPU's swap slots cache (refilled
    /// and not handed out yet, or freed and not returned yet). Taken, not free.
    pub reserved: Vec<bool>,
    /// The zram device the area lives on (`mm/zram.rs`); None: a block device.
    pub zram: Option<crate::mm::zram::Zram>,
    /// zswap in front of the device (`mm/zswap.rs`); None: zswap off.
    pub zswap: Option<crate::mm::zswap::Zswap>,
}

/// SWAP_RA_ORDER_CEILING: VMA-based swap readahead reads at most 2^5 pages.
pub const SWAP_RA_ORDER_CEILING: u32 = 5;
/// SWAP_RA_HITS_MAX: the most readahead hits a VMA's state counts.
pub const SWAP_RA_HITS_MAX: u32 = 63;

/// vma->swap_readahead_info (v4.14): the VMA's last swap fault, as a virtual page number,
/// the readahead window it got, and the readahead pages faults found since.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwapRaInfo {
    /// Virtual page number of the last fault that looked up the swap cache.
    pub vpn: u64,
    /// The window of the last readahead, pages.
    pub win: u32,
    /// Readahead pages found since that readahead (at most SWAP_RA_HITS_MAX).
    pub hits: u32,
}

/// __swapin_nr_pages (v3.15): a readahead window. With no readahead hits to judge by, 2
/// pages when `offset` is next to `prev_offset`, else 1; with hits, hits + 2 rounded up to
/// a power of two ≥ 4; at most `max_pages`, at least half of `prev_win` ("don't shrink
/// readahead too fast").
pub fn swapin_window(
    prev_offset: u64,
    offset: u64,
    hits: u32,
    max_pages: u32,
    prev_win: u32,
) -> u32 {
    let mut pages = hits + 2;
    if pages == 2 {
        if offset != prev_offset.wrapping_add(1) && offset != prev_offset.wrapping_sub(1) {
            pages = 1;
        }
    } else {
        let mut roundup = 4;
        while roundup < pages {
            roundup <<= 1;
        }
        pages = roundup;
    }
    pages.min(max_pages).max(prev_win / 2)
}

impl SwapInfo {
    /// A swap area of `nr_pages` on block device `dev`, reading ahead 2^`page_cluster` slots.
    pub fn new(nr_pages: u64, dev: usize, page_cluster: u32) -> SwapInfo {
        SwapInfo {
            nr_pages,
            free_pages: nr_pages,
            swap_map: vec![0; nr_pages as usize],
            cache: vec![NIL; nr_pages as usize],
            versions: vec![0; nr_pages as usize],
            scan_next: 0,
            dev,
            page_cluster,
            readahead_hits: 0,
            prev_offset: 0,
            last_readahead_pages: 0,
            vma_ra: false,
            clusters: None,
            slots_cache: None,
            reserved: vec![false; nr_pages as usize],
            zram: None,
            zswap: None,
        }
    }
    fn slot_free(&self, off: usize) -> bool {
        self.swap_map[off] == 0 && self.cache[off] == NIL && !self.reserved[off]
    }
    /// Whether slot `off` is free (no PTE refers to it, no page caches it, no swap slots
    /// cache holds it).
    pub fn is_free(&self, off: u32) -> bool {
        self.slot_free(off as usize)
    }
    /// The slots a swap-cache miss on `off` reads: the naturally aligned cluster of
    /// 2^page_cluster slots containing it (start = off & ~mask, end = off | mask), clipped
    /// to the device.
    pub fn readahead_window(&self, off: u32) -> std::ops::Range<u32> {
        self.readahead_window_of(off, 1 << self.page_cluster)
    }
    /// The naturally aligned window of `pages` (a power of two) slots containing `off`,
    /// clipped to the device.
    pub fn readahead_window_of(&self, off: u32, pages: u32) -> std::ops::Range<u32> {
        let mask = u64::from(pages.max(1)) - 1;
        let start = u64::from(off) & !mask;
        let end = (u64::from(off) | mask).min(self.nr_pages.saturating_sub(1));
        start as u32..end as u32 + 1
    }

    /// swapin_nr_pages (v3.15): the readahead window for a miss on `off`. With no
    /// readahead hits since the last miss, read ahead (2 slots) only when `off` is next to
    /// the previous such miss, else just the page; with hits, the hits + 2 rounded up to a
    /// power of two ≥ 4; never more than 2^page_cluster, never less than half the last
    /// window ("don't shrink readahead too fast").
    pub fn swapin_nr_pages(&mut self, off: u32) -> u32 {
        let max_pages = 1u32 << self.page_cluster;
        if max_pages <= 1 {
            return 1;
        }
        let hits = std::mem::take(&mut self.readahead_hits);
        let pages = swapin_window(
            u64::from(self.prev_offset),
            u64::from(off),
            hits,
            max_pages,
            self.last_readahead_pages,
        );
        if hits == 0 {
            self.prev_offset = off;
        }
        self.last_readahead_pages = pages;
        pages
    }
}

impl Sim {
    /// Free swap pages.
    pub fn swap_free_pages(&self) -> u64 {
        self.swap.as_ref().map(|s| s.free_pages).unwrap_or(0)
    }

    /// A slot allocator's view of slot `off`: free, in use, or — with `reclaim` (the
    /// next-fit scan's and 6.17's cluster_scan_range) and more than half of the swap in
    /// use — held only by the swap cache and freed now (__try_to_reclaim_swap: its page
    /// unlocked, not under writeback; the page is dirtied).
    fn probe_slot(&mut self, off: u32, reclaim: bool) -> crate::mm::swap_cluster::Probe {
        use crate::mm::swap_cluster::Probe;
        let s = self.swap.as_ref().expect("swap");
        let (count, pfn) = (s.swap_map[off as usize], s.cache[off as usize]);
        if s.reserved[off as usize] {
            return Probe::Busy;
        }
        if count == 0 && pfn == NIL {
            return Probe::Free;
        }
        if reclaim
            && count == 0
            && self.vm_swap_full()
            && !self.PageLocked(pfn)
            && self.try_to_free_swap(pfn)
        {
            // With the swap slots cache on, the slot went to the CPU's return cache.
            return if self.swap.as_ref().expect("swap").reserved[off as usize] {
                Probe::Busy
            } else {
                Probe::Reclaimed
            };
        }
        Probe::Busy
    }

    /// vm_swap_full: more than half of the swap space is in use (nr_swap_pages * 2 <
    /// total_swap_pages).
    pub fn vm_swap_full(&self) -> bool {
        self.swap
            .as_ref()
            .is_some_and(|s| s.free_pages * 2 < s.nr_pages)
    }

    /// get_swap_page: a free slot for the running CPU, or None. From its cluster when the
    /// device has clusters (`SwapClusters::alloc`); else, and under 3.14's rule when no
    /// cluster is free, the next-fit scan from the slot after the last one handed out
    /// (si->cluster_next). 6.17's lists have no next-fit fallback.
    pub(crate) fn get_swap_page(&mut self) -> Option<u32> {
        let cpu = self.cur.cpu;
        let s = self.swap.as_mut()?;
        if s.free_pages == 0 {
            return None;
        }
        let n = s.nr_pages as usize;
        // The clusters are taken out while they allocate, so that the probe can reclaim a
        // slot (whose freeing the allocator then accounts itself).
        // 6.17's scan takes back cache-only slots, except beside an active swap slots
        // cache (no kernel had both; its frees would go to the return cache).
        let slots_cache_on = s.slots_cache.as_ref().is_some_and(|c| c.is_active());
        let swap_full = s.free_pages * 2 < s.nr_pages;
        if let Some(mut c) = s.clusters.take() {
            let lists = c.lists();
            let reclaim = lists && !slots_cache_on;
            let got = c.alloc(cpu, swap_full && reclaim, &mut |o| {
                self.probe_slot(o, reclaim)
            });
            let s = self.swap.as_mut().expect("swap");
            s.clusters = Some(c);
            if let Some(off) = got {
                s.scan_next = (off as usize + 1) % n;
                s.free_pages -= 1;
                if reclaim && s.free_pages == 0 {
                    self.swap_reclaim_work();
                }
                return Some(off);
            }
            if lists {
                // 6.14's allocator has no device-wide scan: this allocation fails (the
                // slots a full-cluster reclaim just freed serve the next one).
                return None;
            }
        }
        // The next-fit scan; with more than half of the swap in use it takes back a slot
        // only the swap cache holds (scan_swap_map's __try_to_reclaim_swap, every era),
        // whose freeing the clusters, if any, have counted.
        let start = self.swap.as_ref().expect("swap").scan_next;
        for i in 0..n {
            let off = (start + i) % n;
            if self.probe_slot(off as u32, true) == crate::mm::swap_cluster::Probe::Busy {
                continue;
            }
            let s = self.swap.as_mut().expect("swap");
            s.scan_next = (off + 1) % n;
            s.free_pages -= 1;
            if let Some(c) = s.clusters.as_mut() {
                c.take(off as u32);
            }
            return Some(off as u32);
        }
        None
    }

    /// swap_reclaim_work (v6.12), which swap_range_alloc schedules when an allocation
    /// fills the device (with swap full): swap_reclaim_full_clusters(force) frees the
    /// cache-only slots of as many full clusters as the device has clusters in use. The
    /// kernel runs it from a workqueue soon after; here it runs at once, in the allocating
    /// task.
    fn swap_reclaim_work(&mut self) {
        let Some(mut c) = self.swap.as_mut().and_then(|s| s.clusters.take()) else {
            return;
        };
        let in_use = self.swap.as_ref().map_or(0, |s| s.nr_pages - s.free_pages);
        let clusters = (in_use / u64::from(crate::mm::swap_cluster::SWAPFILE_CLUSTER)) as usize;
        c.reclaim_full_clusters(clusters, &mut |o| self.probe_slot(o, true));
        self.swap.as_mut().expect("swap").clusters = Some(c);
    }

    /// A slot whose last user (PTE or swap-cache page) may have left: free_swap_slot when
    /// it did.
    fn maybe_free_slot(&mut self, off: u32) {
        let unused = self
            .swap
            .as_ref()
            .is_some_and(|s| s.slot_free(off as usize));
        if unused {
            self.free_swap_slot(off);
        }
    }

    /// swap_entry_free: the slot goes back to the pool (nr_swap_pages, its cluster), and
    /// the memcg's swap charge and the shadow go with it.
    pub(crate) fn swap_entry_free(&mut self, off: u32) {
        let Some(s) = self.swap.as_mut() else {
            return;
        };
        debug_assert!(s.slot_free(off as usize), "slot {off} freed while in use");
        s.free_pages += 1;
        if let Some(c) = s.clusters.as_mut() {
            c.release(off);
        }
        self.mem_cgroup_uncharge_swap(off);
        if let Some(sh) = self.swap_shadows.get_mut(off as usize) {
            *sh = 0;
        }
        // swap_range_free's swap_slot_free_notify: zram drops the slot's data; zswap's
        // copy goes too (zswap_invalidate).
        self.zram_free_page(off);
        self.zswap_invalidate(off);
    }

    /// add_to_swap: allocate a slot and add the page (locked, anonymous) to the swap cache.
    pub fn add_to_swap(&mut self, pfn: Pfn) -> bool {
        let prev = self.enter(KFunc::AddToSwap);
        let Some(off) = self.folio_alloc_swap(pfn) else {
            self.leave(prev);
            return false;
        };
        self.add_to_swap_cache(pfn, off);
        self.SetPageDirty(pfn);
        self.leave(prev);
        true
    }

    /// folio_alloc_swap: a free slot for `pfn`, charged to its memcg
    /// (mem_cgroup_try_charge_swap: a memcg at memory.swap.max keeps its page). None when
    /// the swap area is full (a swap.events `fail`) or the memcg at its limit.
    fn folio_alloc_swap(&mut self, pfn: Pfn) -> Option<u32> {
        let got = self.alloc_swap_slot_cached();
        let Some(off) = got.or_else(|| self.get_swap_page()) else {
            if self.swap.is_some() {
                self.mem_cgroup_swap_fail(pfn);
            }
            return None;
        };
        if !self.mem_cgroup_try_charge_swap(pfn, off) {
            // put_swap_folio: the slot goes back (free_swap_slot).
            self.free_swap_slot(off);
            return None;
        }
        Some(off)
    }

    /// add_to_swap_cache: the page (locked) enters the swap cache for slot `off`, which
    /// takes a reference (PG_swapcache, page_private = offset); swap-cache pages count as
    /// file pages.
    fn add_to_swap_cache(&mut self, pfn: Pfn, off: u32) {
        self.get_page(pfn);
        self.SetPageSwapCache(pfn);
        self.mem[pfn as usize].private = off;
        self.swap.as_mut().expect("swap").cache[off as usize] = pfn;
        self.vmstat.inc(VmItem::NrFilePages);
        self.mod_swapcache_stat(pfn, 1);
    }

    /// swap_duplicate: one more PTE refers to the slot.
    pub fn swap_duplicate(&mut self, off: u32) {
        if let Some(s) = self.swap.as_mut() {
            s.swap_map[off as usize] += 1;
        }
    }

    /// swap_free: a PTE reference to the slot is gone.
    pub fn swap_free(&mut self, off: u32) {
        if let Some(s) = self.swap.as_mut() {
            let c = &mut s.swap_map[off as usize];
            debug_assert!(*c > 0, "swap_free of an unused slot");
            *c = c.saturating_sub(1);
        }
        self.maybe_free_slot(off);
    }

    /// swap_writepage: write a dirty, locked swap-cache page to its slot. With zswap, a
    /// stored page's writeback starts and ends here (no IO); a page zswap rejects goes to
    /// the device (pswpout), unless its memcg has memory.zswap.writeback off: then it is
    /// left dirty and locked, and false tells reclaim to activate it
    /// (AOP_WRITEPAGE_ACTIVATE).
    pub fn swap_writepage(&mut self, pfn: Pfn) -> bool {
        let prev = self.enter(KFunc::SwapWritepage);
        if self.zswap().is_some() {
            if self.zswap_store(pfn) {
                self.TestClearPageDirty(pfn);
                self.SetPageReclaim(pfn);
                self.SetPageWriteback(pfn);
                self.mod_dirty_writeback_stat(pfn, VmItem::NrWriteback, 1);
                self.unlock_page(pfn);
                self.end_page_writeback(pfn, SWAP_INO);
                self.leave(prev);
                return true;
            }
            let memcg = self.mem[pfn as usize].memcg;
            if memcg != crate::mm::memcontrol::NO_MEMCG
                && !self.mem_cgroup_zswap_writeback_enabled(memcg)
            {
                self.leave(prev);
                return false;
            }
        }
        self.__swap_writepage(pfn);
        self.leave(prev);
        true
    }

    /// __swap_writepage: start the write of a locked swap-cache page to the device
    /// (pswpout), unlocked once submitted.
    pub(crate) fn __swap_writepage(&mut self, pfn: Pfn) {
        self.TestClearPageDirty(pfn);
        self.SetPageReclaim(pfn);
        self.SetPageWriteback(pfn);
        self.mod_dirty_writeback_stat(pfn, VmItem::NrWriteback, 1);
        self.vmstat.inc(VmItem::Pswpout);
        self.count_memcg_page_event(pfn, VmItem::Pswpout, 1);
        self.vmstat.add(VmItem::Pgpgout, (PAGE_SIZE / 1024) as i64);
        self.unlock_page(pfn);
        let off = self.mem[pfn as usize].private;
        let dev = self.swap.as_ref().expect("swap").dev;
        let req = IoRequest {
            dev,
            kind: IoKind::Write,
            ino: SWAP_INO,
            pages: self.pfn_buf_of(pfn),
            cpu: self.cur.cpu,
        };
        self.submit_bio(req, u64::from(off) + (1 << 40));
    }

    /// NR_SWAPCACHE (5.12, "mm: memcg: add swapcache stat for cgroup v2"): the page
    /// entered (+1) or left (-1) the swap cache; /proc/vmstat nr_swapcached and its memcg's
    /// memory.stat `swapcached`.
    fn mod_swapcache_stat(&mut self, pfn: Pfn, n: i64) {
        self.vmstat.add(VmItem::NrSwapcached, n);
        self.mod_memcg_page_stat(pfn, VmItem::NrSwapcached, n);
    }

    /// try_to_free_swap (folio_free_swap) on a locked page: a swap-cache page no swap
    /// entry refers to any more and not under writeback leaves the swap cache, dirty (its
    /// slot's copy is gone), and its slot is freed. Returns whether it did. A page whose
    /// owner is unknown (a readahead page nobody mapped, `mapping` NO_MAPPING) keeps its
    /// slot: the kernel would leave an orphan page behind, which mmsim has no model of;
    /// reclaim drops such a page, clean and unmapped, with its slot.
    pub(crate) fn try_to_free_swap(&mut self, pfn: Pfn) -> bool {
        if !self.PageSwapCache(pfn)
            || self.PageWriteback(pfn)
            || self.mem[pfn as usize].mapping == NO_MAPPING
        {
            return false;
        }
        let off = self.mem[pfn as usize].private;
        if self.swap.as_ref().expect("swap").swap_map[off as usize] != 0 {
            return false;
        }
        self.delete_from_swap_cache(pfn);
        self.put_page(pfn); // the swap cache's reference
        self.SetPageDirty(pfn);
        true
    }

    /// __delete_from_swap_cache.
    fn delete_from_swap_cache(&mut self, pfn: Pfn) {
        let off = self.mem[pfn as usize].private;
        self.swap.as_mut().expect("swap").cache[off as usize] = NIL;
        self.ClearPageSwapCache(pfn);
        self.mem[pfn as usize].private = 0;
        self.vmstat.dec(VmItem::NrFilePages);
        self.mod_swapcache_stat(pfn, -1);
        self.maybe_free_slot(off);
    }

    /// __remove_mapping for a swap-cache page: freeze at 2 references (cache + isolation),
    /// recheck dirty, delete from the swap cache (leaving a shadow entry in the slot when
    /// reclaim of `target` evicts it, v5.9). The page is then free to go.
    pub fn remove_from_swap_cache_frozen(&mut self, pfn: Pfn, target: Option<MemcgId>) -> bool {
        self.charge_atomic();
        if self.mem[pfn as usize].refcount != 2
            || self.PageDirty(pfn)
            || self.mem[pfn as usize].mapped()
        {
            return false;
        }
        self.mem[pfn as usize].refcount = 0;
        let off = self.mem[pfn as usize].private;
        self.mem_cgroup_swapout(pfn, off);
        let shadow = match target {
            Some(t) if self.features.anon_workingset => self.workingset_eviction(pfn, t),
            _ => None,
        };
        self.delete_from_swap_cache(pfn);
        if let (Some(sh), Some(slot)) = (shadow, self.swap_shadows.get_mut(off as usize)) {
            // Only a slot still in use (a PTE refers to it) keeps the shadow.
            if self
                .swap
                .as_ref()
                .is_some_and(|s| s.swap_map[off as usize] != 0)
            {
                *slot = sh;
            }
        }
        self.mem[pfn as usize].mapping = NO_MAPPING;
        true
    }

    /// Drop a swap-cache page that is no longer mapped nor needed (free_swap_and_cache).
    pub fn end_swap_writeback(&mut self, pfn: Pfn) {
        let off = self.mem[pfn as usize].private;
        let v = self
            .completing_version
            .unwrap_or(self.mem[pfn as usize].version);
        if let Some(s) = self.swap.as_mut() {
            s.versions[off as usize] = v;
        }
    }

    /// do_swap_page: fault in a page from swap (the fault's majorness is left in
    /// `fault_was_major`). A page whose swap read failed (unlocked, not uptodate) is
    /// VM_FAULT_SIGBUS, as in the kernel: the task gets SIGBUS.
    pub fn do_swap_page(
        &mut self,
        mm: u32,
        vma: &Vma,
        vpn: u64,
        p: u64,
        write: bool,
    ) -> Result<FaultResult, Wait> {
        let prev = self.enter(KFunc::DoSwapPage);
        let r = self.__do_swap_page(mm, vma, vpn, p, write);
        self.leave(prev);
        r
    }

    fn __do_swap_page(
        &mut self,
        mm: u32,
        vma: &Vma,
        vpn: u64,
        p: u64,
        write: bool,
    ) -> Result<FaultResult, Wait> {
        let off = pte::pfn(p);
        let sw = self.swap.as_ref().expect("swap entry without swap");
        let mut cached = sw.cache[off as usize];
        if cached == NIL {
            if self.features.swap_sync_io_bypass
                && sw.zram.is_some()
                && sw.swap_map[off as usize] == 1
            {
                return self.do_swap_page_sync(mm, vma, vpn, p, write);
            }
            let w = self.swapin_miss(off, Some((mm, vpn)), true);
            // A synchronous device (zram) read the page already: go on with it.
            cached = self.swap.as_ref().expect("swap").cache[off as usize];
            if cached == NIL || self.PageLocked(cached) {
                return Err(w);
            }
        }
        let pfn = cached;
        self.lookup_swap_cache_hit(pfn, Some((mm, vpn)));
        if self.PageLocked(pfn) {
            return Err(Wait::PageLocked(pfn));
        }
        if !self.PageUptodate(pfn) {
            // The read ended unlocked and not uptodate: it failed (end_swap_bio_read,
            // PG_error). do_swap_page: `if (!folio_test_uptodate(folio)) ret =
            // VM_FAULT_SIGBUS` — the PTE keeps its swap entry, the page stays in the swap
            // cache until reclaim or free_swap_and_cache drops it.
            return Ok(FaultResult::Sigbus);
        }
        if self.PageWriteback(pfn) {
            // Mapping a page under writeback is fine; the PTE stays clean.
        }
        // Map it (page_add_anon_rmap), drop the PTE's slot reference.
        self.get_page(pfn); // the PTE's reference
        if !self.mem[pfn as usize].mapped() {
            // __folio_set_anon: the faulting VMA's anon_vma, or the family's root when
            // other PTEs of forked relatives still hold the slot. A page another of them
            // has mapped already keeps its anon_vma.
            let shared = self.swap.as_ref().expect("swap").swap_map[off as usize] > 1;
            let av = self.anon_vma_for(mm, shared);
            let pg_ = &mut self.mem[pfn as usize];
            pg_.mapping = ANON_MAPPING | av;
            pg_.index = vpn;
        }
        self.charge_atomic();
        self.mem[pfn as usize].mapcount += 1;
        if self.mem[pfn as usize].mapcount == 0 {
            self.vmstat.inc(VmItem::NrAnonPages);
        }
        if vma.flags & crate::mm::rmap::VM_LOCKED != 0 {
            self.mlock_vma_page(pfn); // folio_add_anon_rmap_ptes' mlock_vma_folio
        }
        self.swap_free(off);
        self.mm_mut(mm).swapents -= 1;
        self.mm_mut(mm).rss_anon += 1;
        let only_user = self.swap.as_ref().expect("swap").swap_map[off as usize] == 0
            && self.mem[pfn as usize].mapcount == 0;
        let mut writable = false;
        let mut dirty = false;
        if write
            && vma.flags & VM_WRITE != 0
            && only_user
            && !self.PageWriteback(pfn)
            && self.trylock_page(pfn)
        {
            // reuse_swap_page: the slot's copy is about to be stale; drop it.
            self.delete_from_swap_cache(pfn);
            self.put_page(pfn); // the swap cache's reference
            self.SetPageDirty(pfn);
            self.unlock_page(pfn);
            writable = true;
            dirty = true;
        } else if vma.flags & crate::mm::rmap::VM_LOCKED != 0
            || self.mem[pfn as usize].test(pg::MLOCKED)
            || self.mem_cgroup_swap_full(pfn)
        {
            // should_try_to_free_swap (2.6.28's test in do_swap_page): with the swap space
            // (or the cgroup's, `memcg-swap-full`) half used, or for a locked page, the
            // slot goes now and the page is dirty: its next reclaim writes it again.
            self.try_to_free_swap(pfn);
        }
        self.set_pte(mm, vpn, pte::mk(pfn, writable, dirty));
        Ok(FaultResult::Handled)
    }

    /// do_swap_page's path for a synchronous device (v4.15, `swap-sync-io-bypass`; zram):
    /// the slot `p` names is referred to by this PTE alone and not cached, so the swap
    /// cache and readahead are skipped. A new page charged to the slot's memcg
    /// (mem_cgroup_swapin_charge_folio), owned by the faulting address, takes the slot's
    /// shadow entry (workingset_refault), goes on the LRU and is read at once
    /// (swap_read_folio on the faulting CPU: pswpin, pgpgin, pgmajfault); it is mapped and
    /// the slot freed (swap_free: zram drops its copy, memory.swap.current falls), so the
    /// page is dirty in all but the PTE: its next reclaim allocates a new slot and writes
    /// it. The allocation may reclaim: if the PTE or the slot changed meanwhile, the page
    /// goes and the fault is retried (swapcache_prepare's and pte_same's tests). A failed
    /// read is SIGBUS, the PTE keeps its entry.
    fn do_swap_page_sync(
        &mut self,
        mm: u32,
        vma: &Vma,
        vpn: u64,
        p: u64,
        write: bool,
    ) -> Result<FaultResult, Wait> {
        let off = pte::pfn(p);
        let pfn = self.swapin_alloc(off)?;
        let sw = self.swap.as_ref().expect("swap");
        let dev = sw.dev;
        if self.mm(mm).pgtable.get(vpn) != p
            || sw.swap_map[off as usize] != 1
            || sw.cache[off as usize] != NIL
        {
            self.put_page(pfn);
            return Ok(FaultResult::Handled);
        }
        self.mem_cgroup_swapin_uncharge_swap(off);
        self.count_swap_majfault();
        self.mem[pfn as usize].flags |= pg::SWAPBACKED;
        self.swapin_refault(pfn, off);
        // swap_read_folio, synchronous.
        let d = &mut self.devices[dev];
        d.nr_reads += 1;
        d.pages_read += 1;
        self.zram_read_page(pfn);
        self.charge(self.costs.bio_complete_page_ps);
        if self.io_fault(dev, IoKind::Read, SWAP_INO, u64::from(off)) {
            self.record_io_error(
                dev,
                "read",
                SWAP_INO,
                u64::from(off),
                "swap-in: not uptodate: SIGBUS to the faulting task",
            );
            self.put_page(pfn);
            return Ok(FaultResult::Sigbus);
        }
        let av = self.anon_vma_for(mm, false);
        let version = self.swap.as_ref().expect("swap").versions[off as usize];
        {
            let pg_ = &mut self.mem[pfn as usize];
            pg_.mapping = ANON_MAPPING | av;
            pg_.index = vpn;
            pg_.version = version;
            pg_.flags |= pg::UPTODATE;
        }
        self.lru_cache_add(pfn);
        self.count_pswpin(pfn);
        // Map it: the allocation's reference is the PTE's.
        self.charge_atomic();
        self.mem[pfn as usize].mapcount += 1;
        self.vmstat.inc(VmItem::NrAnonPages);
        if vma.flags & crate::mm::rmap::VM_LOCKED != 0 {
            self.mlock_vma_page(pfn);
        }
        self.swap_free(off);
        self.mm_mut(mm).swapents -= 1;
        self.mm_mut(mm).rss_anon += 1;
        let writable = write && vma.flags & VM_WRITE != 0;
        self.set_pte(mm, vpn, pte::mk(pfn, writable, writable));
        Ok(FaultResult::Handled)
    }

    /// A swap-cache miss at slot `off` (do_swap_page, shmem_swapin_folio): allocate a page
    /// (this one may reclaim and sleep) charged to the memcg the slot was charged to
    /// (mem_cgroup_swapin_charge_folio), add it to the swap cache locked and read it, with
    /// the readahead window around the slot, or around the faulting address when `anon`
    /// (the fault's mm and virtual page) is given and the VMA-based readahead is in use;
    /// an anonymous page is owned by that address at once. A fault counts pgmajfault.
    /// Returns what to sleep on. If the slot was cached while the page was allocated, the
    /// page goes and the caller waits for (or looks again at) the cached one.
    fn swapin_miss(&mut self, off: u32, anon: Option<(u32, u64)>, fault: bool) -> Wait {
        let pfn = match self.swapin_alloc(off) {
            Ok(p) => p,
            Err(w) => return w,
        };
        // The allocation may have reclaimed and waited for a TLB flush, and the machine ran
        // up to it: a relative sharing the slot (fork) may have faulted it into the swap
        // cache meanwhile. The kernel's swapcache_prepare then fails (-EEXIST) and the
        // fault looks again: the new page goes, the fault waits for that read.
        let cached = self.swap.as_ref().expect("swap").cache[off as usize];
        if cached != NIL {
            self.put_page(pfn);
            return if self.PageLocked(cached) {
                Wait::PageLocked(cached)
            } else {
                Wait::Until(self.now())
            };
        }
        if let Some((mm, vpn)) = anon {
            let pg_ = &mut self.mem[pfn as usize];
            pg_.mapping = ANON_MAPPING | mm;
            pg_.index = vpn;
        }
        self.add_to_swap_cache_for_read(pfn, off);
        self.mem_cgroup_swapin_uncharge_swap(off);
        if fault {
            self.count_swap_majfault();
        }
        match anon {
            Some((mm, vpn)) if self.swap.as_ref().expect("swap").vma_ra => {
                self.swap_vma_readahead(mm, vpn, off, pfn)
            }
            _ => self.swapin_read_around(off, pfn),
        }
        Wait::PageLocked(pfn)
    }

    /// The read of a swap-cache miss at slot `off`, whose page `pfn` was just added to the
    /// swap cache locked (swap_cluster_readahead, also shmem's): the slot alone, or the
    /// readahead window around it, one request per run of contiguous slots.
    fn swapin_read_around(&mut self, off: u32, pfn: Pfn) {
        let adaptive = self.features.adaptive_swap_readahead;
        let sw = self.swap.as_mut().expect("swap");
        let window = if adaptive {
            let pages = sw.swapin_nr_pages(off);
            sw.readahead_window_of(off, pages)
        } else {
            sw.readahead_window(off)
        };
        if window.len() <= 1 {
            self.swap_read_run(&[pfn], off);
            return;
        }
        let pr = self.enter(KFunc::SwapinReadahead);
        let mut reads = Vec::with_capacity(window.len());
        reads.push((off, pfn));
        for s in window {
            if s == off {
                continue;
            }
            self.charge(self.costs.radix_level_ps); // swap-cache lookup, swap_map check
            match self.read_swap_cache_async(s, true) {
                Some(Some(p)) => reads.push((s, p)),
                Some(None) => {}
                None => break,
            }
        }
        self.swap_read_runs(reads);
        self.leave(pr);
    }

    /// swap_vma_ra_win (v4.14): the window of a swap-cache miss by an anonymous fault on
    /// virtual page `vpn` of `mm`, as virtual pages, from the VMA's readahead state, which
    /// it resets to this fault, the window and no hits. None: only the faulting page.
    fn swap_vma_ra_win(&mut self, mm: u32, vpn: u64) -> Option<std::ops::Range<u64>> {
        let page_cluster = self.swap.as_ref().expect("swap").page_cluster;
        let max_win = 1u32 << page_cluster.min(SWAP_RA_ORDER_CEILING);
        if max_win == 1 {
            return None;
        }
        let vma = self
            .mm_mut(mm)
            .find_vma_mut(vpn << crate::mm::page::PAGE_SHIFT)
            .expect("a fault in a VMA");
        let prev = vma.swap_ra;
        let win = swapin_window(prev.vpn, vpn, prev.hits, max_win, prev.win);
        vma.swap_ra = SwapRaInfo { vpn, win, hits: 0 };
        if win == 1 {
            return None;
        }
        let w = u64::from(win);
        let left = if vpn == prev.vpn.wrapping_add(1) {
            vpn
        } else if prev.vpn == vpn.wrapping_add(1) {
            (vpn + 1).saturating_sub(w)
        } else {
            vpn.saturating_sub((w - 1) / 2)
        };
        let right = left + w;
        // Within the VMA and the faulting PTE table (the PMD's reach).
        let ptrs = crate::mm::memory::PTRS_PER_PTE;
        let table = vpn - vpn % ptrs;
        let (vs, ve) = (
            vma.start >> crate::mm::page::PAGE_SHIFT,
            vma.end >> crate::mm::page::PAGE_SHIFT,
        );
        Some(left.max(vs).max(table)..right.min(ve).min(table + ptrs))
    }

    /// swap_vma_readahead (v4.14): after a swap-cache miss by an anonymous fault on `vpn`
    /// of `mm` (slot `off`, its page `pfn` in the swap cache locked), read the swap entries
    /// of the PTEs in the window around the address that are in use and not cached, each
    /// a readahead page (PG_readahead, swap_ra); an allocation that fails skips its slot.
    /// One request per run of contiguous slots.
    fn swap_vma_readahead(&mut self, mm: u32, vpn: u64, off: u32, pfn: Pfn) {
        let Some(window) = self.swap_vma_ra_win(mm, vpn) else {
            self.swap_read_run(&[pfn], off);
            return;
        };
        let pr = self.enter(KFunc::SwapinReadahead);
        let mut reads = Vec::with_capacity(window.end.saturating_sub(window.start) as usize);
        reads.push((off, pfn));
        for v in window {
            self.charge(self.costs.mem_access_ps); // ptep_get_lockless
            if v == vpn {
                continue;
            }
            let p = self.mm(mm).pgtable.get(v);
            if p & pte::PRESENT != 0 || p & pte::SWAP == 0 {
                continue;
            }
            let s = pte::pfn(p);
            self.charge(self.costs.radix_level_ps); // swap-cache lookup, swap_map check
            if let Some(Some(page)) = self.read_swap_cache_async(s, true) {
                reads.push((s, page));
            }
        }
        self.swap_read_runs(reads);
        self.leave(pr);
    }

    /// read_swap_cache_async for slot `s`: `Some(Some(page))` when the slot is in use and
    /// not cached and got a page (the fault's GFP with one reclaim attempt, never
    /// sleeping), added to the swap cache locked, owner unknown until a fault maps it
    /// (page->mapping stays NULL); `Some(None)` when the slot needs no read; None when the
    /// allocation failed. A `readahead` page (swapin readahead's, not MADV_WILLNEED's) is
    /// marked PG_readahead for the window's hit count and counted as swap_ra.
    fn read_swap_cache_async(&mut self, s: u32, readahead: bool) -> Option<Option<Pfn>> {
        let sw = self.swap.as_ref().expect("swap");
        if sw.swap_map[s as usize] == 0 || sw.cache[s as usize] != NIL {
            // A free slot, or a page already cached (reading, under writeback, mapped).
            return Some(None);
        }
        let memcg = self.swapin_memcg(s);
        let gfp = Gfp {
            noretry: true,
            ..Gfp::KERNEL
        };
        let p = self.alloc_page_charged(gfp, memcg).ok()?;
        // The allocation may have reclaimed: another path (a relative's fault in a nested
        // step, zswap's writeback of this slot) may have cached the slot meanwhile —
        // swapcache_prepare's -EEXIST: the new page goes.
        if self.swap.as_ref().expect("swap").cache[s as usize] != NIL {
            self.put_page(p);
            return Some(None);
        }
        self.add_to_swap_cache_for_read(p, s);
        self.mem_cgroup_swapin_uncharge_swap(s);
        if readahead && self.swap_ra_counts_hits() {
            self.SetPageReadahead(p);
        }
        if readahead && self.features.vma_swap_readahead {
            self.vmstat.inc(VmItem::SwapRa);
        }
        Some(Some(p))
    }

    /// MADV_WILLNEED's swap-ins (swapin_walk_pmd_entry for anonymous memory,
    /// shmem_swapin_range for tmpfs): read each slot of `slots` that is in use and not in
    /// the swap cache into a new swap-cache page (read_swap_cache_async; nobody waits, and
    /// no fault maps the page yet), one request per run of contiguous slots, then push the
    /// pages onto the LRU. A slot whose page cannot be had without sleeping is passed over.
    pub(crate) fn swapin_slots_async(&mut self, slots: &[u32]) {
        if self.swap.is_none() || slots.is_empty() {
            return;
        }
        let pr = self.enter(KFunc::SwapinReadahead);
        let mut reads = Vec::with_capacity(slots.len());
        for &s in slots {
            self.charge(self.costs.radix_level_ps); // swap-cache lookup, swap_map check
            if let Some(Some(page)) = self.read_swap_cache_async(s, false) {
                reads.push((s, page));
            }
        }
        self.swap_read_runs(reads);
        self.leave(pr);
    }

    /// Start the reads of (slot, page) pairs, one request per run of contiguous slots (the
    /// plug merges them), and push the new pages onto the LRU (lru_add_drain).
    fn swap_read_runs(&mut self, mut reads: Vec<(u32, Pfn)>) {
        reads.sort_unstable();
        let mut i = 0;
        while i < reads.len() {
            let mut j = i + 1;
            while j < reads.len() && reads[j].0 == reads[j - 1].0 + 1 {
                j += 1;
            }
            let run: Vec<Pfn> = reads[i..j].iter().map(|r| r.1).collect();
            self.swap_read_run(&run, reads[i].0);
            i = j;
        }
        self.lru_add_drain(); // push the new pages onto the LRU now
    }

    /// Whether readahead pages carry PG_readahead for the window's hit count: the adaptive
    /// slot window (v3.15) and the VMA window (v4.14, always adaptive) size themselves by
    /// hits; 2.6.x's fixed cluster does not.
    fn swap_ra_counts_hits(&self) -> bool {
        self.features.adaptive_swap_readahead || self.swap.as_ref().expect("swap").vma_ra
    }

    /// swap_cache_get_folio's hit on `pfn`: a page read ahead earns a hit (v3.15) — the
    /// global count of swapin_nr_pages, or, for a fault (`anon`: its mm and virtual page)
    /// under VMA-based readahead, the VMA's, whose address moves to this fault's (v4.14).
    fn lookup_swap_cache_hit(&mut self, pfn: Pfn, anon: Option<(u32, u64)>) {
        let vma_ra = self.swap.as_ref().expect("swap").vma_ra;
        let readahead = self.swap_ra_counts_hits() && self.TestClearPageReadahead(pfn);
        if readahead && self.features.vma_swap_readahead {
            self.vmstat.inc(VmItem::SwapRaHit);
        }
        match anon {
            Some((mm, vpn)) if vma_ra => {
                let vma = self
                    .mm_mut(mm)
                    .find_vma_mut(vpn << crate::mm::page::PAGE_SHIFT)
                    .expect("a fault in a VMA");
                let hits = (vma.swap_ra.hits + u32::from(readahead)).min(SWAP_RA_HITS_MAX);
                vma.swap_ra = SwapRaInfo {
                    vpn,
                    hits,
                    ..vma.swap_ra
                };
            }
            _ if readahead => self.swap.as_mut().expect("swap").readahead_hits += 1,
            _ => {}
        }
    }

    /// shmem_writepage (mm/shmem.c; shmem_writeout in 6.16+), from pageout: a dirty,
    /// unmapped tmpfs page moves from its file's page cache to the swap cache and is
    /// written to a new slot (pswpout). The file's slot keeps the swap entry, which holds a
    /// reference on the swap slot (swap_shmem_alloc) until the page is swapped in again or
    /// the file truncated. The slot is charged to the page's memcg (memory.swap.current).
    /// Returns false when no slot can be had — the swap area is full, or the memcg is at
    /// memory.swap.max — or swap_writepage keeps the page, and reclaim redirties and
    /// activates the page (AOP_WRITEPAGE_ACTIVATE).
    pub fn shmem_writepage(&mut self, pfn: Pfn) -> bool {
        let prev = self.enter(KFunc::ShmemWritepage);
        let Some(off) = self.folio_alloc_swap(pfn) else {
            self.leave(prev);
            return false;
        };
        let ino = self.mem[pfn as usize].mapping;
        // swap_shmem_alloc: the file's reference on the slot.
        self.swap_duplicate(off);
        self.add_to_swap_cache(pfn, off);
        // shmem_delete_from_page_cache: the file's slot takes the swap entry.
        self.tree_lock(ino);
        self.__delete_from_page_cache(pfn, Some(u64::from(off)));
        self.tree_unlock(ino);
        self.put_page(pfn); // the page cache's reference
                            // (False: zswap rejected it and its memcg has memory.zswap.writeback off; it stays
                            // in the swap cache, dirty.)
        let written = self.swap_writepage(pfn);
        self.leave(prev);
        written
    }

    /// shmem_swapin_folio (mm/shmem.c): bring back page `index` of tmpfs inode `ino`, whose
    /// slot in the file holds swap entry `off` (every tmpfs read, write, fault and partial
    /// truncate that meets a swap entry comes here first, as shmem_get_folio does).
    ///
    /// - Not in the swap cache: a page charged to the memcg the slot was charged to
    ///   (mem_cgroup_swapin_charge_folio) is added to the swap cache and read, with the
    ///   readahead window around the slot (swap_cluster_readahead; pswpin, pgpgin); a
    ///   fault (`fault`) counts pgmajfault. The caller sleeps on the page and looks again.
    /// - In the swap cache: wait while it is locked or under writeback (a swap-out still
    ///   being written), then the page takes the file's slot again (shmem_add_to_page_cache
    ///   replaces the swap entry), leaves the swap cache, is dirtied (its only copy is in
    ///   memory now) and the slot is freed (swap_free: memory.swap.current falls).
    ///
    /// `Ok(true)`: the page is in the file again (unlocked); `Ok(false)`: its swap read
    /// failed (-EIO; the entry stays); `Err`: sleep, then call again.
    pub fn shmem_swapin(
        &mut self,
        ino: u32,
        index: u64,
        off: u32,
        fault: bool,
    ) -> Result<bool, Wait> {
        let prev = self.enter(KFunc::ShmemSwapin);
        let r = self.__shmem_swapin(ino, index, off, fault);
        self.leave(prev);
        r
    }

    fn __shmem_swapin(
        &mut self,
        ino: u32,
        index: u64,
        off: u32,
        fault: bool,
    ) -> Result<bool, Wait> {
        self.charge(self.costs.radix_level_ps); // swap-cache lookup
        let cached = self.swap.as_ref().expect("a swap entry without swap").cache[off as usize];
        if cached == NIL {
            // Owner set when the page takes the file's slot again.
            return Err(self.swapin_miss(off, None, fault));
        }
        let pfn = cached;
        self.lookup_swap_cache_hit(pfn, None);
        if self.PageLocked(pfn) {
            return Err(Wait::PageLocked(pfn));
        }
        if !self.PageUptodate(pfn) {
            return Ok(false); // the read failed (PG_error): -EIO
        }
        if self.PageWriteback(pfn) {
            return Err(Wait::PageWriteback(pfn));
        }
        let locked = self.trylock_page(pfn);
        debug_assert!(locked, "an unlocked page locks");
        // shmem_add_to_page_cache: the page replaces the swap entry in the file.
        self.tree_lock(ino);
        self.charge_tree_walk(ino);
        let old = self
            .inode_mut(ino)
            .mapping
            .tree
            .store(index, crate::mm::radix_tree::Entry::Page(pfn));
        debug_assert_eq!(old, crate::mm::radix_tree::Entry::Shadow(u64::from(off)));
        self.tree_events(ino);
        self.tree_unlock(ino);
        // delete_from_swap_cache: its reference becomes the page cache's.
        self.delete_from_swap_cache(pfn);
        {
            let p = &mut self.mem[pfn as usize];
            p.mapping = ino;
            p.index = index;
        }
        self.vmstat.inc(VmItem::NrFilePages);
        self.vmstat.inc(VmItem::NrShmem);
        self.mod_memcg_page_stat(pfn, VmItem::NrShmem, 1);
        self.SetPageDirty(pfn); // folio_mark_dirty: shmem's __set_page_dirty_no_writeback
        self.swap_free(off); // the file's reference: the slot is free
        self.unlock_page(pfn);
        Ok(true)
    }

    /// free_swap_and_cache: a PTE's reference to slot `off` goes (zap_pte_range: munmap,
    /// exit, truncate of a private mapping). When only the swap cache still holds the slot
    /// and its page is unmapped, not locked and not under writeback, the page leaves the
    /// swap cache at once and the slot is free (__try_to_reclaim_swap with TTRS_UNMAPPED |
    /// TTRS_FULL), instead of waiting for reclaim to find the page. (The kernel also sets
    /// the page dirty, for a user that still holds it; here nobody can map it again, and
    /// its last reference frees it.)
    pub fn free_swap_and_cache(&mut self, off: u32) {
        self.swap_free(off);
        let Some(s) = self.swap.as_ref() else {
            return;
        };
        let pfn = s.cache[off as usize];
        if s.swap_map[off as usize] != 0 || pfn == NIL {
            return;
        }
        if self.mem[pfn as usize].mapped() || self.PageWriteback(pfn) || !self.trylock_page(pfn) {
            return;
        }
        self.delete_from_swap_cache(pfn);
        self.unlock_page(pfn);
        self.put_page(pfn); // the swap cache's reference
    }

    /// Add a new page (locked, one allocation reference) to the swap cache for slot `off`
    /// and the LRU (lru_cache_add: inactive anon once the pagevec drains), for a read that
    /// is about to start. The allocation reference ends up with the cache.
    fn add_to_swap_cache_for_read(&mut self, pfn: Pfn, off: u32) {
        self.add_to_swap_cache_new(pfn, off);
    }

    /// __read_swap_cache_async's new page (locked, one allocation reference) for slot
    /// `off`: in the swap cache and on its way to the LRU, the slot's shadow entry making
    /// it a refault (workingset_refault). The allocation reference ends up with the cache.
    pub(crate) fn add_to_swap_cache_new(&mut self, pfn: Pfn, off: u32) {
        {
            let pg_ = &mut self.mem[pfn as usize];
            pg_.private = off;
            pg_.flags |= pg::SWAPBACKED | pg::SWAPCACHE | pg::LOCKED;
        }
        self.get_page(pfn); // swap cache reference
        self.swap.as_mut().expect("swap").cache[off as usize] = pfn;
        self.vmstat.inc(VmItem::NrFilePages);
        self.mod_swapcache_stat(pfn, 1);
        self.swapin_refault(pfn, off);
        self.lru_cache_add(pfn);
        self.put_page(pfn); // the allocation reference: cache + pagevec hold it now
    }

    /// The page a swap-in of slot `off` reads into: charged to the memcg the slot was
    /// charged to (mem_cgroup_swapin_charge_folio); a wait when the allocation sleeps.
    /// With no memory to be had the swap-in fails: VM_FAULT_OOM in a fault (do_swap_page;
    /// shmem_swapin_folio's -ENOMEM), the same back-off elsewhere (`vm_fault_oom`).
    fn swapin_alloc(&mut self, off: u32) -> Result<Pfn, Wait> {
        let memcg = self.swapin_memcg(off);
        match self.alloc_page_charged(Gfp::KERNEL, memcg) {
            Ok(pfn) => Ok(pfn),
            Err(crate::mm::page_alloc::AllocError::Wait(w)) => Err(w),
            Err(crate::mm::page_alloc::AllocError::NoMem) => Err(self.vm_fault_oom()),
        }
    }

    /// v5.9: the slot's shadow entry (left by the swap-out) makes the swap-in of `pfn` a
    /// refault (workingset_refault), which may activate it.
    fn swapin_refault(&mut self, pfn: Pfn, off: u32) {
        let shadow = self
            .swap_shadows
            .get_mut(off as usize)
            .map_or(0, std::mem::take);
        if shadow != 0 && self.features.anon_workingset && self.workingset_refault(pfn, shadow) {
            self.SetPageActive(pfn);
            self.workingset_activation(pfn);
        }
    }

    /// A fault had to read from swap: pgmajfault (the machine's and the memcg's).
    fn count_swap_majfault(&mut self) {
        self.vmstat.inc(VmItem::Pgmajfault);
        self.count_memcg_events(self.current_memcg(), VmItem::Pgmajfault, 1);
        self.fault_was_major = true;
    }

    /// A page read from swap: pswpin (the machine's and its memcg's) and pgpgin.
    fn count_pswpin(&mut self, pfn: Pfn) {
        self.vmstat.inc(VmItem::Pswpin);
        self.count_memcg_page_event(pfn, VmItem::Pswpin, 1);
        self.vmstat.add(VmItem::Pgpgin, (PAGE_SIZE / 1024) as i64);
    }

    /// swap_readpage for the new swap-cache pages of contiguous slots from `first`: zswap
    /// loads the slots it holds; the rest are read from the device, one request per run
    /// of contiguous slots (pswpin, pgpgin).
    fn swap_read_run(&mut self, pages: &[Pfn], first: u32) {
        if self.zswap().is_none() {
            self.swap_read_bio(pages, first);
            return;
        }
        let mut start = 0;
        for (i, &pfn) in pages.iter().enumerate() {
            if self.zswap_load(pfn) {
                if start < i {
                    self.swap_read_bio(&pages[start..i], first + start as u32);
                }
                start = i + 1;
            }
        }
        if start < pages.len() {
            self.swap_read_bio(&pages[start..], first + start as u32);
        }
    }

    /// One read request for the swap-cache pages of contiguous slots from `first`.
    fn swap_read_bio(&mut self, pages: &[Pfn], first: u32) {
        for &pfn in pages {
            self.count_pswpin(pfn);
        }
        let dev = self.swap.as_ref().expect("swap").dev;
        let pr = self.enter(KFunc::SwapReadpage);
        let mut list = self.take_pfn_buf();
        list.extend_from_slice(pages);
        self.submit_bio(
            IoRequest {
                dev,
                kind: IoKind::Read,
                ino: SWAP_INO,
                pages: list,
                cpu: self.cur.cpu,
            },
            u64::from(first) + (1 << 40),
        );
        self.leave(pr);
    }
}
