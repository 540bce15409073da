//! `anon`: map anonymous memory and touch it `passes` times — sequentially, or in a seeded
//! random order of 64-page chunks — writing (or only reading), then unmap it and exit.
//! Each pass is timed under the label "pass".

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{Op, OpResult, Program};
use crate::scenario::AnonSpec;

const CHUNK: u64 = 64 * 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Map,
    StartPass,
    Touch,
    Think,
    Unmap,
    Done,
}

/// The anon program state.
pub struct Anon {
    spec: AnonSpec,
    phase: Phase,
    addr: u64,
    pass: u32,
    order: Vec<u64>,
    next: usize,
    rng: rand_pcg::Pcg64,
}

impl Anon {
    /// An anon program as the spec says.
    pub fn new(spec: AnonSpec) -> Anon {
        let rng = rand_pcg::Pcg64::seed_from_u64(spec.seed);
        Anon {
            spec,
            phase: Phase::Map,
            addr: 0,
            pass: 0,
            order: Vec::new(),
            next: 0,
            rng,
        }
    }
}

impl Program for Anon {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            self.phase = Phase::Done;
        }
        match self.phase {
            Phase::Map => {
                self.phase = Phase::StartPass;
                Op::Mmap {
                    path: None,
                    len: self.spec.size_bytes,
                    offset: 0,
                    prot: 3,
                    shared: false,
                }
            }
            Phase::StartPass => {
                if let OpResult::Addr(a) = last {
                    self.addr = *a;
                }
                let chunks = self.spec.size_bytes.div_ceil(CHUNK);
                self.order = (0..chunks).collect();
                if self.spec.random {
                    self.order.shuffle(&mut self.rng);
                }
                self.next = 0;
                self.phase = Phase::Touch;
                Op::TimerStart("pass".into())
            }
            Phase::Touch => {
                if self.next >= self.order.len() {
                    self.pass += 1;
                    self.phase = if self.pass >= self.spec.passes {
                        Phase::Unmap
                    } else {
                        Phase::Think
                    };
                    return Op::TimerStop("pass".into());
                }
                let c = self.order[self.next];
                self.next += 1;
                let off = c * CHUNK;
                Op::Touch {
                    addr: self.addr + off,
                    len: CHUNK.min(self.spec.size_bytes - off),
                    stride: 4096,
                    write: self.spec.write,
                }
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
