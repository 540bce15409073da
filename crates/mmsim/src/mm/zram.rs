//! zram as the swap device (drivers/block/zram/zram_drv.c over mm/zsmalloc.c): swap slots
//! stored compressed in RAM. `[swap] preset = "zram"` (`docs/scenarios.md`).
//!
//! - **Synchronous IO** (the device's SWP_SYNCHRONOUS_IO): a swap-out compresses the page
//!   on the CPU that reclaims it (`zram_write_page`, the algorithm's cost per page) and its
//!   writeback ends before `swap_writepage` returns (swap_writepage_bdev_sync, `rw_page`
//!   in older kernels), so shrink_folio_list frees the page in the same pass ("a
//!   synchronous write - probably a ramdisk"). A swap-in decompresses on the faulting CPU
//!   (`zram_read_page`) and never sleeps on IO. From 4.15 (`swap-sync-io-bypass`) a fault
//!   on a slot only its PTE refers to skips the swap cache and readahead: a new page, read
//!   at once, mapped, the slot freed (do_swap_page's `SWP_SYNCHRONOUS_IO &&
//!   __swap_count(entry) == 1` path).
//! - **Memory**: each stored page takes `PAGE_SIZE / compression_ratio` bytes of the
//!   zsmalloc pool, whose pages come from the page allocator — from the reclaiming context,
//!   allowed below the watermarks (PF_MEMALLOC) — and are neither on an LRU nor charged to
//!   a memory cgroup (zsmalloc's allocations are not __GFP_ACCOUNT): swapping to zram frees
//!   a page and takes back a fraction of one. The pool is the stored bytes rounded up to
//!   whole pages (zsmalloc's size classes, fragmentation and compaction are not modelled);
//!   a freed slot (swap_range_free's swap_slot_free_notify) gives its bytes back, and
//!   whole pages return to the allocator. A write that cannot get pool memory, or would
//!   pass `mem_limit`, fails (-ENOMEM): the page is redirtied and kept, as any failed
//!   swap-out (end_swap_bio_write).
//! - Not modelled: same-filled pages (ZRAM_SAME, stored without memory), incompressible
//!   pages (every page compresses by the one ratio), recompression, writeback to a backing
//!   device, zswap.

use serde::Serialize;

use crate::machine::profile::KFunc;
use crate::mm::page::{Pfn, PAGE_SIZE};
use crate::sim::Sim;

/// zram's compression algorithm (`comp_algorithm`): its cost per page (cost table
/// `zram_compress_ps` / `zram_decompress_ps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompAlgo {
    /// lzo-rle: CONFIG_ZRAM_DEF_COMP's default since 5.1 (lzo before).
    LzoRle,
    /// lzo: CONFIG_ZSWAP_COMPRESSOR_DEFAULT's default. lzo-rle only adds run-length
    /// coding of zero runs, which pages that are not zeros do not use: the same costs.
    Lzo,
    /// lz4.
    Lz4,
    /// zstd.
    Zstd,
}

impl CompAlgo {
    /// Every algorithm with its sysfs name.
    pub const ALL: &'static [(&'static str, CompAlgo)] = &[
        ("lzo-rle", CompAlgo::LzoRle),
        ("lzo", CompAlgo::Lzo),
        ("lz4", CompAlgo::Lz4),
        ("zstd", CompAlgo::Zstd),
    ];

    /// Index into the cost table's per-algorithm arrays.
    pub fn index(self) -> usize {
        match self {
            CompAlgo::LzoRle | CompAlgo::Lzo => 0,
            CompAlgo::Lz4 => 1,
            CompAlgo::Zstd => 2,
        }
    }

    /// The sysfs name.
    pub fn name(self) -> &'static str {
        CompAlgo::ALL
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("?", |(n, _)| n)
    }
}

/// The scenario's zram device (`[swap] preset = "zram"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ZramSpec {
    /// comp_algorithm.
    pub algorithm: CompAlgo,
    /// Bytes a stored page takes in the pool: PAGE_SIZE / compression_ratio, rounded.
    pub obj_bytes: u64,
    /// The compression ratio as given, per mille (for the report).
    pub ratio_milli: u64,
    /// mem_limit in bytes (0: none).
    pub mem_limit_bytes: u64,
}

impl ZramSpec {
    /// A device compressing by `ratio` (≥ 1) with `algorithm`, `mem_limit_bytes` (0: none).
    pub fn new(algorithm: CompAlgo, ratio: f64, mem_limit_bytes: u64) -> ZramSpec {
        ZramSpec {
            algorithm,
            obj_bytes: ((PAGE_SIZE as f64 / ratio).round() as u64).clamp(1, PAGE_SIZE),
            ratio_milli: (ratio * 1000.0).round() as u64,
            mem_limit_bytes,
        }
    }
}

/// A zram device's state: which slots hold a compressed page, and the pool's pages.
#[derive(Clone, Debug)]
pub struct Zram {
    /// The configuration.
    pub spec: ZramSpec,
    /// Per swap slot: a compressed page is stored there.
    pub stored: Vec<bool>,
    /// Pages stored (mm_stat's orig_data_size / PAGE_SIZE).
    pub nr_stored: u64,
    /// The zsmalloc pool's pages (mm_stat's mem_used_total / PAGE_SIZE).
    pub pool: Vec<Pfn>,
    /// The most pool pages held at once (mem_used_max).
    pub pool_max: u64,
    /// Writes that failed for want of pool memory or past mem_limit (failed_writes).
    pub failed_writes: u64,
    /// Pages written (num_writes) and read (num_reads).
    pub num_writes: u64,
    /// Pages read.
    pub num_reads: u64,
}

impl Zram {
    /// A device of `slots` swap slots.
    pub fn new(spec: ZramSpec, slots: u64) -> Zram {
        Zram {
            spec,
            stored: vec![false; slots as usize],
            nr_stored: 0,
            pool: Vec::new(),
            pool_max: 0,
            failed_writes: 0,
            num_writes: 0,
            num_reads: 0,
        }
    }

    /// Pool pages that `nr` stored pages need.
    pub fn pool_pages_for(&self, nr: u64) -> u64 {
        (nr * self.spec.obj_bytes).div_ceil(PAGE_SIZE)
    }

    /// The report's view (the device's mm_stat and io_stat).
    pub fn stats(&self) -> ZramStats {
        ZramStats {
            comp_algorithm: self.spec.algorithm.name(),
            compression_ratio: self.spec.ratio_milli as f64 / 1000.0,
            orig_data_size: self.nr_stored * PAGE_SIZE,
            compr_data_size: self.nr_stored * self.spec.obj_bytes,
            mem_used_total: self.pool.len() as u64 * PAGE_SIZE,
            mem_limit: self.spec.mem_limit_bytes,
            mem_used_max: self.pool_max * PAGE_SIZE,
            failed_writes: self.failed_writes,
            num_reads: self.num_reads,
            num_writes: self.num_writes,
        }
    }
}

/// zram's statistics at the end of a run, bytes (/sys/block/zram0/mm_stat, io_stat, stat).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZramStats {
    /// The algorithm.
    pub comp_algorithm: &'static str,
    /// The configured ratio.
    pub compression_ratio: f64,
    /// Uncompressed size of the pages stored.
    pub orig_data_size: u64,
    /// Their compressed size.
    pub compr_data_size: u64,
    /// The pool's memory.
    pub mem_used_total: u64,
    /// mem_limit (0: none).
    pub mem_limit: u64,
    /// The pool's peak.
    pub mem_used_max: u64,
    /// Writes that failed (-ENOMEM).
    pub failed_writes: u64,
    /// Pages read.
    pub num_reads: u64,
    /// Pages written.
    pub num_writes: u64,
}

impl Sim {
    /// The zram device the swap area lives on, if it does.
    pub fn zram(&self) -> Option<&Zram> {
        self.swap.as_ref().and_then(|s| s.zram.as_ref())
    }

    fn zram_mut(&mut self) -> &mut Zram {
        self.swap
            .as_mut()
            .and_then(|s| s.zram.as_mut())
            .expect("a zram swap device")
    }

    /// zram_write_page for swap slot `off`: compress the page on this CPU and store it,
    /// replacing what the slot held; the pool grows by whole pages as it needs. False
    /// (-ENOMEM) when mem_limit would be passed or the allocator has no page even below
    /// the watermarks; the slot then holds nothing.
    pub fn zram_write_page(&mut self, off: u32) -> bool {
        let prev = self.enter(KFunc::ZramWritePage);
        let algo = self.zram_mut().spec.algorithm;
        self.charge(self.costs.zram_compress_ps[algo.index()]);
        self.zram_free_page(off);
        let z = self.zram_mut();
        let need = z.pool_pages_for(z.nr_stored + 1);
        let limit = z.spec.mem_limit_bytes / PAGE_SIZE;
        let mut ok = limit == 0 || need <= limit;
        while ok && (self.zram_mut().pool.len() as u64) < need {
            match self.alloc_page_memalloc() {
                Some(pfn) => self.zram_mut().pool.push(pfn),
                None => ok = false,
            }
        }
        let z = self.zram_mut();
        if ok {
            z.stored[off as usize] = true;
            z.nr_stored += 1;
            z.num_writes += 1;
            z.pool_max = z.pool_max.max(z.pool.len() as u64);
        } else {
            z.failed_writes += 1;
            self.zram_shrink_pool();
        }
        self.leave(prev);
        ok
    }

    /// zram_read_page: decompress a stored page into `pfn` on this CPU. For a refaulting
    /// workingset page it is a memory stall (swap_read_folio's psi_memstall_enter).
    pub fn zram_read_page(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::ZramReadPage);
        let algo = self.zram_mut().spec.algorithm;
        self.decompress_page(pfn, self.costs.zram_decompress_ps[algo.index()]);
        self.zram_mut().num_reads += 1;
        self.leave(prev);
    }

    /// zram_free_page (zram_slot_free_notify when the swap slot is freed, or a rewrite of
    /// the slot): the slot's compressed page leaves the pool; whole pool pages no longer
    /// needed go back to the allocator.
    pub fn zram_free_page(&mut self, off: u32) {
        let Some(z) = self.swap.as_mut().and_then(|s| s.zram.as_mut()) else {
            return;
        };
        if !std::mem::take(&mut z.stored[off as usize]) {
            return;
        }
        z.nr_stored -= 1;
        self.zram_shrink_pool();
    }

    /// Give back the pool pages the stored pages do not need.
    fn zram_shrink_pool(&mut self) {
        loop {
            let z = self.zram_mut();
            if z.pool.len() as u64 <= z.pool_pages_for(z.nr_stored) {
                break;
            }
            let pfn = z.pool.pop().expect("a pool page");
            self.put_page(pfn);
        }
    }
}

/// The zram invariants (`mm::check`): the stored count is the slots marked stored, each
/// of them in use by the swap area; the pool is exactly the pages the stored bytes need,
/// within mem_limit, each an allocated page of its own on no LRU.
pub fn check_zram(sim: &Sim) -> Result<(), String> {
    let Some(sw) = sim.swap.as_ref() else {
        return Ok(());
    };
    let Some(z) = sw.zram.as_ref() else {
        return Ok(());
    };
    let mut stored = 0u64;
    for (off, _) in z.stored.iter().enumerate().filter(|(_, s)| **s) {
        stored += 1;
        if sw.is_free(off as u32) {
            return Err(format!(
                "zram holds data for swap slot {off}, which is free"
            ));
        }
    }
    if stored != z.nr_stored {
        return Err(format!(
            "zram counts {} stored pages but {stored} slots hold data",
            z.nr_stored
        ));
    }
    let need = z.pool_pages_for(z.nr_stored);
    if z.pool.len() as u64 != need {
        return Err(format!(
            "zram's pool has {} pages but {} stored pages need {need}",
            z.pool.len(),
            z.nr_stored
        ));
    }
    let limit = z.spec.mem_limit_bytes / PAGE_SIZE;
    if limit > 0 && need > limit {
        return Err(format!(
            "zram's pool of {need} pages is past mem_limit ({limit})"
        ));
    }
    check_pool(sim, "zram", &z.pool)
}

/// A compressed pool's pages (zram's, zswap's): each an allocated page of its own, once,
/// on no LRU.
pub(crate) fn check_pool(sim: &Sim, name: &str, pool: &[Pfn]) -> Result<(), String> {
    use crate::mm::page::pg;
    let mut seen = std::collections::HashSet::new();
    for &pfn in pool {
        let p = &sim.mem[pfn as usize];
        if !seen.insert(pfn) || p.refcount != 1 || p.test(pg::BUDDY) || p.test(pg::LRU) {
            return Err(format!(
                "{name} pool page {pfn} is not an allocated page of its own (refcount {}, \
                 flags {})",
                p.refcount,
                p.flag_names()
            ));
        }
    }
    Ok(())
}
