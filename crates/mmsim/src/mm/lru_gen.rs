//! The multi-generational LRU (CONFIG_LRU_GEN, mm/vmscan.c "the aging" / "the eviction",
//! include/linux/mm_inline.h, mm/workingset.c lru_gen_*), 6.18 semantics: the second
//! reclaim policy, selected with `policy = "mglru"`. The 6.1 era keeps 6.1's workingset
//! protection (`mm/lru_gen_v6_1.rs`, rule `mglru-workingset-rework` off), which the
//! functions below call where 6.1 differed.
//!
//! - Each lruvec holds generations `min_seq[type] ..= max_seq` (MIN_NR_GENS = 2 to
//!   MAX_NR_GENS = 4) of anon and file folios, one list per (gen, type) (one zone per
//!   node); a folio's generation + 1 lives in its flags (LRU_GEN_MASK). The two youngest
//!   generations count as "active" in /proc/vmstat (lru_gen_is_active).
//! - Placement (lru_gen_folio_seq): a folio added during a page fault is PG_active and goes
//!   to max_seq − 1 (max_seq with PG_workingset); a clean cold file folio to the oldest
//!   generation; an anon folio not in the swap cache, or a folio waiting for writeback, to
//!   max_seq − 1; a rotated folio (reclaiming) to the oldest.
//! - Accesses through file descriptors (folio_mark_accessed → lru_gen_inc_refs) climb
//!   PG_referenced, then LRU_REFS (2 bits), then PG_workingset: tier = order_base_2(refs)
//!   (tier 3 with PG_workingset). Folios in tiers whose refault rate is above tier 0's are
//!   protected by the eviction (sort_folio → folio_inc_gen), decided by the PID controller
//!   (read_ctrl_pos / positive_ctrl_err) on the refaulted / (evicted + protected) ratios.
//! - Aging (try_to_inc_max_seq): the page-table walk of every mm of the memcg that ran
//!   since the last walk (walk_mm): young PTEs are cleared (no TLB flush) and their folios
//!   promoted to max_seq (folio_update_gen: the first sighting only sets PG_referenced).
//!   PTE tables whose PMD entry is not in the Bloom filter of the previous walk are
//!   skipped; tables with at least one young PTE per cache line are added for the next
//!   one. Then max_seq advances (inc_max_seq, evicting generations beyond MAX_NR_GENS
//!   into the next by inc_min_seq).
//! - Eviction (evict_folios): scan the oldest generation of the type chosen by the PID
//!   controller (get_type_to_scan), sort out promoted, protected and dirty/writeback folios,
//!   isolate the rest and reclaim them with the same shrink_page_list as classic reclaim
//!   (unmap, batched TLB flush, pageout, swap). A mapped folio found young on the rmap walk
//!   is promoted and its neighbour PTEs looked at (lru_gen_look_around).
//! - Workingset: shadows carry (memcg, node, min_seq, refs, PG_workingset); a refault within
//!   MAX_NR_GENS generations counts in the tier's refaulted statistics.
//!
//! Model notes: one bin per memcg-LRU generation (the kernel's random bins spread lock
//! contention, which is not modelled); a PMD shared by several VMAs is walked once per
//! VMA; the folio's physical list is kept in model-only flag bits (see `pg::LRU_LIST_SHIFT`).

use crate::machine::profile::KFunc;
use crate::mm::lru_deque::{LruDeque, PREFETCH_AHEAD};
use crate::mm::memcontrol::{MemcgId, ROOT_MEM_CGROUP};
use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn, NIL};
use crate::mm::vmscan::{PageReferences, ScanControl, DEF_PRIORITY};
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// The MGLRU policy's hooks (`mm::policy`).
pub const MGLRU: crate::mm::policy::PolicyOps = crate::mm::policy::PolicyOps {
    policy: crate::mm::policy::ReclaimPolicy::Mglru,
    name: "mglru",
    summary:
        "the multi-generational LRU (CONFIG_LRU_GEN): generations, tiers, page-table-walk aging",
    since: crate::kernel::KernelEra::V6_1,
    lru_add: Some(|s, pfn, tail| s.lru_gen_add_folio(pfn, tail)),
    lru_del: Some(|s, pfn| s.lru_gen_del_folio(pfn, false)),
    mark_accessed: Some(|s, pfn| s.lru_gen_inc_refs(pfn)),
    add_in_fault: Some(|s, pfn| {
        if !s.mem[pfn as usize].test(pg::UNEVICTABLE) {
            s.SetPageActive(pfn);
        }
    }),
    check_references: Some(|s, pfn, target| s.lru_gen_folio_check_references(pfn, target)),
    eviction: Some(|s, pfn| s.lru_gen_eviction(pfn)),
    refault: Some(|s, pfn, shadow| {
        s.lru_gen_refault(pfn, shadow);
        false
    }),
    shrink_node: Some(|s, node, sc| s.lru_gen_shrink_node(node, sc)),
    shrink_lruvec: Some(|s, node, memcg, sc| s.lru_gen_shrink_lruvec(node, memcg, sc)),
    age_node: Some(|s, node, sc| s.lru_gen_age_node(node, sc)),
    check: Some(|s| s.check_lru_gen()),
};

/// MIN_NR_GENS.
pub const MIN_NR_GENS: u64 = 2;
/// MAX_NR_GENS.
pub const MAX_NR_GENS: u64 = 4;
/// MAX_NR_TIERS.
pub const MAX_NR_TIERS: usize = 4;
/// LRU_REFS_WIDTH.
pub const LRU_REFS_WIDTH: u32 = 2;
/// MIN_LRU_BATCH (BITS_PER_LONG).
pub const MIN_LRU_BATCH: u64 = 64;
/// MAX_LRU_BATCH.
pub const MAX_LRU_BATCH: u64 = MIN_LRU_BATCH * 64;
/// MAX_SWAPPINESS.
pub const MAX_SWAPPINESS: u64 = 200;
/// NR_BLOOM_FILTERS.
pub const NR_BLOOM_FILTERS: usize = 2;
/// BLOOM_FILTER_SHIFT: 2^15 bits per filter.
pub const BLOOM_FILTER_SHIFT: u32 = 15;
/// MEMCG_NR_GENS: generations of the memcg LRU.
pub const MEMCG_NR_GENS: usize = 3;
/// MEMCG_NR_BINS: lists per memcg-LRU generation; a memcg goes to a random one
/// (get_random_u32_below) when it comes online and at each rotation, and shrink_many
/// starts at a random one, so memcgs of one generation are taken in a random order.
pub const MEMCG_NR_BINS: usize = 8;
/// PTEs per cache line (cache_line_size() / sizeof(pte_t), clamped to 2..=8).
const PTES_PER_LINE: u64 = 8;
/// ANON_AND_FILE.
const LRU_GEN_ANON: usize = 0;
const LRU_GEN_FILE: usize = 1;

/// lru_gen_from_seq.
#[inline]
pub fn lru_gen_from_seq(seq: u64) -> usize {
    (seq % MAX_NR_GENS) as usize
}

/// lru_tier_from_refs (6.14+): PG_workingset is the last tier, else order_base_2(refs).
pub fn lru_tier_from_refs(refs: u32, workingset: bool) -> usize {
    if workingset {
        MAX_NR_TIERS - 1
    } else if refs <= 1 {
        0
    } else {
        (32 - (refs - 1).leading_zeros()) as usize
    }
}

/// The lru_gen_mm_walk statistics (the debugfs LOYNFA columns).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MmStats {
    /// MM_LEAF_TOTAL: PTEs (and absent PMDs) looked at.
    pub leaf_total: u64,
    /// MM_LEAF_OLD: present PTEs that were old.
    pub leaf_old: u64,
    /// MM_LEAF_YOUNG: young PTEs cleared.
    pub leaf_young: u64,
    /// MM_NONLEAF_TOTAL: PMD entries pointing to PTE tables.
    pub nonleaf_total: u64,
    /// MM_NONLEAF_FOUND: of those, in the Bloom filter (or force-scanned).
    pub nonleaf_found: u64,
    /// MM_NONLEAF_ADDED: dense enough to be added to the next filter.
    pub nonleaf_added: u64,
}

/// Where an mm-list cursor points (the kernel's list pointers: the fifo head or an mm).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MmCursor {
    /// NULL (not started).
    #[default]
    Null,
    /// &mm_list->fifo.
    Fifo,
    /// An mm (by id).
    Mm(u32),
}

/// struct lru_gen_mm_state.
#[derive(Clone, Debug, Default)]
pub struct MmState {
    /// The last max_seq whose walk finished.
    pub seq: u64,
    /// Where the current iteration is.
    pub head: MmCursor,
    /// Where the last iteration ended.
    pub tail: MmCursor,
    /// The two Bloom filters of PMD entries worth walking.
    pub filters: [Option<Box<[u64]>>; NR_BLOOM_FILTERS],
    /// Walk statistics, cumulative.
    pub stats: MmStats,
}

/// struct lru_gen_folio (NR_HIST_GENS = 1).
#[derive(Clone, Debug)]
pub struct LruGenFolio {
    /// The youngest generation.
    pub max_seq: u64,
    /// The oldest generation of each type.
    pub min_seq: [u64; 2],
    /// When each generation was born (ps).
    pub timestamps: [u64; MAX_NR_GENS as usize],
    /// The lists, `[gen][type]`.
    pub folios: [[LruDeque; 2]; MAX_NR_GENS as usize],
    /// Folios per `[gen][type]` by their flags (may differ from list lengths while promoted
    /// folios wait on old lists).
    pub nr_pages: [[i64; 2]; MAX_NR_GENS as usize],
    /// The PID controller's integral terms.
    pub avg_refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// See `avg_refaulted`.
    pub avg_total: [[u64; MAX_NR_TIERS]; 2],
    /// Protected by sort_folio / inc_min_seq in the generation being evicted.
    pub protected: [[u64; MAX_NR_TIERS]; 2],
    /// Evicted from the generation being evicted.
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    /// Refaulted from the generation being evicted.
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// Cumulative per-tier totals since boot (for the report; the fields above reset).
    pub totals: TierTotals,
    /// Pages counted as each of [IA, AA, IF, AF] for /proc/vmstat (lru_gen_update_size).
    pub lru_size: [u64; 4],
    /// The mm walk state.
    pub mm_state: MmState,
    /// The memcg-LRU generation and segment of this lruvec.
    pub memcg_gen: usize,
    /// The memcg-LRU bin this lruvec is listed in.
    pub memcg_bin: usize,
    /// MEMCG_LRU_HEAD / MEMCG_LRU_TAIL / 0.
    pub seg: u8,
}

/// Per-tier totals since boot: `[type][tier]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TierTotals {
    /// Refaults counted per tier.
    pub refaulted: [[u64; MAX_NR_TIERS]; 2],
    /// Evictions per tier.
    pub evicted: [[u64; MAX_NR_TIERS]; 2],
    /// Protections per tier.
    pub protected: [[u64; MAX_NR_TIERS]; 2],
}

impl Default for LruGenFolio {
    /// lru_gen_init_lruvec: max_seq = MIN_NR_GENS + 1, min_seq = 0, mm_state.seq =
    /// MIN_NR_GENS.
    fn default() -> Self {
        LruGenFolio {
            max_seq: MIN_NR_GENS + 1,
            min_seq: [0, 0],
            timestamps: [0; MAX_NR_GENS as usize],
            folios: Default::default(),
            nr_pages: [[0; 2]; MAX_NR_GENS as usize],
            avg_refaulted: [[0; MAX_NR_TIERS]; 2],
            avg_total: [[0; MAX_NR_TIERS]; 2],
            protected: [[0; MAX_NR_TIERS]; 2],
            evicted: [[0; MAX_NR_TIERS]; 2],
            refaulted: [[0; MAX_NR_TIERS]; 2],
            totals: TierTotals::default(),
            lru_size: [0; 4],
            mm_state: MmState {
                seq: MIN_NR_GENS,
                ..Default::default()
            },
            memcg_gen: 0,
            memcg_bin: 0,
            seg: 0,
        }
    }
}

impl LruGenFolio {
    /// get_nr_gens.
    pub fn nr_gens(&self, t: usize) -> u64 {
        self.max_seq - self.min_seq[t] + 1
    }
    /// lru_gen_is_active: the two youngest generations.
    pub fn is_active(&self, gen: usize) -> bool {
        gen == lru_gen_from_seq(self.max_seq) || gen == lru_gen_from_seq(self.max_seq - 1)
    }
}

/// memcg-LRU operations (MEMCG_LRU_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemcgLruOp {
    Nop,
    Tail,
    Young,
}

/// struct lru_gen_memcg of a node: memcgs in MEMCG_NR_GENS generations, each spread over
/// MEMCG_NR_BINS lists.
#[derive(Clone, Debug, Default)]
pub struct MemcgLru {
    /// The oldest generation.
    pub seq: u64,
    /// The memcgs of each generation and bin, head first.
    pub fifo: [[std::collections::VecDeque<MemcgId>; MEMCG_NR_BINS]; MEMCG_NR_GENS],
}

impl MemcgLru {
    /// nr_memcgs[gen]: the memcgs in a generation, over its bins.
    pub fn nr_memcgs(&self, gen: usize) -> usize {
        self.fifo[gen].iter().map(|b| b.len()).sum()
    }
}

/// MGLRU tunables (`[mglru]` in a scenario; /sys/kernel/mm/lru_gen/).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MglruConfig {
    /// min_ttl_ms: kswapd OOM-kills rather than evict a working set younger than this
    /// (0 = off, the default).
    pub min_ttl_ms: u64,
    /// LRU_GEN_MM_WALK: aging walks page tables (on by default on x86); off, the aging only
    /// advances max_seq and promotion relies on the rmap look-around.
    pub walk_mmu: bool,
}

impl Default for MglruConfig {
    fn default() -> Self {
        MglruConfig {
            min_ttl_ms: 0,
            walk_mmu: true,
        }
    }
}

/// The walk in progress (struct lru_gen_mm_walk): the max_seq it ages and its batch.
#[derive(Clone, Copy, Debug)]
struct MmWalk {
    memcg: MemcgId,
    node: usize,
    seq: u64,
    swappiness: u64,
    force_scan: bool,
    stats: MmStats,
}

pub(crate) fn file_type(s: &Sim, pfn: Pfn) -> usize {
    usize::from(!s.mem[pfn as usize].test(pg::SWAPBACKED))
}

/// folio_lru_gen: the generation in the flags, or None.
#[inline]
pub fn folio_lru_gen(flags: u32) -> Option<usize> {
    let g = (flags & pg::LRU_GEN_MASK) >> pg::LRU_GEN_SHIFT;
    if g == 0 {
        None
    } else {
        Some(g as usize - 1)
    }
}

/// folio_lru_refs: accesses including PG_referenced (0 without it).
#[inline]
pub fn folio_lru_refs(flags: u32) -> u32 {
    if flags & pg::REFERENCED == 0 {
        0
    } else {
        ((flags & pg::LRU_REFS_MASK) >> pg::LRU_REFS_SHIFT) + 1
    }
}

fn list_gen(flags: u32) -> usize {
    ((flags & pg::LRU_LIST_MASK) >> pg::LRU_LIST_SHIFT) as usize
}

fn hash_pmd(mm: u32, pmd: u64) -> [usize; 2] {
    // hash_ptr of the PMD entry's address: a multiplicative hash of (mm, pmd index).
    let key = (u64::from(mm) << 40) ^ pmd;
    let h = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - 2 * BLOOM_FILTER_SHIFT)) as usize;
    [h & ((1 << BLOOM_FILTER_SHIFT) - 1), h >> BLOOM_FILTER_SHIFT]
}

fn test_bit(f: &[u64], b: usize) -> bool {
    f[b / 64] & (1 << (b % 64)) != 0
}

impl Sim {
    /// True when the MGLRU policy is in force (lru_gen_enabled()).
    #[inline]
    pub fn lru_gen_enabled(&self) -> bool {
        self.policy == crate::mm::policy::ReclaimPolicy::Mglru
    }

    /// The lrugen of `memcg` on `node`.
    pub fn lrugen(&self, memcg: MemcgId, node: usize) -> &LruGenFolio {
        &self.lruvec(memcg, node).lrugen
    }

    fn lrugen_mut(&mut self, memcg: MemcgId, node: usize) -> &mut LruGenFolio {
        &mut self.lruvec_mut(memcg, node).lrugen
    }

    /// lru_gen_update_size: nr_pages and the active/inactive compatibility sizes, by the
    /// pages of the folio `pfn` heads (folio_nr_pages), as it moves from generation `old`
    /// to `new`.
    pub(crate) fn lru_gen_update_size(
        &mut self,
        lv: usize,
        pfn: Pfn,
        old: Option<usize>,
        new: Option<usize>,
    ) {
        let t = file_type(self, pfn);
        let delta = self.mem[pfn as usize].nr_pages() as i64;
        let g = &mut self.lruvecs[lv].lrugen;
        let base = t * 2;
        let mut moves: [(usize, i64); 2] = [(0, 0); 2];
        if let Some(o) = old {
            g.nr_pages[o][t] -= delta;
        }
        if let Some(n) = new {
            g.nr_pages[n][t] += delta;
        }
        match (old, new) {
            (None, Some(n)) => moves[0] = (base + usize::from(g.is_active(n)), delta),
            (Some(o), None) => moves[0] = (base + usize::from(g.is_active(o)), -delta),
            (Some(o), Some(n)) => {
                if !g.is_active(o) && g.is_active(n) {
                    moves[0] = (base, -delta);
                    moves[1] = (base + 1, delta);
                }
            }
            (None, None) => {}
        }
        for (lru, d) in moves {
            if d == 0 {
                continue;
            }
            let g = &mut self.lruvecs[lv].lrugen;
            g.lru_size[lru] = g.lru_size[lru].wrapping_add_signed(d);
            self.vmstat.add(LruList::ALL[lru].vmstat_item(), d);
        }
    }

    /// lru_gen_folio_seq: where a folio being added goes (see the module comment).
    fn lru_gen_folio_seq(&self, lv: usize, pfn: Pfn, reclaiming: bool) -> u64 {
        if self.mglru_v6_1() {
            return self.lru_gen_folio_seq_v6_1(lv, pfn);
        }
        let p = &self.mem[pfn as usize];
        let g = &self.lruvecs[lv].lrugen;
        let t = usize::from(!p.test(pg::SWAPBACKED));
        let ws = u64::from(p.test(pg::WORKINGSET));
        let gen = if p.test(pg::ACTIVE) {
            MIN_NR_GENS - ws
        } else if reclaiming {
            MAX_NR_GENS
        } else if (t == LRU_GEN_ANON && !p.test(pg::SWAPCACHE))
            || (p.test(pg::RECLAIM) && (p.test(pg::DIRTY) || p.test(pg::WRITEBACK)))
        {
            MIN_NR_GENS
        } else {
            MAX_NR_GENS - ws
        };
        (g.max_seq + 1 - gen).max(g.min_seq[t])
    }

    /// lru_gen_add_folio: put an evictable folio on its generation's list (head, or tail
    /// when `reclaiming`). False for an unevictable folio (the caller uses the lists).
    pub fn lru_gen_add_folio(&mut self, pfn: Pfn, reclaiming: bool) -> bool {
        if self.mem[pfn as usize].test(pg::UNEVICTABLE) {
            return false;
        }
        let lv = self.page_lruvec_idx(pfn);
        let t = file_type(self, pfn);
        let gen = lru_gen_from_seq(self.lru_gen_folio_seq(lv, pfn, reclaiming));
        self.charge_atomic(); // set_mask_bits
        {
            let p = &mut self.mem[pfn as usize];
            p.flags &= !(pg::LRU_GEN_MASK | pg::ACTIVE | pg::LRU_LIST_MASK);
            p.flags |=
                ((gen as u32 + 1) << pg::LRU_GEN_SHIFT) | ((gen as u32) << pg::LRU_LIST_SHIFT);
        }
        self.lru_gen_update_size(lv, pfn, None, Some(gen));
        self.charge(self.costs.list_op_ps);
        let head = &mut self.lruvecs[lv].lrugen.folios[gen][t];
        if reclaiming {
            head.add_tail(&mut self.mem, pfn);
        } else {
            head.add_head(&mut self.mem, pfn);
        }
        true
    }

    /// lru_gen_del_folio: take a folio off its list; a folio in an active generation gets
    /// PG_active unless it is being reclaimed. False if it is not on an lrugen list.
    pub fn lru_gen_del_folio(&mut self, pfn: Pfn, reclaiming: bool) -> bool {
        let flags = self.mem[pfn as usize].flags;
        let Some(gen) = folio_lru_gen(flags) else {
            return false;
        };
        let lv = self.page_lruvec_idx(pfn);
        let t = file_type(self, pfn);
        let active = !reclaiming && self.lruvecs[lv].lrugen.is_active(gen);
        self.charge_atomic();
        {
            let p = &mut self.mem[pfn as usize];
            p.flags &= !(pg::LRU_GEN_MASK | pg::LRU_LIST_MASK);
            if active {
                p.flags |= pg::ACTIVE;
            }
        }
        self.lru_gen_update_size(lv, pfn, Some(gen), None);
        self.charge(self.costs.list_op_ps);
        self.lruvecs[lv].lrugen.folios[list_gen(flags)][t].del(&mut self.mem, pfn);
        true
    }

    /// The (generation, type) list an evictable folio on an MGLRU list is on, or None.
    pub(crate) fn lru_gen_list_of(&self, pfn: Pfn) -> Option<(usize, usize)> {
        let f = self.mem[pfn as usize].flags;
        folio_lru_gen(f)?;
        Some((list_gen(f), file_type(self, pfn)))
    }

    /// Move a folio (on its lruvec's lists) to the head or tail of generation `gen`'s list
    /// (list_move / list_move_tail).
    pub(crate) fn lru_gen_list_move(&mut self, lv: usize, pfn: Pfn, gen: usize, tail: bool) {
        let t = file_type(self, pfn);
        let from = list_gen(self.mem[pfn as usize].flags);
        self.charge(self.costs.list_op_ps);
        let g = &mut self.lruvecs[lv].lrugen;
        g.folios[from][t].del(&mut self.mem, pfn);
        if tail {
            g.folios[gen][t].add_tail(&mut self.mem, pfn);
        } else {
            g.folios[gen][t].add_head(&mut self.mem, pfn);
        }
        let p = &mut self.mem[pfn as usize];
        p.flags = (p.flags & !pg::LRU_LIST_MASK) | ((gen as u32) << pg::LRU_LIST_SHIFT);
    }

    /// lru_gen_inc_refs (folio_mark_accessed under MGLRU): PG_referenced, then LRU_REFS,
    /// then PG_workingset.
    pub fn lru_gen_inc_refs(&mut self, pfn: Pfn) {
        self.charge(self.costs.mem_access_ps);
        let f = self.mem[pfn as usize].flags;
        if f & pg::UNEVICTABLE != 0 {
            return;
        }
        self.charge_atomic();
        if self.mglru_v6_1() {
            return self.lru_gen_inc_refs_v6_1(pfn);
        }
        let p = &mut self.mem[pfn as usize];
        if f & pg::REFERENCED == 0 {
            p.flags = (f & !pg::LRU_REFS_MASK) | pg::REFERENCED;
        } else if f & pg::LRU_REFS_MASK == pg::LRU_REFS_MASK {
            p.flags |= pg::WORKINGSET;
        } else {
            p.flags = f + (1 << pg::LRU_REFS_SHIFT);
        }
    }

    /// lru_gen_clear_refs (v6.14, deactivate_file_folio): clear the folio's references
    /// (LRU_REFS, PG_referenced, PG_workingset); true if it needs no move — off the lists,
    /// or already in its type's oldest generation.
    pub fn lru_gen_clear_refs(&mut self, pfn: Pfn) -> bool {
        let f = self.mem[pfn as usize].flags;
        let Some(gen) = folio_lru_gen(f) else {
            return true;
        };
        if f & pg::LRU == 0 || f & pg::UNEVICTABLE != 0 {
            return true;
        }
        self.charge_atomic(); // set_mask_bits
        self.mem[pfn as usize].flags &= !(pg::LRU_REFS_MASK | pg::REFERENCED | pg::WORKINGSET);
        let lv = self.page_lruvec_idx(pfn);
        let t = file_type(self, pfn);
        gen == lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t])
    }

    /// lru_gen_set_refs (rmap path): the first young sighting sets PG_referenced; a later
    /// one sets PG_workingset and asks for promotion.
    fn lru_gen_set_refs(&mut self, pfn: Pfn) -> bool {
        self.charge_atomic();
        let p = &mut self.mem[pfn as usize];
        if p.flags & (pg::REFERENCED | pg::WORKINGSET) == 0 {
            p.flags = (p.flags & !pg::LRU_REFS_MASK) | pg::REFERENCED;
            return false;
        }
        p.flags = (p.flags & !(pg::LRU_REFS_MASK | pg::REFERENCED)) | pg::WORKINGSET;
        true
    }

    /// lru_gen_folio_check_references: (mapped folio under eviction) activate a folio whose
    /// PTEs were young on a second sighting, keep it on the first, reclaim it otherwise.
    pub fn lru_gen_folio_check_references(&mut self, pfn: Pfn, target: MemcgId) -> PageReferences {
        if self.mglru_v6_1() {
            return self.lru_gen_check_references_v6_1(pfn, target);
        }
        let (referenced_ptes, vm_flags) = self.page_referenced(pfn, target);
        if vm_flags & crate::mm::rmap::VM_LOCKED != 0 {
            return PageReferences::Activate;
        }
        if referenced_ptes == 0 {
            return PageReferences::Reclaim;
        }
        if self.lru_gen_set_refs(pfn) {
            PageReferences::Activate
        } else {
            PageReferences::Keep
        }
    }

    /// folio_update_gen: the aging promotes a folio seen young (a second time) to `gen`;
    /// returns its old generation when it moved.
    pub(crate) fn folio_update_gen(&mut self, pfn: Pfn, gen: usize) -> Option<usize> {
        self.charge_atomic();
        if self.mglru_v6_1() {
            return self.folio_update_gen_v6_1(pfn, gen);
        }
        let p = &mut self.mem[pfn as usize];
        if p.flags & (pg::REFERENCED | pg::WORKINGSET) == 0 {
            p.flags = (p.flags & !pg::LRU_REFS_MASK) | pg::REFERENCED;
            return None;
        }
        let old = folio_lru_gen(p.flags)?;
        p.flags &= !(pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::REFERENCED);
        p.flags |= ((gen as u32 + 1) << pg::LRU_GEN_SHIFT) | pg::WORKINGSET;
        Some(old)
    }

    /// folio_inc_gen: move a folio of the oldest generation to the next one (clearing
    /// LRU_REFS_FLAGS; PG_reclaim when reclaiming); a folio the aging already promoted
    /// keeps its generation. Returns the generation.
    pub(crate) fn folio_inc_gen(&mut self, lv: usize, pfn: Pfn, reclaiming: bool) -> usize {
        let v6_1 = self.mglru_v6_1();
        let t = file_type(self, pfn);
        let old_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
        let cur = folio_lru_gen(self.mem[pfn as usize].flags).expect("on an lrugen list");
        if cur != old_gen {
            return cur;
        }
        let new_gen = (old_gen + 1) % MAX_NR_GENS as usize;
        self.charge_atomic();
        {
            let p = &mut self.mem[pfn as usize];
            p.flags &= !(pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::REFERENCED);
            if v6_1 {
                // 6.1's LRU_REFS_FLAGS include PG_workingset.
                p.flags &= !pg::WORKINGSET;
            }
            p.flags |= (new_gen as u32 + 1) << pg::LRU_GEN_SHIFT;
            if reclaiming {
                p.flags |= pg::RECLAIM;
            }
        }
        self.lru_gen_update_size(lv, pfn, Some(old_gen), Some(new_gen));
        new_gen
    }

    /// get_swappiness: 0 when reclaim may not swap or fewer than MIN_LRU_BATCH swap slots
    /// are left to the memcg.
    fn lru_gen_swappiness(&self, memcg: MemcgId, sc: &ScanControl) -> u64 {
        if !sc.may_swap {
            return 0;
        }
        self.lru_gen_swappiness_if_swap_left(memcg, sc)
    }

    /// get_swappiness's test of the swap left: 0 when fewer than MIN_LRU_BATCH swap slots
    /// are left to the memcg (no demotion here), else the swappiness (6.1's whole
    /// get_swappiness: sc->may_swap is its caller's).
    pub(crate) fn lru_gen_swappiness_if_swap_left(&self, memcg: MemcgId, sc: &ScanControl) -> u64 {
        let left = if memcg == ROOT_MEM_CGROUP {
            self.swap_free_pages()
        } else {
            self.mem_cgroup_get_nr_swap_pages(memcg)
        };
        if left < MIN_LRU_BATCH {
            0
        } else {
            self.sc_swappiness(sc, memcg)
        }
    }

    /// read_ctrl_pos: (refaulted, total) of one tier, or of all tiers for MAX_NR_TIERS.
    pub(crate) fn read_ctrl_pos(
        &self,
        lv: usize,
        t: usize,
        tier: usize,
        gain: u64,
    ) -> (u64, u64, u64) {
        let g = &self.lruvecs[lv].lrugen;
        let (mut r, mut tot) = (0, 0);
        let range = if tier >= MAX_NR_TIERS {
            0..MAX_NR_TIERS
        } else {
            tier..tier + 1
        };
        for i in range {
            r += g.avg_refaulted[t][i] + g.refaulted[t][i];
            tot += g.avg_total[t][i] + g.protected[t][i] + g.evicted[t][i];
        }
        (r, tot, gain)
    }

    /// reset_ctrl_pos with carryover (NR_HIST_GENS = 1): fold the generation's counts into
    /// the moving averages and clear them.
    pub(crate) fn reset_ctrl_pos(&mut self, lv: usize, t: usize) {
        let g = &mut self.lruvecs[lv].lrugen;
        for tier in 0..MAX_NR_TIERS {
            g.avg_refaulted[t][tier] = (g.avg_refaulted[t][tier] + g.refaulted[t][tier]) / 2;
            g.avg_total[t][tier] =
                (g.avg_total[t][tier] + g.protected[t][tier] + g.evicted[t][tier]) / 2;
            g.refaulted[t][tier] = 0;
            g.evicted[t][tier] = 0;
            g.protected[t][tier] = 0;
        }
    }

    /// get_tier_idx: the highest tier whose refault rate stays at or below tier 0's (gain
    /// 2:3); tiers above it are protected.
    pub fn get_tier_idx(&self, lv: usize, t: usize) -> usize {
        let sp = self.read_ctrl_pos(lv, t, 0, 2);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            let pv = self.read_ctrl_pos(lv, t, tier, 3);
            if !positive_ctrl_err(sp, pv) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// get_type_to_scan: compare the refault rates of all anon and all file tiers,
    /// weighted by swappiness.
    fn get_type_to_scan(&self, lv: usize, swappiness: u64) -> usize {
        if swappiness <= 1 {
            return LRU_GEN_FILE;
        }
        if swappiness >= MAX_SWAPPINESS {
            return LRU_GEN_ANON;
        }
        let sp = self.read_ctrl_pos(lv, LRU_GEN_ANON, MAX_NR_TIERS, swappiness);
        let pv = self.read_ctrl_pos(lv, LRU_GEN_FILE, MAX_NR_TIERS, MAX_SWAPPINESS - swappiness);
        usize::from(positive_ctrl_err(sp, pv))
    }
}

/// positive_ctrl_err: the PV has few refaults, or a refault rate at most the SP's.
pub fn positive_ctrl_err(sp: (u64, u64, u64), pv: (u64, u64, u64)) -> bool {
    let (sp_r, sp_t, sp_g) = sp;
    let (pv_r, pv_t, pv_g) = pv;
    pv_r < MIN_LRU_BATCH
        || u128::from(pv_r) * u128::from(sp_t + MIN_LRU_BATCH) * u128::from(sp_g)
            <= u128::from(sp_r + 1) * u128::from(pv_t) * u128::from(pv_g)
}

fn evictable_types(swappiness: u64) -> std::ops::RangeInclusive<usize> {
    let min = usize::from(swappiness == 0);
    let max = usize::from(swappiness <= MAX_SWAPPINESS);
    min..=max
}

fn evictable_min_seq(min_seq: [u64; 2], swappiness: u64) -> u64 {
    let r = evictable_types(swappiness);
    min_seq[*r.start()].min(min_seq[*r.end()])
}

/// The aging.
impl Sim {
    /// inc_min_seq: move every folio of the oldest generation of `t` into the next
    /// (protecting by tier), then advance min_seq.
    fn inc_min_seq(&mut self, lv: usize, t: usize, swappiness: u64) {
        let prev = self.enter(KFunc::IncMinSeq);
        let skip = (t == LRU_GEN_FILE && swappiness > MAX_SWAPPINESS)
            || (t == LRU_GEN_ANON && swappiness == 0);
        if !skip {
            let old_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
            loop {
                let pfn = self.lruvecs[lv].lrugen.folios[old_gen][t].tail();
                if pfn == NIL {
                    break;
                }
                let f = self.mem[pfn as usize].flags;
                let refs = folio_lru_refs(f);
                let ws = f & pg::WORKINGSET != 0;
                let new_gen = self.folio_inc_gen(lv, pfn, false);
                self.lru_gen_list_move(lv, pfn, new_gen, true);
                // 6.1's inc_min_seq counts no protection.
                if !self.mglru_v6_1() && refs + u32::from(ws) != (1 << LRU_REFS_WIDTH) + 1 {
                    let tier = lru_tier_from_refs(refs, ws);
                    let delta = self.mem[pfn as usize].nr_pages();
                    let g = &mut self.lruvecs[lv].lrugen;
                    g.protected[t][tier] += delta;
                    g.totals.protected[t][tier] += delta;
                }
            }
        }
        self.reset_ctrl_pos(lv, t);
        self.lruvecs[lv].lrugen.min_seq[t] += 1;
        self.leave(prev);
    }

    /// try_to_inc_min_seq: advance min_seq over empty generations, keeping anon and file
    /// within MIN_NR_GENS of each other. True if it moved.
    fn try_to_inc_min_seq(&mut self, lv: usize, swappiness: u64) -> bool {
        if self.mglru_v6_1() {
            return self.try_to_inc_min_seq_v6_1(lv, swappiness);
        }
        let g = &self.lruvecs[lv].lrugen;
        let mut min_seq = g.min_seq;
        let max_seq = g.max_seq;
        let mut inc = false;
        for t in evictable_types(swappiness) {
            while min_seq[t] + MIN_NR_GENS <= max_seq {
                if g.folios[lru_gen_from_seq(min_seq[t])][t].len > 0 {
                    break;
                }
                min_seq[t] += 1;
                inc = true;
            }
        }
        if !inc {
            return false;
        }
        if swappiness > 0 && swappiness <= MAX_SWAPPINESS {
            let seq = max_seq - MIN_NR_GENS;
            if min_seq[LRU_GEN_ANON] > seq && min_seq[LRU_GEN_FILE] < seq {
                min_seq[LRU_GEN_ANON] = seq;
            } else if min_seq[LRU_GEN_FILE] > seq && min_seq[LRU_GEN_ANON] < seq {
                min_seq[LRU_GEN_FILE] = seq;
            }
        }
        let mut success = false;
        for t in evictable_types(swappiness) {
            if min_seq[t] <= self.lruvecs[lv].lrugen.min_seq[t] {
                continue;
            }
            self.reset_ctrl_pos(lv, t);
            self.lruvecs[lv].lrugen.min_seq[t] = min_seq[t];
            success = true;
        }
        success
    }

    /// inc_max_seq: a new youngest generation (making room by inc_min_seq when a type has
    /// MAX_NR_GENS), with the active/inactive compatibility sizes moved.
    fn inc_max_seq(&mut self, lv: usize, seq: u64, swappiness: u64) -> bool {
        if seq != self.lruvecs[lv].lrugen.max_seq {
            return false;
        }
        self.lru_lock(lv);
        for t in [LRU_GEN_FILE, LRU_GEN_ANON] {
            if self.lruvecs[lv].lrugen.nr_gens(t) == MAX_NR_GENS {
                self.inc_min_seq(lv, t, swappiness);
            }
        }
        let now = self.now();
        let g = &mut self.lruvecs[lv].lrugen;
        let prev = lru_gen_from_seq(g.max_seq - 1);
        let next = lru_gen_from_seq(g.max_seq + 1);
        let mut moves = Vec::new();
        for t in 0..2 {
            let delta = g.nr_pages[prev][t] - g.nr_pages[next][t];
            if delta != 0 {
                g.lru_size[t * 2] = g.lru_size[t * 2].wrapping_add_signed(delta);
                g.lru_size[t * 2 + 1] = g.lru_size[t * 2 + 1].wrapping_add_signed(-delta);
                moves.push((t, delta));
            }
        }
        g.timestamps[next] = now;
        g.max_seq += 1;
        for (t, delta) in moves {
            self.vmstat.add(LruList::ALL[t * 2].vmstat_item(), delta);
            self.vmstat
                .add(LruList::ALL[t * 2 + 1].vmstat_item(), -delta);
        }
        self.lru_unlock(lv);
        true
    }

    /// The live mms of `memcg` in mm_list order (lru_gen_add_mm appends at exec).
    fn mm_list_next(&self, memcg: MemcgId, after: MmCursor) -> Option<u32> {
        let start = match after {
            MmCursor::Mm(id) => id as usize + 1,
            _ => 0,
        };
        (start..self.mms.len())
            .find(|&i| self.mms[i].as_ref().is_some_and(|m| m.memcg == memcg))
            .map(|i| i as u32)
    }

    fn mm_list_prev(&self, memcg: MemcgId, before: u32) -> MmCursor {
        (0..before as usize)
            .rev()
            .find(|&i| self.mms[i].as_ref().is_some_and(|m| m.memcg == memcg))
            .map_or(MmCursor::Fifo, |i| MmCursor::Mm(i as u32))
    }

    /// lru_gen_add_mm: a new mm joins its memcg's list; an iteration that ended before it
    /// force-scans it.
    pub fn lru_gen_add_mm(&mut self, mm: u32) {
        let memcg = self.mm(mm).memcg;
        for node in 0..self.nodes.len() {
            let st = &mut self.lrugen_mut(memcg, node).mm_state;
            if st.tail == MmCursor::Fifo {
                st.tail = MmCursor::Mm(mm);
            }
        }
    }

    /// lru_gen_del_mm: an exiting mm leaves the list (cursors on it step over it).
    pub fn lru_gen_del_mm(&mut self, mm: u32) {
        let memcg = self.mm(mm).memcg;
        let prev = self.mm_list_prev(memcg, mm);
        let next = self
            .mm_list_next(memcg, MmCursor::Mm(mm))
            .map_or(MmCursor::Fifo, MmCursor::Mm);
        for node in 0..self.nodes.len() {
            let st = &mut self.lrugen_mut(memcg, node).mm_state;
            if st.head == MmCursor::Mm(mm) {
                st.head = prev;
            }
            if st.tail == MmCursor::Mm(mm) {
                st.tail = next;
            }
        }
    }

    /// iterate_mm_list: the next mm to walk for `walk`, or None with `true` when this walk
    /// ended the iteration (mm_state.seq advanced).
    fn iterate_mm_list(&mut self, walk: &mut MmWalk) -> (Option<u32>, bool) {
        let lv = walk.memcg as usize * self.nodes.len() + walk.node;
        let st = self.lruvecs[lv].lrugen.mm_state.clone_cursors();
        if walk.seq <= st.0 {
            self.lruvecs[lv].lrugen.mm_state.add_stats(&mut walk.stats);
            return (None, false);
        }
        let (mut head, mut tail) = (st.1, st.2);
        if head == MmCursor::Null {
            head = MmCursor::Fifo;
        }
        let first = head == MmCursor::Fifo;
        let mut last = false;
        let mut found = None;
        loop {
            match self.mm_list_next(walk.memcg, head) {
                None => {
                    head = MmCursor::Fifo;
                    last = true;
                    break;
                }
                Some(id) => {
                    head = MmCursor::Mm(id);
                    if tail == MmCursor::Null || tail == head {
                        tail = self
                            .mm_list_next(walk.memcg, head)
                            .map_or(MmCursor::Fifo, MmCursor::Mm);
                        walk.force_scan = true;
                    }
                    // get_next_mm: the mm ran on this node's CPUs since the last walk.
                    let key = 1u64 << (walk.node % 64);
                    let m = self.mms[id as usize].as_mut().expect("live mm");
                    if walk.force_scan || m.lru_gen_bitmap & key != 0 {
                        m.lru_gen_bitmap &= !key;
                        found = Some(id);
                        break;
                    }
                }
            }
        }
        let g = &mut self.lruvecs[lv].lrugen;
        g.mm_state.head = head;
        g.mm_state.tail = tail;
        if last {
            g.mm_state.seq += 1;
        }
        g.mm_state.add_stats(&mut walk.stats);
        if found.is_some() && first {
            // reset_bloom_filter(seq + 1).
            let f = &mut g.mm_state.filters[((walk.seq + 1) as usize) % NR_BLOOM_FILTERS];
            match f {
                Some(b) => b.fill(0),
                None => *f = Some(vec![0u64; (1 << BLOOM_FILTER_SHIFT) / 64].into_boxed_slice()),
            }
            self.charge(self.costs.mem_access_ps * ((1 << BLOOM_FILTER_SHIFT) / 512));
        }
        (found, last)
    }

    fn test_bloom_filter(&self, lv: usize, seq: u64, mm: u32, pmd: u64) -> bool {
        match &self.lruvecs[lv].lrugen.mm_state.filters[(seq as usize) % NR_BLOOM_FILTERS] {
            None => true,
            Some(f) => {
                let k = hash_pmd(mm, pmd);
                test_bit(f, k[0]) && test_bit(f, k[1])
            }
        }
    }

    fn update_bloom_filter(&mut self, lv: usize, seq: u64, mm: u32, pmd: u64) {
        if let Some(f) =
            &mut self.lruvecs[lv].lrugen.mm_state.filters[(seq as usize) % NR_BLOOM_FILTERS]
        {
            for b in hash_pmd(mm, pmd) {
                f[b / 64] |= 1 << (b % 64);
            }
        }
    }

    /// should_skip_vma: locked and special VMAs, VMAs without recency (MADV_SEQUENTIAL /
    /// MADV_RANDOM), anon and shmem (`swapbacked`) without swappiness, other files when
    /// only anon is reclaimed (swappiness above MAX_SWAPPINESS: memory.reclaim's `max`).
    fn should_skip_vma(flags: u64, swapbacked: bool, swappiness: u64) -> bool {
        use crate::mm::rmap::{VM_LOCKED, VM_RAND_READ, VM_SEQ_READ};
        if flags & (VM_LOCKED | VM_SEQ_READ | VM_RAND_READ) != 0 {
            return true;
        }
        if swapbacked {
            return swappiness == 0;
        }
        swappiness > MAX_SWAPPINESS
    }

    /// walk_mm: walk one mm's page tables for `walk` (walk_pmd_range / walk_pte_range).
    fn walk_mm(&mut self, mm: u32, walk: &mut MmWalk) {
        let prev = self.enter(KFunc::WalkMm);
        let lv = walk.memcg as usize * self.nodes.len() + walk.node;
        let new_gen = lru_gen_from_seq(walk.seq);
        let ranges: Vec<(u64, u64, bool)> = self
            .mm(mm)
            .vmas
            .values()
            .filter(|v| {
                let swapbacked = v.file.is_none_or(|ino| self.inode(ino).mapping.swapbacked);
                !Self::should_skip_vma(v.flags, swapbacked, walk.swappiness)
            })
            .map(|v| {
                (
                    v.start >> crate::mm::page::PAGE_SHIFT,
                    v.end >> crate::mm::page::PAGE_SHIFT,
                    v.file.is_none(),
                )
            })
            .collect();
        let ptrs = crate::mm::memory::PTRS_PER_PTE;
        for (vs, ve, _) in ranges {
            let mut pmd = vs / ptrs;
            while pmd * ptrs < ve {
                // walk_mm aborts when another reclaimer advanced max_seq.
                if self.lruvecs[lv].lrugen.max_seq != walk.seq {
                    self.leave(prev);
                    return;
                }
                let lo = vs.max(pmd * ptrs);
                let hi = ve.min((pmd + 1) * ptrs);
                pmd += 1;
                self.charge(self.costs.mem_access_ps); // the PMD entry
                if !self.mm(mm).pgtable.has_table(lo / ptrs) {
                    walk.stats.leaf_total += 1;
                    continue;
                }
                walk.stats.nonleaf_total += 1;
                if !walk.force_scan && !self.test_bloom_filter(lv, walk.seq, mm, lo / ptrs) {
                    continue;
                }
                walk.stats.nonleaf_found += 1;
                let (total, young) = self.walk_pte_range(lv, mm, lo, hi, new_gen, walk);
                if young * PTES_PER_LINE >= total {
                    walk.stats.nonleaf_added += 1;
                    self.update_bloom_filter(lv, walk.seq + 1, mm, lo / ptrs);
                }
            }
        }
        self.leave(prev);
    }

    /// walk_pte_range over virtual pages lo..hi of one PTE table: clear young PTEs of this
    /// lruvec's folios and promote them. Returns (PTEs looked at, young).
    fn walk_pte_range(
        &mut self,
        lv: usize,
        mm: u32,
        lo: u64,
        hi: u64,
        new_gen: usize,
        walk: &mut MmWalk,
    ) -> (u64, u64) {
        use crate::mm::memory::pte;
        let node = walk.node;
        let (mut total, mut young) = (0u64, 0u64);
        let mut last = None;
        for vpn in lo..hi {
            total += 1;
            walk.stats.leaf_total += 1;
            if total % PTES_PER_LINE == 1 {
                self.charge(self.costs.mem_access_ps);
            }
            let p = self.mm(mm).pgtable.get(vpn);
            if p & pte::PRESENT == 0 {
                continue;
            }
            if p & pte::YOUNG == 0 {
                walk.stats.leaf_old += 1;
                continue;
            }
            let Some(folio) = self.clear_young_of_lruvec_folio(lv, node, mm, vpn, p) else {
                continue;
            };
            self.walk_young_pte(&mut last, Some(lv), folio, new_gen, p & pte::DIRTY != 0);
            young += 1;
            walk.stats.leaf_young += 1;
        }
        if let Some((folio, dirty)) = last {
            self.walk_update_folio(Some(lv), folio, new_gen, dirty);
        }
        (total, young)
    }

    /// A young PTE of `folio` met by the walk or the look-around: the young PTEs of one
    /// folio in a row update it once, when the next folio (or the end) comes, with the
    /// dirty bit of any of them (walk_pte_range's `last`).
    fn walk_young_pte(
        &mut self,
        last: &mut Option<(Pfn, bool)>,
        walk_lv: Option<usize>,
        folio: Pfn,
        new_gen: usize,
        dirty: bool,
    ) {
        match last {
            Some((f, d)) if *f == folio => *d |= dirty,
            _ => {
                if let Some((f, d)) = last.replace((folio, dirty)) {
                    self.walk_update_folio(walk_lv, f, new_gen, d);
                }
            }
        }
    }

    /// get_pfn_folio + ptep_clear_young_notify: if the young PTE `p` at (mm, vpn) maps a
    /// page of a folio on an lrugen list of lruvec `lv` (node `node`), clear its young bit
    /// (no TLB flush) and return the folio (its head).
    fn clear_young_of_lruvec_folio(
        &mut self,
        lv: usize,
        node: usize,
        mm: u32,
        vpn: u64,
        p: u64,
    ) -> Option<Pfn> {
        use crate::mm::memory::pte;
        let pfn = self.folio_head(pte::pfn(p));
        let page = &self.mem[pfn as usize];
        // get_pfn_folio: from 6.14 a folio off the LRU (isolated) is skipped; 6.1 clears
        // its young bit too (and marks it PG_referenced).
        if (folio_lru_gen(page.flags).is_none() && !self.mglru_v6_1())
            || page.node as usize != node
            || self.page_lruvec_idx(pfn) != lv
        {
            return None;
        }
        if let Some(e) = self.mm_mut(mm).pgtable.get_mut(vpn) {
            *e &= !pte::YOUNG;
        }
        self.charge_atomic();
        Some(pfn)
    }

    /// The PTE's dirty bit moves to a file folio (folio_mark_dirty), as the walk and the
    /// look-around do for a young PTE.
    fn look_around_mark_dirty(&mut self, pfn: Pfn, dirty: bool) {
        let f = self.mem[pfn as usize].flags;
        let anon_unswapped =
            f & pg::SWAPBACKED != 0 && f & pg::SWAPCACHE == 0 && self.page_anon(pfn);
        if dirty && f & pg::DIRTY == 0 && !anon_unswapped && !self.page_anon(pfn) {
            self.folio_mark_dirty(pfn);
        }
    }

    /// walk_update_folio: move the PTE's dirty bit to the folio and promote it — in place
    /// (folio_update_gen, with a walk) or through folio_activate (without).
    fn walk_update_folio(&mut self, walk_lv: Option<usize>, pfn: Pfn, new_gen: usize, dirty: bool) {
        self.look_around_mark_dirty(pfn, dirty);
        match walk_lv {
            Some(lv) => {
                if let Some(old) = self.folio_update_gen(pfn, new_gen) {
                    if old != new_gen {
                        // update_batch_size: the folio's pages.
                        self.lru_gen_update_size(lv, pfn, Some(old), Some(new_gen));
                    }
                }
            }
            None => {
                if self.lru_gen_set_refs(pfn) {
                    if let Some(old) = folio_lru_gen(self.mem[pfn as usize].flags) {
                        if old != new_gen {
                            self.activate_page(pfn);
                        }
                    }
                }
            }
        }
    }

    /// try_to_inc_max_seq: walk the memcg's mms (unless that walk already finished for this
    /// max_seq), then create a new generation.
    pub fn try_to_inc_max_seq(
        &mut self,
        lv: usize,
        seq: u64,
        swappiness: u64,
        force_scan: bool,
    ) -> bool {
        let prev = self.enter(KFunc::TryToIncMaxSeq);
        let node = lv % self.nodes.len();
        let memcg = (lv / self.nodes.len()) as MemcgId;
        if seq <= self.lruvecs[lv].lrugen.mm_state.seq {
            self.leave(prev);
            return false;
        }
        let success = if !self.mglru.walk_mmu {
            // iterate_mm_list_nowalk.
            let st = &mut self.lruvecs[lv].lrugen.mm_state;
            st.head = MmCursor::Null;
            st.tail = MmCursor::Null;
            st.seq += 1;
            true
        } else {
            let mut walk = MmWalk {
                memcg,
                node,
                seq,
                swappiness,
                force_scan,
                stats: MmStats::default(),
            };
            self.lru_gen_walk_active = true;
            loop {
                let (mm, last) = self.iterate_mm_list(&mut walk);
                match mm {
                    Some(m) => self.walk_mm(m, &mut walk),
                    None => break last,
                }
            }
        };
        let r = success && self.inc_max_seq(lv, seq, swappiness);
        self.leave(prev);
        r
    }
}

impl MmState {
    fn clone_cursors(&self) -> (u64, MmCursor, MmCursor) {
        (self.seq, self.head, self.tail)
    }
    fn add_stats(&mut self, s: &mut MmStats) {
        self.stats.leaf_total += s.leaf_total;
        self.stats.leaf_old += s.leaf_old;
        self.stats.leaf_young += s.leaf_young;
        self.stats.nonleaf_total += s.nonleaf_total;
        self.stats.nonleaf_found += s.nonleaf_found;
        self.stats.nonleaf_added += s.nonleaf_added;
        *s = MmStats::default();
    }
}

/// rmap/PT walk feedback.
impl Sim {
    /// lru_gen_look_around: a young PTE met on the rmap walk of `pfn` at (mm, vpn): look at
    /// up to MIN_LRU_BATCH PTEs around it in the same PTE table and VMA, clear the young
    /// ones of this lruvec's folios and promote them; feed a dense table to the Bloom
    /// filter. Called with the PTE already known young (its bit cleared by the caller).
    pub fn lru_gen_look_around(&mut self, pfn: Pfn, mm: u32, vpn: u64, vm_flags: u64) {
        use crate::mm::memory::pte;
        if vm_flags & (crate::mm::rmap::VM_LOCKED) != 0 {
            return;
        }
        let prev = self.enter(KFunc::LruGenLookAround);
        let pfn = self.folio_head(pfn);
        if self.mglru_v6_1() && folio_lru_gen(self.mem[pfn as usize].flags).is_none() {
            // 6.1 looks around before the rmap walk clears this PTE, and its loop takes
            // the young bit of the folio under reclaim too: isolated, it is marked
            // PG_referenced (get_pfn_folio has no LRU test before 6.14), so
            // folio_check_references activates it.
            self.mem[pfn as usize].flags |= pg::REFERENCED;
        }
        let lv = self.page_lruvec_idx(pfn);
        let node = self.mem[pfn as usize].node as usize;
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        let gen = lru_gen_from_seq(max_seq);
        let ptrs = crate::mm::memory::PTRS_PER_PTE;
        let Some((vs, ve)) = self
            .mm(mm)
            .find_vma(vpn << crate::mm::page::PAGE_SHIFT)
            .map(|v| {
                (
                    v.start >> crate::mm::page::PAGE_SHIFT,
                    v.end >> crate::mm::page::PAGE_SHIFT,
                )
            })
        else {
            self.leave(prev);
            return;
        };
        let mut start = vs.max(vpn / ptrs * ptrs);
        let mut end = ve.min((vpn / ptrs + 1) * ptrs);
        if end - start == 1 {
            self.leave(prev);
            return;
        }
        if end - start > MIN_LRU_BATCH {
            if vpn - start < MIN_LRU_BATCH / 2 {
                end = start + MIN_LRU_BATCH;
            } else if end - vpn < MIN_LRU_BATCH / 2 {
                start = end - MIN_LRU_BATCH;
            } else {
                start = vpn - MIN_LRU_BATCH / 2;
                end = vpn + MIN_LRU_BATCH / 2;
            }
        }
        let walk_lv = if self.lru_gen_walk_active {
            Some(lv)
        } else {
            None
        };
        // 6.1 without a walk: the young neighbours to promote, after the loop.
        let batch_v6_1 = walk_lv.is_none() && self.mglru_v6_1();
        let mut promote = if batch_v6_1 {
            self.take_pfn_buf()
        } else {
            Vec::new()
        };
        let mut young = 1u64;
        let mut i = 0u64;
        let mut last = None;
        for a in start..end {
            i += 1;
            if i % PTES_PER_LINE == 1 {
                self.charge(self.costs.mem_access_ps);
            }
            if a == vpn {
                continue;
            }
            let p = self.mm(mm).pgtable.get(a);
            if p & pte::PRESENT == 0 || p & pte::YOUNG == 0 {
                continue;
            }
            let Some(q) = self.clear_young_of_lruvec_folio(lv, node, mm, a, p) else {
                continue;
            };
            young += 1;
            if batch_v6_1 {
                self.look_around_mark_dirty(q, p & pte::DIRTY != 0);
                match folio_lru_gen(self.mem[q as usize].flags) {
                    // Isolated: for shrink_page_list's folio_check_references.
                    None => self.mem[q as usize].flags |= pg::REFERENCED,
                    Some(old) if old != gen => promote.push(q),
                    Some(_) => {}
                }
            } else {
                self.walk_young_pte(&mut last, walk_lv, q, gen, p & pte::DIRTY != 0);
            }
        }
        if let Some((folio, dirty)) = last {
            self.walk_update_folio(walk_lv, folio, gen, dirty);
        }
        if young * PTES_PER_LINE >= i {
            self.update_bloom_filter(lv, max_seq, mm, vpn / ptrs);
        }
        if batch_v6_1 {
            self.look_around_promote_v6_1(lv, &promote);
            self.give_pfn_buf(promote);
        }
        self.leave(prev);
    }
}

/// The eviction.
impl Sim {
    /// sort_folio: true if the folio is not to be isolated (moved to its promoted
    /// generation, protected by its tier, or waiting for writeback).
    fn sort_folio(&mut self, lv: usize, pfn: Pfn, tier_idx: usize, sc: &mut ScanControl) -> bool {
        if self.mglru_v6_1() {
            return self.sort_folio_v6_1(lv, pfn, tier_idx, sc);
        }
        let f = self.mem[pfn as usize].flags;
        let gen = folio_lru_gen(f).expect("on an lrugen list");
        let t = file_type(self, pfn);
        let refs = folio_lru_refs(f);
        let ws = f & pg::WORKINGSET != 0;
        let tier = lru_tier_from_refs(refs, ws);
        let min_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
        // promoted
        if gen != min_gen {
            self.lru_gen_list_move(lv, pfn, gen, false);
            return true;
        }
        // protected
        if tier > tier_idx || refs + u32::from(ws) == (1 << LRU_REFS_WIDTH) + 1 {
            let g = self.folio_inc_gen(lv, pfn, false);
            self.lru_gen_list_move(lv, pfn, g, false);
            if refs + u32::from(ws) != (1 << LRU_REFS_WIDTH) + 1 {
                let delta = self.mem[pfn as usize].nr_pages();
                let lg = &mut self.lruvecs[lv].lrugen;
                lg.protected[t][tier] += delta;
                lg.totals.protected[t][tier] += delta;
            }
            return true;
        }
        self.sort_folio_writeback(lv, pfn, sc)
    }

    /// sort_folio's last case: a dirty file folio (counted for the caller's throttling) or
    /// one under writeback moves to the next generation marked PG_reclaim.
    pub(crate) fn sort_folio_writeback(
        &mut self,
        lv: usize,
        pfn: Pfn,
        sc: &mut ScanControl,
    ) -> bool {
        let f = self.mem[pfn as usize].flags;
        let t = file_type(self, pfn);
        let dirty = f & pg::DIRTY != 0;
        let writeback = f & pg::WRITEBACK != 0;
        if t == LRU_GEN_FILE && dirty {
            let delta = self.mem[pfn as usize].nr_pages();
            sc.nr.file_taken += delta;
            if !writeback {
                sc.nr.unqueued_dirty += delta;
            }
        }
        // waiting for writeback
        if writeback || (t == LRU_GEN_FILE && dirty) {
            let g = self.folio_inc_gen(lv, pfn, true);
            self.lru_gen_list_move(lv, pfn, g, false);
            return true;
        }
        false
    }

    /// isolate_folio: take a reference, clear PG_lru, forget refs beyond PG_referenced,
    /// clear PG_reclaim, and take it off its list.
    fn isolate_folio(&mut self, pfn: Pfn) -> bool {
        if self.mem[pfn as usize].refcount <= 0 {
            return false;
        }
        self.get_page(pfn);
        if !self.TestClearPageLRU(pfn) {
            self.put_page(pfn);
            return false;
        }
        if self.mglru_v6_1() {
            self.isolate_folio_flags_v6_1(pfn);
        } else {
            if !self.PageReferenced(pfn) {
                self.mem[pfn as usize].flags &= !pg::LRU_REFS_MASK;
            }
            self.ClearPageReclaim(pfn);
        }
        self.lru_gen_del_folio(pfn, true);
        true
    }

    /// scan_folios: scan the oldest generation of `t` from its tail, sorting and isolating
    /// up to MIN_LRU_BATCH pages, looking at no more than `nr_to_scan` (at most
    /// MAX_LRU_BATCH) folios. Returns pages scanned (0 if nothing was isolated and the
    /// batch did not run out); every count is of pages (folio_nr_pages).
    pub(crate) fn scan_folios(
        &mut self,
        nr_to_scan: u64,
        lv: usize,
        t: usize,
        tier: usize,
        sc: &mut ScanControl,
        list: &mut Vec<Pfn>,
    ) -> u64 {
        let prev = self.enter(KFunc::ScanFolios);
        if self.lruvecs[lv].lrugen.nr_gens(t) == MIN_NR_GENS {
            self.leave(prev);
            return 0;
        }
        let memcg = (lv / self.nodes.len()) as MemcgId;
        let gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
        let mut remaining = nr_to_scan.clamp(1, MAX_LRU_BATCH);
        let (mut scanned, mut sorted, mut isolated, mut skipped) = (0u64, 0u64, 0u64, 0u64);
        let mut moved = Vec::new();
        // The struct pages of the next folios to scan load ahead (host hints).
        self.lruvecs[lv].lrugen.folios[gen][t].prefetch_tail_batch(&self.mem, remaining as usize);
        loop {
            let ring = &self.lruvecs[lv].lrugen.folios[gen][t];
            ring.prefetch_tail(&self.mem, PREFETCH_AHEAD);
            let pfn = ring.tail();
            if pfn == NIL {
                break;
            }
            self.charge(self.costs.mem_access_ps);
            let delta = self.mem[pfn as usize].nr_pages();
            scanned += delta;
            if self.sort_folio(lv, pfn, tier, sc) {
                sorted += delta;
            } else if self.isolate_folio(pfn) {
                list.push(pfn);
                isolated += delta;
            } else {
                // Not isolatable now: set aside, put back at the tail afterwards.
                self.lruvecs[lv].lrugen.folios[gen][t].del(&mut self.mem, pfn);
                moved.push(pfn);
                skipped += delta;
            }
            remaining -= 1;
            if remaining == 0 || isolated.max(skipped) >= MIN_LRU_BATCH {
                break;
            }
        }
        for pfn in moved.into_iter().rev() {
            self.lruvecs[lv].lrugen.folios[gen][t].add_tail(&mut self.mem, pfn);
        }
        let (scan_item, _) = self.reclaim_items(sc);
        if !sc.cgroup_reclaim() {
            self.vmstat.add(scan_item, isolated as i64);
            self.vmstat.add(VmItem::Pgrefill, sorted as i64);
        }
        self.count_memcg_events(memcg, scan_item, isolated as i64);
        self.count_memcg_events(memcg, VmItem::Pgrefill, sorted as i64);
        let by_type = if t == LRU_GEN_FILE {
            VmItem::PgscanFile
        } else {
            VmItem::PgscanAnon
        };
        self.vmstat.add(by_type, isolated as i64);
        self.count_memcg_events(memcg, by_type, isolated as i64);
        if t == LRU_GEN_FILE {
            sc.nr.file_taken += isolated;
        }
        self.leave(prev);
        if isolated > 0 || remaining == 0 {
            scanned
        } else {
            0
        }
    }

    /// isolate_folios: the type chosen by get_type_to_scan first, the other if it yields
    /// nothing. Returns (scanned, type).
    fn isolate_folios(
        &mut self,
        nr_to_scan: u64,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
        list: &mut Vec<Pfn>,
    ) -> (u64, usize) {
        if self.mglru_v6_1() {
            return self.isolate_folios_v6_1(lv, sc, swappiness, list);
        }
        let mut t = self.get_type_to_scan(lv, swappiness);
        for _ in evictable_types(swappiness) {
            let tier = self.get_tier_idx(lv, t);
            let scanned = self.scan_folios(nr_to_scan, lv, t, tier, sc, list);
            if scanned > 0 {
                return (scanned, t);
            }
            t = 1 - t;
        }
        (0, t)
    }

    /// evict_folios: isolate a batch from the oldest generation, reclaim it with
    /// shrink_page_list, put the rest back (not into the oldest generation), retry the
    /// clean ones once. Returns (folios scanned, the type evicted: None when nothing was
    /// isolated).
    pub(crate) fn evict_folios(
        &mut self,
        nr_to_scan: u64,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
    ) -> (u64, Option<usize>) {
        let prev = self.enter(KFunc::EvictFolios);
        let node = lv % self.nodes.len();
        let memcg = (lv / self.nodes.len()) as MemcgId;
        self.lru_lock(lv);
        let mut list = Vec::new();
        let (mut scanned, t) = self.isolate_folios(nr_to_scan, lv, sc, swappiness, &mut list);
        scanned += u64::from(self.try_to_inc_min_seq(lv, swappiness));
        {
            let g = &self.lruvecs[lv].lrugen;
            if evictable_min_seq(g.min_seq, swappiness) + MIN_NR_GENS > g.max_seq {
                scanned = 0;
            }
        }
        self.lru_unlock(lv);
        if list.is_empty() {
            self.leave(prev);
            return (scanned, None);
        }
        let file = t == LRU_GEN_FILE;
        let iso = if file {
            VmItem::NrIsolatedFile
        } else {
            VmItem::NrIsolatedAnon
        };
        let mut skip_retry = false;
        // 6.1 has no retry of clean folios ("mm: multi-gen LRU: retry folios written back
        // while isolated", 6.2) and its own flags for the rejected ones.
        let v6_1 = self.mglru_v6_1();
        loop {
            // shrink_folio_list's nr_scanned: the folios' pages.
            let taken = list
                .iter()
                .map(|&p| self.mem[p as usize].nr_pages())
                .sum::<u64>() as i64;
            self.vmstat.add(iso, taken);
            sc.nr_scanned += taken as u64;
            let stat = self.shrink_page_list_for(node, &mut list, sc);
            self.trace_shrink_inactive(scanned, &stat, sc.priority);
            let reclaimed = stat.reclaimed;
            sc.nr_reclaimed += reclaimed;
            // Only the unqueued dirty count goes to the reclaim's totals (the other
            // reclaim_stat counts are shrink_inactive_list's, which MGLRU does not run).
            sc.nr.unqueued_dirty += stat.nr_unqueued_dirty;
            let mut clean = Vec::new();
            let mut back = Vec::with_capacity(list.len());
            for &pfn in list.iter().rev() {
                let f = self.mem[pfn as usize].flags;
                if v6_1 {
                    self.evict_folios_putback_flags_v6_1(pfn);
                    back.push(pfn);
                    continue;
                }
                if !skip_retry
                    && f & (pg::ACTIVE | pg::DIRTY | pg::WRITEBACK) == 0
                    && !self.folio_mapped(pfn)
                    && f & pg::UNEVICTABLE == 0
                {
                    // Retried below, where shrink_folio_list counts it scanned again
                    // (6.11's "mm/mglru: fix div-by-zero in vmpressure_calc_level()").
                    clean.push(pfn);
                    continue;
                }
                // Don't add rejected folios to the oldest generation.
                if f & pg::UNEVICTABLE == 0 {
                    let tt = file_type(self, pfn);
                    let min = self.lruvecs[lv].lrugen.min_seq[tt];
                    let plv = self.page_lruvec_idx(pfn);
                    if self.lru_gen_folio_seq(plv, pfn, false) == min {
                        let p = &mut self.mem[pfn as usize];
                        p.flags &= !(pg::LRU_REFS_MASK | pg::REFERENCED);
                        p.flags |= pg::ACTIVE;
                    }
                }
                back.push(pfn);
            }
            self.lru_lock(lv);
            let mut to_free = Vec::new();
            for pfn in back {
                self.putback_one(pfn, &mut to_free);
            }
            let (_, steal_item) = self.reclaim_items(sc);
            if !sc.cgroup_reclaim() {
                self.vmstat.add(steal_item, reclaimed as i64);
            }
            self.count_memcg_events(memcg, steal_item, reclaimed as i64);
            let by_type = if file {
                VmItem::PgstealFile
            } else {
                VmItem::PgstealAnon
            };
            self.vmstat.add(by_type, reclaimed as i64);
            self.count_memcg_events(memcg, by_type, reclaimed as i64);
            self.vmstat.add(iso, -taken);
            self.lru_unlock(lv);
            for pfn in to_free {
                self.free_hot_cold_page(pfn);
            }
            if clean.is_empty() {
                break;
            }
            list = clean;
            skip_retry = true;
        }
        self.leave(prev);
        (scanned, Some(t))
    }

    /// should_run_aging: (must or should age, folios of the evictable types). With only
    /// MIN_NR_GENS generations eviction is impossible; with three, aging is due.
    fn should_run_aging(&self, lv: usize, swappiness: u64) -> (bool, u64) {
        let g = &self.lruvecs[lv].lrugen;
        let min = evictable_min_seq(g.min_seq, swappiness);
        if min + MIN_NR_GENS > g.max_seq {
            return (true, 0);
        }
        let mut size = 0u64;
        for t in evictable_types(swappiness) {
            for seq in g.min_seq[t]..=g.max_seq {
                size += g.nr_pages[lru_gen_from_seq(seq)][t].max(0) as u64;
            }
        }
        (min + MIN_NR_GENS == g.max_seq, size)
    }

    /// get_nr_to_scan: folios to scan this round; -1 to stop (protected, or aged), 0 to
    /// stop without rotating.
    fn get_nr_to_scan(&mut self, lv: usize, sc: &mut ScanControl, swappiness: u64) -> i64 {
        let memcg = (lv / self.nodes.len()) as MemcgId;
        if self.mem_cgroup_below_min(sc.target_memcg, memcg) {
            return -1;
        }
        let (age, nr) = self.should_run_aging(lv, swappiness);
        let (nr, low_skipped) = self.apply_proportional_protection(memcg, sc, nr);
        sc.memcg_low_skipped |= low_skipped;
        if !age || sc.priority == DEF_PRIORITY {
            return (nr >> sc.priority) as i64;
        }
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        if self.try_to_inc_max_seq(lv, max_seq, swappiness, false) {
            -1
        } else {
            0
        }
    }

    /// apply_proportional_protection: memory.min / memory.low scale the scan target; the
    /// second value is whether memory.low held some back (sc->memcg_low_skipped, so that
    /// do_try_to_free_pages retries with memory.low ignored before giving up).
    fn apply_proportional_protection(
        &self,
        memcg: MemcgId,
        sc: &ScanControl,
        scan: u64,
    ) -> (u64, bool) {
        let (min, low) = self.mem_cgroup_protection(sc.target_memcg, memcg);
        if min == 0 && low == 0 {
            return (scan, false);
        }
        let (protection, low_skipped) = if !sc.memcg_low_reclaim && low > min {
            (low, true)
        } else {
            (min, false)
        };
        let cgroup_size = self.memcgs[memcg as usize].usage.max(protection);
        let s = scan - (scan as u128 * protection as u128 / (cgroup_size as u128 + 1)) as u64;
        (s.max(crate::mm::vmscan::SWAP_CLUSTER_MAX), low_skipped)
    }

    /// should_abort_scan: root reclaim met its target, or kswapd balanced the node.
    fn should_abort_scan(&self, node: usize, sc: &ScanControl) -> bool {
        if sc.cgroup_reclaim() {
            return false;
        }
        if sc.nr_reclaimed >= sc.nr_to_reclaim {
            return true;
        }
        if !sc.is_kswapd {
            return false;
        }
        self.zone_watermark_ok(node, self.nodes[node].watermark.high + MIN_LRU_BATCH)
    }

    /// try_to_shrink_lruvec: evict until the scan target is met; true if the lruvec
    /// should rotate (aged, or protected).
    pub fn try_to_shrink_lruvec(
        &mut self,
        node: usize,
        memcg: MemcgId,
        sc: &mut ScanControl,
    ) -> bool {
        let prev = self.enter(KFunc::TryToShrinkLruvec);
        let lv = self.lruvec_idx(memcg, node);
        let swappiness = self.lru_gen_swappiness(memcg, sc);
        let mut scanned = 0u64;
        self.init_tlb_ubc();
        let nr_to_scan = loop {
            let nr = self.get_nr_to_scan(lv, sc, swappiness);
            if nr <= 0 {
                break nr;
            }
            let (delta, _) = self.evict_folios(nr as u64, lv, sc, swappiness);
            if delta == 0 {
                break nr;
            }
            scanned += delta;
            if scanned >= nr as u64 || self.should_abort_scan(node, sc) {
                break nr;
            }
        };
        if sc.nr.unqueued_dirty > 0 && sc.nr.unqueued_dirty == sc.nr.file_taken {
            for d in 0..self.devices.len() {
                if self.features.vmscan_kick_flushers {
                    self.wakeup_flusher_threads(d);
                } else {
                    self.wb_start_background_writeback(d);
                }
            }
        }
        self.leave(prev);
        nr_to_scan < 0
    }

    /// shrink_one: one memcg's lruvec in global reclaim; returns the memcg-LRU move.
    fn shrink_one(&mut self, node: usize, memcg: MemcgId, sc: &mut ScanControl) -> MemcgLruOp {
        let lv = self.lruvec_idx(memcg, node);
        if self.mem_cgroup_below_min(ROOT_MEM_CGROUP, memcg) {
            return MemcgLruOp::Young;
        }
        if self.mem_cgroup_below_low(ROOT_MEM_CGROUP, memcg) {
            if self.lruvecs[lv].lrugen.seg != SEG_TAIL {
                return MemcgLruOp::Tail;
            }
            self.memcg_memory_event(memcg, crate::mm::memcontrol::MemcgEvent::Low);
        }
        let success = self.try_to_shrink_lruvec(node, memcg, sc);
        if self.features.shadow_lru_limit {
            self.scan_shadow_nodes_memcg(node, memcg, sc.priority);
        }
        // shrink_slab, then flush_reclaim_state (root reclaim counts freed slab pages).
        sc.nr_reclaimed += self.shrink_slab_vfs(node, memcg, sc.priority, sc.gfp, sc.is_kswapd);
        if success {
            return MemcgLruOp::Young;
        }
        if self.lruvec_is_sizable(lv, sc) {
            return MemcgLruOp::Nop;
        }
        if self.lruvecs[lv].lrugen.seg != SEG_TAIL {
            MemcgLruOp::Tail
        } else {
            MemcgLruOp::Young
        }
    }

    fn lruvec_is_sizable(&self, lv: usize, sc: &ScanControl) -> bool {
        let memcg = (lv / self.nodes.len()) as MemcgId;
        let swappiness = self.lru_gen_swappiness(memcg, sc);
        let g = &self.lruvecs[lv].lrugen;
        let mut total = 0u64;
        for t in evictable_types(swappiness) {
            for seq in g.min_seq[t]..=g.max_seq {
                total += g.nr_pages[lru_gen_from_seq(seq)][t].max(0) as u64;
            }
        }
        (total >> sc.priority) > 0
    }

    /// get_random_u32_below(MEMCG_NR_BINS), from the memcg LRU's own stream.
    fn memcg_lru_random_bin(&mut self) -> usize {
        rand::Rng::gen_range(&mut self.memcg_lru_rng, 0..MEMCG_NR_BINS)
    }

    /// lru_gen_online_memcg for every memcg, in pre-order: each goes to the tail of a
    /// random bin (one draw for all nodes) of the oldest generation.
    pub(crate) fn lru_gen_online_memcgs(&mut self) {
        for memcg in 0..self.memcgs.len() as MemcgId {
            let bin = self.memcg_lru_random_bin();
            for node in 0..self.nodes.len() {
                let ml = &mut self.memcg_lru[node];
                let gen = (ml.seq as usize) % MEMCG_NR_GENS;
                ml.fifo[gen][bin].push_back(memcg);
                let g = &mut self.lruvecs[memcg as usize * self.nodes.len() + node].lrugen;
                g.memcg_gen = gen;
                g.memcg_bin = bin;
            }
        }
    }

    /// The memcg LRU: every memcg listed once per node, in the generation and bin its
    /// lruvec names; the oldest generation is not empty.
    fn check_memcg_lru(&self) -> Result<(), String> {
        let nodes = self.nodes.len();
        for (node, ml) in self.memcg_lru.iter().enumerate() {
            let mut seen = vec![0u32; self.memcgs.len()];
            for (gen, bins) in ml.fifo.iter().enumerate() {
                for (bin, list) in bins.iter().enumerate() {
                    for &m in list {
                        let g = &self.lruvecs[m as usize * nodes + node].lrugen;
                        if (g.memcg_gen, g.memcg_bin) != (gen, bin) {
                            return Err(format!(
                                "node {node}: memcg {m} listed in memcg-LRU generation {gen} bin \
                                 {bin} but its lruvec names {} / {}",
                                g.memcg_gen, g.memcg_bin
                            ));
                        }
                        seen[m as usize] += 1;
                    }
                }
            }
            if let Some(m) = seen.iter().position(|&n| n != 1) {
                return Err(format!(
                    "node {node}: memcg {m} listed {} times in the memcg LRU",
                    seen[m]
                ));
            }
            if ml.nr_memcgs((ml.seq as usize) % MEMCG_NR_GENS) == 0 {
                return Err(format!(
                    "node {node}: the oldest memcg-LRU generation is empty"
                ));
            }
        }
        Ok(())
    }

    /// lru_gen_rotate_memcg: to the tail of a random bin of the same generation (TAIL) or
    /// of the young one (YOUNG); the oldest generation advances once it is empty.
    fn lru_gen_rotate_memcg(&mut self, node: usize, memcg: MemcgId, op: MemcgLruOp) {
        let lv = self.lruvec_idx(memcg, node);
        if op == MemcgLruOp::Nop {
            return;
        }
        let bin = self.memcg_lru_random_bin();
        let ml = &mut self.memcg_lru[node];
        let old = self.lruvecs[lv].lrugen.memcg_gen;
        let old_bin = self.lruvecs[lv].lrugen.memcg_bin;
        let mut new = old;
        let mut seg = 0;
        match op {
            MemcgLruOp::Tail => seg = SEG_TAIL,
            MemcgLruOp::Young => new = (ml.seq as usize + 1) % MEMCG_NR_GENS,
            MemcgLruOp::Nop => unreachable!(),
        }
        if let Some(pos) = ml.fifo[old][old_bin].iter().position(|&m| m == memcg) {
            ml.fifo[old][old_bin].remove(pos);
        }
        ml.fifo[new][bin].push_back(memcg);
        if ml.nr_memcgs(old) == 0 && old == (ml.seq as usize) % MEMCG_NR_GENS {
            ml.seq += 1;
        }
        let g = &mut self.lruvecs[lv].lrugen;
        g.seg = seg;
        g.memcg_gen = new;
        g.memcg_bin = bin;
    }

    /// shrink_many: the memcgs of the oldest memcg-LRU generation, bin by bin from a
    /// random one, each rotated by its result, until root reclaim has enough.
    fn shrink_many(&mut self, node: usize, sc: &mut ScanControl) {
        let gen = (self.memcg_lru[node].seq as usize) % MEMCG_NR_GENS;
        let first_bin = self.memcg_lru_random_bin();
        let mut snapshot: Vec<MemcgId> = Vec::new();
        for i in 0..MEMCG_NR_BINS {
            let bin = (first_bin + i) % MEMCG_NR_BINS;
            snapshot.clear();
            snapshot.extend(self.memcg_lru[node].fifo[gen][bin].iter().copied());
            for &memcg in &snapshot {
                let lv = self.lruvec_idx(memcg, node);
                if self.lruvecs[lv].lrugen.memcg_gen != gen {
                    continue;
                }
                let op = self.shrink_one(node, memcg, sc);
                self.lru_gen_rotate_memcg(node, memcg, op);
                if self.should_abort_scan(node, sc) {
                    return;
                }
            }
        }
    }

    /// set_initial_priority: start where (reclaimable >> priority) ≈ nr_to_reclaim,
    /// clamped to DEF_PRIORITY / 2 ..= DEF_PRIORITY.
    fn set_initial_priority(&self, node: usize, sc: &mut ScanControl) {
        if sc.priority != DEF_PRIORITY || sc.nr_to_reclaim < MIN_LRU_BATCH {
            return;
        }
        let mut reclaimable =
            self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, node, LruList::InactiveFile);
        if self.swap_free_pages() > 0 {
            reclaimable += self.lruvec_lru_size_hier(ROOT_MEM_CGROUP, node, LruList::InactiveAnon);
        }
        let fls = |x: u64| 64 - x.leading_zeros() as i64;
        let priority = fls(reclaimable) - 1 - fls(sc.nr_to_reclaim - 1);
        sc.priority = priority.clamp(DEF_PRIORITY as i64 / 2, DEF_PRIORITY as i64) as u32;
    }

    /// lru_gen_shrink_node: global reclaim of a node under MGLRU.
    pub fn lru_gen_shrink_node(&mut self, node: usize, sc: &mut ScanControl) {
        if self.mglru_reclaim_v6_1() {
            // 6.1: no memcg LRU; the classic shrink_node walks the memcgs.
            self.shrink_node_classic(node, sc);
            return;
        }
        let prev = self.enter(KFunc::LruGenShrinkNode);
        sc.nr = Default::default();
        if sc.may_writepage && sc.may_unmap {
            self.lru_add_drain();
            // set_mm_walk(pgdat, sc->proactive): kswapd's node walk, or one allocated for
            // proactive reclaim (6.3).
            self.lru_gen_walk_active = sc.is_kswapd || sc.proactive;
            self.set_initial_priority(node, sc);
            let reclaimed = sc.nr_reclaimed;
            if sc.is_kswapd {
                sc.nr_reclaimed = 0;
            }
            self.shrink_many(node, sc);
            if sc.is_kswapd {
                sc.nr_reclaimed += reclaimed;
            }
            self.lru_gen_walk_active = false;
        }
        self.leave(prev);
    }

    /// lru_gen_shrink_lruvec: memcg limit reclaim of one lruvec under MGLRU.
    pub fn lru_gen_shrink_lruvec(&mut self, node: usize, memcg: MemcgId, sc: &mut ScanControl) {
        if self.mglru_reclaim_v6_1() {
            self.lru_gen_shrink_lruvec_v6_1(node, memcg, sc);
            return;
        }
        self.lru_add_drain();
        // set_mm_walk(NULL, sc->proactive).
        self.lru_gen_walk_active = sc.proactive;
        if self.try_to_shrink_lruvec(node, memcg, sc) {
            self.lru_gen_rotate_memcg(node, memcg, MemcgLruOp::Young);
        }
        self.lru_gen_walk_active = false;
    }

    /// lru_gen_age_node (kswapd, before each pass): the initial priority, and with min_ttl
    /// set, the OOM killer when every memcg's oldest generation is younger than min_ttl.
    pub fn lru_gen_age_node(&mut self, node: usize, sc: &mut ScanControl) {
        if self.mglru_reclaim_v6_1() {
            self.lru_gen_age_node_v6_1(node, sc);
            return;
        }
        let prev = self.enter(KFunc::LruGenAgeNode);
        self.set_initial_priority(node, sc);
        // Every memcg's effective memory.min and memory.low, top-down from the root: what
        // shrink_one reads in kswapd's and in direct reclaim (6.8's "mm/mglru: fix
        // ineffective protection calculation").
        if self.nr_memcgs() > 1 {
            self.mem_cgroup_calculate_protection(ROOT_MEM_CGROUP);
        }
        let min_ttl_ps = self.mglru.min_ttl_ms.saturating_mul(1_000_000_000);
        let mut reclaimable = min_ttl_ps == 0;
        if !reclaimable {
            let now = self.now();
            for memcg in 0..self.memcgs.len() as MemcgId {
                let lv = self.lruvec_idx(memcg, node);
                // lruvec_is_reclaimable: not below memory.min; a memcg too small to reclaim
                // from counts when it is below memory.low.
                if self.mem_cgroup_below_min(ROOT_MEM_CGROUP, memcg) {
                    continue;
                }
                if !self.lruvec_is_sizable(lv, sc) {
                    if self.mem_cgroup_below_low(ROOT_MEM_CGROUP, memcg) {
                        reclaimable = true;
                        break;
                    }
                    continue;
                }
                let swappiness = self.lru_gen_swappiness(memcg, sc);
                let g = &self.lruvecs[lv].lrugen;
                let birth =
                    g.timestamps[lru_gen_from_seq(evictable_min_seq(g.min_seq, swappiness))];
                if birth.saturating_add(min_ttl_ps) < now {
                    reclaimable = true;
                    break;
                }
            }
        }
        if !reclaimable {
            self.out_of_memory();
        }
        self.leave(prev);
    }
}

/// MEMCG_LRU_TAIL (MEMCG_LRU_HEAD, soft limit reclaim, and MEMCG_LRU_OLD, offlining,
/// are not modelled).
const SEG_TAIL: u8 = 2;

/// The workingset.
impl Sim {
    /// lru_gen_eviction: the shadow of an evicted folio: (min_seq, refs − 1) as the token,
    /// its memcg, node and PG_workingset; counts the eviction in its tier.
    pub fn lru_gen_eviction(&mut self, pfn: Pfn) -> u64 {
        if self.mglru_v6_1() {
            return self.lru_gen_eviction_v6_1(pfn);
        }
        let f = self.mem[pfn as usize].flags;
        let t = file_type(self, pfn);
        let refs = folio_lru_refs(f);
        let ws = f & pg::WORKINGSET != 0;
        let tier = lru_tier_from_refs(refs, ws);
        let lv = self.page_lruvec_idx(pfn);
        let (memcg, node) = ((lv / self.nodes.len()) as MemcgId, lv % self.nodes.len());
        let delta = self.mem[pfn as usize].nr_pages();
        let g = &mut self.lruvecs[lv].lrugen;
        let token = (g.min_seq[t] << LRU_REFS_WIDTH) | u64::from(refs.saturating_sub(1));
        g.evicted[t][tier] += delta;
        g.totals.evicted[t][tier] += delta;
        crate::mm::workingset::pack_shadow(token, memcg, node, ws)
    }

    /// lru_gen_refault: a folio comes back where its shadow was. Counts the refault; if it
    /// was evicted within MAX_NR_GENS generations, counts it in its tier (activate when in
    /// a fault, restore with PG_workingset) and gives back its refs.
    pub fn lru_gen_refault(&mut self, pfn: Pfn, shadow: u64) {
        let (token, memcg, nid, ws) = crate::mm::workingset::unpack_shadow(shadow);
        if nid >= self.nodes.len() || usize::from(memcg) >= self.memcgs.len() {
            return;
        }
        let t = file_type(self, pfn);
        let lv = memcg as usize * self.nodes.len() + nid;
        if lv != self.page_lruvec_idx(pfn) {
            return;
        }
        let file = t == LRU_GEN_FILE;
        if self.mglru_v6_1() {
            return self.lru_gen_refault_v6_1(pfn, lv, token, ws);
        }
        self.count_workingset_refault(pfn, file);
        let delta = self.mem[pfn as usize].nr_pages();
        let mask = (1u64 << (crate::mm::workingset::EVICTION_BITS - LRU_REFS_WIDTH)) - 1;
        let max_seq = self.lruvecs[lv].lrugen.max_seq & mask;
        if max_seq.abs_diff(token >> LRU_REFS_WIDTH) >= MAX_NR_GENS {
            return;
        }
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + 1;
        self.lru_gen_count_refaulted(lv, t, lru_tier_from_refs(refs, ws), delta);
        if self.lru_gen_in_fault {
            self.count_workingset_activate(pfn, file);
        }
        if ws {
            self.mem[pfn as usize].flags |= pg::WORKINGSET;
            self.count_workingset_restore(pfn, file);
        } else {
            let p = &mut self.mem[pfn as usize];
            p.flags = (p.flags & !pg::LRU_REFS_MASK) | ((refs - 1) << pg::LRU_REFS_SHIFT);
        }
    }

    /// workingset_refault (and its anon/file count, in /proc/vmstat and the page's memcg),
    /// by the refaulting folio's pages (mod_lruvec_state(..., delta)).
    pub(crate) fn count_workingset_refault(&mut self, pfn: Pfn, file: bool) {
        let delta = self.mem[pfn as usize].nr_pages() as i64;
        self.vmstat.add(VmItem::WorkingsetRefault, delta);
        let item = if file {
            VmItem::WorkingsetRefaultFile
        } else {
            VmItem::WorkingsetRefaultAnon
        };
        self.vmstat.add(item, delta);
        self.count_memcg_page_event(pfn, item, delta);
    }

    /// A refault of `delta` pages in tier `tier` of type `t` (the PID controller's
    /// refaulted count).
    pub(crate) fn lru_gen_count_refaulted(&mut self, lv: usize, t: usize, tier: usize, delta: u64) {
        let g = &mut self.lruvecs[lv].lrugen;
        g.refaulted[t][tier] += delta;
        g.totals.refaulted[t][tier] += delta;
    }

    /// workingset_activate (and its anon/file count, in /proc/vmstat and the page's memcg),
    /// by the folio's pages.
    pub(crate) fn count_workingset_activate(&mut self, pfn: Pfn, file: bool) {
        let delta = self.mem[pfn as usize].nr_pages() as i64;
        self.vmstat.add(VmItem::WorkingsetActivate, delta);
        let item = if file {
            VmItem::WorkingsetActivateFile
        } else {
            VmItem::WorkingsetActivateAnon
        };
        self.vmstat.add(item, delta);
        self.count_memcg_page_event(pfn, item, delta);
    }

    /// workingset_restore_{anon,file} (in /proc/vmstat and the page's memcg), by the
    /// folio's pages.
    pub(crate) fn count_workingset_restore(&mut self, pfn: Pfn, file: bool) {
        let delta = self.mem[pfn as usize].nr_pages() as i64;
        let item = if file {
            VmItem::WorkingsetRestoreFile
        } else {
            VmItem::WorkingsetRestoreAnon
        };
        self.vmstat.add(item, delta);
        self.vmstat.add(VmItem::WorkingsetRestore, delta);
        self.count_memcg_page_event(pfn, item, delta);
    }
}

/// One generation in the lru_gen debugfs view.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GenView {
    /// The sequence number.
    pub seq: u64,
    /// Age in ms (now − birth).
    pub age_ms: f64,
    /// Anon folios.
    pub anon: i64,
    /// File folios.
    pub file: i64,
}

/// One lruvec in the lru_gen debugfs view (/sys/kernel/debug/lru_gen_full).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LruGenView {
    /// memcg path ("" for the root).
    pub memcg: String,
    /// Node.
    pub node: usize,
    /// max_seq.
    pub max_seq: u64,
    /// min_seq [anon, file].
    pub min_seq: [u64; 2],
    /// Generations from the oldest to the youngest.
    pub gens: Vec<GenView>,
    /// Per tier [anon, file]: (refaulted, evicted, protected) since boot.
    pub tiers: Vec<[[u64; 3]; 2]>,
    /// The mm walk statistics (LOYNFA).
    pub mm_walk: MmStatsView,
}

/// MmStats with the debugfs letters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MmStatsView {
    /// L: leaf entries looked at.
    pub leaf_total: u64,
    /// O: old.
    pub leaf_old: u64,
    /// Y: young.
    pub leaf_young: u64,
    /// N: non-leaf entries.
    pub nonleaf_total: u64,
    /// F: found in the Bloom filter.
    pub nonleaf_found: u64,
    /// A: added to the next filter.
    pub nonleaf_added: u64,
}

impl Sim {
    /// The lru_gen debugfs view of every lruvec.
    pub fn lru_gen_view(&self) -> Vec<LruGenView> {
        let now = self.now();
        let mut out = Vec::new();
        for (lv, l) in self.lruvecs.iter().enumerate() {
            let g = &l.lrugen;
            let memcg = lv / self.nodes.len();
            let lo = g.min_seq[0].min(g.min_seq[1]);
            let gens = (lo..=g.max_seq)
                .map(|seq| {
                    let gen = lru_gen_from_seq(seq);
                    GenView {
                        seq,
                        age_ms: now.saturating_sub(g.timestamps[gen]) as f64 / 1e9,
                        anon: if seq >= g.min_seq[0] {
                            g.nr_pages[gen][0]
                        } else {
                            0
                        },
                        file: if seq >= g.min_seq[1] {
                            g.nr_pages[gen][1]
                        } else {
                            0
                        },
                    }
                })
                .collect();
            let tiers = (0..MAX_NR_TIERS)
                .map(|tier| {
                    let tt = &g.totals;
                    [0, 1].map(|t| {
                        [
                            tt.refaulted[t][tier],
                            tt.evicted[t][tier],
                            tt.protected[t][tier],
                        ]
                    })
                })
                .collect();
            let s = g.mm_state.stats;
            out.push(LruGenView {
                memcg: self.memcgs[memcg].name.clone(),
                node: lv % self.nodes.len(),
                max_seq: g.max_seq,
                min_seq: g.min_seq,
                gens,
                tiers,
                mm_walk: MmStatsView {
                    leaf_total: s.leaf_total,
                    leaf_old: s.leaf_old,
                    leaf_young: s.leaf_young,
                    nonleaf_total: s.nonleaf_total,
                    nonleaf_found: s.nonleaf_found,
                    nonleaf_added: s.nonleaf_added,
                },
            });
        }
        out
    }

    /// Generation sizes for the time series: [anon, file] per age rank, youngest first,
    /// summed over lruvecs.
    // Parallel [gen][type] arrays are indexed together.
    #[allow(clippy::needless_range_loop)]
    pub fn lru_gen_sample(&self) -> Vec<[i64; 2]> {
        let mut out = vec![[0i64; 2]; MAX_NR_GENS as usize];
        for l in &self.lruvecs {
            let g = &l.lrugen;
            for (rank, o) in out.iter_mut().enumerate() {
                let Some(seq) = g.max_seq.checked_sub(rank as u64) else {
                    continue;
                };
                let gen = lru_gen_from_seq(seq);
                for t in 0..2 {
                    if seq >= g.min_seq[t] {
                        o[t] += g.nr_pages[gen][t];
                    }
                }
            }
        }
        out
    }

    /// Check the MGLRU invariants of every lruvec: the sequence window, each list member
    /// on the list its flags name with PG_lru, on a list in the window or of its own
    /// generation, per-gen
    /// counts equal to the folios whose flags name the generation, the compatibility
    /// sizes.
    // Parallel [gen][type] arrays are indexed together.
    #[allow(clippy::needless_range_loop)]
    pub fn check_lru_gen(&self) -> Result<(), String> {
        self.check_memcg_lru()?;
        let mut counts = vec![[[0i64; 2]; MAX_NR_GENS as usize]; self.lruvecs.len()];
        for (lv, l) in self.lruvecs.iter().enumerate() {
            let g = &l.lrugen;
            for t in 0..2 {
                let n = g.nr_gens(t);
                if !(MIN_NR_GENS..=MAX_NR_GENS).contains(&n) {
                    return Err(format!(
                        "lruvec {lv}: type {t} has {n} generations (min_seq {} max_seq {})",
                        g.min_seq[t], g.max_seq
                    ));
                }
            }
            for gen in 0..MAX_NR_GENS as usize {
                for t in 0..2 {
                    let mut len = 0;
                    g.folios[gen][t]
                        .check(&self.mem)
                        .map_err(|e| format!("lrugen list {gen}/{t} of lruvec {lv}: {e}"))?;
                    for pfn in g.folios[gen][t].iter() {
                        let p = &self.mem[pfn as usize];
                        if p.test(pg::TAIL) {
                            return Err(format!("tail page {pfn} on lrugen list {gen}/{t}"));
                        }
                        len += p.nr_pages();
                        let p = &self.mem[pfn as usize];
                        let Some(fg) = folio_lru_gen(p.flags) else {
                            return Err(format!(
                                "pfn {pfn} on lrugen list {gen}/{t} without a generation"
                            ));
                        };
                        if list_gen(p.flags) != gen {
                            return Err(format!(
                                "pfn {pfn} on list {gen} but flags name list {}",
                                list_gen(p.flags)
                            ));
                        }
                        if !p.test(pg::LRU) || p.test(pg::ACTIVE) || p.test(pg::UNEVICTABLE) {
                            return Err(format!(
                                "pfn {pfn} on lrugen list with flags {}",
                                p.flag_names()
                            ));
                        }
                        if usize::from(!p.test(pg::SWAPBACKED)) != t {
                            return Err(format!("pfn {pfn} on the wrong type's list"));
                        }
                        if self.page_lruvec_idx(pfn) != lv {
                            return Err(format!("pfn {pfn} on another memcg's or node's lrugen"));
                        }
                        // The list is in the window, or is the folio's own generation.
                        // Not the folio's generation itself: inc_min_seq ages a type it
                        // may not evict by advancing min_seq alone (6.1's `goto done`
                        // for anon without swap), the oldest list becoming the youngest
                        // by its index, so a folio promoted before (its flags naming a
                        // younger generation than its list) can be left naming an index
                        // the window no longer holds once the lists before its own empty
                        // and min_seq moves up to it; sort_folio then moves it to that
                        // index's list, which the next inc_max_seq makes the youngest.
                        let in_window =
                            (g.min_seq[t]..=g.max_seq).any(|s| lru_gen_from_seq(s) == gen);
                        if !in_window && fg != gen {
                            return Err(format!(
                                "pfn {pfn} on list {gen}, outside the window {}..={}, with \
                                 generation {fg}",
                                g.min_seq[t], g.max_seq
                            ));
                        }
                        counts[lv][fg][t] += p.nr_pages() as i64;
                    }
                    if len != g.folios[gen][t].len {
                        return Err(format!("lrugen list {gen}/{t} of lruvec {lv} miscounted"));
                    }
                }
            }
            for gen in 0..MAX_NR_GENS as usize {
                for t in 0..2 {
                    if counts[lv][gen][t] != g.nr_pages[gen][t] {
                        return Err(format!(
                            "lruvec {lv} gen {gen} type {t}: nr_pages {} but {} folios",
                            g.nr_pages[gen][t], counts[lv][gen][t]
                        ));
                    }
                }
            }
            let mut compat = [0u64; 4];
            for gen in 0..MAX_NR_GENS as usize {
                for t in 0..2 {
                    compat[t * 2 + usize::from(g.is_active(gen))] += counts[lv][gen][t] as u64;
                }
            }
            if compat != g.lru_size {
                return Err(format!(
                    "lruvec {lv}: active/inactive sizes {:?} but generations hold {:?}",
                    g.lru_size, compat
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::rmap::{VM_LOCKED, VM_RAND_READ};

    /// 6.1 without swap: inc_max_seq ages anon by min_seq alone (inc_min_seq's `goto
    /// done`), so an anon folio promoted on the oldest list keeps its list and its flags'
    /// generation while the window slides over both; once swap is back and the list
    /// before it empties, try_to_inc_min_seq moves min_seq up to the folio's list and its
    /// flags name an index outside the window (the kernel's state too). The lists and
    /// counts stay consistent, and sort_folio takes the folio to its own generation's
    /// list, which the next inc_max_seq makes the youngest.
    #[test]
    fn a_folio_promoted_before_anon_aging_without_swap_may_name_a_generation_outside_the_window() {
        let sc = crate::scenario::load_scenario(
            "mglru-anon-stream",
            &["machine.memory_per_node=16MiB".to_string()],
        )
        .expect("built-in");
        let f = crate::kernel::KernelEra::V6_1
            .features("patched")
            .expect("era");
        let mut sim = Sim::new(&sc, f).expect("sim");
        assert!(sim.lru_gen_enabled() && sim.mglru_v6_1());
        let pfn = sim
            .alloc_page(crate::mm::page_alloc::Gfp::KERNEL)
            .expect("a frame");
        sim.mem[pfn as usize].flags |= pg::SWAPBACKED | pg::UPTODATE;
        let lv = sim.page_lruvec_idx(pfn);
        assert!(sim.lru_gen_add_folio(pfn, false));
        sim.mem[pfn as usize].flags |= pg::LRU;
        sim.check_lru_gen().expect("consistent after the add");
        let list = list_gen(sim.mem[pfn as usize].flags);
        // The aging promotes it one index behind its list (a younger generation, as the
        // window is four wide).
        let named = (list + MAX_NR_GENS as usize - 1) % MAX_NR_GENS as usize;
        let g = &sim.lruvecs[lv].lrugen;
        assert_eq!(g.nr_gens(LRU_GEN_ANON), MAX_NR_GENS);
        assert_eq!(sim.folio_update_gen(pfn, named), Some(list));
        sim.lru_gen_update_size(lv, pfn, Some(list), Some(named));
        sim.check_lru_gen().expect("consistent after the promotion");
        // No swap: each new generation ages anon by min_seq alone, until the index the
        // folio names is the oldest.
        while lru_gen_from_seq(sim.lruvecs[lv].lrugen.min_seq[LRU_GEN_ANON]) != named {
            let seq = sim.lruvecs[lv].lrugen.max_seq;
            assert!(sim.inc_max_seq(lv, seq, 0));
            sim.check_lru_gen()
                .expect("consistent while anon ages without swap");
        }
        assert_eq!(list_gen(sim.mem[pfn as usize].flags), list, "never moved");
        // Swap again: min_seq passes the empty oldest list up to the folio's.
        assert!(sim.try_to_inc_min_seq(lv, 60));
        let g = &sim.lruvecs[lv].lrugen;
        assert_eq!(lru_gen_from_seq(g.min_seq[LRU_GEN_ANON]), list);
        let named_in_window =
            (g.min_seq[LRU_GEN_ANON]..=g.max_seq).any(|s| lru_gen_from_seq(s) == named);
        assert!(
            !named_in_window,
            "the folio names no generation of the window"
        );
        sim.check_lru_gen()
            .expect("the kernel's state is consistent");
        // sort_folio: promoted, to its own generation's list (outside the window)...
        let mut sc = ScanControl::new(32, false, crate::mm::page_alloc::Gfp::KERNEL);
        assert!(sim.sort_folio_v6_1(lv, pfn, 0, &mut sc));
        assert_eq!(list_gen(sim.mem[pfn as usize].flags), named);
        sim.check_lru_gen().expect("on its own generation's list");
        // ...which the next generation brings back into the window, as the youngest.
        let seq = sim.lruvecs[lv].lrugen.max_seq;
        assert!(sim.inc_max_seq(lv, seq, 60));
        assert_eq!(lru_gen_from_seq(sim.lruvecs[lv].lrugen.max_seq), named);
        sim.check_lru_gen().expect("consistent at the end");
    }

    /// should_skip_vma: shmem is walked as anonymous memory is (only with a swappiness), and
    /// other files are skipped when reclaim takes anon only (swappiness above the maximum).
    #[test]
    fn the_aging_walk_skips_vmas_as_should_skip_vma_does() {
        let anon_only = MAX_SWAPPINESS + 1;
        for (flags, swapbacked, swappiness, skip) in [
            (0, true, 0, true),             // anon or shmem, file reclaim only
            (0, true, 60, false),           // anon or shmem
            (0, true, anon_only, false),    // shmem under memory.reclaim swappiness=max
            (0, false, 0, false),           // a file, file reclaim only
            (0, false, anon_only, true),    // a file, anon reclaim only
            (VM_LOCKED, false, 60, true),   // mlocked
            (VM_RAND_READ, true, 60, true), // no recency
        ] {
            assert_eq!(
                Sim::should_skip_vma(flags, swapbacked, swappiness),
                skip,
                "{flags:#x} {swapbacked} {swappiness}"
            );
        }
    }
}
