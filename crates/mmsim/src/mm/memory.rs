//! Page tables and page faults (mm/memory.c), and the memory accesses of programs.
//!
//! Page table: the leaf level only — tables of 512 PTEs (one per 2 MiB of address space,
//! as an x86 PTE page) kept in a hash map by the 2 MiB-aligned index; tables are allocated on
//! first use (nr_page_table_pages). A PTE is a u64: present, write, young (accessed), dirty
//! and the PFN, or a swap entry when not present.
//!
//! An access (`access_page`) goes through the CPU's TLB (see `arch::tlb` for the hardware
//! rules); a miss walks the page table and faults when the PTE is not present or does not
//! allow the access. handle_mm_fault: anonymous faults (do_anonymous_page: a zeroed page on
//! the active anon list), file read faults (filemap_fault with read-around or sequential
//! readahead, fault-around of up to 16 cached neighbours), write faults on private file
//! mappings (copy-on-write into an anonymous page), write-protect faults (do_wp_page),
//! and swap-in (do_swap_page). An access outside any VMA or without the VMA's permission is
//! SIGSEGV; a fault on a file page at or beyond the end of the file is SIGBUS
//! (filemap_fault's VM_FAULT_SIGBUS, checked on entry and again under the page lock): the
//! touch returns `Errno::SIGBUS` and the engine kills the task, counting the signal in its
//! `errors`, as it does for SIGSEGV. A SIGBUS fault counts pgfault but not the task's
//! min/maj faults.
//!
//! Zapping (zap_pte_range): munmap and exit clear a whole VMA and drop each page's PTE
//! reference at once (the caller flushes the range; only the unmapping process can use its
//! translations). unmap_mapping_range (truncate, see `mm::truncate`) clears a file range in
//! other processes' tables too, with zap_details (`check_mapping`: leave COW'd anonymous
//! pages) and an mmu_gather: the cleared range is flushed from every CPU that may cache it
//! before the gathered pages' references are dropped (tlb_finish_mmu).

use rustc_hash::FxHashMap;

use crate::arch::tlb::TlbEntry;
use crate::machine::profile::KFunc;
use crate::machine::Mode;
use crate::mm::page::{pg, Pfn, NO_MAPPING, PAGE_SHIFT, PAGE_SIZE};
use crate::mm::page_alloc::{AllocError, Gfp};
use crate::mm::readahead::RaSleep;
use crate::mm::rmap::{ANON_MAPPING, VM_EXEC, VM_LOCKED, VM_SHARED, VM_WRITE};
use crate::mm::vmstat::VmItem;
use crate::sched::{TaskId, Wait};
use crate::sim::Sim;
use crate::workload::{Errno, OpResult};

/// PTE bits (x86 names).
pub mod pte {
    /// _PAGE_PRESENT.
    pub const PRESENT: u64 = 1 << 0;
    /// _PAGE_RW.
    pub const WRITE: u64 = 1 << 1;
    /// _PAGE_ACCESSED (young).
    pub const YOUNG: u64 = 1 << 5;
    /// _PAGE_DIRTY.
    pub const DIRTY: u64 = 1 << 6;
    /// A swap entry (not present): the offset is in the PFN field.
    pub const SWAP: u64 = 1 << 62;
    /// PFN field shift.
    pub const PFN_SHIFT: u32 = 12;
    /// The PFN of a present PTE (or the swap offset of a swap PTE).
    pub fn pfn(p: u64) -> u32 {
        ((p >> PFN_SHIFT) & 0xffff_ffff) as u32
    }
    /// A present PTE.
    pub fn mk(pfn: u32, write: bool, dirty: bool) -> u64 {
        PRESENT
            | YOUNG
            | ((pfn as u64) << PFN_SHIFT)
            | if write { WRITE } else { 0 }
            | if dirty { DIRTY } else { 0 }
    }
    /// A swap PTE.
    pub fn mk_swap(offset: u32) -> u64 {
        SWAP | ((offset as u64) << PFN_SHIFT)
    }
}

/// PTEs per page-table page.
pub const PTRS_PER_PTE: u64 = 512;

/// A process's page table (leaf level): page-table pages by PMD index (vpn / 512), with
/// a hint to the last one used (faults, rmap walks and zaps go through neighbouring
/// PTEs). Each table is a frame of the machine (`pfns`), allocated by `Sim::__pte_alloc`
/// and freed by munmap once no VMA is left over its 2 MiB (`Sim::free_pgtables_range`)
/// or with the mm (exit_mmap's free_pgtables); a removal moves the last table into its
/// position.
#[derive(Debug)]
pub struct PageTable {
    tables: Vec<Box<[u64; PTRS_PER_PTE as usize]>>,
    /// The frame backing each table (same positions as `tables`).
    pfns: Vec<Pfn>,
    /// The PMD index of each table (same positions).
    pmds: Vec<u64>,
    /// PMD index → position in `tables`.
    index: FxHashMap<u64, u32>,
    /// (PMD index, position) of the last table looked up.
    hint: std::cell::Cell<(u64, u32)>,
}

impl Default for PageTable {
    fn default() -> Self {
        PageTable {
            tables: Vec::new(),
            pfns: Vec::new(),
            pmds: Vec::new(),
            index: FxHashMap::default(),
            hint: std::cell::Cell::new((u64::MAX, 0)),
        }
    }
}

impl PageTable {
    /// Position of the table covering PMD index `pmd`, if it exists.
    #[inline]
    fn table_of(&self, pmd: u64) -> Option<usize> {
        let (k, i) = self.hint.get();
        if k == pmd {
            return Some(i as usize);
        }
        let i = *self.index.get(&pmd)?;
        self.hint.set((pmd, i));
        Some(i as usize)
    }
    /// The PTE of a virtual page, if its table exists.
    #[inline]
    pub fn get(&self, vpn: u64) -> u64 {
        self.table_of(vpn / PTRS_PER_PTE)
            .map(|t| self.tables[t][(vpn % PTRS_PER_PTE) as usize])
            .unwrap_or(0)
    }
    /// pmd_populate: install frame `pfn` as the (empty) table covering PMD index `pmd`.
    pub fn populate(&mut self, pmd: u64, pfn: Pfn) {
        debug_assert!(self.table_of(pmd).is_none(), "PMD {pmd} populated twice");
        let t = self.tables.len();
        self.tables.push(Box::new([0; PTRS_PER_PTE as usize]));
        self.pfns.push(pfn);
        self.pmds.push(pmd);
        let pos = u32::try_from(t).expect("2^32 page-table pages");
        self.index.insert(pmd, pos);
        self.hint.set((pmd, pos));
    }
    /// The frames of the tables.
    pub fn table_pfns(&self) -> &[Pfn] {
        &self.pfns
    }
    /// (PMD index, frame) of every table.
    pub fn tables(&self) -> impl Iterator<Item = (u64, Pfn)> + '_ {
        self.pmds.iter().copied().zip(self.pfns.iter().copied())
    }
    /// Take out the table covering PMD index `pmd`, returning its frame (the last table
    /// takes its position).
    pub fn remove_table(&mut self, pmd: u64) -> Option<Pfn> {
        let t = self.index.remove(&pmd)? as usize;
        self.tables.swap_remove(t);
        let pfn = self.pfns.swap_remove(t);
        self.pmds.swap_remove(t);
        if let Some(&moved) = self.pmds.get(t) {
            self.index.insert(moved, t as u32);
        }
        self.hint.set((u64::MAX, 0));
        Some(pfn)
    }
    /// A mutable PTE if its table exists.
    #[inline]
    pub fn get_mut(&mut self, vpn: u64) -> Option<&mut u64> {
        let t = self.table_of(vpn / PTRS_PER_PTE)?;
        Some(&mut self.tables[t][(vpn % PTRS_PER_PTE) as usize])
    }
    /// True if the PTE table covering PMD index `pmd` (vpn / PTRS_PER_PTE) exists.
    #[inline]
    pub fn has_table(&self, pmd: u64) -> bool {
        self.table_of(pmd).is_some()
    }
    /// Page-table pages allocated.
    pub fn nr_tables(&self) -> usize {
        self.tables.len()
    }
    /// Every non-empty PTE as (vpn, pte), in virtual-address order (for checkers and tests).
    pub fn entries(&self) -> Vec<(u64, u64)> {
        let mut keys: Vec<(u64, u32)> = self.index.iter().map(|(k, t)| (*k, *t)).collect();
        keys.sort_unstable();
        let mut out = Vec::new();
        for (k, t) in keys {
            for (i, &p) in self.tables[t as usize].iter().enumerate() {
                if p != 0 {
                    out.push((k * PTRS_PER_PTE + i as u64, p));
                }
            }
        }
        out
    }
    /// Clear the write bit of every present PTE in [start, end).
    pub fn write_protect_range(&mut self, start: u64, end: u64) {
        for vpn in start..end {
            if let Some(p) = self.get_mut(vpn) {
                *p &= !pte::WRITE;
            }
        }
    }
}

/// Pages a Touch op processes per step before yielding to other CPUs.
pub const TOUCH_SLICE_PAGES: u64 = 32;

/// Outcome of one access.
enum Access {
    Done,
    Segv,
    Sigbus,
}

/// What a handled page fault tells the access that took it (the part of vm_fault_t the
/// model needs; sleeping, VM_FAULT_RETRY, is `Err(Wait)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultResult {
    /// The fault was handled: retry the access.
    Handled,
    /// VM_FAULT_SIGBUS: a file page at or beyond the end of the file (filemap_fault), or a
    /// swap-in whose read failed (do_swap_page); the task gets SIGBUS.
    Sigbus,
}

impl Sim {
    /// Set a PTE in a table the fault allocated (`__pte_alloc`).
    pub fn set_pte(&mut self, mm: u32, vpn: u64, val: u64) {
        let p = self
            .mm_mut(mm)
            .pgtable
            .get_mut(vpn)
            .expect("a PTE table allocated by the fault (__pte_alloc)");
        *p = val;
    }

    /// __pte_alloc (pte_alloc_one + pmd_populate): a fault whose PMD has no PTE table
    /// allocates one before anything else (do_anonymous_page's pte_alloc; __do_fault and
    /// do_fault_around preallocate it before ->fault): a zeroed frame, GFP_KERNEL, charged
    /// to the faulting task's memcg from 4.7 (`memcg-kmem-pgtables`: GFP_PGTABLE_USER has
    /// __GFP_ACCOUNT). A failed allocation is VM_FAULT_OOM: the OOM killer ran, the fault
    /// is retried after a short back-off. Counted in nr_page_table_pages and the memcg's
    /// memory.stat `pagetables` (NR_PAGETABLE, pagetable_pte_ctor).
    pub fn __pte_alloc(&mut self, mm: u32, vpn: u64) -> Result<(), Wait> {
        let pmd = vpn / PTRS_PER_PTE;
        if self.mm(mm).pgtable.has_table(pmd) {
            return Ok(());
        }
        let r = if self.features.memcg_kmem_pgtables {
            let memcg = self.current_memcg();
            self.alloc_kmem_page_charged(Gfp::KERNEL, memcg)
        } else {
            self.alloc_page(Gfp::KERNEL)
        };
        let pfn = match r {
            Ok(p) => p,
            Err(AllocError::Wait(w)) => return Err(w),
            Err(AllocError::NoMem) => return Err(self.vm_fault_oom()),
        };
        // Reclaim inside the allocation may have slept and let another fault of this mm
        // populate the PMD (pmd_install finds it populated and frees the new table).
        if self.mm(mm).pgtable.has_table(pmd) {
            self.put_page(pfn);
            return Ok(());
        }
        self.charge_bulk_store(self.costs.page_zero_ps, PAGE_SIZE);
        self.mem[pfn as usize].flags |= pg::TABLE;
        self.vmstat.inc(VmItem::NrPageTablePages);
        self.mod_memcg_page_stat(pfn, VmItem::NrPageTablePages, 1);
        self.mm_mut(mm).pgtable.populate(pmd, pfn);
        Ok(())
    }

    /// free_pgtables at exit: every page-table page of `mm` goes back to the allocator
    /// (uncharged from its memcg).
    pub fn free_pgtables(&mut self, mm: u32) {
        let pfns = std::mem::take(&mut self.mm_mut(mm).pgtable.pfns);
        for &pfn in &pfns {
            self.pte_free(pfn);
        }
    }

    /// free_pgtables after munmap of [start, end) (vpns): the PTE tables whose whole 2 MiB
    /// no VMA of `mm` overlaps any more go back to the allocator (free_pgd_range between the
    /// neighbouring VMAs; their PTEs were zapped and the TLBs flushed).
    pub fn free_pgtables_range(&mut self, mm: u32, start: u64, end: u64) {
        if start >= end {
            return;
        }
        for pmd in start / PTRS_PER_PTE..=(end - 1) / PTRS_PER_PTE {
            let m = self.mm(mm);
            if !m.pgtable.has_table(pmd) || m.vma_under_pmd(pmd) {
                continue;
            }
            if let Some(pfn) = self.mm_mut(mm).pgtable.remove_table(pmd) {
                self.pte_free(pfn);
            }
        }
    }

    /// pte_free: one page-table page back to the allocator.
    fn pte_free(&mut self, pfn: Pfn) {
        self.vmstat.dec(VmItem::NrPageTablePages);
        self.mod_memcg_page_stat(pfn, VmItem::NrPageTablePages, -1);
        // The free clears PG_table (free_hot_cold_page), after the uncharge has seen a
        // kernel page.
        self.put_page(pfn);
    }

    /// The program's memory accesses: every `stride` bytes of [addr, addr+len), a slice of
    /// TOUCH_SLICE_PAGES pages per step. Progress counts pages done.
    pub fn sys_touch(
        &mut self,
        tid: TaskId,
        addr: u64,
        len: u64,
        stride: u64,
        write: bool,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        let Some(mm) = self.tasks[tid].mm else {
            return Ok(OpResult::Err(Errno::SIGSEGV));
        };
        let stride = stride.max(1);
        let first = addr >> PAGE_SHIFT;
        let last = (addr + len.max(1) - 1) >> PAGE_SHIFT;
        let per_page = (PAGE_SIZE / stride).max(1);
        let page_stride = (stride / PAGE_SIZE).max(1);
        let total = (last - first) / page_stride + 1;
        let mut budget = TOUCH_SLICE_PAGES;
        while *progress < total {
            if budget == 0 {
                // Yield: let other CPUs run (a preemption point between slices).
                return Err(Wait::Until(self.now()));
            }
            budget -= 1;
            let vpn = first + *progress * page_stride;
            if *progress + 1 < total {
                // The next page's TLB set, loaded while this page is accessed (and faulted).
                let next = vpn + page_stride;
                if next < crate::mm::mmap::TASK_SIZE >> PAGE_SHIFT {
                    self.tlbs[self.cur.cpu].prefetch(mm, next);
                }
            }
            self.set_mode(Mode::User);
            self.set_func(KFunc::User);
            // The accesses within the page after the first hit the cache.
            self.charge(self.costs.mem_access_ps * (per_page - 1));
            match self.access_page(tid, mm, vpn, write)? {
                Access::Done => {}
                Access::Segv => {
                    self.set_mode(Mode::System);
                    return Ok(OpResult::Err(Errno::SIGSEGV));
                }
                Access::Sigbus => {
                    self.set_mode(Mode::System);
                    return Ok(OpResult::Err(Errno::SIGBUS));
                }
            }
            *progress += 1;
        }
        self.set_mode(Mode::System);
        Ok(OpResult::Bytes(len))
    }

    /// One access to virtual page `vpn` by the running CPU, through its TLB.
    fn access_page(&mut self, tid: TaskId, mm: u32, vpn: u64, write: bool) -> Result<Access, Wait> {
        let cpu = self.cur.cpu;
        if vpn >= crate::mm::mmap::TASK_SIZE >> PAGE_SHIFT {
            // Past the end of user space: never mapped, never in a TLB (a miss whose
            // walk finds nothing and no VMA).
            self.charge(self.costs.mem_access_ps);
            self.tlbs[cpu].misses += 1;
            self.charge(self.costs.tlb_walk_ps);
            return Ok(Access::Segv);
        }
        for _attempt in 0..4 {
            self.charge(self.costs.mem_access_ps);
            if let Some(e) = self.tlbs[cpu].lookup(mm, vpn) {
                if write && !e.write {
                    // Protection fault through a read-only translation.
                    self.tlbs[cpu].flush_one(mm, vpn);
                    if self.fault(tid, mm, vpn, true)? == FaultResult::Sigbus {
                        return Ok(Access::Sigbus);
                    }
                    continue;
                }
                if write && !e.dirty {
                    // The hardware walks the page table to set the dirty bit; the walk faults
                    // if the PTE is gone (the guarantee seed 002 relies on).
                    self.charge(self.costs.tlb_walk_ps);
                    let p = self.mm(mm).pgtable.get(vpn);
                    if p & pte::PRESENT == 0 || p & pte::WRITE == 0 || pte::pfn(p) != e.pfn {
                        self.tlbs[cpu].flush_one(mm, vpn);
                        if self.fault(tid, mm, vpn, true)? == FaultResult::Sigbus {
                            return Ok(Access::Sigbus);
                        }
                        continue;
                    }
                    if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
                        *pp |= pte::DIRTY | pte::YOUNG;
                    }
                    self.tlbs[cpu].set_dirty(mm, vpn);
                }
                self.tlbs[cpu].hits += 1;
                self.oracle_access(mm, vpn, e.pfn, e.owner, write);
                return Ok(Access::Done);
            }
            // TLB miss: the hardware page walk.
            self.tlbs[cpu].misses += 1;
            self.charge(self.costs.tlb_walk_ps);
            let p = self.mm(mm).pgtable.get(vpn);
            let ok = p & pte::PRESENT != 0 && (!write || p & pte::WRITE != 0);
            if !ok {
                let Some(vma) = self.mm(mm).find_vma(vpn << PAGE_SHIFT) else {
                    return Ok(Access::Segv);
                };
                let allowed = if write {
                    vma.flags & VM_WRITE != 0
                } else {
                    vma.flags & (crate::mm::rmap::VM_READ | VM_EXEC) != 0
                };
                if !allowed {
                    return Ok(Access::Segv);
                }
                if self.fault(tid, mm, vpn, write)? == FaultResult::Sigbus {
                    return Ok(Access::Sigbus);
                }
                continue;
            }
            let pfn = pte::pfn(p);
            let newp = p | pte::YOUNG | if write { pte::DIRTY } else { 0 };
            if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
                *pp = newp;
            }
            let page = &self.mem[pfn as usize];
            let owner = (page.mapping, page.index);
            self.tlbs[cpu].fill(TlbEntry {
                mm: mm + 1,
                vpn,
                pfn,
                write: newp & pte::WRITE != 0,
                dirty: newp & pte::DIRTY != 0,
                owner,
            });
            self.oracle_access(mm, vpn, pfn, owner, write);
            return Ok(Access::Done);
        }
        Ok(Access::Done)
    }

    /// Content oracle for an access through a translation to `pfn` that was valid for the
    /// page identity `owner` when it was cached.
    ///
    /// A read through a translation that a batched flush has not reached yet, of a page
    /// reclaim has unmapped and taken out of its mapping but not yet freed (frozen at 0
    /// references, freed only after try_to_unmap_flush), is the window batched flushing
    /// allows (v4.3, seed 002): the page still holds its data, checked against its old
    /// identity. A write cannot get there: a dirty PTE is flushed at once, and a write
    /// through a clean translation walks the page table.
    fn oracle_access(&mut self, mm: u32, vpn: u64, pfn: Pfn, owner: (u32, u64), write: bool) {
        let page = &self.mem[pfn as usize];
        if page.test(pg::BUDDY) || (page.mapping, page.index) != owner {
            let awaiting_flush =
                !page.test(pg::BUDDY) && page.mapping == NO_MAPPING && page.refcount == 0;
            if !write && awaiting_flush {
                self.oracle_check_version(mm, vpn, pfn, owner);
                return;
            }
            if self.oracle_violations.len() < 100 {
                self.oracle_violations.push(format!(
                    "{} through a stale TLB entry: mm {} vpn {:#x} -> pfn {} which is now {} ({})",
                    if write {
                        "write (lost write)"
                    } else {
                        "read (data leak)"
                    },
                    mm,
                    vpn,
                    pfn,
                    if page.test(pg::BUDDY) {
                        "free"
                    } else {
                        "reused"
                    },
                    page.flag_names()
                ));
            }
            return;
        }
        let anon = page.mapping & ANON_MAPPING != 0;
        if write {
            let v = self.new_version();
            self.mem[pfn as usize].version = v;
            if anon {
                self.mm_mut(mm).anon_expected.insert(vpn, v);
            } else {
                let (ino, index) = owner;
                self.inode_mut(ino).expected.set(index, v);
            }
        } else {
            self.oracle_check_version(mm, vpn, pfn, owner);
        }
    }

    /// Content oracle for a read of `pfn` as page `owner` of `mm` at `vpn`: it must hold
    /// the newest version written there.
    fn oracle_check_version(&mut self, mm: u32, vpn: u64, pfn: Pfn, owner: (u32, u64)) {
        let want = if owner.0 & ANON_MAPPING != 0 {
            self.mm(mm).anon_expected.get(&vpn).copied().unwrap_or(0)
        } else {
            self.inode(owner.0).expected_at(owner.1)
        };
        let got = self.mem[pfn as usize].version;
        // A file page whose newest write was lost and reported (AS_EIO), read through a
        // mapping, is a reported loss as it is through read(2).
        if got != want && owner.0 & ANON_MAPPING == 0 && self.oracle_reported_loss(owner.0, want) {
            return;
        }
        if got != want && self.oracle_violations.len() < 100 {
            self.oracle_violations.push(format!(
                "read of mm {} vpn {:#x} (pfn {}) saw version {} but the newest write is {}",
                mm, vpn, pfn, got, want
            ));
        }
    }

    /// The page-fault exception: entry cost, then handle_mm_fault.
    fn fault(&mut self, tid: TaskId, mm: u32, vpn: u64, write: bool) -> Result<FaultResult, Wait> {
        self.set_mode(Mode::System);
        let prev = self.enter(KFunc::PageFault);
        self.charge(self.costs.fault_entry_ps);
        let r = self.handle_mm_fault(tid, mm, vpn, write);
        self.leave(prev);
        self.set_mode(Mode::User);
        self.set_func(KFunc::User);
        r
    }

    /// handle_mm_fault. pgfault counts every attempt (from 6.4, `pgfault-on-completion`,
    /// only the completed one: a SIGBUS completes); the task's maj_flt / min_flt count a
    /// fault once — a fault that sleeps (VM_FAULT_RETRY) is counted on its first attempt,
    /// major if that attempt found the page missing (filemap_fault / do_swap_page count
    /// pgmajfault when they start the IO), or from 5.9 (`fault-major-if-retried`,
    /// mm_account_fault) when it completes, major if it was retried after sleeping on a
    /// page lock (VM_FAULT_RETRY; a sleep inside an allocation is not one). A fault that
    /// ends in SIGBUS counts neither (x86 __do_page_fault returns through mm_fault_error
    /// before the accounting; mm_account_fault skips VM_FAULT_ERROR). A fault that fails
    /// for want of memory (VM_FAULT_OOM, `vm_fault_oom`) counts pgfault in every era (at
    /// handle_mm_fault's entry before 6.4, in mm_account_fault's error path after) and
    /// neither maj_flt nor min_flt; the fault taken again after pagefault_out_of_memory is
    /// a new one.
    pub fn handle_mm_fault(
        &mut self,
        tid: TaskId,
        mm: u32,
        vpn: u64,
        write: bool,
    ) -> Result<FaultResult, Wait> {
        let prev = self.enter(KFunc::HandleMmFault);
        self.fault_oom = false;
        // The PTE table first. An allocation that sleeps in reclaim is the same fault
        // resumed: it does not count yet, nor is it a FAULT_FLAG_TRIED retry.
        if let Err(w) = self.__pte_alloc(mm, vpn) {
            if std::mem::take(&mut self.fault_oom) {
                self.count_oom_fault(tid);
            }
            self.leave(prev);
            return Err(w);
        }
        let retry = self.tasks[tid].fault_retry == Some(vpn);
        // An attempt resumed after a sleep inside it continues it: major if it was.
        self.fault_was_major = retry && self.tasks[tid].fault_retry_major;
        self.fault_tried = retry;
        // lru_gen_enter_fault: a VMA with recency (not MADV_SEQUENTIAL / MADV_RANDOM).
        self.lru_gen_in_fault = self.lru_gen_enabled()
            && self.mm(mm).find_vma(vpn << PAGE_SHIFT).is_some_and(|v| {
                v.flags & (crate::mm::rmap::VM_SEQ_READ | crate::mm::rmap::VM_RAND_READ) == 0
            });
        let r = self.__handle_mm_fault(mm, vpn, write);
        self.lru_gen_in_fault = false;
        if std::mem::take(&mut self.fault_oom) {
            self.count_oom_fault(tid);
            self.leave(prev);
            return r;
        }
        // (A fault that mapped its page and then sleeps in balance_dirty_pages is done.)
        let done = std::mem::take(&mut self.fault_dirty_pause);
        let completed = r.is_ok() || done;
        // An attempt that ends in VM_FAULT_RETRY: it slept on a page lock. mmsim also
        // resumes a fault from its start after a sleep inside the attempt (an allocation's
        // reclaim throttling, a wait for writeback), which the kernel counts as no attempt.
        let retry_attempt = matches!(r, Err(Wait::PageLocked(_))) && !done;
        let resumed = r.is_err() && !done;
        if completed || (retry_attempt && !self.features.pgfault_on_completion) {
            self.vmstat.inc(VmItem::Pgfault);
            self.count_memcg_events(self.current_memcg(), VmItem::Pgfault, 1);
        }
        let counted = if self.features.fault_major_if_retried {
            // mm_account_fault: on completion; major if the last attempt was
            // (VM_FAULT_MAJOR) or the fault was retried (FAULT_FLAG_TRIED).
            completed && r != Ok(FaultResult::Sigbus)
        } else {
            !retry && r != Ok(FaultResult::Sigbus)
        };
        // FAULT_FLAG_TRIED: an earlier attempt of this fault slept on a page lock.
        let tried = retry && self.tasks[tid].fault_retry_tried;
        if counted {
            if self.fault_was_major || (tried && self.features.fault_major_if_retried) {
                self.tasks[tid].stats.majflt += 1;
            } else {
                self.tasks[tid].stats.minflt += 1;
            }
        }
        let t = &mut self.tasks[tid];
        t.fault_retry = resumed.then_some(vpn);
        t.fault_retry_tried = resumed && (retry_attempt || tried);
        t.fault_retry_major = resumed && !retry_attempt && self.fault_was_major;
        self.leave(prev);
        r
    }

    fn __handle_mm_fault(&mut self, mm: u32, vpn: u64, write: bool) -> Result<FaultResult, Wait> {
        let vma = self
            .mm(mm)
            .find_vma(vpn << PAGE_SHIFT)
            .cloned()
            .expect("fault in a VMA");
        let p = self.mm(mm).pgtable.get(vpn);
        if p & pte::PRESENT != 0 {
            // Write to a present read-only PTE: do_wp_page.
            self.do_wp_page(mm, &vma, vpn, p)?;
        } else if p & pte::SWAP != 0 {
            if self.do_swap_page(mm, &vma, vpn, p, write)? == FaultResult::Sigbus {
                return Ok(FaultResult::Sigbus);
            }
        } else if let Some(ino) = vma.file {
            return self.do_file_fault(mm, &vma, ino, vpn, write);
        } else {
            self.do_anonymous_page(mm, &vma, vpn, write)?;
        }
        Ok(FaultResult::Handled)
    }

    /// A fault that ended in VM_FAULT_OOM: pgfault counts it (a failed fault, in every
    /// era), the task's maj_flt / min_flt do not (VM_FAULT_ERROR), and the fault the task
    /// takes again is a new one (no FAULT_FLAG_TRIED, counted on its own).
    fn count_oom_fault(&mut self, tid: TaskId) {
        self.vmstat.inc(VmItem::Pgfault);
        self.count_memcg_events(self.current_memcg(), VmItem::Pgfault, 1);
        let t = &mut self.tasks[tid];
        t.fault_retry = None;
        t.fault_retry_tried = false;
        t.fault_retry_major = false;
    }

    /// VM_FAULT_OOM: the allocation failed after the OOM killer ran (the fault ends with an
    /// error, `fault_oom`; handle_mm_fault counts it). A task it killed leaves at once
    /// (pagefault_out_of_memory returns on its fatal signal and the return to user space
    /// exits); any other takes the fault again after a short back-off.
    pub(crate) fn vm_fault_oom(&mut self) -> Wait {
        self.fault_oom = true;
        if self.cur.task.is_some_and(|t| self.tasks[t].oom_killed) {
            Wait::Until(self.now())
        } else {
            Wait::Until(self.now() + crate::mm::vmscan::CONGESTION_WAIT_PS)
        }
    }

    fn alloc_user_page(&mut self) -> Result<Pfn, Wait> {
        let memcg = self.current_memcg();
        match self.alloc_page_charged(Gfp::KERNEL, memcg) {
            Ok(p) => Ok(p),
            Err(AllocError::Wait(w)) => Err(w),
            Err(AllocError::NoMem) => Err(self.vm_fault_oom()),
        }
    }

    /// Map a new anonymous page (page_add_new_anon_rmap, lru_cache_add_active_or_unevictable;
    /// in a VM_LOCKED VMA, `locked`, it is mlocked instead: folio_add_lru_vma's
    /// mlock_new_folio).
    fn map_new_anon_page(
        &mut self,
        mm: u32,
        vpn: u64,
        pfn: Pfn,
        (writable, dirty): (bool, bool),
        locked: bool,
    ) {
        {
            let p = &mut self.mem[pfn as usize];
            p.mapping = ANON_MAPPING | mm;
            p.index = vpn;
            p.mapcount = 0;
            p.flags |= pg::SWAPBACKED; // __SetPageSwapBacked: not visible yet
        }
        self.vmstat.inc(VmItem::NrAnonPages);
        self.mm_mut(mm).rss_anon += 1;
        if locked {
            self.mlock_new_page(pfn);
        } else {
            // v5.9 (anon-inactive-first): lru_cache_add_inactive_or_unevictable.
            if !self.features.anon_inactive_first {
                self.__SetPageActive(pfn);
            }
            self.lru_cache_add(pfn);
        }
        self.set_pte(mm, vpn, pte::mk(pfn, writable, dirty));
        // The new page's content: zeros (version 0) unless copied.
        let v = self.mem[pfn as usize].version;
        if v == 0 {
            self.mm_mut(mm).anon_expected.remove(&vpn);
        } else {
            self.mm_mut(mm).anon_expected.insert(vpn, v);
        }
    }

    /// do_anonymous_page: a zeroed page.
    fn do_anonymous_page(
        &mut self,
        mm: u32,
        vma: &crate::mm::mmap::Vma,
        vpn: u64,
        write: bool,
    ) -> Result<(), Wait> {
        let prev = self.enter(KFunc::DoAnonymousPage);
        let r = self.alloc_user_page();
        let pfn = match r {
            Ok(p) => p,
            Err(w) => {
                self.leave(prev);
                return Err(w);
            }
        };
        self.charge_bulk_store(self.costs.page_zero_ps, PAGE_SIZE);
        self.mem[pfn as usize].version = 0;
        self.__SetPageUptodate(pfn);
        let locked = vma.flags & VM_LOCKED != 0;
        self.map_new_anon_page(mm, vpn, pfn, (vma.flags & VM_WRITE != 0, write), locked);
        self.leave(prev);
        Ok(())
    }

    /// A fault on a file VMA: filemap_fault, then map the page (read / shared write) or copy
    /// it (private write). A page at or beyond the end of the file is SIGBUS (filemap_fault's
    /// VM_FAULT_SIGBUS): nothing is mapped. A read fault with `fault-around` (v3.15,
    /// do_read_fault) first tries ->map_pages over the window around the address; only if
    /// that did not map the page itself does it call filemap_fault, and then it maps just
    /// that page.
    fn do_file_fault(
        &mut self,
        mm: u32,
        vma: &crate::mm::mmap::Vma,
        ino: u32,
        vpn: u64,
        write: bool,
    ) -> Result<FaultResult, Wait> {
        let index = vma.pgoff_of(vpn << PAGE_SHIFT);
        if !write && self.features.fault_around && self.do_fault_around(mm, vma, ino, vpn) {
            // VM_FAULT_NOPAGE: a minor fault, served without ->fault.
            return Ok(FaultResult::Handled);
        }
        // A read fault maps the page of a large folio without splitting it (finish_fault
        // maps that one page); so does a write through a shared mapping from 6.18
        // (`map-entire-folio`: page_mkwrite dirties the folio whole, finish_fault maps it
        // writable). Before, a write wanted an order-0 page; a VM_LOCKED mapping does.
        let shared_write = write && vma.flags & VM_SHARED != 0;
        let large = (!write || (shared_write && self.features.map_entire_folio))
            && vma.flags & VM_LOCKED == 0;
        let Some((pfn, _major)) = self.filemap_fault(mm, vma.start, ino, index, large)? else {
            return Ok(FaultResult::Sigbus);
        };
        // pfn is locked (its folio is) and referenced.
        if write && vma.flags & VM_SHARED == 0 {
            // do_cow_fault: copy into a new anonymous page.
            let newp = match self.alloc_user_page() {
                Ok(p) => p,
                Err(w) => {
                    self.unlock_page(pfn);
                    self.put_page(pfn);
                    return Err(w);
                }
            };
            self.charge_bulk_store(self.costs.page_copy_ps, PAGE_SIZE);
            self.mem[newp as usize].version = self.mem[pfn as usize].version;
            self.__SetPageUptodate(newp);
            self.mark_vma_anon(mm, vpn);
            self.unlock_page(pfn);
            self.put_page(pfn);
            let locked = vma.flags & VM_LOCKED != 0;
            self.map_new_anon_page(mm, vpn, newp, (true, true), locked);
            return Ok(FaultResult::Handled);
        }
        let writable = write && vma.flags & VM_SHARED != 0 && vma.flags & VM_WRITE != 0;
        let head = self.folio_head(pfn);
        let in_large_folio = self.mem[head as usize].flags & pg::HEAD != 0;
        if writable && in_large_folio {
            // do_shared_fault's do_page_mkwrite of a large folio.
            if let Err(w) = self.folio_page_mkwrite(head) {
                self.unlock_page(head);
                self.put_page(pfn);
                return Err(w);
            }
        }
        let whole = if in_large_folio {
            let size_pages = self.inode(ino).size.div_ceil(PAGE_SIZE);
            self.whole_folio_vpn(vma, head, vpn, index, size_pages)
        } else {
            None
        };
        match whole {
            // finish_fault (v6.18): the folio's every page, if none of its PTEs is set; the
            // fault's reference is the faulting page's PTE's, each other page takes one. A
            // write fault maps them all writable and dirty (set_pte_range).
            Some(first) if self.pte_range_none(mm, first, self.folio_nr_pages(head)) => {
                self.map_folio_pages(mm, first, head, vma.flags, Some(pfn), writable);
            }
            _ => self.map_file_page(mm, vpn, pfn, (writable, writable), vma.flags),
        }
        if writable {
            self.folio_mark_dirty(pfn);
        }
        self.unlock_page(head);
        if writable {
            self.fault_dirty_shared_page(ino)?;
        }
        Ok(FaultResult::Handled)
    }

    /// fault_dirty_shared_page's throttling: a write fault that dirtied a page of a shared
    /// file mapping ends in balance_dirty_pages_ratelimited, as a write(2) does; a pause
    /// is a sleep after the page is mapped (the access then finds the PTE and goes on; the
    /// fault is not retried).
    fn fault_dirty_shared_page(&mut self, ino: u32) -> Result<(), Wait> {
        if let Some(pause) = self.balance_dirty_pages_ratelimited(ino) {
            self.psi_sleep_kind(crate::psi::flags::IOWAIT);
            self.fault_dirty_pause = true;
            return Err(Wait::Until(self.now() + pause));
        }
        Ok(())
    }

    /// Map a page-cache page (page_add_file_rmap); the caller's reference becomes the PTE's.
    /// In a VM_LOCKED VMA (`vm_flags`) the page is mlocked (v5.18's mlock_vma_folio in
    /// folio_add_file_rmap; before, populate's follow_page(FOLL_MLOCK) did it).
    fn map_file_page(
        &mut self,
        mm: u32,
        vpn: u64,
        pfn: Pfn,
        (writable, dirty): (bool, bool),
        vm_flags: u64,
    ) {
        self.page_add_file_rmap(pfn);
        if vm_flags & VM_LOCKED != 0 {
            self.mlock_vma_page(pfn);
        }
        self.mm_mut(mm).rss_file += 1;
        self.set_pte(mm, vpn, pte::mk(pfn, writable, dirty));
    }

    /// do_fault_around / filemap_map_pages: map the pages of the window of
    /// fault_around_bytes (64 KiB, 16 pages) from the faulting address rounded down to 16
    /// pages (or the VMA's start), within the VMA and the faulting PTE table, that are cached,
    /// uptodate, unlocked and not readahead markers, read-only and young, the faulting page
    /// included. Every page mapped counts as a hit for the mmap read-around heuristic
    /// (mmap_miss decremented, not below 0), except, from v6.10 (`mmap-miss-workingset`),
    /// a page with PG_workingset (refaulted: the file is thrashing). Returns whether the
    /// faulting page was mapped (VM_FAULT_NOPAGE).
    fn do_fault_around(&mut self, mm: u32, vma: &crate::mm::mmap::Vma, ino: u32, vpn: u64) -> bool {
        let nr = 16u64;
        let start = (vpn & !(nr - 1)).max(vma.start >> PAGE_SHIFT);
        // Clamped to the VMA and to the faulting PTE table (the kernel's min3 with
        // PTRS_PER_PTE): a window never crosses into the next PMD.
        let pmd_end = (vpn / PTRS_PER_PTE + 1) * PTRS_PER_PTE;
        let end = (start + nr).min(vma.end >> PAGE_SHIFT).min(pmd_end);
        let size_pages = self.inode(ino).size.div_ceil(PAGE_SIZE);
        let mut hits = 0u32;
        let mut mapped_fault = false;
        let mut v = start;
        while v < end {
            if self.mm(mm).pgtable.get(v) != 0 {
                v += 1;
                continue;
            }
            let index = vma.pgoff_of(v << PAGE_SHIFT);
            if index >= size_pages {
                break;
            }
            self.charge(self.costs.radix_level_ps);
            let crate::mm::radix_tree::Entry::Page(p) = self.inode(ino).mapping.tree.lookup(index)
            else {
                v += 1;
                continue;
            };
            // A large folio's pages are mapped where they are (filemap_map_folio_range),
            // its head's flags deciding for all; a VM_LOCKED mapping gets order-0 pages.
            if vma.flags & VM_LOCKED != 0 {
                self.split_if_large(p);
            }
            let head = self.folio_head(p);
            let pg_ = &self.mem[head as usize];
            if !pg_.test(pg::UPTODATE) || pg_.test(pg::LOCKED) || pg_.test(pg::READAHEAD) {
                v += 1;
                continue;
            }
            let counts = !(self.features.mmap_miss_workingset && pg_.test(pg::WORKINGSET));
            // v6.18 (`map-entire-folio`): the whole folio, not just the window's part,
            // within the file's last page (file_end = DIV_ROUND_UP(i_size) − 1).
            let whole = if pg_.flags & pg::HEAD != 0 {
                self.whole_folio_vpn(vma, head, v, index, size_pages - 1)
            } else {
                None
            };
            if let Some(first) = whole {
                let mapped = self.map_folio_pages(mm, first, head, vma.flags, None, false);
                hits += mapped * u32::from(counts);
                let nr = self.folio_nr_pages(head);
                mapped_fault |= (first..first + nr).contains(&vpn);
                v = first + nr;
                continue;
            }
            hits += u32::from(counts);
            self.get_page(p);
            self.map_file_page(mm, v, p, (false, false), vma.flags);
            mapped_fault |= v == vpn;
            v += 1;
        }
        if hits > 0 {
            let v = self.mm_mut(mm).vmas.get_mut(&vma.start).expect("vma");
            v.mmap_miss = v.mmap_miss.saturating_sub(hits);
        }
        mapped_fault
    }

    /// set_pte_range over a large folio mapped whole from virtual page `first`: each page
    /// whose PTE is not set gets a young one (read-only, or writable and dirty for a
    /// `write` fault of a shared mapping) and a reference of the folio, except `held`,
    /// whose reference the caller took. Returns the pages mapped.
    fn map_folio_pages(
        &mut self,
        mm: u32,
        first: u64,
        head: Pfn,
        vm_flags: u64,
        held: Option<Pfn>,
        write: bool,
    ) -> u32 {
        let frames = self.folio_frames(head);
        let mut mapped = 0;
        for (k, &f) in frames.iter().enumerate() {
            let v = first + k as u64;
            if self.mm(mm).pgtable.get(v) != 0 {
                continue;
            }
            if held != Some(f) {
                self.get_page(f);
            }
            self.map_file_page(mm, v, f, (write, write), vm_flags);
            mapped += 1;
        }
        self.give_pfn_buf(frames);
        mapped
    }

    /// ext4_page_mkwrite of a large folio (block_page_mkwrite, 6.18): the folio gets a
    /// buffer head per block (folio_create_buffers: the charge may sleep, and the fault
    /// is retried) and every block within the file is marked dirty (block_commit_write
    /// over the folio up to i_size): its writeback writes the folio whole.
    fn folio_page_mkwrite(&mut self, head: Pfn) -> Result<(), Wait> {
        let ino = self.mem[head as usize].mapping;
        if self.inode(ino).mapping.swapbacked {
            return Ok(());
        }
        self.folio_create_buffers(head)?;
        let first = self.mem[head as usize].index;
        let end = self
            .inode(ino)
            .size
            .div_ceil(PAGE_SIZE)
            .min(first + self.folio_nr_pages(head));
        if end > first {
            self.folio_mark_blocks_dirty(head, 0, end - first - 1);
        }
        Ok(())
    }

    /// pte_range_none: no PTE is set in `[first, first + nr)` of `mm`.
    fn pte_range_none(&self, mm: u32, first: u64, nr: u64) -> bool {
        let pt = &self.mm(mm).pgtable;
        (first..first + nr).all(|v| pt.get(v) == 0)
    }

    /// The first virtual page of the large folio `head` when a fault may map it whole
    /// (`map-entire-folio`): `v` maps its page at `index`, and the folio lies within the
    /// VMA, within one page table (it does not cross a PMD) and below `file_end`
    /// (folio_next_index ≤ file_end). None for an order-0 page or without the rule.
    fn whole_folio_vpn(
        &self,
        vma: &crate::mm::mmap::Vma,
        head: Pfn,
        v: u64,
        index: u64,
        file_end: u64,
    ) -> Option<u64> {
        if !self.features.map_entire_folio || self.mem[head as usize].flags & pg::HEAD == 0 {
            return None;
        }
        let (hidx, nr) = (self.mem[head as usize].index, self.folio_nr_pages(head));
        let first = v.checked_sub(index - hidx)?;
        let within_vma = hidx >= vma.pgoff
            && first >= vma.start >> PAGE_SHIFT
            && first + nr <= vma.end >> PAGE_SHIFT;
        let one_table = first / PTRS_PER_PTE == (first + nr - 1) / PTRS_PER_PTE;
        (within_vma && one_table && file_end >= hidx + nr).then_some(first)
    }

    /// filemap_fault: find the page (readahead on a miss), lock it, make sure it is uptodate.
    /// Returns the locked page with a reference, and whether the fault was major; `None` is
    /// VM_FAULT_SIGBUS: `index` is at or beyond the end of the file, checked on entry and
    /// again once the page is locked (a truncate may have shrunk the file meanwhile).
    /// With `large` the page may be part of a large folio (`mm::folio`): the folio is
    /// locked and holds the reference (filemap_get_folio, folio_file_page); without, a
    /// large folio found is split first.
    pub fn filemap_fault(
        &mut self,
        mm: u32,
        vma_start: u64,
        ino: u32,
        index: u64,
        large: bool,
    ) -> Result<Option<(Pfn, bool)>, Wait> {
        let prev = self.enter(KFunc::FilemapFault);
        let r = self.__filemap_fault(mm, vma_start, ino, index, large);
        self.leave(prev);
        r
    }

    fn __filemap_fault(
        &mut self,
        mm: u32,
        vma_start: u64,
        ino: u32,
        index: u64,
        large: bool,
    ) -> Result<Option<(Pfn, bool)>, Wait> {
        if index >= self.inode(ino).size.div_ceil(PAGE_SIZE) {
            return Ok(None); // VM_FAULT_SIGBUS
        }
        if self.inode(ino).mapping.swapbacked {
            return self.shmem_fault(ino, index);
        }
        let mut major = false;
        let lookup = |s: &mut Self| {
            if large {
                s.find_get_folio_page(ino, index)
            } else {
                s.find_get_page(ino, index)
            }
        };
        let (vflags, mut ra, mut miss) = {
            let v = &self.mm(mm).vmas[&vma_start];
            (v.flags, v.ra, v.mmap_miss)
        };
        if ra.resume.is_some() {
            if self.fault_tried {
                // This fault's readahead slept in a charge (the kernel's task sleeps
                // inside the allocation and carries on): the window goes on first.
                if let Err(w) = self.ra_resume(ino, &mut ra) {
                    self.set_fault_ra(mm, vma_start, ra, miss);
                    return Err(w);
                }
            } else {
                ra.resume = None; // left by a fault that did not come back
            }
        }
        let mut page = lookup(self);
        if let Some(p) = page {
            // filemap_get_folio → __filemap_get_folio: the page is wanted, not dropped.
            self.clear_dropbehind_unless_uncached(self.folio_head(p));
        }
        match page {
            // do_async_mmap_readahead, not on the retry of a fault that slept
            // (FAULT_FLAG_TRIED; 2.6.30's did_readaround: the miss that read the page
            // around is not also a hit), nor on an MADV_RANDOM mapping.
            // Before v3.0 (`mmap-readaround-marker` off, 2.6.30) only an MADV_SEQUENTIAL
            // mapping acts on a PG_readahead page, asking for one page.
            Some(p) if !self.fault_tried && vflags & crate::mm::rmap::VM_RAND_READ == 0 => {
                let marker_rule = self.features.mmap_readaround_marker;
                let head = self.folio_head(p);
                miss = miss.saturating_sub(1);
                if self.PageReadahead(head)
                    && (marker_rule || vflags & crate::mm::rmap::VM_SEQ_READ != 0)
                {
                    let req = if marker_rule { ra.ra_pages } else { 1 };
                    if let Err(w) = self.page_cache_async_readahead(
                        ino,
                        &mut ra,
                        head,
                        index,
                        req,
                        RaSleep::Fault,
                    ) {
                        // Its charge sleeps: the fault is resumed after (the page looked
                        // up again then; the kernel holds it meanwhile).
                        self.put_page(head);
                        self.set_fault_ra(mm, vma_start, ra, miss);
                        return Err(w);
                    }
                }
            }
            Some(_) => {}
            None if self.fault_was_major => {
                // The fault resumed after its readahead slept (its window went on above):
                // the miss was counted and read around by the attempt that slept.
                major = true;
                page = lookup(self);
            }
            None => {
                // VM_FAULT_MAJOR: counted where the miss is found, before the readahead.
                major = true;
                self.vmstat.inc(VmItem::Pgmajfault);
                self.count_memcg_events(self.current_memcg(), VmItem::Pgmajfault, 1);
                self.fault_was_major = true;
                // do_sync_mmap_readahead (nothing when the file's ra_pages is 0); a charge
                // of its that sleeps sleeps the fault, resumed with the window after.
                let rap = ra.ra_pages;
                let marker_rule = self.features.mmap_readaround_marker;
                let mut slept = Ok(());
                if rap == 0 {
                } else if vflags & crate::mm::rmap::VM_SEQ_READ != 0 {
                    let req = if marker_rule { rap } else { 1 };
                    slept =
                        self.page_cache_sync_readahead(ino, &mut ra, index, req, RaSleep::Fault);
                } else if vflags & crate::mm::rmap::VM_RAND_READ == 0 {
                    miss = (miss + 1).min(1000);
                    if miss <= 100 {
                        // The read-around window, centred on the fault; from v3.0 its
                        // last quarter is the async part, its first page marked. Read in
                        // order-0 folios, it resets the file's folio order (v6.17's
                        // `ra->order = 0`; `large-folios`): the next async readahead of
                        // a stream in the same file starts the ramp again.
                        ra.start = index.saturating_sub(rap / 2);
                        ra.size = rap;
                        ra.async_size = if marker_rule { rap / 4 } else { 0 };
                        ra.order = 0;
                        let (start, size, async_size) = (ra.start, ra.size, ra.async_size);
                        slept = self
                            .do_page_cache_ra(ino, &mut ra, start, size, async_size, RaSleep::Fault)
                            .map(|_| ());
                    }
                }
                if let Err(w) = slept {
                    self.set_fault_ra(mm, vma_start, ra, miss);
                    return Err(w);
                }
                page = lookup(self);
            }
        }
        self.set_fault_ra(mm, vma_start, ra, miss);
        let pfn = match page {
            Some(p) => p,
            None => {
                // no_cached_page: allocate and read it ourselves.
                let p = self.fault_page_cache_alloc(ino, index)?;
                self.count_cache_misses(1);
                self.readpage_locked(ino, p);
                p
            }
        };
        // The folio's lock and reference (the page's own for an order-0 page). No step
        // runs before the page is mapped: the folio cannot be split meanwhile.
        let head = self.folio_head(pfn);
        if !self.trylock_page(head) {
            self.put_page(head);
            return Err(Wait::PageLocked(head)); // lock_page_or_retry
        }
        if self.mem[pfn as usize].mapping != ino {
            // Truncated meanwhile: retry.
            self.unlock_page(head);
            self.put_page(head);
            return Err(Wait::Until(self.now()));
        }
        if !self.PageUptodate(head) {
            self.readpage_locked(ino, head); // page_not_uptodate: read again (SIGBUS not modelled)
            self.put_page(head);
            return Err(Wait::PageLocked(head));
        }
        // Recheck i_size under the page lock: a truncate may have shrunk the file.
        if index >= self.inode(ino).size.div_ceil(PAGE_SIZE) {
            self.unlock_page(head);
            self.put_page(head);
            return Ok(None); // VM_FAULT_SIGBUS
        }
        Ok(Some((pfn, major)))
    }

    /// Store a fault's readahead state and mmap_miss back in its VMA (`file->f_ra`).
    fn set_fault_ra(
        &mut self,
        mm: u32,
        vma_start: u64,
        ra: crate::mm::readahead::RaState,
        miss: u32,
    ) {
        let v = self.mm_mut(mm).vmas.get_mut(&vma_start).expect("vma");
        v.ra = ra;
        v.mmap_miss = miss;
    }

    /// A fault's new page-cache page for `ino` at `index`, charged to the faulting task's
    /// memcg and added to the cache locked (to be read, or zeroed). A failed allocation
    /// retries the fault after a congestion wait; a page someone else added meanwhile
    /// retries it at once.
    fn fault_page_cache_alloc(&mut self, ino: u32, index: u64) -> Result<Pfn, Wait> {
        let memcg = self.current_memcg();
        let p = match self.alloc_page_charged(Gfp::KERNEL, memcg) {
            Ok(p) => p,
            Err(AllocError::Wait(w)) => return Err(w),
            Err(AllocError::NoMem) => return Err(self.vm_fault_oom()),
        };
        if self.add_to_page_cache_lru(p, ino, index).is_err() {
            self.put_page(p);
            return Err(Wait::Until(self.now()));
        }
        Ok(p)
    }

    /// shmem_fault → shmem_get_folio_gfp(SGP_CACHE), for a tmpfs file: a swapped-out page
    /// is swapped in (a major fault when it is read from the device), a hole gets a new
    /// zeroed page (a minor fault); tmpfs has no read-around. Returns the page locked with a
    /// reference, as filemap_fault; `None` is VM_FAULT_SIGBUS (beyond the end of the file,
    /// or a swap read that failed).
    fn shmem_fault(&mut self, ino: u32, index: u64) -> Result<Option<(Pfn, bool)>, Wait> {
        if let Some(off) = self.shmem_swap_entry(ino, index) {
            if !self.shmem_swapin(ino, index, off, true)? {
                return Ok(None);
            }
        }
        let pfn = match self.find_get_page(ino, index) {
            Some(p) => p,
            None if !self.shmem_may_acct_block(ino) => {
                return Ok(None); // the tmpfs is full: -ENOSPC, VM_FAULT_SIGBUS
            }
            None => {
                let p = self.fault_page_cache_alloc(ino, index)?;
                self.readpage_locked(ino, p); // no device: zero-filled, unlocked
                p
            }
        };
        if !self.trylock_page(pfn) {
            self.put_page(pfn);
            return Err(Wait::PageLocked(pfn));
        }
        if self.mem[pfn as usize].mapping != ino {
            // Truncated (or swapped out) meanwhile: retry.
            self.unlock_page(pfn);
            self.put_page(pfn);
            return Err(Wait::Until(self.now()));
        }
        if index >= self.inode(ino).size.div_ceil(PAGE_SIZE) {
            self.unlock_page(pfn);
            self.put_page(pfn);
            return Ok(None); // VM_FAULT_SIGBUS
        }
        Ok(Some((pfn, self.fault_was_major)))
    }

    /// do_wp_page: a write to a present read-only PTE. Anonymous pages mapped once are
    /// reused (made writable); file pages of a private mapping are copied (COW); file pages
    /// of a shared writable mapping are made writable and dirtied (page_mkwrite).
    fn do_wp_page(
        &mut self,
        mm: u32,
        vma: &crate::mm::mmap::Vma,
        vpn: u64,
        p: u64,
    ) -> Result<(), Wait> {
        let pfn = pte::pfn(p);
        let anon = self.mem[pfn as usize].mapping & ANON_MAPPING != 0;
        if vma.flags & VM_WRITE == 0 {
            return Ok(()); // the access check already refused; nothing to do
        }
        if anon && !self.anon_page_exclusive(pfn) {
            // Shared with a forked relative (or its swap slot still is): copy.
            return self.wp_page_copy(mm, vma, vpn, p);
        }
        if anon || vma.flags & VM_SHARED != 0 {
            // A page-cache page made writable and dirty is an order-0 page (`mm::folio`),
            // but from 6.18 (`map-entire-folio`) a large folio stays one: page_mkwrite
            // dirties it whole and wp_page_reuse makes this PTE writable.
            let mut held = None;
            if !anon {
                let head = self.folio_head(pfn);
                if self.mem[head as usize].flags & pg::HEAD != 0 && self.features.map_entire_folio {
                    // wp_page_shared holds a reference (folio_get) and block_page_mkwrite
                    // the folio lock (folio_lock sleeps on a locked one), so the reclaim
                    // its buffer heads' allocation may do cannot take the folio.
                    if !self.trylock_page(head) {
                        return Err(Wait::PageLocked(head));
                    }
                    self.get_page(head);
                    let r = self.folio_page_mkwrite(head);
                    // finish_mkwrite_fault: a PTE that changed meanwhile retries the fault.
                    if r.is_err() || self.mm(mm).pgtable.get(vpn) != p {
                        self.unlock_page(head);
                        self.put_page(head);
                        return r;
                    }
                    held = Some(head);
                } else {
                    self.split_if_large(pfn);
                }
            }
            if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
                *pp |= pte::WRITE | pte::DIRTY | pte::YOUNG;
            }
            if !anon {
                self.folio_mark_dirty(pfn);
            }
            self.flush_tlb_page(mm, vpn);
            if !anon {
                // fault_dirty_shared_page: the folio is unlocked and put before the
                // dirty throttle.
                if let Some(head) = held {
                    self.unlock_page(head);
                    self.put_page(head);
                }
                let ino = self.mem[pfn as usize].mapping;
                self.fault_dirty_shared_page(ino)?;
            }
            return Ok(());
        }
        // COW of a file page in a private mapping.
        self.wp_page_copy(mm, vma, vpn, p)
    }

    /// Whether a write may reuse anonymous page `pfn` in place (do_wp_page's reuse test,
    /// wp_can_reuse_anon_folio / reuse_swap_page): this PTE is its only mapping and no
    /// swap PTE of a forked relative holds its swap slot.
    fn anon_page_exclusive(&self, pfn: Pfn) -> bool {
        let p = &self.mem[pfn as usize];
        p.mapcount == 0
            && !(p.test(pg::SWAPCACHE)
                && self
                    .swap
                    .as_ref()
                    .is_some_and(|s| s.swap_map[p.private as usize] > 0))
    }

    /// wp_page_copy: the faulting mm gets a private copy of the page its PTE `orig` maps
    /// (a file page of a private mapping, or an anonymous page it shares with a forked
    /// relative), mapped writable and dirty in place of the old PTE (ptep_clear_flush);
    /// the old page loses this mapping and reference. The allocation may reclaim: if the
    /// PTE changed meanwhile (reclaim unmapped the page), the copy is dropped and the
    /// fault retried (wp_page_copy's pte_same test).
    fn wp_page_copy(
        &mut self,
        mm: u32,
        vma: &crate::mm::mmap::Vma,
        vpn: u64,
        orig: u64,
    ) -> Result<(), Wait> {
        let pfn = pte::pfn(orig);
        let newp = self.alloc_user_page()?;
        if self.mm(mm).pgtable.get(vpn) != orig {
            self.put_page(newp);
            return Ok(());
        }
        self.charge_bulk_store(self.costs.page_copy_ps, PAGE_SIZE);
        self.mem[newp as usize].version = self.mem[pfn as usize].version;
        self.__SetPageUptodate(newp);
        self.mark_vma_anon(mm, vpn);
        let anon = self.mem[pfn as usize].mapping & ANON_MAPPING != 0;
        // Unmap the old page.
        if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(vpn) {
            *pp = 0;
        }
        self.flush_tlb_page(mm, vpn);
        self.page_remove_rmap(pfn);
        let locked = vma.flags & VM_LOCKED != 0;
        if locked {
            // folio_remove_rmap_pte's munlock_vma_folio (v5.18); wp_page_copy's
            // munlock_vma_page before.
            self.munlock_page(pfn);
        }
        if anon {
            self.mm_mut(mm).rss_anon -= 1;
        } else {
            self.mm_mut(mm).rss_file -= 1;
        }
        self.put_page(pfn);
        self.map_new_anon_page(mm, vpn, newp, (true, true), locked);
        Ok(())
    }

    /// anon_vma_prepare: the VMA at `vpn` has had an anonymous page (fork copies it).
    fn mark_vma_anon(&mut self, mm: u32, vpn: u64) {
        if let Some(v) = self.mm_mut(mm).find_vma_mut(vpn << PAGE_SHIFT) {
            v.anon_vma = true;
        }
    }

    /// zap_page_range: clear every PTE of a VMA, dropping the pages' mappings (dirty PTEs
    /// dirty their pages) and swap entries. The caller flushes the TLB range; the pages'
    /// PTE references are dropped as the PTEs are cleared (munmap and exit, where only the
    /// unmapping task can use the translations).
    pub fn zap_page_range(&mut self, mm: u32, vma: &crate::mm::mmap::Vma) {
        let mut tlb = MmuGather::default();
        self.zap_pte_range(
            mm,
            vma.start >> PAGE_SHIFT,
            vma.end >> PAGE_SHIFT,
            None,
            &mut tlb,
        );
    }

    /// zap_page_range_single (unmap_mapping_range's per-VMA step): clear the PTEs of
    /// `[start_vpn, end_vpn)` that `details` selects, then tlb_finish_mmu — flush the cleared
    /// range from every CPU that may cache it, and only then drop the pages' PTE references
    /// (a COW'd anonymous page is freed here, after no TLB can reach it any more).
    pub fn zap_page_range_single(
        &mut self,
        mm: u32,
        start_vpn: u64,
        end_vpn: u64,
        details: ZapDetails,
    ) {
        let mut tlb = MmuGather {
            defer_free: true,
            ..MmuGather::default()
        };
        self.zap_pte_range(mm, start_vpn, end_vpn, Some(details), &mut tlb);
        self.tlb_finish_mmu(mm, tlb);
    }

    /// zap_pte_range over `[start_vpn, end_vpn)` of `mm`: present PTEs are cleared (a dirty
    /// file PTE dirties its page, rss and mapcount drop, the cleared range is recorded in
    /// `tlb`), swap entries are freed. With `details.check_mapping` only pages of that inode
    /// are zapped: COW'd anonymous pages and swap entries stay (v4.14 leaves swap entries
    /// whenever details are given; we zap them with `even_cows`, as v5.17 does, so that
    /// nothing of a private mapping survives beyond a truncated file's end). The page
    /// references are dropped now, or after the flush when `tlb.defer_free`.
    fn zap_pte_range(
        &mut self,
        mm: u32,
        start: u64,
        end: u64,
        details: Option<ZapDetails>,
        tlb: &mut MmuGather,
    ) {
        let prev = self.enter(KFunc::ZapPteRange);
        self.flush_tlb_batched_pending(mm);
        let check_mapping = details.and_then(|d| d.check_mapping);
        // v5.18: removing a VM_LOCKED VMA's PTE munlocks its page (folio_remove_rmap_ptes'
        // munlock_vma_folio). Before, munmap and exit munlocked the VMA first
        // (munlock_vma_pages_range) and the last unmap cleared what was left.
        let vm_flags = self
            .mm(mm)
            .find_vma(start << PAGE_SHIFT)
            .map_or(0, |v| v.flags);
        let locked = self.features.mlock_count && vm_flags & VM_LOCKED != 0;
        // A young PTE of a file page passes its reference on to the page
        // (mark_page_accessed), unless the mapping was advised MADV_SEQUENTIAL — from
        // v6.3 (`vma-has-recency`) unless it has no recency (MADV_SEQUENTIAL or
        // MADV_RANDOM).
        let recency = self.vma_has_recency(vm_flags);
        // zap_present_ptes batches the PTEs of one large folio (folio_pte_batch): a young
        // one among them marks the folio accessed once. (folio head, last vpn, marked)
        let mut batch = (crate::mm::page::NIL, 0u64, false);
        let mut vpn = start;
        while vpn < end {
            // Skip page-table pages that do not exist.
            let tbl_end = ((vpn / PTRS_PER_PTE) + 1) * PTRS_PER_PTE;
            if !self.mm(mm).pgtable.has_table(vpn / PTRS_PER_PTE) {
                vpn = tbl_end;
                continue;
            }
            let stop = tbl_end.min(end);
            for v in vpn..stop {
                let p = self.mm(mm).pgtable.get(v);
                if p == 0 {
                    continue;
                }
                self.charge(self.costs.mem_access_ps);
                if p & pte::PRESENT != 0 {
                    let pfn = pte::pfn(p);
                    let anon = self.mem[pfn as usize].mapping & ANON_MAPPING != 0;
                    if check_mapping.is_some_and(|ino| self.mem[pfn as usize].mapping != ino) {
                        continue; // a private COW copy: kept (unmap_shared_mapping_pages)
                    }
                    if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(v) {
                        *pp = 0;
                    }
                    // tlb_remove_tlb_entry: the flush range grows to this page.
                    if tlb.end == 0 {
                        tlb.start = v;
                    }
                    tlb.start = tlb.start.min(v);
                    tlb.end = tlb.end.max(v + 1);
                    if p & pte::DIRTY != 0 && !anon {
                        self.folio_mark_dirty(pfn);
                    }
                    let head = self.folio_head(pfn);
                    let large = head != pfn || self.mem[pfn as usize].flags & pg::HEAD != 0;
                    if large {
                        if batch.0 != head || batch.1 + 1 != v {
                            batch = (head, v, false);
                        }
                        batch.1 = v;
                    }
                    if p & pte::YOUNG != 0 && !anon && recency && !(large && batch.2) {
                        batch.2 |= large;
                        self.mark_page_accessed(pfn);
                    }
                    if anon {
                        self.mm_mut(mm).rss_anon -= 1;
                        self.mm_mut(mm).anon_expected.remove(&v);
                    } else {
                        self.mm_mut(mm).rss_file -= 1;
                    }
                    self.page_remove_rmap(pfn);
                    if locked {
                        self.munlock_page(pfn);
                    }
                    if tlb.defer_free {
                        // __tlb_remove_page; the reference is the folio's, and stays the
                        // head's if the folio is split before it is dropped.
                        tlb.pages.push(self.folio_head(pfn));
                    } else {
                        self.put_page(pfn);
                    }
                } else if p & pte::SWAP != 0 {
                    if check_mapping.is_some() {
                        continue; // a COW'd page swapped out: kept
                    }
                    if let Some(pp) = self.mm_mut(mm).pgtable.get_mut(v) {
                        *pp = 0;
                    }
                    self.mm_mut(mm).swapents -= 1;
                    self.mm_mut(mm).anon_expected.remove(&v);
                    self.free_swap_and_cache(pte::pfn(p));
                }
            }
            vpn = stop;
        }
        self.leave(prev);
    }

    /// tlb_finish_mmu: flush the cleared range (flush_tlb_mm_range: the local CPU if it has
    /// the mm loaded, an IPI round to the mm's other CPUs, waited for), then free the gathered
    /// pages' references (free_pages_and_swap_cache: lru_add_drain, release_pages). Nothing
    /// cleared, nothing flushed.
    pub fn tlb_finish_mmu(&mut self, mm: u32, tlb: MmuGather) {
        if tlb.end > tlb.start {
            self.flush_tlb_mm_range(mm, tlb.start, tlb.end);
        }
        if tlb.pages.is_empty() {
            return;
        }
        self.lru_add_drain();
        self.release_pages(&tlb.pages);
    }
}

/// struct zap_details: what a zap over a file range leaves alone.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZapDetails {
    /// check_mapping: zap only pages of this inode (unmap_mapping_range with `even_cows`
    /// false: COW'd anonymous pages of private mappings stay). None: zap everything.
    pub check_mapping: Option<u32>,
}

/// struct mmu_gather: the virtual pages whose PTEs were cleared (the range to flush) and,
/// when `defer_free`, the pages whose PTE references are dropped only after the flush.
#[derive(Clone, Debug, Default)]
pub struct MmuGather {
    /// First virtual page cleared (valid when `end > start`).
    pub start: u64,
    /// One past the last virtual page cleared; 0 when nothing was cleared.
    pub end: u64,
    /// Pages to release after the flush.
    pub pages: Vec<Pfn>,
    /// Keep the references until `tlb_finish_mmu` (else dropped at once).
    pub defer_free: bool,
}
