//! The performance benchmark of issue 13 (`cargo bench --bench perf`): four shapes — dd
//! write, streaming read with reclaim, mapped fault-reclaim at 4 CPUs, the same at 48 CPUs
//! (same RAM) — each printed as simulated pages per host second (the fastest of
//! `MMSIM_PERF_RUNS` rounds, default 5, each running every shape on every binary in turn)
//! and host instructions per simulated page (one run under callgrind, when valgrind is
//! installed), with the run's event hash (an optimisation must not change it); then the
//! host cost per page at 48 CPUs over that at 4 (issue 13's bound).
//!
//! `MMSIM_PERF_BASE_BIN=/path/to/old/mmsim` measures that binary too, in the same run, and
//! prints the ratios (before/after figures of an optimisation). `MMSIM_PERF_BIN=/path/to/mmsim`
//! measures that binary instead of cargo's (e.g. the profile-guided build of
//! `scripts/build-pgo`). `MMSIM_BENCH_NO_CALLGRIND=1` skips the instruction counts.

#[path = "support/bench_bin.rs"]
mod bench_bin;
#[path = "../tests/perf_shapes/mod.rs"]
mod perf_shapes;

use perf_shapes::{bench_shapes, callgrind, timed, valgrind_available, Shape};
use std::path::{Path, PathBuf};

struct Row {
    pages_per_sec: f64,
    per_page: Option<f64>,
    hash: Option<u64>,
}

/// `MMSIM_PERF_RUNS`: timed rounds (default 5); exits with status 2 on a value that is not
/// a positive count.
fn runs() -> usize {
    match std::env::var("MMSIM_PERF_RUNS") {
        Err(_) => 5,
        Ok(v) => match v.parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("MMSIM_PERF_RUNS: {v:?} is not a positive number of runs");
                std::process::exit(2);
            }
        },
    }
}

/// Host time of every shape on every binary: `runs` rounds, each running every shape once
/// on each binary in turn, so that a slow minute of a shared machine falls on all of them;
/// each keeps its fastest run. Returns `[binary][shape]` = (seconds, pages).
fn time_interleaved(bins: &[&Path], shapes: &[Shape], runs: usize) -> Vec<Vec<(f64, u64)>> {
    let mut best = vec![vec![(f64::MAX, 0u64); shapes.len()]; bins.len()];
    for _ in 0..runs {
        for (si, s) in shapes.iter().enumerate() {
            for (bi, bin) in bins.iter().enumerate() {
                let (secs, pages) = timed(bin, s).unwrap_or_else(|e| panic!("{e}"));
                let b = &mut best[bi][si];
                if secs < b.0 {
                    *b = (secs, pages);
                }
            }
        }
    }
    best
}

/// The rows of one binary: its best times, and its instruction counts under callgrind.
fn rows(bin: &Path, shapes: &[Shape], best: &[(f64, u64)], insns: bool) -> Vec<Row> {
    shapes
        .iter()
        .zip(best)
        .map(|(s, &(secs, pages))| {
            let (per_page, hash) = if insns {
                let m = callgrind(bin, s).unwrap_or_else(|e| panic!("{e}"));
                (Some(m.per_page()), Some(m.event_hash))
            } else {
                (None, None)
            };
            Row {
                pages_per_sec: pages as f64 / secs,
                per_page,
                hash,
            }
        })
        .collect()
}

fn fmt_row(r: &Row) -> String {
    format!(
        "{:>14.0} {:>12} {:>18}",
        r.pages_per_sec,
        r.per_page.map_or("-".into(), |p| format!("{p:.0}")),
        r.hash.map_or("-".into(), |h| format!("{h:016x}"))
    )
}

/// Issue 13's bound: host cost per page at 48 simulated CPUs over that at 4 (same RAM).
fn cpu_scaling(label: &str, shapes: &[Shape], rows: &[Row]) {
    let at = |name: &str| shapes.iter().position(|s| s.name == name).map(|i| &rows[i]);
    if let (Some(four), Some(many)) = (at("mmap-reclaim-4cpu"), at("mmap-reclaim-48cpu")) {
        let insns = match (four.per_page, many.per_page) {
            (Some(a), Some(b)) => format!(", instructions {:.3}x", b / a),
            _ => String::new(),
        };
        println!(
            "{label}: host time per page at 48 CPUs / 4 CPUs {:.3}x{insns} (target: at most 1.15x)",
            four.pages_per_sec / many.pages_per_sec
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this too: only measure
    // when benchmarking.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let bin = bench_bin::mmsim_bin();
    let base = std::env::var_os("MMSIM_PERF_BASE_BIN").map(PathBuf::from);
    let insns = std::env::var_os("MMSIM_BENCH_NO_CALLGRIND").is_none() && valgrind_available();
    if !insns {
        println!("(instructions per page not measured: valgrind missing or MMSIM_BENCH_NO_CALLGRIND set)");
    }
    let runs = runs();
    let shapes = bench_shapes();
    let mut bins: Vec<&Path> = vec![&bin];
    if let Some(b) = &base {
        bins.push(b);
    }
    let best = time_interleaved(&bins, &shapes, runs);
    let now = rows(&bin, &shapes, &best[0], insns);
    let before = base.as_ref().map(|b| rows(b, &shapes, &best[1], insns));
    println!("(pages/host s: the fastest of {runs} rounds over every shape and binary)");
    println!(
        "{:<20} {:>14} {:>12} {:>18}",
        "shape", "pages/host s", "insns/page", "event hash"
    );
    for (i, s) in shapes.iter().enumerate() {
        println!("{:<20} {}", s.name, fmt_row(&now[i]));
        if let Some(before) = &before {
            let (b, n) = (&before[i], &now[i]);
            println!("{:<20} {}", "  (base binary)", fmt_row(b));
            let ratio = match (b.per_page, n.per_page) {
                (Some(b), Some(n)) => format!(", {:.2}x fewer instructions/page", b / n),
                _ => String::new(),
            };
            println!(
                "{:<20} {:.2}x pages/host s{}{}",
                "  (speed-up)",
                n.pages_per_sec / b.pages_per_sec,
                ratio,
                if b.hash != n.hash {
                    ", EVENT HASH DIFFERS"
                } else {
                    ""
                }
            );
        }
    }
    cpu_scaling("this binary", &shapes, &now);
    if let Some(before) = &before {
        cpu_scaling("base binary", &shapes, before);
    }
}
