//! The performance benchmark of issue 13 (`cargo bench --bench perf`): four shapes — dd
//! write, streaming read with reclaim, mapped fault-reclaim at 4 CPUs, the same at 48 CPUs
//! (same RAM) — each printed as simulated pages per host second (best of three native
//! runs) and host instructions per simulated page (one run under callgrind, when valgrind
//! is installed), with the run's event hash (an optimisation must not change it).
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

fn measure(bin: &Path, s: &Shape, insns: bool) -> Row {
    let mut best = f64::MAX;
    let mut pages = 0;
    for _ in 0..3 {
        let (secs, p) = timed(bin, s).unwrap_or_else(|e| panic!("{e}"));
        best = best.min(secs);
        pages = p;
    }
    let (per_page, hash) = if insns {
        let m = callgrind(bin, s).unwrap_or_else(|e| panic!("{e}"));
        (Some(m.per_page()), Some(m.event_hash))
    } else {
        (None, None)
    };
    Row {
        pages_per_sec: pages as f64 / best,
        per_page,
        hash,
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
    println!(
        "{:<20} {:>14} {:>12} {:>18}",
        "shape", "pages/host s", "insns/page", "event hash"
    );
    for s in bench_shapes() {
        let now = measure(&bin, &s, insns);
        let fmt = |r: &Row| {
            format!(
                "{:>14.0} {:>12} {:>18}",
                r.pages_per_sec,
                r.per_page.map_or("-".into(), |p| format!("{p:.0}")),
                r.hash.map_or("-".into(), |h| format!("{h:016x}"))
            )
        };
        println!("{:<20} {}", s.name, fmt(&now));
        if let Some(b) = &base {
            let before = measure(b, &s, insns);
            println!("{:<20} {}", "  (base binary)", fmt(&before));
            let ratio = match (before.per_page, now.per_page) {
                (Some(b), Some(n)) => format!(", {:.2}x fewer instructions/page", b / n),
                _ => String::new(),
            };
            println!(
                "{:<20} {:.2}x pages/host s{}{}",
                "  (speed-up)",
                now.pages_per_sec / before.pages_per_sec,
                ratio,
                if before.hash != now.hash {
                    ", EVENT HASH DIFFERS"
                } else {
                    ""
                }
            );
        }
    }
}
