//! Reverse mapping (mm/rmap.c) and the batched TLB flush of seed 002.
//!
//! Page tables and TLBs are not modelled yet (they come with the virtual-memory issue), so
//! no page is ever mapped: `page_referenced` finds no young PTE, `try_to_unmap` has nothing
//! to unmap, and the TLB-flush batch is never pending. These functions are the interface
//! reclaim already calls, with the correct results for unmapped pages.

use crate::mm::page::Pfn;
use crate::sim::Sim;

/// VM_READ.
pub const VM_READ: u64 = 0x1;
/// VM_WRITE.
pub const VM_WRITE: u64 = 0x2;
/// VM_EXEC.
pub const VM_EXEC: u64 = 0x4;
/// VM_SHARED.
pub const VM_SHARED: u64 = 0x8;
/// VM_LOCKED.
pub const VM_LOCKED: u64 = 0x2000;

/// Result of try_to_unmap (SWAP_SUCCESS / SWAP_AGAIN / SWAP_FAIL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtuResult {
    /// Every mapping removed.
    Success,
    /// Try again later.
    Again,
    /// Cannot unmap (referenced, locked).
    Fail,
}

impl Sim {
    /// page_referenced: (number of mappings with a young PTE, OR of their vm_flags); clears
    /// the young bits. Unmapped pages are skipped.
    pub fn page_referenced(&mut self, pfn: Pfn) -> (u32, u64) {
        if !self.mem[pfn as usize].mapped() {
            return (0, 0);
        }
        (0, 0)
    }

    /// try_to_unmap: remove every PTE mapping the page (TTU_BATCH_FLUSH when `batch`).
    pub fn try_to_unmap(&mut self, pfn: Pfn, batch: bool) -> TtuResult {
        let _ = (pfn, batch);
        TtuResult::Success
    }

    /// init_tlb_ubc: start a reclaim batch with no flush pending.
    pub fn init_tlb_ubc(&mut self) {}

    /// try_to_unmap_flush: flush every TLB entry deferred by the batch.
    pub fn try_to_unmap_flush(&mut self) {}

    /// try_to_unmap_flush_dirty: flush deferred writable entries before IO.
    pub fn try_to_unmap_flush_dirty(&mut self) {}
}
