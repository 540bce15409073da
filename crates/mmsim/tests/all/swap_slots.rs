//! The swap slots cache (`mm/swap_slots.rs`, v4.11–6.14, `swap-slots-cache`): slots are
//! allocated to each CPU 64 at a time, freed slots wait in the freeing CPU's return cache
//! (still taken, still charged to their cgroup) until 64 are there, and the cache turns off
//! and gives everything back when swap runs low. The unit tests drive add_to_swap
//! directly; the cgroup test runs a program to its exit.

use crate::common;

use common::{build_sim_on, mm_of, mmap_at, run_on, task_id, touch_pages};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::page::{Pfn, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::swap_slots::SWAP_SLOTS_CACHE_SIZE;
use mmsim::sched::TaskId;
use mmsim::sim::{RunEnd, Sim};

/// `cpus` CPUs, 64 MiB of RAM, `swap` of swap on an HDD (the next-fit scan: no clusters
/// before 6.14), and task `a` (whose program never runs here) in cgroup `g`.
fn machine_text(cpus: u32, swap: &str) -> String {
    format!(
        r#"name = "slots"

[machine]
nodes = 1
cpus_per_node = {cpus}
memory_per_node = "64MiB"

[swap]
size = "{swap}"
preset = "hdd"

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

/// The machine on `era`'s vanilla rules with `features` ("+x,-y") on top.
fn machine(text: &str, era: KernelEra, features: &str) -> Sim {
    build_sim_on(text, "slots.toml", era, features)
}

/// Map and write `n` anonymous pages as task `a`; their frames.
fn new_pages(sim: &mut Sim, tid: TaskId, n: u64) -> Vec<Pfn> {
    let addr = mmap_at(sim, tid, None, n * PAGE_SIZE, 0, 3, false);
    touch_pages(sim, 0, tid, addr, n, true).expect("the writes need no wait");
    let mm = mm_of(sim, tid);
    let first = addr >> PAGE_SHIFT;
    (first..first + n)
        .map(|v| pte::pfn(sim.mm(mm).pgtable.get(v)) as Pfn)
        .collect()
}

/// add_to_swap of `pfn` on `cpu`: the slot it got.
fn swap_slot_on(sim: &mut Sim, tid: TaskId, cpu: usize, pfn: Pfn) -> u32 {
    run_on(sim, cpu, tid);
    assert!(sim.trylock_page(pfn));
    assert!(sim.add_to_swap(pfn), "a slot for pfn {pfn}");
    sim.unlock_page(pfn);
    sim.mem[pfn as usize].private
}

fn free_slots(sim: &Sim) -> u64 {
    sim.swap.as_ref().unwrap().free_pages
}

/// 4.11's cache on 4.14 and 6.1, and not on 6.18 (6.15 removed it) nor on 4.2.
#[test]
fn the_cache_exists_from_4_11_to_6_14() {
    let text = machine_text(2, "16MiB");
    for (era, want) in [
        (KernelEra::V4_2, false),
        (KernelEra::V4_14, true),
        (KernelEra::V6_1, true),
        (KernelEra::V6_18, false),
    ] {
        let sim = machine(&text, era, "");
        assert_eq!(
            sim.swap.as_ref().unwrap().slots_cache.is_some(),
            want,
            "{era:?}"
        );
    }
}

/// A CPU's first swap-out takes a batch of 64 slots from the next-fit scan and uses its
/// first; the other CPU's first swap-out takes the next 64; each CPU then goes on in its
/// own batch. Without the cache the slots interleave one by one.
#[test]
fn each_cpu_allocates_from_a_batch_of_64_slots() {
    let text = machine_text(2, "16MiB");
    for (features, want) in [
        ("", [0, 64, 1, 65, 2]),
        ("-swap-slots-cache", [0, 1, 2, 3, 4]),
    ] {
        let mut sim = machine(&text, KernelEra::V6_1, features);
        sim.check = true;
        let a = task_id(&sim, "a");
        let pages = new_pages(&mut sim, a, 5);
        let got: Vec<u32> = pages
            .iter()
            .enumerate()
            .map(|(i, &p)| swap_slot_on(&mut sim, a, i % 2, p))
            .collect();
        assert_eq!(got, want, "{features}");
        let held = if features.is_empty() { 128 - 5 } else { 0 };
        assert_eq!(free_slots(&sim), 4096 - 5 - held, "{features}");
        check_all(&sim).unwrap();
    }
}

/// On one CPU with 512 slots (more than 5 × 64 free: the cache turns on at the first
/// allocation), the seventh refill leaves 64 slots free; the next allocation finds fewer
/// than 2 × 64 free, gives the 63 slots the cache still holds back and takes one slot on
/// its own, from the next-fit scan. With 256 slots the cache never turns on.
#[test]
fn the_cache_turns_off_and_gives_its_slots_back_when_swap_runs_low() {
    let mut sim = machine(&machine_text(1, "2MiB"), KernelEra::V6_1, "");
    let a = task_id(&sim, "a");
    let pages = new_pages(&mut sim, a, 386);
    for (i, &p) in pages[..385].iter().enumerate() {
        assert_eq!(swap_slot_on(&mut sim, a, 0, p), i as u32);
    }
    let c = sim.swap.as_ref().unwrap().slots_cache.as_ref().unwrap();
    assert!(c.is_active());
    assert_eq!(c.cached(0), 7 * SWAP_SLOTS_CACHE_SIZE - 385);
    assert_eq!(free_slots(&sim), 512 - 7 * 64);
    // The next-fit scan goes on after the last slot the seventh refill took.
    assert_eq!(swap_slot_on(&mut sim, a, 0, pages[385]), 448);
    let sw = sim.swap.as_ref().unwrap();
    let c = sw.slots_cache.as_ref().unwrap();
    assert!(!c.is_active());
    assert_eq!(c.held().count(), 0);
    assert!(
        (385..448).all(|o| sw.is_free(o)),
        "the cache's slots came back"
    );
    assert_eq!(free_slots(&sim), 512 - 386);
    check_all(&sim).unwrap();

    let mut sim = machine(&machine_text(1, "1MiB"), KernelEra::V6_1, "");
    let pages = new_pages(&mut sim, a, 1);
    swap_slot_on(&mut sim, a, 0, pages[0]);
    let c = sim.swap.as_ref().unwrap().slots_cache.as_ref().unwrap();
    assert!(!c.is_active(), "256 free slots are not more than 5 × 64");
    assert_eq!(free_slots(&sim), 255);
}

/// A cgroup swaps 24 MiB through 8 MiB and exits. Its freed slots wait in its CPU's
/// return cache, taken and still charged: memory.swap.current stays at what that cache
/// holds (at most 64 slots) and SwapFree short by every slot a cache holds. Without the
/// cache both come back to zero and the whole device.
#[test]
fn freed_slots_stay_charged_until_their_cpu_returns_them() {
    let text = r#"name = "exit"

[machine]
cpus_per_node = 2
memory_per_node = "256MiB"

[swap]
size = "256MiB"
preset = "ssd"

[[cgroups]]
name = "g"
memory_max = "8MiB"

[[tasks]]
name = "a"
cpu = 0
cgroup = "g"
program = "anon"
size = "24MiB"
passes = 2
"#;
    for features in ["", "-swap-slots-cache"] {
        let mut sim = machine(text, KernelEra::V6_1, features);
        sim.check = true;
        let mut end = RunEnd::StepLimit;
        for _ in 0..10_000 {
            let limit = sim.steps + 1_000;
            end = sim.run(limit);
            if !matches!(end, RunEnd::StepLimit) {
                break;
            }
        }
        assert_eq!(end, RunEnd::Completed, "{features}");
        let g = sim.memcg_by_name("g").unwrap();
        let usage = sim.memcgs[g as usize].swap_usage;
        let sw = sim.swap.as_ref().unwrap();
        assert!(sim.vmstat.get(mmsim::mm::vmstat::VmItem::Pswpout) > 2_000);
        let Some(c) = sw.slots_cache.as_ref() else {
            assert_eq!(usage, 0, "{features}");
            assert_eq!(sw.free_pages, sw.nr_pages, "{features}");
            continue;
        };
        let returned: Vec<u32> = (0..2).flat_map(|cpu| c.returned(cpu).to_vec()).collect();
        let charged = returned
            .iter()
            .filter(|&&o| sim.swap_cgroup[o as usize] == g)
            .count() as u64;
        assert!(usage > 0, "the exit's last frees wait in a return cache");
        assert_eq!(usage, charged);
        assert!(usage <= 2 * SWAP_SLOTS_CACHE_SIZE as u64);
        assert_eq!(sw.free_pages, sw.nr_pages - c.held().count() as u64);
        assert!(sw.free_pages < sw.nr_pages);
    }
}
