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
//! the priority fell only after a pass that reclaimed nothing). A change that moves one of
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
        "6ac74c5f5760b9c6",
        3436085923,
        1836384,
    ),
    (
        "stream-read",
        "patched",
        "6ac74c5f5760b9c6",
        3436085923,
        1836384,
    ),
    (
        "hot-stream",
        "vanilla",
        "29cefa2bdc928120",
        1524764504,
        538313,
    ),
    (
        "hot-stream",
        "patched",
        "29cefa2bdc928120",
        1524764504,
        538313,
    ),
    (
        "anon-pressure",
        "vanilla",
        "a5b57cfb71feb480",
        5908597466,
        3371165,
    ),
    (
        "anon-pressure",
        "patched",
        "a5b57cfb71feb480",
        5908597466,
        3371165,
    ),
    (
        "fileserver-hot10",
        "vanilla",
        "fa7f6b3d28931089",
        12517889437,
        9492475,
    ),
    (
        "fileserver-hot10",
        "patched",
        "315654b0e8187529",
        11982785253,
        9483433,
    ),
    (
        "sparsetruncate",
        "vanilla",
        "c730d15a0d6e1327",
        520332350,
        526581,
    ),
    (
        "sparsetruncate",
        "patched",
        "c730d15a0d6e1327",
        513004445,
        526581,
    ),
    (
        "bonnie",
        "vanilla",
        "0d76b82a7243f08c",
        10410103782,
        4704788,
    ),
    (
        "bonnie",
        "patched",
        "c15886a79466df90",
        10387223166,
        4704788,
    ),
    (
        "lru-file-mmap-read",
        "vanilla",
        "2f516e751ec06ca4",
        580307336,
        1175424,
    ),
    (
        "lru-file-mmap-read",
        "patched",
        "a4a75e0ca27f4d66",
        282066521,
        1175139,
    ),
    (
        "desktop",
        "vanilla",
        "3fce62ace4aea340",
        63894319073,
        2814157,
    ),
    (
        "desktop",
        "patched",
        "b59fc3bfae9a4caf",
        73271986335,
        3082524,
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
