//! Workingset detection (mm/workingset.c).
//!
//! When reclaim evicts a page it leaves a shadow entry in the page-cache slot (or, for an
//! anonymous page with `anon-workingset`, v5.9, in the swap slot) recording the lruvec's
//! eviction clock (`inactive_age`, the nonresident age: advanced by every eviction and
//! activation). When the page is faulted back in, the refault distance — how many
//! evictions and activations happened since — is the minimum number of extra inactive
//! slots the page would have needed to stay resident. If that distance is at most the
//! workingset size, the page could have stayed had the active list given way, so it is
//! activated right away (workingset_activate).
//!
//! Per memcg: the shadow records the memcg of the lruvec whose clock it read, and the
//! refault is judged in that lruvec. Up to v5.4 that is the evicted page's own memcg,
//! whose clock alone advances; from v5.5 (`refault-deactivate`) it is the reclaim target
//! (the root for global reclaim), and evictions and activations age the lruvec and every
//! ancestor (workingset_age_nonresident), with hierarchical list sizes. The workingset
//! size is the active file list; from v5.8 (`cache-challenges-anon`) the anon lists too
//! when the memcg can swap (and for an anon refault the inactive file list).
//!
//! Shadow layout: eviction | memcg id (16 bits) | node (10 bits) | PG_workingset (1 bit),
//! then the 2 tag bits of an exceptional (value) entry.

use crate::mm::memcontrol::{MemcgId, NO_MEMCG, ROOT_MEM_CGROUP};
use crate::mm::node::LruList;
use crate::mm::page::{pg, Pfn};
use crate::mm::radix_tree::{NodeId, TreeEvent, RADIX_TREE_NODE_BYTES};
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// NODES_SHIFT: up to 1024 nodes.
pub const NODES_SHIFT: u32 = 10;
/// MEM_CGROUP_ID_SHIFT.
pub const MEM_CGROUP_ID_SHIFT: u32 = 16;
/// WORKINGSET_SHIFT.
pub const WORKINGSET_SHIFT: u32 = 1;
/// Bits of the eviction counter that fit in a shadow entry.
pub const EVICTION_BITS: u32 = 64 - 2 - MEM_CGROUP_ID_SHIFT - NODES_SHIFT - WORKINGSET_SHIFT;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;

/// pack_shadow.
pub fn pack_shadow(eviction: u64, memcg: MemcgId, nid: usize, workingset: bool) -> u64 {
    let mut v = eviction & EVICTION_MASK;
    v = (v << MEM_CGROUP_ID_SHIFT) | u64::from(memcg);
    v = (v << NODES_SHIFT) | nid as u64;
    v = (v << WORKINGSET_SHIFT) | u64::from(workingset);
    v << 2
}

/// unpack_shadow: (eviction, memcg, nid, workingset).
pub fn unpack_shadow(shadow: u64) -> (u64, MemcgId, usize, bool) {
    let mut v = shadow >> 2;
    let workingset = v & 1 == 1;
    v >>= WORKINGSET_SHIFT;
    let nid = (v & ((1 << NODES_SHIFT) - 1)) as usize;
    v >>= NODES_SHIFT;
    let memcg = (v & ((1 << MEM_CGROUP_ID_SHIFT) - 1)) as MemcgId;
    (v >> MEM_CGROUP_ID_SHIFT, memcg, nid, workingset)
}

impl Sim {
    /// workingset_age_nonresident: advance the eviction clock of `memcg`'s lruvec on
    /// `node` (and, from v5.5, of every ancestor's).
    pub fn workingset_age_nonresident(&mut self, memcg: MemcgId, node: usize) {
        self.workingset_age_nonresident_by(memcg, node, 1);
    }

    /// workingset_age_nonresident by `nr` pages (a large folio's activation or eviction).
    pub fn workingset_age_nonresident_by(&mut self, memcg: MemcgId, node: usize, nr: u64) {
        let mut c = Some(if memcg == NO_MEMCG {
            ROOT_MEM_CGROUP
        } else {
            memcg
        });
        while let Some(m) = c {
            self.lruvec_mut(m, node).inactive_age += nr;
            if !self.features.refault_deactivate {
                break;
            }
            c = self.memcgs[m as usize].parent;
        }
    }

    /// workingset_eviction: the shadow entry for a page reclaim of `target`'s subtree
    /// evicts (None when the workingset feature is off).
    pub fn workingset_eviction(&mut self, pfn: Pfn, target: MemcgId) -> Option<u64> {
        if !self.features.workingset {
            return None;
        }
        self.charge_atomic();
        if let Some(f) = self.ops.eviction {
            return Some(f(self, pfn));
        }
        let p = &self.mem[pfn as usize];
        let (node, nr) = (p.node as usize, p.nr_pages());
        let workingset = self.features.workingset_restore && p.test(pg::WORKINGSET);
        let memcg = if self.features.refault_deactivate {
            target
        } else if p.memcg == NO_MEMCG {
            ROOT_MEM_CGROUP
        } else {
            p.memcg
        };
        let eviction = if self.features.anon_workingset {
            // v5.9: the clock is read, then aged.
            let e = self.lruvec(memcg, node).inactive_age;
            self.workingset_age_nonresident_by(memcg, node, nr);
            e
        } else {
            self.workingset_age_nonresident_by(memcg, node, nr);
            self.lruvec(memcg, node).inactive_age
        };
        Some(pack_shadow(eviction, memcg, node, workingset))
    }

    /// workingset_refault: a page (file, or anon from its swap slot) comes back where
    /// `shadow` was. Counts the refault on the page's memcg and, if the refault distance
    /// is within the workingset size, returns true: the caller activates the page
    /// (SetPageActive + workingset_activation). A page that was active before eviction
    /// gets PG_workingset back and counts workingset_restore (v4.20).
    pub fn workingset_refault(&mut self, pfn: Pfn, shadow: u64) -> bool {
        if !self.features.workingset {
            return false;
        }
        if let Some(f) = self.ops.refault {
            return f(self, pfn, shadow);
        }
        let file = !self.mem[pfn as usize].test(pg::SWAPBACKED);
        // A large folio's refault counts its pages (mod_lruvec_state(..., nr)).
        let nr = self.mem[pfn as usize].nr_pages();
        let (eviction, memcg, nid, workingset) = unpack_shadow(shadow);
        if nid >= self.nodes.len() || usize::from(memcg) >= self.memcgs.len() {
            return false;
        }
        let hier = self.features.refault_deactivate;
        let size = |s: &Sim, l: LruList| {
            if hier {
                s.lruvec_page_state_lru(memcg, nid, l)
            } else {
                s.lruvec(memcg, nid).lru_size(l)
            }
        };
        let refault = self.lruvec(memcg, nid).inactive_age;
        let distance = refault.wrapping_sub(eviction) & EVICTION_MASK;
        let split = self.features.anon_workingset;
        self.vmstat.add(VmItem::WorkingsetRefault, nr as i64);
        let item = if file {
            VmItem::WorkingsetRefaultFile
        } else {
            VmItem::WorkingsetRefaultAnon
        };
        if split {
            self.vmstat.add(item, nr as i64);
        }
        self.count_memcg_page_event(pfn, item, nr as i64);
        let mut workingset_size = size(self, LruList::ActiveFile);
        if self.features.cache_challenges_anon {
            if !file {
                workingset_size += size(self, LruList::InactiveFile);
            }
            if self.mem_cgroup_get_nr_swap_pages(memcg) > 0 {
                workingset_size += size(self, LruList::ActiveAnon);
                if file {
                    workingset_size += size(self, LruList::InactiveAnon);
                }
            }
        }
        if distance > workingset_size {
            return false;
        }
        self.vmstat.add(VmItem::WorkingsetActivate, nr as i64);
        let item = if file {
            VmItem::WorkingsetActivateFile
        } else {
            VmItem::WorkingsetActivateAnon
        };
        if split {
            self.vmstat.add(item, nr as i64);
        }
        self.count_memcg_page_event(pfn, item, nr as i64);
        if workingset && self.features.workingset_restore {
            self.mem[pfn as usize].flags |= pg::WORKINGSET;
            let item = if file {
                VmItem::WorkingsetRestoreFile
            } else {
                VmItem::WorkingsetRestoreAnon
            };
            self.vmstat.add(item, nr as i64);
            self.vmstat.add(VmItem::WorkingsetRestore, nr as i64);
            self.count_memcg_page_event(pfn, item, nr as i64);
            // lru_note_cost_refault.
            let p = &self.mem[pfn as usize];
            let (node, m) = (p.node as usize, p.memcg);
            self.lru_note_cost(node, m, file, nr, 0);
        }
        true
    }
}

/// The bytes a page-cache tree node charges its memcg (`xarray-node-kmem`): the
/// radix_tree_node object and the obj_cgroup pointer its slab keeps for it (obj_full_size).
pub const XA_NODE_FULL_SIZE: u64 = RADIX_TREE_NODE_BYTES + std::mem::size_of::<u64>() as u64;

impl Sim {
    /// workingset_update_node's list_lru_add: the leaf holding `index` of `ino` may now
    /// hold only shadow entries; if so, and it is on no list, it joins the list of the
    /// evicted page's memcg (`shadow-lru-limit`; before, one list per node) on the running
    /// CPU's node. Called under tree_lock, after the eviction's store.
    pub fn shadow_node_track(&mut self, ino: u32, index: u64, memcg: MemcgId) {
        let node = self.cur_node();
        let Some((id, count, shadows)) = self.inode(ino).mapping.tree.leaf(index) else {
            return;
        };
        if count != shadows || count == 0 {
            return;
        }
        let m = if self.features.shadow_lru_limit && memcg != NO_MEMCG {
            memcg
        } else {
            ROOT_MEM_CGROUP
        };
        let lv = self.lruvec_idx(m, node);
        self.shadow_seq = self.shadow_seq.wrapping_add(1).max(1);
        let seq = self.shadow_seq;
        if !self
            .inode_mut(ino)
            .mapping
            .tree
            .list_leaf(id, lv as u32, seq)
        {
            return; // already on a list
        }
        let l = &mut self.lruvecs[lv];
        l.nr_shadow_nodes += 1;
        l.shadow_nodes.push_back((ino, id, seq));
        // The queue keeps the entries of nodes that left the list since (their removal
        // from the middle of a list_lru is O(1) in the kernel, not in a queue): drop them
        // once they outnumber the listed nodes.
        if l.shadow_nodes.len() as u64 > 2 * l.nr_shadow_nodes + 1024 {
            let q = std::mem::take(&mut self.lruvecs[lv].shadow_nodes);
            let kept = q
                .into_iter()
                .filter(|&(ino, id, seq)| self.shadow_entry_listed(lv, ino, id, seq))
                .collect();
            self.lruvecs[lv].shadow_nodes = kept;
        }
    }

    /// Whether a shadow-list queue entry is its node's current listing on list `lv`.
    fn shadow_entry_listed(&self, lv: usize, ino: u32, id: NodeId, seq: u32) -> bool {
        self.inodes
            .get(ino as usize)
            .and_then(|i| i.as_ref())
            .and_then(|i| i.mapping.tree.leaf_listing(id))
            == Some((lv as u32, seq))
    }

    /// What the last tree stores of `ino` did besides the store: workingset_update_node's
    /// list_lru_del for the leaves that left their list (a page stored in one, or one
    /// freed), and the memory accounting of the nodes allocated and freed
    /// ([`Sim::xa_node_charge`], [`Sim::xa_node_uncharge`]).
    #[inline]
    pub fn tree_events(&mut self, ino: u32) {
        // Most stores do nothing else: the check inline, the rest out of line.
        if !self.inode(ino).mapping.tree.events.is_empty() {
            self.drain_tree_events(ino);
        }
    }

    /// `tree_events` of a tree that has some.
    #[cold]
    #[inline(never)]
    fn drain_tree_events(&mut self, ino: u32) {
        while let Some(e) = self.inode_mut(ino).mapping.tree.events.pop() {
            match TreeEvent::decode(e) {
                TreeEvent::Unlisted(lv) => self.lruvecs[lv as usize].nr_shadow_nodes -= 1,
                TreeEvent::NodeAlloc(tag) => self.xa_node_charge(tag),
                TreeEvent::NodeFree(tag) => self.xa_node_uncharge(tag),
            }
        }
    }

    /// The charge tag of the page-cache tree nodes an insertion by the current task
    /// allocates: its memcg and the running CPU's node (xas_nomem's kmem_cache_alloc_lru
    /// with __GFP_ACCOUNT charges the current task's memcg).
    #[inline]
    pub fn xa_charge_tag(&self) -> u32 {
        u32::from(self.current_memcg()) | ((self.cur_node() as u32) << 16)
    }

    /// xas_alloc of a page-cache tree node with charge `tag`: counted in its lruvec and,
    /// with `xarray-node-kmem`, charged to its memcg in bytes (obj_cgroup_charge; the
    /// object's size and its slab's obj_cgroup pointer), a page for the byte stock with
    /// reclaim if the cgroup is at its limit (GFP_NOFS: the insertions come from
    /// readahead and write_begin). The kernel allocates the node before the store
    /// (xas_nomem); mmsim charges it after the store, outside the tree lock, and where
    /// that charge would wait (a throttle) or fail it is forced, as a __GFP_NOFAIL charge
    /// is (the next charge's reclaim brings the cgroup back under its limit).
    fn xa_node_charge(&mut self, tag: u32) {
        let (memcg, node) = ((tag & 0xffff) as MemcgId, (tag >> 16) as usize);
        self.lruvec_mut(memcg, node).xa_nodes += 1;
        if self.features.xarray_node_kmem && memcg != ROOT_MEM_CGROUP {
            if self
                .obj_cgroup_precharge(
                    memcg,
                    &[(XA_NODE_FULL_SIZE, crate::mm::page_alloc::Gfp::NOFS)],
                )
                .is_ok()
            {
                self.obj_cgroup_take(memcg, XA_NODE_FULL_SIZE, true);
            } else {
                self.obj_cgroup_charge_forced(memcg, XA_NODE_FULL_SIZE);
            }
        }
    }

    /// xa_node_free of a page-cache tree node charged with `tag`: uncounted and, with
    /// `xarray-node-kmem`, its bytes uncharged (obj_cgroup_uncharge).
    fn xa_node_uncharge(&mut self, tag: u32) {
        let (memcg, node) = ((tag & 0xffff) as MemcgId, (tag >> 16) as usize);
        self.lruvec_mut(memcg, node).xa_nodes -= 1;
        if self.features.xarray_node_kmem && memcg != ROOT_MEM_CGROUP {
            self.obj_cgroup_uncharge(memcg, XA_NODE_FULL_SIZE, true);
        }
    }

    /// Reclaim the oldest shadow-only node on a list (shadow_lru_isolate): a trylock of
    /// the mapping's tree_lock, the node off the list, its shadows cleared, the node freed
    /// (workingset_nodereclaim). False when the list is empty. Queue entries of nodes that
    /// left the list are skipped (they are not on the kernel's list).
    fn shadow_lru_isolate(&mut self, memcg: MemcgId, node: usize) -> bool {
        let lv = self.lruvec_idx(memcg, node);
        let (ino, id) = loop {
            let Some((ino, id, seq)) = self.lruvecs[lv].shadow_nodes.pop_front() else {
                return false;
            };
            if self.shadow_entry_listed(lv, ino, id, seq) {
                break (ino, id);
            }
        };
        self.tree_lock(ino);
        self.inode_mut(ino).mapping.tree.unlist_leaf(id);
        self.lruvecs[lv].nr_shadow_nodes -= 1;
        let n = self.inode_mut(ino).mapping.tree.clear_leaf_shadows(id);
        self.tree_events(ino);
        self.tree_unlock(ino);
        self.inode_maybe_shrinkable(ino);
        if n > 0 {
            self.vmstat.inc(VmItem::WorkingsetNodereclaim);
            self.count_memcg_events(memcg, VmItem::WorkingsetNodereclaim, 1);
        }
        true
    }

    /// scan_shadow_nodes (v4.2): the shadow-node shrinker. Shadow-only radix-tree nodes
    /// beyond present pages / 16 (in nodes) are reclaimed oldest first, up to a batch of
    /// 128 (SHRINK_BATCH) per call.
    pub fn scan_shadow_nodes(&mut self, node: usize) {
        let max_nodes = (u64::from(self.nodes[node].present_pages) >> 4) as usize;
        if self.lruvec(ROOT_MEM_CGROUP, node).nr_shadow_nodes as usize <= max_nodes {
            return;
        }
        let prev = self.enter(crate::machine::profile::KFunc::ScanShadowNodes);
        let mut budget: i64 = 128; // SHRINK_BATCH
        while self.lruvec(ROOT_MEM_CGROUP, node).nr_shadow_nodes as usize > max_nodes && budget > 0
        {
            budget -= 1;
            if !self.shadow_lru_isolate(ROOT_MEM_CGROUP, node) {
                break;
            }
        }
        // do_shrink_slab counts what a shrinker scanned in slabs_scanned, this one too.
        self.vmstat.add(VmItem::SlabsScanned, 128 - budget);
        self.leave(prev);
    }

    /// The shadow-node shrinker of `shadow-lru-limit` for one memcg and node:
    /// count_shadow_nodes allows (the lruvec's LRU pages + its slab: the pages of its
    /// shadow nodes and its VFS objects') / 8 nodes; do_shrink_slab scans half the excess
    /// (seeks 0) plus the deferred work scaled by priority, in batches of 128, and defers
    /// what it did not do.
    pub fn scan_shadow_nodes_memcg(&mut self, node: usize, memcg: MemcgId, priority: u32) {
        let nodes = self.lruvec(memcg, node).nr_shadow_nodes;
        if nodes == 0 {
            return;
        }
        let lv = self.lruvec(memcg, node);
        // lruvec_page_state_local of the LRU lists and of the VFS objects' slab: as the last
        // flush left them from 6.11 (`memcg-stats-ratelimited`: count_shadow_nodes' flush is
        // ratelimited).
        let (lru_pages, vfs_slab) = if self.features.memcg_stats_ratelimited {
            (lv.flushed.lru_local, lv.flushed.slab_local)
        } else {
            (lv.nr_lru_pages(), self.lruvec_vfs_slab_pages(memcg, node))
        };
        // Without `xarray-node-kmem` the tree nodes are no cgroup's slab: count the shadow
        // nodes' own, as an estimate of what the kernel's slab term holds of them.
        let slab_pages = if self.features.xarray_node_kmem {
            vfs_slab
        } else {
            nodes * RADIX_TREE_NODE_BYTES / crate::mm::page::PAGE_SIZE + vfs_slab
        };
        let max_nodes = (lru_pages + slab_pages) >> 3;
        if nodes <= max_nodes {
            return;
        }
        let prev = self.enter(crate::machine::profile::KFunc::ScanShadowNodes);
        let freeable = nodes - max_nodes;
        let nr = std::mem::take(&mut self.lruvec_mut(memcg, node).shadow_nr_deferred);
        let delta = freeable / 2;
        let mut total_scan = ((nr >> priority) + delta).min(2 * freeable);
        let mut scanned = 0u64;
        const BATCH: u64 = 128;
        while total_scan >= BATCH || total_scan >= freeable {
            let nr_to_scan = BATCH.min(total_scan);
            for _ in 0..nr_to_scan {
                if !self.shadow_lru_isolate(memcg, node) {
                    break;
                }
            }
            // do_shrink_slab: slabs_scanned counts each batch (shrinkctl->nr_scanned).
            self.vmstat.add(VmItem::SlabsScanned, nr_to_scan as i64);
            total_scan -= nr_to_scan;
            scanned += nr_to_scan;
            if self.lruvec(memcg, node).nr_shadow_nodes == 0 || nr_to_scan == 0 {
                break;
            }
        }
        let next = (nr + delta).saturating_sub(scanned).min(2 * freeable);
        self.lruvec_mut(memcg, node).shadow_nr_deferred = next;
        self.leave(prev);
    }
}
