//! The `mmsim` binary: listing scenarios, JSON reports, determinism, presets, and one clear
//! error (exit status 2, no panic) for each kind of bad input.

use std::path::PathBuf;
use std::process::{Command, Output};

const SMALL: &str = "machine.memory_per_node=64MiB";

fn mmsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(args)
        .output()
        .expect("mmsim runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// A fresh path in the target's temporary directory.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn run_json(extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec!["run", "dd-tmpfs", "--set", SMALL, "--json", "-"];
    args.extend_from_slice(extra);
    let o = mmsim(&args);
    assert!(
        o.status.success(),
        "status {:?}, stderr: {}",
        o.status,
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is valid JSON");
    (o, v)
}

/// Run with bad input: exit status 2, one `mmsim: error:` line naming the problem, no panic.
fn expect_usage_error(args: &[&str], needles: &[&str]) {
    let o = mmsim(args);
    let err = stderr(&o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{args:?}: status {:?}, stderr: {err}",
        o.status
    );
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(
        o.stdout.is_empty(),
        "{args:?}: nothing on stdout, got {}",
        stdout(&o)
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "{args:?}: one message, got:\n{err}");
    assert!(
        lines[0].starts_with("mmsim: error: "),
        "{args:?}: message `{}`",
        lines[0]
    );
    for n in needles {
        assert!(
            err.contains(n),
            "{args:?}: message `{}` does not mention `{n}`",
            err.trim()
        );
    }
}

#[test]
fn scenarios_lists_the_builtins() {
    let o = mmsim(&["scenarios"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let names: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"dd-tmpfs"), "{out}");
    assert!(names.contains(&"dd-blockfs"), "{out}");
}

#[test]
fn run_json_has_the_documented_keys() {
    let (_, v) = run_json(&[]);
    for k in [
        "scenario",
        "features",
        "machine",
        "elapsed_ns",
        "cpu_time",
        "vmstat",
        "profile",
        "tasks",
    ] {
        assert!(v.get(k).is_some(), "missing key {k}");
    }
    assert_eq!(v["scenario"], "dd-tmpfs");
    for k in ["user_ns", "system_ns", "interrupt_ns", "idle_ns"] {
        assert!(v["cpu_time"][k].is_u64(), "cpu_time.{k}: {}", v["cpu_time"]);
    }
    assert!(v["cpu_time"]["system_ns"].as_u64().unwrap() > 0);
    assert!(v["elapsed_ns"].as_u64().unwrap() > 0);
    assert_eq!(v["machine"]["memory_per_node_bytes"], 64u64 << 20);
    assert_eq!(
        v["features"]["accessed-init"], true,
        "patched is the default"
    );
    assert!(v["vmstat"]["nr_free_pages"].is_i64());
    assert!(v["profile"].as_object().is_some_and(|p| !p.is_empty()));
    let tasks = v["tasks"].as_array().expect("tasks is an array");
    let dd = tasks
        .iter()
        .find(|t| t["name"] == "dd")
        .expect("the dd task");
    // dd writes RAM/10 five times.
    assert_eq!(
        dd["write_bytes"].as_u64().unwrap(),
        5 * ((64u64 << 20) / 10)
    );
}

#[test]
fn two_runs_give_byte_identical_json() {
    let (a, _) = run_json(&[]);
    let (b, _) = run_json(&[]);
    assert!(!a.stdout.is_empty());
    assert!(a.stdout == b.stdout, "the two reports differ");
}

#[test]
fn preset_vanilla_turns_accessed_init_off() {
    let (_, v) = run_json(&["--preset", "vanilla"]);
    assert_eq!(v["features"]["accessed-init"], false);
    assert_eq!(v["features"]["workingset"], true);
    let (_, p) = run_json(&["--preset", "patched"]);
    assert_eq!(p["features"]["accessed-init"], true);
    // And the feature shows in the profile: vanilla marks pages accessed on every write.
    assert!(v["profile"]["mark_page_accessed"].as_u64().unwrap_or(0) > 0);
    let (_, f) = run_json(&["--preset", "vanilla", "--features", "+accessed-init"]);
    assert_eq!(f["features"]["accessed-init"], true);
}

#[test]
fn unknown_scenario_name() {
    expect_usage_error(
        &["run", "no-such-scenario"],
        &["no-such-scenario", "dd-tmpfs"],
    );
}

#[test]
fn missing_scenario_file() {
    expect_usage_error(&["run", "/nonexistent/x.toml"], &["/nonexistent/x.toml"]);
}

#[test]
fn malformed_toml_file() {
    let p = temp_file("malformed.toml", "name = \"x\"\n[machine\nnodes = 1\n");
    let ps = p.to_str().unwrap();
    expect_usage_error(&["run", ps], &[&format!("{ps}:2"), "invalid TOML"]);
}

#[test]
fn unknown_field_in_a_file() {
    let text = r#"name = "x"

[machine]
cpus_per_node = 1
memory_per_node = "16MiB"
colour = "blue"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[tasks]]
name = "dd"
program = "dd"
path = "/tmp/f"
size = "1MiB"
"#;
    let p = temp_file("unknown-field.toml", text);
    let ps = p.to_str().unwrap();
    expect_usage_error(&["run", ps], &[ps, ":6", "colour", "unknown field"]);
}

#[test]
fn a_valid_scenario_file_runs() {
    let text = r#"name = "tiny"

[machine]
cpus_per_node = 1
memory_per_node = "16MiB"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[tasks]]
name = "dd"
program = "dd"
path = "/tmp/f"
size = "1MiB"
"#;
    let p = temp_file("tiny.toml", text);
    let o = mmsim(&["run", p.to_str().unwrap(), "--json", "-"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["scenario"], "tiny");
}

#[test]
fn scenario_features_override_the_preset_and_the_flag_overrides_both() {
    let text = r#"name = "feat"

[machine]
cpus_per_node = 1
memory_per_node = "16MiB"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[features]
accessed-init = false

[[tasks]]
name = "dd"
program = "dd"
path = "/tmp/f"
size = "256KiB"
"#;
    let p = temp_file("features.toml", text);
    let ps = p.to_str().unwrap();
    let json = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["run", ps, "--json", "-"];
        args.extend_from_slice(extra);
        let o = mmsim(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = json(&["--preset", "patched"]);
    assert_eq!(
        v["features"]["accessed-init"], false,
        "scenario beats preset"
    );
    assert_eq!(v["features"]["exec-protect"], true);
    let v = json(&["--preset", "patched", "--features", "+accessed-init"]);
    assert_eq!(
        v["features"]["accessed-init"], true,
        "--features beats scenario"
    );
    let v = json(&["--preset", "patched", "--features", "-workingset"]);
    assert_eq!(v["features"]["accessed-init"], false);
    assert_eq!(v["features"]["workingset"], false);
}

#[test]
fn unknown_field_through_set() {
    expect_usage_error(
        &["run", "dd-tmpfs", "--set", "machine.colour=blue"],
        &["colour", "unknown field"],
    );
}

#[test]
fn zero_cpus() {
    expect_usage_error(
        &["run", "dd-tmpfs", "--set", "machine.cpus_per_node=0"],
        &["cpus_per_node", "at least 1 CPU"],
    );
}

#[test]
fn dd_file_larger_than_the_device() {
    expect_usage_error(
        &[
            "run",
            "dd-blockfs",
            "--set",
            SMALL,
            "--set",
            "devices.sda.size=1MiB",
        ],
        &["tasks.dd.size", "larger than the device"],
    );
}

#[test]
fn block_size_zero() {
    expect_usage_error(
        &["run", "dd-tmpfs", "--set", "tasks.dd.block_size=0"],
        &["tasks.dd.block_size", "block size"],
    );
}

#[test]
fn unknown_preset() {
    expect_usage_error(
        &["run", "dd-tmpfs", "--preset", "turbo"],
        &["--preset", "turbo"],
    );
}

#[test]
fn unknown_feature() {
    expect_usage_error(
        &["run", "dd-tmpfs", "--features", "+warp-drive"],
        &["--features", "warp-drive"],
    );
}

#[test]
fn unknown_set_key_path() {
    expect_usage_error(
        &["run", "dd-tmpfs", "--set", "nosuch.key=1"],
        &["--set", "nosuch"],
    );
    expect_usage_error(
        &["run", "dd-tmpfs", "--set", "tasks.nobody.iterations=1"],
        &["--set", "nobody"],
    );
    expect_usage_error(
        &["run", "dd-tmpfs", "--set", "machine"],
        &["--set", "key=value"],
    );
}

/// `mmsim run … --json - | head -c 10`: the reader closing the pipe early is not an error
/// (exit 0, no message), like any Unix filter.
#[test]
fn json_to_a_closed_pipe_is_not_an_error() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mmsim"))
        .args(["run", "dd-tmpfs", "--set", SMALL, "--json", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mmsim runs");
    // Close the read end before anything is written.
    drop(child.stdout.take());
    let o = child.wait_with_output().expect("mmsim exits");
    assert!(o.status.success(), "status {:?}: {}", o.status, stderr(&o));
    assert!(!stderr(&o).contains("error"), "{}", stderr(&o));
}

/// A scenario file naming an unknown kernel: exit status 2, the file, line and field.
#[test]
fn unknown_kernel_in_a_scenario_file() {
    let text = r#"name = "old"
kernel = "2.4.37"

[machine]
cpus_per_node = 1
memory_per_node = "16MiB"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[tasks]]
name = "dd"
program = "dd"
path = "/tmp/f"
size = "1MiB"
"#;
    let p = temp_file("old-kernel.toml", text);
    let ps = p.to_str().unwrap();
    expect_usage_error(
        &["run", ps],
        &[
            &format!("{ps}:2: kernel: "),
            "kernel version \"2.4.37\"",
            "2.6.30 to 6.18",
        ],
    );
}

/// `--kernel` takes one of the modelled versions, in `run`, `reproduce` and `swarm`.
#[test]
fn unknown_kernel_flag() {
    for args in [
        &["run", "dd-tmpfs", "--kernel", "9.9"][..],
        &["reproduce", "accessed-init", "--kernel", "9.9"],
        &["swarm", "--runs", "1", "--kernel", "9.9"],
    ] {
        expect_usage_error(args, &["--kernel", "\"9.9\"", "2.6.30", "6.18"]);
    }
}

/// The summary names the era; `--kernel` overrides the scenario's `kernel`, and the era's
/// rules show in the JSON features.
#[test]
fn kernel_flag_overrides_the_scenario_era() {
    let o = mmsim(&["run", "dd-tmpfs", "--set", SMALL]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).lines().any(|l| l == "kernel     3.15"),
        "{}",
        stdout(&o)
    );
    let (_, v) = run_json(&[]);
    assert_eq!(
        v["features"]["lru-cost-balance"], false,
        "3.15 has no cost balancing"
    );
    let (_, v) = run_json(&["--kernel", "6.1"]);
    assert_eq!(v["features"]["lru-cost-balance"], true);
    assert_eq!(v["features"]["workingset"], true);
    let (_, v) = run_json(&["--kernel", "2.6.30", "--features", "+workingset"]);
    assert_eq!(
        v["features"]["workingset"], true,
        "--features beats the era"
    );
    assert_eq!(v["features"]["file-only-when-plenty"], false);
}

/// Any release between the named eras runs: its rules are those that came by then, and
/// what it reports follows the version (PSI from 4.20, memory.stat pswpin from 6.13).
#[test]
fn a_kernel_between_the_named_eras_runs_with_its_own_rules_and_files() {
    let text = r#"name = "between"

[machine]
cpus_per_node = 1
memory_per_node = "32MiB"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[cgroups]]
name = "box"
memory_max = "16MiB"

[[tasks]]
name = "dd"
program = "dd"
path = "/tmp/f"
size = "4MiB"
cgroup = "box"
"#;
    let p = temp_file("between-kernel.toml", text);
    let ps = p.to_str().unwrap();
    let run = |kernel: &str| {
        let o = mmsim(&["run", ps, "--kernel", kernel, "--json", "-"]);
        assert!(o.status.success(), "{kernel}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        v
    };
    let stat_has = |v: &serde_json::Value, key: &str| {
        v["cgroups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == "box")
            .expect("cgroup box")["stat"]
            .get(key)
            .is_some()
    };
    for (kernel, name, psi, pswpin, batch31) in [
        ("4.19", "4.19", false, false, false),
        ("4.20", "4.20", true, false, false),
        ("6.8.0-45-generic", "6.8", true, false, false),
        ("6.12", "6.12", true, false, true),
        ("6.13.2", "6.13", true, true, true),
    ] {
        let v = run(kernel);
        assert_eq!(v["kernel"], name, "{kernel}");
        assert_eq!(v["pressure"].is_object(), psi, "{kernel}: pressure");
        // /proc/pressure/irq exists from 6.1.
        assert_eq!(
            v["pressure"].get("irq").is_some(),
            kernel.starts_with('6'),
            "{kernel}: irq pressure"
        );
        assert_eq!(stat_has(&v, "pswpin"), pswpin, "{kernel}: pswpin");
        assert_eq!(v["features"]["folio-batch-31"], batch31, "{kernel}");
        // 5.9's anonymous workingset is in all of them but 4.19 and 4.20.
        assert_eq!(
            v["features"]["anon-workingset"],
            !kernel.starts_with('4'),
            "{kernel}"
        );
    }
}

#[test]
fn run_help_lists_features_builtins_and_the_json_path() {
    let o = mmsim(&["run", "--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("--json <PATH>"), "{out}");
    for f in mmsim::scenario::KNOWN_FEATURES {
        assert!(out.contains(f), "run --help lacks feature {f}:\n{out}");
    }
    for (name, _, _) in mmsim::scenario::builtin_scenarios() {
        assert!(
            out.contains(name),
            "run --help lacks built-in {name}:\n{out}"
        );
    }
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = mmsim(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let out = stdout(&o);
        assert!(
            out.contains("reproduce") && out.contains("compare") && out.len() > 1000,
            "{shell}: {out}"
        );
    }
    let o = mmsim(&["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("tcsh"), "{}", stderr(&o));
}

/// docs/kernel-eras.md's era table names, in each era's row, exactly the rules that era
/// adds to the one before (4.2 adds none), and has a row for each rule.
#[test]
fn the_era_table_lists_each_eras_new_rules() {
    use mmsim::kernel::{ERAS, RULES};
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/kernel-eras.md")).unwrap();
    for era in ERAS {
        let prefix = format!("| `{era}` | ");
        let row = doc
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("no row for {era}"));
        let cell = row[prefix.len()..].split(" | ").next().unwrap();
        let mut listed: Vec<&str> = cell
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|name| RULES.iter().any(|r| r.feature == *name))
            .collect();
        listed.sort_unstable();
        let mut want: Vec<&str> = RULES
            .iter()
            .filter(|r| r.since.named_era() == *era)
            .map(|r| r.feature)
            .collect();
        want.sort_unstable();
        assert_eq!(listed, want, "the {era} row");
    }
    for r in RULES {
        assert!(
            doc.contains(&format!("| `{}` | {} |", r.feature, r.version)),
            "no row for rule {}",
            r.feature
        );
    }
}

/// The README names every feature switch, and its test command is the one `.ci/run` runs
/// (`scripts/test-all`, which runs `cargo test --profile ci --workspace` first).
#[test]
fn readme_names_every_feature_and_the_ci_command() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let readme = read("README.md");
    for f in mmsim::scenario::KNOWN_FEATURES {
        assert!(readme.contains(&format!("`{f}`")), "README lacks `{f}`");
    }
    let command = "scripts/test-all";
    assert!(
        readme.contains(&format!("\n    {command}\n")),
        "README's test command"
    );
    let ci = read(".ci/run");
    let last = ci.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(
        last.trim(),
        command,
        ".ci/run must end with the README's command"
    );
    assert!(read(command)
        .lines()
        .any(|l| l.trim() == "cargo test --profile ci --workspace"));
}

/// `scripts/build-pgo` (not run by the suite: two fat-LTO builds) trains on built-in
/// scenarios and replay options that exist: a renamed scenario or flag would break the
/// script only when someone runs it.
#[test]
fn build_pgo_trains_on_builtins_and_replay_options_that_exist() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = std::fs::read_to_string(root.join("scripts/build-pgo")).unwrap();
    let listed = stdout(&mmsim(&["scenarios"]));
    let builtins: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // The `for s in ...; do` loop's names (continued over lines with a backslash).
    let joined = script.replace("\\\n", " ");
    let names: Vec<&str> = joined
        .lines()
        .find_map(|l| l.trim().strip_prefix("for s in "))
        .and_then(|l| l.split(';').next())
        .expect("build-pgo's loop over scenarios")
        .split_whitespace()
        .collect();
    assert!(names.len() >= 5, "{names:?}");
    for n in &names {
        assert!(
            builtins.contains(n),
            "build-pgo trains on {n}, not a built-in: {listed}"
        );
    }
    let help = stdout(&mmsim(&["replay", "--help"]));
    let replays: Vec<&str> = script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("train replay "))
        .collect();
    assert!(!replays.is_empty());
    for r in replays {
        for flag in r.split_whitespace().filter(|w| w.starts_with("--")) {
            assert!(
                help.contains(flag),
                "build-pgo's replay uses {flag}, not in --help"
            );
        }
    }
}

#[test]
fn an_unwritable_output_is_refused_before_the_run() {
    // The full seed-002 run takes minutes: a bad --json path must fail at once, not after.
    let t0 = std::time::Instant::now();
    expect_usage_error(
        &[
            "run",
            "lru-file-mmap-read-full",
            "--json",
            "/nonexistent/r.json",
        ],
        &["--json", "/nonexistent/r.json"],
    );
    let dir = temp_file("out-probe", "").parent().unwrap().to_path_buf();
    expect_usage_error(
        &[
            "run",
            "lru-file-mmap-read-full",
            "--json",
            dir.to_str().unwrap(),
        ],
        &["--json", "is a directory"],
    );
    let file = temp_file("not-a-dir", "x");
    let under_file = file.join("out");
    expect_usage_error(
        &[
            "reproduce",
            "batch-tlb-flush",
            "--out",
            under_file.to_str().unwrap(),
        ],
        &["--out", "not-a-dir"],
    );
    assert!(
        t0.elapsed() < std::time::Duration::from_secs(60),
        "refused before running"
    );
    // A good path that did not exist is not left behind by the check; the run writes it.
    let out = dir.join("fresh.json");
    let _ = std::fs::remove_file(&out);
    let o = mmsim(&[
        "run",
        "dd-tmpfs",
        "--set",
        SMALL,
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(v.get("vmstat").is_some());
}

/// The summary's task, cgroup and pressure tables widen their name column to the longest
/// name: a nested cgroup's path (as systemd or a kubelet names them) keeps the numbers in
/// line.
#[test]
fn summary_name_columns_fit_long_cgroup_paths() {
    let path = temp_file(
        "long-cgroup-names.toml",
        r#"name = "long-cgroup-names"
kernel = "6.18"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "128MiB"
[swap]
size = "64MiB"
[[cgroups]]
name = "kubepods-burstable-pod1234"
memory_max = "32MiB"
[[cgroups]]
name = "kubepods-burstable-pod1234/container-abcdef"
memory_max = "4MiB"
[[tasks]]
name = "a-task-with-a-long-name"
cgroup = "kubepods-burstable-pod1234/container-abcdef"
program = "anon"
size = "8MiB"
"#,
    );
    let o = mmsim(&["run", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let section = |title: &str| -> Vec<String> {
        out.lines()
            .skip_while(|l| !l.starts_with(title))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .map(str::to_string)
            .collect()
    };
    let names_w = || "kubepods-burstable-pod1234/container-abcdef".len();
    // Where the first number after the name column starts, on each line.
    let value_column = |l: &str, name: &str| {
        l[2 + name.len()..].len() - l[2 + name.len()..].trim_start().len() + 2 + name.len()
    };
    // A cgroup's line, and under it, with a blank name column, its swap line.
    let (cg, swap): (Vec<String>, Vec<String>) = section("cgroups")
        .into_iter()
        .partition(|l| !l[2..].starts_with(' '));
    assert!(!swap.is_empty(), "{out}");
    for l in &swap {
        assert_eq!(l.find("swap"), Some(2 + names_w() + 1), "{l}");
    }
    let names = [
        "/",
        "kubepods-burstable-pod1234",
        "kubepods-burstable-pod1234/container-abcdef",
    ];
    assert_eq!(cg.len(), 3, "{out}");
    let cols: Vec<usize> = cg
        .iter()
        .zip(names)
        .map(|(l, n)| {
            assert!(l[2..].starts_with(n), "{l}");
            value_column(l, n)
        })
        .collect();
    assert!(
        cols.iter().all(|&c| c == cols[0]),
        "cgroup lines out of line:\n{}",
        cg.join("\n")
    );
    let tasks = section("tasks");
    assert!(
        tasks[0][2..].starts_with("a-task-with-a-long-name cpu "),
        "{}",
        tasks[0]
    );
    let psi = section("pressure");
    let first = psi
        .iter()
        .map(|l| l[2..].split_whitespace().next().unwrap().len())
        .max()
        .unwrap();
    assert_eq!(first, names[2].len(), "{}", psi.join("\n"));
    let resource_cols: std::collections::BTreeSet<usize> = psi
        .iter()
        .map(|l| {
            let n = l[2..].split_whitespace().next().unwrap();
            value_column(l, n)
        })
        .collect();
    assert_eq!(
        resource_cols.len(),
        1,
        "pressure lines out of line:\n{}",
        psi.join("\n")
    );
}

/// `--kernel` is the scenario's kernel for its checks: dd-tmpfs names 4.2, whose
/// swappiness stops at 100, but a run on 6.18's rules takes 150 (and the JSON says so).
#[test]
fn kernel_flag_decides_the_scenarios_era_checks() {
    expect_usage_error(
        &[
            "run",
            "dd-tmpfs",
            "--set",
            SMALL,
            "--set",
            "vm.swappiness=150",
        ],
        &["vm.swappiness", "from kernel 5.8"],
    );
    let (_, v) = run_json(&["--kernel", "6.18", "--set", "vm.swappiness=150"]);
    assert_eq!(v["kernel"], "6.18");
    assert_eq!(v["vm"]["swappiness"], 150);
}
