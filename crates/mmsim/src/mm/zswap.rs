//! zswap (mm/zswap.c): a compressed cache in RAM in front of the swap device.
//! `[swap.zswap]` (`docs/scenarios.md`); kernel 5.19 and later (the 6.1 and 6.18 eras).
//!
//! - **Store** (`zswap_store`, from swap_writepage): a page reclaim writes to its swap slot
//!   is compressed on the reclaiming CPU (the compressor's cost per page, the cost table's
//!   `zram_compress_ps`) into the zsmalloc pool and its "writeback" ends at once — no IO,
//!   no pswpout, `zswpout` — so reclaim frees the page in the same pass. Each stored page
//!   takes `PAGE_SIZE / compression_ratio` bytes; the pool is the stored bytes in whole
//!   pages from the page allocator, below the watermarks (the reclaimer's PF_MEMALLOC),
//!   on no LRU. The compressed bytes are charged to the page's memcg (memory.current,
//!   forced as in the kernel's PF_MEMALLOC charge; memory.stat `zswap`, `zswapped`). A
//!   store is rejected, and the page written to the device as without zswap, when the
//!   memcg or an ancestor is at memory.zswap.max (from 6.8, `zswap-memcg-lru`, after one
//!   writeback pass over that memcg's entries fails), when the pool is full
//!   (`max_pool_percent` of RAM; then until it is back under `accept_threshold_percent` of
//!   that, and the shrink worker is queued), or when the pool cannot grow. A rejected page
//!   of a memcg with memory.zswap.writeback = 0 stays dirty in memory (activated).
//! - **Load** (`zswap_load`, from swap_read_folio, also for readahead pages): a slot held
//!   by zswap is decompressed on the faulting CPU (a memory stall for a workingset page),
//!   `zswpin`, no IO and no pswpin. From 6.9 (`zswap-exclusive-loads`) the entry is then
//!   freed and the page dirtied; before, the entry stays until the slot is freed.
//! - **Writeback** (`zswap_writeback_entry`, by the shrink worker): a page is allocated
//!   into the swap cache for the slot, the entry decompressed into it and freed, and the
//!   page written to the device with PG_reclaim (`zswpwb`, pswpout). The shrink worker
//!   (`kworker/zswap-shrink`, woken when a store finds the pool full) writes back until
//!   the pool is under the accept threshold: from 6.8 a batch of up to 32 entries per node
//!   from each memcg in turn, each entry getting a second chance if stored since the last
//!   pass (its referenced bit); before, the oldest entry of one global LRU at a time.
//!   MAX_RECLAIM_RETRIES failures end a run.
//! - Not modelled: incompressible and same-filled pages (one ratio for every page),
//!   zsmalloc's size classes and compaction, the memory-pressure shrinker
//!   (`shrinker_enabled`, off by default), the objcg byte stock (the memcg is charged the
//!   stored bytes rounded up to pages, at once), large folios, zswap before 5.19
//!   (frontswap, zbud, no memcg accounting).

use serde::Serialize;

use crate::machine::profile::KFunc;
use crate::mm::memcontrol::{MemcgEvent, MemcgId, NO_MEMCG, PAGE_COUNTER_MAX, ROOT_MEM_CGROUP};
use crate::mm::page::{pg, Pfn, PAGE_SIZE};
use crate::mm::vmstat::VmItem;
use crate::mm::zram::CompAlgo;
use crate::sched::TaskId;
use crate::sim::Sim;

/// MAX_RECLAIM_RETRIES: failed attempts that end a run of the shrink worker.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// SWAP_CLUSTER_MAX: entries shrink_memcg walks per node of a memcg.
const SWAP_CLUSTER_MAX: u64 = 32;
const NIL: u32 = u32::MAX;

/// The scenario's zswap (`[swap.zswap]`): its module parameters and the data's ratio.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ZswapSpec {
    /// zswap.compressor.
    pub compressor: CompAlgo,
    /// Bytes a stored page takes in the pool: PAGE_SIZE / compression_ratio, rounded.
    pub obj_bytes: u64,
    /// The compression ratio as given, per mille (for the report).
    pub ratio_milli: u64,
    /// zswap.max_pool_percent: the pool's limit, in percent of RAM.
    pub max_pool_percent: u32,
    /// zswap.accept_threshold_percent: after the pool was full, stores are accepted again
    /// once it is under this share of the limit.
    pub accept_threshold_percent: u32,
}

impl ZswapSpec {
    /// zswap with `compressor`, data compressing by `ratio` (≥ 1), the two pool limits.
    pub fn new(compressor: CompAlgo, ratio: f64, max_pool: u32, accept: u32) -> ZswapSpec {
        ZswapSpec {
            compressor,
            obj_bytes: ((PAGE_SIZE as f64 / ratio).round() as u64).clamp(1, PAGE_SIZE),
            ratio_milli: (ratio * 1000.0).round() as u64,
            max_pool_percent: max_pool,
            accept_threshold_percent: accept,
        }
    }
}

/// struct zswap_entry: one compressed page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    /// The memcg its bytes are charged to (the root: none).
    memcg: MemcgId,
    /// The node of the page it was stored from (its list_lru node).
    node: u16,
    /// Stored since the shrinker last passed it (6.8's second chance).
    referenced: bool,
    /// Which store made it (writeback checks the slot still holds this one).
    seq: u32,
}

/// One LRU of entries, oldest first, linked through the per-slot `next`/`prev`.
#[derive(Clone, Copy, Debug)]
struct List {
    first: u32,
    last: u32,
    len: u64,
}

impl Default for List {
    fn default() -> List {
        List {
            first: NIL,
            last: NIL,
            len: 0,
        }
    }
}

/// zswap's debugfs counters (/sys/kernel/debug/zswap), and the memcg rejects.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ZswapCounters {
    /// pool_limit_hit: stores that found the pool at its limit.
    pub pool_limit_hit: u64,
    /// reject_reclaim_fail: writebacks that failed.
    pub reject_reclaim_fail: u64,
    /// reject_alloc_fail: stores the pool could not grow for.
    pub reject_alloc_fail: u64,
    /// Stores refused at a memcg's memory.zswap.max (the kernel counts them nowhere).
    pub reject_memcg_limit: u64,
    /// Stores refused while the pool was over the accept threshold after being full (the
    /// kernel counts only the store that hit the limit, in pool_limit_hit).
    pub reject_pool_full: u64,
    /// written_back_pages.
    pub written_back_pages: u64,
}

/// A run of the shrink worker in progress (shrink_worker's loop state).
#[derive(Clone, Copy, Debug, Default)]
struct ShrinkRun {
    failures: u32,
    attempts: u32,
}

/// zswap's state: the entries per swap slot, their LRUs, the pool and the shrink worker.
#[derive(Clone, Debug)]
pub struct Zswap {
    /// The configuration.
    pub spec: ZswapSpec,
    entries: Vec<Option<Entry>>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// One per memcg and node (`zswap-memcg-lru`), else one.
    lists: Vec<List>,
    nr_nodes: usize,
    memcg_lru: bool,
    /// Pages stored (stored_pages).
    pub nr_stored: u64,
    /// The zsmalloc pool's pages (pool_total_size / PAGE_SIZE).
    pub pool: Vec<Pfn>,
    /// The most pool pages held at once.
    pub pool_max: u64,
    /// zswap_pool_reached_full.
    pub reached_full: bool,
    /// Per memcg, its own entries' bytes (MEMCG_ZSWAP_B, not hierarchical).
    pub memcg_bytes: Vec<u64>,
    /// Per memcg, its own entries (MEMCG_ZSWAPPED).
    pub memcg_stored: Vec<u64>,
    /// Per memcg, the pages its own entries' bytes are charged as (memory.current).
    pub memcg_charged: Vec<u64>,
    seq: u32,
    /// The debugfs counters.
    pub counters: ZswapCounters,
    /// The shrink worker's task.
    pub worker: Option<TaskId>,
    work_pending: bool,
    run: Option<ShrinkRun>,
    /// zswap_next_shrink: the memcg the worker shrank last (None: a pass begins).
    next_shrink: Option<MemcgId>,
}

impl Zswap {
    /// zswap for a swap area of `slots`, `nr_memcgs` memcgs on `nr_nodes` nodes;
    /// `memcg_lru`: 6.8's per-memcg LRUs.
    pub fn new(
        spec: ZswapSpec,
        slots: u64,
        nr_memcgs: usize,
        nr_nodes: usize,
        memcg_lru: bool,
    ) -> Zswap {
        let nr_lists = if memcg_lru { nr_memcgs * nr_nodes } else { 1 };
        Zswap {
            spec,
            entries: vec![None; slots as usize],
            next: vec![NIL; slots as usize],
            prev: vec![NIL; slots as usize],
            lists: vec![List::default(); nr_lists],
            nr_nodes,
            memcg_lru,
            nr_stored: 0,
            pool: Vec::new(),
            pool_max: 0,
            reached_full: false,
            memcg_bytes: vec![0; nr_memcgs],
            memcg_stored: vec![0; nr_memcgs],
            memcg_charged: vec![0; nr_memcgs],
            seq: 0,
            counters: ZswapCounters::default(),
            worker: None,
            work_pending: false,
            run: None,
            next_shrink: None,
        }
    }

    /// Whether slot `off` holds a compressed page.
    pub fn has(&self, off: u32) -> bool {
        self.entries[off as usize].is_some()
    }

    /// Pool pages that `nr` stored pages need.
    pub fn pool_pages_for(&self, nr: u64) -> u64 {
        (nr * self.spec.obj_bytes).div_ceil(PAGE_SIZE)
    }

    fn list_of(&self, e: &Entry) -> usize {
        if self.memcg_lru {
            e.memcg as usize * self.nr_nodes + e.node as usize
        } else {
            0
        }
    }

    fn push_back(&mut self, l: usize, off: u32) {
        let last = self.lists[l].last;
        self.prev[off as usize] = last;
        self.next[off as usize] = NIL;
        if last == NIL {
            self.lists[l].first = off;
        } else {
            self.next[last as usize] = off;
        }
        self.lists[l].last = off;
        self.lists[l].len += 1;
    }

    fn unlink(&mut self, l: usize, off: u32) {
        let (p, n) = (self.prev[off as usize], self.next[off as usize]);
        if p == NIL {
            self.lists[l].first = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.lists[l].last = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.prev[off as usize] = NIL;
        self.next[off as usize] = NIL;
        self.lists[l].len -= 1;
    }

    /// list_move_tail: `off` becomes the newest of its list.
    fn rotate(&mut self, off: u32) {
        let e = self.entries[off as usize].expect("an entry");
        let l = self.list_of(&e);
        self.unlink(l, off);
        self.push_back(l, off);
    }

    /// The report's view (debugfs, meminfo's Zswap and Zswapped).
    pub fn stats(&self) -> ZswapStats {
        ZswapStats {
            compressor: self.spec.compressor.name(),
            compression_ratio: self.spec.ratio_milli as f64 / 1000.0,
            max_pool_percent: self.spec.max_pool_percent,
            accept_threshold_percent: self.spec.accept_threshold_percent,
            stored_pages: self.nr_stored,
            pool_total_size: self.pool.len() as u64 * PAGE_SIZE,
            pool_max_size: self.pool_max * PAGE_SIZE,
            zswapped: self.nr_stored * PAGE_SIZE,
            counters: self.counters.clone(),
        }
    }
}

/// zswap at the end of a run (/sys/kernel/debug/zswap, /proc/meminfo's Zswap and
/// Zswapped), bytes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ZswapStats {
    /// The compressor.
    pub compressor: &'static str,
    /// The configured ratio.
    pub compression_ratio: f64,
    /// max_pool_percent.
    pub max_pool_percent: u32,
    /// accept_threshold_percent.
    pub accept_threshold_percent: u32,
    /// Pages stored.
    pub stored_pages: u64,
    /// The pool's memory (meminfo Zswap).
    pub pool_total_size: u64,
    /// The pool's peak.
    pub pool_max_size: u64,
    /// The stored pages' uncompressed size (meminfo Zswapped).
    pub zswapped: u64,
    /// The debugfs counters.
    #[serde(flatten)]
    pub counters: ZswapCounters,
}

/// Why a writeback did not happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WbError {
    /// -EEXIST: the slot is in the swap cache (a swap-in made it hot), or was freed.
    Exist,
    /// -ENOMEM: no page for it.
    NoMem,
}

/// Why shrink_memcg wrote nothing back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShrinkError {
    /// -ENOENT: writeback is off for the memcg, or it has no entries.
    NoEntries,
    /// -EAGAIN: entries were walked, none written back.
    Again,
}

impl Sim {
    /// zswap, if the scenario turned it on.
    pub fn zswap(&self) -> Option<&Zswap> {
        self.swap.as_ref().and_then(|s| s.zswap.as_ref())
    }

    pub(crate) fn zswap_mut(&mut self) -> &mut Zswap {
        self.swap
            .as_mut()
            .and_then(|s| s.zswap.as_mut())
            .expect("zswap")
    }

    /// Decompress a page from RAM into `pfn` on this CPU at `cost` ps (zram's read and
    /// zswap's load): for a refaulting workingset page a memory stall (swap_read_folio's
    /// psi_memstall_enter).
    pub(crate) fn decompress_page(&mut self, pfn: Pfn, cost: u64) {
        let workingset = self.mem[pfn as usize].test(pg::WORKINGSET);
        let stalled = workingset.then(|| self.psi_memstall_enter());
        self.charge(cost);
        if let Some(was) = stalled {
            self.psi_memstall_leave(was);
        }
    }

    /// zswap_max_pages and zswap_accept_thr_pages.
    fn zswap_limits(&self) -> (u64, u64) {
        let z = self.zswap().expect("zswap");
        let max = self.mem.len() as u64 * u64::from(z.spec.max_pool_percent) / 100;
        (max, max * u64::from(z.spec.accept_threshold_percent) / 100)
    }

    /// zswap_check_limits: the pool at its limit marks it full (pool_limit_hit); a full
    /// pool is accepted again under the threshold. True: reject.
    fn zswap_check_limits(&mut self) -> bool {
        let (max, thr) = self.zswap_limits();
        let z = self.zswap_mut();
        let cur = z.pool.len() as u64;
        if cur >= max {
            z.counters.pool_limit_hit += 1;
            z.reached_full = true;
        } else if z.reached_full && cur <= thr {
            z.reached_full = false;
        } else if z.reached_full {
            z.counters.reject_pool_full += 1;
        }
        z.reached_full
    }

    /// obj_cgroup_may_zswap: `m` and each ancestor below the root under memory.zswap.max
    /// (their subtree's compressed bytes, in pages).
    fn obj_cgroup_may_zswap(&self, m: MemcgId) -> bool {
        let z = self.zswap().expect("zswap");
        let mut c = m;
        while c != ROOT_MEM_CGROUP && c != NO_MEMCG {
            let max = self.memcgs[c as usize].zswap_max;
            if max == 0 {
                return false;
            }
            if max != PAGE_COUNTER_MAX {
                let bytes: u64 = self
                    .memcg_subtree(c)
                    .map(|d| z.memcg_bytes[d as usize])
                    .sum();
                if bytes / PAGE_SIZE >= max {
                    return false;
                }
            }
            c = self.memcgs[c as usize].parent.unwrap_or(ROOT_MEM_CGROUP);
        }
        true
    }

    /// mem_cgroup_zswap_writeback_enabled: memory.zswap.writeback of `m` and each ancestor.
    pub(crate) fn mem_cgroup_zswap_writeback_enabled(&self, m: MemcgId) -> bool {
        let mut c = Some(m);
        while let Some(id) = c.filter(|&id| id != NO_MEMCG) {
            if !self.memcgs[id as usize].zswap_writeback {
                return false;
            }
            c = self.memcgs[id as usize].parent;
        }
        true
    }

    /// obj_cgroup_charge_zswap / obj_cgroup_uncharge_zswap: `m`'s compressed bytes change
    /// by `delta`, and its memory charge follows in whole pages. A charge from reclaim
    /// (PF_MEMALLOC) is forced past memory.max, with a `max` event, as try_charge_memcg's.
    fn zswap_charge(&mut self, m: MemcgId, delta: i64) {
        let z = self.zswap_mut();
        let bytes = (z.memcg_bytes[m as usize] as i64 + delta) as u64;
        z.memcg_bytes[m as usize] = bytes;
        let old = z.memcg_charged[m as usize];
        let new = if m == ROOT_MEM_CGROUP {
            0
        } else {
            bytes.div_ceil(PAGE_SIZE)
        };
        z.memcg_charged[m as usize] = new;
        if new > old {
            if let Some(over) = self.mem_over_limit(m, new - old) {
                self.memcgs[over as usize].failcnt += 1;
                self.memcg_memory_event(over, MemcgEvent::Max);
            }
            self.page_counter_charge(m, new - old);
        } else if new < old {
            self.page_counter_uncharge(m, old - new);
        }
    }

    /// zswap_store for the locked swap-cache page `pfn`, from swap_writepage. True: the
    /// page is stored (its slot's old entry replaced). False: rejected, and any old entry
    /// of the slot invalidated (it is stale), so the page goes to the device.
    pub(crate) fn zswap_store(&mut self, pfn: Pfn) -> bool {
        let prev = self.enter(KFunc::ZswapStore);
        let off = self.mem[pfn as usize].private;
        let memcg = match self.mem[pfn as usize].memcg {
            NO_MEMCG => ROOT_MEM_CGROUP,
            m => m,
        };
        let mut ok = true;
        if !self.obj_cgroup_may_zswap(memcg) {
            // From 6.8 the memcg's own entries are written back first.
            ok = self.features.zswap_memcg_lru && self.shrink_memcg(memcg, true).is_ok();
            if !ok {
                self.zswap_mut().counters.reject_memcg_limit += 1;
            }
        }
        if ok && self.zswap_check_limits() {
            ok = false;
        }
        if ok {
            let algo = self.zswap_mut().spec.compressor;
            self.charge(self.costs.zram_compress_ps[algo.index()]);
            // The old entry of a rewritten slot goes first.
            self.zswap_invalidate(off);
            let z = self.zswap_mut();
            let need = z.pool_pages_for(z.nr_stored + 1);
            while ok && (self.zswap_mut().pool.len() as u64) < need {
                match self.alloc_page_memalloc() {
                    Some(p) => self.zswap_mut().pool.push(p),
                    None => ok = false,
                }
            }
            if !ok {
                self.zswap_mut().counters.reject_alloc_fail += 1;
                self.zswap_shrink_pool();
            }
        }
        if !ok {
            if self.zswap_mut().reached_full {
                self.zswap_queue_shrink_work();
                // The worker runs on another CPU while this reclaimer goes on: the rest of
                // the machine catches up to now (nested steps), as at a TLB-flush wait —
                // from a top-level step only, so that nesting stays one level deep.
                if self.stepping.len() == 1 {
                    let now = self.now();
                    self.run_others_until(now);
                }
            }
            self.zswap_invalidate(off);
            self.leave(prev);
            return false;
        }
        let node = self.mem[pfn as usize].node;
        let z = self.zswap_mut();
        z.seq = z.seq.wrapping_add(1);
        let e = Entry {
            memcg,
            node,
            referenced: true,
            seq: z.seq,
        };
        z.entries[off as usize] = Some(e);
        z.nr_stored += 1;
        z.memcg_stored[memcg as usize] += 1;
        z.pool_max = z.pool_max.max(z.pool.len() as u64);
        let l = z.list_of(&e);
        z.push_back(l, off);
        let bytes = z.spec.obj_bytes as i64;
        self.zswap_charge(memcg, bytes);
        self.vmstat.inc(VmItem::Zswpout);
        self.count_memcg_events(memcg, VmItem::Zswpout, 1);
        self.leave(prev);
        true
    }

    /// zswap_load into the locked swap-cache page `pfn` (swap_read_folio): when zswap holds
    /// its slot, decompress it on this CPU, uptodate, unlocked (zswpin; no IO, no pswpin).
    /// From 6.9 (`zswap-exclusive-loads`) the entry is freed and the page dirtied; before,
    /// the entry stays (on the global LRU, as the newest). False: not in zswap.
    pub(crate) fn zswap_load(&mut self, pfn: Pfn) -> bool {
        let off = self.mem[pfn as usize].private;
        let Some(e) = self.zswap().and_then(|z| z.entries[off as usize]) else {
            return false;
        };
        let prev = self.enter(KFunc::ZswapLoad);
        let algo = self.zswap_mut().spec.compressor;
        self.decompress_page(pfn, self.costs.zram_decompress_ps[algo.index()]);
        let version = self.swap.as_ref().expect("swap").versions[off as usize];
        self.mem[pfn as usize].version = version;
        self.SetPageUptodate(pfn);
        self.vmstat.inc(VmItem::Zswpin);
        self.count_memcg_events(e.memcg, VmItem::Zswpin, 1);
        if self.features.zswap_exclusive_loads {
            self.SetPageDirty(pfn);
            self.zswap_invalidate(off);
        } else if !self.features.zswap_memcg_lru {
            self.zswap_mut().rotate(off);
        }
        self.unlock_page(pfn);
        self.leave(prev);
        true
    }

    /// zswap_invalidate (the slot freed, or rewritten): its entry, if any, is freed —
    /// off its LRU, its bytes uncharged, whole pool pages no longer needed returned.
    pub(crate) fn zswap_invalidate(&mut self, off: u32) {
        let Some(z) = self.swap.as_mut().and_then(|s| s.zswap.as_mut()) else {
            return;
        };
        let Some(e) = z.entries[off as usize].take() else {
            return;
        };
        let l = z.list_of(&e);
        z.unlink(l, off);
        z.nr_stored -= 1;
        z.memcg_stored[e.memcg as usize] -= 1;
        let bytes = z.spec.obj_bytes as i64;
        self.zswap_charge(e.memcg, -bytes);
        self.zswap_shrink_pool();
    }

    /// Give back the pool pages the stored pages do not need.
    fn zswap_shrink_pool(&mut self) {
        loop {
            let z = self.zswap_mut();
            if z.pool.len() as u64 <= z.pool_pages_for(z.nr_stored) {
                break;
            }
            let pfn = z.pool.pop().expect("a pool page");
            self.put_page(pfn);
        }
    }

    /// queue_work(shrink_wq, &zswap_shrink_work): wake the worker unless the work is
    /// already pending.
    pub fn zswap_queue_shrink_work(&mut self) {
        let z = self.zswap_mut();
        if std::mem::replace(&mut z.work_pending, true) {
            return;
        }
        if let Some(t) = z.worker {
            let now = self.now();
            self.wake_up(t, now);
        }
    }

    /// zswap_writeback_entry for slot `off`: a new page in the swap cache for the slot
    /// (charged to the slot's memcg; it may reclaim, never sleep; the slot's shadow makes
    /// it a refault, as __read_swap_cache_async's), the entry decompressed into it and
    /// freed (zswpwb), then written to the device with PG_reclaim, to be freed when the
    /// write ends. Fails when the slot is in the swap cache (a swap-in made it hot) or was
    /// freed or rewritten meanwhile, or when no page can be had. `memalloc`: from a store,
    /// inside reclaim (PF_MEMALLOC) — the page comes from below the watermarks and its
    /// charge is forced, neither reclaims (the kernel's guard against reclaim recursing
    /// into itself); else from the shrink worker, whose allocation may reclaim.
    fn zswap_writeback_entry(&mut self, off: u32, memalloc: bool) -> Result<(), WbError> {
        let prev = self.enter(KFunc::ZswapWritebackEntry);
        let r = self.__zswap_writeback_entry(off, memalloc);
        self.leave(prev);
        r
    }

    fn __zswap_writeback_entry(&mut self, off: u32, memalloc: bool) -> Result<(), WbError> {
        let e = self.zswap().and_then(|z| z.entries[off as usize]);
        let sw = self.swap.as_ref().expect("swap");
        let Some(e) = e else {
            return Err(WbError::Exist);
        };
        if sw.cache[off as usize] != crate::mm::page::NIL || sw.swap_map[off as usize] == 0 {
            return Err(WbError::Exist);
        }
        let memcg = self.swapin_memcg(off);
        let pfn = if memalloc {
            let pfn = self.alloc_page_memalloc().ok_or(WbError::NoMem)?;
            self.mem_cgroup_charge_memalloc(pfn, memcg);
            pfn
        } else {
            let gfp = crate::mm::page_alloc::Gfp {
                noretry: true,
                ..crate::mm::page_alloc::Gfp::KERNEL
            };
            self.alloc_page_charged(gfp, memcg)
                .map_err(|_| WbError::NoMem)?
        };
        // The allocation may have reclaimed and let other CPUs run: the entry must still be
        // the one chosen and the slot uncached.
        let sw = self.swap.as_ref().expect("swap");
        let same = self
            .zswap()
            .and_then(|z| z.entries[off as usize])
            .is_some_and(|now| now.seq == e.seq);
        if !same || sw.cache[off as usize] != crate::mm::page::NIL {
            self.put_page(pfn);
            return Err(WbError::Exist);
        }
        self.add_to_swap_cache_new(pfn, off);
        self.mem_cgroup_swapin_uncharge_swap(off);
        let algo = self.zswap_mut().spec.compressor;
        self.charge(self.costs.zram_decompress_ps[algo.index()]);
        let version = self.swap.as_ref().expect("swap").versions[off as usize];
        self.mem[pfn as usize].version = version;
        self.SetPageUptodate(pfn);
        self.vmstat.inc(VmItem::Zswpwb);
        self.count_memcg_events(e.memcg, VmItem::Zswpwb, 1);
        self.zswap_invalidate(off);
        self.zswap_mut().counters.written_back_pages += 1;
        // __swap_writepage: PG_reclaim puts it at the inactive tail when the write ends.
        self.__swap_writepage(pfn);
        Ok(())
    }

    /// shrink_memcg (6.8): walk up to SWAP_CLUSTER_MAX entries of each of `m`'s per-node
    /// LRUs, oldest first: a referenced entry loses its bit and goes to the tail (second
    /// chance), any other goes to the tail and is written back (`memalloc`: from a store,
    /// inside reclaim).
    fn shrink_memcg(&mut self, m: MemcgId, memalloc: bool) -> Result<(), ShrinkError> {
        if !self.mem_cgroup_zswap_writeback_enabled(m) {
            return Err(ShrinkError::NoEntries);
        }
        let nr_nodes = self.zswap_mut().nr_nodes;
        let (mut shrunk, mut scanned) = (0u64, 0u64);
        for node in 0..nr_nodes {
            let l = m as usize * nr_nodes + node;
            let mut nr_to_walk = SWAP_CLUSTER_MAX;
            while nr_to_walk > 0 {
                let z = self.zswap_mut();
                let off = z.lists[l].first;
                if off == NIL {
                    break;
                }
                nr_to_walk -= 1;
                scanned += 1;
                self.charge(self.costs.mem_access_ps);
                let z = self.zswap_mut();
                z.rotate(off);
                let e = z.entries[off as usize].as_mut().expect("an entry");
                if std::mem::replace(&mut e.referenced, false) {
                    continue;
                }
                match self.zswap_writeback_entry(off, memalloc) {
                    Ok(()) => shrunk += 1,
                    Err(_) => self.zswap_mut().counters.reject_reclaim_fail += 1,
                }
            }
        }
        if scanned == 0 {
            Err(ShrinkError::NoEntries)
        } else if shrunk == 0 {
            Err(ShrinkError::Again)
        } else {
            Ok(())
        }
    }

    /// Before 6.8 (zswap_reclaim_entry): write back the oldest entry of the global LRU,
    /// which goes to the tail first. Err: nothing to write back, or the writeback failed.
    fn zswap_reclaim_entry(&mut self) -> Result<(), ShrinkError> {
        let z = self.zswap_mut();
        let off = z.lists[0].first;
        if off == NIL {
            return Err(ShrinkError::NoEntries);
        }
        self.charge(self.costs.mem_access_ps);
        self.zswap_mut().rotate(off);
        self.zswap_writeback_entry(off, false).map_err(|_| {
            self.zswap_mut().counters.reject_reclaim_fail += 1;
            ShrinkError::Again
        })
    }

    /// One step of the shrink worker (shrink_worker, one iteration of its loop): while the
    /// pool is above the accept threshold, shrink the next memcg in tree order (6.8; a
    /// memcg with nothing to write back is skipped, a pass over every memcg that found none
    /// counts a failure) or write back the globally oldest entry (before); end the run
    /// after MAX_RECLAIM_RETRIES failures. Returns whether it stays runnable.
    pub fn zswap_shrink_step(&mut self, tid: TaskId) -> bool {
        let prev = self.enter(KFunc::ZswapShrinkWorker);
        let z = self.zswap_mut();
        let mut run = match z.run.take() {
            Some(r) => r,
            None if std::mem::take(&mut z.work_pending) => ShrinkRun::default(),
            None => {
                self.set_sleeping(tid);
                self.leave(prev);
                return false;
            }
        };
        let (_, thr) = self.zswap_limits();
        let mut done = false;
        if self.features.zswap_memcg_lru {
            let n = self.memcgs.len() as MemcgId;
            let z = self.zswap_mut();
            let next = match z.next_shrink {
                None => Some(ROOT_MEM_CGROUP),
                Some(m) if m + 1 < n => Some(m + 1),
                Some(_) => None,
            };
            z.next_shrink = next;
            match next {
                None => {
                    // A pass over every memcg ended.
                    if run.attempts == 0 {
                        run.failures += 1;
                        done = run.failures == MAX_RECLAIM_RETRIES;
                    }
                    run.attempts = 0;
                }
                Some(m) => match self.shrink_memcg(m, false) {
                    Err(ShrinkError::NoEntries) => {}
                    Ok(()) => run.attempts += 1,
                    Err(ShrinkError::Again) => {
                        run.attempts += 1;
                        run.failures += 1;
                        done = run.failures == MAX_RECLAIM_RETRIES;
                    }
                },
            }
        } else {
            match self.zswap_reclaim_entry() {
                Ok(()) => {}
                Err(ShrinkError::NoEntries) => done = true,
                Err(ShrinkError::Again) => {
                    run.failures += 1;
                    done = run.failures == MAX_RECLAIM_RETRIES;
                }
            }
        }
        let z = self.zswap_mut();
        if !done && z.pool.len() as u64 > thr {
            z.run = Some(run);
        }
        self.leave(prev);
        true
    }
}

/// The zswap invariants (`mm::check`): each entry's slot in use and on its LRU, the LRUs
/// holding exactly the entries, the counts per memcg and in all, the pool exactly the
/// pages the stored bytes need (each allocated, on no LRU), each memcg charged its bytes
/// in whole pages.
pub fn check_zswap(sim: &Sim) -> Result<(), String> {
    let Some(sw) = sim.swap.as_ref() else {
        return Ok(());
    };
    let Some(z) = sw.zswap.as_ref() else {
        return Ok(());
    };
    let mut on_lists = vec![0u64; z.lists.len()];
    let mut stored = vec![0u64; z.memcg_stored.len()];
    let mut total = 0u64;
    for (off, e) in z.entries.iter().enumerate() {
        let Some(e) = e else {
            continue;
        };
        total += 1;
        stored[e.memcg as usize] += 1;
        on_lists[z.list_of(e)] += 1;
        if sw.is_free(off as u32) {
            return Err(format!("zswap holds slot {off}, which is free"));
        }
    }
    for (l, list) in z.lists.iter().enumerate() {
        let mut n = 0u64;
        let mut prev = NIL;
        let mut cur = list.first;
        while cur != NIL {
            let Some(e) = z.entries[cur as usize] else {
                return Err(format!(
                    "zswap LRU {l} links slot {cur}, which holds nothing"
                ));
            };
            if z.list_of(&e) != l || z.prev[cur as usize] != prev {
                return Err(format!("zswap LRU {l} is mislinked at slot {cur}"));
            }
            n += 1;
            if n > list.len {
                return Err(format!(
                    "zswap LRU {l} is longer than its count {}",
                    list.len
                ));
            }
            prev = cur;
            cur = z.next[cur as usize];
        }
        if prev != list.last || n != list.len || n != on_lists[l] {
            return Err(format!(
                "zswap LRU {l} links {n} entries, counts {}, and {} belong on it",
                list.len, on_lists[l]
            ));
        }
    }
    if total != z.nr_stored || stored != z.memcg_stored {
        return Err(format!(
            "zswap counts {} stored pages ({:?} per memcg) but holds {total} ({stored:?})",
            z.nr_stored, z.memcg_stored
        ));
    }
    for (m, &n) in stored.iter().enumerate() {
        let bytes = n * z.spec.obj_bytes;
        let pages = if m == ROOT_MEM_CGROUP as usize {
            0
        } else {
            bytes.div_ceil(PAGE_SIZE)
        };
        if z.memcg_bytes[m] != bytes || z.memcg_charged[m] != pages {
            return Err(format!(
                "zswap memcg {m}: {} bytes charged as {} pages, but its {n} entries take \
                 {bytes} bytes ({pages} pages)",
                z.memcg_bytes[m], z.memcg_charged[m]
            ));
        }
    }
    let need = z.pool_pages_for(z.nr_stored);
    if z.pool.len() as u64 != need {
        return Err(format!(
            "zswap's pool has {} pages but {} stored pages need {need}",
            z.pool.len(),
            z.nr_stored
        ));
    }
    crate::mm::zram::check_pool(sim, "zswap", &z.pool)
}
