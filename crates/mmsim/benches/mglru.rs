//! Host cost of the MGLRU policy against the classic LRU on the same scenarios, 6.18
//! rules: a 2 GiB file read twice on 512 MiB (`stream`: eviction only, the stream lands in
//! the oldest generation), and the `mglru-anon-stream` built-in scaled to 256 MiB (`walk`:
//! a mapped anon working set under a stream read through a mapping, where the aging walks
//! page tables).
//!
//! Prints, per scenario, simulated pages per host second under each policy and the
//! MGLRU / classic ratio of host cost per page (target: at most 1.3), then criterion's
//! timing of each run.

use criterion::{criterion_group, criterion_main, Criterion};
use mmsim::kernel::KernelEra;
use mmsim::mm::policy::ReclaimPolicy;
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::{load_scenario, parse_scenario, Scenario};

const STREAM: &str = r#"
name = "mglru-bench-stream"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "512MiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "64GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/big"
size = "2GiB"
[[tasks]]
name = "stream"
cpu = 0
program = "read"
path = "/data/big"
block_size = "1MiB"
passes = 2
"#;

fn scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        ("stream", parse_scenario(STREAM, "bench", &[]).unwrap()),
        (
            "walk",
            load_scenario(
                "mglru-anon-stream",
                &["machine.memory_per_node=256MiB".to_string()],
            )
            .unwrap(),
        ),
    ]
}

fn opts(policy: ReclaimPolicy) -> RunOptions {
    let mut features = KernelEra::V6_18.features("patched").unwrap();
    features.policy = Some(policy);
    RunOptions {
        features,
        ..Default::default()
    }
}

/// Simulated pages moved through the page cache or the page tables: read bytes, faults.
fn pages(r: &mmsim::run::RunReport) -> u64 {
    r.tasks
        .iter()
        .map(|t| t.read_bytes / 4096 + t.majflt + t.minflt)
        .sum()
}

fn bench_mglru(c: &mut Criterion) {
    for (name, sc) in scenarios() {
        let mut per_page = Vec::new();
        for policy in [ReclaimPolicy::Classic, ReclaimPolicy::Mglru] {
            let t0 = std::time::Instant::now();
            let r = run_scenario(&sc, &opts(policy), &mut |_| {}).expect("run");
            let secs = t0.elapsed().as_secs_f64();
            let n = pages(&r);
            println!(
                "{name} {policy}: {n} pages, {:.2} M simulated pages per host second",
                n as f64 / secs / 1e6
            );
            per_page.push(secs / n as f64);
        }
        println!(
            "{name}: host cost per page, mglru / classic: {:.3} (target <= 1.3)",
            per_page[1] / per_page[0]
        );
    }
    let mut g = c.benchmark_group("mglru");
    g.sample_size(10);
    for (name, sc) in scenarios() {
        for policy in [ReclaimPolicy::Classic, ReclaimPolicy::Mglru] {
            let o = opts(policy);
            g.bench_function(format!("{name}/{policy}"), |b| {
                b.iter(|| run_scenario(&sc, &o, &mut |_| {}).expect("run"))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench_mglru);
criterion_main!(benches);
