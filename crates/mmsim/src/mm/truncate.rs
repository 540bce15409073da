//! Truncation (mm/truncate.c): truncate_inode_pages_range and shadow-entry clearing.
//!
//! Pass 1 walks the range in pagevecs of up to PAGEVEC_SIZE entries found by a gang lookup:
//! pages that can be trylocked and are not under writeback are removed from the cache
//! (truncate_inode_page: cancel the dirty accounting, delete under tree_lock); busy pages are
//! skipped. Pass 2 restarts from the beginning and locks (sleeping) and waits for writeback,
//! until the range is empty.
//!
//! Shadow entries (seed 003, `truncate-batch-shadow`): vanilla clears each shadow entry on
//! its own, taking and releasing tree_lock per entry (truncate_exceptional_entry →
//! clear_shadow_entry). With the feature, the loop skips shadows and, after the pagevec's
//! pages, truncate_exceptional_pvec_entries clears all shadows of the pagevec below `end`
//! under one tree_lock — not taking the lock at all when the first shadow is already past
//! the end.
//!
//! Not modelled yet: partial first/last pages of a byte range (zeroing in part) — every
//! caller so far truncates whole pages.

use crate::machine::profile::KFunc;
use crate::mm::page::{Pfn, PAGE_SIZE};
use crate::mm::radix_tree::Entry;
use crate::mm::swap::PAGEVEC_SIZE;
use crate::sched::Wait;
use crate::sim::Sim;

impl Sim {
    /// __clear_shadow_entry (tree_lock held): clear the slot if it still holds `entry`.
    fn __clear_shadow_entry(&mut self, ino: u32, index: u64, entry: Entry) -> bool {
        self.charge_tree_walk(ino);
        let tree = &mut self.inode_mut(ino).mapping.tree;
        if tree.lookup(index) != entry {
            return false;
        }
        tree.store(index, Entry::Empty);
        true
    }

    /// clear_shadow_entry: one tree_lock round trip for one shadow entry (vanilla).
    fn clear_shadow_entry(&mut self, ino: u32, index: u64, entry: Entry) {
        self.tree_lock(ino);
        self.__clear_shadow_entry(ino, index, entry);
        self.tree_unlock(ino);
    }

    /// truncate_exceptional_pvec_entries (seed 003): all shadow entries of a pagevec below
    /// `end` cleared under one tree_lock.
    fn truncate_exceptional_pvec_entries(&mut self, ino: u32, pvec: &[(u64, Entry)], end: u64) {
        let Some(j) = pvec.iter().position(|(_, e)| matches!(e, Entry::Shadow(_))) else {
            return;
        };
        let lock = pvec[j].0 < end;
        if lock {
            self.tree_lock(ino);
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

    /// Handle the shadow entries of a pagevec the way the feature switch says.
    fn truncate_shadows(&mut self, ino: u32, pvec: &[(u64, Entry)], end: u64) {
        if self.features.truncate_batch_shadow {
            self.truncate_exceptional_pvec_entries(ino, pvec, end);
        } else {
            for &(index, e) in pvec {
                if index >= end {
                    break;
                }
                if let Entry::Shadow(_) = e {
                    self.clear_shadow_entry(ino, index, e);
                }
            }
        }
    }

    /// truncate_inode_page (page locked): cancel dirty accounting and delete from the cache,
    /// tree_lock per page (v4.14), then drop the cache's reference.
    fn truncate_inode_page(&mut self, ino: u32, pfn: Pfn) {
        if self.TestClearPageDirty(pfn) {
            self.account_page_cleaned(ino); // cancel_dirty_page
        }
        self.tree_lock(ino);
        self.__delete_from_page_cache(pfn, None);
        self.tree_unlock(ino);
        self.ClearPageReadahead(pfn);
        self.put_page(pfn); // the page cache's reference
    }

    /// find_get_entries: up to PAGEVEC_SIZE entries from `start`, taking a reference on each page.
    fn find_get_entries(&mut self, ino: u32, start: u64, out: &mut Vec<(u64, Entry)>) -> usize {
        out.clear();
        self.charge_tree_walk(ino);
        let n = self
            .inode(ino)
            .mapping
            .tree
            .gang_lookup(start, PAGEVEC_SIZE, out);
        for &(_, e) in out.iter() {
            if let Entry::Page(p) = e {
                self.get_page(p);
            }
        }
        n
    }

    /// pagevec_release of a lookup pagevec: drop the references on its pages.
    fn release_entries(&mut self, pvec: &[(u64, Entry)]) {
        for &(_, e) in pvec {
            if let Entry::Page(p) = e {
                self.put_page(p);
            }
        }
    }

    /// truncate_inode_pages_range over whole pages [lstart, lend] (bytes; lend inclusive,
    /// u64::MAX for "to the end"). Restartable: `Err(Wait)` means sleep and call again.
    pub fn truncate_inode_pages_range(
        &mut self,
        ino: u32,
        lstart: u64,
        lend: u64,
    ) -> Result<(), Wait> {
        let prev = self.enter(KFunc::TruncateInodePages);
        let r = self.truncate_inner(ino, lstart, lend);
        self.leave(prev);
        r
    }

    fn truncate_inner(&mut self, ino: u32, lstart: u64, lend: u64) -> Result<(), Wait> {
        let start = lstart.div_ceil(PAGE_SIZE);
        let end = if lend == u64::MAX {
            u64::MAX
        } else {
            (lend + 1) / PAGE_SIZE
        };
        if self.inode(ino).mapping.tree.nr_pages() == 0
            && self.inode(ino).mapping.tree.nr_shadows() == 0
        {
            return Ok(());
        }
        let mut pvec = Vec::with_capacity(PAGEVEC_SIZE);
        // Pass 1: trylock, skip busy pages.
        let mut index = start;
        while index < end && self.find_get_entries(ino, index, &mut pvec) > 0 {
            for &(idx, e) in pvec.iter() {
                index = idx;
                if idx >= end {
                    break;
                }
                let Entry::Page(pfn) = e else { continue };
                if !self.trylock_page(pfn) {
                    continue;
                }
                if self.PageWriteback(pfn) {
                    self.unlock_page(pfn);
                    continue;
                }
                self.truncate_inode_page(ino, pfn);
                self.unlock_page(pfn);
            }
            self.truncate_shadows(ino, &pvec, end);
            self.release_entries(&pvec);
            index += 1;
        }
        // Pass 2: lock and wait, until the range is empty.
        let mut index = start;
        loop {
            if self.find_get_entries(ino, index, &mut pvec) == 0 {
                break;
            }
            if pvec[0].0 >= end {
                self.release_entries(&pvec);
                break;
            }
            for &(idx, e) in pvec.iter() {
                index = idx;
                if idx >= end {
                    break;
                }
                let Entry::Page(pfn) = e else { continue };
                if !self.trylock_page(pfn) {
                    self.release_entries(&pvec);
                    return Err(Wait::PageLocked(pfn)); // lock_page sleeps
                }
                if self.PageWriteback(pfn) {
                    self.unlock_page(pfn);
                    self.release_entries(&pvec);
                    return Err(Wait::PageWriteback(pfn)); // wait_on_page_writeback
                }
                if self.mem[pfn as usize].mapping == ino {
                    self.truncate_inode_page(ino, pfn);
                }
                self.unlock_page(pfn);
            }
            self.truncate_shadows(ino, &pvec, end);
            self.release_entries(&pvec);
            index += 1;
        }
        Ok(())
    }
}
