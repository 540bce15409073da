//! Swap slot allocation through the engine (`mm/swap_cluster.rs`): two cgroups, each with a
//! task on its own CPU writing past its memory.max, swap out by memcg reclaim on their own
//! CPUs. With per-CPU clusters (v3.14, `swap-percpu-cluster`, an SSD) or 6.14's cluster
//! lists, each cluster holds the pages of one cgroup; with the next-fit scan alone the two
//! reclaimers' runs interleave in the same clusters.

use crate::common;

use common::{build_sim, build_sim_on};
use mmsim::kernel::{resolve_features, KernelEra};
use mmsim::mm::page::NIL;
use mmsim::mm::swap_cluster::SWAPFILE_CLUSTER;
use mmsim::sim::{RunEnd, Sim};

const TWO_CGROUPS: &str = r#"name = "clusters"

[machine]
cpus_per_node = 2
memory_per_node = "256MiB"

[swap]
size = "256MiB"
preset = "ssd"

[[cgroups]]
name = "a"
memory_max = "8MiB"

[[cgroups]]
name = "b"
memory_max = "8MiB"

[[tasks]]
name = "a"
cpu = 0
cgroup = "a"
program = "anon"
size = "24MiB"
passes = 2

[[tasks]]
name = "b"
cpu = 1
cgroup = "b"
program = "anon"
size = "24MiB"
passes = 2
"#;

/// The machine on `era` with `features` ("+x,-y") on top, the invariant checker on.
fn machine(era: KernelEra, features: &str) -> Sim {
    let mut sim = build_sim_on(TWO_CGROUPS, "clusters.toml", era, features);
    sim.check = true;
    sim
}

/// Run until `slots` swap slots are in use, then count the clusters holding pages of
/// both cgroups and those holding one cgroup's.
fn mixed_and_single_clusters(sim: &mut Sim, slots: usize) -> (usize, usize) {
    loop {
        let step_limit = sim.steps + 500;
        let end = sim.run(step_limit);
        assert!(
            matches!(end, RunEnd::StepLimit),
            "the tasks ended before {slots} slots were in use: {end:?}"
        );
        let sw = sim.swap.as_ref().unwrap();
        let used = sw
            .swap_map
            .iter()
            .zip(&sw.cache)
            .filter(|(&m, &c)| m != 0 || c != NIL)
            .count();
        if used >= slots {
            break;
        }
    }
    let sw = sim.swap.as_ref().unwrap();
    let (mut mixed, mut single) = (0, 0);
    for lo in (0..sw.swap_map.len()).step_by(SWAPFILE_CLUSTER as usize) {
        let mut owners: Vec<_> = (lo..lo + SWAPFILE_CLUSTER as usize)
            .filter(|&o| sw.swap_map[o] != 0 || sw.cache[o] != NIL)
            .map(|o| sim.swap_cgroup[o])
            .collect();
        owners.sort_unstable();
        owners.dedup();
        match owners.len() {
            0 => {}
            1 => single += 1,
            _ => mixed += 1,
        }
    }
    (mixed, single)
}

#[test]
fn per_cpu_clusters_keep_each_reclaimers_slots_apart() {
    for (era, features) in [
        (KernelEra::V4_2, ""),
        (KernelEra::V6_18, ""),
        (KernelEra::V6_18, "-swap-cluster-lists"),
    ] {
        let mut sim = machine(era, features);
        let (mixed, single) = mixed_and_single_clusters(&mut sim, 6000);
        assert_eq!(
            mixed, 0,
            "{era:?} {features}: clusters with both cgroups' pages"
        );
        assert!(single >= 20, "{era:?} {features}: {single} clusters in use");
    }
}

#[test]
fn the_next_fit_scan_interleaves_the_reclaimers() {
    let mut sim = machine(KernelEra::V4_2, "-swap-percpu-cluster");
    assert!(sim.swap.as_ref().unwrap().clusters.is_none());
    let (mixed, _) = mixed_and_single_clusters(&mut sim, 6000);
    assert!(mixed >= 2, "only {mixed} clusters mix the cgroups' pages");
}

#[test]
fn an_hdd_has_clusters_only_with_the_lists() {
    let text = TWO_CGROUPS.replace("preset = \"ssd\"", "preset = \"hdd\"");
    for (era, want) in [(KernelEra::V4_2, false), (KernelEra::V6_18, true)] {
        let sc = mmsim::scenario::parse_scenario(&text, "hdd.toml", &[]).unwrap();
        let f = resolve_features(Some(era), None, "vanilla", &sc.features, None).unwrap();
        let sim = build_sim(&text, "hdd.toml", f);
        assert_eq!(
            sim.swap.as_ref().unwrap().clusters.is_some(),
            want,
            "{era:?}"
        );
    }
}
