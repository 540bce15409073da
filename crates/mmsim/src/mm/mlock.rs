//! mlock (mm/mlock.c): VM_LOCKED mappings, PG_mlocked pages and the unevictable list.
//!
//! mlock(2) sets VM_LOCKED on the VMAs of a range and mlocks the pages they map; a page
//! mapped later into a VM_LOCKED VMA (a fault, fault-around, a swap-in, a COW copy) is
//! mlocked as it is mapped. An mlocked page (PG_mlocked, /proc/vmstat `nr_mlock`) is not
//! evictable (folio_evictable): it lives on the unevictable list (PG_unevictable,
//! `nr_unevictable`, memory.stat `unevictable`), which reclaim never scans. A page that
//! reaches an evictable list or an isolation anyway — mlocked while another CPU's batch or
//! a reclaimer held it — is moved there when it is put back (`unevictable_pgs_culled`),
//! and reclaim that finds a VM_LOCKED mapping of a page not mlocked restores the mlock.
//!
//! Two eras (`mlock-count`, v5.18, Hugh Dickins' "mm/munlock" series):
//! - From 5.18, a page on the unevictable list counts the VM_LOCKED mappings that mlocked
//!   it (folio->mlock_count); removing such a PTE (munmap, exit, truncation, munlock)
//!   decrements it, and at 0 the page is munlocked and goes back to the inactive list
//!   (`unevictable_pgs_munlocked`, `unevictable_pgs_rescued`). The count may undercount
//!   (a page culled by reclaim starts at 0): reclaim fixes that up.
//! - Before, munlock clears PG_mlocked and walks the rmap (try_to_munlock) to keep the page
//!   locked when another VM_LOCKED VMA maps it; munmap and exit munlock a locked VMA before
//!   zapping it, and the last unmap of a page still mlocked clears the flag
//!   (clear_page_mlock, `unevictable_pgs_cleared`).
//!
//! Not modelled: the per-CPU mlock batch of 5.18+ (mlock_fbatch; pages move at once),
//! RLIMIT_MEMLOCK (tasks have CAP_IPC_LOCK), mlockall, merging VMAs again after a munlock
//! (an mlock of part of a mapping splits it, as mlock_fixup does), and the unevictable
//! mappings of ramfs and SHM_LOCK. mlock's populate (__mm_populate) is the calling
//! program's touch of the range through the fault path, as GUP faults it in
//! (`program = "anon"`, `mlock = true`); `mlock = "onfault"` (MLOCK_ONFAULT) skips it.

use crate::machine::profile::KFunc;
use crate::mm::memory::{pte, PTRS_PER_PTE};
use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::rmap::VM_LOCKED;
use crate::mm::vmstat::VmItem;
use crate::sched::TaskId;
use crate::sim::Sim;
use crate::workload::{Errno, OpResult};

impl Sim {
    /// folio_evictable: not mlocked (an unevictable mapping — ramfs, SHM_LOCK — is not
    /// modelled).
    #[inline]
    pub fn page_evictable(&self, pfn: Pfn) -> bool {
        !self.mem[pfn as usize].test(pg::MLOCKED)
    }

    /// A page just got PG_mlocked: NR_MLOCK and unevictable_pgs_mlocked.
    fn count_mlocked(&mut self) {
        self.vmstat.inc(VmItem::NrMlock);
        self.vmstat.inc(VmItem::UnevictablePgsMlocked);
    }

    /// A page on an evictable list goes to the unevictable list (lru_lock held): off its
    /// list, PG_active cleared, PG_unevictable set (unevictable_pgs_culled).
    fn move_to_unevictable(&mut self, pfn: Pfn) {
        let lru = self.page_lru(pfn);
        self.del_page_from_lru_list(pfn, lru);
        self.ClearPageActive(pfn);
        self.SetPageUnevictable(pfn);
        self.add_page_to_lru_list(pfn, LruList::Unevictable);
        self.vmstat.inc(VmItem::UnevictablePgsCulled);
    }

    /// A page on the unevictable list that became evictable goes to the head of its
    /// inactive list (lru_lock held; unevictable_pgs_rescued).
    fn move_to_evictable(&mut self, pfn: Pfn) {
        self.del_page_from_lru_list(pfn, LruList::Unevictable);
        self.ClearPageUnevictable(pfn);
        let lru = self.page_lru(pfn);
        self.add_page_to_lru_list(pfn, lru);
        self.vmstat.inc(VmItem::UnevictablePgsRescued);
    }

    /// lru_add_fn's (and putback_lru_page's) evictability test, for a page about to go on
    /// a list: an mlocked page goes to the unevictable list (PG_active cleared, mlock_count
    /// 0 — an underestimate reclaim fixes; culled unless it was unevictable already); an
    /// evictable page that still has PG_unevictable loses it (rescued). An evictable page
    /// without PG_unevictable, every page of a run without mlock, costs one flag test.
    pub(crate) fn lru_add_cull_or_rescue(&mut self, pfn: Pfn) {
        let f = self.mem[pfn as usize].flags;
        if f & (pg::MLOCKED | pg::UNEVICTABLE) == 0 {
            return;
        }
        let was_unevictable = self.TestClearPageUnevictable(pfn);
        if f & pg::MLOCKED == 0 {
            self.vmstat.inc(VmItem::UnevictablePgsRescued);
            return;
        }
        self.__ClearPageActive(pfn);
        self.__SetPageUnevictable(pfn);
        self.mem[pfn as usize].mlock_count = 0;
        if !was_unevictable {
            self.vmstat.inc(VmItem::UnevictablePgsCulled);
        }
    }

    /// mlock_vma_page / mlock_folio: mlock a page mapped by a VM_LOCKED VMA. A page newly
    /// mlocked counts NR_MLOCK and unevictable_pgs_mlocked; a page on an LRU list goes to
    /// the unevictable list (from v5.18 one already there counts one more mlock). A page
    /// off the lists (in a CPU's add batch, isolated by reclaim) keeps just the flag: it is
    /// culled when it is put back.
    pub fn mlock_vma_page(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::MlockFolio);
        let newly = !self.TestSetPageMlocked(pfn);
        if newly {
            self.count_mlocked();
        }
        if self.PageLRU(pfn) && (newly || self.features.mlock_count) {
            // __mlock_folio (v5.18); isolate_lru_page + putback_lru_page before.
            let lv = self.page_lru_lock_idx(pfn);
            self.lru_lock(lv);
            if self.PageUnevictable(pfn) {
                if self.features.mlock_count {
                    self.mem[pfn as usize].mlock_count += 1;
                }
            } else {
                self.move_to_unevictable(pfn);
                self.mem[pfn as usize].mlock_count = 1;
            }
            self.lru_unlock(lv);
        }
        self.leave(prev);
    }

    /// A new anonymous page of a VM_LOCKED VMA (folio_add_lru_vma → mlock_new_folio,
    /// v5.18): PG_mlocked, then straight onto the unevictable list with one mlock counted
    /// (the kernel's per-CPU mlock batch is not modelled). Before v5.18
    /// (lru_cache_add_active_or_unevictable) it takes the add batch like any new page and
    /// is culled when the batch drains.
    pub fn mlock_new_page(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::MlockFolio);
        self.SetPageMlocked(pfn);
        self.count_mlocked();
        if self.features.mlock_count {
            let lv = self.page_lru_lock_idx(pfn);
            self.lru_lock(lv);
            self.__ClearPageActive(pfn);
            self.__SetPageUnevictable(pfn);
            self.mem[pfn as usize].mlock_count = 1;
            self.SetPageLRU(pfn);
            self.add_page_to_lru_list(pfn, LruList::Unevictable);
            self.vmstat.inc(VmItem::UnevictablePgsCulled);
            self.lru_unlock(lv);
        } else {
            self.lru_cache_add(pfn);
        }
        self.leave(prev);
    }

    /// munlock_folio: a VM_LOCKED mapping of the page goes away (its PTE is zapped, or
    /// munlock(2) clears VM_LOCKED).
    ///
    /// v5.18 (__munlock_folio): a page on the unevictable list drops one mlock and stays
    /// while any is left; then PG_mlocked is cleared (NR_MLOCK, unevictable_pgs_munlocked;
    /// `stranded` for a page off the lists still marked unevictable) and the page goes back
    /// to its inactive list (rescued). Before (munlock_vma_page): PG_mlocked is cleared at
    /// once; a page on a list mapped more than once keeps it if an rmap walk finds another
    /// VM_LOCKED mapping (try_to_munlock, which counts a new mlock), and is put back.
    pub fn munlock_page(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::MunlockFolio);
        if self.features.mlock_count {
            self.__munlock_folio(pfn);
        } else {
            self.munlock_vma_page(pfn);
        }
        self.leave(prev);
    }

    fn __munlock_folio(&mut self, pfn: Pfn) {
        let on_lru = self.PageLRU(pfn);
        let lv = self.page_lru_lock_idx(pfn);
        if on_lru {
            self.lru_lock(lv);
            if self.PageUnevictable(pfn) {
                let c = &mut self.mem[pfn as usize].mlock_count;
                *c = c.saturating_sub(1);
                if *c > 0 {
                    self.lru_unlock(lv);
                    return;
                }
            }
        }
        if self.TestClearPageMlocked(pfn) {
            self.vmstat.dec(VmItem::NrMlock);
            if on_lru || !self.PageUnevictable(pfn) {
                self.vmstat.inc(VmItem::UnevictablePgsMunlocked);
            } else {
                self.vmstat.inc(VmItem::UnevictablePgsStranded);
            }
        }
        if on_lru {
            if self.PageUnevictable(pfn) && self.page_evictable(pfn) {
                self.move_to_evictable(pfn);
            }
            self.lru_unlock(lv);
        }
    }

    fn munlock_vma_page(&mut self, pfn: Pfn) {
        if !self.TestClearPageMlocked(pfn) {
            return;
        }
        self.vmstat.dec(VmItem::NrMlock);
        if !self.PageLRU(pfn) {
            // __munlock_isolation_failed: putback or reclaim will deal with it.
            if self.PageUnevictable(pfn) {
                self.vmstat.inc(VmItem::UnevictablePgsStranded);
            } else {
                self.vmstat.inc(VmItem::UnevictablePgsMunlocked);
            }
            return;
        }
        let lv = self.page_lru_lock_idx(pfn);
        self.lru_lock(lv);
        // __munlock_isolated_page: only a page mapped more than once needs the walk.
        if self.mem[pfn as usize].mapcount > 0 && self.mapped_by_locked_vma(pfn) {
            self.SetPageMlocked(pfn);
            self.count_mlocked();
        } else {
            self.vmstat.inc(VmItem::UnevictablePgsMunlocked);
        }
        if self.PageUnevictable(pfn) && self.page_evictable(pfn) {
            self.move_to_evictable(pfn);
        }
        self.lru_unlock(lv);
    }

    /// try_to_munlock's walk (before v5.18): whether a VM_LOCKED VMA maps the page.
    fn mapped_by_locked_vma(&mut self, pfn: Pfn) -> bool {
        let targets = self.rmap_targets(pfn);
        let mut found = false;
        for &(mm, vpn, vma_flags) in &targets {
            self.charge(self.costs.spin_lock_ps + self.costs.tlb_walk_ps);
            let Some(m) = self.mms[mm as usize].as_ref() else {
                continue;
            };
            let locked = vma_flags
                .or_else(|| m.find_vma(vpn << PAGE_SHIFT).map(|v| v.flags))
                .is_some_and(|f| f & VM_LOCKED != 0);
            let p = m.pgtable.get(vpn);
            if locked && p & pte::PRESENT != 0 && pte::pfn(p) == pfn {
                found = true;
                break;
            }
        }
        self.rmap_done(targets);
        found
    }

    /// clear_page_mlock (before v5.18): the last PTE of a page still mlocked is gone
    /// (truncation's unmap, a COW of a locked private file page): PG_mlocked is cleared
    /// (unevictable_pgs_cleared) and the page goes back to its inactive list.
    pub fn clear_page_mlock(&mut self, pfn: Pfn) {
        if !self.TestClearPageMlocked(pfn) {
            return;
        }
        self.vmstat.dec(VmItem::NrMlock);
        self.vmstat.inc(VmItem::UnevictablePgsCleared);
        if self.PageLRU(pfn) {
            let lv = self.page_lru_lock_idx(pfn);
            self.lru_lock(lv);
            if self.PageUnevictable(pfn) {
                self.move_to_evictable(pfn);
            }
            self.lru_unlock(lv);
        } else if self.PageUnevictable(pfn) {
            self.vmstat.inc(VmItem::UnevictablePgsStranded);
        }
    }

    /// __page_cache_release's (v5.18; free_pages_prepare's before) clear of a page freed
    /// while still mlocked: NR_MLOCK and unevictable_pgs_cleared.
    pub fn mlock_clear_at_free(&mut self, pfn: Pfn) {
        self.mem[pfn as usize].flags &= !pg::MLOCKED;
        self.vmstat.dec(VmItem::NrMlock);
        self.vmstat.inc(VmItem::UnevictablePgsCleared);
    }

    /// mlock(2) (`lock`) or munlock(2) of [addr, addr+len): apply_vma_lock_flags over the
    /// VMAs of the range, which must be mapped without a hole (ENOMEM); a VMA whose
    /// VM_LOCKED changes is split where the range cuts it (mlock_fixup), the others are left
    /// whole. The populate that follows mlock(2) is the caller's (see the module comment).
    pub fn sys_mlock(&mut self, tid: TaskId, addr: u64, len: u64, lock: bool) -> OpResult {
        let Some(mm) = self.tasks[tid].mm else {
            return OpResult::Err(Errno::ENOMEM);
        };
        let start = addr & !(PAGE_SIZE - 1);
        let Some(end) = (addr % PAGE_SIZE)
            .checked_add(len)
            .and_then(|l| l.checked_add(PAGE_SIZE - 1))
            .and_then(|l| start.checked_add(l & !(PAGE_SIZE - 1)))
        else {
            return OpResult::Err(Errno::EINVAL);
        };
        if end == start {
            return OpResult::None;
        }
        let vmas: Vec<(u64, u64)> = {
            let m = self.mm(mm);
            let first = m.find_vma(start).map(|v| v.start);
            match first {
                None => return OpResult::Err(Errno::ENOMEM),
                Some(f) => m.vmas.range(f..end).map(|(s, v)| (*s, v.end)).collect(),
            }
        };
        // for_each_vma_range: a hole in the range is ENOMEM.
        let mut at = start;
        for &(s, e) in &vmas {
            if s > at {
                return OpResult::Err(Errno::ENOMEM);
            }
            at = e;
        }
        if at < end {
            return OpResult::Err(Errno::ENOMEM);
        }
        for (s, e) in vmas {
            // mlock_fixup: a VMA whose VM_LOCKED does not change is left whole; one the
            // range covers in part is split where the range cuts it (vma_modify_flags).
            let locked = self.mm(mm).vmas[&s].flags & VM_LOCKED != 0;
            if locked == lock {
                continue;
            }
            let s = self.split_vma_to_range(mm, s, e, start, end);
            self.mlock_fixup(mm, s, lock);
        }
        OpResult::None
    }

    /// mlock_fixup + mlock_vma_pages_range for the whole VMA at `start`: set or clear
    /// VM_LOCKED (in the VMA and its file's i_mmap entry), then mlock or munlock every
    /// page its PTEs map, between two lru_add_drain calls. Nothing is done when the flag
    /// does not change ("mlocking twice would be wrong").
    pub fn mlock_fixup(&mut self, mm: u32, start: u64, lock: bool) {
        let (old, end, file) = {
            let v = &self.mm(mm).vmas[&start];
            (v.flags, v.end, v.file)
        };
        let new = if lock {
            old | VM_LOCKED
        } else {
            old & !VM_LOCKED
        };
        if new == old {
            return;
        }
        let prev = self.enter(KFunc::MlockFixup);
        self.mm_mut(mm).vmas.get_mut(&start).expect("vma").flags = new;
        if let Some(ino) = file {
            for v in self.inode_mut(ino).i_mmap.iter_mut() {
                if v.mm == mm && v.start == start {
                    v.flags = new;
                }
            }
        }
        self.lru_add_drain();
        let (first, last) = (start >> PAGE_SHIFT, end >> PAGE_SHIFT);
        let mut vpn = first;
        while vpn < last {
            let tbl_end = ((vpn / PTRS_PER_PTE) + 1) * PTRS_PER_PTE;
            if !self.mm(mm).pgtable.has_table(vpn / PTRS_PER_PTE) {
                vpn = tbl_end;
                continue;
            }
            for v in vpn..tbl_end.min(last) {
                let p = self.mm(mm).pgtable.get(v);
                self.charge(self.costs.mem_access_ps);
                if p & pte::PRESENT == 0 {
                    continue;
                }
                if lock {
                    // An mlocked page is an order-0 page (`mm::folio`).
                    self.split_if_large(pte::pfn(p));
                    self.mlock_vma_page(pte::pfn(p));
                } else {
                    self.munlock_page(pte::pfn(p));
                }
            }
            vpn = tbl_end;
        }
        self.lru_add_drain();
        self.leave(prev);
    }
}
