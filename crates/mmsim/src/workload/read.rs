//! `read`: open an existing file and read it sequentially in blocks (pread), `passes` times,
//! sleeping `think` between passes. Each pass is timed under the label "pass".

use super::{Op, OpResult, Program};
use crate::scenario::ReadSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Open,
    StartPass,
    Reading,
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
        }
    }
    fn pread(&self) -> Op {
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
                    path: self.spec.path.clone(),
                    create: false,
                    truncate: false,
                }
            }
            Phase::StartPass => {
                if let OpResult::Fd(fd) = last {
                    self.fd = *fd;
                }
                self.pos = 0;
                self.phase = Phase::Reading;
                Op::TimerStart("pass".into())
            }
            Phase::Reading => match last {
                OpResult::Bytes(0) => {
                    self.pass += 1;
                    self.phase = if self.pass >= self.spec.passes {
                        Phase::Done
                    } else {
                        Phase::Think
                    };
                    Op::TimerStop("pass".into())
                }
                OpResult::Bytes(n) => {
                    self.pos += n;
                    self.pread()
                }
                _ => self.pread(),
            },
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
