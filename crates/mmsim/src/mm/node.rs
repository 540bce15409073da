//! Nodes (pglist_data) and their LRU vectors.
//!
//! Each node has one zone (ZONE_NORMAL) in this model: free pages, watermarks and the
//! lruvec live on the node, as they do per node from v4.8 (per zone before; with one zone
//! per node the two agree). The LRU lists keep the kernel's order — the most recently added
//! page at the head, reclaim scanning from the tail — in rings of pfns (`mm::lru_deque`);
//! the free lists and MGLRU's generations are intrusive, linked through `Page::prev/next`.

use crate::machine::SpinLock;
use crate::mm::page::{Page, Pfn, NIL};

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

/// The head of an intrusive list of pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListHead {
    /// Most recently added page.
    pub head: Pfn,
    /// Oldest page.
    pub tail: Pfn,
    /// Length, in pages: a large folio's head counts its folio's pages (lru_size counts
    /// pages, not folios).
    pub len: u64,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl ListHead {
    /// list_add: insert at the head.
    pub fn add_head(&mut self, mem: &mut [Page], pfn: Pfn) {
        let old = self.head;
        {
            let p = &mut mem[pfn as usize];
            p.prev = NIL;
            p.next = old;
        }
        if old == NIL {
            self.tail = pfn;
        } else {
            mem[old as usize].prev = pfn;
        }
        self.head = pfn;
        self.len += mem[pfn as usize].nr_pages();
    }
    /// list_add_tail: insert at the tail.
    pub fn add_tail(&mut self, mem: &mut [Page], pfn: Pfn) {
        let old = self.tail;
        {
            let p = &mut mem[pfn as usize];
            p.next = NIL;
            p.prev = old;
        }
        if old == NIL {
            self.head = pfn;
        } else {
            mem[old as usize].next = pfn;
        }
        self.tail = pfn;
        self.len += mem[pfn as usize].nr_pages();
    }
    /// list_del. (Inline: each page the LRU isolates and each the allocator takes off a
    /// free list goes through it.)
    #[inline(always)]
    pub fn del(&mut self, mem: &mut [Page], pfn: Pfn) {
        let (prev, next) = {
            let p = &mem[pfn as usize];
            (p.prev, p.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            mem[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            mem[next as usize].prev = prev;
        }
        let p = &mut mem[pfn as usize];
        p.prev = NIL;
        p.next = NIL;
        self.len -= p.nr_pages();
    }
    /// list_add_tail(new, &at->lru): insert `pfn` right before `at` (on its newer side),
    /// as a split folio's tails go beside their head (lru_add_split_folio).
    pub fn add_before(&mut self, mem: &mut [Page], at: Pfn, pfn: Pfn) {
        let prev = mem[at as usize].prev;
        {
            let p = &mut mem[pfn as usize];
            p.prev = prev;
            p.next = at;
        }
        mem[at as usize].prev = pfn;
        if prev == NIL {
            self.head = pfn;
        } else {
            mem[prev as usize].next = pfn;
        }
        self.len += mem[pfn as usize].nr_pages();
    }
    /// Pop from the head (used for free lists: LIFO, cache-hot first).
    pub fn pop_head(&mut self, mem: &mut [Page]) -> Option<Pfn> {
        let h = self.head;
        if h == NIL {
            return None;
        }
        self.del(mem, h);
        Some(h)
    }
    /// Walk from head to tail (for the checker and dumps).
    pub fn iter<'a>(&self, mem: &'a [Page]) -> impl Iterator<Item = Pfn> + 'a {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            if cur == NIL {
                None
            } else {
                let r = cur;
                cur = mem[cur as usize].next;
                Some(r)
            }
        })
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
    pub free_list: ListHead,
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
    /// A node of `nr` pages starting at `start_pfn`, all free (linked by the caller).
    pub fn new(id: usize, start_pfn: Pfn, nr: u32) -> PgData {
        PgData {
            id,
            start_pfn,
            present_pages: nr,
            free_list: ListHead::default(),
            watermark: Watermarks::default(),
            lru_lock: SpinLock::default(),
            zone_lock: SpinLock::default(),
            nr_dirty_writeback: 0,
        }
    }
}
