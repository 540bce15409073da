//! `dd`: write a file of a given size in blocks read from /dev/zero, optionally fdatasync,
//! close and delete it, repeat (seed 000's benchmark). Each iteration's elapsed time (open to
//! close, including the fdatasync when `sync` is set; not the unlink) is recorded as a sample
//! under the label "iteration".

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Footprint, Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    fmt_bytes, mounted, want_bool, want_size, want_str, want_u32, Env, FsKind, Scenario,
    ScenarioError, View, GIB, MIB,
};

/// Parameters of the `dd` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DdSpec {
    /// Absolute path of the file, under a mounted filesystem.
    pub path: String,
    /// File size in bytes (≥ 1).
    pub size_bytes: u64,
    /// Size of each write in bytes (1 ..= 1 GiB).
    pub block_size_bytes: u64,
    /// How many times the file is written and deleted (≥ 1).
    pub iterations: u32,
    /// `fdatasync` before close (conv=fdatasync).
    pub sync: bool,
    /// Drop the written data from the page cache as it goes (oflag=nocache:
    /// POSIX_FADV_DONTNEED, `workload::nocache`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nocache: bool,
    /// Write with pwritev2(RWF_DONTCACHE) (v6.14: uncached buffered IO, fio's
    /// `uncached=1`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dontcache: bool,
}

impl Params for DdSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Dd::new(self.clone()))
    }
    fn footprint(&self, _: &Scenario) -> Footprint {
        Footprint::files(self.size_bytes, u64::from(self.iterations))
    }
}

/// `program = "dd"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "dd",
    summary: "write a file sequentially in blocks, then delete it, N times (seed 000)",
    doc: "Writes `path` sequentially with `block_size`-byte writes (the data read from \
          `/dev/zero` first, as `dd if=/dev/zero` does) until it holds `size` bytes, \
          optionally `fdatasync`s, closes and deletes it; `iterations` times. This is the \
          benchmark of seed 000 (`accessed-init`): a file of RAM/10, to stay clear of dirty \
          page balancing, written with a large block size.",
    params: &[
        Param {
            key: "path",
            ty: "string",
            default: "required",
            rules: "absolute, under a mounted filesystem, not the mount point itself",
        },
        Param {
            key: "size",
            ty: "size (bytes)",
            default: "required",
            rules: "≥ 1 byte; on a `blockfs` ≤ the device's size; on a `tmpfs` ≤ its `size` (half of RAM by default)",
        },
        Param {
            key: "block_size",
            ty: "size (bytes)",
            default: "`\"1MiB\"`",
            rules: "1 byte ..= 1 GiB: the size of each write",
        },
        Param {
            key: "iterations",
            ty: "integer",
            default: "`1`",
            rules: "≥ 1",
        },
        Param {
            key: "sync",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: `fdatasync` before close (`conv=fdatasync`)",
        },
        Param {
            key: "nocache",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: drop the written data from the page cache as GNU dd's `oflag=nocache` does — `posix_fadvise(POSIX_FADV_DONTNEED)` of each 128 KiB written (which starts their writeback; pages still dirty or under writeback stay, deactivated), and of the rest of the file at the end, after the `fdatasync` when `sync` is set. Ignored on tmpfs (the kernel ignores the advice there)",
        },
        Param {
            key: "dontcache",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: each write is `pwritev2(RWF_DONTCACHE)` (6.14, `rwf-dontcache`; fio's `uncached=1`): uncached buffered IO — the write starts the writeback of what it wrote, and the pages it created leave the page cache when that writeback ends (pages already cached stay). Not with `nocache`. EOPNOTSUPP before 6.14 and on tmpfs: the task stops at its first write",
        },
    ],
    samples: &[SampleDef {
        label: "iteration",
        kind: SampleKind::Time,
        doc: "one iteration: open to close, the `fdatasync` included, not the unlink",
    }],
    example: r#"name = "dd-example"
kernel = "3.15"

[machine]
cpus_per_node = 2
memory_per_node = "256MiB"

[[filesystems]]
mount = "/tmp"
type = "tmpfs"

[[tasks]]
name = "dd"
program = "dd"
path = "/tmp/ddfile"
size = "ram/10"
block_size = "1MiB"
iterations = 3
"#,
    parse: parse_dd,
};

fn parse_dd(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let (path, path_loc) = task.req("path", "absolute path of the file", want_str)?;
    let fs = mounted(path, &path_loc, env)?;
    if fs.mount == path {
        return Err(path_loc.err(format!(
            "\"{path}\" is the mount point itself; name a file under it"
        )));
    }
    let ram = env.total_memory_bytes;
    let (size_bytes, size_loc) = task.req("size", "file size, e.g. \"ram/10\"", |i, l| {
        want_size(i, l, Some(ram))
    })?;
    if size_bytes == 0 {
        return Err(size_loc.err("the file size must be at least 1 byte"));
    }
    match fs.kind {
        FsKind::Blockfs => {
            let dev = fs
                .device
                .as_deref()
                .and_then(|d| env.devices.iter().find(|x| x.name == d));
            if let Some(dev) = dev {
                if size_bytes > dev.size_bytes {
                    return Err(size_loc.err(format!(
                        "file larger than the device: {} > {} ({} on {})",
                        fmt_bytes(size_bytes),
                        fmt_bytes(dev.size_bytes),
                        dev.name,
                        fs.mount
                    )));
                }
            }
        }
        FsKind::Tmpfs => {
            let max = fs.size_bytes.unwrap_or(ram);
            if size_bytes > max {
                return Err(size_loc.err(format!(
                    "file larger than the tmpfs at {}: {} > {} (its `size`; half of RAM by \
                     default)",
                    fs.mount,
                    fmt_bytes(size_bytes),
                    fmt_bytes(max)
                )));
            }
        }
    }
    let block_size_bytes = match task.opt("block_size", |i, l| want_size(i, l, Some(ram)))? {
        Some((bs, loc)) => {
            if bs == 0 || bs > GIB {
                return Err(loc.err(format!(
                    "block size must be between 1 byte and 1 GiB, got {}",
                    fmt_bytes(bs)
                )));
            }
            bs
        }
        None => MIB,
    };
    let iterations = match task.opt("iterations", want_u32)? {
        Some((0, loc)) => return Err(loc.err("iterations must be at least 1")),
        Some((n, _)) => n,
        None => 1,
    };
    let sync = task.opt("sync", want_bool)?.is_some_and(|(b, _)| b);
    let nocache = task.opt("nocache", want_bool)?.is_some_and(|(b, _)| b);
    let dontcache = super::parse_dontcache(task, nocache)?;
    Ok(ProgramSpec::new(
        PROGRAM.name,
        DdSpec {
            path: path.to_string(),
            size_bytes,
            block_size_bytes,
            iterations,
            sync,
            nocache,
            dontcache,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Open,
    ReadZero,
    Write,
    Sync,
    DropRest,
    Close,
    Unlink,
    Stop,
    Done,
}

/// The dd program state.
pub struct Dd {
    spec: DdSpec,
    phase: Phase,
    iteration: u32,
    written: u64,
    fd: u32,
    drop_behind: super::nocache::DropBehind,
}

impl Dd {
    /// A dd run as the spec says.
    pub fn new(spec: DdSpec) -> Dd {
        Dd {
            spec,
            phase: Phase::Start,
            iteration: 0,
            written: 0,
            fd: 0,
            drop_behind: Default::default(),
        }
    }
    /// The phase after the data is written (and synced): the rest dropped, or close.
    fn after_sync(&self) -> Phase {
        if self.spec.nocache {
            Phase::DropRest
        } else {
            Phase::Close
        }
    }
    fn block(&self) -> u64 {
        self.spec
            .block_size_bytes
            .min(self.spec.size_bytes - self.written)
    }
}

impl Program for Dd {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            // dd reports the error and gives up.
            self.phase = Phase::Done;
            return Op::Exit;
        }
        match self.phase {
            Phase::Start => {
                self.phase = Phase::Open;
                self.written = 0;
                Op::TimerStart("iteration".into())
            }
            Phase::Open => {
                self.phase = Phase::ReadZero;
                Op::Open {
                    path: self.spec.path.as_str().into(),
                    create: true,
                    truncate: true,
                }
            }
            Phase::ReadZero => {
                if let OpResult::Fd(fd) = last {
                    self.fd = *fd;
                }
                if self.spec.nocache {
                    // oflag=nocache: the whole granules written so far, after each write.
                    if let Some(op) = self.drop_behind.after(self.fd, self.written) {
                        return op;
                    }
                }
                if self.written >= self.spec.size_bytes {
                    self.phase = if self.spec.sync {
                        Phase::Sync
                    } else {
                        self.after_sync()
                    };
                    return self.next_op(&OpResult::None);
                }
                self.phase = Phase::Write;
                Op::ReadZero { len: self.block() }
            }
            Phase::Write => {
                let len = self.block();
                self.written += len;
                self.phase = Phase::ReadZero;
                if self.spec.dontcache {
                    Op::Pwritev2 {
                        fd: self.fd,
                        len,
                        pos: None,
                        flags: super::Rwf { dontcache: true },
                    }
                } else {
                    Op::Write { fd: self.fd, len }
                }
            }
            Phase::Sync => {
                self.phase = self.after_sync();
                Op::Fdatasync { fd: self.fd }
            }
            Phase::DropRest => {
                self.phase = Phase::Close;
                self.drop_behind.at_eof(self.fd)
            }
            Phase::Close => {
                self.phase = Phase::Stop;
                Op::Close { fd: self.fd }
            }
            Phase::Stop => {
                // dd's elapsed ends when it exits (after close); the file is deleted
                // afterwards, outside the timed region, as mmtests does.
                self.phase = Phase::Unlink;
                Op::TimerStop("iteration".into())
            }
            Phase::Unlink => {
                self.iteration += 1;
                self.phase = if self.iteration >= self.spec.iterations {
                    Phase::Done
                } else {
                    Phase::Start
                };
                Op::Unlink {
                    path: self.spec.path.clone(),
                }
            }
            Phase::Done => Op::Exit,
        }
    }
}
