//! Filesystems, inodes and address_spaces, block devices.
//!
//! Two filesystem types: `tmpfs` (shmem: pages are swap-backed, never written to a device,
//! dirty pages are not accounted for writeback) and `blockfs`, a generic block-backed
//! filesystem on a block-device model, with writeback through a flusher thread. Each
//! filesystem maps full paths of regular files to inodes (`names`) and keeps a tree of
//! directories in creation order (`dirs`, see `namei.rs`).

pub mod blockdev;
pub mod namei;
pub mod syscalls;
pub mod writeback;

pub use blockdev::{BlockDevice, IoKind, IoRequest};

use std::collections::BTreeMap;

use crate::machine::{Ps, SpinLock};
use crate::mm::radix_tree::RadixTree;
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
/// it, spells the pages out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageVersions(Versions);

/// [`PageVersions`]' two forms (24 bytes: the uniform form fits beside the vector's niche).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Versions {
    /// Every page below `len` holds `version`, none above.
    Uniform { version: u32, len: u64 },
    /// Per-page versions.
    Pages(Vec<u32>),
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
        }
    }

    /// Store `version` at `index` (growing with zeros).
    pub fn set(&mut self, index: u64, version: u32) {
        if let Versions::Uniform { version: u, len } = self.0 {
            if index < len && version == u {
                return;
            }
            self.0 = Versions::Pages(vec![u; len as usize]);
        }
        let Versions::Pages(p) = &mut self.0 else {
            unreachable!("spelled out above")
        };
        let i = index as usize;
        if p.len() <= i {
            p.resize(i + 1, 0);
        }
        p[i] = version;
    }

    /// Forget the versions at `len` and above (Vec::truncate).
    pub fn truncate(&mut self, new_len: u64) {
        match &mut self.0 {
            Versions::Uniform { len, .. } => *len = (*len).min(new_len),
            Versions::Pages(p) => p.truncate(new_len as usize),
        }
    }

    /// Pages held (the length the vector would have).
    pub fn len(&self) -> u64 {
        match &self.0 {
            Versions::Uniform { len, .. } => *len,
            Versions::Pages(p) => p.len() as u64,
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
        }
    }
}

#[cfg(test)]
mod page_versions_tests {
    use super::PageVersions;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        Set(u64, u32),
        Truncate(u64),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u64..24, 0u32..3).prop_map(|(i, v)| Step::Set(i, v)),
            (0u64..24).prop_map(Step::Truncate),
        ]
    }

    proptest! {
        /// Uniform start, then sets and truncates: every read, the length and the non-zero
        /// count agree with a plain vector's.
        #[test]
        fn page_versions_read_as_a_vector(v0 in 0u32..3, n in 0u64..16,
                                          steps in proptest::collection::vec(step(), 0..24)) {
            let mut pv = PageVersions::uniform(v0, n);
            let mut model = vec![v0; n as usize];
            for s in steps {
                match s {
                    Step::Set(i, v) => {
                        pv.set(i, v);
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
                for i in 0..26u64 {
                    prop_assert_eq!(pv.get(i), model.get(i as usize).copied().unwrap_or(0));
                    let nz = model.iter().skip(i as usize).filter(|x| **x != 0).count() as u64;
                    prop_assert_eq!(pv.count_nonzero_from(i), nz);
                }
            }
        }
    }
}
