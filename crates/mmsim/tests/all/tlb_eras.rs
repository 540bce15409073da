//! The x86 TLB-flush rules of later kernels, each driven by hand on a tiny machine (as
//! `tests/all/vm.rs` does: the test sets the running context, calls `switch_mm` where the
//! engine would and delivers the IPIs itself, so every count is exact): deferred writable
//! flushes (4.3), TLB generations (4.13), PCID (4.14), lazy CPUs skipped by flushes
//! (4.19), mm_cpumask updated lazily (6.13), flush_tlb_batched_pending (4.13), and idle CPUs
//! in lazy TLB mode (every era); and
//! whole runs of seed 002's workload on each era.

use crate::common;

use common::{
    batch_tlb_features, build_sim, dd_task_toml, deliver_ipis, file_toml, load_builtin,
    machine_toml, mm_of, mmap_at, run_on, run_sc, task_id, touch_pages,
};
use mmsim::kernel::KernelEra;
use mmsim::mm::page::{Pfn, PAGE_SHIFT, PAGE_SIZE};
use mmsim::mm::rmap::TtuResult;
use mmsim::mm::vmstat::VmItem;
use mmsim::sched::TaskId;
use mmsim::sim::{Features, Sim};

/// The seed's 4.2 rules with the batched flush and the TLB rules of `form`: 0 none (the
/// 4.3 form), 1 writable deferral and generations, 2 with PCID, 3 with lazy CPUs skipped.
fn features(form: u8) -> Features {
    let mut f = batch_tlb_features(true);
    f.tlb_defer_writable = form >= 1;
    f.tlb_gen = form >= 1;
    f.pcid = form >= 2;
    f.lazy_tlb_skip = form >= 3;
    f
}

/// 4 CPUs, files /data/a and /data/b (8 pages each), tasks a (CPU 1), b (CPU 2), r (CPU 0).
fn machine(f: Features) -> Sim {
    let mut s = machine_toml("tlb", 4, "64MiB", None, "4GiB", "/data");
    for name in ["a", "b"] {
        s += &file_toml(&format!("/data/{name}"), 8 * PAGE_SIZE, false);
    }
    for (name, cpu) in [("a", 1), ("b", 2), ("r", 0)] {
        s += &dd_task_toml(name, cpu, &format!("/tmp/{name}"));
    }
    build_sim(&s, "tlb-test", f)
}

/// Task `t` maps its file shared and writable and touches its first `n` pages on `cpu`
/// (writing if `write`); returns the mapping's address.
fn map_and_touch(sim: &mut Sim, t: TaskId, file: &str, cpu: usize, n: u64, write: bool) -> u64 {
    run_on(sim, cpu, t);
    let addr = mmap_at(sim, t, Some(file), 8 * PAGE_SIZE, 0, 3, true);
    run_on(sim, cpu, t);
    touch_pages(sim, cpu, t, addr, n, write).expect("no wait");
    addr
}

fn cached(sim: &Sim, cpu: usize, t: TaskId, addr: u64) -> bool {
    let mm = mm_of(sim, t);
    sim.tlbs[cpu]
        .entries()
        .any(|e| e.mm == mm + 1 && e.vpn == addr >> PAGE_SHIFT)
}

fn pending(sim: &Sim) -> usize {
    sim.ipis.iter().filter(|i| i.is_some()).count()
}

fn v(sim: &Sim, i: VmItem) -> i64 {
    sim.vmstat.get(i)
}

/// kswapd's context on `cpu` (a kernel thread: lazy on the mm loaded there).
fn kswapd_on(sim: &mut Sim, cpu: usize) {
    let k = sim.kswapd[0].expect("kswapd");
    run_on(sim, cpu, k);
}

/// kswapd on CPU 0 starts a reclaim batch and unmaps `pfns` with the batched flush (their
/// young bits cleared first, as page_referenced does), each successfully.
fn kswapd_batch_unmap(sim: &mut Sim, pfns: &[Pfn]) {
    kswapd_on(sim, 0);
    sim.init_tlb_ubc();
    for &p in pfns {
        sim.page_referenced(p, mmsim::mm::memcontrol::ROOT_MEM_CGROUP);
        assert_eq!(sim.try_to_unmap(p, true), TtuResult::Success);
    }
}

fn pfn_of(sim: &Sim, t: TaskId, addr: u64) -> Pfn {
    let p = sim.mms[mm_of(sim, t) as usize]
        .as_ref()
        .unwrap()
        .pgtable
        .get(addr >> PAGE_SHIFT);
    mmsim::mm::memory::pte::pfn(p)
}

#[test]
fn a_dirty_pte_is_flushed_at_once_before_v4_3_and_with_the_batch_before_pageout_after() {
    for defer in [false, true] {
        let mut f = features(0);
        f.tlb_defer_writable = defer;
        let mut sim = machine(f);
        let a = task_id(&sim, "a");
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 1, true);
        let pfn = pfn_of(&sim, a, addr);
        kswapd_batch_unmap(&mut sim, &[pfn]);
        // The seed's commit flushes the dirty PTE at once (one IPI to CPU 1); 4.3 defers
        // it and marks the batch writable.
        assert_eq!(pending(&sim), usize::from(!defer), "defer {defer}");
        let k = sim.kswapd[0].unwrap();
        assert_eq!(sim.tasks[k].tlb_ubc.writable, defer);
        deliver_ipis(&mut sim);
        assert_eq!(
            cached(&sim, 1, a, addr),
            defer,
            "still cached until the batch"
        );
        // Before pageout: try_to_unmap_flush_dirty flushes a writable batch.
        sim.try_to_unmap_flush_dirty();
        assert_eq!(pending(&sim), usize::from(defer));
        deliver_ipis(&mut sim);
        assert!(!cached(&sim, 1, a, addr));
        assert!(!sim.tasks[k].tlb_ubc.flush_required || !defer);
    }
}

#[test]
fn with_tlb_generations_a_cpu_two_flushes_behind_flushes_in_full_once() {
    // Two single-page flushes of a's mm from CPU 0 reach CPU 1 before it handles either.
    for form in [0u8, 1] {
        let mut sim = machine(features(form));
        let a = task_id(&sim, "a");
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 3, false);
        let mm = mm_of(&sim, a);
        kswapd_on(&mut sim, 0);
        let vpn = addr >> PAGE_SHIFT;
        sim.flush_tlb_page(mm, vpn);
        sim.flush_tlb_page(mm, vpn + 1);
        assert_eq!(v(&sim, VmItem::NrTlbRemoteFlush), 2);
        assert_eq!(deliver_ipis(&mut sim), 2);
        assert_eq!(v(&sim, VmItem::NrTlbRemoteFlushReceived), 2);
        // 4.3: each IPI invalidates its page and page 2 stays cached; 4.13: the first
        // finds CPU 1 two generations behind and flushes everything, the second finds it
        // current and does nothing.
        assert!(!cached(&sim, 1, a, addr) && !cached(&sim, 1, a, addr + PAGE_SIZE));
        assert_eq!(
            cached(&sim, 1, a, addr + 2 * PAGE_SIZE),
            form == 0,
            "form {form}"
        );
        if form == 1 {
            assert_eq!(sim.mms[mm as usize].as_ref().unwrap().tlb_gen, 2);
            assert_eq!(sim.cpu_tlbstate[1].ctxs[0], (mm + 1, 2));
        }
    }
}

#[test]
fn with_tlb_generations_a_cpu_one_flush_behind_invalidates_the_range_only() {
    let mut sim = machine(features(1));
    let a = task_id(&sim, "a");
    let addr = map_and_touch(&mut sim, a, "/data/a", 1, 3, false);
    let mm = mm_of(&sim, a);
    kswapd_on(&mut sim, 0);
    sim.flush_tlb_mm_range(mm, addr >> PAGE_SHIFT, (addr >> PAGE_SHIFT) + 2);
    assert_eq!(deliver_ipis(&mut sim), 1);
    assert!(!cached(&sim, 1, a, addr) && !cached(&sim, 1, a, addr + PAGE_SIZE));
    assert!(
        cached(&sim, 1, a, addr + 2 * PAGE_SIZE),
        "outside the range"
    );
    // The flushing CPU's own flush of a range: counted one page at a time.
    run_on(&mut sim, 1, a);
    let one = v(&sim, VmItem::NrTlbLocalFlushOne);
    sim.flush_tlb_mm_range(mm, (addr >> PAGE_SHIFT) + 2, (addr >> PAGE_SHIFT) + 3);
    assert_eq!(v(&sim, VmItem::NrTlbLocalFlushOne), one + 1);
    assert!(!cached(&sim, 1, a, addr + 2 * PAGE_SIZE));
}

#[test]
fn the_batched_flush_leaves_a_cpu_whose_loaded_mm_is_current_alone() {
    // a's and b's pages are unmapped in one batch; b's CPU then switches to r's mm, which
    // no unmap touched. At the flush CPU 2 is in the batch's mask: 4.3 flushes it, 4.13
    // finds its loaded mm current and does nothing.
    for form in [0u8, 1] {
        let mut sim = machine(features(form));
        let (a, b, r) = (task_id(&sim, "a"), task_id(&sim, "b"), task_id(&sim, "r"));
        let addr_a = map_and_touch(&mut sim, a, "/data/a", 1, 1, false);
        let addr_b = map_and_touch(&mut sim, b, "/data/b", 2, 1, false);
        let (pa, pb) = (pfn_of(&sim, a, addr_a), pfn_of(&sim, b, addr_b));
        kswapd_batch_unmap(&mut sim, &[pa, pb]);
        assert_eq!(pending(&sim), 0, "deferred");
        let addr_r = map_and_touch(&mut sim, r, "/data/b", 2, 2, false);
        assert!(cached(&sim, 2, r, addr_r));
        kswapd_on(&mut sim, 0);
        sim.try_to_unmap_flush();
        assert_eq!(deliver_ipis(&mut sim), 2, "CPUs 1 and 2");
        assert_eq!(v(&sim, VmItem::NrTlbRemoteFlushReceived), 2);
        assert!(!cached(&sim, 1, a, addr_a));
        assert_eq!(cached(&sim, 2, r, addr_r), form == 1, "form {form}");
        // 4.13 goes through flush_tlb_others: nr_tlb_remote_flush once.
        assert_eq!(v(&sim, VmItem::NrTlbRemoteFlush), i64::from(form == 1));
    }
}

#[test]
fn with_pcid_a_switch_back_keeps_translations_unless_the_mm_was_flushed_meanwhile() {
    for form in [1u8, 2] {
        let mut sim = machine(features(form));
        let (a, r) = (task_id(&sim, "a"), task_id(&sim, "r"));
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 2, false);
        let addr_r = map_and_touch(&mut sim, r, "/data/b", 1, 1, false);
        // Back to a on CPU 1: without PCID the switches flushed everything.
        run_on(&mut sim, 1, a);
        assert_eq!(cached(&sim, 1, a, addr), form == 2, "form {form}");
        assert_eq!(cached(&sim, 1, r, addr_r), form == 2, "r's under its ASID");
        if form == 2 {
            // r is flushed while CPU 1 runs a: CPU 1 left r's cpumask, no IPI; its ASID
            // for r is behind, so the switch back flushes r's translations only.
            let mm_r = mm_of(&sim, r);
            assert!(!sim.mms[mm_r as usize].as_ref().unwrap().cpumask_test(1));
            kswapd_on(&mut sim, 0);
            sim.flush_tlb_page(mm_r, addr_r >> PAGE_SHIFT);
            assert_eq!(pending(&sim), 0);
            run_on(&mut sim, 1, r);
            assert!(!cached(&sim, 1, r, addr_r));
            assert!(cached(&sim, 1, a, addr), "a's translations stay");
        }
    }
}

#[test]
fn with_pcid_each_mm_a_cpu_runs_takes_the_next_asid_and_keeps_it() {
    let mut sim = machine(features(2));
    let (a, b, r) = (task_id(&sim, "a"), task_id(&sim, "b"), task_id(&sim, "r"));
    let addr = map_and_touch(&mut sim, a, "/data/a", 1, 1, false);
    assert_eq!(sim.cpu_tlbstate[1].loaded_asid, 0);
    map_and_touch(&mut sim, b, "/data/b", 1, 1, false);
    map_and_touch(&mut sim, r, "/data/b", 1, 1, false);
    let st = sim.cpu_tlbstate[1];
    let held: Vec<u32> = st.ctxs.iter().map(|c| c.0).collect();
    let ids = [a, b, r].map(|t| mm_of(&sim, t) + 1);
    assert_eq!(held[..3], ids, "{st:?}");
    assert_eq!((st.loaded_asid, st.next_asid), (2, 3));
    // Back to a: its ASID 0, current, without a flush.
    run_on(&mut sim, 1, a);
    assert_eq!(sim.cpu_tlbstate[1].loaded_asid, 0);
    assert!(cached(&sim, 1, a, addr));
}

#[test]
fn a_lazy_cpu_takes_the_flush_and_leaves_before_v4_19_and_is_skipped_after() {
    // CPU 1 runs a, then goes idle. CPU 0 flushes one of a's pages twice.
    for form in [0u8, 1, 2, 3] {
        let mut sim = machine(features(form));
        let a = task_id(&sim, "a");
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 2, false);
        let mm = mm_of(&sim, a);
        sim.enter_lazy_tlb(1);
        kswapd_on(&mut sim, 0);
        sim.flush_tlb_page(mm, addr >> PAGE_SHIFT);
        let first = deliver_ipis(&mut sim);
        sim.flush_tlb_page(mm, addr >> PAGE_SHIFT);
        let second = deliver_ipis(&mut sim);
        let in_mask = sim.mms[mm as usize].as_ref().unwrap().cpumask_test(1);
        match form {
            // Lazy, in the mask: the first IPI makes it leave the mm; no second IPI.
            0 | 1 => assert_eq!((first, second, in_mask), (1, 0, false), "form {form}"),
            // 4.14 with PCID: idle switched to init_mm at once; no IPI at all.
            2 => assert_eq!((first, second, in_mask), (0, 0, false)),
            // 4.19+: lazy and in the mask, skipped by both flushes.
            _ => {
                assert_eq!((first, second, in_mask), (0, 0, true));
                assert_eq!(v(&sim, VmItem::NrTlbRemoteFlush), 2, "counted, not sent");
                assert!(cached(&sim, 1, a, addr), "stale until a runs again");
            }
        }
        // a runs on CPU 1 again: whatever the form, its translations went in full (left
        // the mm without PCID; behind its ASID with it; behind on the return from lazy).
        run_on(&mut sim, 1, a);
        assert!(!cached(&sim, 1, a, addr), "form {form}");
        assert!(!cached(&sim, 1, a, addr + PAGE_SIZE), "form {form}");
        assert!(sim.mms[mm as usize].as_ref().unwrap().cpumask_test(1));
    }
}

#[test]
fn from_v6_13_a_cpu_stays_in_the_old_mms_mask_until_a_trimming_flush_finds_it_elsewhere() {
    for lazy_mask in [false, true] {
        let mut f = features(3);
        f.mm_cpumask_lazy = lazy_mask;
        let mut sim = machine(f);
        let (a, r) = (task_id(&sim, "a"), task_id(&sim, "r"));
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 1, false);
        map_and_touch(&mut sim, r, "/data/b", 1, 1, false);
        let mm = mm_of(&sim, a);
        let in_mask = |sim: &Sim| sim.mms[mm as usize].as_ref().unwrap().cpumask_test(1);
        assert_eq!(in_mask(&sim), lazy_mask, "CPU 1 switched from a to r");
        // A flush of a within a second of a's birth: CPU 1 (r loaded) is skipped, though
        // the flush is counted as remote when CPU 1 is still in the mask.
        kswapd_on(&mut sim, 0);
        sim.flush_tlb_page(mm, addr >> PAGE_SHIFT);
        assert_eq!(pending(&sim), 0);
        assert_eq!(v(&sim, VmItem::NrTlbRemoteFlush), i64::from(lazy_mask));
        if lazy_mask {
            // The first flush after a's trim time reaches every CPU in the mask; CPU 1,
            // with another mm loaded, leaves it.
            sim.mms[mm as usize].as_mut().unwrap().next_trim_cpumask_ps = 0;
            sim.flush_tlb_page(mm, addr >> PAGE_SHIFT);
            assert_eq!(deliver_ipis(&mut sim), 1);
            assert!(!in_mask(&sim), "trimmed");
            // The next trim a second after this flush began (its clock moved on since).
            let next = sim.mms[mm as usize].as_ref().unwrap().next_trim_cpumask_ps;
            let second = mmsim::arch::tlb::TRIM_CPUMASK_INTERVAL_PS;
            assert!(next > second && next <= sim.now() + second, "{next}");
        }
        // Back on CPU 1, a finds its ASID behind and flushes it.
        run_on(&mut sim, 1, a);
        assert!(!cached(&sim, 1, a, addr));
        assert!(in_mask(&sim));
    }
}

#[test]
fn from_v4_13_the_first_mprotect_after_a_deferred_unmap_flushes_the_whole_mm() {
    for rule in [false, true] {
        let mut f = features(1);
        f.tlb_flush_batched = rule;
        let mut sim = machine(f);
        let a = task_id(&sim, "a");
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 8, false);
        let mm = mm_of(&sim, a);
        // Reclaim on CPU 0 unmaps page 0 with a deferred flush, and flushes its batch.
        let pfn = pfn_of(&sim, a, addr);
        kswapd_batch_unmap(&mut sim, &[pfn]);
        sim.try_to_unmap_flush();
        assert_eq!(deliver_ipis(&mut sim), 1);
        assert_eq!(
            sim.mms[mm as usize].as_ref().unwrap().tlb_flush_batched,
            rule
        );
        // a touches pages 1-7 again, then makes page 7 read-only.
        touch_pages(&mut sim, 1, a, addr + PAGE_SIZE, 7, false).expect("no wait");
        run_on(&mut sim, 1, a);
        let all = v(&sim, VmItem::NrTlbLocalFlushAll);
        let r = sim.sys_mprotect(a, addr + 7 * PAGE_SIZE, PAGE_SIZE, 1);
        assert_eq!(r, mmsim::workload::OpResult::None);
        // 4.13: the whole mm first (pages 1-6 too); before, page 7 only.
        assert_eq!(v(&sim, VmItem::NrTlbLocalFlushAll), all + i64::from(rule));
        assert_eq!(cached(&sim, 1, a, addr + PAGE_SIZE), !rule, "rule {rule}");
        assert!(!cached(&sim, 1, a, addr + 7 * PAGE_SIZE));
        assert!(!sim.mms[mm as usize].as_ref().unwrap().tlb_flush_batched);
        // The next mprotect flushes its own range only.
        touch_pages(&mut sim, 1, a, addr + PAGE_SIZE, 6, false).expect("no wait");
        run_on(&mut sim, 1, a);
        sim.sys_mprotect(a, addr + 6 * PAGE_SIZE, PAGE_SIZE, 1);
        assert!(cached(&sim, 1, a, addr + PAGE_SIZE));
    }
}

#[test]
fn a_cpu_idle_for_a_deep_c_state_loses_its_translations_in_every_era() {
    for form in [0u8, 3] {
        let mut sim = machine(features(form));
        let a = task_id(&sim, "a");
        let addr = map_and_touch(&mut sim, a, "/data/a", 1, 1, false);
        sim.enter_lazy_tlb(1);
        let deep = sim.costs.deep_idle_tlb_flush_ps;
        // Shorter than C3's target residency: a shallow state keeps the TLB.
        let t = sim.cpu_clock(1) + deep - 1;
        sim.cpu_idle_until(1, t);
        assert!(cached(&sim, 1, a, addr), "form {form}");
        // Long enough for C3 (CPUIDLE_FLAG_TLB_FLUSHED): gone, the CPU's state unchanged.
        let t = sim.cpu_clock(1) + deep;
        sim.cpu_idle_until(1, t);
        assert!(!cached(&sim, 1, a, addr), "form {form}");
        assert_eq!(sim.cpu_active_mm[1], Some(mm_of(&sim, a)));
        // a runs again and walks its page table: the accessed bit is set anew.
        let vpn = addr >> PAGE_SHIFT;
        let m = mm_of(&sim, a) as usize;
        if let Some(p) = sim.mms[m].as_mut().unwrap().pgtable.get_mut(vpn) {
            *p &= !mmsim::mm::memory::pte::YOUNG;
        }
        touch_pages(&mut sim, 1, a, addr, 1, false).expect("no wait");
        let p = sim.mms[m].as_ref().unwrap().pgtable.get(vpn);
        assert!(p & mmsim::mm::memory::pte::YOUNG != 0, "form {form}");
    }
}

#[test]
fn pcid_and_lazy_tlb_skip_need_tlb_generations() {
    let e = mmsim::kernel::resolve_features(
        Some(KernelEra::V6_18),
        None,
        "vanilla",
        &Default::default(),
        Some("-tlb-gen"),
    )
    .expect_err("pcid without tlb-gen");
    assert!(e.contains("`pcid` needs `tlb-gen`"), "{e}");
    let f = mmsim::kernel::resolve_features(
        Some(KernelEra::V6_18),
        None,
        "vanilla",
        &Default::default(),
        Some("-tlb-gen,-pcid,-lazy-tlb-skip,-mm-cpumask-lazy"),
    )
    .expect("the 4.3 form on 6.18");
    assert!(!f.tlb_gen && !f.pcid && !f.lazy_tlb_skip && !f.mm_cpumask_lazy);
    for (era, on) in [
        (KernelEra::V4_2, [false; 6]),
        (KernelEra::V4_14, [true, true, true, false, false, true]),
        (KernelEra::V6_1, [true, true, true, true, false, true]),
        (KernelEra::V6_18, [true; 6]),
    ] {
        let f = era.features("vanilla").unwrap();
        assert_eq!(
            [
                f.tlb_defer_writable,
                f.tlb_gen,
                f.pcid,
                f.lazy_tlb_skip,
                f.mm_cpumask_lazy,
                f.tlb_flush_batched
            ],
            on,
            "{era}"
        );
    }
}

/// Seed 002's workload (4 readers on 4 CPUs) on each era's TLB rules, small: the batched
/// flush still cuts the IPIs on every era; from 4.14, CPUs whose reader sleeps on IO leave
/// (PCID) or are skipped (lazy), so vanilla sends far fewer IPIs than on 4.2.
#[test]
fn lru_file_mmap_read_on_each_eras_tlb_rules() {
    let mut received = Vec::new();
    for era in [KernelEra::V4_2, KernelEra::V4_14, KernelEra::V6_18] {
        let mut per_preset = Vec::new();
        for preset in ["vanilla", "patched"] {
            let sc = load_builtin("lru-file-mmap-read", &[]);
            let r = run_sc(&sc, era.features(preset).unwrap(), false, u64::MAX);
            assert!(r.oracle_violations.is_empty(), "{era} {preset}");
            per_preset.push(r.vmstat["nr_tlb_remote_flush_received"]);
        }
        assert!(
            per_preset[1] * 3 < per_preset[0],
            "{era}: batching cuts the IPIs: {per_preset:?}"
        );
        received.push(per_preset[0]);
    }
    assert!(
        received[1] < received[0] && received[2] < received[0],
        "vanilla IPIs by era: {received:?}"
    );
}

/// shrink-free-batch (6.9, "mm: free folios in a batch in shrink_folio_list()"): kswapd
/// reclaims 32 clean file pages that a reader on CPU 1 has mapped, unmapping each with the
/// batched flush. Before 6.9 the pages are freed at the end of the call, after one flush
/// of the whole batch: one flush round, one IPI. From 6.9 they go into a folio_batch (31
/// with `folio-batch-31`) that is flushed and freed when full, so the 32nd page's unmap
/// needs a second round at the end: two.
#[test]
fn from_v6_9_reclaim_flushes_and_frees_a_folio_batch_at_a_time() {
    use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
    use mmsim::mm::node::LruList;
    use mmsim::mm::page_alloc::Gfp;
    use mmsim::mm::vmscan::ScanControl;
    let pages = 32u64;
    for batched in [false, true] {
        let mut f = features(1);
        f.folio_batch_31 = true;
        f.shrink_free_batch = batched;
        let mut s = machine_toml("batch", 4, "64MiB", None, "4GiB", "/data");
        s += &file_toml("/data/f", pages * PAGE_SIZE, false);
        s += &dd_task_toml("a", 1, "/tmp/a");
        let mut sim = build_sim(&s, "batch-test", f);
        let a = task_id(&sim, "a");
        run_on(&mut sim, 1, a);
        let addr = mmap_at(&mut sim, a, Some("/data/f"), pages * PAGE_SIZE, 0, 1, true);
        run_on(&mut sim, 1, a);
        touch_pages(&mut sim, 1, a, addr, pages, false).expect("no wait");
        sim.lru_add_drain();
        kswapd_on(&mut sim, 0);
        for i in 0..pages {
            // The reader's accesses are old news (page_referenced clears the young bits).
            let pfn = pfn_of(&sim, a, addr + i * PAGE_SIZE);
            sim.page_referenced(pfn, ROOT_MEM_CGROUP);
        }
        let flushes = v(&sim, VmItem::NrTlbRemoteFlush);
        let mut sc = ScanControl::new(pages, true, Gfp::KERNEL);
        let reclaimed =
            sim.shrink_inactive_list(0, ROOT_MEM_CGROUP, pages, LruList::InactiveFile, &mut sc);
        deliver_ipis(&mut sim);
        assert_eq!(reclaimed, pages, "batched {batched}");
        assert_eq!(
            v(&sim, VmItem::NrTlbRemoteFlush) - flushes,
            if batched { 2 } else { 1 },
            "batched {batched}"
        );
        assert!(!cached(&sim, 1, a, addr + (pages - 1) * PAGE_SIZE));
    }
}
