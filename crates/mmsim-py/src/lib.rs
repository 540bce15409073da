//! `mmsim._mmsim`: the native half of the Python package `mmsim` (python/mmsim,
//! docs/python.md). It is a thin layer over [`mmsim::api`]: scenarios travel as TOML text,
//! results as the JSON document `mmsim run --json` writes, and the Python side builds the
//! pandas objects. Every simulation runs with the GIL released, so Python threads run
//! simulations in parallel.
//!
//! Errors become the exception classes of `mmsim._errors` (ScenarioError, OptionError,
//! HostMemoryError, SimulationError, DocumentError), carrying the CLI's message.

use mmsim::api::{self, ApiError, RunRequest, ScenarioText};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// The Python exception for an [`ApiError`]: an instance of the matching class of
/// `mmsim._errors`, with `file`, `line`, `field` and `message` set for scenario errors.
fn to_py(py: Python<'_>, e: ApiError) -> PyErr {
    let class = match &e {
        ApiError::Scenario(_) => "ScenarioError",
        ApiError::Option(_) => "OptionError",
        ApiError::HostMemory(_) => "HostMemoryError",
        ApiError::Run(_) => "SimulationError",
        ApiError::Document(_) => "DocumentError",
    };
    let msg = e.to_string();
    let build = || -> PyResult<PyErr> {
        let cls = py.import("mmsim._errors")?.getattr(class)?;
        let exc = cls.call1((msg.clone(),))?;
        if let ApiError::Scenario(s) = &e {
            exc.setattr("file", s.file.clone())?;
            exc.setattr("line", s.line)?;
            exc.setattr("field", (!s.field.is_empty()).then(|| s.field.clone()))?;
            exc.setattr("message", s.message.clone())?;
        }
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|_| PyRuntimeError::new_err(msg))
}

/// Built-in scenarios: `[(name, description), ...]` as `mmsim scenarios` lists them.
#[pyfunction]
fn scenarios() -> Vec<(String, String)> {
    mmsim::scenario::builtin_scenarios()
        .iter()
        .map(|(n, d, _)| (n.to_string(), d.to_string()))
        .collect()
}

/// `(text, source)` of a built-in scenario (by name) or a TOML file (a name ending in
/// `.toml` or containing `/`). Raises ScenarioError for an unknown name or unreadable file.
#[pyfunction]
fn scenario_text(py: Python<'_>, name_or_path: &str) -> PyResult<(String, String)> {
    api::scenario_text(name_or_path)
        .map(|s| (s.text, s.source))
        .map_err(|e| to_py(py, ApiError::Scenario(e)))
}

#[allow(clippy::too_many_arguments)]
fn request(
    sets: Vec<String>,
    preset: String,
    features: Option<String>,
    kernel: Option<String>,
    policy: Option<String>,
    seed: Option<u64>,
    check: bool,
    max_steps: Option<u64>,
    max_host_mem: Option<String>,
) -> RunRequest {
    RunRequest {
        preset,
        features,
        kernel,
        policy,
        sets,
        seed,
        check,
        max_steps,
        max_host_mem,
    }
}

/// Check a run's input as `mmsim run` does before starting, without running it. Returns
/// the JSON of `{"scenario": <the validated scenario>, "features": {...}, "kernel": ...,
/// "policy": ...}`.
#[pyfunction]
#[pyo3(signature = (text, source, sets=Vec::new(), preset="patched".to_string(), features=None,
                    kernel=None, policy=None, seed=None, max_host_mem=None))]
#[allow(clippy::too_many_arguments)]
fn prepare(
    py: Python<'_>,
    text: String,
    source: String,
    sets: Vec<String>,
    preset: String,
    features: Option<String>,
    kernel: Option<String>,
    policy: Option<String>,
    seed: Option<u64>,
    max_host_mem: Option<String>,
) -> PyResult<String> {
    let sc = ScenarioText { text, source };
    let req = request(
        sets,
        preset,
        features,
        kernel,
        policy,
        seed,
        false,
        None,
        max_host_mem,
    );
    let p = api::prepare(&sc, &req).map_err(|e| to_py(py, e))?;
    let f = &p.options.features;
    let policy = f.policy.or(p.scenario.policy).unwrap_or_default();
    let doc = serde_json::json!({
        "scenario": p.scenario,
        "features": f.to_map(),
        "kernel": f.era.to_string(),
        "policy": policy.to_string(),
    });
    Ok(doc.to_string())
}

/// Run a scenario given as TOML text (the GIL is released while it runs) and return the
/// JSON document, byte for byte what `mmsim run --json PATH` writes for the same input.
#[pyfunction]
#[pyo3(signature = (text, source, sets=Vec::new(), preset="patched".to_string(), features=None,
                    kernel=None, policy=None, seed=None, check=false, max_steps=None,
                    max_host_mem=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: String,
    source: String,
    sets: Vec<String>,
    preset: String,
    features: Option<String>,
    kernel: Option<String>,
    policy: Option<String>,
    seed: Option<u64>,
    check: bool,
    max_steps: Option<u64>,
    max_host_mem: Option<String>,
) -> PyResult<String> {
    let sc = ScenarioText { text, source };
    let req = request(
        sets,
        preset,
        features,
        kernel,
        policy,
        seed,
        check,
        max_steps,
        max_host_mem,
    );
    py.detach(|| api::run_to_json(&sc, &req))
        .map_err(|e| to_py(py, e))
}

/// `mmsim replay` at one RAM size, from its command-line arguments after `replay` (the GIL
/// is released while it runs); returns the run's JSON document.
#[pyfunction]
fn replay(py: Python<'_>, argv: Vec<String>) -> PyResult<String> {
    let args = api::replay_args(&argv).map_err(|e| to_py(py, e))?;
    py.detach(|| api::replay(&args).map(|r| api::report_json(&r)))
        .map_err(|e| to_py(py, e))
}

/// `mmsim compare` of run documents `[(json_text, name_in_errors), ...]`: returns
/// `(names, tables_json, text)`, the tables as a JSON list of `{title, columns, rows}`.
#[pyfunction]
#[pyo3(signature = (docs, names=None, force=false))]
fn compare(
    py: Python<'_>,
    docs: Vec<(String, String)>,
    names: Option<Vec<String>>,
    force: bool,
) -> PyResult<(Vec<String>, String, String)> {
    use mmsim::report::stats::Direction;
    let c = api::compare(&docs, names, force).map_err(|e| to_py(py, e))?;
    let tables: Vec<serde_json::Value> = c
        .tables
        .iter()
        .map(|t| {
            let rows: Vec<serde_json::Value> = t
                .rows
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "stat": r.stat,
                        "name": r.name,
                        "values": r.values,
                        "pct": (0..r.values.len()).map(|i| r.pct(i)).collect::<Vec<_>>(),
                        "direction": match r.effective_direction() {
                            Direction::LowerIsBetter => "lower",
                            Direction::HigherIsBetter => "higher",
                        },
                        "neutral": r.neutral,
                    })
                })
                .collect();
            serde_json::json!({"title": t.title, "columns": t.columns, "rows": rows})
        })
        .collect();
    Ok((c.names, serde_json::Value::from(tables).to_string(), c.text))
}

/// The extension module.
#[pymodule]
fn _mmsim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEMA_VERSION", mmsim::run::SCHEMA_VERSION)?;
    m.add_function(wrap_pyfunction!(scenarios, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_text, m)?)?;
    m.add_function(wrap_pyfunction!(prepare, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    Ok(())
}
