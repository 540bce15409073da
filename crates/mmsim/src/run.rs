//! Running a scenario end to end and collecting the report (the JSON document of `mmsim run`).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::machine::cost::CostTable;
use crate::machine::ps_to_ns;
use crate::mm::memcontrol::MemcgId;
use crate::mm::vmstat::VmItem;
use crate::scenario::Scenario;
use crate::sim::{Features, RunEnd, Sim, SAMPLED};

/// Version of the JSON schema; `mmsim compare` refuses documents of other versions.
pub const SCHEMA_VERSION: u32 = 1;

/// CPU time summed over all CPUs.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct CpuTime {
    /// User time, ns.
    pub user_ns: u64,
    /// System time, ns.
    pub system_ns: u64,
    /// Interrupt time, ns.
    pub interrupt_ns: u64,
    /// Idle time, ns.
    pub idle_ns: u64,
}

/// Per-task results.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TaskReport {
    /// Task name.
    pub name: String,
    /// CPU.
    pub cpu: usize,
    /// Kernel thread?
    pub kthread: bool,
    /// Start to exit, ns (0 if it did not exit).
    pub elapsed_ns: u64,
    /// Major faults.
    pub majflt: u64,
    /// Minor faults.
    pub minflt: u64,
    /// Voluntary context switches.
    pub nvcsw: u64,
    /// Syscalls.
    pub syscalls: u64,
    /// Pages reads found missing from the page cache.
    pub cache_misses: u64,
    /// Inode-table pages its lookups read into the page cache (files whose inode was not
    /// in the inode cache).
    #[serde(default)]
    pub inode_table_misses: u64,
    /// Directory blocks its lookups read into the page cache (names looked up in indexed
    /// directories).
    #[serde(default)]
    pub dir_block_misses: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Timed samples by label: times in ns, rates in their unit (`sample_units`).
    pub samples: BTreeMap<String, Vec<u64>>,
    /// What each label's samples measure: their unit and which way is better (from the
    /// program's declared samples, `workload::ProgramDef::samples`).
    pub sample_units: BTreeMap<String, crate::workload::SampleUnit>,
    /// Major faults inside each timed region, by label.
    pub region_majflt: BTreeMap<String, Vec<u64>>,
    /// Errors returned, by errno.
    pub errors: BTreeMap<String, u64>,
    /// Killed by an OOM killer (as its victim, or with its memory.oom.group).
    #[serde(default)]
    pub oom_killed: bool,
    /// The process it is a thread of (the scenario's `thread_group`); absent for a
    /// single-threaded process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_group: Option<String>,
}

/// One profile row.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProfileRow {
    /// Kernel function.
    pub function: String,
    /// Time attributed, ns.
    pub ns: u64,
    /// Share of all busy (non-idle) CPU time, percent (the oprofile sample share).
    pub percent: f64,
}

/// Lock statistics.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LockStats {
    /// lru_lock acquisitions, all nodes (all lruvecs from v5.11).
    pub lru_lock_acquisitions: u64,
    /// lru_lock contended acquisitions.
    pub lru_lock_contended: u64,
}

/// The report of one run.
#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    /// Schema version.
    pub schema_version: u32,
    /// Scenario name.
    pub scenario: String,
    /// Where it came from.
    pub source: String,
    /// Seed.
    pub seed: u64,
    /// Feature switches in force.
    pub features: BTreeMap<String, bool>,
    /// The machine.
    pub machine: crate::scenario::MachineSpec,
    /// The cost table.
    pub cost_profile: CostTable,
    /// How the run ended.
    pub end: RunEnd,
    /// Virtual time from start to the last user task's exit, ns.
    pub elapsed_ns: u64,
    /// CPU time.
    pub cpu_time: CpuTime,
    /// /proc/vmstat at the end.
    pub vmstat: BTreeMap<String, i64>,
    /// Cost by kernel function, ns.
    pub profile: BTreeMap<String, u64>,
    /// Profile rows sorted by cost with shares.
    pub profile_top: Vec<ProfileRow>,
    /// Per-task results.
    pub tasks: Vec<TaskReport>,
    /// Interrupts per CPU (all sources).
    pub interrupts: Vec<u64>,
    /// "TLB shootdowns" per CPU.
    pub tlb_shootdowns: Vec<u64>,
    /// Locks.
    pub locks: LockStats,
    /// Truncate: shadow entries cleared, tree_lock acquisitions for them and their ratio.
    pub truncate: crate::mm::truncate::TruncateReport,
    /// Totals of the reclaim tracepoints, as a tracefs capture sums them
    /// (`crate::mm::tracepoints`).
    pub tracepoints: crate::mm::tracepoints::Tracepoints,
    /// Time-series column names.
    pub series_columns: Vec<String>,
    /// Time series.
    pub series: Vec<crate::sim::Sample>,
    /// The PSI stall totals at the end of each 2 s aggregation period (psi_avgs_work's
    /// collection: the totals the averages are computed from), on eras with PSI.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pressure_series: Vec<PressureSample>,
    /// Content-oracle violations.
    pub oracle_violations: Vec<String>,
    /// OOM-killer reports (oom_kill events: who, why).
    pub oom: Vec<String>,
    /// Simulation steps.
    pub steps: u64,
    /// Running hash of the event stream (determinism check), hex.
    pub event_hash: String,
    /// False when the run stopped early (interrupted, step limit, failure): partial results.
    pub complete: bool,
    /// Injected IO errors, how each was reported, and losses.
    pub io_errors: IoErrorsReport,
    /// The kernel era whose rules the run followed.
    pub kernel: String,
    /// Memory cgroups (root first), when the scenario declares any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<CgroupReport>,
    /// Trace replay figures, when the scenario has `replay` tasks (`docs/replay.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<crate::workload::replay::ReplayReport>,
    /// The reclaim policy (`classic` or `mglru`); absent for classic runs so their
    /// documents are unchanged.
    #[serde(skip_serializing_if = "is_classic")]
    pub policy: crate::mm::policy::ReclaimPolicy,
    /// The /proc/sys/vm tunables (`[vm]`); absent when all are the kernel's defaults, so
    /// such documents are unchanged.
    #[serde(skip_serializing_if = "is_default_vm")]
    pub vm: crate::scenario::VmSysctl,
    /// The lru_gen debugfs view at the end (MGLRU runs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lru_gen: Vec<crate::mm::lru_gen::LruGenView>,
    /// Per block device (the swap device included): requests, pages, seeks and busy time,
    /// as /proc/diskstats counts them.
    pub devices: Vec<DeviceReport>,
    /// /proc/pressure/memory and /proc/pressure/io at the end (`crate::psi`); absent on
    /// kernel eras without PSI (before 4.20: the eras before 6.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::psi::Pressure>,
    /// The zram swap device's mm_stat and io_stat at the end (`[swap] preset = "zram"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zram: Option<crate::mm::zram::ZramStats>,
    /// zswap at the end (/sys/kernel/debug/zswap, meminfo's Zswap and Zswapped;
    /// `[swap.zswap]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswap: Option<crate::mm::zswap::ZswapStats>,
}

pub use crate::psi::PressureSample;

/// One block device's IO over the run (/proc/diskstats).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct DeviceReport {
    /// The device's name (`[[devices]]`, or `swap` for the swap area's own device).
    pub name: String,
    /// Read requests completed or in flight at the end.
    pub reads: u64,
    /// Pages read.
    pub pages_read: u64,
    /// Write requests.
    pub writes: u64,
    /// Pages written.
    pub pages_written: u64,
    /// Requests that did not continue the previous one on the device and paid its
    /// positioning latency (a seek on a disk; the device model has no request merging or
    /// elevator); on a flash device (`queue_depth`) every request.
    pub seeks: u64,
    /// Time the device spent serving requests, ns (io_ticks).
    pub busy_ns: u64,
    /// The device model: its preset (`hdd`, `ssd`, `nvme`, `zram`).
    pub preset: &'static str,
    /// Per-request latency, ns (the preset's or `latency`).
    pub latency_ns: u64,
    /// Transfer rate, bytes per second (the preset's or `bandwidth`).
    pub bandwidth_bytes_per_s: u64,
    /// queue/read_ahead_kb.
    pub read_ahead_kb: u64,
    /// `queue_depth` of a device modelled as flash; absent: one request at a time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
}

/// One memory cgroup at the end of a run, as cgroup v2 files show it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CgroupReport {
    /// Path ("" = the root).
    pub name: String,
    /// memory.max, bytes (None = max).
    pub memory_max: Option<u64>,
    /// memory.high, bytes (None = max).
    pub memory_high: Option<u64>,
    /// memory.low, bytes.
    pub memory_low: u64,
    /// memory.min, bytes.
    pub memory_min: u64,
    /// memory.swap.max, bytes (None = max).
    pub swap_max: Option<u64>,
    /// memory.current at the end, bytes.
    pub current: u64,
    /// memory.peak, bytes.
    pub peak: u64,
    /// memory.swap.high, bytes (None = max).
    pub swap_high: Option<u64>,
    /// memory.swap.current, bytes.
    pub swap_current: u64,
    /// memory.swap.peak, bytes.
    pub swap_peak: u64,
    /// memory.swap.events (hierarchical).
    pub swap_events: crate::mm::memcontrol::MemcgSwapEvents,
    /// memory.events (hierarchical).
    pub events: crate::mm::memcontrol::MemcgEvents,
    /// memory.events.local.
    pub events_local: crate::mm::memcontrol::MemcgEvents,
    /// memory.stat (hierarchical; sizes in bytes, events in counts).
    pub stat: BTreeMap<String, i64>,
    /// Times balance_dirty_pages paused a writer of this cgroup (local; not a kernel file).
    pub dirty_throttled: u64,
    /// memory.pressure and io.pressure at the end (`crate::psi`; absent before 4.20).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::psi::Pressure>,
    /// The cgroup v1 memory controller's own files (`cgroup_version = 1` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub v1: Option<CgroupV1Files>,
}

/// A cgroup's files on the cgroup v1 memory controller (mm/memcontrol-v1.c's
/// mem_cgroup_legacy_files), as a user of a v1 machine reads them. A limit of "no
/// limit" reads as [`V1_UNLIMITED_BYTES`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CgroupV1Files {
    /// memory.limit_in_bytes.
    pub limit_in_bytes: u64,
    /// memory.usage_in_bytes: the memory counter (the root's: its file and anonymous
    /// pages, mem_cgroup_usage).
    pub usage_in_bytes: u64,
    /// memory.max_usage_in_bytes: the counter's watermark.
    pub max_usage_in_bytes: u64,
    /// memory.failcnt: charges the counter refused.
    pub failcnt: u64,
    /// memory.memsw.usage_in_bytes: memory and swap (the root's: plus its swap). On v1 a
    /// swap slot is charged from its page's swap-out to its swap-in.
    pub memsw_usage_in_bytes: u64,
    /// memory.memsw.limit_in_bytes (`memsw_max`).
    pub memsw_limit_in_bytes: u64,
    /// memory.memsw.failcnt: charges the memsw counter refused.
    pub memsw_failcnt: u64,
    /// memory.memsw.max_usage_in_bytes: the memsw counter's watermark (memory and swap
    /// at their largest, where a charge raised them). Absent for the root, whose counter
    /// mmsim does not keep.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memsw_max_usage_in_bytes: Option<u64>,
    /// memory.kmem.usage_in_bytes: the kernel memory charged (slab, page tables).
    pub kmem_usage_in_bytes: u64,
    /// memory.stat: the cgroup's own counters under their v1 names, `total_` the
    /// subtree's, the hierarchical limits (bytes; events in counts).
    pub stat: BTreeMap<String, i64>,
}

/// What a v1 limit file shows for "no limit": PAGE_COUNTER_MAX (LONG_MAX / PAGE_SIZE)
/// pages in bytes on a 64-bit kernel.
pub const V1_UNLIMITED_BYTES: u64 = (i64::MAX as u64 / 4096) * 4096;

/// Where a v1 memory.stat key's value comes from.
#[derive(Clone, Copy)]
enum V1Source {
    /// NR_FILE_PAGES (MEMCG_CACHE before 5.8).
    Cache,
    /// NR_ANON_MAPPED (MEMCG_RSS before 5.8).
    Rss,
    /// Anonymous THPs: none are modelled.
    RssHuge,
    /// A local counter in pages, shown in bytes.
    Pages(VmItem),
    /// A local event counter.
    Events(VmItem),
    /// MEMCG_SWAP: swap slots charged here (swap_cgroup).
    Swap,
    /// memcg1_charge_statistics' PGPGIN / PGPGOUT.
    Pgpgin,
    /// See `Pgpgin`.
    Pgpgout,
}

/// cgroup v1 memory.stat's per-cgroup keys (memcg1_stats, then memcg1_events), each with
/// the release that added it to the file: mapped_file 2.6.31 ("Add file based RSS
/// accounting"), swap 2.6.32 ("memcg: show swap usage in stat file"; v1 machines account
/// swap by default), pgfault and pgmajfault 3.0, rss_huge 3.10 (always 0: no anonymous
/// THPs here), writeback 3.12, dirty 4.2, shmem 4.12 ("mm: memcontrol: provide shmem
/// statistics"), the workingset refaults 6.1 ("mm: memcg: export workingset refault stats
/// for cgroup v1"), swapcached 6.7 ("mm, memcg: expose swapcache stat for memcg v1").
const V1_MEMORY_STAT: &[(&str, V1Source, crate::kernel::KernelEra)] = {
    use crate::kernel::KernelEra as K;
    use V1Source::*;
    &[
        ("cache", Cache, K::V2_6_30),
        ("rss", Rss, K::V2_6_30),
        ("rss_huge", RssHuge, K::new(3, 10)),
        ("shmem", Pages(VmItem::NrShmem), K::new(4, 12)),
        ("mapped_file", Pages(VmItem::NrMapped), K::v2_6(31)),
        ("dirty", Pages(VmItem::NrDirty), K::new(4, 2)),
        ("writeback", Pages(VmItem::NrWriteback), K::new(3, 12)),
        (
            "workingset_refault_anon",
            Events(VmItem::WorkingsetRefaultAnon),
            K::V6_1,
        ),
        (
            "workingset_refault_file",
            Events(VmItem::WorkingsetRefaultFile),
            K::V6_1,
        ),
        ("swap", Swap, K::v2_6(32)),
        ("swapcached", Pages(VmItem::NrSwapcached), K::new(6, 7)),
        ("pgpgin", Pgpgin, K::V2_6_30),
        ("pgpgout", Pgpgout, K::V2_6_30),
        ("pgfault", Events(VmItem::Pgfault), K::new(3, 0)),
        ("pgmajfault", Events(VmItem::Pgmajfault), K::new(3, 0)),
    ]
};

/// The v1 files of every memcg (memcg1_stat_format, mem_cgroup_read_u64).
fn cgroup_v1_files(sim: &Sim, anon_pages: &[u64], file_pages: &[u64]) -> Vec<CgroupV1Files> {
    use crate::mm::node::LruList;
    let page = crate::mm::page::PAGE_SIZE as i64;
    let n = sim.memcgs.len();
    let era = sim.features.era;
    let mut swap = vec![0i64; n];
    for &m in &sim.swap_cgroup {
        if let Some(s) = swap.get_mut(m as usize) {
            *s += 1;
        }
    }
    const LRUS: [(&str, LruList); 5] = [
        ("inactive_anon", LruList::InactiveAnon),
        ("active_anon", LruList::ActiveAnon),
        ("inactive_file", LruList::InactiveFile),
        ("active_file", LruList::ActiveFile),
        ("unevictable", LruList::Unevictable),
    ];
    // Each memcg's own values, in the file's order.
    let local: Vec<Vec<(&str, i64)>> = (0..n)
        .map(|m| {
            let mc = &sim.memcgs[m];
            let mut v: Vec<(&str, i64)> = V1_MEMORY_STAT
                .iter()
                .filter(|&&(_, _, since)| era >= since)
                .map(|&(key, src, _)| {
                    let x = match src {
                        V1Source::Cache => file_pages[m] as i64 * page,
                        V1Source::Rss => anon_pages[m] as i64 * page,
                        V1Source::RssHuge => 0,
                        V1Source::Pages(item) => mc.stat.get(item) * page,
                        V1Source::Events(item) => mc.stat.get(item),
                        V1Source::Swap => swap[m] * page,
                        V1Source::Pgpgin => mc.pgpgin as i64,
                        V1Source::Pgpgout => mc.pgpgout as i64,
                    };
                    (key, x)
                })
                .collect();
            for (key, l) in LRUS {
                let pages: u64 = (0..sim.nodes.len())
                    .map(|node| sim.lruvec(m as MemcgId, node).lru_size(l))
                    .sum();
                v.push((key, pages as i64 * page));
            }
            v
        })
        .collect();
    (0..n)
        .map(|m| {
            let mc = &sim.memcgs[m];
            let mut stat: BTreeMap<String, i64> = BTreeMap::new();
            for &(k, x) in &local[m] {
                stat.insert(k.to_string(), x);
            }
            // The smallest limits from here to the root.
            let (mut limit, mut memsw_limit) = (u64::MAX, u64::MAX);
            let mut c = Some(m as MemcgId);
            while let Some(id) = c {
                limit = limit.min(sim.memcgs[id as usize].max);
                memsw_limit = memsw_limit.min(sim.memcgs[id as usize].memsw_max);
                c = sim.memcgs[id as usize].parent;
            }
            let limit_bytes = |pages: u64| {
                crate::mm::memcontrol::limit_bytes(pages)
                    .map_or(V1_UNLIMITED_BYTES, |b| b.min(V1_UNLIMITED_BYTES))
            };
            stat.insert(
                "hierarchical_memory_limit".into(),
                limit_bytes(limit) as i64,
            );
            stat.insert(
                "hierarchical_memsw_limit".into(),
                limit_bytes(memsw_limit) as i64,
            );
            for (i, &(k, _)) in local[m].iter().enumerate() {
                let total: i64 = sim
                    .memcg_subtree(m as MemcgId)
                    .map(|c| local[c as usize][i].1)
                    .sum();
                stat.insert(format!("total_{k}"), total);
            }
            let root = m == crate::mm::memcontrol::ROOT_MEM_CGROUP as usize;
            let (usage, memsw) = if root {
                // mem_cgroup_usage of the root: its subtree's file and anonymous pages.
                let mem = (stat["total_cache"] + stat["total_rss"]) as u64;
                (
                    mem,
                    mem + stat.get("total_swap").copied().unwrap_or(0) as u64,
                )
            } else {
                let mem = mc.usage * page as u64;
                (mem, mem + mc.swap_usage * page as u64)
            };
            let kmem: u64 = sim
                .memcg_subtree(m as MemcgId)
                .map(|c| {
                    let c = &sim.memcgs[c as usize];
                    let slab = if sim.objcg_charging() {
                        c.obj_pages
                    } else {
                        (c.stat.get(VmItem::NrSlabReclaimable)
                            + c.stat.get(VmItem::NrSlabUnreclaimable))
                            as u64
                    };
                    slab + c.stat.get(VmItem::NrPageTablePages) as u64
                })
                .sum();
            CgroupV1Files {
                limit_in_bytes: limit_bytes(mc.max),
                usage_in_bytes: usage,
                // The root's counter counts only the other cgroups' charges.
                max_usage_in_bytes: if root {
                    sim.memcg_v1_root_counter.1
                } else {
                    mc.peak
                } * page as u64,
                failcnt: mc.failcnt,
                memsw_usage_in_bytes: memsw,
                memsw_limit_in_bytes: limit_bytes(mc.memsw_max),
                memsw_failcnt: mc.memsw_failcnt,
                memsw_max_usage_in_bytes: (!root).then_some(mc.memsw_peak * page as u64),
                kmem_usage_in_bytes: kmem * page as u64,
                stat,
            }
        })
        .collect()
}

/// memory.stat keys and the counters they show: (key, item, true = pages shown in bytes).
const MEMORY_STAT: &[(&str, VmItem, bool)] = &[
    ("file_mapped", VmItem::NrMapped, true),
    ("shmem", VmItem::NrShmem, true),
    ("file_dirty", VmItem::NrDirty, true),
    ("file_writeback", VmItem::NrWriteback, true),
    // The VFS caches' slab pages (SLAB_ACCOUNT from 4.5; the keys from 4.13).
    ("slab_reclaimable", VmItem::NrSlabReclaimable, true),
    ("slab_unreclaimable", VmItem::NrSlabUnreclaimable, true),
    ("pgfault", VmItem::Pgfault, false),
    ("pgmajfault", VmItem::Pgmajfault, false),
    (
        "workingset_refault_anon",
        VmItem::WorkingsetRefaultAnon,
        false,
    ),
    (
        "workingset_refault_file",
        VmItem::WorkingsetRefaultFile,
        false,
    ),
    (
        "workingset_activate_anon",
        VmItem::WorkingsetActivateAnon,
        false,
    ),
    (
        "workingset_activate_file",
        VmItem::WorkingsetActivateFile,
        false,
    ),
    (
        "workingset_restore_anon",
        VmItem::WorkingsetRestoreAnon,
        false,
    ),
    (
        "workingset_restore_file",
        VmItem::WorkingsetRestoreFile,
        false,
    ),
    (
        "workingset_nodereclaim",
        VmItem::WorkingsetNodereclaim,
        false,
    ),
    ("pgscan_kswapd", VmItem::PgscanKswapd, false),
    ("pgscan_direct", VmItem::PgscanDirect, false),
    ("pgscan_proactive", VmItem::PgscanProactive, false),
    ("pgscan_anon", VmItem::PgscanAnon, false),
    ("pgscan_file", VmItem::PgscanFile, false),
    ("pgsteal_kswapd", VmItem::PgstealKswapd, false),
    ("pgsteal_direct", VmItem::PgstealDirect, false),
    ("pgsteal_proactive", VmItem::PgstealProactive, false),
    ("pgsteal_anon", VmItem::PgstealAnon, false),
    ("pgsteal_file", VmItem::PgstealFile, false),
    ("pgrefill", VmItem::Pgrefill, false),
    ("pgactivate", VmItem::Pgactivate, false),
    ("pgdeactivate", VmItem::Pgdeactivate, false),
];

/// Per memcg (local), the pages memory.stat shows as `anon` and `file`, counted from the
/// frames: `file` is NR_FILE_PAGES, the page cache charged to the memcg, tmpfs and shmem
/// included (the swap cache is not: from 5.8 it counts in the node's NR_FILE_PAGES only);
/// `anon` is NR_ANON_MAPPED from 5.8 ("mm: memcontrol: switch to native NR_ANON_MAPPED
/// counter"; the 6.1 era): anonymous pages mapped by a PTE, mlocked ones included. Before
/// (MEMCG_RSS) it is every charged anonymous page, those in the swap cache and not mapped
/// too. Neither is the LRU: shmem sits on the anon lists, mlocked pages on the
/// unevictable one.
fn memcg_anon_file_pages(sim: &Sim) -> (Vec<u64>, Vec<u64>) {
    use crate::mm::page::{pg, NO_MAPPING};
    use crate::mm::rmap::ANON_MAPPING;
    let n = sim.memcgs.len();
    let (mut anon, mut file) = (vec![0u64; n], vec![0u64; n]);
    let native = sim.features.era >= crate::kernel::KernelEra::new(5, 8);
    for p in &sim.mem {
        let m = p.memcg as usize;
        if m >= n || p.flags & (pg::BUDDY | pg::TABLE | pg::SLAB) != 0 {
            continue;
        }
        if p.mapping & ANON_MAPPING != 0 {
            if p.mapped() || !native {
                anon[m] += 1;
            }
        } else if p.flags & pg::SWAPCACHE != 0 {
            if !native {
                anon[m] += 1; // a swap-in nobody has mapped yet: charged as anon
            }
        } else if p.mapping != NO_MAPPING {
            file[m] += 1;
        }
    }
    (anon, file)
}

/// The cgroup reports of a run (empty without `[[cgroups]]`).
pub fn cgroup_reports(sim: &Sim) -> Vec<CgroupReport> {
    use crate::mm::memcontrol::MemcgEvents;
    use crate::mm::node::LruList;
    if sim.memcgs.len() <= 1 {
        return Vec::new();
    }
    let pressure = pressure_files(sim);
    let page = crate::mm::page::PAGE_SIZE;
    let bytes = crate::mm::memcontrol::limit_bytes;
    let (anon_pages, file_pages) = memcg_anon_file_pages(sim);
    let mut v1 = if sim.cgroup_v1 {
        cgroup_v1_files(sim, &anon_pages, &file_pages)
    } else {
        Vec::new()
    }
    .into_iter();
    (0..sim.memcgs.len())
        .map(|m| {
            let mc = &sim.memcgs[m];
            let sub = sim.memcg_subtree(m as crate::mm::memcontrol::MemcgId);
            let mut stat = BTreeMap::new();
            let lru = |l: LruList| -> i64 {
                (0..sim.nodes.len())
                    .map(|n| sim.lruvec_lru_size_hier(m as u16, n, l) as i64)
                    .sum::<i64>()
                    * page as i64
            };
            let (ia, aa, ifl, af) = (
                lru(LruList::InactiveAnon),
                lru(LruList::ActiveAnon),
                lru(LruList::InactiveFile),
                lru(LruList::ActiveFile),
            );
            let sum = |v: &[u64]| -> i64 { sub.clone().map(|c| v[c as usize] as i64).sum() };
            stat.insert("anon".to_string(), sum(&anon_pages) * page as i64);
            stat.insert("file".to_string(), sum(&file_pages) * page as i64);
            stat.insert("inactive_anon".to_string(), ia);
            stat.insert("active_anon".to_string(), aa);
            stat.insert("inactive_file".to_string(), ifl);
            stat.insert("active_file".to_string(), af);
            stat.insert("unevictable".to_string(), lru(LruList::Unevictable));
            for &(key, item, pages) in MEMORY_STAT {
                let v: i64 = sub
                    .clone()
                    .map(|c| sim.memcgs[c as usize].stat.get(item))
                    .sum();
                stat.insert(key.to_string(), if pages { v * page as i64 } else { v });
            }
            // `memcg-kmem-objcg`: memory.stat counts the objects' bytes
            // (NR_SLAB_RECLAIMABLE_B), and the kernel memory charged for them is whole pages.
            let mut kmem_slab = None;
            if sim.objcg_charging() {
                for (key, i) in [("slab_reclaimable", 0), ("slab_unreclaimable", 1)] {
                    let v: u64 = sub
                        .clone()
                        .map(|c| sim.memcgs[c as usize].slab_bytes[i])
                        .sum();
                    stat.insert(key.to_string(), v as i64);
                }
                let pages: u64 = sub.clone().map(|c| sim.memcgs[c as usize].obj_pages).sum();
                kmem_slab = Some(pages as i64 * page as i64);
            } else if sim.features.xarray_node_kmem {
                // Slab frames for the VFS objects, bytes for the page-cache tree nodes.
                let v: u64 = sub
                    .clone()
                    .map(|c| sim.memcgs[c as usize].slab_bytes[0])
                    .sum();
                *stat.get_mut("slab_reclaimable").expect("in MEMORY_STAT") += v as i64;
            }
            if sim.features.era >= crate::kernel::KernelEra::new(5, 12) {
                // memory.stat has swapcached from 5.12 (NR_SWAPCACHE, "mm: memcg: add
                // swapcache stat for cgroup v2").
                let v: i64 = sub
                    .clone()
                    .map(|c| sim.memcgs[c as usize].stat.get(VmItem::NrSwapcached))
                    .sum();
                stat.insert("swapcached".to_string(), v * page as i64);
            }
            if sim.features.era >= crate::kernel::KernelEra::new(5, 11) {
                // memory.stat has pagetables from 5.11 (NR_PAGETABLE per memcg, "mm:
                // memcontrol: account pagetables per-memcg").
                let v: i64 = sub
                    .clone()
                    .map(|c| sim.memcgs[c as usize].stat.get(VmItem::NrPageTablePages))
                    .sum();
                stat.insert("pagetables".to_string(), v * page as i64);
            }
            if let Some(z) = sim.zswap() {
                // memory.stat has zswap, zswapped, zswpin and zswpout from 5.19 ("zswap:
                // memcg accounting"; zswap needs the 6.1 era here) and zswpwb from 6.8.
                let bytes: u64 = sub.clone().map(|c| z.memcg_bytes[c as usize]).sum();
                let stored: u64 = sub.clone().map(|c| z.memcg_stored[c as usize]).sum();
                stat.insert("zswap".to_string(), bytes as i64);
                stat.insert("zswapped".to_string(), (stored * page) as i64);
                let mut events = vec![("zswpin", VmItem::Zswpin), ("zswpout", VmItem::Zswpout)];
                if sim.features.era >= crate::kernel::KernelEra::new(6, 8) {
                    events.push(("zswpwb", VmItem::Zswpwb));
                }
                for (key, item) in events {
                    let v: i64 = sub
                        .clone()
                        .map(|c| sim.memcgs[c as usize].stat.get(item))
                        .sum();
                    stat.insert(key.to_string(), v);
                }
            }
            if sim.features.era >= crate::kernel::KernelEra::new(6, 13) {
                // memory.stat has pswpin and pswpout from 6.13 ("mm: memcontrol: add
                // per-memcg pgpgin/pswpin counter").
                for (key, item) in [("pswpin", VmItem::Pswpin), ("pswpout", VmItem::Pswpout)] {
                    let v: i64 = sub
                        .clone()
                        .map(|c| sim.memcgs[c as usize].stat.get(item))
                        .sum();
                    stat.insert(key.to_string(), v);
                }
            }
            let slab = stat["slab_reclaimable"] + stat["slab_unreclaimable"];
            stat.insert("slab".to_string(), slab);
            if sim.features.era >= crate::kernel::KernelEra::new(5, 18) {
                // memory.stat has kernel from 5.18 (MEMCG_KMEM, "memcg: add per-memcg total
                // kernel memory stat"): every kernel page charged to the cgroup, here its
                // slab and page tables (kernel stacks, percpu and vmalloc are not modelled).
                stat.insert(
                    "kernel".to_string(),
                    kmem_slab.unwrap_or(slab) + stat["pagetables"],
                );
            }
            let pgscan = stat["pgscan_kswapd"] + stat["pgscan_direct"] + stat["pgscan_proactive"];
            let pgsteal =
                stat["pgsteal_kswapd"] + stat["pgsteal_direct"] + stat["pgsteal_proactive"];
            stat.insert("pgscan".to_string(), pgscan);
            stat.insert("pgsteal".to_string(), pgsteal);
            let mut events = MemcgEvents::default();
            let mut swap_events = crate::mm::memcontrol::MemcgSwapEvents::default();
            for c in sub.clone() {
                let e = &sim.memcgs[c as usize].events;
                events.low += e.low;
                events.high += e.high;
                events.max += e.max;
                events.oom += e.oom;
                events.oom_kill += e.oom_kill;
                events.oom_group_kill += e.oom_group_kill;
                let e = &sim.memcgs[c as usize].swap_events;
                swap_events.high += e.high;
                swap_events.max += e.max;
                swap_events.fail += e.fail;
            }
            CgroupReport {
                name: if mc.name.is_empty() {
                    "/".to_string()
                } else {
                    mc.name.clone()
                },
                memory_max: bytes(mc.max),
                memory_high: bytes(mc.high),
                memory_low: mc.low * page,
                memory_min: mc.min * page,
                swap_max: bytes(mc.swap_max),
                current: mc.usage * page,
                peak: mc.peak * page,
                swap_high: bytes(mc.swap_high),
                swap_current: mc.swap_usage * page,
                swap_peak: mc.swap_peak * page,
                swap_events,
                events,
                events_local: mc.events,
                stat,
                dirty_throttled: mc.dirty_throttled,
                pressure: pressure.get(m).copied(),
                v1: v1.next(),
            }
        })
        .collect()
}

/// Injected IO errors (fault injection) and what became of the data.
#[derive(Clone, Debug, Serialize, PartialEq, Eq, Default)]
pub struct IoErrorsReport {
    /// Errors injected, all devices.
    pub total: u64,
    /// The errors (the first 1000 per device), each with how the kernel reports it.
    pub errors: Vec<crate::fs::blockdev::IoErrorRecord>,
    /// EIO returned to tasks (read, write, fdatasync, close), all tasks.
    pub eio_returned: u64,
    /// Reads that saw older data of a page whose writeback failed and was reported
    /// (AS_EIO): reported losses.
    pub reported_losses_read: u64,
    /// Pages whose newest write was lost to a writeback error (reported through AS_EIO).
    pub reported_lost_writes: u64,
    /// Reads that saw stale data with no error reported (content-oracle violations):
    /// silent losses, which must be zero.
    pub silent_losses: u64,
}

/// Set (by a Ctrl-C handler) to end the running simulation cleanly: `run_scenario` stops
/// at the next chunk boundary with `RunEnd::Interrupted`.
pub static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Steps run between checks of `INTERRUPT`.
pub const INTERRUPT_CHECK_STEPS: u64 = 16_384;

/// Run `sim` to its end like `Sim::run_with_progress`, in chunks of `chunk` steps, calling
/// `between` after each chunk (it may stop the run by returning a `RunEnd`) and stopping
/// with `RunEnd::Interrupted` once `INTERRUPT` is set. Chunking does not change the run:
/// the engine resumes exactly where the step limit stopped it.
pub fn run_chunked(
    sim: &mut Sim,
    max_steps: u64,
    chunk: u64,
    progress: &mut dyn FnMut(u64),
    between: &mut dyn FnMut(&Sim) -> Option<RunEnd>,
) -> RunEnd {
    loop {
        let limit = sim.steps.saturating_add(chunk.max(1)).min(max_steps);
        let end = sim.run_with_progress(limit, progress);
        if end != RunEnd::StepLimit || sim.steps >= max_steps {
            return end;
        }
        if let Some(e) = between(sim) {
            return e;
        }
        if INTERRUPT.load(Ordering::Relaxed) {
            return RunEnd::Interrupted;
        }
    }
}

/// Host memory a run needs, estimated before it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostMemEstimate {
    /// mem_map: one `Page` per frame.
    pub frames_bytes: u64,
    /// Page tables of mapped memory (anon and mmap programs).
    pub page_tables_bytes: u64,
    /// Page-cache trees, shadow entries and the content oracle's per-page versions.
    pub cache_bytes: u64,
    /// Swap map, swap cache and slot versions.
    pub swap_bytes: u64,
    /// Time series (bounded at 1,000,000 samples).
    pub series_bytes: u64,
    /// Fixed overhead (tasks, devices, profile, the process itself).
    pub fixed_bytes: u64,
}

impl HostMemEstimate {
    /// The sum.
    pub fn total_bytes(&self) -> u64 {
        self.frames_bytes
            + self.page_tables_bytes
            + self.cache_bytes
            + self.swap_bytes
            + self.series_bytes
            + self.fixed_bytes
    }
    /// One line per part, MiB.
    pub fn describe(&self) -> String {
        let m = |b: u64| b.div_ceil(1 << 20);
        format!(
            "{} MiB (frames {} MiB, page tables {} MiB, page cache + shadows + oracle {} MiB, \
             swap {} MiB, time series {} MiB, fixed {} MiB)",
            m(self.total_bytes()),
            m(self.frames_bytes),
            m(self.page_tables_bytes),
            m(self.cache_bytes),
            m(self.swap_bytes),
            m(self.series_bytes),
            m(self.fixed_bytes)
        )
    }
}

/// Host bytes of one page-table page: its 512 PTEs (a 4 KiB array, 8 bytes per mapped
/// page) and what keeps it (`mm::memory::PageTable`: the box's allocator header, its
/// pointer, frame and PMD index, its entry in the index map, and those vectors' and the
/// map's room to grow), rounded up.
pub const PTE_TABLE_HOST_BYTES: u64 = crate::mm::page::PAGE_SIZE + 128;

/// Estimate the host memory a run of `sc` needs: `size_of::<Page>()` per simulated frame,
/// a page-table page per 512 mapped pages ([`PTE_TABLE_HOST_BYTES`], and two more per
/// mapping task: the partly used tables at its mapping's ends), ~9 bytes per
/// page-cache or shadow slot of radix tree plus 8 bytes of oracle versions per file page
/// (files of every program, and their passes' worth of shadows), 10 bytes per swap slot,
/// and the time series (its sample count estimated from the data moved at ≥ 200 MB/s of
/// virtual time, bounded at 1,000,000 samples). It errs on the high side.
pub fn estimate_host_memory(sc: &Scenario) -> HostMemEstimate {
    const PAGE: u64 = crate::mm::page::PAGE_SIZE;
    let frames = u64::from(sc.machine.nodes) * sc.machine.memory_per_node_bytes / PAGE;
    let mut file_pages: u64 = sc.files.iter().map(|f| f.size_bytes.div_ceil(PAGE)).sum();
    let mut mapped_pages = 0u64;
    let mut mapping_tasks = 0u64;
    let mut moved_bytes: u64 = 0;
    for t in &sc.tasks {
        let f = t.program.footprint(sc);
        file_pages = file_pages.saturating_add(f.file_pages);
        mapped_pages = mapped_pages.saturating_add(f.mapped_pages);
        mapping_tasks += u64::from(f.mapped_pages > 0);
        moved_bytes = moved_bytes.saturating_add(f.moved_bytes);
    }
    let pte_tables =
        (mapped_pages / crate::mm::memory::PTRS_PER_PTE).saturating_add(2 * mapping_tasks);
    let swap_pages = sc.swap.as_ref().map_or(0, |s| s.size_bytes / PAGE);
    let virtual_ns = moved_bytes / 200 * 5; // 200 MB/s = 5 ns per byte
    let samples = (virtual_ns / sc.sample_interval_ns.max(1))
        .clamp(2 * crate::sim::SERIES_MIN_SAMPLES as u64, 1_000_000);
    let sample_bytes = 24 + 8 * crate::sim::SAMPLED.len() as u64 + 16;
    HostMemEstimate {
        frames_bytes: frames * std::mem::size_of::<crate::mm::page::Page>() as u64,
        page_tables_bytes: pte_tables.saturating_mul(PTE_TABLE_HOST_BYTES),
        cache_bytes: file_pages.saturating_mul(9 + 8),
        swap_bytes: swap_pages * 10,
        series_bytes: samples * sample_bytes,
        fixed_bytes: 16 << 20,
    }
}

/// MemAvailable of the host (`/proc/meminfo`), bytes; None where it cannot be read.
pub fn host_mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Check, before a long run, that its output file `path` can be written (the run's result
/// is not lost to a typo in the path after the run): not a directory, and creatable in
/// an existing directory. A file that did not exist is removed again. `flag` names the
/// option in the error (`--json`).
pub fn check_output_file(flag: &str, path: &std::path::Path) -> Result<(), String> {
    if path.is_dir() {
        return Err(format!("{flag} {}: is a directory", path.display()));
    }
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Refuse a run that would not fit: the estimate against `max_bytes` (`--max-host-mem`)
/// and against the host's MemAvailable. The message says how much it needs and how to
/// shrink it.
pub fn check_host_memory(sc: &Scenario, max_bytes: Option<u64>) -> Result<HostMemEstimate, String> {
    let est = estimate_host_memory(sc);
    let need = est.total_bytes();
    let (limit, what) = match (max_bytes, host_mem_available()) {
        (Some(m), Some(a)) if a < m => (a, "the host's available memory (MemAvailable)"),
        (Some(m), _) => (m, "--max-host-mem"),
        (None, Some(a)) => (a, "the host's available memory (MemAvailable)"),
        (None, None) => return Ok(est),
    };
    if need > limit {
        return Err(format!(
            "scenario `{}` needs about {} of host memory, more than {} ({} MiB); shrink it, \
             e.g. --set machine.memory_per_node=<smaller> (frames: {} bytes per simulated \
             page), fewer nodes, smaller files or swap, or a longer sample_interval",
            sc.name,
            est.describe(),
            what,
            limit >> 20,
            std::mem::size_of::<crate::mm::page::Page>()
        ));
    }
    Ok(est)
}

/// Options of a run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Features.
    pub features: Features,
    /// Check invariants after every step.
    pub check: bool,
    /// Step limit.
    pub max_steps: u64,
    /// Let a task go on to its next step without a pass through the engine loop when the
    /// engine would pick it next anyway (`Sim::step_fusion`; the same results either way).
    pub step_fusion: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            features: Features::patched(),
            check: false,
            max_steps: u64::MAX,
            step_fusion: true,
        }
    }
}

/// Build and run a scenario; `progress` is called with the virtual time now and then.
pub fn run_scenario(
    sc: &Scenario,
    opts: &RunOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<RunReport, String> {
    crate::workload::replay::clear_probes();
    let mut sim = Sim::new(sc, opts.features.clone())?;
    sim.check = opts.check;
    sim.step_fusion = opts.step_fusion;
    sim.seed_faults(sc.seed);
    // A trace replay is stepped by its observer (workload/replay.rs); anything else runs
    // as before.
    if let Some(mut driver) = crate::workload::replay::ReplayDriver::attach(&sim, sc) {
        let end = driver.run(&mut sim, opts.max_steps, progress);
        let mut r = report(&sim, sc, end);
        r.replay = Some(driver.report(&sim));
        return Ok(r);
    }
    let end = run_chunked(
        &mut sim,
        opts.max_steps,
        INTERRUPT_CHECK_STEPS,
        progress,
        &mut |_| None,
    );
    Ok(report(&sim, sc, end))
}

/// Collect the report of a finished simulation.
pub fn report(sim: &Sim, sc: &Scenario, end: RunEnd) -> RunReport {
    let elapsed_ps = sim
        .tasks
        .iter()
        .filter(|t| !t.is_kthread())
        .filter_map(|t| t.stats.exit_ps)
        .max()
        .unwrap_or_else(|| sim.max_clock());
    let mut ct = CpuTime {
        user_ns: 0,
        system_ns: 0,
        interrupt_ns: 0,
        idle_ns: 0,
    };
    for c in &sim.cpus {
        ct.user_ns += ps_to_ns(c.user_ps());
        ct.system_ns += ps_to_ns(c.sys_ps());
        ct.interrupt_ns += ps_to_ns(c.irq_ps());
        // Idle up to the end of the run for CPUs that stopped early.
        ct.idle_ns += ps_to_ns(c.idle_ps + elapsed_ps.saturating_sub(c.clock_ps));
    }
    let busy = sim.profile.busy_total_ps().max(1);
    let profile_top = sim
        .profile
        .entries()
        .into_iter()
        .filter(|(f, _)| *f != crate::machine::profile::KFunc::Idle)
        .map(|(f, ps)| ProfileRow {
            function: f.name().to_string(),
            ns: ps_to_ns(ps),
            percent: ps as f64 * 100.0 / busy as f64,
        })
        .collect();
    let specs: std::collections::HashMap<&str, &crate::scenario::TaskSpec> =
        sc.tasks.iter().map(|s| (s.name.as_str(), s)).collect();
    let tasks = sim
        .tasks
        .iter()
        .map(|t| TaskReport {
            name: t.name.clone(),
            cpu: t.cpu,
            kthread: t.is_kthread(),
            elapsed_ns: t
                .stats
                .exit_ps
                .map(|e| ps_to_ns(e - t.stats.start_ps))
                .unwrap_or(0),
            majflt: t.stats.majflt,
            minflt: t.stats.minflt,
            nvcsw: t.stats.nvcsw,
            syscalls: t.stats.syscalls,
            cache_misses: t.stats.cache_misses,
            inode_table_misses: t.stats.inode_table_misses,
            dir_block_misses: t.stats.dir_block_misses,
            read_bytes: t.stats.read_bytes,
            write_bytes: t.stats.write_bytes,
            oom_killed: t.oom_killed,
            thread_group: specs
                .get(t.name.as_str())
                .and_then(|s| s.thread_group.clone()),
            samples: t.stats.samples.clone(),
            sample_units: {
                let program = specs.get(t.name.as_str()).map(|s| s.program.name());
                t.stats
                    .samples
                    .keys()
                    .map(|l| {
                        let k = program.and_then(|p| crate::workload::sample_kind(p, l));
                        (l.clone(), crate::workload::SampleUnit::of(l, k))
                    })
                    .collect()
            },
            region_majflt: t.stats.region_majflt.clone(),
            errors: t.stats.errors.clone(),
        })
        .collect();
    RunReport {
        schema_version: SCHEMA_VERSION,
        scenario: sc.name.clone(),
        source: sc.source.clone(),
        seed: sc.seed,
        features: sim.features.to_map(),
        machine: sc.machine.clone(),
        cost_profile: sim.costs.clone(),
        end: end.clone(),
        elapsed_ns: ps_to_ns(elapsed_ps),
        cpu_time: ct,
        vmstat: sim
            .proc_vmstat()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        profile: sim
            .profile
            .entries()
            .into_iter()
            .map(|(f, ps)| (f.name().to_string(), ps_to_ns(ps)))
            .collect(),
        profile_top,
        tasks,
        interrupts: sim.cpus.iter().map(|c| c.interrupts).collect(),
        tlb_shootdowns: sim.cpus.iter().map(|c| c.tlb_shootdowns).collect(),
        locks: LockStats {
            lru_lock_acquisitions: sim.lru_locks().map(|l| l.acquisitions).sum(),
            lru_lock_contended: sim.lru_locks().map(|l| l.contended).sum(),
        },
        truncate: sim.truncate_stats.report(),
        tracepoints: sim.tracepoints.clone(),
        kernel: sim.features.era.to_string(),
        cgroups: cgroup_reports(sim),
        pressure: pressure_files(sim).first().copied(),
        policy: sim.policy,
        vm: sim.vm,
        lru_gen: if sim.lru_gen_enabled() {
            sim.lru_gen_view()
        } else {
            Vec::new()
        },
        series_columns: SAMPLED
            .iter()
            .map(|i: &VmItem| i.name().to_string())
            .collect(),
        series: sim.samples.clone(),
        pressure_series: sim.psi.history.clone(),
        oracle_violations: sim.oracle_violations.clone(),
        oom: sim.oom_reports.clone(),
        steps: sim.steps,
        event_hash: format!("{:016x}", sim.event_hash),
        complete: end == RunEnd::Completed,
        io_errors: io_errors_report(sim),
        replay: None,
        devices: sim
            .devices
            .iter()
            .map(|d| DeviceReport {
                name: d.name.clone(),
                reads: d.nr_reads,
                pages_read: d.pages_read,
                writes: d.nr_writes,
                pages_written: d.pages_written,
                seeks: d.seeks,
                busy_ns: d.busy_ps / 1000,
                preset: d.preset.as_str(),
                latency_ns: d.timing.latency_ps / 1000,
                bandwidth_bytes_per_s: d.timing.bandwidth_bytes_per_s,
                read_ahead_kb: d.ra_pages * crate::mm::page::PAGE_SIZE / 1024,
                queue_depth: d.queue_depth.map(|q| q as u64),
            })
            .collect(),
        zram: sim.zram().map(|z| z.stats()),
        zswap: sim.zswap().map(|z| z.stats()),
    }
}

/// Every cgroup's pressure files read at the end of the run, the root's (the system's)
/// first; empty on an era without PSI.
pub fn pressure_files(sim: &Sim) -> Vec<crate::psi::Pressure> {
    if sim.psi.enabled {
        sim.psi.read(sim.pressure_read_time())
    } else {
        Vec::new()
    }
}

/// Collect the injected IO errors and losses of a simulation.
pub fn io_errors_report(sim: &Sim) -> IoErrorsReport {
    let mut r = IoErrorsReport::default();
    for d in &sim.devices {
        r.total += d.nr_io_errors;
        r.errors.extend(d.io_errors.iter().cloned());
        r.reported_losses_read += d.lost_reads;
        r.reported_lost_writes += d.lost_versions.len() as u64;
    }
    r.errors.sort_by_key(|e| e.t_ns);
    r.eio_returned = sim
        .tasks
        .iter()
        .filter_map(|t| t.stats.errors.get("EIO"))
        .sum();
    r.silent_losses = sim.oracle_violations.len() as u64;
    r
}

/// The text summary's IO-error section: every injected error (the first 20, then a count)
/// with how it was reported, the reported losses and the silent losses (which must be 0).
pub fn write_io_errors(r: &RunReport, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let io = &r.io_errors;
    if io.total == 0 && io.silent_losses == 0 {
        return Ok(());
    }
    writeln!(
        out,
        "\nIO errors  {} injected, EIO returned to tasks {}, lost writes (reported) {}, \
         reads of lost data (reported) {}, silent losses {}",
        io.total,
        io.eio_returned,
        io.reported_lost_writes,
        io.reported_losses_read,
        io.silent_losses
    )?;
    for e in io.errors.iter().take(20) {
        writeln!(
            out,
            "  t={} ns {} {} {} page {}: {}",
            e.t_ns, e.device, e.op, e.file, e.index, e.reported_as
        )?;
    }
    if io.total > 20 {
        writeln!(
            out,
            "  ... {} more (all in the JSON `io_errors`)",
            io.total - 20
        )?;
    }
    Ok(())
}

fn is_classic(p: &crate::mm::policy::ReclaimPolicy) -> bool {
    *p == crate::mm::policy::ReclaimPolicy::Classic
}

fn is_default_vm(v: &crate::scenario::VmSysctl) -> bool {
    *v == crate::scenario::VmSysctl::default()
}

/// How the host ran a run: its wall time, and whether the invariant checker ran after every
/// step (`run --check`). Not part of the report, which must not depend on the host.
#[derive(Clone, Copy, Debug)]
pub struct HostTime {
    /// Wall time of `run_scenario`.
    pub elapsed: std::time::Duration,
    /// The invariant checker ran after every step.
    pub checked: bool,
}

/// The mean of `v` as a string in `unit`: times (ns) in s, ms or µs as their size says,
/// rates as recorded with their unit and direction.
fn fmt_samples(v: &[u64], unit: &crate::workload::SampleUnit) -> String {
    use crate::report::tables::TimeUnit;
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<u64>() as f64 / n;
    let (min, max) = (
        v.iter().min().copied().unwrap_or(0),
        v.iter().max().copied().unwrap_or(0),
    );
    if unit.is_time() {
        let t = TimeUnit::for_min_ns(min);
        let u = match t {
            TimeUnit::Micros => "µs",
            other => other.suffix(),
        };
        let f = |x: f64| match t {
            TimeUnit::Seconds => x / 1e9,
            TimeUnit::Millis => x / 1e6,
            TimeUnit::Micros => x / 1e3,
        };
        format!(
            "n={} mean {:.3} {u} min {:.3} {u} max {:.3} {u}",
            v.len(),
            f(mean),
            f(min as f64),
            f(max as f64)
        )
    } else {
        format!(
            "n={} mean {} {u} min {} {u} max {} {u} (higher is better)",
            v.len(),
            crate::report::tables::thousands(mean.round() as u64),
            crate::report::tables::thousands(min),
            crate::report::tables::thousands(max),
            u = unit.unit
        )
    }
}

/// The summary `mmsim run` prints: the run, each task with its samples in their units, the
/// non-zero vmstat counters, the profile, errors; with `host`, the host time it took.
pub fn write_summary(
    r: &RunReport,
    era: crate::kernel::KernelEra,
    host: Option<&HostTime>,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let s = |ns: u64| ns as f64 / 1e9;
    writeln!(out, "scenario   {} ({})", r.scenario, r.source)?;
    writeln!(out, "kernel     {era}")?;
    if r.policy != crate::mm::policy::ReclaimPolicy::Classic {
        writeln!(out, "policy     {}", r.policy)?;
    }
    if !is_default_vm(&r.vm) {
        let v = &r.vm;
        write!(
            out,
            "vm         swappiness {}, dirty_ratio {}, dirty_background_ratio {}, \
             vfs_cache_pressure {}",
            v.swappiness, v.dirty_ratio, v.dirty_background_ratio, v.vfs_cache_pressure
        )?;
        // The rest only when set: the line stays short for the common four.
        let d = crate::scenario::VmSysctl::default();
        if let Some(k) = v.min_free_kbytes {
            write!(out, ", min_free_kbytes {k}")?;
        }
        for (name, val, def) in [
            (
                "watermark_scale_factor",
                v.watermark_scale_factor,
                d.watermark_scale_factor,
            ),
            ("dirty_bytes", v.dirty_bytes, d.dirty_bytes),
            (
                "dirty_background_bytes",
                v.dirty_background_bytes,
                d.dirty_background_bytes,
            ),
            (
                "dirty_expire_centisecs",
                v.dirty_expire_centisecs,
                d.dirty_expire_centisecs,
            ),
            (
                "dirty_writeback_centisecs",
                v.dirty_writeback_centisecs,
                d.dirty_writeback_centisecs,
            ),
        ] {
            if val != def {
                write!(out, ", {name} {val}")?;
            }
        }
        writeln!(out)?;
    }
    let on: Vec<&str> = r
        .features
        .iter()
        .filter(|(_, v)| **v)
        .map(|(k, _)| k.as_str())
        .collect();
    writeln!(
        out,
        "features   {}",
        if on.is_empty() {
            "(none)".to_string()
        } else {
            on.join(", ")
        }
    )?;
    writeln!(
        out,
        "machine    {} node(s) x {} CPUs, {} MiB per node, cost profile {}",
        r.machine.nodes,
        r.machine.cpus_per_node,
        r.machine.memory_per_node_bytes >> 20,
        r.cost_profile.name
    )?;
    writeln!(out, "end        {:?}", r.end)?;
    writeln!(out, "elapsed    {:.6} s", s(r.elapsed_ns))?;
    if !r.lru_gen.is_empty() {
        // The lru_gen debugfs view, summed over lruvecs.
        let w = r.lru_gen.iter().fold([0u64; 4], |a, v| {
            [
                a[0] + v.mm_walk.leaf_total,
                a[1] + v.mm_walk.leaf_young,
                a[2] + v.mm_walk.nonleaf_found,
                a[3] + v.mm_walk.nonleaf_total,
            ]
        });
        let gens: u64 = r.lru_gen.iter().map(|v| v.max_seq).max().unwrap_or(0);
        writeln!(
            out,
            "lru_gen    max_seq {gens}; aging walks: {} PTEs looked at, {} young cleared, {} of {} PTE tables walked (Bloom filter)",
            w[0], w[1], w[2], w[3]
        )?;
    }
    writeln!(
        out,
        "cpu time   user {:.6} s  system {:.6} s  interrupt {:.6} s  idle {:.6} s",
        s(r.cpu_time.user_ns),
        s(r.cpu_time.system_ns),
        s(r.cpu_time.interrupt_ns),
        s(r.cpu_time.idle_ns)
    )?;
    if let Some(h) = host {
        let secs = h.elapsed.as_secs_f64();
        let pages: i64 = r
            .vmstat
            .iter()
            .filter(|(k, _)| k.starts_with("pgalloc_"))
            .map(|(_, v)| *v)
            .sum();
        writeln!(
            out,
            "host       {:.2} s to simulate {:.3} s; {} pages allocated per host second",
            secs,
            s(r.elapsed_ns),
            crate::report::tables::thousands((pages.max(0) as f64 / secs.max(1e-9)) as u64),
        )?;
        if h.checked {
            writeln!(
                out,
                "checks     the invariant checker ran after each of the {} steps ({} checks){}",
                crate::report::tables::thousands(r.steps),
                crate::report::tables::thousands(r.steps),
                match r.end {
                    RunEnd::CheckFailed(_) => ": it failed (see end)",
                    _ => ": no violation",
                }
            )?;
        }
    }
    writeln!(out, "\ntasks")?;
    let w = r
        .tasks
        .iter()
        .filter(|t| !t.kthread)
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(12);
    for t in r.tasks.iter().filter(|t| !t.kthread) {
        write!(
            out,
            "  {:<w$} cpu {:<3} elapsed {:.6} s  majflt {}  minflt {}  page-cache misses {}",
            t.name,
            t.cpu,
            s(t.elapsed_ns),
            t.majflt,
            t.minflt,
            t.cache_misses
        )?;
        // In the order the programs declare their samples (bonnie's SeqCreate before
        // RandCreate, as mmtests prints them), undeclared labels last.
        let declared = |l: &str| {
            crate::workload::PROGRAMS
                .iter()
                .flat_map(|p| p.samples)
                .position(|s| s.label == l)
                .unwrap_or(usize::MAX)
        };
        let mut labels: Vec<(&String, &Vec<u64>)> = t.samples.iter().collect();
        labels.sort_by_key(|(l, _)| declared(l));
        for (label, v) in labels {
            let unit = t
                .sample_units
                .get(label)
                .cloned()
                .unwrap_or_else(|| crate::workload::SampleUnit::of(label, None));
            write!(out, "\n    {}: {}", label, fmt_samples(v, &unit))?;
        }
        if t.oom_killed {
            write!(out, "\n    killed by the OOM killer")?;
        }
        if !t.errors.is_empty() {
            write!(out, "\n    errors:")?;
        }
        for (e, n) in &t.errors {
            write!(out, " {}x{}", e, n)?;
        }
        writeln!(out)?;
    }
    if !r.cgroups.is_empty() {
        writeln!(out, "\ncgroups (memory.current / memory.peak / memory.max, MiB; memory.events; pgscan, pgsteal, refaults)")?;
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        // The name column fits the longest path (a nested cgroup's is its whole path).
        let w = r
            .cgroups
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0)
            .max(12);
        for c in &r.cgroups {
            let max = c
                .memory_max
                .map_or("max".to_string(), |m| format!("{:.0}", mib(m)));
            let e = &c.events;
            writeln!(
                out,
                "  {:<w$} {:>8.1} {:>8.1} {:>6}  low {} high {} max {} oom {} oom_kill {}  pgscan {} pgsteal {} workingset_refault {}",
                c.name,
                mib(c.current),
                mib(c.peak),
                max,
                e.low,
                e.high,
                e.max,
                e.oom,
                e.oom_kill,
                c.stat["pgscan"],
                c.stat["pgsteal"],
                c.stat["workingset_refault_file"] + c.stat["workingset_refault_anon"],
            )?;
            if e.oom_group_kill > 0 {
                writeln!(
                    out,
                    "  {:<w$} memory.oom.group: oom_group_kill {}",
                    "", e.oom_group_kill
                )?;
            }
            let s = &c.swap_events;
            // The root has no swap files (its swap is not counted per cgroup).
            if c.name != "/" && (c.swap_peak > 0 || s.high > 0 || s.max > 0 || s.fail > 0) {
                writeln!(
                    out,
                    "  {:<w$} swap {:>8.1} {:>8.1} {:>6}  memory.swap.events high {} max {} fail {}{}",
                    "",
                    mib(c.swap_current),
                    mib(c.swap_peak),
                    c.swap_max
                        .map_or("max".to_string(), |m| format!("{:.0}", mib(m))),
                    s.high,
                    s.max,
                    s.fail,
                    c.swap_high
                        .map_or(String::new(), |h| format!("  (swap.high {:.0})", mib(h))),
                )?;
            }
        }
    }
    let pressured: Vec<(&str, &crate::psi::Pressure)> = r
        .pressure
        .iter()
        .map(|p| ("/proc", p))
        .chain(
            r.cgroups
                .iter()
                .skip(1)
                .filter_map(|c| c.pressure.as_ref().map(|p| (c.name.as_str(), p))),
        )
        .filter(|(_, p)| {
            p.memory.some.total_us
                + p.io.some.total_us
                + p.cpu.some.total_us
                + p.irq.map_or(0, |f| f.full.total_us)
                > 0
        })
        .collect();
    if !pressured.is_empty() {
        writeln!(
            out,
            "\npressure (PSI: avg10 avg60 avg300 %, total stall ms; /proc is the machine)"
        )?;
        let w = pressured
            .iter()
            .map(|(n, _)| n.chars().count())
            .max()
            .unwrap_or(0)
            .max(12);
        for (name, p) in pressured {
            let files = [
                ("memory", Some(&p.memory)),
                ("io", Some(&p.io)),
                ("cpu", Some(&p.cpu)),
                ("irq", p.irq.as_ref()),
            ];
            for (res, f) in files.into_iter().filter_map(|(r, f)| Some((r, f?))) {
                // irq.pressure has a `full` line only.
                let lines = [("some", &f.some), ("full", &f.full)];
                for (kind, l) in lines.into_iter().skip(usize::from(res == "irq")) {
                    writeln!(
                        out,
                        "  {:<w$} {:<6} {}  {:>6.2} {:>6.2} {:>6.2}  {:>12.1}",
                        name,
                        res,
                        kind,
                        l.avg10,
                        l.avg60,
                        l.avg300,
                        l.total_us as f64 / 1000.0
                    )?;
                }
            }
        }
    }
    if r.devices.iter().any(|d| d.reads + d.writes > 0) {
        writeln!(out, "\ndevices (requests, pages, seeks, busy time)")?;
        for d in r.devices.iter().filter(|d| d.reads + d.writes > 0) {
            writeln!(
                out,
                "  {:<12} reads {} ({} pages)  writes {} ({} pages)  seeks {}  busy {:.3} s",
                d.name,
                d.reads,
                d.pages_read,
                d.writes,
                d.pages_written,
                d.seeks,
                d.busy_ns as f64 / 1e9,
            )?;
        }
    }
    if let Some(z) = &r.zram {
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        writeln!(
            out,
            "\nzram ({}, ratio {}): orig_data_size {:.1} MiB  compr_data_size {:.1} MiB  \
             mem_used_total {:.1} MiB (max {:.1})  failed_writes {}",
            z.comp_algorithm,
            z.compression_ratio,
            mib(z.orig_data_size),
            mib(z.compr_data_size),
            mib(z.mem_used_total),
            mib(z.mem_used_max),
            z.failed_writes
        )?;
    }
    if let Some(z) = &r.zswap {
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        writeln!(
            out,
            "\nzswap ({}, ratio {}, max_pool_percent {}): stored {:.1} MiB in a pool of \
             {:.1} MiB (max {:.1})  pool_limit_hit {}  written_back_pages {}  \
             reject_reclaim_fail {}  reject_alloc_fail {}",
            z.compressor,
            z.compression_ratio,
            z.max_pool_percent,
            mib(z.zswapped),
            mib(z.pool_total_size),
            mib(z.pool_max_size),
            z.counters.pool_limit_hit,
            z.counters.written_back_pages,
            z.counters.reject_reclaim_fail,
            z.counters.reject_alloc_fail
        )?;
    }
    writeln!(out, "\nvmstat (non-zero)")?;
    for (k, v) in r.vmstat.iter().filter(|(_, v)| **v != 0) {
        writeln!(out, "  {:<32} {}", k, v)?;
    }
    writeln!(out, "\nprofile (top 12 of busy CPU time)")?;
    for row in r.profile_top.iter().take(12) {
        writeln!(
            out,
            "  {:>8.4}%  {:>14} ns  {}",
            row.percent, row.ns, row.function
        )?;
    }
    // accessed-init (seed 000) moves the cost of marking new page-cache pages accessed on
    // the write path: its share means something only when a task wrote to files.
    if r.tasks.iter().any(|t| !t.kthread && t.write_bytes > 0) {
        for f in ["mark_page_accessed", "init_page_accessed"] {
            if let Some(row) = r.profile_top.iter().find(|p| p.function == f) {
                writeln!(
                    out,
                    "  share of {f} (the write path accessed-init changes): {:.4}%",
                    row.percent
                )?;
            }
        }
    }
    write_io_errors(r, out)?;
    if !r.oracle_violations.is_empty() {
        writeln!(
            out,
            "\ncontent oracle: {} violation(s)",
            r.oracle_violations.len()
        )?;
        for v in r.oracle_violations.iter().take(5) {
            writeln!(out, "  {}", v)?;
        }
    }
    if !r.oom.is_empty() {
        writeln!(out, "\nOOM killer: {} report(s)", r.oom.len())?;
        for v in r.oom.iter().take(5) {
            writeln!(out, "  {}", v)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    /// A program example run with the default options, and its summary.
    fn summary_of(program: &str) -> String {
        let p = crate::workload::program(program).unwrap();
        let sc = crate::scenario::parse_scenario(p.example, program, &[]).unwrap();
        let r = run_scenario(&sc, &RunOptions::default(), &mut |_| {}).unwrap();
        let host = HostTime {
            elapsed: std::time::Duration::from_millis(1500),
            checked: false,
        };
        let mut out = Vec::new();
        write_summary(&r, crate::kernel::DEFAULT_ERA, Some(&host), &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Summaries say what they measure: bonnie's phases are rates in files/s, higher is
    /// better (not "mean 0.000001 s"); dd's iterations are times in a unit that shows them;
    /// the JSON report carries the unit of every sample.
    #[test]
    fn summary_units_are_pinned() {
        let b = summary_of("bonnie");
        for phase in ["SeqCreate ops", "SeqCreate read", "RandCreate del"] {
            let line = b
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{phase}:")))
                .unwrap_or_else(|| panic!("no {phase} line in\n{b}"));
            assert!(
                line.contains(" files/s") && line.contains("(higher is better)"),
                "{line}"
            );
            assert!(!line.contains(" s ") && !line.contains("0.000"), "{line}");
        }
        assert!(b.contains("page-cache misses"), "{b}");
        assert!(!b.contains(" cache misses"), "{b}");
        assert!(b.contains("host       1.50 s to simulate"), "{b}");
        // bonnie writes files: the accessed-init share line belongs.
        assert!(
            b.contains("share of mark_page_accessed") || b.contains("share of init_page_accessed")
        );

        let d = summary_of("dd");
        let it = d.lines().find(|l| l.contains("iteration:")).unwrap();
        assert!(it.contains(" ms ") && it.contains("mean"), "{it}");

        // A reader writes nothing: no accessed-init share line.
        let r = summary_of("mmap-read");
        assert!(!r.contains("share of"), "{r}");

        let p = crate::workload::program("bonnie").unwrap();
        let sc = crate::scenario::parse_scenario(p.example, "bonnie", &[]).unwrap();
        let rep = run_scenario(&sc, &RunOptions::default(), &mut |_| {}).unwrap();
        let json = serde_json::to_value(&rep).unwrap();
        let units = &json["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == "bonnie")
            .unwrap()["sample_units"];
        assert_eq!(units["SeqCreate ops"]["unit"], "files/s");
        assert_eq!(units["SeqCreate ops"]["higher_is_better"], true);
    }
}
