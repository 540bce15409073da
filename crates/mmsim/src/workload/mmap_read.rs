//! `mmap-read`: map an existing file read-only (MAP_PRIVATE, PROT_READ, plus PROT_EXEC for
//! executable text) and read it through the mapping every `stride` bytes, `passes` times
//! with `think` between passes, then unmap it. vm-scalability's lru-file-mmap-read reader
//! is one pass with an 8-byte stride. Each pass is timed under the label "pass".

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Footprint, MlockMode, Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    check_abs_path, want_bool, want_duration, want_size, want_str, Env, Scenario, ScenarioError,
    View, PAGE_SIZE,
};

/// Parameters of the `mmap-read` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MmapReadSpec {
    /// Absolute path of an existing file (see `[[files]]`).
    pub path: String,
    /// The file's size (from `[[files]]`): the mapping's length.
    pub size_bytes: u64,
    /// Passes over the mapping (≥ 1).
    pub passes: u32,
    /// Distance between reads in bytes (8 = every word, vm-scalability's reader).
    pub stride_bytes: u64,
    /// PROT_EXEC mapping (executable text).
    pub exec: bool,
    /// Sleep between passes, ns.
    pub think_ns: u64,
    /// mlock(2) the mapping right after mmap.
    pub mlock: MlockMode,
    /// madvise(2) of the whole mapping after each pass but the last (None: no call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub madvise: Option<super::Madvice>,
    /// madvise(2) of the whole mapping right after mmap (None: no call): the access
    /// pattern hint (MADV_SEQUENTIAL, MADV_RANDOM, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access: Option<super::Madvice>,
}

impl Params for MmapReadSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(MmapRead::new(self.clone()))
    }
    fn footprint(&self, _: &Scenario) -> Footprint {
        Footprint::mapping(self.size_bytes, u64::from(self.passes))
    }
}

/// `program = "mmap-read"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "mmap-read",
    summary: "map a file and read it through the mapping, several passes",
    doc: "Maps the whole of `path` (a `[[files]]` entry) `MAP_PRIVATE`, `PROT_READ` (plus \
          `PROT_EXEC` with `exec = true`, as the loader maps a program's text), reads one \
          word every `stride` bytes through the mapping, `passes` times with `think` between \
          passes, then unmaps it and exits. Page faults bring the file in (`filemap_fault`, \
          with read-around); the pages are mapped, so reclaim must unmap them (rmap, TLB \
          flushes) and a referenced mapped page gets a second trip around the inactive list. \
          vm-scalability's lru-file-mmap-read reader is one pass with `stride = 8`; \
          `fileserver-hot10`'s applications are `exec = true` mappings re-read at user pace.",
    params: &[
        Param {
            key: "path",
            ty: "string",
            default: "required",
            rules: "absolute; a `[[files]]` entry, not empty: the whole file is mapped",
        },
        Param {
            key: "passes",
            ty: "integer",
            default: "`1`",
            rules: "≥ 1",
        },
        Param {
            key: "stride",
            ty: "size (bytes)",
            default: "`\"4KiB\"`",
            rules: "≥ 1 byte: the distance between reads (8 reads every word; a page or more \
                    reads one word per page)",
        },
        Param {
            key: "exec",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: a `PROT_EXEC` mapping (executable text, `VM_EXEC`)",
        },
        Param {
            key: "think",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep between passes",
        },
        MlockMode::param(
            "`true`: mlock(2) the mapping right after mmap — VM_LOCKED, then the whole \
             file read in through the mapping at once (mlock's populate, before the first \
             pass); its pages are mlocked, on the unevictable list and never reclaimed \
             until the unmap munlocks them (a page another task also maps locked stays \
             locked). `\"onfault\"`: mlock2(MLOCK_ONFAULT), each page mlocked when a pass \
             faults it in. See `mm/mlock.rs`",
        ),
        Param {
            key: "madvise",
            ty: "string",
            default: "none",
            rules: "madvise(2) of the whole mapping after each pass but the last, before the \
                    `think` sleep: `\"none\"`, `\"dontneed\"` (unmapped; the pages stay in the \
                    page cache and the next pass maps them again with minor faults), \
                    `\"cold\"` (MADV_COLD, 5.4: deactivated), `\"pageout\"` (MADV_PAGEOUT, \
                    5.4: dropped from the page cache now, with shadow entries, so the next \
                    pass refaults them), `\"willneed\"` (MADV_WILLNEED: read in through \
                    readahead, at most max(io_pages, the window) pages from 4.10), or one \
                    of `access`'s hints; `\"free\"` is EINVAL on a file mapping and stops \
                    the task. Pages another task maps too are left alone by `cold` and \
                    `pageout`. See `mm/madvise.rs`",
        },
        Param {
            key: "access",
            ty: "string",
            default: "none",
            rules: "madvise(2) of the whole mapping right after mmap, as databases do with \
                    their mapped files: `\"none\"`, `\"normal\"`, `\"sequential\"` \
                    (MADV_SEQUENTIAL: a fault reads the file's whole readahead window ahead; \
                    references through the mapping do not count for reclaim), `\"random\"` \
                    (MADV_RANDOM: a fault reads just its page; from 6.3 references through \
                    the mapping do not count either, `vma-has-recency`), `\"willneed\"` \
                    (MADV_WILLNEED: read ahead now). Any other advice of `madvise` is \
                    accepted too",
        },
    ],
    samples: &[SampleDef {
        label: "pass",
        kind: SampleKind::Time,
        doc: "one pass over the whole mapping",
    }],
    example: r#"name = "mmap-read-example"
kernel = "4.2"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"

[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"

[[files]]
replicas = "cpus"
path = "/data/file{i}"
size = "ram*2/{n}"
data = false

[[tasks]]
replicas = "cpus"
name = "reader"
program = "mmap-read"
path = "/data/file{i}"
stride = 8
"#,
    parse: parse_mmap_read,
};

fn parse_mmap_read(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let (path, path_loc) = task.req("path", "absolute path of an existing file", want_str)?;
    check_abs_path(path).map_err(|why| path_loc.err(why))?;
    let Some(file) = env.files.iter().find(|f| *f.path == *path) else {
        return Err(path_loc.err(format!(
            "\"{path}\" is not a file of the scenario; declare it in [[files]]"
        )));
    };
    if file.size_bytes == 0 {
        return Err(path_loc.err(format!("\"{path}\" is empty: nothing to map")));
    }
    let size_bytes = file.size_bytes;
    let passes = super::parse_passes(task)?;
    let stride_bytes = match task.opt("stride", |i, l| want_size(i, l, None))? {
        Some((0, loc)) => return Err(loc.err("the stride must be at least 1 byte")),
        Some((s, _)) => s,
        None => PAGE_SIZE,
    };
    let exec = task.opt("exec", want_bool)?.is_some_and(|(b, _)| b);
    let think_ns = task.opt("think", want_duration)?.map_or(0, |(v, _)| v);
    let mlock = MlockMode::parse(task)?;
    let madvise = super::parse_advice(task, "madvise", &super::Madvice::ALL)?;
    let access = super::parse_advice(task, "access", &super::Madvice::ALL)?;
    Ok(ProgramSpec::new(
        PROGRAM.name,
        MmapReadSpec {
            path: path.to_string(),
            size_bytes,
            passes,
            stride_bytes,
            exec,
            think_ns,
            mlock,
            madvise,
            access,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Map,
    Access,
    AfterAccess,
    Mlock,
    StartPass,
    Touch,
    StopPass,
    Advise,
    Think,
    Unmap,
    Done,
}

/// The mmap-read program state.
pub struct MmapRead {
    spec: MmapReadSpec,
    phase: Phase,
    addr: u64,
    pass: u32,
    /// The mlock and populate ops after the mmap, popped from the back.
    queued: Vec<Op>,
}

impl MmapRead {
    /// A reader as the spec says.
    pub fn new(spec: MmapReadSpec) -> MmapRead {
        MmapRead {
            spec,
            phase: Phase::Map,
            addr: 0,
            pass: 0,
            queued: Vec::new(),
        }
    }
}

impl Program for MmapRead {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            self.phase = Phase::Done;
        }
        match self.phase {
            Phase::Map => {
                self.phase = Phase::Access;
                Op::Mmap {
                    path: Some(self.spec.path.clone()),
                    len: self.spec.size_bytes,
                    offset: 0,
                    prot: if self.spec.exec { 5 } else { 1 },
                    shared: false,
                }
            }
            Phase::Access => {
                if let OpResult::Addr(a) = last {
                    self.addr = *a;
                }
                match self.spec.access {
                    Some(advice) => {
                        self.phase = Phase::AfterAccess;
                        Op::Madvise {
                            addr: self.addr,
                            len: self.spec.size_bytes,
                            advice,
                        }
                    }
                    None => {
                        self.phase = Phase::AfterAccess;
                        self.next_op(last)
                    }
                }
            }
            Phase::AfterAccess => {
                // The mlock and the first pass start from the mapping's address.
                self.phase = if self.spec.mlock == MlockMode::Off {
                    Phase::StartPass
                } else {
                    Phase::Mlock
                };
                self.next_op(&OpResult::Addr(self.addr))
            }
            Phase::Mlock => {
                let (mode, shape) = (self.spec.mlock, (self.spec.size_bytes, false));
                match mode.next_after_mmap(&mut self.queued, last, &mut self.addr, shape) {
                    Some(op) => op,
                    None => {
                        self.phase = Phase::StartPass;
                        self.next_op(last)
                    }
                }
            }
            Phase::StartPass => {
                if let OpResult::Addr(a) = last {
                    self.addr = *a;
                }
                self.phase = Phase::Touch;
                Op::TimerStart("pass".into())
            }
            Phase::Touch => {
                self.phase = Phase::StopPass;
                Op::Touch {
                    addr: self.addr,
                    len: self.spec.size_bytes,
                    stride: self.spec.stride_bytes,
                    write: false,
                }
            }
            Phase::StopPass => {
                self.pass += 1;
                self.phase = if self.pass >= self.spec.passes {
                    Phase::Unmap
                } else if self.spec.madvise.is_some() {
                    Phase::Advise
                } else {
                    Phase::Think
                };
                Op::TimerStop("pass".into())
            }
            Phase::Advise => {
                self.phase = Phase::Think;
                Op::Madvise {
                    addr: self.addr,
                    len: self.spec.size_bytes,
                    advice: self.spec.madvise.expect("the advice"),
                }
            }
            Phase::Think => {
                self.phase = Phase::StartPass;
                Op::Sleep {
                    ns: self.spec.think_ns,
                }
            }
            Phase::Unmap => {
                self.phase = Phase::Done;
                Op::Munmap {
                    addr: self.addr,
                    len: self.spec.size_bytes,
                }
            }
            Phase::Done => Op::Exit,
        }
    }
}
