//! mlock (`mm::mlock`): VM_LOCKED mappings keep their pages on the unevictable list, out of
//! reclaim's reach, on both sides of v5.18's mlock_count (`mlock-count`): the counters,
//! munlock with a second locked mapping, truncation of a locked mapping, and reclaim
//! restoring an mlock it finds missing. The random-sequence checks are in `vm_prop`.

use crate::common;

use common::{
    build_sim, complete_io_and_ipis, dd_task_toml, file_toml, machine_toml, mm_of, mmap_at, run_on,
    task_id, task_report, touch_pages, vmstat,
};
use mmsim::kernel::KernelEra;
use mmsim::mm::check::{check_all, check_ptes};
use mmsim::mm::node::LruList;
use mmsim::mm::page::PAGE_SIZE;
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::vmstat::VmItem;
use mmsim::scenario::parse_scenario;
use mmsim::sim::{Features, Sim};
use mmsim::workload::OpResult;

/// examples/mlock_hog.toml (docs/EXPERIMENTS.md, "mlock") at 32 MiB: `db` maps 12 MiB of
/// anonymous memory (mlocked as `mlock` says) and holds it over three passes while `batch`
/// cycles 28 MiB through the rest twice, on `kernel` under `policy`.
fn hog(kernel: &str, policy: &str, mlock: &str) -> mmsim::run::RunReport {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/mlock_hog.toml");
    let sc = common::load_builtin(
        path,
        &[
            "machine.memory_per_node=32MiB",
            "tasks.db.passes=3",
            "tasks.db.think=200ms",
            "tasks.batch.passes=2",
            &format!("kernel={kernel}"),
            &format!("policy={policy}"),
            &format!("tasks.db.mlock={mlock}"),
        ],
    );
    let era: KernelEra = sc.kernel.expect("kernel given");
    common::run_completed(&sc, era, true, 5_000_000)
}

fn run_text(text: &str) -> mmsim::run::RunReport {
    let sc = parse_scenario(text, "mlock", &[]).expect("parses");
    let era: KernelEra = sc.kernel.expect("kernel given");
    common::run_completed(&sc, era, true, 5_000_000)
}

const HOG_PAGES: i64 = 12 * 256;

#[test]
fn mlocked_anonymous_memory_is_never_reclaimed() {
    for (kernel, policy) in [("4.2", "classic"), ("6.18", "classic"), ("6.18", "mglru")] {
        let locked = hog(kernel, policy, "true");
        let free = hog(kernel, policy, "false");
        let kernel = format!("{kernel} {policy}");
        let v = |r: &mmsim::run::RunReport, k: &str| r.vmstat.get(k).copied().unwrap_or(0);
        // Without mlock the hog's memory is swapped out while it thinks; with it, never.
        assert!(
            task_report(&free, "db").majflt > 0,
            "{kernel}: the unlocked db is swapped"
        );
        assert_eq!(task_report(&locked, "db").majflt, 0, "{kernel}");
        assert!(
            v(&locked, "pswpout") > 0,
            "{kernel}: batch is still swapped"
        );
        // Every page of the hog was mlocked and culled once, and munlocked and rescued by
        // the unmap at its end.
        for k in [
            "unevictable_pgs_mlocked",
            "unevictable_pgs_culled",
            "unevictable_pgs_munlocked",
            "unevictable_pgs_rescued",
        ] {
            assert_eq!(v(&locked, k), HOG_PAGES, "{kernel}: {k}");
            assert_eq!(v(&free, k), 0, "{kernel}: {k} without mlock");
        }
        assert_eq!(v(&locked, "nr_mlock"), 0, "{kernel}: all munlocked at exit");
        // The time series shows the locked buffer on the unevictable list while db runs
        // (before 5.18 a new page is culled when its CPU's add batch drains: a few may
        // wait there until the exit).
        let col = |r: &mmsim::run::RunReport| {
            let i = r.series_columns.iter().position(|c| c == "nr_unevictable");
            let i = i.expect("nr_unevictable is sampled");
            r.series.iter().map(|s| s.values[i]).max().unwrap_or(0)
        };
        let shown = col(&locked);
        assert!(
            shown <= HOG_PAGES && shown > HOG_PAGES - 15,
            "{kernel}: {shown}"
        );
        assert_eq!(col(&free), 0, "{kernel}");
        assert_eq!(v(&locked, "unevictable_pgs_cleared"), 0, "{kernel}");
    }
}

#[test]
fn onfault_mlocks_pages_as_they_fault_in() {
    let locked = hog("6.18", "classic", "onfault");
    let v = |k: &str| locked.vmstat.get(k).copied().unwrap_or(0);
    assert_eq!(task_report(&locked, "db").majflt, 0);
    assert_eq!(v("unevictable_pgs_mlocked"), HOG_PAGES);
    // The pages were faulted by the first pass, not by a populate: the pass's faults.
    assert_eq!(task_report(&locked, "db").minflt, HOG_PAGES as u64);
}

#[test]
fn a_bad_mlock_value_names_the_field() {
    let text = |v: &str| {
        format!(
            "name = \"m\"\n[machine]\ncpus_per_node = 1\nmemory_per_node = \"32MiB\"\n\n[[tasks]]\nname = \"db\"\n\
             program = \"anon\"\nsize = \"1MiB\"\nmlock = {v}\n"
        )
    };
    let err = parse_scenario(&text("\"yes\""), "db.toml", &[])
        .expect_err("rejected")
        .to_string();
    assert!(err.contains("db.toml"), "{err}");
    assert!(err.contains("db.toml:10"), "{err}");
    assert!(err.contains("mlock"), "{err}");
    assert!(err.contains("\"onfault\""), "{err}");
    let err = parse_scenario(&text("3"), "db.toml", &[])
        .expect_err("rejected")
        .to_string();
    assert!(err.contains("mlock"), "{err}");
    assert!(parse_scenario(&text("\"onfault\""), "db.toml", &[]).is_ok());
}

const FILE_PAGES: u64 = 32;

/// Two processes (`p0` on CPU 0, `p1` on CPU 1) and a 32-page file with data on disk.
fn two_process_machine(mlock_count: bool) -> (Sim, [usize; 2]) {
    let mut text = machine_toml("mlock", 2, "32MiB", Some("64MiB"), "1GiB", "/data");
    text += &file_toml("/data/f", FILE_PAGES * PAGE_SIZE, true);
    for t in 0..2 {
        text += &dd_task_toml(&format!("p{t}"), t, &format!("/tmp/x{t}"));
    }
    let mut f = Features::vanilla();
    f.mlock_count = mlock_count;
    let sim = build_sim(&text, "mlock", f);
    let tasks = [task_id(&sim, "p0"), task_id(&sim, "p1")];
    (sim, tasks)
}

/// Map /data/f shared read-only in task `t` and fault it all in; returns the address.
fn map_file(sim: &mut Sim, cpu: usize, tid: usize) -> u64 {
    run_on(sim, cpu, tid);
    let a = mmap_at(
        sim,
        tid,
        Some("/data/f"),
        FILE_PAGES * PAGE_SIZE,
        0,
        1,
        true,
    );
    run_on(sim, cpu, tid);
    for _ in 0..1000 {
        match touch_pages(sim, cpu, tid, a, FILE_PAGES, false) {
            Ok(_) => return a,
            Err(_) => {
                complete_io_and_ipis(sim);
            }
        }
    }
    panic!("the file never faulted in");
}

fn checked(sim: &Sim) {
    check_all(sim).expect("invariants");
    check_ptes(sim).expect("page tables");
}

fn mlocked_pages(sim: &Sim) -> i64 {
    vmstat(sim, VmItem::NrMlock)
}

#[test]
fn munlock_keeps_pages_another_locked_mapping_maps() {
    let n = FILE_PAGES as i64;
    for mlock_count in [false, true] {
        let (mut sim, [p0, p1]) = two_process_machine(mlock_count);
        let a0 = map_file(&mut sim, 0, p0);
        let a1 = map_file(&mut sim, 1, p1);
        run_on(&mut sim, 0, p0);
        assert_eq!(
            sim.sys_mlock(p0, a0, FILE_PAGES * PAGE_SIZE, true),
            OpResult::None
        );
        run_on(&mut sim, 1, p1);
        assert_eq!(
            sim.sys_mlock(p1, a1, FILE_PAGES * PAGE_SIZE, true),
            OpResult::None
        );
        checked(&sim);
        assert_eq!(mlocked_pages(&sim), n);
        assert_eq!(vmstat(&sim, VmItem::NrUnevictable), n);
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsCulled), n);
        // One process munlocks: the other still locks every page.
        run_on(&mut sim, 0, p0);
        assert_eq!(
            sim.sys_mlock(p0, a0, FILE_PAGES * PAGE_SIZE, false),
            OpResult::None
        );
        checked(&sim);
        assert_eq!(mlocked_pages(&sim), n, "mlock_count {mlock_count}");
        assert_eq!(vmstat(&sim, VmItem::NrUnevictable), n);
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsMunlocked), 0);
        // Before 5.18 the munlock cleared PG_mlocked and try_to_munlock's walk set it
        // again, counting a second mlock; from 5.18 the page only dropped one count.
        let relocked = if mlock_count { 0 } else { n };
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsMlocked), n + relocked);
        // The second munlock releases them to the inactive file list.
        run_on(&mut sim, 1, p1);
        assert_eq!(
            sim.sys_mlock(p1, a1, FILE_PAGES * PAGE_SIZE, false),
            OpResult::None
        );
        checked(&sim);
        assert_eq!(mlocked_pages(&sim), 0);
        assert_eq!(vmstat(&sim, VmItem::NrUnevictable), 0);
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsMunlocked), n);
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsRescued), n);
        let mm = mm_of(&sim, p1);
        let pfn = mmsim::mm::memory::pte::pfn(sim.mm(mm).pgtable.get(a1 / PAGE_SIZE));
        assert!(common::on_lru_list(&sim, pfn, LruList::InactiveFile));
    }
}

#[test]
fn an_mlock_range_must_be_mapped_and_splits_the_mappings_it_cuts() {
    let (mut sim, [p0, _]) = two_process_machine(true);
    let a0 = map_file(&mut sim, 0, p0);
    run_on(&mut sim, 0, p0);
    let len = FILE_PAGES * PAGE_SIZE;
    let mm = sim.tasks[p0].mm.unwrap();
    let vmas = |sim: &Sim| -> Vec<(u64, u64, bool)> {
        sim.mms[mm as usize]
            .as_ref()
            .unwrap()
            .vmas
            .values()
            .map(|v| {
                (
                    v.start - a0,
                    v.end - a0,
                    v.flags & mmsim::mm::rmap::VM_LOCKED != 0,
                )
            })
            .collect()
    };
    // Past the mapping's end is a hole: ENOMEM, as for_each_vma_range finds it.
    let r = sim.sys_mlock(p0, a0, len + PAGE_SIZE, true);
    assert_eq!(r, OpResult::Err(mmsim::workload::Errno::ENOMEM));
    assert_eq!(mlocked_pages(&sim), 0, "a refused call locks nothing");
    // Part of a mapping: mlock_fixup splits it, and only that part's page is locked.
    let p = PAGE_SIZE;
    assert_eq!(sim.sys_mlock(p0, a0 + p, p, true), OpResult::None);
    assert_eq!(
        vmas(&sim),
        vec![(0, p, false), (p, 2 * p, true), (2 * p, len, false)]
    );
    assert_eq!(mlocked_pages(&sim), 1);
    checked(&sim);
    // An unaligned start rounds down, the length up: the whole mapping, the locked middle
    // left as it is.
    assert_eq!(sim.sys_mlock(p0, a0 + 10, len - 10, true), OpResult::None);
    assert_eq!(mlocked_pages(&sim), FILE_PAGES as i64);
    assert!(vmas(&sim).iter().all(|v| v.2));
    // munlock of the middle page again: the VMAs stay split (no vma_merge here).
    assert_eq!(sim.sys_mlock(p0, a0 + p, p, false), OpResult::None);
    assert_eq!(mlocked_pages(&sim), FILE_PAGES as i64 - 1);
    assert_eq!(
        vmas(&sim),
        vec![(0, p, true), (p, 2 * p, false), (2 * p, len, true)]
    );
    checked(&sim);
}

#[test]
fn truncating_a_locked_mapping_munlocks_or_clears_by_era() {
    let n = FILE_PAGES as i64;
    for mlock_count in [false, true] {
        let (mut sim, [p0, _]) = two_process_machine(mlock_count);
        let a0 = map_file(&mut sim, 0, p0);
        run_on(&mut sim, 0, p0);
        assert_eq!(
            sim.sys_mlock(p0, a0, FILE_PAGES * PAGE_SIZE, true),
            OpResult::None
        );
        let mut progress = 0;
        let mut done = false;
        for _ in 0..1000 {
            run_on(&mut sim, 0, p0);
            if sim.sys_truncate("/data/f", 0, &mut progress).is_ok() {
                done = true;
                break;
            }
            complete_io_and_ipis(&mut sim);
        }
        assert!(done, "truncate finished");
        complete_io_and_ipis(&mut sim);
        checked(&sim);
        assert_eq!(mlocked_pages(&sim), 0);
        assert_eq!(vmstat(&sim, VmItem::NrUnevictable), 0);
        // From 5.18 the zap of a VM_LOCKED PTE munlocks; before, the last unmap of a page
        // still mlocked cleared it.
        let (munlocked, cleared) = if mlock_count { (n, 0) } else { (0, n) };
        assert_eq!(
            vmstat(&sim, VmItem::UnevictablePgsMunlocked),
            munlocked,
            "mlock_count {mlock_count}"
        );
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsCleared), cleared);
    }
}

#[test]
fn reclaim_restores_an_mlock_it_finds_missing() {
    let n = FILE_PAGES as i64;
    for mlock_count in [false, true] {
        let (mut sim, [p0, _]) = two_process_machine(mlock_count);
        let a0 = run_anon(&mut sim, p0);
        // VM_LOCKED set without mlocking the pages: what reclaim meets when mlock loses
        // the race for a page another CPU had isolated.
        let mm = mm_of(&sim, p0);
        sim.mm_mut(mm).vmas.get_mut(&a0).expect("vma").flags |= mmsim::mm::rmap::VM_LOCKED;
        assert_eq!(mlocked_pages(&sim), 0);
        run_on(&mut sim, 1, p0);
        for _ in 0..20 {
            sim.try_to_free_pages(Gfp::KERNEL);
            complete_io_and_ipis(&mut sim);
        }
        checked(&sim);
        // Each page reclaim met was mlocked and culled (reclaim need not meet them all:
        // a page it leaves on the active anon list stays as it was).
        let m = mlocked_pages(&sim);
        assert!(
            m > n / 2,
            "mlock_count {mlock_count}: {m} of {n} pages mlocked"
        );
        assert_eq!(vmstat(&sim, VmItem::NrUnevictable), m);
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsCulled), m);
        assert_eq!(vmstat(&sim, VmItem::UnevictablePgsMlocked), m);
        assert_eq!(
            vmstat(&sim, VmItem::Pswpout),
            0,
            "nothing locked is swapped"
        );
        // Before 5.18 reclaim gives the page a swap slot (add_to_swap) before
        // try_to_unmap finds the lock; the slot is freed when the page goes back.
        assert_eq!(vmstat(&sim, VmItem::NrSwapcached), 0, "no slot kept");
        assert_eq!(sim.mm(mm).rss_anon, FILE_PAGES, "still mapped");
    }
}

/// Map FILE_PAGES of private anonymous memory in `tid` and write every page.
fn run_anon(sim: &mut Sim, tid: usize) -> u64 {
    run_on(sim, 0, tid);
    let a = mmap_at(sim, tid, None, FILE_PAGES * PAGE_SIZE, 0, 3, false);
    run_on(sim, 0, tid);
    touch_pages(sim, 0, tid, a, FILE_PAGES, true).expect("anonymous faults do not wait");
    complete_io_and_ipis(sim);
    a
}

/// Two processes map one file with `mlock = true` (mmap-read) while a stream reads
/// another past RAM.
fn shared_lib_scenario(kernel: &str) -> String {
    machine_toml("mlock-file", 2, "32MiB", None, "1GiB", "/data").replacen(
        '\n',
        &format!("\nkernel = \"{kernel}\"\n"),
        1,
    ) + &file_toml("/data/lib", 1 << 20, true)
        + &file_toml("/data/big", 48 << 20, true)
        + r#"
[[tasks]]
name = "r"
replicas = 2
program = "mmap-read"
path = "/data/lib"
passes = 2
think = "100ms"
mlock = true

[[tasks]]
name = "stream"
cpu = 1
program = "read"
path = "/data/big"
"#
}

#[test]
fn two_processes_locking_one_file_count_by_era() {
    let n = 256;
    for (kernel, mlock_count) in [("4.14", false), ("6.18", true)] {
        let r = run_text(&shared_lib_scenario(kernel));
        let v = |k: &str| r.vmstat.get(k).copied().unwrap_or(0);
        // Each page is mlocked once by whichever mapping faults it first. When the first
        // reader exits, 4.14's munlock clears PG_mlocked and try_to_munlock's walk finds
        // the other reader's locked VMA and mlocks it again; 6.18 just drops a count.
        let mlocked = if mlock_count { n } else { 2 * n };
        assert_eq!(v("unevictable_pgs_mlocked"), mlocked, "{kernel}");
        assert_eq!(v("unevictable_pgs_munlocked"), n, "{kernel}");
        assert_eq!(v("nr_mlock"), 0, "{kernel}");
        assert!(v("unevictable_pgs_culled") > 0, "{kernel}");
        assert_eq!(task_report(&r, "r0").samples["pass"].len(), 2);
    }
}

#[test]
fn mlocked_memory_over_memory_max_ends_in_the_cgroups_oom() {
    let text = |mlock: bool| {
        format!(
            r#"name = "mlock-memcg"
kernel = "6.18"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[swap]
size = "128MiB"
preset = "ssd"

[[cgroups]]
name = "box"
memory_max = "8MiB"

[[tasks]]
name = "hog"
cgroup = "box"
program = "anon"
size = "12MiB"
passes = 2
mlock = {mlock}
"#
        )
    };
    let sc = |mlock| parse_scenario(&text(mlock), "mlock-memcg", &[]).expect("parses");
    let f = KernelEra::V6_18.features("patched").expect("preset");
    // Unlocked, 12 MiB in an 8 MiB cgroup swaps and completes.
    let free = common::run_sc(&sc(false), f.clone(), true, 5_000_000);
    let box_free = common::cgroup_report(&free, "box");
    assert_eq!(box_free.events.oom_kill, 0);
    assert!(free.vmstat["pswpout"] > 0);
    // Locked, nothing in the cgroup is reclaimable: the charge that crosses memory.max
    // finds nothing to scan and the cgroup's OOM killer takes the hog.
    let locked = common::run_sc(&sc(true), f, true, 5_000_000);
    let box_locked = common::cgroup_report(&locked, "box");
    assert_eq!(box_locked.events.oom_kill, 1);
    assert_eq!(locked.vmstat.get("pswpout").copied().unwrap_or(0), 0);
    let mlocked = locked.vmstat["unevictable_pgs_mlocked"];
    assert!(mlocked > 1900 && mlocked <= 2048, "{mlocked}");
    // The killed task's exit munlocks what it had locked.
    assert_eq!(locked.vmstat["unevictable_pgs_munlocked"], mlocked);
    assert_eq!(locked.vmstat["nr_mlock"], 0);
}
