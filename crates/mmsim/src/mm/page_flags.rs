//! Page flag operations with the kernel's names and costs (include/linux/page-flags.h).
//!
//! `SetPageX` / `ClearPageX` / `TestSetPageX` / `TestClearPageX` are atomic (lock-prefixed)
//! and cost an atomic RMW; `__SetPageX` / `__ClearPageX` are plain RMWs, legal only while
//! no other CPU can see the page (before it is inserted in the page cache or after the last
//! reference is gone). The cost is charged to the running function.
#![allow(non_snake_case)]

use crate::mm::page::{pg, Pfn};
use crate::sim::Sim;

macro_rules! page_flag {
    ($bit:expr, $set:ident, $clear:ident, $nset:ident, $nclear:ident, $tset:ident, $tclear:ident, $test:ident) => {
        impl Sim {
            #[doc = concat!("Atomic set (", stringify!($set), ").")]
            #[inline]
            pub fn $set(&mut self, pfn: Pfn) {
                self.charge_atomic();
                self.mem[pfn as usize].flags |= $bit;
            }
            #[doc = concat!("Atomic clear (", stringify!($clear), ").")]
            #[inline]
            pub fn $clear(&mut self, pfn: Pfn) {
                self.charge_atomic();
                self.mem[pfn as usize].flags &= !$bit;
            }
            #[doc = concat!("Non-atomic set (", stringify!($nset), "): only on a page nobody else can see.")]
            #[inline]
            pub fn $nset(&mut self, pfn: Pfn) {
                self.charge(self.costs.plain_rmw_ps);
                self.mem[pfn as usize].flags |= $bit;
            }
            #[doc = concat!("Non-atomic clear (", stringify!($nclear), "): only on a page nobody else can see.")]
            #[inline]
            pub fn $nclear(&mut self, pfn: Pfn) {
                self.charge(self.costs.plain_rmw_ps);
                self.mem[pfn as usize].flags &= !$bit;
            }
            #[doc = concat!("Atomic test-and-set (", stringify!($tset), "); returns the old value.")]
            #[inline]
            pub fn $tset(&mut self, pfn: Pfn) -> bool {
                self.charge_atomic();
                let p = &mut self.mem[pfn as usize];
                let old = p.flags & $bit != 0;
                p.flags |= $bit;
                old
            }
            #[doc = concat!("Atomic test-and-clear (", stringify!($tclear), "); returns the old value.")]
            #[inline]
            pub fn $tclear(&mut self, pfn: Pfn) -> bool {
                self.charge_atomic();
                let p = &mut self.mem[pfn as usize];
                let old = p.flags & $bit != 0;
                p.flags &= !$bit;
                old
            }
            #[doc = concat!("Test (", stringify!($test), "): a plain load, free.")]
            #[inline]
            pub fn $test(&self, pfn: Pfn) -> bool {
                self.mem[pfn as usize].flags & $bit != 0
            }
        }
    };
}

page_flag!(
    pg::REFERENCED,
    SetPageReferenced,
    ClearPageReferenced,
    __SetPageReferenced,
    __ClearPageReferenced,
    TestSetPageReferenced,
    TestClearPageReferenced,
    PageReferenced
);
page_flag!(
    pg::ACTIVE,
    SetPageActive,
    ClearPageActive,
    __SetPageActive,
    __ClearPageActive,
    TestSetPageActive,
    TestClearPageActive,
    PageActive
);
page_flag!(
    pg::LRU,
    SetPageLRU,
    ClearPageLRU,
    __SetPageLRU,
    __ClearPageLRU,
    TestSetPageLRU,
    TestClearPageLRU,
    PageLRU
);
page_flag!(
    pg::LOCKED,
    SetPageLocked,
    ClearPageLocked,
    __SetPageLocked,
    __ClearPageLocked,
    TestSetPageLocked,
    TestClearPageLocked,
    PageLocked
);
page_flag!(
    pg::UPTODATE,
    SetPageUptodate,
    ClearPageUptodate,
    __SetPageUptodate,
    __ClearPageUptodate,
    TestSetPageUptodate,
    TestClearPageUptodate,
    PageUptodate
);
page_flag!(
    pg::DIRTY,
    SetPageDirty,
    ClearPageDirty,
    __SetPageDirty,
    __ClearPageDirty,
    TestSetPageDirty,
    TestClearPageDirty,
    PageDirty
);
page_flag!(
    pg::WRITEBACK,
    SetPageWriteback,
    ClearPageWriteback,
    __SetPageWriteback,
    __ClearPageWriteback,
    TestSetPageWriteback,
    TestClearPageWriteback,
    PageWriteback
);
page_flag!(
    pg::RECLAIM,
    SetPageReclaim,
    ClearPageReclaim,
    __SetPageReclaim,
    __ClearPageReclaim,
    TestSetPageReclaim,
    TestClearPageReclaim,
    PageReclaim
);
page_flag!(
    pg::SWAPBACKED,
    SetPageSwapBacked,
    ClearPageSwapBacked,
    __SetPageSwapBacked,
    __ClearPageSwapBacked,
    TestSetPageSwapBacked,
    TestClearPageSwapBacked,
    PageSwapBacked
);
page_flag!(
    pg::UNEVICTABLE,
    SetPageUnevictable,
    ClearPageUnevictable,
    __SetPageUnevictable,
    __ClearPageUnevictable,
    TestSetPageUnevictable,
    TestClearPageUnevictable,
    PageUnevictable
);
page_flag!(
    pg::SWAPCACHE,
    SetPageSwapCache,
    ClearPageSwapCache,
    __SetPageSwapCache,
    __ClearPageSwapCache,
    TestSetPageSwapCache,
    TestClearPageSwapCache,
    PageSwapCache
);
page_flag!(
    pg::ERROR,
    SetPageError,
    ClearPageError,
    __SetPageError,
    __ClearPageError,
    TestSetPageError,
    TestClearPageError,
    PageError
);
page_flag!(
    pg::READAHEAD,
    SetPageReadahead,
    ClearPageReadahead,
    __SetPageReadahead,
    __ClearPageReadahead,
    TestSetPageReadahead,
    TestClearPageReadahead,
    PageReadahead
);
page_flag!(
    pg::MLOCKED,
    SetPageMlocked,
    ClearPageMlocked,
    __SetPageMlocked,
    __ClearPageMlocked,
    TestSetPageMlocked,
    TestClearPageMlocked,
    PageMlocked
);

impl Sim {
    /// trylock_page: atomic test-and-set of PG_locked; true if we got the lock.
    #[inline]
    pub fn trylock_page(&mut self, pfn: Pfn) -> bool {
        !self.TestSetPageLocked(pfn)
    }
    /// unlock_page: clear PG_locked and wake waiters (wake_up_page).
    pub fn unlock_page(&mut self, pfn: Pfn) {
        self.ClearPageLocked(pfn);
        self.wake_up_page(pfn);
    }
    /// get_page: take a reference (atomic increment of _count).
    #[inline]
    pub fn get_page(&mut self, pfn: Pfn) {
        self.charge_atomic();
        // A tail page's reference is its folio's (folio_get(page_folio(page))).
        let pfn = self.folio_head(pfn);
        self.mem[pfn as usize].refcount += 1;
    }
}
