//! zswap (`mm/zswap.rs`, `[swap.zswap]`): a store from swap_writepage ends the page's
//! writeback without IO and reclaim frees it in the same pass; a swap-in decompresses
//! without IO (from 6.9, `zswap-exclusive-loads`, freeing the entry and dirtying the page);
//! the compressed bytes are charged to the page's cgroup; memory.zswap.max and a full pool
//! reject stores, which go to the device; the shrink worker writes entries back to the
//! device (from 6.8, `zswap-memcg-lru`, per memcg with a second chance); with
//! memory.zswap.writeback off nothing of the cgroup reaches the device.
//!
//! The unit tests drive kernel functions directly on a one-CPU machine (as
//! `tests/all/zram.rs` does), the shrink worker by calling its step.

use crate::common;
use crate::zram::{assert_consistent, reclaim_pass, slot_of, write_pages};

use common::{
    build_sim_on, cgroup_report, complete_io_and_ipis, load_builtin, mm_of, run_completed, run_on,
    task_id, touch_pages, vmstat,
};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::page::{Pfn, NIL, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::vmstat::VmItem;
use mmsim::scenario::parse_scenario;
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::Sim;
use mmsim::workload::OpResult;
use proptest::prelude::*;

/// One CPU, 64 MiB of RAM, 16 MiB of swap on an SSD with zswap (the `[swap.zswap]` lines
/// `zswap`), and task `a` (whose program never runs here) in cgroup `g` (its lines
/// `cgroup`).
fn zswap_text(zswap: &str, cgroup: &str) -> String {
    format!(
        r#"name = "zswap"

[machine]
nodes = 1
cpus_per_node = 1
memory_per_node = "64MiB"

[swap]
size = "16MiB"
preset = "ssd"

[swap.zswap]
{zswap}

[[cgroups]]
name = "g"
{cgroup}

[[tasks]]
name = "a"
cpu = 0
cgroup = "g"
program = "anon"
size = "4KiB"
"#
    )
}

/// The machine with zswap compressing by `ratio` (4: 1 KiB a page), the given extra
/// `[swap.zswap]` and cgroup lines.
fn zswap_machine(era: KernelEra, ratio: u32, zswap: &str, cgroup: &str) -> (Sim, TaskId) {
    let text = zswap_text(&format!("compression_ratio = {ratio}\n{zswap}"), cgroup);
    let sim = build_sim_on(&text, "zswap.toml", era, "");
    let tid = task_id(&sim, "a");
    (sim, tid)
}

/// Reclaim passes (IO completed after each, the checker run) until every page of
/// [first, first+n) is a swap entry.
fn swap_out_all(sim: &mut Sim, tid: TaskId, first: u64, n: u64) {
    let mm = mm_of(sim, tid);
    for _ in 0..200 {
        if (first..first + n).all(|v| sim.mm(mm).pgtable.get(v) & pte::SWAP != 0) {
            return;
        }
        reclaim_pass(sim, tid);
        complete_io_and_ipis(sim);
        check_all(sim).unwrap();
    }
    panic!("the pages were not swapped out");
}

/// One access of `vpn` by `tid`, completing IO and retrying while it waits. Returns
/// whether it waited.
fn access(sim: &mut Sim, tid: TaskId, vpn: u64, write: bool) -> bool {
    for i in 0..100 {
        match touch_pages(sim, 0, tid, vpn << PAGE_SHIFT, 1, write) {
            Ok(OpResult::Bytes(_)) => return i > 0,
            Err(Wait::PageLocked(_) | Wait::PageWriteback(_) | Wait::Until(_)) => {
                complete_io_and_ipis(sim);
            }
            other => panic!("access to {vpn:#x}: {other:?}"),
        }
    }
    panic!("access to {vpn:#x} never completed");
}

/// Step the shrink worker until it sleeps, completing IO between steps; the steps taken.
fn run_shrink_worker(sim: &mut Sim) -> usize {
    let w = sim.zswap().unwrap().worker.expect("the shrink worker");
    for n in 1..10_000 {
        run_on(sim, 0, w);
        let runnable = sim.zswap_shrink_step(w);
        complete_io_and_ipis(sim);
        check_all(sim).unwrap();
        if !runnable {
            return n;
        }
    }
    panic!("the shrink worker never slept");
}

/// The slots zswap holds.
fn stored_slots(sim: &Sim) -> Vec<u32> {
    let z = sim.zswap().unwrap();
    (0..sim.swap.as_ref().unwrap().nr_pages as u32)
        .filter(|&o| z.has(o))
        .collect()
}

#[test]
fn a_stored_page_is_freed_in_the_pass_that_stored_it_without_io() {
    let (mut sim, tid) = zswap_machine(KernelEra::V6_18, 4, "", "");
    write_pages(&mut sim, tid, 32);
    let mut stored = 0;
    for _ in 0..10 {
        reclaim_pass(&mut sim, tid);
        stored = vmstat(&sim, VmItem::Zswpout);
        if stored > 0 {
            break;
        }
    }
    assert!(stored > 0, "no pass stored a page");
    // No device IO: the store ended the writeback, and the pass freed the page.
    assert_eq!(vmstat(&sim, VmItem::Pswpout), 0);
    assert_eq!(vmstat(&sim, VmItem::NrWriteback), 0);
    assert_eq!(complete_io_and_ipis(&mut sim), 0, "no IO in flight");
    let sw = sim.swap.as_ref().unwrap();
    assert!(
        sw.cache.iter().all(|&p| p == NIL),
        "no stored page stays cached"
    );
    let z = sim.zswap().unwrap();
    assert_eq!(z.nr_stored as i64, stored);
    // 1 KiB a page: the pool is a quarter page per stored page, rounded up.
    assert_eq!(z.pool.len() as u64, (stored as u64).div_ceil(4));
    check_all(&sim).unwrap();
}

#[test]
fn a_swap_in_decompresses_without_io_and_from_6_9_frees_the_entry() {
    for era in [KernelEra::V6_1, KernelEra::V6_18] {
        let (mut sim, tid) = zswap_machine(era, 4, "", "");
        let first = write_pages(&mut sim, tid, 8);
        swap_out_all(&mut sim, tid, first, 8);
        let slot = slot_of(&sim, tid, first + 3);
        let (maj, zswpin) = (
            vmstat(&sim, VmItem::Pgmajfault),
            vmstat(&sim, VmItem::Zswpin),
        );
        assert!(
            !access(&mut sim, tid, first + 3, false),
            "{era}: the fault waited"
        );
        assert_eq!(vmstat(&sim, VmItem::Pgmajfault), maj + 1, "{era}");
        assert!(vmstat(&sim, VmItem::Zswpin) > zswpin, "{era}");
        assert_eq!(
            vmstat(&sim, VmItem::Pswpin),
            0,
            "{era}: nothing read from the SSD"
        );
        assert_eq!(complete_io_and_ipis(&mut sim), 0, "{era}: no IO");
        let pfn = sim.swap.as_ref().unwrap().cache[slot as usize];
        assert_ne!(pfn, NIL, "{era}: the page is in the swap cache");
        let has = sim.zswap().unwrap().has(slot);
        if era >= KernelEra::V6_18 {
            // Exclusive load: the compressed copy is gone, the page is the only one.
            assert!(
                !has && sim.PageDirty(pfn),
                "6.18: the entry stays or the page is clean"
            );
        } else {
            // The entry stays until the slot is freed: the clean page can go again
            // without a store.
            assert!(
                has && !sim.PageDirty(pfn),
                "6.1: the entry went or the page is dirty"
            );
        }
        for v in first..first + 8 {
            access(&mut sim, tid, v, false);
        }
        assert_consistent(&sim);
    }
}

#[test]
fn the_compressed_bytes_are_charged_to_the_cgroup() {
    let (mut sim, tid) = zswap_machine(KernelEra::V6_18, 4, "", "");
    let g = sim.tasks[tid].memcg as usize;
    let first = write_pages(&mut sim, tid, 64);
    let usage = sim.memcgs[g].usage;
    swap_out_all(&mut sim, tid, first, 64);
    // 64 pages left the cgroup's memory; their 64 KiB in zswap is charged as 16 pages,
    // and their slots still count as swap.
    assert_eq!(sim.memcgs[g].usage, usage - 64 + 16);
    assert_eq!(sim.memcgs[g].swap_usage, 64);
    let z = sim.zswap().unwrap();
    assert_eq!(z.memcg_bytes[g], 64 * 1024);
    assert_eq!(z.memcg_stored[g], 64);
    // munmap frees the slots: the entries, their charge and the pool go.
    run_on(&mut sim, 0, tid);
    sim.sys_munmap(tid, first << PAGE_SHIFT, 64 * PAGE_SIZE)
        .unwrap();
    let z = sim.zswap().unwrap();
    assert_eq!((z.nr_stored, z.pool.len(), z.memcg_bytes[g]), (0, 0, 0));
    assert_eq!(z.memcg_charged[g], 0);
    check_all(&sim).unwrap();
}

#[test]
fn a_full_pool_rejects_stores_and_the_worker_writes_back_to_the_accept_threshold() {
    // 1 % of 64 MiB is 163 pool pages; at ratio 1 each stored page takes one.
    for era in [KernelEra::V6_1, KernelEra::V6_18] {
        let text = zswap_text("compression_ratio = 1\nmax_pool_percent = 1", "");
        let mut sim = build_sim_on(&text, "zswap.toml", era, "");
        let tid = task_id(&sim, "a");
        let first = write_pages(&mut sim, tid, 400);
        swap_out_all(&mut sim, tid, first, 400);
        let z = sim.zswap().unwrap();
        assert!(z.counters.pool_limit_hit > 0, "{era}");
        assert!(z.pool.len() <= 163, "{era}: pool {}", z.pool.len());
        // The rejected pages went to the SSD.
        let (out, zout) = (vmstat(&sim, VmItem::Pswpout), vmstat(&sim, VmItem::Zswpout));
        assert!(out > 0 && zout > 0, "{era}: pswpout {out} zswpout {zout}");
        assert_eq!(out + zout, 400, "{era}: each page stored or written once");
        assert!(z.reached_full, "{era}");
        // The worker was queued; its run writes back until the pool is at 90 % of 163.
        let steps = run_shrink_worker(&mut sim);
        let z = sim.zswap().unwrap();
        assert!(
            z.pool.len() <= 163 * 90 / 100,
            "{era}: pool {} after {steps} steps",
            z.pool.len()
        );
        let wb = vmstat(&sim, VmItem::Zswpwb);
        assert!(
            wb > 0 && wb as u64 == z.counters.written_back_pages,
            "{era}: zswpwb {wb}"
        );
        assert_eq!(
            vmstat(&sim, VmItem::Pswpout),
            out + wb,
            "{era}: each written back once"
        );
        // A written-back page went to the SSD with PG_reclaim: cached until reclaimed.
        for &s in &stored_slots(&sim) {
            assert_eq!(sim.swap.as_ref().unwrap().cache[s as usize], NIL);
        }
        // Everything reads back as written, from zswap or from the SSD.
        for v in first..first + 400 {
            access(&mut sim, tid, v, false);
        }
        assert_consistent(&sim);
    }
}

#[test]
fn memory_zswap_max_rejects_stores_and_6_8_writes_back_the_cgroup_first() {
    // zswap.max of 4 pages at ratio 1: four pages stored, the rest to the SSD (6.1); from
    // 6.8 a store over the limit first writes back the cgroup's own entries, giving each
    // a second chance.
    for era in [KernelEra::V6_1, KernelEra::V6_18] {
        let (mut sim, tid) = zswap_machine(era, 1, "", "zswap_max = \"16KiB\"");
        let g = sim.tasks[tid].memcg as usize;
        let first = write_pages(&mut sim, tid, 32);
        swap_out_all(&mut sim, tid, first, 32);
        let z = sim.zswap().unwrap();
        assert!(
            z.memcg_bytes[g] <= 4 * PAGE_SIZE,
            "{era}: {} bytes",
            z.memcg_bytes[g]
        );
        assert!(vmstat(&sim, VmItem::Pswpout) > 0, "{era}");
        if era >= KernelEra::V6_18 {
            assert!(
                vmstat(&sim, VmItem::Zswpwb) > 0,
                "6.18: nothing written back"
            );
            assert!(
                vmstat(&sim, VmItem::Zswpout) > 4,
                "6.18: the limit stopped the stores"
            );
        } else {
            assert_eq!(vmstat(&sim, VmItem::Zswpwb), 0);
            assert_eq!(vmstat(&sim, VmItem::Zswpout), 4);
            assert!(z.counters.reject_memcg_limit > 0);
        }
        for v in first..first + 32 {
            access(&mut sim, tid, v, false);
        }
        assert_consistent(&sim);
    }
}

#[test]
fn with_zswap_writeback_off_nothing_reaches_the_device() {
    // memory.zswap.writeback = 0 (6.8): pages zswap rejects (here past zswap.max) stay in
    // memory, dirty and active, and the shrink worker leaves the cgroup alone.
    let (mut sim, tid) = zswap_machine(
        KernelEra::V6_18,
        1,
        "",
        "zswap_max = \"16KiB\"\nzswap_writeback = false",
    );
    let first = write_pages(&mut sim, tid, 32);
    for _ in 0..20 {
        reclaim_pass(&mut sim, tid);
        complete_io_and_ipis(&mut sim);
        check_all(&sim).unwrap();
    }
    assert_eq!(vmstat(&sim, VmItem::Pswpout), 0);
    assert_eq!(vmstat(&sim, VmItem::Zswpwb), 0);
    assert_eq!(vmstat(&sim, VmItem::Zswpout), 4);
    // The 28 rejected pages stay in the swap cache (unmapped by the pass), dirty.
    let cached: Vec<Pfn> = sim
        .swap
        .as_ref()
        .unwrap()
        .cache
        .iter()
        .copied()
        .filter(|&p| p != NIL)
        .collect();
    assert_eq!(cached.len(), 28);
    assert!(cached.iter().all(|&p| sim.PageDirty(p)));
    for v in first..first + 32 {
        access(&mut sim, tid, v, false);
    }
    assert_consistent(&sim);
}

#[test]
fn zswap_settings_are_checked_with_the_line_named() {
    let cases = [
        ("compressor = \"deflate\"", "unknown compressor \"deflate\""),
        (
            "compression_ratio = 0",
            "compression_ratio must be between 1",
        ),
        (
            "max_pool_percent = 0",
            "max_pool_percent must be between 1 and 100",
        ),
        (
            "accept_threshold_percent = 101",
            "accept_threshold_percent must be between 0",
        ),
        ("zpool = \"zbud\"", "zpool"),
    ];
    for (line, want) in cases {
        let e = parse_scenario(&zswap_text(line, ""), "z.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && e.contains("z.toml:13"), "{line}: {e}");
    }
    // In front of zram.
    let text = zswap_text("", "").replace("preset = \"ssd\"", "preset = \"zram\"");
    let e = parse_scenario(&text, "z.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("zswap in front of a zram") && e.contains("z.toml:12"),
        "{e}"
    );
    // The cgroup files' eras, in a scenario that names its kernel.
    let old = |cg: &str| format!("kernel = \"{}\"\n{}", "6.1", zswap_text("", cg));
    let e = parse_scenario(&old("zswap_writeback = false"), "z.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("memory.zswap.writeback exists from kernel 6.8"),
        "{e}"
    );
    assert!(parse_scenario(&old("zswap_max = \"1MiB\""), "z.toml", &[]).is_ok());
    // zswap needs the 6.1 era: an error on 4.14's rules (a --kernel override).
    let sc = parse_scenario(&zswap_text("", ""), "z.toml", &[]).unwrap();
    let f = KernelEra::V4_14.features("vanilla").unwrap();
    let e = Sim::new(&sc, f).err().expect("an error");
    assert!(e.contains("[swap.zswap] needs kernel 5.19"), "{e}");
    // enabled = false: no zswap at all.
    let sc = parse_scenario(&zswap_text("enabled = false", ""), "z.toml", &[]).unwrap();
    assert!(sc.swap.as_ref().unwrap().zswap.is_none());
}

/// examples/zswap_memcg.toml at an eighth of its size (64 MiB of RAM, a 12 MiB cgroup
/// re-writing 16 MiB), with `sets` on top, on 6.18.
fn example(sets: &[&str], check: bool) -> mmsim::run::RunReport {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zswap_memcg.toml"
    );
    let mut all = vec![
        "machine.memory_per_node=64MiB",
        "cgroups.box.memory_max=12MiB",
        "tasks.worker.size=16MiB",
    ];
    all.extend_from_slice(sets);
    let sc = load_builtin(path, &all);
    run_completed(&sc, KernelEra::V6_18, check, u64::MAX)
}

#[test]
fn the_zswap_example_against_the_ssd_alone() {
    // Under the checker: zswap's entries, LRUs, pool and charges stay consistent for a
    // whole run, the shrink worker included (a pool of 2 % of RAM fills).
    let z = example(&["swap.zswap.max_pool_percent=2"], true);
    let s = example(&["swap.zswap.enabled=false"], false);
    let (zv, sv) = (&z.vmstat, &s.vmstat);
    let stats = z.zswap.as_ref().expect("zswap stats");
    assert!(zv["zswpout"] > 0 && zv["zswpin"] > 0);
    assert!(stats.counters.pool_limit_hit > 0, "{stats:?}");
    assert!(zv["zswpwb"] > 0, "the worker wrote nothing back: {stats:?}");
    assert_eq!(zv["zswpwb"] as u64, stats.counters.written_back_pages);
    assert!(stats.pool_max_size <= 64 * 1024 * 1024 * 2 / 100 + 4096);
    assert!(sv["zswpout"] == 0 && sv["pswpout"] > 0 && s.zswap.is_none());
    // Fewer device reads and a faster run with the compressed cache in front.
    assert!(
        zv["pswpin"] < sv["pswpin"],
        "{} vs {}",
        zv["pswpin"],
        sv["pswpin"]
    );
    // The run is faster with a pool the working set fits in (nothing reaches the SSD);
    // with the 2 % pool (1.3 MiB at this size) it is about as fast as the SSD alone.
    let fits = example(&[], false);
    assert_eq!(fits.vmstat["pswpout"], 0);
    assert!(
        fits.elapsed_ns < s.elapsed_ns,
        "{} vs {}",
        fits.elapsed_ns,
        s.elapsed_ns
    );
    // memory.stat has the cgroup's zswap counters.
    let box_ = cgroup_report(&z, "box");
    for key in ["zswap", "zswapped", "zswpin", "zswpout", "zswpwb"] {
        assert!(box_.stat.contains_key(key), "memory.stat lacks {key}");
    }
    assert_eq!(box_.stat["zswpout"], zv["zswpout"]);
    assert!(box_.peak <= 12 << 20 || box_.events.max > 0);
    // Deterministic, and the checker changes nothing the run does.
    let (a, b) = (
        example(&["swap.zswap.max_pool_percent=2"], false),
        example(&["swap.zswap.max_pool_percent=2"], false),
    );
    assert_eq!(a.event_hash, z.event_hash);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[test]
fn a_store_over_zswap_max_writes_back_without_reclaiming_again() {
    // A cgroup at memory.max with a zswap.max of 16 pages: each store from its reclaim is
    // over the limit and (6.8) first writes back its own entries. That writeback runs in
    // reclaim (PF_MEMALLOC): its page comes from below the watermarks and its charge is
    // forced, so it never reclaims again — before, each writeback's charge reclaimed,
    // whose stores wrote back again, until the stack overflowed (swarm seed 9501314).
    // Readahead pages allocated meanwhile find the slot cached by such a writeback and
    // step back (a second swap-cache page for the slot, found by the checker).
    let r = example(
        &[
            "cgroups.box.zswap_max=64KiB",
            "swap.zswap.compression_ratio=1",
        ],
        true,
    );
    let v = &r.vmstat;
    assert!(v["zswpwb"] > 0 && v["zswpout"] > 0, "{v:?}");
    let stats = r.zswap.as_ref().unwrap();
    assert!(stats.counters.written_back_pages > 0, "{stats:?}");
    assert!(r.oracle_violations.is_empty());
}

#[derive(Clone, Debug)]
enum ZOp {
    Read(u64),
    Write(u64),
    Reclaim,
    Unmap(u64),
    Worker,
}

fn zop() -> impl Strategy<Value = ZOp> {
    prop_oneof![
        4 => (0u64..48).prop_map(ZOp::Read),
        4 => (0u64..48).prop_map(ZOp::Write),
        3 => Just(ZOp::Reclaim),
        1 => (0u64..48).prop_map(ZOp::Unmap),
        1 => Just(ZOp::Worker),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random reads, writes, reclaim passes, unmaps and shrink-worker runs on 6.1's and
    /// 6.18's zswap, at a random ratio, with or without a small pool and a zswap.max: the
    /// invariant checker (zswap's entries, LRUs, pool and charges included) holds after
    /// every operation, and every page read holds what was written.
    #[test]
    fn zswap_invariants_hold_under_random_operations(
        ops in proptest::collection::vec(zop(), 1..80),
        new_era in any::<bool>(),
        ratio in 1u32..8,
        small_pool in any::<bool>(),
        limited in any::<bool>(),
    ) {
        let era = if new_era { KernelEra::V6_18 } else { KernelEra::V6_1 };
        // 1 % of 64 MiB: 163 pool pages; the 48 pages fill it only at ratio 1 with other
        // pages around, so the limit also comes from zswap.max.
        let pool = if small_pool { "max_pool_percent = 1" } else { "" };
        let limit = if limited { "zswap_max = \"8KiB\"" } else { "" };
        let (mut sim, tid) =
            zswap_machine(era, ratio, pool, limit);
        let first = write_pages(&mut sim, tid, 48);
        let mm = mm_of(&sim, tid);
        for op in ops {
            match op {
                ZOp::Read(v) | ZOp::Write(v) => {
                    if sim.mm(mm).pgtable.get(first + v) == 0 {
                        continue; // unmapped
                    }
                    access(&mut sim, tid, first + v, matches!(op, ZOp::Write(_)));
                }
                ZOp::Reclaim => {
                    reclaim_pass(&mut sim, tid);
                    complete_io_and_ipis(&mut sim);
                }
                ZOp::Unmap(v) => {
                    run_on(&mut sim, 0, tid);
                    sim.sys_munmap(tid, (first + v) << PAGE_SHIFT, PAGE_SIZE).unwrap();
                }
                ZOp::Worker => {
                    // queue_work, then the worker's run.
                    sim.zswap_queue_shrink_work();
                    run_shrink_worker(&mut sim);
                }
            }
            check_all(&sim).map_err(TestCaseError::fail)?;
        }
        prop_assert!(sim.oracle_violations.is_empty(), "{:?}", sim.oracle_violations);
    }
}

#[test]
fn cgroup_write_sets_zswap_max_and_writeback_mid_run() {
    // The example at an eighth of its size, with an administrator writing one zswap file
    // of "box" after 20 ms (the cgroup has been reclaiming since about 5 ms).
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zswap_memcg.toml"
    );
    let with_write = |file: &str, value: &str, era: KernelEra| {
        let text = std::fs::read_to_string(path).unwrap()
            + &format!(
                "\n[[tasks]]\nname = \"admin\"\ncpu = 1\nprogram = \"cgroup-write\"\n\
                 target = \"box\"\nfile = \"{file}\"\nvalue = {value}\ndelay = \"20ms\"\n"
            );
        let sets = [
            "machine.memory_per_node=64MiB",
            "cgroups.box.memory_max=12MiB",
            "tasks.worker.size=16MiB",
        ]
        .map(String::from);
        let sc = parse_scenario(&text, "zswap_memcg.toml", &sets).unwrap();
        run_completed(&sc, era, false, u64::MAX)
    };
    let base = example(&[], false);
    // memory.zswap.max = 0: from the write on, every store is rejected and pages go to
    // the SSD.
    let r = with_write("memory.zswap.max", "\"0\"", KernelEra::V6_18);
    assert!(r.vmstat["zswpout"] > 0, "stores before the write");
    assert!(r.vmstat["zswpout"] < base.vmstat["zswpout"]);
    assert!(r.vmstat["pswpout"] > 0 && base.vmstat["pswpout"] == 0);
    assert!(r.zswap.as_ref().unwrap().counters.reject_memcg_limit > 0);
    // memory.zswap.writeback exists from 6.8: ENOENT on 6.1, recorded as the task's error.
    let r = with_write("memory.zswap.writeback", "0", KernelEra::V6_1);
    let admin = common::task_report(&r, "admin");
    assert_eq!(admin.errors.get("ENOENT"), Some(&1), "{:?}", admin.errors);
    // A value other than 0 or 1 names the field.
    let text = std::fs::read_to_string(path).unwrap()
        + "\n[[tasks]]\nname = \"admin\"\ncpu = 1\nprogram = \"cgroup-write\"\n\
           target = \"box\"\nfile = \"memory.zswap.writeback\"\nvalue = 2\n";
    let e = parse_scenario(&text, "z.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory.zswap.writeback takes 0 or 1"), "{e}");
}
