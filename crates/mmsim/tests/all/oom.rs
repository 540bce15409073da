//! The OOM killer's choice (oom_score_adj) and memory.oom.group (`mm/oom_kill.rs`): which
//! tasks a global and a memcg OOM kill, the counters they leave (/proc/vmstat `oom_kill`,
//! memory.events `oom_kill` and `oom_group_kill`), and the scenario errors of the two keys.

use crate::common;

use common::task_report;
use mmsim::kernel::KernelEra;
use mmsim::run::RunReport;
use mmsim::scenario::{parse_scenario, Scenario};

const MAX_STEPS: u64 = 30_000_000;

fn run(sc: &Scenario) -> RunReport {
    common::run_completed(sc, KernelEra::V6_18, true, MAX_STEPS)
}

use common::cgroup_report as cg;

use common::oom_killed as killed;

/// Two anonymous writers that do not fit in 256 MiB without swap: `big` (200 MiB) and
/// `small` (64 MiB, kept resident by its passes for 0.4 s); `small_adj` is small's oom_score_adj,
/// `big_adj` big's.
fn global(big_adj: i32, small_adj: i32) -> Scenario {
    let text = format!(
        r#"
name = "global-oom"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[[tasks]]
name = "big"
cpu = 0
program = "anon"
size = "200MiB"
passes = 2
oom_score_adj = {big_adj}
[[tasks]]
name = "small"
cpu = 1
program = "anon"
size = "64MiB"
passes = 40
think = "10ms"
oom_score_adj = {small_adj}
"#
    );
    parse_scenario(&text, "global-oom.toml", &[]).expect("scenario parses")
}

#[test]
fn oom_score_adj_steers_the_global_oom_killer() {
    // By footprint alone the larger task goes.
    let plain = run(&global(0, 0));
    assert_eq!(killed(&plain), ["big"], "{:?}", plain.oom);
    assert_eq!(plain.vmstat["oom_kill"], 1);
    assert!(
        plain.oom[0].contains("killed big (badness"),
        "{:?}",
        plain.oom
    );
    // oom_score_adj 1000 adds all of RAM + swap to small's points: it goes first, and big
    // then fits.
    let adj = run(&global(0, 1000));
    assert_eq!(killed(&adj), ["small"], "{:?}", adj.oom);
    assert_eq!(adj.vmstat["oom_kill"], 1);
    assert!(
        adj.oom[0].contains("oom_score_adj 1000, points"),
        "{:?}",
        adj.oom
    );
    assert!(task_report(&adj, "big").elapsed_ns > 0, "big finished");
    // -1000 on big: never chosen, so small goes although it is smaller.
    let immune = run(&global(-1000, 0));
    assert_eq!(killed(&immune), ["small"], "{:?}", immune.oom);
    // A moderate bias is weighed against the footprints: -100 takes a tenth of the
    // 65,536-page machine (6,500 pages) off big's ~48,000, still above small's 16,384.
    let some = run(&global(-100, 0));
    assert_eq!(killed(&some), ["big"], "{:?}", some.oom);
}

/// A 64 MiB pod: `hog` writes 128 MiB, `sidecar` and `guard` keep 8 MiB each; `guard` has
/// oom_score_adj -1000. `outside` runs in another cgroup.
fn pod(oom_group: bool, kernel: &str) -> String {
    format!(
        r#"
name = "pod"
kernel = "{kernel}"
[machine]
nodes = 1
cpus_per_node = 4
memory_per_node = "256MiB"
[[cgroups]]
name = "pod"
memory_max = "64MiB"
oom_group = {oom_group}
[[cgroups]]
name = "other"
[[tasks]]
name = "hog"
cpu = 0
cgroup = "pod"
program = "anon"
size = "128MiB"
[[tasks]]
name = "sidecar"
cpu = 1
cgroup = "pod"
program = "anon"
size = "8MiB"
passes = 20
think = "2ms"
[[tasks]]
name = "guard"
cpu = 2
cgroup = "pod"
program = "anon"
size = "8MiB"
passes = 20
think = "2ms"
oom_score_adj = -1000
[[tasks]]
name = "outside"
cpu = 3
cgroup = "other"
program = "anon"
size = "8MiB"
passes = 20
think = "2ms"
"#
    )
}

#[test]
fn memory_oom_group_kills_the_whole_pod_but_its_immune_tasks() {
    let sc = |g| parse_scenario(&pod(g, "6.18"), "pod.toml", &[]).expect("parses");
    // Without memory.oom.group only the largest task of the pod goes.
    let one = run(&sc(false));
    assert_eq!(killed(&one), ["hog"], "{:?}", one.oom);
    let p = cg(&one, "pod");
    assert_eq!((p.events.oom_kill, p.events.oom_group_kill), (1, 0));
    assert!(task_report(&one, "sidecar").elapsed_ns > 0);

    // With it the pod's tasks go together, but guard (-1000) and the task outside it stay.
    let all = run(&sc(true));
    assert_eq!(killed(&all), ["hog", "sidecar"], "{:?}", all.oom);
    let p = cg(&all, "pod");
    // The kernel's oom_kill_memcg_member kills the victim again: hog counts twice.
    assert_eq!((p.events.oom_kill, p.events.oom_group_kill), (3, 1));
    assert_eq!(all.vmstat["oom_kill"], 3);
    assert_eq!(cg(&all, "other").events.oom_kill, 0);
    assert!(
        all.oom[0].contains("memory.oom.group of cgroup pod killed its 2 task(s): also sidecar"),
        "{:?}",
        all.oom
    );
    for t in ["guard", "outside"] {
        let r = task_report(&all, t);
        assert!(!r.oom_killed && r.elapsed_ns > 0, "{t} ran to its end");
    }
    // The summary says who was killed.
    let mut out = Vec::new();
    mmsim::run::write_summary(&all, KernelEra::V6_18, None, &mut out).expect("summary");
    let text = String::from_utf8(out).expect("utf-8");
    assert!(text.contains("killed by the OOM killer"), "{text}");
    assert!(text.contains("oom_group_kill 1"), "{text}");
}

/// mem_cgroup_get_oom_group walks from the victim's cgroup up to the cgroup whose limit
/// was hit, no further: a limit on a/b does not take a's group; a limit on a does.
#[test]
fn memory_oom_group_stops_at_the_oom_domain() {
    let nested = |limit_on: &str| {
        let (b_max, a_max) = if limit_on == "a/b" {
            ("memory_max = \"64MiB\"", "")
        } else {
            ("", "memory_max = \"96MiB\"")
        };
        let text = format!(
            r#"
name = "nested"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[[cgroups]]
name = "a"
oom_group = true
{a_max}
[[cgroups]]
name = "a/b"
{b_max}
[[cgroups]]
name = "a/c"
[[tasks]]
name = "hog"
cpu = 0
cgroup = "a/b"
program = "anon"
size = "128MiB"
[[tasks]]
name = "cousin"
cpu = 1
cgroup = "a/c"
program = "anon"
size = "16MiB"
passes = 20
think = "2ms"
"#
        );
        run(&parse_scenario(&text, "nested.toml", &[]).expect("parses"))
    };
    let inner = nested("a/b");
    assert_eq!(killed(&inner), ["hog"], "{:?}", inner.oom);
    assert_eq!(cg(&inner, "a").events.oom_group_kill, 0);
    let outer = nested("a");
    assert_eq!(killed(&outer), ["hog", "cousin"], "{:?}", outer.oom);
    assert_eq!(cg(&outer, "a").events.oom_group_kill, 1);
    // memory.events is hierarchical: a/b's two hog kills and a/c's one show in a.
    assert_eq!(cg(&outer, "a").events.oom_kill, 3);
    assert_eq!(cg(&outer, "a/c").events.oom_kill, 1);
}

#[test]
fn oom_keys_reject_bad_values_with_file_and_field() {
    let err = |text: &str| {
        parse_scenario(text, "bad.toml", &[])
            .unwrap_err()
            .to_string()
    };
    let task = |adj: &str| {
        format!(
            "name = \"x\"\n[machine]\ncpus_per_node = 1\nmemory_per_node = \"64MiB\"\n\
             [[tasks]]\nname = \"t\"\nprogram = \"anon\"\nsize = \"1MiB\"\noom_score_adj = {adj}\n"
        )
    };
    let e = err(&task("1001"));
    assert!(
        e.contains("bad.toml:9: tasks.t.oom_score_adj")
            && e.contains("-1000")
            && e.contains("1001"),
        "{e}"
    );
    let e = err(&task("-1001"));
    assert!(e.contains("oom_score_adj") && e.contains("-1001"), "{e}");
    let e = err(&task("\"high\""));
    assert!(
        e.contains("oom_score_adj") && e.contains("an integer"),
        "{e}"
    );
    // memory.oom.group is 4.19's: an error on the older eras, in the file or by --kernel.
    let e = err(&pod(true, "4.14"));
    assert!(
        e.contains("cgroups") && e.contains("oom_group") && e.contains("4.19"),
        "{e}"
    );
    let e = err(&pod(true, "6.1").replace("oom_group = true", "oom_group = \"yes\""));
    assert!(e.contains("oom_group"), "{e}");
    let sc = parse_scenario(&pod(true, "6.18"), "pod.toml", &[]).expect("parses");
    let old = KernelEra::V4_14.features("patched").expect("preset");
    let e = mmsim::sim::Sim::new(&sc, old).err().expect("an error");
    assert!(e.contains("oom_group") && e.contains("4.19"), "{e}");
}

/// memory.oom.group written mid-run (`cgroup-write`, as a kubelet or systemd does): the
/// pod's next OOM kill takes the group; the file takes 0 or 1 only, and does not exist
/// before 4.19 (ENOENT).
#[test]
fn memory_oom_group_written_mid_run_takes_effect() {
    let admin = |value: &str| {
        format!(
            "{}\n[[tasks]]\nname = \"admin\"\ncpu = 3\nprogram = \"cgroup-write\"\n\
             target = \"pod\"\nfile = \"memory.oom.group\"\nvalue = {value}\n",
            pod(false, "6.18")
        )
    };
    let sc = parse_scenario(&admin("1"), "pod.toml", &[]).expect("parses");
    let r = run(&sc);
    assert_eq!(killed(&r), ["hog", "sidecar"], "{:?}", r.oom);
    assert_eq!(cg(&r, "pod").events.oom_group_kill, 1);
    assert!(task_report(&r, "admin").errors.is_empty());
    let e = parse_scenario(&admin("2"), "pod.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tasks.admin.value") && e.contains("0 or 1"),
        "{e}"
    );
    // On 4.14 the file does not exist: the write fails, and only hog goes.
    let sc = parse_scenario(&admin("1").replace("\"6.18\"", "\"4.14\""), "pod.toml", &[])
        .expect("parses");
    let f = KernelEra::V4_14.features("patched").expect("preset");
    let r = common::run_sc(&sc, f, true, MAX_STEPS);
    assert_eq!(killed(&r), ["hog"], "{:?}", r.oom);
    assert_eq!(task_report(&r, "admin").errors.get("ENOENT"), Some(&1));
}

/// Three identical workers hold 16 MiB each in a 64 MiB cgroup without swap; an immune
/// task (oom_score_adj -1000) then needs 24 MiB more, room one kill makes. The workers' points are equal, and
/// oom_evaluate_task takes a task whose points equal the chosen one's, so the OOM kills
/// the one scanned last: the newest worker (`worker2`), in a memcg OOM
/// (mem_cgroup_scan_tasks) as in a global one (for_each_process: the same tasks on a
/// 64 MiB machine, no cgroup).
#[test]
fn equal_points_go_to_the_task_scanned_last() {
    let text = |memcg: bool| {
        let (ram, cg, member) = if memcg {
            (
                "256MiB",
                "[[cgroups]]\nname = \"box\"\nmemory_max = \"64MiB\"\n",
                "cgroup = \"box\"\n",
            )
        } else {
            ("64MiB", "", "")
        };
        format!(
            r#"
name = "tie"
[machine]
nodes = 1
cpus_per_node = 4
memory_per_node = "{ram}"
{cg}
[[tasks]]
name = "worker"
replicas = 3
cpu = 0
{member}program = "anon"
size = "16MiB"
passes = 100
think = "10ms"
[[tasks]]
name = "grower"
cpu = 3
start = "300ms"
{member}program = "anon"
size = "24MiB"
oom_score_adj = -1000
"#
        )
    };
    for memcg in [true, false] {
        let sc = parse_scenario(&text(memcg), "tie.toml", &[]).expect("scenario parses");
        let r = run(&sc);
        let k = killed(&r);
        assert_eq!(k, ["worker2"], "memcg {memcg}");
    }
}

/// A task that never mapped memory is a process with an mm in the kernel (text, libraries,
/// stack), so the global OOM killer may choose it as a memcg OOM does: dd filling a
/// tmpfs larger than RAM without swap (unreclaimable shmem pages) is killed, where it used
/// to get ENOMEM. The tmpfs pages outlive it.
#[test]
fn the_global_oom_killer_takes_a_task_without_mappings() {
    let text = r#"
name = "tmpfs-oom"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "32MiB"
[[filesystems]]
mount = "/tmp"
type = "tmpfs"
size = "64MiB"
[[tasks]]
name = "dd"
cpu = 0
program = "dd"
path = "/tmp/big"
size = "48MiB"
"#;
    let sc = parse_scenario(text, "tmpfs-oom.toml", &[]).expect("scenario parses");
    let r = run(&sc);
    assert_eq!(killed(&r), ["dd"]);
    assert_eq!(r.vmstat["oom_kill"], 1);
    assert!(
        r.oom[0].contains("killed dd (badness 0 pages"),
        "{}",
        r.oom[0]
    );
    assert!(task_report(&r, "dd").errors.is_empty(), "no ENOMEM");
    assert!(r.vmstat["nr_shmem"] > 4096, "the file's pages stay");
}
