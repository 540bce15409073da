//! The cgroup v1 memory controller's soft limit (mm/memcontrol-v1.c):
//! memory.soft_limit_in_bytes (`[[cgroups]] soft_limit`, `cgroup_version = 1` only).
//!
//! - **Events**: every folio charged or uncharged (kernel pages not) adds its pages to the
//!   memcg's per-CPU event count (memcg1_charge_statistics, memcg1_uncharge_batch; a
//!   swapped-out page's, memcg1_swapout's in the kernel, when reclaim frees it); memcg1_check_events then looks at most every 128 events of a CPU
//!   (THRESHOLDS_EVENTS_TARGET) and, at most every 1,024 (SOFTLIMIT_EVENTS_TARGET),
//!   updates the soft limit tree of the folio's node (mem_cgroup_event_ratelimit).
//! - **The tree** (memcg1_update_tree): the memcg and each ancestor whose usage is above
//!   its soft limit, or that is on the tree, is put back at its current excess (usage −
//!   soft limit); a memcg with none leaves it. One tree per node, ordered by excess, the
//!   excess as of the last update (rb-tree order: the last of equal excesses is rightmost).
//! - **Reclaim** (memcg1_soft_limit_reclaim), before shrink_node in kswapd's balance_pgdat
//!   and in global direct reclaim (shrink_zones), for order-0 reclaim under the classic
//!   LRU: the memcg of the largest excess leaves the tree (one with no excess left is
//!   dropped and the next taken), and mem_cgroup_soft_reclaim walks its subtree with the
//!   node's reclaim iterator (mem_cgroup_iter with a cookie: each walk goes on where the
//!   last stopped), reclaiming each memcg's own lruvec on the node with
//!   mem_cgroup_shrink_node — shrink_lruvec at priority 0 (anon and file scanned equally
//!   when swappiness allows), SWAP_CLUSTER_MAX pages, no deactivation (sc.may_deactivate
//!   is 0 since 5.5) — until the subtree is under its soft limit, or after two whole walks
//!   that reclaimed a quarter of the excess (or nothing), at most 100. The memcg goes back
//!   on the tree at its new excess; one that gave nothing is followed by the next largest,
//!   up to twice more.
//!
//! Modelled as 4.8 and later have it (per-node trees; the 2.6.32–4.7 kernels kept them per
//! zone, the same on one-zone nodes). Under MGLRU memcg1_soft_limit_reclaim returns at once
//! (6.3+, `lru_gen_enabled`) and the tree is not kept; 6.3's lru_gen_soft_reclaim, which
//! moves a memcg above its soft limit to the head of the memcg LRU, is not modelled.

use super::memcontrol::MemcgId;
use super::page_alloc::Gfp;
use super::vmscan::{ScanControl, SWAP_CLUSTER_MAX};
use crate::sim::Sim;

/// THRESHOLDS_EVENTS_TARGET: events of a CPU between two looks of memcg1_check_events.
const THRESHOLDS_EVENTS_TARGET: u64 = 128;
/// SOFTLIMIT_EVENTS_TARGET: events of a CPU between two soft limit tree updates.
const SOFTLIMIT_EVENTS_TARGET: u64 = 1024;
/// MEM_CGROUP_MAX_RECLAIM_LOOPS: whole walks of a subtree in one mem_cgroup_soft_reclaim.
const MEM_CGROUP_MAX_RECLAIM_LOOPS: u32 = 100;
/// MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS: memcgs tried without progress.
const MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS: u32 = 2;

/// A memcg's per-CPU event counts (memcg1_events_percpu): events and the two targets.
#[derive(Clone, Copy, Debug, Default)]
struct CpuEvents {
    nr_page_events: u64,
    thresh_target: u64,
    softlimit_target: u64,
}

/// A memcg's place in a node's tree (mem_cgroup_per_node's tree_node, usage_in_excess).
#[derive(Clone, Copy, Debug, Default)]
struct TreeNode {
    on_tree: bool,
    usage_in_excess: u64,
    /// Insertion order: among equal excesses the last inserted is the rightmost.
    seq: u64,
}

/// The soft limit trees and the v1 event counts (absent work when no cgroup has a soft
/// limit: `active` false).
#[derive(Clone, Debug, Default)]
pub struct SoftLimitTree {
    /// Some cgroup has a soft limit (on cgroup v1).
    pub active: bool,
    nodes: usize,
    cpus: usize,
    /// [memcg * cpus + cpu].
    events: Vec<CpuEvents>,
    /// [memcg * nodes + node].
    tree: Vec<TreeNode>,
    /// The reclaim iterator of mem_cgroup_soft_reclaim: [root memcg * nodes + node], the
    /// last memcg it returned (None: a new walk starts at the root).
    iter: Vec<Option<MemcgId>>,
    next_seq: u64,
}

impl SoftLimitTree {
    /// State for `memcgs` memcgs on `nodes` nodes and `cpus` CPUs; `active` when some
    /// cgroup has a soft limit.
    pub fn new(active: bool, memcgs: usize, nodes: usize, cpus: usize) -> SoftLimitTree {
        if !active {
            return SoftLimitTree::default();
        }
        SoftLimitTree {
            active,
            nodes,
            cpus,
            events: vec![CpuEvents::default(); memcgs * cpus],
            tree: vec![TreeNode::default(); memcgs * nodes],
            iter: vec![None; memcgs * nodes],
            next_seq: 0,
        }
    }

    /// Whether `m` is on `node`'s tree, and at what excess (tests).
    pub fn on_tree(&self, m: MemcgId, node: usize) -> Option<u64> {
        let t = self.tree.get(m as usize * self.nodes + node)?;
        t.on_tree.then_some(t.usage_in_excess)
    }
}

impl Sim {
    /// soft_limit_excess: pages of `m`'s memory counter above its soft limit.
    pub fn soft_limit_excess(&self, m: MemcgId) -> u64 {
        let mc = &self.memcgs[m as usize];
        mc.usage.saturating_sub(mc.soft_limit)
    }

    /// memcg1_charge_statistics' and memcg1_uncharge_batch's event count (`nr` pages of
    /// the folio at `pfn`) and memcg1_check_events for the folio's node: the soft limit
    /// tree's update, rate-limited per CPU.
    #[inline(always)]
    pub(crate) fn memcg1_events(&mut self, m: MemcgId, nr: u64, pfn: super::page::Pfn) {
        // Without soft limits nothing reads the counts: the charge paths pay one test.
        if self.soft_limit.active {
            self.memcg1_events_count(m, nr, pfn);
        }
    }

    /// [`Sim::memcg1_events`]'s work, out of the charge paths.
    #[inline(never)]
    fn memcg1_events_count(&mut self, m: MemcgId, nr: u64, pfn: super::page::Pfn) {
        if m == super::memcontrol::NO_MEMCG {
            return;
        }
        let nid = self.mem[pfn as usize].node as usize;
        let cpu = self.cur.cpu;
        let cpus = self.soft_limit.cpus;
        let e = &mut self.soft_limit.events[m as usize * cpus + cpu];
        e.nr_page_events += nr;
        // mem_cgroup_event_ratelimit: the target passed?
        let val = e.nr_page_events;
        if (e.thresh_target.wrapping_sub(val) as i64) >= 0 {
            return;
        }
        e.thresh_target = val + THRESHOLDS_EVENTS_TARGET;
        if (e.softlimit_target.wrapping_sub(val) as i64) >= 0 {
            return;
        }
        e.softlimit_target = val + SOFTLIMIT_EVENTS_TARGET;
        self.memcg1_update_tree(m, nid);
    }

    /// memcg1_update_tree: `m` and its ancestors back on `nid`'s tree at their excess (off
    /// it when they have none). MGLRU keeps no tree.
    fn memcg1_update_tree(&mut self, m: MemcgId, nid: usize) {
        if self.lru_gen_enabled() {
            return;
        }
        let mut c = Some(m);
        while let Some(id) = c {
            let excess = self.soft_limit_excess(id);
            let i = id as usize * self.soft_limit.nodes + nid;
            if excess > 0 || self.soft_limit.tree[i].on_tree {
                self.soft_limit.tree[i].on_tree = false;
                self.insert_exceeded(id, nid, excess);
            }
            c = self.memcgs[id as usize].parent;
        }
    }

    /// __mem_cgroup_insert_exceeded: on `nid`'s tree at `excess` (nothing when 0).
    fn insert_exceeded(&mut self, m: MemcgId, nid: usize, excess: u64) {
        let t = &mut self.soft_limit;
        let n = &mut t.tree[m as usize * t.nodes + nid];
        if n.on_tree {
            return;
        }
        n.usage_in_excess = excess;
        if excess == 0 {
            return;
        }
        n.on_tree = true;
        n.seq = t.next_seq;
        t.next_seq += 1;
    }

    /// __mem_cgroup_largest_soft_limit_node: the rightmost memcg of `nid`'s tree, taken
    /// off it; one whose usage is no longer above its soft limit is dropped and the next
    /// taken.
    fn largest_soft_limit_node(&mut self, nid: usize) -> Option<MemcgId> {
        loop {
            let t = &self.soft_limit;
            let best = (0..self.memcgs.len())
                .filter(|&m| t.tree[m * t.nodes + nid].on_tree)
                .max_by_key(|&m| {
                    let n = &t.tree[m * t.nodes + nid];
                    (n.usage_in_excess, n.seq)
                })? as MemcgId;
            let i = best as usize * self.soft_limit.nodes + nid;
            self.soft_limit.tree[i].on_tree = false;
            if self.soft_limit_excess(best) > 0 {
                return Some(best);
            }
        }
    }

    /// memcg1_soft_limit_reclaim for node `nid` (kswapd's balance_pgdat and global direct
    /// reclaim, before shrink_node): returns (pages reclaimed, pages scanned).
    pub(crate) fn memcg1_soft_limit_reclaim(
        &mut self,
        nid: usize,
        gfp: Gfp,
        is_kswapd: bool,
    ) -> (u64, u64) {
        if !self.soft_limit.active || self.lru_gen_enabled() {
            return (0, 0);
        }
        let t = &self.soft_limit;
        if !(0..self.memcgs.len()).any(|m| t.tree[m * t.nodes + nid].on_tree) {
            return (0, 0);
        }
        let (mut nr_reclaimed, mut scanned) = (0u64, 0u64);
        let mut next: Option<MemcgId> = None;
        let mut loops = 0;
        while let Some(m) = next.take().or_else(|| self.largest_soft_limit_node(nid)) {
            let reclaimed = self.mem_cgroup_soft_reclaim(m, nid, gfp, is_kswapd, &mut scanned);
            nr_reclaimed += reclaimed;
            if reclaimed == 0 {
                next = self.largest_soft_limit_node(nid);
            }
            let excess = self.soft_limit_excess(m);
            self.insert_exceeded(m, nid, excess);
            loops += 1;
            if nr_reclaimed == 0
                && (next.is_none() || loops > MEM_CGROUP_MAX_SOFT_LIMIT_RECLAIM_LOOPS)
            {
                break;
            }
            if nr_reclaimed > 0 || self.reclaim_pass_sleeps() {
                break;
            }
        }
        // A memcg taken as the next one but not reclaimed goes back (css_put only in the
        // kernel: it is off the tree until its next update).
        (nr_reclaimed, scanned)
    }

    /// mem_cgroup_soft_reclaim: reclaim `root`'s subtree on `nid` through the node's
    /// reclaim iterator until it is under its soft limit.
    fn mem_cgroup_soft_reclaim(
        &mut self,
        root: MemcgId,
        nid: usize,
        gfp: Gfp,
        is_kswapd: bool,
        scanned: &mut u64,
    ) -> u64 {
        let excess = self.soft_limit_excess(root);
        let mut total = 0u64;
        let mut loops = 0u32;
        let slot = root as usize * self.soft_limit.nodes + nid;
        loop {
            // mem_cgroup_iter(root, victim, &reclaim): the next memcg of the subtree in
            // pre-order after the iterator's position, None at the end of a walk.
            let end = self.memcgs[root as usize].subtree_end;
            let victim = match self.soft_limit.iter[slot] {
                None => Some(root),
                Some(p) if p + 1 < end => Some(p + 1),
                Some(_) => None,
            };
            self.soft_limit.iter[slot] = victim;
            let Some(victim) = victim else {
                loops += 1;
                if loops >= 2
                    && (total == 0 || total >= excess >> 2 || loops > MEM_CGROUP_MAX_RECLAIM_LOOPS)
                {
                    break;
                }
                continue;
            };
            let (r, s) = self.mem_cgroup_shrink_node(victim, nid, gfp, is_kswapd);
            total += r;
            *scanned += s;
            // The reclaimer is to sleep (a throttle shrink_lruvec set): stop here.
            if self.soft_limit_excess(root) == 0 || self.reclaim_pass_sleeps() {
                break;
            }
        }
        total
    }

    /// mem_cgroup_shrink_node: shrink_lruvec of `memcg`'s own lruvec on `nid` at priority
    /// 0 for SWAP_CLUSTER_MAX pages, swapping allowed, without deactivation (the scan
    /// control is the kernel's zero-initialised one: sc.may_deactivate 0 from 5.5).
    /// Returns (reclaimed, scanned).
    fn mem_cgroup_shrink_node(
        &mut self,
        memcg: MemcgId,
        nid: usize,
        gfp: Gfp,
        is_kswapd: bool,
    ) -> (u64, u64) {
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, is_kswapd, gfp);
        sc.target_memcg = memcg;
        sc.priority = 0;
        if self.features.refault_deactivate {
            sc.may_deactivate = 0;
        }
        self.shrink_lruvec(nid, memcg, &mut sc);
        (sc.nr_reclaimed, sc.nr_scanned)
    }
}
