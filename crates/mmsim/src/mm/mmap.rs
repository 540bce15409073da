//! mm_struct and VMAs (mm/mmap.c): placeholder until the virtual-memory layer lands.

use crate::sched::{TaskId, Wait};
use crate::sim::Sim;
use crate::workload::{Errno, OpResult};

impl Sim {
    /// mmap(2).
    pub fn sys_mmap(
        &mut self,
        _tid: TaskId,
        _path: Option<&str>,
        _len: u64,
        _offset: u64,
        _prot: u32,
        _shared: bool,
    ) -> OpResult {
        OpResult::Err(Errno::EINVAL)
    }
    /// munmap(2).
    pub fn sys_munmap(&mut self, _tid: TaskId, _addr: u64, _len: u64) -> Result<OpResult, Wait> {
        Ok(OpResult::Err(Errno::EINVAL))
    }
    /// mprotect(2).
    pub fn sys_mprotect(&mut self, _tid: TaskId, _addr: u64, _len: u64, _prot: u32) -> OpResult {
        OpResult::Err(Errno::EINVAL)
    }
    /// Memory accesses of a program.
    pub fn sys_touch(
        &mut self,
        _tid: TaskId,
        _addr: u64,
        _len: u64,
        _stride: u64,
        _write: bool,
        _progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        Ok(OpResult::Err(Errno::SIGSEGV))
    }
}
