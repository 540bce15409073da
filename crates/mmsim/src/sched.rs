//! Tasks: user tasks running a workload program, and kernel threads (the flusher; kswapd
//! comes with reclaim). A task is placed on one CPU, runs one small step at a time (one
//! syscall, one page access, one writeback batch), and sleeps on a timer, a page lock or
//! page writeback while its CPU runs something else or idles.

use std::collections::BTreeMap;

use crate::machine::{CpuId, Ps};
use crate::mm::page::Pfn;
use crate::workload::{Op, OpResult, Program};

/// Index into `Sim::tasks`.
pub type TaskId = usize;

/// Scheduling state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    /// On its CPU's run queue.
    Runnable,
    /// Waiting for a wake-up.
    Sleeping,
    /// Finished.
    Exited,
}

/// Why a blocked kernel path cannot go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Sleep until a time (schedule_timeout, balance_dirty_pages pause).
    Until(Ps),
    /// Wait for the page's lock to be released (lock_page, wait_on_page_locked).
    PageLocked(Pfn),
    /// Wait for the page's writeback to end (wait_on_page_writeback).
    PageWriteback(Pfn),
}

/// Which kernel thread a kthread task runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KThread {
    /// The bdi flusher of a block device (wb_workfn).
    Flusher(usize),
    /// kswapd of a node.
    Kswapd(usize),
    /// zswap's shrink worker (shrink_worker on the zswap-shrink workqueue, `mm/zswap.rs`).
    ZswapShrink,
    /// kjournald2 of a journalled filesystem (`fs/jbd2.rs`).
    Jbd2(usize),
}

/// What a task runs.
pub enum TaskBody {
    /// A user program producing syscalls and memory accesses.
    User(Box<dyn Program>),
    /// A kernel thread.
    Kthread(KThread),
}

/// An operation being executed, with its progress so a blocked syscall resumes where it stopped.
#[derive(Clone, Debug)]
pub struct OpInProgress {
    /// The operation.
    pub op: Op,
    /// Progress counter (bytes done, pages done, phase), op-specific.
    pub progress: u64,
    /// The syscall entry has been charged (a resumed syscall does not pay it again).
    pub entered: bool,
}

/// Drop what an op that is done owns, in place: the plain-data ops (a replay's reads and
/// closes, most of a run's ops) own nothing and are left as they are; any other is
/// replaced by `Op::Exit`, which drops it where it lies (moving it out to drop it copied
/// the whole op through the stack at every open).
#[inline(always)]
pub(crate) fn drop_done_op(op: &mut crate::workload::Op) {
    use crate::workload::Op;
    match op {
        Op::Close { .. }
        | Op::Read { .. }
        | Op::Pread { .. }
        | Op::Write { .. }
        | Op::Pwrite { .. }
        | Op::Touch { .. }
        | Op::Sleep { .. }
        | Op::Exit => {}
        _ => *op = Op::Exit,
    }
}

/// An open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFile {
    /// The inode.
    pub ino: u32,
    /// File position, bytes.
    pub pos: u64,
    /// Readahead state (struct file_ra_state): window start, size, async size, prev index.
    pub ra: crate::mm::readahead::RaState,
    /// The `struct file`'s `filp` object (`filp-kmem`): its memcg and node.
    pub filp: Option<(crate::mm::memcontrol::MemcgId, u8)>,
}

/// Per-task measurements.
#[derive(Clone, Debug, Default)]
pub struct TaskStats {
    /// When the task started, ps.
    pub start_ps: Ps,
    /// When it exited, ps.
    pub exit_ps: Option<Ps>,
    /// Major faults.
    pub majflt: u64,
    /// Minor faults.
    pub minflt: u64,
    /// Voluntary context switches (sleeps).
    pub nvcsw: u64,
    /// Syscalls made.
    pub syscalls: u64,
    /// Pages this task's reads brought into the page cache (readahead and readpage): the
    /// read misses.
    pub cache_misses: u64,
    /// Inode-table pages this task's lookups brought into the page cache (an inode not in
    /// the inode cache read from disk; not in `cache_misses`).
    pub inode_table_misses: u64,
    /// Directory blocks this task's lookups brought into the page cache (`fs::htree`; not
    /// in `cache_misses`).
    pub dir_block_misses: u64,
    /// Bytes read and written by syscalls.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Timed samples by label (ns), e.g. one per dd iteration or per unlink.
    pub samples: BTreeMap<String, Vec<u64>>,
    /// Major faults taken inside each timed region, by label (one per sample).
    pub region_majflt: BTreeMap<String, Vec<u64>>,
    /// Open timers by label: start time and the task's major faults then.
    pub timers: BTreeMap<String, (Ps, u64)>,
    /// Errors returned to the task (errno name → count).
    pub errors: BTreeMap<String, u64>,
}

/// A task.
pub struct Task {
    /// Its id.
    pub id: TaskId,
    /// Name (from the scenario).
    pub name: String,
    /// CPU it runs on.
    pub cpu: CpuId,
    /// Scheduling state.
    pub state: TaskState,
    /// Not runnable before this time.
    pub ready_at_ps: Ps,
    /// A user task's armed sleep timer (schedule_timeout's): the time its timed sleep
    /// ends, `Ps::MAX` when none is armed. A wakeup before it cancels it (del_timer), so
    /// the timer event of a sleep that ended early is stale and wakes nobody.
    pub timer_ps: Ps,
    /// What it runs.
    pub body: TaskBody,
    /// The op in progress (user tasks).
    pub cur_op: Option<OpInProgress>,
    /// The result of the last finished op, handed to the program.
    pub last: OpResult,
    /// File descriptor table.
    pub fds: Vec<Option<OpenFile>>,
    /// Measurements.
    pub stats: TaskStats,
    /// The task's address space (mm id), created on first mmap.
    pub mm: Option<u32>,
    /// The batched TLB flush state (struct tlbflush_unmap_batch).
    pub tlb_ubc: crate::mm::rmap::TlbflushUnmapBatch,
    /// Chosen by the OOM killer: exits at its next step.
    pub oom_killed: bool,
    /// The thread group (process) it belongs to: its leader's id (tgid), its own id for a
    /// single-threaded process. Threads share `mm`.
    pub tgid: TaskId,
    /// Its process has more than one thread (set before the run, `thread_group`): only then
    /// do exits and kills look for the other threads.
    pub multi_threaded: bool,
    /// Another thread of its process took a fatal signal (zap_other_threads): it exits
    /// at its next step.
    pub group_exit: bool,
    /// /proc/<pid>/oom_score_adj (-1000 ..= 1000): added to its badness in units of a
    /// thousandth of the OOM domain's memory; -1000 is never killed.
    pub oom_score_adj: i16,
    /// The virtual page of a fault that slept and will be retried (counted once).
    pub fault_retry: Option<u64>,
    /// The fault in progress (`fault_retry`) slept on a page lock in an attempt: the
    /// kernel's VM_FAULT_RETRY, after which the fault runs again with FAULT_FLAG_TRIED (a
    /// sleep inside an allocation is not one).
    pub fault_retry_tried: bool,
    /// The fault in progress (`fault_retry`) found its page missing (VM_FAULT_MAJOR) in
    /// an attempt that slept inside (an allocation's reclaim, its readahead's charge):
    /// the attempt resumed is the same one, major, its miss counted.
    pub fault_retry_major: bool,
    /// The node whose reclaim_throttle the task slept in and has not run since
    /// (`Sim::reclaim_throttled`).
    pub reclaim_throttled_on: Option<u32>,
    /// The page allocation in progress: its direct reclaim rounds in a row that freed
    /// nothing (__alloc_pages_slowpath's no_progress_loops, `oom-detection-rework`); kept
    /// across the sleeps and reschedules between its rounds, cleared when it ends.
    pub alloc_no_progress_loops: u32,
    /// The memory cgroup the task runs in.
    pub memcg: crate::mm::memcontrol::MemcgId,
    /// Pages charged above memory.high since the last return to user space
    /// (current->memcg_nr_pages_over_high).
    pub memcg_nr_pages_over_high: u64,
    /// memory.high throttling owed from the synchronous over-high work of a charge
    /// (`memcg-sync-high`), ps: the kernel sleeps inside the charge; here the task
    /// sleeps as long when it returns to user space.
    pub memcg_high_delay_ps: u64,
    /// PSI task flags (`crate::psi::flags`: TSK_IOWAIT, TSK_MEMSTALL, TSK_RUNNING).
    pub psi_flags: u8,
    /// The task's memstall came with its sleep (a wait inside a reclaim section, memory.high
    /// throttling, a thrashing page wait): it ends when the task runs again.
    pub psi_sleep_memstall: bool,
    /// Pages dirtied since the last balance_dirty_pages pass (current->nr_dirtied).
    pub nr_dirtied: u32,
    /// Pages to dirty before the next pass (current->nr_dirtied_pause).
    pub nr_dirtied_pause: u32,
    /// When the last throttling pause ended, jiffies (current->dirty_paused_when; 0:
    /// never).
    pub dirty_paused_when: u64,
    /// A balance_dirty_pages loop that slept at the limit and looks again before the
    /// task dirties more: its pages_dirtied (0: none).
    pub bdp_pending: u32,
    /// Page-cache pages the task holds a reference to across a sleep in its system call:
    /// each metadata block it waited to read (the buffer head ext4_find_entry and
    /// __ext4_get_inode_loc hold through wait_on_buffer), so that reclaim — its own
    /// charges' included — cannot free the block before the restarted call uses it.
    /// Dropped when the call returns (`Sim::put_held_pages`).
    pub held_pages: Vec<Pfn>,
}

impl Task {
    /// Kernel thread `k` named `name` on `cpu`, asleep until woken, in the root memcg.
    pub fn kthread(id: TaskId, name: String, cpu: CpuId, k: KThread) -> Task {
        Task {
            id,
            name,
            cpu,
            state: TaskState::Sleeping,
            ready_at_ps: 0,
            timer_ps: Ps::MAX,
            body: TaskBody::Kthread(k),
            cur_op: None,
            last: OpResult::None,
            fds: Vec::new(),
            stats: Default::default(),
            mm: None,
            tlb_ubc: Default::default(),
            oom_killed: false,
            tgid: id,
            multi_threaded: false,
            group_exit: false,
            oom_score_adj: 0,
            fault_retry: None,
            fault_retry_major: false,
            reclaim_throttled_on: None,
            alloc_no_progress_loops: 0,
            fault_retry_tried: false,
            memcg: crate::mm::memcontrol::ROOT_MEM_CGROUP,
            memcg_nr_pages_over_high: 0,
            memcg_high_delay_ps: 0,
            psi_flags: 0,
            psi_sleep_memstall: false,
            nr_dirtied: 0,
            nr_dirtied_pause: crate::fs::dirty_throttle::INIT_NR_DIRTIED_PAUSE,
            dirty_paused_when: 0,
            bdp_pending: 0,
            held_pages: Vec::new(),
        }
    }

    /// User task `id` named `name` on `cpu` running `program` from `start` (asleep until
    /// then), in `memcg`, a process of its own (tgid = id) with address space `mm`.
    pub fn user(
        id: TaskId,
        name: String,
        cpu: CpuId,
        start: Ps,
        program: Box<dyn crate::workload::Program>,
        memcg: crate::mm::memcontrol::MemcgId,
        oom_score_adj: i16,
    ) -> Task {
        Task {
            ready_at_ps: start,
            timer_ps: start,
            body: TaskBody::User(program),
            stats: TaskStats {
                start_ps: start,
                ..Default::default()
            },
            oom_score_adj,
            memcg,
            ..Task::kthread(id, name, cpu, KThread::ZswapShrink)
        }
    }

    /// True for kernel threads.
    pub fn is_kthread(&self) -> bool {
        matches!(self.body, TaskBody::Kthread(_))
    }

    /// fatal_signal_pending: the OOM killer chose the task, or its process is exiting
    /// (zap_other_threads); it exits at its next step.
    pub fn fatal_signal_pending(&self) -> bool {
        self.oom_killed || self.group_exit
    }
}
