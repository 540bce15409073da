//! The page cache (mm/filemap.c): lookup and insertion, `pagecache_get_page` with FGP_*
//! flags and its wrappers, the buffered write path (generic_perform_write) and read path
//! (do_generic_file_read).
//!
//! Seed 000 (`accessed-init`): with the feature on, `pagecache_get_page` honours
//! FGP_ACCESSED — a found page gets mark_page_accessed, a newly allocated page gets
//! init_page_accessed (non-atomic) *before* add_to_page_cache_lru makes it visible — and
//! generic_perform_write no longer calls mark_page_accessed after the copy. With the
//! feature off, the wrappers behave as before the patch: find_lock_page then allocate and
//! add, with no marking, and the write path marks the page (atomically) after the copy.
//!
//! Blocking: a path that must sleep (lock_page on a locked page, waiting for a read) drops
//! what it holds and returns `Err(Wait)`; the syscall is restarted from where it stopped
//! when the task is woken, which is equivalent to sleeping in place.

use crate::machine::profile::KFunc;
use crate::mm::page::{pg, Pfn, PAGE_SIZE};
use crate::mm::page_alloc::Gfp;
use crate::mm::radix_tree::Entry;
use crate::mm::readahead::RaSleep;
use crate::mm::vmstat::VmItem;
use crate::sched::Wait;
use crate::sim::Sim;

/// FGP_* flags of pagecache_get_page.
pub mod fgp {
    /// Mark the page accessed.
    pub const ACCESSED: u32 = 0x01;
    /// Return the page locked.
    pub const LOCK: u32 = 0x02;
    /// Create the page if absent.
    pub const CREAT: u32 = 0x04;
    /// The page will be written (__GFP_WRITE on dirty-accounted mappings).
    pub const WRITE: u32 = 0x08;
    /// No filesystem recursion in the allocation.
    pub const NOFS: u32 = 0x10;
    /// Do not sleep on the page lock (trylock).
    pub const NOWAIT: u32 = 0x20;
    /// The caller handles large folios (the read path, `large-folios`): a page of one is
    /// returned as it is, with a reference on its folio. Without it a large folio is
    /// split first (`mm::folio`: every other path handles order-0 pages only).
    pub const FOLIO: u32 = 0x40;
}

/// Errors of page-cache insertion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// -EEXIST: a page is already at the index.
    Exists,
    /// -ENOMEM.
    NoMem,
}

impl Sim {
    /// Borrow an inode; panics on a stale number (a simulator bug).
    pub fn inode(&self, ino: u32) -> &crate::fs::Inode {
        self.inodes[ino as usize].as_ref().expect("live inode")
    }
    /// Borrow an inode mutably.
    pub fn inode_mut(&mut self, ino: u32) -> &mut crate::fs::Inode {
        self.inodes[ino as usize].as_mut().expect("live inode")
    }

    /// spin_lock_irq(&mapping->tree_lock).
    pub fn tree_lock(&mut self, ino: u32) {
        let now = self.now();
        let node = self.cur_node();
        let c = self.inodes[ino as usize]
            .as_mut()
            .expect("live inode")
            .mapping
            .tree_lock
            .acquire(now, node, &self.costs);
        self.charge_after_drain(c);
    }
    /// spin_unlock_irq(&mapping->tree_lock).
    pub fn tree_unlock(&mut self, ino: u32) {
        let now = self.now();
        self.inode_mut(ino).mapping.tree_lock.release(now);
    }

    /// Charge a radix-tree descent of the mapping's height.
    #[inline]
    pub fn charge_tree_walk(&mut self, ino: u32) {
        let ps = self.tree_walk_ps(&self.inode(ino).mapping.tree);
        self.charge(ps);
    }

    /// The cost of a walk from `tree`'s root to a leaf: a level at least.
    #[inline]
    fn tree_walk_ps(&self, tree: &crate::mm::radix_tree::RadixTree) -> crate::machine::Ps {
        self.costs.radix_level_ps * u64::from(tree.height().max(1))
    }

    /// `charge_tree_walk(ino)` then the lookup of `index` it pays for: the same charge
    /// and entry, the inode looked up once.
    #[inline]
    pub(crate) fn tree_walk_lookup(&mut self, ino: u32, index: u64) -> Entry {
        let tree = &self.inode(ino).mapping.tree;
        let (ps, e) = (self.tree_walk_ps(tree), tree.lookup(index));
        self.charge(ps);
        e
    }

    /// find_get_entry: RCU lookup of a slot; a page is returned with a speculative reference.
    pub fn find_get_entry(&mut self, ino: u32, index: u64) -> Entry {
        let prev = self.enter(KFunc::FindGetEntry);
        let e = self.tree_walk_lookup(ino, index);
        if let Entry::Page(pfn) = e {
            self.get_page(pfn); // page_cache_get_speculative
        }
        self.leave(prev);
        e
    }

    /// pagecache_get_page (seed 000). `Ok(None)`: absent and not created, NOWAIT lock
    /// failure, or allocation failure. `Err(Wait)`: must sleep on a page lock.
    pub fn pagecache_get_page(
        &mut self,
        ino: u32,
        index: u64,
        mut fgp_flags: u32,
        gfp: Gfp,
    ) -> Result<Option<Pfn>, Wait> {
        let prev = self.enter(KFunc::PagecacheGetPage);
        let accessed_init = self.features.accessed_init;
        let r = loop {
            let page = match self.find_get_entry(ino, index) {
                Entry::Page(p) => Some(p),
                // A tmpfs file's value entry is a page swapped out: shmem_get_folio swaps
                // it in (its callers usually did already), then looks again.
                Entry::Shadow(v) if self.inode(ino).mapping.swapbacked => {
                    match self.shmem_swapin(ino, index, v as u32, false) {
                        Ok(true) => continue,
                        Ok(false) => break Ok(None),
                        Err(_) if fgp_flags & fgp::NOWAIT != 0 => break Ok(None),
                        Err(w) => break Err(w),
                    }
                }
                _ => None, // a shadow entry counts as a miss
            };
            if let Some(p) = page {
                if fgp_flags & fgp::FOLIO == 0
                    && self.mem[p as usize].flags & (pg::HEAD | pg::TAIL) != 0
                {
                    self.put_page(p);
                    self.split_if_large(p);
                    continue;
                }
                if fgp_flags & fgp::LOCK != 0 {
                    // folio_lock: a large folio's lock is its head's.
                    let lp = self.folio_head(p);
                    if !self.trylock_page(lp) {
                        self.put_page(p);
                        if fgp_flags & fgp::NOWAIT != 0 {
                            break Ok(None);
                        }
                        break Err(Wait::PageLocked(lp)); // lock_page sleeps
                    }
                    // Has the page been truncated?
                    if self.mem[p as usize].mapping != ino {
                        self.unlock_page(lp);
                        self.put_page(p);
                        continue;
                    }
                    debug_assert_eq!(self.mem[p as usize].index, index);
                }
                if accessed_init && fgp_flags & fgp::ACCESSED != 0 {
                    self.mark_page_accessed(p);
                }
                break Ok(Some(p));
            }
            if fgp_flags & fgp::CREAT == 0 {
                break Ok(None);
            }
            let mut g = gfp;
            if fgp_flags & fgp::WRITE != 0 && self.inode(ino).mapping.account_dirty {
                g.write = true;
            }
            if fgp_flags & fgp::NOFS != 0 {
                g.fs = false;
            }
            let memcg = self.current_memcg();
            let p = match self.alloc_page_charged(g, memcg) {
                Ok(p) => p,
                Err(crate::mm::page_alloc::AllocError::Wait(w)) => break Err(w),
                Err(crate::mm::page_alloc::AllocError::NoMem) => break Ok(None),
            };
            fgp_flags |= fgp::LOCK;
            // Init accessed so avoid atomic mark_page_accessed later.
            if accessed_init && fgp_flags & fgp::ACCESSED != 0 {
                self.init_page_accessed(p);
            }
            match self.add_to_page_cache_lru_gfp(p, ino, index, g.write) {
                Ok(()) => {
                    self.set_dropbehind_if_uncached(p); // FGP_DONTCACHE
                    break Ok(Some(p));
                }
                Err(e) => {
                    self.put_page(p);
                    if e == CacheError::Exists {
                        continue;
                    }
                    break Ok(None);
                }
            }
        };
        self.leave(prev);
        r
    }

    /// The swap entry in slot `index` of tmpfs file `ino`, if the page there was swapped
    /// out (shmem_writepage): a look, no cost (shmem_swapin charges the lookup).
    pub fn shmem_swap_entry(&self, ino: u32, index: u64) -> Option<u32> {
        let m = &self.inode(ino).mapping;
        if !m.swapbacked {
            return None;
        }
        match m.tree.lookup(index) {
            Entry::Shadow(v) => Some(v as u32),
            _ => None,
        }
    }

    /// find_get_page: flags 0.
    pub fn find_get_page(&mut self, ino: u32, index: u64) -> Option<Pfn> {
        self.pagecache_get_page(ino, index, 0, Gfp::KERNEL)
            .unwrap_or(None)
    }
    /// filemap_get_read_batch's lookup of one index: the page there, which may be part of
    /// a large folio (its folio holds the reference).
    pub(crate) fn find_get_folio_page(&mut self, ino: u32, index: u64) -> Option<Pfn> {
        self.pagecache_get_page(ino, index, fgp::FOLIO, Gfp::KERNEL)
            .unwrap_or(None)
    }
    /// find_lock_page: FGP_LOCK.
    pub fn find_lock_page(&mut self, ino: u32, index: u64) -> Result<Option<Pfn>, Wait> {
        self.pagecache_get_page(ino, index, fgp::LOCK, Gfp::KERNEL)
    }
    /// find_or_create_page: FGP_LOCK | FGP_ACCESSED | FGP_CREAT.
    pub fn find_or_create_page(
        &mut self,
        ino: u32,
        index: u64,
        gfp: Gfp,
    ) -> Result<Option<Pfn>, Wait> {
        self.pagecache_get_page(ino, index, fgp::LOCK | fgp::ACCESSED | fgp::CREAT, gfp)
    }
    /// grab_cache_page_nowait: FGP_LOCK | FGP_CREAT | FGP_NOFS | FGP_NOWAIT.
    pub fn grab_cache_page_nowait(&mut self, ino: u32, index: u64) -> Option<Pfn> {
        self.pagecache_get_page(
            ino,
            index,
            fgp::LOCK | fgp::CREAT | fgp::NOFS | fgp::NOWAIT,
            Gfp::KERNEL,
        )
        .unwrap_or(None)
    }
    /// grab_cache_page_write_begin: FGP_LOCK | FGP_WRITE | FGP_CREAT (+ FGP_NOFS for
    /// AOP_FLAG_NOFS: ext4's before 3.9, `write-begin-fs`; + FGP_FOLIO on a mapping with
    /// `large` folios), then wait_for_stable_page (a no-op without stable pages); and
    /// FGP_ACCESSED unless `read-only-activation` (v4.7) took it out. tmpfs's write_begin
    /// (shmem_getpage with SGP_WRITE, modelled through this function) marks the page in
    /// every era.
    pub fn grab_cache_page_write_begin(
        &mut self,
        ino: u32,
        index: u64,
        nofs: bool,
        large: bool,
    ) -> Result<Option<Pfn>, Wait> {
        let prev = self.enter(KFunc::GrabCachePageWriteBegin);
        let mut f = fgp::LOCK | fgp::WRITE | fgp::CREAT;
        if !self.features.read_only_activation || self.inode(ino).mapping.swapbacked {
            f |= fgp::ACCESSED;
        }
        if nofs {
            f |= fgp::NOFS;
        }
        if large {
            // A write into a large folio keeps it whole (`fs::buffer`).
            f |= fgp::FOLIO;
        }
        let r = self.pagecache_get_page(ino, index, f, Gfp::KERNEL);
        if let Ok(Some(p)) = r {
            let head = self.folio_head(p);
            self.clear_dropbehind_unless_uncached(head);
        }
        self.leave(prev);
        r
    }

    /// The running task's IO is RWF_DONTCACHE (IOCB_DONTCACHE).
    #[inline]
    fn io_uncached(&self) -> bool {
        self.io_dropbehind.is_some() && self.io_dropbehind == self.cur.task
    }

    /// A page an RWF_DONTCACHE IO just added to the page cache is PG_dropbehind
    /// (__folio_set_dropbehind for FGP_DONTCACHE, ractl->dropbehind, filemap_create_folio).
    pub(crate) fn set_dropbehind_if_uncached(&mut self, pfn: Pfn) {
        if self.io_uncached() {
            self.mem[pfn as usize].flags |= pg::DROPBEHIND;
        }
    }

    /// __filemap_get_folio: a lookup that is not RWF_DONTCACHE's (a write, a fault) keeps
    /// the page it finds: PG_dropbehind is cleared.
    pub(crate) fn clear_dropbehind_unless_uncached(&mut self, pfn: Pfn) {
        if !self.io_uncached() {
            self.mem[pfn as usize].flags &= !pg::DROPBEHIND;
        }
    }

    /// filemap_end_dropbehind_read: after any read copied from a PG_dropbehind page that is
    /// clean and not under writeback, the page leaves the page cache if its lock can be
    /// had (filemap_end_dropbehind).
    fn filemap_end_dropbehind_read(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if !p.test(pg::DROPBEHIND) || p.test(pg::WRITEBACK) || p.test(pg::DIRTY) {
            return;
        }
        if self.trylock_page(pfn) {
            self.filemap_end_dropbehind(pfn);
            self.unlock_page(pfn);
        }
    }

    /// filemap_end_dropbehind (the page locked, a reference held): a PG_dropbehind page
    /// that is clean and not under writeback loses the flag and leaves the page cache
    /// without a shadow entry (folio_unmap_invalidate); it is freed when its last
    /// reference goes. A mapped page stays (the kernel unmaps it first; not modelled).
    pub(crate) fn filemap_end_dropbehind(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if p.test(pg::WRITEBACK) || p.test(pg::DIRTY) || !p.test(pg::DROPBEHIND) {
            return;
        }
        self.mem[pfn as usize].flags &= !pg::DROPBEHIND;
        let ino = self.mem[pfn as usize].mapping;
        if ino == crate::mm::page::NO_MAPPING || self.folio_mapped(pfn) {
            return;
        }
        let prev = self.enter(KFunc::DeleteFromPageCache);
        self.tree_lock(ino);
        self.__delete_from_page_cache(pfn, None);
        self.tree_unlock(ino);
        self.ClearPageReadahead(pfn);
        self.leave(prev);
        self.put_page(pfn); // the page cache's reference (filemap_free_folio)
    }

    /// add_to_page_cache_lru: lock the new page (non-atomically: nobody can see it yet),
    /// insert it under tree_lock (consuming a shadow entry), then queue it for the LRU.
    /// A consumed shadow that proves a refault within the active list's size activates the
    /// page (workingset_refault).
    pub fn add_to_page_cache_lru(
        &mut self,
        pfn: Pfn,
        ino: u32,
        index: u64,
    ) -> Result<(), CacheError> {
        self.add_to_page_cache_lru_gfp(pfn, ino, index, false)
    }

    /// add_to_page_cache_lru with the allocation's __GFP_WRITE (`gfp_write`: a page
    /// write_begin creates on a dirty-accounted mapping), which from 4.7 takes the shadow
    /// entry without a refault (`read-only-refault`).
    pub fn add_to_page_cache_lru_gfp(
        &mut self,
        pfn: Pfn,
        ino: u32,
        index: u64,
        gfp_write: bool,
    ) -> Result<(), CacheError> {
        let prev = self.enter(KFunc::AddToPageCacheLru);
        self.__SetPageLocked(pfn);
        let shadow = match self.__add_to_page_cache_locked(pfn, ino, index) {
            Ok(s) => s,
            Err(e) => {
                self.__ClearPageLocked(pfn);
                self.leave(prev);
                return Err(e);
            }
        };
        let shadow = shadow.filter(|_| !(gfp_write && self.features.read_only_refault));
        self.refault_and_lru_add(pfn, shadow);
        self.leave(prev);
        Ok(())
    }

    /// The end of filemap_add_folio (a page or a large folio's head, just inserted):
    /// a consumed shadow entry is a refault, activated when its distance is within the
    /// workingset (workingset_refault); then the page is queued for the LRU. (A page
    /// added for a write passes no shadow from 4.7: `read-only-refault`.)
    #[inline]
    pub(crate) fn refault_and_lru_add(&mut self, pfn: Pfn, shadow: Option<u64>) {
        if let Some(sh) = shadow {
            if self.workingset_refault(pfn, sh) {
                self.SetPageActive(pfn);
                self.workingset_activation(pfn);
            } else {
                self.ClearPageActive(pfn);
            }
        }
        self.lru_cache_add(pfn);
    }

    /// __add_to_page_cache_locked: take the cache's reference, set mapping/index and insert
    /// under tree_lock. Returns the shadow entry that was replaced, if any.
    fn __add_to_page_cache_locked(
        &mut self,
        pfn: Pfn,
        ino: u32,
        index: u64,
    ) -> Result<Option<u64>, CacheError> {
        self.get_page(pfn);
        {
            let p = &mut self.mem[pfn as usize];
            p.mapping = ino;
            p.index = index;
        }
        let swapbacked = self.inode(ino).mapping.swapbacked;
        if swapbacked {
            self.mem[pfn as usize].flags |= pg::SWAPBACKED; // __SetPageSwapBacked before insertion
            self.charge(self.costs.plain_rmw_ps);
        }
        self.tree_lock(ino);
        let prev = self.enter(KFunc::PageCacheTreeInsert);
        self.charge_tree_walk(ino);
        let tag = self.xa_charge_tag();
        self.inode_mut(ino).mapping.tree.charge_tag = tag;
        // One descent: store, and put a page found there back (-EEXIST).
        let old = self
            .inode_mut(ino)
            .mapping
            .tree
            .store(index, Entry::Page(pfn));
        let r = match old {
            Entry::Page(_) => {
                self.inode_mut(ino).mapping.tree.store(index, old);
                Err(CacheError::Exists)
            }
            Entry::Empty | Entry::Shadow(_) => {
                debug_assert!(
                    !(swapbacked && matches!(old, Entry::Shadow(_))),
                    "a new page over tmpfs inode {ino}'s swap entry at {index}"
                );
                self.vmstat.inc(VmItem::NrFilePages);
                if swapbacked {
                    self.vmstat.inc(VmItem::NrShmem);
                    self.mod_memcg_page_stat(pfn, VmItem::NrShmem, 1);
                    self.shmem_acct_blocks(ino, 1);
                }
                Ok(match old {
                    Entry::Shadow(s) => Some(s),
                    _ => None,
                })
            }
        };
        self.leave(prev);
        self.tree_unlock(ino);
        // A page in a shadow-only leaf takes it off its shadow list; new nodes are
        // charged (after the lock: their charge may reclaim).
        self.tree_events(ino);
        if r.is_err() {
            let p = &mut self.mem[pfn as usize];
            p.mapping = crate::mm::page::NO_MAPPING;
            p.flags &= !pg::SWAPBACKED;
            self.put_page(pfn);
        }
        r
    }

    /// __delete_from_page_cache (tree_lock held by the caller): replace the page's slot with
    /// `shadow` (or clear it), drop the counters. The caller drops the cache's reference.
    pub fn __delete_from_page_cache(&mut self, pfn: Pfn, shadow: Option<u64>) {
        let prev = self.enter(KFunc::DeleteFromPageCache);
        let (ino, index) = {
            let p = &self.mem[pfn as usize];
            (p.mapping, p.index)
        };
        self.charge_tree_walk(ino);
        let e = match shadow {
            Some(s) => Entry::Shadow(s),
            None => Entry::Empty,
        };
        let old = self.inode_mut(ino).mapping.tree.store(index, e);
        debug_assert_eq!(old, Entry::Page(pfn));
        self.tree_events(ino);
        if self.mem[pfn as usize].test(pg::HEAD) {
            // A large folio: every index goes (one multi-index entry in the kernel), and
            // its buffer heads if it was written (`fs::buffer`).
            self.delete_folio_tails_from_page_cache(pfn, shadow);
            self.folio_free_buffers(pfn);
        }
        // filemap_release_folio / block_invalidate_folio came first: the page's buffer
        // heads are freed (try_to_free_buffers).
        self.free_page_buffers(pfn);
        // filemap_remove_folio / __remove_mapping: an unused inode whose cache is now
        // empty joins the inode list.
        self.inode_maybe_shrinkable(ino);
        self.vmstat.dec(VmItem::NrFilePages);
        if self.mem[pfn as usize].test(pg::SWAPBACKED) {
            self.vmstat.dec(VmItem::NrShmem);
            self.mod_memcg_page_stat(pfn, VmItem::NrShmem, -1);
            if shadow.is_none() {
                // Gone for good (a swap entry keeps its block).
                self.shmem_acct_blocks(ino, -1);
            }
        }
        self.mem[pfn as usize].mapping = crate::mm::page::NO_MAPPING;
        self.leave(prev);
    }

    /// shmem_inode_acct_blocks / shmem_inode_unacct_blocks: a tmpfs page (in the page cache
    /// or in swap) joins (`n` > 0) or leaves its filesystem's used blocks.
    pub fn shmem_acct_blocks(&mut self, ino: u32, n: i64) {
        let fs = self.inode(ino).fs;
        let f = &mut self.fss[fs];
        f.shmem_used_blocks = f.shmem_used_blocks.saturating_add_signed(n);
    }

    /// Whether tmpfs file `ino` may take one more page (shmem_inode_acct_blocks'
    /// percpu_counter_limited_add against sbinfo->max_blocks); true off tmpfs.
    pub fn shmem_may_acct_block(&self, ino: u32) -> bool {
        let f = &self.fss[self.inode(ino).fs];
        f.shmem_max_blocks
            .is_none_or(|max| f.shmem_used_blocks < max)
    }

    /// generic_perform_write: copy `len` bytes at `pos` into the page cache, one page-sized
    /// chunk at a time (write_begin → copy → [vanilla: mark_page_accessed] → write_end).
    /// Returns bytes written, and the wait that stopped it early, if any.
    pub fn generic_perform_write(
        &mut self,
        ino: u32,
        pos: u64,
        len: u64,
    ) -> (u64, Option<Wait>, Option<crate::workload::Errno>) {
        let prev = self.enter(KFunc::GenericPerformWrite);
        let mut done = 0u64;
        let mut wait = None;
        let mut err = None;
        let tmpfs = self.inode(ino).mapping.swapbacked;
        // The mapping takes large folios (`large-folios`; never tmpfs).
        let large = self.mapping_large_folio_support(ino);
        // A balance_dirty_pages loop that slept at the dirty limit looks again before the
        // task dirties another page.
        if self.features.io_less_dirty_throttling
            && self.cur.task.is_some_and(|t| self.tasks[t].bdp_pending > 0)
        {
            if let Some(pause) = self.balance_dirty_pages_io_less(ino) {
                self.psi_sleep_kind(crate::psi::flags::IOWAIT);
                self.leave(prev);
                return (0, Some(Wait::Until(self.now() + pause)), None);
            }
        }
        while done < len {
            let p = pos + done;
            let index = p / PAGE_SIZE;
            let offset = p % PAGE_SIZE;
            let bytes = (PAGE_SIZE - offset).min(len - done);
            // ->write_begin; shmem_write_begin swaps a swapped-out page in first.
            if let Some(off) = tmpfs.then(|| self.shmem_swap_entry(ino, index)).flatten() {
                match self.shmem_swapin(ino, index, off, false) {
                    Ok(true) => {}
                    Ok(false) => {
                        err = Some(crate::workload::Errno::EIO);
                        break;
                    }
                    Err(w) => {
                        wait = Some(w);
                        break;
                    }
                }
            }
            if tmpfs
                && !self.shmem_may_acct_block(ino)
                && !matches!(self.inode(ino).mapping.tree.lookup(index), Entry::Page(_))
            {
                // shmem_alloc_and_add_folio: the tmpfs is full.
                err = Some(crate::workload::Errno::ENOSPC);
                break;
            }
            let mut created = false;
            let page = if tmpfs {
                let pr = self.enter(KFunc::ShmemWriteBegin);
                let r = self.grab_cache_page_write_begin(ino, index, false, false);
                self.leave(pr);
                r
            } else {
                let new = if large {
                    self.write_begin_new_folio(ino, p, len - done)
                } else {
                    Ok(None)
                };
                match new {
                    Ok(Some(head)) => {
                        created = true;
                        Ok(Some(head))
                    }
                    // AOP_FLAG_NOFS until ext4 grabbed the page before its journal handle.
                    Ok(None) => self.grab_cache_page_write_begin(
                        ino,
                        index,
                        !self.features.write_begin_fs,
                        large,
                    ),
                    Err(w) => Err(w),
                }
            };
            let pfn = match page {
                Err(w) => {
                    wait = Some(w);
                    break;
                }
                Ok(None) => {
                    err = Some(crate::workload::Errno::ENOMEM);
                    break;
                }
                Ok(Some(pfn)) => pfn,
            };
            if self.mem[pfn as usize].flags & (pg::HEAD | pg::TAIL) != 0 {
                // A page of a large folio (locked by its head): the copy goes into the
                // folio up to its end.
                match self.write_into_folio(ino, pfn, p, len - done, created) {
                    Ok(Some(n)) => done += n,
                    Ok(None) => continue, // split (not uptodate): write it as pages
                    Err(w) => {
                        wait = Some(w);
                        break;
                    }
                }
                if let Some(pause) = self.balance_dirty_pages_ratelimited(ino) {
                    self.psi_sleep_kind(crate::psi::flags::IOWAIT);
                    wait = Some(Wait::Until(self.now() + pause));
                    break;
                }
                continue;
            }
            if !tmpfs {
                // ext4_block_write_begin: create_empty_buffers (`fs/buffer.rs`).
                if let Err(w) = self.create_empty_buffers(pfn) {
                    self.unlock_page(pfn);
                    self.put_page(pfn);
                    wait = Some(w);
                    break;
                }
            }
            if bytes < PAGE_SIZE && !self.PageUptodate(pfn) && self.TestClearPageError(pfn) {
                // block_write_begin's read of the rest of the page failed: EIO.
                self.unlock_page(pfn);
                self.put_page(pfn);
                err = Some(crate::workload::Errno::EIO);
                break;
            }
            if bytes < PAGE_SIZE && !self.PageUptodate(pfn) {
                // A partial write into a page that is not uptodate: the rest must be read
                // (within i_size) or zeroed (beyond it, or a hole).
                let size = self.inode(ino).size;
                if index * PAGE_SIZE < size && self.inode(ino).disk_at(index) != 0 && !tmpfs {
                    // block_write_begin reads the block: start the read and sleep on it.
                    self.readpage_locked(ino, pfn);
                    self.put_page(pfn);
                    wait = Some(Wait::PageLocked(pfn));
                    break;
                }
                let keep = self.inode(ino).expected_at(index);
                self.mem[pfn as usize].version = keep;
                self.charge_bulk_store(self.costs.page_zero_ps, PAGE_SIZE);
            }
            // iov_iter_copy_from_user_atomic
            let pr = self.enter(KFunc::IovIterCopyFromUserAtomic);
            self.charge_bulk_store(self.costs.page_copy_ps, bytes);
            self.leave(pr);
            let v = self.new_version();
            self.mem[pfn as usize].version = v;
            let inode = self.inode_mut(ino);
            inode.expected.set(index, v);
            if !self.features.accessed_init {
                self.mark_page_accessed(pfn);
            }
            // ->write_end: shmem_write_end for tmpfs (shmem_aops), block_write_end (via
            // generic_write_end) for the block filesystem.
            let pr = self.enter(if tmpfs {
                KFunc::ShmemWriteEnd
            } else {
                KFunc::BlockWriteEnd
            });
            if !self.PageUptodate(pfn) {
                self.SetPageUptodate(pfn);
            }
            let end = p + bytes;
            if end > self.inode(ino).size {
                self.inode_mut(ino).size = end;
            }
            if tmpfs {
                self.folio_mark_dirty(pfn);
            } else {
                self.set_page_dirty(pfn);
            }
            self.unlock_page(pfn);
            self.put_page(pfn);
            self.leave(pr);
            done += bytes;
            if let Some(pause) = self.balance_dirty_pages_ratelimited(ino) {
                // Throttled: the writer pauses (balance_dirty_pages, in
                // io_schedule_timeout: IO wait).
                self.psi_sleep_kind(crate::psi::flags::IOWAIT);
                wait = Some(Wait::Until(self.now() + pause));
                break;
            }
        }
        self.leave(prev);
        (done, wait, err)
    }

    /// generic_perform_write's step into a large folio (`large-folios`; `fs::buffer`):
    /// `page`, of the folio, was returned locked (the head's lock) with a reference, and
    /// the copy at `pos` runs to the folio's end or `left` bytes. ext4's write_begin gives
    /// the folio its buffer heads, block_commit_write dirties the blocks the copy covered
    /// and the folio whole (NR_DIRTIED counts its pages). A folio write_begin `created`
    /// for this copy is covered by it but for a partial first block, which is zeroed
    /// (`write_begin_new_folio`), and is uptodate after. Returns the bytes copied;
    /// `Ok(None)` when a cached folio is not uptodate (a read of it failed): it is split
    /// and the caller writes its pages as order-0 ones.
    fn write_into_folio(
        &mut self,
        ino: u32,
        page: Pfn,
        pos: u64,
        left: u64,
        created: bool,
    ) -> Result<Option<u64>, Wait> {
        let head = self.folio_head(page);
        if !created && !self.PageUptodate(head) {
            self.unlock_page(head);
            self.put_page(page);
            self.split_folio(head);
            return Ok(None);
        }
        if let Err(w) = self.folio_create_buffers(head) {
            self.unlock_page(head);
            self.put_page(page);
            return Err(w);
        }
        let first = self.mem[head as usize].index;
        let nr = self.folio_nr_pages(head);
        let bytes = ((first + nr) * PAGE_SIZE - pos).min(left);
        let pr = self.enter(KFunc::IovIterCopyFromUserAtomic);
        self.charge_bulk_store(self.costs.page_copy_ps, bytes);
        self.leave(pr);
        let (k0, k1) = (
            pos / PAGE_SIZE - first,
            (pos + bytes - 1) / PAGE_SIZE - first,
        );
        let frames = self.folio_frames(head);
        if created && !pos.is_multiple_of(PAGE_SIZE) {
            // The first block's head is zeroed (a hole, or beyond i_size).
            let keep = self.inode(ino).expected_at(first);
            self.mem[head as usize].version = keep;
            self.charge_bulk_store(self.costs.page_zero_ps, pos % PAGE_SIZE);
        }
        for k in k0..=k1 {
            let v = self.new_version();
            self.mem[frames[k as usize] as usize].version = v;
            self.inode_mut(ino).expected.set(first + k, v);
        }
        self.give_pfn_buf(frames);
        if !self.features.accessed_init {
            self.mark_page_accessed(head);
        }
        let pr = self.enter(KFunc::BlockWriteEnd);
        if !self.PageUptodate(head) {
            self.SetPageUptodate(head); // every block is
        }
        let end = pos + bytes;
        if end > self.inode(ino).size {
            self.inode_mut(ino).size = end;
        }
        self.folio_mark_blocks_dirty(head, k0, k1);
        self.set_page_dirty(head);
        self.unlock_page(head);
        self.put_page(page);
        self.leave(pr);
        Ok(Some(bytes))
    }

    /// Content oracle: whether version `want` of a page of `ino` is one whose writeback
    /// failed and was reported (AS_EIO) — a read that misses it is a reported loss, not a
    /// silent one (counted as such).
    pub(crate) fn oracle_reported_loss(&mut self, ino: u32, want: u32) -> bool {
        let dev = self.fss[self.inode(ino).fs].device;
        match dev.filter(|d| self.devices[*d].lost_versions.contains(&want)) {
            Some(d) => {
                self.devices[d].lost_reads += 1;
                true
            }
            None => false,
        }
    }

    /// Check a page's content version against the newest write (content oracle).
    #[inline(always)]
    pub fn oracle_check_read(&mut self, ino: u32, pfn: Pfn) {
        let index = self.mem[pfn as usize].index;
        let want = self.inode(ino).expected_at(index);
        let got = self.mem[pfn as usize].version;
        if want != got {
            self.oracle_read_mismatch(ino, index, want, got);
        }
    }

    /// `oracle_check_read` found another version than the newest write's.
    #[cold]
    #[inline(never)]
    fn oracle_read_mismatch(&mut self, ino: u32, index: u64, want: u32, got: u32) {
        if self.oracle_reported_loss(ino, want) {
            return;
        }
        if self.oracle_violations.len() < 100 {
            self.oracle_violations.push(format!(
                "read of inode {} index {} saw version {} but the newest write is {}",
                ino, index, got, want
            ));
        }
    }
}

/// Outcome of a read.
pub struct ReadOutcome {
    /// Bytes copied to the user.
    pub done: u64,
    /// The wait that stopped the read early.
    pub wait: Option<Wait>,
    /// An error.
    pub err: Option<crate::workload::Errno>,
}

impl Sim {
    /// do_generic_file_read (blockfs) / shmem_file_read_iter (tmpfs): copy `len` bytes at
    /// `pos` to the user, with readahead on a miss and at the PG_readahead marker. Stops at
    /// i_size. `continuing`: the rest of a read that copied up to `pos` before it slept
    /// (the kernel's read sleeps inside the call; mmsim restarts it).
    pub fn do_generic_file_read(
        &mut self,
        ino: u32,
        ra: &mut crate::mm::readahead::RaState,
        pos: u64,
        len: u64,
        continuing: bool,
    ) -> ReadOutcome {
        let prev = self.enter(KFunc::GenericFileReadIter);
        let inode = self.inode(ino);
        let (tmpfs, size) = (inode.mapping.swapbacked, inode.size);
        let end = (pos + len).min(size);
        let last_index = if end == 0 { 0 } else { (end - 1) / PAGE_SIZE };
        let mut done = 0u64;
        let mut out = ReadOutcome {
            done: 0,
            wait: None,
            err: None,
        };
        // The read's own position (filemap_read's last_pos; do_generic_file_read's
        // prev_index and prev_offset, encoded as prev_pos is): the file's prev_pos takes
        // it only when the read ends, so a readahead decided within the read sees where
        // the previous read ended.
        let mut last_pos = if !continuing || pos == 0 {
            ra.prev_pos
        } else if self.features.read_accessed_folio || !pos.is_multiple_of(PAGE_SIZE) {
            pos
        } else {
            pos - PAGE_SIZE
        };
        while pos + done < end {
            let p = pos + done;
            let index = p / PAGE_SIZE;
            let offset = p % PAGE_SIZE;
            let nr = (PAGE_SIZE - offset).min(end - p);
            if tmpfs {
                // shmem_file_read_iter → shmem_get_folio(SGP_READ): a swapped-out page is
                // swapped in first.
                if let Some(off) = self.shmem_swap_entry(ino, index) {
                    match self.shmem_swapin(ino, index, off, false) {
                        Ok(true) => {}
                        Ok(false) => {
                            out.err = Some(crate::workload::Errno::EIO);
                            break;
                        }
                        Err(w) => {
                            out.wait = Some(w);
                            break;
                        }
                    }
                }
            }
            if !tmpfs && ra.resume.is_some() {
                // The readahead this read left when its charge slept goes on first.
                if let Err(w) = self.ra_resume(ino, ra) {
                    out.wait = Some(w);
                    break;
                }
            }
            let mut page = if tmpfs {
                self.find_get_page(ino, index)
            } else {
                self.find_get_folio_page(ino, index)
            };
            if tmpfs {
                match page {
                    Some(pfn) => {
                        if !self.PageUptodate(pfn) && self.PageLocked(pfn) {
                            self.put_page(pfn);
                            out.wait = Some(Wait::PageLocked(pfn));
                            break;
                        }
                        if offset == 0 {
                            self.mark_page_accessed(pfn);
                        }
                        self.copy_to_user(nr);
                        self.oracle_check_read(ino, pfn);
                        self.put_page(pfn);
                    }
                    None => {
                        // A hole: copied from ZERO_PAGE, nothing is allocated.
                        self.copy_to_user(nr);
                        if self.inode(ino).expected_at(index) != 0
                            && self.oracle_violations.len() < 100
                        {
                            self.oracle_violations
                                .push(format!("tmpfs inode {} index {} lost its page", ino, index));
                        }
                    }
                }
                done += nr;
                continue;
            }
            if page.is_none() {
                let req = last_index - index + 1;
                if let Err(w) = self.page_cache_sync_readahead(ino, ra, index, req, RaSleep::Read) {
                    // A readahead charge sleeps; the read goes on from here after it.
                    out.wait = Some(w);
                    break;
                }
                page = self.find_get_folio_page(ino, index);
            }
            let pfn = match page {
                Some(pfn) => pfn,
                None => {
                    // no_cached_page: allocate, insert, read (the inode table's blocks:
                    // the buffer cache's gfp, without __GFP_FS).
                    let memcg = self.current_memcg();
                    let gfp = if self.is_inode_table(ino) {
                        Gfp::NOFS
                    } else {
                        Gfp::KERNEL
                    };
                    let pfn = match self.alloc_page_charged(gfp, memcg) {
                        Ok(p) => p,
                        Err(crate::mm::page_alloc::AllocError::Wait(w)) => {
                            out.wait = Some(w);
                            break;
                        }
                        Err(crate::mm::page_alloc::AllocError::NoMem) => {
                            out.err = Some(crate::workload::Errno::ENOMEM);
                            break;
                        }
                    };
                    match self.add_to_page_cache_lru(pfn, ino, index) {
                        Ok(()) => {
                            self.set_dropbehind_if_uncached(pfn); // filemap_create_folio
                            self.count_cache_misses(1);
                            self.readpage_locked(ino, pfn);
                            pfn
                        }
                        Err(_) => {
                            self.put_page(pfn);
                            continue; // raced with another insertion: look up again
                        }
                    }
                }
            };
            // The folio: its head holds the flags, the lock and the reference (`pfn`
            // itself for an order-0 page).
            let head = self.folio_head(pfn);
            if self.PageReadahead(head) {
                let hidx = self.mem[head as usize].index;
                let req = last_index - hidx + 1;
                if let Err(w) =
                    self.page_cache_async_readahead(ino, ra, head, hidx, req, RaSleep::Read)
                {
                    self.put_page(head);
                    out.wait = Some(w);
                    break;
                }
            }
            if !self.PageUptodate(head) {
                if self.PageLocked(head) {
                    self.put_page(head);
                    out.wait = Some(Wait::PageLocked(head)); // wait_on_page_locked
                } else if self.TestClearPageError(head) {
                    // The read IO failed (PG_error): EIO; the next reader tries again.
                    self.put_page(head);
                    out.err = Some(crate::workload::Errno::EIO);
                } else if !self.trylock_page(head) {
                    self.put_page(head);
                    out.wait = Some(Wait::PageLocked(head));
                } else if self.mem[head as usize].mapping != ino {
                    // Truncated meanwhile: look it up again.
                    self.unlock_page(head);
                    self.put_page(head);
                    continue;
                } else if head != pfn || self.mem[head as usize].test(pg::HEAD) {
                    // A large folio to read again: as order-0 pages (split, look again).
                    self.unlock_page(head);
                    self.put_page(head);
                    self.split_folio(head);
                    continue;
                } else {
                    // page_not_up_to_date_locked: ->readpage again and wait for it.
                    self.readpage_locked(ino, pfn);
                    self.put_page(pfn);
                    out.wait = Some(Wait::PageLocked(pfn));
                }
                break;
            }
            let folio_first = self.mem[head as usize].index;
            let folio_end = folio_first + self.folio_nr_pages(head);
            let mark = if self.features.read_accessed_folio {
                // filemap_read: not when the read starts in the page where the previous
                // one ended (pos_same_folio(pos, prev_pos - 1)). Applied to every page
                // with last_pos advanced after each copy, this marks every page of a read
                // but (maybe) its first, as the kernel's per-batch check does.
                // With a large folio: not when that page is in this page's folio.
                last_pos == u64::MAX
                    || last_pos == 0
                    || !(folio_first..folio_end).contains(&((last_pos - 1) / PAGE_SIZE))
            } else {
                // do_generic_file_read: not when this continues the previous read inside
                // the same page.
                let (prev_index, prev_offset) = if last_pos == u64::MAX {
                    (u64::MAX, 0)
                } else {
                    (last_pos / PAGE_SIZE, last_pos % PAGE_SIZE)
                };
                prev_index != index || offset != prev_offset
            };
            if mark {
                self.mark_page_accessed(head);
            }
            self.copy_to_user(nr);
            self.oracle_check_read(ino, pfn);
            // filemap_read drops a PG_dropbehind folio after the read's copies from it:
            // at its last page, or where the read ends.
            if index + 1 == folio_end || p + nr >= end {
                self.filemap_end_dropbehind_read(head);
            }
            self.put_page(head);
            last_pos = if self.features.read_accessed_folio {
                // filemap_read: where the read ended (ki_pos).
                index * PAGE_SIZE + offset + nr
            } else {
                // prev_index stays this page; prev_offset wraps to 0 after a full page,
                // as in do_generic_file_read (so re-reading a whole page does not mark it
                // again).
                index * PAGE_SIZE + (offset + nr) % PAGE_SIZE
            };
            done += nr;
        }
        if out.wait.is_none() {
            ra.prev_pos = last_pos;
        }
        out.done = done;
        self.leave(prev);
        out
    }

    /// copy_page_to_iter: copy `bytes` from a page to the user buffer.
    #[inline]
    fn copy_to_user(&mut self, bytes: u64) {
        let prev = self.enter(KFunc::CopyPageToIter);
        self.charge_bulk_store(self.costs.page_copy_ps, bytes);
        self.leave(prev);
    }
}
