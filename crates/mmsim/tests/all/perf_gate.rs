//! Performance regression gate (issue 13): host instructions per simulated page of small
//! runs of the benchmark's shapes, counted under callgrind (deterministic: no timing), must
//! stay within 10 % of the committed baseline `tests/all/perf_gate.baseline`. Two replay
//! shapes (issue 14's hit-heavy trace, a file per object and the range layout) count
//! instructions per request the same way.
//!
//! Re-bless on purpose (after an intended change of cost, say so in the commit):
//!
//! ```text
//! MMSIM_BLESS=1 cargo test --profile ci -p mmsim --test all -- perf_gate::
//! ```
//!
//! The counts belong to the build profile that blessed them (the baseline's `# profile`
//! line: the directory of the `mmsim` binary under the target directory, `ci` for
//! `cargo test --profile ci` as CI runs it); a build of another profile skips with a message.
//! A different compiler (the `# rustc` line) still compares, and a failure says so. Without
//! valgrind the gate skips with a message. `MMSIM_PERF_GATE_BIN=/path/to/mmsim` measures another binary against the
//! baseline (for example a copy built before an optimisation, to see the gate fail).

use crate::perf_shapes::{callgrind, gate_shapes, valgrind_available, Measure, Shape};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A shape may cost this much more than its baseline before the gate fails.
const TOLERANCE: f64 = 1.10;

fn baseline_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/all/perf_gate.baseline")
}

/// The baseline: its build profile, compiler and `shape → instructions per page`.
struct Baseline {
    profile: Option<String>,
    rustc: Option<String>,
    per_page: BTreeMap<String, f64>,
}

/// The build profile of `bin`: the name of its directory under the target directory.
fn profile_of(bin: &std::path::Path) -> String {
    bin.parent()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `rustc --version` of the toolchain running the tests.
fn rustc_version() -> String {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn read_baseline() -> Result<Baseline, String> {
    let path = baseline_path();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e}; bless it with MMSIM_BLESS=1 cargo test --profile ci -p mmsim --test all -- perf_gate::",
            path.display()
        )
    })?;
    let mut m = BTreeMap::new();
    let (mut profile, mut rustc) = (None, None);
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if let Some(p) = line.strip_prefix("# profile ") {
            profile = Some(p.trim().to_string());
        }
        if let Some(r) = line.strip_prefix("# rustc ") {
            rustc = Some(r.trim().to_string());
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let per_page = f
            .get(1)
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| {
                format!(
                    "{}:{}: expected `shape per_page ...`",
                    path.display(),
                    i + 1
                )
            })?;
        m.insert(f[0].to_string(), per_page);
    }
    Ok(Baseline {
        profile,
        rustc,
        per_page: m,
    })
}

fn write_baseline(results: &[(Shape, Measure)], profile: &str) {
    let mut text = format!(
        "# Host instructions per simulated page under callgrind (tests/all/perf_gate.rs).\n\
         # Re-bless on purpose: MMSIM_BLESS=1 cargo test --profile ci -p mmsim --test all -- perf_gate::\n\
         # profile {profile}\n\
         # rustc {}\n\
         # shape  instructions/page  instructions  pages  event_hash  (replay shapes: per request)\n",
        rustc_version()
    );
    for (s, m) in results {
        text.push_str(&format!(
            "{} {:.1} {} {} {:016x}\n",
            s.name,
            m.per_page(),
            m.instructions,
            m.pages,
            m.event_hash
        ));
    }
    std::fs::write(baseline_path(), text).expect("write the baseline");
}

#[test]
fn instructions_per_page_stay_within_ten_percent_of_the_baseline() {
    if cfg!(debug_assertions) {
        eprintln!(
            "perf_gate: skipped: the baseline counts an optimised build's instructions \
             (run cargo test --profile ci -p mmsim --test all -- perf_gate::)"
        );
        return;
    }
    if !valgrind_available() {
        eprintln!(
            "perf_gate: skipped: valgrind not found (install valgrind to count instructions \
             under callgrind)"
        );
        return;
    }
    let bin = std::env::var_os("MMSIM_PERF_GATE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mmsim")));
    // The profile of the build under test (not of a binary given by MMSIM_PERF_GATE_BIN).
    let profile = profile_of(std::path::Path::new(env!("CARGO_BIN_EXE_mmsim")));
    let bless = std::env::var_os("MMSIM_BLESS").is_some_and(|v| v == "1");
    let base = if bless {
        None
    } else {
        let b = read_baseline().unwrap_or_else(|e| panic!("perf_gate: {e}"));
        if b.profile.as_deref().is_some_and(|p| p != profile) {
            eprintln!(
                "perf_gate: skipped: the baseline counts the `{}` profile's build, this is `{profile}`",
                b.profile.as_deref().unwrap_or("")
            );
            return;
        }
        Some(b)
    };
    // The shapes run side by side (the counts do not depend on the load).
    let handles: Vec<_> = gate_shapes()
        .into_iter()
        .map(|s| {
            let bin = bin.clone();
            std::thread::spawn(move || {
                let m = callgrind(&bin, &s);
                (s, m)
            })
        })
        .collect();
    let mut results = Vec::new();
    for h in handles {
        let (s, m) = h.join().expect("a shape's thread");
        match m {
            Ok(m) => results.push((s, m)),
            Err(e) => panic!("perf_gate: {e}"),
        }
    }
    let Some(base) = base else {
        write_baseline(&results, &profile);
        for (s, m) in &results {
            eprintln!(
                "perf_gate: blessed {} at {:.1} instructions/page",
                s.name,
                m.per_page()
            );
        }
        return;
    };
    let mut failures = Vec::new();
    eprintln!("perf_gate: shape, instructions/page now, baseline, ratio");
    for (s, m) in &results {
        let Some(&b) = base.per_page.get(s.name) else {
            failures.push(format!(
                "{}: not in the baseline, measured {:.1} instructions/page, {} instructions, {} pages, event hash {:016x} (bless it: MMSIM_BLESS=1 cargo test --profile ci -p mmsim --test all -- perf_gate::)",
                s.name,
                m.per_page(),
                m.instructions,
                m.pages,
                m.event_hash
            ));
            continue;
        };
        let ratio = m.per_page() / b;
        eprintln!(
            "perf_gate: {:<28} {:>9.1} {:>9.1} {:>6.3}",
            s.name,
            m.per_page(),
            b,
            ratio
        );
        if ratio > TOLERANCE {
            failures.push(format!(
                "{}: {:.1} instructions/page, {:.1}% above the baseline {:.1}",
                s.name,
                m.per_page(),
                (ratio - 1.0) * 100.0,
                b
            ));
        }
    }
    let rustc = rustc_version();
    let compiler_note = match &base.rustc {
        Some(r) if *r != rustc => format!(
            "\n(the baseline was blessed with {r}, this is {rustc}: a compiler change moves the \
             counts too)"
        ),
        _ => String::new(),
    };
    assert!(
        failures.is_empty(),
        "performance regression (more than {:.0}% above tests/all/perf_gate.baseline):\n{}\n\
         If the cost is intended, re-bless: MMSIM_BLESS=1 cargo test --profile ci -p mmsim --test all -- perf_gate::{}",
        (TOLERANCE - 1.0) * 100.0,
        failures.join("\n"),
        compiler_note
    );
}
