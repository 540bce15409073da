//! The cost table: what each hardware or kernel primitive costs the virtual CPU that runs it.
//!
//! Every figure is in picoseconds so that sub-nanosecond primitives (a plain read-modify-write
//! of a cached word) are not rounded away. The `default` profile represents a single-socket
//! Intel Haswell/Skylake-class server of the seeds' era (2014–2017); each value cites the range
//! such parts typically measure (`docs/costs.md`) and says which point of it we chose. A result in
//! mmsim is always "under cost profile X".

use serde::Serialize;

/// Block-device timing: per-request latency plus transfer time at a bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct DeviceTiming {
    /// Time from submission to the start of the transfer (seek + controller), ps.
    pub latency_ps: u64,
    /// Sustained transfer rate, bytes per second.
    pub bandwidth_bytes_per_s: u64,
}

impl DeviceTiming {
    /// HDD (7200 rpm): 8 ms per random IO, 150 MB/s sequential.
    pub const HDD: DeviceTiming = DeviceTiming {
        latency_ps: 8_000_000_000,
        bandwidth_bytes_per_s: 150_000_000,
    };
    /// SATA SSD: 80 µs, 500 MB/s.
    pub const SSD: DeviceTiming = DeviceTiming {
        latency_ps: 80_000_000,
        bandwidth_bytes_per_s: 500_000_000,
    };
    /// NVMe SSD of 2015: 15 µs, 2.5 GB/s.
    pub const NVME: DeviceTiming = DeviceTiming {
        latency_ps: 15_000_000,
        bandwidth_bytes_per_s: 2_500_000_000,
    };

    /// Transfer time of `bytes` at this device's bandwidth, ps.
    pub fn transfer_ps(&self, bytes: u64) -> u64 {
        // bytes / (B/s) seconds = bytes * 1e12 / bw ps; u128 avoids overflow.
        ((bytes as u128 * 1_000_000_000_000u128) / self.bandwidth_bytes_per_s.max(1) as u128) as u64
    }
}

/// Costs of primitives, in picoseconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CostTable {
    /// Name of the profile ("default").
    pub name: String,
    /// Entry into a non-inlined kernel function (call, prologue, return): ~1 ns.
    pub call_ps: u64,
    /// Plain read-modify-write of a cached word (`__SetPageReferenced`): 0.3–1 ns, we take 0.5 ns.
    pub plain_rmw_ps: u64,
    /// Lock-prefixed RMW on a line in the own cache (`SetPageReferenced`, refcounts): 5–8 ns, we take 6 ns.
    pub atomic_rmw_ps: u64,
    /// Store-buffer drain: a lock-prefixed instruction cannot complete before every older
    /// store has left the store buffer. Right after a page copy or zero the buffer holds the
    /// last ~50 line-sized stores still waiting for their RFOs; draining them costs ~40 ns,
    /// paid by the first atomic that follows (x86 locked-instruction ordering).
    pub store_buffer_drain_ps: u64,
    /// Cache-line transfer from another core of the same node: 40–100 ns, we take 60 ns.
    pub cacheline_same_node_ps: u64,
    /// Cache-line transfer from another node, per hop: 100–250 ns, we take 150 ns.
    pub cacheline_other_node_ps: u64,
    /// spin_lock + spin_unlock uncontended, line local: 10–20 ns, we take 15 ns.
    pub spin_lock_ps: u64,
    /// Hand-off of a contended lock between cores: 50–200 ns, we take 100 ns (plus the wait).
    pub lock_handoff_ps: u64,
    /// Syscall entry + exit without KPTI (the seeds' era): 50–100 ns, we take 70 ns.
    pub syscall_ps: u64,
    /// Page-fault exception entry + exit: 0.5–1 µs, we take 700 ns.
    pub fault_entry_ps: u64,
    /// A memory access that hits the TLB and the cache: 1 ns.
    pub mem_access_ps: u64,
    /// TLB miss with page tables in cache: ~10 ns.
    pub tlb_walk_ps: u64,
    /// INVLPG of one entry: ~50 ns.
    pub invlpg_ps: u64,
    /// Full local TLB flush (CR3 reload, no PCID): 100–200 cycles, we take 60 ns.
    pub tlb_flush_all_ps: u64,
    /// An idle period at least this long puts the CPU in a C-state that flushes its TLB
    /// (CPUIDLE_FLAG_TLB_FLUSHED): intel_idle's Haswell table, whose first such state is C3
    /// with a target residency of 100 µs (the menu governor picks the deepest state whose
    /// residency the idle period covers; here the actual period, a perfect prediction).
    pub deep_idle_tlb_flush_ps: u64,
    /// IPI send (x2APIC ICR write) per target: 0.1–0.5 µs, we take 200 ns.
    pub ipi_send_ps: u64,
    /// IPI delivery latency from send to the target's entry: ~500 ns.
    pub ipi_latency_ps: u64,
    /// IPI receive on the target: entry + handler + exit: 1–2 µs, we take 1.2 µs.
    pub ipi_receive_ps: u64,
    /// Copy of a 4 KiB page: 100–300 ns, we take 200 ns (~20 GB/s).
    pub page_copy_ps: u64,
    /// Zeroing of a 4 KiB page: 60–200 ns, we take 120 ns.
    pub page_zero_ps: u64,
    /// Descending one radix-tree level (one cache-line read, usually cached): 2 ns.
    pub radix_level_ps: u64,
    /// Order-0 allocation from the per-CPU lists (get_page_from_freelist fast path): ~40 ns.
    pub page_alloc_ps: u64,
    /// Order-0 free to the per-CPU lists (free_hot_cold_page): ~30 ns.
    pub page_free_ps: u64,
    /// A doubly linked list insertion or removal (struct page lru links): ~3 ns.
    pub list_op_ps: u64,
    /// Submitting a block request (bio build + queue), CPU side: ~1 µs.
    pub bio_submit_ps: u64,
    /// Completing a block request per page in the IRQ / end_io path: ~100 ns.
    pub bio_complete_page_ps: u64,
    /// Context switch (schedule() to another task): ~2 µs.
    pub context_switch_ps: u64,
    /// One directory operation (lookup / create / remove of an entry in the dentry and inode caches): ~1 µs.
    pub dir_op_ps: u64,
    /// Inode allocation or final free (new_inode / evict): ~1 µs.
    pub inode_op_ps: u64,
    /// fork's copy_process without the address space (task struct, credentials, signal
    /// and file tables, sched_fork): ~30 µs.
    pub fork_ps: u64,
    /// zram's compression of one 4 KiB page on the CPU that writes it, per algorithm
    /// (`mm::zram::CompAlgo`): lzo-rle, lz4, zstd. 4096 bytes at lzbench's single-thread
    /// compression speed on the Silesia corpus (lzo1x-1 ~700 MB/s, lz4 ~750 MB/s, zstd -1
    /// ~500 MB/s on a 2017 desktop core): ~5.9, 5.5 and 8.2 µs.
    pub zram_compress_ps: [u64; 3],
    /// zram's decompression of one page on the faulting CPU, same order (lzo ~1,000 MB/s,
    /// lz4 ~4,500 MB/s, zstd ~1,400 MB/s): ~4.1, 0.9 and 2.9 µs.
    pub zram_decompress_ps: [u64; 3],
    /// Preset block-device timings.
    pub hdd: DeviceTiming,
    /// SATA SSD timing.
    pub ssd: DeviceTiming,
    /// NVMe timing.
    pub nvme: DeviceTiming,
}

impl CostTable {
    /// The `default` profile (Haswell/Skylake-class server).
    pub fn default_profile() -> CostTable {
        CostTable {
            name: "default".to_string(),
            call_ps: 1_000,
            plain_rmw_ps: 500,
            atomic_rmw_ps: 6_000,
            store_buffer_drain_ps: 40_000,
            cacheline_same_node_ps: 60_000,
            cacheline_other_node_ps: 150_000,
            spin_lock_ps: 15_000,
            lock_handoff_ps: 100_000,
            syscall_ps: 70_000,
            fault_entry_ps: 700_000,
            mem_access_ps: 1_000,
            tlb_walk_ps: 10_000,
            invlpg_ps: 50_000,
            tlb_flush_all_ps: 60_000,
            deep_idle_tlb_flush_ps: 100_000_000,
            ipi_send_ps: 200_000,
            ipi_latency_ps: 500_000,
            ipi_receive_ps: 1_200_000,
            page_copy_ps: 200_000,
            page_zero_ps: 120_000,
            radix_level_ps: 2_000,
            page_alloc_ps: 40_000,
            page_free_ps: 30_000,
            list_op_ps: 3_000,
            bio_submit_ps: 1_000_000,
            bio_complete_page_ps: 100_000,
            context_switch_ps: 2_000_000,
            dir_op_ps: 1_000_000,
            inode_op_ps: 1_000_000,
            fork_ps: 30_000_000,
            zram_compress_ps: [5_900_000, 5_500_000, 8_200_000],
            zram_decompress_ps: [4_100_000, 900_000, 2_900_000],
            hdd: DeviceTiming::HDD,
            ssd: DeviceTiming::SSD,
            nvme: DeviceTiming::NVME,
        }
    }

    /// Look a profile up by name; only `default` exists so far.
    pub fn by_name(name: &str) -> Option<CostTable> {
        match name {
            "default" => Some(Self::default_profile()),
            _ => None,
        }
    }

    /// Cost of moving a cache line between two nodes (0 hops = same node).
    pub fn cacheline_transfer_ps(&self, from_node: u32, to_node: u32) -> u64 {
        if from_node == to_node {
            self.cacheline_same_node_ps
        } else {
            self.cacheline_other_node_ps * u64::from(from_node.abs_diff(to_node))
        }
    }
}
