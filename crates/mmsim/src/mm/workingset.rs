//! Workingset detection (mm/workingset.c).
//!
//! When reclaim evicts a file page it leaves a shadow entry in the page-cache slot recording
//! the node's eviction clock (`inactive_age`, advanced by every eviction and activation).
//! When the page is faulted back in, the refault distance — how many evictions and
//! activations happened since — is the minimum number of extra inactive slots the page
//! would have needed to stay cached. If that distance is at most the size of the active
//! file list, the page could have stayed had the active list given way, so it is activated
//! right away (workingset_activate).
//!
//! Shadow layout: ((eviction << NODES_SHIFT | nid) << 2) — the zone id is dropped because
//! each node has one zone here; the low 2 bits are the exceptional-entry tag in the kernel.

use crate::mm::node::LruList;
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// NODES_SHIFT: up to 1024 nodes.
pub const NODES_SHIFT: u32 = 10;
/// Bits of the eviction counter that fit in a shadow entry.
pub const EVICTION_BITS: u32 = 62 - 2 - NODES_SHIFT;
const EVICTION_MASK: u64 = (1 << EVICTION_BITS) - 1;

/// pack_shadow.
pub fn pack_shadow(eviction: u64, nid: usize) -> u64 {
    (((eviction & EVICTION_MASK) << NODES_SHIFT) | nid as u64) << 2
}

/// unpack_shadow: (eviction, nid).
pub fn unpack_shadow(shadow: u64) -> (u64, usize) {
    let v = shadow >> 2;
    (v >> NODES_SHIFT, (v & ((1 << NODES_SHIFT) - 1)) as usize)
}

impl Sim {
    /// workingset_eviction: advance the node's clock and return the shadow to store (None
    /// when the workingset feature is off).
    pub fn workingset_eviction(&mut self, node: usize) -> Option<u64> {
        if !self.features.workingset {
            return None;
        }
        self.charge_atomic();
        let lv = &mut self.nodes[node].lruvec;
        lv.inactive_age += 1;
        Some(pack_shadow(lv.inactive_age, node))
    }

    /// workingset_refault: true if the page should be activated on refault.
    pub fn workingset_refault(&mut self, shadow: u64) -> bool {
        if !self.features.workingset {
            return false;
        }
        let (eviction, nid) = unpack_shadow(shadow);
        if nid >= self.nodes.len() {
            return false;
        }
        let refault = self.nodes[nid].lruvec.inactive_age;
        let distance = refault.wrapping_sub(eviction) & EVICTION_MASK;
        self.vmstat.inc(VmItem::WorkingsetRefault);
        let active_file = self.nodes[nid].lruvec.lists[LruList::ActiveFile as usize].len;
        if distance <= active_file {
            self.vmstat.inc(VmItem::WorkingsetActivate);
            true
        } else {
            false
        }
    }
}

impl Sim {
    /// Record that the leaf holding `index` of `ino` may now hold only shadow entries
    /// (list_lru_add of workingset_update_node). Called under tree_lock after an eviction.
    pub fn shadow_node_track(&mut self, ino: u32, index: u64) {
        let node = self.cur_node();
        if let Some((id, count, shadows)) = self.inode(ino).mapping.tree.leaf(index) {
            // The evicted page was the leaf's last page exactly when no page is left: the
            // node has just become shadow-only.
            if count == shadows && count > 0 {
                self.reclaim[node].shadow_nodes.push_back((ino, id));
            }
        }
    }

    /// scan_shadow_nodes: the shadow-node shrinker. Shadow-only radix-tree nodes beyond
    /// present pages / 16 (v4.2's limit, in nodes) are reclaimed oldest first: each costs a
    /// trylock of the mapping's tree_lock, its shadows are cleared and the node is freed
    /// (workingset_nodereclaim). Queue entries whose node has since gained a page or was
    /// freed are dropped without counting.
    pub fn scan_shadow_nodes(&mut self, node: usize) {
        let max_nodes = (u64::from(self.nodes[node].present_pages) >> 4) as usize;
        if self.reclaim[node].shadow_nodes.len() <= max_nodes {
            return;
        }
        let prev = self.enter(crate::machine::profile::KFunc::ScanShadowNodes);
        let mut budget = 128; // SHRINK_BATCH
        while self.reclaim[node].shadow_nodes.len() > max_nodes && budget > 0 {
            budget -= 1;
            let Some((ino, id)) = self.reclaim[node].shadow_nodes.pop_front() else {
                break;
            };
            let Some(inode) = self.inodes.get(ino as usize).and_then(|i| i.as_ref()) else {
                continue;
            };
            let Some((count, shadows, _)) = inode.mapping.tree.leaf_counts(id) else {
                continue;
            };
            if count != shadows || shadows == 0 {
                continue;
            }
            self.tree_lock(ino);
            let n = self.inode_mut(ino).mapping.tree.clear_leaf_shadows(id);
            self.tree_unlock(ino);
            if n > 0 {
                self.vmstat.inc(VmItem::WorkingsetNodereclaim);
            }
        }
        self.leave(prev);
    }
}
