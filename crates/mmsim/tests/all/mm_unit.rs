//! Unit tests of the memory-manager mechanisms, driving kernel functions directly on a tiny
//! machine: the mark_page_accessed state machine, init_page_accessed, pagevec draining,
//! every FGP flag of pagecache_get_page and its wrappers, the write and read paths, unlink,
//! the invariant checker, and random syscall sequences (proptest).

use crate::common;

use common::{complete_io, on_lru_list, unit_machine_toml, UnitMachine as M};
use mmsim::fs::writeback::SyncMode;
use mmsim::machine::profile::KFunc;
use mmsim::mm::check::check_all;
use mmsim::mm::filemap::fgp;
use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
use mmsim::mm::node::LruList;
use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::swap::PAGEVEC_SIZE;
use mmsim::mm::vmscan::{ReclaimWait, ScanControl};
use mmsim::mm::vmstat::VmItem;
use mmsim::mm::workingset::pack_shadow;
use mmsim::sched::{TaskBody, Wait};
use mmsim::sim::{Features, RunEnd};
use mmsim::workload::{Errno, Op, OpResult, Program};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// A tiny machine
// ---------------------------------------------------------------------------------------

fn scenario_text(mem: &str) -> String {
    unit_machine_toml(
        "unit",
        mem,
        r#"program = "dd"
path = "/tmp/dd"
size = "1MiB"
"#,
    )
}

fn machine_mem(features: Features, mem: &str) -> M {
    M::new(&scenario_text(mem), features)
}

fn machine(features: Features) -> M {
    machine_mem(features, "16MiB")
}

/// The task index of node 0's kswapd.
fn kswapd_task(m: &M) -> usize {
    m.sim
        .tasks
        .iter()
        .position(|t| matches!(t.body, TaskBody::Kthread(mmsim::sched::KThread::Kswapd(0))))
        .expect("kswapd")
}

impl M {
    /// open(path, O_CREAT) → (fd, ino).
    fn open(&mut self, path: &str) -> (u32, u32) {
        self.open_with(path, false)
    }

    fn open_with(&mut self, path: &str, truncate: bool) -> (u32, u32) {
        let mut progress = 0;
        let mut r = self
            .sim
            .sys_open(self.tid, path, true, truncate, &mut progress);
        // A file of the scenario starts on disk only: the open first reads its inode.
        if let Err(Wait::PageLocked(_)) = r {
            complete_io(&mut self.sim);
            r = self
                .sim
                .sys_open(self.tid, path, true, truncate, &mut progress);
        }
        let fd = match r {
            Ok(OpResult::Fd(fd)) => fd,
            other => panic!("open {path}: {other:?}"),
        };
        let ino = self.sim.tasks[self.tid].fds[fd as usize].unwrap().ino;
        (fd, ino)
    }

    fn write(&mut self, fd: u32, len: u64) -> u64 {
        let mut progress = 0;
        match self.sim.sys_write(self.tid, fd, len, None, &mut progress) {
            Ok(OpResult::Bytes(n)) => n,
            other => panic!("write fd {fd} len {len}: {other:?}"),
        }
    }

    /// fdatasync(fd), completing its IO until it returns.
    fn fdatasync(&mut self, fd: u32) {
        let mut progress = 0;
        for _ in 0..1000 {
            match self.sim.sys_fdatasync(self.tid, fd, &mut progress) {
                Ok(_) => return,
                Err(_) => {
                    complete_io(&mut self.sim);
                }
            }
        }
        panic!("fdatasync fd {fd} did not finish");
    }

    fn pwrite(&mut self, fd: u32, len: u64, pos: u64) -> OpResult {
        let mut progress = 0;
        self.sim
            .sys_write(self.tid, fd, len, Some(pos), &mut progress)
            .unwrap_or_else(|w| panic!("pwrite must not sleep here: {w:?}"))
    }

    fn read(&mut self, fd: u32, len: u64) -> u64 {
        let mut progress = 0;
        match self.sim.sys_read(self.tid, fd, len, None, &mut progress) {
            Ok(OpResult::Bytes(n)) => n,
            other => panic!("read fd {fd} len {len}: {other:?}"),
        }
    }

    fn pread(&mut self, fd: u32, len: u64, pos: u64) -> u64 {
        let mut progress = 0;
        match self
            .sim
            .sys_read(self.tid, fd, len, Some(pos), &mut progress)
        {
            Ok(OpResult::Bytes(n)) => n,
            other => panic!("pread fd {fd} len {len} pos {pos}: {other:?}"),
        }
    }

    fn close(&mut self, fd: u32) {
        assert_eq!(self.sim.sys_close(self.tid, fd), Ok(OpResult::None));
    }

    fn unlink(&mut self, path: &str) -> OpResult {
        let mut progress = 0;
        self.sim
            .sys_unlink(path, &mut progress)
            .unwrap_or_else(|w| panic!("unlink {path} must not sleep here: {w:?}"))
    }

    fn rc(&self, pfn: Pfn) -> i32 {
        self.sim.mem[pfn as usize].refcount
    }

    fn has(&self, pfn: Pfn, bit: u32) -> bool {
        self.sim.mem[pfn as usize].flags & bit != 0
    }

    fn vm(&self, i: VmItem) -> i64 {
        self.sim.vmstat.get(i)
    }

    fn prof(&mut self, f: KFunc) -> u64 {
        self.sim.sync_accounting();
        self.sim.profile.get(f)
    }

    fn on_list(&self, pfn: Pfn, lru: LruList) -> bool {
        on_lru_list(&self.sim, pfn, lru)
    }

    /// Times any lru_lock was taken.
    fn lru_locks_taken(&self) -> u64 {
        self.sim.lru_locks().map(|l| l.acquisitions).sum()
    }

    fn inactive_age(&self) -> u64 {
        self.sim.lruvecs[0].inactive_age
    }

    /// A page-cache page of `ino` at `index`, created with plain FGP_CREAT, unlocked, the
    /// caller's reference dropped, and (if `drain`) moved from the pagevec to the LRU.
    fn cached_page(&mut self, ino: u32, index: u64, drain: bool) -> Pfn {
        let pfn = self
            .sim
            .pagecache_get_page(ino, index, fgp::CREAT, Gfp::KERNEL)
            .expect("no wait")
            .expect("page created");
        self.sim.unlock_page(pfn);
        self.sim.put_page(pfn);
        if drain {
            self.sim.lru_add_drain();
        }
        pfn
    }
}

// ---------------------------------------------------------------------------------------
// 1. mark_page_accessed state machine
// ---------------------------------------------------------------------------------------

#[test]
fn mark_page_accessed_inactive_file_page_walks_the_state_machine() {
    let mut m = machine(Features::vanilla());
    let (_, ino) = m.open("/mnt/f");
    let pfn = m.cached_page(ino, 0, true);
    assert!(m.has(pfn, pg::LRU));
    assert!(m.on_list(pfn, LruList::InactiveFile));
    assert!(!m.has(pfn, pg::REFERENCED) && !m.has(pfn, pg::ACTIVE));
    assert_eq!(m.rc(pfn), 1, "only the page cache holds it");
    let act0 = m.vm(VmItem::Pgactivate);
    let age0 = m.inactive_age();

    // inactive, unreferenced → referenced (still inactive, nothing queued).
    m.sim.mark_page_accessed(pfn);
    assert!(m.has(pfn, pg::REFERENCED));
    assert!(!m.has(pfn, pg::ACTIVE));
    assert!(m.on_list(pfn, LruList::InactiveFile));
    assert_eq!(m.sim.pvecs[0].activate.nr, 0);
    assert_eq!(m.vm(VmItem::Pgactivate), act0);
    assert_eq!(m.inactive_age(), age0);

    // inactive, referenced, on the LRU → queued on the activate pagevec (with a reference),
    // PG_referenced cleared, not yet active; the workingset clock advances now.
    m.sim.mark_page_accessed(pfn);
    assert!(!m.has(pfn, pg::REFERENCED));
    assert!(!m.has(pfn, pg::ACTIVE));
    assert!(m.sim.pvecs[0].activate.contains(pfn));
    assert_eq!(m.rc(pfn), 2, "the activate pagevec holds a reference");
    assert!(m.on_list(pfn, LruList::InactiveFile));
    assert_eq!(m.vm(VmItem::Pgactivate), act0);
    assert_eq!(m.inactive_age(), age0 + 1, "workingset_activation");
    m.check();

    // The drain moves it to the active file list and counts pgactivate.
    let (ina, act) = (m.vm(VmItem::NrInactiveFile), m.vm(VmItem::NrActiveFile));
    m.sim.lru_add_drain();
    assert!(m.has(pfn, pg::ACTIVE) && m.has(pfn, pg::LRU));
    assert!(m.on_list(pfn, LruList::ActiveFile));
    assert!(!m.on_list(pfn, LruList::InactiveFile));
    assert_eq!(m.vm(VmItem::Pgactivate), act0 + 1);
    assert_eq!(m.vm(VmItem::NrInactiveFile), ina - 1);
    assert_eq!(m.vm(VmItem::NrActiveFile), act + 1);
    assert_eq!(m.rc(pfn), 1, "the pagevec's reference is released");
    assert_eq!(m.sim.pvecs[0].activate.nr, 0);
    m.check();

    // active, unreferenced → referenced.
    m.sim.mark_page_accessed(pfn);
    assert!(m.has(pfn, pg::REFERENCED) && m.has(pfn, pg::ACTIVE));

    // active, referenced → unchanged.
    let flags = m.sim.mem[pfn as usize].flags;
    m.sim.mark_page_accessed(pfn);
    assert_eq!(m.sim.mem[pfn as usize].flags, flags);
    assert_eq!(m.sim.pvecs[0].activate.nr, 0);
    assert_eq!(m.vm(VmItem::Pgactivate), act0 + 1);
    assert_eq!(m.inactive_age(), age0 + 1);
    assert_eq!(m.rc(pfn), 1);
    m.sim.lru_add_drain();
    assert!(m.on_list(pfn, LruList::ActiveFile));
    m.check();
}

#[test]
fn mark_page_accessed_on_a_page_in_this_cpus_add_pagevec_activates_it_there() {
    let mut m = machine(Features::vanilla());
    let (_, ino) = m.open("/mnt/f");
    let pfn = m.cached_page(ino, 0, false);
    assert!(m.sim.pvecs[0].lru_add.contains(pfn));
    assert!(!m.has(pfn, pg::LRU));
    let act0 = m.vm(VmItem::Pgactivate);
    let age0 = m.inactive_age();

    m.sim.mark_page_accessed(pfn);
    assert!(m.has(pfn, pg::REFERENCED) && !m.has(pfn, pg::ACTIVE));

    m.sim.mark_page_accessed(pfn);
    assert!(m.has(pfn, pg::ACTIVE), "PG_active set in the pagevec");
    assert!(!m.has(pfn, pg::REFERENCED));
    assert!(!m.has(pfn, pg::LRU));
    assert_eq!(m.sim.pvecs[0].activate.nr, 0, "not queued for activation");
    assert_eq!(m.vm(VmItem::Pgactivate), act0, "no pgactivate");
    assert_eq!(m.inactive_age(), age0 + 1);

    let act_file = m.vm(VmItem::NrActiveFile);
    m.sim.lru_add_drain();
    assert!(
        m.on_list(pfn, LruList::ActiveFile),
        "lands on the active list"
    );
    assert_eq!(m.vm(VmItem::NrActiveFile), act_file + 1);
    assert_eq!(m.vm(VmItem::Pgactivate), act0, "still no pgactivate");
    assert_eq!(m.rc(pfn), 1);
    m.check();
}

#[test]
fn mark_page_accessed_on_a_page_in_another_cpus_pagevec_loses_the_activation() {
    let mut m = machine(Features::vanilla());
    let (_, ino) = m.open("/mnt/f");
    m.sim.set_running(1, m.sim.cur().task);
    let pfn = m.cached_page(ino, 0, false);
    assert!(m.sim.pvecs[1].lru_add.contains(pfn));
    m.sim.set_running(0, m.sim.cur().task);
    m.sim.mark_page_accessed(pfn);
    m.sim.mark_page_accessed(pfn);
    // v4.2: __lru_cache_activate_page only scans the running CPU's pagevec.
    assert!(!m.has(pfn, pg::ACTIVE));
    assert!(!m.has(pfn, pg::REFERENCED));
    m.sim.lru_add_drain_cpu(1);
    assert!(m.on_list(pfn, LruList::InactiveFile));
    m.check();
}

/// Before v5.9 only a file page's activation ages the workingset clock; from v5.9
/// (`anon-workingset`: "mm: workingset: age nonresident information alongside anonymous
/// pages") every activation by mark_page_accessed does, a swap-backed page's too.
#[test]
fn mark_page_accessed_on_tmpfs_ages_the_workingset_clock_from_v5_9() {
    for rule in [false, true] {
        let mut f = Features::vanilla();
        f.anon_workingset = rule;
        let mut m = machine(f);
        let (_, ino) = m.open("/tmp/f");
        let pfn = m.cached_page(ino, 0, true);
        let age0 = m.inactive_age();
        m.sim.mark_page_accessed(pfn);
        m.sim.mark_page_accessed(pfn);
        m.sim.lru_add_drain();
        assert!(
            m.on_list(pfn, LruList::ActiveAnon),
            "anon-workingset {rule}"
        );
        assert_eq!(
            m.inactive_age() - age0,
            u64::from(rule),
            "anon-workingset {rule}"
        );
        m.check();
    }
}

/// move_pages_to_lru from v5.9 (`anon-workingset`): the pages shrink_inactive_list puts
/// back active advance the workingset clock, one tick each; before, reclaim's activations
/// did not. (Dirty file pages kswapd may not write are activated from 6.16,
/// `no-reclaim-file-writeback`.)
#[test]
fn pages_reclaim_activates_age_the_workingset_clock_from_v5_9() {
    for rule in [false, true] {
        let ctx = format!("anon-workingset {rule}");
        let mut f = Features::patched();
        f.no_reclaim_file_writeback = true;
        f.anon_workingset = rule;
        let (mut m, _) = dirty_unreferenced_file(f, 64);
        m.sim.reclaim[0].zone_dirty = true;
        let age0 = m.inactive_age();
        let act0 = m.vm(VmItem::Pgactivate);
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        m.sim
            .shrink_inactive_list(0, ROOT_MEM_CGROUP, 32, LruList::InactiveFile, &mut sc);
        assert_eq!(m.vm(VmItem::Pgactivate) - act0, 32, "{ctx}: activated");
        let want = if rule { 32 } else { 0 };
        assert_eq!(m.inactive_age() - age0, want, "{ctx}");
        m.check();
    }
}

#[test]
fn mark_page_accessed_on_tmpfs_uses_the_anon_lists_and_not_the_workingset_clock() {
    let mut m = machine(Features::vanilla());
    let (_, ino) = m.open("/tmp/f");
    let pfn = m.cached_page(ino, 0, true);
    assert!(m.has(pfn, pg::SWAPBACKED));
    assert!(m.on_list(pfn, LruList::InactiveAnon));
    let age0 = m.inactive_age();
    let act0 = m.vm(VmItem::Pgactivate);
    m.sim.mark_page_accessed(pfn);
    m.sim.mark_page_accessed(pfn);
    m.sim.lru_add_drain();
    assert!(m.on_list(pfn, LruList::ActiveAnon));
    assert_eq!(m.vm(VmItem::Pgactivate), act0 + 1);
    assert_eq!(
        m.inactive_age(),
        age0,
        "only file pages advance inactive_age"
    );
    m.check();
}

// ---------------------------------------------------------------------------------------
// 2. init_page_accessed
// ---------------------------------------------------------------------------------------

#[test]
fn init_page_accessed_is_a_cheap_non_atomic_set() {
    let mut m = machine(Features::patched());
    let a = m.sim.alloc_page(Gfp::KERNEL).unwrap();
    let b = m.sim.alloc_page(Gfp::KERNEL).unwrap();
    let c = m.sim.costs.clone();

    let before = m.prof(KFunc::InitPageAccessed);
    m.sim.init_page_accessed(a);
    let init_cost = m.prof(KFunc::InitPageAccessed) - before;
    assert!(m.has(a, pg::REFERENCED));
    assert_eq!(
        init_cost,
        c.call_ps + c.plain_rmw_ps,
        "a call and a plain RMW"
    );
    assert!(init_cost < c.atomic_rmw_ps, "no atomic");

    let before = m.prof(KFunc::MarkPageAccessed);
    m.sim.mark_page_accessed(b);
    let mark_cost = m.prof(KFunc::MarkPageAccessed) - before;
    assert!(m.has(b, pg::REFERENCED));
    assert!(
        init_cost * 4 <= mark_cost,
        "init_page_accessed {init_cost} ps vs mark_page_accessed {mark_cost} ps"
    );

    // Already referenced: no store at all.
    let before = m.prof(KFunc::InitPageAccessed);
    m.sim.init_page_accessed(a);
    assert_eq!(m.prof(KFunc::InitPageAccessed) - before, c.call_ps);
    m.sim.put_page(a);
    m.sim.put_page(b);
    m.check();
}

// ---------------------------------------------------------------------------------------
// 3. pagevec draining
// ---------------------------------------------------------------------------------------

#[test]
fn lru_cache_add_batches_fourteen_pages_and_drains_before_the_fifteenth() {
    let mut m = machine(Features::patched());
    let free0 = m.vm(VmItem::NrFreePages);
    let ina0 = m.vm(VmItem::NrInactiveFile);
    let pages: Vec<Pfn> = (0..=PAGEVEC_SIZE)
        .map(|_| m.sim.alloc_page(Gfp::KERNEL).unwrap())
        .collect();
    for &p in &pages[..PAGEVEC_SIZE] {
        m.sim.lru_cache_add(p);
    }
    for &p in &pages[..PAGEVEC_SIZE] {
        assert!(!m.has(p, pg::LRU), "pfn {p} must stay in the pagevec");
        assert_eq!(m.rc(p), 2, "the pagevec holds a reference");
    }
    assert_eq!(m.sim.pvecs[0].lru_add.nr as usize, PAGEVEC_SIZE);
    assert_eq!(m.vm(VmItem::NrInactiveFile), ina0);
    m.check();

    // The 15th add drains the full pagevec first, then queues itself.
    let last = pages[PAGEVEC_SIZE];
    m.sim.lru_cache_add(last);
    for &p in &pages[..PAGEVEC_SIZE] {
        assert!(m.has(p, pg::LRU));
        assert!(m.on_list(p, LruList::InactiveFile));
        assert_eq!(m.rc(p), 1);
    }
    assert!(!m.has(last, pg::LRU));
    assert_eq!(m.rc(last), 2);
    assert_eq!(m.sim.pvecs[0].lru_add.nr, 1);
    assert!(m.sim.pvecs[0].lru_add.contains(last));
    assert_eq!(
        m.vm(VmItem::NrInactiveFile),
        ina0 + PAGEVEC_SIZE as i64,
        "v4.2 ordering: 14 on the list, 1 in the pagevec"
    );
    m.check();

    m.sim.lru_add_drain();
    assert_eq!(m.sim.pvecs[0].lru_add.nr, 0);
    assert_eq!(m.vm(VmItem::NrInactiveFile), ina0 + pages.len() as i64);
    assert!(pages.iter().all(|&p| m.rc(p) == 1 && m.has(p, pg::LRU)));
    // Head insertion in pagevec order: the newest page is at the head.
    let order: Vec<Pfn> = m.sim.lruvecs[0].lists[LruList::InactiveFile as usize]
        .iter()
        .collect();
    let mut expect = pages.clone();
    expect.reverse();
    assert_eq!(order, expect);
    m.check();

    // Dropping the last references takes them off the LRU and frees them.
    for &p in &pages {
        m.sim.put_page(p);
    }
    assert_eq!(m.vm(VmItem::NrInactiveFile), ina0);
    assert_eq!(m.vm(VmItem::NrFreePages), free0);
    m.check();
}

#[test]
fn lru_add_drain_all_drains_every_cpu() {
    let mut m = machine(Features::patched());
    let a = m.sim.alloc_page(Gfp::KERNEL).unwrap();
    let b = m.sim.alloc_page(Gfp::KERNEL).unwrap();
    m.sim.lru_cache_add(a);
    m.sim.set_running(1, m.sim.cur().task);
    m.sim.lru_cache_add(b);
    m.sim.set_running(0, m.sim.cur().task);
    m.sim.lru_add_drain();
    assert!(m.has(a, pg::LRU));
    assert!(
        !m.has(b, pg::LRU),
        "lru_add_drain only drains the running CPU"
    );
    m.sim.lru_add_drain_all();
    assert!(m.has(b, pg::LRU));
    assert_eq!(m.rc(a), 1);
    assert_eq!(m.rc(b), 1);
    m.check();
}

// ---------------------------------------------------------------------------------------
// 4. FGP flags and the wrappers
// ---------------------------------------------------------------------------------------

#[test]
fn fgp_absent_page_without_creat_is_a_miss() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let files = m.vm(VmItem::NrFilePages);
    let free = m.vm(VmItem::NrFreePages);
    for flags in [
        0,
        fgp::LOCK,
        fgp::ACCESSED,
        fgp::LOCK | fgp::ACCESSED,
        fgp::LOCK | fgp::NOWAIT,
        fgp::WRITE | fgp::NOFS,
    ] {
        assert_eq!(
            m.sim.pagecache_get_page(ino, 3, flags, Gfp::KERNEL),
            Ok(None),
            "flags {flags:#x}"
        );
    }
    assert_eq!(m.sim.find_get_page(ino, 3), None);
    assert_eq!(m.sim.find_lock_page(ino, 3), Ok(None));
    assert_eq!(m.vm(VmItem::NrFilePages), files);
    assert_eq!(m.vm(VmItem::NrFreePages), free);
    m.check();
}

#[test]
fn fgp_creat_inserts_a_locked_page_with_references() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let files = m.vm(VmItem::NrFilePages);
    let pfn = m
        .sim
        .pagecache_get_page(ino, 5, fgp::CREAT, Gfp::KERNEL)
        .unwrap()
        .unwrap();
    assert!(m.has(pfn, pg::LOCKED), "CREAT implies LOCK");
    assert!(!m.has(pfn, pg::REFERENCED), "no ACCESSED, no PG_referenced");
    assert_eq!(m.vm(VmItem::NrFilePages), files + 1);
    assert_eq!(m.sim.inode(ino).mapping.tree.lookup(5), Entry::Page(pfn));
    assert_eq!(m.sim.mem[pfn as usize].mapping, ino);
    assert_eq!(m.sim.mem[pfn as usize].index, 5);
    // caller + page cache + add pagevec
    assert_eq!(m.rc(pfn), 3);
    assert!(m.sim.pvecs[0].lru_add.contains(pfn));
    m.check();
    m.sim.lru_add_drain();
    assert_eq!(m.rc(pfn), 2);
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    assert_eq!(m.rc(pfn), 1);
    m.check();
}

#[test]
fn fgp_present_page_is_returned_with_a_reference_and_lock_locks_it() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let pfn = m.cached_page(ino, 0, true);
    let files = m.vm(VmItem::NrFilePages);

    let got = m.sim.pagecache_get_page(ino, 0, 0, Gfp::KERNEL);
    assert_eq!(got, Ok(Some(pfn)));
    assert_eq!(m.rc(pfn), 2);
    assert!(!m.has(pfn, pg::LOCKED));
    m.sim.put_page(pfn);

    let got = m.sim.pagecache_get_page(ino, 0, fgp::LOCK, Gfp::KERNEL);
    assert_eq!(got, Ok(Some(pfn)));
    assert!(m.has(pfn, pg::LOCKED));
    assert_eq!(m.rc(pfn), 2);
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);

    // CREAT on a present page returns it; nothing new is allocated.
    let free = m.vm(VmItem::NrFreePages);
    let got = m
        .sim
        .pagecache_get_page(ino, 0, fgp::CREAT | fgp::LOCK, Gfp::KERNEL);
    assert_eq!(got, Ok(Some(pfn)));
    assert_eq!(m.vm(VmItem::NrFreePages), free);
    assert_eq!(m.vm(VmItem::NrFilePages), files);
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    assert_eq!(m.rc(pfn), 1);
    m.check();
}

#[test]
fn fgp_lock_contention_sleeps_or_fails_without_leaking_a_reference() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let pfn = m.cached_page(ino, 0, true);
    assert!(m.sim.trylock_page(pfn), "someone else takes the lock");
    let rc = m.rc(pfn);

    assert_eq!(
        m.sim.pagecache_get_page(ino, 0, fgp::LOCK, Gfp::KERNEL),
        Err(Wait::PageLocked(pfn))
    );
    assert_eq!(m.rc(pfn), rc);
    assert_eq!(
        m.sim
            .pagecache_get_page(ino, 0, fgp::LOCK | fgp::NOWAIT, Gfp::KERNEL),
        Ok(None)
    );
    assert_eq!(m.rc(pfn), rc);
    assert_eq!(
        m.sim.pagecache_get_page(
            ino,
            0,
            fgp::LOCK | fgp::NOWAIT | fgp::CREAT | fgp::NOFS,
            Gfp::KERNEL
        ),
        Ok(None),
        "NOWAIT with CREAT on a locked page does not create another"
    );
    assert_eq!(m.rc(pfn), rc);
    assert!(m.has(pfn, pg::LOCKED), "still held by the other owner");
    m.check();
    m.sim.unlock_page(pfn);
    assert_eq!(
        m.sim
            .pagecache_get_page(ino, 0, fgp::LOCK | fgp::NOWAIT, Gfp::KERNEL),
        Ok(Some(pfn))
    );
    assert_eq!(m.rc(pfn), rc + 1);
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    m.check();
}

#[test]
fn fgp_accessed_with_accessed_init_marks_new_pages_before_insertion() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let mark0 = m.prof(KFunc::MarkPageAccessed);
    let init0 = m.prof(KFunc::InitPageAccessed);
    let pfn = m
        .sim
        .pagecache_get_page(ino, 0, fgp::CREAT | fgp::ACCESSED, Gfp::KERNEL)
        .unwrap()
        .unwrap();
    assert!(m.has(pfn, pg::REFERENCED));
    assert!(
        m.prof(KFunc::InitPageAccessed) > init0,
        "init_page_accessed ran"
    );
    assert_eq!(
        m.prof(KFunc::MarkPageAccessed),
        mark0,
        "a new page pays no mark_page_accessed"
    );
    // The flag was set with a plain RMW: init_page_accessed's whole cost is below one atomic.
    assert!(m.prof(KFunc::InitPageAccessed) - init0 < m.sim.costs.atomic_rmw_ps);
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    m.sim.lru_add_drain();

    // A found page gets mark_page_accessed: referenced → activation queued.
    let got = m
        .sim
        .pagecache_get_page(ino, 0, fgp::ACCESSED, Gfp::KERNEL)
        .unwrap();
    assert_eq!(got, Some(pfn));
    assert!(m.prof(KFunc::MarkPageAccessed) > mark0);
    assert!(m.sim.pvecs[0].activate.contains(pfn));
    m.sim.put_page(pfn);
    m.sim.lru_add_drain();
    assert!(m.on_list(pfn, LruList::ActiveFile));

    // A found unreferenced page becomes referenced.
    let q = m.cached_page(ino, 1, true);
    let got = m
        .sim
        .pagecache_get_page(ino, 1, fgp::ACCESSED | fgp::LOCK, Gfp::KERNEL)
        .unwrap();
    assert_eq!(got, Some(q));
    assert!(m.has(q, pg::REFERENCED) && m.has(q, pg::LOCKED));
    m.sim.unlock_page(q);
    m.sim.put_page(q);
    m.check();
}

#[test]
fn fgp_accessed_is_ignored_without_accessed_init() {
    let mut m = machine(Features::vanilla());
    let (_, ino) = m.open("/mnt/f");
    let mark0 = m.prof(KFunc::MarkPageAccessed);
    let pfn = m
        .sim
        .pagecache_get_page(ino, 0, fgp::CREAT | fgp::ACCESSED, Gfp::KERNEL)
        .unwrap()
        .unwrap();
    assert!(!m.has(pfn, pg::REFERENCED));
    assert_eq!(m.prof(KFunc::InitPageAccessed), 0);
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    m.sim.lru_add_drain();
    let got = m
        .sim
        .pagecache_get_page(ino, 0, fgp::ACCESSED, Gfp::KERNEL)
        .unwrap();
    assert_eq!(got, Some(pfn));
    assert!(!m.has(pfn, pg::REFERENCED));
    assert_eq!(m.prof(KFunc::MarkPageAccessed), mark0);
    m.sim.put_page(pfn);
    m.check();
}

/// The page state a wrapper is tried on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Absent,
    Present,
    Locked,
}

/// What a wrapper call returned, reduced to what the tests compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Got {
    Miss,
    Page,
    LockedPage,
    Sleeps,
}

fn try_wrapper(name: &str, state: State, features: Features) -> (Got, M, Option<Pfn>, u32) {
    let mut m = machine(features);
    let (_, ino) = m.open("/mnt/f");
    let existing = match state {
        State::Absent => None,
        State::Present => Some(m.cached_page(ino, 2, true)),
        State::Locked => {
            let p = m.cached_page(ino, 2, true);
            assert!(m.sim.trylock_page(p));
            Some(p)
        }
    };
    let rc0 = existing.map(|p| m.rc(p));
    let files0 = m.vm(VmItem::NrFilePages);
    let r: Result<Option<Pfn>, Wait> = match name {
        "find_get_page" => Ok(m.sim.find_get_page(ino, 2)),
        "find_lock_page" => m.sim.find_lock_page(ino, 2),
        "find_or_create_page" => m.sim.find_or_create_page(ino, 2, Gfp::KERNEL),
        "grab_cache_page_nowait" => Ok(m.sim.grab_cache_page_nowait(ino, 2)),
        "grab_cache_page_write_begin" => m.sim.grab_cache_page_write_begin(ino, 2, true, false),
        _ => unreachable!(),
    };
    let got = match r {
        Err(Wait::PageLocked(p)) => {
            assert_eq!(Some(p), existing, "{name}: sleeps on the right page");
            assert_eq!(Some(m.rc(p)), rc0, "{name}: no reference leaked");
            Got::Sleeps
        }
        Err(w) => panic!("{name}: unexpected wait {w:?}"),
        Ok(None) => {
            if let (Some(p), Some(rc)) = (existing, rc0) {
                assert_eq!(m.rc(p), rc, "{name}: no reference leaked");
            }
            assert_eq!(m.vm(VmItem::NrFilePages), files0);
            Got::Miss
        }
        Ok(Some(p)) => {
            match existing {
                Some(e) => {
                    assert_eq!(p, e, "{name}: returns the cached page");
                    assert_eq!(m.rc(p), rc0.unwrap() + 1, "{name}: one more reference");
                    assert_eq!(m.vm(VmItem::NrFilePages), files0);
                }
                None => {
                    assert_eq!(m.vm(VmItem::NrFilePages), files0 + 1, "{name}: created");
                    assert_eq!(m.sim.inode(ino).mapping.tree.lookup(2), Entry::Page(p));
                    assert_eq!(m.rc(p), 3, "{name}: caller + cache + pagevec");
                }
            }
            if m.has(p, pg::LOCKED) {
                Got::LockedPage
            } else {
                Got::Page
            }
        }
    };
    if let Err(e) = check_all(&m.sim) {
        panic!("{name} on {state:?}: {e}");
    }
    let pfn = existing.or(r.unwrap_or_default());
    (got, m, pfn, ino)
}

#[test]
fn wrappers_on_absent_present_and_locked_pages() {
    use Got::*;
    use State::*;
    let table: &[(&str, [Got; 3])] = &[
        ("find_get_page", [Miss, Page, LockedPage]),
        ("find_lock_page", [Miss, LockedPage, Sleeps]),
        ("find_or_create_page", [LockedPage, LockedPage, Sleeps]),
        ("grab_cache_page_nowait", [LockedPage, LockedPage, Miss]),
        (
            "grab_cache_page_write_begin",
            [LockedPage, LockedPage, Sleeps],
        ),
    ];
    for features in [Features::patched(), Features::vanilla()] {
        for (name, want) in table {
            for (state, want) in [Absent, Present, Locked].into_iter().zip(want) {
                let (got, _, _, _) = try_wrapper(name, state, features.clone());
                assert_eq!(
                    got, *want,
                    "{name} on a {state:?} page ({:?})",
                    features.accessed_init
                );
            }
        }
    }
}

#[test]
fn wrappers_honour_accessed_as_their_flags_say() {
    // find_or_create_page and grab_cache_page_write_begin pass FGP_ACCESSED; the others
    // do not.
    for (name, accessed) in [
        ("find_get_page", false),
        ("find_lock_page", false),
        ("find_or_create_page", true),
        ("grab_cache_page_nowait", false),
        ("grab_cache_page_write_begin", true),
    ] {
        for state in [State::Absent, State::Present] {
            let (got, m, pfn, _) = try_wrapper(name, state, Features::patched());
            if got == Got::Miss {
                continue;
            }
            let pfn = pfn.unwrap();
            assert_eq!(
                m.has(pfn, pg::REFERENCED),
                accessed,
                "{name} on {state:?} (patched): PG_referenced"
            );
            let (_, m, pfn, _) = try_wrapper(name, state, Features::vanilla());
            assert!(
                !m.has(pfn.unwrap(), pg::REFERENCED),
                "{name} on {state:?} (vanilla) must not mark"
            );
        }
    }
}

#[test]
fn fgp_creat_without_memory_fails_cleanly() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let free0 = m.vm(VmItem::NrFreePages);
    // Take every frame the allocator will give (nothing is reclaimable).
    let mut held = Vec::new();
    while let Ok(p) = m.sim.alloc_page(Gfp::KERNEL) {
        held.push(p);
        assert!(held.len() <= m.sim.mem.len(), "allocator never runs dry");
    }
    let files = m.vm(VmItem::NrFilePages);
    for flags in [
        fgp::CREAT,
        fgp::CREAT | fgp::LOCK | fgp::ACCESSED | fgp::WRITE,
    ] {
        assert_eq!(
            m.sim.pagecache_get_page(ino, 0, flags, Gfp::KERNEL),
            Ok(None),
            "flags {flags:#x}"
        );
    }
    assert_eq!(m.sim.grab_cache_page_nowait(ino, 0), None);
    assert_eq!(m.vm(VmItem::NrFilePages), files);
    assert_eq!(m.sim.inode(ino).mapping.tree.lookup(0), Entry::Empty);
    m.check();
    for p in held {
        m.sim.put_page(p);
    }
    assert_eq!(m.vm(VmItem::NrFreePages), free0);
    m.check();
}

#[test]
fn a_shadow_entry_is_a_miss_and_creat_consumes_it() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    // A shadow from long ago: the refault distance exceeds the (empty) active list.
    m.sim.lruvecs[0].inactive_age = 1_000;
    let shadow = pack_shadow(10, 0, 0, false);
    m.sim
        .inode_mut(ino)
        .mapping
        .tree
        .store(4, Entry::Shadow(shadow));
    m.sim.tree_events(ino);
    m.check();
    assert_eq!(m.sim.find_get_page(ino, 4), None);
    assert_eq!(m.sim.find_lock_page(ino, 4), Ok(None));
    assert_eq!(
        m.sim
            .pagecache_get_page(ino, 4, fgp::LOCK | fgp::NOWAIT, Gfp::KERNEL),
        Ok(None)
    );
    assert!(m.sim.grab_cache_page_nowait(ino, 4).is_some());
    let tree = &m.sim.inode(ino).mapping.tree;
    assert_eq!(tree.nr_shadows(), 0, "the shadow was consumed");
    let Entry::Page(pfn) = tree.lookup(4) else {
        panic!("no page at 4")
    };
    assert_eq!(m.vm(VmItem::WorkingsetRefault), 1);
    assert_eq!(m.vm(VmItem::WorkingsetActivate), 0);
    assert!(!m.has(pfn, pg::ACTIVE));
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    m.sim.lru_add_drain();
    assert!(m.on_list(pfn, LruList::InactiveFile));
    m.check();
}

#[test]
fn a_recent_shadow_activates_the_refaulting_page() {
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let age = m.inactive_age();
    m.sim
        .inode_mut(ino)
        .mapping
        .tree
        .store(0, Entry::Shadow(pack_shadow(age, 0, 0, false)));
    let pfn = m
        .sim
        .find_or_create_page(ino, 0, Gfp::KERNEL)
        .unwrap()
        .unwrap();
    assert_eq!(m.vm(VmItem::WorkingsetRefault), 1);
    assert_eq!(m.vm(VmItem::WorkingsetActivate), 1);
    assert!(m.has(pfn, pg::ACTIVE));
    assert_eq!(m.inactive_age(), age + 1, "workingset_activation");
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    m.sim.lru_add_drain();
    assert!(m.on_list(pfn, LruList::ActiveFile));
    m.check();
}

/// A write that brings an evicted page back (write_begin: FGP_WRITE, __GFP_WRITE on a
/// dirty-accounted mapping) consumes its shadow entry; from v4.7 (`read-only-refault`, "mm:
/// workingset: only do workingset activations on reads") without a refault — not counted,
/// not activated, however recent the eviction — before it like a read's.
#[test]
fn a_rewritten_evicted_page_is_a_refault_only_before_v4_7() {
    for rule in [false, true] {
        let ctx = format!("read-only-refault {rule}");
        let mut f = Features::patched();
        f.read_only_refault = rule;
        let mut m = machine(f);
        let (fd, ino) = m.open("/mnt/f");
        let age = m.inactive_age();
        for idx in [0, 1] {
            m.sim
                .inode_mut(ino)
                .mapping
                .tree
                .store(idx, Entry::Shadow(pack_shadow(age, 0, 0, false)));
        }
        m.sim.tree_events(ino);
        assert_eq!(m.pwrite(fd, PAGE_SIZE, 0), OpResult::Bytes(PAGE_SIZE));
        assert_eq!(
            m.sim.inode(ino).mapping.tree.nr_shadows(),
            1,
            "{ctx}: consumed"
        );
        let pfn = m.page(ino, 0);
        let refaulted = u64::from(!rule) as i64;
        assert_eq!(m.vm(VmItem::WorkingsetRefault), refaulted, "{ctx}");
        assert_eq!(m.vm(VmItem::WorkingsetActivate), refaulted, "{ctx}");
        assert_eq!(m.has(pfn, pg::ACTIVE), !rule, "{ctx}");
        // A page the read path adds at the other shadow is a refault in both eras.
        let p1 = m
            .sim
            .find_or_create_page(ino, 1, Gfp::KERNEL)
            .unwrap()
            .unwrap();
        assert_eq!(m.vm(VmItem::WorkingsetRefault), refaulted + 1, "{ctx}");
        m.sim.unlock_page(p1);
        m.sim.put_page(p1);
        m.sim.lru_add_drain();
        m.check();
    }
}

// ---------------------------------------------------------------------------------------
// 5. write then read
// ---------------------------------------------------------------------------------------

fn write_then_read(path: &str, features: Features) {
    let mut m = machine(features);
    let (fd, ino) = m.open(path);
    let len = 5 * PAGE_SIZE + 123;
    assert_eq!(m.write(fd, len), len);
    assert_eq!(m.sim.inode(ino).size, len);
    assert_eq!(m.sim.inode(ino).mapping.tree.nr_pages(), 6);
    m.check();
    // The file position is at the end: a read there returns 0 bytes.
    assert_eq!(m.read(fd, 4096), 0);
    m.close(fd);
    let (fd, _) = m.open(path);
    assert_eq!(m.read(fd, 1000), 1000);
    assert_eq!(m.read(fd, 10 * PAGE_SIZE), len - 1000, "stops at i_size");
    assert_eq!(m.read(fd, 1), 0, "EOF");
    assert_eq!(m.pread(fd, 100, len - 50), 50);
    assert_eq!(m.pread(fd, 100, len + PAGE_SIZE * 3), 0, "past EOF");
    assert_eq!(m.sim.tasks[m.tid].stats.write_bytes, len);
    assert_eq!(
        m.sim.tasks[m.tid].stats.read_bytes,
        len + 50,
        "read byte counts"
    );
    assert!(
        m.sim.oracle_violations.is_empty(),
        "{:?}",
        m.sim.oracle_violations
    );
    m.check();
}

#[test]
fn write_then_read_tmpfs() {
    write_then_read("/tmp/f", Features::patched());
    write_then_read("/tmp/f", Features::vanilla());
}

#[test]
fn write_then_read_blockfs() {
    write_then_read("/mnt/f", Features::patched());
    write_then_read("/mnt/f", Features::vanilla());
}

#[test]
fn blockfs_writes_dirty_accounted_pages_and_tmpfs_does_not() {
    let mut m = machine(Features::patched());
    let (fd, _) = m.open("/mnt/f");
    m.write(fd, 7 * PAGE_SIZE);
    assert_eq!(m.vm(VmItem::NrDirty), 7);
    assert_eq!(m.vm(VmItem::NrDirtied), 7);
    // Rewriting dirty pages does not account them again.
    m.close(fd);
    let (fd, _) = m.open("/mnt/f");
    m.write(fd, 3 * PAGE_SIZE);
    assert_eq!(m.vm(VmItem::NrDirty), 7);
    let (fd2, ino2) = m.open("/tmp/g");
    m.write(fd2, 4 * PAGE_SIZE);
    assert_eq!(m.vm(VmItem::NrDirty), 7, "tmpfs pages are not accounted");
    assert_eq!(m.vm(VmItem::NrShmem), 4);
    let pfn = m.page(ino2, 0);
    assert!(m.has(pfn, pg::DIRTY) && m.has(pfn, pg::UPTODATE) && !m.has(pfn, pg::LOCKED));
    m.check();
}

/// shrink_page_list meets dirty file pages in direct reclaim: with `kswapd-file-writeback`
/// (v3.2) it leaves them to the flusher (PG_reclaim, nr_vmscan_immediate_reclaim, no IO);
/// without it (2.6.x) it writes them itself with pageout (nr_vmscan_write, PG_writeback,
/// the pages clean) — unless the allocation may not enter the filesystem (GFP_NOFS).
#[test]
fn direct_reclaim_writes_dirty_file_pages_only_before_v3_2() {
    for (rule, gfp, writes) in [
        (true, Gfp::KERNEL, false),
        (false, Gfp::KERNEL, true),
        (false, Gfp::NOFS, false),
    ] {
        let ctx = format!("kswapd-file-writeback {rule}, __GFP_FS {}", gfp.fs);
        let mut f = Features::vanilla();
        f.kswapd_file_writeback = rule;
        let mut m = machine(f);
        let (fd, ino) = m.open("/mnt/f");
        m.write(fd, 64 * PAGE_SIZE);
        assert_eq!(m.vm(VmItem::NrDirty), 64, "{ctx}");
        m.sim.try_to_free_pages(gfp);
        let under_writeback = (0..64)
            .filter(|&i| m.has(m.page(ino, i), pg::WRITEBACK))
            .count() as i64;
        if writes {
            assert!(m.vm(VmItem::NrVmscanWrite) > 0, "{ctx}: pageout ran");
            assert_eq!(under_writeback, m.vm(VmItem::NrVmscanWrite), "{ctx}");
            assert_eq!(m.vm(VmItem::NrDirty), 64 - under_writeback, "{ctx}");
        } else {
            assert_eq!(m.vm(VmItem::NrVmscanWrite), 0, "{ctx}: no pageout");
            assert_eq!(under_writeback, 0, "{ctx}");
            assert_eq!(m.vm(VmItem::NrDirty), 64, "{ctx}: still dirty");
            assert!(
                m.vm(VmItem::NrVmscanImmediateReclaim) > 0,
                "{ctx}: left to the flusher"
            );
        }
        complete_io(&mut m.sim);
        m.check();
    }
}

/// Limit reclaim meets file pages under writeback. With cgroup writeback (cgroup v2) it
/// tags each (PG_reclaim) and activates it, however often it met it (shrink_folio_list's
/// case 2: writeback throttling is sane). Without (cgroup v1's legacy hierarchy) it does
/// so the first time only: a page it tagged before makes it wait for that page's
/// writeback (case 3, folio_wait_writeback) — the page stays on the inactive list, and
/// the charging task is left to sleep on the first such page.
#[test]
fn legacy_limit_reclaim_waits_on_a_page_it_tagged_before() {
    for v1 in [false, true] {
        let ctx = format!("cgroup v1 {v1}");
        // 16 order-0 pages, not one written folio.
        let (mut m, a) = small_cgroup_machine(v1, "16MiB");
        assert_eq!(m.sim.cgroup_v1, v1, "{ctx}");
        let (fd, ino) = m.open("/mnt/f");
        m.write(fd, 16 * PAGE_SIZE);
        m.sim.lru_add_drain();
        // Writeback starts on all 16 pages; the IO stays in flight.
        let mut progress = 0;
        assert!(
            m.sim.sys_fdatasync(m.tid, fd, &mut progress).is_err(),
            "{ctx}"
        );
        let pages: Vec<Pfn> = (0..16).map(|i| m.page(ino, i)).collect();
        assert!(pages.iter().all(|&p| m.has(p, pg::WRITEBACK)), "{ctx}");
        // Reclaim tagged the first 8 before.
        for &p in &pages[..8] {
            m.sim.mem[p as usize].flags |= pg::RECLAIM;
        }
        let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
        sc.target_memcg = a;
        m.sim.memcg_reclaim_wait = None;
        let reclaimed = m
            .sim
            .shrink_inactive_list(0, a, 32, LruList::InactiveFile, &mut sc);
        assert_eq!(reclaimed, 0, "{ctx}");
        m.sim.lru_add_drain();
        for (i, &p) in pages.iter().enumerate() {
            assert!(m.has(p, pg::RECLAIM), "{ctx}: page {i} tagged");
            let waited = v1 && i < 8;
            assert_eq!(m.has(p, pg::ACTIVE), !waited, "{ctx}: page {i} active");
        }
        match m.sim.memcg_reclaim_wait {
            Some(ReclaimWait::Writeback(p)) => {
                assert!(v1, "{ctx}");
                assert!(
                    pages[..8].contains(&p),
                    "{ctx}: waits on a page it tagged before"
                );
            }
            None => assert!(!v1, "{ctx}: case 3 leaves a wait"),
            other => panic!("{ctx}: {other:?}"),
        }
        complete_io(&mut m.sim);
        m.check();
    }
}

/// A unit machine of `ram` (6.18, order-0 pages) whose task runs in cgroup `a`
/// (memory.max 8 MiB), on cgroup v1's hierarchy or v2's.
fn small_cgroup_machine(v1: bool, ram: &str) -> (M, mmsim::mm::memcontrol::MemcgId) {
    let text = format!(
        "{}{}\ncgroup = \"a\"\n\n[[cgroups]]\nname = \"a\"\nmemory_max = \"8MiB\"\n",
        if v1 { "cgroup_version = 1\n" } else { "" },
        unit_machine_toml(
            "unit",
            ram,
            "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"1MiB\""
        )
    );
    let mut features = mmsim::kernel::KernelEra::V6_18
        .features("patched")
        .expect("preset");
    features.large_folios = false;
    let m = M::new(&text, features);
    let a = m.sim.memcg_by_name("a").expect("cgroup a");
    (m, a)
}

/// Legacy limit reclaim (cgroup v1, 6.1's `memcg-v1-dirty-throttle`) that isolates only
/// dirty pages not queued for IO wakes the flushers and sleeps in reclaim_throttle, then
/// scans on: its pass ends at that batch (the charge sleeps and reclaims again after), so
/// it has not met the rest of the dirty pages before the flusher ran. v2's reclaim, sane,
/// goes on down the priorities and meets them all dirty.
#[test]
fn legacy_limit_reclaim_ends_its_pass_where_it_sleeps() {
    for v1 in [false, true] {
        let ctx = format!("cgroup v1 {v1}");
        let (mut m, a) = small_cgroup_machine(v1, "64MiB");
        let (fd, _) = m.open("/mnt/f");
        // (128 pages: below the 8 MiB domain's background threshold on v2.)
        m.write(fd, 128 * PAGE_SIZE);
        m.sim.lru_add_drain();
        let dirty = m.vm(VmItem::NrDirty);
        assert!(dirty >= 128, "{ctx}: {dirty} dirty");
        let reclaimed = m.sim.try_to_free_mem_cgroup_pages(a, 32, Gfp::KERNEL, true);
        assert_eq!(reclaimed, 0, "{ctx}: every page is dirty");
        let met = m.vm(VmItem::NrVmscanImmediateReclaim);
        if v1 {
            assert!(
                matches!(m.sim.memcg_reclaim_wait, Some(ReclaimWait::Throttle(0))),
                "{ctx}: {:?}",
                m.sim.memcg_reclaim_wait
            );
            assert!((1..=32).contains(&met), "{ctx}: one batch met, {met} pages");
        } else {
            assert!(m.sim.memcg_reclaim_wait.is_none(), "{ctx}");
            assert!(met >= 100, "{ctx}: the pass met {met} dirty pages");
        }
        complete_io(&mut m.sim);
        m.check();
    }
}

/// A limit write (memory.limit_in_bytes) on cgroup v1 below a cgroup full of dirty pages:
/// its reclaim sleeps where the kernel's does (reclaim_throttle, the flushers woken), and
/// the write is resumed after — no OOM kill; once the pages are written back it gets its
/// limit.
#[test]
fn a_legacy_limit_write_over_dirty_pages_sleeps_instead_of_killing() {
    let (mut m, a) = small_cgroup_machine(true, "64MiB");
    let (fd, ino) = m.open("/mnt/f");
    m.write(fd, 128 * PAGE_SIZE);
    m.sim.lru_add_drain();
    let usage = m.sim.memcgs[a as usize].usage;
    let file = mmsim::workload::CgroupFile::MemoryMax;
    let limit = Some((usage - 64) * PAGE_SIZE);
    let r = m.sim.cgroup_write("a", file, limit);
    assert!(r.is_err(), "the write sleeps in reclaim: {r:?}");
    assert_eq!(m.sim.memcgs[a as usize].events.oom_kill, 0);
    let mut done = false;
    for _ in 0..50 {
        // The flusher the reclaim woke (a kthread: run here by hand), then the IO.
        let _ = m
            .sim
            .write_cache_pages(ino, u64::MAX, mmsim::fs::writeback::SyncMode::None);
        complete_io(&mut m.sim);
        if let Ok(r) = m.sim.cgroup_write("a", file, limit) {
            assert!(matches!(r, mmsim::workload::OpResult::Bytes(_)), "{r:?}");
            done = true;
            break;
        }
    }
    assert!(done, "the limit write never finished");
    assert!(m.sim.memcgs[a as usize].usage <= usage - 64);
    assert_eq!(m.sim.memcgs[a as usize].events.oom_kill, 0);
    m.check();
}

/// A machine with `features` (and `read-only-activation`, so written pages stay
/// unreferenced and reclaimable) whose /mnt/f holds `pages` dirty pages, all on the
/// inactive file list.
fn dirty_unreferenced_file(mut features: Features, pages: u64) -> (M, u32) {
    features.read_only_activation = true;
    let mut m = machine(features);
    let (fd, ino) = m.open("/mnt/f");
    m.write(fd, pages * PAGE_SIZE);
    m.sim.lru_add_drain();
    (m, ino)
}

/// kswapd meets dirty file pages at the tail of the inactive list while the node is
/// flagged dirty (PGDAT_DIRTY): up to 6.15 it writes them itself with pageout
/// (nr_vmscan_write, PG_writeback, the pages clean); from 6.16 (`no-reclaim-file-writeback`,
/// "fs: Remove aops->writepage") pageout returns PAGE_ACTIVATE for a filesystem page, so
/// they are activated, still dirty, with no IO.
#[test]
fn kswapd_writes_dirty_file_pages_only_before_v6_16() {
    for rule in [false, true] {
        let ctx = format!("no-reclaim-file-writeback {rule}");
        let mut f = Features::patched();
        f.no_reclaim_file_writeback = rule;
        let (mut m, ino) = dirty_unreferenced_file(f, 64);
        assert_eq!(m.vm(VmItem::NrDirty), 64, "{ctx}");
        m.sim.reclaim[0].zone_dirty = true;
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        let act0 = m.vm(VmItem::Pgactivate);
        let reclaimed =
            m.sim
                .shrink_inactive_list(0, ROOT_MEM_CGROUP, 32, LruList::InactiveFile, &mut sc);
        assert_eq!(
            reclaimed, 0,
            "{ctx}: dirty pages are not freed in this pass"
        );
        let pages: Vec<Pfn> = (0..64).map(|i| m.page(ino, i)).collect();
        let under_writeback = pages.iter().filter(|&&p| m.has(p, pg::WRITEBACK)).count();
        let active = pages
            .iter()
            .filter(|&&p| m.on_list(p, LruList::ActiveFile))
            .count();
        if rule {
            assert_eq!(m.vm(VmItem::NrVmscanWrite), 0, "{ctx}: no pageout IO");
            assert_eq!(under_writeback, 0, "{ctx}");
            assert_eq!(m.vm(VmItem::NrDirty), 64, "{ctx}: still dirty");
            assert_eq!(active, 32, "{ctx}: activated");
            assert_eq!(m.vm(VmItem::Pgactivate) - act0, 32, "{ctx}");
        } else {
            assert_eq!(m.vm(VmItem::NrVmscanWrite), 32, "{ctx}: pageout ran");
            assert_eq!(under_writeback, 32, "{ctx}");
            assert_eq!(m.vm(VmItem::NrDirty), 32, "{ctx}");
            assert_eq!(active, 0, "{ctx}");
        }
        complete_io(&mut m.sim);
        m.check();
    }
}

/// The end of kswapd's shrink_node (the 5.16 form) flags the node dirty (PGDAT_DIRTY) when
/// every file page the pass took was dirty and unqueued: up to 6.12 also when it took none
/// (0 == 0; here an anonymous-only LRU), from 6.13 (`pgdat-dirty-needs-dirty`, "mm: fix
/// shrink nr.unqueued_dirty counter issue") only after meeting such a page.
#[test]
fn kswapd_flags_the_node_dirty_after_a_pass_without_file_pages_only_before_v6_13() {
    for rule in [false, true] {
        let mut f = mmsim::kernel::KernelEra::V6_1
            .features("patched")
            .expect("preset");
        f.pgdat_dirty_needs_dirty = rule;
        let mut m = machine(f);
        // Anonymous pages only on the LRU lists: the pass takes no file page.
        let tid = m.tid;
        let addr = common::mmap_at(&mut m.sim, tid, None, 64 * PAGE_SIZE, 0, 3, false);
        common::touch_pages(&mut m.sim, 0, tid, addr, 64, true).expect("touched");
        m.sim.lru_add_drain();
        assert_eq!(
            m.sim
                .lruvec_lru_size_hier(ROOT_MEM_CGROUP, 0, LruList::InactiveFile),
            0
        );
        m.sim.reclaim[0].zone_dirty = false;
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        m.sim.shrink_node(0, &mut sc);
        assert_eq!(sc.nr.file_taken, 0);
        assert_eq!(
            m.sim.reclaim[0].zone_dirty, !rule,
            "pgdat-dirty-needs-dirty {rule}"
        );
    }
}

/// kswapd under PGDAT_DIRTY writes a dirty file page at once up to v4.10; from v4.11
/// (`dirty-seen-twice`, "mm: vmscan: only write dirty pages that the scanner has seen
/// twice") the first pass only tags it PG_reclaim and leaves it to the flusher, and the
/// pass that meets it again writes it.
#[test]
fn kswapd_writes_a_dirty_page_the_second_time_it_meets_it_from_v4_11() {
    for rule in [false, true] {
        let ctx = format!("dirty-seen-twice {rule}");
        let mut f = Features::patched();
        f.dirty_seen_twice = rule;
        let (mut m, ino) = dirty_unreferenced_file(f, 32);
        let pages: Vec<Pfn> = (0..32).map(|i| m.page(ino, i)).collect();
        let mut written_after = Vec::new();
        for _pass in 0..2 {
            m.sim.reclaim[0].zone_dirty = true;
            let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
            m.sim
                .shrink_inactive_list(0, ROOT_MEM_CGROUP, 32, LruList::InactiveFile, &mut sc);
            written_after.push(m.vm(VmItem::NrVmscanWrite));
        }
        if rule {
            assert_eq!(
                written_after,
                vec![0, 32],
                "{ctx}: deferred once, then written"
            );
            assert_eq!(m.vm(VmItem::NrVmscanImmediateReclaim), 32, "{ctx}");
        } else {
            assert_eq!(written_after, vec![32, 32], "{ctx}: written at once");
            assert_eq!(m.vm(VmItem::NrVmscanImmediateReclaim), 0, "{ctx}");
        }
        assert!(
            pages.iter().all(|&p| m.has(p, pg::WRITEBACK)),
            "{ctx}: all under writeback in the end"
        );
        complete_io(&mut m.sim);
        m.check();
    }
}

/// The per-CPU LRU add batch by era: PAGEVEC_SIZE is 14 up to v4.15, 15 from v4.16
/// (`pagevec-15`), 31 from v6.9 (`folio-batch-31`); v4.2 moves a full batch to the LRU
/// before adding the next page, v4.8+ (`lru-add-flush-full`) as soon as the page that fills
/// it is added. New pages written one at a time reach the LRU a batch at a time.
#[test]
fn new_pages_reach_the_lru_a_batch_at_a_time_by_era() {
    use mmsim::kernel::KernelEra;
    for (era, size, flush_full) in [
        (KernelEra::V4_2, 14, false),
        (KernelEra::V4_14, 14, true),
        (KernelEra::V6_1, 15, true),
        (KernelEra::V6_18, 31, true),
    ] {
        let f = era.features("patched").expect("preset");
        assert_eq!(mmsim::mm::swap::pagevec_size(&f), size, "{era}");
        let mut m = machine(f);
        let (fd, ino) = m.open("/mnt/f");
        // An emptied batch keeps the era's size.
        m.sim.lru_add_drain();
        for k in 1..=3 * size as u64 + 1 {
            m.write(fd, PAGE_SIZE);
            let on_lru = (0..k).filter(|&i| m.has(m.page(ino, i), pg::LRU)).count() as u64;
            let batches = if flush_full {
                k / size as u64
            } else {
                (k - 1) / size as u64
            };
            assert_eq!(on_lru, batches * size as u64, "{era}: after {k} pages");
        }
        m.check();
    }
}

/// release_pages takes the lru_lock once for a run of pages that share it, by the rule of
/// its era: PAGEVEC_SIZE (14) pages per call before v3.17, the whole list with the lock
/// dropped every SWAP_CLUSTER_MAX (32) pages from v3.17 (`release-pages-lock-batch`), and
/// a folio_batch of 31 per call from v6.9 (`folio-batch-31`). The pages are freed, off
/// the LRU, either way.
#[test]
fn release_pages_holds_the_lru_lock_across_pages_by_era() {
    use mmsim::kernel::KernelEra;
    const PAGES: u64 = 64;
    // (era, lru_lock acquisitions for the 64 pages).
    for (era, want) in [
        (KernelEra::new(3, 10), 5), // 14 + 14 + 14 + 14 + 8
        (KernelEra::V4_2, 2),       // 32 + 32
        (KernelEra::V6_1, 2),
        (KernelEra::V6_18, 3), // 31 + 31 + 2
    ] {
        let f = era.features("patched").expect("preset");
        let mut m = machine(f);
        let (_, ino) = m.open("/mnt/f");
        let pages: Vec<Pfn> = (0..PAGES).map(|i| m.cached_page(ino, i, false)).collect();
        m.sim.lru_add_drain();
        // Held by us, the pages outlive their removal from the page cache and stay on the
        // LRU until our references go.
        for &p in &pages {
            m.sim.get_page(p);
        }
        m.sim
            .truncate_inode_pages_range(ino, 0, u64::MAX)
            .expect("no wait");
        assert!(
            pages.iter().all(|&p| m.has(p, pg::LRU) && m.rc(p) == 1),
            "{era}"
        );
        let before = m.lru_locks_taken();
        m.sim.release_pages(&pages);
        assert_eq!(
            m.lru_locks_taken() - before,
            want,
            "{era}: lru_lock acquisitions"
        );
        assert!(
            pages
                .iter()
                .all(|&p| m.has(p, pg::BUDDY) && !m.has(p, pg::LRU)),
            "{era}: every page freed"
        );
        m.check();
    }
}

/// activate_page by era: before v3.0 (`activate-page-batch` off) a referenced page
/// accessed again moves to the active list at once, under an lru_lock taken for it alone;
/// from v3.0 it waits in this CPU's activate pagevec until the batch moves.
#[test]
fn activate_page_moves_at_once_before_3_0_and_a_batch_at_a_time_after() {
    use mmsim::kernel::KernelEra;
    for (era, at_once) in [
        (KernelEra::V2_6_30, true),
        (KernelEra::v2_6(39), true),
        (KernelEra::new(3, 0), false),
        (KernelEra::V4_2, false),
    ] {
        let mut m = machine(era.features("vanilla").expect("preset"));
        let (_, ino) = m.open("/mnt/f");
        let pfn = m.cached_page(ino, 0, true);
        m.sim.mem[pfn as usize].flags &= !pg::REFERENCED;
        assert!(m.on_list(pfn, LruList::InactiveFile), "{era}");
        m.sim.mark_page_accessed(pfn);
        let (locks, activated) = (m.lru_locks_taken(), m.vm(VmItem::Pgactivate));
        m.sim.mark_page_accessed(pfn);
        if at_once {
            assert!(m.on_list(pfn, LruList::ActiveFile), "{era}: active at once");
            assert_eq!(
                m.lru_locks_taken() - locks,
                1,
                "{era}: one lru_lock for the page"
            );
        } else {
            assert!(
                m.on_list(pfn, LruList::InactiveFile),
                "{era}: waits in the batch"
            );
            assert_eq!(m.lru_locks_taken(), locks, "{era}: no lock yet");
            m.sim.lru_add_drain();
            assert!(
                m.on_list(pfn, LruList::ActiveFile),
                "{era}: active after the drain"
            );
        }
        assert_eq!(
            m.vm(VmItem::Pgactivate) - activated,
            1,
            "{era}: one pgactivate"
        );
        m.check();
    }
}

/// mark_page_accessed on a referenced page that is still in this CPU's add pagevec (not
/// yet on the LRU): from v3.11 (`lru-cache-activate`) it is made active there and its
/// PG_referenced cleared; before, it is left alone and reaches the inactive list
/// referenced.
#[test]
fn a_page_accessed_in_the_add_pagevec_is_activated_there_from_3_11() {
    use mmsim::kernel::KernelEra;
    for (era, activates) in [
        (KernelEra::V2_6_30, false),
        (KernelEra::new(3, 10), false),
        (KernelEra::new(3, 11), true),
        (KernelEra::V4_2, true),
    ] {
        let mut m = machine(era.features("vanilla").expect("preset"));
        let (_, ino) = m.open("/mnt/f");
        let pfn = m.cached_page(ino, 0, false);
        m.sim.mem[pfn as usize].flags &= !pg::REFERENCED;
        assert!(!m.has(pfn, pg::LRU), "{era}: in the add pagevec");
        m.sim.mark_page_accessed(pfn);
        m.sim.mark_page_accessed(pfn);
        assert_eq!(m.has(pfn, pg::ACTIVE), activates, "{era}: PG_active");
        assert_eq!(
            m.has(pfn, pg::REFERENCED),
            !activates,
            "{era}: PG_referenced"
        );
        m.sim.lru_add_drain();
        let list = if activates {
            LruList::ActiveFile
        } else {
            LruList::InactiveFile
        };
        assert!(m.on_list(pfn, list), "{era}: on {list:?} after the drain");
        m.check();
    }
}

/// A read through one open file marks its pages accessed by the rule of its era:
/// do_generic_file_read (off) skips a page only when the read continues exactly where the
/// previous one stopped inside it; filemap_read (`read-accessed-folio`, v5.11 + v5.19)
/// skips the first page when the read starts in the page where the previous one ended.
#[test]
fn a_read_marks_pages_accessed_by_the_rule_of_its_era() {
    // (pos, len, [(page, marked by the old rule, marked by the new one)])
    type Step = (u64, u64, &'static [(u64, bool, bool)]);
    let steps: [Step; 7] = [
        (0, 1000, &[(0, true, true)]),                     // first read
        (0, 1000, &[(0, true, false)]),                    // the same bytes again
        (1000, 1000, &[(0, false, false)]),                // continues where the last stopped
        (3000, 1096, &[(0, true, false)]),                 // a jump inside the same page
        (0, 4096, &[(0, false, false)]),                   // the whole page after its end
        (4096, 100, &[(1, true, true)]),                   // the next page
        (8192, 8192, &[(2, true, true), (3, true, true)]), // two further pages
    ];
    for rule in [false, true] {
        let mut f = Features::vanilla();
        f.read_accessed_folio = rule;
        let mut m = machine(f);
        let (fd, ino) = m.open("/mnt/f");
        m.write(fd, 4 * PAGE_SIZE);
        m.sim.lru_add_drain();
        for (i, &(pos, len, pages)) in steps.iter().enumerate() {
            // Every page unreferenced on the inactive list: a mark sets PG_referenced.
            for idx in 0..4 {
                let pfn = m.page(ino, idx);
                assert!(m.on_list(pfn, LruList::InactiveFile), "page {idx} inactive");
                m.sim.mem[pfn as usize].flags &= !pg::REFERENCED;
            }
            assert_eq!(m.pread(fd, len, pos), len);
            for &(idx, old, new) in pages {
                assert_eq!(
                    m.has(m.page(ino, idx), pg::REFERENCED),
                    if rule { new } else { old },
                    "read-accessed-folio {rule}: step {i}, pread({pos}, {len}) page {idx}"
                );
            }
        }
        m.check();
    }
}

/// A page written twice through a block filesystem is activated by the write path before
/// v4.7 (write_begin's FGP_ACCESSED with accessed-init, the mark after the copy without
/// it) and stays inactive and unreferenced from v4.7 (`read-only-activation`, "mm:
/// filemap: only do access activations on reads"), unless the code before accessed-init
/// (the vanilla preset) still marks it after the copy. tmpfs's write_begin marks it in
/// every era.
#[test]
fn a_page_written_twice_is_activated_by_the_rule_of_its_era() {
    // (preset, rule, path, activated after the second write)
    let cases = [
        ("patched", false, "/mnt/w", true),
        ("patched", true, "/mnt/w", false),
        ("vanilla", false, "/mnt/w", true),
        ("vanilla", true, "/mnt/w", true),
        ("patched", true, "/tmp/w", true),
        ("vanilla", true, "/tmp/w", true),
    ];
    for (preset, rule, path, activated) in cases {
        let mut f = Features::preset(preset).expect("preset");
        f.read_only_activation = rule;
        let mut m = machine(f);
        let (fd, ino) = m.open(path);
        let act0 = m.vm(VmItem::Pgactivate);
        assert_eq!(m.pwrite(fd, PAGE_SIZE, 0), OpResult::Bytes(PAGE_SIZE));
        m.sim.lru_add_drain();
        let pfn = m.page(ino, 0);
        let what = format!("{preset}, read-only-activation {rule}, {path}");
        assert_eq!(
            m.has(pfn, pg::REFERENCED),
            !rule || preset == "vanilla" || path.starts_with("/tmp"),
            "{what}: referenced after the first write"
        );
        assert_eq!(m.pwrite(fd, 100, 10), OpResult::Bytes(100));
        m.sim.lru_add_drain();
        let (active, inactive) = if path.starts_with("/tmp") {
            (LruList::ActiveAnon, LruList::InactiveAnon)
        } else {
            (LruList::ActiveFile, LruList::InactiveFile)
        };
        assert_eq!(m.on_list(pfn, active), activated, "{what}: active");
        assert_eq!(m.on_list(pfn, inactive), !activated, "{what}: inactive");
        assert_eq!(
            m.vm(VmItem::Pgactivate) - act0,
            i64::from(activated),
            "{what}: pgactivate"
        );
        if !activated {
            assert!(!m.has(pfn, pg::REFERENCED), "{what}: never referenced");
        }
        m.check();
    }
}

/// pread through the page cache, completing IO until it is done.
fn pread_with_io(m: &mut M, fd: u32, len: u64, pos: u64) -> u64 {
    let mut progress = 0;
    for _ in 0..100 {
        match m.sim.sys_read(m.tid, fd, len, Some(pos), &mut progress) {
            Ok(OpResult::Bytes(n)) => return n,
            Ok(other) => panic!("pread({pos}, {len}): {other:?}"),
            Err(_) => {
                complete_io(&mut m.sim);
            }
        }
    }
    panic!("pread({pos}, {len}) never finished");
}

/// Readahead's sequential test (index - prev_pos / PAGE_SIZE <= 1) sees a one-page read that
/// skips a page as sequential from v5.11, where prev_pos is where the last read ended, and
/// as random before, where it is the last page read.
#[test]
fn a_read_that_skips_a_page_is_sequential_for_readahead_from_v5_11() {
    for rule in [false, true] {
        let mut f = Features::vanilla();
        f.read_accessed_folio = rule;
        let text = scenario_text("16MiB") + &common::file_toml("/mnt/data", 64 * PAGE_SIZE, true);
        let mut m = M::new(&text, f);
        let (fd, ino) = m.open("/mnt/data");
        assert_eq!(
            pread_with_io(&mut m, fd, PAGE_SIZE, 10 * PAGE_SIZE),
            PAGE_SIZE
        );
        assert_eq!(
            pread_with_io(&mut m, fd, PAGE_SIZE, 12 * PAGE_SIZE),
            PAGE_SIZE
        );
        let cached = (0..64)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count();
        if rule {
            assert!(
                cached > 2,
                "v5.11+: page 12 starts a readahead window ({cached} cached)"
            );
            assert!(
                matches!(m.entry(ino, 13), Entry::Page(_)),
                "page 13 read ahead"
            );
        } else {
            assert_eq!(cached, 2, "before v5.11: two random one-page reads");
        }
        m.check();
    }
}

/// io-pages-readahead (v4.10, "mm: don't cap request size based on read-ahead setting"):
/// a 1 MiB read of a cold file on a device with 128 KiB readahead reads ahead in one
/// window of the whole request (up to max_sectors_kb, 1280 KiB by default), its marker
/// halfway, and the async window after it: 384 pages cached. Before, windows of 32 pages
/// (the first merged with the next, 64) march through it: 288. With max_sectors_kb no
/// larger than the readahead window the cap stays ra_pages: 288 as well. The same commit
/// bounds the first window merged with the next one by the cap: a 192 KiB read (48 pages)
/// gets a window of 48 pages, its marker at 24, and an async window of 32: 80 pages, where
/// an unbounded merge would read 96 at once (and 4.9's 32-page windows read 96 too).
#[test]
fn a_large_read_reads_ahead_up_to_the_device_request_size_from_v4_10() {
    for (rule, max_sectors_kb, pages, want) in [
        (false, None, 256, 288),
        (true, None, 256, 384),
        (true, Some(128), 256, 288),
        (false, None, 48, 96),
        (true, None, 48, 80),
    ] {
        let mut f = Features::vanilla();
        f.io_pages_readahead = rule;
        let mut text =
            scenario_text("64MiB") + &common::file_toml("/mnt/data", 1024 * PAGE_SIZE, true);
        if let Some(kb) = max_sectors_kb {
            text = text.replace(
                "name = \"sda\"\n",
                &format!("name = \"sda\"\nmax_sectors_kb = {kb}\n"),
            );
        }
        let mut m = M::new(&text, f);
        let (fd, ino) = m.open("/mnt/data");
        let n = pages * PAGE_SIZE;
        assert_eq!(pread_with_io(&mut m, fd, n, 0), n);
        let cached = (0..1024)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count();
        let ctx = format!("rule {rule}, max_sectors_kb {max_sectors_kb:?}, {pages} pages");
        assert_eq!(cached, want, "{ctx}");
        m.check();
    }
}

/// sync-readahead-needed-page (v6.11, "readahead: make sure sync readahead reads needed
/// page"): only a hit on the PG_readahead marker pushes the window forward. A one-page read
/// at 0 leaves the window [0, 4) with its marker on page 1.
/// - A miss at the window's end (page 4) was taken for a marker hit: the window moved to
///   4 and ramped up (8 pages, merged with the next 16: 24), 28 pages cached. From v6.11 it
///   is a miss like any other: not next to the last read, so context readahead (4 cached
///   pages from the start, doubled, + 1: 9 pages from 4), 13 cached.
/// - A miss at the marker's index (page 1 punched out) pushed the window past the page it
///   needs ([4, 12)) and read page 1 on its own: 12 cached, the window at 4. From v6.11 it
///   starts its window at page 1 (init 4 pages, of which 2 and 3 are cached): 5 cached,
///   the window at 1.
#[test]
fn only_a_marker_hit_pushes_the_readahead_window_forward_from_v6_11() {
    for (punch, miss, rule, cached_want, start_want) in [
        (false, 4u64, false, 28usize, 4u64),
        (false, 4, true, 13, 4),
        (true, 1, false, 12, 4),
        (true, 1, true, 5, 1),
    ] {
        let mut f = Features::vanilla();
        f.sync_readahead_needed_page = rule;
        let text = scenario_text("64MiB") + &common::file_toml("/mnt/data", 256 * PAGE_SIZE, true);
        let mut m = M::new(&text, f);
        let (fd, ino) = m.open("/mnt/data");
        assert_eq!(pread_with_io(&mut m, fd, PAGE_SIZE, 0), PAGE_SIZE);
        if punch {
            m.sim
                .truncate_inode_pages_range(ino, PAGE_SIZE, 2 * PAGE_SIZE - 1)
                .expect("punch page 1");
        }
        assert_eq!(
            pread_with_io(&mut m, fd, PAGE_SIZE, miss * PAGE_SIZE),
            PAGE_SIZE
        );
        let cached = (0..256)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count();
        let ctx = format!("rule {rule}, miss at page {miss}");
        assert_eq!(cached, cached_want, "{ctx}");
        let ra = m.sim.tasks[m.tid].fds[fd as usize].unwrap().ra;
        assert_eq!(ra.start, start_want, "{ctx}");
        m.check();
    }
}

/// readahead-natural-boundary (v6.17, "mm/readahead: Terminate async readahead on natural
/// boundary"): reader A reads pages 0 and 1 (a first window of 4 pages, its marker on page
/// 2); reader B, with a fresh readahead state of its own, reads page 2 and hits A's marker:
/// interleaved streams, so the window restarts at the next hole (page 4) with the ramped
/// size of what lay between (2 pages + the 1 asked for: 3, ramped to 6), pages 4..10.
/// From 6.17 an async window ends on a boundary of the order it is read with (order 0 +
/// 2: 4 pages): pages 4..8, 8 pages cached instead of 10.
#[test]
fn an_async_readahead_window_ends_on_a_natural_boundary_from_v6_17() {
    for (rule, cached_want, size_want) in [(false, 10usize, 6u64), (true, 8, 4)] {
        let mut f = Features::vanilla();
        f.sync_readahead_needed_page = true;
        f.readahead_natural_boundary = rule;
        let text = scenario_text("64MiB") + &common::file_toml("/mnt/data", 256 * PAGE_SIZE, true);
        let mut m = M::new(&text, f);
        let (a, ino) = m.open("/mnt/data");
        let (b, _) = m.open("/mnt/data");
        assert_eq!(pread_with_io(&mut m, a, 2 * PAGE_SIZE, 0), 2 * PAGE_SIZE);
        assert_eq!(
            pread_with_io(&mut m, b, PAGE_SIZE, 2 * PAGE_SIZE),
            PAGE_SIZE
        );
        let cached = (0..256)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count();
        assert_eq!(cached, cached_want, "rule {rule}");
        let ra = m.sim.tasks[m.tid].fds[b as usize].unwrap().ra;
        assert_eq!(
            (ra.start, ra.size, ra.async_size),
            (4, size_want, size_want),
            "rule {rule}"
        );
        m.check();
    }
}

/// try_context_readahead (v2.6.31): a fresh file's first miss is not sequential for its
/// own readahead state, but when more pages than it asks for are cached right before it
/// (another reader's stream), it starts a window of history + request pages, doubled
/// history when the file is cached from its start, the async marker on its last page.
/// Before (2.6.30) such a miss reads just the pages asked for.
#[test]
fn a_miss_after_cached_history_starts_a_context_readahead_window() {
    // (history read by another file: pos, pages; then the miss; then the window's last
    // page with the rule)
    for (hist_page, hist_pages, miss, last) in [
        // 20..27 cached: 8 history pages > 1 asked: 9 pages from 28, to 36.
        (20u64, 8u64, 28u64, 36u64),
        // 0..7 cached (an initial window of 8 from 4 pages asked at 0): from the start of
        // the file, so the history counts twice: 16 + 1 pages from 8, to 24.
        (0, 4, 8, 24),
    ] {
        for rule in [false, true] {
            let mut f = Features::vanilla();
            f.context_readahead = rule;
            let text =
                scenario_text("16MiB") + &common::file_toml("/mnt/data", 64 * PAGE_SIZE, true);
            let mut m = M::new(&text, f);
            let (other, ino) = m.open("/mnt/data");
            let n = hist_pages * PAGE_SIZE;
            assert_eq!(pread_with_io(&mut m, other, n, hist_page * PAGE_SIZE), n);
            let cached = |m: &M, i: u64| matches!(m.entry(ino, i), Entry::Page(_));
            assert!(!cached(&m, miss), "page {miss} not read yet");
            let (fd, _) = m.open("/mnt/data");
            assert_eq!(
                pread_with_io(&mut m, fd, PAGE_SIZE, miss * PAGE_SIZE),
                PAGE_SIZE
            );
            let ctx = format!("context-readahead {rule}, history at {hist_page}");
            if rule {
                assert!(
                    (miss..=last).all(|i| cached(&m, i)),
                    "{ctx}: {miss}..={last} read"
                );
                assert!(!cached(&m, last + 1), "{ctx}: the window ends at {last}");
                assert!(
                    m.has(m.page(ino, last), pg::READAHEAD),
                    "{ctx}: async marker on the last page"
                );
            } else {
                assert!(!cached(&m, miss + 1), "{ctx}: just the page asked for");
            }
            m.check();
        }
    }
}

#[test]
fn partial_page_writes_keep_the_rest_of_the_page() {
    for path in ["/tmp/p", "/mnt/p"] {
        let mut m = machine(Features::patched());
        let (fd, ino) = m.open(path);
        // Three small writes inside page 0, then one straddling pages 0 and 1.
        assert_eq!(m.write(fd, 100), 100);
        assert_eq!(m.write(fd, 1000), 1000);
        assert_eq!(m.write(fd, 2000), 2000);
        assert_eq!(m.write(fd, 2000), 2000);
        assert_eq!(m.sim.inode(ino).size, 5100);
        assert_eq!(m.sim.inode(ino).mapping.tree.nr_pages(), 2);
        m.close(fd);
        // Read page 0 back whole, then overwrite page 0 and the start of page 1.
        let (fd, _) = m.open(path);
        assert_eq!(m.pread(fd, 4096, 0), 4096);
        m.close(fd);
        let (fd, _) = m.open(path);
        assert_eq!(m.write(fd, 4200), 4200);
        assert_eq!(m.sim.inode(ino).size, 5100, "overwrite does not grow");
        assert_eq!(m.pread(fd, 1 << 20, 0), 5100);
        assert_eq!(m.pread(fd, 1 << 20, 4000), 1100);
        assert!(
            m.sim.oracle_violations.is_empty(),
            "{path}: {:?}",
            m.sim.oracle_violations
        );
        m.check();
    }
}

#[test]
fn truncating_open_empties_the_file() {
    for path in ["/tmp/t", "/mnt/t"] {
        let mut m = machine(Features::patched());
        let (fd, ino) = m.open(path);
        m.write(fd, 6 * PAGE_SIZE);
        m.close(fd);
        let (fd, ino2) = m.open_with(path, true);
        assert_eq!(ino, ino2);
        assert_eq!(m.sim.inode(ino).size, 0);
        assert_eq!(m.sim.inode(ino).mapping.tree.nr_pages(), 0);
        assert_eq!(m.read(fd, PAGE_SIZE), 0);
        assert_eq!(m.vm(VmItem::NrDirty), 0);
        m.write(fd, 10);
        assert_eq!(m.pread(fd, 100, 0), 10);
        assert!(m.sim.oracle_violations.is_empty());
        m.check();
    }
}

// ---------------------------------------------------------------------------------------
// 6. unlink frees every page
// ---------------------------------------------------------------------------------------

fn unlink_frees(path: &str, keep_open: bool) {
    let mut m = machine(Features::vanilla());
    let free0 = m.vm(VmItem::NrFreePages);
    let (fd, ino) = m.open(path);
    let n = 40;
    m.write(fd, n * PAGE_SIZE + 7);
    m.read(fd, 1);
    assert_eq!(m.vm(VmItem::NrFilePages), n as i64 + 1);
    assert!(m.vm(VmItem::NrFreePages) < free0);
    if keep_open {
        assert_eq!(m.unlink(path), OpResult::None);
        assert!(
            m.sim.inodes[ino as usize].is_some(),
            "open: not evicted yet"
        );
        assert_eq!(m.pread(fd, PAGE_SIZE, 0), PAGE_SIZE, "still readable");
        m.close(fd);
    } else {
        m.close(fd);
        assert_eq!(m.unlink(path), OpResult::None);
    }
    assert!(m.sim.inodes[ino as usize].is_none(), "inode slot freed");
    assert_eq!(m.unlink(path), OpResult::Err(Errno::ENOENT));
    m.check();
    m.sim.lru_add_drain_all();
    assert_eq!(m.vm(VmItem::NrFilePages), 0);
    assert_eq!(m.vm(VmItem::NrFreePages) + m.free_slab_pages(), free0);
    assert_eq!(m.vm(VmItem::NrDirty), 0);
    assert_eq!(m.vm(VmItem::NrShmem), 0);
    for l in LruList::ALL {
        assert_eq!(m.vm(l.vmstat_item()), 0, "{l:?}");
    }
    m.check();
}

#[test]
fn unlink_frees_every_page_tmpfs() {
    unlink_frees("/tmp/u", false);
    unlink_frees("/tmp/u", true);
}

#[test]
fn unlink_frees_every_page_blockfs() {
    unlink_frees("/mnt/u", false);
    unlink_frees("/mnt/u", true);
}

#[test]
fn unlink_waits_for_writeback_then_frees_every_page() {
    let mut m = machine(Features::patched());
    let free0 = m.vm(VmItem::NrFreePages);
    let (fd, ino) = m.open("/mnt/w");
    m.write(fd, 8 * PAGE_SIZE);
    m.close(fd);
    // Start writeback of every page, as the flusher would.
    assert_eq!(
        m.sim.write_cache_pages(ino, u64::MAX, SyncMode::None),
        Ok(8)
    );
    assert_eq!(m.vm(VmItem::NrWriteback), 8);
    assert_eq!(m.vm(VmItem::NrDirty), 0);
    m.check();
    // unlink of a closed file sleeps on the first page under writeback…
    let mut progress = 0;
    let r = m.sim.sys_unlink("/mnt/w", &mut progress);
    assert!(matches!(r, Err(Wait::PageWriteback(_))), "{r:?}");
    assert!(m.sim.inodes[ino as usize].is_some());
    m.check();
    // …and, resumed after the IO completes, frees everything.
    complete_io(&mut m.sim);
    assert_eq!(m.vm(VmItem::NrWriteback), 0);
    assert_eq!(m.vm(VmItem::NrWritten), 8);
    assert_eq!(
        m.sim.sys_unlink("/mnt/w", &mut progress),
        Ok(OpResult::None)
    );
    assert!(m.sim.inodes[ino as usize].is_none());
    m.sim.lru_add_drain_all();
    assert_eq!(m.vm(VmItem::NrFilePages), 0);
    assert_eq!(m.vm(VmItem::NrFreePages) + m.free_slab_pages(), free0);
    m.check();
}

#[test]
fn last_close_of_an_unlinked_file_under_writeback_frees_its_pages() {
    let mut m = machine(Features::patched());
    let free0 = m.vm(VmItem::NrFreePages);
    let (fd, ino) = m.open("/mnt/w");
    m.write(fd, 8 * PAGE_SIZE);
    assert_eq!(
        m.sim.write_cache_pages(ino, u64::MAX, SyncMode::None),
        Ok(8)
    );
    // Unlinked while open: eviction happens at the last close.
    assert_eq!(m.unlink("/mnt/w"), OpResult::None);
    m.close(fd);
    complete_io(&mut m.sim);
    assert_eq!(m.vm(VmItem::NrWriteback), 0);
    m.sim.lru_add_drain_all();
    m.check();
    // The kernel's iput → evict → truncate_inode_pages_final waits for the writeback, so
    // nothing of the file survives the close.
    assert!(
        m.sim.inodes[ino as usize].is_none(),
        "inode {ino} (nlink 0, open 0) still holds {} pages",
        m.sim.inode(ino).mapping.tree.nr_pages()
    );
    assert_eq!(m.vm(VmItem::NrFilePages), 0);
    assert_eq!(m.vm(VmItem::NrFreePages) + m.free_slab_pages(), free0);
}

// ---------------------------------------------------------------------------------------
// 7. the checker
// ---------------------------------------------------------------------------------------

/// A machine with pages on several lists, in pagevecs, dirty, and a freed file.
fn busy() -> (M, u32, u32) {
    let mut m = machine(Features::vanilla());
    let (fa, ia) = m.open("/mnt/a");
    let (fb, ib) = m.open("/tmp/b");
    let (fc, _) = m.open("/mnt/c");
    m.write(fa, 30 * PAGE_SIZE);
    m.write(fb, 20 * PAGE_SIZE);
    m.write(fc, 5 * PAGE_SIZE);
    m.sim.lru_add_drain();
    m.pread(fa, 10 * PAGE_SIZE, 0);
    m.pread(fb, 10 * PAGE_SIZE, 0);
    m.sim.lru_add_drain();
    m.close(fc);
    m.unlink("/mnt/c"); // truncation drains the pagevecs (pagevec_release)
    m.write(fa, 3 * PAGE_SIZE); // some left in the pagevec
    (m, ia, ib)
}

fn expect_check_err(m: &M, what: &str, needles: &[&str]) {
    let e = check_all(&m.sim).expect_err(what);
    for n in needles {
        assert!(
            e.contains(n),
            "{what}: message `{e}` does not mention `{n}`"
        );
    }
}

#[test]
fn checker_accepts_fresh_and_busy_machines() {
    let m = machine(Features::patched());
    assert_eq!(check_all(&m.sim), Ok(()));
    let (m, ia, _) = busy();
    assert_eq!(check_all(&m.sim), Ok(()));
    assert!(m.vm(VmItem::NrActiveFile) > 0, "busy has active file pages");
    assert!(m.vm(VmItem::NrInactiveFile) > 0);
    assert!(m.vm(VmItem::NrActiveAnon) + m.vm(VmItem::NrInactiveAnon) > 0);
    assert!(m.sim.pvecs[0].lru_add.nr > 0);
    assert!(m.vm(VmItem::NrDirty) > 0);
    assert!(m.sim.inode(ia).mapping.tree.nr_pages() > 0);
}

#[test]
fn checker_catches_a_listed_page_without_pg_lru() {
    let (mut m, ia, _) = busy();
    let pfn = m.page(ia, 0);
    assert!(m.has(pfn, pg::LRU));
    m.sim.mem[pfn as usize].flags &= !pg::LRU;
    expect_check_err(&m, "PG_lru cleared", &[&pfn.to_string(), "without PG_lru"]);
}

#[test]
fn checker_catches_a_page_on_the_wrong_list() {
    let (mut m, ia, _) = busy();
    let pfn = m.page(ia, 20);
    assert!(m.on_list(pfn, LruList::InactiveFile));
    m.sim.mem[pfn as usize].flags |= pg::ACTIVE;
    expect_check_err(
        &m,
        "PG_active on an inactive page",
        &[&pfn.to_string(), "ActiveFile"],
    );
}

#[test]
fn checker_catches_a_wrong_lru_gauge() {
    let (mut m, _, _) = busy();
    m.sim.vmstat.add(VmItem::NrInactiveFile, 1);
    expect_check_err(&m, "nr_inactive_file + 1", &["nr_inactive_file"]);
}

#[test]
fn checker_catches_a_wrong_index() {
    let (mut m, ia, _) = busy();
    let pfn = m.page(ia, 3);
    m.sim.mem[pfn as usize].index = 9_999;
    expect_check_err(&m, "index moved", &[&pfn.to_string(), "9999"]);
}

#[test]
fn checker_catches_a_referenced_free_page() {
    let (mut m, _, _) = busy();
    let pfn = m.sim.nodes[0].free_list.head();
    assert!(m.has(pfn, pg::BUDDY));
    m.sim.mem[pfn as usize].refcount = 1;
    expect_check_err(&m, "free page with refcount 1", &[&pfn.to_string(), "free"]);
}

#[test]
fn checker_catches_wrong_file_dirty_and_free_gauges() {
    let (mut m, _, _) = busy();
    m.sim.vmstat.add(VmItem::NrFilePages, -1);
    expect_check_err(&m, "nr_file_pages - 1", &["nr_file_pages"]);
    let (mut m, _, _) = busy();
    m.sim.vmstat.add(VmItem::NrDirty, 1);
    expect_check_err(&m, "nr_dirty + 1", &["nr_dirty"]);
    let (mut m, _, _) = busy();
    m.sim.vmstat.add(VmItem::NrFreePages, 1);
    expect_check_err(&m, "nr_free_pages + 1", &["nr_free_pages"]);
}

#[test]
fn checker_catches_a_page_missing_from_its_tree_and_a_leaked_page() {
    let (mut m, _, ib) = busy();
    let pfn = m.page(ib, 2);
    m.sim.inode_mut(ib).mapping.tree.store(2, Entry::Empty);
    expect_check_err(&m, "slot cleared", &[&pfn.to_string()]);

    // A page with no reference that is not free.
    let (mut m, _, _) = busy();
    let p = m.sim.alloc_page(Gfp::KERNEL).unwrap();
    m.sim.mem[p as usize].refcount = 0;
    expect_check_err(&m, "unreferenced busy page", &[&p.to_string()]);
}

// ---------------------------------------------------------------------------------------
// 8. random syscall sequences
// ---------------------------------------------------------------------------------------

const PATHS: [&str; 4] = ["/tmp/a", "/tmp/b", "/mnt/a", "/mnt/b"];

#[derive(Clone, Debug)]
enum Act {
    Write { f: usize, len: u64 },
    Read { f: usize, len: u64 },
    Pread { f: usize, len: u64, pos: u64 },
    Unlink { f: usize },
    Reopen { f: usize, trunc: bool },
    Close { f: usize },
    Drain,
}

fn act() -> impl Strategy<Value = Act> {
    let f = 0..PATHS.len();
    prop_oneof![
        4 => (f.clone(), 1u64..12_000).prop_map(|(f, len)| Act::Write { f, len }),
        3 => (f.clone(), 1u64..20_000).prop_map(|(f, len)| Act::Read { f, len }),
        2 => (f.clone(), 1u64..9_000, 0u64..30_000)
            .prop_map(|(f, len, pos)| Act::Pread { f, len, pos }),
        1 => f.clone().prop_map(|f| Act::Unlink { f }),
        2 => (f.clone(), any::<bool>()).prop_map(|(f, trunc)| Act::Reopen { f, trunc }),
        1 => f.prop_map(|f| Act::Close { f }),
        1 => Just(Act::Drain),
    ]
}

/// What the files should look like: names, open files with positions, sizes.
struct Model {
    /// path → model inode id (the real inode number).
    names: std::collections::BTreeMap<&'static str, u32>,
    /// Open file per path slot: (fd, ino, pos).
    open: [Option<(u32, u32, u64)>; PATHS.len()],
    /// Size by inode.
    size: std::collections::BTreeMap<u32, u64>,
}

fn run_acts(acts: &[Act], features: Features) -> Result<(), TestCaseError> {
    let mut m = machine(features);
    let free0 = m.vm(VmItem::NrFreePages);
    let mut model = Model {
        names: Default::default(),
        open: [None; PATHS.len()],
        size: Default::default(),
    };
    let ensure_open = |m: &mut M, model: &mut Model, f: usize, trunc: bool| {
        if model.open[f].is_none() {
            let (fd, ino) = m.open_with(PATHS[f], trunc);
            model.names.insert(PATHS[f], ino);
            let s = model.size.entry(ino).or_insert(0);
            if trunc {
                *s = 0;
            }
            model.open[f] = Some((fd, ino, 0));
        }
    };
    for (step, a) in acts.iter().enumerate() {
        match *a {
            Act::Write { f, len } => {
                ensure_open(&mut m, &mut model, f, false);
                let (fd, ino, pos) = model.open[f].unwrap();
                prop_assert_eq!(m.write(fd, len), len);
                let s = model.size.get_mut(&ino).unwrap();
                *s = (*s).max(pos + len);
                model.open[f] = Some((fd, ino, pos + len));
                prop_assert_eq!(m.sim.inode(ino).size, *s);
            }
            Act::Read { f, len } => {
                ensure_open(&mut m, &mut model, f, false);
                let (fd, ino, pos) = model.open[f].unwrap();
                let want = len.min(model.size[&ino].saturating_sub(pos));
                prop_assert_eq!(m.read(fd, len), want, "step {}: {:?}", step, a);
                model.open[f] = Some((fd, ino, pos + want));
            }
            Act::Pread { f, len, pos } => {
                ensure_open(&mut m, &mut model, f, false);
                let (fd, ino, _) = model.open[f].unwrap();
                let want = len.min(model.size[&ino].saturating_sub(pos));
                prop_assert_eq!(m.pread(fd, len, pos), want, "step {}: {:?}", step, a);
            }
            Act::Unlink { f } => match model.names.remove(PATHS[f]) {
                Some(ino) => {
                    prop_assert_eq!(m.unlink(PATHS[f]), OpResult::None);
                    let is_open = model.open.iter().flatten().any(|o| o.1 == ino);
                    prop_assert_eq!(m.sim.inodes[ino as usize].is_some(), is_open);
                    if !is_open {
                        model.size.remove(&ino);
                    }
                }
                None => prop_assert_eq!(m.unlink(PATHS[f]), OpResult::Err(Errno::ENOENT)),
            },
            Act::Reopen { f, trunc } => {
                if let Some((fd, ino, _)) = model.open[f].take() {
                    m.close(fd);
                    if !model.names.values().any(|i| *i == ino) {
                        prop_assert!(m.sim.inodes[ino as usize].is_none());
                        model.size.remove(&ino);
                    }
                }
                ensure_open(&mut m, &mut model, f, trunc);
            }
            Act::Close { f } => {
                if let Some((fd, ino, _)) = model.open[f].take() {
                    m.close(fd);
                    let linked = model.names.values().any(|i| *i == ino);
                    prop_assert_eq!(m.sim.inodes[ino as usize].is_some(), linked);
                    if !linked {
                        model.size.remove(&ino);
                    }
                }
            }
            Act::Drain => m.sim.lru_add_drain_all(),
        }
        if let Err(e) = check_all(&m.sim) {
            return Err(TestCaseError::fail(format!("step {step} {a:?}: {e}")));
        }
        prop_assert!(
            m.sim.oracle_violations.is_empty(),
            "step {} {:?}: {:?}",
            step,
            a,
            m.sim.oracle_violations
        );
    }
    // Close and delete everything: all memory comes back.
    for (path, open) in PATHS.iter().zip(model.open.iter_mut()) {
        if let Some((fd, _, _)) = open.take() {
            m.close(fd);
        }
        if model.names.remove(path).is_some() {
            prop_assert_eq!(m.unlink(path), OpResult::None);
        }
    }
    m.sim.lru_add_drain_all();
    prop_assert_eq!(check_all(&m.sim), Ok(()));
    prop_assert_eq!(m.vm(VmItem::NrFilePages), 0);
    prop_assert_eq!(m.vm(VmItem::NrDirty), 0);
    prop_assert_eq!(m.vm(VmItem::NrFreePages) + m.free_slab_pages(), free0);
    // Only the filesystems' inode tables (pinned by their superblocks) are left.
    prop_assert!(m.sim.inodes.iter().flatten().all(|i| m
        .sim
        .fss
        .iter()
        .any(|f| f.inode_table == Some(i.ino))));
    Ok(())
}

/// `cases` random cases (PROPTEST_CASES overrides), failures not persisted to files.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn random_syscalls_keep_every_invariant(
        acts in prop::collection::vec(act(), 1..40),
        patched in any::<bool>(),
    ) {
        let f = if patched { Features::patched() } else { Features::vanilla() };
        run_acts(&acts, f)?;
    }
}

// ---------------------------------------------------------------------------------------
// 8b. the same through the engine: blocking, the flusher, IO completions, fdatasync
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum EAct {
    Write { f: usize, pages: u64, extra: u64 },
    Read { f: usize, len: u64 },
    Pread { f: usize, len: u64, pos: u64 },
    Unlink { f: usize },
    Reopen { f: usize, trunc: bool },
    Close { f: usize },
    Sync { f: usize },
}

fn eact() -> impl Strategy<Value = EAct> {
    let f = 0..PATHS.len();
    prop_oneof![
        4 => (f.clone(), 0u64..700, 0u64..4096)
            .prop_map(|(f, pages, extra)| EAct::Write { f, pages, extra }),
        2 => (f.clone(), 1u64..400_000).prop_map(|(f, len)| EAct::Read { f, len }),
        4 => (f.clone(), 1u64..400_000, 0u64..3_000_000)
            .prop_map(|(f, len, pos)| EAct::Pread { f, len, pos }),
        1 => f.clone().prop_map(|f| EAct::Unlink { f }),
        2 => (f.clone(), any::<bool>()).prop_map(|(f, trunc)| EAct::Reopen { f, trunc }),
        1 => f.clone().prop_map(|f| EAct::Close { f }),
        1 => f.prop_map(|f| EAct::Sync { f }),
    ]
}

/// A program replaying `EAct`s, opening files on demand.
struct Replay {
    acts: std::collections::VecDeque<EAct>,
    fds: [Option<u32>; PATHS.len()],
    opening: Option<usize>,
}

impl Program for Replay {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let Some(f) = self.opening.take() {
            match last {
                OpResult::Fd(fd) => self.fds[f] = Some(*fd),
                other => panic!("open {} failed: {other:?}", PATHS[f]),
            }
        }
        let Some(a) = self.acts.pop_front() else {
            return Op::Exit;
        };
        let open = |s: &mut Self, f: usize, a: EAct, trunc: bool| {
            s.acts.push_front(a);
            s.opening = Some(f);
            Op::Open {
                path: PATHS[f].into(),
                create: true,
                truncate: trunc,
            }
        };
        match a {
            EAct::Write { f, pages, extra } => match self.fds[f] {
                Some(fd) => Op::Write {
                    fd,
                    len: pages * PAGE_SIZE + extra + 1,
                },
                None => open(self, f, a, false),
            },
            EAct::Read { f, len } => match self.fds[f] {
                Some(fd) => Op::Read { fd, len },
                None => open(self, f, a, false),
            },
            EAct::Pread { f, len, pos } => match self.fds[f] {
                Some(fd) => Op::Pread { fd, len, pos },
                None => open(self, f, a, false),
            },
            EAct::Sync { f } => match self.fds[f] {
                Some(fd) => Op::Fdatasync { fd },
                None => open(self, f, a, false),
            },
            EAct::Unlink { f } => Op::Unlink {
                path: PATHS[f].into(),
            },
            EAct::Close { f } => match self.fds[f].take() {
                Some(fd) => Op::Close { fd },
                None => Op::TimerStart("noop".into()),
            },
            EAct::Reopen { f, trunc } => match self.fds[f].take() {
                Some(fd) => {
                    // Close now, open on the next step.
                    self.acts.push_front(EAct::Reopen { f, trunc });
                    Op::Close { fd }
                }
                None => {
                    self.opening = Some(f);
                    Op::Open {
                        path: PATHS[f].into(),
                        create: true,
                        truncate: trunc,
                    }
                }
            },
        }
    }
}

fn run_engine(mut acts: Vec<EAct>, features: Features) -> Result<(), TestCaseError> {
    let mut m = machine(features);
    // Finish by closing and deleting every file.
    acts.extend((0..PATHS.len()).map(|f| EAct::Close { f }));
    acts.extend((0..PATHS.len()).map(|f| EAct::Unlink { f }));
    m.sim.set_running(m.sim.cur().cpu, None);
    m.sim.tasks[m.tid].body = TaskBody::User(Box::new(Replay {
        acts: acts.into(),
        fds: [None; PATHS.len()],
        opening: None,
    }));
    m.sim.check = true;
    let end = m.sim.run(2_000_000);
    prop_assert_eq!(end, RunEnd::Completed);
    prop_assert!(
        m.sim.oracle_violations.is_empty(),
        "{:?}",
        m.sim.oracle_violations
    );
    prop_assert_eq!(check_all(&m.sim), Ok(()));
    // No page leaks: once the IO in flight ends and the pagevecs are drained, every frame
    // is free or in the page cache of a surviving inode.
    complete_io(&mut m.sim);
    m.sim.lru_add_drain_all();
    prop_assert_eq!(check_all(&m.sim), Ok(()));
    prop_assert_eq!(m.vm(VmItem::NrWriteback), 0);
    prop_assert_eq!(
        m.vm(VmItem::NrFreePages) + m.vm(VmItem::NrFilePages) + m.free_slab_pages(),
        m.sim.mem.len() as i64,
        "frames neither free, cached nor slab"
    );
    // Every name is gone, and with the IO done so is every inode (an orphan left by a last
    // close that could not wait is evicted when its writeback ends).
    prop_assert!(m.sim.fss.iter().all(|fs| fs.names.is_empty()));
    let survivors: Vec<(u32, u32, u32)> = m
        .sim
        .inodes
        .iter()
        .flatten()
        .filter(|i| !m.sim.fss.iter().any(|f| f.inode_table == Some(i.ino)))
        .map(|i| (i.ino, i.nlink, i.open))
        .collect();
    prop_assert!(
        survivors.is_empty(),
        "inodes (ino, nlink, open) survive: {:?}",
        survivors
    );
    prop_assert!(m.sim.orphans.is_empty());
    Ok(())
}

proptest! {
    #![proptest_config(config(32))]

    #[test]
    fn random_programs_run_clean_through_the_engine(
        acts in prop::collection::vec(eact(), 1..40),
        patched in any::<bool>(),
    ) {
        let f = if patched { Features::patched() } else { Features::vanilla() };
        run_engine(acts, f)?;
    }
}

#[test]
fn pwrite_writes_at_its_offset_and_leaves_the_file_position() {
    let mut m = machine(Features::patched());
    let (fd, ino) = m.open("/tmp/pw");
    assert_eq!(m.write(fd, 100), 100);
    // pwrite of two pages at 1 MiB: the file grows, f_pos stays at 100.
    assert_eq!(
        m.pwrite(fd, 2 * PAGE_SIZE, 1 << 20),
        OpResult::Bytes(2 * PAGE_SIZE)
    );
    assert_eq!(m.sim.inode(ino).size, (1 << 20) + 2 * PAGE_SIZE);
    assert_eq!(m.sim.tasks[m.tid].fds[fd as usize].unwrap().pos, 100);
    let idx = (1u64 << 20) / PAGE_SIZE;
    for i in [idx, idx + 1] {
        assert!(matches!(
            m.sim.inode(ino).mapping.tree.lookup(i),
            Entry::Page(_)
        ));
    }
    // Beyond s_maxbytes (MAX_LFS_FILESIZE): EFBIG, nothing written, no wraparound.
    let max = mmsim::fs::syscalls::MAX_LFS_FILESIZE;
    assert_eq!(m.pwrite(fd, 1, max), OpResult::Err(Errno::EFBIG));
    assert_eq!(
        m.pwrite(fd, PAGE_SIZE, u64::MAX - 10),
        OpResult::Err(Errno::EFBIG)
    );
    assert_eq!(m.sim.inode(ino).size, (1 << 20) + 2 * PAGE_SIZE);
    // The write path did the work: a further write goes on at f_pos.
    assert_eq!(m.write(fd, 10), 10);
    assert_eq!(m.sim.tasks[m.tid].fds[fd as usize].unwrap().pos, 110);
}

/// kswapd's priority after one balance_pgdat pass, derived by hand from the two loops:
/// v3.11's flat loop lowers it unless the pass scanned its target and reclaimed something
/// and ends below 1 (balance_pgdat returns); 2.6.30's lowers it after every pass, down to
/// 0, and restarts at 12 within the call once 32 pages were reclaimed since it began.
#[test]
fn kswapd_priority_follows_the_balance_pgdat_loop_of_each_era() {
    use mmsim::mm::vmscan::{ScanControl, DEF_PRIORITY};
    // (priority, scanned, reclaimed) of a pass with a target of 100 pages.
    let pass = |priority: u32, scanned: u64, reclaimed: u64| {
        let mut sc = ScanControl::new(100, true, Gfp::KERNEL);
        sc.priority = priority;
        sc.nr_scanned = scanned;
        sc.nr_reclaimed = reclaimed;
        sc
    };
    for flat in [true, false] {
        let mut f = Features::patched();
        f.kswapd_flat_priority = flat;
        let mut m = machine(f);
        // (pass, priority after, loop end: Some(fruitless))
        type Step = ((u32, u64, u64), u32, Option<bool>);
        let steps: &[Step] = if flat {
            &[
                // Scanned 3 of a target of 100: raise the priority.
                ((12, 3, 3), 11, None),
                // Scanned the target and reclaimed: stay.
                ((11, 120, 40), 11, None),
                // Scanned the target, reclaimed nothing: lower.
                ((11, 120, 0), 10, None),
                ((10, 100, 100), 10, None),
                // At 1 the loop ends: not fruitless (it reclaimed).
                ((1, 5, 0), DEF_PRIORITY, Some(false)),
                // A whole loop that reclaims nothing is fruitless.
                ((1, 5, 0), DEF_PRIORITY, Some(true)),
            ]
        } else {
            &[
                // Every pass lowers the priority, even one that met the target.
                ((12, 120, 10), 11, None),
                ((11, 120, 10), 10, None),
                // 10 + 10 + 12 = 32 reclaimed since the loop began: loop_again at 12.
                ((10, 50, 12), DEF_PRIORITY, None),
                // Down to 0 with 31 reclaimed: the loop ends, not fruitless.
                ((12, 50, 31), 11, None),
                ((0, 50, 0), DEF_PRIORITY, Some(false)),
                // Down to 0 with nothing reclaimed since: fruitless.
                ((0, 50, 0), DEF_PRIORITY, Some(true)),
            ]
        };
        for (i, &((p, scanned, reclaimed), want, end)) in steps.iter().enumerate() {
            let got = m.sim.kswapd_lower_priority(0, &pass(p, scanned, reclaimed));
            let ctx = format!("flat {flat}, step {i}");
            assert_eq!(m.sim.reclaim[0].kswapd_priority, want, "{ctx}: priority");
            assert_eq!(got, end, "{ctx}: loop end");
        }
    }
}

/// 2.6.30's kswapd naps after a pass below priority 10 (congestion_wait(WRITE, HZ/10)):
/// 100 ms, or until a write request completes. The flat loop of 3.11 has no nap.
#[test]
fn kswapd_of_2_6_30_naps_below_priority_10_until_a_write_completes() {
    use mmsim::mm::vmscan::KSWAPD_NAP_PS;
    for flat in [false, true] {
        let mut f = Features::patched();
        f.kswapd_flat_priority = flat;
        let mut m = machine(f);
        // Fill the page cache so that kswapd has file pages to reclaim, then take the
        // free pages below the high watermark.
        let (fd, _) = m.open("/mnt/fill");
        let pages = u64::from(m.sim.nodes[0].present_pages);
        for _ in 0..pages / 2 / 64 {
            m.write(fd, 64 * PAGE_SIZE);
            m.fdatasync(fd);
        }
        let kswapd = kswapd_task(&m);
        let high = m.sim.nodes[0].watermark.high;
        let mut hold = Vec::new();
        while m.sim.zone_watermark_ok(0, high) {
            hold.push(m.sim.alloc_page(Gfp::KERNEL).expect("a free page"));
        }
        // kswapd in the middle of a balance_pgdat loop, about to run a pass at priority 9.
        m.sim.reclaim[0].kswapd_active = true;
        m.sim.reclaim[0].kswapd_priority = 9;
        m.sim.tasks[kswapd].state = mmsim::sched::TaskState::Runnable;
        let now = m.sim.now();
        let runnable = m.sim.kswapd_step(kswapd, 0);
        let ctx = format!(
            "flat {flat}, scanned {}, inactive file {}",
            m.sim.vmstat.get(VmItem::PgscanKswapd),
            m.sim.vmstat.get(VmItem::NrInactiveFile)
        );
        if flat {
            assert!(m.sim.congestion_waiters.is_empty(), "{ctx}: no nap");
            continue;
        }
        assert!(!runnable, "{ctx}: kswapd sleeps");
        // In congestion_wait until 100 ms after the pass (which took a little time).
        assert_eq!(
            m.sim.congestion_waiters.len(),
            1,
            "{ctx}: in congestion_wait"
        );
        let (waiter, until) = m.sim.congestion_waiters[0];
        assert_eq!(waiter, kswapd, "{ctx}");
        assert_eq!(
            m.sim.tasks[kswapd].state,
            mmsim::sched::TaskState::Sleeping,
            "{ctx}: asleep"
        );
        assert!(
            until >= now + KSWAPD_NAP_PS && until < now + KSWAPD_NAP_PS + 1_000_000_000,
            "{ctx}: a nap of 100 ms: {until} vs {now}"
        );
        // A write request completes: kswapd is woken at once.
        let (fd2, _) = m.open("/mnt/w");
        m.write(fd2, PAGE_SIZE);
        m.fdatasync(fd2);
        assert!(m.sim.congestion_waiters.is_empty(), "{ctx}: woken");
        assert!(
            m.sim.tasks[kswapd].ready_at_ps < until,
            "{ctx}: before the timeout"
        );
        assert_ne!(
            m.sim.tasks[kswapd].state,
            mmsim::sched::TaskState::Sleeping,
            "{ctx}: awake"
        );
    }
}

/// kswapd_try_to_sleep (v2.6.32): a balanced kswapd sleeps HZ/10 on kswapd_wait first. An
/// allocator's wakeup_kswapd in it counts kswapd_low_wmark_hit_quickly; a node below the
/// high watermark when it ends counts kswapd_high_wmark_hit_quickly and kswapd reclaims;
/// a balanced node then puts it to sleep until woken, where timers no longer wake it.
/// wakeup_kswapd never wakes a kswapd sleeping elsewhere (congestion_wait). Without the
/// rule (2.6.30) kswapd sleeps until woken at once.
#[test]
fn kswapd_sleeps_briefly_then_checks_again_before_sleeping_until_woken() {
    use mmsim::mm::vmscan::{KswapdSleep, KSWAPD_SHORT_SLEEP_PS};
    use mmsim::sched::TaskState;
    let build = |short: bool| {
        let mut f = Features::patched();
        f.kswapd_short_sleep = short;
        let mut m = machine(f);
        let kswapd = kswapd_task(&m);
        // Running, on a balanced node: the end of balance_pgdat.
        m.sim.reclaim[0].kswapd_sleep = KswapdSleep::Awake;
        m.sim.reclaim[0].kswapd_active = true;
        m.sim.tasks[kswapd].state = TaskState::Runnable;
        (m, kswapd)
    };
    let unbalance = |m: &mut M| {
        let high = m.sim.nodes[0].watermark.high;
        let mut held = Vec::new();
        while m.sim.zone_watermark_ok(0, high) {
            held.push(m.sim.alloc_page(Gfp::KERNEL).expect("a free page"));
        }
        held
    };
    let counts = |m: &M| {
        (
            m.sim.vmstat.get(VmItem::KswapdLowWmarkHitQuickly),
            m.sim.vmstat.get(VmItem::KswapdHighWmarkHitQuickly),
        )
    };

    // 2.6.30: asleep until woken at once; its old timers do not wake it.
    let (mut m, k) = build(false);
    let now = m.sim.now();
    assert!(!m.sim.kswapd_step(k, 0));
    assert_eq!(m.sim.reclaim[0].kswapd_sleep, KswapdSleep::Deep);
    assert!(m.sim.kswapd_timer_is_stale(k, now + KSWAPD_SHORT_SLEEP_PS));

    // An allocator wakes it in its short sleep.
    let (mut m, k) = build(true);
    let now = m.sim.now();
    assert!(!m.sim.kswapd_step(k, 0));
    let KswapdSleep::Short(until) = m.sim.reclaim[0].kswapd_sleep else {
        panic!("a short sleep: {:?}", m.sim.reclaim[0].kswapd_sleep);
    };
    assert!(
        until >= now + KSWAPD_SHORT_SLEEP_PS && until < now + KSWAPD_SHORT_SLEEP_PS + 1_000_000_000
    );
    assert_eq!(m.sim.tasks[k].state, TaskState::Sleeping);
    assert!(
        !m.sim.kswapd_timer_is_stale(k, until),
        "its own timer ends it"
    );
    assert!(
        m.sim.kswapd_timer_is_stale(k, until - 1),
        "another timer does not"
    );
    // Balanced: no wake.
    m.sim.wakeup_kswapd(0);
    assert_eq!(m.sim.tasks[k].state, TaskState::Sleeping);
    let _held = unbalance(&mut m);
    m.sim.wakeup_kswapd(0);
    assert_eq!(m.sim.tasks[k].state, TaskState::Runnable, "woken early");
    assert_eq!(m.sim.reclaim[0].kswapd_sleep, KswapdSleep::Awake);
    assert!(
        !m.sim.kswapd_timer_is_stale(k, until),
        "awake: timers note the time"
    );
    let before = counts(&m);
    m.sim.kswapd_step(k, 0);
    assert_eq!(
        counts(&m),
        (before.0 + 1, before.1),
        "low wmark hit quickly"
    );

    // The short sleep runs out on a balanced node: asleep until woken.
    let (mut m, k) = build(true);
    assert!(!m.sim.kswapd_step(k, 0));
    let before = counts(&m);
    m.sim.tasks[k].state = TaskState::Runnable; // its timer fired
    assert!(!m.sim.kswapd_step(k, 0));
    assert_eq!(m.sim.reclaim[0].kswapd_sleep, KswapdSleep::Deep);
    assert_eq!(counts(&m), before);

    // ... on a node below the high watermark: kswapd reclaims again.
    let (mut m, k) = build(true);
    assert!(!m.sim.kswapd_step(k, 0));
    let _held = unbalance(&mut m);
    let (before, scanned) = (counts(&m), m.sim.vmstat.get(VmItem::Pageoutrun));
    m.sim.tasks[k].state = TaskState::Runnable; // its timer fired
    m.sim.kswapd_step(k, 0);
    assert_eq!(
        counts(&m),
        (before.0, before.1 + 1),
        "high wmark hit quickly"
    );
    assert_eq!(m.sim.reclaim[0].kswapd_sleep, KswapdSleep::Awake);
    assert_eq!(
        m.sim.vmstat.get(VmItem::Pageoutrun),
        scanned + 1,
        "a new balance_pgdat"
    );

    // In congestion_wait (not on kswapd_wait), an allocator does not wake it.
    let (mut m, k) = build(true);
    let _held = unbalance(&mut m);
    m.sim.reclaim[0].kswapd_sleep = KswapdSleep::Awake;
    m.sim.sleep_on(k, Wait::Until(m.sim.now() + 20_000_000_000));
    m.sim.wakeup_kswapd(0);
    assert_eq!(m.sim.tasks[k].state, TaskState::Sleeping);
}

/// kswapd_failures (v4.11): on a node where reclaim finds nothing, kswapd runs
/// balance_pgdat again at once until MAX_RECLAIM_RETRIES (16) calls in a row reclaimed
/// nothing (12 passes each, priority 12 down to 1), then sleeps and allocators no longer
/// wake it; reclaim progress on the node revives it. Without the rule it backs off 20 ms
/// after each fruitless call and is never given up on.
#[test]
fn kswapd_gives_up_on_a_node_without_reclaimable_pages_until_reclaim_progresses() {
    use mmsim::mm::memcontrol::MAX_RECLAIM_RETRIES;
    use mmsim::mm::vmscan::{KswapdSleep, ScanControl};
    use mmsim::sched::TaskState;
    for rule in [true, false] {
        let mut f = Features::patched();
        f.kswapd_failures = rule;
        let mut m = machine(f);
        // Clean file pages to reclaim later, then every free page held outside the LRU.
        let (fd, _) = m.open("/mnt/cache");
        m.write(fd, 32 * PAGE_SIZE);
        m.fdatasync(fd);
        let kswapd = kswapd_task(&m);
        // Only the cached file pages are on the LRU: take them off by truncating the file.
        let mut progress = 0;
        m.sim
            .sys_ftruncate(m.tid, fd, 0, &mut progress)
            .expect("ftruncate");
        m.sim.lru_add_drain();
        assert_eq!(m.sim.vmstat.get(VmItem::NrInactiveFile), 0, "rule {rule}");
        let high = m.sim.nodes[0].watermark.high;
        let mut held = Vec::new();
        while m.sim.zone_watermark_ok(0, high) {
            held.push(m.sim.alloc_page(Gfp::KERNEL).expect("a free page"));
        }
        m.sim.reclaim[0].kswapd_sleep = KswapdSleep::Awake;
        m.sim.tasks[kswapd].state = TaskState::Runnable;
        let runs0 = m.sim.vmstat.get(VmItem::Pageoutrun);
        let mut passes = 0;
        while m.sim.kswapd_step(kswapd, 0) {
            passes += 1;
            assert!(passes < 1000, "rule {rule}: kswapd never stops");
        }
        passes += 1;
        if !rule {
            // One fruitless call (12 passes), then a 20 ms back-off outside kswapd_wait.
            assert_eq!(passes, 12, "rule {rule}");
            assert_eq!(m.sim.reclaim[0].kswapd_sleep, KswapdSleep::Awake);
            assert_eq!(m.sim.reclaim[0].kswapd_failures, 0);
            continue;
        }
        let retries = u64::from(MAX_RECLAIM_RETRIES);
        assert_eq!(passes, 12 * retries, "16 calls of 12 passes");
        assert_eq!(m.sim.reclaim[0].kswapd_failures, MAX_RECLAIM_RETRIES);
        assert!(m.sim.kswapd_hopeless(0));
        assert_eq!(
            m.sim.vmstat.get(VmItem::Pageoutrun) - runs0,
            retries as i64,
            "the first call and the 15 after a fruitless one"
        );
        assert!(matches!(
            m.sim.reclaim[0].kswapd_sleep,
            KswapdSleep::Short(_)
        ));
        // Its short sleep ends on a hopeless node: asleep until woken; allocators do not.
        m.sim.tasks[kswapd].state = TaskState::Runnable;
        assert!(!m.sim.kswapd_step(kswapd, 0));
        assert_eq!(m.sim.reclaim[0].kswapd_sleep, KswapdSleep::Deep);
        m.sim.wakeup_kswapd(0);
        assert_eq!(
            m.sim.tasks[kswapd].state,
            TaskState::Sleeping,
            "hopeless node"
        );
        // Reclaim progress (direct reclaim finds new clean cache) revives it.
        for pfn in held.drain(..64) {
            m.sim.put_page(pfn);
        }
        let (fd2, _) = m.open("/mnt/cache2");
        m.write(fd2, 32 * PAGE_SIZE);
        m.fdatasync(fd2);
        let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
        sc.priority = 0;
        m.sim.shrink_node(0, &mut sc);
        assert!(sc.nr_reclaimed > 0, "reclaimed the new cache");
        assert_eq!(
            m.sim.reclaim[0].kswapd_failures, 0,
            "progress resets the count"
        );
        while m.sim.zone_watermark_ok(0, high) {
            held.push(m.sim.alloc_page(Gfp::KERNEL).expect("a free page"));
        }
        m.sim.wakeup_kswapd(0);
        assert_eq!(
            m.sim.tasks[kswapd].state,
            TaskState::Runnable,
            "woken again"
        );
    }
}

/// add_to_page_cache_lru of a page at an index that already holds one fails with -EEXIST
/// and leaves the cache as it was: the first page stays, counted once, and the second page
/// is left without a mapping and without the cache's reference.
#[test]
fn adding_a_page_where_the_cache_has_one_fails_and_changes_nothing() {
    use mmsim::mm::filemap::CacheError;
    let mut m = machine(Features::patched());
    let (_, ino) = m.open("/mnt/f");
    let first = m.cached_page(ino, 3, true);
    let files = m.vm(VmItem::NrFilePages);
    let second = m.sim.alloc_page(Gfp::KERNEL).expect("a free page");
    let refs = m.sim.mem[second as usize].refcount;
    assert_eq!(
        m.sim.add_to_page_cache_lru(second, ino, 3),
        Err(CacheError::Exists)
    );
    assert_eq!(m.sim.inode(ino).mapping.tree.lookup(3), Entry::Page(first));
    assert_eq!(m.vm(VmItem::NrFilePages), files);
    assert_eq!(m.sim.mem[second as usize].refcount, refs);
    assert_eq!(
        m.sim.mem[second as usize].mapping,
        mmsim::mm::page::NO_MAPPING
    );
    assert!(!m.has(second, pg::LOCKED));
    m.sim.put_page(second);
    check_all(&m.sim).unwrap();
}

/// schedule_timeout cancels its timer when a wakeup ends the sleep early (del_timer_sync):
/// a reclaimer that writeback completions woke from reclaim_throttle and that throttles
/// again before its first timeout would have passed sleeps the whole second timeout; the
/// first sleep's timer event wakes nobody. (mmsim's engine let that stale timer end the
/// second throttle early, so a v1 cgroup's reclaim never waited out a timeout.)
#[test]
fn a_timed_sleep_ended_early_leaves_no_timer_to_cut_the_next_one_short() {
    use mmsim::mm::vmscan::THROTTLE_WRITEBACK_PS;
    use mmsim::sched::TaskState;
    let (mut m, _) = small_cgroup_machine(true, "64MiB");
    let tid = m.tid;
    let cpu = m.sim.tasks[tid].cpu;
    let t0 = m.sim.now();
    let first = t0 + THROTTLE_WRITEBACK_PS;
    let w = m.sim.reclaim_throttle(tid, 0);
    assert_eq!(w, Wait::Until(first));
    m.sim.sleep_on(tid, w);
    // Woken after 1 ms, as enough writeback completions wake it.
    m.sim.wake_up(tid, t0 + 1_000_000_000);
    assert_eq!(m.sim.tasks[tid].state, TaskState::Runnable);
    // It runs on and throttles again 50 ms later.
    m.sim.cpu_idle_until(cpu, t0 + THROTTLE_WRITEBACK_PS / 2);
    let second = m.sim.now() + THROTTLE_WRITEBACK_PS;
    let w = m.sim.reclaim_throttle(tid, 0);
    assert_eq!(w, Wait::Until(second));
    m.sim.sleep_on(tid, w);
    // The first sleep's timer fires: cancelled, it wakes nobody.
    m.sim.timer_fire(tid as u32, first);
    assert_eq!(
        m.sim.tasks[tid].state,
        TaskState::Sleeping,
        "the first throttle's timer ended the second one"
    );
    // The second one's own timer ends it: a timeout (the first was woken).
    m.sim.timer_fire(tid as u32, second);
    assert_eq!(m.sim.tasks[tid].state, TaskState::Runnable);
    assert_eq!(m.sim.tasks[tid].ready_at_ps, second);
    let t = &m.sim.tracepoints.mm_vmscan_throttled;
    assert_eq!((t.writeback, t.writeback_timeouts), (2, 1));
}

/// reclaim_throttle's accounting (5.16, `reclaim-throttle`): writeback completions count
/// in nr_throttled_written while a task sleeps in VMSCAN_THROTTLE_WRITEBACK, and more than
/// SWAP_CLUSTER_MAX of them wake it; the woken task counts as throttled until it runs, so
/// every page written counts, those completed after the wake too. A sleeper whose timeout
/// (HZ/10) has passed and that has run has left (nr_writeback_throttled decremented):
/// completions after it count for nobody, and the next throttle counts from zero again.
#[test]
fn throttled_reclaim_counts_the_writeback_completed_while_it_sleeps() {
    for timed_out in [false, true] {
        let ctx = format!("timed out {timed_out}");
        let (mut m, _a) = small_cgroup_machine(true, "64MiB");
        let (fd, ino) = m.open("/mnt/f");
        m.write(fd, 128 * PAGE_SIZE);
        let tid = m.tid;
        let start = m.sim.now();
        let w = m.sim.reclaim_throttle(tid, 0);
        let until = start + mmsim::mm::vmscan::THROTTLE_WRITEBACK_PS;
        assert_eq!(w, Wait::Until(until), "{ctx}");
        m.sim.sleep_on(tid, w);
        let written = m.sim.write_cache_pages(ino, u64::MAX, SyncMode::None);
        assert_eq!(written, Ok(128), "{ctx}");
        if timed_out {
            let cpu = m.sim.tasks[tid].cpu;
            m.sim.cpu_idle_until(cpu, until + 1);
            m.sim.timer_fire(tid as u32, until);
            assert_eq!(m.sim.reclaim_throttled[0].len(), 1, "{ctx}: until it runs");
            m.sim.reclaim_throttle_done(tid); // it runs
        }
        complete_io(&mut m.sim);
        let counted = m.vm(VmItem::NrThrottledWritten);
        assert_eq!(m.vm(VmItem::NrWritten), 128, "{ctx}");
        if timed_out {
            assert_eq!(counted, 0, "{ctx}: nobody was throttled any more");
            assert!(m.sim.reclaim_throttled[0].is_empty(), "{ctx}");
        } else {
            assert_eq!(counted, 128, "{ctx}: woken, not yet run");
            assert!(
                m.sim.reclaim_throttled[0]
                    .iter()
                    .all(|&(t, u)| t == tid && u < until),
                "{ctx}: woken: {:?}",
                m.sim.reclaim_throttled[0]
            );
        }
        // A new throttle counts from zero: 32 more completions do not wake it.
        // (Its timer, not delivered here, ends a timed-out sleep.)
        let now = m.sim.now();
        m.sim.wake_up(tid, now);
        m.write(fd, 32 * PAGE_SIZE);
        let w = m.sim.reclaim_throttle(tid, 0);
        m.sim.sleep_on(tid, w);
        assert_eq!(m.sim.reclaim_throttled[0].len(), 1, "{ctx}");
        let written = m.sim.write_cache_pages(ino, u64::MAX, SyncMode::None);
        assert_eq!(written, Ok(32), "{ctx}");
        complete_io(&mut m.sim);
        assert_eq!(m.vm(VmItem::NrThrottledWritten), counted + 32, "{ctx}");
        assert_eq!(
            m.sim.tasks[tid].state,
            mmsim::sched::TaskState::Sleeping,
            "{ctx}: 32 pages do not wake it"
        );
        m.check();
    }
}

/// A page fault's read-around whose charge must sleep (6.18, cgroup v1: limit reclaim
/// meets only dirty pages, wakes the flushers and sleeps in reclaim_throttle, which
/// throttles any user task): the faulting task sleeps there, and the fault, resumed,
/// reads the rest of its window (`RaState::resume`) before it maps the page — one major
/// fault, its miss counted once (pgmajfault, maj_flt). (mmsim used to end such a
/// readahead where its charge failed, and the fault's own allocation then slept and
/// counted the miss again.)
#[test]
fn a_fault_sleeps_in_its_readaround_charge_and_resumes_the_window() {
    let text = format!(
        "cgroup_version = 1\n{}\ncgroup = \"a\"\n\n[[cgroups]]\nname = \"a\"\n\
         memory_max = \"8MiB\"\n{}",
        unit_machine_toml(
            "unit",
            "64MiB",
            "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"1MiB\""
        ),
        common::file_toml("/mnt/data", 1 << 20, true)
    );
    let mut features = mmsim::kernel::KernelEra::V6_18
        .features("patched")
        .expect("preset");
    features.large_folios = false;
    features.memcg_charge_stock = false; // charges go to the counter, page by page
    features.memcg_stats_ratelimited = false;
    let mut m = M::new(&text, features);
    let a = m.sim.memcg_by_name("a").expect("cgroup a");
    let tid = m.tid;
    common::run_on(&mut m.sim, 0, tid);
    // Dirty pages the flusher has not reached, then a limit 8 pages above the usage.
    let (fd, _) = m.open("/mnt/f");
    m.write(fd, 256 * PAGE_SIZE);
    m.sim.lru_add_drain();
    let (_, ino) = m.open("/mnt/data");
    let base =
        common::mmap_at(&mut m.sim, tid, Some("/mnt/data"), 1 << 20, 0, 1, false) / PAGE_SIZE;
    let usage = m.sim.memcgs[a as usize].usage;
    m.sim.memcgs[a as usize].max = usage + 8;
    let fault = |m: &mut M| {
        let mut progress = 0;
        m.sim.sys_touch(
            tid,
            (base + 128) * PAGE_SIZE,
            PAGE_SIZE,
            PAGE_SIZE,
            false,
            &mut progress,
        )
    };
    // The read-around window is [112, 144): a charge before the fault's page sleeps.
    let r = fault(&mut m);
    assert!(matches!(r, Err(Wait::Until(_))), "{r:?}");
    let cached = |m: &M| {
        (112..144)
            .filter(|&i| matches!(m.entry(ino, i), Entry::Page(_)))
            .count()
    };
    // (The 8 pages of room less the fault's page-table page, charged too.)
    let before = cached(&m);
    assert!(
        (1..16).contains(&before),
        "the window up to the charge that slept: {before} pages"
    );
    assert!(!matches!(m.entry(ino, 128), Entry::Page(_)), "not yet");
    assert_eq!(m.vm(VmItem::Pgmajfault), 1);
    assert_eq!(m.sim.tracepoints.mm_vmscan_throttled.writeback, 1);
    // Room again (the dirty file goes); the fault resumes.
    m.close(fd);
    assert_eq!(m.unlink("/mnt/f"), OpResult::None);
    m.sim.memcgs[a as usize].max = usage + 1024;
    let r = fault(&mut m);
    assert!(
        matches!(r, Err(Wait::PageLocked(_))),
        "{r:?}: the page is being read"
    );
    assert_eq!(cached(&m), 32, "the whole window read");
    complete_io(&mut m.sim);
    assert_eq!(fault(&mut m), Ok(OpResult::Bytes(PAGE_SIZE)));
    assert_eq!(m.vm(VmItem::Pgmajfault), 1, "one miss");
    assert_eq!(m.vm(VmItem::Pgfault), 1, "one fault");
    assert_eq!(
        (m.sim.tasks[tid].stats.majflt, m.sim.tasks[tid].stats.minflt),
        (1, 0)
    );
    complete_io(&mut m.sim);
    m.check();
}

/// Opens one shared [`OpenPath`] (as the replay program hands out one per file) and writes
/// a round's pages through it, closing the file after each round, and unlinking the path
/// after round `unlink_after` (counted from 0). Only an open that finds the file memoises
/// it: the first round creates the file, the second finds it.
struct SharedPathWriter {
    path: mmsim::workload::OpenPath,
    rounds: std::collections::VecDeque<u64>,
    unlink_after: Option<usize>,
    done: usize,
    step: u8,
    fd: u32,
}

impl Program for SharedPathWriter {
    fn next_op(&mut self, last: &OpResult) -> Op {
        match self.step {
            0 => {
                if self.rounds.is_empty() {
                    return Op::Exit;
                }
                self.step = 1;
                Op::Open {
                    path: self.path.clone(),
                    create: true,
                    truncate: false,
                }
            }
            1 => {
                let OpResult::Fd(fd) = last else {
                    panic!("open {}: {last:?}", &*self.path);
                };
                self.fd = *fd;
                self.step = 2;
                let pages = self.rounds.pop_front().expect("a round");
                Op::Write {
                    fd: self.fd,
                    len: pages * PAGE_SIZE,
                }
            }
            2 => {
                self.step = if self.unlink_after == Some(self.done) {
                    3
                } else {
                    0
                };
                self.done += 1;
                Op::Close { fd: self.fd }
            }
            _ => {
                self.step = 0;
                Op::Unlink {
                    path: self.path.to_string(),
                }
            }
        }
    }
}

/// Run `program` as the machine's task to its end.
fn run_program(m: &mut M, program: SharedPathWriter) {
    m.sim.set_running(m.sim.cur().cpu, None);
    m.sim.tasks[m.tid].body = TaskBody::User(Box::new(program));
    assert_eq!(m.sim.run(1_000_000), RunEnd::Completed);
}

/// The size of the file at `path`, and its inode.
fn file_at(m: &M, path: &str) -> (u32, u64) {
    let fs = m.sim.resolve_fs(path).expect("a filesystem");
    let ino = *m.sim.fss[fs].names.get(path).expect("the file exists");
    (ino, m.sim.inodes[ino as usize].as_ref().expect("live").size)
}

#[test]
fn an_open_path_is_resolved_again_after_its_name_changed() {
    // The host memoises in each open's path the file it resolved to; an unlink (any change
    // of names) must make the next open of the same path look again: it creates a new
    // file, and the third round's pages go to it, not to the unlinked one (which the
    // second round's open found and memoised).
    let mut m = machine(Features::patched());
    let writer = SharedPathWriter {
        path: "/mnt/shared".into(),
        rounds: [1, 1, 2].into(),
        unlink_after: Some(1),
        done: 0,
        step: 0,
        fd: 0,
    };
    run_program(&mut m, writer);
    let (_, size) = file_at(&m, "/mnt/shared");
    assert_eq!(
        size,
        2 * PAGE_SIZE,
        "the new file has the third round's pages"
    );
    m.check();
}

#[test]
fn an_open_path_memo_of_one_simulation_is_not_used_by_another() {
    // The same path handed to two simulations: in the second, the inode number the first
    // resolved it to belongs to another file, which must not receive its writes.
    let path: mmsim::workload::OpenPath = "/mnt/b".into();
    let mut a = machine(Features::patched());
    let writer = |rounds: &[u64]| SharedPathWriter {
        path: path.clone(),
        rounds: rounds.iter().copied().collect(),
        unlink_after: None,
        done: 0,
        step: 0,
        fd: 0,
    };
    run_program(&mut a, writer(&[1, 1]));
    let (ino_a, _) = file_at(&a, "/mnt/b");
    let mut b = machine(Features::patched());
    let (fd, z) = b.open("/mnt/z");
    b.close(fd);
    let (fd, ino_b) = b.open("/mnt/b");
    b.close(fd);
    assert_eq!(
        z, ino_a,
        "in the second machine /mnt/z has the first one's /mnt/b inode"
    );
    assert_ne!(ino_b, ino_a);
    run_program(&mut b, writer(&[3]));
    assert_eq!(file_at(&b, "/mnt/b"), (ino_b, 3 * PAGE_SIZE));
    assert_eq!(file_at(&b, "/mnt/z"), (z, 0), "nothing written to /mnt/z");
    b.check();
}
