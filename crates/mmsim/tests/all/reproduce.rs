//! `mmsim reproduce all --scale small`: every direction the issue lists, on CI-sized runs.
//!
//! Each required [`Check`] of the experiments is asserted, except the ones listed in
//! [`NOT_REPRODUCED`]: directions that do not emerge from mmsim's mechanisms at the
//! default scenario parameters. They are reported (printed) and must still be present, so
//! a change that makes them emerge shows up here; docs/EXPERIMENTS.md explains each.

use mmsim::report::reproduce::{reproduce, Check, ReproduceOptions, Scale};

/// Required directions that mmsim does not reproduce, with the reason (none today; the
/// desktop's pswpin fall needs the seed's 2.6.30-era reclaim balance, which the built-in
/// desktop scenario selects: docs/EXPERIMENTS.md).
const NOT_REPRODUCED: &[(&str, &str)] = &[];

fn find<'a>(checks: &'a [&'a Check], prefix: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.name.starts_with(prefix))
        .unwrap_or_else(|| panic!("no check {prefix:?}"))
}

/// A wall-time budget of `idle_s` seconds on an otherwise idle machine, scaled by the
/// 1-minute load average per CPU (`/proc/loadavg`) when that is above 1: the integration
/// tests run in parallel in one binary, and the host may be shared.
fn wall_budget_s(idle_s: f64) -> f64 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    idle_s * (load / cpus).max(1.0)
}

#[test]
fn reproduce_all_small_directions() {
    let t0 = std::time::Instant::now();
    let out = std::env::temp_dir().join(format!("mmsim-reproduce-{}", std::process::id()));
    let opts = ReproduceOptions {
        scale: Scale::Small,
        out: Some(out.clone()),
        jobs: 2,
        progress: false,
        kernel: None,
        policy: None,
    };
    let summary = reproduce("all", &opts).expect("reproduce all --scale small");
    let wall = t0.elapsed().as_secs_f64();
    eprintln!("{}", summary.render());
    eprintln!("reproduce all --scale small: {wall:.1} s");
    let checks: Vec<&Check> = summary.checks().map(|(_, c)| c).collect();

    // The list, each by name, so a renamed or lost check fails here.
    let expected = [
        "dd tmpfs: mark_page_accessed + init_page_accessed share",
        "dd blockfs: mark_page_accessed + init_page_accessed share",
        "desktop: pgmajfault",
        "desktop: pswpin",
        "file server console: app major faults during the stream",
        "lru-file-mmap-read 1 node x 4 CPUs, 256 MiB: TLB-shootdown interrupts/s",
        "lru-file-mmap-read 1 node x 4 CPUs, 256 MiB: elapsed",
        "lru-file-mmap-read 1 node x 4 CPUs, 256 MiB: System time",
        "sparsetruncate: Best50%Amean",
    ];
    for name in expected {
        let c = find(&checks, name);
        assert!(c.required, "{name} should be a required check");
        if let Some((_, why)) = NOT_REPRODUCED.iter().find(|(n, _)| name.starts_with(n)) {
            eprintln!(
                "{name}: {} -> {} ({}) — {why}",
                c.vanilla,
                c.patched,
                if c.reproduced() {
                    "now passes"
                } else {
                    "fails"
                }
            );
            continue;
        }
        assert!(c.reproduced(), "direction not reproduced: {c:#?}");
    }
    // Magnitudes the issue states as thresholds.
    let mpa = find(&checks, "dd tmpfs: mark_page_accessed");
    assert!(mpa.ours_pct.unwrap() >= 80.0, "{mpa:#?}");
    let irq = find(&checks, "lru-file-mmap-read 1 node x 4 CPUs, 256 MiB: TLB");
    assert!(irq.vanilla >= 3.0 * irq.patched, "{irq:#?}");
    let fs = find(&checks, "file server console");
    assert!(fs.vanilla >= 5.0 * fs.patched.max(1.0), "{fs:#?}");
    // Every required check is either passing or listed as not reproduced.
    for c in checks.iter().filter(|c| c.required && !c.reproduced()) {
        assert!(
            NOT_REPRODUCED.iter().any(|(n, _)| c.name.starts_with(n)),
            "unexpected failure: {c:#?}"
        );
    }

    // --out: the runs' JSON, plots and summary.md.
    let md = std::fs::read_to_string(out.join("summary.md")).expect("summary.md");
    assert!(md.contains("## accessed-init / dd") && md.contains("desktop: pswpin (Amean of"));
    for f in [
        "accessed-init/dd/tmpfs-async-vanilla.json",
        "accessed-init/dd/tmpfs-async-patched.json",
        "exec-protect/desktop/plots-seed1/series-pgmajfault.svg",
        "exec-protect/desktop/plots-seed1/series-pgmajfault.png",
        "truncate-batch-shadow/sparsetruncate/plots-large/samples-sparsetruncate-unlink.svg",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    let doc = mmsim::report::load::load_run(
        &out.join("batch-tlb-flush/lru-file-mmap-read/small-patched.json"),
    )
    .expect("a run document that compare reads");
    assert_eq!(doc.features.get("batch-tlb-flush"), Some(&true));
    assert_eq!(
        doc.features.get("exec-protect"),
        Some(&false),
        "only the studied change differs"
    );

    // The JSON summary carries directions and both percentages.
    let json = summary.to_json();
    let first = &json["experiments"][0]["analysis"]["checks"][0];
    for key in [
        "direction",
        "ours_pct",
        "published_pct",
        "passed",
        "required",
    ] {
        assert!(first.get(key).is_some(), "{key} missing in {first}");
    }
    let _ = std::fs::remove_dir_all(&out);
    let budget = wall_budget_s(120.0);
    assert!(
        wall < budget,
        "reproduce all --scale small took {wall:.1} s (budget {budget:.0} s)"
    );
}
