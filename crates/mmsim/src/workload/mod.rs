//! Workload programs: each is a small state machine that produces operations (syscalls,
//! sleeps, timers) one at a time. Programs never touch kernel state; the kernel executes
//! their operations (`Sim::exec_op`).
//!
//! # Adding a program
//!
//! A program is one file here and one line in [`PROGRAMS`]. The file holds, beside the
//! state machine:
//!
//! - its parameters' type (a struct implementing [`Params`]: how to build the program,
//!   and what it costs the host, for `--max-host-mem`);
//! - `pub const PROGRAM: ProgramDef`: its name, its documentation, every `[[tasks]]` key
//!   it reads with its type, default and rules ([`Param`]), the samples it records with
//!   their unit ([`SampleDef`]), a complete example scenario, and its parser, which reads
//!   the keys with the scenario reader's helpers (`crate::scenario::View`) so that errors
//!   name the file, line and field.
//!
//! The keys a task may carry are exactly the documented ones (others are rejected), and a
//! parser that reads an undocumented key fails a debug assertion. `docs/scenarios.md`'s
//! program reference and `mmsim programs` are generated from these definitions
//! ([`reference_markdown`]); the `program_docs` test fails when they drift.

pub mod anon;
pub mod bonnie;
pub mod cgroup_write;
pub mod dd;
pub mod desktop;
pub mod fork_snapshot;
pub mod memory_reclaim;
pub mod mmap_read;
pub mod nocache;
pub mod pread_stride;
pub mod read;
pub mod replay;
pub mod senpai;
pub mod sparsetruncate;

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::scenario::{want_u32, Env, FileSpec, Scenario, ScenarioError, View};

/// Every workload program, in the order the documentation lists them. One line each.
pub const PROGRAMS: &[&ProgramDef] = &[
    &dd::PROGRAM,
    &read::PROGRAM,
    &pread_stride::PROGRAM,
    &mmap_read::PROGRAM,
    &anon::PROGRAM,
    &sparsetruncate::PROGRAM,
    &bonnie::PROGRAM,
    &desktop::PROGRAM,
    &replay::PROGRAM,
    &memory_reclaim::PROGRAM,
    &senpai::PROGRAM,
    &cgroup_write::PROGRAM,
    &fork_snapshot::PROGRAM,
];

/// The `target` key of a program acting on a cgroup (`memory-reclaim`, `senpai`): a
/// declared `[[cgroups]]` name, or "/" for the root; an unknown name is an error listing
/// the declared ones.
fn target_cgroup(task: &View<'_>, env: &Env<'_>, what: &str) -> Result<String, ScenarioError> {
    let (cgroup, loc) = task.req("target", what, crate::scenario::want_str)?;
    if cgroup != "/" && !env.cgroups.iter().any(|g| g.name == cgroup) {
        let names: Vec<&str> = env.cgroups.iter().map(|g| g.name.as_str()).collect();
        return Err(loc.err(format!(
            "unknown cgroup \"{cgroup}\"; {} (\"/\" is the root cgroup)",
            if names.is_empty() {
                "no [[cgroups]] are declared".to_string()
            } else {
                format!("declared cgroups: {}", names.join(", "))
            }
        )));
    }
    Ok(cgroup.to_string())
}

/// The schedule of an agent that writes a control file (`memory-reclaim`, `cgroup-write`):
/// after `delay_ns`, the write `count` times, `interval_ns` apart, each timed under
/// `label`; the agent exits after the last write, or after one whose result says the file
/// is not there to write again.
#[derive(Clone, Debug)]
pub(crate) struct TimedWrites {
    label: &'static str,
    delay_ns: u64,
    interval_ns: u64,
    count: u32,
    written: u32,
    phase: TimedPhase,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TimedPhase {
    Delay,
    Start,
    Write,
    Stop,
    Sleep,
    Done,
}

impl TimedWrites {
    /// A schedule starting with its delay.
    pub(crate) fn new(label: &'static str, delay_ns: u64, interval_ns: u64, count: u32) -> Self {
        TimedWrites {
            label,
            delay_ns,
            interval_ns,
            count,
            written: 0,
            phase: TimedPhase::Delay,
        }
    }

    /// The agent's next op: `write()` when a write is due; `last` is the result of the
    /// previous op, and `gone(last)` after a write ends the schedule.
    pub(crate) fn next_op(
        &mut self,
        last: &OpResult,
        write: impl FnOnce() -> Op,
        gone: impl FnOnce(&OpResult) -> bool,
    ) -> Op {
        loop {
            match self.phase {
                TimedPhase::Delay => {
                    self.phase = TimedPhase::Start;
                    if self.delay_ns > 0 {
                        return Op::Sleep { ns: self.delay_ns };
                    }
                }
                TimedPhase::Start => {
                    self.phase = TimedPhase::Write;
                    return Op::TimerStart(self.label.into());
                }
                TimedPhase::Write => {
                    self.phase = TimedPhase::Stop;
                    return write();
                }
                TimedPhase::Stop => {
                    self.written += 1;
                    self.phase = if gone(last) || self.written >= self.count {
                        TimedPhase::Done
                    } else {
                        TimedPhase::Sleep
                    };
                    return Op::TimerStop(self.label.into());
                }
                TimedPhase::Sleep => {
                    self.phase = TimedPhase::Start;
                    if self.interval_ns > 0 {
                        return Op::Sleep {
                            ns: self.interval_ns,
                        };
                    }
                }
                TimedPhase::Done => return Op::Exit,
            }
        }
    }
}

/// A cgroup limit file `Op::CgroupWrite` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CgroupFile {
    /// memory.max.
    MemoryMax,
    /// memory.high.
    MemoryHigh,
    /// memory.swap.max.
    SwapMax,
    /// memory.swap.high (5.8).
    SwapHigh,
    /// memory.oom.group (4.19): 0 or 1.
    OomGroup,
    /// memory.zswap.max (5.19).
    ZswapMax,
    /// memory.zswap.writeback (6.8): 0 or 1.
    ZswapWriteback,
}

impl CgroupFile {
    /// Every file, with its name.
    pub const ALL: [(CgroupFile, &'static str); 7] = [
        (CgroupFile::MemoryMax, "memory.max"),
        (CgroupFile::MemoryHigh, "memory.high"),
        (CgroupFile::SwapMax, "memory.swap.max"),
        (CgroupFile::SwapHigh, "memory.swap.high"),
        (CgroupFile::OomGroup, "memory.oom.group"),
        (CgroupFile::ZswapMax, "memory.zswap.max"),
        (CgroupFile::ZswapWriteback, "memory.zswap.writeback"),
    ];

    /// Whether the file takes 0 or 1 rather than a size.
    pub fn is_flag(self) -> bool {
        matches!(self, CgroupFile::OomGroup | CgroupFile::ZswapWriteback)
    }
}

/// The program named `name` (the `program` key of a task).
pub fn program(name: &str) -> Option<&'static ProgramDef> {
    PROGRAMS.iter().copied().find(|p| p.name == name)
}

/// A program's parser: reads the task's keys (`View`) given what the scenario declared
/// before the tasks (`Env`).
pub(crate) type ParseFn = fn(&View<'_>, &Env<'_>) -> Result<ProgramSpec, ScenarioError>;

/// One workload program: its name, documentation, parameters, samples and parser.
pub struct ProgramDef {
    /// The `program = "…"` value.
    pub name: &'static str,
    /// One line: what the program does.
    pub summary: &'static str,
    /// Markdown paragraphs: what the program does, step by step, and what it models.
    pub doc: &'static str,
    /// Its keys in the `[[tasks]]` table, in the order the errors list them.
    pub params: &'static [Param],
    /// The samples it records (per task, by label).
    pub samples: &'static [SampleDef],
    /// A complete scenario running the program (loaded by the `program_docs` test).
    pub example: &'static str,
    /// Reads and validates the parameters.
    pub(crate) parse: ParseFn,
}

impl ProgramDef {
    /// The program's keys in the `[[tasks]]` table.
    pub fn keys(&self) -> impl Iterator<Item = &'static str> {
        self.params.iter().map(|p| p.key)
    }
}

/// One parameter of a program (a key of its `[[tasks]]` table), as documented.
pub struct Param {
    /// The key.
    pub key: &'static str,
    /// Its type and unit: `size (bytes)`, `duration`, `integer`, `boolean`, `string`.
    pub ty: &'static str,
    /// Its default (markdown), or `required`.
    pub default: &'static str,
    /// Its range, rules and meaning (markdown).
    pub rules: &'static str,
}

/// What a sample measures: the unit it is recorded in and which way is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SampleKind {
    /// A time, recorded in ns; lower is better.
    Time,
    /// A rate in the named unit (`files/s`), recorded as a whole number; higher is better.
    Rate(&'static str),
}

impl SampleKind {
    /// The unit the samples are recorded in: `ns` for times, the rate's unit otherwise.
    pub fn unit(self) -> &'static str {
        match self {
            SampleKind::Time => "ns",
            SampleKind::Rate(u) => u,
        }
    }

    /// True when a larger sample is better (rates).
    pub fn higher_is_better(self) -> bool {
        matches!(self, SampleKind::Rate(_))
    }
}

/// The unit and direction of a task's samples, as the JSON report carries them.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SampleUnit {
    /// `ns` for times, else the rate's unit (`files/s`).
    pub unit: String,
    /// True when a larger sample is better (rates).
    pub higher_is_better: bool,
}

impl SampleUnit {
    /// The unit of `label`'s samples: its declared kind, else (a label no program declares)
    /// what any program declares for it, else a time.
    pub fn of(label: &str, kind: Option<SampleKind>) -> SampleUnit {
        let kind = kind
            .or_else(|| {
                PROGRAMS
                    .iter()
                    .flat_map(|p| p.samples)
                    .find(|s| s.label == label)
                    .map(|s| s.kind)
            })
            .unwrap_or(SampleKind::Time);
        SampleUnit {
            unit: kind.unit().to_string(),
            higher_is_better: kind.higher_is_better(),
        }
    }

    /// True for times (recorded in ns).
    pub fn is_time(&self) -> bool {
        self.unit == "ns"
    }
}

/// One sample label a program records, as documented.
pub struct SampleDef {
    /// The label (`Op::TimerStart`/`TimerStop` or `TimerStopRate`).
    pub label: &'static str,
    /// Its unit and direction.
    pub kind: SampleKind,
    /// What one sample is.
    pub doc: &'static str,
}

/// The unit and direction of the samples labelled `label` of a task running `program`
/// (None when the program does not declare the label).
pub fn sample_kind(program: &str, label: &str) -> Option<SampleKind> {
    self::program(program)?
        .samples
        .iter()
        .find(|s| s.label == label)
        .map(|s| s.kind)
}

/// What a program's parameters say about the host memory a run needs
/// (`crate::run::estimate_host_memory`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// File pages the program creates (besides the scenario's `[[files]]`).
    pub file_pages: u64,
    /// Pages it maps.
    pub mapped_pages: u64,
    /// Bytes it moves (reads, writes, touches), which bounds the run's virtual time.
    pub moved_bytes: u64,
}

impl Footprint {
    /// `bytes` of files the program creates, each byte moved `times` times.
    pub fn files(bytes: u64, times: u64) -> Footprint {
        Footprint {
            file_pages: bytes.div_ceil(4096),
            mapped_pages: 0,
            moved_bytes: bytes.saturating_mul(times),
        }
    }

    /// A mapping of `bytes`, touched `passes` times.
    pub fn mapping(bytes: u64, passes: u64) -> Footprint {
        Footprint {
            file_pages: 0,
            mapped_pages: bytes.div_ceil(4096),
            moved_bytes: bytes.saturating_mul(passes),
        }
    }
}

/// A program's validated parameters: what a task runs.
pub trait Params:
    Clone + fmt::Debug + PartialEq + serde::Serialize + Send + Sync + 'static
{
    /// The program, ready to run.
    fn build(&self) -> Box<dyn Program>;

    /// What the run needs of the host for this task; by default one RAM's worth of data
    /// moved.
    fn footprint(&self, sc: &Scenario) -> Footprint {
        Footprint {
            moved_bytes: sc.total_memory_bytes(),
            ..Footprint::default()
        }
    }

    /// Files the program lays out before the run, with data on the device (the replay's).
    fn files(&self) -> Vec<FileSpec> {
        Vec::new()
    }
}

/// The object-safe side of [`Params`].
trait DynParams: fmt::Debug + Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn build(&self) -> Box<dyn Program>;
    fn footprint(&self, sc: &Scenario) -> Footprint;
    fn files(&self) -> Vec<FileSpec>;
    fn json(&self) -> serde_json::Value;
    fn same(&self, other: &dyn Any) -> bool;
}

impl<T: Params> DynParams for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn build(&self) -> Box<dyn Program> {
        Params::build(self)
    }
    fn footprint(&self, sc: &Scenario) -> Footprint {
        Params::footprint(self, sc)
    }
    fn files(&self) -> Vec<FileSpec> {
        Params::files(self)
    }
    fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
    fn same(&self, other: &dyn Any) -> bool {
        other.downcast_ref::<T>() == Some(self)
    }
}

/// A task's program with its parameters (TOML: `program = "<name>"` plus the program's
/// keys in the same `[[tasks]]` table).
#[derive(Clone)]
pub struct ProgramSpec {
    name: &'static str,
    params: Arc<dyn DynParams>,
}

impl ProgramSpec {
    /// The parameters `params` of the program `name`.
    pub fn new<T: Params>(name: &'static str, params: T) -> ProgramSpec {
        ProgramSpec {
            name,
            params: Arc::new(params),
        }
    }

    /// The program's name (`dd`, `read`, …).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The parameters, when they are a `T` (`spec.get::<dd::DdSpec>()`).
    pub fn get<T: Params>(&self) -> Option<&T> {
        self.params.as_any().downcast_ref()
    }

    /// The program, ready to run.
    pub fn build(&self) -> Box<dyn Program> {
        self.params.build()
    }

    /// What the run needs of the host for this task.
    pub fn footprint(&self, sc: &Scenario) -> Footprint {
        self.params.footprint(sc)
    }

    /// Files the program lays out before the run.
    pub fn files(&self) -> Vec<FileSpec> {
        self.params.files()
    }
}

impl fmt::Debug for ProgramSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {:?}", self.name, self.params)
    }
}

impl PartialEq for ProgramSpec {
    fn eq(&self, other: &ProgramSpec) -> bool {
        self.name == other.name && self.params.same(other.params.as_any())
    }
}

impl Eq for ProgramSpec {}

impl serde::Serialize for ProgramSpec {
    /// `{"program": "<name>", <the parameters>…}`, as the TOML task table.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v = self.params.json();
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("program".into(), self.name.into());
        }
        v.serialize(s)
    }
}

/// An errno returned to a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// No such file or directory.
    ENOENT,
    /// Bad file descriptor.
    EBADF,
    /// Out of memory.
    ENOMEM,
    /// No space left on device.
    ENOSPC,
    /// I/O error.
    EIO,
    /// File exists.
    EEXIST,
    /// Invalid argument.
    EINVAL,
    /// The task touched an address outside any mapping, or without permission (SIGSEGV).
    SIGSEGV,
    /// The task touched a file mapping beyond the end of the file (SIGBUS: filemap_fault's
    /// VM_FAULT_SIGBUS).
    SIGBUS,
    /// Is a directory.
    EISDIR,
    /// Not a directory.
    ENOTDIR,
    /// Directory not empty.
    ENOTEMPTY,
    /// Device or resource busy (rmdir of a mount point).
    EBUSY,
    /// File too large (a write ending beyond MAX_LFS_FILESIZE).
    EFBIG,
    /// Try again (a write to memory.reclaim that could not reclaim enough).
    EAGAIN,
    /// Operation not supported (an RWF_* flag the kernel or the filesystem does not know).
    EOPNOTSUPP,
}

impl Errno {
    /// The errno's name.
    pub fn name(self) -> &'static str {
        match self {
            Errno::ENOENT => "ENOENT",
            Errno::EBADF => "EBADF",
            Errno::ENOMEM => "ENOMEM",
            Errno::ENOSPC => "ENOSPC",
            Errno::EIO => "EIO",
            Errno::EEXIST => "EEXIST",
            Errno::EINVAL => "EINVAL",
            Errno::SIGSEGV => "SIGSEGV",
            Errno::SIGBUS => "SIGBUS",
            Errno::EISDIR => "EISDIR",
            Errno::ENOTDIR => "ENOTDIR",
            Errno::ENOTEMPTY => "ENOTEMPTY",
            Errno::EBUSY => "EBUSY",
            Errno::EFBIG => "EFBIG",
            Errno::EAGAIN => "EAGAIN",
            Errno::EOPNOTSUPP => "EOPNOTSUPP",
        }
    }
}

/// The RWF_* flags of preadv2(2) / pwritev2(2) that mmsim models.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rwf {
    /// RWF_DONTCACHE (v6.14): uncached buffered IO — the pages the IO brings into the page
    /// cache are dropped once read, or once written back (`mm/filemap.rs`).
    pub dontcache: bool,
}

/// The advice of posix_fadvise(2) (POSIX_FADV_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvice {
    /// POSIX_FADV_NORMAL: the device's readahead window, no random mode.
    Normal,
    /// POSIX_FADV_RANDOM: no readahead window (FMODE_RANDOM).
    Random,
    /// POSIX_FADV_SEQUENTIAL: twice the device's readahead window.
    Sequential,
    /// POSIX_FADV_WILLNEED: read the range into the page cache now.
    Willneed,
    /// POSIX_FADV_DONTNEED: start writeback of the range and drop its clean pages.
    Dontneed,
}

impl Fadvice {
    /// Every advice with its scenario name, in the order of the docs.
    pub const ALL: [(&'static str, Fadvice); 5] = [
        ("normal", Fadvice::Normal),
        ("random", Fadvice::Random),
        ("sequential", Fadvice::Sequential),
        ("willneed", Fadvice::Willneed),
        ("dontneed", Fadvice::Dontneed),
    ];
}

/// The advice of madvise(2) that mmsim models (MADV_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Madvice {
    /// MADV_DONTNEED: unmap the range (private anonymous pages are freed; the next touch
    /// finds zeroes).
    Dontneed,
    /// MADV_COLD (v5.4): deactivate the range's pages (mapped by this process only).
    Cold,
    /// MADV_PAGEOUT (v5.4): reclaim the range's pages (mapped by this process only) now.
    Pageout,
    /// MADV_FREE (v4.5): private anonymous pages become lazily freeable — clean, on the
    /// inactive file list; reclaim drops them unless written again.
    Free,
    /// MADV_NORMAL: no access hint (VM_SEQ_READ and VM_RAND_READ cleared).
    Normal,
    /// MADV_SEQUENTIAL (VM_SEQ_READ): faults read ahead a full window; references through
    /// the mapping do not count.
    Sequential,
    /// MADV_RANDOM (VM_RAND_READ): faults read no more than the page; from v6.3
    /// references through the mapping do not count either.
    Random,
    /// MADV_WILLNEED: read the range in now (file pages through readahead, swapped-out
    /// anonymous and tmpfs pages into the swap cache, v3.8).
    Willneed,
}

impl Madvice {
    /// Every advice with its scenario name.
    pub const ALL: [(&'static str, Madvice); 8] = [
        ("dontneed", Madvice::Dontneed),
        ("cold", Madvice::Cold),
        ("pageout", Madvice::Pageout),
        ("free", Madvice::Free),
        ("normal", Madvice::Normal),
        ("sequential", Madvice::Sequential),
        ("random", Madvice::Random),
        ("willneed", Madvice::Willneed),
    ];
}

/// A task's `dontcache` key (RWF_DONTCACHE for its IO), refused beside `nocache = true`.
pub(crate) fn parse_dontcache(task: &View<'_>, nocache: bool) -> Result<bool, ScenarioError> {
    match task.opt("dontcache", crate::scenario::want_bool)? {
        Some((true, loc)) if nocache => {
            Err(loc.err("`dontcache` and `nocache` are two ways to drop the data: choose one"))
        }
        d => Ok(d.is_some_and(|(b, _)| b)),
    }
}

/// A task's optional advice key (`advice` of `read`, `madvise` of `anon`): one of the
/// `names` (Fadvice::ALL, Madvice::ALL), or `"none"` (no call).
pub(crate) fn parse_advice<A: Copy>(
    task: &View<'_>,
    key: &str,
    names: &[(&'static str, A)],
) -> Result<Option<A>, ScenarioError> {
    let Some((name, loc)) = task.opt(key, crate::scenario::want_str)? else {
        return Ok(None);
    };
    if name == "none" {
        return Ok(None);
    }
    match names.iter().find(|(n, _)| *n == name) {
        Some((_, a)) => Ok(Some(*a)),
        None => {
            let all: Vec<&str> = std::iter::once("none")
                .chain(names.iter().map(|(n, _)| *n))
                .collect();
            Err(loc.err(format!(
                "unknown advice \"{name}\"; expected one of {}",
                all.join(", ")
            )))
        }
    }
}

/// The path of an [`Op::Open`]: one string that a program opening the same file over and
/// over hands out references to, carrying the host's memo of the filesystem and inode it
/// resolved to (`Sim::resolve_open_path`: what `resolve_fs` and the filesystem's names
/// gave, saving the string hashing of an open per request; nothing simulated reads it).
/// `Rc`, not `Arc`: a simulation runs on one thread, and an op per request would pay two
/// atomic counts.
#[derive(Clone)]
pub struct OpenPath(std::rc::Rc<OpenPathInner>);

struct OpenPathInner {
    /// (epoch, filesystem, inode) of the last resolution: valid while the resolving
    /// simulation's path epoch is that epoch (`OpenPath::NO_EPOCH`: none).
    memo: std::cell::Cell<(u64, u32, u32)>,
    path: Box<str>,
}

impl OpenPath {
    /// The memo's epoch before any resolution (no simulation's epoch is 0).
    pub const NO_EPOCH: u64 = 0;

    /// The filesystem and inode this path resolved to in path epoch `epoch`.
    #[inline]
    pub fn memo(&self, epoch: u64) -> Option<(usize, u32)> {
        let (e, fs, ino) = self.0.memo.get();
        (e == epoch).then_some((fs as usize, ino))
    }

    /// Note that this path resolves to `fs`, `ino` in path epoch `epoch`.
    #[inline]
    pub fn set_memo(&self, epoch: u64, fs: usize, ino: u32) {
        self.0.memo.set((epoch, fs as u32, ino));
    }
}

impl std::ops::Deref for OpenPath {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0.path
    }
}

impl From<&str> for OpenPath {
    fn from(s: &str) -> OpenPath {
        OpenPath(std::rc::Rc::new(OpenPathInner {
            memo: std::cell::Cell::new((OpenPath::NO_EPOCH, 0, 0)),
            path: s.into(),
        }))
    }
}

impl From<String> for OpenPath {
    fn from(s: String) -> OpenPath {
        s.as_str().into()
    }
}

impl std::fmt::Debug for OpenPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for OpenPath {
    fn eq(&self, other: &OpenPath) -> bool {
        **self == **other
    }
}

impl Eq for OpenPath {}

/// One operation of a program. An explicit tag byte (`repr(u8)`): the engine matches on
/// the op several times per step, and a tag is one load where the niche in a variant's
/// string is a few instructions of decoding.
#[derive(Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// open(2); `create` adds O_CREAT, `truncate` O_TRUNC.
    Open {
        /// Absolute path (shared: a program that opens the same files over and over hands
        /// out references to one string, which carries the host's memo of its file).
        path: OpenPath,
        /// O_CREAT.
        create: bool,
        /// O_TRUNC.
        truncate: bool,
    },
    /// close(2).
    Close {
        /// Descriptor.
        fd: u32,
    },
    /// write(2) of `len` bytes at the file position.
    Write {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
    },
    /// read(2) of `len` bytes at the file position.
    Read {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
    },
    /// pread(2): read `len` bytes at `pos` (file position unchanged).
    Pread {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
        /// Offset.
        pos: u64,
    },
    /// preadv2(2) of `len` bytes at `pos` (None: at the file position, which advances, as
    /// offset -1 asks) with RWF_* `flags`.
    Preadv2 {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
        /// Offset, or None for the file position.
        pos: Option<u64>,
        /// RWF_* flags.
        flags: Rwf,
    },
    /// pwritev2(2) of `len` bytes at `pos` (None: at the file position) with RWF_* `flags`.
    Pwritev2 {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
        /// Offset, or None for the file position.
        pos: Option<u64>,
        /// RWF_* flags.
        flags: Rwf,
    },
    /// pwrite(2): write `len` bytes at `pos` (file position unchanged).
    Pwrite {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
        /// Offset.
        pos: u64,
    },
    /// read(2) from /dev/zero into the user buffer (dd's input side).
    ReadZero {
        /// Bytes.
        len: u64,
    },
    /// fdatasync(2).
    Fdatasync {
        /// Descriptor.
        fd: u32,
    },
    /// unlink(2).
    Unlink {
        /// Absolute path.
        path: String,
    },
    /// Sleep for a time (user think time).
    Sleep {
        /// Nanoseconds.
        ns: u64,
    },
    /// mmap(2): map `len` bytes of a file (or anonymous memory when `path` is None).
    Mmap {
        /// File to map, or None for anonymous memory.
        path: Option<String>,
        /// Length in bytes.
        len: u64,
        /// Offset in the file, bytes (page aligned).
        offset: u64,
        /// PROT_* bits (1 read, 2 write, 4 exec).
        prot: u32,
        /// MAP_SHARED (else MAP_PRIVATE).
        shared: bool,
    },
    /// munmap(2).
    Munmap {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// mprotect(2).
    Mprotect {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// New PROT_* bits.
        prot: u32,
    },
    /// mlock(2) (`lock`) or munlock(2) of [addr, addr+len): VM_LOCKED set or cleared (a
    /// mapping the range cuts is split), their pages mlocked or munlocked (`mm::mlock`). mlock's populate is the
    /// program's own touch of the range afterwards.
    Mlock {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// mlock (else munlock).
        lock: bool,
    },
    /// madvise(2) of [addr, addr+len) (`mm::madvise`).
    Madvise {
        /// Start address (page aligned).
        addr: u64,
        /// Length in bytes (rounded up to pages).
        len: u64,
        /// The advice.
        advice: Madvice,
    },
    /// posix_fadvise(2) on an open file (`mm::fadvise`).
    Fadvise {
        /// Descriptor.
        fd: u32,
        /// Start of the range, bytes.
        offset: u64,
        /// Length of the range, bytes (0: to the end of the file).
        len: u64,
        /// The advice.
        advice: Fadvice,
    },
    /// Touch memory: access every `stride`-th byte of [addr, addr+len) (stride ≥ 1 page means
    /// one access per touched page; smaller strides add cache-hit accesses within a page),
    /// reading or writing. Executed in slices so other CPUs interleave.
    Touch {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// Distance between accesses, bytes.
        stride: u64,
        /// Write (else read).
        write: bool,
    },
    /// ftruncate(2): set the size of an open file (shrink or grow; growing makes a hole).
    Ftruncate {
        /// Descriptor.
        fd: u32,
        /// New size, bytes.
        size: u64,
    },
    /// truncate(2): set the size of the file at `path`.
    Truncate {
        /// Absolute path.
        path: String,
        /// New size, bytes.
        size: u64,
    },
    /// mkdir(2).
    Mkdir {
        /// Absolute path.
        path: String,
    },
    /// rmdir(2).
    Rmdir {
        /// Absolute path.
        path: String,
    },
    /// stat(2); the result is the size in bytes.
    Stat {
        /// Absolute path.
        path: String,
    },
    /// getdents(2) of a whole directory; the result is the entry names in readdir order.
    Readdir {
        /// Absolute path of the directory.
        path: String,
    },
    /// write(2) of `bytes` to a cgroup's memory.reclaim (cgroup v2, v5.19): proactive
    /// reclaim of that much from the cgroup. The result is the bytes written, or EAGAIN
    /// when reclaim gave up first (ENOENT before 5.19).
    MemoryReclaim {
        /// The cgroup's path below the root (`[[cgroups]]` name).
        cgroup: Arc<str>,
        /// Bytes to reclaim.
        bytes: u64,
        /// `swappiness=N` after the amount (v6.11; EINVAL before); SWAPPINESS_ANON_ONLY is
        /// `swappiness=max` (v6.16).
        swappiness: Option<u64>,
    },
    /// write(2) of `bytes` (None: "max") to one of a cgroup's limit files
    /// (`Sim::cgroup_write`). The result is the bytes written, or ENOENT for the root, an
    /// unknown cgroup or a file the kernel does not have.
    CgroupWrite {
        /// The cgroup's path below the root (`[[cgroups]]` name).
        cgroup: Arc<str>,
        /// The file written.
        file: CgroupFile,
        /// The value, bytes (None: "max").
        bytes: Option<u64>,
    },
    /// write(2) of `bytes` (None: "max") to a cgroup's memory.high: the new limit, and
    /// reclaim down to it before the write returns. The result is the bytes written, or
    /// ENOENT for the root or an unknown cgroup.
    SetMemoryHigh {
        /// The cgroup's path below the root (`[[cgroups]]` name).
        cgroup: Arc<str>,
        /// The new memory.high, bytes (None: max).
        bytes: Option<u64>,
    },
    /// read(2) of a cgroup's memory.current, memory.stat, memory.min, memory.max and
    /// memory.pressure (the files a userspace memory controller reads each period). The
    /// result is `OpResult::Cgroup`, or ENOENT for an unknown cgroup or a kernel without
    /// PSI (before 4.20).
    ReadCgroup {
        /// The cgroup's path below the root (`[[cgroups]]` name, "/" for the root).
        cgroup: Arc<str>,
    },
    /// Stop a named timer and record a rate sample under its label: `count` operations
    /// per second of the elapsed time, rounded (no cost).
    TimerStopRate {
        /// Label (as given to TimerStart).
        label: String,
        /// Operations done while the timer ran.
        count: u64,
    },
    /// fork(2): a new process running `child`, with a copy of the caller's address space
    /// (`Sim::sys_fork`: private memory shared copy-on-write). The result is
    /// `OpResult::Pid` of the child (its task id).
    Fork(ForkChild),
    /// Start a named timer (no cost).
    TimerStart(String),
    /// Stop a named timer and record the elapsed time as a sample under its label.
    TimerStop(String),
    /// Exit the task.
    Exit,
}

/// The result of the last op, handed to the program's next step. An explicit tag byte
/// (`repr(u8)`), as `Op`'s: matched on in every step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum OpResult {
    /// Nothing (first step, or ops without a value).
    #[default]
    None,
    /// A new file descriptor.
    Fd(u32),
    /// Bytes transferred.
    Bytes(u64),
    /// An address (mmap).
    Addr(u64),
    /// An error.
    Err(Errno),
    /// Directory entry names (readdir), in readdir order.
    Names(Vec<String>),
    /// What `Op::ReadCgroup` read.
    Cgroup(Box<CgroupRead>),
    /// The new process of a fork (its task id).
    Pid(u32),
}

/// What `Op::Fork` starts: the child's name, the CPU it runs on (None: the idlest, as
/// fork balancing picks one) and its program, handed over once (the op is executed once;
/// a second execution finds the program taken and fails with EAGAIN).
#[derive(Clone)]
pub struct ForkChild {
    /// The child task is named `PARENT.NAME` (the parent's task name, a dot, this).
    pub name: String,
    /// The child's CPU; None: the one `Sim::sys_fork` picks.
    pub cpu: Option<u32>,
    /// The child's program (taken by the fork).
    pub program: std::rc::Rc<std::cell::RefCell<Option<Box<dyn Program>>>>,
}

impl ForkChild {
    /// A child named `name` running `program`.
    pub fn new(name: String, cpu: Option<u32>, program: Box<dyn Program>) -> ForkChild {
        ForkChild {
            name,
            cpu,
            program: std::rc::Rc::new(std::cell::RefCell::new(Some(program))),
        }
    }
}

impl PartialEq for ForkChild {
    fn eq(&self, other: &Self) -> bool {
        std::rc::Rc::ptr_eq(&self.program, &other.program)
    }
}

impl Eq for ForkChild {}

impl fmt::Debug for ForkChild {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForkChild")
            .field("name", &self.name)
            .field("cpu", &self.cpu)
            .finish_non_exhaustive()
    }
}

/// A cgroup's files as `Op::ReadCgroup` reads them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CgroupRead {
    /// memory.current, bytes.
    pub current: u64,
    /// memory.stat file (active_file + inactive_file), bytes.
    pub file: u64,
    /// memory.stat anon (active_anon + inactive_anon), bytes.
    pub anon: u64,
    /// The anonymous memory can be swapped: the machine has swap and memory.swap.max is
    /// not 0.
    pub swappable: bool,
    /// memory.min, bytes.
    pub min: u64,
    /// memory.max, bytes (None: max).
    pub max: Option<u64>,
    /// memory.pressure `some` total, µs.
    pub memory_some_us: u64,
}

/// A workload program.
pub trait Program {
    /// The next operation, given the result of the previous one.
    fn next_op(&mut self, last: &OpResult) -> Op;
}

/// One program's reference, in markdown: its documentation, parameters, samples and
/// example (a section of `docs/scenarios.md`; `mmsim programs NAME`).
pub fn program_markdown(p: &ProgramDef) -> String {
    let mut s = format!("#### `program = \"{}\"`\n\n{}\n\n", p.name, p.doc);
    s += "| key | type, unit | default | range / rules |\n|---|---|---|---|\n";
    for q in p.params {
        s += &format!("| `{}` | {} | {} | {} |\n", q.key, q.ty, q.default, q.rules);
    }
    s += "\nSamples (the task's `samples` in the JSON report; summaries and `compare` show \
          times in s, ms or µs):\n\n| label | unit | better | one sample is |\n|---|---|---|---|\n";
    for d in p.samples {
        let better = if d.kind.higher_is_better() {
            "higher"
        } else {
            "lower"
        };
        s += &format!(
            "| `{}` | {} | {} | {} |\n",
            d.label,
            d.kind.unit(),
            better,
            d.doc
        );
    }
    s += &format!(
        "\nExample (`mmsim programs {} --example > {}.toml`, then `mmsim run {}.toml`):\n\n\
         ```toml\n{}```\n",
        p.name, p.name, p.name, p.example
    );
    s
}

/// The program reference of `docs/scenarios.md`, generated from [`PROGRAMS`]
/// (`mmsim programs --markdown`).
pub fn reference_markdown() -> String {
    let mut s = String::from("| program | what it does |\n|---|---|\n");
    for p in PROGRAMS {
        s += &format!(
            "| [`{}`](#program--{}) | {} |\n",
            p.name,
            anchor(p.name),
            p.summary
        );
    }
    for p in PROGRAMS {
        s += "\n";
        s += &program_markdown(p);
    }
    s
}

/// The GitHub anchor of a `program = "name"` heading, after `#program--`.
fn anchor(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect()
}

/// What `mmsim programs [NAME] [--example] [--markdown]` prints.
pub fn programs_command(
    name: Option<&str>,
    example: bool,
    markdown: bool,
) -> Result<String, String> {
    if markdown {
        return Ok(reference_markdown());
    }
    let Some(name) = name else {
        return Ok(programs_list());
    };
    let p = program(name).ok_or_else(|| {
        let names: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
        format!("unknown program `{name}`; programs: {}", names.join(", "))
    })?;
    Ok(if example {
        p.example.to_string()
    } else {
        program_markdown(p)
    })
}

/// The list `mmsim programs` prints: each program's name and summary.
pub fn programs_list() -> String {
    let mut s = String::new();
    for p in PROGRAMS {
        s += &format!("{:<16} {}\n", p.name, p.summary);
    }
    s += "\n`mmsim programs NAME` prints a program's parameters, samples and an example \
          scenario;\n`mmsim programs NAME --example` the example alone.\n";
    s
}

/// `passes`: an integer ≥ 1, default 1 (`read`, `anon`, `mmap-read`).
pub(crate) fn parse_passes(task: &View<'_>) -> Result<u32, ScenarioError> {
    Ok(match task.opt("passes", want_u32)? {
        Some((0, loc)) => return Err(loc.err("passes must be at least 1")),
        Some((n, _)) => n,
        None => 1,
    })
}

/// The `mlock` parameter of the mapping programs (`anon`, `mmap-read`): whether the
/// mapping is mlocked right after mmap (`mm::mlock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MlockMode {
    /// No mlock.
    Off,
    /// mlock(2): VM_LOCKED, and the whole mapping populated at once.
    On,
    /// mlock2(MLOCK_ONFAULT): VM_LOCKED, each page mlocked when it is faulted in.
    OnFault,
}

impl MlockMode {
    /// `mlock`: `true`, `false` (the default) or `"onfault"`.
    pub(crate) fn parse(task: &View<'_>) -> Result<MlockMode, ScenarioError> {
        Ok(
            match task.opt("mlock", |i, l| {
                crate::scenario::want_bool_or_word(i, l, &["onfault"])
            })? {
                None | Some((Ok(false), _)) => MlockMode::Off,
                Some((Ok(true), _)) => MlockMode::On,
                Some((Err(_onfault), _)) => MlockMode::OnFault,
            },
        )
    }

    /// The ops that follow the mmap of [addr, addr+len): mlock(2), then its populate
    /// (__mm_populate, a touch of every page: a write when `write`, FOLL_WRITE for a
    /// private writable mapping) unless `onfault`. Popped from the back.
    fn ops_after_mmap(self, addr: u64, len: u64, write: bool) -> Vec<Op> {
        let mut ops = Vec::new();
        if self == MlockMode::On {
            ops.push(Op::Touch {
                addr,
                len,
                stride: 4096,
                write,
            });
        }
        if self != MlockMode::Off {
            ops.push(Op::Mlock {
                addr,
                len,
                lock: true,
            });
        }
        ops
    }

    /// The next op after the mmap: on the call that gets the mmap's address (`last`),
    /// `addr` is set and `queued` filled with [`MlockMode::ops_after_mmap`]; `None` once
    /// they are all issued.
    pub(crate) fn next_after_mmap(
        self,
        queued: &mut Vec<Op>,
        last: &OpResult,
        addr: &mut u64,
        (len, write): (u64, bool),
    ) -> Option<Op> {
        if let OpResult::Addr(a) = last {
            *addr = *a;
            *queued = self.ops_after_mmap(*a, len, write);
        }
        queued.pop()
    }

    /// The documentation of the `mlock` parameter (`rules`: what it does in the program).
    pub(crate) const fn param(rules: &'static str) -> Param {
        Param {
            key: "mlock",
            ty: "boolean or string",
            default: "`false`",
            rules,
        }
    }
}

/// Build the program a scenario task runs.
pub fn build_program(spec: &ProgramSpec) -> Box<dyn Program> {
    spec.build()
}

#[cfg(test)]
mod docs_tests {
    //! `docs/scenarios.md` is generated from the registries and its examples work.

    use super::*;
    use crate::run::{run_scenario, RunOptions};
    use crate::scenario::parse_scenario;

    const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

    fn doc_path() -> String {
        format!("{ROOT}/docs/scenarios.md")
    }

    /// The text between `<!-- generated: WHAT … -->` and `<!-- end generated: WHAT -->`
    /// must be `want`; with MMSIM_UPDATE_DOCS=1 the file is rewritten instead.
    fn check_generated(what: &str, want: &str) {
        let path = doc_path();
        let text = std::fs::read_to_string(&path).unwrap();
        let begin = text
            .find(&format!("<!-- generated: {what} "))
            .unwrap_or_else(|| panic!("docs/scenarios.md has no `generated: {what}` marker"));
        let begin = begin + text[begin..].find("-->\n").unwrap() + 4;
        let end = text
            .find(&format!("<!-- end generated: {what} -->"))
            .expect("end marker");
        let have = &text[begin..end];
        let want = format!("\n{want}\n");
        if have != want {
            if std::env::var_os("MMSIM_UPDATE_DOCS").is_some() {
                let new = format!("{}{}{}", &text[..begin], want, &text[end..]);
                std::fs::write(&path, new).unwrap();
                return;
            }
            panic!(
                "docs/scenarios.md: the generated `{what}` section differs from the code; \
                 regenerate it with `MMSIM_UPDATE_DOCS=1 cargo test -p mmsim --lib docs_`"
            );
        }
    }

    #[test]
    fn docs_reference_every_program() {
        check_generated("programs", &reference_markdown());
    }

    #[test]
    fn docs_list_every_builtin() {
        check_generated("builtins", &crate::scenario::builtins_markdown());
    }

    /// Every program has a summary, documentation, samples and an example, and every
    /// parameter a type, a default and rules.
    #[test]
    fn docs_every_program_and_parameter_is_documented() {
        let mut names = std::collections::BTreeSet::new();
        for p in PROGRAMS {
            assert!(names.insert(p.name), "{}: registered twice", p.name);
            assert!(
                !p.summary.is_empty() && !p.doc.is_empty(),
                "{}: no doc",
                p.name
            );
            assert!(!p.samples.is_empty(), "{}: no samples documented", p.name);
            let mut keys = std::collections::BTreeSet::new();
            for q in p.params {
                assert!(keys.insert(q.key), "{}: `{}` twice", p.name, q.key);
                assert!(
                    !q.ty.is_empty() && !q.default.is_empty() && !q.rules.is_empty(),
                    "{}: parameter `{}` is not documented",
                    p.name,
                    q.key
                );
            }
            assert!(
                p.example.contains(&format!("program = \"{}\"", p.name)),
                "{}: the example does not run the program",
                p.name
            );
        }
    }

    /// The scenarios of `docs/scenarios.md`: every ```toml block that begins with `name`.
    fn doc_scenarios() -> Vec<(String, String)> {
        let text = std::fs::read_to_string(doc_path()).unwrap();
        let mut out = Vec::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("```toml\n") {
            let body = &rest[i + 8..];
            let end = body.find("```").unwrap();
            let block = &body[..end];
            let first = block
                .lines()
                .find(|l| !l.starts_with('#') && !l.trim().is_empty())
                .unwrap_or("");
            if first.starts_with("name") {
                // Paths of the repository (the replay's trace) from its root.
                let block = block.replace("trace = \"docs/", &format!("trace = \"{ROOT}/docs/"));
                let name = first.to_string();
                out.push((name, block));
            }
            rest = &body[end + 3..];
        }
        out
    }

    /// Every example scenario of the documentation loads and runs to completion, one per
    /// program at least.
    #[test]
    fn docs_every_example_loads_and_runs() {
        let examples = doc_scenarios();
        for p in PROGRAMS {
            assert!(
                examples
                    .iter()
                    .any(|(_, t)| t.contains(&format!("program = \"{}\"", p.name))),
                "docs/scenarios.md has no example running `{}`",
                p.name
            );
        }
        for (name, text) in &examples {
            let sc = parse_scenario(text, name, &[])
                .unwrap_or_else(|e| panic!("docs/scenarios.md example `{name}`: {e}"));
            if sc.total_memory_bytes() > 1 << 30 {
                continue; // the full example: loaded, not run
            }
            // The example's own era and features, as `mmsim run` resolves them.
            let features =
                crate::kernel::resolve_features(sc.kernel, None, "patched", &sc.features, None)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            let opts = RunOptions {
                features,
                ..RunOptions::default()
            };
            let r = run_scenario(&sc, &opts, &mut |_| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(r.complete, "{name}: {:?}", r.end);
            assert!(
                r.tasks.iter().all(|t| t.errors.is_empty()),
                "{name}: a task failed: {:?}",
                r.tasks.iter().map(|t| &t.errors).collect::<Vec<_>>()
            );
        }
    }

    /// Each `# studied change: X` example runs differently with X on and off.
    #[test]
    fn docs_change_examples_differ() {
        let mut seen = Vec::new();
        for (name, text) in doc_scenarios() {
            let Some(change) = text
                .lines()
                .find_map(|l| l.strip_prefix("# studied change: "))
            else {
                continue;
            };
            let sc = parse_scenario(&text, &name, &[]).unwrap();
            let run = |on: bool| {
                let f = crate::kernel::resolve_features(
                    sc.kernel,
                    None,
                    "vanilla",
                    &sc.features,
                    Some(&format!("{}{change}", if on { "+" } else { "-" })),
                )
                .unwrap();
                let opts = RunOptions {
                    features: f,
                    ..RunOptions::default()
                };
                run_scenario(&sc, &opts, &mut |_| {}).unwrap()
            };
            let (off, on) = (run(false), run(true));
            assert!(
                off.elapsed_ns != on.elapsed_ns || off.vmstat != on.vmstat,
                "{name}: {change} changes nothing in its example"
            );
            seen.push(change.to_string());
        }
        seen.sort();
        assert_eq!(
            seen,
            [
                "accessed-init",
                "batch-tlb-flush",
                "exec-protect",
                "truncate-batch-shadow"
            ]
        );
    }
}
