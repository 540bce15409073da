//! Truncate and the file lifecycle (issue 5, seed 003): truncate_inode_pages_range at every
//! boundary with and without shadow entries, dirty and under-writeback pages, the vanilla
//! and batched shadow clearing (tree_lock counts), ftruncate shrink/grow and the content
//! oracle, directories, bad input, and a property test against a model of file contents.

use crate::common;

use common::{
    build_sim, complete_io_and_ipis, dd_task_toml, deliver_ipis, file_toml, load_builtin,
    machine_toml, mmap_at, run_on, run_sc, run_with_program, task_id, task_report, tlb_coherent,
    unit_machine_toml, UnitMachine,
};
use mmsim::machine::profile::KFunc;
use mmsim::machine::Event;
use mmsim::mm::check::{check_all, check_ptes};
use mmsim::mm::memory::pte;
use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmstat::VmItem;
use mmsim::mm::workingset::pack_shadow;
use mmsim::report::stats::{best_n_amean, percentile, Direction};
use mmsim::run::RunReport;
use mmsim::scenario::parse_scenario;
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::{Features, RunEnd, Sim};
use mmsim::workload::{Errno, OpResult};
use proptest::prelude::*;

const P: u64 = PAGE_SIZE;

// ---------------------------------------------------------------------------------------
// A tiny machine driven by direct calls
// ---------------------------------------------------------------------------------------

fn scenario_text(mem: &str) -> String {
    unit_machine_toml(
        "truncate-unit",
        mem,
        r#"program = "sparsetruncate"
path = "/mnt/st"
size = "tiny"
"#,
    )
}

/// The unit machine with this file's helpers. A newtype: the helpers of `mm_unit` are
/// inherent methods of `UnitMachine` under some of the same names.
struct M(UnitMachine);

impl std::ops::Deref for M {
    type Target = UnitMachine;
    fn deref(&self) -> &UnitMachine {
        &self.0
    }
}

impl std::ops::DerefMut for M {
    fn deref_mut(&mut self) -> &mut UnitMachine {
        &mut self.0
    }
}

fn machine_mem(features: Features, mem: &str) -> M {
    M(UnitMachine::new(&scenario_text(mem), features))
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
        let tid = self.tid;
        self.sim.set_running(0, Some(tid));
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
            match f(&mut self.0.sim, self.0.tid, &mut progress) {
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
        self.0.sim.tasks[self.0.tid].fds[fd as usize]
            .as_mut()
            .unwrap()
            .pos = pos;
        let r = self.finish(|s, t, pr| s.sys_write(t, fd, len, None, pr));
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

    fn nrpages(&self, ino: u32) -> u64 {
        self.sim.inode(ino).mapping.tree.nr_pages()
    }

    fn nrexceptional(&self, ino: u32) -> u64 {
        self.sim.inode(ino).mapping.tree.nr_shadows()
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
            t.store(i, Entry::Shadow(pack_shadow(i + 1, 0, 0, false)));
        }
        self.sim.tree_events(ino);
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
                        m.sim
                            .__delete_from_page_cache(pfn, Some(pack_shadow(i, 0, 0, false)));
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
                    (lend != u64::MAX && (lend + 1) % P != 0).then(|| (lend + 1) / P),
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
    let mut features = Features::vanilla();
    features.truncate_batch_shadow = batched;
    run_sc(&load_builtin(name, sets), features, false, 200_000_000)
}

fn samples(r: &RunReport, task: &str, label: &str) -> Vec<f64> {
    task_report(r, task).samples[label]
        .iter()
        .map(|&v| v as f64)
        .collect()
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
        let t = task_report(&r, "bonnie");
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

// ---------------------------------------------------------------------------------------
// 7. Truncate of mapped files: unmap_mapping_range, SIGBUS beyond EOF
// ---------------------------------------------------------------------------------------

/// Two processes (p0 on CPU 0, p1 on CPU 1), a blockfs and a tmpfs, swap, and a file of
/// `pages` pages with data on the device in each filesystem.
fn vm_machine(features: Features, pages: u64) -> V {
    let mut text = machine_toml("truncate-mmap", 2, "16MiB", Some("16MiB"), "1GiB", "/mnt");
    for path in VM_FILES {
        // tmpfs has no device: its file starts sparse.
        text += &file_toml(path, pages * P, path.starts_with("/mnt"));
    }
    for t in 0..2 {
        text += &dd_task_toml(&format!("p{t}"), t, &format!("/tmp/x{t}"));
    }
    let mut sim = build_sim(&text, "truncate-mmap", features);
    let tasks = [0, 1].map(|t| task_id(&sim, &format!("p{t}")));
    sim.set_running(0, Some(tasks[0]));
    let mut v = V {
        sim,
        tasks,
        fds: [[0; 2]; 2],
    };
    // Every process opens both files (fd per process and file).
    for t in 0..2 {
        for (f, path) in VM_FILES.iter().enumerate() {
            v.run_on(t, t);
            let tid = v.tasks[t];
            let mut progress = 0;
            let mut r = v.sim.sys_open(tid, path, false, false, &mut progress);
            // /mnt/m starts on disk only: its first open reads the inode first.
            if let Err(Wait::PageLocked(_)) = r {
                common::complete_io(&mut v.sim);
                r = v.sim.sys_open(tid, path, false, false, &mut progress);
            }
            match r {
                Ok(OpResult::Fd(fd)) => v.fds[t][f] = fd,
                other => panic!("open {path}: {other:?}"),
            }
        }
    }
    v
}

const VM_FILES: [&str; 2] = ["/mnt/m", "/tmp/m"];

struct V {
    sim: Sim,
    tasks: [TaskId; 2],
    /// fds[process][file].
    fds: [[u32; 2]; 2],
}

impl V {
    /// Process `t` runs on `cpu` (switch_mm as the engine does).
    fn run_on(&mut self, t: usize, cpu: usize) {
        run_on(&mut self.sim, cpu, self.tasks[t]);
    }

    fn ino(&self, f: usize) -> u32 {
        self.sim.fss[self.sim.resolve_fs(VM_FILES[f]).unwrap()].names[VM_FILES[f]]
    }

    /// Deliver the TLB-flush IPIs in flight (the sender waited for them); IO stays in flight.
    fn deliver_ipis(&mut self) {
        deliver_ipis(&mut self.sim);
    }

    /// Deliver every IPI and complete every IO in flight; the running context stays.
    fn complete_all(&mut self) {
        let saved = (self.sim.cur().cpu, self.sim.cur().task);
        complete_io_and_ipis(&mut self.sim);
        self.sim.set_running(saved.0, saved.1);
    }

    /// Run a restartable call of process `t` on `cpu` to completion, completing IO (and
    /// writing dirty pages back when nothing is in flight) whenever it sleeps.
    fn finish(
        &mut self,
        t: usize,
        cpu: usize,
        mut f: impl FnMut(&mut Sim, TaskId, &mut u64) -> Result<OpResult, Wait>,
    ) -> OpResult {
        let mut progress = 0;
        for _ in 0..1000 {
            self.run_on(t, cpu);
            let tid = self.tasks[t];
            match f(&mut self.sim, tid, &mut progress) {
                Ok(r) => {
                    self.deliver_ipis();
                    return r;
                }
                Err(Wait::Until(_)) => self.deliver_ipis(),
                Err(_) => {
                    if self.sim.events.is_empty() {
                        let inos: Vec<u32> =
                            self.sim.inodes.iter().flatten().map(|i| i.ino).collect();
                        for ino in inos {
                            let mut ph = 0;
                            let _ = self.sim.filemap_write_and_wait(ino, &mut ph);
                        }
                    }
                    self.complete_all();
                }
            }
        }
        panic!("call never finished");
    }

    /// mmap of `pages` pages of file `f` from page `pgoff` by process `t`.
    fn mmap(&mut self, t: usize, f: usize, pages: u64, pgoff: u64, prot: u32, shared: bool) -> u64 {
        self.run_on(t, t);
        let tid = self.tasks[t];
        let a = mmap_at(
            &mut self.sim,
            tid,
            Some(VM_FILES[f]),
            pages * P,
            pgoff * P,
            prot,
            shared,
        );
        self.run_on(t, t); // the new mm is loaded where the process runs
        a
    }

    /// Process `t` on `cpu` accesses pages [first, first + n) of the mapping at `addr`.
    fn touch(
        &mut self,
        t: usize,
        cpu: usize,
        addr: u64,
        first: u64,
        n: u64,
        write: bool,
    ) -> OpResult {
        self.finish(t, cpu, |s, tid, pr| {
            s.sys_touch(tid, addr + first * P, n * P, P, write, pr)
        })
    }

    fn ftruncate(&mut self, t: usize, f: usize, size: u64) -> OpResult {
        let fd = self.fds[t][f];
        self.finish(t, t, |s, tid, pr| s.sys_ftruncate(tid, fd, size, pr))
    }

    fn pte(&self, t: usize, addr: u64, page: u64) -> u64 {
        let mm = self.sim.tasks[self.tasks[t]].mm.expect("mm");
        self.sim.mm(mm).pgtable.get(addr / P + page)
    }

    fn mm_of(&self, t: usize) -> &mmsim::mm::mmap::Mm {
        self.sim.mm(self.sim.tasks[self.tasks[t]].mm.expect("mm"))
    }

    fn vm(&self, i: VmItem) -> i64 {
        self.sim.vmstat.get(i)
    }

    /// Does any CPU's TLB cache a translation of process `t`'s page `addr + page`?
    fn tlb_caches(&self, t: usize, addr: u64, page: u64) -> bool {
        let mm = self.sim.tasks[self.tasks[t]].mm.expect("mm");
        self.sim.tlbs.iter().any(|tlb| {
            tlb.entries()
                .any(|e| e.mm == mm + 1 && e.vpn == addr / P + page)
        })
    }

    /// The checker, the page-table checker, the content oracle and TLB coherence.
    fn check(&self) -> Result<(), String> {
        check_all(&self.sim).map_err(|e| format!("checker: {e}"))?;
        check_ptes(&self.sim).map_err(|e| format!("page tables: {e}"))?;
        if !self.sim.oracle_violations.is_empty() {
            return Err(format!("oracle: {:?}", self.sim.oracle_violations));
        }
        tlb_coherent(&self.sim)
    }
}

#[test]
fn ftruncate_of_a_shared_mapping_zaps_beyond_eof_everywhere_and_faults_there_are_sigbus() {
    for features in [Features::vanilla(), Features::patched()] {
        let mut v = vm_machine(features, 16);
        let ino = v.ino(0);
        // p0 maps the file shared and writable, p1 shared read-only; both read every page,
        // each on its own CPU, so both TLBs cache translations of every page.
        let a0 = v.mmap(0, 0, 16, 0, 3, true);
        let a1 = v.mmap(1, 0, 16, 0, 1, true);
        assert_eq!(v.touch(0, 0, a0, 0, 16, false), OpResult::Bytes(16 * P));
        assert_eq!(v.touch(1, 1, a1, 0, 16, false), OpResult::Bytes(16 * P));
        v.check().unwrap();
        let pfns: Vec<Pfn> = (0..16).map(|i| pte::pfn(v.pte(0, a0, i))).collect();
        assert_eq!(v.vm(VmItem::NrMapped), 16);
        assert_eq!(
            v.vm(VmItem::NrFilePages),
            16 + 1,
            "and the inode-table page of its open"
        );
        assert_eq!((v.mm_of(0).rss_file, v.mm_of(1).rss_file), (16, 16));
        assert!(v.tlb_caches(1, a1, 12), "CPU 1 caches p1's page 12");
        v.sim.sync_accounting();
        let (local0, remote0, recv0, prof0) = (
            v.vm(VmItem::NrTlbLocalFlushOne),
            v.vm(VmItem::NrTlbRemoteFlush),
            v.vm(VmItem::NrTlbRemoteFlushReceived),
            v.sim.profile.get(KFunc::UnmapMappingRange),
        );

        // p0 (CPU 0) truncates to 5½ pages: pages 6..16 go from both page tables.
        v.run_on(0, 0);
        let tid = v.tasks[0];
        let fd = v.fds[0][0];
        let mut progress = 0;
        assert_eq!(
            v.sim.sys_ftruncate(tid, fd, 5 * P + P / 2, &mut progress),
            Ok(OpResult::None)
        );
        // CPU 1's translation goes only when the IPI arrives.
        assert!(v.tlb_caches(1, a1, 12), "the IPI is still in flight");
        v.deliver_ipis();
        for i in 0..16 {
            for (t, a) in [(0, a0), (1, a1)] {
                let present = v.pte(t, a, i) & pte::PRESENT != 0;
                assert_eq!(present, i < 6, "process {t} page {i}");
                assert!(
                    i < 6 || !v.tlb_caches(t, a, i),
                    "process {t} page {i} cached"
                );
            }
        }
        v.sim.lru_add_drain_all();
        for (i, &pfn) in pfns.iter().enumerate() {
            let free = v.sim.mem[pfn as usize].test(pg::BUDDY);
            assert_eq!(free, i >= 6, "page {i} (pfn {pfn}) freed");
        }
        assert_eq!(v.sim.inode(ino).mapping.tree.nr_pages(), 6);
        assert_eq!(v.vm(VmItem::NrFilePages), 6 + 1);
        assert_eq!(v.vm(VmItem::NrMapped), 6);
        assert_eq!((v.mm_of(0).rss_file, v.mm_of(1).rss_file), (6, 6));
        // p0's own mm: 10 INVLPGs on CPU 0; p1's: one IPI round to CPU 1, received.
        assert_eq!(v.vm(VmItem::NrTlbLocalFlushOne) - local0, 10);
        assert_eq!(v.vm(VmItem::NrTlbRemoteFlush) - remote0, 1);
        assert_eq!(v.vm(VmItem::NrTlbRemoteFlushReceived) - recv0, 1);
        v.sim.sync_accounting();
        assert!(v.sim.profile.get(KFunc::UnmapMappingRange) > prof0);
        v.check().unwrap();

        // Beyond the new end: SIGBUS, for reads and writes, from either process; nothing
        // is mapped and the task's fault counts do not move (pgfault does).
        let (min0, pgfault0) = (v.sim.tasks[v.tasks[0]].stats.minflt, v.vm(VmItem::Pgfault));
        assert_eq!(v.touch(0, 0, a0, 6, 1, false), OpResult::Err(Errno::SIGBUS));
        assert_eq!(v.touch(0, 0, a0, 15, 1, true), OpResult::Err(Errno::SIGBUS));
        assert_eq!(v.touch(1, 1, a1, 9, 1, false), OpResult::Err(Errno::SIGBUS));
        assert_eq!(v.sim.tasks[v.tasks[0]].stats.minflt, min0);
        assert_eq!(v.vm(VmItem::Pgfault), pgfault0 + 3);
        // A range across the end touches what is below, then SIGBUS.
        assert_eq!(v.touch(0, 0, a0, 3, 8, true), OpResult::Err(Errno::SIGBUS));
        assert_eq!(v.pte(0, a0, 6), 0);
        // Below it: reads and writes work (the partial last page too).
        assert_eq!(v.touch(0, 0, a0, 0, 6, true), OpResult::Bytes(6 * P));
        assert_eq!(v.touch(1, 1, a1, 0, 6, false), OpResult::Bytes(6 * P));
        v.check().unwrap();
        // Growing the file again: the range is a hole, mapped again on demand, zeros.
        assert_eq!(v.ftruncate(1, 0, 16 * P), OpResult::None);
        assert_eq!(v.touch(1, 1, a1, 0, 16, false), OpResult::Bytes(16 * P));
        assert_eq!(v.sim.inode(ino).expected_at(10), 0);
        v.check().unwrap();
    }
}

#[test]
fn ftruncate_of_a_private_mapping_zaps_cowed_pages_beyond_eof_and_keeps_those_below() {
    let mut v = vm_machine(Features::patched(), 8);
    let ino = v.ino(0);
    let a = v.mmap(0, 0, 8, 0, 3, false);
    assert_eq!(v.touch(0, 0, a, 0, 8, false), OpResult::Bytes(8 * P));
    // Copy-on-write of pages 2 and 6: anonymous pages replace the file pages.
    assert_eq!(v.touch(0, 0, a, 2, 1, true), OpResult::Bytes(P));
    assert_eq!(v.touch(0, 0, a, 6, 1, true), OpResult::Bytes(P));
    let cow2 = pte::pfn(v.pte(0, a, 2));
    let cow6 = pte::pfn(v.pte(0, a, 6));
    assert!(v.sim.page_anon(cow2) && v.sim.page_anon(cow6));
    assert_eq!((v.mm_of(0).rss_file, v.mm_of(0).rss_anon), (6, 2));
    let anon0 = v.vm(VmItem::NrAnonPages);
    v.check().unwrap();

    assert_eq!(v.ftruncate(0, 0, 4 * P), OpResult::None);
    v.sim.lru_add_drain_all();
    // Page 6's private copy is gone (freed) with the file pages 4, 5 and 7; page 2's stays.
    for i in 0..8 {
        assert_eq!(v.pte(0, a, i) & pte::PRESENT != 0, i < 4, "page {i}");
    }
    assert_eq!(pte::pfn(v.pte(0, a, 2)), cow2);
    assert!(
        v.sim.mem[cow6 as usize].test(pg::BUDDY),
        "the COW copy beyond EOF is freed"
    );
    assert!(!v.mm_of(0).anon_expected.contains_key(&(a / P + 6)));
    assert_eq!((v.mm_of(0).rss_file, v.mm_of(0).rss_anon), (3, 1));
    assert_eq!(v.vm(VmItem::NrAnonPages), anon0 - 1);
    assert_eq!(v.vm(VmItem::NrMapped), 3);
    v.check().unwrap();
    assert_eq!(v.touch(0, 0, a, 6, 1, false), OpResult::Err(Errno::SIGBUS));
    assert_eq!(v.touch(0, 0, a, 4, 1, true), OpResult::Err(Errno::SIGBUS));
    // The private copy below the end still holds what was written (the oracle checks).
    assert_eq!(v.touch(0, 0, a, 0, 4, false), OpResult::Bytes(4 * P));
    v.check().unwrap();
    let _ = ino;
}

#[test]
fn unmap_mapping_range_without_even_cows_keeps_private_copies() {
    let mut v = vm_machine(Features::vanilla(), 8);
    let ino = v.ino(1);
    let a = v.mmap(0, 1, 8, 0, 3, false);
    assert_eq!(v.touch(0, 0, a, 0, 8, false), OpResult::Bytes(8 * P));
    assert_eq!(v.touch(0, 0, a, 5, 1, true), OpResult::Bytes(P));
    v.run_on(0, 0);
    v.sim.unmap_mapping_range(ino, 4 * P, 0, false);
    v.deliver_ipis();
    for i in 0..8 {
        assert_eq!(
            v.pte(0, a, i) & pte::PRESENT != 0,
            i < 4 || i == 5,
            "page {i}"
        );
    }
    assert_eq!((v.mm_of(0).rss_file, v.mm_of(0).rss_anon), (4, 1));
    v.check().unwrap();
    // With even_cows the copy goes too; the file's own pages stay cached (no truncation).
    v.sim.unmap_mapping_range(ino, 4 * P, 0, true);
    v.deliver_ipis();
    assert_eq!(v.pte(0, a, 5), 0);
    assert_eq!((v.mm_of(0).rss_file, v.mm_of(0).rss_anon), (4, 0));
    assert_eq!(v.sim.inode(ino).mapping.tree.nr_pages(), 8);
    v.check().unwrap();
    // Faulted in again on the next access.
    assert_eq!(v.touch(0, 0, a, 4, 4, false), OpResult::Bytes(4 * P));
    v.check().unwrap();
}

/// The dirty pages of file `ino` (nr_dirty counts the inode-table block the mapping's
/// access-time update dirtied too).
fn file_dirty(v: &V, ino: u32) -> i64 {
    v.sim.inode(ino).nr_dirty as i64
}

#[test]
fn a_dirty_pte_dirties_its_page_when_zapped() {
    let mut v = vm_machine(Features::vanilla(), 8);
    let ino = v.ino(0);
    let a = v.mmap(0, 0, 8, 0, 3, true);
    assert_eq!(v.touch(0, 0, a, 0, 8, true), OpResult::Bytes(8 * P));
    // Write the pages back: writeback cleans and write-protects their PTEs first
    // (folio_mkclean in clear_page_dirty_for_io).
    let mut phase = 0;
    while v.sim.filemap_write_and_wait(ino, &mut phase).is_err() {
        v.complete_all();
    }
    assert_eq!(file_dirty(&v, ino), 0);
    for i in 0..8 {
        let p = v.pte(0, a, i);
        assert!(p & pte::PRESENT != 0, "page {i} still mapped");
        assert_eq!(
            p & (pte::WRITE | pte::DIRTY),
            0,
            "page {i}: clean, read-only PTE"
        );
    }
    // The next store faults (page_mkwrite) and dirties the page again.
    assert_eq!(v.touch(0, 0, a, 2, 1, true), OpResult::Bytes(P));
    assert_eq!(file_dirty(&v, ino), 1);
    assert!(v.pte(0, a, 2) & (pte::WRITE | pte::DIRTY) == pte::WRITE | pte::DIRTY);
    // A PTE whose dirty bit the hardware set on a clean page (as a store through a
    // writable translation does) hands it to the page when zapped.
    let mm = v.sim.tasks[v.tasks[0]].mm.expect("mm");
    *v.sim.mm_mut(mm).pgtable.get_mut(a / P + 3).expect("mapped") |= pte::WRITE | pte::DIRTY;
    v.run_on(0, 0);
    v.sim.unmap_mapping_range(ino, 3 * P, P, true);
    assert_eq!(v.pte(0, a, 3), 0);
    let pfn = v.sim.inode(ino).mapping.tree.lookup(3);
    let Entry::Page(pfn) = pfn else {
        panic!("page 3 cached")
    };
    assert!(
        v.sim.mem[pfn as usize].test(pg::DIRTY),
        "the dirty bit moved to the page"
    );
    assert_eq!(file_dirty(&v, ino), 2);
    v.check().unwrap();
}

#[test]
fn a_dirty_shared_page_beyond_eof_is_dropped_not_written() {
    for features in [Features::vanilla(), Features::patched()] {
        let mut v = vm_machine(features, 8);
        let ino = v.ino(0);
        let a = v.mmap(0, 0, 8, 0, 3, true);
        assert_eq!(v.touch(0, 0, a, 0, 8, false), OpResult::Bytes(8 * P));
        // Pages 1 and 6 written through the mapping: dirty.
        assert_eq!(v.touch(0, 0, a, 1, 1, true), OpResult::Bytes(P));
        assert_eq!(v.touch(0, 0, a, 6, 1, true), OpResult::Bytes(P));
        assert_eq!(file_dirty(&v, ino), 2);
        let written0 = v.vm(VmItem::NrWritten);
        assert_eq!(v.ftruncate(0, 0, 4 * P), OpResult::None);
        assert_eq!(file_dirty(&v, ino), 1, "page 6's dirty data was cancelled");
        assert_eq!(
            v.vm(VmItem::NrWritten),
            written0,
            "nothing written by the truncate"
        );
        // Writing the file back writes page 1 only; the device holds nothing beyond EOF.
        let mut phase = 0;
        while v.sim.filemap_write_and_wait(ino, &mut phase).is_err() {
            v.complete_all();
        }
        assert_eq!(v.vm(VmItem::NrWritten), written0 + 1);
        assert!(v.sim.inode(ino).disk.len() <= 4);
        assert_eq!(
            v.pte(0, a, 1) & pte::PRESENT,
            pte::PRESENT,
            "below EOF stays mapped"
        );
        v.check().unwrap();
        // Grown again, page 6 reads as a hole (version 0), not the dropped write.
        assert_eq!(v.ftruncate(0, 0, 8 * P), OpResult::None);
        assert_eq!(v.touch(0, 0, a, 6, 1, false), OpResult::Bytes(P));
        assert_eq!(v.sim.inode(ino).expected_at(6), 0);
        v.check().unwrap();
    }
}

#[test]
fn truncate_waits_for_writeback_of_a_mapped_page_beyond_eof() {
    let mut v = vm_machine(Features::vanilla(), 8);
    let ino = v.ino(0);
    let a = v.mmap(1, 0, 8, 0, 3, true);
    assert_eq!(v.touch(1, 1, a, 0, 8, true), OpResult::Bytes(8 * P));
    // Writeback of every page starts (as the flusher would) and stays in flight.
    v.run_on(0, 0);
    assert_eq!(
        v.sim
            .write_cache_pages(ino, u64::MAX, mmsim::fs::writeback::SyncMode::None),
        Ok(8)
    );
    // p0 truncates to 2 pages on CPU 0: p1's PTEs go at once (IPI to CPU 1); the pages
    // under writeback make the truncate sleep, then go when the IO ends.
    let tid = v.tasks[0];
    let fd = v.fds[0][0];
    let mut progress = 0;
    let r = v.sim.sys_ftruncate(tid, fd, 2 * P, &mut progress);
    assert!(matches!(r, Err(Wait::PageWriteback(_))), "{r:?}");
    v.deliver_ipis();
    for i in 0..8 {
        assert_eq!(v.pte(1, a, i) & pte::PRESENT != 0, i < 2, "page {i}");
    }
    v.check().unwrap();
    assert_eq!(v.touch(1, 1, a, 5, 1, false), OpResult::Err(Errno::SIGBUS));
    assert_eq!(
        v.sim.inode(ino).mapping.tree.nr_pages(),
        8,
        "still under writeback"
    );
    // The IO ends; the truncate resumes where it slept.
    v.complete_all();
    v.run_on(0, 0);
    assert_eq!(
        v.sim.sys_ftruncate(tid, fd, 2 * P, &mut progress),
        Ok(OpResult::None)
    );
    assert_eq!(v.sim.inode(ino).mapping.tree.nr_pages(), 2);
    assert!(v.sim.inode(ino).disk.len() <= 2);
    v.check().unwrap();
}

/// Mapping kinds of the property test: (prot, shared).
const KINDS: [(u32, bool); 3] = [(1, false), (3, true), (3, false)];
const VM_PAGES: u64 = 48;

#[derive(Clone, Debug)]
enum VAct {
    /// Process t maps file f: kind (KINDS), from page pgoff.
    Map {
        t: usize,
        f: usize,
        kind: usize,
        pgoff: u64,
    },
    /// Process t on CPU cpu touches pages [first, first + n) of its mapping number m.
    Touch {
        t: usize,
        cpu: usize,
        m: usize,
        first: u64,
        n: u64,
        write: bool,
    },
    /// Process t sets file f's size (shrink or grow, any byte).
    Truncate { t: usize, f: usize, size: u64 },
    /// Direct reclaim in process t's context on CPU cpu.
    Reclaim { t: usize, cpu: usize },
    /// Start writeback of file f's dirty pages (left in flight).
    Writeback { f: usize },
    /// Complete every IO in flight.
    CompleteIo,
    /// Process t unmaps its mapping number m.
    Munmap { t: usize, m: usize },
}

fn vact() -> impl Strategy<Value = VAct> {
    prop_oneof![
        2 => (0..2usize, 0..2usize, 0..3usize, prop_oneof![Just(0u64), Just(8u64)])
            .prop_map(|(t, f, kind, pgoff)| VAct::Map { t, f, kind, pgoff }),
        6 => (0..2usize, 0..2usize, 0..4usize, 0..VM_PAGES, 1..24u64, any::<bool>())
            .prop_map(|(t, cpu, m, first, n, write)| VAct::Touch { t, cpu, m, first, n, write }),
        3 => (0..2usize, 0..2usize, 0..(VM_PAGES + 8) * P)
            .prop_map(|(t, f, size)| VAct::Truncate { t, f, size }),
        2 => (0..2usize, 0..2usize).prop_map(|(t, cpu)| VAct::Reclaim { t, cpu }),
        1 => (0..2usize).prop_map(|f| VAct::Writeback { f }),
        1 => Just(VAct::CompleteIo),
        1 => (0..2usize, 0..4usize).prop_map(|(t, m)| VAct::Munmap { t, m }),
    ]
}

/// A live mapping of the model: (address, pages, file, pgoff, kind).
type Mapping = (u64, u64, usize, u64, usize);

fn run_vacts(
    acts: &[VAct],
    features: Features,
    unlink_while_mapped: bool,
) -> Result<(), TestCaseError> {
    let mut v = vm_machine(features, VM_PAGES);
    let mut size = [VM_PAGES * P; 2];
    let mut maps: [Vec<Mapping>; 2] = [Vec::new(), Vec::new()];
    for (k, a) in acts.iter().enumerate() {
        match *a {
            VAct::Map { t, f, kind, pgoff } => {
                let (prot, shared) = KINDS[kind];
                let pages = VM_PAGES + 8 - pgoff;
                let addr = v.mmap(t, f, pages, pgoff, prot, shared);
                maps[t].push((addr, pages, f, pgoff, kind));
            }
            VAct::Touch {
                t,
                cpu,
                m,
                first,
                n,
                write,
            } => {
                if maps[t].is_empty() {
                    continue;
                }
                let (addr, pages, f, pgoff, kind) = maps[t][m % maps[t].len()];
                let first = first.min(pages - 1);
                let n = n.min(pages - first);
                let r = v.touch(t, cpu, addr, first, n, write);
                // What the model expects: a write to a read-only mapping is SIGSEGV; a
                // range reaching the end of the file SIGBUS; anything else succeeds.
                let end_pages = size[f].div_ceil(P);
                let want = if write && KINDS[kind].0 & 2 == 0 {
                    OpResult::Err(Errno::SIGSEGV)
                } else if pgoff + first + n > end_pages {
                    OpResult::Err(Errno::SIGBUS)
                } else {
                    OpResult::Bytes(n * P)
                };
                prop_assert_eq!(&r, &want, "op {} {:?} (file size {})", k, a, size[f]);
                if want == OpResult::Err(Errno::SIGBUS) {
                    // Nothing at or beyond the end got mapped by the attempt.
                    let idx = end_pages.max(pgoff + first) - pgoff;
                    prop_assert_eq!(v.pte(t, addr, idx), 0);
                }
            }
            VAct::Truncate { t, f, size: s } => {
                prop_assert_eq!(v.ftruncate(t, f, s), OpResult::None);
                size[f] = s;
                let end_pages = s.div_ceil(P);
                let ino = v.ino(f);
                let mut out = Vec::new();
                v.sim
                    .inode(ino)
                    .mapping
                    .tree
                    .gang_lookup(0, usize::MAX, &mut out);
                prop_assert!(out.iter().all(|(i, _)| *i < end_pages), "cached beyond EOF");
            }
            VAct::Reclaim { t, cpu } => {
                v.run_on(t, cpu);
                v.sim.try_to_free_pages(Gfp::KERNEL);
                v.deliver_ipis();
            }
            VAct::Writeback { f } => {
                if !VM_FILES[f].starts_with("/mnt") {
                    continue; // tmpfs writes nothing back
                }
                v.run_on(0, 0);
                let ino = v.ino(f);
                let _ =
                    v.sim
                        .write_cache_pages(ino, u64::MAX, mmsim::fs::writeback::SyncMode::None);
                // folio_mkclean's TLB flushes reach the other CPUs.
                v.deliver_ipis();
            }
            VAct::CompleteIo => v.complete_all(),
            VAct::Munmap { t, m } => {
                if maps[t].is_empty() {
                    continue;
                }
                let (addr, pages, ..) = maps[t].remove(m % maps[t].len());
                let r = v.finish(t, t, |s, tid, _| s.sys_munmap(tid, addr, pages * P));
                prop_assert_eq!(r, OpResult::None);
            }
        }
        if let Err(e) = v.check() {
            return Err(TestCaseError::fail(format!("after op {k} {a:?}: {e}")));
        }
    }
    // The end: every mapping, descriptor and name goes — the names either first (the last
    // munmap evicts the inode, maybe as an orphan while its writeback is in flight) or last.
    v.run_on(0, 0);
    let ino = v.ino(0);
    let _ = v
        .sim
        .write_cache_pages(ino, u64::MAX, mmsim::fs::writeback::SyncMode::None);
    let inos = [v.ino(0), v.ino(1)];
    let unlink_all = |v: &mut V| {
        for path in VM_FILES {
            let r = v.finish(0, 0, |s, _, pr| s.sys_unlink(path, pr));
            assert_eq!(r, OpResult::None);
        }
    };
    for t in 0..2 {
        for f in 0..2 {
            let fd = v.fds[t][f];
            let r = v.finish(t, t, |s, tid, pr| s.sys_close_resume(tid, fd, pr));
            prop_assert_eq!(r, OpResult::None);
        }
    }
    if unlink_while_mapped {
        unlink_all(&mut v);
    }
    for (t, live) in maps.iter_mut().enumerate() {
        for (addr, pages, ..) in std::mem::take(live) {
            v.run_on(t, t);
            let tid = v.tasks[t];
            prop_assert_eq!(v.sim.sys_munmap(tid, addr, pages * P), Ok(OpResult::None));
            v.deliver_ipis();
        }
    }
    if !unlink_while_mapped {
        unlink_all(&mut v);
    }
    if let Err(e) = v.check() {
        return Err(TestCaseError::fail(format!("at the end: {e}")));
    }
    v.complete_all();
    v.sim.lru_add_drain_all();
    if let Err(e) = v.check() {
        return Err(TestCaseError::fail(format!("at the end, IO done: {e}")));
    }
    for ino in inos {
        prop_assert!(
            v.sim.inodes[ino as usize].is_none(),
            "inode {} survives",
            ino
        );
    }
    prop_assert!(v.sim.orphans.is_empty());
    prop_assert_eq!(v.vm(VmItem::NrMapped), 0);
    prop_assert_eq!(
        v.vm(VmItem::NrFreePages)
            + v.vm(VmItem::NrFilePages)
            + v.vm(VmItem::NrAnonPages)
            + v.vm(VmItem::NrPageTablePages)
            + v.vm(VmItem::NrSlabReclaimable)
            + v.vm(VmItem::NrSlabUnreclaimable),
        v.sim.mem.len() as i64,
        "frames neither free, cached, mapped, page tables nor slab"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_mmap_touch_truncate_reclaim_keep_ptes_tlbs_and_content_right(
        acts in prop::collection::vec(vact(), 1..40),
        patched in any::<bool>(),
        unlink_while_mapped in any::<bool>(),
    ) {
        let f = if patched { Features::patched() } else { Features::vanilla() };
        run_vacts(&acts, f, unlink_while_mapped)?;
    }
}

/// The sequences reach what they are meant to: a fixed one maps both kinds, dirties and
/// COWs pages, truncates across them with writeback in flight, and meets SIGBUS.
#[test]
fn a_fixed_truncate_sequence_zaps_cows_and_sigbuses() {
    let acts = vec![
        VAct::Map {
            t: 0,
            f: 0,
            kind: 1,
            pgoff: 0,
        },
        VAct::Map {
            t: 1,
            f: 0,
            kind: 2,
            pgoff: 8,
        },
        VAct::Touch {
            t: 0,
            cpu: 0,
            m: 0,
            first: 0,
            n: 24,
            write: true,
        },
        VAct::Touch {
            t: 1,
            cpu: 1,
            m: 0,
            first: 0,
            n: 24,
            write: true,
        },
        VAct::Writeback { f: 0 },
        VAct::Truncate {
            t: 0,
            f: 0,
            size: 12 * P + 100,
        },
        VAct::Touch {
            t: 1,
            cpu: 1,
            m: 0,
            first: 0,
            n: 8,
            write: false,
        },
        VAct::Touch {
            t: 0,
            cpu: 1,
            m: 0,
            first: 10,
            n: 4,
            write: false,
        },
        VAct::Truncate {
            t: 1,
            f: 0,
            size: 30 * P,
        },
        VAct::Touch {
            t: 0,
            cpu: 0,
            m: 0,
            first: 0,
            n: 30,
            write: false,
        },
        VAct::Reclaim { t: 1, cpu: 0 },
    ];
    run_vacts(&acts, Features::patched(), true).expect("clean");
    run_vacts(&acts, Features::vanilla(), false).expect("clean");
}

#[test]
fn open_with_o_trunc_unmaps_the_whole_file() {
    let mut v = vm_machine(Features::vanilla(), 8);
    let ino = v.ino(0);
    let a = v.mmap(0, 0, 8, 0, 3, false);
    assert_eq!(v.touch(0, 0, a, 0, 8, false), OpResult::Bytes(8 * P));
    assert_eq!(v.touch(0, 0, a, 3, 1, true), OpResult::Bytes(P)); // a COW copy
    let r = v.finish(1, 1, |s, tid, pr| {
        s.sys_open(tid, VM_FILES[0], false, true, pr)
    });
    assert!(matches!(r, OpResult::Fd(_)), "{r:?}");
    for i in 0..8 {
        assert_eq!(v.pte(0, a, i), 0, "page {i}");
    }
    assert_eq!((v.mm_of(0).rss_file, v.mm_of(0).rss_anon), (0, 0));
    assert_eq!(v.sim.inode(ino).mapping.tree.nr_pages(), 0);
    v.check().unwrap();
    assert_eq!(v.touch(0, 0, a, 0, 1, false), OpResult::Err(Errno::SIGBUS));
}

/// A program: open and map `/mnt/m` (8 pages), read it, shrink it to 2 pages, then touch
/// page 5 — and (never) anything after.
struct Sigbus {
    step: u32,
    fd: u32,
    addr: u64,
}

impl mmsim::workload::Program for Sigbus {
    fn next_op(&mut self, last: &OpResult) -> mmsim::workload::Op {
        use mmsim::workload::Op;
        self.step += 1;
        match self.step {
            1 => Op::Open {
                path: "/mnt/m".into(),
                create: false,
                truncate: false,
            },
            2 => {
                let OpResult::Fd(fd) = last else {
                    panic!("open: {last:?}")
                };
                self.fd = *fd;
                Op::Mmap {
                    path: Some("/mnt/m".into()),
                    len: 8 * P,
                    offset: 0,
                    prot: 1,
                    shared: true,
                }
            }
            3 => {
                let OpResult::Addr(a) = last else {
                    panic!("mmap: {last:?}")
                };
                self.addr = *a;
                Op::Touch {
                    addr: self.addr,
                    len: 8 * P,
                    stride: P,
                    write: false,
                }
            }
            4 => Op::Ftruncate {
                fd: self.fd,
                size: 2 * P,
            },
            5 => Op::Touch {
                addr: self.addr + 5 * P,
                len: P,
                stride: P,
                write: false,
            },
            _ => panic!("a task killed by SIGBUS ran again (last {last:?})"),
        }
    }
}

#[test]
fn sigbus_kills_the_task_is_reported_and_the_run_goes_on() {
    let text = r#"name = "sigbus"

[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"

[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "sda"

[[files]]
path = "/mnt/m"
size = "32KiB"
data = true

[[files]]
path = "/mnt/a"
size = "1MiB"
data = true

[[tasks]]
name = "bad"
cpu = 0
program = "mmap-read"
path = "/mnt/a"

[[tasks]]
name = "good"
cpu = 1
program = "mmap-read"
path = "/mnt/a"
stride = 4096
passes = 3
"#;
    let program = Sigbus {
        step: 0,
        fd: 0,
        addr: 0,
    };
    let (sim, report) = run_with_program(text, "sigbus", "bad", Box::new(program));
    let bad = task_id(&sim, "bad");
    let r_bad = task_report(&report, "bad");
    let r_good = task_report(&report, "good");
    assert_eq!(r_bad.errors.get("SIGBUS"), Some(&1), "{:?}", r_bad.errors);
    assert_eq!(r_bad.errors.len(), 1, "{:?}", r_bad.errors);
    assert!(r_good.errors.is_empty(), "{:?}", r_good.errors);
    assert_eq!(r_good.samples.get("pass").map(|s| s.len()), Some(3));
    assert!(report.oracle_violations.is_empty());
    // The killed task's address space is gone, and with it every mapping of the file.
    assert!(sim.tasks[bad]
        .mm
        .is_none_or(|m| sim.mms[m as usize].is_none()));
    check_ptes(&sim).unwrap();
    let json = serde_json::to_string(&report).unwrap();
    assert!(json.contains("\"SIGBUS\":1"));
}
