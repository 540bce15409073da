//! The OOM killer's choice and kill (mm/oom_kill.c), shared by the global OOM killer
//! (`out_of_memory` in page_alloc.rs) and the memcg one (`mem_cgroup_out_of_memory` in
//! memcontrol.rs).
//!
//! - **oom_badness**: a task's points are its resident pages, swap entries and page-table
//!   pages, plus its `oom_score_adj` (-1000 ..= 1000) times a thousandth of the OOM
//!   domain's memory (`totalpages`: RAM + swap for a global OOM; memory.max + the swap
//!   the cgroup may use for a memcg OOM, mem_cgroup_get_max). A task at
//!   OOM_SCORE_ADJ_MIN (-1000) is never chosen. A task that never mapped memory has no
//!   mm here but one in the kernel (its text, libraries, stack): it counts no pages and
//!   stays eligible. The highest points win; equal points go to the task scanned last
//!   (the newest; for a memcg OOM, of the last memcg in pre-order).
//! - **memory.oom.group** (4.19): before the victim is killed, mem_cgroup_get_oom_group
//!   walks from the victim's memcg up to the OOM domain (the memcg whose limit was hit, or
//!   the root) and takes the highest memcg with oom.group set. After the victim, every
//!   task of that memcg's subtree whose oom_score_adj is not -1000 is killed too, the
//!   victim included again: as in the kernel's oom_kill_memcg_member, which does not skip
//!   a task already killed, the victim's kill counts twice in /proc/vmstat `oom_kill` and
//!   memory.events `oom_kill`. The group's memory.events `oom_group_kill` counts once.
//!
//! - **Processes, not threads**: the candidates are processes (for_each_process; the
//!   threads of a `thread_group` share one mm and so one footprint and oom_score_adj), in
//!   the order of their first task; a kill takes every thread of the victim's process
//!   (SIGKILL) and counts once.
//!
//! A killed task exits at its next step (woken if it sleeps); exit_mmap frees its memory
//! when the last thread of its process has gone.

use crate::mm::memcontrol::{MemcgEvent, MemcgId, ROOT_MEM_CGROUP};
use crate::mm::vmstat::VmItem;
use crate::sched::{Task, TaskId, TaskState};
use crate::sim::Sim;

/// OOM_SCORE_ADJ_MIN: a task with it is never OOM-killed.
pub const OOM_SCORE_ADJ_MIN: i16 = -1000;
/// OOM_SCORE_ADJ_MAX.
pub const OOM_SCORE_ADJ_MAX: i16 = 1000;

/// The task select_bad_process chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OomVictim {
    /// The task.
    pub task: TaskId,
    /// Its resident + swap + page-table pages.
    pub footprint: u64,
    /// Its points: the footprint plus the oom_score_adj share of `totalpages`.
    pub points: i64,
}

/// What oom_kill_process did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OomKill {
    /// The memcg whose memory.oom.group took the whole subtree, if any.
    pub group: Option<MemcgId>,
    /// The group's tasks killed after the victim (the victim included again; one task per
    /// process).
    pub members: Vec<TaskId>,
    /// The victim's other threads, killed with it (SIGKILL goes to the whole process).
    pub threads: Vec<TaskId>,
}

impl Sim {
    /// The pages oom_badness counts for `t`: resident, swap entries and page tables (None
    /// without an address space).
    pub(crate) fn oom_footprint(&self, t: &Task) -> Option<u64> {
        let m = self.mms.get(t.mm? as usize)?.as_ref()?;
        Some(m.rss_anon + m.rss_file + m.swapents + m.pgtable.nr_tables() as u64)
    }

    /// oom_badness: `footprint` plus oom_score_adj × totalpages / 1000; None for a task at
    /// OOM_SCORE_ADJ_MIN, which is never chosen.
    pub(crate) fn oom_badness(t: &Task, footprint: u64, totalpages: u64) -> Option<i64> {
        if t.oom_score_adj == OOM_SCORE_ADJ_MIN {
            return None;
        }
        let unit = i64::try_from(totalpages / 1000).unwrap_or(i64::MAX);
        let adj = i64::from(t.oom_score_adj).saturating_mul(unit);
        Some(
            i64::try_from(footprint)
                .unwrap_or(i64::MAX)
                .saturating_add(adj),
        )
    }

    /// select_bad_process: the live user task with the most points among those for which
    /// `footprint` gives a value (None: not eligible). oom_evaluate_task takes a task whose
    /// points equal the chosen one's (`points < chosen_points` alone skips it), so a tie
    /// goes to the task scanned last: for_each_process goes from the oldest task to the
    /// newest; a memcg OOM (`by_memcg`, mem_cgroup_scan_tasks) goes through the memcgs
    /// in pre-order, each one's tasks oldest first.
    pub(crate) fn select_bad_process(
        &self,
        totalpages: u64,
        by_memcg: bool,
        footprint: impl Fn(&Sim, &Task) -> Option<u64>,
    ) -> Option<OomVictim> {
        self.processes()
            .filter_map(|t| {
                let f = footprint(self, t)?;
                let points = Self::oom_badness(t, f, totalpages)?;
                let scan_order = (if by_memcg { t.memcg } else { 0 }, t.tgid);
                Some((points, scan_order, f))
            })
            .max()
            .map(|(points, (_, task), footprint)| OomVictim {
                task,
                footprint,
                points,
            })
    }

    /// The live user processes, one task each (for_each_process with find_lock_task_mm):
    /// the first live thread of each thread group, in id order.
    pub(crate) fn processes(&self) -> impl Iterator<Item = &Task> {
        let mut seen = rustc_hash::FxHashSet::default();
        self.tasks.iter().filter(move |t| {
            !t.is_kthread()
                && t.state != TaskState::Exited
                && (t.tgid == t.id || seen.insert(t.tgid))
        })
    }

    /// The global OOM domain's size (oc->totalpages of constrained_alloc): RAM and swap.
    pub(crate) fn oom_totalpages_global(&self) -> u64 {
        self.mem.len() as u64 + self.swap.as_ref().map_or(0, |s| s.nr_pages)
    }

    /// mem_cgroup_get_max: memory.max plus the swap the memcg may use (swappiness is the
    /// default 60, so swap counts); at least 1.
    pub(crate) fn mem_cgroup_get_max(&self, memcg: MemcgId) -> u64 {
        let mc = &self.memcgs[memcg as usize];
        let swap = self.swap.as_ref().map_or(0, |s| s.nr_pages);
        mc.max.saturating_add(mc.swap_max.min(swap)).max(1)
    }

    /// mem_cgroup_get_oom_group: the highest memcg with memory.oom.group set on the path
    /// from `victim`'s memcg up to `domain` (the root for a global OOM); None for a task of
    /// the root or outside `domain`.
    pub(crate) fn mem_cgroup_get_oom_group(
        &self,
        victim: TaskId,
        domain: MemcgId,
    ) -> Option<MemcgId> {
        let mut m = self.tasks[victim].memcg;
        if m == ROOT_MEM_CGROUP || !self.mem_cgroup_is_descendant(m, domain) {
            return None;
        }
        let mut group = None;
        loop {
            let mc = &self.memcgs[m as usize];
            if mc.oom_group {
                group = Some(m);
            }
            if m == domain {
                break;
            }
            match mc.parent {
                Some(p) if p != ROOT_MEM_CGROUP => m = p,
                _ => break,
            }
        }
        group
    }

    /// __oom_kill_process: count the kill (/proc/vmstat and the task's memory.events
    /// `oom_kill`), then SIGKILL the process: mark each of its threads and wake it so
    /// that it exits.
    fn __oom_kill_process(&mut self, t: TaskId) {
        self.vmstat.inc(VmItem::OomKill);
        let m = self.tasks[t].memcg;
        self.memcg_memory_event(m, MemcgEvent::OomKill);
        let now = self.now();
        for th in self.threads_of(self.tasks[t].tgid) {
            self.tasks[th].oom_killed = true;
            self.wake_up(th, now);
        }
    }

    /// oom_kill_process: kill `victim` and, when a memory.oom.group between it and `domain`
    /// says so, every task of that group (oom_kill_memcg_member: all but those at
    /// OOM_SCORE_ADJ_MIN, the victim included again).
    pub(crate) fn oom_kill_process(&mut self, victim: TaskId, domain: MemcgId) -> OomKill {
        let group = self.mem_cgroup_get_oom_group(victim, domain);
        let threads: Vec<TaskId> = self
            .threads_of(self.tasks[victim].tgid)
            .into_iter()
            .filter(|&t| t != victim)
            .collect();
        self.__oom_kill_process(victim);
        let Some(g) = group else {
            return OomKill {
                threads,
                ..OomKill::default()
            };
        };
        self.memcg_memory_event(g, MemcgEvent::OomGroupKill);
        let members: Vec<TaskId> = self
            .processes()
            .filter(|t| {
                t.oom_score_adj != OOM_SCORE_ADJ_MIN && self.mem_cgroup_is_descendant(t.memcg, g)
            })
            .map(|t| t.id)
            .collect();
        for &t in &members {
            self.__oom_kill_process(t);
        }
        OomKill {
            group: Some(g),
            members,
            threads,
        }
    }

    /// The report's words for an oom_kill_process: the victim's points and, for a group
    /// kill, who else went.
    pub(crate) fn oom_kill_words(&self, v: &OomVictim, kill: &OomKill) -> String {
        let t = &self.tasks[v.task];
        let mut s = format!("killed {}", t.name);
        if !kill.threads.is_empty() {
            let names: Vec<&str> = kill
                .threads
                .iter()
                .map(|&th| self.tasks[th].name.as_str())
                .collect();
            s += &format!(" with its other threads {}", names.join(", "));
        }
        s += &format!(
            " (badness {} pages: resident + swap + page tables",
            v.footprint
        );
        if t.oom_score_adj != 0 {
            s += &format!("; oom_score_adj {}, points {}", t.oom_score_adj, v.points);
        }
        s.push(')');
        if let Some(g) = kill.group {
            let others: Vec<&str> = kill
                .members
                .iter()
                .filter(|&&m| m != v.task)
                .map(|&m| self.tasks[m].name.as_str())
                .collect();
            s += &format!(
                "; memory.oom.group of cgroup {} killed its {} task(s){}{}",
                self.memcgs[g as usize].name,
                kill.members.len(),
                if others.is_empty() { "" } else { ": also " },
                others.join(", ")
            );
        }
        s
    }
}
