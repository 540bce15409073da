//! `pread-stride`: `count` preads of `read_pages` pages at offsets i × `step_pages` pages
//! (seed 001's file-server pattern: 100000 preads of 110 pages every 100 pages, so 10% of the
//! pages are read twice, soon after each other, and get activated). The whole stream is
//! timed under the label "stream".

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{check_abs_path, want_str, want_u64, Env, ScenarioError, View};

/// Parameters of the `pread-stride` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PreadStrideSpec {
    /// Absolute path of an existing file.
    pub path: String,
    /// Number of preads.
    pub count: u64,
    /// Pages per pread.
    pub read_pages: u64,
    /// Pages between the starts of consecutive preads.
    pub step_pages: u64,
}

impl Params for PreadStrideSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(PreadStride::new(self.clone()))
    }
}

/// `program = "pread-stride"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "pread-stride",
    summary: "preads of N pages every M pages through a file (seed 001's file server)",
    doc: "Opens `path` (a `[[files]]` entry) and issues `count` `pread`s of `read_pages` \
          pages, the i-th at page i × `step_pages`, back to back, then exits. With \
          `read_pages` > `step_pages` consecutive reads overlap, so that share of the pages \
          is read twice soon after each other and gets activated (seed 001's file-server \
          stream: 110 pages every 100, 10% hot). A `data = false` file reads holes: pages \
          are allocated and zero-filled without IO.",
    params: &[
        Param {
            key: "path",
            ty: "string",
            default: "required",
            rules: "absolute; a `[[files]]` entry",
        },
        Param {
            key: "count",
            ty: "integer",
            default: "required",
            rules: "≥ 1: the number of `pread`s",
        },
        Param {
            key: "read_pages",
            ty: "integer",
            default: "required",
            rules: "≥ 1: pages per `pread`",
        },
        Param {
            key: "step_pages",
            ty: "integer",
            default: "required",
            rules: "≥ 1: pages between the starts of consecutive `pread`s",
        },
    ],
    samples: &[SampleDef {
        label: "stream",
        kind: SampleKind::Time,
        doc: "the whole stream, first to last `pread`",
    }],
    example: r#"name = "pread-stride-example"
kernel = "4.2"

[machine]
cpus_per_node = 1
memory_per_node = "64MiB"

[[devices]]
name = "sda"
preset = "hdd"
size = "1GiB"

[[filesystems]]
mount = "/b"
type = "blockfs"
device = "sda"

[[files]]
path = "/b/sparse"
size = "ram*2"
data = false

[[tasks]]
name = "stream"
program = "pread-stride"
path = "/b/sparse"
count = 300
read_pages = 110
step_pages = 100
"#,
    parse: parse_pread_stride,
};

fn parse_pread_stride(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let (path, path_loc) = task.req("path", "absolute path of an existing file", want_str)?;
    check_abs_path(path).map_err(|why| path_loc.err(why))?;
    if !env.files.iter().any(|f| *f.path == *path) {
        return Err(path_loc.err(format!(
            "\"{path}\" is not a file of the scenario; declare it in [[files]]"
        )));
    }
    let get = |key: &str, what: &str| -> Result<u64, ScenarioError> {
        let (v, loc) = task.req(key, what, want_u64)?;
        if v == 0 {
            return Err(loc.err(format!("{key} must be at least 1")));
        }
        Ok(v)
    };
    let count = get("count", "number of preads")?;
    let read_pages = get("read_pages", "pages per pread")?;
    let step_pages = get("step_pages", "pages between pread starts")?;
    Ok(ProgramSpec::new(
        PROGRAM.name,
        PreadStrideSpec {
            path: path.to_string(),
            count,
            read_pages,
            step_pages,
        },
    ))
}

/// The pread-stride program state.
pub struct PreadStride {
    spec: PreadStrideSpec,
    fd: Option<u32>,
    i: u64,
    started: bool,
    done: bool,
}

impl PreadStride {
    /// A reader as the spec says.
    pub fn new(spec: PreadStrideSpec) -> PreadStride {
        PreadStride {
            spec,
            fd: None,
            i: 0,
            started: false,
            done: false,
        }
    }
}

impl Program for PreadStride {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if self.done {
            return Op::Exit;
        }
        if let OpResult::Err(_) = last {
            self.done = true;
            return Op::Exit;
        }
        let Some(fd) = self.fd else {
            if let OpResult::Fd(fd) = last {
                self.fd = Some(*fd);
                self.started = true;
                return Op::TimerStart("stream".into());
            }
            return Op::Open {
                path: self.spec.path.as_str().into(),
                create: false,
                truncate: false,
            };
        };
        if self.i >= self.spec.count {
            self.done = true;
            return Op::TimerStop("stream".into());
        }
        let pos = self.i * self.spec.step_pages * 4096;
        self.i += 1;
        Op::Pread {
            fd,
            len: self.spec.read_pages * 4096,
            pos,
        }
    }
}
