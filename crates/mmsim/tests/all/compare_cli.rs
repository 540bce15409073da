//! `mmsim compare`: two real small runs (dd-tmpfs, vanilla and patched) compared in
//! mmtests-style tables and plotted; bad input exits with status 2 and one clear error.
//! A memory-cgroup scenario run on two kernel eras compares without `--force`, with a
//! per-cgroup table, the kernels in the column names and a cgroup usage plot; a document
//! from before eras and cgroups (no `kernel`, no `cgroups`) still loads.

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

/// A 64 MiB cgroup reading a 96 MiB file twice beside a 96 MiB anonymous working set
/// (with swap), so its reclaim differs between the 4.2 and 6.18 rules.
const CGROUP_SCENARIO: &str = r#"
name = "memcg-eras"
description = "a 64 MiB cgroup reads a 96 MiB file twice beside 96 MiB of anon"
seed = 1
sample_interval = "10ms"

[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"

[[devices]]
name = "sda"
preset = "nvme"
size = "1GiB"

[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"

[swap]
size = "256MiB"
preset = "nvme"

[[files]]
path = "/data/f"
size = "96MiB"

[[cgroups]]
name = "job"
memory_max = "64MiB"

[[tasks]]
name = "reader"
cpu = 0
cgroup = "job"
program = "read"
path = "/data/f"
block_size = "1MiB"
passes = 2

[[tasks]]
name = "anon"
cpu = 1
cgroup = "job"
program = "anon"
size = "96MiB"
passes = 2
"#;

/// The run documents of [`CGROUP_SCENARIO`] with `--kernel 4.2` and `--kernel 6.18`
/// (vanilla; made once).
fn cgroup_runs() -> &'static (PathBuf, PathBuf) {
    static RUNS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    RUNS.get_or_init(|| {
        let toml = dir().join("memcg-eras.toml");
        std::fs::write(&toml, CGROUP_SCENARIO).unwrap();
        let mk = |kernel: &str| {
            let p = dir().join(format!("memcg-{kernel}.json"));
            let o = mmsim(&[
                "run",
                toml.to_str().unwrap(),
                "--kernel",
                kernel,
                "--preset",
                "vanilla",
                "--json",
                p.to_str().unwrap(),
            ]);
            assert!(
                o.status.success(),
                "run --kernel {kernel}: {}",
                text(&o.stderr)
            );
            p
        };
        (mk("4.2"), mk("6.18"))
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
    // dd on tmpfs: the free pages and the tmpfs pages (on the anon LRU in 3.15) move, in a
    // run of a few ms that the series samples finely enough to show; the file LRU,
    // mapped, dirty, writeback and major faults are zero throughout both runs and are not
    // drawn.
    for stem in [
        "series-nr_free_pages",
        "series-nr_inactive_anon",
        "samples-dd-iteration",
    ] {
        let svg = std::fs::read_to_string(out_dir.join(format!("{stem}.svg")))
            .unwrap_or_else(|e| panic!("{stem}.svg: {e}"));
        assert!(svg.starts_with("<svg") && svg.contains("vanilla"), "{stem}");
        let png = std::fs::read(out_dir.join(format!("{stem}.png")))
            .unwrap_or_else(|e| panic!("{stem}.png: {e}"));
        assert!(png.len() > 1000 && &png[1..4] == b"PNG", "{stem}.png");
    }
    for stem in [
        "series-nr_active_file",
        "series-nr_inactive_file",
        "series-nr_mapped",
        "series-nr_dirty",
        "series-nr_writeback",
        "series-pgmajfault",
    ] {
        assert!(
            !out_dir.join(format!("{stem}.svg")).exists(),
            "{stem} drawn"
        );
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
    // Cut at a line end, so the document stops between values, not inside a number.
    let at = full[..full.len() / 3].rfind('\n').unwrap();
    std::fs::write(&cut, &full[..at]).unwrap();
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

#[test]
fn compares_cgroup_runs_of_two_kernel_eras() {
    let (old, new) = cgroup_runs();
    let plots = dir().join("memcg-plots");
    // Same scenario on two eras: no --force needed.
    let o = mmsim(&[
        "compare",
        path_str(old),
        path_str(new),
        "--plot",
        path_str(&plots),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("mmsim compare: scenario memcg-eras, 2 runs"));
    // The header names each run's kernel, the columns carry it.
    assert!(
        lines[1].trim_start().starts_with("vanilla@4.2 ") && lines[1].contains(" kernel 4.2 "),
        "{out}"
    );
    assert!(
        lines[2].trim_start().starts_with("vanilla@6.18 ")
            && lines[2].contains(" kernel 6.18 ")
            && lines[2].contains("cgroups job"),
        "{out}"
    );
    // The per-cgroup table: its title, its column headers, a pgscan row that differs.
    let at = lines
        .iter()
        .position(|l| l.starts_with("cgroup job (memory.max 64 MiB)"))
        .unwrap_or_else(|| panic!("no cgroup table in\n{out}"));
    assert!(
        lines[at + 1].contains("vanilla@4.2") && lines[at + 1].ends_with("vanilla@6.18"),
        "{out}"
    );
    let table: Vec<&str> = lines[at + 2..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    let pgscan = table
        .iter()
        .find(|l| l.starts_with("memory.stat ") && l.contains(" pgscan "))
        .unwrap_or_else(|| panic!("no pgscan row in\n{out}"));
    assert_eq!(pgscan.matches('%').count(), 2, "{pgscan}");
    assert!(pgscan.contains(" 0.00%)"), "{pgscan}");
    // Rows by their words (the label column is as wide as its longest label).
    let words = |l: &str| l.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "memory.peak",
        "memory.events max",
        "memory.events oom_kill",
        // Both runs swapped: the swap rows are there.
        "memory.swap.peak (MiB)",
        "memory.swap.events max",
        "memory.swap.events fail",
    ] {
        assert!(
            table.iter().any(|l| words(l).starts_with(want)),
            "no {want} row in\n{out}"
        );
    }
    // The root's table comes first.
    assert!(out.contains("\ncgroup / (root)"), "{out}");
    assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
    // The usage plot of the cgroup, both runs on it.
    let svg = std::fs::read_to_string(plots.join("cgroup-job-usage.svg")).expect("usage svg");
    assert!(
        svg.contains("vanilla@4.2") && svg.contains("vanilla@6.18") && svg.contains("MiB"),
        "cgroup-job-usage.svg"
    );
    let png = std::fs::read(plots.join("cgroup-job-usage.png")).expect("usage png");
    assert!(png.len() > 1000 && &png[1..4] == b"PNG");
    assert!(
        !plots.join("cgroup-_-usage.svg").exists(),
        "no plot of the root"
    );
}

#[test]
fn old_document_without_kernel_or_cgroups_still_loads() {
    let (v, p) = runs();
    let (memcg, _) = cgroup_runs();
    let d = dir();
    // A document as mmsim wrote it before eras and cgroups: no `kernel`, no `cgroups`.
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(v).unwrap()).unwrap();
    let obj = doc.as_object_mut().unwrap();
    assert!(
        obj.remove("kernel").is_some(),
        "current documents have `kernel`"
    );
    obj.remove("cgroups");
    // Nor the switches added since, among them the rules that tell 3.15's rules from
    // 4.2's (the dd-tmpfs run is 3.15's): the dirty limits' and release_pages' lock batch.
    let features = obj["features"].as_object_mut().unwrap();
    for k in [
        "dirtyable-reserve",
        "dirtyable-file-only",
        "dirty-ratio-page-units",
        "release-pages-lock-batch",
    ] {
        assert!(features.remove(k).is_some(), "{k}");
    }
    let old = d.join("pre-eras.json");
    std::fs::write(&old, doc.to_string()).unwrap();
    let o = mmsim(&["compare", path_str(&old), path_str(p)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    // Its rules were those of 4.2; dd-tmpfs pins 3.15: the names carry the kernels.
    assert!(out.contains("kernel unknown (4.2 rules)"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.trim_start().starts_with("vanilla@4.2") && l.ends_with("patched@3.15")),
        "{out}"
    );
    assert!(
        !out.contains("\ncgroup "),
        "no cgroup table without cgroups:\n{out}"
    );
    // Against a cgroup run (another scenario, so --force): the baseline has no cgroups.
    let o = mmsim(&["compare", path_str(&old), path_str(memcg), "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("cgroups: the baseline run has none"), "{out}");
}

/// The fields of one CSV line (RFC 4180 quoting: `"a,b"`, `""` inside quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                fields.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(String::new()),
            (c, _) => fields.last_mut().unwrap().push(c),
        }
    }
    fields
}

#[test]
fn csv_output() {
    let (v, p) = runs();
    let o = mmsim(&["compare", path_str(v), path_str(p), "--csv"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("table,stat,metric,run,value,change_pct,better")
    );
    let rows: Vec<Vec<String>> = lines.map(csv_fields).collect();
    assert!(rows.len() > 20, "{out}");
    // Every row has the 7 fields (the sample tables' titles are quoted: they hold commas),
    // both runs appear, and the baseline has no change.
    assert!(rows.iter().all(|r| r.len() == 7), "{out}");
    assert!(
        rows.iter()
            .any(|r| r[0].starts_with("dd iteration: time per sample, ")),
        "{out}"
    );
    assert!(rows.iter().any(|r| r[3] == "vanilla") && rows.iter().any(|r| r[3] == "patched"));
    assert!(rows
        .iter()
        .filter(|r| r[3] == "vanilla")
        .all(|r| r[5].is_empty()));
    // The profile rows carry mark_page_accessed's share, lower is better.
    assert!(
        rows.iter().any(|r| r[0].starts_with("profile")
            && r[2].contains("mark_page_accessed")
            && r[6] == "lower"),
        "{out}"
    );
    // Values parse as numbers.
    assert!(rows
        .iter()
        .filter(|r| !r[4].is_empty())
        .all(|r| r[4].parse::<f64>().is_ok()));
}

#[test]
fn identical_runs_are_reported() {
    let (v, p) = runs();
    let copy = dir().join("vanilla-again.json");
    std::fs::copy(v, &copy).unwrap();
    let o = mmsim(&["compare", path_str(v), path_str(&copy)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("identical: the two runs have the same results"),
        "{out}"
    );
    let o = mmsim(&["compare", path_str(v), path_str(p)]);
    assert!(!text(&o.stdout).contains("identical"));
}

/// The report records each device's model (preset, latency, bandwidth, readahead and the
/// flash queue depth), and `compare`'s header shows the models when the runs' differ: a
/// run whose disk was set to a queue depth is told apart from the same scenario without.
#[test]
fn device_models_are_recorded_and_shown_when_they_differ() {
    let mk = |name: &str, sets: &[&str]| {
        let p = dir().join(format!("{name}.json"));
        let mut args = vec!["run", "stream-read", "--set", SMALL, "--json", path_str(&p)];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = mmsim(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        p
    };
    let plain = mk("flash-none", &[]);
    let flash = mk("flash-q8", &["devices.nvme0.queue_depth=8"]);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&flash).unwrap()).unwrap();
    let dev = &doc["devices"][0];
    assert_eq!(dev["preset"], "nvme");
    assert_eq!(dev["queue_depth"], 8);
    assert_eq!(dev["latency_ns"], 15_000);
    assert_eq!(dev["read_ahead_kb"], 128);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plain).unwrap()).unwrap();
    assert!(
        doc["devices"][0].get("queue_depth").is_none(),
        "no queue depth: {doc:?}"
    );
    let o = mmsim(&["compare", path_str(&plain), path_str(&flash)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let models: Vec<&str> = out.lines().filter(|l| l.contains("devices: ")).collect();
    assert_eq!(models.len(), 2, "{out}");
    assert!(!models[0].contains("queue"), "{out}");
    assert!(
        models[1].ends_with("nvme0 nvme 15 µs 2500 MB/s ra 128 KiB queue 8"),
        "{out}"
    );
    // The same models: no devices line.
    let o = mmsim(&["compare", path_str(&plain), path_str(&plain)]);
    assert!(
        !text(&o.stdout).contains("devices: "),
        "{}",
        text(&o.stdout)
    );
}

/// A cyclic trace of 300 one-page objects, each read three times in turn.
fn cyclic_trace() -> PathBuf {
    let p = dir().join("cyc.txt");
    let ids: Vec<String> = (0..900).map(|i| (i % 300).to_string()).collect();
    std::fs::write(&p, ids.join("\n") + "\n").unwrap();
    p
}

/// A replay of `trace` in a cgroup of `limit`, its run document's path.
fn replay_doc(trace: &Path, limit: &str, name: &str) -> PathBuf {
    let p = dir().join(name);
    let o = mmsim(&[
        "replay",
        path_str(trace),
        "--format",
        "txt",
        "--memory-max",
        limit,
        "--readahead",
        "off",
        "--object-map",
        "range",
        "--json",
        path_str(&p),
    ]);
    assert!(o.status.success(), "replay: {}", text(&o.stderr));
    p
}

/// The values, one per run, of the first row of a compare table in `out` whose label ends
/// with `label` (each value's change against the baseline dropped); `-` for none.
fn row_values(out: &str, label: &str) -> Vec<String> {
    let line = out
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("no row {label} in\n{out}"));
    let rest = &line[line.find(label).unwrap() + label.len()..];
    rest.split(')')
        .filter(|c| !c.trim().is_empty())
        .map(|c| c.split('(').next().unwrap().trim().to_string())
        .collect()
}

#[test]
fn compares_replay_runs_and_a_host_replay_report() {
    // 300 pages cycled in a 1 MiB cgroup (room for fewer than 300 beside its slab) miss
    // every time; in 8 MiB only the first round misses (300 of 900): 100 % and 33.33 %.
    let trace = cyclic_trace();
    let small = replay_doc(&trace, "1MiB", "cyc-small.json");
    let large = replay_doc(&trace, "8MiB", "cyc-large.json");
    // A report of examples/host_replay on the same trace (the fields it writes).
    let host = dir().join("cyc-host.json");
    let report = serde_json::json!({
        "trace": path_str(&trace),
        "kernel": "6.18.44",
        "memory_max": "8MiB",
        "requests": 900,
        "pages": 900,
        "page_misses": 303,
        "page_miss_ratio": 303.0 / 900.0,
        "host_seconds": 0.5,
        "cgroup_version": 2,
        "vmstat": {"pgactivate": 600, "pgpgin": 1212, "workingset_refault_file": 3,
                   "nr_free_pages": -300},
        "cgroup_stat": {"usage": 2_000_000, "file": 1_228_800, "pgscan": 10},
    });
    std::fs::write(&host, report.to_string()).unwrap();
    // The three runs compared, as text or (`--csv`) as CSV.
    let compare = |csv: bool| {
        let mut argv = vec!["compare"];
        if csv {
            argv.push("--csv");
        }
        argv.extend([path_str(&small), path_str(&large), path_str(&host)]);
        mmsim(&argv)
    };
    let o = compare(false);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}\n{out}", text(&o.stderr));
    assert!(out.contains("replay (miss ratios in %"), "{out}");
    let miss = row_values(&out, "replay page miss %");
    assert_eq!(miss[0], "100.00", "{out}");
    assert_eq!(miss[1], "33.33", "{out}");
    assert_eq!(miss[2], "33.67", "the host's ratio: {out}");
    // What the host report lacks shows `-`; its IO comes from vmstat (pgpgin in KiB).
    assert_eq!(row_values(&out, "replay byte miss %")[2], "-", "{out}");
    assert_eq!(row_values(&out, "IO pages read")[2], "303.00", "{out}");
    assert!(out.contains("Linux 6.18.44 (this machine)"), "{out}");
    // A host report's gauge deltas are no end-of-run values: not in the vmstat table.
    assert!(!out.contains("nr_free_pages"), "{out}");
    // The CSV has the replay rows too.
    let o = compare(true);
    let csv = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows: Vec<&str> = csv
        .lines()
        .filter(|l| l.contains("replay page miss %"))
        .collect();
    assert_eq!(rows.len(), 3, "a row per run:\n{csv}");
    assert!(
        rows[2].contains(",host,33.66"),
        "the host's ratio: {}",
        rows[2]
    );
    // Two runs of the same replay are identical though the simulator's speed differs.
    let again = replay_doc(&trace, "1MiB", "cyc-small-again.json");
    let o = mmsim(&["compare", path_str(&small), path_str(&again)]);
    let out = text(&o.stdout);
    assert!(
        out.contains("identical: the two runs have the same results"),
        "{out}"
    );
    assert!(
        out.contains("replay speed (requests per host second"),
        "{out}"
    );
}

#[test]
fn a_replay_documents_repeat_command_repeats_it() {
    // The HTML report's command for a document of `mmsim replay` (what it records: trace,
    // format, RAM, memory.max, readahead, --keep-open, kernel, features, seed) gives the
    // same results when run.
    let trace = cyclic_trace();
    let first = dir().join("cyc-keep.json");
    let o = mmsim(&[
        "replay",
        path_str(&trace),
        "--format",
        "txt",
        "--memory-max",
        "2MiB",
        "--readahead",
        "16KiB",
        "--keep-open",
        "--kernel",
        "6.1",
        "--features",
        "-workingset",
        "--set",
        "seed=7",
        "--json",
        path_str(&first),
    ]);
    assert!(o.status.success(), "replay: {}", text(&o.stderr));
    let doc = mmsim::report::load::load_run(&first).unwrap();
    let again = dir().join("cyc-keep-again.json");
    let cmd = mmsim::report::html::run_command(&doc, &[], path_str(&again));
    assert!(cmd.starts_with("mmsim replay "), "{cmd}");
    let args: Vec<&str> = cmd.split_whitespace().skip(1).collect();
    let o = mmsim(&args);
    assert!(o.status.success(), "{cmd}: {}", text(&o.stderr));
    let strip = |p: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        v["replay"]["host_seconds"] = serde_json::Value::Null;
        v["replay"]["host_requests_per_s"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&first), strip(&again), "{cmd}");
}
