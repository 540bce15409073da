//! `read`: open an existing file and read it sequentially in blocks (pread), `passes` times,
//! sleeping `think` between passes. Each pass is timed under the label "pass".

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Footprint, Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    check_abs_path, fmt_bytes, want_bool, want_duration, want_size, want_str, want_u32, Env,
    Scenario, ScenarioError, View, GIB,
};

/// Parameters of the `read` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadSpec {
    /// Absolute path of an existing file (see `[[files]]`).
    pub path: String,
    /// Size of each read in bytes (1 ..= 1 GiB).
    pub block_size_bytes: u64,
    /// Passes over the whole file (≥ 1).
    pub passes: u32,
    /// Sleep between passes, ns.
    pub think_ns: u64,
    /// posix_fadvise of the whole file at the start of each pass (None: no call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<super::Fadvice>,
    /// Drop the data read from the page cache as it goes (iflag=nocache,
    /// `workload::nocache`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub nocache: bool,
    /// Read with preadv2(RWF_DONTCACHE) (v6.14: uncached buffered IO, fio's `uncached=1`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dontcache: bool,
}

impl Params for ReadSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Read::new(self.clone()))
    }
    fn footprint(&self, sc: &Scenario) -> Footprint {
        let size = sc
            .files
            .iter()
            .find(|f| *f.path == *self.path)
            .map_or(0, |f| f.size_bytes);
        Footprint {
            moved_bytes: size.saturating_mul(u64::from(self.passes)),
            ..Footprint::default()
        }
    }
}

/// `program = "read"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "read",
    summary: "read an existing file sequentially in blocks, several passes",
    doc: "Opens `path` (a `[[files]]` entry) and reads it from start to end with \
          `block_size`-byte `pread`s (sequential, so readahead grows its window), `passes` \
          times, sleeping `think` between passes, then exits. A file larger than RAM read \
          twice streams through the page cache: kswapd reclaims the first pages while the \
          last are read, and the second pass refaults them (`workingset_refault_file`).",
    params: &[
        Param {
            key: "path",
            ty: "string",
            default: "required",
            rules: "absolute; a `[[files]]` entry",
        },
        Param {
            key: "block_size",
            ty: "size (bytes)",
            default: "`\"128KiB\"`",
            rules: "1 byte ..= 1 GiB: the size of each `pread`",
        },
        Param {
            key: "passes",
            ty: "integer",
            default: "`1`",
            rules: "≥ 1",
        },
        Param {
            key: "think",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep between passes (user think time)",
        },
        Param {
            key: "advice",
            ty: "string",
            default: "none",
            rules: "`posix_fadvise` of the whole file at the start of each pass: `\"none\"` (no call), `\"normal\"`, `\"sequential\"` (twice the device's readahead window), `\"random\"` (no readahead window: a miss reads just the block), `\"willneed\"` (read the file in now, up to the device's largest request or the window), `\"dontneed\"` (drop its clean, unmapped pages: a cold-cache pass, as fio's `invalidate=1`)",
        },
        Param {
            key: "nocache",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: drop the data read from the page cache as GNU dd's `iflag=nocache` does — `POSIX_FADV_DONTNEED` of each 128 KiB read, and of the rest at the end of each pass",
        },
        Param {
            key: "dontcache",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: each read is `preadv2(RWF_DONTCACHE)` (6.14, `rwf-dontcache`; fio's `uncached=1`): uncached buffered IO — the pages the read (and its readahead) brings in are PG_dropbehind and leave the page cache, without a shadow entry, once a read has copied them; pages already cached stay. Not with `nocache`. EOPNOTSUPP before 6.14 and on tmpfs: the task stops at its first read",
        },
    ],
    samples: &[SampleDef {
        label: "pass",
        kind: SampleKind::Time,
        doc: "one pass over the whole file",
    }],
    example: r#"name = "read-example"
kernel = "4.2"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[[devices]]
name = "sda"
preset = "nvme"
size = "1GiB"

[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"

[[files]]
path = "/data/stream"
size = "ram*2"
data = true

[[tasks]]
name = "reader"
program = "read"
path = "/data/stream"
block_size = "1MiB"
passes = 2
think = "10ms"
"#,
    parse: parse_read,
};

fn parse_read(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let (path, path_loc) = task.req("path", "absolute path of an existing file", want_str)?;
    check_abs_path(path).map_err(|why| path_loc.err(why))?;
    if !env.files.iter().any(|f| *f.path == *path) {
        let names: Vec<&str> = env.files.iter().map(|f| &*f.path).collect();
        return Err(path_loc.err(format!(
            "\"{path}\" is not a file of the scenario; declare it in [[files]] (files: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    }
    let ram = env.total_memory_bytes;
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
        None => 128 << 10,
    };
    let passes = match task.opt("passes", want_u32)? {
        Some((0, loc)) => return Err(loc.err("passes must be at least 1")),
        Some((n, _)) => n,
        None => 1,
    };
    let think_ns = task.opt("think", want_duration)?.map_or(0, |(v, _)| v);
    let advice = super::parse_advice(task, "advice", &super::Fadvice::ALL)?;
    let nocache = task.opt("nocache", want_bool)?.is_some_and(|(b, _)| b);
    let dontcache = super::parse_dontcache(task, nocache)?;
    Ok(ProgramSpec::new(
        PROGRAM.name,
        ReadSpec {
            path: path.to_string(),
            block_size_bytes,
            passes,
            think_ns,
            advice,
            nocache,
            dontcache,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Open,
    StartPass,
    Advise,
    Reading,
    EndPass,
    Think,
    Done,
}

/// The read program state.
pub struct Read {
    spec: ReadSpec,
    phase: Phase,
    fd: u32,
    pass: u32,
    pos: u64,
    drop_behind: super::nocache::DropBehind,
}

impl Read {
    /// A reader as the spec says.
    pub fn new(spec: ReadSpec) -> Read {
        Read {
            spec,
            phase: Phase::Open,
            fd: 0,
            pass: 0,
            pos: 0,
            drop_behind: Default::default(),
        }
    }
    fn pread(&self) -> Op {
        if self.spec.dontcache {
            return Op::Preadv2 {
                fd: self.fd,
                len: self.spec.block_size_bytes,
                pos: Some(self.pos),
                flags: super::Rwf { dontcache: true },
            };
        }
        Op::Pread {
            fd: self.fd,
            len: self.spec.block_size_bytes,
            pos: self.pos,
        }
    }
}

impl Program for Read {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            self.phase = Phase::Done;
        }
        match self.phase {
            Phase::Open => {
                self.phase = Phase::StartPass;
                Op::Open {
                    path: self.spec.path.as_str().into(),
                    create: false,
                    truncate: false,
                }
            }
            Phase::StartPass => {
                if let OpResult::Fd(fd) = last {
                    self.fd = *fd;
                }
                self.pos = 0;
                self.phase = Phase::Advise;
                Op::TimerStart("pass".into())
            }
            Phase::Advise => {
                self.phase = Phase::Reading;
                match self.spec.advice {
                    Some(advice) => Op::Fadvise {
                        fd: self.fd,
                        offset: 0,
                        len: 0,
                        advice,
                    },
                    None => self.pread(),
                }
            }
            Phase::Reading => match last {
                OpResult::Bytes(0) => {
                    self.phase = Phase::EndPass;
                    if self.spec.nocache {
                        return self.drop_behind.at_eof(self.fd);
                    }
                    self.next_op(&OpResult::None)
                }
                OpResult::Bytes(n) => {
                    self.pos += n;
                    if self.spec.nocache {
                        if let Some(op) = self.drop_behind.after(self.fd, self.pos) {
                            return op;
                        }
                    }
                    self.pread()
                }
                _ => self.pread(),
            },
            Phase::EndPass => {
                self.pass += 1;
                self.phase = if self.pass >= self.spec.passes {
                    Phase::Done
                } else {
                    Phase::Think
                };
                Op::TimerStop("pass".into())
            }
            Phase::Think => {
                self.phase = Phase::StartPass;
                if self.spec.think_ns > 0 {
                    Op::Sleep {
                        ns: self.spec.think_ns,
                    }
                } else {
                    Op::TimerStart("think".into())
                }
            }
            Phase::Done => Op::Exit,
        }
    }
}
