//! Replay throughput: requests per host second on a page-cache-hit-heavy trace (a hot set
//! that fits) and on a miss-heavy one (a cyclic scan over twice RAM), one-page objects each
//! in its own file (open, pread, close per request); and the hit-heavy trace with the objects
//! laid out as page ranges of one file opened up front (`object_map = "range"`: a pread per
//! request, as a cache keeping its objects in one big file does).
//!
//! Besides criterion's timing it prints requests per host second, the miss ratio and the
//! event hash of each (a semantics change shows), and then the ratio to libCacheSim's LRU
//! on the same trace at the same cache size, measured in the same run by
//! `scripts/libcachesim_compare.py` (docs/replay.md) — when its virtual environment
//! (`scripts/.venv-libcachesim`) exists or `MMSIM_BENCH_LIBCACHESIM=1` lets the script
//! create it (pip-installs `libcachesim`); `MMSIM_PERF_BIN=/path/to/mmsim` runs that binary
//! in the comparison (the profile-guided build). Last, host memory per distinct object: the peak
//! RSS of `mmsim replay` on 100,000 and on 400,000 distinct objects, and the slope.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "support/bench_bin.rs"]
mod bench_bin;
#[path = "../tests/common/peak_rss.rs"]
mod peak_rss;
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::{parse_scenario, Scenario};

const REQUESTS: u64 = 100_000;

/// The trace file of case `name`.
fn trace_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir()
        .join(format!("mmsim-bench-replay-{}", std::process::id()))
        .join(format!("{name}.txt"))
}

/// The replay of `ids` (a txt trace written for case `name`) at 32 MiB; `object_map`:
/// `file` (a file per object: open, pread, close per request) or `range` (one file opened
/// up front, a pread per request).
fn scenario(name: &str, object_map: &str, ids: impl Iterator<Item = u64>) -> Scenario {
    let p = trace_path(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    let text: String = ids.map(|i| format!("{i}\n")).collect();
    std::fs::write(&p, text).unwrap();
    let toml = format!(
        "name = \"bench-{name}\"\n[machine]\ncpus_per_node = 2\nmemory_per_node = \"32MiB\"\n\
         [[devices]]\nname = \"sda\"\npreset = \"ssd\"\nsize = \"4GiB\"\n\
         [[filesystems]]\nmount = \"/mnt\"\ntype = \"blockfs\"\ndevice = \"sda\"\n\
         [[tasks]]\nname = \"replay\"\nprogram = \"replay\"\ntrace = {:?}\nobject_map = {:?}\n",
        p.display().to_string(),
        object_map
    );
    parse_scenario(&toml, name, &[]).expect("scenario")
}

fn bench_replay(c: &mut Criterion) {
    // 32 MiB = 8192 pages: a hot set of 1000 pages hits; a loop over 16384 misses.
    let cases = [
        (
            "hit-heavy",
            scenario(
                "hit-heavy",
                "file",
                (0..REQUESTS).map(|i| (i * 7919) % 1000),
            ),
        ),
        (
            "miss-heavy",
            scenario("miss-heavy", "file", (0..REQUESTS).map(|i| i % 16384)),
        ),
        (
            "hit-heavy-range",
            scenario(
                "hit-heavy-range",
                "range",
                (0..REQUESTS).map(|i| (i * 7919) % 1000),
            ),
        ),
    ];
    let opts = RunOptions::default();
    let mut g = c.benchmark_group("replay");
    g.sample_size(10);
    g.throughput(Throughput::Elements(REQUESTS));
    for (name, sc) in &cases {
        let t0 = std::time::Instant::now();
        let r = run_scenario(sc, &opts, &mut |_| {}).expect("run");
        let secs = t0.elapsed().as_secs_f64();
        let t = &r.replay.as_ref().expect("replay").tasks[0];
        println!(
            "replay {name}: {} requests, page miss ratio {:.4}, {:.0} requests per host second, event hash {}",
            t.counters.requests,
            t.page_miss_ratio,
            REQUESTS as f64 / secs,
            r.event_hash
        );
        g.bench_function(*name, |b| {
            b.iter(|| run_scenario(sc, &opts, &mut |_| {}).expect("run"))
        });
    }
    g.finish();
    for (name, sc) in &cases {
        let range = sc.tasks[0]
            .program
            .get::<mmsim::workload::replay::ReplaySpec>()
            .is_some_and(|r| r.object_map == mmsim::workload::replay::ObjectMap::Range);
        versus_libcachesim(name, range);
    }
    memory_per_object();
}

/// mmsim (classic) and libCacheSim's LRU on the trace of case `name`, one run of the
/// comparison script: both throughputs measured side by side.
fn versus_libcachesim(name: &str, range: bool) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("scripts/libcachesim_compare.py");
    let have_venv = root.join("scripts/.venv-libcachesim/bin/python").exists();
    if !have_venv && std::env::var_os("MMSIM_BENCH_LIBCACHESIM").is_none() {
        println!(
            "replay {name} vs libCacheSim LRU: skipped (set MMSIM_BENCH_LIBCACHESIM=1 to let \
             scripts/libcachesim_compare.py install libcachesim into its venv)"
        );
        return;
    }
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(trace_path(name))
        .args([
            "--format",
            "txt",
            "--ram",
            "32MiB",
            "--policies",
            "LRU",
            "--repeat",
            "5",
        ])
        .args([
            "--mmsim-policies",
            "classic",
            "--mmsim",
            bench_bin::mmsim_bin().to_str().expect("a UTF-8 path"),
        ])
        .args(if range {
            &["--mmsim-args", "--object-map range"][..]
        } else {
            &[]
        })
        .output();
    match out {
        Ok(o) if o.status.success() => {
            println!("replay {name} vs libCacheSim LRU (same trace, same cache size, measured side by side):");
            print!("{}", String::from_utf8_lossy(&o.stdout));
        }
        Ok(o) => println!(
            "replay {name} vs libCacheSim LRU: the script failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => println!("replay {name} vs libCacheSim LRU: cannot run python3: {e}"),
    }
}

/// Peak RSS in bytes of `mmsim replay TRACE --format txt --ram 256MiB` (its own process).
fn replay_peak_rss(trace: &std::path::Path) -> u64 {
    peak_rss::peak_rss(
        std::process::Command::new(env!("CARGO_BIN_EXE_mmsim"))
            .arg("replay")
            .arg(trace)
            .args(["--format", "txt", "--ram", "256MiB"]),
    )
}

/// Host memory per distinct object: the peak RSS of replays of 100,000 and 400,000
/// distinct objects (one request each), and the slope between them.
fn memory_per_object() {
    let ids = |n: u64| (0..n).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24);
    let small = trace_path("distinct-100k");
    let large = trace_path("distinct-400k");
    for (p, n) in [(&small, 100_000), (&large, 400_000)] {
        let text: String = ids(n).map(|i| format!("{i}\n")).collect();
        std::fs::write(p, text).expect("trace written");
    }
    let (a, b) = (replay_peak_rss(&small), replay_peak_rss(&large));
    println!(
        "replay memory: peak RSS {:.1} MB at 100,000 distinct objects, {:.1} MB at 400,000: \
         {:.0} bytes per object",
        a as f64 / 1e6,
        b as f64 / 1e6,
        b.saturating_sub(a) as f64 / 300_000.0
    );
}

criterion_group!(benches, bench_replay);
criterion_main!(benches);
