//! Throughput benchmark: simulated pages written per host second on dd-tmpfs (one core).
//!
//! Besides criterion's timing, it prints the figure the issue asks for directly and the
//! run's event hash, so an "optimisation" that changes semantics shows.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::load_scenario;
use mmsim::sim::Features;

fn bench_dd(c: &mut Criterion) {
    let sets = vec![
        "machine.memory_per_node=1GiB".to_string(),
        "tasks.dd.iterations=5".to_string(),
    ];
    let sc = load_scenario("dd-tmpfs", &sets).expect("scenario");
    let opts = RunOptions {
        features: Features::patched(),
        ..Default::default()
    };
    let probe = run_scenario(&sc, &opts, &mut |_| {}).expect("run");
    let pages = probe.tasks.iter().map(|t| t.write_bytes).sum::<u64>() / 4096;
    let t0 = std::time::Instant::now();
    let r = run_scenario(&sc, &opts, &mut |_| {}).expect("run");
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "dd-tmpfs 1 GiB x5: {} pages written, {:.2} million simulated pages per host second, event hash {}",
        pages,
        pages as f64 / secs / 1e6,
        r.event_hash
    );
    let mut g = c.benchmark_group("dd-tmpfs");
    g.sample_size(10);
    g.throughput(Throughput::Elements(pages));
    for (name, f) in [
        ("patched", Features::patched()),
        ("vanilla", Features::vanilla()),
    ] {
        let o = RunOptions {
            features: f,
            ..Default::default()
        };
        g.bench_function(name, |b| {
            b.iter(|| run_scenario(&sc, &o, &mut |_| {}).expect("run"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_dd);
criterion_main!(benches);
