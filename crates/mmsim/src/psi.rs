//! Pressure stall information (kernel/sched/psi.c, v4.20): the memory, IO and CPU
//! pressure of the whole machine (/proc/pressure/memory, io, cpu) and of each memory cgroup
//! (memory.pressure, io.pressure, cpu.pressure).
//!
//! # What is tracked
//!
//! Each task carries the kernel's PSI task flags ([`flags`]):
//! - `RUNNING` from its wake-up (psi_enqueue) to its next sleep (psi_dequeue), on-CPU time
//!   included;
//! - `ONCPU` while its CPU runs it: from the start of its step until another task's step
//!   starts on the CPU (psi_task_switch; the engine's round robin between runnable tasks)
//!   or it sleeps;
//! - `IOWAIT` while it sleeps in io_schedule: on a page lock (lock_page,
//!   wait_on_page_locked) or on page writeback, and in balance_dirty_pages' pause;
//! - `MEMSTALL` between psi_memstall_enter and psi_memstall_leave: direct reclaim
//!   (__perform_reclaim), memcg reclaim (try_to_free_mem_cgroup_pages: memory.max,
//!   memory.high and memory.reclaim), kswapd's balance_pgdat, the memory.high throttling
//!   sleep, the sleeps reclaim takes inside those sections (reclaim_throttle), the
//!   submission of reads of refaulted workingset pages (read_pages with
//!   rac->_workingset, filemap_read_folio), and a wait for the lock of a page being read
//!   back in that was part of the workingset (PG_workingset and not uptodate:
//!   folio_wait_bit_common's thrashing case).
//!
//! Each change of a task's flags is recorded on its CPU with its time and the task's
//! cgroup ([`Psi::record`]); the changes count, per CPU and per cgroup (the task's and its
//! ancestors', the root being the system), the tasks in each state (psi_group_change), and
//! the states' times follow (test_state):
//! - memory some: a task is in memstall; memory full: a task is in memstall and every
//!   runnable task is (5.16's NR_MEMSTALL_RUNNING: reclaim on the CPU counts as full);
//! - io some: a task waits for IO; io full: a task waits for IO and none is runnable;
//! - cpu some: a runnable task is not on the CPU; cpu full: runnable tasks and none of them
//!   on the CPU (a cgroup's; undefined, and shown as zeros, for the machine);
//! - non-idle: a task is runnable, in memstall or waits for IO.
//!
//! Every PSI_FREQ (2 s + 1 jiffy) the per-CPU times are folded into each group's totals,
//! each CPU weighted by its non-idle time in jiffies (collect_percpu_times), and the
//! running averages avg10, avg60 and avg300 take the period's share (update_averages,
//! calc_avgs: the load-average fixed point, FSHIFT 11). The report reads the files at the
//! end of the run as psi_show does: totals up to the end, averages as of the last period.
//!
//! Records are buffered per CPU and applied in time order at each period's end: the engine
//! runs a CPU's step as one piece, so a wake-up another CPU causes can carry an earlier time
//! than the CPU's own last record; no record can be earlier than the action the engine
//! runs, so a period is complete once an action starts after its end.
//!
//! CPU pressure follows the engine's scheduling: a CPU runs one step (one syscall, one page
//! access, one writeback batch) of a task at a time and takes its runnable tasks round robin
//! at step boundaries, where CFS would give each a time slice; the stall is the time a
//! runnable task waits for the steps of the others.
//!
//! IRQ pressure (6.1, CONFIG_IRQ_TIME_ACCOUNTING: psi_account_irqtime): the time of an
//! interrupt handler (a TLB-flush IPI, a block completion) counts as IRQ full time of the
//! cgroup of the task the CPU was running and of its ancestors; an interrupt on an idle
//! CPU counts for nobody. The kernel accounts it at the next tick or context switch; here
//! at the handler's end.
//!
//! Not modelled: the avgs worker's stop on idle groups (the periods here
//! run on a fixed grid from boot; an idle period decays the averages as the kernel's catch-up
//! does, up to rounding), triggers (poll), and the memstall of swap_read_folio while it
//! submits the read of a workingset page (its wait is counted).

use crate::machine::Ps;
use crate::mm::memcontrol::MemcgId;

/// PSI task flags (TSK_*), as `Task::psi_flags` holds them.
pub mod flags {
    /// TSK_IOWAIT: sleeping in io_schedule.
    pub const IOWAIT: u8 = 1 << 0;
    /// TSK_MEMSTALL: in a memory stall section.
    pub const MEMSTALL: u8 = 1 << 1;
    /// TSK_RUNNING: runnable (on the run queue or on the CPU).
    pub const RUNNING: u8 = 1 << 2;
    /// TSK_ONCPU: the task its CPU runs (psi_task_switch).
    pub const ONCPU: u8 = 1 << 3;
}

/// HZ of the modelled kernels (a jiffy is 1 ms).
const HZ: u64 = 1000;
/// PSI_FREQ: the averaging period, 2 s + 1 jiffy, ns.
pub const PSI_PERIOD_NS: u64 = (2 * HZ + 1) * 1_000_000_000 / HZ;
const PSI_PERIOD_PS: Ps = PSI_PERIOD_NS * 1000;
/// FSHIFT / FIXED_1 of the load-average fixed point.
const FSHIFT: u32 = 11;
const FIXED_1: u64 = 1 << FSHIFT;
/// 1/exp(2s/10s), 1/exp(2s/60s), 1/exp(2s/300s) in fixed point.
const EXP: [u64; 3] = [1677, 1981, 2034];

/// The states (enum psi_states): the seven stall states and non-idle. IRQ_FULL is not a
/// state of the task counts: interrupt time is added to it directly (psi_account_irqtime).
const IO_SOME: usize = 0;
const IO_FULL: usize = 1;
const MEM_SOME: usize = 2;
const MEM_FULL: usize = 3;
const CPU_SOME: usize = 4;
const CPU_FULL: usize = 5;
const IRQ_FULL: usize = 6;
const NONIDLE: usize = 7;
const NR_STALL: usize = 7;
const NR_STATES: usize = 8;

/// Task counts (enum psi_task_count): NR_IOWAIT, NR_MEMSTALL, NR_RUNNING,
/// NR_MEMSTALL_RUNNING, and the on-CPU task (the kernel's PSI_ONCPU state bit).
const NR_COUNTS: usize = 5;

/// One change of a task's flags, or (`irq` > 0, flags unchanged) interrupt time taken
/// while a task of `group` was on the CPU.
#[derive(Clone, Copy, Debug)]
struct Change {
    at: Ps,
    group: MemcgId,
    old: u8,
    new: u8,
    irq: Ps,
}

/// The counts a task's flags add (NR_MEMSTALL_RUNNING: in memstall and runnable).
const fn counts_of(f: u8) -> [u32; NR_COUNTS] {
    let io = f & flags::IOWAIT != 0;
    let mem = f & flags::MEMSTALL != 0;
    let run = f & flags::RUNNING != 0;
    let oncpu = f & flags::ONCPU != 0;
    [
        io as u32,
        mem as u32,
        run as u32,
        (mem && run) as u32,
        oncpu as u32,
    ]
}

/// The counts of `counts_of(f)` as a bit mask (bit `i`: count `i` is 1), for every
/// combination of the four task flags.
const COUNT_BITS: [u8; 16] = {
    let mut t = [0; 16];
    let mut f = 0;
    while f < 16 {
        let c = counts_of(f as u8);
        let mut i = 0;
        while i < NR_COUNTS {
            t[f] |= (c[i] as u8) << i;
            i += 1;
        }
        f += 1;
    }
    t
};

/// The bit mask of `counts_of(f)` (the flags are the four low bits: the others count for
/// nothing).
#[inline]
fn count_bits(f: u8) -> u8 {
    const _: () = assert!(
        (flags::IOWAIT | flags::MEMSTALL | flags::RUNNING | flags::ONCPU) as usize
            == COUNT_BITS.len() - 1
    );
    COUNT_BITS[usize::from(f & 15)]
}

/// One group on one CPU (struct psi_group_cpu).
#[derive(Clone, Copy, Debug, Default)]
struct GroupCpu {
    tasks: [u32; NR_COUNTS],
    /// The states in force (bit per state).
    mask: u8,
    /// Since when, ps.
    state_start: Ps,
    /// Time in each state since boot, ps.
    times: [u64; NR_STATES],
    /// `times` in ns when last collected (times_prev).
    prev_ns: [u64; NR_STATES],
}

impl GroupCpu {
    /// record_times: the states in force until `at`.
    fn integrate(&mut self, at: Ps) {
        let at = at.max(self.state_start);
        let d = at - self.state_start;
        if d > 0 {
            // Each state in force, lowest first.
            let mut m = self.mask;
            while m != 0 {
                self.times[m.trailing_zeros() as usize] += d;
                m &= m - 1;
            }
        }
        self.state_start = at;
    }

    /// test_state for every state.
    fn update_mask(&mut self) {
        let [io, mem, run, mem_run, oncpu] = self.tasks;
        let mut m = 0u8;
        if run > oncpu {
            m |= 1 << CPU_SOME;
        }
        if run > 0 && oncpu == 0 {
            m |= 1 << CPU_FULL;
        }
        if io > 0 {
            m |= 1 << IO_SOME;
            if run == 0 {
                m |= 1 << IO_FULL;
            }
        }
        if mem > 0 {
            m |= 1 << MEM_SOME;
            if run == mem_run {
                m |= 1 << MEM_FULL;
            }
        }
        if io > 0 || mem > 0 || run > 0 {
            m |= 1 << NONIDLE;
        }
        self.mask = m;
    }
}

/// One group's aggregated figures (struct psi_group).
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    /// Stall time per state, ns (total[PSI_AVGS]).
    total: [u64; NR_STALL],
    /// The part of `total` the averages have seen.
    avg_total: [u64; NR_STALL],
    /// avg10, avg60, avg300 per state, fixed point.
    avg: [[u64; 3]; NR_STALL],
    avg_last_update: u64,
    avg_next_update: u64,
}

/// calc_load: one step of an exponential moving average in fixed point.
fn calc_load(load: u64, exp: u64, active: u64) -> u64 {
    let mut newload = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        newload += FIXED_1 - 1;
    }
    newload / FIXED_1
}

/// fixed_power_int: `x`^`n` in fixed point with `FSHIFT` fraction bits, rounded.
fn fixed_power_int(mut x: u64, mut n: u64) -> u64 {
    let mut result = FIXED_1;
    while n > 0 {
        if n & 1 == 1 {
            result = (result * x + (FIXED_1 >> 1)) >> FSHIFT;
        }
        n >>= 1;
        if n > 0 {
            x = (x * x + (FIXED_1 >> 1)) >> FSHIFT;
        }
    }
    result
}

/// calc_avgs: decay over `missed` idle periods, then take the share of `time` in
/// `period`.
fn calc_avgs(avg: &mut [u64; 3], missed: u64, time: u64, period: u64) {
    if missed > 0 {
        for (a, &e) in avg.iter_mut().zip(&EXP) {
            *a = calc_load(*a, fixed_power_int(e, missed), 0);
        }
    }
    let pct = time * 100 / period.max(1) * FIXED_1;
    for (a, &e) in avg.iter_mut().zip(&EXP) {
        *a = calc_load(*a, e, pct);
    }
}

/// A fixed-point average as psi_show prints it (LOAD_INT.LOAD_FRAC): percent, two
/// decimals.
fn shown(avg: u64) -> f64 {
    let int = avg >> FSHIFT;
    let frac = ((avg & (FIXED_1 - 1)) * 100) >> FSHIFT;
    int as f64 + frac as f64 / 100.0
}

/// One line of a pressure file: `some` or `full`.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PressureLine {
    /// Share of the last 10 s stalled, percent (avg10).
    pub avg10: f64,
    /// Over 60 s.
    pub avg60: f64,
    /// Over 300 s.
    pub avg300: f64,
    /// Stall time since boot, µs (total).
    pub total_us: u64,
}

/// A pressure file (memory.pressure, io.pressure): its `some` and `full` lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PressureFile {
    /// At least one task stalled.
    pub some: PressureLine,
    /// Every non-idle task stalled.
    pub full: PressureLine,
}

/// A group's pressure files.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pressure {
    /// memory.pressure (/proc/pressure/memory for the root).
    pub memory: PressureFile,
    /// io.pressure (/proc/pressure/io for the root).
    pub io: PressureFile,
    /// cpu.pressure (/proc/pressure/cpu for the root, whose `full` line is all zeros: CPU
    /// full is undefined for the whole machine).
    pub cpu: PressureFile,
    /// irq.pressure (/proc/pressure/irq; 6.1 with CONFIG_IRQ_TIME_ACCOUNTING): interrupt
    /// time taken from the group's running tasks. The file has a `full` line only; `some`
    /// is all zeros here. None before 6.1, where the file does not exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub irq: Option<PressureFile>,
}

/// The PSI state of the machine: per-CPU buffers of changes, per-CPU group states and the
/// groups' totals and averages.
#[derive(Clone, Debug)]
pub struct Psi {
    /// PSI exists in the run's kernel (4.20 and later).
    pub enabled: bool,
    /// IRQ pressure exists too (6.1 and later).
    irq: bool,
    nr_groups: usize,
    /// Each group's parent (the memcg tree; the root has none).
    parent: Vec<Option<MemcgId>>,
    /// Changes not yet applied, per CPU.
    pending: Vec<Vec<Change>>,
    /// Group states per CPU: `cpu * nr_groups + group`.
    cpus: Vec<GroupCpu>,
    groups: Vec<Group>,
    /// The end of the current period, ps.
    next_ps: Ps,
    /// The end of the last period applied, ps (records are never earlier).
    done_ps: Ps,
    /// The stall totals at each period's end, as the aggregator collected them (the
    /// report's pressure time series). Written only; at most `PSI_HISTORY_MAX` entries.
    pub history: Vec<PressureSample>,
}

/// The PSI stall totals at the end of one aggregation period.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq, Eq, Default)]
pub struct PressureSample {
    /// The period's end, virtual ns.
    pub t_ns: u64,
    /// Per group (/proc/pressure first, then each cgroup's files, in memcg order):
    /// [memory some, memory full, io some, io full] total, µs.
    pub totals: Vec<[u64; 4]>,
}

/// The most periods `Psi::history` keeps (about 23 days of virtual time).
pub const PSI_HISTORY_MAX: usize = 1 << 20;

impl Psi {
    /// PSI for `nr_cpus` CPUs and the groups whose parents are `parent` (group 0 the root).
    pub fn new(enabled: bool, nr_cpus: usize, parent: Vec<Option<MemcgId>>) -> Psi {
        let nr_groups = parent.len().max(1);
        let group = Group {
            avg_next_update: PSI_PERIOD_NS,
            ..Default::default()
        };
        Psi {
            enabled,
            irq: enabled,
            nr_groups,
            parent,
            pending: vec![Vec::new(); if enabled { nr_cpus } else { 0 }],
            cpus: vec![GroupCpu::default(); if enabled { nr_cpus * nr_groups } else { 0 }],
            groups: vec![group; nr_groups],
            // Disabled: no period ever ends.
            next_ps: if enabled { PSI_PERIOD_PS } else { Ps::MAX },
            done_ps: 0,
            history: Vec::new(),
        }
    }

    /// IRQ pressure on or off (6.1's PSI_IRQ_FULL; a kernel from 4.20 to 6.0 has PSI
    /// without it, and its irq pressure stays zero here).
    pub fn with_irq(mut self, on: bool) -> Psi {
        self.irq = self.enabled && on;
        self
    }

    /// psi_task_change: a task of `group` on `cpu` went from flags `old` to `new` at `at`.
    #[inline]
    pub fn record(&mut self, cpu: usize, at: Ps, group: MemcgId, old: u8, new: u8) {
        if self.enabled && old != new {
            self.pending[cpu].push(Change {
                at,
                group,
                old,
                new,
                irq: 0,
            });
        }
    }

    /// psi_account_irqtime: `irq` of interrupt time ending at `at` on `cpu`, taken while a
    /// task of `group` was the CPU's current task; it counts as IRQ full time of the group
    /// and its ancestors.
    #[inline]
    pub fn record_irq(&mut self, cpu: usize, at: Ps, group: MemcgId, irq: Ps) {
        if self.irq && irq > 0 {
            self.pending[cpu].push(Change {
                at,
                group,
                old: 0,
                new: 0,
                irq,
            });
        }
    }

    /// The time the stall totals are accounted up to (the end of the last period folded).
    pub fn accounted_to(&self) -> Ps {
        self.done_ps
    }

    /// The engine is about to run an action at `t`: fold every period that ended by then.
    #[inline]
    pub fn advance(&mut self, t: Ps) {
        if self.next_ps <= t {
            self.fold_periods(t);
        }
    }

    #[cold]
    #[inline(never)]
    fn fold_periods(&mut self, t: Ps) {
        while self.next_ps <= t {
            let b = self.next_ps;
            self.apply_until(b);
            self.collect(b);
            let now_ns = b / 1000;
            if self.history.len() < PSI_HISTORY_MAX {
                let totals = self
                    .groups
                    .iter()
                    .map(|g| [MEM_SOME, MEM_FULL, IO_SOME, IO_FULL].map(|s| g.total[s] / 1000))
                    .collect();
                self.history.push(PressureSample {
                    t_ns: now_ns,
                    totals,
                });
            }
            for g in 0..self.nr_groups {
                if now_ns >= self.groups[g].avg_next_update {
                    self.update_averages(g, now_ns);
                }
            }
            self.next_ps += PSI_PERIOD_PS;
        }
    }

    /// Apply the buffered changes before `b` in time order and bring every CPU's group
    /// states to `b`.
    fn apply_until(&mut self, b: Ps) {
        let n = self.nr_groups;
        for cpu in 0..self.pending.len() {
            let mut buf = std::mem::take(&mut self.pending[cpu]);
            buf.sort_by_key(|c| c.at);
            let split = buf.partition_point(|c| c.at < b);
            for c in &buf[..split] {
                // A change is never earlier than the last period applied (see the module
                // comment); should one be, it counts from there.
                let at = c.at.max(self.done_ps);
                // psi_group_change's count updates, `(count + new).saturating_sub(old)` per
                // count: a count in both or neither of the flags' stays as it is; only those
                // that come (+1) or go (-1, not below 0) change.
                let (old, new) = (count_bits(c.old), count_bits(c.new));
                let (inc, dec) = (new & !old, old & !new);
                let mut g = Some(c.group);
                while let Some(id) = g {
                    let gc = &mut self.cpus[cpu * n + id as usize];
                    gc.integrate(at);
                    if c.irq > 0 {
                        gc.times[IRQ_FULL] += c.irq;
                    } else {
                        let mut m = inc;
                        while m != 0 {
                            gc.tasks[m.trailing_zeros() as usize] += 1;
                            m &= m - 1;
                        }
                        let mut m = dec;
                        while m != 0 {
                            let t = &mut gc.tasks[m.trailing_zeros() as usize];
                            *t = t.saturating_sub(1);
                            m &= m - 1;
                        }
                        gc.update_mask();
                    }
                    g = self.parent.get(id as usize).copied().flatten();
                }
            }
            buf.drain(..split);
            self.pending[cpu] = buf;
            for gc in &mut self.cpus[cpu * n..(cpu + 1) * n] {
                gc.integrate(b);
            }
        }
        self.done_ps = self.done_ps.max(b);
    }

    /// collect_percpu_times: fold the CPUs' times since the last collection into the
    /// groups' totals, each CPU weighted by its non-idle jiffies.
    fn collect(&mut self, _now: Ps) {
        let n = self.nr_groups;
        let nr_cpus = self.pending.len();
        for g in 0..n {
            let mut deltas = [0u128; NR_STALL];
            let mut nonidle_total = 0u128;
            for cpu in 0..nr_cpus {
                let gc = &mut self.cpus[cpu * n + g];
                let mut t = [0u64; NR_STATES];
                for ((d, &cum), prev) in t.iter_mut().zip(&gc.times).zip(&mut gc.prev_ns) {
                    let ns = cum / 1000;
                    *d = ns - *prev;
                    *prev = ns;
                }
                // nsecs_to_jiffies.
                let nonidle = u128::from(t[NONIDLE] / (1_000_000_000 / HZ));
                nonidle_total += nonidle;
                for (d, &x) in deltas.iter_mut().zip(&t) {
                    *d += u128::from(x) * nonidle;
                }
            }
            for (total, d) in self.groups[g].total.iter_mut().zip(deltas) {
                *total += (d / nonidle_total.max(1)) as u64;
            }
        }
    }

    /// update_averages at `now` (ns).
    fn update_averages(&mut self, g: usize, now: u64) {
        let grp = &mut self.groups[g];
        let expires = grp.avg_next_update;
        let missed = if now - expires >= PSI_PERIOD_NS {
            (now - expires) / PSI_PERIOD_NS
        } else {
            0
        };
        grp.avg_next_update = expires + (1 + missed) * PSI_PERIOD_NS;
        let period = now - (grp.avg_last_update + missed * PSI_PERIOD_NS);
        grp.avg_last_update = now;
        for s in 0..NR_STALL {
            let sample = (grp.total[s] - grp.avg_total[s]).min(period);
            grp.avg_total[s] += sample;
            calc_avgs(&mut grp.avg[s], missed, sample, period);
        }
    }

    /// The pressure files of every group as a read at `end` shows them (psi_show: the
    /// times collected up to `end`; the averages updated if a period ended).
    pub fn read(&self, end: Ps) -> Vec<Pressure> {
        // A copy of the state without the history (a read neither needs nor keeps it).
        let mut p = Psi {
            enabled: self.enabled,
            irq: self.irq,
            nr_groups: self.nr_groups,
            parent: self.parent.clone(),
            pending: self.pending.clone(),
            cpus: self.cpus.clone(),
            groups: self.groups.clone(),
            next_ps: self.next_ps,
            done_ps: self.done_ps,
            history: Vec::new(),
        };
        if p.enabled {
            p.advance(end);
            if end > p.done_ps {
                p.apply_until(end);
                p.collect(end);
            }
        }
        p.groups
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let line = |s: usize| PressureLine {
                    avg10: shown(g.avg[s][0]),
                    avg60: shown(g.avg[s][1]),
                    avg300: shown(g.avg[s][2]),
                    total_us: g.total[s] / 1000,
                };
                Pressure {
                    memory: PressureFile {
                        some: line(MEM_SOME),
                        full: line(MEM_FULL),
                    },
                    io: PressureFile {
                        some: line(IO_SOME),
                        full: line(IO_FULL),
                    },
                    irq: p.irq.then(|| PressureFile {
                        some: PressureLine::default(),
                        full: line(IRQ_FULL),
                    }),
                    cpu: PressureFile {
                        some: line(CPU_SOME),
                        // psi_show: "CPU FULL is undefined at the system level".
                        full: if i == 0 {
                            PressureLine::default()
                        } else {
                            line(CPU_FULL)
                        },
                    },
                }
            })
            .collect()
    }
}

/// The invariants of pressure files read at `end`: in every group and resource, a full
/// stall is never longer than a partial one, no stall is longer than the time since boot,
/// and the averages are shares (0–100 %).
pub fn check(files: &[Pressure], end: Ps) -> Result<(), String> {
    let end_us = end / 1_000_000;
    for (g, p) in files.iter().enumerate() {
        for (res, f) in [("memory", &p.memory), ("io", &p.io), ("cpu", &p.cpu)] {
            if f.full.total_us > f.some.total_us {
                return Err(format!(
                    "group {g} {res}: full {} us above some {} us",
                    f.full.total_us, f.some.total_us
                ));
            }
            if f.some.total_us > end_us + 1 {
                return Err(format!(
                    "group {g} {res}: some {} us after {end_us} us of run",
                    f.some.total_us
                ));
            }
            for l in [&f.some, &f.full] {
                if [l.avg10, l.avg60, l.avg300]
                    .iter()
                    .any(|a| !(0.0..=100.0).contains(a))
                {
                    return Err(format!("group {g} {res}: an average out of 0-100 %: {l:?}"));
                }
            }
        }
        // irq.pressure: a full line only, no longer than the run, averages shares.
        let Some(irq) = &p.irq else {
            continue;
        };
        let l = &irq.full;
        if irq.some != PressureLine::default() || l.total_us > end_us + 1 {
            return Err(format!("group {g} irq: {irq:?} after {end_us} us of run"));
        }
        if [l.avg10, l.avg60, l.avg300]
            .iter()
            .any(|a| !(0.0..=100.0).contains(a))
        {
            return Err(format!("group {g} irq: an average out of 0-100 %: {l:?}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ps = 1_000_000_000;

    #[test]
    fn a_task_stalled_half_the_time_shows_half_some_and_full() {
        // One CPU, one group: a task runs 1 s, then sits in memstall (reclaim on the CPU)
        // for 1 s, and so on.
        let mut p = Psi::new(true, 1, vec![None]);
        let r = flags::RUNNING;
        let m = flags::MEMSTALL | flags::RUNNING;
        p.record(0, 0, 0, 0, r);
        let mut t = 0;
        for _ in 0..50 {
            p.record(0, t + 1000 * MS, 0, r, m);
            p.record(0, t + 2000 * MS, 0, m, r);
            t += 2000 * MS;
        }
        let got = p.read(t)[0];
        // 50 s in memstall: some and full alike (the only runnable task is stalled).
        assert_eq!(got.memory.some.total_us, 50_000_000);
        assert_eq!(got.memory.full.total_us, 50_000_000);
        assert_eq!(got.io.some.total_us, 0);
        // The averages approach the 50 % share.
        assert!(
            (got.memory.some.avg10 - 50.0).abs() < 3.0,
            "{:?}",
            got.memory.some
        );
    }

    #[test]
    fn a_runnable_unstalled_task_makes_memory_pressure_some_but_not_full() {
        let mut p = Psi::new(true, 1, vec![None]);
        // Task A stalls (memstall, sleeping) while task B runs.
        p.record(0, 0, 0, 0, flags::RUNNING); // B
        p.record(0, 0, 0, 0, flags::MEMSTALL); // A
        let got = p.read(1000 * MS)[0];
        assert_eq!(got.memory.some.total_us, 1_000_000);
        assert_eq!(got.memory.full.total_us, 0);
        // B leaves: now full too.
        let mut p2 = p.clone();
        p2.record(0, 1000 * MS, 0, flags::RUNNING, 0);
        let got = p2.read(2000 * MS)[0];
        assert_eq!(got.memory.some.total_us, 2_000_000);
        assert_eq!(got.memory.full.total_us, 1_000_000);
    }

    #[test]
    fn io_full_needs_no_runnable_task_and_cpus_weigh_by_nonidle_time() {
        // CPU 0: a task waits for IO the whole 4.002 s; CPU 1: a task runs the whole time.
        let mut p = Psi::new(true, 2, vec![None]);
        p.record(0, 0, 0, 0, flags::IOWAIT);
        p.record(1, 0, 0, 0, flags::RUNNING);
        let end = 2 * PSI_PERIOD_PS;
        let got = p.read(end)[0];
        // Each CPU is non-idle all along: weights equal, so half the time counts.
        let half_us = PSI_PERIOD_NS / 1000;
        assert_eq!(got.io.some.total_us, half_us);
        assert_eq!(got.io.full.total_us, half_us);
        assert_eq!(got.memory.some.total_us, 0);
    }

    #[test]
    fn a_cgroup_sees_its_tasks_and_the_root_sees_all() {
        // Groups: 0 root, 1 child of root; a memstalled task in 1 and a runnable one in 0.
        let mut p = Psi::new(true, 1, vec![None, Some(0)]);
        p.record(0, 0, 1, 0, flags::MEMSTALL);
        p.record(0, 0, 0, 0, flags::RUNNING);
        let got = p.read(1000 * MS);
        assert_eq!(
            got[1].memory.full.total_us, 1_000_000,
            "only its task: full"
        );
        assert_eq!(got[0].memory.some.total_us, 1_000_000);
        assert_eq!(
            got[0].memory.full.total_us, 0,
            "the root has a runnable task"
        );
    }

    #[test]
    fn changes_recorded_out_of_order_on_a_cpu_apply_in_time_order() {
        let mut a = Psi::new(true, 1, vec![None]);
        let mut b = Psi::new(true, 1, vec![None]);
        let ch = [
            (0, 0, flags::MEMSTALL),
            (700 * MS, flags::MEMSTALL, 0),
            (300 * MS, 0, flags::RUNNING),
        ];
        for &(at, o, n) in &ch[..2] {
            a.record(0, at, 0, o, n);
        }
        // `b` gets the RUNNING change first: same result once sorted.
        b.record(0, 300 * MS, 0, 0, flags::RUNNING);
        for &(at, o, n) in &ch[..2] {
            b.record(0, at, 0, o, n);
        }
        a.record(0, 300 * MS, 0, 0, flags::RUNNING);
        assert_eq!(a.read(3000 * MS), b.read(3000 * MS));
        let got = a.read(3000 * MS)[0];
        assert_eq!(got.memory.some.total_us, 700_000);
        assert_eq!(got.memory.full.total_us, 300_000);
    }

    #[test]
    fn the_averages_follow_the_kernels_fixed_point() {
        // A period entirely stalled: avg10 = 100 % × (1 − e^(−2/10)) in the kernel's
        // arithmetic.
        let mut avg = [0u64; 3];
        calc_avgs(&mut avg, 0, PSI_PERIOD_NS, PSI_PERIOD_NS);
        let expect = (100 * FIXED_1 * (FIXED_1 - EXP[0])).div_ceil(FIXED_1);
        assert_eq!(avg[0], expect);
        // 1 − e^(−0.2) = 18.13 %; the fixed point shows 18.11.
        assert!((shown(avg[0]) - 18.13).abs() < 0.05, "{}", shown(avg[0]));
        // An idle period decays it by EXP_10s once.
        let mut a1 = avg;
        calc_avgs(&mut a1, 1, 0, PSI_PERIOD_NS);
        let mut a2 = avg;
        calc_avgs(&mut a2, 0, 0, PSI_PERIOD_NS);
        calc_avgs(&mut a2, 0, 0, PSI_PERIOD_NS);
        assert_eq!(a1[0], a2[0]);
        assert_eq!(fixed_power_int(EXP[0], 1), EXP[0]);
        assert_eq!(fixed_power_int(EXP[0], 0), FIXED_1);
    }

    #[test]
    fn a_task_waiting_for_its_cpu_is_cpu_pressure() {
        // Groups: 0 root, 1 and 2 children. On the one CPU, a task of 1 runs (on the CPU)
        // while a task of 2 waits runnable for 1 s.
        let mut p = Psi::new(true, 1, vec![None, Some(0), Some(0)]);
        p.record(0, 0, 1, 0, flags::RUNNING | flags::ONCPU);
        p.record(0, 0, 2, 0, flags::RUNNING);
        let got = p.read(1000 * MS);
        assert_eq!(got[0].cpu.some.total_us, 1_000_000, "machine: some");
        assert_eq!(got[0].cpu.full, PressureLine::default(), "undefined");
        assert_eq!(got[1].cpu.some.total_us, 0, "group 1 runs");
        assert_eq!(got[2].cpu.some.total_us, 1_000_000);
        assert_eq!(got[2].cpu.full.total_us, 1_000_000, "none of 2 on the CPU");
        assert_eq!(got[0].memory, PressureFile::default());
    }

    #[test]
    fn check_finds_a_full_stall_longer_than_some_and_stalls_longer_than_the_run() {
        let mut p = Psi::new(true, 1, vec![None]);
        p.record(0, 0, 0, 0, flags::MEMSTALL);
        let files = p.read(1000 * MS);
        assert_eq!(check(&files, 1000 * MS), Ok(()));
        assert!(check(&files, 500 * MS).is_err(), "1 s of stall in 0.5 s");
        let mut bad = files.clone();
        bad[0].io.full.total_us = 1;
        assert!(check(&bad, 1000 * MS).unwrap_err().contains("io: full"));
    }

    #[test]
    fn disabled_psi_reports_zeros() {
        let mut p = Psi::new(false, 2, vec![None]);
        p.record(1, 0, 0, 0, flags::MEMSTALL);
        p.advance(10_000 * MS);
        assert_eq!(p.read(10_000 * MS)[0], Pressure::default());
    }

    #[test]
    fn interrupt_time_is_irq_full_of_the_running_tasks_group_and_its_ancestors() {
        // Root (0) and a child (1); a task of the child runs on CPU 0 for a second and
        // takes 10 ms and 20 ms of interrupts; an idle CPU 1's interrupt counts for nobody.
        let mut p = Psi::new(true, 2, vec![None, Some(0)]);
        p.record(0, 0, 1, 0, flags::RUNNING | flags::ONCPU);
        p.record_irq(0, 100 * MS, 1, 10 * MS);
        p.record_irq(0, 500 * MS, 1, 20 * MS);
        let got = p.read(1000 * MS);
        for g in [0, 1] {
            assert_eq!(got[g].irq.unwrap().full.total_us, 30_000, "group {g}");
            assert_eq!(got[g].irq.unwrap().some, PressureLine::default());
            assert_eq!(got[g].memory.some.total_us, 0);
        }
        assert!(check(&got, 1000 * MS).is_ok());
        // Accounted in its period: a record after the read's end is not seen yet.
        let mut later = p.clone();
        later.record_irq(0, 1500 * MS, 1, 5 * MS);
        assert_eq!(later.read(1000 * MS)[1].irq.unwrap().full.total_us, 30_000);
        assert_eq!(later.read(2000 * MS)[1].irq.unwrap().full.total_us, 35_000);
        // Disabled (an era without PSI): nothing recorded.
        let mut off = Psi::new(false, 1, vec![None]);
        off.record_irq(0, 0, 0, MS);
        assert_eq!(off.read(MS)[0], Pressure::default());
    }
}
