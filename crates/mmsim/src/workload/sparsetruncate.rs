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
use crate::scenario::SparsetruncateSpec;

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
                    path: self.file(i),
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
