//! Memory-management core (mm/): pages, the allocator, LRU lists and pagevecs, the page
//! cache, readahead, workingset shadow entries, truncation, vmstat and the checker.

pub mod check;
pub mod fadvise;
pub mod filemap;
pub mod folio;
pub mod fork;
pub mod lru_deque;
pub mod lru_gen;
pub mod lru_gen_v6_1;
pub mod madvise;
pub mod memcontrol;
pub mod memcontrol_v1;
pub mod memory;
pub mod mlock;
pub mod mmap;
pub mod node;
pub mod oom_kill;
pub mod page;
pub mod page_alloc;
pub mod page_flags;
pub mod policy;
pub mod radix_tree;
pub mod readahead;
pub mod rmap;
pub mod slab;
pub mod swap;
pub mod swap_cluster;
pub mod swap_slots;
pub mod swapfile;
pub mod tracepoints;
pub mod truncate;
pub mod vmscan;
pub mod vmstat;
pub mod workingset;
pub mod zram;
pub mod zswap;
