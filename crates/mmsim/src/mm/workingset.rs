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
