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
    /// __GFP_WAIT (__GFP_DIRECT_RECLAIM from v4.4): may sleep and enter direct reclaim.
    /// Without it the allocation wakes kswapd, tries the min watermark and fails.
    pub direct_reclaim: bool,
}

impl Gfp {
    /// GFP_KERNEL.
    pub const KERNEL: Gfp = Gfp {
        fs: true,
        io: true,
        write: false,
        noretry: false,
        direct_reclaim: true,
    };
    /// GFP_NOFS.
    pub const NOFS: Gfp = Gfp {
        fs: false,
        io: true,
        write: false,
        noretry: false,
        direct_reclaim: true,
    };
    /// GFP_NOWAIT: never sleeps nor reclaims.
    pub const NOWAIT: Gfp = Gfp {
        fs: false,
        io: false,
        write: false,
        noretry: true,
        direct_reclaim: false,
    };
}

/// Why an allocation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// Out of memory (ENOMEM).
    NoMem,
    /// Back off and retry after the wait (reclaim is waiting for IO).
    Wait(crate::sched::Wait),
}

/// A reclaim_throttle a direct reclaim round would have slept in.
#[derive(Clone, Copy)]
enum Throttle {
    /// VMSCAN_THROTTLE_CONGESTED (shrink_node).
    Congested,
    /// VMSCAN_THROTTLE_NOPROGRESS (consider_reclaim_throttle).
    NoProgress,
}

/// should_reclaim_retry's congestion_wait(BLK_RW_ASYNC, HZ/10) before 5.16 (a fruitless
/// round while the zone's dirty and writeback pages exceed half its reclaimable ones), ps.
pub const WRITE_PENDING_WAIT_PS: u64 = 100_000_000_000;

/// int_sqrt.
pub fn int_sqrt(x: u64) -> u64 {
    (x as f64).sqrt() as u64 // exact for the magnitudes used (< 2^52)
}

/// watermark_scale_factor's default (v4.6): the kswapd watermarks' distance is 10/10000 of
/// the zone's memory.
pub const WATERMARK_SCALE_FACTOR: u64 = 10;

/// The rules and settings the zone watermarks follow (`boot_watermarks`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WatermarkRules {
    /// v4.6's `watermark-scale-factor`: the distance is at least watermark_scale_factor /
    /// 10,000 of the node's pages (else min / 4 alone).
    pub scale_factor: bool,
    /// v5.7's `min-free-kbytes-256m`: the default min_free_kbytes may reach 256 MiB.
    pub big_min: bool,
    /// vm.min_free_kbytes as set (None: calculate_min_free_kbytes's default).
    pub min_free_kbytes: Option<u64>,
    /// vm.watermark_scale_factor.
    pub watermark_scale_factor: u64,
}

impl WatermarkRules {
    /// An era's rules with the sysctls at their defaults.
    pub fn defaults(scale_factor: bool, big_min: bool) -> WatermarkRules {
        WatermarkRules {
            scale_factor,
            big_min,
            min_free_kbytes: None,
            watermark_scale_factor: WATERMARK_SCALE_FACTOR,
        }
    }
}

/// The zone watermarks of nodes of `present` pages each, pages per node
/// (calculate_min_free_kbytes at boot, or vm.min_free_kbytes as written; then
/// __setup_per_zone_wmarks; one zone per node): min_free_kbytes = sqrt(16 × lowmem kB)
/// clamped to [128, 65536] — [128, 262144] from v5.7 (`big_min`, "mm/page_alloc: increase
/// default min_free_kbytes bound") — unless set, and split across the zones by size;
/// low = min + d and high = min + 2d, where the distance d is min / 4 (v4.2), and from
/// v4.6 (`scale_factor`, "mm: scale kswapd watermarks in proportion to memory") the
/// larger of min / 4 and watermark_scale_factor/10000 of the zone's pages.
pub fn boot_watermarks(present: &[u64], rules: WatermarkRules) -> Vec<Watermarks> {
    let total_pages: u64 = present.iter().sum();
    let lowmem_kb = total_pages * 4;
    let max_kb = if rules.big_min { 262_144 } else { 65_536 };
    let min_free_kbytes = rules
        .min_free_kbytes
        .unwrap_or_else(|| int_sqrt(lowmem_kb * 16).clamp(128, max_kb));
    let min_pages_total = min_free_kbytes / 4;
    present
        .iter()
        .map(|&pages| {
            let min = min_pages_total * pages / total_pages.max(1);
            let d = if rules.scale_factor {
                (min / 4).max(pages * rules.watermark_scale_factor / 10_000)
            } else {
                min / 4
            };
            Watermarks {
                min,
                low: min + d,
                high: min + 2 * d,
            }
        })
        .collect()
}

impl Sim {
    /// Set the watermarks (boot; each node's free list holds its frames from `PgData::new`).
    pub fn init_page_alloc(&mut self) {
        self.setup_per_zone_wmarks();
        // build_zonelists: each node's fallback order, local node first, then by distance.
        self.zonelists = (0..self.nodes.len())
            .map(|n| {
                let mut order: Vec<usize> = (0..self.nodes.len()).collect();
                order.sort_by_key(|m| (m.abs_diff(n), *m));
                order.into()
            })
            .collect();
    }

    /// init_per_zone_wmark_min at boot, then the `[vm]` sysctls as written after it:
    /// [`boot_watermarks`] of the nodes, with the era's rules (`watermark-scale-factor`,
    /// `min-free-kbytes-256m`).
    pub fn setup_per_zone_wmarks(&mut self) {
        let present: Vec<u64> = self
            .nodes
            .iter()
            .map(|n| u64::from(n.present_pages))
            .collect();
        let marks = boot_watermarks(
            &present,
            WatermarkRules {
                min_free_kbytes: self.vm.min_free_kbytes,
                watermark_scale_factor: self.vm.watermark_scale_factor,
                ..WatermarkRules::defaults(
                    self.features.watermark_scale_factor,
                    self.features.min_free_kbytes_256m,
                )
            },
        );
        for (n, w) in self.nodes.iter_mut().zip(marks) {
            n.watermark = w;
        }
    }

    /// totalreserve_pages (calculate_totalreserve_pages, after every change of the
    /// watermarks): each zone's high watermark plus its largest lowmem_reserve, at most its
    /// pages. A node here is one zone, whose lowmem_reserve against itself is 0.
    pub fn totalreserve_pages(&self) -> u64 {
        (0..self.nodes.len())
            .map(|n| self.node_reserve_pages(n))
            .sum()
    }

    /// Node `n`'s term of totalreserve_pages (pgdat->totalreserve_pages).
    pub fn node_reserve_pages(&self, n: usize) -> u64 {
        let node = &self.nodes[n];
        node.watermark.high.min(u64::from(node.present_pages))
    }

    /// Free pages on node `n`.
    pub fn node_free_pages(&self, n: usize) -> u64 {
        self.nodes[n].free_list.len
    }

    /// zone_watermark_ok for order 0.
    pub fn zone_watermark_ok(&self, n: usize, mark: u64) -> bool {
        self.node_free_pages(n) > mark
    }

    /// Nodes in fallback order from the running CPU's node (its zonelist, built at boot).
    pub fn zonelist_nodes(&self) -> std::rc::Rc<[usize]> {
        std::rc::Rc::clone(&self.zonelists[self.cur_node()])
    }

    /// get_page_from_freelist: the first zone of the zonelist above `mark(zone)`.
    fn get_page_from_freelist(
        &mut self,
        zl: &[usize],
        mark: impl Fn(&Self, usize) -> u64,
    ) -> Option<Pfn> {
        for &n in zl {
            if self.zone_watermark_ok(n, mark(self, n)) {
                return self.rmqueue(n);
            }
        }
        None
    }

    /// __alloc_pages_nodemask for one page. Fast path: a zone above its low watermark. Slow
    /// path: wake kswapd, retry at the min watermark, then direct reclaim (try_to_free_pages)
    /// and retry; `__GFP_NORETRY` gives up after one round, an allocation without
    /// `direct_reclaim` (GFP_NOWAIT) before reclaiming at all. When reclaim makes no progress
    /// while pages are dirty or under writeback, the task backs off (congestion_wait) and the
    /// allocation is retried when it wakes; with nothing left to reclaim, the OOM killer runs
    /// and the allocation fails.
    pub fn alloc_page(&mut self, gfp: Gfp) -> Result<Pfn, AllocError> {
        let prev = self.enter(KFunc::AllocPages);
        let r = self.with_local_zonelist(|s, zl| s.__alloc_pages(gfp, zl));
        self.leave(prev);
        r
    }

    /// Run `f` with the running node's zonelist. It is built once (build_zonelists) and
    /// shared: holding it, even in a reclaim nested in an allocation, allocates nothing.
    #[inline]
    fn with_local_zonelist<R>(&mut self, f: impl FnOnce(&mut Self, &[usize]) -> R) -> R {
        let zl = self.zonelist_nodes();
        f(self, &zl)
    }

    /// An allocation from a reclaiming context (PF_MEMALLOC: kswapd, or a task in direct
    /// or memcg reclaim), which may not reclaim itself: any free page, below the
    /// watermarks too (ALLOC_NO_WATERMARKS); None when the local zonelist has none. zram's
    /// pool allocations during swap-out take it (`mm/zram.rs`).
    pub(crate) fn alloc_page_memalloc(&mut self) -> Option<Pfn> {
        let prev = self.enter(KFunc::AllocPages);
        let r = self.with_local_zonelist(|s, zl| s.get_page_from_freelist(zl, |_, _| 0));
        self.leave(prev);
        r
    }

    /// The fast path's get_page_from_freelist for a page cache page about to be written
    /// (`__GFP_WRITE`, with `spread-dirty-pages`): a node over its dirty limit
    /// (node_dirty_ok) is passed over, so that no node holds more than its share of the
    /// allowed dirty pages. The slow path does not look (spread_dirty_pages cleared).
    fn get_page_from_freelist_spread(&mut self, zl: &[usize]) -> Option<Pfn> {
        for &n in zl {
            if !self.node_dirty_ok(n) {
                continue;
            }
            if self.zone_watermark_ok(n, self.nodes[n].watermark.low) {
                return self.rmqueue(n);
            }
        }
        None
    }

    fn __alloc_pages(&mut self, gfp: Gfp, zl: &[usize]) -> Result<Pfn, AllocError> {
        let fast = if gfp.write && self.features.spread_dirty_pages && zl.len() > 1 {
            self.get_page_from_freelist_spread(zl)
        } else {
            self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.low)
        };
        if let Some(p) = fast {
            if let Some(t) = self.cur.task {
                // An allocation retried after its slow path slept ends here.
                if self.tasks[t].alloc_no_progress_loops != 0 {
                    self.tasks[t].alloc_no_progress_loops = 0;
                }
            }
            return Ok(p);
        }
        // __alloc_pages_slowpath
        for &n in zl {
            self.wakeup_kswapd(n);
        }
        let in_kswapd = self.cur.task.is_some_and(|t| {
            matches!(
                self.tasks[t].body,
                crate::sched::TaskBody::Kthread(crate::sched::KThread::Kswapd(_))
            )
        });
        if self.features.oom_detection_rework {
            return self.__alloc_pages_slowpath(gfp, zl, in_kswapd);
        }
        for _retry in 0..16 {
            if let Some(p) = self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.min) {
                return Ok(p);
            }
            if in_kswapd || self.cur.mode == crate::machine::Mode::Irq {
                // PF_MEMALLOC / atomic context: ALLOC_NO_WATERMARKS.
                if let Some(p) = self.get_page_from_freelist(zl, |_, _| 0) {
                    return Ok(p);
                }
                return Err(AllocError::NoMem);
            }
            if !gfp.direct_reclaim {
                return Err(AllocError::NoMem);
            }
            // __perform_reclaim: a memory stall.
            let stalled = self.psi_memstall_enter();
            let reclaimed = self.try_to_free_pages(gfp);
            self.psi_memstall_leave(stalled);
            if std::mem::take(&mut self.reclaim_congested) && self.cur.task.is_some() {
                // reclaim_throttle(VMSCAN_THROTTLE_CONGESTED) in shrink_node (v5.16): a
                // jiffy's sleep inside the reclaim, then the allocation is tried again.
                return Err(AllocError::Wait(self.reclaim_throttle_congested()));
            }
            if let Some(p) = self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.min) {
                return Ok(p);
            }
            if gfp.noretry {
                return Err(AllocError::NoMem);
            }
            if reclaimed == 0 {
                break;
            }
        }
        let busy = self.vmstat.get(VmItem::NrWriteback) + self.vmstat.get(VmItem::NrDirty);
        if busy > 0 {
            // should_reclaim_retry: progress is possible once IO completes.
            return Err(self.reclaim_writeback_wait());
        }
        self.out_of_memory();
        // The OOM victim's memory may have been freed.
        if let Some(p) = self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.min) {
            return Ok(p);
        }
        Err(AllocError::NoMem)
    }

    /// __alloc_pages_slowpath with 4.7's OOM detection (`oom-detection-rework`), after the
    /// kswapds are woken: one round of the retry loop per call for a task — the page at
    /// the min watermark, else direct reclaim and the page again, else should_reclaim_retry
    /// decides between another round (the task reschedules first, cond_resched, so that
    /// what runs meanwhile — IO completions, kswapd, other tasks — is seen by the next
    /// round; `Task::alloc_no_progress_loops` carries the count across) and the OOM
    /// killer. The reclaim throttles of 5.16 (`reclaim-throttle`: CONGESTED, NOPROGRESS)
    /// sleep a jiffy before the next round; before 5.16 a fruitless round while the
    /// zone's dirty and writeback pages exceed half its reclaimable ones backs off in
    /// congestion_wait(BLK_RW_ASYNC, HZ/10). Without a task (no context to reschedule)
    /// the rounds run in place, at most MAX_RECLAIM_RETRIES of them.
    fn __alloc_pages_slowpath(
        &mut self,
        gfp: Gfp,
        zl: &[usize],
        in_kswapd: bool,
    ) -> Result<Pfn, AllocError> {
        use crate::mm::memcontrol::MAX_RECLAIM_RETRIES;
        let task = self.cur.task;
        // Without a task: the rounds in place, and their count.
        let (mut rounds, mut local_loops) = (0, 0);
        loop {
            if let Some(p) = self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.min) {
                self.alloc_done();
                return Ok(p);
            }
            if in_kswapd || self.cur.mode == crate::machine::Mode::Irq {
                // PF_MEMALLOC / atomic context: ALLOC_NO_WATERMARKS.
                return self
                    .get_page_from_freelist(zl, |_, _| 0)
                    .ok_or(AllocError::NoMem);
            }
            if !gfp.direct_reclaim {
                return Err(AllocError::NoMem);
            }
            // __alloc_pages_direct_reclaim: a memory stall.
            let stalled = self.psi_memstall_enter();
            let reclaimed = self.try_to_free_pages(gfp);
            self.psi_memstall_leave(stalled);
            let congested = std::mem::take(&mut self.reclaim_congested);
            let noprogress = std::mem::take(&mut self.reclaim_noprogress);
            // A fruitless round that met pages under writeback waits for their completions
            // and does not count (see below).
            let on_writeback =
                task.is_some() && reclaimed == 0 && self.vmstat.get(VmItem::NrWriteback) > 0;
            let no_progress_loops = match task {
                Some(t) => {
                    let n = &mut self.tasks[t].alloc_no_progress_loops;
                    if reclaimed > 0 {
                        *n = 0;
                    } else if !on_writeback {
                        *n += 1;
                    }
                    *n
                }
                None => {
                    local_loops = if reclaimed > 0 { 0 } else { local_loops + 1 };
                    local_loops
                }
            };
            // The throttles of the reclaim (a step cannot sleep inside it): the sleep, then
            // the allocation tried again.
            // Kthreads other than kswapd are not throttled (reclaim_throttle).
            let user =
                task.is_some_and(|t| matches!(self.tasks[t].body, crate::sched::TaskBody::User(_)));
            let throttle = match (congested, noprogress) {
                _ if !user => None,
                (true, _) => Some(Throttle::Congested),
                (false, true) => Some(Throttle::NoProgress),
                (false, false) => None,
            };
            if reclaimed > 0 && throttle.is_none() {
                if let Some(p) = self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.min) {
                    self.alloc_done();
                    return Ok(p);
                }
            }
            if gfp.noretry && throttle.is_none() {
                self.alloc_done();
                return Err(AllocError::NoMem);
            }
            // should_reclaim_retry (decided before the throttle's sleep is taken: a round
            // that ends in the OOM killer skips it).
            // Would the allocation succeed if every reclaimable page of some zone were freed?
            let retry = (no_progress_loops <= MAX_RECLAIM_RETRIES)
                .then(|| {
                    zl.iter().find_map(|&n| {
                        let reclaimable = self.zone_reclaimable_pages(n);
                        let available = reclaimable + self.node_free_pages(n);
                        (available > self.nodes[n].watermark.min).then_some((n, reclaimable))
                    })
                })
                .flatten();
            let Some((n, reclaimable)) = retry else {
                if gfp.noretry {
                    self.alloc_done();
                    return Err(AllocError::NoMem);
                }
                break;
            };
            if let Some(Throttle::Congested) = throttle {
                // reclaim_throttle(VMSCAN_THROTTLE_CONGESTED) in shrink_node.
                return Err(AllocError::Wait(self.reclaim_throttle_congested()));
            }
            if task.is_none() {
                rounds += 1;
                if rounds >= MAX_RECLAIM_RETRIES {
                    break;
                }
                continue;
            }
            if let Some(Throttle::NoProgress) = throttle {
                self.tracepoints.mm_vmscan_throttled.noprogress += 1;
            }
            if !self.features.reclaim_throttle
                && reclaimed == 0
                && 2 * self.nodes[n].nr_dirty_writeback > reclaimable
            {
                // Before 5.16: wait for IO to complete rather than OOM prematurely,
                // congestion_wait in io_schedule_timeout (IO wait).
                self.psi_sleep_kind(crate::psi::flags::IOWAIT);
                let at = self.now() + WRITE_PENDING_WAIT_PS;
                return Err(AllocError::Wait(crate::sched::Wait::Until(at)));
            }
            if on_writeback {
                // A stand-in for the block layer's back-pressure, which mmsim's devices
                // do not exert (their queues take every request, so reclaim can put
                // nearly all of memory under writeback at once): the kernel's reclaimer
                // that writes pages out blocks in submit_bio once the device's requests
                // are all taken, and its rounds free the pages whose writeback completes
                // meanwhile. Here the round waits for completions after it — woken as a
                // writeback throttle is (from 5.16), or congestion_wait(HZ/50) before —
                // and is not counted as fruitless.
                return Err(self.reclaim_writeback_wait());
            }
            if let Some(Throttle::NoProgress) = throttle {
                // reclaim_throttle(VMSCAN_THROTTLE_NOPROGRESS): a jiffy inside the
                // memory stall.
                self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
                let at = self.now() + crate::mm::memcontrol::JIFFY_PS;
                return Err(AllocError::Wait(crate::sched::Wait::Until(at)));
            }
            // cond_resched, and the next round.
            return Err(AllocError::Wait(crate::sched::Wait::Until(self.now())));
        }
        // Reclaim has failed: __alloc_pages_may_oom.
        self.alloc_done();
        self.out_of_memory();
        if let Some(p) = self.get_page_from_freelist(zl, |s, n| s.nodes[n].watermark.min) {
            return Ok(p);
        }
        Err(AllocError::NoMem)
    }

    /// A fruitless direct reclaim round's wait for writeback to complete: from 5.16 a
    /// task's reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK), inside __perform_reclaim's
    /// memory stall; before, congestion_wait(BLK_RW_ASYNC, HZ/50), outside it, in
    /// io_schedule_timeout (IO wait).
    fn reclaim_writeback_wait(&mut self) -> AllocError {
        if self.features.reclaim_throttle {
            if let Some(t) = self.cur.task {
                self.psi_sleep_kind(crate::psi::flags::MEMSTALL);
                let node = self.cur_node();
                return AllocError::Wait(self.reclaim_throttle(t, node));
            }
        }
        self.psi_sleep_kind(crate::psi::flags::IOWAIT);
        let at = self.now() + crate::mm::vmscan::CONGESTION_WAIT_PS;
        AllocError::Wait(crate::sched::Wait::Until(at))
    }

    /// The running task's page allocation ended (a page, or a failure): its next one
    /// starts its count of fruitless reclaim rounds afresh.
    #[inline]
    fn alloc_done(&mut self) {
        if let Some(t) = self.cur.task {
            self.tasks[t].alloc_no_progress_loops = 0;
        }
    }

    /// out_of_memory: nothing is left to reclaim. The OOM killer picks the user task with
    /// the most points (oom_badness: resident pages + swap entries + page-table pages, and
    /// its oom_score_adj; `mm/oom_kill.rs`) and kills it, with its memory.oom.group if one
    /// says so; a victim exits at its next step and its memory is freed by exit_mmap. The
    /// run reports the kill (oom_kill, the victim, why) and goes on.
    pub fn out_of_memory(&mut self) {
        let prev = self.enter(KFunc::OomKill);
        let now = self.now();
        let who = self
            .cur
            .task
            .map(|t| self.tasks[t].name.clone())
            .unwrap_or_default();
        // An already chosen victim that has not exited yet: wait for it (oom_victims).
        if self
            .tasks
            .iter()
            .any(|t| t.oom_killed && t.state != crate::sched::TaskState::Exited)
        {
            self.leave(prev);
            return;
        }
        let totalpages = self.oom_totalpages_global();
        // A task that never mapped memory has no mm here, but a process has one (its text,
        // libraries, stack): eligible with no pages counted, as in a memcg OOM.
        let victim = self.select_bad_process(totalpages, false, |s, t| {
            Some(s.oom_footprint(t).unwrap_or(0))
        });
        let line = match victim {
            Some(v) => {
                let kill = self.oom_kill_process(v.task, crate::mm::memcontrol::ROOT_MEM_CGROUP);
                format!(
                    "t={} ns: out of memory in {}: {}; free {} pages, file {} pages, nothing reclaimable",
                    now / 1000,
                    who,
                    self.oom_kill_words(&v, &kill),
                    self.vmstat.get(VmItem::NrFreePages),
                    self.vmstat.get(VmItem::NrFilePages)
                )
            }
            None => format!(
                "t={} ns: out of memory in {}: no killable task (the kernel panics here); the allocation fails (ENOMEM)",
                now / 1000,
                who
            ),
        };
        if self.oom_reports.len() < 100 {
            self.oom_reports.push(line);
        }
        self.leave(prev);
    }

    /// Take one page off node `n`'s free list and initialise it (prep_new_page).
    fn rmqueue(&mut self, n: usize) -> Option<Pfn> {
        let pfn = self.nodes[n].free_list.pop_head()?;
        self.charge(self.costs.page_alloc_ps);
        let p = &mut self.mem[pfn as usize];
        p.prev = crate::mm::page::NIL;
        p.next = crate::mm::page::NIL;
        debug_assert!(p.test(pg::BUDDY), "allocating a page that is not free");
        p.flags = 0;
        p.refcount = 1;
        p.mapcount = -1;
        p.mapping = NO_MAPPING;
        p.index = 0;
        p.private = 0;
        debug_assert_eq!(p.memcg, crate::mm::memcontrol::NO_MEMCG);
        self.vmstat.dec(VmItem::NrFreePages);
        self.vmstat.inc(VmItem::PgallocNormal);
        Some(pfn)
    }

    /// free_hot_cold_page: return a page whose last reference is gone to its node's free list.
    #[inline(always)]
    pub fn free_hot_cold_page(&mut self, pfn: Pfn) {
        self.free_page_frame(pfn, false);
    }

    /// [`Sim::free_hot_cold_page`] of one frame; `folio_tail`: a large folio's tail, freed
    /// (and uncharged) with its head.
    pub(crate) fn free_page_frame(&mut self, pfn: Pfn, folio_tail: bool) {
        let prev = self.enter(KFunc::FreeHotColdPage);
        self.charge(self.costs.page_free_ps);
        if self.mem[pfn as usize].test(pg::WAITERS) {
            // A task went to sleep on this page while the reclaimer held it locked: a step
            // nested in the reclaimer's wait for IPI acknowledgements (Sim::run_others_until)
            // looked it up. In the kernel that task holds a reference and the reclaimer's
            // page_ref_freeze fails; here it holds none, and retries its lookup.
            self.wake_up_page(pfn);
        }
        if self.mem[pfn as usize].test(pg::HEAD) {
            // A large folio's frames go back with its head.
            self.free_folio_tails(pfn);
        }
        self.mem_cgroup_uncharge(pfn, folio_tail);
        if self.mem[pfn as usize].test(pg::MLOCKED) {
            self.mlock_clear_at_free(pfn);
        }
        let node = self.mem[pfn as usize].node as usize;
        {
            let p = &mut self.mem[pfn as usize];
            if p.mapping & crate::mm::rmap::ANON_MAPPING != 0 {
                p.mapping = NO_MAPPING; // free_pages_prepare clears an anon page's mapping
            }
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
        self.nodes[node].free_list.add_head(pfn);
        self.vmstat.inc(VmItem::NrFreePages);
        self.vmstat.inc(VmItem::Pgfree);
        self.leave(prev);
    }

    /// put_page: drop a reference; the last one takes the page off the LRU and frees it
    /// (__page_cache_release).
    #[inline(always)]
    pub fn put_page(&mut self, pfn: Pfn) {
        let (pfn, last) = self.put_page_testzero(pfn);
        if last {
            self.put_page_last(pfn);
        }
    }

    /// folio_put_testzero: drop a reference on the folio of `pfn` (a tail page's
    /// reference is its folio's). Returns the folio's head and whether that was the last
    /// reference (or one too many).
    #[inline(always)]
    pub(crate) fn put_page_testzero(&mut self, pfn: Pfn) -> (Pfn, bool) {
        self.charge_atomic();
        let pfn = self.folio_head(pfn);
        let p = &mut self.mem[pfn as usize];
        p.refcount -= 1;
        (pfn, p.refcount <= 0)
    }

    /// `put_page` dropped the last reference (or one too many).
    #[inline(never)]
    fn put_page_last(&mut self, pfn: Pfn) {
        let p = &self.mem[pfn as usize];
        assert!(p.refcount >= 0, "put_page underflow pfn={}", pfn);
        if p.refcount == 0 {
            if p.test(pg::LRU) && !self.debug_skip_lru_del_on_free {
                self.del_page_from_lru_locked(pfn);
            }
            self.free_hot_cold_page(pfn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// build_zonelists: each node's fallback order is the local node, then the others by
    /// distance (|a - b| here), the lower id first on a tie; and a CPU's zonelist is that of
    /// its node, shared (the same slice each time: holding it allocates nothing).
    #[test]
    fn zonelists_start_local_then_by_distance_and_are_shared() {
        let sets = [
            "machine.nodes=4",
            "machine.cpus_per_node=1",
            "machine.memory_per_node=16MiB",
        ]
        .map(String::from);
        let sc = crate::scenario::load_scenario("anon-pressure", &sets).unwrap();
        let mut sim = Sim::new(&sc, crate::sim::Features::patched()).unwrap();
        let expect: [&[usize]; 4] = [&[0, 1, 2, 3], &[1, 0, 2, 3], &[2, 1, 3, 0], &[3, 2, 1, 0]];
        for (cpu, want) in expect.iter().enumerate() {
            sim.cur.cpu = cpu;
            assert_eq!(sim.cur_node(), cpu);
            let zl = sim.zonelist_nodes();
            assert_eq!(&*zl, *want, "node {cpu}");
            assert!(std::rc::Rc::ptr_eq(&zl, &sim.zonelist_nodes()));
        }
    }

    /// Hand-derived: 2 GiB in one node is 524,288 pages; min_free_kbytes =
    /// int_sqrt(2,097,152 kB × 16) = 5,792 kB = 1,448 pages; the distance is min / 4 = 362,
    /// or from v4.6 0.1 % of the node, 524. Two nodes of 1 GiB split min by size and take
    /// 0.1 % of their own pages (262). At 512 GiB, sqrt gives 92,681 kB: 65,536 before 5.7.
    #[test]
    fn boot_watermarks_follow_the_eras_formulas() {
        let w = |p: &[u64], s, b| {
            boot_watermarks(p, WatermarkRules::defaults(s, b))
                .iter()
                .map(|w| (w.min, w.low, w.high))
                .collect::<Vec<_>>()
        };
        assert_eq!(w(&[524_288], false, false), [(1448, 1810, 2172)]);
        assert_eq!(w(&[524_288], true, false), [(1448, 1972, 2496)]);
        assert_eq!(
            w(&[262_144, 262_144], true, true),
            [(724, 986, 1248), (724, 986, 1248)]
        );
        // Small machines keep min / 4 (0.1 % of 16,384 pages is 16 < 256 / 4 = 64).
        assert_eq!(w(&[16_384], true, false), w(&[16_384], false, false));
        let big = 512u64 << 18; // 512 GiB in pages
        assert_eq!(w(&[big], false, false)[0].0, 65_536 / 4);
        assert_eq!(w(&[big], false, true)[0].0, 92_681 / 4);
    }
}
