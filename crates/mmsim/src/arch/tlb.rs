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
/// How many mms a TLB tracks as having entries since its last full flush (`Tlb::flush_mm`).
const PRESENT_MMS: usize = 8;
/// Default entries per CPU.
pub const TLB_ENTRIES: usize = 1536;
/// tlb_single_page_flush_ceiling: above this many pages a range flush is a full flush.
pub const TLB_SINGLE_PAGE_FLUSH_CEILING: u64 = 33;

/// Bits of the virtual page number in a TLB tag: user addresses end below 2^56
/// (`mm::mmap::TASK_SIZE`, x86-64 with 5-level paging), so a page number has 44 bits.
const TAG_VPN_BITS: u32 = 44;
/// The largest mm id a tag holds (20 bits for mm id + 1); `scenario::MAX_TASKS` keeps a
/// run's mm ids below it.
pub const TLB_MAX_MM: u32 = (1 << (64 - TAG_VPN_BITS)) - 2;

/// One cached translation (what `lookup` returns and `entries` lists).
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
    /// Identity of the page when the entry was filled (mapping, index) for the oracle.
    pub owner: (u32, u64),
}

/// One set: what a lookup reads, in one cache line.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct TlbSet {
    /// Per way: `(mm + 1) << TAG_VPN_BITS | vpn`, or 0 (invalid).
    tag: [u64; TLB_WAYS],
    /// Per way: the physical page.
    pfn: [Pfn; TLB_WAYS],
    /// The generation the set was last written in (older: the set reads as empty).
    gen: u32,
    /// The ways from most to least recently used, two bits each (bits 0-1: the most
    /// recent). Every valid way was used since it was filled, so with four valid ways
    /// the last is the least recently used one.
    lru: u8,
    /// Bit w: way w is writable; bit 4 + w: its dirty bit was set through it.
    flags: u8,
}

/// The ways in order 0, 1, 2, 3.
const LRU_INIT: u8 = 0b11_10_01_00;

/// `order` after a use of way `w`: `w` goes first and the ways used more recently than it
/// move one place back, for every `order` byte and way.
static LRU_TOUCH: [[u8; TLB_WAYS]; 256] = {
    let mut t = [[0u8; TLB_WAYS]; 256];
    let mut order = 0;
    while order < 256 {
        let mut w = 0;
        while w < TLB_WAYS {
            let mut out = w as u8;
            let mut shift = 2;
            let mut i = 0;
            while i < TLB_WAYS {
                let x = ((order >> (2 * i)) & 3) as u8;
                // (Only permutations of the ways occur; the guard keeps the rest defined.)
                if x != w as u8 && shift < 8 {
                    out |= x << shift;
                    shift += 2;
                }
                i += 1;
            }
            t[order][w] = out;
            w += 1;
        }
        order += 1;
    }
    t
};

impl TlbSet {
    const EMPTY: TlbSet = TlbSet {
        tag: [0; TLB_WAYS],
        pfn: [0; TLB_WAYS],
        gen: 0,
        lru: LRU_INIT,
        flags: 0,
    };

    /// The way holding `tag`.
    #[inline]
    fn find(&self, tag: u64) -> Option<usize> {
        self.tag.iter().position(|&t| t == tag)
    }

    /// Way `w` becomes the most recently used (`LRU_TOUCH`).
    #[inline]
    fn touch(&mut self, w: usize) {
        self.lru = LRU_TOUCH[usize::from(self.lru)][w];
    }

    /// The least recently used way.
    #[inline]
    fn lru_way(&self) -> usize {
        usize::from(self.lru >> 6)
    }

    fn entry(&self, w: usize, owner: (u32, u64)) -> TlbEntry {
        let t = self.tag[w];
        TlbEntry {
            mm: (t >> TAG_VPN_BITS) as u32,
            vpn: t & ((1 << TAG_VPN_BITS) - 1),
            pfn: self.pfn[w],
            write: self.flags & (1 << w) != 0,
            dirty: self.flags & (0x10 << w) != 0,
            owner,
        }
    }
}

/// A CPU's TLB.
///
/// Each set's tags, frames, flags, replacement order and generation share one cache line;
/// the oracle's record of what each entry translated to lives apart (read only on a hit).
/// A full flush is O(1): it starts a new generation, and a set last written in an older
/// generation reads as empty (and is cleared when next written), the state an eager clear
/// of every entry would leave.
#[derive(Clone, Debug)]
pub struct Tlb {
    sets: Vec<TlbSet>,
    /// Per set and way, the page (mapping, index) the entry was filled for (the oracle's).
    owners: Vec<[(u32, u64); TLB_WAYS]>,
    /// `2^64 / sets`, rounded up: the set index by multiplication (`set_of`).
    set_magic: u64,
    /// The current generation (bumped by `flush_all`).
    gen: u32,
    /// The mms (id + 1) filled since the last full flush, up to `PRESENT_MMS` of them
    /// (`flush_mm` of the only one is a full flush), and whether more were.
    present: [u32; PRESENT_MMS],
    /// How many of `present` are in use.
    n_present: u8,
    /// More mms than `present` holds were filled since the last full flush.
    present_overflow: bool,
    /// Hits.
    pub hits: u64,
    /// Misses (page walks).
    pub misses: u64,
}

impl Tlb {
    /// An empty TLB of `entries` entries (at most 4 M).
    pub fn new(entries: usize) -> Tlb {
        let sets = (entries / TLB_WAYS).clamp(1, 1 << 20);
        Tlb {
            sets: vec![TlbSet::EMPTY; sets],
            owners: vec![[(0, 0); TLB_WAYS]; sets],
            set_magic: fastmod_magic(sets as u64),
            gen: 0,
            present: [0; PRESENT_MMS],
            n_present: 0,
            present_overflow: false,
            hits: 0,
            misses: 0,
        }
    }

    /// Remember that `mm1` (an mm id + 1) has entries since the last full flush.
    #[inline]
    fn note_present(&mut self, mm1: u32) {
        let n = usize::from(self.n_present);
        if self.present[..n].contains(&mm1) {
            return;
        }
        if n < PRESENT_MMS {
            self.present[n] = mm1;
            self.n_present += 1;
        } else {
            self.present_overflow = true;
        }
    }

    /// The tag of (mm, vpn).
    #[inline]
    fn tag(mm: u32, vpn: u64) -> u64 {
        debug_assert!(
            mm <= TLB_MAX_MM && vpn >> TAG_VPN_BITS == 0,
            "mm {mm} vpn {vpn:#x}"
        );
        (u64::from(mm) + 1) << TAG_VPN_BITS | vpn
    }

    /// The set of (mm, vpn): a hash of both, modulo the number of sets.
    #[inline]
    fn set_of(&self, mm: u32, vpn: u64) -> usize {
        let h = vpn.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ u64::from(mm).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        fastmod(h >> 20, self.set_magic, self.sets.len() as u64) as usize
    }

    /// Set `s` for writing, cleared first if a full flush since it was last written left
    /// it stale.
    #[inline]
    fn set_mut(&mut self, s: usize) -> &mut TlbSet {
        let gen = self.gen;
        let set = &mut self.sets[s];
        if set.gen != gen {
            *set = TlbSet {
                gen,
                ..TlbSet::EMPTY
            };
        }
        set
    }

    /// Ask the host CPU to start loading the set of (mm, vpn), which a lookup is about to
    /// read (a host hint: no simulated effect). A mapped read over a large file touches a
    /// new set per page, and the TLBs of many CPUs do not stay in the host's caches.
    #[inline]
    pub fn prefetch(&self, mm: u32, vpn: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let s = self.set_of(mm, vpn);
            let set: *const TlbSet = &self.sets[s];
            // The owners too: a fill writes them, a hit reads them.
            let owners: *const [(u32, u64); TLB_WAYS] = &self.owners[s];
            // SAFETY: a prefetch never faults, and both point into this TLB's vectors.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(set.cast::<i8>());
                _mm_prefetch::<_MM_HINT_T0>(owners.cast::<i8>());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (mm, vpn);
    }

    /// The set and way caching (mm, vpn), if a current-generation set holds it.
    #[inline]
    fn find_entry(&self, mm: u32, vpn: u64) -> Option<(usize, usize)> {
        let s = self.set_of(mm, vpn);
        let set = &self.sets[s];
        if set.gen != self.gen {
            return None;
        }
        Some((s, set.find(Self::tag(mm, vpn))?))
    }

    /// Look up a translation; a hit makes it the most recently used of its set.
    #[inline]
    pub fn lookup(&mut self, mm: u32, vpn: u64) -> Option<TlbEntry> {
        let (s, w) = self.find_entry(mm, vpn)?;
        let set = &mut self.sets[s];
        set.touch(w);
        Some(set.entry(w, self.owners[s][w]))
    }

    /// The hardware set the PTE's dirty bit through the cached translation of (mm, vpn).
    pub fn set_dirty(&mut self, mm: u32, vpn: u64) {
        if let Some((s, w)) = self.find_entry(mm, vpn) {
            self.sets[s].flags |= 0x10 << w;
        }
    }

    /// Insert a translation (`e.mm` is the mm id + 1): in place of one of the same page,
    /// else in the first free way, else in place of the set's least recently used.
    pub fn fill(&mut self, e: TlbEntry) {
        let mm = e.mm - 1;
        if self.n_present == 0 || self.present[0] != e.mm || self.n_present > 1 {
            self.note_present(e.mm);
        }
        let s = self.set_of(mm, e.vpn);
        let tag = Self::tag(mm, e.vpn);
        let set = self.set_mut(s);
        let w = set
            .find(tag)
            .or_else(|| set.find(0))
            .unwrap_or_else(|| set.lru_way());
        set.tag[w] = tag;
        set.pfn[w] = e.pfn;
        set.flags &= !(0x11 << w);
        set.flags |= (u8::from(e.write) | u8::from(e.dirty) << 4) << w;
        set.touch(w);
        self.owners[s][w] = e.owner;
    }

    /// INVLPG: drop one translation.
    pub fn flush_one(&mut self, mm: u32, vpn: u64) {
        if let Some((s, w)) = self.find_entry(mm, vpn) {
            self.sets[s].tag[w] = 0;
        }
    }

    /// Flush the translations of one mm (a CR3 write without NOFLUSH for its PCID, or
    /// INVPCID single-context): a full flush when no other mm has filled an entry since
    /// the last one, else each set's ways of `mm` are invalidated.
    pub fn flush_mm(&mut self, mm: u32) {
        let mm1 = mm + 1;
        let n = usize::from(self.n_present);
        if !self.present_overflow && self.present[..n].iter().all(|&x| x == mm1) {
            self.flush_all();
            return;
        }
        let gen = self.gen;
        for set in self.sets.iter_mut().filter(|s| s.gen == gen) {
            for w in 0..TLB_WAYS {
                if set.tag[w] != 0 && (set.tag[w] >> TAG_VPN_BITS) as u32 == mm1 {
                    set.tag[w] = 0;
                }
            }
        }
        if let Some(i) = self.present[..n].iter().position(|&x| x == mm1) {
            self.present.copy_within(i + 1..n, i);
            self.n_present -= 1;
        }
    }

    /// Full flush (CR3 reload without PCID): a new generation.
    #[inline]
    pub fn flush_all(&mut self) {
        self.n_present = 0;
        self.present_overflow = false;
        if self.gen == u32::MAX {
            // The generation would wrap: clear eagerly once and start again at 0.
            self.sets.fill(TlbSet::EMPTY);
            self.gen = 0;
        } else {
            self.gen += 1;
        }
    }

    /// Valid entries (for the checker and tests).
    pub fn entries(&self) -> impl Iterator<Item = TlbEntry> + '_ {
        let gen = self.gen;
        self.sets
            .iter()
            .zip(self.owners.iter())
            .filter(move |(s, _)| s.gen == gen)
            .flat_map(|(s, o)| {
                (0..TLB_WAYS)
                    .filter(|&w| s.tag[w] != 0)
                    .map(move |w| s.entry(w, o[w]))
            })
    }
}

/// `fastmod`'s constant for divisor `d` (1 ≤ d ≤ 2^20): 2^64 / d rounded up.
fn fastmod_magic(d: u64) -> u64 {
    (u64::MAX / d).wrapping_add(1)
}

/// `n % d` for `n < 2^44` and `d ≤ 2^20` by two multiplications (Lemire, Kaser and Kurz,
/// "Faster remainder by direct computation", 2019: exact when the 64 fraction bits are at
/// least the bits of `n` plus those of `d`).
#[inline]
fn fastmod(n: u64, magic: u64, d: u64) -> u64 {
    debug_assert!(n >> 44 == 0 && d <= 1 << 20);
    let low = magic.wrapping_mul(n);
    ((u128::from(low) * u128::from(d)) >> 64) as u64
}

/// TLB_NR_DYN_ASIDS: the address spaces a CPU keeps translations of with PCID.
pub const TLB_NR_DYN_ASIDS: usize = 6;

/// How often a flush trims an mm's cpumask (`mm-cpumask-lazy`: HZ jiffies, one second).
pub const TRIM_CPUMASK_INTERVAL_PS: Ps = 1_000_000_000_000;

/// "No mm" in a [`FlushInfo`]: the batched unmap flush (flush_tlb_info.mm == NULL).
pub const FLUSH_NO_MM: u32 = u32::MAX;

/// struct tlb_state's context part (`tlb-gen`, `pcid`): per ASID, the mm it holds and the
/// tlb_gen its translations are current to.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuTlbState {
    /// ctxs[asid]: (mm id + 1, or 0 for none; tlb_gen). Without PCID only ASID 0 is used.
    pub ctxs: [(u32, u64); TLB_NR_DYN_ASIDS],
    /// loaded_mm_asid.
    pub loaded_asid: u8,
    /// next_asid: the slot choose_new_asid takes next when the mm has none.
    pub next_asid: u8,
}

/// struct flush_tlb_info (`tlb-gen`): what a flush asks of each CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushInfo {
    /// The mm, or `FLUSH_NO_MM` for the batched unmap flush (each CPU checks the mm it has
    /// loaded).
    pub mm: u32,
    /// First virtual page of the range.
    pub start: u64,
    /// Pages in the range, or 0 for a full flush (TLB_FLUSH_ALL).
    pub pages: u32,
    /// The mm's tlb_gen this flush was made for (0: TLB_GENERATION_INVALID, the batch).
    pub new_gen: u64,
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
    /// flush_tlb_func of 4.13+ (`tlb-gen`).
    Gen(FlushInfo),
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
        let irq_start = self.now();
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
            FlushKind::Gen(f) => self.flush_tlb_func(c, f, false),
        }
        self.psi_account_irqtime(c, irq_start);
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
        if self.features.tlb_gen {
            // 4.13: "x86/mm: Reimplement flush_tlb_page() using flush_tlb_mm_range()".
            self.flush_tlb_mm_range(mm, vpn, vpn + 1);
            return;
        }
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
        if self.features.tlb_gen {
            self.flush_tlb_mm_range_gen(mm, start_vpn, n, false);
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

    /// inc_mm_tlb_gen: a flush of `mm` (or an unmap added to a batch) starts; the new
    /// generation.
    pub fn inc_mm_tlb_gen(&mut self, mm: u32) -> u64 {
        let m = self.mm_mut(mm);
        m.tlb_gen += 1;
        m.tlb_gen
    }

    /// The CPUs of `mask` but `me` a flush IPI goes to: from v4.19 (`lazy-tlb-skip`) not
    /// those in lazy TLB mode (native_flush_tlb_multi's should_flush_tlb; no flush here
    /// frees page tables, the case that still reaches them: page-table pages are freed
    /// only when the mm goes, which needs no flush).
    /// From v6.13 (`mm-cpumask-lazy`) a flush of `mm` also skips the CPUs that have another
    /// mm loaded, unless it trims the mask (`trim`): then it reaches every CPU in it.
    fn flush_targets(
        &self,
        mask: &Cpumask,
        me: crate::machine::CpuId,
        mm: u32,
        trim: bool,
    ) -> Cpumask {
        let mut others = mask.without(me);
        if trim {
            return others;
        }
        let stale = self.features.mm_cpumask_lazy && mm != FLUSH_NO_MM;
        if self.features.lazy_tlb_skip || stale {
            for c in mask.iter() {
                if (self.features.lazy_tlb_skip && self.cpu_lazy[c])
                    || (stale && self.cpu_active_mm[c] != Some(mm))
                {
                    others.clear(c);
                }
            }
        }
        others
    }

    /// should_trim_cpumask (`mm-cpumask-lazy`): the first flush of `mm` after its trim time
    /// trims, and the next may a second later.
    fn should_trim_cpumask(&mut self, mm: u32) -> bool {
        if !self.features.mm_cpumask_lazy {
            return false;
        }
        let now = self.now();
        let m = self.mm_mut(mm);
        if now > m.next_trim_cpumask_ps {
            m.next_trim_cpumask_ps = now + TRIM_CPUMASK_INTERVAL_PS;
            return true;
        }
        false
    }

    /// flush_tlb_mm_range of 4.13+ (`tlb-gen`): the mm's generation advances; the local
    /// CPU, if it has the mm loaded, and each other CPU in its cpumask (one IPI round,
    /// nr_tlb_remote_flush once) run flush_tlb_func for `n` pages from `start` — a full
    /// flush above tlb_single_page_flush_ceiling.
    /// `freed_tables` (flush_tlb_mm's): every CPU in the mask, lazy ones too.
    fn flush_tlb_mm_range_gen(&mut self, mm: u32, start: u64, n: u64, freed_tables: bool) {
        let prev = self.enter(KFunc::FlushTlbPage);
        let new_gen = self.inc_mm_tlb_gen(mm);
        let f = FlushInfo {
            mm,
            start,
            pages: if n > TLB_SINGLE_PAGE_FLUSH_CEILING {
                0
            } else {
                n as u32
            },
            new_gen,
        };
        let me = self.cur.cpu;
        if self.cpu_active_mm[me] == Some(mm) {
            self.flush_tlb_func(me, f, true);
        }
        if self.mm(mm).cpumask().any_but(me) {
            let trim = self.should_trim_cpumask(mm);
            self.vmstat.inc(VmItem::NrTlbRemoteFlush);
            let targets = self.flush_targets(self.mm(mm).cpumask(), me, mm, trim || freed_tables);
            self.send_tlb_ipis(&targets, FlushKind::Gen(f), true);
        }
        self.leave(prev);
    }

    /// The batched unmap flush of 4.13+ (arch_tlbbatch_flush; `tlb-gen`): flush_tlb_func
    /// with no mm on the local CPU if it is in the batch's mask, and through
    /// flush_tlb_others on the others (nr_tlb_remote_flush once): each CPU flushes in full
    /// if the mm it has loaded is behind its tlb_gen, and does nothing if it is current.
    pub(crate) fn arch_tlbbatch_flush(&mut self, mask: &Cpumask) {
        let f = FlushInfo {
            mm: FLUSH_NO_MM,
            start: 0,
            pages: 0,
            new_gen: 0,
        };
        let me = self.cur.cpu;
        let any_other = mask.any_but(me);
        if mask.test(me) && !(any_other && self.features.lazy_tlb_skip && self.cpu_lazy[me]) {
            self.flush_tlb_func(me, f, true);
        }
        if any_other {
            self.vmstat.inc(VmItem::NrTlbRemoteFlush);
            let targets = self.flush_targets(mask, me, FLUSH_NO_MM, false);
            self.send_tlb_ipis(&targets, FlushKind::Gen(f), true);
        }
    }

    /// flush_tlb_func of 4.13+ (`tlb-gen`) on `cpu` (`local`: the flushing CPU itself,
    /// else an IPI's target, which counts nr_tlb_remote_flush_received). A CPU with another
    /// mm loaded than the one flushed, or none, does nothing; a lazy one leaves its mm
    /// (switch_mm to init_mm); one whose translations are current to the mm's tlb_gen does
    /// nothing; one exactly one generation behind a range flush made for the newest
    /// generation flushes those pages (INVLPG each); any other flushes the mm in full.
    pub(crate) fn flush_tlb_func(&mut self, cpu: crate::machine::CpuId, f: FlushInfo, local: bool) {
        if !local {
            self.vmstat.inc(VmItem::NrTlbRemoteFlushReceived);
            if f.mm != FLUSH_NO_MM && self.cpu_active_mm[cpu] != Some(f.mm) {
                // "The CPU was left in the mm_cpumask of the target mm. Clear it."
                if self.features.mm_cpumask_lazy {
                    if let Some(m) = self.mms[f.mm as usize].as_mut() {
                        m.cpumask_clear(cpu);
                    }
                }
                return;
            }
        }
        let Some(loaded) = self.cpu_active_mm[cpu] else {
            return;
        };
        if self.cpu_lazy[cpu] {
            self.leave_mm(cpu);
            return;
        }
        let asid = usize::from(self.cpu_tlbstate[cpu].loaded_asid);
        let local_gen = self.cpu_tlbstate[cpu].ctxs[asid].1;
        if f.new_gen != 0 && f.new_gen <= local_gen {
            return;
        }
        let mm_gen = self.mm(loaded).tlb_gen;
        if local_gen == mm_gen {
            return;
        }
        if f.pages != 0 && f.new_gen == local_gen + 1 && f.new_gen == mm_gen {
            for vpn in f.start..f.start + u64::from(f.pages) {
                self.charge(self.costs.invlpg_ps);
                self.tlbs[cpu].flush_one(loaded, vpn);
            }
            if local {
                self.vmstat
                    .add(VmItem::NrTlbLocalFlushOne, i64::from(f.pages));
            }
        } else {
            self.charge(self.costs.tlb_flush_all_ps);
            self.flush_tlb_local(cpu, loaded);
            if local {
                self.vmstat.inc(VmItem::NrTlbLocalFlushAll);
            }
        }
        self.cpu_tlbstate[cpu].ctxs[asid].1 = mm_gen;
    }

    /// flush_tlb_local: with PCID only the loaded ASID's translations (the mm's), without
    /// it the whole TLB.
    pub(crate) fn flush_tlb_local(&mut self, cpu: crate::machine::CpuId, mm: u32) {
        if self.features.pcid {
            self.tlbs[cpu].flush_mm(mm);
        } else {
            self.tlbs[cpu].flush_all();
        }
    }

    /// flush_tlb_mm: every translation of `mm` on every CPU that may cache it — a full
    /// flush_tlb_mm_range that, from v4.19, reaches lazy CPUs too (freed_tables).
    pub fn flush_tlb_mm(&mut self, mm: u32) {
        if self.features.tlb_gen {
            self.flush_tlb_mm_range_gen(mm, 0, u64::MAX, true);
        } else {
            self.flush_tlb_mm_range(
                mm,
                0,
                crate::mm::mmap::TASK_SIZE >> crate::mm::page::PAGE_SHIFT,
            );
        }
    }

    /// flush_tlb_batched_pending (v4.13, `tlb-flush-batched`): before a zap, mprotect or
    /// MADV_FREE / COLD / PAGEOUT changes `mm`'s PTEs, an mm whose PTEs reclaim cleared
    /// with a deferred flush since the last such call is flushed in full, whether or not
    /// the batch has been flushed since (mm->tlb_flush_batched is not reset by it).
    pub fn flush_tlb_batched_pending(&mut self, mm: u32) {
        if !self.features.tlb_flush_batched || !self.mm(mm).tlb_flush_batched {
            return;
        }
        self.flush_tlb_mm(mm);
        self.mm_mut(mm).tlb_flush_batched = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The TLB as first written: entries with a global LRU clock stamped on every use, the
    /// victim the valid way unused the longest. The compact `Tlb` must behave the same.
    struct Reference {
        sets: Vec<[(TlbEntry, u32); TLB_WAYS]>,
        clock: u32,
    }

    impl Reference {
        fn new(sets: usize) -> Reference {
            Reference {
                sets: vec![[(TlbEntry::default(), 0); TLB_WAYS]; sets],
                clock: 0,
            }
        }
        fn lookup(&mut self, s: usize, mm: u32, vpn: u64) -> Option<TlbEntry> {
            self.clock += 1;
            let clock = self.clock;
            let (e, stamp) = self.sets[s]
                .iter_mut()
                .find(|(e, _)| e.mm == mm + 1 && e.vpn == vpn)?;
            *stamp = clock;
            Some(*e)
        }
        fn fill(&mut self, s: usize, e: TlbEntry) {
            self.clock += 1;
            let clock = self.clock;
            let set = &mut self.sets[s];
            let w = set
                .iter()
                .position(|(x, _)| x.mm == e.mm && x.vpn == e.vpn)
                .or_else(|| set.iter().position(|(x, _)| x.mm == 0))
                .unwrap_or_else(|| {
                    (0..TLB_WAYS)
                        .max_by_key(|&i| clock.wrapping_sub(set[i].1))
                        .unwrap_or(0)
                });
            set[w] = (e, clock);
        }
        fn flush_one(&mut self, s: usize, mm: u32, vpn: u64) {
            for (e, st) in self.sets[s].iter_mut() {
                if e.mm == mm + 1 && e.vpn == vpn {
                    (*e, *st) = (TlbEntry::default(), 0);
                }
            }
        }
        fn flush_mm(&mut self, mm: u32) {
            for set in self.sets.iter_mut() {
                for (e, st) in set.iter_mut() {
                    if e.mm == mm + 1 {
                        (*e, *st) = (TlbEntry::default(), 0);
                    }
                }
            }
        }
        fn flush_all(&mut self) {
            for set in self.sets.iter_mut() {
                *set = [(TlbEntry::default(), 0); TLB_WAYS];
            }
        }
        fn entries(&self) -> Vec<TlbEntry> {
            let mut v: Vec<TlbEntry> = self
                .sets
                .iter()
                .flat_map(|s| s.iter().map(|(e, _)| *e))
                .filter(|e| e.mm != 0)
                .collect();
            v.sort_by_key(|e| (e.mm, e.vpn));
            v
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Lookup(u32, u64),
        Fill(u32, u64, u32, bool, bool),
        SetDirty(u32, u64),
        FlushOne(u32, u64),
        FlushMm(u32),
        FlushAll,
    }

    fn op() -> impl Strategy<Value = Op> {
        // Few mms and pages, so that sets fill, collide and evict; sometimes more mms than
        // a TLB tracks as present (`flush_mm`'s scan).
        let mm = prop_oneof![4 => 0u32..3, 1 => 0u32..12];
        let vpn = prop_oneof![0u64..24, Just((1 << TAG_VPN_BITS) - 1)];
        prop_oneof![
            4 => (mm.clone(), vpn.clone()).prop_map(|(m, v)| Op::Lookup(m, v)),
            4 => (mm.clone(), vpn.clone(), 0u32..1000, any::<bool>(), any::<bool>())
                .prop_map(|(m, v, p, w, d)| Op::Fill(m, v, p, w, d)),
            1 => (mm.clone(), vpn.clone()).prop_map(|(m, v)| Op::SetDirty(m, v)),
            1 => (mm.clone(), vpn).prop_map(|(m, v)| Op::FlushOne(m, v)),
            1 => mm.prop_map(Op::FlushMm),
            1 => Just(Op::FlushAll),
        ]
    }

    proptest! {
        /// The compact TLB hits, misses, evicts and flushes exactly as the reference.
        #[test]
        fn compact_tlb_behaves_as_the_reference(
            entries in prop_oneof![Just(4usize), Just(8), Just(24)],
            ops in proptest::collection::vec(op(), 1..400),
        ) {
            let mut t = Tlb::new(entries);
            let mut r = Reference::new(entries / TLB_WAYS);
            for op in ops {
                match op {
                    Op::Lookup(mm, vpn) => {
                        let s = t.set_of(mm, vpn);
                        prop_assert_eq!(t.lookup(mm, vpn), r.lookup(s, mm, vpn));
                    }
                    Op::Fill(mm, vpn, pfn, write, dirty) => {
                        let e = TlbEntry { mm: mm + 1, vpn, pfn, write, dirty, owner: (mm, vpn) };
                        let s = t.set_of(mm, vpn);
                        t.fill(e);
                        r.fill(s, e);
                    }
                    Op::SetDirty(mm, vpn) => {
                        // As the fault path does: right after a hit on the entry.
                        let s = t.set_of(mm, vpn);
                        if t.lookup(mm, vpn).is_some() {
                            t.set_dirty(mm, vpn);
                        }
                        if let Some(mut e) = r.lookup(s, mm, vpn) {
                            e.dirty = true;
                            r.fill(s, e);
                        }
                    }
                    Op::FlushOne(mm, vpn) => {
                        let s = t.set_of(mm, vpn);
                        t.flush_one(mm, vpn);
                        r.flush_one(s, mm, vpn);
                    }
                    Op::FlushMm(mm) => {
                        t.flush_mm(mm);
                        r.flush_mm(mm);
                    }
                    Op::FlushAll => {
                        t.flush_all();
                        r.flush_all();
                    }
                }
                let mut got: Vec<TlbEntry> = t.entries().collect();
                got.sort_by_key(|e| (e.mm, e.vpn));
                prop_assert_eq!(got, r.entries());
            }
        }

        /// The set index by multiplication is the remainder.
        #[test]
        fn fastmod_is_the_remainder(n in 0u64..(1 << 44), d in 1u64..=(1 << 20)) {
            prop_assert_eq!(fastmod(n, fastmod_magic(d), d), n % d);
        }
    }

    #[test]
    fn fastmod_at_the_edges() {
        for d in [1u64, 2, 3, 383, 384, 385, 1 << 19, (1 << 20) - 1, 1 << 20] {
            for n in [0u64, 1, d - 1, d, d + 1, (1 << 44) - 1, (1 << 44) - d] {
                assert_eq!(fastmod(n, fastmod_magic(d), d), n % d, "{n} % {d}");
            }
        }
    }

    #[test]
    fn a_full_flush_at_the_last_generation_clears_eagerly() {
        let mut t = Tlb::new(8);
        t.fill(TlbEntry {
            mm: 1,
            vpn: 5,
            pfn: 7,
            ..TlbEntry::default()
        });
        t.gen = u32::MAX;
        t.sets.iter_mut().for_each(|s| s.gen = u32::MAX);
        assert_eq!(t.entries().count(), 1);
        t.flush_all();
        assert_eq!(t.gen, 0);
        assert_eq!(t.entries().count(), 0);
        assert_eq!(t.lookup(0, 5), None);
    }
}
