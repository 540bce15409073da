//! The tables of `mmsim compare`: mmtests-style compare tables built from loaded run
//! documents ([`super::load::RunDoc`]), one column per run, the first run the baseline.
//!
//! - per task and sample label: the [`super::stats::summarize`] rows of the samples. Most
//!   samples are times (lower is better), shown in s, ms or µs (`us`) as the row name says:
//!   the largest unit in which the smallest sample is at least 1, so 2 decimals keep 3
//!   digits. The labels of [`RATE_LABELS`] are rates (bonnie's files/s, higher is better):
//!   shown as recorded, with Hmean and without BestN% rows (see [`sample_unit`]);
//! - "Ops": whole-run and per-task elapsed time, interrupts, TLB shootdowns;
//! - "time": User / System / Interrupt / Elapsed, seconds (like mmtests' time table);
//! - vmstat: the end-of-run counters that differ between runs (no percentages);
//! - profile: the share of busy CPU time of the top kernel functions, percent.

use std::collections::{BTreeMap, BTreeSet};

use super::compare::{render_counter_table, CompareRow, CompareTable};
use super::load::RunDoc;
use super::stats::Direction::{self, LowerIsBetter};

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

/// Sample labels whose samples are rates, higher is better, with their unit: the samples
/// `Op::TimerStopRate` records (bonnie's six phases, in files per second). Every other
/// label is a time in ns, lower is better.
pub const RATE_LABELS: &[(&str, &str)] = &[
    ("SeqCreate ops", "files/s"),
    ("SeqCreate read", "files/s"),
    ("SeqCreate del", "files/s"),
    ("RandCreate ops", "files/s"),
    ("RandCreate read", "files/s"),
    ("RandCreate del", "files/s"),
];

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

/// The direction of a sample label: higher is better for [`RATE_LABELS`], lower otherwise.
pub fn sample_direction(label: &str) -> Direction {
    if RATE_LABELS.iter().any(|(l, _)| *l == label) {
        Direction::HigherIsBetter
    } else {
        LowerIsBetter
    }
}

/// Default column names for the runs: a feature preset's name (`vanilla`, `patched`) when
/// a run's features are exactly that preset, otherwise the switches that differ between
/// the runs (`+workingset`, `-accessed-init,+workingset`). When two runs have the same
/// features, the file stems instead; names are made unique by a `-N` suffix as a last
/// resort.
pub fn default_names(docs: &[RunDoc]) -> Vec<String> {
    let presets: Vec<(&str, BTreeMap<String, bool>)> = ["vanilla", "patched"]
        .into_iter()
        .filter_map(|p| crate::sim::Features::preset(p).map(|f| (p, f.to_map())))
        .collect();
    let distinct: BTreeSet<&BTreeMap<String, bool>> = docs.iter().map(|d| &d.features).collect();
    let names: Vec<String> = if distinct.len() == docs.len() {
        // Switches whose value is not the same in every run (absent counts as off).
        let keys: BTreeSet<&String> = docs.iter().flat_map(|d| d.features.keys()).collect();
        let on = |d: &RunDoc, k: &str| d.features.get(k).copied().unwrap_or(false);
        let differing: Vec<&String> = keys
            .into_iter()
            .filter(|k| docs.iter().any(|d| on(d, k) != on(&docs[0], k)))
            .collect();
        docs.iter()
            .map(|d| {
                // A document written before a switch existed lacks its key: it matches a
                // preset when every switch it records has the preset's value.
                let is_preset = |m: &BTreeMap<String, bool>| {
                    !d.features.is_empty() && d.features.iter().all(|(k, v)| m.get(k) == Some(v))
                };
                if let Some((p, _)) = presets.iter().find(|(_, m)| is_preset(m)) {
                    return p.to_string();
                }
                let parts: Vec<String> = differing
                    .iter()
                    .map(|k| format!("{}{}", if on(d, k) { '+' } else { '-' }, k))
                    .collect();
                if parts.is_empty() {
                    d.file_stem()
                } else {
                    parts.join(",")
                }
            })
            .collect()
    } else {
        docs.iter().map(RunDoc::file_stem).collect()
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

/// The unit for the samples of `task`/`label` over all runs: the rate unit for
/// [`RATE_LABELS`], else a time unit ([`TimeUnit::for_min_ns`] of the smallest sample;
/// seconds if there is none).
pub fn sample_unit(docs: &[RunDoc], task: &str, label: &str) -> SampleUnit {
    if let Some((_, unit)) = RATE_LABELS.iter().find(|(l, _)| *l == label) {
        return SampleUnit::Rate(unit);
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
            .map(|d| Some(f(d).iter().sum::<u64>() as f64))
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
        let values = docs.iter().map(|d| Some(unit.convert(f(d)))).collect();
        t.rows
            .push(CompareRow::new(stat, "", LowerIsBetter, values));
    }
    t
}

/// The vmstat counters (end of run) whose values are not the same in every run, by name;
/// a counter absent from a run counts as 0, a negative gauge is shown as 0.
pub fn vmstat_differences(docs: &[RunDoc]) -> Vec<(String, Vec<u64>)> {
    let keys: BTreeSet<&String> = docs.iter().flat_map(|d| d.vmstat.keys()).collect();
    keys.into_iter()
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

/// The profile table: share of busy CPU time (percent, lower is better) of the union of
/// each run's top [`PROFILE_TOP`] functions plus [`PROFILE_ALWAYS`], ordered by the
/// largest share in any run. A function a run never entered has share 0.
pub fn profile_table(docs: &[RunDoc], names: &[String]) -> CompareTable {
    let mut t = CompareTable::new("profile (% of busy CPU time)", names.to_vec());
    let share = |d: &RunDoc, f: &str| {
        d.profile_top
            .iter()
            .find(|r| r.function == f)
            .map_or(0.0, |r| r.percent)
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
        let values = docs.iter().map(|d| Some(share(d, &f))).collect();
        t.rows
            .push(CompareRow::new("Share", &f, LowerIsBetter, values));
    }
    t
}

/// One line per run: name, file, features on, machine, seed, and how it ended if not done.
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
    for (d, n) in docs.iter().zip(names) {
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
            "  {:<nw$}  {}  [{}]  {}x{} CPUs, {} MiB/node, seed {}",
            n,
            d.path.display(),
            on,
            d.machine.nodes,
            d.machine.cpus_per_node,
            d.machine.memory_per_node_bytes >> 20,
            d.seed
        ));
        if !d.completed() {
            out.push_str(&format!("  (did not complete: {})", d.end));
        }
        out.push('\n');
    }
    out
}

/// The whole `mmsim compare` text: header, sample tables, Ops, time, vmstat, profile,
/// separated by blank lines.
pub fn render_all(docs: &[RunDoc], names: &[String]) -> String {
    let mut parts = vec![header(docs, names)];
    parts.extend(sample_tables(docs, names).iter().map(CompareTable::render));
    parts.push(ops_table(docs, names).render());
    parts.push(time_table(docs, names).render());
    let vm = vmstat_differences(docs);
    parts.push(if vm.is_empty() {
        "vmstat: no counter differs\n".to_string()
    } else {
        render_counter_table("vmstat (end of run, counters that differ)", names, &vm)
    });
    let prof = profile_table(docs, names);
    if !prof.rows.is_empty() {
        parts.push(prof.render());
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
    }

    #[test]
    fn whole_report() {
        let d = docs();
        let names = vec!["base".to_string(), "new".to_string()];
        let out = render_all(&d, &names);
        for want in [
            "mmsim compare: scenario dd-tmpfs, 2 runs",
            "  base  /x/a.json  [workingset]",
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
}
