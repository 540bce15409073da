//! Memory cgroups (issue 11): limit reclaim confined to the cgroup, memory.low protection,
//! the memcg OOM killer, the memcg writeback domain, per-memcg workingset, and a property
//! test of random cgroup workloads under the invariant checker. Cgroups are attached to
//! parsed scenarios directly, so these tests do not depend on the TOML reader.

use crate::common;

use common::{run_sc, task_report};
use mmsim::kernel::KernelEra;
use mmsim::run::{CgroupReport, RunReport};
use mmsim::scenario::{parse_scenario, CgroupSpec, Scenario};
use mmsim::sim::{RunEnd, Sim};
use proptest::prelude::*;

const MIB: u64 = 1 << 20;
const MAX_STEPS: u64 = 30_000_000;

fn cgroup(name: &str, max: Option<u64>) -> CgroupSpec {
    CgroupSpec {
        name: name.to_string(),
        memory_max: max,
        memory_high: None,
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
    }
}

fn with_cgroups(text: &str, cgroups: Vec<CgroupSpec>, tasks: &[(&str, &str)]) -> Scenario {
    let mut sc = parse_scenario(text, "memcg-test.toml", &[]).expect("scenario parses");
    sc.cgroups = cgroups;
    for (task, cg) in tasks {
        let t = sc.tasks.iter_mut().find(|t| t.name == *task).expect("task");
        t.cgroup = Some(cg.to_string());
    }
    sc
}

fn run(sc: &Scenario, era: KernelEra, check: bool) -> RunReport {
    common::run_completed(sc, era, check, MAX_STEPS)
}

fn cg<'a>(r: &'a RunReport, name: &str) -> &'a CgroupReport {
    common::cgroup_report(r, name)
}

const STREAM_AND_HOT: &str = r#"
name = "stream-and-hot"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "2GiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "16GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/big"
size = "1GiB"
[[files]]
path = "/data/hot"
size = "256MiB"
[[tasks]]
name = "hot"
cpu = 0
program = "read"
path = "/data/hot"
block_size = "128KiB"
passes = 4
[[tasks]]
name = "stream"
cpu = 1
program = "read"
path = "/data/big"
block_size = "1MiB"
passes = 1
"#;

#[test]
fn a_limited_cgroup_streaming_a_file_reclaims_only_itself() {
    let sc = with_cgroups(
        STREAM_AND_HOT,
        vec![cgroup("stream", Some(128 * MIB)), cgroup("hot", None)],
        &[("stream", "stream"), ("hot", "hot")],
    );
    let r = run(&sc, KernelEra::V6_18, false);
    let stream = cg(&r, "stream");
    let hot = cg(&r, "hot");
    assert!(stream.stat["pgscan"] > 0, "the limited cgroup reclaims");
    assert!(stream.stat["pgsteal"] > 0);
    assert!(stream.events.max > 0, "charges hit memory.max");
    assert!(
        stream.peak <= 128 * MIB,
        "peak {} above memory.max",
        stream.peak
    );
    assert_eq!(hot.stat["pgscan"], 0, "the other cgroup is never scanned");
    // Limit reclaim is not global reclaim: no kswapd, no direct reclaim of the machine.
    assert_eq!(r.vmstat["pgscan_kswapd"] + r.vmstat["pgscan_direct"], 0);
    assert!(
        r.vmstat["pgscan_file"] > 0,
        "pgscan_file counts all reclaim"
    );
    // The hot working set stayed resident: only its first pass missed.
    let hot_pages = 256 * MIB / 4096;
    assert_eq!(task_report(&r, "hot").cache_misses, hot_pages);
    assert!(
        hot.current >= 250 * MIB,
        "hot cgroup keeps its file: {}",
        hot.current
    );
    // Usage never exceeded the limit at any sample either.
    let idx = r.cgroups.iter().position(|c| c.name == "stream").unwrap();
    for s in &r.series {
        assert!(s.cgroups[idx] * 4096 <= 128 * MIB);
    }
}

const PROTECTED: &str = r#"
name = "protected"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "1GiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "16GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/ws"
size = "200MiB"
[[files]]
path = "/data/big"
size = "900MiB"
[[tasks]]
name = "ws"
cpu = 0
program = "read"
path = "/data/ws"
block_size = "128KiB"
passes = 8
think = "100ms"
[[tasks]]
name = "bulk"
cpu = 1
start = "50ms"
program = "read"
path = "/data/big"
block_size = "1MiB"
passes = 3
"#;

/// PROTECTED on 6.18 with `prot`'s memory.low at `low`, reclaim reading current
/// statistics (`-memcg-stats-ratelimited`): with the flushed ones of 6.12+ global reclaim
/// deactivates the working set's active list only after a flush that shows new refault
/// activations, so how far it reaches the working set in this short run depends on where
/// the run falls in the flush cycle; the test is about memory.low's protection.
fn protected_run(low: u64) -> RunReport {
    let mut prot = cgroup("prot", None);
    prot.memory_low = low;
    let sc = with_cgroups(
        PROTECTED,
        vec![prot, cgroup("bulk", None)],
        &[("ws", "prot"), ("bulk", "bulk")],
    );
    let mut f = KernelEra::V6_18.features("patched").expect("preset");
    f.set("memcg-stats-ratelimited", false);
    let r = run_sc(&sc, f, false, MAX_STEPS);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    r
}

#[test]
fn memory_low_protects_a_working_set_from_global_reclaim() {
    let with = protected_run(300 * MIB);
    let without = protected_run(0);
    // Both runs are under global pressure: the stream is reclaimed by kswapd.
    for r in [&with, &without] {
        assert!(r.vmstat["pgscan_kswapd"] + r.vmstat["pgscan_direct"] > 0);
        assert!(cg(r, "bulk").stat["pgscan"] > 0);
    }
    assert_eq!(cg(&with, "prot").stat["pgscan"], 0, "memory.low held");
    assert_eq!(
        task_report(&with, "ws").cache_misses,
        200 * MIB / 4096,
        "protected: only the first pass misses"
    );
    assert!(
        cg(&without, "prot").stat["pgscan"] > 0,
        "without memory.low global reclaim scans the working set too"
    );
    assert!(
        task_report(&without, "ws").cache_misses > 200 * MIB / 4096,
        "and the working set refaults"
    );
}

const OOM: &str = r#"
name = "memcg-oom"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "512MiB"
[[tasks]]
name = "hog"
cpu = 0
program = "anon"
size = "128MiB"
passes = 2
[[tasks]]
name = "other"
cpu = 1
program = "anon"
size = "64MiB"
passes = 3
"#;

#[test]
fn memcg_oom_kills_inside_the_cgroup_only() {
    let sc = with_cgroups(
        OOM,
        vec![cgroup("box", Some(64 * MIB)), cgroup("free", None)],
        &[("hog", "box"), ("other", "free")],
    );
    let r = run(&sc, KernelEra::V6_18, true);
    let b = cg(&r, "box");
    assert!(b.events.oom >= 1, "{:?}", b.events);
    assert_eq!(b.events.oom_kill, 1);
    assert_eq!(cg(&r, "free").events.oom_kill, 0);
    assert_eq!(r.vmstat["oom_kill"], 1);
    assert!(b.peak <= 64 * MIB);
    assert!(
        r.oom.iter().any(|l| l.contains("killed hog")),
        "{:?}",
        r.oom
    );
    // The task outside the cgroup ran all its passes and was not killed.
    let other = task_report(&r, "other");
    assert!(other.errors.is_empty(), "{:?}", other.errors);
    // Global memory was plentiful: no global OOM, no global reclaim.
    assert_eq!(r.vmstat["pgscan_kswapd"] + r.vmstat["pgscan_direct"], 0);
}

const WRITER: &str = r#"
name = "memcg-writer"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "4GiB"
[[devices]]
name = "sda"
preset = "hdd"
size = "64GiB"
[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "sda"
[[tasks]]
name = "dd"
cpu = 0
program = "dd"
path = "/mnt/out"
size = "512MiB"
block_size = "1MiB"
iterations = 1
sync = false
"#;

#[test]
fn a_writer_in_a_small_cgroup_is_throttled_by_its_own_dirty_limit() {
    let sc = with_cgroups(WRITER, vec![cgroup("w", Some(256 * MIB))], &[("dd", "w")]);
    let boxed = run(&sc, KernelEra::V6_18, false);
    let free = {
        let sc = parse_scenario(WRITER, "memcg-writer.toml", &[]).unwrap();
        run(&sc, KernelEra::V6_18, false)
    };
    let w = cg(&boxed, "w");
    assert!(w.dirty_throttled > 0, "the memcg domain paused the writer");
    assert!(w.peak <= 256 * MIB);
    assert!(w.stat["pgscan"] > 0, "limit reclaim ran");
    // The memcg's dirty limit keeps dirty pages well below its size, so the pages limit
    // reclaim meets at the inactive tail were written back first: it reclaims them all.
    assert_eq!(w.stat["pgsteal"], w.stat["pgscan"]);
    // On the whole machine the same write is below the global dirty limit.
    assert!(free.cgroups.is_empty());
    assert!(
        task_report(&boxed, "dd").elapsed_ns > task_report(&free, "dd").elapsed_ns,
        "the cgroup's writer is slower: {} vs {}",
        task_report(&boxed, "dd").elapsed_ns,
        task_report(&free, "dd").elapsed_ns
    );
}

/// On cgroup v1's legacy hierarchy (`cgroup_version = 1`), and without cgroup writeback
/// (`cgroup-writeback` off, as before it), the same writer has no writeback domain of its
/// cgroup: only the global dirty limits hold it, far away on this machine, so its cgroup
/// fills with dirty pages and limit reclaim meets them at the inactive tail. It wakes the
/// flushers and tags and activates what it cannot free (pgscan well above pgsteal; the
/// tagged pages rotate back to the inactive tail as their writeback ends), where the
/// unified hierarchy's writer is paused by its own cgroup's dirty limit and its reclaim
/// frees every page it scans.
#[test]
fn a_writer_in_a_small_v1_cgroup_is_held_to_the_global_dirty_limits_only() {
    // Order-0 pages (without `large-folios`: a 1 MiB write would be one folio of 256
    // pages, which reclaim meets dirty and activates whole): the rules below are those
    // of each page reclaim meets.
    let base = with_cgroups(WRITER, vec![cgroup("w", Some(256 * MIB))], &[("dd", "w")]);
    let mut f = KernelEra::V6_18.features("patched").expect("preset");
    f.large_folios = false;
    let v2 = run_sc(&base, f.clone(), false, MAX_STEPS);
    let mut sc = base.clone();
    sc.cgroup_v1 = true;
    let v1 = run_sc(&sc, f.clone(), true, MAX_STEPS);
    f.cgroup_writeback = false;
    let no_cgwb = run_sc(&base, f, false, MAX_STEPS);
    let v2w = cg(&v2, "w");
    assert!(
        v2w.dirty_throttled > 0,
        "v2: the memcg domain paused the writer"
    );
    assert_eq!(
        v2w.stat["pgsteal"], v2w.stat["pgscan"],
        "v2: written back first"
    );
    for (what, r) in [("cgroup v1", &v1), ("no cgroup writeback", &no_cgwb)] {
        let w = cg(r, "w");
        assert_eq!(w.dirty_throttled, 0, "{what}: no memcg domain");
        assert!(w.peak <= 256 * MIB, "{what}");
        assert!(
            w.stat["pgscan"] > 2 * w.stat["pgsteal"],
            "{what}: reclaim meets dirty pages: pgscan {} pgsteal {}",
            w.stat["pgscan"],
            w.stat["pgsteal"]
        );
        assert!(r.vmstat["pgrotated"] > 0, "{what}: tagged pages rotate");
        assert!(r.vmstat["pgactivate"] > v2.vmstat["pgactivate"], "{what}");
        assert!(task_report(r, "dd").errors.is_empty(), "{what}");
    }
}

const READ_TWICE: &str = r#"
name = "read-twice"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "1GiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "16GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/f"
size = "96MiB"
[[tasks]]
name = "reader"
cpu = 0
program = "read"
path = "/data/f"
block_size = "1MiB"
passes = 2
"#;

/// The figures of the note: a file read twice in a cgroup smaller than it.
pub fn read_twice(era: KernelEra) -> RunReport {
    let sc = with_cgroups(
        READ_TWICE,
        vec![cgroup("small", Some(64 * MIB))],
        &[("reader", "small")],
    );
    run(&sc, era, false)
}

#[test]
fn proc_vmstat_names_the_workingset_counters_as_the_era_does() {
    // Split by LRU type from 5.9 (anon-workingset); one counter each before, and 4.20's
    // workingset_restore only with workingset-restore.
    let old = read_twice(KernelEra::V4_2);
    let new = read_twice(KernelEra::V6_18);
    assert!(old.vmstat["workingset_refault"] > 0);
    for k in ["workingset_refault", "workingset_activate"] {
        assert!(old.vmstat.contains_key(k), "4.2 {k}");
        assert!(!new.vmstat.contains_key(k), "6.18 has no {k}");
    }
    for k in [
        "workingset_refault_file",
        "workingset_refault_anon",
        "workingset_activate_file",
        "workingset_restore_file",
    ] {
        assert!(!old.vmstat.contains_key(k), "4.2 has no {k}");
        assert!(new.vmstat.contains_key(k), "6.18 {k}");
    }
    assert!(new.vmstat["workingset_refault_file"] > 0);
    assert!(!old.vmstat.contains_key("workingset_restore"));
    assert!(!new.vmstat.contains_key("workingset_restore"));
}

#[test]
fn a_file_read_twice_in_a_small_cgroup_refaults_in_that_cgroup() {
    for era in [KernelEra::V4_2, KernelEra::V6_18] {
        let r = read_twice(era);
        let s = cg(&r, "small");
        // /proc/vmstat splits the workingset counters by LRU type from 5.9.
        let (refault, activate) = if era >= KernelEra::V6_1 {
            ("workingset_refault_file", "workingset_activate_file")
        } else {
            ("workingset_refault", "workingset_activate")
        };
        eprintln!(
            "{era}: workingset_refault {} activate {} | memcg refault_file {} activate_file {} pgscan {} pgsteal {} majflt {}",
            r.vmstat[refault],
            r.vmstat[activate],
            s.stat["workingset_refault_file"],
            s.stat["workingset_activate_file"],
            s.stat["pgscan"],
            s.stat["pgsteal"],
            task_report(&r, "reader").cache_misses,
        );
        assert!(
            s.stat["workingset_refault_file"] > 0,
            "{era}: refaults in the cgroup"
        );
        assert_eq!(
            s.stat["workingset_refault_file"], r.vmstat[refault],
            "{era}: every refault is the cgroup's"
        );
        assert!(s.peak <= 64 * MIB);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]
    /// Random cgroup trees, limits and workloads under the checker after every step:
    /// every charged page belongs to one memcg, usage is the sum of the pages charged
    /// to the memcg and below, lruvecs agree with their pages, nothing is charged once
    /// free (mm::check::check_memcgs).
    #[test]
    fn random_cgroup_workloads_keep_the_memcg_invariants(
        max_a in 8u64..64,
        max_b in prop::option::of(4u64..48),
        low in 0u64..32,
        nested in any::<bool>(),
        swap in any::<bool>(),
        era in prop::sample::select(vec![KernelEra::V4_2, KernelEra::V4_14, KernelEra::V6_18]),
        anon_mib in 4u64..48,
        file_mib in 4u64..64,
    ) {
        let swap_toml = if swap { "[swap]\nsize = \"64MiB\"\n" } else { "" };
        let text = format!(r#"
name = "prop"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "128MiB"
{swap_toml}
[[devices]]
name = "d"
preset = "nvme"
size = "4GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "d"
[[files]]
path = "/data/f"
size = "{file_mib}MiB"
[[tasks]]
name = "anon"
cpu = 0
program = "anon"
size = "{anon_mib}MiB"
passes = 2
[[tasks]]
name = "reader"
cpu = 1
program = "read"
path = "/data/f"
block_size = "256KiB"
passes = 2
[[tasks]]
name = "writer"
cpu = 1
program = "dd"
path = "/data/w"
size = "8MiB"
block_size = "1MiB"
iterations = 2
sync = false
"#);
        let b_name = if nested { "a/b" } else { "b" };
        let mut a = cgroup("a", Some(max_a * MIB));
        a.memory_low = low * MIB;
        let mut b = cgroup(b_name, max_b.map(|m| m * MIB));
        b.memory_min = low * MIB / 2;
        let sc = with_cgroups(&text, vec![a, b], &[("anon", "a"), ("reader", b_name), ("writer", b_name)]);
        let f = era.features("patched").unwrap();
        let r = run_sc(&sc, f, true, 5_000_000);
        prop_assert!(matches!(r.end, RunEnd::Completed | RunEnd::StepLimit), "{:?}", r.end);
        prop_assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
        let a = cg(&r, "a");
        // A forced charge past memory.max needs an OOM without a victim, which these
        // tasks always provide.
        prop_assert!(a.peak <= max_a * MIB, "peak {} max {}", a.peak, max_a * MIB);
        // PSI: from 4.20 only; a full stall is never longer than a partial one.
        prop_assert_eq!(r.pressure.is_some(), era >= KernelEra::V6_1);
        for p in r.cgroups.iter().filter_map(|c| c.pressure).chain(r.pressure) {
            prop_assert!(p.memory.full.total_us <= p.memory.some.total_us, "{:?}", p);
            prop_assert!(p.io.full.total_us <= p.io.some.total_us, "{:?}", p);
        }
    }
}

const HIGH: &str = r#"
name = "memcg-high"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "1GiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "16GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/f"
size = "160MiB"
[[tasks]]
name = "reader"
cpu = 0
program = "read"
path = "/data/f"
block_size = "1MiB"
passes = 2
"#;

#[test]
fn memory_high_reclaims_the_excess_on_return_to_user_space() {
    let mut c = cgroup("web", None);
    c.memory_high = Some(64 * MIB);
    let sc = with_cgroups(HIGH, vec![c], &[("reader", "web")]);
    let r = run(&sc, KernelEra::V6_18, true);
    let w = cg(&r, "web");
    assert!(w.events.high > 0, "{:?}", w.events);
    assert_eq!(w.events.max, 0, "memory.high is not a hard limit");
    assert!(w.stat["pgscan"] > 0, "reclaim_high ran");
    // Over high by at most one syscall's charges (a 1 MiB read) before it is reclaimed.
    assert!(w.peak <= 64 * MIB + 2 * MIB, "peak {} MiB", w.peak / MIB);
    // Without the limit the whole file stays cached.
    let free = run(
        &with_cgroups(HIGH, vec![cgroup("web", None)], &[("reader", "web")]),
        KernelEra::V6_18,
        false,
    );
    assert_eq!(cg(&free, "web").stat["pgscan"], 0);
    assert!(cg(&free, "web").peak >= 160 * MIB);
}

const SWAPPY: &str = r#"
name = "memcg-swap"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "512MiB"
[swap]
size = "256MiB"
[[tasks]]
name = "hog"
cpu = 0
program = "anon"
size = "96MiB"
passes = 2
"#;

fn swap_run(swap_max: Option<u64>) -> RunReport {
    swap_run_on(swap_max, KernelEra::V6_18)
}

fn swap_run_on(swap_max: Option<u64>, era: KernelEra) -> RunReport {
    let mut c = cgroup("box", Some(64 * MIB));
    c.swap_max = swap_max;
    run(&with_cgroups(SWAPPY, vec![c], &[("hog", "box")]), era, true)
}

#[test]
fn swap_max_bounds_what_a_cgroup_may_swap() {
    let unlimited = swap_run(None);
    let b = cg(&unlimited, "box");
    assert_eq!(
        b.events.oom_kill, 0,
        "with swap the 96 MiB fit: {:?}",
        unlimited.oom
    );
    assert!(unlimited.vmstat["pswpout"] * 4096 > (16 * MIB) as i64);
    assert!(b.peak <= 64 * MIB);
    // memory.stat's pswpin and pswpout (6.13, the 6.18 era): all the machine's swap IO is
    // the cgroup's here.
    assert_eq!(b.stat["pswpout"], unlimited.vmstat["pswpout"]);
    assert_eq!(b.stat["pswpin"], unlimited.vmstat["pswpin"]);
    assert!(
        !cg(&swap_run_on(None, KernelEra::V6_1), "box")
            .stat
            .contains_key("pswpout"),
        "no such key before 6.13"
    );
    // memory.stat swapcached (5.12): the box's pages in the swap cache, here all of the
    // machine's (nr_swapcached); none before the 6.1 era. Stopped three quarters through,
    // while the hog still holds its swapped-in pages (they keep their slots); at the end
    // the hog has exited and the cache is empty.
    assert_eq!(
        (b.stat["swapcached"], unlimited.vmstat["nr_swapcached"]),
        (0, 0)
    );
    let sc = with_cgroups(
        SWAPPY,
        vec![cgroup("box", Some(64 * MIB))],
        &[("hog", "box")],
    );
    let f = KernelEra::V6_18.features("patched").unwrap();
    let mid = run_sc(&sc, f, false, unlimited.steps * 3 / 4);
    assert_eq!(mid.end, RunEnd::StepLimit);
    let m = cg(&mid, "box");
    assert!(m.stat["swapcached"] > 0, "{:?}", m.stat);
    assert_eq!(m.stat["swapcached"], mid.vmstat["nr_swapcached"] * 4096);
    // Before reclaim_throttle (5.16) the charge path must still wait for the swap-out it
    // started rather than OOM at once.
    let old = swap_run_on(None, KernelEra::V4_2);
    assert_eq!(cg(&old, "box").events.oom_kill, 0, "{:?}", old.oom);
    assert!(!cg(&old, "box").stat.contains_key("swapcached"));
    // Without a swap limit no swap-out is refused; memory.swap.peak is the most the
    // cgroup had in swap, at least what it has at the end.
    let b = cg(&unlimited, "box");
    assert_eq!((b.swap_events.max, b.swap_events.fail), (0, 0));
    assert!(b.swap_peak >= b.swap_current && b.swap_peak > 16 * MIB);
    // The time series samples memory.swap.current per cgroup (root first, always 0): it
    // never exceeds the peak and ends at the end's value.
    let i = unlimited
        .cgroups
        .iter()
        .position(|c| c.name == "box")
        .unwrap();
    let swap: Vec<u64> = unlimited
        .series
        .iter()
        .map(|s| s.cgroups_swap[i] * 4096)
        .collect();
    assert!(unlimited.series.iter().all(|s| s.cgroups_swap[0] == 0));
    assert!(swap.iter().all(|b| *b <= cg(&unlimited, "box").swap_peak));
    assert!(*swap.iter().max().unwrap() > 16 * MIB, "{swap:?}");
    assert_eq!(*swap.last().unwrap(), b.swap_current);
    let limited = swap_run(Some(16 * MIB));
    let b = cg(&limited, "box");
    assert!(b.swap_current <= 16 * MIB);
    assert_eq!(
        b.events.oom_kill, 1,
        "64 MiB + 16 MiB of swap cannot hold 96 MiB"
    );
    // memory.swap.events: the swap-outs refused at memory.swap.max are both `max` and
    // `fail`; the peak is the limit, reached.
    assert!(b.swap_events.max > 0, "{:?}", b.swap_events);
    assert_eq!(b.swap_events.fail, b.swap_events.max);
    assert_eq!(b.swap_peak, 16 * MIB);
    // A swap device too small for what the cgroup must swap: swap-outs fail for want of
    // a slot (`fail` without `max`).
    let small = run(
        &with_cgroups(
            &SWAPPY.replace("size = \"256MiB\"", "size = \"8MiB\""),
            vec![cgroup("box", Some(64 * MIB))],
            &[("hog", "box")],
        ),
        KernelEra::V6_18,
        true,
    );
    let b = cg(&small, "box");
    assert_eq!(b.swap_events.max, 0);
    assert!(b.swap_events.fail > 0, "{:?}", b.swap_events);
    assert_eq!(b.swap_peak, 8 * MIB);
}

/// memory.swap.high (5.8) throttles, it does not limit: the 96 MiB hog in a 64 MiB cgroup
/// of examples/swap_high.toml (docs/EXPERIMENTS.md, "memory.swap.high") swaps; with
/// swap.high at 8 MiB its allocations past that are throttled on
/// the return to user space (swap_find_max_overage's penalty added to memory.high's, the
/// sleep a memory stall), each over-high pass counts a memory.swap.events `high`, and the
/// swap still goes past swap.high. The penalty grows with the overage squared, so the
/// hog takes longer. On 4.14 the file does not exist: an error, in the scenario (with its
/// line) and for a run of another era.
#[test]
fn swap_high_throttles_without_limiting() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/swap_high.toml");
    let text = std::fs::read_to_string(path).expect("the example exists");
    let example = parse_scenario(&text, path, &[]).expect("the example parses");
    assert_eq!(example.cgroups[0].swap_high, Some(8 * MIB));
    let in_box = |swap_high: Option<u64>| {
        let mut sc = example.clone();
        sc.cgroups[0].swap_high = swap_high;
        sc
    };
    let free = run(&in_box(None), KernelEra::V6_18, false);
    let high = run(&in_box(Some(8 * MIB)), KernelEra::V6_18, false);
    let (f, h) = (cg(&free, "box"), cg(&high, "box"));
    let elapsed = |r: &RunReport| r.tasks.iter().find(|t| t.name == "hog").unwrap().elapsed_ns;
    eprintln!(
        "hog: {} ms free, {} ms with swap.high 8 MiB; swap.events {:?}; swap peak {} MiB",
        elapsed(&free) / 1_000_000,
        elapsed(&high) / 1_000_000,
        h.swap_events,
        h.swap_peak >> 20
    );
    assert_eq!(f.swap_events.high, 0);
    assert!(h.swap_events.high > 0, "{:?}", h.swap_events);
    assert_eq!((h.swap_events.max, h.swap_events.fail), (0, 0));
    assert!(
        h.swap_peak > 8 * MIB,
        "not a limit: {} MiB",
        h.swap_peak >> 20
    );
    assert!(elapsed(&high) > elapsed(&free));
    let stall = |c: &CgroupReport| c.pressure.expect("6.18 has PSI").memory.some.total_us;
    assert!(stall(h) > stall(f), "{} vs {} us", stall(h), stall(f));
    assert_eq!(h.swap_high, Some(8 * MIB));
    // The era without it.
    let f414 = KernelEra::V4_14.features("patched").unwrap();
    let err = Sim::new(&in_box(Some(8 * MIB)), f414)
        .err()
        .expect("an error on 4.14");
    assert!(
        err.contains("cgroup box sets swap_high") && err.contains("5.8"),
        "{err}"
    );
    let text =
        format!("kernel = \"4.14\"{SWAPPY}[[cgroups]]\nname = \"box\"\nswap_high = \"8MiB\"\n")
            .replace("[[tasks]]", "[[tasks]]\ncgroup = \"box\"");
    let e = parse_scenario(&text, "sh.toml", &[]).expect_err("4.14 has no swap.high");
    let msg = e.to_string();
    assert!(
        msg.contains("sh.toml:") && msg.contains("swap_high"),
        "{msg}"
    );
    assert!(msg.contains("exists from kernel 5.8"), "{msg}");
}

/// A 48 MiB file read three times in a 64 MiB cgroup beside 32 MiB of anonymous memory
/// that is in use, with swap: the refault distance (~16 MiB) exceeds the active file list
/// (empty) but not the anon lists, which 5.8's "let cache workingset challenge anon"
/// counts into the workingset size.
#[test]
fn refaults_challenge_anon_on_6x_only() {
    let text = READ_TWICE.replace("size = \"96MiB\"", "size = \"48MiB\"")
        .replace("passes = 2\n", "passes = 3\n")
        + "[swap]\nsize = \"256MiB\"\n[[tasks]]\nname = \"app\"\ncpu = 1\nprogram = \"anon\"\nsize = \"32MiB\"\npasses = 40\nthink = \"5ms\"\n";
    let sc = with_cgroups(
        &text,
        vec![cgroup("small", Some(64 * MIB))],
        &[("reader", "small"), ("app", "small")],
    );
    let activations = |f: mmsim::sim::Features| {
        let r = run_sc(&sc, f, false, MAX_STEPS);
        assert_eq!(r.end, RunEnd::Completed);
        let s = cg(&r, "small");
        assert!(s.stat["workingset_refault_file"] > 0);
        s.stat["workingset_activate_file"]
    };
    let old = activations(KernelEra::V4_2.features("patched").unwrap());
    // Reclaim reading current statistics: with 6.12's flushed ones
    // (`memcg-stats-ratelimited`) this short run's refault distances are compared with list
    // sizes up to 2 s old (none before the first flush); the test is about 5.8's rule.
    let mut current = KernelEra::V6_18.features("patched").unwrap();
    current.set("memcg-stats-ratelimited", false);
    let new = activations(current.clone());
    let mut without = current;
    without.set("cache-challenges-anon", false);
    let without = activations(without);
    eprintln!("activations: 4.2 {old}, 6.18 {new}, 6.18 -cache-challenges-anon {without}");
    assert_eq!(
        old, 0,
        "4.2 compares with the (empty) active file list only"
    );
    assert!(new > 0, "6.18 counts the anon lists in the workingset size");
    assert_eq!(without, 0, "the rule alone makes the difference");
}

/// Shadow entries of a small cgroup streaming a large file: the memcg-aware shadow-node
/// shrinker (`shadow-lru-limit`) bounds them by the cgroup's own LRU size, where the v4.2
/// node-wide limit (present pages / 16) leaves them all.
#[test]
fn shadow_nodes_are_limited_per_memcg_on_modern_kernels() {
    let text = READ_TWICE
        .replace("size = \"96MiB\"", "size = \"2GiB\"")
        .replace("passes = 2\n", "passes = 1\n");
    let sc = with_cgroups(
        &text,
        vec![cgroup("small", Some(32 * MIB))],
        &[("reader", "small")],
    );
    let old = run(&sc, KernelEra::V4_2, false);
    // Order-0 pages: with 6.18's large folios this stream's 1 MiB reads grow folios of
    // order 6 and more, whose shadows sit above the leaves (no shadow nodes at all:
    // `large_folios::a_folio_of_a_leafs_size_leaves_no_shadow_node`).
    let mut f = KernelEra::V6_18.features("patched").expect("preset");
    f.large_folios = false;
    let new = common::run_sc(&sc, f, false, MAX_STEPS);
    assert_eq!(new.end, RunEnd::Completed, "{:?}", new.end);
    assert_eq!(old.vmstat["workingset_nodereclaim"], 0);
    let s = cg(&new, "small");
    assert!(s.stat["workingset_nodereclaim"] > 0, "{:?}", s.stat);
    assert_eq!(
        s.stat["workingset_nodereclaim"],
        new.vmstat["workingset_nodereclaim"]
    );
    // do_shrink_slab counts every shrinker's scans in slabs_scanned, the shadow nodes'
    // too; the reader's one file is open, so no superblock shrinker has anything to scan.
    assert!(
        new.vmstat["slabs_scanned"] >= new.vmstat["workingset_nodereclaim"],
        "slabs_scanned {} < workingset_nodereclaim {}",
        new.vmstat["slabs_scanned"],
        new.vmstat["workingset_nodereclaim"]
    );
}

const SQUEEZE: &str = r#"
name = "memcg-squeeze"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "512MiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "16GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/ws"
size = "256MiB"
[[tasks]]
name = "ws"
cpu = 0
program = "read"
path = "/data/ws"
block_size = "1MiB"
passes = 6
think = "20ms"
[[tasks]]
name = "hog"
cpu = 1
start = "100ms"
program = "anon"
size = "320MiB"
passes = 2
"#;

fn squeeze(low: u64, min: u64) -> RunReport {
    let mut prot = cgroup("prot", None);
    prot.memory_low = low;
    prot.memory_min = min;
    let sc = with_cgroups(
        SQUEEZE,
        vec![prot, cgroup("hog", None)],
        &[("ws", "prot"), ("hog", "hog")],
    );
    run(&sc, KernelEra::V6_18, false)
}

/// Without swap the hog's anonymous memory cannot be reclaimed: the protected file is all
/// global reclaim can take. memory.low gives way (reclaim retries with memcg_low_reclaim
/// and counts `low` events); memory.min does not, and the OOM killer runs instead.
#[test]
fn memory_low_gives_way_when_nothing_else_is_left_and_memory_min_does_not() {
    let low = squeeze(400 * MIB, 0);
    let p = cg(&low, "prot");
    assert!(p.events.low > 0, "{:?}", p.events);
    assert!(p.stat["pgscan"] > 0);
    assert_eq!(low.vmstat["oom_kill"], 0, "{:?}", low.oom);
    let min = squeeze(0, 400 * MIB);
    let p = cg(&min, "prot");
    assert_eq!(p.stat["pgscan"], 0, "memory.min is never reclaimed");
    assert_eq!(p.events.low, 0);
    assert!(min.vmstat["oom_kill"] >= 1, "nothing else reclaimable: OOM");
}

const MAPPED_AND_SHMEM: &str = r#"
name = "mapped-and-shmem"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"
[[filesystems]]
mount = "/tmp"
type = "tmpfs"
[[files]]
path = "/data/f"
size = "32MiB"
data = false
[[tasks]]
name = "mapper"
cpu = 0
program = "mmap-read"
path = "/data/f"
[[tasks]]
name = "writer"
cpu = 1
program = "dd"
path = "/tmp/f"
size = "48MiB"
block_size = "64KiB"
"#;

#[test]
fn memory_stat_file_mapped_and_shmem_are_each_cgroups_own() {
    // Stopped half way, while one cgroup's task has a file mapped and the other's is
    // writing a tmpfs file: each cgroup's memory.stat file_mapped / shmem is what the
    // machine's nr_mapped / nr_shmem count of its pages (the two are kept apart), and the
    // root's is the sum. (The invariant checker holds it at every step of the property test
    // above; here it is the report.)
    let sc = with_cgroups(
        MAPPED_AND_SHMEM,
        vec![cgroup("a", None), cgroup("b", None)],
        &[("mapper", "a"), ("writer", "b")],
    );
    let f = KernelEra::V6_18.features("patched").expect("preset");
    let r = run_sc(&sc, f, true, 200);
    assert!(matches!(r.end, RunEnd::StepLimit), "{:?}", r.end);
    let page = 4096;
    let mapped = r.vmstat["nr_mapped"] * page;
    let shmem = r.vmstat["nr_shmem"] * page;
    assert!(mapped > 0 && shmem > 0, "mapped {mapped} shmem {shmem}");
    let (a, b) = (cg(&r, "a"), cg(&r, "b"));
    assert_eq!((a.stat["file_mapped"], a.stat["shmem"]), (mapped, 0));
    assert_eq!((b.stat["file_mapped"], b.stat["shmem"]), (0, shmem));
    let root = cg(&r, "/");
    assert_eq!(
        (root.stat["file_mapped"], root.stat["shmem"]),
        (mapped, shmem)
    );
}

/// lruvec-lru-lock (v5.11, "mm/lru: replace pgdat lru_lock with lruvec lock"): CPU 0 holds
/// the LRU lock of cgroup a's lruvec for 10 µs; CPU 1 takes cgroup b's 5 µs in. With one
/// lock per node (before v5.11) CPU 1 spins until CPU 0 lets go; with one per lruvec it
/// does not wait.
#[test]
fn an_lru_lock_held_for_one_cgroup_stalls_another_only_before_v5_11() {
    let text = common::unit_machine_toml(
        "unit",
        "16MiB",
        "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"4KiB\"\n",
    ) + "\n[[cgroups]]\nname = \"a\"\n[[cgroups]]\nname = \"b\"\n";
    let us = 1_000_000; // ps
    for per_lruvec in [false, true] {
        let mut f = KernelEra::V6_18.features("patched").expect("preset");
        assert!(f.set("lruvec-lru-lock", per_lruvec));
        let mut sim = common::build_sim(&text, "unit.toml", f);
        assert_eq!(sim.nr_memcgs(), 3, "root, a and b");
        let n = sim.nodes.len();
        let (a, b) = (n, 2 * n); // the lruvecs of a and b on node 0
        sim.set_running(0, None);
        sim.lru_lock(a);
        sim.charge(10 * us);
        sim.lru_unlock(a);
        sim.set_running(1, None);
        sim.charge(5 * us);
        let before = sim.now();
        sim.lru_lock(b);
        let waited = sim.now() - before;
        sim.lru_unlock(b);
        let contended: u64 = sim.lru_locks().map(|l| l.contended).sum();
        if per_lruvec {
            assert_eq!(contended, 0);
            assert!(waited < us, "no spin: {waited} ps");
        } else {
            assert_eq!(contended, 1);
            assert!(waited >= 5 * us, "spins until CPU 0 releases: {waited} ps");
        }
        // A batch of new pages of a, b, a reaches the LRU under one lock per node, or
        // relocking at each change of lruvec (folio_lruvec_relock_irqsave).
        let taken =
            |sim: &mmsim::sim::Sim| -> u64 { sim.lru_locks().map(|l| l.acquisitions).sum() };
        let before = taken(&sim);
        for memcg in [1, 2, 1] {
            let pfn = sim
                .alloc_page_charged(mmsim::mm::page_alloc::Gfp::KERNEL, memcg)
                .expect("a free page");
            sim.lru_cache_add(pfn);
        }
        sim.lru_add_drain();
        assert_eq!(taken(&sim) - before, if per_lruvec { 3 } else { 1 });
    }
}

/// memory.events `high` counts reclaim_high's passes over a memcg above memory.high (the
/// work queued for the return to user space), not the charges that went over it. From
/// v5.4 (`memcg-high-throttle`) the work retries and then throttles the task; before, it
/// is one reclaim pass and no sleep.
#[test]
fn the_high_event_counts_reclaim_passes_not_charges() {
    let text = common::unit_machine_toml(
        "unit",
        "16MiB",
        "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"4KiB\"\n",
    ) + "\n[[cgroups]]\nname = \"web\"\nmemory_high = \"64KiB\"\n";
    for (era, passes, throttled) in [(KernelEra::V4_14, 1, false), (KernelEra::V6_18, 17, true)] {
        let f = era.features("patched").expect("preset");
        let mut sim = common::build_sim(&text, "unit.toml", f);
        let t = common::task_id(&sim, "t");
        sim.tasks[t].memcg = 1;
        sim.set_running(0, Some(t));
        for _ in 0..32 {
            sim.alloc_page_charged(mmsim::mm::page_alloc::Gfp::KERNEL, 1)
                .expect("a free page");
        }
        assert!(sim.memcgs[1].usage > sim.memcgs[1].high);
        assert!(
            sim.tasks[t].memcg_nr_pages_over_high > 0,
            "over-high work queued"
        );
        assert_eq!(
            sim.memcgs[1].events.high, 0,
            "{era:?}: no event while charging"
        );
        let delay = sim.mem_cgroup_handle_over_high(t);
        // The pages are off the LRU, so reclaim frees nothing: one event per reclaim_high
        // pass, on 6.18 the first and MAX_RECLAIM_RETRIES retries.
        assert_eq!(sim.memcgs[1].events.high, passes, "{era:?}: one per pass");
        assert_eq!(delay > 0, throttled, "{era:?}: throttled {delay} ps");
    }
}

/// A machine of two CPUs with cgroups `a` (memory.max `a_max`) and `b`, on `era` rules;
/// its dummy task `t` runs in `a`.
fn stock_machine(era: KernelEra, a_max: &str) -> (mmsim::sim::Sim, usize) {
    let text = common::unit_machine_toml(
        "unit",
        "64MiB",
        "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"4KiB\"\n",
    ) + &format!(
        "\n[[cgroups]]\nname = \"a\"\nmemory_max = \"{a_max}\"\n[[cgroups]]\nname = \"b\"\n"
    );
    let f = era.features("patched").expect("preset");
    let sim = common::build_sim(&text, "unit.toml", f);
    let t = common::task_id(&sim, "t");
    (sim, t)
}

/// Charge `n` pages to `memcg` on `cpu` as task `t` (pages off the LRU: nothing to reclaim).
fn charge(sim: &mut mmsim::sim::Sim, t: usize, cpu: usize, memcg: u16, n: u64) {
    sim.tasks[t].memcg = memcg;
    sim.set_running(cpu, Some(t));
    for _ in 0..n {
        sim.alloc_page_charged(mmsim::mm::page_alloc::Gfp::KERNEL, memcg)
            .expect("charged");
    }
}

/// memcg-charge-stock (2.6.33), memcg-charge-batch-64 (6.0), memcg-multi-stock (6.16):
/// the counters are charged a batch at a time and the rest waits in the CPU's stock, so
/// memory.current runs ahead of the pages in use by less than a batch per CPU; a charge
/// for another memcg on the CPU drains the stock, unless the stock holds several memcgs.
#[test]
fn memcg_charges_go_through_a_per_cpu_stock_by_era() {
    for (era, batch, slots) in [
        (KernelEra::V2_6_30, 1, 1),
        (KernelEra::V4_14, 32, 1),
        (KernelEra::V6_1, 64, 1),
        (KernelEra::V6_18, 64, 7),
    ] {
        let (mut sim, t) = stock_machine(era, "max");
        assert_eq!(
            sim.features.memcg_charge_stock,
            batch > 1,
            "{era:?}: the stock is 2.6.33's"
        );
        charge(&mut sim, t, 0, 1, 1);
        assert_eq!(
            sim.memcgs[1].usage, batch,
            "{era:?}: one page charges a batch"
        );
        charge(&mut sim, t, 0, 1, batch - 1);
        assert_eq!(
            sim.memcgs[1].usage, batch,
            "{era:?}: the stock covers the batch"
        );
        assert_eq!(sim.memcg_stock_pages()[1], 0);
        charge(&mut sim, t, 0, 1, 1);
        assert_eq!(
            sim.memcgs[1].usage,
            batch + batch,
            "{era:?}: the next batch"
        );
        // b charges on the same CPU: with one slot a's unused pages go back.
        charge(&mut sim, t, 0, 2, 1);
        assert_eq!(sim.memcgs[2].usage, batch, "{era:?}");
        let a_left = if slots == 1 { batch + 1 } else { 2 * batch };
        assert_eq!(
            sim.memcgs[1].usage, a_left,
            "{era:?}: a's stock kept with {slots} slots"
        );
        mmsim::mm::check::check_all(&sim).expect("invariants hold");
    }
}

/// A charge at memory.max drains the stocks of the memcg over its limit (drain_all_stock)
/// before it retries: pages another CPU holds charged but unused make room, and no OOM.
#[test]
fn a_charge_at_memory_max_drains_the_other_cpus_stock() {
    let (mut sim, t) = stock_machine(KernelEra::V6_1, "520KiB"); // 130 pages
    charge(&mut sim, t, 0, 1, 1); // 64 charged, 63 in CPU 0's stock
    charge(&mut sim, t, 1, 1, 1); // 128, 63 in CPU 1's stock
    charge(&mut sim, t, 0, 1, 63); // CPU 0's stock used up
    assert_eq!(sim.memcgs[1].usage, 128);
    charge(&mut sim, t, 0, 1, 2); // a batch would pass memory.max: one page each
    assert_eq!(sim.memcgs[1].usage, 130);
    assert_eq!(sim.memcgs[1].events.max, 0);
    charge(&mut sim, t, 0, 1, 1); // at the limit: reclaim finds nothing, drain CPU 1
    assert_eq!(sim.memcgs[1].events.max, 1, "one charge hit memory.max");
    assert_eq!(sim.memcgs[1].events.oom, 0, "the drained stock made room");
    assert_eq!(sim.memcgs[1].usage, 130 - 63 + 1);
    assert_eq!(sim.memcg_stock_pages()[1], 0, "no stock left anywhere");
    mmsim::mm::check::check_all(&sim).expect("invariants hold");
}

/// memcg-sync-high (5.18): a 1 MiB read (256 pages) charged above memory.high runs the
/// over-high work inside the charge once more than a batch (64 pages) is queued, so usage
/// overruns memory.high by at most about two batches; before, by the whole read.
#[test]
fn a_large_read_overruns_memory_high_by_one_syscall_only_before_v5_18() {
    let mut c = cgroup("web", None);
    c.memory_high = Some(64 * MIB);
    let sc = with_cgroups(HIGH, vec![c], &[("reader", "web")]);
    let overrun = |sync: bool| {
        let mut f = KernelEra::V6_18.features("patched").expect("preset");
        assert!(f.set("memcg-sync-high", sync));
        let r = run_sc(&sc, f, true, MAX_STEPS);
        assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
        let w = cg(&r, "web");
        assert!(w.events.high > 0);
        (w.peak - 64 * MIB) / 4096
    };
    let (sync, deferred) = (overrun(true), overrun(false));
    assert!(sync <= 2 * 64, "synchronous: {sync} pages over memory.high");
    assert!(
        deferred >= 256,
        "on the return to user space: {deferred} pages over"
    );
}

/// A reader fills cgroup `app` with 48 MiB of a file, then a proactive-reclaim agent
/// (`memory-reclaim`) writes `amount` to the memory.reclaim of `target`.
fn proactive_run(era: KernelEra, target: &str, amount: &str, batches: Option<bool>) -> RunReport {
    let text = common::machine_toml("proactive", 2, "128MiB", None, "1GiB", "/data")
        + &common::file_toml("/data/hot", 48 * MIB, true)
        + &format!(
            r#"
[[cgroups]]
name = "app"
[[cgroups]]
name = "idle"
[[tasks]]
name = "reader"
cpu = 0
cgroup = "app"
program = "read"
path = "/data/hot"
[[tasks]]
name = "agent"
cpu = 1
program = "memory-reclaim"
target = "{target}"
amount = "{amount}"
count = 2
interval = "10ms"
delay = "2s"
"#
        );
    let sc = parse_scenario(&text, "proactive.toml", &[]).expect("scenario parses");
    let mut f = era.features("patched").expect("preset");
    if let Some(b) = batches {
        f.memcg_reclaim_batches = b;
    }
    // The amounts below were derived with order-0 page-cache pages; whole-folio reclaim
    // (`large-folios`) moves them by a page or so without touching what is tested.
    f.large_folios = false;
    let r = run_sc(&sc, f, true, MAX_STEPS);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    r
}

/// memory.reclaim (v5.19): two writes of 8 MiB reclaim at least 4,096 pages from `app`,
/// counted as the cgroup's proactive reclaim on 6.18 (direct reclaim on 6.1) and not in
/// the global counters (global reclaim only), and leave the cgroup at least 16 MiB smaller. Each round asking for all
/// that is left overreclaims (each shrink_lruvec of the priority loop measures its own
/// progress against the whole target); from v6.9 (`memcg-reclaim-batches`) a round asks
/// for a quarter of what is left and the writes stop within a few SWAP_CLUSTER_MAX
/// batches of the amount. Writing to a cgroup with nothing to reclaim fails with EAGAIN
/// once MAX_RECLAIM_RETRIES rounds reclaimed nothing; before 5.19 the file does not exist
/// (ENOENT) and the agent stops after its first write.
#[test]
fn memory_reclaim_reclaims_the_amount_written_from_the_cgroup() {
    let mut steals = Vec::new();
    for batches in [false, true] {
        let r = proactive_run(KernelEra::V6_18, "app", "8MiB", Some(batches));
        let app = cg(&r, "app");
        let steal = app.stat["pgsteal"];
        assert!(steal >= 4096, "batches {batches}: pgsteal {steal}");
        // 6.18 counts it as proactive reclaim (`proactive-reclaim-stats`, v6.15).
        assert_eq!(app.stat["pgsteal_proactive"], steal, "batches {batches}");
        assert_eq!(app.stat["pgsteal_direct"], 0, "batches {batches}");
        assert_eq!(r.vmstat.get("pgsteal_direct").copied().unwrap_or(0), 0);
        assert_eq!(r.vmstat.get("pgsteal_proactive").copied().unwrap_or(0), 0);
        // The file cache (48 MiB) is 16 MiB smaller; memory.current also holds the
        // reader's dentry, inode and page tables and what the per-CPU stocks precharged.
        assert!(
            app.stat["file"] <= (48 * MIB - 16 * MIB) as i64,
            "batches {batches}: file {} (memory.current {})",
            app.stat["file"],
            app.current
        );
        steals.push(steal);
        let agent = task_report(&r, "agent");
        assert!(agent.errors.is_empty(), "{:?}", agent.errors);
        assert_eq!(agent.samples["reclaim"].len(), 2);
    }
    assert!(steals[1] < 4096 + 128, "with batches: {}", steals[1]);
    assert!(
        steals[0] > steals[1] + 512,
        "without batches a round overreclaims: {steals:?}"
    );
    // Before 6.15 proactive reclaim is the cgroup's direct reclaim.
    let r = proactive_run(KernelEra::V6_1, "app", "8MiB", None);
    let app = cg(&r, "app");
    assert!(app.stat["pgsteal"] >= 4096);
    assert_eq!(app.stat["pgsteal_direct"], app.stat["pgsteal"]);
    assert_eq!(app.stat["pgscan_proactive"], 0);
    let r = proactive_run(KernelEra::V6_18, "idle", "8MiB", None);
    assert_eq!(task_report(&r, "agent").errors.get("EAGAIN"), Some(&2));
    assert_eq!(cg(&r, "app").stat["pgsteal"], 0);
    let r = proactive_run(KernelEra::V4_14, "app", "8MiB", None);
    let agent = task_report(&r, "agent");
    assert_eq!(agent.errors.get("ENOENT"), Some(&1));
    assert_eq!(
        agent.samples["reclaim"].len(),
        1,
        "it stops after the first write"
    );
    assert_eq!(cg(&r, "app").stat["pgsteal"], 0);
}

/// examples/proactive_reclaim.toml (docs/EXPERIMENTS.md, "Proactive reclaim") loads and
/// runs: its agent's ten 8 MiB writes to `app`'s memory.reclaim all succeed and reclaim at
/// least what they asked for, and the hot file is never refaulted under classic reclaim
/// (the cold file's pages, used once, go first).
#[test]
fn the_proactive_reclaim_example_runs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/proactive_reclaim.toml"
    );
    let text = std::fs::read_to_string(path).expect("the example exists");
    let sc = parse_scenario(&text, path, &[]).expect("the example parses");
    let r = run(&sc, KernelEra::V6_18, true);
    let app = cg(&r, "app");
    assert!(app.stat["pgsteal"] >= 10 * 2048, "{}", app.stat["pgsteal"]);
    assert_eq!(app.stat["workingset_refault_file"], 0);
    let agent = task_report(&r, "agent");
    assert!(agent.errors.is_empty(), "{:?}", agent.errors);
    assert_eq!(agent.samples["reclaim"].len(), 10);
}

/// A cgroup holding 32 MiB of anonymous memory (kept mapped: two passes 3 s apart) and,
/// with `reader`, a 32 MiB file read once, with swap; an agent writes 16 MiB to its
/// memory.reclaim at 2.5 s (after the first periodic memcg stats flush, due within 2 s of
/// the start: before it 6.18's reclaim sees the starting statistics,
/// `memcg-stats-ratelimited`), with `swappiness`.
fn swappiness_run(era: KernelEra, swappiness: u32, reader: bool) -> RunReport {
    swappiness_run_with(era, &swappiness.to_string(), reader, None)
}

/// `swappiness_run` with the key's TOML value given as written (`"\"max\""`), under
/// `policy` (None: the scenario's, classic).
fn swappiness_run_with(
    era: KernelEra,
    swappiness: &str,
    reader: bool,
    policy: Option<mmsim::mm::policy::ReclaimPolicy>,
) -> RunReport {
    let mut text = common::machine_toml(
        "proactive-swappiness",
        2,
        "256MiB",
        Some("256MiB"),
        "1GiB",
        "/data",
    ) + &common::file_toml("/data/f", 32 * MIB, true)
        + &format!(
            r#"
[[cgroups]]
name = "app"
[[tasks]]
name = "anon"
cpu = 0
cgroup = "app"
program = "anon"
size = "32MiB"
passes = 2
think = "3s"
[[tasks]]
name = "agent"
cpu = 1
program = "memory-reclaim"
target = "app"
amount = "16MiB"
count = 1
delay = "2500ms"
swappiness = {swappiness}
"#
        );
    if reader {
        text += "[[tasks]]\nname = \"reader\"\ncpu = 0\ncgroup = \"app\"\nprogram = \"read\"\npath = \"/data/f\"\n";
    }
    let sc = parse_scenario(&text, "swappiness.toml", &[]).expect("scenario parses");
    let mut f = era.features("patched").expect("preset");
    f.policy = policy;
    let r = run_sc(&sc, f, true, MAX_STEPS);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    r
}

/// memory.reclaim's `swappiness=` (v6.11, `memory-reclaim-swappiness`): the write's
/// reclaim balances anon against file with the given swappiness. With 0, memcg reclaim
/// scans only file pages (get_scan_count's SCAN_FILE): beside a file it takes 16 MiB of
/// it and no anonymous page, and with anonymous memory alone it reclaims nothing and fails
/// with EAGAIN, where swappiness 60 swaps 16 MiB out. (With a large inactive file list
/// even 200 reclaims file only: cache_trim_mode comes first, as in the kernel.) On 6.1 the
/// argument is unknown: the write fails with EINVAL and nothing is reclaimed.
#[test]
fn memory_reclaim_swappiness_sets_the_anon_file_balance_from_v6_11() {
    let r = swappiness_run(KernelEra::V6_18, 0, true);
    let st = &cg(&r, "app").stat;
    assert_eq!(st["pgsteal_anon"], 0, "{st:?}");
    assert!(st["pgsteal_file"] >= 4096, "{st:?}");
    assert!(task_report(&r, "agent").errors.is_empty());
    let r = swappiness_run(KernelEra::V6_18, 0, false);
    assert_eq!(cg(&r, "app").stat["pgsteal"], 0);
    assert_eq!(task_report(&r, "agent").errors.get("EAGAIN"), Some(&1));
    let r = swappiness_run(KernelEra::V6_18, 60, false);
    let st = &cg(&r, "app").stat;
    assert!(st["pgsteal_anon"] >= 4096, "{st:?}");
    assert!(task_report(&r, "agent").errors.is_empty());
    let r = swappiness_run(KernelEra::V6_1, 0, true);
    assert_eq!(task_report(&r, "agent").errors.get("EINVAL"), Some(&1));
    assert_eq!(cg(&r, "app").stat["pgsteal"], 0);
}

/// memory.reclaim's `swappiness=max` (v6.16, `memory-reclaim-swappiness-max`): anonymous
/// pages only (SWAPPINESS_ANON_ONLY), beside a file too, where swappiness 200 reclaims
/// file pages (cache_trim_mode comes first); under MGLRU as under the classic LRU. On 6.1
/// the write is EINVAL; a value other than an integer or "max" is a scenario error.
#[test]
fn memory_reclaim_swappiness_max_reclaims_anon_only_from_v6_16() {
    use mmsim::mm::policy::ReclaimPolicy;
    for policy in [None, Some(ReclaimPolicy::Mglru)] {
        let r = swappiness_run_with(KernelEra::V6_18, "\"max\"", true, policy);
        let st = &cg(&r, "app").stat;
        assert_eq!(st["pgsteal_file"], 0, "{policy:?} {st:?}");
        assert!(st["pgsteal_anon"] >= 4096, "{policy:?} {st:?}");
        assert!(task_report(&r, "agent").errors.is_empty(), "{policy:?}");
    }
    let r = swappiness_run_with(KernelEra::V6_18, "200", true, None);
    let st = &cg(&r, "app").stat;
    assert!(st["pgsteal_file"] >= 4096, "{st:?}");
    let r = swappiness_run_with(KernelEra::V6_1, "\"max\"", true, None);
    assert_eq!(task_report(&r, "agent").errors.get("EINVAL"), Some(&1));
    assert_eq!(cg(&r, "app").stat["pgsteal"], 0);
    let bad = common::machine_toml("bad", 2, "256MiB", None, "1GiB", "/data")
        + "[[tasks]]\nname = \"agent\"\ncpu = 0\nprogram = \"memory-reclaim\"\ntarget = \"/\"\namount = \"1MiB\"\nswappiness = \"min\"\n";
    let e = parse_scenario(&bad, "bad.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.toml") && e.contains("swappiness") && e.contains("\"max\""),
        "{e}"
    );
}

/// PSI (`mmsim::psi`, kernel/sched/psi.c): the cgroup that reclaims at its memory.max
/// stalls on memory, some and full (its only task reclaims on its own CPU), and so does the
/// machine; the cgroup beside it never reclaims and shows only the IO wait of its first
/// pass. Kernels before 4.20 have no pressure files.
#[test]
fn memory_pressure_is_the_stall_of_the_cgroup_that_reclaims() {
    let sc = with_cgroups(
        STREAM_AND_HOT,
        vec![cgroup("stream", Some(128 * MIB)), cgroup("hot", None)],
        &[("stream", "stream"), ("hot", "hot")],
    );
    let r = run(&sc, KernelEra::V6_18, false);
    let p = |n: &str| cg(&r, n).pressure.expect("pressure files on 6.18");
    let (stream, hot) = (p("stream"), p("hot"));
    let sys = r.pressure.expect("/proc/pressure on 6.18");
    assert!(stream.memory.some.total_us > 0, "{stream:?}");
    assert!(stream.memory.full.total_us > 0, "{stream:?}");
    assert_eq!(hot.memory.some.total_us, 0, "{hot:?}");
    assert!(hot.io.some.total_us > 0, "{hot:?}");
    assert!(sys.memory.some.total_us > 0, "{sys:?}");
    for x in [stream, hot, sys] {
        assert!(x.memory.full.total_us <= x.memory.some.total_us, "{x:?}");
        assert!(x.io.full.total_us <= x.io.some.total_us, "{x:?}");
        assert!(
            x.memory.some.total_us * 1000 <= r.elapsed_ns + 1_000_000,
            "{x:?}"
        );
    }
    let old = run(&sc, KernelEra::V4_14, false);
    assert!(old.pressure.is_none());
    assert!(cg(&old, "stream").pressure.is_none());
}

/// folio_wait_bit_common: waiting for the lock of a page that is being read back in and
/// was part of the workingset (PG_workingset, not uptodate) is a memory stall as well as an
/// IO wait; any other page-lock wait is an IO wait only. The stall lasts through the
/// wake-up until the task runs again.
#[test]
fn a_wait_for_a_refaulting_workingset_page_is_a_memory_stall() {
    use mmsim::mm::page::pg;
    use mmsim::psi::flags;
    for (workingset, uptodate, expect) in [
        (true, false, flags::IOWAIT | flags::MEMSTALL),
        (false, false, flags::IOWAIT),
        (true, true, flags::IOWAIT),
    ] {
        let (mut sim, t) = stock_machine(KernelEra::V6_18, "max");
        sim.set_running(0, Some(t));
        let pfn = sim
            .alloc_page(mmsim::mm::page_alloc::Gfp::KERNEL)
            .expect("a free page");
        sim.wake_up(t, 0);
        assert_eq!(sim.tasks[t].psi_flags, flags::RUNNING);
        let page = &mut sim.mem[pfn as usize];
        page.flags |= pg::LOCKED;
        if workingset {
            page.flags |= pg::WORKINGSET;
        }
        if uptodate {
            page.flags |= pg::UPTODATE;
        }
        sim.sleep_on(t, mmsim::sched::Wait::PageLocked(pfn));
        assert_eq!(
            sim.tasks[t].psi_flags, expect,
            "workingset {workingset} uptodate {uptodate}"
        );
        // Woken: runnable, out of IO wait; a memstall goes on until the task runs.
        sim.wake_up(t, 1000);
        assert_eq!(
            sim.tasks[t].psi_flags,
            flags::RUNNING | (expect & flags::MEMSTALL)
        );
        assert_eq!(
            sim.tasks[t].psi_sleep_memstall,
            expect & flags::MEMSTALL != 0
        );
    }
}

/// cpu.pressure: two tasks of different cgroups on one CPU take turns (the engine's round
/// robin between runnable tasks), so each waits while the other runs: both cgroups show
/// CPU stall, some and full (none of their tasks on the CPU while they wait); the machine's
/// CPU full is undefined and zero. A cgroup whose task has a CPU of its own shows none.
#[test]
fn tasks_sharing_a_cpu_stall_on_it() {
    let anon = |name: &str, cpu: u32| {
        format!(
            "\n[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\nprogram = \"anon\"\nsize = \"16MiB\"\npasses = 2\n"
        )
    };
    let text = common::machine_toml("cpu-psi", 2, "512MiB", None, "1GiB", "/mnt")
        + &anon("a", 0)
        + &anon("b", 0)
        + &anon("c", 1);
    let sc = with_cgroups(
        &text,
        vec![cgroup("a", None), cgroup("b", None), cgroup("c", None)],
        &[("a", "a"), ("b", "b"), ("c", "c")],
    );
    let r = run(&sc, KernelEra::V6_18, true);
    let p = |n: &str| cg(&r, n).pressure.expect("pressure files on 6.18");
    for n in ["a", "b"] {
        let x = p(n).cpu;
        assert!(x.some.total_us > 0, "{n}: {x:?}");
        assert_eq!(x.full.total_us, x.some.total_us, "{n}: one task: {x:?}");
    }
    assert_eq!(p("c").cpu.some.total_us, 0, "{:?}", p("c"));
    let sys = r.pressure.expect("/proc/pressure");
    assert!(sys.cpu.some.total_us > 0);
    assert_eq!(sys.cpu.full.total_us, 0, "undefined for the machine");
}

/// The `senpai` program's example (a hot file re-read every 500 ms and a cold file read
/// once in `app`) with the stall target `pressure` and more `--set`s.
fn senpai_run(era: KernelEra, pressure: &str, more: &[&str]) -> RunReport {
    let text = mmsim::workload::senpai::PROGRAM.example;
    let mut sets = vec![format!("tasks.senpai.pressure={pressure}")];
    sets.extend(more.iter().map(|s| s.to_string()));
    let sc = parse_scenario(text, "senpai-example.toml", &sets).expect("the example parses");
    // Order-0 page-cache pages: the stall figures below were derived with them (with
    // `large-folios` each reclaim frees whole folios: the capped cgroup stalls 770 us
    // instead of 2,050).
    let mut f = era.features("patched").expect("preset");
    f.large_folios = false;
    let r = common::run_sc(&sc, f, true, MAX_STEPS);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    r
}

/// oomd's Senpai on memory.pressure and memory.reclaim: it probes memory.current down in
/// steps that shrink as the stall nears its target, and skips a probe when the stall since
/// its last decision reached the target (here the cgroup's own reclaim at a memory.max).
/// Before PSI and memory.reclaim (4.14) it reads ENOENT and stops at once.
#[test]
fn senpai_reclaims_until_the_pressure_target_and_backs_off() {
    let steal = |r: &RunReport| cg(r, "app").stat["pgsteal"];
    let probes = |r: &RunReport| task_report(r, "senpai").samples["probe"].len();
    let loose = senpai_run(KernelEra::V6_18, "10s", &[]);
    assert!(steal(&loose) > 0, "the loose target probes");
    assert!(
        cg(&loose, "app").current < 80 << 20,
        "below the files' 80 MiB"
    );
    let tight = senpai_run(KernelEra::V6_18, "1us", &[]);
    assert!(
        steal(&tight) < steal(&loose),
        "smaller probes: {} vs {}",
        steal(&tight),
        steal(&loose)
    );
    let capped = |pressure: &str| {
        senpai_run(
            KernelEra::V6_18,
            pressure,
            &["cgroups.app.memory_max=40MiB"],
        )
    };
    let (stalled, unbothered) = (capped("1ms"), capped("10s"));
    let stall = cg(&stalled, "app").pressure.unwrap().memory.some.total_us;
    assert!(
        stall >= 1000,
        "the cgroup stalls in its own reclaim: {stall} us"
    );
    assert!(
        probes(&stalled) < probes(&unbothered),
        "a back-off skips a probe: {} vs {}",
        probes(&stalled),
        probes(&unbothered)
    );
    // memory.high mode, started once the files are read: the limit starts at
    // memory.current (80 MiB) and the probes lower it; each write reclaims down to it.
    let high = senpai_run(
        KernelEra::V6_18,
        "10ms",
        &["tasks.senpai.mode=high", "tasks.senpai.delay=1s"],
    );
    let app = cg(&high, "app");
    let limit = app.memory_high.expect("senpai wrote memory.high");
    assert!(limit < 80 << 20, "probed down: {limit}");
    assert!(app.current <= limit, "{} above {limit}", app.current);
    assert!(task_report(&high, "senpai").samples["adjust"].len() >= 2);
    let old = senpai_run(KernelEra::V4_14, "10ms", &[]);
    let agent = task_report(&old, "senpai");
    assert_eq!(agent.errors.get("ENOENT"), Some(&1), "{:?}", agent.errors);
    assert_eq!(steal(&old), 0);
}

const MAPPER: &str = r#"
name = "memcg-pagetables"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[[tasks]]
name = "hog"
cpu = 0
program = "anon"
size = "64MiB"
passes = 2
"#;

/// Page-table pages are frames (pte_alloc_one) charged, from 4.7, to the faulting task's
/// memcg (`memcg-kmem-pgtables`), shown as memory.stat `pagetables` from 5.11. A 64 MiB
/// mapping touched once needs 32 PTE pages (512 PTEs each; 33 if it straddles a 2 MiB
/// boundary); they stay until the mm exits.
#[test]
fn page_tables_are_frames_charged_to_the_faulting_cgroup() {
    let sc = with_cgroups(MAPPER, vec![cgroup("box", None)], &[("hog", "box")]);
    let full = run(&sc, KernelEra::V6_18, true);
    // At the end the hog has exited: its tables are freed and uncharged.
    assert_eq!(full.vmstat["nr_page_table_pages"], 0);
    assert_eq!(cg(&full, "box").stat["pagetables"], 0);
    // Three quarters through, the first pass has touched the whole mapping.
    let mid_of = |f: mmsim::sim::Features| {
        let r = run_sc(&sc, f, true, full.steps * 3 / 4);
        assert_eq!(r.end, RunEnd::StepLimit);
        r
    };
    let on = mid_of(KernelEra::V6_18.features("patched").unwrap());
    let tables = on.vmstat["nr_page_table_pages"];
    assert!((32..=33).contains(&tables), "{tables} PTE pages");
    let b = cg(&on, "box");
    assert_eq!(b.stat["pagetables"], tables * 4096);
    // memory.current holds them beside the anon pages (and the CPU stock's precharge).
    assert!(b.current as i64 >= b.stat["anon"] + b.stat["pagetables"]);
    // Without kmem accounting (before 4.7) the tables still take frames, unaccounted.
    let mut f = KernelEra::V6_18.features("patched").unwrap();
    f.set("memcg-kmem-pgtables", false);
    let off = mid_of(f);
    assert_eq!(off.vmstat["nr_page_table_pages"], tables);
    assert_eq!(cg(&off, "box").stat["pagetables"], 0);
    // The same run but for the tables' charge, which the CPU's stock precharges in
    // batches of MEMCG_CHARGE_BATCH (64 pages).
    let more = (b.current - cg(&off, "box").current) / 4096;
    assert!(
        (tables as u64..=tables as u64 + 64).contains(&more),
        "{more} pages more charged for {tables} tables"
    );
    // No memory.stat pagetables before 5.11; the 4.14 era charges the tables already.
    let old = run_sc(
        &sc,
        KernelEra::V4_14.features("patched").unwrap(),
        true,
        full.steps * 3 / 4,
    );
    assert!(!cg(&old, "box").stat.contains_key("pagetables"));
    assert!(old.vmstat["nr_page_table_pages"] >= 32);
}

/// The `cgroup-write` program's example with `file` and `value` replaced (and, with
/// `swap = false`, no swap device).
fn cgroup_write_run(era: KernelEra, file: &str, value: &str, swap: bool) -> RunReport {
    let mut text = mmsim::workload::cgroup_write::PROGRAM
        .example
        .replace("file = \"memory.max\"", &format!("file = \"{file}\""))
        .replace("value = \"32MiB\"", &format!("value = {value}"));
    if !swap {
        text = text.replace("[swap]\nsize = \"256MiB\"\npreset = \"ssd\"\n", "");
    }
    let sc = parse_scenario(&text, "cgroup-write.toml", &[]).expect("scenario parses");
    let r = run_sc(&sc, era.features("patched").unwrap(), true, MAX_STEPS);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    r
}

/// `cgroup-write` (memory_max_write): lowering memory.max under a 64 MiB anonymous working
/// set reclaims (swaps) the cgroup down to the new limit before the write returns, without
/// the OOM killer while swap has room; the cgroup then runs within it; so does lowering
/// memory.high. Without swap nothing
/// can be reclaimed: a memory.events `oom` and the OOM kill of the cgroup's task. The swap
/// files take the value and reclaim nothing; memory.swap.high does not exist before 5.8.
#[test]
fn cgroup_write_lowers_memory_max_and_reclaims_down_to_it() {
    let r = cgroup_write_run(KernelEra::V6_18, "memory.max", "\"32MiB\"", true);
    let app = cg(&r, "app");
    assert_eq!((app.events.oom, app.events.oom_kill), (0, 0), "{:?}", r.oom);
    assert_eq!(app.memory_max, Some(32 * MIB));
    assert!(app.peak > 48 * MIB, "it held its 64 MiB before the write");
    assert!(r.vmstat["pswpout"] * 4096 >= (32 * MIB) as i64);
    assert!(task_report(&r, "admin").errors.is_empty());
    // After the write (at 0.5 s) memory.current stays within the new limit (plus what the
    // CPUs' stocks hold ahead, MEMCG_CHARGE_BATCH pages each).
    let after_write = |r: &RunReport| -> Vec<u64> {
        let done_ns = task_report(r, "admin").elapsed_ns;
        let k = r.cgroups.iter().position(|c| c.name == "app").unwrap();
        let after: Vec<u64> = r
            .series
            .iter()
            .filter(|s| s.t_ns > done_ns)
            .map(|s| s.cgroups[k])
            .collect();
        assert!(!after.is_empty());
        after
    };
    let after = after_write(&r);
    assert!(after.iter().all(|&p| p <= 32 * 256 + 2 * 64), "{after:?}");
    // memory.high (memory_high_write) reclaims down to it as well: the write outlasts the
    // swap-outs it starts, as the kernel's passes do (it once returned with all 64 MiB
    // under writeback, and nothing charged afterwards to bring the cgroup down).
    let r = cgroup_write_run(KernelEra::V6_18, "memory.high", "\"32MiB\"", true);
    assert_eq!(cg(&r, "app").memory_high, Some(32 * MIB));
    let after = after_write(&r);
    assert!(after.iter().all(|&p| p <= 32 * 256 + 2 * 64), "{after:?}");
    // No swap: reclaim finds nothing to take, the write ends in the memcg OOM killer.
    let r = cgroup_write_run(KernelEra::V6_18, "memory.max", "\"8MiB\"", false);
    let app = cg(&r, "app");
    assert!(
        app.events.oom >= 1 && app.events.oom_kill == 1,
        "{:?}",
        app.events
    );
    assert!(!r.oom.is_empty());
    // memory.swap.max takes the value; memory.swap.high is ENOENT before 5.8.
    let r = cgroup_write_run(KernelEra::V6_18, "memory.swap.max", "\"16MiB\"", true);
    assert_eq!(cg(&r, "app").swap_max, Some(16 * MIB));
    assert!(cg(&r, "app").swap_peak <= 16 * MIB + 64 * 4096);
    let r = cgroup_write_run(KernelEra::V4_14, "memory.swap.high", "\"16MiB\"", true);
    assert_eq!(task_report(&r, "admin").errors.get("ENOENT"), Some(&1));
    // Bad keys name the file, line and field.
    let bad = mmsim::workload::cgroup_write::PROGRAM
        .example
        .replace("file = \"memory.max\"", "file = \"memory.min\"");
    let e = parse_scenario(&bad, "bad.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("bad.toml:") && e.contains("file") && e.contains("memory.swap.high"),
        "{e}"
    );
    let bad = mmsim::workload::cgroup_write::PROGRAM
        .example
        .replace("target = \"app\"", "target = \"/\"");
    let e = parse_scenario(&bad, "bad.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.toml:") && e.contains("root"), "{e}");
}

/// The report's pressure series: the PSI totals at the end of every 2 s aggregation period
/// of a run, one entry per group (/proc first), never falling, memory full never above
/// some, the last at most the pressure files' totals at the end; none without PSI.
#[test]
fn the_pressure_series_has_the_totals_of_each_psi_period() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/swap_high.toml");
    let text = std::fs::read_to_string(path).expect("example");
    let sc = parse_scenario(&text, path, &[]).expect("example parses");
    // The throttled hog stalls for minutes (docs/EXPERIMENTS.md, "memory.swap.high").
    let r = run(&sc, KernelEra::V6_18, false);
    let ps = &r.pressure_series;
    let period = mmsim::psi::PSI_PERIOD_NS;
    assert_eq!(
        ps.len() as u64,
        r.elapsed_ns / period,
        "one entry per period ended"
    );
    assert!(ps
        .iter()
        .enumerate()
        .all(|(i, p)| p.t_ns == (i as u64 + 1) * period));
    let groups = r.cgroups.len();
    for w in ps.windows(2) {
        assert_eq!(w[1].totals.len(), groups);
        for (a, b) in w[0].totals.iter().zip(&w[1].totals) {
            assert!(
                a.iter().zip(b).all(|(x, y)| x <= y),
                "totals fall at {} ns",
                w[1].t_ns
            );
            assert!(
                b[1] <= b[0] && b[3] <= b[2],
                "full above some at {} ns",
                w[1].t_ns
            );
        }
    }
    let box_ = r.cgroups.iter().position(|c| c.name == "box").expect("box");
    let last = &ps.last().expect("periods").totals;
    let end = r.cgroups[box_].pressure.expect("PSI on 6.18");
    assert!(last[box_][0] <= end.memory.some.total_us);
    // Most of each period is memory stall once the hog is throttled.
    assert!(last[box_][0] > r.elapsed_ns / 1000 / 2, "{:?}", last[box_]);
    // 4.2 has no PSI (and no memory.swap.high): 4 s of the hog without it, no series.
    let sets = [
        "cgroups.box.swap_high=\"max\"".to_string(),
        "tasks.hog.think=\"4s\"".to_string(),
    ];
    let old = run(
        &parse_scenario(&text, path, &sets).expect("parses"),
        KernelEra::V4_2,
        false,
    );
    assert!(old.elapsed_ns > 2 * period);
    assert!(old.pressure_series.is_empty());
}

/// memory.events `max` counts charges that may reclaim: try_charge_memcg raises MEMCG_MAX
/// after its gfpflags_allow_blocking test, so a GFP_NOWAIT charge that does not fit fails
/// without one, and a GFP_KERNEL charge that does not fit raises it before reclaiming.
#[test]
fn the_max_event_counts_only_charges_that_may_reclaim() {
    use mmsim::mm::page_alloc::{AllocError, Gfp};
    let text = common::unit_machine_toml(
        "unit",
        "16MiB",
        "program = \"dd\"\npath = \"/tmp/dd\"\nsize = \"4KiB\"\n",
    ) + "\n[[cgroups]]\nname = \"box\"\nmemory_max = \"64KiB\"\n";
    let f = KernelEra::V6_18.features("patched").expect("preset");
    let mut sim = common::build_sim(&text, "unit.toml", f);
    let t = common::task_id(&sim, "t");
    sim.tasks[t].memcg = 1;
    sim.set_running(0, Some(t));
    // Fill the cgroup (16 pages) without reclaim.
    let mut held = 0;
    while sim.alloc_page_charged(Gfp::NOWAIT, 1).is_ok() {
        held += 1;
        assert!(held <= 16, "charged past memory.max");
    }
    assert_eq!(held, 16);
    assert_eq!(
        sim.memcgs[1].events.max, 0,
        "a NOWAIT charge raises no max event"
    );
    // A charge that may reclaim: the event, then reclaim (nothing reclaimable: the pages
    // are off the LRU), then the OOM killer, whose only candidate is the running task.
    let r = sim.alloc_page_charged(Gfp::KERNEL, 1);
    assert!(
        matches!(r, Err(AllocError::NoMem) | Err(AllocError::Wait(_))),
        "{r:?}"
    );
    assert!(sim.memcgs[1].events.max >= 1, "{:?}", sim.memcgs[1].events);
}

/// memory.stat `anon` and `file` are the kernel's counters, not LRU sizes: shmem (a
/// shared anonymous mapping) is `file` though it sits on the anon lists, and mlocked
/// anonymous memory is `anon` though it sits on the unevictable list. Snapshot at a step
/// limit, while three tasks of one cgroup hold their memory.
#[test]
fn memory_stat_anon_and_file_are_the_kernels_counters_not_the_lrus() {
    let text = r#"name = "stat"
kernel = "6.18"
[machine]
cpus_per_node = 2
memory_per_node = "64MiB"
[swap]
size = "128MiB"
[[cgroups]]
name = "box"
[[tasks]]
name = "private"
cgroup = "box"
program = "anon"
size = "8MiB"
think = "1s"
passes = 2
[[tasks]]
name = "shared"
cgroup = "box"
program = "anon"
size = "4MiB"
shared = true
passes = 2
think = "1s"
[[tasks]]
name = "locked"
cgroup = "box"
program = "anon"
size = "2MiB"
mlock = true
passes = 2
think = "1s"
"#;
    let sc = parse_scenario(text, "stat", &[]).expect("parses");
    let f = KernelEra::V6_18.features("patched").expect("preset");
    let r = run_sc(&sc, f, true, 200);
    assert_eq!(r.end, RunEnd::StepLimit);
    let b = common::cgroup_report(&r, "box");
    let page = 4096;
    let (anon, file) = (b.stat["anon"] / page, b.stat["file"] / page);
    let lru_anon = (b.stat["inactive_anon"] + b.stat["active_anon"]) / page;
    let (shmem, unevictable) = (b.stat["shmem"] / page, b.stat["unevictable"] / page);
    // Every task is in the box, so the box's counters are the machine's.
    assert_eq!(anon, r.vmstat["nr_anon_pages"]);
    assert_eq!(shmem, r.vmstat["nr_shmem"]);
    assert_eq!(unevictable, r.vmstat["nr_mlock"]);
    assert!(shmem > 0 && unevictable > 0 && anon > unevictable);
    // Only shmem is file here, and the anon lists hold shmem but not the locked pages;
    // the rest of the anonymous and shmem pages wait in the CPUs' LRU add batches (up to
    // 31 pages each on 6.18).
    assert_eq!(file, shmem);
    let batched = anon - unevictable + shmem - lru_anon;
    assert!((0..=2 * 31).contains(&batched), "{batched}");
    // memory.current is anon + file + kernel (5.18: slab and page tables here), and the
    // pages the CPUs' charge stocks hold in advance (up to a batch of 64 each on 6.18).
    // `kernel` counts the pages charged for kernel memory (MEMCG_KMEM), `slab` the bytes
    // of the objects in them: the pages the byte stock (obj_stock) holds part of are in
    // the first and not wholly in the second (less than a page per CPU's stock).
    let kernel = b.stat["kernel"] / page;
    let unused = b.stat["kernel"] - (b.stat["slab"] + b.stat["pagetables"]);
    assert!((0..2 * page).contains(&unused), "{unused}");
    assert!(kernel > 0);
    let stocked = b.current as i64 / page - (anon + file + kernel);
    assert!((0..=2 * 64).contains(&stocked), "{stocked}");
}

/// try_charge_memcg retries after a reclaim pass that freed pages without using up one of
/// its MAX_RECLAIM_RETRIES retries ("reclaim may have been able to free some pages. Retry
/// the charge before killing the task", every era). A cgroup 1,000 pages above its
/// memory.max, all of them clean file pages, gets its next charge after more passes than
/// the first, the one after the stock drain and 16 retries, with no OOM kill; that many
/// would not have made room.
#[test]
fn a_charge_keeps_reclaiming_while_reclaim_frees_pages() {
    use mmsim::workload::OpResult;
    for era in [KernelEra::V4_14, KernelEra::V6_18] {
        let (mut sim, t) = stock_machine(era, "max");
        sim.tasks[t].memcg = 1;
        sim.set_running(0, Some(t));
        let mut progress = 0;
        let fd = match sim.sys_open(t, "/mnt/f", true, false, &mut progress) {
            Ok(OpResult::Fd(fd)) => fd,
            other => panic!("open: {other:?}"),
        };
        // 2,048 order-0 pages (one 4 KiB write each: a larger write makes large folios
        // on 6.18, which a reclaim pass frees whole).
        for k in 0..2048u64 {
            let mut progress = 0;
            let w = sim.sys_write(t, fd, 4096, Some(k * 4096), &mut progress);
            assert_eq!(w, Ok(OpResult::Bytes(4096)), "{era:?} write {k}");
        }
        let mut progress = 0;
        let mut synced = false;
        for _ in 0..1000 {
            if sim.sys_fdatasync(t, fd, &mut progress).is_ok() {
                synced = true;
                break;
            }
            common::complete_io(&mut sim);
        }
        assert!(synced, "{era:?}: fdatasync finished");
        sim.lru_add_drain_all();
        let usage = sim.memcgs[1].usage;
        assert!(
            usage >= 2048,
            "{era:?}: the file is charged ({usage} pages)"
        );
        // As if memory.max had been lowered with no reclaim; the charge on CPU 1, whose
        // stock is empty.
        sim.memcgs[1].max = usage - 1000;
        charge(&mut sim, t, 1, 1, 1);
        let a = &sim.memcgs[1];
        // A `max` event per reclaim pass: more than the first pass, the one after the
        // stock drain and the MAX_RECLAIM_RETRIES retries.
        let passes = a.events.max;
        let retries = u64::from(mmsim::mm::memcontrol::MAX_RECLAIM_RETRIES);
        assert!(passes > 2 + retries, "{era:?}: {passes} passes");
        assert_eq!(a.events.oom_kill, 0, "{era:?}: no OOM kill");
        assert!(!sim.tasks[t].oom_killed, "{era:?}");
        assert!(a.usage <= a.max, "{era:?}: {} of {}", a.usage, a.max);
        mmsim::mm::check::check_all(&sim).expect("invariants hold");
    }
}
