//! Swap devices and the swap cache (mm/swapfile.c, mm/swap_state.c).
//!
//! Not modelled yet: scenarios have no swap device, so `total_swap_pages` is 0, get_scan_count
//! scans only file lists, and anonymous / shmem pages are not reclaimable (as in a kernel
//! without swap). These functions are the interface reclaim calls.

use crate::mm::page::Pfn;
use crate::sim::Sim;

/// A swap device (swap_info_struct).
#[derive(Clone, Debug, Default)]
pub struct SwapInfo {
    /// Pages of swap space.
    pub nr_pages: u64,
    /// Free pages of swap space.
    pub free_pages: u64,
}

impl Sim {
    /// Free swap pages.
    pub fn swap_free_pages(&self) -> u64 {
        self.swap.as_ref().map(|s| s.free_pages).unwrap_or(0)
    }
    /// add_to_swap: allocate a swap slot and add the page to the swap cache.
    pub fn add_to_swap(&mut self, _pfn: Pfn) -> bool {
        false
    }
    /// swap_writepage.
    pub fn swap_writepage(&mut self, _pfn: Pfn) {
        unreachable!("no page enters the swap cache without a swap device")
    }
    /// __remove_mapping for a swap-cache page.
    pub fn remove_from_swap_cache_frozen(&mut self, _pfn: Pfn) -> bool {
        false
    }
}
