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
        (
            "watermark_scale_factor = 0",
            "vm.watermark_scale_factor",
            "between 1 and 3000",
        ),
        (
            "watermark_scale_factor = 3001",
            "vm.watermark_scale_factor",
            "between 1 and 3000",
        ),
        (
            "min_free_kbytes = 65536",
            "vm.min_free_kbytes",
            "the machine has 65536 KiB",
        ),
        (
            "min_free_kbytes = 3000000000",
            "vm.min_free_kbytes",
            "between 0 and 2147483647",
        ),
        (
            "dirty_bytes = 4096",
            "vm.dirty_bytes",
            "at least 8192 bytes",
        ),
        (
            "dirty_background_bytes = 0",
            "vm.dirty_background_bytes",
            "at least 1 bytes",
        ),
        ("dirty_bytes = \"lots\"", "vm.dirty_bytes", "invalid size"),
        // Writing one of a ratio and its bytes zeroes the other: a table gives one.
        (
            "dirty_bytes = \"1MiB\"\ndirty_ratio = 10",
            "vm.dirty_bytes",
            "not both",
        ),
        (
            "dirty_background_bytes = \"1MiB\"\ndirty_background_ratio = 5",
            "vm.dirty_background_bytes",
            "not both",
        ),
        (
            "dirty_expire_centisecs = -1",
            "vm.dirty_expire_centisecs",
            "",
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

/// The dirtyable memory of a 6.18 machine as global_dirtyable_memory counts it: the free
/// pages less the reserve (the one node's high watermark, `dirtyable-reserve`), the file
/// LRU, and one.
fn dirtyable(m: &UnitMachine) -> u64 {
    let high: u64 = m.sim.nodes.iter().map(|n| n.watermark.high).sum();
    m.sim.vmstat.get(VmItem::NrFreePages) as u64 - high
        + (m.sim.vmstat.get(VmItem::NrInactiveFile) + m.sim.vmstat.get(VmItem::NrActiveFile)) as u64
        + 1
}

/// `pct` % of `pages` as 6.18's domain_dirty_limits takes it: (pct × 4096) / 100 in
/// 4096ths (`dirty-ratio-page-units`).
fn share(pages: u64, pct: u64) -> u64 {
    pct * 4096 / 100 * pages / 4096
}

/// domain_dirty_limits: the thresholds are the ratios of the dirtyable memory; a
/// background ratio at or above the dirty ratio counts as half of it.
#[test]
fn dirty_ratios_set_the_writeback_thresholds() {
    let mut m = machine();
    let dirtyable = dirtyable(&m);
    assert_eq!(
        m.sim.global_dirty_limits(),
        (share(dirtyable, 10), share(dirtyable, 20)),
        "the defaults"
    );
    m.sim.vm.dirty_ratio = 40;
    m.sim.vm.dirty_background_ratio = 5;
    assert_eq!(
        m.sim.global_dirty_limits(),
        (share(dirtyable, 5), share(dirtyable, 40))
    );
    m.sim.vm.dirty_ratio = 30;
    m.sim.vm.dirty_background_ratio = 30;
    let thresh = share(dirtyable, 30);
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

#[test]
fn watermark_and_writeback_sysctls_parse_as_the_kernel_takes_them() {
    let sc = parse(&with_vm(
        "min_free_kbytes = 4096\nwatermark_scale_factor = 3000\ndirty_bytes = \"1MiB\"\n\
         dirty_background_bytes = 65536\ndirty_expire_centisecs = 0\n\
         dirty_writeback_centisecs = 0",
    ))
    .expect("valid");
    let v = sc.vm;
    assert_eq!(v.min_free_kbytes, Some(4096));
    assert_eq!(v.watermark_scale_factor, 3000);
    // Writing dirty_bytes zeroes dirty_ratio (and the background pair likewise).
    assert_eq!((v.dirty_bytes, v.dirty_ratio), (1 << 20, 0));
    assert_eq!(
        (v.dirty_background_bytes, v.dirty_background_ratio),
        (65536, 0)
    );
    assert_eq!(
        (v.dirty_expire_centisecs, v.dirty_writeback_centisecs),
        (0, 0)
    );
    assert_eq!(
        v.dirty_writeback_interval_ps(),
        None,
        "0 turns the periodic flush off"
    );
    let d = VmSysctl::default();
    assert_eq!(d.min_free_kbytes, None);
    assert_eq!(
        (
            d.watermark_scale_factor,
            d.dirty_bytes,
            d.dirty_background_bytes
        ),
        (10, 0, 0)
    );
    assert_eq!(d.dirty_writeback_interval_ps(), Some(5_000_000_000_000));
    assert_eq!(d.dirty_expire_ps(), 30_000_000_000_000);
}

/// vm.watermark_scale_factor came in 4.6 with a maximum of 1000, raised to 3000 in 5.17:
/// a scenario naming an older kernel is refused at its line, a run on older rules (or with
/// the rule turned off) when it starts.
#[test]
fn watermark_scale_factor_follows_the_kernels_range() {
    let on = |k: &str, wsf: u64| {
        parse(&with_vm(&format!("watermark_scale_factor = {wsf}")).replace("\"6.18\"", k))
    };
    let err = on("\"4.4\"", 20).expect_err("4.4 has no such sysctl");
    assert_eq!(
        (err.line, err.field.as_str()),
        (Some(14), "vm.watermark_scale_factor")
    );
    assert!(err.message.contains("from kernel 4.6"), "{err}");
    // Unless the scenario turns the 4.6 rule on (and off on a later kernel).
    let ruled = |k: &str, rule: bool| {
        parse(
            &with_vm("watermark_scale_factor = 20")
                .replace("\"6.18\"", k)
                .replace(
                    "\n[machine]",
                    &format!("\n[features]\nwatermark-scale-factor = {rule}\n\n[machine]"),
                ),
        )
    };
    ruled("\"4.4\"", true).expect("the rule on");
    let err = ruled("\"6.18\"", false).expect_err("the rule off");
    assert_eq!(err.field, "vm.watermark_scale_factor", "{err}");
    let err = on("\"5.4\"", 2000).expect_err("5.4 stops at 1000");
    assert!(
        err.message.contains("at most 1000 before kernel 5.17"),
        "{err}"
    );
    on("\"5.4\"", 1000).expect("5.4 takes 1000");
    on("\"5.17\"", 3000).expect("5.17 takes 3000");
    on("\"4.4\"", 10).expect_err("no such sysctl on 4.4, whatever the value");
    let sc = on("\"6.18\"", 2000).expect("valid");
    let start = |f: mmsim::sim::Features| mmsim::sim::Sim::new(&sc, f).err();
    let err = start(KernelEra::V4_14.features("patched").expect("preset")).expect("4.14");
    assert!(err.contains("at most 1000 before kernel 5.17"), "{err}");
    let mut f = KernelEra::V6_18.features("patched").expect("preset");
    assert!(f.set("watermark-scale-factor", false), "a rule");
    let err = start(f).expect("the rule off");
    assert!(
        err.contains("needs the rule `watermark-scale-factor`"),
        "{err}"
    );
    assert!(start(KernelEra::V6_18.features("patched").expect("preset")).is_none());
}

/// __setup_per_zone_wmarks with the sysctls as written. Hand-derived for 64 MiB (16,384
/// pages): min_free_kbytes 8,192 is a min watermark of 2,048 pages; the distance is the
/// larger of min / 4 = 512 and watermark_scale_factor / 10,000 of the pages — 327 at 200,
/// 1,638 at 1,000. The default min_free_kbytes is sqrt(65,536 × 16) = 1,024 KiB (256
/// pages), distance 64.
#[test]
fn min_free_kbytes_and_watermark_scale_factor_set_the_watermarks() {
    let marks = |body: &str| {
        let sc = parse(&with_vm(body)).expect("valid");
        let sim = mmsim::sim::Sim::new(&sc, KernelEra::V6_18.features("patched").expect("p"))
            .expect("starts");
        let w = sim.nodes[0].watermark;
        (w.min, w.low, w.high)
    };
    assert_eq!(marks("swappiness = 60"), (256, 320, 384));
    assert_eq!(marks("min_free_kbytes = 8192"), (2048, 2560, 3072));
    assert_eq!(
        marks("min_free_kbytes = 8192\nwatermark_scale_factor = 200"),
        (2048, 2560, 3072)
    );
    assert_eq!(
        marks("min_free_kbytes = 8192\nwatermark_scale_factor = 1000"),
        (2048, 3686, 5324)
    );
    assert_eq!(marks("watermark_scale_factor = 1000"), (256, 1894, 3532));
    assert_eq!(marks("min_free_kbytes = 0"), (0, 16, 32));
}

/// stream-read at 64 MiB on 6.18's rules: kswapd wakes at the low watermark and reclaims
/// to the high one, so a wider distance (watermark_scale_factor 300: 491 pages instead of
/// 64) means fewer, longer kswapd runs and more memory left free.
#[test]
fn a_larger_watermark_scale_factor_wakes_kswapd_less_and_keeps_more_free() {
    let run = |wsf: u64| {
        let sets = [
            "kernel=6.18".to_string(),
            "machine.memory_per_node=64MiB".to_string(),
            format!("vm.watermark_scale_factor={wsf}"),
        ];
        let sc = mmsim::scenario::load_scenario("stream-read", &sets).expect("valid");
        run_6_18(&sc)
    };
    let (narrow, wide) = (run(10), run(300));
    let v = |r: &RunReport, k: &str| r.vmstat.get(k).copied().unwrap_or(0);
    assert!(
        v(&wide, "pageoutrun") * 3 < v(&narrow, "pageoutrun"),
        "kswapd runs: {} at 300, {} at 10",
        v(&wide, "pageoutrun"),
        v(&narrow, "pageoutrun")
    );
    assert!(
        v(&wide, "nr_free_pages") > v(&narrow, "nr_free_pages") + 300,
        "free at the end: {} at 300, {} at 10",
        v(&wide, "nr_free_pages"),
        v(&narrow, "nr_free_pages")
    );
}

/// domain_dirty_limits with byte settings: the thresholds are the bytes in pages, rounded
/// up, whatever the dirtyable memory; a background one at or above the dirty one is half.
#[test]
fn dirty_bytes_set_the_writeback_thresholds_in_pages() {
    let mut m = machine();
    m.sim.vm.dirty_bytes = (1 << 20) + 1;
    m.sim.vm.dirty_ratio = 0;
    m.sim.vm.dirty_background_bytes = 512 << 10;
    m.sim.vm.dirty_background_ratio = 0;
    assert_eq!(m.sim.global_dirty_limits(), (128, 257));
    m.sim.vm.dirty_background_bytes = 2 << 20;
    assert_eq!(
        m.sim.global_dirty_limits(),
        (128, 257),
        "background ≥ dirty: half"
    );
    // Bytes for one, a ratio for the other.
    m.sim.vm.dirty_background_bytes = 0;
    m.sim.vm.dirty_background_ratio = 1;
    assert_eq!(m.sim.global_dirty_limits(), (share(dirtyable(&m), 1), 257));
}

/// 1 MiB written through `pwrite` (an MSR trace of 64 writes of 16 KiB, below every
/// threshold), then the run lasts until `until`: the flusher's periodic pass writes an
/// inode dirty longer than dirty_expire_centisecs at its next wake-up (every
/// dirty_writeback_centisecs); without the periodic pass (0) nothing writes it.
fn small_write(vm: &str, until: &str) -> RunReport {
    let dir = std::env::temp_dir().join(format!("mmsim-vm-writeback-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let trace = dir.join("w.csv");
    let text: String = (0..64)
        .map(|i| format!("{},h,0,Write,{},16384,0\n", 1000 + i, i * 16384))
        .collect();
    std::fs::write(&trace, text).expect("trace");
    let text = format!(
        "name = \"t\"\nkernel = \"6.18\"\n\n[machine]\ncpus_per_node = 2\n\
         memory_per_node = \"64MiB\"\n\n[[devices]]\nname = \"sda\"\npreset = \"ssd\"\n\
         size = \"1GiB\"\n\n[[filesystems]]\nmount = \"/mnt\"\ntype = \"blockfs\"\n\
         device = \"sda\"\n\n[vm]\n{vm}\n\n[[tasks]]\nname = \"w\"\nprogram = \"replay\"\n\
         trace = \"{}\"\nformat = \"msr\"\n\n[[tasks]]\nname = \"late\"\nprogram = \"anon\"\n\
         size = \"4KiB\"\nstart = \"{until}\"\n",
        trace.display()
    );
    run_6_18(&parse(&text).expect("valid"))
}

/// `sc` run to completion on 6.18's rules.
fn run_6_18(sc: &Scenario) -> RunReport {
    let r = common::run_sc(
        sc,
        KernelEra::V6_18.features("patched").expect("p"),
        false,
        50_000_000,
    );
    assert_eq!(r.end, mmsim::sim::RunEnd::Completed, "{:?}", r.end);
    r
}

#[test]
fn the_periodic_flush_follows_dirty_expire_and_dirty_writeback_centisecs() {
    // (dirty pages, pages written) at the end: the 256 written pages and the file's
    // inode-table block are either all dirty or all written.
    let state = |vm: &str, until: &str| {
        let r = small_write(vm, until);
        let v = |k: &str| r.vmstat.get(k).copied().unwrap_or(0);
        (v("nr_dirty"), v("nr_written"))
    };
    let (still_dirty, written) = ((257, 0), (0, 257));
    // The defaults: dirty at 8 s (younger than 30 s), written by 40 s.
    assert_eq!(state("swappiness = 60", "8s"), still_dirty);
    assert_eq!(state("swappiness = 60", "40s"), written);
    // Expired after 1 s: written at the 5 s wake-up.
    assert_eq!(state("dirty_expire_centisecs = 100", "8s"), written);
    // Waking every second, expired after 1 s: written before 3 s.
    assert_eq!(
        state(
            "dirty_expire_centisecs = 100\ndirty_writeback_centisecs = 100",
            "3s"
        ),
        written
    );
    assert_eq!(state("dirty_expire_centisecs = 100", "3s"), still_dirty);
    // No periodic writeback: still dirty at 40 s.
    assert_eq!(state("dirty_writeback_centisecs = 0", "40s"), still_dirty);
}
