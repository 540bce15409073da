//! Truncation (mm/truncate.c): `truncate_inode_pages_range`, `delete_from_page_cache_batch`,
//! the clearing of shadow entries (seed 003), and `unmap_mapping_range` (mm/memory.c), which
//! removes a file range from every page table that maps it.
//!
//! # What the kernel does
//!
//! `truncate_inode_pages_range(mapping, lstart, lend)` removes every page and every
//! exceptional (shadow) entry of the byte range `[lstart, lend]` from the page cache. Whole
//! pages are `[start, end)` with `start = ⌈lstart / PAGE_SIZE⌉` and
//! `end = (lend + 1) / PAGE_SIZE` (`lend = -1`: to the end of the file); the pages holding
//! `lstart` and `lend + 1` when those are not page aligned are *partial* pages that stay
//! cached with the truncated part zeroed.
//!
//! 1. Pass 1 (never sleeps): `pagevec_lookup_entries` gathers up to PAGEVEC_SIZE (14 in v4.2; `Sim::pagevec_size`)
//!    entries with their indices. Shadow entries are skipped in the loop; each page that can
//!    be trylocked, is not under writeback and still belongs to the mapping goes on a
//!    `locked_pvec`; `truncate_cleanup_page` unmaps it if mapped and cancels its dirty
//!    accounting, `delete_from_page_cache_batch` deletes the whole `locked_pvec` under one
//!    tree_lock, the pages are unlocked, the shadow entries of the pagevec are removed, and
//!    `pagevec_release` drops the lookup references (the last one frees the page).
//! 2. Partial pages: `find_lock_page`, `wait_on_page_writeback`, `zero_user_segment`,
//!    `do_invalidatepage`, unlock. A range inside one page stops here.
//! 3. Pass 2 (sleeps): from `start` again until a lookup finds nothing in the range;
//!    `lock_page` and `wait_on_page_writeback` on every page, `truncate_inode_page` (one
//!    tree_lock per page), shadow entries removed again.
//!
//! Shadow entries, the studied change (seed 003, feature `truncate-batch-shadow`):
//! - vanilla (v4.14): every shadow entry is removed on its own as the loop meets it,
//!   `truncate_exceptional_entry` → `clear_shadow_entry`: tree_lock taken, the slot
//!   re-verified and cleared, `nrexceptional--`, tree_lock released — one lock round trip
//!   per entry;
//! - patched (v4.15, commit f2187599 "mm, truncate: remove all exceptional entries from
//!   pagevec under one lock"): after the pagevec's pages, `truncate_exceptional_pvec_entries`
//!   takes tree_lock once — only if the first shadow entry of the pagevec lies below `end` —
//!   and clears every shadow entry below `end` with the same verification; shadows at or
//!   beyond `end` are left alone.
//!
//! Mapped files (truncate_pagecache, called by ftruncate/truncate shrinking a file and by
//! O_TRUNC): i_size is written first (O_TRUNC writes it after the truncation here), then
//! `unmap_mapping_range(mapping, holebegin, 0, 1)` zaps every PTE of the file's i_mmap at
//! or beyond the new end — with `even_cows` also the COW'd anonymous copies (and their swap
//! entries) of private mappings — then `truncate_inode_pages` runs, then
//! `unmap_mapping_range` again. A zap clears the PTEs of one VMA (a dirty PTE dirties its
//! page first, so truncation cancels that dirt rather than losing it silently; rss,
//! mapcount and nr_mapped drop), flushes the cleared range from every CPU that may cache it
//! (`flush_tlb_mm_range`), and only then drops the PTEs' references (mmu_gather). A fault
//! at or beyond the new end is SIGBUS (filemap_fault). truncate_cleanup_page unmaps a page
//! that is still mapped without `even_cows` (only the file's own pages); eviction has
//! nothing to unmap (the file's last mapping is gone before it).
//!
//! # Which kernel version each part follows
//!
//! - Pass 1 with `locked_pvec` + `delete_from_page_cache_batch`: v4.15 (commit aa65c29ce1b6
//!   "mm: batch radix tree operations when truncating pages"). It is the context of the
//!   seed's diff (its baseline kernel `pickhelper-v1r1` already carries it), so both values
//!   of the feature use it; v4.14.0 deleted each page under its own tree_lock.
//! - Partial pages and pass 2: v4.14 (unchanged in v4.15).
//! - Shadow entries: vanilla = v4.14 `clear_shadow_entry`; feature = v4.15
//!   `truncate_exceptional_pvec_entries`.
//! - unmap_mapping_range / zap_details: v4.14, except that with `even_cows` the swap
//!   entries of COW'd pages are zapped too (v5.17, "mm: don't skip swap entry even if
//!   zap_details specified"; v4.14 left them, so a swapped-out private copy beyond the end
//!   survived the truncate).
//!
//! # What we model and what not
//!
//! Modelled: the two passes, trylock/skip in pass 1 and lock/wait in pass 2 (a sleep returns
//! `Err(Wait)`; the caller retries later, resuming at the recorded stage), the batch delete,
//! the per-entry verification of shadows, `nrpages`/`nrexceptional` exact (they are the
//! tree's counts), a `list_lru_del` (a spin lock and a list step) when clearing a shadow
//! empties a shadow-only radix node (workingset_update_node), and `pagevec_release` draining
//! this CPU's LRU pagevecs first. Partial pages are zeroed (a bulk store of the zeroed
//! bytes); for the content oracle a partial zero gives the page a new content version
//! (recorded in the inode's `expected`) and dirties it, which stands for the filesystem's
//! own zeroing of the block tail (`block_truncate_page` / shmem's `set_page_dirty`). A
//! partial page that is not cached but has data on the device gets the new version on the
//! device directly (block_truncate_page's read–zero–write, without its IO time). Zeroing a
//! page whose content is all zeros (a hole) changes nothing and creates no version.
//!
//! Counters: [`TruncateStats`] counts shadow entries cleared by truncate and the tree_lock
//! acquisitions taken to clear them (the seed's metric: one per entry vanilla, at most one
//! per pagevec with the feature).
//!
//! Not modelled: i_mmap_rwsem contention (an uncontended down/up_write is charged), the
//! mark_page_accessed of young file PTEs at zap, pagecache_isize_extended when a file grows,
//! buffer heads (`do_invalidatepage` is free), cleancache, DAX and shmem's own truncate
//! (tmpfs uses this path too), the RCU-deferred free of radix nodes, and the list_lru_add
//! when deleting a page leaves a node with only shadows (the node is cleared in the same
//! pass anyway). A remote CPU's stale TLB entry stays usable until its flush IPI arrives (as
//! in hardware), but the truncating step goes on at once in host order — unlike the kernel,
//! whose truncating CPU waits for the acknowledgement before deleting the pages — so a task
//! of another process that runs on that CPU before the IPI lands could see a deleted page
//! (the same ordering as reclaim's unmap; no built-in scenario truncates another process's
//! mapped file).

use crate::machine::profile::KFunc;
use crate::mm::page::{pg, Pfn, PAGE_SIZE};
use crate::mm::radix_tree::Entry;
use crate::mm::vmstat::VmItem;
use crate::sched::Wait;
use crate::sim::Sim;

/// Truncate counters (the seed's metric).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TruncateStats {
    /// Shadow entries cleared by truncate (vanilla or batched).
    pub shadows_cleared: u64,
    /// tree_lock acquisitions taken to clear shadow entries.
    pub shadow_lock_acquisitions: u64,
    /// Pages deleted from the page cache by truncate (both passes).
    pub pages_truncated: u64,
    /// Partial pages zeroed in part.
    pub partial_pages_zeroed: u64,
}

/// The truncate counters as reported in the JSON.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct TruncateReport {
    /// The raw counters.
    #[serde(flatten)]
    pub stats: TruncateStats,
    /// tree_lock acquisitions per cleared shadow entry (0 when none was cleared).
    pub lock_acquisitions_per_shadow: f64,
}

impl TruncateStats {
    /// The JSON form with the ratio.
    pub fn report(&self) -> TruncateReport {
        TruncateReport {
            stats: *self,
            lock_acquisitions_per_shadow: if self.shadows_cleared == 0 {
                0.0
            } else {
                self.shadow_lock_acquisitions as f64 / self.shadows_cleared as f64
            },
        }
    }
}

/// Where a restartable `truncate_inode_pages_range` resumes (see
/// [`Sim::truncate_inode_pages_range_resume`]).
pub mod stage {
    /// Nothing done yet: pass 1 next.
    pub const PASS1: u64 = 0;
    /// Pass 1 done: the partial first page next.
    pub const PARTIAL_START: u64 = 1;
    /// The partial first page done: the partial last page next.
    pub const PARTIAL_END: u64 = 2;
    /// Partial pages done: pass 2 next.
    pub const PASS2: u64 = 3;
}

impl Sim {
    /// unmap_mapping_range(mapping, holebegin, holelen, even_cows): remove every PTE that
    /// maps a page of the range — ⌈holelen / PAGE_SIZE⌉ pages from the page holding
    /// `holebegin`; `holelen` 0: to the end of the file — in every VMA of the file's i_mmap
    /// that overlaps it. `even_cows` also zaps the COW'd anonymous
    /// pages (and their swap entries) of private mappings — truncation; without it only the
    /// file's own pages go (truncate_cleanup_page, invalidation).
    ///
    /// Per VMA, zap_page_range_single: the PTEs are cleared (dirty bits move to the pages,
    /// rss, mapcount and nr_mapped drop), the cleared range is flushed from every CPU that
    /// may cache it (flush_tlb_mm_range: IPIs to the mm's other CPUs, waited for), and only
    /// then are the PTE references dropped. Costs: i_mmap_lock_write/unlock (an atomic
    /// each) and one interval-tree step per overlapping VMA, charged to
    /// `unmap_mapping_range`; the PTE work to `zap_pte_range`. A file that nobody maps costs
    /// nothing (the i_mmap tree is seen empty without modelling the rwsem).
    pub fn unmap_mapping_range(&mut self, ino: u32, holebegin: u64, holelen: u64, even_cows: bool) {
        let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) else {
            return;
        };
        if inode.i_mmap.is_empty() {
            return;
        }
        let vmas = inode.i_mmap.clone();
        let first = holebegin >> crate::mm::page::PAGE_SHIFT;
        let last = if holelen == 0 {
            u64::MAX
        } else {
            first.saturating_add(holelen.div_ceil(PAGE_SIZE)) - 1
        };
        let details = crate::mm::memory::ZapDetails {
            check_mapping: if even_cows { None } else { Some(ino) },
        };
        let prev = self.enter(KFunc::UnmapMappingRange);
        self.charge_atomic(); // i_mmap_lock_write
        for crate::fs::MappedVma { mm, start, .. } in vmas {
            let Some(vma) = self
                .mms
                .get(mm as usize)
                .and_then(|m| m.as_ref())
                .and_then(|m| m.vmas.get(&start))
            else {
                continue;
            };
            let pages = (vma.end - vma.start) / PAGE_SIZE;
            let (vfirst, vlast) = (vma.pgoff, vma.pgoff + pages - 1);
            if vlast < first || vfirst > last {
                continue; // the interval tree does not visit it
            }
            let base = vma.start / PAGE_SIZE - vma.pgoff;
            let (zfirst, zlast) = (first.max(vfirst), last.min(vlast));
            self.charge(self.costs.list_op_ps); // vma_interval_tree step
            self.zap_page_range_single(mm, base + zfirst, base + zlast + 1, details);
        }
        self.charge_atomic(); // i_mmap_unlock_write
        self.leave(prev);
    }

    /// __clear_shadow_entry (tree_lock held): clear the slot if it still holds `entry`,
    /// counted in the truncation report.
    fn __clear_shadow_entry(&mut self, ino: u32, index: u64, entry: Entry) -> bool {
        let cleared = self.clear_value_entry(ino, index, entry);
        if cleared == Some(true) {
            self.truncate_stats.shadows_cleared += 1;
        }
        cleared.is_some()
    }

    /// Clear the slot `index` of `ino` if it still holds the value entry `entry` (tree_lock
    /// held): Some(true) for a workingset shadow, Some(false) for a tmpfs swap entry (its
    /// slot released), None if the slot changed. Emptying a shadow-only node costs its
    /// list_lru_del (workingset_update_node).
    fn clear_value_entry(&mut self, ino: u32, index: u64, entry: Entry) -> Option<bool> {
        self.charge_tree_walk(ino);
        let tree = &self.inode(ino).mapping.tree;
        if tree.lookup(index) != entry {
            return None;
        }
        let shadow_only_leaf = tree
            .leaf(index)
            .is_some_and(|(_, count, shadows)| count == shadows && count == 1);
        self.inode_mut(ino).mapping.tree.store(index, Entry::Empty);
        self.tree_events(ino);
        if self.inode(ino).mapping.swapbacked {
            // A tmpfs file's value entry is a swap entry (shmem_free_swap): its slot is
            // released, and a clean copy left in the swap cache goes with it
            // (free_swap_and_cache). Its nodes are on no shadow list.
            if let Entry::Shadow(off) = entry {
                self.free_swap_and_cache(off as u32);
                self.shmem_acct_blocks(ino, -1);
            }
            return Some(false);
        }
        if shadow_only_leaf {
            // The node is now empty: list_lru_del from workingset_shadow_nodes.
            self.charge(self.costs.spin_lock_ps + self.costs.list_op_ps);
        }
        Some(true)
    }

    /// invalidate_exceptional_entry → clear_shadow_entry for invalidate_mapping_pages:
    /// one tree_lock round trip; not a truncation, so not in its report.
    pub(crate) fn invalidate_exceptional_entry(&mut self, ino: u32, index: u64, entry: Entry) {
        self.tree_lock(ino);
        self.clear_value_entry(ino, index, entry);
        self.tree_unlock(ino);
    }

    /// clear_shadow_entry: one tree_lock round trip for one shadow entry (vanilla,
    /// truncate_exceptional_entry).
    fn clear_shadow_entry(&mut self, ino: u32, index: u64, entry: Entry) {
        self.tree_lock(ino);
        self.truncate_stats.shadow_lock_acquisitions += 1;
        self.__clear_shadow_entry(ino, index, entry);
        self.tree_unlock(ino);
    }

    /// truncate_exceptional_pvec_entries (seed 003): all shadow entries of a pagevec below
    /// `end` cleared under one tree_lock, which is not taken when the first shadow entry is
    /// already at or past `end`.
    fn truncate_exceptional_pvec_entries(&mut self, ino: u32, pvec: &[(u64, Entry)], end: u64) {
        let Some(j) = pvec.iter().position(|(_, e)| matches!(e, Entry::Shadow(_))) else {
            return;
        };
        let lock = pvec[j].0 < end;
        if lock {
            self.tree_lock(ino);
            self.truncate_stats.shadow_lock_acquisitions += 1;
        }
        for &(index, e) in &pvec[j..] {
            if !matches!(e, Entry::Shadow(_)) || index >= end {
                continue;
            }
            self.__clear_shadow_entry(ino, index, e);
        }
        if lock {
            self.tree_unlock(ino);
        }
    }

    /// Vanilla: truncate_exceptional_entry for one shadow met by the loop.
    fn truncate_exceptional_entry(&mut self, ino: u32, index: u64, e: Entry) {
        self.clear_shadow_entry(ino, index, e);
    }

    /// truncate_cleanup_page (v4.15; page locked): unmap a page that is still mapped (in the
    /// kernel, one a racing fault mapped after truncate_pagecache's first
    /// unmap_mapping_range; here every caller unmaps first and a fault re-checks i_size, so
    /// this is a safety net), cancel the dirty accounting (cancel_dirty_page). Buffers
    /// (do_invalidatepage) are not modelled.
    fn truncate_cleanup_page(&mut self, ino: u32, pfn: Pfn) {
        if self.mem[pfn as usize].mapped() {
            let index = self.mem[pfn as usize].index;
            self.unmap_mapping_range(ino, index * PAGE_SIZE, PAGE_SIZE, false);
        }
        if self.TestClearPageDirty(pfn) {
            self.account_page_cleaned(pfn, ino); // cancel_dirty_page
        }
    }

    /// truncate_inode_page (pass 2; page locked): cleanup, then delete_from_page_cache —
    /// tree_lock per page — and drop the cache's reference.
    fn truncate_inode_page(&mut self, ino: u32, pfn: Pfn) {
        if self.mem[pfn as usize].mapping != ino {
            return; // truncated or reclaimed meanwhile
        }
        self.truncate_cleanup_page(ino, pfn);
        self.tree_lock(ino);
        self.__delete_from_page_cache(pfn, None);
        self.tree_unlock(ino);
        self.ClearPageReadahead(pfn);
        self.truncate_stats.pages_truncated += 1;
        self.put_page(pfn); // the page cache's reference
    }

    /// delete_from_page_cache_batch (v4.15): every page of a locked pagevec is unaccounted
    /// and deleted from the tree under one tree_lock (page_cache_tree_delete_batch walks the
    /// tree once, then steps slot by slot), then each page's cache reference is dropped.
    fn delete_from_page_cache_batch(&mut self, ino: u32, locked: &[Pfn]) {
        if locked.is_empty() {
            return;
        }
        let prev = self.enter(KFunc::DeleteFromPageCache);
        self.tree_lock(ino);
        self.charge_tree_walk(ino);
        for &pfn in locked {
            // unaccount_page_cache_page + the slot's __radix_tree_replace.
            self.charge(self.costs.radix_level_ps);
            let index = self.mem[pfn as usize].index;
            let old = self.inode_mut(ino).mapping.tree.store(index, Entry::Empty);
            debug_assert_eq!(old, Entry::Page(pfn));
            self.tree_events(ino);
            // truncate_cleanup_folio's block_invalidate_folio freed its buffers.
            self.free_page_buffers(pfn);
            self.vmstat.dec(VmItem::NrFilePages);
            if self.mem[pfn as usize].test(pg::SWAPBACKED) {
                self.vmstat.dec(VmItem::NrShmem);
                self.mod_memcg_page_stat(pfn, VmItem::NrShmem, -1);
                self.shmem_acct_blocks(ino, -1);
            }
            self.mem[pfn as usize].mapping = crate::mm::page::NO_MAPPING;
        }
        self.tree_unlock(ino);
        self.leave(prev);
        for &pfn in locked {
            // page_cache_free_page: drop the cache's reference.
            self.ClearPageReadahead(pfn);
            self.truncate_stats.pages_truncated += 1;
            self.put_page(pfn);
        }
    }

    /// pagevec_lookup_entries / find_get_entries: up to `nr` entries from `start` with their
    /// indices, taking a reference on each page.
    pub(crate) fn find_get_entries(
        &mut self,
        ino: u32,
        start: u64,
        nr: u64,
        out: &mut Vec<(u64, Entry)>,
    ) -> usize {
        out.clear();
        self.charge_tree_walk(ino);
        let nr = nr.min(self.pagevec_size() as u64) as usize;
        let mut n = self.inode(ino).mapping.tree.gang_lookup(start, nr, out);
        // Truncation and invalidation handle order-0 pages: large folios in the batch are
        // split first (`mm::folio`), and the batch looked up again.
        let large: Vec<Pfn> = out
            .iter()
            .filter_map(|&(_, e)| match e {
                Entry::Page(p) if self.mem[p as usize].flags & (pg::HEAD | pg::TAIL) != 0 => {
                    Some(self.folio_head(p))
                }
                _ => None,
            })
            .collect();
        if !large.is_empty() {
            for h in large {
                self.split_folio(h);
            }
            out.clear();
            n = self.inode(ino).mapping.tree.gang_lookup(start, nr, out);
        }
        for &(_, e) in out.iter() {
            if let Entry::Page(p) = e {
                self.get_page(p);
            }
        }
        n
    }

    /// pagevec_release of a lookup pagevec whose shadow entries were removed: if pages are
    /// left, drain this CPU's LRU pagevecs (lru_add_drain) and drop the references.
    pub(crate) fn pagevec_release_entries(&mut self, pvec: &[(u64, Entry)]) {
        if !pvec.iter().any(|(_, e)| matches!(e, Entry::Page(_))) {
            return;
        }
        self.lru_add_drain();
        // A lookup pagevec holds at most the era's PAGEVEC_SIZE entries (≤ PAGEVEC_MAX).
        debug_assert!(pvec.len() <= crate::mm::swap::PAGEVEC_MAX);
        for entries in pvec.chunks(crate::mm::swap::PAGEVEC_MAX) {
            let mut pages = [0 as crate::mm::page::Pfn; crate::mm::swap::PAGEVEC_MAX];
            let mut n = 0;
            for &(_, e) in entries {
                if let Entry::Page(p) = e {
                    pages[n] = p;
                    n += 1;
                }
            }
            self.release_pages(&pages[..n]);
        }
    }

    /// Remove the shadow entries of a pagevec the way the feature switch says (after its
    /// pages were handled), then release it.
    fn finish_pvec(&mut self, ino: u32, pvec: &[(u64, Entry)], end: u64) {
        if self.features.truncate_batch_shadow {
            self.truncate_exceptional_pvec_entries(ino, pvec, end);
        }
        self.pagevec_release_entries(pvec);
    }

    /// truncate_inode_pages_range over the bytes `[lstart, lend]` (`lend` inclusive;
    /// `u64::MAX` for "to the end of the file"), from the start. `Err(Wait)`: sleep, then
    /// call again (it starts over; use [`Sim::truncate_inode_pages_range_resume`] to resume
    /// at the stage reached).
    pub fn truncate_inode_pages_range(
        &mut self,
        ino: u32,
        lstart: u64,
        lend: u64,
    ) -> Result<(), Wait> {
        let mut st = stage::PASS1;
        self.truncate_inode_pages_range_resume(ino, lstart, lend, &mut st)
    }

    /// truncate_inode_pages_range, restartable: `*st` (see [`stage`]) records how far a
    /// previous call that slept got; it is advanced as the stages finish.
    pub fn truncate_inode_pages_range_resume(
        &mut self,
        ino: u32,
        lstart: u64,
        lend: u64,
        st: &mut u64,
    ) -> Result<(), Wait> {
        let prev = self.enter(KFunc::TruncateInodePages);
        let r = self.truncate_inner(ino, lstart, lend, st);
        self.leave(prev);
        r
    }

    fn truncate_inner(
        &mut self,
        ino: u32,
        lstart: u64,
        lend: u64,
        st: &mut u64,
    ) -> Result<(), Wait> {
        let partial_start = lstart % PAGE_SIZE;
        let mut partial_end = lend.wrapping_add(1) % PAGE_SIZE;
        let start = lstart.div_ceil(PAGE_SIZE);
        let end = if lend == u64::MAX {
            u64::MAX
        } else {
            (lend + 1) / PAGE_SIZE
        };
        // Truncation within a single page: the partial first page ends at partial_end.
        let single_top = partial_end;
        if start > end && partial_start != 0 {
            partial_end = 0;
        }
        {
            let t = &self.inode(ino).mapping.tree;
            if t.nr_pages() == 0 && t.nr_shadows() == 0 {
                // Nothing cached. The filesystem's part still zeroes the tails of partial
                // blocks on the device.
                if *st <= stage::PARTIAL_START && partial_start != 0 {
                    self.zero_partial_block(ino, start - 1);
                }
                if *st <= stage::PARTIAL_END && partial_end != 0 {
                    self.zero_partial_block(ino, end);
                }
                return Ok(());
            }
        }
        let batch = self.features.truncate_batch_shadow;
        let mut pvec = Vec::with_capacity(self.pagevec_size());
        let mut locked: Vec<Pfn> = Vec::with_capacity(self.pagevec_size());

        if *st == stage::PASS1 {
            let mut index = start;
            while index < end && self.find_get_entries(ino, index, end - index, &mut pvec) > 0 {
                locked.clear();
                for &(idx, e) in pvec.iter() {
                    index = idx;
                    if idx >= end {
                        break;
                    }
                    let Entry::Page(pfn) = e else {
                        if !batch {
                            self.truncate_exceptional_entry(ino, idx, e);
                        }
                        continue;
                    };
                    if !self.trylock_page(pfn) {
                        continue;
                    }
                    if self.PageWriteback(pfn) || self.mem[pfn as usize].mapping != ino {
                        self.unlock_page(pfn);
                        continue;
                    }
                    locked.push(pfn);
                }
                for &pfn in &locked {
                    self.truncate_cleanup_page(ino, pfn);
                }
                self.delete_from_page_cache_batch(ino, &locked);
                for &pfn in &locked {
                    self.unlock_page(pfn);
                }
                self.finish_pvec(ino, &pvec, end);
                index = index.wrapping_add(1);
                if index == 0 {
                    break; // wrapped past the last index
                }
            }
            *st = stage::PARTIAL_START;
        }

        if *st == stage::PARTIAL_START {
            if partial_start != 0 {
                let top = if start > end { single_top } else { PAGE_SIZE };
                self.truncate_partial_page(ino, start - 1, partial_start, top)?;
            }
            *st = stage::PARTIAL_END;
        }
        if *st == stage::PARTIAL_END {
            if partial_end != 0 {
                self.truncate_partial_page(ino, end, 0, partial_end)?;
            }
            *st = stage::PASS2;
        }
        // A truncation within a single page releases nothing.
        if start >= end {
            return Ok(());
        }

        // Pass 2: lock and wait, until the range is empty.
        let mut index = start;
        loop {
            if self.find_get_entries(ino, index, end - index, &mut pvec) == 0 {
                if index == start {
                    break; // all gone from start onwards
                }
                index = start; // restart to make sure all are gone
                continue;
            }
            if index == start && pvec[0].0 >= end {
                self.pagevec_release_entries(&pvec);
                break; // all gone out of the range
            }
            for &(idx, e) in pvec.iter() {
                index = idx;
                if idx >= end {
                    index = start.wrapping_sub(1); // restart the punch
                    break;
                }
                let Entry::Page(pfn) = e else {
                    if !batch {
                        self.truncate_exceptional_entry(ino, idx, e);
                    }
                    continue;
                };
                if !self.trylock_page(pfn) {
                    self.pagevec_release_entries(&pvec);
                    return Err(Wait::PageLocked(pfn)); // lock_page sleeps
                }
                if self.PageWriteback(pfn) {
                    self.unlock_page(pfn);
                    self.pagevec_release_entries(&pvec);
                    return Err(Wait::PageWriteback(pfn)); // wait_on_page_writeback
                }
                self.truncate_inode_page(ino, pfn);
                self.unlock_page(pfn);
            }
            self.finish_pvec(ino, &pvec, end);
            index = index.wrapping_add(1);
        }
        Ok(())
    }

    /// The partial-page step: find_lock_page, wait_on_page_writeback, zero_user_segment of
    /// `[from, to)` in the page at `index`, unlock, put. A page that is not cached has its
    /// block tail zeroed on the device instead (the filesystem's part).
    fn truncate_partial_page(
        &mut self,
        ino: u32,
        index: u64,
        from: u64,
        to: u64,
    ) -> Result<(), Wait> {
        let Some(pfn) = self.find_lock_page(ino, index)? else {
            self.zero_partial_block(ino, index);
            return Ok(());
        };
        if self.PageWriteback(pfn) {
            self.unlock_page(pfn);
            self.put_page(pfn);
            return Err(Wait::PageWriteback(pfn)); // wait_on_page_writeback
        }
        // zero_user_segment: the zeroed bytes.
        self.charge_bulk_store(self.costs.page_zero_ps, to.saturating_sub(from));
        self.truncate_stats.partial_pages_zeroed += 1;
        if self.PageUptodate(pfn) && self.inode(ino).expected_at(index) != 0 {
            // The page's content changes: a new version, written back later.
            let v = self.new_version();
            self.mem[pfn as usize].version = v;
            self.inode_mut(ino).expected.set(index, v);
            self.set_page_dirty(pfn);
        }
        self.unlock_page(pfn);
        self.put_page(pfn);
        Ok(())
    }

    /// block_truncate_page for a partial block that is not in the page cache: if the device
    /// holds data there, its tail is zeroed — a new content version on the device and in
    /// `expected` (no IO time is charged).
    fn zero_partial_block(&mut self, ino: u32, index: u64) {
        let inode = self.inode(ino);
        if inode.disk_at(index) == 0 || inode.expected_at(index) == 0 {
            return;
        }
        let v = self.new_version();
        let inode = self.inode_mut(ino);
        inode.disk.set(index, v);
        inode.expected.set(index, v);
    }
}
