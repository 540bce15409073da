//! The performance shapes of issue 13, shared by the benchmark (`benches/perf.rs`) and the
//! regression gate (`tests/all/perf_gate.rs`): a shape is an `mmsim run` of a built-in with
//! overrides, and a rule for the number of simulated pages it moves — or an `mmsim replay`
//! of a generated hit-heavy trace (issue 14's throughput), counted per request.
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
    /// Requests a replay issued (a replay shape's unit: its "page" is a request).
    Requests,
}

/// A replay shape: `mmsim replay` of the hit-heavy trace ([`hit_trace`]) on 32 MiB.
#[derive(Clone, Debug)]
pub struct ReplayShape {
    /// `--object-map`: `file` (open, pread, close per request) or `range` (one pread).
    pub object_map: &'static str,
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
    /// A replay of the hit-heavy trace instead of a run of `scenario`.
    pub replay: Option<ReplayShape>,
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
        replay: None,
    }
}

/// A replay shape of the hit-heavy trace with `--object-map object_map`.
fn replay_shape(name: &'static str, object_map: &'static str) -> Shape {
    Shape {
        name,
        scenario: "replay",
        preset: "patched",
        sets: Vec::new(),
        pages: Pages::Requests,
        replay: Some(ReplayShape { object_map }),
    }
}

/// The hit-heavy trace of the replay shapes (and of issue 14's benchmark): 100,000
/// requests, object `(i * 7919) % 1000` for request `i`, one id per line — 1,000 one-page
/// objects, all cached after their first request on 32 MiB. Written once per process.
pub fn hit_trace() -> std::path::PathBuf {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let p = std::env::temp_dir().join(format!("mmsim-perf-hit-{}.txt", std::process::id()));
        let text: String = (0..100_000u64)
            .map(|i| format!("{}\n", (i * 7919) % 1000))
            .collect();
        std::fs::write(&p, text).expect("write the hit-heavy trace");
        p
    })
    .clone()
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

/// The gate's shapes: the same four, smaller (each a few seconds under callgrind), the
/// vanilla mapped run (one IPI per unmapped page), and the two hit-heavy replays (per
/// request).
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
        // Issue 14's hit-heavy replay throughput, per request: a file per object (three
        // engine steps a request) and the range layout (one).
        replay_shape("replay-hit-file", "file"),
        replay_shape("replay-hit-range", "range"),
    ]
}

/// The `mmsim run` (or `mmsim replay`) arguments of a shape, writing its report to `json`.
pub fn run_args(s: &Shape, json: &Path) -> Vec<String> {
    if let Some(r) = &s.replay {
        return [
            "replay",
            &hit_trace().display().to_string(),
            "--format",
            "txt",
            "--ram",
            "32MiB",
            "--object-map",
            r.object_map,
            "--preset",
            s.preset,
            "--json",
            &json.display().to_string(),
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
    }
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
        Pages::Requests => report["replay"]["tasks"][0]["requests"]
            .as_u64()
            .expect("a replay report's requests"),
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
