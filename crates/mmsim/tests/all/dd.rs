//! Integration tests: the dd scenarios end to end at small scale, determinism, and the
//! accessed-init effect (seed 000).

use crate::common;

use common::{load_builtin, run_sc};
use mmsim::run::RunReport;
use mmsim::sim::{Features, RunEnd};

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
