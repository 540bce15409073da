//! Large folios in the page cache (`large-folios`): what ext4 does from v6.16 ("ext4:
//! enable large folio for regular file") with the readahead order logic of v6.17
//! (page_cache_ra_order, page_cache_async_ra's `ra->order += 2`).
//!
//! A folio of order n is 2^n frames. The head (pg::HEAD) carries what the kernel keeps in
//! the folio — flags, lock, references, LRU place, memcg events — and its `mlock_count`
//! holds the order, its `private` the first tail. Each tail (pg::TAIL) sits in the page
//! cache at its own index (so lookups, the observer and the content oracle see every
//! page) with `prev` pointing at the head and `next` at the next tail; a tail is never on
//! a list and holds no reference of its own (get_page / put_page of a tail take the
//! head's, as page_folio does). An LRU list's length, the LRU gauges, pgscan / pgsteal /
//! pgactivate / pgdeactivate, the refault and activation counters and the nonresident
//! age all count a folio's pages.
//!
//! Modelled: readahead into folios (`mm::readahead`), the read path marking a folio
//! accessed once per read (filemap_read's pos_same_folio rule), activation, classic
//! reclaim evicting a folio whole with one shadow entry per index (the kernel stores one
//! multi-index entry; from order 6, a whole leaf, above the leaves, which then are no shadow
//! nodes), refaults of any of its indices, freeing. Mapped large folios: a read fault
//! maps pages of a folio without splitting it (fault-around its window's pages, the fault
//! its page; v6.18's `map-entire-folio` the whole folio), each page's mapcount its own,
//! every PTE holding a reference of the folio (the head's); folio_mapped tests every
//! page; folio_referenced counts each mapping with a young PTE of the folio once; reclaim
//! unmaps every page; munmap marks a folio with young PTEs accessed once (the zap's
//! folio_pte_batch). A write fault, mlock and MADV_COLD / MADV_PAGEOUT split a mapped
//! folio (each page takes the cache's reference and one per PTE mapping it; a mapped
//! large folio is never dirtied through its PTEs, nor mlocked). write(2): a write into a
//! cached large folio keeps it whole and dirties it whole, and write_begin makes a folio
//! of the copy's length where nothing is cached (fgf_set_order, v6.17's
//! write_begin_get_folio: `write_begin_new_folio`); the folio's blocks — which are dirty,
//! which being written — are its buffer heads' (`fs::buffer`), writeback writes only the
//! dirty ones and the folio's writeback ends with its last. Under MGLRU (its 6.14+
//! rules) a folio is one entry of its generation's list: the generations' page counts,
//! the tiers' evicted / protected / refaulted counts, scan_folios' batch of MIN_LRU_BATCH
//! pages and the workingset counters count its pages (folio_nr_pages), the page-table
//! walk and the look-around update it once per run of its young PTEs (their `last`), and
//! a split puts its tails beside it on its generation's list. Not modelled: mlocked large
//! folios (the kernel mlocks one that a VM_LOCKED VMA maps whole), PMD mappings (order 9
//! is mapped by PTEs), MGLRU with 6.1's rules (order-0 pages: ext4 had no large folios
//! then), and the buddy allocator's high orders (a folio is 2^n order-0 frames, each
//! charged to the memcg in turn; the kernel charges the 2^n pages at once). Every other path that would
//! write, truncate or invalidate part of a folio splits it first (split_folio: the tails
//! take the head's flags and go beside it on its list; the kernel would not split a folio
//! with dirty buffers or under writeback, and truncates or writes it whole).

use crate::machine::profile::KFunc;
use crate::mm::filemap::CacheError;
use crate::mm::memcontrol::MemcgId;
use crate::mm::page::{pg, Pfn, NIL, NO_MAPPING, PAGE_SIZE};
use crate::mm::page_alloc::Gfp;
use crate::mm::radix_tree::Entry;
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// MAX_PAGECACHE_ORDER on x86-64 (PMD_ORDER).
pub const MAX_PAGECACHE_ORDER: u32 = 9;

impl Sim {
    /// page_folio: the head of the folio `pfn` belongs to (itself for an order-0 page).
    #[inline]
    pub fn folio_head(&self, pfn: Pfn) -> Pfn {
        let p = &self.mem[pfn as usize];
        if p.flags & pg::TAIL != 0 {
            p.prev
        } else {
            pfn
        }
    }

    /// folio_nr_pages of the folio whose head is `head`.
    #[inline]
    pub fn folio_nr_pages(&self, head: Pfn) -> u64 {
        self.mem[head as usize].nr_pages()
    }

    /// The tails of the folio headed by `head`, in index order, into `out` (nothing for
    /// an order-0 page: a flag test, inlined where pages pass by the million).
    #[inline]
    pub fn folio_tails(&self, head: Pfn, out: &mut Vec<Pfn>) {
        if self.mem[head as usize].flags & pg::HEAD != 0 {
            self.push_folio_tails(head, out);
        }
    }

    #[cold]
    fn push_folio_tails(&self, head: Pfn, out: &mut Vec<Pfn>) {
        let mut t = self.mem[head as usize].private;
        while t != NIL {
            out.push(t);
            t = self.mem[t as usize].next;
        }
    }

    /// folio_mapped: whether any page of the folio `pfn` heads (or the page itself) is
    /// mapped by a PTE.
    #[inline]
    pub fn folio_mapped(&self, pfn: Pfn) -> bool {
        let p = &self.mem[pfn as usize];
        p.mapped() || (p.flags & pg::HEAD != 0 && self.folio_tails_mapped(pfn))
    }

    #[cold]
    fn folio_tails_mapped(&self, head: Pfn) -> bool {
        let mut t = self.mem[head as usize].private;
        while t != NIL {
            if self.mem[t as usize].mapped() {
                return true;
            }
            t = self.mem[t as usize].next;
        }
        false
    }

    /// mapping_large_folio_support: a regular file of a block filesystem when
    /// `large-folios` is on, under either policy (MGLRU with 6.1's rules — an era without
    /// large folios in ext4 — keeps order-0 pages); never the inode table's blocks (the
    /// block device's mapping) or tmpfs.
    pub fn mapping_large_folio_support(&self, ino: u32) -> bool {
        self.features.large_folios
            && !(self.lru_gen_enabled() && self.mglru_v6_1())
            && !self.inode(ino).mapping.swapbacked
            && self.fss[self.inode(ino).fs].device.is_some()
            && !self.is_inode_table(ino)
    }

    /// ractl_alloc_folio / filemap_alloc_folio + filemap_add_folio's charge: 2^order
    /// frames joined into a folio and charged to `memcg` at once (mem_cgroup_charge of the
    /// folio: one try_charge of its pages, reclaiming at least that many). Ok(None) when a
    /// frame cannot be had or the charge fails (the frames are given back);
    /// Err(wait) when the charge must sleep first (legacy limit reclaim's throttle or
    /// writeback wait, an OOM victim's exit): the caller restarts after it.
    pub fn alloc_folio_charged(
        &mut self,
        order: u32,
        gfp: Gfp,
        memcg: MemcgId,
    ) -> Result<Option<Pfn>, crate::sched::Wait> {
        let nr = 1u64 << order;
        let mut frames = self.take_pfn_buf();
        for _ in 0..nr {
            match self.alloc_page(gfp) {
                // A folio is one block of one node: a frame the zonelist took from
                // another node fails it (the kernel's high-order allocation falls back to
                // another node whole, or fails).
                Ok(p)
                    if frames.first().is_some_and(|&h| {
                        self.mem[h as usize].node != self.mem[p as usize].node
                    }) =>
                {
                    self.put_page(p);
                    break;
                }
                Ok(p) => frames.push(p),
                Err(_) => break,
            }
        }
        let charged = if (frames.len() as u64) < nr {
            Ok(false)
        } else {
            match self.mem_cgroup_charge_folio(&frames, memcg, gfp) {
                Ok(()) => Ok(true),
                Err(crate::mm::page_alloc::AllocError::Wait(w)) => Err(w),
                Err(_) => Ok(false),
            }
        };
        if charged != Ok(true) {
            for &p in &frames {
                self.put_page(p);
            }
            self.give_pfn_buf(frames);
            return charged.map(|_| None);
        }
        let head = frames[0];
        if order > 0 {
            for (k, &t) in frames.iter().enumerate().skip(1) {
                let next = frames.get(k + 1).copied().unwrap_or(NIL);
                let p = &mut self.mem[t as usize];
                p.refcount = 0;
                p.flags |= pg::TAIL;
                p.prev = head;
                p.next = next;
            }
            let h = &mut self.mem[head as usize];
            h.flags |= pg::HEAD;
            h.mlock_count = order;
            h.private = frames[1];
        }
        self.give_pfn_buf(frames);
        Ok(Some(head))
    }

    /// filemap_add_folio for a large folio at `index` (aligned to its size): -EEXIST when
    /// any page of its range is cached; else every frame goes in at its index (taking the
    /// cache's reference on the head), the last shadow entry the range held is the
    /// folio's refault (workingset_refault of all its pages), and the head is queued for
    /// the LRU. The folio is returned locked.
    pub fn add_folio_to_page_cache_lru(
        &mut self,
        head: Pfn,
        ino: u32,
        index: u64,
    ) -> Result<(), CacheError> {
        self.add_folio_to_page_cache_lru_gfp(head, ino, index, false)
    }

    /// add_folio_to_page_cache_lru with the allocation's __GFP_WRITE (a folio
    /// write_begin creates), which from 4.7 takes the shadow entry without a refault
    /// (`read-only-refault`).
    pub fn add_folio_to_page_cache_lru_gfp(
        &mut self,
        head: Pfn,
        ino: u32,
        index: u64,
        gfp_write: bool,
    ) -> Result<(), CacheError> {
        let nr = self.folio_nr_pages(head);
        let prev = self.enter(KFunc::AddToPageCacheLru);
        self.tree_lock(ino);
        let pi = self.enter(KFunc::PageCacheTreeInsert);
        self.charge_tree_walk(ino);
        let busy = (index..index + nr)
            .any(|i| matches!(self.inode(ino).mapping.tree.lookup(i), Entry::Page(_)));
        if busy {
            self.leave(pi);
            self.tree_unlock(ino);
            self.leave(prev);
            return Err(CacheError::Exists);
        }
        self.__SetPageLocked(head);
        self.get_page(head);
        let tag = self.xa_charge_tag();
        self.inode_mut(ino).mapping.tree.charge_tag = tag;
        let frames = self.folio_frames(head);
        let mut shadow = None;
        for (k, &f) in frames.iter().enumerate() {
            let idx = index + k as u64;
            let p = &mut self.mem[f as usize];
            p.mapping = ino;
            p.index = idx;
            if let Entry::Shadow(s) = self.inode_mut(ino).mapping.tree.store(idx, Entry::Page(f)) {
                shadow = Some(s);
            }
        }
        self.give_pfn_buf(frames);
        self.vmstat.add(VmItem::NrFilePages, nr as i64);
        self.leave(pi);
        self.tree_unlock(ino);
        self.tree_events(ino);
        let shadow = shadow.filter(|_| !(gfp_write && self.features.read_only_refault));
        self.refault_and_lru_add(head, shadow);
        self.leave(prev);
        Ok(())
    }

    /// write_begin's __filemap_get_folio(FGP_WRITEBEGIN | fgf_set_order(len)) on a mapping
    /// with large folios, when nothing is cached at the index of `pos`: a new folio for the copy of the `left`
    /// bytes at `pos` — of order ilog2(len) - PAGE_SHIFT, where len is what the copy
    /// reaches before the next MAX_PAGECACHE_ORDER boundary (generic_perform_write's
    /// chunk), lowered to the index's alignment, and lowered again while the allocation
    /// fails or a page of its range is cached. Returns it locked, with the caller's
    /// reference; None where an order-0 page is what write_begin gets (the ordinary
    /// lookup then finds or makes it). A first block the write covers in part and that
    /// holds data within i_size (ext4_block_write_begin would read it before the copy) is
    /// written as an order-0 page here. Err(wait) when the folio's charge must sleep
    /// (the write restarts after it, as the kernel's sleeps inside the charge).
    pub(crate) fn write_begin_new_folio(
        &mut self,
        ino: u32,
        pos: u64,
        left: u64,
    ) -> Result<Option<Pfn>, crate::sched::Wait> {
        debug_assert!(self.mapping_large_folio_support(ino));
        let index = pos / PAGE_SIZE;
        let chunk = PAGE_SIZE << MAX_PAGECACHE_ORDER;
        let len = (chunk - pos % chunk).min(left);
        let mut order = (len.ilog2().saturating_sub(crate::mm::page::PAGE_SHIFT))
            .min(MAX_PAGECACHE_ORDER)
            .min(index.trailing_zeros());
        if order == 0 || matches!(self.inode(ino).mapping.tree.lookup(index), Entry::Page(_)) {
            return Ok(None);
        }
        let inode = self.inode(ino);
        if !pos.is_multiple_of(PAGE_SIZE)
            && index * PAGE_SIZE < inode.size
            && inode.disk_at(index) != 0
        {
            return Ok(None);
        }
        let memcg = self.current_memcg();
        let mut gfp = Gfp::KERNEL;
        gfp.write = self.inode(ino).mapping.account_dirty;
        gfp.fs = self.features.write_begin_fs; // else AOP_FLAG_NOFS
        while order > 0 {
            if let Some(head) = self.alloc_folio_charged(order, gfp, memcg)? {
                if self.features.accessed_init && !self.features.read_only_activation {
                    self.init_page_accessed(head); // FGP_ACCESSED
                }
                if self
                    .add_folio_to_page_cache_lru_gfp(head, ino, index, gfp.write)
                    .is_ok()
                {
                    self.set_dropbehind_if_uncached(head); // FGP_DONTCACHE
                    return Ok(Some(head));
                }
                self.put_page(head);
            }
            order -= 1;
        }
        Ok(None)
    }

    /// The tails' part of __delete_from_page_cache of a large folio (tree_lock held):
    /// each tail's slot takes `shadow` (or is cleared) and the tail leaves the mapping.
    #[cold]
    pub(crate) fn delete_folio_tails_from_page_cache(&mut self, head: Pfn, shadow: Option<u64>) {
        let ino = self.mem[head as usize].mapping;
        let mut tails = self.take_pfn_buf();
        self.folio_tails(head, &mut tails);
        let e = match shadow {
            Some(s) => Entry::Shadow(s),
            None => Entry::Empty,
        };
        for &t in &tails {
            let idx = self.mem[t as usize].index;
            let old = self.inode_mut(ino).mapping.tree.store(idx, e);
            debug_assert_eq!(old, Entry::Page(t));
            self.mem[t as usize].mapping = NO_MAPPING;
        }
        self.tree_events(ino);
        self.vmstat.add(VmItem::NrFilePages, -(tails.len() as i64));
        self.give_pfn_buf(tails);
    }

    /// free_pages of a large folio's tails (the head is freed by the caller): each frame
    /// back to its node's free list.
    #[cold]
    pub(crate) fn free_folio_tails(&mut self, head: Pfn) {
        let mut tails = self.take_pfn_buf();
        self.folio_tails(head, &mut tails);
        for &t in &tails {
            let p = &mut self.mem[t as usize];
            p.flags &= !pg::TAIL;
            p.prev = NIL;
            p.next = NIL;
            self.free_page_frame(t, true);
        }
        self.give_pfn_buf(tails);
        let h = &mut self.mem[head as usize];
        h.flags &= !pg::HEAD;
        h.mlock_count = 0;
        h.private = 0;
    }

    /// split_folio: make the large folio headed by `head` 2^n order-0 pages. Each tail
    /// takes the head's page-state flags (__split_huge_page_tail: referenced, uptodate,
    /// active, workingset, readahead's marker stays on its own page; locked only while a
    /// read is still in flight, whose completion then unlocks each page), the cache's
    /// reference and those of the PTEs that map it (references taken for a while — an
    /// isolation, a lookup, a page gathered for the TLB flush — stay the head's, and their
    /// holders drop them through the head), and goes on the head's list right beside it
    /// (lru_add_split_folio), or into the CPU's LRU batch when the head is off the LRU
    /// (isolated, or still in a batch). The head's lock and references stay the head's.
    /// A dirty folio's pages are all dirty after (the accounting counted them already);
    /// a written folio's buffer heads become its pages' (`fs::buffer`), and under
    /// writeback only the pages whose blocks are in flight stay under it.
    #[cold]
    pub fn split_folio(&mut self, head: Pfn) {
        if self.mem[head as usize].flags & pg::HEAD == 0 {
            return;
        }
        let prev = self.enter(KFunc::SplitFolio);
        let nr = self.folio_nr_pages(head);
        let mut tails = self.take_pfn_buf();
        self.folio_tails(head, &mut tails);
        let hf = self.mem[head as usize].flags;
        let copy = pg::REFERENCED
            | pg::UPTODATE
            | pg::ACTIVE
            | pg::WORKINGSET
            | pg::DROPBEHIND
            | pg::DIRTY
            | if hf & pg::UPTODATE == 0 {
                pg::LOCKED
            } else {
                0
            };
        let on_lru = hf & pg::LRU != 0;
        // On an MGLRU generation's list: the tails go beside the head on that list.
        let gen_list = if on_lru {
            self.lru_gen_list_of(head)
        } else {
            None
        };
        let lru = self.page_lru(head);
        let lv = self.page_lruvec_idx(head);
        if let Some((g, t)) = gen_list {
            // The head now counts one page on its list (the generation's page count, in
            // pages, does not change: lru_add_split_folio).
            self.lruvecs[lv].lrugen.folios[g][t].len -= nr - 1;
        } else if on_lru {
            // The head now counts one page: its list and gauge give back the rest, which
            // the tails take again below.
            self.lruvecs[lv].lists[lru as usize].len -= nr - 1;
            self.vmstat.add(lru.vmstat_item(), -((nr - 1) as i64));
        }
        {
            let h = &mut self.mem[head as usize];
            h.flags &= !pg::HEAD;
            h.mlock_count = 0;
            h.private = 0;
        }
        for &t in tails.iter().rev() {
            {
                // The page cache's reference, and one for each PTE that maps the tail
                // (they were the folio's).
                let p = &mut self.mem[t as usize];
                let ptes = p.mapcount + 1;
                p.flags = (p.flags & !pg::TAIL) | (hf & copy);
                p.refcount = 1 + ptes;
                p.prev = NIL;
                p.next = NIL;
                self.mem[head as usize].refcount -= ptes;
            }
            self.charge(self.costs.plain_rmw_ps);
            if let Some((g, ty)) = gen_list {
                // The generation and refs go with the flags (__split_folio_to_order's
                // LRU_GEN_MASK | LRU_REFS_MASK), the list position beside the head.
                let keep = pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::LRU_LIST_MASK;
                self.mem[t as usize].flags |= pg::LRU | (hf & keep);
                self.lruvecs[lv].lrugen.folios[g][ty].add_before(&mut self.mem, head, t);
            } else if on_lru {
                self.mem[t as usize].flags |= pg::LRU;
                self.lruvecs[lv].lists[lru as usize].add_before(&mut self.mem, head, t);
                self.vmstat.inc(lru.vmstat_item());
            }
        }
        if !on_lru {
            for &t in &tails {
                self.lru_cache_add(t);
            }
        }
        if self.folio_blocks.contains_key(&head) {
            self.split_folio_blocks(head, &tails);
        }
        self.give_pfn_buf(tails);
        self.leave(prev);
    }

    /// For a path that handles order-0 pages only: if `pfn` is part of a large folio,
    /// split it (true: the caller looks its page up again).
    pub(crate) fn split_if_large(&mut self, pfn: Pfn) -> bool {
        let p = &self.mem[pfn as usize];
        if p.flags & (pg::HEAD | pg::TAIL) == 0 {
            return false;
        }
        let head = self.folio_head(pfn);
        self.split_folio(head);
        true
    }
}
