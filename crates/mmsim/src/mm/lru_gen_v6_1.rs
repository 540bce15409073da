//! MGLRU as 6.1 had it: the workingset protection before 6.14's rework (rule
//! `mglru-workingset-rework` off, the 6.1 era). `mm/lru_gen.rs` models 6.14+ and calls
//! these where 6.1 differed (mm/vmscan.c, include/linux/mm_inline.h, mm/workingset.c and
//! mm/swap.c of v6.1):
//!
//! - Placement (lru_gen_add_folio): an active folio (a page fault's, or an activated one)
//!   goes to max_seq; an anon folio not in the swap cache, or one marked for reclaim while
//!   dirty or under writeback, to min_seq + 1; everything else, PG_workingset or not, to
//!   the oldest generation.
//! - Accesses through file descriptors (folio_inc_refs) set PG_referenced, then
//!   PG_workingset, then count up LRU_REFS; a folio's refs are LRU_REFS + PG_workingset
//!   (0..=4) and its tier order_base_2(refs + 1) (folio_lru_refs, lru_tier_from_refs).
//! - A young PTE promotes a folio to max_seq at its first sighting, clearing PG_referenced
//!   and PG_workingset (folio_update_gen; lru_gen_look_around activates it outside a walk,
//!   and marks an isolated folio PG_referenced). Eviction then decides with the classic
//!   folio_check_references (look twice: PG_referenced or two young PTEs activate).
//! - The eviction (sort_folio) protects the tiers above the PID controller's index only,
//!   moves the folio to the tail of the next generation and counts workingset_activate
//!   (until 6.5's `mglru-refault-accounting`); a locked folio (a readahead folio still
//!   being read) moves on to the next generation with PG_reclaim like one under
//!   writeback, never isolated (6.14 dropped the lock test);
//!   folio_inc_gen clears PG_referenced and PG_workingset; inc_min_seq protects nothing;
//!   isolate_folio clears PG_referenced (and refs and PG_workingset of an unreferenced
//!   folio).
//! - Workingset: the shadow keeps min_seq and refs − 1, with PG_workingset meaning refs > 0;
//!   a refault counts only while the evicted generation is still the oldest (min_seq), then
//!   in its tier and as workingset_refault (from 6.5, `mglru-refault-accounting`, every
//!   refault counts as workingset_refault and one from the oldest generation as
//!   workingset_activate); a refault in a fault, or of a folio with the most refs, gets
//!   PG_workingset (workingset_restore). Refs are not given back.
//!
//! - Reclaim (rule `mglru-memcg-lru` off): there is no memcg LRU (6.3). Global and memcg
//!   reclaim alike go through the classic shrink_node_memcgs, which calls
//!   lru_gen_shrink_lruvec for every memcg in mem_cgroup_iter order; its get_nr_to_scan
//!   and should_abort_scan carry 6.1's fairness safeguards, and kswapd leaves the aging to
//!   lru_gen_age_node, which ages every memcg before a pass (sc->memcgs_need_aging).
//!
//! - lru_gen_look_around without a walk activates fewer than PAGEVEC_SIZE young
//!   neighbours one by one and moves more to max_seq in place under the lru_lock.
//!
//! - Type and tier selection (isolate_folios, get_type_to_scan, get_tier_idx): file
//!   without swappiness, anon while its oldest generation is older than file's, file at
//!   swappiness 1, anon at 200; else the PID controller compares tier 0 of anon with
//!   tier 0 of file (gains swappiness : 200 − swappiness), and the chosen type's tiers
//!   with the other type's tier 0 for the tier index; the other type's fallback tier
//!   index compares with its own tier 0 at gain 1:2. (6.14: the sums of all tiers, and
//!   2:3.)
//! - try_to_inc_min_seq keeps anon's min_seq at or below file's; with swapping, file's
//!   moves past its empty generations only as far as anon's new one.

use crate::machine::profile::KFunc;
use crate::mm::lru_gen::{
    folio_lru_gen, lru_gen_from_seq, positive_ctrl_err, LRU_REFS_WIDTH, MAX_LRU_BATCH,
    MAX_NR_TIERS, MAX_SWAPPINESS, MIN_LRU_BATCH, MIN_NR_GENS,
};
use crate::mm::memcontrol::{MemcgId, ROOT_MEM_CGROUP};
use crate::mm::page::{pg, Pfn};
use crate::mm::vmscan::{PageReferences, ScanControl, DEF_PRIORITY};
use crate::sim::Sim;

const LRU_GEN_ANON: usize = 0;
const LRU_GEN_FILE: usize = 1;

/// folio_lru_refs (v6.1): accesses beyond PG_referenced, PG_workingset counting as the
/// first (0..=BIT(LRU_REFS_WIDTH)).
pub fn folio_lru_refs_v6_1(flags: u32) -> u32 {
    ((flags & pg::LRU_REFS_MASK) >> pg::LRU_REFS_SHIFT) + u32::from(flags & pg::WORKINGSET != 0)
}

/// lru_tier_from_refs (v6.1): order_base_2(refs + 1).
pub fn lru_tier_from_refs_v6_1(refs: u32) -> usize {
    (32 - refs.leading_zeros()) as usize
}

impl Sim {
    /// Whether MGLRU runs with 6.1's workingset protection.
    #[inline]
    pub(crate) fn mglru_v6_1(&self) -> bool {
        !self.features.mglru_workingset_rework
    }

    /// lru_gen_add_folio's placement (v6.1).
    pub(crate) fn lru_gen_folio_seq_v6_1(&self, lv: usize, pfn: Pfn) -> u64 {
        let p = &self.mem[pfn as usize];
        let g = &self.lruvecs[lv].lrugen;
        let t = usize::from(!p.test(pg::SWAPBACKED));
        if p.test(pg::ACTIVE) {
            g.max_seq
        } else if (t == LRU_GEN_ANON && !p.test(pg::SWAPCACHE))
            || (p.test(pg::RECLAIM) && (p.test(pg::DIRTY) || p.test(pg::WRITEBACK)))
        {
            g.min_seq[t] + 1
        } else {
            g.min_seq[t]
        }
    }

    /// folio_inc_refs (v6.1): PG_referenced, then PG_workingset, then LRU_REFS.
    pub(crate) fn lru_gen_inc_refs_v6_1(&mut self, pfn: Pfn) {
        let p = &mut self.mem[pfn as usize];
        let f = p.flags;
        if f & pg::REFERENCED == 0 {
            p.flags |= pg::REFERENCED;
        } else if f & pg::WORKINGSET == 0 {
            p.flags |= pg::WORKINGSET;
        } else if f & pg::LRU_REFS_MASK != pg::LRU_REFS_MASK {
            p.flags = f + (1 << pg::LRU_REFS_SHIFT);
        }
    }

    /// folio_update_gen (v6.1): a young folio goes to `gen` at once, its refs flags
    /// cleared; an isolated one (no generation) gets PG_referenced for
    /// folio_check_references. Returns the old generation.
    pub(crate) fn folio_update_gen_v6_1(&mut self, pfn: Pfn, gen: usize) -> Option<usize> {
        let p = &mut self.mem[pfn as usize];
        let Some(old) = folio_lru_gen(p.flags) else {
            p.flags |= pg::REFERENCED;
            return None;
        };
        p.flags &= !(pg::LRU_GEN_MASK | pg::LRU_REFS_MASK | pg::REFERENCED | pg::WORKINGSET);
        p.flags |= (gen as u32 + 1) << pg::LRU_GEN_SHIFT;
        Some(old)
    }

    /// lru_gen_look_around's promotion without a walk (v6.1): fewer than PAGEVEC_SIZE
    /// young neighbours in another generation are activated one by one (folio_activate);
    /// more are moved to max_seq in place under the lru_lock (folio_update_gen, the lists
    /// sorted lazily on eviction).
    pub(crate) fn look_around_promote_v6_1(&mut self, lv: usize, pfns: &[Pfn]) {
        if pfns.len() < crate::mm::swap::pagevec_size(&self.features) {
            for &pfn in pfns {
                self.activate_page(pfn);
            }
            return;
        }
        self.lru_lock(lv);
        let new_gen = lru_gen_from_seq(self.lruvecs[lv].lrugen.max_seq);
        for &pfn in pfns {
            let Some(old) = self.folio_update_gen(pfn, new_gen) else {
                continue;
            };
            if old != new_gen {
                self.lru_gen_update_size(lv, pfn, Some(old), Some(new_gen));
            }
        }
        self.lru_unlock(lv);
    }

    /// sort_folio (v6.1). True when the folio was moved (not to be isolated).
    pub(crate) fn sort_folio_v6_1(
        &mut self,
        lv: usize,
        pfn: Pfn,
        tier_idx: usize,
        sc: &mut ScanControl,
    ) -> bool {
        let f = self.mem[pfn as usize].flags;
        let gen = folio_lru_gen(f).expect("on an lrugen list");
        let t = usize::from(f & pg::SWAPBACKED == 0);
        let tier = lru_tier_from_refs_v6_1(folio_lru_refs_v6_1(f));
        let min_gen = crate::mm::lru_gen::lru_gen_from_seq(self.lruvecs[lv].lrugen.min_seq[t]);
        // promoted
        if gen != min_gen {
            self.lru_gen_list_move(lv, pfn, gen, false);
            return true;
        }
        // protected
        if tier > tier_idx {
            let g = self.folio_inc_gen(lv, pfn, false);
            self.lru_gen_list_move(lv, pfn, g, true);
            let lg = &mut self.lruvecs[lv].lrugen;
            lg.protected[t][tier] += 1;
            lg.totals.protected[t][tier] += 1;
            // Until 6.5 (`mglru-refault-accounting`) a protected folio counts as an
            // activation.
            if !self.features.mglru_refault_accounting {
                self.count_workingset_activate(pfn, t == LRU_GEN_FILE);
            }
            return true;
        }
        // waiting for writeback: 6.1 also moves on a locked folio (a readahead folio
        // still being read, say), so it is never isolated (6.14's rework dropped the
        // lock test); PG_reclaim is set, which is PG_readahead too.
        if f & pg::LOCKED != 0 {
            let g = self.folio_inc_gen(lv, pfn, true);
            self.lru_gen_list_move(lv, pfn, g, false);
            return true;
        }
        self.sort_folio_writeback(lv, pfn, sc)
    }

    /// evict_folios (v6.1), a folio shrink_page_list did not reclaim: PG_workingset gives
    /// back the PG_referenced isolate_folio cleared; one marked for reclaim while dirty or
    /// under writeback loses PG_active (it goes to min_seq + 1), every other is made
    /// PG_active so that it is not put back into the oldest generation (it goes to
    /// max_seq). There is no retry of clean folios.
    pub(crate) fn evict_folios_putback_flags_v6_1(&mut self, pfn: Pfn) {
        let p = &mut self.mem[pfn as usize];
        let f = p.flags;
        if f & pg::UNEVICTABLE != 0 {
            return;
        }
        if f & pg::WORKINGSET != 0 {
            p.flags |= pg::REFERENCED;
        }
        if f & pg::RECLAIM != 0 && f & (pg::DIRTY | pg::WRITEBACK) != 0 {
            p.flags &= !pg::ACTIVE;
        } else {
            p.flags |= pg::ACTIVE;
        }
    }

    /// isolate_folio's flag work (v6.1): an unreferenced folio forgets its refs and
    /// PG_workingset; PG_reclaim and PG_referenced are cleared for shrink_page_list.
    pub(crate) fn isolate_folio_flags_v6_1(&mut self, pfn: Pfn) {
        let p = &mut self.mem[pfn as usize];
        if p.flags & pg::REFERENCED == 0 {
            p.flags &= !(pg::LRU_REFS_MASK | pg::WORKINGSET);
        }
        p.flags &= !(pg::RECLAIM | pg::REFERENCED);
    }

    /// lru_gen_eviction (v6.1): the token is (min_seq, max(refs − 1, 0)) and the shadow's
    /// workingset bit says refs > 0; the eviction counts in the folio's tier.
    pub(crate) fn lru_gen_eviction_v6_1(&mut self, pfn: Pfn) -> u64 {
        let f = self.mem[pfn as usize].flags;
        let t = usize::from(f & pg::SWAPBACKED == 0);
        let refs = folio_lru_refs_v6_1(f);
        let tier = lru_tier_from_refs_v6_1(refs);
        let lv = self.page_lruvec_idx(pfn);
        let nodes = self.nodes.len();
        let (memcg, node) = ((lv / nodes) as crate::mm::memcontrol::MemcgId, lv % nodes);
        let g = &mut self.lruvecs[lv].lrugen;
        let token = (g.min_seq[t] << LRU_REFS_WIDTH) | u64::from(refs.saturating_sub(1));
        g.evicted[t][tier] += 1;
        g.totals.evicted[t][tier] += 1;
        crate::mm::workingset::pack_shadow(token, memcg, node, refs > 0)
    }

    /// lru_gen_refault (v6.1), a refault in the lruvec it was evicted from: only a folio
    /// evicted from the generation that is still the oldest counts in its tier and as
    /// workingset_refault (6.5's `mglru-refault-accounting`: every refault counts as
    /// workingset_refault, and one from the oldest generation as workingset_activate too);
    /// in a fault, or with the most refs, it gets PG_workingset (workingset_restore).
    pub(crate) fn lru_gen_refault_v6_1(&mut self, pfn: Pfn, lv: usize, token: u64, ws: bool) {
        let t = usize::from(!self.mem[pfn as usize].test(pg::SWAPBACKED));
        let file = t == LRU_GEN_FILE;
        let fixed = self.features.mglru_refault_accounting;
        if fixed {
            self.count_workingset_refault(pfn, file);
        }
        let mask = (1u64 << (crate::mm::workingset::EVICTION_BITS - LRU_REFS_WIDTH)) - 1;
        if token >> LRU_REFS_WIDTH != self.lruvecs[lv].lrugen.min_seq[t] & mask {
            return;
        }
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + u32::from(ws);
        self.lru_gen_count_refaulted(lv, t, lru_tier_from_refs_v6_1(refs), 1);
        if fixed {
            self.count_workingset_activate(pfn, file);
        } else {
            self.count_workingset_refault(pfn, file);
        }
        if self.lru_gen_in_fault || refs == 1 << LRU_REFS_WIDTH {
            self.mem[pfn as usize].flags |= pg::WORKINGSET;
            self.count_workingset_restore(pfn, file);
        }
    }

    /// get_tier_idx (v6.1): the highest tier of `t` whose refault rate stays at or below
    /// its tier 0's, with the larger gain 1:2 (6.14 made it 2:3).
    pub(crate) fn get_tier_idx_v6_1(&self, lv: usize, t: usize) -> usize {
        let sp = self.read_ctrl_pos(lv, t, 0, 1);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            if !positive_ctrl_err(sp, self.read_ctrl_pos(lv, t, tier, 2)) {
                break;
            }
            tier += 1;
        }
        tier - 1
    }

    /// get_type_to_scan (v6.1): tier 0 of anon against tier 0 of file, weighted
    /// swappiness : 200 − swappiness, picks the type; the tiers of that type are then
    /// compared with tier 0 of the other type for the tier index. Returns (type, tier
    /// index). (6.14 compares the sums of all tiers and leaves the tier to get_tier_idx.)
    pub(crate) fn get_type_to_scan_v6_1(&self, lv: usize, swappiness: u64) -> (usize, usize) {
        let gain = [swappiness, MAX_SWAPPINESS - swappiness];
        let sp = self.read_ctrl_pos(lv, LRU_GEN_ANON, 0, gain[LRU_GEN_ANON]);
        let pv = self.read_ctrl_pos(lv, LRU_GEN_FILE, 0, gain[LRU_GEN_FILE]);
        let t = usize::from(positive_ctrl_err(sp, pv));
        let sp = self.read_ctrl_pos(lv, 1 - t, 0, gain[1 - t]);
        let mut tier = 1;
        while tier < MAX_NR_TIERS {
            if !positive_ctrl_err(sp, self.read_ctrl_pos(lv, t, tier, gain[t])) {
                break;
            }
            tier += 1;
        }
        (t, tier - 1)
    }

    /// isolate_folios (v6.1): the obvious choice first — file without swappiness, anon
    /// while its oldest generation is older than file's, file at swappiness 1, anon at
    /// 200 — else the PID controller's; the other type if the first yields nothing.
    /// scan_folios looks at up to MAX_LRU_BATCH folios. Returns (scanned, type).
    pub(crate) fn isolate_folios_v6_1(
        &mut self,
        lv: usize,
        sc: &mut ScanControl,
        swappiness: u64,
        list: &mut Vec<Pfn>,
    ) -> (u64, usize) {
        let min_seq = self.lruvecs[lv].lrugen.min_seq;
        let mut tier = None;
        let mut t = if swappiness == 0 {
            LRU_GEN_FILE
        } else if min_seq[LRU_GEN_ANON] < min_seq[LRU_GEN_FILE] {
            LRU_GEN_ANON
        } else if swappiness == 1 {
            LRU_GEN_FILE
        } else if swappiness >= MAX_SWAPPINESS {
            LRU_GEN_ANON
        } else {
            let (t, idx) = self.get_type_to_scan_v6_1(lv, swappiness);
            tier = Some(idx);
            t
        };
        for _ in usize::from(swappiness == 0)..=LRU_GEN_FILE {
            let idx = match tier.take() {
                Some(idx) => idx,
                None => self.get_tier_idx_v6_1(lv, t),
            };
            let scanned = self.scan_folios(MAX_LRU_BATCH, lv, t, idx, sc, list);
            if scanned > 0 {
                return (scanned, t);
            }
            t = 1 - t;
        }
        (0, t)
    }

    /// try_to_inc_min_seq (v6.1): advance each evictable type's min_seq over its empty
    /// generations (up to max_seq − MIN_NR_GENS); with swapping, anon's may not pass
    /// file's and file's may not pass anon's new one (it moves only when anon catches
    /// up), so anon min_seq ≤ file min_seq always. (6.14 lets them move independently.)
    // min_seq and the lists are indexed by type together.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn try_to_inc_min_seq_v6_1(&mut self, lv: usize, swappiness: u64) -> bool {
        let can_swap = swappiness != 0;
        let g = &self.lruvecs[lv].lrugen;
        let old = g.min_seq;
        let mut min_seq = g.min_seq;
        for t in usize::from(!can_swap)..=LRU_GEN_FILE {
            while min_seq[t] + MIN_NR_GENS <= g.max_seq
                && g.folios[lru_gen_from_seq(min_seq[t])][t].len == 0
            {
                min_seq[t] += 1;
            }
        }
        if can_swap {
            min_seq[LRU_GEN_ANON] = min_seq[LRU_GEN_ANON].min(min_seq[LRU_GEN_FILE]);
            min_seq[LRU_GEN_FILE] = min_seq[LRU_GEN_ANON].max(old[LRU_GEN_FILE]);
        }
        let mut success = false;
        for t in usize::from(!can_swap)..=LRU_GEN_FILE {
            if min_seq[t] == old[t] {
                continue;
            }
            self.reset_ctrl_pos(lv, t);
            self.lruvecs[lv].lrugen.min_seq[t] = min_seq[t];
            success = true;
        }
        success
    }

    /// folio_check_references under MGLRU (v6.1): the classic look-twice rules.
    pub(crate) fn lru_gen_check_references_v6_1(
        &mut self,
        pfn: Pfn,
        target: crate::mm::memcontrol::MemcgId,
    ) -> PageReferences {
        self.folio_check_references_classic(pfn, target)
    }
}

/// MGLRU reclaim as 6.1 drove it (rule `mglru-memcg-lru` off): no memcg LRU. Global and
/// memcg reclaim alike walk the memcgs in mem_cgroup_iter order (the classic
/// shrink_node_memcgs, which calls lru_gen_shrink_lruvec for each), with 6.1's fairness
/// safeguards; kswapd ages every memcg in lru_gen_age_node before each pass, unless the
/// previous pass found enough cold folios (sc->memcgs_need_aging).
impl Sim {
    /// Whether MGLRU reclaim runs as in 6.1 (no memcg LRU).
    #[inline]
    pub(crate) fn mglru_reclaim_v6_1(&self) -> bool {
        !self.features.mglru_memcg_lru
    }

    /// fatal_signal_pending(current): the reclaiming task was killed.
    fn fatal_signal_pending(&self) -> bool {
        self.cur
            .task
            .is_some_and(|t| self.tasks[t].fatal_signal_pending())
    }

    /// should_run_aging (v6.1): (aging is due, folios to scan: the evictable size shifted
    /// right by the priority). Due when only MIN_NR_GENS generations are left, or with
    /// exactly MIN_NR_GENS + 1 when the youngest holds more than 1/MIN_NR_GENS of the
    /// folios or the oldest less than 1/(MIN_NR_GENS + 2).
    fn should_run_aging_v6_1(&self, lv: usize, sc: &ScanControl, swappiness: u64) -> (bool, u64) {
        let g = &self.lruvecs[lv].lrugen;
        let max_seq = g.max_seq;
        let (mut total, mut young, mut old) = (0u64, 0u64, 0u64);
        for t in usize::from(swappiness == 0)..=LRU_GEN_FILE {
            for seq in g.min_seq[t]..=max_seq {
                let size = g.nr_pages[lru_gen_from_seq(seq)][t].max(0) as u64;
                total += size;
                if seq == max_seq {
                    young += size;
                } else if seq + MIN_NR_GENS == max_seq {
                    old += size;
                }
            }
        }
        let nr_to_scan = total >> sc.priority;
        let min_seq = g.min_seq[usize::from(swappiness == 0)];
        let due = if min_seq + MIN_NR_GENS > max_seq {
            true
        } else if min_seq + MIN_NR_GENS < max_seq {
            false
        } else {
            young * MIN_NR_GENS > total || old * (MIN_NR_GENS + 2) < total
        };
        (due, nr_to_scan)
    }

    /// get_nr_to_scan (v6.1): folios to scan in this lruvec, 0 to stop. Protected memcgs
    /// are skipped; when aging is due, kswapd leaves it to lru_gen_age_node, a direct
    /// reclaimer ages (except at DEF_PRIORITY), and eviction goes on only while more than
    /// MIN_NR_GENS generations were there.
    fn get_nr_to_scan_v6_1(
        &mut self,
        lv: usize,
        sc: &ScanControl,
        swappiness: u64,
        need_aging: &mut bool,
    ) -> u64 {
        let memcg = (lv / self.nodes.len()) as MemcgId;
        if self.mem_cgroup_below_min(sc.target_memcg, memcg)
            || (self.mem_cgroup_below_low(sc.target_memcg, memcg) && !sc.memcg_low_reclaim)
        {
            return 0;
        }
        let (max_seq, min_seq) = {
            let g = &self.lruvecs[lv].lrugen;
            (g.max_seq, g.min_seq[usize::from(swappiness == 0)])
        };
        let (due, nr_to_scan) = self.should_run_aging_v6_1(lv, sc, swappiness);
        *need_aging = due;
        if !due {
            return nr_to_scan;
        }
        if sc.priority != DEF_PRIORITY {
            // Leave the aging to lru_gen_age_node.
            if sc.is_kswapd {
                return 0;
            }
            if self.try_to_inc_max_seq(lv, max_seq, swappiness, false) {
                return nr_to_scan;
            }
        }
        if min_seq + MIN_NR_GENS <= max_seq {
            nr_to_scan
        } else {
            0
        }
    }

    /// should_abort_scan (v6.1), after each eviction batch. A direct reclaimer stops once
    /// it aged this memcg twice, once it swapped after meeting its target, or when it was
    /// killed; kswapd goes on until it reclaimed nr_to_reclaim in this pass. Then, at
    /// priority DEF_PRIORITY - 2 or below, global reclaim stops when the node is above its
    /// low (direct) or high (kswapd) watermark, and counts MIN_LRU_BATCH more reclaimed.
    fn should_abort_scan_v6_1(
        &mut self,
        lv: usize,
        seq: u64,
        sc: &mut ScanControl,
        need_swapping: bool,
    ) -> bool {
        let node = lv % self.nodes.len();
        if !sc.is_kswapd {
            if self.lruvecs[lv].lrugen.max_seq - seq > 1 {
                return true;
            }
            if sc.nr_reclaimed >= sc.nr_to_reclaim && need_swapping {
                return true;
            }
            if self.fatal_signal_pending() {
                sc.nr_reclaimed += MIN_LRU_BATCH;
                return true;
            }
            if sc.cgroup_reclaim() {
                return false;
            }
        } else if sc.nr_reclaimed - sc.last_reclaimed < sc.nr_to_reclaim {
            return false;
        }
        if sc.priority > DEF_PRIORITY - 2 {
            return false;
        }
        let w = &self.nodes[node].watermark;
        let wmark = if sc.is_kswapd { w.high } else { w.low };
        if wmark > self.node_free_pages(node) {
            return false;
        }
        sc.nr_reclaimed += MIN_LRU_BATCH;
        true
    }

    /// lru_gen_shrink_lruvec (v6.1): evict from one memcg's lruvec on the node until its
    /// scan target is met or should_abort_scan says stop; kswapd notes whether the
    /// memcgs need aging before its next pass.
    pub(crate) fn lru_gen_shrink_lruvec_v6_1(
        &mut self,
        node: usize,
        memcg: MemcgId,
        sc: &mut ScanControl,
    ) {
        let prev = self.enter(KFunc::TryToShrinkLruvec);
        let lv = self.lruvec_idx(memcg, node);
        self.lru_add_drain();
        // set_mm_walk: kswapd has its node's walk; a direct reclaimer none.
        self.lru_gen_walk_active = sc.is_kswapd;
        self.init_tlb_ubc();
        let max_seq = self.lruvecs[lv].lrugen.max_seq;
        let reclaimed = sc.nr_reclaimed;
        let (mut need_aging, mut need_swapping) = (false, false);
        let mut scanned = 0u64;
        let stopped = loop {
            let swappiness = if sc.may_swap {
                self.lru_gen_swappiness_if_swap_left(memcg, sc)
            } else if !sc.cgroup_reclaim() && self.lru_gen_swappiness_if_swap_left(memcg, sc) > 0 {
                1
            } else {
                0
            };
            let nr_to_scan = self.get_nr_to_scan_v6_1(lv, sc, swappiness, &mut need_aging);
            if nr_to_scan == 0 {
                break true;
            }
            // 6.1's scan_folios takes up to MAX_LRU_BATCH per call.
            let (delta, t) = self.evict_folios(MAX_LRU_BATCH, lv, sc, swappiness);
            // evict_folios sets need_swapping only after reclaiming an isolated batch
            // of anon folios.
            need_swapping |= t == Some(LRU_GEN_ANON);
            if delta == 0 {
                break true;
            }
            scanned += delta;
            if scanned >= nr_to_scan || self.should_abort_scan_v6_1(lv, max_seq, sc, need_swapping)
            {
                break false;
            }
        };
        if !stopped && sc.is_kswapd && sc.nr_reclaimed - reclaimed >= MIN_LRU_BATCH && !need_aging {
            // See lru_gen_age_node_v6_1.
            self.reclaim[node].kswapd_memcgs_need_aging = false;
        }
        self.lru_gen_walk_active = false;
        self.leave(prev);
    }

    /// lru_gen_age_node (v6.1), kswapd before each balance_pgdat pass: skip the aging
    /// once the previous pass reclaimed enough from a memcg that did not need it (the
    /// first pass of balance_pgdat skips it too), else age every memcg that needs it;
    /// with min_ttl set, OOM-kill when every memcg's oldest generation is younger.
    pub(crate) fn lru_gen_age_node_v6_1(&mut self, node: usize, sc: &mut ScanControl) {
        let prev = self.enter(KFunc::LruGenAgeNode);
        sc.last_reclaimed = sc.nr_reclaimed;
        if !self.reclaim[node].kswapd_memcgs_need_aging {
            self.reclaim[node].kswapd_memcgs_need_aging = true;
            self.leave(prev);
            return;
        }
        let min_ttl_ps = self.mglru.min_ttl_ms.saturating_mul(1_000_000_000);
        self.lru_gen_walk_active = true;
        if self.nr_memcgs() > 1 {
            self.mem_cgroup_calculate_protection(ROOT_MEM_CGROUP);
        }
        let mut success = false;
        for memcg in self.memcg_subtree(ROOT_MEM_CGROUP) {
            success |= self.age_lruvec_v6_1(node, memcg, sc, min_ttl_ps);
        }
        self.lru_gen_walk_active = false;
        if !success && min_ttl_ps != 0 {
            self.out_of_memory();
        }
        self.leave(prev);
    }

    /// age_lruvec (v6.1): age one memcg's lruvec if should_run_aging says so; false when
    /// it is below memory.min or, with min_ttl, its oldest generation is younger than
    /// min_ttl (or it is too small to help).
    fn age_lruvec_v6_1(
        &mut self,
        node: usize,
        memcg: MemcgId,
        sc: &ScanControl,
        min_ttl_ps: u64,
    ) -> bool {
        let lv = self.lruvec_idx(memcg, node);
        let swappiness = self.lru_gen_swappiness_if_swap_left(memcg, sc);
        if self.mem_cgroup_below_min(ROOT_MEM_CGROUP, memcg) {
            return false;
        }
        let (due, nr_to_scan) = self.should_run_aging_v6_1(lv, sc, swappiness);
        let g = &self.lruvecs[lv].lrugen;
        let max_seq = g.max_seq;
        if min_ttl_ps != 0 {
            let birth = g.timestamps[lru_gen_from_seq(g.min_seq[LRU_GEN_FILE])];
            if birth.saturating_add(min_ttl_ps) > self.now() {
                return false;
            }
            if nr_to_scan == 0 && sc.priority != DEF_PRIORITY {
                return false;
            }
        }
        if due {
            self.try_to_inc_max_seq(lv, max_seq, swappiness, false);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_count_workingset_as_the_first_access_beyond_referenced() {
        assert_eq!(folio_lru_refs_v6_1(0), 0);
        assert_eq!(folio_lru_refs_v6_1(pg::REFERENCED), 0);
        assert_eq!(folio_lru_refs_v6_1(pg::REFERENCED | pg::WORKINGSET), 1);
        let three = 3 << pg::LRU_REFS_SHIFT;
        assert_eq!(folio_lru_refs_v6_1(pg::WORKINGSET | three), 4);
        // order_base_2(refs + 1): 0, 1, 2, 2, 3.
        let tiers: Vec<usize> = (0..=4).map(lru_tier_from_refs_v6_1).collect();
        assert_eq!(tiers, vec![0, 1, 2, 2, 3]);
    }
}
