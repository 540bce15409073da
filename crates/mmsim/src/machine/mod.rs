//! The machine layer: topology, per-CPU virtual clocks and time accounting, the cost table,
//! spin locks with contention, the event queue, and the cost profile.

pub mod cost;
pub mod profile;

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Virtual time in picoseconds (integer; the simulation never reads the host clock).
pub type Ps = u64;
/// Index of a virtual CPU.
pub type CpuId = usize;
/// Index of a NUMA node.
pub type NodeId = usize;

/// Convert picoseconds to nanoseconds for reports.
pub fn ps_to_ns(ps: Ps) -> u64 {
    ps / 1_000
}

/// What a CPU is doing when it is charged: decides the user / system / interrupt bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Running user code.
    User = 0,
    /// Running kernel code on behalf of a task or a kernel thread.
    System,
    /// Running an interrupt handler (IO completion, IPI).
    Irq,
}

/// One virtual CPU: its clock and where its time went.
#[derive(Clone, Debug, Default)]
pub struct Cpu {
    /// This CPU's id.
    pub id: CpuId,
    /// The node it belongs to.
    pub node: NodeId,
    /// This CPU's virtual clock.
    pub clock_ps: Ps,
    /// Time by `Mode` (user, system, interrupt): one indexed add per charge.
    pub mode_ps: [Ps; 3],
    /// Time idle.
    pub idle_ps: Ps,
    /// Interrupts taken (IO completions, IPIs).
    pub interrupts: u64,
    /// "TLB shootdowns" row of /proc/interrupts for this CPU.
    pub tlb_shootdowns: u64,
    /// Until when the store buffer holds stores of a bulk copy or zero.
    pub store_drain_until_ps: Ps,
}

impl Cpu {
    /// Time in user mode.
    pub fn user_ps(&self) -> Ps {
        self.mode_ps[Mode::User as usize]
    }
    /// Time in kernel mode (system).
    pub fn sys_ps(&self) -> Ps {
        self.mode_ps[Mode::System as usize]
    }
    /// Time in interrupt handlers.
    pub fn irq_ps(&self) -> Ps {
        self.mode_ps[Mode::Irq as usize]
    }
    /// Advance an idle CPU's clock to `t` (no-op if it is already past `t`), accounting idle time.
    pub fn idle_until(&mut self, t: Ps) {
        if self.clock_ps < t {
            self.idle_ps += t - self.clock_ps;
            self.clock_ps = t;
        }
    }
}

/// Words of a `Cpumask`: NR_CPUS is the scenario limit of 1024 CPUs.
const CPUMASK_WORDS: usize = 16;

/// struct cpumask: one bit per CPU, inline (no heap), so masks are copied, tested and
/// walked in words rather than one `bool` per CPU. `hi` bounds the words ever set, so a
/// machine of a few dozen CPUs walks one word, not the 16 of NR_CPUS.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cpumask {
    bits: [u64; CPUMASK_WORDS],
    /// Words `hi..` are zero.
    hi: u8,
}

impl PartialEq for Cpumask {
    fn eq(&self, other: &Cpumask) -> bool {
        self.bits == other.bits
    }
}

impl Eq for Cpumask {}

impl Cpumask {
    /// The words that may be non-zero.
    #[inline]
    fn words(&self) -> &[u64] {
        &self.bits[..usize::from(self.hi)]
    }
    /// cpumask_test_cpu.
    #[inline]
    pub fn test(&self, cpu: CpuId) -> bool {
        self.bits[cpu / 64] & (1 << (cpu % 64)) != 0
    }
    /// cpumask_set_cpu.
    #[inline]
    pub fn set(&mut self, cpu: CpuId) {
        let w = cpu / 64;
        self.bits[w] |= 1 << (cpu % 64);
        if w >= usize::from(self.hi) {
            self.hi = (w + 1) as u8;
        }
    }
    /// cpumask_clear_cpu.
    #[inline]
    pub fn clear(&mut self, cpu: CpuId) {
        self.bits[cpu / 64] &= !(1 << (cpu % 64));
    }
    /// cpumask_clear: every bit off.
    #[inline]
    pub fn clear_all(&mut self) {
        let hi = usize::from(self.hi);
        self.bits[..hi].fill(0);
        self.hi = 0;
    }
    /// cpumask_or: add every CPU of `other`.
    #[inline]
    pub fn or(&mut self, other: &Cpumask) {
        for (a, b) in self.bits.iter_mut().zip(other.words()) {
            *a |= *b;
        }
        self.hi = self.hi.max(other.hi);
    }
    /// A copy without `cpu` (the "others" of a mask, as smp_call_function_many skips self).
    #[inline]
    pub fn without(&self, cpu: CpuId) -> Cpumask {
        let mut m = *self;
        m.clear(cpu);
        m
    }
    /// Whether the mask has a CPU other than `cpu` (cpumask_any_but(mask, cpu) <
    /// nr_cpu_ids), without copying the mask.
    #[inline]
    pub fn any_but(&self, cpu: CpuId) -> bool {
        self.words().iter().enumerate().any(|(i, w)| {
            let own = if i == cpu / 64 { 1 << (cpu % 64) } else { 0 };
            w & !own != 0
        })
    }
    /// cpumask_empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.words().iter().all(|w| *w == 0)
    }
    /// cpumask_weight.
    #[inline]
    pub fn weight(&self) -> u32 {
        self.words().iter().map(|w| w.count_ones()).sum()
    }
    /// for_each_cpu: the CPUs in the mask, in ascending order.
    #[inline]
    pub fn iter(&self) -> CpumaskIter<'_> {
        CpumaskIter {
            words: self.words(),
            i: 0,
            w: self.words().first().copied().unwrap_or(0),
        }
    }
}

/// The CPUs of a `Cpumask`, ascending.
pub struct CpumaskIter<'a> {
    words: &'a [u64],
    /// Index of the word `w` came from.
    i: usize,
    /// Bits of word `i` not yet returned.
    w: u64,
}

impl Iterator for CpumaskIter<'_> {
    type Item = CpuId;
    #[inline]
    fn next(&mut self) -> Option<CpuId> {
        while self.w == 0 {
            self.i += 1;
            self.w = *self.words.get(self.i)?;
        }
        let b = self.w.trailing_zeros() as usize;
        self.w &= self.w - 1;
        Some(self.i * 64 + b)
    }
}

/// A spin lock in virtual time: it records when it becomes free and which node last held it.
///
/// A CPU that takes a busy lock spins until it is free and pays the hand-off; a lock last held
/// on another node also costs the cache-line transfer (queued spinlock semantics, no fairness
/// modelled beyond arrival order in virtual time).
#[derive(Clone, Debug, Default)]
pub struct SpinLock {
    held_from_ps: Ps,
    free_at_ps: Ps,
    last_node: NodeId,
    /// Times the lock was taken.
    pub acquisitions: u64,
    /// Times the taker had to wait.
    pub contended: u64,
}

impl SpinLock {
    /// Take the lock at `now` on `node`; returns the cost (spin + lock) the taker must be charged.
    /// The caller must call `release` with the time the critical section ends. (Inlined
    /// into its two callers, tree_lock and lru_lock: every page-cache insertion and
    /// deletion takes it.)
    #[inline(always)]
    pub fn acquire(&mut self, now: Ps, node: NodeId, costs: &cost::CostTable) -> Ps {
        self.acquisitions += 1;
        let mut cost = costs.spin_lock_ps;
        // Only a hold that overlaps `now` makes the taker spin. A CPU whose clock is behind
        // the last holder's acquisition came first in virtual time (the holder ran ahead in
        // its own step); it does not wait for a critical section that starts later.
        if now >= self.held_from_ps && self.free_at_ps > now {
            self.contended += 1;
            cost += self.free_at_ps - now + costs.lock_handoff_ps;
        }
        self.held_from_ps = now + cost;
        if self.last_node != node {
            cost += costs.cacheline_transfer_ps(self.last_node as u32, node as u32);
            self.last_node = node;
        }
        cost
    }
    /// Release the lock at `now`.
    #[inline]
    pub fn release(&mut self, now: Ps) {
        self.free_at_ps = now.max(self.held_from_ps);
    }
}

/// Something that happens at a point in virtual time, independent of any CPU's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A block request finished.
    IoComplete(u32),
    /// A sleeping task's timer expired.
    Wake(u32),
    /// An inter-processor interrupt reached its target.
    Ipi(u32),
}

/// The event queue: earliest first, ties broken by insertion sequence number.
///
/// TLB-flush IPIs wait in a heap of their own: there are only ever a few in flight (a
/// sender waits for its IPIs), while timers and IO completions number thousands, so an IPI
/// costs a push and a pop on a small heap instead of the large one. Both heaps share the
/// sequence number and `pop` takes the earlier head by (time, sequence): the order is the
/// one a single heap gives.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(Ps, u64, EventKey)>>,
    ipis: BinaryHeap<Reverse<(Ps, u64, u32)>>,
    seq: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct EventKey(u8, u32);

impl EventQueue {
    /// Schedule `ev` at `t`.
    #[inline]
    pub fn push(&mut self, t: Ps, ev: Event) {
        self.seq += 1;
        let key = match ev {
            Event::IoComplete(id) => EventKey(0, id),
            Event::Wake(id) => EventKey(1, id),
            Event::Ipi(id) => {
                self.ipis.push(Reverse((t, self.seq, id)));
                return;
            }
        };
        self.heap.push(Reverse((t, self.seq, key)));
    }
    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Ps> {
        let a = self.heap.peek().map(|Reverse((t, _, _))| *t);
        let b = self.ipis.peek().map(|Reverse((t, _, _))| *t);
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        }
    }
    /// Remove and return the earliest event.
    pub fn pop(&mut self) -> Option<(Ps, Event)> {
        let ipi_first = match (self.heap.peek(), self.ipis.peek()) {
            (Some(Reverse((t, s, _))), Some(Reverse((ti, si, _)))) => (ti, si) < (t, s),
            (None, Some(_)) => true,
            _ => false,
        };
        if ipi_first {
            return self
                .ipis
                .pop()
                .map(|Reverse((t, _, id))| (t, Event::Ipi(id)));
        }
        self.heap.pop().map(|Reverse((t, _, k))| {
            let ev = match k.0 {
                0 => Event::IoComplete(k.1),
                _ => Event::Wake(k.1),
            };
            (t, ev)
        })
    }
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.ipis.len()
    }
    /// True when no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.ipis.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// IPIs in their own heap still come out in (time, sequence) order with the rest.
    #[test]
    fn events_and_ipis_pop_by_time_then_sequence() {
        let mut q = EventQueue::default();
        let evs = [
            (30, Event::Wake(1)),
            (10, Event::Ipi(7)),
            (10, Event::IoComplete(2)),
            (10, Event::Ipi(8)),
            (5, Event::Wake(3)),
            (30, Event::Ipi(9)),
            (20, Event::IoComplete(4)),
        ];
        for (t, e) in evs {
            q.push(t, e);
        }
        assert_eq!(q.len(), 7);
        assert_eq!(q.peek_time(), Some(5));
        let mut out = Vec::new();
        while let Some(x) = q.pop() {
            out.push(x);
        }
        assert_eq!(
            out,
            vec![
                (5, Event::Wake(3)),
                (10, Event::Ipi(7)),
                (10, Event::IoComplete(2)),
                (10, Event::Ipi(8)),
                (20, Event::IoComplete(4)),
                (30, Event::Wake(1)),
                (30, Event::Ipi(9)),
            ]
        );
        assert!(q.is_empty());
    }

    /// Masks walk, count and compare by their bits, whatever words were touched.
    #[test]
    fn cpumask_ops() {
        let mut m = Cpumask::default();
        assert!(m.is_empty());
        assert_eq!(m.iter().count(), 0);
        for c in [3, 64, 130, 1023] {
            m.set(c);
        }
        assert_eq!(m.iter().collect::<Vec<_>>(), vec![3, 64, 130, 1023]);
        assert_eq!(m.weight(), 4);
        assert!(m.test(130) && !m.test(131));
        let o = m.without(1023);
        assert_eq!(o.iter().collect::<Vec<_>>(), vec![3, 64, 130]);
        m.clear(1023);
        assert_eq!(m, o);
        let mut e = Cpumask::default();
        e.set(700);
        e.clear(700);
        assert!(e.is_empty());
        assert_eq!(e, Cpumask::default());
        let mut a = Cpumask::default();
        a.set(1);
        a.or(&m);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![1, 3, 64, 130]);
        a.clear_all();
        assert!(a.is_empty() && a.iter().next().is_none());
        // any_but: another CPU than the one named, in any word.
        assert!(!a.any_but(5));
        a.set(5);
        assert!(!a.any_but(5) && a.any_but(6) && a.any_but(64));
        a.set(600);
        assert!(a.any_but(5) && a.any_but(600));
        a.clear(5);
        assert!(!a.any_but(600));
        for (x, y) in [(0, 1), (63, 64), (64, 127), (1023, 0)] {
            let mut b = Cpumask::default();
            b.set(x);
            b.set(y);
            assert_eq!(b.any_but(x), b.without(x).iter().next().is_some());
            assert!(b.any_but(x) && b.any_but(y));
        }
    }
}
