//! `senpai`: a userspace memory controller that steers proactive reclaim by memory
//! pressure, as oomd's Senpai plugin does (facebookincubator/oomd, `Senpai::tick`) with
//! memory.reclaim, the way TMO (ASPLOS 2022) runs it on kernels that have the file. Every
//! `tick` it reads the cgroup's memory.current, memory.stat, memory.min and
//! memory.pressure (`Op::ReadCgroup`) and accumulates the `some` stall:
//! - the stall since the last decision reached `pressure`: back off (no reclaim; the count
//!   of ticks to the next probe starts again);
//! - else, `interval` ticks after the last decision: probe, writing to memory.reclaim a
//!   share of memory.current that grows with the square of the undershoot, up to
//!   `max_probe` (`Op::MemoryReclaim`), never below `limit_min` plus the memory that cannot
//!   be reclaimed (anon without swap), nor below memory.min.
//!
//! With `mode = "high"` it is Senpai as oomd wrote it first: it keeps a limit in
//! memory.high (`Op::SetMemoryHigh`), starting at memory.current; a probe lowers it by the
//! share above, a back-off raises it by up to `max_backoff`, growing with the square of
//! the overshoot, and the kernel enforces it (reclaim and memory.high throttling). With
//! memory.reclaim there is no limit, so a back-off only postpones the next probe.

use std::sync::Arc;

use super::{CgroupRead, Footprint, Op, OpResult, Program};
use super::{Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    want_duration, want_f64, want_size, want_str, want_u32, Env, Scenario, ScenarioError, View,
};

use serde::Serialize;

/// Parameters of the `senpai` program.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SenpaiSpec {
    /// The cgroup it controls (`target`): a `[[cgroups]]` name, or "/" (the root).
    pub cgroup: String,
    /// Period of the reads, ns (oomd's main-loop interval).
    pub tick_ns: u64,
    /// Ticks from a decision (probe or back-off) to the next probe (Senpai's `interval`).
    pub interval: u32,
    /// The stall target: memory `some` time accumulated since the last decision, µs
    /// (`pressure_ms`).
    pub pressure_us: u64,
    /// Largest share of memory.current one probe reclaims.
    pub max_probe: f64,
    /// A probe reaches `max_probe` when the stall is at most `pressure / coeff_probe`.
    pub coeff_probe: f64,
    /// A probe never leaves less than this plus the unreclaimable memory, bytes.
    pub limit_min_bytes: u64,
    /// Ticks before the agent exits.
    pub count: u32,
    /// Sleep before the first read, ns.
    pub delay_ns: u64,
    /// What a decision writes: memory.reclaim or memory.high.
    pub mode: SenpaiMode,
    /// memory.high mode: the largest share of the limit one back-off adds.
    pub max_backoff: f64,
    /// memory.high mode: a back-off adds `max_backoff` once the stall is
    /// `pressure × coeff_backoff`.
    pub coeff_backoff: f64,
    /// memory.high mode: the limit stays at most memory.current plus this, bytes.
    pub limit_max_bytes: u64,
    /// The machine's RAM (MemTotal), bytes: the limit's ceiling.
    pub ram_bytes: u64,
}

/// What Senpai's decisions write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SenpaiMode {
    /// A probe writes an amount to memory.reclaim (5.19+).
    Reclaim,
    /// Every decision writes the limit to memory.high.
    High,
}

impl Params for SenpaiSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Senpai::new(self.clone()))
    }
    fn footprint(&self, _sc: &Scenario) -> Footprint {
        Footprint::default()
    }
}

/// `program = "senpai"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "senpai",
    summary: "proactive reclaim steered by memory.pressure (oomd's Senpai, 6.x)",
    doc: "A userspace memory controller as oomd's Senpai plugin runs one with \
          memory.reclaim (TMO): after `delay`, every `tick` it reads the cgroup `target`'s \
          memory.current, memory.stat, memory.min and memory.pressure and adds the memory \
          `some` stall since the last read. When the stall accumulated since its last \
          decision reaches `pressure`, it backs off: no reclaim, and the count to the next \
          probe starts again. Otherwise, `interval` ticks after its last decision, it \
          probes: it writes to memory.reclaim min((pressure / stall / coeff_probe)² × \
          max_probe, max_probe) of memory.current (whole pages; a probe sample), but never \
          more than leaves `limit_min` plus what cannot be reclaimed (memory.current less \
          the file pages, and less the anonymous pages when they can be swapped), nor below \
          memory.min. It exits after `count` ticks, or at once on a kernel without \
          memory.pressure or memory.reclaim (before the 6.1 era: ENOENT, the task's \
          `errors`). The defaults are oomd's; `limit_min` (100 MiB) is large for the small \
          machines of most scenarios. With `mode = \"high\"` it keeps a limit in memory.high \
          instead, as oomd's Senpai did before memory.reclaim: it starts at memory.current, \
          a probe lowers it by the share above, a back-off raises it by \
          min((stall / pressure / coeff_backoff)² × max_backoff, max_backoff), it stays \
          between the floor above and min(memory.current + `limit_max`, RAM, memory.max), \
          and each change is a write to memory.high (an `adjust` sample), which reclaims \
          down to it before returning; the kernel then enforces it. The limit stays when \
          the agent exits.",
    params: &[
        Param {
            key: "target",
            ty: "string",
            default: "required",
            rules: "a `[[cgroups]]` name, or \"/\" for the root cgroup",
        },
        Param {
            key: "tick",
            ty: "duration",
            default: "`\"1s\"`",
            rules: "> 0: the period of the reads (oomd's main loop)",
        },
        Param {
            key: "interval",
            ty: "integer",
            default: "`6`",
            rules: "ticks from a decision (probe or back-off) to the next probe",
        },
        Param {
            key: "pressure",
            ty: "duration",
            default: "`\"10ms\"`",
            rules: "≥ 1 µs: the memory `some` stall, accumulated since the last \
                    decision, that makes it back off",
        },
        Param {
            key: "max_probe",
            ty: "number",
            default: "`0.01`",
            rules: "0 < x ≤ 1: the largest share of memory.current one probe reclaims",
        },
        Param {
            key: "coeff_probe",
            ty: "number",
            default: "`10`",
            rules: "> 0: a probe takes `max_probe` once the stall is below pressure / \
                    coeff_probe",
        },
        Param {
            key: "limit_min",
            ty: "size (bytes)",
            default: "`\"100MiB\"`",
            rules: "≤ RAM: what a probe leaves above the unreclaimable memory",
        },
        Param {
            key: "mode",
            ty: "string",
            default: "`\"reclaim\"`",
            rules: "`\"reclaim\"` (probes write to memory.reclaim) or `\"high\"` (a limit \
                    in memory.high)",
        },
        Param {
            key: "max_backoff",
            ty: "number",
            default: "`1.0`",
            rules: "≥ 0: with `mode = \"high\"`, the largest share of the limit one \
                    back-off adds",
        },
        Param {
            key: "coeff_backoff",
            ty: "number",
            default: "`20`",
            rules: "> 0: with `mode = \"high\"`, a back-off adds `max_backoff` once the \
                    stall is pressure × coeff_backoff",
        },
        Param {
            key: "limit_max",
            ty: "size (bytes)",
            default: "`\"10GiB\"`",
            rules: "with `mode = \"high\"`: the limit's ceiling above memory.current",
        },
        Param {
            key: "count",
            ty: "integer",
            default: "`60`",
            rules: "≥ 1: ticks before the agent exits",
        },
        Param {
            key: "delay",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep before the first read",
        },
    ],
    samples: &[
        SampleDef {
            label: "probe",
            kind: SampleKind::Time,
            doc: "one write to memory.reclaim (a probe), until it returned",
        },
        SampleDef {
            label: "adjust",
            kind: SampleKind::Time,
            doc: "one write to memory.high (`mode = \"high\"`), until it returned",
        },
    ],
    example: r#"name = "senpai-example"
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
size = "32MiB"

[[files]]
path = "/data/cold"
size = "48MiB"

[[cgroups]]
name = "app"

[[tasks]]
name = "hot"
cpu = 0
cgroup = "app"
program = "read"
path = "/data/hot"
passes = 8
think = "500ms"

[[tasks]]
name = "cold"
cpu = 0
cgroup = "app"
program = "read"
path = "/data/cold"

[[tasks]]
name = "senpai"
cpu = 1
program = "senpai"
target = "app"
tick = "250ms"
interval = 2
limit_min = "8MiB"
max_probe = 0.05
count = 16
"#,
    parse: parse_senpai,
};

fn parse_senpai(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let cgroup = super::target_cgroup(task, env, "the cgroup to control")?;
    let ram = env.total_memory_bytes;
    let tick_ns = match task.opt("tick", want_duration)? {
        Some((0, loc)) => return Err(loc.err("tick must be longer than 0")),
        Some((v, _)) => v,
        None => 1_000_000_000,
    };
    let interval = task.opt("interval", want_u32)?.map_or(6, |(v, _)| v);
    let pressure_us = match task.opt("pressure", want_duration)? {
        Some((v, loc)) if v < 1_000 => {
            return Err(loc.err(format!("pressure must be at least 1us, got {v} ns")))
        }
        Some((v, _)) => v / 1_000,
        None => 10_000,
    };
    let number = |key: &str, default: f64| -> Result<f64, ScenarioError> {
        match task.opt(key, want_f64)? {
            Some((0.0, loc)) => Err(loc.err(format!("{key} must be greater than 0"))),
            Some((v, _)) => Ok(v),
            None => Ok(default),
        }
    };
    let max_probe = number("max_probe", 0.01)?;
    if max_probe > 1.0 {
        let (_, loc) = task.opt("max_probe", want_f64)?.expect("given");
        return Err(loc.err(format!("max_probe must be at most 1, got {max_probe}")));
    }
    let coeff_probe = number("coeff_probe", 10.0)?;
    let limit_min_bytes = task
        .opt("limit_min", |i, l| want_size(i, l, Some(ram)))?
        .map_or(100 << 20, |(v, _)| v);
    let count = match task.opt("count", want_u32)? {
        Some((0, loc)) => return Err(loc.err("count must be at least 1")),
        Some((n, _)) => n,
        None => 60,
    };
    let delay_ns = task.opt("delay", want_duration)?.map_or(0, |(v, _)| v);
    let mode = match task.opt("mode", want_str)? {
        None | Some(("reclaim", _)) => SenpaiMode::Reclaim,
        Some(("high", _)) => SenpaiMode::High,
        Some((other, loc)) => {
            return Err(loc.err(format!(
                "unknown mode \"{other}\"; accepted: \"reclaim\", \"high\""
            )))
        }
    };
    let max_backoff = match task.opt("max_backoff", want_f64)? {
        Some((v, _)) => v,
        None => 1.0,
    };
    let coeff_backoff = number("coeff_backoff", 20.0)?;
    let limit_max_bytes = task
        .opt("limit_max", |i, l| want_size(i, l, None))?
        .map_or(10 << 30, |(v, _)| v);
    Ok(ProgramSpec::new(
        PROGRAM.name,
        SenpaiSpec {
            cgroup,
            tick_ns,
            interval,
            pressure_us,
            max_probe,
            coeff_probe,
            limit_min_bytes,
            count,
            delay_ns,
            mode,
            max_backoff,
            coeff_backoff,
            limit_max_bytes,
            ram_bytes: ram,
        },
    ))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Delay,
    Read,
    Decide,
    Start,
    Write,
    Stop,
    Sleep,
    Done,
}

/// Senpai's state of its cgroup (`Senpai::CgroupState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    /// The limit (memory.high mode), bytes.
    limit: u64,
    /// memory.pressure `some` total at the last read, µs.
    last_total: u64,
    /// Stall since the last decision, µs.
    cumulative: u64,
    /// Ticks left before a probe.
    ticks: u32,
}

/// The `senpai` program state.
pub struct Senpai {
    spec: SenpaiSpec,
    cgroup: Arc<str>,
    phase: Phase,
    ticks_done: u32,
    state: Option<State>,
    /// What the current decision writes.
    action: Action,
}

/// A decision's write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    None,
    /// Bytes to memory.reclaim.
    Reclaim(u64),
    /// The new memory.high, bytes.
    SetHigh(u64),
}

impl Senpai {
    /// An agent as the spec says.
    pub fn new(spec: SenpaiSpec) -> Senpai {
        Senpai {
            cgroup: spec.cgroup.as_str().into(),
            spec,
            phase: Phase::Delay,
            ticks_done: 0,
            state: None,
            action: Action::None,
        }
    }

    /// One tick on the files read (`Senpai::tick`): what to write.
    fn tick(&mut self, r: &CgroupRead) -> Action {
        let s = &self.spec;
        let high = s.mode == SenpaiMode::High;
        let Some(st) = self.state.as_mut() else {
            // initializeCgroup: in memory.high mode the limit starts at memory.current.
            let limit = r.current & !0xfff;
            self.state = Some(State {
                limit,
                last_total: r.memory_some_us,
                cumulative: 0,
                ticks: s.interval,
            });
            return if high {
                Action::SetHigh(limit)
            } else {
                Action::None
            };
        };
        st.cumulative += r.memory_some_us.saturating_sub(st.last_total);
        st.last_total = r.memory_some_us;
        let reclaimable = r.file + if r.swappable { r.anon } else { 0 };
        let floor = (s.limit_min_bytes + r.current.saturating_sub(reclaimable)).max(r.min);
        let factor = if st.cumulative >= s.pressure_us {
            // Too much stall: back off.
            if !high {
                st.ticks = s.interval;
                st.cumulative = 0;
                return Action::None;
            }
            let error = st.cumulative as f64 / s.pressure_us as f64;
            ((error / s.coeff_backoff).powi(2) * s.max_backoff).min(s.max_backoff)
        } else if st.ticks > 0 {
            st.ticks -= 1;
            return Action::None;
        } else {
            // Too little stall: probe.
            let error = s.pressure_us as f64 / st.cumulative.max(1) as f64;
            -((error / s.coeff_probe).powi(2) * s.max_probe).min(s.max_probe)
        };
        st.ticks = s.interval;
        st.cumulative = 0;
        if !high {
            let amount = ((r.current as f64 * -factor) as u64).min(r.current.saturating_sub(floor));
            return Action::Reclaim(amount & !0xfff);
        }
        // adjust: the limit moved by the factor, within its bounds, whole pages.
        let mut ceiling = s.ram_bytes.min(r.current + s.limit_max_bytes);
        if let Some(max) = r.max {
            ceiling = ceiling.min(max);
        }
        let moved = (st.limit as f64 * (1.0 + factor)).max(0.0) as u64;
        st.limit = moved.min(ceiling).max(floor) & !0xfff;
        Action::SetHigh(st.limit)
    }
}

impl Senpai {
    /// The sample label of the current decision's write.
    fn label(&self) -> &'static str {
        match self.action {
            Action::SetHigh(_) => "adjust",
            _ => "probe",
        }
    }
}

impl Program for Senpai {
    fn next_op(&mut self, last: &OpResult) -> Op {
        loop {
            match self.phase {
                Phase::Delay => {
                    self.phase = Phase::Read;
                    if self.spec.delay_ns > 0 {
                        return Op::Sleep {
                            ns: self.spec.delay_ns,
                        };
                    }
                }
                Phase::Read => {
                    self.phase = Phase::Decide;
                    return Op::ReadCgroup {
                        cgroup: self.cgroup.clone(),
                    };
                }
                Phase::Decide => {
                    // No such cgroup, or no memory.pressure: the controller stops.
                    let OpResult::Cgroup(r) = last else {
                        self.phase = Phase::Done;
                        continue;
                    };
                    self.ticks_done += 1;
                    self.action = self.tick(r);
                    self.phase = match self.action {
                        Action::None | Action::Reclaim(0) => Phase::Sleep,
                        _ => Phase::Start,
                    };
                }
                Phase::Start => {
                    self.phase = Phase::Write;
                    return Op::TimerStart(self.label().into());
                }
                Phase::Write => {
                    self.phase = Phase::Stop;
                    match self.action {
                        Action::SetHigh(bytes) => {
                            return Op::SetMemoryHigh {
                                cgroup: self.cgroup.clone(),
                                bytes: Some(bytes),
                            }
                        }
                        Action::Reclaim(bytes) => {
                            return Op::MemoryReclaim {
                                cgroup: self.cgroup.clone(),
                                bytes,
                                swappiness: None,
                            }
                        }
                        // Start is entered with a write to make only.
                        Action::None => self.phase = Phase::Sleep,
                    }
                }
                Phase::Stop => {
                    self.phase = if matches!(last, OpResult::Err(super::Errno::ENOENT)) {
                        Phase::Done
                    } else {
                        Phase::Sleep
                    };
                    return Op::TimerStop(self.label().into());
                }
                Phase::Sleep => {
                    if self.ticks_done >= self.spec.count {
                        self.phase = Phase::Done;
                        continue;
                    }
                    self.phase = Phase::Read;
                    return Op::Sleep {
                        ns: self.spec.tick_ns,
                    };
                }
                Phase::Done => return Op::Exit,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> SenpaiSpec {
        SenpaiSpec {
            cgroup: "app".into(),
            tick_ns: 1_000_000_000,
            interval: 2,
            pressure_us: 10_000,
            max_probe: 0.01,
            coeff_probe: 10.0,
            limit_min_bytes: 10 << 20,
            count: 100,
            delay_ns: 0,
            mode: SenpaiMode::Reclaim,
            max_backoff: 1.0,
            coeff_backoff: 20.0,
            limit_max_bytes: 10 << 30,
            ram_bytes: 1 << 30,
        }
    }

    fn read(current: u64, file: u64, some_us: u64) -> CgroupRead {
        CgroupRead {
            current,
            file,
            memory_some_us: some_us,
            ..CgroupRead::default()
        }
    }

    fn reclaim(bytes: f64) -> Action {
        Action::Reclaim((bytes as u64) & !0xfff)
    }

    /// Without stall it probes max_probe of memory.current every `interval` + 1 ticks; a
    /// stall at the target backs off and the count starts again; a stall below it probes
    /// less, (pressure / stall / coeff_probe)² × max_probe.
    #[test]
    fn senpai_probes_without_stall_and_backs_off_at_the_target() {
        let mut s = Senpai::new(spec());
        let cur = 200 << 20;
        assert_eq!(s.tick(&read(cur, cur, 0)), Action::None, "initialised");
        assert_eq!(s.tick(&read(cur, cur, 0)), Action::None, "tick 1 of 2");
        assert_eq!(s.tick(&read(cur, cur, 0)), Action::None, "tick 2 of 2");
        // No stall at all: the error is pressure / 1 µs, far past coeff_probe: max_probe.
        assert_eq!(s.tick(&read(cur, cur, 0)), reclaim(cur as f64 * 0.01));
        // 10 ms of stall: back off, and two more ticks to wait.
        assert_eq!(s.tick(&read(cur, cur, 10_000)), Action::None);
        assert_eq!(s.state.unwrap().cumulative, 0);
        assert_eq!(s.tick(&read(cur, cur, 10_000)), Action::None);
        assert_eq!(s.tick(&read(cur, cur, 10_000)), Action::None);
        // 0.5 ms since: error 20, (20 / 10)² × 0.01 = 0.04, capped at max_probe 0.01.
        assert_eq!(s.tick(&read(cur, cur, 10_500)), reclaim(cur as f64 * 0.01));
        // 4 ms: error 2.5, (0.25)² × 0.01 of memory.current.
        s.tick(&read(cur, cur, 14_500));
        s.tick(&read(cur, cur, 14_500));
        let got = s.tick(&read(cur, cur, 14_500));
        let f = (2.5f64 / 10.0).powi(2) * 0.01;
        assert_eq!(got, reclaim(cur as f64 * f));
    }

    /// A probe never leaves less than limit_min plus the memory it cannot reclaim.
    #[test]
    fn senpai_keeps_the_unreclaimable_memory_and_limit_min() {
        let mut sp = spec();
        sp.max_probe = 1.0;
        sp.interval = 0;
        let mut s = Senpai::new(sp);
        let cur = 100 << 20;
        // 60 MiB of anonymous memory without swap, 40 MiB of file.
        s.tick(&read(cur, 40 << 20, 0));
        assert_eq!(s.tick(&read(cur, 40 << 20, 0)), Action::Reclaim(30 << 20));
        // With swap the anonymous memory counts as reclaimable.
        let mut r = read(cur, 40 << 20, 0);
        r.anon = 60 << 20;
        r.swappable = true;
        assert_eq!(s.tick(&r), Action::Reclaim(90 << 20));
    }

    /// memory.high mode: the limit starts at memory.current and is written at once; a
    /// probe lowers it by max_probe; a stall above the target raises it by
    /// (stall / pressure / coeff_backoff)² × max_backoff; it stays within memory.max.
    #[test]
    fn senpai_high_mode_moves_a_limit_in_memory_high() {
        let mut sp = spec();
        sp.mode = SenpaiMode::High;
        sp.interval = 0;
        let mut s = Senpai::new(sp);
        let cur = 200 << 20;
        assert_eq!(s.tick(&read(cur, cur, 0)), Action::SetHigh(cur));
        let down = ((cur as f64 * (1.0 - 0.01)) as u64) & !0xfff;
        assert_eq!(s.tick(&read(cur, cur, 0)), Action::SetHigh(down));
        // 30 ms of stall over a 10 ms target: up by (3 / 20)² of the limit.
        let up = ((down as f64 * (1.0 + (3.0f64 / 20.0).powi(2))) as u64) & !0xfff;
        assert_eq!(s.tick(&read(down, down, 30_000)), Action::SetHigh(up));
        // A huge stall: at most max_backoff (doubling), and never above memory.max.
        let mut r = read(up, up, 10_000_000);
        r.max = Some(up + (8 << 20));
        assert_eq!(s.tick(&r), Action::SetHigh(up + (8 << 20)));
    }
}
