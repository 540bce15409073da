//! fork(2): copy_process, dup_mmap and copy_page_range (kernel/fork.c, mm/memory.c), and the
//! anon_vmas a forked family shares (mm/rmap.c anon_vma_fork).
//!
//! - The child gets a copy of every VMA (vm_area_dup; VM_LOCKED is not inherited), each
//!   file VMA a place in its file's i_mmap. Its fd table starts empty (what the parent had
//!   open is not copied: the child's program opens what it uses).
//! - copy_page_range copies the PTEs of the VMAs that need it (vma_needs_copy: a VMA with
//!   an anon_vma — private memory that has had an anonymous page; shared mappings fault
//!   their pages in again): a page-table page for each 2 MiB with something to copy,
//!   allocated as a fault allocates one (GFP_KERNEL, charged to the memcg: the fork may
//!   reclaim and sleep, and resumes with the tables left to copy). A present PTE takes a
//!   reference and a mapcount (page_dup_rmap); the child's copy is old (pte_mkold), and
//!   in a private mapping both lose their write bit (ptep_set_wrprotect), so the first
//!   write of either side copies the page (do_wp_page's wp_page_copy). A swap PTE takes a
//!   reference of its slot (swap_duplicate).
//! - anon_vmas: an anonymous page's `mapping` names an anon_vma, which is the id of the mm
//!   that created it; a forked child is linked into its parent's anon_vmas (the rmap walk
//!   of the parent's pages visits the child too) and has its own for the pages it creates
//!   (walked over it and its own children only). `Sim::anon_vma_mms` lists the members of
//!   an anon_vma that has had a fork; one without an entry has its creator alone. A page
//!   swapped in while other PTEs still hold its slot belongs to the family's root
//!   anon_vma, as __folio_set_anon gives it anon_vma->root.
//! - At the end dup_mmap flushes the parent's TLBs (flush_tlb_mm): no CPU keeps a
//!   writable translation of a page now shared.
//! - The child runs on the CPU the op names, or the idlest one (fewest tasks runnable or
//!   running; ties go to the first CPU after the parent's), as fork balancing
//!   (find_idlest_cpu) picks one; like every task it stays there. It belongs to the
//!   parent's memory cgroup and has its oom_score_adj.

use crate::mm::memory::{pte, PTRS_PER_PTE};
use crate::mm::mmap::{Mm, Vma};
use crate::mm::page::PAGE_SHIFT;
use crate::mm::rmap::{ANON_MAPPING, VM_LOCKED, VM_SHARED};
use crate::sched::{Task, TaskId, Wait};
use crate::sim::Sim;
use crate::workload::{Errno, ForkChild, OpResult};

/// Whether copy_page_range copies the PTEs of `vma` (vma_needs_copy): private memory that
/// has an anon_vma. Shared mappings (and private file mappings never written) are faulted
/// in again by the child.
pub fn vma_needs_copy(vma: &Vma) -> bool {
    vma.flags & VM_SHARED == 0 && (vma.file.is_none() || vma.anon_vma)
}

impl Sim {
    /// fork(2) by task `tid` (resumable: `progress` is 0, or the child's mm id + 1 once its
    /// VMAs exist). Returns the child's task id as `OpResult::Pid`.
    pub fn sys_fork(
        &mut self,
        tid: TaskId,
        child: &ForkChild,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        let prev = self.enter(crate::machine::profile::KFunc::CopyProcess);
        let r = self.__sys_fork(tid, child, progress);
        self.leave(prev);
        r
    }

    fn __sys_fork(
        &mut self,
        tid: TaskId,
        child: &ForkChild,
        progress: &mut u64,
    ) -> Result<OpResult, Wait> {
        if child.program.borrow().is_none() {
            return Ok(OpResult::Err(Errno::EAGAIN));
        }
        if *progress == 0 {
            // copy_process without the address space: task struct, credentials, the
            // signal and file tables, the scheduler's fork.
            self.charge(self.costs.fork_ps);
            if let Some(parent) = self.tasks[tid].mm {
                *progress = u64::from(self.dup_mm(parent)) + 1;
            }
        }
        // The child's mm (none when the parent has none).
        let child_mm = progress.checked_sub(1).map(|m| m as u32);
        if let (Some(parent), Some(child_mm)) = (self.tasks[tid].mm, child_mm) {
            self.copy_page_range(parent, child_mm)?;
            // dup_mmap's flush_tlb_mm(oldmm): the write-protected PTEs.
            self.flush_tlb_mm_range(parent, 0, crate::mm::mmap::TASK_SIZE >> PAGE_SHIFT);
        }
        let program = child.program.borrow_mut().take().expect("checked above");
        let id = self.spawn_forked_task(tid, child, child_mm, program);
        Ok(OpResult::Pid(id as u32))
    }

    /// dup_mmap's first part: the child's mm with a copy of every VMA (no PTEs yet), linked
    /// into the parent's anon_vmas. Returns its id.
    fn dup_mm(&mut self, parent: u32) -> u32 {
        let id = self.mms.len() as u32;
        let p = self.mm(parent);
        let mut m = Mm::new(id, self.now());
        m.memcg = p.memcg;
        m.mmap_next = p.mmap_next;
        m.anon_expected = p.anon_expected.clone();
        m.anon_vma_chain = p.anon_vma_chain.clone();
        m.anon_vma_chain.push(parent);
        let vmas: Vec<Vma> = p.vmas.values().cloned().collect();
        for mut v in vmas {
            // vm_area_dup, anon_vma_fork, vma_link: one insertion, as mmap's.
            self.charge(self.costs.dir_op_ps / 2);
            v.flags &= !VM_LOCKED; // locks are not inherited
            if let Some(ino) = v.file {
                let inode = self.inode_mut(ino);
                inode.i_mmap.push(crate::fs::MappedVma {
                    mm: id,
                    start: v.start,
                    end: v.end,
                    pgoff: v.pgoff,
                    flags: v.flags,
                });
                inode.open += 1; // the mapping holds the file (get_file)
            }
            m.vmas.insert(v.start, v);
        }
        for &av in &m.anon_vma_chain {
            self.anon_vma_mms
                .entry(av)
                .or_insert_with(|| vec![av])
                .push(id);
        }
        self.mms.push(Some(m));
        if self.lru_gen_enabled() {
            self.lru_gen_add_mm(id);
        }
        id
    }

    /// copy_page_range for every VMA that needs it: table by table, in address order,
    /// skipping tables the child already has (a fork that slept in a table's allocation
    /// resumes after the tables it copied).
    fn copy_page_range(&mut self, parent: u32, child: u32) -> Result<(), Wait> {
        let mut pmds: Vec<u64> = self.mm(parent).pgtable.tables().map(|(k, _)| k).collect();
        pmds.sort_unstable();
        for pmd in pmds {
            if self.mm(child).pgtable.has_table(pmd) || !self.mm(parent).pgtable.has_table(pmd) {
                continue;
            }
            let first = pmd * PTRS_PER_PTE;
            let copy: Vec<u64> = (first..first + PTRS_PER_PTE)
                .filter(|&vpn| {
                    let m = self.mm(parent);
                    m.pgtable.get(vpn) != 0
                        && m.find_vma(vpn << PAGE_SHIFT).is_some_and(vma_needs_copy)
                })
                .collect();
            if copy.is_empty() {
                continue;
            }
            self.__pte_alloc(child, first)?;
            let prev = self.enter(crate::machine::profile::KFunc::CopyPteRange);
            for vpn in copy {
                self.copy_one_pte(parent, child, vpn);
            }
            self.leave(prev);
        }
        Ok(())
    }

    /// copy_present_pte / copy_nonpresent_pte for one virtual page.
    fn copy_one_pte(&mut self, parent: u32, child: u32, vpn: u64) {
        self.charge(self.costs.mem_access_ps * 2); // read the source, write the copy
        let p = self.mm(parent).pgtable.get(vpn);
        if p & pte::PRESENT == 0 {
            if p & pte::SWAP != 0 {
                self.swap_duplicate(pte::pfn(p));
                self.mm_mut(child).swapents += 1;
                self.set_pte(child, vpn, p);
            }
            return;
        }
        let pfn = pte::pfn(p);
        self.get_page(pfn);
        self.charge_atomic(); // page_dup_rmap
        self.mem[pfn as usize].mapcount += 1;
        if self.mem[pfn as usize].mapping & ANON_MAPPING != 0 {
            self.mm_mut(child).rss_anon += 1;
        } else {
            self.mm_mut(child).rss_file += 1;
        }
        if p & pte::WRITE != 0 {
            // A COW mapping: ptep_set_wrprotect on the parent's side.
            self.charge_atomic();
            if let Some(pp) = self.mm_mut(parent).pgtable.get_mut(vpn) {
                *pp &= !pte::WRITE;
            }
        }
        self.set_pte(child, vpn, p & !(pte::WRITE | pte::YOUNG));
    }

    /// wake_up_new_task: the child task, runnable now on its CPU.
    fn spawn_forked_task(
        &mut self,
        parent: TaskId,
        child: &ForkChild,
        mm: Option<u32>,
        program: Box<dyn crate::workload::Program>,
    ) -> TaskId {
        let id = self.tasks.len();
        let now = self.now();
        let cpu = match child.cpu {
            Some(c) => c as usize,
            None => self.find_idlest_cpu(self.tasks[parent].cpu),
        };
        let p = &self.tasks[parent];
        let (memcg, oom_score_adj) = (p.memcg, p.oom_score_adj);
        let name = format!("{}.{}", self.tasks[parent].name, child.name);
        let mut task = Task::user(id, name, cpu, now, program, memcg, oom_score_adj);
        task.mm = mm;
        self.tasks.push(task);
        self.nr_user_alive += 1;
        self.events
            .push(now, crate::machine::Event::Wake(id as u32));
        id
    }

    /// find_idlest_cpu, as this model has it: the CPU with the fewest tasks runnable or
    /// running; on a tie the first after `from` (the parent's), wrapping.
    fn find_idlest_cpu(&self, from: usize) -> usize {
        let n = self.cpus.len();
        (0..n)
            .map(|i| (from + 1 + i) % n)
            .min_by_key(|&c| self.runqueues[c].len() + usize::from(self.stepping_mask.test(c)))
            .unwrap_or(from)
    }

    /// The mms an anon_vma links (its creator alone until a fork).
    pub(crate) fn anon_vma_members(&self, av: u32) -> impl Iterator<Item = u32> + '_ {
        let linked = self.anon_vma_mms.get(&av);
        linked
            .into_iter()
            .flatten()
            .copied()
            .chain(linked.is_none().then_some(av))
    }

    /// The anon_vma of a page of `mm` swapped in or faulted in anew: its own, or the
    /// family's root when the page is shared (other PTEs hold its slot).
    pub(crate) fn anon_vma_for(&self, mm: u32, shared: bool) -> u32 {
        if shared {
            self.mm(mm).anon_vma_chain.first().copied().unwrap_or(mm)
        } else {
            mm
        }
    }

    /// unlink_anon_vmas at exit: `mm` leaves every anon_vma it was linked into.
    pub(crate) fn unlink_anon_vmas(&mut self, mm: u32) {
        let chain = self.mm(mm).anon_vma_chain.clone();
        for av in chain.into_iter().chain(std::iter::once(mm)) {
            if let Some(v) = self.anon_vma_mms.get_mut(&av) {
                v.retain(|&m| m != mm);
                if v.is_empty() {
                    // Its creator is gone too: the id names a dead mm, whom walks skip.
                    self.anon_vma_mms.remove(&av);
                }
            }
        }
    }
}
