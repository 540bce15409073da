//! Swap-in errors and free_swap_and_cache (issue 18).
//!
//! - A swap read that fails (`[swap] read_error_rate`) leaves the page in the swap cache
//!   unlocked, not uptodate, with PG_error; the fault that waited for it gets
//!   VM_FAULT_SIGBUS (do_swap_page's `!folio_test_uptodate` check), so the task is killed
//!   with SIGBUS — it does not wait on the page forever.
//! - Zapping a swap PTE (munmap, exit) calls free_swap_and_cache: when the swap cache is
//!   the slot's last user and its page is unmapped, unlocked and not under writeback, the
//!   page leaves the swap cache at once and the slot is free.
//!
//! The unit tests drive kernel functions directly on a one-CPU machine, as
//! `tests/all/swap_readahead.rs` does.

use crate::common;

use common::{
    build_sim, complete_io_and_ipis, mm_of, mmap_at, run_on, task_id, touch_pages, vmstat,
};
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::page::{pg, NIL, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::vmscan::ScanControl;
use mmsim::mm::vmstat::VmItem;
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::parse_scenario;
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::{Features, RunEnd, Sim};
use mmsim::workload::{Errno, OpResult};

/// One CPU, 64 MiB, 16 MiB of swap (readahead cluster of 8 slots) failing every read when
/// `fail_reads`, and one task `a` whose program never runs.
fn machine(fail_reads: bool) -> Sim {
    let rate = if fail_reads {
        "read_error_rate = 1\n"
    } else {
        ""
    };
    let text = format!(
        r#"name = "swap-errors"

[machine]
nodes = 1
cpus_per_node = 1
memory_per_node = "64MiB"

[swap]
size = "16MiB"
preset = "ssd"
page_cluster = 3
{rate}
[[tasks]]
name = "a"
cpu = 0
program = "anon"
size = "4KiB"
"#
    );
    // The fixed aligned window of 2.6.x-3.14 (the adaptive one starts small).
    let mut f = Features::patched();
    f.set("adaptive-swap-readahead", false);
    build_sim(&text, "swap-errors.toml", f)
}

/// Map `n` anonymous pages, write each, and swap them all out (reclaim at priority 0
/// until every PTE is a swap entry and the swap cache is empty). Returns the first vpn.
fn swapped(sim: &mut Sim, a: TaskId, n: u64) -> u64 {
    let addr = mmap_at(sim, a, None, n * PAGE_SIZE, 0, 3, false);
    let first = addr >> PAGE_SHIFT;
    for v in first..first + n {
        assert!(matches!(
            touch_pages(sim, 0, a, v << PAGE_SHIFT, 1, true),
            Ok(OpResult::Bytes(_))
        ));
    }
    let mm = mm_of(sim, a);
    for _ in 0..400 {
        let out = (first..first + n).all(|v| sim.mm(mm).pgtable.get(v) & pte::SWAP != 0);
        if out && sim.swap.as_ref().unwrap().cache.iter().all(|&p| p == NIL) {
            check_all(sim).unwrap();
            return first;
        }
        run_on(sim, 0, a);
        sim.lru_add_drain_all();
        let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
        sc.priority = 0;
        sim.shrink_node(0, &mut sc);
        complete_io_and_ipis(sim);
    }
    panic!("the pages were not swapped out");
}

/// The slot a swap PTE of `vpn` names.
fn slot_of(sim: &Sim, a: TaskId, vpn: u64) -> u32 {
    let p = sim.mm(mm_of(sim, a)).pgtable.get(vpn);
    assert!(p & pte::SWAP != 0, "vpn {vpn:#x} is not swapped out");
    pte::pfn(p)
}

#[test]
fn a_failed_swap_read_is_sigbus_for_the_faulting_task_not_a_wait() {
    let mut sim = machine(true);
    let a = task_id(&sim, "a");
    let first = swapped(&mut sim, a, 16);
    let slot = slot_of(&sim, a, first + 3);
    // The fault starts the read and waits for the page.
    let r = touch_pages(&mut sim, 0, a, (first + 3) << PAGE_SHIFT, 1, false);
    assert!(matches!(r, Err(Wait::PageLocked(_))), "{r:?}");
    assert!(complete_io_and_ipis(&mut sim) > 0);
    let pfn = sim.swap.as_ref().unwrap().cache[slot as usize];
    assert_ne!(pfn, NIL, "the failed page stays in the swap cache");
    let page = &sim.mem[pfn as usize];
    assert!(page.test(pg::ERROR) && !page.test(pg::UPTODATE) && !page.test(pg::LOCKED));
    // The retried fault finds it unlocked and not uptodate: SIGBUS, nothing mapped.
    let (pgfault0, maj0) = (vmstat(&sim, VmItem::Pgfault), sim.tasks[a].stats.majflt);
    let r = touch_pages(&mut sim, 0, a, (first + 3) << PAGE_SHIFT, 1, false);
    assert_eq!(r, Ok(OpResult::Err(Errno::SIGBUS)));
    assert_eq!(vmstat(&sim, VmItem::Pgfault), pgfault0 + 1);
    assert_eq!(
        sim.tasks[a].stats.majflt, maj0,
        "a SIGBUS fault counts no majflt"
    );
    assert_eq!(
        slot_of(&sim, a, first + 3),
        slot,
        "the PTE keeps its swap entry"
    );
    let io = &sim.devices[sim.swap.as_ref().unwrap().dev];
    assert!(io.nr_reads > 0);
    check_all(&sim).unwrap();
    // munmap zaps the swap PTEs: free_swap_and_cache drops the failed page (and the
    // read-ahead neighbours, whose reads failed too) at once; every slot is free.
    run_on(&mut sim, 0, a);
    let r = sim.sys_munmap(a, first << PAGE_SHIFT, 16 * PAGE_SIZE);
    assert!(matches!(r, Ok(OpResult::None)), "{r:?}");
    let sw = sim.swap.as_ref().unwrap();
    assert!(sw.cache.iter().all(|&p| p == NIL), "swap cache emptied");
    assert_eq!(sim.swap_free_pages(), sw.nr_pages, "every slot is free");
    assert_eq!(vmstat(&sim, VmItem::NrFilePages), 0);
    check_all(&sim).unwrap();
}

#[test]
fn munmap_drops_unmapped_swap_cache_pages_of_its_swap_entries_at_once() {
    let mut sim = machine(false);
    let a = task_id(&sim, "a");
    let first = swapped(&mut sim, a, 16);
    // A read fault on page 3 reads its aligned cluster of 8 slots: page 3 is mapped, the
    // 7 neighbours sit in the swap cache, unmapped, their PTEs still swap entries.
    let target = first + 3;
    let slot = slot_of(&sim, a, target);
    loop {
        match touch_pages(&mut sim, 0, a, target << PAGE_SHIFT, 1, false) {
            Ok(OpResult::Bytes(_)) => break,
            Err(Wait::PageLocked(_)) => assert!(complete_io_and_ipis(&mut sim) > 0),
            other => panic!("{other:?}"),
        }
    }
    let cluster: Vec<u32> = (slot & !7..(slot & !7) + 8)
        .filter(|&s| s != slot)
        .collect();
    let sw = sim.swap.as_ref().unwrap();
    for &s in &cluster {
        assert_ne!(sw.cache[s as usize], NIL, "slot {s} read ahead");
        assert_eq!(
            sw.swap_map[s as usize], 1,
            "slot {s} still named by its PTE"
        );
    }
    let free0 = sim.swap_free_pages();
    let files0 = vmstat(&sim, VmItem::NrFilePages);
    // munmap: each neighbour's swap PTE goes, and with it the neighbour's page and slot.
    run_on(&mut sim, 0, a);
    let r = sim.sys_munmap(a, first << PAGE_SHIFT, 16 * PAGE_SIZE);
    assert!(matches!(r, Ok(OpResult::None)), "{r:?}");
    let sw = sim.swap.as_ref().unwrap();
    for &s in &cluster {
        assert_eq!(sw.cache[s as usize], NIL, "slot {s}: page dropped at unmap");
        assert!(sw.is_free(s), "slot {s} free");
    }
    // The 8 slots outside the cluster had no cached page; the 7 neighbours' pages went.
    assert_eq!(sim.swap_free_pages(), free0 + 8 + 7);
    assert_eq!(vmstat(&sim, VmItem::NrFilePages), files0 - 7);
    check_all(&sim).unwrap();
}

#[test]
fn under_pressure_a_task_whose_swap_in_fails_gets_sigbus_and_the_run_goes_on() {
    let text = r#"name = "swap-in-errors"
seed = 3

[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "32MiB"

[swap]
size = "128MiB"
preset = "nvme"
read_error_rate = 1

[[tasks]]
name = "anon"
cpu = 0
program = "anon"
size = "40MiB"
passes = 2

[[tasks]]
name = "small"
cpu = 1
program = "anon"
size = "2MiB"
passes = 3
"#;
    let sc = parse_scenario(text, "t.toml", &[]).unwrap();
    let opts = RunOptions {
        features: Features::patched(),
        check: true,
        max_steps: 2_000_000,
        ..RunOptions::default()
    };
    let r = run_scenario(&sc, &opts, &mut |_| {}).unwrap();
    assert_eq!(r.end, RunEnd::Completed);
    let anon = r.tasks.iter().find(|t| t.name == "anon").unwrap();
    assert_eq!(anon.errors.get("SIGBUS"), Some(&1), "{:?}", anon.errors);
    assert!(r.vmstat["pswpout"] > 0 && r.vmstat["pswpin"] > 0);
    let swap_reads = r
        .io_errors
        .errors
        .iter()
        .filter(|e| e.op == "read" && e.file == "swap")
        .count();
    assert!(swap_reads > 0, "{:?}", r.io_errors.total);
    assert_eq!(r.io_errors.silent_losses, 0);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
}
