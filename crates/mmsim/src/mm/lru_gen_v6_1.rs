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
//!   moves the folio to the tail of the next generation and counts workingset_activate;
//!   folio_inc_gen clears PG_referenced and PG_workingset; inc_min_seq protects nothing;
//!   isolate_folio clears PG_referenced (and refs and PG_workingset of an unreferenced
//!   folio).
//! - Workingset: the shadow keeps min_seq and refs − 1, with PG_workingset meaning refs > 0;
//!   a refault counts only while the evicted generation is still the oldest (min_seq), then
//!   in its tier and as workingset_activate; a refault in a fault, or of a folio with the
//!   most refs, gets PG_workingset (workingset_restore). Refs are not given back.
//!
//! Not modelled for 6.1: global reclaim walks the memcgs in mem_cgroup_iter order (6.3
//! brought the memcg LRU, which both eras use here); look_around's in-place promotion of a
//! batch of PAGEVEC_SIZE young neighbours (they are activated one by one).

use crate::mm::lru_gen::{folio_lru_gen, LRU_REFS_WIDTH};
use crate::mm::page::{pg, Pfn};
use crate::mm::vmscan::{PageReferences, ScanControl};
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

    /// lru_gen_look_around outside a walk (v6.1): an isolated young folio is marked
    /// PG_referenced, one in another generation than `new_gen` activated (folio_activate).
    pub(crate) fn look_around_update_v6_1(&mut self, pfn: Pfn, new_gen: usize) {
        match folio_lru_gen(self.mem[pfn as usize].flags) {
            None => self.mem[pfn as usize].flags |= pg::REFERENCED,
            Some(old) if old != new_gen => self.activate_page(pfn),
            Some(_) => {}
        }
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
            self.count_workingset_activate(pfn, t == LRU_GEN_FILE);
            return true;
        }
        self.sort_folio_writeback(lv, pfn, sc)
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

    /// lru_gen_refault (v6.1), after the refault is counted: only a folio evicted from the
    /// generation that is still the oldest counts in its tier and as workingset_activate;
    /// in a fault, or with the most refs, it gets PG_workingset (workingset_restore).
    pub(crate) fn lru_gen_refault_v6_1(&mut self, pfn: Pfn, lv: usize, token: u64, ws: bool) {
        let t = usize::from(!self.mem[pfn as usize].test(pg::SWAPBACKED));
        let file = t == LRU_GEN_FILE;
        let mask = (1u64 << (crate::mm::workingset::EVICTION_BITS - LRU_REFS_WIDTH)) - 1;
        if token >> LRU_REFS_WIDTH != self.lruvecs[lv].lrugen.min_seq[t] & mask {
            return;
        }
        let refs = (token & ((1 << LRU_REFS_WIDTH) - 1)) as u32 + u32::from(ws);
        self.lru_gen_count_refaulted(lv, t, lru_tier_from_refs_v6_1(refs));
        self.count_workingset_activate(pfn, file);
        if self.lru_gen_in_fault || refs == 1 << LRU_REFS_WIDTH {
            self.mem[pfn as usize].flags |= pg::WORKINGSET;
            self.count_workingset_restore(pfn, file);
        }
    }

    /// folio_check_references under MGLRU (v6.1): the classic look-twice rules.
    pub(crate) fn lru_gen_check_references_v6_1(&mut self, pfn: Pfn) -> PageReferences {
        self.folio_check_references_classic(pfn)
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
