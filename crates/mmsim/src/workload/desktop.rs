//! `desktop`: a desktop under memory pressure (seed 001 §1, feature `exec-protect`).
//!
//! Applications are started one after another. Starting application `i`:
//! 1. map its executable (`text_path`, PROT_READ|PROT_EXEC, MAP_PRIVATE) and touch every
//!    page of the mapped `text_bytes` (read);
//! 2. map each shared library (`libs`, PROT_READ|PROT_EXEC, MAP_PRIVATE: the same page
//!    cache pages in every application) and read the first `hot_lib_percent` % of it (the
//!    code the toolkit runs for every window);
//! 3. map `anon_bytes` of anonymous memory and write every page;
//! 4. open its data file and read `data_bytes` of it in `read_block_bytes` reads, close.
//!
//! The start is then complete: the program records a sample under the label `start` (the
//! virtual time since the previous application's start completed, or since the program
//! began for the first; the timer restarts at once, so the prefix sums of the samples are
//! the cumulative times at which each start completed, the seed's "progress timing"), and
//! the region's major faults go to `region_majflt["start"]`. Then the user switches
//! through all windows opened so far: for each application started, in start order, the
//! first `hot_text_percent` % of its text is read again, the hot part of each library read
//! through that application's mapping, and the first `hot_anon_percent` % of its anonymous
//! memory written again (the code and data a window needs to redraw and react).
//! The window switches after the last start are not timed and not done. The mappings are
//! released when the task exits.
//!
//! `session_bytes` of anonymous memory stand for the X server, window manager and panel:
//! mapped and written before the first start (inside the first sample), and
//! `hot_anon_percent` % of it written again at the beginning of every pass over the
//! windows (the X server redraws).
//!
//! The program is a queue of actions: each phase (a start, a pass over the windows) pushes
//! its actions, and each call of `next_op` turns the next action into one operation.

use std::collections::VecDeque;

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    check_abs_path, fmt_bytes, want_size, want_str, want_u32, Env, Loc, ScenarioError, View, GIB,
    PAGE_SIZE,
};

/// One application of the `desktop` program (sizes drawn from the scenario seed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesktopApp {
    /// Executable file, mapped PROT_READ|PROT_EXEC from offset 0.
    pub text_path: String,
    /// Bytes of text mapped and touched at start.
    pub text_bytes: u64,
    /// Bytes of anonymous memory mapped and written at start.
    pub anon_bytes: u64,
    /// Data file read at start.
    pub data_path: String,
    /// Bytes of the data file read at start.
    pub data_bytes: u64,
}

/// A shared library of the `desktop` program: mapped PROT_READ|PROT_EXEC whole by every
/// application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesktopLib {
    /// The library file.
    pub path: String,
    /// Its size (the whole file is mapped), bytes.
    pub bytes: u64,
}

/// Parameters of the `desktop` program (seed 001 §1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DesktopSpec {
    /// The applications, in start order.
    pub apps: Vec<DesktopApp>,
    /// Shared libraries every application maps.
    pub libs: Vec<DesktopLib>,
    /// Percent of each library read by an application's start and by each window switch.
    pub hot_lib_percent: u32,
    /// Anonymous memory of the session (X server, window manager, panel), bytes: written
    /// before the first start; `hot_anon_percent` % of it written again at each pass over
    /// the windows.
    pub session_bytes: u64,
    /// Percent of each application's text read again by a window switch.
    pub hot_text_percent: u32,
    /// Percent of each application's anonymous memory touched again by a window switch.
    pub hot_anon_percent: u32,
    /// Percent of that hot part written (the rest is read).
    pub hot_anon_write_percent: u32,
    /// Hot code is spread through each text and library (every ⌊100/p⌋-th page) rather
    /// than its first p %.
    pub spread_code: bool,
    /// Size of each read of a data file, bytes.
    pub read_block_bytes: u64,
}

impl Params for DesktopSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Desktop::new(self.clone()))
    }
}

/// `program = "desktop"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "desktop",
    summary: "applications started one after another, windows switched after each (seed 001)",
    doc: "A desktop under memory pressure (seed 001 §1, `exec-protect`). `apps` applications \
          are started one after another; after each start but the last the user switches \
          through every window opened so far. Starting an application maps its text \
          (`text_path`, PROT_READ|PROT_EXEC) and reads all of it, maps every shared library \
          (`lib_path`, PROT_EXEC; the same page-cache pages in every application) and reads \
          its hot code, maps and writes its anonymous memory, and reads its data file in \
          `read_block` preads. A window switch reads the hot code of the application's text \
          and of every library again (through that application's mappings) and touches its \
          hot anonymous memory. `session` bytes of anonymous memory (X server, window \
          manager) are written before the first start and touched like a window at the start \
          of every pass.\n\n\
          Sizes are drawn uniformly in whole pages by `rand_pcg::Pcg64` seeded with the \
          scenario's `seed` (so `--seed N` draws another desktop), in the order text, anon, \
          data per application.",
    params: &[
        Param {
            key: "apps",
            ty: "integer",
            default: "`50`",
            rules: "1 ..= 4096 applications",
        },
        Param {
            key: "office_apps",
            ty: "integer",
            default: "`0`",
            rules: "≤ `apps`: the `office_apps` applications before the no-op ones have every size × `office_scale`",
        },
        Param {
            key: "text_path",
            ty: "string with `{i}`",
            default: "required",
            rules: "application `i`'s executable; each must be a `[[files]]` entry at least as large as what is read of it",
        },
        Param {
            key: "data_path",
            ty: "string with `{i}`",
            default: "required",
            rules: "application `i`'s data file; each must be a `[[files]]` entry at least as large as what is read of it",
        },
        Param {
            key: "text_min",
            ty: "size (bytes)",
            default: "RAM/512",
            rules: "≥ 4 KiB; ≤ `text_max`",
        },
        Param {
            key: "text_max",
            ty: "size (bytes)",
            default: "RAM/64",
            rules: "≥ `text_min`",
        },
        Param {
            key: "anon_min",
            ty: "size (bytes)",
            default: "RAM/256",
            rules: "≥ 4 KiB; ≤ `anon_max`",
        },
        Param {
            key: "anon_max",
            ty: "size (bytes)",
            default: "RAM/32",
            rules: "≥ `anon_min`",
        },
        Param {
            key: "data_min",
            ty: "size (bytes)",
            default: "RAM/512",
            rules: "≥ 4 KiB; ≤ `data_max`",
        },
        Param {
            key: "data_max",
            ty: "size (bytes)",
            default: "RAM/128",
            rules: "≥ `data_min`",
        },
        Param {
            key: "office_scale",
            ty: "integer",
            default: "`1`",
            rules: "≥ 1: the size multiplier of the office applications",
        },
        Param {
            key: "hot_text",
            ty: "percent",
            default: "`25`",
            rules: "share of each text read again by a window switch",
        },
        Param {
            key: "hot_anon",
            ty: "percent",
            default: "`50`",
            rules: "share of each application's (and the session's) anonymous memory touched by a window switch",
        },
        Param {
            key: "session",
            ty: "size (bytes)",
            default: "`0`",
            rules: "≤ RAM: anonymous memory of the session (X server, window manager), written before the first start and touched like a window at the start of every pass",
        },
        Param {
            key: "read_block",
            ty: "size (bytes)",
            default: "`\"128KiB\"`",
            rules: "1 byte ..= 1 GiB: the size of each `pread` of a data file",
        },
        Param {
            key: "libs",
            ty: "integer",
            default: "`0`",
            rules: "0 ..= 256 shared libraries",
        },
        Param {
            key: "lib_path",
            ty: "string with `{i}`",
            default: "required when `libs` > 0",
            rules: "library `k`'s file (a `[[files]]` entry, mapped whole)",
        },
        Param {
            key: "hot_lib",
            ty: "percent",
            default: "`25`",
            rules: "share of each library read by a start and again by a window switch",
        },
        Param {
            key: "noop_apps",
            ty: "integer",
            default: "`0`",
            rules: "≤ `apps`: the last ones start nothing (the seed's commented-out `: oocalc` rows): their sample is the pass over the windows only",
        },
        Param {
            key: "hot_anon_write",
            ty: "percent",
            default: "`100`",
            rules: "share of the hot anonymous memory written; the rest is read (a clean page swapped in stays in the swap cache and is dropped again without IO)",
        },
        Param {
            key: "hot_code",
            ty: "string",
            default: "`\"first\"`",
            rules: "`\"first\"`: the hot code is the first p % of each text and library; `\"spread\"`: every ⌊100/p⌋-th page of it (hot code scattered through a binary, so a fault's read-around brings in cold neighbours)",
        },
    ],
    samples: &[SampleDef {
        label: "start",
        kind: SampleKind::Time,
        doc: "one application's start: the time since the previous start completed (its \
              pass over the windows included); prefix sums are the seed's progress timing",
    }],
    example: r#"name = "desktop-example"
kernel = "2.6.30"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[swap]
size = "ram*2"
preset = "hdd"

[[devices]]
name = "disk"
preset = "hdd"
size = "4GiB"

[[filesystems]]
mount = "/"
type = "blockfs"
device = "disk"

[[files]]
replicas = 12
path = "/usr/bin/app{i}"
size = "ram/64"

[[files]]
replicas = 12
path = "/home/user/doc{i}"
size = "ram/128"

[[files]]
replicas = 2
path = "/usr/lib/lib{i}.so"
size = "ram/256"

[[tasks]]
name = "desktop"
program = "desktop"
apps = 12
text_path = "/usr/bin/app{i}"
data_path = "/home/user/doc{i}"
libs = 2
lib_path = "/usr/lib/lib{i}.so"
session = "ram/8"
"#,
    parse: parse_desktop,
};

/// `desktop`: application sizes are drawn uniformly (whole pages) from
/// [`*_min`, `*_max`] by a PCG-64 seeded with the scenario seed, in order text, anon, data
/// for each application; the last `noop_apps` applications are no-op starts (nothing mapped
/// or read: the seed's commented-out `: oocalc` rows), and the `office_apps` before them have
/// every size multiplied by `office_scale`. `{i}` in `text_path` / `data_path` is the application's index; each
/// file must be declared in `[[files]]` and be at least as large as what is read of it.
fn parse_desktop(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    use rand::{Rng, SeedableRng};
    let ram = env.total_memory_bytes;
    let apps = match task.opt("apps", want_u32)? {
        Some((n, loc)) if n == 0 || n > 4096 => {
            return Err(loc.err(format!("apps must be from 1 to 4096, got {n}")))
        }
        Some((n, _)) => n,
        None => 50,
    };
    let office = match task.opt("office_apps", want_u32)? {
        Some((n, loc)) if n > apps => {
            return Err(loc.err(format!("office_apps ({n}) is more than apps ({apps})")))
        }
        Some((n, _)) => n,
        None => 0,
    };
    let noop = match task.opt("noop_apps", want_u32)? {
        Some((n, loc)) if n > apps => {
            return Err(loc.err(format!("noop_apps ({n}) is more than apps ({apps})")))
        }
        Some((n, _)) => n,
        None => 0,
    };
    let office_scale = match task.opt("office_scale", want_u32)? {
        Some((0, loc)) => return Err(loc.err("office_scale must be at least 1")),
        Some((n, _)) => n,
        None => 1,
    };
    let range = |lo_key: &str, hi_key: &str, lo: u64, hi: u64| {
        let (lo, lo_loc) = match task.opt(lo_key, |i, l| want_size(i, l, Some(ram)))? {
            Some((v, l)) => (v, Some(l)),
            None => (lo, None),
        };
        let (hi, hi_loc) = match task.opt(hi_key, |i, l| want_size(i, l, Some(ram)))? {
            Some((v, l)) => (v, Some(l)),
            None => (hi, None),
        };
        if lo < PAGE_SIZE {
            let loc = lo_loc.unwrap_or_else(|| task.loc.clone());
            return Err(loc.err(format!("{lo_key} must be at least one page (4 KiB)")));
        }
        if hi < lo {
            let loc = hi_loc.or(lo_loc).unwrap_or_else(|| task.loc.clone());
            return Err(loc.err(format!(
                "{hi_key} ({}) is less than {lo_key} ({})",
                fmt_bytes(hi),
                fmt_bytes(lo)
            )));
        }
        Ok::<_, ScenarioError>((lo / PAGE_SIZE, hi / PAGE_SIZE))
    };
    let text = range("text_min", "text_max", ram / 512, ram / 64)?;
    let anon = range("anon_min", "anon_max", ram / 256, ram / 32)?;
    let data = range("data_min", "data_max", ram / 512, ram / 128)?;
    let percent = |key: &str, default: u32| -> Result<u32, ScenarioError> {
        match task.opt(key, want_u32)? {
            Some((n, loc)) if n > 100 => {
                Err(loc.err(format!("{key} is a percentage from 0 to 100, got {n}")))
            }
            Some((n, _)) => Ok(n),
            None => Ok(default),
        }
    };
    let session_bytes = match task.opt("session", |i, l| want_size(i, l, Some(ram)))? {
        Some((v, loc)) if v > ram => {
            return Err(loc.err(format!(
                "session memory ({}) is more than RAM ({})",
                fmt_bytes(v),
                fmt_bytes(ram)
            )))
        }
        Some((v, _)) => v / PAGE_SIZE * PAGE_SIZE,
        None => 0,
    };
    let hot_text_percent = percent("hot_text", 25)?;
    let hot_anon_percent = percent("hot_anon", 50)?;
    let read_block_bytes = match task.opt("read_block", |i, l| want_size(i, l, Some(ram)))? {
        Some((bs, loc)) if bs == 0 || bs > GIB => {
            return Err(loc.err("read_block must be between 1 byte and 1 GiB"))
        }
        Some((bs, _)) => bs,
        None => 128 << 10,
    };
    let pattern = |key: &str| -> Result<(String, Loc), ScenarioError> {
        let (p, loc) = task.req(
            key,
            "file path with {i}, e.g. \"/usr/bin/app{i}\"",
            want_str,
        )?;
        check_abs_path(p).map_err(|why| loc.err(why))?;
        Ok((p.to_string(), loc))
    };
    let (text_pat, text_loc) = pattern("text_path")?;
    let (data_pat, data_loc) = pattern("data_path")?;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(env.seed);
    let mut out = Vec::with_capacity(apps as usize);
    for i in 0..apps {
        if i >= apps - noop {
            // A commented-out command (the seed's `: oocalc`): the start does nothing; the
            // pass over the windows before it is all there is.
            out.push(DesktopApp {
                text_path: String::new(),
                text_bytes: 0,
                anon_bytes: 0,
                data_path: String::new(),
                data_bytes: 0,
            });
            continue;
        }
        let scale = if i + noop >= apps - office {
            u64::from(office_scale)
        } else {
            1
        };
        let mut draw = |(lo, hi): (u64, u64)| rng.gen_range(lo..=hi) * PAGE_SIZE * scale;
        let (t, a, d) = (draw(text), draw(anon), draw(data));
        let file = |pat: &str, loc: &Loc, need: u64| -> Result<String, ScenarioError> {
            let path = pat.replace("{i}", &i.to_string());
            match env.files.iter().find(|f| *f.path == *path) {
                None => Err(loc.err(format!(
                    "\"{path}\" (application {i}) is not a file of the scenario; declare it in [[files]]"
                ))),
                Some(f) if f.size_bytes < need => Err(loc.err(format!(
                    "\"{path}\" is {} but application {i} reads {}",
                    fmt_bytes(f.size_bytes),
                    fmt_bytes(need)
                ))),
                Some(_) => Ok(path),
            }
        };
        out.push(DesktopApp {
            text_path: file(&text_pat, &text_loc, t)?,
            text_bytes: t,
            anon_bytes: a,
            data_path: file(&data_pat, &data_loc, d)?,
            data_bytes: d,
        });
    }
    let nlibs = match task.opt("libs", want_u32)? {
        Some((n, loc)) if n > 256 => {
            return Err(loc.err(format!("libs must be from 0 to 256, got {n}")))
        }
        Some((n, _)) => n,
        None => 0,
    };
    let hot_lib_percent = percent("hot_lib", 25)?;
    let hot_anon_write_percent = percent("hot_anon_write", 100)?;
    let spread_code = match task.opt("hot_code", want_str)? {
        None => false,
        Some(("first", _)) => false,
        Some(("spread", _)) => true,
        Some((other, loc)) => {
            return Err(loc.err(format!(
                "hot_code is \"first\" (the first hot_text % of each text) or \"spread\" (every (100/hot_text)-th page), got \"{other}\""
            )))
        }
    };
    let mut libs = Vec::with_capacity(nlibs as usize);
    if nlibs > 0 {
        let (lib_pat, lib_loc) = pattern("lib_path")?;
        for k in 0..nlibs {
            let path = lib_pat.replace("{i}", &k.to_string());
            match env.files.iter().find(|f| *f.path == *path) {
                None => {
                    return Err(lib_loc.err(format!(
                        "\"{path}\" (library {k}) is not a file of the scenario; declare it in [[files]]"
                    )))
                }
                Some(f) if f.size_bytes < PAGE_SIZE => {
                    return Err(lib_loc.err(format!(
                        "\"{path}\" (library {k}) is smaller than a page"
                    )))
                }
                Some(f) => libs.push(DesktopLib {
                    path,
                    bytes: f.size_bytes / PAGE_SIZE * PAGE_SIZE,
                }),
            }
        }
    }
    Ok(ProgramSpec::new(
        PROGRAM.name,
        DesktopSpec {
            apps: out,
            libs,
            hot_lib_percent,
            hot_anon_write_percent,
            spread_code,
            session_bytes,
            hot_text_percent,
            hot_anon_percent,
            read_block_bytes,
        },
    ))
}

const PAGE: u64 = 4096;

/// A mapping of the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    /// The session's anonymous memory.
    Session,
    /// Application `i`'s text.
    Text(usize),
    /// Library `k` as mapped by application `i`.
    Lib(usize, usize),
    /// Application `i`'s anonymous memory.
    Anon(usize),
}

/// One step of the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    TimerStart,
    TimerStop,
    /// mmap the region; the address is recorded from the result.
    Map(Region),
    /// Touch the first `len` bytes of the region.
    Touch(Region, u64, bool),
    /// Touch `len` bytes of the region from byte `from`.
    TouchFrom(Region, u64, u64, bool),
    /// Read one page in every `stride` pages of the region's `len` bytes (hot code is
    /// spread through a binary, not packed at its start).
    TouchSpread(Region, u64, u64),
    /// Open application `i`'s data file; the descriptor is recorded from the result.
    Open(usize),
    /// The next read of application `i`'s data file (repeats until all is read).
    Read(usize),
    Close,
    /// Push the actions of application `i`'s start.
    Start(usize),
    /// Push a pass over the windows of applications `0..n`, then the start of `n`.
    Switch(usize),
    Exit,
}

/// The desktop program state.
pub struct Desktop {
    spec: DesktopSpec,
    queue: VecDeque<Action>,
    /// The action whose operation was issued last (its result arrives with the next call).
    pending: Option<Action>,
    /// Text, anon and library addresses of the applications started so far.
    text_addr: Vec<u64>,
    anon_addr: Vec<u64>,
    lib_addr: Vec<Vec<u64>>,
    session_addr: u64,
    fd: u32,
    read_pos: u64,
    done: bool,
}

impl Desktop {
    /// A desktop session as the spec says.
    pub fn new(spec: DesktopSpec) -> Desktop {
        let n = spec.apps.len();
        let mut queue = VecDeque::new();
        queue.push_back(Action::TimerStart);
        if spec.session_bytes > 0 {
            queue.push_back(Action::Map(Region::Session));
            queue.push_back(Action::Touch(Region::Session, spec.session_bytes, true));
        }
        queue.push_back(if n > 0 {
            Action::Start(0)
        } else {
            Action::Exit
        });
        Desktop {
            queue,
            pending: None,
            text_addr: vec![0; n],
            anon_addr: vec![0; n],
            lib_addr: vec![vec![0; spec.libs.len()]; n],
            session_addr: 0,
            fd: 0,
            read_pos: 0,
            done: false,
            spec,
        }
    }

    /// The hot part of `bytes`: `percent` %, whole pages, at least one page when neither
    /// is 0.
    fn hot(bytes: u64, percent: u32) -> u64 {
        let pages = bytes / PAGE * u64::from(percent) / 100;
        let pages = if percent > 0 && bytes > 0 {
            pages.max(1)
        } else {
            0
        };
        pages * PAGE
    }

    /// Push a touch of the region's first `len` bytes (nothing for 0 bytes).
    fn touch(&mut self, r: Region, len: u64, write: bool) {
        if len > 0 {
            self.queue.push_back(Action::Touch(r, len, write));
        }
    }

    /// Push a read of the hot code of a `bytes`-long text: `percent` % of its pages,
    /// spread through it (every ⌊100/`percent`⌋-th page when `spread_code`), or its first
    /// `percent` %.
    fn touch_code(&mut self, r: Region, bytes: u64, percent: u32) {
        if percent == 0 || bytes == 0 {
            return;
        }
        if self.spec.spread_code {
            let stride = u64::from(100 / percent);
            self.queue.push_back(Action::TouchSpread(r, bytes, stride));
        } else {
            self.touch(r, Self::hot(bytes, percent), false);
        }
    }

    /// Push a window switch's touch of `hot` bytes of anonymous memory: the first
    /// `hot_anon_write_percent` % of it written, the rest read.
    fn touch_anon(&mut self, r: Region, hot: u64) {
        let written = Self::hot(hot, self.spec.hot_anon_write_percent);
        self.touch(r, written, true);
        if hot > written {
            self.queue
                .push_back(Action::TouchFrom(r, written, hot - written, false));
        }
    }

    /// The actions of application `i`'s start, then the timer stop and the next phase.
    fn push_start(&mut self, i: usize) {
        let app = &self.spec.apps[i];
        let (text, anon) = (app.text_bytes, app.anon_bytes);
        if Self::is_noop(app) {
            // A commented-out command: the start completes at once.
            self.push_stop(i);
            return;
        }
        self.queue.push_back(Action::Map(Region::Text(i)));
        self.touch(Region::Text(i), text, false);
        for k in 0..self.spec.libs.len() {
            self.queue.push_back(Action::Map(Region::Lib(i, k)));
            let (bytes, pct) = (self.spec.libs[k].bytes, self.spec.hot_lib_percent);
            self.touch_code(Region::Lib(i, k), bytes, pct);
        }
        self.queue.push_back(Action::Map(Region::Anon(i)));
        self.touch(Region::Anon(i), anon, true);
        self.queue.push_back(Action::Open(i));
        self.queue.push_back(Action::Read(i));
        self.queue.push_back(Action::Close);
        self.push_stop(i);
    }

    /// An application that starts nothing (the seed's `: oocalc`) and has no window.
    fn is_noop(app: &DesktopApp) -> bool {
        app.text_bytes == 0 && app.anon_bytes == 0 && app.data_bytes == 0
    }

    /// The end of application `i`'s start: the sample, then the next pass and start.
    fn push_stop(&mut self, i: usize) {
        self.queue.push_back(Action::TimerStop);
        if i + 1 < self.spec.apps.len() {
            self.queue.push_back(Action::TimerStart);
            self.queue.push_back(Action::Switch(i + 1));
        } else {
            self.queue.push_back(Action::Exit);
        }
    }

    /// A pass over the windows of applications `0..n` (the session redraws first), then
    /// application `n`'s start.
    fn push_switch(&mut self, n: usize) {
        let s = &self.spec;
        let session = Self::hot(s.session_bytes, s.hot_anon_percent);
        self.touch_anon(Region::Session, session);
        for j in 0..n {
            let s = &self.spec;
            if Self::is_noop(&s.apps[j]) {
                continue;
            }
            let anon = Self::hot(s.apps[j].anon_bytes, s.hot_anon_percent);
            let (text, pct) = (s.apps[j].text_bytes, s.hot_text_percent);
            self.touch_code(Region::Text(j), text, pct);
            for k in 0..self.spec.libs.len() {
                let (bytes, pct) = (self.spec.libs[k].bytes, self.spec.hot_lib_percent);
                self.touch_code(Region::Lib(j, k), bytes, pct);
            }
            self.touch_anon(Region::Anon(j), anon);
        }
        self.queue.push_back(Action::Start(n));
    }

    fn addr(&self, r: Region) -> u64 {
        match r {
            Region::Session => self.session_addr,
            Region::Text(i) => self.text_addr[i],
            Region::Lib(i, k) => self.lib_addr[i][k],
            Region::Anon(i) => self.anon_addr[i],
        }
    }

    /// Take the result of the last operation (an address or a descriptor). False if a
    /// value the program needs is missing.
    fn take_result(&mut self, last: &OpResult) -> bool {
        match (self.pending.take(), last) {
            (Some(Action::Map(r)), OpResult::Addr(a)) => {
                match r {
                    Region::Session => self.session_addr = *a,
                    Region::Text(i) => self.text_addr[i] = *a,
                    Region::Lib(i, k) => self.lib_addr[i][k] = *a,
                    Region::Anon(i) => self.anon_addr[i] = *a,
                }
                true
            }
            (Some(Action::Open(_)), OpResult::Fd(fd)) => {
                self.fd = *fd;
                true
            }
            (Some(Action::Map(_)), _) | (Some(Action::Open(_)), _) => false,
            _ => true,
        }
    }

    fn next_action_op(&mut self) -> Op {
        while let Some(a) = self.queue.pop_front() {
            let op = match a {
                Action::TimerStart => Op::TimerStart("start".into()),
                Action::TimerStop => Op::TimerStop("start".into()),
                Action::Map(r) => {
                    let (path, len, prot) = match r {
                        Region::Session => (None, self.spec.session_bytes, 3),
                        Region::Anon(i) => (None, self.spec.apps[i].anon_bytes, 3),
                        Region::Text(i) => (
                            Some(self.spec.apps[i].text_path.clone()),
                            self.spec.apps[i].text_bytes,
                            5,
                        ),
                        Region::Lib(_, k) => (
                            Some(self.spec.libs[k].path.clone()),
                            self.spec.libs[k].bytes,
                            5,
                        ),
                    };
                    Op::Mmap {
                        path,
                        len,
                        offset: 0,
                        prot,
                        shared: false,
                    }
                }
                Action::Touch(r, len, write) => Op::Touch {
                    addr: self.addr(r),
                    len,
                    stride: PAGE,
                    write,
                },
                Action::TouchSpread(r, len, stride) => Op::Touch {
                    addr: self.addr(r),
                    len,
                    stride: stride * PAGE,
                    write: false,
                },
                Action::TouchFrom(r, from, len, write) => Op::Touch {
                    addr: self.addr(r) + from,
                    len,
                    stride: PAGE,
                    write,
                },
                Action::Open(i) => {
                    self.read_pos = 0;
                    Op::Open {
                        path: self.spec.apps[i].data_path.as_str().into(),
                        create: false,
                        truncate: false,
                    }
                }
                Action::Read(i) => {
                    let size = self.spec.apps[i].data_bytes;
                    if self.read_pos >= size {
                        continue;
                    }
                    let len = self.spec.read_block_bytes.min(size - self.read_pos);
                    let pos = self.read_pos;
                    self.read_pos += len;
                    self.queue.push_front(Action::Read(i));
                    Op::Pread {
                        fd: self.fd,
                        len,
                        pos,
                    }
                }
                Action::Close => Op::Close { fd: self.fd },
                Action::Start(i) => {
                    self.push_start(i);
                    continue;
                }
                Action::Switch(n) => {
                    self.push_switch(n);
                    continue;
                }
                Action::Exit => break,
            };
            self.pending = Some(a);
            return op;
        }
        self.fail()
    }

    fn fail(&mut self) -> Op {
        self.done = true;
        self.queue.clear();
        Op::Exit
    }
}

impl Program for Desktop {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if self.done {
            return Op::Exit;
        }
        if let OpResult::Err(_) = last {
            // The session gives up (the errno is counted by the kernel side).
            return self.fail();
        }
        if !self.take_result(last) {
            return self.fail();
        }
        self.next_action_op()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(n: usize) -> DesktopSpec {
        DesktopSpec {
            apps: (0..n)
                .map(|i| DesktopApp {
                    text_path: format!("/t{i}"),
                    text_bytes: 8 * PAGE,
                    anon_bytes: 4 * PAGE,
                    data_path: format!("/d{i}"),
                    data_bytes: 3 * PAGE,
                })
                .collect(),
            libs: vec![],
            hot_lib_percent: 25,
            session_bytes: 0,
            hot_text_percent: 25,
            hot_anon_percent: 25,
            hot_anon_write_percent: 100,
            spread_code: false,
            read_block_bytes: 2 * PAGE,
        }
    }

    /// Drive the program with plausible results; return the ops.
    fn run(spec: DesktopSpec) -> Vec<Op> {
        let mut p = Desktop::new(spec);
        let mut ops = Vec::new();
        let mut last = OpResult::None;
        let mut next_addr = 0x1000_0000;
        for _ in 0..10_000 {
            let op = p.next_op(&last);
            last = match &op {
                Op::Mmap { .. } => {
                    next_addr += 0x100_0000;
                    OpResult::Addr(next_addr)
                }
                Op::Open { .. } => OpResult::Fd(3),
                _ => OpResult::None,
            };
            let exit = op == Op::Exit;
            ops.push(op);
            if exit {
                break;
            }
        }
        ops
    }

    #[test]
    fn start_then_switch_through_earlier_windows() {
        let ops = run(spec(3));
        assert_eq!(ops.first(), Some(&Op::TimerStart("start".into())));
        assert_eq!(ops.last(), Some(&Op::Exit));
        let stops = ops
            .iter()
            .filter(|o| **o == Op::TimerStop("start".into()))
            .count();
        assert_eq!(stops, 3, "one sample per application");
        // Window switches: after app 1 one window, after app 2 two: (1 + 2) x (text, anon).
        let hot: Vec<&Op> = ops
            .iter()
            .filter(|o| matches!(o, Op::Touch { len, .. } if *len < 4 * PAGE))
            .collect();
        assert_eq!(hot.len(), 6);
        assert!(matches!(hot[0], Op::Touch { len, write: false, .. } if *len == 2 * PAGE));
        assert!(matches!(hot[1], Op::Touch { len, write: true, .. } if *len == PAGE));
        // Data read in two preads of 2 + 1 pages per application.
        let preads = ops.iter().filter(|o| matches!(o, Op::Pread { .. })).count();
        assert_eq!(preads, 6);
        // Text is mapped executable.
        assert!(ops
            .iter()
            .any(|o| matches!(o, Op::Mmap { prot: 5, path: Some(p), .. } if p == "/t2")));
    }

    /// Every application maps every library executable; the start reads the hot part of
    /// each through the new mapping, and each window switch reads it again through that
    /// window's application's own mapping.
    #[test]
    fn libraries_are_mapped_by_every_application() {
        let mut s = spec(3);
        s.libs = vec![
            DesktopLib {
                path: "/lib0".into(),
                bytes: 16 * PAGE,
            },
            DesktopLib {
                path: "/lib1".into(),
                bytes: 8 * PAGE,
            },
        ];
        s.hot_lib_percent = 50;
        let ops = run(s);
        let lib_maps: Vec<&Op> = ops
            .iter()
            .filter(
                |o| matches!(o, Op::Mmap { path: Some(p), prot: 5, .. } if p.starts_with("/lib")),
            )
            .collect();
        assert_eq!(lib_maps.len(), 6, "3 applications x 2 libraries");
        // The addresses the library mappings got (the driver hands out addresses in order).
        let mut lib_addr = std::collections::BTreeSet::new();
        let mut next_addr = 0x1000_0000u64;
        for o in &ops {
            if let Op::Mmap { path, .. } = o {
                next_addr += 0x100_0000;
                if path.as_deref().is_some_and(|p| p.starts_with("/lib")) {
                    lib_addr.insert(next_addr);
                }
            }
        }
        // Library touches: 8 pages of lib0 and 4 of lib1, read only: 3 starts + 3 window
        // switches (1 after the second start, 2 after the third), for each library.
        let lib_touches = |pages: u64| {
            ops.iter()
                .filter(|o| matches!(o, Op::Touch { addr, len, write: false, .. } if *len == pages * PAGE && lib_addr.contains(addr)))
                .count()
        };
        assert_eq!(lib_touches(8), 6);
        assert_eq!(lib_touches(4), 6);
        // The addresses differ per application: each switch goes through its own mapping.
        let addrs: std::collections::BTreeSet<u64> = ops
            .iter()
            .filter_map(|o| match o {
                Op::Touch { addr, len, .. } if *len == 8 * PAGE && lib_addr.contains(addr) => {
                    Some(*addr)
                }
                _ => None,
            })
            .collect();
        assert_eq!(addrs.len(), 3);
    }

    /// A no-op start (the seed's `: oocalc`) maps and reads nothing and has no window; the
    /// pass over the windows before it still happens.
    #[test]
    fn noop_start_only_switches() {
        let mut s = spec(3);
        s.apps[2] = DesktopApp {
            text_path: String::new(),
            text_bytes: 0,
            anon_bytes: 0,
            data_path: String::new(),
            data_bytes: 0,
        };
        let ops = run(s);
        let stops = ops
            .iter()
            .filter(|o| **o == Op::TimerStop("start".into()))
            .count();
        assert_eq!(stops, 3, "a sample for the no-op start too");
        let maps = ops.iter().filter(|o| matches!(o, Op::Mmap { .. })).count();
        assert_eq!(maps, 4, "text and anon of the two real applications");
        let opens = ops.iter().filter(|o| matches!(o, Op::Open { .. })).count();
        assert_eq!(opens, 2);
        // Switches: 1 window after the first start, 2 after the second: 3 x (text, anon).
        let hot = ops
            .iter()
            .filter(|o| matches!(o, Op::Touch { len, .. } if *len < 4 * PAGE))
            .count();
        assert_eq!(hot, 6);
    }

    /// Spread hot code: one page in every 100/p, over the whole text; anon split into a
    /// written and a read part.
    #[test]
    fn spread_code_and_read_mostly_anon() {
        let mut s = spec(2);
        s.spread_code = true;
        s.hot_anon_percent = 100;
        s.hot_anon_write_percent = 25;
        let ops = run(s);
        assert!(
            ops.iter()
                .any(|o| matches!(o, Op::Touch { len, stride, write: false, .. }
                if *len == 8 * PAGE && *stride == 4 * PAGE)),
            "hot text: every 4th page of the 8-page text"
        );
        // The window switch of app 0 (4 anon pages): 1 written, then 3 read from page 1.
        let i = ops
            .iter()
            .position(|o| matches!(o, Op::Touch { len, write: true, .. } if *len == PAGE))
            .expect("the written part");
        assert!(
            matches!(&ops[i + 1], Op::Touch { len, write: false, stride, .. }
            if *len == 3 * PAGE && *stride == PAGE)
        );
    }

    #[test]
    fn error_ends_the_session() {
        let mut p = Desktop::new(spec(2));
        assert_eq!(p.next_op(&OpResult::None), Op::TimerStart("start".into()));
        assert!(matches!(p.next_op(&OpResult::None), Op::Mmap { .. }));
        assert_eq!(
            p.next_op(&OpResult::Err(crate::workload::Errno::ENOMEM)),
            Op::Exit
        );
        assert_eq!(p.next_op(&OpResult::None), Op::Exit);
    }
}

#[cfg(test)]
mod builtin_tests {
    use super::{DesktopApp, DesktopSpec};
    use crate::scenario::load_scenario;

    /// The built-in `desktop`: 51 applications (the seed's 51 rows), sizes in the
    /// documented ranges, the last 6 no-op starts (the seed's commented-out `: oo*` rows),
    /// 8 shared 2 MiB libraries, the same sizes for the same seed and other sizes for another.
    #[test]
    fn builtin_sizes() {
        let spec = |sets: &[String]| {
            let sc = load_scenario("desktop", sets).unwrap();
            let p = &sc.tasks[0].program;
            p.get::<DesktopSpec>()
                .cloned()
                .unwrap_or_else(|| panic!("{p:?}"))
        };
        let d = spec(&[]);
        assert_eq!(d.apps.len(), 51);
        const MIB: u64 = 1 << 20;
        for (i, a) in d.apps.iter().enumerate() {
            if i >= 45 {
                assert_eq!((a.text_bytes, a.anon_bytes, a.data_bytes), (0, 0, 0), "{i}");
                continue;
            }
            assert!((MIB..=8 * MIB).contains(&a.text_bytes), "{i} {a:?}");
            assert!((2 * MIB..=16 * MIB).contains(&a.anon_bytes), "{i} {a:?}");
            assert!((MIB..=4 * MIB).contains(&a.data_bytes), "{i} {a:?}");
            assert_eq!(a.text_path, format!("/usr/bin/app{i}"));
        }
        assert_eq!(d.libs.len(), 8);
        assert!(d.libs.iter().all(|l| l.bytes == 2 * MIB));
        assert!(d.spread_code);
        let total = |f: fn(&DesktopApp) -> u64| d.apps.iter().map(f).sum::<u64>() / MIB;
        eprintln!(
            "desktop totals: text {} MiB, anon {} MiB, data {} MiB",
            total(|a| a.text_bytes),
            total(|a| a.anon_bytes),
            total(|a| a.data_bytes)
        );
        assert_eq!(spec(&[]), d, "deterministic");
        assert_ne!(spec(&["seed=2".to_string()]), d, "drawn from the seed");
    }
}
