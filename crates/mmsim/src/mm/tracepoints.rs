//! Tracepoint totals: what a tracefs capture of the reclaim tracepoints
//! (include/trace/events/vmscan.h) sums to over a run, under the tracepoints' names and
//! fields, so that a run can be set beside the same capture on a real kernel
//! (`examples/host_replay.rs --tracepoints`, which reads the tracefs text with
//! [`Tracepoints::add_trace_line`]). Counting only: nothing here changes what a run does.
//!
//! - `mm_vmscan_lru_shrink_inactive`: one event per shrink_inactive_list call that
//!   isolated something (classic reclaim) and per shrink_folio_list call of MGLRU's
//!   evict_folios (its retry of clean folios too, with the same `nr_scanned`), with
//!   reclaim_stat's counts in pages, and the events per reclaim priority (12 =
//!   DEF_PRIORITY … 0).
//! - `mm_vmscan_lru_shrink_active`: one event per shrink_active_list call: pages taken and
//!   deactivated.
//! - `mm_vmscan_throttled`: reclaim_throttle sleeps, by reason (mmsim throttles on
//!   VMSCAN_THROTTLE_WRITEBACK only), and the VMSCAN_THROTTLE_WRITEBACK sleeps nothing
//!   woke before their timeout (HZ/10: the event's `usect_delayed` equals its
//!   `usec_timeout`).
//! - `mm_vmscan_memcg_reclaim_begin`, `mm_vmscan_direct_reclaim_begin`: limit reclaims
//!   (try_to_free_mem_cgroup_pages, memory.max, memory.high and memory.reclaim) and direct
//!   reclaims of the page allocator.

use serde::{Deserialize, Serialize};

/// The number of reclaim priorities (DEF_PRIORITY 12 down to 0).
pub const NR_PRIORITIES: usize = 13;

/// Totals of `mm_vmscan_lru_shrink_inactive`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkInactive {
    /// Events.
    pub events: u64,
    /// Pages isolated (the event's nr_scanned).
    pub nr_scanned: u64,
    /// Pages reclaimed.
    pub nr_reclaimed: u64,
    /// Pages dirty or under writeback (reclaim_stat.nr_dirty).
    pub nr_dirty: u64,
    /// Pages under writeback passed over (reclaim_stat.nr_writeback).
    pub nr_writeback: u64,
    /// Pages under writeback already marked for immediate reclaim (nr_congested).
    pub nr_congested: u64,
    /// Pages kswapd met under writeback on a node flagged for it (nr_immediate).
    pub nr_immediate: u64,
    /// Anonymous pages activated (nr_activate_anon).
    #[serde(default)]
    pub nr_activate_anon: u64,
    /// File pages activated (nr_activate_file): referenced twice, under writeback or
    /// dirty where the writeback-activate rule applies, or not freeable.
    #[serde(default)]
    pub nr_activate_file: u64,
    /// Mapped pages referenced once, kept for another trip round the list (nr_ref_keep).
    #[serde(default)]
    pub nr_ref_keep: u64,
    /// Events by priority, index = priority (0 … 12).
    pub by_priority: [u64; NR_PRIORITIES],
}

/// Totals of `mm_vmscan_lru_shrink_active`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShrinkActive {
    /// Events.
    pub events: u64,
    /// Pages isolated from the active list.
    pub nr_taken: u64,
    /// Pages moved to the inactive list.
    pub nr_deactivated: u64,
}

/// Totals of `mm_vmscan_throttled`, by reason.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Throttled {
    /// VMSCAN_THROTTLE_WRITEBACK.
    pub writeback: u64,
    /// VMSCAN_THROTTLE_ISOLATED.
    pub isolated: u64,
    /// VMSCAN_THROTTLE_NOPROGRESS.
    pub noprogress: u64,
    /// VMSCAN_THROTTLE_CONGESTED.
    pub congested: u64,
    /// VMSCAN_THROTTLE_WRITEBACK sleeps that lasted their whole timeout: no more than
    /// SWAP_CLUSTER_MAX pages per sleeper completed writeback while they slept.
    #[serde(default)]
    pub writeback_timeouts: u64,
}

/// The tracepoint totals of a run (the report's `tracepoints`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tracepoints {
    /// mm_vmscan_lru_shrink_inactive.
    pub mm_vmscan_lru_shrink_inactive: ShrinkInactive,
    /// mm_vmscan_lru_shrink_active.
    pub mm_vmscan_lru_shrink_active: ShrinkActive,
    /// mm_vmscan_throttled.
    pub mm_vmscan_throttled: Throttled,
    /// mm_vmscan_memcg_reclaim_begin events.
    pub mm_vmscan_memcg_reclaim_begin: u64,
    /// mm_vmscan_direct_reclaim_begin events.
    pub mm_vmscan_direct_reclaim_begin: u64,
}

/// The `name=value` fields of a tracefs line after the event name.
fn fields(rest: &str) -> impl Iterator<Item = (&str, &str)> {
    rest.split_whitespace().filter_map(|f| f.split_once('='))
}

/// A numeric field, 0 when absent or not a number.
fn num(rest: &str, name: &str) -> u64 {
    fields(rest)
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

impl Tracepoints {
    /// Add one line of tracefs text output (`/sys/kernel/tracing/trace`) if it is one of
    /// the events above; other lines are ignored. Returns whether it was counted.
    pub fn add_trace_line(&mut self, line: &str) -> bool {
        // "<task>-<pid> [cpu] flags timestamp: event: fields"
        let Some((event, rest)) = line.split_once(": ").and_then(|(_, r)| r.split_once(": "))
        else {
            return false;
        };
        match event.trim() {
            "mm_vmscan_lru_shrink_inactive" => {
                let s = &mut self.mm_vmscan_lru_shrink_inactive;
                s.events += 1;
                s.nr_scanned += num(rest, "nr_scanned");
                s.nr_reclaimed += num(rest, "nr_reclaimed");
                s.nr_dirty += num(rest, "nr_dirty");
                s.nr_writeback += num(rest, "nr_writeback");
                s.nr_congested += num(rest, "nr_congested");
                s.nr_immediate += num(rest, "nr_immediate");
                s.nr_activate_anon += num(rest, "nr_activate_anon");
                s.nr_activate_file += num(rest, "nr_activate_file");
                s.nr_ref_keep += num(rest, "nr_ref_keep");
                let p = num(rest, "priority") as usize;
                s.by_priority[p.min(NR_PRIORITIES - 1)] += 1;
            }
            "mm_vmscan_lru_shrink_active" => {
                let s = &mut self.mm_vmscan_lru_shrink_active;
                s.events += 1;
                s.nr_taken += num(rest, "nr_taken");
                s.nr_deactivated += num(rest, "nr_deactivated");
            }
            "mm_vmscan_throttled" => {
                let reason = fields(rest)
                    .find(|(k, _)| *k == "reason")
                    .map_or("", |(_, v)| v);
                let t = &mut self.mm_vmscan_throttled;
                match reason {
                    "VMSCAN_THROTTLE_WRITEBACK" => {
                        t.writeback += 1;
                        let timeout = num(rest, "usec_timeout");
                        if timeout > 0 && num(rest, "usect_delayed") >= timeout {
                            t.writeback_timeouts += 1;
                        }
                    }
                    "VMSCAN_THROTTLE_ISOLATED" => t.isolated += 1,
                    "VMSCAN_THROTTLE_NOPROGRESS" => t.noprogress += 1,
                    "VMSCAN_THROTTLE_CONGESTED" => t.congested += 1,
                    _ => return false,
                }
            }
            "mm_vmscan_memcg_reclaim_begin" => self.mm_vmscan_memcg_reclaim_begin += 1,
            "mm_vmscan_direct_reclaim_begin" => self.mm_vmscan_direct_reclaim_begin += 1,
            _ => return false,
        }
        true
    }

    /// The tracefs events a capture needs for these totals (`events/<system>/<name>`).
    pub const EVENTS: [&'static str; 5] = [
        "vmscan/mm_vmscan_lru_shrink_inactive",
        "vmscan/mm_vmscan_lru_shrink_active",
        "vmscan/mm_vmscan_throttled",
        "vmscan/mm_vmscan_memcg_reclaim_begin",
        "vmscan/mm_vmscan_direct_reclaim_begin",
    ];
}
