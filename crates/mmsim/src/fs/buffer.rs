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

use crate::mm::memcontrol::{MemcgId, NO_MEMCG, ROOT_MEM_CGROUP};
use crate::mm::page::{pg, Pfn};
use crate::mm::slab::{KmemCache, VfsAllocError};
use crate::sched::Wait;
use crate::sim::Sim;

/// `Page::private` of a data page that has buffers (PagePrivate with a buffer ring).
pub const BUFFERS: u32 = u32::MAX - 1;

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
        self.mem[pfn as usize].private = BUFFERS;
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
}
