//! `pread-stride`: `count` preads of `read_pages` pages at offsets i × `step_pages` pages
//! (seed 001's file-server pattern: 100000 preads of 110 pages every 100 pages, so 10% of the
//! pages are read twice, soon after each other, and get activated). The whole stream is
//! timed under the label "stream".

use super::{Op, OpResult, Program};
use crate::scenario::PreadStrideSpec;

/// The pread-stride program state.
pub struct PreadStride {
    spec: PreadStrideSpec,
    fd: Option<u32>,
    i: u64,
    started: bool,
    done: bool,
}

impl PreadStride {
    /// A reader as the spec says.
    pub fn new(spec: PreadStrideSpec) -> PreadStride {
        PreadStride {
            spec,
            fd: None,
            i: 0,
            started: false,
            done: false,
        }
    }
}

impl Program for PreadStride {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if self.done {
            return Op::Exit;
        }
        if let OpResult::Err(_) = last {
            self.done = true;
            return Op::Exit;
        }
        let Some(fd) = self.fd else {
            if let OpResult::Fd(fd) = last {
                self.fd = Some(*fd);
                self.started = true;
                return Op::TimerStart("stream".into());
            }
            return Op::Open {
                path: self.spec.path.clone(),
                create: false,
                truncate: false,
            };
        };
        if self.i >= self.spec.count {
            self.done = true;
            return Op::TimerStop("stream".into());
        }
        let pos = self.i * self.spec.step_pages * 4096;
        self.i += 1;
        Op::Pread {
            fd,
            len: self.spec.read_pages * 4096,
            pos,
        }
    }
}
