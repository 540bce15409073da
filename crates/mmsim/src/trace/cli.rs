//! `mmsim replay TRACE`: build a scenario around a trace (or add the trace to a given
//! scenario), run it at one or more RAM sizes, print the replay figures, the miss-ratio
//! curve, and write JSON and plots. `docs/replay.md`.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::kernel::{resolve_features, KernelEra};
use crate::run::{run_scenario, RunOptions, RunReport};
use crate::scenario::{parse_scenario, parse_size_arg, Scenario};

/// Arguments of `mmsim replay`.
#[derive(clap::Args, Debug, Clone)]
pub struct ReplayArgs {
    /// The trace file (zstd-compressed files are read directly).
    pub trace: PathBuf,
    /// Trace format (default: guessed from the file name and first line).
    #[arg(long, long_help = format!("Trace format: {} (default: guessed from the file name and first line)", crate::trace::format_names()))]
    pub format: Option<String>,
    /// RAM of the machine: one size, a list (`64MiB,128MiB`), a doubling range
    /// (`64MiB..1GiB`) or an even range (`64MiB..1GiB/8`). Several sizes give a miss-ratio
    /// curve. Default: 256MiB, or the given scenario's own RAM.
    #[arg(long)]
    pub ram: Option<String>,
    /// memory.max of a memory cgroup `replay` (cgroup v2) the trace runs in, on a machine
    /// of `--ram` RAM: one size, a list or a range, as `--ram` takes them. Several sizes
    /// give a miss-ratio curve over the limit. With it, the default RAM is twice the
    /// largest limit, at least 256MiB.
    #[arg(long, value_name = "SIZE")]
    pub memory_max: Option<String>,
    /// The cgroup hierarchy the memory controller is on: 2 (the unified one, the default)
    /// or 1 (cgroup v1's legacy hierarchy: no cgroup writeback, so the cgroup's writes
    /// are held to the global dirty limits only and its limit reclaim waits on writeback;
    /// the scenario's `cgroup_version`).
    #[arg(long, value_name = "1|2")]
    pub cgroup_version: Option<u8>,
    /// A scenario TOML to run the trace in (its machine, devices, filesystems and tasks);
    /// a replay task named `replay` is added to it.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// Feature preset: `vanilla` or `patched`.
    #[arg(long, default_value = "patched")]
    pub preset: String,
    /// Feature overrides, e.g. `-workingset`.
    #[arg(long, allow_hyphen_values = true)]
    pub features: Option<String>,
    /// Kernel whose rules the replay follows: any release from 2.6.30 to 6.18 (default 6.18).
    #[arg(long, value_name = "VERSION")]
    pub kernel: Option<String>,
    /// Reclaim policy: `classic` or `mglru` (MGLRU needs kernel 6.1 or later); default:
    /// the scenario's, else classic.
    #[arg(long)]
    pub policy: Option<String>,
    /// Readahead window ceiling of the replay's device(s) (queue/read_ahead_kb), e.g.
    /// `128KiB` (the kernel's default) or `off` (0: each missing page read on its own).
    #[arg(long, value_name = "SIZE|off")]
    pub readahead: Option<String>,
    /// Model the replay's flash device(s) with this many requests in service at once, each
    /// paying the latency (`[[devices]] queue_depth`, 1 ..= 1024; not with `--device hdd`).
    /// Default: one request at a time, the latency on a seek only.
    #[arg(long, value_name = "N")]
    pub queue_depth: Option<u64>,
    /// Scenario overrides, `key=value`, repeatable (the task is `tasks.replay.*`).
    #[arg(long = "set")]
    pub sets: Vec<String>,
    /// Access through shared mappings instead of pread.
    #[arg(long)]
    pub mmap: bool,
    /// Object traces, a file per object: keep each object's file open after its first
    /// request (an fd cache) instead of opening and closing it per request (`keep_open`).
    #[arg(long)]
    pub keep_open: bool,
    /// Pace the replay by the trace's timestamps (virtual time); default back to back.
    #[arg(long)]
    pub pace: bool,
    /// Object traces: `file` (one file per object) or `range` (one page range per object).
    #[arg(long)]
    pub object_map: Option<String>,
    /// Size of objects without one (txt traces), e.g. 4KiB.
    #[arg(long)]
    pub object_size: Option<String>,
    /// Block traces: minimum size of each device's file.
    #[arg(long)]
    pub size: Option<String>,
    /// Replay at most N requests.
    #[arg(long)]
    pub limit: Option<u64>,
    /// Stop after this many simulation steps (the report says INCOMPLETE), as `mmsim run
    /// --max-steps`.
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Block device model of the replay's disk: hdd, ssd or nvme.
    #[arg(long, default_value = "ssd")]
    pub device: String,
    /// Runs at once (miss-ratio curves), at least 1.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: u16,
    /// Write the JSON report to PATH (`-` for stdout); with several sizes, PATH gets one
    /// document per size: `PATH` with `-<ram>` before the extension.
    #[arg(long)]
    pub json: Option<String>,
    /// Write the miss-ratio plots (SVG and PNG) into DIR.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// Parse `--ram`: one size, a list, `A..B` (doubling) or `A..B/N` (N even steps), each a
/// RAM a machine may have, in whole pages.
pub fn parse_ram_list(s: &str) -> Result<Vec<u64>, String> {
    use crate::scenario::{MAX_NODE_MEMORY, MIN_NODE_MEMORY};
    let out = parse_size_list("--ram", s)?;
    if let Some(b) = out
        .iter()
        .find(|b| !(MIN_NODE_MEMORY..=MAX_NODE_MEMORY).contains(*b))
    {
        return Err(format!(
            "--ram {s}: {} is outside the RAM a machine may have (16 MiB to 16 TiB)",
            crate::scenario::fmt_bytes(*b)
        ));
    }
    // Whole pages (the machine's memory must be a multiple of 4 KiB).
    Ok(out.into_iter().map(|b| b / 4096 * 4096).collect())
}

/// The least `--memory-max`: a replay in a smaller cgroup could not hold its readahead.
pub const MIN_MEMORY_MAX: u64 = 1 << 20;

/// Parse `--memory-max` as `--ram` is parsed, each limit at least 1 MiB, rounded down to
/// whole pages (as the kernel's page counter takes memory.max).
pub fn parse_memory_max_list(s: &str) -> Result<Vec<u64>, String> {
    let out = parse_size_list("--memory-max", s)?;
    if let Some(b) = out.iter().find(|b| **b < MIN_MEMORY_MAX) {
        return Err(format!(
            "--memory-max {s}: {} is below the least limit a replay may run in (1 MiB)",
            crate::scenario::fmt_bytes(*b)
        ));
    }
    Ok(out.into_iter().map(|b| b / 4096 * 4096).collect())
}

/// One size, a list, `A..B` (doubling) or `A..B/N` (N even steps) of option `flag`.
fn parse_size_list(flag: &str, s: &str) -> Result<Vec<u64>, String> {
    let size = |v: &str| parse_size_arg(v.trim()).map_err(|e| format!("{flag} {v}: {e}"));
    let mut out = Vec::new();
    if let Some((a, rest)) = s.split_once("..") {
        let (b, steps) = match rest.split_once('/') {
            Some((b, n)) => (
                b,
                Some(
                    n.trim()
                        .parse::<u64>()
                        .map_err(|_| format!("{flag}: \"{n}\" is not a number of steps"))?,
                ),
            ),
            None => (rest, None),
        };
        let (a, b) = (size(a)?, size(b)?);
        if a == 0 || b < a {
            return Err(format!(
                "{flag} {s}: the range must be increasing and above 0"
            ));
        }
        match steps {
            Some(0) => return Err(format!("{flag}: at least one step")),
            Some(1) => out.push(b),
            Some(n) => {
                for i in 0..n {
                    out.push(a + (b - a) * i / (n - 1));
                }
            }
            None => {
                let mut x = a;
                while x <= b {
                    out.push(x);
                    x *= 2;
                }
            }
        }
    } else {
        for v in s.split(',') {
            out.push(size(v)?);
        }
    }
    if out.len() > 256 {
        return Err(format!("{flag}: at most 256 sizes"));
    }
    Ok(out)
}

/// One run of a replay: the machine's RAM (0: the given scenario's own) and the memory.max
/// of the cgroup `replay` the trace runs in (None: no cgroup, the root's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayPoint {
    /// Bytes of RAM (one node), 0 for the scenario's.
    pub ram: u64,
    /// memory.max of the replay's cgroup, bytes.
    pub memory_max: Option<u64>,
}

/// The runs of `--ram` and `--memory-max`: one of them may be several sizes (the curve's
/// axis), not both. Without `--ram`, the machine has 256 MiB, or twice the largest limit
/// when that is more, or the scenario's own RAM.
pub fn replay_points(a: &ReplayArgs) -> Result<Vec<ReplayPoint>, String> {
    let maxes = a
        .memory_max
        .as_deref()
        .map(parse_memory_max_list)
        .transpose()?;
    let rams = match (&a.ram, &a.scenario, &maxes) {
        (Some(r), _, _) => parse_ram_list(r)?,
        (None, Some(_), _) => vec![0],
        (None, None, None) => vec![256 << 20],
        (None, None, Some(m)) => {
            let largest = m.iter().copied().max().unwrap_or(0);
            let ram = (2 * largest).div_ceil(1 << 20) << 20;
            vec![ram.max(256 << 20)]
        }
    };
    let Some(maxes) = maxes else {
        return Ok(rams
            .into_iter()
            .map(|ram| ReplayPoint {
                ram,
                memory_max: None,
            })
            .collect());
    };
    if rams.len() > 1 && maxes.len() > 1 {
        return Err(format!(
            "--ram {} and --memory-max {}: a curve varies one of them; give one size of the other",
            a.ram.as_deref().unwrap_or_default(),
            a.memory_max.as_deref().unwrap_or_default()
        ));
    }
    let mut out = Vec::new();
    for &ram in &rams {
        for &m in &maxes {
            if ram > 0 && m > ram {
                return Err(format!(
                    "--memory-max {}: {} is above the machine's RAM ({})",
                    a.memory_max.as_deref().unwrap_or_default(),
                    crate::scenario::fmt_bytes(m),
                    crate::scenario::fmt_bytes(ram)
                ));
            }
            out.push(ReplayPoint {
                ram,
                memory_max: Some(m),
            });
        }
    }
    Ok(out)
}

fn toml_str(s: &str) -> String {
    format!("{:?}", s)
}

/// The replay task table (in the cgroup `replay` when `memory_max` is given: the table of
/// that cgroup comes first; `build_scenario` sets its limit once the machine's RAM is
/// known).
fn task_toml(a: &ReplayArgs, trace: &str, memory_max: Option<u64>) -> String {
    let mut t = String::new();
    if memory_max.is_some() {
        t += "\n[[cgroups]]\nname = \"replay\"\n";
    }
    t += &format!(
        "\n[[tasks]]\nname = \"replay\"\nprogram = \"replay\"\ntrace = {}\n",
        toml_str(trace)
    );
    if memory_max.is_some() {
        t += "cgroup = \"replay\"\n";
    }
    if let Some(f) = &a.format {
        t += &format!("format = {}\n", toml_str(f));
    }
    if a.mmap {
        t += "mmap = true\n";
    }
    if a.keep_open {
        t += "keep_open = true\n";
    }
    if a.pace {
        t += "pace = true\n";
    }
    if let Some(o) = &a.object_map {
        t += &format!("object_map = {}\n", toml_str(o));
    }
    if let Some(o) = &a.object_size {
        t += &format!("object_size = {}\n", toml_str(o));
    }
    if let Some(o) = &a.size {
        t += &format!("size = {}\n", toml_str(o));
    }
    if let Some(l) = a.limit {
        t += &format!("limit = {l}\n");
    }
    t
}

/// `--readahead SIZE|off`: the device's read_ahead_kb.
pub fn parse_readahead(s: &str) -> Result<u64, String> {
    if s.trim() == "off" {
        return Ok(0);
    }
    let b = parse_size_arg(s.trim()).map_err(|e| format!("--readahead {s}: {e}"))?;
    if b % 4096 != 0 {
        return Err(format!(
            "--readahead {s}: must be whole 4 KiB pages (or `off`)"
        ));
    }
    if b > 1 << 30 {
        return Err(format!("--readahead {s}: at most 1GiB"));
    }
    Ok(b / 1024)
}

/// The scenario of one run: `p.ram` bytes of RAM (0: the given scenario's own RAM), the
/// trace in the cgroup of `p.memory_max` when given.
pub fn build_scenario(a: &ReplayArgs, p: ReplayPoint) -> Result<Scenario, String> {
    let ram = p.ram;
    let trace = a.trace.display().to_string();
    let mut sets = a.sets.clone();
    if let Some(v) = a.cgroup_version {
        sets.insert(0, format!("cgroup_version={v}"));
    }
    // --kernel is the scenario's kernel too, so its era checks (vm.swappiness above 100,
    // the cgroup files of later releases) are the run's.
    if let Some(k) = a.kernel.as_deref().and_then(|v| KernelEra::parse(v).ok()) {
        sets.insert(0, format!("kernel={k}"));
    }
    let (text, source) = match &a.scenario {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("{}: cannot read scenario file: {e}", path.display()))?;
            if ram > 0 {
                sets.insert(0, format!("machine.memory_per_node={ram}"));
            }
            (
                text + &task_toml(a, &trace, p.memory_max),
                path.display().to_string(),
            )
        }
        None => {
            let name = Path::new(&trace)
                .file_name()
                .map_or("trace".into(), |n| n.to_string_lossy().to_string());
            let text = format!(
                "name = {}\ndescription = \"mmsim replay of a trace\"\n\n[machine]\ncpus_per_node = 2\n\
                 memory_per_node = {ram}\n\n[[devices]]\nname = \"disk\"\npreset = {}\nsize = \"16TiB\"\n\n\
                 [[filesystems]]\nmount = \"/mnt\"\ntype = \"blockfs\"\ndevice = \"disk\"\n",
                toml_str(&format!("replay-{name}")),
                toml_str(&a.device),
            ) + &task_toml(a, &trace, p.memory_max);
            (text, "replay".to_string())
        }
    };
    let mut sc = parse_scenario(&text, &source, &sets).map_err(|e| {
        let e = e.to_string();
        if p.memory_max.is_some() && e.contains("duplicate cgroup name \"replay\"") {
            format!(
                "--memory-max: the scenario {source} has a cgroup named \"replay\" already, the \
                 name of the one --memory-max adds; rename it ({e})"
            )
        } else {
            e
        }
    })?;
    if let Some(m) = p.memory_max {
        let total = u64::from(sc.machine.nodes) * sc.machine.memory_per_node_bytes;
        if m > total {
            return Err(format!(
                "--memory-max: {} is above the machine's RAM ({})",
                crate::scenario::fmt_bytes(m),
                crate::scenario::fmt_bytes(total)
            ));
        }
        let cg = sc
            .cgroups
            .iter_mut()
            .find(|c| c.name == "replay")
            .expect("the replay's cgroup");
        cg.memory_max = Some(m);
    }
    if let Some(r) = &a.readahead {
        let kb = parse_readahead(r)?;
        for d in &mut sc.devices {
            d.read_ahead_kb = Some(kb);
        }
    }
    if let Some(q) = a.queue_depth {
        for d in &mut sc.devices {
            if let Some(why) = crate::scenario::queue_depth_problem(q, d.preset) {
                return Err(format!("--queue-depth {q}: device {}: {why}", d.name));
            }
            d.queue_depth = Some(q);
        }
    }
    Ok(sc)
}

/// The features of a run of `sc`: preset, era, overrides and `--policy`, checked against
/// the era (MGLRU from 6.1). Also the Python package's replay (`crate::api::replay`).
pub fn features_of(
    a: &ReplayArgs,
    sc: &Scenario,
    kernel: Option<KernelEra>,
) -> Result<crate::sim::Features, String> {
    let mut f = resolve_features(
        sc.kernel,
        kernel,
        &a.preset,
        &sc.features,
        a.features.as_deref(),
    )?;
    if let Some(p) = &a.policy {
        f.policy =
            Some(crate::mm::policy::ReclaimPolicy::parse(p).map_err(|e| format!("--policy: {e}"))?);
    }
    crate::mm::policy::check_policy_era(sc, &f)?;
    Ok(f)
}

/// Run one scenario with the options' features.
/// `built`: the scenario of `ram` when it was built already (the first size, built to
/// check the input: the trace's first pass is not run again).
fn run_one(
    a: &ReplayArgs,
    point: ReplayPoint,
    kernel: Option<KernelEra>,
    built: Option<Scenario>,
) -> Result<RunReport, String> {
    let sc = match built {
        Some(sc) => sc,
        None => build_scenario(a, point)?,
    };
    let f = features_of(a, &sc, kernel)?;
    let opts = RunOptions {
        features: f,
        check: false,
        max_steps: a.max_steps.unwrap_or(u64::MAX),
        ..RunOptions::default()
    };
    run_scenario(&sc, &opts, &mut |_| {})
}

/// The RAM of a report's machine, bytes.
fn ram_of(r: &RunReport) -> u64 {
    u64::from(r.machine.nodes) * r.machine.memory_per_node_bytes
}

/// memory.max of the cgroup the (first) replay task of a report ran in (`--memory-max`),
/// bytes.
fn memory_max_of(r: &RunReport) -> Option<u64> {
    r.replay
        .as_ref()
        .and_then(|rp| rp.tasks.first())
        .and_then(|t| t.memory_max)
}

/// What bounds the cache of a curve's runs: the machine's RAM, or the replay's memory.max
/// when the curve varies that.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CurveAxis {
    Ram,
    MemoryMax,
}

impl CurveAxis {
    /// The axis of runs `points`: memory.max when the runs differ in it.
    pub(crate) fn of(points: &[ReplayPoint]) -> CurveAxis {
        if points
            .windows(2)
            .any(|w| w[0].memory_max != w[1].memory_max)
        {
            CurveAxis::MemoryMax
        } else {
            CurveAxis::Ram
        }
    }
    /// A report's place on the axis, bytes.
    fn bytes(self, r: &RunReport) -> u64 {
        match self {
            CurveAxis::Ram => ram_of(r),
            CurveAxis::MemoryMax => memory_max_of(r).unwrap_or_else(|| ram_of(r)),
        }
    }
    /// The axis' name in tables and plots.
    fn name(self) -> &'static str {
        match self {
            CurveAxis::Ram => "RAM",
            CurveAxis::MemoryMax => "memory.max",
        }
    }
    /// The label of a report's JSON file in a curve: `512MiB` or `max64MiB`.
    fn file_label(self, r: &RunReport) -> String {
        match self {
            CurveAxis::Ram => format!("{}MiB", self.bytes(r) >> 20),
            CurveAxis::MemoryMax => format!("max{}MiB", self.bytes(r) >> 20),
        }
    }
}

/// Did the OOM killer stop task `name`? Its replay figures then cover the requests before
/// the kill only.
fn oom_killed(r: &RunReport, name: &str) -> bool {
    r.tasks.iter().any(|t| t.name == name && t.oom_killed)
}

/// Print the replay section of a report.
pub fn print_replay(r: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(rp) = &r.replay else {
        return Ok(());
    };
    let limit = memory_max_of(r)
        .map(|m| format!(", memory.max {}", crate::scenario::fmt_bytes(m)))
        .unwrap_or_default();
    let killed = |name: &str| oom_killed(r, name);
    let status = if !r.complete {
        "INCOMPLETE"
    } else if rp.tasks.iter().any(|t| killed(&t.task)) {
        "OOM-KILLED"
    } else {
        "complete"
    };
    writeln!(
        out,
        "replay     {} on {} MiB RAM{limit}, kernel {}, {status}",
        r.scenario,
        ram_of(r) >> 20,
        r.kernel,
    )?;
    for t in &rp.tasks {
        let c = &t.counters;
        if killed(&t.task) {
            let why = format!("killed {} (", t.task);
            writeln!(
                out,
                "  OOM-KILLED         after {} requests (the figures below cover those): {}",
                c.requests,
                r.oom
                    .iter()
                    .find(|m| m.contains(&why))
                    .map_or("", String::as_str)
            )?;
        }
        writeln!(out, "  trace              {} ({})", t.trace, t.format)?;
        writeln!(
            out,
            "  layout             {} file(s), {} object(s), {} pages; {}{}",
            t.files,
            t.objects,
            t.footprint_pages,
            if t.mmap {
                "mmap"
            } else if t.keep_open {
                "pread, files kept open"
            } else {
                "pread"
            },
            if t.pace { ", paced" } else { "" }
        )?;
        writeln!(
            out,
            "  requests           {} ({} writes{}), {} pages, {} bytes",
            c.requests,
            c.writes,
            if c.deletes > 0 {
                format!(", {} deletes", c.deletes)
            } else {
                String::new()
            },
            c.pages,
            c.bytes
        )?;
        writeln!(out, "  page miss ratio    {:.4}", t.page_miss_ratio)?;
        writeln!(out, "  byte miss ratio    {:.4}", t.byte_miss_ratio)?;
        writeln!(out, "  object miss ratio  {:.4}", t.request_miss_ratio)?;
        writeln!(
            out,
            "  readahead          {} pages read ahead, {} used, {} wasted",
            t.readahead_pages, c.readahead_used, t.readahead_wasted
        )?;
        writeln!(
            out,
            "  virtual time       {:.6} s",
            t.elapsed_ns as f64 / 1e9
        )?;
        if !c.windows.is_empty() {
            let w: Vec<String> = c
                .windows
                .iter()
                .step_by(c.windows.len().div_ceil(10))
                .map(|(_, m)| format!("{m:.3}"))
                .collect();
            writeln!(out, "  miss ratio / time  {}", w.join(" "))?;
        }
        if let Some(e) = &c.error {
            writeln!(out, "  ERROR              {e}")?;
        }
    }
    writeln!(
        out,
        "  page cache max     {} pages ({} MiB)",
        rp.cache_pages_max,
        rp.cache_pages_max >> 8
    )?;
    // The files' dentries and inodes, the open files' `struct file`s and the buffer heads
    // (mm::slab) at the end: memory the page cache did not have.
    let slab_pages: i64 = ["nr_slab_reclaimable", "nr_slab_unreclaimable"]
        .iter()
        .map(|k| r.vmstat.get(*k).copied().unwrap_or(0))
        .sum();
    writeln!(
        out,
        "  VFS slab at end    {} pages ({} MiB): dentries, inodes, open files, buffer heads",
        slab_pages,
        slab_pages >> 8
    )?;
    let inode_reads: u64 = rp.tasks.iter().map(|t| t.inode_table_pages_read).sum();
    let dir_reads: u64 = rp.tasks.iter().map(|t| t.dir_pages_read).sum();
    writeln!(
        out,
        "  IO pages           {} read ({} of them inode tables, {} directories), {} written",
        rp.io_pages_read, inode_reads, dir_reads, rp.io_pages_written
    )?;
    writeln!(
        out,
        "  refaults           {} ({} activated), pgactivate {}",
        rp.refaults, rp.refault_activations, rp.activations
    )?;
    // In a cgroup (`--memory-max`): its peak and how often the limit was hit.
    let own = rp.tasks.first().map(|t| t.cgroup.as_str());
    if let Some(cg) = r
        .cgroups
        .iter()
        .find(|c| Some(c.name.as_str()) == own && c.name != "/")
    {
        let pgscan = cg.stat.get("pgscan").copied().unwrap_or(0);
        if let Some(v1) = &cg.v1 {
            // cgroup v1 has no memory.peak and no memory.events.
            writeln!(
                out,
                "  cgroup {:<11} memory.max_usage_in_bytes {} MiB, memory.failcnt {}, pgscan {}",
                cg.name,
                v1.max_usage_in_bytes >> 20,
                v1.failcnt,
                pgscan
            )?;
        } else {
            writeln!(
                out,
                "  cgroup {:<11} memory.peak {} MiB, memory.events max {}, pgscan {}",
                cg.name,
                cg.peak >> 20,
                cg.events.max,
                pgscan
            )?;
        }
    }
    writeln!(
        out,
        "  host               {:.3} s, {:.0} requests/s",
        rp.host_seconds, rp.host_requests_per_s
    )?;
    Ok(())
}

fn json_path(base: &str, label: &str, many: bool) -> PathBuf {
    if !many {
        return PathBuf::from(base);
    }
    let p = Path::new(base);
    let stem = p
        .file_stem()
        .map_or("replay".into(), |s| s.to_string_lossy().to_string());
    let ext = p
        .extension()
        .map_or("json".into(), |s| s.to_string_lossy().to_string());
    p.with_file_name(format!("{stem}-{label}.{ext}"))
}

/// Sets its flag when dropped: a progress poller stops even if the work it watches panics.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Call `show` every 100 ms until `done` is set (the poller of a progress line).
fn poll_until(done: &AtomicBool, mut show: impl FnMut()) {
    while !done.load(Ordering::Relaxed) {
        show();
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Run `build` (the trace's first pass) with a spinner of the records read on a terminal.
fn reading_trace<T>(a: &ReplayArgs, build: impl FnOnce() -> T) -> T {
    if !std::io::stderr().is_terminal() {
        return build();
    }
    let spinner = crate::progress::reading_spinner();
    let done = AtomicBool::new(false);
    let base = crate::workload::replay::RECORDS_PLANNED.load(Ordering::Relaxed);
    let r = std::thread::scope(|s| {
        s.spawn(|| {
            poll_until(&done, || {
                let n = crate::workload::replay::RECORDS_PLANNED.load(Ordering::Relaxed) - base;
                spinner.set_message(format!(
                    "{}: reading the trace, {n} records",
                    a.trace.display()
                ));
                spinner.tick();
            })
        });
        let _stop = SetOnDrop(&done);
        build()
    });
    spinner.finish_and_clear();
    r
}

/// `mmsim replay`. Errors are usage errors (exit status 2).
pub fn cmd_replay(a: &ReplayArgs) -> Result<std::process::ExitCode, String> {
    let kernel = a
        .kernel
        .as_deref()
        .map(|v| KernelEra::parse(v).map_err(|e| format!("--kernel: {e}")))
        .transpose()?;
    resolve_features(
        None,
        kernel,
        &a.preset,
        &Default::default(),
        a.features.as_deref(),
    )?;
    let points = replay_points(a)?;
    // Where the results go is checked before anything runs: a curve's files are named
    // after the points, so its directory must exist; --plot's is created now.
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        if points.len() == 1 {
            crate::run::check_output_file("--json", Path::new(j))?;
        } else {
            let dir = Path::new(j).parent().filter(|d| !d.as_os_str().is_empty());
            if let Some(d) = dir.filter(|d| !d.is_dir()) {
                return Err(format!("--json {j}: no directory {}", d.display()));
            }
        }
    }
    if let Some(dir) = &a.plot {
        std::fs::create_dir_all(dir).map_err(|e| format!("--plot {}: {e}", dir.display()))?;
    }
    // Bad input (the trace, the options, a policy its era lacks) is reported before
    // anything runs.
    let first = reading_trace(a, || build_scenario(a, points[0]))?;
    features_of(a, &first, kernel)?;
    // Progress on a terminal: the requests of every size together, polled from the
    // drivers' shared count while the runs go.
    let sizes = if points.len() > 1 {
        format!("{} cache sizes", points.len())
    } else {
        "replay".to_string()
    };
    let message = format!("{}: {sizes}", a.trace.display());
    let files_per_run = first.files.len() as u64;
    let bar = std::io::stderr().is_terminal().then(|| {
        crate::progress::requests_bar(
            crate::workload::replay::ReplayDriver::planned_requests(&first) * points.len() as u64,
            &message,
        )
    });
    let first = std::sync::Mutex::new(Some(first));
    crate::swarm::cli::install_ctrlc();
    let jobs = usize::from(a.jobs).min(points.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let finished = AtomicBool::new(false);
    let results: Vec<std::sync::Mutex<Option<Result<RunReport, String>>>> =
        points.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        let _stop = SetOnDrop(&finished);
        if let Some(b) = &bar {
            let base = crate::workload::replay::REQUESTS_REPLAYED.load(Ordering::Relaxed);
            let files_base = crate::sim::SETUP_FILES_CREATED.load(Ordering::Relaxed);
            let files_total = files_per_run * points.len() as u64;
            let finished = &finished;
            s.spawn(move || {
                let mut setting_up = false;
                poll_until(finished, || {
                    let now = crate::workload::replay::REQUESTS_REPLAYED.load(Ordering::Relaxed);
                    b.set_position(now.saturating_sub(base));
                    // Before the first request: the files being laid out (a replay of
                    // millions of objects takes seconds to create them).
                    let files = crate::sim::SETUP_FILES_CREATED
                        .load(Ordering::Relaxed)
                        .saturating_sub(files_base);
                    let show = now == base && files > 0 && files < files_total;
                    if show {
                        b.set_message(format!(
                            "{}: creating the files, {files}/{files_total}",
                            a.trace.display()
                        ));
                    } else if setting_up {
                        b.set_message(message.clone());
                    }
                    setting_up = show;
                })
            });
        }
        let workers: Vec<_> = (0..jobs)
            .map(|_| {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= points.len() {
                        break;
                    }
                    let built = if i == 0 {
                        first.lock().expect("lock").take()
                    } else {
                        None
                    };
                    let r = run_one(a, points[i], kernel, built);
                    *results[i].lock().expect("lock") = Some(r);
                })
            })
            .collect();
        for w in workers {
            w.join().expect("a replay worker");
        }
        // `_stop` stops the poller now (or when a worker's panic unwinds through here).
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let axis = CurveAxis::of(&points);
    let mut reports = Vec::new();
    for r in results {
        reports.push(r.into_inner().expect("lock").expect("ran")?);
    }
    let mut out = std::io::stdout().lock();
    let to_stdout = a.json.as_deref() == Some("-");
    if !to_stdout {
        for r in &reports {
            print_replay(r, &mut out).map_err(|e| e.to_string())?;
            writeln!(out).ok();
        }
    }
    let many = reports.len() > 1;
    if let Some(j) = &a.json {
        if to_stdout {
            let v: Vec<&RunReport> = reports.iter().collect();
            let text = if many {
                serde_json::to_string_pretty(&v)
            } else {
                serde_json::to_string_pretty(&reports[0])
            }
            .map_err(|e| e.to_string())?;
            writeln!(out, "{text}").ok();
        } else {
            for r in &reports {
                let p = json_path(j, &axis.file_label(r), many);
                let text = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
                std::fs::write(&p, text).map_err(|e| format!("--json {}: {e}", p.display()))?;
            }
        }
    }
    if many && !to_stdout {
        writeln!(out, "miss-ratio curve").ok();
        writeln!(
            out,
            "  {:>14} {:>11} {:>10} {:>10} {:>10} {:>12} {:>12}",
            format!("{} MiB", axis.name()),
            "cache pages",
            "page miss",
            "byte miss",
            "obj miss",
            "IO pages",
            "req/s"
        )
        .ok();
        for r in &reports {
            let rp = r.replay.as_ref().expect("replay section");
            let t = &rp.tasks[0];
            let note = if oom_killed(r, &t.task) {
                format!("  OOM-killed after {} requests", t.counters.requests)
            } else {
                String::new()
            };
            writeln!(
                out,
                "  {:>14} {:>11} {:>10.4} {:>10.4} {:>10.4} {:>12} {:>12.0}{note}",
                axis.bytes(r) >> 20,
                rp.cache_pages_max,
                t.page_miss_ratio,
                t.byte_miss_ratio,
                t.request_miss_ratio,
                rp.io_pages_read,
                rp.host_requests_per_s
            )
            .ok();
        }
    }
    if let Some(dir) = &a.plot {
        std::fs::create_dir_all(dir).map_err(|e| format!("--plot {}: {e}", dir.display()))?;
        let mut plots = Vec::new();
        let pts =
            |f: &dyn Fn(&crate::workload::replay::ReplayTaskReport) -> f64| -> Vec<(f64, f64)> {
                reports
                    .iter()
                    .map(|r| {
                        (
                            (axis.bytes(r) >> 20) as f64,
                            f(&r.replay.as_ref().expect("replay").tasks[0]),
                        )
                    })
                    .collect()
            };
        if many {
            plots.push(crate::report::plot::Plot {
                stem: "replay-mrc".into(),
                title: "miss-ratio curve".into(),
                x_desc: format!("{} (MiB)", axis.name()),
                y_desc: "miss ratio".into(),
                lines: vec![
                    ("page".into(), pts(&|t| t.page_miss_ratio)),
                    ("byte".into(), pts(&|t| t.byte_miss_ratio)),
                    ("object".into(), pts(&|t| t.request_miss_ratio)),
                ],
                cdf: false,
                ..Default::default()
            });
        }
        plots.push(crate::report::plot::Plot {
            stem: "replay-miss-ratio-over-time".into(),
            title: "page miss ratio over the trace".into(),
            x_desc: "requests".into(),
            y_desc: "page miss ratio".into(),
            lines: reports
                .iter()
                .map(|r| {
                    let t = &r.replay.as_ref().expect("replay").tasks[0];
                    (
                        match axis {
                            CurveAxis::Ram => format!("{} MiB", axis.bytes(r) >> 20),
                            CurveAxis::MemoryMax => {
                                format!("memory.max {} MiB", axis.bytes(r) >> 20)
                            }
                        },
                        t.counters
                            .windows
                            .iter()
                            .map(|(n, m)| (*n as f64, *m))
                            .collect(),
                    )
                })
                .collect(),
            cdf: false,
            ..Default::default()
        });
        for p in &plots {
            let files = crate::report::plot::write_plot(p, dir).map_err(|e| e.0)?;
            for f in files {
                writeln!(out, "plot: {}", f.display()).ok();
            }
        }
    }
    for r in reports.iter().filter(|r| !r.complete) {
        let at = memory_max_of(r).map_or_else(
            || format!("{} MiB RAM", ram_of(r) >> 20),
            |m| format!("memory.max {}", crate::scenario::fmt_bytes(m)),
        );
        eprintln!("mmsim: replay at {at} did not complete: {:?}", r.end);
    }
    let ok = reports.iter().all(|r| {
        r.complete
            && r.oracle_violations.is_empty()
            && r.replay
                .as_ref()
                .is_some_and(|rp| rp.tasks.iter().all(|t| t.counters.error.is_none()))
    });
    Ok(if ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ram_lists() {
        assert_eq!(parse_ram_list("64MiB").unwrap(), vec![64 << 20]);
        assert_eq!(
            parse_ram_list("16MiB,32MiB").unwrap(),
            vec![16 << 20, 32 << 20]
        );
        assert_eq!(
            parse_ram_list("16MiB..64MiB").unwrap(),
            vec![16 << 20, 32 << 20, 64 << 20]
        );
        assert_eq!(
            parse_ram_list("16MiB..48MiB/3").unwrap(),
            vec![16 << 20, 32 << 20, 48 << 20]
        );
        assert!(parse_ram_list("64MiB..16MiB").is_err());
        assert!(parse_ram_list("x").is_err());
    }

    #[test]
    fn ram_outside_a_machines_bounds_is_refused_naming_the_flag() {
        for (arg, bad) in [
            ("0", "0 bytes"),
            ("12KiB", "12 KiB"),
            ("8MiB..64MiB", "8 MiB"),
            ("64MiB,32TiB", "32 TiB"),
        ] {
            let e = parse_ram_list(arg).unwrap_err();
            assert!(
                e.starts_with(&format!("--ram {arg}: {bad} is outside")),
                "{arg}: {e}"
            );
        }
        assert_eq!(parse_ram_list("16MiB").unwrap(), vec![16 << 20]);
        assert_eq!(parse_ram_list("16TiB").unwrap(), vec![16 << 40]);
    }
}
