//! Determinism: every built-in scenario, run twice at small scale, gives the same event
//! hash and the same JSON document, byte for byte.

use crate::common;

use common::{run_sc, small_builtins};
use mmsim::scenario::load_scenario;

/// Small scale (`small_builtins`: little RAM, file sizes follow `ram`), and a step bound so
/// the large built-ins stop early — a run cut at the same step must still be identical.
const SMALL: &str = "machine.memory_per_node=32MiB";
const MAX_STEPS: u64 = 40_000;

#[test]
fn every_builtin_runs_twice_identically() {
    for (name, sc) in small_builtins() {
        // The built-in's own era (and so its policy: MGLRU needs 6.1).
        let f = mmsim::kernel::resolve_features(sc.kernel, None, "patched", &sc.features, None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let a = run_sc(&sc, f.clone(), false, MAX_STEPS);
        let b = run_sc(&sc, f, false, MAX_STEPS);
        assert_eq!(a.event_hash, b.event_hash, "{name}: event hashes differ");
        assert!(a.steps > 0, "{name} ran");
        let (ja, jb) = (
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap(),
        );
        assert!(ja == jb, "{name}: the JSON documents differ");
    }
}

/// `opts` with step fusion on and off.
fn fused_and_not(
    sc: &mmsim::scenario::Scenario,
    features: mmsim::sim::Features,
    max_steps: u64,
) -> (mmsim::run::RunReport, mmsim::run::RunReport) {
    let run = |step_fusion| {
        let opts = mmsim::run::RunOptions {
            features: features.clone(),
            max_steps,
            step_fusion,
            ..Default::default()
        };
        mmsim::run::run_scenario(sc, &opts, &mut |_| {}).expect("run")
    };
    (run(true), run(false))
}

/// The JSON of a report without what the host's speed moves (a replay's host time).
fn without_host_time(r: &mmsim::run::RunReport) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    if let Some(rep) = v.get_mut("replay").and_then(|x| x.as_object_mut()) {
        rep.remove("host_seconds");
        rep.remove("host_requests_per_s");
    }
    v
}

/// Step fusion (a task going on to its next step inside one engine step when the engine
/// would pick it next anyway) changes nothing: every built-in, on its own era and on 6.18,
/// cut at a step limit that falls inside a run of fused steps or not, gives the same JSON
/// document with it and without it.
#[test]
fn step_fusion_changes_no_result() {
    for (name, sc) in small_builtins() {
        for (kernel, max_steps) in [
            (sc.kernel, MAX_STEPS),
            (Some(mmsim::kernel::KernelEra::V6_18), 12_345),
        ] {
            let f = mmsim::kernel::resolve_features(kernel, None, "patched", &sc.features, None)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let (a, b) = fused_and_not(&sc, f, max_steps);
            assert_eq!(a.steps, b.steps, "{name} on {kernel:?}: steps");
            assert_eq!(
                a.event_hash, b.event_hash,
                "{name} on {kernel:?}: event hashes"
            );
            assert!(
                without_host_time(&a) == without_host_time(&b),
                "{name} on {kernel:?}: the JSON documents differ"
            );
        }
    }
}

/// Steps are fused where the engine would pick the same task next: a lone dd on tmpfs
/// runs most of its steps fused; with the switch off none.
#[test]
fn step_fusion_fuses_a_lone_tasks_steps() {
    let sc = load_scenario("dd-tmpfs", &[SMALL.to_string()]).expect("scenario");
    let f = mmsim::kernel::resolve_features(sc.kernel, None, "patched", &sc.features, None)
        .expect("features");
    let run = |on, limit| {
        let mut sim = mmsim::sim::Sim::new(&sc, f.clone()).expect("sim");
        sim.step_fusion = on;
        let end = sim.run(limit);
        (end, sim.steps, sim.fused_steps, sim.event_hash)
    };
    let (end, steps, fused, hash) = run(true, u64::MAX);
    assert_eq!(end, mmsim::sim::RunEnd::Completed);
    assert!(fused * 2 > steps, "{fused} of {steps} steps fused");
    assert_eq!(run(false, u64::MAX), (end, steps, 0, hash));
    // Cut in the middle of a run of fused steps: the limit holds exactly.
    let cut = steps / 2 + 1;
    let (end, at, fused, hash) = run(true, cut);
    assert_eq!((&end, at), (&mmsim::sim::RunEnd::StepLimit, cut));
    assert!(fused > 0);
    assert_eq!(run(false, cut), (end, at, 0, hash));
}

/// The same over random scenarios (the swarm's generator: random machines, devices,
/// cgroups, features and task mixes, replays included), cut at a step limit.
#[test]
fn step_fusion_changes_no_result_on_random_scenarios() {
    for seed in 0..48u64 {
        let case = mmsim::swarm::generate(seed);
        let sc = mmsim::scenario::parse_scenario(&case.toml, &format!("swarm:{seed}"), &[])
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let f =
            mmsim::swarm::case_features(&sc, None).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        let (a, b) = fused_and_not(&sc, f, 20_000 + seed * 101);
        assert_eq!(a.event_hash, b.event_hash, "seed {seed}: {}", case.summary);
        assert!(
            without_host_time(&a) == without_host_time(&b),
            "seed {seed}: the JSON documents differ ({})",
            case.summary
        );
    }
}
