//! `mmsim compare`: two real small runs (dd-tmpfs, vanilla and patched) compared in
//! mmtests-style tables and plotted; bad input exits with status 2 and one clear error.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

const SMALL: &str = "machine.memory_per_node=64MiB";

fn mmsim<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .output()
        .expect("mmsim runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("utf-8 output")
}

/// This test binary's scratch directory.
fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("compare-cli-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The vanilla and patched run documents of dd-tmpfs on a small machine (made once).
fn runs() -> &'static (PathBuf, PathBuf) {
    static RUNS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let mk = |preset: &str| {
            let p = dir().join(format!("{preset}.json"));
            let o = mmsim(&[
                "run",
                "dd-tmpfs",
                "--set",
                SMALL,
                "--preset",
                preset,
                "--json",
                p.to_str().unwrap(),
            ]);
            assert!(o.status.success(), "run {preset}: {}", text(&o.stderr));
            p
        };
        (mk("vanilla"), mk("patched"))
    })
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Asserts exit status 2, no panic, and an error line containing every `want`.
fn assert_usage_error(o: &Output, want: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.starts_with("mmsim: error: "), "{err}");
    for w in want {
        assert!(err.contains(w), "missing {w:?} in {err}");
    }
}

#[test]
fn compares_vanilla_and_patched() {
    let (v, p) = runs();
    let o = mmsim(&["compare", path_str(v), path_str(p)]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("mmsim compare: scenario dd-tmpfs, 2 runs"));
    // Default column names: the presets.
    assert!(
        lines
            .iter()
            .any(|l| l.trim_start().starts_with("vanilla") && l.ends_with("patched")),
        "no table header in\n{out}"
    );
    for stat in [
        "Min",
        "1st-qrtle",
        "2nd-qrtle",
        "3rd-qrtle",
        "Max-90%",
        "Max-95%",
        "Max-99%",
        "Max",
        "Amean",
        "Stddev",
        "CoeffVar",
        "Best99%Amean",
        "Best50%Amean",
        "Best25%Amean",
    ] {
        let want = format!("{stat} ");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&want) && l.contains("dd iteration (")),
            "no {stat} row for dd iteration in\n{out}"
        );
    }
    // The baseline column is always 0.00%; every table row has two value columns.
    let amean = lines
        .iter()
        .find(|l| l.starts_with("Amean ") && l.contains("dd iteration"))
        .unwrap();
    assert_eq!(amean.matches('%').count(), 2, "{amean}");
    assert!(amean.contains("(   0.00%)"), "{amean}");
    for want in [
        "Ops elapsed (",
        "Ops dd elapsed (",
        "User ",
        "System ",
        "Elapsed ",
        "profile (% of busy CPU time)",
        "Share mark_page_accessed",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    // Deterministic: the same documents give the same text.
    let again = mmsim(&["compare", path_str(v), path_str(p)]);
    assert_eq!(text(&again.stdout), out);
}

#[test]
fn names_option() {
    let (v, p) = runs();
    let o = mmsim(&["compare", path_str(v), path_str(p), "--names", "base,new"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("  base  ") && out.contains("new"), "{out}");
    let o = mmsim(&["compare", path_str(v), path_str(p), "--names", "only-one"]);
    assert_usage_error(&o, &["--names", "1 name(s) given for 2 file(s)"]);
}

#[test]
fn plots_svg_and_png() {
    let (v, p) = runs();
    let out_dir = dir().join("plots");
    let o = mmsim(&[
        "compare",
        path_str(v),
        path_str(p),
        "--plot",
        path_str(&out_dir),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for stem in [
        "series-nr_active_file",
        "series-nr_inactive_file",
        "series-nr_free_pages",
        "series-nr_mapped",
        "series-nr_dirty",
        "series-nr_writeback",
        "series-pgmajfault",
        "samples-dd-iteration",
    ] {
        let svg = std::fs::read_to_string(out_dir.join(format!("{stem}.svg")))
            .unwrap_or_else(|e| panic!("{stem}.svg: {e}"));
        assert!(svg.starts_with("<svg") && svg.contains("vanilla"), "{stem}");
        let png = std::fs::read(out_dir.join(format!("{stem}.png")))
            .unwrap_or_else(|e| panic!("{stem}.png: {e}"));
        assert!(png.len() > 1000 && &png[1..4] == b"PNG", "{stem}.png");
    }
    assert!(text(&o.stdout).contains("plots: "), "{}", text(&o.stdout));
}

#[test]
fn bad_input_exits_2() {
    let (v, _) = runs();
    let d = dir();
    // A missing file.
    let missing = d.join("missing.json");
    let o = mmsim(&["compare", path_str(v), path_str(&missing)]);
    assert_usage_error(&o, &["missing.json", "cannot read"]);
    // A truncated file: named, with line and column.
    let full = std::fs::read_to_string(v).unwrap();
    let cut = d.join("truncated.json");
    std::fs::write(&cut, &full[..full.len() / 3]).unwrap();
    let o = mmsim(&["compare", path_str(v), path_str(&cut)]);
    assert_usage_error(&o, &["truncated.json:", "EOF while parsing"]);
    // Not JSON at all.
    let junk = d.join("junk.json");
    std::fs::write(&junk, "[scenario]\nname = 1\n").unwrap();
    let o = mmsim(&["compare", path_str(&junk), path_str(v)]);
    assert_usage_error(&o, &["junk.json:1:"]);
    // Another schema version.
    let mut doc: serde_json::Value = serde_json::from_str(&full).unwrap();
    doc["schema_version"] = serde_json::json!(999);
    let old = d.join("v999.json");
    std::fs::write(&old, doc.to_string()).unwrap();
    let o = mmsim(&["compare", path_str(v), path_str(&old)]);
    assert_usage_error(&o, &["v999.json", "schema_version 999"]);
    // Another scenario: refused, accepted with --force.
    doc["schema_version"] = serde_json::json!(1);
    doc["scenario"] = serde_json::json!("hot-stream");
    let other = d.join("other.json");
    std::fs::write(&other, doc.to_string()).unwrap();
    let o = mmsim(&["compare", path_str(v), path_str(&other)]);
    assert_usage_error(&o, &["hot-stream", "dd-tmpfs", "--force"]);
    let o = mmsim(&["compare", path_str(v), path_str(&other), "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("scenario dd-tmpfs / hot-stream"));
    // Too few files: clap's usage error, status 2.
    let o = mmsim(&["compare", path_str(v)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!text(&o.stderr).contains("panicked"));
}
