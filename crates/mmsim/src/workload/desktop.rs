//! `desktop`: a desktop under memory pressure (seed 001 §1, feature `exec-protect`).
//!
//! Applications are started one after another. Starting application `i`:
//! 1. map its executable (`text_path`, PROT_READ|PROT_EXEC, MAP_PRIVATE) and touch every
//!    page of the mapped `text_bytes` (read);
//! 2. map `anon_bytes` of anonymous memory and write every page;
//! 3. open its data file and read `data_bytes` of it in `read_block_bytes` reads, close.
//!
//! The start is then complete: the program records a sample under the label `start` (the
//! virtual time since the previous application's start completed, or since the program
//! began for the first; the timer restarts at once, so the prefix sums of the samples are
//! the cumulative times at which each start completed, the seed's "progress timing"), and
//! the region's major faults go to `region_majflt["start"]`. Then the user switches
//! through all windows opened so far: for each application started, in start order, the
//! first `hot_text_percent` % of its text is read again and the first `hot_anon_percent` %
//! of its anonymous memory written again (the code and data a window needs to redraw and react).
//! The window switches after the last start are not timed and not done. The mappings are
//! released when the task exits.
//!
//! `session_bytes` of anonymous memory stand for the X server, window manager and panel:
//! mapped and written before the first start (inside the first sample), and
//! `hot_anon_percent` % of it written again at the beginning of every pass over the
//! windows (the X server redraws).

use super::{Op, OpResult, Program};
use crate::scenario::DesktopSpec;

const PAGE: u64 = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Begin,
    MapSession,
    TouchSession,
    SwitchSession,
    MapText,
    TouchText,
    MapAnon,
    TouchAnon,
    OpenData,
    ReadData,
    CloseData,
    Completed,
    Restart,
    SwitchText,
    SwitchAnon,
    Done,
}

/// The desktop program state.
pub struct Desktop {
    spec: DesktopSpec,
    step: Step,
    /// The application being started.
    app: usize,
    /// Text and anon addresses of the applications started so far.
    text_addr: Vec<u64>,
    anon_addr: Vec<u64>,
    fd: u32,
    read_pos: u64,
    /// The application whose window is being switched to.
    window: usize,
    /// The session's anonymous memory.
    session_addr: u64,
}

impl Desktop {
    /// A desktop session as the spec says.
    pub fn new(spec: DesktopSpec) -> Desktop {
        let n = spec.apps.len();
        Desktop {
            spec,
            step: Step::Begin,
            app: 0,
            text_addr: Vec::with_capacity(n),
            anon_addr: Vec::with_capacity(n),
            fd: 0,
            read_pos: 0,
            window: 0,
            session_addr: 0,
        }
    }

    /// The hot part of `bytes`: `percent` %, whole pages, at least one page when the
    /// percentage is not 0.
    fn hot(bytes: u64, percent: u32) -> u64 {
        let pages = bytes / PAGE * u64::from(percent) / 100;
        let pages = if percent > 0 { pages.max(1) } else { 0 };
        pages * PAGE
    }

    /// The next window switch (text first, then anon, for each application started), or
    /// the next application's start.
    fn switch_or_next(&mut self) -> Op {
        while self.window < self.app {
            let j = self.window;
            match self.step {
                Step::SwitchText => {
                    self.step = Step::SwitchAnon;
                    let len = Self::hot(self.spec.apps[j].text_bytes, self.spec.hot_text_percent);
                    if len > 0 {
                        return Op::Touch {
                            addr: self.text_addr[j],
                            len,
                            stride: PAGE,
                            write: false,
                        };
                    }
                }
                _ => {
                    self.step = Step::SwitchText;
                    self.window += 1;
                    let len = Self::hot(self.spec.apps[j].anon_bytes, self.spec.hot_anon_percent);
                    if len > 0 {
                        return Op::Touch {
                            addr: self.anon_addr[j],
                            len,
                            stride: PAGE,
                            write: true,
                        };
                    }
                }
            }
        }
        self.step = Step::MapText;
        self.next_step(&OpResult::None)
    }

    fn next_step(&mut self, last: &OpResult) -> Op {
        match self.step {
            Step::Begin => {
                self.step = if self.spec.session_bytes > 0 {
                    Step::MapSession
                } else {
                    Step::MapText
                };
                Op::TimerStart("start".into())
            }
            Step::MapSession => {
                self.step = Step::TouchSession;
                Op::Mmap {
                    path: None,
                    len: self.spec.session_bytes,
                    offset: 0,
                    prot: 3,
                    shared: false,
                }
            }
            Step::TouchSession => {
                let OpResult::Addr(a) = last else {
                    return self.fail();
                };
                self.session_addr = *a;
                self.step = Step::MapText;
                Op::Touch {
                    addr: *a,
                    len: self.spec.session_bytes,
                    stride: PAGE,
                    write: true,
                }
            }
            Step::SwitchSession => {
                self.step = Step::SwitchText;
                let len = Self::hot(self.spec.session_bytes, self.spec.hot_anon_percent);
                if self.spec.session_bytes == 0 || len == 0 {
                    return self.switch_or_next();
                }
                Op::Touch {
                    addr: self.session_addr,
                    len,
                    stride: PAGE,
                    write: true,
                }
            }
            Step::MapText => {
                if self.app >= self.spec.apps.len() {
                    self.step = Step::Done;
                    return Op::Exit;
                }
                self.step = Step::TouchText;
                Op::Mmap {
                    path: Some(self.spec.apps[self.app].text_path.clone()),
                    len: self.spec.apps[self.app].text_bytes,
                    offset: 0,
                    prot: 5,
                    shared: false,
                }
            }
            Step::TouchText => {
                let OpResult::Addr(a) = last else {
                    return self.fail();
                };
                self.text_addr.push(*a);
                self.step = Step::MapAnon;
                Op::Touch {
                    addr: *a,
                    len: self.spec.apps[self.app].text_bytes,
                    stride: PAGE,
                    write: false,
                }
            }
            Step::MapAnon => {
                self.step = Step::TouchAnon;
                Op::Mmap {
                    path: None,
                    len: self.spec.apps[self.app].anon_bytes,
                    offset: 0,
                    prot: 3,
                    shared: false,
                }
            }
            Step::TouchAnon => {
                let OpResult::Addr(a) = last else {
                    return self.fail();
                };
                self.anon_addr.push(*a);
                self.step = Step::OpenData;
                Op::Touch {
                    addr: *a,
                    len: self.spec.apps[self.app].anon_bytes,
                    stride: PAGE,
                    write: true,
                }
            }
            Step::OpenData => {
                self.step = Step::ReadData;
                self.read_pos = 0;
                Op::Open {
                    path: self.spec.apps[self.app].data_path.clone(),
                    create: false,
                    truncate: false,
                }
            }
            Step::ReadData => {
                if let OpResult::Fd(fd) = last {
                    self.fd = *fd;
                }
                let size = self.spec.apps[self.app].data_bytes;
                if self.read_pos >= size {
                    self.step = Step::CloseData;
                    return self.next_step(&OpResult::None);
                }
                let len = self.spec.read_block_bytes.min(size - self.read_pos);
                let pos = self.read_pos;
                self.read_pos += len;
                Op::Pread {
                    fd: self.fd,
                    len,
                    pos,
                }
            }
            Step::CloseData => {
                self.step = Step::Completed;
                Op::Close { fd: self.fd }
            }
            Step::Completed => {
                self.step = Step::Restart;
                Op::TimerStop("start".into())
            }
            Step::Restart => {
                self.app += 1;
                self.window = 0;
                if self.app >= self.spec.apps.len() {
                    self.step = Step::Done;
                    return Op::Exit;
                }
                self.step = Step::SwitchSession;
                Op::TimerStart("start".into())
            }
            Step::SwitchText | Step::SwitchAnon => self.switch_or_next(),
            Step::Done => Op::Exit,
        }
    }

    fn fail(&mut self) -> Op {
        self.step = Step::Done;
        Op::Exit
    }
}

impl Program for Desktop {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            // The session gives up (the errno is counted by the kernel side).
            return self.fail();
        }
        self.next_step(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DesktopApp;

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
            session_bytes: 0,
            hot_text_percent: 25,
            hot_anon_percent: 25,
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
    use crate::scenario::{load_scenario, ProgramSpec};

    /// The built-in `desktop`: 51 applications (the seed's 51 rows), sizes in the
    /// documented ranges, the last 6 doubled, the same sizes for the same seed and other sizes for another.
    #[test]
    fn builtin_sizes() {
        let spec = |sets: &[String]| {
            let sc = load_scenario("desktop", sets).unwrap();
            match &sc.tasks[0].program {
                ProgramSpec::Desktop(d) => d.clone(),
                p => panic!("{p:?}"),
            }
        };
        let d = spec(&[]);
        assert_eq!(d.apps.len(), 51);
        const MIB: u64 = 1 << 20;
        for (i, a) in d.apps.iter().enumerate() {
            let k = if i >= 45 { 2 } else { 1 };
            assert!((MIB * k..=8 * MIB * k).contains(&a.text_bytes), "{i} {a:?}");
            assert!(
                (2 * MIB * k..=16 * MIB * k).contains(&a.anon_bytes),
                "{i} {a:?}"
            );
            assert!((MIB * k..=4 * MIB * k).contains(&a.data_bytes), "{i} {a:?}");
            assert_eq!(a.text_path, format!("/usr/bin/app{i}"));
        }
        let total =
            |f: fn(&crate::scenario::DesktopApp) -> u64| d.apps.iter().map(f).sum::<u64>() / MIB;
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
