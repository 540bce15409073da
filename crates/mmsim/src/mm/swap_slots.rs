//! The swap slots cache (mm/swap_slots.c, v4.11 to v6.14): swap slots handed out and taken
//! back in per-CPU batches.
//!
//! - v4.11 (`swap-slots-cache`: "mm/swap: add cache for swap slots allocation" and "mm/swap:
//!   free swap slots in batch"). folio_alloc_swap (get_swap_page before 5.16) takes the
//!   slot from the running CPU's cache of up to SWAP_SLOTS_CACHE_SIZE (64) slots. An empty
//!   cache is refilled with up to 64 slots at once (refill_swap_slots_cache:
//!   get_swap_pages, here 64 allocations from the CPU's cluster or the next-fit scan in a
//!   row). A refilled slot is taken (SWAP_HAS_CACHE in swap_map, `SwapInfo::reserved`): it
//!   counts as used in nr_swap_pages (SwapFree, vm_swap_full) and in its cluster, and is
//!   charged to a memcg only when handed out.
//! - free_swap_slot: a slot whose last user left (no PTE refers to it, no page caches it)
//!   goes to the running CPU's return cache, not to the free pool. It stays taken, and
//!   charged to its memcg's memory.swap.current, until the return cache holds 64 and the
//!   next free returns all of them (swapcache_free_entries: swap_entry_free each, in the
//!   order they were freed; with one swap device the kernel does not sort them).
//! - check_cache_active, at each allocation: the cache turns on when more than 5 × 64 slots
//!   per online CPU are free (THRESHOLD_ACTIVATE_SWAP_SLOTS_CACHE), and off when fewer than
//!   2 × 64 are (THRESHOLD_DEACTIVATE_SWAP_SLOTS_CACHE): every CPU's cache, both sides, is
//!   then returned. While off, slots are allocated and freed one at a time.
//! - A scan that takes back a slot only the swap cache holds (swap half full,
//!   __try_to_reclaim_swap) frees it through free_swap_slot too: with the cache on, the
//!   slot goes to the return cache and the scan moves on.
//! - v6.15 (`no-swap-slots-cache`, "mm, swap: remove swap slot cache") removed it.
//!
//! Not modelled: the cost of the cache's own locks and the si->lock round trips it saves
//! (the profile charges each allocation and free as before), get_swap_pages' latency limit
//! (LATENCY_LIMIT slots scanned per batch), swapoff's drain. With 6.17's cluster lists
//! (`swap-cluster-lists`) switched on beside the cache, which no kernel had, their scan
//! does not take back cache-only slots while the cache is on.

use std::collections::VecDeque;

use crate::sim::Sim;

/// SWAP_SLOTS_CACHE_SIZE: slots a CPU's cache holds on each side.
pub const SWAP_SLOTS_CACHE_SIZE: usize = 64;
/// THRESHOLD_ACTIVATE_SWAP_SLOTS_CACHE: free slots per online CPU above which the cache
/// turns on.
pub const THRESHOLD_ACTIVATE_SWAP_SLOTS_CACHE: u64 = 5 * SWAP_SLOTS_CACHE_SIZE as u64;
/// THRESHOLD_DEACTIVATE_SWAP_SLOTS_CACHE: free slots per online CPU below which it turns
/// off.
pub const THRESHOLD_DEACTIVATE_SWAP_SLOTS_CACHE: u64 = 2 * SWAP_SLOTS_CACHE_SIZE as u64;

/// One CPU's swap_slots_cache: slots to hand out (slots[cur..]) and slots returned.
#[derive(Clone, Debug, Default)]
struct CpuSlots {
    slots: VecDeque<u32>,
    ret: Vec<u32>,
}

/// The per-CPU swap slots caches and swap_slot_cache_active.
#[derive(Clone, Debug)]
pub struct SwapSlotsCache {
    active: bool,
    cpus: Vec<CpuSlots>,
}

impl SwapSlotsCache {
    /// The caches of `cpus` online CPUs, empty and not yet active (swap_slot_cache_active
    /// starts false; the first allocation activates it when enough slots are free).
    pub fn new(cpus: usize) -> SwapSlotsCache {
        SwapSlotsCache {
            active: false,
            cpus: vec![CpuSlots::default(); cpus.max(1)],
        }
    }

    /// swap_slot_cache_active.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// check_cache_active with `free` slots free (get_nr_swap_pages): turn the cache on
    /// above 5 × 64 free slots per CPU, off below 2 × 64. Returns what a deactivation
    /// drains (__drain_swap_slots_cache: per CPU, the slots not handed out, then the
    /// returned ones), which the caller frees in that order.
    pub fn check_active(&mut self, free: u64) -> Vec<u32> {
        let cpus = self.cpus.len() as u64;
        if !self.active {
            self.active = free > cpus * THRESHOLD_ACTIVATE_SWAP_SLOTS_CACHE;
            return Vec::new();
        }
        if free >= cpus * THRESHOLD_DEACTIVATE_SWAP_SLOTS_CACHE {
            return Vec::new();
        }
        self.active = false;
        let mut drained = Vec::new();
        for c in &mut self.cpus {
            drained.extend(c.slots.drain(..));
            drained.append(&mut c.ret);
        }
        drained
    }

    /// The next slot of CPU `cpu`'s cache, in the order the refill got them.
    pub fn take(&mut self, cpu: usize) -> Option<u32> {
        let n = self.cpus.len();
        self.cpus[cpu % n].slots.pop_front()
    }

    /// refill_swap_slots_cache: CPU `cpu`'s cache gets `slots`.
    pub fn refill(&mut self, cpu: usize, slots: impl IntoIterator<Item = u32>) {
        let n = self.cpus.len();
        self.cpus[cpu % n].slots.extend(slots);
    }

    /// free_swap_slot on CPU `cpu`: `off` joins the return cache. When that already holds
    /// SWAP_SLOTS_CACHE_SIZE slots they are returned first: the result, which the caller
    /// frees in order.
    pub fn put(&mut self, cpu: usize, off: u32) -> Vec<u32> {
        let n = self.cpus.len();
        let c = &mut self.cpus[cpu % n];
        let batch = if c.ret.len() >= SWAP_SLOTS_CACHE_SIZE {
            std::mem::take(&mut c.ret)
        } else {
            Vec::new()
        };
        c.ret.push(off);
        batch
    }

    /// Slots CPU `cpu` may hand out without a refill.
    pub fn cached(&self, cpu: usize) -> usize {
        self.cpus[cpu % self.cpus.len()].slots.len()
    }

    /// Slots CPU `cpu` holds freed and not yet returned.
    pub fn returned(&self, cpu: usize) -> &[u32] {
        &self.cpus[cpu % self.cpus.len()].ret
    }

    /// The slots every CPU may still hand out (for the checker).
    pub fn to_hand_out(&self) -> impl Iterator<Item = u32> + '_ {
        self.cpus.iter().flat_map(|c| c.slots.iter().copied())
    }

    /// Every slot a cache holds, either side (for the checker).
    pub fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.cpus
            .iter()
            .flat_map(|c| c.slots.iter().copied().chain(c.ret.iter().copied()))
    }
}

impl Sim {
    /// folio_alloc_swap's cached path: a slot from the running CPU's cache, refilled when
    /// empty. None when there is no cache, it is off (check_cache_active, which may drain
    /// it now), or no slot is free; the caller then asks the allocator for one slot.
    pub(crate) fn alloc_swap_slot_cached(&mut self) -> Option<u32> {
        let cpu = self.cur.cpu;
        let s = self.swap.as_mut()?;
        let free = s.free_pages;
        let cache = s.slots_cache.as_mut()?;
        let drained = cache.check_active(free);
        let active = cache.is_active();
        self.swapcache_free_entries(&drained);
        if !active {
            return None;
        }
        let mut got = self.swap_slots_take(cpu);
        if got.is_none() {
            self.refill_swap_slots_cache(cpu);
            got = self.swap_slots_take(cpu);
        }
        got
    }

    /// A slot out of CPU `cpu`'s cache, no longer held by it.
    fn swap_slots_take(&mut self, cpu: usize) -> Option<u32> {
        let s = self.swap.as_mut()?;
        let off = s.slots_cache.as_mut()?.take(cpu)?;
        s.reserved[off as usize] = false;
        Some(off)
    }

    /// refill_swap_slots_cache: up to SWAP_SLOTS_CACHE_SIZE slots from the allocator
    /// (get_swap_pages), each taken and held by CPU `cpu`'s cache.
    fn refill_swap_slots_cache(&mut self, cpu: usize) {
        let mut got = Vec::with_capacity(SWAP_SLOTS_CACHE_SIZE);
        while got.len() < SWAP_SLOTS_CACHE_SIZE {
            let Some(off) = self.get_swap_page() else {
                break;
            };
            self.swap.as_mut().expect("swap").reserved[off as usize] = true;
            got.push(off);
        }
        if let Some(c) = self.swap.as_mut().and_then(|s| s.slots_cache.as_mut()) {
            c.refill(cpu, got);
        }
    }

    /// free_swap_slot: slot `off`, now unused, goes to the running CPU's return cache
    /// while the cache is on (returning the full batch before it), else back to the pool.
    pub(crate) fn free_swap_slot(&mut self, off: u32) {
        let cpu = self.cur.cpu;
        let Some(s) = self.swap.as_mut() else {
            return;
        };
        let batch = match s.slots_cache.as_mut() {
            Some(c) if c.is_active() => {
                s.reserved[off as usize] = true;
                c.put(cpu, off)
            }
            _ => return self.swap_entry_free(off),
        };
        self.swapcache_free_entries(&batch);
    }

    /// swapcache_free_entries: the slots a cache held go back to the pool, in order.
    fn swapcache_free_entries(&mut self, slots: &[u32]) {
        for &off in slots {
            self.swap.as_mut().expect("swap").reserved[off as usize] = false;
            self.swap_entry_free(off);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn turns_on_above_five_batches_per_cpu_and_off_below_two() {
        let mut c = SwapSlotsCache::new(2);
        assert!(c.check_active(640).is_empty());
        assert!(!c.is_active(), "640 free slots are not more than 2 × 320");
        c.check_active(641);
        assert!(c.is_active());
        c.refill(0, [5, 6, 7]);
        c.put(1, 9);
        c.put(0, 3);
        assert!(c.check_active(256).is_empty(), "256 is not below 2 × 128");
        assert!(c.is_active());
        assert_eq!(c.check_active(255), vec![5, 6, 7, 3, 9]);
        assert!(!c.is_active());
        assert_eq!(c.held().count(), 0);
        // Off, it stays off until more than 640 slots are free again.
        c.check_active(600);
        assert!(!c.is_active());
    }

    #[test]
    fn hands_out_in_refill_order() {
        let mut c = SwapSlotsCache::new(1);
        c.refill(0, [10, 11, 12]);
        assert_eq!(c.take(0), Some(10));
        assert_eq!(c.take(0), Some(11));
        assert_eq!(c.cached(0), 1);
        assert_eq!(c.take(0), Some(12));
        assert_eq!(c.take(0), None);
    }

    #[test]
    fn the_sixty_fifth_free_returns_the_first_sixty_four() {
        let mut c = SwapSlotsCache::new(2);
        for off in 0..64 {
            assert!(c.put(1, off).is_empty());
        }
        assert_eq!(c.returned(1).len(), 64);
        assert_eq!(c.put(1, 100), (0..64).collect::<Vec<_>>());
        assert_eq!(c.returned(1), &[100]);
        assert!(c.returned(0).is_empty(), "CPU 0's return cache is its own");
    }

    proptest! {
        /// Every slot given to the cache (refilled or freed) is, at any time, either still
        /// held or has come back exactly once (taken, returned in a batch, or drained).
        #[test]
        fn every_slot_comes_back_once(ops in proptest::collection::vec((0u8..4, 0usize..3, 0u64..2000), 1..300)) {
            let mut c = SwapSlotsCache::new(3);
            let mut next = 0u32;
            let mut given = std::collections::BTreeSet::new();
            let mut back = Vec::new();
            for (op, cpu, free) in ops {
                match op {
                    0 => {
                        c.refill(cpu, [next, next + 1]);
                        given.extend([next, next + 1]);
                        next += 2;
                    }
                    1 => back.extend(c.take(cpu)),
                    2 => {
                        back.extend(c.put(cpu, next));
                        given.insert(next);
                        next += 1;
                    }
                    _ => back.extend(c.check_active(free)),
                }
            }
            let mut all: Vec<u32> = back.into_iter().chain(c.held()).collect();
            all.sort_unstable();
            let n = all.len();
            all.dedup();
            prop_assert_eq!(n, all.len(), "a slot came back twice");
            prop_assert_eq!(all, given.into_iter().collect::<Vec<_>>());
        }
    }
}
