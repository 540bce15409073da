//! Inode timestamps and ext4's journal (fs/inode.c's touch_atime and file_update_time,
//! ext4_dirty_inode, fs/jbd2) as far as they move memory: an inode whose timestamp changes
//! is dirty until the flusher writes it, and its inode-table block is dirty in the block
//! device's page cache until written back (with a journal: held by it, logged, then
//! dirty).
//!
//! - **touch_atime** (file_accessed: the end of a read, mmap): per the filesystem's `atime`
//!   mount option — `relatime` (the default since 2.6.30) updates the access time when
//!   it is not newer than the modification or change time, or is a day old
//!   (relatime_need_update); `strictatime` whenever the coarse clock moved; `noatime`
//!   never. A file that exists
//!   when the run begins was just written (its access time is its modification time), so
//!   its first read updates it, as on files a benchmark lays out before it reads them.
//! - **file_update_time** (a write): the modification and change times, when the coarse
//!   clock (one jiffy) moved since the last update (inode_needs_update_time).
//! - Either marks the inode dirty (I_DIRTY_SYNC: on its device's b_dirty list, off its
//!   inode list until written — `fs/writeback.rs`, whose flusher makes it clean: ext4's
//!   ->write_inode writes nothing for WB_SYNC_NONE, the inode went into its table block
//!   already) and calls **ext4_dirty_inode**: the inode's table block, found as
//!   __find_get_block finds it (marked accessed; a block not cached is left alone: see
//!   `ext4_dirty_inode`), is updated. Without a journal (the default)
//!   ext4_handle_dirty_metadata marks it dirty at once; with one (`journal = true`) it
//!   joins the running transaction (jbd2_journal_get_write_access + handle_dirty_metadata),
//!   and from then the journal holds the block's buffer (a journal_head:
//!   try_to_free_buffers fails, so reclaim activates the page and invalidation skips it).
//! - **kjournald2** commits the running transaction `JBD2_COMMIT_INTERVAL` (5 s, ext4's
//!   `commit=`) after it began (the transaction timer), one commit at a time: the blocks,
//!   a descriptor block per `JBD2_TAGS_PER_BLOCK` of them and a commit block are written
//!   to the journal (a log on the filesystem's device, written sequentially); when the
//!   write completes each block is marked dirty — its buffer exposed to the VM
//!   (__jbd2_journal_temp_unlink_buffer → mark_buffer_dirty) — and goes onto the
//!   checkpoint list, still held. The flusher writes it back like any dirty page (old
//!   enough, or reclaim's kick); the next commit drops the blocks written back and clean
//!   from the checkpoint list (__jbd2_journal_clean_checkpoint_list), releasing them.
//!
//! Not modelled: the journal's own descriptor buffers in the page cache, frozen copies of
//! a block modified while it is committed, journal space (the log wraps; checkpointing to
//! make room never waits), the checkpoint shrinker (jbd2_journal_shrink_scan, 5.16),
//! flush/FUA requests, timestamps of directories, and file_update_time from a write fault
//! (page_mkwrite).

use crate::fs::{Atime, BlockDevice, IoKind, IoRequest};
use crate::machine::profile::KFunc;
use crate::machine::{Event, Ps};
use crate::mm::memcontrol::JIFFY_PS;
use crate::mm::page::{pg, Pfn};
use crate::mm::radix_tree::Entry;
use crate::mm::slab::INODES_PER_BLOCK;
use crate::sched::TaskId;
use crate::sim::Sim;

/// ext4's default commit interval (`commit=5`, JBD2_DEFAULT_MAX_COMMIT_AGE).
pub const JBD2_COMMIT_INTERVAL: Ps = 5_000_000_000_000;
/// Block tags a 4 KiB descriptor block holds (16-byte tags after a 12-byte header).
pub const JBD2_TAGS_PER_BLOCK: u64 = (4096 - 12) / 16;
/// Blocks of the journal (ext4's default for a filesystem above 128 GiB: 128 MiB); the
/// log wraps around it.
pub const JBD2_JOURNAL_BLOCKS: u64 = 32_768;
/// The device region of the journal (`BlockDevice::sector_of` of this pseudo inode).
const JOURNAL_SECTOR_INO: u32 = u32::MAX - 1;
/// A day: relatime updates an access time at least this old.
const RELATIME_MAX_AGE: Ps = 86_400 * 1_000_000_000_000;

/// One filesystem's journal (journal_t).
#[derive(Clone, Debug, Default)]
pub struct Journal {
    /// The kjournald2 kthread.
    pub task: Option<TaskId>,
    /// Blocks of the hidden metadata file in the running transaction (t_buffers).
    pub running: Vec<u64>,
    /// When the running transaction began (its commit timer is this plus the interval).
    pub t_start: Option<Ps>,
    /// Blocks of the committing transaction, being written to the log.
    pub committing: Vec<u64>,
    /// Blocks on the checkpoint list: logged, held until written back and clean.
    pub checkpoint: Vec<u64>,
    /// Next block of the log.
    pub head: u64,
    /// Transactions committed.
    pub commits: u64,
    /// Blocks written to the log (metadata, descriptor and commit blocks).
    pub blocks_logged: u64,
}

impl Journal {
    /// The running transaction's commit timer expired at `now`.
    fn commit_due(&self, now: Ps) -> bool {
        self.t_start
            .is_some_and(|t| now >= t + JBD2_COMMIT_INTERVAL)
    }
}

/// Every journal list a page's buffer can be on.
pub const JBD_HELD: u32 = pg::JBD_RUNNING | pg::JBD_COMMIT | pg::JBD_CHECKPOINT;

/// The coarse clock (current_time: the time of the last tick), one tick on so that 0
/// stays before the run (the times of the files that exist when it begins).
fn coarse(t: Ps) -> Ps {
    t / JIFFY_PS * JIFFY_PS + JIFFY_PS
}

impl Sim {
    /// The journal of filesystem `fs` (one with `journal = true`).
    fn journal_mut(&mut self, fs: usize) -> &mut Journal {
        self.fss[fs]
            .journal
            .as_mut()
            .expect("a journalled filesystem")
    }

    /// touch_atime after a read of `ino` or an mmap of it (file_accessed).
    #[inline(always)]
    pub fn touch_atime(&mut self, ino: u32) {
        let fs = self.inode(ino).fs;
        if self.fss[fs].inode_table.is_none() {
            return; // tmpfs: the time changes in memory only
        }
        let now = coarse(self.now());
        let i = self.inode(ino);
        let update = match self.fss[fs].atime {
            Atime::Noatime => false,
            Atime::Strictatime => i.atime_ps != now,
            Atime::Relatime => {
                (i.mtime_ps >= i.atime_ps || now >= i.atime_ps + RELATIME_MAX_AGE)
                    && i.atime_ps != now
            }
        };
        if update {
            self.inode_mut(ino).atime_ps = now;
            self.ext4_dirty_inode(ino);
        }
    }

    /// file_update_time for a write to `ino`: mtime and ctime, once per tick.
    pub fn file_update_time(&mut self, ino: u32) {
        let fs = self.inode(ino).fs;
        if self.fss[fs].inode_table.is_none() {
            return;
        }
        let now = coarse(self.now());
        if self.inode(ino).mtime_ps == now {
            return;
        }
        self.inode_mut(ino).mtime_ps = now;
        self.ext4_dirty_inode(ino);
    }

    /// __mark_inode_dirty(I_DIRTY_SYNC) → ext4_dirty_inode: the inode is dirty, its
    /// table block joins the running transaction (see the module comment).
    fn ext4_dirty_inode(&mut self, ino: u32) {
        let prev = self.enter(KFunc::Ext4DirtyInode);
        self.mark_inode_dirty_sync(ino);
        let fs = self.inode(ino).fs;
        let Some(table) = self.fss[fs].inode_table else {
            self.leave(prev);
            return;
        };
        let block = u64::from(ino) / INODES_PER_BLOCK;
        // ext4_reserve_inode_write → ext4_get_inode_loc: the block, found as
        // __find_get_block finds it. A block not cached is left alone: its inode was
        // created during the run (whose own table-block write — in memory, no read — is
        // not modelled), or it was reclaimed since the open read it (the kernel reads it
        // again; rare: the open has just marked it accessed).
        let pfn = match self.find_get_entry(table, block) {
            Entry::Page(p) => {
                let uptodate = self.mem[p as usize].test(pg::UPTODATE);
                if uptodate {
                    self.mark_page_accessed(p);
                    self.bh_lru_install(p);
                }
                self.put_page(p);
                uptodate.then_some(p)
            }
            _ => None,
        };
        match pfn {
            Some(p) if self.fss[fs].journal.is_some() => {
                self.jbd2_journal_dirty_metadata(fs, block, p);
            }
            // ext4_handle_dirty_metadata without a journal: mark_buffer_dirty at once.
            Some(p) => self.set_page_dirty(p),
            None => {}
        }
        self.leave(prev);
    }

    /// jbd2_journal_get_write_access + jbd2_journal_dirty_metadata: `block` (page `pfn`
    /// of the metadata file) into the running transaction, which starts its commit timer
    /// when it is new.
    fn jbd2_journal_dirty_metadata(&mut self, fs: usize, block: u64, pfn: Pfn) {
        if self.mem[pfn as usize].test(pg::JBD_RUNNING) {
            return;
        }
        self.mem[pfn as usize].flags |= pg::JBD_RUNNING;
        let now = self.now();
        let j = self.journal_mut(fs);
        j.running.push(block);
        if j.t_start.is_none() {
            j.t_start = Some(now);
            if let Some(t) = j.task {
                self.events
                    .push(now + JBD2_COMMIT_INTERVAL, Event::Wake(t as u32));
            }
        }
    }

    /// One step of kjournald2 for filesystem `fs`: commit the running transaction when
    /// its timer expired and no commit is in flight, then sleep.
    pub fn jbd2_step(&mut self, tid: TaskId, fs: usize) -> bool {
        let now = self.now();
        let j = self.journal_mut(fs);
        if j.commit_due(now) && j.committing.is_empty() {
            self.jbd2_journal_commit_transaction(fs);
        }
        self.set_sleeping(tid);
        false
    }

    /// jbd2_journal_commit_transaction: the checkpoint list's clean blocks released, the
    /// running transaction's blocks written to the log.
    fn jbd2_journal_commit_transaction(&mut self, fs: usize) {
        let prev = self.enter(KFunc::Jbd2Commit);
        let table = self.fss[fs].inode_table.expect("a journalled filesystem");
        let j = self.journal_mut(fs);
        let mut checkpoint = std::mem::take(&mut j.checkpoint);
        let running = std::mem::take(&mut j.running);
        j.t_start = None;
        // __jbd2_journal_clean_checkpoint_list: a block written back and clean leaves.
        checkpoint.retain(|&b| match self.inode(table).mapping.tree.lookup(b) {
            Entry::Page(p) => {
                let m = &mut self.mem[p as usize];
                if m.flags & (pg::DIRTY | pg::WRITEBACK) != 0 {
                    return true;
                }
                m.flags &= !pg::JBD_CHECKPOINT;
                false
            }
            _ => false,
        });
        for &b in &running {
            if let Entry::Page(p) = self.inode(table).mapping.tree.lookup(b) {
                let m = &mut self.mem[p as usize];
                m.flags = (m.flags & !pg::JBD_RUNNING) | pg::JBD_COMMIT;
            }
        }
        let n = running.len() as u64;
        let nblocks = n + n.div_ceil(JBD2_TAGS_PER_BLOCK) + 1;
        let j = self.journal_mut(fs);
        j.checkpoint = checkpoint;
        j.committing = running;
        j.commits += 1;
        j.blocks_logged += nblocks;
        let head = j.head;
        j.head = (head + nblocks) % JBD2_JOURNAL_BLOCKS;
        let dev = self.fss[fs].device.expect("a journal's device");
        self.vmstat.add(
            crate::mm::vmstat::VmItem::Pgpgout,
            (nblocks * crate::mm::page::PAGE_SIZE / 1024) as i64,
        );
        let req = IoRequest {
            dev,
            kind: IoKind::Journal(nblocks as u32),
            ino: table,
            pages: self.take_pfn_buf(),
            cpu: self.cur.cpu,
        };
        self.submit_bio(req, BlockDevice::sector_of(JOURNAL_SECTOR_INO, head));
        self.leave(prev);
    }

    /// The log write of the committing transaction of the filesystem whose metadata file
    /// is `table` completed: each block marked dirty and onto the checkpoint list; a
    /// transaction whose timer expired meanwhile is committed next.
    pub fn jbd2_commit_done(&mut self, table: u32) {
        let fs = self.inode(table).fs;
        let j = self.journal_mut(fs);
        let committing = std::mem::take(&mut j.committing);
        for &b in &committing {
            let Entry::Page(p) = self.inode(table).mapping.tree.lookup(b) else {
                continue;
            };
            let was_checkpointed = self.mem[p as usize].test(pg::JBD_CHECKPOINT);
            let m = &mut self.mem[p as usize];
            m.flags = (m.flags & !pg::JBD_COMMIT) | pg::JBD_CHECKPOINT;
            if self.mem[p as usize].test(pg::UPTODATE) {
                self.set_page_dirty(p);
            }
            if !was_checkpointed {
                let j = self.journal_mut(fs);
                j.checkpoint.push(b);
            }
        }
        let now = self.now();
        let j = self.journal_mut(fs);
        if let (true, Some(t)) = (j.commit_due(now), j.task) {
            self.wake_up(t, now);
        }
    }
}

/// The journals' invariants: each list's blocks are cached pages of the filesystem's
/// metadata file carrying the list's bit, once each; a page with a bit is on that list;
/// a committing transaction exists only with its log write in flight.
pub fn check_journals(sim: &Sim) -> Result<(), String> {
    let mut held = 0usize;
    for (fs, f) in sim.fss.iter().enumerate() {
        let Some(j) = &f.journal else {
            continue;
        };
        let table = f
            .inode_table
            .ok_or(format!("fs {fs}: a journal without a metadata file"))?;
        for (list, bit, name) in [
            (&j.running, pg::JBD_RUNNING, "running"),
            (&j.committing, pg::JBD_COMMIT, "committing"),
            (&j.checkpoint, pg::JBD_CHECKPOINT, "checkpoint"),
        ] {
            let mut seen = std::collections::BTreeSet::new();
            for &b in list {
                if !seen.insert(b) {
                    return Err(format!("fs {fs}: block {b} twice on the {name} list"));
                }
                let Entry::Page(p) = sim.inode(table).mapping.tree.lookup(b) else {
                    return Err(format!("fs {fs}: {name} block {b} is not cached"));
                };
                if sim.mem[p as usize].flags & bit == 0 {
                    return Err(format!("fs {fs}: {name} block {b} (pfn {p}) lacks its bit"));
                }
            }
            held += list.len();
            if name == "running" && list.is_empty() != j.t_start.is_none() {
                return Err(format!(
                    "fs {fs}: running transaction and its start disagree"
                ));
            }
        }
    }
    // The bits on the metadata files' pages (where ext4_dirty_inode sets them).
    let mut marked = 0usize;
    let mut out = Vec::new();
    for f in sim.fss.iter().filter(|f| f.journal.is_some()) {
        let Some(table) = f.inode_table else { continue };
        let tree = &sim.inode(table).mapping.tree;
        let mut index = 0;
        while tree.gang_lookup(index, 64, &mut out) > 0 {
            for &(i, e) in &out {
                index = i + 1;
                if let Entry::Page(p) = e {
                    marked += (sim.mem[p as usize].flags & JBD_HELD).count_ones() as usize;
                }
            }
            out.clear();
        }
    }
    if marked != held {
        return Err(format!(
            "{marked} journal bits on pages, {held} blocks on the journals' lists"
        ));
    }
    Ok(())
}
