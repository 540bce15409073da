//! `mmap-read`: map an existing file read-only (MAP_PRIVATE, PROT_READ, plus PROT_EXEC for
//! executable text) and read it through the mapping every `stride` bytes, `passes` times
//! with `think` between passes, then unmap it. vm-scalability's lru-file-mmap-read reader
//! is one pass with an 8-byte stride. Each pass is timed under the label "pass".

use super::{Op, OpResult, Program};
use crate::scenario::MmapReadSpec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Map,
    StartPass,
    Touch,
    StopPass,
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
}

impl MmapRead {
    /// A reader as the spec says.
    pub fn new(spec: MmapReadSpec) -> MmapRead {
        MmapRead {
            spec,
            phase: Phase::Map,
            addr: 0,
            pass: 0,
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
                self.phase = Phase::StartPass;
                Op::Mmap {
                    path: Some(self.spec.path.clone()),
                    len: self.spec.size_bytes,
                    offset: 0,
                    prot: if self.spec.exec { 5 } else { 1 },
                    shared: false,
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
                } else {
                    Phase::Think
                };
                Op::TimerStop("pass".into())
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
