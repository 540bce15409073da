//! fork(2) and copy-on-write (`mm/fork.rs`, do_wp_page's wp_page_copy): the child shares
//! the parent's private pages write-protected, the first write of either side copies, a
//! page shared by a family is reclaimed out of every member's page table and swapped back
//! into each, and exits leave the survivors' pages exclusive again. The unit tests call
//! the kernel functions directly; a property test runs random sequences of forks,
//! accesses, reclaim and exits under every checker; the scenario tests run the
//! `fork-snapshot` program.

use std::cell::Cell;
use std::rc::Rc;

use crate::common;

use common::{
    build_sim, complete_io_and_ipis, dd_task_toml, machine_toml, mm_of, mmap_at, run_on, task_id,
    tlb_coherent, touch_pages,
};
use mmsim::mm::check::{check_all, check_ptes};
use mmsim::mm::memory::pte;
use mmsim::mm::page::{Pfn, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::rmap::TtuResult;
use mmsim::mm::vmstat::VmItem;
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::{Features, Sim};
use mmsim::workload::{ForkChild, Op, OpResult, Program};
use proptest::prelude::*;

/// A child program that never runs here (the tests drive the child directly).
struct Idle;

impl Program for Idle {
    fn next_op(&mut self, _: &OpResult) -> Op {
        Op::Exit
    }
}

/// 3 CPUs, `mem` of RAM, 64 MiB of swap, task `p` on CPU 0.
fn machine(mem: &str) -> (Sim, TaskId) {
    let text = machine_toml("fork", 3, mem, Some("64MiB"), "1GiB", "/data")
        + &dd_task_toml("p", 0, "/tmp/x");
    let sim = build_sim(&text, "fork.toml", Features::vanilla());
    let p = task_id(&sim, "p");
    (sim, p)
}

/// `machine("64MiB")` whose task `p` has mapped and written a private heap of `pages`
/// pages on CPU 0: (machine, p, the heap's address).
fn written_heap(pages: u64) -> (Sim, TaskId, u64) {
    let (mut sim, p) = machine("64MiB");
    run_on(&mut sim, 0, p);
    let addr = mmap_at(&mut sim, p, None, pages * PAGE_SIZE, 0, 3, false);
    run_on(&mut sim, 0, p);
    touch_pages(&mut sim, 0, p, addr, pages, true).unwrap();
    (sim, p, addr)
}

/// fork by `tid` on `cpu`; the child's task id.
fn fork(sim: &mut Sim, cpu: usize, tid: TaskId) -> TaskId {
    run_on(sim, cpu, tid);
    let child = ForkChild::new("c".into(), Some(1), Box::new(Idle));
    let mut progress = 0;
    for _ in 0..100 {
        match sim.sys_fork(tid, &child, &mut progress) {
            Ok(OpResult::Pid(c)) => {
                complete_io_and_ipis(sim);
                return c as TaskId;
            }
            Ok(other) => panic!("fork: {other:?}"),
            Err(_) => {
                complete_io_and_ipis(sim);
                run_on(sim, cpu, tid);
            }
        }
    }
    panic!("fork never finished");
}

/// The PTE of `tid` at `addr`'s page.
fn pte_of(sim: &Sim, tid: TaskId, addr: u64) -> u64 {
    sim.mm(mm_of(sim, tid)).pgtable.get(addr >> PAGE_SHIFT)
}

fn frame(sim: &Sim, tid: TaskId, addr: u64) -> Pfn {
    let p = pte_of(sim, tid, addr);
    assert!(
        p & pte::PRESENT != 0,
        "page {addr:#x} of task {tid} is mapped"
    );
    pte::pfn(p) as Pfn
}

fn checked(sim: &Sim) {
    assert_eq!(check_all(sim), Ok(()));
    assert_eq!(check_ptes(sim), Ok(()));
    assert_eq!(tlb_coherent(sim), Ok(()));
    assert!(
        sim.oracle_violations.is_empty(),
        "{:?}",
        sim.oracle_violations
    );
}

/// After fork both sides map the same frames, write-protected, the child's PTEs old; the
/// pages count once in nr_anon_pages and in each side's rss. The parent's first write
/// copies the page (the child still reads the old contents: the content oracle checks
/// it); the child's write to that page then reuses it in place, as nobody shares it.
#[test]
fn fork_shares_private_pages_until_the_first_write() {
    let (mut sim, p, addr) = written_heap(8);
    let anon_before = sim.vmstat.get(VmItem::NrAnonPages);
    let c = fork(&mut sim, 0, p);
    assert_eq!(sim.tasks[c].name, "p.c");
    assert_eq!(sim.tasks[c].memcg, sim.tasks[p].memcg);
    checked(&sim);
    for i in 0..8 {
        let a = addr + i * PAGE_SIZE;
        let (pp, cp) = (pte_of(&sim, p, a), pte_of(&sim, c, a));
        assert_eq!(pte::pfn(pp), pte::pfn(cp), "page {i} is shared");
        assert_eq!(pp & pte::WRITE, 0, "the parent's PTE is write-protected");
        assert_eq!(cp & pte::WRITE, 0, "the child's PTE is write-protected");
        assert_eq!(cp & pte::YOUNG, 0, "the child's PTE is old");
        assert_eq!(sim.mem[pte::pfn(pp) as usize].mapcount, 1, "two mappings");
    }
    assert_eq!(sim.vmstat.get(VmItem::NrAnonPages), anon_before);
    assert_eq!(sim.mm(mm_of(&sim, c)).rss_anon, 8);
    assert_eq!(sim.mm(mm_of(&sim, p)).rss_anon, 8);

    // The parent writes page 0: a copy of its own.
    let old = frame(&sim, p, addr);
    touch_pages(&mut sim, 0, p, addr, 1, true).unwrap();
    complete_io_and_ipis(&mut sim);
    let new = frame(&sim, p, addr);
    assert_ne!(new, old, "the write copied the page");
    assert_eq!(frame(&sim, c, addr), old, "the child keeps the old page");
    assert_eq!(sim.mem[old as usize].mapcount, 0, "one mapping left");
    assert_eq!(sim.vmstat.get(VmItem::NrAnonPages), anon_before + 1);
    // The child reads its old contents (the oracle compares versions), then writes: the
    // page is its alone now, reused in place.
    touch_pages(&mut sim, 1, c, addr, 1, false).unwrap();
    touch_pages(&mut sim, 1, c, addr, 1, true).unwrap();
    complete_io_and_ipis(&mut sim);
    assert_eq!(frame(&sim, c, addr), old, "an exclusive page is reused");
    assert!(pte_of(&sim, c, addr) & pte::WRITE != 0);
    checked(&sim);
}

/// Without the copy-on-write (a shared page made writable in place) the child would read
/// the parent's later write: the content oracle says so. This is the check the first test
/// relies on, shown to fire: a write through a PTE made writable by hand.
#[test]
fn the_oracle_catches_a_write_to_a_shared_page() {
    let (mut sim, p, addr) = written_heap(1);
    let c = fork(&mut sim, 0, p);
    let mm = mm_of(&sim, p);
    *sim.mm_mut(mm).pgtable.get_mut(addr >> PAGE_SHIFT).unwrap() |= pte::WRITE;
    touch_pages(&mut sim, 0, p, addr, 1, true).unwrap();
    touch_pages(&mut sim, 1, c, addr, 1, false).unwrap();
    assert!(
        !sim.oracle_violations.is_empty(),
        "the child saw the parent's write"
    );
}

/// Reclaim of a page both sides map: try_to_unmap clears both PTEs to the same swap entry
/// (swap count 2). The child's fault brings it back read-only and shared (count 1: the
/// parent's PTE); the parent's fault finds it in the swap cache and maps the same frame;
/// the parent's write then copies it.
#[test]
fn a_shared_page_is_swapped_out_of_both_and_back_into_each() {
    let (mut sim, p, addr) = written_heap(1);
    let c = fork(&mut sim, 0, p);
    let pfn = frame(&sim, p, addr);
    // Make it old in the parent too, and give it a slot.
    run_on(&mut sim, 2, p);
    sim.page_referenced(pfn, mmsim::mm::memcontrol::ROOT_MEM_CGROUP);
    assert!(sim.trylock_page(pfn));
    assert!(sim.add_to_swap(pfn));
    let off = sim.mem[pfn as usize].private;
    assert_eq!(sim.try_to_unmap(pfn, false), TtuResult::Success);
    sim.unlock_page(pfn);
    complete_io_and_ipis(&mut sim);
    for t in [p, c] {
        let e = pte_of(&sim, t, addr);
        assert!(
            e & pte::SWAP != 0 && pte::pfn(e) == off,
            "task {t} holds the slot"
        );
    }
    assert_eq!(sim.swap.as_ref().unwrap().swap_map[off as usize], 2);
    checked(&sim);

    // Still in the swap cache: the child maps it back, then the parent.
    touch_pages(&mut sim, 1, c, addr, 1, false).unwrap();
    assert_eq!(frame(&sim, c, addr), pfn);
    assert_eq!(pte_of(&sim, c, addr) & pte::WRITE, 0, "shared: read-only");
    assert_eq!(sim.swap.as_ref().unwrap().swap_map[off as usize], 1);
    touch_pages(&mut sim, 0, p, addr, 1, false).unwrap();
    assert_eq!(frame(&sim, p, addr), pfn, "the same frame");
    assert_eq!(sim.mem[pfn as usize].mapcount, 1);
    checked(&sim);
    touch_pages(&mut sim, 0, p, addr, 1, true).unwrap();
    complete_io_and_ipis(&mut sim);
    assert_ne!(frame(&sim, p, addr), pfn, "the parent's write copied it");
    checked(&sim);
}

/// The parent's exit leaves the child the only mapping: its writes reuse the pages in
/// place, and the rmap walk of those pages (the parent's anon_vma, whose creator is gone)
/// still finds the child.
#[test]
fn after_the_parent_exits_the_child_owns_the_pages() {
    let (mut sim, p, addr) = written_heap(4);
    let c = fork(&mut sim, 0, p);
    run_on(&mut sim, 0, p);
    sim.exit_mmap(p);
    complete_io_and_ipis(&mut sim);
    let pfn = frame(&sim, c, addr);
    assert_eq!(sim.mem[pfn as usize].mapcount, 0);
    checked(&sim);
    touch_pages(&mut sim, 1, c, addr, 4, true).unwrap();
    assert_eq!(frame(&sim, c, addr), pfn, "reused in place");
    // page_referenced walks the parent's anon_vma and finds the child's young PTE.
    run_on(&mut sim, 2, c);
    assert_eq!(
        sim.page_referenced(pfn, mmsim::mm::memcontrol::ROOT_MEM_CGROUP)
            .0,
        1
    );
    checked(&sim);
}

/// A fork copies only private memory that has had an anonymous page: a shared file
/// mapping's pages are faulted in again by the child, a private one's COW copies are
/// copied; VM_LOCKED is not inherited.
#[test]
fn fork_copies_private_anonymous_ptes_only() {
    let mut text = machine_toml("fork", 3, "64MiB", Some("64MiB"), "1GiB", "/data")
        + &dd_task_toml("p", 0, "/tmp/x");
    text += &common::file_toml("/data/f", 16 * PAGE_SIZE, true);
    let mut sim = build_sim(&text, "fork.toml", Features::vanilla());
    let p = task_id(&sim, "p");
    run_on(&mut sim, 0, p);
    let shared = mmap_at(&mut sim, p, Some("/data/f"), 16 * PAGE_SIZE, 0, 3, true);
    run_on(&mut sim, 0, p);
    let private = mmap_at(&mut sim, p, Some("/data/f"), 16 * PAGE_SIZE, 0, 3, false);
    let anon = mmap_at(&mut sim, p, None, 4 * PAGE_SIZE, 0, 3, false);
    for (a, n, w) in [
        (shared, 16, false),
        (private, 16, false),
        (private, 2, true),
        (anon, 4, true),
    ] {
        // Resume after each page read.
        while touch_pages(&mut sim, 0, p, a, n, w).is_err() {
            complete_io_and_ipis(&mut sim);
        }
        complete_io_and_ipis(&mut sim);
    }
    let r = sim.sys_mlock(p, anon, 4 * PAGE_SIZE, true);
    assert_eq!(r, OpResult::None);
    let c = fork(&mut sim, 0, p);
    checked(&sim);
    let cm = mm_of(&sim, c);
    let m = sim.mm(cm);
    assert_eq!(m.pgtable.get(shared >> PAGE_SHIFT), 0, "shared: not copied");
    assert!(
        m.pgtable.get(private >> PAGE_SHIFT) & pte::PRESENT != 0,
        "COW copy"
    );
    assert!(m.pgtable.get((private >> PAGE_SHIFT) + 5) & pte::PRESENT != 0);
    assert!(m.pgtable.get(anon >> PAGE_SHIFT) & pte::PRESENT != 0);
    let locked = m.find_vma(anon).unwrap().flags & mmsim::mm::rmap::VM_LOCKED;
    assert_eq!(locked, 0, "VM_LOCKED is not inherited");
    assert_eq!((m.rss_anon, m.rss_file), (6, 14));
    assert_eq!(
        sim.inodes[sim.mm(cm).find_vma(shared).unwrap().file.unwrap() as usize]
            .as_ref()
            .unwrap()
            .i_mmap
            .iter()
            .filter(|v| v.mm == cm)
            .count(),
        2,
        "the child's file VMAs are in the file's i_mmap"
    );
}

// ---------------------------------------------------------------------------------------
// Property test
// ---------------------------------------------------------------------------------------

const FAMILY: usize = 4;
const PAGES: u64 = 256;

#[derive(Clone, Debug)]
enum Act {
    /// Member `t` forks (when fewer than FAMILY are alive).
    Fork { t: usize },
    /// Member `t` on `cpu` touches pages [first, first + n) of the heap.
    Touch {
        t: usize,
        cpu: usize,
        first: u64,
        n: u64,
        write: bool,
    },
    /// Direct reclaim on `cpu` in member `t`'s context.
    Reclaim { t: usize, cpu: usize },
    /// Member `t` exits (not the last one).
    Exit { t: usize },
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        2 => (0..FAMILY).prop_map(|t| Act::Fork { t }),
        6 => (0..FAMILY, 0..3usize, 0..PAGES, 1..96u64, any::<bool>())
            .prop_map(|(t, cpu, first, n, write)| Act::Touch { t, cpu, first, n, write }),
        3 => (0..FAMILY, 0..3usize).prop_map(|(t, cpu)| Act::Reclaim { t, cpu }),
        1 => (0..FAMILY).prop_map(|t| Act::Exit { t }),
    ]
}

/// Random forks, reads, writes, reclaim and exits of a family sharing a heap of PAGES
/// pages (reclaim is called for, swap allowed): after each step every checker passes (the
/// page and page-table invariants, mapcounts and swap counts against every PTE, TLBs
/// against page tables) and the content oracle saw each member read what it last wrote
/// (or what it inherited).
fn run_family(acts: &[Act], batch: bool) -> Result<(), TestCaseError> {
    let text = machine_toml("fork-prop", 3, "16MiB", Some("64MiB"), "1GiB", "/data")
        + &dd_task_toml("p", 0, "/tmp/x");
    let mut f = Features::vanilla();
    f.batch_tlb_flush = batch;
    let mut sim = build_sim(&text, "fork-prop.toml", f);
    let p = task_id(&sim, "p");
    run_on(&mut sim, 0, p);
    let addr = mmap_at(&mut sim, p, None, PAGES * PAGE_SIZE, 0, 3, false);
    let mut alive: Vec<TaskId> = vec![p];
    for (i, a) in acts.iter().enumerate() {
        match *a {
            Act::Fork { t } => {
                if alive.len() < FAMILY {
                    let parent = alive[t % alive.len()];
                    let cpu = sim.tasks[parent].cpu;
                    let c = fork(&mut sim, cpu, parent);
                    alive.push(c);
                }
            }
            Act::Touch {
                t,
                cpu,
                first,
                n,
                write,
            } => {
                let tid = alive[t % alive.len()];
                let n = n.min(PAGES - first);
                let mut progress = 0;
                for _ in 0..300 {
                    run_on(&mut sim, cpu, tid);
                    let r = sim.sys_touch(
                        tid,
                        addr + first * PAGE_SIZE,
                        n * PAGE_SIZE,
                        PAGE_SIZE,
                        write,
                        &mut progress,
                    );
                    complete_io_and_ipis(&mut sim);
                    match r {
                        Ok(r) => {
                            prop_assert_eq!(
                                r,
                                OpResult::Bytes(n * PAGE_SIZE),
                                "step {} {:?}",
                                i,
                                a
                            );
                            break;
                        }
                        Err(Wait::Until(_) | Wait::PageLocked(_) | Wait::PageWriteback(_)) => {}
                    }
                }
            }
            Act::Reclaim { t, cpu } => {
                run_on(&mut sim, cpu, alive[t % alive.len()]);
                sim.try_to_free_pages(Gfp::KERNEL);
            }
            Act::Exit { t } => {
                if alive.len() > 1 {
                    let tid = alive.remove(t % alive.len());
                    let cpu = sim.tasks[tid].cpu;
                    run_on(&mut sim, cpu, tid);
                    sim.exit_mmap(tid);
                    // The exited task's CPU runs another member (exit's schedule).
                    run_on(&mut sim, cpu, alive[0]);
                }
            }
        }
        complete_io_and_ipis(&mut sim);
        prop_assert_eq!(check_all(&sim), Ok(()), "after step {} {:?}", i, a);
        prop_assert_eq!(check_ptes(&sim), Ok(()), "after step {} {:?}", i, a);
        prop_assert_eq!(tlb_coherent(&sim), Ok(()), "after step {} {:?}", i, a);
        prop_assert!(
            sim.oracle_violations.is_empty(),
            "after step {} {:?}: {:?}",
            i,
            a,
            sim.oracle_violations
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn random_forks_writes_reclaim_and_exits_keep_every_invariant(
        acts in prop::collection::vec(act(), 1..40),
        batch in any::<bool>(),
    ) {
        run_family(&acts, batch)?;
    }
}

/// The property test's sequences do what they are for: a fixed one forks twice, writes
/// from each member under reclaim, and swaps shared pages out and back in.
#[test]
fn a_fixed_family_sequence_swaps_shared_pages() {
    let mut acts: Vec<Act> = (0..PAGES / 64)
        .map(|k| Act::Touch {
            t: 0,
            cpu: 0,
            first: k * 64,
            n: 64,
            write: true,
        })
        .collect();
    acts.push(Act::Fork { t: 0 });
    acts.push(Act::Fork { t: 1 });
    for k in 0..6 {
        acts.push(Act::Reclaim {
            t: k % 3,
            cpu: k % 3,
        });
        acts.push(Act::Touch {
            t: k % 3,
            cpu: k % 3,
            first: (k as u64 * 40) % (PAGES - 64),
            n: 64,
            write: k % 2 == 0,
        });
    }
    acts.push(Act::Exit { t: 0 });
    acts.push(Act::Reclaim { t: 0, cpu: 1 });
    run_family(&acts, true).unwrap();
}

// ---------------------------------------------------------------------------------------
// The fork-snapshot program
// ---------------------------------------------------------------------------------------

/// A fork-snapshot task `redis` on 6.18: a `heap` saved `snapshots` times to a blockfs,
/// the parent writing every `write_interval`, on 2 CPUs with `memory` of RAM and 128 MiB
/// of swap; in a cgroup of that memory.max when given.
fn snapshot_scenario(
    write_interval: &str,
    memory: &str,
    heap: &str,
    snapshots: u32,
    memory_max: Option<&str>,
) -> String {
    let cgroup = memory_max.map_or(String::new(), |max| {
        format!("[[cgroups]]\nname = \"redis\"\nmemory_max = \"{max}\"\n\n")
    });
    let in_cgroup = if memory_max.is_some() {
        "cgroup = \"redis\"\n"
    } else {
        ""
    };
    // In a cgroup, a disk slow enough (8 MiB/s) that the child's save lasts while the
    // parent's writes copy pages: from 3.2 the child is held to the disk's pace, not
    // paused 10 ms at a time (`io-less-dirty-throttling`).
    let bandwidth = if memory_max.is_some() {
        "bandwidth = \"8MiB/s\"\n"
    } else {
        ""
    };
    format!(
        r#"name = "snap"
kernel = "6.18"

[machine]
cpus_per_node = 2
memory_per_node = "{memory}"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"
{bandwidth}
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"

[swap]
size = "128MiB"
preset = "ssd"

{cgroup}[[tasks]]
name = "redis"
{in_cgroup}cpu = 0
program = "fork-snapshot"
size = "{heap}"
snapshots = {snapshots}
path = "/data/dump.rdb"
write_interval = "{write_interval}"
"#
    )
}

fn run_text(text: &str) -> mmsim::run::RunReport {
    let sc = mmsim::scenario::parse_scenario(text, "snap.toml", &[]).unwrap();
    let f = mmsim::kernel::resolve_features(None, None, "vanilla", &sc.features, None).unwrap();
    common::run_sc(&sc, f, true, 50_000_000)
}

/// A snapshot's children are tasks of their own that save the whole heap; the parent's
/// writes while they run are copy-on-write faults (minor faults beyond the heap's first
/// touch), and without writes there are none. The checker runs after every step.
#[test]
fn fork_snapshot_saves_the_heap_and_copies_what_the_parent_writes() {
    let quiet = run_text(&snapshot_scenario("0s", "128MiB", "16MiB", 2, None));
    let busy = run_text(&snapshot_scenario("10us", "128MiB", "16MiB", 2, None));
    for r in [&quiet, &busy] {
        assert!(
            r.complete && r.oracle_violations.is_empty(),
            "{:?}",
            r.oracle_violations
        );
        let parent = common::task_report(r, "redis");
        assert_eq!(parent.samples["fork"].len(), 2);
        assert_eq!(parent.samples["snapshot"].len(), 2);
        for c in ["redis.1", "redis.2"] {
            let child = common::task_report(r, c);
            assert_eq!(child.samples["save"].len(), 1, "{c} saved once");
            assert_eq!(child.write_bytes, 16 << 20, "{c} wrote the heap");
        }
    }
    let heap_pages = (16 << 20) / PAGE_SIZE;
    let q = common::task_report(&quiet, "redis");
    let b = common::task_report(&busy, "redis");
    assert_eq!(
        q.minflt, heap_pages,
        "no writes: only the heap's first touch"
    );
    assert!(
        b.minflt > heap_pages + 100,
        "the writes copied pages: {} minor faults",
        b.minflt
    );
}

/// A snapshot in a cgroup that cannot hold the heap twice: the parent's copies push it
/// to memory.max, and reclaim swaps out pages the parent and child share (out of both
/// page tables) while the parent's own faults copy them — reclaim inside a copy's
/// allocation may unmap the page being copied, and the fault is then retried
/// (wp_page_copy's pte_same). The checker runs after every step.
#[test]
fn fork_snapshot_in_a_small_cgroup_swaps_shared_pages() {
    let text = snapshot_scenario("200us", "16MiB", "4MiB", 1, Some("5MiB"));
    let r = run_text(&text);
    assert!(
        r.complete && r.oracle_violations.is_empty(),
        "{:?}",
        r.oracle_violations
    );
    let child = common::task_report(&r, "redis.1");
    assert_eq!(child.write_bytes, 4 << 20, "the child saved the heap");
    assert!(child.majflt > 0, "the child swapped shared pages back in");
    assert!(
        r.vmstat["pswpout"] > 1024,
        "the cgroup swapped: {}",
        r.vmstat["pswpout"]
    );
    assert_eq!(common::cgroup_report(&r, "redis").events.oom_kill, 0);
}

/// Same scenario, same JSON.
#[test]
fn fork_snapshot_is_deterministic() {
    let text = snapshot_scenario("10us", "64MiB", "16MiB", 2, None);
    let a = serde_json::to_string(&run_text(&text)).unwrap();
    let b = serde_json::to_string(&run_text(&text)).unwrap();
    assert_eq!(a, b);
}

/// Keep the `Cell`/`Rc` imports honest: a child program's exit is seen by whoever holds
/// its flag (the parent's waitpid), as fork-snapshot's parent does.
#[test]
fn a_fork_child_is_runnable_at_once_on_the_idlest_cpu() {
    let (mut sim, p) = machine("64MiB");
    let flag = Rc::new(Cell::new(false));
    struct Exits(Rc<Cell<bool>>);
    impl Program for Exits {
        fn next_op(&mut self, _: &OpResult) -> Op {
            self.0.set(true);
            Op::Exit
        }
    }
    run_on(&mut sim, 0, p);
    let child = ForkChild::new("x".into(), None, Box::new(Exits(flag.clone())));
    let mut progress = 0;
    let Ok(OpResult::Pid(c)) = sim.sys_fork(p, &child, &mut progress) else {
        panic!("fork");
    };
    let c = c as usize;
    assert_ne!(
        sim.tasks[c].cpu, 0,
        "CPU 0 runs the parent: the child goes elsewhere"
    );
    assert_eq!(sim.tasks[c].mm, None, "a parent without an mm gives none");
    // A second execution of the same op finds the program taken.
    assert_eq!(
        sim.sys_fork(p, &child, &mut 0),
        Ok(OpResult::Err(mmsim::workload::Errno::EAGAIN))
    );
    assert!(!flag.get());
}
