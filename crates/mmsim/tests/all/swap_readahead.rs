//! Swap readahead (mm/swap_state.c swapin_readahead, read_swap_cache_async; 2.6.x–3.14
//! window rules): a swap-cache miss reads the naturally aligned cluster of 2^page_cluster
//! slots around the faulting one — only slots in use and not cached, with allocations that
//! reclaim at most once and never sleep — leaves the other pages unmapped in the swap cache on the inactive anon
//! list, and a later fault on one of them is minor. Reclaim drops never-mapped readahead
//! pages without IO. The invariant checker and the content oracle hold throughout, also in
//! runs under swap pressure; a bad `page_cluster` is a scenario error.
//!
//! The unit tests drive kernel functions directly on a one-CPU machine (as `tests/all/vm.rs`
//! does): the test sets the running context, swaps pages out by calling shrink_node at
//! priority 0, and completes IO requests itself, so every count is exact.

use crate::common;

use common::{
    build_sim, complete_io_and_ipis, load_builtin, mm_of, mmap_at, on_lru_list, run_on, task_id,
    touch_pages, vmstat,
};
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::node::LruList;
use mmsim::mm::page::{pg, Pfn, NIL, NO_MAPPING, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::rmap::TtuResult;
use mmsim::mm::vmscan::ScanControl;
use mmsim::mm::vmstat::VmItem;
use mmsim::run::RunReport;
use mmsim::scenario::{parse_scenario, Scenario};
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::{Features, RunEnd, Sim};
use mmsim::workload::OpResult;
use proptest::prelude::*;

// ---------------------------------------------------------------------------------------
// A tiny machine with swap
// ---------------------------------------------------------------------------------------

/// One CPU, 64 MiB of RAM (no memory pressure unless a test makes it), 16 MiB of swap on
/// an SSD, and one user task `a` whose program never runs.
fn machine_text(page_cluster: Option<u32>) -> String {
    let pc = page_cluster.map_or(String::new(), |n| format!("page_cluster = {n}\n"));
    format!(
        r#"name = "ra"

[machine]
nodes = 1
cpus_per_node = 1
memory_per_node = "64MiB"

[swap]
size = "16MiB"
preset = "ssd"
{pc}
[[tasks]]
name = "a"
cpu = 0
program = "anon"
size = "4KiB"
"#
    )
}

/// The machine; `adaptive` selects v3.15's hit-sized window, else the fixed aligned
/// window of 2.6.x–3.14 that most tests here pin down.
fn machine_with(page_cluster: Option<u32>, adaptive: bool) -> Sim {
    let mut f = Features::patched();
    f.set("adaptive-swap-readahead", adaptive);
    build_sim(&machine_text(page_cluster), "ra.toml", f)
}

/// One access to virtual page `vpn` by task `a`, as far as it goes without sleeping:
/// `Ok` when done, or the wait the fault asked for.
fn access(sim: &mut Sim, tid: TaskId, vpn: u64, write: bool) -> Result<OpResult, Wait> {
    touch_pages(sim, 0, tid, vpn << PAGE_SHIFT, 1, write)
}

/// Access `vpn`, completing IO whenever the fault waits for it. Returns whether it waited.
fn access_waiting(sim: &mut Sim, tid: TaskId, vpn: u64, write: bool) -> bool {
    let mut waited = false;
    for _ in 0..100 {
        match access(sim, tid, vpn, write) {
            Ok(OpResult::Bytes(_)) => return waited,
            Ok(other) => panic!("access to {vpn:#x}: {other:?}"),
            Err(Wait::PageLocked(_)) | Err(Wait::PageWriteback(_)) => {
                waited = true;
                assert!(
                    complete_io_and_ipis(sim) > 0,
                    "waiting on a page with no IO in flight"
                );
            }
            Err(Wait::Until(_)) => unreachable!(),
        }
    }
    panic!("access to {vpn:#x} never finished");
}

/// Map `n` anonymous pages and write each once. Returns the first virtual page.
fn write_pages(sim: &mut Sim, tid: TaskId, n: u64) -> u64 {
    let addr = mmap_at(sim, tid, None, n * PAGE_SIZE, 0, 3, false);
    let first = addr >> PAGE_SHIFT;
    for v in first..first + n {
        access_waiting(sim, tid, v, true);
    }
    first
}

/// Reclaim (in the task's context, priority 0) until every page of [first, first+n) is a
/// swap entry and the swap cache is empty.
fn swap_out_all(sim: &mut Sim, tid: TaskId, first: u64, n: u64) {
    reclaim_until(sim, tid, first, n, true);
}

/// Reclaim until the pages [first, first+n) are swapped out, whatever else is cached.
fn swap_out_all_but(sim: &mut Sim, tid: TaskId, first: u64, n: u64) {
    reclaim_until(sim, tid, first, n, false);
}

/// Reclaim (in the task's context, priority 0) until every page of [first, first+n) is a
/// swap entry and, if `empty_cache`, the swap cache is empty.
fn reclaim_until(sim: &mut Sim, tid: TaskId, first: u64, n: u64, empty_cache: bool) {
    let mm = mm_of(sim, tid);
    for _round in 0..400 {
        let all_out = (first..first + n).all(|v| sim.mm(mm).pgtable.get(v) & pte::SWAP != 0);
        let cached = sim.swap.as_ref().unwrap().cache.iter().any(|&p| p != NIL);
        if all_out && !(empty_cache && cached) {
            check_all(sim).unwrap();
            return;
        }
        run_on(sim, 0, tid);
        sim.lru_add_drain_all();
        let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
        sc.priority = 0;
        sim.shrink_node(0, &mut sc);
        complete_io_and_ipis(sim);
        check_all(sim).unwrap();
    }
    panic!("the pages were not swapped out");
}

/// The virtual page whose swap PTE names `slot`.
fn vpn_of_slot(sim: &Sim, tid: TaskId, first: u64, n: u64, slot: u32) -> u64 {
    let mm = mm_of(sim, tid);
    (first..first + n)
        .find(|&v| {
            let p = sim.mm(mm).pgtable.get(v);
            p & pte::SWAP != 0 && pte::pfn(p) == slot
        })
        .unwrap_or_else(|| panic!("no swap PTE names slot {slot}"))
}

fn cached(sim: &Sim, slot: u32) -> Pfn {
    sim.swap.as_ref().unwrap().cache[slot as usize]
}

fn swap_count(sim: &Sim, slot: u32) -> u16 {
    sim.swap.as_ref().unwrap().swap_map[slot as usize]
}

/// (requests, pages) read from the swap device so far.
fn swap_reads(sim: &Sim) -> (u64, u64) {
    let d = &sim.devices[sim.swap.as_ref().unwrap().dev];
    (d.nr_reads, d.pages_read)
}

/// No content-oracle violation and every invariant holds.
fn assert_clean(sim: &Sim) {
    assert!(
        sim.oracle_violations.is_empty(),
        "{:?}",
        sim.oracle_violations
    );
    check_all(sim).unwrap();
}

/// A machine with `n` written pages swapped out (slots 0..n, one per page).
fn swapped_machine(page_cluster: Option<u32>, n: u64) -> (Sim, TaskId, u64) {
    swapped_machine_with(page_cluster, n, false)
}

fn swapped_machine_with(page_cluster: Option<u32>, n: u64, adaptive: bool) -> (Sim, TaskId, u64) {
    let mut sim = machine_with(page_cluster, adaptive);
    let a = task_id(&sim, "a");
    let first = write_pages(&mut sim, a, n);
    swap_out_all(&mut sim, a, first, n);
    for s in 0..n as u32 {
        assert_eq!(swap_count(&sim, s), 1, "slot {s} holds one page");
    }
    assert_eq!(vmstat(&sim, VmItem::Pswpout), n as i64);
    (sim, a, first)
}

// ---------------------------------------------------------------------------------------
// Unit tests
// ---------------------------------------------------------------------------------------

#[test]
fn window_is_the_aligned_cluster_clipped_to_the_device() {
    let mut sw = mmsim::mm::swapfile::SwapInfo::new(21, 0, 3);
    assert_eq!(sw.readahead_window(0), 0..8);
    assert_eq!(sw.readahead_window(13), 8..16);
    assert_eq!(sw.readahead_window(16), 16..21, "clipped to the last slot");
    sw.page_cluster = 0;
    assert_eq!(sw.readahead_window(13), 13..14);
    sw.page_cluster = 10;
    assert_eq!(sw.readahead_window(13), 0..21);
}

/// swapin_nr_pages (v3.15), hand-computed: no hits and not next to the previous miss →
/// just the page; next to it → 2; hits h → h + 2 rounded up to a power of two ≥ 4, at most
/// 2^page_cluster; never below half the last window.
#[test]
fn adaptive_window_follows_hits_and_shrinks_by_halves() {
    let mut sw = mmsim::mm::swapfile::SwapInfo::new(1024, 0, 3);
    assert_eq!(
        sw.swapin_nr_pages(100),
        1,
        "no hits, slot 0 was not the last miss"
    );
    assert_eq!(sw.swapin_nr_pages(101), 2, "next to the last miss");
    assert_eq!(
        sw.swapin_nr_pages(99),
        1,
        "next to 101? no: prev_offset is 101 now, 99 is not"
    );
    sw.readahead_hits = 1;
    assert_eq!(sw.swapin_nr_pages(500), 4, "1 hit + 2 = 3, rounded up to 4");
    sw.readahead_hits = 3;
    assert_eq!(sw.swapin_nr_pages(600), 8, "3 + 2 = 5 → 8");
    sw.readahead_hits = 20;
    assert_eq!(sw.swapin_nr_pages(700), 8, "at most 2^page_cluster");
    assert_eq!(
        sw.swapin_nr_pages(900),
        4,
        "no hits: 1, but not below 8 / 2"
    );
    assert_eq!(sw.swapin_nr_pages(950), 2);
    assert_eq!(sw.swapin_nr_pages(990), 1);
    assert_eq!(sw.readahead_hits, 0, "each miss consumes the hits");
    sw.page_cluster = 0;
    sw.readahead_hits = 5;
    assert_eq!(
        sw.swapin_nr_pages(10),
        1,
        "page_cluster 0: never read ahead"
    );
}

/// Read back `order` (virtual pages of a swapped-out area) with the adaptive or the fixed
/// window; returns (major faults, pages read from swap).
fn read_back(adaptive: bool, n: u64, order: &[u64]) -> (i64, i64) {
    let (mut sim, a, first) = swapped_machine_with(None, n, adaptive);
    let (maj0, in0) = (
        vmstat(&sim, VmItem::Pgmajfault),
        vmstat(&sim, VmItem::Pswpin),
    );
    for &i in order {
        access_waiting(&mut sim, a, first + i, false);
        check_all(&sim).unwrap();
    }
    (
        vmstat(&sim, VmItem::Pgmajfault) - maj0,
        vmstat(&sim, VmItem::Pswpin) - in0,
    )
}

/// A sequential read-back earns hits, so the adaptive window grows to the full cluster:
/// far fewer major faults than pages, though more than the fixed window's one per 8
/// (it starts at one page). A scattered read-back earns none, so the adaptive window
/// stays at one page and reads far less than the fixed window's 8 per fault.
#[test]
fn adaptive_window_grows_on_sequential_and_stays_small_on_random_swapin() {
    let n = 128u64;
    let seq: Vec<u64> = (0..n).collect();
    let (maj_a, in_a) = read_back(true, n, &seq);
    let (maj_f, in_f) = read_back(false, n, &seq);
    assert_eq!(
        (maj_f, in_f),
        (16, 128),
        "fixed: one fault per aligned cluster of 8"
    );
    assert_eq!(in_a, 128, "every page is read once either way");
    assert!(
        maj_a > maj_f && maj_a < 40,
        "adaptive sequential: {maj_a} major faults"
    );
    // Every 9th page (mod n): never within a window read for an earlier fault.
    let scattered: Vec<u64> = (0..16).map(|k| (k * 9 * 8) % n).collect();
    let (maj_a, in_a) = read_back(true, n, &scattered);
    let (maj_f, in_f) = read_back(false, n, &scattered);
    assert_eq!(maj_a, maj_f);
    assert!(
        in_f >= 4 * in_a,
        "fixed reads {in_f} pages, adaptive {in_a}"
    );
}

#[test]
fn fault_reads_the_cluster_and_a_neighbour_then_faults_minor() {
    let (mut sim, a, first) = swapped_machine(None, 64);
    assert_eq!(sim.swap.as_ref().unwrap().page_cluster, 3, "the default");
    let mm = mm_of(&sim, a);
    let target = vpn_of_slot(&sim, a, first, 64, 13);
    let (in0, maj0, pgin0, io0) = (
        vmstat(&sim, VmItem::Pswpin),
        vmstat(&sim, VmItem::Pgmajfault),
        vmstat(&sim, VmItem::Pgpgin),
        swap_reads(&sim),
    );
    let majflt0 = sim.tasks[a].stats.majflt;
    // The fault starts the reads and waits for the faulting page.
    let w = access(&mut sim, a, target, false);
    let Err(Wait::PageLocked(fpfn)) = w else {
        panic!("the swap fault should wait for its read: {w:?}")
    };
    assert_eq!(cached(&sim, 13), fpfn);
    assert_eq!(
        vmstat(&sim, VmItem::Pswpin) - in0,
        8,
        "slots 8..16 are read"
    );
    assert_eq!(vmstat(&sim, VmItem::Pgpgin) - pgin0, 8 * 4);
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault) - maj0, 1);
    assert_eq!(sim.tasks[a].stats.majflt - majflt0, 1);
    let io = swap_reads(&sim);
    assert_eq!(
        (io.0 - io0.0, io.1 - io0.1),
        (1, 8),
        "one request for the 8 contiguous slots"
    );
    // Nothing outside the cluster was touched.
    for s in (0..8).chain(16..64) {
        assert_eq!(cached(&sim, s), NIL, "slot {s}");
    }
    for s in (8..16).filter(|&s| s != 13) {
        let p = cached(&sim, s);
        assert_ne!(p, NIL, "slot {s} was read ahead");
        let page = &sim.mem[p as usize];
        assert!(
            page.test(pg::SWAPCACHE) && page.test(pg::SWAPBACKED) && page.test(pg::LOCKED),
            "slot {s}: {}",
            page.flag_names()
        );
        assert!(!page.mapped(), "readahead pages are not mapped");
        assert_eq!(
            page.mapping, NO_MAPPING,
            "owner unknown until a fault maps it"
        );
        assert_eq!(page.private, s);
        assert!(!page.test(pg::ACTIVE));
        assert!(
            on_lru_list(&sim, p, LruList::InactiveAnon),
            "slot {s} is on the inactive anon list"
        );
        assert_eq!(swap_count(&sim, s), 1, "the PTE still refers to slot {s}");
    }
    check_all(&sim).unwrap();
    // The reads complete: every page holds its slot's persisted version.
    assert_eq!(complete_io_and_ipis(&mut sim), 1);
    for s in 8..16 {
        let p = cached(&sim, s);
        let page = &sim.mem[p as usize];
        assert!(page.test(pg::UPTODATE) && !page.test(pg::LOCKED));
        let v = sim.swap.as_ref().unwrap().versions[s as usize];
        assert_ne!(v, 0, "slot {s} was written");
        assert_eq!(page.version, v, "slot {s}");
    }
    check_all(&sim).unwrap();
    // The fault retries and maps the page.
    assert!(!access_waiting(&mut sim, a, target, false));
    assert!(sim.mem[fpfn as usize].mapped());
    assert_eq!(pte::pfn(sim.mm(mm).pgtable.get(target)), fpfn);
    // A neighbour: found in the swap cache, a minor fault, no IO.
    let nb = vpn_of_slot(&sim, a, first, 64, 10);
    let npfn = cached(&sim, 10);
    let (in1, maj1, min1, io1) = (
        vmstat(&sim, VmItem::Pswpin),
        vmstat(&sim, VmItem::Pgmajfault),
        sim.tasks[a].stats.minflt,
        swap_reads(&sim),
    );
    let majflt1 = sim.tasks[a].stats.majflt;
    assert!(
        !access_waiting(&mut sim, a, nb, false),
        "the neighbour is uptodate"
    );
    assert_eq!(vmstat(&sim, VmItem::Pswpin), in1);
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault), maj1);
    assert_eq!(sim.tasks[a].stats.majflt, majflt1);
    assert_eq!(sim.tasks[a].stats.minflt, min1 + 1);
    assert_eq!(swap_reads(&sim), io1);
    let p = sim.mm(mm).pgtable.get(nb);
    assert!(p & pte::PRESENT != 0 && pte::pfn(p) == npfn);
    let page = &sim.mem[npfn as usize];
    assert!(page.mapped());
    assert_eq!(page.index, nb, "the fault gave the page its owner");
    assert_eq!(
        swap_count(&sim, 10),
        0,
        "the PTE's slot reference is dropped"
    );
    assert_eq!(
        Some(&page.version),
        sim.mm(mm).anon_expected.get(&nb),
        "the newest write"
    );
    // A write to another neighbour takes it out of the swap cache (reuse_swap_page).
    let nb2 = vpn_of_slot(&sim, a, first, 64, 15);
    assert!(!access_waiting(&mut sim, a, nb2, true));
    assert_eq!(vmstat(&sim, VmItem::Pswpin), in1);
    assert_eq!(cached(&sim, 15), NIL);
    assert!(sim.swap.as_ref().unwrap().is_free(15));
    assert_clean(&sim);
}

#[test]
fn page_cluster_zero_reads_one_page() {
    let (mut sim, a, first) = swapped_machine(Some(0), 64);
    let target = vpn_of_slot(&sim, a, first, 64, 13);
    let (in0, maj0, io0) = (
        vmstat(&sim, VmItem::Pswpin),
        vmstat(&sim, VmItem::Pgmajfault),
        swap_reads(&sim),
    );
    assert!(access_waiting(&mut sim, a, target, false));
    assert_eq!(vmstat(&sim, VmItem::Pswpin) - in0, 1);
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault) - maj0, 1);
    let io = swap_reads(&sim);
    assert_eq!((io.0 - io0.0, io.1 - io0.1), (1, 1));
    let cached_slots: Vec<u32> = (0..64).filter(|&s| cached(&sim, s) != NIL).collect();
    assert_eq!(cached_slots, vec![13]);
    // The next page is a major fault of its own.
    let nb = vpn_of_slot(&sim, a, first, 64, 12);
    assert!(access_waiting(&mut sim, a, nb, false));
    assert_eq!(vmstat(&sim, VmItem::Pswpin) - in0, 2);
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault) - maj0, 2);
    assert_clean(&sim);
}

#[test]
fn free_cached_and_writeback_slots_in_the_cluster_are_skipped() {
    let (mut sim, a, first) = swapped_machine(Some(3), 64);
    let mm = mm_of(&sim, a);
    // Cluster 8..16. Without readahead for the set-up faults:
    sim.swap.as_mut().unwrap().page_cluster = 0;
    // slot 9 becomes free: a write fault takes its page out of the swap cache;
    let v9 = vpn_of_slot(&sim, a, first, 64, 9);
    assert!(access_waiting(&mut sim, a, v9, true));
    assert!(sim.swap.as_ref().unwrap().is_free(9));
    // slot 10 is cached and in use: read it in, then unmap it again (the clean page stays
    // in the swap cache, the PTE is a swap entry once more);
    let v10 = vpn_of_slot(&sim, a, first, 64, 10);
    assert!(access_waiting(&mut sim, a, v10, false));
    let p10 = cached(&sim, 10);
    // slot 14 is under writeback: read it in, dirty it, unmap it and start the swap-out.
    let v14 = vpn_of_slot(&sim, a, first, 64, 14);
    assert!(access_waiting(&mut sim, a, v14, false));
    assert!(
        !access_waiting(&mut sim, a, v14, true),
        "write-protect fault"
    );
    let p14 = cached(&sim, 14);
    assert_ne!(p14, NIL, "a read fault leaves the page in the swap cache");
    run_on(&mut sim, 0, a);
    for p in [p10, p14] {
        sim.page_referenced(p, mmsim::mm::memcontrol::ROOT_MEM_CGROUP); // age the young PTE
        assert!(sim.trylock_page(p));
        assert_eq!(sim.try_to_unmap(p, false), TtuResult::Success);
        sim.unlock_page(p);
    }
    assert_eq!(pte::pfn(sim.mm(mm).pgtable.get(v10)), 10);
    assert!(sim.PageDirty(p14) && !sim.PageDirty(p10));
    assert!(sim.trylock_page(p14));
    sim.swap_writepage(p14);
    assert!(sim.PageWriteback(p14));
    for s in [10, 14] {
        assert_eq!(swap_count(&sim, s), 1, "slot {s} in use");
    }
    check_all(&sim).unwrap();

    sim.swap.as_mut().unwrap().page_cluster = 3;
    let target = vpn_of_slot(&sim, a, first, 64, 12);
    let (in0, maj0, io0) = (
        vmstat(&sim, VmItem::Pswpin),
        vmstat(&sim, VmItem::Pgmajfault),
        swap_reads(&sim),
    );
    let w = access(&mut sim, a, target, false);
    assert!(matches!(w, Err(Wait::PageLocked(_))), "{w:?}");
    // Read: 8, 11, 12, 13, 15 — in three requests (8 | 11..=13 | 15).
    assert_eq!(vmstat(&sim, VmItem::Pswpin) - in0, 5);
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault) - maj0, 1);
    let io = swap_reads(&sim);
    assert_eq!((io.0 - io0.0, io.1 - io0.1), (3, 5));
    assert_eq!(cached(&sim, 9), NIL, "a free slot is not read");
    assert_eq!(cached(&sim, 10), p10, "a cached page is kept");
    assert_eq!(cached(&sim, 14), p14, "a page under writeback is kept");
    assert!(sim.PageWriteback(p14) && !sim.PageLocked(p10));
    for s in [8, 11, 13, 15] {
        let p = cached(&sim, s);
        assert!(p != NIL && sim.PageLocked(p) && !sim.mem[p as usize].mapped());
    }
    check_all(&sim).unwrap();
    // Everything completes and reads back the newest writes.
    complete_io_and_ipis(&mut sim);
    for v in first..first + 64 {
        access_waiting(&mut sim, a, v, false);
    }
    assert_clean(&sim);
}

/// Readahead pages are allocated as the fault's page is (GFP_HIGHUSER_MOVABLE): below the
/// min watermark one tries direct reclaim once (no retries, as file readahead's
/// __GFP_NORETRY), and when reclaim makes no room — nothing here is reclaimable: the held
/// pages are off the LRU and the task's pages are in swap — the window ends there.
#[test]
fn readahead_stops_at_the_first_failed_allocation_after_one_reclaim() {
    let (mut sim, a, first) = swapped_machine(None, 64);
    run_on(&mut sim, 0, a);
    // Hold free pages until the node has min + 1 + 3: the fault's page and three
    // readahead pages can be allocated above the min watermark, no more.
    let min = sim.nodes[0].watermark.min;
    let mut held = Vec::new();
    while sim.node_free_pages(0) > min + 4 {
        held.push(sim.alloc_page(Gfp::NOWAIT).expect("free pages above min"));
    }
    assert_eq!(sim.node_free_pages(0), min + 4);
    let target = vpn_of_slot(&sim, a, first, 64, 10);
    let (in0, stall0, steal0) = (
        vmstat(&sim, VmItem::Pswpin),
        vmstat(&sim, VmItem::Allocstall),
        vmstat(&sim, VmItem::PgstealDirect),
    );
    let w = access(&mut sim, a, target, false);
    assert!(matches!(w, Err(Wait::PageLocked(_))), "{w:?}");
    assert_eq!(
        vmstat(&sim, VmItem::Pswpin) - in0,
        4,
        "the fault's page + 3"
    );
    assert_eq!(
        vmstat(&sim, VmItem::Allocstall) - stall0,
        1,
        "the fifth page tried direct reclaim once"
    );
    assert_eq!(
        vmstat(&sim, VmItem::PgstealDirect),
        steal0,
        "nothing to reclaim"
    );
    let read: Vec<u32> = (8..16).filter(|&s| cached(&sim, s) != NIL).collect();
    assert_eq!(read, vec![8, 9, 10, 11], "slot order; stops at the failure");
    assert_eq!(sim.node_free_pages(0), min);
    for p in held {
        sim.put_page(p);
    }
    assert!(access_waiting(&mut sim, a, target, false));
    assert!(sim.oracle_violations.is_empty());
    check_all(&sim).unwrap();
}

#[test]
fn never_mapped_readahead_pages_are_reclaimed_without_io() {
    let (mut sim, a, first) = swapped_machine(None, 64);
    let target = vpn_of_slot(&sim, a, first, 64, 20);
    assert!(access_waiting(&mut sim, a, target, false));
    let ra: Vec<Pfn> = (16..24)
        .filter(|&s| s != 20)
        .map(|s| cached(&sim, s))
        .collect();
    assert!(ra
        .iter()
        .all(|&p| p != NIL && !sim.mem[p as usize].mapped()));
    let (out0, wb0, io0) = (
        vmstat(&sim, VmItem::Pswpout),
        vmstat(&sim, VmItem::NrVmscanWrite),
        swap_reads(&sim),
    );
    let written0 = sim.devices[sim.swap.as_ref().unwrap().dev].pages_written;
    let free_before = sim.swap_free_pages();
    // Reclaim until the readahead pages are gone: clean and unmapped, they are dropped
    // from the swap cache and freed, with no IO and without being activated.
    for _ in 0..20 {
        if (16..24)
            .filter(|&s| s != 20)
            .all(|s| cached(&sim, s) == NIL)
        {
            break;
        }
        run_on(&mut sim, 0, a);
        sim.lru_add_drain_all();
        let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
        sc.priority = 0;
        sim.shrink_node(0, &mut sc);
        check_all(&sim).unwrap();
    }
    for s in (16..24).filter(|&s| s != 20) {
        assert_eq!(cached(&sim, s), NIL, "readahead page of slot {s} reclaimed");
        assert_eq!(swap_count(&sim, s), 1, "the PTE still refers to slot {s}");
    }
    assert!(ra.iter().all(|&p| sim.mem[p as usize].test(pg::BUDDY)));
    assert_eq!(vmstat(&sim, VmItem::Pswpout), out0, "no swap-out IO");
    assert_eq!(vmstat(&sim, VmItem::NrVmscanWrite), wb0);
    assert_eq!(swap_reads(&sim), io0, "no reads");
    assert_eq!(
        sim.devices[sim.swap.as_ref().unwrap().dev].pages_written,
        written0,
        "no writes"
    );
    assert_eq!(sim.swap_free_pages(), free_before, "the slots stay in use");
    // A later fault on one of them reads it again, with the right contents.
    let nb = vpn_of_slot(&sim, a, first, 64, 17);
    let maj0 = vmstat(&sim, VmItem::Pgmajfault);
    assert!(access_waiting(&mut sim, a, nb, false));
    assert_eq!(vmstat(&sim, VmItem::Pgmajfault) - maj0, 1);
    assert_clean(&sim);
}

#[test]
fn readahead_pages_outlive_their_owner_and_free_their_slots_when_reclaimed() {
    let (mut sim, a, first) = swapped_machine(None, 64);
    let target = vpn_of_slot(&sim, a, first, 64, 3);
    let w = access(&mut sim, a, target, false);
    assert!(matches!(w, Err(Wait::PageLocked(_))), "{w:?}");
    // The owner unmaps everything while the reads are in flight.
    run_on(&mut sim, 0, a);
    let r = sim.sys_munmap(a, first << PAGE_SHIFT, 64 * PAGE_SIZE);
    assert!(matches!(r, Ok(OpResult::None)), "{r:?}");
    let mm = mm_of(&sim, a);
    assert_eq!(sim.mm(mm).swapents, 0);
    assert_eq!(sim.mm(mm).rss_anon, 0);
    for s in 0..8 {
        assert_ne!(cached(&sim, s), NIL);
        assert_eq!(swap_count(&sim, s), 0);
    }
    check_all(&sim).unwrap();
    complete_io_and_ipis(&mut sim);
    check_all(&sim).unwrap();
    for _ in 0..20 {
        if sim.swap_free_pages() == sim.swap.as_ref().unwrap().nr_pages {
            break;
        }
        run_on(&mut sim, 0, a);
        sim.lru_add_drain_all();
        let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
        sc.priority = 0;
        sim.shrink_node(0, &mut sc);
        check_all(&sim).unwrap();
    }
    assert_eq!(
        sim.swap_free_pages(),
        sim.swap.as_ref().unwrap().nr_pages,
        "every slot is free once the orphaned swap-cache pages are reclaimed"
    );
    assert_eq!(vmstat(&sim, VmItem::NrFilePages), 0);
}

// ---------------------------------------------------------------------------------------
// Runs under swap pressure
// ---------------------------------------------------------------------------------------

fn run_sc(sc: &Scenario, check: bool) -> RunReport {
    common::run_sc(sc, Features::patched(), check, 20_000_000)
}

#[test]
fn anon_pressure_with_readahead_keeps_invariants_and_contents() {
    let run = |pc: &str| {
        let sc = load_builtin(
            "anon-pressure",
            &[
                "machine.memory_per_node=24MiB",
                "swap.size=64MiB",
                "tasks.seq.passes=2",
                "tasks.rand.passes=2",
                pc,
            ],
        );
        run_sc(&sc, true)
    };
    let ra = run("swap.page_cluster=3");
    assert_eq!(ra.end, RunEnd::Completed);
    assert!(
        ra.oracle_violations.is_empty(),
        "{:?}",
        ra.oracle_violations
    );
    assert!(ra.oom.is_empty(), "{:?}", ra.oom);
    let v = |r: &RunReport, k: &str| r.vmstat[k];
    assert!(v(&ra, "pswpout") > 0);
    assert!(
        v(&ra, "pswpin") > 2 * v(&ra, "pgmajfault"),
        "readahead: {} pages in for {} major faults",
        v(&ra, "pswpin"),
        v(&ra, "pgmajfault")
    );
    let none = run("swap.page_cluster=0");
    assert_eq!(none.end, RunEnd::Completed);
    assert!(none.oracle_violations.is_empty());
    assert_eq!(
        v(&none, "pswpin"),
        v(&none, "pgmajfault"),
        "one page per fault"
    );
    assert!(v(&ra, "pgmajfault") < v(&none, "pgmajfault"));
}

fn random_text(seed: u64, page_cluster: u32, anon_kib: u64, write: bool, random: bool) -> String {
    format!(
        "name = \"ra-prop\"\nseed = {seed}\n[machine]\ncpus_per_node = 2\nmemory_per_node = \"16MiB\"\n\
         [swap]\nsize = \"48MiB\"\npage_cluster = {page_cluster}\n\
         [[tasks]]\nname = \"w\"\ncpu = 0\nprogram = \"anon\"\nsize = \"{anon_kib}KiB\"\npasses = 2\npattern = \"random\"\nseed = {seed}\n\
         [[tasks]]\nname = \"x\"\ncpu = 1\nprogram = \"anon\"\nsize = \"{}KiB\"\npasses = 3\nwrite = {write}\npattern = \"{}\"\nseed = {}\n",
        anon_kib / 4,
        if random { "random" } else { "sequential" },
        seed + 1
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]
    /// Random anonymous workloads larger than RAM with any readahead window, by slot or
    /// by VMA, keep every invariant (checked after every step) and read back every written version.
    #[test]
    fn random_swap_workloads_keep_invariants(
        seed in 0u64..1000,
        page_cluster in 0u32..=5,
        anon_kib in 18432u64..28672,
        write in any::<bool>(),
        random in any::<bool>(),
        vma in any::<bool>(),
    ) {
        let text = random_text(seed, page_cluster, anon_kib, write, random);
        let sc = parse_scenario(&text, "ra-prop.toml", &[]).unwrap();
        let mut f = Features::patched();
        f.set("vma-swap-readahead", vma);
        let r = common::run_sc(&sc, f, true, 20_000_000);
        prop_assert!(matches!(r.end, RunEnd::Completed), "{:?}\n{}", r.end, text);
        prop_assert!(r.oracle_violations.is_empty(), "{:?}\n{}", r.oracle_violations, text);
        // `w` alone is larger than RAM: its second pass swaps in.
        prop_assert!(r.vmstat["pswpout"] > 0 && r.vmstat["pgmajfault"] > 0, "{:?}", r.vmstat);
        if page_cluster == 0 {
            prop_assert_eq!(r.vmstat["pswpin"], r.vmstat["pgmajfault"]);
            prop_assert_eq!(r.vmstat["swap_ra"], 0);
        } else if vma {
            // Every page read is the faulting one or a readahead page (swap_ra).
            prop_assert_eq!(r.vmstat["pswpin"], r.vmstat["pgmajfault"] + r.vmstat["swap_ra"]);
            // A hit clears PG_readahead, set by the readahead on each of its pages or —
            // the same bit, PG_reclaim — by the swap-out of a page (which a fault then
            // finds in the swap cache, its writeback not ended: Linux counts it too).
            prop_assert!(
                r.vmstat["swap_ra_hit"] <= r.vmstat["swap_ra"] + r.vmstat["pswpout"],
                "{:?}",
                r.vmstat
            );
        } else {
            prop_assert!(r.vmstat["pswpin"] > r.vmstat["pgmajfault"]);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------------------

#[test]
fn page_cluster_is_read_from_the_swap_table() {
    let sc = parse_scenario(&machine_text(Some(5)), "ra.toml", &[]).unwrap();
    assert_eq!(sc.swap.as_ref().unwrap().page_cluster, 5);
    let sc = parse_scenario(&machine_text(None), "ra.toml", &[]).unwrap();
    assert_eq!(sc.swap.as_ref().unwrap().page_cluster, 3, "default");
    let sets = vec!["swap.page_cluster=0".to_string()];
    let sc = parse_scenario(&machine_text(None), "ra.toml", &sets).unwrap();
    assert_eq!(sc.swap.as_ref().unwrap().page_cluster, 0);
    let sim = Sim::new(&sc, Features::patched()).unwrap();
    assert_eq!(sim.swap.as_ref().unwrap().page_cluster, 0);
}

#[test]
fn bad_page_cluster_is_a_clear_error() {
    // `page_cluster = …` is on line 11 of the machine text.
    for (value, want) in [
        ("11", "page_cluster must be between 0 and 10"),
        ("64", "page_cluster must be between 0 and 10"),
        ("-1", "must be ≥ 0"),
        ("\"3\"", "expected an integer"),
        ("2.5", "expected an integer"),
    ] {
        let text =
            machine_text(Some(0)).replace("page_cluster = 0", &format!("page_cluster = {value}"));
        let err = parse_scenario(&text, "ra.toml", &[]).expect_err(value);
        assert_eq!(err.file, "ra.toml", "{err}");
        assert_eq!(err.line, Some(11), "{value}: {err}");
        assert_eq!(err.field, "swap.page_cluster", "{err}");
        assert!(err.message.contains(want), "{value}: {err}");
    }
    let err = parse_scenario(
        &machine_text(None),
        "ra.toml",
        &["swap.page_cluster=12".to_string()],
    )
    .expect_err("--set out of range");
    assert_eq!(err.file, "--set");
    assert_eq!(err.field, "swap.page_cluster");
    assert!(err.message.contains("between 0 and 10"), "{err}");
}

// ---------------------------------------------------------------------------------------
// VMA-based readahead (v4.14 swap_vma_readahead)
// ---------------------------------------------------------------------------------------

/// The tiny machine with VMA-based swap readahead on (`vma-swap-readahead`) and the
/// swap device `preset`.
fn vma_machine(preset: &str) -> Sim {
    let mut f = Features::patched();
    f.set("vma-swap-readahead", true);
    let text = machine_text(None).replace("preset = \"ssd\"", &format!("preset = \"{preset}\""));
    build_sim(&text, "ra.toml", f)
}

/// Pages read from swap, swap_ra and swap_ra_hit so far.
fn ra_counts(sim: &Sim) -> (i64, i64, i64) {
    (
        vmstat(sim, VmItem::Pswpin),
        vmstat(sim, VmItem::SwapRa),
        vmstat(sim, VmItem::SwapRaHit),
    )
}

/// The window by hand (page_cluster 3: at most 8 pages): a first fault has no history
/// (the VMA's last address is 0): 1 page. The next page is adjacent: 2 pages from the
/// fault on. A fault on that read-ahead page is a hit. The next miss, adjacent, with 1
/// hit: 1 + 2 rounded up to 4 pages from the fault on. A far fault with no hits: half the
/// last window, 2 pages, centred ((2 − 1) / 2 = 0 pages before it). Every read page but
/// the faulting one counts swap_ra; each found by a fault swap_ra_hit.
#[test]
fn vma_window_follows_the_faults_of_the_vma() {
    let mut sim = vma_machine("ssd");
    assert!(sim.swap.as_ref().unwrap().vma_ra);
    let a = task_id(&sim, "a");
    let n = 64;
    let first = write_pages(&mut sim, a, n);
    swap_out_all(&mut sim, a, first, n);
    let mm = mm_of(&sim, a);
    let cached_vpn = |sim: &Sim, v: u64| {
        let p = sim.mm(mm).pgtable.get(v);
        p & pte::SWAP != 0 && cached(sim, pte::pfn(p)) != NIL
    };
    let (in0, ra0, hit0) = ra_counts(&sim);
    let step = |sim: &mut Sim, i: u64| {
        access_waiting(sim, a, first + i, false);
        let (i1, r1, h1) = ra_counts(sim);
        (i1 - in0, r1 - ra0, h1 - hit0)
    };
    assert_eq!(step(&mut sim, 10), (1, 0, 0), "no history: the page alone");
    assert_eq!(step(&mut sim, 11), (3, 1, 0), "adjacent: pages 11 and 12");
    assert!(cached_vpn(&sim, first + 12) && !cached_vpn(&sim, first + 13));
    assert_eq!(step(&mut sim, 12), (3, 1, 1), "12 was read ahead: a hit");
    assert_eq!(step(&mut sim, 13), (7, 4, 1), "1 hit: 4 pages, 13..17");
    assert!(cached_vpn(&sim, first + 16) && !cached_vpn(&sim, first + 17));
    assert_eq!(
        step(&mut sim, 40),
        (9, 5, 1),
        "far, no hits: 4 / 2 = 2 pages, 40..42"
    );
    assert!(cached_vpn(&sim, first + 41) && !cached_vpn(&sim, first + 39));
    assert_clean(&sim);
}

/// The window never leaves the faulting PTE table (the PMD's 512 pages) nor the VMA.
#[test]
fn vma_window_stops_at_the_page_table_and_the_vma() {
    let mut sim = vma_machine("ssd");
    let a = task_id(&sim, "a");
    let n = 1024;
    let first = write_pages(&mut sim, a, n);
    swap_out_all(&mut sim, a, first, n);
    let table_end = (first / 512 + 1) * 512;
    assert!(table_end + 2 < first + n);
    let (in0, _, _) = ra_counts(&sim);
    // A fault at the table's second-to-last page, then at its last: adjacent, a window of
    // 2 from the fault, cut at the table's end: one page each.
    access_waiting(&mut sim, a, table_end - 2, false);
    access_waiting(&mut sim, a, table_end - 1, false);
    assert_eq!(ra_counts(&sim).0 - in0, 2, "nothing past the page table");
    // The VMA's last page, after its second-to-last: nothing past the VMA either.
    let (in1, _, _) = ra_counts(&sim);
    access_waiting(&mut sim, a, first + n - 2, false);
    access_waiting(&mut sim, a, first + n - 1, false);
    assert_eq!(ra_counts(&sim).0 - in1, 2);
    assert_clean(&sim);
}

/// Two mappings written in turns are swapped out in turns, so their pages alternate in
/// the swap area. Reading one back in order: the VMA-based readahead's window grows on
/// its hits and reads only the pages the reader's own PTEs name; v3.15's slot window
/// never grows (no two misses on adjacent slots, no hits): a major fault per page; and
/// the fixed slot cluster of 2.6.x brings in the other mapping's pages, half of each.
#[test]
fn vma_readahead_reads_only_the_faulting_mappings_pages() {
    let read_one_back = |adaptive: bool, vma: bool| {
        let mut f = Features::patched();
        f.set("adaptive-swap-readahead", adaptive);
        f.set("vma-swap-readahead", vma);
        let mut sim = build_sim(&machine_text(None), "ra.toml", f);
        let a = task_id(&sim, "a");
        let n = 64;
        let x = mmap_at(&mut sim, a, None, n * PAGE_SIZE, 0, 3, false) >> PAGE_SHIFT;
        let y = mmap_at(&mut sim, a, None, n * PAGE_SIZE, 0, 3, false) >> PAGE_SHIFT;
        for i in 0..n {
            access_waiting(&mut sim, a, x + i, true);
            access_waiting(&mut sim, a, y + i, true);
        }
        swap_out_all(&mut sim, a, x, n);
        swap_out_all(&mut sim, a, y, n);
        let mm = mm_of(&sim, a);
        let slot = |sim: &Sim, v: u64| pte::pfn(sim.mm(mm).pgtable.get(v));
        assert_eq!(
            slot(&sim, y + 5).abs_diff(slot(&sim, x + 5)),
            1,
            "the two mappings' pages alternate in the swap area"
        );
        let (in0, maj0) = (
            vmstat(&sim, VmItem::Pswpin),
            vmstat(&sim, VmItem::Pgmajfault),
        );
        for i in 0..n {
            access_waiting(&mut sim, a, x + i, false);
        }
        assert_clean(&sim);
        (
            vmstat(&sim, VmItem::Pswpin) - in0,
            vmstat(&sim, VmItem::Pgmajfault) - maj0,
        )
    };
    let (in_vma, maj_vma) = read_one_back(true, true);
    let (in_slots, maj_slots) = read_one_back(true, false);
    let (in_fixed, maj_fixed) = read_one_back(false, false);
    assert_eq!(in_vma, 64, "only the reader's own pages");
    assert!(maj_vma < 20, "the VMA window grows: {maj_vma} major faults");
    assert_eq!(
        (in_slots, maj_slots),
        (64, 64),
        "the slot window stays at 1"
    );
    assert_eq!(maj_fixed, 16, "4 of the reader's pages per cluster of 8");
    assert_eq!(in_fixed, 128, "and 4 of the other mapping's");
}

/// Which readahead a run uses: the VMA-based one from 4.14, except, from 4.16's rule, on
/// a rotational (hdd) swap device; `[swap] vma_ra_enabled = false` turns it off; the key
/// is an error on an era without it.
#[test]
fn vma_readahead_follows_the_era_the_device_and_vma_ra_enabled() {
    let uses = |kernel: &str, preset: &str, extra: &str| -> Result<bool, String> {
        let text = machine_text(None)
            .replace(
                "preset = \"ssd\"",
                &format!("preset = \"{preset}\"\n{extra}"),
            )
            .replace(
                "name = \"ra\"",
                &format!("name = \"ra\"\nkernel = \"{kernel}\""),
            );
        let sc = parse_scenario(&text, "ra.toml", &[]).map_err(|e| e.to_string())?;
        let f = mmsim::kernel::resolve_features(sc.kernel, None, "patched", &sc.features, None)?;
        Sim::new(&sc, f).map(|s| s.swap.as_ref().unwrap().vma_ra)
    };
    assert_eq!(uses("4.2", "ssd", ""), Ok(false));
    assert_eq!(uses("4.14", "ssd", ""), Ok(true));
    assert_eq!(uses("4.14", "hdd", ""), Ok(true), "4.14 ignores the device");
    assert_eq!(uses("6.18", "ssd", ""), Ok(true));
    assert_eq!(uses("6.18", "nvme", ""), Ok(true));
    assert_eq!(uses("6.18", "hdd", ""), Ok(false), "nr_rotate_swap (4.16)");
    assert_eq!(uses("6.18", "ssd", "vma_ra_enabled = false"), Ok(false));
    assert_eq!(uses("6.18", "ssd", "vma_ra_enabled = true"), Ok(true));
    let err = uses("4.2", "ssd", "vma_ra_enabled = true").unwrap_err();
    assert!(
        err.contains("vma_ra_enabled") && err.contains("4.14"),
        "{err}"
    );
    let err = uses("6.18", "ssd", "vma_ra_enabled = 1").unwrap_err();
    assert!(err.contains("swap.vma_ra_enabled"), "{err}");
}

/// Read-fault the swapped-out page `vpn` back and say whether it kept its slot: the page
/// still in the swap cache and clean (kept), or out of it, dirty, its slot free (freed).
fn read_back_keeps_slot(sim: &mut Sim, tid: TaskId, vpn: u64) -> bool {
    let mm = mm_of(sim, tid);
    let slot = pte::pfn(sim.mm(mm).pgtable.get(vpn)) as u32;
    access_waiting(sim, tid, vpn, false);
    let p = sim.mm(mm).pgtable.get(vpn);
    assert!(p & pte::PRESENT != 0, "mapped after the fault");
    let pfn = pte::pfn(p) as Pfn;
    let page = &sim.mem[pfn as usize];
    let kept = page.test(pg::SWAPCACHE);
    if kept {
        assert_eq!(cached(sim, slot), pfn);
        assert!(!page.test(pg::DIRTY), "a kept swap-cache page stays clean");
    } else {
        assert_eq!(cached(sim, slot), NIL, "slot {slot} still caches a page");
        assert_eq!(swap_count(sim, slot), 0);
        assert!(sim.swap.as_ref().unwrap().is_free(slot));
        assert!(page.test(pg::DIRTY), "the only copy now: dirty");
    }
    assert_clean(sim);
    kept
}

/// do_swap_page's should_try_to_free_swap: a page read back keeps its swap slot (reclaim
/// can drop it again without IO) while less than half of the swap space is in use, and
/// gives it back once more than half is (vm_swap_full), every era.
#[test]
fn a_read_fault_frees_the_slot_once_swap_is_half_full() {
    // 16 MiB of swap: 4,096 slots.
    for (n, full) in [(256u64, false), (2_200, true)] {
        let (mut sim, a, first) = swapped_machine(Some(0), n);
        assert_eq!(sim.vm_swap_full(), full, "{n} slots in use");
        assert_eq!(read_back_keeps_slot(&mut sim, a, first + 7), !full, "{n}");
    }
}

/// The machine with task `a` in a cgroup `box` of memory.swap.max `swap_max`, with or
/// without the rule `memcg-swap-full` (v4.5), the fixed readahead window.
fn boxed_machine(swap_max: &str, rule: bool) -> Sim {
    let text = machine_text(Some(0))
        .replace(
            "[[tasks]]",
            &format!("[[cgroups]]\nname = \"box\"\nswap_max = \"{swap_max}\"\n\n[[tasks]]"),
        )
        .replace("cpu = 0\n", "cpu = 0\ncgroup = \"box\"\n");
    let mut f = Features::patched();
    f.set("adaptive-swap-readahead", false);
    f.set("memcg-swap-full", rule);
    build_sim(&text, "box.toml", f)
}

/// mem_cgroup_swap_full (v4.5, `memcg-swap-full`): a page of a cgroup using half of its
/// memory.swap.max gives its slot back at a read fault, though the device is nearly
/// empty; without the rule only vm_swap_full counts.
#[test]
fn a_cgroup_at_half_its_swap_max_frees_slots_on_read_faults() {
    for rule in [true, false] {
        let mut sim = boxed_machine("1MiB", rule);
        let a = task_id(&sim, "a");
        // 160 pages: 640 KiB of the cgroup's 1 MiB (256 pages) of swap.
        let first = write_pages(&mut sim, a, 160);
        swap_out_all(&mut sim, a, first, 160);
        assert!(!sim.vm_swap_full());
        assert_eq!(
            read_back_keeps_slot(&mut sim, a, first + 3),
            !rule,
            "rule {rule}"
        );
    }
}

/// shrink_page_list's activate_locked ("not a candidate for swapping, so reclaim swap
/// space"): a swap-cache page that reclaim activates (mapped, referenced) gives its slot
/// back, and is dirtied, when its cgroup uses half of its memory.swap.max
/// (`memcg-swap-full`), and keeps it otherwise.
#[test]
fn an_activated_swap_cache_page_frees_its_slot_when_swap_is_full() {
    for rule in [true, false] {
        let mut sim = boxed_machine("4MiB", rule);
        let a = task_id(&sim, "a");
        // 160 pages out: 640 KiB of the cgroup's 4 MiB; page 3 read back keeps its slot.
        let first = write_pages(&mut sim, a, 160);
        let mm = mm_of(&sim, a);
        swap_out_all(&mut sim, a, first, 160);
        let slot = pte::pfn(sim.mm(mm).pgtable.get(first + 3)) as u32;
        assert!(read_back_keeps_slot(&mut sim, a, first + 3));
        let pfn = cached(&sim, slot);
        // memory.swap.max lowered to 1 MiB: the cgroup now uses more than half of it.
        let boxed = sim.memcg_by_name("box").unwrap();
        sim.memcgs[boxed as usize].swap_max = 256;
        // Referenced again, then met by reclaim: activated.
        access_waiting(&mut sim, a, first + 3, false);
        run_on(&mut sim, 0, a);
        sim.lru_add_drain_all();
        let activated = vmstat(&sim, VmItem::Pgactivate);
        let mut sc = ScanControl::new(1 << 20, false, Gfp::KERNEL);
        sc.priority = 0;
        sim.shrink_node(0, &mut sc);
        check_all(&sim).unwrap();
        assert_eq!(
            vmstat(&sim, VmItem::Pgactivate),
            activated + 1,
            "rule {rule}"
        );
        let page = &sim.mem[pfn as usize];
        // Activated, and deactivated again by the same pass's active-list scan (its young
        // bit is used up); still mapped.
        let p = sim.mm(mm).pgtable.get(first + 3);
        assert_eq!(pte::pfn(p) as Pfn, pfn, "rule {rule}: still mapped");
        assert_eq!(page.test(pg::SWAPCACHE), !rule, "rule {rule}");
        assert_eq!(
            page.test(pg::DIRTY),
            rule,
            "rule {rule}: the only copy is dirty"
        );
        assert_eq!(
            sim.swap.as_ref().unwrap().is_free(slot),
            rule,
            "rule {rule}"
        );
    }
}

/// swap_reclaim_work (v6.12, under `swap-cluster-lists`): the allocation that fills the
/// swap device has the cache-only slots of its full clusters freed (pages read back while
/// swap was emptier, mlocked out of reclaim's way). Without the lists nothing frees them.
#[test]
fn filling_the_device_frees_the_cache_only_slots_of_full_clusters() {
    // 1 MiB of swap: one cluster of 256 slots.
    let text = machine_text(Some(0)).replace("size = \"16MiB\"", "size = \"1MiB\"");
    for lists in [true, false] {
        let mut f = Features::patched();
        f.set("adaptive-swap-readahead", false);
        f.set("swap-cluster-lists", lists);
        let mut sim = build_sim(&text, "fill.toml", f);
        let a = task_id(&sim, "a");
        let first = write_pages(&mut sim, a, 100);
        let mm = mm_of(&sim, a);
        swap_out_all(&mut sim, a, first, 100);
        let read_back: Vec<Pfn> = (first..first + 10)
            .map(|v| {
                assert!(read_back_keeps_slot(&mut sim, a, v));
                pte::pfn(sim.mm(mm).pgtable.get(v)) as Pfn
            })
            .collect();
        run_on(&mut sim, 0, a);
        let r = sim.sys_mlock(a, first << PAGE_SHIFT, 100 * PAGE_SIZE, true);
        assert_eq!(r, OpResult::None);
        // 156 more pages take the device's last free slots.
        let more = write_pages(&mut sim, a, 156);
        swap_out_all_but(&mut sim, a, more, 156);
        let freed = read_back
            .iter()
            .filter(|&&p| !sim.mem[p as usize].test(pg::SWAPCACHE))
            .count();
        assert_eq!(freed, if lists { 10 } else { 0 }, "lists {lists}");
        assert_eq!(sim.swap_free_pages(), freed as u64, "lists {lists}");
        check_all(&sim).unwrap();
    }
}

/// scan_swap_map's __try_to_reclaim_swap: with more than half of the swap in use, the
/// next-fit scan takes back a slot only the swap cache holds (a page read back while swap
/// was emptier, still mapped and clean) and dirties its page; below half it passes it by.
#[test]
fn the_slot_scan_takes_back_cache_only_slots_once_swap_is_half_full() {
    let (mut sim, a, first) = swapped_machine(Some(0), 1_000);
    let mm = mm_of(&sim, a);
    // Read page 0 back while swap is less than half full: slot 0 stays cached.
    assert!(read_back_keeps_slot(&mut sim, a, first));
    let old = pte::pfn(sim.mm(mm).pgtable.get(first)) as Pfn;
    // mlock(2) the mapping so that the reclaim below never meets that page (it would give
    // the slot back itself once swap is half full: activate_locked).
    run_on(&mut sim, 0, a);
    let r = sim.sys_mlock(a, first << PAGE_SHIFT, 1_000 * PAGE_SIZE, true);
    assert_eq!(r, OpResult::None);
    assert!(sim.mem[old as usize].test(pg::SWAPCACHE));
    // 1,200 more pages fill swap past half of its 4,096 slots.
    let more = write_pages(&mut sim, a, 1_200);
    swap_out_all_but(&mut sim, a, more, 1_200);
    assert!(sim.vm_swap_full());
    // A page written now and swapped out from a scan that starts at slot 0.
    sim.swap.as_mut().unwrap().scan_next = 0;
    let new = add_new_page_to_swap(&mut sim, a, 0);
    assert_taken_back(&sim, 0, new, old);
}

/// Write a new page of `tid` and add it to the swap cache from CPU `cpu` (as reclaim's
/// add_to_swap does, page locked). Returns the page.
fn add_new_page_to_swap(sim: &mut Sim, tid: TaskId, cpu: usize) -> Pfn {
    let mm = mm_of(sim, tid);
    let vpn = write_pages(sim, tid, 1);
    let new = pte::pfn(sim.mm(mm).pgtable.get(vpn)) as Pfn;
    run_on(sim, cpu, tid);
    assert!(sim.trylock_page(new));
    assert!(sim.add_to_swap(new));
    sim.unlock_page(new);
    new
}

/// Slot `slot` now caches `new`; `old`, whose slot it was, left the swap cache dirty (it
/// holds the only copy).
fn assert_taken_back(sim: &Sim, slot: u32, new: Pfn, old: Pfn) {
    assert_eq!(
        cached(sim, slot),
        new,
        "slot {slot} was taken back for the new page"
    );
    assert!(!sim.mem[old as usize].test(pg::SWAPCACHE));
    assert!(
        sim.mem[old as usize].test(pg::DIRTY),
        "the old page holds the only copy"
    );
    assert_clean(sim);
}

/// 6.17's cluster scan (`swap-cluster-lists`, cluster_scan_range's need_reclaim): with
/// more than half of the swap in use, a CPU scanning a nonfull cluster from its start takes
/// back a slot only the swap cache holds before it reaches the cluster's free slot.
#[test]
fn the_cluster_scan_takes_back_cache_only_slots_once_swap_is_half_full() {
    let text = machine_text(Some(0)).replace("cpus_per_node = 1", "cpus_per_node = 2");
    let mut f = Features::patched();
    f.set("adaptive-swap-readahead", false);
    f.set("swap-cluster-lists", true);
    let mut sim = build_sim(&text, "lists.toml", f);
    let a = task_id(&sim, "a");
    let first = write_pages(&mut sim, a, 1_000);
    let mm = mm_of(&sim, a);
    swap_out_all(&mut sim, a, first, 1_000);
    // Slot 900 (cluster 3) read back while swap is less than half full; the mapping
    // mlocked out of reclaim's way.
    let v900 = vpn_of_slot(&sim, a, first, 1_000, 900);
    assert!(read_back_keeps_slot(&mut sim, a, v900));
    let old = pte::pfn(sim.mm(mm).pgtable.get(v900)) as Pfn;
    run_on(&mut sim, 0, a);
    let r = sim.sys_mlock(a, first << PAGE_SHIFT, 1_000 * PAGE_SIZE, true);
    assert_eq!(r, OpResult::None);
    let more = write_pages(&mut sim, a, 1_200);
    swap_out_all_but(&mut sim, a, more, 1_200);
    assert!(sim.vm_swap_full());
    // A write fault on slot 950's page frees it (reuse): cluster 3 is nonfull.
    let v950 = vpn_of_slot(&sim, a, first, 1_000, 950);
    access_waiting(&mut sim, a, v950, true);
    assert!(sim.swap.as_ref().unwrap().is_free(950));
    // CPU 1 has no cluster yet: it takes the nonfull cluster 3 and scans it from 768,
    // meeting cache-only slot 900 before free slot 950.
    let new = add_new_page_to_swap(&mut sim, a, 1);
    assert_taken_back(&sim, 900, new, old);
}
