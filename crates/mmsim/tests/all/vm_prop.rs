//! Property test of issue 4: random map / access (read, write) / mlock / munlock /
//! reclaim / munmap sequences by three processes on three CPUs (mlock with and without
//! v5.18's mlock_count), with the real TLB-flush rules (vanilla and
//! batched). After every operation (and the delivery of the IPIs it sent, as the sender
//! waits for them) the invariant checker and the page-table checker pass, the content
//! oracle has seen no violation, and no CPU's TLB holds a translation that disagrees with
//! its page table. The x86 TLB rules of later eras are drawn too (deferred writable
//! flushes, TLB generations, PCID, lazy CPUs skipped by flushes, mm_cpumask updated lazily),
//! with CPUs going idle and
//! kswapd reclaiming on a CPU that borrows the last mm.

use crate::common;

use common::{
    batch_tlb_features, build_sim, complete_io_and_ipis, dd_task_toml, file_toml, machine_toml,
    run_on, task_id, tlb_coherent,
};
use mmsim::mm::check::{check_all, check_ptes};
use mmsim::mm::page::PAGE_SIZE;
use mmsim::mm::page_alloc::Gfp;
use mmsim::sched::{TaskId, Wait};
use mmsim::sim::Sim;
use mmsim::workload::OpResult;
use proptest::prelude::*;

const CPUS: usize = 3;
const FILE_PAGES: u64 = 256;

/// The x86 TLB rules of `form`: 0 the 4.3 form (the seed's), 1 deferred writable flushes,
/// TLB generations and flush_tlb_batched_pending (4.13), 2 with PCID (4.14), 3 with lazy
/// CPUs skipped (6.1), 4 with mm_cpumask updated lazily (6.18).
fn tlb_rules(f: &mut mmsim::sim::Features, form: u8) {
    f.tlb_defer_writable = form >= 1;
    f.tlb_gen = form >= 1;
    f.pcid = form >= 2;
    f.lazy_tlb_skip = form >= 3;
    f.mm_cpumask_lazy = form >= 4;
    f.tlb_flush_batched = form >= 1;
}

fn machine(batch: bool, mlock_count: bool, tlb: u8) -> (Sim, Vec<TaskId>) {
    let mut text = machine_toml("vm-prop", 3, "16MiB", None, "1GiB", "/data");
    for f in 0..2 {
        text += &file_toml(&format!("/data/f{f}"), FILE_PAGES * PAGE_SIZE, false);
    }
    for t in 0..3 {
        text += &dd_task_toml(&format!("p{t}"), t, &format!("/tmp/x{t}"));
    }
    let mut features = batch_tlb_features(batch);
    features.mlock_count = mlock_count;
    tlb_rules(&mut features, tlb);
    let sim = build_sim(&text, "vm-prop", features);
    let tasks = (0..3).map(|t| task_id(&sim, &format!("p{t}"))).collect();
    (sim, tasks)
}

#[derive(Clone, Debug)]
enum Act {
    /// Task t maps file f: kind 0 read-only private, 1 shared writable, 2 exec, 3 private
    /// writable (copy-on-write).
    Map { t: usize, f: usize, kind: u8 },
    /// Task t on CPU cpu touches pages [first, first+n) of its mapping number v.
    Touch {
        t: usize,
        cpu: usize,
        v: usize,
        first: u64,
        n: u64,
        write: bool,
    },
    /// Direct reclaim on CPU cpu in task t's context.
    Reclaim { t: usize, cpu: usize },
    /// Task t unmaps its mapping number v.
    Munmap { t: usize, v: usize },
    /// Task t mlocks (or munlocks) its mapping number v.
    Mlock { t: usize, v: usize, lock: bool },
    /// CPU cpu goes idle (enter_lazy_tlb, as the engine does when its runqueue empties),
    /// long enough for a TLB-flushing C-state if `deep`.
    Idle { cpu: usize, deep: bool },
    /// kswapd reclaims on CPU cpu, borrowing the mm loaded there (lazy TLB mode).
    Kswapd { cpu: usize },
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        2 => (0..3usize, 0..2usize, 0..4u8).prop_map(|(t, f, kind)| Act::Map { t, f, kind }),
        6 => (0..3usize, 0..CPUS, 0..4usize, 0..FILE_PAGES, 1..64u64, any::<bool>())
            .prop_map(|(t, cpu, v, first, n, write)| Act::Touch { t, cpu, v, first, n, write }),
        3 => (0..3usize, 0..CPUS).prop_map(|(t, cpu)| Act::Reclaim { t, cpu }),
        1 => (0..3usize, 0..4usize).prop_map(|(t, v)| Act::Munmap { t, v }),
        2 => (0..3usize, 0..4usize, any::<bool>())
            .prop_map(|(t, v, lock)| Act::Mlock { t, v, lock }),
        1 => (0..CPUS, any::<bool>()).prop_map(|(cpu, deep)| Act::Idle { cpu, deep }),
        1 => (0..CPUS).prop_map(|cpu| Act::Kswapd { cpu }),
    ]
}

fn run(acts: Vec<Act>, batch: bool, mlock_count: bool, tlb: u8) -> Result<(), TestCaseError> {
    run_keep(acts, batch, mlock_count, tlb).map(|_| ())
}

fn run_keep(acts: Vec<Act>, batch: bool, mlock_count: bool, tlb: u8) -> Result<Sim, TestCaseError> {
    let (mut sim, tasks) = machine(batch, mlock_count, tlb);
    // (start, pages) of each task's live mappings, in creation order.
    let mut maps: Vec<Vec<(u64, u64)>> = vec![Vec::new(); 3];
    for (i, a) in acts.iter().enumerate() {
        match *a {
            Act::Map { t, f, kind } => {
                let (prot, shared) = match kind {
                    0 => (1, false),
                    1 => (3, true),
                    2 => (5, false),
                    _ => (3, false),
                };
                let tid = tasks[t];
                run_on(&mut sim, t, tid);
                let r = sim.sys_mmap(
                    tid,
                    Some(&format!("/data/f{f}")),
                    FILE_PAGES * PAGE_SIZE,
                    0,
                    prot,
                    shared,
                );
                let OpResult::Addr(addr) = r else {
                    return Err(TestCaseError::fail(format!("mmap: {r:?}")));
                };
                // The mm now exists: load it where the task runs (as exec would have).
                run_on(&mut sim, t, tid);
                maps[t].push((addr, FILE_PAGES));
            }
            Act::Touch {
                t,
                cpu,
                v,
                first,
                n,
                write,
            } => {
                let Some(&(addr, pages)) = maps[t].get(v % maps[t].len().max(1)) else {
                    continue;
                };
                let tid = tasks[t];
                let n = n.min(pages - first.min(pages - 1));
                let start = addr + first.min(pages - 1) * PAGE_SIZE;
                let mut progress = 0;
                let mut tries = 0;
                loop {
                    run_on(&mut sim, cpu, tid);
                    match sim.sys_touch(tid, start, n * PAGE_SIZE, PAGE_SIZE, write, &mut progress)
                    {
                        Ok(_) => break, // SIGSEGV (write to a read-only map) is fine too
                        Err(Wait::Until(_)) => {}
                        Err(_) => {
                            complete_io_and_ipis(&mut sim);
                        }
                    }
                    complete_io_and_ipis(&mut sim);
                    tries += 1;
                    if tries > 200 {
                        break;
                    }
                }
            }
            Act::Reclaim { t, cpu } => {
                run_on(&mut sim, cpu, tasks[t]);
                sim.try_to_free_pages(Gfp::KERNEL);
            }
            Act::Munmap { t, v } => {
                if maps[t].is_empty() {
                    continue;
                }
                let k = v % maps[t].len();
                let (addr, pages) = maps[t].remove(k);
                run_on(&mut sim, t, tasks[t]);
                let r = sim.sys_munmap(tasks[t], addr, pages * PAGE_SIZE);
                prop_assert_eq!(r, Ok(OpResult::None));
            }
            Act::Mlock { t, v, lock } => {
                let Some(&(addr, pages)) = maps[t].get(v % maps[t].len().max(1)) else {
                    continue;
                };
                run_on(&mut sim, t, tasks[t]);
                let r = sim.sys_mlock(tasks[t], addr, pages * PAGE_SIZE, lock);
                prop_assert_eq!(r, OpResult::None);
            }
            Act::Idle { cpu, deep } => {
                sim.enter_lazy_tlb(cpu);
                if deep {
                    let t = sim.cpu_clock(cpu) + sim.costs.deep_idle_tlb_flush_ps;
                    sim.cpu_idle_until(cpu, t);
                }
            }
            Act::Kswapd { cpu } => {
                let k = sim.kswapd[0].expect("kswapd");
                run_on(&mut sim, cpu, k);
                sim.try_to_free_pages(Gfp::KERNEL);
            }
        }
        complete_io_and_ipis(&mut sim);
        prop_assert_eq!(check_all(&sim), Ok(()), "after op {} {:?}", i, a);
        prop_assert_eq!(check_ptes(&sim), Ok(()), "after op {} {:?}", i, a);
        prop_assert!(
            sim.oracle_violations.is_empty(),
            "after op {} {:?}: {:?}",
            i,
            a,
            sim.oracle_violations
        );
        prop_assert_eq!(tlb_coherent(&sim), Ok(()), "after op {} {:?}", i, a);
    }
    Ok(sim)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_map_access_reclaim_unmap_keeps_tlbs_and_content_right(
        acts in prop::collection::vec(act(), 1..40),
        batch in any::<bool>(),
        mlock_count in any::<bool>(),
        tlb in 0..5u8,
    ) {
        run(acts, batch, mlock_count, tlb)?;
    }
}

/// The sequences do real work: a fixed one maps, touches on two CPUs, reclaims and unmaps,
/// and reclaim both unmaps mapped pages and sends flushes to the other CPU.
#[test]
fn a_fixed_sequence_reclaims_mapped_pages_across_cpus() {
    for batch in [false, true] {
        let mut acts = vec![
            Act::Map {
                t: 0,
                f: 0,
                kind: 1,
            },
            Act::Map {
                t: 1,
                f: 1,
                kind: 0,
            },
        ];
        for k in 0..4 {
            acts.push(Act::Touch {
                t: 0,
                cpu: 0,
                v: 0,
                first: k * 64,
                n: 64,
                write: k % 2 == 0,
            });
            acts.push(Act::Touch {
                t: 1,
                cpu: 1,
                v: 0,
                first: k * 64,
                n: 64,
                write: false,
            });
        }
        acts.push(Act::Reclaim { t: 2, cpu: 2 });
        acts.push(Act::Reclaim { t: 2, cpu: 2 });
        acts.push(Act::Touch {
            t: 0,
            cpu: 0,
            v: 0,
            first: 0,
            n: 256,
            write: false,
        });
        acts.push(Act::Touch {
            t: 1,
            cpu: 1,
            v: 0,
            first: 0,
            n: 256,
            write: false,
        });
        acts.push(Act::Munmap { t: 0, v: 0 });
        let sim = run_keep(acts, batch, false, 0).expect("clean");
        let v = |i| sim.vmstat.get(i);
        use mmsim::mm::vmstat::VmItem;
        assert!(v(VmItem::PgstealDirect) > 0, "reclaimed");
        assert!(
            sim.cpus[0].tlb_shootdowns > 0 && sim.cpus[1].tlb_shootdowns > 0,
            "flushes reached both CPUs: {:?}",
            sim.cpus
                .iter()
                .map(|c| c.tlb_shootdowns)
                .collect::<Vec<_>>()
        );
        assert!(v(VmItem::Pgfault) > 64);
    }
}
