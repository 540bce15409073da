//! The page allocator (mm/page_alloc.c): order-0 allocation and freeing on per-node free
//! lists, free-page counters, and zone watermarks derived from min_free_kbytes.
//!
//! Modelled: node fallback order (local node first, then by distance), the watermark checks
//! of the fast and slow paths, pgalloc/pgfree. Not modelled: buddy orders above 0 (every
//! allocation here is order 0), per-CPU page lists as separate caches (their cost is folded
//! into `page_alloc_ps` / `page_free_ps`), compaction.

use crate::machine::profile::KFunc;
use crate::mm::node::Watermarks;
use crate::mm::page::{pg, Pfn, NO_MAPPING};
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// Allocation context flags (a subset of gfp_t).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gfp {
    /// __GFP_FS: may call into the filesystem during reclaim.
    pub fs: bool,
    /// __GFP_IO: may start IO during reclaim.
    pub io: bool,
    /// __GFP_WRITE: the page will be dirtied (dirty-aware placement).
    pub write: bool,
    /// __GFP_NORETRY: fail rather than try hard (readahead).
    pub noretry: bool,
}

impl Gfp {
    /// GFP_KERNEL.
    pub const KERNEL: Gfp = Gfp {
        fs: true,
        io: true,
        write: false,
        noretry: false,
    };
    /// GFP_NOFS.
    pub const NOFS: Gfp = Gfp {
        fs: false,
        io: true,
        write: false,
        noretry: false,
    };
}

/// int_sqrt.
pub fn int_sqrt(x: u64) -> u64 {
    (x as f64).sqrt() as u64 // exact for the magnitudes used (< 2^52)
}

impl Sim {
    /// Link every frame into its node's free list and set the watermarks (boot).
    pub fn init_page_alloc(&mut self) {
        for n in 0..self.nodes.len() {
            let start = self.nodes[n].start_pfn;
            let nr = self.nodes[n].present_pages;
            let mut list = std::mem::take(&mut self.nodes[n].free_list);
            for pfn in start..start + nr {
                list.add_tail(&mut self.mem, pfn);
            }
            self.nodes[n].free_list = list;
        }
        self.setup_per_zone_wmarks();
    }

    /// setup_per_zone_wmarks: min_free_kbytes = sqrt(16 × lowmem kB) clamped to
    /// [128, 65536], split across zones by size; low = min × 5/4, high = min × 3/2 (v4.2).
    pub fn setup_per_zone_wmarks(&mut self) {
        let total_pages: u64 = self.nodes.iter().map(|n| u64::from(n.present_pages)).sum();
        let lowmem_kb = total_pages * 4;
        let min_free_kbytes = int_sqrt(lowmem_kb * 16).clamp(128, 65536);
        let min_pages_total = min_free_kbytes / 4;
        for n in &mut self.nodes {
            let min = min_pages_total * u64::from(n.present_pages) / total_pages.max(1);
            n.watermark = Watermarks {
                min,
                low: min + min / 4,
                high: min + min / 2,
            };
        }
    }

    /// Free pages on node `n`.
    pub fn node_free_pages(&self, n: usize) -> u64 {
        self.nodes[n].free_list.len
    }

    /// zone_watermark_ok for order 0.
    pub fn zone_watermark_ok(&self, n: usize, mark: u64) -> bool {
        self.node_free_pages(n) > mark
    }

    /// Nodes in fallback order from the running CPU's node (the zonelist).
    fn zonelist(&self) -> impl Iterator<Item = usize> + '_ {
        let local = self.cur_node();
        let nr = self.nodes.len();
        let mut order: Vec<usize> = (0..nr).collect();
        order.sort_by_key(|n| (n.abs_diff(local), *n));
        order.into_iter()
    }

    /// __alloc_pages_nodemask for one page: the fast path at the low watermark, then the
    /// slow path at the min watermark. Returns None when memory is exhausted (reclaim is not
    /// part of this layer yet: the slow path would wake kswapd and reclaim directly here).
    pub fn alloc_page(&mut self, gfp: Gfp) -> Option<Pfn> {
        let _ = gfp;
        let prev = self.enter(KFunc::AllocPages);
        let zl: Vec<usize> = self.zonelist().collect();
        let mut got = None;
        // Fast path: first zone above its low watermark.
        for &n in &zl {
            if self.zone_watermark_ok(n, self.nodes[n].watermark.low) {
                got = self.rmqueue(n);
                break;
            }
        }
        // Slow path: down to the min watermark, then anything left (ALLOC_HARDER-like
        // behaviour stands in for reclaim until reclaim exists).
        if got.is_none() {
            for &n in &zl {
                if self.node_free_pages(n) > 0 {
                    got = self.rmqueue(n);
                    break;
                }
            }
        }
        self.leave(prev);
        got
    }

    /// Take one page off node `n`'s free list and initialise it (prep_new_page).
    fn rmqueue(&mut self, n: usize) -> Option<Pfn> {
        let pfn = self.nodes[n].free_list.pop_head(&mut self.mem)?;
        self.charge(self.costs.page_alloc_ps);
        let p = &mut self.mem[pfn as usize];
        debug_assert!(p.test(pg::BUDDY), "allocating a page that is not free");
        p.flags = 0;
        p.refcount = 1;
        p.mapcount = -1;
        p.mapping = NO_MAPPING;
        p.index = 0;
        self.vmstat.dec(VmItem::NrFreePages);
        self.vmstat.inc(VmItem::PgallocNormal);
        Some(pfn)
    }

    /// free_hot_cold_page: return a page whose last reference is gone to its node's free list.
    pub fn free_hot_cold_page(&mut self, pfn: Pfn) {
        let prev = self.enter(KFunc::FreeHotColdPage);
        self.charge(self.costs.page_free_ps);
        let node = self.mem[pfn as usize].node as usize;
        {
            let p = &mut self.mem[pfn as usize];
            assert!(
                p.refcount == 0 && !p.test(pg::LRU) && p.mapping == NO_MAPPING && !p.mapped(),
                "freeing a busy page pfn={} flags={} count={} mapping={}",
                pfn,
                p.flag_names(),
                p.refcount,
                p.mapping
            );
            p.flags = pg::BUDDY;
            p.version = 0;
        }
        self.nodes[node].free_list.add_head(&mut self.mem, pfn);
        self.vmstat.inc(VmItem::NrFreePages);
        self.vmstat.inc(VmItem::Pgfree);
        self.leave(prev);
    }

    /// put_page: drop a reference; the last one takes the page off the LRU and frees it
    /// (__page_cache_release).
    pub fn put_page(&mut self, pfn: Pfn) {
        self.charge_atomic();
        let p = &mut self.mem[pfn as usize];
        p.refcount -= 1;
        assert!(p.refcount >= 0, "put_page underflow pfn={}", pfn);
        if p.refcount == 0 {
            if p.test(pg::LRU) {
                self.del_page_from_lru_locked(pfn);
            }
            self.free_hot_cold_page(pfn);
        }
    }
}
