//! Page-fault accounting of the 6.x eras: pgfault counted once per completed fault
//! (`pgfault-on-completion`, 6.4) and a retried fault counted major
//! (`fault-major-if-retried`, 5.9), against the older rules, on a mapped sequential read.

use crate::common;

use common::{file_toml, machine_toml, run_sc, small_builtins};
use mmsim::kernel::KernelEra;
use mmsim::scenario::parse_scenario;

/// One task reading an 8 MiB file through a shared mapping, on a device whose
/// read_ahead_kb is `ra_kb`.
fn mapped_read(ra_kb: u64) -> mmsim::scenario::Scenario {
    let text = machine_toml("mapped-read", 1, "64MiB", None, "1GiB", "/data")
        + &file_toml("/data/f", 8 << 20, true)
        + "\n[[tasks]]\nname = \"mapper\"\ncpu = 0\nprogram = \"mmap-read\"\npath = \"/data/f\"\n";
    let ra = format!("devices.sda.read_ahead_kb={ra_kb}");
    parse_scenario(&text, "mapped-read", &[ra]).expect("scenario")
}

/// (pgfault, pgmajfault, the task's majflt, its minflt) of `sc` on 6.18 with `rule` set
/// to `on`.
fn faults(sc: &mmsim::scenario::Scenario, rule: &str, on: bool) -> (i64, i64, u64, u64) {
    let mut f = KernelEra::V6_18.features("patched").expect("preset");
    assert!(f.set(rule, on), "{rule} is a feature");
    let r = run_sc(sc, f, false, u64::MAX);
    assert!(r.complete, "{:?}", r.end);
    let t = r.tasks.iter().find(|t| t.name == "mapper").expect("task");
    (
        r.vmstat["pgfault"],
        r.vmstat["pgmajfault"],
        t.majflt,
        t.minflt,
    )
}

#[test]
fn pgfault_counts_a_retried_fault_once_from_6_4() {
    // No readahead: every page is a major fault that sleeps on its read and completes on
    // the retry. 6.4 counts it once; before, each of the two attempts.
    let sc = mapped_read(0);
    let pages = 8 * 256;
    let (pgfault, pgmajfault, majflt, minflt) = faults(&sc, "pgfault-on-completion", true);
    assert_eq!(pgmajfault, pages, "every page missed once");
    assert_eq!(pgfault, pgmajfault, "one pgfault per fault");
    assert_eq!((majflt, minflt), (pages as u64, 0));
    let (pgfault_old, pgmajfault_old, majflt_old, _) = faults(&sc, "pgfault-on-completion", false);
    assert_eq!(pgmajfault_old, pgmajfault);
    assert_eq!(pgfault_old, 2 * pgmajfault, "the attempt and its retry");
    assert_eq!(majflt_old, majflt, "the task's counts are not pgfault's");
}

#[test]
fn a_fault_that_waited_for_readahead_is_major_from_5_9() {
    // With readahead, faults meet pages still being read by the async window ahead: they
    // find the page cached but locked, sleep and retry. From 5.9 such a fault is major
    // (FAULT_FLAG_TRIED); before, major only if it found the page missing — pgmajfault's
    // count, which the rule does not change.
    let sc = mapped_read(128);
    let (_, pgmajfault, majflt, minflt) = faults(&sc, "fault-major-if-retried", true);
    let (_, pgmajfault_old, majflt_old, minflt_old) = faults(&sc, "fault-major-if-retried", false);
    assert_eq!(pgmajfault, pgmajfault_old);
    assert_eq!(
        majflt_old as i64, pgmajfault_old,
        "old rule: major = found missing"
    );
    assert!(
        majflt > majflt_old,
        "retried faults count major: {majflt} vs {majflt_old}"
    );
    assert_eq!(majflt + minflt, majflt_old + minflt_old, "the same faults");
}

/// On 6.18 every counted pgfault is a fault some task counts as major or minor (no
/// built-in faults past the end of a file), whatever sleeps the faults took — on a page
/// lock (a retry), in an allocation's reclaim, in balance_dirty_pages — and before 6.4
/// pgfault counts at least as many (each retry's attempt too). Every built-in at small
/// scale, cut at a step limit.
#[test]
fn pgfault_is_the_tasks_faults_on_6_18() {
    for (name, sc) in small_builtins() {
        for era in [KernelEra::V6_18, KernelEra::V4_2] {
            if era < KernelEra::V6_1 && sc.policy.is_some() {
                continue; // an MGLRU built-in has no 4.2 run
            }
            let f = mmsim::kernel::resolve_features(Some(era), None, "vanilla", &sc.features, None)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let r = run_sc(&sc, f, false, 40_000);
            let tasks: u64 = r.tasks.iter().map(|t| t.majflt + t.minflt).sum();
            let pgfault = r.vmstat["pgfault"] as u64;
            if era == KernelEra::V6_18 {
                assert_eq!(pgfault, tasks, "{name} on 6.18");
            } else {
                assert!(pgfault >= tasks, "{name} on 4.2: {pgfault} < {tasks}");
            }
        }
    }
}

/// A fault that fails for want of memory (VM_FAULT_OOM) is a failed fault: pgfault counts
/// it in every era, the task's maj_flt / min_flt do not. One task in a 16 MiB memory
/// cgroup writes 64 MiB of anonymous memory without swap: its charge invokes the memcg
/// OOM killer, which kills the task itself, and that fault fails; the task exits on its
/// return to user space. No other fault sleeps on a page lock, so pgfault is the task's
/// faults plus the failed one, on 6.18 and on 4.2.
#[test]
fn a_fault_that_fails_with_oom_counts_in_pgfault_only() {
    let text = machine_toml("memcg-oom", 1, "256MiB", None, "1GiB", "/data")
        + "\n[[cgroups]]\nname = \"box\"\nmemory_max = \"16MiB\"\n\
           \n[[tasks]]\nname = \"hog\"\ncpu = 0\ncgroup = \"box\"\nprogram = \"anon\"\nsize = \"64MiB\"\n";
    let sc = parse_scenario(&text, "memcg-oom", &[]).expect("scenario");
    for era in [KernelEra::V6_18, KernelEra::V4_2] {
        let r = run_sc(
            &sc,
            era.features("vanilla").expect("preset"),
            true,
            u64::MAX,
        );
        assert!(r.complete, "{era:?}: {:?}", r.end);
        assert_eq!(common::oom_killed(&r), ["hog"], "{era:?}: {:?}", r.oom);
        let t = common::task_report(&r, "hog");
        assert!(t.minflt > 1000, "{era:?}: the task faulted its pages in");
        assert_eq!(
            r.vmstat["pgfault"] as u64,
            t.majflt + t.minflt + 1,
            "{era:?}: the task's faults and the failed one"
        );
        let cg = common::cgroup_report(&r, "box");
        assert_eq!(
            cg.stat["pgfault"] as u64,
            t.majflt + t.minflt + 1,
            "{era:?}: memory.stat"
        );
    }
}
