//! madvise(2) (`mm/madvise.rs`): MADV_DONTNEED on anonymous and file mappings, MADV_COLD's
//! deactivation, MADV_PAGEOUT's reclaim (with and without swap, of anonymous and file
//! pages), the era that knows them, bad ranges, the `anon` program's `madvise` through the
//! engine, and a property test against the machine's invariants and the content oracle.

use crate::common;

use common::{
    build_sim_on, complete_io, file_toml, machine_toml, mmap_at, run_on, task_id, touch_pages,
    vmstat,
};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmscan::ScanControl;
use mmsim::mm::vmstat::VmItem;
use mmsim::scenario::parse_scenario;
use mmsim::sched::TaskId;
use mmsim::sim::Sim;
use mmsim::workload::{Errno, Madvice, OpResult};
use proptest::prelude::*;

const P: u64 = PAGE_SIZE;

/// A 2-CPU machine with 64 MiB, swap unless `swap` is false, a 64-page file /mnt/f, and
/// the task `t` on CPU 0.
fn scenario(swap: bool) -> String {
    machine_toml(
        "madvise",
        2,
        "64MiB",
        swap.then_some("128MiB"),
        "1GiB",
        "/mnt",
    ) + &file_toml("/mnt/f", 64 * P, true)
        + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"anon\"\nsize = \"4KiB\"\n"
}

struct M {
    sim: Sim,
    tid: TaskId,
}

impl M {
    fn new(swap: bool, era: KernelEra, features: &str) -> M {
        Self::with_text(&scenario(swap), era, features)
    }

    fn with_text(text: &str, era: KernelEra, features: &str) -> M {
        let mut sim = build_sim_on(text, "madvise-test", era, features);
        let tid = task_id(&sim, "t");
        run_on(&mut sim, 0, tid);
        M { sim, tid }
    }

    fn map(&mut self, path: Option<&str>, pages: u64, shared: bool) -> u64 {
        mmap_at(&mut self.sim, self.tid, path, pages * P, 0, 3, shared)
    }

    /// Touch `pages` pages from `addr`, completing the IO the faults wait for.
    fn touch(&mut self, addr: u64, pages: u64, write: bool) {
        for _ in 0..1000 {
            match touch_pages(&mut self.sim, 0, self.tid, addr, pages, write) {
                Ok(_) => return,
                Err(_) => {
                    complete_io(&mut self.sim);
                }
            }
        }
        panic!("the touch did not finish");
    }

    fn madvise(&mut self, addr: u64, len: u64, advice: Madvice) -> OpResult {
        run_on(&mut self.sim, 0, self.tid);
        self.sim.sys_madvise(self.tid, addr, len, advice)
    }

    fn mm(&self) -> u32 {
        self.sim.tasks[self.tid].mm.expect("an mm")
    }

    fn pte(&self, addr: u64) -> u64 {
        self.sim.mm(self.mm()).pgtable.get(addr / P)
    }

    fn pfn(&self, addr: u64) -> Pfn {
        let p = self.pte(addr);
        assert!(p & pte::PRESENT != 0, "{addr:#x} is mapped");
        pte::pfn(p)
    }

    fn check(&self) {
        if let Err(e) = check_all(&self.sim) {
            panic!("checker: {e}");
        }
    }

    /// The content oracle found nothing wrong: every read saw the data last written.
    fn oracle_clean(&self) {
        assert!(
            self.sim.oracle_violations.is_empty(),
            "{:?}",
            self.sim.oracle_violations
        );
    }
}

#[test]
fn dontneed_frees_private_anonymous_pages_and_the_next_touch_finds_zeroes() {
    let mut m = M::new(true, KernelEra::V6_18, "");
    let a = m.map(None, 64, false);
    m.touch(a, 64, true);
    let anon = vmstat(&m.sim, VmItem::NrAnonPages);
    assert_eq!(m.madvise(a, 32 * P, Madvice::Dontneed), OpResult::None);
    assert_eq!(m.sim.mm(m.mm()).rss_anon, 32);
    for i in 0..32 {
        assert_eq!(m.pte(a + i * P), 0, "page {i} unmapped");
    }
    assert!(m.pte(a + 40 * P) & pte::PRESENT != 0);
    m.sim.lru_add_drain_all();
    assert_eq!(vmstat(&m.sim, VmItem::NrAnonPages), anon - 32);
    // The next read faults in zeroes: the content oracle agrees.
    m.touch(a, 64, false);
    m.oracle_clean();
    m.check();
}

#[test]
fn dontneed_on_a_file_mapping_unmaps_but_keeps_the_cache_and_the_dirt() {
    let mut m = M::new(true, KernelEra::V6_18, "");
    let a = m.map(Some("/mnt/f"), 16, true);
    m.touch(a, 16, true);
    let pfns: Vec<Pfn> = (0..16).map(|i| m.pfn(a + i * P)).collect();
    assert_eq!(m.madvise(a, 16 * P, Madvice::Dontneed), OpResult::None);
    let ino = m.sim.mm(m.mm()).find_vma(a).map(|_| ()).is_some();
    assert!(ino, "the mapping stays");
    for (i, &pfn) in pfns.iter().enumerate() {
        assert_eq!(m.pte(a + i as u64 * P), 0);
        let page = &m.sim.mem[pfn as usize];
        assert!(!page.mapped(), "page {i} unmapped");
        assert!(page.test(pg::DIRTY), "page {i}: the dirty PTE dirtied it");
        assert!(
            page.test(pg::LRU) || page.refcount > 0,
            "page {i} stays cached"
        );
    }
    m.check();
}

/// 4.14 rules with MADV_COLD: anonymous pages start on the active list there.
#[test]
fn cold_deactivates_the_pages_only_this_mapping_maps() {
    let mut m = M::new(true, KernelEra::V4_14, "+madvise-cold-pageout");
    let a = m.map(None, 32, false);
    m.touch(a, 32, true);
    // The first 8 pages of the file, mapped twice by this process: shared, left alone.
    let f1 = m.map(Some("/mnt/f"), 8, true);
    let f2 = m.map(Some("/mnt/f"), 8, true);
    m.touch(f1, 8, false);
    m.touch(f2, 8, false);
    m.sim.lru_add_drain_all();
    let active: Vec<u64> = (0..32)
        .filter(|&i| m.sim.mem[m.pfn(a + i * P) as usize].test(pg::ACTIVE))
        .collect();
    assert!(
        !active.is_empty(),
        "4.14 puts new anonymous pages on the active list"
    );
    let before = vmstat(&m.sim, VmItem::Pgdeactivate);
    assert_eq!(m.madvise(a, 32 * P, Madvice::Cold), OpResult::None);
    assert_eq!(m.madvise(f1, 8 * P, Madvice::Cold), OpResult::None);
    m.sim.lru_add_drain_all();
    assert_eq!(
        vmstat(&m.sim, VmItem::Pgdeactivate) - before,
        active.len() as i64
    );
    for i in 0..32 {
        let page = &m.sim.mem[m.pfn(a + i * P) as usize];
        assert!(
            !page.test(pg::ACTIVE) && !page.test(pg::REFERENCED),
            "page {i}"
        );
        assert_eq!(m.pte(a + i * P) & pte::YOUNG, 0, "page {i}: PTE made old");
    }
    for i in 0..8 {
        assert!(
            m.pte(f1 + i * P) & pte::YOUNG != 0,
            "shared page {i} untouched"
        );
    }
    m.check();
}

#[test]
fn pageout_swaps_out_anonymous_pages_at_once() {
    let mut m = M::new(true, KernelEra::V6_1, "");
    let a = m.map(None, 64, false);
    m.touch(a, 64, true);
    assert_eq!(m.madvise(a, 64 * P, Madvice::Pageout), OpResult::None);
    assert_eq!(vmstat(&m.sim, VmItem::Pswpout), 64);
    for i in 0..64 {
        assert!(
            m.pte(a + i * P) & pte::SWAP != 0,
            "page {i} is a swap entry"
        );
    }
    complete_io(&mut m.sim);
    // Read back: from the swap cache, the content intact.
    m.touch(a, 64, false);
    m.oracle_clean();
    m.check();
}

/// From 6.10 MADV_PAGEOUT leaves the young bits set and ignores references; the unmap
/// then succeeds only because 5.11's try_to_unmap_one no longer fails on a young PTE.
#[test]
fn pageout_of_6_10_leaves_young_bits_and_relies_on_ttu_ignore_access() {
    for (features, swapped) in [
        ("", true),
        ("-pageout-ignore-references", true),
        ("-ttu-ignore-access", false),
    ] {
        let mut m = M::new(true, KernelEra::V6_18, features);
        let a = m.map(None, 16, false);
        m.touch(a, 16, true);
        let ptes: Vec<u64> = (0..16).map(|i| m.pte(a + i * P)).collect();
        assert!(ptes.iter().all(|p| p & pte::YOUNG != 0));
        let act = vmstat(&m.sim, VmItem::Pgactivate);
        assert_eq!(m.madvise(a, 16 * P, Madvice::Pageout), OpResult::None);
        let out = vmstat(&m.sim, VmItem::Pswpout);
        assert_eq!(out, if swapped { 16 } else { 0 }, "{features}");
        if swapped {
            assert!(
                (0..16).all(|i| m.pte(a + i * P) & pte::SWAP != 0),
                "{features}"
            );
        } else {
            // The young PTE failed each unmap (and was made old): activated instead.
            assert_eq!(vmstat(&m.sim, VmItem::Pgactivate) - act, 16, "{features}");
            for i in 0..16 {
                assert_eq!(m.pte(a + i * P) & pte::YOUNG, 0, "{features} {i}");
            }
        }
        m.check();
    }
}

/// MADV_FREE: the pages go to the inactive file list, clean and not swap-backed; reclaim
/// (here MADV_PAGEOUT's) discards those not written since, without swap, and the next
/// touch finds zeroes; a page written again is kept, swap-backed again and activated.
#[test]
fn free_lets_reclaim_discard_clean_pages_and_keep_rewritten_ones() {
    let mut m = M::new(true, KernelEra::V6_18, "");
    let a = m.map(None, 32, false);
    m.touch(a, 32, true);
    assert_eq!(m.madvise(a, 32 * P, Madvice::Free), OpResult::None);
    m.sim.lru_add_drain_all();
    assert_eq!(vmstat(&m.sim, VmItem::Pglazyfree), 32);
    for i in 0..32 {
        let page = &m.sim.mem[m.pfn(a + i * P) as usize];
        assert!(
            !page.test(pg::SWAPBACKED) && !page.test(pg::DIRTY),
            "page {i}"
        );
        assert_eq!(m.pte(a + i * P) & (pte::DIRTY | pte::YOUNG), 0, "page {i}");
    }
    let file_lru = vmstat(&m.sim, VmItem::NrInactiveFile);
    assert!(file_lru >= 32, "on the inactive file list: {file_lru}");
    m.touch(a, 8, true); // pages 0-7 written again
    let act = vmstat(&m.sim, VmItem::Pgactivate);
    assert_eq!(m.madvise(a, 32 * P, Madvice::Pageout), OpResult::None);
    assert_eq!(vmstat(&m.sim, VmItem::Pglazyfreed), 24);
    assert_eq!(vmstat(&m.sim, VmItem::Pswpout), 0);
    assert_eq!(vmstat(&m.sim, VmItem::Pgactivate) - act, 8);
    for i in 0..8 {
        let page = &m.sim.mem[m.pfn(a + i * P) as usize];
        assert!(
            page.test(pg::SWAPBACKED) && page.test(pg::ACTIVE),
            "page {i} kept"
        );
    }
    for i in 8..32 {
        assert_eq!(m.pte(a + i * P), 0, "page {i} discarded");
    }
    m.touch(a, 32, false);
    m.oracle_clean();
    m.check();
}

#[test]
fn free_drops_swap_entries_and_refuses_what_is_not_private_anonymous_memory() {
    let mut m = M::new(true, KernelEra::V6_18, "");
    let a = m.map(None, 16, false);
    m.touch(a, 16, true);
    assert_eq!(m.madvise(a, 16 * P, Madvice::Pageout), OpResult::None);
    complete_io(&mut m.sim);
    assert_eq!(m.sim.mm(m.mm()).swapents, 16);
    assert_eq!(m.madvise(a, 16 * P, Madvice::Free), OpResult::None);
    assert_eq!(m.sim.mm(m.mm()).swapents, 0);
    for i in 0..16 {
        assert_eq!(m.pte(a + i * P), 0, "page {i}: its swap entry freed");
    }
    m.touch(a, 16, false);
    m.oracle_clean();
    let f = m.map(Some("/mnt/f"), 8, false);
    assert_eq!(
        m.madvise(f, 8 * P, Madvice::Free),
        OpResult::Err(Errno::EINVAL)
    );
    let s = m.map(None, 8, true);
    assert_eq!(
        m.madvise(s, 8 * P, Madvice::Free),
        OpResult::Err(Errno::EINVAL)
    );
    m.check();

    let mut m = M::new(true, KernelEra::V4_2, "");
    let a = m.map(None, 8, false);
    assert_eq!(
        m.madvise(a, 8 * P, Madvice::Free),
        OpResult::Err(Errno::EINVAL)
    );
}

#[test]
fn pageout_without_swap_keeps_and_activates_anonymous_pages() {
    let mut m = M::new(false, KernelEra::V6_1, "");
    let a = m.map(None, 16, false);
    m.touch(a, 16, true);
    let act = vmstat(&m.sim, VmItem::Pgactivate);
    assert_eq!(m.madvise(a, 16 * P, Madvice::Pageout), OpResult::None);
    assert_eq!(vmstat(&m.sim, VmItem::Pgactivate) - act, 16);
    for i in 0..16 {
        assert!(m.sim.mem[m.pfn(a + i * P) as usize].test(pg::ACTIVE));
    }
    m.check();
}

#[test]
fn pageout_drops_clean_file_pages_with_a_shadow() {
    let mut m = M::new(true, KernelEra::V6_1, "");
    let a = m.map(Some("/mnt/f"), 16, false);
    m.touch(a, 16, false);
    complete_io(&mut m.sim);
    let ino = m.sim.mem[m.pfn(a) as usize].mapping;
    assert_eq!(m.madvise(a, 16 * P, Madvice::Pageout), OpResult::None);
    for i in 0..16 {
        assert_eq!(m.pte(a + i * P), 0, "page {i} unmapped");
        let e = m.sim.inode(ino).mapping.tree.lookup(i);
        assert!(matches!(e, Entry::Shadow(_)), "page {i}: {e:?}");
    }
    m.check();
}

#[test]
fn cold_and_pageout_are_einval_before_5_4_and_bad_ranges_are_refused() {
    let mut m = M::new(true, KernelEra::V4_14, "");
    let a = m.map(None, 8, false);
    m.touch(a, 8, true);
    assert_eq!(
        m.madvise(a, 8 * P, Madvice::Cold),
        OpResult::Err(Errno::EINVAL)
    );
    assert_eq!(
        m.madvise(a, 8 * P, Madvice::Pageout),
        OpResult::Err(Errno::EINVAL)
    );
    assert_eq!(m.madvise(a, 8 * P, Madvice::Dontneed), OpResult::None);

    let mut m = M::new(true, KernelEra::V6_18, "");
    let a = m.map(None, 8, false);
    assert_eq!(
        m.madvise(a + 1, P, Madvice::Cold),
        OpResult::Err(Errno::EINVAL)
    );
    assert_eq!(m.madvise(a, 0, Madvice::Cold), OpResult::None);
    // Past the mapping's end: the mapped part is advised, then ENOMEM.
    m.touch(a, 8, true);
    assert_eq!(
        m.madvise(a, 16 * P, Madvice::Dontneed),
        OpResult::Err(Errno::ENOMEM)
    );
    assert_eq!(m.pte(a), 0);
    // A locked mapping: EINVAL.
    let r = m.sim.sys_mlock(m.tid, a, 8 * P, true);
    assert_eq!(r, OpResult::None);
    assert_eq!(
        m.madvise(a, 8 * P, Madvice::Pageout),
        OpResult::Err(Errno::EINVAL)
    );
    m.check();
}

#[test]
fn under_mglru_cold_moves_folios_not_in_the_oldest_generation() {
    // 6.1: every MGLRU folio goes through the batch and counts pgdeactivate; 6.14 clears
    // the references and leaves one already in the oldest generation where it is.
    let text = scenario(true).replace(
        "name = \"madvise\"",
        "name = \"madvise\"\npolicy = \"mglru\"",
    );
    let mut counts = Vec::new();
    for features in ["", "-mglru-optimize-deactivation"] {
        let mut m = M::with_text(&text, KernelEra::V6_18, features);
        let a = m.map(None, 64, false);
        m.touch(a, 64, true);
        m.sim.lru_add_drain_all();
        assert_eq!(m.madvise(a, 64 * P, Madvice::Cold), OpResult::None);
        m.sim.lru_add_drain_all();
        counts.push(vmstat(&m.sim, VmItem::Pgdeactivate));
        m.check();
    }
    assert_eq!(counts[1], 64, "without the optimisation every folio moves");
    assert!(counts[0] <= counts[1], "{counts:?}");
}

// ---------------------------------------------------------------------------------------
// Through the engine
// ---------------------------------------------------------------------------------------

fn anon_scenario(advice: &str, era: &str) -> String {
    format!(
        "name = \"anon-madvise\"\nkernel = \"{era}\"\n[machine]\ncpus_per_node = 2\nmemory_per_node = \"64MiB\"\n\
         [swap]\nsize = \"128MiB\"\npreset = \"ssd\"\n[[tasks]]\nname = \"app\"\ncpu = 0\nprogram = \"anon\"\n\
         size = \"16MiB\"\npasses = 3\nthink = \"1s\"\n{advice}"
    )
}

/// Each advice after passes 1 and 2 (of 3), a think of 1 s after it: long enough for the
/// swap writes MADV_PAGEOUT starts on the SSD to end before the next pass.
#[test]
fn the_anon_program_advises_between_passes() {
    let pages = (16 << 20) / P;
    let run = |advice: &str, era: &str| {
        let sc = parse_scenario(&anon_scenario(advice, era), "anon-madvise", &[]).unwrap();
        let f = sc.kernel.unwrap().features("patched").unwrap();
        let r = common::run_sc(&sc, f, true, 10_000_000);
        assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{advice} {era}");
        assert!(r.oracle_violations.is_empty());
        r
    };
    let r = run("", "6.1");
    assert_eq!(common::task_report(&r, "app").minflt, pages);
    let r = run("madvise = \"dontneed\"\n", "6.1");
    assert_eq!(common::task_report(&r, "app").minflt, 3 * pages);
    let r = run("madvise = \"pageout\"\n", "6.1");
    assert_eq!(r.vmstat["pswpout"], 2 * pages as i64);
    // Before 5.4 the advice is EINVAL: the task stops after its first pass.
    let r = run("madvise = \"cold\"\n", "4.14");
    let t = common::task_report(&r, "app");
    assert_eq!(t.errors.get("EINVAL"), Some(&1));
    assert_eq!(t.minflt, pages);
}

#[test]
fn a_bad_madvise_value_names_the_field() {
    let text = anon_scenario("madvise = \"forget\"\n", "6.18");
    let e = parse_scenario(&text, "s.toml", &[]).expect_err("rejected");
    assert_eq!(e.field, "tasks.app.madvise", "{e}");
    assert!(
        e.message.contains("forget") && e.message.contains("pageout"),
        "{e}"
    );
    assert!(e.line.is_some());
}

// ---------------------------------------------------------------------------------------
// Property test
// ---------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Step {
    Touch {
        file: bool,
        at: u64,
        pages: u64,
        write: bool,
    },
    Advise {
        file: bool,
        at: u64,
        pages: u64,
        advice: usize,
    },
    Io,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (any::<bool>(), 0..32u64, 1..16u64, any::<bool>()).prop_map(|(file, at, pages, write)| {
            Step::Touch {
                file,
                at,
                pages,
                write,
            }
        }),
        (any::<bool>(), 0..32u64, 1..40u64, 0..Madvice::ALL.len()).prop_map(
            |(file, at, pages, advice)| {
                Step::Advise {
                    file,
                    at,
                    pages,
                    advice,
                }
            }
        ),
        Just(Step::Io),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Any sequence of touches and advice over an anonymous and a file mapping keeps the
    /// machine's invariants and the content oracle; the VMAs the hints split still cover
    /// the mappings, and unmapping them lets the file go.
    #[test]
    fn madvise_keeps_memory_consistent(
        era in prop_oneof![Just(KernelEra::V6_1), Just(KernelEra::V6_18)],
        mglru in any::<bool>(),
        steps in proptest::collection::vec(step(), 1..20),
    ) {
        let text = if mglru {
            scenario(true).replace("name = \"madvise\"", "name = \"madvise\"\npolicy = \"mglru\"")
        } else {
            scenario(true)
        };
        let mut m = M::with_text(&text, era, "");
        let anon = m.map(None, 32, false);
        let file = m.map(Some("/mnt/f"), 32, true);
        let ino = m.sim.mm(m.mm()).vmas[&file].file.expect("a file mapping");
        let open = m.sim.inode(ino).open;
        for s in steps {
            match s {
                Step::Touch { file: f, at, pages, write } => {
                    let base = if f { file } else { anon };
                    m.touch(base + at * P, pages.min(32 - at), write);
                }
                Step::Advise { file: f, at, pages, advice } => {
                    let base = if f { file } else { anon };
                    let advice = Madvice::ALL[advice].1;
                    let r = m.madvise(base + at * P, pages.min(32 - at) * P, advice);
                    // MADV_FREE is for private anonymous memory only.
                    let want = if f && advice == Madvice::Free {
                        OpResult::Err(Errno::EINVAL)
                    } else {
                        OpResult::None
                    };
                    prop_assert_eq!(r, want);
                }
                Step::Io => { complete_io(&mut m.sim); }
            }
            if let Err(e) = check_all(&m.sim) {
                return Err(TestCaseError::fail(format!("checker: {e}")));
            }
        }
        complete_io(&mut m.sim);
        m.touch(anon, 32, false);
        m.touch(file, 32, false);
        prop_assert!(m.sim.oracle_violations.is_empty(), "{:?}", m.sim.oracle_violations);
        let spans: u64 = vmas(&m).iter().map(|v| v.1 - v.0).sum();
        prop_assert_eq!(spans, 64 * P);
        prop_assert_eq!(m.sim.inode(ino).open, open + m.sim.inode(ino).i_mmap.len() as u32 - 1);
        run_on(&mut m.sim, 0, m.tid);
        for base in [anon, file] {
            prop_assert_eq!(m.sim.sys_munmap(m.tid, base, 32 * P), Ok(OpResult::None));
        }
        prop_assert!(vmas(&m).is_empty());
        prop_assert_eq!(m.sim.inode(ino).open, open - 1);
        if let Err(e) = check_all(&m.sim) {
            return Err(TestCaseError::fail(format!("checker after munmap: {e}")));
        }
    }
}

/// mmap-read's `madvise`: after MADV_PAGEOUT each pass refaults the file (shadow entries
/// left by the reclaim); after MADV_DONTNEED the pages are still cached and only mapped
/// again.
#[test]
fn the_mmap_read_program_advises_between_passes() {
    let text = |advice: &str| {
        machine_toml("mmap-madvise", 2, "256MiB", None, "1GiB", "/data")
            + &file_toml("/data/m", 8 << 20, true)
            + &format!(
                "\n[[tasks]]\nname = \"r\"\ncpu = 0\nprogram = \"mmap-read\"\npath = \"/data/m\"\n\
                 stride = \"4096\"\npasses = 3\nthink = \"100ms\"\nmadvise = \"{advice}\"\n"
            )
    };
    let pages = (8 << 20) / P;
    let run = |advice: &str| {
        let sc = parse_scenario(&text(advice), "mmap-madvise", &[]).unwrap();
        // Order-0 page cache: fault-around maps 16 pages a fault (large folios are
        // mapped a folio at a time: `large_folios::a_fault_maps_a_large_folio_whole_*`).
        let mut f = KernelEra::V6_18.features("patched").unwrap();
        f.large_folios = false;
        let r = common::run_sc(&sc, f, true, 10_000_000);
        assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{advice}");
        assert!(r.oracle_violations.is_empty());
        r
    };
    let none = run("none");
    assert_eq!(common::task_report(&none, "r").cache_misses, pages);
    let out = run("pageout");
    assert_eq!(common::task_report(&out, "r").cache_misses, 3 * pages);
    assert_eq!(out.vmstat["workingset_refault_file"], 2 * pages as i64);
    let dn = run("dontneed");
    assert_eq!(common::task_report(&dn, "r").cache_misses, pages);
    // Each pass after MADV_DONTNEED maps the cached file again, 16 pages a fault
    // (fault-around), every fault minor; the first pass is the same as without advice (its
    // faults that waited for readahead count major on 6.18: `fault-major-if-retried`).
    let (d, n) = (
        common::task_report(&dn, "r"),
        common::task_report(&none, "r"),
    );
    assert_eq!(d.majflt, n.majflt);
    assert_eq!(d.minflt, n.minflt + 2 * pages / 16);
}

/// The VMAs of the task's mm as (start, end, flags), in order.
fn vmas(m: &M) -> Vec<(u64, u64, u64)> {
    m.sim
        .mm(m.mm())
        .vmas
        .values()
        .map(|v| (v.start, v.end, v.flags))
        .collect()
}

const SEQ: u64 = mmsim::mm::rmap::VM_SEQ_READ;
const RAND: u64 = mmsim::mm::rmap::VM_RAND_READ;

/// MADV_RANDOM on the middle of a file mapping splits it in three (each on the file's
/// i_mmap, with its own file reference); MADV_SEQUENTIAL replaces the hint, MADV_NORMAL
/// clears it; the whole range then unmaps and the file is let go.
#[test]
fn access_hints_set_vm_flags_and_split_the_vma() {
    let mut m = M::new(false, KernelEra::V6_18, "");
    let a = m.map(Some("/mnt/f"), 64, false);
    let ino = m.sim.mm(m.mm()).vmas[&a].file.expect("a file mapping");
    let open = m.sim.inode(ino).open;
    assert_eq!(
        m.madvise(a + 16 * P, 16 * P, Madvice::Random),
        OpResult::None
    );
    let v = vmas(&m);
    assert_eq!(v.len(), 3, "{v:x?}");
    assert_eq!((v[0].0, v[0].1), (a, a + 16 * P));
    assert_eq!((v[1].0, v[1].1), (a + 16 * P, a + 32 * P));
    assert_eq!((v[2].0, v[2].1), (a + 32 * P, a + 64 * P));
    assert_eq!(v[1].2 & (SEQ | RAND), RAND);
    assert_eq!((v[0].2 | v[2].2) & (SEQ | RAND), 0);
    assert_eq!(m.sim.inode(ino).open, open + 2);
    assert_eq!(m.sim.inode(ino).i_mmap.len(), 3);
    // The middle VMA maps file pages 16..32: a touch there faults page 16 in.
    m.touch(a + 16 * P, 1, false);
    assert_eq!(m.sim.mem[m.pfn(a + 16 * P) as usize].index, 16);
    m.check();
    assert_eq!(m.madvise(a, 64 * P, Madvice::Sequential), OpResult::None);
    assert!(vmas(&m).iter().all(|v| v.2 & (SEQ | RAND) == SEQ));
    m.check();
    assert_eq!(m.madvise(a, 64 * P, Madvice::Normal), OpResult::None);
    assert!(vmas(&m).iter().all(|v| v.2 & (SEQ | RAND) == 0));
    // A hole in the range: the mapping is advised, then ENOMEM.
    assert_eq!(
        m.madvise(a, 65 * P, Madvice::Random),
        OpResult::Err(Errno::ENOMEM)
    );
    assert!(vmas(&m).iter().all(|v| v.2 & (SEQ | RAND) == RAND));
    m.check();
    run_on(&mut m.sim, 0, m.tid);
    assert_eq!(
        m.sim.sys_munmap(m.tid, a, 64 * P).expect("no wait"),
        OpResult::None
    );
    assert!(vmas(&m).is_empty());
    assert_eq!(m.sim.inode(ino).open, open - 1);
    assert!(m.sim.inode(ino).i_mmap.is_empty());
    m.check();
}

/// A fault of an MADV_RANDOM mapping reads its page only; one of an MADV_SEQUENTIAL
/// mapping reads the file's whole window ahead; without a hint, read-around.
#[test]
fn random_faults_read_one_page_and_sequential_ones_the_window() {
    for (advice, pages) in [
        (None, 32u64), // read-around: 32 pages centred on page 0, clamped to the file
        (Some(Madvice::Random), 1),
        (Some(Madvice::Sequential), 32),
    ] {
        let mut m = M::new(false, KernelEra::V6_18, "");
        let a = m.map(Some("/mnt/f"), 64, false);
        if let Some(adv) = advice {
            assert_eq!(m.madvise(a, 64 * P, adv), OpResult::None);
        }
        let before = vmstat(&m.sim, VmItem::Pgpgin);
        m.touch(a + 32 * P, 1, false);
        let read = (vmstat(&m.sim, VmItem::Pgpgin) - before) as u64 / (P / 1024);
        let expect = if advice.is_none() { 32 } else { pages };
        assert_eq!(read, expect, "{advice:?}");
        m.check();
    }
}

/// Unmapping passes a young PTE's reference on to its file page (mark_page_accessed:
/// PG_referenced), except through an MADV_SEQUENTIAL mapping — and from v6.3 an
/// MADV_RANDOM one.
#[test]
fn unmap_passes_young_bits_on_unless_the_mapping_has_no_recency() {
    for (era, advice, passed) in [
        (KernelEra::V6_18, None, true),
        (KernelEra::V6_18, Some(Madvice::Sequential), false),
        (KernelEra::V6_18, Some(Madvice::Random), false),
        (KernelEra::V6_1, Some(Madvice::Random), true),
        (KernelEra::V6_1, Some(Madvice::Sequential), false),
        (KernelEra::V2_6_30, Some(Madvice::Sequential), false),
    ] {
        let mut m = M::new(false, era, "");
        let a = m.map(Some("/mnt/f"), 8, false);
        if let Some(adv) = advice {
            assert_eq!(m.madvise(a, 8 * P, adv), OpResult::None);
        }
        m.touch(a, 8, false);
        let pfns: Vec<Pfn> = (0..8).map(|i| m.pfn(a + i * P)).collect();
        for &p in &pfns {
            m.sim.ClearPageReferenced(p);
        }
        run_on(&mut m.sim, 0, m.tid);
        assert_eq!(
            m.sim.sys_munmap(m.tid, a, 8 * P).expect("no wait"),
            OpResult::None
        );
        for &p in &pfns {
            assert_eq!(
                m.sim.mem[p as usize].test(pg::REFERENCED),
                passed,
                "{era:?} {advice:?}"
            );
        }
        m.check();
    }
}

/// folio_referenced: through an MADV_SEQUENTIAL mapping a young PTE is cleared and not
/// counted; through an MADV_RANDOM one it counts — until v6.3, which skips both kinds of
/// mapping (their young bits stay). Under MGLRU (6.1) the same counts hold.
#[test]
fn page_referenced_skips_mappings_without_recency_from_6_3() {
    let root = mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    for policy in ["", "mglru"] {
        for (era, advice, counted, young_stays) in [
            (KernelEra::V6_1, Madvice::Sequential, 0, false),
            (KernelEra::V6_1, Madvice::Random, 1, false),
            (KernelEra::V6_18, Madvice::Sequential, 0, true),
            (KernelEra::V6_18, Madvice::Random, 0, true),
            (KernelEra::V6_18, Madvice::Normal, 1, false),
        ] {
            let text = if policy.is_empty() {
                scenario(false)
            } else {
                scenario(false).replace(
                    "name = \"madvise\"",
                    "name = \"madvise\"\npolicy = \"mglru\"",
                )
            };
            let mut m = M::with_text(&text, era, "");
            assert_eq!(m.sim.lru_gen_enabled(), !policy.is_empty());
            let a = m.map(Some("/mnt/f"), 4, false);
            assert_eq!(m.madvise(a, 4 * P, advice), OpResult::None);
            m.touch(a, 1, false);
            let pfn = m.pfn(a);
            let (referenced, _) = m.sim.page_referenced(pfn, root);
            assert_eq!(referenced, counted, "{policy} {era:?} {advice:?}");
            assert_eq!(
                m.pte(a) & pte::YOUNG != 0,
                young_stays,
                "{policy} {era:?} {advice:?}"
            );
        }
    }
}

/// MADV_WILLNEED of a file mapping reads the range in through readahead (at most
/// max(io_pages, the file's window) pages, from v4.10): the touches that follow find the
/// pages cached, no major fault.
#[test]
fn willneed_reads_a_file_range_in() {
    let mut m = M::new(false, KernelEra::V6_18, "");
    let a = m.map(Some("/mnt/f"), 32, false);
    let before = vmstat(&m.sim, VmItem::Pgpgin);
    assert_eq!(m.madvise(a, 32 * P, Madvice::Willneed), OpResult::None);
    let read = (vmstat(&m.sim, VmItem::Pgpgin) - before) as u64 / (P / 1024);
    assert_eq!(read, 32, "the whole range, within one window");
    assert_eq!(m.pte(a), 0, "nothing is mapped");
    complete_io(&mut m.sim);
    let majflt = vmstat(&m.sim, VmItem::Pgmajfault);
    m.touch(a, 32, false);
    assert_eq!(vmstat(&m.sim, VmItem::Pgmajfault), majflt);
    assert_eq!(
        vmstat(&m.sim, VmItem::Pgpgin) - before,
        read as i64 * (P / 1024) as i64
    );
    m.check();
}

/// MADV_WILLNEED of swapped-out anonymous memory (v3.8) reads the pages into the swap
/// cache without a fault (pswpin, no pgmajfault), so the next touch is minor; before 3.8
/// it is EBADF.
#[test]
fn willneed_swaps_anonymous_pages_back_in_from_3_8() {
    let mut m = M::new(true, KernelEra::V6_18, "");
    let a = m.map(None, 16, false);
    m.touch(a, 16, true);
    assert_eq!(m.madvise(a, 16 * P, Madvice::Pageout), OpResult::None);
    // The written pages stay in the swap cache until reclaim finds them again.
    let cached = |m: &M| {
        (0..16)
            .filter(|i| {
                let p = m.pte(a + i * P);
                assert!(p & pte::SWAP != 0, "page {i} swapped out");
                m.sim.swap.as_ref().expect("swap").cache[pte::pfn(p) as usize]
                    != mmsim::mm::page::NIL
            })
            .count() as i64
    };
    for _ in 0..8 {
        complete_io(&mut m.sim);
        m.sim.lru_add_drain_all();
        let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
        sc.priority = 0;
        m.sim.shrink_node(0, &mut sc);
    }
    complete_io(&mut m.sim);
    let left = cached(&m);
    assert!(left < 16, "reclaim freed swap-cache pages: {left} left");
    let pswpin = vmstat(&m.sim, VmItem::Pswpin);
    let majflt = vmstat(&m.sim, VmItem::Pgmajfault);
    assert_eq!(m.madvise(a, 16 * P, Madvice::Willneed), OpResult::None);
    assert_eq!(
        vmstat(&m.sim, VmItem::Pswpin) - pswpin,
        16 - left,
        "the slots not in the swap cache are read"
    );
    assert_eq!(cached(&m), 16);
    complete_io(&mut m.sim);
    assert_eq!(vmstat(&m.sim, VmItem::Pgmajfault), majflt, "no fault yet");
    let pswpin = vmstat(&m.sim, VmItem::Pswpin);
    m.touch(a, 16, false);
    assert_eq!(
        vmstat(&m.sim, VmItem::Pgmajfault),
        majflt,
        "minor faults only"
    );
    assert_eq!(vmstat(&m.sim, VmItem::Pswpin), pswpin, "nothing read again");
    m.oracle_clean();
    m.check();

    let mut old = M::new(true, KernelEra::V2_6_30, "");
    let a = old.map(None, 4, false);
    old.touch(a, 4, true);
    assert_eq!(
        old.madvise(a, 4 * P, Madvice::Willneed),
        OpResult::Err(Errno::EBADF)
    );
}

/// Limit reclaim (a target memcg below the root) does not count references from the
/// mappings of tasks outside the target's subtree (mm_match_cgroup); global reclaim and
/// reclaim of the mapping task's own cgroup (or an ancestor) do.
#[test]
fn limit_reclaim_ignores_references_from_other_cgroups() {
    let text = scenario(false).replace("name = \"t\"\n", "name = \"t\"\ncgroup = \"a/b\"\n")
        + "\n[[cgroups]]\nname = \"a\"\n\n[[cgroups]]\nname = \"a/b\"\n\n[[cgroups]]\nname = \"c\"\n";
    let mut m = M::with_text(&text, KernelEra::V6_18, "");
    let a = m.map(Some("/mnt/f"), 4, false);
    let root = mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    for (i, (target, counted)) in [("c", 0), ("a", 1), ("a/b", 1), ("", 1)]
        .into_iter()
        .enumerate()
    {
        let at = a + i as u64 * P; // a page whose PTE no TLB holds yet: the touch makes it young
        m.touch(at, 1, false);
        let pfn = m.pfn(at);
        let memcg = if target.is_empty() {
            root
        } else {
            m.sim.memcg_by_name(target).expect("the cgroup")
        };
        let (referenced, _) = m.sim.page_referenced(pfn, memcg);
        assert_eq!(referenced, counted, "target {target:?}");
        assert_eq!(
            m.pte(at) & pte::YOUNG == 0,
            counted == 1,
            "target {target:?}"
        );
    }
}

/// examples/mmap_db.toml (docs/EXPERIMENTS.md, "A database's MADV_RANDOM mapping"): from
/// 6.3 the database's pages, read through an MADV_RANDOM mapping, lose to the log scan
/// in their cgroup and fault back in pass after pass; on 6.1, or without the hint, only
/// the first pass misses. Under both reclaim policies; the checker runs on a small copy.
#[test]
fn the_mmap_db_example_loses_its_cache_to_madv_random_from_6_3() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mmap_db.toml");
    let db_pages = (64 << 20) / P;
    for policy in ["classic", "mglru"] {
        let run = |era: KernelEra, access: &str| {
            let sets = [
                format!("tasks.db.access={access}"),
                format!("policy={policy}"),
            ];
            let sc = mmsim::scenario::load_scenario(path, &sets).expect("the example loads");
            let r = common::run_sc(&sc, era.features("patched").unwrap(), false, 50_000_000);
            assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
            common::task_report(&r, "db").majflt
        };
        let random_6_18 = run(KernelEra::V6_18, "random");
        assert!(
            random_6_18 > 2 * db_pages,
            "{policy}: 6.18 refaults the database: {random_6_18} major faults"
        );
        // 6.1 counts references through an MADV_RANDOM mapping: the first pass only.
        assert_eq!(run(KernelEra::V6_1, "random"), db_pages, "{policy} 6.1");
        // Without the hint, read-around: a handful of major faults, no refaults.
        assert!(
            run(KernelEra::V6_18, "none") < db_pages / 16,
            "{policy} none"
        );
    }
    let small = [
        "machine.memory_per_node=64MiB",
        "files.0.size=4MiB",
        "files.1.size=32MiB",
        "cgroups.0.memory_max=16MiB",
        "tasks.db.passes=6",
        "tasks.db.think=5ms",
        "tasks.scan.start=20ms",
    ]
    .map(String::from);
    let sc = mmsim::scenario::load_scenario(path, &small).expect("the example loads");
    let r = common::run_sc(
        &sc,
        KernelEra::V6_18.features("patched").unwrap(),
        true,
        50_000_000,
    );
    assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{:?}", r.end);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
}

/// From v6.6 MADV_COLD and MADV_PAGEOUT make an active page workingset as they take it
/// off the active list (shrink_active_list's deactivation does the same), so that its
/// refault counts as a workingset one; before, it left without PG_workingset.
#[test]
fn cold_and_pageout_make_active_pages_workingset_from_6_6() {
    for (on, advice) in [
        (true, Madvice::Cold),
        (false, Madvice::Cold),
        (true, Madvice::Pageout),
        (false, Madvice::Pageout),
    ] {
        let features = if on {
            "+madvise-cold-pageout,+madvise-active-workingset"
        } else {
            "+madvise-cold-pageout,-madvise-active-workingset"
        };
        // 4.14 puts new anonymous pages on the active list.
        let mut m = M::new(true, KernelEra::V4_14, features);
        let a = m.map(None, 16, false);
        m.touch(a, 16, true);
        m.sim.lru_add_drain_all();
        let pfns: Vec<Pfn> = (0..16).map(|i| m.pfn(a + i * P)).collect();
        let active: Vec<Pfn> = pfns
            .iter()
            .copied()
            .filter(|&p| m.sim.mem[p as usize].test(pg::ACTIVE))
            .collect();
        assert!(!active.is_empty(), "some pages are active");
        for &p in &pfns {
            assert!(!m.sim.mem[p as usize].test(pg::WORKINGSET));
        }
        assert_eq!(m.madvise(a, 16 * P, advice), OpResult::None);
        // Paged-out pages stay in the swap cache while their write is in flight.
        for &p in &pfns {
            let ws = m.sim.mem[p as usize].test(pg::WORKINGSET);
            assert_eq!(ws, on && active.contains(&p), "{advice:?} {features}");
        }
        m.check();
    }
}

/// munmap and mprotect of part of a mapping split it (split_vma): the middle of an
/// anonymous mapping goes (its pages freed, its neighbours kept), a read-only middle keeps
/// its neighbours writable, and a range with a hole is ENOMEM after the part before it.
#[test]
fn partial_munmap_and_mprotect_split_the_vma() {
    let mut m = M::new(false, KernelEra::V6_18, "");
    let a = m.map(None, 32, false);
    m.touch(a, 32, true);
    run_on(&mut m.sim, 0, m.tid);
    assert_eq!(
        m.sim.sys_munmap(m.tid, a + 8 * P, 8 * P),
        Ok(OpResult::None)
    );
    assert_eq!(m.sim.mm(m.mm()).rss_anon, 24);
    let v = vmas(&m);
    assert_eq!(
        v.iter().map(|v| (v.0, v.1)).collect::<Vec<_>>(),
        [(a, a + 8 * P), (a + 16 * P, a + 32 * P)]
    );
    m.check();
    // The same protection again changes nothing and splits nothing (mprotect_fixup).
    assert_eq!(
        m.sim.sys_mprotect(m.tid, a + 20 * P, 4 * P, 3),
        OpResult::None
    );
    assert_eq!(vmas(&m).len(), 2);
    // Read-only in the middle of the second part.
    assert_eq!(
        m.sim.sys_mprotect(m.tid, a + 20 * P, 4 * P, 1),
        OpResult::None
    );
    let v = vmas(&m);
    assert_eq!(v.len(), 4, "{v:x?}");
    let w = mmsim::mm::rmap::VM_WRITE;
    assert_eq!(v[2], (a + 20 * P, a + 24 * P, v[2].2));
    assert_eq!(v[2].2 & w, 0);
    assert!(v[1].2 & w != 0 && v[3].2 & w != 0);
    for i in 20..24 {
        assert_eq!(m.pte(a + i * P) & pte::WRITE, 0, "page {i} write-protected");
    }
    // Across the hole [8, 16): the first part is changed, then ENOMEM.
    assert_eq!(
        m.sim.sys_mprotect(m.tid, a, 20 * P, 1),
        OpResult::Err(Errno::ENOMEM)
    );
    assert_eq!(vmas(&m)[0].2 & w, 0);
    assert_eq!(
        m.sim.sys_mprotect(m.tid, a + 8 * P, P, 1),
        OpResult::Err(Errno::ENOMEM)
    );
    m.check();
    // The rest unmaps in one call over the hole.
    assert_eq!(m.sim.sys_munmap(m.tid, a, 32 * P), Ok(OpResult::None));
    assert!(vmas(&m).is_empty());
    assert_eq!(m.sim.mm(m.mm()).rss_anon, 0);
    m.check();
}

/// MADV_PAGEOUT reclaims PMD by PMD: the walk's pte-range callback
/// (madvise_cold_or_pageout_pte_range) hands each page table's isolated pages to
/// reclaim_pages before it moves on, so the pages one table's reclaim frees are back
/// before the next table's pages are compressed into zram, whose pool may not reclaim.
/// An app pages its 40 MiB out to zram at each of its 3 sleeps while a reader keeps the
/// rest of the 128 MiB full of page cache: every page goes out each time, so the app's
/// passes after the first swap all of it back in (at least 3 × 10,240). (Isolating the whole
/// range first and freeing it only at the end left zram short of free pages part of the
/// way through: about half the pages stayed.)
#[test]
fn pageout_reclaims_one_page_table_at_a_time() {
    let text = r#"name = "pageout-pmd"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "128MiB"
[swap]
size = "128MiB"
preset = "zram"
compression_ratio = 3
[[devices]]
name = "nvme0"
preset = "nvme"
size = "1GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/hot"
size = "96MiB"
[[tasks]]
name = "app"
cpu = 0
program = "anon"
size = "40MiB"
passes = 4
think = "2s"
madvise = "pageout"
[[tasks]]
name = "reader"
cpu = 1
program = "read"
path = "/data/hot"
block_size = "128KiB"
passes = 6
think = "500ms"
"#;
    let sc = parse_scenario(text, "pageout-pmd", &[]).unwrap();
    for era in [KernelEra::V6_1, KernelEra::V6_18] {
        let r = common::run_sc(&sc, era.features("patched").unwrap(), false, 50_000_000);
        assert!(r.complete, "{era:?}");
        let app = r.tasks.iter().find(|t| t.name == "app").unwrap();
        // Every page is paged out at each sleep and swapped back in at the next pass
        // (reclaim of the app's memory while it runs may add a few more).
        assert!(app.majflt >= 3 * 10_240, "{era:?}: {}", app.majflt);
        assert!(
            r.vmstat["pswpout"] >= 3 * 10_240,
            "{era:?}: {}",
            r.vmstat["pswpout"]
        );
    }
}
