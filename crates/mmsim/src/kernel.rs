//! Kernel eras: which reclaim and workingset rules a run follows.
//!
//! mmsim models each rule that changed who gets evicted between 2.6.30 and 6.18 as a named
//! feature switch (`Features` in `sim.rs`). An era is the set of those switches that a
//! kernel version has: `kernel = "4.14"` in a scenario (or `--kernel 4.14`) turns on every
//! rule introduced up to 4.14 and off every later one. The studied changes (the seeds'
//! `accessed-init`, `exec-protect`, `batch-tlb-flush`, `truncate-batch-shadow`) are not
//! part of an era: the `vanilla` / `patched` presets set them, so a run can ask "does this
//! change still matter on 6.18?". A scenario's `[features]` and `--features` then override
//! single switches, era rules included.
//!
//! The rules, with the version and commit title that introduced each (`RULES`), are
//! listed in `docs/kernel-eras.md` together with what was left out.

use crate::sim::Features;

/// A kernel version mmsim can model: any release from 2.6.30 to 6.18 (`"6.8"`, `"5.15"`,
/// `"2.6.32"`). Its rules are those introduced up to it ([`RULES`]); the stable updates of a
/// release (the third number from 3.0 on) are not told apart. Six versions are the named
/// eras ([`ERAS`]) the model was built around and is checked against; a version between two
/// of them has the rules of the earlier one and those of the later one's that came by then.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KernelEra {
    /// Major, minor and (2.6 only) the third number: 2.6.30 is `[2, 6, 30]`, 6.8 `[6, 8, 0]`.
    v: [u8; 3],
}

impl KernelEra {
    /// 2.6.30: no workingset detection, get_scan_ratio balancing, fixed swap readahead.
    pub const V2_6_30: KernelEra = KernelEra { v: [2, 6, 30] };
    /// 3.15: workingset refault detection, file-only scanning while the cache is plentiful.
    pub const V3_15: KernelEra = KernelEra::new(3, 15);
    /// 4.2: the base model of the seeds (3.15's rules, and the dirty ratios in 1/PAGE_SIZE units).
    pub const V4_2: KernelEra = KernelEra::new(4, 2);
    /// 4.14: inactive:active ratio by LRU size, shadow-node limit by LRU pages.
    pub const V4_14: KernelEra = KernelEra::new(4, 14);
    /// 6.1: memcg-era reclaim (cost balancing, anon workingset, refault-driven
    /// deactivation, reclaim throttling).
    pub const V6_1: KernelEra = KernelEra::new(6, 1);
    /// 6.18: the newest kernel modelled (the classic LRU rules of 6.1, and reclaim no
    /// longer writes filesystem pages).
    pub const V6_18: KernelEra = KernelEra::new(6, 18);

    /// Release `major.minor` (3.0 and later; 2.6 releases are the named V2_6_30 only, or
    /// [`KernelEra::parse`]).
    pub const fn new(major: u8, minor: u8) -> KernelEra {
        KernelEra {
            v: [major, minor, 0],
        }
    }

    /// Release 2.6.`n` (mmsim models from 2.6.30).
    pub const fn v2_6(n: u8) -> KernelEra {
        KernelEra { v: [2, 6, n] }
    }

    /// The named era whose rules a version has at most: the first of [`ERAS`] at or after
    /// it (6.8 → 6.18). The era table of docs/kernel-eras.md lists each rule in the row of
    /// its version's named era.
    pub fn named_era(self) -> KernelEra {
        ERAS.iter()
            .copied()
            .find(|e| *e >= self)
            .unwrap_or(KernelEra::V6_18)
    }
}

/// The named eras, oldest first: the versions the model was built around, each with its
/// row in docs/kernel-eras.md, its event hashes guarded (`tests/all/era_hashes.rs`) and its
/// place in the swarm's draws.
pub const ERAS: &[KernelEra] = &[
    KernelEra::V2_6_30,
    KernelEra::V3_15,
    KernelEra::V4_2,
    KernelEra::V4_14,
    KernelEra::V6_1,
    KernelEra::V6_18,
];

/// The last minor release of each major version from 3 (6.x: up to what mmsim models).
const LAST_MINOR: &[(u8, u8)] = &[(3, 19), (4, 20), (5, 19), (6, 18)];

/// The era a scenario that names no kernel runs on.
pub const DEFAULT_ERA: KernelEra = KernelEra::V6_18;

/// One rule of the model that a kernel version introduced.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    /// The feature switch (`--features`, `[features]`).
    pub feature: &'static str,
    /// First kernel version that has it: its commit's release, or the release from which
    /// the kernel runs it by default when that is later (cgroup-writeback).
    pub since: KernelEra,
    /// The release of the commit that introduced it, as the kernel names it.
    pub version: &'static str,
    /// Title of the commit that introduced it.
    pub commit: &'static str,
}

/// The era rules, oldest first. Each is a switch in `Features`.
pub const RULES: &[Rule] = &[
    Rule {
        feature: "mapped-used-once",
        since: KernelEra::v2_6(34),
        version: "2.6.34",
        commit: "vmscan: detect mapped file pages used only once",
    },
    Rule {
        feature: "memcg-charge-stock",
        since: KernelEra::v2_6(33),
        version: "2.6.33",
        commit: "memcg: coalesce charging via percpu storage",
    },
    Rule {
        feature: "context-readahead",
        since: KernelEra::v2_6(31),
        version: "2.6.31",
        commit: "readahead: introduce context readahead",
    },
    Rule {
        feature: "kswapd-short-sleep",
        since: KernelEra::v2_6(32),
        version: "2.6.32",
        commit:
            "vmscan: have kswapd sleep for a short interval and double check it should be asleep",
    },
    Rule {
        feature: "io-less-dirty-throttling",
        since: KernelEra::new(3, 2),
        version: "3.2",
        commit: "writeback: IO-less balance_dirty_pages()",
    },
    Rule {
        feature: "dirtyable-reserve",
        since: KernelEra::new(3, 3),
        version: "3.3",
        commit: "mm: exclude reserved pages from dirtyable memory",
    },
    Rule {
        feature: "spread-dirty-pages",
        since: KernelEra::new(3, 3),
        version: "3.3",
        commit: "mm: try to distribute dirty pages fairly across zones",
    },
    Rule {
        feature: "dirtyable-file-only",
        since: KernelEra::new(3, 14),
        version: "3.14",
        commit: "mm/page-writeback.c: do not count anon pages as dirtyable memory",
    },
    Rule {
        feature: "kswapd-file-writeback",
        since: KernelEra::new(3, 2),
        version: "3.2",
        commit: "mm: vmscan: do not writeback filesystem pages in direct reclaim",
    },
    Rule {
        feature: "kswapd-flat-priority",
        since: KernelEra::new(3, 11),
        version: "3.11",
        commit: "mm: vmscan: flatten kswapd priority loop",
    },
    Rule {
        feature: "file-only-when-plenty",
        since: KernelEra::new(3, 8),
        version: "3.8",
        commit: "mm: vmscan: only evict file pages when we have plenty",
    },
    Rule {
        feature: "workingset",
        since: KernelEra::new(3, 15),
        version: "3.15",
        commit: "mm: thrash detection-based file cache sizing",
    },
    Rule {
        feature: "adaptive-swap-readahead",
        since: KernelEra::new(3, 15),
        version: "3.15",
        commit: "swap: change swap readahead to use a sliding window",
    },
    Rule {
        feature: "swap-percpu-cluster",
        since: KernelEra::new(3, 14),
        version: "3.14",
        commit: "swap: make cluster allocation per-cpu",
    },
    Rule {
        feature: "mmap-readaround-marker",
        since: KernelEra::new(3, 0),
        version: "3.0",
        commit: "readahead: trigger mmap sequential readahead on PG_readahead",
    },
    Rule {
        feature: "write-begin-fs",
        since: KernelEra::new(3, 9),
        version: "3.9",
        commit: "ext4: grab page before starting transaction handle in write_begin()",
    },
    Rule {
        feature: "activate-page-batch",
        since: KernelEra::new(3, 0),
        version: "3.0",
        commit: "mm: batch activate_page() to reduce lock contention",
    },
    Rule {
        feature: "lru-cache-activate",
        since: KernelEra::new(3, 11),
        version: "3.11",
        commit: "mm: activate !PageLRU pages on mark_page_accessed if page is on local pagevec",
    },
    Rule {
        feature: "fault-around",
        since: KernelEra::new(3, 15),
        version: "3.15",
        commit: "mm: introduce do_fault_around()",
    },
    Rule {
        feature: "fadvise-random-fmode",
        since: KernelEra::v2_6(33),
        version: "2.6.33",
        commit: "readahead: introduce FMODE_RANDOM for POSIX_FADV_RANDOM",
    },
    Rule {
        feature: "invalidate-deactivate",
        since: KernelEra::v2_6(39),
        version: "2.6.39",
        commit: "mm: deactivate invalidated pages",
    },
    Rule {
        feature: "madvise-willneed-swapin",
        since: KernelEra::new(3, 8),
        version: "3.8",
        commit: "mm: make madvise(MADV_WILLNEED) support swap file prefetch",
    },
    Rule {
        feature: "fadvise-drain-all",
        since: KernelEra::new(3, 9),
        version: "3.9",
        commit: "mm: fadvise: drain all pagevecs if POSIX_FADV_DONTNEED fails to discard all pages",
    },
    Rule {
        feature: "release-pages-lock-batch",
        since: KernelEra::new(3, 17),
        version: "3.17",
        commit: "mm: memcontrol: do not kill uncharge batching in free_pages_and_swap_cache",
    },
    Rule {
        feature: "dirty-ratio-page-units",
        since: KernelEra::new(4, 2),
        version: "4.2",
        commit: "writeback: implement memcg writeback domain based throttling",
    },
    Rule {
        feature: "tlb-defer-writable",
        since: KernelEra::new(4, 3),
        version: "4.3",
        commit: "mm: defer flush of writable TLB entries",
    },
    Rule {
        feature: "tlb-gen",
        since: KernelEra::new(4, 13),
        version: "4.13",
        commit: "x86/mm: Track the TLB's tlb_gen and update the flushing algorithm",
    },
    Rule {
        feature: "tlb-flush-batched",
        since: KernelEra::new(4, 13),
        version: "4.13",
        commit:
            "mm, mprotect: flush TLB if potentially racing with a parallel reclaim leaving stale TLB entries",
    },
    Rule {
        feature: "pcid",
        since: KernelEra::new(4, 14),
        version: "4.14",
        commit: "x86/mm: Enable CR4.PCIDE on supported systems",
    },
    Rule {
        feature: "watermark-scale-factor",
        since: KernelEra::new(4, 6),
        version: "4.6",
        commit: "mm: scale kswapd watermarks in proportion to memory",
    },
    Rule {
        feature: "lru-add-flush-full",
        since: KernelEra::new(4, 8),
        version: "4.8",
        commit: "mm/swap.c: flush lru pvecs on compound page arrival",
    },
    Rule {
        // Merged in 4.2 for the unified hierarchy, a development flag until 4.5: the 4.2
        // era's memory controller is cgroup v1's.
        feature: "cgroup-writeback",
        since: KernelEra::new(4, 5),
        version: "4.2",
        commit: "writeback: implement memcg wb_domain",
    },
    Rule {
        feature: "read-only-activation",
        since: KernelEra::new(4, 7),
        version: "4.7",
        commit: "mm: filemap: only do access activations on reads",
    },
    Rule {
        feature: "read-only-refault",
        since: KernelEra::new(4, 7),
        version: "4.7",
        commit: "mm: workingset: only do workingset activations on reads",
    },
    Rule {
        feature: "oom-detection-rework",
        since: KernelEra::new(4, 7),
        version: "4.7",
        commit: "mm, oom: rework oom detection",
    },
    Rule {
        feature: "kswapd-failures",
        since: KernelEra::new(4, 11),
        version: "4.11",
        commit: "mm: fix 100% CPU kswapd busyloop on unreclaimable nodes",
    },
    Rule {
        feature: "dirty-seen-twice",
        since: KernelEra::new(4, 11),
        version: "4.11",
        commit: "mm: vmscan: only write dirty pages that the scanner has seen twice",
    },
    Rule {
        feature: "vmscan-kick-flushers",
        since: KernelEra::new(4, 11),
        version: "4.11",
        commit: "mm: vmscan: kick flushers when we encounter dirty pages on the LRU",
    },
    Rule {
        feature: "writeback-activate",
        since: KernelEra::new(4, 11),
        version: "4.11",
        commit: "mm: vmscan: move dirty pages out of the way until they're flushed",
    },
    Rule {
        feature: "io-pages-readahead",
        since: KernelEra::new(4, 10),
        version: "4.10",
        commit: "mm: don't cap request size based on read-ahead setting",
    },
    Rule {
        feature: "memcg-kmem-pgtables",
        since: KernelEra::new(4, 7),
        version: "4.7",
        commit: "arch: x86: charge page tables to kmemcg",
    },
    Rule {
        feature: "memcg-kmem-vfs",
        since: KernelEra::new(4, 5),
        version: "4.5",
        commit: "kmemcg: account certain kmem allocations to memcg",
    },
    Rule {
        feature: "xarray-node-kmem",
        since: KernelEra::new(4, 6),
        version: "4.6",
        commit: "radix-tree: account radix_tree_node to memory cgroup",
    },
    Rule {
        feature: "memcg-swap-full",
        since: KernelEra::new(4, 5),
        version: "4.5",
        commit: "mm: free swap cache aggressively if memcg swap is full",
    },
    Rule {
        feature: "swap-slots-cache",
        since: KernelEra::new(4, 11),
        version: "4.11",
        commit: "mm/swap: add cache for swap slots allocation",
    },
    Rule {
        feature: "lru-size-inactive-ratio",
        since: KernelEra::new(4, 10),
        version: "4.10",
        commit: "mm: vmscan: reduce size of inactive file list",
    },
    Rule {
        feature: "shadow-lru-limit",
        since: KernelEra::new(4, 14),
        version: "4.14",
        commit: "mm: workingset: fix premature shadow node shrinking with cgroups",
    },
    Rule {
        feature: "vma-swap-readahead",
        since: KernelEra::new(4, 14),
        version: "4.14",
        commit: "mm, swap: VMA based swap readahead",
    },
    Rule {
        feature: "madvise-free",
        since: KernelEra::new(4, 5),
        version: "4.5",
        commit: "mm: support madvise(MADV_FREE)",
    },
    Rule {
        feature: "filp-kmem",
        since: KernelEra::new(4, 15),
        version: "4.15",
        commit: "fs, mm: account filp and names caches to kmemcg",
    },
    Rule {
        feature: "no-double-slab-pressure",
        since: KernelEra::new(5, 3),
        version: "5.3",
        commit: "mm: vmscan: remove double slab pressure by inc'ing sc->nr_scanned",
    },
    Rule {
        feature: "swap-sync-io-bypass",
        since: KernelEra::new(4, 15),
        version: "4.15",
        commit: "mm, swap: skip swapcache for swapin of synchronous device",
    },
    Rule {
        feature: "vma-swap-readahead-nonrot",
        since: KernelEra::new(4, 16),
        version: "4.16",
        commit: "mm, swap: Don't use VMA based swap readahead if HDD is used as swap",
    },
    Rule {
        feature: "lazy-tlb-skip",
        since: KernelEra::new(4, 19),
        version: "4.19",
        commit: "x86/mm/tlb: Only send page table free TLB flush to lazy TLB CPUs",
    },
    Rule {
        feature: "pagevec-15",
        since: KernelEra::new(4, 16),
        version: "4.16",
        commit: "Get 7% more pages in a pagevec",
    },
    Rule {
        feature: "workingset-restore",
        since: KernelEra::new(4, 20),
        version: "4.20",
        commit: "mm: workingset: tell cache transitions from workingset thrashing",
    },
    Rule {
        feature: "refault-deactivate",
        since: KernelEra::new(5, 5),
        version: "5.5",
        commit: "mm: vmscan: detect file thrashing at the reclaim root",
    },
    Rule {
        feature: "memcg-high-throttle",
        since: KernelEra::new(5, 4),
        version: "5.4",
        commit: "mm, memcg: throttle allocators when failing reclaim over memory.high",
    },
    Rule {
        feature: "lru-cost-balance",
        since: KernelEra::new(5, 8),
        version: "5.8",
        commit: "mm: balance LRU lists based on relative thrashing",
    },
    Rule {
        feature: "readahead-nofs",
        since: KernelEra::new(5, 8),
        version: "5.8",
        commit: "mm: add page_cache_readahead_unbounded",
    },
    Rule {
        feature: "cache-challenges-anon",
        since: KernelEra::new(5, 8),
        version: "5.8",
        commit: "mm: workingset: let cache workingset challenge anon",
    },
    Rule {
        feature: "anon-inactive-first",
        since: KernelEra::new(5, 9),
        version: "5.9",
        commit: "mm/vmscan: protect the workingset on anonymous LRU",
    },
    Rule {
        feature: "anon-workingset",
        since: KernelEra::new(5, 9),
        version: "5.9",
        commit: "mm/swap: implement workingset detection for anonymous LRU",
    },
    Rule {
        feature: "pgrefill-global-only",
        since: KernelEra::new(5, 9),
        version: "5.9",
        commit: "mm: vmscan: consistent update to pgrefill",
    },
    Rule {
        feature: "memcg-kmem-objcg",
        since: KernelEra::new(5, 9),
        version: "5.9",
        commit: "mm: memcg/slab: charge individual slab objects instead of pages",
    },
    Rule {
        feature: "lruvec-lru-lock",
        since: KernelEra::new(5, 11),
        version: "5.11",
        commit: "mm/lru: replace pgdat lru_lock with lruvec lock",
    },
    Rule {
        feature: "buffer-head-kmem",
        since: KernelEra::new(4, 19),
        version: "4.19",
        commit: "fs, mm: account buffer_head to kmemcg",
    },
    Rule {
        feature: "memcg-v1-dirty-throttle",
        since: KernelEra::new(6, 1),
        version: "6.1",
        commit: "mm/cgroup/reclaim: fix dirty pages throttling on cgroup v1",
    },
    Rule {
        feature: "reclaim-throttle",
        since: KernelEra::new(5, 16),
        version: "5.16",
        commit: "mm/vmscan: throttle reclaim until some writeback completes if congested",
    },
    Rule {
        feature: "memcg-sync-high",
        since: KernelEra::new(5, 18),
        version: "5.18",
        commit: "memcg: synchronously enforce memory.high for large overcharges",
    },
    Rule {
        feature: "mlock-count",
        since: KernelEra::new(5, 18),
        version: "5.18",
        commit: "mm/munlock: maintain page->mlock_count while unevictable",
    },
    Rule {
        feature: "read-accessed-folio",
        since: KernelEra::new(5, 19),
        version: "5.19",
        commit: "filemap: Correct the conditions for marking a folio as accessed",
    },
    Rule {
        feature: "memcg-charge-batch-64",
        since: KernelEra::new(6, 0),
        version: "6.0",
        commit: "memcg: increase MEMCG_CHARGE_BATCH to 64",
    },
    Rule {
        feature: "min-free-kbytes-256m",
        since: KernelEra::new(5, 7),
        version: "5.7",
        commit: "mm/page_alloc: increase default min_free_kbytes bound",
    },
    Rule {
        feature: "madvise-cold-pageout",
        since: KernelEra::new(5, 4),
        version: "5.4",
        commit: "mm: introduce MADV_COLD",
    },
    Rule {
        feature: "ttu-ignore-access",
        since: KernelEra::new(5, 11),
        version: "5.11",
        commit: "mm/rmap: always do TTU_IGNORE_ACCESS",
    },
    Rule {
        feature: "fadvise-local-drain",
        since: KernelEra::new(5, 7),
        version: "5.7",
        commit: "mm, fadvise: improve the expensive remote LRU cache draining after FADV_DONTNEED",
    },
    Rule {
        feature: "invalidate-skips-writeback",
        since: KernelEra::new(5, 12),
        version: "5.12",
        commit: "mm: add and use find_lock_entries",
    },
    Rule {
        feature: "fault-major-if-retried",
        since: KernelEra::new(5, 9),
        version: "5.9",
        commit: "mm: do page fault accounting in handle_mm_fault",
    },
    Rule {
        feature: "swap-cluster-lists",
        since: KernelEra::new(6, 17),
        version: "6.17",
        commit: "mm, swap: prefer nonfull over free clusters",
    },
    Rule {
        feature: "mm-cpumask-lazy",
        since: KernelEra::new(6, 13),
        version: "6.13",
        commit: "x86/mm/tlb: Update mm_cpumask lazily",
    },
    Rule {
        feature: "vma-has-recency",
        since: KernelEra::new(6, 3),
        version: "6.3",
        commit: "mm: add vma_has_recency()",
    },
    Rule {
        feature: "madvise-active-workingset",
        since: KernelEra::new(6, 6),
        version: "6.6",
        commit: "mm: madvise: fix uneven accounting of psi",
    },
    Rule {
        feature: "rwf-dontcache",
        since: KernelEra::new(6, 14),
        version: "6.14",
        commit: "mm/filemap: add read support for RWF_DONTCACHE",
    },
    Rule {
        feature: "mglru-memcg-lru",
        since: KernelEra::new(6, 3),
        version: "6.3",
        commit: "mm: multi-gen LRU: per-node lru_gen_folio lists",
    },
    Rule {
        feature: "mglru-refault-accounting",
        since: KernelEra::new(6, 5),
        version: "6.5",
        commit: "Multi-gen LRU: fix workingset accounting",
    },
    Rule {
        feature: "pageout-ignore-references",
        since: KernelEra::new(6, 10),
        version: "6.10",
        commit: "mm: madvise: pageout: ignore references rather than clearing young",
    },
    Rule {
        feature: "mglru-optimize-deactivation",
        since: KernelEra::new(6, 14),
        version: "6.14",
        commit: "mm/mglru: optimize deactivation",
    },
    Rule {
        feature: "mglru-workingset-rework",
        since: KernelEra::new(6, 14),
        version: "6.14",
        commit: "mm/mglru: rework workingset protection",
    },
    Rule {
        feature: "no-swap-slots-cache",
        since: KernelEra::new(6, 15),
        version: "6.15",
        commit: "mm, swap: remove swap slot cache",
    },
    Rule {
        feature: "no-reclaim-file-writeback",
        since: KernelEra::new(6, 16),
        version: "6.16",
        commit: "fs: Remove aops->writepage",
    },
    Rule {
        feature: "memcg-multi-stock",
        since: KernelEra::new(6, 16),
        version: "6.16",
        commit: "memcg: multi-memcg percpu charge cache",
    },
    Rule {
        feature: "lru-cost-rotations",
        since: KernelEra::new(6, 2),
        version: "6.2",
        commit: "mm: vmscan: make rotations a secondary factor in balancing anon vs file",
    },
    Rule {
        feature: "reclaim-state-root-only",
        since: KernelEra::new(6, 4),
        version: "6.4",
        commit: "mm: vmscan: ignore non-LRU-based reclaim in memcg reclaim",
    },
    Rule {
        feature: "pgdat-dirty-needs-dirty",
        since: KernelEra::new(6, 13),
        version: "6.13",
        commit: "mm: fix shrink nr.unqueued_dirty counter issue",
    },
    Rule {
        feature: "memcg-stats-ratelimited",
        since: KernelEra::new(6, 12),
        version: "6.12",
        commit: "memcg: use ratelimited stats flush in the reclaim",
    },
    Rule {
        feature: "memsw-failcnt-untracked",
        since: KernelEra::new(6, 15),
        version: "6.15",
        commit: "page_counter: track failcnt only for legacy cgroups",
    },
    Rule {
        feature: "proactive-reclaim-stats",
        since: KernelEra::new(6, 15),
        version: "6.15",
        commit: "mm: vmscan: split proactive reclaim statistics from direct reclaim statistics",
    },
    Rule {
        feature: "readahead-natural-boundary",
        since: KernelEra::new(6, 17),
        version: "6.17",
        commit: "mm/readahead: Terminate async readahead on natural boundary",
    },
    Rule {
        feature: "memory-reclaim-swappiness",
        since: KernelEra::new(6, 11),
        version: "6.11",
        commit: "mm: add swappiness= arg to memory.reclaim",
    },
    Rule {
        feature: "memory-reclaim-swappiness-max",
        since: KernelEra::new(6, 16),
        version: "6.16",
        commit: "mm: add swappiness=max arg to memory.reclaim for only anon reclaim",
    },
    Rule {
        feature: "zswap-memcg-lru",
        since: KernelEra::new(6, 8),
        version: "6.8",
        commit: "mm: zswap: make shrinking memcg-aware",
    },
    Rule {
        feature: "zswap-exclusive-loads",
        since: KernelEra::new(6, 9),
        version: "6.9",
        commit: "mm/zswap: only support zswap_exclusive_loads_enabled",
    },
    Rule {
        feature: "memcg-reclaim-batches",
        since: KernelEra::new(6, 9),
        version: "6.9",
        commit: "mm: memcg: use larger batches for proactive reclaim",
    },
    Rule {
        feature: "mmap-miss-workingset",
        since: KernelEra::new(6, 10),
        version: "6.10",
        commit: "mm/filemap: don't decrease mmap_miss when folio has workingset flag",
    },
    Rule {
        feature: "shrink-free-batch",
        since: KernelEra::new(6, 9),
        version: "6.9",
        commit: "mm: free folios in a batch in shrink_folio_list()",
    },
    Rule {
        feature: "kswapd-cache-trim-retry",
        since: KernelEra::new(6, 10),
        version: "6.10",
        commit: "mm, vmscan: retry kswapd's priority loop with cache_trim_mode off on failure",
    },
    Rule {
        feature: "sync-readahead-needed-page",
        since: KernelEra::new(6, 11),
        version: "6.11",
        commit: "readahead: make sure sync readahead reads needed page",
    },
    Rule {
        feature: "itable-readahead-nowait",
        since: KernelEra::new(6, 7),
        version: "6.7",
        commit: "ext4: use bdev_getblk() to avoid memory reclaim in readahead path",
    },
    Rule {
        feature: "folio-batch-31",
        since: KernelEra::new(6, 9),
        version: "6.9",
        commit: "mm: increase folio batch size",
    },
    Rule {
        feature: "pgfault-on-completion",
        since: KernelEra::new(6, 4),
        version: "6.4",
        commit: "mm: do not increment pgfault stats when page fault handler retries",
    },
    Rule {
        feature: "large-folios",
        since: KernelEra::new(6, 16),
        version: "6.16",
        commit: "ext4: enable large folio for regular file",
    },
    Rule {
        feature: "map-entire-folio",
        since: KernelEra::new(6, 18),
        version: "6.18",
        commit: "mm/filemap: map entire large folio faultaround",
    },
];

impl KernelEra {
    /// Parse a kernel version: `6.8`, `5.15.0`, `2.6.32`, or a release string as
    /// `uname -r` prints it (`6.8.0-45-generic`: the stable number and the suffix are
    /// ignored). The error says what was wrong and the range mmsim models.
    pub fn parse(s: &str) -> Result<KernelEra, String> {
        let t = s.trim();
        let range = format!(
            "mmsim models kernels {} to {} (the rules of each: docs/kernel-eras.md)",
            KernelEra::V2_6_30,
            KernelEra::V6_18
        );
        // The release's numbers, up to the first character that is neither a digit nor a dot.
        let head = t
            .split(|c: char| !(c.is_ascii_digit() || c == '.'))
            .next()
            .unwrap_or("");
        let nums: Result<Vec<u8>, _> = head
            .split('.')
            .filter(|p| !p.is_empty())
            .map(str::parse::<u8>)
            .collect();
        let nums = match nums {
            Ok(n) if n.len() >= 2 && !head.starts_with('.') && !head.contains("..") => n,
            _ => {
                return Err(format!(
                    "kernel version \"{s}\" is not a version like 6.8 or 2.6.32; {range}"
                ))
            }
        };
        let v = if nums[0] == 2 {
            if nums[1] != 6 || nums.len() < 3 {
                return Err(format!(
                    "kernel version \"{s}\": a 2.x kernel is named 2.6.N; {range}"
                ));
            }
            KernelEra::v2_6(nums[2])
        } else {
            KernelEra::new(nums[0], nums[1])
        };
        if v < KernelEra::V2_6_30 || v > KernelEra::V6_18 {
            return Err(format!(
                "kernel version \"{s}\" is outside what mmsim models: {range}"
            ));
        }
        if !KernelEra::releases().contains(&v) {
            return Err(format!(
                "kernel version \"{s}\" is not a Linux release (2.6.39, 3.19, 4.20 and 5.19 \
                 ended their series); {range}"
            ));
        }
        Ok(v)
    }

    /// Every mainline release from 2.6.30 to 6.18, oldest first.
    pub fn releases() -> Vec<KernelEra> {
        let mut v: Vec<KernelEra> = (30..=39).map(KernelEra::v2_6).collect();
        for &(major, last) in LAST_MINOR {
            v.extend((0..=last).map(|minor| KernelEra::new(major, minor)));
        }
        v.retain(|r| *r <= KernelEra::V6_18);
        v
    }

    /// Whether this era has a rule (a feature that is not an era rule: None).
    pub fn has(self, feature: &str) -> Option<bool> {
        RULES
            .iter()
            .find(|r| r.feature == feature)
            .map(|r| self >= r.since)
    }

    /// The era's features with the studied changes taken from `preset` (`vanilla` or
    /// `patched`); None for an unknown preset.
    pub fn features(self, preset: &str) -> Option<Features> {
        let mut f = Features::preset(preset)?;
        for r in RULES {
            f.set(r.feature, self >= r.since);
        }
        f.era = self;
        Some(f)
    }
}

impl serde::Serialize for KernelEra {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `2.6.30`, `6.8`: the release as the kernel names it.
impl std::fmt::Display for KernelEra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c] = self.v;
        if a == 2 {
            write!(f, "{a}.{b}.{c}")
        } else {
            write!(f, "{a}.{b}")
        }
    }
}

/// The features of a run: the era (`--kernel`, else the scenario's `kernel`, else 6.18),
/// the preset's studied changes, then the scenario's `[features]`, then `--features`
/// (`+name,-name`), each overriding the one before.
pub fn resolve_features(
    scenario_kernel: Option<KernelEra>,
    kernel_arg: Option<KernelEra>,
    preset: &str,
    scenario_features: &std::collections::BTreeMap<String, bool>,
    features_arg: Option<&str>,
) -> Result<Features, String> {
    let era = kernel_arg.or(scenario_kernel).unwrap_or(DEFAULT_ERA);
    let mut f = era
        .features(preset)
        .ok_or_else(|| format!("--preset: unknown preset `{preset}` (known: vanilla, patched)"))?;
    for (name, on) in scenario_features {
        f.set(name, *on);
    }
    if let Some(list) = features_arg {
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (on, name) = match item.as_bytes()[0] {
                b'+' => (true, &item[1..]),
                b'-' => (false, &item[1..]),
                _ => (true, item),
            };
            if !f.set(name, on) {
                return Err(format!(
                    "--features: unknown feature `{}` (known: {})",
                    name,
                    crate::scenario::KNOWN_FEATURES.join(", ")
                ));
            }
        }
    }
    f.era = era;
    f.check()?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_parse_and_print_round_trip() {
        for e in ERAS {
            assert_eq!(KernelEra::parse(&e.to_string()), Ok(*e));
        }
        assert_eq!(KernelEra::V2_6_30.to_string(), "2.6.30");
        assert_eq!(KernelEra::new(6, 8).to_string(), "6.8");
    }

    #[test]
    fn any_release_from_2_6_30_to_6_18_parses_as_uname_prints_it() {
        let ok = [
            ("6.8", KernelEra::new(6, 8)),
            (" 5.15 ", KernelEra::new(5, 15)),
            ("5.15.167", KernelEra::new(5, 15)),
            ("6.8.0-45-generic", KernelEra::new(6, 8)),
            ("6.12.0+", KernelEra::new(6, 12)),
            ("4.19.0_rc1", KernelEra::new(4, 19)),
            ("2.6.32", KernelEra::v2_6(32)),
            ("2.6.32-754.el6.x86_64", KernelEra::v2_6(32)),
            ("3.0", KernelEra::new(3, 0)),
            ("6.18", KernelEra::V6_18),
        ];
        for (s, want) in ok {
            assert_eq!(KernelEra::parse(s), Ok(want), "{s}");
        }
        for bad in [
            "2.6.29", "2.4.37", "2.6", "6.19", "7.0", "1.0", "6", "", "abc", ".6.8", "6..8",
            "999.1", "5.25", "3.20", "4.21", "2.6.40",
        ] {
            let err = KernelEra::parse(bad).unwrap_err();
            assert!(
                err.contains(&format!("\"{bad}\"")) && err.contains("2.6.30 to 6.18"),
                "{bad}: {err}"
            );
        }
    }

    #[test]
    fn the_releases_are_every_mainline_version_and_each_parses() {
        let all = KernelEra::releases();
        // 2.6.30–39, 3.0–19, 4.0–20, 5.0–19, 6.0–18.
        assert_eq!(all.len(), 10 + 20 + 21 + 20 + 19);
        assert!(all.windows(2).all(|w| w[0] < w[1]));
        for r in &all {
            assert_eq!(KernelEra::parse(&r.to_string()), Ok(*r));
        }
        for e in ERAS {
            assert!(all.contains(e), "{e}");
        }
    }

    #[test]
    fn a_release_between_named_eras_has_the_rules_that_came_by_then() {
        // 6.8: after 6.4's "do not increment pgfault stats when page fault handler
        // retries", before 6.9's "mm: increase folio batch size" and 6.16's large folios.
        let f = KernelEra::new(6, 8).features("vanilla").unwrap();
        assert!(f.get("pgfault-on-completion") == Some(true));
        assert!(f.get("folio-batch-31") == Some(false));
        assert!(f.get("large-folios") == Some(false));
        assert_eq!(f.era, KernelEra::new(6, 8));
        // 5.15 has 5.9's anon workingset and none of 6.1's MGLRU-era rules.
        let f = KernelEra::new(5, 15).features("vanilla").unwrap();
        assert!(f.anon_workingset);
        for r in RULES {
            assert_eq!(
                f.get(r.feature),
                Some(r.since <= KernelEra::new(5, 15)),
                "{}",
                r.feature
            );
        }
        // cgroup writeback came with 4.2 behind a development flag, on by default from 4.5.
        assert_eq!(KernelEra::new(4, 4).has("cgroup-writeback"), Some(false));
        assert_eq!(KernelEra::new(4, 5).has("cgroup-writeback"), Some(true));
    }

    #[test]
    fn each_named_era_has_the_rules_of_its_row() {
        // A rule's version falls after the named era before its row's and at most at it,
        // so a named era has exactly the rules of its row and of the rows before.
        for r in RULES {
            let row = r.since.named_era();
            let i = ERAS.iter().position(|e| *e == row).unwrap();
            assert!(r.since <= row, "{}", r.feature);
            if i > 0 {
                assert!(r.since > ERAS[i - 1], "{}", r.feature);
            }
            if r.feature != "cgroup-writeback" {
                assert_eq!(r.since.to_string(), r.version, "{}", r.feature);
            }
        }
    }

    #[test]
    fn an_era_has_exactly_the_rules_introduced_up_to_it() {
        let old = KernelEra::V2_6_30.features("vanilla").unwrap();
        assert!(!old.workingset && !old.file_only_when_plenty && !old.anon_workingset);
        let mid = KernelEra::V4_2.features("vanilla").unwrap();
        assert!(mid.workingset && mid.file_only_when_plenty && !mid.lru_size_inactive_ratio);
        let new = KernelEra::V6_18.features("patched").unwrap();
        for r in RULES {
            assert_eq!(new.get(r.feature), Some(true), "{}", r.feature);
        }
        assert!(new.exec_protect && new.batch_tlb_flush);
        let van = KernelEra::V6_18.features("vanilla").unwrap();
        assert!(!van.exec_protect && !van.accessed_init);
    }

    #[test]
    fn every_rule_is_a_known_feature_and_rules_are_in_order() {
        for w in RULES.windows(2) {
            assert!(
                w[0].since.named_era() <= w[1].since.named_era(),
                "{} before {}",
                w[0].feature,
                w[1].feature
            );
        }
        for r in RULES {
            assert!(
                crate::scenario::KNOWN_FEATURES.contains(&r.feature),
                "{}",
                r.feature
            );
        }
    }

    #[test]
    fn later_layers_override_earlier_ones() {
        let mut sc = std::collections::BTreeMap::new();
        sc.insert("workingset".to_string(), false);
        let f = resolve_features(Some(KernelEra::V4_2), None, "vanilla", &sc, None).unwrap();
        assert!(!f.workingset && f.file_only_when_plenty);
        assert_eq!(f.era, KernelEra::V4_2);
        let f = resolve_features(
            Some(KernelEra::V4_2),
            Some(KernelEra::V6_1),
            "vanilla",
            &sc,
            Some("+workingset,-anon-workingset"),
        )
        .unwrap();
        assert!(f.workingset && !f.anon_workingset && f.lru_cost_balance);
        assert_eq!(f.era, KernelEra::V6_1);
        assert!(resolve_features(None, None, "vanilla", &sc, Some("+nope")).is_err());
        assert!(resolve_features(None, None, "nope", &sc, None).is_err());
    }
}
