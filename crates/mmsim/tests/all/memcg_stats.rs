//! `memcg-stats-ratelimited` (v6.12, "memcg: use ratelimited stats flush in the
//! reclaim"): classic reclaim reads the memcg statistics as the periodic flush left them
//! (flush_memcg_stats_dwork, every 2 s from a point of the cycle drawn from the seed), not
//! the current counters.

use crate::common;

use common::build_sim_on;
use mmsim::kernel::KernelEra;
use mmsim::mm::node::LruList;
use mmsim::sim::RunEnd;

/// FLUSH_TIME: 2 s, in ps.
const FLUSH_PS: u64 = 2_000_000_000_000;

/// A 16 MiB cgroup reading a 64 MiB file four times, 2 s apart: its LRU lists change while
/// it reads.
fn reader_in_a_cgroup() -> String {
    common::machine_toml("stats", 2, "256MiB", None, "1GiB", "/data")
        + &common::file_toml("/data/f", 64 << 20, true)
        + "\n[[cgroups]]\nname = \"box\"\nmemory_max = \"16MiB\"\n\
           [[tasks]]\nname = \"reader\"\ncpu = 0\ncgroup = \"box\"\nprogram = \"read\"\n\
           path = \"/data/f\"\nblock_size = \"64KiB\"\npasses = 4\nthink = \"2s\"\n"
}

/// The box cgroup's (hierarchical) file LRU sizes: (flushed, current).
fn file_lists(sim: &mmsim::sim::Sim) -> ([u64; 2], [u64; 2]) {
    let m = sim
        .memcgs
        .iter()
        .position(|c| c.name == "box")
        .expect("the box cgroup") as u16;
    let f = sim.lruvec(m, 0).flushed.lru;
    let now =
        [LruList::InactiveFile, LruList::ActiveFile].map(|l| sim.lruvec_lru_size_hier(m, 0, l));
    (
        [
            f[LruList::InactiveFile as usize],
            f[LruList::ActiveFile as usize],
        ],
        now,
    )
}

#[test]
fn the_flush_phase_is_drawn_from_the_seed_within_the_cycle() {
    use mmsim::mm::memcontrol::memcg_stats_flush_phase;
    let phases: Vec<u64> = (0..64).map(memcg_stats_flush_phase).collect();
    assert!(phases.iter().all(|&p| p < FLUSH_PS));
    // Spread over the cycle: each half holds some of 64 seeds' phases.
    let early = phases.iter().filter(|&&p| p < FLUSH_PS / 2).count();
    assert!(
        (16..=48).contains(&early),
        "{early} of 64 in the first second"
    );
    assert_eq!(
        memcg_stats_flush_phase(1),
        phases[1],
        "a function of the seed"
    );
}

#[test]
fn reclaim_reads_statistics_that_change_only_at_the_two_second_flushes() {
    // Order-0 page-cache pages: with `large-folios` the lists move in folios and two
    // flushes can find the same sizes.
    let mut sim = build_sim_on(
        &reader_in_a_cgroup(),
        "stats.toml",
        KernelEra::V6_18,
        "-large-folios",
    );
    // Flush periods: 0 before the first periodic flush (at the seed's phase), then one
    // per FLUSH_TIME.
    let phase = sim.memcg_stats_flush_phase();
    assert!(phase < FLUSH_PS);
    let period = |c: u64| {
        if c < phase {
            0
        } else {
            (c - phase) / FLUSH_PS + 1
        }
    };
    let (mut changes, mut stale_seen) = (0, false);
    let mut last = file_lists(&sim).0;
    let mut steps = 0;
    loop {
        let before = sim.max_clock();
        steps += 20;
        let end = sim.run(steps);
        let after = sim.max_clock();
        let (flushed, now) = file_lists(&sim);
        if flushed != last {
            // A flush ran: only where the clock crossed a flush time.
            assert!(
                period(after) > period(before) || before == 0,
                "flushed at {after} ps, within the period of {before} ps (phase {phase})"
            );
            changes += 1;
            last = flushed;
        }
        stale_seen |= flushed != now && now[0] + now[1] > 0;
        if end != RunEnd::StepLimit {
            assert_eq!(end, RunEnd::Completed);
            break;
        }
    }
    let periods = period(sim.max_clock());
    assert!(periods >= 3, "the run spans {periods} flush periods");
    assert!(changes >= 2 && changes <= periods + 1, "{changes} flushes");
    assert!(stale_seen, "between flushes reclaim's view lags the lists");
    // Without the rule nothing is flushed: the counters stay at zero.
    let mut off = build_sim_on(
        &reader_in_a_cgroup(),
        "stats.toml",
        KernelEra::V6_18,
        "-memcg-stats-ratelimited",
    );
    assert_eq!(off.run(u64::MAX), RunEnd::Completed);
    assert_eq!(file_lists(&off).0, [0, 0]);
}

/// The real-kernel comparison of docs/replay.md at a quarter of its size: random 4 KiB
/// reads of a 64 MiB file in a 16 MiB cgroup, readahead off. Between flushes the refault
/// count prepare_scan_control reads equals what snapshot_refaults stored, so only the
/// (stale) inactive:active check starts a deactivation: fewer deactivations, a larger
/// active list, and more refaults found within it (on the 6.18.44 VM, 1.6 times the
/// activations the current counters give).
#[test]
fn stale_refault_counts_deactivate_less_and_activate_more_refaults() {
    let run = |features: &str| {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("memcg-stats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("uniform.csv");
        let mut x: u64 = 7;
        let mut s = String::new();
        for i in 0..60_000u64 {
            // xorshift64: a fixed pseudo-random page of the 16,384.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s += &format!("{},hm,0,Read,{},4096,10\n", i * 1000, (x % 16_384) * 4096);
        }
        std::fs::write(&trace, s).unwrap();
        let mut argv = vec![
            trace.to_str().unwrap(),
            "--format",
            "msr",
            "--memory-max",
            "16MiB",
            "--readahead",
            "off",
        ];
        let f = format!("--features={features}");
        if !features.is_empty() {
            argv.push(&f);
        }
        let a = mmsim::api::replay_args(&argv).expect("options");
        let r = mmsim::api::replay(&a).expect("run");
        assert!(r.complete, "{:?}", r.end);
        assert!(r.elapsed_ns > 3 * FLUSH_PS / 1000 / 2, "spans flushes");
        let st = &common::cgroup_report(&r, "replay").stat;
        (st["workingset_activate_file"], st["pgdeactivate"])
    };
    let (act_flushed, deact_flushed) = run("");
    let (act_now, deact_now) = run("-memcg-stats-ratelimited");
    eprintln!(
        "activations {act_flushed} vs {act_now}, deactivations {deact_flushed} vs {deact_now}"
    );
    assert!(act_flushed > act_now, "{act_flushed} vs {act_now}");
    assert!(deact_flushed < deact_now, "{deact_flushed} vs {deact_now}");
}

/// The shadow-node shrinker's limit counts the cgroup's LRU pages as last flushed
/// (count_shadow_nodes' flush is ratelimited too): before a run's first periodic flush it
/// sees none, allows no shadow-only node, and the second pass over a mapped file finds no
/// shadow to refault from. Linux 6.18.44 did the same with a 256 MiB file mapped twice in a
/// 64 MiB cgroup: 1,744–1,747 nodes reclaimed and no refault in two runs, 757 nodes and
/// 17,083 refaults in one whose first flush came mid-run (docs/kernel-eras.md).
#[test]
fn before_the_first_flush_the_shadow_shrinker_sees_an_empty_cgroup() {
    let text = common::machine_toml("shadows", 2, "256MiB", None, "1GiB", "/data")
        + &common::file_toml("/data/f", 64 << 20, true)
        + "\n[[cgroups]]\nname = \"box\"\nmemory_max = \"16MiB\"\n\
           [[tasks]]\nname = \"reader\"\ncpu = 0\ncgroup = \"box\"\nprogram = \"mmap-read\"\n\
           path = \"/data/f\"\npasses = 2\n";
    let run = |features: &str| {
        let mut sim = build_sim_on(&text, "shadows.toml", KernelEra::V6_18, features);
        assert_eq!(sim.run(u64::MAX), RunEnd::Completed);
        let v = |i| sim.vmstat.get(i);
        use mmsim::mm::vmstat::VmItem;
        let r = (
            v(VmItem::WorkingsetRefaultFile),
            v(VmItem::WorkingsetNodereclaim),
        );
        (r, sim.max_clock(), sim.memcg_stats_flush_phase())
    };
    let ((refaults, reclaimed), end, phase) = run("");
    assert!(
        end < phase,
        "the run ({end} ps) ends before the first flush ({phase} ps)"
    );
    let ((refaults_now, reclaimed_now), ..) = run("-memcg-stats-ratelimited");
    // With current counts the limit (LRU pages / 8 nodes) holds every shadow of the file's
    // 256 leaves: the whole second pass refaults.
    assert_eq!(reclaimed_now, 0);
    assert_eq!(refaults_now, 16_384);
    assert!(reclaimed > 0, "no shadow node reclaimed");
    assert!(refaults < refaults_now / 2, "{refaults} refaults");
}

/// From v5.9 (`pgrefill-global-only`, "mm: vmscan: consistent update to pgrefill")
/// /proc/vmstat's pgrefill counts global reclaim's active-list scans only: a cgroup's limit
/// reclaim counts them in its memory.stat alone (Linux 6.18.44 shows a global 0 beside a
/// cgroup's thousands of deactivations). Before, both counted them.
#[test]
fn pgrefill_counts_a_cgroups_reclaim_only_in_its_memory_stat_from_v5_9() {
    for rule in [true, false] {
        let mut f = KernelEra::V6_18.features("patched").expect("preset");
        f.pgrefill_global_only = rule;
        let r = crate::vm_sysctl::anon_file_memcg(&[], f);
        let memcg = common::cgroup_report(&r, "box").stat["pgrefill"];
        assert!(
            memcg > 0,
            "rule {rule}: the cgroup's reclaim scanned its active lists"
        );
        let global = r.vmstat.get("pgrefill").copied().unwrap_or(0);
        assert_eq!(global, if rule { 0 } else { memcg }, "rule {rule}");
    }
}
