//! Reverse mapping (mm/rmap.c) and the batched TLB flush of seed 002.
//!
//! rmap walk: an anonymous page's `mapping` names its anon_vma (ANON_MAPPING | the id of
//! the mm that created it; a forked family's members are linked into their ancestors'
//! anon_vmas, see `mm::fork`) and its `index` is the virtual page (fork keeps addresses);
//! a file page is found
//! through its inode's i_mmap list of (mm, VMA) pairs, at `vma.start + (index − pgoff)`.
//!
//! - page_referenced: test-and-clear the young bit of every PTE mapping the page (x86 does
//!   not flush for that), counting mappings that were young and OR-ing their vm_flags
//!   (VM_SEQ_READ mappings do not count). A file page whose lock cannot be taken counts as
//!   referenced (v4.2). Limit reclaim (a target memcg below the root) skips the mappings
//!   of mms outside the target's subtree (invalid_folio_referenced_vma's mm_match_cgroup);
//!   from v6.3 (`vma-has-recency`) it skips MADV_SEQUENTIAL and MADV_RANDOM mappings too.
//! - try_to_unmap_one: a young PTE fails the unmap (the page was used: SWAP_FAIL); a
//!   VM_LOCKED mapping fails; otherwise the PTE is cleared and flushed — or, with
//!   `batch-tlb-flush` and TTU_BATCH_FLUSH, cleared without a flush when another CPU may
//!   cache it: a clean PTE only records the mm's cpumask in the task's tlbflush_unmap_batch
//!   (set_tlb_ubc_flush_pending), a dirty PTE is still flushed at once (a stale writable
//!   entry could write silently during IO). The dirty bit moves to the page; an anonymous
//!   PTE becomes a swap entry.
//! - try_to_unmap_flush (v4.3, the seed): if the batch is pending, the local CPU flushes its
//!   whole TLB if it is in the mask, and every other CPU in the mask gets one IPI for a full
//!   flush, waited for; each counts nr_tlb_remote_flush_received.

use crate::arch::tlb::FlushKind;
use crate::machine::profile::KFunc;
use crate::mm::memory::pte;
use crate::mm::page::{pg, Pfn};
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// VM_READ.
pub const VM_READ: u64 = 0x1;
/// VM_WRITE.
pub const VM_WRITE: u64 = 0x2;
/// VM_EXEC.
pub const VM_EXEC: u64 = 0x4;
/// VM_SHARED.
pub const VM_SHARED: u64 = 0x8;
/// VM_LOCKED.
pub const VM_LOCKED: u64 = 0x2000;
/// VM_SEQ_READ (MADV_SEQUENTIAL).
pub const VM_SEQ_READ: u64 = 0x8000;
/// VM_RAND_READ (MADV_RANDOM).
pub const VM_RAND_READ: u64 = 0x10000;

/// `page.mapping` bit marking an anonymous page (PAGE_MAPPING_ANON); the rest is the mm id.
pub const ANON_MAPPING: u32 = 0x8000_0000;

/// What folio_referenced_one found in one PTE.
enum PteRef {
    /// Not mapping the page, not young, or a reference that does not count.
    Old,
    /// Young (now cleared), counted, through a VMA with these flags.
    Young(u64),
    /// Mapped by a VM_LOCKED VMA: the walk stops.
    Locked,
}

/// Result of try_to_unmap (SWAP_SUCCESS / SWAP_AGAIN / SWAP_FAIL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtuResult {
    /// Every mapping removed.
    Success,
    /// Try again later.
    Again,
    /// Cannot unmap (referenced, locked).
    Fail,
}

/// struct tlbflush_unmap_batch (per task).
#[derive(Clone, Debug, Default)]
pub struct TlbflushUnmapBatch {
    /// CPUs that may cache a translation of an unmapped page.
    pub cpumask: crate::machine::Cpumask,
    /// True if any bit in cpumask is set.
    pub flush_required: bool,
    /// A dirty PTE's flush was deferred (`tlb-defer-writable`): the batch must be flushed
    /// before the page is written out (try_to_unmap_flush_dirty).
    pub writable: bool,
}

impl Sim {
    /// The (mm, vpn, VMA flags) triples that may map `pfn` (the rmap walk's targets), in
    /// the simulation's scratch buffer: give it back with `rmap_done` (a walk nested in
    /// this one, from a step run while waiting for IPIs, gets a buffer of its own). The
    /// flags are those of the VMA the walk found for a file page (the one `find_vma`
    /// returns for the address, VMAs do not overlap), valid until the engine runs another
    /// step; `None` for an anonymous page (its VMA is looked up by address).
    pub(crate) fn rmap_targets(&mut self, pfn: Pfn) -> Vec<(u32, u64, Option<u64>)> {
        let mut out = std::mem::take(&mut self.rmap_scratch);
        out.clear();
        let page = &self.mem[pfn as usize];
        if page.mapping & ANON_MAPPING != 0 {
            // The anon_vma's members (`mm::fork`): its creator alone unless it forked.
            let (av, index) = (page.mapping & !ANON_MAPPING, page.index);
            out.extend(self.anon_vma_members(av).map(|m| (m, index, None)));
            return out;
        }
        if page.mapping == crate::mm::page::NO_MAPPING {
            // No owner (a swap-in nobody has mapped yet, a truncated page — truncation
            // unmaps a page before deleting it): nothing maps it.
            return out;
        }
        let Some(inode) = self
            .inodes
            .get(page.mapping as usize)
            .and_then(|i| i.as_ref())
        else {
            return out;
        };
        // The i_mmap entries carry the VMAs' geometry and flags (equal to the VMAs').
        for v in &inode.i_mmap {
            if let Some(addr) = v.addr_of(page.index) {
                out.push((v.mm, addr >> crate::mm::page::PAGE_SHIFT, Some(v.flags)));
            }
        }
        out
    }

    /// Give the buffer of `rmap_targets` back for the next walk.
    pub(crate) fn rmap_done(&mut self, targets: Vec<(u32, u64, Option<u64>)>) {
        self.rmap_scratch = targets;
    }

    /// page_add_file_rmap: one more PTE maps a page-cache page (nr_mapped on the first).
    pub fn page_add_file_rmap(&mut self, pfn: Pfn) {
        self.charge_atomic();
        let p = &mut self.mem[pfn as usize];
        p.mapcount += 1;
        if p.mapcount == 0 {
            self.vmstat.inc(VmItem::NrMapped);
            self.mod_memcg_page_stat(pfn, VmItem::NrMapped, 1);
        }
    }

    /// page_remove_rmap: one PTE less (nr_mapped / nr_anon_pages on the last).
    pub fn page_remove_rmap(&mut self, pfn: Pfn) {
        self.charge_atomic();
        let p = &mut self.mem[pfn as usize];
        p.mapcount -= 1;
        if p.mapcount == -1 {
            let mlocked = p.test(pg::MLOCKED);
            if p.mapping & ANON_MAPPING != 0 {
                self.vmstat.dec(VmItem::NrAnonPages);
            } else {
                self.vmstat.dec(VmItem::NrMapped);
                self.mod_memcg_page_stat(pfn, VmItem::NrMapped, -1);
            }
            if mlocked && !self.features.mlock_count {
                // Before v5.18: the last unmap of a page still mlocked clears it.
                self.clear_page_mlock(pfn);
            }
        }
    }

    /// vma_has_recency (v6.3): references through this mapping count. Before v6.3
    /// (`vma-has-recency` off) only MADV_SEQUENTIAL took them away (the `VM_SEQ_READ`
    /// tests of page_referenced_one and zap_pte_range).
    #[inline]
    pub fn vma_has_recency(&self, vm_flags: u64) -> bool {
        if self.features.vma_has_recency {
            vm_flags & (VM_SEQ_READ | VM_RAND_READ) == 0
        } else {
            vm_flags & VM_SEQ_READ == 0
        }
    }

    /// page_referenced (folio_referenced): (mappings with a young PTE, OR of their
    /// vm_flags), clearing the young bits. `target` is the reclaim's target memcg (the root
    /// for global reclaim): a limit reclaim skips mappings of mms outside its subtree
    /// (mm_match_cgroup), and from v6.3 every reclaim skips mappings without recency
    /// (invalid_folio_referenced_vma). A large folio (`mm::folio`) counts each mapping
    /// once however many of its PTEs were young (folio_referenced_one's `referenced`).
    pub fn page_referenced(
        &mut self,
        pfn: Pfn,
        target: crate::mm::memcontrol::MemcgId,
    ) -> (u32, u64) {
        if !self.folio_mapped(pfn) {
            return (0, 0);
        }
        let prev = self.enter(KFunc::PageReferenced);
        let file = self.mem[pfn as usize].mapping & ANON_MAPPING == 0;
        let mut we_locked = false;
        if file && !self.PageLocked(pfn) {
            if !self.trylock_page(pfn) {
                self.leave(prev);
                return (1, 0);
            }
            we_locked = true;
        }
        let r = if self.mem[pfn as usize].flags & pg::HEAD != 0 {
            self.folio_referenced_large(pfn, target)
        } else {
            let mut referenced = 0;
            let mut vm_flags = 0;
            let targets = self.rmap_targets(pfn);
            // No engine step runs within this walk: the targets' VMA flags stay valid.
            for &(mm, vpn, vma_flags) in &targets {
                self.charge(self.costs.spin_lock_ps); // the rmap lock
                match self.referenced_pte(pfn, mm, vpn, vma_flags, target) {
                    PteRef::Locked => {
                        vm_flags |= VM_LOCKED;
                        break;
                    }
                    PteRef::Young(flags) => {
                        referenced += 1;
                        vm_flags |= flags;
                    }
                    PteRef::Old => {}
                }
            }
            self.rmap_done(targets);
            (referenced, vm_flags)
        };
        if we_locked {
            self.unlock_page(pfn);
        }
        self.leave(prev);
        r
    }

    /// folio_referenced's walk of a large page-cache folio: each VMA of the file's i_mmap
    /// that maps some of its pages has those PTEs' young bits tested and cleared, and
    /// counts once if any was young. Large folios are never mapped by a VM_LOCKED VMA
    /// (a fault or mlock there splits them).
    #[cold]
    fn folio_referenced_large(
        &mut self,
        head: Pfn,
        target: crate::mm::memcontrol::MemcgId,
    ) -> (u32, u64) {
        let ino = self.mem[head as usize].mapping;
        let frames = self.folio_frames(head);
        let (mut referenced, mut vm_flags) = (0, 0);
        let nr_vmas = self
            .inodes
            .get(ino as usize)
            .and_then(|i| i.as_ref())
            .map_or(0, |i| i.i_mmap.len());
        for j in 0..nr_vmas {
            let v = self.inode(ino).i_mmap[j];
            let mut young = None;
            let mut locked = false;
            for &f in &frames {
                let Some(addr) = v.addr_of(self.mem[f as usize].index) else {
                    continue;
                };
                if young.is_none() && !locked {
                    self.charge(self.costs.spin_lock_ps); // the rmap lock, once a VMA
                }
                let vpn = addr >> crate::mm::page::PAGE_SHIFT;
                match self.referenced_pte(f, v.mm, vpn, Some(v.flags), target) {
                    PteRef::Young(flags) => young = Some(flags),
                    PteRef::Locked => locked = true,
                    PteRef::Old => {}
                }
            }
            debug_assert!(!locked, "large folio {head} mapped by a VM_LOCKED VMA");
            if let Some(flags) = young {
                referenced += 1;
                vm_flags |= flags;
            }
        }
        self.give_pfn_buf(frames);
        (referenced, vm_flags)
    }

    /// folio_referenced_one for the PTE at `vpn` of `mm` that may map `pfn`: clear its
    /// young bit and say whether the reference counts (and with which vm_flags).
    #[inline]
    fn referenced_pte(
        &mut self,
        pfn: Pfn,
        mm: u32,
        vpn: u64,
        vma_flags: Option<u64>,
        target: crate::mm::memcontrol::MemcgId,
    ) -> PteRef {
        let Some(m) = self.mms[mm as usize].as_ref() else {
            self.charge(self.costs.tlb_walk_ps);
            return PteRef::Old;
        };
        let mm_memcg = m.memcg;
        let Some(flags) = vma_flags.or_else(|| {
            m.find_vma(vpn << crate::mm::page::PAGE_SHIFT)
                .map(|v| v.flags)
        }) else {
            self.charge(self.costs.tlb_walk_ps);
            return PteRef::Old;
        };
        // invalid_folio_referenced_vma: the VMA is skipped before its PTEs are walked.
        if (self.features.vma_has_recency && flags & (VM_SEQ_READ | VM_RAND_READ) != 0)
            || (target != crate::mm::memcontrol::ROOT_MEM_CGROUP
                && !self.mem_cgroup_is_descendant(mm_memcg, target))
        {
            return PteRef::Old;
        }
        self.charge(self.costs.tlb_walk_ps); // page_vma_mapped_walk
        let Some(m) = self.mms[mm as usize].as_mut() else {
            return PteRef::Old;
        };
        let Some(p) = m.pgtable.get_mut(vpn) else {
            return PteRef::Old;
        };
        if *p & pte::PRESENT == 0 || pte::pfn(*p) != pfn {
            return PteRef::Old;
        }
        if flags & VM_LOCKED != 0 {
            // A page of a VM_LOCKED VMA that is not (or no longer) mlocked: the walk
            // stops without counting a reference. From v5.18 (`mlock-count`) it
            // restores the missed mlock here (mlock_vma_folio); before, try_to_unmap
            // does.
            if self.features.mlock_count {
                self.mlock_vma_page(pfn);
            }
            return PteRef::Locked;
        }
        if *p & pte::YOUNG == 0 {
            return PteRef::Old;
        }
        *p &= !pte::YOUNG; // ptep_clear_young_notify: no TLB flush on x86
        self.charge_atomic();
        // MGLRU: a young PTE counts, and its neighbours are looked at — of a
        // mapping with recency in 6.1 (mappings without are skipped from v6.3).
        if self.lru_gen_enabled()
            && (self.features.vma_has_recency || flags & (VM_SEQ_READ | VM_RAND_READ) == 0)
        {
            self.lru_gen_look_around(pfn, mm, vpn, flags);
            PteRef::Young(flags)
        } else if flags & VM_SEQ_READ == 0 {
            // "Don't treat a reference through a sequentially read mapping as
            // such" (before v6.3; 6.1's MGLRU counts an MADV_RANDOM one here).
            PteRef::Young(flags)
        } else {
            PteRef::Old
        }
    }

    /// try_to_unmap: remove every PTE mapping the page (`batch` = TTU_BATCH_FLUSH).
    pub fn try_to_unmap(&mut self, pfn: Pfn, batch: bool) -> TtuResult {
        if self.mem[pfn as usize].flags & pg::HEAD != 0 {
            return self.try_to_unmap_large(pfn, batch);
        }
        self.try_to_unmap_page(pfn, batch)
    }

    /// try_to_unmap of one page: every PTE mapping it, through its rmap targets.
    fn try_to_unmap_page(&mut self, pfn: Pfn, batch: bool) -> TtuResult {
        let prev = self.enter(KFunc::TryToUnmapOne);
        let mut ret = TtuResult::Success;
        let targets = self.rmap_targets(pfn);
        for (i, &(mm, vpn, vma_flags)) in targets.iter().enumerate() {
            // Unmapping one target may wait for IPIs while other CPUs run (and change
            // VMAs): the walk's flags hold for the first target only.
            let flags = if i == 0 { vma_flags } else { None };
            ret = self.try_to_unmap_one(pfn, mm, vpn, flags, batch);
            if ret != TtuResult::Success || !self.mem[pfn as usize].mapped() {
                break;
            }
        }
        self.rmap_done(targets);
        if ret == TtuResult::Success && self.mem[pfn as usize].mapped() {
            ret = TtuResult::Again;
        }
        self.leave(prev);
        ret
    }

    /// try_to_unmap of a large page-cache folio: every PTE of each of its pages, page by
    /// page. An unmap may wait for IPIs while other CPUs run, and one of them may split
    /// the folio: the walk then goes on with the pages still in it.
    #[cold]
    fn try_to_unmap_large(&mut self, head: Pfn, batch: bool) -> TtuResult {
        let frames = self.folio_frames(head);
        let mut ret = TtuResult::Success;
        for &f in &frames {
            if self.folio_head(f) != head {
                continue; // split off meanwhile
            }
            if self.mem[f as usize].mapped() {
                ret = self.try_to_unmap_page(f, batch);
                if ret != TtuResult::Success {
                    break;
                }
            }
        }
        self.give_pfn_buf(frames);
        if ret == TtuResult::Success && self.folio_mapped(head) {
            ret = TtuResult::Again;
        }
        ret
    }

    /// folio_mkclean of the folio headed by `head`: every page's shared mappings (a large
    /// folio written through a mapping, 6.18's `map-entire-folio`, has PTEs on any of its
    /// pages). Returns whether a PTE was dirty.
    pub fn folio_mkclean(&mut self, head: Pfn) -> bool {
        if self.mem[head as usize].flags & pg::HEAD == 0 {
            return self.page_mkclean(head);
        }
        let frames = self.folio_frames(head);
        let mut dirty = false;
        for &f in &frames {
            dirty |= self.page_mkclean(f);
        }
        self.give_pfn_buf(frames);
        dirty
    }

    /// folio_mkclean (page_mkclean_one over the rmap walk, shared mappings only): before a
    /// page-cache page is written back (clear_page_dirty_for_io), every shared mapping's
    /// PTE of it is made clean and read-only and flushed from the TLBs, so that the next
    /// write through the mapping faults (page_mkwrite) and dirties the page again, under
    /// balance_dirty_pages. Returns whether a PTE was dirty (its write is in the page).
    pub fn page_mkclean(&mut self, pfn: Pfn) -> bool {
        if !self.mem[pfn as usize].mapped() || self.mem[pfn as usize].mapping & ANON_MAPPING != 0 {
            return false;
        }
        let prev = self.enter(KFunc::PageMkclean);
        let targets = self.rmap_targets(pfn);
        let mut dirty = false;
        for (i, &(mm, vpn, vma_flags)) in targets.iter().enumerate() {
            // A flush may wait for IPIs while other CPUs run (and change VMAs): the walk's
            // flags hold for the first target only.
            let Some(m) = self.mms.get(mm as usize).and_then(|m| m.as_ref()) else {
                continue;
            };
            let flags = match (i, vma_flags) {
                (0, Some(f)) => Some(f),
                _ => m
                    .find_vma(vpn << crate::mm::page::PAGE_SHIFT)
                    .map(|v| v.flags),
            };
            if flags.is_none_or(|f| f & VM_SHARED == 0) {
                continue;
            }
            let p = m.pgtable.get(vpn);
            if p & pte::PRESENT == 0 || pte::pfn(p) != pfn || p & (pte::WRITE | pte::DIRTY) == 0 {
                continue;
            }
            self.charge(self.costs.spin_lock_ps + self.costs.tlb_walk_ps);
            if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
                *pp &= !(pte::WRITE | pte::DIRTY);
            }
            dirty |= p & pte::DIRTY != 0;
            self.flush_tlb_page(mm, vpn);
        }
        self.rmap_done(targets);
        self.leave(prev);
        dirty
    }

    /// should_defer_flush: batching was asked for and another CPU may cache the mm.
    fn should_defer_flush(&self, mm: u32, batch: bool) -> bool {
        if !batch || !self.features.batch_tlb_flush {
            return false;
        }
        self.mm(mm).cpumask().any_but(self.cur.cpu)
    }

    /// set_tlb_ubc_flush_pending: remember the mm's CPUs in the running task's batch
    /// (arch_tlbbatch_add_mm: from v4.13, `tlb-gen`, the mm's tlb_gen advances), and
    /// whether a writable translation may be among them.
    fn set_tlb_ubc_flush_pending(&mut self, mm: u32, writable: bool) {
        let Some(t) = self.cur.task else { return };
        if self.features.tlb_gen {
            self.inc_mm_tlb_gen(mm);
        }
        if self.features.tlb_flush_batched {
            self.mm_mut(mm).tlb_flush_batched = true;
        }
        let mask = self.mms[mm as usize].as_ref().expect("live mm").cpumask();
        let ubc = &mut self.tasks[t].tlb_ubc;
        ubc.cpumask.or(mask);
        ubc.flush_required = true;
        ubc.writable |= writable;
    }

    fn try_to_unmap_one(
        &mut self,
        pfn: Pfn,
        mm: u32,
        vpn: u64,
        vma_flags: Option<u64>,
        batch: bool,
    ) -> TtuResult {
        let Some(m) = self.mms[mm as usize].as_ref() else {
            return TtuResult::Success;
        };
        let Some(flags) = vma_flags.or_else(|| {
            m.find_vma(vpn << crate::mm::page::PAGE_SHIFT)
                .map(|v| v.flags)
        }) else {
            return TtuResult::Success;
        };
        let p = m.pgtable.get(vpn);
        if p & pte::PRESENT == 0 || pte::pfn(p) != pfn {
            return TtuResult::Success;
        }
        self.charge(self.costs.spin_lock_ps + self.costs.tlb_walk_ps);
        if flags & VM_LOCKED != 0 {
            // Restore the mlock which got missed (mlock_vma_folio; SWAP_MLOCK before
            // v4.13): the caller keeps the page, which goes to the unevictable list.
            self.mlock_vma_page(pfn);
            return TtuResult::Fail;
        }
        if p & pte::YOUNG != 0 && !self.features.ttu_ignore_access {
            // ptep_clear_flush_young_notify: referenced since the last scan (until v5.11,
            // `ttu-ignore-access`).
            if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
                *pp &= !pte::YOUNG;
            }
            return TtuResult::Fail;
        }
        let dirty = p & pte::DIRTY != 0;
        let anon = self.mem[pfn as usize].mapping & ANON_MAPPING != 0;
        if anon && !self.mem[pfn as usize].test(pg::SWAPBACKED) {
            return self.try_to_unmap_lazyfree(pfn, mm, vpn, dirty, batch);
        }
        // Nuke the page table entry.
        let newpte = if anon {
            let off = self.mem[pfn as usize].private;
            self.swap_duplicate(off);
            self.mm_mut(mm).swapents += 1;
            self.mm_mut(mm).rss_anon -= 1;
            pte::mk_swap(off)
        } else {
            self.mm_mut(mm).rss_file -= 1;
            0
        };
        if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
            *pp = newpte;
        }
        if self.should_defer_flush(mm, batch) {
            if dirty && !self.features.tlb_defer_writable && !self.debug_defer_dirty_flush {
                // The seed's first commit: a potentially writable translation is flushed
                // at once, before any IO.
                self.flush_tlb_page(mm, vpn);
            } else {
                // From v4.3 (`tlb-defer-writable`) deferred too, the batch flushed before
                // the page is written out (try_to_unmap_flush_dirty). The debug switch
                // defers it without saying so: nothing flushes it before the IO.
                self.set_tlb_ubc_flush_pending(mm, dirty && !self.debug_defer_dirty_flush);
            }
        } else {
            self.flush_tlb_page(mm, vpn);
        }
        // Move the dirty bit to the physical page now the PTE is gone.
        if dirty {
            if anon {
                self.SetPageDirty(pfn);
            } else {
                self.folio_mark_dirty(pfn);
            }
        }
        self.page_remove_rmap(pfn);
        self.put_page(pfn);
        TtuResult::Success
    }

    /// try_to_unmap_one's MADV_FREE case: a lazyfree page not written since the advice (PTE
    /// and page clean) and held only by its mappings and the isolation is discarded — its
    /// PTE cleared, no swap entry, the next touch finds zeroes; one written again (the
    /// PTE's dirty bit moves to the page) stays mapped and becomes swap-backed again, and
    /// the unmap fails.
    fn try_to_unmap_lazyfree(
        &mut self,
        pfn: Pfn,
        mm: u32,
        vpn: u64,
        dirty: bool,
        batch: bool,
    ) -> TtuResult {
        if dirty {
            self.SetPageDirty(pfn);
        }
        let p = &self.mem[pfn as usize];
        let map_count = p.mapcount + 1;
        if p.refcount != 1 + map_count || self.PageDirty(pfn) {
            self.SetPageSwapBacked(pfn);
            return TtuResult::Fail;
        }
        if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
            *pp = 0;
        }
        self.mm_mut(mm).rss_anon -= 1;
        self.mm_mut(mm).anon_expected.remove(&vpn);
        if self.should_defer_flush(mm, batch) {
            self.set_tlb_ubc_flush_pending(mm, false);
        } else {
            self.flush_tlb_page(mm, vpn);
        }
        self.page_remove_rmap(pfn);
        self.put_page(pfn);
        TtuResult::Success
    }

    /// init_tlb_ubc: start a reclaim batch with no flush pending (the cpumask is not
    /// cleared, as in the kernel).
    pub fn init_tlb_ubc(&mut self) {
        if let Some(t) = self.cur.task {
            self.tasks[t].tlb_ubc.flush_required = false;
        }
    }

    /// try_to_unmap_flush: flush every TLB entry deferred by the running task's batch.
    pub fn try_to_unmap_flush(&mut self) {
        let Some(t) = self.cur.task else { return };
        if !self.tasks[t].tlb_ubc.flush_required {
            return;
        }
        let me = self.cur.cpu;
        let mask = self.tasks[t].tlb_ubc.cpumask;
        if self.features.tlb_gen {
            self.arch_tlbbatch_flush(&mask);
            let ubc = &mut self.tasks[t].tlb_ubc;
            ubc.cpumask.clear_all();
            ubc.flush_required = false;
            ubc.writable = false;
            return;
        }
        if mask.test(me) {
            // percpu_flush_tlb_batch_pages on this CPU: counted like a received flush.
            self.vmstat.inc(VmItem::NrTlbRemoteFlushReceived);
            self.cpus[me].tlb_shootdowns += 1;
            self.local_flush_tlb();
        }
        let others = mask.without(me);
        if !others.is_empty() {
            self.send_tlb_ipis(&others, FlushKind::All, true);
        }
        let ubc = &mut self.tasks[t].tlb_ubc;
        ubc.cpumask.clear_all();
        ubc.flush_required = false;
        ubc.writable = false;
    }

    /// try_to_unmap_flush_dirty: flush the batch if it may hold a writable translation
    /// (`tlb-defer-writable`, v4.3). In the seed's first commit dirty PTEs are flushed at
    /// once, so none is ever pending before IO and there is nothing to do. (The debug
    /// switch `debug_defer_dirty_flush` defers them without marking the batch writable,
    /// so this does not flush them: the unsafe variant the content oracle must catch.)
    pub fn try_to_unmap_flush_dirty(&mut self) {
        if self
            .cur
            .task
            .is_some_and(|t| self.tasks[t].tlb_ubc.writable)
        {
            self.try_to_unmap_flush();
        }
    }

    /// Whether a page is an anonymous page.
    pub fn page_anon(&self, pfn: Pfn) -> bool {
        self.mem[pfn as usize].mapping & ANON_MAPPING != 0
            && !self.mem[pfn as usize].test(pg::BUDDY)
    }
}
