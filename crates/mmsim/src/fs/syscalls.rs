//! System calls of workload programs: open, close, read, write, fdatasync, unlink, and the
//! engine's dispatcher `exec_op`. A syscall that must sleep returns `Err(Wait)` and is
//! resumed from its recorded progress when the task is woken.

use crate::fs::{AddressSpace, Inode};
use crate::machine::profile::KFunc;
use crate::machine::Mode;
use crate::mm::page::PAGE_SIZE;
use crate::scenario::FsKind;
use crate::sched::{OpenFile, TaskId, Wait};
use crate::sim::Sim;
use crate::workload::{Errno, Op, OpResult};

/// MAX_LFS_FILESIZE on 64-bit: the largest file offset (LLONG_MAX).
pub const MAX_LFS_FILESIZE: u64 = i64::MAX as u64;

/// Path epochs handed out so far (process-wide: two simulations never share one, so a
/// path's memo from one is never taken by another).
static PATH_EPOCHS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The host's memo of the files `Op::Open` found, kept in each path
/// ([`crate::workload::OpenPath`]): a memo is valid while it carries this epoch. Any change
/// of names, directories or mounts starts a new epoch. It saves the host the string hashing
/// and compares of an open per request; nothing simulated reads it.
pub(crate) struct PathCache {
    epoch: u64,
}

impl Default for PathCache {
    fn default() -> PathCache {
        PathCache {
            epoch: Self::new_epoch(),
        }
    }
}

impl PathCache {
    fn new_epoch() -> u64 {
        PATH_EPOCHS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    }

    /// Forget everything (a name, directory or mount changed).
    #[inline]
    pub(crate) fn invalidate(&mut self) {
        self.epoch = Self::new_epoch();
    }
}

impl Sim {
    /// Find the filesystem holding `path` (longest mount prefix on path components).
    pub fn resolve_fs(&self, path: &str) -> Option<usize> {
        let mut best: Option<(usize, usize)> = None;
        for (i, fs) in self.fss.iter().enumerate() {
            let m = fs.mount.as_str();
            let under = m == "/"
                || path == m
                || (path.starts_with(m) && path.as_bytes().get(m.len()) == Some(&b'/'));
            if under && best.is_none_or(|(_, l)| m.len() > l) {
                best = Some((i, m.len()));
            }
        }
        best.map(|(i, _)| i)
    }

    /// new_inode + d_add: an empty regular file named `path` on filesystem `fs`.
    pub fn create_inode(&mut self, fs: usize, path: &str) -> u32 {
        self.create_inode_named(fs, path.into())
    }

    /// `create_inode` with the path already shared (a scenario's files: the namespace
    /// keeps the scenario's own string).
    pub(crate) fn create_inode_named(&mut self, fs: usize, path: std::sync::Arc<str>) -> u32 {
        let ino = self.inodes.len() as u32;
        let kind = self.fss[fs].kind;
        let mapping = AddressSpace {
            account_dirty: kind == FsKind::Blockfs,
            swapbacked: kind == FsKind::Tmpfs,
            ..Default::default()
        };
        self.inodes.push(Some(Inode::new(ino, fs, mapping)));
        self.namei_link_file(fs, &path);
        self.fss[fs].names.insert(path, ino);
        self.path_cache.invalidate();
        ino
    }

    /// Execute (or resume) `op`, the op in progress of task `tid`, at `progress` (its
    /// own counter), `entered` once the syscall entry is paid. The engine holds the op out
    /// of the task for the step (nothing reads a running task's op while it executes) and
    /// puts it back only when the op sleeps, with its progress.
    pub fn exec_op(
        &mut self,
        tid: TaskId,
        op: &Op,
        progress: &mut u64,
        entered: &mut bool,
    ) -> Result<OpResult, Wait> {
        let is_syscall = !matches!(
            op,
            Op::TimerStart(_)
                | Op::TimerStop(_)
                | Op::TimerStopRate { .. }
                | Op::Sleep { .. }
                | Op::Touch { .. }
        );
        if !*entered && is_syscall {
            // Entering the kernel: a little user time to set up the call, then the entry.
            self.syscall_entry(self.costs.mem_access_ps * 20);
            self.charge(self.costs.syscall_ps);
            self.tasks[tid].stats.syscalls += 1;
        } else {
            self.set_mode(Mode::System);
        }
        // The match is the function's value: the result goes straight to the caller (no
        // copy of a value just written, which the CPU cannot forward from its store
        // buffer). A resumed syscall does not pay the entry again; the caller returns to
        // system mode after the op (`Sim::exec_step`).
        *entered = true;
        match op {
            Op::Open {
                path,
                create,
                truncate,
            } => {
                let found = self.resolve_open_path(path);
                self.sys_open_in(tid, path, found, *create, *truncate, progress)
            }
            Op::Close { fd } => self.sys_close_resume(tid, *fd, progress),
            Op::Write { fd, len } => self.sys_write(tid, *fd, *len, None, progress),
            Op::Pwrite { fd, len, pos } => self.sys_write(tid, *fd, *len, Some(*pos), progress),
            Op::Read { fd, len } => self.sys_read(tid, *fd, *len, None, progress),
            Op::Preadv2 {
                fd,
                len,
                pos,
                flags,
            } => self.sys_rw_flags(tid, *fd, *len, *pos, *flags, false, progress),
            Op::Pwritev2 {
                fd,
                len,
                pos,
                flags,
            } => self.sys_rw_flags(tid, *fd, *len, *pos, *flags, true, progress),
            Op::Pread { fd, len, pos } => self.sys_read(tid, *fd, *len, Some(*pos), progress),
            Op::ReadZero { len } => {
                let prev = self.enter(KFunc::ReadZero);
                self.charge_bulk_store(self.costs.page_zero_ps, *len);
                self.leave(prev);
                Ok(OpResult::Bytes(*len))
            }
            Op::Fdatasync { fd } => self.sys_fdatasync(tid, *fd, progress),
            Op::Mmap {
                path,
                len,
                offset,
                prot,
                shared,
            } => match path.as_deref() {
                Some(p) => self.walk_then(p, false, |s| {
                    Ok(s.sys_mmap(tid, Some(p), *len, *offset, *prot, *shared))
                }),
                None => Ok(self.sys_mmap(tid, None, *len, *offset, *prot, *shared)),
            },
            Op::Munmap { addr, len } => self.sys_munmap(tid, *addr, *len),
            Op::Fork(child) => self.sys_fork(tid, child, progress),
            Op::Mprotect { addr, len, prot } => Ok(self.sys_mprotect(tid, *addr, *len, *prot)),
            Op::Mlock { addr, len, lock } => Ok(self.sys_mlock(tid, *addr, *len, *lock)),
            Op::Madvise { addr, len, advice } => Ok(self.sys_madvise(tid, *addr, *len, *advice)),
            Op::Fadvise {
                fd,
                offset,
                len,
                advice,
            } => Ok(self.sys_fadvise(tid, *fd, *offset, *len, *advice)),
            Op::Touch {
                addr,
                len,
                stride,
                write,
            } => self.sys_touch(tid, *addr, *len, *stride, *write, progress),
            Op::Unlink { path } if *progress == 0 => {
                self.walk_then(path, false, |s| s.sys_unlink(path, progress))
            }
            Op::Unlink { path } => self.sys_unlink(path, progress),
            Op::Ftruncate { fd, size } => self.sys_ftruncate(tid, *fd, *size, progress),
            Op::Truncate { path, size } if *progress == 0 => {
                self.walk_then(path, false, |s| s.sys_truncate(path, *size, progress))
            }
            Op::Truncate { path, size } => self.sys_truncate(path, *size, progress),
            Op::Mkdir { path } => Ok(self.sys_mkdir(path)),
            Op::Rmdir { path } => Ok(self.sys_rmdir(path)),
            Op::Stat { path } => self.walk_then(path, false, |s| Ok(s.sys_stat(path))),
            Op::Readdir { path } => Ok(self.sys_readdir(path)),
            Op::MemoryReclaim {
                cgroup,
                bytes,
                swappiness,
            } => self.memory_reclaim(cgroup, *bytes, *swappiness, progress),
            Op::ReadCgroup { cgroup } => {
                // memory_stat_show flushes the cgroup's subtree (mem_cgroup_flush_stats).
                if let Some(m) = self.memcg_by_name(cgroup) {
                    self.memcg_stats_flush_subtree(m);
                }
                Ok(self.read_cgroup(cgroup))
            }
            Op::SetMemoryHigh { cgroup, bytes } => self.memory_high_write(cgroup, *bytes),
            Op::CgroupWrite {
                cgroup,
                file,
                bytes,
            } => self.cgroup_write(cgroup, *file, *bytes),
            Op::TimerStopRate { label, count } => {
                let now = self.now();
                if let Some((t0, _)) = self.tasks[tid].stats.timers.remove(label) {
                    let ps = (now - t0).max(1);
                    let rate = (u128::from(*count) * 1_000_000_000_000 + u128::from(ps) / 2)
                        / u128::from(ps);
                    self.tasks[tid]
                        .stats
                        .samples
                        .entry(label.clone())
                        .or_default()
                        .push(rate as u64);
                }
                Ok(OpResult::None)
            }
            Op::Sleep { ns } => {
                if *progress == 0 {
                    *progress = 1;
                    let at = self.now() + ns * 1_000;
                    Err(Wait::Until(at))
                } else {
                    Ok(OpResult::None)
                }
            }
            Op::TimerStart(label) => {
                let now = self.now();
                let majflt = self.tasks[tid].stats.majflt;
                self.tasks[tid]
                    .stats
                    .timers
                    .insert(label.clone(), (now, majflt));
                Ok(OpResult::None)
            }
            Op::TimerStop(label) => {
                let now = self.now();
                if let Some((t0, m0)) = self.tasks[tid].stats.timers.remove(label) {
                    let st = &mut self.tasks[tid].stats;
                    st.samples
                        .entry(label.clone())
                        .or_default()
                        .push((now - t0) / 1_000);
                    // Major faults taken inside the timed region, as a second series.
                    let faults = st.majflt - m0;
                    st.region_majflt
                        .entry(label.clone())
                        .or_default()
                        .push(faults);
                }
                Ok(OpResult::None)
            }
            Op::Exit => Ok(OpResult::None),
        }
    }

    /// The restartable path walk ([`Sim::vfs_path_walk`]), then the syscall.
    fn walk_then(
        &mut self,
        path: &str,
        create: bool,
        f: impl FnOnce(&mut Sim) -> Result<OpResult, Wait>,
    ) -> Result<OpResult, Wait> {
        match self.vfs_path_walk(path, create)? {
            Some(e) => Ok(OpResult::Err(e)),
            None => f(self),
        }
    }

    /// The open file behind `fd` in `tid`'s descriptor table (its process's: the threads
    /// of a `thread_group` share one, CLONE_FILES).
    pub fn fd_file(&self, tid: TaskId, fd: u32) -> Option<OpenFile> {
        self.tasks[self.tasks[tid].tgid]
            .fds
            .get(fd as usize)
            .copied()
            .flatten()
    }

    /// The filesystem and inode of the existing file `path`, as `resolve_fs` and the
    /// filesystem's names find them, through the path memo ([`PathCache`]; the host's
    /// work only: the walk's simulated cost is charged by `sys_open_in` either way).
    #[inline]
    fn resolve_open_path(&mut self, path: &crate::workload::OpenPath) -> Option<(usize, u32)> {
        let epoch = self.path_cache.epoch;
        if let Some(hit) = path.memo(epoch) {
            return Some(hit);
        }
        let fs = self.resolve_fs(path)?;
        let ino = self.fss[fs].names.get(&**path).copied()?;
        path.set_memo(epoch, fs, ino);
        Some((fs, ino))
    }

    /// open(2).
    pub fn sys_open(
        &mut self,
        tid: TaskId,
        path: &str,
        create: bool,
        truncate: bool,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        self.sys_open_in(tid, path, None, create, truncate, progress)
    }

    /// open(2) (do_sys_open) of `path`, whose filesystem and inode the caller may have
    /// found already (`found`; None: looked up here).
    fn sys_open_in(
        &mut self,
        tid: TaskId,
        path: &str,
        found: Option<(usize, u32)>,
        create: bool,
        truncate: bool,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        // path_openat's alloc_empty_file, before the path walk: the `struct file`
        // (`filp-kmem`), charged to the opener's memcg; a reclaim its charge makes runs
        // before the walk finds the file. Freed again when the open fails or sleeps (a
        // sleeping open restarts and allocates anew).
        let filp = if self.features.filp_kmem {
            let prev = self.enter(KFunc::DoSysOpen);
            let room = self.vfs_prealloc(&[crate::mm::slab::KmemCache::Filp]);
            self.leave(prev);
            match room {
                Ok(()) => Some(self.vfs_obj_alloc(crate::mm::slab::KmemCache::Filp)),
                Err(crate::mm::slab::VfsAllocError::Wait(w)) => return Err(w),
                Err(crate::mm::slab::VfsAllocError::NoMem) => {
                    return Ok(OpResult::Err(Errno::ENOMEM))
                }
            }
        } else {
            None
        };
        let r = self.path_openat(tid, path, found, create, truncate, progress, filp);
        // A descriptor is returned by its value: a copy of the whole result would load it
        // 16 bytes at a time from where path_openat stored it a field at a time, and wait
        // for those stores (docs/performance.md, "Loads that wait for stores").
        if let Ok(OpResult::Fd(fd)) = r {
            return Ok(OpResult::Fd(fd));
        }
        if let Some((memcg, node)) = filp {
            self.vfs_obj_free(crate::mm::slab::KmemCache::Filp, memcg, node);
        }
        r
    }

    /// The rest of [`Sim::sys_open_in`]: the path walk (or the create) and the descriptor,
    /// which takes `filp`, the `struct file`'s object.
    #[allow(clippy::too_many_arguments)]
    fn path_openat(
        &mut self,
        tid: TaskId,
        path: &str,
        found: Option<(usize, u32)>,
        create: bool,
        truncate: bool,
        progress: &mut u64,
        filp: Option<(crate::mm::memcontrol::MemcgId, u8)>,
    ) -> Result<OpResult, Wait> {
        let prev = self.enter(KFunc::DoSysOpen);
        let (fs, found) = match found {
            Some((fs, ino)) => (fs, Some(ino)),
            None => {
                let Some(fs) = self.resolve_fs(path) else {
                    self.leave(prev);
                    return Ok(OpResult::Err(Errno::ENOENT));
                };
                (fs, self.fss[fs].names.get(path).copied())
            }
        };
        self.charge(self.costs.dir_op_ps);
        // A name is a file or a directory, never both (mkdir and create check): a file
        // found needs no directory lookup.
        let ino = match found {
            Some(ino) => {
                // The path walk: a file not in the dentry cache is looked up (its objects
                // allocated, its inode read from the inode table), restartably.
                if let Err(e) = self.vfs_lookup(ino, path) {
                    self.leave(prev);
                    return match e {
                        crate::mm::slab::VfsAllocError::Wait(w) => Err(w),
                        crate::mm::slab::VfsAllocError::NoMem => Ok(OpResult::Err(Errno::ENOMEM)),
                    };
                }
                ino
            }
            None if self.fss[fs].dirs.contains_key(path) => {
                self.leave(prev);
                return Ok(OpResult::Err(Errno::EISDIR)); // no directory descriptors
            }
            None if create => {
                if let Err(e) = self.may_create(fs, path) {
                    self.leave(prev);
                    return Ok(OpResult::Err(e));
                }
                // d_alloc and new_inode: their slab objects first (restartable).
                let tmpfs = self.fss[fs].kind == FsKind::Tmpfs;
                let caches = [
                    crate::mm::slab::KmemCache::Dentry,
                    crate::mm::slab::inode_cache(tmpfs),
                ];
                // The negative lookup before the create reads the name's directory blocks.
                if let Err(e) = self
                    .vfs_prealloc(&caches)
                    .and_then(|()| self.dx_read_blocks(fs, path))
                {
                    self.leave(prev);
                    return match e {
                        crate::mm::slab::VfsAllocError::Wait(w) => Err(w),
                        crate::mm::slab::VfsAllocError::NoMem => Ok(OpResult::Err(Errno::ENOMEM)),
                    };
                }
                self.charge(self.costs.inode_op_ps);
                let ino = self.create_inode(fs, path);
                self.vfs_create(ino);
                ino
            }
            None => {
                self.leave(prev);
                return Ok(OpResult::Err(Errno::ENOENT));
            }
        };
        if truncate && *progress == 0 {
            // O_TRUNC: truncate_pagecache(0) — unmap every mapping of the file (COW'd copies
            // too), truncate, unmap again. i_size is written once the pages are gone (the
            // kernel writes it first): a page faulted in while the truncate sleeps is
            // unmapped by the retry, which starts over, or by the second unmap.
            self.unmap_mapping_range(ino, 0, 0, true);
            if let Err(w) = self.truncate_inode_pages_range(ino, 0, u64::MAX) {
                self.leave(prev);
                return Err(w);
            }
            self.truncate_content(ino, 0);
            self.unmap_mapping_range(ino, 0, 0, true);
        }
        *progress = 1;
        self.inode_mut(ino).open += 1;
        let file = OpenFile {
            ino,
            pos: 0,
            ra: self.file_ra_state_init(ino),
            filp,
        };
        let files = self.tasks[tid].tgid;
        let fds = &mut self.tasks[files].fds;
        let fd = match fds.iter().position(|f| f.is_none()) {
            Some(i) => {
                fds[i] = Some(file);
                i
            }
            None => {
                fds.push(Some(file));
                fds.len() - 1
            }
        };
        self.leave(prev);
        Ok(OpResult::Fd(fd as u32))
    }

    /// Drop file contents beyond `size` from the oracle and the device (after a truncate).
    fn truncate_content(&mut self, ino: u32, size: u64) {
        let pages = size.div_ceil(PAGE_SIZE);
        let fs = self.inode(ino).fs;
        let inode = self.inode_mut(ino);
        let old_pages = inode.size.div_ceil(PAGE_SIZE);
        inode.size = size;
        inode.expected.truncate(pages);
        let freed = inode.disk.count_nonzero_from(pages);
        inode.disk.truncate(pages);
        inode.nr_blocks -= freed;
        let dropped = old_pages.saturating_sub(pages);
        self.fss[fs].used_blocks = self.fss[fs].used_blocks.saturating_sub(dropped);
    }

    /// close(2) where the caller cannot sleep (task exit, direct calls): the last close of
    /// an unlinked inode evicts it; if the eviction would have to sleep (a locked page or
    /// writeback), the inode becomes an orphan (no name, no opener, its busy pages cached)
    /// whose eviction [`Sim::evict_orphans`] finishes when the IO completes — programs'
    /// `Op::Close` uses [`Sim::sys_close_resume`], which sleeps instead.
    pub fn sys_close(&mut self, tid: TaskId, fd: u32) -> Result<OpResult, Wait> {
        let mut progress = 0;
        match self.sys_close_resume(tid, fd, &mut progress) {
            Err(_) => {
                // Only the eviction sleeps; progress names the inode.
                self.add_orphan((progress - 1) as u32);
                Ok(OpResult::None)
            }
            r => r,
        }
    }

    /// iput_final where the caller cannot sleep (the last mapping's fput at munmap or exit):
    /// evict the unlinked inode now, or, if that must wait for a locked page or writeback,
    /// make it an orphan that [`Sim::evict_orphans`] finishes when the IO completes.
    pub fn iput_final_nowait(&mut self, ino: u32) {
        let mut p = 0;
        if self.evict_inode(ino, &mut p).is_err() {
            self.add_orphan(ino);
        }
    }

    fn add_orphan(&mut self, ino: u32) {
        if !self.orphans.contains(&ino) {
            self.orphans.push(ino);
        }
    }

    /// Finish the eviction of every orphan inode none of whose pages is locked or under
    /// writeback any more. Called at the end of each IO completion (the only thing that
    /// unlocks a page or ends writeback across steps): the wait the kernel's closing task
    /// does in truncate_inode_pages_final (wait_on_page_writeback) happens here, its cost
    /// charged to the completing CPU as interrupt time.
    pub fn evict_orphans(&mut self) {
        let mut i = 0;
        while i < self.orphans.len() {
            let ino = self.orphans[i];
            if self.inodes.get(ino as usize).is_none_or(|x| x.is_none()) {
                self.orphans.remove(i); // evicted by someone else
                continue;
            }
            if self.inode_has_busy_pages(ino) {
                i += 1;
                continue;
            }
            let mut p = 0;
            if self.evict_inode(ino, &mut p).is_ok() {
                self.orphans.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Does any cached page of `ino` have PG_locked or PG_writeback (a look, no cost)?
    fn inode_has_busy_pages(&self, ino: u32) -> bool {
        let tree = &self.inode(ino).mapping.tree;
        let mut out = Vec::new();
        let mut idx = 0u64;
        loop {
            out.clear();
            if tree.gang_lookup(idx, 64, &mut out) == 0 {
                return false;
            }
            for &(i, e) in &out {
                idx = i + 1;
                if let crate::mm::radix_tree::Entry::Page(p) = e {
                    let pg_ = &self.mem[p as usize];
                    if pg_.test(crate::mm::page::pg::LOCKED)
                        || pg_.test(crate::mm::page::pg::WRITEBACK)
                    {
                        return true;
                    }
                }
            }
        }
    }

    /// close(2), restartable: the last close of an unlinked inode evicts it (iput → evict),
    /// sleeping on busy pages as the kernel's final fput does. Progress: 0 = descriptor not
    /// yet closed; otherwise 1 + the inode being evicted.
    pub fn sys_close_resume(
        &mut self,
        tid: TaskId,
        fd: u32,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        if *progress == 0 {
            // The descriptor's slot gives up its file (only the inode is needed).
            let files = self.tasks[tid].tgid;
            let Some(file) = self.tasks[files]
                .fds
                .get_mut(fd as usize)
                .and_then(|slot| slot.take())
            else {
                return Ok(OpResult::Err(Errno::EBADF));
            };
            let ino = file.ino;
            // __fput → file_free: the `struct file` goes back to its slab.
            if let Some((memcg, node)) = file.filp {
                self.vfs_obj_free(crate::mm::slab::KmemCache::Filp, memcg, node);
            }
            // filp_close → ->flush: a pending writeback error (AS_EIO) is returned here.
            let wb_err = self.filemap_check_errors(ino);
            let inode = self.inode_mut(ino);
            inode.open -= 1;
            if inode.open > 0 || inode.nlink > 0 {
                self.vfs_dput(ino);
                return Ok(if wb_err {
                    OpResult::Err(Errno::EIO)
                } else {
                    OpResult::None
                });
            }
            *progress = 1 + u64::from(ino);
        }
        let ino = (*progress - 1) as u32;
        let mut p = 0;
        self.evict_inode(ino, &mut p)?;
        Ok(OpResult::None)
    }

    /// write(2) at the file position, or pwrite(2) at `at`. A write ending beyond
    /// MAX_LFS_FILESIZE fails with EFBIG (generic_write_check_limits).
    pub fn sys_write(
        &mut self,
        tid: TaskId,
        fd: u32,
        len: u64,
        at: Option<u64>,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        let Some(f) = self.fd_file(tid, fd) else {
            return Ok(OpResult::Err(Errno::EBADF));
        };
        let prev = self.enter(KFunc::VfsWrite);
        // ENOSPC: blocks this write would add beyond the device's capacity.
        let fs = self.inode(f.ino).fs;
        let base = at.unwrap_or(f.pos);
        let Some(end) = base.checked_add(len).filter(|&e| e <= MAX_LFS_FILESIZE) else {
            // Beyond s_maxbytes (generic_write_check_limits).
            self.leave(prev);
            return Ok(OpResult::Err(Errno::EFBIG));
        };
        if let Some(dev) = self.fss[fs].device {
            let end_page = end.div_ceil(PAGE_SIZE);
            let have = self.inode(f.ino).size.div_ceil(PAGE_SIZE);
            let add = end_page.saturating_sub(have);
            if *progress == 0 && self.fss[fs].used_blocks + add > self.devices[dev].capacity_pages {
                self.leave(prev);
                return Ok(OpResult::Err(Errno::ENOSPC));
            }
        }
        if *progress == 0 {
            // file_modified: the modification time, before the copy.
            self.file_update_time(f.ino);
        }
        let pos = base + *progress;
        let old_pages = self.inode(f.ino).size.div_ceil(PAGE_SIZE);
        let (done, wait, err) = self.generic_perform_write(f.ino, pos, len - *progress);
        let new_pages = self.inode(f.ino).size.div_ceil(PAGE_SIZE);
        self.fss[fs].used_blocks += new_pages - old_pages;
        *progress += done;
        self.tasks[tid].stats.write_bytes += done;
        self.leave(prev);
        if let Some(e) = err {
            if at.is_none() {
                self.advance_pos(tid, fd, *progress);
            }
            return Ok(if *progress > 0 {
                OpResult::Bytes(*progress)
            } else {
                OpResult::Err(e)
            });
        }
        if let Some(w) = wait {
            return Err(w);
        }
        if at.is_none() {
            self.advance_pos(tid, fd, *progress);
        }
        Ok(OpResult::Bytes(*progress))
    }

    /// preadv2 / pwritev2 with RWF_* `flags` (kiocb_set_rw_flags, then read(2)'s or
    /// write(2)'s path; `pos` None is the file position). RWF_DONTCACHE needs v6.14
    /// (`rwf-dontcache`) and a filesystem that supports it (FOP_DONTCACHE: not tmpfs), else
    /// EOPNOTSUPP. With it the pages the IO brings into the page cache are marked
    /// PG_dropbehind (`Sim::io_dropbehind`): a read drops them once copied, and a write
    /// starts the writeback of what it wrote (generic_write_sync's
    /// filemap_fdatawrite_range_kick) and its end drops them (`mm/filemap.rs`).
    #[allow(clippy::too_many_arguments)]
    pub fn sys_rw_flags(
        &mut self,
        tid: TaskId,
        fd: u32,
        len: u64,
        pos: Option<u64>,
        flags: crate::workload::Rwf,
        write: bool,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        let Some(f) = self.fd_file(tid, fd) else {
            return Ok(OpResult::Err(Errno::EBADF));
        };
        if flags.dontcache && (!self.features.rwf_dontcache || self.inode(f.ino).mapping.swapbacked)
        {
            return Ok(OpResult::Err(Errno::EOPNOTSUPP));
        }
        // The file position does not move before the call completes: the base of a
        // resumed call is the same.
        let base = pos.unwrap_or(f.pos);
        let saved = std::mem::replace(&mut self.io_dropbehind, flags.dontcache.then_some(tid));
        let r = if write {
            self.sys_write(tid, fd, len, pos, progress)
        } else {
            self.sys_read(tid, fd, len, pos, progress)
        };
        self.io_dropbehind = saved;
        if let (true, true, Ok(OpResult::Bytes(n))) = (write, flags.dontcache, &r) {
            if *n > 0 {
                self.filemap_fdatawrite_range(f.ino, base / PAGE_SIZE, (base + n - 1) / PAGE_SIZE);
            }
        }
        r
    }

    fn advance_pos(&mut self, tid: TaskId, fd: u32, by: u64) {
        let files = self.tasks[tid].tgid;
        if let Some(Some(f)) = self.tasks[files].fds.get_mut(fd as usize) {
            f.pos += by;
        }
    }

    /// read(2) at the file position, or pread(2) at `at`.
    pub fn sys_read(
        &mut self,
        tid: TaskId,
        fd: u32,
        len: u64,
        at: Option<u64>,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        // The open file's inode, position and readahead state (not the whole file).
        let files = self.tasks[tid].tgid;
        let Some(Some(f)) = self.tasks[files].fds.get(fd as usize) else {
            return Ok(OpResult::Err(Errno::EBADF));
        };
        let (ino, fpos, mut ra) = (f.ino, f.pos, f.ra);
        let prev = self.enter(KFunc::VfsRead);
        let pos = at.unwrap_or(fpos) + *progress;
        let out = self.do_generic_file_read(ino, &mut ra, pos, len - *progress, *progress > 0);
        *progress += out.done;
        self.tasks[tid].stats.read_bytes += out.done;
        // Keep the readahead state.
        if let Some(Some(slot)) = self.tasks[files].fds.get_mut(fd as usize) {
            slot.ra = ra;
        }
        self.leave(prev);
        if let Some(w) = out.wait.filter(|_| out.err.is_none()) {
            return Err(w);
        }
        // filemap_read's end: file_accessed.
        self.touch_atime(ino);
        if let Some(e) = out.err {
            if at.is_none() {
                self.advance_pos(tid, fd, *progress);
            }
            return Ok(if *progress > 0 {
                OpResult::Bytes(*progress)
            } else {
                OpResult::Err(e)
            });
        }
        if at.is_none() {
            self.advance_pos(tid, fd, *progress);
        }
        Ok(OpResult::Bytes(*progress))
    }

    /// fdatasync(2).
    pub fn sys_fdatasync(
        &mut self,
        tid: TaskId,
        fd: u32,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        let Some(f) = self.fd_file(tid, fd) else {
            return Ok(OpResult::Err(Errno::EBADF));
        };
        self.filemap_write_and_wait(f.ino, progress)?;
        if self.filemap_check_errors(f.ino) {
            return Ok(OpResult::Err(Errno::EIO)); // a writeback error since the last check
        }
        Ok(OpResult::None)
    }

    /// unlink(2): remove the name; with no links and no opener the inode is evicted
    /// (truncate_inode_pages_final, then the inode is freed). Progress: 0 = name not yet
    /// removed; otherwise 1 + the inode being evicted.
    pub fn sys_unlink(&mut self, path: &str, progress: &mut u64) -> Result<OpResult, Wait> {
        let prev = self.enter(KFunc::DoUnlinkat);
        if *progress == 0 {
            let Some(fs) = self.resolve_fs(path) else {
                self.leave(prev);
                return Ok(OpResult::Err(Errno::ENOENT));
            };
            self.charge(self.costs.dir_op_ps);
            self.path_cache.invalidate();
            let Some(ino) = self.fss[fs].names.remove(path) else {
                self.leave(prev);
                if self.fss[fs].dirs.contains_key(path) {
                    return Ok(OpResult::Err(Errno::EISDIR));
                }
                return Ok(OpResult::Err(Errno::ENOENT));
            };
            self.namei_unlink(fs, path);
            let inode = self.inode_mut(ino);
            inode.nlink -= 1;
            if inode.nlink > 0 || inode.open > 0 {
                self.leave(prev);
                return Ok(OpResult::None);
            }
            *progress = 1 + u64::from(ino);
        }
        let ino = (*progress - 1) as u32;
        let r = self.evict_inode(ino, progress);
        self.leave(prev);
        r.map(|_| OpResult::None)
    }

    /// evict: truncate every page and shadow, take the inode off the dirty list, free it.
    pub fn evict_inode(&mut self, ino: u32, _progress: &mut u64) -> Result<(), Wait> {
        let prev = self.enter(KFunc::Evict);
        if let Err(w) = self.truncate_inode_pages_range(ino, 0, u64::MAX) {
            self.leave(prev);
            return Err(w);
        }
        // truncate_inode_pages_final takes and drops tree_lock once (AS_EXITING).
        self.tree_lock(ino);
        self.tree_unlock(ino);
        self.charge(self.costs.inode_op_ps);
        if self.inode(ino).dirtied_when().is_some() {
            self.clear_inode_dirty(ino);
        }
        let fs = self.inode(ino).fs;
        let sized = self.inode(ino).size.div_ceil(PAGE_SIZE);
        self.fss[fs].used_blocks = self.fss[fs].used_blocks.saturating_sub(sized);
        let t = &self.inode(ino).mapping.tree;
        assert!(
            t.nr_pages() == 0 && t.nr_shadows() == 0,
            "evicting inode {} with cached entries",
            ino
        );
        self.vfs_free(ino);
        self.inodes[ino as usize] = None;
        self.leave(prev);
        Ok(())
    }

    /// One step of a kernel thread. Returns true if it stays runnable.
    pub fn kthread_step(&mut self, tid: TaskId, k: crate::sched::KThread) -> bool {
        self.set_mode(Mode::System);
        match k {
            crate::sched::KThread::Flusher(dev) => self.flusher_step(tid, dev),
            crate::sched::KThread::Kswapd(node) => self.kswapd_step(tid, node),
            crate::sched::KThread::ZswapShrink => self.zswap_shrink_step(tid),
            crate::sched::KThread::Jbd2(fs) => self.jbd2_step(tid, fs),
        }
    }
}
