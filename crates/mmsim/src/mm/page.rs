//! `struct page`: one per physical frame, in one array indexed by PFN (the kernel's mem_map).
//!
//! Flags follow include/linux/page-flags.h. The kernel distinguishes atomic flag updates
//! (`SetPageReferenced`, a lock-prefixed RMW that is safe on a page other CPUs can see) from
//! non-atomic ones (`__SetPageReferenced`, a plain RMW, legal only while nobody else can see
//! the page). Here they are different methods on `Sim` with different costs (see
//! `mm::page_flags`); this module only holds the data.

use crate::machine::NodeId;

/// A page frame number: index into `Sim::mem`.
pub type Pfn = u32;
/// "No page": an empty list's end, a hole in an LRU ring, no link.
pub const NIL: Pfn = u32::MAX;
/// Size of a page in bytes.
pub const PAGE_SIZE: u64 = 4096;
/// log2(PAGE_SIZE).
pub const PAGE_SHIFT: u32 = 12;

/// Page flag bits (a subset of enum pageflags, same meanings).
pub mod pg {
    /// Sleeping bit lock (read IO, write_begin..write_end, truncate, reclaim).
    pub const LOCKED: u32 = 1 << 0;
    /// Recently referenced (first step of mark_page_accessed).
    pub const REFERENCED: u32 = 1 << 1;
    /// Contents are valid.
    pub const UPTODATE: u32 = 1 << 2;
    /// Must be written back.
    pub const DIRTY: u32 = 1 << 3;
    /// On an LRU list (not in a pagevec).
    pub const LRU: u32 = 1 << 4;
    /// On the active list (or to be added active).
    pub const ACTIVE: u32 = 1 << 5;
    /// Under writeback IO.
    pub const WRITEBACK: u32 = 1 << 6;
    /// Rotate to the inactive tail when writeback ends.
    pub const RECLAIM: u32 = 1 << 7;
    /// Anonymous or shmem: belongs on the anon LRU lists.
    pub const SWAPBACKED: u32 = 1 << 8;
    /// On the unevictable list.
    pub const UNEVICTABLE: u32 = 1 << 9;
    /// In the swap cache.
    pub const SWAPCACHE: u32 = 1 << 10;
    /// Readahead marker (async readahead trigger): PG_readahead is PG_reclaim's bit
    /// (`PG_readahead = PG_reclaim` since v2.6.24: the first is meant for pages being
    /// read, the second for pages being written), so a marker left on a page that is
    /// then written rotates it at its writeback end, and a page reclaim marked triggers
    /// async readahead when read.
    pub const READAHEAD: u32 = RECLAIM;
    /// Some task waits on this page's lock or writeback (PG_waiters).
    pub const WAITERS: u32 = 1 << 12;
    /// Free: on the buddy free list (PageBuddy).
    pub const BUDDY: u32 = 1 << 13;
    /// The last IO on this page failed (PG_error).
    pub const ERROR: u32 = 1 << 14;
    /// The page was on the active list before (PG_workingset, v4.20).
    pub const WORKINGSET: u32 = 1 << 15;
    /// MGLRU: the folio's generation + 1 while it is on an lrugen list (LRU_GEN_MASK;
    /// 0 = not on one).
    pub const LRU_GEN_SHIFT: u32 = 16;
    /// LRU_GEN_MASK (3 bits: gen + 1 of MAX_NR_GENS = 4).
    pub const LRU_GEN_MASK: u32 = 0x7 << LRU_GEN_SHIFT;
    /// MGLRU: accesses through file descriptors beyond PG_referenced (LRU_REFS_MASK,
    /// LRU_REFS_WIDTH = MAX_NR_TIERS - 2 = 2 bits).
    pub const LRU_REFS_SHIFT: u32 = 19;
    /// LRU_REFS_MASK.
    pub const LRU_REFS_MASK: u32 = 0x3 << LRU_REFS_SHIFT;
    /// Model-only: the generation whose list the folio physically sits on. The kernel's
    /// aging (folio_update_gen) changes a folio's generation in its flags and leaves it on
    /// the old list until the eviction sorts it; `list_del` needs no list head there, ours
    /// does, so the list is remembered here (2 bits, valid while LRU_GEN_MASK is non-zero).
    pub const LRU_LIST_SHIFT: u32 = 21;
    /// See `LRU_LIST_SHIFT`.
    pub const LRU_LIST_MASK: u32 = 0x3 << LRU_LIST_SHIFT;
    /// A page-table page (the PG_table page type; not on an LRU, never reclaimed).
    pub const TABLE: u32 = 1 << 23;
    /// A slab page of the VFS caches (PG_slab; not on an LRU, freed by the shrinker or when
    /// its objects are freed).
    pub const SLAB: u32 = 1 << 24;
    /// Mapped by a VM_LOCKED VMA (PG_mlocked): unevictable, kept on the unevictable list
    /// (mm/mlock.c).
    pub const MLOCKED: u32 = 1 << 25;
    /// PG_dropbehind (v6.14): brought in by RWF_DONTCACHE IO, to leave the page cache once
    /// read or written back (filemap_end_dropbehind).
    pub const DROPBEHIND: u32 = 1 << 26;
    /// A buffer of the page is in the journal's running transaction (jbd2: its
    /// journal_head's b_transaction; `fs/jbd2.rs`). With the next two bits: the journal
    /// holds the buffer, try_to_free_buffers fails.
    pub const JBD_RUNNING: u32 = 1 << 27;
    /// A buffer of the page is in the committing transaction (being written to the log).
    pub const JBD_COMMIT: u32 = 1 << 28;
    /// A buffer of the page is on the journal's checkpoint list (logged; released once
    /// written back and clean).
    pub const JBD_CHECKPOINT: u32 = 1 << 29;
    /// PG_head of a large folio (`large-folios`, `mm::folio`): the folio's flags, lock,
    /// references and LRU place are this page's; `mlock_count` holds the folio's order
    /// and `private` its first tail page.
    pub const HEAD: u32 = 1 << 30;
    /// A tail page of a large folio: `prev` is the head, `next` the next tail (NIL after
    /// the last). Never on a list; its mapping, index and memcg are the folio's.
    pub const TAIL: u32 = 1 << 31;
    /// Names of the bits, for dumps.
    pub const NAMES: &[(u32, &str)] = &[
        (LOCKED, "locked"),
        (REFERENCED, "referenced"),
        (UPTODATE, "uptodate"),
        (DIRTY, "dirty"),
        (LRU, "lru"),
        (ACTIVE, "active"),
        (WRITEBACK, "writeback"),
        (RECLAIM, "reclaim"),
        (SWAPBACKED, "swapbacked"),
        (UNEVICTABLE, "unevictable"),
        (SWAPCACHE, "swapcache"),
        (WAITERS, "waiters"),
        (BUDDY, "buddy"),
        (ERROR, "error"),
        (WORKINGSET, "workingset"),
        (TABLE, "table"),
        (SLAB, "slab"),
        (MLOCKED, "mlocked"),
        (DROPBEHIND, "dropbehind"),
        (JBD_RUNNING, "jbd_running"),
        (JBD_COMMIT, "jbd_commit"),
        (JBD_CHECKPOINT, "jbd_checkpoint"),
        (HEAD, "head"),
        (TAIL, "tail"),
    ];
}

/// Who owns a page's `mapping` field.
pub type MappingId = u32;
/// No mapping.
pub const NO_MAPPING: MappingId = 0;

/// One physical page frame.
#[derive(Clone, Debug)]
pub struct Page {
    /// PG_* bits.
    pub flags: u32,
    /// _count / _refcount.
    pub refcount: i32,
    /// _mapcount (starts at -1 = not mapped).
    pub mapcount: i32,
    /// Owning address_space (inode number + 1), or NO_MAPPING.
    pub mapping: MappingId,
    /// Node the frame belongs to.
    pub node: u16,
    /// The memory cgroup the page is charged to (folio_memcg), or NO_MEMCG.
    pub memcg: u16,
    /// Offset within the mapping, in pages.
    pub index: u64,
    /// A folio head on an LRU list: the low half of its slot position in the list's ring
    /// (`mm::lru_deque`). A large folio's tail page: its head. NIL otherwise.
    pub prev: Pfn,
    /// A folio head on an LRU list: the high half of its slot position. A large folio's
    /// tail page: the next tail (NIL after the last). NIL otherwise.
    pub next: Pfn,
    /// Content version (content oracle): bumped by writes, persisted by writeback.
    pub version: u32,
    /// page_private: the swap offset of a swap-cache page.
    pub private: u32,
    /// folio->mlock_count (v5.18, `mlock-count`): the VM_LOCKED mappings counted on a page
    /// of the unevictable list (the kernel overlays it on lru.prev; here the struct's
    /// padding holds it, so a frame stays 48 bytes). Meaningless elsewhere.
    pub mlock_count: u32,
}

impl Page {
    /// A free frame on `node`.
    pub fn new_free(node: NodeId) -> Page {
        Page {
            flags: pg::BUDDY,
            refcount: 0,
            mapcount: -1,
            mapping: NO_MAPPING,
            node: node as u16,
            memcg: crate::mm::memcontrol::NO_MEMCG,
            index: 0,
            prev: NIL,
            next: NIL,
            version: 0,
            private: 0,
            mlock_count: 0,
        }
    }
    /// Test a flag.
    #[inline]
    pub fn test(&self, bit: u32) -> bool {
        self.flags & bit != 0
    }
    /// Flag names set on this page, for dumps.
    pub fn flag_names(&self) -> String {
        pg::NAMES
            .iter()
            .filter(|(b, _)| self.flags & b != 0)
            .map(|(_, n)| *n)
            .collect::<Vec<_>>()
            .join("|")
    }
    /// page_mapped(): mapped by at least one PTE.
    pub fn mapped(&self) -> bool {
        self.mapcount >= 0
    }
    /// folio_nr_pages of a folio's head (1 for an order-0 page): what it counts for on an
    /// LRU list.
    #[inline]
    pub fn nr_pages(&self) -> u64 {
        if self.flags & pg::HEAD != 0 {
            1 << self.mlock_count
        } else {
            1
        }
    }
}
