//! Host cost of memory cgroups: the same streaming workload under global reclaim on the
//! 6.18 rules, with its task in the root cgroup (`root`) and in a memory cgroup without a
//! limit (`memcg`: every page charged, reclaim walking the memcgs); and, for reference,
//! limit reclaim of a 256 MiB cgroup (`memcg-limit`).
//!
//! Prints simulated pages read per host second and the memcg/root ratio of host cost per
//! page (target: at most 1.2), then criterion's timing of each.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mmsim::kernel::KernelEra;
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::{parse_scenario, CgroupSpec, Scenario};

const TEXT: &str = r#"
name = "memcg-bench"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "MEM"
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

fn in_cgroup(mem: &str, max: Option<u64>) -> Scenario {
    let mut sc = parse_scenario(&TEXT.replace("MEM", mem), "bench", &[]).unwrap();
    sc.cgroups = vec![CgroupSpec {
        name: "box".into(),
        memory_max: max,
        memory_high: None,
        memory_low: 0,
        memory_min: 0,
        swap_max: None,
        swap_high: None,
        oom_group: false,
        zswap_max: None,
        zswap_writeback: true,
        memsw_max: None,
        soft_limit: None,
        swappiness: None,
    }];
    sc.tasks[0].cgroup = Some("box".into());
    sc
}

/// A 2 GiB file read twice on 512 MiB: root, unlimited cgroup, and a 256 MiB cgroup on
/// 2 GiB.
fn scenarios() -> [(&'static str, Scenario); 3] {
    let root = parse_scenario(&TEXT.replace("MEM", "512MiB"), "bench", &[]).unwrap();
    [
        ("root", root),
        ("memcg", in_cgroup("512MiB", None)),
        ("memcg-limit", in_cgroup("2GiB", Some(256 << 20))),
    ]
}

fn bench_memcg(c: &mut Criterion) {
    let opts = RunOptions {
        features: KernelEra::V6_18.features("patched").unwrap(),
        ..Default::default()
    };
    let mut per_page = Vec::new();
    for (name, sc) in scenarios() {
        let t0 = std::time::Instant::now();
        let r = run_scenario(&sc, &opts, &mut |_| {}).expect("run");
        let secs = t0.elapsed().as_secs_f64();
        let pages = r.tasks.iter().map(|t| t.read_bytes).sum::<u64>() / 4096;
        let scanned = r.vmstat["pgscan_file"];
        println!(
            "{name}: {pages} pages read, {scanned} scanned, {:.2} M simulated pages per host second, event hash {}",
            pages as f64 / secs / 1e6,
            r.event_hash
        );
        per_page.push(secs / pages as f64);
    }
    println!(
        "host cost per page, memcg / root: {:.3} (target <= 1.2)",
        per_page[1] / per_page[0]
    );
    let mut g = c.benchmark_group("memcg-stream");
    g.sample_size(10);
    for (name, sc) in scenarios() {
        g.throughput(Throughput::Elements(4 << 18));
        g.bench_function(name, |b| {
            b.iter(|| run_scenario(&sc, &opts, &mut |_| {}).expect("run"))
        });
    }
    g.finish();
}

criterion_group!(benches, bench_memcg);
criterion_main!(benches);
