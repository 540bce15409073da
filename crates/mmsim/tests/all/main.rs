//! The integration tests, one module per area (see the README's "Tests"), compiled into
//! one test binary: one link of the simulator instead of one per file, which is most of a
//! first `cargo test`'s build time. Select an area by its module path, e.g.
//! `cargo test --profile ci --test all -- era_hashes::` or `mglru::refault`.

#[path = "../common/mod.rs"]
mod common;

mod accounting;
mod atime_journal;
mod cli;
mod compare_cli;
mod dd;
mod determinism;
mod device_queue;
mod dirty_throttle;
mod dontcache;
mod era_hashes;
mod fadvise;
mod fault_accounting;
mod fork;
mod fuzz_parser;
mod html_report;
mod large_folios;
mod madvise;
mod memcg;
mod memcg_stats;
mod memcg_v1;
mod mglru;
mod mlock;
mod mm_unit;
mod oom;
mod perf_gate;
#[path = "../perf_shapes/mod.rs"]
mod perf_shapes;
mod radix_tree_prop;
mod reclaim;
mod reliability;
mod replay;
mod reproduce;
mod scenario_errors;
mod scenario_mutation;
mod shmem_swap;
mod swap_cluster;
mod swap_errors;
mod swap_readahead;
mod swap_slots;
mod threads;
mod tlb_eras;
mod tracepoints;
mod truncate;
mod vfs_caches;
mod vm;
mod vm_prop;
mod vm_sysctl;
mod zram;
mod zswap;
