//! `sparsetruncate` (mmtests, seed 003): many sparse files whose pages were read once, then
//! each file's unlink timed.
//!
//! Set-up: the working directory and `dirs` directories in it (`dir00`, `dir01`, …); then
//! for each file in turn (file `i` in directory `i % dirs`, round robin): create it,
//! ftruncate it to `file_size` (a sparse file: all holes), pread `read_size` bytes at every
//! `read_stride` (every 4 KiB page by default: the page cache fills with zero-filled hole
//! pages, no IO), close it. With the `large` size (files totalling 2×RAM) the files read
//! first are reclaimed while the later ones are read, leaving workingset shadow entries in
//! their page-cache trees. Timed: each file's unlink, in creation order (samples labelled
//! "unlink", ns) — the truncate of a file whose pages were all reclaimed clears only shadow
//! entries. Then each directory is removed (samples labelled "rmdir").
//!
//! What mmtests does that is not known here (the order of files across directories, and
//! whether all files are created before any is read) is chosen as above and documented in
//! `docs/scenarios.md`. A failing operation ends the program (the errno is counted).

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Footprint, Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    capacity_loc, fmt_bytes, fs_capacity, want_size, want_str, want_u32, want_u64, want_work_dir,
    Env, Scenario, ScenarioError, View, MIB, PAGE_SIZE,
};

/// Parameters of the `sparsetruncate` program (mmtests' sparsetruncate).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SparsetruncateSpec {
    /// Working directory; the program creates it unless it is the mount point.
    pub path: String,
    /// The program must create `path` (false when it is the mount point).
    pub make_path: bool,
    /// Size class: `tiny`, `small` or `large`.
    pub size_class: String,
    /// Number of files (from the size class, or `files`).
    pub files: u64,
    /// Number of directories the files are spread over, round robin.
    pub dirs: u32,
    /// Size each file is ftruncated to, bytes.
    pub file_size_bytes: u64,
    /// Bytes of each pread.
    pub read_bytes: u64,
    /// Distance between preads, bytes.
    pub read_stride_bytes: u64,
}

impl Params for SparsetruncateSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Sparsetruncate::new(self.clone()))
    }
    fn footprint(&self, _: &Scenario) -> Footprint {
        Footprint::files(self.files.saturating_mul(self.file_size_bytes), 1)
    }
}

/// `program = "sparsetruncate"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "sparsetruncate",
    summary: "sparse files, a small read in every page, each file's unlink timed (seed 003)",
    doc: "mmtests' sparsetruncate (seed 003). Set-up: `mkdir path` (unless it is the mount \
          point), then `dirs` directories `path/dir00`, `path/dir01`, …; then for each file \
          `i` in turn — `path/dirNN/fileNNNNNNN` with `NN = i mod dirs` (round robin) — open \
          with `O_CREAT`, `ftruncate` to `file_size` (a sparse file: all holes), `pread` \
          `read_size` bytes at every `read_stride` (on a `blockfs` each read of a hole \
          allocates a zero-filled page without IO), close. Timed: each file's `unlink`, in \
          creation order. Then each directory is removed, and `path`.\n\n\
          With `large` the files read first are reclaimed while the later ones are read, \
          leaving workingset shadow entries: the unlink of a fully reclaimed file truncates \
          only shadow entries (the fast half of the samples), the unlink of a file still \
          cached frees its pages (the slow half). What mmtests does that is not known here — \
          the order of files across directories, whether all files are created before any \
          is read — is chosen as above.",
    params: &[
        Param {
            key: "path",
            ty: "string",
            default: "required",
            rules: "absolute, under a mounted filesystem, not a `[[files]]` entry; the working \
                    directory",
        },
        Param {
            key: "size",
            ty: "string",
            default: "`\"large\"`",
            rules: "`tiny` (16 files), `small` (files totalling 60% of RAM), `large` (2×RAM)",
        },
        Param {
            key: "files",
            ty: "integer",
            default: "from `size`",
            rules: "≥ 1; overrides the size class",
        },
        Param {
            key: "dirs",
            ty: "integer",
            default: "`16`",
            rules: "≥ 1",
        },
        Param {
            key: "file_size",
            ty: "size (bytes)",
            default: "`\"4MiB\"`",
            rules: "≥ 1; `files × file_size` ≤ the device (blockfs) or the tmpfs's `size` (half of RAM by default)",
        },
        Param {
            key: "read_size",
            ty: "size (bytes)",
            default: "`16`",
            rules: "≥ 1: the bytes of each `pread`",
        },
        Param {
            key: "read_stride",
            ty: "size (bytes)",
            default: "`\"4KiB\"`",
            rules: "≥ 1: the distance between `pread`s",
        },
    ],
    samples: &[
        SampleDef {
            label: "unlink",
            kind: SampleKind::Time,
            doc: "one file's `unlink` (its truncation included)",
        },
        SampleDef {
            label: "rmdir",
            kind: SampleKind::Time,
            doc: "one directory's `rmdir`",
        },
    ],
    example: r#"name = "sparsetruncate-example"
kernel = "4.2"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "4GiB"

[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "sda"

[[tasks]]
name = "sparsetruncate"
program = "sparsetruncate"
path = "/mnt/st"
size = "large"
dirs = 4
file_size = "1MiB"
"#,
    parse: parse_sparsetruncate,
};

fn parse_sparsetruncate(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let (path, make_path) = want_work_dir(task, env)?;
    let ram = env.total_memory_bytes;
    let size_class = match task.opt("size", want_str)? {
        Some((s, loc)) if !["tiny", "small", "large"].contains(&s) => {
            return Err(loc.err(format!(
                "unknown size \"{s}\"; sizes: tiny (16 files), small (files totalling 60% \
                 of RAM), large (2×RAM)"
            )));
        }
        Some((s, _)) => s,
        None => "large",
    };
    let file_size_bytes = match task.opt("file_size", |i, l| want_size(i, l, Some(ram)))? {
        Some((0, loc)) => return Err(loc.err("the file size must be at least 1 byte")),
        Some((v, _)) => v,
        None => 4 * MIB,
    };
    let files = match task.opt("files", want_u64)? {
        Some((0, loc)) => return Err(loc.err("files must be at least 1")),
        Some((n, _)) => n,
        None => match size_class {
            "tiny" => 16,
            "small" => (ram / 10 * 6 / file_size_bytes).max(1),
            _ => (ram * 2 / file_size_bytes).max(1),
        },
    };
    let dirs = match task.opt("dirs", want_u32)? {
        Some((0, loc)) => return Err(loc.err("dirs must be at least 1")),
        Some((n, _)) => n,
        None => 16,
    };
    let read_bytes = match task.opt("read_size", |i, l| want_size(i, l, None))? {
        Some((0, loc)) => return Err(loc.err("read_size must be at least 1 byte")),
        Some((v, _)) => v,
        None => 16,
    };
    let read_stride_bytes = match task.opt("read_stride", |i, l| want_size(i, l, None))? {
        Some((0, loc)) => return Err(loc.err("read_stride must be at least 1 byte")),
        Some((v, _)) => v,
        None => PAGE_SIZE,
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
        SparsetruncateSpec {
            path: path.to_string(),
            make_path,
            size_class: size_class.to_string(),
            files,
            dirs,
            file_size_bytes,
            read_bytes,
            read_stride_bytes,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    MakeBase,
    Mkdir(u32),
    Create(u64),
    Ftruncate(u64),
    Pread(u64, u64),
    Close(u64),
    UnlinkStart(u64),
    Unlink(u64),
    UnlinkStop(u64),
    RmdirStart(u32),
    Rmdir(u32),
    RmdirStop(u32),
    RmBase,
    Done,
}

/// The sparsetruncate program state.
pub struct Sparsetruncate {
    spec: SparsetruncateSpec,
    base: String,
    phase: Phase,
    fd: u32,
}

impl Sparsetruncate {
    /// A run as the spec says.
    pub fn new(spec: SparsetruncateSpec) -> Sparsetruncate {
        let base = if spec.path == "/" {
            String::new()
        } else {
            spec.path.clone()
        };
        let phase = if spec.make_path {
            Phase::MakeBase
        } else {
            Phase::Mkdir(0)
        };
        Sparsetruncate {
            spec,
            base,
            phase,
            fd: 0,
        }
    }

    fn dir(&self, d: u32) -> String {
        format!("{}/dir{:02}", self.base, d)
    }

    fn file(&self, i: u64) -> String {
        let d = (i % u64::from(self.spec.dirs)) as u32;
        format!("{}/file{:07}", self.dir(d), i)
    }

    /// The op of the current phase (phases that only produce one op).
    fn op(&mut self) -> Op {
        match self.phase {
            Phase::MakeBase => {
                self.phase = Phase::Mkdir(0);
                Op::Mkdir {
                    path: self.spec.path.clone(),
                }
            }
            Phase::Mkdir(d) => {
                self.phase = if d + 1 < self.spec.dirs {
                    Phase::Mkdir(d + 1)
                } else {
                    Phase::Create(0)
                };
                Op::Mkdir { path: self.dir(d) }
            }
            Phase::Create(i) => {
                self.phase = Phase::Ftruncate(i);
                Op::Open {
                    path: self.file(i).into(),
                    create: true,
                    truncate: false,
                }
            }
            Phase::Ftruncate(i) => {
                self.phase = Phase::Pread(i, 0);
                Op::Ftruncate {
                    fd: self.fd,
                    size: self.spec.file_size_bytes,
                }
            }
            Phase::Pread(i, off) => {
                let next = off + self.spec.read_stride_bytes;
                self.phase = if next < self.spec.file_size_bytes {
                    Phase::Pread(i, next)
                } else {
                    Phase::Close(i)
                };
                Op::Pread {
                    fd: self.fd,
                    len: self.spec.read_bytes,
                    pos: off,
                }
            }
            Phase::Close(i) => {
                self.phase = if i + 1 < self.spec.files {
                    Phase::Create(i + 1)
                } else {
                    Phase::UnlinkStart(0)
                };
                Op::Close { fd: self.fd }
            }
            Phase::UnlinkStart(i) => {
                self.phase = Phase::Unlink(i);
                Op::TimerStart("unlink".into())
            }
            Phase::Unlink(i) => {
                self.phase = Phase::UnlinkStop(i);
                Op::Unlink { path: self.file(i) }
            }
            Phase::UnlinkStop(i) => {
                self.phase = if i + 1 < self.spec.files {
                    Phase::UnlinkStart(i + 1)
                } else {
                    Phase::RmdirStart(0)
                };
                Op::TimerStop("unlink".into())
            }
            Phase::RmdirStart(d) => {
                self.phase = Phase::Rmdir(d);
                Op::TimerStart("rmdir".into())
            }
            Phase::Rmdir(d) => {
                self.phase = Phase::RmdirStop(d);
                Op::Rmdir { path: self.dir(d) }
            }
            Phase::RmdirStop(d) => {
                self.phase = if d + 1 < self.spec.dirs {
                    Phase::RmdirStart(d + 1)
                } else if self.spec.make_path {
                    Phase::RmBase
                } else {
                    Phase::Done
                };
                Op::TimerStop("rmdir".into())
            }
            Phase::RmBase => {
                self.phase = Phase::Done;
                Op::Rmdir {
                    path: self.spec.path.clone(),
                }
            }
            Phase::Done => Op::Exit,
        }
    }
}

impl Program for Sparsetruncate {
    fn next_op(&mut self, last: &OpResult) -> Op {
        match last {
            OpResult::Err(_) => {
                self.phase = Phase::Done;
                return Op::Exit;
            }
            OpResult::Fd(fd) => self.fd = *fd,
            _ => {}
        }
        self.op()
    }
}
