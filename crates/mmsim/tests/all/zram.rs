//! zram as the swap device (`mm/zram.rs`, `[swap] preset = "zram"`): synchronous swap-out
//! that frees the page in the reclaim pass that wrote it, a compressed pool taken from the
//! page allocator and given back as slots are freed, never charged to a cgroup; from 4.15
//! (`swap-sync-io-bypass`) a swap-in of a slot only its PTE refers to skips the swap cache
//! and frees the slot; mem_limit turns swap-outs into failed writes that keep the page.
//!
//! The unit tests drive kernel functions directly on a one-CPU machine (as
//! `tests/all/swap_readahead.rs` does), so every count is exact.

use crate::common;

use common::{
    build_sim_on, cgroup_report, complete_io_and_ipis, load_builtin, mm_of, mmap_at, run_completed,
    run_on, task_id, touch_pages, vmstat,
};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::page::{pg, Pfn, NIL, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::vmscan::ScanControl;
use mmsim::mm::vmstat::VmItem;
use mmsim::scenario::parse_scenario;
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::Sim;
use mmsim::workload::{ForkChild, Op, OpResult, Program};
use proptest::prelude::*;

/// One CPU, 64 MiB of RAM, 16 MiB of swap on `preset` with the `[swap]` lines `extra`, and
/// task `a` (whose program never runs here) in cgroup `g`.
pub(crate) fn machine_text(preset: &str, extra: &str) -> String {
    format!(
        r#"name = "zram"

[machine]
nodes = 1
cpus_per_node = 1
memory_per_node = "64MiB"

[swap]
size = "16MiB"
preset = "{preset}"
{extra}

[[cgroups]]
name = "g"

[[tasks]]
name = "a"
cpu = 0
cgroup = "g"
program = "anon"
size = "4KiB"
"#
    )
}

/// The machine with a zram device compressing by 4 (1 KiB a page) on `era`'s rules.
fn zram_machine(era: KernelEra, extra: &str) -> (Sim, TaskId) {
    let text = machine_text("zram", &format!("compression_ratio = 4\n{extra}"));
    let sim = build_sim_on(&text, "zram.toml", era, "");
    let tid = task_id(&sim, "a");
    (sim, tid)
}

/// Map `n` anonymous pages as `tid` and write each once; the first virtual page.
pub(crate) fn write_pages(sim: &mut Sim, tid: TaskId, n: u64) -> u64 {
    let addr = mmap_at(sim, tid, None, n * PAGE_SIZE, 0, 3, false);
    touch_pages(sim, 0, tid, addr, n, true).expect("the writes need no wait");
    addr >> PAGE_SHIFT
}

/// One reclaim pass at priority 0 in `tid`'s context.
pub(crate) fn reclaim_pass(sim: &mut Sim, tid: TaskId) {
    run_on(sim, 0, tid);
    sim.lru_add_drain_all();
    let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
    sc.priority = 0;
    sim.shrink_node(0, &mut sc);
}

/// Reclaim until every page of [first, first+n) is a swap entry; on zram no pass may
/// leave IO in flight. The checker runs after each pass.
pub(crate) fn swap_out(sim: &mut Sim, tid: TaskId, first: u64, n: u64) {
    let mm = mm_of(sim, tid);
    for _ in 0..200 {
        if (first..first + n).all(|v| sim.mm(mm).pgtable.get(v) & pte::SWAP != 0) {
            return;
        }
        reclaim_pass(sim, tid);
        if sim.zram().is_some() {
            assert_eq!(complete_io_and_ipis(sim), 0, "zram left IO in flight");
        } else {
            complete_io_and_ipis(sim);
        }
        check_all(sim).unwrap();
    }
    panic!("the pages were not swapped out");
}

/// The swap slot virtual page `vpn` of `tid` refers to (panics unless a swap entry).
pub(crate) fn slot_of(sim: &Sim, tid: TaskId, vpn: u64) -> u32 {
    let p = sim.mm(mm_of(sim, tid)).pgtable.get(vpn);
    assert!(
        p & pte::SWAP != 0,
        "vpn {vpn:#x} is not swapped out: {p:#x}"
    );
    pte::pfn(p) as u32
}

/// One read (or write) of `vpn` by `tid`, which must not wait.
pub(crate) fn access_now(sim: &mut Sim, tid: TaskId, vpn: u64, write: bool) {
    match touch_pages(sim, 0, tid, vpn << PAGE_SHIFT, 1, write) {
        Ok(OpResult::Bytes(_)) => {}
        other => panic!("access to {vpn:#x} waited or failed: {other:?}"),
    }
}

/// Every page read held what was last written (the content oracle), and the invariant
/// checker holds.
pub(crate) fn assert_consistent(sim: &Sim) {
    assert!(
        sim.oracle_violations.is_empty(),
        "{:?}",
        sim.oracle_violations
    );
    check_all(sim).unwrap();
}

/// The frame virtual page `vpn` of `tid` maps (panics unless present).
pub(crate) fn frame_of(sim: &Sim, tid: TaskId, vpn: u64) -> Pfn {
    let p = sim.mm(mm_of(sim, tid)).pgtable.get(vpn);
    assert!(p & pte::PRESENT != 0, "vpn {vpn:#x} is not present");
    pte::pfn(p) as Pfn
}

#[test]
fn a_zram_swap_out_frees_the_page_in_the_pass_that_wrote_it() {
    // On an SSD the first pass leaves the written pages under writeback in the swap cache;
    // on zram the write has ended when pageout returns and the same pass frees the page.
    for preset in ["ssd", "zram"] {
        let text = machine_text(preset, "");
        let mut sim = build_sim_on(&text, "zram.toml", KernelEra::V6_18, "");
        let tid = task_id(&sim, "a");
        write_pages(&mut sim, tid, 32);
        // The first pass that writes (the earlier ones age the new pages).
        let mut written = 0;
        for _ in 0..10 {
            let before = vmstat(&sim, VmItem::Pswpout);
            reclaim_pass(&mut sim, tid);
            written = vmstat(&sim, VmItem::Pswpout) - before;
            if written > 0 {
                break;
            }
        }
        assert!(written > 0, "{preset}: no pass wrote");
        let cached = sim
            .swap
            .as_ref()
            .unwrap()
            .cache
            .iter()
            .filter(|&&p| p != NIL);
        let under_writeback = vmstat(&sim, VmItem::NrWriteback);
        if preset == "ssd" {
            assert_eq!(
                cached.count() as i64,
                written,
                "ssd: written pages stay cached"
            );
            assert_eq!(under_writeback, written);
            assert!(complete_io_and_ipis(&mut sim) > 0);
        } else {
            assert_eq!(
                cached.count(),
                0,
                "zram: no written page stays in the swap cache"
            );
            assert_eq!(under_writeback, 0);
            assert_eq!(complete_io_and_ipis(&mut sim), 0, "zram: no IO in flight");
            let z = sim.zram().unwrap();
            assert_eq!(z.nr_stored as i64, written);
            assert_eq!(z.num_writes as i64, written);
        }
        check_all(&sim).unwrap();
    }
}

#[test]
fn the_pool_holds_the_compressed_pages_and_gives_them_back() {
    let (mut sim, tid) = zram_machine(KernelEra::V6_18, "");
    let first = write_pages(&mut sim, tid, 64);
    let free_before = vmstat(&sim, VmItem::NrFreePages);
    swap_out(&mut sim, tid, first, 64);
    let z = sim.zram().unwrap();
    assert_eq!(z.nr_stored, 64);
    // 64 pages at 1 KiB each: 16 pool pages, taken from the allocator.
    assert_eq!(z.pool.len(), 16);
    let stats = z.stats();
    assert_eq!(stats.orig_data_size, 64 * PAGE_SIZE);
    assert_eq!(stats.compr_data_size, 64 * 1024);
    assert_eq!(stats.mem_used_total, 16 * PAGE_SIZE);
    for &pfn in &z.pool {
        assert!(!sim.mem[pfn as usize].test(pg::LRU));
    }
    // The 64 anonymous pages came back to the allocator, 16 pool pages left it (the
    // reclaim passes may have freed other pages too, never fewer).
    assert!(vmstat(&sim, VmItem::NrFreePages) >= free_before + 64 - 16);
    // munmap frees every slot (free_swap_and_cache): the pool empties.
    run_on(&mut sim, 0, tid);
    sim.sys_munmap(tid, first << PAGE_SHIFT, 64 * PAGE_SIZE)
        .unwrap();
    let z = sim.zram().unwrap();
    assert_eq!((z.nr_stored, z.pool.len()), (0, 0));
    assert_eq!(z.stats().mem_used_max, 16 * PAGE_SIZE);
    check_all(&sim).unwrap();
}

#[test]
fn on_6_x_a_swap_in_skips_the_swap_cache_and_frees_the_slot() {
    let (mut sim, tid) = zram_machine(KernelEra::V6_18, "");
    let first = write_pages(&mut sim, tid, 8);
    swap_out(&mut sim, tid, first, 8);
    let slot = slot_of(&sim, tid, first + 3);
    let (maj, pswpin) = (
        vmstat(&sim, VmItem::Pgmajfault),
        vmstat(&sim, VmItem::Pswpin),
    );
    access_now(&mut sim, tid, first + 3, false);
    let pfn = frame_of(&sim, tid, first + 3);
    let sw = sim.swap.as_ref().unwrap();
    assert!(
        !sim.mem[pfn as usize].test(pg::SWAPCACHE),
        "the page is not in the swap cache"
    );
    assert!(sw.is_free(slot), "the slot was freed at the fault");
    assert!(
        sw.cache.iter().all(|&p| p == NIL),
        "no readahead: nothing else was read"
    );
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault), maj + 1);
    assert_eq!(vmstat(&sim, VmItem::Pswpin), pswpin + 1);
    assert_eq!(sim.zram().unwrap().nr_stored, 7);
    // A read fault maps the page read-only; it has no copy anywhere but memory, so its
    // next reclaim writes it to a new slot.
    let p = sim.mm(mm_of(&sim, tid)).pgtable.get(first + 3);
    assert_eq!(p & pte::WRITE, 0);
    swap_out(&mut sim, tid, first, 8);
    assert_eq!(sim.zram().unwrap().nr_stored, 8);
    // The content oracle: what is read back is what was written.
    for v in first..first + 8 {
        access_now(&mut sim, tid, v, false);
    }
    assert_consistent(&sim);
}

/// A forked child's program that never runs here.
struct Idle;

impl Program for Idle {
    fn next_op(&mut self, _: &OpResult) -> Op {
        Op::Exit
    }
}

#[test]
fn on_6_x_a_slot_shared_after_fork_takes_the_swap_cache_path() {
    // __swap_count(entry) == 1 is the bypass's condition: a slot both relatives' PTEs
    // refer to is read into the swap cache, where the other finds it (a minor fault).
    let (mut sim, p) = zram_machine(KernelEra::V6_18, "");
    let first = write_pages(&mut sim, p, 8);
    run_on(&mut sim, 0, p);
    let child = ForkChild::new("c".into(), Some(0), Box::new(Idle));
    let c = match sim.sys_fork(p, &child, &mut 0) {
        Ok(OpResult::Pid(c)) => c as TaskId,
        other => panic!("fork: {other:?}"),
    };
    swap_out(&mut sim, p, first, 8);
    let slot = slot_of(&sim, p, first);
    assert_eq!(slot_of(&sim, c, first), slot);
    assert_eq!(sim.swap.as_ref().unwrap().swap_map[slot as usize], 2);
    access_now(&mut sim, p, first, false);
    let pfn = frame_of(&sim, p, first);
    assert!(sim.mem[pfn as usize].test(pg::SWAPCACHE));
    assert_eq!(sim.swap.as_ref().unwrap().swap_map[slot as usize], 1);
    let maj = vmstat(&sim, VmItem::Pgmajfault);
    access_now(&mut sim, c, first, false);
    assert_eq!(frame_of(&sim, c, first), pfn);
    assert_eq!(
        vmstat(&sim, VmItem::Pgmajfault),
        maj,
        "the child's fault is minor"
    );
    assert_consistent(&sim);
}

#[test]
fn on_4_14_a_zram_swap_in_goes_through_the_swap_cache_without_waiting() {
    // Before 4.15 the read is still synchronous, but the page enters the swap cache (with
    // the readahead window, when there is one), and its slot stays taken.
    let (mut sim, tid) = zram_machine(KernelEra::V4_14, "");
    let first = write_pages(&mut sim, tid, 8);
    swap_out(&mut sim, tid, first, 8);
    let slot = slot_of(&sim, tid, first + 3);
    let pswpin = vmstat(&sim, VmItem::Pswpin);
    access_now(&mut sim, tid, first + 3, false);
    let pfn = frame_of(&sim, tid, first + 3);
    let sw = sim.swap.as_ref().unwrap();
    assert!(sim.mem[pfn as usize].test(pg::SWAPCACHE));
    assert_eq!(sw.cache[slot as usize], pfn);
    assert!(!sim.PageLocked(pfn), "the read has ended");
    assert!(vmstat(&sim, VmItem::Pswpin) > pswpin);
    assert_eq!(
        sim.zram().unwrap().nr_stored,
        8,
        "cached slots keep their data"
    );
    check_all(&sim).unwrap();
}

#[test]
fn a_full_pool_fails_the_write_and_keeps_the_page() {
    // mem_limit of 4 pool pages at ratio 1 (a page each): the fifth write fails (-ENOMEM),
    // the page is redirtied and stays in the swap cache, and its data survives.
    let text = machine_text("zram", "compression_ratio = 1\nmem_limit = \"16KiB\"");
    let mut sim = build_sim_on(&text, "zram.toml", KernelEra::V6_18, "");
    let tid = task_id(&sim, "a");
    let first = write_pages(&mut sim, tid, 16);
    for _ in 0..4 {
        reclaim_pass(&mut sim, tid);
        check_all(&sim).unwrap();
    }
    let z = sim.zram().unwrap();
    assert_eq!((z.nr_stored, z.pool.len()), (4, 4));
    assert!(z.failed_writes > 0);
    let sw = sim.swap.as_ref().unwrap();
    let kept: Vec<Pfn> = sw.cache.iter().copied().filter(|&p| p != NIL).collect();
    assert!(
        !kept.is_empty(),
        "a page whose write failed stays in the swap cache"
    );
    for &pfn in &kept {
        assert!(sim.PageDirty(pfn) && !sim.PageWriteback(pfn));
    }
    for v in first..first + 16 {
        access_now(&mut sim, tid, v, false);
    }
    assert_consistent(&sim);
}

#[test]
fn the_pool_is_not_charged_to_the_cgroup() {
    let (mut sim, tid) = zram_machine(KernelEra::V6_18, "");
    let g = sim.tasks[tid].memcg as usize;
    let first = write_pages(&mut sim, tid, 64);
    let usage = sim.memcgs[g].usage;
    swap_out(&mut sim, tid, first, 64);
    // The 64 pages left the cgroup's memory for its swap; the 16 pool pages are charged
    // to nobody.
    assert_eq!(sim.memcgs[g].usage, usage - 64);
    assert_eq!(sim.memcgs[g].swap_usage, 64);
    assert_eq!(sim.zram().unwrap().pool.len(), 16);
}

#[test]
fn zram_settings_are_checked_with_the_line_named() {
    let cases = [
        (
            "compression_ratio = 0.5",
            "compression_ratio must be between 1",
        ),
        (
            "comp_algorithm = \"lzma\"",
            "unknown comp_algorithm \"lzma\"",
        ),
        (
            "mem_limit = \"1GiB\"",
            "mem_limit must be between 4 KiB and the swap size",
        ),
    ];
    for (line, want) in cases {
        let text = machine_text("zram", line);
        let e = parse_scenario(&text, "z.toml", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains(want) && e.contains("z.toml:11"), "{line}: {e}");
    }
    // A zram key on a block device's swap.
    let e = parse_scenario(&machine_text("ssd", "compression_ratio = 2"), "z.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("zram settings") && e.contains("z.toml:11"),
        "{e}"
    );
    // zram left staging in 3.14: not on the 2.6.30 rules.
    let sc = parse_scenario(&machine_text("zram", ""), "z.toml", &[]).unwrap();
    let f = KernelEra::V2_6_30.features("vanilla").unwrap();
    let e = Sim::new(&sc, f).err().expect("an error");
    assert!(e.contains("needs kernel 3.14"), "{e}");
}

/// examples/zram_memcg.toml at an eighth of its size (64 MiB of RAM, a 12 MiB cgroup
/// re-writing 16 MiB) with its swap on `preset`, on 6.18.
fn example(preset: &str, check: bool) -> mmsim::run::RunReport {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zram_memcg.toml"
    );
    let preset = format!("swap.preset={preset}");
    let sc = load_builtin(
        path,
        &[
            "machine.memory_per_node=64MiB",
            "cgroups.box.memory_max=12MiB",
            "tasks.worker.size=16MiB",
            &preset,
        ],
    );
    run_completed(&sc, KernelEra::V6_18, check, u64::MAX)
}

#[test]
fn the_zram_example_against_an_ssd() {
    // Under the checker: zram's pool and slots stay consistent for a whole run.
    let z = example("zram", true);
    let s = example("ssd", false);
    let (zv, sv) = (&z.vmstat, &s.vmstat);
    // Both swap; on zram no swap-in waits for a device, so the run is faster.
    assert!(zv["pswpout"] > 0 && sv["pswpout"] > 0);
    assert!(
        z.elapsed_ns < s.elapsed_ns,
        "{} vs {}",
        z.elapsed_ns,
        s.elapsed_ns
    );
    // 6.x reads a zram slot at its fault alone: every swap-in is a major fault (no
    // readahead). A zram write ends within reclaim, so no page is faulted back while its
    // write is in flight; on the SSD such pages keep their slots in the swap cache (and
    // are written again), and the cgroup's swap peak is higher.
    assert_eq!(zv["pswpin"], zv["pgmajfault"]);
    assert!(zv["pswpout"] < sv["pswpout"]);
    let (zc, sc) = (cgroup_report(&z, "box"), cgroup_report(&s, "box"));
    assert!(
        zc.swap_peak < sc.swap_peak,
        "{} vs {}",
        zc.swap_peak,
        sc.swap_peak
    );
    // The pool is RAM outside the cgroup: the cgroup stays within memory.max while the
    // pool held a third of its peak swap (ratio 3), give or take a page.
    let stats = z.zram.as_ref().expect("zram stats");
    assert!(zc.peak <= 12 << 20);
    assert!(stats.mem_used_max > 0);
    assert!(stats.mem_used_max <= zc.swap_peak / 3 + 4096, "{stats:?}");
    assert_eq!(stats.failed_writes, 0);
    assert_eq!(stats.num_writes as i64, zv["pswpout"]);
    assert!(s.zram.is_none());
    // Deterministic: the same run gives the same document (and the checker changes
    // nothing the run does).
    let (a, b) = (example("zram", false), example("zram", false));
    assert_eq!(a.event_hash, z.event_hash);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap()
    );
}

#[derive(Clone, Debug)]
enum ZOp {
    Read(u64),
    Write(u64),
    Reclaim,
    Unmap(u64),
}

fn zop() -> impl Strategy<Value = ZOp> {
    prop_oneof![
        4 => (0u64..48).prop_map(ZOp::Read),
        4 => (0u64..48).prop_map(ZOp::Write),
        3 => Just(ZOp::Reclaim),
        1 => (0u64..48).prop_map(ZOp::Unmap),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random reads, writes, reclaim passes and unmaps of single pages on zram, on the
    /// 4.14 and 6.18 rules, at a random ratio and with or without a tight mem_limit: the
    /// invariant checker (zram's pool and stored slots included) holds after every
    /// operation, no access ever waits for IO, and every page read holds what was written.
    #[test]
    fn zram_invariants_hold_under_random_operations(
        ops in proptest::collection::vec(zop(), 1..80),
        new_era in any::<bool>(),
        ratio in 1u32..8,
        limited in any::<bool>(),
    ) {
        let era = if new_era { KernelEra::V6_18 } else { KernelEra::V4_14 };
        let limit = if limited { "mem_limit = \"32KiB\"" } else { "" };
        let text = machine_text("zram", &format!("compression_ratio = {ratio}\n{limit}"));
        let mut sim = build_sim_on(&text, "zram.toml", era, "");
        let tid = task_id(&sim, "a");
        let first = write_pages(&mut sim, tid, 48);
        let mm = mm_of(&sim, tid);
        for op in ops {
            match op {
                ZOp::Read(v) | ZOp::Write(v) => {
                    let write = matches!(op, ZOp::Write(_));
                    if sim.mm(mm).pgtable.get(first + v) == 0 {
                        continue; // unmapped
                    }
                    match touch_pages(&mut sim, 0, tid, (first + v) << PAGE_SHIFT, 1, write) {
                        Ok(OpResult::Bytes(_)) => {}
                        Err(Wait::PageLocked(_)) | Err(Wait::PageWriteback(_)) => {
                            prop_assert!(false, "an access waited for IO on zram");
                        }
                        other => prop_assert!(false, "access: {:?}", other),
                    }
                }
                ZOp::Reclaim => {
                    reclaim_pass(&mut sim, tid);
                    prop_assert_eq!(complete_io_and_ipis(&mut sim), 0);
                }
                ZOp::Unmap(v) => {
                    run_on(&mut sim, 0, tid);
                    sim.sys_munmap(tid, (first + v) << PAGE_SHIFT, PAGE_SIZE).unwrap();
                }
            }
            check_all(&sim).map_err(TestCaseError::fail)?;
        }
        prop_assert!(sim.oracle_violations.is_empty(), "{:?}", sim.oracle_violations);
    }
}
