//! The performance shapes of issue 13, shared by the benchmark (`benches/perf.rs`) and the
//! regression gate (`tests/all/perf_gate.rs`): a shape is an `mmsim run` of a built-in with
//! overrides, and a rule for the number of simulated pages it moves.
//!
//! Host instructions are counted under callgrind (`valgrind --tool=callgrind`), which is
//! deterministic for a given binary and independent of the machine's load; host time is
//! the wall time of the same run without valgrind.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// How a shape's simulated pages are counted from its JSON report.
#[derive(Clone, Copy, Debug)]
pub enum Pages {
    /// Bytes the tasks wrote, in pages (dd).
    Written,
    /// Bytes the tasks read with read(2), in pages (streaming read).
    Read,
    /// Pages of the mapped files the readers fault in and reclaim: ten times RAM
    /// (lru-file-mmap-read sizes its files at 10 × RAM in total).
    TenTimesRam,
}

/// One benchmark or gate shape.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Short name (the baseline's key).
    pub name: &'static str,
    /// Built-in scenario.
    pub scenario: &'static str,
    /// `--preset`.
    pub preset: &'static str,
    /// `--set` overrides.
    pub sets: Vec<String>,
    /// How to count its pages.
    pub pages: Pages,
}

fn shape(
    name: &'static str,
    scenario: &'static str,
    preset: &'static str,
    sets: &[&str],
    pages: Pages,
) -> Shape {
    Shape {
        name,
        scenario,
        preset,
        sets: sets.iter().map(|s| s.to_string()).collect(),
        pages,
    }
}

/// The four shapes of the benchmark (`cargo bench --bench perf`): dd write, streaming read
/// with reclaim, mapped fault-reclaim at 4 CPUs and the same at 48 CPUs (same RAM).
pub fn bench_shapes() -> Vec<Shape> {
    vec![
        shape("dd-write", "dd-blockfs", "patched", &[], Pages::Written),
        shape(
            "stream-read",
            "stream-read",
            "patched",
            &["machine.memory_per_node=256MiB"],
            Pages::Read,
        ),
        shape(
            "mmap-reclaim-4cpu",
            "lru-file-mmap-read",
            "patched",
            &[],
            Pages::TenTimesRam,
        ),
        shape(
            "mmap-reclaim-48cpu",
            "lru-file-mmap-read",
            "patched",
            &["machine.cpus_per_node=48"],
            Pages::TenTimesRam,
        ),
    ]
}

/// The gate's shapes: the same four, smaller (each a few seconds under callgrind), and
/// the vanilla mapped run (one IPI per unmapped page).
pub fn gate_shapes() -> Vec<Shape> {
    vec![
        shape(
            "dd-write",
            "dd-blockfs",
            "patched",
            &["machine.memory_per_node=512MiB"],
            Pages::Written,
        ),
        shape(
            "stream-read",
            "stream-read",
            "patched",
            &["machine.memory_per_node=64MiB"],
            Pages::Read,
        ),
        shape(
            "mmap-reclaim-4cpu",
            "lru-file-mmap-read",
            "patched",
            &["machine.memory_per_node=64MiB"],
            Pages::TenTimesRam,
        ),
        shape(
            "mmap-reclaim-4cpu-vanilla",
            "lru-file-mmap-read",
            "vanilla",
            &["machine.memory_per_node=64MiB"],
            Pages::TenTimesRam,
        ),
        shape(
            "mmap-reclaim-48cpu",
            "lru-file-mmap-read",
            "patched",
            &["machine.memory_per_node=64MiB", "machine.cpus_per_node=48"],
            Pages::TenTimesRam,
        ),
    ]
}

/// The `mmsim run` arguments of a shape, writing its report to `json`.
pub fn run_args(s: &Shape, json: &Path) -> Vec<String> {
    let mut a = vec![
        "run".to_string(),
        s.scenario.to_string(),
        "--preset".into(),
        s.preset.into(),
        "--json".into(),
        json.display().to_string(),
    ];
    for set in &s.sets {
        a.push("--set".into());
        a.push(set.clone());
    }
    a
}

/// Simulated pages of a finished shape, from its report.
pub fn pages_of(s: &Shape, report: &serde_json::Value) -> u64 {
    let tasks = report["tasks"].as_array().expect("tasks in the report");
    let sum = |key: &str| -> u64 {
        tasks
            .iter()
            .map(|t| t[key].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    match s.pages {
        Pages::Written => sum("write_bytes") / 4096,
        Pages::Read => sum("read_bytes") / 4096,
        Pages::TenTimesRam => {
            let m = &report["machine"];
            let ram = m["nodes"].as_u64().expect("machine.nodes")
                * m["memory_per_node_bytes"]
                    .as_u64()
                    .expect("machine.memory_per_node_bytes");
            10 * ram / 4096
        }
    }
}

/// True if `valgrind` can be run.
pub fn valgrind_available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One measured run.
#[derive(Clone, Copy, Debug)]
pub struct Measure {
    /// Simulated pages.
    pub pages: u64,
    /// Host instructions (callgrind's `Collected`).
    pub instructions: u64,
    /// Event hash of the run (the same before and after an optimisation).
    pub event_hash: u64,
}

impl Measure {
    /// Host instructions per simulated page.
    pub fn per_page(&self) -> f64 {
        self.instructions as f64 / self.pages.max(1) as f64
    }
}

fn tmp_json(tag: &str, s: &Shape) -> std::path::PathBuf {
    std::env::temp_dir().join(format!(
        "mmsim-perf-{}-{}-{}.json",
        tag,
        s.name,
        std::process::id()
    ))
}

fn read_report(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("the run's JSON report");
    let _ = std::fs::remove_file(path);
    serde_json::from_str(&text).expect("a JSON report")
}

fn event_hash(report: &serde_json::Value) -> u64 {
    report["event_hash"]
        .as_str()
        .and_then(|h| u64::from_str_radix(h, 16).ok())
        .unwrap_or(0)
}

/// Run a shape with `bin` under callgrind and count its instructions.
pub fn callgrind(bin: &Path, s: &Shape) -> Result<Measure, String> {
    let json = tmp_json("cg", s);
    let out = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            "--cache-sim=no",
        ])
        .arg(bin)
        .args(run_args(s, &json))
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{}: the run failed:\n{}", s.name, stderr));
    }
    let instructions = stderr
        .lines()
        .find_map(|l| {
            l.split_once("Collected :")
                .and_then(|(_, n)| n.trim().parse::<u64>().ok())
        })
        .ok_or_else(|| {
            format!(
                "{}: no `Collected :` line from callgrind:\n{stderr}",
                s.name
            )
        })?;
    let report = read_report(&json);
    Ok(Measure {
        pages: pages_of(s, &report),
        instructions,
        event_hash: event_hash(&report),
    })
}

/// Run a shape with `bin` natively; (host seconds, simulated pages).
pub fn timed(bin: &Path, s: &Shape) -> Result<(f64, u64), String> {
    let json = tmp_json("time", s);
    let t0 = std::time::Instant::now();
    let out = Command::new(bin)
        .args(run_args(s, &json))
        .output()
        .map_err(|e| format!("{}: {e}", bin.display()))?;
    let secs = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "{}: the run failed:\n{}",
            s.name,
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let report = read_report(&json);
    Ok((secs, pages_of(s, &report)))
}
