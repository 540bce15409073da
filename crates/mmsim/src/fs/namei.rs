//! Directories, truncate/ftruncate and stat: the namespace operations the file-lifecycle
//! benchmarks need (fs/namei.c, fs/open.c, fs/stat.c, fs/readdir.c, mm/truncate.c's
//! truncate_setsize/truncate_pagecache).
//!
//! # What the kernel does
//!
//! A path walk looks each component up in the dentry cache; `mkdir`, `rmdir`, `unlink` and
//! `open(O_CREAT)` insert or remove a dentry in the parent directory and allocate or free an
//! inode; `rmdir` refuses a directory that still has entries (ENOTEMPTY); `getdents` returns
//! the entries in the directory's own order; `stat` walks the path and copies the inode's
//! attributes. `truncate`/`ftruncate` go through `do_truncate` → `notify_change` →
//! `->setattr` → `truncate_setsize`: i_size is written first, then, when shrinking,
//! `truncate_pagecache` unmaps the range beyond the new size, calls
//! `truncate_inode_pages(mapping, newsize)` (which zeroes the tail of a partial last page)
//! and unmaps again; the filesystem then frees the blocks beyond the new EOF. Growing only
//! writes i_size: the new range is a hole (a sparse file), read as zeros.
//!
//! # What we model
//!
//! - Each filesystem has a tree of directories ([`Directory`]) keyed by full path; the
//!   mount point is the root directory. A directory keeps its entries in creation order,
//!   which is its readdir order (like a simple linear directory such as ext2 without
//!   htree or tmpfs' dcache list, reversed there). Regular files keep their inode in the
//!   filesystem's `names` map; directories have no `Inode` (no page cache) and stat
//!   reports their size as one block (4096).
//! - Costs (documented in `docs/scenarios.md`): every path lookup, insertion or removal of a
//!   name is one `dir_op_ps` (1 µs); mkdir and rmdir add one `inode_op_ps` for the
//!   directory inode; readdir is one `dir_op_ps` plus one `list_op_ps` and a 32-byte dirent
//!   copy per entry; stat is one `dir_op_ps`.
//! - truncate/ftruncate to any size, shrinking (through the kernel's truncate path, which
//!   may sleep on locked pages or writeback and then resumes at its stage) and growing
//!   (sparse). Shrinking a mapped file zaps every PTE at or beyond the new end in every
//!   process mapping it, COW'd private copies included (`unmap_mapping_range` before and
//!   after the page-cache truncation); a later fault there is SIGBUS. The content oracle drops `expected` beyond the new EOF when i_size is
//!   written, and the device's data beyond it once the page cache is truncated (so a
//!   writeback that ends meanwhile cannot leave stale blocks). Block usage follows the
//!   simulator's size-based accounting (`used_blocks` counts the pages below i_size, as
//!   `write` and `[[files]]` do); growing never fails with ENOSPC (a hole uses no block).
//! - Errors: a missing path or parent is ENOENT; a path through a regular file is ENOTDIR;
//!   a directory where a file is expected is EISDIR; mkdir of an existing name is EEXIST;
//!   rmdir of a non-empty directory is ENOTEMPTY and of a mount point EBUSY; a size above
//!   `i64::MAX` (a negative `off_t`) is EINVAL.
//!
//! - Each directory keeps ext4's hashed index of its entries ([`crate::fs::htree`]): a
//!   lookup in a directory of more than one block reads its root, index and leaf blocks
//!   through the block device's page cache (`Sim::dx_read_blocks`).
//!
//! Not modelled: hard links, renames, permissions, i_rwsem (a write concurrent with a
//! sleeping truncate is not serialized), directory writes, and the journal.

use std::sync::Arc;

use crate::mm::page::PAGE_SIZE;
use crate::sched::{TaskId, Wait};
use crate::sim::Sim;
use crate::workload::{Errno, OpResult};

/// The size `stat` reports for a directory (one block).
pub const DIR_SIZE: u64 = 4096;

/// Bytes of one `struct linux_dirent64` copied to the user by readdir (name included).
const DIRENT_BYTES: u64 = 32;

/// One directory: its entries in creation (= readdir) order.
#[derive(Clone, Debug, Default)]
pub struct Directory {
    /// Entries in creation (readdir) order: (name, is a directory); a removed entry leaves
    /// a hole until holes are half the list, when the list is compacted (order kept).
    entries: Vec<Option<(Arc<str>, bool)>>,
    /// Name → position in `entries` (a hash map: looked up, never iterated); the name is
    /// shared with the entry.
    by_name: rustc_hash::FxHashMap<Arc<str>, u32>,
    /// Holes in `entries`.
    holes: usize,
    /// ext4's hashed index of the entries (which blocks a lookup reads).
    pub htree: crate::fs::htree::Htree,
    /// Where its blocks start in its filesystem's hidden metadata file (assigned at its
    /// first indexed lookup).
    pub meta_base: Option<u64>,
}

impl Directory {
    /// An empty directory.
    pub fn new() -> Directory {
        Directory::default()
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.by_name.len()
    }
    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }
    /// Entry names in readdir order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().flatten().map(|(n, _)| &**n)
    }
    /// Does `name` exist here?
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }
    /// Room for `additional` more entries (a run that creates many files at once).
    pub fn reserve(&mut self, additional: usize) {
        self.entries.reserve(additional);
        self.by_name.reserve(additional);
    }
    fn insert(&mut self, name: &str, is_dir: bool) -> bool {
        if self.by_name.contains_key(name) {
            return false;
        }
        self.htree.insert(name);
        let name: Arc<str> = name.into();
        let pos = u32::try_from(self.entries.len()).expect("directory of 2^32 entries");
        self.entries.push(Some((name.clone(), is_dir)));
        self.by_name.insert(name, pos);
        true
    }
    fn remove(&mut self, name: &str) -> bool {
        let Some(pos) = self.by_name.remove(name) else {
            return false;
        };
        self.htree.remove(name);
        self.entries[pos as usize] = None;
        self.holes += 1;
        if self.holes * 2 > self.entries.len() {
            self.entries.retain(Option::is_some);
            self.holes = 0;
            for (i, (n, _)) in self.entries.iter().flatten().enumerate() {
                *self.by_name.get_mut(&**n).expect("indexed") = i as u32;
            }
        }
        true
    }
}

/// Split an absolute path into (parent directory, last component).
pub fn split_path(path: &str) -> (&str, &str) {
    // A byte search: '/' is ASCII, never inside a multi-byte character.
    match path.bytes().rposition(|b| b == b'/') {
        Some(0) => ("/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => ("/", path),
    }
}

impl Sim {
    /// May `path` be created on filesystem `fs`: the parent must be a directory and the name
    /// free. Err: ENOENT (no parent), ENOTDIR (the parent is a file), EEXIST (taken), EISDIR
    /// (`path` is the mount point).
    pub fn may_create(&self, fs: usize, path: &str) -> Result<(), Errno> {
        let f = &self.fss[fs];
        if path == f.mount {
            return Err(Errno::EISDIR);
        }
        let (parent, _) = split_path(path);
        if !f.dirs.contains_key(parent) {
            return Err(if f.names.contains_key(parent) {
                Errno::ENOTDIR
            } else {
                Errno::ENOENT
            });
        }
        if f.names.contains_key(path) || f.dirs.contains_key(path) {
            return Err(Errno::EEXIST);
        }
        Ok(())
    }

    /// Add `path` to its parent directory (the parent must exist).
    fn namei_link(&mut self, fs: usize, path: &str, is_dir: bool) {
        let (parent, name) = split_path(path);
        if let Some(d) = self.fss[fs].dirs.get_mut(parent) {
            d.insert(name, is_dir);
        }
        if is_dir {
            self.fss[fs].dirs.entry(path.to_string()).or_default();
            self.path_cache.invalidate();
        }
    }

    /// Add a regular file's name to its parent directory, creating missing parents first
    /// (`mkdir -p`; used for files that exist before the run and by create_inode).
    pub fn namei_link_file(&mut self, fs: usize, path: &str) {
        let mut missing = Vec::new();
        let mut p = split_path(path).0;
        let f = &self.fss[fs];
        while p != f.mount && p != "/" && !f.dirs.contains_key(p) {
            missing.push(p.to_string());
            p = split_path(p).0;
        }
        for d in missing.into_iter().rev() {
            self.namei_link(fs, &d, true);
        }
        self.namei_link(fs, path, false);
    }

    /// Remove `path` from its parent directory.
    pub fn namei_unlink(&mut self, fs: usize, path: &str) {
        let (parent, name) = split_path(path);
        if let Some(d) = self.fss[fs].dirs.get_mut(parent) {
            d.remove(name);
        }
    }

    /// mkdir(2).
    pub fn sys_mkdir(&mut self, path: &str) -> OpResult {
        let Some(fs) = self.resolve_fs(path) else {
            return OpResult::Err(Errno::ENOENT);
        };
        self.charge(self.costs.dir_op_ps);
        if let Err(e) = self.may_create(fs, path) {
            return OpResult::Err(if e == Errno::EISDIR { Errno::EEXIST } else { e });
        }
        self.charge(self.costs.inode_op_ps); // the directory inode
        self.namei_link(fs, path, true);
        OpResult::None
    }

    /// rmdir(2): ENOTEMPTY while the directory has entries.
    pub fn sys_rmdir(&mut self, path: &str) -> OpResult {
        let Some(fs) = self.resolve_fs(path) else {
            return OpResult::Err(Errno::ENOENT);
        };
        self.charge(self.costs.dir_op_ps);
        let f = &self.fss[fs];
        let Some(d) = f.dirs.get(path) else {
            return OpResult::Err(if f.names.contains_key(path) {
                Errno::ENOTDIR
            } else {
                Errno::ENOENT
            });
        };
        if path == f.mount {
            return OpResult::Err(Errno::EBUSY);
        }
        if !d.is_empty() {
            return OpResult::Err(Errno::ENOTEMPTY);
        }
        self.charge(self.costs.inode_op_ps); // evict the directory inode
        self.fss[fs].dirs.remove(path);
        self.path_cache.invalidate();
        self.namei_unlink(fs, path);
        OpResult::None
    }

    /// stat(2): the size in bytes (a directory: one block).
    pub fn sys_stat(&mut self, path: &str) -> OpResult {
        let Some(fs) = self.resolve_fs(path) else {
            return OpResult::Err(Errno::ENOENT);
        };
        self.charge(self.costs.dir_op_ps);
        let f = &self.fss[fs];
        if let Some(&ino) = f.names.get(path) {
            self.vfs_ensure_nowait(ino);
            self.vfs_dput(ino);
            return OpResult::Bytes(self.inode(ino).size);
        }
        if f.dirs.contains_key(path) {
            return OpResult::Bytes(DIR_SIZE);
        }
        OpResult::Err(Errno::ENOENT)
    }

    /// getdents(2) until the end of the directory: the entry names in readdir order.
    pub fn sys_readdir(&mut self, path: &str) -> OpResult {
        let Some(fs) = self.resolve_fs(path) else {
            return OpResult::Err(Errno::ENOENT);
        };
        self.charge(self.costs.dir_op_ps);
        let f = &self.fss[fs];
        let Some(d) = f.dirs.get(path) else {
            return OpResult::Err(if f.names.contains_key(path) {
                Errno::ENOTDIR
            } else {
                Errno::ENOENT
            });
        };
        let names: Vec<String> = d.names().map(str::to_string).collect();
        for _ in &names {
            self.charge(self.costs.list_op_ps);
            self.charge_bulk_store(self.costs.page_copy_ps, DIRENT_BYTES);
        }
        OpResult::Names(names)
    }

    /// truncate(2) of the file at `path`. Progress: 0 = not started; otherwise the inode
    /// in the high bits and the do_truncate progress in the low 8 bits.
    pub fn sys_truncate(
        &mut self,
        path: &str,
        size: u64,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        if size > i64::MAX as u64 {
            return Ok(OpResult::Err(Errno::EINVAL));
        }
        let ino = if *progress == 0 {
            let Some(fs) = self.resolve_fs(path) else {
                return Ok(OpResult::Err(Errno::ENOENT));
            };
            self.charge(self.costs.dir_op_ps);
            match self.fss[fs].names.get(path).copied() {
                Some(ino) => {
                    self.vfs_ensure_nowait(ino);
                    self.vfs_dput(ino);
                    ino
                }
                None if self.fss[fs].dirs.contains_key(path) => {
                    return Ok(OpResult::Err(Errno::EISDIR))
                }
                None => return Ok(OpResult::Err(Errno::ENOENT)),
            }
        } else {
            let ino = (*progress >> 8) as u32;
            if self.inodes.get(ino as usize).is_none_or(|i| i.is_none()) {
                return Ok(OpResult::None); // unlinked and evicted meanwhile
            }
            ino
        };
        let mut p = *progress & 0xff;
        let r = self.do_truncate(ino, size, &mut p);
        *progress = (u64::from(ino) << 8) | p;
        r.map(|_| OpResult::None)
    }

    /// ftruncate(2) of an open file.
    pub fn sys_ftruncate(
        &mut self,
        tid: TaskId,
        fd: u32,
        size: u64,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        let Some(f) = self.fd_file(tid, fd) else {
            return Ok(OpResult::Err(Errno::EBADF));
        };
        if size > i64::MAX as u64 {
            return Ok(OpResult::Err(Errno::EINVAL));
        }
        self.do_truncate(f.ino, size, progress)
            .map(|_| OpResult::None)
    }

    /// do_truncate → truncate_setsize + the filesystem's block freeing. Progress: 0 = not
    /// started; 1 + the truncate stage (see `mm::truncate::stage`) once i_size is written.
    pub fn do_truncate(&mut self, ino: u32, size: u64, progress: &mut u64) -> Result<(), Wait> {
        let new_pages = size.div_ceil(PAGE_SIZE);
        if *progress == 0 {
            let fs = self.inode(ino).fs;
            let old = self.inode(ino).size;
            let old_pages = old.div_ceil(PAGE_SIZE);
            // i_size_write first.
            self.inode_mut(ino).size = size;
            if size >= old {
                // Growing: a hole; nothing is cached or allocated.
                self.fss[fs].used_blocks += new_pages - old_pages;
                return Ok(());
            }
            self.fss[fs].used_blocks = self.fss[fs]
                .used_blocks
                .saturating_sub(old_pages - new_pages);
            // Nothing beyond the new EOF has content any more.
            self.inode_mut(ino).expected.truncate(new_pages);
            *progress = 1;
            // truncate_pagecache: unmap (COW'd copies too), truncate, unmap again.
            self.unmap_mapping_range(ino, new_pages * PAGE_SIZE, 0, true);
        }
        let mut st = *progress - 1;
        let r = self.truncate_inode_pages_range_resume(ino, size, u64::MAX, &mut st);
        *progress = st + 1;
        r?;
        // Unmap again: in the kernel this catches a fault that read i_size before it
        // changed and mapped its page after the first pass. Here a fault that slept
        // re-checks i_size when it resumes, so this finds nothing — kept as the kernel does.
        self.unmap_mapping_range(ino, new_pages * PAGE_SIZE, 0, true);
        // The filesystem frees the blocks beyond the new EOF.
        let inode = self.inode_mut(ino);
        let freed = inode.disk.count_nonzero_from(new_pages);
        inode.disk.truncate(new_pages);
        inode.nr_blocks -= freed;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Directory;

    #[test]
    fn a_directory_lists_its_entries_in_creation_order_through_removals() {
        let mut d = Directory::new();
        let mut model: Vec<String> = Vec::new();
        // Insert 100, remove most (the holes are compacted away more than once), re-add
        // some: readdir order is creation order, a re-created name goes last.
        for i in 0..100 {
            assert!(d.insert(&format!("f{i}"), i % 10 == 0));
            model.push(format!("f{i}"));
        }
        assert!(!d.insert("f5", false), "a name exists once");
        for i in (0..100).filter(|i| i % 7 != 0) {
            assert!(d.remove(&format!("f{i}")));
            model.retain(|n| *n != format!("f{i}"));
            assert_eq!(d.names().collect::<Vec<_>>(), model, "after removing f{i}");
        }
        assert!(!d.remove("f1"), "already gone");
        for i in [3, 0, 50] {
            let n = format!("f{i}");
            if d.contains(&n) {
                assert!(d.remove(&n));
                model.retain(|m| *m != n);
            }
            assert!(d.insert(&n, false));
            model.push(n);
        }
        assert_eq!(d.names().collect::<Vec<_>>(), model);
        assert_eq!(d.len(), model.len());
        assert!(model.iter().all(|n| d.contains(n)));
        assert!(!d.contains("f2"));
    }
}
