//! Buffer heads of a block filesystem's data pages as kernel memory (fs/buffer.c
//! create_empty_buffers / folio_alloc_buffers, try_to_free_buffers; rule
//! `buffer-head-kmem`, v4.19 "fs, mm: account buffer_head to kmemcg").
//!
//! ext4's write_begin (ext4_da_write_begin → ext4_block_write_begin) gives a page it is
//! about to write a buffer_head per block (one: 4 KiB blocks) if it has none; the page
//! keeps it until it leaves the page cache (reclaim's filemap_release_folio and
//! truncation's block_invalidate_folio free it with try_to_free_buffers). Pages the read
//! path brings in (ext4_mpage_readpages) get none. Since 4.19 the object is charged to
//! the page's memory cgroup (folio_alloc_buffers runs under set_active_memcg(folio_memcg)
//! with __GFP_ACCOUNT), so a cgroup that writes files holds about 2.7 % of its written
//! cache again as slab (memory.stat `slab_reclaimable`: bh_cachep is
//! SLAB_RECLAIM_ACCOUNT) — on Linux 6.18, a 32 MiB cgroup rewriting a 16 MiB journal held
//! 132 pages of kernel memory.
//!
//! Modelled: the object of a page written with write(2) through a block filesystem, in the
//! `buffer_head` slab cache (`mm::slab`: packed 39 to a slab page, charged in bytes through
//! the memcg's obj_cgroup from 5.9), placed on the page's node, freed when the page
//! leaves the page cache. The mark is `Page::private` == [`BUFFERS`] (a block
//! filesystem's order-0 data page never uses the field otherwise: it is neither in the
//! swap cache nor a folio head). Not modelled: the buffers a write fault's page_mkwrite
//! attaches, the buffer cache's own pages (the inode table's blocks), and the buffer
//! heads' memory before 4.19 (uncharged then; the rule off models none).
//!
//! A large folio (`large-folios`, `mm::folio`) written through write_begin gets a buffer
//! head per block (per page), kept in [`FolioBlocks`] (`Sim::folio_blocks`, by head):
//! which blocks a write dirtied (BH_Dirty: block_commit_write marks the blocks the copy
//! covered, folio_mark_dirty the folio whole — NR_FILE_DIRTY and NR_DIRTIED count all its
//! pages), which are being written (BH_Async_Write: ext4_bio_write_folio submits only
//! the dirty blocks, so `pgpgout` counts blocks while NR_WRITTEN counts the folio's
//! pages, and the folio's writeback ends with its last block, end_buffer_async_write),
//! and how many of the objects were charged. The state lives beside the frames, not in
//! them: a tail's flags stay free of page state.

use crate::mm::memcontrol::{MemcgId, NO_MEMCG, ROOT_MEM_CGROUP};
use crate::mm::page::{pg, Pfn};
use crate::mm::slab::{KmemCache, VfsAllocError};
use crate::sched::Wait;
use crate::sim::Sim;

/// `Page::private` of a data page that has buffers (PagePrivate with a buffer ring).
pub const BUFFERS: u32 = u32::MAX - 1;

/// Words of a block bitmap: a folio of up to 2^MAX_PAGECACHE_ORDER blocks.
const BLOCK_WORDS: usize = 1 << (crate::mm::folio::MAX_PAGECACHE_ORDER - 6);

/// The buffer heads of a large folio (one per 4 KiB block: per page, by its place in the
/// folio).
#[derive(Clone, Debug, Default)]
pub struct FolioBlocks {
    /// BH_Dirty of each block.
    dirty: [u64; BLOCK_WORDS],
    /// BH_Async_Write: blocks submitted whose write has not completed.
    inflight: [u64; BLOCK_WORDS],
    /// Objects allocated (charged) so far: create_empty_buffers allocates them one by one
    /// and a writer that must wait for one resumes where it stopped.
    charged: u32,
}

impl FolioBlocks {
    fn test(bits: &[u64; BLOCK_WORDS], k: u64) -> bool {
        bits[(k / 64) as usize] & (1 << (k % 64)) != 0
    }
    /// Whether block `k` is dirty.
    pub fn block_dirty(&self, k: u64) -> bool {
        Self::test(&self.dirty, k)
    }
    /// Whether block `k` is being written.
    pub fn block_inflight(&self, k: u64) -> bool {
        Self::test(&self.inflight, k)
    }
    /// Whether any block is being written.
    pub fn any_inflight(&self) -> bool {
        self.inflight.iter().any(|w| *w != 0)
    }
    /// Objects charged.
    pub fn charged(&self) -> u32 {
        self.charged
    }
}

/// Whether page `p` carries buffer heads (a block filesystem's data page that was
/// written).
#[inline]
pub fn has_buffers(p: &crate::mm::page::Page) -> bool {
    p.private == BUFFERS && p.flags & (pg::SWAPBACKED | pg::SWAPCACHE | pg::HEAD | pg::TAIL) == 0
}

impl Sim {
    /// The memcg a data page's buffer heads are charged to: the page's (set_active_memcg
    /// of folio_memcg), the root when kmem accounting is off.
    pub(crate) fn buffers_memcg(&self, pfn: Pfn) -> MemcgId {
        let m = self.mem[pfn as usize].memcg;
        if self.features.memcg_kmem_vfs && m != NO_MEMCG {
            m
        } else {
            ROOT_MEM_CGROUP
        }
    }

    /// create_empty_buffers for data page `pfn` of a block filesystem (locked, in the page
    /// cache), if it has none and `buffer-head-kmem` is on. The allocation is
    /// __GFP_NOFAIL: where the charge or the slab page must wait, the writer waits and
    /// retries (its write restarts at this page); where it cannot be had at all, it waits
    /// a congestion period and retries (the kernel loops in the allocator).
    pub fn create_empty_buffers(&mut self, pfn: Pfn) -> Result<(), Wait> {
        if !self.features.buffer_head_kmem || has_buffers(&self.mem[pfn as usize]) {
            return Ok(());
        }
        let memcg = self.buffers_memcg(pfn);
        let node = self.mem[pfn as usize].node as usize;
        self.alloc_buffer_head(memcg, node)?;
        self.mem[pfn as usize].private = BUFFERS;
        Ok(())
    }

    /// alloc_buffer_head (__GFP_NOFAIL) charged to `memcg` on `node`: a charge or slab page
    /// that must wait makes the caller wait; one that cannot be had at all waits a
    /// congestion period (the kernel loops in the allocator).
    fn alloc_buffer_head(&mut self, memcg: MemcgId, node: usize) -> Result<(), Wait> {
        match self.slab_prealloc(memcg, node, &[KmemCache::BufferHead]) {
            Ok(()) => {}
            Err(VfsAllocError::Wait(w)) => return Err(w),
            Err(VfsAllocError::NoMem) => {
                return Err(Wait::Until(
                    self.now() + crate::mm::vmscan::CONGESTION_WAIT_PS,
                ))
            }
        }
        self.slab_obj_alloc(KmemCache::BufferHead, memcg, node);
        Ok(())
    }

    /// try_to_free_buffers of a data page leaving the page cache: its buffer head goes
    /// back to the slab (uncharged). Nothing for a page without buffers.
    #[inline]
    pub(crate) fn free_page_buffers(&mut self, pfn: Pfn) {
        if has_buffers(&self.mem[pfn as usize]) {
            self.free_page_buffers_slow(pfn);
        }
    }

    #[cold]
    fn free_page_buffers_slow(&mut self, pfn: Pfn) {
        let memcg = self.buffers_memcg(pfn);
        let node = self.mem[pfn as usize].node;
        self.mem[pfn as usize].private = 0;
        self.vfs_obj_free(KmemCache::BufferHead, memcg, node as u8);
    }

    /// create_empty_buffers for the large folio headed by `head` (locked, in the page
    /// cache): its block state, and with `buffer-head-kmem` a buffer head per page,
    /// allocated one by one (__GFP_NOFAIL: a wait makes the writer wait and retry, and the
    /// objects charged so far stay the folio's).
    pub fn folio_create_buffers(&mut self, head: Pfn) -> Result<(), Wait> {
        let nr = self.folio_nr_pages(head) as u32;
        let charging = self.features.buffer_head_kmem;
        let fb = self.folio_blocks.entry(head).or_default();
        if !charging || fb.charged >= nr {
            return Ok(());
        }
        let memcg = self.buffers_memcg(head);
        let node = self.mem[head as usize].node as usize;
        while self.folio_blocks[&head].charged < nr {
            self.alloc_buffer_head(memcg, node)?;
            self.folio_blocks
                .get_mut(&head)
                .expect("folio blocks")
                .charged += 1;
        }
        Ok(())
    }

    /// block_commit_write's mark_buffer_dirty of the blocks `first..=last` (places in the
    /// folio headed by `head`, which has its block state).
    pub fn folio_mark_blocks_dirty(&mut self, head: Pfn, first: u64, last: u64) {
        let fb = self.folio_blocks.get_mut(&head).expect("folio blocks");
        for k in first..=last {
            fb.dirty[(k / 64) as usize] |= 1 << (k % 64);
        }
    }

    /// The write of a large folio's dirty blocks starts (ext4_bio_write_folio:
    /// clear_buffer_dirty, set_buffer_async_write): their frames, in index order, into
    /// `out`. A folio without block state (dirtied whole) writes every block.
    pub fn folio_start_block_writes(&mut self, head: Pfn, out: &mut Vec<Pfn>) {
        let nr = self.folio_nr_pages(head);
        let frames = self.folio_frames(head);
        let fb = self.folio_blocks.entry(head).or_default();
        let whole = fb.dirty.iter().all(|w| *w == 0);
        for k in 0..nr {
            let (w, b) = ((k / 64) as usize, 1u64 << (k % 64));
            if whole || fb.dirty[w] & b != 0 {
                fb.dirty[w] &= !b;
                fb.inflight[w] |= b;
                out.push(frames[k as usize]);
            }
        }
        self.give_pfn_buf(frames);
    }

    /// end_buffer_async_write of the block at frame `pfn` of the large folio headed by
    /// `head`: true when it was the folio's last block in flight (its writeback ends).
    pub fn folio_end_block_write(&mut self, head: Pfn, pfn: Pfn) -> bool {
        let k = if pfn == head {
            0
        } else {
            self.mem[pfn as usize].index - self.mem[head as usize].index
        };
        let fb = self.folio_blocks.get_mut(&head).expect("folio blocks");
        fb.inflight[(k / 64) as usize] &= !(1 << (k % 64));
        !fb.any_inflight()
    }

    /// split_folio of a written large folio (`head` now order 0, `tails` its former
    /// tails): each page takes its block's buffer head; under writeback, a page whose
    /// block is in flight stays under writeback (its completion ends it as an order-0
    /// page's), the others end theirs now. (The kernel does not split a folio whose
    /// buffers are dirty or under writeback — filemap_release_folio fails — and truncates
    /// or invalidates it whole; mmsim's order-0 paths split it and keep its state.)
    #[cold]
    pub(crate) fn split_folio_blocks(&mut self, head: Pfn, tails: &[Pfn]) {
        let fb = self.folio_blocks.remove(&head).expect("folio blocks");
        let ino = self.mem[head as usize].mapping;
        let hf = self.mem[head as usize].flags;
        let frames: Vec<Pfn> = std::iter::once(head).chain(tails.iter().copied()).collect();
        for (k, &f) in frames.iter().enumerate() {
            if (k as u32) < fb.charged {
                self.mem[f as usize].private = BUFFERS;
            }
            if hf & pg::WRITEBACK == 0 {
                continue;
            }
            if fb.block_inflight(k as u64) {
                self.mem[f as usize].flags |= pg::WRITEBACK | (hf & pg::RECLAIM);
                continue;
            }
            // This page's writeback is over: folio_end_writeback's accounting of one page.
            if f == head {
                self.mem[f as usize].flags &= !(pg::WRITEBACK | pg::RECLAIM);
            }
            self.account_writeback_end(f, ino, 1);
        }
        if hf & pg::WRITEBACK != 0 && !fb.block_inflight(0) {
            self.wake_up_page(head);
        }
    }

    /// try_to_free_buffers of a large folio leaving the page cache: its objects go back to
    /// the slab, its block state goes.
    #[cold]
    pub(crate) fn folio_free_buffers(&mut self, head: Pfn) {
        if let Some(fb) = self.folio_blocks.remove(&head) {
            debug_assert!(!fb.any_inflight(), "a folio freed under writeback");
            let memcg = self.buffers_memcg(head);
            let node = self.mem[head as usize].node as u8;
            for _ in 0..fb.charged {
                self.vfs_obj_free(KmemCache::BufferHead, memcg, node);
            }
        }
    }
}
