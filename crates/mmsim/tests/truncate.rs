//! Truncate and the file lifecycle (issue 5, seed 003): truncate_inode_pages_range at every
//! boundary with and without shadow entries, dirty and under-writeback pages, the vanilla
//! and batched shadow clearing (tree_lock counts), ftruncate shrink/grow and the content
//! oracle, directories, bad input, and a property test against a model of file contents.

use mmsim::machine::Event;
use mmsim::mm::check::check_all;
use mmsim::mm::page::{Pfn, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::workingset::pack_shadow;
use mmsim::report::stats::{best_n_amean, percentile, Direction};
use mmsim::run::{run_scenario, RunOptions, RunReport};
use mmsim::scenario::{load_scenario, parse_scenario};
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::{Features, RunEnd, Sim};
use mmsim::workload::{Errno, OpResult};
use proptest::prelude::*;

const P: u64 = PAGE_SIZE;

// ---------------------------------------------------------------------------------------
// A tiny machine driven by direct calls
// ---------------------------------------------------------------------------------------

fn scenario_text(mem: &str) -> String {
    format!(
        r#"name = "truncate-unit"

[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "{mem}"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "sda"

[[tasks]]
name = "t"
cpu = 0
program = "sparsetruncate"
path = "/mnt/st"
size = "tiny"
"#
    )
}

struct M {
    sim: Sim,
    tid: TaskId,
}

fn machine_mem(features: Features, mem: &str) -> M {
    let sc = parse_scenario(&scenario_text(mem), "test", &[]).expect("scenario parses");
    let mut sim = Sim::new(&sc, features).expect("machine builds");
    let tid = sim.tasks.iter().position(|t| t.name == "t").unwrap();
    sim.cur.cpu = 0;
    sim.cur.task = Some(tid);
    M { sim, tid }
}

fn machine(features: Features) -> M {
    machine_mem(features, "16MiB")
}

fn both() -> [Features; 2] {
    let mut b = Features::vanilla();
    b.truncate_batch_shadow = true;
    [Features::vanilla(), b]
}

impl M {
    /// Complete every pending IO (events other than IO completions are dropped: the engine
    /// does not run in these tests).
    fn complete_io(&mut self) {
        while let Some((t, ev)) = self.sim.events.pop() {
            if let Event::IoComplete(id) = ev {
                self.sim.io_complete(id, t);
            }
        }
        self.sim.cur.cpu = 0;
        self.sim.cur.task = Some(self.tid);
    }

    /// Write back every dirty page of `ino` and wait for it.
    fn sync(&mut self, ino: u32) {
        let mut phase = 0;
        for _ in 0..100 {
            match self.sim.filemap_write_and_wait(ino, &mut phase) {
                Ok(()) => return,
                Err(_) => self.complete_io(),
            }
        }
        panic!("sync of inode {ino} did not finish");
    }

    /// Run a restartable syscall to completion: on a wait, complete IO (and write dirty
    /// pages back when nothing is in flight) and retry.
    fn finish(
        &mut self,
        mut f: impl FnMut(&mut Sim, TaskId, &mut u64) -> Result<OpResult, Wait>,
    ) -> OpResult {
        let mut progress = 0;
        for _ in 0..1000 {
            match f(&mut self.sim, self.tid, &mut progress) {
                Ok(r) => return r,
                Err(_) => {
                    if self.sim.events.is_empty() {
                        let inos: Vec<u32> =
                            self.sim.inodes.iter().flatten().map(|i| i.ino).collect();
                        for ino in inos {
                            let mut ph = 0;
                            let _ = self.sim.filemap_write_and_wait(ino, &mut ph);
                        }
                    }
                    self.complete_io();
                }
            }
        }
        panic!("syscall never finished");
    }

    fn open(&mut self, path: &str) -> (u32, u32) {
        let p = path.to_string();
        match self.finish(|s, t, pr| s.sys_open(t, &p, true, false, pr)) {
            OpResult::Fd(fd) => {
                let ino = self.sim.tasks[self.tid].fds[fd as usize].unwrap().ino;
                (fd, ino)
            }
            other => panic!("open {path}: {other:?}"),
        }
    }

    fn pwrite(&mut self, fd: u32, pos: u64, len: u64) {
        self.sim.tasks[self.tid].fds[fd as usize]
            .as_mut()
            .unwrap()
            .pos = pos;
        let r = self.finish(|s, t, pr| s.sys_write(t, fd, len, pr));
        assert_eq!(
            r,
            OpResult::Bytes(len),
            "pwrite fd {fd} pos {pos} len {len}"
        );
    }

    fn pread(&mut self, fd: u32, pos: u64, len: u64) -> u64 {
        match self.finish(|s, t, pr| s.sys_read(t, fd, len, Some(pos), pr)) {
            OpResult::Bytes(n) => n,
            other => panic!("pread fd {fd} pos {pos} len {len}: {other:?}"),
        }
    }

    fn ftruncate(&mut self, fd: u32, size: u64) -> OpResult {
        self.finish(|s, t, pr| s.sys_ftruncate(t, fd, size, pr))
    }

    fn unlink(&mut self, path: &str) -> OpResult {
        let p = path.to_string();
        self.finish(|s, _, pr| s.sys_unlink(&p, pr))
    }

    fn close(&mut self, fd: u32) -> OpResult {
        self.finish(|s, t, pr| s.sys_close_resume(t, fd, pr))
    }

    fn check(&self) {
        if let Err(e) = check_all(&self.sim) {
            panic!("checker: {e}");
        }
    }

    fn entry(&self, ino: u32, index: u64) -> Entry {
        self.sim.inode(ino).mapping.tree.lookup(index)
    }

    fn nrpages(&self, ino: u32) -> u64 {
        self.sim.inode(ino).mapping.tree.nr_pages()
    }

    fn nrexceptional(&self, ino: u32) -> u64 {
        self.sim.inode(ino).mapping.tree.nr_shadows()
    }

    fn page(&self, ino: u32, index: u64) -> Pfn {
        match self.entry(ino, index) {
            Entry::Page(p) => p,
            e => panic!("inode {ino} index {index}: {e:?}"),
        }
    }

    /// A file of `pages` written pages, written back (clean), on blockfs.
    fn clean_file(&mut self, path: &str, pages: u64) -> (u32, u32) {
        let (fd, ino) = self.open(path);
        self.pwrite(fd, 0, pages * P);
        self.sync(ino);
        (fd, ino)
    }

    /// Store shadow entries at `indices` (slots without pages).
    fn shadows(&mut self, ino: u32, indices: impl IntoIterator<Item = u64>) {
        for i in indices {
            let t = &mut self.sim.inode_mut(ino).mapping.tree;
            assert_eq!(t.lookup(i), Entry::Empty, "slot {i} must be free");
            t.store(i, Entry::Shadow(pack_shadow(i + 1, 0)));
        }
    }

    /// Entries of the tree (index, is a page).
    fn entries(&self, ino: u32) -> Vec<(u64, bool)> {
        let mut out = Vec::new();
        self.sim
            .inode(ino)
            .mapping
            .tree
            .gang_lookup(0, usize::MAX, &mut out);
        out.into_iter()
            .map(|(i, e)| (i, matches!(e, Entry::Page(_))))
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// 1. truncate_inode_pages_range at every boundary
// ---------------------------------------------------------------------------------------

/// Byte ranges [lstart, lend] on a 16-page file with pages at even indices and shadows at
/// odd ones: every whole page of the range goes, shadows in [start, end) go, partial pages
/// stay (zeroed in part), everything else stays.
#[test]
fn truncate_range_at_every_boundary_with_and_without_shadows() {
    let n = 16u64;
    let ranges: &[(u64, u64)] = &[
        (0, u64::MAX),            // to zero
        (0, 3 * P - 1),           // from the start, ending exactly on a page boundary
        (P, 3 * P - 1),           // exactly on page boundaries
        (100, 3 * P + 50),        // both ends inside pages
        (P + 10, P + 20),         // inside one page
        (5 * P + 1, u64::MAX),    // inside a page to the end
        (8 * P, u64::MAX),        // exactly on a boundary to the end
        ((n - 1) * P, n * P - 1), // the last page
        (n * P, u64::MAX),        // at EOF
        (40 * P + 7, u64::MAX),   // beyond EOF
    ];
    for features in both() {
        for with_shadows in [false, true] {
            for &(lstart, lend) in ranges {
                let mut m = machine(features.clone());
                let (fd, ino) = m.clean_file("/mnt/f", n);
                if with_shadows {
                    // Odd pages reclaimed: drop them, leave shadows.
                    for i in (1..n).step_by(2) {
                        let pfn = m.page(ino, i);
                        m.sim.get_page(pfn);
                        assert!(m.sim.trylock_page(pfn));
                        m.sim.tree_lock(ino);
                        m.sim.__delete_from_page_cache(pfn, Some(pack_shadow(i, 0)));
                        m.sim.tree_unlock(ino);
                        m.sim.unlock_page(pfn);
                        m.sim.put_page(pfn); // the cache's reference
                        m.sim.put_page(pfn); // ours
                    }
                }
                let before = m.entries(ino);
                let start = lstart.div_ceil(P);
                let end = if lend == u64::MAX {
                    u64::MAX
                } else {
                    (lend + 1) / P
                };
                let partial: Vec<u64> = [
                    (lstart % P != 0).then_some(lstart / P),
                    (lend != u64::MAX && (lend + 1) % P != 0).then_some((lend + 1) / P),
                ]
                .into_iter()
                .flatten()
                .collect();
                let versions: Vec<u32> = (0..n).map(|i| m.sim.inode(ino).expected_at(i)).collect();
                m.sim
                    .truncate_inode_pages_range(ino, lstart, lend)
                    .expect("nothing busy: no sleep");
                let after = m.entries(ino);
                let want: Vec<(u64, bool)> = before
                    .iter()
                    .copied()
                    .filter(|&(i, _)| i < start || i >= end)
                    .collect();
                assert_eq!(
                    after, want,
                    "{features:?} shadows {with_shadows} range [{lstart}, {lend}]"
                );
                assert_eq!(m.nrpages(ino), want.iter().filter(|e| e.1).count() as u64);
                assert_eq!(
                    m.nrexceptional(ino),
                    want.iter().filter(|e| !e.1).count() as u64
                );
                // Partial pages that are cached got a new content version, dirty.
                for &i in &partial {
                    if i < n && matches!(m.entry(ino, i), Entry::Page(_)) {
                        let pfn = m.page(ino, i);
                        assert_ne!(m.sim.inode(ino).expected_at(i), versions[i as usize]);
                        assert_eq!(
                            m.sim.mem[pfn as usize].version,
                            m.sim.inode(ino).expected_at(i)
                        );
                        assert!(m.sim.PageDirty(pfn));
                    }
                }
                m.check();
                // Cached pages still read their newest version.
                m.pread(fd, 0, n * P);
                assert!(
                    m.sim.oracle_violations.is_empty(),
                    "{:?}",
                    m.sim.oracle_violations
                );
                m.check();
            }
        }
    }
}

/// ftruncate to every interesting size: content and i_size follow, holes read as zeros,
/// nothing is cached beyond EOF.
#[test]
fn ftruncate_at_every_boundary_shrink_and_grow() {
    let n = 8u64;
    let old = n * P;
    let sizes = [
        0,
        1,
        P - 1,
        P,
        P + 1,
        3 * P,
        3 * P + 100,
        old - 1,
        old,
        old + 1,
        2 * old,
        2 * old + 5,
    ];
    for features in both() {
        for fsroot in ["/mnt", "/tmp"] {
            for &size in &sizes {
                let mut m = machine(features.clone());
                let path = format!("{fsroot}/f");
                let (fd, ino) = m.open(&path);
                m.pwrite(fd, 0, old);
                if fsroot == "/mnt" {
                    m.sync(ino);
                }
                assert_eq!(m.ftruncate(fd, size), OpResult::None);
                assert_eq!(m.sim.inode(ino).size, size);
                let pages = size.div_ceil(P);
                for (i, _) in m.entries(ino) {
                    assert!(i < pages, "entry {i} beyond EOF {size}");
                }
                m.check();
                // Reads stop at the new EOF and see the newest content.
                let got = m.pread(fd, 0, 4 * old);
                assert_eq!(got, size);
                assert!(
                    m.sim.oracle_violations.is_empty(),
                    "{:?}",
                    m.sim.oracle_violations
                );
                // Grown ranges are holes: version 0.
                for i in n..pages {
                    assert_eq!(m.sim.inode(ino).expected_at(i), 0);
                    if let Entry::Page(pfn) = m.entry(ino, i) {
                        assert_eq!(m.sim.mem[pfn as usize].version, 0, "hole page {i}");
                    }
                }
                // Grow back: the tail beyond the truncation reads as zeros.
                assert_eq!(m.ftruncate(fd, old), OpResult::None);
                m.pread(fd, 0, old);
                for i in pages..n {
                    assert_eq!(m.sim.inode(ino).expected_at(i), 0, "size {size} page {i}");
                }
                assert!(
                    m.sim.oracle_violations.is_empty(),
                    "{:?}",
                    m.sim.oracle_violations
                );
                m.check();
                // The truncated content survives reclaim (it was written back or dirtied).
                if fsroot == "/mnt" {
                    m.sync(ino);
                    for _ in 0..4 {
                        m.sim.try_to_free_pages(Gfp::KERNEL);
                    }
                    m.complete_io();
                    m.pread(fd, 0, old);
                    assert!(
                        m.sim.oracle_violations.is_empty(),
                        "{:?}",
                        m.sim.oracle_violations
                    );
                }
                m.check();
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// 2. Shadow entries: vanilla vs batched, left alone at or beyond the end
// ---------------------------------------------------------------------------------------

#[test]
fn shadow_entries_one_lock_each_vanilla_one_per_pagevec_batched() {
    for features in both() {
        let batched = features.truncate_batch_shadow;
        let mut m = machine(features);
        let (fd, ino) = m.open("/mnt/s");
        assert_eq!(m.ftruncate(fd, 1024 * P), OpResult::None);
        m.shadows(ino, 0..1024);
        assert_eq!(m.nrexceptional(ino), 1024);
        m.check();
        let s0 = m.sim.truncate_stats;
        assert_eq!(m.ftruncate(fd, 0), OpResult::None);
        let s = m.sim.truncate_stats;
        assert_eq!(m.nrexceptional(ino), 0);
        assert_eq!(m.nrpages(ino), 0);
        assert_eq!(s.shadows_cleared - s0.shadows_cleared, 1024);
        let locks = s.shadow_lock_acquisitions - s0.shadow_lock_acquisitions;
        if batched {
            assert_eq!(locks, 1024u64.div_ceil(14), "one per pagevec of 14");
        } else {
            assert_eq!(locks, 1024, "one per entry");
        }
        m.check();
    }
}

#[test]
fn shadows_at_or_beyond_end_are_left_alone_and_the_lock_is_not_taken() {
    for features in both() {
        let mut m = machine(features);
        let (fd, ino) = m.open("/mnt/s");
        m.pwrite(fd, 0, 6 * P); // pages 0..6
        m.sync(ino);
        assert_eq!(m.ftruncate(fd, 64 * P), OpResult::None);
        m.shadows(ino, 20..40);
        let s0 = m.sim.truncate_stats;
        // [0, 10 pages): the first pagevec holds pages 0..6 and shadows 20..28, all
        // shadows at or beyond end = 10.
        m.sim
            .truncate_inode_pages_range(ino, 0, 10 * P - 1)
            .unwrap();
        let s = m.sim.truncate_stats;
        assert_eq!(m.nrpages(ino), 0);
        assert_eq!(m.nrexceptional(ino), 20, "shadows beyond the end stay");
        assert_eq!(s.shadows_cleared, s0.shadows_cleared);
        assert_eq!(s.shadow_lock_acquisitions, s0.shadow_lock_acquisitions);
        // A range ending exactly at index 30 clears 20..30 only.
        m.sim
            .truncate_inode_pages_range(ino, 0, 30 * P - 1)
            .unwrap();
        assert_eq!(m.nrexceptional(ino), 10);
        for i in 20..40 {
            assert_eq!(
                matches!(m.entry(ino, i), Entry::Shadow(_)),
                i >= 30,
                "index {i}"
            );
        }
        m.check();
    }
}

/// Shadows made by real reclaim on a machine smaller than the file: truncation leaves
/// nrpages/nrexceptional exact and the lock counts as the feature says.
#[test]
fn shadows_from_reclaim_are_truncated() {
    for features in both() {
        let batched = features.truncate_batch_shadow;
        let mut m = machine(features);
        let (fd, ino) = m.open("/mnt/big");
        let pages = 8192u64; // 32 MiB of holes on a 16 MiB machine
        assert_eq!(m.ftruncate(fd, pages * P), OpResult::None);
        for i in 0..pages {
            assert_eq!(m.pread(fd, i * P, 16), 16);
        }
        let shadows = m.nrexceptional(ino);
        assert!(shadows > 1000, "reclaim left {shadows} shadows");
        m.check();
        let s0 = m.sim.truncate_stats;
        let half = pages / 2 * P + 123;
        assert_eq!(m.ftruncate(fd, half), OpResult::None);
        for (i, _) in m.entries(ino) {
            assert!(i <= pages / 2, "entry {i} beyond EOF");
        }
        let s = m.sim.truncate_stats;
        let cleared = s.shadows_cleared - s0.shadows_cleared;
        let locks = s.shadow_lock_acquisitions - s0.shadow_lock_acquisitions;
        assert_eq!(cleared, shadows - m.nrexceptional(ino));
        if batched {
            assert!(locks * 10 <= cleared, "{locks} locks for {cleared} shadows");
        } else {
            assert_eq!(locks, cleared);
        }
        m.check();
        assert_eq!(m.ftruncate(fd, 0), OpResult::None);
        assert_eq!((m.nrpages(ino), m.nrexceptional(ino)), (0, 0));
        m.check();
        assert_eq!(m.close(fd), OpResult::None);
        assert_eq!(m.unlink("/mnt/big"), OpResult::None);
        assert!(m.sim.inodes[ino as usize].is_none());
        m.check();
    }
}

// ---------------------------------------------------------------------------------------
// 3. Dirty, locked and under-writeback pages
// ---------------------------------------------------------------------------------------

#[test]
fn dirty_pages_are_cancelled() {
    for features in both() {
        let mut m = machine(features);
        let (fd, ino) = m.open("/mnt/d");
        m.pwrite(fd, 0, 10 * P);
        assert_eq!(m.sim.vmstat.get(mmsim::mm::vmstat::VmItem::NrDirty), 10);
        assert_eq!(m.ftruncate(fd, 4 * P), OpResult::None);
        assert_eq!(m.sim.vmstat.get(mmsim::mm::vmstat::VmItem::NrDirty), 4);
        assert_eq!(m.sim.inode(ino).nr_dirty, 4);
        assert_eq!(m.nrpages(ino), 4);
        m.check();
    }
}

#[test]
fn writeback_and_locked_pages_make_pass_two_wait() {
    for features in both() {
        let mut m = machine(features);
        let (fd, ino) = m.open("/mnt/w");
        m.pwrite(fd, 0, 6 * P);
        // Start writeback of everything, do not complete it.
        let mut phase = 0;
        let r = m.sim.filemap_write_and_wait(ino, &mut phase);
        assert!(matches!(r, Err(Wait::PageWriteback(_))));
        let p2 = m.page(ino, 2);
        assert!(m.sim.PageWriteback(p2));
        // Pass 1 skips them all; pass 2 waits on the first.
        let r = m.sim.truncate_inode_pages_range(ino, 0, u64::MAX);
        assert!(matches!(r, Err(Wait::PageWriteback(_))), "{r:?}");
        assert_eq!(m.nrpages(ino), 6, "busy pages stay");
        m.check();
        m.complete_io();
        m.sim.truncate_inode_pages_range(ino, 0, u64::MAX).unwrap();
        assert_eq!(m.nrpages(ino), 0);
        m.check();
        // A locked page: skipped by pass 1, waited for by pass 2.
        m.pwrite(fd, 0, 3 * P);
        m.sync(ino);
        let p1 = m.page(ino, 1);
        assert!(m.sim.trylock_page(p1));
        let r = m.sim.truncate_inode_pages_range(ino, 0, u64::MAX);
        assert_eq!(r, Err(Wait::PageLocked(p1)));
        assert_eq!(m.nrpages(ino), 1, "pass 1 removed the others");
        m.sim.unlock_page(p1);
        m.sim.truncate_inode_pages_range(ino, 0, u64::MAX).unwrap();
        assert_eq!(m.nrpages(ino), 0);
        m.check();
    }
}

#[test]
fn partial_page_under_writeback_is_waited_for_then_zeroed() {
    let mut m = machine(Features::vanilla());
    let (fd, ino) = m.open("/mnt/p");
    m.pwrite(fd, 0, 4 * P);
    let mut phase = 0;
    let _ = m.sim.filemap_write_and_wait(ino, &mut phase);
    let v_old = m.sim.inode(ino).expected_at(1);
    let mut progress = 0;
    let tid = m.tid;
    let r = m.sim.sys_ftruncate(tid, fd, P + 10, &mut progress);
    assert!(matches!(r, Err(Wait::PageWriteback(_))), "{r:?}");
    m.complete_io();
    assert_eq!(
        m.sim.sys_ftruncate(tid, fd, P + 10, &mut progress),
        Ok(OpResult::None)
    );
    assert_ne!(m.sim.inode(ino).expected_at(1), v_old);
    assert_eq!(
        m.sim.truncate_stats.partial_pages_zeroed, 1,
        "zeroed once, after the wait"
    );
    assert_eq!(m.nrpages(ino), 2);
    m.sync(ino);
    // Reclaim everything, read back from the device: the new version.
    for _ in 0..4 {
        m.sim.try_to_free_pages(Gfp::KERNEL);
    }
    m.complete_io();
    assert_eq!(m.pread(fd, 0, 4 * P), P + 10);
    assert!(
        m.sim.oracle_violations.is_empty(),
        "{:?}",
        m.sim.oracle_violations
    );
    m.check();
}

/// A partial page that is not cached but on the device gets its tail zeroed there.
#[test]
fn partial_block_not_cached_is_zeroed_on_the_device() {
    let mut m = machine(Features::vanilla());
    let (fd, ino) = m.open("/mnt/q");
    m.pwrite(fd, 0, 2 * P);
    m.sync(ino);
    m.sim.truncate_inode_pages_range(ino, 0, u64::MAX).unwrap(); // drop the cache
    let v = m.sim.inode(ino).disk_at(0);
    assert_eq!(m.ftruncate(fd, 100), OpResult::None);
    assert_ne!(m.sim.inode(ino).disk_at(0), v);
    assert_eq!(m.sim.inode(ino).disk_at(0), m.sim.inode(ino).expected_at(0));
    assert_eq!(m.sim.inode(ino).disk_at(1), 0);
    assert_eq!(m.pread(fd, 0, P), 100);
    assert!(m.sim.oracle_violations.is_empty());
    m.check();
}

// ---------------------------------------------------------------------------------------
// 4. The file lifecycle and directories
// ---------------------------------------------------------------------------------------

#[test]
fn unlink_of_an_open_file_is_allowed_and_freed_at_last_close() {
    for features in both() {
        let mut m = machine(features);
        let (fd, ino) = m.open("/mnt/o");
        m.pwrite(fd, 0, 5 * P);
        assert_eq!(m.unlink("/mnt/o"), OpResult::None);
        assert!(m.sim.inodes[ino as usize].is_some(), "still open");
        assert_eq!(m.sim.sys_stat("/mnt/o"), OpResult::Err(Errno::ENOENT));
        assert_eq!(
            m.pread(fd, 0, 5 * P),
            5 * P,
            "still readable through the fd"
        );
        // The last close sleeps on writeback in flight and evicts when it ends.
        let mut phase = 0;
        let _ = m.sim.filemap_write_and_wait(ino, &mut phase);
        let mut progress = 0;
        let tid = m.tid;
        let r = m.sim.sys_close_resume(tid, fd, &mut progress);
        assert!(matches!(r, Err(Wait::PageWriteback(_))), "{r:?}");
        assert!(m.sim.inodes[ino as usize].is_some());
        m.complete_io();
        assert_eq!(
            m.sim.sys_close_resume(tid, fd, &mut progress),
            Ok(OpResult::None)
        );
        assert!(m.sim.inodes[ino as usize].is_none(), "freed at last close");
        m.check();
    }
}

#[test]
fn directories_create_lookup_readdir_stat_rmdir() {
    let mut m = machine(Features::vanilla());
    let s = &mut m.sim;
    assert_eq!(s.sys_mkdir("/mnt/d"), OpResult::None);
    assert_eq!(s.sys_mkdir("/mnt/d"), OpResult::Err(Errno::EEXIST));
    assert_eq!(s.sys_mkdir("/mnt/x/y"), OpResult::Err(Errno::ENOENT));
    assert_eq!(s.sys_mkdir("/mnt"), OpResult::Err(Errno::EEXIST));
    assert_eq!(s.sys_mkdir("/mnt/d/e"), OpResult::None);
    for name in ["c", "a", "b"] {
        let (fd, _) = m.open(&format!("/mnt/d/{name}"));
        m.close(fd);
    }
    let s = &mut m.sim;
    // Readdir order is creation order.
    assert_eq!(
        s.sys_readdir("/mnt/d"),
        OpResult::Names(vec!["e".into(), "c".into(), "a".into(), "b".into()])
    );
    assert_eq!(s.sys_readdir("/mnt/d/a"), OpResult::Err(Errno::ENOTDIR));
    assert_eq!(s.sys_readdir("/mnt/nope"), OpResult::Err(Errno::ENOENT));
    assert_eq!(s.sys_stat("/mnt/d/a"), OpResult::Bytes(0));
    assert_eq!(s.sys_stat("/mnt/d"), OpResult::Bytes(4096));
    assert_eq!(s.sys_stat("/mnt/d/zz"), OpResult::Err(Errno::ENOENT));
    // Creating below a missing directory or a file fails.
    let tid = m.tid;
    let mut pr = 0;
    assert_eq!(
        m.sim.sys_open(tid, "/mnt/nodir/f", true, false, &mut pr),
        Ok(OpResult::Err(Errno::ENOENT))
    );
    let mut pr = 0;
    assert_eq!(
        m.sim.sys_open(tid, "/mnt/d/a/f", true, false, &mut pr),
        Ok(OpResult::Err(Errno::ENOTDIR))
    );
    let mut pr = 0;
    assert_eq!(
        m.sim.sys_open(tid, "/mnt/d", true, false, &mut pr),
        Ok(OpResult::Err(Errno::EISDIR))
    );
    let s = &mut m.sim;
    assert_eq!(s.sys_rmdir("/mnt/d"), OpResult::Err(Errno::ENOTEMPTY));
    assert_eq!(s.sys_rmdir("/mnt/d/a"), OpResult::Err(Errno::ENOTDIR));
    assert_eq!(s.sys_rmdir("/mnt/zz"), OpResult::Err(Errno::ENOENT));
    assert_eq!(s.sys_rmdir("/mnt"), OpResult::Err(Errno::EBUSY));
    assert_eq!(m.unlink("/mnt/d"), OpResult::Err(Errno::EISDIR));
    for name in ["a", "b", "c"] {
        assert_eq!(m.unlink(&format!("/mnt/d/{name}")), OpResult::None);
    }
    let s = &mut m.sim;
    assert_eq!(s.sys_readdir("/mnt/d"), OpResult::Names(vec!["e".into()]));
    assert_eq!(s.sys_rmdir("/mnt/d"), OpResult::Err(Errno::ENOTEMPTY));
    assert_eq!(s.sys_rmdir("/mnt/d/e"), OpResult::None);
    assert_eq!(s.sys_rmdir("/mnt/d"), OpResult::None);
    assert_eq!(s.sys_stat("/mnt/d"), OpResult::Err(Errno::ENOENT));
    m.check();
}

#[test]
fn bad_input_is_defined() {
    let mut m = machine(Features::vanilla());
    // truncate(2) of a missing file.
    assert_eq!(
        m.finish(|s, _, pr| s.sys_truncate("/mnt/missing", 0, pr)),
        OpResult::Err(Errno::ENOENT)
    );
    assert_eq!(
        m.finish(|s, _, pr| s.sys_truncate("/nofs", 0, pr)),
        OpResult::Err(Errno::ENOENT)
    );
    // A size that would be a negative off_t.
    let (fd, ino) = m.open("/mnt/f");
    assert_eq!(m.ftruncate(fd, u64::MAX), OpResult::Err(Errno::EINVAL));
    assert_eq!(m.ftruncate(fd, 1 << 63), OpResult::Err(Errno::EINVAL));
    assert_eq!(m.ftruncate(99, 0), OpResult::Err(Errno::EBADF));
    // truncate(2) by path works and sees the directory.
    assert_eq!(
        m.finish(|s, _, pr| s.sys_truncate("/mnt/f", 3 * P, pr)),
        OpResult::None
    );
    assert_eq!(m.sim.inode(ino).size, 3 * P);
    m.sim.sys_mkdir("/mnt/dd");
    assert_eq!(
        m.finish(|s, _, pr| s.sys_truncate("/mnt/dd", 0, pr)),
        OpResult::Err(Errno::EISDIR)
    );
    m.check();
}

#[test]
fn a_negative_size_in_a_scenario_is_rejected_with_file_line_and_field() {
    for (key, value) in [
        ("file_size", "-4096"),
        ("file_size", "\"-4KiB\""),
        ("files", "-1"),
    ] {
        let text = format!(
            "{}\n{key} = {value}\n",
            scenario_text("64MiB").replace("size = \"tiny\"\n", "size = \"tiny\"")
        );
        let e = parse_scenario(&text, "neg.toml", &[]).unwrap_err();
        assert_eq!(e.file, "neg.toml");
        let line = text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
        assert_eq!(e.line, Some(line), "{e}");
        assert_eq!(e.field, format!("tasks.t.{key}"), "{e}");
    }
    let text = scenario_text("64MiB").replace("\"tiny\"", "\"huge\"");
    let e = parse_scenario(&text, "bad.toml", &[]).unwrap_err();
    assert_eq!(e.field, "tasks.t.size");
    assert!(e.message.contains("tiny"), "{e}");
}

// ---------------------------------------------------------------------------------------
// 5. Property test: random write / read / reclaim / truncate / unlink against a model
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Act {
    Write { f: usize, pos: u64, len: u64 },
    Read { f: usize, pos: u64, len: u64 },
    Truncate { f: usize, size: u64 },
    Reclaim { times: u32 },
    Sync { f: usize },
    Unlink { f: usize, close_first: bool },
}

const FILES: [&str; 3] = ["/mnt/a", "/mnt/dir/b", "/tmp/c"];
const MAXB: u64 = 48 * P;

fn act() -> impl Strategy<Value = Act> {
    let f = 0..FILES.len();
    prop_oneof![
        4 => (f.clone(), 0..MAXB, 1..6 * P).prop_map(|(f, pos, len)| Act::Write { f, pos, len }),
        4 => (f.clone(), 0..MAXB, 1..16 * P).prop_map(|(f, pos, len)| Act::Read { f, pos, len }),
        3 => (f.clone(), 0..MAXB + 4 * P).prop_map(|(f, size)| Act::Truncate { f, size }),
        3 => (1u32..6).prop_map(|times| Act::Reclaim { times }),
        2 => f.clone().prop_map(|f| Act::Sync { f }),
        1 => (f, any::<bool>()).prop_map(|(f, close_first)| Act::Unlink { f, close_first }),
    ]
}

/// The model: per file, its size and which pages hold data (the rest are holes: zeros).
#[derive(Clone, Default)]
struct FileModel {
    open: Option<(u32, u32)>,
    size: u64,
    data: Vec<bool>,
}

fn run_acts(acts: &[Act], features: Features) -> Result<(), TestCaseError> {
    // A machine small enough for reclaim to matter: 8 MiB, a 2 MiB ballast of hole pages.
    let mut m = machine_mem(features, "16MiB");
    m.sim.sys_mkdir("/mnt/dir");
    let mut files: Vec<FileModel> = vec![FileModel::default(); FILES.len()];
    for a in acts {
        match *a {
            Act::Write { f, pos, len } => {
                let (fd, _) = *files[f].open.get_or_insert_with(|| m.open(FILES[f]));
                m.pwrite(fd, pos, len);
                let fm = &mut files[f];
                let last = (pos + len - 1) / P;
                if fm.data.len() <= last as usize {
                    fm.data.resize(last as usize + 1, false);
                }
                for i in pos / P..=last {
                    fm.data[i as usize] = true;
                }
                fm.size = fm.size.max(pos + len);
            }
            Act::Read { f, pos, len } => {
                let Some((fd, ino)) = files[f].open else {
                    continue;
                };
                let got = m.pread(fd, pos, len);
                let size = files[f].size;
                prop_assert_eq!(got, size.saturating_sub(pos).min(len));
                if got > 0 {
                    for i in pos / P..=(pos + got - 1) / P {
                        let hole = !files[f].data.get(i as usize).copied().unwrap_or(false);
                        let expected = m.sim.inode(ino).expected_at(i);
                        prop_assert_eq!(expected == 0, hole, "{} page {}", FILES[f], i);
                        if let Entry::Page(pfn) = m.entry(ino, i) {
                            prop_assert_eq!(m.sim.mem[pfn as usize].version, expected);
                        }
                    }
                }
            }
            Act::Truncate { f, size } => {
                let (fd, _) = *files[f].open.get_or_insert_with(|| m.open(FILES[f]));
                prop_assert_eq!(m.ftruncate(fd, size), OpResult::None);
                let fm = &mut files[f];
                fm.data.truncate(size.div_ceil(P) as usize);
                fm.size = size;
            }
            Act::Reclaim { times } => {
                for _ in 0..times {
                    m.sim.try_to_free_pages(Gfp::KERNEL);
                }
                m.complete_io();
            }
            Act::Sync { f } => {
                if let Some((_, ino)) = files[f].open {
                    m.sync(ino);
                }
            }
            Act::Unlink { f, close_first } => {
                let Some((fd, ino)) = files[f].open.take() else {
                    continue;
                };
                if close_first {
                    prop_assert_eq!(m.close(fd), OpResult::None);
                    prop_assert_eq!(m.unlink(FILES[f]), OpResult::None);
                } else {
                    prop_assert_eq!(m.unlink(FILES[f]), OpResult::None);
                    prop_assert!(m.sim.inodes[ino as usize].is_some());
                    prop_assert_eq!(m.close(fd), OpResult::None);
                }
                prop_assert!(m.sim.inodes[ino as usize].is_none(), "inode freed");
                files[f] = FileModel::default();
            }
        }
        prop_assert!(
            m.sim.oracle_violations.is_empty(),
            "{:?} after {:?}",
            m.sim.oracle_violations,
            a
        );
        for (f, fm) in files.iter().enumerate() {
            if let Some((_, ino)) = fm.open {
                let inode = m.sim.inode(ino);
                prop_assert_eq!(inode.size, fm.size, "{} size", FILES[f]);
                let pages = fm.size.div_ceil(P);
                for (i, _) in m.entries(ino) {
                    prop_assert!(i < pages, "{} entry {} beyond EOF", FILES[f], i);
                }
                for i in 0..pages {
                    let hole = !fm.data.get(i as usize).copied().unwrap_or(false);
                    prop_assert_eq!(inode.expected_at(i) == 0, hole, "{} page {}", FILES[f], i);
                }
            }
        }
        if let Err(e) = check_all(&m.sim) {
            return Err(TestCaseError::fail(format!("checker after {a:?}: {e}")));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_write_read_reclaim_truncate_unlink_match_the_model(
        acts in prop::collection::vec(act(), 1..40),
        batched in any::<bool>(),
    ) {
        let mut f = Features::vanilla();
        f.truncate_batch_shadow = batched;
        run_acts(&acts, f)?;
    }
}

// ---------------------------------------------------------------------------------------
// 6. The benchmarks end to end
// ---------------------------------------------------------------------------------------

fn run(name: &str, batched: bool, sets: &[&str]) -> RunReport {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let sc = load_scenario(name, &sets).expect("scenario loads");
    let mut features = Features::vanilla();
    features.truncate_batch_shadow = batched;
    let opts = RunOptions {
        features,
        check: false,
        max_steps: 200_000_000,
    };
    run_scenario(&sc, &opts, &mut |_| {}).expect("run")
}

fn samples(r: &RunReport, task: &str, label: &str) -> Vec<f64> {
    let t = r.tasks.iter().find(|t| t.name == task).unwrap();
    t.samples[label].iter().map(|&v| v as f64).collect()
}

#[test]
fn sparsetruncate_batching_cuts_locks_and_the_fast_half_of_unlinks() {
    let sets = ["machine.memory_per_node=256MiB"];
    let v = run("sparsetruncate", false, &sets);
    let b = run("sparsetruncate", true, &sets);
    for r in [&v, &b] {
        assert_eq!(r.end, RunEnd::Completed);
        assert!(r.oracle_violations.is_empty());
        assert_eq!(samples(r, "sparsetruncate", "unlink").len(), 128);
        assert_eq!(samples(r, "sparsetruncate", "rmdir").len(), 16);
        assert!(r.truncate.stats.shadows_cleared > 10_000);
        assert_eq!(r.vmstat["nr_file_pages"], 0);
    }
    assert_eq!(v.truncate.lock_acquisitions_per_shadow, 1.0);
    assert!(
        b.truncate.lock_acquisitions_per_shadow <= 1.0 / 13.8,
        "{}",
        b.truncate.lock_acquisitions_per_shadow
    );
    let (vs, bs) = (
        samples(&v, "sparsetruncate", "unlink"),
        samples(&b, "sparsetruncate", "unlink"),
    );
    let best50 = |s: &[f64]| best_n_amean(s, 50, Direction::LowerIsBetter).unwrap();
    assert!(
        best50(&bs) < best50(&vs) * 0.8,
        "{} vs {}",
        best50(&bs),
        best50(&vs)
    );
    let p90 = |s: &[f64]| percentile(s, 90.0).unwrap();
    assert!(p90(&bs) <= p90(&vs), "{} vs {}", p90(&bs), p90(&vs));
}

#[test]
fn bonnie_runs_both_variants() {
    let sets = [
        "machine.memory_per_node=64MiB",
        "tasks.bonnie.files=128",
        "tasks.bonnie.iterations=2",
    ];
    for batched in [false, true] {
        let r = run("bonnie", batched, &sets);
        assert_eq!(r.end, RunEnd::Completed);
        assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
        let t = r.tasks.iter().find(|t| t.name == "bonnie").unwrap();
        assert!(t.errors.is_empty(), "{:?}", t.errors);
        for test in ["SeqCreate", "RandCreate"] {
            for phase in ["ops", "read", "del"] {
                let s = samples(&r, "bonnie", &format!("{test} {phase}"));
                assert_eq!(s.len(), 2);
                assert!(s.iter().all(|&x| x > 0.0));
            }
        }
    }
}
