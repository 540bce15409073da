//! Integration tests of reclaim (issue 3): kswapd and direct reclaim on a stream, workingset
//! activation of refaults, anonymous memory and swap, the OOM killer, and a property test of
//! random workloads under memory pressure with the invariant checker on.

use crate::common;

use common::{load_builtin, run_sc, task_report};
use mmsim::run::RunReport;
use mmsim::scenario::parse_scenario;
use mmsim::sim::{Features, RunEnd};
use proptest::prelude::*;

const MAX_STEPS: u64 = 20_000_000;

fn builtin(name: &str, sets: &[&str], features: Features) -> RunReport {
    run_sc(&load_builtin(name, sets), features, false, MAX_STEPS)
}

#[test]
fn stream_read_is_reclaimed_mostly_by_kswapd() {
    let r = builtin(
        "stream-read",
        &["machine.memory_per_node=64MiB"],
        Features::patched(),
    );
    assert_eq!(r.end, RunEnd::Completed);
    let v = |k: &str| r.vmstat[k];
    let scanned = v("pgscan_kswapd") + v("pgscan_direct");
    let stolen = v("pgsteal_kswapd") + v("pgsteal_direct");
    assert!(stolen > 0, "nothing reclaimed");
    assert!(scanned >= stolen);
    assert!(
        v("pgsteal_kswapd") > v("pgsteal_direct"),
        "kswapd should do most of the work"
    );
    assert!(v("pageoutrun") > 0);
    // The second pass refaults pages evicted long ago: refaults, but no activation.
    assert!(v("workingset_refault") > 0);
    assert!(r.oracle_violations.is_empty());
    // Free memory stays above the min watermark whenever it is sampled.
    let free_col = r
        .series_columns
        .iter()
        .position(|c| c == "nr_free_pages")
        .unwrap();
    let pages = 64 * 256i64;
    let min_wmark = ((pages as f64 * 4.0 * 16.0).sqrt() as i64).clamp(128, 65536) / 4;
    for s in &r.series {
        assert!(
            s.values[free_col] >= min_wmark,
            "free {} < min {}",
            s.values[free_col],
            min_wmark
        );
    }
}

#[test]
fn workingset_activates_hot_refaults() {
    let sets = ["machine.memory_per_node=64MiB", "tasks.hot.passes=6"];
    let on = builtin("hot-stream", &sets, Features::patched());
    let mut f = Features::patched();
    f.workingset = false;
    let off = builtin("hot-stream", &sets, f);
    assert!(on.vmstat["workingset_activate"] > 0);
    assert_eq!(off.vmstat["workingset_activate"], 0);
    let misses_on = task_report(&on, "hot").cache_misses;
    let misses_off = task_report(&off, "hot").cache_misses;
    assert!(
        misses_on * 2 < misses_off,
        "hot misses {} (workingset) vs {} (off)",
        misses_on,
        misses_off
    );
}

#[test]
fn anon_pressure_swaps_without_losing_data() {
    let r = builtin(
        "anon-pressure",
        &[
            "machine.memory_per_node=32MiB",
            "tasks.seq.passes=2",
            "tasks.rand.passes=2",
        ],
        Features::patched(),
    );
    assert_eq!(r.end, RunEnd::Completed);
    assert!(r.vmstat["pswpout"] > 0 && r.vmstat["pswpin"] > 0);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    assert!(r.oom.is_empty());
}

#[test]
fn nothing_reclaimable_ends_in_an_oom_kill_not_a_hang() {
    let text = r#"
name = "oom"
[machine]
cpus_per_node = 2
memory_per_node = "32MiB"
[[tasks]]
name = "small"
cpu = 0
program = "anon"
size = "4MiB"
passes = 3
[[tasks]]
name = "hog"
cpu = 1
program = "anon"
size = "64MiB"
"#;
    let sc = parse_scenario(text, "oom.toml", &[]).unwrap();
    let r = run_sc(&sc, Features::patched(), false, MAX_STEPS);
    assert_eq!(r.end, RunEnd::Completed);
    assert_eq!(r.vmstat["oom_kill"], 1);
    assert_eq!(r.oom.len(), 1);
    assert!(r.oom[0].contains("killed hog"), "{}", r.oom[0]);
    assert_eq!(
        task_report(&r, "small").samples["pass"].len(),
        3,
        "the small task finishes"
    );
}

fn random_scenario(
    seed: u64,
    mem_mib: u64,
    swap: bool,
    anon_kib: u64,
    file_kib: u64,
    write_kib: u64,
) -> String {
    let mut s = format!(
        "name = \"prop\"\nseed = {seed}\n[machine]\ncpus_per_node = 2\nmemory_per_node = \"{mem_mib}MiB\"\n\
         [[devices]]\nname = \"sda\"\npreset = \"nvme\"\nsize = \"1GiB\"\n\
         [[filesystems]]\nmount = \"/d\"\ntype = \"blockfs\"\ndevice = \"sda\"\n\
         [[filesystems]]\nmount = \"/t\"\ntype = \"tmpfs\"\n\
         [[files]]\npath = \"/d/f\"\nsize = \"{file_kib}KiB\"\n"
    );
    if swap {
        s.push_str("[swap]\nsize = \"64MiB\"\n");
    }
    s.push_str(&format!(
        "[[tasks]]\nname = \"anon\"\ncpu = 0\nprogram = \"anon\"\nsize = \"{anon_kib}KiB\"\npasses = 2\npattern = \"random\"\nseed = {seed}\n\
         [[tasks]]\nname = \"reader\"\ncpu = 1\nprogram = \"read\"\npath = \"/d/f\"\npasses = 2\n\
         [[tasks]]\nname = \"writer\"\ncpu = 1\nprogram = \"dd\"\npath = \"/d/w\"\nsize = \"{write_kib}KiB\"\nblock_size = \"64KiB\"\niterations = 2\nsync = true\n\
         [[tasks]]\nname = \"tmp\"\ncpu = 0\nprogram = \"dd\"\npath = \"/t/w\"\nsize = \"{}KiB\"\niterations = 2\n",
        write_kib / 4 + 4
    ));
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]
    /// Random mixes of anonymous memory, reads, writes with fdatasync and unlinks under
    /// memory pressure keep every invariant (checked after every step) and never lose a
    /// written version.
    #[test]
    fn random_workloads_under_pressure_keep_invariants(
        seed in 0u64..1000,
        swap in any::<bool>(),
        anon_kib in 1024u64..12288,
        file_kib in 1024u64..24576,
        write_kib in 256u64..8192,
    ) {
        let text = random_scenario(seed, 16, swap, anon_kib, file_kib, write_kib);
        let sc = parse_scenario(&text, "prop.toml", &[]).unwrap();
        let r = run_sc(&sc, Features::patched(), true, MAX_STEPS);
        prop_assert!(matches!(r.end, RunEnd::Completed), "{:?}\n{}", r.end, text);
        prop_assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    }
}

/// page_check_references on a mapped anonymous page with one young PTE: activated at once
/// before v5.9; from 5.9 (`anon-inactive-first`, "mm/vmscan: protect the workingset on
/// anonymous LRU") looked at twice like a file page — kept (PG_referenced set) at the
/// first reference, activated at the second.
#[test]
fn mapped_anon_pages_are_looked_at_twice_from_5_9() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::memory::pte;
    use mmsim::mm::page::{pg, Pfn};
    use mmsim::mm::vmscan::PageReferences;
    for (era, first) in [
        (KernelEra::V4_14, PageReferences::Activate),
        (KernelEra::V6_1, PageReferences::Keep),
        (KernelEra::V6_18, PageReferences::Keep),
    ] {
        let text = common::unit_machine_toml(
            "look-twice",
            "64MiB",
            "program = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n",
        );
        let f = era.features("patched").expect("preset");
        let mut m = common::UnitMachine::new(&text, f);
        let tid = m.tid;
        let addr = common::mmap_at(&mut m.sim, tid, None, 4096, 0, 3, false);
        common::touch_pages(&mut m.sim, 0, tid, addr, 1, true).expect("touched");
        m.sim.lru_add_drain();
        let mm = common::mm_of(&m.sim, tid);
        let vpn = addr >> 12;
        let pfn = pte::pfn(m.sim.mm(mm).pgtable.get(vpn)) as Pfn;
        assert!(!m.sim.mem[pfn as usize].test(pg::REFERENCED));
        assert_eq!(
            m.sim
                .page_check_references(pfn, mmsim::mm::memcontrol::ROOT_MEM_CGROUP),
            first,
            "{era:?}"
        );
        if first == PageReferences::Keep {
            assert!(m.sim.mem[pfn as usize].test(pg::REFERENCED), "{era:?}");
            // Referenced again: the second look activates.
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn).unwrap() |= pte::YOUNG;
            assert_eq!(
                m.sim
                    .page_check_references(pfn, mmsim::mm::memcontrol::ROOT_MEM_CGROUP),
                PageReferences::Activate,
                "{era:?}"
            );
        }
    }
}

/// folio_check_dirty_writeback (3.11): the dirty and congested counts of reclaim — a node
/// (or cgroup) whose dirty pages were all under writeback and marked for reclaim is
/// congested, and from 5.16 its direct reclaimers sleep a jiffy — are of file pages only:
/// anonymous pages are written by reclaim itself, not by the flushers, so their swap
/// writeback does not make reclaim stall. The same pages under writeback, anonymous or a
/// file's, meet kswapd's shrink_node on 6.18.
#[test]
fn only_file_pages_under_writeback_make_reclaim_congested() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    use mmsim::mm::memory::pte;
    use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
    use mmsim::mm::page_alloc::Gfp;
    use mmsim::mm::vmscan::ScanControl;
    let pages = 256u64;
    let shrink = |anon: bool| {
        let text = common::machine_toml("congested", 2, "64MiB", Some("64MiB"), "1GiB", "/mnt")
            + &common::file_toml("/mnt/f", pages * PAGE_SIZE, true)
            + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n";
        let f = KernelEra::V6_18.features("patched").expect("preset");
        let mut m = common::UnitMachine::new(&text, f);
        let tid = m.tid;
        common::run_on(&mut m.sim, 0, tid);
        let path = (!anon).then_some("/mnt/f");
        let addr = common::mmap_at(&mut m.sim, tid, path, pages * PAGE_SIZE, 0, 3, !anon);
        common::run_on(&mut m.sim, 0, tid);
        // A write fault needs the file's pages read first: complete the reads as they go.
        for _ in 0..1000 {
            match common::touch_pages(&mut m.sim, 0, tid, addr, pages, anon) {
                Ok(_) => break,
                Err(_) => {
                    common::complete_io(&mut m.sim);
                }
            }
        }
        m.sim.lru_add_drain();
        let mm = common::mm_of(&m.sim, tid);
        let pfns: Vec<Pfn> = (0..pages)
            .map(|i| pte::pfn(m.sim.mm(mm).pgtable.get((addr >> 12) + i)) as Pfn)
            .collect();
        // Their writeback is in flight and reclaim already marked them (pageout's
        // PG_reclaim): a swap-out, or the flusher's write of the file's pages.
        for &p in &pfns {
            assert_eq!(m.sim.page_anon(p), anon);
            m.sim.mem[p as usize].flags |= pg::WRITEBACK | pg::RECLAIM;
        }
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        sc.priority = 0;
        m.sim.shrink_node(0, &mut sc);
        (sc.nr, m.sim.lruvec(ROOT_MEM_CGROUP, 0).congested)
    };
    let (file, file_congested) = shrink(false);
    assert!(file.writeback > 0, "{file:?}");
    assert!(file.dirty > 0 && file.congested == file.dirty, "{file:?}");
    assert!(file_congested, "kswapd marks the lruvec congested");
    let (anon, anon_congested) = shrink(true);
    assert!(
        anon.writeback > 0,
        "kswapd met them under writeback: {anon:?}"
    );
    assert_eq!((anon.dirty, anon.congested), (0, 0), "{anon:?}");
    assert!(!anon_congested);
}

/// reclaim_throttle(VMSCAN_THROTTLE_CONGESTED) (5.16) and its skip_throttle_noprogress:
/// a cgroup whose 256 dirty file pages are all under writeback and marked for reclaim
/// makes its limit reclaim congested; the reclaimer sleeps a jiffy only while the node's
/// pages waiting for writeback are more than half of its reclaimable pages. With 1,024
/// clean pages of another cgroup cached on the node (512 ≤ 1,280 and more) it is let off;
/// alone (512 > 256 and a few) it sleeps. Either way the end of the reclaim clears the
/// cgroup's congested flag. Global direct reclaim sleeps the same way on the flag kswapd
/// leaves on the node's root lruvec (LRUVEC_NODE_CONGESTED), which stays until kswapd
/// finds the node balanced (clear_pgdat_congested). A write to memory.max's reclaim sleeps
/// on the cgroup's flag as a charge's does.
#[test]
fn reclaim_sleeps_on_congestion_only_while_writeback_dominates_the_node() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    use mmsim::mm::memory::pte;
    use mmsim::mm::page::{pg, Pfn, PAGE_SIZE};
    use mmsim::mm::page_alloc::Gfp;
    use mmsim::workload::CgroupFile;
    let pages = 256u64;
    let clean = 1024u64;
    let run = |other_cache: bool, global: bool| {
        let text = common::machine_toml("congested", 2, "64MiB", None, "1GiB", "/mnt")
            + &common::file_toml("/mnt/f", pages * PAGE_SIZE, true)
            + &common::file_toml("/mnt/g", clean * PAGE_SIZE, true)
            + "\n[[cgroups]]\nname = \"box\"\nmemory_max = \"32MiB\"\n"
            + "\n[[tasks]]\nname = \"t\"\ncpu = 0\ncgroup = \"box\"\nprogram = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n"
            + &common::dd_task_toml("u", 1, "/tmp/y");
        let f = KernelEra::V6_18.features("patched").expect("preset");
        let mut m = common::UnitMachine::new(&text, f);
        let (tid, other) = (m.tid, common::task_id(&m.sim, "u"));
        let touch = |m: &mut common::UnitMachine, cpu, tid, path, n, write| {
            common::run_on(&mut m.sim, cpu, tid);
            let addr = common::mmap_at(&mut m.sim, tid, Some(path), n * PAGE_SIZE, 0, 3, true);
            for _ in 0..1000 {
                match common::touch_pages(&mut m.sim, cpu, tid, addr, n, write) {
                    Ok(_) => break,
                    Err(_) => {
                        common::complete_io(&mut m.sim);
                    }
                }
            }
            addr
        };
        let addr = touch(&mut m, 0, tid, "/mnt/f", pages, true);
        if other_cache {
            touch(&mut m, 1, other, "/mnt/g", clean, false);
        }
        m.sim.lru_add_drain();
        common::run_on(&mut m.sim, 0, tid);
        let mm = common::mm_of(&m.sim, tid);
        // The folios' heads (ext4-like large folios on 6.18) carry the folio's flags.
        let mut heads: Vec<Pfn> = (0..pages)
            .map(|i| {
                let pfn = pte::pfn(m.sim.mm(mm).pgtable.get((addr >> 12) + i)) as Pfn;
                m.sim.folio_head(pfn)
            })
            .collect();
        heads.dedup();
        assert_eq!(m.sim.nodes[0].nr_dirty_writeback, pages, "all dirty");
        for &p in &heads {
            assert!(m.sim.mem[p as usize].flags & pg::DIRTY != 0);
            m.sim.mem[p as usize].flags |= pg::WRITEBACK | pg::RECLAIM;
        }
        if global {
            // kswapd met only such pages: the node is congested.
            m.sim.lruvec_mut(ROOT_MEM_CGROUP, 0).congested = true;
            m.sim.try_to_free_pages(Gfp::KERNEL);
            let congested = m.sim.reclaim_congested;
            assert!(
                m.sim.lruvec(ROOT_MEM_CGROUP, 0).congested,
                "kswapd's to clear"
            );
            // kswapd finds the node balanced and goes to sleep.
            let k = m.sim.kswapd[0].expect("kswapd");
            common::run_on(&mut m.sim, 1, k);
            m.sim.kswapd_step(k, 0);
            assert!(!m.sim.lruvec(ROOT_MEM_CGROUP, 0).congested, "cleared");
            return congested;
        }
        let boxed = m.sim.memcg_by_name("box").expect("cgroup box");
        m.sim
            .try_to_free_mem_cgroup_pages(boxed, 32, Gfp::KERNEL, true);
        assert!(!m.sim.lruvec(boxed, 0).congested, "cleared at the end");
        let congested = m.sim.reclaim_congested;
        // A write to memory.max below the cgroup's usage: its reclaim sleeps a jiffy in
        // the throttle, or, let off, runs out of passes and waits for the writeback.
        let throttles = m.sim.tracepoints.mm_vmscan_throttled.congested;
        let w = m
            .sim
            .cgroup_write("box", CgroupFile::MemoryMax, Some(PAGE_SIZE * 16))
            .expect_err("the write waits");
        assert!(matches!(w, mmsim::sched::Wait::Until(_)), "{w:?}");
        let throttled = m.sim.tracepoints.mm_vmscan_throttled.congested - throttles;
        assert_eq!(throttled, u64::from(congested), "{w:?}");
        congested
    };
    for global in [false, true] {
        assert!(
            run(false, global),
            "alone, the dirty pages dominate the node: throttled (global {global})"
        );
        assert!(
            !run(true, global),
            "the node has plenty of clean cache: skipped (global {global})"
        );
    }
}

/// kswapd-cache-trim-retry (6.10, "mm, vmscan: retry kswapd's priority loop with
/// cache_trim_mode off on failure"). A node whose 256 inactive file pages are all mapped
/// and young (reclaim keeps them) and with no refaults: shrink_node goes into
/// cache_trim_mode (file pages only), reclaims nothing and says so
/// (sc->cache_trim_mode_failed); with sc->no_cache_trim_mode it does not go into it. A
/// kswapd priority loop that ran down to its end without reclaiming, cache_trim_mode having
/// failed, restarts once at DEF_PRIORITY with it off (no failure counted yet) on 6.18, and
/// ends fruitless at once on 6.1; the restarted loop, failing again, ends fruitless.
#[test]
fn kswapd_retries_its_priority_loop_without_cache_trim_mode_from_6_10() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::page_alloc::Gfp;
    use mmsim::mm::vmscan::{ScanControl, DEF_PRIORITY};
    let machine = |era: KernelEra| {
        let mut m = mapped_file_machine(era, 256);
        // 6.12+ reclaim reads the statistics as the last periodic flush left them.
        let now = m.sim.now();
        m.sim.memcg_stats_flush(now);
        m
    };
    let pass = |m: &mut common::UnitMachine, no_trim: bool| {
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        sc.priority = 1;
        sc.no_cache_trim_mode = no_trim;
        m.sim.shrink_node(0, &mut sc);
        (
            sc.cache_trim_mode,
            sc.cache_trim_mode_failed,
            sc.nr_reclaimed,
        )
    };
    let mut m = machine(KernelEra::V6_18);
    assert_eq!(
        pass(&mut m, false),
        (true, true, 0),
        "trimmed the cache, in vain"
    );
    assert_eq!(pass(&mut m, true), (false, false, 0), "no cache_trim_mode");

    for (era, retries) in [(KernelEra::V6_18, true), (KernelEra::V6_1, false)] {
        let mut m = machine(era);
        // The last pass of kswapd's priority loop, fruitless, after cache_trim_mode failed.
        let end_of_loop = |m: &mut common::UnitMachine| {
            let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
            sc.priority = 1;
            m.sim.reclaim[0].kswapd_priority = 1;
            m.sim.kswapd_lower_priority(0, &sc)
        };
        m.sim.reclaim[0].kswapd_cache_trim_mode_failed = true;
        if retries {
            assert_eq!(end_of_loop(&mut m), None, "{era:?}: the loop restarts");
            assert!(m.sim.reclaim[0].kswapd_no_cache_trim_mode);
            assert_eq!(m.sim.reclaim[0].kswapd_priority, DEF_PRIORITY);
        }
        assert_eq!(end_of_loop(&mut m), Some(true), "{era:?}: fruitless");
        assert!(
            !m.sim.reclaim[0].kswapd_no_cache_trim_mode,
            "{era:?}: reset"
        );
        assert!(
            !m.sim.reclaim[0].kswapd_cache_trim_mode_failed,
            "{era:?}: reset"
        );
    }
}

/// shrink_page_list's sc->nr_scanned: 16 mapped page-cache pages whose PTEs are young
/// (kept, not freed) count 16 from v5.3 (`no-double-slab-pressure`), 32 before ("Double
/// the slab pressure for mapped and swapcache pages"); the same 16 pages cached but
/// unmapped (munmap) count 16 in both.
#[test]
fn a_mapped_page_counts_once_in_nr_scanned_from_5_3() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    use mmsim::mm::node::LruList;
    use mmsim::mm::page::PAGE_SIZE;
    use mmsim::mm::page_alloc::Gfp;
    use mmsim::mm::vmscan::ScanControl;
    let scanned = |era: KernelEra, map: bool| {
        let text = common::unit_machine_toml(
            "scan-count",
            "64MiB",
            "program = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n",
        ) + &common::file_toml("/mnt/f", 16 * PAGE_SIZE, true);
        let mut f = era.features("patched").expect("preset");
        f.large_folios = false;
        let mut m = common::UnitMachine::new(&text, f);
        let tid = m.tid;
        let addr = common::mmap_at(&mut m.sim, tid, Some("/mnt/f"), 16 * PAGE_SIZE, 0, 1, true);
        for _ in 0..1000 {
            if common::touch_pages(&mut m.sim, 0, tid, addr, 16, false).is_ok() {
                break;
            }
            common::complete_io(&mut m.sim);
        }
        common::complete_io(&mut m.sim);
        if !map {
            // Still cached, no longer mapped.
            let r = m.sim.sys_munmap(tid, addr, 16 * PAGE_SIZE);
            assert_eq!(r, Ok(mmsim::workload::OpResult::None));
        }
        m.sim.lru_add_drain();
        let mut sc = ScanControl::new(16, false, Gfp::KERNEL);
        m.sim
            .shrink_inactive_list(0, ROOT_MEM_CGROUP, 16, LruList::InactiveFile, &mut sc);
        sc.nr_scanned
    };
    for (era, mapped, unmapped) in [
        (KernelEra::V4_14, 32, 16),
        (KernelEra::V6_1, 16, 16),
        (KernelEra::V6_18, 16, 16),
    ] {
        assert_eq!(scanned(era, true), mapped, "{era:?} mapped");
        assert_eq!(scanned(era, false), unmapped, "{era:?} unmapped");
    }
}

/// lru-cost-rotations (6.2, "mm: vmscan: make rotations a secondary factor in balancing
/// anon vs file"): lru_note_cost weighs a page of IO as SWAP_CLUSTER_MAX rotations and
/// adds the rotations; 5.8–6.1 count the IO alone, a page each. On a node with 256 file
/// pages (no decay below 64), one page written and five rotated cost the file list 37 on
/// 6.18 and 1 on 6.1.
#[test]
fn reclaim_cost_counts_rotations_from_6_2() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    for (era, cost) in [(KernelEra::V6_18, 37), (KernelEra::V6_1, 1)] {
        let mut m = mapped_file_machine(era, 256);
        let before = m.sim.lruvec(ROOT_MEM_CGROUP, 0).file_cost;
        m.sim.lru_note_cost(0, ROOT_MEM_CGROUP, true, 1, 5);
        assert_eq!(
            m.sim.lruvec(ROOT_MEM_CGROUP, 0).file_cost - before,
            cost,
            "{era:?}"
        );
    }
}

/// A 64 MiB unit machine on `era`'s patched rules whose task has mapped the `pages`-page
/// file /mnt/f read-only and read it all through the mapping (its PTEs young), the pages
/// on the LRU.
fn mapped_file_machine(era: mmsim::kernel::KernelEra, pages: u64) -> common::UnitMachine {
    use mmsim::mm::page::PAGE_SIZE;
    let text = common::unit_machine_toml(
        "mapped",
        "64MiB",
        "program = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n",
    ) + &common::file_toml("/mnt/f", pages * PAGE_SIZE, true);
    let mut m = common::UnitMachine::new(&text, era.features("patched").expect("preset"));
    let tid = m.tid;
    let addr = common::mmap_at(
        &mut m.sim,
        tid,
        Some("/mnt/f"),
        pages * PAGE_SIZE,
        0,
        1,
        true,
    );
    for _ in 0..1000 {
        if common::touch_pages(&mut m.sim, 0, tid, addr, pages, false).is_ok() {
            break;
        }
        common::complete_io(&mut m.sim);
    }
    common::complete_io(&mut m.sim);
    m.sim.lru_add_drain();
    m
}

/// A 32 MiB unit machine on `era` whose page cache is dirty pages of /mnt/f that nothing
/// writes back (vm.dirty_ratio 100: the writer is never throttled; no flusher runs outside
/// the engine), written until free memory is within 64 pages of the min watermark; with
/// `writeback`, an fdatasync then puts them under writeback that never completes.
fn dirty_full_machine(era: mmsim::kernel::KernelEra, writeback: bool) -> common::UnitMachine {
    use mmsim::mm::page::PAGE_SIZE;
    use mmsim::mm::vmstat::VmItem;
    use mmsim::workload::OpResult;
    let text = common::unit_machine_toml(
        "dirty-full",
        "32MiB",
        "program = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n",
    ) + &common::file_toml("/mnt/f", 64 << 20, false)
        + "\n[vm]\ndirty_ratio = 100\ndirty_background_ratio = 90\n";
    let mut m = common::UnitMachine::new(&text, era.features("patched").expect("preset"));
    let fd = common::open_restarting(&mut m, "/mnt/f");
    let (tid, min) = (m.tid, m.sim.nodes[0].watermark.min);
    let mut at = 0;
    loop {
        let free = m.sim.vmstat.get(VmItem::NrFreePages) as u64;
        let pages = (free.saturating_sub(min + 64) / 2).min(256);
        if pages == 0 {
            break;
        }
        let mut progress = 0;
        // A write goes on after the pauses it takes (a time slice's end).
        let r = (0..1000)
            .map(|_| {
                m.sim.sys_write(
                    tid,
                    fd,
                    pages * PAGE_SIZE,
                    Some(at * PAGE_SIZE),
                    &mut progress,
                )
            })
            .find(|r| !matches!(r, Err(mmsim::sched::Wait::Until(_))));
        assert!(matches!(r, Some(Ok(OpResult::Bytes(_)))), "write: {r:?}");
        at += pages;
    }
    assert!(at > 5000, "{at} pages written");
    if writeback {
        let mut progress = 0;
        let r = m.sim.sys_fdatasync(tid, fd, &mut progress);
        assert!(r.is_err(), "fdatasync waits for its writeback: {r:?}");
        let wb = m.sim.vmstat.get(VmItem::NrWriteback) as u64;
        assert!(wb > at / 2, "{wb} of {at} pages under writeback");
    }
    m
}

/// The page allocator's retry loop (`oom-detection-rework`, 4.7): on a machine whose
/// reclaimable pages are all dirty and never written back, a task's allocation runs
/// MAX_RECLAIM_RETRIES + 1 fruitless direct reclaim rounds — each followed by the sleep
/// of its era: 6.18's NOPROGRESS throttle (a jiffy: the dirty pages are more than half of
/// the reclaimable ones), 5.15's congestion_wait(HZ/10) in should_reclaim_retry — and
/// then the OOM killer. Before 4.7 the round backs off (congestion_wait(HZ/50)) for as
/// long as dirty pages remain, and never kills. Pages under writeback instead: every era
/// waits for their completions and keeps retrying (mmsim's stand-in for the block layer's
/// back-pressure on the reclaimer that wrote them).
#[test]
fn a_fruitless_allocation_retries_reclaim_sixteen_times_then_kills_from_4_7() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::page_alloc::{AllocError, Gfp};
    use mmsim::mm::vmstat::VmItem;
    use mmsim::sched::Wait;
    const MS: u64 = 1_000_000_000;
    for (era, sleep) in [
        (KernelEra::V6_18, MS),
        (KernelEra::new(5, 15), 100 * MS),
        (KernelEra::new(4, 4), 20 * MS),
    ] {
        let mut m = dirty_full_machine(era, false);
        let stalls = m.sim.vmstat.get(VmItem::Allocstall);
        let (mut sleeps, mut failed) = (0, false);
        for _ in 0..100_000 {
            match m.sim.alloc_page(Gfp::KERNEL) {
                Ok(_) => {}
                Err(AllocError::Wait(Wait::Until(t))) => {
                    // From the end of the round (the clock has its reclaim's cost).
                    let now = m.sim.now();
                    assert_eq!(t - now, sleep, "{era}: the sleep after a fruitless round");
                    sleeps += 1;
                    if sleeps == 40 {
                        break;
                    }
                }
                Err(AllocError::Wait(w)) => panic!("{era}: {w:?}"),
                Err(AllocError::NoMem) => {
                    failed = true;
                    break;
                }
            }
        }
        let rounds = m.sim.vmstat.get(VmItem::Allocstall) - stalls;
        let kills = m.sim.vmstat.get(VmItem::OomKill);
        if era < KernelEra::new(4, 7) {
            assert!(!failed, "{era}: the allocation failed");
            assert_eq!((sleeps, kills), (40, 0), "{era}");
            continue;
        }
        assert!(failed, "{era}: never gave up ({sleeps} sleeps)");
        assert_eq!((rounds, sleeps, kills), (17, 16, 1), "{era}");
        let noprogress = m.sim.tracepoints.mm_vmscan_throttled.noprogress;
        assert_eq!(
            noprogress,
            if era >= KernelEra::V6_18 { 16 } else { 0 },
            "{era}"
        );
    }
}

#[test]
fn a_fruitless_allocation_waiting_on_writeback_is_not_counted_toward_the_oom() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::page_alloc::{AllocError, Gfp};
    use mmsim::mm::vmstat::VmItem;
    for era in [
        KernelEra::V6_18,
        KernelEra::new(5, 15),
        KernelEra::new(4, 4),
    ] {
        let mut m = dirty_full_machine(era, true);
        let mut sleeps = 0;
        for _ in 0..100_000 {
            match m.sim.alloc_page(Gfp::KERNEL) {
                Ok(_) => {}
                Err(AllocError::Wait(_)) => {
                    sleeps += 1;
                    if sleeps == 40 {
                        break;
                    }
                }
                Err(AllocError::NoMem) => panic!("{era}: the allocation failed"),
            }
        }
        assert_eq!(sleeps, 40, "{era}");
        assert_eq!(m.sim.vmstat.get(VmItem::OomKill), 0, "{era}");
        assert_eq!(m.sim.tasks[m.tid].alloc_no_progress_loops, 0, "{era}");
    }
}

/// reclaim_throttle does not throttle kthreads other than kswapd: a flusher's fruitless
/// allocation on 6.18 reschedules between its rounds where a user task sleeps a jiffy in
/// VMSCAN_THROTTLE_NOPROGRESS, and reaches the OOM killer after as many rounds.
#[test]
fn a_kthreads_fruitless_allocation_is_not_throttled() {
    use mmsim::kernel::KernelEra;
    use mmsim::mm::page_alloc::{AllocError, Gfp};
    use mmsim::mm::vmstat::VmItem;
    use mmsim::sched::{KThread, TaskBody, Wait};
    let mut m = dirty_full_machine(KernelEra::V6_18, false);
    let flusher = (0..m.sim.tasks.len())
        .find(|&t| matches!(m.sim.tasks[t].body, TaskBody::Kthread(KThread::Flusher(_))))
        .expect("a flusher");
    m.sim.set_running(0, Some(flusher));
    let mut yields = 0;
    let failed = (0..100_000).any(|_| match m.sim.alloc_page(Gfp::KERNEL) {
        Ok(_) => false,
        Err(AllocError::Wait(Wait::Until(t))) => {
            assert_eq!(t, m.sim.now(), "a reschedule, not a sleep");
            yields += 1;
            false
        }
        Err(AllocError::Wait(w)) => panic!("{w:?}"),
        Err(AllocError::NoMem) => true,
    });
    assert!(failed, "never gave up");
    assert_eq!(yields, 16);
    assert_eq!(m.sim.tracepoints.mm_vmscan_throttled.noprogress, 0);
    assert_eq!(m.sim.vmstat.get(VmItem::OomKill), 1);
}
