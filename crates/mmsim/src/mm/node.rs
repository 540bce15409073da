//! Nodes (pglist_data) and their LRU vectors.
//!
//! Each node has one zone (ZONE_NORMAL) in this model: free pages, watermarks and the
//! lruvec live on the node, as they do per node from v4.8 (per zone before; with one zone
//! per node the two agree). The LRU lists keep the kernel's order — the most recently added
//! page at the head, reclaim scanning from the tail — in rings of pfns (`mm::lru_deque`),
//! as MGLRU's generations are; a node's free list is a stack of freed frames over the
//! frames not yet taken since boot (`FreeList`).

use crate::machine::SpinLock;
use crate::mm::page::{Pfn, NIL};

/// enum lru_list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LruList {
    /// LRU_INACTIVE_ANON.
    InactiveAnon = 0,
    /// LRU_ACTIVE_ANON.
    ActiveAnon = 1,
    /// LRU_INACTIVE_FILE.
    InactiveFile = 2,
    /// LRU_ACTIVE_FILE.
    ActiveFile = 3,
    /// LRU_UNEVICTABLE.
    Unevictable = 4,
}

/// NR_LRU_LISTS.
pub const NR_LRU_LISTS: usize = 5;

impl LruList {
    /// Every list.
    pub const ALL: [LruList; NR_LRU_LISTS] = [
        LruList::InactiveAnon,
        LruList::ActiveAnon,
        LruList::InactiveFile,
        LruList::ActiveFile,
        LruList::Unevictable,
    ];
    /// The list for a page with these properties (page_lru).
    pub fn of(active: bool, file: bool, unevictable: bool) -> LruList {
        match (unevictable, file, active) {
            (true, _, _) => LruList::Unevictable,
            (false, false, false) => LruList::InactiveAnon,
            (false, false, true) => LruList::ActiveAnon,
            (false, true, false) => LruList::InactiveFile,
            (false, true, true) => LruList::ActiveFile,
        }
    }
    /// The vmstat gauge counting this list.
    pub fn vmstat_item(self) -> crate::mm::vmstat::VmItem {
        use crate::mm::vmstat::VmItem;
        match self {
            LruList::InactiveAnon => VmItem::NrInactiveAnon,
            LruList::ActiveAnon => VmItem::NrActiveAnon,
            LruList::InactiveFile => VmItem::NrInactiveFile,
            LruList::ActiveFile => VmItem::NrActiveFile,
            LruList::Unevictable => VmItem::NrUnevictable,
        }
    }
}

/// A node's order-0 free list (the zone's free_area[0] with its per-CPU lists folded in):
/// boot links every frame in pfn order, a freed page goes on the head, an allocation takes
/// the head. So the list is the freed pages, most recent first, followed by the frames no
/// one has taken since boot, in pfn order — kept as exactly that: a stack and a range, no
/// links through the pages (taking the head does not write to the page behind it).
#[derive(Clone, Debug, Default)]
pub struct FreeList {
    /// Freed pages; the last is the head.
    freed: Vec<Pfn>,
    /// The frames never taken since boot: `fresh.0..fresh.1`.
    fresh: (Pfn, Pfn),
    /// Free pages.
    pub len: u64,
}

impl FreeList {
    /// Every frame of `start..start + nr` free, in pfn order (init_page_alloc).
    pub fn boot(start: Pfn, nr: u32) -> FreeList {
        FreeList {
            freed: Vec::new(),
            fresh: (start, start + nr),
            len: u64::from(nr),
        }
    }

    /// The page an allocation takes next, or NIL.
    pub fn head(&self) -> Pfn {
        match self.freed.last() {
            Some(&pfn) => pfn,
            None if self.fresh.0 < self.fresh.1 => self.fresh.0,
            None => NIL,
        }
    }

    /// Take the head (__rmqueue).
    #[inline]
    pub fn pop_head(&mut self) -> Option<Pfn> {
        let pfn = match self.freed.pop() {
            Some(pfn) => pfn,
            None if self.fresh.0 < self.fresh.1 => {
                self.fresh.0 += 1;
                self.fresh.0 - 1
            }
            None => return None,
        };
        self.len -= 1;
        Some(pfn)
    }

    /// Put a freed page on the head (free_hot_cold_page).
    #[inline]
    pub fn add_head(&mut self, pfn: Pfn) {
        self.freed.push(pfn);
        self.len += 1;
    }

    /// Walk from head to tail (for the checker).
    pub fn iter(&self) -> impl Iterator<Item = Pfn> + '_ {
        self.freed
            .iter()
            .rev()
            .copied()
            .chain(self.fresh.0..self.fresh.1)
    }
}

/// The hierarchical lruvec counters as the last rstat flush left them
/// (`Sim::memcg_stats_flush`): what lruvec_page_state returns between flushes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlushedStats {
    /// NR_INACTIVE_ANON, NR_ACTIVE_ANON, NR_INACTIVE_FILE, NR_ACTIVE_FILE of the memcg and
    /// its descendants, indexed by `LruList`.
    pub lru: [u64; 4],
    /// WORKINGSET_ACTIVATE_ANON and _FILE of the memcg and its descendants.
    pub activate: [u64; 2],
    /// The pages on this lruvec's own lists, the unevictable one included
    /// (lruvec_page_state_local of NR_LRU_BASE + i: the shadow-node shrinker's count).
    pub lru_local: u64,
    /// Its own slab, in pages (`Sim::lruvec_vfs_slab_pages`).
    pub slab_local: u64,
}

/// struct lruvec: the LRU lists of a node and the reclaim statistics that balance them.
#[derive(Clone, Debug, Default)]
pub struct Lruvec {
    /// The lists.
    pub lists: [crate::mm::lru_deque::LruDeque; NR_LRU_LISTS],
    /// reclaim_stat.recent_scanned[anon, file].
    pub recent_scanned: [u64; 2],
    /// reclaim_stat.recent_rotated[anon, file].
    pub recent_rotated: [u64; 2],
    /// inactive_age (nonresident_age from 5.9): the workingset eviction clock.
    pub inactive_age: u64,
    /// anon_cost: reclaim cost of the anon lists (lru_note_cost, v5.8).
    pub anon_cost: u64,
    /// file_cost.
    pub file_cost: u64,
    /// refaults[anon, file]: workingset_activate at the last reclaim cycle's end
    /// (snapshot_refaults, v5.5).
    pub refaults: [u64; 2],
    /// The statistics reclaim reads as of the last memcg stats flush (`memcg-stats-ratelimited`,
    /// v6.12: lruvec_page_state of the rstat-flushed counters).
    pub flushed: FlushedStats,
    /// Shadow-only radix-tree nodes of this lruvec's pages, oldest first (the memcg- and
    /// node-aware workingset_shadow_nodes list_lru).
    /// Queue entries: (inode, leaf, the listing's sequence number); an entry whose leaf
    /// has since left the list (or joined it again) is stale and skipped.
    pub shadow_nodes: std::collections::VecDeque<(u32, crate::mm::radix_tree::NodeId, u32)>,
    /// Shadow-only nodes on this list (list_lru_count): the queue's entries that are
    /// their leaf's current listing.
    pub nr_shadow_nodes: u64,
    /// The shadow shrinker's deferred scan count (nr_deferred).
    pub shadow_nr_deferred: u64,
    /// LRUVEC_CGROUP_CONGESTED / LRUVEC_NODE_CONGESTED: every dirty page reclaim met was
    /// already under writeback (v5.16).
    pub congested: bool,
    /// The multi-generational LRU of this lruvec (used under `policy = "mglru"`).
    pub lrugen: crate::mm::lru_gen::LruGenFolio,
    /// lruvec->lru_lock (v5.11, `lruvec-lru-lock`); unused before, where the node's lock
    /// guards every lruvec on it.
    pub lru_lock: crate::machine::SpinLock,
    /// The VFS caches' slabs and list_lrus of this memcg and node.
    pub vfs: crate::mm::slab::VfsLruvec,
    /// Page-cache tree nodes charged to this memcg on this node (`xarray-node-kmem`: the
    /// radix_tree_node objects its tasks' page-cache insertions allocated).
    pub xa_nodes: u64,
}

impl Lruvec {
    /// Pages on all of this lruvec's lists, the unevictable one included (the sum of
    /// lruvec_page_state_local over NR_LRU_BASE + i).
    pub fn nr_lru_pages(&self) -> u64 {
        LruList::ALL.iter().map(|&l| self.lru_size(l)).sum()
    }

    /// lruvec_lru_size: pages counted on `lru` — the list, or under MGLRU the generations
    /// counted as that list (lru_gen_update_size's compatibility sizes).
    #[inline]
    pub fn lru_size(&self, lru: LruList) -> u64 {
        let i = lru as usize;
        self.lists[i].len + if i < 4 { self.lrugen.lru_size[i] } else { 0 }
    }
}

/// Watermarks of the node's zone (WMARK_MIN, WMARK_LOW, WMARK_HIGH), in pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Watermarks {
    /// WMARK_MIN.
    pub min: u64,
    /// WMARK_LOW.
    pub low: u64,
    /// WMARK_HIGH.
    pub high: u64,
}

/// struct pglist_data with its single zone.
#[derive(Clone, Debug)]
pub struct PgData {
    /// Node id.
    pub id: usize,
    /// First PFN of the node.
    pub start_pfn: Pfn,
    /// Pages in the node (present = managed here).
    pub present_pages: u32,
    /// Free pages (order-0 free list).
    pub free_list: FreeList,
    /// Watermarks.
    pub watermark: Watermarks,
    /// zone->lru_lock.
    pub lru_lock: SpinLock,
    /// zone->lock (buddy allocator).
    pub zone_lock: SpinLock,
    /// node_page_state(NR_FILE_DIRTY) + node_page_state(NR_WRITEBACK): what node_dirty_ok
    /// holds to the node's dirty limit.
    pub nr_dirty_writeback: u64,
}

impl PgData {
    /// A node of `nr` pages starting at `start_pfn`, all free.
    pub fn new(id: usize, start_pfn: Pfn, nr: u32) -> PgData {
        PgData {
            id,
            start_pfn,
            present_pages: nr,
            free_list: FreeList::boot(start_pfn, nr),
            watermark: Watermarks::default(),
            lru_lock: SpinLock::default(),
            zone_lock: SpinLock::default(),
            nr_dirty_writeback: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn boot_frames_go_in_pfn_order_after_the_freed_ones_most_recent_first() {
        let mut f = FreeList::boot(100, 4);
        assert_eq!(f.pop_head(), Some(100));
        assert_eq!(f.pop_head(), Some(101));
        f.add_head(100);
        f.add_head(101);
        assert_eq!(f.iter().collect::<Vec<_>>(), vec![101, 100, 102, 103]);
        assert_eq!((f.head(), f.len), (101, 4));
        for want in [101, 100, 102, 103] {
            assert_eq!(f.pop_head(), Some(want));
        }
        assert_eq!((f.pop_head(), f.head(), f.len), (None, NIL, 0));
    }

    proptest! {
        /// Any sequence of allocations and frees leaves the list in the order of the
        /// linked list boot builds (every frame added at the tail, frees at the head).
        #[test]
        fn the_free_list_is_the_linked_lists_order(ops in proptest::collection::vec(0usize..1000, 0..300)) {
            let mut f = FreeList::boot(7, 20);
            let mut model: Vec<Pfn> = (7..27).collect();
            let mut taken: Vec<Pfn> = Vec::new();
            for op in ops {
                if op % 2 == 0 || taken.is_empty() {
                    let got = f.pop_head();
                    let want = if model.is_empty() { None } else { Some(model.remove(0)) };
                    prop_assert_eq!(got, want);
                    taken.extend(got);
                } else {
                    let pfn = taken.remove(op % taken.len());
                    f.add_head(pfn);
                    model.insert(0, pfn);
                }
                prop_assert_eq!(f.iter().collect::<Vec<_>>(), model.clone());
                prop_assert_eq!(f.len, model.len() as u64);
                prop_assert_eq!(f.head(), model.first().copied().unwrap_or(NIL));
            }
        }
    }
}
