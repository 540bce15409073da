//! Replay throughput: requests per host second on a page-cache-hit-heavy trace (a hot set
//! that fits) and on a miss-heavy one (a cyclic scan over twice RAM), one-page objects.
//!
//! Besides criterion's timing it prints requests per host second, the miss ratio and the
//! event hash of each (a semantics change shows). The ratio to libCacheSim's LRU on the
//! same trace is measured by `scripts/libcachesim_compare.py` (docs/replay.md).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::{parse_scenario, Scenario};

const REQUESTS: u64 = 100_000;

fn scenario(name: &str, ids: impl Iterator<Item = u64>) -> Scenario {
    let dir = std::env::temp_dir().join(format!("mmsim-bench-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.txt"));
    let text: String = ids.map(|i| format!("{i}\n")).collect();
    std::fs::write(&p, text).unwrap();
    let toml = format!(
        "name = \"bench-{name}\"\n[machine]\ncpus_per_node = 2\nmemory_per_node = \"32MiB\"\n\
         [[devices]]\nname = \"sda\"\npreset = \"ssd\"\nsize = \"4GiB\"\n\
         [[filesystems]]\nmount = \"/mnt\"\ntype = \"blockfs\"\ndevice = \"sda\"\n\
         [[tasks]]\nname = \"replay\"\nprogram = \"replay\"\ntrace = {:?}\n",
        p.display().to_string()
    );
    parse_scenario(&toml, name, &[]).expect("scenario")
}

fn bench_replay(c: &mut Criterion) {
    // 32 MiB = 8192 pages: a hot set of 1000 pages hits; a loop over 16384 misses.
    let cases = [
        (
            "hit-heavy",
            scenario("hit-heavy", (0..REQUESTS).map(|i| (i * 7919) % 1000)),
        ),
        (
            "miss-heavy",
            scenario("miss-heavy", (0..REQUESTS).map(|i| i % 16384)),
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
}

criterion_group!(benches, bench_replay);
criterion_main!(benches);
