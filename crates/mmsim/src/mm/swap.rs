//! LRU handling (mm/swap.c): per-CPU pagevecs, lru_cache_add, mark_page_accessed,
//! activate_page, and draining.
//!
//! The kernel batches LRU insertions and activations in per-CPU pagevecs of PAGEVEC_SIZE
//! pages (14 in v4.2; 15, then 31 in later eras: `pagevec_size`), each slot holding a page
//! reference, and moves a whole pagevec under one lru_lock acquisition. A page in a
//! pagevec is not yet on an LRU list (PG_lru clear).
//! v4.2 ordering: a full add pagevec is drained before the next page is added, so at most 14
//! pages per CPU are off-LRU; from v4.8 (`lru-add-flush-full`) it is drained as soon as the
//! page that fills it is added.
//!
//! mark_page_accessed (v4.2):
//! - inactive, unreferenced → referenced;
//! - inactive, referenced → active, unreferenced (via the activate pagevec if on the LRU;
//!   if still in this CPU's add pagevec, PG_active is set there instead, without pgactivate);
//!   file pages (from v5.9 every page) also advance the workingset clock (workingset_activation);
//! - active, unreferenced → referenced; active, referenced: nothing.
//!
//! init_page_accessed (seed 000): a non-atomic set of PG_referenced on a page that is not yet
//! visible — the first step of mark_page_accessed, without the atomic.

use crate::machine::profile::KFunc;
use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn};
use crate::sim::Sim;

/// PAGEVEC_SIZE in v4.2–v4.15: 14 pointers and two longs in two cache lines.
pub const PAGEVEC_SIZE: usize = 14;

/// The largest batch of any era: PAGEVEC_SIZE of v6.9+ (folio_batch).
pub const PAGEVEC_MAX: usize = 31;

/// PAGEVEC_SIZE of the era `features` model: 14 up to v4.15, 15 from v4.16 ("Get 7% more
/// pages in a pagevec": nr became a char; `pagevec-15`), 31 from v6.9 ("mm: increase
/// folio batch size"; `folio-batch-31`).
pub fn pagevec_size(features: &crate::sim::Features) -> usize {
    if features.folio_batch_31 {
        31
    } else if features.pagevec_15 {
        15
    } else {
        PAGEVEC_SIZE
    }
}

/// struct pagevec (folio_batch from v5.16): up to `cap` page references, the era's
/// PAGEVEC_SIZE.
#[derive(Clone, Copy, Debug)]
pub struct Pagevec {
    /// Number of pages.
    pub nr: u8,
    /// Capacity: the era's PAGEVEC_SIZE.
    pub cap: u8,
    /// The pages.
    pub pages: [Pfn; PAGEVEC_MAX],
}

impl Pagevec {
    /// An empty pagevec of `cap` pages (at most PAGEVEC_MAX).
    pub fn with_capacity(cap: usize) -> Pagevec {
        assert!((1..=PAGEVEC_MAX).contains(&cap), "pagevec of {cap} pages");
        Pagevec {
            nr: 0,
            cap: cap as u8,
            pages: [0; PAGEVEC_MAX],
        }
    }
    /// pagevec_add: append; returns the space left (0 = now full).
    pub fn add(&mut self, pfn: Pfn) -> usize {
        assert!(self.nr < self.cap, "pagevec overflow");
        self.pages[self.nr as usize] = pfn;
        self.nr += 1;
        (self.cap - self.nr) as usize
    }
    /// pagevec_space.
    pub fn space(&self) -> usize {
        (self.cap - self.nr) as usize
    }
    /// The pages held.
    pub fn as_slice(&self) -> &[Pfn] {
        &self.pages[..self.nr as usize]
    }
    /// Empty it.
    pub fn reinit(&mut self) {
        self.nr = 0;
    }
    /// True if `pfn` is in it.
    pub fn contains(&self, pfn: Pfn) -> bool {
        self.as_slice().contains(&pfn)
    }
}

/// The per-CPU pagevecs of mm/swap.c (cpu_fbatches from v6.0). No `Default`: each holds
/// the era's PAGEVEC_SIZE ([`CpuPagevecs::with_capacity`]), which an emptied one keeps.
#[derive(Clone, Copy, Debug)]
pub struct CpuPagevecs {
    /// lru_add_pvec.
    pub lru_add: Pagevec,
    /// activate_page_pvecs.
    pub activate: Pagevec,
    /// lru_rotate_pvecs (writeback end rotation to the inactive tail).
    pub rotate: Pagevec,
    /// lru_deactivate_file_pvecs (v2.6.39; pages invalidation could not drop).
    pub deactivate_file: Pagevec,
    /// lru_deactivate_pvecs (v5.4; MADV_COLD).
    pub deactivate: Pagevec,
    /// lru_lazyfree_pvecs (MADV_FREE).
    pub lazyfree: Pagevec,
}

impl CpuPagevecs {
    /// A CPU's empty pagevecs of `size` pages each.
    pub fn with_capacity(size: usize) -> CpuPagevecs {
        CpuPagevecs {
            lru_add: Pagevec::with_capacity(size),
            activate: Pagevec::with_capacity(size),
            rotate: Pagevec::with_capacity(size),
            deactivate_file: Pagevec::with_capacity(size),
            deactivate: Pagevec::with_capacity(size),
            lazyfree: Pagevec::with_capacity(size),
        }
    }

    /// Empty them all, keeping their size.
    pub fn reinit(&mut self) {
        self.lru_add.reinit();
        self.activate.reinit();
        self.rotate.reinit();
        self.deactivate_file.reinit();
        self.deactivate.reinit();
        self.lazyfree.reinit();
    }
}

fn p_active(s: &Sim, pfn: Pfn) -> bool {
    s.mem[pfn as usize].test(pg::ACTIVE)
}

/// Which move a pagevec drain performs (pagevec_lru_move_fn's callback).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LruMove {
    Add,
    Activate,
    RotateTail,
    DeactivateFile,
    Deactivate,
    Lazyfree,
}

impl Sim {
    /// The era's PAGEVEC_SIZE ([`pagevec_size`]).
    #[inline]
    pub fn pagevec_size(&self) -> usize {
        pagevec_size(&self.features)
    }

    /// page_lru: the list a page belongs on from its flags.
    pub fn page_lru(&self, pfn: Pfn) -> LruList {
        let p = &self.mem[pfn as usize];
        LruList::of(
            p.test(pg::ACTIVE),
            !p.test(pg::SWAPBACKED),
            p.test(pg::UNEVICTABLE),
        )
    }

    /// add_page_to_lru_list (lru_lock held): head insertion and the nr_* gauge.
    pub fn add_page_to_lru_list(&mut self, pfn: Pfn, lru: LruList) {
        if let Some(add) = self.ops.lru_add {
            if add(self, pfn, false) {
                return;
            }
        }
        let lv = self.page_lruvec_idx(pfn);
        self.charge(self.costs.list_op_ps);
        self.lruvecs[lv].lists[lru as usize].add_head(&mut self.mem, pfn);
        self.vmstat
            .add(lru.vmstat_item(), self.mem[pfn as usize].nr_pages() as i64);
    }

    /// add_page_to_lru_list_tail (lru_lock held).
    pub fn add_page_to_lru_list_tail(&mut self, pfn: Pfn, lru: LruList) {
        if let Some(add) = self.ops.lru_add {
            if add(self, pfn, true) {
                return;
            }
        }
        let lv = self.page_lruvec_idx(pfn);
        self.charge(self.costs.list_op_ps);
        self.lruvecs[lv].lists[lru as usize].add_tail(&mut self.mem, pfn);
        self.vmstat
            .add(lru.vmstat_item(), self.mem[pfn as usize].nr_pages() as i64);
    }

    /// del_page_from_lru_list (lru_lock held).
    pub fn del_page_from_lru_list(&mut self, pfn: Pfn, lru: LruList) {
        if let Some(del) = self.ops.lru_del {
            if del(self, pfn) {
                return;
            }
        }
        let lv = self.page_lruvec_idx(pfn);
        self.charge(self.costs.list_op_ps);
        self.lruvecs[lv].lists[lru as usize].del(&mut self.mem, pfn);
        self.vmstat.add(
            lru.vmstat_item(),
            -(self.mem[pfn as usize].nr_pages() as i64),
        );
    }

    /// The lru_lock that guards lruvec `lv` (an index in `lruvecs`): its own
    /// (lruvec->lru_lock) from v5.11 (`lruvec-lru-lock`), its node's (pgdat->lru_lock)
    /// before; with the cost table, borrowed beside it.
    fn lru_lock_and_costs(
        &mut self,
        lv: usize,
    ) -> (
        &mut crate::machine::SpinLock,
        &crate::machine::cost::CostTable,
    ) {
        let n = self.nodes.len();
        let lock = if self.features.lruvec_lru_lock {
            &mut self.lruvecs[lv].lru_lock
        } else {
            // The root memcg's lruvecs are 0..n: their index is the node.
            let node = if lv < n { lv } else { lv % n };
            &mut self.nodes[node].lru_lock
        };
        (lock, &self.costs)
    }

    /// Every lru_lock of the machine: the nodes' and the lruvecs' (one of the two sets is
    /// used, by the era).
    pub fn lru_locks(&self) -> impl Iterator<Item = &crate::machine::SpinLock> {
        let nodes = self.nodes.iter().map(|n| &n.lru_lock);
        nodes.chain(self.lruvecs.iter().map(|l| &l.lru_lock))
    }

    /// The lruvec whose lru_lock guards page `pfn`: its own, or before v5.11 its node's
    /// root lruvec (index = node), whose lock is the node's. Two pages share a lock when
    /// this is equal (folio_lruvec_relock_irqsave keeps it).
    #[inline]
    pub(crate) fn page_lru_lock_idx(&self, pfn: Pfn) -> usize {
        if self.features.lruvec_lru_lock {
            self.page_lruvec_idx(pfn)
        } else {
            self.mem[pfn as usize].node as usize
        }
    }

    /// folio_lruvec_relock_irqsave: hold the lru_lock that guards page `pfn`, given the one
    /// held (`locked`, updated): kept when it is the same, else dropped and the page's
    /// taken. True when a lock was taken.
    fn folio_lruvec_relock(&mut self, locked: &mut Option<usize>, pfn: Pfn) -> bool {
        let lv = self.page_lru_lock_idx(pfn);
        if *locked == Some(lv) {
            return false;
        }
        if let Some(l) = *locked {
            self.lru_unlock(l);
        }
        self.lru_lock(lv);
        *locked = Some(lv);
        true
    }

    /// Take the lru_lock that guards lruvec `lv` (spin_lock_irq).
    pub fn lru_lock(&mut self, lv: usize) {
        let now = self.now();
        let my = self.cur_node();
        let (lock, costs) = self.lru_lock_and_costs(lv);
        let c = lock.acquire(now, my, costs);
        self.charge_after_drain(c);
    }

    /// Release the lru_lock of lruvec `lv`.
    pub fn lru_unlock(&mut self, lv: usize) {
        let now = self.now();
        self.lru_lock_and_costs(lv).0.release(now);
    }

    /// __page_cache_release's LRU part: take the lock, remove the page, clear PG_lru and
    /// PG_active (the page's last reference is gone, so the non-atomic clears are legal).
    pub fn del_page_from_lru_locked(&mut self, pfn: Pfn) {
        let lv = self.page_lru_lock_idx(pfn);
        self.lru_lock(lv);
        let lru = self.page_lru(pfn);
        self.del_page_from_lru_list(pfn, lru);
        self.__ClearPageLRU(pfn);
        self.__ClearPageActive(pfn);
        self.lru_unlock(lv);
    }

    /// update_page_reclaim_stat (of the page's lruvec).
    fn update_page_reclaim_stat(&mut self, pfn: Pfn, file: bool, rotated: bool) {
        let idx = self.page_lruvec_idx(pfn);
        let lv = &mut self.lruvecs[idx];
        lv.recent_scanned[file as usize] += 1;
        if rotated {
            lv.recent_rotated[file as usize] += 1;
        }
    }

    /// pagevec_lru_move_fn: apply a move to every page of a pagevec under the lru_lock of
    /// each page's lruvec (re-taken when the next page's lruvec has another lock:
    /// folio_lruvec_relock_irqsave), then release the references.
    fn pagevec_lru_move_fn(&mut self, pv: Pagevec, mv: LruMove) {
        let mut locked: Option<usize> = None;
        for &pfn in pv.as_slice() {
            self.folio_lruvec_relock(&mut locked, pfn);
            match mv {
                LruMove::Add => self.__pagevec_lru_add_fn(pfn),
                LruMove::Activate => self.__activate_page(pfn),
                LruMove::RotateTail => self.pagevec_move_tail_fn(pfn),
                LruMove::DeactivateFile => self.lru_deactivate_file_fn(pfn),
                LruMove::Deactivate => self.lru_deactivate_fn(pfn),
                LruMove::Lazyfree => self.lru_lazyfree_fn(pfn),
            }
        }
        if let Some(l) = locked {
            self.lru_unlock(l);
        }
        self.release_pages(pv.as_slice());
    }

    /// release_pages (folios_put_refs from v6.9): drop one reference on each page. The
    /// pages whose last reference goes leave their LRU lists under the lru_lock, held from
    /// one page to the next while they share it (folio_lruvec_relock_irqsave), and are
    /// freed after it is dropped (free_unref_page_list), in the order given. How long the
    /// lock is held follows the era: from v3.17 (`release-pages-lock-batch`) a caller's
    /// pages go in whole and the lock is dropped every SWAP_CLUSTER_MAX pages after it was
    /// taken (lock_batch); before, and again from v6.9 (`folio-batch-31`, no lock_batch),
    /// they go PAGEVEC_SIZE pages per call (free_pages_and_swap_cache's chunks, a
    /// folio_batch).
    pub fn release_pages(&mut self, pages: &[Pfn]) {
        let prev = self.enter(KFunc::ReleasePages);
        if self.features.release_pages_lock_batch && !self.features.folio_batch_31 {
            self.release_pages_batch(pages, crate::mm::vmscan::SWAP_CLUSTER_MAX as usize);
        } else {
            for chunk in pages.chunks(pagevec_size(&self.features)) {
                self.release_pages_batch(chunk, usize::MAX);
            }
        }
        self.leave(prev);
    }

    /// One release_pages call over `pages`: the lru_lock dropped after `lock_batch`
    /// pages since it was taken.
    fn release_pages_batch(&mut self, pages: &[Pfn], lock_batch: usize) {
        let mut to_free = std::mem::take(&mut self.release_scratch);
        let mut locked: Option<usize> = None;
        let mut held = 0;
        for &pfn in pages {
            if let Some(l) = locked {
                held += 1;
                if held == lock_batch {
                    self.lru_unlock(l);
                    locked = None;
                }
            }
            let (head, last) = self.put_page_testzero(pfn);
            if !last {
                continue;
            }
            let p = &self.mem[head as usize];
            assert!(p.refcount == 0, "put_page underflow pfn={head}");
            if p.test(pg::LRU) && !self.debug_skip_lru_del_on_free {
                if self.folio_lruvec_relock(&mut locked, head) {
                    held = 0;
                }
                let lru = self.page_lru(head);
                self.del_page_from_lru_list(head, lru);
                self.__ClearPageLRU(head);
                self.__ClearPageActive(head);
            }
            to_free.push(head);
        }
        if let Some(l) = locked {
            self.lru_unlock(l);
        }
        for &pfn in &to_free {
            self.free_hot_cold_page(pfn);
        }
        to_free.clear();
        self.release_scratch = to_free;
    }

    fn __pagevec_lru_add_fn(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::PagevecLruAdd);
        debug_assert!(!self.PageLRU(pfn), "page already on the LRU");
        self.lru_add_cull_or_rescue(pfn);
        self.SetPageLRU(pfn);
        let lru = self.page_lru(pfn);
        self.add_page_to_lru_list(pfn, lru);
        let p = &self.mem[pfn as usize];
        let (file, active) = (!p.test(pg::SWAPBACKED), p.test(pg::ACTIVE));
        self.update_page_reclaim_stat(pfn, file, active);
        self.leave(prev);
    }

    fn __activate_page(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::ActivatePage);
        let p = &self.mem[pfn as usize];
        if p.test(pg::LRU) && !p.test(pg::ACTIVE) && !p.test(pg::UNEVICTABLE) {
            let file = !p.test(pg::SWAPBACKED);
            let lru = self.page_lru(pfn);
            self.del_page_from_lru_list(pfn, lru);
            self.SetPageActive(pfn);
            let lru = self.page_lru(pfn);
            self.add_page_to_lru_list(pfn, lru);
            let nr = self.mem[pfn as usize].nr_pages() as i64;
            self.vmstat.add(crate::mm::vmstat::VmItem::Pgactivate, nr);
            self.count_memcg_page_event(pfn, crate::mm::vmstat::VmItem::Pgactivate, nr);
            self.update_page_reclaim_stat(pfn, file, true);
        }
        self.leave(prev);
    }

    fn pagevec_move_tail_fn(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        let active_ok = self.features.writeback_activate || !p.test(pg::ACTIVE);
        if p.test(pg::LRU) && active_ok && !p.test(pg::UNEVICTABLE) {
            let lru = self.page_lru(pfn);
            self.del_page_from_lru_list(pfn, lru);
            // v4.11: an activated dirty/writeback page goes to the inactive tail.
            let lru = if self.features.writeback_activate && p_active(self, pfn) {
                self.__ClearPageActive(pfn);
                self.page_lru(pfn)
            } else {
                lru
            };
            self.add_page_to_lru_list_tail(pfn, lru);
            // The folio's pages (lru_move_tail: folio_nr_pages; thp_nr_pages from 5.9).
            let nr = self.mem[pfn as usize].nr_pages() as i64;
            self.vmstat.add(crate::mm::vmstat::VmItem::Pgrotated, nr);
        }
    }

    /// folio_batch_add_and_move: queue `pfn` on this CPU's batch for `mv`, holding a
    /// reference, and move the batch once it is full or when `pfn` is a large folio
    /// (folio_may_be_lru_cached: a large folio is never left in a per-CPU batch; 4.x's
    /// PageCompound test) — activate, rotate, deactivate_file, deactivate; the add batch's
    /// order depends on the era: `lru_cache_add`.
    fn lru_batch_add(&mut self, pfn: Pfn, mv: LruMove) {
        let cpu = self.cur.cpu;
        let large = self.mem[pfn as usize].nr_pages() > 1;
        self.get_page(pfn);
        let pvs = &mut self.pvecs[cpu];
        let pv = match mv {
            LruMove::Add => &mut pvs.lru_add,
            LruMove::Activate => &mut pvs.activate,
            LruMove::RotateTail => &mut pvs.rotate,
            LruMove::DeactivateFile => &mut pvs.deactivate_file,
            LruMove::Deactivate => &mut pvs.deactivate,
            LruMove::Lazyfree => &mut pvs.lazyfree,
        };
        if pv.add(pfn) == 0 || large {
            let full = *pv;
            pv.reinit();
            self.pagevec_lru_move_fn(full, mv);
        }
    }

    /// __lru_cache_add / lru_cache_add: queue a new page for the LRU on this CPU's add
    /// pagevec, holding a reference; a full pagevec is drained first (v4.2). A large folio
    /// moves the batch to the LRU at once (folio_may_be_lru_cached; PageCompound from 4.x:
    /// a folio of hundreds of pages is not kept out of reclaim's sight in a batch).
    pub fn lru_cache_add(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::LruCacheAdd);
        if self.lru_gen_in_fault {
            if let Some(f) = self.ops.add_in_fault {
                f(self, pfn);
            }
        }
        self.get_page(pfn);
        let cpu = self.cur.cpu;
        let large = self.mem[pfn as usize].nr_pages() > 1;
        if self.features.lru_add_flush_full {
            // v4.8: add, then move the batch to the LRU once it is full.
            if self.pvecs[cpu].lru_add.add(pfn) == 0 || large {
                self.lru_add_flush(cpu);
            }
        } else {
            // v4.2: a full batch is moved before the page is added.
            if self.pvecs[cpu].lru_add.space() == 0 {
                self.lru_add_flush(cpu);
            }
            self.pvecs[cpu].lru_add.add(pfn);
            if large {
                self.lru_add_flush(cpu);
            }
        }
        self.leave(prev);
    }

    /// __pagevec_lru_add of CPU `cpu`'s add batch: its pages go to their LRU lists.
    fn lru_add_flush(&mut self, cpu: usize) {
        let pv = self.pvecs[cpu].lru_add;
        self.pvecs[cpu].lru_add.reinit();
        self.pagevec_lru_move_fn(pv, LruMove::Add);
    }

    /// activate_page: queue an LRU page for activation on this CPU's activate pagevec
    /// (v3.0, `activate-page-batch`); before, move it to the active list at once under its
    /// lru_lock.
    pub fn activate_page(&mut self, pfn: Pfn) {
        if !self.features.activate_page_batch {
            let lv = self.page_lru_lock_idx(pfn);
            self.lru_lock(lv);
            self.__activate_page(pfn);
            self.lru_unlock(lv);
            return;
        }
        let p = &self.mem[pfn as usize];
        if p.test(pg::LRU) && !p.test(pg::ACTIVE) && !p.test(pg::UNEVICTABLE) {
            self.lru_batch_add(pfn, LruMove::Activate);
        }
    }

    /// rotate_reclaimable_page: at the end of writeback of a PG_reclaim page, move it to the
    /// inactive tail so reclaim finds it soon (pgrotated).
    pub fn rotate_reclaimable_page(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if !p.test(pg::LOCKED)
            && !p.test(pg::DIRTY)
            && (self.features.writeback_activate || !p.test(pg::ACTIVE))
            && !p.test(pg::UNEVICTABLE)
            && p.test(pg::LRU)
        {
            self.lru_batch_add(pfn, LruMove::RotateTail);
        }
    }

    /// deactivate_file_page / deactivate_file_folio (v2.6.39, `invalidate-deactivate`): a
    /// page invalidation could not drop is queued on this CPU's lru_deactivate_file batch,
    /// holding a reference, for `lru_deactivate_file_fn`. Under MGLRU from v6.14
    /// (`mglru-optimize-deactivation`) its references are cleared first
    /// (lru_gen_clear_refs) and a folio already in the oldest generation stays where it is.
    pub fn deactivate_file_page(&mut self, pfn: Pfn) {
        if self.mem[pfn as usize].test(pg::UNEVICTABLE) {
            return;
        }
        if self.lru_gen_enabled()
            && self.features.mglru_optimize_deactivation
            && self.lru_gen_clear_refs(pfn)
        {
            return;
        }
        self.lru_batch_add(pfn, LruMove::DeactivateFile);
    }

    /// lru_deactivate_file_fn (lru_lock held): an unmapped page goes to the inactive list,
    /// unreferenced — its head with PG_reclaim when it is dirty or under writeback (the
    /// flusher writes it, and its writeback end rotates it to the tail), else the tail
    /// (pgrotated); pgdeactivate if it was active (every MGLRU folio from v6.14). A mapped
    /// page stays.
    fn lru_deactivate_file_fn(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::LruDeactivateFile);
        let p = &self.mem[pfn as usize];
        if !p.test(pg::LRU) || p.test(pg::UNEVICTABLE) || self.folio_mapped(pfn) {
            self.leave(prev);
            return;
        }
        let active = p.test(pg::ACTIVE)
            || (self.lru_gen_enabled() && self.features.mglru_optimize_deactivation);
        let file = !p.test(pg::SWAPBACKED);
        let lru = self.page_lru(pfn);
        self.del_page_from_lru_list(pfn, lru);
        self.ClearPageActive(pfn);
        self.ClearPageReferenced(pfn);
        let lru = self.page_lru(pfn);
        // Counted in the folio's pages (lru_deactivate_file: folio_nr_pages).
        let nr = self.mem[pfn as usize].nr_pages() as i64;
        if self.PageWriteback(pfn) || self.PageDirty(pfn) {
            self.add_page_to_lru_list(pfn, lru);
            self.SetPageReclaim(pfn);
        } else {
            self.add_page_to_lru_list_tail(pfn, lru);
            self.vmstat.add(crate::mm::vmstat::VmItem::Pgrotated, nr);
        }
        if active {
            self.vmstat.add(crate::mm::vmstat::VmItem::Pgdeactivate, nr);
            self.count_memcg_page_event(pfn, crate::mm::vmstat::VmItem::Pgdeactivate, nr);
        }
        self.update_page_reclaim_stat(pfn, file, false);
        self.leave(prev);
    }

    /// deactivate_page / folio_deactivate (v5.4, MADV_COLD): an active LRU page (under
    /// MGLRU any: from v6.14, `mglru-optimize-deactivation`, one its references were
    /// cleared on and that is not in the oldest generation yet) is queued on this CPU's
    /// lru_deactivate batch, holding a reference, for `lru_deactivate_fn`.
    pub fn deactivate_page(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if !p.test(pg::LRU) || p.test(pg::UNEVICTABLE) {
            return;
        }
        if self.lru_gen_enabled() {
            if self.features.mglru_optimize_deactivation && self.lru_gen_clear_refs(pfn) {
                return;
            }
        } else if !p.test(pg::ACTIVE) {
            return;
        }
        self.lru_batch_add(pfn, LruMove::Deactivate);
    }

    /// lru_deactivate_fn (lru_lock held): an active page (any MGLRU folio) goes to the
    /// head of its inactive list, unreferenced (pgdeactivate).
    fn lru_deactivate_fn(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if !p.test(pg::LRU)
            || p.test(pg::UNEVICTABLE)
            || !(p.test(pg::ACTIVE) || self.lru_gen_enabled())
        {
            return;
        }
        let file = !p.test(pg::SWAPBACKED);
        let prev = self.enter(KFunc::LruDeactivate);
        let lru = self.page_lru(pfn);
        self.del_page_from_lru_list(pfn, lru);
        self.ClearPageActive(pfn);
        self.ClearPageReferenced(pfn);
        let lru = self.page_lru(pfn);
        self.add_page_to_lru_list(pfn, lru);
        // The folio's pages (lru_deactivate: folio_nr_pages).
        let nr = self.mem[pfn as usize].nr_pages() as i64;
        self.vmstat.add(crate::mm::vmstat::VmItem::Pgdeactivate, nr);
        self.count_memcg_page_event(pfn, crate::mm::vmstat::VmItem::Pgdeactivate, nr);
        self.update_page_reclaim_stat(pfn, file, false);
        self.leave(prev);
    }

    /// mark_page_lazyfree / folio_mark_lazyfree (MADV_FREE): an anonymous, swap-backed page
    /// not in the swap cache is queued on this CPU's lru_lazyfree batch.
    pub fn mark_page_lazyfree(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if p.test(pg::SWAPBACKED) && !p.test(pg::SWAPCACHE) && !p.test(pg::UNEVICTABLE) {
            self.lru_batch_add(pfn, LruMove::Lazyfree);
        }
    }

    /// lru_lazyfree_fn (lru_lock held): the page goes to the inactive file list with
    /// PG_swapbacked cleared — reclaim drops it without swap unless it is written again —
    /// unreferenced (under MGLRU from v6.14 its references stay), pglazyfree.
    fn lru_lazyfree_fn(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        if !p.test(pg::LRU)
            || !p.test(pg::SWAPBACKED)
            || p.test(pg::SWAPCACHE)
            || p.test(pg::UNEVICTABLE)
            || !self.page_anon(pfn)
        {
            return;
        }
        let lru = self.page_lru(pfn);
        self.del_page_from_lru_list(pfn, lru);
        self.ClearPageActive(pfn);
        // From v6.14 MGLRU calls lru_gen_clear_refs here instead, after the delete has
        // taken the folio's generation: it finds none and clears nothing.
        if !(self.lru_gen_enabled() && self.features.mglru_optimize_deactivation) {
            self.ClearPageReferenced(pfn);
        }
        self.ClearPageSwapBacked(pfn);
        let lru = self.page_lru(pfn);
        self.add_page_to_lru_list(pfn, lru);
        // The folio's pages (lru_lazyfree: folio_nr_pages).
        let nr = self.mem[pfn as usize].nr_pages() as i64;
        self.vmstat.add(crate::mm::vmstat::VmItem::Pglazyfree, nr);
        self.count_memcg_page_event(pfn, crate::mm::vmstat::VmItem::Pglazyfree, nr);
    }

    /// __lru_cache_activate_page: a page still in this CPU's add pagevec is marked active
    /// there (no pgactivate); a page in another CPU's pagevec loses the activation.
    fn __lru_cache_activate_page(&mut self, pfn: Pfn) {
        let cpu = self.cur.cpu;
        // The kernel scans the pagevec from the newest entry.
        self.charge(self.costs.mem_access_ps * u64::from(self.pvecs[cpu].lru_add.nr));
        if self.pvecs[cpu].lru_add.contains(pfn) {
            self.SetPageActive(pfn);
        }
    }

    /// mark_page_accessed (see the module comment for the state machine).
    pub fn mark_page_accessed(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::MarkPageAccessed);
        let pfn = self.folio_head(pfn); // folio_mark_accessed(page_folio(page))
        if let Some(f) = self.ops.mark_accessed {
            f(self, pfn);
            self.leave(prev);
            return;
        }
        self.charge(self.costs.mem_access_ps); // load page->flags
        let p = &self.mem[pfn as usize];
        let (active, referenced, unevictable, lru, file) = (
            p.test(pg::ACTIVE),
            p.test(pg::REFERENCED),
            p.test(pg::UNEVICTABLE),
            p.test(pg::LRU),
            !p.test(pg::SWAPBACKED),
        );
        // Before v3.11 (`lru-cache-activate`) only a page on the LRU is activated.
        if !active && !unevictable && referenced && (lru || self.features.lru_cache_activate) {
            if lru {
                self.activate_page(pfn);
            } else {
                self.__lru_cache_activate_page(pfn);
            }
            self.ClearPageReferenced(pfn);
            // Before v5.9 only a file page's activation aged the nonresident clock.
            if file || self.features.anon_workingset {
                self.workingset_activation(pfn);
            }
        } else if !referenced {
            self.SetPageReferenced(pfn);
        }
        self.leave(prev);
    }

    /// init_page_accessed (seed 000): mark a page not yet visible to other CPUs as accessed
    /// with a plain store — what the first mark_page_accessed call would do, non-atomically.
    pub fn init_page_accessed(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::InitPageAccessed);
        if !self.PageReferenced(pfn) {
            self.__SetPageReferenced(pfn);
        }
        self.leave(prev);
    }

    /// workingset_activation: an activated file page advances its lruvec's inactive_age
    /// (workingset_age_nonresident: and its ancestors' from v5.5).
    pub fn workingset_activation(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        let (node, memcg, nr) = (p.node as usize, p.memcg, p.nr_pages());
        self.charge_atomic();
        self.workingset_age_nonresident_by(memcg, node, nr);
    }

    /// lru_add_drain_cpu: drain this CPU's pagevecs (add, rotate, deactivate_file,
    /// deactivate, lazyfree, activate).
    pub fn lru_add_drain_cpu(&mut self, cpu: usize) {
        let prev = self.enter(KFunc::LruAddDrain);
        let pv = self.pvecs[cpu];
        self.pvecs[cpu].reinit();
        if pv.lru_add.nr > 0 {
            self.pagevec_lru_move_fn(pv.lru_add, LruMove::Add);
        }
        if pv.rotate.nr > 0 {
            self.pagevec_lru_move_fn(pv.rotate, LruMove::RotateTail);
        }
        if pv.deactivate_file.nr > 0 {
            self.pagevec_lru_move_fn(pv.deactivate_file, LruMove::DeactivateFile);
        }
        if pv.deactivate.nr > 0 {
            self.pagevec_lru_move_fn(pv.deactivate, LruMove::Deactivate);
        }
        if pv.lazyfree.nr > 0 {
            self.pagevec_lru_move_fn(pv.lazyfree, LruMove::Lazyfree);
        }
        if pv.activate.nr > 0 {
            self.pagevec_lru_move_fn(pv.activate, LruMove::Activate);
        }
        self.leave(prev);
    }

    /// lru_add_drain: drain the running CPU's pagevecs.
    pub fn lru_add_drain(&mut self) {
        let cpu = self.cur.cpu;
        self.lru_add_drain_cpu(cpu);
    }

    /// lru_add_drain_all: drain every CPU's pagevecs (charged to the caller, as the kernel's
    /// schedule_on_each_cpu work is waited for).
    pub fn lru_add_drain_all(&mut self) {
        for c in 0..self.cpus.len() {
            self.lru_add_drain_cpu(c);
        }
    }
}
