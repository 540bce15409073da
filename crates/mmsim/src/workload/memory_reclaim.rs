//! `memory-reclaim`: a proactive-reclaim agent (senpai, TMO-like): writes `amount` to the
//! memory.reclaim file of the cgroup `target` `count` times, `interval` apart, after `delay`. Each
//! write is timed under the label "reclaim"; a write that could not reclaim that much
//! counts as an `EAGAIN` error of the task and the agent goes on.

use std::sync::Arc;

use super::{Footprint, Op, OpResult, Program};
use super::{Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    fmt_bytes, want_duration, want_size, want_str, want_u32, Env, Scenario, ScenarioError, View,
};

use serde::Serialize;

/// Parameters of the `memory-reclaim` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryReclaimSpec {
    /// The cgroup whose memory.reclaim is written (`target`): a `[[cgroups]]` name, or "/"
    /// (the root).
    pub cgroup: String,
    /// Bytes written to memory.reclaim each time (whole pages).
    pub amount_bytes: u64,
    /// Writes.
    pub count: u32,
    /// Sleep between writes, ns.
    pub interval_ns: u64,
    /// Sleep before the first write, ns.
    pub delay_ns: u64,
    /// `swappiness=N` appended to each write (v6.11), if given; `swappiness=max` (v6.16) is
    /// SWAPPINESS_ANON_ONLY (201).
    pub swappiness: Option<u64>,
}

impl Params for MemoryReclaimSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(MemoryReclaim::new(self.clone()))
    }
    fn footprint(&self, _sc: &Scenario) -> Footprint {
        Footprint::default()
    }
}

/// `program = "memory-reclaim"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "memory-reclaim",
    summary: "write to a cgroup's memory.reclaim periodically (proactive reclaim, 5.19+)",
    doc: "A proactive-reclaim agent, as senpai or TMO run one: after `delay`, writes \
          `amount` to the memory.reclaim file of the cgroup `target` `count` times, sleeping \
          `interval` between writes, then exits. Each write reclaims from the cgroup and \
          its descendants, swap allowed (the kernel's memory_reclaim: \
          try_to_free_mem_cgroup_pages rounds, a quarter of what is left each from 6.9, \
          `memcg-reclaim-batches`), and fails with EAGAIN when MAX_RECLAIM_RETRIES rounds \
          reclaimed nothing; the agent records the error (the task's `errors`) and goes \
          on. The reclaimed pages count as proactive reclaim (pgscan_proactive, \
          pgsteal_proactive) in the cgroup's `memory.stat` from 6.15 \
          (`proactive-reclaim-stats`), as direct reclaim before; the root's count in \
          `/proc/vmstat` too. memory.reclaim exists from 5.19: on an earlier era (before \
          the 6.1 era) the first write fails with ENOENT and the agent exits. The agent's \
          own task runs where its `cgroup` key puts it (the root by default); the root's \
          memory.reclaim (`target = \"/\"`) reclaims from the whole machine.",
    params: &[
        Param {
            key: "target",
            ty: "string",
            default: "required",
            rules: "a `[[cgroups]]` name, or \"/\" for the root cgroup",
        },
        Param {
            key: "amount",
            ty: "size (bytes)",
            default: "required",
            rules: "4 KiB ..= RAM, whole 4 KiB pages: written to memory.reclaim each time",
        },
        Param {
            key: "count",
            ty: "integer",
            default: "`10`",
            rules: "≥ 1: the number of writes",
        },
        Param {
            key: "interval",
            ty: "duration",
            default: "`\"1s\"`",
            rules: "sleep between writes",
        },
        Param {
            key: "delay",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep before the first write",
        },
        Param {
            key: "swappiness",
            ty: "integer or \"max\"",
            default: "none",
            rules: "0 ..= 200: written as `swappiness=N` after the amount (6.11+, \
                    `memory-reclaim-swappiness`; before, every write is EINVAL): the \
                    anon/file balance of this reclaim instead of vm.swappiness; 0 reclaims \
                    only file pages from a non-root cgroup. `\"max\"`: `swappiness=max` \
                    (6.16+, `memory-reclaim-swappiness-max`; EINVAL before), anonymous \
                    pages only (without swap, file pages, as 6.16 has it)",
        },
    ],
    samples: &[SampleDef {
        label: "reclaim",
        kind: SampleKind::Time,
        doc: "one write to memory.reclaim, until it returned (success or EAGAIN)",
    }],
    example: r#"name = "memory-reclaim-example"
kernel = "6.18"

[machine]
cpus_per_node = 2
memory_per_node = "128MiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"

[[filesystems]]
mount = "/data"
type = "blockfs"
device = "sda"

[[files]]
path = "/data/hot"
size = "48MiB"

[[cgroups]]
name = "app"

[[tasks]]
name = "reader"
cpu = 0
cgroup = "app"
program = "read"
path = "/data/hot"
passes = 4
think = "1s"

[[tasks]]
name = "agent"
cpu = 1
program = "memory-reclaim"
target = "app"
amount = "8MiB"
interval = "500ms"
count = 6
delay = "500ms"
"#,
    parse: parse_memory_reclaim,
};

fn parse_memory_reclaim(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let cgroup = super::target_cgroup(task, env, "the cgroup to reclaim from")?;
    let ram = env.total_memory_bytes;
    let (amount_bytes, amount_loc) = task.req("amount", "bytes per write", |i, l| {
        want_size(i, l, Some(ram))
    })?;
    if amount_bytes < 4096 || amount_bytes > ram || amount_bytes % 4096 != 0 {
        return Err(amount_loc.err(format!(
            "amount must be whole 4 KiB pages between 4 KiB and the machine's RAM ({}), got {}",
            fmt_bytes(ram),
            fmt_bytes(amount_bytes)
        )));
    }
    let count = match task.opt("count", want_u32)? {
        Some((0, loc)) => return Err(loc.err("count must be at least 1")),
        Some((n, _)) => n,
        None => 10,
    };
    let interval_ns = task
        .opt("interval", want_duration)?
        .map_or(1_000_000_000, |(v, _)| v);
    let delay_ns = task.opt("delay", want_duration)?.map_or(0, |(v, _)| v);
    let swappiness = task
        .opt("swappiness", |item, loc| {
            // An integer, or the string "max" (SWAPPINESS_ANON_ONLY).
            if let Ok(s) = want_str(item, loc) {
                return if s == "max" {
                    Ok(crate::mm::vmscan::SWAPPINESS_ANON_ONLY)
                } else {
                    Err(loc.err(format!(
                        "swappiness must be 0 ..= 200 or \"max\", got \"{s}\""
                    )))
                };
            }
            match want_u32(item, loc) {
                Ok(s) if s <= 200 => Ok(u64::from(s)),
                Ok(s) => Err(loc.err(format!("swappiness must be 0 ..= 200 or \"max\", got {s}"))),
                Err(_) => Err(loc.err("swappiness must be an integer 0 ..= 200 or \"max\"")),
            }
        })?
        .map(|(s, _)| s);
    Ok(ProgramSpec::new(
        PROGRAM.name,
        MemoryReclaimSpec {
            cgroup,
            amount_bytes,
            count,
            interval_ns,
            delay_ns,
            swappiness,
        },
    ))
}

/// The `memory-reclaim` program state.
pub struct MemoryReclaim {
    spec: MemoryReclaimSpec,
    cgroup: Arc<str>,
    writes: super::TimedWrites,
}

impl MemoryReclaim {
    /// An agent as the spec says.
    pub fn new(spec: MemoryReclaimSpec) -> MemoryReclaim {
        MemoryReclaim {
            cgroup: spec.cgroup.as_str().into(),
            writes: super::TimedWrites::new("reclaim", spec.delay_ns, spec.interval_ns, spec.count),
            spec,
        }
    }
}

impl Program for MemoryReclaim {
    fn next_op(&mut self, last: &OpResult) -> Op {
        let (cgroup, spec) = (&self.cgroup, &self.spec);
        self.writes.next_op(
            last,
            || Op::MemoryReclaim {
                cgroup: cgroup.clone(),
                bytes: spec.amount_bytes,
                swappiness: spec.swappiness,
            },
            // No memory.reclaim in this kernel, or no swappiness= in it: nothing more to do.
            |last| {
                matches!(
                    last,
                    OpResult::Err(super::Errno::ENOENT | super::Errno::EINVAL)
                )
            },
        )
    }
}
