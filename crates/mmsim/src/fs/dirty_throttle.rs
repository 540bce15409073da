//! IO-less dirty throttling (mm/page-writeback.c since 3.2: "writeback: IO-less
//! balance_dirty_pages()", "writeback: dirty position control", "writeback: dirty rate
//! control"; the memory cgroups' writeback domains of cgroup writeback since 4.2). Rule
//! `io-less-dirty-throttling`; off, `writeback.rs`'s simplified throttle (a writer above
//! vm.dirty_ratio pauses 10 ms at a time) stands in for 2.6.30's balance_dirty_pages.
//!
//! - Each (memory cgroup, device) pair that dirties pages has a bdi_writeback (`Wb`: the
//!   device's root wb for the root cgroup, a cgwb for another): its reclaimable (dirty) and
//!   writeback pages, its dirtied and written counts, its write bandwidth estimate
//!   (wb_update_write_bandwidth: written pages per second over ~3 s, smoothed), its
//!   dirty_ratelimit (wb_update_dirty_ratelimit: every 200 ms the rate that would balance
//!   the dirtying with the writeout, approached in steps) and its share of the domains'
//!   recent writeout completions (flexible proportions, halved every 3 s).
//! - balance_dirty_pages_ratelimited: a writer runs balance_dirty_pages once it has dirtied
//!   `nr_dirtied_pause` pages (32 at first; 8 while its wb is over its limits).
//! - balance_dirty_pages: per domain (the global one, and the writer's memory cgroup's) the
//!   dirty and background thresholds; below the freerun ceiling ((thresh + bg) / 2) of both
//!   the writer goes on, polling again after about √(thresh − dirty) pages. Above it the
//!   flusher is started and the writer is paused for the time its pages take at
//!   task_ratelimit = dirty_ratelimit × pos_ratio, where pos_ratio (wb_position_ratio) is
//!   1 at the setpoint ((freerun + limit) / 2), falls as a cubic to 0 at the limit, and is
//!   scaled by the wb's own dirty pages against its share of the threshold; the domain
//!   whose pos_ratio is lower throttles. Pauses are at most 200 ms (wb_max_pause: less
//!   for a small dirty pool); a pause shorter than wb_min_pause is not taken but carried.
//!   At or above the limit (task_ratelimit 0) the writer sleeps the longest pause and
//!   looks again before it dirties another page.
//!
//! Time is in jiffies of HZ = 1000; rates in pages per second.

use crate::machine::Ps;
use crate::mm::memcontrol::{MemcgId, NO_MEMCG, ROOT_MEM_CGROUP};
use crate::mm::page::Pfn;
use crate::mm::vmstat::VmItem;
use crate::sim::Sim;

/// HZ of the jiffies the controller computes in.
const HZ: u64 = 1000;
/// One jiffy, ps.
const JIFFY_PS: Ps = 1_000_000_000;
/// BANDWIDTH_INTERVAL: the bandwidth and ratelimit estimates are updated at most this
/// often (jiffies; 200 ms).
const BANDWIDTH_INTERVAL: u64 = HZ / 5;
/// MAX_PAUSE: the longest throttling sleep (jiffies; 200 ms).
const MAX_PAUSE: u64 = HZ / 5;
/// RATELIMIT_CALC_SHIFT: pos_ratio's fixed point.
const RATELIMIT_CALC_SHIFT: u32 = 10;
/// INIT_BW: the write bandwidth and dirty ratelimit a wb starts with (100 MB/s, pages/s).
const INIT_BW: u64 = 100 << (20 - 12);
/// DIRTY_POLL_THRESH (128 KiB in pages).
const DIRTY_POLL_THRESH: u64 = 128 >> (12 - 10);
/// VM_COMPLETIONS_PERIOD_LEN: the writeout proportions halve every 3 s (jiffies).
const VM_COMPLETIONS_PERIOD_LEN: u64 = 3 * HZ;
/// A new task's nr_dirtied_pause (copy_process: 128 KiB in pages).
pub const INIT_NR_DIRTIED_PAUSE: u32 = 32;

/// A count of events that halves every VM_COMPLETIONS_PERIOD_LEN (fprop_local_percpu /
/// fprop_global of lib/flex_proportions.c, brought to the current period when read).
#[derive(Clone, Copy, Debug, Default)]
struct Prop {
    events: u64,
    period: u64,
}

impl Prop {
    /// Age to `period` (halve once per period passed).
    fn reflect(&mut self, period: u64) {
        if period > self.period {
            let n = period - self.period;
            self.events = if n >= 64 { 0 } else { self.events >> n };
            self.period = period;
        }
    }

    /// `nr` events in `period` (__fprop_add_percpu).
    fn add(&mut self, period: u64, nr: u64) {
        self.reflect(period);
        self.events += nr;
    }
}

/// A bdi_writeback's counters and estimates.
#[derive(Clone, Debug)]
pub struct Wb {
    /// WB_RECLAIMABLE: dirty pages.
    pub reclaimable: i64,
    /// WB_WRITEBACK: pages under writeback.
    pub writeback: i64,
    /// WB_DIRTIED.
    pub dirtied: u64,
    /// WB_WRITTEN.
    pub written: u64,
    bw_time_stamp: u64,
    dirtied_stamp: u64,
    written_stamp: u64,
    /// write_bandwidth, pages/s.
    pub write_bandwidth: u64,
    /// avg_write_bandwidth, pages/s.
    pub avg_write_bandwidth: u64,
    /// dirty_ratelimit, pages/s.
    pub dirty_ratelimit: u64,
    balanced_dirty_ratelimit: u64,
    /// Over its limits in a domain that is over its threshold (wb->dirty_exceeded).
    pub dirty_exceeded: bool,
    /// Its share of the global domain's writeout completions.
    completions: Prop,
    /// Its share of its memory cgroup domain's completions.
    memcg_completions: Prop,
}

impl Wb {
    fn new(now: u64) -> Wb {
        Wb {
            reclaimable: 0,
            writeback: 0,
            dirtied: 0,
            written: 0,
            bw_time_stamp: now,
            dirtied_stamp: 0,
            written_stamp: 0,
            write_bandwidth: INIT_BW,
            avg_write_bandwidth: INIT_BW,
            dirty_ratelimit: INIT_BW,
            balanced_dirty_ratelimit: INIT_BW,
            dirty_exceeded: false,
            completions: Prop::default(),
            memcg_completions: Prop::default(),
        }
    }

    /// Dirty and writeback pages (wb_dirty).
    fn dirty(&self) -> u64 {
        (self.reclaimable + self.writeback).max(0) as u64
    }
}

/// A wb_domain: the writeout completions of its wbs and its hard dirty limit
/// (dom->dirty_limit, update_dirty_limit).
#[derive(Clone, Copy, Debug, Default)]
struct Domain {
    completions: Prop,
    dirty_limit: u64,
    dirty_limit_tstamp: u64,
    initialized: bool,
}

/// The writeback state of the controller: every wb and domain.
#[derive(Clone, Debug, Default)]
pub struct DirtyThrottle {
    /// The wbs of each device, by memory cgroup.
    wbs: Vec<Vec<Option<Box<Wb>>>>,
    global: Domain,
    memcg_domains: Vec<Domain>,
}

/// One domain's figures in a balance_dirty_pages pass (struct dirty_throttle_control).
#[derive(Clone, Copy, Debug, Default)]
struct Dtc {
    dirty: u64,
    thresh: u64,
    bg_thresh: u64,
    limit: u64,
    wb_dirty: u64,
    wb_thresh: u64,
    pos_ratio: u64,
    dirty_exceeded: bool,
    freerun: bool,
}

/// dirty_freerun_ceiling: the midpoint of the background and dirty thresholds.
fn dirty_freerun_ceiling(thresh: u64, bg_thresh: u64) -> u64 {
    (thresh + bg_thresh) / 2
}

/// dirty_poll_interval: pages to dirty before looking again, about √(thresh − dirty).
fn dirty_poll_interval(dirty: u64, thresh: u64) -> u64 {
    if thresh > dirty {
        1 << ((thresh - dirty).ilog2() >> 1)
    } else {
        1
    }
}

/// pos_ratio_polynom: 1 + ((setpoint − dirty) / (limit − setpoint))³, in [0, 2], fixed
/// point RATELIMIT_CALC_SHIFT.
fn pos_ratio_polynom(setpoint: u64, dirty: u64, limit: u64) -> u64 {
    let one = 1i64 << RATELIMIT_CALC_SHIFT;
    let span = (limit as i64 - setpoint as i64) | 1;
    let x = ((setpoint as i64 - dirty as i64) << RATELIMIT_CALC_SHIFT) / span;
    let mut r = x;
    r = (r * x) >> RATELIMIT_CALC_SHIFT;
    r = (r * x) >> RATELIMIT_CALC_SHIFT;
    r += one;
    r.clamp(0, 2 * one) as u64
}

impl DirtyThrottle {
    fn slot(memcg: MemcgId) -> usize {
        if memcg == NO_MEMCG {
            ROOT_MEM_CGROUP as usize
        } else {
            memcg as usize
        }
    }

    /// The wb of (`memcg`, `dev`), created on first use (cgwb_create).
    pub fn wb_mut(&mut self, memcg: MemcgId, dev: usize, now: u64) -> &mut Wb {
        if self.wbs.len() <= dev {
            self.wbs.resize(dev + 1, Vec::new());
        }
        let v = &mut self.wbs[dev];
        let i = Self::slot(memcg);
        if v.len() <= i {
            v.resize(i + 1, None);
        }
        v[i].get_or_insert_with(|| Box::new(Wb::new(now)))
    }

    /// The wb of (`memcg`, `dev`), if it exists.
    pub fn wb(&self, memcg: MemcgId, dev: usize) -> Option<&Wb> {
        self.wbs
            .get(dev)
            .and_then(|v| v.get(Self::slot(memcg)))
            .and_then(|w| w.as_deref())
    }

    /// WB_RECLAIMABLE and WB_WRITEBACK summed over every wb (the invariant checker's).
    pub fn totals(&self) -> (i64, i64) {
        self.wbs
            .iter()
            .flatten()
            .flatten()
            .fold((0, 0), |(d, w), wb| (d + wb.reclaimable, w + wb.writeback))
    }

    /// The wbs of device `dev`.
    fn dev_wbs(&mut self, dev: usize) -> impl Iterator<Item = &mut Box<Wb>> {
        self.wbs.get_mut(dev).into_iter().flatten().flatten()
    }

    fn memcg_domain(&mut self, memcg: MemcgId) -> &mut Domain {
        let i = memcg as usize;
        if self.memcg_domains.len() <= i {
            self.memcg_domains.resize(i + 1, Domain::default());
        }
        &mut self.memcg_domains[i]
    }
}

/// Jiffies at `ps`.
fn jiffies(ps: Ps) -> u64 {
    ps / JIFFY_PS
}

impl Sim {
    /// The device the pages of inode `ino` are written to, if it is dirty-accounted.
    fn wb_dev_of(&self, ino: u32) -> Option<usize> {
        let inode = self.inodes.get(ino as usize)?.as_ref()?;
        if !inode.mapping.account_dirty {
            return None;
        }
        self.fss[inode.fs].device
    }

    /// The memory cgroup whose wb writes what `memcg` dirties: itself with cgroup
    /// writeback; else the root (inode_to_wb is the bdi's root wb when the memory
    /// controller is not on the default hierarchy, and before 4.2).
    #[inline]
    pub(crate) fn wb_memcg(&self, memcg: MemcgId) -> MemcgId {
        if self.cgroup_writeback() {
            memcg
        } else {
            ROOT_MEM_CGROUP
        }
    }

    /// Cgroup writeback (v4.2, rule `cgroup-writeback`) on the unified hierarchy: each
    /// memory cgroup's dirty pages are written by its own wb and held to its own writeback
    /// domain. Not on cgroup v1's legacy hierarchy (`cgroup_version = 1`).
    #[inline]
    pub fn cgroup_writeback(&self) -> bool {
        self.features.cgroup_writeback && !self.cgroup_v1
    }

    /// The wb page `pfn` of `ino` is accounted to (its memory cgroup's on its inode's
    /// device), if the inode's pages are dirty-accounted.
    #[inline]
    fn page_wb(&mut self, pfn: Pfn, ino: u32) -> Option<&mut Wb> {
        let dev = self.wb_dev_of(ino)?;
        let now = jiffies(self.now());
        let memcg = self.wb_memcg(self.mem[pfn as usize].memcg);
        Some(self.dirty_throttle.wb_mut(memcg, dev, now))
    }

    /// WB_RECLAIMABLE and WB_DIRTIED of page `pfn` of `ino` as it is dirtied
    /// (account_page_dirtied's wb_stat_mod).
    pub(crate) fn wb_page_dirtied(&mut self, pfn: Pfn, ino: u32, nr: u64) {
        if let Some(w) = self.page_wb(pfn, ino) {
            w.reclaimable += nr as i64;
            w.dirtied += nr;
            // folio_account_dirtied: the task that dirtied it counts it towards its next
            // balance_dirty_pages pass.
            if let Some(t) = self.cur.task {
                let t = &mut self.tasks[t];
                t.nr_dirtied = t.nr_dirtied.saturating_add(nr as _);
            }
        }
    }

    /// WB_RECLAIMABLE as a dirty page is cleaned (account_page_cleaned,
    /// folio_clear_dirty_for_io).
    pub(crate) fn wb_page_cleaned(&mut self, pfn: Pfn, ino: u32, nr: u64) {
        if let Some(w) = self.page_wb(pfn, ino) {
            w.reclaimable -= nr as i64;
        }
    }

    /// WB_WRITEBACK as writeback starts on a page (__folio_start_writeback).
    pub(crate) fn wb_page_writeback_start(&mut self, pfn: Pfn, ino: u32, nr: u64) {
        if let Some(w) = self.page_wb(pfn, ino) {
            w.writeback += nr as i64;
        }
    }

    /// WB_WRITEBACK, WB_WRITTEN and the writeout completions as writeback of a page ends
    /// (__folio_end_writeback → __wb_writeout_add: the global domain's and the memory
    /// cgroup domain's proportions).
    pub(crate) fn wb_page_writeback_end(&mut self, pfn: Pfn, ino: u32, nr: u64) {
        let Some(dev) = self.wb_dev_of(ino) else {
            return;
        };
        let now = jiffies(self.now());
        let period = now / VM_COMPLETIONS_PERIOD_LEN;
        let memcg = self.wb_memcg(self.mem[pfn as usize].memcg);
        let dt = &mut self.dirty_throttle;
        let w = dt.wb_mut(memcg, dev, now);
        w.writeback -= nr as i64;
        w.written += nr;
        w.completions.add(period, nr);
        w.memcg_completions.add(period, nr);
        dt.global.completions.add(period, nr);
        if memcg != ROOT_MEM_CGROUP && memcg != NO_MEMCG {
            dt.memcg_domain(memcg).completions.add(period, nr);
        }
    }

    /// wb_update_bandwidth from the writeback path (do_writepages): the write bandwidth
    /// of each wb of `dev` whose last estimate is BANDWIDTH_INTERVAL old.
    pub(crate) fn wb_update_bandwidth_dev(&mut self, dev: usize) {
        let now = jiffies(self.now());
        for w in self.dirty_throttle.dev_wbs(dev) {
            if now >= w.bw_time_stamp + BANDWIDTH_INTERVAL {
                let elapsed = now - w.bw_time_stamp;
                wb_update_write_bandwidth(w, elapsed);
                w.dirtied_stamp = w.dirtied;
                w.written_stamp = w.written;
                w.bw_time_stamp = now;
            }
        }
    }

    /// wb_bandwidth_estimate_start: writeback starting on `dev` after more than a second
    /// without any restarts its wbs' estimation period, so the idle time does not count as
    /// slow writeout.
    pub(crate) fn wb_bandwidth_estimate_start(&mut self, dev: usize) {
        let now = jiffies(self.now());
        for w in self.dirty_throttle.dev_wbs(dev) {
            if now > w.bw_time_stamp + HZ && w.writeback == 0 {
                w.dirtied_stamp = w.dirtied;
                w.written_stamp = w.written;
                w.bw_time_stamp = now;
            }
        }
    }

    /// balance_dirty_pages_ratelimited under `io-less-dirty-throttling`, after the
    /// running task wrote to `ino` (the pages it newly dirtied are counted in
    /// `Task::nr_dirtied` as they are dirtied): the pause it must sleep, if any. A task
    /// whose last pass ended at or over the limit (`bdp_pending`) runs it again.
    pub(crate) fn balance_dirty_pages_io_less(&mut self, ino: u32) -> Option<Ps> {
        let dev = self.wb_dev_of(ino)?;
        let tid = self.cur.task?;
        let memcg = self.wb_memcg(self.current_memcg());
        let now = jiffies(self.now());
        let pending = std::mem::take(&mut self.tasks[tid].bdp_pending);
        let exceeded = self
            .dirty_throttle
            .wb(memcg, dev)
            .is_some_and(|w| w.dirty_exceeded);
        let t = &self.tasks[tid];
        let mut ratelimit = t.nr_dirtied_pause;
        if exceeded {
            ratelimit = ratelimit.min(DIRTY_POLL_THRESH as u32 >> 2);
        }
        if pending == 0 && t.nr_dirtied < ratelimit {
            return None;
        }
        let pages_dirtied = if pending > 0 { pending } else { t.nr_dirtied };
        self.dirty_throttle.wb_mut(memcg, dev, now);
        self.balance_dirty_pages(tid, memcg, dev, u64::from(pages_dirtied), now)
    }

    /// One domain's thresholds (domain_dirty_limits), its freerun state and its hard limit
    /// (hard_dirty_limit: the larger of the threshold and dom->dirty_limit).
    fn bdp_domain(&mut self, memcg: Option<MemcgId>) -> Dtc {
        let (dirty, bg_thresh, thresh) = match memcg {
            None => {
                let (bg, thresh) = self.global_dirty_limits();
                let dirty = (self.vmstat.get(VmItem::NrDirty)
                    + self.vmstat.get(VmItem::NrWriteback))
                .max(0) as u64;
                (dirty, bg, thresh)
            }
            Some(m) => self.memcg_dirty_domain(m),
        };
        let dom = match memcg {
            None => {
                let g = &mut self.dirty_throttle.global;
                if !g.initialized {
                    // writeback_set_ratelimit at boot: the global limit starts at the
                    // threshold.
                    g.initialized = true;
                    g.dirty_limit = thresh;
                }
                *g
            }
            Some(m) => *self.dirty_throttle.memcg_domain(m),
        };
        Dtc {
            dirty,
            thresh,
            bg_thresh,
            limit: thresh.max(dom.dirty_limit),
            freerun: dirty <= dirty_freerun_ceiling(thresh, bg_thresh),
            ..Dtc::default()
        }
    }

    /// domain_update_dirty_limit: at most every BANDWIDTH_INTERVAL, the domain's hard limit
    /// follows a rising threshold at once and a falling one by 1/32 of the gap
    /// (update_dirty_limit; never below the dirty pages).
    fn domain_update_dirty_limit(&mut self, memcg: Option<MemcgId>, dtc: &Dtc, now: u64) {
        let dom = match memcg {
            None => &mut self.dirty_throttle.global,
            Some(m) => self.dirty_throttle.memcg_domain(m),
        };
        if now < dom.dirty_limit_tstamp + BANDWIDTH_INTERVAL {
            return;
        }
        if dom.dirty_limit < dtc.thresh {
            dom.dirty_limit = dtc.thresh;
        } else {
            let target = dtc.thresh.max(dtc.dirty);
            if dom.dirty_limit > target {
                dom.dirty_limit -= (dom.dirty_limit - target) >> 5;
            }
        }
        dom.dirty_limit_tstamp = now;
    }

    /// wb_dirty_limits + wb_position_ratio of the wb (`memcg`, `dev`) in domain `dtc`
    /// (global when `memcg_domain` is false).
    fn bdp_wb_limits(
        &mut self,
        dtc: &mut Dtc,
        memcg: MemcgId,
        dev: usize,
        memcg_domain: bool,
        now: u64,
    ) {
        let period = now / VM_COMPLETIONS_PERIOD_LEN;
        let (num, den) = {
            let dt = &mut self.dirty_throttle;
            let den = if memcg_domain {
                let d = dt.memcg_domain(memcg);
                d.completions.reflect(period);
                d.completions.events
            } else {
                dt.global.completions.reflect(period);
                dt.global.completions.events
            };
            let w = dt.wb_mut(memcg, dev, now);
            let p = if memcg_domain {
                &mut w.memcg_completions
            } else {
                &mut w.completions
            };
            p.reflect(period);
            (p.events.min(den), den)
        };
        // __wb_calc_thresh: the wb's share of the threshold by its share of completions.
        dtc.wb_thresh = if den == 0 {
            0
        } else {
            (u128::from(dtc.thresh) * u128::from(num) / u128::from(den)) as u64
        };
        let w = self.dirty_throttle.wb(memcg, dev).expect("created");
        dtc.wb_dirty = w.dirty();
        let write_bw = w.avg_write_bandwidth;
        dtc.dirty_exceeded = dtc.wb_dirty > dtc.wb_thresh && dtc.dirty > dtc.thresh;
        // wb_position_ratio.
        dtc.pos_ratio = 0;
        let freerun = dirty_freerun_ceiling(dtc.thresh, dtc.bg_thresh);
        if dtc.dirty >= dtc.limit {
            return;
        }
        let setpoint = (freerun + dtc.limit) / 2;
        let mut pos_ratio = pos_ratio_polynom(setpoint, dtc.dirty, dtc.limit);
        // The wb's control line: its setpoint is the domain's scaled by its share (a wb
        // idle for long gets at least an eighth of the headroom left).
        let wb_thresh = dtc
            .wb_thresh
            .min(dtc.thresh)
            .max((dtc.limit - dtc.dirty) / 8);
        let x = (u128::from(wb_thresh) << 16) / u128::from(dtc.thresh | 1);
        let wb_setpoint = ((u128::from(setpoint) * x) >> 16) as u64;
        // (thresh − wb_thresh: the kernel's unsigned subtraction would wrap when the
        // headroom term raises wb_thresh above a threshold that fell under the hard
        // limit; here it is 0, the single-wb span.)
        let span = (((u128::from(dtc.thresh.saturating_sub(wb_thresh)) + 8 * u128::from(write_bw))
            * x)
            >> 16)
            .min(u128::from(u64::MAX / 4)) as u64;
        let x_intercept = wb_setpoint + span;
        if dtc.wb_dirty < x_intercept - span / 4 {
            pos_ratio = (u128::from(pos_ratio) * u128::from(x_intercept - dtc.wb_dirty)
                / u128::from((x_intercept - wb_setpoint) | 1)) as u64;
        } else {
            pos_ratio /= 4;
        }
        // The wb's reserve area: keep its pool from running dry.
        let x_intercept = wb_thresh / 2;
        if dtc.wb_dirty < x_intercept {
            if dtc.wb_dirty > x_intercept / 8 {
                pos_ratio = pos_ratio * x_intercept / dtc.wb_dirty;
            } else {
                pos_ratio *= 8;
            }
        }
        dtc.pos_ratio = pos_ratio;
    }

    /// balance_dirty_pages: the pause (ps) of task `tid` after it dirtied `pages_dirtied`
    /// pages through the wb (`memcg`, `dev`), or None.
    fn balance_dirty_pages(
        &mut self,
        tid: crate::sched::TaskId,
        memcg: MemcgId,
        dev: usize,
        pages_dirtied: u64,
        mut now: u64,
    ) -> Option<Ps> {
        let with_memcg = memcg != ROOT_MEM_CGROUP && memcg != NO_MEMCG;
        let mut gdtc = self.bdp_domain(None);
        let mut mdtc = with_memcg.then(|| self.bdp_domain(Some(memcg)));
        let nr_reclaimable = self.vmstat.get(VmItem::NrDirty).max(0) as u64;
        if nr_reclaimable > gdtc.bg_thresh {
            self.wb_start_background_writeback(dev);
        }
        if gdtc.freerun && mdtc.is_none_or(|m| m.freerun) {
            let mut intv = dirty_poll_interval(gdtc.dirty, gdtc.thresh);
            if let Some(m) = &mdtc {
                intv = intv.min(dirty_poll_interval(m.dirty, m.thresh));
            }
            let t = &mut self.tasks[tid];
            t.dirty_paused_when = now;
            t.nr_dirtied = 0;
            t.nr_dirtied_pause = intv.min(u64::from(u32::MAX)) as u32;
            return None;
        }
        self.wb_start_background_writeback(dev);
        self.bdp_wb_limits(&mut gdtc, memcg, dev, false, now);
        let mut sdtc = gdtc;
        if let Some(m) = mdtc.as_mut() {
            self.bdp_wb_limits(m, memcg, dev, true, now);
            if m.pos_ratio < gdtc.pos_ratio {
                sdtc = *m;
            }
        }
        let exceeded = gdtc.dirty_exceeded || mdtc.is_some_and(|m| m.dirty_exceeded);
        let bw_due = {
            let w = self.dirty_throttle.wb_mut(memcg, dev, now);
            w.dirty_exceeded = exceeded;
            now >= w.bw_time_stamp + BANDWIDTH_INTERVAL
        };
        if bw_due {
            // __wb_update_bandwidth(gdtc, mdtc, update_ratelimit).
            self.domain_update_dirty_limit(None, &gdtc, now);
            if let Some(m) = &mdtc {
                self.domain_update_dirty_limit(Some(memcg), m, now);
            }
            let w = self.dirty_throttle.wb_mut(memcg, dev, now);
            let elapsed = (now - w.bw_time_stamp).max(1);
            wb_update_dirty_ratelimit(w, &gdtc, elapsed);
            if let Some(m) = &mdtc {
                wb_update_dirty_ratelimit(w, m, elapsed);
            }
            wb_update_write_bandwidth(w, elapsed);
            w.dirtied_stamp = w.dirtied;
            w.written_stamp = w.written;
            w.bw_time_stamp = now;
        }
        let w = self.dirty_throttle.wb_mut(memcg, dev, now);
        let dirty_ratelimit = w.dirty_ratelimit;
        let task_ratelimit = (dirty_ratelimit * sdtc.pos_ratio) >> RATELIMIT_CALC_SHIFT;
        let max_pause = wb_max_pause(w, sdtc.wb_dirty);
        let (min_pause, nr_dirtied_pause) =
            wb_min_pause(w, max_pause, task_ratelimit, dirty_ratelimit);
        let t = &mut self.tasks[tid];
        let pause = if let Some(period) = (HZ * pages_dirtied).checked_div(task_ratelimit) {
            let mut pause = period as i64;
            if t.dirty_paused_when != 0 {
                pause -= now as i64 - t.dirty_paused_when as i64;
            }
            if pause < min_pause as i64 {
                // Too short to sleep: the time is made up in later passes.
                if pause < -(HZ as i64) {
                    t.dirty_paused_when = now;
                    t.nr_dirtied = 0;
                } else if period > 0 {
                    t.dirty_paused_when += period;
                    t.nr_dirtied = 0;
                } else if u64::from(t.nr_dirtied_pause) <= pages_dirtied {
                    t.nr_dirtied_pause = t.nr_dirtied_pause.saturating_add(pages_dirtied as u32);
                }
                return None;
            }
            let mut pause = pause as u64;
            if pause > max_pause {
                // For an occasional drop of task_ratelimit.
                now += (pause - max_pause).min(max_pause);
                pause = max_pause;
            }
            pause
        } else {
            max_pause
        };
        t.dirty_paused_when = now + pause;
        t.nr_dirtied = 0;
        t.nr_dirtied_pause = nr_dirtied_pause.min(u64::from(u32::MAX)) as u32;
        // At or over the limit (task_ratelimit 0) the loop looks again after the sleep,
        // unless the wb has next to nothing in flight (wb_stat_error).
        let ncpu = self.cpus.len() as u64;
        let wb_stat_error = 8 * (1 + ncpu.max(1).ilog2() as u64) * ncpu;
        if task_ratelimit == 0 && sdtc.wb_dirty > wb_stat_error {
            t.bdp_pending = pages_dirtied.clamp(1, u64::from(u32::MAX)) as u32;
        }
        if with_memcg {
            self.memcgs[memcg as usize].dirty_throttled += 1;
        }
        Some(pause.max(1) * JIFFY_PS)
    }
}

/// wb_update_write_bandwidth: the pages written over `elapsed` jiffies, averaged over a
/// period of ~3 s, with a second level of smoothing.
fn wb_update_write_bandwidth(w: &mut Wb, elapsed: u64) {
    let period = (3 * HZ).next_power_of_two();
    let avg0 = w.avg_write_bandwidth;
    let old = w.write_bandwidth;
    let written = w.written - w.written_stamp.min(w.written);
    let mut bw = written * HZ;
    let mut avg = avg0;
    if elapsed > period {
        bw /= elapsed;
        avg = bw;
    } else {
        bw += old * (period - elapsed);
        bw >>= period.ilog2();
        if avg > old && old >= bw {
            avg -= (avg - old) >> 3;
        }
        if avg < old && old <= bw {
            avg += (old - avg) >> 3;
        }
    }
    w.write_bandwidth = bw;
    w.avg_write_bandwidth = avg.max(1);
}

/// wb_update_dirty_ratelimit: the rate that balances the dirtying with the writeout
/// (balanced_dirty_ratelimit), and a step of dirty_ratelimit towards it.
fn wb_update_dirty_ratelimit(w: &mut Wb, dtc: &Dtc, elapsed: u64) {
    let freerun = dirty_freerun_ceiling(dtc.thresh, dtc.bg_thresh);
    let setpoint = (freerun + dtc.limit) / 2;
    let dirty = dtc.dirty;
    let write_bw = w.avg_write_bandwidth;
    let mut dirty_ratelimit = w.dirty_ratelimit;
    let dirty_rate = (w.dirtied - w.dirtied_stamp.min(w.dirtied)) * HZ / elapsed;
    let task_ratelimit = ((dirty_ratelimit * dtc.pos_ratio) >> RATELIMIT_CALC_SHIFT) + 1;
    let mut balanced =
        (u128::from(task_ratelimit) * u128::from(write_bw) / u128::from(dirty_rate | 1)) as u64;
    if balanced > write_bw {
        balanced = write_bw;
    }
    let mut step = 0;
    if dirty < setpoint {
        let x = w.balanced_dirty_ratelimit.min(balanced).min(task_ratelimit);
        if dirty_ratelimit < x {
            step = x - dirty_ratelimit;
        }
    } else {
        let x = w.balanced_dirty_ratelimit.max(balanced).max(task_ratelimit);
        if dirty_ratelimit > x {
            step = dirty_ratelimit - x;
        }
    }
    let shift = dirty_ratelimit / (2 * step + 1);
    step = if shift < 64 {
        (step >> shift).div_ceil(8)
    } else {
        0
    };
    if dirty_ratelimit < balanced {
        dirty_ratelimit += step;
    } else {
        dirty_ratelimit -= step.min(dirty_ratelimit);
    }
    w.dirty_ratelimit = dirty_ratelimit.max(1);
    w.balanced_dirty_ratelimit = balanced;
}

/// wb_max_pause: at most MAX_PAUSE, less when the wb's dirty pool is small against its
/// bandwidth (so that the disk does not go idle).
fn wb_max_pause(w: &Wb, wb_dirty: u64) -> u64 {
    let bw = w.avg_write_bandwidth;
    let t = wb_dirty / (1 + bw / (1 + HZ / 8).next_power_of_two()) + 1;
    t.min(MAX_PAUSE)
}

/// wb_min_pause: the shortest pause worth taking and the pages to dirty before the next
/// pass (nr_dirtied_pause): about 10 ms of dirtying for one writer, more for many.
fn wb_min_pause(w: &Wb, max_pause: u64, task_ratelimit: u64, dirty_ratelimit: u64) -> (u64, u64) {
    let hi = w.avg_write_bandwidth.max(1).ilog2() as i64;
    let lo = dirty_ratelimit.max(1).ilog2() as i64;
    let mut t = (HZ / 100).max(1) as i64;
    if hi > lo {
        t += (hi - lo) * (10 * HZ as i64) / 1024;
    }
    t = t.min(1 + max_pause as i64 / 2);
    let hz_pow = HZ.next_power_of_two() as i64;
    let mut pages = dirty_ratelimit as i64 * t / hz_pow;
    if pages < DIRTY_POLL_THRESH as i64 {
        t = max_pause as i64;
        pages = dirty_ratelimit as i64 * t / hz_pow;
        if pages > DIRTY_POLL_THRESH as i64 {
            pages = DIRTY_POLL_THRESH as i64;
            t = HZ as i64 * DIRTY_POLL_THRESH as i64 / dirty_ratelimit.max(1) as i64;
        }
    }
    let pause = HZ as i64 * pages / (task_ratelimit as i64 + 1);
    if pause > max_pause as i64 {
        t = max_pause as i64;
        pages = task_ratelimit as i64 * t / hz_pow;
    }
    let min = if pages >= DIRTY_POLL_THRESH as i64 {
        1 + t / 2
    } else {
        t
    };
    (min.max(0) as u64, pages.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_position_ratio_is_one_at_the_setpoint_and_zero_at_the_limit() {
        let one = 1 << RATELIMIT_CALC_SHIFT;
        // (To the rounding of the fixed point: the divisor is (limit − setpoint) | 1.)
        assert_eq!(pos_ratio_polynom(1000, 1000, 2000), one);
        assert!(pos_ratio_polynom(1000, 2000, 2000) <= 8);
        // Below the setpoint it rises towards 2, cubically: halfway down, 1 + 1/8.
        assert!(pos_ratio_polynom(1000, 500, 2000).abs_diff(one + one / 8) <= 2);
        assert!(pos_ratio_polynom(1000, 0, 2000).abs_diff(2 * one) <= 8);
        assert_eq!(pos_ratio_polynom(1000, 0, 1500), 2 * one, "clamped at 2");
        assert!(pos_ratio_polynom(1000, 1500, 2000) < one);
    }

    #[test]
    fn the_poll_interval_is_about_the_square_root_of_the_headroom() {
        assert_eq!(dirty_poll_interval(0, 1 << 20), 1 << 10);
        assert_eq!(dirty_poll_interval(1000, 1000), 1);
        assert_eq!(dirty_poll_interval(0, 100), 8);
    }

    #[test]
    fn the_write_bandwidth_estimate_converges_on_the_writeout_rate() {
        let mut w = Wb::new(0);
        // 12,800 pages/s (50 MiB/s) written, estimated every 200 ms.
        for _ in 0..100 {
            w.written += 12_800 / 5;
            wb_update_write_bandwidth(&mut w, BANDWIDTH_INTERVAL);
            w.written_stamp = w.written;
        }
        assert!(
            (12_000..=13_600).contains(&w.write_bandwidth),
            "{}",
            w.write_bandwidth
        );
        assert!(
            (12_000..=13_600).contains(&w.avg_write_bandwidth),
            "{}",
            w.avg_write_bandwidth
        );
    }

    #[test]
    fn proportions_halve_every_period() {
        let mut p = Prop {
            events: 1000,
            period: 0,
        };
        p.reflect(1);
        assert_eq!(p.events, 500);
        p.reflect(3);
        assert_eq!(p.events, 125);
        p.reflect(100);
        assert_eq!(p.events, 0);
    }

    #[test]
    fn pauses_are_bounded_by_max_pause() {
        let w = Wb::new(0);
        assert_eq!(wb_max_pause(&w, 1 << 30), MAX_PAUSE);
        // A tiny pool against 100 MB/s: a pause of a jiffy or two.
        assert!(wb_max_pause(&w, 10) <= 2);
        let (min, pages) = wb_min_pause(&w, MAX_PAUSE, INIT_BW, INIT_BW);
        assert!(min <= MAX_PAUSE && pages >= 1, "{min} {pages}");
    }
}
