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
use crate::scenario::BonnieSpec;

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
                        path,
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
                        path: path.clone(),
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
