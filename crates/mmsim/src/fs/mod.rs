//! Filesystems, inodes and address_spaces, block devices.
//!
//! Two filesystem types: `tmpfs` (shmem: pages are swap-backed, never written to a device,
//! dirty pages are not accounted for writeback) and `blockfs`, a generic block-backed
//! filesystem on a block-device model, with writeback through a flusher thread. Each
//! filesystem maps full paths of regular files to inodes (`names`) and keeps a tree of
//! directories in creation order (`dirs`, see `namei.rs`).

pub mod blockdev;
pub mod buffer;
pub mod dirty_throttle;
pub mod htree;
pub mod jbd2;
pub mod namei;
pub mod syscalls;
pub mod writeback;

pub use blockdev::{BlockDevice, IoKind, IoRequest};

use std::collections::BTreeMap;

use crate::machine::{Ps, SpinLock};
use crate::mm::radix_tree::RadixTree;
pub use crate::scenario::Atime;
use crate::scenario::{FsKind, FsSpec};

/// struct address_space: the page cache of one inode.
#[derive(Default)]
pub struct AddressSpace {
    /// page_tree: pages and shadow entries by index.
    pub tree: RadixTree,
    /// tree_lock.
    pub tree_lock: SpinLock,
    /// mapping_cap_account_dirty: dirty pages are accounted and written back (blockfs).
    pub account_dirty: bool,
    /// shmem mapping: pages are swap-backed.
    pub swapbacked: bool,
    /// AS_EIO: a writeback error not yet returned to user space (mapping_set_error); the
    /// next fsync / fdatasync or close returns EIO and clears it (filemap_check_errors).
    pub wb_err: bool,
}

/// struct inode (the parts the memory manager needs).
pub struct Inode {
    /// Inode number; also the page `mapping` id.
    pub ino: u32,
    /// Filesystem index.
    pub fs: usize,
    /// i_size, bytes.
    pub size: u64,
    /// Links from the namespace.
    pub nlink: u32,
    /// Open file descriptions.
    pub open: u32,
    /// The page cache.
    pub mapping: AddressSpace,
    /// Dirty pages of this inode.
    pub nr_dirty: u64,
    /// When the inode was first dirtied (dirtied_when), if dirty: [`Inode::dirtied_when`]
    /// (`NOT_DIRTIED` when clean; a u64, not an Option, to keep the inode small).
    pub dirtied_when_ps: Ps,
    /// mapping->writeback_index: where background writeback resumes.
    pub writeback_index: u64,
    /// Content oracle: the newest version written at each index (0 = never written).
    pub expected: PageVersions,
    /// Content oracle: the version the device holds at each index (0 = hole).
    pub disk: PageVersions,
    /// Pages with data on the device (for ENOSPC).
    pub nr_blocks: u64,
    /// i_mmap: the VMAs that map this file.
    pub i_mmap: Vec<MappedVma>,
    /// Its dentry and inode objects (the VFS caches).
    pub vfs: crate::mm::slab::VfsInode,
    /// i_atime on the coarse clock, one tick on (`fs/jbd2.rs`: touch_atime). 0 (before
    /// the run) for a file that exists when the run begins, as its modification time: it
    /// was just written.
    pub atime_ps: Ps,
    /// i_mtime / i_ctime likewise (file_update_time).
    pub mtime_ps: Ps,
}

impl Inode {
    /// A new empty inode `ino` of filesystem `fs` with page cache `mapping`: size 0, one
    /// link, not open, clean, no blocks, not mapped, its VFS objects not allocated.
    pub fn new(ino: u32, fs: usize, mapping: AddressSpace) -> Inode {
        Inode {
            ino,
            fs,
            size: 0,
            nlink: 1,
            open: 0,
            mapping,
            nr_dirty: 0,
            dirtied_when_ps: NOT_DIRTIED,
            writeback_index: 0,
            expected: Default::default(),
            disk: Default::default(),
            nr_blocks: 0,
            i_mmap: Vec::new(),
            vfs: Default::default(),
            atime_ps: 0,
            mtime_ps: 0,
        }
    }
}

/// A VMA on its file's i_mmap: which one (mm, start) and what an rmap walk needs of it, so
/// the walk does not look the VMA up in its mm (`sys_mmap` and `sys_mprotect` keep the
/// copy equal to the VMA; the invariant checker compares them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedVma {
    /// The mm.
    pub mm: u32,
    /// vm_start.
    pub start: u64,
    /// vm_end.
    pub end: u64,
    /// vm_pgoff, in pages.
    pub pgoff: u64,
    /// vm_flags.
    pub flags: u64,
}

impl MappedVma {
    /// Virtual address of file page `index`, if this VMA maps it (vma_address).
    #[inline]
    pub fn addr_of(&self, index: u64) -> Option<u64> {
        crate::mm::mmap::vma_address(self.start, self.end, self.pgoff, index)
    }
}

/// `Inode::dirtied_when_ps` of a clean inode.
pub const NOT_DIRTIED: Ps = Ps::MAX;

impl Inode {
    /// When the inode was first dirtied, if it is dirty.
    #[inline]
    pub fn dirtied_when(&self) -> Option<Ps> {
        (self.dirtied_when_ps != NOT_DIRTIED).then_some(self.dirtied_when_ps)
    }
    /// Newest written version at `index` (0 = never written: reads as zeros).
    pub fn expected_at(&self, index: u64) -> u32 {
        self.expected.get(index)
    }
    /// Version on the device at `index`.
    pub fn disk_at(&self, index: u64) -> u32 {
        self.disk.get(index)
    }
}

/// Content-oracle versions by page index (0 = none), as a vector would hold them. A file
/// that exists before the run holds one version over all its pages: that is kept as the
/// version and the page count (no per-page storage, so millions of replayed object files
/// cost no allocation each); the first write of another version, or a truncate inside
/// it, spells the pages out — as one vector for a file of up to `SPARSE_PAGES` pages, in
/// chunks of `CHUNK_PAGES` allocated where pages are written for a larger one (a block
/// trace's device file of terabytes, written here and there, costs its written chunks:
/// 256 bytes and a hash entry each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageVersions(Versions);

/// Pages of a chunk of the sparse form.
const CHUNK_PAGES: u64 = 64;

/// The largest length spelled out as one vector (64 MiB of versions, a 64 GiB file); a
/// larger uniform file, or a vector that a write far past its end would grow beyond it,
/// takes the sparse form.
const SPARSE_PAGES: u64 = 1 << 24;

/// [`PageVersions`]' three forms (24 bytes: the uniform form fits beside the vector's niche).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Versions {
    /// Every page below `len` holds `version`, none above.
    Uniform { version: u32, len: u64 },
    /// Per-page versions.
    Pages(Vec<u32>),
    /// A large file: `base` below `base_len` and 0 above, but in the chunks written.
    Sparse(Box<Sparse>),
}

/// The sparse form: a uniform base with per-page chunks where pages were written.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Sparse {
    /// The version of the pages below `base_len` outside every chunk.
    base: u32,
    base_len: u64,
    /// The length the vector would have.
    len: u64,
    /// Chunk number (index / CHUNK_PAGES) to its pages' versions.
    chunks: rustc_hash::FxHashMap<u64, Box<[u32]>>,
}

impl Sparse {
    #[inline(never)]
    fn get(&self, index: u64) -> u32 {
        if index >= self.len {
            return 0;
        }
        match self.chunks.get(&(index / CHUNK_PAGES)) {
            Some(c) => c[(index % CHUNK_PAGES) as usize],
            None if index < self.base_len => self.base,
            None => 0,
        }
    }

    fn set(&mut self, index: u64, version: u32) {
        let n = index / CHUNK_PAGES;
        let (base, base_len, len) = (self.base, self.base_len, self.len);
        let chunk = self.chunks.entry(n).or_insert_with(|| {
            // The chunk's pages as they read before it is spelled out.
            (n * CHUNK_PAGES..(n + 1) * CHUNK_PAGES)
                .map(|i| if i < base_len.min(len) { base } else { 0 })
                .collect()
        });
        chunk[(index % CHUNK_PAGES) as usize] = version;
        self.len = self.len.max(index + 1);
    }

    fn truncate(&mut self, new_len: u64) {
        if new_len >= self.len {
            return;
        }
        self.len = new_len;
        self.base_len = self.base_len.min(new_len);
        self.chunks.retain(|n, c| {
            let start = n * CHUNK_PAGES;
            if start >= new_len {
                return false;
            }
            for i in new_len.saturating_sub(start).min(CHUNK_PAGES)..CHUNK_PAGES {
                c[i as usize] = 0;
            }
            true
        });
    }

    fn count_nonzero_from(&self, from: u64) -> u64 {
        let mut n = 0;
        // Pages of the base outside the chunks.
        let base_end = self.base_len.min(self.len);
        if self.base != 0 && from < base_end {
            n += base_end - from;
        }
        for (k, c) in &self.chunks {
            let start = k * CHUNK_PAGES;
            let lo = from.max(start);
            let hi = (start + CHUNK_PAGES).min(self.len);
            // The chunk replaces the base's pages in its range.
            if self.base != 0 {
                let (blo, bhi) = (lo, hi.min(base_end));
                n -= bhi.saturating_sub(blo);
            }
            if lo < hi {
                n += c[(lo - start) as usize..(hi - start) as usize]
                    .iter()
                    .filter(|v| **v != 0)
                    .count() as u64;
            }
        }
        n
    }
}

impl Default for PageVersions {
    fn default() -> Self {
        PageVersions(Versions::Pages(Vec::new()))
    }
}

impl PageVersions {
    /// `pages` pages all at `version` (a file's content when the run starts).
    pub fn uniform(version: u32, pages: u64) -> PageVersions {
        PageVersions(Versions::Uniform {
            version,
            len: pages,
        })
    }

    /// The version at `index`.
    #[inline]
    pub fn get(&self, index: u64) -> u32 {
        match &self.0 {
            Versions::Uniform { version, len } => {
                if index < *len {
                    *version
                } else {
                    0
                }
            }
            Versions::Pages(p) => p.get(index as usize).copied().unwrap_or(0),
            Versions::Sparse(s) => s.get(index),
        }
    }

    /// Store `version` at `index` (growing with zeros).
    #[inline]
    pub fn set(&mut self, index: u64, version: u32) {
        // A page inside the vector or just past its end (the common cases: a file written
        // from its start; an append never takes the sparse form).
        if let Versions::Pages(p) = &mut self.0 {
            let i = index as usize;
            if let Some(v) = p.get_mut(i) {
                *v = version;
                return;
            }
            if i == p.len() {
                p.push(version);
                return;
            }
        }
        self.set_with_limit(index, version, SPARSE_PAGES)
    }

    /// `set`, with the vector form's largest length `limit` (tests use small ones).
    #[inline(never)]
    fn set_with_limit(&mut self, index: u64, version: u32, limit: u64) {
        match &mut self.0 {
            Versions::Uniform { version: u, len } => {
                let (u, len) = (*u, *len);
                if index < len && version == u {
                    return;
                }
                self.0 = if len.max(index + 1) > limit {
                    Versions::Sparse(Box::new(Sparse {
                        base: u,
                        base_len: len,
                        len,
                        chunks: Default::default(),
                    }))
                } else {
                    Versions::Pages(vec![u; len as usize])
                };
            }
            Versions::Pages(p) if index + 1 > limit && index + 1 > 2 * p.len() as u64 => {
                // A write far past a large end: the vector's pages become chunks.
                let mut s = Sparse {
                    base: 0,
                    base_len: 0,
                    len: p.len() as u64,
                    chunks: Default::default(),
                };
                for (i, v) in p.iter().enumerate() {
                    if *v != 0 {
                        s.set(i as u64, *v);
                    }
                }
                self.0 = Versions::Sparse(Box::new(s));
            }
            _ => {}
        }
        match &mut self.0 {
            Versions::Pages(p) => {
                let i = index as usize;
                if p.len() <= i {
                    p.resize(i + 1, 0);
                }
                p[i] = version;
            }
            Versions::Sparse(s) => s.set(index, version),
            Versions::Uniform { .. } => unreachable!("spelled out above"),
        }
    }

    /// Forget the versions at `len` and above (Vec::truncate).
    pub fn truncate(&mut self, new_len: u64) {
        match &mut self.0 {
            Versions::Uniform { len, .. } => *len = (*len).min(new_len),
            Versions::Pages(p) => p.truncate(new_len as usize),
            Versions::Sparse(s) => s.truncate(new_len),
        }
    }

    /// Pages held (the length the vector would have).
    pub fn len(&self) -> u64 {
        match &self.0 {
            Versions::Uniform { len, .. } => *len,
            Versions::Pages(p) => p.len() as u64,
            Versions::Sparse(s) => s.len,
        }
    }

    /// No page held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Non-zero versions at `from` and above.
    pub fn count_nonzero_from(&self, from: u64) -> u64 {
        match &self.0 {
            Versions::Uniform { version: 0, .. } => 0,
            Versions::Uniform { len, .. } => len.saturating_sub(from),
            Versions::Pages(p) => p.iter().skip(from as usize).filter(|v| **v != 0).count() as u64,
            Versions::Sparse(s) => s.count_nonzero_from(from),
        }
    }
}

/// A mounted filesystem.
#[derive(Debug)]
pub struct FileSystem {
    /// Mount point.
    pub mount: String,
    /// Type.
    pub kind: FsKind,
    /// Backing device (blockfs).
    pub device: Option<usize>,
    /// Namespace: path → inode.
    pub names: rustc_hash::FxHashMap<std::sync::Arc<str>, u32>,
    /// Directories by full path (the mount point is the root), entries in creation order.
    pub dirs: BTreeMap<String, namei::Directory>,
    /// Pages allocated on the device.
    pub used_blocks: u64,
    /// The hidden file holding the inode table (a block filesystem's; read through the page
    /// cache when an inode not in the inode cache is looked up).
    pub inode_table: Option<u32>,
    /// Indexed directories given a region of the hidden metadata file so far.
    pub dir_meta_regions: u64,
    /// A tmpfs's size limit in pages (sbinfo->max_blocks); `None` for a blockfs.
    pub shmem_max_blocks: Option<u64>,
    /// A tmpfs's pages in use (sbinfo->used_blocks): its files' pages in the page cache and
    /// in swap (swap entries). A new page past the limit is ENOSPC (SIGBUS for a fault).
    pub shmem_used_blocks: u64,
    /// The `atime` mount option.
    pub atime: Atime,
    /// The `journal` option: the filesystem has a journal (given `journal` at setup).
    pub has_journal: bool,
    /// The journal of a block filesystem with an inode table and `journal` (`fs/jbd2.rs`).
    pub journal: Option<jbd2::Journal>,
}

impl FileSystem {
    /// A filesystem as the scenario says.
    pub fn new(spec: &FsSpec, device: Option<usize>) -> FileSystem {
        FileSystem {
            mount: spec.mount.clone(),
            kind: spec.kind,
            device,
            names: rustc_hash::FxHashMap::default(),
            dirs: BTreeMap::from([(spec.mount.clone(), namei::Directory::new())]),
            used_blocks: 0,
            inode_table: None,
            dir_meta_regions: 0,
            shmem_max_blocks: spec.size_bytes.map(|b| b / crate::mm::page::PAGE_SIZE),
            shmem_used_blocks: 0,
            atime: spec.atime,
            has_journal: spec.journal,
            journal: None,
        }
    }
}

#[cfg(test)]
mod page_versions_tests {
    use super::{PageVersions, CHUNK_PAGES};
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        Set(u64, u32),
        Truncate(u64),
    }

    /// An index near the start or near a chunk boundary (the sparse form's edges).
    fn index() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..24,
            (CHUNK_PAGES - 6)..(CHUNK_PAGES + 6),
            (3 * CHUNK_PAGES - 4)..(3 * CHUNK_PAGES + 4),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (index(), 0u32..3).prop_map(|(i, v)| Step::Set(i, v)),
            index().prop_map(Step::Truncate),
        ]
    }

    /// The indices each read checks.
    fn probes() -> impl Iterator<Item = u64> {
        (0..26)
            .chain(CHUNK_PAGES - 8..CHUNK_PAGES + 8)
            .chain(2 * CHUNK_PAGES - 2..2 * CHUNK_PAGES + 2)
            .chain(3 * CHUNK_PAGES - 6..3 * CHUNK_PAGES + 6)
    }

    proptest! {
        /// Uniform start, then sets and truncates: every read, the length and the non-zero
        /// count agree with a plain vector's, whichever form holds the versions (the
        /// vector's limit drawn small, so that the sparse form is taken at once, after a
        /// few pages, or never).
        #[test]
        fn page_versions_read_as_a_vector(v0 in 0u32..3, n in prop_oneof![0u64..16, 1000u64..3100],
                                          limit in prop_oneof![Just(1u64), 8u64..40, Just(1u64 << 24)],
                                          steps in proptest::collection::vec(step(), 0..24)) {
            let mut pv = PageVersions::uniform(v0, n);
            let mut model = vec![v0; n as usize];
            for s in steps {
                match s {
                    Step::Set(i, v) => {
                        pv.set_with_limit(i, v, limit);
                        if model.len() <= i as usize {
                            model.resize(i as usize + 1, 0);
                        }
                        model[i as usize] = v;
                    }
                    Step::Truncate(l) => {
                        pv.truncate(l);
                        model.truncate(l as usize);
                    }
                }
                prop_assert_eq!(pv.len(), model.len() as u64);
                for i in probes() {
                    prop_assert_eq!(pv.get(i), model.get(i as usize).copied().unwrap_or(0), "page {}", i);
                }
                for i in [0, 1, 5, CHUNK_PAGES - 1, CHUNK_PAGES, CHUNK_PAGES + 3, 3 * CHUNK_PAGES] {
                    let nz = model.iter().skip(i as usize).filter(|x| **x != 0).count() as u64;
                    prop_assert_eq!(pv.count_nonzero_from(i), nz, "from {}", i);
                }
            }
        }
    }

    /// A write at the end of a 10 TiB file spells out one chunk, not the file.
    #[test]
    fn a_write_far_into_a_huge_file_allocates_a_chunk() {
        let pages = 10u64 << 28; // 10 TiB in 4 KiB pages
        let mut pv = PageVersions::uniform(1, pages);
        pv.set(pages - 1, 2);
        pv.set(7, 3);
        let super::Versions::Sparse(s) = &pv.0 else {
            panic!("a 10 TiB file spelled out as a vector")
        };
        assert_eq!(s.chunks.len(), 2);
        assert_eq!(
            (
                pv.get(pages - 1),
                pv.get(pages - 2),
                pv.get(7),
                pv.get(pages)
            ),
            (2, 1, 3, 0)
        );
        assert_eq!(pv.count_nonzero_from(0), pages);
        // And a vector written far past its end becomes chunks.
        let mut pv = PageVersions::default();
        pv.set(0, 1);
        pv.set(pages, 1);
        assert!(matches!(pv.0, super::Versions::Sparse(_)));
        assert_eq!((pv.len(), pv.count_nonzero_from(0)), (pages + 1, 2));
    }
}
