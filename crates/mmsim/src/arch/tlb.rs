//! The per-CPU TLB (x86 semantics) and the TLB flush primitives (arch/x86/mm/tlb.c).
//!
//! The TLB is 4-way set associative with LRU replacement inside a set (the second-level
//! STLB of the seeds' Intel parts: 1536 entries, 12-way; 4-way keeps it cheap to simulate,
//! capacity is what matters here). An entry caches (mm, virtual page) → (pfn, writable,
//! dirty). Hardware rules:
//! - a hit uses the cached translation without looking at the page table — a stale entry
//!   keeps working until it is flushed;
//! - a miss walks the page table (cost) and sets the PTE's accessed (young) bit, and the
//!   dirty bit for a write;
//! - the first write through a cached *clean* entry makes the hardware walk the page table
//!   to set the dirty bit, and that walk faults if the PTE is no longer present — the
//!   architecture guarantee seed 002 relies on. A cached *dirty* entry writes silently.
//!
//! Flushes: `flush_tlb_page` invalidates one entry locally (INVLPG) and sends one IPI to
//! every other CPU in the mm's cpumask (nr_tlb_remote_flush once, received per target);
//! `flush_tlb_others` for a full flush (the batched path); `local_flush_tlb` (CR3 reload).
//! IPIs are events: each target keeps running with its TLB until the IPI arrives
//! (send time + latency), then takes the interrupt (handler cost stolen from its timeline,
//! "TLB shootdowns" in /proc/interrupts); a waiting sender spins until the last target has
//! acknowledged — send + latency + handler, whatever the target's own clock. Before the
//! waiting sender goes on, the engine runs every other CPU up to the IPIs' arrival and
//! delivers them (`Sim::run_others_until`): a target whose clock is behind the sender's
//! does everything it does before the IPI reaches it — through the translation being
//! flushed — before the sender frees the page or writes it out, as in the kernel, where
//! the sender waits for the acknowledgements.

use crate::machine::profile::KFunc;
use crate::machine::{Cpumask, Event, Mode, Ps};
use crate::mm::page::Pfn;
use crate::mm::vmstat::VmItem;
use crate::sim::{Ctx, Sim};

/// Ways per set.
pub const TLB_WAYS: usize = 4;
/// Default entries per CPU.
pub const TLB_ENTRIES: usize = 1536;
/// tlb_single_page_flush_ceiling: above this many pages a range flush is a full flush.
pub const TLB_SINGLE_PAGE_FLUSH_CEILING: u64 = 33;

/// One cached translation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TlbEntry {
    /// mm id + 1 (0 = invalid).
    pub mm: u32,
    /// Virtual page number.
    pub vpn: u64,
    /// Physical page.
    pub pfn: Pfn,
    /// Writable translation.
    pub write: bool,
    /// The hardware has set the PTE's dirty bit through this entry.
    pub dirty: bool,
    /// LRU stamp within the set.
    pub stamp: u32,
    /// Identity of the page when the entry was filled (mapping, index) for the oracle.
    pub owner: (u32, u64),
}

/// A CPU's TLB.
///
/// A full flush is O(1): it starts a new generation, and a set last written in an older
/// generation reads as empty (and is cleared when next written), the state an eager clear
/// of every entry would leave.
#[derive(Clone, Debug)]
pub struct Tlb {
    sets: Vec<[TlbEntry; TLB_WAYS]>,
    /// The generation each set was last valid in.
    set_gen: Vec<u32>,
    /// The current generation (bumped by `flush_all`).
    gen: u32,
    clock: u32,
    /// Hits.
    pub hits: u64,
    /// Misses (page walks).
    pub misses: u64,
}

impl Tlb {
    /// An empty TLB of `entries` entries.
    pub fn new(entries: usize) -> Tlb {
        let sets = (entries / TLB_WAYS).max(1);
        Tlb {
            sets: vec![[TlbEntry::default(); TLB_WAYS]; sets],
            set_gen: vec![0; sets],
            gen: 0,
            clock: 0,
            hits: 0,
            misses: 0,
        }
    }
    #[inline]
    fn set_of(&self, mm: u32, vpn: u64) -> usize {
        let h = vpn.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(mm).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        ((h >> 20) as usize) % self.sets.len()
    }
    /// Set `s`, cleared first if a full flush since it was last written left it stale.
    #[inline]
    fn set_mut(&mut self, s: usize) -> &mut [TlbEntry; TLB_WAYS] {
        if self.set_gen[s] != self.gen {
            self.set_gen[s] = self.gen;
            self.sets[s] = [TlbEntry::default(); TLB_WAYS];
        }
        &mut self.sets[s]
    }
    /// Look up a translation; refreshes its LRU stamp.
    pub fn lookup(&mut self, mm: u32, vpn: u64) -> Option<&mut TlbEntry> {
        let s = self.set_of(mm, vpn);
        self.clock = self.clock.wrapping_add(1);
        let clock = self.clock;
        let e = self
            .set_mut(s)
            .iter_mut()
            .find(|e| e.mm == mm + 1 && e.vpn == vpn)?;
        e.stamp = clock;
        Some(e)
    }
    /// Insert a translation, evicting the set's least recently used entry.
    pub fn fill(&mut self, mut e: TlbEntry) {
        let s = self.set_of(e.mm - 1, e.vpn);
        self.clock = self.clock.wrapping_add(1);
        e.stamp = self.clock;
        let set = self.set_mut(s);
        let slot = set
            .iter()
            .position(|x| x.mm == e.mm && x.vpn == e.vpn)
            .or_else(|| set.iter().position(|x| x.mm == 0))
            .unwrap_or_else(|| {
                let clock = e.stamp;
                (0..TLB_WAYS)
                    .max_by_key(|&i| clock.wrapping_sub(set[i].stamp))
                    .unwrap_or(0)
            });
        set[slot] = e;
    }
    /// INVLPG: drop one translation.
    pub fn flush_one(&mut self, mm: u32, vpn: u64) {
        let s = self.set_of(mm, vpn);
        for e in self.set_mut(s).iter_mut() {
            if e.mm == mm + 1 && e.vpn == vpn {
                *e = TlbEntry::default();
            }
        }
    }
    /// Full flush (CR3 reload without PCID): a new generation.
    #[inline]
    pub fn flush_all(&mut self) {
        if self.gen == u32::MAX {
            // The generation would wrap: clear eagerly once and start again at 0.
            for set in self.sets.iter_mut() {
                *set = [TlbEntry::default(); TLB_WAYS];
            }
            self.set_gen.fill(0);
            self.gen = 0;
        } else {
            self.gen += 1;
        }
    }
    /// Valid entries (for the checker and tests).
    pub fn entries(&self) -> impl Iterator<Item = &TlbEntry> {
        let gen = self.gen;
        self.sets
            .iter()
            .zip(self.set_gen.iter())
            .filter(move |(_, g)| **g == gen)
            .flat_map(|(s, _)| s.iter())
            .filter(|e| e.mm != 0)
    }
}

/// What an IPI asks the target to flush.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlushKind {
    /// One page of one mm (flush_tlb_page's remote part).
    One {
        /// mm id.
        mm: u32,
        /// Virtual page.
        vpn: u64,
    },
    /// Everything (the batched unmap flush, or a range above the ceiling).
    All,
}

impl Sim {
    /// Send a TLB-flush IPI from the running CPU to each CPU in `targets` (not the sender)
    /// and, when `wait`, spin until every target has acknowledged (smp_call_function_many).
    pub fn send_tlb_ipis(&mut self, targets: &Cpumask, kind: FlushKind, wait: bool) {
        if targets.is_empty() {
            return;
        }
        let prev = self.enter(KFunc::FlushTlbOthers);
        let send = self.costs.ipi_send_ps * u64::from(targets.weight());
        self.charge(send);
        let now = self.now();
        let mut last_ack = now;
        let mut last_arrival = now;
        let my_node = self.cur_node();
        for c in targets.iter() {
            // Across nodes the interrupt message and the flush request's cache lines travel
            // further: latency and handler grow with the node distance.
            let far = if self.cpus[c].node == my_node {
                0
            } else {
                self.costs
                    .cacheline_transfer_ps(my_node as u32, self.cpus[c].node as u32)
            };
            let arrival = now + self.costs.ipi_latency_ps + far;
            // The target takes the interrupt at `arrival`. A target whose clock already ran
            // past that point (it is ahead within its own step) has the handler time stolen
            // from its timeline when the event is processed; its acknowledgement still
            // counts from `arrival`, so the sender does not inherit the target's clock skew.
            last_ack = last_ack.max(arrival + self.costs.ipi_receive_ps + far);
            last_arrival = last_arrival.max(arrival);
            let id = match self.ipi_free.pop() {
                Some(id) => {
                    self.ipis[id as usize] = Some((c, kind, far));
                    id
                }
                None => {
                    self.ipis.push(Some((c, kind, far)));
                    (self.ipis.len() - 1) as u32
                }
            };
            self.events.push(arrival, Event::Ipi(id));
        }
        if wait {
            // While the sender spins, the targets (and the rest of the machine) run up to
            // the IPIs' arrival and take them: a target whose clock is behind uses the
            // translation until then, and not after the sender goes on (`run_others_until`).
            self.run_others_until(last_arrival);
            if last_ack > self.now() {
                let spin = last_ack - self.now();
                self.charge(spin);
            }
        }
        self.leave(prev);
    }

    /// An IPI reached its target at `t`: the target takes the interrupt and flushes.
    pub fn ipi_arrive(&mut self, id: u32, t: Ps) {
        let Some((c, kind, far)) = self.ipis[id as usize].take() else {
            return;
        };
        self.ipi_free.push(id);
        // A CPU in the middle of a step (a sender spinning for acknowledgements while the
        // engine runs the others up to its IPIs' arrival) takes the interrupt within that
        // step: its clock goes on from where the step is, not to `t`.
        if !self.stepping_mask.test(c) {
            self.cpu_idle_until(c, t);
        }
        let saved = self.switch_ctx(Ctx {
            cpu: c,
            mode: Mode::Irq,
            func: KFunc::FlushTlbFunc,
            ..self.cur
        });
        self.cpus[c].interrupts += 1;
        self.cpus[c].tlb_shootdowns += 1;
        self.charge(self.costs.ipi_receive_ps + far);
        match kind {
            FlushKind::One { mm, vpn } => {
                // flush_tlb_func: a CPU that has another mm loaded ignores the request.
                if self.cpu_active_mm[c] == Some(mm) {
                    self.vmstat.inc(VmItem::NrTlbRemoteFlushReceived);
                    if self.cpu_lazy[c] {
                        self.leave_mm(c);
                    } else {
                        self.charge(self.costs.invlpg_ps);
                        self.tlbs[c].flush_one(mm, vpn);
                    }
                }
            }
            FlushKind::All => {
                // percpu_flush_tlb_batch_pages / a full flush.
                self.vmstat.inc(VmItem::NrTlbRemoteFlushReceived);
                self.charge(self.costs.tlb_flush_all_ps);
                self.tlbs[c].flush_all();
            }
        }
        self.switch_ctx(saved);
    }

    /// Other CPUs in `mm`'s cpumask.
    pub fn mm_cpumask_others(&self, mm: u32) -> Cpumask {
        match self.mms.get(mm as usize).and_then(|m| m.as_ref()) {
            Some(m) => m.cpumask().without(self.cur.cpu),
            None => Cpumask::default(),
        }
    }

    /// flush_tlb_page: INVLPG locally (if this CPU has the mm loaded), then one IPI to every
    /// other CPU in the mm's cpumask, waiting for them.
    pub fn flush_tlb_page(&mut self, mm: u32, vpn: u64) {
        let prev = self.enter(KFunc::FlushTlbPage);
        let me = self.cur.cpu;
        if self.cpu_active_mm[me] == Some(mm) {
            if self.cpu_lazy[me] {
                // A kernel thread borrowing the mm lazily drops it instead (leave_mm).
                self.leave_mm(me);
            } else {
                self.charge(self.costs.invlpg_ps);
                self.tlbs[me].flush_one(mm, vpn);
                self.vmstat.inc(VmItem::NrTlbLocalFlushOne);
            }
        }
        if self
            .mms
            .get(mm as usize)
            .and_then(|m| m.as_ref())
            .is_some_and(|m| m.cpumask().any_but(me))
        {
            let others = self.mm_cpumask_others(mm);
            self.vmstat.inc(VmItem::NrTlbRemoteFlush);
            self.send_tlb_ipis(&others, FlushKind::One { mm, vpn }, true);
        }
        self.leave(prev);
    }

    /// local_flush_tlb: full flush of the running CPU's TLB (nr_tlb_local_flush_all).
    pub fn local_flush_tlb(&mut self) {
        let me = self.cur.cpu;
        self.charge(self.costs.tlb_flush_all_ps);
        self.tlbs[me].flush_all();
        self.vmstat.inc(VmItem::NrTlbLocalFlushAll);
    }

    /// flush_tlb_mm_range: up to the ceiling page by page, above it a full flush everywhere.
    pub fn flush_tlb_mm_range(&mut self, mm: u32, start_vpn: u64, end_vpn: u64) {
        let n = end_vpn.saturating_sub(start_vpn);
        if n == 0 {
            return;
        }
        if n > TLB_SINGLE_PAGE_FLUSH_CEILING {
            let prev = self.enter(KFunc::FlushTlbPage);
            let me = self.cur.cpu;
            if self.mms[mm as usize]
                .as_ref()
                .is_some_and(|m| m.cpumask_test(me))
            {
                self.local_flush_tlb();
            }
            let others = self.mm_cpumask_others(mm);
            if !others.is_empty() {
                self.vmstat.inc(VmItem::NrTlbRemoteFlush);
                self.send_tlb_ipis(&others, FlushKind::All, true);
            }
            self.leave(prev);
        } else {
            // One INVLPG per page locally and one IPI round for the range.
            let prev = self.enter(KFunc::FlushTlbPage);
            let me = self.cur.cpu;
            if self.mms[mm as usize]
                .as_ref()
                .is_some_and(|m| m.cpumask_test(me))
            {
                for vpn in start_vpn..end_vpn {
                    self.charge(self.costs.invlpg_ps);
                    self.tlbs[me].flush_one(mm, vpn);
                    self.vmstat.inc(VmItem::NrTlbLocalFlushOne);
                }
            }
            let others = self.mm_cpumask_others(mm);
            if !others.is_empty() {
                self.vmstat.inc(VmItem::NrTlbRemoteFlush);
                // The remote handler flushes the range one page at a time too; modelled as
                // one full flush per target when the range spans several pages.
                let kind = if n == 1 {
                    FlushKind::One { mm, vpn: start_vpn }
                } else {
                    FlushKind::All
                };
                self.send_tlb_ipis(&others, kind, true);
            }
            self.leave(prev);
        }
    }
}
