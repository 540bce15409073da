//! Determinism: every built-in scenario, run twice at small scale, gives the same event
//! hash and the same JSON document, byte for byte.

use crate::common;

use common::run_sc;
use mmsim::scenario::{builtin_scenarios, load_scenario};

/// Small scale: little RAM (file sizes follow `ram`), and a step bound so the large
/// built-ins stop early — a run cut at the same step must still be identical.
const SMALL: &str = "machine.memory_per_node=32MiB";
const MAX_STEPS: u64 = 40_000;

#[test]
fn every_builtin_runs_twice_identically() {
    for (name, _, _) in builtin_scenarios() {
        let sc = load_scenario(name, &[SMALL.to_string()])
            .or_else(|_| load_scenario(name, &[]))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
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
