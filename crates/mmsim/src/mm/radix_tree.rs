//! The page-cache tree of an `address_space` (`mapping->page_tree`).
//!
//! # What the kernel does (v4.2–v4.14)
//!
//! Each `address_space` indexes its cached pages by file offset (in pages) in a
//! radix tree (`lib/radix-tree.c`) made of `struct radix_tree_node`s with
//! `RADIX_TREE_MAP_SIZE = 64` slots (`RADIX_TREE_MAP_SHIFT = 6`). The tree is only as
//! tall as the largest index needs: `radix_tree_extend` pushes new roots on top
//! (the old root becomes slot 0), and when deletion empties nodes `delete_node`
//! frees them bottom-up and `radix_tree_shrink` pops roots whose only child sits in
//! slot 0. When a page is reclaimed, `page_cache_tree_delete` replaces it with an
//! *exceptional* entry (low bits `10`) holding a workingset shadow (eviction
//! timestamp, memcg and node ids), which `workingset_refault` reads back on the next
//! fault. Each node counts its non-empty slots and its exceptional ones
//! (`count`/`exceptional`, or the packed `workingset_node_shadows` before v4.10);
//! nodes holding only shadows are put on the `workingset_shadow_nodes` list_lru,
//! and the shadow shrinker (`shadow_lru_isolate`) clears them and frees the node.
//!
//! # What we model
//!
//! The same shape: 64-slot nodes, height = levels needed by the largest index,
//! extend/shrink/free exactly when the kernel does, per-node counts of entries and
//! shadows, and `nrpages`/`nrexceptional`. Nodes live in an arena (`Vec`) with a
//! free list, so a [`NodeId`] is an arena index; freed ids are reused, so an old id
//! may later name a different node — callers holding ids (e.g. a shadow-node LRU)
//! must re-validate them with [`RadixTree::leaf_counts`]. Each node also keeps a
//! 64-bit occupancy bitmap so gang lookups skip empty slots and subtrees.
//!
//! As in the kernel (`radix_tree_insert` into an empty tree, `xa_head` of the XArray),
//! a lone entry at index 0 lives in the root pointer itself, without a node (height
//! 0): a one-page file costs no node, and its shadow entry, in no node, is on no
//! shadow-node list — the shadow shrinker never reclaims it; it goes with the inode. (The
//! kernel's inode shrinker evicts such shadow-only inodes under memory pressure —
//! `mapping_shrinkable` says so since 5.15 — and mmsim has no inode shrinker: it keeps
//! every such shadow, an upper bound on the refaults the kernel detects.)
//! `radix_tree_extend` moves a root entry to slot 0 of a new leaf when a second index
//! is stored; `radix_tree_shrink` after a deletion moves a root leaf's lone slot-0
//! entry back into the root. (Kernels 4.10–4.19 also tried the shrink after replacing
//! an entry, `__radix_tree_replace`; here, as in 4.2–4.9 and the XArray, only a
//! deletion does.)
//!
//! Each node carries the caller's charge tag of its allocation ([`RadixTree::charge_tag`]),
//! and the tree reports node allocations and frees with their tags, and leaves leaving
//! a shadow list, in [`RadixTree::events`] for the caller to drain after each store (the
//! memory cgroup accounting of the nodes and the shadow-node lists live in the caller).
//!
//! Simplifications: tags (dirty/writeback/towrite) are not modelled; there is no
//! locking or cost accounting here (callers charge `tree_lock` and per-level costs
//! from [`RadixTree::height`]). The whole `u64` index range is supported (height up
//! to 11).

/// log2 of the number of slots per node (`RADIX_TREE_MAP_SHIFT`).
pub const RADIX_TREE_MAP_SHIFT: u32 = 6;
/// Slots per node (`RADIX_TREE_MAP_SIZE`).
pub const RADIX_TREE_MAP_SIZE: usize = 1 << RADIX_TREE_MAP_SHIFT;
/// Maximum height: enough levels to cover every `u64` index.
pub const RADIX_TREE_MAX_HEIGHT: u32 = 64u32.div_ceil(RADIX_TREE_MAP_SHIFT);
/// Size of a kernel `struct radix_tree_node` on x86_64 (slab object size), for
/// memory accounting.
pub const RADIX_TREE_NODE_BYTES: u64 = 576;
/// Largest value a [`Entry::Shadow`] may hold.
pub const MAX_SHADOW: u64 = (1 << 62) - 1;

/// A page frame number (index into the simulator's page array).
pub type Pfn = u32;

/// One slot's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Nothing stored.
    Empty,
    /// A page-cache page.
    Page(Pfn),
    /// An exceptional (value) entry: a workingset shadow. Value < 2^62.
    Shadow(u64),
}

/// Stable id of a tree node (arena index) while the node lives.
///
/// Freed ids are reused: after the node is freed the same id may name another node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

const NONE: u32 = u32::MAX;
const TAG_MASK: u64 = 3;
const TAG_PAGE: u64 = 1;
const TAG_SHADOW: u64 = 2;
const TAG_NODE: u64 = 3;
const SLOT_MASK: u64 = RADIX_TREE_MAP_SIZE as u64 - 1;

/// Encoded slot: 0 = empty, else `payload << 2 | tag`.
#[inline]
fn encode(entry: Entry) -> u64 {
    match entry {
        Entry::Empty => 0,
        Entry::Page(pfn) => (u64::from(pfn) << 2) | TAG_PAGE,
        Entry::Shadow(v) => {
            assert!(
                v <= MAX_SHADOW,
                "shadow value {v:#x} does not fit in 62 bits"
            );
            (v << 2) | TAG_SHADOW
        }
    }
}

#[inline]
fn decode(slot: u64) -> Entry {
    match slot & TAG_MASK {
        TAG_PAGE => Entry::Page((slot >> 2) as Pfn),
        TAG_SHADOW => Entry::Shadow(slot >> 2),
        _ => Entry::Empty,
    }
}

#[inline]
fn child_of(slot: u64) -> u32 {
    debug_assert_eq!(slot & TAG_MASK, TAG_NODE);
    (slot >> 2) as u32
}

/// Largest index a tree of `height` levels can hold.
#[inline]
fn max_index(height: u32) -> u64 {
    let bits = height * RADIX_TREE_MAP_SHIFT;
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Levels needed to hold `index` (at least 1).
#[inline]
fn height_for(index: u64) -> u32 {
    let bits = 64 - index.leading_zeros();
    bits.div_ceil(RADIX_TREE_MAP_SHIFT).max(1)
}

/// One `radix_tree_node`. A node is live iff `occupied != 0` (empty nodes are freed).
#[derive(Clone)]
struct Node {
    slots: [u64; RADIX_TREE_MAP_SIZE],
    /// Bit `i` set iff `slots[i] != 0`; its popcount is the kernel's `count`.
    occupied: u64,
    /// First index covered by this node.
    base: u64,
    parent: u32,
    /// Offset of this node in its parent's slots.
    offset: u8,
    /// 0 for leaves, `6 * level` above.
    shift: u8,
    /// Shadow slots (the kernel's `exceptional`); always 0 above leaves.
    shadows: u8,
    /// The shadow-node list this leaf is on (its `private_list` in a list_lru), as the
    /// caller's list id + 1; 0 when on none. See [`RadixTree::list_leaf`].
    shadow_list: u32,
    /// The sequence number of that listing (the caller's queue entry that is valid).
    shadow_seq: u32,
    /// The caller's charge tag of this node ([`RadixTree::charge_tag`] when it was
    /// allocated): whom its memory is charged to.
    charge: u32,
}

/// The page-cache radix tree of one `address_space`.
#[derive(Clone)]
pub struct RadixTree {
    nodes: Vec<Node>,
    /// Freed nodes, last freed first, chained through their `parent` field (NONE ends
    /// the chain): a free list without an allocation per tree.
    free_head: u32,
    nr_free: u32,
    root: u32,
    /// Height 0: the encoded entry at index 0 held in the root pointer (0: empty tree).
    direct: u64,
    /// The leaf the last descent reached: a hint, used while that node is a live leaf
    /// covering the index asked for (sequential access finds its leaf without a descent).
    last_leaf: std::cell::Cell<u32>,
    height: u32,
    nr_pages: u64,
    nr_shadows: u64,
    /// What happened inside the tree since the caller last drained this ([`TreeEvent`],
    /// encoded): leaves that left their shadow list (a page stored in a shadow-only leaf,
    /// or the leaf freed: workingset_update_node's list_lru_del), and nodes allocated and
    /// freed, with their charge tags (xas_alloc / xa_node_free, for the memory
    /// accounting of the nodes).
    pub events: Vec<u32>,
    /// The charge tag new nodes get (set by the caller before a store that may
    /// allocate: the memory cgroup and NUMA node the allocation is charged to).
    pub charge_tag: u32,
}

/// One entry of [`RadixTree::events`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeEvent {
    /// A leaf left the caller's shadow list with this id.
    Unlisted(u32),
    /// A node was allocated with this charge tag.
    NodeAlloc(u32),
    /// A node charged with this tag was freed.
    NodeFree(u32),
}

const EV_ALLOC: u32 = 1 << 31;
const EV_FREE: u32 = 1 << 30;
/// The largest list id or charge tag an event can carry.
pub const MAX_EVENT_VALUE: u32 = EV_FREE - 1;

impl TreeEvent {
    /// The event an encoded [`RadixTree::events`] entry stands for.
    #[inline]
    pub fn decode(e: u32) -> TreeEvent {
        if e & EV_ALLOC != 0 {
            TreeEvent::NodeAlloc(e & !EV_ALLOC)
        } else if e & EV_FREE != 0 {
            TreeEvent::NodeFree(e & !EV_FREE)
        } else {
            TreeEvent::Unlisted(e)
        }
    }
}

impl Default for RadixTree {
    fn default() -> Self {
        Self::new()
    }
}

impl RadixTree {
    /// An empty tree (height 0, no nodes).
    pub fn new() -> Self {
        RadixTree {
            nodes: Vec::new(),
            free_head: NONE,
            nr_free: 0,
            root: NONE,
            direct: 0,
            last_leaf: std::cell::Cell::new(NONE),
            height: 0,
            nr_pages: 0,
            nr_shadows: 0,
            events: Vec::new(),
            charge_tag: 0,
        }
    }

    /// `radix_tree_lookup`: the content of the slot at `index`. No allocation.
    #[inline]
    pub fn lookup(&self, index: u64) -> Entry {
        if self.height == 0 {
            return if index == 0 {
                decode(self.direct)
            } else {
                Entry::Empty
            };
        }
        match self.find_leaf(index) {
            Some(leaf) => decode(self.nodes[leaf as usize].slots[(index & SLOT_MASK) as usize]),
            None => Entry::Empty,
        }
    }

    /// Store `entry` at `index` (insert, replace, or delete when `entry` is Empty),
    /// returning the old entry. Grows the tree (`radix_tree_extend`) when needed;
    /// deleting frees leaf/interior nodes that become empty and shrinks the height
    /// (`radix_tree_shrink`) like the kernel. Panics if a shadow exceeds [`MAX_SHADOW`].
    pub fn store(&mut self, index: u64, entry: Entry) -> Entry {
        let new = encode(entry);
        if new == 0 {
            return self.delete(index);
        }
        let need = height_for(index);
        if self.height == 0 {
            if index == 0 {
                // The lone entry at index 0 goes in the root pointer.
                let old = std::mem::replace(&mut self.direct, new);
                self.count(old, -1);
                self.count(new, 1);
                return decode(old);
            }
            if self.direct == 0 {
                self.root = self.alloc((need - 1) * RADIX_TREE_MAP_SHIFT, NONE, 0, 0);
                self.height = need;
            } else {
                // radix_tree_extend: the root entry moves to slot 0 of a new leaf.
                let leaf = self.alloc(0, NONE, 0, 0);
                let entry = std::mem::take(&mut self.direct);
                let n = &mut self.nodes[leaf as usize];
                n.slots[0] = entry;
                n.occupied = 1;
                n.shadows = u8::from(entry & TAG_MASK == TAG_SHADOW);
                self.root = leaf;
                self.height = 1;
            }
        }
        while self.height < need {
            self.extend_one();
        }
        if let Some(leaf) = self.hinted_leaf(index) {
            return self.set_leaf_slot(leaf, (index & SLOT_MASK) as usize, new);
        }
        let mut node = self.root;
        loop {
            let n = &self.nodes[node as usize];
            let shift = u32::from(n.shift);
            let off = ((index >> shift) & SLOT_MASK) as usize;
            if shift == 0 {
                self.last_leaf.set(node);
                return self.set_leaf_slot(node, off, new);
            }
            let slot = n.slots[off];
            node = if slot != 0 {
                child_of(slot)
            } else {
                let base = (index >> shift) << shift;
                let child = self.alloc(shift - RADIX_TREE_MAP_SHIFT, node, off, base);
                let n = &mut self.nodes[node as usize];
                n.slots[off] = (u64::from(child) << 2) | TAG_NODE;
                n.occupied |= 1 << off;
                child
            };
        }
    }

    /// `radix_tree_gang_lookup` / `find_get_entries`: up to `max` non-empty entries
    /// with index >= `start`, ascending, appended to `out` as (index, entry).
    /// Returns how many were appended.
    ///
    /// Cost is O(height + nodes visited): empty slots and subtrees are skipped
    /// through the per-node occupancy bitmaps.
    pub fn gang_lookup(&self, start: u64, max: usize, out: &mut Vec<(u64, Entry)>) -> usize {
        if max > 0 && self.height == 0 && self.direct != 0 && start == 0 {
            out.push((0, decode(self.direct)));
            return 1;
        }
        if max == 0 || self.height == 0 || start > max_index(self.height) {
            return 0;
        }
        let mut count = 0;
        let mut node = self.root;
        let mut from = ((start >> self.nodes[node as usize].shift) & SLOT_MASK) as u32;
        // Still descending along the path of `start` (lower levels start at its offsets).
        let mut on_path = true;
        loop {
            let n = &self.nodes[node as usize];
            let mask = n.occupied & (!0u64).checked_shl(from).unwrap_or(0);
            if mask == 0 {
                // Exhausted this node: continue after it in the first ancestor with room.
                let mut cur = n;
                loop {
                    if cur.parent == NONE {
                        return count;
                    }
                    node = cur.parent;
                    if cur.offset < 63 {
                        from = u32::from(cur.offset) + 1;
                        break;
                    }
                    cur = &self.nodes[node as usize];
                }
                on_path = false;
                continue;
            }
            let off = mask.trailing_zeros();
            on_path &= off == from;
            if n.shift == 0 {
                out.push((n.base + u64::from(off), decode(n.slots[off as usize])));
                count += 1;
                if count == max {
                    return count;
                }
                from = off + 1;
            } else {
                node = child_of(n.slots[off as usize]);
                from = if on_path {
                    ((start >> self.nodes[node as usize].shift) & SLOT_MASK) as u32
                } else {
                    0
                };
            }
        }
    }

    /// Number of Page entries (`mapping->nrpages`), kept exact by store.
    pub fn nr_pages(&self) -> u64 {
        self.nr_pages
    }

    /// Number of Shadow entries (`mapping->nrexceptional`), kept exact by store.
    pub fn nr_shadows(&self) -> u64 {
        self.nr_shadows
    }

    /// Height of the tree (0 = empty or only an entry at index 0 in the root pointer,
    /// 1 = a single node covering indices 0..64, etc.); lookups descend `height()` levels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Number of live nodes (for memory accounting; see [`RADIX_TREE_NODE_BYTES`]).
    pub fn nr_nodes(&self) -> usize {
        self.nodes.len() - self.nr_free as usize
    }

    /// The leaf node holding `index`, if any, with its (count of non-empty slots,
    /// count of shadow slots). None for an entry in the root pointer (in no node).
    pub fn leaf(&self, index: u64) -> Option<(NodeId, u32, u32)> {
        let leaf = self.find_leaf(index)?;
        let n = &self.nodes[leaf as usize];
        Some((NodeId(leaf), n.occupied.count_ones(), u32::from(n.shadows)))
    }

    /// Counts of a live leaf node: (non-empty slots, shadow slots, first index the
    /// node covers). None if the id is not a live leaf (freed, interior, or out of range).
    pub fn leaf_counts(&self, node: NodeId) -> Option<(u32, u32, u64)> {
        let n = self.live_leaf(node)?;
        Some((n.occupied.count_ones(), u32::from(n.shadows), n.base))
    }

    /// Put a live shadow-only leaf on the caller's shadow list `list` with sequence
    /// number `seq` (non-zero): it stays listed until a page is stored in it or it is
    /// freed (then `list` goes to [`RadixTree::events`]), or [`RadixTree::unlist_leaf`].
    /// False (nothing changes) when the node is not a live shadow-only leaf or is listed.
    pub fn list_leaf(&mut self, node: NodeId, list: u32, seq: u32) -> bool {
        debug_assert!(seq != 0 && list != u32::MAX);
        match self.live_leaf(node) {
            Some(n) if n.shadow_list == 0 && u32::from(n.shadows) == n.occupied.count_ones() => {
                let n = &mut self.nodes[node.0 as usize];
                (n.shadow_list, n.shadow_seq) = (list + 1, seq);
                true
            }
            _ => false,
        }
    }

    /// The listing of a live leaf: (list, sequence number), if it is on a list.
    pub fn leaf_listing(&self, node: NodeId) -> Option<(u32, u32)> {
        self.live_leaf(node)
            .filter(|n| n.shadow_list != 0)
            .map(|n| (n.shadow_list - 1, n.shadow_seq))
    }

    /// The charge tag of every live node. For checks: O(nodes).
    pub fn node_charges(&self) -> impl Iterator<Item = u32> + '_ {
        let mut free = vec![false; self.nodes.len()];
        let mut f = self.free_head;
        while f != NONE {
            free[f as usize] = true;
            f = self.nodes[f as usize].parent;
        }
        self.nodes
            .iter()
            .zip(free)
            .filter(|(_, free)| !free)
            .map(|(n, _)| n.charge)
    }

    /// Every live leaf on a shadow list: (leaf, list, sequence number). For checks: O(nodes).
    pub fn listed_leaves(&self) -> impl Iterator<Item = (NodeId, u32, u32)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.occupied != 0 && n.shift == 0 && n.shadow_list != 0)
            .map(|(i, n)| (NodeId(i as u32), n.shadow_list - 1, n.shadow_seq))
    }

    /// Take a live leaf off its shadow list (the shrinker's list_lru_isolate): its
    /// listing, if it had one. Not reported in [`RadixTree::events`].
    pub fn unlist_leaf(&mut self, node: NodeId) -> Option<(u32, u32)> {
        let l = self.leaf_listing(node)?;
        let n = &mut self.nodes[node.0 as usize];
        (n.shadow_list, n.shadow_seq) = (0, 0);
        Some(l)
    }

    /// Clear every shadow slot of a live leaf node (workingset shadow-node shrinker,
    /// `shadow_lru_isolate`), freeing the node (and empty ancestors, shrinking the
    /// height) if it becomes empty; pages stay. Returns how many shadows were removed
    /// (0 if the id is not a live leaf). `nr_shadows` stays exact.
    pub fn clear_leaf_shadows(&mut self, node: NodeId) -> u32 {
        match self.live_leaf(node) {
            Some(n) if n.shadows > 0 => {}
            _ => return 0,
        }
        let n = &mut self.nodes[node.0 as usize];
        let mut bits = n.occupied;
        while bits != 0 {
            let off = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if n.slots[off] & TAG_MASK == TAG_SHADOW {
                n.slots[off] = 0;
                n.occupied &= !(1 << off);
            }
        }
        let removed = u32::from(n.shadows);
        n.shadows = 0;
        let now_empty = n.occupied == 0;
        self.nr_shadows -= u64::from(removed);
        if now_empty {
            self.delete_node(node.0);
        } else if node.0 == self.root {
            // Deletions at the root try radix_tree_shrink (a lone page left in slot 0
            // goes to the root pointer), as delete_node does.
            self.shrink();
        }
        removed
    }

    /// Check internal invariants (counts equal slot contents, parents/offsets/bases
    /// consistent, no empty node, root shrunk, free list sane, nr_pages/nr_shadows
    /// match). Returns Err(description) on the first violation. Used by `--check`.
    /// O(nodes); allocates.
    pub fn check(&self) -> Result<(), String> {
        let mut seen = vec![false; self.nodes.len()];
        let (mut f, mut on_list) = (self.free_head, 0u32);
        while f != NONE {
            let n = self
                .nodes
                .get(f as usize)
                .ok_or(format!("free id {f} out of range"))?;
            if std::mem::replace(&mut seen[f as usize], true) {
                return Err(format!("node {f} twice on the free list"));
            }
            if n.occupied != 0 || n.slots.iter().any(|&s| s != 0) {
                return Err(format!("free node {f} is not empty"));
            }
            on_list += 1;
            f = n.parent;
        }
        if on_list != self.nr_free {
            return Err(format!(
                "{on_list} nodes on the free list, {} counted",
                self.nr_free
            ));
        }
        if self.height == 0 {
            let (pages, shadows) = match self.direct & TAG_MASK {
                TAG_PAGE => (1, 0),
                TAG_SHADOW => (0, 1),
                0 if self.direct == 0 => (0, 0),
                _ => return Err("a node pointer in the root at height 0".into()),
            };
            if self.root != NONE
                || self.nr_nodes() != 0
                || (self.nr_pages, self.nr_shadows) != (pages, shadows)
            {
                return Err("height 0 but nodes, or counts not those of the root entry".into());
            }
            return Ok(());
        }
        if self.direct != 0 {
            return Err(format!(
                "an entry in the root pointer at height {}",
                self.height
            ));
        }
        if self.height > RADIX_TREE_MAX_HEIGHT {
            return Err(format!("height {} too large", self.height));
        }
        let root = self
            .nodes
            .get(self.root as usize)
            .ok_or("root out of range")?;
        if root.parent != NONE || root.base != 0 {
            return Err("root has a parent or nonzero base".into());
        }
        if u32::from(root.shift) != (self.height - 1) * RADIX_TREE_MAP_SHIFT {
            return Err(format!(
                "root shift {} at height {}",
                root.shift, self.height
            ));
        }
        if self.height > 1 && root.occupied == 1 {
            return Err("root has only slot 0 occupied but was not shrunk".into());
        }
        let (mut pages, mut shadows, mut live) = (0u64, 0u64, 0usize);
        let mut stack = vec![self.root];
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id as usize], true) {
                return Err(format!("node {id} reached twice or is on the free list"));
            }
            live += 1;
            let n = &self.nodes[id as usize];
            if n.occupied == 0 {
                return Err(format!("node {id} is empty"));
            }
            let mut node_shadows = 0u32;
            for (off, &slot) in n.slots.iter().enumerate() {
                if (slot != 0) != (n.occupied >> off & 1 == 1) {
                    return Err(format!("node {id} slot {off}: occupancy bit mismatch"));
                }
                if slot == 0 {
                    continue;
                }
                match (n.shift, slot & TAG_MASK) {
                    (0, TAG_PAGE) => pages += 1,
                    (0, TAG_SHADOW) => {
                        shadows += 1;
                        node_shadows += 1;
                    }
                    (s, TAG_NODE) if s > 0 => {
                        let c = child_of(slot);
                        let child = self
                            .nodes
                            .get(c as usize)
                            .ok_or(format!("child {c} out of range"))?;
                        let cshift = u32::from(s) - RADIX_TREE_MAP_SHIFT;
                        let base = n.base + ((off as u64) << s);
                        if child.parent != id
                            || usize::from(child.offset) != off
                            || u32::from(child.shift) != cshift
                            || child.base != base
                        {
                            return Err(format!(
                                "node {c}: bad parent/offset/shift/base under {id}"
                            ));
                        }
                        stack.push(c);
                    }
                    _ => return Err(format!("node {id} (shift {}) slot {off}: bad tag", n.shift)),
                }
            }
            if node_shadows != u32::from(n.shadows) {
                return Err(format!(
                    "node {id}: shadows {} but {node_shadows} shadow slots",
                    n.shadows
                ));
            }
            if n.shadow_list != 0 && (n.shift != 0 || node_shadows != n.occupied.count_ones()) {
                return Err(format!("node {id}: on a shadow list but holds pages"));
            }
        }
        if live != self.nr_nodes() {
            return Err(format!(
                "{live} reachable nodes but {} live",
                self.nr_nodes()
            ));
        }
        if pages != self.nr_pages || shadows != self.nr_shadows {
            return Err(format!(
                "nr_pages/nr_shadows {}/{} but tree holds {pages}/{shadows}",
                self.nr_pages, self.nr_shadows
            ));
        }
        Ok(())
    }

    // ---- internals ----

    /// The hinted leaf if it covers `index`: a live node (empty nodes are freed at once)
    /// at shift 0 whose base is `index`'s is the tree's only leaf for that range, whatever
    /// was freed or reused since the hint was set.
    #[inline]
    fn hinted_leaf(&self, index: u64) -> Option<u32> {
        let h = self.last_leaf.get();
        let n = self.nodes.get(h as usize)?;
        (n.shift == 0 && n.occupied != 0 && n.base == index & !SLOT_MASK).then_some(h)
    }

    /// Descend to the leaf covering `index`, if it exists.
    #[inline]
    fn find_leaf(&self, index: u64) -> Option<u32> {
        if let Some(leaf) = self.hinted_leaf(index) {
            return Some(leaf);
        }
        if self.height == 0 || index > max_index(self.height) {
            return None;
        }
        let mut node = self.root;
        loop {
            let n = &self.nodes[node as usize];
            if n.shift == 0 {
                self.last_leaf.set(node);
                return Some(node);
            }
            let slot = n.slots[((index >> n.shift) & SLOT_MASK) as usize];
            if slot == 0 {
                return None;
            }
            node = child_of(slot);
        }
    }

    fn live_leaf(&self, node: NodeId) -> Option<&Node> {
        self.nodes
            .get(node.0 as usize)
            .filter(|n| n.occupied != 0 && n.shift == 0)
    }

    fn alloc(&mut self, shift: u32, parent: u32, offset: usize, base: u64) -> u32 {
        let (offset, shift) = (offset as u8, shift as u8);
        let charge = self.charge_tag;
        debug_assert!(charge <= MAX_EVENT_VALUE);
        self.events.push(EV_ALLOC | charge);
        if self.free_head != NONE {
            // Freed nodes already have all-zero slots; only the header changes.
            let id = self.free_head;
            let n = &mut self.nodes[id as usize];
            self.free_head = n.parent;
            self.nr_free -= 1;
            debug_assert!(n.occupied == 0 && n.slots.iter().all(|&s| s == 0));
            (n.base, n.parent, n.offset, n.shift, n.shadows) = (base, parent, offset, shift, 0);
            n.charge = charge;
            return id;
        }
        let id = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&id| id != NONE);
        let id = id.expect("radix tree node arena full");
        if self.nodes.is_empty() {
            // Most files are small: one node, not the four a first push would reserve.
            self.nodes.reserve_exact(1);
        }
        self.nodes.push(Node {
            slots: [0; RADIX_TREE_MAP_SIZE],
            occupied: 0,
            base,
            parent,
            offset,
            shift,
            shadows: 0,
            shadow_list: 0,
            shadow_seq: 0,
            charge,
        });
        id
    }

    /// Free a node whose slots are all empty.
    fn free_node(&mut self, id: u32) {
        debug_assert_eq!(self.nodes[id as usize].occupied, 0);
        let n = &mut self.nodes[id as usize];
        if n.shadow_list != 0 {
            let list = std::mem::take(&mut n.shadow_list) - 1;
            n.shadow_seq = 0;
            self.events.push(list);
        }
        let charge = self.nodes[id as usize].charge;
        self.events.push(EV_FREE | charge);
        self.nodes[id as usize].parent = self.free_head;
        self.free_head = id;
        self.nr_free += 1;
    }

    /// radix_tree_extend by one level: a new root with the old root in slot 0.
    fn extend_one(&mut self) {
        let old = self.root;
        let new = self.alloc(self.height * RADIX_TREE_MAP_SHIFT, NONE, 0, 0);
        let n = &mut self.nodes[new as usize];
        n.slots[0] = (u64::from(old) << 2) | TAG_NODE;
        n.occupied = 1;
        let o = &mut self.nodes[old as usize];
        (o.parent, o.offset) = (new, 0);
        self.root = new;
        self.height += 1;
    }

    /// Write an encoded leaf slot, keeping all counts exact; returns the old entry.
    fn set_leaf_slot(&mut self, leaf: u32, off: usize, new: u64) -> Entry {
        let n = &mut self.nodes[leaf as usize];
        let old = std::mem::replace(&mut n.slots[off], new);
        if new != 0 {
            n.occupied |= 1 << off;
        } else {
            n.occupied &= !(1 << off);
        }
        let is_shadow = |slot: u64| u8::from(slot & TAG_MASK == TAG_SHADOW);
        n.shadows = n.shadows - is_shadow(old) + is_shadow(new);
        if n.shadow_list != 0 {
            self.listed_leaf_changed(leaf);
        }
        self.count(old, -1);
        self.count(new, 1);
        decode(old)
    }

    /// A slot of a leaf on a shadow list changed: a page came in, so it leaves the list
    /// (an emptied leaf leaves it when freed, in `free_node`).
    #[cold]
    #[inline(never)]
    fn listed_leaf_changed(&mut self, leaf: u32) {
        let n = &mut self.nodes[leaf as usize];
        if u32::from(n.shadows) != n.occupied.count_ones() {
            let list = std::mem::take(&mut n.shadow_list) - 1;
            n.shadow_seq = 0;
            self.events.push(list);
        }
    }

    fn delete(&mut self, index: u64) -> Entry {
        if self.height == 0 {
            if index != 0 {
                return Entry::Empty;
            }
            let old = std::mem::take(&mut self.direct);
            self.count(old, -1);
            return decode(old);
        }
        let Some(leaf) = self.find_leaf(index) else {
            return Entry::Empty;
        };
        let old = self.set_leaf_slot(leaf, (index & SLOT_MASK) as usize, 0);
        // Frees the leaf if empty, else tries the shrink if it is the root.
        self.delete_node(leaf);
        old
    }

    /// `delete_node`: free empty nodes bottom-up; if the walk reaches a non-empty
    /// root, try `radix_tree_shrink`.
    fn delete_node(&mut self, mut node: u32) {
        loop {
            let n = &self.nodes[node as usize];
            if n.occupied != 0 {
                if node == self.root {
                    self.shrink();
                }
                return;
            }
            let (parent, off) = (n.parent, usize::from(n.offset));
            self.free_node(node);
            if parent == NONE {
                self.root = NONE;
                self.height = 0;
                return;
            }
            let p = &mut self.nodes[parent as usize];
            p.slots[off] = 0;
            p.occupied &= !(1 << off);
            node = parent;
        }
    }

    /// Count an encoded entry in or out of `nr_pages` / `nr_shadows`.
    fn count(&mut self, slot: u64, by: i64) {
        match slot & TAG_MASK {
            TAG_PAGE => self.nr_pages = self.nr_pages.wrapping_add_signed(by),
            TAG_SHADOW => self.nr_shadows = self.nr_shadows.wrapping_add_signed(by),
            _ => {}
        }
    }

    /// `radix_tree_shrink`: drop roots whose only child is in slot 0; a root leaf whose
    /// only entry is in slot 0 gives it to the root pointer (height 0).
    fn shrink(&mut self) {
        while self.height > 1 {
            let root = &mut self.nodes[self.root as usize];
            if root.occupied != 1 {
                return;
            }
            let child = child_of(root.slots[0]);
            root.slots[0] = 0;
            root.occupied = 0;
            self.free_node(self.root);
            self.nodes[child as usize].parent = NONE;
            self.root = child;
            self.height -= 1;
        }
        if self.height == 1 {
            let root = &mut self.nodes[self.root as usize];
            if root.occupied == 1 {
                let entry = std::mem::take(&mut root.slots[0]);
                (root.occupied, root.shadows) = (0, 0);
                self.free_node(self.root);
                self.root = NONE;
                self.height = 0;
                self.direct = entry;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "62 bits")]
    fn shadow_too_large_panics() {
        RadixTree::new().store(0, Entry::Shadow(1 << 62));
    }

    #[test]
    fn delete_shrinks_and_frees() {
        let mut t = RadixTree::new();
        for idx in [0, 63, 64, 4095, 1 << 30] {
            t.store(idx, Entry::Page(idx as Pfn));
        }
        let arena = t.nodes.len();
        assert_eq!(t.store(1 << 30, Entry::Empty), Entry::Page(1 << 30));
        assert_eq!((t.height(), t.nr_nodes()), (2, 4));
        t.check().unwrap();
        assert_eq!(t.store(4095, Entry::Empty), Entry::Page(4095));
        assert_eq!(t.store(64, Entry::Empty), Entry::Page(64));
        assert_eq!((t.height(), t.nr_nodes()), (1, 1));
        assert_eq!(t.store(5, Entry::Empty), Entry::Empty); // absent: no change
        assert_eq!(t.store(1 << 40, Entry::Empty), Entry::Empty);
        t.store(0, Entry::Empty);
        t.store(63, Entry::Empty);
        assert_eq!((t.height(), t.nr_nodes(), t.nr_pages()), (0, 0, 0));
        t.check().unwrap();
        // Freed nodes are reused: the arena does not grow.
        for idx in [0, 63, 64, 4095, 1 << 30] {
            t.store(idx, Entry::Page(1));
        }
        assert_eq!((t.nodes.len(), t.nr_nodes()), (arena, 13));
        t.check().unwrap();
    }

    #[test]
    fn clear_leaf_shadows_mixed_and_shadow_only() {
        let mut t = RadixTree::new();
        t.store(1, Entry::Page(1));
        t.store(2, Entry::Shadow(2));
        t.store(3, Entry::Shadow(3));
        t.store(200, Entry::Shadow(4));
        t.store(201, Entry::Shadow(5));
        assert_eq!((t.height(), t.nr_nodes(), t.nr_shadows()), (2, 3, 4));
        let (mixed, count, shadows) = t.leaf(1).unwrap();
        assert_eq!((count, shadows), (3, 2));
        assert_eq!(t.leaf_counts(mixed), Some((3, 2, 0)));
        assert_eq!(t.clear_leaf_shadows(mixed), 2);
        assert_eq!(t.leaf_counts(mixed), Some((1, 0, 0)));
        assert_eq!((t.lookup(1), t.lookup(2)), (Entry::Page(1), Entry::Empty));
        assert_eq!((t.nr_pages(), t.nr_shadows()), (1, 2));
        assert_eq!(t.clear_leaf_shadows(mixed), 0);
        t.check().unwrap();

        let (only, ..) = t.leaf(200).unwrap();
        assert_eq!(t.leaf_counts(only), Some((2, 2, 192)));
        assert_eq!(t.clear_leaf_shadows(only), 2);
        assert_eq!(t.leaf_counts(only), None); // freed
        assert_eq!((t.height(), t.nr_nodes(), t.nr_shadows()), (1, 1, 0));
        t.check().unwrap();
        // Interior node ids and out-of-range ids are not leaves.
        t.store(5000, Entry::Shadow(6));
        assert_eq!(t.leaf_counts(NodeId(t.root)), None);
        assert_eq!(t.clear_leaf_shadows(NodeId(t.root)), 0);
        assert_eq!(t.clear_leaf_shadows(NodeId(12345)), 0);
        // Clearing the only shadow empties the whole tree.
        t.store(1, Entry::Empty);
        let (leaf, ..) = t.leaf(5000).unwrap();
        assert_eq!(t.clear_leaf_shadows(leaf), 1);
        assert_eq!((t.height(), t.nr_nodes()), (0, 0));
        t.check().unwrap();
    }

    #[test]
    fn check_detects_corruption() {
        let mut t = RadixTree::new();
        t.store(3, Entry::Shadow(1));
        t.store(100, Entry::Page(1));
        t.check().unwrap();
        let mut bad = t.clone();
        bad.nr_pages += 1;
        assert!(bad.check().is_err());
        let mut bad = t.clone();
        let leaf = bad.leaf(3).unwrap().0 .0 as usize;
        bad.nodes[leaf].shadows = 0;
        assert!(bad.check().is_err());
        let mut bad = t.clone();
        bad.nodes[leaf].occupied |= 1 << 9;
        assert!(bad.check().is_err());
        let mut bad = t.clone();
        bad.nodes[leaf].offset = 5;
        assert!(bad.check().is_err());
    }
}
