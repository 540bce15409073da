//! Workload programs: each is a small state machine that produces operations (syscalls,
//! sleeps, timers) one at a time. Programs never touch kernel state; the kernel executes
//! their operations (`Sim::exec_op`). Adding a program is one new file and one line in
//! `build_program`.

pub mod anon;
pub mod bonnie;
pub mod dd;
pub mod desktop;
pub mod mmap_read;
pub mod pread_stride;
pub mod read;
pub mod replay;
pub mod sparsetruncate;

use crate::scenario::ProgramSpec;

/// An errno returned to a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// No such file or directory.
    ENOENT,
    /// Bad file descriptor.
    EBADF,
    /// Out of memory.
    ENOMEM,
    /// No space left on device.
    ENOSPC,
    /// I/O error.
    EIO,
    /// File exists.
    EEXIST,
    /// Invalid argument.
    EINVAL,
    /// The task touched an address outside any mapping, or without permission (SIGSEGV).
    SIGSEGV,
    /// The task touched a file mapping beyond the end of the file (SIGBUS: filemap_fault's
    /// VM_FAULT_SIGBUS).
    SIGBUS,
    /// Is a directory.
    EISDIR,
    /// Not a directory.
    ENOTDIR,
    /// Directory not empty.
    ENOTEMPTY,
    /// Device or resource busy (rmdir of a mount point).
    EBUSY,
}

impl Errno {
    /// The errno's name.
    pub fn name(self) -> &'static str {
        match self {
            Errno::ENOENT => "ENOENT",
            Errno::EBADF => "EBADF",
            Errno::ENOMEM => "ENOMEM",
            Errno::ENOSPC => "ENOSPC",
            Errno::EIO => "EIO",
            Errno::EEXIST => "EEXIST",
            Errno::EINVAL => "EINVAL",
            Errno::SIGSEGV => "SIGSEGV",
            Errno::SIGBUS => "SIGBUS",
            Errno::EISDIR => "EISDIR",
            Errno::ENOTDIR => "ENOTDIR",
            Errno::ENOTEMPTY => "ENOTEMPTY",
            Errno::EBUSY => "EBUSY",
        }
    }
}

/// One operation of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// open(2); `create` adds O_CREAT, `truncate` O_TRUNC.
    Open {
        /// Absolute path.
        path: String,
        /// O_CREAT.
        create: bool,
        /// O_TRUNC.
        truncate: bool,
    },
    /// close(2).
    Close {
        /// Descriptor.
        fd: u32,
    },
    /// write(2) of `len` bytes at the file position.
    Write {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
    },
    /// read(2) of `len` bytes at the file position.
    Read {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
    },
    /// pread(2): read `len` bytes at `pos` (file position unchanged).
    Pread {
        /// Descriptor.
        fd: u32,
        /// Bytes.
        len: u64,
        /// Offset.
        pos: u64,
    },
    /// read(2) from /dev/zero into the user buffer (dd's input side).
    ReadZero {
        /// Bytes.
        len: u64,
    },
    /// fdatasync(2).
    Fdatasync {
        /// Descriptor.
        fd: u32,
    },
    /// unlink(2).
    Unlink {
        /// Absolute path.
        path: String,
    },
    /// Sleep for a time (user think time).
    Sleep {
        /// Nanoseconds.
        ns: u64,
    },
    /// mmap(2): map `len` bytes of a file (or anonymous memory when `path` is None).
    Mmap {
        /// File to map, or None for anonymous memory.
        path: Option<String>,
        /// Length in bytes.
        len: u64,
        /// Offset in the file, bytes (page aligned).
        offset: u64,
        /// PROT_* bits (1 read, 2 write, 4 exec).
        prot: u32,
        /// MAP_SHARED (else MAP_PRIVATE).
        shared: bool,
    },
    /// munmap(2).
    Munmap {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
    },
    /// mprotect(2).
    Mprotect {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// New PROT_* bits.
        prot: u32,
    },
    /// Touch memory: access every `stride`-th byte of [addr, addr+len) (stride ≥ 1 page means
    /// one access per touched page; smaller strides add cache-hit accesses within a page),
    /// reading or writing. Executed in slices so other CPUs interleave.
    Touch {
        /// Start address.
        addr: u64,
        /// Length in bytes.
        len: u64,
        /// Distance between accesses, bytes.
        stride: u64,
        /// Write (else read).
        write: bool,
    },
    /// ftruncate(2): set the size of an open file (shrink or grow; growing makes a hole).
    Ftruncate {
        /// Descriptor.
        fd: u32,
        /// New size, bytes.
        size: u64,
    },
    /// truncate(2): set the size of the file at `path`.
    Truncate {
        /// Absolute path.
        path: String,
        /// New size, bytes.
        size: u64,
    },
    /// mkdir(2).
    Mkdir {
        /// Absolute path.
        path: String,
    },
    /// rmdir(2).
    Rmdir {
        /// Absolute path.
        path: String,
    },
    /// stat(2); the result is the size in bytes.
    Stat {
        /// Absolute path.
        path: String,
    },
    /// getdents(2) of a whole directory; the result is the entry names in readdir order.
    Readdir {
        /// Absolute path of the directory.
        path: String,
    },
    /// Stop a named timer and record a rate sample under its label: `count` operations
    /// per second of the elapsed time, rounded (no cost).
    TimerStopRate {
        /// Label (as given to TimerStart).
        label: String,
        /// Operations done while the timer ran.
        count: u64,
    },
    /// Start a named timer (no cost).
    TimerStart(String),
    /// Stop a named timer and record the elapsed time as a sample under its label.
    TimerStop(String),
    /// Exit the task.
    Exit,
}

/// The result of the last op, handed to the program's next step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum OpResult {
    /// Nothing (first step, or ops without a value).
    #[default]
    None,
    /// A new file descriptor.
    Fd(u32),
    /// Bytes transferred.
    Bytes(u64),
    /// An address (mmap).
    Addr(u64),
    /// An error.
    Err(Errno),
    /// Directory entry names (readdir), in readdir order.
    Names(Vec<String>),
}

/// A workload program.
pub trait Program {
    /// The next operation, given the result of the previous one.
    fn next_op(&mut self, last: &OpResult) -> Op;
}

/// Build the program a scenario task runs.
pub fn build_program(spec: &ProgramSpec) -> Box<dyn Program> {
    match spec {
        ProgramSpec::Dd(d) => Box::new(dd::Dd::new(d.clone())),
        ProgramSpec::Read(r) => Box::new(read::Read::new(r.clone())),
        ProgramSpec::Sparsetruncate(s) => Box::new(sparsetruncate::Sparsetruncate::new(s.clone())),
        ProgramSpec::Bonnie(b) => Box::new(bonnie::Bonnie::new(b.clone())),
        ProgramSpec::Anon(a) => Box::new(anon::Anon::new(a.clone())),
        ProgramSpec::MmapRead(m) => Box::new(mmap_read::MmapRead::new(m.clone())),
        ProgramSpec::PreadStride(p) => Box::new(pread_stride::PreadStride::new(p.clone())),
        ProgramSpec::Desktop(d) => Box::new(desktop::Desktop::new(d.clone())),
        ProgramSpec::Replay(r) => Box::new(replay::Replay::new(r.clone())),
    }
}
