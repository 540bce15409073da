//! posix_fadvise (`mm/fadvise.rs`): DONTNEED's invalidation (what goes, what stays, what is
//! deactivated) in each era, the drains that free pages held by LRU batches, WILLNEED,
//! RANDOM and SEQUENTIAL; the `nocache` options of `dd` and `read` through the engine; bad
//! input; and a property test of invalidation against the page cache's invariants.

use crate::common;

use common::{
    build_sim_on, cgroup_report, complete_io, file_toml, machine_toml, mmap_at, run_on, run_sc,
    task_id, task_report, touch_pages, vmstat,
};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::check_all;
use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmstat::VmItem;
use mmsim::scenario::{load_scenario, parse_scenario};
use mmsim::sched::TaskId;
use mmsim::sim::Sim;
use mmsim::workload::{Fadvice, OpResult};
use proptest::prelude::*;

const P: u64 = PAGE_SIZE;

/// A 2-CPU machine with 64 MiB, a 64-page file /mnt/f and an 8-page file /mnt/small (both
/// with data on the SSD), the task `t` on CPU 0.
fn scenario() -> String {
    machine_toml("fadvise", 2, "64MiB", None, "1GiB", "/mnt")
        + &file_toml("/mnt/f", 64 * P, true)
        + &file_toml("/mnt/small", 8 * P, true)
        + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"read\"\npath = \"/mnt/f\"\n"
}

/// The machine of `scenario` on `era` with `features` ("+x,-y") on top, `t` running on
/// CPU 0 with /mnt/f open.
struct F {
    sim: Sim,
    tid: TaskId,
    fd: u32,
}

impl F {
    fn new(era: KernelEra, features: &str) -> F {
        Self::with_text(&scenario(), era, features)
    }

    fn with_text(text: &str, era: KernelEra, features: &str) -> F {
        let mut sim = build_sim_on(text, "fadvise-test", era, features);
        let tid = task_id(&sim, "t");
        sim.set_running(0, Some(tid));
        let mut f = F { sim, tid, fd: 0 };
        f.fd = f.open("/mnt/f");
        f
    }

    /// open(2), completing the inode-table read a cold inode waits for.
    fn open(&mut self, path: &str) -> u32 {
        let mut progress = 0;
        for _ in 0..100 {
            match self
                .sim
                .sys_open(self.tid, path, false, false, &mut progress)
            {
                Ok(OpResult::Fd(fd)) => return fd,
                Ok(other) => panic!("open {path}: {other:?}"),
                Err(_) => {
                    complete_io(&mut self.sim);
                }
            }
        }
        panic!("open {path} did not finish");
    }

    fn ino(&self, fd: u32) -> u32 {
        self.sim.fd_file(self.tid, fd).expect("open").ino
    }

    /// pread `pages` pages from page `at` of `fd` on `cpu`, completing the IO it waits for.
    fn read_on(&mut self, cpu: usize, fd: u32, at: u64, pages: u64) {
        self.sim.set_running(cpu, Some(self.tid));
        let mut progress = 0;
        for _ in 0..1000 {
            match self
                .sim
                .sys_read(self.tid, fd, pages * P, Some(at * P), &mut progress)
            {
                Ok(OpResult::Bytes(_)) => {
                    self.sim.set_running(0, Some(self.tid));
                    return;
                }
                Ok(other) => panic!("read: {other:?}"),
                Err(_) => {
                    complete_io(&mut self.sim);
                }
            }
        }
        panic!("the read did not finish");
    }

    fn read(&mut self, at: u64, pages: u64) {
        self.read_on(0, self.fd, at, pages);
    }

    /// pwrite `pages` pages at page `at` of /mnt/f (dirty pages in the cache).
    fn write(&mut self, at: u64, pages: u64) {
        let mut progress = 0;
        for _ in 0..1000 {
            match self
                .sim
                .sys_write(self.tid, self.fd, pages * P, Some(at * P), &mut progress)
            {
                Ok(OpResult::Bytes(_)) => return,
                Ok(other) => panic!("write: {other:?}"),
                Err(_) => {
                    complete_io(&mut self.sim);
                }
            }
        }
        panic!("the write did not finish");
    }

    fn advise(&mut self, offset: u64, len: u64, advice: Fadvice) {
        let r = self.sim.sys_fadvise(self.tid, self.fd, offset, len, advice);
        assert_eq!(r, OpResult::None, "fadvise");
    }

    fn entry(&self, index: u64) -> Entry {
        let ino = self.ino(self.fd);
        self.sim.inode(ino).mapping.tree.lookup(index)
    }

    fn page(&self, index: u64) -> Pfn {
        match self.entry(index) {
            Entry::Page(p) => p,
            e => panic!("index {index}: {e:?}"),
        }
    }

    fn cached(&self, range: std::ops::Range<u64>) -> Vec<u64> {
        range
            .filter(|&i| matches!(self.entry(i), Entry::Page(_)))
            .collect()
    }

    fn flag(&self, index: u64, bit: u32) -> bool {
        self.sim.mem[self.page(index) as usize].test(bit)
    }

    fn check(&self) {
        if let Err(e) = check_all(&self.sim) {
            panic!("checker: {e}");
        }
    }
}

#[test]
fn dontneed_drops_the_clean_pages_of_its_range_without_shadows() {
    let mut f = F::new(KernelEra::V6_18, "");
    f.read(0, 64);
    f.sim.lru_add_drain_all();
    assert_eq!(f.cached(0..64).len(), 64);
    let file_pages = vmstat(&f.sim, VmItem::NrFilePages);
    f.advise(0, 32 * P, Fadvice::Dontneed);
    for i in 0..32 {
        assert_eq!(f.entry(i), Entry::Empty, "index {i}: no shadow is left");
    }
    assert_eq!(f.cached(32..64), (32..64).collect::<Vec<_>>());
    assert_eq!(vmstat(&f.sim, VmItem::NrFilePages), file_pages - 32);
    f.check();
    // A read of a dropped page misses again, but it is no workingset refault.
    let misses = f.sim.tasks[f.tid].stats.cache_misses;
    f.read(0, 1);
    assert!(f.sim.tasks[f.tid].stats.cache_misses > misses);
    assert_eq!(vmstat(&f.sim, VmItem::WorkingsetRefaultFile), 0);
    f.check();
}

#[test]
fn dontneed_keeps_partial_pages_but_a_last_page_that_ends_the_file() {
    let mut f = F::new(KernelEra::V6_18, "");
    f.read(0, 64);
    f.sim.lru_add_drain_all();
    // Bytes 1000 .. 9191: page 1 is the only whole page.
    f.advise(1000, 2 * P, Fadvice::Dontneed);
    assert_eq!(f.cached(0..4), vec![0, 2, 3]);
    // From inside page 60 to the end of the file (len 0): pages 61-63, the last included.
    f.advise(60 * P + 10, 0, Fadvice::Dontneed);
    assert_eq!(f.cached(58..64), vec![58, 59, 60]);
    // Pages 57-59 whole, page 60 partial (its first 10 bytes): 60 stays.
    f.advise(57 * P, 3 * P + 10, Fadvice::Dontneed);
    assert_eq!(f.cached(56..64), vec![56, 60]);
    f.check();
}

#[test]
fn dontneed_starts_writeback_and_the_era_decides_what_happens_to_those_pages() {
    // 4.14: a page under writeback fails to go and is deactivated with PG_reclaim, so its
    // writeback end rotates it to the inactive tail. 6.18 (`invalidate-skips-writeback`):
    // the lookup passes it over. 2.6.30 (no `invalidate-deactivate`): it stays as it was.
    for (era, reclaim) in [
        (KernelEra::V4_14, true),
        (KernelEra::V6_18, false),
        (KernelEra::V2_6_30, false),
    ] {
        let mut f = F::new(era, "");
        f.write(0, 16);
        f.sim.lru_add_drain_all();
        assert!(f.flag(0, pg::DIRTY));
        f.advise(0, 16 * P, Fadvice::Dontneed);
        f.sim.lru_add_drain_all();
        assert_eq!(
            f.cached(0..16).len(),
            16,
            "{era}: pages under writeback stay"
        );
        for i in 0..16 {
            assert!(
                f.flag(i, pg::WRITEBACK) && !f.flag(i, pg::DIRTY),
                "{era} {i}"
            );
            assert_eq!(f.flag(i, pg::RECLAIM), reclaim, "{era} {i}: PG_reclaim");
        }
        let rotated = vmstat(&f.sim, VmItem::Pgrotated);
        complete_io(&mut f.sim);
        f.sim.lru_add_drain_all();
        let rotated = vmstat(&f.sim, VmItem::Pgrotated) - rotated;
        assert_eq!(rotated, if reclaim { 16 } else { 0 }, "{era}: pgrotated");
        // Clean now: the next advice drops them in every era.
        f.advise(0, 16 * P, Fadvice::Dontneed);
        assert!(f.cached(0..16).is_empty(), "{era}");
        f.check();
    }
}

#[test]
fn dontneed_leaves_mapped_pages_where_they_are() {
    let text = scenario();
    let mut f = F::with_text(&text, KernelEra::V6_18, "");
    run_on(&mut f.sim, 0, f.tid);
    let addr = mmap_at(&mut f.sim, f.tid, Some("/mnt/f"), 64 * P, 0, 1, true);
    for _ in 0..100 {
        match touch_pages(&mut f.sim, 0, f.tid, addr + 8 * P, 4, false) {
            Ok(_) => break,
            Err(_) => {
                complete_io(&mut f.sim);
            }
        }
    }
    f.sim.lru_add_drain_all();
    let mapped: Vec<u64> = f
        .cached(0..64)
        .into_iter()
        .filter(|&i| f.sim.mem[f.page(i) as usize].mapped())
        .collect();
    assert!(
        mapped.len() >= 4,
        "the touched pages are mapped: {mapped:?}"
    );
    let lists: Vec<(u64, bool)> = mapped.iter().map(|&i| (i, f.flag(i, pg::ACTIVE))).collect();
    let deactivated = vmstat(&f.sim, VmItem::Pgdeactivate);
    f.advise(0, 0, Fadvice::Dontneed);
    f.sim.lru_add_drain_all();
    assert_eq!(f.cached(0..64), mapped, "only the mapped pages stay");
    for (i, active) in lists {
        assert_eq!(f.flag(i, pg::ACTIVE), active, "page {i} keeps its list");
    }
    assert_eq!(vmstat(&f.sim, VmItem::Pgdeactivate), deactivated);
    f.check();
}

#[test]
fn pages_held_by_another_cpus_batch_go_only_with_a_drain_of_every_cpu() {
    // The 8-page file read on CPU 1 sits in CPU 1's LRU add batch (its pages hold the
    // batch's reference). 2.6.30 invalidates once; from 3.9 the advice drains every CPU
    // when pages are left; from 5.7 after its own CPU's drain did not free them all.
    for (era, features, dropped) in [
        (KernelEra::V2_6_30, "", false),
        (KernelEra::V4_2, "", true),
        (KernelEra::V4_2, "-fadvise-drain-all", false),
        (KernelEra::V6_18, "", true),
    ] {
        let mut f = F::new(era, features);
        let small = f.open("/mnt/small");
        f.read_on(1, small, 0, 8);
        let ino = f.ino(small);
        let in_batch = f.sim.pvecs[1].lru_add.nr;
        assert_eq!(
            in_batch, 8,
            "{era} {features}: the pages wait in CPU 1's batch"
        );
        let r = f.sim.sys_fadvise(f.tid, small, 0, 0, Fadvice::Dontneed);
        assert_eq!(r, OpResult::None);
        let left = f.sim.inode(ino).mapping.tree.nr_pages();
        assert_eq!(left == 0, dropped, "{era} {features}: {left} pages left");
        f.check();
    }
}

#[test]
fn willneed_reads_the_range_in_without_a_marker_up_to_the_eras_limit() {
    for era in [KernelEra::V4_2, KernelEra::V6_18] {
        let mut f = F::new(era, "");
        f.advise(0, 0, Fadvice::Willneed);
        let n = f.cached(0..64).len() as u64;
        let io_pages = f.sim.devices[0].io_pages;
        let want = if era == KernelEra::V6_18 {
            64.min(io_pages.max(32))
        } else {
            64 // MAX_READAHEAD, 2 MiB, before 4.10
        };
        assert_eq!(n, want, "{era}: io_pages {io_pages}");
        assert_eq!(f.sim.tasks[f.tid].stats.cache_misses, n);
        for i in f.cached(0..64) {
            assert!(!f.flag(i, pg::READAHEAD), "{era}: no marker at {i}");
        }
        complete_io(&mut f.sim);
        f.check();
    }
}

#[test]
fn random_reads_just_the_request_and_normal_and_sequential_set_the_window() {
    // Without advice a 1-page read of a cold file reads a window ahead.
    let mut f = F::new(KernelEra::V6_18, "");
    f.read(0, 1);
    assert!(f.cached(0..64).len() > 1);

    for (era, features) in [
        (KernelEra::V6_18, ""),
        (KernelEra::V2_6_30, ""),
        (KernelEra::V6_18, "-fadvise-random-fmode"),
    ] {
        let mut f = F::new(era, features);
        f.advise(0, 0, Fadvice::Random);
        let ra = f.sim.fd_file(f.tid, f.fd).unwrap().ra;
        let fmode = f.sim.features.fadvise_random_fmode;
        assert_eq!(ra.random, fmode, "{era} {features}");
        assert_eq!(ra.ra_pages == 0, !fmode, "{era} {features}");
        f.read(10, 1);
        f.read(30, 2);
        assert_eq!(f.cached(0..64), vec![10, 30, 31], "{era} {features}");
        f.advise(0, 0, Fadvice::Normal);
        let ra = f.sim.fd_file(f.tid, f.fd).unwrap().ra;
        let bdi = f.sim.devices[0].ra_pages;
        assert!(!ra.random && ra.ra_pages == bdi, "{era} {features}: {ra:?}");
        f.advise(0, 0, Fadvice::Sequential);
        let ra = f.sim.fd_file(f.tid, f.fd).unwrap().ra;
        assert_eq!(ra.ra_pages, 2 * bdi, "{era} {features}");
        f.check();
    }
}

#[test]
fn fadvise_on_tmpfs_is_ignored_and_a_bad_fd_is_ebadf() {
    let text = scenario() + &file_toml("/tmp/t", 4 * P, false);
    let mut f = F::with_text(&text, KernelEra::V6_18, "");
    let fd = f.open("/tmp/t");
    let ino = f.ino(fd);
    let mut progress = 0;
    let r = f.sim.sys_write(f.tid, fd, 4 * P, Some(0), &mut progress);
    assert_eq!(r, Ok(OpResult::Bytes(4 * P)));
    f.sim.lru_add_drain_all();
    let before = f.sim.inode(ino).mapping.tree.nr_pages();
    assert_eq!(before, 4);
    let r = f.sim.sys_fadvise(f.tid, fd, 0, 0, Fadvice::Dontneed);
    assert_eq!(r, OpResult::None);
    assert_eq!(f.sim.inode(ino).mapping.tree.nr_pages(), before);
    let r = f.sim.sys_fadvise(f.tid, 99, 0, 0, Fadvice::Dontneed);
    assert_eq!(r, OpResult::Err(mmsim::workload::Errno::EBADF));
    let r = f
        .sim
        .sys_fadvise(f.tid, f.fd, u64::MAX, 0, Fadvice::Dontneed);
    assert_eq!(r, OpResult::Err(mmsim::workload::Errno::EINVAL));
}

#[test]
fn under_mglru_6_14_leaves_a_folio_of_the_oldest_generation_in_place() {
    // Dirty pages under writeback fail to go (the lookup keeps them with
    // -invalidate-skips-writeback). New file folios sit in the oldest generation: from 6.14
    // deactivation only clears their references; before, each went through the batch and
    // came back with PG_reclaim.
    let text = scenario().replace(
        "name = \"fadvise\"",
        "name = \"fadvise\"\npolicy = \"mglru\"",
    );
    for (features, moved) in [
        ("-invalidate-skips-writeback", false),
        (
            "-invalidate-skips-writeback,-mglru-optimize-deactivation",
            true,
        ),
    ] {
        let mut f = F::with_text(&text, KernelEra::V6_18, features);
        assert!(f.sim.lru_gen_enabled());
        f.write(0, 8);
        f.sim.lru_add_drain_all();
        // A read marks them referenced (lru_gen_inc_refs).
        f.read(0, 8);
        assert!(f.flag(0, pg::REFERENCED));
        f.advise(0, 8 * P, Fadvice::Dontneed);
        f.sim.lru_add_drain_all();
        for i in 0..8 {
            assert!(f.flag(i, pg::WRITEBACK), "{features} {i}");
            assert_eq!(f.flag(i, pg::RECLAIM), moved, "{features} {i}: PG_reclaim");
            assert!(
                !f.flag(i, pg::REFERENCED),
                "{features} {i}: references cleared"
            );
        }
        assert_eq!(vmstat(&f.sim, VmItem::Pgdeactivate), 0, "{features}");
        complete_io(&mut f.sim);
        f.check();
    }
}

// ---------------------------------------------------------------------------------------
// Through the engine
// ---------------------------------------------------------------------------------------

fn nocache_example(sets: &[&str]) -> mmsim::scenario::Scenario {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/nocache.toml");
    let mut all: Vec<String> = vec![
        "machine.memory_per_node=256MiB".into(),
        "files.0.size=512MiB".into(),
        "files.1.size=100MiB".into(),
    ];
    all.extend(sets.iter().map(|s| s.to_string()));
    load_scenario(path, &all).expect("the example loads")
}

#[test]
fn a_nocache_reader_leaves_the_hot_set_alone() {
    let f = KernelEra::V6_18.features("patched").unwrap();
    let hot_pages = (100 << 20) / P;
    let r = run_sc(&nocache_example(&[]), f.clone(), false, 10_000_000);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    assert_eq!(task_report(&r, "hot").cache_misses, hot_pages);
    let backup = cgroup_report(&r, "backup");
    assert!(backup.peak < 8 << 20, "backup peak {}", backup.peak);
    let r = run_sc(
        &nocache_example(&["tasks.backup.nocache=false"]),
        f,
        false,
        10_000_000,
    );
    assert!(task_report(&r, "hot").cache_misses > hot_pages);
    assert!(cgroup_report(&r, "backup").peak > 100 << 20);
}

#[test]
fn the_nocache_example_passes_the_checker() {
    let sc = nocache_example(&[
        "machine.memory_per_node=64MiB",
        "files.0.size=96MiB",
        "files.1.size=16MiB",
        "tasks.hot.passes=2",
    ]);
    let f = KernelEra::V6_18.features("patched").unwrap();
    let r = run_sc(&sc, f, true, 10_000_000);
    assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{:?}", r.end);
    assert!(r.oracle_violations.is_empty());
}

/// dd with `nocache`: each advice starts the writeback of what was just written; 4.14
/// deactivates those pages (rotated to the tail when written), 6.18 passes them over.
#[test]
fn dd_nocache_rotates_its_pages_on_4_14_and_not_on_6_18() {
    let text = machine_toml("dd-nocache", 2, "256MiB", None, "1GiB", "/mnt")
        + "\n[[tasks]]\nname = \"dd\"\ncpu = 0\nprogram = \"dd\"\npath = \"/mnt/out\"\nsize = \"16MiB\"\nblock_size = \"64KiB\"\nnocache = true\n";
    let sc = parse_scenario(&text, "dd-nocache", &[]).unwrap();
    let pages = ((16 << 20) / P) as i64;
    for (era, rotated) in [(KernelEra::V4_14, true), (KernelEra::V6_18, false)] {
        let r = run_sc(&sc, era.features("patched").unwrap(), true, 10_000_000);
        assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{era}: {:?}", r.end);
        let n = r.vmstat["pgrotated"];
        if rotated {
            // All but the last granule's pages, advised at the end while still dirty.
            assert!(n >= pages - 32 && n <= pages, "{era}: pgrotated {n}");
        } else {
            assert_eq!(n, 0, "{era}");
        }
    }
    let plain = parse_scenario(&text.replace("nocache = true\n", ""), "dd", &[]).unwrap();
    let r = run_sc(
        &plain,
        KernelEra::V4_14.features("patched").unwrap(),
        false,
        10_000_000,
    );
    assert_eq!(r.vmstat["pgrotated"], 0);
}

#[test]
fn bad_advice_and_nocache_values_name_the_field() {
    let base = scenario();
    let task = "program = \"read\"\npath = \"/mnt/f\"\n";
    let text = base.replace(task, &format!("{task}advice = \"dontcare\"\n"));
    let e = parse_scenario(&text, "s.toml", &[]).expect_err("rejected");
    assert_eq!(e.field, "tasks.t.advice", "{e}");
    assert!(
        e.message.contains("dontcare") && e.message.contains("willneed"),
        "{e}"
    );
    assert!(e.line.is_some(), "{e}");
    let text = base.replace(task, &format!("{task}nocache = \"yes\"\n"));
    let e = parse_scenario(&text, "s.toml", &[]).expect_err("rejected");
    assert_eq!(e.field, "tasks.t.nocache", "{e}");
}

// ---------------------------------------------------------------------------------------
// Property test
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Step {
    Read { cpu: usize, at: u64, pages: u64 },
    Write { at: u64, pages: u64 },
    Advise { at: u64, pages: u64, advice: usize },
    Io,
    Drain,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..2usize, 0..64u64, 1..16u64).prop_map(|(cpu, at, pages)| Step::Read { cpu, at, pages }),
        (0..64u64, 1..8u64).prop_map(|(at, pages)| Step::Write { at, pages }),
        (0..64u64, 0..40u64, 0..5usize).prop_map(|(at, pages, advice)| Step::Advise {
            at,
            pages,
            advice
        }),
        Just(Step::Io),
        Just(Step::Drain),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any sequence of reads, writes and advice keeps the machine's invariants and the
    /// content oracle; DONTNEED never drops a dirty, mapped or writeback page, and never
    /// adds a page to the cache.
    #[test]
    fn fadvise_keeps_the_page_cache_consistent(
        era in prop_oneof![Just(KernelEra::V2_6_30), Just(KernelEra::V4_14), Just(KernelEra::V6_18)],
        steps in proptest::collection::vec(step(), 1..24),
    ) {
        let mut f = F::new(era, "");
        for s in steps {
            match s {
                Step::Read { cpu, at, pages } => f.read_on(cpu, f.fd, at, pages.min(64 - at)),
                Step::Write { at, pages } => f.write(at, pages.min(64 - at)),
                Step::Advise { at, pages, advice } => {
                    let advice = Fadvice::ALL[advice].1;
                    let kept: Vec<u64> = f.cached(0..64).into_iter().filter(|&i| {
                        let p = &f.sim.mem[f.page(i) as usize];
                        p.test(pg::DIRTY) || p.test(pg::WRITEBACK) || p.mapped()
                    }).collect();
                    let before = f.cached(0..64);
                    f.advise(at * P, pages * P, advice);
                    let after = f.cached(0..64);
                    if advice == Fadvice::Dontneed {
                        for i in &kept {
                            prop_assert!(after.contains(i), "page {} was dropped", i);
                        }
                        prop_assert!(after.iter().all(|i| before.contains(i)));
                    }
                }
                Step::Io => { complete_io(&mut f.sim); }
                Step::Drain => f.sim.lru_add_drain_all(),
            }
            if let Err(e) = check_all(&f.sim) {
                return Err(TestCaseError::fail(format!("checker: {e}")));
            }
        }
        complete_io(&mut f.sim);
        prop_assert!(f.sim.oracle_violations.is_empty(), "{:?}", f.sim.oracle_violations);
    }
}
