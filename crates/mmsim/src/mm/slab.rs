//! The VFS caches' memory: dentry and inode objects in slab pages (fs/dcache.c d_alloc,
//! fs/inode.c alloc_inode, mm/slub.c), their memory-cgroup charge (SLAB_ACCOUNT), the
//! per-memcg, per-node list_lrus of unused dentries and inodes (mm/list_lru.c), and the
//! superblock shrinker that reclaim calls (fs/super.c super_cache_count / super_cache_scan,
//! fs/dcache.c prune_dcache_sb, fs/inode.c prune_icache_sb, mm/shrinker.c do_shrink_slab).
//!
//! # What the kernel does
//!
//! A lookup that misses the dentry cache allocates a dentry; one that misses the inode cache
//! allocates an inode and reads it from the filesystem's inode table (ext4_iget reads the
//! inode-table block through the block device's page cache). Creating a file allocates both.
//! From 4.5 the dentry and inode caches are SLAB_ACCOUNT: their slab pages are charged to
//! the memory cgroup of the allocating task, count in memory.current and are subject to
//! memory.max. Both caches are SLAB_RECLAIM_ACCOUNT (nr_slab_reclaimable), except tmpfs'
//! shmem_inode_cache (unreclaimable: a tmpfs file lives only in memory).
//!
//! An unused dentry (no reference: the file is neither open nor mapped) sits on its
//! superblock's dentry list_lru of its memcg and node; dput of an entry already there sets
//! DCACHE_REFERENCED. When a dentry is pruned its inode loses its last reference
//! (iput_final) and, if the filesystem is mounted, stays cached on the inode list_lru — from
//! 5.16 only when its page cache is empty and it is clean (mapping_shrinkable: "vfs: keep
//! inodes with page cache off the inode shrinker LRU"); an inode whose last page leaves the
//! page cache goes onto the list then (filemap_remove_folio, __remove_mapping).
//!
//! Reclaim calls shrink_slab for each memcg and node after shrinking its LRU lists
//! (shrink_node_memcgs; MGLRU's shrink_one). The superblock shrinker counts the unused
//! dentries and inodes, scaled by vm.vfs_cache_pressure (100 by default, `[vm]`), and
//! do_shrink_slab scans
//! `(count >> priority) * 4 / seeks` of them (seeks = DEFAULT_SEEKS = 2) plus the work it
//! deferred at this priority, in batches of 1024 (the superblock shrinker's batch), capped
//! at twice the count; super_cache_scan splits each batch between dentries and inodes in
//! proportion to their counts and prunes dentries first. An isolated dentry that is in use
//! leaves the list, a referenced one is rotated, any other is freed; an inode likewise, and
//! a freed inode is evicted: the next lookup reads it from disk again.
//!
//! # What we model
//!
//! - Each regular file has a dentry and an inode object when it is "in core"
//!   ([`VfsState`]); files of a scenario's `[[files]]` on a block filesystem start on disk
//!   only (cold caches, as after boot or `drop_caches`); tmpfs files start in core.
//! - Objects are packed into slabs of the cache's geometry per memcg and node ([`CACHES`]:
//!   typical x86-64 6.x /proc/slabinfo values), perfectly: a memcg's slabs for a cache are
//!   `ceil(objects / objs_per_slab)` slabs, each `pages_per_slab` order-0 frames, and at
//!   most one more, empty (SLUB's min_partial keeps 5–10; the kernel's order-1..3 slab
//!   pages and the fragmentation of partially used slabs are not modelled). Frames carry
//!   PG_slab, count in nr_slab_reclaimable / nr_slab_unreclaimable and in the memcg's
//!   memory.stat `slab_reclaimable` / `slab_unreclaimable` / `slab`.
//! - A lookup of a file not in core reads block `ino / 16` of its filesystem's inode table
//!   (16 inodes of 256 bytes per 4 KiB block), a hidden file on the same device, through the
//!   page cache: the read is a real IO on a miss and a page-cache hit otherwise; the page is
//!   charged and reclaimed like any file page.
//! - The shrinker runs per memcg and node from classic reclaim and MGLRU, with the 4.16+
//!   priority formula in every era (before 4.16 the scan target was proportional to the LRU
//!   pages scanned; not modelled), and the 5.16+ inode-list rule in every era (before 5.16
//!   inodes with page cache were on the list and the shrinker invalidated their clean pages,
//!   the pages they reaped counted in `pginodesteal` — not modelled). An inode whose only
//!   cache entry is a shadow at index 0 (a one-page file's, kept in the xarray's head, out
//!   of the shadow-node shrinker's reach) is shrinkable: evicting it drops the shadow,
//!   which counts as a reaped page (`pginodesteal`, `kswapd_inodesteal` in kswapd), as
//!   mapping_try_invalidate counts value entries. Freed slab pages and reaped entries count
//!   as reclaimed (reclaim_state) in global reclaim.
//! - The shrinker needs __GFP_FS: super_cache_scan stops a reclaimer without it and
//!   do_shrink_slab defers the scan (`nr_deferred`). Dentries are allocated GFP_KERNEL,
//!   ext4's inodes GFP_NOFS ([`cache_gfp`]) and, from 5.8, page-cache readahead under
//!   memalloc_nofs_save (`readahead-nofs`); the inode table's pages, the buffer cache's,
//!   without __GFP_FS in every era (grow_dev_folio, [`Sim::is_inode_table`]).
//! - Charging is by slab page per memcg, as 4.5–5.8 did (each memcg had its own copies of
//!   the caches), or from 5.9 (`memcg-kmem-objcg`, "mm: memcg/slab: use a single set of
//!   kmem_caches for all accounted allocations") by object: one set of slabs per node
//!   (kept in the root's lruvec, charged to no memcg) holds every memcg's objects, and
//!   each object is charged to its memcg in bytes ([`obj_full_size`]) through the memcg's
//!   byte stock (`Sim::obj_cgroup_precharge`), the charge made before the slab
//!   allocation (memcg_slab_pre_alloc_hook); memory.stat `slab_*` counts the bytes. The
//!   kernel's byte stock is per CPU (and objcg->nr_charged_bytes); here one per memcg.
//! - A fourth cache holds the buffer heads of written data pages (`fs/buffer.rs`, from
//!   4.19): allocated and freed with their pages, charged the same way, never shrunk.
//! - The page cache's tree nodes (`xarray-node-kmem`, from 4.6) are charged to the
//!   inserting task's memcg in bytes (`Sim::tree_events` in `mm/workingset.rs`), without
//!   slab frames.
//! - Not modelled: negative dentries, directories' dentries and inodes, the dcache hash
//!   table, RCU-delayed freeing, the tree nodes' slab frames, other slab caches
//!   (filesystem metadata objects).

use std::collections::VecDeque;

use crate::machine::profile::KFunc;
use crate::mm::memcontrol::{MemcgId, ROOT_MEM_CGROUP};
use crate::mm::page::{pg, Pfn, PAGE_SIZE};
use crate::mm::page_alloc::{AllocError, Gfp};
use crate::mm::radix_tree::Entry;
use crate::mm::vmstat::VmItem;
use crate::sched::Wait;
use crate::sim::Sim;

/// A VFS slab cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KmemCache {
    /// `dentry`.
    Dentry = 0,
    /// `ext4_inode_cache` (a block filesystem's inodes).
    BlockfsInode = 1,
    /// `shmem_inode_cache` (tmpfs' inodes).
    ShmemInode = 2,
    /// `buffer_head` (a block filesystem's data pages written through write_begin:
    /// `fs/buffer.rs`; not a VFS cache, no shrinker: freed with its page).
    BufferHead = 3,
    /// `filp` (an open file's `struct file`, from open to close: `filp-kmem`; no
    /// shrinker).
    Filp = 4,
}

/// Number of slab caches modelled.
pub const NR_CACHES: usize = 5;

/// A cache's geometry (/proc/slabinfo's objsize, objperslab, pagesperslab).
#[derive(Clone, Copy, Debug)]
pub struct CacheGeometry {
    /// /proc/slabinfo name.
    pub name: &'static str,
    /// Object size, bytes.
    pub objsize: u64,
    /// Objects per slab.
    pub objs_per_slab: u64,
    /// Pages per slab.
    pub pages_per_slab: u64,
    /// SLAB_RECLAIM_ACCOUNT: counted in nr_slab_reclaimable.
    pub reclaimable: bool,
}

/// The caches, indexed by [`KmemCache`] (typical x86-64 6.x /proc/slabinfo).
pub const CACHES: [CacheGeometry; NR_CACHES] = [
    CacheGeometry {
        name: "dentry",
        objsize: 192,
        objs_per_slab: 21,
        pages_per_slab: 1,
        reclaimable: true,
    },
    CacheGeometry {
        name: "ext4_inode_cache",
        objsize: 1176,
        objs_per_slab: 27,
        pages_per_slab: 8,
        reclaimable: true,
    },
    CacheGeometry {
        name: "shmem_inode_cache",
        objsize: 752,
        objs_per_slab: 21,
        pages_per_slab: 4,
        reclaimable: false,
    },
    CacheGeometry {
        // SLAB_RECLAIM_ACCOUNT (bh_cachep): nr_slab_reclaimable.
        name: "buffer_head",
        objsize: 104,
        objs_per_slab: 39,
        pages_per_slab: 1,
        reclaimable: true,
    },
    CacheGeometry {
        name: "filp",
        objsize: 192,
        objs_per_slab: 21,
        pages_per_slab: 1,
        reclaimable: false,
    },
];

/// Inodes per inode-table block (256-byte on-disk inodes in a 4 KiB block).
pub const INODES_PER_BLOCK: u64 = PAGE_SIZE / 256;

/// Inodes per block group (mke2fs's default inode_ratio of 16 KiB in 128 MiB groups).
pub const INODES_PER_GROUP: u64 = 8192;

/// ext4's inode-table readahead, in blocks (s_inode_readahead_blks: the default of
/// /sys/fs/ext4/DEV/inode_readahead_blks, a power of two).
pub const INODE_READAHEAD_BLKS: u64 = 32;

/// The inode-table blocks __ext4_get_inode_loc reads ahead when the block of `ino` must
/// be read from disk, as (first, count): from the block rounded down to
/// [`INODE_READAHEAD_BLKS`] through `INODE_READAHEAD_BLKS` blocks further (the kernel's
/// loop is inclusive), no further than the block after the last used inode of its group
/// (`nr_inodes`: inode numbers in use are below it; the group's table, like its inodes,
/// starts on a multiple of the readahead size).
pub fn inode_table_readahead(ino: u32, nr_inodes: u64) -> (u64, u64) {
    let ino = u64::from(ino);
    let block = ino / INODES_PER_BLOCK;
    let group_first = ino / INODES_PER_GROUP * INODES_PER_GROUP;
    let used = nr_inodes.clamp(ino + 1, group_first + INODES_PER_GROUP) - group_first;
    let table_end = group_first / INODES_PER_BLOCK + used / INODES_PER_BLOCK;
    let first = block & !(INODE_READAHEAD_BLKS - 1);
    let end = (first + INODE_READAHEAD_BLKS).min(table_end);
    (first, end.max(block) - first + 1)
}

/// Buffer heads each CPU's bh_lrus holds (BH_LRU_SIZE; 8 before 3.x's "increase the
/// buffer-head per-CPU LRU size", not modelled).
pub const BH_LRU_SIZE: usize = 16;

/// The superblock shrinker's batch (s_shrink->batch).
const SB_SHRINK_BATCH: u64 = 1024;

/// DEFAULT_SEEKS.
const DEFAULT_SEEKS: u64 = 2;

/// Where a file's VFS objects are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VfsState {
    /// On disk only: a lookup allocates both objects and reads the inode.
    #[default]
    Cold,
    /// The inode is cached, its dentry was pruned: a lookup allocates a dentry.
    InodeOnly,
    /// Dentry and inode cached.
    Cached,
}

/// A file's dentry and inode objects: where they are charged and their list_lru state.
#[derive(Clone, Copy, Debug, Default)]
pub struct VfsInode {
    /// Which objects exist.
    pub state: VfsState,
    /// The dentry's memcg and node.
    pub d_memcg: MemcgId,
    /// The dentry's node.
    pub d_node: u8,
    /// The inode's node.
    pub i_node: u8,
    /// The inode's memcg.
    pub i_memcg: MemcgId,
    /// Nonzero: the dentry is on its list_lru under this sequence number.
    pub d_lru: u32,
    /// DCACHE_REFERENCED.
    pub d_referenced: bool,
    /// Nonzero: the inode is on its list_lru under this sequence number.
    pub i_lru: u32,
    /// I_REFERENCED.
    pub i_referenced: bool,
}

/// One superblock's list_lrus of one memcg and node. Entries are `(ino, seq)`; an entry
/// whose inode no longer carries `seq` was removed (list_lru_del) and is skipped.
#[derive(Clone, Debug, Default)]
pub struct SbLru {
    /// Unused dentries, oldest first.
    pub dentries: VecDeque<(u32, u32)>,
    /// Live entries of `dentries`.
    pub nr_dentries: u64,
    /// Unused inodes, oldest first.
    pub inodes: VecDeque<(u32, u32)>,
    /// Live entries of `inodes`.
    pub nr_inodes: u64,
    /// The shrinker's deferred work (nr_deferred of this memcg and node).
    pub nr_deferred: u64,
}

/// The VFS slab state of one lruvec (memcg and node).
#[derive(Clone, Debug, Default)]
pub struct VfsLruvec {
    /// Objects per cache of this memcg and node.
    pub objs: [u64; NR_CACHES],
    /// Objects per cache in this lruvec's slabs: its own (`objs`) with a memcg's own
    /// slabs; with `memcg-kmem-objcg` the root's lruvec holds the node's one set of slabs
    /// for every memcg's objects and the others hold none.
    pub slab_objs: [u64; NR_CACHES],
    /// Slab frames per cache.
    pub frames: [Vec<Pfn>; NR_CACHES],
    /// Per cache: a slab allocation's reclaim freed objects of the cache meanwhile, and the
    /// slab it then added left more than one slab's room empty (new_slab adds the slab
    /// already decided on; SLUB's partial lists keep empty slabs up to min_partial). Until
    /// the next free gives the extra back, more than one empty slab may stay.
    pub extra_empty_slab: [bool; NR_CACHES],
    /// Per filesystem (superblock) index.
    pub sb: Vec<SbLru>,
}

impl VfsLruvec {
    /// Objects the frames of `cache` can hold.
    fn capacity(&self, cache: usize) -> u64 {
        let g = &CACHES[cache];
        self.frames[cache].len() as u64 / g.pages_per_slab * g.objs_per_slab
    }
    fn sb_mut(&mut self, fs: usize) -> &mut SbLru {
        if self.sb.len() <= fs {
            self.sb.resize_with(fs + 1, SbLru::default);
        }
        &mut self.sb[fs]
    }
    /// This superblock's lists, if any.
    pub fn sb(&self, fs: usize) -> Option<&SbLru> {
        self.sb.get(fs)
    }
}

/// mapping_shrinkable: no page cached, and no shadow entry but, at most, one at index 0
/// (the xarray keeps a lone index-0 entry in its head, where the shadow-node shrinker cannot
/// see it).
pub fn mapping_shrinkable(inode: &crate::fs::Inode) -> bool {
    let t = &inode.mapping.tree;
    t.nr_pages() == 0
        && (t.nr_shadows() == 0 || (t.nr_shadows() == 1 && matches!(t.lookup(0), Entry::Shadow(_))))
}

/// The gfp a cache's objects are allocated with: d_alloc and shmem_alloc_inode GFP_KERNEL,
/// ext4_alloc_inode GFP_NOFS (the block filesystem's inodes; its reclaim cannot run the
/// superblock shrinker).
pub fn cache_gfp(cache: usize) -> Gfp {
    // (alloc_page_buffers: GFP_NOFS | __GFP_ACCOUNT | __GFP_NOFAIL.)
    if cache == KmemCache::BlockfsInode as usize || cache == KmemCache::BufferHead as usize {
        Gfp::NOFS
    } else {
        Gfp::KERNEL
    }
}

/// obj_full_size: the bytes an object of `cache` charges its memcg with
/// `memcg-kmem-objcg` — its size and the obj_cgroup pointer its slab keeps for it.
pub fn obj_full_size(cache: usize) -> u64 {
    CACHES[cache].objsize + std::mem::size_of::<u64>() as u64
}

/// The inode cache of a file (tmpfs: shmem_inode_cache).
pub fn inode_cache(tmpfs: bool) -> KmemCache {
    if tmpfs {
        KmemCache::ShmemInode
    } else {
        KmemCache::BlockfsInode
    }
}

impl Sim {
    /// The memcg new VFS objects are charged to: the current task's with SLAB_ACCOUNT
    /// (`memcg-kmem-vfs`), else the root.
    fn vfs_memcg(&self) -> MemcgId {
        if self.features.memcg_kmem_vfs {
            self.current_memcg()
        } else {
            ROOT_MEM_CGROUP
        }
    }

    /// The lruvec memcg whose slabs hold `memcg`'s objects: its own (4.5–5.8: a set of
    /// caches per memcg), or the root's with `memcg-kmem-objcg` (one set for all).
    fn slab_home(&self, memcg: MemcgId) -> MemcgId {
        if self.features.memcg_kmem_objcg {
            ROOT_MEM_CGROUP
        } else {
            memcg
        }
    }

    /// NR_SLAB_RECLAIMABLE_B and NR_SLAB_UNRECLAIMABLE_B of `memcg`'s lruvec on `node`, each
    /// in pages (lruvec_page_state_local >> PAGE_SHIFT, as count_shadow_nodes adds them):
    /// its VFS objects' bytes (`memcg-kmem-objcg`), else its slab frames, and its
    /// page-cache tree nodes' bytes (`xarray-node-kmem`). The root's count nothing: its
    /// objects have no obj_cgroup, its slab pages no memcg.
    pub fn lruvec_vfs_slab_pages(&self, memcg: MemcgId, node: usize) -> u64 {
        if memcg == ROOT_MEM_CGROUP {
            return 0;
        }
        let mut by_kind = [0u64; 2];
        if self.features.xarray_node_kmem {
            by_kind[0] +=
                self.lruvec(memcg, node).xa_nodes * crate::mm::workingset::XA_NODE_FULL_SIZE;
        }
        if !self.features.memcg_kmem_vfs {
            return by_kind[0] / PAGE_SIZE;
        }
        let v = &self.lruvec(memcg, node).vfs;
        for (c, g) in CACHES.iter().enumerate() {
            by_kind[usize::from(!g.reclaimable)] += if self.features.memcg_kmem_objcg {
                v.objs[c] * obj_full_size(c)
            } else {
                v.frames[c].len() as u64 * PAGE_SIZE
            };
        }
        by_kind.iter().map(|b| b / PAGE_SIZE).sum()
    }

    /// Whether objects are charged by bytes through their memcg's obj_cgroup.
    pub(crate) fn objcg_charging(&self) -> bool {
        self.features.memcg_kmem_vfs && self.features.memcg_kmem_objcg
    }

    /// Make room for one object of each of `caches` in the slabs of the current memcg and
    /// node (new_slab: `pages_per_slab` frames of the cache's gfp, [`cache_gfp`], charged
    /// with SLAB_ACCOUNT). A
    /// wait in the allocation returns the wait; the caller's op restarts and finds the frames
    /// already allocated. Memory that cannot be had is ENOMEM.
    #[inline]
    pub fn vfs_prealloc(&mut self, caches: &[KmemCache]) -> Result<(), VfsAllocError> {
        let memcg = self.vfs_memcg();
        let node = self.cur_node();
        self.slab_prealloc(memcg, node, caches)
    }

    /// [`Sim::vfs_prealloc`] for objects charged to `memcg` on `node`.
    #[inline]
    pub(crate) fn slab_prealloc(
        &mut self,
        memcg: MemcgId,
        node: usize,
        caches: &[KmemCache],
    ) -> Result<(), VfsAllocError> {
        // One object (open's `filp`, a lookup's dentry) whose bytes the memcg's stock holds
        // and whose cache has a free object: nothing to charge or allocate.
        if let &[cache] = caches {
            if self.slab_room_for_one(memcg, node, cache) {
                return Ok(());
            }
        }
        self.slab_prealloc_charge(memcg, node, caches)
    }

    /// [`Sim::slab_prealloc`]'s charge and frames.
    #[inline(never)]
    fn slab_prealloc_charge(
        &mut self,
        memcg: MemcgId,
        node: usize,
        caches: &[KmemCache],
    ) -> Result<(), VfsAllocError> {
        if self.objcg_charging() {
            // memcg_slab_pre_alloc_hook: the objects' bytes are charged before the slab
            // allocation.
            let mut sizes = [(0, Gfp::KERNEL); NR_CACHES];
            for (i, &c) in caches.iter().enumerate() {
                sizes[i] = (obj_full_size(c as usize), cache_gfp(c as usize));
            }
            match self.obj_cgroup_precharge(memcg, &sizes[..caches.len()]) {
                Ok(()) => {}
                Err(AllocError::Wait(w)) => return Err(VfsAllocError::Wait(w)),
                Err(AllocError::NoMem) => return Err(VfsAllocError::NoMem),
            }
        }
        let home = self.slab_home(memcg);
        for &c in caches {
            let c = c as usize;
            let g = CACHES[c];
            loop {
                let lv = &self.lruvec(home, node).vfs;
                if lv.capacity(c) > lv.slab_objs[c] {
                    break;
                }
                let gfp = cache_gfp(c);
                let r = if self.features.memcg_kmem_vfs && !self.features.memcg_kmem_objcg {
                    self.alloc_kmem_page_charged(gfp, memcg)
                } else {
                    self.alloc_page(gfp)
                };
                let pfn = match r {
                    Ok(p) => p,
                    Err(AllocError::Wait(w)) => return Err(VfsAllocError::Wait(w)),
                    Err(AllocError::NoMem) => return Err(VfsAllocError::NoMem),
                };
                self.mem[pfn as usize].flags |= pg::SLAB;
                let item = if g.reclaimable {
                    VmItem::NrSlabReclaimable
                } else {
                    VmItem::NrSlabUnreclaimable
                };
                self.vmstat.inc(item);
                self.mod_memcg_page_stat(pfn, item, 1);
                let lv = &mut self.lruvec_mut(home, node).vfs;
                lv.frames[c].push(pfn);
                if lv.capacity(c) >= lv.slab_objs[c] + 2 * g.objs_per_slab {
                    // The page's allocation reclaimed objects of this cache.
                    lv.extra_empty_slab[c] = true;
                }
            }
        }
        Ok(())
    }

    /// Whether one object of `cache` for `memcg` on `node` needs nothing from
    /// [`Sim::slab_prealloc`]: no page to charge (the byte stock holds its bytes, no debt,
    /// no charge in progress — obj_cgroup_precharge would change nothing) and a free object
    /// in its slabs.
    #[inline]
    fn slab_room_for_one(&self, memcg: MemcgId, node: usize, cache: KmemCache) -> bool {
        let c = cache as usize;
        let charged = !self.objcg_charging() || memcg == ROOT_MEM_CGROUP || {
            let mc = &self.memcgs[memcg as usize];
            mc.obj_charging == 0 && mc.obj_debt_bytes == 0 && mc.obj_stock_bytes >= obj_full_size(c)
        };
        let lv = &self.lruvec(self.slab_home(memcg), node).vfs;
        charged && lv.capacity(c) > lv.slab_objs[c]
    }

    /// kmem_cache_alloc of one object of `cache` after [`Sim::vfs_prealloc`]: its memcg and
    /// node.
    pub(crate) fn vfs_obj_alloc(&mut self, cache: KmemCache) -> (MemcgId, u8) {
        let memcg = self.vfs_memcg();
        let node = self.cur_node();
        self.slab_obj_alloc(cache, memcg, node);
        (memcg, node as u8)
    }

    /// kmem_cache_alloc of one object of `cache` charged to `memcg` on `node`, after
    /// [`Sim::slab_prealloc`].
    pub(crate) fn slab_obj_alloc(&mut self, cache: KmemCache, memcg: MemcgId, node: usize) {
        let c = cache as usize;
        self.lruvec_mut(memcg, node).vfs.objs[c] += 1;
        let home = self.slab_home(memcg);
        let lv = &mut self.lruvec_mut(home, node).vfs;
        debug_assert!(lv.capacity(c) > lv.slab_objs[c]);
        lv.slab_objs[c] += 1;
        if self.objcg_charging() {
            self.obj_cgroup_take(memcg, obj_full_size(c), CACHES[c].reclaimable);
        }
    }

    /// kmem_cache_free of one object of `cache` charged to `memcg` on `node`; an empty slab
    /// beyond one goes back to the allocator (discard_slab: SLUB keeps empty slabs on the
    /// node's partial list up to min_partial; one here). Keeping one also keeps the room a
    /// [`Sim::vfs_prealloc`] made when reclaim between it and the allocation shrinks the
    /// cache. Returns the pages freed.
    pub(crate) fn vfs_obj_free(&mut self, cache: KmemCache, memcg: MemcgId, node: u8) -> u64 {
        let c = cache as usize;
        let g = CACHES[c];
        let node = node as usize;
        self.lruvec_mut(memcg, node).vfs.objs[c] -= 1;
        if self.objcg_charging() {
            self.obj_cgroup_uncharge(memcg, obj_full_size(c), g.reclaimable);
        }
        let home = self.slab_home(memcg);
        self.lruvec_mut(home, node).vfs.slab_objs[c] -= 1;
        let item = if g.reclaimable {
            VmItem::NrSlabReclaimable
        } else {
            VmItem::NrSlabUnreclaimable
        };
        let mut n = 0;
        loop {
            let lv = &mut self.lruvec_mut(home, node).vfs;
            if lv.capacity(c) < lv.slab_objs[c] + 2 * g.objs_per_slab {
                break;
            }
            // discard_slab: its frames back to the allocator, last allocated first.
            for _ in 0..g.pages_per_slab {
                let lv = &mut self.lruvec_mut(home, node).vfs;
                let pfn = lv.frames[c].pop().expect("slab frames");
                self.vmstat.dec(item);
                self.mod_memcg_page_stat(pfn, item, -1);
                // The free clears PG_slab (free_hot_cold_page), after the uncharge has
                // seen a kernel page.
                self.put_page(pfn);
                n += 1;
            }
        }
        // At most one slab's room is empty now.
        self.lruvec_mut(home, node).vfs.extra_empty_slab[c] = false;
        n
    }

    /// d_alloc + new_inode of a file being created (exec_op's path walk preallocated both;
    /// a direct call that cannot have the memory at once leaves the file on disk only).
    pub fn vfs_create(&mut self, ino: u32) {
        let tmpfs = self.inode(ino).mapping.swapbacked;
        if self
            .vfs_prealloc(&[KmemCache::Dentry, inode_cache(tmpfs)])
            .is_err()
        {
            return;
        }
        self.vfs_instantiate(ino);
    }

    /// The caches a lookup of `ino` must allocate (none when it is cached).
    pub fn vfs_lookup_needs(&self, ino: u32) -> &'static [KmemCache] {
        let inode = self.inode(ino);
        match (inode.vfs.state, inode.mapping.swapbacked) {
            (VfsState::Cached, _) => &[],
            (VfsState::InodeOnly, _) => &[KmemCache::Dentry],
            (VfsState::Cold, false) => &[KmemCache::Dentry, KmemCache::BlockfsInode],
            (VfsState::Cold, true) => &[KmemCache::Dentry, KmemCache::ShmemInode],
        }
    }

    /// Take the objects `ino` lacks from the slabs [`Sim::vfs_prealloc`] made room in (its
    /// inode when on disk only — alloc_inode —, then its dentry — d_alloc —): in core.
    fn vfs_instantiate(&mut self, ino: u32) {
        let v = self.inode(ino).vfs;
        if v.state == VfsState::Cold {
            let cache = inode_cache(self.inode(ino).mapping.swapbacked);
            let (im, inn) = self.vfs_obj_alloc(cache);
            let v = &mut self.inode_mut(ino).vfs;
            (v.i_memcg, v.i_node) = (im, inn);
        }
        if v.state != VfsState::Cached {
            let (dm, dn) = self.vfs_obj_alloc(KmemCache::Dentry);
            let v = &mut self.inode_mut(ino).vfs;
            (v.d_memcg, v.d_node) = (dm, dn);
            v.state = VfsState::Cached;
        }
    }

    /// A path lookup of the regular file `ino` (path walk, d_lookup; on a miss d_alloc and
    /// ->lookup, whose iget reads the inode from the inode table when it is not cached).
    /// Restartable: a wait returns with nothing committed but the objects' slab frames and
    /// the metadata blocks read, which the retry finds (a block the task waited for is
    /// held: `Task::held_pages`, dropped when the lookup is done). The lookup holds no
    /// reference after it returns: the caller takes one (open) or lets the dentry go back
    /// to its list (dput).
    #[inline]
    pub fn vfs_lookup(&mut self, ino: u32, path: &str) -> Result<(), VfsAllocError> {
        let state = self.inode(ino).vfs.state;
        if state == VfsState::Cached {
            return Ok(());
        }
        self.vfs_lookup_miss(ino, path, state)
    }

    /// `vfs_lookup` of a file not in the dentry cache: lookup_slow.
    #[inline(never)]
    fn vfs_lookup_miss(
        &mut self,
        ino: u32,
        path: &str,
        state: VfsState,
    ) -> Result<(), VfsAllocError> {
        let prev = self.enter(KFunc::VfsLookup);
        let r = self.vfs_lookup_slow(ino, path, state);
        if !matches!(r, Err(VfsAllocError::Wait(_))) {
            // ext4_lookup and iget are done with the blocks they read (brelse).
            if let Some(t) = self.cur.task {
                self.put_held_pages(t);
            }
        }
        self.leave(prev);
        r
    }

    fn vfs_lookup_slow(
        &mut self,
        ino: u32,
        path: &str,
        state: VfsState,
    ) -> Result<(), VfsAllocError> {
        self.vfs_prealloc(self.vfs_lookup_needs(ino))?;
        // ext4_lookup: the name's directory blocks, then its inode.
        self.dx_read_blocks(self.inode(ino).fs, path)?;
        if state == VfsState::Cold {
            self.read_inode_table(ino)?;
            self.charge(self.costs.inode_op_ps); // iget: the inode filled in
        }
        self.vfs_instantiate(ino);
        // The new dentry holds the inode: an inode still on its list leaves it lazily
        // (inode_lru_isolate finds it referenced).
        Ok(())
    }

    /// Is `ino` its filesystem's hidden inode-table file (block-device pages of the
    /// buffer cache: grow_dev_folio allocates them without __GFP_FS)?
    pub fn is_inode_table(&self, ino: u32) -> bool {
        self.fss[self.inode(ino).fs].inode_table == Some(ino)
    }

    /// ext4_iget's read of the inode-table block of `ino` (__ext4_get_inode_loc →
    /// sb_getblk + bh_read: the block device's page cache, here the filesystem's hidden
    /// inode-table file). A block that is not cached is read with the inode-table
    /// readahead of its group ([`inode_table_readahead`]) submitted first.
    fn read_inode_table(&mut self, ino: u32) -> Result<(), VfsAllocError> {
        let fs = self.inode(ino).fs;
        let Some(table) = self.fss[fs].inode_table else {
            return Ok(());
        };
        let block = u64::from(ino) / INODES_PER_BLOCK;
        let ra = inode_table_readahead(ino, self.inodes.len() as u64);
        // The readahead's pages count too.
        self.meta_getblk(table, block, ra, |s| &mut s.inode_table_misses)
    }

    /// A metadata block as the buffer cache gets it (sb_getblk / __getblk then bh_read): a
    /// cached, uptodate block is found as __find_get_block finds it (FGP_ACCESSED: marked
    /// accessed; no copy — the caller reads its bytes in place); one still being read is
    /// waited for (the caller restarts); one not cached is read by [`Sim::meta_bread`] with
    /// the blocks `ra` around it.
    fn meta_getblk(
        &mut self,
        table: u32,
        block: u64,
        ra: (u64, u64),
        stat: fn(&mut crate::sched::TaskStats) -> &mut u64,
    ) -> Result<(), VfsAllocError> {
        if let Entry::Page(p) = self.find_get_entry(table, block) {
            let flags = self.mem[p as usize].flags;
            // (A block the task held through its sleep is its buffer already: the kernel's
            // caller goes on with it, it looks nothing up.)
            let held = self
                .cur
                .task
                .is_some_and(|t| self.tasks[t].held_pages.contains(&p));
            if flags & pg::UPTODATE != 0 && !held {
                self.mark_page_accessed(p);
                self.bh_lru_install(p);
            }
            self.put_page(p);
            if flags & pg::UPTODATE != 0 {
                return Ok(());
            }
            if flags & pg::LOCKED != 0 {
                self.hold_page_across_wait(p);
                return Err(VfsAllocError::Wait(Wait::PageLocked(p)));
            }
        }
        self.meta_bread(table, block, ra, stat)
    }

    /// A block __getblk_slow has just created (its page added to the cache and to this
    /// CPU's add batch, read not yet started): grow_dev_folio creates the folio accessed
    /// (FGP_ACCESSED; from 3.16, `accessed-init`), then __find_get_block finds it
    /// (__find_get_block_slow, FGP_ACCESSED: mark_page_accessed) and installs its buffer
    /// in bh_lrus, before the next block is created. The lookup activates the page in the
    /// add batch, no pgactivate counted (__lru_cache_activate_page) — unless adding it
    /// filled the batch and put it on the LRU: then folio_activate, counted. Before 3.16
    /// the lookup only marks it referenced.
    pub(crate) fn getblk_created(&mut self, p: Pfn) {
        if self.features.accessed_init {
            self.init_page_accessed(p);
        }
        self.mark_page_accessed(p);
        self.bh_lru_install(p);
    }

    /// The running task sleeps until block page `pfn` is read: it keeps a reference to
    /// the page until its lookup is done or its call returns (`Task::held_pages`; get_bh).
    fn hold_page_across_wait(&mut self, pfn: Pfn) {
        let Some(t) = self.cur.task else {
            return;
        };
        if !self.tasks[t].held_pages.contains(&pfn) {
            self.get_page(pfn);
            self.tasks[t].held_pages.push(pfn);
        }
    }

    /// The running CPU's bh_lrus after a lookup found block page `p` (lookup_bh_lru moves
    /// a block it holds to the front; __find_get_block's bh_lru_install puts a new one
    /// there and drops the last of [`BH_LRU_SIZE`], brelse). Each block in it holds a
    /// reference (get_bh), so reclaim cannot free its page: the buffer is busy.
    pub fn bh_lru_install(&mut self, p: Pfn) {
        let lru = &mut self.bh_lrus[self.cur.cpu];
        // One pass: each entry moves down a slot, `p` into the first, until `p`'s own
        // slot takes the one before it (found: a rotation of the entries up to it to the
        // front); not found, what fell off the end is the last entry, which goes back at
        // the end (`p` inserted at the front) unless the list is full (it is evicted).
        let mut carry = p;
        for slot in lru.iter_mut() {
            let q = std::mem::replace(slot, carry);
            if q == p {
                return;
            }
            carry = q;
        }
        let evicted = if lru.len() < BH_LRU_SIZE {
            lru.push(carry);
            None
        } else {
            Some(carry)
        };
        self.get_page(p);
        if let Some(q) = evicted {
            self.put_page(q);
        }
    }

    /// invalidate_bh_lrus: every CPU's bh_lrus emptied, their references dropped (as
    /// invalidate_bdev does before it invalidates a block device's page cache).
    pub fn invalidate_bh_lrus(&mut self) {
        for cpu in 0..self.bh_lrus.len() {
            while let Some(p) = self.bh_lrus[cpu].pop() {
                self.put_page(p);
            }
        }
    }

    /// Does a buffer of file page `pfn` have a user besides the page cache and the
    /// caller's isolation (a block of a filesystem's metadata in some CPU's bh_lrus, or
    /// held by a reader waiting for it)? try_to_free_buffers then fails (buffer_busy).
    pub fn buffers_busy(&self, pfn: Pfn) -> bool {
        let p = &self.mem[pfn as usize];
        p.refcount > 2
            && p.mapping != crate::mm::page::NO_MAPPING
            && !self.page_anon(pfn)
            && self.is_inode_table(p.mapping)
    }

    /// Drop the page references task `tid` held across the sleeps of its call (brelse),
    /// when the call returns or the task exits.
    pub fn put_held_pages(&mut self, tid: crate::sched::TaskId) {
        while let Some(p) = self.tasks[tid].held_pages.pop() {
            self.put_page(p);
        }
    }

    /// A block of the filesystem's metadata (its hidden file `table`, the block device's
    /// buffer cache: __bread / sb_getblk + bh_read): when `block` is not cached, it and the
    /// blocks `(first, nr)` around it that are not are created and read (one request; from
    /// 6.7 the others only where no reclaim is needed, [`Sim::itable_readahead`]). Each
    /// is created as __getblk_slow creates a block, each looked up right after its page is
    /// added ([`Sim::getblk_created`]: from 3.16 active in the add batch). The caller then
    /// waits for its block's read holding the buffer (`Task::held_pages`): nothing looks
    /// the block up again and nothing copies it (the inode or the directory entries are
    /// read in place). A block the readahead could not create, or one cached but not
    /// uptodate and not being read (its read failed), is read through the page-cache read
    /// path (which allocates it as __getblk's __GFP_NOFAIL allocation must; one retry of a
    /// failed read, then the error). The pages the read brings in count in the task's
    /// statistic `stat` (not in its `cache_misses`).
    fn meta_bread(
        &mut self,
        table: u32,
        block: u64,
        (first, nr): (u64, u64),
        stat: fn(&mut crate::sched::TaskStats) -> &mut u64,
    ) -> Result<(), VfsAllocError> {
        let misses = self.cur.task.map(|t| self.tasks[t].stats.cache_misses);
        let cached = matches!(self.inode(table).mapping.tree.lookup(block), Entry::Page(_));
        if !cached {
            // The window's blocks already cached (bit i: block first + i; at most 33).
            let mut found = 0u64;
            for i in 0..nr.min(64) {
                if let Entry::Page(_) = self.inode(table).mapping.tree.lookup(first + i) {
                    found |= 1 << i;
                }
            }
            // Each block created is looked up at once (read_pages: `getblk_created`).
            if self.features.itable_readahead_nowait {
                self.itable_readahead(table, block, first, nr);
            } else {
                self.__do_page_cache_readahead(table, first, nr, 0);
            }
            self.readahead_window_getblk(table, first, nr, found);
        }
        let out = match self.inode(table).mapping.tree.lookup(block) {
            // Created and being read (or read already): wait for it holding the buffer.
            Entry::Page(p) if !cached && self.mem[p as usize].test(pg::LOCKED) => {
                self.hold_page_across_wait(p);
                Err(VfsAllocError::Wait(Wait::PageLocked(p)))
            }
            Entry::Page(p) if !cached && self.mem[p as usize].test(pg::UPTODATE) => Ok(()),
            // Not created (its allocation failed, or it was reclaimed at once), or cached
            // but not uptodate: the read path allocates and reads it (one retry of a
            // failed read, then the error).
            _ => {
                let pos = block * PAGE_SIZE;
                let mut ra = crate::mm::readahead::RaState::with_pages(0);
                let out = self.do_generic_file_read(table, &mut ra, pos, PAGE_SIZE, false);
                match (out.wait, out.err) {
                    (Some(w), _) => {
                        if let Wait::PageLocked(p) = w {
                            let pg = &self.mem[p as usize];
                            if pg.mapping == table && pg.index == block {
                                self.hold_page_across_wait(p);
                            }
                        }
                        Err(VfsAllocError::Wait(w))
                    }
                    (None, Some(_)) => Err(VfsAllocError::NoMem),
                    (None, None) => Ok(()),
                }
            }
        };
        if let (Some(t), Some(before)) = (self.cur.task, misses) {
            let s = &mut self.tasks[t].stats;
            let missed = s.cache_misses - before;
            s.cache_misses = before;
            *stat(s) += missed;
        }
        out
    }

    /// The readahead loop's lookups of a metadata window (__ext4_get_inode_loc's
    /// `ext4_sb_breadahead_unmovable(sb, b++)` for each block of `(first, nr)`, in order):
    /// bdev_getblk finds a block already cached (`found`, bit i for block first + i) as
    /// __find_get_block does — marked accessed (touch_buffer, or __find_get_block_slow's
    /// FGP_ACCESSED), so a referenced inactive one is activated — and every block of the
    /// window, found or just created, goes to the front of this CPU's bh_lrus in turn.
    /// A cached block is not read again (ext4_read_bh_nowait skips an uptodate buffer; a
    /// locked one is being read).
    fn readahead_window_getblk(&mut self, table: u32, first: u64, nr: u64, found: u64) {
        for i in 0..nr {
            let Entry::Page(p) = self.inode(table).mapping.tree.lookup(first + i) else {
                continue;
            };
            if i < 64 && found & (1 << i) != 0 {
                self.mark_page_accessed(p);
            }
            self.bh_lru_install(p);
        }
    }

    /// ext4_find_entry's reads for a lookup of `path` on filesystem `fs` (`fs::htree`): the
    /// root, the index block and the leaf of the name's hash in its parent directory, when
    /// that directory is indexed (one of more than one block), from the directory's region
    /// of the hidden metadata file (given at its first lookup; beyond the file's
    /// [`DIR_META_DIRS`] regions a directory's blocks are not read). Restartable: a wait
    /// returns with the blocks read so far cached.
    pub fn dx_read_blocks(&mut self, fs: usize, path: &str) -> Result<(), VfsAllocError> {
        let Some(table) = self.fss[fs].inode_table else {
            return Ok(());
        };
        let (parent, name) = crate::fs::namei::split_path(path);
        let f = &mut self.fss[fs];
        let Some(dir) = f.dirs.get_mut(parent) else {
            return Ok(());
        };
        let Some(p) = dir.htree.probe(name) else {
            return Ok(());
        };
        if !dir.htree.on_disk(0) {
            return Ok(()); // indexed during the run: its blocks were created in memory
        }
        let base = match dir.meta_base {
            Some(b) => b,
            None if f.dir_meta_regions < DIR_META_DIRS => {
                let b = INODE_TABLE_PAGES + f.dir_meta_regions * DIR_META_BLOCKS;
                f.dir_meta_regions += 1;
                dir.meta_base = Some(b);
                b
            }
            None => return Ok(()),
        };
        // The root, the index block, the leaf: those on disk (a block the directory gained
        // during the run was created in memory; one past the region's 2^20 is not read).
        let blocks = [Some(0), p.index, Some(p.leaf)]
            .map(|b| b.filter(|&b| dir.htree.on_disk(b) && u64::from(b) < DIR_META_BLOCKS));
        for block in blocks.into_iter().flatten() {
            let b = base + u64::from(block);
            self.meta_getblk(table, b, (b, 1), |s| &mut s.dir_block_misses)?;
        }
        Ok(())
    }

    /// dput of the last reference of `ino`'s dentry (close, munmap, a path lookup without
    /// open): onto the dentry list, or DCACHE_REFERENCED when it is already there
    /// (retain_dentry). tmpfs dentries are pinned (never on a list).
    #[inline]
    pub fn vfs_dput(&mut self, ino: u32) {
        let Some(inode) = self.inodes.get_mut(ino as usize).and_then(|i| i.as_mut()) else {
            return;
        };
        if inode.mapping.swapbacked || inode.vfs.state != VfsState::Cached || inode.open > 0 {
            return;
        }
        if inode.nlink == 0 {
            return;
        }
        if inode.vfs.d_lru != 0 {
            inode.vfs.d_referenced = true;
            return;
        }
        self.vfs_dput_lru_add(ino);
    }

    /// `vfs_dput` of a dentry not on its list: it goes to the list's tail (d_lru_add).
    #[inline(never)]
    fn vfs_dput_lru_add(&mut self, ino: u32) {
        let inode = self.inode(ino);
        let fs = inode.fs;
        let (m, n) = (inode.vfs.d_memcg, inode.vfs.d_node as usize);
        let seq = self.next_lru_seq();
        self.inode_mut(ino).vfs.d_lru = seq;
        let sb = self.lruvec_mut(m, n).vfs.sb_mut(fs);
        sb.dentries.push_back((ino, seq));
        sb.nr_dentries += 1;
        self.vfs_compact(m, n, fs);
    }

    fn next_lru_seq(&mut self) -> u32 {
        self.vfs_lru_seq = self.vfs_lru_seq.wrapping_add(1).max(1);
        self.vfs_lru_seq
    }

    /// __inode_add_lru: an unreferenced, clean inode with an empty page cache goes onto its
    /// inode list (`rotate`: already there, it is marked I_REFERENCED instead).
    pub fn inode_add_lru(&mut self, ino: u32, rotate: bool) {
        let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) else {
            return;
        };
        if inode.vfs.state != VfsState::InodeOnly || inode.open > 0 || inode.nlink == 0 {
            return;
        }
        if inode.dirtied_when().is_some() || !mapping_shrinkable(inode) {
            return; // I_DIRTY or !mapping_shrinkable
        }
        if inode.vfs.i_lru != 0 {
            if rotate {
                self.inode_mut(ino).vfs.i_referenced = true;
            }
            return;
        }
        let fs = inode.fs;
        let (m, n) = (inode.vfs.i_memcg, inode.vfs.i_node as usize);
        let seq = self.next_lru_seq();
        self.inode_mut(ino).vfs.i_lru = seq;
        let sb = self.lruvec_mut(m, n).vfs.sb_mut(fs);
        sb.inodes.push_back((ino, seq));
        sb.nr_inodes += 1;
        self.vfs_compact(m, n, fs);
    }

    /// Drop a list's removed entries once they outnumber its live ones (lists whose entries
    /// are mostly removed without a scan stay bounded).
    fn vfs_compact(&mut self, m: MemcgId, n: usize, fs: usize) {
        let sb = &self.lruvec(m, n).vfs.sb[fs];
        if sb.dentries.len() as u64 <= 2 * sb.nr_dentries + 64
            && sb.inodes.len() as u64 <= 2 * sb.nr_inodes + 64
        {
            return;
        }
        let mut lists = std::mem::take(&mut self.lruvec_mut(m, n).vfs.sb[fs]);
        let vfs = |ino: u32| {
            self.inodes
                .get(ino as usize)
                .and_then(|i| i.as_ref())
                .map(|i| i.vfs)
        };
        lists
            .dentries
            .retain(|&(ino, seq)| vfs(ino).is_some_and(|v| v.d_lru == seq));
        lists
            .inodes
            .retain(|&(ino, seq)| vfs(ino).is_some_and(|v| v.i_lru == seq));
        self.lruvec_mut(m, n).vfs.sb[fs] = lists;
    }

    /// After a page of `ino` left the page cache (filemap_remove_folio, __remove_mapping,
    /// the shadow shrinker): an unused inode whose cache is now empty joins its list.
    #[inline]
    pub fn inode_maybe_shrinkable(&mut self, ino: u32) {
        if let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) {
            if inode.vfs.state == VfsState::InodeOnly && inode.vfs.i_lru == 0 {
                self.inode_add_lru(ino, false);
            }
        }
    }

    fn dentry_lru_del(&mut self, ino: u32) {
        let v = self.inode(ino).vfs;
        if v.d_lru != 0 {
            let fs = self.inode(ino).fs;
            self.inode_mut(ino).vfs.d_lru = 0;
            let sb = self.lruvec_mut(v.d_memcg, v.d_node as usize).vfs.sb_mut(fs);
            sb.nr_dentries -= 1;
        }
    }

    fn inode_lru_del(&mut self, ino: u32) {
        let v = self.inode(ino).vfs;
        if v.i_lru != 0 {
            let fs = self.inode(ino).fs;
            self.inode_mut(ino).vfs.i_lru = 0;
            let sb = self.lruvec_mut(v.i_memcg, v.i_node as usize).vfs.sb_mut(fs);
            sb.nr_inodes -= 1;
        }
    }

    /// The objects of an inode being evicted for good (unlinked, last reference gone): off
    /// the lists, back to their slabs.
    pub fn vfs_free(&mut self, ino: u32) {
        let v = self.inode(ino).vfs;
        let tmpfs = self.inode(ino).mapping.swapbacked;
        self.dentry_lru_del(ino);
        self.inode_lru_del(ino);
        if v.state == VfsState::Cached {
            self.vfs_obj_free(KmemCache::Dentry, v.d_memcg, v.d_node);
        }
        if v.state != VfsState::Cold {
            self.vfs_obj_free(inode_cache(tmpfs), v.i_memcg, v.i_node);
        }
        self.inode_mut(ino).vfs.state = VfsState::Cold;
    }

    /// shrink_slab's superblock shrinkers for `memcg` on `node` at `priority`
    /// (do_shrink_slab over super_cache_count / super_cache_scan) for a reclaimer
    /// allocating with `gfp` (kswapd: `kswapd`). Returns what reclaim_state->reclaimed
    /// gains: the slab pages freed and the pages (shadow entries, here) the inode shrinker
    /// reaped from evicted inodes.
    ///
    /// super_cache_scan returns SHRINK_STOP to a reclaimer without __GFP_FS (it may hold
    /// filesystem locks): do_shrink_slab then scans nothing and defers the whole scan to a
    /// later call (nr_deferred, capped at twice the count). From 5.8 page-cache readahead
    /// allocates under memalloc_nofs_save (`readahead-nofs`), and ext4 allocates its
    /// inodes GFP_NOFS, so the charges of a read-miss workload reclaim with the
    /// superblock shrinker stopped and only its GFP_KERNEL allocations (dentries) shrink
    /// the dentry and inode caches, by the work deferred meanwhile.
    pub fn shrink_slab_vfs(
        &mut self,
        node: usize,
        memcg: MemcgId,
        priority: u32,
        gfp: Gfp,
        kswapd: bool,
    ) -> u64 {
        let nsb = self.lruvec(memcg, node).vfs.sb.len();
        let mut freed = 0;
        for fs in 0..nsb {
            let sb = &self.lruvec(memcg, node).vfs.sb[fs];
            // super_cache_count: the unused objects scaled by vm.vfs_cache_pressure
            // (vfs_pressure_ratio); nothing freeable, nothing scanned nor deferred.
            let count = (sb.nr_dentries + sb.nr_inodes) * self.vm.vfs_cache_pressure / 100;
            if count == 0 {
                continue;
            }
            let prev = self.enter(KFunc::ShrinkSlab);
            let nr = std::mem::take(&mut self.lruvec_mut(memcg, node).vfs.sb[fs].nr_deferred);
            let delta = (count >> priority) * 4 / DEFAULT_SEEKS;
            let mut total_scan = ((nr >> priority) + delta).min(2 * count);
            let mut scanned = 0u64;
            while gfp.fs && (total_scan >= SB_SHRINK_BATCH || total_scan >= count) {
                let nr_to_scan = SB_SHRINK_BATCH.min(total_scan);
                freed += self.super_cache_scan((node, memcg, fs, kswapd), nr_to_scan);
                self.vmstat.add(VmItem::SlabsScanned, nr_to_scan as i64);
                total_scan -= nr_to_scan;
                scanned += nr_to_scan;
                if nr_to_scan == 0 {
                    break;
                }
            }
            let next = (nr + delta).saturating_sub(scanned).min(2 * count);
            self.lruvec_mut(memcg, node).vfs.sb[fs].nr_deferred = next;
            self.leave(prev);
        }
        freed
    }

    /// super_cache_scan: `nr_to_scan` split between the dentry and inode lists by their
    /// counts; dentries first.
    fn super_cache_scan(&mut self, at: ShrinkAt, nr_to_scan: u64) -> u64 {
        let (node, memcg, fs, _) = at;
        let sb = &self.lruvec(memcg, node).vfs.sb[fs];
        let (d, i) = (sb.nr_dentries, sb.nr_inodes);
        let total = d + i + 1;
        let dentries = nr_to_scan * d / total;
        let inodes = nr_to_scan * i / total;
        let mut freed = self.list_lru_walk(at, VfsList::Dentries, dentries + 1); // prune_dcache_sb
        freed += self.list_lru_walk(at, VfsList::Inodes, inodes + 1); // prune_icache_sb
        freed
    }

    /// list_lru_walk_one of one superblock's `lru` of `memcg` on `node`: up to `nr` live
    /// entries from the head, each charged one list operation; `isolate` says what to do with
    /// it; a disposed entry is taken off the list, then `dispose` frees it. Returns the
    /// pages freed.
    fn list_lru_walk(&mut self, at: ShrinkAt, lru: VfsList, nr: u64) -> u64 {
        let (node, memcg, fs, kswapd) = at;
        let mut freed = 0;
        let mut walked = 0;
        while walked < nr {
            let sb = &mut self.lruvec_mut(memcg, node).vfs.sb[fs];
            let list = match lru {
                VfsList::Dentries => &mut sb.dentries,
                VfsList::Inodes => &mut sb.inodes,
            };
            let Some((ino, seq)) = list.pop_front() else {
                break;
            };
            let live = self
                .inodes
                .get(ino as usize)
                .and_then(|i| i.as_ref())
                .is_some_and(|i| lru.seq(&i.vfs) == seq);
            if !live {
                continue;
            }
            walked += 1;
            self.charge(self.costs.list_op_ps);
            let status = match lru {
                VfsList::Dentries => self.dentry_lru_isolate(ino),
                VfsList::Inodes => self.inode_lru_isolate(ino),
            };
            let sb = &mut self.lruvec_mut(memcg, node).vfs.sb[fs];
            match status {
                LruStatus::Rotate => match lru {
                    VfsList::Dentries => sb.dentries.push_back((ino, seq)),
                    VfsList::Inodes => sb.inodes.push_back((ino, seq)),
                },
                LruStatus::Removed | LruStatus::Dispose => {
                    match lru {
                        VfsList::Dentries => sb.nr_dentries -= 1,
                        VfsList::Inodes => sb.nr_inodes -= 1,
                    }
                    let v = &mut self.inode_mut(ino).vfs;
                    match lru {
                        VfsList::Dentries => v.d_lru = 0,
                        VfsList::Inodes => v.i_lru = 0,
                    }
                    if status == LruStatus::Dispose {
                        freed += match lru {
                            VfsList::Dentries => self.dentry_dispose(ino),
                            VfsList::Inodes => self.inode_dispose(ino, kswapd),
                        };
                    }
                }
            }
        }
        freed
    }

    /// dentry_lru_isolate: in use → off the list; DCACHE_REFERENCED → cleared, rotated;
    /// else freed.
    fn dentry_lru_isolate(&mut self, ino: u32) -> LruStatus {
        let inode = self.inode(ino);
        if inode.open > 0 {
            return LruStatus::Removed;
        }
        if inode.vfs.d_referenced {
            self.inode_mut(ino).vfs.d_referenced = false;
            return LruStatus::Rotate;
        }
        LruStatus::Dispose
    }

    /// __dentry_kill: off the hash and the parent, freed; its inode's last reference
    /// dropped (iput_final → the inode list).
    fn dentry_dispose(&mut self, ino: u32) -> u64 {
        self.charge(self.costs.dir_op_ps);
        let v = self.inode(ino).vfs;
        let freed = self.vfs_obj_free(KmemCache::Dentry, v.d_memcg, v.d_node);
        self.inode_mut(ino).vfs.state = VfsState::InodeOnly;
        self.inode_add_lru(ino, true);
        freed
    }

    /// inode_lru_isolate: referenced by a dentry or an opener, dirty or with page cache →
    /// off the list; I_REFERENCED → cleared, rotated; else evicted.
    fn inode_lru_isolate(&mut self, ino: u32) -> LruStatus {
        let inode = self.inode(ino);
        let busy = inode.open > 0
            || inode.vfs.state != VfsState::InodeOnly
            || inode.dirtied_when().is_some()
            || !mapping_shrinkable(inode);
        if busy {
            return LruStatus::Removed;
        }
        if inode.vfs.i_referenced {
            self.inode_mut(ino).vfs.i_referenced = false;
            return LruStatus::Rotate;
        }
        LruStatus::Dispose
    }

    /// inode_lru_isolate's invalidation of a lone shadow entry, then evict: destroy_inode
    /// frees the object (the inode is read from disk at its next lookup). The shadow entry
    /// counts as a page reaped (mapping_try_invalidate counts value entries): pginodesteal
    /// (kswapd_inodesteal in kswapd) and reclaim_state->reclaimed (mm_account_reclaimed_pages).
    /// Returns the pages freed and reaped.
    fn inode_dispose(&mut self, ino: u32, kswapd: bool) -> u64 {
        let mut reaped = 0;
        if self.inode(ino).mapping.tree.nr_shadows() > 0 {
            self.tree_lock(ino);
            self.inode_mut(ino).mapping.tree.store(0, Entry::Empty);
            self.tree_events(ino);
            self.tree_unlock(ino);
            reaped = 1;
            let item = if kswapd {
                VmItem::KswapdInodesteal
            } else {
                VmItem::Pginodesteal
            };
            self.vmstat.inc(item);
        }
        self.charge(self.costs.inode_op_ps);
        let v = self.inode(ino).vfs;
        let freed = self.vfs_obj_free(KmemCache::BlockfsInode, v.i_memcg, v.i_node);
        self.inode_mut(ino).vfs.state = VfsState::Cold;
        freed + reaped
    }
}

/// Where a shrinker runs: node, memcg, superblock, and whether the reclaimer is kswapd.
type ShrinkAt = (usize, MemcgId, usize, bool);

/// A superblock's two list_lrus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum VfsList {
    Dentries,
    Inodes,
}

impl VfsList {
    /// The inode's sequence number on this list (0: not on it).
    fn seq(self, v: &VfsInode) -> u32 {
        match self {
            VfsList::Dentries => v.d_lru,
            VfsList::Inodes => v.i_lru,
        }
    }
}

/// What an isolate callback decided (enum lru_status).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LruStatus {
    /// LRU_REMOVED: off the list, kept.
    Removed,
    /// LRU_ROTATE: to the list's tail.
    Rotate,
    /// Off the list and freed (onto the dispose list).
    Dispose,
}

/// Why a VFS allocation did not complete.
#[derive(Clone, Copy, Debug)]
pub enum VfsAllocError {
    /// Sleep, then restart the op.
    Wait(Wait),
    /// No memory (ENOMEM).
    NoMem,
}

/// Inode-table blocks a filesystem's hidden table file spans (every u32 inode number).
pub const INODE_TABLE_PAGES: u64 = (u32::MAX as u64 + 1) / INODES_PER_BLOCK;

/// Indexed directories whose blocks a filesystem's hidden metadata file holds, after its
/// inode table ([`Sim::dx_read_blocks`]).
pub const DIR_META_DIRS: u64 = 4096;
/// Blocks of each directory's region (4 GiB: 256 M entries of 16 bytes).
const DIR_META_BLOCKS: u64 = 1 << 20;
/// Pages of the hidden metadata file: the inode table, then the directories' regions.
const META_FILE_PAGES: u64 = INODE_TABLE_PAGES + DIR_META_DIRS * DIR_META_BLOCKS;

impl Sim {
    /// The VFS caches when the run starts: each block filesystem gets its inode table (a
    /// hidden file, on the device, read through the page cache); the scenario's files on a
    /// block filesystem are on disk only (cold caches), those on tmpfs are in core (a tmpfs
    /// file is its dentry and inode), their objects charged to the root.
    pub fn vfs_setup(&mut self) -> Result<(), String> {
        // The directories the scenario's files filled are on disk (`fs::htree`).
        for f in &mut self.fss {
            for d in f.dirs.values_mut() {
                d.htree.mark_on_disk();
            }
        }
        for fs in 0..self.fss.len() {
            if self.fss[fs].kind != crate::scenario::FsKind::Blockfs {
                continue;
            }
            let ino = self.inodes.len() as u32;
            let v = self.new_version();
            let mapping = crate::fs::AddressSpace {
                account_dirty: true,
                ..Default::default()
            };
            self.inodes.push(Some(crate::fs::Inode {
                size: META_FILE_PAGES * PAGE_SIZE,
                // Pinned: the superblock holds it for the life of the mount.
                open: 1,
                expected: crate::fs::PageVersions::uniform(v, META_FILE_PAGES),
                disk: crate::fs::PageVersions::uniform(v, META_FILE_PAGES),
                vfs: VfsInode {
                    state: VfsState::Cached,
                    ..Default::default()
                },
                ..crate::fs::Inode::new(ino, fs, mapping)
            }));
            self.fss[fs].inode_table = Some(ino);
        }
        for ino in 1..self.inodes.len() as u32 {
            let Some(inode) = self.inodes[ino as usize].as_ref() else {
                continue;
            };
            if !inode.mapping.swapbacked || inode.vfs.state != VfsState::Cold {
                continue;
            }
            if self
                .vfs_prealloc(&[KmemCache::Dentry, KmemCache::ShmemInode])
                .is_err()
            {
                return Err(format!(
                    "the dentries and inodes of the scenario's tmpfs files do not fit in memory \
                     (at inode {ino})"
                ));
            }
            self.vfs_create(ino);
        }
        Ok(())
    }

    /// A file not in core gets its objects without the inode read (direct calls of the
    /// syscalls outside the engine, whose exec_op does the restartable lookup first); if
    /// memory cannot be had at once it stays as it is.
    pub fn vfs_ensure_nowait(&mut self, ino: u32) {
        let v = self.inode(ino).vfs;
        if v.state == VfsState::Cached {
            return;
        }
        if self.vfs_prealloc(self.vfs_lookup_needs(ino)).is_ok() {
            self.vfs_instantiate(ino);
        }
    }

    /// The path walk of a syscall that names a file (open, mmap, stat, truncate, unlink),
    /// before the syscall proper: a file not in the dentry cache is looked up
    /// ([`Sim::vfs_lookup`]); a creating open of a missing name preallocates its dentry and
    /// inode. Restartable; `Ok(Some(ENOMEM))` when memory cannot be had.
    pub fn vfs_path_walk(
        &mut self,
        path: &str,
        create: bool,
    ) -> Result<Option<crate::workload::Errno>, Wait> {
        let Some(fs) = self.resolve_fs(path) else {
            return Ok(None);
        };
        let r = match self.fss[fs].names.get(path).copied() {
            Some(ino) => {
                if self.inode(ino).vfs.state == VfsState::Cached {
                    return Ok(None);
                }
                self.vfs_lookup(ino, path)
            }
            None if create && !self.fss[fs].dirs.contains_key(path) => {
                let tmpfs = self.fss[fs].kind == crate::scenario::FsKind::Tmpfs;
                self.vfs_prealloc(&[KmemCache::Dentry, inode_cache(tmpfs)])
                    .and_then(|()| self.dx_read_blocks(fs, path))
            }
            None => return Ok(None),
        };
        match r {
            Ok(()) => Ok(None),
            Err(VfsAllocError::Wait(w)) => Err(w),
            Err(VfsAllocError::NoMem) => Ok(Some(crate::workload::Errno::ENOMEM)),
        }
    }
}

/// The VFS caches' invariants: every slab frame is PG_slab, referenced once, on no LRU and
/// of no mapping, charged to its lruvec's memcg (with SLAB_ACCOUNT); the slabs are packed
/// (fewer than a slab's worth of free objects per cache, memcg and node); the objects are
/// those of the files in core; the lists hold exactly the entries their counts say; vmstat
/// and memory.stat count the frames.
pub fn check_vfs(sim: &Sim) -> Result<(), String> {
    use std::collections::HashSet;
    let nodes = sim.nodes.len();
    let tables: HashSet<u32> = sim.fss.iter().filter_map(|f| f.inode_table).collect();
    // Objects the files in core hold, per lruvec index and cache.
    let mut objs = vec![[0u64; NR_CACHES]; sim.lruvecs.len()];
    let mut on_d: Vec<Vec<u64>> = vec![vec![0; sim.fss.len()]; sim.lruvecs.len()];
    let mut on_i: Vec<Vec<u64>> = vec![vec![0; sim.fss.len()]; sim.lruvecs.len()];
    for inode in sim.inodes.iter().flatten() {
        if tables.contains(&inode.ino) {
            continue;
        }
        let v = inode.vfs;
        let d = v.d_memcg as usize * nodes + v.d_node as usize;
        let i = v.i_memcg as usize * nodes + v.i_node as usize;
        let ic = inode_cache(inode.mapping.swapbacked) as usize;
        match v.state {
            VfsState::Cold => {
                if v.d_lru != 0 || v.i_lru != 0 {
                    return Err(format!("inode {} is not in core but on a list", inode.ino));
                }
            }
            VfsState::InodeOnly => {
                if v.d_lru != 0 {
                    return Err(format!(
                        "inode {} has no dentry but is on the dentry list",
                        inode.ino
                    ));
                }
                objs[i][ic] += 1;
            }
            VfsState::Cached => {
                objs[d][KmemCache::Dentry as usize] += 1;
                objs[i][ic] += 1;
            }
        }
        if v.d_lru != 0 {
            on_d[d][inode.fs] += 1;
        }
        if v.i_lru != 0 {
            on_i[i][inode.fs] += 1;
        }
    }
    // The buffer heads of written data pages (`fs/buffer.rs`), charged to the page's memcg
    // on its node; only a page in a block filesystem's page cache has them. A large
    // folio's are counted by its block state, which only a cached folio head has.
    let mut heads: Vec<_> = sim.folio_blocks.iter().collect();
    heads.sort_by_key(|(h, _)| **h);
    for (&head, fb) in heads {
        let h = &sim.mem[head as usize];
        if !h.test(pg::HEAD) || h.mapping == crate::mm::page::NO_MAPPING {
            return Err(format!(
                "pfn {head} has a folio's block state but is not a cached folio head ({})",
                h.flag_names()
            ));
        }
        let m = sim.buffers_memcg(head) as usize;
        objs[m * nodes + h.node as usize][KmemCache::BufferHead as usize] += fb.charged() as u64;
    }
    for (pfn, p) in sim.mem.iter().enumerate() {
        if crate::fs::buffer::has_buffers(p) {
            let cached = p.mapping != crate::mm::page::NO_MAPPING
                && !p.test(pg::BUDDY)
                && !tables.contains(&p.mapping)
                && sim
                    .inodes
                    .get(p.mapping as usize)
                    .and_then(|i| i.as_ref())
                    .is_some_and(|i| sim.fss[i.fs].device.is_some());
            if !cached || !sim.features.buffer_head_kmem {
                return Err(format!(
                    "pfn {pfn} has buffers but is not a block filesystem's data page in the \
                     page cache (flags {}, mapping {})",
                    p.flag_names(),
                    p.mapping
                ));
            }
            let m = sim.buffers_memcg(pfn as Pfn) as usize;
            objs[m * nodes + p.node as usize][KmemCache::BufferHead as usize] += 1;
        }
    }
    // The `struct file`s of the open descriptors (`filp-kmem`), charged to the opener's
    // memcg on its node.
    for t in &sim.tasks {
        for f in t.fds.iter().flatten() {
            if let Some((m, n)) = f.filp {
                if !sim.features.filp_kmem {
                    return Err(format!(
                        "task {} holds a filp object without filp-kmem",
                        t.name
                    ));
                }
                objs[m as usize * nodes + n as usize][KmemCache::Filp as usize] += 1;
            }
        }
    }
    // The objects each lruvec's slabs hold: its own, or with one set of caches for every
    // memcg (`memcg-kmem-objcg`) the node's in the root's lruvec.
    let shared = sim.features.memcg_kmem_objcg;
    let mut in_slabs = if shared {
        vec![[0u64; NR_CACHES]; sim.lruvecs.len()]
    } else {
        objs.clone()
    };
    if shared {
        for (lv, o) in objs.iter().enumerate() {
            for c in 0..NR_CACHES {
                in_slabs[lv % nodes][c] += o[c];
            }
        }
    }
    // Slab pages are charged to their memcg with SLAB_ACCOUNT, before objects were
    // charged by bytes.
    let charged_frames = sim.features.memcg_kmem_vfs && !shared;
    let mut frames_by_memcg = vec![[0i64; 2]; sim.memcgs.len()];
    let mut bytes_by_memcg = vec![[0u64; 2]; sim.memcgs.len()];
    let mut total = 0i64;
    for (lv, l) in sim.lruvecs.iter().enumerate() {
        let memcg = (lv / nodes) as MemcgId;
        let vfs = &l.vfs;
        for c in 0..NR_CACHES {
            let g = CACHES[c];
            if vfs.objs[c] != objs[lv][c] {
                return Err(format!(
                    "lruvec {lv} counts {} {} objects but the files in core hold {}",
                    vfs.objs[c], g.name, objs[lv][c]
                ));
            }
            bytes_by_memcg[memcg as usize][usize::from(!g.reclaimable)] +=
                vfs.objs[c] * obj_full_size(c);
            if vfs.slab_objs[c] != in_slabs[lv][c] {
                return Err(format!(
                    "lruvec {lv}'s slabs count {} {} objects but hold {}",
                    vfs.slab_objs[c], g.name, in_slabs[lv][c]
                ));
            }
            if vfs.slab_objs[c] > vfs.capacity(c) {
                return Err(format!("lruvec {lv}: {} objects beyond its slabs", g.name));
            }
            if vfs.capacity(c) >= vfs.slab_objs[c] + 2 * g.objs_per_slab && !vfs.extra_empty_slab[c]
            {
                return Err(format!(
                    "lruvec {lv}: {} slabs hold {} objects in {} frames (an empty slab kept)",
                    g.name,
                    vfs.slab_objs[c],
                    vfs.frames[c].len()
                ));
            }
            for &pfn in &vfs.frames[c] {
                let p = &sim.mem[pfn as usize];
                let memcg_ok = if charged_frames {
                    p.memcg == memcg
                } else {
                    p.memcg == crate::mm::memcontrol::NO_MEMCG
                };
                if !p.test(pg::SLAB)
                    || p.refcount != 1
                    || p.mapping != crate::mm::page::NO_MAPPING
                    || p.test(pg::LRU)
                    || !memcg_ok
                {
                    return Err(format!(
                        "slab pfn {pfn} of {} is not a slab page of memcg {memcg}: flags {} \
                         count {} memcg {}",
                        g.name,
                        p.flag_names(),
                        p.refcount,
                        p.memcg
                    ));
                }
                total += 1;
                if p.memcg != crate::mm::memcontrol::NO_MEMCG {
                    frames_by_memcg[p.memcg as usize][usize::from(!g.reclaimable)] += 1;
                }
            }
        }
        for fs in 0..sim.fss.len() {
            let (nd, ni, dl, il) = match vfs.sb(fs) {
                Some(sb) => (sb.nr_dentries, sb.nr_inodes, &sb.dentries, &sb.inodes),
                None => (0, 0, &VecDeque::new(), &VecDeque::new()),
            };
            if nd != on_d[lv][fs] || ni != on_i[lv][fs] {
                return Err(format!(
                    "lruvec {lv} fs {fs}: the lists count {nd} dentries and {ni} inodes but \
                     {} and {} are on them",
                    on_d[lv][fs], on_i[lv][fs]
                ));
            }
            let live = |list: &VecDeque<(u32, u32)>, dentry: bool| {
                list.iter()
                    .filter(|&&(ino, seq)| {
                        sim.inodes
                            .get(ino as usize)
                            .and_then(|i| i.as_ref())
                            .is_some_and(|i| {
                                (if dentry { i.vfs.d_lru } else { i.vfs.i_lru }) == seq
                            })
                    })
                    .count() as u64
            };
            if live(dl, true) != nd || live(il, false) != ni {
                return Err(format!(
                    "lruvec {lv} fs {fs}: a list entry is missing or doubled"
                ));
            }
        }
    }
    let slab =
        sim.vmstat.get(VmItem::NrSlabReclaimable) + sim.vmstat.get(VmItem::NrSlabUnreclaimable);
    let pg_slab = sim.mem.iter().filter(|p| p.test(pg::SLAB)).count() as i64;
    if slab != total || pg_slab != total {
        return Err(format!(
            "nr_slab_* = {slab} but the caches hold {total} frames and {pg_slab} are PG_slab"
        ));
    }
    if sim.nr_memcgs() > 1 {
        for (m, f) in frames_by_memcg.iter().enumerate() {
            let st = &sim.memcgs[m].stat;
            let have = [
                st.get(VmItem::NrSlabReclaimable),
                st.get(VmItem::NrSlabUnreclaimable),
            ];
            if have != *f {
                return Err(format!(
                    "memcg \"{}\" memory.stat slab_reclaimable/unreclaimable are {:?} pages but \
                     its slab frames are {:?}",
                    sim.memcgs[m].name, have, f
                ));
            }
        }
    }
    // Each directory's hashed index holds its entries (`fs::htree`).
    for f in &sim.fss {
        for (path, d) in &f.dirs {
            if d.htree.nr_entries() != d.len() {
                return Err(format!(
                    "directory {path}: {} entries but its index holds {}",
                    d.len(),
                    d.htree.nr_entries()
                ));
            }
            d.htree
                .check()
                .map_err(|e| format!("directory {path}'s index: {e}"))?;
        }
    }
    // Each lruvec's count of page-cache tree nodes is the live nodes that carry its charge
    // tag (`Sim::xa_charge_tag`); with `xarray-node-kmem` a memcg's are charged by bytes.
    let mut xa_nodes = vec![0u64; sim.lruvecs.len()];
    for inode in sim.inodes.iter().flatten() {
        for tag in inode.mapping.tree.node_charges() {
            let (m, n) = ((tag & 0xffff) as usize, (tag >> 16) as usize);
            xa_nodes[m * nodes + n] += 1;
        }
    }
    for (lv, l) in sim.lruvecs.iter().enumerate() {
        if l.xa_nodes != xa_nodes[lv] {
            return Err(format!(
                "lruvec {lv} counts {} page-cache tree nodes but {} are charged to it",
                l.xa_nodes, xa_nodes[lv]
            ));
        }
    }
    if !sim.objcg_charging() {
        // Only the tree nodes are charged by bytes.
        bytes_by_memcg.iter_mut().for_each(|b| *b = [0, 0]);
    }
    if sim.features.xarray_node_kmem {
        for (lv, &n) in xa_nodes.iter().enumerate() {
            bytes_by_memcg[lv / nodes][0] += n * crate::mm::workingset::XA_NODE_FULL_SIZE;
        }
    }
    // Charged by bytes: a memcg's slab bytes are its objects', and with its stock they make
    // the pages it was charged; the stock holds less than two pages (refill_obj_stock gives
    // back whole pages beyond one; a charge ahead adds at most one) unless a charge nested
    // in another's reclaim refilled it (`MemCgroup::obj_stock_nested`).
    if sim.objcg_charging() || sim.features.xarray_node_kmem {
        for (m, mc) in sim.memcgs.iter().enumerate().skip(1) {
            if mc.slab_bytes != bytes_by_memcg[m] {
                return Err(format!(
                    "memcg \"{}\" slab bytes {:?} but its objects take {:?}",
                    mc.name, mc.slab_bytes, bytes_by_memcg[m]
                ));
            }
            let charged = mc.slab_bytes[0] + mc.slab_bytes[1] + mc.obj_stock_bytes;
            if charged != mc.obj_pages * PAGE_SIZE + mc.obj_debt_bytes
                || (mc.obj_stock_bytes >= 2 * PAGE_SIZE && !mc.obj_stock_nested)
            {
                return Err(format!(
                    "memcg \"{}\": objects of {:?} bytes and a stock of {} bytes but {} pages \
                     charged for them",
                    mc.name, mc.slab_bytes, mc.obj_stock_bytes, mc.obj_pages
                ));
            }
        }
    }
    Ok(())
}
