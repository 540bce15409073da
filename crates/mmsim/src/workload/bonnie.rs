//! `bonnie`: bonnie++'s file creation tests (seed 003's second benchmark).
//!
//! Each iteration runs two tests on `files` files in one directory:
//! - **SeqCreate**: create the files in order (open O_CREAT, write `file_size` bytes in
//!   `block_size` writes, close); read them — readdir, then for each name in readdir order
//!   stat it and read its data; delete them in readdir order.
//! - **RandCreate**: the same with random names, created in a random order; stat + read in
//!   another random order; delete in another random order. The orders come from a PCG-64
//!   generator (`rand_pcg::Pcg64`) seeded with the scenario's `seed`, so a run is
//!   reproducible.
//!
//! Each phase is timed and recorded as a rate sample, in files per second (higher is
//! better), under the labels "SeqCreate ops" (creates), "SeqCreate read", "SeqCreate del",
//! "RandCreate ops", "RandCreate read", "RandCreate del" — one sample per iteration, as
//! mmtests reports them. A failing operation ends the program (the errno is counted).

use std::collections::VecDeque;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_pcg::Pcg64;

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Footprint, Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    capacity_loc, fmt_bytes, fs_capacity, want_size, want_u32, want_u64, want_work_dir, Env,
    Scenario, ScenarioError, View, GIB,
};

/// Parameters of the `bonnie` program (bonnie++'s file creation tests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BonnieSpec {
    /// Directory holding the files; the program creates it unless it is the mount point.
    pub path: String,
    /// The program must create `path` (false when it is the mount point).
    pub make_path: bool,
    /// Files per test.
    pub files: u64,
    /// Bytes written to (and read from) each file.
    pub file_size_bytes: u64,
    /// Size of each write and read, bytes.
    pub block_size_bytes: u64,
    /// Iterations of the SeqCreate + RandCreate pair.
    pub iterations: u32,
    /// Seed of the random orders (the scenario's `seed`).
    pub seed: u64,
}

impl Params for BonnieSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Bonnie::new(self.clone()))
    }
    fn footprint(&self, _: &Scenario) -> Footprint {
        let bytes = self.files.saturating_mul(self.file_size_bytes);
        Footprint::files(bytes, 2 * u64::from(self.iterations))
    }
}

/// A bonnie phase: a rate in files per second, higher is better.
const fn rate(label: &'static str, doc: &'static str) -> SampleDef {
    SampleDef {
        label,
        kind: SampleKind::Rate("files/s"),
        doc,
    }
}

/// `program = "bonnie"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "bonnie",
    summary: "bonnie++'s file creation tests, sequential and random (seed 003)",
    doc: "bonnie++'s file creation tests (seed 003). Each iteration runs SeqCreate then \
          RandCreate on `files` files in the directory `path` (created by the program unless \
          it is the mount point, removed at the end):\n\n\
          - SeqCreate: create the files in order (open `O_CREAT`, write `file_size` bytes in \
          `block_size` writes, close); read: one `readdir`, then for each name in readdir \
          order `stat` it and read its data (open, reads, close); delete: `unlink` in readdir \
          order.\n\
          - RandCreate: random names, created in a random order; stat + read in another \
          random order; delete in another random order. The orders come from \
          `rand_pcg::Pcg64` seeded with the scenario's `seed`.\n\n\
          Each phase is one rate sample per iteration, in files per second (higher is \
          better) — the rows of mmtests' bonnie report.",
    params: &[
        Param {
            key: "path",
            ty: "string",
            default: "required",
            rules: "absolute, under a mounted filesystem, not a `[[files]]` entry; the \
                    directory of the files",
        },
        Param {
            key: "files",
            ty: "integer",
            default: "`1024`",
            rules: "≥ 1",
        },
        Param {
            key: "file_size",
            ty: "size (bytes)",
            default: "`\"ram*2/1024\"`",
            rules: "`files × file_size` ≤ the device (blockfs) or the tmpfs's `size` (half of RAM by default); 0 = empty files",
        },
        Param {
            key: "block_size",
            ty: "size (bytes)",
            default: "`\"8KiB\"`",
            rules: "1 byte ..= 1 GiB; bonnie++'s chunk size",
        },
        Param {
            key: "iterations",
            ty: "integer",
            default: "`3`",
            rules: "≥ 1",
        },
    ],
    samples: &[
        rate("SeqCreate ops", "files created per second, in order"),
        rate(
            "SeqCreate read",
            "files stat-ed and read per second, in readdir order",
        ),
        rate(
            "SeqCreate del",
            "files deleted per second, in readdir order",
        ),
        rate(
            "RandCreate ops",
            "files created per second, in a random order",
        ),
        rate(
            "RandCreate read",
            "files stat-ed and read per second, in a random order",
        ),
        rate(
            "RandCreate del",
            "files deleted per second, in a random order",
        ),
    ],
    example: r#"name = "bonnie-example"
kernel = "4.2"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[[devices]]
name = "nvme0"
preset = "nvme"
size = "4GiB"

[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "nvme0"

[[tasks]]
name = "bonnie"
program = "bonnie"
path = "/mnt/bonnie"
files = 128
file_size = "ram/128"
iterations = 2
"#,
    parse: parse_bonnie,
};

fn parse_bonnie(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let (path, make_path) = want_work_dir(task, env)?;
    let ram = env.total_memory_bytes;
    let files = match task.opt("files", want_u64)? {
        Some((0, loc)) => return Err(loc.err("files must be at least 1")),
        Some((n, _)) => n,
        None => 1024,
    };
    let file_size_bytes = match task.opt("file_size", |i, l| want_size(i, l, Some(ram)))? {
        Some((v, _)) => v,
        None => ram * 2 / 1024,
    };
    let block_size_bytes = match task.opt("block_size", |i, l| want_size(i, l, Some(ram)))? {
        Some((bs, loc)) if bs == 0 || bs > GIB => {
            return Err(loc.err(format!(
                "block size must be between 1 byte and 1 GiB, got {}",
                fmt_bytes(bs)
            )));
        }
        Some((bs, _)) => bs,
        None => 8 << 10,
    };
    let iterations = match task.opt("iterations", want_u32)? {
        Some((0, loc)) => return Err(loc.err("iterations must be at least 1")),
        Some((n, _)) => n,
        None => 3,
    };
    let (cap, what) = fs_capacity(path, env);
    if u128::from(files) * u128::from(file_size_bytes) > u128::from(cap) {
        return Err(capacity_loc(task).err(format!(
            "{files} files of {} do not fit in {what} ({})",
            fmt_bytes(file_size_bytes),
            fmt_bytes(cap)
        )));
    }
    Ok(ProgramSpec::new(
        PROGRAM.name,
        BonnieSpec {
            path: path.to_string(),
            make_path,
            files,
            file_size_bytes,
            block_size_bytes,
            iterations,
            seed: env.seed,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Setup,
    Begin,
    Create,
    ReadBegin,
    Read,
    DelBegin,
    Del,
    End,
    Finish,
    Done,
}

/// What the next file descriptor is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FdUse {
    None,
    Write,
    Read,
}

/// The bonnie program state.
pub struct Bonnie {
    spec: BonnieSpec,
    base: String,
    rng: Pcg64,
    iteration: u32,
    /// 0 = SeqCreate, 1 = RandCreate.
    test: u8,
    stage: Stage,
    /// Full paths of the files in the order of the current phase.
    order: Vec<String>,
    k: usize,
    queue: VecDeque<Op>,
    fd_use: FdUse,
}

impl Bonnie {
    /// A run as the spec says.
    pub fn new(spec: BonnieSpec) -> Bonnie {
        let base = if spec.path == "/" {
            String::new()
        } else {
            spec.path.clone()
        };
        Bonnie {
            rng: Pcg64::seed_from_u64(spec.seed),
            spec,
            base,
            iteration: 0,
            test: 0,
            stage: Stage::Setup,
            order: Vec::new(),
            k: 0,
            queue: VecDeque::new(),
            fd_use: FdUse::None,
        }
    }

    fn label(&self, what: &str) -> String {
        let t = if self.test == 0 {
            "SeqCreate"
        } else {
            "RandCreate"
        };
        format!("{t} {what}")
    }

    fn name(&self, i: u64) -> String {
        let prefix = if self.test == 0 { 's' } else { 'r' };
        format!("{}/{prefix}{i:07}", self.base)
    }

    fn shuffle(&mut self) {
        let mut v = std::mem::take(&mut self.order);
        v.shuffle(&mut self.rng);
        self.order = v;
    }

    /// Queue the data ops of one open file (writes or reads of `file_size` bytes), then
    /// its close.
    fn queue_data(&mut self, fd: u32, write: bool) {
        let mut left = self.spec.file_size_bytes;
        while left > 0 {
            let len = left.min(self.spec.block_size_bytes);
            left -= len;
            self.queue.push_back(if write {
                Op::Write { fd, len }
            } else {
                Op::Read { fd, len }
            });
        }
        self.queue.push_back(Op::Close { fd });
    }

    fn advance(&mut self) -> Op {
        let n = self.spec.files;
        match self.stage {
            Stage::Setup => {
                self.stage = Stage::Begin;
                if self.spec.make_path {
                    return Op::Mkdir {
                        path: self.spec.path.clone(),
                    };
                }
                self.advance()
            }
            Stage::Begin => {
                self.order = (0..n).map(|i| self.name(i)).collect();
                if self.test == 1 {
                    self.shuffle();
                }
                self.stage = Stage::Create;
                self.k = 0;
                Op::TimerStart(self.label("ops"))
            }
            Stage::Create => {
                if self.k < self.order.len() {
                    let path = self.order[self.k].clone();
                    self.k += 1;
                    self.fd_use = FdUse::Write;
                    return Op::Open {
                        path: path.into(),
                        create: true,
                        truncate: false,
                    };
                }
                self.stage = Stage::ReadBegin;
                Op::TimerStopRate {
                    label: self.label("ops"),
                    count: n,
                }
            }
            Stage::ReadBegin => {
                self.stage = Stage::Read;
                self.k = 0;
                if self.test == 0 {
                    // Stat in readdir order: the names come back from the Readdir.
                    self.order.clear();
                    self.queue.push_back(Op::Readdir {
                        path: self.spec.path.clone(),
                    });
                } else {
                    self.shuffle();
                }
                Op::TimerStart(self.label("read"))
            }
            Stage::Read => {
                if self.k < self.order.len() {
                    let path = self.order[self.k].clone();
                    self.k += 1;
                    self.queue.push_back(Op::Open {
                        path: path.as_str().into(),
                        create: false,
                        truncate: false,
                    });
                    return Op::Stat { path };
                }
                self.stage = Stage::DelBegin;
                Op::TimerStopRate {
                    label: self.label("read"),
                    count: n,
                }
            }
            Stage::DelBegin => {
                self.stage = Stage::Del;
                self.k = 0;
                if self.test == 1 {
                    self.shuffle();
                }
                Op::TimerStart(self.label("del"))
            }
            Stage::Del => {
                if self.k < self.order.len() {
                    let path = self.order[self.k].clone();
                    self.k += 1;
                    return Op::Unlink { path };
                }
                self.stage = Stage::End;
                Op::TimerStopRate {
                    label: self.label("del"),
                    count: n,
                }
            }
            Stage::End => {
                self.test += 1;
                if self.test == 2 {
                    self.test = 0;
                    self.iteration += 1;
                }
                self.stage = if self.iteration >= self.spec.iterations {
                    Stage::Finish
                } else {
                    Stage::Begin
                };
                self.advance()
            }
            Stage::Finish => {
                self.stage = Stage::Done;
                if self.spec.make_path {
                    return Op::Rmdir {
                        path: self.spec.path.clone(),
                    };
                }
                Op::Exit
            }
            Stage::Done => Op::Exit,
        }
    }
}

impl Program for Bonnie {
    fn next_op(&mut self, last: &OpResult) -> Op {
        match last {
            OpResult::Err(_) => {
                self.stage = Stage::Done;
                self.queue.clear();
                return Op::Exit;
            }
            OpResult::Fd(fd) => {
                let fd = *fd;
                match std::mem::replace(&mut self.fd_use, FdUse::None) {
                    FdUse::Write => self.queue_data(fd, true),
                    FdUse::Read | FdUse::None => self.queue_data(fd, false),
                }
            }
            OpResult::Names(names) => {
                self.order = names
                    .iter()
                    .map(|nm| format!("{}/{nm}", self.base))
                    .collect();
            }
            _ => {}
        }
        if let Some(op) = self.queue.pop_front() {
            if matches!(op, Op::Open { create: false, .. }) {
                self.fd_use = FdUse::Read;
            }
            return op;
        }
        self.advance()
    }
}
