//! Scenario loading through the public API: the built-ins, `--set` overrides, and one
//! clear error (file, line, field) for each kind of bad input.

use mmsim::kernel::{resolve_features, KernelEra};
use mmsim::scenario::{
    builtin_scenarios, load_scenario, parse_scenario, CgroupSpec, DevicePreset, FsKind, Scenario,
    ScenarioError, KNOWN_FEATURES,
};

const GIB: u64 = 1 << 30;

/// A valid scenario; tests replace single lines, so the line numbers below are exact.
const BASE: &str = r#"name = "t"

[machine]
nodes = 1
cpus_per_node = 4
memory_per_node = "4GiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "64GiB"

[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "sda"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[tasks]]
name = "writer"
cpu = 1
program = "dd"
path = "/mnt/f"
size = "1GiB"

[[tasks]]
name = "dd"
cpu = 0
program = "dd"
path = "/tmp/f"
size = "ram/10"
block_size = "1MiB"
iterations = 5
"#;

/// BASE with 1-based line `n` replaced by `new`.
fn with_line(n: usize, new: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    assert!(n >= 1 && n <= lines.len(), "line {n} out of range");
    lines[n - 1] = new;
    lines.join("\n") + "\n"
}

fn sets(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| s.to_string()).collect()
}

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    parse_scenario(text, "t.toml", &[])
}

/// Parse `text`, expect an error at `line` on `field`, and return its message.
fn expect_err(text: &str, line: usize, field: &str) -> String {
    let err = parse(text).expect_err("the scenario should be rejected");
    assert_eq!(err.file, "t.toml", "{err}");
    assert_eq!(err.line, Some(line), "{err}");
    assert_eq!(err.field, field, "{err}");
    err.message
}

fn dd(s: &Scenario, task: &str) -> mmsim::workload::dd::DdSpec {
    let t = s
        .tasks
        .iter()
        .find(|t| t.name == task)
        .expect("task exists");
    match t.program.get::<mmsim::workload::dd::DdSpec>() {
        Some(d) => d.clone(),
        None => panic!("task {task} runs {:?}, not dd", t.program),
    }
}

#[test]
fn base_is_valid() {
    let s = parse(BASE).unwrap();
    assert_eq!(s.source, "t.toml");
    assert_eq!(s.seed, 1);
    assert_eq!(s.sample_interval_ns, 100_000_000);
    assert_eq!(s.machine.cost_profile, "default");
    assert_eq!(s.tasks.len(), 2);
    assert_eq!(
        dd(&s, "writer").block_size_bytes,
        1 << 20,
        "block_size defaults to 1 MiB"
    );
    assert_eq!(dd(&s, "writer").iterations, 1, "iterations default to 1");
    assert!(!dd(&s, "writer").sync);
    assert_eq!(s.resolve_mount("/mnt/f").map(|(i, _)| i), Some(0));
    assert_eq!(
        s.resolve_mount("/tmp/f").map(|(i, f)| (i, f.kind)),
        Some((1, FsKind::Tmpfs))
    );
    assert_eq!(s.resolve_mount("/mntx/f"), None);
}

#[test]
fn builtin_dd_tmpfs_loads() {
    let s = load_scenario("dd-tmpfs", &[]).unwrap();
    assert_eq!(s.name, "dd-tmpfs");
    assert_eq!(s.source, "built-in:dd-tmpfs");
    assert_eq!((s.machine.nodes, s.machine.cpus_per_node), (1, 4));
    assert_eq!(s.total_cpus(), 4);
    assert_eq!(s.total_memory_bytes(), 4 * GIB);
    assert!(s.devices.is_empty());
    assert_eq!(s.filesystems.len(), 1);
    assert_eq!(
        (s.filesystems[0].mount.as_str(), s.filesystems[0].kind),
        ("/tmp", FsKind::Tmpfs)
    );
    assert_eq!(s.tasks.len(), 1);
    assert_eq!(
        (
            s.tasks[0].name.as_str(),
            s.tasks[0].cpu,
            s.tasks[0].start_ns
        ),
        ("dd", 0, 0)
    );
    let d = dd(&s, "dd");
    assert_eq!(d.path, "/tmp/ddfile");
    assert_eq!(d.size_bytes, 4 * GIB / 10);
    assert_eq!(d.block_size_bytes, 1 << 20);
    assert_eq!(d.iterations, 5);
    assert!(!d.sync);
}

#[test]
fn builtin_dd_blockfs_loads() {
    let s = load_scenario("dd-blockfs", &[]).unwrap();
    assert_eq!(s.source, "built-in:dd-blockfs");
    assert_eq!(s.total_cpus(), 4);
    assert_eq!(s.total_memory_bytes(), 4 * GIB);
    assert_eq!(s.devices.len(), 1);
    assert_eq!(s.devices[0].preset, DevicePreset::Ssd);
    assert_eq!(s.devices[0].size_bytes, 64 * GIB);
    let fs = &s.filesystems[0];
    assert_eq!((fs.mount.as_str(), fs.kind), ("/mnt", FsKind::Blockfs));
    assert_eq!(fs.device.as_deref(), Some(s.devices[0].name.as_str()));
    let d = dd(&s, "dd");
    assert_eq!(d.path, "/mnt/ddfile");
    assert_eq!(d.size_bytes, 4 * GIB / 10);
    assert_eq!(d.iterations, 5);
    assert_eq!(s.resolve_mount(&d.path).map(|(i, _)| i), Some(0));
}

#[test]
fn every_builtin_is_listed_and_valid() {
    let names: Vec<&str> = builtin_scenarios().iter().map(|(n, _, _)| *n).collect();
    assert!(
        names.contains(&"dd-tmpfs") && names.contains(&"dd-blockfs"),
        "{names:?}"
    );
    for (name, desc, _) in builtin_scenarios() {
        assert!(
            !desc.is_empty() && !desc.contains('\n'),
            "{name}: one-line description"
        );
        let s = load_scenario(name, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&s.name, name);
        assert!(s.kernel.is_some(), "{name}: a built-in pins its kernel era");
        // The run JSON embeds the scenario.
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["machine"]["cpus_per_node"].as_u64(),
            Some(u64::from(s.machine.cpus_per_node))
        );
        assert!(json["tasks"][0]["program"]["program"].is_string());
    }
}

#[test]
fn set_overrides_machine_task_and_features() {
    let s = load_scenario(
        "dd-blockfs",
        &sets(&[
            "machine.cpus_per_node=2",
            "seed=7",
            "tasks.dd.iterations=3",
            "tasks.0.block_size=4KiB",
            "tasks.dd.sync=true",
            "devices.sda.preset=hdd",
            "features.workingset=false",
            "features.accessed-init=true",
            "machine.memory_per_node=1GiB",
            "sample_interval=\"5ms\"",
        ]),
    )
    .unwrap();
    assert_eq!(s.total_cpus(), 2);
    assert_eq!(s.seed, 7);
    assert_eq!(s.sample_interval_ns, 5_000_000);
    let d = dd(&s, "dd");
    assert_eq!(d.iterations, 3);
    assert_eq!(d.block_size_bytes, 4096);
    assert!(d.sync);
    assert_eq!(
        d.size_bytes,
        GIB / 10,
        "ram/10 follows the overridden memory"
    );
    assert_eq!(s.devices[0].preset, DevicePreset::Hdd);
    assert_eq!(s.features.get("workingset"), Some(&false));
    assert_eq!(s.features.get("accessed-init"), Some(&true));
}

#[test]
fn set_with_unknown_task_names_the_key() {
    let err = load_scenario("dd-tmpfs", &sets(&["tasks.nope.iterations=3"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.line, err.field.as_str()),
        ("--set", None, "tasks.nope.iterations")
    );
    assert!(
        err.message.contains("nope") && err.message.contains("dd"),
        "{err}"
    );

    let err = load_scenario("dd-tmpfs", &sets(&["tasks.7.iterations=3"])).unwrap_err();
    assert_eq!(err.field, "tasks.7.iterations");

    let err = load_scenario("dd-tmpfs", &sets(&["nosuch.key=1"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.field.as_str()),
        ("--set", "nosuch.key")
    );
    assert!(err.message.contains("no table `nosuch`"), "{err}");

    let err = load_scenario("dd-tmpfs", &sets(&["seed.x=1"])).unwrap_err();
    assert_eq!(err.field, "seed.x");

    let err = load_scenario("dd-tmpfs", &sets(&["machine=1"])).unwrap_err();
    assert_eq!(err.field, "machine");

    let err = load_scenario("dd-tmpfs", &sets(&["machine.cpus_per_node"])).unwrap_err();
    assert!(err.message.contains("key=value"), "{err}");
}

#[test]
fn set_values_are_validated_like_file_values() {
    // A new leaf in an existing table is accepted by --set, then rejected as unknown.
    let err = load_scenario("dd-tmpfs", &sets(&["machine.bogus=1"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.line, err.field.as_str()),
        ("--set", None, "machine.bogus")
    );
    assert!(err.message.contains("unknown field `bogus`"), "{err}");

    let err = load_scenario("dd-tmpfs", &sets(&["machine.cpus_per_node=0"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.field.as_str()),
        ("--set", "machine.cpus_per_node")
    );

    let err = load_scenario("dd-tmpfs", &sets(&["tasks.0.cpu=4"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.field.as_str()),
        ("--set", "tasks.0.cpu")
    );
    assert!(err.message.contains("0..=3"), "{err}");

    let err = load_scenario("dd-tmpfs", &sets(&["features.nope=true"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.field.as_str()),
        ("--set", "features.nope")
    );
}

#[test]
fn unknown_scenario_name_lists_builtins() {
    let err = load_scenario("dd-nope", &[]).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.line, err.field.as_str()),
        ("dd-nope", None, "")
    );
    assert!(
        err.message.contains("dd-tmpfs") && err.message.contains("dd-blockfs"),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("dd-nope: unknown built-in scenario"),
        "{err}"
    );
}

#[test]
fn missing_file_names_the_path() {
    let path = "/nonexistent/dir/scenario.toml";
    let err = load_scenario(path, &[]).unwrap_err();
    assert_eq!((err.file.as_str(), err.line), (path, None));
    assert!(err.message.contains("cannot read"), "{err}");
    assert!(err.to_string().starts_with(path), "{err}");
}

#[test]
fn file_loads_with_its_path_as_source() {
    let dir = std::env::temp_dir().join(format!("mmsim-scenario-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(&path, with_line(31, "cpu = 9")).unwrap();
    let p = path.to_str().unwrap();
    let err = load_scenario(p, &[]).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.line, err.field.as_str()),
        (p, Some(31), "tasks.dd.cpu")
    );
    assert_eq!(
        err.to_string(),
        format!("{p}:31: tasks.dd.cpu: {}", err.message)
    );
    std::fs::write(&path, BASE).unwrap();
    assert_eq!(load_scenario(p, &[]).unwrap().source, p);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_toml_reports_the_line() {
    let err = parse(&with_line(11, "size = \"64GiB")).unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("t.toml", Some(11)), "{err}");
    assert!(err.message.starts_with("invalid TOML"), "{err}");

    let err = parse(&with_line(20, "type = ")).unwrap_err();
    assert_eq!(err.line, Some(20), "{err}");
}

#[test]
fn unknown_field_reports_line_and_field() {
    let msg = expect_err(
        &with_line(35, "blok_size = \"1MiB\""),
        35,
        "tasks.dd.blok_size",
    );
    assert!(
        msg.contains("unknown field `blok_size`") && msg.contains("block_size"),
        "{msg}"
    );
    expect_err(&with_line(4, "numa_nodes = 1"), 4, "machine.numa_nodes");
    expect_err(&with_line(2, "colour = \"blue\""), 2, "colour");
}

#[test]
fn zero_cpus() {
    let msg = expect_err(
        &with_line(5, "cpus_per_node = 0"),
        5,
        "machine.cpus_per_node",
    );
    assert!(msg.contains("at least 1 CPU"), "{msg}");
    expect_err(&with_line(4, "nodes = 0"), 4, "machine.nodes");
    expect_err(
        &with_line(5, "cpus_per_node = 1025"),
        5,
        "machine.cpus_per_node",
    );
}

#[test]
fn cpu_out_of_range_in_the_right_task_block() {
    // `cpu` first appears on line 24 (task "writer"); the bad one is on line 31.
    let msg = expect_err(&with_line(31, "cpu = 4"), 31, "tasks.dd.cpu");
    assert!(msg.contains("4 CPUs (0..=3)"), "{msg}");
}

#[test]
fn dd_file_larger_than_the_device() {
    let msg = expect_err(&with_line(27, "size = \"65GiB\""), 27, "tasks.writer.size");
    assert!(
        msg.contains("file larger than the device") && msg.contains("64 GiB"),
        "{msg}"
    );
    // On tmpfs the limit is the tmpfs's size: half of RAM by default (2 GiB here).
    let msg = expect_err(&with_line(34, "size = \"ram*3/4\""), 34, "tasks.dd.size");
    assert!(
        msg.contains("larger than the tmpfs at /tmp") && msg.contains("2 GiB"),
        "{msg}"
    );
    parse(&with_line(34, "size = \"ram/2\"")).expect("half of RAM fits the default tmpfs");
    // A `size` on the tmpfs moves the limit.
    let text = with_line(20, "type = \"tmpfs\"\nsize = \"ram\"")
        .replace("size = \"ram/10\"", "size = \"ram*3/4\"");
    parse(&text).expect("a tmpfs of RAM's size holds 3/4 of RAM");
}

#[test]
fn tmpfs_size_is_a_tmpfs_option_of_at_least_a_page() {
    let s = parse(BASE).expect("base parses");
    assert_eq!(s.filesystems[1].size_bytes, Some(2 * GIB), "half of RAM");
    assert_eq!(s.filesystems[0].size_bytes, None);
    let msg = expect_err(
        &with_line(16, "device = \"sda\"\nsize = \"1GiB\""),
        17,
        "filesystems.0.size",
    );
    assert!(msg.contains("`size` is a tmpfs option"), "{msg}");
    let msg = expect_err(
        &with_line(20, "type = \"tmpfs\"\nsize = \"2KiB\""),
        21,
        "filesystems.1.size",
    );
    assert!(msg.contains("between 4 KiB and 64 TiB"), "{msg}");
}

#[test]
fn block_size_zero_and_too_large() {
    let msg = expect_err(&with_line(35, "block_size = 0"), 35, "tasks.dd.block_size");
    assert!(msg.contains("between 1 byte and 1 GiB"), "{msg}");
    expect_err(
        &with_line(35, "block_size = \"2GiB\""),
        35,
        "tasks.dd.block_size",
    );
}

#[test]
fn bad_size_string_lists_accepted_forms() {
    let msg = expect_err(&with_line(34, "size = \"ram%10\""), 34, "tasks.dd.size");
    assert!(
        msg.contains("\"ram%10\"") && msg.contains("ram/10") && msg.contains("4GiB"),
        "{msg}"
    );
    let msg = expect_err(&with_line(11, "size = \"64 gigs\""), 11, "devices.sda.size");
    assert!(msg.contains("unknown unit"), "{msg}");
    let msg = expect_err(
        &with_line(6, "memory_per_node = \"ram\""),
        6,
        "machine.memory_per_node",
    );
    assert!(msg.contains("`ram` cannot be used here"), "{msg}");
    let msg = expect_err(&with_line(27, "size = 1.5"), 27, "tasks.writer.size");
    assert!(msg.contains("found a float"), "{msg}");
}

#[test]
fn unknown_feature_lists_known_ones() {
    let text = format!("{BASE}\n[features]\nworkingset = true\nfoo = true\n");
    // BASE has 36 lines; the blank line is 37, [features] 38, workingset 39, foo 40.
    let msg = expect_err(&text, 40, "features.foo");
    for f in KNOWN_FEATURES {
        assert!(msg.contains(f), "{msg} should list {f}");
    }
    let s = parse(&format!("{BASE}\n[features]\nworkingset = false\n")).unwrap();
    assert_eq!(s.features.get("workingset"), Some(&false));
}

#[test]
fn unknown_device_reference() {
    let msg = expect_err(
        &with_line(16, "device = \"sdb\""),
        16,
        "filesystems.0.device",
    );
    assert!(
        msg.contains("unknown device \"sdb\"") && msg.contains("sda"),
        "{msg}"
    );
    // A blockfs without a device: reported at its [[filesystems]] header.
    let msg = expect_err(&with_line(16, ""), 13, "filesystems.0.device");
    assert!(msg.contains("missing required field `device`"), "{msg}");
    // A tmpfs with one.
    expect_err(
        &with_line(20, "type = \"tmpfs\"\ndevice = \"sda\""),
        21,
        "filesystems.1.device",
    );
}

#[test]
fn other_validation_errors() {
    let msg = expect_err(
        &with_line(6, "memory_per_node = 100000000"),
        6,
        "machine.memory_per_node",
    );
    assert!(msg.contains("multiple of 4096"), "{msg}");
    expect_err(
        &with_line(6, "memory_per_node = \"8MiB\""),
        6,
        "machine.memory_per_node",
    );
    let msg = expect_err(
        &with_line(6, "memory_per_node = \"4GiB\"\ncost_profile = \"fast\""),
        7,
        "machine.cost_profile",
    );
    assert!(msg.contains("only profile for now is \"default\""), "{msg}");
    expect_err(&with_line(11, "size = \"512KiB\""), 11, "devices.sda.size");
    for bad in ["0", "6", "2097152", "\"1MiB\""] {
        let msg = expect_err(
            &with_line(11, &format!("size = \"64GiB\"\nmax_sectors_kb = {bad}")),
            12,
            "devices.sda.max_sectors_kb",
        );
        assert!(!msg.is_empty(), "{bad}");
    }
    let sc = parse(&with_line(11, "size = \"64GiB\"\nmax_sectors_kb = 512")).expect("valid");
    assert_eq!(sc.devices[0].max_sectors_kb, Some(512));
    expect_err(
        &with_line(10, "preset = \"floppy\""),
        10,
        "devices.sda.preset",
    );
    expect_err(
        &with_line(19, "mount = \"/mnt\""),
        19,
        "filesystems.1.mount",
    );
    expect_err(
        &with_line(19, "mount = \"/tmp/\""),
        19,
        "filesystems.1.mount",
    );
    expect_err(&with_line(19, "mount = \"tmp\""), 19, "filesystems.1.mount");
    let msg = expect_err(&with_line(33, "path = \"/home/f\""), 33, "tasks.dd.path");
    assert!(
        msg.contains("not under any mounted filesystem") && msg.contains("/mnt, /tmp"),
        "{msg}"
    );
    expect_err(&with_line(33, "path = \"/tmp\""), 33, "tasks.dd.path");
    expect_err(&with_line(33, "path = \"f\""), 33, "tasks.dd.path");
    expect_err(&with_line(36, "iterations = 0"), 36, "tasks.dd.iterations");
    expect_err(&with_line(34, "size = 0"), 34, "tasks.dd.size");
    let msg = expect_err(&with_line(30, "name = \"writer\""), 30, "tasks.writer.name");
    assert!(msg.contains("duplicate task name"), "{msg}");
    expect_err(&with_line(32, "program = \"cat\""), 32, "tasks.dd.program");
    expect_err(&with_line(31, "cpu = \"zero\""), 31, "tasks.dd.cpu");
    expect_err(&with_line(31, "cpu = -1"), 31, "tasks.dd.cpu");
    // A missing required field is reported at its table's header.
    expect_err(&with_line(34, ""), 29, "tasks.dd.size");
}

#[test]
fn no_tasks_and_no_name() {
    let no_tasks: String = BASE.lines().take(21).collect::<Vec<_>>().join("\n");
    let err = parse(&no_tasks).unwrap_err();
    assert_eq!((err.line, err.field.as_str()), (None, "tasks"));
    assert!(err.message.contains("at least one [[tasks]]"), "{err}");
    let err = parse(&with_line(1, "")).unwrap_err();
    assert_eq!(err.field, "name");
}

#[test]
fn truncated_or_edited_input_never_panics() {
    // Every prefix and every single-line deletion either loads or gives an error.
    for end in (0..=BASE.len()).filter(|&i| BASE.is_char_boundary(i)) {
        let _ = parse(&BASE[..end]);
    }
    for n in 1..=BASE.lines().count() {
        if let Err(e) = parse(&with_line(n, "")) {
            assert_eq!(e.file, "t.toml");
            assert!(!e.message.is_empty());
        }
    }
}

/// The desktop's keys: libraries must be declared files, `hot_code` is one of two words,
/// `noop_apps` at most `apps`, percentages at most 100; the feature of the reclaim balance
/// rule is known.
#[test]
fn desktop_keys_are_validated() {
    let err = load_scenario("desktop", &sets(&["tasks.0.hot_code=\"random\""])).unwrap_err();
    assert_eq!(err.field, "tasks.0.hot_code", "{err}");
    assert!(
        err.message.contains("\"first\"") && err.message.contains("\"spread\""),
        "{err}"
    );

    let err = load_scenario("desktop", &sets(&["tasks.0.noop_apps=52"])).unwrap_err();
    assert_eq!(err.field, "tasks.0.noop_apps", "{err}");
    assert!(err.message.contains("more than apps (51)"), "{err}");

    let err = load_scenario("desktop", &sets(&["tasks.0.libs=9"])).unwrap_err();
    assert_eq!(err.field, "tasks.desktop.lib_path", "{err}");
    assert!(
        err.message.contains("/usr/lib/lib8.so") && err.message.contains("[[files]]"),
        "{err}"
    );

    let err = load_scenario("desktop", &sets(&["tasks.0.hot_anon_write=101"])).unwrap_err();
    assert_eq!(err.field, "tasks.0.hot_anon_write", "{err}");

    let s = load_scenario("desktop", &sets(&["features.file-only-when-plenty=true"])).unwrap();
    assert_eq!(s.features.get("file-only-when-plenty"), Some(&true));
    // The seed's kernel: the 2.6.30 era turns the four later rules off.
    let s = load_scenario("desktop", &[]).unwrap();
    assert_eq!(s.kernel, Some(KernelEra::V2_6_30));
    assert!(s.features.is_empty(), "{:?}", s.features);
    let f = resolve_features(s.kernel, None, "vanilla", &s.features, None).unwrap();
    assert!(!f.workingset && !f.file_only_when_plenty && !f.adaptive_swap_readahead);
    assert!(
        !f.kswapd_file_writeback,
        "2.6.30: direct reclaim writes file pages"
    );
    let f = resolve_features(Some(KernelEra::V3_15), None, "vanilla", &s.features, None);
    assert!(f.unwrap().kswapd_file_writeback, "3.15 has v3.2's rule");
}

// ---------------------------------------------------------------------------------------
// kernel, [[cgroups]] and a task's cgroup
// ---------------------------------------------------------------------------------------

/// BASE with some lines replaced and `tail` appended (BASE has 36 lines, so the first
/// appended line is 37). Lines 2 and 28 of BASE are blank: room for `kernel` and for the
/// `cgroup` of task "writer".
fn edited(changes: &[(usize, &str)], tail: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    for &(n, new) in changes {
        lines[n - 1] = new;
    }
    lines.join("\n") + "\n" + tail
}

/// Two cgroups, a parent and its child; appended to BASE, line 37 is blank, 38 the first
/// `[[cgroups]]`, 44 the second.
const CGROUPS: &str = r#"
[[cgroups]]
name = "batch"
memory_max = "1GiB"
memory_high = "768MiB"
swap_max = "max"

[[cgroups]]
name = "batch/low"
memory_low = "ram/8"
memory_min = "64MiB"
swap_max = "256MiB"
"#;

/// One cgroup `a` with `keys` (one per line, the first on line 40).
fn one_cgroup(keys: &str) -> String {
    format!("{BASE}\n[[cgroups]]\nname = \"a\"\n{keys}\n")
}

fn task_cgroup(s: &Scenario, task: &str) -> Option<String> {
    s.tasks
        .iter()
        .find(|t| t.name == task)
        .expect("task exists")
        .cgroup
        .clone()
}

#[test]
fn kernel_cgroups_and_task_cgroup_are_read() {
    let s = parse(BASE).unwrap();
    assert_eq!(s.kernel, None, "no kernel: the default era");
    assert!(s.cgroups.is_empty());
    assert_eq!(task_cgroup(&s, "dd"), None, "tasks run in the root cgroup");

    let text = edited(
        &[(2, "kernel = \"6.1\""), (28, "cgroup = \"batch/low\"")],
        &format!("cgroup = \"/\"\n{CGROUPS}"),
    );
    let s = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.kernel, Some(KernelEra::V6_1));
    assert_eq!(
        s.cgroups,
        vec![
            CgroupSpec {
                name: "batch".into(),
                memory_max: Some(GIB),
                memory_high: Some(768 << 20),
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
            },
            CgroupSpec {
                name: "batch/low".into(),
                memory_max: None,
                memory_high: None,
                memory_low: 4 * GIB / 8,
                memory_min: 64 << 20,
                swap_max: Some(256 << 20),
                swap_high: None,
                oom_group: false,
                zswap_max: None,
                zswap_writeback: true,
                memsw_max: None,
                soft_limit: None,
                swappiness: None,
            },
        ]
    );
    assert_eq!(task_cgroup(&s, "writer").as_deref(), Some("batch/low"));
    assert_eq!(task_cgroup(&s, "dd"), None, "\"/\" is the root cgroup");
    // The run JSON embeds them.
    let json = serde_json::to_value(&s).unwrap();
    assert!(!json["kernel"].is_null());
    assert_eq!(json["cgroups"][1]["name"], "batch/low");

    // Zero is a valid memory_max (the kernel accepts it); swap_max may exceed RAM.
    let s = parse(&one_cgroup("memory_max = 0\nswap_max = \"1TiB\"")).unwrap();
    assert_eq!(s.cgroups[0].memory_max, Some(0));
    assert_eq!(s.cgroups[0].swap_max, Some(1 << 40));
}

#[test]
fn set_addresses_kernel_and_cgroups_by_name() {
    let text = format!("{BASE}{CGROUPS}");
    let s = parse_scenario(
        &text,
        "t.toml",
        &sets(&[
            "kernel=4.14",
            "cgroups.batch.memory_max=256MiB",
            "cgroups.batch/low.memory_min=1MiB",
            "cgroups.1.memory_low=0",
            "tasks.dd.cgroup=batch",
        ]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.kernel, Some(KernelEra::V4_14));
    assert_eq!(s.cgroups[0].memory_max, Some(256 << 20));
    assert_eq!(s.cgroups[1].memory_min, 1 << 20);
    assert_eq!(s.cgroups[1].memory_low, 0);
    assert_eq!(task_cgroup(&s, "dd").as_deref(), Some("batch"));
    let s = parse_scenario(&text, "t.toml", &sets(&["kernel=\"2.6.30\""])).unwrap();
    assert_eq!(s.kernel, Some(KernelEra::V2_6_30));

    // `kernel=4.20` is the version 4.20, not the number 4.2.
    let s = parse_scenario(&text, "t.toml", &sets(&["kernel=4.20"])).unwrap();
    assert_eq!(s.kernel, Some(KernelEra::new(4, 20)));
    let err = parse_scenario(&text, "t.toml", &sets(&["kernel=6.20"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.line, err.field.as_str()),
        ("--set", None, "kernel")
    );
    assert!(err.message.contains("\"6.20\""), "{err}");

    let err =
        parse_scenario(&text, "t.toml", &sets(&["cgroups.batch.memory_max=8GiB"])).unwrap_err();
    assert_eq!(
        (err.file.as_str(), err.field.as_str()),
        ("--set", "cgroups.batch.memory_max")
    );
    assert!(err.message.contains("above the machine's RAM"), "{err}");
    let err =
        parse_scenario(&text, "t.toml", &sets(&["cgroups.nope.memory_max=1MiB"])).unwrap_err();
    assert!(
        err.message.contains("batch, batch/low"),
        "the error lists the cgroups: {err}"
    );
}

#[test]
fn unknown_kernel_version() {
    let msg = expect_err(&with_line(2, "kernel = \"9.9\""), 2, "kernel");
    assert!(
        msg.contains("kernel version \"9.9\" is outside") && msg.contains("2.6.30 to 6.18"),
        "{msg}"
    );
    expect_err(&with_line(2, "kernel = \"6.19\""), 2, "kernel");
    expect_err(&with_line(2, "kernel = \"2.6.29\""), 2, "kernel");
    let msg = expect_err(&with_line(2, "kernel = \"six\""), 2, "kernel");
    assert!(msg.contains("not a version like 6.8"), "{msg}");
    let msg = expect_err(&with_line(2, "kernel = 6.1"), 2, "kernel");
    assert!(msg.contains("kernel = \"6.1\""), "{msg}");
    expect_err(&with_line(2, "kernel = true"), 2, "kernel");
}

#[test]
fn unknown_cgroup_on_a_task_lists_the_declared_ones() {
    let msg = expect_err(
        &edited(&[(28, "cgroup = \"nope\"")], CGROUPS),
        28,
        "tasks.writer.cgroup",
    );
    assert!(
        msg.contains("unknown cgroup \"nope\"") && msg.contains("batch, batch/low"),
        "{msg}"
    );
    let msg = expect_err(
        &with_line(28, "cgroup = \"batch\""),
        28,
        "tasks.writer.cgroup",
    );
    assert!(msg.contains("no [[cgroups]] are declared"), "{msg}");
    expect_err(
        &edited(&[(28, "cgroup = \"\"")], CGROUPS),
        28,
        "tasks.writer.cgroup",
    );
    expect_err(
        &edited(&[(28, "cgroup = 1")], CGROUPS),
        28,
        "tasks.writer.cgroup",
    );
}

#[test]
fn a_child_needs_its_parent_declared_before_it() {
    let msg = expect_err(
        &format!("{BASE}\n[[cgroups]]\nname = \"a/b\"\n"),
        39,
        "cgroups.a/b.name",
    );
    assert!(
        msg.contains("parent cgroup \"a\"") && msg.contains("not declared"),
        "{msg}"
    );
    // Declared, but after the child.
    let text = format!("{BASE}\n[[cgroups]]\nname = \"a/b\"\n\n[[cgroups]]\nname = \"a\"\n");
    expect_err(&text, 39, "cgroups.a/b.name");
    // A grandchild needs its own parent, not only the top.
    let text = format!("{BASE}\n[[cgroups]]\nname = \"a\"\n\n[[cgroups]]\nname = \"a/b/c\"\n");
    let msg = expect_err(&text, 42, "cgroups.a/b/c.name");
    assert!(msg.contains("\"a/b\""), "{msg}");
}

#[test]
fn cgroup_names_are_paths_below_the_root() {
    for bad in ["/a", "a/", "a//b", "a.b", "1a", "/", ""] {
        let text = format!("{BASE}\n[[cgroups]]\nname = \"{bad}\"\n");
        let msg = expect_err(&text, 39, "cgroups.0.name");
        assert!(msg.contains("invalid cgroup name"), "{bad:?}: {msg}");
    }
    let text = format!("{BASE}\n[[cgroups]]\nmemory_max = \"1GiB\"\n");
    let msg = expect_err(&text, 38, "cgroups.0.name");
    assert!(msg.contains("missing required field `name`"), "{msg}");
}

#[test]
fn duplicate_cgroup_name() {
    let text = format!("{BASE}\n[[cgroups]]\nname = \"a\"\n\n[[cgroups]]\nname = \"a\"\n");
    let msg = expect_err(&text, 42, "cgroups.a.name");
    assert!(msg.contains("duplicate cgroup name \"a\""), "{msg}");
}

#[test]
fn unknown_key_in_cgroups() {
    let msg = expect_err(
        &one_cgroup("memory_limit = \"1GiB\""),
        40,
        "cgroups.a.memory_limit",
    );
    assert!(
        msg.contains("unknown field `memory_limit`") && msg.contains("memory_max, memory_high"),
        "{msg}"
    );
}

#[test]
fn cgroup_limit_above_ram() {
    for key in ["memory_max", "memory_high", "memory_low", "memory_min"] {
        let msg = expect_err(
            &one_cgroup(&format!("{key} = \"8GiB\"")),
            40,
            &format!("cgroups.a.{key}"),
        );
        assert!(
            msg.contains("above the machine's RAM (4 GiB)") && msg.contains("8 GiB"),
            "{key}: {msg}"
        );
    }
    expect_err(
        &one_cgroup("memory_max = \"ram*2\""),
        40,
        "cgroups.a.memory_max",
    );
    // Exactly the RAM is fine.
    let s = parse(&one_cgroup("memory_max = \"ram\"")).unwrap();
    assert_eq!(s.cgroups[0].memory_max, Some(4 * GIB));
}

#[test]
fn negative_cgroup_limit() {
    let msg = expect_err(
        &one_cgroup("memory_max = \"-1\""),
        40,
        "cgroups.a.memory_max",
    );
    assert!(
        msg.contains("cannot be negative") && msg.contains("\"max\""),
        "{msg}"
    );
    let msg = expect_err(&one_cgroup("swap_max = -1"), 40, "cgroups.a.swap_max");
    assert!(msg.contains("cannot be negative"), "{msg}");
    let msg = expect_err(
        &one_cgroup("memory_min = \"-64MiB\""),
        40,
        "cgroups.a.memory_min",
    );
    assert!(msg.contains("cannot be negative"), "{msg}");
    // "max" is a limit, not a protection.
    let msg = expect_err(
        &one_cgroup("memory_low = \"max\""),
        40,
        "cgroups.a.memory_low",
    );
    assert!(
        msg.contains("memory_max, memory_high, swap_max, swap_high and zswap_max"),
        "{msg}"
    );
    let msg = expect_err(
        &one_cgroup("memory_high = \"lots\""),
        40,
        "cgroups.a.memory_high",
    );
    assert!(msg.contains("invalid size"), "{msg}");
}

#[test]
fn memory_min_above_memory_max() {
    let msg = expect_err(
        &one_cgroup("memory_max = \"1GiB\"\nmemory_min = \"2GiB\""),
        41,
        "cgroups.a.memory_min",
    );
    assert!(
        msg.contains("memory_min (2 GiB) is above memory_max (1 GiB)"),
        "{msg}"
    );
    // Equal is fine, and so is memory_low above memory_max (the kernel allows both).
    parse(&one_cgroup(
        "memory_max = \"1GiB\"\nmemory_min = \"1GiB\"\nmemory_low = \"2GiB\"",
    ))
    .unwrap();
}

#[test]
fn replicated_tasks_keep_their_cgroup() {
    let text = format!(
        "{BASE}\n[[cgroups]]\nname = \"g0\"\n\n[[cgroups]]\nname = \"g1\"\n\n\
         [[tasks]]\nname = \"r{{i}}\"\nreplicas = 2\nprogram = \"dd\"\npath = \"/tmp/r{{i}}\"\n\
         size = \"1MiB\"\ncgroup = \"g{{i}}\"\n\n\
         [[tasks]]\nname = \"s\"\nreplicas = 2\nprogram = \"dd\"\npath = \"/tmp/s{{i}}\"\n\
         size = \"1MiB\"\ncgroup = \"g1\"\n"
    );
    let s = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(task_cgroup(&s, "r0").as_deref(), Some("g0"));
    assert_eq!(task_cgroup(&s, "r1").as_deref(), Some("g1"));
    assert_eq!(task_cgroup(&s, "s0").as_deref(), Some("g1"));
    assert_eq!(task_cgroup(&s, "s1").as_deref(), Some("g1"));
    // A third copy names g2, which is not declared: the error names the copy and the line.
    let text = text.replacen("replicas = 2", "replicas = 3", 1);
    let err = parse(&text).unwrap_err();
    assert_eq!(
        (err.line, err.field.as_str()),
        (Some(50), "tasks.r2.cgroup"),
        "{err}"
    );
    assert!(err.message.contains("\"g2\""), "{err}");
}

#[test]
fn too_many_tasks_are_refused_by_count() {
    // 129 tables of 4096 replicas: more tasks than a run may have (each has an mm, and a
    // TLB tag holds 2^20 of them).
    let per = 4096;
    let tables = mmsim::scenario::MAX_TASKS / per + 1;
    let mut text = BASE.to_string();
    for i in 0..tables {
        text += &format!(
            "\n[[tasks]]\nname = \"r{i}-{{i}}\"\nreplicas = {per}\nprogram = \"dd\"\n\
             path = \"/tmp/r{i}-{{i}}\"\nsize = \"4KiB\"\n"
        );
    }
    let err = parse(&text).expect_err("too many tasks");
    assert_eq!(err.file, "t.toml", "{err}");
    assert!(err.message.contains("too many tasks"), "{err}");
    assert!(
        err.message.contains(&format!("{}", tables * per + 2)),
        "{err}"
    );
}

/// A `senpai` task's bad keys name their line and field: a probe above the whole limit, a
/// zero tick, a number where a string belongs, an unknown target cgroup.
#[test]
fn senpai_keys_are_checked() {
    let text = |extra: &str| {
        format!(
            "{BASE}\n[[cgroups]]\nname = \"app\"\n\n[[tasks]]\nname = \"s\"\ncpu = 2\nprogram = \"senpai\"\ntarget = \"app\"\n{extra}\n"
        )
    };
    let line = |t: &str, key: &str| {
        t.lines()
            .position(|l| l.starts_with(&format!("{key} =")))
            .expect("the key")
            + 1
    };
    assert!(parse(&text("max_probe = 0.5\ncoeff_probe = 4")).is_ok());
    let t = text("max_probe = 2");
    let msg = expect_err(&t, line(&t, "max_probe"), "tasks.s.max_probe");
    assert!(msg.contains("at most 1"), "{msg}");
    let t = text("max_probe = -0.1");
    expect_err(&t, line(&t, "max_probe"), "tasks.s.max_probe");
    let t = text("coeff_probe = 0");
    let msg = expect_err(&t, line(&t, "coeff_probe"), "tasks.s.coeff_probe");
    assert!(msg.contains("greater than 0"), "{msg}");
    let t = text("tick = 0");
    expect_err(&t, line(&t, "tick"), "tasks.s.tick");
    let t = text("mode = \"limit\"");
    let msg = expect_err(&t, line(&t, "mode"), "tasks.s.mode");
    assert!(msg.contains("\"reclaim\", \"high\""), "{msg}");
    assert!(parse(&text(
        "mode = \"high\"\nmax_backoff = 0.5\nlimit_max = \"1GiB\""
    ))
    .is_ok());
    let t = text("max_probe = \"lots\"");
    let msg = expect_err(&t, line(&t, "max_probe"), "tasks.s.max_probe");
    assert!(msg.contains("a number"), "{msg}");
    let t = text("").replace("target = \"app\"", "target = \"nope\"");
    let msg = expect_err(&t, line(&t, "target"), "tasks.s.target");
    assert!(msg.contains("declared cgroups: app"), "{msg}");
}

/// Every example scenario of examples/ loads and builds its machine on its own kernel era.
#[test]
fn every_example_scenario_loads_and_builds() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples");
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("examples/") {
        let p = e.expect("an entry").path();
        if p.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("readable");
        let sc = mmsim::scenario::parse_scenario(&text, &p.display().to_string(), &[])
            .unwrap_or_else(|e| panic!("{e}"));
        let era = sc.kernel.unwrap_or(mmsim::kernel::KernelEra::V6_18);
        let f = era.features("patched").expect("preset");
        if let Err(e) = mmsim::sim::Sim::new(&sc, f) {
            panic!("{}: {e}", p.display());
        }
        n += 1;
    }
    assert!(n >= 6, "{n} examples");
}

/// `cgroup_version`: 2 by default, 1 for the legacy hierarchy, where a cgroup has
/// memory.limit_in_bytes (`memory_max`) only: a v2-only key is an error naming it and its
/// line; another version is an error on its line.
#[test]
fn cgroup_version_1_takes_memory_max_only() {
    let s = parse(&one_cgroup("memory_max = \"1GiB\"")).unwrap();
    assert!(!s.cgroup_v1, "the unified hierarchy by default");
    let text = edited(
        &[(2, "cgroup_version = 1")],
        "\n[[cgroups]]\nname = \"a\"\nmemory_max = \"1GiB\"\n",
    );
    let s = parse(&text).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.cgroup_v1);
    assert_eq!(s.cgroups[0].memory_max, Some(GIB));
    for key in [
        "memory_high = \"1GiB\"",
        "memory_low = \"1GiB\"",
        "memory_min = 0",
        "swap_max = \"max\"",
        "swap_high = \"max\"",
        "zswap_max = 0",
        "zswap_writeback = true",
        "oom_group = false",
    ] {
        let field = key.split(' ').next().unwrap();
        let text = edited(
            &[(2, "cgroup_version = 1")],
            &format!("\n[[cgroups]]\nname = \"a\"\n{key}\n"),
        );
        let msg = expect_err(&text, 40, &format!("cgroups.a.{field}"));
        assert!(msg.contains("cgroup v2"), "{field}: {msg}");
    }
    let msg = expect_err(
        &edited(&[(2, "cgroup_version = 3")], ""),
        2,
        "cgroup_version",
    );
    assert!(msg.contains("must be 1"), "{msg}");
}

/// `memsw_max` (v1's memory.memsw.limit_in_bytes): above the RAM is fine (it counts swap
/// too); on cgroup v2, below `memory_max` or without it, an error naming its line.
#[test]
fn memsw_max_is_cgroup_v1s_and_at_least_memory_max() {
    let v1 = |keys: &str| {
        edited(
            &[(2, "cgroup_version = 1")],
            &format!("\n[[cgroups]]\nname = \"a\"\n{keys}\n"),
        )
    };
    let s = parse(&v1("memory_max = \"1GiB\"\nmemsw_max = \"64GiB\"")).unwrap();
    assert_eq!(s.cgroups[0].memsw_max, Some(64 * GIB));
    let msg = expect_err(
        &v1("memory_max = \"2GiB\"\nmemsw_max = \"1GiB\""),
        41,
        "cgroups.a.memsw_max",
    );
    assert!(
        msg.contains("below memory_max") && msg.contains("EINVAL"),
        "{msg}"
    );
    let msg = expect_err(&v1("memsw_max = \"1GiB\""), 40, "cgroups.a.memsw_max");
    assert!(msg.contains("needs memory_max"), "{msg}");
    let v2 = one_cgroup("memory_max = \"1GiB\"\nmemsw_max = \"2GiB\"");
    let e = parse(&v2).unwrap_err();
    assert_eq!(e.field, "cgroups.a.memsw_max", "{e}");
    assert!(e.to_string().contains("cgroup v1"), "{e}");
}

#[test]
fn soft_limit_is_cgroup_v1s() {
    let v1 = edited(
        &[(2, "cgroup_version = 1")],
        "\n[[cgroups]]\nname = \"a\"\nsoft_limit = \"512MiB\"\n",
    );
    let s = parse(&v1).unwrap();
    assert_eq!(s.cgroups[0].soft_limit, Some(512 << 20));
    let v2 = one_cgroup("soft_limit = \"512MiB\"");
    let e = parse(&v2).unwrap_err();
    assert_eq!(e.field, "cgroups.a.soft_limit", "{e}");
    assert!(
        e.to_string().contains("cgroup v1") && e.to_string().contains("memory_low"),
        "{e}"
    );
    let neg = edited(
        &[(2, "cgroup_version = 1")],
        "\n[[cgroups]]\nname = \"a\"\nsoft_limit = \"-1MiB\"\n",
    );
    let e = parse(&neg).unwrap_err();
    assert_eq!(e.field, "cgroups.a.soft_limit", "{e}");
}

/// cgroup v1's memory.swappiness: a v1 file (v2 has none), 0 ..= 200, above 100 only from
/// 5.8; a cgroup without one takes its parent's.
#[test]
fn swappiness_is_cgroup_v1s() {
    let v1 = |keys: &str, kernel: &str| {
        edited(
            &[(2, &format!("cgroup_version = 1\n{kernel}"))],
            &format!("\n[[cgroups]]\nname = \"a\"\n{keys}\n"),
        )
    };
    let s = parse(&v1("swappiness = 0", "")).unwrap();
    assert_eq!(s.cgroups[0].swappiness, Some(0));
    let s = parse(&v1("", "")).unwrap();
    assert_eq!(s.cgroups[0].swappiness, None);
    let e = parse(&one_cgroup("swappiness = 10")).unwrap_err();
    assert_eq!(e.field, "cgroups.a.swappiness", "{e}");
    assert!(
        e.to_string().contains("cgroup v1") && e.to_string().contains("[vm] swappiness"),
        "{e}"
    );
    let e = parse(&v1("swappiness = 201", "")).unwrap_err();
    assert_eq!(e.field, "cgroups.a.swappiness", "{e}");
    assert!(e.to_string().contains("between 0 and 200"), "{e}");
    let e = parse(&v1("swappiness = 150", "kernel = \"4.14\"")).unwrap_err();
    assert_eq!(e.field, "cgroups.a.swappiness", "{e}");
    assert!(e.to_string().contains("5.8"), "{e}");
    let e = parse(&v1("swappiness = \"high\"", "")).unwrap_err();
    assert_eq!(e.field, "cgroups.a.swappiness", "{e}");
}
