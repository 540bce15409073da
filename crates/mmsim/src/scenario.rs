//! Scenarios: the TOML schema, the loader, `--set` overrides and validation.
//!
//! A scenario describes one simulated machine (NUMA nodes, CPUs, RAM, cost profile), its
//! block devices, its mounted filesystems, overrides of the feature preset, and the tasks
//! (workload programs) to run. `docs/scenarios.md` documents every field with its unit,
//! default and range.
//!
//! # How a scenario is read
//!
//! 1. The TOML text is parsed into a small document tree (`Item`) that remembers, for
//!    every key and value, its byte span in the text (as `toml_edit` parses it: its spans
//!    are public API). Syntax errors carry the line of the offending byte.
//! 2. `--set key=value` overrides edit that tree. Values written by `--set` remember the
//!    key they came from, so an error about them names `--set` and the key, not a line.
//! 3. The tree is read into the typed [`Scenario`] by hand-written readers that reject
//!    unknown fields (like serde's `deny_unknown_fields`) and check ranges and references
//!    as they go. Every error is one [`ScenarioError`] naming the file, the line of the
//!    offending key (inside the right `[[tasks]]` block, not the first occurrence of the
//!    key in the file) and the field's dotted path (`tasks.dd.block_size`), which is also
//!    the path `--set` accepts.
//!
//! Built-in scenarios live in `crates/mmsim/scenarios/*.toml` and are registered in one
//! table, [`builtin_scenarios`]: adding one is one file and one line. Workload programs
//! register in one table too ([`crate::workload::PROGRAMS`]): each program's file under
//! `workload/` holds its parameters' schema, their validation and their documentation,
//! and reads them with the helpers here (`View`, `want_*`), so its errors name the file,
//! line and field like every other.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

use serde::Serialize;

// ---------------------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------------------

/// Feature switches a scenario's `[features]` table may override.
pub const KNOWN_FEATURES: &[&str] = &[
    "accessed-init",
    "exec-protect",
    "batch-tlb-flush",
    "truncate-batch-shadow",
    "workingset",
    "file-only-when-plenty",
    "adaptive-swap-readahead",
    "fault-around",
    "memcg-charge-stock",
    "memcg-charge-batch-64",
    "memcg-multi-stock",
    "memcg-sync-high",
    "mlock-count",
    "memcg-high-throttle",
    "memcg-kmem-pgtables",
    "memcg-kmem-vfs",
    "filp-kmem",
    "memcg-kmem-objcg",
    "kswapd-file-writeback",
    "mapped-used-once",
    "context-readahead",
    "kswapd-flat-priority",
    "kswapd-short-sleep",
    "kswapd-failures",
    "dirty-seen-twice",
    "vmscan-kick-flushers",
    "read-only-activation",
    "read-only-refault",
    "cgroup-writeback",
    "memcg-v1-dirty-throttle",
    "buffer-head-kmem",
    "xarray-node-kmem",
    "writeback-activate",
    "lru-size-inactive-ratio",
    "shadow-lru-limit",
    "vma-swap-readahead",
    "vma-swap-readahead-nonrot",
    "swap-sync-io-bypass",
    "swap-percpu-cluster",
    "memcg-swap-full",
    "swap-cluster-lists",
    "swap-slots-cache",
    "no-swap-slots-cache",
    "mglru-workingset-rework",
    "mglru-memcg-lru",
    "mglru-refault-accounting",
    "workingset-restore",
    "refault-deactivate",
    "lru-cost-balance",
    "cache-challenges-anon",
    "anon-inactive-first",
    "anon-workingset",
    "pgrefill-global-only",
    "io-less-dirty-throttling",
    "dirtyable-reserve",
    "dirtyable-file-only",
    "dirty-ratio-page-units",
    "spread-dirty-pages",
    "reclaim-throttle",
    "oom-detection-rework",
    "fault-major-if-retried",
    "pgfault-on-completion",
    "read-accessed-folio",
    "no-reclaim-file-writeback",
    "pagevec-15",
    "lru-add-flush-full",
    "folio-batch-31",
    "lruvec-lru-lock",
    "release-pages-lock-batch",
    "activate-page-batch",
    "lru-cache-activate",
    "io-pages-readahead",
    "sync-readahead-needed-page",
    "itable-readahead-nowait",
    "write-begin-fs",
    "mmap-miss-workingset",
    "kswapd-cache-trim-retry",
    "shrink-free-batch",
    "lru-cost-rotations",
    "mmap-readaround-marker",
    "memcg-reclaim-batches",
    "zswap-memcg-lru",
    "zswap-exclusive-loads",
    "memory-reclaim-swappiness",
    "memory-reclaim-swappiness-max",
    "readahead-natural-boundary",
    "large-folios",
    "map-entire-folio",
    "no-double-slab-pressure",
    "fadvise-random-fmode",
    "invalidate-deactivate",
    "fadvise-drain-all",
    "fadvise-local-drain",
    "invalidate-skips-writeback",
    "mglru-optimize-deactivation",
    "madvise-cold-pageout",
    "madvise-free",
    "ttu-ignore-access",
    "vma-has-recency",
    "madvise-active-workingset",
    "rwf-dontcache",
    "tlb-defer-writable",
    "tlb-gen",
    "pcid",
    "lazy-tlb-skip",
    "mm-cpumask-lazy",
    "tlb-flush-batched",
    "watermark-scale-factor",
    "min-free-kbytes-256m",
    "madvise-willneed-swapin",
    "pageout-ignore-references",
    "proactive-reclaim-stats",
    "memsw-failcnt-untracked",
    "memcg-stats-ratelimited",
    "pgdat-dirty-needs-dirty",
    "readahead-nofs",
    "reclaim-state-root-only",
];

/// One validated scenario: machine, devices, filesystems, feature overrides and tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scenario {
    /// The scenario's name (`name`, required).
    pub name: String,
    /// Free-form description (`description`, default empty).
    pub description: String,
    /// Where the scenario came from: `built-in:<name>` or the file path.
    pub source: String,
    /// Root seed of every random choice (`seed`, default 1).
    pub seed: u64,
    /// Virtual interval between time-series samples, in ns (`sample_interval`, default 100 ms):
    /// the step of a run longer than [`crate::sim::SERIES_MIN_SAMPLES`] intervals; a
    /// shorter run is sampled more finely (`Sim::sample_step_ps`).
    pub sample_interval_ns: u64,
    /// The simulated machine (`[machine]`).
    pub machine: MachineSpec,
    /// Block devices (`[[devices]]`).
    pub devices: Vec<DeviceSpec>,
    /// Mounted filesystems (`[[filesystems]]`).
    pub filesystems: Vec<FsSpec>,
    /// Overrides of the feature preset (`[features]`), by feature name.
    pub features: BTreeMap<String, bool>,
    /// Files that exist before the run starts (`[[files]]`).
    pub files: Vec<FileSpec>,
    /// The swap area (`[swap]`), if any.
    pub swap: Option<SwapSpec>,
    /// The tasks to run (`[[tasks]]`, at least one).
    pub tasks: Vec<TaskSpec>,
    /// The kernel version whose rules the run follows (`kernel`; None = the default era,
    /// 6.18; `--kernel` overrides it).
    pub kernel: Option<crate::kernel::KernelEra>,
    /// The reclaim policy (`policy`; None = classic; `--policy` overrides it).
    pub policy: Option<crate::mm::policy::ReclaimPolicy>,
    /// MGLRU tunables (`[mglru]`, only with `policy = "mglru"`).
    pub mglru: Option<crate::mm::lru_gen::MglruConfig>,
    /// Memory cgroups (`[[cgroups]]`), parents before children.
    pub cgroups: Vec<CgroupSpec>,
    /// The memory controller is on the legacy hierarchy (`cgroup_version = 1`; default 2,
    /// the unified one): cgroup_subsys_on_dfl(memory_cgrp_subsys) is false, so there is no
    /// cgroup writeback (every inode is written by its device's root wb and
    /// balance_dirty_pages knows only the global domain) and limit reclaim is not
    /// "writeback throttling sane" (it waits on pages under writeback it marked before,
    /// and from 6.1 throttles when every page it isolated is dirty and unqueued).
    pub cgroup_v1: bool,
    /// The vm sysctls (`[vm]`; the kernel's defaults when absent).
    pub vm: VmSysctl,
}

/// A memory cgroup with cgroup v2 limits (`[[cgroups]]`). Sizes in bytes; `None` is
/// "max" (no limit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupSpec {
    /// Path below the root, `a` or `a/b` (the parent must be declared before).
    pub name: String,
    /// memory.max: hard limit; a charge beyond it reclaims, then OOM-kills in the cgroup.
    pub memory_max: Option<u64>,
    /// memory.high: throttling limit; usage above it is reclaimed on return to user space.
    pub memory_high: Option<u64>,
    /// memory.low: best-effort protection from reclaim.
    pub memory_low: u64,
    /// memory.min: hard protection from reclaim.
    pub memory_min: u64,
    /// memory.swap.max: swap the cgroup may use.
    pub swap_max: Option<u64>,
    /// memory.swap.high (5.8): swap usage above it throttles the cgroup's allocations.
    pub swap_high: Option<u64>,
    /// memory.oom.group (4.19): an OOM kill of a task below it kills every task of it.
    pub oom_group: bool,
    /// cgroup v1's memory.memsw.limit_in_bytes: memory and swap together (`cgroup_version
    /// = 1` only; at least memory_max).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memsw_max: Option<u64>,
    /// cgroup v1's memory.soft_limit_in_bytes: global reclaim takes from the cgroup most
    /// above it first (`cgroup_version = 1` only; `mm::memcontrol`'s soft limit tree).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soft_limit: Option<u64>,
    /// cgroup v1's memory.swappiness: the anon/file balance of reclaim of this cgroup's
    /// pages (`cgroup_version = 1` only; None: the parent's, vm.swappiness at the top).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swappiness: Option<u64>,
    /// memory.zswap.max (5.19): the compressed bytes the cgroup may keep in zswap.
    pub zswap_max: Option<u64>,
    /// memory.zswap.writeback (6.8): false keeps the cgroup's pages out of the swap
    /// device — no writeback from zswap, and a page zswap rejects stays in memory.
    pub zswap_writeback: bool,
}

/// A swap area on its own block device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SwapSpec {
    /// Size in bytes.
    pub size_bytes: u64,
    /// Device timing preset.
    pub preset: DevicePreset,
    /// Fault injection: only `write_error_rate` (failed swap-outs) applies to swap.
    pub faults: FaultSpec,
    /// vm.page_cluster: a swap fault reads the aligned cluster of 2^page_cluster slots
    /// around the faulting one (0 = no readahead). 0 ..= 10, default 3.
    pub page_cluster: u32,
    /// /sys/kernel/mm/swap/vma_ra_enabled (4.14+): `Some(false)` turns VMA-based swap
    /// readahead off (the slot-cluster readahead instead); None leaves the default, on.
    pub vma_ra_enabled: Option<bool>,
    /// `preset = "zram"`: the zram device's settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zram: Option<crate::mm::zram::ZramSpec>,
    /// `[swap.zswap]`: zswap's settings (None: zswap off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zswap: Option<crate::mm::zswap::ZswapSpec>,
}

/// A file that exists when the run starts: on its filesystem's device with data (not in
/// the page cache), or sparse (all holes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileSpec {
    /// Absolute path under a mounted filesystem (shared with the filesystem's namespace:
    /// a replay lays out millions of these).
    pub path: std::sync::Arc<str>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// `true`: every page has data on the device; `false`: a sparse file of holes.
    pub data: bool,
}

/// The `/proc/sys/vm` tunables a scenario sets (`[vm]`); each defaults to the kernel's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VmSysctl {
    /// vm.swappiness: how hard reclaim goes for anonymous pages against file pages
    /// (get_scan_count; MGLRU's get_swappiness). 0 ..= 200 from 5.8 (0 ..= 100 before),
    /// default 60. Under cgroup v2 every memory cgroup uses it.
    pub swappiness: u64,
    /// vm.dirty_ratio, %: the dirtyable memory a writer may dirty before it is throttled
    /// (balance_dirty_pages), globally and in a cgroup's writeback domain. Default 20.
    pub dirty_ratio: u64,
    /// vm.dirty_background_ratio, %: dirty memory above which the flusher writes in the
    /// background; at or above `dirty_ratio` it is taken as half of it
    /// (domain_dirty_limits). Default 10.
    pub dirty_background_ratio: u64,
    /// vm.vfs_cache_pressure, %: the superblock shrinker reports this share of its unused
    /// dentries and inodes as freeable (vfs_pressure_ratio); 0 never reclaims them under
    /// memory pressure, above 100 prefers them. Default 100.
    pub vfs_cache_pressure: u64,
    /// vm.min_free_kbytes, KiB, as written to the sysctl (user_min_free_kbytes): the min
    /// watermark, split across the nodes by size (__setup_per_zone_wmarks). None: the
    /// kernel's own, calculate_min_free_kbytes at boot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_free_kbytes: Option<u64>,
    /// vm.watermark_scale_factor (4.6+), 1/10,000 of a node's pages: the least distance
    /// between its min, low and high watermarks (how early kswapd wakes and how far it
    /// reclaims). 1 ..= 1000, 1 ..= 3000 from 5.17. Default 10.
    pub watermark_scale_factor: u64,
    /// vm.dirty_bytes: the dirty threshold in bytes instead of `dirty_ratio`, which then
    /// reads 0 (writing one sysctl zeroes the other). 0: `dirty_ratio` applies.
    pub dirty_bytes: u64,
    /// vm.dirty_background_bytes: the background threshold in bytes instead of
    /// `dirty_background_ratio` (then 0). 0: the ratio applies.
    pub dirty_background_bytes: u64,
    /// vm.dirty_expire_centisecs: a dirty inode older than this is written by the
    /// flusher's periodic (kupdate) pass. Default 3000 (30 s).
    pub dirty_expire_centisecs: u64,
    /// vm.dirty_writeback_centisecs: the flusher's periodic wake-up; 0 turns the periodic
    /// writeback off (only the thresholds and sync write). Default 500 (5 s).
    pub dirty_writeback_centisecs: u64,
}

impl Default for VmSysctl {
    fn default() -> Self {
        VmSysctl {
            swappiness: crate::mm::vmscan::SWAPPINESS,
            dirty_ratio: crate::fs::writeback::DIRTY_RATIO,
            dirty_background_ratio: crate::fs::writeback::DIRTY_BACKGROUND_RATIO,
            vfs_cache_pressure: 100,
            min_free_kbytes: None,
            watermark_scale_factor: crate::mm::page_alloc::WATERMARK_SCALE_FACTOR,
            dirty_bytes: 0,
            dirty_background_bytes: 0,
            dirty_expire_centisecs: 3000,
            dirty_writeback_centisecs: 500,
        }
    }
}

/// A hundredth of a second, ps.
const CENTISEC_PS: u64 = 10_000_000_000;

/// The first kernel with vm.watermark_scale_factor (4.6, "mm: scale kswapd watermarks in
/// proportion to memory").
pub const WATERMARK_SCALE_FACTOR_SINCE: crate::kernel::KernelEra =
    crate::kernel::KernelEra::new(4, 6);

/// The first kernel whose vm.watermark_scale_factor goes to 3000 (5.17,
/// "mm/pagealloc: sysctl: change watermark_scale_factor max limit to 30%"; 1000 before).
pub const WATERMARK_SCALE_FACTOR_3000_SINCE: crate::kernel::KernelEra =
    crate::kernel::KernelEra::new(5, 17);

impl VmSysctl {
    /// dirty_writeback_centisecs as virtual time: the flusher's periodic wake-up; None when
    /// 0 (no periodic writeback: wb_wakeup_delayed is not armed and
    /// wb_check_old_data_flush writes nothing).
    pub fn dirty_writeback_interval_ps(&self) -> Option<crate::machine::Ps> {
        (self.dirty_writeback_centisecs > 0).then(|| self.dirty_writeback_centisecs * CENTISEC_PS)
    }

    /// dirty_expire_centisecs as virtual time: the age at which a dirty inode is written by
    /// the periodic pass.
    pub fn dirty_expire_ps(&self) -> crate::machine::Ps {
        self.dirty_expire_centisecs * CENTISEC_PS
    }

    /// Why a run on `features`' rules cannot take these settings (`Sim::new`): swappiness
    /// above 100 before 5.8 (the era decides, as the sysctl's range does: without
    /// `lru-cost-balance` get_scan_count's old arithmetic takes up to 200 too), a
    /// watermark_scale_factor without the `watermark-scale-factor` rule (the 4.6 change
    /// that added the sysctl), or above its era's range ([`VmSysctl::era_error`]).
    pub fn run_error(&self, features: &crate::sim::Features) -> Option<String> {
        let era = features.era;
        if self.swappiness > 100 && era < SWAPPINESS_200_SINCE {
            return Some(format!(
                "vm.swappiness = {} needs kernel 5.8 or later (0 ..= 100 before); this run \
                 follows {era}",
                self.swappiness
            ));
        }
        let wsf = self.watermark_scale_factor;
        if wsf != crate::mm::page_alloc::WATERMARK_SCALE_FACTOR && !features.watermark_scale_factor
        {
            return Some(format!(
                "vm.watermark_scale_factor = {wsf} needs the rule `watermark-scale-factor` \
                 (4.6), which this run turns off"
            ));
        }
        self.era_error(era)
    }

    /// Why kernel `era` does not take the watermark_scale_factor set (above 1000 before
    /// 5.17), None when it does: for the scenario's kernel when it names one, and for the
    /// run's in [`VmSysctl::run_error`].
    pub fn era_error(&self, era: crate::kernel::KernelEra) -> Option<String> {
        let wsf = self.watermark_scale_factor;
        (wsf > 1000 && era < WATERMARK_SCALE_FACTOR_3000_SINCE).then(|| {
            format!(
                "vm.watermark_scale_factor = {wsf}: at most 1000 before kernel 5.17 (3000 \
                 from then on), so not on {era}"
            )
        })
    }
}

/// The simulated machine's topology and cost profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MachineSpec {
    /// Number of NUMA nodes (≥ 1).
    pub nodes: u32,
    /// CPUs on each node (≥ 1; nodes × cpus_per_node ≤ 1024).
    pub cpus_per_node: u32,
    /// RAM on each node in bytes (16 MiB ..= 16 TiB, a multiple of 4096).
    pub memory_per_node_bytes: u64,
    /// Name of the cost profile (only `default` exists for now).
    pub cost_profile: String,
}

/// Device model preset: sets the default latency and bandwidth of a block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DevicePreset {
    /// A rotating disk (`hdd`).
    Hdd,
    /// A SATA solid-state disk (`ssd`).
    Ssd,
    /// An NVMe solid-state disk (`nvme`).
    Nvme,
    /// A zram device (`zram`, swap only: `mm/zram.rs`): synchronous, in RAM.
    Zram,
}

impl DevicePreset {
    /// Every preset with its TOML spelling.
    pub const ALL: &'static [(&'static str, DevicePreset)] = &[
        ("hdd", DevicePreset::Hdd),
        ("ssd", DevicePreset::Ssd),
        ("nvme", DevicePreset::Nvme),
    ];

    /// The TOML spelling of this preset.
    pub fn as_str(self) -> &'static str {
        match self {
            DevicePreset::Hdd => "hdd",
            DevicePreset::Ssd => "ssd",
            DevicePreset::Nvme => "nvme",
            DevicePreset::Zram => "zram",
        }
    }
}

/// One block device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceSpec {
    /// Device name, referenced by `[[filesystems]] device` and `--set devices.<name>.…`.
    pub name: String,
    /// Model preset.
    pub preset: DevicePreset,
    /// Capacity in bytes (≥ 1 MiB).
    pub size_bytes: u64,
    /// Override of the preset's per-request latency, in ns.
    pub latency_ns: Option<u64>,
    /// Override of the preset's bandwidth, in bytes per second (≥ 1).
    pub bandwidth_bytes_per_s: Option<u64>,
    /// queue/read_ahead_kb of the device's bdi: the readahead window ceiling of its files,
    /// KiB, a multiple of 4 (default 128; 0 turns readahead off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_ahead_kb: Option<u64>,
    /// queue/max_sectors_kb: the largest request the device takes, KiB, a multiple of 4
    /// (default 1280, BLK_DEF_MAX_SECTORS); a read larger than the readahead window may
    /// read ahead up to it (`io-pages-readahead`, v4.10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_sectors_kb: Option<u64>,
    /// Requests a flash device (ssd, nvme) serves at once (`queue_depth`): each pays the
    /// latency, overlapping with the others', and the transfers share the bandwidth one
    /// after the other. None: one request at a time, the latency on a seek only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u64>,
    /// Fault injection (`read_error_rate`, `write_error_rate`, `fail`); none by default.
    pub faults: FaultSpec,
}

/// Fault injection on one block device: IO errors drawn from a seeded stream at a rate,
/// and pages that always fail. See `docs/reliability.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FaultSpec {
    /// Probability that a page read fails, in parts per billion (`read_error_rate`).
    pub read_error_ppb: u32,
    /// Probability that a page write fails, in parts per billion (`write_error_rate`).
    pub write_error_ppb: u32,
    /// Pages whose every read or write fails (`fail = [{ file, offset, op }]`).
    pub fail: Vec<FaultPoint>,
}

impl FaultSpec {
    /// True if this device injects no fault at all.
    pub fn is_none(&self) -> bool {
        self.read_error_ppb == 0 && self.write_error_ppb == 0 && self.fail.is_empty()
    }
}

/// One page of one file whose IO of one kind always fails (a bad sector).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultPoint {
    /// Absolute path of the file (on a blockfs on this device).
    pub file: String,
    /// Byte offset in the file; the page holding it fails.
    pub offset_bytes: u64,
    /// `true`: writes (writeback) fail; `false`: reads fail.
    pub write: bool,
}

/// A filesystem's `atime` mount option (when a read updates a file's access time:
/// `fs/jbd2.rs`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Atime {
    /// relatime (the default since 2.6.30): when the access time is not newer than the
    /// modification or change time, or is a day old.
    #[default]
    Relatime,
    /// noatime: never.
    Noatime,
    /// strictatime: at every read (once per tick).
    Strictatime,
}

impl Atime {
    /// Every option with its spelling.
    pub const ALL: &'static [(&'static str, Atime)] = &[
        ("relatime", Atime::Relatime),
        ("noatime", Atime::Noatime),
        ("strictatime", Atime::Strictatime),
    ];

    /// Is this the default (relatime)?
    pub fn is_default(&self) -> bool {
        *self == Atime::Relatime
    }
}

/// Filesystem type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FsKind {
    /// Memory-backed filesystem without a device (`tmpfs`).
    Tmpfs,
    /// Block-backed filesystem on a device (`blockfs`).
    Blockfs,
}

impl FsKind {
    /// Every filesystem type with its TOML spelling.
    pub const ALL: &'static [(&'static str, FsKind)] =
        &[("tmpfs", FsKind::Tmpfs), ("blockfs", FsKind::Blockfs)];

    /// The TOML spelling of this filesystem type.
    pub fn as_str(self) -> &'static str {
        match self {
            FsKind::Tmpfs => "tmpfs",
            FsKind::Blockfs => "blockfs",
        }
    }
}

/// One mounted filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsSpec {
    /// Absolute mount point without a trailing slash (or `/`).
    pub mount: String,
    /// Filesystem type (TOML key `type`).
    pub kind: FsKind,
    /// Backing device name: required for `blockfs`, absent for `tmpfs`.
    pub device: Option<String>,
    /// A tmpfs's size limit in bytes (the `size=` mount option; default half of RAM,
    /// shmem_default_max_blocks): the pages its files hold in memory and in swap. `None`
    /// for a blockfs (its device's size limits it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// The `atime` mount option (default relatime).
    #[serde(skip_serializing_if = "Atime::is_default")]
    pub atime: Atime,
    /// A blockfs with a journal (`journal = true`: jbd2, `fs/jbd2.rs`: metadata blocks
    /// held by the journal, logged every 5 s, then dirty). The default is ext4 without one
    /// (`mkfs.ext4 -O ^has_journal`, as on the project's reference VM, where the model was
    /// measured): a metadata block is dirtied at once. Always false for a tmpfs.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub journal: bool,
}

/// One task: a workload program pinned to a CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskSpec {
    /// Task name, unique in the scenario.
    pub name: String,
    /// CPU the task runs on (0 ..= total CPUs − 1).
    pub cpu: u32,
    /// Virtual time at which the task starts, in ns.
    pub start_ns: u64,
    /// The memory cgroup the task runs in (`cgroup`; None = the root cgroup).
    pub cgroup: Option<String>,
    /// /proc/<pid>/oom_score_adj: -1000 (never OOM-killed) ..= 1000 (killed first).
    pub oom_score_adj: i16,
    /// The process the task is a thread of (`thread_group`): tasks naming the same one
    /// share one address space (clone with CLONE_VM | CLONE_THREAD). None: a process of
    /// its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_group: Option<String>,
    /// The program and its parameters.
    pub program: ProgramSpec,
}

pub use crate::workload::ProgramSpec;
use crate::workload::PROGRAMS;

/// A scenario that could not be loaded: where, which field, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (`built-in:<name>`, a path, or `--set` for overrides).
    pub file: String,
    /// 1-based line of the offending key, when known.
    pub line: Option<usize>,
    /// Dotted path of the offending field (`tasks.dd.size`); empty when no field applies.
    pub field: String,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Scenario {
    /// Number of CPUs on all nodes.
    pub fn total_cpus(&self) -> u32 {
        self.machine.nodes * self.machine.cpus_per_node
    }

    /// RAM on all nodes, in bytes.
    pub fn total_memory_bytes(&self) -> u64 {
        u64::from(self.machine.nodes) * self.machine.memory_per_node_bytes
    }

    /// The filesystem a path lives on: longest matching mount, compared by path component
    /// (`/mnt` holds `/mnt/x` but not `/mntx`). Returns its index in `filesystems`.
    pub fn resolve_mount<'a>(&'a self, path: &str) -> Option<(usize, &'a FsSpec)> {
        resolve_mount_in(&self.filesystems, path)
    }

    /// The device with this name.
    pub fn device(&self, name: &str) -> Option<&DeviceSpec> {
        self.devices.iter().find(|d| d.name == name)
    }
}

// ---------------------------------------------------------------------------------------
// Built-in scenarios and loading
// ---------------------------------------------------------------------------------------

/// Built-in scenarios: (name, one-line description, TOML text). One line per scenario.
const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "dd-tmpfs",
        "dd a RAM/10 file on tmpfs, 5 iterations, deleted each time (seed 000, accessed-init)",
        include_str!("../scenarios/dd-tmpfs.toml"),
    ),
    (
        "dd-blockfs",
        "dd a RAM/10 file on a block fs on an SSD, 5 iterations (seed 000, accessed-init)",
        include_str!("../scenarios/dd-blockfs.toml"),
    ),
    (
        "lru-file-mmap-read",
        "vm-scalability lru-file-mmap-read, small: 4 CPUs, 256 MiB, 10xRAM of mmap-read sparse files (seed 002)",
        include_str!("../scenarios/lru-file-mmap-read.toml"),
    ),
    (
        "lru-file-mmap-read-full",
        "lru-file-mmap-read on the published machine: 4 nodes x 12 CPUs, 64 GiB (seed 002)",
        include_str!("../scenarios/lru-file-mmap-read-full.toml"),
    ),
    (
        "lru-file-mmap-read-1s",
        "lru-file-mmap-read on a single socket: 12 CPUs, 16 GiB (seed 002)",
        include_str!("../scenarios/lru-file-mmap-read-1s.toml"),
    ),
    (
        "fileserver-hot10",
        "exec mappings re-touched at user pace while a 10%-hot pread stream passes (seed 001)",
        include_str!("../scenarios/fileserver-hot10.toml"),
    ),
    (
        "anon-pressure",
        "two programs writing 1.5xRAM of anonymous memory with swap (pswpin/pswpout)",
        include_str!("../scenarios/anon-pressure.toml"),
    ),
    (
        "desktop",
        "51 applications started one after another on 512 MiB with 1 GiB swap, windows switched after each (seed 001)",
        include_str!("../scenarios/desktop.toml"),
    ),
    (
        "stream-read",
        "read a 4xRAM file sequentially twice (reclaim by kswapd, refaults)",
        include_str!("../scenarios/stream-read.toml"),
    ),
    (
        "hot-stream",
        "a 0.3xRAM hot file re-read while a 4xRAM stream passes, stale active list (workingset)",
        include_str!("../scenarios/hot-stream.toml"),
    ),
    (
        "sparsetruncate",
        "unlink 2xRAM of sparse 4 MiB files after a read of every page, each unlink timed (seed 003)",
        include_str!("../scenarios/sparsetruncate.toml"),
    ),
    (
        "bonnie",
        "bonnie++ SeqCreate and RandCreate: 1024 files of 2xRAM/1024 bytes, 3 iterations (seed 003)",
        include_str!("../scenarios/bonnie.toml"),
    ),
    (
        "memcg-stream",
        "a 128 MiB cgroup streams 1 GiB beside a hot-file cgroup (limit reclaim stays inside), kernel 6.18",
        include_str!("../scenarios/memcg-stream.toml"),
    ),
    (
        "mglru-anon-stream",
        "a mapped anon working set (RAM/2) re-touched while a 4xRAM file streams through a mapping, kernel 6.18, MGLRU (page-table-walk aging)",
        include_str!("../scenarios/mglru-anon-stream.toml"),
    ),
];

/// The table of built-in scenarios in `docs/scenarios.md` (`mmsim scenarios --markdown`):
/// name, description, and the programs its tasks run.
pub fn builtins_markdown() -> String {
    let mut s = String::from("| name | programs | description |\n|---|---|---|\n");
    for (name, desc, _) in BUILTINS {
        let programs = match load_scenario(name, &[]) {
            Ok(sc) => {
                let mut p: Vec<&str> = sc.tasks.iter().map(|t| t.program.name()).collect();
                p.dedup();
                p.iter()
                    .map(|p| format!("`{p}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            Err(e) => format!("(does not load: {e})"),
        };
        s += &format!("| `{name}` | {programs} | {desc} |\n");
    }
    s
}

/// `mmsim scenarios --verbose`: each built-in with the programs it runs, its kernel era
/// and machine, then its description.
pub fn builtins_text() -> String {
    let mut s = String::new();
    for (name, desc, _) in BUILTINS {
        match load_scenario(name, &[]) {
            Ok(sc) => {
                let mut p: Vec<&str> = sc.tasks.iter().map(|t| t.program.name()).collect();
                p.dedup();
                s += &format!(
                    "{name:<24} programs {}; kernel {}; {} CPUs, {} RAM; {} task(s)\n",
                    p.join(", "),
                    sc.kernel.unwrap_or(crate::kernel::DEFAULT_ERA),
                    sc.total_cpus(),
                    fmt_bytes(sc.total_memory_bytes()),
                    sc.tasks.len()
                );
            }
            Err(e) => s += &format!("{name:<24} does not load: {e}\n"),
        }
        s += &format!("{:<24} {desc}\n", "");
    }
    s
}

/// The built-in scenarios: (name, one-line description, TOML text).
pub fn builtin_scenarios() -> &'static [(&'static str, &'static str, &'static str)] {
    BUILTINS
}

/// Load a built-in by name, or a file when `name_or_path` ends in `.toml` or contains
/// '/'. `sets` are `--set key=value` overrides applied to the TOML document before typed
/// parsing.
pub fn load_scenario(name_or_path: &str, sets: &[String]) -> Result<Scenario, ScenarioError> {
    if name_or_path.ends_with(".toml") || name_or_path.contains('/') {
        let text = std::fs::read_to_string(name_or_path).map_err(|e| ScenarioError {
            file: name_or_path.to_string(),
            line: None,
            field: String::new(),
            message: format!("cannot read scenario file: {e}"),
        })?;
        return parse_scenario(&text, name_or_path, sets);
    }
    match BUILTINS.iter().find(|(name, _, _)| *name == name_or_path) {
        Some((name, _, text)) => parse_scenario(text, &format!("built-in:{name}"), sets),
        None => {
            let names: Vec<&str> = BUILTINS.iter().map(|(name, _, _)| *name).collect();
            Err(ScenarioError {
                file: name_or_path.to_string(),
                line: None,
                field: String::new(),
                message: format!(
                    "unknown built-in scenario `{name_or_path}`; built-ins: {} \
                     (a name ending in .toml or containing '/' is read as a file)",
                    names.join(", ")
                ),
            })
        }
    }
}

/// Parse and validate scenario TOML `text`; `source` names it in errors and in
/// [`Scenario::source`]. `sets` are `--set key=value` overrides applied first.
pub fn parse_scenario(
    text: &str,
    source: &str,
    sets: &[String],
) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx::new(source, text);
    let mut root = parse_document(&ctx)?;
    for set in sets {
        apply_set(&mut root, set)?;
    }
    expand_replicas(&ctx, &mut root)?;
    read_scenario(&ctx, &root)
}

/// `replicas = N` (or `"cpus"`, one per CPU) in a `[[tasks]]` or `[[files]]` table makes N
/// copies of it before validation: `{i}` in any string becomes the copy's index and `{n}`
/// the number of copies (so `size = "ram*10/{n}"` splits 10×RAM between them), a task's
/// name gets the index appended when it has no `{i}`, and a task's `cpu` becomes
/// `(cpu + i) mod total CPUs`. This is how one scenario line gives vm-scalability's one
/// reader per CPU at any machine size.
fn expand_replicas(ctx: &Ctx<'_>, root: &mut Table) -> Result<(), ScenarioError> {
    let int_at = |t: &Table, table: &str, key: &str, default: i64| -> i64 {
        match t.get(table).map(|e| &e.item.value) {
            Some(Value::Table(m)) => match m.get(key).map(|e| &e.item.value) {
                Some(Value::Int(v)) => *v,
                _ => default,
            },
            _ => default,
        }
    };
    // Clamped: a huge or negative (invalid) machine must not make `"cpus"` copy a task
    // billions of times before validation rejects the machine.
    let total_cpus = int_at(root, "machine", "nodes", 1)
        .saturating_mul(int_at(root, "machine", "cpus_per_node", 1))
        .clamp(1, 4096);
    for array in ["tasks", "files"] {
        let Some(pos) = root.position(array) else {
            continue;
        };
        let Value::Array(items) = &mut root.entries[pos].item.value else {
            continue;
        };
        let mut out: Vec<Item> = Vec::with_capacity(items.len());
        for it in items.drain(..) {
            let Value::Table(t) = &it.value else {
                out.push(it);
                continue;
            };
            let Some(rpos) = t.position("replicas") else {
                out.push(it);
                continue;
            };
            let rentry = &t.entries[rpos];
            let line = match (&rentry.item.origin, &rentry.key_span) {
                (Origin::File, Some(s)) => Some(ctx.line(s.start)),
                _ => None,
            };
            let n = match &rentry.item.value {
                Value::Int(v) if *v >= 1 && *v <= 4096 => *v,
                Value::Str(s) if s == "cpus" => total_cpus,
                other => {
                    return Err(ScenarioError {
                        file: ctx.file.to_string(),
                        line,
                        field: format!("{array}.replicas"),
                        message: format!(
                            "replicas must be an integer from 1 to 4096 or \"cpus\", got {}",
                            other.kind()
                        ),
                    });
                }
            };
            for i in 0..n {
                let mut copy = t.clone();
                copy.entries.remove(rpos);
                let tag = i.to_string();
                let mut has_name_tag = false;
                for e in copy.entries.iter_mut() {
                    if let Value::Str(s) = &mut e.item.value {
                        if e.key == "name" && s.contains("{i}") {
                            has_name_tag = true;
                        }
                        *s = s.replace("{i}", &tag).replace("{n}", &n.to_string());
                    }
                }
                if array == "tasks" {
                    if !has_name_tag {
                        if let Some(e) = copy.entries.iter_mut().find(|e| e.key == "name") {
                            if let Value::Str(s) = &mut e.item.value {
                                s.push_str(&tag);
                            }
                        }
                    }
                    match copy.entries.iter_mut().find(|e| e.key == "cpu") {
                        Some(e) => {
                            if let Value::Int(c) = &mut e.item.value {
                                // (cpu mod n + i) mod n: no overflow for any cpu; a
                                // negative cpu stays as it is, for validation to refuse.
                                if *c >= 0 {
                                    *c = (*c % total_cpus + i) % total_cpus;
                                }
                            }
                        }
                        None => {
                            let mut e = rentry.clone();
                            e.key = "cpu".into();
                            e.item.value = Value::Int(i % total_cpus);
                            copy.entries.push(e);
                        }
                    }
                }
                out.push(Item {
                    value: Value::Table(copy),
                    span: it.span.clone(),
                    origin: it.origin.clone(),
                });
            }
        }
        *items = out;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// The document tree: TOML values with spans and origins
// ---------------------------------------------------------------------------------------

/// Where a value came from.
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    /// The scenario text.
    File,
    /// A `--set` override with this key.
    Set(String),
}

/// A TOML value with its span in the text and its origin.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Item {
    value: Value,
    span: Option<Range<usize>>,
    origin: Origin,
}

#[derive(Debug, Clone, PartialEq)]
enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    Datetime(String),
    Array(Vec<Item>),
    Table(Table),
}

/// A table, in document order.
#[derive(Debug, Clone, PartialEq, Default)]
struct Table {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    key: String,
    key_span: Option<Range<usize>>,
    item: Item,
}

impl Item {
    fn plain(value: Value) -> Item {
        Item {
            value,
            span: None,
            origin: Origin::File,
        }
    }

    /// Mark this value and everything in it as written by `--set key`.
    fn mark_set(&mut self, key: &str) {
        self.origin = Origin::Set(key.to_string());
        self.span = None;
        match &mut self.value {
            Value::Array(items) => items.iter_mut().for_each(|i| i.mark_set(key)),
            Value::Table(t) => t.entries.iter_mut().for_each(|e| {
                e.key_span = None;
                e.item.mark_set(key);
            }),
            _ => {}
        }
    }
}

impl Value {
    /// "a string", "an integer", … for messages.
    fn kind(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Float(_) => "a float",
            Value::Bool(_) => "a boolean",
            Value::Datetime(_) => "a datetime",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }
}

impl Table {
    fn position(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.key == key)
    }

    fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The `name` of an array element, when it is a string.
    fn name(&self) -> Option<&str> {
        match self.get("name").map(|e| &e.item.value) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }
}

/// The document tree of a parsed TOML text: every value and key with its span, as
/// `toml_edit` keeps them (its spans are public API).
fn from_edit_item(item: &toml_edit::Item) -> Item {
    match item {
        toml_edit::Item::Value(v) => from_edit_value(v),
        toml_edit::Item::Table(t) => Item {
            value: Value::Table(Table {
                entries: t
                    .iter()
                    .map(|(k, it)| Entry {
                        key: k.to_string(),
                        key_span: t.key(k).and_then(toml_edit::Key::span),
                        item: from_edit_item(it),
                    })
                    .collect(),
            }),
            span: t.span(),
            origin: Origin::File,
        },
        toml_edit::Item::ArrayOfTables(a) => Item {
            value: Value::Array(
                a.iter()
                    .map(|t| from_edit_item(&toml_edit::Item::Table(t.clone())))
                    .collect(),
            ),
            span: a.span(),
            origin: Origin::File,
        },
        // Table iterators leave out empty slots; nothing else holds one.
        toml_edit::Item::None => Item::plain(Value::Table(Table::default())),
    }
}

fn from_edit_value(v: &toml_edit::Value) -> Item {
    use toml_edit::Value as V;
    let value = match v {
        V::String(x) => Value::Str(x.value().clone()),
        V::Integer(x) => Value::Int(*x.value()),
        V::Float(x) => Value::Float(*x.value()),
        V::Boolean(x) => Value::Bool(*x.value()),
        V::Datetime(x) => Value::Datetime(x.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(from_edit_value).collect()),
        V::InlineTable(t) => Value::Table(Table {
            entries: t
                .iter()
                .map(|(k, it)| Entry {
                    key: k.to_string(),
                    key_span: t.key(k).and_then(toml_edit::Key::span),
                    item: from_edit_value(it),
                })
                .collect(),
        }),
    };
    Item {
        value,
        span: v.span(),
        origin: Origin::File,
    }
}

/// Parse a TOML text into the document tree.
fn parse_toml(text: &str) -> Result<Table, toml_edit::TomlError> {
    let doc = toml_edit::ImDocument::parse(text)?;
    match from_edit_item(doc.as_item()).value {
        Value::Table(t) => Ok(t),
        _ => unreachable!("a TOML document is a table"),
    }
}

/// The file being read: its name for errors and its text for line numbers.
struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
    /// Byte offsets of the text's newlines, in order (a field's line by binary search:
    /// every field read records its location).
    newlines: Vec<usize>,
}

impl<'a> Ctx<'a> {
    fn new(file: &'a str, text: &'a str) -> Ctx<'a> {
        let newlines = text
            .bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .map(|(i, _)| i)
            .collect();
        Ctx {
            file,
            text,
            newlines,
        }
    }

    /// 1-based line of a byte offset.
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.newlines.partition_point(|&n| n < end) + 1
    }
}

fn parse_document(ctx: &Ctx<'_>) -> Result<Table, ScenarioError> {
    parse_toml(ctx.text).map_err(|e| ScenarioError {
        file: ctx.file.to_string(),
        line: e.span().map(|s| ctx.line(s.start)),
        field: String::new(),
        message: format!(
            "invalid TOML: {}",
            e.message().trim().lines().collect::<Vec<_>>().join("; ")
        ),
    })
}

// ---------------------------------------------------------------------------------------
// --set overrides
// ---------------------------------------------------------------------------------------

fn set_error(field: &str, message: String) -> ScenarioError {
    ScenarioError {
        file: "--set".to_string(),
        line: None,
        field: field.to_string(),
        message,
    }
}

/// Parse a `--set` value as a TOML value; fall back to a string.
fn parse_set_value(raw: &str, key: &str) -> Item {
    // `kernel=4.20` is a version, not the float 4.2.
    if key == "kernel" && !raw.starts_with('"') {
        let mut item = Item::plain(Value::Str(raw.to_string()));
        item.mark_set(key);
        return item;
    }
    let doc = format!("v = {raw}\n");
    let mut item = match parse_toml(&doc) {
        Ok(mut t) if t.entries.len() == 1 && t.entries[0].key == "v" => t.entries.remove(0).item,
        _ => Item::plain(Value::Str(raw.to_string())),
    };
    item.mark_set(key);
    item
}

/// Apply one `--set key=value` to the document.
fn apply_set(root: &mut Table, set: &str) -> Result<(), ScenarioError> {
    let Some((key, raw)) = set.split_once('=') else {
        return Err(set_error(
            set,
            "expected key=value, e.g. machine.cpus_per_node=2 or tasks.dd.iterations=3".into(),
        ));
    };
    let key = key.trim();
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(set_error(key, "empty component in the key".into()));
    }
    let value = parse_set_value(raw.trim(), key);

    let mut cur: &mut Table = root;
    let mut i = 0;
    loop {
        let part = parts[i];
        let path = parts[..=i].join(".");
        if i + 1 == parts.len() {
            match cur.position(part) {
                Some(p) => {
                    let entry = &mut cur.entries[p];
                    if matches!(entry.item.value, Value::Table(_) | Value::Array(_)) {
                        return Err(set_error(
                            key,
                            format!(
                                "`{path}` is {}; set one of its keys instead ({path}.<key>=…)",
                                entry.item.value.kind()
                            ),
                        ));
                    }
                    entry.item = value;
                }
                None => cur.entries.push(Entry {
                    key: part.to_string(),
                    key_span: None,
                    item: value,
                }),
            }
            return Ok(());
        }
        let p = match cur.position(part) {
            Some(p) => p,
            // `[features]` and `[vm]` are optional in the file but always tables of the
            // schema.
            None if i == 0 && (part == "features" || part == "vm") => {
                cur.entries.push(Entry {
                    key: part.to_string(),
                    key_span: None,
                    item: Item::plain(Value::Table(Table::default())),
                });
                cur.entries.len() - 1
            }
            None => {
                return Err(set_error(key, format!("no table `{path}` in the scenario")));
            }
        };
        match &mut cur.entries[p].item.value {
            Value::Table(t) => {
                cur = t;
                i += 1;
            }
            Value::Array(items) => {
                let sel = parts[i + 1];
                let elem_path = format!("{path}.{sel}");
                if i + 2 == parts.len() {
                    return Err(set_error(
                        key,
                        format!(
                            "`{elem_path}` is a table; set one of its keys ({elem_path}.<key>=…)"
                        ),
                    ));
                }
                let by_name = items.iter().position(|it| match &it.value {
                    Value::Table(t) => t.name() == Some(sel),
                    _ => false,
                });
                let idx =
                    by_name.or_else(|| sel.parse::<usize>().ok().filter(|&n| n < items.len()));
                let Some(idx) = idx else {
                    let names: Vec<&str> = items
                        .iter()
                        .filter_map(|it| match &it.value {
                            Value::Table(t) => t.name(),
                            _ => None,
                        })
                        .collect();
                    return Err(set_error(
                        key,
                        format!(
                            "no element `{sel}` in `{path}`: give a name ({}) or an index (0..{})",
                            if names.is_empty() {
                                "none".to_string()
                            } else {
                                names.join(", ")
                            },
                            items.len()
                        ),
                    ));
                };
                match &mut items[idx].value {
                    Value::Table(t) => {
                        cur = t;
                        i += 2;
                    }
                    other => {
                        return Err(set_error(
                            key,
                            format!("`{elem_path}` is {}, not a table", other.kind()),
                        ));
                    }
                }
            }
            other => {
                return Err(set_error(
                    key,
                    format!("`{path}` is {}, not a table", other.kind()),
                ));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Typed reading and validation
// ---------------------------------------------------------------------------------------

/// Where a field is: file, line and dotted path.
#[derive(Debug, Clone)]
pub(crate) struct Loc {
    file: String,
    line: Option<usize>,
    field: String,
}

impl Loc {
    /// An error at this location.
    pub(crate) fn err(&self, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            file: self.file.clone(),
            line: self.line,
            field: self.field.clone(),
            message: message.into(),
        }
    }
}

/// A table being read: its entries, its dotted path and its own location.
pub(crate) struct View<'a> {
    ctx: &'a Ctx<'a>,
    table: &'a Table,
    path: String,
    pub(crate) loc: Loc,
    /// The keys a program's parser may read (its documented parameters and the task's
    /// common keys); checked in debug builds so that no parameter goes undocumented.
    declared: Option<Vec<&'static str>>,
}

impl<'a> View<'a> {
    fn field_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn loc_of(&self, e: &Entry) -> Loc {
        match &e.item.origin {
            Origin::Set(k) => Loc {
                file: "--set".into(),
                line: None,
                field: k.clone(),
            },
            Origin::File => Loc {
                file: self.ctx.file.to_string(),
                line: e
                    .key_span
                    .as_ref()
                    .or(e.item.span.as_ref())
                    .map(|s| self.ctx.line(s.start)),
                field: self.field_path(&e.key),
            },
        }
    }

    /// Reject keys not in `allowed` (serde's `deny_unknown_fields`).
    fn deny_unknown(&self, allowed: &[&str]) -> Result<(), ScenarioError> {
        for e in &self.table.entries {
            if !allowed.contains(&e.key.as_str()) {
                return Err(self.loc_of(e).err(format!(
                    "unknown field `{}`; expected one of: {}",
                    e.key,
                    allowed.join(", ")
                )));
            }
        }
        Ok(())
    }

    pub(crate) fn get(&self, key: &str) -> Option<(&'a Item, Loc)> {
        debug_assert!(
            self.declared.as_ref().is_none_or(|d| d.contains(&key)),
            "{}: the program reads `{key}`, which its PARAMS do not declare",
            self.path
        );
        self.table.get(key).map(|e| (&e.item, self.loc_of(e)))
    }

    fn missing(&self, key: &str, what: &str) -> ScenarioError {
        Loc {
            field: self.field_path(key),
            ..self.loc.clone()
        }
        .err(format!("missing required field `{key}` ({what})"))
    }

    /// An optional field read with `f`.
    pub(crate) fn opt<T>(
        &self,
        key: &str,
        f: impl FnOnce(&'a Item, &Loc) -> Result<T, ScenarioError>,
    ) -> Result<Option<(T, Loc)>, ScenarioError> {
        match self.get(key) {
            Some((item, loc)) => Ok(Some((f(item, &loc)?, loc))),
            None => Ok(None),
        }
    }

    /// A required field read with `f`; `what` describes it in the "missing" message.
    pub(crate) fn req<T>(
        &self,
        key: &str,
        what: &str,
        f: impl FnOnce(&'a Item, &Loc) -> Result<T, ScenarioError>,
    ) -> Result<(T, Loc), ScenarioError> {
        self.opt(key, f)?.ok_or_else(|| self.missing(key, what))
    }

    /// A sub-table view.
    fn child(&self, table: &'a Table, path: String, loc: Loc) -> View<'a> {
        View {
            ctx: self.ctx,
            table,
            path,
            loc,
            declared: None,
        }
    }

    /// The elements of an array of tables (`[[key]]`), each as a view with its path
    /// (`key.<name>` when the element has a string `name`, else `key.<index>`).
    fn tables(&self, key: &str) -> Result<Option<(Vec<View<'a>>, Loc)>, ScenarioError> {
        let Some((item, loc)) = self.get(key) else {
            return Ok(None);
        };
        let Value::Array(items) = &item.value else {
            return Err(loc.err(format!(
                "expected an array of tables ([[{key}]]), found {}",
                item.value.kind()
            )));
        };
        let mut views = Vec::new();
        for (i, it) in items.iter().enumerate() {
            let Value::Table(t) = &it.value else {
                return Err(loc.err(format!(
                    "expected an array of tables ([[{key}]]), element {i} is {}",
                    it.value.kind()
                )));
            };
            let path = match t.name() {
                Some(n) if valid_name(n) || (key == "cgroups" && valid_cgroup_path(n)) => {
                    format!("{}.{n}", self.field_path(key))
                }
                _ => format!("{}.{i}", self.field_path(key)),
            };
            let line = match (&it.origin, &it.span) {
                (Origin::File, Some(s)) => Some(self.ctx.line(s.start)),
                _ => loc.line,
            };
            let eloc = Loc {
                file: loc.file.clone(),
                line,
                field: path.clone(),
            };
            views.push(self.child(t, path, eloc));
        }
        Ok(Some((views, loc)))
    }
}

fn type_error(loc: &Loc, expected: &str, item: &Item) -> ScenarioError {
    loc.err(format!("expected {expected}, found {}", item.value.kind()))
}

pub(crate) fn want_str<'a>(item: &'a Item, loc: &Loc) -> Result<&'a str, ScenarioError> {
    match &item.value {
        Value::Str(s) => Ok(s),
        _ => Err(type_error(loc, "a string", item)),
    }
}

pub(crate) fn want_bool(item: &Item, loc: &Loc) -> Result<bool, ScenarioError> {
    match item.value {
        Value::Bool(b) => Ok(b),
        _ => Err(type_error(loc, "a boolean (true or false)", item)),
    }
}

/// A boolean, or one of `words` (a mode beside on/off, e.g. `mlock = "onfault"`):
/// `Ok(Ok(bool))` or `Ok(Err(word))`.
pub(crate) fn want_bool_or_word(
    item: &Item,
    loc: &Loc,
    words: &[&'static str],
) -> Result<Result<bool, &'static str>, ScenarioError> {
    let expected = || {
        let w: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
        format!("true, false or {}", w.join(", "))
    };
    match &item.value {
        Value::Bool(b) => Ok(Ok(*b)),
        Value::Str(s) => match words.iter().find(|w| **w == s.as_str()) {
            Some(w) => Ok(Err(*w)),
            None => Err(loc.err(format!("unknown value \"{s}\"; expected {}", expected()))),
        },
        _ => Err(type_error(loc, &expected(), item)),
    }
}

pub(crate) fn want_u64(item: &Item, loc: &Loc) -> Result<u64, ScenarioError> {
    match item.value {
        Value::Int(v) => u64::try_from(v).map_err(|_| loc.err(format!("must be ≥ 0, got {v}"))),
        _ => Err(type_error(loc, "an integer", item)),
    }
}

/// A finite number ≥ 0 (a float or an integer).
pub(crate) fn want_f64(item: &Item, loc: &Loc) -> Result<f64, ScenarioError> {
    let v = match item.value {
        Value::Float(v) => v,
        Value::Int(v) => v as f64,
        _ => return Err(type_error(loc, "a number", item)),
    };
    if !v.is_finite() || v < 0.0 {
        return Err(loc.err(format!("must be a finite number ≥ 0, got {v}")));
    }
    Ok(v)
}

pub(crate) fn want_u32(item: &Item, loc: &Loc) -> Result<u32, ScenarioError> {
    let v = want_u64(item, loc)?;
    u32::try_from(v).map_err(|_| loc.err(format!("must be ≤ {}, got {v}", u32::MAX)))
}

fn want_table<'a>(item: &'a Item, loc: &Loc) -> Result<&'a Table, ScenarioError> {
    match &item.value {
        Value::Table(t) => Ok(t),
        _ => Err(type_error(loc, "a table", item)),
    }
}

const SIZE_FORMS: &str = "accepted: an integer number of bytes, or a string such as \"4096\", \
     \"4k\"/\"4KiB\", \"400MiB\", \"4GiB\", \"1TiB\" (binary), \"500MB\"/\"2GB\" (decimal), \
     or relative to total RAM: \"ram\", \"ram/10\", \"ram*2\", \"ram*2/1024\"";
const DURATION_FORMS: &str = "accepted: an integer number of nanoseconds, or a string such as \
     \"10ns\", \"80us\", \"100ms\", \"5s\"";
const BANDWIDTH_FORMS: &str = "accepted: an integer number of bytes per second, or a string \
     such as \"500MB/s\", \"2GB/s\" (decimal) or \"400MiB/s\" (binary)";

/// A size in bytes; `ram_bytes` is the total RAM for `ram` expressions (None: not allowed).
pub(crate) fn want_size(
    item: &Item,
    loc: &Loc,
    ram_bytes: Option<u64>,
) -> Result<u64, ScenarioError> {
    match &item.value {
        Value::Int(_) => want_u64(item, loc),
        Value::Str(s) => parse_size(s, ram_bytes)
            .map_err(|why| loc.err(format!("invalid size \"{s}\": {why}; {SIZE_FORMS}"))),
        _ => Err(type_error(loc, &format!("a size ({SIZE_FORMS})"), item)),
    }
}

/// The longest duration a scenario may give (1 day): time is counted in picoseconds in a
/// u64, and the engine stops a run whose virtual time passes `sim::MAX_VIRTUAL_PS`.
pub const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;

pub(crate) fn want_duration(item: &Item, loc: &Loc) -> Result<u64, ScenarioError> {
    let ns = match &item.value {
        Value::Int(_) => want_u64(item, loc)?,
        Value::Str(s) => parse_duration_ns(s)
            .map_err(|why| loc.err(format!("invalid duration \"{s}\": {why}; {DURATION_FORMS}")))?,
        _ => {
            return Err(type_error(
                loc,
                &format!("a duration ({DURATION_FORMS})"),
                item,
            ))
        }
    };
    if ns > MAX_DURATION_NS {
        return Err(loc.err(format!(
            "duration too long: {ns} ns; at most 1 day ({MAX_DURATION_NS} ns)"
        )));
    }
    Ok(ns)
}

fn want_bandwidth(item: &Item, loc: &Loc) -> Result<u64, ScenarioError> {
    let v = match &item.value {
        Value::Int(_) => want_u64(item, loc)?,
        Value::Str(s) => parse_bandwidth(s).map_err(|why| {
            loc.err(format!(
                "invalid bandwidth \"{s}\": {why}; {BANDWIDTH_FORMS}"
            ))
        })?,
        _ => {
            return Err(type_error(
                loc,
                &format!("a bandwidth ({BANDWIDTH_FORMS})"),
                item,
            ))
        }
    };
    if v == 0 {
        return Err(loc.err("bandwidth must be at least 1 byte per second"));
    }
    Ok(v)
}

/// A device queue size in KiB (`key`): whole 4 KiB pages, at most 1 GiB, and at least one
/// page unless `zero_ok`.
fn want_queue_kib(item: &Item, loc: &Loc, key: &str, zero_ok: bool) -> Result<u64, ScenarioError> {
    let v = want_u64(item, loc)?;
    if v % 4 != 0 || (v == 0 && !zero_ok) {
        let what = if zero_ok {
            "a multiple"
        } else {
            "a positive multiple"
        };
        return Err(loc.err(format!(
            "{key} must be {what} of 4 (whole 4 KiB pages), got {v}"
        )));
    }
    if v > 1 << 20 {
        return Err(loc.err(format!("{key} must be at most 1048576 (1 GiB), got {v}")));
    }
    Ok(v)
}

/// `read_ahead_kb`: 0 ..= 1 GiB (queue/read_ahead_kb; 0 turns readahead off).
fn want_read_ahead_kb(item: &Item, loc: &Loc) -> Result<u64, ScenarioError> {
    want_queue_kib(item, loc, "read_ahead_kb", true)
}

/// `max_sectors_kb`: 4 KiB ..= 1 GiB (queue/max_sectors_kb).
fn want_max_sectors_kb(item: &Item, loc: &Loc) -> Result<u64, ScenarioError> {
    want_queue_kib(item, loc, "max_sectors_kb", false)
}

/// Names of devices and tasks: used in `--set` paths, so no dots and not an index.
fn valid_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn want_name<'a>(item: &'a Item, loc: &Loc) -> Result<&'a str, ScenarioError> {
    let s = want_str(item, loc)?;
    if !valid_name(s) {
        return Err(loc.err(format!(
            "invalid name \"{s}\": a name starts with a letter and holds only letters, digits, \
             '-' and '_' (it is used in --set paths such as tasks.<name>.iterations)"
        )));
    }
    Ok(s)
}

/// A cgroup path below the root: names (as [`valid_name`]) joined by '/', such as `a` or
/// `a/b`, without a leading or trailing slash.
fn valid_cgroup_path(s: &str) -> bool {
    s.split('/').all(valid_name)
}

/// An absolute path without trailing slash, empty, `.` or `..` components.
pub(crate) fn check_abs_path(p: &str) -> Result<(), String> {
    if !p.starts_with('/') {
        return Err(format!(
            "\"{p}\" is not an absolute path (it must start with '/')"
        ));
    }
    if p == "/" {
        return Ok(());
    }
    if p.ends_with('/') {
        return Err(format!("\"{p}\" ends in '/'; remove the trailing slash"));
    }
    if p[1..]
        .split('/')
        .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(format!("\"{p}\" has an empty, '.' or '..' component"));
    }
    Ok(())
}

pub(crate) fn resolve_mount_in<'a>(
    filesystems: &'a [FsSpec],
    path: &str,
) -> Option<(usize, &'a FsSpec)> {
    if !path.starts_with('/') {
        return None;
    }
    let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
    let mut best: Option<(usize, usize)> = None; // (fs index, mount depth)
    for (i, fs) in filesystems.iter().enumerate() {
        let mount: Vec<&str> = fs.mount.split('/').filter(|c| !c.is_empty()).collect();
        let holds = mount.len() <= comps.len() && mount[..] == comps[..mount.len()];
        if holds && best.is_none_or(|(_, depth)| mount.len() > depth) {
            best = Some((i, mount.len()));
        }
    }
    best.map(|(i, _)| (i, &filesystems[i]))
}

/// What a program parser may look at: the parts of the scenario read before the tasks.
pub(crate) struct Env<'a> {
    /// RAM on all nodes, bytes (`ram` in sizes).
    pub(crate) total_memory_bytes: u64,
    /// The scenario's seed.
    pub(crate) seed: u64,
    /// The block devices.
    pub(crate) devices: &'a [DeviceSpec],
    /// The mounted filesystems.
    pub(crate) filesystems: &'a [FsSpec],
    /// The `[[files]]`.
    pub(crate) files: &'a [FileSpec],
    /// The `[[cgroups]]`.
    pub(crate) cgroups: &'a [CgroupSpec],
}

/// The filesystem holding the absolute path `path` (read at `loc`), or an error naming
/// the mounts.
pub(crate) fn mounted<'e>(
    path: &str,
    loc: &Loc,
    env: &Env<'e>,
) -> Result<&'e FsSpec, ScenarioError> {
    check_abs_path(path).map_err(|why| loc.err(why))?;
    let Some((_, fs)) = resolve_mount_in(env.filesystems, path) else {
        let mounts: Vec<&str> = env.filesystems.iter().map(|f| f.mount.as_str()).collect();
        return Err(loc.err(format!(
            "\"{path}\" is not under any mounted filesystem (mounts: {})",
            if mounts.is_empty() {
                "none".to_string()
            } else {
                mounts.join(", ")
            }
        )));
    };
    Ok(fs)
}

/// A working directory of a program: absolute, under a mount. Returns (path, the program
/// must create it).
pub(crate) fn want_work_dir<'a>(
    task: &View<'a>,
    env: &Env<'_>,
) -> Result<(&'a str, bool), ScenarioError> {
    let (path, path_loc) = task.req("path", "absolute path of the working directory", want_str)?;
    let fs = mounted(path, &path_loc, env)?;
    if env.files.iter().any(|f| *f.path == *path) {
        return Err(path_loc.err(format!(
            "\"{path}\" is a file of the scenario; name a directory"
        )));
    }
    Ok((path, fs.mount != path))
}

/// Capacity left for a program's files on the filesystem holding `path`: the device's
/// size for blockfs, the tmpfs's size (half of RAM unless `size` says) for tmpfs.
pub(crate) fn fs_capacity(path: &str, env: &Env<'_>) -> (u64, String) {
    match resolve_mount_in(env.filesystems, path) {
        Some((_, fs)) if fs.kind == FsKind::Blockfs => {
            let dev = fs
                .device
                .as_deref()
                .and_then(|d| env.devices.iter().find(|x| x.name == d));
            match dev {
                Some(d) => (d.size_bytes, format!("device {}", d.name)),
                None => (u64::MAX, String::new()),
            }
        }
        Some((_, fs)) => (
            fs.size_bytes.unwrap_or(env.total_memory_bytes),
            format!("the tmpfs at {} (its `size`)", fs.mount),
        ),
        None => (env.total_memory_bytes, "RAM".to_string()),
    }
}

/// Where a "files do not fit" error points: `file_size`, else `files`, else `path`.
pub(crate) fn capacity_loc(task: &View<'_>) -> Loc {
    ["file_size", "files", "path"]
        .iter()
        .find_map(|k| task.get(k).map(|(_, l)| l))
        .expect("path is required")
}

const FILE_KEYS: &[&str] = &["path", "size", "data", "replicas"];

fn read_files(root: &View<'_>, env: &Env<'_>) -> Result<Vec<FileSpec>, ScenarioError> {
    let mut files: Vec<FileSpec> = Vec::new();
    let Some((views, _)) = root.tables("files")? else {
        return Ok(files);
    };
    for f in views {
        f.deny_unknown(FILE_KEYS)?;
        let (path, path_loc) = f.req("path", "absolute path of the file", want_str)?;
        check_abs_path(path).map_err(|why| path_loc.err(why))?;
        if files.iter().any(|x| *x.path == *path) {
            return Err(path_loc.err(format!("duplicate file \"{path}\"")));
        }
        let Some((_, fs)) = resolve_mount_in(env.filesystems, path) else {
            return Err(path_loc.err(format!("\"{path}\" is not under any mounted filesystem")));
        };
        if fs.mount == path {
            return Err(path_loc.err(format!(
                "\"{path}\" is the mount point itself; name a file under it"
            )));
        }
        let ram = env.total_memory_bytes;
        let (size_bytes, size_loc) = f.req("size", "file size, e.g. \"ram*4\"", |i, l| {
            want_size(i, l, Some(ram))
        })?;
        let data = match (fs.kind, f.opt("data", want_bool)?) {
            (FsKind::Tmpfs, Some((true, loc))) => {
                return Err(loc.err("a tmpfs file has no device to hold data before the run; use data = false (sparse)"));
            }
            (FsKind::Tmpfs, _) => false,
            (FsKind::Blockfs, d) => d.is_none_or(|(b, _)| b),
        };
        if data {
            match fs.kind {
                FsKind::Tmpfs => {}
                FsKind::Blockfs => {
                    let used: u64 = files.iter().filter(|x| x.data).map(|x| x.size_bytes).sum();
                    let dev = fs
                        .device
                        .as_deref()
                        .and_then(|d| env.devices.iter().find(|x| x.name == d));
                    if let Some(dev) = dev {
                        if used + size_bytes > dev.size_bytes {
                            return Err(size_loc.err(format!(
                                "files larger than the device: {} > {} ({})",
                                fmt_bytes(used + size_bytes),
                                fmt_bytes(dev.size_bytes),
                                dev.name
                            )));
                        }
                    }
                }
            }
        }
        files.push(FileSpec {
            path: path.into(),
            size_bytes,
            data,
        });
    }
    Ok(files)
}

const TASK_KEYS: &[&str] = &[
    "name",
    "cpu",
    "start",
    "program",
    "replicas",
    "cgroup",
    "oom_score_adj",
    "thread_group",
];

pub(crate) const MIB: u64 = 1 << 20;
pub(crate) const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Bytes as "64 GiB" when exact, else "N bytes".
pub(crate) fn fmt_bytes(b: u64) -> String {
    for (unit, name) in [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (1 << 10, "KiB")] {
        if b >= unit && b.is_multiple_of(unit) {
            return format!("{} {name}", b / unit);
        }
    }
    format!("{b} bytes")
}

const ROOT_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "sample_interval",
    "machine",
    "devices",
    "filesystems",
    "features",
    "files",
    "swap",
    "tasks",
    "kernel",
    "cgroups",
    "cgroup_version",
    "policy",
    "mglru",
    "vm",
];
const SWAP_KEYS: &[&str] = &[
    "size",
    "preset",
    "read_error_rate",
    "write_error_rate",
    "page_cluster",
    "vma_ra_enabled",
    "comp_algorithm",
    "compression_ratio",
    "mem_limit",
    "zswap",
];
const ZSWAP_KEYS: &[&str] = &[
    "enabled",
    "compressor",
    "compression_ratio",
    "max_pool_percent",
    "accept_threshold_percent",
];
/// vm.page_cluster's default (mm/swap.c swap_setup for more than 16 MiB of RAM).
pub const DEFAULT_PAGE_CLUSTER: u32 = 3;
/// The largest `page_cluster` accepted (a 1024-slot window).
pub const MAX_PAGE_CLUSTER: u32 = 10;

fn read_swap(root: &View<'_>, ram: u64) -> Result<Option<SwapSpec>, ScenarioError> {
    let Some((table, loc)) = root.opt("swap", want_table)? else {
        return Ok(None);
    };
    let s = root.child(table, "swap".into(), loc);
    s.deny_unknown(SWAP_KEYS)?;
    let (size_bytes, size_loc) =
        s.req("size", "swap space, e.g. \"1GiB\" or \"ram*2\"", |i, l| {
            want_size(i, l, Some(ram))
        })?;
    if !(PAGE_SIZE..=64 * TIB).contains(&size_bytes) {
        return Err(size_loc.err(format!(
            "swap size must be between 4 KiB and 64 TiB, got {}",
            fmt_bytes(size_bytes)
        )));
    }
    let preset = match s.opt("preset", want_str)? {
        None => DevicePreset::Ssd,
        Some(("zram", _)) => DevicePreset::Zram,
        Some((name, loc)) => DevicePreset::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, p)| p)
            .ok_or_else(|| {
                loc.err(format!(
                    "unknown preset \"{name}\"; presets: hdd, ssd, nvme, zram"
                ))
            })?,
    };
    let zram = read_zram(&s, preset, size_bytes)?;
    let faults = FaultSpec {
        read_error_ppb: read_rate(&s, "read_error_rate")?,
        write_error_ppb: read_rate(&s, "write_error_rate")?,
        ..FaultSpec::default()
    };
    let page_cluster = match s.opt("page_cluster", want_u64)? {
        None => DEFAULT_PAGE_CLUSTER,
        Some((n, _)) if n <= u64::from(MAX_PAGE_CLUSTER) => n as u32,
        Some((n, loc)) => {
            return Err(loc.err(format!(
                "page_cluster must be between 0 and {MAX_PAGE_CLUSTER} (swap readahead of \
                 2^page_cluster pages; 0 = none), got {n}"
            )))
        }
    };
    let vma_ra_enabled = s.opt("vma_ra_enabled", want_bool)?.map(|(b, _)| b);
    let zswap = read_zswap(&s, zram.is_some())?;
    Ok(Some(SwapSpec {
        size_bytes,
        preset,
        faults,
        page_cluster,
        vma_ra_enabled,
        zram,
        zswap,
    }))
}

/// `[swap.zswap]` (`mm/zswap.rs`): zswap's module parameters `enabled` (default true: the
/// table turns zswap on), `compressor` (lzo, lzo-rle, lz4, zstd; default lzo,
/// CONFIG_ZSWAP_COMPRESSOR_DEFAULT's), `max_pool_percent` (1 ..= 100, default 20),
/// `accept_threshold_percent` (0 ..= 100, default 90), and the data's
/// `compression_ratio` (1 ..= 64, default 3). zswap in front of zram is an error.
fn read_zswap(
    s: &View<'_>,
    on_zram: bool,
) -> Result<Option<crate::mm::zswap::ZswapSpec>, ScenarioError> {
    use crate::mm::zram::CompAlgo;
    let Some((table, loc)) = s.opt("zswap", want_table)? else {
        return Ok(None);
    };
    let z = s.child(table, "swap.zswap".into(), loc.clone());
    z.deny_unknown(ZSWAP_KEYS)?;
    if z.opt("enabled", want_bool)?.is_some_and(|(b, _)| !b) {
        return Ok(None);
    }
    if on_zram {
        return Err(loc.err(
            "zswap in front of a zram swap device compresses every page twice; mmsim models \
             zswap over a block device (preset hdd, ssd or nvme)",
        ));
    }
    let compressor = match z.opt("compressor", want_str)? {
        None => CompAlgo::Lzo,
        Some((name, loc)) => CompAlgo::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, a)| a)
            .ok_or_else(|| {
                loc.err(format!(
                    "unknown compressor \"{name}\"; compressors: lzo, lzo-rle, lz4, zstd"
                ))
            })?,
    };
    let ratio = match z.opt("compression_ratio", want_f64)? {
        None => 3.0,
        Some((r, _)) if (1.0..=64.0).contains(&r) => r,
        Some((r, loc)) => {
            return Err(loc.err(format!(
                "compression_ratio must be between 1 (incompressible) and 64, got {r}"
            )))
        }
    };
    let percent = |key: &str, lo: u64, default: u64| -> Result<u32, ScenarioError> {
        match z.opt(key, want_u64)? {
            None => Ok(default as u32),
            Some((v, _)) if (lo..=100).contains(&v) => Ok(v as u32),
            Some((v, loc)) => Err(loc.err(format!(
                "{key} must be between {lo} and 100 (percent), got {v}"
            ))),
        }
    };
    let max_pool_percent = percent("max_pool_percent", 1, 20)?;
    let accept_threshold_percent = percent("accept_threshold_percent", 0, 90)?;
    Ok(Some(crate::mm::zswap::ZswapSpec::new(
        compressor,
        ratio,
        max_pool_percent,
        accept_threshold_percent,
    )))
}

/// The zram keys of `[swap]` (`preset = "zram"`, `mm/zram.rs`): `comp_algorithm`
/// (lzo-rle, lzo, lz4, zstd; default lzo-rle, CONFIG_ZRAM_DEF_COMP's), `compression_ratio` (the
/// data's, 1 ..= 64, default 3) and `mem_limit` (a size, at most the swap size; default
/// none). Any of them on another preset is an error.
fn read_zram(
    s: &View<'_>,
    preset: DevicePreset,
    swap_bytes: u64,
) -> Result<Option<crate::mm::zram::ZramSpec>, ScenarioError> {
    use crate::mm::zram::{CompAlgo, ZramSpec};
    let algorithm = s.opt("comp_algorithm", want_str)?;
    let ratio = s.opt("compression_ratio", want_f64)?;
    let limit = s.opt("mem_limit", |i, l| want_size(i, l, None))?;
    if preset != DevicePreset::Zram {
        let loc = [
            algorithm.map(|x| x.1),
            ratio.map(|x| x.1),
            limit.map(|x| x.1),
        ]
        .into_iter()
        .flatten()
        .next();
        return match loc {
            Some(loc) => Err(loc.err(format!(
                "comp_algorithm, compression_ratio and mem_limit are zram settings, but the \
                 swap preset is \"{}\" (set preset = \"zram\")",
                preset.as_str()
            ))),
            None => Ok(None),
        };
    }
    let algorithm = match algorithm {
        None => CompAlgo::LzoRle,
        Some((name, loc)) => CompAlgo::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, a)| a)
            .ok_or_else(|| {
                loc.err(format!(
                    "unknown comp_algorithm \"{name}\"; algorithms: lzo-rle, lzo, lz4, zstd"
                ))
            })?,
    };
    let ratio = match ratio {
        None => 3.0,
        Some((r, _)) if (1.0..=64.0).contains(&r) => r,
        Some((r, loc)) => {
            return Err(loc.err(format!(
                "compression_ratio must be between 1 (incompressible) and 64, got {r}"
            )))
        }
    };
    let mem_limit = match limit {
        None => 0,
        Some((b, loc)) if b < PAGE_SIZE || b > swap_bytes => {
            return Err(loc.err(format!(
                "mem_limit must be between 4 KiB and the swap size ({}), got {}",
                fmt_bytes(swap_bytes),
                fmt_bytes(b)
            )))
        }
        Some((b, _)) => b,
    };
    Ok(Some(ZramSpec::new(algorithm, ratio, mem_limit)))
}

const VM_KEYS: &[&str] = &[
    "swappiness",
    "dirty_ratio",
    "dirty_background_ratio",
    "vfs_cache_pressure",
    "min_free_kbytes",
    "watermark_scale_factor",
    "dirty_bytes",
    "dirty_background_bytes",
    "dirty_expire_centisecs",
    "dirty_writeback_centisecs",
];

/// `[vm]`: the /proc/sys/vm tunables (`VmSysctl`), each checked against the range its
/// sysctl accepts (and, when the scenario names its kernel, the ranges of that kernel:
/// swappiness above 100 from 5.8, watermark_scale_factor above 1000 from 5.17). `ram_bytes`:
/// the machine's memory (sizes may be `ram` expressions; min_free_kbytes must leave some);
/// `wsf_rule`: the scenario's `[features]` setting of `watermark-scale-factor`, which
/// brings the sysctl (else its kernel's rules decide).
fn read_vm(
    root: &View<'_>,
    kernel: Option<crate::kernel::KernelEra>,
    ram_bytes: u64,
    wsf_rule: Option<bool>,
) -> Result<VmSysctl, ScenarioError> {
    let mut vm = VmSysctl::default();
    let Some((table, loc)) = root.opt("vm", want_table)? else {
        return Ok(vm);
    };
    let v = root.child(table, "vm".into(), loc);
    v.deny_unknown(VM_KEYS)?;
    let ranged =
        |key: &str, min: u64, max: u64, what: &str| -> Result<Option<(u64, Loc)>, ScenarioError> {
            match v.opt(key, want_u64)? {
                Some((n, loc)) if n < min || n > max => Err(loc.err(format!(
                    "vm.{key} must be between {min} and {max} ({what}), got {n}"
                ))),
                o => Ok(o),
            }
        };
    const INT_MAX: u64 = i32::MAX as u64;
    if let Some((n, loc)) = v.opt("swappiness", want_u64)? {
        vm.swappiness = checked_swappiness(n, &loc, kernel, "vm.swappiness")?;
    }
    if let Some((n, _)) = ranged("dirty_ratio", 0, 100, "a percentage")? {
        vm.dirty_ratio = n;
    }
    if let Some((n, _)) = ranged("dirty_background_ratio", 0, 100, "a percentage")? {
        vm.dirty_background_ratio = n;
    }
    if let Some((n, _)) = ranged("vfs_cache_pressure", 0, INT_MAX, "the sysctl is an int")? {
        vm.vfs_cache_pressure = n;
    }
    if let Some((n, loc)) = ranged("min_free_kbytes", 0, INT_MAX, "the sysctl is an int")? {
        if n >= ram_bytes / 1024 {
            return Err(loc.err(format!(
                "vm.min_free_kbytes = {n} KiB leaves no memory to allocate: the machine has \
                 {} KiB",
                ram_bytes / 1024
            )));
        }
        vm.min_free_kbytes = Some(n);
    }
    if let Some((n, _)) = ranged(
        "watermark_scale_factor",
        1,
        3000,
        "1/10000 of memory; at most 1000 before 5.17",
    )? {
        vm.watermark_scale_factor = n;
    }
    // dirty_bytes and dirty_ratio are one setting in two units: writing one zeroes the
    // other (dirty_bytes_handler, dirty_ratio_handler), so a table sets at most one.
    let bytes_key = |key: &str, ratio_key: &str, min: u64| -> Result<Option<u64>, ScenarioError> {
        let Some((n, loc)) = v.opt(key, |i, l| want_size(i, l, Some(ram_bytes)))? else {
            return Ok(None);
        };
        if v.opt(ratio_key, want_u64)?.is_some() {
            return Err(loc.err(format!(
                "set vm.{ratio_key} or vm.{key}, not both: writing one zeroes the other"
            )));
        }
        if n < min {
            return Err(loc.err(format!("vm.{key} must be at least {min} bytes, got {n}")));
        }
        Ok(Some(n))
    };
    // dirty_bytes_min: two pages.
    if let Some(n) = bytes_key("dirty_bytes", "dirty_ratio", 2 * crate::mm::page::PAGE_SIZE)? {
        vm.dirty_bytes = n;
        vm.dirty_ratio = 0;
    }
    if let Some(n) = bytes_key("dirty_background_bytes", "dirty_background_ratio", 1)? {
        vm.dirty_background_bytes = n;
        vm.dirty_background_ratio = 0;
    }
    if let Some((n, _)) = ranged("dirty_expire_centisecs", 0, INT_MAX, "the sysctl is an int")? {
        vm.dirty_expire_centisecs = n;
    }
    if let Some((n, _)) = ranged(
        "dirty_writeback_centisecs",
        0,
        INT_MAX,
        "the sysctl is an int",
    )? {
        vm.dirty_writeback_centisecs = n;
    }
    if let Some((_, loc)) = v.opt("watermark_scale_factor", want_u64)? {
        // The sysctl came with the 4.6 rule: on by the scenario's [features], or its kernel.
        let rule = wsf_rule.or(kernel.map(|k| k >= WATERMARK_SCALE_FACTOR_SINCE));
        if rule == Some(false) {
            return Err(loc.err(
                "vm.watermark_scale_factor exists from kernel 4.6 on (\"mm: scale kswapd \
                 watermarks in proportion to memory\", the rule `watermark-scale-factor`; \
                 the distance was min / 4 before), and this scenario's rules are older",
            ));
        }
        if let Some(why) = kernel.and_then(|k| vm.era_error(k)) {
            return Err(loc.err(why));
        }
    }
    Ok(vm)
}

const MGLRU_KEYS: &[&str] = &["min_ttl", "walk_mmu"];

/// `policy = "mglru"` and its `[mglru]` table (tunables of /sys/kernel/mm/lru_gen/:
/// `min_ttl` a duration, `walk_mmu` a bool). A `[mglru]` table under another policy, or
/// MGLRU on a kernel before 6.1, is an error.
fn read_policy(
    root: &View<'_>,
    kernel: Option<crate::kernel::KernelEra>,
) -> Result<
    (
        Option<crate::mm::policy::ReclaimPolicy>,
        Option<crate::mm::lru_gen::MglruConfig>,
    ),
    ScenarioError,
> {
    use crate::mm::policy::ReclaimPolicy;
    let policy = match root.opt("policy", want_str)? {
        None => None,
        Some((name, loc)) => {
            let p = ReclaimPolicy::parse(name).map_err(|why| loc.err(why))?;
            if let Some(k) = kernel {
                if k < p.ops().since {
                    return Err(loc.err(format!(
                        "policy \"{name}\" exists from kernel {} on; this scenario sets kernel = \"{}\"",
                        p.ops().since,
                        k
                    )));
                }
            }
            Some(p)
        }
    };
    let Some((table, loc)) = root.opt("mglru", want_table)? else {
        return Ok((policy, None));
    };
    if policy != Some(ReclaimPolicy::Mglru) {
        return Err(loc.err(format!(
            "[mglru] sets tunables of the MGLRU policy, but the scenario's policy is {} (add \
             policy = \"mglru\" or remove the table)",
            policy.unwrap_or_default()
        )));
    }
    let m = root.child(table, "mglru".into(), loc);
    m.deny_unknown(MGLRU_KEYS)?;
    let mut cfg = crate::mm::lru_gen::MglruConfig::default();
    if let Some((ns, loc)) = m.opt("min_ttl", want_duration)? {
        if ns > 3_600_000_000_000 {
            return Err(loc.err("min_ttl must be at most 1h".to_string()));
        }
        cfg.min_ttl_ms = ns / 1_000_000;
    }
    if let Some((b, _)) = m.opt("walk_mmu", want_bool)? {
        cfg.walk_mmu = b;
    }
    Ok((policy, Some(cfg)))
}

/// `kernel = "4.14"`: the era whose rules the run follows (`crate::kernel::KernelEra`).
fn read_kernel(root: &View<'_>) -> Result<Option<crate::kernel::KernelEra>, ScenarioError> {
    let Some((item, loc)) = root.get("kernel") else {
        return Ok(None);
    };
    let version = match &item.value {
        Value::Str(s) => s,
        Value::Float(_) | Value::Int(_) => {
            return Err(loc.err(format!(
                "expected a version string such as kernel = \"6.1\", found {} (quote the \
                 version: as a number 4.20 would read as 4.2)",
                item.value.kind()
            )))
        }
        _ => return Err(type_error(&loc, "a version string such as \"6.1\"", item)),
    };
    crate::kernel::KernelEra::parse(version)
        .map(Some)
        .map_err(|why| loc.err(why))
}

/// The `[[cgroups]]` keys that only cgroup v2 has.
const V2_ONLY_CGROUP_KEYS: &[&str] = &[
    "memory_high",
    "memory_low",
    "memory_min",
    "swap_max",
    "swap_high",
    "zswap_max",
    "zswap_writeback",
    "oom_group",
];
const CGROUP_KEYS: &[&str] = &[
    "name",
    "memory_max",
    "memory_high",
    "memory_low",
    "memory_min",
    "swap_max",
    "swap_high",
    "oom_group",
    "zswap_max",
    "zswap_writeback",
    "memsw_max",
    "soft_limit",
    "swappiness",
];

/// A cgroup limit: a size, or `"max"` (None: no limit) when `max_ok`.
fn want_limit(
    item: &Item,
    loc: &Loc,
    ram: u64,
    max_ok: bool,
) -> Result<Option<u64>, ScenarioError> {
    match &item.value {
        Value::Str(s) if max_ok && s.trim() == "max" => Ok(None),
        Value::Str(s) if s.trim_start().starts_with('-') => Err(loc.err(format!(
            "{} cannot be negative, got \"{s}\"{}",
            if max_ok { "a limit" } else { "a protection" },
            if max_ok {
                "; write \"max\" for no limit"
            } else {
                "; 0 is no protection"
            }
        ))),
        Value::Int(v) if *v < 0 => Err(loc.err(format!(
            "{} cannot be negative, got {v}{}",
            if max_ok { "a limit" } else { "a protection" },
            if max_ok {
                "; write \"max\" for no limit"
            } else {
                "; 0 is no protection"
            }
        ))),
        Value::Str(s) if s.trim() == "max" => Err(loc.err(
            "\"max\" is accepted by memory_max, memory_high, swap_max, swap_high and zswap_max; this is a size \
             (default 0, no protection)",
        )),
        _ => want_size(item, loc, Some(ram)).map(Some),
    }
}

/// A cgroup `file` of kernel `version` (the `since` era) set in a scenario of kernel `k`.
fn newer_file(
    loc: &Loc,
    file: &str,
    since: crate::kernel::KernelEra,
    k: crate::kernel::KernelEra,
) -> ScenarioError {
    loc.err(format!(
        "{file} exists from kernel {since} on; this scenario sets kernel = \"{k}\""
    ))
}

/// `cgroup_version = 1 | 2` (default 2): whether the memory controller is on the legacy
/// hierarchy (true for 1).
fn read_cgroup_version(root: &View<'_>) -> Result<bool, ScenarioError> {
    match root.opt("cgroup_version", want_u64)? {
        None | Some((2, _)) => Ok(false),
        Some((1, _)) => Ok(true),
        Some((v, loc)) => Err(loc.err(format!(
            "cgroup_version {v}: must be 1 (the memory controller on the legacy hierarchy) or 2 \
             (the unified hierarchy, the default)"
        ))),
    }
}

/// `[[cgroups]]`: memory cgroups with cgroup v2 limits, each parent declared before its
/// children. With `cgroup_version = 1` only memory_max (memory.limit_in_bytes) exists.
fn read_cgroups(
    root: &View<'_>,
    ram: u64,
    kernel: Option<crate::kernel::KernelEra>,
    cgroup_v1: bool,
) -> Result<Vec<CgroupSpec>, ScenarioError> {
    let mut cgroups: Vec<CgroupSpec> = Vec::new();
    let Some((views, _)) = root.tables("cgroups")? else {
        return Ok(cgroups);
    };
    for g in views {
        g.deny_unknown(CGROUP_KEYS)?;
        if cgroup_v1 {
            // The legacy hierarchy's files: memory.limit_in_bytes is memory_max,
            // memory.memsw.limit_in_bytes memsw_max, memory.soft_limit_in_bytes soft_limit,
            // memory.swappiness swappiness; the others are cgroup v2's.
            for key in V2_ONLY_CGROUP_KEYS {
                if let Some((_, loc)) = g.get(key) {
                    return Err(loc.err(format!(
                        "{key} is a cgroup v2 file, and this scenario sets cgroup_version = 1 \
                         (the legacy hierarchy has memory.limit_in_bytes, which is memory_max, \
                         memory.memsw.limit_in_bytes, which is memsw_max, \
                         memory.soft_limit_in_bytes, which is soft_limit, memory.swappiness, \
                         which is swappiness, and none of memory.high, memory.low, memory.min, memory.swap.*, memory.zswap.* \
                         or memory.oom.group)"
                    )));
                }
            }
        }
        let (name, name_loc) =
            g.req("name", "the cgroup's path, e.g. \"a\" or \"a/b\"", want_str)?;
        if name.starts_with('/') || name.ends_with('/') {
            return Err(name_loc.err(format!(
                "invalid cgroup name \"{name}\": a path below the root such as \"a\" or \
                 \"a/b\", without a leading or trailing '/' (the root cgroup is implicit)"
            )));
        }
        if !valid_cgroup_path(name) {
            return Err(name_loc.err(format!(
                "invalid cgroup name \"{name}\": each '/'-separated component starts with a \
                 letter and holds only letters, digits, '-' and '_'"
            )));
        }
        if cgroups.iter().any(|c| c.name == name) {
            return Err(name_loc.err(format!("duplicate cgroup name \"{name}\"")));
        }
        if let Some((parent, _)) = name.rsplit_once('/') {
            if !cgroups.iter().any(|c| c.name == parent) {
                return Err(name_loc.err(format!(
                    "the parent cgroup \"{parent}\" of \"{name}\" is not declared; declare \
                     it in a [[cgroups]] table before its children"
                )));
            }
        }
        let limit =
            |key: &str, max_ok: bool| -> Result<(Option<u64>, Option<Loc>), ScenarioError> {
                let v = g.opt(key, |i, l| want_limit(i, l, ram, max_ok))?;
                if let Some((Some(bytes), loc)) = &v {
                    let with_swap =
                        key.starts_with("swap_") || key.starts_with("zswap_") || key == "memsw_max";
                    if !with_swap && *bytes > ram {
                        return Err(loc.err(format!(
                            "{key} ({}) is above the machine's RAM ({})",
                            fmt_bytes(*bytes),
                            fmt_bytes(ram)
                        )));
                    }
                }
                Ok(match v {
                    Some((b, loc)) => (b, Some(loc)),
                    None => (if max_ok { None } else { Some(0) }, None),
                })
            };
        let (memory_max, _) = limit("memory_max", true)?;
        let (memory_high, _) = limit("memory_high", true)?;
        let (memory_low, _) = limit("memory_low", false)?;
        let (memory_min, min_loc) = limit("memory_min", false)?;
        let (swap_max, _) = limit("swap_max", true)?;
        let (swap_high, swap_high_loc) = limit("swap_high", true)?;
        if let (Some(k), Some(loc)) = (kernel, &swap_high_loc) {
            if k < SWAP_HIGH_SINCE {
                return Err(newer_file(loc, "memory.swap.high", SWAP_HIGH_SINCE, k));
            }
        }
        let oom_group = match g.opt("oom_group", want_bool)? {
            Some((true, loc)) if kernel.is_some_and(|k| k < OOM_GROUP_SINCE) => {
                let k = kernel.expect("checked");
                return Err(newer_file(&loc, "memory.oom.group", OOM_GROUP_SINCE, k));
            }
            Some((v, _)) => v,
            None => false,
        };
        let (zswap_max, zswap_max_loc) = limit("zswap_max", true)?;
        if let (Some(k), Some(loc)) = (kernel, &zswap_max_loc) {
            if k < ZSWAP_MAX_SINCE {
                return Err(newer_file(loc, "memory.zswap.max", ZSWAP_MAX_SINCE, k));
            }
        }
        let zswap_writeback = match g.opt("zswap_writeback", want_bool)? {
            Some((false, loc)) if kernel.is_some_and(|k| k < ZSWAP_WRITEBACK_SINCE) => {
                let (k, since) = (kernel.expect("checked"), ZSWAP_WRITEBACK_SINCE);
                return Err(newer_file(&loc, "memory.zswap.writeback", since, k));
            }
            Some((v, _)) => v,
            None => true,
        };
        // cgroup v1's memory.memsw.limit_in_bytes: memory and swap together.
        let (memsw_max, memsw_loc) = limit("memsw_max", true)?;
        if let (Some(loc), Some(memsw)) = (&memsw_loc, memsw_max) {
            if !cgroup_v1 {
                return Err(loc.err(
                    "memsw_max is cgroup v1's memory.memsw.limit_in_bytes, and this scenario \
                     is on cgroup v2 (set cgroup_version = 1; on v2, swap_max limits the swap \
                     alone)"
                        .to_string(),
                ));
            }
            match memory_max {
                Some(max) if memsw >= max => {}
                Some(max) => {
                    return Err(loc.err(format!(
                        "memsw_max ({}) is below memory_max ({}): the kernel refuses a \
                         memory.memsw.limit_in_bytes below memory.limit_in_bytes (EINVAL)",
                        fmt_bytes(memsw),
                        fmt_bytes(max)
                    )))
                }
                None => {
                    return Err(loc.err(format!(
                        "memsw_max ({}) needs memory_max: memory.memsw.limit_in_bytes may not \
                         be below memory.limit_in_bytes, which is \"max\" without it (EINVAL)",
                        fmt_bytes(memsw)
                    )))
                }
            }
        }
        // cgroup v1's memory.soft_limit_in_bytes.
        let (soft_limit, soft_loc) = limit("soft_limit", true)?;
        if let (Some(loc), false) = (&soft_loc, cgroup_v1) {
            return Err(loc.err(
                "soft_limit is cgroup v1's memory.soft_limit_in_bytes, and this scenario is on \
                 cgroup v2 (set cgroup_version = 1; on v2, memory_low protects a cgroup's \
                 memory from reclaim)"
                    .to_string(),
            ));
        }
        // cgroup v1's memory.swappiness (mem_cgroup_swappiness; memcg1's swappiness_write
        // takes 0 ..= MAX_SWAPPINESS).
        let swappiness = match g.opt("swappiness", want_u64)? {
            Some((_, loc)) if !cgroup_v1 => {
                return Err(loc.err(
                    "swappiness is cgroup v1's memory.swappiness, and this scenario is on \
                     cgroup v2, which has no per-cgroup swappiness (set cgroup_version = 1, or \
                     [vm] swappiness for every cgroup)"
                        .to_string(),
                ))
            }
            Some((n, loc)) => Some(checked_swappiness(n, &loc, kernel, "memory.swappiness")?),
            None => None,
        };
        let (memory_low, memory_min) = (memory_low.unwrap_or(0), memory_min.unwrap_or(0));
        if let (Some(max), Some(loc)) = (memory_max, min_loc) {
            if memory_min > max {
                return Err(loc.err(format!(
                    "memory_min ({}) is above memory_max ({})",
                    fmt_bytes(memory_min),
                    fmt_bytes(max)
                )));
            }
        }
        cgroups.push(CgroupSpec {
            name: name.to_string(),
            memory_max,
            memory_high,
            memory_low,
            memory_min,
            swap_max,
            swap_high,
            oom_group,
            zswap_max,
            zswap_writeback,
            memsw_max,
            soft_limit,
            swappiness,
        });
    }
    Ok(cgroups)
}

/// A swappiness (`what`: vm.swappiness or a v1 cgroup's memory.swappiness): 0 ..=
/// MAX_SWAPPINESS, and at most 100 before 5.8.
fn checked_swappiness(
    n: u64,
    loc: &Loc,
    kernel: Option<crate::kernel::KernelEra>,
    what: &str,
) -> Result<u64, ScenarioError> {
    let max = crate::mm::lru_gen::MAX_SWAPPINESS;
    if n > max {
        return Err(loc.err(format!("{what} must be between 0 and {max}, got {n}")));
    }
    if let Some(k) = kernel.filter(|&k| n > 100 && k < SWAPPINESS_200_SINCE) {
        return Err(loc.err(format!(
            "{what} above 100 exists from kernel 5.8 on (\"mm: allow swappiness that prefers \
             reclaiming anon over the file workingset\"); this scenario sets kernel = \"{k}\""
        )));
    }
    Ok(n)
}

/// The first kernel with memory.zswap.max (5.19, "zswap: memcg accounting").
pub const ZSWAP_MAX_SINCE: crate::kernel::KernelEra = crate::kernel::KernelEra::new(5, 19);

/// The first kernel with memory.zswap.writeback (6.8, "mm: memcg: add per-memcg zswap
/// writeback control").
pub const ZSWAP_WRITEBACK_SINCE: crate::kernel::KernelEra = crate::kernel::KernelEra::new(6, 8);

/// The first kernel with memory.swap.high (5.8, "mm: memcontrol: add memory.swap.high").
pub const SWAP_HIGH_SINCE: crate::kernel::KernelEra = crate::kernel::KernelEra::new(5, 8);

/// The first kernel with memory.oom.group (4.19, "mm, oom: introduce memory.oom.group").
/// Its memory.events `oom_group_kill` came in 5.17; mmsim reports it wherever the file is.
pub const OOM_GROUP_SINCE: crate::kernel::KernelEra = crate::kernel::KernelEra::new(4, 19);

/// The first era whose vm.swappiness goes above 100, to 200 (5.8: "mm: allow swappiness
/// that prefers reclaiming anon over the file workingset"; the eras before are 4.14 and
/// older).
pub const SWAPPINESS_200_SINCE: crate::kernel::KernelEra = crate::kernel::KernelEra::new(5, 8);

/// A probability `key` (0 ..= 1, a float or 0/1) as parts per billion.
fn read_rate(v: &View<'_>, key: &str) -> Result<u32, ScenarioError> {
    let Some((item, loc)) = v.get(key) else {
        return Ok(0);
    };
    let p = match &item.value {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        _ => return Err(type_error(&loc, "a probability between 0 and 1", item)),
    };
    if !(0.0..=1.0).contains(&p) {
        return Err(loc.err(format!("{key} must be between 0 and 1, got {p}")));
    }
    Ok((p * 1e9).round() as u32)
}
/// The largest `queue_depth` of a device (NVMe's 16-bit queue size is larger; beyond a
/// thousand requests in flight no workload here differs).
pub const QUEUE_DEPTH_MAX: u64 = 1024;

/// Why `queue_depth` `q` does not fit a device of `preset` (the scenario key's and
/// `mmsim replay --queue-depth`'s check), if it does not.
pub fn queue_depth_problem(q: u64, preset: DevicePreset) -> Option<String> {
    if !(1..=QUEUE_DEPTH_MAX).contains(&q) {
        Some(format!(
            "queue_depth must be 1 ..= {QUEUE_DEPTH_MAX}, got {q}"
        ))
    } else if preset == DevicePreset::Hdd {
        Some(
            "queue_depth models a flash device (every request pays the latency, several at \
             once); an hdd seeks: use preset ssd or nvme, or no queue_depth"
                .into(),
        )
    } else {
        None
    }
}
const MACHINE_KEYS: &[&str] = &["nodes", "cpus_per_node", "memory_per_node", "cost_profile"];
const DEVICE_KEYS: &[&str] = &[
    "name",
    "preset",
    "size",
    "latency",
    "bandwidth",
    "read_ahead_kb",
    "max_sectors_kb",
    "queue_depth",
    "read_error_rate",
    "write_error_rate",
    "fail",
];
const FAIL_KEYS: &[&str] = &["file", "offset", "op"];
const FS_KEYS: &[&str] = &["mount", "type", "device", "size", "atime", "journal"];
const COST_PROFILES: &[&str] = &["default"];
const MAX_CPUS: u64 = 1024;
/// The least RAM a node may have (a scenario's `machine.memory_per_node`, `--ram`).
pub const MIN_NODE_MEMORY: u64 = 16 * MIB;
/// The most RAM a node may have.
pub const MAX_NODE_MEMORY: u64 = 16 * TIB;
pub(crate) const PAGE_SIZE: u64 = 4096;

fn read_scenario(ctx: &Ctx<'_>, root_table: &Table) -> Result<Scenario, ScenarioError> {
    let root = View {
        ctx,
        table: root_table,
        path: String::new(),
        loc: Loc {
            file: ctx.file.to_string(),
            line: None,
            field: String::new(),
        },
        declared: None,
    };
    root.deny_unknown(ROOT_KEYS)?;

    let (name, name_loc) = root.req("name", "the scenario's name", want_str)?;
    if name.trim().is_empty() {
        return Err(name_loc.err("the name must not be empty"));
    }
    let description = root.opt("description", want_str)?.map_or("", |(d, _)| d);
    let seed = root.opt("seed", want_u64)?.map_or(1, |(s, _)| s);
    let sample_interval_ns = match root.opt("sample_interval", want_duration)? {
        Some((0, loc)) => return Err(loc.err("the sample interval must be at least 1 ns")),
        Some((ns, _)) => ns,
        None => 100_000_000,
    };

    let machine = read_machine(&root)?;
    let total_memory_bytes = u64::from(machine.nodes) * machine.memory_per_node_bytes;
    let total_cpus = machine.nodes * machine.cpus_per_node;
    let mut fail_locs = Vec::new();
    let devices = read_devices(&root, total_memory_bytes, &mut fail_locs)?;
    let filesystems = read_filesystems(&root, &devices, total_memory_bytes)?;
    check_fail_points(&fail_locs, &filesystems)?;
    let features = read_features(&root)?;
    let kernel = read_kernel(&root)?;
    let (policy, mglru) = read_policy(&root, kernel)?;
    let vm = read_vm(
        &root,
        kernel,
        total_memory_bytes,
        features.get("watermark-scale-factor").copied(),
    )?;
    let swap = read_swap(&root, total_memory_bytes)?;
    let cgroup_v1 = read_cgroup_version(&root)?;
    let cgroups = read_cgroups(&root, total_memory_bytes, kernel, cgroup_v1)?;
    let env0 = Env {
        total_memory_bytes,
        seed,
        devices: &devices,
        filesystems: &filesystems,
        files: &[],
        cgroups: &cgroups,
    };
    let files = read_files(&root, &env0)?;
    let env = Env {
        files: &files,
        ..env0
    };
    let tasks = read_tasks(&root, &env, total_cpus, &cgroups)?;
    // The files a replay lays its trace on exist before the run, with data.
    let mut files = files;
    for t in &tasks {
        files.extend(t.program.files());
    }
    files.shrink_to_fit(); // a replay's may be millions

    Ok(Scenario {
        name: name.to_string(),
        description: description.to_string(),
        source: ctx.file.to_string(),
        seed,
        sample_interval_ns,
        machine,
        devices,
        filesystems,
        features,
        files,
        swap,
        tasks,
        kernel,
        cgroups,
        cgroup_v1,
        policy,
        mglru,
        vm,
    })
}

fn read_machine(root: &View<'_>) -> Result<MachineSpec, ScenarioError> {
    let (table, loc) = root.req("machine", "the [machine] table", want_table)?;
    let m = root.child(table, "machine".into(), loc);
    m.deny_unknown(MACHINE_KEYS)?;
    let nodes = match m.opt("nodes", want_u32)? {
        Some((0, loc)) => return Err(loc.err("a machine needs at least 1 node")),
        Some((n, _)) => n,
        None => 1,
    };
    let (cpus_per_node, cpus_loc) = m.req("cpus_per_node", "CPUs on each node", want_u32)?;
    if cpus_per_node == 0 {
        return Err(cpus_loc.err("a node needs at least 1 CPU"));
    }
    if u64::from(nodes) * u64::from(cpus_per_node) > MAX_CPUS {
        return Err(cpus_loc.err(format!(
            "too many CPUs: {nodes} nodes × {cpus_per_node} CPUs > {MAX_CPUS}"
        )));
    }
    let (mem, mem_loc) = m.req(
        "memory_per_node",
        "RAM on each node, e.g. \"4GiB\"",
        |i, l| want_size(i, l, None),
    )?;
    if !(MIN_NODE_MEMORY..=MAX_NODE_MEMORY).contains(&mem) {
        return Err(mem_loc.err(format!(
            "memory per node must be between 16 MiB and 16 TiB, got {}",
            fmt_bytes(mem)
        )));
    }
    if !mem.is_multiple_of(PAGE_SIZE) {
        return Err(mem_loc.err(format!(
            "memory per node must be a multiple of 4096 bytes (the page size), got {}",
            fmt_bytes(mem)
        )));
    }
    let cost_profile = match m.opt("cost_profile", want_str)? {
        Some((p, loc)) if !COST_PROFILES.contains(&p) => {
            return Err(loc.err(format!(
                "unknown cost profile \"{p}\"; the only profile for now is \"default\""
            )));
        }
        Some((p, _)) => p.to_string(),
        None => "default".to_string(),
    };
    Ok(MachineSpec {
        nodes,
        cpus_per_node,
        memory_per_node_bytes: mem,
        cost_profile,
    })
}

fn read_devices(
    root: &View<'_>,
    ram: u64,
    fail_locs: &mut Vec<(String, String, Loc)>,
) -> Result<Vec<DeviceSpec>, ScenarioError> {
    let mut devices: Vec<DeviceSpec> = Vec::new();
    let Some((views, _)) = root.tables("devices")? else {
        return Ok(devices);
    };
    for d in views {
        d.deny_unknown(DEVICE_KEYS)?;
        let (name, name_loc) = d.req("name", "the device's name", want_name)?;
        if devices.iter().any(|x| x.name == name) {
            return Err(name_loc.err(format!("duplicate device name \"{name}\"")));
        }
        let (preset, _) = d.req("preset", "hdd, ssd or nvme", |i, l| {
            let s = want_str(i, l)?;
            DevicePreset::ALL
                .iter()
                .find(|(n, _)| *n == s)
                .map(|&(_, p)| p)
                .ok_or_else(|| {
                    l.err(format!(
                        "unknown device preset \"{s}\"; presets: hdd, ssd, nvme"
                    ))
                })
        })?;
        let (size_bytes, size_loc) = d.req("size", "capacity, e.g. \"64GiB\"", |i, l| {
            want_size(i, l, Some(ram))
        })?;
        if size_bytes < MIB {
            return Err(size_loc.err(format!(
                "a device must hold at least 1 MiB, got {}",
                fmt_bytes(size_bytes)
            )));
        }
        let latency_ns = d.opt("latency", want_duration)?.map(|(v, _)| v);
        let bandwidth_bytes_per_s = d.opt("bandwidth", want_bandwidth)?.map(|(v, _)| v);
        let read_ahead_kb = d.opt("read_ahead_kb", want_read_ahead_kb)?.map(|(v, _)| v);
        let max_sectors_kb = d
            .opt("max_sectors_kb", want_max_sectors_kb)?
            .map(|(v, _)| v);
        let queue_depth = match d.opt("queue_depth", want_u64)? {
            None => None,
            Some((q, loc)) => match queue_depth_problem(q, preset) {
                Some(why) => return Err(loc.err(why)),
                None => Some(q),
            },
        };
        let mut faults = FaultSpec {
            read_error_ppb: read_rate(&d, "read_error_rate")?,
            write_error_ppb: read_rate(&d, "write_error_rate")?,
            fail: Vec::new(),
        };
        if let Some((points, _)) = d.tables("fail")? {
            for p in points {
                p.deny_unknown(FAIL_KEYS)?;
                let (file, file_loc) = p.req("file", "absolute path of the file", want_str)?;
                check_abs_path(file).map_err(|why| file_loc.err(why))?;
                let (offset_bytes, _) = p.req("offset", "byte offset in the file", |i, l| {
                    want_size(i, l, None)
                })?;
                let (write, _) = p.req("op", "\"read\" or \"write\"", |i, l| {
                    match want_str(i, l)? {
                        "read" => Ok(false),
                        "write" => Ok(true),
                        other => Err(l.err(format!("unknown op \"{other}\"; ops: read, write"))),
                    }
                })?;
                fail_locs.push((file.to_string(), name.to_string(), file_loc));
                faults.fail.push(FaultPoint {
                    file: file.to_string(),
                    offset_bytes,
                    write,
                });
            }
        }
        devices.push(DeviceSpec {
            name: name.to_string(),
            preset,
            size_bytes,
            latency_ns,
            bandwidth_bytes_per_s,
            read_ahead_kb,
            max_sectors_kb,
            queue_depth,
            faults,
        });
    }
    Ok(devices)
}

/// Each `fail` point must name a file on a blockfs on its own device.
fn check_fail_points(
    fail_locs: &[(String, String, Loc)],
    filesystems: &[FsSpec],
) -> Result<(), ScenarioError> {
    for (file, dev, loc) in fail_locs {
        match resolve_mount_in(filesystems, file) {
            Some((_, fs)) if fs.device.as_deref() == Some(dev.as_str()) => {}
            Some((_, fs)) => {
                return Err(loc.err(format!(
                    "\"{file}\" is on {} ({}), not on device \"{dev}\"",
                    fs.mount,
                    fs.device.as_deref().unwrap_or("no device")
                )))
            }
            None => return Err(loc.err(format!("\"{file}\" is under no mounted filesystem"))),
        }
    }
    Ok(())
}

fn read_filesystems(
    root: &View<'_>,
    devices: &[DeviceSpec],
    ram: u64,
) -> Result<Vec<FsSpec>, ScenarioError> {
    let mut filesystems: Vec<FsSpec> = Vec::new();
    let Some((views, _)) = root.tables("filesystems")? else {
        return Ok(filesystems);
    };
    let device_names = || {
        if devices.is_empty() {
            "no [[devices]] are defined".to_string()
        } else {
            let names: Vec<&str> = devices.iter().map(|d| d.name.as_str()).collect();
            format!("devices: {}", names.join(", "))
        }
    };
    for f in views {
        f.deny_unknown(FS_KEYS)?;
        let (mount, mount_loc) = f.req("mount", "absolute mount point", want_str)?;
        check_abs_path(mount).map_err(|why| mount_loc.err(why))?;
        if filesystems.iter().any(|x| x.mount == mount) {
            return Err(mount_loc.err(format!("duplicate mount point \"{mount}\"")));
        }
        let (kind, _) = f.req("type", "tmpfs or blockfs", |i, l| {
            let s = want_str(i, l)?;
            FsKind::ALL
                .iter()
                .find(|(n, _)| *n == s)
                .map(|&(_, k)| k)
                .ok_or_else(|| {
                    l.err(format!(
                        "unknown filesystem type \"{s}\"; types: tmpfs, blockfs"
                    ))
                })
        })?;
        let device = f.opt("device", want_str)?;
        let device = match (kind, device) {
            (FsKind::Tmpfs, Some((_, loc))) => {
                return Err(loc.err("a tmpfs has no backing device; remove `device`"));
            }
            (FsKind::Tmpfs, None) => None,
            (FsKind::Blockfs, None) => {
                return Err(f.missing(
                    "device",
                    &format!("a blockfs needs a device; {}", device_names()),
                ));
            }
            (FsKind::Blockfs, Some((dev, loc))) => {
                if !devices.iter().any(|d| d.name == dev) {
                    return Err(loc.err(format!("unknown device \"{dev}\"; {}", device_names())));
                }
                if let Some(other) = filesystems
                    .iter()
                    .find(|x| x.device.as_deref() == Some(dev))
                {
                    return Err(loc.err(format!(
                        "device \"{dev}\" already holds the filesystem at {}",
                        other.mount
                    )));
                }
                Some(dev.to_string())
            }
        };
        let size = f.opt("size", |i, l| want_size(i, l, Some(ram)))?;
        let size_bytes = match (kind, size) {
            (FsKind::Blockfs, Some((_, loc))) => {
                return Err(loc.err(
                    "a blockfs is as large as its device; `size` is a tmpfs option, remove it",
                ));
            }
            (FsKind::Blockfs, None) => None,
            // shmem_default_max_blocks: totalram_pages() / 2.
            (FsKind::Tmpfs, None) => Some(ram / 2 / PAGE_SIZE * PAGE_SIZE),
            (FsKind::Tmpfs, Some((b, loc))) => {
                if !(PAGE_SIZE..=64 * TIB).contains(&b) {
                    return Err(loc.err(format!(
                        "a tmpfs size must be between 4 KiB and 64 TiB, got {}",
                        fmt_bytes(b)
                    )));
                }
                Some(b / PAGE_SIZE * PAGE_SIZE)
            }
        };
        let atime = f.opt("atime", |i, l| {
            let s = want_str(i, l)?;
            Atime::ALL
                .iter()
                .find(|(n, _)| *n == s)
                .map(|&(_, a)| a)
                .ok_or_else(|| {
                    l.err(format!(
                        "unknown atime option \"{s}\"; options: relatime, noatime, strictatime"
                    ))
                })
        })?;
        let journal = match (kind, f.opt("journal", want_bool)?) {
            (FsKind::Tmpfs, Some((_, loc))) => {
                return Err(loc.err("a tmpfs has no journal; remove `journal`"));
            }
            (FsKind::Tmpfs, None) => false,
            (FsKind::Blockfs, j) => j.is_some_and(|(j, _)| j),
        };
        filesystems.push(FsSpec {
            mount: mount.to_string(),
            kind,
            device,
            size_bytes,
            atime: atime.map(|(a, _)| a).unwrap_or_default(),
            journal,
        });
    }
    Ok(filesystems)
}

fn read_features(root: &View<'_>) -> Result<BTreeMap<String, bool>, ScenarioError> {
    let mut features = BTreeMap::new();
    let Some((table, loc)) = root.opt("features", want_table)? else {
        return Ok(features);
    };
    let view = root.child(table, "features".into(), loc);
    for e in &table.entries {
        let loc = view.loc_of(e);
        if !KNOWN_FEATURES.contains(&e.key.as_str()) {
            return Err(loc.err(format!(
                "unknown feature `{}`; known features: {}",
                e.key,
                KNOWN_FEATURES.join(", ")
            )));
        }
        features.insert(e.key.clone(), want_bool(&e.item, &loc)?);
    }
    Ok(features)
}

/// The most tasks a scenario may have (each task has at most one mm, and a TLB tag holds
/// mm ids up to `arch::tlb::TLB_MAX_MM`).
pub const MAX_TASKS: usize = 1 << 19;
const _: () = assert!(MAX_TASKS < crate::arch::tlb::TLB_MAX_MM as usize);

fn read_tasks(
    root: &View<'_>,
    env: &Env<'_>,
    total_cpus: u32,
    cgroups: &[CgroupSpec],
) -> Result<Vec<TaskSpec>, ScenarioError> {
    const NEED: &str = "at least one [[tasks]] entry is required";
    let Some((views, tasks_loc)) = root.tables("tasks")? else {
        return Err(root.missing("tasks", NEED));
    };
    if views.is_empty() {
        return Err(tasks_loc.err(NEED));
    }
    if views.len() > MAX_TASKS {
        return Err(tasks_loc.err(format!(
            "too many tasks: {} (replicas counted); at most {MAX_TASKS}",
            views.len()
        )));
    }
    let mut tasks: Vec<TaskSpec> = Vec::new();
    for t in views {
        let program = match t.get("program") {
            Some((item, loc)) => {
                let name = want_str(item, &loc)?;
                let Some(p) = crate::workload::program(name) else {
                    let names: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
                    return Err(loc.err(format!(
                        "unknown program \"{name}\"; programs: {}",
                        names.join(", ")
                    )));
                };
                p
            }
            None => {
                let mut all: Vec<&str> = TASK_KEYS.to_vec();
                PROGRAMS.iter().for_each(|p| all.extend(p.keys()));
                t.deny_unknown(&all)?;
                let names: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
                return Err(t.missing("program", &format!("programs: {}", names.join(", "))));
            }
        };
        let mut allowed: Vec<&str> = TASK_KEYS.to_vec();
        allowed.extend(program.keys());
        t.deny_unknown(&allowed)?;
        let t = View {
            declared: Some(allowed),
            ..t
        };

        let (name, name_loc) = t.req("name", "the task's name", want_name)?;
        if tasks.iter().any(|x| x.name == name) {
            return Err(name_loc.err(format!("duplicate task name \"{name}\"")));
        }
        let cpu = match t.opt("cpu", want_u32)? {
            Some((cpu, loc)) if cpu >= total_cpus => {
                return Err(loc.err(format!(
                    "cpu {cpu} out of range: the machine has {total_cpus} CPUs (0..={})",
                    total_cpus - 1
                )));
            }
            Some((cpu, _)) => cpu,
            None => 0,
        };
        let start_ns = t.opt("start", want_duration)?.map_or(0, |(v, _)| v);
        let cgroup = match t.opt("cgroup", want_str)? {
            None | Some(("/", _)) => None,
            Some((c, _)) if cgroups.iter().any(|g| g.name == c) => Some(c.to_string()),
            Some((c, loc)) => {
                let names: Vec<&str> = cgroups.iter().map(|g| g.name.as_str()).collect();
                return Err(loc.err(format!(
                    "unknown cgroup \"{c}\"; {} (\"/\" is the root cgroup)",
                    if names.is_empty() {
                        "no [[cgroups]] are declared".to_string()
                    } else {
                        format!("declared cgroups: {}", names.join(", "))
                    }
                )));
            }
        };
        let oom_score_adj = match t.get("oom_score_adj") {
            None => 0,
            Some((item, loc)) => match &item.value {
                Value::Int(v) if (-1000..=1000).contains(v) => *v as i16,
                Value::Int(v) => {
                    return Err(loc.err(format!(
                        "oom_score_adj must be between -1000 (never OOM-killed) and 1000 \
                         (killed first), got {v}"
                    )))
                }
                _ => return Err(type_error(&loc, "an integer from -1000 to 1000", item)),
            },
        };
        let thread_group = match t.opt("thread_group", want_str)? {
            None => None,
            Some(("", loc)) => {
                return Err(loc.err("thread_group must be a non-empty process name"));
            }
            Some((g, loc)) => {
                // Threads of one process are in one cgroup (cgroup v2 moves whole
                // processes) and share its oom_score_adj (signal->oom_score_adj).
                if let Some(first) = tasks.iter().find(|x| x.thread_group.as_deref() == Some(g)) {
                    if first.cgroup != cgroup {
                        let show = |c: &Option<String>| c.clone().unwrap_or_else(|| "/".into());
                        return Err(loc.err(format!(
                            "thread group \"{g}\" is in cgroup \"{}\" (task {}) and \"{}\" \
                             here: the threads of a process are in one cgroup",
                            show(&first.cgroup),
                            first.name,
                            show(&cgroup)
                        )));
                    }
                    if first.oom_score_adj != oom_score_adj {
                        return Err(loc.err(format!(
                            "thread group \"{g}\" has oom_score_adj {} (task {}) and {} \
                             here: oom_score_adj belongs to the process, not the thread",
                            first.oom_score_adj, first.name, oom_score_adj
                        )));
                    }
                }
                Some(g.to_string())
            }
        };
        let program = (program.parse)(&t, env)?;
        tasks.push(TaskSpec {
            name: name.to_string(),
            cpu,
            start_ns,
            cgroup,
            oom_score_adj,
            thread_group,
            program,
        });
    }
    Ok(tasks)
}

// ---------------------------------------------------------------------------------------
// Units: sizes, durations, bandwidths
// ---------------------------------------------------------------------------------------

/// `int[.frac]` times `mult`, exactly (a fraction must give a whole number).
fn scaled(num: &str, mult: u128) -> Result<u64, String> {
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (num.contains('.') && !digits(frac)) {
        return Err(format!("\"{num}\" is not a number"));
    }
    if int.len() + frac.len() > 30 {
        return Err("number too large".into());
    }
    let denom = 10u128.pow(frac.len() as u32);
    let whole: u128 = format!("{int}{frac}")
        .parse()
        .map_err(|_| "number too large".to_string())?;
    let total = whole.checked_mul(mult).ok_or("number too large")?;
    if !total.is_multiple_of(denom) {
        return Err(format!("\"{num}\" does not give a whole number"));
    }
    u64::try_from(total / denom).map_err(|_| "number too large".into())
}

/// Split "400MiB" into ("400", "MiB"), allowing spaces between.
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Multiplier of a size unit.
fn size_unit(unit: &str) -> Option<u128> {
    Some(match unit {
        "" | "B" => 1,
        "k" | "K" | "Ki" | "KiB" => 1 << 10,
        "m" | "M" | "Mi" | "MiB" => 1 << 20,
        "g" | "G" | "Gi" | "GiB" => 1 << 30,
        "t" | "T" | "Ti" | "TiB" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return None,
    })
}

/// Parse a size string to bytes; `ram_bytes` is the total RAM for `ram` expressions.
/// Parse a size given on the command line (`"4GiB"`, `"512MiB"`, `"1000000"`; no `ram`).
pub fn parse_size_arg(s: &str) -> Result<u64, String> {
    parse_size(s, None)
}

fn parse_size(s: &str, ram_bytes: Option<u64>) -> Result<u64, String> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("ram") {
        let Some(ram) = ram_bytes else {
            return Err("`ram` cannot be used here (memory_per_node defines the RAM)".into());
        };
        let mut value = u128::from(ram);
        let mut rest = rest.trim_start();
        while !rest.is_empty() {
            let op = rest.as_bytes()[0];
            if op != b'*' && op != b'/' {
                return Err(format!("expected '*' or '/' after `ram`, found \"{rest}\""));
            }
            let tail = rest[1..].trim_start();
            let end = tail
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(tail.len());
            let n: u128 = tail[..end]
                .parse()
                .map_err(|_| format!("expected an integer after '{}'", op as char))?;
            value = if op == b'*' {
                value.checked_mul(n).ok_or("size too large")?
            } else {
                value.checked_div(n).ok_or("division by zero")?
            };
            rest = tail[end..].trim_start();
        }
        return u64::try_from(value).map_err(|_| "size too large".into());
    }
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err("expected a number".into());
    }
    let mult = size_unit(unit).ok_or_else(|| format!("unknown unit \"{unit}\""))?;
    scaled(num, mult)
}

/// Parse a duration string to nanoseconds.
fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let (num, unit) = split_number(s.trim());
    if num.is_empty() {
        return Err("expected a number".into());
    }
    let mult: u128 = match unit {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(format!("unknown unit \"{unit}\"")),
    };
    scaled(num, mult)
}

/// Parse a bandwidth string ("500MB/s") to bytes per second.
fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let Some(size) = s.strip_suffix("/s") else {
        return Err("a bandwidth ends in \"/s\"".into());
    };
    let size = size.trim();
    if size.starts_with("ram") {
        return Err("`ram` cannot be used in a bandwidth".into());
    }
    parse_size(size, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_size_units() {
        assert_eq!(parse_size("4096", None), Ok(4096));
        assert_eq!(parse_size("0", None), Ok(0));
        assert_eq!(parse_size("4k", None), Ok(4096));
        assert_eq!(parse_size("4K", None), Ok(4096));
        assert_eq!(parse_size("4KiB", None), Ok(4096));
        assert_eq!(parse_size("4 KiB", None), Ok(4096));
        assert_eq!(parse_size("400MiB", None), Ok(400 << 20));
        assert_eq!(parse_size("4GiB", None), Ok(4 << 30));
        assert_eq!(parse_size("4G", None), Ok(4 << 30));
        assert_eq!(parse_size("1TiB", None), Ok(1 << 40));
        assert_eq!(parse_size("1.5KiB", None), Ok(1536));
        assert_eq!(parse_size("4KB", None), Ok(4000));
        assert_eq!(parse_size("500MB", None), Ok(500_000_000));
        assert_eq!(parse_size("2GB", None), Ok(2_000_000_000));
        assert_eq!(parse_size("1TB", None), Ok(1_000_000_000_000));
        assert_eq!(parse_size(" 12B ", None), Ok(12));
    }

    #[test]
    fn scenario_size_ram_expressions() {
        let ram = Some(4u64 << 30);
        assert_eq!(parse_size("ram", ram), Ok(4 << 30));
        assert_eq!(parse_size("ram/10", ram), Ok((4u64 << 30) / 10));
        assert_eq!(parse_size("ram*2", ram), Ok(8 << 30));
        assert_eq!(parse_size("ram*2/1024", ram), Ok(8 << 20));
        assert_eq!(parse_size("ram / 4", ram), Ok(1 << 30));
        assert!(parse_size("ram", None)
            .unwrap_err()
            .contains("cannot be used"));
        assert!(parse_size("ram/0", ram)
            .unwrap_err()
            .contains("division by zero"));
        assert!(parse_size("ram+1", ram).is_err());
        assert!(parse_size("ram/", ram).is_err());
        assert!(parse_size("ram*99999999999999999999", ram).is_err());
    }

    #[test]
    fn scenario_size_rejects_malformed() {
        for bad in [
            "",
            "GiB",
            "4XB",
            "4 GiBs",
            "-4",
            "1.2.3",
            "1.1",
            "4e9",
            "99999999999TiB",
        ] {
            assert!(parse_size(bad, None).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn scenario_duration_units() {
        assert_eq!(parse_duration_ns("10ns"), Ok(10));
        assert_eq!(parse_duration_ns("10"), Ok(10));
        assert_eq!(parse_duration_ns("80us"), Ok(80_000));
        assert_eq!(parse_duration_ns("80µs"), Ok(80_000));
        assert_eq!(parse_duration_ns("100ms"), Ok(100_000_000));
        assert_eq!(parse_duration_ns("5s"), Ok(5_000_000_000));
        assert_eq!(parse_duration_ns("0s"), Ok(0));
        assert_eq!(parse_duration_ns("1.5ms"), Ok(1_500_000));
        for bad in ["", "ms", "5 min", "1.5ns", "-1s", "5h"] {
            assert!(
                parse_duration_ns(bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn scenario_bandwidth_units() {
        assert_eq!(parse_bandwidth("500MB/s"), Ok(500_000_000));
        assert_eq!(parse_bandwidth("2GB/s"), Ok(2_000_000_000));
        assert_eq!(parse_bandwidth("400MiB/s"), Ok(400 << 20));
        assert_eq!(parse_bandwidth("100/s"), Ok(100));
        for bad in ["500MB", "ram/s", "fast/s", "/s"] {
            assert!(parse_bandwidth(bad).is_err(), "{bad:?} should be rejected");
        }
    }

    #[test]
    fn scenario_document_spans_give_lines() {
        let text = "name = \"x\"\n\n[machine]\nnodes = 1\n\n[[tasks]]\nname = \"a\"\n\n[[tasks]]\nname = \"b\"\ncpu = 3\n";
        let ctx = Ctx::new("t", text);
        let root = parse_document(&ctx).unwrap();
        let Value::Array(tasks) = &root.get("tasks").unwrap().item.value else {
            panic!()
        };
        let Value::Table(second) = &tasks[1].value else {
            panic!()
        };
        let cpu = second.get("cpu").unwrap();
        assert_eq!(ctx.line(cpu.key_span.as_ref().unwrap().start), 11);
        assert_eq!(ctx.line(tasks[1].span.as_ref().unwrap().start), 9);
        let machine = root.get("machine").unwrap();
        assert_eq!(ctx.line(machine.key_span.as_ref().unwrap().start), 3);
        // Every offset's line is one more than the newlines before it (the end included).
        for off in 0..=text.len() + 2 {
            let before = text.as_bytes()[..off.min(text.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            assert_eq!(ctx.line(off), before + 1, "offset {off}");
        }
    }

    #[test]
    fn scenario_resolve_mount_longest_component_prefix() {
        let fs = |m: &str| FsSpec {
            mount: m.into(),
            kind: FsKind::Tmpfs,
            device: None,
            size_bytes: Some(1 << 30),
            atime: Atime::Relatime,
            journal: false,
        };
        let all = vec![fs("/"), fs("/mnt"), fs("/mnt/data")];
        assert_eq!(
            resolve_mount_in(&all, "/mnt/data/x").map(|(i, _)| i),
            Some(2)
        );
        assert_eq!(
            resolve_mount_in(&all, "/mnt/datax").map(|(i, _)| i),
            Some(1)
        );
        assert_eq!(resolve_mount_in(&all, "/mntx").map(|(i, _)| i), Some(0));
        assert_eq!(resolve_mount_in(&all[1..], "/tmp/x"), None);
        assert_eq!(resolve_mount_in(&all, "relative"), None);
    }
}
