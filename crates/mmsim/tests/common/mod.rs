//! Support shared by the integration tests: scenario text for small machines, building a
//! `Sim` from it, driving it by direct calls as the engine would (running a task on a CPU,
//! delivering queued IO completions and IPIs, touching and mapping pages), checks, and
//! end-to-end runs of scenarios.
//!
//! The test binary `tests/all` includes it (`mod common;` in `all/main.rs`), as can a test
//! file of its own; each module uses a part of it.
#![allow(dead_code)]

pub mod peak_rss;

use mmsim::machine::Event;
use mmsim::mm::check::check_all;
use mmsim::mm::memory::pte;
use mmsim::mm::node::LruList;
use mmsim::mm::page::{Pfn, PAGE_SIZE};
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmstat::VmItem;
use mmsim::run::{run_scenario, CgroupReport, RunOptions, RunReport, TaskReport};
use mmsim::scenario::{load_scenario, parse_scenario, Scenario};
use mmsim::sched::{TaskBody, TaskId, Wait};
use mmsim::sim::{Features, RunEnd, Sim};
use mmsim::workload::{OpResult, Program};

// ---------------------------------------------------------------------------------------
// Scenario text
// ---------------------------------------------------------------------------------------

/// The TOML of a one-node machine named `name`: `cpus` CPUs, `mem` of RAM, a `[swap]` of
/// `swap` on an SSD if given, an SSD `sda` of `disk`, a tmpfs on /tmp and a blockfs on `sda`
/// at `mount`. Files and tasks follow (`file_toml`, `dd_task_toml`).
pub fn machine_toml(
    name: &str,
    cpus: u32,
    mem: &str,
    swap: Option<&str>,
    disk: &str,
    mount: &str,
) -> String {
    let swap = swap.map_or(String::new(), |size| {
        format!("[swap]\nsize = \"{size}\"\npreset = \"ssd\"\n\n")
    });
    format!(
        r#"name = "{name}"

[machine]
nodes = 1
cpus_per_node = {cpus}
memory_per_node = "{mem}"

{swap}[[devices]]
name = "sda"
preset = "ssd"
size = "{disk}"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[filesystems]]
mount = "{mount}"
type = "blockfs"
device = "sda"
"#
    )
}

/// The scenario of a `UnitMachine` named `name`: 2 CPUs, `mem` of RAM, a tmpfs on /tmp, a
/// blockfs on /mnt, and the user task `t` on CPU 0 whose program is given by the
/// `program` lines (its program never runs unless a test runs the engine).
pub fn unit_machine_toml(name: &str, mem: &str, program: &str) -> String {
    machine_toml(name, 2, mem, None, "1GiB", "/mnt")
        + "\n[[tasks]]\nname = \"t\"\ncpu = 0\n"
        + program
}

/// A `[[files]]` table: a file of `bytes` at `path`, with data on the device or (`data`
/// false) sparse.
pub fn file_toml(path: &str, bytes: u64, data: bool) -> String {
    format!("\n[[files]]\npath = \"{path}\"\nsize = {bytes}\ndata = {data}\n")
}

/// A `[[tasks]]` table: a dummy dd task `name` on `cpu` writing 4 KiB to `path` (its program
/// never runs unless a test runs the engine).
pub fn dd_task_toml(name: &str, cpu: usize, path: &str) -> String {
    format!(
        "\n[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\nprogram = \"dd\"\npath = \"{path}\"\nsize = \"4KiB\"\n"
    )
}

// ---------------------------------------------------------------------------------------
// Building a machine
// ---------------------------------------------------------------------------------------

/// The machine of scenario `text` (`source` names it in parse errors).
pub fn build_sim(text: &str, source: &str, features: Features) -> Sim {
    let sc = parse_scenario(text, source, &[]).expect("scenario parses");
    Sim::new(&sc, features).expect("machine builds")
}

/// The machine of scenario `text` on `era`'s vanilla rules, with the scenario's
/// `[features]` and then `features` ("+x,-y", may be empty) on top.
pub fn build_sim_on(
    text: &str,
    source: &str,
    era: mmsim::kernel::KernelEra,
    features: &str,
) -> Sim {
    let sc = parse_scenario(text, source, &[]).expect("scenario parses");
    let f = mmsim::kernel::resolve_features(
        Some(era),
        None,
        "vanilla",
        &sc.features,
        (!features.is_empty()).then_some(features),
    )
    .expect("features resolve");
    Sim::new(&sc, f).expect("machine builds")
}

/// The task named `name`.
pub fn task_id(sim: &Sim, name: &str) -> TaskId {
    sim.tasks
        .iter()
        .position(|t| t.name == name)
        .unwrap_or_else(|| panic!("task {name}"))
}

/// A machine driven by direct calls in the context of its user task `t`, made current on
/// CPU 0 without a switch_mm (the file-path unit tests map nothing).
pub struct UnitMachine {
    pub sim: Sim,
    pub tid: TaskId,
}

impl UnitMachine {
    /// The machine of scenario `text`, which has a task `t`.
    pub fn new(text: &str, features: Features) -> Self {
        let mut sim = build_sim(text, "test", features);
        let tid = task_id(&sim, "t");
        sim.set_running(0, Some(tid));
        UnitMachine { sim, tid }
    }

    /// Slab pages of the VFS caches: once every file is gone, the empty slabs the caches
    /// keep (one per cache, memcg and node), the only frames not given back.
    pub fn free_slab_pages(&self) -> i64 {
        use mmsim::mm::vmstat::VmItem;
        self.sim.vmstat.get(VmItem::NrSlabReclaimable)
            + self.sim.vmstat.get(VmItem::NrSlabUnreclaimable)
    }

    /// The invariant checker passes.
    pub fn check(&self) {
        if let Err(e) = check_all(&self.sim) {
            panic!("checker: {e}");
        }
    }

    /// The page-cache entry of `ino` at `index`.
    pub fn entry(&self, ino: u32, index: u64) -> Entry {
        self.sim.inode(ino).mapping.tree.lookup(index)
    }

    /// The page cached for `ino` at `index` (panics on a shadow or a hole).
    pub fn page(&self, ino: u32, index: u64) -> Pfn {
        match self.entry(ino, index) {
            Entry::Page(p) => p,
            e => panic!("inode {ino} index {index}: {e:?}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Driving a machine as the engine would
// ---------------------------------------------------------------------------------------

/// Run `tid` on `cpu` as the engine would: switch_mm, then make it current.
pub fn run_on(sim: &mut Sim, cpu: usize, tid: TaskId) {
    sim.switch_mm(cpu, tid);
    sim.last_ran[cpu] = Some(tid);
    sim.set_running(cpu, Some(tid));
}

/// The mm of `tid`.
pub fn mm_of(sim: &Sim, tid: TaskId) -> u32 {
    sim.tasks[tid].mm.expect("the task has an mm")
}

/// Take every queued event, delivering IPIs if `ipis` and completing IO requests if `io`;
/// the rest stays queued. Returns (IPIs delivered, IO requests completed).
fn deliver_events(sim: &mut Sim, ipis: bool, io: bool) -> (usize, usize) {
    let mut rest = Vec::new();
    let (mut n_ipi, mut n_io) = (0, 0);
    while let Some((t, ev)) = sim.events.pop() {
        match ev {
            Event::Ipi(id) if ipis => {
                sim.ipi_arrive(id, t);
                n_ipi += 1;
            }
            Event::IoComplete(id) if io => {
                sim.io_complete(id, t);
                n_io += 1;
            }
            other => rest.push((t, other)),
        }
    }
    for (t, ev) in rest {
        sim.events.push(t, ev);
    }
    (n_ipi, n_io)
}

/// Deliver every pending IPI; IO and timers stay queued. Returns the number delivered.
pub fn deliver_ipis(sim: &mut Sim) -> usize {
    deliver_events(sim, true, false).0
}

/// Open `path` as the unit machine's task, completing the IO it waits for (an inode
/// read) and restarting until it opens.
pub fn open_restarting(m: &mut UnitMachine, path: &str) -> u32 {
    let tid = m.tid;
    let mut progress = 0;
    loop {
        match m.sim.sys_open(tid, path, false, false, &mut progress) {
            Ok(mmsim::workload::OpResult::Fd(fd)) => return fd,
            Err(_) => {
                complete_io(&mut m.sim);
            }
            other => panic!("open {path}: {other:?}"),
        }
    }
}

/// Complete every queued IO request; IPIs and timers stay queued. Returns the number.
pub fn complete_io(sim: &mut Sim) -> usize {
    deliver_events(sim, false, true).1
}

/// Complete every queued IO request and deliver every IPI; timers stay queued. Returns
/// the number of IO requests completed.
pub fn complete_io_and_ipis(sim: &mut Sim) -> usize {
    deliver_events(sim, true, true).1
}

/// Touch `pages` pages from `addr` (one access per page) as `tid` on `cpu`, resuming at
/// once the slices a Touch yields after (`Wait::Until`, at most 10,000 times): `Ok` when
/// done, or the first other wait a fault asks for.
pub fn touch_pages(
    sim: &mut Sim,
    cpu: usize,
    tid: TaskId,
    addr: u64,
    pages: u64,
    write: bool,
) -> Result<OpResult, Wait> {
    run_on(sim, cpu, tid);
    let mut progress = 0;
    for _ in 0..10_000 {
        match sim.sys_touch(
            tid,
            addr,
            pages * PAGE_SIZE,
            PAGE_SIZE,
            write,
            &mut progress,
        ) {
            Err(Wait::Until(_)) => continue,
            r => return r,
        }
    }
    panic!("touch never finished");
}

/// mmap(2) by `tid` of `len` bytes of `path` (`None`: anonymous memory) from byte
/// `offset`; panics unless it returns an address.
pub fn mmap_at(
    sim: &mut Sim,
    tid: TaskId,
    path: Option<&str>,
    len: u64,
    offset: u64,
    prot: u32,
    shared: bool,
) -> u64 {
    match sim.sys_mmap(tid, path, len, offset, prot, shared) {
        OpResult::Addr(a) => a,
        other => panic!("mmap {path:?}: {other:?}"),
    }
}

/// A vmstat counter.
pub fn vmstat(sim: &Sim, item: VmItem) -> i64 {
    sim.vmstat.get(item)
}

/// Is `pfn` on LRU list `lru` of its node?
pub fn on_lru_list(sim: &Sim, pfn: Pfn, lru: LruList) -> bool {
    let node = sim.mem[pfn as usize].node as usize;
    sim.lruvecs[node].lists[lru as usize]
        .iter()
        .any(|p| p == pfn)
}

/// The vanilla features, with the batched TLB flush if `batch`.
pub fn batch_tlb_features(batch: bool) -> Features {
    let mut f = Features::vanilla();
    f.batch_tlb_flush = batch;
    f
}

/// Every cached translation a CPU may use agrees with its page table: present, same page,
/// and no more rights (writable or dirty) than the PTE has. With TLB generations
/// (`tlb-gen`) a CPU's translations of an mm it is not running and its context is behind
/// on are not usable: the CPU flushes them before it runs the mm again (a lazy CPU skipped
/// by flushes, an mm kept under a PCID while another ran).
pub fn tlb_coherent(sim: &Sim) -> Result<(), String> {
    for (c, tlb) in sim.tlbs.iter().enumerate() {
        for e in tlb.entries() {
            let mm = e.mm - 1;
            let Some(m) = sim.mms.get(mm as usize).and_then(|m| m.as_ref()) else {
                return Err(format!("cpu {c} caches a translation of dead mm {mm}"));
            };
            let in_use = sim.cpu_active_mm[c] == Some(mm) && !sim.cpu_lazy[c];
            if sim.features.tlb_gen
                && !in_use
                && sim.cpu_tlbstate[c]
                    .ctxs
                    .iter()
                    .any(|&(x, gen)| x == e.mm && gen < m.tlb_gen)
            {
                continue;
            }
            let p = m.pgtable.get(e.vpn);
            if p & pte::PRESENT == 0 || pte::pfn(p) != e.pfn {
                return Err(format!(
                    "cpu {c}: stale entry mm {mm} vpn {:#x} -> pfn {} but the PTE is {p:#x}",
                    e.vpn, e.pfn
                ));
            }
            if e.write && p & pte::WRITE == 0 {
                return Err(format!("cpu {c}: writable entry for read-only PTE {p:#x}"));
            }
            if e.dirty && p & pte::DIRTY == 0 {
                return Err(format!("cpu {c}: dirty entry for a clean PTE {p:#x}"));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Runs through the engine
// ---------------------------------------------------------------------------------------

/// The built-in (or file) scenario `name` with `--set` overrides `sets`.
pub fn load_builtin(name: &str, sets: &[&str]) -> Scenario {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    load_scenario(name, &sets).expect("scenario loads")
}

/// Every built-in at small scale: (name, scenario) with 32 MiB a node where the built-in
/// takes the override (its files follow `ram`), as it is otherwise.
pub fn small_builtins() -> Vec<(&'static str, Scenario)> {
    mmsim::scenario::builtin_scenarios()
        .iter()
        .map(|(name, _, _)| {
            let sc = load_scenario(name, &["machine.memory_per_node=32MiB".to_string()])
                .or_else(|_| load_scenario(name, &[]))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            (*name, sc)
        })
        .collect()
}

/// Run `sc` (at most `max_steps` steps; the invariant checker after every step if `check`).
pub fn run_sc(sc: &Scenario, features: Features, check: bool, max_steps: u64) -> RunReport {
    let opts = RunOptions {
        features,
        check,
        max_steps,
        ..RunOptions::default()
    };
    run_scenario(sc, &opts, &mut |_| {}).expect("run")
}

/// Run `sc` on `era`'s patched rules (the checker after every step if `check`) and
/// assert that it completed with no content-oracle violation.
pub fn run_completed(
    sc: &Scenario,
    era: mmsim::kernel::KernelEra,
    check: bool,
    max_steps: u64,
) -> RunReport {
    let f = era.features("patched").expect("preset");
    let r = run_sc(sc, f, check, max_steps);
    assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{:?}", r.end);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    r
}

/// The tasks the OOM killer killed, in task order.
pub fn oom_killed(r: &RunReport) -> Vec<&str> {
    r.tasks
        .iter()
        .filter(|t| t.oom_killed)
        .map(|t| t.name.as_str())
        .collect()
}

/// The report of cgroup `name` (`/` is the root).
pub fn cgroup_report<'a>(r: &'a RunReport, name: &str) -> &'a CgroupReport {
    r.cgroups
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("cgroup {name} in the report"))
}

/// The report of task `name`.
pub fn task_report<'a>(r: &'a RunReport, name: &str) -> &'a TaskReport {
    r.tasks
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("task {name} in the report"))
}

/// Run scenario `text` (vanilla, the checker on) to completion within 1,000,000 steps with
/// task `task`'s program replaced by `program`; returns the machine and its report.
pub fn run_with_program(
    text: &str,
    source: &str,
    task: &str,
    program: Box<dyn Program>,
) -> (Sim, RunReport) {
    let sc = parse_scenario(text, source, &[]).expect("scenario parses");
    let mut sim = Sim::new(&sc, Features::vanilla()).expect("machine builds");
    let tid = task_id(&sim, task);
    sim.tasks[tid].body = TaskBody::User(program);
    sim.check = true;
    let end = sim.run(1_000_000);
    assert_eq!(end, RunEnd::Completed);
    let report = mmsim::run::report(&sim, &sc, end);
    (sim, report)
}
