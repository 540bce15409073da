//! Threads (`thread_group`): tasks of one process share its address space and descriptor
//! table (clone with CLONE_VM | CLONE_FILES | CLONE_THREAD). One mm, its `users` the live threads, freed with the last;
//! TLB shootdowns reach every CPU a thread ran on (the mm_cpumask of seed 002); the OOM
//! killer weighs the process and kills all its threads once; a fatal signal in one thread
//! ends the others; the scenario's errors for threads of different cgroups or
//! oom_score_adj.

use crate::common;

use common::{oom_killed as killed, run_with_program, task_id, task_report};
use mmsim::kernel::KernelEra;
use mmsim::mm::page::PAGE_SIZE;
use mmsim::run::RunReport;
use mmsim::scenario::{parse_scenario, Scenario};
use mmsim::sched::TaskState;
use mmsim::sim::{RunEnd, Sim};
use mmsim::workload::{Op, OpResult, Program};

fn scenario(text: &str) -> Scenario {
    parse_scenario(text, "threads.toml", &[]).expect("scenario parses")
}

/// The machine of `sc` on 6.18's rules, with the invariant checker after every step.
fn checked_sim(sc: &Scenario) -> Sim {
    let mut sim = Sim::new(sc, KernelEra::V6_18.features("patched").expect("preset"))
        .expect("machine builds");
    sim.check = true;
    sim
}

/// Four anonymous writers of 3/8 of a 32 MiB machine, one per CPU, with swap: as one
/// process of four threads (`thread_group = "app"`) or as four processes.
fn writers(threads: bool) -> Scenario {
    scenario(&format!(
        r#"
name = "writers"
[machine]
nodes = 1
cpus_per_node = 4
memory_per_node = "32MiB"
[swap]
size = "512MiB"
preset = "ssd"
[[tasks]]
name = "w"
cpu = 0
replicas = 4
program = "anon"
size = "ram*3/8"
passes = 2
{}
"#,
        if threads {
            "thread_group = \"app\""
        } else {
            ""
        }
    ))
}

#[test]
fn threads_share_one_mm_until_the_last_exits() {
    let sc = writers(true);
    let mut sim = checked_sim(&sc);
    let ids: Vec<usize> = (0..4).map(|i| task_id(&sim, &format!("w{i}"))).collect();
    let mm = sim.tasks[ids[0]]
        .mm
        .expect("the process has its mm before it runs");
    for &t in &ids {
        assert_eq!(sim.tasks[t].mm, Some(mm), "{}", sim.tasks[t].name);
        assert_eq!(sim.tasks[t].tgid, ids[0]);
    }
    assert_eq!(sim.mms[mm as usize].as_ref().unwrap().users, 4);
    // Part of the way: every thread ran on its own CPU, all of them in the mm's cpumask.
    let end = sim.run(20_000);
    assert_eq!(end, RunEnd::StepLimit);
    let m = sim.mms[mm as usize].as_ref().expect("alive");
    for cpu in 0..4 {
        assert!(m.cpumask_test(cpu), "CPU {cpu} not in the mm's cpumask");
    }
    assert!(m.rss_anon > 0);
    // To the end: the mm went with the last thread, and every anonymous page with it.
    assert_eq!(sim.run(50_000_000), RunEnd::Completed);
    assert!(
        sim.mms[mm as usize].is_none(),
        "the mm outlived its threads"
    );
    assert_eq!(
        sim.vmstat.get(mmsim::mm::vmstat::VmItem::NrAnonPages),
        0,
        "anonymous pages left behind"
    );
}

#[test]
fn a_thread_exiting_early_leaves_the_mm_to_the_others() {
    // w0 writes 1 MiB once, unmaps it and exits; w1 keeps writing in the same mm.
    let sc = scenario(
        r#"
name = "early-exit"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
[[tasks]]
name = "w0"
cpu = 0
program = "anon"
size = "1MiB"
passes = 1
thread_group = "app"
[[tasks]]
name = "w1"
cpu = 1
program = "anon"
size = "8MiB"
passes = 20
think = "1ms"
thread_group = "app"
"#,
    );
    let mut sim = checked_sim(&sc);
    let (w0, w1) = (task_id(&sim, "w0"), task_id(&sim, "w1"));
    let mm = sim.tasks[w0].mm.unwrap();
    let mut steps = 0;
    while sim.tasks[w0].state != TaskState::Exited {
        assert_eq!(sim.run(steps + 100), RunEnd::StepLimit, "w1 still runs");
        steps += 100;
    }
    assert_ne!(sim.tasks[w1].state, TaskState::Exited);
    let m = sim.mms[mm as usize].as_ref().expect("w1 still uses the mm");
    assert_eq!(m.users, 1);
    assert_eq!(m.vmas.len(), 1, "w1's mapping alone: {:?}", m.vmas.keys());
    assert!(m.rss_anon > 0 && m.rss_anon <= 2048, "rss {}", m.rss_anon);
    assert_eq!(sim.run(50_000_000), RunEnd::Completed);
    assert!(sim.mms[mm as usize].is_none());
}

/// A run to completion without the invariant checker (the tests that step a `Sim` run it).
fn run(sc: &Scenario) -> RunReport {
    common::run_completed(sc, KernelEra::V6_18, false, 50_000_000)
}

#[test]
fn shootdowns_reach_the_cpus_of_every_thread() {
    // Reclaim unmapping a page of a process whose threads run on four CPUs flushes the
    // other three; a single-threaded process's mm is loaded on its own CPU only.
    let t = run(&writers(true));
    let p = run(&writers(false));
    for r in [&t, &p] {
        assert!(r.vmstat["pswpout"] > 3_000, "{:?}", r.vmstat["pswpout"]);
    }
    let per_flush = |r: &RunReport| {
        r.vmstat["nr_tlb_remote_flush_received"] as f64 / r.vmstat["nr_tlb_remote_flush"] as f64
    };
    // Each remote flush of a process reaches one CPU: kswapd's, where the mm stays
    // loaded lazily (a write fault's own CPU flushes locally).
    assert!(
        per_flush(&p) <= 1.01,
        "processes: {} IPIs per remote flush",
        per_flush(&p)
    );
    // A thread group's flushes also reach the CPUs of its threads that run the mm (the
    // others, waiting for swap-ins, have left it lazily): well above one per flush.
    assert!(
        per_flush(&t) > 1.25,
        "threads: {} IPIs per remote flush",
        per_flush(&t)
    );
    assert!(
        t.vmstat["nr_tlb_remote_flush_received"] > 2 * p.vmstat["nr_tlb_remote_flush_received"]
    );
    for i in 0..4 {
        assert_eq!(
            task_report(&t, &format!("w{i}")).thread_group.as_deref(),
            Some("app")
        );
        assert_eq!(task_report(&p, &format!("w{i}")).thread_group, None);
    }
}

/// `big` writes 200 MiB of a 256 MiB machine without swap while `w0`–`w2` keep 48 MiB
/// each resident: as threads of one process (144 MiB) or as three processes.
fn oom(threads: bool) -> Scenario {
    scenario(&format!(
        r#"
name = "oom-threads"
[machine]
nodes = 1
cpus_per_node = 4
memory_per_node = "256MiB"
[[tasks]]
name = "big"
cpu = 0
program = "anon"
size = "200MiB"
passes = 2
[[tasks]]
name = "w"
cpu = 1
replicas = 3
program = "anon"
size = "48MiB"
passes = 40
think = "10ms"
{}
"#,
        if threads {
            "thread_group = \"app\""
        } else {
            ""
        }
    ))
}

#[test]
fn the_oom_killer_weighs_and_kills_the_whole_process() {
    // Three processes of 48 MiB: big, the largest, goes.
    let p = run(&oom(false));
    assert_eq!(killed(&p), ["big"], "{:?}", p.oom);
    // One process of three threads holds 144 MiB: it goes, all three threads, one kill.
    let t = run(&oom(true));
    assert_eq!(killed(&t), ["w0", "w1", "w2"], "{:?}", t.oom);
    assert_eq!(t.vmstat["oom_kill"], 1);
    assert!(
        t.oom[0].contains("killed w0 with its other threads w1, w2 (badness"),
        "{:?}",
        t.oom
    );
    assert!(task_report(&t, "big").elapsed_ns > 0, "big finished");
}

/// Touches an address nothing maps: SIGSEGV.
struct Segv;

impl Program for Segv {
    fn next_op(&mut self, _last: &OpResult) -> Op {
        Op::Touch {
            addr: 0x1000,
            len: PAGE_SIZE,
            stride: PAGE_SIZE,
            write: true,
        }
    }
}

#[test]
fn a_fatal_signal_in_one_thread_ends_the_process() {
    let text = |threads: bool| {
        format!(
            r#"
name = "segv-threads"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
[[tasks]]
name = "bad"
cpu = 0
start = "1ms"
program = "anon"
size = "1MiB"
{g}
[[tasks]]
name = "worker"
cpu = 1
program = "anon"
size = "8MiB"
passes = 1000
think = "1ms"
{g}
"#,
            g = if threads {
                "thread_group = \"app\""
            } else {
                ""
            }
        )
    };
    let (_, t) = run_with_program(&text(true), "segv", "bad", Box::new(Segv));
    assert_eq!(task_report(&t, "bad").errors.get("SIGSEGV"), Some(&1));
    let worker = task_report(&t, "worker");
    assert!(worker.errors.is_empty(), "{:?}", worker.errors);
    assert!(
        worker.elapsed_ns < 10_000_000,
        "the worker's 1000 passes were cut short by its thread's SIGSEGV: {} ns",
        worker.elapsed_ns
    );
    assert!(!worker.oom_killed);
    // As processes the worker runs its 1000 passes (over a second).
    let (sim, p) = run_with_program(&text(false), "segv", "bad", Box::new(Segv));
    assert!(task_report(&p, "worker").elapsed_ns > 1_000_000_000);
    assert!(sim.mms.iter().all(|m| m.is_none()));
}

#[test]
fn threads_of_one_process_are_in_one_cgroup_with_one_oom_score_adj() {
    let base = r#"
name = "bad-threads"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
[[cgroups]]
name = "a"
[[tasks]]
name = "t0"
program = "anon"
size = "1MiB"
thread_group = "app"
cgroup = "a"
[[tasks]]
name = "t1"
program = "anon"
size = "1MiB"
thread_group = "app"
"#;
    let err = parse_scenario(base, "bad.toml", &[]).expect_err("two cgroups");
    assert_eq!(err.field, "tasks.t1.thread_group", "{err}");
    assert!(err.message.contains("in one cgroup"), "{err}");
    assert_eq!(err.line, Some(19), "{err}");
    let adj = base.replace("cgroup = \"a\"\n", "oom_score_adj = 500\n");
    let err = parse_scenario(&adj, "bad.toml", &[]).expect_err("two oom_score_adj");
    assert!(
        err.message.contains("oom_score_adj 500 (task t0) and 0"),
        "{err}"
    );
    let empty = base.replace(
        "thread_group = \"app\"\ncgroup = \"a\"",
        "thread_group = \"\"",
    );
    let err = parse_scenario(&empty, "bad.toml", &[]).expect_err("empty name");
    assert!(err.message.contains("non-empty"), "{err}");
    let wrong = base.replace("thread_group = \"app\"\ncgroup = \"a\"", "thread_group = 1");
    let err = parse_scenario(&wrong, "bad.toml", &[]).expect_err("not a string");
    assert_eq!(err.field, "tasks.t0.thread_group", "{err}");
    // The same cgroup and oom_score_adj: fine, and a run's report names the process.
    let ok = base.replace("cgroup = \"a\"\n", "");
    let sc = parse_scenario(&ok, "ok.toml", &[]).expect("parses");
    let r = run(&sc);
    assert_eq!(task_report(&r, "t1").thread_group.as_deref(), Some("app"));
    let json = serde_json::to_string(&r).unwrap();
    assert!(json.contains("\"thread_group\":\"app\""));
}

#[test]
fn a_fork_from_a_thread_copies_the_shared_mm_into_a_process_of_its_own() {
    let sc = scenario(
        r#"
name = "fork-thread"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "128MiB"
[[tasks]]
name = "snap"
cpu = 0
program = "fork-snapshot"
size = "8MiB"
snapshots = 1
thread_group = "app"
[[tasks]]
name = "w"
cpu = 1
program = "anon"
size = "4MiB"
passes = 50
think = "1ms"
thread_group = "app"
"#,
    );
    let mut sim = checked_sim(&sc);
    let (snap, w) = (task_id(&sim, "snap"), task_id(&sim, "w"));
    // Step until a child is alive, then compare the address spaces.
    let mut steps = 0;
    let child = loop {
        steps += 50;
        assert_eq!(sim.run(steps), RunEnd::StepLimit, "no child seen alive");
        if let Some(c) = sim
            .tasks
            .iter()
            .find(|t| t.name.starts_with("snap.") && t.state != TaskState::Exited)
        {
            break c.id;
        }
    };
    let c = &sim.tasks[child];
    assert_eq!(c.tgid, c.id, "a child is a process of its own");
    let parent_mm = sim.tasks[snap].mm.expect("the parent's mm");
    assert_eq!(sim.tasks[w].mm, Some(parent_mm), "w shares snap's mm");
    assert!(c.mm.is_some() && c.mm != Some(parent_mm));
    assert_eq!(sim.mms[parent_mm as usize].as_ref().unwrap().users, 2);
    assert_eq!(sim.run(50_000_000), RunEnd::Completed);
    assert!(sim.mms.iter().all(|m| m.is_none()));
}

#[test]
fn a_process_of_one_thread_runs_as_a_plain_task() {
    // `thread_group` on a single task changes nothing: same event hash.
    let one = |g: &str| {
        scenario(&format!(
            r#"
name = "one"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
[swap]
size = "256MiB"
[[tasks]]
name = "w"
program = "anon"
size = "80MiB"
passes = 2
{g}
"#
        ))
    };
    let a = run(&one(""));
    let b = run(&one("thread_group = \"solo\""));
    assert_eq!(a.event_hash, b.event_hash);
    assert_eq!(a.vmstat, b.vmstat);
}

/// examples/lfmr_threads.toml (docs/EXPERIMENTS.md, "Threads") at 32 MiB: seed 002's
/// batched flush gains more when the readers are threads of one process (every unmap
/// flushes all their CPUs) than when they are processes (the built-in).
#[test]
fn the_batched_flush_gains_more_with_threads() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/lfmr_threads.toml"
    );
    let text = std::fs::read_to_string(path).expect("the example");
    let set = ["machine.memory_per_node=32MiB"];
    let threads = parse_scenario(&text, path, &[set[0].to_string()]).expect("parses");
    assert!(threads.tasks.iter().all(|t| t.thread_group.is_some()));
    let procs = common::load_builtin("lru-file-mmap-read", &set);
    let elapsed = |sc: &Scenario, preset: &str| {
        let f = KernelEra::V4_2.features(preset).expect("preset");
        let r = common::run_sc(sc, f, false, 50_000_000);
        assert_eq!(r.end, RunEnd::Completed);
        (
            r.elapsed_ns as f64,
            r.vmstat["nr_tlb_remote_flush_received"],
        )
    };
    let (tv, tv_ipis) = elapsed(&threads, "vanilla");
    let (tp, _) = elapsed(&threads, "patched");
    let (pv, pv_ipis) = elapsed(&procs, "vanilla");
    let (pp, _) = elapsed(&procs, "patched");
    assert!(
        tv_ipis > 2 * pv_ipis,
        "IPIs: threads {tv_ipis}, processes {pv_ipis}"
    );
    assert!(
        tv / tp > 1.3 * (pv / pp),
        "vanilla/patched: threads {:.2}, processes {:.2}",
        tv / tp,
        pv / pp
    );
}

/// Opens `/data/a` and exits without closing it.
struct OpenAndLeave(u32);

impl Program for OpenAndLeave {
    fn next_op(&mut self, _last: &OpResult) -> Op {
        self.0 += 1;
        match self.0 {
            1 => Op::Open {
                path: "/data/a".into(),
                create: false,
                truncate: false,
            },
            _ => Op::Exit,
        }
    }
}

/// Sleeps 1 ms, reads 4 KiB from descriptor 0 (one it never opened), records the result
/// in its errors (as `read:<result>`) and exits.
struct ReadFd0(u32);

impl Program for ReadFd0 {
    fn next_op(&mut self, last: &OpResult) -> Op {
        self.0 += 1;
        match self.0 {
            1 => Op::Sleep { ns: 1_000_000 },
            2 => Op::Read {
                fd: 0,
                len: PAGE_SIZE,
            },
            _ => {
                assert!(
                    matches!(last, OpResult::Bytes(_) | OpResult::Err(_)),
                    "{last:?}"
                );
                Op::Exit
            }
        }
    }
}

#[test]
fn threads_share_their_descriptor_table() {
    let text = |threads: bool| {
        format!(
            r#"
name = "files"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"
[[files]]
path = "/data/a"
size = "1MiB"
[[tasks]]
name = "opener"
cpu = 0
program = "anon"
size = "4KiB"
{g}
[[tasks]]
name = "reader"
cpu = 1
program = "anon"
size = "4KiB"
{g}
"#,
            g = if threads {
                "thread_group = \"app\""
            } else {
                ""
            }
        )
    };
    let run = |threads: bool| {
        let sc = scenario(&text(threads));
        let mut sim =
            Sim::new(&sc, KernelEra::V6_18.features("patched").expect("preset")).expect("builds");
        let (o, r) = (task_id(&sim, "opener"), task_id(&sim, "reader"));
        sim.tasks[o].body = mmsim::sched::TaskBody::User(Box::new(OpenAndLeave(0)));
        sim.tasks[r].body = mmsim::sched::TaskBody::User(Box::new(ReadFd0(0)));
        sim.check = true;
        // Until the opener has exited: the file is still open if its table is shared.
        let mut steps = 0;
        while sim.tasks[o].state != TaskState::Exited {
            steps += 1;
            assert_eq!(sim.run(steps), RunEnd::StepLimit);
        }
        let ino = sim.fd_file(o, 0).map(|f| f.ino);
        assert_eq!(sim.run(1_000_000), RunEnd::Completed);
        let reader = &sim.tasks[r];
        (
            ino,
            reader.stats.read_bytes,
            reader.stats.errors.clone(),
            sim,
        )
    };
    // Threads: the reader's descriptor 0 is the opener's file, open until the last
    // thread exits.
    let (ino, read, errors, sim) = run(true);
    let ino = ino.expect("descriptor 0 outlives the thread that opened it");
    assert_eq!(read, PAGE_SIZE, "{errors:?}");
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(sim.inodes[ino as usize].as_ref().unwrap().open, 0);
    // Processes: each has its own table; the opener's exit closed its file.
    let (ino, read, errors, _) = run(false);
    assert_eq!(ino, None);
    assert_eq!(read, 0);
    assert_eq!(errors.get("EBADF"), Some(&1), "{errors:?}");
}
