//! Address spaces (mm/mmap.c): mm_struct, VMAs, mmap / munmap / mprotect, and mm_cpumask.
//!
//! Each user task has its own mm (a process). VMAs are kept in a BTreeMap by start address
//! (the kernel's rbtree); a VMA is anonymous or maps a file from `pgoff`. mm_cpumask records
//! the CPUs that have loaded the mm: a CPU is added when it switches to a task of the mm and
//! removed when it switches to another mm (x86 4.x; a CPU running a kernel thread keeps the
//! previous mm loaded lazily and stays in the mask until a flush IPI makes it leave_mm).
//! Without PCID a switch of mm flushes the CPU's TLB.

use std::collections::BTreeMap;

use crate::machine::CpuId;
use crate::mm::memory::PageTable;
use crate::mm::page::{PAGE_SHIFT, PAGE_SIZE};
use crate::mm::readahead::RaState;
use crate::mm::rmap::{VM_EXEC, VM_LOCKED, VM_READ, VM_SHARED, VM_WRITE};
use crate::sched::{TaskId, Wait};
use crate::sim::Sim;
use crate::workload::{Errno, OpResult};

/// Where anonymous and file mappings are placed (mmap_base, growing up in this model).
pub const MMAP_BASE: u64 = 0x7f00_0000_0000;
/// TASK_SIZE: the end of user space (x86-64 with 5-level paging, 2^56 less a page). This
/// model places mappings upwards from `MMAP_BASE`, so it has far more room above it than
/// the kernel's top-down layout; an mmap past it fails with ENOMEM (get_unmapped_area).
pub const TASK_SIZE: u64 = (1 << 56) - PAGE_SIZE;

/// struct vm_area_struct.
#[derive(Clone, Debug)]
pub struct Vma {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// VM_* flags.
    pub flags: u64,
    /// Mapped file (inode), or None for anonymous memory.
    pub file: Option<u32>,
    /// File offset of `start`, in pages.
    pub pgoff: u64,
    /// The mapped file's readahead state (vm_file->f_ra, with mmap_miss).
    pub ra: RaState,
    /// file_ra_state.mmap_miss.
    pub mmap_miss: u32,
    /// vma->swap_readahead_info (v4.14): VMA-based swap readahead's state.
    pub swap_ra: crate::mm::swapfile::SwapRaInfo,
    /// vma->anon_vma is set (anon_vma_prepare): the VMA has had an anonymous page (a
    /// private file mapping, at its first copy-on-write). fork copies such a VMA's PTEs.
    pub anon_vma: bool,
}

impl Vma {
    /// File page index of a virtual address in this VMA.
    pub fn pgoff_of(&self, vaddr: u64) -> u64 {
        self.pgoff + ((vaddr - self.start) >> PAGE_SHIFT)
    }
    /// Virtual address of file page `index`, if this VMA maps it.
    pub fn addr_of(&self, index: u64) -> Option<u64> {
        vma_address(self.start, self.end, self.pgoff, index)
    }
}

/// vma_address: the virtual address of file page `index` in the VMA [start, end) mapping
/// the file from page `pgoff`, if it maps that page.
#[inline]
pub fn vma_address(start: u64, end: u64, pgoff: u64, index: u64) -> Option<u64> {
    let pages = (end - start) >> PAGE_SHIFT;
    if index >= pgoff && index < pgoff + pages {
        Some(start + ((index - pgoff) << PAGE_SHIFT))
    } else {
        None
    }
}

/// struct mm_struct.
#[derive(Debug)]
pub struct Mm {
    /// Id (index into `Sim::mms`).
    pub id: u32,
    /// VMAs by start address.
    pub vmas: BTreeMap<u64, Vma>,
    /// The page table.
    pub pgtable: PageTable,
    /// mm_cpumask.
    cpumask: crate::machine::Cpumask,
    /// mm->context.tlb_gen (`tlb-gen`): advanced by every flush of the mm and every unmap
    /// added to a reclaim batch; a CPU whose TLB is current to it needs no flush.
    pub tlb_gen: u64,
    /// mm->context.next_trim_cpumask (`mm-cpumask-lazy`): the first flush after this time
    /// trims the cpumask (a second after the mm was made, then once a second).
    pub next_trim_cpumask_ps: crate::machine::Ps,
    /// mm->tlb_flush_batched (`tlb-flush-batched`): reclaim deferred a flush of this mm
    /// since its last flush_tlb_batched_pending.
    pub tlb_flush_batched: bool,
    /// Next free address for mmap.
    pub mmap_next: u64,
    /// Content oracle for anonymous (and COW) pages: newest version by virtual page.
    pub anon_expected: rustc_hash::FxHashMap<u64, u32>,
    /// Resident file pages (MM_FILEPAGES).
    pub rss_file: u64,
    /// Resident anonymous pages (MM_ANONPAGES).
    pub rss_anon: u64,
    /// Swap entries held (MM_SWAPENTS).
    pub swapents: u64,
    /// Tasks using this mm.
    pub users: u32,
    /// The memcg whose mm_list holds this mm (mm->lru_gen.memcg: the owner's at exec).
    pub memcg: crate::mm::memcontrol::MemcgId,
    /// mm->lru_gen.bitmap: one bit per node, set when the mm is switched in, cleared when
    /// the MGLRU aging walks it (unused mms are skipped).
    pub lru_gen_bitmap: u64,
    /// The anon_vmas of its ancestors this mm is linked into, the root (the oldest) first
    /// (anon_vma_fork's chain; its own anon_vma is its id). Empty for an mm never forked.
    pub anon_vma_chain: Vec<u32>,
}

impl Mm {
    /// A new, empty address space, made at `now`.
    pub fn new(id: u32, now: crate::machine::Ps) -> Mm {
        Mm {
            id,
            vmas: BTreeMap::new(),
            pgtable: PageTable::default(),
            cpumask: crate::machine::Cpumask::default(),
            tlb_gen: 0,
            next_trim_cpumask_ps: now + crate::arch::tlb::TRIM_CPUMASK_INTERVAL_PS,
            tlb_flush_batched: false,
            mmap_next: MMAP_BASE,
            anon_expected: Default::default(),
            rss_file: 0,
            rss_anon: 0,
            swapents: 0,
            users: 1,
            memcg: crate::mm::memcontrol::ROOT_MEM_CGROUP,
            lru_gen_bitmap: 0,
            anon_vma_chain: Vec::new(),
        }
    }
    /// cpumask_test_cpu(cpu, mm_cpumask(mm)).
    pub fn cpumask_test(&self, cpu: CpuId) -> bool {
        self.cpumask.test(cpu)
    }
    /// cpumask_set_cpu.
    pub fn cpumask_set(&mut self, cpu: CpuId) {
        self.cpumask.set(cpu);
    }
    /// cpumask_clear_cpu.
    pub fn cpumask_clear(&mut self, cpu: CpuId) {
        self.cpumask.clear(cpu);
    }
    /// mm_cpumask(mm).
    pub fn cpumask(&self) -> &crate::machine::Cpumask {
        &self.cpumask
    }
    /// Whether a VMA overlaps the 2 MiB of PMD index `pmd` (its PTE table is in use).
    pub fn vma_under_pmd(&self, pmd: u64) -> bool {
        let span = crate::mm::memory::PTRS_PER_PTE << PAGE_SHIFT;
        let (lo, hi) = (pmd * span, (pmd + 1) * span);
        self.vmas
            .range(..hi)
            .next_back()
            .is_some_and(|(_, v)| v.end > lo)
    }
    /// find_vma: the VMA containing `addr`.
    pub fn find_vma(&self, addr: u64) -> Option<&Vma> {
        self.vmas
            .range(..=addr)
            .next_back()
            .map(|(_, v)| v)
            .filter(|v| addr < v.end)
    }
    /// find_vma, mutable.
    pub fn find_vma_mut(&mut self, addr: u64) -> Option<&mut Vma> {
        self.vmas
            .range_mut(..=addr)
            .next_back()
            .map(|(_, v)| v)
            .filter(|v| addr < v.end)
    }
}

/// The end of the page range `[addr, addr + len)` with `len` rounded up to whole pages
/// (PAGE_ALIGN(len)), or None when it overflows.
pub fn page_range_end(addr: u64, len: u64) -> Option<u64> {
    len.div_ceil(PAGE_SIZE)
        .checked_mul(PAGE_SIZE)
        .and_then(|l| addr.checked_add(l))
}

/// PROT_* → VM_* flags.
pub fn prot_to_vm_flags(prot: u32, shared: bool) -> u64 {
    let mut f = 0;
    if prot & 1 != 0 {
        f |= VM_READ;
    }
    if prot & 2 != 0 {
        f |= VM_WRITE;
    }
    if prot & 4 != 0 {
        f |= VM_EXEC;
    }
    if shared {
        f |= VM_SHARED;
    }
    f
}

impl Sim {
    /// The mm of task `tid`, creating it on first use (exec).
    pub fn task_mm(&mut self, tid: TaskId) -> u32 {
        if let Some(m) = self.tasks[tid].mm {
            return m;
        }
        let id = self.mms.len() as u32;
        let mut m = Mm::new(id, self.now());
        m.memcg = self.tasks[tid].memcg;
        self.mms.push(Some(m));
        self.tasks[tid].mm = Some(id);
        if self.lru_gen_enabled() {
            self.lru_gen_add_mm(id);
        }
        // exec activates the new mm on the running CPU (activate_mm): it enters the cpumask.
        if self.cur.task == Some(tid) {
            let cpu = self.cur.cpu;
            self.switch_mm(cpu, tid);
        }
        id
    }

    /// The address spaces of the multi-threaded processes (`thread_group` in the scenario),
    /// made before the run: the threads share one mm from their clone on (CLONE_VM), its
    /// `users` their number, its memcg theirs. A single-threaded process gets its mm at its
    /// first mapping (`task_mm`).
    pub(crate) fn create_thread_group_mms(&mut self) {
        for t in 0..self.tasks.len() {
            let leader = self.tasks[t].tgid;
            if leader == t {
                continue;
            }
            let id = match self.tasks[leader].mm {
                Some(id) => {
                    self.mm_mut(id).users += 1;
                    id
                }
                None => {
                    let id = self.mms.len() as u32;
                    let mut m = Mm::new(id, self.now());
                    m.memcg = self.tasks[leader].memcg;
                    m.users = 2;
                    self.mms.push(Some(m));
                    if self.lru_gen_enabled() {
                        self.lru_gen_add_mm(id);
                    }
                    self.tasks[leader].mm = Some(id);
                    id
                }
            };
            self.tasks[t].mm = Some(id);
            self.tasks[t].multi_threaded = true;
            self.tasks[leader].multi_threaded = true;
        }
    }

    /// Borrow an mm.
    pub fn mm(&self, id: u32) -> &Mm {
        self.mms[id as usize].as_ref().expect("live mm")
    }
    /// Borrow an mm mutably.
    pub fn mm_mut(&mut self, id: u32) -> &mut Mm {
        self.mms[id as usize].as_mut().expect("live mm")
    }

    /// switch_mm when `tid` runs on `cpu`: a CPU switching to another mm leaves the old
    /// mm's cpumask and joins the new one's, flushing its TLB without PCID, and with it
    /// (`pcid`) only if the new mm's translations it kept missed a flush; a kernel thread
    /// enters lazy TLB mode (`enter_lazy_tlb`). A CPU back from lazy mode on the same mm
    /// flushes if the mm's tlb_gen moved meanwhile (`tlb-gen`; it took no IPI then).
    pub fn switch_mm(&mut self, cpu: CpuId, tid: TaskId) {
        let next = self.tasks[tid].mm;
        if let Some(m) = next.and_then(|n| self.mms[n as usize].as_mut()) {
            m.lru_gen_bitmap = u64::MAX; // lru_gen_use_mm
        }
        let Some(next) = next else {
            self.enter_lazy_tlb(cpu);
            return;
        };
        let was_lazy = std::mem::replace(&mut self.cpu_lazy[cpu], false);
        if self.cpu_active_mm[cpu] == Some(next) {
            if was_lazy && self.features.tlb_gen {
                let asid = usize::from(self.cpu_tlbstate[cpu].loaded_asid);
                let gen = self.mm(next).tlb_gen;
                if self.cpu_tlbstate[cpu].ctxs[asid].1 != gen {
                    self.flush_tlb_local(cpu, next);
                    self.cpu_tlbstate[cpu].ctxs[asid].1 = gen;
                }
            }
            return;
        }
        if let Some(prev) = self.cpu_active_mm[cpu] {
            // From v6.13 (`mm-cpumask-lazy`) the CPU stays in prev's mask, to leave it at
            // a flush.
            if !self.features.mm_cpumask_lazy {
                if let Some(m) = self.mms[prev as usize].as_mut() {
                    m.cpumask_clear(cpu);
                }
            }
        }
        self.mm_mut(next).cpumask_set(cpu);
        if self.features.tlb_gen {
            self.load_new_mm_cr3(cpu, next);
        } else {
            self.tlbs[cpu].flush_all(); // CR3 load without PCID
        }
        self.cpu_active_mm[cpu] = Some(next);
    }

    /// The TLB side of a switch to `next` with TLB generations (4.13+): without PCID the
    /// CR3 load flushes everything and ASID 0 is current to the mm's tlb_gen; with PCID
    /// (choose_new_asid) the ASID that holds `next` is reused, flushed only if behind, else
    /// the next ASID in turn is taken over and flushed (its old mm's translations go).
    fn load_new_mm_cr3(&mut self, cpu: CpuId, next: u32) {
        let gen = self.mm(next).tlb_gen;
        let st = &mut self.cpu_tlbstate[cpu];
        if !self.features.pcid {
            st.loaded_asid = 0;
            st.ctxs[0] = (next + 1, gen);
            self.tlbs[cpu].flush_all();
            return;
        }
        if let Some(asid) = st.ctxs.iter().position(|&(m, _)| m == next + 1) {
            let behind = st.ctxs[asid].1 < gen;
            st.loaded_asid = asid as u8;
            st.ctxs[asid].1 = gen;
            if behind {
                self.tlbs[cpu].flush_mm(next);
            }
            return;
        }
        let asid = usize::from(st.next_asid);
        st.next_asid = ((asid + 1) % crate::arch::tlb::TLB_NR_DYN_ASIDS) as u8;
        let old = std::mem::replace(&mut st.ctxs[asid], (next + 1, gen));
        st.loaded_asid = asid as u8;
        if old.0 != 0 {
            self.tlbs[cpu].flush_mm(old.0 - 1);
        }
    }

    /// enter_lazy_tlb: the CPU runs a kernel thread or goes idle and keeps the last user mm
    /// loaded (lazy TLB mode) — except with PCID before v4.19 (`pcid` without
    /// `lazy-tlb-skip`: tlb_defer_switch_to_init_mm), where it switches to init_mm at once
    /// and leaves the mm's cpumask, its translations kept under their ASID.
    pub fn enter_lazy_tlb(&mut self, cpu: CpuId) {
        if self.cpu_active_mm[cpu].is_none() || self.cpu_lazy[cpu] {
            return;
        }
        if self.features.pcid && !self.features.lazy_tlb_skip {
            self.leave_mm(cpu);
        } else {
            self.cpu_lazy[cpu] = true;
        }
    }

    /// leave_mm (switch_mm to init_mm): the CPU drops the mm it has loaded and leaves its
    /// cpumask (from v6.13, `mm-cpumask-lazy`, at the next flush of it); without PCID the CR3 load flushes its TLB, with it the translations stay
    /// under the mm's ASID, current to the generation they had.
    pub fn leave_mm(&mut self, cpu: CpuId) {
        if let Some(prev) = self.cpu_active_mm[cpu].take() {
            if !self.features.mm_cpumask_lazy {
                if let Some(m) = self.mms[prev as usize].as_mut() {
                    m.cpumask_clear(cpu);
                }
            }
        }
        self.cpu_lazy[cpu] = false;
        if !self.features.pcid {
            self.tlbs[cpu].flush_all();
        }
    }

    /// mmap(2): map a file or anonymous memory at the next free address.
    pub fn sys_mmap(
        &mut self,
        tid: TaskId,
        path: Option<&str>,
        len: u64,
        offset: u64,
        prot: u32,
        shared: bool,
    ) -> OpResult {
        if len == 0 || !offset.is_multiple_of(PAGE_SIZE) {
            return OpResult::Err(Errno::EINVAL);
        }
        let file = match path {
            Some(p) => {
                let Some(fs) = self.resolve_fs(p) else {
                    return OpResult::Err(Errno::ENOENT);
                };
                match self.fss[fs].names.get(p).copied() {
                    Some(ino) => {
                        self.vfs_ensure_nowait(ino);
                        Some(ino)
                    }
                    None => return OpResult::Err(Errno::ENOENT),
                }
            }
            None => None,
        };
        let mm = self.task_mm(tid);
        let start = self.mm(mm).mmap_next;
        if len > TASK_SIZE.saturating_sub(start) {
            return OpResult::Err(Errno::ENOMEM);
        }
        let len = len.div_ceil(PAGE_SIZE) * PAGE_SIZE;
        if len > TASK_SIZE - start {
            return OpResult::Err(Errno::ENOMEM);
        }
        // MAP_SHARED|MAP_ANONYMOUS: shmem_zero_setup backs the mapping with a file of its
        // own on the internal tmpfs (its pages are shmem: swap-backed page cache).
        let file = match file {
            None if shared => Some(self.shmem_zero_setup(len)),
            f => f,
        };
        let ra = file.map_or_else(RaState::new, |ino| self.file_ra_state_init(ino));
        let m = self.mm_mut(mm);
        // A guard page between mappings keeps them apart.
        m.mmap_next = start + len + PAGE_SIZE;
        let vma = Vma {
            start,
            end: start + len,
            flags: prot_to_vm_flags(prot, shared),
            file,
            pgoff: offset / PAGE_SIZE,
            ra,
            mmap_miss: 0,
            swap_ra: Default::default(),
            anon_vma: false,
        };
        let mapped = crate::fs::MappedVma {
            mm,
            start,
            end: vma.end,
            pgoff: vma.pgoff,
            flags: vma.flags,
        };
        m.vmas.insert(start, vma);
        if let Some(ino) = file {
            self.inode_mut(ino).i_mmap.push(mapped);
            self.inode_mut(ino).open += 1; // the mapping holds the file
            self.touch_atime(ino); // generic_file_mmap: file_accessed
        }
        self.charge(self.costs.dir_op_ps / 2);
        OpResult::Addr(start)
    }

    /// shmem_zero_setup: the file behind a shared anonymous mapping of `len` bytes, an
    /// unlinked inode of i_size `len` on shm_mnt, the internal tmpfs (no size limit: a
    /// kernel mount; mounted here at the first such mapping). The mapping holds the only
    /// reference: its last unmap evicts the file, its pages and its swap entries. Its
    /// inode and dentry objects (one of each per mapping) are not modelled.
    pub fn shmem_zero_setup(&mut self, len: u64) -> u32 {
        let fs = match self.shm_mnt {
            Some(fs) => fs,
            None => {
                let spec = crate::scenario::FsSpec {
                    mount: "(shm_mnt)".into(),
                    kind: crate::scenario::FsKind::Tmpfs,
                    device: None,
                    size_bytes: None,
                    atime: crate::scenario::Atime::Noatime,
                    journal: false,
                };
                self.fss.push(crate::fs::FileSystem::new(&spec, None));
                self.path_cache.invalidate();
                self.shm_mnt = Some(self.fss.len() - 1);
                self.fss.len() - 1
            }
        };
        let ino = self.inodes.len() as u32;
        let mapping = crate::fs::AddressSpace {
            swapbacked: true,
            ..Default::default()
        };
        self.inodes.push(Some(crate::fs::Inode {
            size: len,
            nlink: 0,
            ..crate::fs::Inode::new(ino, fs, mapping)
        }));
        ino
    }

    /// munmap(2) of [addr, addr+len) (do_vmi_munmap): a VMA the range cuts is split first
    /// (at `addr`, then at the end), then every VMA inside is unmapped — its PTEs zapped
    /// and flushed from the TLBs, its file let go — and the page-table pages left under no
    /// VMA are freed (free_pgtables). Holes are fine; an unaligned address or a zero length
    /// is EINVAL.
    pub fn sys_munmap(&mut self, tid: TaskId, addr: u64, len: u64) -> Result<OpResult, Wait> {
        let Some(mm) = self.tasks[tid].mm else {
            return Ok(OpResult::Err(Errno::EINVAL));
        };
        if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
            return Ok(OpResult::Err(Errno::EINVAL));
        }
        let Some(end) = page_range_end(addr, len).filter(|&e| e <= TASK_SIZE) else {
            return Ok(OpResult::Err(Errno::EINVAL));
        };
        self.split_range_edges(mm, addr, end);
        let starts: Vec<u64> = self.mm(mm).vmas.range(addr..end).map(|(s, _)| *s).collect();
        for s in starts {
            self.unmap_vma(mm, s);
        }
        self.free_pgtables_range(mm, addr >> PAGE_SHIFT, end >> PAGE_SHIFT);
        Ok(OpResult::None)
    }

    /// The VMAs of `mm` that `[addr, end)` cuts are split at its edges (split_vma at `addr`,
    /// then at `end`), so that the range is made of whole VMAs.
    fn split_range_edges(&mut self, mm: u32, addr: u64, end: u64) {
        if let Some(v) = self.mm(mm).find_vma(addr).map(|v| v.start) {
            if v < addr {
                self.split_vma(mm, v, addr);
            }
        }
        if let Some(v) = self.mm(mm).find_vma(end - 1).map(|v| (v.start, v.end)) {
            if v.1 > end {
                self.split_vma(mm, v.0, end);
            }
        }
    }

    /// Remove one VMA: zap its PTEs (flushing TLBs for the range) and drop it from the file's
    /// i_mmap.
    pub fn unmap_vma(&mut self, mm: u32, start: u64) {
        if self.mm(mm).vmas[&start].flags & VM_LOCKED != 0 && !self.features.mlock_count {
            // Before v5.18, munmap and exit munlock a locked VMA before zapping it
            // (munlock_vma_pages_range); from v5.18 the zap does it page by page.
            self.mlock_fixup(mm, start, false);
        }
        let vma = self.mm(mm).vmas[&start].clone();
        self.zap_page_range(mm, &vma);
        self.flush_tlb_mm_range(mm, vma.start >> PAGE_SHIFT, vma.end >> PAGE_SHIFT);
        self.mm_mut(mm).vmas.remove(&start);
        if let Some(ino) = vma.file {
            if let Some(inode) = self.inodes[ino as usize].as_mut() {
                inode.i_mmap.retain(|v| !(v.mm == mm && v.start == start));
            }
            self.release_file_ref(ino);
        }
    }

    /// mprotect(2) of [addr, addr+len) (do_mprotect_pkey): new permissions for the VMAs
    /// there, a VMA the range cuts split first where its flags change (mprotect_fixup
    /// leaves a VMA whose flags stay the same whole); write permission is removed from present
    /// PTEs (and flushed) when a mapping loses PROT_WRITE. The range must be mapped
    /// throughout: at a hole the VMAs before it keep their new permissions and the call is
    /// ENOMEM. An unaligned address is EINVAL; a zero length does nothing.
    pub fn sys_mprotect(&mut self, tid: TaskId, addr: u64, len: u64, prot: u32) -> OpResult {
        let Some(mm) = self.tasks[tid].mm else {
            return OpResult::Err(Errno::EINVAL);
        };
        if !addr.is_multiple_of(PAGE_SIZE) {
            return OpResult::Err(Errno::EINVAL);
        }
        let Some(end) = page_range_end(addr, len) else {
            return OpResult::Err(Errno::ENOMEM);
        };
        if end == addr {
            return OpResult::None;
        }
        // The protection bits change; VM_LOCKED and the madvise hints stay.
        let new_flags =
            |old: u64| (old & !(VM_READ | VM_WRITE | VM_EXEC)) | prot_to_vm_flags(prot, false);
        let Some(first) = self.mm(mm).find_vma(addr).map(|v| v.start) else {
            return OpResult::Err(Errno::ENOMEM);
        };
        let starts: Vec<u64> = self
            .mm(mm)
            .vmas
            .range(first..end)
            .map(|(s, _)| *s)
            .collect();
        let mut covered = addr;
        for s in starts {
            if s > covered {
                return OpResult::Err(Errno::ENOMEM); // a hole
            }
            let (vend, old) = {
                let v = &self.mm(mm).vmas[&s];
                (v.end, v.flags)
            };
            covered = vend;
            let flags = new_flags(old);
            if flags == old {
                continue; // mprotect_fixup: nothing to change, the VMA stays whole
            }
            // Split off the part outside the range (mprotect_fixup's vma_modify_flags).
            let s = self.split_vma_to_range(mm, s, vend, addr, end);
            let (vstart, vend) = (s, vend.min(end));
            self.vma_set_flags(mm, s, flags);
            // change_protection's change_pte_range.
            self.flush_tlb_batched_pending(mm);
            if flags & VM_WRITE == 0 {
                let m = self.mm_mut(mm);
                m.pgtable
                    .write_protect_range(vstart >> PAGE_SHIFT, vend >> PAGE_SHIFT);
                self.flush_tlb_mm_range(mm, vstart >> PAGE_SHIFT, vend >> PAGE_SHIFT);
            }
        }
        if covered < end {
            return OpResult::Err(Errno::ENOMEM);
        }
        OpResult::None
    }

    /// vm_flags_reset: the VMA of `mm` at `start` gets `flags`, and so does its copy on
    /// the file's i_mmap.
    pub fn vma_set_flags(&mut self, mm: u32, start: u64, flags: u64) {
        let v = self.mm_mut(mm).vmas.get_mut(&start).expect("vma");
        v.flags = flags;
        if let Some(ino) = v.file {
            for v in self.inode_mut(ino).i_mmap.iter_mut() {
                if v.mm == mm && v.start == start {
                    v.flags = flags;
                }
            }
        }
    }

    /// vma_modify's splits: the VMA of `mm` at `vs` (ending at `ve`) is split where the
    /// range `[s, e)` cuts it, so that the part in the range is a VMA of its own; returns
    /// that part's start. (mprotect_fixup, mlock_fixup and madvise_update_vma.)
    pub fn split_vma_to_range(&mut self, mm: u32, vs: u64, ve: u64, s: u64, e: u64) -> u64 {
        let mut start = vs;
        if s > vs {
            self.split_vma(mm, vs, s);
            start = s;
        }
        if e < ve {
            self.split_vma(mm, start, e);
        }
        start
    }

    /// split_vma: the VMA of `mm` at `start` becomes two, `[start, at)` and `[at, end)`,
    /// with the same flags, file (one more reference: get_file) and state; the second's
    /// file offset follows `at`. Both are on the file's i_mmap. The file's readahead state
    /// is copied (the kernel's is the struct file's, which both share).
    pub fn split_vma(&mut self, mm: u32, start: u64, at: u64) {
        let m = self.mm_mut(mm);
        let head = m.vmas.get_mut(&start).expect("vma");
        debug_assert!(head.start < at && at < head.end && at.is_multiple_of(PAGE_SIZE));
        let mut tail = head.clone();
        head.end = at;
        tail.start = at;
        tail.pgoff = head.pgoff + ((at - start) >> PAGE_SHIFT);
        let (file, mapped) = (
            tail.file,
            crate::fs::MappedVma {
                mm,
                start: at,
                end: tail.end,
                pgoff: tail.pgoff,
                flags: tail.flags,
            },
        );
        m.vmas.insert(at, tail);
        self.charge(self.costs.dir_op_ps / 2); // vm_area_dup, the tree insert
        if let Some(ino) = file {
            let inode = self.inode_mut(ino);
            for v in inode.i_mmap.iter_mut() {
                if v.mm == mm && v.start == start {
                    v.end = at;
                }
            }
            inode.i_mmap.push(mapped);
            inode.open += 1; // the new VMA holds the file too
        }
    }

    /// fput for a mapping's file reference: the last reference of an unlinked file evicts
    /// it (as the last close does; an eviction that must wait leaves an orphan, see
    /// [`Sim::iput_final_nowait`]).
    pub fn release_file_ref(&mut self, ino: u32) {
        let Some(inode) = self.inodes[ino as usize].as_mut() else {
            return;
        };
        inode.open -= 1;
        if inode.open == 0 && inode.nlink == 0 {
            self.iput_final_nowait(ino);
        } else {
            self.vfs_dput(ino);
        }
    }

    /// exit_mm: the task lets go of its mm (current->mm = NULL); the last user unmaps
    /// everything (mmput → exit_mmap).
    pub fn exit_mmap(&mut self, tid: TaskId) {
        let Some(mm) = self.tasks[tid].mm.take() else {
            return;
        };
        let users = {
            let m = self.mm_mut(mm);
            m.users -= 1;
            m.users
        };
        if users > 0 {
            return;
        }
        self.mmput_final(mm);
    }

    /// The last user of `mm` is gone (mmput → exit_mmap): unmap everything, free the page
    /// tables, leave the anon_vmas it was linked into.
    pub fn mmput_final(&mut self, mm: u32) {
        if self.lru_gen_enabled() {
            self.lru_gen_del_mm(mm);
        }
        let starts: Vec<u64> = self.mm(mm).vmas.keys().copied().collect();
        for s in starts {
            self.unmap_vma(mm, s);
        }
        for c in 0..self.cpus.len() {
            if self.cpu_active_mm[c] == Some(mm) {
                self.cpu_active_mm[c] = None;
                self.cpu_lazy[c] = false;
                if !self.features.pcid {
                    self.tlbs[c].flush_all();
                }
            }
            // The mm's ASID and translations go with it (the kernel's ctx_id is never
            // reused; here an mm id may be).
            if self.features.pcid {
                let st = &mut self.cpu_tlbstate[c];
                if let Some(asid) = st.ctxs.iter().position(|&(m, _)| m == mm + 1) {
                    st.ctxs[asid] = (0, 0);
                    self.tlbs[c].flush_mm(mm);
                }
            }
        }
        self.free_pgtables(mm);
        self.unlink_anon_vmas(mm);
        self.mms[mm as usize] = None;
    }
}
