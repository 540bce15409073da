//! Swap clusters (mm/swapfile.c): how a non-rotational swap device hands out slots.
//!
//! The device is cut into clusters of SWAPFILE_CLUSTER (256) slots, each with a count of
//! the slots in use (swap_cluster_info). Each CPU allocates from a cluster of its own, so
//! what one reclaimer swaps out lands in runs of contiguous slots (for swap-in readahead
//! and write merging) instead of interleaving with the others'.
//!
//! - v3.14 (`swap-percpu-cluster`, "swap: make cluster allocation per-cpu", on the 3.12
//!   free-cluster list of "swap: change block allocation algorithm for SSD"):
//!   scan_swap_map_try_ssd_cluster. A CPU without a cluster takes the head of the free
//!   list (clusters whose count fell to 0 join its tail); it scans its cluster from where it
//!   stopped for a free slot; a cluster scanned to its end is dropped. A slot found in a
//!   free cluster that is not the list's head (the CPU's old cluster, emptied since) is a
//!   conflict (scan_swap_map_ssd_cluster_conflict): the CPU takes the head instead. With no
//!   free cluster left, the slot comes from the device-wide next-fit scan from the last
//!   slot handed out (si->cluster_next; `SwapInfo::scan_next`).
//! - v6.17 (`swap-cluster-lists`: "mm, swap: prefer nonfull over free clusters" and "mm,
//!   swap: only scan one cluster in fragment list", on 6.14's "mm, swap: rework of swap
//!   allocator locks" series): cluster_alloc_swap_entry. Besides the free list, a cluster that lost a slot while
//!   partly used is on the nonfull list, one a CPU left partly used on the frag list, a
//!   full one on the full list. The CPU's cluster first (swap_alloc_fast, from its offset;
//!   from the start of a cluster emptied since); then the nonfull clusters in order, each
//!   scanned from its start; then the head of the free list; then one frag cluster, then
//!   all of them. A CPU that found its slot keeps the next offset when the cluster has
//!   room after it (relocate_cluster files the cluster by its count after each
//!   allocation). An `hdd` swap device has one cluster that every CPU allocates from
//!   (si->global_cluster: a rotational device wants its writes contiguous more than it
//!   fears contention; "mm, swap: use a global swap cluster for non-rotation devices").
//!
//! 6.17's scans take back a slot only the swap cache holds once swap is half full
//! (cluster_scan_range's need_reclaim): the caller's probe frees it (`Probe::Reclaimed`).
//! So does swap_reclaim_full_clusters, which an allocation that found no nonfull and no
//! free cluster runs on the oldest full cluster (6.12's "mm: swap: add a adaptive full
//! cluster cache reclaim"), before it turns to the frag clusters. The allocation that
//! fills the device schedules the reclaim worker (swap_reclaim_work), which scans every
//! full cluster so (`Sim::get_swap_page`; here at once, in the allocating task).
//!
//! Not modelled: the column order in which 4.13–6.13 put the clusters on the free list
//! at swapon (the list starts in slot order here), 5.8's random per-CPU
//! start of the fallback scan (cluster_next_cpu), and discards. Before 3.15
//! (the 2.6.30 era) and on an `hdd` before 6.14 every slot comes from the next-fit scan.

use std::collections::VecDeque;

/// SWAPFILE_CLUSTER: slots per cluster.
pub const SWAPFILE_CLUSTER: u32 = 256;

/// Which list a cluster is on (the CLUSTER_FLAG_* of 6.14; 3.14 has only free or not).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flag {
    /// On no list: in use (3.14), or isolated by an allocation (6.14).
    None,
    /// On the free list: no slot in use.
    Free,
    /// On the nonfull list: lost a slot while partly used.
    Nonfull,
    /// On the frag list: a CPU left it partly used.
    Frag,
    /// On the full list.
    Full,
}

/// What the allocator's probe says of a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Free (no PTE reference, no swap-cache page).
    Free,
    /// Was held only by the swap cache and the caller freed it just now (6.17's
    /// cluster_scan_range with swap half full: __try_to_reclaim_swap); its cluster count
    /// still includes it.
    Reclaimed,
    /// In use.
    Busy,
}

/// A FIFO list of clusters with removal from the middle: entries carry the cluster's
/// move stamp and are skipped when the cluster has moved since (list_move_tail).
#[derive(Clone, Debug, Default)]
struct List {
    entries: VecDeque<(u32, u32)>,
}

/// The swap device's clusters (swap_cluster_info and its lists, the per-CPU clusters).
#[derive(Clone, Debug)]
pub struct SwapClusters {
    /// Slots in use per cluster (the padding of a partial last cluster counts as used).
    count: Vec<u16>,
    /// The list each cluster is on.
    flag: Vec<Flag>,
    /// Bumped at each move, to tell current list entries from stale ones.
    stamp: Vec<u32>,
    free: List,
    nonfull: List,
    frag: List,
    /// 6.14's full list (the oldest full cluster first).
    full: List,
    /// Per CPU, the slot its next allocation scans from (percpu_cluster->next; 6.14's
    /// percpu_swap_cluster.offset); None: no cluster.
    percpu: Vec<Option<u32>>,
    /// 6.17's lists (else 3.14's free list and fallback scan).
    lists: bool,
    /// Slots on the device.
    nr_pages: u32,
}

impl SwapClusters {
    /// The clusters of a device of `nr_pages` slots, all free, in slot order, for `cpus`
    /// CPUs (1 for a device whose CPUs share one cluster). `lists`: 6.14's allocator.
    pub fn new(nr_pages: u64, cpus: usize, lists: bool) -> SwapClusters {
        let nr_pages = nr_pages.min(u64::from(u32::MAX)) as u32;
        let n = nr_pages.div_ceil(SWAPFILE_CLUSTER) as usize;
        let mut c = SwapClusters {
            count: vec![0; n],
            flag: vec![Flag::None; n],
            stamp: vec![0; n],
            free: List::default(),
            nonfull: List::default(),
            frag: List::default(),
            full: List::default(),
            percpu: vec![None; cpus.max(1)],
            lists,
            nr_pages,
        };
        // setup_clusters: the slots past the end of the device count as used.
        if let Some(last) = c.count.last_mut() {
            *last = (n as u32 * SWAPFILE_CLUSTER - nr_pages) as u16;
        }
        // A cluster with slots in use at swapon is not free (3.14: on no list; 6.14: on
        // the nonfull list).
        for i in 0..n as u32 {
            let f = match (c.count[i as usize], lists) {
                (0, _) => Flag::Free,
                (_, true) => Flag::Nonfull,
                (_, false) => Flag::None,
            };
            c.move_to(i, f);
        }
        c
    }

    fn list(&mut self, f: Flag) -> Option<&mut List> {
        match f {
            Flag::Free => Some(&mut self.free),
            Flag::Nonfull => Some(&mut self.nonfull),
            Flag::Frag => Some(&mut self.frag),
            Flag::Full if self.lists => Some(&mut self.full),
            Flag::None | Flag::Full => None,
        }
    }

    /// move_cluster: to the tail of `f`'s list (off every list for None and Full).
    fn move_to(&mut self, ci: u32, f: Flag) {
        let i = ci as usize;
        self.stamp[i] = self.stamp[i].wrapping_add(1);
        self.flag[i] = f;
        let stamp = self.stamp[i];
        let nr = self.count.len();
        if let Some(l) = self.list(f) {
            l.entries.push_back((ci, stamp));
            // Stale entries stay until popped; keep the deque within a few times the
            // number of clusters.
            if l.entries.len() > 4 * nr + 16 {
                self.compact(f);
            }
        }
    }

    fn compact(&mut self, f: Flag) {
        let (flag, stamp) = (
            std::mem::take(&mut self.flag),
            std::mem::take(&mut self.stamp),
        );
        if let Some(l) = self.list(f) {
            l.entries
                .retain(|&(ci, s)| flag[ci as usize] == f && stamp[ci as usize] == s);
        }
        (self.flag, self.stamp) = (flag, stamp);
    }

    /// The first cluster on `f`'s list, dropping stale entries.
    fn head(&mut self, f: Flag) -> Option<u32> {
        loop {
            let &(ci, s) = self.list(f)?.entries.front()?;
            if self.flag[ci as usize] == f && self.stamp[ci as usize] == s {
                return Some(ci);
            }
            self.list(f)?.entries.pop_front();
        }
    }

    /// The cluster CPU `cpu` allocates from shares with every CPU (an `hdd` under 6.14).
    fn cpu_slot(&self, cpu: usize) -> usize {
        cpu % self.percpu.len()
    }

    fn end_of(&self, ci: u32) -> u32 {
        ((ci + 1) * SWAPFILE_CLUSTER).min(self.nr_pages)
    }

    /// A slot for CPU `cpu`, or None when the free-cluster path finds none and the
    /// caller's next-fit scan must (3.14) or the device is full (6.17). `probe` tells a
    /// free slot. The slot is counted as in use. `swap_full`: more than half of the swap is
    /// in use (vm_swap_full), so 6.17 takes back cache-only slots of a full cluster
    /// before it turns to the frag clusters.
    pub fn alloc(
        &mut self,
        cpu: usize,
        swap_full: bool,
        probe: &mut dyn FnMut(u32) -> Probe,
    ) -> Option<u32> {
        let slot = self.cpu_slot(cpu);
        if self.lists {
            self.alloc_lists(slot, swap_full, probe)
        } else {
            self.alloc_percpu(slot, probe)
        }
    }

    /// scan_swap_map_try_ssd_cluster with its conflict check (v3.14).
    fn alloc_percpu(&mut self, slot: usize, probe: &mut dyn FnMut(u32) -> Probe) -> Option<u32> {
        loop {
            let Some(next) = self.percpu[slot] else {
                let head = self.head(Flag::Free)?;
                self.percpu[slot] = Some(head * SWAPFILE_CLUSTER);
                continue;
            };
            let ci = next / SWAPFILE_CLUSTER;
            let found = self.first_usable(next, self.end_of(ci), probe);
            let Some(off) = found else {
                self.percpu[slot] = None;
                continue;
            };
            if self.flag[ci as usize] == Flag::Free && self.head(Flag::Free) != Some(ci) {
                self.percpu[slot] = None;
                continue;
            }
            self.percpu[slot] = Some(off + 1);
            self.take(off);
            return Some(off);
        }
    }

    /// cluster_alloc_swap_entry with swap_alloc_fast before it (v6.14).
    fn alloc_lists(
        &mut self,
        slot: usize,
        swap_full: bool,
        probe: &mut dyn FnMut(u32) -> Probe,
    ) -> Option<u32> {
        if let Some(off) = self.percpu[slot].take() {
            let ci = off / SWAPFILE_CLUSTER;
            if self.flag[ci as usize] != Flag::Full {
                let from = if self.count[ci as usize] == 0 {
                    ci * SWAPFILE_CLUSTER
                } else {
                    off
                };
                if let Some(s) = self.scan_cluster(slot, ci, from, probe) {
                    return Some(s);
                }
            }
        }
        // The nonfull clusters, then the free list's head, then the frag clusters (each
        // has a free slot, so the first one taken serves). "Try reclaim full clusters if
        // free and nonfull lists are drained" before the frag ones.
        for f in [Flag::Nonfull, Flag::Free, Flag::Frag] {
            if f == Flag::Frag && swap_full {
                self.reclaim_full_clusters(1, probe);
            }
            if let Some(ci) = self.head(f) {
                if let Some(s) = self.isolate_and_scan(slot, ci, probe) {
                    return Some(s);
                }
            }
        }
        None
    }

    /// swap_reclaim_full_clusters (v6.12): up to `clusters` full clusters, oldest first,
    /// are taken off the full list and every slot of them only the swap cache holds is
    /// freed (`probe` says Reclaimed; __try_to_reclaim_swap with TTRS_ANYWAY). A slot freed
    /// moves its cluster to the nonfull list's tail; with none freed the cluster goes back
    /// to the full list's tail. An allocation scans one (force = false); the reclaim
    /// worker as many as the device has clusters in use (force = true).
    pub fn reclaim_full_clusters(&mut self, clusters: usize, probe: &mut dyn FnMut(u32) -> Probe) {
        for _ in 0..clusters {
            let Some(ci) = self.head(Flag::Full) else {
                return;
            };
            self.move_to(ci, Flag::None);
            for s in ci * SWAPFILE_CLUSTER..self.end_of(ci) {
                if probe(s) == Probe::Reclaimed {
                    self.release(s);
                }
            }
            if self.flag[ci as usize] == Flag::None {
                self.relocate(ci);
            }
        }
    }

    /// The first slot of [from, end) the probe finds free or frees (cluster_scan_range; a
    /// slot the caller reclaimed leaves its cluster's count first, as swap_entries_free).
    fn first_usable(
        &mut self,
        from: u32,
        end: u32,
        probe: &mut dyn FnMut(u32) -> Probe,
    ) -> Option<u32> {
        for s in from..end {
            match probe(s) {
                Probe::Free => return Some(s),
                Probe::Reclaimed => {
                    self.release(s);
                    return Some(s);
                }
                Probe::Busy => {}
            }
        }
        None
    }

    /// isolate_lock_cluster, then alloc_swap_scan_cluster from the cluster's start.
    fn isolate_and_scan(
        &mut self,
        slot: usize,
        ci: u32,
        probe: &mut dyn FnMut(u32) -> Probe,
    ) -> Option<u32> {
        self.move_to(ci, Flag::None);
        self.scan_cluster(slot, ci, ci * SWAPFILE_CLUSTER, probe)
    }

    /// alloc_swap_scan_cluster (order 0): the first free slot from `from`; the CPU keeps
    /// the offset after it while the cluster has room there; relocate_cluster.
    fn scan_cluster(
        &mut self,
        slot: usize,
        ci: u32,
        from: u32,
        probe: &mut dyn FnMut(u32) -> Probe,
    ) -> Option<u32> {
        let end = self.end_of(ci);
        let found = self.first_usable(from, end, probe);
        if let Some(off) = found {
            self.take(off);
            if u32::from(self.count[ci as usize]) < SWAPFILE_CLUSTER && off + 1 < end {
                self.percpu[slot] = Some(off + 1);
            }
        }
        self.relocate(ci);
        found
    }

    /// relocate_cluster: file a cluster by its count (6.14).
    fn relocate(&mut self, ci: u32) {
        let i = ci as usize;
        let want = match self.count[i] {
            0 => Flag::Free,
            c if u32::from(c) == SWAPFILE_CLUSTER => Flag::Full,
            _ => Flag::Frag,
        };
        if self.flag[i] != want {
            self.move_to(ci, want);
        }
    }

    /// A slot handed out (by this allocator or the caller's next-fit scan) is in use:
    /// inc_cluster_info_page (alloc_cluster takes a free cluster off its list).
    pub fn take(&mut self, off: u32) {
        let ci = off / SWAPFILE_CLUSTER;
        let i = ci as usize;
        self.count[i] += 1;
        if self.flag[i] == Flag::Free {
            self.move_to(ci, Flag::None);
        }
        if self.lists && u32::from(self.count[i]) == SWAPFILE_CLUSTER {
            self.move_to(ci, Flag::Full);
        }
    }

    /// A slot became free: dec_cluster_info_page / swap_entries_free. An empty cluster
    /// joins the free list's tail; under 6.14 a partly used one the nonfull list's.
    pub fn release(&mut self, off: u32) {
        let ci = off / SWAPFILE_CLUSTER;
        let i = ci as usize;
        debug_assert!(self.count[i] > 0, "slot {off} freed twice");
        self.count[i] -= 1;
        if self.count[i] == 0 {
            self.move_to(ci, Flag::Free);
        } else if self.lists && self.flag[i] != Flag::Nonfull {
            self.move_to(ci, Flag::Nonfull);
        }
    }

    /// Whether this is 6.17's allocator (cluster lists; its scans reclaim cache-only
    /// slots when swap is half full).
    pub fn lists(&self) -> bool {
        self.lists
    }

    /// Slots in use in cluster `ci` (the checker's view; padding included).
    pub fn count(&self, ci: u32) -> u32 {
        u32::from(self.count[ci as usize])
    }

    /// Number of clusters.
    pub fn len(&self) -> usize {
        self.count.len()
    }

    /// True for a device without a slot.
    pub fn is_empty(&self) -> bool {
        self.count.is_empty()
    }

    /// Padding slots (past the device's end) in cluster `ci`.
    pub fn padding(&self, ci: u32) -> u32 {
        (ci + 1) * SWAPFILE_CLUSTER - self.end_of(ci)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A device of `n` slots with a use map, driving the allocator as swapfile.rs does.
    /// A used slot marked `cache_only` (only the swap cache holds it) is freed by a
    /// reclaiming probe once `swap_full` is set.
    struct Dev {
        used: RefCell<Vec<bool>>,
        cache_only: Vec<bool>,
        swap_full: bool,
        c: SwapClusters,
    }

    impl Dev {
        fn new(n: u32, cpus: usize, lists: bool) -> Dev {
            Dev {
                used: RefCell::new(vec![false; n as usize]),
                cache_only: vec![false; n as usize],
                swap_full: false,
                c: SwapClusters::new(u64::from(n), cpus, lists),
            }
        }
        fn alloc(&mut self, cpu: usize) -> Option<u32> {
            let used = &self.used;
            let (cache_only, full) = (&mut self.cache_only, self.swap_full);
            let off = self.c.alloc(cpu, full, &mut |s| {
                let s = s as usize;
                if !used.borrow()[s] {
                    Probe::Free
                } else if full && cache_only[s] {
                    cache_only[s] = false;
                    used.borrow_mut()[s] = false;
                    Probe::Reclaimed
                } else {
                    Probe::Busy
                }
            })?;
            self.used.borrow_mut()[off as usize] = true;
            Some(off)
        }
        fn free(&mut self, off: u32) {
            self.used.borrow_mut()[off as usize] = false;
            self.c.release(off);
        }
    }

    #[test]
    fn each_cpu_fills_a_cluster_of_its_own() {
        for lists in [false, true] {
            let mut d = Dev::new(4 * SWAPFILE_CLUSTER, 2, lists);
            let a: Vec<u32> = (0..3).map(|_| d.alloc(0).unwrap()).collect();
            let b: Vec<u32> = (0..3).map(|_| d.alloc(1).unwrap()).collect();
            let a2 = d.alloc(0).unwrap();
            assert_eq!(a, vec![0, 1, 2], "lists {lists}");
            assert_eq!(b, vec![256, 257, 258], "lists {lists}");
            assert_eq!(a2, 3, "CPU 0 goes on in its own cluster (lists {lists})");
        }
    }

    #[test]
    fn an_emptied_cluster_goes_to_the_free_lists_tail() {
        // 3.14: CPU 0 fills cluster 0 and moves to 1; cluster 0 empties and joins the
        // free list after 2 and 3; CPU 1 takes 2.
        let mut d = Dev::new(4 * SWAPFILE_CLUSTER, 2, false);
        for _ in 0..SWAPFILE_CLUSTER + 1 {
            d.alloc(0).unwrap();
        }
        for s in 0..SWAPFILE_CLUSTER {
            d.free(s);
        }
        assert_eq!(d.alloc(1), Some(2 * SWAPFILE_CLUSTER));
        assert_eq!(d.alloc(1), Some(2 * SWAPFILE_CLUSTER + 1));
    }

    #[test]
    fn without_free_clusters_3_14_leaves_the_slot_to_the_next_fit_scan() {
        let mut d = Dev::new(2 * SWAPFILE_CLUSTER, 1, false);
        for _ in 0..2 * SWAPFILE_CLUSTER {
            d.alloc(0).unwrap();
        }
        d.free(5);
        d.free(300);
        assert_eq!(d.alloc(0), None, "no free cluster: the caller scans");
    }

    #[test]
    fn lists_6_17_prefer_a_nonfull_cluster_to_a_free_one() {
        let mut d = Dev::new(4 * SWAPFILE_CLUSTER, 2, true);
        for _ in 0..SWAPFILE_CLUSTER {
            d.alloc(0).unwrap();
        }
        // Cluster 0 is full; a slot of it is freed: it is nonfull.
        d.free(7);
        // CPU 0's cluster was full (no offset kept): it takes the nonfull cluster first,
        // though clusters 1..3 are free.
        assert_eq!(d.alloc(0), Some(7));
        // CPU 1 has nothing: no nonfull cluster left (0 is full again), so the free head.
        assert_eq!(d.alloc(1), Some(SWAPFILE_CLUSTER));
    }

    /// swap_reclaim_full_clusters: with every cluster full and swap half full, an
    /// allocation frees the cache-only slots of the oldest full cluster, which goes to the
    /// nonfull list; the allocation itself fails (no frag cluster), the next one gets the
    /// first freed slot. Without swap_full nothing is taken back.
    #[test]
    fn lists_6_17_reclaim_the_oldest_full_cluster_when_swap_is_full() {
        for full in [true, false] {
            let mut d = Dev::new(3 * SWAPFILE_CLUSTER, 1, true);
            for _ in 0..3 * SWAPFILE_CLUSTER {
                d.alloc(0).unwrap();
            }
            for s in [5, 6, SWAPFILE_CLUSTER + 9] {
                d.cache_only[s as usize] = true;
            }
            d.swap_full = full;
            assert_eq!(d.alloc(0), None, "full {full}");
            let used = d.used.borrow().clone();
            assert_eq!(
                (!used[5], !used[6], !used[SWAPFILE_CLUSTER as usize + 9]),
                (full, full, false),
                "full {full}: only the oldest full cluster's cache-only slots"
            );
            assert_eq!(d.c.count(0), SWAPFILE_CLUSTER - if full { 2 } else { 0 });
            assert_eq!(d.alloc(0), full.then_some(5), "full {full}");
        }
    }

    /// The reclaim worker's forced pass scans as many full clusters as it is asked for,
    /// oldest first; a cluster it frees nothing in goes back to the full list's tail.
    #[test]
    fn a_forced_reclaim_scans_every_full_cluster() {
        let mut d = Dev::new(3 * SWAPFILE_CLUSTER, 1, true);
        for _ in 0..3 * SWAPFILE_CLUSTER {
            d.alloc(0).unwrap();
        }
        d.cache_only[3] = true;
        d.cache_only[2 * SWAPFILE_CLUSTER as usize + 4] = true;
        let (used, cache_only) = (&d.used, &mut d.cache_only);
        d.c.reclaim_full_clusters(3, &mut |s| {
            if std::mem::take(&mut cache_only[s as usize]) {
                used.borrow_mut()[s as usize] = false;
                Probe::Reclaimed
            } else {
                Probe::Busy
            }
        });
        let counts: Vec<u32> = (0..3).map(|ci| d.c.count(ci)).collect();
        assert_eq!(counts, vec![255, 256, 255]);
        // Clusters 0 and 2 are nonfull now, 0 first.
        d.swap_full = false;
        assert_eq!(d.alloc(0), Some(3));
        assert_eq!(d.alloc(0), Some(2 * SWAPFILE_CLUSTER + 4));
        assert_eq!(d.alloc(0), None);
    }

    #[test]
    fn a_partial_last_cluster_counts_its_padding() {
        let d = Dev::new(SWAPFILE_CLUSTER + 10, 1, true);
        assert_eq!(d.c.len(), 2);
        assert_eq!(d.c.padding(1), SWAPFILE_CLUSTER - 10);
        assert_eq!(d.c.count(1), SWAPFILE_CLUSTER - 10);
    }

    proptest::proptest! {
        /// Over random allocations and frees on random CPUs, every slot handed out was
        /// free, and each cluster's count is its slots in use plus its padding.
        #[test]
        fn counts_match_the_slots_in_use(
            lists in proptest::bool::ANY,
            n in 1u32..1200,
            ops in proptest::collection::vec((0usize..3, proptest::bool::ANY, 0u32..1200), 1..600),
        ) {
            let mut d = Dev::new(n, 3, lists);
            let mut next_fit = 0u32;
            for (cpu, alloc, pick) in ops {
                if alloc {
                    let off = match d.alloc(cpu) {
                        Some(off) => off,
                        None => {
                            // The caller's next-fit scan (3.14), or full (6.14).
                            let used = d.used.borrow().clone();
                            let Some(off) = (0..n).map(|i| (next_fit + i) % n).find(|&s| !used[s as usize]) else {
                                continue;
                            };
                            proptest::prop_assert!(!lists, "6.17 said full with slot {} free", off);
                            next_fit = off + 1;
                            d.c.take(off);
                            d.used.borrow_mut()[off as usize] = true;
                            off
                        }
                    };
                    proptest::prop_assert!(off < n);
                } else {
                    let off = pick % n;
                    if d.used.borrow()[off as usize] {
                        d.free(off);
                    }
                }
                let used = d.used.borrow();
                for ci in 0..d.c.len() as u32 {
                    let lo = ci * SWAPFILE_CLUSTER;
                    let hi = (lo + SWAPFILE_CLUSTER).min(n);
                    let in_use = (lo..hi).filter(|&s| used[s as usize]).count() as u32;
                    proptest::prop_assert_eq!(d.c.count(ci), in_use + d.c.padding(ci));
                }
            }
        }
    }
}
