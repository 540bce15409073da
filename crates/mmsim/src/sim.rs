//! The simulated machine and kernel in one struct, and the deterministic engine.
//!
//! `Sim` owns every piece of state (CPUs, mem_map, nodes, inodes, devices, tasks). Kernel
//! functions are methods on `Sim`, spread over the modules named after the kernel files that
//! hold them (`mm/filemap.rs` has `pagecache_get_page`, `mm/swap.rs` has
//! `mark_page_accessed`, …), so `grep` finds them.
//!
//! Engine: every CPU has a virtual clock. The engine repeatedly takes the earliest thing that
//! can happen — a pending event (IO completion, timer) or the step of a runnable task on the
//! CPU with the smallest clock — ties broken by event sequence number, then CPU id. A task
//! step is one small unit (one syscall or part of one that blocked, one writeback batch).
//! Charges advance the running CPU's clock and are attributed to the innermost running
//! kernel function (the profile) and to user / system / interrupt time.

use crate::fs::{BlockDevice, FileSystem, Inode, IoRequest};
use crate::machine::cost::CostTable;
use crate::machine::profile::{KFunc, Profile};
use crate::machine::{Cpu, CpuId, Event, EventQueue, Mode, Ps};
use crate::mm::node::PgData;
use crate::mm::page::{pg, Page, Pfn};
use crate::mm::swap::CpuPagevecs;
use crate::mm::vmstat::{VmItem, VmStat};
use crate::scenario::{Scenario, KNOWN_FEATURES};
use crate::sched::{KThread, Task, TaskBody, TaskId, TaskState, Wait};
use crate::workload::OpResult;
use std::collections::BTreeMap;

/// The studied kernel changes and base mechanisms that can be switched per run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    /// Seed 000: init_page_accessed before the page is visible (FGP_ACCESSED).
    pub accessed_init: bool,
    /// Seed 001: referenced VM_EXEC file pages stay active.
    pub exec_protect: bool,
    /// Seed 002: batched TLB shootdowns during reclaim.
    pub batch_tlb_flush: bool,
    /// Seed 003: truncate clears a pagevec's shadow entries under one tree_lock.
    pub truncate_batch_shadow: bool,
    /// Workingset shadow entries and refault activation (v3.15; on in both presets).
    pub workingset: bool,
    /// get_scan_count scans only file pages while the inactive file list is not low
    /// (v3.8, "mm: vmscan: only evict file pages when we have plenty"; on in both presets;
    /// off models the 2.6.2x/3.x get_scan_ratio, which always split by the rotation ratios).
    pub file_only_when_plenty: bool,
    /// swapin_readahead sizes its window by the readahead hits since the last swap-cache
    /// miss (v3.15 swapin_nr_pages; on in both presets; off = the fixed aligned cluster of
    /// 2^page_cluster slots of 2.6.x–3.14).
    pub adaptive_swap_readahead: bool,
    /// A read fault on a file mapping also maps the neighbouring pages that are already
    /// cached and uptodate, up to fault_around_bytes (64 KiB) around it (v3.15, "mm:
    /// introduce do_fault_around()", ->map_pages). Off: each page is mapped by its own
    /// fault, as 2.6.x–3.14 did.
    pub fault_around: bool,
    /// try_charge charges a memcg's page counters MEMCG_CHARGE_BATCH pages at a time and
    /// keeps the rest in a per-CPU stock (memcg_stock) that later charges on that CPU take
    /// without touching the counters (v2.6.33, "memcg: coalesce charging via percpu
    /// storage"; 32 pages). Off: every charge reaches the counters.
    pub memcg_charge_stock: bool,
    /// MEMCG_CHARGE_BATCH is 64 pages (v6.0, "memcg: increase MEMCG_CHARGE_BATCH to 64");
    /// off, 32.
    pub memcg_charge_batch_64: bool,
    /// A CPU's charge stock holds up to NR_MEMCG_STOCK (7) memcgs, a full stock evicting
    /// a random one (v6.16, "memcg: multi-memcg percpu charge cache"); off, one memcg,
    /// replaced by the next charge of another.
    pub memcg_multi_stock: bool,
    /// A charge that leaves more than MEMCG_CHARGE_BATCH pages of over-high work queued
    /// runs that work (reclaim_high and the throttling) at once, inside the charge (v5.18,
    /// "memcg: synchronously enforce memory.high for large overcharges"). Off: only on the
    /// return to user space, so one large syscall may overrun memory.high by all it
    /// charges.
    pub memcg_sync_high: bool,
    /// An mlocked page on the unevictable list counts the VM_LOCKED mappings that mlocked
    /// it (folio->mlock_count; v5.18, "mm/munlock: maintain page->mlock_count while
    /// unevictable"): munlock decrements it and releases the page at 0; a page found by
    /// reclaim in a VM_LOCKED VMA is mlocked there and activated (FOLIOREF_ACTIVATE). Off,
    /// munlock clears PG_mlocked and keeps the page locked only if an rmap walk finds
    /// another VM_LOCKED mapping (try_to_munlock), the last unmap of a still-mlocked page
    /// clears it (clear_page_mlock, unevictable_pgs_cleared), and reclaim lets
    /// try_to_unmap mlock it (PAGEREF_RECLAIM).
    pub mlock_count: bool,
    /// memory.high throttles: the over-high work on the return to user space retries
    /// reclaim while it makes progress (or up to MAX_RECLAIM_RETRIES times without) and,
    /// usage still above high, sleeps calculate_high_delay's penalty (v5.4, "mm, memcg:
    /// throttle allocators when failing reclaim over memory.high"; the retries from
    /// v5.8, "mm, memcg: reclaim more aggressively before high allocator throttling").
    /// Off: one reclaim pass of the pages charged over high, no sleep (v4.5–v5.3).
    pub memcg_high_throttle: bool,
    /// Page-table pages are charged to the faulting task's memory cgroup (x86 pte_alloc_one
    /// with __GFP_ACCOUNT, v4.7, "arch: x86: charge page tables to kmemcg"): they count in
    /// memory.current and memory.max applies to them. Off: they take frames but no memcg
    /// charge (2.6.30–4.6).
    pub memcg_kmem_pgtables: bool,
    /// The dentry and inode caches are SLAB_ACCOUNT: their slab pages are charged to the
    /// allocating task's memory cgroup (v4.5, "kmemcg: account certain kmem allocations to
    /// memcg"). Off: they take frames but no memcg charge, and only global reclaim shrinks
    /// them (2.6.30–4.4).
    pub memcg_kmem_vfs: bool,
    /// An open file's `struct file` is an object of the `filp` slab cache, SLAB_ACCOUNT:
    /// charged to the opening task's memory cgroup from open to close (v4.15, "fs, mm:
    /// account filp and names caches to kmemcg"; `mm::slab`). Off: open files take no
    /// memory (their slab, never charged before 4.15, is not modelled in the older eras).
    pub filp_kmem: bool,
    /// One set of slab caches for every memcg, and each object charged in bytes through
    /// its obj_cgroup (v5.9, "mm: memcg/slab: charge individual slab objects instead of
    /// pages"; `mm::slab`): the slabs are shared and charged to no cgroup; a cgroup pays
    /// its objects' bytes, in whole pages through a byte stock, and memory.stat `slab_*`
    /// counts the bytes. Off: each memcg has its own slabs, whose pages it is charged
    /// (4.5–5.8).
    pub memcg_kmem_objcg: bool,
    /// memory.reclaim accepts `swappiness=max`: reclaim anonymous pages only
    /// (SWAPPINESS_ANON_ONLY; v6.16, "mm: add swappiness=max arg to memory.reclaim for
    /// only anon reclaim"). Off: the write is EINVAL.
    pub memory_reclaim_swappiness_max: bool,
    /// Reclaim writes dirty file pages only from kswapd, and only while the node's LRU
    /// tail is full of dirty pages (ZONE_DIRTY) (v3.2, "mm: vmscan: do not writeback
    /// filesystem pages in direct reclaim", with v3.11's ZONE_DIRTY condition for kswapd).
    /// Off: every reclaimer, direct reclaim too, writes a dirty file page it isolates
    /// with pageout when its allocation may enter the filesystem, as 2.6.x did.
    pub kswapd_file_writeback: bool,
    /// page_check_references looks twice at mapped file pages: the first young PTE only
    /// sets PG_referenced (keep), a second reference activates, and a page referenced
    /// only through PG_referenced is reclaimed if clean (v2.6.34, "vmscan: detect mapped
    /// file pages used only once"). Off: any reference activates a page in use (mapped,
    /// swap cache, or of a mapped file), as 2.6.30's shrink_page_list did.
    pub mapped_used_once: bool,
    /// A page-cache miss that is not sequential for the file's readahead state but
    /// follows more cached pages than it asks for starts a readahead window sized by that
    /// history (try_context_readahead, v2.6.31, "readahead: introduce context
    /// readahead"). Off: such a miss reads just the pages asked for, as 2.6.30 did.
    pub context_readahead: bool,
    /// kswapd's priority loop is flat (v3.11, "mm: vmscan: flatten kswapd priority
    /// loop"): a balance_pgdat pass lowers the priority unless it scanned at least its
    /// target (max(high watermark, SWAP_CLUSTER_MAX)) and reclaimed something, never below
    /// priority 1. Off: every pass lowers it, down to 0, and kswapd starts again from
    /// DEF_PRIORITY once SWAP_CLUSTER_MAX pages were reclaimed since it last did (2.6.30's
    /// loop_again), napping after each pass below priority 10.
    pub kswapd_flat_priority: bool,
    /// kswapd_try_to_sleep (v2.6.32, "vmscan: have kswapd sleep for a short interval and
    /// double check it should be asleep"): a balanced kswapd first sleeps HZ/10; woken in
    /// it by an allocator (kswapd_low_wmark_hit_quickly), or finding the node below the
    /// high watermark after it (kswapd_high_wmark_hit_quickly), it reclaims again; else it
    /// sleeps until woken. Off: it sleeps until woken at once, as 2.6.30 did.
    pub kswapd_short_sleep: bool,
    /// kswapd gives up on a node after MAX_RECLAIM_RETRIES (16) balance_pgdat calls in a
    /// row that reclaimed nothing, until reclaim progress there (v4.11, "mm: fix 100% CPU
    /// kswapd busyloop on unreclaimable nodes"): it sleeps and allocators no longer wake
    /// it; before, it calls balance_pgdat again at once. Off: it backs off 20 ms after such
    /// a call and tries again.
    pub kswapd_failures: bool,
    /// filemap_read's rules: `ra->prev_pos` is where the previous read ended (v5.11,
    /// "mm/filemap.c: generic_file_buffered_read() now uses find_get_pages_contig"), and a
    /// read marks its first page accessed unless it starts in the page where that read
    /// ended, pos_same_folio(pos, prev_pos - 1) (v5.19, "filemap: Correct the conditions
    /// for marking a folio as accessed"). Off: do_generic_file_read's rule, a page is not
    /// marked when the read continues exactly where the previous one stopped inside it
    /// (prev_index, prev_offset; prev_pos keeps the last page read and the offset in it).
    pub read_accessed_folio: bool,
    /// Buffered writes to a block filesystem do not mark their pages accessed: the
    /// filesystems' write_begin (grab_cache_page_write_begin) passes FGP_LOCK | FGP_WRITE |
    /// FGP_CREAT without FGP_ACCESSED (v4.7, "mm: filemap: only do access activations on
    /// reads"; 6.x's FGP_WRITEBEGIN is the same set), so pages written again and again
    /// stay on the inactive list. tmpfs is unchanged: shmem_getpage with SGP_WRITE still
    /// marks the page. Off: write_begin marks the page (FGP_ACCESSED, with accessed-init),
    /// and a page written twice is activated. The write path's own mark_page_accessed of
    /// the code before accessed-init (the vanilla preset) is not touched by the commit.
    pub read_only_activation: bool,
    /// A page added to the page cache for a write (__GFP_WRITE: write_begin on a
    /// dirty-accounted mapping) consumes the shadow entry at its index without a refault
    /// (v4.7, "mm: workingset: only do workingset activations on reads"): no
    /// workingset_refault — neither counted nor activated — since data about to be
    /// overwritten is no reason to evict the workingset. Off (3.15–4.6): a rewritten
    /// evicted page is a refault like a read one.
    pub read_only_refault: bool,
    /// Cgroup writeback (v4.2, "writeback: implement memcg wb_domain" and the rest of
    /// Tejun Heo's cgroup writeback series): on the unified hierarchy a memory cgroup's
    /// dirty pages are written by its own bdi_writeback and its writers are held to its
    /// own writeback domain (balance_dirty_pages' mdtc), and its limit reclaim is
    /// "writeback throttling sane". Off (before 4.2, as on cgroup v1 in every era): every
    /// page is written by the device's root wb, only the global domain throttles, and
    /// limit reclaim waits on the writeback of pages it tagged before.
    pub cgroup_writeback: bool,
    /// Limit reclaim on the legacy hierarchy that isolated only dirty pages not queued
    /// for IO is throttled (reclaim_throttle, VMSCAN_THROTTLE_WRITEBACK) after waking the
    /// flushers (v6.1, "mm/cgroup/reclaim: fix dirty pages throttling on cgroup v1").
    pub memcg_v1_dirty_throttle: bool,
    /// A block filesystem's data page written through write_begin carries a buffer_head
    /// in slab memory charged to the page's memcg until it leaves the page cache (v4.19,
    /// "fs, mm: account buffer_head to kmemcg"; `fs/buffer.rs`). Off (before): not
    /// modelled — the memory existed, uncharged.
    pub buffer_head_kmem: bool,
    /// The page cache's tree nodes (radix_tree_node / xa_node objects: the mapping's
    /// xarray is XA_FLAGS_ACCOUNT) are charged to the memcg of the task that inserts the
    /// page needing them, until the node is freed (v4.6, "radix-tree: account
    /// radix_tree_node to memory cgroup"). Off: not modelled.
    pub xarray_node_kmem: bool,
    /// Reclaim never writes a dirty filesystem page (v6.16, "fs: Remove aops->writepage";
    /// xfs since v5.16, ext4 since v6.3): kswapd's pageout() of a dirty file page found
    /// under PGDAT_DIRTY returns PAGE_ACTIVATE and the page is activated, left to the
    /// flusher; nr_vmscan_write counts only swap-outs. Off: kswapd writes it
    /// (`kswapd-file-writeback`), as ext4's ->writepage did.
    pub no_reclaim_file_writeback: bool,
    /// kswapd writes a dirty file page only when it meets it a second time: the first
    /// time it is deferred to the flusher and tagged PG_reclaim (v4.11, "mm: vmscan: only
    /// write dirty pages that the scanner has seen twice"). Off: kswapd writes any dirty
    /// file page it meets while the node is flagged dirty (v3.11–v4.10).
    pub dirty_seen_twice: bool,
    /// Reclaim wakes the flushers to write every dirty inode (wakeup_flusher_threads,
    /// WB_REASON_VMSCAN: wb_start_writeback's start-all work, whatever the inodes' age)
    /// when every page shrink_inactive_list isolated was dirty and not queued for IO
    /// (v4.11, "mm: vmscan: kick flushers when we encounter dirty pages on the LRU").
    /// Off: any unqueued dirty page wakes the flushers for their usual work (old inodes,
    /// or everything above the background threshold).
    pub vmscan_kick_flushers: bool,
    /// PAGEVEC_SIZE is 15, not 14 (v4.16, "Get 7% more pages in a pagevec": the count
    /// became a char, making room for one more pointer in the same two cache lines). The
    /// per-CPU LRU batches (add, activate, rotate), truncation's and writeback's lookups
    /// hold one page more.
    pub pagevec_15: bool,
    /// lru_cache_add adds the page to the per-CPU batch, then moves the batch to the LRU
    /// once it is full (v4.8, "mm/swap.c: flush lru pvecs on compound page arrival"), so
    /// at most PAGEVEC_SIZE − 1 new pages per CPU wait off the LRU. Off: a full batch is
    /// moved before the next page is added (v4.2), and PAGEVEC_SIZE pages may wait.
    pub lru_add_flush_full: bool,
    /// PAGEVEC_SIZE is 31 (v6.9, "mm: increase folio batch size"): the folio_batch, and
    /// with it every per-CPU LRU batch and the lookups of truncation and writeback, is
    /// twice as large. Overrides `pagevec_15`.
    pub folio_batch_31: bool,
    /// Each lruvec (memcg × node) has its own lru_lock (v5.11, "mm/lru: replace pgdat
    /// lru_lock with lruvec lock"): reclaimers and LRU batches of different memcgs on one
    /// node no longer contend. Off: one lru_lock per node (pgdat->lru_lock; zone->lru_lock
    /// before v4.8), shared by every memcg's lists on it.
    pub lruvec_lru_lock: bool,
    /// release_pages holds the lru_lock across up to SWAP_CLUSTER_MAX pages of one lock
    /// (v3.17, "mm: memcontrol: do not kill uncharge batching in
    /// free_pages_and_swap_cache": the gathered pages of an unmap go to release_pages
    /// whole, and `lock_batch` bounds the hold). Off: callers hand it PAGEVEC_SIZE pages
    /// at a time, so the lock is held across at most 14. From v6.9 (`folio-batch-31`) a
    /// batch is one folio_batch of 31.
    pub release_pages_lock_batch: bool,
    /// activate_page queues the page on this CPU's activate pagevec, moved to the active
    /// list a batch at a time under one lru_lock (v3.0, "mm: batch activate_page() to
    /// reduce lock contention"). Off: the page moves at once, under the lru_lock taken for
    /// it alone (2.6.30–2.6.39).
    pub activate_page_batch: bool,
    /// mark_page_accessed activates a referenced page that is not yet on the LRU when it is
    /// in this CPU's add pagevec: PG_active is set there (v3.11, "mm: activate !PageLRU
    /// pages on mark_page_accessed if page is on local pagevec"). Off: a page off the LRU
    /// is left as it is, PG_referenced kept, until a later access finds it on the LRU.
    pub lru_cache_activate: bool,
    /// A read larger than the readahead window may read ahead up to the device's largest
    /// request, bdi->io_pages (queue/max_sectors_kb) (v4.10, "mm: don't cap request size
    /// based on read-ahead setting"). Off: every window is capped at ra_pages.
    pub io_pages_readahead: bool,
    /// Only a hit on the PG_readahead marker advances the readahead window (v6.11,
    /// "readahead: make sure sync readahead reads needed page"): a cache miss always starts
    /// its window at the page it needs. Off: a miss at the marker's index or at the
    /// window's end was taken for a marker hit, the window pushed past the page, and the
    /// page read on its own.
    pub sync_readahead_needed_page: bool,
    /// ext4's inode-table readahead creates the window's blocks other than the needed one
    /// with GFP_NOWAIT (v6.7, "ext4: use bdev_getblk() to avoid memory reclaim in readahead
    /// path"): a block whose page or memcg charge would need reclaim is not read ahead.
    /// Off: every missing block of the window is allocated as readahead allocates (it may
    /// reclaim, __GFP_NORETRY).
    pub itable_readahead_nowait: bool,
    /// ext4's write_begin allocates the page before it starts the journal handle, so the
    /// allocation and its memcg charge may enter the filesystem during reclaim (__GFP_FS)
    /// (v3.9, "ext4: grab page before starting transaction handle in write_begin()"): a
    /// write miss's reclaim runs the superblock shrinker. Off: AOP_FLAG_NOFS (the handle
    /// was open), its reclaim defers the shrinker's work.
    pub write_begin_fs: bool,
    /// An async readahead window ends on a natural boundary of the folio order it is read
    /// with (v6.17, "mm/readahead: Terminate async readahead on natural boundary"): with
    /// order-0 folios, a multiple of 4 pages. Off: the window ends where its size says.
    pub readahead_natural_boundary: bool,
    /// Large folios in the page cache of a block filesystem's regular files (ext4 from
    /// v6.16, "ext4: enable large folio for regular file"; the readahead order logic of
    /// page_cache_ra_order as of v6.17): an async readahead raises the file's folio order
    /// by 2 (capped by the window) and reads into folios of that order; a folio is marked
    /// accessed, activated, reclaimed and refaulted as one. Not in an era yet (opt-in,
    /// `mm::folio` lists what is modelled). Off: every page cache page is order 0.
    pub large_folios: bool,
    /// A fault maps a large folio whole (v6.18, "mm/filemap: map entire large folio
    /// faultaround" and "mm/fault: try to map the entire file folio in finish_fault()"):
    /// fault-around maps every page of a folio it meets, and a fault that reads the page
    /// maps its whole folio, when the folio lies within the VMA, one page table and the
    /// file's size. Off (with `large-folios`): fault-around maps the pages of its window,
    /// a fault the one page.
    pub map_entire_folio: bool,
    /// shrink_page_list counts a page once in sc->nr_scanned (v5.3, "mm: vmscan: remove
    /// double slab pressure by inc'ing sc->nr_scanned"). Off (before): a mapped or
    /// swap-cache page counts twice ("Double the slab pressure for mapped and swapcache
    /// pages"), which kswapd's priority and the writeback throttle read.
    pub no_double_slab_pressure: bool,
    /// POSIX_FADV_RANDOM sets FMODE_RANDOM on the file (v2.6.33, "readahead: introduce
    /// FMODE_RANDOM for POSIX_FADV_RANDOM"): a cache miss reads just the pages the read
    /// asks for (force_page_cache_ra), with no window. Off: the advice sets the file's
    /// ra_pages to 0 (readahead off: one page per miss).
    pub fadvise_random_fmode: bool,
    /// A page invalidate_mapping_pages cannot drop (dirty, under writeback, mapped, or
    /// held by a batch) is deactivated (v2.6.39, "mm: deactivate invalidated pages":
    /// deactivate_file_page and the lru_deactivate_file batch). Off: it stays where it is.
    pub invalidate_deactivate: bool,
    /// POSIX_FADV_DONTNEED that dropped fewer pages than the range holds drains every
    /// CPU's LRU batches (lru_add_drain_all) and invalidates again (v3.9, "mm: fadvise:
    /// drain all pagevecs if POSIX_FADV_DONTNEED fails to discard all pages"). Off: one
    /// pass.
    pub fadvise_drain_all: bool,
    /// POSIX_FADV_DONTNEED drains the calling CPU's batches first and drains every CPU's
    /// only when a page of the range failed to go (v5.7, "mm, fadvise: improve the
    /// expensive remote LRU cache draining after FADV_DONTNEED"). Off (with
    /// `fadvise-drain-all`): every CPU's when fewer pages went than the range's length.
    pub fadvise_local_drain: bool,
    /// invalidate_mapping_pages passes over a page under writeback (v5.12, "mm: add and
    /// use find_lock_entries": the lookup skips it), so it is not deactivated. Off: it fails
    /// to go and is deactivated (PG_reclaim: rotated to the inactive tail when its write
    /// ends).
    pub invalidate_skips_writeback: bool,
    /// Under MGLRU, deactivate_file_folio clears the folio's references and leaves a folio
    /// already in the oldest generation in place (v6.14, "mm/mglru: optimize
    /// deactivation"); lru_deactivate_file counts pgdeactivate for every MGLRU folio. Off:
    /// every folio goes through the batch, and pgdeactivate counts only PG_active ones.
    pub mglru_optimize_deactivation: bool,
    /// madvise(2) knows MADV_COLD and MADV_PAGEOUT (v5.4, "mm: introduce MADV_COLD" and
    /// "mm: introduce MADV_PAGEOUT"). Off: both are EINVAL.
    pub madvise_cold_pageout: bool,
    /// madvise(2) knows MADV_FREE (v4.5, "mm: support madvise(MADV_FREE)"; its pages on
    /// the inactive file list as v4.12's "mm: move MADV_FREE pages into LRU_INACTIVE_FILE
    /// list" put them). Off: EINVAL.
    pub madvise_free: bool,
    /// try_to_unmap_one ignores the PTE's young bit (v5.11, "mm/rmap: always do
    /// TTU_IGNORE_ACCESS"): reclaim decided on the references already. Off: a PTE found
    /// young (used since page_referenced looked) fails the unmap, and the page is activated.
    pub ttu_ignore_access: bool,
    /// MADV_PAGEOUT leaves the PTEs' young bits and reclaims ignoring references (v6.10,
    /// "mm: madvise: pageout: ignore references rather than clearing young"). Off: it
    /// clears the young bits (a TLB flush of the range) and reclaim checks references,
    /// so a page another process mapped and used stays.
    pub pageout_ignore_references: bool,
    /// References through a mapping advised MADV_SEQUENTIAL or MADV_RANDOM do not count
    /// (v6.3, "mm: add vma_has_recency()"): folio_referenced skips such VMAs (their young
    /// bits stay), unmapping does not pass their young bits on (zap_pte_range), and MGLRU
    /// looks around from any young PTE it is shown. Off: folio_referenced clears the young
    /// bit of every mapping and counts it unless MADV_SEQUENTIAL, zap passes it on unless
    /// MADV_SEQUENTIAL, and MGLRU (6.1) neither counts nor looks around from a young PTE of
    /// either kind of mapping.
    pub vma_has_recency: bool,
    /// MADV_COLD and MADV_PAGEOUT set PG_workingset on an active page (v6.6, "mm: madvise:
    /// fix uneven accounting of psi"), as shrink_active_list's deactivation does: its
    /// eviction records a workingset shadow, so its refault is a workingset refault
    /// (workingset_restore, a memory stall). Off: an active page that never went through
    /// shrink_active_list leaves without it.
    pub madvise_active_workingset: bool,
    /// preadv2 / pwritev2 know RWF_DONTCACHE (v6.14, "mm/filemap: add read support for
    /// RWF_DONTCACHE" and "add buffered write support for RWF_DONTCACHE"): uncached
    /// buffered IO. Off: EOPNOTSUPP.
    pub rwf_dontcache: bool,
    /// Reclaim defers the TLB flush of a dirty PTE too, noting that the batch may hold a
    /// writable translation, and flushes the batch before it writes a page out
    /// (try_to_unmap_flush_dirty; v4.3, "mm: defer flush of writable TLB entries"). Off:
    /// the seed's first commit — a dirty PTE is flushed at once (flush_tlb_page).
    pub tlb_defer_writable: bool,
    /// x86 TLB generations (v4.13, "x86/mm: Track the TLB's tlb_gen and update the
    /// flushing algorithm", with "mm, x86/mm: Make the batched unmap TLB flush API more
    /// generic"): every flush of an mm and every unmap added to a batch advances the mm's
    /// tlb_gen; a CPU records the generation its TLB is current to and a flush request
    /// finding it current does nothing; a range flush is done page by page only when the
    /// CPU is exactly one generation behind, else in full; the batch flush goes through
    /// flush_tlb_others (nr_tlb_local_flush_all, nr_tlb_remote_flush once); a lazy CPU
    /// that takes a flush leaves the mm. Off: the 4.3 form (every target flushes, the
    /// batch's local flush counted as received).
    pub tlb_gen: bool,
    /// PCID (v4.14, "x86/mm: Enable CR4.PCIDE on supported systems"): each CPU keeps
    /// translations of up to six mms (TLB_NR_DYN_ASIDS) across switches and flushes an mm's
    /// on a switch only if it missed a flush (its tlb_gen); a CPU that runs a kernel thread
    /// or idles switches to init_mm at once (tlb_defer_switch_to_init_mm), leaving the mm's
    /// cpumask. Needs `tlb-gen`. Off: a switch of mm flushes the whole TLB.
    pub pcid: bool,
    /// Lazy TLB CPUs get no flush IPIs (v4.19, "x86/mm/tlb: Only send page table free TLB
    /// flush to lazy TLB CPUs" with "x86/mm/tlb: Always use lazy TLB mode" and "Make lazy
    /// TLB mode lazier"): a CPU running a kernel thread or idle keeps the last mm loaded
    /// and in its cpumask, flushes skip it, and it flushes on its return if the mm's
    /// tlb_gen moved meanwhile. Needs `tlb-gen`. Off: such a CPU takes the flush IPIs (and
    /// leaves the mm at the first), or with `pcid` switches to init_mm at once.
    pub lazy_tlb_skip: bool,
    /// mm_cpumask is updated lazily (v6.13, "x86/mm/tlb: Update mm_cpumask lazily", with
    /// 6.14's "Only trim the mm_cpumask once a second"): a CPU switching to another mm
    /// stays in the old one's cpumask; a flush of an mm skips the CPUs in its mask that
    /// have another mm loaded, except the first flush of the mm in each second, which
    /// reaches every CPU in the mask (lazy ones too, 6.15's should_flush_all), and a CPU
    /// that gets a flush for an mm it has not loaded leaves that mm's mask. The batched
    /// unmap flush (no mm) reaches every CPU of its mask that is not lazy. Needs `tlb-gen`.
    /// Off: a CPU leaves the mask when it switches away.
    pub mm_cpumask_lazy: bool,
    /// An mm whose PTEs reclaim cleared with a deferred flush is flushed in full
    /// (flush_tlb_mm) by the next zap, mprotect or MADV_FREE / COLD / PAGEOUT of it
    /// (flush_tlb_batched_pending; v4.13, "mm, mprotect: flush TLB if potentially racing
    /// with a parallel reclaim leaving stale TLB entries"), so none of them returns while
    /// another CPU may still use a translation of the range. Off: they flush only what they
    /// clear themselves.
    pub tlb_flush_batched: bool,
    /// The kswapd watermarks' distance (low − min, high − low) is the larger of min / 4 and
    /// 0.1 % of the zone (watermark_scale_factor 10; v4.6, "mm: scale kswapd watermarks in
    /// proportion to memory"). Off: min / 4 — on a large machine kswapd wakes closer to the
    /// min watermark and stops sooner.
    pub watermark_scale_factor: bool,
    /// min_free_kbytes' default may reach 256 MiB (v5.7, "mm/page_alloc: increase default
    /// min_free_kbytes bound"). Off: at most 64 MiB (machines above 256 GiB).
    pub min_free_kbytes_256m: bool,
    /// madvise(MADV_WILLNEED) of anonymous memory and of tmpfs starts swap-ins of the
    /// range's swapped-out pages (v3.8, "mm: make madvise(MADV_WILLNEED) support swap file
    /// prefetch"). Off: EBADF on anonymous memory, nothing on tmpfs.
    pub madvise_willneed_swapin: bool,
    /// cgroup v1's memory.memsw.failcnt stays 0 (v6.15, "page_counter: track failcnt only
    /// for legacy cgroups"): only the memory counter of a v1 memcg counts its failures
    /// (mem_cgroup_css_alloc sets `memory.track_failcnt`; the memsw counter's stays
    /// false). Off: a charge the memsw counter refuses counts in memory.memsw.failcnt.
    pub memsw_failcnt_untracked: bool,
    /// Proactive reclaim (memory.reclaim) counts as pgscan_proactive and pgsteal_proactive
    /// (v6.15, "mm: vmscan: split proactive reclaim statistics from direct reclaim
    /// statistics"). Off: it counts as direct reclaim.
    pub proactive_reclaim_stats: bool,
    /// Classic reclaim's heuristics read the memcg statistics as of the last periodic
    /// flush (v6.12, "memcg: use ratelimited stats flush in the reclaim"): the
    /// inactive:active check, the refault check of prepare_scan_control, cache_trim_mode,
    /// snapshot_refaults and the workingset size of a refault see values at most 2 s old
    /// (flush_memcg_stats_dwork, `Sim::memcg_stats_flush`). Off: they read current values.
    pub memcg_stats_ratelimited: bool,
    /// Page-cache readahead allocates under memalloc_nofs_save (v5.8, "mm: add
    /// page_cache_readahead_unbounded"; page_cache_ra_unbounded): the memcg charge of a
    /// read miss reclaims without __GFP_FS, so the superblock shrinker stops
    /// (super_cache_scan) and defers its work. Off: readahead_gfp_mask of the mapping,
    /// with __GFP_FS.
    pub readahead_nofs: bool,
    /// Slab pages a memcg reclaim frees through the shrinkers (and the shadow entries the
    /// inode shrinker reaps) no longer count toward its progress (v6.4, "mm: vmscan: ignore
    /// non-LRU-based reclaim in memcg reclaim": flush_reclaim_state only for root
    /// reclaim). Off: reclaim_state->reclaimed_slab is added to sc->nr_reclaimed in every
    /// reclaim, so a cgroup's limit reclaim that frees its dentries and inodes stops early.
    pub reclaim_state_root_only: bool,
    /// A page fault-around maps with PG_workingset set (it was refaulted) does not count as
    /// a hit for the mmap read-around heuristic (v6.10, "mm/filemap: don't decrease
    /// mmap_miss when folio has workingset flag"), so read-around stops on a thrashing
    /// file. Off: every page fault-around maps decrements mmap_miss.
    pub mmap_miss_workingset: bool,
    /// kswapd's priority loop that reclaimed nothing while cache_trim_mode failed in some
    /// pass runs once more from DEF_PRIORITY with cache_trim_mode off (v6.10, "mm, vmscan:
    /// retry kswapd's priority loop with cache_trim_mode off on failure"). Off: the
    /// balance_pgdat call ends fruitless (a kswapd failure).
    pub kswapd_cache_trim_retry: bool,
    /// shrink_folio_list frees its reclaimed folios a folio_batch at a time, each batch
    /// after a try_to_unmap_flush (v6.9, "mm: free folios in a batch in
    /// shrink_folio_list()"). Off: all of them at the end of the call, after one flush.
    pub shrink_free_batch: bool,
    /// The mmap read-around window marks PG_readahead on its last quarter's first page, and
    /// a fault on a marked page of any mapping but an MADV_RANDOM one starts async
    /// readahead of a full window (v3.0, "readahead: trigger mmap sequential readahead on
    /// PG_readahead", with v2.6.31's "readahead: enforce full readahead size on async mmap
    /// readahead" / "sequential mmap readahead"). Off (2.6.30): read-around sets no marker,
    /// and only an MADV_SEQUENTIAL mapping acts on one, asking for one page.
    pub mmap_readaround_marker: bool,
    /// A write to memory.reclaim asks each try_to_free_mem_cgroup_pages call for a quarter
    /// of what is left (v6.9, "mm: memcg: use larger batches for proactive reclaim").
    /// Off (5.19–6.8): each call asks for all that is left.
    pub memcg_reclaim_batches: bool,
    /// A write to memory.reclaim may end with `swappiness=N` (v6.11, "mm: add swappiness=
    /// arg to memory.reclaim"), the anon/file balance of that reclaim. Off: EINVAL.
    pub memory_reclaim_swappiness: bool,
    /// Reclaim activates dirty file pages it cannot write and pages under writeback, and
    /// their rotation at writeback end moves them to the inactive tail (v4.11, "mm:
    /// vmscan: move dirty pages out of the way until they're flushed").
    pub writeback_activate: bool,
    /// inactive_list_is_low keeps inactive:active at 1:int_sqrt(10·GB of the lists) for
    /// file pages too (v4.10; before, file kept inactive ≥ active).
    pub lru_size_inactive_ratio: bool,
    /// The shadow-node shrinker's limit counts the lruvec's LRU pages (plus slab pages),
    /// per memcg and node, at pages/8 nodes, scanned as do_shrink_slab does with seeks 0
    /// (v4.14; before: the node's present pages / 16, per node).
    pub shadow_lru_limit: bool,
    /// do_swap_page's readahead reads the swap entries of the PTEs around the faulting
    /// address in its VMA (swap_vma_readahead, v4.14, "mm, swap: VMA based swap
    /// readahead"), with the window and hits kept per VMA; off, the window of swap slots
    /// around the faulting slot (swap_cluster_readahead). Also counts swap_ra and
    /// swap_ra_hit (the same release).
    pub vma_swap_readahead: bool,
    /// VMA-based swap readahead only when no swap device is rotational (v4.16, "mm, swap:
    /// Don't use VMA based swap readahead if HDD is used as swap"): an `hdd` swap device
    /// keeps the slot-cluster readahead.
    pub vma_swap_readahead_nonrot: bool,
    /// A swap fault on a synchronous device (zram) whose slot only its PTE refers to skips
    /// the swap cache and readahead (v4.15, "mm, swap: skip swapcache for swapin of
    /// synchronous device"; `mm/zram.rs`).
    pub swap_sync_io_bypass: bool,
    /// zswap keeps one LRU of compressed entries per memcg and node, with a second chance
    /// for an entry stored recently, its shrink worker takes the memcgs in turn, and a
    /// store over memory.zswap.max first writes back from that memcg (v6.8, "mm: zswap:
    /// make shrinking memcg-aware"; `mm/zswap.rs`); off, one global LRU, oldest first.
    pub zswap_memcg_lru: bool,
    /// A load from zswap into the swap cache frees the compressed copy and dirties the page
    /// (v6.9, "mm/zswap: only support zswap_exclusive_loads_enabled"); off, the entry stays
    /// until the slot is freed or rewritten.
    pub zswap_exclusive_loads: bool,
    /// A non-rotational swap device gives each CPU a cluster of 256 slots of its own
    /// (v3.14, "swap: make cluster allocation per-cpu"; `mm/swap_cluster.rs`); off, every
    /// slot comes from the device-wide next-fit scan.
    pub swap_percpu_cluster: bool,
    /// mem_cgroup_swap_full also answers yes when the page's memcg or an ancestor uses
    /// half of its memory.swap.max or memory.swap.high (v4.5, "mm: free swap cache
    /// aggressively if memcg swap is full"); off, only vm_swap_full (half of the device).
    pub memcg_swap_full: bool,
    /// Swap clusters on free, nonfull, frag and full lists and one shared cluster on a
    /// rotational device (v6.14, "mm, swap: rework of swap allocator locks"), a partly used
    /// cluster reused before a free one (v6.17, "mm, swap: prefer nonfull over free
    /// clusters"); `mm/swap_cluster.rs`.
    pub swap_cluster_lists: bool,
    /// Swap slots are allocated and freed in per-CPU batches of 64 (v4.11, "mm/swap: add
    /// cache for swap slots allocation", "mm/swap: free swap slots in batch";
    /// `mm/swap_slots.rs`).
    pub swap_slots_cache: bool,
    /// The swap slots cache is gone (v6.15, "mm, swap: remove swap slot cache").
    pub no_swap_slots_cache: bool,
    /// MGLRU's workingset protection as reworked in 6.14 ("mm/mglru: rework workingset
    /// protection", with 6.8's "mm/mglru: fix underprotected page cache"); off, 6.1's
    /// placement, tiers, aging and refault rules (`mm/lru_gen_v6_1.rs`).
    pub mglru_workingset_rework: bool,
    /// "Multi-gen LRU: fix workingset accounting" (6.5): under MGLRU with 6.1's
    /// workingset protection, a refault counts workingset_refault whatever its
    /// generation and workingset_activate while its generation is the oldest, and
    /// sort_folio's protection counts none; off (6.1–6.4), only a refault from the oldest
    /// generation counts (as a refault only), and each protected folio counts
    /// workingset_activate.
    pub mglru_refault_accounting: bool,
    /// "mm: fix shrink nr.unqueued_dirty counter issue" (6.13): the v5.16 shrink_node
    /// flags the node dirty for kswapd (PGDAT_DIRTY) only when the pass met unqueued dirty
    /// file pages and every file page it took was one; off (5.16–6.12), also when it took
    /// no file page at all (0 == 0).
    pub pgdat_dirty_needs_dirty: bool,
    /// MGLRU's global reclaim walks the memcg LRU (v6.3, "mm: multi-gen LRU: per-node
    /// lru_gen_folio lists", with the series' removal of the aging and eviction fairness
    /// safeguards); off, 6.1's walk of every memcg in mem_cgroup_iter order
    /// (`mm/lru_gen_v6_1.rs`).
    pub mglru_memcg_lru: bool,
    /// Shadow entries record whether the page was active (PG_workingset); a refault of
    /// such a page counts workingset_restore (v4.20).
    pub workingset_restore: bool,
    /// Active lists are deactivated only when their inactive list is low or refaults were
    /// seen since the last reclaim cycle (may_deactivate); cache_trim_mode and
    /// file_is_tiny decide the anon/file balance (v5.5).
    pub refault_deactivate: bool,
    /// get_scan_count balances anon and file by their reclaim cost (lru_note_cost: IO,
    /// and rotations from 6.2) instead of recent_scanned / recent_rotated (v5.8).
    pub lru_cost_balance: bool,
    /// lru_note_cost counts rotations as well as IO (v6.2, "mm: vmscan: make rotations a
    /// secondary factor in balancing anon vs file"): IO × SWAP_CLUSTER_MAX plus the pages
    /// shrink_inactive_list put back and shrink_active_list found referenced. Off
    /// (5.8–6.1): the cost is the IO alone, a page each.
    pub lru_cost_rotations: bool,
    /// A file refault is compared against the anon lists too when swap is available
    /// (v5.8).
    pub cache_challenges_anon: bool,
    /// New anonymous pages start on the inactive anon list (v5.9).
    pub anon_inactive_first: bool,
    /// Swapped-out anonymous pages leave shadow entries; anon refaults are detected
    /// (v5.9).
    pub anon_workingset: bool,
    /// /proc/vmstat's pgrefill counts global reclaim's active-list scans only; a memory
    /// cgroup's reclaim counts them in its memory.stat alone (v5.9, "mm: vmscan: consistent
    /// update to pgrefill", as pgscan and pgsteal already were). Off: every reclaim's.
    pub pgrefill_global_only: bool,
    /// balance_dirty_pages throttles writers by rate from the freerun ceiling, (bg +
    /// thresh) / 2, per bdi_writeback and domain (v3.2, "writeback: IO-less
    /// balance_dirty_pages()"; `fs/dirty_throttle.rs`). Off: a writer above the dirty
    /// threshold pauses 10 ms at a time.
    pub io_less_dirty_throttling: bool,
    /// "mm: exclude reserved pages from dirtyable memory" (3.3): the zones' reserves
    /// (totalreserve_pages: each zone's high watermark and largest lowmem_reserve) are not
    /// dirtyable; subtracted from the free pages from 3.14, from free + reclaimable pages
    /// before. Off: every free page is dirtyable.
    pub dirtyable_reserve: bool,
    /// "mm/page-writeback.c: do not count anon pages as dirtyable memory" (3.14): dirtyable
    /// memory is the free pages and the file LRU. Off: the anonymous LRU counts too while
    /// swap has free slots (global_reclaimable_pages).
    pub dirtyable_file_only: bool,
    /// "writeback: implement memcg writeback domain based throttling" (4.2): domain_dirty_limits
    /// takes vm.dirty_ratio and dirty_background_ratio in 1/PAGE_SIZE units ((ratio ×
    /// 4096) / 100: 20 % is 819/4096), so a threshold is a little below the percentage.
    /// Off: dirtyable × ratio / 100.
    pub dirty_ratio_page_units: bool,
    /// "mm: try to distribute dirty pages fairly across zones" (3.3): the fast path of a
    /// page cache allocation for writing (`__GFP_WRITE`) passes over a node whose dirty
    /// and writeback pages exceed vm.dirty_ratio of its dirtyable memory (node_dirty_ok;
    /// zone_dirty_ok before 4.8, the same here: a node is one zone). Off: the local node
    /// first, dirty or not.
    pub spread_dirty_pages: bool,
    /// Reclaim that meets pages under writeback sleeps until writeback completes
    /// (reclaim_throttle) instead of congestion_wait (v5.16).
    pub reclaim_throttle: bool,
    /// The allocator's OOM detection (v4.7, "mm, oom: rework oom detection"):
    /// should_reclaim_retry retries direct reclaim while it frees pages, and after a
    /// fruitless round only while fewer than MAX_RECLAIM_RETRIES rounds in a row freed
    /// nothing and some zone of the zonelist would meet its min watermark with all its
    /// reclaimable pages freed; then the OOM killer. Each retry lets the task be
    /// rescheduled (cond_resched). Off (before 4.7): reclaim is retried in place while it
    /// frees pages, and a fruitless round backs off while pages are dirty or under
    /// writeback, else the OOM killer runs.
    pub oom_detection_rework: bool,
    /// A task's maj_flt / min_flt count a fault when it completes (mm_account_fault), and
    /// a fault that was retried (FAULT_FLAG_TRIED: it slept on a page lock first) is major
    /// (v5.9, "mm: do page fault accounting in handle_mm_fault"). Off: counted on the
    /// first attempt, major if that attempt found the page missing.
    pub fault_major_if_retried: bool,
    /// pgfault counts a fault once, when it completes (a VM_FAULT_RETRY attempt is not
    /// counted; v6.4, "mm: do not increment pgfault stats when page fault handler
    /// retries"). Off: handle_mm_fault counts every attempt.
    pub pgfault_on_completion: bool,
    /// The kernel era these switches started from (reported; the switches decide).
    pub era: crate::kernel::KernelEra,
    /// `--policy`: the reclaim policy, overriding the scenario's (None = the scenario's,
    /// classic by default).
    pub policy: Option<crate::mm::policy::ReclaimPolicy>,
}

impl Features {
    /// The `vanilla` preset: every studied change off, the rules of the 4.2 era (use
    /// `KernelEra::features` for another era).
    pub fn vanilla() -> Features {
        Features {
            accessed_init: false,
            exec_protect: false,
            batch_tlb_flush: false,
            truncate_batch_shadow: false,
            workingset: true,
            file_only_when_plenty: true,
            adaptive_swap_readahead: true,
            fault_around: true,
            memcg_charge_stock: true,
            memcg_charge_batch_64: false,
            memcg_multi_stock: false,
            memcg_sync_high: false,
            mlock_count: false,
            memcg_high_throttle: false,
            memcg_kmem_pgtables: false,
            memcg_kmem_vfs: false,
            filp_kmem: false,
            memcg_kmem_objcg: false,
            memory_reclaim_swappiness_max: false,
            kswapd_file_writeback: true,
            mapped_used_once: true,
            context_readahead: true,
            kswapd_flat_priority: true,
            kswapd_short_sleep: true,
            kswapd_failures: false,
            read_accessed_folio: false,
            read_only_activation: false,
            read_only_refault: false,
            cgroup_writeback: false,
            memcg_v1_dirty_throttle: false,
            buffer_head_kmem: false,
            xarray_node_kmem: false,
            no_reclaim_file_writeback: false,
            dirty_seen_twice: false,
            vmscan_kick_flushers: false,
            pagevec_15: false,
            lru_add_flush_full: false,
            folio_batch_31: false,
            lruvec_lru_lock: false,
            release_pages_lock_batch: true,
            activate_page_batch: true,
            lru_cache_activate: true,
            io_pages_readahead: false,
            sync_readahead_needed_page: false,
            itable_readahead_nowait: false,
            write_begin_fs: false,
            readahead_natural_boundary: false,
            large_folios: false,
            map_entire_folio: false,
            no_double_slab_pressure: false,
            fadvise_random_fmode: true,
            invalidate_deactivate: true,
            fadvise_drain_all: true,
            fadvise_local_drain: false,
            invalidate_skips_writeback: false,
            mglru_optimize_deactivation: false,
            madvise_cold_pageout: false,
            madvise_free: false,
            ttu_ignore_access: false,
            pageout_ignore_references: false,
            vma_has_recency: false,
            madvise_active_workingset: false,
            rwf_dontcache: false,
            tlb_defer_writable: false,
            tlb_gen: false,
            pcid: false,
            lazy_tlb_skip: false,
            mm_cpumask_lazy: false,
            tlb_flush_batched: false,
            watermark_scale_factor: false,
            min_free_kbytes_256m: false,
            madvise_willneed_swapin: false,
            proactive_reclaim_stats: false,
            memsw_failcnt_untracked: false,
            memcg_stats_ratelimited: false,
            readahead_nofs: false,
            reclaim_state_root_only: false,
            mmap_miss_workingset: false,
            kswapd_cache_trim_retry: false,
            shrink_free_batch: false,
            mmap_readaround_marker: true,
            memcg_reclaim_batches: false,
            memory_reclaim_swappiness: false,
            writeback_activate: false,
            lru_size_inactive_ratio: false,
            shadow_lru_limit: false,
            vma_swap_readahead: false,
            vma_swap_readahead_nonrot: false,
            swap_sync_io_bypass: false,
            zswap_memcg_lru: false,
            zswap_exclusive_loads: false,
            swap_percpu_cluster: false,
            memcg_swap_full: false,
            swap_cluster_lists: false,
            swap_slots_cache: false,
            no_swap_slots_cache: false,
            mglru_workingset_rework: false,
            mglru_memcg_lru: false,
            mglru_refault_accounting: false,
            pgdat_dirty_needs_dirty: false,
            workingset_restore: false,
            refault_deactivate: false,
            lru_cost_balance: false,
            lru_cost_rotations: false,
            cache_challenges_anon: false,
            anon_inactive_first: false,
            anon_workingset: false,
            pgrefill_global_only: false,
            io_less_dirty_throttling: false,
            dirtyable_reserve: false,
            dirtyable_file_only: false,
            dirty_ratio_page_units: false,
            spread_dirty_pages: false,
            reclaim_throttle: false,
            oom_detection_rework: false,
            fault_major_if_retried: false,
            pgfault_on_completion: false,
            era: crate::kernel::KernelEra::V4_2,
            policy: None,
        }
    }
    /// The `patched` preset: every studied change on, the rules of the 4.2 era.
    pub fn patched() -> Features {
        Features {
            accessed_init: true,
            exec_protect: true,
            batch_tlb_flush: true,
            truncate_batch_shadow: true,
            ..Self::vanilla()
        }
    }
    /// A preset by name.
    pub fn preset(name: &str) -> Option<Features> {
        match name {
            "vanilla" => Some(Self::vanilla()),
            "patched" => Some(Self::patched()),
            _ => None,
        }
    }
    /// Set one feature by its name; false if the name is unknown.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        match name {
            "accessed-init" => self.accessed_init = on,
            "exec-protect" => self.exec_protect = on,
            "batch-tlb-flush" => self.batch_tlb_flush = on,
            "truncate-batch-shadow" => self.truncate_batch_shadow = on,
            "workingset" => self.workingset = on,
            "file-only-when-plenty" => self.file_only_when_plenty = on,
            "adaptive-swap-readahead" => self.adaptive_swap_readahead = on,
            "fault-around" => self.fault_around = on,
            "memcg-charge-stock" => self.memcg_charge_stock = on,
            "memcg-charge-batch-64" => self.memcg_charge_batch_64 = on,
            "memcg-multi-stock" => self.memcg_multi_stock = on,
            "memcg-sync-high" => self.memcg_sync_high = on,
            "mlock-count" => self.mlock_count = on,
            "memcg-high-throttle" => self.memcg_high_throttle = on,
            "memcg-kmem-pgtables" => self.memcg_kmem_pgtables = on,
            "memcg-kmem-vfs" => self.memcg_kmem_vfs = on,
            "filp-kmem" => self.filp_kmem = on,
            "memcg-kmem-objcg" => self.memcg_kmem_objcg = on,
            "memory-reclaim-swappiness-max" => self.memory_reclaim_swappiness_max = on,
            "kswapd-file-writeback" => self.kswapd_file_writeback = on,
            "mapped-used-once" => self.mapped_used_once = on,
            "context-readahead" => self.context_readahead = on,
            "kswapd-flat-priority" => self.kswapd_flat_priority = on,
            "kswapd-short-sleep" => self.kswapd_short_sleep = on,
            "kswapd-failures" => self.kswapd_failures = on,
            "read-accessed-folio" => self.read_accessed_folio = on,
            "read-only-activation" => self.read_only_activation = on,
            "read-only-refault" => self.read_only_refault = on,
            "cgroup-writeback" => self.cgroup_writeback = on,
            "memcg-v1-dirty-throttle" => self.memcg_v1_dirty_throttle = on,
            "buffer-head-kmem" => self.buffer_head_kmem = on,
            "xarray-node-kmem" => self.xarray_node_kmem = on,
            "no-reclaim-file-writeback" => self.no_reclaim_file_writeback = on,
            "dirty-seen-twice" => self.dirty_seen_twice = on,
            "vmscan-kick-flushers" => self.vmscan_kick_flushers = on,
            "pagevec-15" => self.pagevec_15 = on,
            "lru-add-flush-full" => self.lru_add_flush_full = on,
            "folio-batch-31" => self.folio_batch_31 = on,
            "lruvec-lru-lock" => self.lruvec_lru_lock = on,
            "release-pages-lock-batch" => self.release_pages_lock_batch = on,
            "activate-page-batch" => self.activate_page_batch = on,
            "lru-cache-activate" => self.lru_cache_activate = on,
            "io-pages-readahead" => self.io_pages_readahead = on,
            "sync-readahead-needed-page" => self.sync_readahead_needed_page = on,
            "itable-readahead-nowait" => self.itable_readahead_nowait = on,
            "write-begin-fs" => self.write_begin_fs = on,
            "readahead-natural-boundary" => self.readahead_natural_boundary = on,
            "large-folios" => self.large_folios = on,
            "map-entire-folio" => self.map_entire_folio = on,
            "no-double-slab-pressure" => self.no_double_slab_pressure = on,
            "fadvise-random-fmode" => self.fadvise_random_fmode = on,
            "invalidate-deactivate" => self.invalidate_deactivate = on,
            "fadvise-drain-all" => self.fadvise_drain_all = on,
            "fadvise-local-drain" => self.fadvise_local_drain = on,
            "invalidate-skips-writeback" => self.invalidate_skips_writeback = on,
            "mglru-optimize-deactivation" => self.mglru_optimize_deactivation = on,
            "madvise-cold-pageout" => self.madvise_cold_pageout = on,
            "madvise-free" => self.madvise_free = on,
            "ttu-ignore-access" => self.ttu_ignore_access = on,
            "vma-has-recency" => self.vma_has_recency = on,
            "madvise-active-workingset" => self.madvise_active_workingset = on,
            "rwf-dontcache" => self.rwf_dontcache = on,
            "tlb-defer-writable" => self.tlb_defer_writable = on,
            "tlb-gen" => self.tlb_gen = on,
            "pcid" => self.pcid = on,
            "lazy-tlb-skip" => self.lazy_tlb_skip = on,
            "mm-cpumask-lazy" => self.mm_cpumask_lazy = on,
            "tlb-flush-batched" => self.tlb_flush_batched = on,
            "watermark-scale-factor" => self.watermark_scale_factor = on,
            "min-free-kbytes-256m" => self.min_free_kbytes_256m = on,
            "madvise-willneed-swapin" => self.madvise_willneed_swapin = on,
            "pageout-ignore-references" => self.pageout_ignore_references = on,
            "proactive-reclaim-stats" => self.proactive_reclaim_stats = on,
            "memsw-failcnt-untracked" => self.memsw_failcnt_untracked = on,
            "memcg-stats-ratelimited" => self.memcg_stats_ratelimited = on,
            "readahead-nofs" => self.readahead_nofs = on,
            "reclaim-state-root-only" => self.reclaim_state_root_only = on,
            "mmap-miss-workingset" => self.mmap_miss_workingset = on,
            "kswapd-cache-trim-retry" => self.kswapd_cache_trim_retry = on,
            "shrink-free-batch" => self.shrink_free_batch = on,
            "mmap-readaround-marker" => self.mmap_readaround_marker = on,
            "memcg-reclaim-batches" => self.memcg_reclaim_batches = on,
            "memory-reclaim-swappiness" => self.memory_reclaim_swappiness = on,
            "writeback-activate" => self.writeback_activate = on,
            "lru-size-inactive-ratio" => self.lru_size_inactive_ratio = on,
            "shadow-lru-limit" => self.shadow_lru_limit = on,
            "vma-swap-readahead" => self.vma_swap_readahead = on,
            "vma-swap-readahead-nonrot" => self.vma_swap_readahead_nonrot = on,
            "swap-sync-io-bypass" => self.swap_sync_io_bypass = on,
            "zswap-memcg-lru" => self.zswap_memcg_lru = on,
            "zswap-exclusive-loads" => self.zswap_exclusive_loads = on,
            "swap-percpu-cluster" => self.swap_percpu_cluster = on,
            "memcg-swap-full" => self.memcg_swap_full = on,
            "swap-cluster-lists" => self.swap_cluster_lists = on,
            "swap-slots-cache" => self.swap_slots_cache = on,
            "no-swap-slots-cache" => self.no_swap_slots_cache = on,
            "mglru-workingset-rework" => self.mglru_workingset_rework = on,
            "mglru-memcg-lru" => self.mglru_memcg_lru = on,
            "mglru-refault-accounting" => self.mglru_refault_accounting = on,
            "pgdat-dirty-needs-dirty" => self.pgdat_dirty_needs_dirty = on,
            "workingset-restore" => self.workingset_restore = on,
            "refault-deactivate" => self.refault_deactivate = on,
            "lru-cost-balance" => self.lru_cost_balance = on,
            "lru-cost-rotations" => self.lru_cost_rotations = on,
            "cache-challenges-anon" => self.cache_challenges_anon = on,
            "anon-inactive-first" => self.anon_inactive_first = on,
            "anon-workingset" => self.anon_workingset = on,
            "pgrefill-global-only" => self.pgrefill_global_only = on,
            "io-less-dirty-throttling" => self.io_less_dirty_throttling = on,
            "dirtyable-reserve" => self.dirtyable_reserve = on,
            "dirtyable-file-only" => self.dirtyable_file_only = on,
            "dirty-ratio-page-units" => self.dirty_ratio_page_units = on,
            "spread-dirty-pages" => self.spread_dirty_pages = on,
            "reclaim-throttle" => self.reclaim_throttle = on,
            "oom-detection-rework" => self.oom_detection_rework = on,
            "fault-major-if-retried" => self.fault_major_if_retried = on,
            "pgfault-on-completion" => self.pgfault_on_completion = on,
            _ => return false,
        }
        true
    }
    /// Value of a feature by name.
    pub fn get(&self, name: &str) -> Option<bool> {
        Some(match name {
            "accessed-init" => self.accessed_init,
            "exec-protect" => self.exec_protect,
            "batch-tlb-flush" => self.batch_tlb_flush,
            "truncate-batch-shadow" => self.truncate_batch_shadow,
            "workingset" => self.workingset,
            "file-only-when-plenty" => self.file_only_when_plenty,
            "adaptive-swap-readahead" => self.adaptive_swap_readahead,
            "fault-around" => self.fault_around,
            "memcg-charge-stock" => self.memcg_charge_stock,
            "memcg-charge-batch-64" => self.memcg_charge_batch_64,
            "memcg-multi-stock" => self.memcg_multi_stock,
            "memcg-sync-high" => self.memcg_sync_high,
            "mlock-count" => self.mlock_count,
            "memcg-high-throttle" => self.memcg_high_throttle,
            "memcg-kmem-pgtables" => self.memcg_kmem_pgtables,
            "memcg-kmem-vfs" => self.memcg_kmem_vfs,
            "filp-kmem" => self.filp_kmem,
            "memcg-kmem-objcg" => self.memcg_kmem_objcg,
            "memory-reclaim-swappiness-max" => self.memory_reclaim_swappiness_max,
            "kswapd-file-writeback" => self.kswapd_file_writeback,
            "mapped-used-once" => self.mapped_used_once,
            "context-readahead" => self.context_readahead,
            "kswapd-flat-priority" => self.kswapd_flat_priority,
            "kswapd-short-sleep" => self.kswapd_short_sleep,
            "kswapd-failures" => self.kswapd_failures,
            "read-accessed-folio" => self.read_accessed_folio,
            "read-only-activation" => self.read_only_activation,
            "read-only-refault" => self.read_only_refault,
            "cgroup-writeback" => self.cgroup_writeback,
            "memcg-v1-dirty-throttle" => self.memcg_v1_dirty_throttle,
            "buffer-head-kmem" => self.buffer_head_kmem,
            "xarray-node-kmem" => self.xarray_node_kmem,
            "no-reclaim-file-writeback" => self.no_reclaim_file_writeback,
            "dirty-seen-twice" => self.dirty_seen_twice,
            "vmscan-kick-flushers" => self.vmscan_kick_flushers,
            "pagevec-15" => self.pagevec_15,
            "lru-add-flush-full" => self.lru_add_flush_full,
            "folio-batch-31" => self.folio_batch_31,
            "lruvec-lru-lock" => self.lruvec_lru_lock,
            "release-pages-lock-batch" => self.release_pages_lock_batch,
            "activate-page-batch" => self.activate_page_batch,
            "lru-cache-activate" => self.lru_cache_activate,
            "io-pages-readahead" => self.io_pages_readahead,
            "sync-readahead-needed-page" => self.sync_readahead_needed_page,
            "itable-readahead-nowait" => self.itable_readahead_nowait,
            "write-begin-fs" => self.write_begin_fs,
            "readahead-natural-boundary" => self.readahead_natural_boundary,
            "large-folios" => self.large_folios,
            "map-entire-folio" => self.map_entire_folio,
            "no-double-slab-pressure" => self.no_double_slab_pressure,
            "fadvise-random-fmode" => self.fadvise_random_fmode,
            "invalidate-deactivate" => self.invalidate_deactivate,
            "fadvise-drain-all" => self.fadvise_drain_all,
            "fadvise-local-drain" => self.fadvise_local_drain,
            "invalidate-skips-writeback" => self.invalidate_skips_writeback,
            "mglru-optimize-deactivation" => self.mglru_optimize_deactivation,
            "madvise-cold-pageout" => self.madvise_cold_pageout,
            "madvise-free" => self.madvise_free,
            "ttu-ignore-access" => self.ttu_ignore_access,
            "vma-has-recency" => self.vma_has_recency,
            "madvise-active-workingset" => self.madvise_active_workingset,
            "rwf-dontcache" => self.rwf_dontcache,
            "tlb-defer-writable" => self.tlb_defer_writable,
            "tlb-gen" => self.tlb_gen,
            "pcid" => self.pcid,
            "lazy-tlb-skip" => self.lazy_tlb_skip,
            "mm-cpumask-lazy" => self.mm_cpumask_lazy,
            "tlb-flush-batched" => self.tlb_flush_batched,
            "watermark-scale-factor" => self.watermark_scale_factor,
            "min-free-kbytes-256m" => self.min_free_kbytes_256m,
            "madvise-willneed-swapin" => self.madvise_willneed_swapin,
            "pageout-ignore-references" => self.pageout_ignore_references,
            "proactive-reclaim-stats" => self.proactive_reclaim_stats,
            "memsw-failcnt-untracked" => self.memsw_failcnt_untracked,
            "memcg-stats-ratelimited" => self.memcg_stats_ratelimited,
            "readahead-nofs" => self.readahead_nofs,
            "reclaim-state-root-only" => self.reclaim_state_root_only,
            "mmap-miss-workingset" => self.mmap_miss_workingset,
            "kswapd-cache-trim-retry" => self.kswapd_cache_trim_retry,
            "shrink-free-batch" => self.shrink_free_batch,
            "mmap-readaround-marker" => self.mmap_readaround_marker,
            "memcg-reclaim-batches" => self.memcg_reclaim_batches,
            "memory-reclaim-swappiness" => self.memory_reclaim_swappiness,
            "writeback-activate" => self.writeback_activate,
            "lru-size-inactive-ratio" => self.lru_size_inactive_ratio,
            "shadow-lru-limit" => self.shadow_lru_limit,
            "vma-swap-readahead" => self.vma_swap_readahead,
            "vma-swap-readahead-nonrot" => self.vma_swap_readahead_nonrot,
            "swap-sync-io-bypass" => self.swap_sync_io_bypass,
            "zswap-memcg-lru" => self.zswap_memcg_lru,
            "zswap-exclusive-loads" => self.zswap_exclusive_loads,
            "swap-percpu-cluster" => self.swap_percpu_cluster,
            "memcg-swap-full" => self.memcg_swap_full,
            "swap-cluster-lists" => self.swap_cluster_lists,
            "swap-slots-cache" => self.swap_slots_cache,
            "no-swap-slots-cache" => self.no_swap_slots_cache,
            "mglru-workingset-rework" => self.mglru_workingset_rework,
            "mglru-memcg-lru" => self.mglru_memcg_lru,
            "mglru-refault-accounting" => self.mglru_refault_accounting,
            "pgdat-dirty-needs-dirty" => self.pgdat_dirty_needs_dirty,
            "workingset-restore" => self.workingset_restore,
            "refault-deactivate" => self.refault_deactivate,
            "lru-cost-balance" => self.lru_cost_balance,
            "lru-cost-rotations" => self.lru_cost_rotations,
            "cache-challenges-anon" => self.cache_challenges_anon,
            "anon-inactive-first" => self.anon_inactive_first,
            "anon-workingset" => self.anon_workingset,
            "pgrefill-global-only" => self.pgrefill_global_only,
            "io-less-dirty-throttling" => self.io_less_dirty_throttling,
            "dirtyable-reserve" => self.dirtyable_reserve,
            "dirtyable-file-only" => self.dirtyable_file_only,
            "dirty-ratio-page-units" => self.dirty_ratio_page_units,
            "spread-dirty-pages" => self.spread_dirty_pages,
            "reclaim-throttle" => self.reclaim_throttle,
            "oom-detection-rework" => self.oom_detection_rework,
            "fault-major-if-retried" => self.fault_major_if_retried,
            "pgfault-on-completion" => self.pgfault_on_completion,
            _ => return None,
        })
    }
    /// Switches that need another: `pcid`, `lazy-tlb-skip` and `mm-cpumask-lazy` keep a
    /// CPU's translations across switches by the TLB generations of `tlb-gen` (no kernel
    /// had them without it).
    pub fn check(&self) -> Result<(), String> {
        for (name, on) in [
            ("pcid", self.pcid),
            ("lazy-tlb-skip", self.lazy_tlb_skip),
            ("mm-cpumask-lazy", self.mm_cpumask_lazy),
        ] {
            if on && !self.tlb_gen {
                return Err(format!(
                    "feature `{name}` needs `tlb-gen` (a CPU keeps translations across switches only \
                     by the TLB generations; no kernel had one without the other): add `+tlb-gen` or `-{name}`"
                ));
            }
        }
        Ok(())
    }
    /// name → on, for reports.
    pub fn to_map(&self) -> BTreeMap<String, bool> {
        KNOWN_FEATURES
            .iter()
            .map(|n| (n.to_string(), self.get(n).unwrap_or(false)))
            .collect()
    }
}

/// The execution context: which CPU, task and kernel function are running (the kernel's
/// `smp_processor_id()`, `current`, and the instruction pointer a profiler would sample).
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// Running CPU.
    pub cpu: CpuId,
    /// Running task, if any.
    pub task: Option<TaskId>,
    /// Innermost running function.
    pub func: KFunc,
    /// User, system or interrupt.
    pub mode: Mode,
}

/// One sample of the time series.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Sample {
    /// Virtual time, ns.
    pub t_ns: u64,
    /// Counter values at that time, in `SAMPLED` order.
    pub values: Vec<i64>,
    /// memory.current of each memcg (root first), pages; empty without cgroups.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroups: Vec<u64>,
    /// memory.swap.current of each memcg (root first: 0, it has no swap counter), pages;
    /// empty without cgroups or without swap.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cgroups_swap: Vec<u64>,
    /// MGLRU generation sizes, youngest first: [anon, file] per generation (summed over
    /// lruvecs); empty under the classic policy.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lru_gen: Vec<[i64; 2]>,
}

/// Counters recorded in the time series.
pub const SAMPLED: &[VmItem] = &[
    VmItem::NrFreePages,
    VmItem::NrActiveFile,
    VmItem::NrInactiveFile,
    VmItem::NrActiveAnon,
    VmItem::NrInactiveAnon,
    VmItem::NrMapped,
    VmItem::NrDirty,
    VmItem::NrWriteback,
    VmItem::Pgmajfault,
    VmItem::NrUnevictable,
    VmItem::NrDirtyThreshold,
    VmItem::NrDirtyBackgroundThreshold,
];

/// A run shorter than this many sampling intervals is sampled more finely, so that a short
/// run still shows its phases in the time series (a plot is about a thousand pixels wide:
/// 512 to 1024 samples fill it).
pub const SERIES_MIN_SAMPLES: usize = 512;

/// The finest sampling step is the scenario's `sample_interval` divided by at most
/// 2^`SERIES_MAX_REFINE` (and only by powers of two that divide it evenly, so that every
/// step's sampling times lie on the coarser steps').
pub const SERIES_MAX_REFINE: u32 = 10;

/// The first sampling step for a scenario's interval (ps): the interval halved up to
/// [`SERIES_MAX_REFINE`] times, as long as it halves evenly.
pub fn finest_sample_step(interval_ps: Ps) -> Ps {
    let halvings = interval_ps.trailing_zeros().min(SERIES_MAX_REFINE);
    (interval_ps >> halvings).max(1)
}

/// Looks at the machine from outside the kernel, between steps, without changing it:
/// nothing charged, nothing hashed. Installed in [`Sim::observer`]; the trace replay's
/// page-cache observer (`workload::replay`) is one.
pub trait StepObserver {
    /// Before each top-level engine action (a step or an event) of `run_with_progress`.
    fn before_action(&mut self, sim: &Sim);
    /// Before user task `tid` asks its program for its next op, in the step that will
    /// issue it; `clock_ps` is the task's CPU clock when the step began (before idling up
    /// to the step's time).
    fn before_next_op(&mut self, sim: &Sim, tid: TaskId, clock_ps: Ps);
}

/// Spare lists the simulation lends to a kernel path for its duration (a stack: a path
/// nested in another through an IPI wait takes a list of its own): no host allocation
/// once warm.
struct ListPool<T>(Vec<Vec<T>>);

impl<T> Default for ListPool<T> {
    fn default() -> Self {
        ListPool(Vec::new())
    }
}

impl<T> ListPool<T> {
    /// An empty list.
    #[inline]
    fn take(&mut self) -> Vec<T> {
        self.0.pop().unwrap_or_default()
    }

    /// A list back, emptied.
    #[inline]
    fn give(&mut self, mut v: Vec<T>) {
        v.clear();
        self.0.push(v);
    }
}

/// The whole simulated system.
pub struct Sim {
    /// Pressure stall information (`crate::psi`).
    pub psi: crate::psi::Psi,
    /// PSI flags the running task's next sleep takes (`psi_sleep_kind`): set by a sleep
    /// site inside a memstall section or balance_dirty_pages, taken by `sleep_on`.
    pub psi_next_sleep: u8,
    /// The task each CPU runs for PSI (TSK_ONCPU; psi_task_switch): set when a step starts,
    /// cleared when it sleeps or exits.
    pub psi_oncpu: Vec<Option<TaskId>>,
    /// The cost table in force.
    pub costs: CostTable,
    /// Feature switches.
    pub features: Features,
    /// The reclaim policy in force (`mm::policy`).
    pub policy: crate::mm::policy::ReclaimPolicy,
    /// Its hooks.
    pub ops: &'static crate::mm::policy::PolicyOps,
    /// MGLRU tunables.
    pub mglru: crate::mm::lru_gen::MglruConfig,
    /// The /proc/sys/vm tunables (`[vm]`).
    pub vm: crate::scenario::VmSysctl,
    /// The memory controller is on cgroup v1's legacy hierarchy (`cgroup_version = 1`):
    /// no cgroup writeback, limit reclaim not writeback-throttling sane.
    pub cgroup_v1: bool,
    /// cgroup v1: the root memcg's page_counter, which only the other cgroups' charges
    /// reach (try_charge leaves the root's own pages uncharged), and its watermark — the
    /// root's memory.max_usage_in_bytes. Pages (`mm::memcontrol`'s page_counter_charge).
    pub memcg_v1_root_counter: (u64, u64),
    /// Some cgroup has a v1 memory.memsw.limit_in_bytes (`Sim::memsw_over_limit` looks).
    pub memsw_limited: bool,
    /// cgroup v1's soft limit trees and event counts (`mm::memcontrol_v1`).
    pub soft_limit: crate::mm::memcontrol_v1::SoftLimitTree,
    /// A wait that memcg limit reclaim on the legacy hierarchy left for the charging task
    /// (shrink_folio_list's folio_wait_writeback, or reclaim_throttle of
    /// VMSCAN_THROTTLE_WRITEBACK on a node), taken by try_charge (and a limit write's
    /// reclaim) after the pass: the sleep and the retried charge's reclaim after it. A
    /// throttle ends the pass where the kernel's reclaimer sleeps (after the batch; a step
    /// cannot sleep inside); a page's writeback is slept on after the pass.
    pub memcg_reclaim_wait: Option<crate::mm::vmscan::ReclaimWait>,
    /// The last direct or limit reclaim (try_to_free_pages, try_to_free_mem_cgroup_pages)
    /// would have slept in reclaim_throttle(VMSCAN_THROTTLE_CONGESTED)
    /// (`ScanControl::throttle_congested`).
    pub reclaim_congested: bool,
    /// The last global direct reclaim (try_to_free_pages) would have slept in
    /// reclaim_throttle(VMSCAN_THROTTLE_NOPROGRESS) (`ScanControl::throttle_noprogress`).
    pub reclaim_noprogress: bool,
    /// The memcg LRU of each node (MGLRU).
    pub memcg_lru: Vec<crate::mm::lru_gen::MemcgLru>,
    /// The running reclaimer has an mm walk (kswapd, or aging ran): the rmap look-around
    /// promotes in place (MGLRU).
    pub lru_gen_walk_active: bool,
    /// The running task is in a page fault on a VMA with recency (lru_gen_in_fault).
    pub lru_gen_in_fault: bool,
    /// Virtual CPUs.
    pub cpus: Vec<Cpu>,
    /// Per-CPU pagevecs.
    pub pvecs: Vec<CpuPagevecs>,
    /// Nodes (pglist_data with one zone each).
    pub nodes: Vec<PgData>,
    /// Memory cgroups in pre-order, the root first (`mm::memcontrol`).
    pub memcgs: Vec<crate::mm::memcontrol::MemCgroup>,
    /// Each CPU's memcg charge stock (memcg_stock_pcp), by CPU.
    pub memcg_stock: Vec<crate::mm::memcontrol::MemcgStock>,
    /// The stream of the multi-memcg stock's random evictions (get_random_u32_below),
    /// seeded from the scenario seed.
    pub memcg_stock_rng: rand_pcg::Pcg64,
    /// The memcg LRU's stream of random bins (get_random_u32_below in
    /// lru_gen_online_memcg, lru_gen_rotate_memcg and shrink_many), seeded from the
    /// scenario seed.
    pub memcg_lru_rng: rand_pcg::Pcg64,
    /// One lruvec per (memcg, node), index `memcg × nodes + node` (mem_cgroup_lruvec).
    pub lruvecs: Vec<crate::mm::node::Lruvec>,
    /// The memcg each swap slot is charged to (swap_cgroup), by slot.
    pub swap_cgroup: Vec<crate::mm::memcontrol::MemcgId>,
    /// Shadow entries of swapped-out anon pages, by slot (0 = none; v5.9 anon workingset).
    pub swap_shadows: Vec<u64>,
    /// Tasks sleeping in reclaim_throttle, per node: (task, the end of its timeout; the
    /// time it was woken, if completions woke it). Its length is the node's
    /// nr_writeback_throttled; a task leaves it when it runs again after the sleep (the
    /// kernel's atomic_dec once schedule_timeout returns, `reclaim_throttle_done`).
    pub reclaim_throttled: Vec<Vec<(TaskId, Ps)>>,
    /// Tracepoint totals of the reclaim tracepoints (`crate::mm::tracepoints`).
    pub tracepoints: crate::mm::tracepoints::Tracepoints,
    /// Tasks in congestion_wait(WRITE, ..) (the congestion_wqh of async requests) and
    /// their timeouts: woken by the next write request to complete, else by the timeout.
    pub congestion_waiters: Vec<(TaskId, Ps)>,
    /// mem_map: one Page per frame.
    pub mem: Vec<Page>,
    /// /proc/vmstat.
    pub vmstat: VmStat,
    /// Cost by kernel function.
    pub profile: Profile,
    /// Tasks.
    pub tasks: Vec<Task>,
    /// Inodes by number (slot 0 unused).
    pub inodes: Vec<Option<Inode>>,
    /// Mounted filesystems.
    pub fss: Vec<FileSystem>,
    /// shm_mnt: the internal tmpfs of shared anonymous mappings (`fss` index), mounted at
    /// the first one (`Sim::shmem_zero_setup`).
    pub shm_mnt: Option<usize>,
    /// The host's memo of resolved open paths (`crate::fs::syscalls::PathCache`): no
    /// simulated state, only what a path walk would find again.
    pub(crate) path_cache: crate::fs::syscalls::PathCache,
    /// Block devices.
    pub devices: Vec<BlockDevice>,
    /// The bdi_writebacks' and writeback domains' state of IO-less dirty throttling
    /// (`fs/dirty_throttle.rs`).
    pub dirty_throttle: crate::fs::dirty_throttle::DirtyThrottle,
    /// Block requests in flight, by id.
    pub io: Vec<Option<IoRequest>>,
    /// Free ids of `io`.
    pub io_free: Vec<u32>,
    /// Pending events.
    pub events: EventQueue,
    /// Tasks waiting on a page's lock or writeback.
    pub page_waiters: Vec<(Pfn, TaskId)>,
    /// Per-CPU run queues (runnable tasks).
    pub runqueues: Vec<Vec<TaskId>>,
    /// Last task that ran on each CPU (for context-switch costs).
    pub last_ran: Vec<Option<TaskId>>,
    /// The running context: read it with `cur()`, change it with `switch_ctx`, `set_func`,
    /// `set_mode` or `set_running` (each accounts the time of the context it leaves).
    pub(crate) cur: Ctx,
    /// The running CPU's clock, `cpus[cur.cpu].clock_ps` while that CPU runs (written back
    /// when the context changes): a charge is one add to it.
    clock: Ps,
    /// The running CPU's `store_drain_until_ps`, likewise.
    drain_until: Ps,
    /// The clock when the running function's time began to accrue: `profile` has the
    /// function's time up to here, the rest is added when the function changes.
    func_since: Ps,
    /// The clock when the running mode's time began to accrue (`cpus[cur.cpu].mode_ps`).
    mode_since: Ps,
    /// Run the invariant checker after every step.
    pub check: bool,
    /// A read-only observer outside the kernel, called between top-level engine actions
    /// and before a user task fetches its next op (the trace replay's page-cache lookups).
    pub observer: Option<Box<dyn StepObserver>>,
    /// Steps executed.
    pub steps: u64,
    /// Let a user task that stays runnable go on to its next step inside the same
    /// `run_cpu_step` when the engine would pick its CPU next anyway (`continue_step`): the
    /// same actions in the same order, less engine work. Off, every step goes through the
    /// engine loop (the tests compare the two).
    pub step_fusion: bool,
    /// The step limit of the running top-level `run_steps` (0 outside it: no fusion).
    fuse_step_limit: u64,
    /// Steps run fused (counted in `steps` too).
    pub fused_steps: u64,
    /// Next content version (content oracle).
    pub next_version: u32,
    /// Content-oracle violations found (reads that did not observe the newest write).
    pub oracle_violations: Vec<String>,
    /// Time series.
    pub samples: Vec<Sample>,
    /// The scenario's sampling interval, ps: the step of a long run's time series.
    pub sample_interval_ps: Ps,
    /// The sampling step now, ps: it starts at [`finest_sample_step`] and doubles, keeping
    /// every other sample, each time the series reaches 2 × [`SERIES_MIN_SAMPLES`], until
    /// it is the scenario's interval. A run ends with 512 to 1024 samples, or, if it
    /// lasts longer than 512 intervals, samples every interval (the same samples as with
    /// that step from the start: a sample is the state when the engine first passes its
    /// time).
    pub sample_step_ps: Ps,
    next_sample_ps: Ps,
    /// When the next periodic memcg stats flush is due (flush_memcg_stats_dwork, every
    /// 2 s; `memcg-stats-ratelimited`), `Ps::MAX` without the rule.
    pub(crate) memcg_stats_next_flush_ps: Ps,
    /// Where in the 2 s flush cycle the run starts: the first periodic flush comes this
    /// long after it (drawn from the scenario seed).
    pub(crate) memcg_stats_flush_phase_ps: Ps,
    /// The earliest of `next_sample_ps` and `memcg_stats_next_flush_ps` (`take_samples`).
    next_periodic_ps: Ps,
    /// Sequence number of the last shadow-node listing (`Sim::shadow_node_track`).
    pub(crate) shadow_seq: u32,
    /// Running hash of the event stream (determinism check).
    pub event_hash: u64,
    /// Per-node reclaim state.
    pub reclaim: Vec<crate::mm::vmscan::ReclaimState>,
    /// kswapd task of each node.
    pub kswapd: Vec<Option<TaskId>>,
    /// The swap device, if any.
    pub swap: Option<crate::mm::swapfile::SwapInfo>,
    /// OOM reports.
    pub oom_reports: Vec<String>,
    /// Per-CPU TLBs.
    pub tlbs: Vec<crate::arch::tlb::Tlb>,
    /// IPIs in flight, by id.
    pub ipis: Vec<Option<(CpuId, crate::arch::tlb::FlushKind, Ps)>>,
    /// Free ids of `ipis`.
    pub ipi_free: Vec<u32>,
    /// Address spaces by id.
    pub mms: Vec<Option<crate::mm::mmap::Mm>>,
    /// The mm each CPU has loaded (active_mm).
    pub cpu_active_mm: Vec<Option<u32>>,
    /// The CPU runs a kernel thread on a borrowed mm (lazy TLB mode).
    pub cpu_lazy: Vec<bool>,
    /// Per CPU, its TLB's address-space contexts (cpu_tlbstate; `tlb-gen`, `pcid`).
    pub cpu_tlbstate: Vec<crate::arch::tlb::CpuTlbState>,
    /// Each node's zonelist (fallback order), built at boot; shared, so that a user (an
    /// allocation, the direct reclaim inside it) holds it without a host allocation.
    pub zonelists: Vec<std::rc::Rc<[usize]>>,
    /// Page versions each write request carried at submission, by request id.
    pub io_versions: Vec<Vec<u32>>,
    /// The version the completing write carried for the page being ended.
    pub completing_version: Option<u32>,
    /// The fault being handled found its page missing (VM_FAULT_MAJOR).
    pub fault_was_major: bool,
    /// The fault being handled is a retry of one that slept (FAULT_FLAG_TRIED).
    pub fault_tried: bool,
    /// The running fault mapped its page and sleeps in balance_dirty_pages
    /// (fault_dirty_shared_page): it is not retried.
    pub fault_dirty_pause: bool,
    /// The running fault failed for want of memory after the OOM killer ran (VM_FAULT_OOM,
    /// `vm_fault_oom`): a completed fault with an error, retried as a new one.
    pub fault_oom: bool,
    /// The task whose preadv2/pwritev2 with RWF_DONTCACHE is running (IOCB_DONTCACHE): the
    /// page-cache pages it creates are marked PG_dropbehind. A task, so that the steps of
    /// other CPUs that run while this one waits (TLB-flush IPIs) are not taken for it.
    pub io_dropbehind: Option<crate::sched::TaskId>,
    /// When a user task last ran (stall detection).
    pub last_user_step_ps: Ps,
    /// Debug-only unsafe variant of seed 002: defer the flush of dirty PTEs too (the content
    /// oracle must catch the lost writes). Never set by a preset.
    pub debug_defer_dirty_flush: bool,
    /// Debug-only broken invariant (swarm self-test): put_page's last reference frees the
    /// page without taking it off the LRU. Never set by a preset.
    pub debug_skip_lru_del_on_free: bool,
    /// Truncate counters (shadow entries cleared and the tree_lock acquisitions for them).
    pub truncate_stats: crate::mm::truncate::TruncateStats,
    /// Orphan inodes: unlinked, no opener, whose final eviction had to wait for a locked page
    /// or writeback where the caller could not sleep (task exit, the last mapping's fput);
    /// `evict_orphans` finishes them as IO completes.
    pub orphans: Vec<u32>,
    /// The last sequence number given to a VFS list_lru entry (`mm::slab`).
    pub vfs_lru_seq: u32,
    /// CPUs in the middle of an engine step, outermost first. A step that waits for IPI
    /// acknowledgements runs the rest of the machine up to the IPIs' arrival
    /// ([`Sim::run_others_until`]), which nests the steps of other CPUs inside it.
    pub stepping: Vec<CpuId>,
    /// The CPUs of `stepping` (a CPU steps at most once at a time: the engine does not
    /// start a step on a CPU that is in one), tested in O(1).
    pub stepping_mask: crate::machine::Cpumask,
    /// User tasks not yet exited (the engine's loop condition, kept as a count so a step
    /// does not scan every task).
    pub(crate) nr_user_alive: usize,
    /// The members of each anon_vma that has had a fork (`mm::fork`): anon_vma id (its
    /// creator's mm id) → the live mms linked into it. An anon_vma without an entry has
    /// its creator alone.
    pub(crate) anon_vma_mms: rustc_hash::FxHashMap<u32, Vec<u32>>,
    /// The buffer heads of large folios written through write_begin, by head
    /// (`fs::buffer::FolioBlocks`).
    pub(crate) folio_blocks:
        rustc_hash::FxHashMap<crate::mm::page::Pfn, crate::fs::buffer::FolioBlocks>,
    /// Scratch buffer of the rmap walk (`rmap_targets`), reused across pages.
    pub(crate) rmap_scratch: Vec<(u32, u64, Option<u64>)>,
    /// `release_pages`' pages to free once the lru_lock is dropped (pages_to_free),
    /// kept between calls so that no call allocates.
    pub(crate) release_scratch: Vec<crate::mm::page::Pfn>,
    /// Spare page lists for reclaim's per-batch lists (`take_pfn_buf` / `give_pfn_buf`):
    /// walks nested through IPI waits take buffers of their own.
    pfn_bufs: ListPool<crate::mm::page::Pfn>,
    /// Spare (index, page) lists of `__do_page_cache_readahead`, taken for the call
    /// (`take_ra_list` / `give_ra_list`): a readahead nested in one (from a step run while
    /// reclaim waits for IPIs) takes a list of its own.
    ra_scratch: ListPool<(u64, crate::mm::page::Pfn)>,
    /// Each CPU's bh_lrus (fs/buffer.c): the metadata blocks it looked up last, most
    /// recent first, each holding a reference to its page (`mm::slab::BH_LRU_SIZE`).
    pub bh_lrus: Vec<Vec<crate::mm::page::Pfn>>,
    /// The CPUs whose run queue is not empty: the engine looks only at these for the next
    /// step, not at every CPU.
    rq_nonempty: crate::machine::Cpumask,
}

/// Mixed into the scenario seed for the memcg LRU's random stream ("memcg_lr"), so its
/// draws are independent of the multi-memcg stock's.
const MEMCG_LRU_RNG_STREAM: u64 = 0x6d65_6d63_675f_6c72;

/// A run in which no user task runs for this long (virtual time) has stalled: every user
/// task sleeps on something that will never happen (a simulator bug, reported, never a hang).
pub const STALL_LIMIT_PS: Ps = 24 * 3600 * 1_000_000_000_000;

/// Files of `[[files]]` that `Sim::new` of this process has created, in steps of 4,096 and
/// at the end of each setup: what `mmsim replay`'s progress line shows while a replay of
/// many objects lays out its files (nothing in a run reads it).
pub static SETUP_FILES_CREATED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The engine stops a run whose virtual time passes 30 days (reported as a stall naming
/// the limit): clocks count picoseconds in a u64 (213 days), and no step or duration a
/// scenario can give (durations at most 1 day) then overflows one.
pub const MAX_VIRTUAL_PS: Ps = 30 * 24 * 3600 * 1_000_000_000_000;

/// A bound on the steps and events one wait for IPI acknowledgements runs (each is before
/// the IPIs' arrival, so time bounds them already; this bounds a bug).
pub const NESTED_STEPS_MAX: u32 = 1 << 24;

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum RunEnd {
    /// Every user task exited.
    Completed,
    /// The invariant checker failed.
    CheckFailed(String),
    /// No task can ever run again (a bug or a deadlock).
    Stalled(String),
    /// The step limit was reached.
    StepLimit,
    /// Stopped from outside (Ctrl-C): the results are partial.
    Interrupted,
}

impl Sim {
    /// Build the system a scenario describes, with the given features.
    pub fn new(sc: &Scenario, features: Features) -> Result<Sim, String> {
        let costs = CostTable::by_name(&sc.machine.cost_profile)
            .ok_or_else(|| format!("unknown cost profile `{}`", sc.machine.cost_profile))?;
        if let Some(why) = sc.vm.run_error(&features) {
            return Err(why);
        }
        if let Some(c) = sc
            .cgroups
            .iter()
            .find(|c| c.swappiness.is_some_and(|s| s > 100))
            .filter(|_| features.era < crate::scenario::SWAPPINESS_200_SINCE)
        {
            return Err(format!(
                "cgroup {}: swappiness = {} needs kernel 5.8 or later (0 ..= 100 before); \
                 this run follows {}",
                c.name,
                c.swappiness.unwrap_or(0),
                features.era
            ));
        }
        let nr_nodes = sc.machine.nodes as usize;
        let cpus_per_node = sc.machine.cpus_per_node as usize;
        let pages_per_node = sc.machine.memory_per_node_bytes / crate::mm::page::PAGE_SIZE;
        let total_pages = pages_per_node * nr_nodes as u64;
        if total_pages >= u64::from(u32::MAX) {
            return Err(format!(
                "machine has {} pages; mmsim supports fewer than 2^32 frames (16 TiB)",
                total_pages
            ));
        }
        let mut cpus = Vec::new();
        for n in 0..nr_nodes {
            for _ in 0..cpus_per_node {
                cpus.push(Cpu {
                    id: cpus.len(),
                    node: n,
                    ..Default::default()
                });
            }
        }
        let nr_cpus = cpus.len();
        let mut mem = Vec::with_capacity(total_pages as usize);
        let mut nodes = Vec::new();
        for n in 0..nr_nodes {
            let first = mem.len() as Pfn;
            for _ in 0..pages_per_node {
                mem.push(Page::new_free(n));
            }
            nodes.push(PgData::new(n, first, pages_per_node as u32));
        }
        // Cgroup files newer than the run's era (a `--kernel` older than the scenario's).
        type CgroupKey = fn(&crate::scenario::CgroupSpec) -> bool;
        let newer: [(&str, &str, crate::kernel::KernelEra, CgroupKey); 4] = [
            (
                "swap_high",
                "memory.swap.high",
                crate::scenario::SWAP_HIGH_SINCE,
                |c| c.swap_high.is_some(),
            ),
            (
                "oom_group",
                "memory.oom.group",
                crate::scenario::OOM_GROUP_SINCE,
                |c| c.oom_group,
            ),
            (
                "zswap_max",
                "memory.zswap.max",
                crate::scenario::ZSWAP_MAX_SINCE,
                |c| c.zswap_max.is_some(),
            ),
            (
                "zswap_writeback",
                "memory.zswap.writeback",
                crate::scenario::ZSWAP_WRITEBACK_SINCE,
                |c| !c.zswap_writeback,
            ),
        ];
        for (key, file, since, set) in newer {
            if let Some(c) = sc.cgroups.iter().find(|c| set(c)) {
                if features.era < since {
                    return Err(format!(
                        "cgroup {} sets {key}, but {file} exists from kernel {since} on; this \
                         run follows kernel {}",
                        c.name, features.era
                    ));
                }
            }
        }
        if sc.swap.as_ref().is_some_and(|s| s.vma_ra_enabled.is_some())
            && !features.vma_swap_readahead
        {
            return Err(format!(
                "[swap] sets vma_ra_enabled, but /sys/kernel/mm/swap/vma_ra_enabled exists \
                 from kernel 4.14 on (the rule vma-swap-readahead); this run follows kernel \
                 {} without it",
                features.era
            ));
        }
        if sc.swap.as_ref().is_some_and(|s| s.zswap.is_some())
            && features.era < crate::scenario::ZSWAP_MAX_SINCE
        {
            return Err(format!(
                "[swap.zswap] needs kernel 5.19 or later: mmsim models zswap \
                 with its memcg accounting, and not the frontswap and zbud zswap of older \
                 kernels; this run follows kernel {}",
                features.era
            ));
        }
        if sc.swap.as_ref().is_some_and(|s| s.zram.is_some())
            && features.era < crate::kernel::KernelEra::new(3, 14)
        {
            return Err(format!(
                "[swap] preset \"zram\" needs kernel 3.14 or later (zram left staging in \
                 3.14); this run follows kernel {}",
                features.era
            ));
        }
        let memcgs = crate::mm::memcontrol::build_memcgs(&sc.cgroups)?;
        let lruvecs = vec![crate::mm::node::Lruvec::default(); memcgs.len() * nr_nodes];
        let policy = features.policy.or(sc.policy).unwrap_or_default();
        let pvec_size = crate::mm::swap::pagevec_size(&features);
        if features.era < policy.ops().since {
            return Err(format!(
                "policy {} exists from kernel {} on; this run follows kernel {}",
                policy,
                policy.ops().since,
                features.era
            ));
        }
        let memcg_lru = vec![crate::mm::lru_gen::MemcgLru::default(); nr_nodes];
        // PSI from 4.20 ("psi: pressure stall information for CPU, memory, and IO"), its
        // IRQ pressure from 6.1.
        let psi = crate::psi::Psi::new(
            features.era >= crate::kernel::KernelEra::new(4, 20),
            nr_cpus,
            memcgs.iter().map(|m| m.parent).collect(),
        )
        .with_irq(features.era >= crate::kernel::KernelEra::V6_1);
        let mut sim = Sim {
            psi,
            psi_next_sleep: 0,
            psi_oncpu: vec![None; nr_cpus],
            costs,
            policy,
            ops: policy.ops(),
            mglru: sc.mglru.clone().unwrap_or_default(),
            vm: sc.vm,
            cgroup_v1: sc.cgroup_v1,
            memcg_v1_root_counter: (0, 0),
            memsw_limited: sc.cgroups.iter().any(|c| c.memsw_max.is_some()),
            soft_limit: crate::mm::memcontrol_v1::SoftLimitTree::new(
                sc.cgroup_v1 && sc.cgroups.iter().any(|c| c.soft_limit.is_some()),
                memcgs.len(),
                nr_nodes,
                nr_cpus,
            ),
            memcg_reclaim_wait: None,
            reclaim_congested: false,
            reclaim_noprogress: false,
            memcg_lru,
            lru_gen_walk_active: false,
            lru_gen_in_fault: false,
            features,
            cpus,
            pvecs: vec![CpuPagevecs::with_capacity(pvec_size); nr_cpus],
            nodes,
            memcgs,
            memcg_stock: vec![crate::mm::memcontrol::MemcgStock::default(); nr_cpus],
            memcg_stock_rng: <rand_pcg::Pcg64 as rand::SeedableRng>::seed_from_u64(sc.seed),
            memcg_lru_rng: <rand_pcg::Pcg64 as rand::SeedableRng>::seed_from_u64(
                sc.seed ^ MEMCG_LRU_RNG_STREAM,
            ),
            lruvecs,
            swap_cgroup: Vec::new(),
            swap_shadows: Vec::new(),
            reclaim_throttled: vec![Vec::new(); nr_nodes],
            tracepoints: Default::default(),
            congestion_waiters: Vec::new(),
            mem,
            vmstat: VmStat::default(),
            profile: Profile::default(),
            tasks: Vec::new(),
            inodes: vec![None],
            fss: Vec::new(),
            shm_mnt: None,
            path_cache: Default::default(),
            devices: Vec::new(),
            dirty_throttle: Default::default(),
            io: Vec::new(),
            io_free: Vec::new(),
            events: EventQueue::default(),
            page_waiters: Vec::new(),
            runqueues: vec![Vec::new(); nr_cpus],
            last_ran: vec![None; nr_cpus],
            cur: Ctx {
                cpu: 0,
                task: None,
                func: KFunc::Idle,
                mode: Mode::System,
            },
            clock: 0,
            drain_until: 0,
            func_since: 0,
            mode_since: 0,
            check: false,
            observer: None,
            steps: 0,
            step_fusion: true,
            fuse_step_limit: 0,
            fused_steps: 0,
            next_version: 1,
            oracle_violations: Vec::new(),
            samples: Vec::new(),
            sample_interval_ps: sc.sample_interval_ns.max(1).saturating_mul(1_000),
            sample_step_ps: finest_sample_step(sc.sample_interval_ns.max(1).saturating_mul(1_000)),
            next_sample_ps: 0,
            memcg_stats_next_flush_ps: Ps::MAX,
            memcg_stats_flush_phase_ps: 0,
            next_periodic_ps: 0,
            shadow_seq: 0,
            event_hash: 0xcbf2_9ce4_8422_2325,
            // kswapd starts asleep on kswapd_wait.
            reclaim: vec![
                crate::mm::vmscan::ReclaimState {
                    kswapd_sleep: crate::mm::vmscan::KswapdSleep::Deep,
                    ..Default::default()
                };
                nr_nodes
            ],
            kswapd: vec![None; nr_nodes],
            swap: None,
            oom_reports: Vec::new(),
            tlbs: (0..nr_cpus)
                .map(|_| crate::arch::tlb::Tlb::new(crate::arch::tlb::TLB_ENTRIES))
                .collect(),
            ipis: Vec::new(),
            ipi_free: Vec::new(),
            mms: Vec::new(),
            cpu_active_mm: vec![None; nr_cpus],
            cpu_lazy: vec![false; nr_cpus],
            cpu_tlbstate: vec![Default::default(); nr_cpus],
            debug_defer_dirty_flush: false,
            debug_skip_lru_del_on_free: false,
            last_user_step_ps: 0,
            fault_was_major: false,
            fault_tried: false,
            fault_dirty_pause: false,
            fault_oom: false,
            io_dropbehind: None,
            io_versions: Vec::new(),
            zonelists: Vec::new(),
            completing_version: None,
            truncate_stats: Default::default(),
            orphans: Vec::new(),
            vfs_lru_seq: 0,
            stepping: Vec::new(),
            stepping_mask: Default::default(),
            nr_user_alive: 0,
            anon_vma_mms: Default::default(),
            folio_blocks: Default::default(),
            rmap_scratch: Vec::new(),
            release_scratch: Vec::new(),
            pfn_bufs: ListPool::default(),
            ra_scratch: ListPool::default(),
            bh_lrus: vec![Vec::with_capacity(crate::mm::slab::BH_LRU_SIZE + 1); nr_cpus],
            rq_nonempty: Default::default(),
        };
        sim.vmstat.add(
            VmItem::NrFreePages,
            (pages_per_node * nr_nodes as u64) as i64,
        );
        sim.init_page_alloc();
        sim.lru_gen_online_memcgs();
        for d in &sc.devices {
            sim.devices.push(BlockDevice::new(d, &sim.costs));
        }
        for f in &sc.filesystems {
            let dev = match &f.device {
                Some(name) => Some(sc.devices.iter().position(|d| &d.name == name).ok_or_else(
                    || format!("filesystem {} names unknown device {}", f.mount, name),
                )?),
                None => None,
            };
            sim.fss.push(FileSystem::new(f, dev));
            sim.path_cache.invalidate();
        }
        if let Some(sw) = &sc.swap {
            let dev = sim.devices.len();
            sim.devices.push(BlockDevice::new(
                &crate::scenario::DeviceSpec {
                    name: "swap".into(),
                    preset: sw.preset,
                    size_bytes: sw.size_bytes,
                    latency_ns: None,
                    bandwidth_bytes_per_s: None,
                    read_ahead_kb: None,
                    max_sectors_kb: None,
                    queue_depth: None,
                    faults: sw.faults.clone(),
                },
                &sim.costs,
            ));
            let slots = sw.size_bytes / crate::mm::page::PAGE_SIZE;
            let mut info = crate::mm::swapfile::SwapInfo::new(slots, dev, sw.page_cluster);
            info.zram = sw
                .zram
                .clone()
                .map(|z| crate::mm::zram::Zram::new(z, slots));
            info.zswap = sw.zswap.clone().map(|z| {
                crate::mm::zswap::Zswap::new(
                    z,
                    slots,
                    sim.memcgs.len(),
                    nr_nodes,
                    sim.features.zswap_memcg_lru,
                )
            });
            // swap_use_vma_readahead: enable_vma_readahead && !nr_rotate_swap (4.16).
            info.vma_ra = sim.features.vma_swap_readahead
                && sw.vma_ra_enabled.unwrap_or(true)
                && !(sim.features.vma_swap_readahead_nonrot
                    && sw.preset == crate::scenario::DevicePreset::Hdd);
            // Per-CPU clusters on a non-rotational device (3.14); 6.14's lists on every
            // device, one cluster shared by all CPUs on a rotational one.
            let hdd = sw.preset == crate::scenario::DevicePreset::Hdd;
            let lists = sim.features.swap_cluster_lists;
            if lists || (sim.features.swap_percpu_cluster && !hdd) {
                let cpus = if hdd { 1 } else { sim.cpus.len() };
                info.clusters = Some(crate::mm::swap_cluster::SwapClusters::new(
                    slots, cpus, lists,
                ));
            }
            // The swap slots cache, one per online CPU (4.11–6.14).
            if sim.features.swap_slots_cache && !sim.features.no_swap_slots_cache {
                info.slots_cache = Some(crate::mm::swap_slots::SwapSlotsCache::new(sim.cpus.len()));
            }
            sim.swap = Some(info);
            sim.swap_cgroup = vec![crate::mm::memcontrol::NO_MEMCG; slots as usize];
            sim.swap_shadows = vec![0; slots as usize];
        }
        // One kswapd per node, on the node's last CPU.
        for n in 0..nr_nodes {
            let id = sim.tasks.len();
            sim.tasks.push(Task::kthread(
                id,
                format!("kswapd{}", n),
                n * cpus_per_node + cpus_per_node - 1,
                KThread::Kswapd(n),
            ));
            sim.kswapd[n] = Some(id);
        }
        // One flusher kthread per block device (an unbound worker), on the second-to-last CPU.
        for d in 0..sim.devices.len() {
            let id = sim.tasks.len();
            sim.tasks.push(Task::kthread(
                id,
                format!("kworker/flush-{}", sim.devices[d].name),
                nr_cpus.saturating_sub(2),
                KThread::Flusher(d),
            ));
            sim.devices[d].flusher = Some(id);
            // The periodic writeback timer (dirty_writeback_centisecs; none at 0).
            if let Some(t) = sim.vm.dirty_writeback_interval_ps() {
                sim.events.push(t, Event::Wake(id as u32));
            }
        }
        // zswap's shrink worker (an unbound worker of the zswap-shrink workqueue), asleep
        // until the pool fills, on the last CPU: the kernel runs it on any idle CPU while
        // the tasks whose stores it serves go on reclaiming (here kswapd's CPU, which a
        // cgroup's limit leaves idle).
        if sim.zswap().is_some() {
            let id = sim.tasks.len();
            sim.tasks.push(Task::kthread(
                id,
                "kworker/zswap-shrink".into(),
                nr_cpus - 1,
                KThread::ZswapShrink,
            ));
            sim.zswap_mut().worker = Some(id);
        }
        // Files that exist before the run: on the device with data, or sparse. (The inode
        // table is sized for them at once: a replay may lay out millions.)
        sim.inodes.reserve_exact(sc.files.len());
        // Each filesystem's name table too, for its share of the files, and each directory
        // for its files once it exists (created with its first file).
        let mut per_fs = vec![0usize; sim.fss.len()];
        let mut per_dir: rustc_hash::FxHashMap<(usize, &str), usize> = Default::default();
        for f in &sc.files {
            if let Some(fs) = sim.resolve_fs(&f.path) {
                per_fs[fs] += 1;
                *per_dir
                    .entry((fs, crate::fs::namei::split_path(&f.path).0))
                    .or_default() += 1;
            }
        }
        for (fs, n) in per_fs.into_iter().enumerate() {
            sim.fss[fs].names.reserve(n);
        }
        for (i, f) in sc.files.iter().enumerate() {
            if i % 4096 == 4095 {
                SETUP_FILES_CREATED.fetch_add(4096, std::sync::atomic::Ordering::Relaxed);
            }
            let fs = sim
                .resolve_fs(&f.path)
                .ok_or_else(|| format!("file {} is under no filesystem", f.path))?;
            let ino = sim.create_inode_named(fs, f.path.clone());
            let parent = crate::fs::namei::split_path(&f.path).0;
            if let Some(n) = per_dir.remove(&(fs, parent)) {
                if let Some(d) = sim.fss[fs].dirs.get_mut(parent) {
                    d.reserve(n - 1);
                }
            }
            let pages = f.size_bytes.div_ceil(crate::mm::page::PAGE_SIZE);
            let inode = sim.inode_mut(ino);
            inode.size = f.size_bytes;
            inode.nlink = 1;
            if f.data {
                // One content version for the whole pre-existing file.
                let v = sim.new_version();
                let inode = sim.inode_mut(ino);
                inode.disk = crate::fs::PageVersions::uniform(v, pages);
                inode.expected = crate::fs::PageVersions::uniform(v, pages);
                inode.nr_blocks = pages;
            }
            sim.fss[fs].used_blocks += pages;
        }
        SETUP_FILES_CREATED.fetch_add(
            (sc.files.len() % 4096) as u64,
            std::sync::atomic::Ordering::Relaxed,
        );
        sim.vfs_setup()?;
        // kjournald2 of each block filesystem (one with an inode table: ext4's journal,
        // `fs/jbd2.rs`), asleep until a transaction's timer, on the flusher's CPU.
        for fs in 0..sim.fss.len() {
            let f = &sim.fss[fs];
            if f.inode_table.is_none() || f.device.is_none() || !f.has_journal {
                continue;
            }
            let id = sim.tasks.len();
            let dev = sim.fss[fs]
                .device
                .map_or("", |d| sim.devices[d].name.as_str());
            let name = format!("jbd2/{dev}-8");
            sim.tasks.push(Task::kthread(
                id,
                name,
                nr_cpus.saturating_sub(2),
                KThread::Jbd2(fs),
            ));
            sim.fss[fs].journal = Some(crate::fs::jbd2::Journal {
                task: Some(id),
                ..Default::default()
            });
        }
        let first_user = sim.tasks.len();
        for (id_in_sc, t) in sc.tasks.iter().enumerate() {
            let id = sim.tasks.len();
            let memcg = match &t.cgroup {
                None => crate::mm::memcontrol::ROOT_MEM_CGROUP,
                Some(name) => sim
                    .memcg_by_name(name)
                    .ok_or_else(|| format!("task {} names unknown cgroup {}", t.name, name))?,
            };
            let start = t.start_ns.saturating_mul(1_000);
            let program = crate::workload::build_program(&t.program);
            let mut task = Task::user(
                id,
                t.name.clone(),
                t.cpu as usize,
                start,
                program,
                memcg,
                t.oom_score_adj,
            );
            // A thread joins the process of the first task of its thread group.
            if let Some(g) = &t.thread_group {
                if let Some(leader) = sc.tasks[..id_in_sc]
                    .iter()
                    .position(|x| x.thread_group.as_ref() == Some(g))
                {
                    task.tgid = first_user + leader;
                }
            }
            sim.tasks.push(task);
            sim.events.push(start, Event::Wake(id as u32));
        }
        sim.nr_user_alive = sim.tasks.iter().filter(|t| !t.is_kthread()).count();
        sim.create_thread_group_mms();
        if sim.features.memcg_stats_ratelimited {
            // The run starts at a point of the flush cycle drawn from the seed; the first
            // action flushes the starting state (what the last flush before it left).
            sim.memcg_stats_flush_phase_ps =
                crate::mm::memcontrol::memcg_stats_flush_phase(sc.seed);
            sim.memcg_stats_next_flush_ps = 0;
        }
        Ok(sim)
    }

    // ---- charging and context ----------------------------------------------------------

    /// Charge `ps` to the running CPU, the current mode and the current function: the clock
    /// moves now; the mode's and the function's shares are the clock's advance between
    /// their changes (`set_mode`, `set_func`, `enter`, `leave`, `switch_ctx`), the same sums
    /// as adding each charge to them.
    #[inline(always)]
    pub fn charge(&mut self, ps: Ps) {
        self.clock += ps;
    }

    /// The running context (CPU, task, function, mode).
    #[inline]
    pub fn cur(&self) -> Ctx {
        self.cur
    }

    /// Add the running function's time since it last changed to the profile.
    #[inline(always)]
    fn account_func(&mut self) {
        // The clock never goes back from `func_since` (both set together, the clock only
        // grows): the difference needs no overflow check on this hottest of paths.
        debug_assert!(self.clock >= self.func_since);
        self.profile
            .add(self.cur.func, self.clock.wrapping_sub(self.func_since));
        self.func_since = self.clock;
    }

    /// Add the running mode's time since it last changed to the running CPU.
    #[inline]
    fn account_mode(&mut self) {
        // As in `account_func`: `mode_since` is never past the clock.
        debug_assert!(self.clock >= self.mode_since);
        let c = &mut self.cpus[self.cur.cpu];
        c.mode_ps[self.cur.mode as usize] += self.clock.wrapping_sub(self.mode_since);
        self.mode_since = self.clock;
    }

    /// The running function becomes `f` (no call cost: an exception or a return to user).
    #[inline]
    pub(crate) fn set_func(&mut self, f: KFunc) {
        self.account_func();
        self.cur.func = f;
    }

    /// A syscall's entry from the running context: `user_ps` of user time (mode and
    /// function `User`) to set up the call, then the kernel's entry (system mode, function
    /// `SysEnter`), its cost left to the caller. The same sums as `set_mode(User)`,
    /// `set_func(User)`, `charge(user_ps)`, `set_mode(System)`, `set_func(SysEnter)`: the
    /// running mode's and function's time so far is accounted, the user time added to
    /// the user slots directly.
    #[inline]
    pub(crate) fn syscall_entry(&mut self, user_ps: Ps) {
        self.account_func();
        self.account_mode();
        self.profile.add(KFunc::User, user_ps);
        self.cpus[self.cur.cpu].mode_ps[Mode::User as usize] += user_ps;
        self.clock += user_ps;
        self.cur.func = KFunc::SysEnter;
        self.cur.mode = Mode::System;
        self.func_since = self.clock;
        self.mode_since = self.clock;
    }

    /// The running CPU changes mode (user, system, interrupt).
    #[inline]
    pub(crate) fn set_mode(&mut self, m: Mode) {
        if m != self.cur.mode {
            self.account_mode();
            self.cur.mode = m;
        }
    }

    /// Bring the accounting up to date: the profile and the running CPU's mode times have
    /// every charge so far, and `cpus[cur.cpu]` has its clock. The engine does it whenever
    /// the context changes and at the end of `run`; a caller that drives kernel functions
    /// itself does it before reading `profile` or `cpus`.
    #[inline]
    pub fn sync_accounting(&mut self) {
        self.account_func();
        self.account_mode();
        let c = &mut self.cpus[self.cur.cpu];
        c.clock_ps = self.clock;
        c.store_drain_until_ps = self.drain_until;
    }

    /// Run `new` (an engine step, an interrupt on another CPU, the return from one): the
    /// context left is accounted and its CPU's clock written back; the new CPU's is loaded.
    /// Returns the context left.
    #[inline]
    pub(crate) fn switch_ctx(&mut self, new: Ctx) -> Ctx {
        self.sync_accounting();
        let old = std::mem::replace(&mut self.cur, new);
        let c = &self.cpus[new.cpu];
        self.clock = c.clock_ps;
        self.drain_until = c.store_drain_until_ps;
        self.func_since = self.clock;
        self.mode_since = self.clock;
        old
    }

    /// `switch_ctx(new)` where `new` is on the running CPU and the function's time is
    /// accounted up to the clock (a step that runs on after `continue_step`, which ended
    /// the last one with `set_func(Idle)`; nothing charges in between): the same sums and
    /// the same CPU state, without the function's zero time and the reload of the clock
    /// that was just written back.
    #[inline]
    fn resume_ctx(&mut self, new: Ctx) {
        debug_assert_eq!(new.cpu, self.cur.cpu);
        debug_assert_eq!(self.func_since, self.clock);
        self.account_mode();
        let c = &mut self.cpus[self.cur.cpu];
        c.clock_ps = self.clock;
        c.store_drain_until_ps = self.drain_until;
        self.cur = new;
        self.mode_since = self.clock;
    }

    /// Run on CPU `cpu` as task `task` (a caller that drives kernel functions itself, like
    /// the tests; the engine sets the context of each step).
    pub fn set_running(&mut self, cpu: CpuId, task: Option<TaskId>) {
        assert!(cpu < self.cpus.len(), "CPU {cpu} of {}", self.cpus.len());
        self.switch_ctx(Ctx {
            cpu,
            task,
            ..self.cur
        });
    }

    /// CPU `c`'s clock (the running CPU's is in `clock`).
    #[inline]
    pub fn cpu_clock(&self, c: CpuId) -> Ps {
        if c == self.cur.cpu {
            self.clock
        } else {
            self.cpus[c].clock_ps
        }
    }

    /// Idle CPU `c` until `t` (nothing if its clock is already there): idle time, not the
    /// running mode's or function's. A long enough idle period is spent in a C-state that
    /// flushes the TLB (C3 and deeper: CPUIDLE_FLAG_TLB_FLUSHED), in every era; the CPU's
    /// TLB state stays as it was (a lazy CPU is still lazy), its translations are gone.
    #[inline]
    pub fn cpu_idle_until(&mut self, c: CpuId, t: Ps) {
        if c == self.cur.cpu {
            if self.clock < t {
                if t - self.clock >= self.costs.deep_idle_tlb_flush_ps {
                    self.tlbs[c].flush_all();
                }
                self.account_func();
                self.account_mode();
                self.cpus[c].idle_ps += t - self.clock;
                self.clock = t;
                self.func_since = t;
                self.mode_since = t;
            }
        } else if self.cpus[c].clock_ps < t {
            if t - self.cpus[c].clock_ps >= self.costs.deep_idle_tlb_flush_ps {
                self.tlbs[c].flush_all();
            }
            self.cpus[c].idle_until(t);
        }
    }

    /// Charge a lock-prefixed read-modify-write: the atomic itself plus the wait for the
    /// store buffer to drain if a bulk copy or zero just filled it.
    #[inline]
    pub fn charge_atomic(&mut self) {
        self.charge_after_drain(self.costs.atomic_rmw_ps);
    }

    /// `charge(ps + store_drain_wait())`: the clock plus the drain wait is the later of
    /// the clock and the drain's end (no overflow), then `ps` (the same overflow as the
    /// sum's).
    #[inline]
    pub fn charge_after_drain(&mut self, ps: Ps) {
        self.clock = self.clock.max(self.drain_until) + ps;
    }

    /// How long a locked instruction issued now waits for the store buffer to drain.
    #[inline]
    pub fn store_drain_wait(&self) -> Ps {
        self.drain_until.saturating_sub(self.clock)
    }

    /// Charge a bulk store of `bytes` at `page_ps` per 4 KiB (copy or zero); it leaves the
    /// store buffer full for the next atomic.
    #[inline]
    pub fn charge_bulk_store(&mut self, page_ps: Ps, bytes: u64) {
        self.charge(page_ps * bytes / crate::mm::page::PAGE_SIZE);
        self.drain_until = self.clock + self.costs.store_buffer_drain_ps;
    }

    /// An empty (index, page) list for a readahead, from its pool of spare ones.
    #[inline]
    pub(crate) fn take_ra_list(&mut self) -> Vec<(u64, crate::mm::page::Pfn)> {
        self.ra_scratch.take()
    }

    /// Give back a list of `take_ra_list`.
    #[inline]
    pub(crate) fn give_ra_list(&mut self, v: Vec<(u64, crate::mm::page::Pfn)>) {
        self.ra_scratch.give(v);
    }

    /// An empty page list from the pool of spare ones (no allocation once warm).
    #[inline]
    pub(crate) fn take_pfn_buf(&mut self) -> Vec<crate::mm::page::Pfn> {
        self.pfn_bufs.take()
    }

    /// A page list of one page from the pool.
    #[inline]
    pub(crate) fn pfn_buf_of(&mut self, pfn: crate::mm::page::Pfn) -> Vec<crate::mm::page::Pfn> {
        let mut v = self.take_pfn_buf();
        v.push(pfn);
        v
    }

    /// The frames of the folio headed by `head` (head first, then its tails in index
    /// order), in a page list from the pool.
    #[inline]
    pub(crate) fn folio_frames(&mut self, head: crate::mm::page::Pfn) -> Vec<crate::mm::page::Pfn> {
        let mut v = self.pfn_buf_of(head);
        self.folio_tails(head, &mut v);
        v
    }

    /// Give a page list back to the pool.
    #[inline]
    pub(crate) fn give_pfn_buf(&mut self, v: Vec<crate::mm::page::Pfn>) {
        self.pfn_bufs.give(v);
    }

    /// Enter kernel function `f` (charges the call); returns the caller to pass to `leave`.
    #[inline]
    pub fn enter(&mut self, f: KFunc) -> KFunc {
        self.account_func();
        let prev = std::mem::replace(&mut self.cur.func, f);
        self.charge(self.costs.call_ps);
        prev
    }

    /// Return from a kernel function to `prev`.
    #[inline]
    pub fn leave(&mut self, prev: KFunc) {
        self.set_func(prev);
    }

    /// The running CPU's clock.
    #[inline]
    pub fn now(&self) -> Ps {
        self.clock
    }

    /// The running CPU's node.
    #[inline]
    pub fn cur_node(&self) -> usize {
        self.cpus[self.cur.cpu].node
    }

    /// A new content version (content oracle).
    pub fn new_version(&mut self) -> u32 {
        let v = self.next_version;
        self.next_version = self.next_version.wrapping_add(1).max(1);
        v
    }

    /// FNV-1a over the 16 little-endian bytes of (a, b): a cheap, deterministic running
    /// hash of what happened ([`fnv1a_u64`]).
    #[inline]
    fn hash_event(&mut self, a: u64, b: u64) {
        self.event_hash = fnv1a_u64(fnv1a_u64(self.event_hash, a), b);
    }

    // ---- sleeping and waking -----------------------------------------------------------

    /// Put task `t` to sleep on `w`.
    pub fn sleep_on(&mut self, t: TaskId, w: Wait) {
        self.tasks[t].state = TaskState::Sleeping;
        self.tasks[t].stats.nvcsw += 1;
        let mut psi = std::mem::take(&mut self.psi_next_sleep);
        match w {
            Wait::Until(at) => {
                self.tasks[t].timer_ps = at;
                self.events.push(at, Event::Wake(t as u32));
            }
            Wait::PageLocked(pfn) | Wait::PageWriteback(pfn) => {
                let bit = match w {
                    Wait::PageLocked(_) => pg::LOCKED,
                    _ => pg::WRITEBACK,
                };
                if !self.mem[pfn as usize].test(bit) {
                    // wait_on_page_bit tests the bit again after queueing itself: it was
                    // cleared since the step looked (by a step nested in this one while it
                    // waited for IPI acknowledgements), so the task runs on at once.
                    let now = self.now();
                    self.wake_up(t, now);
                    return;
                }
                // folio_wait_bit_common sleeps in io_schedule; waiting for the lock of a
                // workingset page that is being read back in is thrashing, a memstall.
                psi |= crate::psi::flags::IOWAIT;
                let f = self.mem[pfn as usize].flags;
                if bit == pg::LOCKED && f & pg::UPTODATE == 0 && f & pg::WORKINGSET != 0 {
                    psi |= crate::psi::flags::MEMSTALL;
                }
                self.mem[pfn as usize].flags |= pg::WAITERS;
                self.page_waiters.push((pfn, t));
            }
        }
        self.psi_dequeue(t, psi);
    }

    /// A task goes to sleep without `sleep_on` (a kthread waiting to be woken, no timer).
    pub fn set_sleeping(&mut self, t: TaskId) {
        self.tasks[t].state = TaskState::Sleeping;
        self.psi_dequeue(t, 0);
    }

    /// Make task `t` runnable at time `at` (try_to_wake_up).
    pub fn wake_up(&mut self, t: TaskId, at: Ps) {
        let task = &mut self.tasks[t];
        if task.state != TaskState::Sleeping {
            return;
        }
        task.state = TaskState::Runnable;
        task.ready_at_ps = at;
        // schedule_timeout's del_timer: a timed sleep woken early leaves no timer armed.
        task.timer_ps = Ps::MAX;
        let cpu = task.cpu;
        self.runqueues[cpu].push(t);
        self.rq_nonempty.set(cpu);
        // psi_enqueue: runnable, no longer in iowait (a memstall goes on until it runs).
        self.psi_task_change(t, at, crate::psi::flags::IOWAIT, crate::psi::flags::RUNNING);
    }

    // ---- pressure stall information (`crate::psi`) ---------------------------------------

    /// psi_task_change: task `t`'s PSI flags lose `clear` and gain `set` at `at`.
    #[inline]
    pub fn psi_task_change(&mut self, t: TaskId, at: Ps, clear: u8, set: u8) {
        let task = &mut self.tasks[t];
        let old = task.psi_flags;
        let new = (old & !clear) | set;
        if old != new {
            task.psi_flags = new;
            self.psi.record(task.cpu, at, task.memcg, old, new);
        }
    }

    /// psi_account_irqtime: the running interrupt handler on CPU `c` began at `start`
    /// (this CPU's clock, which runs now); its time counts as IRQ pressure of the task the
    /// CPU runs (PSI_IRQ_FULL of its cgroup and ancestors), of nobody on an idle CPU.
    pub(crate) fn psi_account_irqtime(&mut self, c: CpuId, start: Ps) {
        debug_assert_eq!(self.cur.cpu, c);
        if let Some(t) = self.psi_oncpu[c] {
            let irq = self.clock.saturating_sub(start);
            self.psi.record_irq(c, self.clock, self.tasks[t].memcg, irq);
        }
    }

    /// psi_task_switch: task `t` is the one CPU `c` runs from `at` on; the task it ran
    /// before, still runnable (round robin), waits on the run queue.
    #[cold]
    fn psi_task_switch(&mut self, c: CpuId, t: TaskId, at: Ps) {
        if let Some(prev) = self.psi_oncpu[c] {
            self.psi_task_change(prev, at, crate::psi::flags::ONCPU, 0);
        }
        self.psi_oncpu[c] = Some(t);
        self.psi_task_change(t, at, 0, crate::psi::flags::ONCPU);
    }

    /// psi_dequeue: task `t` sleeps from now, with the flags `set` (TSK_IOWAIT, or a
    /// TSK_MEMSTALL that ends when it runs again), and leaves its CPU.
    fn psi_dequeue(&mut self, t: TaskId, set: u8) {
        let now = self.now();
        let cpu = self.tasks[t].cpu;
        if self.psi_oncpu[cpu] == Some(t) {
            self.psi_oncpu[cpu] = None;
        }
        if set & crate::psi::flags::MEMSTALL != 0
            && self.tasks[t].psi_flags & crate::psi::flags::MEMSTALL == 0
        {
            self.tasks[t].psi_sleep_memstall = true;
        }
        self.psi_task_change(
            t,
            now,
            crate::psi::flags::RUNNING | crate::psi::flags::ONCPU,
            set,
        );
    }

    /// psi_memstall_enter for the running task. Returns whether it already was in a
    /// memstall section (the kernel's pflags), for `psi_memstall_leave`.
    pub fn psi_memstall_enter(&mut self) -> bool {
        let Some(t) = self.cur.task else {
            return true;
        };
        if self.tasks[t].psi_flags & crate::psi::flags::MEMSTALL != 0 {
            return true;
        }
        let now = self.now();
        self.psi_task_change(t, now, 0, crate::psi::flags::MEMSTALL);
        false
    }

    /// psi_memstall_leave: ends the section `psi_memstall_enter` began (unless it was
    /// nested, `was_stalled`).
    pub fn psi_memstall_leave(&mut self, was_stalled: bool) {
        if was_stalled {
            return;
        }
        if let Some(t) = self.cur.task {
            let now = self.now();
            self.psi_task_change(t, now, crate::psi::flags::MEMSTALL, 0);
        }
    }

    /// The running task's next sleep (the `Err(Wait)` a site is about to return) is taken
    /// with `f`: TSK_MEMSTALL inside a reclaim section, TSK_IOWAIT in io_schedule_timeout.
    #[inline]
    pub fn psi_sleep_kind(&mut self, f: u8) {
        self.psi_next_sleep |= f;
    }

    /// Wake every task waiting on `pfn` (wake_up_page). Called from unlock_page and
    /// end_page_writeback when PG_waiters is set.
    pub fn wake_up_page(&mut self, pfn: Pfn) {
        if !self.mem[pfn as usize].test(pg::WAITERS) {
            return;
        }
        self.mem[pfn as usize].flags &= !pg::WAITERS;
        let now = self.now();
        let mut i = 0;
        while i < self.page_waiters.len() {
            if self.page_waiters[i].0 == pfn {
                let (_, t) = self.page_waiters.remove(i);
                self.wake_up(t, now);
            } else {
                i += 1;
            }
        }
    }

    // ---- the engine ----------------------------------------------------------------------

    /// The earliest time CPU `c` can run a task, if it has a runnable one.
    fn cpu_next_time(&self, c: CpuId) -> Option<Ps> {
        let rq = &self.runqueues[c];
        if rq.is_empty() {
            return None;
        }
        let ready = rq
            .iter()
            .map(|t| self.tasks[*t].ready_at_ps)
            .min()
            .unwrap_or(0);
        Some(self.cpu_clock(c).max(ready))
    }

    fn user_tasks_alive(&self) -> bool {
        debug_assert_eq!(
            self.nr_user_alive,
            self.tasks
                .iter()
                .filter(|t| !t.is_kthread() && t.state != TaskState::Exited)
                .count()
        );
        self.nr_user_alive > 0
    }

    /// Run until every user task has exited (or a limit or a check failure stops the run).
    pub fn run(&mut self, max_steps: u64) -> RunEnd {
        self.run_with_progress(max_steps, &mut |_| {})
    }

    /// The engine's next action: the earliest pending event (`None`) or the step of the
    /// runnable CPU with the earliest time (`Some(cpu)`), among the CPUs not in the middle of
    /// a step; an event wins a tie, CPUs tie by id.
    #[inline(always)]
    fn next_action(&self) -> Option<(Ps, Option<CpuId>)> {
        let mut best: Option<(Ps, CpuId)> = None;
        debug_assert!(
            (0..self.cpus.len()).all(|c| self.rq_nonempty.test(c) != self.runqueues[c].is_empty())
        );
        for c in self.rq_nonempty.iter() {
            if self.stepping_mask.test(c) {
                continue;
            }
            if let Some(t) = self.cpu_next_time(c) {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, c));
                }
            }
        }
        match (self.events.peek_time(), best) {
            (Some(et), Some((ct, _))) if et <= ct => Some((et, None)),
            (_, Some((ct, c))) => Some((ct, Some(c))),
            (Some(et), None) => Some((et, None)),
            (None, None) => None,
        }
    }

    /// `run`, calling `progress` with the virtual time every few thousand steps. On return
    /// the accounting is up to date (`sync_accounting`).
    pub fn run_with_progress(&mut self, max_steps: u64, progress: &mut dyn FnMut(Ps)) -> RunEnd {
        let end = self.run_steps(max_steps, progress);
        self.sync_accounting();
        end
    }

    fn run_steps(&mut self, max_steps: u64, progress: &mut dyn FnMut(Ps)) -> RunEnd {
        while self.user_tasks_alive() {
            if self.steps >= max_steps {
                return RunEnd::StepLimit;
            }
            if let Some(mut o) = self.observer.take() {
                o.before_action(self);
                self.observer = Some(o);
            }
            self.steps += 1;
            if self.steps.is_multiple_of(4096) {
                progress(self.max_clock());
            }
            match self.next_action() {
                None => return RunEnd::Stalled(self.describe_stall()),
                Some((t, _)) if t > MAX_VIRTUAL_PS => {
                    return RunEnd::Stalled(format!(
                        "virtual time passed the engine's limit of {} days",
                        MAX_VIRTUAL_PS / (24 * 3600 * 1_000_000_000_000)
                    ));
                }
                Some((t, None)) => {
                    if t > self.last_user_step_ps.saturating_add(STALL_LIMIT_PS) {
                        return RunEnd::Stalled(format!(
                            "no user task ran for {} s of virtual time; {}",
                            STALL_LIMIT_PS / 1_000_000_000_000,
                            self.describe_stall()
                        ));
                    }
                    let (t, ev) = self.events.pop().expect("peeked");
                    self.take_samples(t);
                    self.handle_event(t, ev);
                }
                Some((t, Some(c))) => {
                    self.take_samples(t);
                    if self.step_fusion && !self.check {
                        self.fuse_step_limit = max_steps;
                    }
                    self.run_cpu_step(c, t);
                    self.fuse_step_limit = 0;
                }
            }
            if self.check {
                if let Err(e) = crate::mm::check::check_all(self) {
                    return RunEnd::CheckFailed(e);
                }
            }
        }
        // Finish: drain pagevecs is not needed for reports; record a final sample.
        let end = self.max_clock();
        self.record_sample(end);
        RunEnd::Completed
    }

    /// The running step waits until `until` (a flush IPI's sender spinning for the
    /// acknowledgements of IPIs that arrive by then): the rest of the machine runs up to that
    /// point first — every pending event at or before `until` and every step that another
    /// CPU, not itself in the middle of a step, starts before `until`, in the engine's order.
    ///
    /// This is the kernel's causality: smp_call_function_many returns only after every
    /// target ran the handler, so whatever a target does before the IPI reaches it — writes
    /// through the translation being flushed included — happens before the sender goes on
    /// to free the page or write it out. Without it a target whose clock is behind the
    /// sender's ran those steps after the sender's whole step (after the IO had captured
    /// the page). The sender's clock and the interrupt accounting do not change: the target
    /// takes the interrupt at the arrival time, the sender spins until the acknowledgement.
    /// zswap's rejected stores use it too (`mm/zswap.rs`): the shrink worker they queue
    /// runs on another CPU while the reclaimer goes on.
    ///
    /// Outside an engine step (tests that call kernel functions and deliver the IPIs
    /// themselves) it does nothing. Nested steps may nest again (at most one level per
    /// CPU). They count in `steps` but do not stop at the run's step limit — a run cut
    /// into chunks (`run::run_chunked`, the swarm's checks every 25 steps) must be the run
    /// in one piece — and are bounded by time (every step and event is before `until`) and
    /// by `NESTED_STEPS_MAX`. The invariant checker runs only between top-level steps,
    /// where no kernel function is half done.
    pub fn run_others_until(&mut self, until: Ps) {
        if self.stepping.last() != Some(&self.cur.cpu) {
            return;
        }
        let saved = (
            self.cur,
            self.fault_was_major,
            self.completing_version,
            self.fault_tried,
            std::mem::take(&mut self.fault_oom),
        );
        // The running task's MGLRU context (in a fault; reclaim with an mm walk): the
        // kernel's is per task (current->in_lru_fault), so the other CPUs' steps start
        // without it.
        let saved_lru_gen = (self.lru_gen_in_fault, self.lru_gen_walk_active);
        (self.lru_gen_in_fault, self.lru_gen_walk_active) = (false, false);
        for _ in 0..NESTED_STEPS_MAX {
            match self.next_action() {
                Some((t, None)) if t <= until => {
                    self.steps += 1;
                    let (t, ev) = self.events.pop().expect("peeked");
                    self.take_samples(t);
                    self.handle_event(t, ev);
                }
                Some((t, Some(c))) if t < until => {
                    self.steps += 1;
                    self.take_samples(t);
                    self.run_cpu_step(c, t);
                }
                _ => break,
            }
        }
        self.switch_ctx(saved.0);
        (self.fault_was_major, self.completing_version) = (saved.1, saved.2);
        (self.fault_tried, self.fault_oom) = (saved.3, saved.4);
        (self.lru_gen_in_fault, self.lru_gen_walk_active) = saved_lru_gen;
    }

    fn describe_stall(&self) -> String {
        let waiting: Vec<String> = self
            .tasks
            .iter()
            .filter(|t| !t.is_kthread() && t.state == TaskState::Sleeping)
            .map(|t| {
                let on: Vec<String> = self
                    .page_waiters
                    .iter()
                    .filter(|(_, w)| *w == t.id)
                    .map(|(p, _)| format!("pfn {} ({})", p, self.mem[*p as usize].flag_names()))
                    .collect();
                match &t.cur_op {
                    Some(op) if on.is_empty() => format!("{} in {:?}", t.name, op.op),
                    Some(op) => format!("{} in {:?} waiting on {}", t.name, op.op, on.join(", ")),
                    None => t.name.clone(),
                }
            })
            .collect();
        format!("sleeping tasks: {}", waiting.join("; "))
    }

    /// When to read the pressure files at the end of a run or at a cut: the largest CPU
    /// clock, or later if PSI has folded its periods up to the engine's last action (a
    /// timer or IO completion past every idle CPU's clock).
    pub fn pressure_read_time(&self) -> Ps {
        self.max_clock().max(self.psi.accounted_to())
    }

    /// The latest CPU clock (elapsed so far).
    pub fn max_clock(&self) -> Ps {
        (0..self.cpus.len())
            .map(|c| self.cpu_clock(c))
            .max()
            .unwrap_or(0)
    }

    /// The engine's periodic work due by `t`, before the action at `t`: PSI's clock, then
    /// (one compare when nothing is due) the memcg stats flush and the samples.
    #[inline(always)]
    fn take_samples(&mut self, t: Ps) {
        self.psi.advance(t);
        if t >= self.next_periodic_ps {
            self.periodic_work(t);
        }
    }

    /// The memcg stats flush (`memcg-stats-ratelimited`) and the samples due by `t`.
    #[cold]
    #[inline(never)]
    fn periodic_work(&mut self, t: Ps) {
        if t >= self.memcg_stats_next_flush_ps {
            self.memcg_stats_flush(t);
        }
        while self.next_sample_ps <= t {
            let at = self.next_sample_ps;
            self.record_sample(at);
            self.next_sample_ps += self.sample_step_ps;
            if self.sample_step_ps < self.sample_interval_ps
                && self.samples.len() >= 2 * SERIES_MIN_SAMPLES
            {
                // The samples are at 0, s, 2s, …, (2N-1)s: keep those at multiples of 2s.
                // The next one is due at 2Ns, a multiple of 2s too.
                let mut i = 0usize;
                self.samples.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.sample_step_ps *= 2;
            }
        }
        self.next_periodic_ps = self.next_sample_ps.min(self.memcg_stats_next_flush_ps);
    }

    fn record_sample(&mut self, t: Ps) {
        if self.samples.len() >= 1_000_000 {
            return; // bounded: a run never grows the series without limit
        }
        // The dirty thresholds as a read of /proc/vmstat computes them.
        let (bg, thresh) = self.global_dirty_limits();
        let values = SAMPLED
            .iter()
            .map(|i| match i {
                VmItem::NrDirtyThreshold => thresh as i64,
                VmItem::NrDirtyBackgroundThreshold => bg as i64,
                _ => self.vmstat.get(*i),
            })
            .collect();
        let cgroups = if self.memcgs.len() > 1 {
            self.memcgs.iter().map(|m| m.usage).collect()
        } else {
            Vec::new()
        };
        let cgroups_swap = if self.memcgs.len() > 1 && self.swap.is_some() {
            self.memcgs.iter().map(|m| m.swap_usage).collect()
        } else {
            Vec::new()
        };
        let lru_gen = if self.lru_gen_enabled() {
            self.lru_gen_sample()
        } else {
            Vec::new()
        };
        self.samples.push(Sample {
            t_ns: t / 1_000,
            values,
            cgroups,
            cgroups_swap,
            lru_gen,
        });
    }

    /// A task's timer event fires at `t` (`Event::Wake`): the timer of a timed sleep
    /// (schedule_timeout) wakes the task, a kthread's periodic timer notes that it is due.
    /// A user task's timer whose sleep a wakeup ended early was cancelled (del_timer) and
    /// wakes nobody, so it cannot cut a later sleep short; kswapd's own sleep decides
    /// whether its timer is stale (`kswapd_timer_is_stale`).
    pub fn timer_fire(&mut self, task: u32, t: Ps) {
        self.hash_event(1, u64::from(task));
        let task = task as usize;
        if self.kswapd_timer_is_stale(task, t) {
            return;
        }
        if !self.tasks[task].is_kthread() && self.tasks[task].timer_ps != t {
            return;
        }
        if self.tasks[task].state == TaskState::Sleeping {
            self.reclaim_throttle_timed_out(task, t);
            self.wake_up(task, t);
        } else if let TaskBody::Kthread(_) = self.tasks[task].body {
            // A periodic timer for a kthread that is already running: note it.
            self.tasks[task].ready_at_ps = self.tasks[task].ready_at_ps.min(t);
        }
    }

    fn handle_event(&mut self, t: Ps, ev: Event) {
        match ev {
            Event::Wake(task) => self.timer_fire(task, t),
            Event::IoComplete(id) => {
                self.hash_event(2, u64::from(id));
                self.io_complete(id, t);
            }
            Event::Ipi(id) => {
                self.hash_event(4, u64::from(id));
                self.ipi_arrive(id, t);
            }
        }
    }

    /// Whether user task `tid` (the caller checks it is not a kthread), still runnable on
    /// CPU `c` at the end of a top-level step,
    /// runs its next step at once, and if so the engine's work between the two steps
    /// (what `run_steps` does before an action): the step ends, the observer looks, the
    /// step counts, the periodic work due runs. It does when the engine would pick this
    /// CPU next anyway: the task alone on its CPU and ready, no event due at or before the
    /// CPU's clock (an event wins a tie), no other CPU with a ready task earlier (or at the
    /// same time with a lower id), and no reason for the loop itself to stop or report (the
    /// step limit, a progress call, the invariant checker, the time limit).
    #[inline]
    fn continue_step(&mut self, c: CpuId, tid: TaskId) -> bool {
        let now = self.clock;
        if self.stepping.len() != 1
            || self.steps >= self.fuse_step_limit
            || (self.steps + 1).is_multiple_of(4096)
            || now > MAX_VIRTUAL_PS
            || !self.runqueues[c].is_empty()
            || self.tasks[tid].ready_at_ps > now
        {
            return false;
        }
        let mine = match self.next_action() {
            None => true,
            Some((et, None)) => now < et,
            Some((ct, Some(other))) => now < ct || (now == ct && c < other),
        };
        if !mine {
            return false;
        }
        // The end of this step and the engine loop's work before the next one.
        self.cur.task = None;
        self.set_func(KFunc::Idle);
        if let Some(mut o) = self.observer.take() {
            o.before_action(self);
            self.observer = Some(o);
        }
        self.steps += 1;
        self.fused_steps += 1;
        self.take_samples(now);
        true
    }

    fn run_cpu_step(&mut self, c: CpuId, t: Ps) {
        debug_assert!(!self.stepping_mask.test(c), "CPU {c} steps twice at once");
        self.stepping.push(c);
        self.stepping_mask.set(c);
        let clock_before = self.cpu_clock(c);
        // Idle up to the time the task can run.
        self.cpu_idle_until(c, t);
        let mut now = self.cpu_clock(c);
        // Pick the first task in queue order that is ready.
        let pos = self.runqueues[c]
            .iter()
            .position(|tid| self.tasks[*tid].ready_at_ps <= now)
            .expect("a ready task");
        let rq = &mut self.runqueues[c];
        // The last task (the only one, often) leaves without a move of the rest.
        let tid = if pos + 1 == rq.len() {
            rq.pop().expect("a ready task")
        } else {
            rq.remove(pos)
        };
        if self.runqueues[c].is_empty() {
            self.rq_nonempty.clear(c);
        }
        let mut clock_before = clock_before;
        // The task runs on after a step (`continue_step`): the CPU is already the running one.
        let mut fused = false;
        // A task's kind never changes.
        let kthread = self.tasks[tid].is_kthread();
        loop {
            // psi_task_switch: the task takes the CPU (from a task preempted while runnable).
            if self.psi_oncpu[c] != Some(tid) {
                self.psi_task_switch(c, tid, now);
            }
            // The memstall a sleep carried ends as the task runs again.
            self.psi_next_sleep = 0;
            if self.tasks[tid].psi_sleep_memstall {
                self.tasks[tid].psi_sleep_memstall = false;
                self.psi_task_change(tid, now, crate::psi::flags::MEMSTALL, 0);
            }
            let ctx = Ctx {
                cpu: c,
                task: Some(tid),
                func: KFunc::Schedule,
                mode: Mode::System,
            };
            if fused {
                self.resume_ctx(ctx);
            } else {
                self.switch_ctx(ctx);
            }
            // lru_gen_use_mm: on a real CPU a running task is switched in again at every
            // tick's and kworker's context switch; here it is at each of its steps. Only
            // MGLRU's mm walk reads the bitmap.
            if self.lru_gen_enabled() {
                if let Some(m) = self.tasks[tid]
                    .mm
                    .and_then(|m| self.mms[m as usize].as_mut())
                {
                    m.lru_gen_bitmap = u64::MAX;
                }
            }
            if self.last_ran[c] != Some(tid) {
                if self.last_ran[c].is_some() {
                    self.charge(self.costs.context_switch_ps);
                }
                self.last_ran[c] = Some(tid);
                self.switch_mm(c, tid);
            } else if self.cpu_lazy[c]
                || (self.tasks[tid].mm.is_some() && self.cpu_active_mm[c] != self.tasks[tid].mm)
            {
                // Back from idle (lazy TLB mode, or init_mm after a flush or with PCID).
                self.switch_mm(c, tid);
            }
            self.hash_event(3, tid as u64);
            if self.tasks[tid].reclaim_throttled_on.is_some() {
                self.reclaim_throttle_done(tid);
            }
            let still_runnable = if kthread {
                let TaskBody::Kthread(k) = self.tasks[tid].body else {
                    unreachable!("a kthread's body")
                };
                self.kthread_step(tid, k)
            } else {
                self.last_user_step_ps = self.last_user_step_ps.max(now);
                self.user_step(tid, clock_before)
            };
            if still_runnable && self.tasks[tid].state == TaskState::Runnable {
                if !kthread && self.continue_step(c, tid) {
                    now = self.clock;
                    clock_before = now;
                    fused = true;
                    continue;
                }
                // Round robin: to the back of the queue.
                self.runqueues[c].push(tid);
                self.rq_nonempty.set(c);
            } else if self.runqueues[c].is_empty() {
                // The CPU goes idle: the idle task is a kernel thread (context_switch's
                // enter_lazy_tlb).
                self.enter_lazy_tlb(c);
            }
            break;
        }
        self.cur.task = None;
        self.set_func(KFunc::Idle);
        self.stepping.pop();
        self.stepping_mask.clear(c);
    }

    /// One step of a user task: fetch the next op if none is in progress, execute it.
    /// Returns true if the task stays runnable. `clock_before`: its CPU's clock when the
    /// step began (for the observer).
    fn user_step(&mut self, tid: TaskId, clock_before: Ps) -> bool {
        let t = &mut self.tasks[tid];
        if t.fatal_signal_pending() {
            self.task_exit(tid);
            return false;
        }
        // The op in progress (resumed), or the program's next one. Tested before it is
        // taken: a take moves the whole op (and writes None back) at every step.
        if t.cur_op.is_some() {
            let mut cur = t.cur_op.take().expect("an op in progress");
            return match self.exec_step(tid, &cur.op, &mut cur.progress, &mut cur.entered) {
                Ok(runnable) => {
                    crate::sched::drop_done_op(&mut cur.op);
                    runnable
                }
                Err(w) => {
                    // Resumed from its progress when the task is woken.
                    self.tasks[tid].cur_op = Some(cur);
                    self.sleep_on(tid, w);
                    false
                }
            };
        }
        if let Some(mut o) = self.observer.take() {
            o.before_next_op(self, tid, clock_before);
            self.observer = Some(o);
        }
        let task = &mut self.tasks[tid];
        // Executed where the program wrote it (no copy of the op just written, which the
        // CPU would have to wait for: a store it cannot forward).
        let mut op = match &mut task.body {
            TaskBody::User(p) => p.next_op(&task.last),
            TaskBody::Kthread(_) => unreachable!("user_step on a kthread"),
        };
        if op == crate::workload::Op::Exit {
            self.task_exit(tid);
            return false;
        }
        let (mut progress, mut entered) = (0, false);
        match self.exec_step(tid, &op, &mut progress, &mut entered) {
            Ok(runnable) => {
                crate::sched::drop_done_op(&mut op);
                runnable
            }
            Err(w) => {
                // Resumed from its progress when the task is woken.
                self.tasks[tid].cur_op = Some(crate::sched::OpInProgress {
                    op,
                    progress,
                    entered,
                });
                self.sleep_on(tid, w);
                false
            }
        }
    }

    /// Execute `op` of task `tid` (new, or resumed at `progress`) and handle its end: Err
    /// when it sleeps (the caller keeps the op in the task with its progress); Ok(whether
    /// the task stays runnable) when it is done.
    #[inline(always)]
    fn exec_step(
        &mut self,
        tid: TaskId,
        op: &crate::workload::Op,
        progress: &mut u64,
        entered: &mut bool,
    ) -> Result<bool, Wait> {
        let mut r = self.exec_op(tid, op, progress, entered);
        self.set_mode(Mode::System);
        // The result is read where exec_op wrote it, by its fields: a load of the whole
        // result just written would wait for the stores that wrote it.
        let res = match &mut r {
            Ok(res) => res,
            Err(w) => return Err(*w),
        };
        if let OpResult::Err(
            sig @ (crate::workload::Errno::SIGSEGV | crate::workload::Errno::SIGBUS),
        ) = res
        {
            // The task is killed by the signal; the run goes on.
            *self.tasks[tid]
                .stats
                .errors
                .entry(sig.name().to_string())
                .or_default() += 1;
            self.task_exit(tid);
            self.zap_other_threads(tid);
            return Ok(false);
        }
        if !self.tasks[tid].held_pages.is_empty() {
            self.put_held_pages(tid);
        }
        let t = &mut self.tasks[tid];
        match res {
            OpResult::Bytes(n) => t.last = OpResult::Bytes(*n),
            OpResult::Fd(fd) => t.last = OpResult::Fd(*fd),
            OpResult::None => t.last = OpResult::None,
            other => {
                if let OpResult::Err(e) = other {
                    *t.stats.errors.entry(e.name().to_string()).or_default() += 1;
                }
                t.last = std::mem::take(other);
            }
        }
        // Return to user space: memory.high work (mem_cgroup_handle_over_high), and the
        // throttling the charges' synchronous work owes.
        if t.memcg_nr_pages_over_high > 0 || t.memcg_high_delay_ps > 0 {
            let owed = std::mem::take(&mut self.tasks[tid].memcg_high_delay_ps);
            let delay = owed + self.mem_cgroup_handle_over_high(tid);
            if delay > 0 {
                // The throttling sleep is a memstall (mem_cgroup_handle_over_high).
                self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
                let at = self.now() + delay;
                self.sleep_on(tid, Wait::Until(at));
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// zap_other_threads: a fatal signal kills the whole process; each other live thread
    /// of `tid`'s thread group is woken and exits at its next step.
    pub(crate) fn zap_other_threads(&mut self, tid: TaskId) {
        let tgid = self.tasks[tid].tgid;
        let now = self.now();
        for t in self.threads_of(tgid) {
            if t != tid {
                self.tasks[t].group_exit = true;
                self.wake_up(t, now);
            }
        }
    }

    /// The live tasks of thread group `tgid` (the process whose leader is `tgid`), in id
    /// order (the leader's id first; its threads come after it). For a multi-threaded
    /// process a scan of the tasks from the leader on (at its exits and kills only).
    pub(crate) fn threads_of(&self, tgid: TaskId) -> Vec<TaskId> {
        if !self.tasks[tgid].multi_threaded {
            return if self.tasks[tgid].state == TaskState::Exited {
                Vec::new()
            } else {
                vec![tgid]
            };
        }
        (tgid..self.tasks.len())
            .filter(|&t| self.tasks[t].tgid == tgid && self.tasks[t].state != TaskState::Exited)
            .collect()
    }

    fn task_exit(&mut self, tid: TaskId) {
        let now = self.now();
        // A fork that slept and will not resume: the child's half-copied mm goes
        // (copy_process's error path, mmput).
        if let Some(crate::sched::OpInProgress {
            op: crate::workload::Op::Fork(_),
            progress,
            ..
        }) = self.tasks[tid].cur_op
        {
            if progress > 0 {
                self.set_mode(Mode::System);
                self.mmput_final((progress - 1) as u32);
            }
        }
        // exit_files: the descriptor table goes with the last thread of its process.
        let files = self.tasks[tid].tgid;
        let last_thread = self.threads_of(files).iter().all(|&t| t == tid);
        let open: Vec<u32> = if last_thread {
            (0..self.tasks[files].fds.len() as u32)
                .filter(|fd| self.tasks[files].fds[*fd as usize].is_some())
                .collect()
        } else {
            Vec::new()
        };
        self.set_mode(Mode::System);
        // A call that slept and will not resume drops the pages it held.
        self.put_held_pages(tid);
        for fd in open {
            let _ = self.sys_close(tid, fd);
        }
        self.exit_mmap(tid);
        let task = &mut self.tasks[tid];
        if task.state != TaskState::Exited && !task.is_kthread() {
            self.nr_user_alive -= 1;
        }
        task.state = TaskState::Exited;
        task.stats.exit_ps = Some(now);
        let cpu = self.tasks[tid].cpu;
        if self.psi_oncpu[cpu] == Some(tid) {
            self.psi_oncpu[cpu] = None;
        }
        self.psi_task_change(tid, now, u8::MAX, 0);
    }
}

/// The FNV-1a 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// `FNV_PRIME` to the powers 0 to 8 (wrapping).
const FNV_PRIME_POW: [u64; 9] = {
    let mut t = [1u64; 9];
    let mut i = 1;
    while i < 9 {
        t[i] = t[i - 1].wrapping_mul(FNV_PRIME);
        i += 1;
    }
    t
};

/// FNV-1a of `h` over the 8 little-endian bytes of `x`. A zero byte's step is a bare
/// multiplication (xor with 0 changes nothing), so the high zero bytes of a small `x` are
/// one multiplication by the prime's power: the same value as eight byte steps.
#[inline]
pub(crate) fn fnv1a_u64(mut h: u64, mut x: u64) -> u64 {
    if x < 0x100 {
        // One byte (or none) and seven zero ones: the multiplications in one.
        return (h ^ x).wrapping_mul(FNV_PRIME_POW[8]);
    }
    let mut left = 8;
    while x != 0 {
        h ^= x & 0xff;
        h = h.wrapping_mul(FNV_PRIME);
        x >>= 8;
        left -= 1;
    }
    h.wrapping_mul(FNV_PRIME_POW[left])
}

#[cfg(test)]
mod fnv_tests {
    use super::*;
    use proptest::prelude::*;

    /// FNV-1a byte by byte, as its definition reads.
    fn bytewise(mut h: u64, x: u64) -> u64 {
        for b in x.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(FNV_PRIME);
        }
        h
    }

    #[test]
    fn fnv1a_u64_matches_the_byte_steps_on_edge_values() {
        for x in [
            0,
            1,
            0xff,
            0x100,
            0xff00,
            1 << 56,
            u64::MAX,
            0x00ff_0000_0000_ff00,
        ] {
            for h in [0, 0xcbf2_9ce4_8422_2325, u64::MAX] {
                assert_eq!(fnv1a_u64(h, x), bytewise(h, x), "h {h:#x} x {x:#x}");
            }
        }
    }

    proptest! {
        #[test]
        fn fnv1a_u64_matches_the_byte_steps(h in any::<u64>(), x in any::<u64>(), shift in 0u32..64) {
            // Small values (high zero bytes) and full ones.
            prop_assert_eq!(fnv1a_u64(h, x >> shift), bytewise(h, x >> shift));
        }
    }
}
