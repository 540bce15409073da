//! Mutated built-in scenarios (issue 18): every built-in's TOML with values swapped between
//! keys, values scaled to extremes or replaced by boundary values, and lines deleted, must
//! load into a clear error (naming the file) or a run that ends — completed, stopped at the
//! step cap, or refused by the host-memory guard — never a panic, an arithmetic overflow
//! or a hang. The test suite builds the release profile with overflow checks on
//! (`Cargo.toml`), so a value that would wrap panics here instead of running silently as
//! something the file does not say.
//!
//! Each case shrinks the machine first (`memory_per_node = "32MiB"`, as the determinism
//! test does; a mutation may change it back), runs at most `MAX_STEPS` engine steps and
//! refuses machines the host-memory estimate puts above `MAX_HOST_BYTES`, so a case takes
//! milliseconds. A case that takes longer than `CASE_TIMEOUT` of wall time is a hang.

use std::cell::RefCell;
use std::sync::mpsc;
use std::time::Duration;

use mmsim::kernel::resolve_features;
use mmsim::run::{estimate_host_memory, run_scenario, RunOptions};
use mmsim::scenario::{builtin_scenarios, parse_scenario};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// Mutated scenarios per run of the test.
const CASES: u32 = 6_000;
/// Engine steps per run.
const MAX_STEPS: u64 = 1_500;
/// Machines estimated above this are refused, as `mmsim run --max-host-mem` would.
const MAX_HOST_BYTES: u64 = 160 << 20;
/// Wall time after which a case counts as a hang.
const CASE_TIMEOUT: Duration = Duration::from_secs(60);

/// Boundary and extreme values a mutation writes into a key.
const EXTREMES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "4096",
    "4097",
    "65536",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "1e300",
    "0.5",
    "true",
    "\"\"",
    "\"0\"",
    "\"cpus\"",
    "\"ram\"",
    "\"ram*0\"",
    "\"ram/1000000\"",
    "\"ram*1000000\"",
    "\"ram*4096/3\"",
    "\"1B\"",
    "\"16TiB\"",
    "\"17592186044415MiB\"",
    "\"0ns\"",
    "\"1ns\"",
    "\"18446744073709551615ns\"",
    "\"999999999h\"",
    "\"106751d\"",
    "\"1B/s\"",
    "\"18446744073709551615B/s\"",
    "\"1000000GB/s\"",
];

/// One edit of a scenario's text.
#[derive(Clone, Debug)]
enum Mutation {
    /// Swap the values of the `a`-th and `b`-th `key = value` lines.
    Swap(usize, usize),
    /// Write `EXTREMES[v]` as the value of the `a`-th assignment.
    Extreme(usize, usize),
    /// Multiply (`up`) or divide the number in the `a`-th assignment by 10^`exp`.
    Scale(usize, bool, u32),
    /// Delete the `a`-th line (tables headers included).
    Delete(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (0usize..400, 0usize..400).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (0usize..400, 0usize..EXTREMES.len()).prop_map(|(a, v)| Mutation::Extreme(a, v)),
        (0usize..400, any::<bool>(), 1u32..20).prop_map(|(a, up, e)| Mutation::Scale(a, up, e)),
        (0usize..400).prop_map(Mutation::Delete),
    ]
}

/// Indices of the `key = value` lines.
fn assignments(lines: &[String]) -> Vec<usize> {
    (0..lines.len())
        .filter(|&i| {
            let l = lines[i].trim_start();
            !l.starts_with('#') && !l.starts_with('[') && l.contains(" = ")
        })
        .collect()
}

/// Scale the first run of digits in `value` by 10^`exp` (up) or down.
fn scale(value: &str, up: bool, exp: u32) -> String {
    let Some(start) = value.find(|c: char| c.is_ascii_digit()) else {
        return value.to_string();
    };
    let end = value[start..]
        .find(|c: char| !c.is_ascii_digit())
        .map_or(value.len(), |e| start + e);
    let n: u128 = value[start..end].parse().unwrap_or(u128::MAX);
    let f = 10u128.pow(exp);
    let m = if up { n.saturating_mul(f) } else { n / f };
    format!("{}{}{}", &value[..start], m, &value[end..])
}

fn apply(text: &str, muts: &[Mutation]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for m in muts {
        let assigns = assignments(&lines);
        let split = |l: &str| -> (String, String) {
            let (k, v) = l.split_once(" = ").unwrap_or((l, ""));
            (k.to_string(), v.to_string())
        };
        match *m {
            Mutation::Swap(a, b) if !assigns.is_empty() => {
                let (ia, ib) = (assigns[a % assigns.len()], assigns[b % assigns.len()]);
                let ((ka, va), (kb, vb)) = (split(&lines[ia]), split(&lines[ib]));
                lines[ia] = format!("{ka} = {vb}");
                lines[ib] = format!("{kb} = {va}");
            }
            Mutation::Extreme(a, v) if !assigns.is_empty() => {
                let i = assigns[a % assigns.len()];
                let (k, _) = split(&lines[i]);
                lines[i] = format!("{k} = {}", EXTREMES[v]);
            }
            Mutation::Scale(a, up, exp) if !assigns.is_empty() => {
                let i = assigns[a % assigns.len()];
                let (k, v) = split(&lines[i]);
                lines[i] = format!("{k} = {}", scale(&v, up, exp));
            }
            Mutation::Delete(a) if !lines.is_empty() => {
                let n = lines.len();
                lines.remove(a % n);
            }
            _ => {}
        }
    }
    lines.join("\n")
}

/// Shrink the machine of a built-in (32 MiB per node), as the determinism test does.
fn shrink(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("memory_per_node = ") {
                "memory_per_node = \"32MiB\"".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// How one mutated scenario ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// The loader refused it (an error naming the file, line and field).
    LoadError,
    /// The machine could not be built or the features resolved (an error message).
    BuildError,
    /// Refused by the host-memory estimate.
    Guarded,
    /// Ran until every task exited.
    Completed,
    /// Stopped at the step cap.
    StepLimit,
    /// The engine reported a stall (no user task can run): counted, printed.
    Stalled,
}

/// Load and run one mutated scenario; Err for a panic-free but wrong outcome.
fn run_case(text: &str) -> Result<Outcome, String> {
    let sc = match parse_scenario(text, "mut.toml", &[]) {
        Ok(sc) => sc,
        Err(e) => {
            let shown = e.to_string();
            if !shown.starts_with("mut.toml") || e.message.trim().is_empty() {
                return Err(format!("unclear error: {shown:?}"));
            }
            return Ok(Outcome::LoadError);
        }
    };
    if estimate_host_memory(&sc).total_bytes() > MAX_HOST_BYTES {
        return Ok(Outcome::Guarded);
    }
    let features = match resolve_features(sc.kernel, None, "patched", &sc.features, None) {
        Ok(f) => f,
        Err(_) => return Ok(Outcome::BuildError),
    };
    let opts = RunOptions {
        features,
        check: false,
        max_steps: MAX_STEPS,
        ..RunOptions::default()
    };
    match run_scenario(&sc, &opts, &mut |_| {}) {
        Err(e) if e.trim().is_empty() => Err("empty error from run_scenario".into()),
        Err(_) => Ok(Outcome::BuildError),
        Ok(r) => Ok(match r.end {
            mmsim::sim::RunEnd::Completed => Outcome::Completed,
            mmsim::sim::RunEnd::StepLimit => Outcome::StepLimit,
            mmsim::sim::RunEnd::Stalled(_) => Outcome::Stalled,
            other => return Err(format!("run ended {other:?}")),
        }),
    }
}

/// `run_case` on a worker thread: a panic is caught with its message, a case that does not
/// finish within `CASE_TIMEOUT` is a hang (the worker is left behind; the test fails).
fn run_guarded(text: String) -> Result<Outcome, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("mutated-scenario".into())
        .stack_size(16 << 20)
        .spawn(move || {
            let r = std::panic::catch_unwind(|| run_case(&text)).unwrap_or_else(|p| {
                let msg = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                Err(format!("panic: {msg}"))
            });
            let _ = tx.send(r);
        })
        .expect("spawn");
    rx.recv_timeout(CASE_TIMEOUT)
        .unwrap_or_else(|_| Err(format!("hang: no outcome within {CASE_TIMEOUT:?}")))
}

#[test]
fn mutated_builtins_load_into_an_error_or_a_run_that_ends() {
    // Panics are caught and reported per case: keep the default hook from printing each.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let builtins = builtin_scenarios();
    let counts = RefCell::new(std::collections::BTreeMap::<Outcome, u32>::new());
    let failures = RefCell::new(Vec::<String>::new());
    let config = Config {
        cases: CASES,
        rng_seed: RngSeed::Fixed(18),
        failure_persistence: None,
        max_shrink_iters: 0,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = (
        0usize..builtins.len(),
        prop::collection::vec(mutation(), 1..4),
    );
    let result = runner.run(&strategy, |(which, muts)| {
        let (name, _, text) = builtins[which];
        let mutated = apply(&shrink(text), &muts);
        match run_guarded(mutated.clone()) {
            Ok(o) => {
                *counts.borrow_mut().entry(o).or_default() += 1;
                Ok(())
            }
            Err(why) => {
                failures
                    .borrow_mut()
                    .push(format!("{name} {muts:?}: {why}\n{mutated}"));
                Ok(())
            }
        }
    });
    std::panic::set_hook(hook);
    let counts = counts.into_inner();
    let total: u32 = counts.values().sum();
    eprintln!("mutated scenarios: {total} {counts:?}");
    let failures = failures.into_inner();
    assert!(
        result.is_ok() && failures.is_empty(),
        "{} failing case(s):\n{}",
        failures.len(),
        failures
            .iter()
            .map(|f| f.lines().next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(total, CASES, "every case ran");
    // The mutations reach both sides: refusals and runs.
    for o in [Outcome::LoadError, Outcome::Completed, Outcome::StepLimit] {
        assert!(
            counts.get(&o).copied().unwrap_or(0) > 0,
            "no case ended {o:?}"
        );
    }
}
