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
    /// When the inode was first dirtied (dirtied_when), if dirty.
    pub dirtied_when: Option<Ps>,
    /// mapping->writeback_index: where background writeback resumes.
    pub writeback_index: u64,
    /// Content oracle: the newest version written at each index (0 = never written).
    pub expected: Vec<u32>,
    /// Content oracle: the version the device holds at each index (0 = hole).
    pub disk: Vec<u32>,
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

impl Inode {
    /// Newest written version at `index` (0 = never written: reads as zeros).
    pub fn expected_at(&self, index: u64) -> u32 {
        self.expected.get(index as usize).copied().unwrap_or(0)
    }
    /// Version on the device at `index`.
    pub fn disk_at(&self, index: u64) -> u32 {
        self.disk.get(index as usize).copied().unwrap_or(0)
    }
}

/// Grow-and-set helper for the content-oracle vectors.
pub fn set_version(v: &mut Vec<u32>, index: u64, version: u32) {
    let i = index as usize;
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    v[i] = version;
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
    pub names: rustc_hash::FxHashMap<String, u32>,
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
