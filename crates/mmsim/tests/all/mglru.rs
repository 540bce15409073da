//! The multi-generational LRU (issue 12): generation bookkeeping, tiers from accesses
//! through file descriptors, the page-table-walk aging, eviction order, the PID controller,
//! workingset refaults, the policy switch and its errors, determinism, and a property test
//! of random workloads under the invariant checker with both policies.

use crate::common;

use common::{machine_toml, mm_of, mmap_at, run_on, run_sc, touch_pages, UnitMachine};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::check_all;
use mmsim::mm::lru_gen::{
    folio_lru_gen, folio_lru_refs, lru_gen_from_seq, lru_tier_from_refs, positive_ctrl_err,
};
use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
use mmsim::mm::memory::pte;
use mmsim::mm::page::{pg, Pfn};
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::policy::ReclaimPolicy;
use mmsim::mm::radix_tree::Entry;
use mmsim::mm::vmscan::ScanControl;
use mmsim::scenario::parse_scenario;
use mmsim::sim::{Features, RunEnd};
use mmsim::workload::OpResult;
use proptest::prelude::*;

fn mglru_features_on(era: KernelEra) -> Features {
    let mut f = era.features("patched").expect("preset");
    f.policy = Some(ReclaimPolicy::Mglru);
    f
}

/// A 64 MiB machine with swap, MGLRU, and a task `t`.
fn unit() -> UnitMachine {
    unit_on(KernelEra::V6_18)
}

/// `unit` on `era` (6.1 or later).
fn unit_on(era: KernelEra) -> UnitMachine {
    // Root keys precede the tables.
    let text = format!("kernel = \"{}\"\npolicy = \"mglru\"\n", era)
        + &machine_toml("mglru-unit", 2, "64MiB", Some("64MiB"), "1GiB", "/mnt")
        + "\n[[tasks]]\nname = \"t\"\ncpu = 0\nprogram = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n";
    let m = UnitMachine::new(&text, mglru_features_on(era));
    assert_eq!(m.sim.policy, ReclaimPolicy::Mglru);
    m
}

fn open(m: &mut UnitMachine, path: &str) -> u32 {
    let mut progress = 0;
    let fd = match m.sim.sys_open(m.tid, path, true, false, &mut progress) {
        Ok(OpResult::Fd(fd)) => fd,
        other => panic!("open {path}: {other:?}"),
    };
    m.sim.tasks[m.tid].fds[fd as usize].unwrap().ino
}

/// A clean page-cache page of `ino` at `index`, on the LRU (added outside a fault).
fn cached(m: &mut UnitMachine, ino: u32, index: u64) -> Pfn {
    let pfn = m
        .sim
        .pagecache_get_page(ino, index, mmsim::mm::filemap::fgp::CREAT, Gfp::KERNEL)
        .expect("no wait")
        .expect("page created");
    m.sim.unlock_page(pfn);
    m.sim.put_page(pfn);
    m.sim.lru_add_drain();
    pfn
}

fn gen_of(m: &UnitMachine, pfn: Pfn) -> Option<usize> {
    folio_lru_gen(m.sim.mem[pfn as usize].flags)
}

/// Map `n` anonymous pages as task `t` and write each once (faults); (mm, first virtual
/// page, frames).
fn written_anon_pages(m: &mut UnitMachine, n: u64) -> (u32, u64, Vec<Pfn>) {
    let tid = m.tid;
    run_on(&mut m.sim, 0, tid);
    let addr = mmap_at(&mut m.sim, tid, None, n * 4096, 0, 3, false);
    touch_pages(&mut m.sim, 0, tid, addr, n, true).expect("touched");
    m.sim.lru_add_drain();
    let mm = mm_of(&m.sim, tid);
    let vpn0 = addr >> 12;
    let pfns = (0..n)
        .map(|i| pte::pfn(m.sim.mm(mm).pgtable.get(vpn0 + i)))
        .collect();
    (mm, vpn0, pfns)
}

#[test]
fn tiers_follow_accesses_through_file_descriptors() {
    assert_eq!(lru_tier_from_refs(0, false), 0);
    assert_eq!(lru_tier_from_refs(1, false), 0);
    assert_eq!(lru_tier_from_refs(2, false), 1);
    assert_eq!(lru_tier_from_refs(3, false), 2);
    assert_eq!(lru_tier_from_refs(4, false), 2);
    assert_eq!(lru_tier_from_refs(1, true), 3);

    let mut m = unit();
    let ino = open(&mut m, "/mnt/f");
    let pfn = cached(&mut m, ino, 0);
    // A cold file page read outside a fault lands in the oldest generation.
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0);
    assert_eq!(gen_of(&m, pfn), Some(lru_gen_from_seq(g.min_seq[1])));
    let tier = |m: &UnitMachine| {
        let f = m.sim.mem[pfn as usize].flags;
        (
            folio_lru_refs(f),
            lru_tier_from_refs(folio_lru_refs(f), f & pg::WORKINGSET != 0),
        )
    };
    assert_eq!(tier(&m), (0, 0));
    let want = [(1, 0), (2, 1), (3, 2), (4, 2)];
    for w in want {
        m.sim.mark_page_accessed(pfn);
        assert_eq!(tier(&m), w);
    }
    m.sim.mark_page_accessed(pfn);
    assert!(
        m.sim.mem[pfn as usize].test(pg::WORKINGSET),
        "fifth access: PG_workingset"
    );
    assert_eq!(tier(&m).1, 3);
    // Accesses move tiers, never lists.
    assert_eq!(gen_of(&m, pfn), Some(lru_gen_from_seq(0)));
    m.check();
}

#[test]
fn the_aging_promotes_folios_with_young_ptes_and_not_old_ones() {
    let mut m = unit();
    let tid = m.tid;
    let (mm, vpn0, pfns) = written_anon_pages(&mut m, 64);
    let max0 = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
    // Faulted in: PG_active at add → max_seq − 1, without PG_workingset.
    for &p in &pfns {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(max0 - 1)));
    }
    // The second half is not accessed again: its PTEs are old.
    let clear_young = |m: &mut UnitMachine, range: std::ops::Range<u64>| {
        for i in range {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() &= !pte::YOUNG;
        }
    };
    let set_young = |m: &mut UnitMachine, range: std::ops::Range<u64>| {
        for i in range {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() |= pte::YOUNG;
        }
    };
    clear_young(&mut m, 32..64);
    assert!(m.sim.try_to_inc_max_seq(0, max0, 60, false));
    // First sighting of a young PTE: PG_referenced only, no promotion yet (second chance).
    for (i, &p) in pfns.iter().enumerate() {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(max0 - 1)), "page {i}");
        assert_eq!(
            m.sim.mem[p as usize].test(pg::REFERENCED),
            i < 32,
            "page {i}"
        );
    }
    // Accessed again, then aged again: the young ones move to the new max_seq.
    set_young(&mut m, 0..32);
    run_on(&mut m.sim, 0, tid);
    let max1 = max0 + 1;
    assert_eq!(m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq, max1);
    assert!(m.sim.try_to_inc_max_seq(0, max1, 60, false));
    for (i, &p) in pfns.iter().enumerate() {
        let want = if i < 32 { max1 } else { max0 - 1 };
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(want)), "page {i}");
        assert_eq!(m.sim.mem[p as usize].test(pg::WORKINGSET), i < 32);
        // The aging cleared every young bit it used, with no TLB flush.
        assert_eq!(m.sim.mm(mm).pgtable.get(vpn0 + i as u64) & pte::YOUNG, 0);
    }
    let stats = m.sim.lru_gen_view()[0].mm_walk;
    assert_eq!(
        stats.leaf_young, 64,
        "32 young PTEs in each of the two walks"
    );
    assert!(stats.leaf_old >= 64);
    m.sim.sync_accounting();
    assert!(m.sim.profile.get(mmsim::machine::profile::KFunc::WalkMm) > 0);
    m.check();
}

/// 6.1's tiers (before 6.14's `mglru-workingset-rework`): accesses through file
/// descriptors set PG_referenced, then PG_workingset, then count LRU_REFS; refs are
/// LRU_REFS + PG_workingset and the tier order_base_2(refs + 1).
#[test]
fn on_6_1_tiers_count_workingset_as_the_second_access() {
    use mmsim::mm::lru_gen_v6_1::{folio_lru_refs_v6_1, lru_tier_from_refs_v6_1};
    let mut m = unit_on(KernelEra::V6_1);
    assert!(!m.sim.features.mglru_workingset_rework);
    let ino = open(&mut m, "/mnt/f");
    let pfn = cached(&mut m, ino, 0);
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0);
    assert_eq!(gen_of(&m, pfn), Some(lru_gen_from_seq(g.min_seq[1])));
    let state = |m: &UnitMachine| {
        let f = m.sim.mem[pfn as usize].flags;
        let refs = folio_lru_refs_v6_1(f);
        (
            f & pg::REFERENCED != 0,
            f & pg::WORKINGSET != 0,
            refs,
            lru_tier_from_refs_v6_1(refs),
        )
    };
    let want = [
        (true, false, 0, 0),
        (true, true, 1, 1),
        (true, true, 2, 2),
        (true, true, 3, 2),
        (true, true, 4, 3),
        (true, true, 4, 3),
    ];
    for w in want {
        m.sim.mark_page_accessed(pfn);
        assert_eq!(state(&m), w);
    }
    m.check();
}

/// 6.1 puts a faulted-in folio in the youngest generation and promotes a folio at the
/// aging's first sighting of a young PTE (clearing its refs flags); 6.14 on puts it in
/// max_seq − 1 and only marks it PG_referenced at a first sighting (the test above).
#[test]
fn on_6_1_a_fault_lands_in_max_seq_and_one_young_pte_promotes() {
    let mut m = unit_on(KernelEra::V6_1);
    let tid = m.tid;
    let (mm, vpn0, pfns) = written_anon_pages(&mut m, 64);
    let max0 = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
    for &p in &pfns {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(max0)));
    }
    // A first aging sees only the second half young (they already are in max_seq, so
    // they stay; the PTE table joins the Bloom filter); then the first half is accessed.
    for i in 0..32 {
        *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() &= !pte::YOUNG;
    }
    assert!(m.sim.try_to_inc_max_seq(0, max0, 60, false));
    for &p in &pfns {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(max0)));
    }
    for i in 0..32 {
        *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() |= pte::YOUNG;
    }
    run_on(&mut m.sim, 0, tid);
    let max1 = max0 + 1;
    assert!(m.sim.try_to_inc_max_seq(0, max1, 60, false));
    // One sighting promoted them (6.14 would only have set PG_referenced).
    for (i, &p) in pfns.iter().enumerate() {
        let want = if i < 32 { max1 } else { max0 };
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(want)), "page {i}");
        let f = m.sim.mem[p as usize].flags;
        assert_eq!(f & (pg::REFERENCED | pg::WORKINGSET), 0, "page {i}");
    }
    m.check();
}

/// 6.1's workingset (lru_gen_eviction / lru_gen_refault before 6.14): the shadow keeps
/// min_seq and max(refs − 1, 0) with PG_workingset for refs > 0. A refault counts in its
/// tier and as workingset_activate, even outside a fault, only while the evicted
/// generation is still the oldest; with the most refs (4) it gets PG_workingset
/// (workingset_restore).
/// 6.1's lru_gen_refault counts a refault (in its tier and as workingset_refault) only
/// while the generation it was evicted from is the oldest, and never as
/// workingset_activate; from 6.5 (`mglru-refault-accounting`) every refault counts as
/// workingset_refault and one from the oldest generation as workingset_activate.
#[test]
fn on_6_1_a_refault_counts_only_while_its_generation_is_the_oldest() {
    use mmsim::mm::vmstat::VmItem;
    for fixed in [false, true] {
        let mut m = unit_on(KernelEra::V6_1);
        m.sim.features.mglru_refault_accounting = fixed;
        let ino = open(&mut m, "/mnt/f");
        let a = cached(&mut m, ino, 0);
        let b = cached(&mut m, ino, 1);
        let lv = m.sim.page_lruvec_idx(a);
        // `a` with PG_referenced, PG_workingset and three LRU_REFS: refs 4, tier 3.
        for _ in 0..5 {
            m.sim.mark_page_accessed(a);
        }
        let shadow_hot = m.sim.lru_gen_eviction(a);
        let shadow_cold = m.sim.lru_gen_eviction(b);
        let counts = |m: &UnitMachine| {
            [
                VmItem::WorkingsetRefaultFile,
                VmItem::WorkingsetActivateFile,
                VmItem::WorkingsetRestoreFile,
            ]
            .map(|i| m.sim.vmstat.get(i))
        };
        let tiers = |m: &UnitMachine| m.sim.lruvecs[lv].lrugen.refaulted[1];
        let act = i64::from(fixed);
        let c = cached(&mut m, ino, 2);
        // Outside a fault, the cold one: tier 0, no PG_workingset.
        m.sim.lru_gen_refault(c, shadow_cold);
        assert_eq!(tiers(&m)[0], 1);
        assert_eq!(counts(&m), [1, act, 0], "fixed {fixed}");
        assert!(!m.sim.mem[c as usize].test(pg::WORKINGSET));
        // The hot one: tier 3 and PG_workingset (refs 4).
        let d = cached(&mut m, ino, 3);
        m.sim.lru_gen_refault(d, shadow_hot);
        assert_eq!(tiers(&m)[3], 1);
        assert_eq!(counts(&m), [2, 2 * act, 1], "fixed {fixed}");
        assert!(m.sim.mem[d as usize].test(pg::WORKINGSET));
        // Once the oldest generation has moved on, a refault counts in no tier, and as a
        // refault only from 6.5.
        m.sim.lruvecs[lv].lrugen.min_seq[1] += 1;
        let e = cached(&mut m, ino, 4);
        m.sim.lru_gen_refault(e, shadow_cold);
        assert_eq!(tiers(&m)[0], 1);
        assert_eq!(counts(&m), [2 + act, 2 * act, 1], "fixed {fixed}");
    }
}

#[test]
fn eviction_takes_the_oldest_generation_first() {
    let mut m = unit();
    let ino = open(&mut m, "/mnt/f");
    let cold: Vec<Pfn> = (0..64).map(|i| cached(&mut m, ino, i)).collect();
    let hot: Vec<Pfn> = (64..128).map(|i| cached(&mut m, ino, i)).collect();
    for &p in &hot {
        m.sim.activate_page(p); // folio_activate → max_seq − 1
    }
    m.sim.lru_add_drain();
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
    for &p in &hot {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(g.max_seq - 1)));
    }
    for &p in &cold {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(g.min_seq[1])));
    }
    m.check();
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    sc.priority = 0;
    sc.may_swap = false;
    m.sim.try_to_shrink_lruvec(0, ROOT_MEM_CGROUP, &mut sc);
    assert_eq!(sc.nr_reclaimed, 64, "the batch of the oldest generation");
    for i in 0..64 {
        assert!(
            matches!(m.entry(ino, i), Entry::Shadow(_)),
            "cold page {i} evicted with a shadow"
        );
    }
    for i in 64..128 {
        assert!(
            matches!(m.entry(ino, i), Entry::Page(_)),
            "hot page {i} kept"
        );
    }
    let view = &m.sim.lru_gen_view()[0];
    let evicted_tier0: u64 = view.tiers[0][1][1];
    assert_eq!(evicted_tier0, 64, "file tier 0 evictions");
    m.check();

    // A refault within MAX_NR_GENS generations counts in its tier.
    let before = m
        .sim
        .vmstat
        .get(mmsim::mm::vmstat::VmItem::WorkingsetRefaultFile);
    cached(&mut m, ino, 0);
    assert_eq!(
        m.sim
            .vmstat
            .get(mmsim::mm::vmstat::VmItem::WorkingsetRefaultFile),
        before + 1
    );
    assert_eq!(
        m.sim.lru_gen_view()[0].tiers[0][1][0],
        1,
        "tier 0 refaulted"
    );
    m.check();
}

#[test]
fn the_pid_controller_protects_a_tier_that_refaults_more_than_tier_0() {
    // Hand-computed: SP = tier 0 with 100 refaults of 1000 (10 %), gain 2; PV = tier 1.
    // 50 % of 1000: 500·(1000+64)·2 = 1,064,000 > 101·1000·3 = 303,000 → not positive.
    assert!(!positive_ctrl_err((100, 1000, 2), (500, 1000, 3)));
    // 10 %: 100·1064·2 = 212,800 ≤ 303,000 → positive (no protection needed).
    assert!(positive_ctrl_err((100, 1000, 2), (100, 1000, 3)));
    // Fewer than MIN_LRU_BATCH refaults: positive whatever the rate.
    assert!(positive_ctrl_err((0, 1000, 2), (63, 63, 3)));

    let mut m = unit();
    {
        let g = &mut m.sim.lruvecs[0].lrugen;
        g.avg_refaulted[1] = [100, 500, 0, 0];
        g.avg_total[1] = [1000, 1000, 0, 0];
    }
    assert_eq!(m.sim.get_tier_idx(0, 1), 0, "tiers 1.. are protected");
    {
        let g = &mut m.sim.lruvecs[0].lrugen;
        g.avg_refaulted[1] = [100, 100, 0, 600];
        g.avg_total[1] = [1000, 1000, 0, 1000];
    }
    assert_eq!(m.sim.get_tier_idx(0, 1), 2, "only tier 3 is protected");
    {
        let g = &mut m.sim.lruvecs[0].lrugen;
        g.avg_refaulted[1] = [100, 100, 0, 0];
    }
    assert_eq!(m.sim.get_tier_idx(0, 1), 3, "nothing is protected");
}

const SMALL: &str = r#"
name = "mglru-small"
kernel = "6.18"
policy = "mglru"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "64MiB"
[swap]
size = "128MiB"
[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"
[[files]]
path = "/data/big"
size = "160MiB"
[[tasks]]
name = "anon"
cpu = 0
program = "anon"
size = "24MiB"
passes = 6
[[tasks]]
name = "stream"
cpu = 1
program = "read"
path = "/data/big"
block_size = "256KiB"
passes = 1
"#;

#[test]
fn an_mglru_run_is_checked_and_deterministic() {
    let sc = parse_scenario(SMALL, "mglru-small.toml", &[]).expect("parses");
    assert_eq!(sc.policy, Some(ReclaimPolicy::Mglru));
    let f = KernelEra::V6_18.features("patched").unwrap();
    let a = run_sc(&sc, f.clone(), true, 20_000_000);
    assert_eq!(a.end, RunEnd::Completed);
    assert!(a.oracle_violations.is_empty(), "{:?}", a.oracle_violations);
    assert_eq!(a.policy, ReclaimPolicy::Mglru);
    assert!(a.vmstat["pgscan_file"] > 0, "the stream was reclaimed");
    assert!(!a.lru_gen.is_empty(), "the lru_gen view is reported");
    assert!(a.series.iter().any(|s| !s.lru_gen.is_empty()));
    // evict_folios' shrink_folio_list calls are the shrink_inactive events (their
    // reclaimed pages pgsteal); MGLRU has no active list to shrink.
    let t = &a.tracepoints;
    assert!(t.mm_vmscan_lru_shrink_inactive.events > 0);
    assert_eq!(
        t.mm_vmscan_lru_shrink_inactive.nr_reclaimed as i64,
        a.vmstat["pgsteal_file"] + a.vmstat["pgsteal_anon"]
    );
    assert_eq!(t.mm_vmscan_lru_shrink_active.events, 0);
    let b = run_sc(&sc, f, false, 20_000_000);
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        serde_json::to_string(&b).unwrap(),
        "same input, same JSON"
    );
    // The same scenario under the classic policy differs and has no lru_gen view.
    let mut f = KernelEra::V6_18.features("patched").unwrap();
    f.policy = Some(ReclaimPolicy::Classic);
    let c = run_sc(&sc, f, false, 20_000_000);
    assert_eq!(c.end, RunEnd::Completed);
    assert!(c.lru_gen.is_empty());
    assert_ne!(c.event_hash, a.event_hash);
    let json = serde_json::to_string(&c).unwrap();
    assert!(
        !json.contains("\"policy\""),
        "classic documents are unchanged"
    );
}

#[test]
fn policy_errors_name_the_file_line_and_field() {
    let bad = SMALL.replace("policy = \"mglru\"", "policy = \"lru2q\"");
    let e = parse_scenario(&bad, "p.toml", &[]).unwrap_err().to_string();
    assert!(
        e.contains("p.toml") && e.contains("policy") && e.contains("lru2q"),
        "{e}"
    );
    assert!(e.contains("line 4") || e.contains(":4"), "{e}");
    let old = SMALL.replace("kernel = \"6.18\"", "kernel = \"4.2\"");
    let e = parse_scenario(&old, "p.toml", &[]).unwrap_err().to_string();
    assert!(e.contains("6.1") && e.contains("policy"), "{e}");
    let classic =
        SMALL.replace("policy = \"mglru\"", "policy = \"classic\"") + "[mglru]\nmin_ttl = \"1s\"\n";
    let e = parse_scenario(&classic, "p.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("mglru") && e.contains("classic"), "{e}");
    let unknown = SMALL.to_string() + "[mglru]\nmin_tll = \"1s\"\n";
    let e = parse_scenario(&unknown, "p.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("min_tll"), "{e}");
    let ok = SMALL.to_string() + "[mglru]\nmin_ttl = \"1s\"\nwalk_mmu = false\n";
    let sc = parse_scenario(&ok, "p.toml", &[]).expect("valid [mglru]");
    let cfg = sc.mglru.unwrap();
    assert_eq!((cfg.min_ttl_ms, cfg.walk_mmu), (1000, false));
}

#[test]
fn the_cli_rejects_a_bad_policy_with_status_2() {
    let bin = env!("CARGO_BIN_EXE_mmsim");
    let out = std::process::Command::new(bin)
        .args(["run", "stream-read", "--policy", "lru2q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--policy") && err.contains("mglru"), "{err}");
    // stream-read pins kernel 4.2: MGLRU needs 6.1.
    let out = std::process::Command::new(bin)
        .args(["run", "stream-read", "--policy", "mglru"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("6.1"), "{err}");
}

fn random_scenario(
    policy: &str,
    anon_mib: u64,
    file_mib: u64,
    passes: u32,
    fd_passes: u32,
) -> String {
    format!(
        r#"
name = "mglru-prop"
kernel = "6.18"
policy = "{policy}"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "32MiB"
[swap]
size = "64MiB"
[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"
[[files]]
path = "/data/f"
size = "{file_mib}MiB"
[[tasks]]
name = "anon"
cpu = 0
program = "anon"
size = "{anon_mib}MiB"
passes = {passes}
[[tasks]]
name = "reader"
cpu = 1
program = "read"
path = "/data/f"
block_size = "64KiB"
passes = {fd_passes}
"#
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]
    /// Random anon and file pressure under both policies, the invariant checker after
    /// every step (MGLRU's generation bookkeeping included).
    #[test]
    fn random_workloads_keep_every_invariant_under_both_policies(
        anon in 4u64..24, file in 8u64..48, passes in 1u32..4, fd_passes in 1u32..3,
        mglru in any::<bool>(),
    ) {
        let policy = if mglru { "mglru" } else { "classic" };
        let text = random_scenario(policy, anon, file, passes, fd_passes);
        let sc = parse_scenario(&text, "prop.toml", &[]).expect("parses");
        let r = run_sc(&sc, KernelEra::V6_18.features("patched").unwrap(), true, 3_000_000);
        prop_assert!(r.end == RunEnd::Completed || r.end == RunEnd::StepLimit, "{:?}", r.end);
        prop_assert!(r.oracle_violations.is_empty(), "{:?}", r.oracle_violations);
    }
}

#[test]
fn check_all_catches_a_corrupted_generation_count() {
    let mut m = unit();
    let ino = open(&mut m, "/mnt/f");
    cached(&mut m, ino, 0);
    assert!(check_all(&m.sim).is_ok());
    m.sim.lruvecs[0].lrugen.nr_pages[0][1] += 1;
    let e = check_all(&m.sim).unwrap_err();
    assert!(e.contains("nr_pages"), "{e}");
}

/// `unit_on(era)` with tasks `t` in cgroup `a` and `u` in cgroup `b`.
fn two_memcgs_on(era: KernelEra, features: Features) -> UnitMachine {
    two_memcgs_seeded(era, features, 1)
}

/// `two_memcgs_on` with the scenario seed `seed`.
fn two_memcgs_seeded(era: KernelEra, features: Features, seed: u64) -> UnitMachine {
    let text = format!(
        "kernel = \"{}\"\npolicy = \"mglru\"\nseed = {seed}\n",
        era
    )
        + &machine_toml("mglru-memcgs", 2, "64MiB", Some("64MiB"), "1GiB", "/mnt")
        + "\n[[cgroups]]\nname = \"a\"\n[[cgroups]]\nname = \"b\"\n"
        + "[[tasks]]\nname = \"t\"\ncpu = 0\ncgroup = \"a\"\nprogram = \"dd\"\npath = \"/tmp/x\"\nsize = \"4KiB\"\n"
        + "[[tasks]]\nname = \"u\"\ncpu = 1\ncgroup = \"b\"\nprogram = \"dd\"\npath = \"/tmp/y\"\nsize = \"4KiB\"\n";
    UnitMachine::new(&text, features)
}

/// `n` cold page-cache pages of a new file, charged to the cgroup of task `task`.
fn cold_pages_of(m: &mut UnitMachine, task: &str, path: &str, n: u64) {
    let tid = common::task_id(&m.sim, task);
    m.sim.set_running(0, Some(tid));
    m.tid = tid;
    let ino = open(m, path);
    for i in 0..n {
        cached(m, ino, i);
    }
}

/// Global direct reclaim of 32 pages at priority 2 over two memcgs of 512 cold file
/// pages each: a pass of 6.1's shrink_node_memcgs evicts a batch from each memcg in turn
/// (each lruvec's target is 512 >> 2; should_abort_scan stops it after its first batch of
/// MIN_LRU_BATCH, the node being above its low watermark, and credits MIN_LRU_BATCH
/// more); 6.3's memcg LRU stops at the first memcg that met the target.
#[test]
fn on_6_1_global_reclaim_takes_a_batch_from_every_memcg() {
    let usage = |m: &UnitMachine, name: &str| {
        let id = m.sim.memcg_by_name(name).expect("memcg");
        m.sim.memcgs[id as usize].usage
    };
    let mut stolen = Vec::new();
    for memcg_lru in [false, true] {
        let mut f = mglru_features_on(KernelEra::V6_1);
        f.mglru_memcg_lru = memcg_lru;
        let mut m = two_memcgs_on(KernelEra::V6_1, f);
        cold_pages_of(&mut m, "t", "/mnt/a", 512);
        cold_pages_of(&mut m, "u", "/mnt/b", 512);
        let before = [usage(&m, "a"), usage(&m, "b")];
        m.check();
        let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
        sc.priority = 2;
        m.sim.shrink_node(0, &mut sc);
        m.check();
        let taken = [before[0] - usage(&m, "a"), before[1] - usage(&m, "b")];
        stolen.push((taken, sc.nr_reclaimed));
    }
    let batch = mmsim::mm::lru_gen::MIN_LRU_BATCH;
    let (taken, reclaimed) = stolen[0];
    assert_eq!(taken, [batch, batch], "6.1: one batch from each memcg");
    assert_eq!(reclaimed, 4 * batch, "each abort credits MIN_LRU_BATCH");
    let (taken, reclaimed) = stolen[1];
    assert_eq!(
        taken.iter().filter(|&&t| t > 0).count(),
        1,
        "memcg LRU: one memcg only, {taken:?}"
    );
    assert_eq!(reclaimed, batch);
}

/// With aging due (only MIN_NR_GENS generations would be left to evict), 6.1's kswapd
/// does not age in the eviction path: get_nr_to_scan leaves it to lru_gen_age_node,
/// which skips the first pass of balance_pgdat and ages on the next. A direct reclaimer,
/// and 6.3's kswapd, age in the eviction path.
#[test]
fn on_6_1_kswapd_leaves_the_aging_to_lru_gen_age_node() {
    for memcg_lru in [false, true] {
        let mut f = mglru_features_on(KernelEra::V6_1);
        f.mglru_memcg_lru = memcg_lru;
        let mut m = unit_on(KernelEra::V6_1);
        m.sim.features = f;
        let ino = open(&mut m, "/mnt/f");
        for i in 0..64 {
            cached(&mut m, ino, i);
        }
        for i in 64..128 {
            let p = cached(&mut m, ino, i);
            m.sim.activate_page(p);
        }
        m.sim.lru_add_drain();
        // Evict the 64 cold pages: the oldest generations empty, min_seq catches up, and
        // evict_folios reports nothing scanned (MIN_NR_GENS left), which ends the loop.
        let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
        sc.priority = 0;
        m.sim.shrink_node(0, &mut sc);
        assert_eq!(sc.nr_reclaimed, 64);
        let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
        assert_eq!(g.min_seq[1] + 1, g.max_seq, "one generation left");
        m.check();
        // A kswapd pass at priority 4.
        let max_seq = g.max_seq;
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        sc.priority = 4;
        m.sim.lru_gen_age_node(0, &mut sc);
        m.sim.shrink_node(0, &mut sc);
        let after_pass = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
        if memcg_lru {
            assert_eq!(after_pass, max_seq + 1, "6.3: kswapd ages while evicting");
            continue;
        }
        assert_eq!(after_pass, max_seq, "6.1: no aging on the first pass");
        assert_eq!(sc.nr_scanned, 0, "nor eviction: aging is due");
        assert!(m.sim.reclaim[0].kswapd_memcgs_need_aging);
        let mut sc = ScanControl::new(32, true, Gfp::KERNEL);
        sc.priority = 4;
        m.sim.lru_gen_age_node(0, &mut sc);
        assert_eq!(
            m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq,
            max_seq + 1,
            "the second pass ages"
        );
        m.check();
        // A direct reclaimer ages in the eviction path (aging is due again: the
        // generation before the youngest is empty).
        let max_seq = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
        let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
        sc.priority = 4;
        m.sim.shrink_node(0, &mut sc);
        assert_eq!(m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq, max_seq + 1);
        m.check();
    }
}

/// The memcg LRU's random bins: a memcg comes online in a random bin of its generation,
/// and shrink_many starts at a random bin, so which of two memcgs of the oldest
/// generation global reclaim takes first depends on the draws (the scenario seed), not
/// on the order the cgroups were created in.
#[test]
fn the_memcg_lru_takes_memcgs_of_a_generation_in_a_random_order() {
    let mut first = [0u32; 2];
    for seed in 0..16 {
        let mut m = two_memcgs_seeded(KernelEra::V6_18, mglru_features_on(KernelEra::V6_18), seed);
        cold_pages_of(&mut m, "t", "/mnt/a", 512);
        cold_pages_of(&mut m, "u", "/mnt/b", 512);
        let ids = [
            m.sim.memcg_by_name("a").expect("a"),
            m.sim.memcg_by_name("b").expect("b"),
        ];
        let before = ids.map(|id| m.sim.memcgs[id as usize].usage);
        let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
        sc.priority = 2;
        m.sim.shrink_node(0, &mut sc);
        m.check();
        let taken: Vec<bool> = ids
            .iter()
            .zip(before)
            .map(|(&id, b)| m.sim.memcgs[id as usize].usage < b)
            .collect();
        assert_eq!(
            taken.iter().filter(|&&t| t).count(),
            1,
            "seed {seed}: {taken:?}"
        );
        first[usize::from(taken[1])] += 1;
    }
    assert!(
        first[0] > 0 && first[1] > 0,
        "each memcg comes first for some seed: {first:?}"
    );
}

#[test]
fn check_all_catches_a_memcg_listed_in_the_wrong_bin() {
    let mut m = two_memcgs_on(KernelEra::V6_18, mglru_features_on(KernelEra::V6_18));
    m.check();
    let id = m.sim.memcg_by_name("a").expect("a") as usize;
    let bins = mmsim::mm::lru_gen::MEMCG_NR_BINS;
    let g = &mut m.sim.lruvecs[id].lrugen;
    g.memcg_bin = (g.memcg_bin + 1) % bins;
    let e = check_all(&m.sim).unwrap_err();
    assert!(e.contains("memcg-LRU generation"), "{e}");
}

/// 6.1's look-around without a walk (direct reclaim): fewer than PAGEVEC_SIZE young
/// neighbours in an older generation are activated one by one (folio_activate, counted
/// in pgactivate); more are moved to max_seq in place, no activation counted.
#[test]
fn on_6_1_look_around_promotes_a_large_batch_in_place() {
    use mmsim::mm::vmstat::VmItem;
    for young in [5u64, 20] {
        let mut m = unit_on(KernelEra::V6_1);
        let tid = m.tid;
        let (mm, vpn0, pfns) = written_anon_pages(&mut m, 64);
        // Age once with no young PTE: the pages stay in what becomes max_seq − 1.
        for i in 0..64 {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() &= !pte::YOUNG;
        }
        let max0 = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
        run_on(&mut m.sim, 0, tid);
        assert!(m.sim.try_to_inc_max_seq(0, max0, 60, false));
        m.sim.lru_gen_walk_active = false;
        for i in 1..=young {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() |= pte::YOUNG;
        }
        let activated = m.sim.vmstat.get(VmItem::Pgactivate);
        m.sim.lru_gen_look_around(pfns[0], mm, vpn0, 0);
        m.sim.lru_add_drain();
        let new_gen = Some(lru_gen_from_seq(max0 + 1));
        for (i, &p) in pfns.iter().enumerate() {
            let promoted = (1..=young as usize).contains(&i);
            assert_eq!(
                gen_of(&m, p) == new_gen,
                promoted,
                "young {young}, page {i}"
            );
        }
        let counted = m.sim.vmstat.get(VmItem::Pgactivate) - activated;
        if young < 15 {
            assert_eq!(counted, young as i64, "activated one by one");
        } else {
            assert_eq!(counted, 0, "moved in place");
        }
        m.check();
    }
}

/// 6.1's evict_folios puts every folio shrink_page_list kept back as PG_active, so it
/// goes to max_seq (a mapped page seen young once is kept, FOLIOREF_KEEP), except one
/// marked for reclaim while dirty or under writeback, which goes to min_seq + 1 (the
/// anon pages being swapped out). 6.18 puts a kept folio where lru_gen_folio_seq says
/// (min_seq + 1 for this one), PG_active only to keep it out of the oldest generation.
/// Three generations of 64 anon pages each, the first (returned) the oldest, then an empty
/// youngest one; no PTE young, no reclaimer's walk.
fn three_anon_generations(m: &mut UnitMachine) -> (u32, u64, Vec<Pfn>) {
    let tid = m.tid;
    let (mm, vpn0, pfns) = written_anon_pages(m, 64);
    let mut ptes = vec![(mm, vpn0)];
    for _ in 0..3 {
        for &(mm, vpn) in &ptes {
            for i in 0..64 {
                *m.sim.mm_mut(mm).pgtable.get_mut(vpn + i).unwrap() &= !pte::YOUNG;
            }
        }
        run_on(&mut m.sim, 0, tid);
        let max = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
        assert!(m.sim.try_to_inc_max_seq(0, max, 60, false));
        if ptes.len() < 3 {
            let (mm, vpn, _) = written_anon_pages(m, 64);
            ptes.push((mm, vpn));
        }
    }
    m.sim.lru_gen_walk_active = false;
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
    assert_eq!(gen_of(m, pfns[0]), Some(lru_gen_from_seq(g.min_seq[0])));
    (mm, vpn0, pfns)
}

#[test]
fn on_6_1_a_folio_kept_by_reclaim_goes_to_max_seq() {
    let mut m = unit_on(KernelEra::V6_1);
    let (mm, vpn0, pfns) = three_anon_generations(&mut m);
    // Page 7 of A is accessed again before reclaim reaches it.
    *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + 7).unwrap() |= pte::YOUNG;
    // One batch of direct reclaim (it stops there: the node is above its watermark).
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    m.sim.lru_add_drain();
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
    assert!(g.min_seq[0] + 1 < g.max_seq);
    assert_eq!(
        gen_of(&m, pfns[7]),
        Some(lru_gen_from_seq(g.max_seq)),
        "kept: max_seq"
    );
    let mut swapping = 0;
    for (i, &p) in pfns.iter().enumerate() {
        let f = m.sim.mem[p as usize].flags;
        if i == 7 || f & pg::WRITEBACK == 0 {
            continue;
        }
        swapping += 1;
        assert_eq!(
            gen_of(&m, p),
            Some(lru_gen_from_seq(g.min_seq[0] + 1)),
            "page {i} under writeback: min_seq + 1"
        );
    }
    assert!(swapping > 0, "the others are being swapped out");
    m.check();
}

/// Proactive reclaim has an mm walk from 6.3 on (set_mm_walk(…, sc->proactive)): the
/// rmap look-around then moves young neighbours that were seen before to max_seq in place,
/// where direct reclaim, without a walk, activates them one by one (pgactivate).
#[test]
fn proactive_reclaim_looks_around_with_a_walk() {
    use mmsim::mm::vmstat::VmItem;
    let mut activated = Vec::new();
    for proactive in [false, true] {
        let mut m = unit();
        let tid = m.tid;
        let (mm, vpn0, pfns) = written_anon_pages(&mut m, 512);
        for _ in 0..3 {
            for i in 0..512 {
                *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() &= !pte::YOUNG;
            }
            run_on(&mut m.sim, 0, tid);
            let max = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
            assert!(m.sim.try_to_inc_max_seq(0, max, 60, false));
        }
        m.sim.lru_gen_walk_active = false;
        // Every page is young again and was seen once before (PG_referenced).
        for (i, &p) in pfns.iter().enumerate() {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i as u64).unwrap() |= pte::YOUNG;
            m.sim.mem[p as usize].flags |= pg::REFERENCED;
        }
        let before = m.sim.vmstat.get(VmItem::Pgactivate);
        let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
        sc.priority = 3; // one batch: 512 >> 3
        sc.proactive = proactive;
        m.sim.shrink_node(0, &mut sc);
        m.sim.lru_add_drain();
        activated.push(m.sim.vmstat.get(VmItem::Pgactivate) - before);
        m.check();
    }
    assert!(
        activated[0] > activated[1],
        "direct reclaim activates the neighbours, proactive moves them in place: {activated:?}"
    );
}

/// 6.1's look-around also clears the young bit of a neighbour that reclaim has isolated
/// (get_pfn_folio has no LRU test before 6.14's rework): of two young pages in one
/// eviction batch, the first one's rmap walk takes the second's young bit, and the
/// second, found unreferenced, is swapped out. From 6.14 an isolated folio is skipped and
/// both are kept.
#[test]
fn on_6_1_the_look_around_takes_the_young_bit_of_an_isolated_neighbour() {
    for rework in [false, true] {
        let mut m = unit_on(KernelEra::V6_1);
        m.sim.features.mglru_workingset_rework = rework;
        let (mm, vpn0, pfns) = three_anon_generations(&mut m);
        for i in [7, 8] {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() |= pte::YOUNG;
        }
        let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
        sc.priority = 0;
        m.sim.shrink_node(0, &mut sc);
        let swapped = [7, 8]
            .iter()
            .filter(|&&i| m.sim.mem[pfns[i] as usize].test(pg::SWAPCACHE))
            .count();
        assert_eq!(swapped, usize::from(!rework), "rework {rework}");
        m.check();
    }
}

/// A cgroup `prot` with a 100 MiB anonymous set touched every 200 ms beside a 200 MiB
/// anonymous hog in `hog`, on 256 MiB with swap, under 6.18's MGLRU: global reclaim only
/// (kswapd and direct), no limit. `protection` is the `[[cgroups]]` line of `prot`.
fn protected_beside_a_hog(protection: &str) -> mmsim::run::RunReport {
    let text = format!(
        r#"name = "mglru-protection"
kernel = "6.18"
policy = "mglru"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[swap]
size = "512MiB"
[[cgroups]]
name = "prot"
{protection}
[[cgroups]]
name = "hog"
[[tasks]]
name = "prot"
cpu = 0
cgroup = "prot"
program = "anon"
size = "100MiB"
passes = 6
think = "200ms"
[[tasks]]
name = "hog"
cpu = 1
cgroup = "hog"
program = "anon"
size = "200MiB"
passes = 4
"#
    );
    let sc = parse_scenario(&text, "t.toml", &[]).expect("scenario");
    let r = run_sc(&sc, mglru_features_on(KernelEra::V6_18), false, u64::MAX);
    assert_eq!(r.end, RunEnd::Completed);
    r
}

/// memory.min and memory.low hold under 6.18's MGLRU global reclaim: kswapd's
/// lru_gen_age_node computes every cgroup's effective protection (6.8, "mm/mglru: fix
/// ineffective protection calculation"), which shrink_one reads. Below memory.min the
/// cgroup is skipped; below memory.low it is first rotated to the tail of the memcg LRU
/// and reclaimed on its next visit, counting a memory.events `low` each time.
#[test]
fn memory_min_and_low_protect_a_cgroup_from_mglru_global_reclaim() {
    let stolen = |r: &mmsim::run::RunReport| {
        let c = r.cgroups.iter().find(|c| c.name == "prot").expect("prot");
        (c.stat["pgsteal"], c.events.low)
    };
    let majflt = |r: &mmsim::run::RunReport| {
        r.tasks
            .iter()
            .find(|t| t.name == "prot")
            .expect("task")
            .majflt
    };
    let none = protected_beside_a_hog("");
    let (none_steal, none_low) = stolen(&none);
    assert!(none_steal > 10_000 && majflt(&none) > 1_000, "{none_steal}");
    assert_eq!(none_low, 0);
    let min = protected_beside_a_hog("memory_min = \"112MiB\"");
    assert_eq!(stolen(&min), (0, 0));
    assert_eq!(majflt(&min), 0);
    let low = protected_beside_a_hog("memory_low = \"112MiB\"");
    let (low_steal, low_events) = stolen(&low);
    assert!(low_events > 0, "no memory.events low");
    assert!(low_steal < none_steal, "{low_steal} vs {none_steal}");
}

/// Whether a fault is in progress is the faulting task's (current->in_lru_fault): the
/// steps other CPUs run while it waits for a TLB-flush IPI do not inherit it. A file only
/// read with read() beside a faulting thread of the same process is never placed active
/// nor counted as a workingset activation (lru_gen_refault counts them in a fault only).
#[test]
fn a_read_beside_faulting_threads_is_never_a_fault_activation() {
    let text = r#"name = "mglru-in-fault"
kernel = "6.18"
policy = "mglru"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[swap]
size = "1GiB"
[[devices]]
name = "nvme0"
preset = "nvme"
size = "8GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "nvme0"
[[files]]
path = "/data/f"
size = "200MiB"
[[tasks]]
name = "anon"
cpu = 0
program = "anon"
size = "320MiB"
passes = 3
thread_group = "p"
[[tasks]]
name = "reader"
cpu = 1
program = "read"
path = "/data/f"
block_size = "64KiB"
passes = 30
thread_group = "p"
"#;
    let sc = parse_scenario(text, "t.toml", &[]).expect("scenario");
    let r = run_sc(&sc, mglru_features_on(KernelEra::V6_18), false, u64::MAX);
    assert_eq!(r.end, RunEnd::Completed);
    assert!(r.vmstat["workingset_refault_file"] > 1_000);
    assert_eq!(r.vmstat["workingset_activate_file"], 0);
}

/// `n` anonymous pages faulted in as task `t` on 6.1 and aged three times without being
/// touched again: they sit in the oldest generation (max_seq 6, both min_seq 3).
fn aged_anon_on_6_1(n: u64) -> (UnitMachine, Vec<Pfn>) {
    let mut m = unit_on(KernelEra::V6_1);
    let tid = m.tid;
    let (mm, vpn0, pfns) = written_anon_pages(&mut m, n);
    for _ in 0..3 {
        for i in 0..n {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() &= !pte::YOUNG;
        }
        run_on(&mut m.sim, 0, tid);
        let max = m.sim.lrugen(ROOT_MEM_CGROUP, 0).max_seq;
        assert!(m.sim.try_to_inc_max_seq(0, max, 60, false));
    }
    m.sim.lru_gen_walk_active = false;
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
    assert_eq!((g.max_seq, g.min_seq), (6, [3, 3]));
    assert_eq!(gen_of(&m, pfns[0]), Some(lru_gen_from_seq(3)));
    (m, pfns)
}

/// 6.1's PID controller picks the type by tier 0 alone (swappiness : 200 − swappiness):
/// anon whose refaults are all in tier 3 is evicted before file that refaults from tier
/// 0, where 6.14's get_type_to_scan, comparing the sums of all tiers, takes file.
#[test]
fn on_6_1_the_type_to_scan_compares_tier_0_of_anon_and_file() {
    use mmsim::mm::vmstat::VmItem;
    let (mut m, _) = aged_anon_on_6_1(128);
    let ino = open(&mut m, "/mnt/f");
    for i in 0..128 {
        cached(&mut m, ino, i);
    }
    {
        let g = &mut m.sim.lruvecs[0].lrugen;
        // anon: tier 0 never refaults, tier 3 always; file: tier 0 refaults 10 %.
        g.avg_refaulted = [[0, 0, 0, 1000], [100, 0, 0, 0]];
        g.avg_total = [[1000, 0, 0, 1000], [1000, 0, 0, 0]];
    }
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    let scanned = (
        m.sim.vmstat.get(VmItem::PgscanAnon),
        m.sim.vmstat.get(VmItem::PgscanFile),
    );
    assert!(
        scanned.0 > 0 && scanned.1 == 0,
        "anon first: (anon, file) {scanned:?}"
    );
    m.check();
}

/// 6.1's try_to_inc_min_seq keeps anon's min_seq at or below file's and moves file's only
/// with anon's: an empty oldest file generation stays while anon's holds folios (6.14 lets
/// file's move on alone, up to max_seq − MIN_NR_GENS).
#[test]
fn on_6_1_file_min_seq_waits_for_anon_min_seq() {
    let (mut m, _) = aged_anon_on_6_1(256);
    // One batch of direct reclaim: anon's oldest generation keeps most of its folios.
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
    assert_eq!(g.min_seq, [3, 3], "file's empty generations wait");
    m.check();
}

/// 6.1's rmap look-around runs before folio_referenced_one clears the young PTE it is at,
/// and takes that PTE's young bit itself, marking the folio (isolated by reclaim)
/// PG_referenced: folio_check_references then activates a mapped folio at its first
/// young sighting (pgactivate), where 6.14's lru_gen_set_refs keeps it.
#[test]
fn on_6_1_a_young_mapped_folio_under_eviction_is_activated() {
    use mmsim::mm::vmstat::VmItem;
    let mut m = unit_on(KernelEra::V6_1);
    let (mm, vpn0, pfns) = three_anon_generations(&mut m);
    *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + 7).unwrap() |= pte::YOUNG;
    let before = m.sim.vmstat.get(VmItem::Pgactivate);
    let mut sc = ScanControl::new(64, false, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    assert_eq!(m.sim.vmstat.get(VmItem::Pgactivate) - before, 1);
    assert!(!m.sim.mem[pfns[7] as usize].test(pg::SWAPCACHE));
    m.check();
}

/// 6.1's sort_folio moves a locked folio (a readahead folio still being read, say) to the
/// next generation with PG_reclaim, as it does one under writeback, so reclaim never
/// isolates it; 6.14's rework dropped the lock test (isolated, kept by
/// shrink_folio_list's trylock, put back active).
#[test]
fn on_6_1_a_locked_folio_moves_to_the_next_generation_unisolated() {
    use mmsim::mm::vmstat::VmItem;
    let mut m = unit_on(KernelEra::V6_1);
    let ino = open(&mut m, "/mnt/f");
    let pfns: Vec<Pfn> = (0..128).map(|i| cached(&mut m, ino, i)).collect();
    let g = m.sim.lrugen(ROOT_MEM_CGROUP, 0).clone();
    let oldest = lru_gen_from_seq(g.min_seq[1]);
    assert_eq!(gen_of(&m, pfns[5]), Some(oldest));
    assert!(m.sim.trylock_page(pfns[5]));
    m.sim.mem[pfns[5] as usize].flags &= !pg::RECLAIM;
    let mut sc = ScanControl::new(256, false, Gfp::KERNEL);
    sc.priority = 0;
    m.sim.shrink_node(0, &mut sc);
    m.sim.lru_add_drain();
    assert!(
        m.sim.vmstat.get(VmItem::PgscanFile) > 0,
        "file was reclaimed"
    );
    let f = m.sim.mem[pfns[5] as usize].flags;
    assert_eq!(
        gen_of(&m, pfns[5]),
        Some(lru_gen_from_seq(g.min_seq[1] + 1)),
        "locked: the next generation, not max_seq"
    );
    assert!(f & pg::RECLAIM != 0, "PG_reclaim set");
    assert_eq!(
        m.sim.vmstat.get(VmItem::PgscanFile),
        m.sim.vmstat.get(VmItem::PgstealFile),
        "every isolated folio was reclaimed"
    );
    m.sim.unlock_page(pfns[5]);
    m.check();
}

/// 6.1's evict_folios sets need_swapping only once it reclaimed an isolated batch of anon
/// folios. Here the oldest anon generation holds only locked folios: a batch sorts them
/// all on (nothing isolated) and try_to_inc_min_seq advances min_seq. A limit reclaimer
/// that already met its target then goes on to the next generation (should_abort_scan's
/// "over-swapping" check does not stop it), where it would stop after the first batch
/// had need_swapping been set.
#[test]
fn on_6_1_need_swapping_waits_for_an_isolated_anon_batch() {
    let mut m = two_memcgs_on(KernelEra::V6_1, mglru_features_on(KernelEra::V6_1));
    let tid = common::task_id(&m.sim, "t");
    m.sim.set_running(0, Some(tid));
    m.tid = tid;
    let a = m.sim.memcg_by_name("a").expect("memcg");
    let lv = m.sim.lruvec_idx(a, 0);
    let (mm, vpn0, locked) = written_anon_pages(&mut m, 64);
    for _ in 0..3 {
        for i in 0..64 {
            *m.sim.mm_mut(mm).pgtable.get_mut(vpn0 + i).unwrap() &= !pte::YOUNG;
        }
        run_on(&mut m.sim, 0, tid);
        let max = m.sim.lrugen(a, 0).max_seq;
        assert!(m.sim.try_to_inc_max_seq(lv, max, 60, false));
    }
    m.sim.lru_gen_walk_active = false;
    written_anon_pages(&mut m, 512);
    let g = m.sim.lrugen(a, 0).clone();
    assert_eq!((g.max_seq, g.min_seq), (6, [3, 3]));
    for &p in &locked {
        assert_eq!(gen_of(&m, p), Some(lru_gen_from_seq(3)));
        assert!(m.sim.trylock_page(p));
    }
    {
        // anon first: file's tier 0 refaults, anon's does not.
        let g = &mut m.sim.lruvecs[lv].lrugen;
        g.avg_refaulted = [[0, 0, 0, 0], [500, 0, 0, 0]];
        g.avg_total = [[1000, 0, 0, 0], [1000, 0, 0, 0]];
    }
    let mut sc = ScanControl::new(32, false, Gfp::KERNEL);
    sc.target_memcg = a;
    sc.priority = 0;
    sc.nr_reclaimed = sc.nr_to_reclaim;
    m.sim.lru_gen_shrink_lruvec(0, a, &mut sc);
    let min_seq = m.sim.lrugen(a, 0).min_seq[0];
    assert!(
        min_seq > 4,
        "a second batch ran (min_seq 4 after one): {min_seq}"
    );
    assert_ne!(gen_of(&m, locked[0]), Some(lru_gen_from_seq(4)));
    for &p in &locked {
        m.sim.unlock_page(p);
    }
    m.check();
}
