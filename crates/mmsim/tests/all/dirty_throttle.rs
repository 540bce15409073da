//! IO-less dirty throttling (`io-less-dirty-throttling`, 3.2; `fs/dirty_throttle.rs`):
//! writers throttled by rate per bdi_writeback, against the simplified throttle of the
//! 2.6.30 era (a writer above vm.dirty_ratio pauses 10 ms at a time).

use crate::common;

use common::{cgroup_report, run_sc, task_report};
use mmsim::kernel::KernelEra;
use mmsim::run::RunReport;
use mmsim::scenario::parse_scenario;
use mmsim::sim::{Features, RunEnd};

/// A 512 MiB machine with a 20 MiB/s disk (`slow`) and a fast one (`fast`), vm.dirty_ratio
/// 10 and vm.dirty_background_ratio 5 (a threshold of ~13,100 pages), and `tasks`.
fn machine(tasks: &str) -> String {
    machine_of("512MiB", tasks)
}

/// `machine` with `mem` of RAM.
fn machine_of(mem: &str, tasks: &str) -> String {
    machine_nodes(1, mem, tasks)
}

/// `machine` of `nodes` nodes of `mem` each (two CPUs per node).
fn machine_nodes(nodes: usize, mem: &str, tasks: &str) -> String {
    format!(
        r#"name = "dirty"
kernel = "6.18"
[machine]
nodes = {nodes}
cpus_per_node = 2
memory_per_node = "{mem}"
[vm]
dirty_ratio = 10
dirty_background_ratio = 5
[[devices]]
name = "slow"
preset = "nvme"
size = "2GiB"
bandwidth = "20MiB/s"
[[devices]]
name = "fast"
preset = "nvme"
size = "2GiB"
bandwidth = "4GiB/s"
[[filesystems]]
mount = "/slow"
type = "blockfs"
device = "slow"
[[filesystems]]
mount = "/fast"
type = "blockfs"
device = "fast"
{tasks}"#
    )
}

/// A dd task writing `size` to `path` once, on `cpu`, from `start`.
fn dd(name: &str, cpu: usize, path: &str, size: &str, start: &str) -> String {
    format!(
        "[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\nprogram = \"dd\"\npath = \"{path}\"\n\
         size = \"{size}\"\nblock_size = \"1MiB\"\niterations = 1\nstart = \"{start}\"\n"
    )
}

fn run(text: &str, io_less: bool) -> RunReport {
    let sc = parse_scenario(text, "dirty.toml", &[]).expect("scenario");
    let mut f: Features = KernelEra::V6_18.features("vanilla").expect("preset");
    assert!(f.set("io-less-dirty-throttling", io_less), "a known rule");
    // Order-0 pages, as every kernel had while the throttle was not IO-less: the simplified
    // throttle pauses once per dirtying call, and 1 MiB writes would be one call per
    // 256-page folio (`large-folios`).
    f.large_folios &= io_less;
    let r = run_sc(&sc, f, false, 50_000_000);
    assert_eq!(r.end, RunEnd::Completed, "{:?}", r.end);
    r
}

/// dd's open-to-close time, s.
fn dd_seconds(r: &RunReport, task: &str) -> f64 {
    task_report(r, task).samples["iteration"][0] as f64 / 1e9
}

/// nr_dirty + nr_writeback at each of the run's samples.
fn dirty_series(r: &RunReport) -> Vec<i64> {
    let col = |name: &str| r.series_columns.iter().position(|c| c == name).unwrap();
    let (d, w) = (col("nr_dirty"), col("nr_writeback"));
    r.series.iter().map(|s| s.values[d] + s.values[w]).collect()
}

/// The largest nr_dirty + nr_writeback of the run's samples.
fn max_dirty(r: &RunReport) -> i64 {
    dirty_series(r).into_iter().max().unwrap()
}

/// The median nr_dirty + nr_writeback of the samples between fractions `from` and `to`
/// of the run.
fn median_dirty(r: &RunReport, from: f64, to: f64) -> i64 {
    let all = dirty_series(r);
    let n = all.len() as f64;
    let mut v = all[(n * from) as usize..(n * to) as usize].to_vec();
    v.sort_unstable();
    v[v.len() / 2]
}

#[test]
fn a_writer_is_held_to_the_disk_bandwidth_below_the_dirty_threshold() {
    // 256 MiB at 20 MiB/s with ~49 MiB allowed dirty: the writer goes at the disk's pace
    // once past the freerun ceiling, and dirty + writeback pages stay below the threshold
    // (the hard limit) — it is throttled from (bg + thresh) / 2 on, not at the threshold.
    let r = run(&machine(&dd("w", 0, "/slow/f", "256MiB", "0s")), true);
    let t = dd_seconds(&r, "w");
    let dirtyable = 512 * 256; // pages, about (free + file LRU)
    let thresh = dirtyable / 10;
    let bg = dirtyable / 20;
    let m = max_dirty(&r);
    // (A writer looks every nr_dirtied_pause pages — 8 while over its limits — and a
    // 1 MiB write dirties its 256-page folio at once, so the count may pass the limit by
    // up to a folio.)
    assert!(m < thresh as i64 + 256, "max dirty {m} vs thresh {thresh}");
    assert!(
        m > (thresh + bg) as i64 / 2,
        "max dirty {m}: never past freerun"
    );
    // While throttled the count is held between the freerun ceiling and the threshold,
    // below the threshold itself (the 2.6.30-era throttle holds it at the threshold).
    let mid = median_dirty(&r, 0.25, 0.5);
    assert!(
        mid < thresh as i64 * 985 / 1000 && mid > (thresh + bg) as i64 / 2,
        "median dirty {mid} vs thresh {thresh}"
    );
    // The time is the data that had to reach the disk before close: 256 MiB less what
    // was left dirty, at 20 MiB/s.
    let left_mib = m as f64 * 4096.0 / (1 << 20) as f64;
    let want = (256.0 - left_mib) / 20.0;
    assert!(
        (t - want).abs() < 0.1 * want,
        "dd took {t:.2} s, the disk's pace gives {want:.2} s"
    );
    // The disk never idles while the writer waits: busy for all but the start.
    let dev = r.devices.iter().find(|d| d.name == "slow").unwrap();
    assert!(
        dev.busy_ns as f64 / 1e9 > 0.95 * (t - 0.5),
        "busy {} s of {t:.2} s",
        dev.busy_ns as f64 / 1e9
    );
}

#[test]
fn a_fast_disks_writer_is_not_held_behind_a_slow_disks_dirty_pages() {
    // The slow disk's writer fills the dirty threshold (~52,000 pages on 2 GiB); the fast
    // disk's writer starts after it. With per-wb throttling the slow wb's share of the
    // threshold follows its share of completed writeout, which the fast wb soon takes, so
    // the slow writer is held to its own share and the fast one runs near its disk's pace;
    // the 2.6.30-era throttle makes the fast writer wait while the global count is over
    // the threshold, which the slow disk drains at 20 MiB/s.
    let text = machine_of(
        "2GiB",
        &format!(
            "{}{}",
            dd("slow", 0, "/slow/f", "600MiB", "0s"),
            dd("fast", 1, "/fast/f", "1GiB", "5s")
        ),
    );
    let on = run(&text, true);
    let off = run(&text, false);
    let (fast_on, fast_off) = (dd_seconds(&on, "fast"), dd_seconds(&off, "fast"));
    assert!(
        fast_on * 3.0 < fast_off,
        "fast writer: {fast_on:.2} s per-wb, {fast_off:.2} s global"
    );
    // The slow writer is held to its disk either way: 600 MiB less the dirty pool.
    let (slow_on, slow_off) = (dd_seconds(&on, "slow"), dd_seconds(&off, "slow"));
    assert!(slow_on > 19.0 && slow_off > 19.0, "{slow_on} {slow_off}");
}

#[test]
fn writers_on_one_disk_share_its_bandwidth() {
    let text = machine(&format!(
        "{}{}",
        dd("a", 0, "/slow/a", "128MiB", "0s"),
        dd("b", 1, "/slow/b", "128MiB", "0s")
    ));
    let r = run(&text, true);
    let (a, b) = (dd_seconds(&r, "a"), dd_seconds(&r, "b"));
    assert!((a - b).abs() < 0.1 * a.max(b), "a {a:.2} s, b {b:.2} s");
    // Together at the disk's pace: 256 MiB less what was left dirty, at 20 MiB/s.
    assert!(a.max(b) > (256.0 - 60.0) / 20.0, "{a} {b}");
}

#[test]
fn a_memory_cgroups_writer_is_held_to_its_own_domain() {
    // A 64 MiB cgroup: its writeback domain's threshold is 10 % of its file pages and
    // headroom (~1,640 pages), far below the global one; its writer is throttled there
    // and its dirty pages stay within the domain's limit.
    let text = machine(&format!(
        "[[cgroups]]\nname = \"box\"\nmemory_max = \"64MiB\"\n{}cgroup = \"box\"\n",
        dd("w", 0, "/slow/f", "128MiB", "0s")
    ));
    let r = run(&text, true);
    let c = cgroup_report(&r, "box");
    assert!(c.dirty_throttled > 0, "never throttled");
    let global = max_dirty(&r);
    assert!(
        global < 64 * 256 / 10 + 256,
        "dirty + writeback reached {global} pages"
    );
    // And still at the disk's pace: 128 MiB at 20 MiB/s, less the small dirty pool.
    let t = dd_seconds(&r, "w");
    assert!(t > 5.5 && t < 7.0, "dd took {t:.2} s");
}

#[test]
fn a_domain_whose_threshold_fell_under_its_hard_limit_still_throttles() {
    // A BGSAVE in an 80 MiB cgroup: the parent's copies shrink the cgroup's headroom, so
    // its writeback domain's threshold falls while the hard limit follows it down slowly;
    // the wb's control line then gets a share (an eighth of the headroom left) above the
    // threshold. (This overflowed the span's subtraction once.)
    // The program's own example (256 MiB of RAM, a 64 MiB heap, a 256 MiB swap on an
    // SSD, 2 snapshots, a write every 20 µs) in an 80 MiB cgroup.
    let example = mmsim::workload::program("fork-snapshot").unwrap().example;
    let text = example
        .replace(
            "[[tasks]]",
            "[[cgroups]]\nname = \"redis\"\nmemory_max = \"80MiB\"\n\n[[tasks]]",
        )
        .replace(
            "name = \"redis\"\ncpu",
            "name = \"redis\"\ncgroup = \"redis\"\ncpu",
        );
    assert!(text.contains("cgroup = \"redis\"") && text.contains("write_interval = \"20us\""));
    let r = run(&text, true);
    assert!(cgroup_report(&r, "redis").dirty_throttled > 0);
    assert_eq!(task_report(&r, "redis").samples["snapshot"].len(), 2);
}

#[test]
fn writes_through_a_shared_mapping_fault_again_after_writeback_and_are_throttled() {
    // 2,000 requests rewriting a 64 MiB range (16,384 pages, more than the ~13,100-page
    // threshold) through a shared mapping, twice over. Writeback write-protects and cleans
    // each page's PTE (folio_mkclean), so the rewrite faults again (page_mkwrite) and the
    // fault ends in balance_dirty_pages: the dirty pages stay at the threshold and every
    // rewritten page is written to disk again.
    let dir = std::env::temp_dir().join(format!("mmsim-dirty-mmap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("w.csv");
    let text: String = (0..2000u64)
        .map(|i| format!("{},host,0,Write,{},65536,100\n", i * 10, (i % 1024) * 65536))
        .collect();
    std::fs::write(&trace, text).unwrap();
    let sc = machine(&format!(
        "[[tasks]]\nname = \"replay\"\nprogram = \"replay\"\ntrace = {:?}\nformat = \"msr\"\n\
         mmap = true\ndir = \"/slow/replay\"\n",
        trace.display().to_string()
    ));
    let r = run(&sc, true);
    assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    let thresh = 512 * 256 / 10;
    let m = max_dirty(&r);
    // A write fault dirties its folio whole (page_mkwrite; the replay's folios reach 256
    // pages), so the count may pass the limit by up to a folio before the fault's
    // balance_dirty_pages holds the writer.
    assert!(m < thresh + 256, "max dirty {m} vs thresh {thresh}");
    // 32,768 page writes. The first pass takes a fault per folio (6.18 maps a readahead
    // folio whole and writable, `map-entire-folio`: at least 16,384 / 32); in the second
    // each page whose folio was written back since faults again, and no more than the
    // threshold can still be dirty, so at least 16,384 - thresh pages were.
    let floor = 16_384 / 32 + 16_384 - thresh;
    assert!(
        r.vmstat["pgfault"] > floor,
        "{} faults, floor {floor}",
        r.vmstat["pgfault"]
    );
    assert!(
        r.vmstat["nr_dirtied"] > 25_000,
        "{} dirtied",
        r.vmstat["nr_dirtied"]
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The most file pages each node held during a dd of 48 MiB from CPU 0 (node 0) of a two-node
/// machine (256 MiB each) to a 20 MiB/s disk, vm.dirty_ratio 10: node 0's dirty limit
/// (10 % of its ~60,000 dirtyable pages) is below the global freerun ceiling (the midpoint
/// of 5 % and 10 % of both nodes'), so the writer fills it before it is throttled.
fn file_pages_per_node(spread: bool) -> [u64; 2] {
    use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    use mmsim::mm::node::LruList;
    let text = machine_nodes(2, "256MiB", &dd("w", 0, "/slow/f", "48MiB", "0s"));
    let sc = parse_scenario(&text, "spread.toml", &[]).expect("scenario");
    let mut f: Features = KernelEra::V6_18.features("vanilla").expect("preset");
    assert!(f.set("spread-dirty-pages", spread), "a known rule");
    let mut sim = mmsim::sim::Sim::new(&sc, f).expect("machine");
    // The most file pages each node held at any point (dd deletes its file at the end).
    let mut most = [0u64; 2];
    let mut chunks = 0;
    loop {
        let end = sim.run(sim.steps + 1);
        for (n, m) in most.iter_mut().enumerate() {
            let held = sim.lruvec_lru_size_hier(ROOT_MEM_CGROUP, n, LruList::InactiveFile)
                + sim.lruvec_lru_size_hier(ROOT_MEM_CGROUP, n, LruList::ActiveFile);
            *m = (*m).max(held);
        }
        chunks += 1;
        if chunks % 8 == 0 {
            mmsim::mm::check::check_all(&sim).expect("the nodes' dirty counts add up");
        }
        if end == RunEnd::Completed {
            return most;
        }
        assert!(chunks < 25_000, "the dd ends");
    }
}

/// `spread-dirty-pages` (3.3): a writer whose local node is over its dirty limit gets its
/// page cache pages from the other node; without the rule every page is local (node 0
/// has room for all of them above its watermarks).
#[test]
fn a_node_over_its_dirty_limit_passes_page_cache_writes_to_the_next_node() {
    let off = file_pages_per_node(false);
    assert!(
        off[0] >= 12_288 && off[1] < 64,
        "all local without the rule: {off:?}"
    );
    let on = file_pages_per_node(true);
    assert!(
        on[1] >= 2_000,
        "the other node takes writes once node 0 is over: {on:?}"
    );
    assert!(on[0] + on[1] >= 12_288, "{on:?}");
}
