//! An embedding entry point: the steps of `mmsim run`, `mmsim compare` and `mmsim replay`
//! as library calls, for the Python package (`crates/mmsim-py`, `docs/python.md`) and other
//! hosts.
//!
//! A scenario is carried as its TOML text and source name ([`ScenarioText`]) rather than a
//! path, so a run can be shipped to another machine (a Ray worker) that has no copy of the
//! file. Parsing that text with [`crate::scenario::parse_scenario`] is exactly what
//! [`crate::scenario::load_scenario`] does after reading the file or finding the built-in,
//! so the report is the same, counter for counter, as the CLI's for the same input. The
//! options are checked in the order `mmsim run` checks them and fail with the same messages
//! (`--kernel: …`, `--features: …`, `file:line: field: …`).

use std::fmt;
use std::path::Path;

use crate::kernel::{resolve_features, KernelEra};
use crate::mm::policy::ReclaimPolicy;
use crate::report::compare::CompareTable;
use crate::run::{run_scenario, RunOptions, RunReport};
use crate::scenario::{builtin_scenarios, load_scenario, parse_scenario, Scenario, ScenarioError};

/// What went wrong, by kind; `Display` is the CLI's message (without `mmsim: error: `).
#[derive(Debug, Clone)]
pub enum ApiError {
    /// Bad scenario input: unknown built-in, unreadable file, malformed TOML, unknown or
    /// impossible field, bad `--set`.
    Scenario(ScenarioError),
    /// A bad option (`--preset`, `--features`, `--kernel`, `--policy`, `--max-host-mem`,
    /// `--ram`, …) or a policy the kernel era does not have.
    Option(String),
    /// The run would not fit in the host's memory (or `--max-host-mem`).
    HostMemory(String),
    /// The simulation could not be built or run.
    Run(String),
    /// A run document could not be read (compare).
    Document(String),
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApiError::Scenario(e) => write!(f, "{e}"),
            ApiError::Option(m)
            | ApiError::HostMemory(m)
            | ApiError::Run(m)
            | ApiError::Document(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ApiError {}

impl From<ScenarioError> for ApiError {
    fn from(e: ScenarioError) -> Self {
        ApiError::Scenario(e)
    }
}

/// A scenario's TOML text and where it came from (`built-in:<name>` or the file path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioText {
    /// The TOML document.
    pub text: String,
    /// The source named in errors and in the report (`source`).
    pub source: String,
}

/// The text of a built-in (by name) or a file (a name ending in `.toml` or containing
/// `/`), with [`load_scenario`]'s errors for an unknown name or an unreadable file.
pub fn scenario_text(name_or_path: &str) -> Result<ScenarioText, ScenarioError> {
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let text = std::fs::read_to_string(name_or_path).map_err(|e| ScenarioError {
            file: name_or_path.to_string(),
            line: None,
            field: String::new(),
            message: format!("cannot read scenario file: {e}"),
        })?;
        return Ok(ScenarioText {
            text,
            source: name_or_path.to_string(),
        });
    }
    match builtin_scenarios()
        .iter()
        .find(|(n, _, _)| *n == name_or_path)
    {
        Some((name, _, text)) => Ok(ScenarioText {
            text: text.to_string(),
            source: format!("built-in:{name}"),
        }),
        // load_scenario words the error (the list of built-ins).
        None => Err(load_scenario(name_or_path, &[]).expect_err("an unknown built-in is an error")),
    }
}

/// The options of one run: `mmsim run`'s flags.
#[derive(Clone, Debug)]
pub struct RunRequest {
    /// `--preset` (`vanilla` or `patched`).
    pub preset: String,
    /// `--features` (`+name,-name`).
    pub features: Option<String>,
    /// `--kernel`.
    pub kernel: Option<String>,
    /// `--policy`.
    pub policy: Option<String>,
    /// `--set key=value`, in order.
    pub sets: Vec<String>,
    /// `--seed` (applied as a last `--set seed=N`).
    pub seed: Option<u64>,
    /// `--check`.
    pub check: bool,
    /// `--max-steps`.
    pub max_steps: Option<u64>,
    /// `--max-host-mem`.
    pub max_host_mem: Option<String>,
}

impl Default for RunRequest {
    fn default() -> Self {
        RunRequest {
            preset: "patched".into(),
            features: None,
            kernel: None,
            policy: None,
            sets: Vec::new(),
            seed: None,
            check: false,
            max_steps: None,
            max_host_mem: None,
        }
    }
}

/// A checked run, ready to go.
#[derive(Clone, Debug)]
pub struct PreparedRun {
    /// The scenario after `--set` and `--seed`.
    pub scenario: Scenario,
    /// The features, checker and step limit.
    pub options: RunOptions,
}

fn parse_kernel(arg: Option<&str>) -> Result<Option<KernelEra>, ApiError> {
    arg.map(|v| KernelEra::parse(v).map_err(|e| ApiError::Option(format!("--kernel: {e}"))))
        .transpose()
}

fn parse_policy(arg: Option<&str>) -> Result<Option<ReclaimPolicy>, ApiError> {
    arg.map(|p| ReclaimPolicy::parse(p).map_err(|e| ApiError::Option(format!("--policy: {e}"))))
        .transpose()
}

/// Check everything `mmsim run` checks before it starts, in the same order and with the
/// same messages: `--kernel`, `--policy`, `--preset`/`--features`, the scenario with its
/// `--set`s and `--seed`, `--max-host-mem` and the host's memory, the policy's era.
pub fn prepare(sc: &ScenarioText, req: &RunRequest) -> Result<PreparedRun, ApiError> {
    let kernel = parse_kernel(req.kernel.as_deref())?;
    let policy = parse_policy(req.policy.as_deref())?;
    resolve_features(
        None,
        kernel,
        &req.preset,
        &Default::default(),
        req.features.as_deref(),
    )
    .map_err(ApiError::Option)?;
    let mut sets = req.sets.clone();
    if let Some(s) = req.seed {
        sets.push(format!("seed={s}"));
    }
    // --kernel is the scenario's kernel too, so its era checks are the run's.
    if let Some(k) = kernel {
        sets.insert(0, format!("kernel={k}"));
    }
    let scenario = parse_scenario(&sc.text, &sc.source, &sets)?;
    let max_mem = req
        .max_host_mem
        .as_deref()
        .map(|v| {
            crate::scenario::parse_size_arg(v)
                .map_err(|e| ApiError::Option(format!("--max-host-mem: {e}")))
        })
        .transpose()?;
    crate::run::check_host_memory(&scenario, max_mem).map_err(ApiError::HostMemory)?;
    let mut f = resolve_features(
        scenario.kernel,
        kernel,
        &req.preset,
        &scenario.features,
        req.features.as_deref(),
    )
    .map_err(ApiError::Option)?;
    if policy.is_some() {
        f.policy = policy;
    }
    let p = f.policy.or(scenario.policy).unwrap_or_default();
    let since = p.ops().since;
    if f.era < since {
        return Err(ApiError::Option(format!(
            "policy {p} exists from kernel {since} on, but {} runs on kernel {} (add \
             --kernel {since} or later)",
            scenario.name, f.era
        )));
    }
    Ok(PreparedRun {
        scenario,
        options: RunOptions {
            features: f,
            check: req.check,
            max_steps: req.max_steps.unwrap_or(u64::MAX),
            ..RunOptions::default()
        },
    })
}

/// Check and run; `progress` is called with the virtual time (ps) now and then.
pub fn run(
    sc: &ScenarioText,
    req: &RunRequest,
    progress: &mut dyn FnMut(u64),
) -> Result<RunReport, ApiError> {
    let p = prepare(sc, req)?;
    run_scenario(&p.scenario, &p.options, progress).map_err(ApiError::Run)
}

/// The JSON document of a report, byte for byte what `mmsim run --json PATH` writes.
pub fn report_json(r: &RunReport) -> String {
    serde_json::to_string_pretty(r).expect("a report serializes") + "\n"
}

/// [`run`] and [`report_json`].
pub fn run_to_json(sc: &ScenarioText, req: &RunRequest) -> Result<String, ApiError> {
    run(sc, req, &mut |_| {}).map(|r| report_json(&r))
}

/// `mmsim compare` of run documents given as text: the tables in print order and the
/// text `compare` prints.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Column names (one per run; the first is the baseline).
    pub names: Vec<String>,
    /// The tables: samples, Ops, time, vmstat (counters that differ), cgroups, profile.
    pub tables: Vec<CompareTable>,
    /// What `mmsim compare` prints.
    pub text: String,
}

/// Compare documents (`(text, name shown in errors)`), the first the baseline; `names`
/// as `--names` (default: the features that differ); `force` as `--force`.
pub fn compare(
    docs: &[(String, String)],
    names: Option<Vec<String>>,
    force: bool,
) -> Result<Comparison, ApiError> {
    use crate::report::compare::CompareRow;
    use crate::report::{load, stats::Direction, tables};
    if docs.len() < 2 {
        return Err(ApiError::Option(
            "compare: at least two runs are needed".into(),
        ));
    }
    let docs = docs
        .iter()
        .map(|(text, path)| load::parse_run(text, Path::new(path)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ApiError::Document(e.to_string()))?;
    if !force {
        load::check_same_scenario(&docs).map_err(|e| ApiError::Document(e.to_string()))?;
    }
    let names = match names {
        None => tables::default_names(&docs),
        Some(n) => {
            if n.len() != docs.len() || n.iter().any(String::is_empty) {
                return Err(ApiError::Option(format!(
                    "--names: {} name(s) given for {} file(s)",
                    n.iter().filter(|s| !s.is_empty()).count(),
                    docs.len()
                )));
            }
            n
        }
    };
    let mut t = tables::sample_tables(&docs, &names);
    t.push(tables::ops_table(&docs, &names));
    t.push(tables::time_table(&docs, &names));
    let vm = tables::vmstat_differences(&docs);
    if !vm.is_empty() {
        t.push(CompareTable {
            title: "vmstat (end of run, counters that differ)".into(),
            columns: names.clone(),
            rows: vm
                .iter()
                .map(|(k, v)| {
                    CompareRow::new(
                        "",
                        k,
                        Direction::LowerIsBetter,
                        v.iter().map(|x| Some(*x as f64)).collect(),
                    )
                })
                .collect(),
            published_columns: None,
        });
    }
    t.extend(tables::cgroup_tables(&docs, &names));
    let prof = tables::profile_table(&docs, &names);
    if !prof.rows.is_empty() {
        t.push(prof);
    }
    let text = tables::render_all(&docs, &names);
    Ok(Comparison {
        names,
        tables: t,
        text,
    })
}

/// `mmsim replay`'s arguments from its command line (after `replay`), e.g.
/// `["trace.csv", "--ram", "64MiB", "--preset", "vanilla"]`; clap's message on bad input.
pub fn replay_args<S: AsRef<str>>(argv: &[S]) -> Result<crate::trace::cli::ReplayArgs, ApiError> {
    #[derive(clap::Parser)]
    #[command(name = "mmsim replay", no_binary_name = true)]
    struct ReplayCli {
        #[command(flatten)]
        args: crate::trace::cli::ReplayArgs,
    }
    use clap::Parser;
    ReplayCli::try_parse_from(argv.iter().map(|s| s.as_ref().to_string()))
        .map(|c| c.args)
        .map_err(|e| ApiError::Option(e.to_string().trim_end().to_string()))
}

/// One `mmsim replay` run at one RAM size: the options checked as the CLI checks them
/// (`--kernel`, `--preset`/`--features`, then the scenario built around the trace with
/// `--readahead`, `--policy` and its era), by the CLI's own functions, then the report
/// (with its `replay` section).
pub fn replay(a: &crate::trace::cli::ReplayArgs) -> Result<RunReport, ApiError> {
    use crate::trace::cli::{build_scenario, features_of, replay_points};
    let kernel = parse_kernel(a.kernel.as_deref())?;
    resolve_features(
        None,
        kernel,
        &a.preset,
        &Default::default(),
        a.features.as_deref(),
    )
    .map_err(ApiError::Option)?;
    let points = replay_points(a).map_err(ApiError::Option)?;
    if points.len() != 1 {
        use crate::trace::cli::CurveAxis;
        let (flag, given) = match CurveAxis::of(&points) {
            CurveAxis::MemoryMax => ("--memory-max", a.memory_max.as_deref()),
            CurveAxis::Ram => ("--ram", a.ram.as_deref()),
        };
        return Err(ApiError::Option(format!(
            "{flag} {}: one size per replay run ({} given)",
            given.unwrap_or_default(),
            points.len()
        )));
    }
    let sc = build_scenario(a, points[0]).map_err(ApiError::Option)?;
    let opts = RunOptions {
        features: features_of(a, &sc, kernel).map_err(ApiError::Option)?,
        check: false,
        max_steps: a.max_steps.unwrap_or(u64::MAX),
        ..RunOptions::default()
    };
    run_scenario(&sc, &opts, &mut |_| {}).map_err(ApiError::Run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_read_as_the_cli_words_them() {
        let e = scenario_text("no-such-scenario").unwrap_err();
        assert!(e.to_string().contains("unknown built-in scenario"), "{e}");
        let sc = scenario_text("dd-tmpfs").unwrap();
        assert_eq!(sc.source, "built-in:dd-tmpfs");
        let bad = |req: RunRequest| prepare(&sc, &req).unwrap_err().to_string();
        assert!(bad(RunRequest {
            kernel: Some("9.9".into()),
            ..Default::default()
        })
        .starts_with("--kernel: "));
        assert!(bad(RunRequest {
            features: Some("+nope".into()),
            ..Default::default()
        })
        .starts_with("--features: unknown feature `nope`"));
        let e = bad(RunRequest {
            sets: vec!["machine.nope=1".into()],
            ..Default::default()
        });
        assert!(e.contains("machine.nope"), "{e}");
    }

    /// A value only a later kernel takes is checked against `kernel`, not the scenario's
    /// own (dd-tmpfs names 4.2: swappiness 150 needs 5.8).
    #[test]
    fn the_requested_kernel_is_the_scenarios_for_its_checks() {
        let sc = scenario_text("dd-tmpfs").unwrap();
        let req = |kernel: Option<&str>| RunRequest {
            kernel: kernel.map(String::from),
            sets: vec!["vm.swappiness=150".into()],
            ..Default::default()
        };
        let e = prepare(&sc, &req(None)).unwrap_err().to_string();
        assert!(e.contains("from kernel 5.8"), "{e}");
        let p = prepare(&sc, &req(Some("6.18"))).expect("6.18 takes 150");
        assert_eq!(p.scenario.vm.swappiness, 150);
    }
}
