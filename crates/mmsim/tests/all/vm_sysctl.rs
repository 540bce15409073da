//! The `[vm]` table: /proc/sys/vm's swappiness, dirty_ratio, dirty_background_ratio and
//! vfs_cache_pressure — their checks, and what each changes in reclaim and writeback.

use crate::common;

use common::{unit_machine_toml, UnitMachine};
use mmsim::kernel::KernelEra;
use mmsim::mm::memcontrol::ROOT_MEM_CGROUP;
use mmsim::mm::page_alloc::Gfp;
use mmsim::mm::vmstat::VmItem;
use mmsim::run::RunReport;
use mmsim::scenario::{parse_scenario, Scenario, VmSysctl};
use mmsim::workload::OpResult;

const BASE: &str = r#"name = "t"
kernel = "6.18"

[machine]
cpus_per_node = 1
memory_per_node = "64MiB"

[[tasks]]
name = "a"
program = "anon"
size = "1MiB"
"#;

fn parse(text: &str) -> Result<Scenario, mmsim::scenario::ScenarioError> {
    parse_scenario(text, "t.toml", &[])
}

/// `BASE` with a `[vm]` table of `body` (line 14 is its first key).
fn with_vm(body: &str) -> String {
    format!("{BASE}\n[vm]\n{body}\n")
}

#[test]
fn without_a_vm_table_the_kernels_defaults_hold() {
    let sc = parse(BASE).expect("valid");
    assert_eq!(sc.vm, VmSysctl::default());
    assert_eq!(
        (
            sc.vm.swappiness,
            sc.vm.dirty_ratio,
            sc.vm.dirty_background_ratio,
            sc.vm.vfs_cache_pressure
        ),
        (60, 20, 10, 100)
    );
    let sc = parse(&with_vm(
        "swappiness = 200\ndirty_ratio = 5\ndirty_background_ratio = 2\nvfs_cache_pressure = 500",
    ))
    .expect("valid");
    assert_eq!(
        (
            sc.vm.swappiness,
            sc.vm.dirty_ratio,
            sc.vm.dirty_background_ratio,
            sc.vm.vfs_cache_pressure
        ),
        (200, 5, 2, 500)
    );
}

#[test]
fn bad_vm_values_name_the_file_line_and_field() {
    let cases: &[(&str, &str, &str)] = &[
        ("swappiness = 201", "vm.swappiness", "between 0 and 200"),
        ("swappiness = -1", "vm.swappiness", ""),
        ("swappiness = \"high\"", "vm.swappiness", ""),
        ("dirty_ratio = 101", "vm.dirty_ratio", "between 0 and 100"),
        (
            "dirty_background_ratio = 1000",
            "vm.dirty_background_ratio",
            "between 0 and 100",
        ),
        (
            "vfs_cache_pressure = 3000000000",
            "vm.vfs_cache_pressure",
            "between 0 and 2147483647",
        ),
        (
            "swapiness = 10",
            "vm.swapiness",
            "expected one of: swappiness",
        ),
    ];
    for (body, field, msg) in cases {
        let err = parse(&with_vm(body)).expect_err(body);
        assert_eq!(err.file, "t.toml", "{err}");
        assert_eq!(err.line, Some(14), "{body}: {err}");
        assert_eq!(err.field, *field, "{err}");
        assert!(err.message.contains(msg), "{body}: {err}");
    }
    let text = BASE.replacen("kernel = \"6.18\"\n", "kernel = \"6.18\"\nvm = 3\n", 1);
    let err = parse(&text).expect_err("vm must be a table");
    assert_eq!((err.line, err.field.as_str()), (Some(3), "vm"), "{err}");
}

#[test]
fn swappiness_above_100_needs_kernel_5_8() {
    let text = with_vm("swappiness = 150").replace("kernel = \"6.18\"", "kernel = \"4.14\"");
    let err = parse(&text).expect_err("4.14 caps swappiness at 100");
    assert_eq!((err.line, err.field.as_str()), (Some(14), "vm.swappiness"));
    assert!(err.message.contains("from kernel 5.8"), "{err}");
    // 100 is fine on 4.14; 150 on 6.1. A run forced onto an older era is refused too.
    parse(&with_vm("swappiness = 100").replace("\"6.18\"", "\"4.14\"")).expect("valid");
    let sc = parse(&with_vm("swappiness = 150").replace("\"6.18\"", "\"6.1\"")).expect("valid");
    let err = mmsim::sim::Sim::new(&sc, KernelEra::V4_14.features("patched").expect("preset"))
        .err()
        .expect("refused on 4.14's rules");
    assert!(
        err.contains("vm.swappiness = 150 needs kernel 5.8"),
        "{err}"
    );
}

#[test]
fn set_reaches_the_vm_table_even_when_the_file_has_none() {
    let sc = parse_scenario(BASE, "t.toml", &["vm.swappiness=5".to_string()]).expect("valid");
    assert_eq!(sc.vm.swappiness, 5);
    let err = parse_scenario(BASE, "t.toml", &["vm.swappiness=300".to_string()])
        .expect_err("out of range");
    assert!(err.message.contains("between 0 and 200"), "{err}");
}

/// examples/anon_file_memcg.toml at a quarter of its size: 16 MiB of anonymous memory
/// touched every 100 ms beside a 16 MiB file read 4 times, in a 24 MiB cgroup, swapping to
/// zram; vm.swappiness as given.
fn anon_beside_file(swappiness: u64) -> RunReport {
    let sets = [
        format!("vm.swappiness={swappiness}"),
        "tasks.worker.size=16MiB".to_string(),
        "tasks.worker.passes=20".to_string(),
        "files.0.size=16MiB".to_string(),
        "cgroups.0.memory_max=24MiB".to_string(),
    ];
    anon_file_memcg(&sets, KernelEra::V6_18.features("patched").expect("preset"))
}

/// examples/anon_file_memcg.toml with `sets`, run to completion with `features`.
pub(crate) fn anon_file_memcg(sets: &[String], features: mmsim::sim::Features) -> RunReport {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/anon_file_memcg.toml"
    ))
    .expect("the example");
    let sc = parse_scenario(&text, "anon_file_memcg.toml", sets).expect("valid");
    let r = common::run_sc(&sc, features, false, 50_000_000);
    assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{:?}", r.end);
    r
}

/// get_scan_count: a cgroup's reclaim with swappiness 0 takes file pages only; the higher
/// the swappiness, the more of the anonymous set goes to swap and the more of the file
/// stays cached.
#[test]
fn swappiness_moves_a_cgroups_reclaim_between_anon_and_file() {
    let (none, default, most) = (
        anon_beside_file(0),
        anon_beside_file(60),
        anon_beside_file(200),
    );
    let v = |r: &RunReport, k: &str| r.vmstat.get(k).copied().unwrap_or(0);
    assert_eq!(v(&none, "pgscan_anon"), 0, "swappiness 0 scans no anon");
    assert_eq!(v(&none, "pswpout"), 0);
    assert!(v(&default, "pgscan_anon") > 0, "60 does");
    assert!(
        v(&most, "pswpout") > v(&default, "pswpout") + 1000,
        "200 swaps more: {} vs {}",
        v(&most, "pswpout"),
        v(&default, "pswpout")
    );
    assert!(
        v(&most, "workingset_refault_file") * 2 < v(&default, "workingset_refault_file"),
        "and keeps more of the file: {} vs {} refaults",
        v(&most, "workingset_refault_file"),
        v(&default, "workingset_refault_file")
    );
}

fn machine() -> UnitMachine {
    let text = unit_machine_toml(
        "vm",
        "64MiB",
        "program = \"dd\"\npath = \"/mnt/dd\"\nsize = \"4KiB\"\n",
    );
    UnitMachine::new(&text, KernelEra::V6_18.features("patched").expect("preset"))
}

/// domain_dirty_limits: the thresholds are the ratios of the dirtyable memory (free and
/// file LRU pages); a background ratio at or above the dirty ratio counts as half of it.
#[test]
fn dirty_ratios_set_the_writeback_thresholds() {
    let mut m = machine();
    let dirtyable = (m.sim.vmstat.get(VmItem::NrFreePages)
        + m.sim.vmstat.get(VmItem::NrInactiveFile)
        + m.sim.vmstat.get(VmItem::NrActiveFile)) as u64;
    assert_eq!(
        m.sim.global_dirty_limits(),
        (dirtyable * 10 / 100, dirtyable * 20 / 100),
        "the defaults"
    );
    m.sim.vm.dirty_ratio = 40;
    m.sim.vm.dirty_background_ratio = 5;
    assert_eq!(
        m.sim.global_dirty_limits(),
        (dirtyable * 5 / 100, dirtyable * 40 / 100)
    );
    m.sim.vm.dirty_ratio = 30;
    m.sim.vm.dirty_background_ratio = 30;
    let thresh = dirtyable * 30 / 100;
    assert_eq!(m.sim.global_dirty_limits(), (thresh / 2, thresh));
}

/// `n` files created and closed: their dentries and inodes wait on the superblock's lists.
fn unused_dentries(m: &mut UnitMachine, n: u64) {
    let tid = m.tid;
    for i in 0..n {
        let path = format!("/mnt/f{i}");
        let mut progress = 0;
        let fd = match m.sim.sys_open(tid, &path, true, false, &mut progress) {
            Ok(OpResult::Fd(fd)) => fd,
            other => panic!("open {path}: {other:?}"),
        };
        assert_eq!(m.sim.sys_close(tid, fd), Ok(OpResult::None));
    }
}

/// super_cache_count scales the unused dentries and inodes by vm.vfs_cache_pressure
/// (vfs_pressure_ratio): 40 unused objects at priority 0 are a scan of twice the freeable
/// count (do_shrink_slab's cap), so 0 scans nothing, 50 scans 40, 100 scans 80 and 200
/// scans 160.
#[test]
fn vfs_cache_pressure_scales_what_the_superblock_shrinker_scans() {
    for (pressure, scanned) in [(0, 0), (50, 40), (100, 80), (200, 160)] {
        let mut m = machine();
        m.sim.vm.vfs_cache_pressure = pressure;
        unused_dentries(&mut m, 40);
        let objects = {
            let sb = m
                .sim
                .lruvec(ROOT_MEM_CGROUP, 0)
                .vfs
                .sb(1)
                .expect("/mnt's lists");
            sb.nr_dentries + sb.nr_inodes
        };
        assert_eq!(objects, 40, "40 unused objects on the lists");
        let freed = m
            .sim
            .shrink_slab_vfs(0, ROOT_MEM_CGROUP, 0, Gfp::KERNEL, false);
        assert_eq!(
            m.sim.vmstat.get(VmItem::SlabsScanned),
            scanned,
            "vfs_cache_pressure {pressure}"
        );
        assert_eq!(freed == 0, pressure == 0, "vfs_cache_pressure {pressure}");
        m.check();
    }
}
