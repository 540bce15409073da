//! `cgroup-write`: change a cgroup's limit mid-run, as an administrator, systemd
//! (`systemctl set-property`) or an OOM daemon does: after `delay`, writes `value` to the
//! file `file` (memory.max, memory.high, memory.swap.max, memory.swap.high or
//! memory.oom.group) of the cgroup `target`, once, and exits. The write is timed under the label "write": lowering
//! memory.max or memory.high reclaims down to the new limit before the write returns.

use std::sync::Arc;

use super::{CgroupFile, Footprint, Op, OpResult, Program};
use super::{Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    want_duration, want_size, want_str, want_u64, Env, Scenario, ScenarioError, View,
};

use serde::Serialize;

/// Parameters of the `cgroup-write` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CgroupWriteSpec {
    /// The cgroup whose file is written (`target`): a `[[cgroups]]` name.
    pub cgroup: String,
    /// The file written.
    pub file: CgroupFile,
    /// The value written, bytes (None: "max"); 0 or 1 for memory.oom.group.
    pub bytes: Option<u64>,
    /// Sleep before the write, ns.
    pub delay_ns: u64,
}

impl Params for CgroupWriteSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(CgroupWrite {
            cgroup: self.cgroup.as_str().into(),
            writes: super::TimedWrites::new("write", self.delay_ns, 0, 1),
            spec: self.clone(),
        })
    }
    fn footprint(&self, _sc: &Scenario) -> Footprint {
        Footprint::default()
    }
}

/// `program = "cgroup-write"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "cgroup-write",
    summary: "write a cgroup's memory.max, memory.high, memory.swap.max, memory.swap.high, memory.oom.group, memory.zswap.max or memory.zswap.writeback once, mid-run",
    doc: "Changes one limit of a cgroup while the others run, as an administrator, systemd \
          or an OOM daemon does: after `delay`, writes `value` to the file `file` of the \
          cgroup `target` and exits. memory.max (memory_max_write): the new limit, then, \
          while the cgroup's usage is above it, the CPUs' charge stocks are drained once \
          and the cgroup is reclaimed (swap allowed) until MAX_RECLAIM_RETRIES passes \
          reclaim nothing; then the memcg OOM killer runs (a memory.events `oom`, and an \
          `oom_kill` for the victim) and the write waits for the victim to exit. \
          memory.high (memory_high_write): the new limit, and reclaim down to it, without \
          the OOM killer. memory.swap.max and memory.swap.high take the new limit and \
          reclaim nothing; memory.swap.high exists from 5.8 (the 6.1 and 6.18 eras): on an \
          earlier era the write fails with ENOENT, recorded as the task's error. \
          memory.oom.group (4.19, the 6.1 and 6.18 eras; ENOENT before) takes 0 or 1: \
          whether an OOM kill in the cgroup takes all its tasks from then on. \
          memory.zswap.max (5.19, the 6.1 and 6.18 eras) takes the new limit and writes \
          nothing back (stores over it are rejected from then on); memory.zswap.writeback \
          (6.8, the 6.18 era) takes 0 or 1; before those eras the write fails with ENOENT. \
          The write \
          is timed under the label \"write\". The writer's own task runs where its \
          `cgroup` key puts it (the root by default).",
    params: &[
        Param {
            key: "target",
            ty: "string",
            default: "required",
            rules: "a `[[cgroups]]` name (the root has no limit files)",
        },
        Param {
            key: "file",
            ty: "string",
            default: "required",
            rules: "\"memory.max\", \"memory.high\", \"memory.swap.max\", \"memory.swap.high\", \
                    \"memory.oom.group\", \"memory.zswap.max\" or \"memory.zswap.writeback\"",
        },
        Param {
            key: "value",
            ty: "size (bytes) or \"max\"; 0 or 1",
            default: "required",
            rules: "the new limit, rounded down to whole 4 KiB pages; \"max\": no limit. For \
                    memory.oom.group and memory.zswap.writeback the integer 0 or 1",
        },
        Param {
            key: "delay",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep before the write",
        },
    ],
    samples: &[SampleDef {
        label: "write",
        kind: SampleKind::Time,
        doc: "the write, until it returned (with the reclaim it did)",
    }],
    example: r#"name = "cgroup-write-example"
kernel = "6.18"

[machine]
cpus_per_node = 2
memory_per_node = "256MiB"

[swap]
size = "256MiB"
preset = "ssd"

[[cgroups]]
name = "app"

[[tasks]]
name = "app"
cpu = 0
cgroup = "app"
program = "anon"
size = "64MiB"
passes = 3
think = "1s"

[[tasks]]
name = "admin"
cpu = 1
program = "cgroup-write"
target = "app"
file = "memory.max"
value = "32MiB"
delay = "500ms"
"#,
    parse: parse_cgroup_write,
};

fn parse_cgroup_write(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let cgroup = super::target_cgroup(task, env, "the cgroup whose file is written")?;
    let (_, target_loc) = task.req("target", "the cgroup", want_str)?;
    if cgroup == "/" {
        return Err(target_loc.err("the root cgroup has no limit files; name a [[cgroups]] entry"));
    }
    let (name, file_loc) = task.req("file", "the file written", want_str)?;
    let Some(&(file, _)) = CgroupFile::ALL.iter().find(|(_, n)| *n == name) else {
        let names: Vec<&str> = CgroupFile::ALL.iter().map(|(_, n)| *n).collect();
        return Err(file_loc.err(format!(
            "unknown file \"{name}\"; one of {}",
            names.join(", ")
        )));
    };
    let ram = env.total_memory_bytes;
    let (bytes, _) = if file.is_flag() {
        task.req("value", "0 or 1", |item, loc| match want_u64(item, loc)? {
            v @ (0 | 1) => Ok(Some(v)),
            v => Err(loc.err(format!("{name} takes 0 or 1, got {v}"))),
        })?
    } else {
        task.req("value", "the new limit", |item, loc| {
            if want_str(item, loc).is_ok_and(|s| s == "max") {
                return Ok(None);
            }
            want_size(item, loc, Some(ram)).map(Some)
        })?
    };
    let delay_ns = task.opt("delay", want_duration)?.map_or(0, |(v, _)| v);
    Ok(ProgramSpec::new(
        PROGRAM.name,
        CgroupWriteSpec {
            cgroup,
            file,
            bytes,
            delay_ns,
        },
    ))
}

/// The `cgroup-write` program state.
pub struct CgroupWrite {
    spec: CgroupWriteSpec,
    cgroup: Arc<str>,
    writes: super::TimedWrites,
}

impl Program for CgroupWrite {
    fn next_op(&mut self, last: &OpResult) -> Op {
        let (cgroup, spec) = (&self.cgroup, &self.spec);
        self.writes.next_op(
            last,
            || Op::CgroupWrite {
                cgroup: cgroup.clone(),
                file: spec.file,
                bytes: spec.bytes,
            },
            |_| true,
        )
    }
}
