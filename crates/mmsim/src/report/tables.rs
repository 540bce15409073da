//! The tables of `mmsim compare`: mmtests-style compare tables built from loaded run
//! documents ([`super::load::RunDoc`]), one column per run, the first run the baseline.
//!
//! - per task and sample label: the [`super::stats::summarize`] rows of the samples. Most
//!   samples are times (lower is better), shown in s, ms or µs (`us`) as the row name says:
//!   the largest unit in which the smallest sample is at least 1, so 2 decimals keep 3
//!   digits. Rates (bonnie's files/s, higher is better: the unit and direction each sample carries, `sample_units`):
//!   shown as recorded, with Hmean and without BestN% rows (see [`sample_unit`]);
//! - "Ops": whole-run and per-task elapsed time, interrupts, TLB shootdowns;
//! - "time": User / System / Interrupt / Elapsed, seconds (like mmtests' time table);
//! - vmstat: the end-of-run counters that differ between runs (no percentages);
//! - per memory cgroup of the baseline run (when the runs have `[[cgroups]]`): the
//!   memory.stat keys of [`CGROUP_STAT_EVENTS`] and [`CGROUP_STAT_SIZES`] that differ
//!   between runs, memory.peak, and memory.events, at the end of the run. Event counts
//!   (scans, faults, refaults, memory.events) are lower-is-better; sizes (MiB) have no
//!   direction and show their signed change ([`CompareRow::neutral`]);
//! - profile: the share of busy CPU time of the top kernel functions, percent.
//!
//! Runs of different kernel eras carry the kernel in their default column names
//! ([`default_names`]) and every run's kernel is in the header.

use std::collections::{BTreeMap, BTreeSet};

use super::compare::{render_counter_table, CompareRow, CompareTable};
use super::load::{CgroupView, ReplayTaskView, ReplayView, RunDoc};
use super::stats::Direction::{self, LowerIsBetter};
use crate::kernel::KernelEra;

/// How many of each run's top profile rows the profile table shows (their union).
pub const PROFILE_TOP: usize = 10;

/// Functions the profile table always shows when any run has them (the seed-000 pair).
pub const PROFILE_ALWAYS: &[&str] = &["mark_page_accessed", "init_page_accessed"];

/// The unit a table of times is shown in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Seconds.
    Seconds,
    /// Milliseconds.
    Millis,
    /// Microseconds.
    Micros,
}

impl TimeUnit {
    /// The largest unit in which `min_ns` (the smallest sample) is at least 1: seconds
    /// from 1 s, ms from 1 ms, µs below.
    pub fn for_min_ns(min_ns: u64) -> TimeUnit {
        if min_ns >= 1_000_000_000 {
            TimeUnit::Seconds
        } else if min_ns >= 1_000_000 {
            TimeUnit::Millis
        } else {
            TimeUnit::Micros
        }
    }

    /// The unit's short ASCII name, as shown in row names: `s`, `ms` or `us`.
    pub fn suffix(self) -> &'static str {
        match self {
            TimeUnit::Seconds => "s",
            TimeUnit::Millis => "ms",
            TimeUnit::Micros => "us",
        }
    }

    /// A time in ns expressed in this unit.
    pub fn convert(self, ns: u64) -> f64 {
        match self {
            TimeUnit::Seconds => ns as f64 / 1e9,
            TimeUnit::Millis => ns as f64 / 1e6,
            TimeUnit::Micros => ns as f64 / 1e3,
        }
    }
}

/// `n` with a comma every three digits: `1,274`.
pub fn thousands(n: u64) -> String {
    let d = n.to_string();
    let mut out = String::with_capacity(d.len() + d.len() / 3);
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the samples of a label measure and the unit a table shows them in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleUnit {
    /// Times (recorded in ns), lower is better, shown in this unit.
    Time(TimeUnit),
    /// Rates, higher is better, shown as recorded; the unit's name (`files/s`).
    Rate(&'static str),
}

impl SampleUnit {
    /// A recorded sample (ns for times) expressed in this unit.
    pub fn convert(self, raw: u64) -> f64 {
        match self {
            SampleUnit::Time(t) => t.convert(raw),
            SampleUnit::Rate(_) => raw as f64,
        }
    }

    /// The unit's short ASCII name: `s`, `ms`, `us`, or the rate's unit (`files/s`).
    pub fn suffix(self) -> &'static str {
        match self {
            SampleUnit::Time(t) => t.suffix(),
            SampleUnit::Rate(u) => u,
        }
    }

    /// Lower is better for times, higher for rates.
    pub fn direction(self) -> Direction {
        match self {
            SampleUnit::Time(_) => LowerIsBetter,
            SampleUnit::Rate(_) => Direction::HigherIsBetter,
        }
    }
}

/// The direction of a sample label as the programs declare it (`workload::ProgramDef`):
/// higher is better for rates, lower for times.
pub fn sample_direction(label: &str) -> Direction {
    if crate::workload::SampleUnit::of(label, None).higher_is_better {
        Direction::HigherIsBetter
    } else {
        LowerIsBetter
    }
}

/// Default column names for the runs: a feature preset's name (`vanilla`, `patched`) when
/// a run's features are exactly that preset on the run's kernel era, otherwise the
/// switches that differ between the runs (`+workingset`, `-accessed-init,+workingset`).
/// When the runs' kernels differ, each name ends in `@` and the run's kernel
/// (`vanilla@4.2`, `vanilla@6.18`), and a switch counts as differing only when some run
/// sets it other than its era does (the era rules that come with the kernel are not
/// listed). When two runs have the same features and kernel, the file stems instead;
/// names are made unique by a `-N` suffix as a last resort.
///
/// A run on the machine's own kernel (a host_replay report) is `host`; the simulated runs
/// are named among themselves.
pub fn default_names(docs: &[RunDoc]) -> Vec<String> {
    if !docs.iter().any(|d| d.host) {
        return sim_names(docs);
    }
    let sims: Vec<RunDoc> = docs.iter().filter(|d| !d.host).cloned().collect();
    let mut names = sim_names(&sims).into_iter();
    unique(
        docs.iter()
            .map(|d| {
                if d.host {
                    "host".to_string()
                } else {
                    names.next().expect("a name per simulated run")
                }
            })
            .collect(),
    )
}

/// [`default_names`] of simulated runs.
fn sim_names(docs: &[RunDoc]) -> Vec<String> {
    // The era whose rules a run started from: its kernel, the 4.2 rules for a document
    // from before eras, None for a version this mmsim does not know.
    let era = |d: &RunDoc| {
        if d.kernel.is_empty() {
            Some(KernelEra::V4_2)
        } else {
            d.era()
        }
    };
    let preset_maps = |d: &RunDoc| -> Vec<(&'static str, BTreeMap<String, bool>)> {
        ["vanilla", "patched"]
            .into_iter()
            .filter_map(|p| {
                let f = match era(d) {
                    Some(e) => e.features(p),
                    None => crate::sim::Features::preset(p),
                };
                f.map(|f| (p, f.to_map()))
            })
            .collect()
    };
    let kernels: BTreeSet<&str> = docs.iter().map(RunDoc::era_label).collect();
    let by_kernel = kernels.len() > 1;
    let with_kernel = |d: &RunDoc, name: String| {
        if by_kernel {
            format!("{}@{}", name, d.era_label())
        } else {
            name
        }
    };
    let distinct: BTreeSet<(&BTreeMap<String, bool>, &str)> =
        docs.iter().map(|d| (&d.features, d.era_label())).collect();
    let names: Vec<String> = if distinct.len() == docs.len() {
        let keys: BTreeSet<&String> = docs.iter().flat_map(|d| d.features.keys()).collect();
        // A switch's value (absent counts as off) and whether it departs from the run's era.
        let on = |d: &RunDoc, k: &str| d.features.get(k).copied().unwrap_or(false);
        let departs =
            |d: &RunDoc, k: &str| on(d, k) != era(d).and_then(|e| e.has(k)).unwrap_or(false);
        // Switches whose departure from the era is not the same in every run. On one era
        // this is exactly the switches whose value differs.
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| docs.iter().any(|d| departs(d, k) != departs(&docs[0], k)))
            .collect();
        docs.iter()
            .map(|d| {
                // A document written before a switch existed lacks its key: it matches a
                // preset when every switch it records has the preset's value.
                let is_preset = |m: &BTreeMap<String, bool>| {
                    !d.features.is_empty() && d.features.iter().all(|(k, v)| m.get(k) == Some(v))
                };
                if let Some((p, _)) = preset_maps(d).iter().find(|(_, m)| is_preset(m)) {
                    return with_kernel(d, p.to_string());
                }
                let parts: Vec<String> = differing
                    .iter()
                    .map(|k| format!("{}{}", if on(d, k) { '+' } else { '-' }, k))
                    .collect();
                if parts.is_empty() {
                    with_kernel(d, d.file_stem())
                } else {
                    with_kernel(d, parts.join(","))
                }
            })
            .collect()
    } else {
        docs.iter().map(|d| with_kernel(d, d.file_stem())).collect()
    };
    unique(names)
}

/// Makes names unique (and non-empty) by suffixing `-N` (1-based column number).
fn unique(names: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let dup: BTreeSet<String> = names
        .iter()
        .filter(|n| n.is_empty() || !seen.insert(n.as_str()))
        .cloned()
        .collect();
    names
        .into_iter()
        .enumerate()
        .map(|(i, n)| match (n.is_empty(), dup.contains(&n)) {
            (true, _) => format!("run-{}", i + 1),
            (false, true) => format!("{}-{}", n, i + 1),
            (false, false) => n,
        })
        .collect()
}

/// User task names over all runs, in order of first appearance.
pub fn task_names(docs: &[RunDoc]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for t in docs.iter().flat_map(RunDoc::user_tasks) {
        if !names.contains(&t.name) {
            names.push(t.name.clone());
        }
    }
    names
}

/// Sample labels of task `task` over all runs, sorted.
pub fn sample_labels(docs: &[RunDoc], task: &str) -> Vec<String> {
    let labels: BTreeSet<&String> = docs
        .iter()
        .filter_map(|d| d.task(task))
        .flat_map(|t| t.samples.keys())
        .collect();
    labels.into_iter().cloned().collect()
}

/// The samples (ns) of `task`/`label` in one run; empty if the run has none.
pub fn samples_ns<'a>(doc: &'a RunDoc, task: &str, label: &str) -> &'a [u64] {
    doc.task(task)
        .and_then(|t| t.samples.get(label))
        .map_or(&[], Vec::as_slice)
}

/// The unit for the samples of `task`/`label` over all runs: the unit the samples carry
/// (`sample_units` of the first run that has them, else the programs' declaration) — a
/// rate as recorded, or a time shown in the unit of [`TimeUnit::for_min_ns`] of the smallest
/// sample (seconds if there is none).
pub fn sample_unit(docs: &[RunDoc], task: &str, label: &str) -> SampleUnit {
    let carried = docs
        .iter()
        .find_map(|d| {
            d.task(task)
                .and_then(|t| t.sample_units.get(label))
                .cloned()
        })
        .unwrap_or_else(|| crate::workload::SampleUnit::of(label, None));
    if !carried.is_time() {
        // The unit's name as a program declares it (a static string), else a plain rate.
        let name = crate::workload::PROGRAMS
            .iter()
            .flat_map(|p| p.samples)
            .find_map(|s| match s.kind {
                crate::workload::SampleKind::Rate(u) if u == carried.unit => Some(u),
                _ => None,
            })
            .unwrap_or("per s");
        return SampleUnit::Rate(name);
    }
    let min = docs
        .iter()
        .flat_map(|d| samples_ns(d, task, label).iter().copied())
        .min()
        .unwrap_or(u64::MAX);
    SampleUnit::Time(TimeUnit::for_min_ns(min))
}

/// One summary table per user task and sample label (times lower is better, rates higher;
/// see [`sample_unit`]).
pub fn sample_tables(docs: &[RunDoc], names: &[String]) -> Vec<CompareTable> {
    let mut tables = Vec::new();
    for task in task_names(docs) {
        for label in sample_labels(docs, &task) {
            let unit = sample_unit(docs, &task, &label);
            let columns: Vec<(String, Vec<f64>)> = docs
                .iter()
                .zip(names)
                .map(|(d, n)| {
                    let s = samples_ns(d, &task, &label);
                    (n.clone(), s.iter().map(|&ns| unit.convert(ns)).collect())
                })
                .collect();
            let counts: Vec<String> = columns.iter().map(|(_, s)| s.len().to_string()).collect();
            let (what, better) = match unit {
                SampleUnit::Time(_) => ("time per sample", "lower is better"),
                SampleUnit::Rate(_) => ("rate per sample", "higher is better"),
            };
            let title = format!(
                "{} {}: {}, {} (n = {}; {})",
                task,
                label,
                what,
                unit.suffix(),
                counts.join("/"),
                better
            );
            let name = format!("{} {} ({})", task, label, unit.suffix());
            tables.push(CompareTable::from_samples(
                &title,
                &name,
                unit.direction(),
                &columns,
            ));
        }
    }
    tables
}

/// A row of times (ns; `None` where undefined) in the unit [`TimeUnit::for_min_ns`] picks
/// for its smallest value, named `"{name} ({unit})"`.
fn time_row(stat: &str, name: &str, ns: &[Option<u64>]) -> CompareRow {
    let unit = TimeUnit::for_min_ns(ns.iter().flatten().copied().min().unwrap_or(u64::MAX));
    let values = ns.iter().map(|v| v.map(|v| unit.convert(v))).collect();
    let name = format!("{} ({})", name, unit.suffix());
    CompareRow::new(stat, &name, LowerIsBetter, values)
}

/// The "Ops" table: elapsed time of the run and of each user task (each row in the unit
/// that suits it, see [`TimeUnit::for_min_ns`]), total interrupts and TLB shootdowns. A
/// task absent from a run, or that did not exit, shows `-`.
pub fn ops_table(docs: &[RunDoc], names: &[String]) -> CompareTable {
    let mut t = CompareTable::new("Ops", names.to_vec());
    let elapsed: Vec<_> = docs.iter().map(|d| Some(d.elapsed_ns)).collect();
    t.rows.push(time_row("Ops", "elapsed", &elapsed));
    for task in task_names(docs) {
        let ns: Vec<_> = docs
            .iter()
            .map(|d| d.task(&task).map(|t| t.elapsed_ns).filter(|ns| *ns > 0))
            .collect();
        t.rows
            .push(time_row("Ops", &format!("{task} elapsed"), &ns));
    }
    let count = |name: &str, f: fn(&RunDoc) -> &[u64]| {
        let values = docs
            .iter()
            .map(|d| (!d.host).then(|| f(d).iter().sum::<u64>() as f64))
            .collect();
        CompareRow::new("Ops", name, LowerIsBetter, values)
    };
    t.rows.push(count("interrupts", |d| &d.interrupts));
    t.rows.push(count("tlb-shootdowns", |d| &d.tlb_shootdowns));
    t
}

/// The "time" table: User, System, Interrupt (CPU time summed over all CPUs) and Elapsed
/// (virtual wall time) — in seconds like mmtests' table when every run's elapsed time is at
/// least 1 s, otherwise in the unit [`TimeUnit::for_min_ns`] picks for the shortest
/// elapsed time; the title names the unit.
pub fn time_table(docs: &[RunDoc], names: &[String]) -> CompareTable {
    let shortest = docs.iter().map(|d| d.elapsed_ns).min().unwrap_or(u64::MAX);
    let unit = TimeUnit::for_min_ns(shortest);
    let mut t = CompareTable::new(&format!("time ({})", unit.suffix()), names.to_vec());
    type Field = fn(&RunDoc) -> u64;
    let rows: [(&str, Field); 4] = [
        ("User", |d| d.cpu_time.user_ns),
        ("System", |d| d.cpu_time.system_ns),
        ("Interrupt", |d| d.cpu_time.interrupt_ns),
        ("Elapsed", |d| d.elapsed_ns),
    ];
    for (stat, f) in rows {
        // A run on the machine's own kernel has its elapsed (wall) time only.
        let values = docs
            .iter()
            .map(|d| (!d.host || stat == "Elapsed").then(|| unit.convert(f(d))))
            .collect();
        t.rows
            .push(CompareRow::new(stat, "", LowerIsBetter, values));
    }
    t
}

/// The vmstat counters (end of run) whose values are not the same in every run, by name;
/// a counter absent from a run counts as 0, a negative gauge is shown as 0.
///
/// Beside a run on the machine's own kernel, whose counters are deltas over its replay,
/// the gauges (`nr_*`) are left out.
pub fn vmstat_differences(docs: &[RunDoc]) -> Vec<(String, Vec<u64>)> {
    let keys: BTreeSet<&String> = docs.iter().flat_map(|d| d.vmstat.keys()).collect();
    let host = docs.iter().any(|d| d.host);
    keys.into_iter()
        .filter(|k| !(host && k.starts_with("nr_")))
        .filter_map(|k| {
            let v: Vec<i64> = docs
                .iter()
                .map(|d| d.vmstat.get(k).copied().unwrap_or(0))
                .collect();
            let differs = v.iter().any(|x| *x != v[0]);
            differs.then(|| {
                let v = v.iter().map(|x| u64::try_from(*x).unwrap_or(0)).collect();
                (k.clone(), v)
            })
        })
        .collect()
}

/// The per-device IO counters (requests, pages, seeks, busy time in ms) whose values are
/// not the same in every run, as `<device> <counter>`; a device absent from a run counts
/// as 0.
pub fn device_differences(docs: &[RunDoc]) -> Vec<(String, Vec<u64>)> {
    let names: BTreeSet<&String> = docs
        .iter()
        .flat_map(|d| d.devices.iter().map(|x| &x.name))
        .collect();
    type Field = (&'static str, fn(&super::load::DeviceView) -> u64);
    let fields: [Field; 6] = [
        ("reads", |x| x.reads),
        ("pages_read", |x| x.pages_read),
        ("writes", |x| x.writes),
        ("pages_written", |x| x.pages_written),
        ("seeks", |x| x.seeks),
        ("busy_ms", |x| x.busy_ns / 1_000_000),
    ];
    let mut out = Vec::new();
    for name in names {
        for (field, get) in fields {
            let v: Vec<u64> = docs
                .iter()
                .map(|d| d.devices.iter().find(|x| x.name == *name).map_or(0, get))
                .collect();
            if v.iter().any(|x| *x != v[0]) {
                out.push((format!("{name} {field}"), v));
            }
        }
    }
    out
}

/// The zram swap device's statistics (the pool's peak, the data stored at
/// the end in KiB, pages written and read, failed writes) whose values are not the same in
/// every run, as `zram <stat>`; a run without zram counts 0.
pub fn zram_differences(docs: &[RunDoc]) -> Vec<(String, Vec<u64>)> {
    let fields: [SectionField<super::load::ZramView>; 6] = [
        ("mem_used_max_kib", |z| z.mem_used_max / 1024),
        ("orig_data_size_kib", |z| z.orig_data_size / 1024),
        ("compr_data_size_kib", |z| z.compr_data_size / 1024),
        ("num_writes", |z| z.num_writes),
        ("num_reads", |z| z.num_reads),
        ("failed_writes", |z| z.failed_writes),
    ];
    section_differences(docs, "zram", |d| d.zram.as_ref(), &fields)
}

/// zswap's statistics (the pool's peak, the data stored at the end in KiB, the debugfs
/// counters) whose values are not the same in every run, as `zswap <stat>`; a run
/// without zswap counts 0.
pub fn zswap_differences(docs: &[RunDoc]) -> Vec<(String, Vec<u64>)> {
    let fields: [SectionField<super::load::ZswapView>; 7] = [
        ("pool_max_size_kib", |z| z.pool_max_size / 1024),
        ("zswapped_kib", |z| z.zswapped / 1024),
        ("pool_limit_hit", |z| z.pool_limit_hit),
        ("written_back_pages", |z| z.written_back_pages),
        ("reject_reclaim_fail", |z| z.reject_reclaim_fail),
        ("reject_alloc_fail", |z| z.reject_alloc_fail),
        ("reject_memcg_limit", |z| z.reject_memcg_limit),
    ];
    section_differences(docs, "zswap", |d| d.zswap.as_ref(), &fields)
}

/// A named field of a run document's section.
type SectionField<T> = (&'static str, fn(&T) -> u64);

/// The `fields` of a run document's section `name` (`section`: None counts 0) whose
/// values differ between the runs, as `name <field>`.
fn section_differences<T>(
    docs: &[RunDoc],
    name: &str,
    section: fn(&RunDoc) -> Option<&T>,
    fields: &[SectionField<T>],
) -> Vec<(String, Vec<u64>)> {
    let mut out = Vec::new();
    for (field, get) in fields {
        let v: Vec<u64> = docs.iter().map(|d| section(d).map_or(0, get)).collect();
        if v.iter().any(|x| *x != v[0]) {
            out.push((format!("{name} {field}"), v));
        }
    }
    out
}

/// The pressure stall totals (ms) that differ between runs: the machine's
/// (/proc/pressure, named `/proc`) and each cgroup's, memory, io and cpu, some and full,
/// and irq full. A
/// run without PSI (an era before 4.20) counts 0.
pub fn pressure_differences(docs: &[RunDoc]) -> Vec<(String, Vec<u64>)> {
    use super::load::PressureView;
    let mut scopes: Vec<String> = vec!["/proc".to_string()];
    for d in docs {
        for c in d.cgroups.iter().skip(1) {
            if !scopes.contains(&c.name) {
                scopes.push(c.name.clone());
            }
        }
    }
    let view = |d: &RunDoc, scope: &str| -> Option<PressureView> {
        if scope == "/proc" {
            d.pressure
        } else {
            d.cgroups
                .iter()
                .find(|c| c.name == scope)
                .and_then(|c| c.pressure)
        }
    };
    type Field = (&'static str, fn(&PressureView) -> u64);
    let fields: [Field; 7] = [
        ("memory some", |p| p.memory.some.total_us),
        ("memory full", |p| p.memory.full.total_us),
        ("io some", |p| p.io.some.total_us),
        ("io full", |p| p.io.full.total_us),
        ("cpu some", |p| p.cpu.some.total_us),
        ("cpu full", |p| p.cpu.full.total_us),
        ("irq full", |p| p.irq.full.total_us),
    ];
    let mut out = Vec::new();
    for scope in &scopes {
        for (field, get) in fields {
            let v: Vec<u64> = docs
                .iter()
                .map(|d| view(d, scope).map_or(0, |p| get(&p) / 1000))
                .collect();
            if v.iter().any(|x| *x != v[0]) {
                out.push((format!("{scope} {field}"), v));
            }
        }
    }
    out
}

/// The profile table: share of busy CPU time (percent, lower is better) of the union of
/// each run's top [`PROFILE_TOP`] functions plus [`PROFILE_ALWAYS`], ordered by the
/// largest share in any run. A function a run never entered has share 0. Shares are
/// rounded to the 0.01 % the table shows, so that a change is computed from the values
/// shown beside it (a share shown as 0.00 in both runs is no change, not -50 %).
pub fn profile_table(docs: &[RunDoc], names: &[String]) -> CompareTable {
    let mut t = CompareTable::new("profile (% of busy CPU time)", names.to_vec());
    let share = |d: &RunDoc, f: &str| {
        d.profile_top
            .iter()
            .find(|r| r.function == f)
            .map_or(0.0, |r| (r.percent * 100.0).round() / 100.0)
    };
    let mut funcs: Vec<String> = Vec::new();
    let tops = docs.iter().flat_map(|d| {
        let mut rows: Vec<_> = d.profile_top.iter().collect();
        rows.sort_by(|a, b| b.percent.total_cmp(&a.percent));
        rows.into_iter()
            .take(PROFILE_TOP)
            .map(|r| r.function.clone())
    });
    let always = PROFILE_ALWAYS
        .iter()
        .filter(|f| {
            docs.iter()
                .any(|d| d.profile_top.iter().any(|r| r.function == **f))
        })
        .map(|f| f.to_string());
    for f in tops.chain(always) {
        if !funcs.contains(&f) {
            funcs.push(f);
        }
    }
    let largest = |f: &str| docs.iter().map(|d| share(d, f)).fold(0.0f64, f64::max);
    funcs.sort_by(|a, b| largest(b).total_cmp(&largest(a)).then(a.cmp(b)));
    for f in funcs {
        let values = docs
            .iter()
            .map(|d| (!d.host).then(|| share(d, &f)))
            .collect();
        t.rows
            .push(CompareRow::new("Share", &f, LowerIsBetter, values));
    }
    t
}

/// The replay table (when a run has a replay section): per replay task its page, byte
/// and object miss ratios (in %), the pages its accesses read in and the read-ahead pages
/// never hit (fewer is better); then the runs' IO pages read and written and refaults
/// (fewer is better), refaults that activated their page, pgactivate and the largest page
/// cache (no direction). A figure a run lacks (a host report's byte miss ratio) shows `-`.
pub fn replay_table(docs: &[RunDoc], names: &[String]) -> Option<CompareTable> {
    if docs.iter().all(|d| d.replay.is_none()) {
        return None;
    }
    let mut t = CompareTable::new(
        "replay (miss ratios in %; fewer misses, pages read and refaults are better)",
        names.to_vec(),
    );
    let mut tasks: Vec<&str> = Vec::new();
    for d in docs.iter().filter_map(|d| d.replay.as_ref()) {
        for r in &d.tasks {
            if !tasks.contains(&r.task.as_str()) {
                tasks.push(&r.task);
            }
        }
    }
    type TaskField = fn(&ReplayTaskView) -> Option<f64>;
    let task_rows: [(&str, TaskField); 5] = [
        ("page miss %", |r| Some(r.page_miss_ratio * 100.0)),
        ("byte miss %", |r| r.byte_miss_ratio.map(|x| x * 100.0)),
        ("object miss %", |r| r.request_miss_ratio.map(|x| x * 100.0)),
        ("pages read in", |r| r.pages_read_in.map(|x| x as f64)),
        ("readahead wasted", |r| r.readahead_wasted.map(|x| x as f64)),
    ];
    for task in tasks {
        for (what, f) in task_rows {
            let values = docs
                .iter()
                .map(|d| {
                    d.replay
                        .as_ref()
                        .and_then(|v| v.tasks.iter().find(|r| r.task == task))
                        .and_then(f)
                })
                .collect();
            t.rows.push(CompareRow::new(
                "Replay",
                &format!("{task} {what}"),
                LowerIsBetter,
                values,
            ));
        }
    }
    // The runs' figures: (name, fewer is better (else no direction), value).
    type RunField = fn(&ReplayView) -> Option<f64>;
    let run_rows: [(&str, bool, RunField); 6] = [
        ("IO pages read", true, |v| Some(v.io_pages_read as f64)),
        ("IO pages written", true, |v| {
            Some(v.io_pages_written as f64)
        }),
        ("refaults", true, |v| Some(v.refaults as f64)),
        ("refaults activated", false, |v| {
            Some(v.refault_activations as f64)
        }),
        ("pgactivate", false, |v| Some(v.activations as f64)),
        ("page cache max (MiB)", false, |v| {
            v.cache_pages_max
                .map(|p| mib(p * crate::mm::page::PAGE_SIZE))
        }),
    ];
    for (name, fewer_better, f) in run_rows {
        let values = docs.iter().map(|d| d.replay.as_ref().and_then(f)).collect();
        t.rows.push(if fewer_better {
            CompareRow::new("Replay", name, LowerIsBetter, values)
        } else {
            CompareRow::neutral("Replay", name, values)
        });
    }
    Some(t)
}

/// The simulator's speed on the replays (requests per host second), when a simulated run
/// has one: not a simulated result (two runs with the same results differ here).
pub fn replay_speed_table(docs: &[RunDoc], names: &[String]) -> Option<CompareTable> {
    let speed = |d: &RunDoc| {
        d.replay
            .as_ref()
            .map(|v| v.host_requests_per_s)
            .filter(|s| *s > 0.0 && !d.host)
    };
    if docs.iter().all(|d| speed(d).is_none()) {
        return None;
    }
    let mut t = CompareTable::new(
        "replay speed (requests per host second; the simulator's, not a simulated result)",
        names.to_vec(),
    );
    t.rows.push(CompareRow::new(
        "Host",
        "requests/s",
        Direction::HigherIsBetter,
        docs.iter().map(speed).collect(),
    ));
    Some(t)
}

/// memory.stat event counters a cgroup table shows when they differ between runs, in
/// this order; fewer is better.
pub const CGROUP_STAT_EVENTS: &[&str] = &[
    "pgscan",
    "pgsteal",
    "pgactivate",
    "pgdeactivate",
    "pgrefill",
    "workingset_refault_file",
    "workingset_refault_anon",
    "workingset_activate_file",
    "workingset_activate_anon",
    "workingset_restore_file",
    "workingset_restore_anon",
    "pgfault",
    "pgmajfault",
];

/// memory.stat sizes (bytes, shown in MiB) a cgroup table shows when they differ between
/// runs, in this order; no direction.
pub const CGROUP_STAT_SIZES: &[&str] = &[
    "file",
    "anon",
    "shmem",
    "unevictable",
    "active_file",
    "inactive_file",
    "file_dirty",
    "file_writeback",
];

/// Bytes in MiB.
fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

/// A limit for a title: `64 MiB`, `1.50 MiB`, or `max`.
fn fmt_limit(bytes: Option<u64>) -> String {
    match bytes {
        None => "max".to_string(),
        Some(b) if b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        Some(b) => format!("{:.2} MiB", mib(b)),
    }
}

/// The title of the table of cgroup `cg`: its name and the limits it set (as the
/// baseline run had them).
fn cgroup_title(cg: &CgroupView) -> String {
    let mut limits = Vec::new();
    if cg.memory_max.is_some() {
        limits.push(format!("memory.max {}", fmt_limit(cg.memory_max)));
    }
    if cg.memory_high.is_some() {
        limits.push(format!("memory.high {}", fmt_limit(cg.memory_high)));
    }
    if cg.memory_low > 0 {
        limits.push(format!("memory.low {}", fmt_limit(Some(cg.memory_low))));
    }
    if cg.memory_min > 0 {
        limits.push(format!("memory.min {}", fmt_limit(Some(cg.memory_min))));
    }
    if cg.swap_max.is_some() {
        limits.push(format!("memory.swap.max {}", fmt_limit(cg.swap_max)));
    }
    let what = if cg.is_root() {
        "cgroup / (root)".to_string()
    } else if limits.is_empty() {
        format!("cgroup {} (no limits)", cg.name)
    } else {
        format!("cgroup {} ({})", cg.name, limits.join(", "))
    };
    format!(
        "{what}: end of run, hierarchical; fewer events are better, sizes in MiB show a \
         signed change (+ larger), neither better nor worse"
    )
}

/// One table per memory cgroup of the baseline run, in its order (the root first): the
/// memory.stat keys of [`CGROUP_STAT_EVENTS`] (lower is better) and [`CGROUP_STAT_SIZES`]
/// (MiB, no direction) whose values are not the same in every run, then memory.peak
/// (MiB, no direction) and the six memory.events counters (lower is better). A key
/// absent from a run's memory.stat counts as 0; a run without the cgroup shows `-`.
pub fn cgroup_tables(docs: &[RunDoc], names: &[String]) -> Vec<CompareTable> {
    let Some(base) = docs.first() else {
        return Vec::new();
    };
    base.cgroups
        .iter()
        .map(|cg| {
            let mut t = CompareTable::new(&cgroup_title(cg), names.to_vec());
            let views: Vec<Option<&CgroupView>> = docs.iter().map(|d| d.cgroup(&cg.name)).collect();
            // A key absent from a simulated run's memory.stat is 0; from a real kernel's
            // (cgroup v1 has no pgscan, for one), not known.
            let stat = |key: &str| -> Vec<Option<i64>> {
                views
                    .iter()
                    .zip(docs)
                    .map(|(c, d)| {
                        c.and_then(|c| match c.stat.get(key) {
                            Some(v) => Some(*v),
                            None if d.host => None,
                            None => Some(0),
                        })
                    })
                    .collect()
            };
            let differs = |v: &[Option<i64>]| v.iter().any(|x| *x != v[0]);
            for key in CGROUP_STAT_EVENTS {
                let v = stat(key);
                if differs(&v) {
                    let values = v.iter().map(|x| x.map(|x| x as f64)).collect();
                    t.rows
                        .push(CompareRow::new("memory.stat", key, LowerIsBetter, values));
                }
            }
            for key in CGROUP_STAT_SIZES {
                let v = stat(key);
                if differs(&v) {
                    let values = v
                        .iter()
                        .map(|x| x.map(|x| mib(u64::try_from(x).unwrap_or(0))))
                        .collect();
                    let name = format!("{key} (MiB)");
                    t.rows
                        .push(CompareRow::neutral("memory.stat", &name, values));
                }
            }
            // cgroup v1's own files, when a run has them (a host report's too).
            if views.iter().flatten().any(|c| c.v1.is_some()) {
                let v1 = |f: &dyn Fn(&crate::report::load::CgroupV1View) -> f64| {
                    views
                        .iter()
                        .map(|c| c.and_then(|c| c.v1.as_ref()).map(f))
                        .collect::<Vec<_>>()
                };
                t.rows.push(CompareRow::new(
                    "memory.failcnt",
                    "",
                    LowerIsBetter,
                    v1(&|v| v.failcnt as f64),
                ));
                t.rows.push(CompareRow::neutral(
                    "memory.max_usage_in_bytes",
                    "(MiB)",
                    v1(&|v| mib(v.max_usage_in_bytes)),
                ));
                // memory.memsw.max_usage_in_bytes, when some side has it (not the root's).
                let memsw: Vec<Option<f64>> = views
                    .iter()
                    .map(|c| {
                        c.and_then(|c| c.v1.as_ref())
                            .and_then(|v| v.memsw_max_usage_in_bytes)
                            .map(mib)
                    })
                    .collect();
                if memsw.iter().any(Option::is_some) {
                    t.rows.push(CompareRow::neutral(
                        "memory.memsw.max_usage_in_bytes",
                        "(MiB)",
                        memsw,
                    ));
                }
                for key in ["pgpgin", "pgpgout"] {
                    let values = v1(&|v| v.stat.get(key).copied().unwrap_or(0) as f64);
                    t.rows
                        .push(CompareRow::neutral("v1 memory.stat", key, values));
                }
            }
            // A host report has memory.stat and the usage only.
            let views: Vec<Option<&CgroupView>> = docs
                .iter()
                .zip(&views)
                .map(|(d, c)| c.filter(|_| !d.host))
                .collect();
            let peak = views.iter().map(|c| c.map(|c| mib(c.peak))).collect();
            t.rows
                .push(CompareRow::neutral("memory.peak", "(MiB)", peak));
            for (i, (key, _)) in cg.events.entries().iter().enumerate() {
                let values = views
                    .iter()
                    .map(|c| c.map(|c| c.events.entries()[i].1 as f64))
                    .collect();
                t.rows
                    .push(CompareRow::new("memory.events", key, LowerIsBetter, values));
            }
            // Swap: only when some run swapped from the cgroup or was refused.
            let swapped = |c: &CgroupView| {
                c.swap_peak > 0 || c.swap_events.entries().iter().any(|(_, n)| *n > 0)
            };
            if views.iter().flatten().any(|c| swapped(c)) {
                let peak = views.iter().map(|c| c.map(|c| mib(c.swap_peak))).collect();
                t.rows
                    .push(CompareRow::neutral("memory.swap.peak", "(MiB)", peak));
                for (i, (key, _)) in cg.swap_events.entries().iter().enumerate() {
                    let values = views
                        .iter()
                        .map(|c| c.map(|c| c.swap_events.entries()[i].1 as f64))
                        .collect();
                    t.rows.push(CompareRow::new(
                        "memory.swap.events",
                        key,
                        LowerIsBetter,
                        values,
                    ));
                }
            }
            t
        })
        .collect()
}

/// The kernel of a run as the header shows it: `kernel 6.18`, or for a document from
/// before eras `kernel unknown (4.2 rules)`.
fn kernel_desc(d: &RunDoc) -> String {
    if d.kernel.is_empty() {
        format!("kernel unknown ({} rules)", d.era_label())
    } else {
        format!("kernel {}", d.kernel)
    }
}

/// One line per run: name, file, kernel, features on, machine, seed, cgroups, the `[vm]`
/// sysctls set, and how it ended if not done.
pub fn header(docs: &[RunDoc], names: &[String]) -> String {
    let mut scenarios: Vec<&str> = Vec::new();
    for d in docs {
        if !scenarios.contains(&d.scenario.as_str()) {
            scenarios.push(&d.scenario);
        }
    }
    let mut out = format!(
        "mmsim compare: scenario {}, {} runs (first is the baseline; positive % is better)\n",
        scenarios.join(" / "),
        docs.len()
    );
    let nw = names.iter().map(String::len).max().unwrap_or(0);
    // The device models, shown when the runs' differ (a `--set devices.…` override); a
    // document from before the models were reported has none to show.
    let models: Vec<String> = docs
        .iter()
        .map(|d| {
            let m: Vec<String> = d.devices.iter().map(|x| x.model()).collect();
            m.join("; ")
        })
        .collect();
    let models_differ = models.iter().any(|m| *m != models[0])
        && docs
            .iter()
            .all(|d| d.devices.iter().all(|x| !x.preset.is_empty()));
    for ((d, n), model) in docs.iter().zip(names).zip(&models) {
        if d.host {
            out.push_str(&format!(
                "  {:<nw$}  {}  Linux {}: examples/host_replay in a memory cgroup, vmstat \
                 counters over the replay\n",
                n,
                d.path.display(),
                d.kernel
            ));
            continue;
        }
        let on: Vec<&str> = d
            .features
            .iter()
            .filter(|(_, v)| **v)
            .map(|(k, _)| k.as_str())
            .collect();
        let on = if on.is_empty() {
            "(none)".to_string()
        } else {
            on.join(",")
        };
        out.push_str(&format!(
            "  {:<nw$}  {}  {}  [{}]  {}x{} CPUs, {} MiB/node, seed {}",
            n,
            d.path.display(),
            kernel_desc(d),
            on,
            d.machine.nodes,
            d.machine.cpus_per_node,
            d.machine.memory_per_node_bytes >> 20,
            d.seed
        ));
        let cgroups: Vec<&str> = d
            .cgroups
            .iter()
            .filter(|c| !c.is_root())
            .map(|c| c.name.as_str())
            .collect();
        if !cgroups.is_empty() {
            out.push_str(&format!(", cgroups {}", cgroups.join(",")));
        }
        let vm = d.vm.changed();
        if !vm.is_empty() {
            out.push_str(&format!(", vm {}", vm.join(", ")));
        }
        if !d.completed() {
            out.push_str(&format!("  (did not complete: {})", d.end));
        }
        out.push('\n');
        if models_differ {
            out.push_str(&format!("  {:<nw$}  devices: {}\n", "", model));
        }
    }
    out
}

/// Whether two runs produced the same results: how they ended, elapsed and CPU time,
/// vmstat, the profile, every task's results and samples, interrupts, TLB shootdowns, the
/// time series and the cgroups. What they were asked to run (features, kernel, file) may
/// differ: identical results then say that the difference changed nothing.
pub fn same_results(a: &RunDoc, b: &RunDoc) -> bool {
    a.end == b.end
        && a.elapsed_ns == b.elapsed_ns
        && a.cpu_time == b.cpu_time
        && a.vmstat == b.vmstat
        && a.profile_top == b.profile_top
        && a.tasks == b.tasks
        && a.interrupts == b.interrupts
        && a.tlb_shootdowns == b.tlb_shootdowns
        && a.series_columns == b.series_columns
        && a.series == b.series
        && a.cgroups == b.cgroups
        && a.host == b.host
        && match (&a.replay, &b.replay) {
            (Some(x), Some(y)) => x.same_results(y),
            (x, y) => x.is_none() && y.is_none(),
        }
}

/// A line saying which runs have the same results as the baseline ([`same_results`]),
/// or None when none has.
pub fn identical_note(docs: &[RunDoc], names: &[String]) -> Option<String> {
    let base = docs.first()?;
    let same: Vec<&str> = docs
        .iter()
        .zip(names)
        .skip(1)
        .filter(|(d, _)| same_results(base, d))
        .map(|(_, n)| n.as_str())
        .collect();
    let what = "every sample, time, counter, profile share and time-series value";
    match same.len() {
        0 => None,
        n if n + 1 == docs.len() && n == 1 => Some(format!(
            "identical: the two runs have the same results ({what}); every change below is 0"
        )),
        n if n + 1 == docs.len() => Some(format!(
            "identical: all {} runs have the same results ({what}); every change below is 0",
            docs.len()
        )),
        _ => Some(format!(
            "identical to the baseline {} ({what}): {}",
            names.first().map_or("", String::as_str),
            same.join(", ")
        )),
    }
}

/// The simulated runs among `docs` (not a host report) with their names, and what a
/// table of them only says in its title (", simulated runs"; "" when all are).
pub fn simulated_runs(
    docs: &[RunDoc],
    names: &[String],
) -> (Vec<RunDoc>, Vec<String>, &'static str) {
    let (d, n): (Vec<RunDoc>, Vec<String>) = docs
        .iter()
        .zip(names)
        .filter(|(d, _)| !d.host)
        .map(|(d, n)| (d.clone(), n.clone()))
        .unzip();
    let note = if d.len() < docs.len() {
        ", simulated runs"
    } else {
        ""
    };
    (d, n, note)
}

/// The whole `mmsim compare` text: header, the note on identical runs, sample tables, Ops,
/// time, vmstat, the cgroup tables (when the baseline has cgroups), profile, separated by
/// blank lines.
pub fn render_all(docs: &[RunDoc], names: &[String]) -> String {
    let mut parts = vec![header(docs, names)];
    if let Some(note) = identical_note(docs, names) {
        parts.push(note + "\n");
    }
    parts.extend(sample_tables(docs, names).iter().map(CompareTable::render));
    parts.push(ops_table(docs, names).render());
    parts.push(time_table(docs, names).render());
    if let Some(t) = replay_table(docs, names) {
        parts.push(t.render());
    }
    let vm = vmstat_differences(docs);
    parts.push(if vm.is_empty() {
        "vmstat: no counter differs\n".to_string()
    } else {
        render_counter_table("vmstat (end of run, counters that differ)", names, &vm)
    });
    // What a host report does not have (devices, zram, zswap, PSI): the simulated runs'.
    let (sim_docs, sim_names, of_sims) = simulated_runs(docs, names);
    type Section = fn(&[RunDoc]) -> Vec<(String, Vec<u64>)>;
    let sections: [(&str, Section); 4] = [
        (
            "devices (requests, pages, seeks, busy ms; counters that differ",
            device_differences,
        ),
        (
            "zram (the swap device's pool and traffic; that differ",
            zram_differences,
        ),
        (
            "zswap (the compressed pool and its writeback; that differ",
            zswap_differences,
        ),
        (
            "pressure (PSI total stall ms; that differ",
            pressure_differences,
        ),
    ];
    for (title, differences) in sections {
        let rows = differences(&sim_docs);
        if !rows.is_empty() {
            parts.push(render_counter_table(
                &format!("{title}{of_sims})"),
                &sim_names,
                &rows,
            ));
        }
    }
    parts.extend(cgroup_tables(docs, names).iter().map(CompareTable::render));
    if docs.first().is_some_and(|b| b.cgroups.is_empty())
        && docs.iter().any(|d| !d.cgroups.is_empty())
    {
        parts.push(
            "cgroups: the baseline run has none (the cgroup tables follow the baseline's \
             cgroups)\n"
                .to_string(),
        );
    }
    let prof = profile_table(docs, names);
    if !prof.rows.is_empty() {
        parts.push(prof.render());
    }
    if let Some(t) = replay_speed_table(docs, names) {
        parts.push(t.render());
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::parse_run;
    use std::path::Path;

    /// Two small synthetic runs: `dd` with four iterations, a kernel thread to ignore,
    /// different vmstat and profile figures.
    fn docs() -> Vec<RunDoc> {
        let a = serde_json::json!({
            "schema_version": crate::run::SCHEMA_VERSION,
            "scenario": "dd-tmpfs",
            "features": {"accessed-init": false, "batch-tlb-flush": false,
                         "exec-protect": false, "truncate-batch-shadow": false,
                         "workingset": true},
            "elapsed_ns": 2_000_000_000u64,
            "cpu_time": {"user_ns": 500_000_000u64, "system_ns": 1_500_000_000u64,
                         "interrupt_ns": 0, "idle_ns": 0},
            "vmstat": {"pgmajfault": 10, "nr_free_pages": 100, "pgfree": 5},
            "profile_top": [
                {"function": "copy_page", "ns": 1, "percent": 50.0},
                {"function": "mark_page_accessed", "ns": 1, "percent": 4.0}
            ],
            "tasks": [
                {"name": "kswapd0", "kthread": true, "samples": {"scan": [1]}},
                {"name": "dd", "elapsed_ns": 1_800_000_000u64,
                 "samples": {"iteration": [4_000_000_000u64, 3_000_000_000u64,
                                           2_000_000_000u64, 1_000_000_000u64]}}
            ],
            "interrupts": [3, 4],
            "tlb_shootdowns": [0, 0]
        });
        let mut b = a.clone();
        b["features"] = serde_json::json!({"accessed-init": true, "batch-tlb-flush": true,
            "exec-protect": true, "truncate-batch-shadow": true, "workingset": true});
        b["elapsed_ns"] = serde_json::json!(1_000_000_000u64);
        b["cpu_time"]["system_ns"] = serde_json::json!(750_000_000u64);
        b["vmstat"]["pgmajfault"] = serde_json::json!(4);
        b["profile_top"] = serde_json::json!([
            {"function": "copy_page", "ns": 1, "percent": 60.0},
            {"function": "init_page_accessed", "ns": 1, "percent": 1.0}
        ]);
        b["tasks"][1]["elapsed_ns"] = serde_json::json!(900_000_000u64);
        b["tasks"][1]["samples"]["iteration"] = serde_json::json!([
            1_000_000_000u64,
            1_000_000_000u64,
            2_000_000_000u64,
            2_000_000_000u64
        ]);
        b["interrupts"] = serde_json::json!([1, 1]);
        vec![
            parse_run(&a.to_string(), Path::new("/x/a.json")).unwrap(),
            parse_run(&b.to_string(), Path::new("/x/b.json")).unwrap(),
        ]
    }

    /// A run's `[vm]` sysctls that differ from the kernel's defaults are on its header
    /// line (the report's `vm` object lists them all, defaults included).
    #[test]
    fn the_header_names_the_vm_sysctls_a_run_set() {
        let mut d = docs();
        let mut vm = serde_json::to_value(crate::scenario::VmSysctl::default()).unwrap();
        vm["watermark_scale_factor"] = serde_json::json!(300);
        vm["dirty_bytes"] = serde_json::json!(1_048_576);
        vm["dirty_ratio"] = serde_json::json!(0);
        vm["min_free_kbytes"] = serde_json::json!(8192);
        d[1].vm = serde_json::from_value(vm).unwrap();
        let h = header(&d, &["a".into(), "b".into()]);
        let lines: Vec<&str> = h.lines().collect();
        assert!(!lines[1].contains("vm "), "{h}");
        assert!(
            lines[2].ends_with(
                ", vm dirty_bytes 1048576, dirty_ratio 0, min_free_kbytes 8192, \
                 watermark_scale_factor 300"
            ),
            "{h}"
        );
        assert_eq!(d[1].vm.watermark_scale_factor, 300, "the watermarks' view");
    }

    fn row<'a>(t: &'a CompareTable, stat: &str, name: &str) -> &'a CompareRow {
        t.rows
            .iter()
            .find(|r| r.stat == stat && r.name == name)
            .unwrap_or_else(|| panic!("no row {stat} {name} in\n{}", t.render()))
    }

    fn close(v: Option<f64>, want: f64) -> bool {
        v.is_some_and(|v| (v - want).abs() < 1e-9)
    }

    #[test]
    fn names() {
        let d = docs();
        assert_eq!(default_names(&d), ["vanilla", "patched"]);
        let mut e = d.clone();
        e[1].features.insert("workingset".into(), false);
        assert_eq!(
            default_names(&e),
            [
                "vanilla",
                "+accessed-init,+batch-tlb-flush,+exec-protect,+truncate-batch-shadow,-workingset"
            ]
        );
        e[1] = e[0].clone();
        e[1].features.insert("workingset".into(), false);
        assert_eq!(default_names(&e), ["vanilla", "-workingset"]);
        // Same features: file stems; same stems: numbered.
        assert_eq!(default_names(&[d[0].clone(), d[0].clone()]), ["a-1", "a-2"]);
        let mut f = vec![d[0].clone(), d[0].clone()];
        f[1].path = "/y/c.json".into();
        assert_eq!(default_names(&f), ["a", "c"]);
    }

    /// `d` as a run on kernel `era` with the `preset`'s switches of that era.
    fn on_era(d: &RunDoc, era: KernelEra, preset: &str) -> RunDoc {
        let mut d = d.clone();
        d.kernel = era.to_string();
        d.features = era.features(preset).unwrap().to_map();
        d
    }

    #[test]
    fn names_carry_the_kernel_when_it_differs() {
        let d = docs();
        let old = on_era(&d[0], KernelEra::V4_2, "vanilla");
        let new = on_era(&d[0], KernelEra::V6_18, "vanilla");
        assert_eq!(
            default_names(&[old.clone(), new.clone()]),
            ["vanilla@4.2", "vanilla@6.18"]
        );
        // One era: presets on that era, no kernel in the names.
        let new_p = on_era(&d[1], KernelEra::V6_18, "patched");
        assert_eq!(
            default_names(&[new.clone(), new_p.clone()]),
            ["vanilla", "patched"]
        );
        assert_eq!(
            default_names(&[old.clone(), new_p.clone()]),
            ["vanilla@4.2", "patched@6.18"]
        );
        // An override of an era rule is named; the rules that come with the era are not.
        let mut ws = new.clone();
        ws.features.insert("workingset".into(), false);
        assert_eq!(
            default_names(&[old.clone(), ws.clone()]),
            ["vanilla@4.2", "-workingset@6.18"]
        );
        let mut ai = old.clone();
        ai.features.insert("accessed-init".into(), true);
        let mut ai_ws = ws.clone();
        ai_ws.features.insert("accessed-init".into(), true);
        assert_eq!(
            default_names(&[ai, ai_ws]),
            ["+workingset@4.2", "-workingset@6.18"],
            "switches set alike in every run are not listed"
        );
        // A document from before eras counts as 4.2: same kernel as a 4.2 run.
        assert_eq!(
            default_names(&[d[0].clone(), new_p]),
            ["vanilla@4.2", "patched@6.18"]
        );
        assert_eq!(
            default_names(&[d[0].clone(), d[1].clone()]),
            ["vanilla", "patched"]
        );
        let mut e = old.clone();
        e.path = "/x/e.json".into();
        assert_eq!(
            default_names(&[d[0].clone(), old.clone()]),
            ["vanilla-1", "vanilla-2"]
        );
        assert_eq!(default_names(&[old.clone(), e]), ["a", "e"]);
        // Same features and kernel twice among different kernels: file stems with kernels.
        assert_eq!(
            default_names(&[old.clone(), old.clone(), new]),
            ["a@4.2-1", "a@4.2-2", "a@6.18"]
        );
    }

    /// `d` with a cgroup `a` (memory.max 64 MiB) scanning `scan` pages, `file` MiB of
    /// file pages, `max` memory.max events.
    fn with_cgroup(d: &RunDoc, scan: u64, file: u64, max: u64) -> RunDoc {
        let j = serde_json::json!([
            {"name": "/", "peak": 100u64 << 20, "stat": {"pgscan": scan, "pgfault": 7}},
            {"name": "a", "memory_max": 64u64 << 20, "peak": 64u64 << 20,
             "stat": {"pgscan": scan, "file": file << 20, "pgfault": 7, "anon": 0},
             "events": {"low": 0, "high": 0, "max": max, "oom": 0, "oom_kill": 0}}
        ]);
        let mut d = d.clone();
        d.cgroups = serde_json::from_value(j).unwrap();
        d
    }

    #[test]
    fn cgroup_tables_show_what_differs() {
        let d = docs();
        assert!(cgroup_tables(&d, &default_names(&d)).is_empty());
        let c = vec![
            with_cgroup(&d[0], 1000, 60, 10),
            with_cgroup(&d[1], 250, 48, 10),
        ];
        let names = default_names(&c);
        let tables = cgroup_tables(&c, &names);
        assert_eq!(tables.len(), 2);
        assert!(
            tables[0].title.starts_with("cgroup / (root)"),
            "{}",
            tables[0].title
        );
        let t = &tables[1];
        assert!(
            t.title.starts_with("cgroup a (memory.max 64 MiB)"),
            "{}",
            t.title
        );
        let scan = row(t, "memory.stat", "pgscan");
        assert_eq!(scan.direction, LowerIsBetter);
        assert!(close(scan.pct(1), 75.0), "fewer scans are better");
        let file = row(t, "memory.stat", "file (MiB)");
        assert!(file.neutral && close(file.values[0], 60.0) && close(file.pct(1), -20.0));
        let peak = row(t, "memory.peak", "(MiB)");
        assert!(peak.neutral && close(peak.values[1], 64.0));
        assert!(close(row(t, "memory.events", "max").values[0], 10.0));
        assert!(close(row(t, "memory.events", "oom_kill").values[1], 0.0));
        // Keys equal in every run are left out.
        assert!(t
            .rows
            .iter()
            .all(|r| r.name != "pgfault" && r.name != "anon (MiB)"));
        let out = t.render();
        assert!(out.contains("memory.stat   pgscan"), "{out}");
        assert!(
            out.contains("( -20.00%)") && out.contains("(  75.00%)"),
            "{out}"
        );
        // A run without the cgroup shows `-`; the whole report has the tables.
        let mut e = c.clone();
        e[1].cgroups.truncate(1);
        let t = &cgroup_tables(&e, &names)[1];
        assert_eq!(row(t, "memory.peak", "(MiB)").values[1], None);
        let all = render_all(&c, &names);
        assert!(all.contains("cgroup a (memory.max 64 MiB)"), "{all}");
        assert!(all.contains(", cgroups a\n"), "{all}");
        let mut f = c.clone();
        f[0].cgroups.clear();
        assert!(render_all(&f, &names).contains("cgroups: the baseline run has none"));
    }

    /// Two runs with cgroup `a`, the first scanning more and holding more file pages.
    fn two_runs_with_cgroup_a() -> (Vec<RunDoc>, Vec<String>) {
        let d = docs();
        let c = vec![
            with_cgroup(&d[0], 1000, 60, 10),
            with_cgroup(&d[1], 250, 48, 10),
        ];
        let names = default_names(&c);
        (c, names)
    }

    #[test]
    fn cgroup_tables_show_v1_files_when_a_run_has_them() {
        let (c, names) = two_runs_with_cgroup_a();
        let t = &cgroup_tables(&c, &names)[1];
        assert!(t.rows.iter().all(|r| !r.stat.starts_with("memory.failcnt")));
        // The second run is on cgroup v1 (a host_replay report of a v1 machine, say).
        let mut v = c.clone();
        v[1].cgroups[1].v1 = Some(crate::report::load::CgroupV1View {
            failcnt: 40,
            max_usage_in_bytes: 64 << 20,
            memsw_max_usage_in_bytes: None,
            stat: [("pgpgin".to_string(), 900), ("pgpgout".to_string(), 880)].into(),
        });
        let t = &cgroup_tables(&v, &names)[1];
        // No memsw watermark on either side: no row for it.
        assert!(t
            .rows
            .iter()
            .all(|r| r.stat != "memory.memsw.max_usage_in_bytes"));
        let fail = row(t, "memory.failcnt", "");
        assert_eq!(fail.direction, LowerIsBetter);
        assert_eq!(fail.values[0], None, "the v2 run has no failcnt");
        assert!(close(fail.values[1], 40.0));
        assert!(close(
            row(t, "memory.max_usage_in_bytes", "(MiB)").values[1],
            64.0
        ));
        assert!(close(row(t, "v1 memory.stat", "pgpgin").values[1], 900.0));
        assert!(close(row(t, "v1 memory.stat", "pgpgout").values[1], 880.0));
        v[1].cgroups[1]
            .v1
            .as_mut()
            .unwrap()
            .memsw_max_usage_in_bytes = Some(80 << 20);
        let t = &cgroup_tables(&v, &names)[1];
        let memsw = row(t, "memory.memsw.max_usage_in_bytes", "(MiB)");
        assert_eq!(memsw.values[0], None);
        assert!(close(memsw.values[1], 80.0));
    }

    #[test]
    fn cgroup_tables_show_swap_only_when_a_run_swapped() {
        let (c, names) = two_runs_with_cgroup_a();
        let t = &cgroup_tables(&c, &names)[1];
        assert!(t.rows.iter().all(|r| !r.stat.starts_with("memory.swap")));
        // The second run swapped 16 MiB at most and was refused 5 swap-outs.
        let mut s = c.clone();
        s[1].cgroups[1].swap_peak = 16 << 20;
        s[1].cgroups[1].swap_events.max = 5;
        s[1].cgroups[1].swap_events.fail = 5;
        let t = &cgroup_tables(&s, &names)[1];
        let peak = row(t, "memory.swap.peak", "(MiB)");
        assert!(peak.neutral && close(peak.values[0], 0.0) && close(peak.values[1], 16.0));
        let max = row(t, "memory.swap.events", "max");
        assert_eq!(max.direction, LowerIsBetter);
        assert!(close(max.values[1], 5.0));
        assert!(close(row(t, "memory.swap.events", "fail").values[1], 5.0));
    }

    #[test]
    fn samples_table_values() {
        let d = docs();
        let names = default_names(&d);
        let tables = sample_tables(&d, &names);
        assert_eq!(tables.len(), 1, "kernel threads are left out");
        let t = &tables[0];
        assert_eq!(t.columns, ["vanilla", "patched"]);
        let name = "dd iteration (s)";
        // vanilla 1 2 3 4 s, patched 1 1 2 2 s.
        let amean = row(t, "Amean", name);
        assert!(close(amean.values[0], 2.5) && close(amean.values[1], 1.5));
        assert!(close(amean.pct(1), 40.0)); // 100 - 1.5*100/2.5
        let max = row(t, "Max", name);
        assert!(close(max.values[0], 4.0) && close(max.pct(1), 50.0));
        assert!(close(row(t, "Min", name).pct(1), 0.0));
        // n = 4: 1st-qrtle at position int(0.75 + 0.5) = 1.
        assert!(close(row(t, "1st-qrtle", name).values[0], 2.0));
        // Stddev: vanilla sqrt(5/3), patched sqrt(1/3): 100 - 100/sqrt(5) better.
        let sd = row(t, "Stddev", name);
        assert!(close(sd.values[0], (5.0f64 / 3.0).sqrt()));
        assert!(close(sd.pct(1), 100.0 - 100.0 / 5f64.sqrt()));
        // Best50%Amean averages floor(2) + 1 = 3 best samples.
        let b50 = row(t, "Best50%Amean", name);
        assert!(close(b50.values[0], 2.0));
        assert!(close(b50.values[1], 4.0 / 3.0));
        let out = t.render();
        assert!(
            out.starts_with("dd iteration: time per sample, s (n = 4/4"),
            "{out}"
        );
        assert!(out.contains("Amean        dd iteration (s)"), "{out}");
        assert!(out.contains("1.50 (  40.00%)"), "{out}");
    }

    #[test]
    fn rate_labels_are_higher_is_better() {
        let mut d = docs();
        for (doc, rates) in d.iter_mut().zip([[100u64, 200, 400], [200, 200, 400]]) {
            let t = &mut doc.tasks[1];
            t.samples.clear();
            t.samples.insert("SeqCreate del".into(), rates.to_vec());
        }
        assert_eq!(sample_direction("SeqCreate del"), Direction::HigherIsBetter);
        assert_eq!(sample_direction("unlink"), LowerIsBetter);
        assert_eq!(
            sample_unit(&d, "dd", "SeqCreate del"),
            SampleUnit::Rate("files/s")
        );
        let t = &sample_tables(&d, &default_names(&d))[0];
        let name = "dd SeqCreate del (files/s)";
        // Hmean 3 / (1/100 + 1/200 + 1/400) = 171.43 -> 3 / (2/200 + 1/400) = 240: +40%.
        let h = row(t, "Hmean", name);
        assert!(close(h.values[0], 3.0 / 0.0175) && close(h.values[1], 240.0));
        assert!(close(h.pct(1), 240.0 * 100.0 * 0.0175 / 3.0 - 100.0));
        assert!(h.pct(1).unwrap() > 0.0, "a higher rate is better");
        assert!(
            close(row(t, "Min", name).values[0], 100.0),
            "shown as recorded"
        );
        assert!(t.rows.iter().all(|r| !r.stat.starts_with("Best")));
        assert!(t.rows.iter().all(|r| r.stat != "Amean"));
        let out = t.render();
        assert!(out.contains("rate per sample, files/s"), "{out}");
        assert!(out.contains("higher is better"), "{out}");
    }

    #[test]
    fn small_samples_in_micros() {
        assert_eq!(TimeUnit::for_min_ns(999_999), TimeUnit::Micros);
        assert_eq!(TimeUnit::for_min_ns(1_000_000), TimeUnit::Millis);
        assert_eq!(TimeUnit::for_min_ns(999_999_999), TimeUnit::Millis);
        assert_eq!(TimeUnit::for_min_ns(1_000_000_000), TimeUnit::Seconds);
        assert_eq!(TimeUnit::Micros.convert(38_000), 38.0);
        let mut d = docs();
        for doc in &mut d {
            let s = doc.tasks[1].samples.get_mut("iteration").unwrap();
            s.iter_mut().for_each(|x| *x /= 100_000);
        }
        // Smallest sample 10 us: the whole table in us.
        let t = &sample_tables(&d, &default_names(&d))[0];
        assert!(close(row(t, "Max", "dd iteration (us)").values[0], 40.0));
        d[1].tasks[1].samples.clear();
        let t = &sample_tables(&d, &default_names(&d))[0];
        assert!(close(row(t, "Min", "dd iteration (us)").values[0], 10.0));
    }

    #[test]
    fn task_missing_from_a_run() {
        let mut d = docs();
        d[1].tasks.pop();
        let names = default_names(&d);
        let t = &sample_tables(&d, &names)[0];
        assert_eq!(row(t, "Amean", "dd iteration (s)").values[1], None);
        let ops = ops_table(&d, &names);
        assert_eq!(row(&ops, "Ops", "dd elapsed (s)").values[1], None);
        assert!(!t.render().contains("NaN"));
    }

    #[test]
    fn ops_and_time() {
        let d = docs();
        let names = default_names(&d);
        let ops = ops_table(&d, &names);
        let e = row(&ops, "Ops", "elapsed (s)");
        assert_eq!(e.values, [Some(2.0), Some(1.0)]);
        assert!(close(e.pct(1), 50.0));
        let dd = row(&ops, "Ops", "dd elapsed (ms)");
        assert_eq!(dd.values, [Some(1800.0), Some(900.0)]);
        let irq = row(&ops, "Ops", "interrupts");
        assert_eq!(irq.values, [Some(7.0), Some(2.0)]);
        assert!(close(irq.pct(1), 100.0 - 200.0 / 7.0));
        let t = time_table(&d, &names);
        assert_eq!(
            t.rows.iter().map(|r| r.stat.as_str()).collect::<Vec<_>>(),
            ["User", "System", "Interrupt", "Elapsed"]
        );
        let sys = row(&t, "System", "");
        assert_eq!(sys.values, [Some(1.5), Some(0.75)]);
        assert!(close(sys.pct(1), 50.0));
        let out = t.render();
        assert!(out.starts_with("time (s)\n"), "{out}");
        assert!(
            out.contains("1.50 (   0.00%)        0.75 (  50.00%)"),
            "{out}"
        );
        // Short runs: the time table in ms, Ops rows each in their own unit.
        let mut e = d.clone();
        e[1].elapsed_ns = 5_000_000;
        e[1].tasks[1].elapsed_ns = 0; // did not exit
        assert!(time_table(&e, &names).render().starts_with("time (ms)\n"));
        let ops = ops_table(&e, &names);
        assert_eq!(
            row(&ops, "Ops", "elapsed (ms)").values,
            [Some(2000.0), Some(5.0)]
        );
        assert_eq!(row(&ops, "Ops", "dd elapsed (s)").values, [Some(1.8), None]);
    }

    #[test]
    fn vmstat_only_differences() {
        let d = docs();
        let v = vmstat_differences(&d);
        assert_eq!(v, [("pgmajfault".to_string(), vec![10, 4])]);
        let mut e = d.clone();
        e[1].vmstat.remove("pgfree");
        e[0].vmstat.insert("nr_dirty".into(), -3);
        let v = vmstat_differences(&e);
        let keys: Vec<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["nr_dirty", "pgfree", "pgmajfault"]);
        assert_eq!(v[0].1, [0, 0]);
        assert_eq!(v[1].1, [5, 0]);
    }

    #[test]
    fn profile_shares() {
        let d = docs();
        let t = profile_table(&d, &default_names(&d));
        let names: Vec<&str> = t.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["copy_page", "mark_page_accessed", "init_page_accessed"]
        );
        let cp = row(&t, "Share", "copy_page");
        assert_eq!(cp.values, [Some(50.0), Some(60.0)]);
        assert!(close(cp.pct(1), -20.0));
        let mpa = row(&t, "Share", "mark_page_accessed");
        assert_eq!(mpa.values, [Some(4.0), Some(0.0)]);
        assert!(close(mpa.pct(1), 100.0));
        assert_eq!(row(&t, "Share", "init_page_accessed").pct(1), None); // 0 -> 1
                                                                         // Changes are computed from the shares as shown (0.01 %): 0.004 % and 0.002 %
                                                                         // both show 0.00, which is no change rather than a 50 % fall; 4.2049 % and
                                                                         // 4.2051 % show 4.20 and 4.21, a change of -0.24 %, as the shown values give.
        let mut e = d.clone();
        e[0].profile_top[1].percent = 0.004;
        e[1].profile_top[1].percent = 0.002;
        e[0].profile_top[0].percent = 4.2049;
        e[1].profile_top[0].percent = 4.2051;
        let t = profile_table(&e, &default_names(&e));
        let mpa = row(&t, "Share", "mark_page_accessed");
        assert_eq!(mpa.values, [Some(0.0), Some(0.0)]);
        assert_eq!(mpa.pct(1), Some(0.0));
        let cp = row(&t, "Share", "copy_page");
        assert_eq!(cp.values, [Some(4.2), Some(4.21)]);
        assert!(close(cp.pct(1), -(0.01 / 4.2) * 100.0));
    }

    #[test]
    fn identical_runs_are_said_to_be() {
        let d = docs();
        let names = vec!["base".to_string(), "new".to_string()];
        assert!(!same_results(&d[0], &d[1]));
        assert_eq!(identical_note(&d, &names), None);
        assert!(!render_all(&d, &names).contains("identical"));
        // Same results under other features (and another file): identical.
        let mut same = d[0].clone();
        same.features.insert("accessed-init".into(), true);
        same.path = "/x/c.json".into();
        let two = vec![d[0].clone(), same.clone()];
        assert!(same_results(&two[0], &two[1]));
        let out = render_all(&two, &names);
        assert!(
            out.contains("identical: the two runs have the same results"),
            "{out}"
        );
        let three = vec![d[0].clone(), d[1].clone(), same];
        let names3 = vec!["base".to_string(), "new".to_string(), "third".to_string()];
        assert_eq!(
            identical_note(&three, &names3).unwrap(),
            "identical to the baseline base (every sample, time, counter, profile share and \
             time-series value): third"
        );
        // One sample differs: not identical.
        let mut other = d[0].clone();
        other.tasks[1].samples.get_mut("iteration").unwrap()[0] += 1;
        assert!(!same_results(&d[0], &other));
    }

    #[test]
    fn whole_report() {
        let d = docs();
        let names = vec!["base".to_string(), "new".to_string()];
        let out = render_all(&d, &names);
        for want in [
            "mmsim compare: scenario dd-tmpfs, 2 runs",
            "  base  /x/a.json  kernel unknown (4.2 rules)  [workingset]",
            "Amean        dd iteration (s)",
            "Ops elapsed (s)",
            "time (s)",
            "Elapsed",
            "vmstat (end of run, counters that differ)",
            "pgmajfault",
            "Share copy_page",
        ] {
            assert!(out.contains(want), "missing {want:?} in\n{out}");
        }
        assert!(!out.contains("nr_free_pages"), "{out}");
        assert!(!out.contains("kswapd0"), "{out}");
    }

    /// The devices table lists `<device> <counter>` rows whose values differ between runs
    /// (busy time in ms), a device missing from a run counting as 0, and nothing when the
    /// runs' IO is the same.
    #[test]
    fn device_differences_list_the_counters_that_differ() {
        use crate::report::load::DeviceView;
        let dev = |name: &str, seeks: u64, busy_ns: u64| DeviceView {
            name: name.into(),
            reads: 10,
            pages_read: 40,
            seeks,
            busy_ns,
            ..DeviceView::default()
        };
        let a = RunDoc {
            devices: vec![dev("sda", 3, 5_000_000)],
            ..RunDoc::default()
        };
        let b = RunDoc {
            devices: vec![dev("sda", 7, 9_000_000), dev("swap", 1, 1_000_000)],
            ..RunDoc::default()
        };
        let rows = device_differences(&[a.clone(), b]);
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "sda seeks",
                "sda busy_ms",
                "swap reads",
                "swap pages_read",
                "swap seeks",
                "swap busy_ms"
            ]
        );
        assert_eq!(rows[0].1, vec![3, 7]);
        assert_eq!(rows[1].1, vec![5, 9]);
        assert_eq!(rows[2].1, vec![0, 10]);
        assert!(device_differences(&[a.clone(), a]).is_empty());
    }

    /// The zram table lists the statistics that differ, a run without zram counting 0,
    /// and nothing when no run has zram.
    #[test]
    fn zram_differences_list_the_statistics_that_differ() {
        use crate::report::load::ZramView;
        let z = |mem_used_max: u64, num_writes: u64| ZramView {
            mem_used_max,
            num_writes,
            num_reads: 5,
            ..ZramView::default()
        };
        let a = RunDoc {
            zram: Some(z(8192, 10)),
            ..RunDoc::default()
        };
        let b = RunDoc {
            zram: Some(z(4096, 10)),
            ..RunDoc::default()
        };
        let rows = zram_differences(&[a.clone(), b, RunDoc::default()]);
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["zram mem_used_max_kib", "zram num_writes", "zram num_reads"]
        );
        assert_eq!(rows[0].1, vec![8, 4, 0]);
        assert_eq!(rows[1].1, vec![10, 10, 0]);
        assert!(zram_differences(&[a.clone(), a]).is_empty());
        assert!(zram_differences(&[RunDoc::default(), RunDoc::default()]).is_empty());
    }

    /// The zswap table lists the statistics that differ, a run without zswap counting 0.
    #[test]
    fn zswap_differences_list_the_statistics_that_differ() {
        use crate::report::load::ZswapView;
        let z = |wb: u64| ZswapView {
            pool_max_size: 1 << 20,
            written_back_pages: wb,
            ..ZswapView::default()
        };
        let (a, b) = (
            RunDoc {
                zswap: Some(z(5)),
                ..RunDoc::default()
            },
            RunDoc {
                zswap: Some(z(9)),
                ..RunDoc::default()
            },
        );
        let rows = zswap_differences(&[a.clone(), b]);
        assert_eq!(
            rows,
            vec![("zswap written_back_pages".to_string(), vec![5, 9])]
        );
        let rows = zswap_differences(&[a.clone(), RunDoc::default()]);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(zswap_differences(&[a.clone(), a]).is_empty());
        assert!(zswap_differences(&[RunDoc::default(), RunDoc::default()]).is_empty());
    }

    /// The pressure table lists `<scope> <resource> <some|full>` rows (ms) that differ:
    /// the machine's as `/proc`, then each cgroup's; a run without PSI counts 0.
    #[test]
    fn pressure_differences_list_the_stall_totals_that_differ() {
        use crate::report::load::{CgroupView, PressureView};
        let psi = |mem_some_us: u64, io_full_us: u64| {
            let mut p = PressureView::default();
            p.memory.some.total_us = mem_some_us;
            p.io.full.total_us = io_full_us;
            Some(p)
        };
        let cg = |name: &str, p: Option<PressureView>| CgroupView {
            name: name.into(),
            pressure: p,
            ..CgroupView::default()
        };
        let a = RunDoc {
            pressure: psi(5_000, 2_000),
            cgroups: vec![cg("/", psi(5_000, 2_000)), cg("app", psi(4_000, 0))],
            ..RunDoc::default()
        };
        let b = RunDoc {
            pressure: psi(9_000, 2_000),
            cgroups: vec![cg("/", psi(9_000, 2_000)), cg("app", psi(4_000, 7_000))],
            ..RunDoc::default()
        };
        let old = RunDoc::default();
        let rows = pressure_differences(&[a.clone(), b, old]);
        let names: Vec<&str> = rows.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "/proc memory some",
                "/proc io full",
                "app memory some",
                "app io full"
            ]
        );
        assert_eq!(rows[0].1, vec![5, 9, 0]);
        assert_eq!(rows[3].1, vec![0, 7, 0]);
        assert!(pressure_differences(&[a.clone(), a]).is_empty());
    }
}
