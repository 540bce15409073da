//! Page reclaim (mm/vmscan.c, v4.2 semantics with one zone per node).
//!
//! - kswapd (one kthread per node) is woken by the allocator when a node's free pages fall
//!   below the low watermark and reclaims until they are above the high watermark
//!   (balance_pgdat), one shrink_node pass per step, lowering the priority from
//!   DEF_PRIORITY (12) when a pass reclaims nothing.
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
use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn};
use crate::mm::page_alloc::{int_sqrt, Gfp};
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// SWAP_CLUSTER_MAX.
pub const SWAP_CLUSTER_MAX: u64 = 32;
/// DEF_PRIORITY.
pub const DEF_PRIORITY: u32 = 12;
/// vm_swappiness default.
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
        }
    }
}

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

/// Per-node reclaim state (zone->flags, kswapd's progress, the shadow-node list_lru).
#[derive(Clone, Debug, Default)]
pub struct ReclaimState {
    /// Shadow-only radix-tree nodes, oldest first (workingset_shadow_nodes list_lru).
    pub shadow_nodes: std::collections::VecDeque<(u32, crate::mm::radix_tree::NodeId)>,
    /// ZONE_DIRTY: the tail of the inactive file list is full of dirty pages; kswapd may write.
    pub zone_dirty: bool,
    /// ZONE_WRITEBACK: pages at the tail are under writeback; kswapd should wait.
    pub zone_writeback: bool,
    /// kswapd's current priority within balance_pgdat.
    pub kswapd_priority: u32,
    /// kswapd is between a wake-up and reaching the high watermark.
    pub kswapd_active: bool,
}

impl Sim {
    fn lru_size(&self, node: usize, lru: LruList) -> u64 {
        self.nodes[node].lruvec.lists[lru as usize].len
    }

    /// Total swap pages configured (0 without a swap device).
    pub fn total_swap_pages(&self) -> u64 {
        self.swap.as_ref().map(|s| s.nr_pages).unwrap_or(0)
    }

    /// inactive_list_is_low for file (active > inactive) or anon (inactive·ratio < active,
    /// ratio = int_sqrt(10 × node GB), false without swap).
    pub fn inactive_list_is_low(&self, node: usize, file: bool) -> bool {
        if file {
            self.lru_size(node, LruList::ActiveFile) > self.lru_size(node, LruList::InactiveFile)
        } else {
            if self.total_swap_pages() == 0 {
                return false;
            }
            let gb = u64::from(self.nodes[node].present_pages) >> (30 - 12);
            let ratio = if gb > 0 { int_sqrt(10 * gb).max(1) } else { 1 };
            self.lru_size(node, LruList::InactiveAnon) * ratio
                < self.lru_size(node, LruList::ActiveAnon)
        }
    }

    /// get_scan_count: pages to scan per list [IA, AA, IF, AF] at this priority.
    pub fn get_scan_count(&mut self, node: usize, sc: &ScanControl) -> [u64; 4] {
        let prev = self.enter(KFunc::GetScanCount);
        let size = |s: &Sim, l: LruList| s.lru_size(node, l);
        #[derive(PartialEq)]
        enum Balance {
            Equal,
            Fract,
            Anon,
            File,
        }
        let mut fraction = [0u64; 2];
        let mut denominator = 1u64;
        let free = self.node_free_pages(node);
        let file_pages = size(self, LruList::ActiveFile) + size(self, LruList::InactiveFile);
        let balance = if !sc.may_swap || self.total_swap_pages() == 0 || self.swap_free_pages() == 0
        {
            Balance::File
        } else if sc.priority == 0 {
            Balance::Equal
        } else if file_pages + free <= self.nodes[node].watermark.high {
            Balance::Anon
        } else if self.features.file_only_when_plenty
            && !self.inactive_list_is_low(node, true)
            && (size(self, LruList::InactiveFile) >> sc.priority) > 0
        {
            Balance::File
        } else {
            let anon_prio = SWAPPINESS;
            let file_prio = 200 - anon_prio;
            let anon = size(self, LruList::ActiveAnon) + size(self, LruList::InactiveAnon);
            let lv = &mut self.nodes[node].lruvec;
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
            fraction = [ap, fp];
            denominator = ap + fp + 1;
            Balance::Fract
        };
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
            let scan = size(self, lru) >> sc.priority;
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

    /// shrink_zone: reclaim from one node's lruvec (and prune shadow nodes, as the slab
    /// shrinkers would).
    pub fn shrink_node(&mut self, node: usize, sc: &mut ScanControl) {
        let prev = self.enter(KFunc::ShrinkNode);
        self.shrink_lruvec(node, sc);
        self.scan_shadow_nodes(node);
        self.leave(prev);
    }

    /// shrink_lruvec (see the module comment).
    pub fn shrink_lruvec(&mut self, node: usize, sc: &mut ScanControl) {
        let prev = self.enter(KFunc::ShrinkLruvec);
        let mut nr = self.get_scan_count(node, sc);
        let targets = nr;
        let mut nr_reclaimed = 0u64;
        let nr_to_reclaim = sc.nr_to_reclaim;
        let mut scan_adjusted = !sc.is_kswapd && sc.priority == DEF_PRIORITY;
        self.init_tlb_ubc();
        const ORDER: [LruList; 4] = [
            LruList::InactiveAnon,
            LruList::ActiveAnon,
            LruList::InactiveFile,
            LruList::ActiveFile,
        ];
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            for (i, lru) in ORDER.into_iter().enumerate() {
                if nr[i] > 0 {
                    let n = nr[i].min(SWAP_CLUSTER_MAX);
                    nr[i] -= n;
                    nr_reclaimed += self.shrink_list(node, lru, n, sc);
                }
            }
            if nr_reclaimed < nr_to_reclaim || scan_adjusted {
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
        if self.inactive_list_is_low(node, false) {
            self.shrink_active_list(node, SWAP_CLUSTER_MAX, LruList::ActiveAnon, sc);
        }
        self.leave(prev);
    }

    /// shrink_list: an active list only when its inactive list is low.
    fn shrink_list(&mut self, node: usize, lru: LruList, n: u64, sc: &mut ScanControl) -> u64 {
        match lru {
            LruList::ActiveFile | LruList::ActiveAnon => {
                if self.inactive_list_is_low(node, lru == LruList::ActiveFile) {
                    self.shrink_active_list(node, n, lru, sc);
                }
                0
            }
            _ => self.shrink_inactive_list(node, n, lru, sc),
        }
    }

    /// isolate_lru_pages: take up to `n` pages from the tail of `lru` (lru_lock held),
    /// each with a reference and PG_lru cleared. Returns (isolated, scanned).
    fn isolate_lru_pages(&mut self, node: usize, n: u64, lru: LruList, out: &mut Vec<Pfn>) -> u64 {
        let prev = self.enter(KFunc::IsolateLruPages);
        let mut scanned = 0;
        while scanned < n {
            let tail = self.nodes[node].lruvec.lists[lru as usize].tail;
            if tail == crate::mm::page::NIL {
                break;
            }
            scanned += 1;
            self.charge(self.costs.mem_access_ps);
            // __isolate_lru_page: get_page_unless_zero, ClearPageLRU.
            self.del_page_from_lru_list(tail, lru);
            self.get_page(tail);
            self.ClearPageLRU(tail);
            out.push(tail);
        }
        self.leave(prev);
        scanned
    }

    /// shrink_active_list.
    pub fn shrink_active_list(&mut self, node: usize, n: u64, lru: LruList, _sc: &mut ScanControl) {
        let prev = self.enter(KFunc::ShrinkActiveList);
        let file = lru == LruList::ActiveFile;
        self.lru_add_drain();
        self.lru_lock(node);
        let mut hold = Vec::with_capacity(n as usize);
        let scanned = self.isolate_lru_pages(node, n, lru, &mut hold);
        let taken = hold.len() as u64;
        self.vmstat.add(isolated_item(file), taken as i64);
        self.vmstat.add(VmItem::Pgrefill, scanned as i64);
        self.nodes[node].lruvec.recent_scanned[file as usize] += taken;
        self.lru_unlock(node);
        let mut keep_active = Vec::new();
        let mut deactivate = Vec::with_capacity(hold.len());
        let mut rotated = 0u64;
        for pfn in hold {
            if self.mem[pfn as usize].test(pg::UNEVICTABLE) {
                deactivate.push(pfn);
                continue;
            }
            let (referenced, vm_flags) = self.page_referenced(pfn);
            if referenced > 0 {
                rotated += 1;
                // Seed 001: referenced file pages of executable mappings get another trip
                // on the active list.
                if self.features.exec_protect
                    && vm_flags & crate::mm::rmap::VM_EXEC != 0
                    && !self.mem[pfn as usize].test(pg::SWAPBACKED)
                {
                    keep_active.push(pfn);
                    continue;
                }
            }
            self.ClearPageActive(pfn);
            deactivate.push(pfn);
        }
        self.lru_lock(node);
        self.nodes[node].lruvec.recent_rotated[file as usize] += rotated;
        let mut to_free = Vec::new();
        let pm = self.enter(KFunc::MoveActivePagesToLru);
        for pfn in keep_active {
            self.putback_one(pfn, &mut to_free);
        }
        let mut moved = 0;
        for pfn in deactivate {
            if self.putback_one(pfn, &mut to_free) {
                moved += 1;
            }
        }
        self.leave(pm);
        self.vmstat.add(VmItem::Pgdeactivate, moved);
        self.vmstat.add(isolated_item(file), -(taken as i64));
        self.lru_unlock(node);
        for pfn in to_free {
            self.free_hot_cold_page(pfn);
        }
        self.leave(prev);
    }

    /// Put an isolated page back on the list its flags name (lru_lock held) and drop the
    /// isolation reference; a page whose last reference that was is queued for freeing.
    /// Returns true if it went back on a list.
    fn putback_one(&mut self, pfn: Pfn, to_free: &mut Vec<Pfn>) -> bool {
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
        n: u64,
        lru: LruList,
        sc: &mut ScanControl,
    ) -> u64 {
        let prev = self.enter(KFunc::ShrinkInactiveList);
        let file = lru == LruList::InactiveFile;
        self.lru_add_drain();
        self.lru_lock(node);
        let mut list = Vec::with_capacity(n as usize);
        let scanned = self.isolate_lru_pages(node, n, lru, &mut list);
        let taken = list.len() as u64;
        self.vmstat.add(isolated_item(file), taken as i64);
        self.vmstat.add(
            if sc.is_kswapd {
                VmItem::PgscanKswapd
            } else {
                VmItem::PgscanDirect
            },
            scanned as i64,
        );
        sc.nr_scanned += scanned;
        self.lru_unlock(node);
        if taken == 0 {
            self.leave(prev);
            return 0;
        }
        let stat = self.shrink_page_list(node, &mut list, sc);
        self.lru_lock(node);
        self.nodes[node].lruvec.recent_scanned[file as usize] += taken;
        self.vmstat.add(
            if sc.is_kswapd {
                VmItem::PgstealKswapd
            } else {
                VmItem::PgstealDirect
            },
            stat.reclaimed as i64,
        );
        let pb = self.enter(KFunc::PutbackInactivePages);
        let mut to_free = Vec::new();
        for pfn in list {
            let active = self.mem[pfn as usize].test(pg::ACTIVE);
            let f = !self.mem[pfn as usize].test(pg::SWAPBACKED);
            if self.putback_one(pfn, &mut to_free) && active {
                self.nodes[node].lruvec.recent_rotated[f as usize] += 1;
            }
        }
        self.leave(pb);
        self.vmstat.add(isolated_item(file), -(taken as i64));
        self.lru_unlock(node);
        for pfn in to_free {
            self.free_hot_cold_page(pfn);
        }
        // Flag the zone for kswapd (v4.2): all isolated pages under writeback, or all dirty
        // and not queued for IO.
        let st = &mut self.reclaim[node];
        if stat.nr_writeback > 0 && stat.nr_writeback == taken {
            st.zone_writeback = true;
        }
        if stat.nr_unqueued_dirty == taken {
            st.zone_dirty = true;
        }
        if stat.nr_unqueued_dirty > 0 {
            // Reclaim found dirty pages the flusher has not reached: kick it.
            for d in 0..self.devices.len() {
                self.wb_start_background_writeback(d);
            }
        }
        self.leave(prev);
        stat.reclaimed
    }

    /// page_check_references.
    pub fn page_check_references(&mut self, pfn: Pfn) -> PageReferences {
        let (referenced_ptes, vm_flags) = self.page_referenced(pfn);
        let referenced_page = self.TestClearPageReferenced(pfn);
        if vm_flags & crate::mm::rmap::VM_LOCKED != 0 {
            return PageReferences::Reclaim;
        }
        let swapbacked = self.mem[pfn as usize].test(pg::SWAPBACKED);
        if referenced_ptes > 0 {
            if swapbacked {
                return PageReferences::Activate;
            }
            // All mapped pages start out with page table references from the instantiating
            // fault, so look twice: activate on the second reference.
            self.SetPageReferenced(pfn);
            if referenced_page || referenced_ptes > 1 {
                return PageReferences::Activate;
            }
            if vm_flags & crate::mm::rmap::VM_EXEC != 0 {
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
    fn shrink_page_list(
        &mut self,
        node: usize,
        list: &mut Vec<Pfn>,
        sc: &mut ScanControl,
    ) -> ShrinkStat {
        let prev = self.enter(KFunc::ShrinkPageList);
        let mut st = ShrinkStat::default();
        let mut ret = Vec::with_capacity(list.len());
        let mut free = Vec::new();
        let mut nr_activate = 0;
        for &pfn in list.iter() {
            self.charge(self.costs.mem_access_ps * 4);
            if !self.trylock_page(pfn) {
                ret.push(pfn);
                continue;
            }
            let p = &self.mem[pfn as usize];
            if p.mapped() || p.test(pg::SWAPCACHE) {
                sc.nr_scanned += 1; // mapped pages count twice
            }
            if p.test(pg::UNEVICTABLE) {
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            if p.test(pg::WRITEBACK) {
                // Global reclaim: tag for immediate reclaim at writeback end and move on.
                st.nr_writeback += 1;
                self.SetPageReclaim(pfn);
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            let references = self.page_check_references(pfn);
            match references {
                PageReferences::Activate => {
                    self.SetPageActive(pfn);
                    nr_activate += 1;
                    self.unlock_page(pfn);
                    ret.push(pfn);
                    continue;
                }
                PageReferences::Keep => {
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
            {
                // shmem/tmpfs: shmem_writepage is not modelled, the page stays resident.
                // (A swap-cache page without an anon mapping is a swap-in nobody has mapped
                // yet, e.g. readahead: clean and unmapped, it is removed below.)
                self.SetPageActive(pfn);
                nr_activate += 1;
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            if anon
                && !self.mem[pfn as usize].test(pg::SWAPCACHE)
                && (!sc.may_swap || !self.add_to_swap(pfn))
            {
                self.SetPageActive(pfn);
                nr_activate += 1;
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            if self.mem[pfn as usize].mapped() && sc.may_unmap {
                match self.try_to_unmap(pfn, true) {
                    crate::mm::rmap::TtuResult::Fail => {
                        self.SetPageActive(pfn);
                        nr_activate += 1;
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
                if file && (!sc.is_kswapd || !self.reclaim[node].zone_dirty) {
                    // Immediate reclaim when the flusher has written it.
                    st.nr_unqueued_dirty += 1;
                    self.SetPageReclaim(pfn);
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
                self.pageout(pfn);
                st.nr_unqueued_dirty += 1;
                ret.push(pfn); // the page is now under writeback (or was unlocked)
                continue;
            }
            if !self.__remove_mapping(pfn, true) {
                self.unlock_page(pfn);
                ret.push(pfn);
                continue;
            }
            // The page is frozen at 0 references: a non-atomic unlock is legal.
            self.__ClearPageLocked(pfn);
            st.reclaimed += 1;
            free.push(pfn);
        }
        self.vmstat.add(VmItem::Pgactivate, nr_activate);
        // Seed 002: every deferred TLB flush happens before the batch's pages are freed.
        self.try_to_unmap_flush();
        for pfn in free {
            self.free_hot_cold_page(pfn);
        }
        *list = ret;
        self.leave(prev);
        st
    }

    /// pageout: write a dirty page from reclaim (clear dirty, PG_reclaim, start writeback).
    fn pageout(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::Pageout);
        if self.mem[pfn as usize].test(pg::SWAPBACKED) && self.mem[pfn as usize].test(pg::SWAPCACHE)
        {
            self.swap_writepage(pfn);
        } else {
            let ino = self.mem[pfn as usize].mapping;
            if self.TestClearPageDirty(pfn) {
                self.account_page_cleaned(ino);
            }
            self.SetPageReclaim(pfn);
            self.SetPageWriteback(pfn);
            self.vmstat.inc(VmItem::NrWriteback);
            self.unlock_page(pfn);
            self.submit_write(ino, vec![pfn]);
        }
        self.vmstat.inc(VmItem::NrVmscanWrite);
        self.leave(prev);
    }

    /// __remove_mapping: under tree_lock, freeze the page's references at 2 (cache +
    /// isolation), recheck dirty, and replace its slot by a workingset shadow entry.
    pub fn __remove_mapping(&mut self, pfn: Pfn, reclaimed: bool) -> bool {
        let prev = self.enter(KFunc::RemoveMapping);
        if self.mem[pfn as usize].test(pg::SWAPCACHE) {
            let ok = self.remove_from_swap_cache_frozen(pfn);
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
        let shadow = if reclaimed {
            let pr = self.enter(KFunc::WorkingsetEviction);
            let node = self.mem[pfn as usize].node as usize;
            let s = self.workingset_eviction(node);
            self.leave(pr);
            s
        } else {
            None
        };
        self.__delete_from_page_cache(pfn, shadow);
        if shadow.is_some() {
            self.shadow_node_track(ino, index);
        }
        self.tree_unlock(ino);
        self.leave(prev);
        true
    }

    /// try_to_free_pages: direct reclaim by the allocating task. Returns pages reclaimed.
    pub fn try_to_free_pages(&mut self, gfp: Gfp) -> u64 {
        let prev = self.enter(KFunc::TryToFreePages);
        self.vmstat.inc(VmItem::Allocstall);
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, false, gfp);
        let zl = self.zonelist_nodes();
        let writeback_threshold = sc.nr_to_reclaim + sc.nr_to_reclaim / 2;
        loop {
            for &n in &zl {
                self.shrink_node(n, &mut sc);
                if sc.nr_reclaimed >= sc.nr_to_reclaim {
                    break;
                }
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim {
                break;
            }
            if sc.nr_scanned > writeback_threshold {
                for d in 0..self.devices.len() {
                    self.wb_start_background_writeback(d);
                }
            }
            if sc.priority == 0 {
                break;
            }
            sc.priority -= 1;
        }
        self.leave(prev);
        sc.nr_reclaimed
    }

    /// Wake kswapd of every node below its low watermark (wakeup_kswapd).
    pub fn wakeup_kswapd(&mut self, node: usize) {
        let Some(t) = self.kswapd.get(node).copied().flatten() else {
            return;
        };
        if self.zone_watermark_ok(node, self.nodes[node].watermark.high)
            && !self.reclaim[node].kswapd_active
        {
            return;
        }
        let now = self.now();
        self.wake_up(t, now);
    }

    /// One step of kswapd: one shrink_node pass of balance_pgdat, or go to sleep when the
    /// node is balanced. Returns true if it stays runnable.
    pub fn kswapd_step(&mut self, tid: crate::sched::TaskId, node: usize) -> bool {
        let prev = self.enter(KFunc::Kswapd);
        let high = self.nodes[node].watermark.high;
        if self.zone_watermark_ok(node, high) {
            // Balanced: clear the zone flags and sleep until woken.
            let st = &mut self.reclaim[node];
            st.zone_dirty = false;
            st.zone_writeback = false;
            st.kswapd_active = false;
            st.kswapd_priority = DEF_PRIORITY;
            self.tasks[tid].state = crate::sched::TaskState::Sleeping;
            self.leave(prev);
            return false;
        }
        if !self.reclaim[node].kswapd_active {
            self.reclaim[node].kswapd_active = true;
            self.reclaim[node].kswapd_priority = DEF_PRIORITY;
            self.vmstat.inc(VmItem::Pageoutrun);
        }
        let pb = self.enter(KFunc::BalancePgdat);
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX.max(high), true, Gfp::KERNEL);
        sc.priority = self.reclaim[node].kswapd_priority;
        sc.may_writepage = true;
        self.shrink_node(node, &mut sc);
        self.leave(pb);
        let st = &mut self.reclaim[node];
        if sc.nr_reclaimed == 0 {
            if st.kswapd_priority > 0 {
                st.kswapd_priority -= 1;
            } else {
                // Nothing reclaimable at the lowest priority: back off (wait_iff_congested)
                // rather than spin; the allocator's OOM path handles true exhaustion.
                st.kswapd_priority = DEF_PRIORITY;
                let at = self.now() + CONGESTION_WAIT_PS;
                self.leave(prev);
                self.sleep_on(tid, crate::sched::Wait::Until(at));
                return false;
            }
        }
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

/// congestion_wait(BLK_RW_ASYNC, HZ/50): how long reclaim backs off when the pages it finds
/// are all under writeback, 20 ms.
pub const CONGESTION_WAIT_PS: u64 = 20_000_000_000;

/// Counters from one shrink_page_list call.
#[derive(Clone, Copy, Debug, Default)]
struct ShrinkStat {
    reclaimed: u64,
    nr_writeback: u64,
    nr_unqueued_dirty: u64,
}

fn isolated_item(file: bool) -> VmItem {
    if file {
        VmItem::NrIsolatedFile
    } else {
        VmItem::NrIsolatedAnon
    }
}
