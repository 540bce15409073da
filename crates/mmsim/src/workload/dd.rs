//! `dd`: write a file of a given size in blocks read from /dev/zero, optionally fdatasync,
//! close and delete it, repeat (seed 000's benchmark). Each iteration's elapsed time (open to
//! close, including the fdatasync when `sync` is set; not the unlink) is recorded as a sample
//! under the label "iteration".

use super::{Op, OpResult, Program};
use crate::scenario::DdSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Open,
    ReadZero,
    Write,
    Sync,
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
                    path: self.spec.path.clone(),
                    create: true,
                    truncate: true,
                }
            }
            Phase::ReadZero => {
                if let OpResult::Fd(fd) = last {
                    self.fd = *fd;
                }
                if self.written >= self.spec.size_bytes {
                    self.phase = if self.spec.sync {
                        Phase::Sync
                    } else {
                        Phase::Close
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
                Op::Write { fd: self.fd, len }
            }
            Phase::Sync => {
                self.phase = Phase::Close;
                Op::Fdatasync { fd: self.fd }
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
