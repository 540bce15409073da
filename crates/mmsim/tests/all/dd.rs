//! Integration tests: the dd scenarios end to end at small scale, determinism, and the
//! accessed-init effect (seed 000).

use crate::common;

use common::{load_builtin, run_sc};
use mmsim::run::RunReport;
use mmsim::sim::{Features, RunEnd, SERIES_MIN_SAMPLES};

fn run(name: &str, features: Features, sets: &[&str]) -> RunReport {
    run_sc(&load_builtin(name, sets), features, false, 50_000_000)
}

fn share(r: &RunReport, f: &str) -> f64 {
    r.profile_top
        .iter()
        .find(|p| p.function == f)
        .map(|p| p.percent)
        .unwrap_or(0.0)
}

const SMALL: &[&str] = &["machine.memory_per_node=256MiB", "tasks.dd.iterations=3"];

#[test]
fn dd_tmpfs_completes_and_frees_every_page() {
    let r = run("dd-tmpfs", Features::patched(), SMALL);
    assert_eq!(r.end, RunEnd::Completed);
    assert!(r.oracle_violations.is_empty());
    let total_pages = 256 * 256;
    // Everything but the pages still held by per-CPU pagevecs at exit is free again.
    let free = r.vmstat["nr_free_pages"];
    assert!(
        free >= total_pages - 14 && free <= total_pages,
        "free {}",
        free
    );
    assert_eq!(r.vmstat["nr_file_pages"], 0);
    let dd = r.tasks.iter().find(|t| t.name == "dd").unwrap();
    assert_eq!(dd.samples["iteration"].len(), 3);
    assert_eq!(dd.write_bytes, 3 * ((256u64 << 20) / 10));
    // tmpfs's ->write_end is shmem_write_end (shmem_aops), not ramfs's simple_write_end.
    assert!(r.profile.get("shmem_write_end").is_some_and(|ns| *ns > 0));
    assert!(!r.profile.contains_key("simple_write_end"));
}

#[test]
fn dd_blockfs_write_end_is_block_write_end() {
    let r = run("dd-blockfs", Features::patched(), SMALL);
    assert!(r.profile.get("block_write_end").is_some_and(|ns| *ns > 0));
    assert!(!r.profile.contains_key("shmem_write_end"));
}

#[test]
fn accessed_init_cuts_mark_page_accessed_share() {
    for sc in ["dd-tmpfs", "dd-blockfs"] {
        let v = run(sc, Features::vanilla(), SMALL);
        let p = run(sc, Features::patched(), SMALL);
        let before = share(&v, "mark_page_accessed");
        let after = share(&p, "mark_page_accessed") + share(&p, "init_page_accessed");
        assert!(before > 0.0, "{}: vanilla must call mark_page_accessed", sc);
        assert!(
            after <= before * 0.2,
            "{}: share {} -> {} is not an 80% fall",
            sc,
            before,
            after
        );
        assert!(
            p.elapsed_ns <= v.elapsed_ns,
            "{}: patched slower ({} > {})",
            sc,
            p.elapsed_ns,
            v.elapsed_ns
        );
        assert_eq!(
            share(&p, "mark_page_accessed"),
            0.0,
            "{}: write path still marks",
            sc
        );
    }
}

#[test]
fn identical_inputs_give_identical_json() {
    let a = serde_json::to_string(&run("dd-blockfs", Features::patched(), SMALL)).unwrap();
    let b = serde_json::to_string(&run("dd-blockfs", Features::patched(), SMALL)).unwrap();
    assert_eq!(a, b);
}

#[test]
fn blockfs_sync_writes_everything_back() {
    let r = run(
        "dd-blockfs",
        Features::patched(),
        &[
            "machine.memory_per_node=256MiB",
            "tasks.dd.iterations=2",
            "tasks.dd.sync=true",
        ],
    );
    assert_eq!(r.end, RunEnd::Completed);
    let pages_per_file = (256u64 << 20) / 10 / 4096 + 1;
    // fdatasync wrote every page of both files before the unlink.
    assert_eq!(r.vmstat["nr_written"] as u64, 2 * pages_per_file);
    assert_eq!(r.vmstat["pgpgout"] as u64, 2 * pages_per_file * 4);
    assert_eq!(r.vmstat["nr_dirty"], 0);
    assert_eq!(r.vmstat["nr_writeback"], 0);
    // A synchronous dd waits for the device: it is much slower than the async one.
    let a = run(
        "dd-blockfs",
        Features::patched(),
        &["machine.memory_per_node=256MiB", "tasks.dd.iterations=2"],
    );
    assert!(r.elapsed_ns > 2 * a.elapsed_ns);
}

#[test]
fn check_mode_runs_clean() {
    let r = run(
        "dd-blockfs",
        Features::vanilla(),
        &[
            "machine.memory_per_node=32MiB",
            "tasks.dd.iterations=2",
            "tasks.dd.sync=true",
        ],
    );
    assert_eq!(r.end, RunEnd::Completed);
    let sc = load_builtin("dd-tmpfs", &["machine.memory_per_node=32MiB"]);
    let r = run_sc(&sc, Features::vanilla(), true, 10_000_000);
    assert_eq!(r.end, RunEnd::Completed);
}

/// The values of series column `name`, one per sample.
fn column(r: &RunReport, name: &str) -> Vec<i64> {
    let c = r.series_columns.iter().position(|n| n == name).unwrap();
    r.series.iter().map(|s| s.values[c]).collect()
}

#[test]
fn a_short_run_is_sampled_finely_enough_to_show_its_phases() {
    // dd-tmpfs: five iterations in 0.31 s of virtual time, sample_interval 100 ms (three
    // samples and the end before the series adapted).
    let r = run("dd-tmpfs", Features::patched(), &[]);
    let n = r.series.len() - 1; // the last sample is the end of the run
    assert!(
        (SERIES_MIN_SAMPLES..=2 * SERIES_MIN_SAMPLES).contains(&n),
        "{n} samples"
    );
    let step = r.series[1].t_ns - r.series[0].t_ns;
    assert!(r.series[..n]
        .windows(2)
        .all(|w| w[1].t_ns - w[0].t_ns == step));
    // Each iteration fills the tmpfs file (on the anon LRU in 3.15) and deletes it: five
    // teeth.
    let anon = column(&r, "nr_inactive_anon");
    let teeth = anon.windows(2).filter(|w| w[0] > 0 && w[1] == 0).count();
    assert_eq!(teeth, 5, "{anon:?}");
}

#[test]
fn a_long_run_is_sampled_at_its_interval_and_samples_do_not_depend_on_the_step() {
    // 0.31 s is about 3,100 intervals of 100 us: one sample every interval, as before the
    // series adapted.
    let fine = run(
        "dd-tmpfs",
        Features::patched(),
        &["sample_interval=\"100us\""],
    );
    let n = fine.series.len() - 1;
    assert!(n > 3000, "{n}");
    assert!(fine.series[..n]
        .iter()
        .enumerate()
        .all(|(i, s)| s.t_ns == i as u64 * 100_000));
    // A sample is the state when the engine first passes its time, whatever the step: the
    // default run's samples at the times both series have hold the same values.
    let coarse = run("dd-tmpfs", Features::patched(), &[]);
    assert_eq!(fine.event_hash, coarse.event_hash);
    let mut common = 0;
    for s in &coarse.series {
        if let Some(f) = fine.series.iter().find(|f| f.t_ns == s.t_ns) {
            assert_eq!(f.values, s.values, "at {} ns", s.t_ns);
            common += 1;
        }
    }
    assert!(common >= 10, "{common} common sampling times");
}
