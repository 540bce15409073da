//! The seeds' built-ins keep their results on their own kernel eras: event hash, elapsed
//! time and pages scanned of every small built-in, both presets, as the code before kernel
//! eras and memory cgroups (commit 91541ac) produced them, re-blessed once for the
//! TLB-flush causality fix (a waiting IPI sender lets the other CPUs run up to the IPIs'
//! arrival first: the built-ins with remote TLB flushes moved — anon-pressure,
//! fileserver-hot10 vanilla, lru-file-mmap-read, desktop), and for desktop once more when
//! its 2.6.30 era lost v2.6.34's page_check_references (`mapped-used-once` off: a
//! referenced mapped page is activated at once, as 2.6.30 did). A change that moves one of
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
        "9c7c4b2358bbaf46",
        3436085923,
        1836450,
    ),
    (
        "stream-read",
        "patched",
        "9c7c4b2358bbaf46",
        3436085923,
        1836450,
    ),
    (
        "hot-stream",
        "vanilla",
        "07cc0c8d67ac2323",
        1524764504,
        538425,
    ),
    (
        "hot-stream",
        "patched",
        "07cc0c8d67ac2323",
        1524764504,
        538425,
    ),
    (
        "anon-pressure",
        "vanilla",
        "33825583093e0519",
        6533899611,
        3580505,
    ),
    (
        "anon-pressure",
        "patched",
        "33825583093e0519",
        6533899611,
        3580505,
    ),
    (
        "fileserver-hot10",
        "vanilla",
        "b3a95ff769e2ec3b",
        12535856709,
        9492347,
    ),
    (
        "fileserver-hot10",
        "patched",
        "24b48a07ac2cf5a9",
        11983162092,
        9483017,
    ),
    (
        "sparsetruncate",
        "vanilla",
        "809c574507b44e64",
        520364424,
        526161,
    ),
    (
        "sparsetruncate",
        "patched",
        "809c574507b44e64",
        513042354,
        526161,
    ),
    (
        "bonnie",
        "vanilla",
        "55f2950b8830ea01",
        10412283319,
        4701735,
    ),
    (
        "bonnie",
        "patched",
        "df3d92b763169cd3",
        10389404968,
        4701735,
    ),
    (
        "lru-file-mmap-read",
        "vanilla",
        "b631d3ff5cfb46a5",
        490318857,
        1178159,
    ),
    (
        "lru-file-mmap-read",
        "patched",
        "51ab48dac9279445",
        223125343,
        1177289,
    ),
    (
        "desktop",
        "vanilla",
        "af09222180ab5a99",
        93779198501,
        3931943,
    ),
    (
        "desktop",
        "patched",
        "93efe0f836ec4c82",
        59615476163,
        2715173,
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
