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
//! desktop, which never unmaps). A
//! change that moves one of
//! these must say why in its commit and re-bless the table on purpose.

use crate::common;

use common::{load_builtin, run_sc};
use mmsim::kernel::resolve_features;

/// (built-in, preset, event hash, elapsed ns, pgscan_kswapd + pgscan_direct).
const GOLDEN: &[(&str, &str, &str, u64, i64)] = &[
    ("dd-tmpfs", "vanilla", "85cee5b357845385", 311367169, 0),
    ("dd-tmpfs", "patched", "85cee5b357845385", 308483574, 0),
    ("dd-blockfs", "vanilla", "d7eb233214510cc5", 326434869, 0),
    ("dd-blockfs", "patched", "d7eb233214510cc5", 323551274, 0),
    (
        "stream-read",
        "vanilla",
        "738f5ea1bbe63c47",
        3436085923,
        1836384,
    ),
    (
        "stream-read",
        "patched",
        "738f5ea1bbe63c47",
        3436085923,
        1836384,
    ),
    (
        "hot-stream",
        "vanilla",
        "f49b38ee305e6e61",
        1524764504,
        538313,
    ),
    (
        "hot-stream",
        "patched",
        "f49b38ee305e6e61",
        1524764504,
        538313,
    ),
    (
        "anon-pressure",
        "vanilla",
        "1794145b2db69307",
        5623641525,
        4511953,
    ),
    (
        "anon-pressure",
        "patched",
        "1794145b2db69307",
        5623641525,
        4511953,
    ),
    (
        "fileserver-hot10",
        "vanilla",
        "43ed4dcf975ec105",
        12517951031,
        9492563,
    ),
    (
        "fileserver-hot10",
        "patched",
        "ae8ebaa14b4be5e9",
        11983041499,
        9483136,
    ),
    (
        "sparsetruncate",
        "vanilla",
        "0d5b4b9946938de7",
        520332350,
        526581,
    ),
    (
        "sparsetruncate",
        "patched",
        "122fb7e3ea1968a7",
        513004445,
        526581,
    ),
    (
        "bonnie",
        "vanilla",
        "bbae75b0bfd3f9b6",
        10410103782,
        4704788,
    ),
    (
        "bonnie",
        "patched",
        "fd0a2cad1694d6ca",
        10387223166,
        4704788,
    ),
    (
        "lru-file-mmap-read",
        "vanilla",
        "db91d017bd040825",
        561836804,
        1187666,
    ),
    (
        "lru-file-mmap-read",
        "patched",
        "7432d67c233de326",
        280786919,
        1162587,
    ),
    (
        "desktop",
        "vanilla",
        "9591428c6150df21",
        20879549650,
        1302197,
    ),
    (
        "desktop",
        "patched",
        "b7e0a01e747a9408",
        19066729577,
        1165615,
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
