//! Running a scenario end to end and collecting the report (the JSON document of `mmsim run`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::machine::cost::CostTable;
use crate::machine::ps_to_ns;
use crate::mm::vmstat::VmItem;
use crate::scenario::Scenario;
use crate::sim::{Features, RunEnd, Sim, SAMPLED};

/// Version of the JSON schema; `mmsim compare` refuses documents of other versions.
pub const SCHEMA_VERSION: u32 = 1;

/// CPU time summed over all CPUs.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CpuTime {
    /// User time, ns.
    pub user_ns: u64,
    /// System time, ns.
    pub system_ns: u64,
    /// Interrupt time, ns.
    pub interrupt_ns: u64,
    /// Idle time, ns.
    pub idle_ns: u64,
}

/// Per-task results.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TaskReport {
    /// Task name.
    pub name: String,
    /// CPU.
    pub cpu: usize,
    /// Kernel thread?
    pub kthread: bool,
    /// Start to exit, ns (0 if it did not exit).
    pub elapsed_ns: u64,
    /// Major faults.
    pub majflt: u64,
    /// Minor faults.
    pub minflt: u64,
    /// Voluntary context switches.
    pub nvcsw: u64,
    /// Syscalls.
    pub syscalls: u64,
    /// Pages reads found missing from the page cache.
    pub cache_misses: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Timed samples by label, ns.
    pub samples: BTreeMap<String, Vec<u64>>,
    /// Major faults inside each timed region, by label.
    pub region_majflt: BTreeMap<String, Vec<u64>>,
    /// Errors returned, by errno.
    pub errors: BTreeMap<String, u64>,
}

/// One profile row.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProfileRow {
    /// Kernel function.
    pub function: String,
    /// Time attributed, ns.
    pub ns: u64,
    /// Share of all busy (non-idle) CPU time, percent (the oprofile sample share).
    pub percent: f64,
}

/// Lock statistics.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LockStats {
    /// lru_lock acquisitions, all nodes.
    pub lru_lock_acquisitions: u64,
    /// lru_lock contended acquisitions.
    pub lru_lock_contended: u64,
}

/// The report of one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Schema version.
    pub schema_version: u32,
    /// Scenario name.
    pub scenario: String,
    /// Where it came from.
    pub source: String,
    /// Seed.
    pub seed: u64,
    /// Feature switches in force.
    pub features: BTreeMap<String, bool>,
    /// The machine.
    pub machine: crate::scenario::MachineSpec,
    /// The cost table.
    pub cost_profile: CostTable,
    /// How the run ended.
    pub end: RunEnd,
    /// Virtual time from start to the last user task's exit, ns.
    pub elapsed_ns: u64,
    /// CPU time.
    pub cpu_time: CpuTime,
    /// /proc/vmstat at the end.
    pub vmstat: BTreeMap<String, i64>,
    /// Cost by kernel function, ns.
    pub profile: BTreeMap<String, u64>,
    /// Profile rows sorted by cost with shares.
    pub profile_top: Vec<ProfileRow>,
    /// Per-task results.
    pub tasks: Vec<TaskReport>,
    /// Interrupts per CPU (all sources).
    pub interrupts: Vec<u64>,
    /// "TLB shootdowns" per CPU.
    pub tlb_shootdowns: Vec<u64>,
    /// Locks.
    pub locks: LockStats,
    /// Truncate: shadow entries cleared, tree_lock acquisitions for them and their ratio.
    pub truncate: crate::mm::truncate::TruncateReport,
    /// Time-series column names.
    pub series_columns: Vec<String>,
    /// Time series.
    pub series: Vec<crate::sim::Sample>,
    /// Content-oracle violations.
    pub oracle_violations: Vec<String>,
    /// OOM-killer reports (oom_kill events: who, why).
    pub oom: Vec<String>,
    /// Simulation steps.
    pub steps: u64,
    /// Running hash of the event stream (determinism check), hex.
    pub event_hash: String,
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Features.
    pub features: Features,
    /// Check invariants after every step.
    pub check: bool,
    /// Step limit.
    pub max_steps: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            features: Features::patched(),
            check: false,
            max_steps: u64::MAX,
        }
    }
}

/// Build and run a scenario; `progress` is called with the virtual time now and then.
pub fn run_scenario(
    sc: &Scenario,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<RunReport, String> {
    let mut sim = Sim::new(sc, opts.features.clone())?;
    sim.check = opts.check;
    let end = sim.run_with_progress(opts.max_steps, progress);
    Ok(report(&sim, sc, end))
}

/// Collect the report of a finished simulation.
pub fn report(sim: &Sim, sc: &Scenario, end: RunEnd) -> RunReport {
    let elapsed_ps = sim
        .tasks
        .iter()
        .filter(|t| !t.is_kthread())
        .filter_map(|t| t.stats.exit_ps)
        .max()
        .unwrap_or_else(|| sim.max_clock());
    let mut ct = CpuTime {
        user_ns: 0,
        system_ns: 0,
        interrupt_ns: 0,
        idle_ns: 0,
    };
    for c in &sim.cpus {
        ct.user_ns += ps_to_ns(c.user_ps);
        ct.system_ns += ps_to_ns(c.sys_ps);
        ct.interrupt_ns += ps_to_ns(c.irq_ps);
        // Idle up to the end of the run for CPUs that stopped early.
        ct.idle_ns += ps_to_ns(c.idle_ps + elapsed_ps.saturating_sub(c.clock_ps));
    }
    let busy = sim.profile.busy_total_ps().max(1);
    let profile_top = sim
        .profile
        .entries()
        .into_iter()
        .filter(|(f, _)| *f != crate::machine::profile::KFunc::Idle)
        .map(|(f, ps)| ProfileRow {
            function: f.name().to_string(),
            ns: ps_to_ns(ps),
            percent: ps as f64 * 100.0 / busy as f64,
        })
        .collect();
    let tasks = sim
        .tasks
        .iter()
        .map(|t| TaskReport {
            name: t.name.clone(),
            cpu: t.cpu,
            kthread: t.is_kthread(),
            elapsed_ns: t
                .stats
                .exit_ps
                .map(|e| ps_to_ns(e - t.stats.start_ps))
                .unwrap_or(0),
            majflt: t.stats.majflt,
            minflt: t.stats.minflt,
            nvcsw: t.stats.nvcsw,
            syscalls: t.stats.syscalls,
            cache_misses: t.stats.cache_misses,
            read_bytes: t.stats.read_bytes,
            write_bytes: t.stats.write_bytes,
            samples: t.stats.samples.clone(),
            region_majflt: t.stats.region_majflt.clone(),
            errors: t.stats.errors.clone(),
        })
        .collect();
    RunReport {
        schema_version: SCHEMA_VERSION,
        scenario: sc.name.clone(),
        source: sc.source.clone(),
        seed: sc.seed,
        features: sim.features.to_map(),
        machine: sc.machine.clone(),
        cost_profile: sim.costs.clone(),
        end,
        elapsed_ns: ps_to_ns(elapsed_ps),
        cpu_time: ct,
        vmstat: sim
            .vmstat
            .entries()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        profile: sim
            .profile
            .entries()
            .into_iter()
            .map(|(f, ps)| (f.name().to_string(), ps_to_ns(ps)))
            .collect(),
        profile_top,
        tasks,
        interrupts: sim.cpus.iter().map(|c| c.interrupts).collect(),
        tlb_shootdowns: sim.cpus.iter().map(|c| c.tlb_shootdowns).collect(),
        locks: LockStats {
            lru_lock_acquisitions: sim.nodes.iter().map(|n| n.lru_lock.acquisitions).sum(),
            lru_lock_contended: sim.nodes.iter().map(|n| n.lru_lock.contended).sum(),
        },
        truncate: sim.truncate_stats.report(),
        series_columns: SAMPLED
            .iter()
            .map(|i: &VmItem| i.name().to_string())
            .collect(),
        series: sim.samples.clone(),
        oracle_violations: sim.oracle_violations.clone(),
        oom: sim.oom_reports.clone(),
        steps: sim.steps,
        event_hash: format!("{:016x}", sim.event_hash),
    }
}
