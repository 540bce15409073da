//! `fork-snapshot`: a Redis-style background save. The parent fills a private anonymous
//! heap, then forks a child that reads the whole heap and writes it to a file (or only
//! reads it) and exits; meanwhile the parent goes on writing random pages of its heap,
//! each first write to a page the child still shares being a copy-on-write fault. Times
//! the fork itself ("fork": the page-table copy grows with the heap) and each snapshot
//! ("snapshot", fork to the child's exit as the parent sees it).

use std::cell::Cell;
use std::rc::Rc;

use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::{Footprint, ForkChild, Op, OpResult, Program};
use super::{Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    mounted, want_duration, want_size, want_str, want_u32, want_u64, Env, Scenario, ScenarioError,
    View,
};

const PAGE: u64 = 4096;
/// How often a parent without writes to do looks whether its child has exited (waitpid
/// polled), ns.
const POLL_NS: u64 = 1_000_000;

/// Parameters of the `fork-snapshot` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ForkSnapshotSpec {
    /// Bytes of private anonymous memory (the heap).
    pub size_bytes: u64,
    /// Snapshots (forks) taken, one after the other.
    pub snapshots: u32,
    /// The file each child writes the heap to (None: the child only reads it).
    pub path: Option<String>,
    /// The child reads, then writes, this much at a time, bytes.
    pub chunk_bytes: u64,
    /// Between two page writes of the parent while a child runs, ns (0: no writes).
    pub write_interval_ns: u64,
    /// Sleep between the end of a snapshot and the next fork, ns.
    pub interval_ns: u64,
    /// Seed of the parent's random page choice.
    pub seed: u64,
}

impl Params for ForkSnapshotSpec {
    fn build(&self) -> Box<dyn Program> {
        Box::new(ForkSnapshot::new(self.clone()))
    }
    fn footprint(&self, _: &Scenario) -> Footprint {
        let snapshots = u64::from(self.snapshots);
        let mut f = Footprint::mapping(self.size_bytes, 1 + 2 * snapshots);
        if self.path.is_some() {
            f.file_pages = self.size_bytes.div_ceil(PAGE);
        }
        f
    }
}

/// `program = "fork-snapshot"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "fork-snapshot",
    summary: "fill a heap, then fork children that save it while the parent writes (Redis BGSAVE)",
    doc: "A background save as Redis's BGSAVE (or any fork-based snapshot) does it: maps \
          `size` bytes of private anonymous memory and writes every page, then takes \
          `snapshots` snapshots one after the other. Each forks a child (fork(2), \
          `mm/fork.rs`: the heap's PTEs are copied write-protected, its pages shared \
          copy-on-write; the child runs on the idlest CPU, in the parent's cgroup) that \
          reads the heap `chunk` bytes at a time and writes each chunk to `path` (created \
          and truncated; fdatasync and close at the end), or only reads it without \
          `path`, and exits. While the child runs, the parent writes one random page of \
          its heap (drawn from `seed`) every `write_interval`: the first write to a page \
          the child still shares copies it (wp_page_copy; a minor fault of the parent), so \
          memory grows by up to the heap's size while a snapshot runs. Without writes the \
          parent looks for its child's exit every millisecond. After the child's exit \
          (and `interval`) the next snapshot starts; after the last, the parent unmaps \
          its heap and exits. The children are tasks of their own in the report, named \
          after the parent (`NAME.1`, `NAME.2`, …).",
    params: &[
        Param {
            key: "size",
            ty: "size (bytes)",
            default: "required",
            rules: "≥ 1 page; `ram` expressions allowed",
        },
        Param {
            key: "snapshots",
            ty: "integer",
            default: "`1`",
            rules: "1 ..= 10000",
        },
        Param {
            key: "path",
            ty: "string",
            default: "none",
            rules: "absolute, under a mounted filesystem, not the mount point itself: the \
                    file each child writes the heap to. None: the child only reads the heap",
        },
        Param {
            key: "chunk",
            ty: "size (bytes)",
            default: "`\"1MiB\"`",
            rules: "whole pages, ≥ 1 page: what the child reads, then writes, at a time",
        },
        Param {
            key: "write_interval",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "between two page writes of the parent while a child runs; `\"0s\"`: the \
                    parent writes nothing",
        },
        Param {
            key: "interval",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep between a snapshot's end and the next fork",
        },
        Param {
            key: "seed",
            ty: "integer",
            default: "`1`",
            rules: "seed of the parent's random page writes (not the scenario's `seed`)",
        },
    ],
    samples: &[
        SampleDef {
            label: "fork",
            kind: SampleKind::Time,
            doc: "one fork(2) of the parent, until it returned (copy_process and the \
                  page-table copy)",
        },
        SampleDef {
            label: "snapshot",
            kind: SampleKind::Time,
            doc: "one snapshot: from the fork until the parent saw its child's exit",
        },
        SampleDef {
            label: "save",
            kind: SampleKind::Time,
            doc: "a child's whole run (its own task's sample): reading and writing the heap",
        },
    ],
    example: r#"name = "fork-snapshot-example"
kernel = "6.18"

[machine]
cpus_per_node = 2
memory_per_node = "256MiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"

[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"

[swap]
size = "256MiB"
preset = "ssd"

[[tasks]]
name = "redis"
cpu = 0
program = "fork-snapshot"
size = "64MiB"
snapshots = 2
path = "/data/dump.rdb"
write_interval = "20us"
"#,
    parse: parse_fork_snapshot,
};

fn parse_fork_snapshot(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let ram = env.total_memory_bytes;
    let (size_bytes, size_loc) =
        task.req("size", "bytes of the heap, e.g. \"ram/2\"", |i, l| {
            want_size(i, l, Some(ram))
        })?;
    if size_bytes < PAGE {
        return Err(size_loc.err("the heap must be at least one page (4096 bytes)"));
    }
    let snapshots = match task.opt("snapshots", want_u32)? {
        None => 1,
        Some((n @ 1..=10_000, _)) => n,
        Some((n, loc)) => {
            return Err(loc.err(format!("snapshots must be 1 ..= 10000, got {n}")));
        }
    };
    let path = match task.opt("path", want_str)? {
        None => None,
        Some((p, loc)) => {
            let fs = mounted(p, &loc, env)?;
            if fs.mount == p {
                return Err(loc.err(format!(
                    "\"{p}\" is the mount point itself; name a file under it"
                )));
            }
            Some(p.to_string())
        }
    };
    let chunk_bytes = match task.opt("chunk", |i, l| want_size(i, l, Some(ram)))? {
        None => 1 << 20,
        Some((c, loc)) if c < PAGE || c % PAGE != 0 => {
            return Err(loc.err(format!(
                "the chunk must be whole pages (a multiple of 4096 bytes), got {c}"
            )));
        }
        Some((c, _)) => c,
    };
    let write_interval_ns = task
        .opt("write_interval", want_duration)?
        .map_or(0, |(v, _)| v);
    let interval_ns = task.opt("interval", want_duration)?.map_or(0, |(v, _)| v);
    let seed = task.opt("seed", want_u64)?.map_or(1, |(v, _)| v);
    Ok(ProgramSpec::new(
        PROGRAM.name,
        ForkSnapshotSpec {
            size_bytes,
            snapshots,
            path,
            chunk_bytes,
            write_interval_ns,
            interval_ns,
            seed,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Map,
    Fill,
    StartSnapshot,
    StartFork,
    Fork,
    Forked,
    Running,
    Write,
    Interval,
    Unmap,
    Done,
}

/// The parent's state.
pub struct ForkSnapshot {
    spec: ForkSnapshotSpec,
    phase: Phase,
    /// The heap's address.
    addr: u64,
    /// Snapshots started.
    taken: u32,
    /// Set by the running child when it exits (what waitpid would tell).
    child_done: Rc<Cell<bool>>,
    rng: rand_pcg::Pcg64,
}

impl ForkSnapshot {
    /// A parent as the spec says.
    pub fn new(spec: ForkSnapshotSpec) -> ForkSnapshot {
        let rng = rand_pcg::Pcg64::seed_from_u64(spec.seed);
        ForkSnapshot {
            spec,
            phase: Phase::Map,
            addr: 0,
            taken: 0,
            child_done: Rc::new(Cell::new(false)),
            rng,
        }
    }

    /// The next child, named after the snapshot's number.
    fn child(&mut self) -> ForkChild {
        self.child_done = Rc::new(Cell::new(false));
        let prog = SnapshotChild {
            addr: self.addr,
            size: self.spec.size_bytes,
            chunk: self.spec.chunk_bytes,
            path: self.spec.path.clone(),
            done: self.child_done.clone(),
            phase: ChildPhase::Start,
            off: 0,
            fd: None,
        };
        ForkChild::new(self.taken.to_string(), None, Box::new(prog))
    }
}

impl Program for ForkSnapshot {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            if matches!(self.phase, Phase::Fill | Phase::Forked) {
                self.phase = Phase::Done;
            }
        }
        match self.phase {
            Phase::Map => {
                self.phase = Phase::Fill;
                Op::Mmap {
                    path: None,
                    len: self.spec.size_bytes,
                    offset: 0,
                    prot: 3,
                    shared: false,
                }
            }
            Phase::Fill => {
                let OpResult::Addr(a) = last else {
                    self.phase = Phase::Done;
                    return Op::Exit;
                };
                self.addr = *a;
                self.phase = Phase::StartSnapshot;
                Op::Touch {
                    addr: self.addr,
                    len: self.spec.size_bytes,
                    stride: PAGE,
                    write: true,
                }
            }
            Phase::StartSnapshot => {
                self.phase = Phase::StartFork;
                Op::TimerStart("snapshot".into())
            }
            Phase::StartFork => {
                self.phase = Phase::Fork;
                Op::TimerStart("fork".into())
            }
            Phase::Fork => {
                self.taken += 1;
                self.phase = Phase::Forked;
                Op::Fork(self.child())
            }
            Phase::Forked => {
                self.phase = Phase::Running;
                Op::TimerStop("fork".into())
            }
            Phase::Running => {
                if self.child_done.get() {
                    self.phase = if self.taken >= self.spec.snapshots {
                        Phase::Unmap
                    } else {
                        Phase::Interval
                    };
                    return Op::TimerStop("snapshot".into());
                }
                self.phase = Phase::Write;
                if self.spec.write_interval_ns == 0 {
                    return Op::Sleep { ns: POLL_NS };
                }
                let pages = self.spec.size_bytes / PAGE;
                let page = self.rng.gen_range(0..pages);
                Op::Touch {
                    addr: self.addr + page * PAGE,
                    len: PAGE,
                    stride: PAGE,
                    write: true,
                }
            }
            Phase::Write => {
                self.phase = Phase::Running;
                if self.spec.write_interval_ns == 0 {
                    return self.next_op(last);
                }
                Op::Sleep {
                    ns: self.spec.write_interval_ns,
                }
            }
            Phase::Interval => {
                self.phase = Phase::StartSnapshot;
                Op::Sleep {
                    ns: self.spec.interval_ns,
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChildPhase {
    Start,
    Open,
    Read,
    Write,
    Sync,
    Close,
    Stop,
    Done,
}

/// A child: reads the heap chunk by chunk, writing each to the file; sets `done` as it
/// exits.
struct SnapshotChild {
    addr: u64,
    size: u64,
    chunk: u64,
    path: Option<String>,
    done: Rc<Cell<bool>>,
    phase: ChildPhase,
    off: u64,
    fd: Option<u32>,
}

impl Program for SnapshotChild {
    fn next_op(&mut self, last: &OpResult) -> Op {
        match self.phase {
            ChildPhase::Start => {
                self.phase = if self.path.is_some() {
                    ChildPhase::Open
                } else {
                    ChildPhase::Read
                };
                Op::TimerStart("save".into())
            }
            ChildPhase::Open => {
                self.phase = ChildPhase::Read;
                Op::Open {
                    path: self.path.clone().expect("a path").into(),
                    create: true,
                    truncate: true,
                }
            }
            ChildPhase::Read => {
                if let OpResult::Fd(fd) = last {
                    self.fd = Some(*fd);
                }
                if let OpResult::Err(_) = last {
                    self.phase = ChildPhase::Stop;
                    return self.next_op(&OpResult::None);
                }
                if self.off >= self.size {
                    self.phase = if self.fd.is_some() {
                        ChildPhase::Sync
                    } else {
                        ChildPhase::Stop
                    };
                    return self.next_op(&OpResult::None);
                }
                let len = self.chunk.min(self.size - self.off);
                let op = Op::Touch {
                    addr: self.addr + self.off,
                    len,
                    stride: PAGE,
                    write: false,
                };
                self.phase = if self.fd.is_some() {
                    ChildPhase::Write
                } else {
                    ChildPhase::Read
                };
                if self.fd.is_none() {
                    self.off += len;
                }
                op
            }
            ChildPhase::Write => {
                let len = self.chunk.min(self.size - self.off);
                self.off += len;
                self.phase = ChildPhase::Read;
                Op::Write {
                    fd: self.fd.expect("open"),
                    len,
                }
            }
            ChildPhase::Sync => {
                self.phase = ChildPhase::Close;
                Op::Fdatasync {
                    fd: self.fd.expect("open"),
                }
            }
            ChildPhase::Close => {
                self.phase = ChildPhase::Stop;
                Op::Close {
                    fd: self.fd.take().expect("open"),
                }
            }
            ChildPhase::Stop => {
                self.phase = ChildPhase::Done;
                Op::TimerStop("save".into())
            }
            ChildPhase::Done => {
                self.done.set(true); // exit: the parent's waitpid sees it
                Op::Exit
            }
        }
    }
}
