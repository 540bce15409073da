//! madvise(2) (mm/madvise.c): MADV_DONTNEED, MADV_COLD, MADV_PAGEOUT and MADV_FREE.
//!
//! - `dontneed`: zap the range's PTEs (zap_page_range_single with no details): private
//!   anonymous pages and swap entries are freed, so the next touch finds zeroes; file and
//!   shmem pages are only unmapped (a dirty PTE dirties its page) and stay cached.
//! - `cold` (v5.4, `madvise-cold-pageout`): after a drain of this CPU's LRU batches, each
//!   present page the process alone maps (page_mapcount 1) loses its PTE's young bit (the
//!   range is flushed from the TLBs) and PG_referenced, and is deactivated
//!   (`deactivate_page`: the head of its inactive list; under MGLRU any folio, from
//!   v6.14 one not in the oldest generation yet).
//!   From v6.6 (`madvise-active-workingset`) an active page gets PG_workingset first,
//!   for COLD and PAGEOUT alike, as shrink_active_list's deactivation gives it.
//! - `pageout` (v5.4): the same pages are isolated from the LRU and reclaimed at once
//!   (reclaim_pages → shrink_page_list, node by node): clean file pages are dropped with
//!   a shadow entry, dirty ones written, anonymous ones swapped out (kept, and activated,
//!   without swap). Before v6.10 (`pageout-ignore-references`) the walk clears the young
//!   bits and reclaim checks references as usual; from v6.10 the bits stay and reclaim
//!   ignores references. File pages are paged out too (the task owns its files).
//!
//! - `free` (v4.5, `madvise-free`; private anonymous memory only): swap entries are
//!   freed; the pages become lazily freeable (`madvise_free`, `mark_page_lazyfree`): clean,
//!   not swap-backed, on the inactive file list. Reclaim discards one not written since
//!   (try_to_unmap's MADV_FREE case in `mm/rmap.rs`, pglazyfreed) and keeps, swap-backed
//!   again, one written since.
//!
//! - `normal`, `sequential`, `random` (madvise_update_vma): the range's VMAs get the hint
//!   (VM_SEQ_READ, VM_RAND_READ, or neither), a VMA the range covers in part split first
//!   (split_vma; mmsim does not merge VMAs again). MADV_SEQUENTIAL faults read ahead the
//!   file's whole window and MADV_RANDOM ones only the page (`filemap_fault`); references
//!   through an MADV_SEQUENTIAL mapping do not count (page_referenced, and zap_pte_range
//!   does not pass a young bit on), and from v6.3 (`vma-has-recency`) neither do those
//!   through an MADV_RANDOM one: reclaim skips such mappings (`mm/rmap.rs`).
//! - `willneed` (madvise_willneed): a file mapping's range is read in (force_page_cache_ra,
//!   as POSIX_FADV_WILLNEED: at most max(io_pages, the file's window) pages from v4.10);
//!   the swapped-out pages of anonymous memory (swapin_walk_pmd_entry) and of a tmpfs
//!   mapping (shmem_swapin_range) are read into the swap cache, nobody waiting (v3.8,
//!   `madvise-willneed-swapin`; before, EBADF on anonymous memory and nothing on tmpfs).
//!
//! A VM_LOCKED mapping makes `cold`, `pageout` and `free` EINVAL (can_madv_lru_vma), after
//! the mappings before it were advised; a hole in the range makes any advice ENOMEM after
//! the rest was. Not modelled: the other advice.

use crate::machine::profile::KFunc;
use crate::mm::memory::{pte, ZapDetails, PTRS_PER_PTE};
use crate::mm::page::{pg, Pfn, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::page_alloc::Gfp;
use crate::mm::rmap::{VM_LOCKED, VM_RAND_READ, VM_SEQ_READ};
use crate::mm::vmscan::ScanControl;
use crate::sched::TaskId;
use crate::sim::Sim;
use crate::workload::{Errno, Madvice, OpResult};

impl Sim {
    /// madvise(addr, len, advice) (do_madvise).
    pub fn sys_madvise(&mut self, tid: TaskId, addr: u64, len: u64, advice: Madvice) -> OpResult {
        let Some(mm) = self.tasks[tid].mm else {
            return OpResult::Err(Errno::EINVAL);
        };
        if !addr.is_multiple_of(PAGE_SIZE) {
            return OpResult::Err(Errno::EINVAL);
        }
        let known = match advice {
            Madvice::Dontneed
            | Madvice::Normal
            | Madvice::Sequential
            | Madvice::Random
            | Madvice::Willneed => true,
            Madvice::Cold | Madvice::Pageout => self.features.madvise_cold_pageout,
            Madvice::Free => self.features.madvise_free,
        };
        if !known {
            return OpResult::Err(Errno::EINVAL); // an advice the kernel does not know
        }
        let Some(end) = crate::mm::mmap::page_range_end(addr, len) else {
            return OpResult::Err(Errno::EINVAL);
        };
        if end == addr {
            return OpResult::None;
        }
        let prev = self.enter(KFunc::DoMadvise);
        let vmas: Vec<(u64, u64, u64, Option<u32>)> = self
            .mm(mm)
            .vmas
            .range(..end)
            .map(|(_, v)| (v.start, v.end, v.flags, v.file))
            .filter(|&(_, e, _, _)| e > addr)
            .collect();
        let mut covered = addr;
        let mut hole = false;
        for (vs, ve, flags, file) in vmas {
            hole |= vs > covered;
            let (s, e) = (vs.max(addr), ve.min(end));
            covered = e;
            let anon = file.is_none();
            match advice {
                Madvice::Normal | Madvice::Sequential | Madvice::Random => {
                    self.madvise_update_vma(mm, (vs, ve), (s, e), advice);
                    continue;
                }
                Madvice::Willneed => {
                    if let Err(errno) = self.madvise_willneed(mm, vs, s, e) {
                        self.leave(prev);
                        return OpResult::Err(errno);
                    }
                    continue;
                }
                _ => {}
            }
            // can_madv_lru_vma; MADV_FREE only on private anonymous memory (a shared
            // anonymous mapping is a shmem file).
            if flags & VM_LOCKED != 0 || (advice == Madvice::Free && !anon) {
                self.leave(prev);
                return OpResult::Err(Errno::EINVAL);
            }
            let (sv, ev) = (s >> PAGE_SHIFT, e >> PAGE_SHIFT);
            match advice {
                Madvice::Dontneed => {
                    self.zap_page_range_single(mm, sv, ev, ZapDetails::default());
                }
                Madvice::Cold => self.madvise_cold_or_pageout(mm, sv, ev, false),
                Madvice::Pageout => self.madvise_cold_or_pageout(mm, sv, ev, true),
                Madvice::Free => self.madvise_free(mm, sv, ev),
                Madvice::Normal | Madvice::Sequential | Madvice::Random | Madvice::Willneed => {
                    unreachable!("handled above")
                }
            }
        }
        self.leave(prev);
        if hole || covered < end {
            return OpResult::Err(Errno::ENOMEM);
        }
        OpResult::None
    }

    /// madvise_update_vma for MADV_NORMAL / MADV_SEQUENTIAL / MADV_RANDOM: the part
    /// `[s, e)` of the VMA `[vs, ve)` gets the new hint, split off first when the range
    /// covers the VMA in part (at `s`, then at `e`). A VMA that has the hint already is
    /// left whole.
    fn madvise_update_vma(
        &mut self,
        mm: u32,
        (vs, ve): (u64, u64),
        (s, e): (u64, u64),
        advice: Madvice,
    ) {
        let old = self.mm(mm).vmas[&vs].flags;
        let new = match advice {
            Madvice::Normal => old & !(VM_SEQ_READ | VM_RAND_READ),
            Madvice::Sequential => (old & !VM_RAND_READ) | VM_SEQ_READ,
            _ => (old & !VM_SEQ_READ) | VM_RAND_READ,
        };
        if new == old {
            return;
        }
        let start = self.split_vma_to_range(mm, vs, ve, s, e);
        self.vma_set_flags(mm, start, new);
    }

    /// madvise_willneed of `[s, e)`, part of the VMA at `vs` (see the module comment).
    fn madvise_willneed(&mut self, mm: u32, vs: u64, s: u64, e: u64) -> Result<(), Errno> {
        let (file, index, ra) = {
            let v = &self.mm(mm).vmas[&vs];
            (v.file, v.pgoff_of(s), v.ra)
        };
        let (sv, ev) = (s >> PAGE_SHIFT, e >> PAGE_SHIFT);
        match file {
            None if !self.features.madvise_willneed_swapin => return Err(Errno::EBADF),
            None => {
                // swapin_walk_pmd_entry: the swap entries of the range's PTEs.
                let ptes = self.nonempty_ptes(mm, sv, ev);
                self.charge(self.costs.mem_access_ps * ptes.len() as u64); // the PTE walk
                let slots: Vec<u32> = ptes
                    .into_iter()
                    .map(|v| self.mm(mm).pgtable.get(v))
                    .filter(|p| p & pte::PRESENT == 0 && p & pte::SWAP != 0)
                    .map(pte::pfn)
                    .collect();
                self.swapin_slots_async(&slots);
            }
            Some(ino) if self.inode(ino).mapping.swapbacked => {
                if self.features.madvise_willneed_swapin {
                    // shmem_swapin_range: the swap entries in the file's page cache.
                    let slots: Vec<u32> = (index..index + (ev - sv))
                        .filter_map(|i| self.shmem_swap_entry(ino, i))
                        .collect();
                    self.charge(self.costs.radix_level_ps * (ev - sv)); // the xarray walk
                    self.swapin_slots_async(&slots);
                }
            }
            Some(ino) => {
                // vfs_fadvise(POSIX_FADV_WILLNEED) of the file's range.
                self.force_page_cache_readahead(ino, &ra, index, ev - sv);
            }
        }
        Ok(())
    }

    /// madvise_cold / madvise_pageout of the pages `[sv, ev)` of one VMA of `mm`
    /// (madvise_cold_or_pageout_pte_range for each PMD of the range, each followed by
    /// reclaim_pages of the pages it isolated for `pageout`).
    fn madvise_cold_or_pageout(&mut self, mm: u32, sv: u64, ev: u64, pageout: bool) {
        let prev = self.enter(KFunc::MadviseColdOrPageout);
        self.lru_add_drain();
        self.flush_tlb_batched_pending(mm);
        let ignore_references = pageout && self.features.pageout_ignore_references;
        let mut flush: Option<(u64, u64)> = None;
        let mut list = self.take_pfn_buf();
        let mut pmd = None;
        for v in self.nonempty_ptes(mm, sv, ev) {
            // The walk calls madvise_cold_or_pageout_pte_range once per PMD (a page table
            // of 512 PTEs), which reclaims what it isolated before it returns.
            let v_pmd = v >> 9;
            if pmd != Some(v_pmd) {
                pmd = Some(v_pmd);
                if !list.is_empty() {
                    if let Some((a, b)) = flush.take() {
                        self.flush_tlb_mm_range(mm, a, b + 1);
                    }
                    self.reclaim_pages(&mut list, ignore_references);
                }
            }
            let p = self.mm(mm).pgtable.get(v);
            if p & pte::PRESENT == 0 {
                continue;
            }
            self.charge(self.costs.mem_access_ps);
            let pfn = pte::pfn(p);
            // A large folio is split first (madvise_cold_or_pageout_pte_range splits one
            // it maps alone; here any), and its pages are looked at one by one.
            self.split_if_large(pfn);
            // A page another mapping shares is left alone (page_mapcount != 1).
            if self.mem[pfn as usize].mapcount != 0 {
                continue;
            }
            if !ignore_references && p & pte::YOUNG != 0 {
                if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(v) {
                    *pp &= !pte::YOUNG;
                }
                flush = Some(flush.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
            }
            self.ClearPageReferenced(pfn);
            // v6.6: a folio leaving the active list this way is workingset, as one that
            // shrink_active_list deactivates (its refault is a workingset refault).
            if self.features.madvise_active_workingset && self.PageActive(pfn) {
                self.mem[pfn as usize].flags |= pg::WORKINGSET;
            }
            if pageout {
                if self.isolate_lru_page(pfn) {
                    if self.mem[pfn as usize].test(pg::UNEVICTABLE) {
                        self.putback_lru_page(pfn);
                    } else {
                        list.push(pfn);
                    }
                }
            } else {
                self.deactivate_page(pfn);
            }
        }
        if let Some((a, b)) = flush {
            self.flush_tlb_mm_range(mm, a, b + 1);
        }
        if !list.is_empty() {
            self.reclaim_pages(&mut list, ignore_references);
        }
        self.give_pfn_buf(list);
        self.leave(prev);
    }

    /// madvise_free_single_vma / madvise_free_pte_range over `[sv, ev)`: swap entries are
    /// freed (the next touch finds zeroes); each present anonymous page this mapping alone
    /// maps leaves the swap cache if it can, loses PG_dirty and its PTE's young and dirty
    /// bits (the range is flushed from the TLBs, so a later write dirties the PTE again),
    /// and goes to the lazyfree batch (`mark_page_lazyfree`).
    fn madvise_free(&mut self, mm: u32, sv: u64, ev: u64) {
        let prev = self.enter(KFunc::MadviseColdOrPageout);
        self.lru_add_drain();
        self.flush_tlb_batched_pending(mm);
        let mut flush: Option<(u64, u64)> = None;
        for v in self.nonempty_ptes(mm, sv, ev) {
            let p = self.mm(mm).pgtable.get(v);
            self.charge(self.costs.mem_access_ps);
            if p & pte::PRESENT == 0 {
                if p & pte::SWAP != 0 {
                    if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(v) {
                        *pp = 0;
                    }
                    self.mm_mut(mm).swapents -= 1;
                    self.mm_mut(mm).anon_expected.remove(&v);
                    self.free_swap_and_cache(pte::pfn(p));
                }
                continue;
            }
            let pfn = pte::pfn(p);
            if !self.page_anon(pfn) || self.mem[pfn as usize].mapcount != 0 {
                continue;
            }
            if self.PageSwapCache(pfn) || self.PageDirty(pfn) {
                if !self.trylock_page(pfn) {
                    continue;
                }
                if self.PageSwapCache(pfn) && !self.try_to_free_swap(pfn) {
                    self.unlock_page(pfn);
                    continue;
                }
                self.ClearPageDirty(pfn);
                self.unlock_page(pfn);
            }
            if p & (pte::YOUNG | pte::DIRTY) != 0 {
                if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(v) {
                    *pp &= !(pte::YOUNG | pte::DIRTY);
                }
                flush = Some(flush.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
            }
            self.mark_page_lazyfree(pfn);
        }
        if let Some((a, b)) = flush {
            self.flush_tlb_mm_range(mm, a, b + 1);
        }
        self.leave(prev);
    }

    /// The virtual pages of `[sv, ev)` of `mm` whose PTE is not empty, in order: the
    /// page-table walk, which passes over PMDs without a PTE table.
    fn nonempty_ptes(&self, mm: u32, sv: u64, ev: u64) -> Vec<u64> {
        let pt = &self.mm(mm).pgtable;
        let mut out = Vec::new();
        let mut vpn = sv;
        while vpn < ev {
            let stop = ((vpn / PTRS_PER_PTE + 1) * PTRS_PER_PTE).min(ev);
            if pt.has_table(vpn / PTRS_PER_PTE) {
                out.extend((vpn..stop).filter(|&v| pt.get(v) != 0));
            }
            vpn = stop;
        }
        out
    }

    /// isolate_lru_page / folio_isolate_lru: take an LRU page off its list, holding a
    /// reference. False if it is not on an LRU list.
    pub(crate) fn isolate_lru_page(&mut self, pfn: Pfn) -> bool {
        if !self.TestClearPageLRU(pfn) {
            return false;
        }
        let lv = self.page_lru_lock_idx(pfn);
        self.lru_lock(lv);
        let lru = self.page_lru(pfn);
        self.del_page_from_lru_list(pfn, lru);
        self.get_page(pfn);
        self.lru_unlock(lv);
        true
    }

    /// putback_lru_page: an isolated page back on its list; the isolation reference is
    /// dropped (the last one frees it).
    pub(crate) fn putback_lru_page(&mut self, pfn: Pfn) {
        let lv = self.page_lru_lock_idx(pfn);
        self.lru_lock(lv);
        let mut to_free = Vec::new();
        self.putback_one(pfn, &mut to_free);
        self.lru_unlock(lv);
        for p in to_free {
            self.free_hot_cold_page(p);
        }
    }

    /// reclaim_pages: reclaim isolated pages, each run of one node's pages with one
    /// shrink_page_list (GFP_KERNEL, may write, unmap and swap; PG_active cleared first),
    /// and put back what it keeps. Returns pages reclaimed.
    pub(crate) fn reclaim_pages(&mut self, list: &mut Vec<Pfn>, ignore_references: bool) -> u64 {
        let prev = self.enter(KFunc::ReclaimPages);
        let mut reclaimed = 0;
        let mut run = self.take_pfn_buf();
        let mut at = 0;
        while at < list.len() {
            let node = self.mem[list[at] as usize].node as usize;
            run.clear();
            while at < list.len() && self.mem[list[at] as usize].node as usize == node {
                let pfn = list[at];
                self.ClearPageActive(pfn);
                run.push(pfn);
                at += 1;
            }
            let mut sc = ScanControl::new(run.len() as u64, false, Gfp::KERNEL);
            sc.ignore_references = ignore_references;
            let stat = self.shrink_page_list_for(node, &mut run, &mut sc);
            reclaimed += stat.reclaimed;
            for &pfn in &run {
                self.putback_lru_page(pfn);
            }
        }
        list.clear();
        self.give_pfn_buf(run);
        self.leave(prev);
        reclaimed
    }
}
