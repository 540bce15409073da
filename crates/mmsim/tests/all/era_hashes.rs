//! The seeds' built-ins keep their results on their own kernel eras: event hash, elapsed
//! time and pages scanned of every small built-in, both presets, as the code before kernel
//! eras and memory cgroups (commit 91541ac) produced them, re-blessed once for the
//! TLB-flush causality fix (a waiting IPI sender lets the other CPUs run up to the IPIs'
//! arrival first: the built-ins with remote TLB flushes moved — anon-pressure,
//! fileserver-hot10 vanilla, lru-file-mmap-read, desktop), and for desktop once more when
//! its 2.6.30 era lost v2.6.34's page_check_references (`mapped-used-once` off: a
//! referenced mapped page is activated at once, as 2.6.30 did), and for every built-in with
//! kswapd reclaim when kswapd's priority loop became each era's (`kswapd-flat-priority`: a
//! pass lowers the priority unless it scanned its target; 2.6.30's loop with its nap; before,
//! the priority fell only after a pass that reclaimed nothing), and again for kswapd's short
//! sleep (`kswapd-short-sleep`) and wakeup_kswapd waking kswapd only on kswapd_wait, and
//! for desktop when its 2.6.30 era lost fault-around (`fault-around`, v3.15: a read fault
//! maps only its own page), and for the 4.2 built-ins with file mappings when fault-around
//! became do_read_fault's first step (->map_pages before ->fault, each page mapped a
//! read-around hit; lru-file-mmap-read, fileserver-hot10 vanilla), and for desktop when its
//! 2.6.30 era lost v3.0's read-around marker (`mmap-readaround-marker`: 2.6.30's
//! read-around sets no PG_readahead, and only MADV_SEQUENTIAL mappings act on one), and
//! for the built-ins with mappings when page-table pages became frames allocated at the
//! fault (`__pte_alloc`; they were a counter) and fault-around stopped at the faulting
//! PTE table (anon-pressure, fileserver-hot10, lru-file-mmap-read, desktop), and when
//! munmap began to free the page tables it leaves under no VMA (the same four but
//! desktop, which never unmaps), and for every built-in with files when dentries and
//! inodes began to take slab memory (`mm::slab`: a scenario's files start on disk only, so
//! the first open reads the inode from the inode table; the shrinker and the objects' frames
//! move reclaim), and for anon-pressure when its 4.2 era's SSD swap began to give each CPU
//! a cluster of slots of its own (`swap-percpu-cluster`, v3.14: seq's direct reclaim on CPU
//! 0 and kswapd with rand on CPU 1 no longer interleave their slots), and for the built-ins
//! whose tasks unmap file pages (lru-file-mmap-read; fileserver-hot10's elapsed only) when
//! zap_pte_range began to pass a young PTE's reference on to its file page
//! (mark_page_accessed, as every era does unless the mapping is MADV_SEQUENTIAL), and for
//! the built-ins whose CPUs idle while other CPUs flush their mm's translations when an idle
//! CPU entered lazy TLB mode (enter_lazy_tlb: the first flush IPI makes it leave the mm, and
//! its task's return switches the mm in again with a full flush; anon-pressure,
//! lru-file-mmap-read vanilla, fileserver-hot10 vanilla, desktop), and for the built-ins
//! whose radix-tree leaves become shadow-only again after a page came back into them
//! (lru-file-mmap-read, bonnie, fileserver-hot10 vanilla) when the shadow-node lists'
//! counts became exact (a leaf is on its list once, list_lru_del when a page comes in or
//! it is freed; the shrinker's count and limit had counted every listing since the last
//! reclaim of the entry), and for the built-ins whose tasks open files not in the inode
//! cache (stream-read and lru-file-mmap-read: their elapsed, by a few ns; desktop) when an
//! inode-table miss began to read ahead the blocks of its group's readahead window
//! (ext4's inode_readahead_blks), and again (with hot-stream and fileserver-hot10) when
//! those blocks began to be created accessed, as the buffer cache creates its pages
//! (FGP_ACCESSED), so that their first lookup activates them, and for the built-ins that
//! write to a block filesystem (dd-blockfs, bonnie) when the 3.15 and 4.2 eras took 3.2's
//! IO-less balance_dirty_pages (`io-less-dirty-throttling`: a writer looks at the dirty
//! limits every `nr_dirtied_pause` pages, not at every page, so the flusher is woken at
//! other points), and for the built-ins that open files (their elapsed, by about 240 ps a
//! cold open; fileserver-hot10's hashes) when a cached inode-table block stopped being
//! read through the page-cache read path (a 4 KiB copy ext4_iget does not make: it is
//! found as __find_get_block finds it), and for every built-in with a block
//! filesystem when reads began to update access times (relatime: a file's first read
//! dirties its inode and its inode-table block, `fs/jbd2.rs`) and writes modification
//! times, and reclaim that meets only unqueued dirty pages began to kick a start-all
//! writeback (`vmscan-kick-flushers`, 4.11), and for the built-ins that open files not in
//! the inode cache (their elapsed, by 6 ns a cold open: two atomics; desktop's hashes) when
//! a task that waits for a metadata block's read began to hold a reference to its page
//! until its call returns (get_bh / brelse: reclaim cannot free it before the restarted
//! call uses it), and again (stream-read, hot-stream and lru-file-mmap-read vanilla,
//! desktop) when a metadata block the buffer cache creates began to be created as
//! __getblk_slow creates it (accessed, then found: active from 3.16 with `accessed-init`,
//! referenced before) and its waiting reader stopped copying it through the page-cache
//! read path, and again (the built-ins that open files not in the inode cache) when each
//! CPU's bh_lrus began to hold the last 16 metadata blocks it looked up (get_bh on the
//! install, brelse on the eviction; reclaim activates a block whose buffer is busy), and
//! for anon-pressure and bonnie when PG_readahead became PG_reclaim's bit, as in the
//! kernel (a swap-cache page under swap-out counts as a swap readahead hit when faulted,
//! and loses its mark; a written page keeps a readahead marker and rotates at its
//! writeback end), and for the built-ins that open files not in the inode cache (their
//! elapsed, by 14 to 265 ns) when each block __getblk_slow creates began to be looked up
//! right after its page is added, before the next block is created (before, a readahead's
//! blocks were all added and their read submitted first, so the lookups' time came after
//! the submission), and for the built-ins that write to a block filesystem (dd-blockfs,
//! bonnie) when the dirty limits took each era's form (`dirtyable-reserve`, 3.3: the zones'
//! reserve is not dirtyable; `dirty-ratio-page-units`, 4.2: the ratios in 1/4096 units;
//! and the `+ 1` of global_dirtyable_memory: thresholds about 1 % lower, so the flusher and
//! the throttle start earlier), and for the built-ins that truncate or unlink files (dd-tmpfs,
//! dd-blockfs: elapsed only; sparsetruncate, bonnie) when release_pages began to hold the
//! lru_lock across a run of pages as each era does (`release-pages-lock-batch`: once per
//! PAGEVEC_SIZE pages before 3.17, dropped every SWAP_CLUSTER_MAX pages from 3.17, one
//! folio_batch from 6.9; it was taken once per page), and for desktop when its 2.6.30 era
//! lost v3.0's batched activate_page (`activate-page-batch`: an activated page moves to the
//! active list at once, under its own lru_lock) and v3.11's activation of a page still in
//! the add pagevec (`lru-cache-activate`: such a page is left alone, referenced). A change
//! that moves one of these must say why in its commit and re-bless the table on purpose.

use crate::common;

use common::{load_builtin, run_sc};
use mmsim::kernel::resolve_features;

/// (built-in, preset, event hash, elapsed ns, pgscan_kswapd + pgscan_direct).
const GOLDEN: &[(&str, &str, &str, u64, i64)] = &[
    ("dd-tmpfs", "vanilla", "85cee5b357845385", 304064774, 0),
    ("dd-tmpfs", "patched", "85cee5b357845385", 301181179, 0),
    ("dd-blockfs", "vanilla", "b80ee61a8647fcc5", 319133833, 0),
    ("dd-blockfs", "patched", "b80ee61a8647fcc5", 316250226, 0),
    (
        "stream-read",
        "vanilla",
        "3a0d903421089ac4",
        3436106167,
        1836384,
    ),
    (
        "stream-read",
        "patched",
        "bd90c17dabfa7a84",
        3436106182,
        1836384,
    ),
    (
        "hot-stream",
        "vanilla",
        "1d41c6db23132180",
        1524780528,
        538539,
    ),
    (
        "hot-stream",
        "patched",
        "45b83e72e7b1c8a0",
        1524765528,
        538531,
    ),
    (
        "anon-pressure",
        "vanilla",
        "315a8673f4d80e7a",
        6572481573,
        4316657,
    ),
    (
        "anon-pressure",
        "patched",
        "315a8673f4d80e7a",
        6572481573,
        4316657,
    ),
    (
        "fileserver-hot10",
        "vanilla",
        "11588229609da547",
        12494027265,
        9492704,
    ),
    (
        "fileserver-hot10",
        "patched",
        "9e343d5f277a75cb",
        11981790405,
        9483152,
    ),
    (
        "sparsetruncate",
        "vanilla",
        "37345b01bd0d77a6",
        513080940,
        526880,
    ),
    (
        "sparsetruncate",
        "patched",
        "7eaa899ab4ada8e7",
        505748865,
        526880,
    ),
    (
        "bonnie",
        "vanilla",
        "edf3c543b0b180fa",
        10388277495,
        4707396,
    ),
    (
        "bonnie",
        "patched",
        "e5b4574d7a3256f7",
        10365236229,
        4707396,
    ),
    (
        "lru-file-mmap-read",
        "vanilla",
        "68dec4391b0c9ca3",
        371645083,
        1170371,
    ),
    (
        "lru-file-mmap-read",
        "patched",
        "48cde44b41e09b23",
        283602138,
        1172943,
    ),
    (
        "desktop",
        "vanilla",
        "ea082b48d9ca8dfc",
        20935046579,
        1303313,
    ),
    (
        "desktop",
        "patched",
        "61a99eff3ab872e6",
        19840402655,
        1178013,
    ),
];

#[test]
fn seed_builtins_keep_their_event_hashes_on_their_eras() {
    let mut failures = Vec::new();
    for &(name, preset, hash, elapsed_ns, scanned) in GOLDEN {
        let sc = load_builtin(name, &[]);
        assert!(sc.kernel.is_some(), "{name} pins a kernel era");
        let f = resolve_features(sc.kernel, None, preset, &sc.features, None).unwrap();
        let r = run_sc(&sc, f, false, u64::MAX);
        let got_scanned = r.vmstat["pgscan_kswapd"] + r.vmstat["pgscan_direct"];
        if r.event_hash != hash || r.elapsed_ns != elapsed_ns || got_scanned != scanned {
            failures.push(format!(
                "{name} {preset}: hash {} (want {hash}), elapsed {} (want {elapsed_ns}), scanned {got_scanned} (want {scanned})",
                r.event_hash, r.elapsed_ns
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
