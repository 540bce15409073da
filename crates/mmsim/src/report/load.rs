//! Reading `mmsim run --json` documents back for `mmsim compare`.
//!
//! The view types here are the reading side of [`crate::run::RunReport`]: every field has a
//! default (`#[serde(default)]`) and unknown fields are ignored, so a document that gained
//! fields still loads. What must agree is checked explicitly: the `schema_version` (against
//! [`SCHEMA_VERSION`]) and, unless forced, the scenario of every document. Runs of one
//! scenario on different kernel eras (`kernel`) are comparable without forcing.
//!
//! Documents written before kernel eras and memory cgroups existed have no `kernel` and no
//! `cgroups`: they load with an empty `kernel` (an unknown era; those runs followed the
//! rules of the 4.2 era, see [`RunDoc::era_label`]) and no cgroups.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::run::SCHEMA_VERSION;

/// CPU time summed over all CPUs, ns (the `cpu_time` object).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CpuTimeView {
    /// User time, ns.
    pub user_ns: u64,
    /// System time, ns.
    pub system_ns: u64,
    /// Interrupt time, ns.
    pub interrupt_ns: u64,
    /// Idle time, ns.
    pub idle_ns: u64,
}

/// The machine a run simulated (the fields `compare` shows).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MachineView {
    /// NUMA nodes.
    pub nodes: u64,
    /// CPUs per node.
    pub cpus_per_node: u64,
    /// Memory per node, bytes.
    pub memory_per_node_bytes: u64,
}

/// The `vm` object (absent when the run kept the kernel's defaults): the watermark
/// settings by name, the other sysctls as they are.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct VmView {
    /// vm.min_free_kbytes as set (None: the kernel's default).
    pub min_free_kbytes: Option<u64>,
    /// vm.watermark_scale_factor.
    pub watermark_scale_factor: u64,
    /// The other sysctls.
    #[serde(flatten)]
    pub rest: BTreeMap<String, serde_json::Value>,
}

impl Default for VmView {
    fn default() -> Self {
        VmView {
            min_free_kbytes: None,
            watermark_scale_factor: crate::mm::page_alloc::WATERMARK_SCALE_FACTOR,
            rest: BTreeMap::new(),
        }
    }
}

impl VmView {
    /// The sysctls set to other than the kernel's defaults, `name value`, by name.
    pub fn changed(&self) -> Vec<String> {
        let default =
            serde_json::to_value(crate::scenario::VmSysctl::default()).expect("plain fields");
        let mut all = self.rest.clone();
        if let Some(k) = self.min_free_kbytes {
            all.insert("min_free_kbytes".into(), k.into());
        }
        all.insert(
            "watermark_scale_factor".into(),
            self.watermark_scale_factor.into(),
        );
        all.iter()
            .filter(|(k, v)| default.get(k.as_str()) != Some(*v))
            .map(|(k, v)| format!("{k} {v}"))
            .collect()
    }
}

/// One block device's IO over a run (`devices[]`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct DeviceView {
    /// Device name.
    pub name: String,
    /// Read requests.
    pub reads: u64,
    /// Pages read.
    pub pages_read: u64,
    /// Write requests.
    pub writes: u64,
    /// Pages written.
    pub pages_written: u64,
    /// Requests that paid the positioning latency.
    pub seeks: u64,
    /// Busy time, ns.
    pub busy_ns: u64,
    /// The model's preset (empty in documents from before it was reported).
    pub preset: String,
    /// Per-request latency, ns.
    pub latency_ns: u64,
    /// Transfer rate, bytes per second.
    pub bandwidth_bytes_per_s: u64,
    /// queue/read_ahead_kb.
    pub read_ahead_kb: u64,
    /// `queue_depth` of a flash model.
    pub queue_depth: Option<u64>,
}

impl DeviceView {
    /// The device model in a few words: `sda ssd 80 µs 500 MB/s ra 128 KiB` and
    /// ` queue 4` for a flash model (empty for a document without the model).
    pub fn model(&self) -> String {
        if self.preset.is_empty() {
            return String::new();
        }
        let mut s = format!(
            "{} {} {} µs {} MB/s ra {} KiB",
            self.name,
            self.preset,
            self.latency_ns as f64 / 1000.0,
            self.bandwidth_bytes_per_s / 1_000_000,
            self.read_ahead_kb
        );
        if let Some(q) = self.queue_depth {
            s += &format!(" queue {q}");
        }
        s
    }
}

/// The zram swap device's statistics at the end of a run (`zram`, `mm/zram.rs`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ZramView {
    /// Uncompressed size of the pages stored at the end, bytes.
    pub orig_data_size: u64,
    /// Their compressed size, bytes.
    pub compr_data_size: u64,
    /// The pool's peak, bytes.
    pub mem_used_max: u64,
    /// Writes that failed (-ENOMEM).
    pub failed_writes: u64,
    /// Pages read.
    pub num_reads: u64,
    /// Pages written.
    pub num_writes: u64,
}

/// zswap's statistics at the end of a run (`zswap`, `mm/zswap.rs`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ZswapView {
    /// The pool's peak, bytes.
    pub pool_max_size: u64,
    /// Uncompressed size of the pages stored at the end, bytes.
    pub zswapped: u64,
    /// Stores that found the pool at its limit.
    pub pool_limit_hit: u64,
    /// Entries written back to the swap device.
    pub written_back_pages: u64,
    /// Writebacks that failed.
    pub reject_reclaim_fail: u64,
    /// Stores the pool could not grow for.
    pub reject_alloc_fail: u64,
    /// Stores refused at a cgroup's memory.zswap.max.
    pub reject_memcg_limit: u64,
}

/// One line of a pressure file (`pressure.memory.some`, …): its total stall, µs.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct PressureLineView {
    /// Stall time since boot, µs.
    pub total_us: u64,
}

/// A pressure file's `some` and `full` lines.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct PressureFileView {
    /// At least one task stalled.
    pub some: PressureLineView,
    /// Every non-idle task stalled.
    pub full: PressureLineView,
}

/// The PSI files of the machine or of a cgroup (`pressure`; absent before 4.20 and in
/// documents written before PSI existed).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct PressureView {
    /// memory.pressure.
    pub memory: PressureFileView,
    /// io.pressure.
    pub io: PressureFileView,
    /// cpu.pressure.
    pub cpu: PressureFileView,
    /// irq.pressure (its `full` line; absent before IRQ pressure was reported: zeros).
    pub irq: PressureFileView,
}

/// One profile row (`profile_top[]`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ProfileRowView {
    /// Kernel function.
    pub function: String,
    /// Time attributed, ns.
    pub ns: u64,
    /// Share of busy CPU time, percent.
    pub percent: f64,
}

/// Per-task results (`tasks[]`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct TaskView {
    /// Task name.
    pub name: String,
    /// Kernel thread?
    pub kthread: bool,
    /// Start to exit, ns (0 if it did not exit).
    pub elapsed_ns: u64,
    /// Major faults.
    pub majflt: u64,
    /// Minor faults.
    pub minflt: u64,
    /// Timed samples by label, ns.
    pub samples: BTreeMap<String, Vec<u64>>,
    /// The unit and direction of each label's samples (absent in documents written before
    /// they were recorded: then the programs' declarations apply).
    pub sample_units: BTreeMap<String, crate::workload::SampleUnit>,
}

/// One time-series sample (`series[]`).
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct SampleView {
    /// Virtual time, ns.
    pub t_ns: u64,
    /// Counter values, in `series_columns` order.
    pub values: Vec<i64>,
    /// memory.current of each memory cgroup, pages, in `cgroups` order (root first);
    /// empty without cgroups.
    pub cgroups: Vec<u64>,
    /// memory.swap.current of each memory cgroup, pages, in `cgroups` order; empty
    /// without cgroups or swap (and in documents from before it was sampled).
    #[serde(default)]
    pub cgroups_swap: Vec<u64>,
    /// MGLRU generation sizes, youngest first ([anon, file]); empty for classic runs.
    #[serde(default)]
    pub lru_gen: Vec<[i64; 2]>,
}

/// memory.events of a cgroup (`cgroups[].events`, `events_local`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MemcgEventsView {
    /// Reclaimed although below memory.low.
    pub low: u64,
    /// Usage went above memory.high.
    pub high: u64,
    /// A charge hit memory.max.
    pub max: u64,
    /// The OOM killer was invoked for memory.max.
    pub oom: u64,
    /// A task of the cgroup was killed by an OOM killer.
    pub oom_kill: u64,
    /// The cgroup's memory.oom.group made an OOM kill take all its tasks (absent in
    /// documents from before it was reported: 0).
    pub oom_group_kill: u64,
}

impl MemcgEventsView {
    /// The counters under their memory.events names, in the file's order.
    pub fn entries(&self) -> [(&'static str, u64); 6] {
        [
            ("low", self.low),
            ("high", self.high),
            ("max", self.max),
            ("oom", self.oom),
            ("oom_kill", self.oom_kill),
            ("oom_group_kill", self.oom_group_kill),
        ]
    }
}

/// memory.swap.events of a cgroup (`cgroups[].swap_events`; absent in documents from
/// before it was reported: zeros).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MemcgSwapEventsView {
    /// Swap usage went over memory.swap.high.
    pub high: u64,
    /// A swap-out was refused at memory.swap.max.
    pub max: u64,
    /// A swap-out found no slot or was refused at memory.swap.max.
    pub fail: u64,
}

impl MemcgSwapEventsView {
    /// The counters under their memory.swap.events names, in the file's order.
    pub fn entries(&self) -> [(&'static str, u64); 3] {
        [("high", self.high), ("max", self.max), ("fail", self.fail)]
    }
}

/// One memory cgroup at the end of a run (`cgroups[]`); sizes in bytes, `None` = "max".
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CgroupView {
    /// Path below the root (`"/"` for the root, `"a/b"`).
    pub name: String,
    /// memory.max.
    pub memory_max: Option<u64>,
    /// memory.high.
    pub memory_high: Option<u64>,
    /// memory.low.
    pub memory_low: u64,
    /// memory.min.
    pub memory_min: u64,
    /// memory.swap.max.
    pub swap_max: Option<u64>,
    /// memory.current at the end of the run.
    pub current: u64,
    /// memory.peak.
    pub peak: u64,
    /// memory.swap.current at the end of the run.
    pub swap_current: u64,
    /// memory.swap.high.
    pub swap_high: Option<u64>,
    /// memory.swap.peak.
    pub swap_peak: u64,
    /// memory.events (hierarchical).
    pub events: MemcgEventsView,
    /// memory.swap.events (hierarchical).
    pub swap_events: MemcgSwapEventsView,
    /// memory.events.local.
    pub events_local: MemcgEventsView,
    /// memory.stat (hierarchical): sizes in bytes, events in counts.
    pub stat: BTreeMap<String, i64>,
    /// Times balance_dirty_pages paused a writer of the cgroup.
    pub dirty_throttled: u64,
    /// memory.pressure and io.pressure.
    pub pressure: Option<PressureView>,
    /// The cgroup v1 memory controller's own files (runs with `cgroup_version = 1`, and
    /// host_replay's reports from a v1 machine).
    pub v1: Option<CgroupV1View>,
}

/// A cgroup's v1 files (`run::CgroupV1Files`): the ones `compare` shows.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CgroupV1View {
    /// memory.failcnt.
    pub failcnt: u64,
    /// memory.max_usage_in_bytes.
    pub max_usage_in_bytes: u64,
    /// memory.memsw.max_usage_in_bytes (absent: the root's, or an older report).
    pub memsw_max_usage_in_bytes: Option<u64>,
    /// memory.stat under the v1 names.
    pub stat: BTreeMap<String, i64>,
}

impl CgroupView {
    /// Whether this is the root cgroup.
    pub fn is_root(&self) -> bool {
        self.name == "/" || self.name.is_empty()
    }
}

/// One replay task's results (`replay.tasks[]`, `workload::replay::ReplayTaskReport`).
/// The figures a host report lacks are None.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ReplayTaskView {
    /// Task name.
    pub task: String,
    /// The trace file, and its format as `--format` spells it.
    pub trace: String,
    /// Format.
    pub format: String,
    /// Through mappings (`--mmap`), files kept open (`--keep-open`), paced (`--pace`).
    pub mmap: bool,
    /// `--keep-open`.
    pub keep_open: bool,
    /// `--pace`.
    pub pace: bool,
    /// The cgroup's memory.max, bytes (None: none, or the root).
    pub memory_max: Option<u64>,
    /// Requests replayed.
    pub requests: u64,
    /// Pages requested.
    pub pages: u64,
    /// Pages not cached when requested.
    pub page_misses: u64,
    /// page_misses / pages.
    pub page_miss_ratio: f64,
    /// Byte miss ratio.
    pub byte_miss_ratio: Option<f64>,
    /// Request (object) miss ratio.
    pub request_miss_ratio: Option<f64>,
    /// Pages the task's accesses read into the page cache (demand and readahead).
    pub pages_read_in: Option<u64>,
    /// Pages read ahead and never hit.
    pub readahead_wasted: Option<u64>,
}

/// The `replay` section of a run document (`workload::replay::ReplayReport`), or what a
/// host report gives of it.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct ReplayView {
    /// One entry per replay task.
    pub tasks: Vec<ReplayTaskView>,
    /// The largest page cache seen, pages (None in a host report).
    pub cache_pages_max: Option<u64>,
    /// Pages read from block devices.
    pub io_pages_read: u64,
    /// Pages written to block devices.
    pub io_pages_written: u64,
    /// workingset refaults.
    pub refaults: u64,
    /// Refaults that activated their page.
    pub refault_activations: u64,
    /// pgactivate.
    pub activations: u64,
    /// Requests per host second (the simulator's speed; 0 in a host report). Not a
    /// simulated result: [`ReplayView::same_results`] leaves it out.
    pub host_requests_per_s: f64,
}

impl ReplayView {
    /// Whether two replays gave the same results (everything but the host's speed).
    pub fn same_results(&self, other: &ReplayView) -> bool {
        let strip = |v: &ReplayView| ReplayView {
            host_requests_per_s: 0.0,
            ..v.clone()
        };
        strip(self) == strip(other)
    }
}

/// The parts of a run document that `compare` reads.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct RunDoc {
    /// Schema version (0 if absent, which no mmsim writes).
    pub schema_version: u32,
    /// Scenario name.
    pub scenario: String,
    /// Where the scenario came from.
    pub source: String,
    /// Seed.
    pub seed: u64,
    /// Feature switches in force.
    pub features: BTreeMap<String, bool>,
    /// The machine.
    pub machine: MachineView,
    /// The `[vm]` sysctls that move the watermarks (absent: the defaults).
    pub vm: VmView,
    /// How the run ended (`"Completed"` or an object naming the failure).
    pub end: serde_json::Value,
    /// Virtual time from start to the last user task's exit, ns.
    pub elapsed_ns: u64,
    /// CPU time.
    pub cpu_time: CpuTimeView,
    /// /proc/vmstat at the end of the run.
    pub vmstat: BTreeMap<String, i64>,
    /// Profile rows, sorted by cost, with shares of busy time.
    pub profile_top: Vec<ProfileRowView>,
    /// Per-task results.
    pub tasks: Vec<TaskView>,
    /// Interrupts per CPU.
    pub interrupts: Vec<u64>,
    /// TLB shootdowns per CPU.
    pub tlb_shootdowns: Vec<u64>,
    /// Time-series column names.
    pub series_columns: Vec<String>,
    /// Time series.
    pub series: Vec<SampleView>,
    /// PSI stall totals at the end of each 2 s period (`RunReport::pressure_series`; empty
    /// without PSI and in documents from before it was recorded).
    #[serde(default)]
    pub pressure_series: Vec<crate::run::PressureSample>,
    /// The kernel era whose rules the run followed (`"6.18"`); empty in documents written
    /// before eras existed.
    pub kernel: String,
    /// Memory cgroups, root first (empty without `[[cgroups]]` and in older documents).
    pub cgroups: Vec<CgroupView>,
    /// The reclaim policy (`"mglru"`; empty for classic runs and older documents).
    pub policy: String,
    /// Per-device IO (empty in documents written before it existed).
    pub devices: Vec<DeviceView>,
    /// /proc/pressure (absent before 4.20 and in older documents).
    pub pressure: Option<PressureView>,
    /// The zram swap device (runs with `[swap] preset = "zram"`).
    pub zram: Option<ZramView>,
    /// zswap (runs with `[swap.zswap]`).
    pub zswap: Option<ZswapView>,
    /// The replay section (runs of `mmsim replay` and replay tasks).
    pub replay: Option<ReplayView>,
    /// A run on the machine's own kernel (a report of `examples/host_replay`, made into a
    /// document by [`host_replay_doc`]): no simulated CPU time, profile, features or
    /// memory.events; its vmstat counters are deltas over the replay.
    #[serde(skip)]
    pub host: bool,
    /// The file the document was read from (not part of the JSON).
    #[serde(skip)]
    pub path: PathBuf,
}

impl RunDoc {
    /// Whether the run completed (`end` is `"Completed"`; an absent `end` counts as done).
    pub fn completed(&self) -> bool {
        matches!(&self.end, serde_json::Value::Null)
            || self.end.as_str().is_some_and(|s| s == "Completed")
    }

    /// The user (non-kernel-thread) tasks, in document order.
    pub fn user_tasks(&self) -> impl Iterator<Item = &TaskView> {
        self.tasks.iter().filter(|t| !t.kthread)
    }

    /// The user task called `name`, if any.
    pub fn task(&self, name: &str) -> Option<&TaskView> {
        self.user_tasks().find(|t| t.name == name)
    }

    /// The time series of column `name`: `(t_ns, value)` pairs; empty if absent.
    pub fn series_of(&self, name: &str) -> Vec<(u64, i64)> {
        let Some(i) = self.series_columns.iter().position(|c| c == name) else {
            return Vec::new();
        };
        self.series
            .iter()
            .filter_map(|s| s.values.get(i).map(|v| (s.t_ns, *v)))
            .collect()
    }

    /// The era the run followed, parsed; None when `kernel` is absent (a document from
    /// before eras, whose runs followed the 4.2 rules) or names a version this mmsim does
    /// not know.
    pub fn era(&self) -> Option<crate::kernel::KernelEra> {
        crate::kernel::KernelEra::parse(&self.kernel).ok()
    }

    /// The kernel a column name and comparisons use: `kernel` as written, or `"4.2"` for a
    /// document without one (its run followed the rules of the 4.2 era, the model before
    /// eras existed).
    pub fn era_label(&self) -> &str {
        if self.kernel.is_empty() {
            "4.2"
        } else {
            &self.kernel
        }
    }

    /// The cgroup called `name` (`"/"` for the root), if the run had it.
    pub fn cgroup(&self, name: &str) -> Option<&CgroupView> {
        self.cgroups.iter().find(|c| c.name == name)
    }

    /// memory.current of the cgroup called `name` over time: `(t_ns, bytes)` pairs (the
    /// sample's entry at the cgroup's position in `cgroups`); empty if the run did not
    /// have it.
    pub fn cgroup_series(&self, name: &str) -> Vec<(u64, u64)> {
        self.cgroup_column(name, |s| &s.cgroups)
    }

    /// memory.swap.current of the cgroup called `name` over time, as `cgroup_series`;
    /// empty without swap.
    pub fn cgroup_swap_series(&self, name: &str) -> Vec<(u64, u64)> {
        self.cgroup_column(name, |s| &s.cgroups_swap)
    }

    /// The PSI stall totals of group `name` over time (`"/"`: /proc/pressure; else a
    /// cgroup's *.pressure): `(t_ns, [memory some, memory full, io some, io full] µs)`;
    /// empty if the run has no such group or no PSI.
    pub fn pressure_series(&self, name: &str) -> Vec<(u64, [u64; 4])> {
        let i = if name == "/" {
            0
        } else {
            match self.cgroups.iter().position(|c| c.name == name) {
                Some(i) => i,
                None => return Vec::new(),
            }
        };
        self.pressure_series
            .iter()
            .filter_map(|s| s.totals.get(i).map(|p| (s.t_ns, *p)))
            .collect()
    }

    /// The samples' per-cgroup `column` entry of the cgroup called `name`, in bytes.
    fn cgroup_column(&self, name: &str, column: fn(&SampleView) -> &Vec<u64>) -> Vec<(u64, u64)> {
        let Some(i) = self.cgroups.iter().position(|c| c.name == name) else {
            return Vec::new();
        };
        let page = crate::mm::page::PAGE_SIZE;
        self.series
            .iter()
            .filter_map(|s| column(s).get(i).map(|p| (s.t_ns, p * page)))
            .collect()
    }

    /// The file stem of [`RunDoc::path`] (e.g. `a` for `/tmp/a.json`).
    pub fn file_stem(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Why a run document could not be used. Each names the file concerned.
#[derive(Debug)]
pub enum LoadError {
    /// The file could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// The file is not JSON, is truncated, or a field has the wrong type.
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error (0 if unknown).
        line: usize,
        /// 1-based column of the error (0 if unknown).
        column: usize,
        /// serde's message, without its location.
        message: String,
    },
    /// The document is a report of `examples/host_anon.rs` (a run on the machine's own
    /// kernel), not an mmsim run document (`examples/host_replay.rs`'s reports are read:
    /// [`host_replay_doc`]).
    HostReport {
        /// The file.
        path: PathBuf,
    },
    /// The document has a schema version this mmsim does not read.
    Schema {
        /// The file.
        path: PathBuf,
        /// The version found.
        found: u32,
    },
    /// Documents of different scenarios (refused unless forced).
    ScenarioMismatch {
        /// The first document's file.
        base_path: PathBuf,
        /// Its scenario.
        base: String,
        /// The disagreeing document's file.
        path: PathBuf,
        /// Its scenario.
        scenario: String,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Io { path, error } => {
                write!(f, "{}: cannot read: {}", path.display(), error)
            }
            LoadError::Parse {
                path,
                line,
                column,
                message,
            } => write!(
                f,
                "{}:{}:{}: not a valid mmsim run document: {}",
                path.display(),
                line,
                column,
                message
            ),
            LoadError::HostReport { path } => write!(
                f,
                "{}: a report of examples/host_anon (a run on this machine's kernel), not an \
                 mmsim run document; compare reads examples/host_replay's reports beside \
                 replay runs, not host_anon's: set its vmstat and cgroup_stat beside an mmsim \
                 run's report (docs/replay.md, \"Against a real kernel\")",
                path.display()
            ),
            LoadError::Schema { path, found } => write!(
                f,
                "{}: schema_version {} (this mmsim reads version {}; re-run the scenario)",
                path.display(),
                found,
                SCHEMA_VERSION
            ),
            LoadError::ScenarioMismatch {
                base_path,
                base,
                path,
                scenario,
            } => write!(
                f,
                "{} is scenario `{}` but {} is scenario `{}` (use --force to compare anyway)",
                path.display(),
                scenario,
                base_path.display(),
                base
            ),
        }
    }
}

impl std::error::Error for LoadError {}

/// Parses one run document from `text`; `path` is only used in messages and recorded in
/// [`RunDoc::path`]. Checks the schema version.
///
/// The version is checked before the rest of the document is interpreted, so a document
/// of another version whose fields changed type is reported as such, not as a type error.
pub fn parse_run(text: &str, path: &Path) -> Result<RunDoc, LoadError> {
    /// Just the version (and, by parsing the whole text, JSON syntax errors).
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default)]
        schema_version: serde_json::Value,
        /// The host reports' memory.stat (they carry no schema version).
        #[serde(default)]
        cgroup_stat: Option<serde_json::Value>,
    }
    let parse_error = |e: serde_json::Error| {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full).to_string();
        LoadError::Parse {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            message,
        }
    };
    let probe: Probe = serde_json::from_str(text).map_err(parse_error)?;
    let found = probe.schema_version.as_u64().unwrap_or(0);
    if found == 0 && probe.cgroup_stat.is_some() {
        return match serde_json::from_str::<HostReplayReport>(text) {
            Ok(h) if h.page_miss_ratio.is_some() => Ok(host_replay_doc(h, path)),
            _ => Err(LoadError::HostReport {
                path: path.to_path_buf(),
            }),
        };
    }
    if found != u64::from(SCHEMA_VERSION) {
        return Err(LoadError::Schema {
            path: path.to_path_buf(),
            found: u32::try_from(found).unwrap_or(u32::MAX),
        });
    }
    let mut doc: RunDoc = serde_json::from_str(text).map_err(parse_error)?;
    doc.path = path.to_path_buf();
    Ok(doc)
}

/// What a report of `examples/host_replay` (a replay on the machine's own kernel, in a
/// memory cgroup) gives: see that example's `report`.
#[derive(Deserialize)]
struct HostReplayReport {
    trace: String,
    kernel: String,
    memory_max: Option<String>,
    #[serde(default)]
    requests: u64,
    #[serde(default)]
    pages: u64,
    #[serde(default)]
    page_misses: u64,
    page_miss_ratio: Option<f64>,
    #[serde(default)]
    host_seconds: f64,
    #[serde(default)]
    vmstat: BTreeMap<String, i64>,
    #[serde(default)]
    cgroup_stat: BTreeMap<String, i64>,
    /// The cgroup's v1 files, on a v1 machine.
    #[serde(default)]
    v1: Option<CgroupV1View>,
}

/// The name of the replay task and cgroup `mmsim replay` makes (`trace::cli`).
const REPLAY: &str = "replay";

/// A host_replay report as a run document of scenario `replay-<trace file name>` (the one
/// `mmsim replay` of the same trace has), so that `compare` sets it beside the simulated
/// runs: its elapsed time is the replay's wall time; vmstat its counters' deltas over the
/// replay (gauges, `nr_*`, left out: a delta of a gauge is no end-of-run value); one task
/// and one cgroup called `replay`, its memory.stat sizes at the end and events over the
/// replay (cgroup v1 names made v2's by the example), memory.current the usage at the
/// end; the replay section with the page miss ratio and vmstat's IO, refaults and
/// activations (pgpgin and pgpgout in pages).
fn host_replay_doc(h: HostReplayReport, path: &Path) -> RunDoc {
    let file = Path::new(&h.trace)
        .file_name()
        .map_or_else(|| h.trace.clone(), |f| f.to_string_lossy().into_owned());
    let elapsed_ns = (h.host_seconds * 1e9) as u64;
    let event = |k: &str| h.vmstat.get(k).copied().unwrap_or(0).max(0) as u64;
    let memory_max = h
        .memory_max
        .as_deref()
        .and_then(|m| crate::scenario::parse_size_arg(m).ok());
    let usage = h.cgroup_stat.get("usage").copied().unwrap_or(0).max(0) as u64;
    RunDoc {
        schema_version: SCHEMA_VERSION,
        scenario: format!("{REPLAY}-{file}"),
        kernel: format!("{} (this machine)", h.kernel),
        elapsed_ns,
        vmstat: h
            .vmstat
            .iter()
            .filter(|(k, _)| !k.starts_with("nr_"))
            .map(|(k, v)| (k.clone(), *v))
            .collect(),
        tasks: vec![TaskView {
            name: REPLAY.to_string(),
            elapsed_ns,
            ..TaskView::default()
        }],
        cgroups: vec![CgroupView {
            name: REPLAY.to_string(),
            memory_max,
            current: usage,
            stat: h.cgroup_stat.clone(),
            v1: h.v1.clone(),
            ..CgroupView::default()
        }],
        replay: Some(ReplayView {
            tasks: vec![ReplayTaskView {
                task: REPLAY.to_string(),
                requests: h.requests,
                pages: h.pages,
                page_misses: h.page_misses,
                page_miss_ratio: h.page_miss_ratio.unwrap_or(0.0),
                ..ReplayTaskView::default()
            }],
            cache_pages_max: None,
            io_pages_read: event("pgpgin") / 4,
            io_pages_written: event("pgpgout") / 4,
            refaults: event("workingset_refault_file"),
            refault_activations: event("workingset_activate_file"),
            activations: event("pgactivate"),
            host_requests_per_s: 0.0,
        }),
        host: true,
        path: path.to_path_buf(),
        ..RunDoc::default()
    }
}

/// Reads and parses one run document.
pub fn load_run(path: &Path) -> Result<RunDoc, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|error| LoadError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    parse_run(&text, path)
}

/// Reads every document, in order, and checks that they are of one scenario unless `force`.
pub fn load_runs<P: AsRef<Path>>(paths: &[P], force: bool) -> Result<Vec<RunDoc>, LoadError> {
    let docs = paths
        .iter()
        .map(|p| load_run(p.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    if !force {
        check_same_scenario(&docs)?;
    }
    Ok(docs)
}

/// Fails with [`LoadError::ScenarioMismatch`] on the first document whose scenario differs
/// from the first document's.
pub fn check_same_scenario(docs: &[RunDoc]) -> Result<(), LoadError> {
    let Some(base) = docs.first() else {
        return Ok(());
    };
    match docs.iter().find(|d| d.scenario != base.scenario) {
        Some(d) => Err(LoadError::ScenarioMismatch {
            base_path: base.path.clone(),
            base: base.scenario.clone(),
            path: d.path.clone(),
            scenario: d.scenario.clone(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_text(scenario: &str, version: u32) -> String {
        serde_json::json!({
            "schema_version": version,
            "scenario": scenario,
            "features": {"workingset": true, "accessed-init": false},
            "end": "Completed",
            "elapsed_ns": 1_500_000_000u64,
            "cpu_time": {"user_ns": 1, "system_ns": 2, "interrupt_ns": 3, "idle_ns": 4},
            "vmstat": {"pgmajfault": 7, "nr_free_pages": 100},
            "tasks": [
                {"name": "kswapd0", "kthread": true},
                {"name": "dd", "kthread": false, "elapsed_ns": 10,
                 "samples": {"iteration": [3, 1, 2]}}
            ],
            "series_columns": ["nr_free_pages", "pgmajfault"],
            "series": [{"t_ns": 0, "values": [5, 0]}, {"t_ns": 100, "values": [4, 2]}],
            "a_field_from_the_future": [1, 2, 3]
        })
        .to_string()
    }

    /// A fresh temporary file holding `text`.
    fn temp(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mmsim-load-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn good_document() {
        let p = temp("good.json", &doc_text("dd-tmpfs", SCHEMA_VERSION));
        let d = load_run(&p).unwrap();
        assert_eq!(d.scenario, "dd-tmpfs");
        assert_eq!(d.path, p);
        assert_eq!(d.file_stem(), "good");
        assert!(d.completed());
        assert_eq!(d.elapsed_ns, 1_500_000_000);
        assert_eq!(d.cpu_time.interrupt_ns, 3);
        assert_eq!(d.vmstat["pgmajfault"], 7);
        assert_eq!(d.user_tasks().count(), 1);
        assert_eq!(d.task("dd").unwrap().samples["iteration"], vec![3, 1, 2]);
        assert!(d.task("kswapd0").is_none());
        assert_eq!(d.series_of("pgmajfault"), vec![(0, 0), (100, 2)]);
        assert!(d.series_of("nr_dirty").is_empty());
        assert!(d.profile_top.is_empty()); // absent field: default
    }

    #[test]
    fn missing_file() {
        let p = std::env::temp_dir().join("mmsim-load-no-such-dir/none.json");
        let e = load_run(&p).unwrap_err();
        assert!(matches!(e, LoadError::Io { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("none.json") && msg.contains("cannot read"),
            "{msg}"
        );
    }

    #[test]
    fn truncated_json() {
        let text = doc_text("dd-tmpfs", SCHEMA_VERSION);
        let p = temp("trunc.json", &text[..text.len() / 2]);
        let e = load_run(&p).unwrap_err();
        let LoadError::Parse { line, column, .. } = &e else {
            panic!("{e:?}");
        };
        assert_eq!((*line, *column), (1, text.len() / 2));
        let msg = e.to_string();
        assert!(msg.contains("trunc.json:1:"), "{msg}");
        assert!(msg.contains("EOF while parsing"), "{msg}");
        assert!(!msg.contains(" at line "), "{msg}");
        // A field of the wrong type names its line and column too.
        let e = parse_run(
            "{\n  \"schema_version\": 1,\n  \"elapsed_ns\": \"soon\"\n}",
            Path::new("x.json"),
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("x.json:3:"), "{e}");
        assert!(matches!(
            parse_run("", Path::new("e.json")),
            Err(LoadError::Parse { .. })
        ));
    }

    #[test]
    fn wrong_schema_version() {
        let e = parse_run(&doc_text("dd-tmpfs", 99), Path::new("old.json")).unwrap_err();
        assert!(matches!(e, LoadError::Schema { found: 99, .. }));
        assert!(e.to_string().contains("schema_version 99"), "{e}");
        // No version at all (not a run document) is version 0.
        let e = parse_run("{}", Path::new("empty.json")).unwrap_err();
        assert!(matches!(e, LoadError::Schema { found: 0, .. }));
    }

    #[test]
    fn a_host_report_is_named_as_such() {
        // host_replay's and host_anon's JSON: vmstat deltas and memory.stat, no version.
        let text =
            r#"{"kernel": "6.18.44", "vmstat": {"pgactivate": 5}, "cgroup_stat": {"usage": 1}}"#;
        let e = parse_run(text, Path::new("host.json")).unwrap_err();
        assert!(matches!(e, LoadError::HostReport { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("host.json: a report of examples/host_anon"),
            "{e}"
        );
    }

    #[test]
    fn a_host_replay_report_is_read_as_a_run_on_the_machine() {
        let text = r#"{"trace": "/data/T.txt", "kernel": "6.18.44", "memory_max": "64MiB",
            "requests": 10, "pages": 20, "page_misses": 5, "page_miss_ratio": 0.25,
            "host_seconds": 1.5, "cgroup_version": 1,
            "vmstat": {"pgpgin": 40, "pgactivate": 7, "nr_free_pages": -3,
                       "workingset_refault_file": 2, "workingset_activate_file": 1},
            "cgroup_stat": {"usage": 4096, "file": 8192, "workingset_refault_file": 2}}"#;
        let d = parse_run(text, Path::new("h.json")).unwrap();
        assert!(d.host);
        // The scenario `mmsim replay T.txt` has, so compare needs no --force.
        assert_eq!(d.scenario, "replay-T.txt");
        assert_eq!(d.kernel, "6.18.44 (this machine)");
        assert_eq!(d.elapsed_ns, 1_500_000_000);
        assert_eq!(d.task("replay").map(|t| t.elapsed_ns), Some(1_500_000_000));
        // A gauge's delta is no end-of-run value.
        assert_eq!(d.vmstat.get("nr_free_pages"), None);
        assert_eq!(d.vmstat.get("pgactivate"), Some(&7));
        let cg = d.cgroup("replay").expect("the replay cgroup");
        assert_eq!((cg.memory_max, cg.current), (Some(64 << 20), 4096));
        assert_eq!(cg.stat.get("file"), Some(&8192));
        let r = d.replay.expect("a replay section");
        assert_eq!(r.tasks.len(), 1);
        let t = &r.tasks[0];
        assert_eq!((t.requests, t.pages, t.page_misses), (10, 20, 5));
        assert_eq!((t.page_miss_ratio, t.byte_miss_ratio), (0.25, None));
        // pgpgin counts KiB.
        assert_eq!(
            (
                r.io_pages_read,
                r.refaults,
                r.refault_activations,
                r.activations
            ),
            (10, 2, 1, 7)
        );
        assert_eq!(r.cache_pages_max, None);
    }

    #[test]
    fn replays_differing_only_in_the_simulators_speed_have_the_same_results() {
        let view = |speed: f64, miss: f64| ReplayView {
            tasks: vec![ReplayTaskView {
                task: "replay".into(),
                page_miss_ratio: miss,
                ..ReplayTaskView::default()
            }],
            host_requests_per_s: speed,
            ..ReplayView::default()
        };
        assert!(view(1e6, 0.5).same_results(&view(2e6, 0.5)));
        assert!(!view(1e6, 0.5).same_results(&view(1e6, 0.25)));
    }

    #[test]
    fn different_scenarios() {
        let a = temp("sa.json", &doc_text("dd-tmpfs", SCHEMA_VERSION));
        let b = temp("sb.json", &doc_text("hot-stream", SCHEMA_VERSION));
        let e = load_runs(&[&a, &b], false).unwrap_err();
        assert!(matches!(e, LoadError::ScenarioMismatch { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains("hot-stream") && msg.contains("--force"),
            "{msg}"
        );
        assert_eq!(load_runs(&[&a, &b], true).unwrap().len(), 2);
        assert_eq!(load_runs(&[&a, &a], false).unwrap().len(), 2);
    }

    #[test]
    fn old_document_without_kernel_or_cgroups() {
        // doc_text has neither `kernel` nor `cgroups`, as documents before eras.
        let d = parse_run(&doc_text("dd-tmpfs", SCHEMA_VERSION), Path::new("old.json")).unwrap();
        assert_eq!(d.kernel, "");
        assert_eq!(d.era(), None);
        assert_eq!(d.era_label(), "4.2");
        assert!(d.cgroups.is_empty());
        assert!(d.series.iter().all(|s| s.cgroups.is_empty()));
        assert!(d.cgroup("/").is_none());
        assert!(d.cgroup_series("a").is_empty());
    }

    #[test]
    fn document_with_kernel_and_cgroups() {
        let mut j: serde_json::Value =
            serde_json::from_str(&doc_text("memcg", SCHEMA_VERSION)).unwrap();
        j["kernel"] = serde_json::json!("6.18");
        j["cgroups"] = serde_json::json!([
            {"name": "/", "memory_max": null, "current": 8192, "peak": 12288,
             "stat": {"pgscan": 0}},
            {"name": "a", "memory_max": 4_194_304u64, "current": 4096, "peak": 8192,
             "events": {"low": 0, "high": 0, "max": 3, "oom": 1, "oom_kill": 1},
             "stat": {"pgscan": 40, "file": 4096}, "future_key": true}
        ]);
        j["series"] = serde_json::json!([
            {"t_ns": 0, "values": [5, 0], "cgroups": [1, 0]},
            {"t_ns": 100, "values": [4, 2], "cgroups": [2, 1]}
        ]);
        let d = parse_run(&j.to_string(), Path::new("new.json")).unwrap();
        assert_eq!(d.era(), Some(crate::kernel::KernelEra::V6_18));
        assert_eq!(d.era_label(), "6.18");
        assert_eq!(d.cgroups.len(), 2);
        assert!(d.cgroups[0].is_root() && !d.cgroups[1].is_root());
        let a = d.cgroup("a").unwrap();
        assert_eq!(a.memory_max, Some(4 << 20));
        assert_eq!(a.memory_high, None);
        assert_eq!((a.events.max, a.events.oom_kill), (3, 1));
        assert_eq!(a.events.entries()[2], ("max", 3));
        assert_eq!(a.stat["pgscan"], 40);
        assert_eq!(d.cgroup_series("a"), vec![(0, 0), (100, 4096)]);
        assert_eq!(d.cgroup_series("/"), vec![(0, 4096), (100, 8192)]);
        // An era this mmsim does not know still loads.
        j["kernel"] = serde_json::json!("9.9");
        let d = parse_run(&j.to_string(), Path::new("future.json")).unwrap();
        assert_eq!((d.era(), d.era_label()), (None, "9.9"));
    }

    #[test]
    fn failed_run_is_not_completed() {
        let mut d = parse_run(&doc_text("x", SCHEMA_VERSION), Path::new("x")).unwrap();
        d.end = serde_json::json!({"Stalled": "deadlock"});
        assert!(!d.completed());
    }
}
