//! The cgroup v1 memory controller's own files (`cgroup_version = 1`): memory.stat under
//! its v1 names (local and `total_`), memory.failcnt, memory.max_usage_in_bytes and the
//! usage files, in the report's `v1` (run.rs `CgroupV1Files`).

use crate::common;

use common::{cgroup_report, run_completed};
use mmsim::kernel::KernelEra;
use mmsim::run::{CgroupV1Files, RunReport, V1_UNLIMITED_BYTES};
use mmsim::scenario::{parse_scenario, Scenario};

const MIB: u64 = 1 << 20;
const MAX_STEPS: u64 = 30_000_000;

/// examples/zram_memcg.toml's workload, smaller: 32 MiB of anonymous memory re-written in
/// random chunks, 3 passes, in a 24 MiB cgroup swapping to zram (no swap readahead: each
/// fault charges one page), below a parent `top` limited to `top_max`.
fn anon_in_v1(top_max: &str) -> Scenario {
    anon_in_v1_memsw(top_max, None, "zram")
}

/// [`anon_in_v1`] with `box`'s memory.memsw.limit_in_bytes, swapping to `swap_preset`.
fn anon_in_v1_memsw(top_max: &str, memsw: Option<&str>, swap_preset: &str) -> Scenario {
    let memsw = memsw.map_or(String::new(), |m| format!("memsw_max = \"{m}\"\n"));
    let text = format!(
        r#"name = "anon-v1"
cgroup_version = 1
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[swap]
size = "256MiB"
preset = "{swap_preset}"
[[cgroups]]
name = "top"
memory_max = "{top_max}"
[[cgroups]]
name = "top/box"
memory_max = "24MiB"
{memsw}[[tasks]]
name = "worker"
cpu = 0
cgroup = "top/box"
program = "anon"
size = "32MiB"
passes = 3
pattern = "random"
"#
    );
    parse_scenario(&text, "anon-v1.toml", &[]).expect("scenario parses")
}

fn v1<'a>(r: &'a RunReport, name: &str) -> &'a CgroupV1Files {
    cgroup_report(r, name)
        .v1
        .as_ref()
        .unwrap_or_else(|| panic!("cgroup {name} has its v1 files"))
}

/// Each fault of the anonymous worker charges one page (a first touch, or a swap-in from
/// zram): memory.stat's pgpgin is its pgfault, kernel pages (its page tables, charged to
/// the cgroup too) are no pgpgin, and every charged page that left counts a pgpgout.
/// Limit reclaim's refused charges are memory.failcnt: at least one per `max` event (a
/// stock batch that does not fit fails too), counted in the cgroup whose limit refused.
#[test]
fn a_v1_cgroup_counts_its_charges_and_refusals() {
    let r = run_completed(&anon_in_v1("200MiB"), KernelEra::V6_18, true, MAX_STEPS);
    let b = v1(&r, "top/box");
    let s = &b.stat;
    assert!(s["pgfault"] > 8192, "{s:?}");
    assert_eq!(s["pgpgin"], s["pgfault"], "one charge per fault: {s:?}");
    assert!(s["pgmajfault"] > 0 && s["workingset_refault_anon"] > 0);
    // Everything the worker charged is freed at its exit, but for pages still in the
    // CPUs' LRU batches.
    assert!(s["pgpgout"] <= s["pgpgin"]);
    assert!(
        ((s["pgpgin"] - s["pgpgout"]) as u64) * 4096 <= b.usage_in_bytes,
        "{s:?} usage {}",
        b.usage_in_bytes
    );
    let events = &cgroup_report(&r, "top/box").events_local;
    assert!(events.max > 0);
    assert!(
        b.failcnt >= events.max,
        "failcnt {} max events {}",
        b.failcnt,
        events.max
    );
    assert_eq!(b.limit_in_bytes, 24 * MIB);
    assert_eq!(b.max_usage_in_bytes, 24 * MIB, "it filled its limit");
    // The parent never refused: its limit is far away. Its own counters are empty, its
    // totals its child's.
    let t = v1(&r, "top");
    assert_eq!(t.failcnt, 0);
    assert_eq!(t.stat["pgpgin"], 0);
    assert_eq!(t.stat["total_pgpgin"], s["pgpgin"]);
    assert_eq!(t.stat["total_pgfault"], s["total_pgfault"]);
    assert_eq!(
        s["total_pgfault"], s["pgfault"],
        "a leaf's totals are its own"
    );
    // A v2 run has no v1 files.
    let mut sc = anon_in_v1("200MiB");
    sc.cgroup_v1 = false;
    let r2 = run_completed(&sc, KernelEra::V6_18, false, MAX_STEPS);
    assert!(r2.cgroups.iter().all(|c| c.v1.is_none()));
}

/// hierarchical_memory_limit is the smallest limit from the cgroup up to the root; a
/// cgroup that sets none reads "no limit" as the kernel prints it (PAGE_COUNTER_MAX
/// pages), and memory+swap has no limit here.
#[test]
fn the_hierarchical_limit_is_the_smallest_up_to_the_root() {
    let r = run_completed(&anon_in_v1("16MiB"), KernelEra::V6_18, false, MAX_STEPS);
    let (t, b, root) = (v1(&r, "top"), v1(&r, "top/box"), v1(&r, "/"));
    assert_eq!(b.limit_in_bytes, 24 * MIB);
    assert_eq!(b.stat["hierarchical_memory_limit"], (16 * MIB) as i64);
    assert_eq!(t.stat["hierarchical_memory_limit"], (16 * MIB) as i64);
    assert_eq!(root.limit_in_bytes, V1_UNLIMITED_BYTES);
    assert_eq!(V1_UNLIMITED_BYTES, 9_223_372_036_854_771_712);
    assert_eq!(
        b.stat["hierarchical_memsw_limit"],
        V1_UNLIMITED_BYTES as i64
    );
    // Now `top` refuses the charges: its failcnt, not the child's.
    assert!(t.failcnt > 0);
    assert_eq!(b.failcnt, 0);
    assert_eq!(t.max_usage_in_bytes, 16 * MIB);
}

/// memory.stat's v1 keys follow the release: no shmem before 4.12, no workingset
/// refaults before 6.1, no swapcached before 6.7, no dirty before 4.2.
#[test]
fn the_v1_memory_stat_keys_follow_the_kernel_release() {
    let keys = |era: KernelEra| {
        let r = run_completed(&anon_in_v1("200MiB"), era, false, MAX_STEPS);
        let s = &v1(&r, "top/box").stat;
        [
            "shmem",
            "workingset_refault_anon",
            "swapcached",
            "dirty",
            "pgfault",
        ]
        .map(|k| s.contains_key(k) && s.contains_key(&format!("total_{k}")))
    };
    assert_eq!(keys(KernelEra::V4_2), [false, false, false, true, true]);
    assert_eq!(keys(KernelEra::V4_14), [true, false, false, true, true]);
    assert_eq!(keys(KernelEra::V6_1), [true, true, false, true, true]);
    assert_eq!(keys(KernelEra::V6_18), [true, true, true, true, true]);
}

/// A folio is one pgpgin whatever its size: with 6.18's large folios a file read
/// sequentially is charged in far fewer events than pages, on 6.1 one event per page.
#[test]
fn a_large_folio_is_one_charge_event() {
    let text = "cgroup_version = 1\n".to_string()
        + &common::machine_toml("folios-v1", 2, "512MiB", None, "1GiB", "/data")
        + &common::file_toml("/data/f", 16 * MIB, true)
        + "\n[[cgroups]]\nname = \"box\"\n\
           [[tasks]]\nname = \"reader\"\ncpu = 0\ncgroup = \"box\"\nprogram = \"read\"\n\
           path = \"/data/f\"\nblock_size = \"64KiB\"\npasses = 1\n";
    let sc = parse_scenario(&text, "folios-v1.toml", &[]).expect("scenario parses");
    let stat = |era: KernelEra| {
        let r = run_completed(&sc, era, false, MAX_STEPS);
        v1(&r, "box").stat.clone()
    };
    let (old, new) = (stat(KernelEra::V6_1), stat(KernelEra::V6_18));
    let pages = (16 * MIB / 4096) as i64;
    assert_eq!(old["cache"], new["cache"]);
    // The file stays cached (and the pages of its directory with it).
    assert!(
        (pages..pages + 16).contains(&(old["cache"] / 4096)),
        "{old:?}"
    );
    assert!(old["pgpgin"] >= pages, "{old:?}");
    assert!(new["pgpgin"] * 4 < pages, "{new:?}");
}

/// memory.memsw.limit_in_bytes bounds memory and swap together: 32 MiB re-written in a
/// 24 MiB cgroup swaps out 8 MiB and more; with memsw at 28 MiB the swap holds about
/// 4 MiB, the limit reclaim the memsw counter calls may not swap, and the worker is
/// OOM-killed in its cgroup; with 48 MiB it runs to the end, its swap never refused.
/// memory.memsw.failcnt counts the refusals before 6.15 (`memsw-failcnt-untracked` off),
/// and reads 0 since, as it does on Linux 6.18.44 after such an OOM kill.
#[test]
fn a_memsw_limit_bounds_memory_and_swap_together() {
    let run_with = |memsw: &str, untracked: bool| {
        let sc = anon_in_v1_memsw("200MiB", Some(memsw), "zram");
        let mut f = KernelEra::V6_18.features("patched").expect("preset");
        assert!(f.memsw_failcnt_untracked, "6.18 has the rule");
        f.set("memsw-failcnt-untracked", untracked);
        common::run_sc(&sc, f, true, MAX_STEPS)
    };
    let run = |memsw: &str| run_with(memsw, false);
    let untracked = run_with("28MiB", true);
    let u = cgroup_report(&untracked, "top/box");
    assert!(u.events_local.oom_kill >= 1, "{:?}", u.events_local);
    let uv = u.v1.as_ref().expect("v1 files");
    assert_eq!(uv.memsw_failcnt, 0);
    assert!(uv.failcnt > 0, "the memory counter still counts");
    let tight = run("28MiB");
    let b = cgroup_report(&tight, "top/box");
    assert!(b.events_local.oom_kill >= 1, "{:?}", b.events_local);
    assert!(common::oom_killed(&tight).contains(&"worker"));
    let v = b.v1.as_ref().expect("v1 files");
    assert!(v.memsw_failcnt > 0);
    assert_eq!(v.memsw_limit_in_bytes, 28 * MIB);
    // The memsw watermark stops at the limit (no charge past it), above memory's.
    let memsw_max = v
        .memsw_max_usage_in_bytes
        .expect("a non-root cgroup's watermark");
    assert!(memsw_max <= 28 * MIB, "memsw max usage {memsw_max}");
    assert!(
        memsw_max > v.max_usage_in_bytes,
        "{memsw_max} {}",
        v.max_usage_in_bytes
    );
    assert_eq!(v.stat["hierarchical_memsw_limit"], (28 * MIB) as i64);
    // Swap takes what memsw leaves memory: about 4 MiB (a little more while the cgroup
    // is below its memory limit).
    assert!(b.swap_peak < 5 * MIB, "swap peak {}", b.swap_peak);
    let roomy = run("48MiB");
    let b = cgroup_report(&roomy, "top/box");
    assert_eq!(roomy.end, mmsim::sim::RunEnd::Completed);
    assert!(common::oom_killed(&roomy).is_empty());
    let v = b.v1.as_ref().unwrap();
    assert_eq!(v.memsw_failcnt, 0);
    assert!(b.swap_peak >= 8 * MIB, "swap peak {}", b.swap_peak);
    // Memory and swap together peak at the 32 MiB touched and a little more (a page
    // charged on swap-in before its slot is uncharged, page tables), under 48 MiB.
    let memsw_max = v
        .memsw_max_usage_in_bytes
        .expect("a non-root cgroup's watermark");
    assert!(
        (32 * MIB..36 * MIB).contains(&memsw_max),
        "memsw max usage {memsw_max}"
    );
    // The root's memsw counter is not kept.
    assert_eq!(
        cgroup_report(&roomy, "/")
            .v1
            .as_ref()
            .unwrap()
            .memsw_max_usage_in_bytes,
        None
    );
    // Without a memsw limit the same run swaps as it did: the limit is the only change.
    let free = run_completed(&anon_in_v1("200MiB"), KernelEra::V6_18, false, MAX_STEPS);
    let (a, c) = (
        cgroup_report(&roomy, "top/box"),
        cgroup_report(&free, "top/box"),
    );
    assert_eq!(a.stat["pgscan"], c.stat["pgscan"]);
    assert_eq!(
        a.v1.as_ref().unwrap().failcnt,
        c.v1.as_ref().unwrap().failcnt
    );
}

/// A swap slot's charge lives as long as v1 or v2 says: on v2 from the slot's allocation
/// to its free, so swapped-in pages that keep their slots in the swap cache (an SSD's;
/// zram frees them at once) stay charged to swap as well as to memory; on v1 from the
/// page's swap-out to its swap-in (mem_cgroup_swapout, mem_cgroup_swapin_uncharge_swap),
/// so memory and swap together stay about the working set: 32 MiB in a 24 MiB cgroup
/// never has much more than 8 MiB charged to swap.
#[test]
fn v1_charges_a_swap_slot_from_swap_out_to_swap_in() {
    let swap_peak = |v1: bool| {
        let mut sc = anon_in_v1_memsw("200MiB", None, "ssd");
        sc.cgroup_v1 = v1;
        let f = KernelEra::V6_18.features("patched").expect("preset");
        let r = common::run_sc(&sc, f, false, MAX_STEPS);
        assert_eq!(r.end, mmsim::sim::RunEnd::Completed);
        cgroup_report(&r, "top/box").swap_peak
    };
    let (v1, v2) = (swap_peak(true), swap_peak(false));
    assert!(v1 <= 9 * MIB, "v1 swap peak {v1}");
    assert!(v2 >= 16 * MIB, "v2 swap peak {v2}");
}

/// Two cgroups each re-reading a 12 MiB file on a 16 MiB machine (global reclaim by kswapd
/// and direct reclaim). A soft limit on `a` makes global reclaim take from `a` first
/// (memcg1_soft_limit_reclaim before shrink_node): `b` keeps its file and is scanned far
/// less; without it the two are reclaimed alike. Under MGLRU the soft limit tree is not
/// used (6.3+): the soft limit changes nothing.
fn two_readers(soft: &str, policy: &str) -> RunReport {
    let text = format!(
        r#"name = "soft"
cgroup_version = 1
policy = "{policy}"
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "16MiB"
[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"
[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"
[[files]]
path = "/data/a"
size = "12MiB"
data = true
[[files]]
path = "/data/b"
size = "12MiB"
data = true
[[cgroups]]
name = "a"
soft_limit = "{soft}"
[[cgroups]]
name = "b"
[[tasks]]
name = "ra"
cpu = 0
cgroup = "a"
program = "read"
path = "/data/a"
passes = 4
[[tasks]]
name = "rb"
cpu = 1
cgroup = "b"
program = "read"
path = "/data/b"
passes = 4
"#
    );
    let sc = parse_scenario(&text, "soft.toml", &[]).expect("scenario parses");
    run_completed(&sc, KernelEra::V6_18, false, MAX_STEPS)
}

#[test]
fn global_reclaim_takes_from_the_cgroup_above_its_soft_limit_first() {
    let scan = |r: &RunReport, name: &str| cgroup_report(r, name).stat["pgscan"];
    let soft = two_readers("2MiB", "classic");
    let (a, b) = (scan(&soft, "a"), scan(&soft, "b"));
    assert!(a > 4 * b.max(1), "with a soft limit on a: a {a}, b {b}");
    let none = two_readers("max", "classic");
    let (a, b) = (scan(&none, "a"), scan(&none, "b"));
    assert!(a < 2 * b && b < 2 * a, "without: a {a}, b {b}");
    // MGLRU keeps no soft limit tree: the same run with and without the limit.
    let (m1, m2) = (two_readers("2MiB", "mglru"), two_readers("max", "mglru"));
    assert_eq!(scan(&m1, "a"), scan(&m2, "a"));
    assert_eq!(scan(&m1, "b"), scan(&m2, "b"));
}

/// cgroup v1's memory.swappiness is the cgroup's own anon/file balance
/// (mem_cgroup_swappiness): `anon_in_v1`'s worker (anonymous memory only) swaps under its
/// 24 MiB limit at the default 60; at `box`'s swappiness 0 its limit reclaim scans file
/// pages only (get_scan_count's SCAN_FILE for cgroup reclaim at swappiness 0; not even
/// SCAN_EQUAL at priority 0), finds none and the memcg OOM killer kills it without a page
/// swapped — as Linux 6.18.44 killed `host_anon --size 32MiB --passes 3 --pattern random
/// --memory-max 24MiB --swappiness 0` (60: 10,745 pages swapped out). A child created
/// below a parent set to 0 has 0 (mem_cgroup_css_alloc copies the parent's); cgroup v2,
/// with no per-cgroup value, reads vm.swappiness (the key is an error there, so the test
/// sets it on the parsed scenario).
#[test]
fn a_v1_cgroup_swappiness_of_0_keeps_its_limit_reclaim_from_swapping() {
    let run = |top: Option<u64>, bx: Option<u64>, v1: bool| {
        let mut sc = anon_in_v1_memsw("200MiB", None, "ssd");
        sc.cgroup_v1 = v1;
        sc.cgroups[0].swappiness = top;
        sc.cgroups[1].swappiness = bx;
        let f = KernelEra::V6_18.features("patched").expect("preset");
        let r = common::run_sc(&sc, f, false, MAX_STEPS);
        assert_eq!(r.end, mmsim::sim::RunEnd::Completed);
        let swapped = r.vmstat.get("pswpout").copied().unwrap_or(0);
        (swapped, cgroup_report(&r, "top/box").events.oom_kill)
    };
    let default = run(None, None, true);
    assert!(
        default.0 > 1000 && default.1 == 0,
        "at swappiness 60: {default:?}"
    );
    assert_eq!(run(None, Some(0), true), (0, 1), "box at swappiness 0");
    assert_eq!(run(Some(0), None, true), (0, 1), "box inherits top's 0");
    assert_eq!(
        run(Some(0), Some(60), true),
        default,
        "box's own 60 over top's 0"
    );
    assert_eq!(
        run(Some(0), None, false),
        run(None, None, false),
        "v2: vm.swappiness"
    );
}

/// The root's memory.max_usage_in_bytes is its page_counter's watermark, and only the
/// other cgroups' charges reach that counter (try_charge leaves the root's own pages
/// uncharged): a task of the root cgroup touching 48 MiB beside one of `box` touching
/// 8 MiB leaves the root's watermark at `box`'s.
#[test]
fn the_v1_roots_max_usage_counts_only_the_other_cgroups() {
    let text = r#"name = "root-v1"
cgroup_version = 1
[machine]
nodes = 1
cpus_per_node = 2
memory_per_node = "256MiB"
[[cgroups]]
name = "box"
memory_max = "16MiB"
[[tasks]]
name = "big"
cpu = 0
program = "anon"
size = "48MiB"
passes = 1
[[tasks]]
name = "small"
cpu = 1
cgroup = "box"
program = "anon"
size = "8MiB"
passes = 1
"#;
    let sc = parse_scenario(text, "root-v1.toml", &[]).expect("scenario parses");
    let r = run_completed(&sc, KernelEra::V6_18, true, MAX_STEPS);
    let root = v1(&r, "/");
    let b = v1(&r, "box");
    assert!(
        b.max_usage_in_bytes >= 8 * MIB,
        "box {}",
        b.max_usage_in_bytes
    );
    assert_eq!(root.max_usage_in_bytes, b.max_usage_in_bytes);
}
