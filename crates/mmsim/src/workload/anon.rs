//! `anon`: map anonymous memory and touch it `passes` times — sequentially, or in a seeded
//! random order of 64-page chunks — writing (or only reading), then unmap it and exit.
//! Each pass is timed under the label "pass".

use rand::seq::SliceRandom;
use rand::SeedableRng;

use super::{Op, OpResult, Program};

use serde::Serialize;

use super::{Footprint, MlockMode, Param, Params, ProgramDef, ProgramSpec, SampleDef, SampleKind};
use crate::scenario::{
    want_bool, want_duration, want_size, want_str, want_u64, Env, Scenario, ScenarioError, View,
};

/// Parameters of the `anon` program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnonSpec {
    /// Bytes of anonymous memory to map.
    pub size_bytes: u64,
    /// Passes over the memory (≥ 1).
    pub passes: u32,
    /// Write (else only read) on every access.
    pub write: bool,
    /// Visit the memory in a random order of 64-page chunks (else sequentially).
    pub random: bool,
    /// Sleep between passes, ns.
    pub think_ns: u64,
    /// Seed of the random order.
    pub seed: u64,
    /// MAP_SHARED (shmem, as PostgreSQL's shared buffers) instead of MAP_PRIVATE.
    pub shared: bool,
    /// mlock(2) the mapping right after mmap.
    pub mlock: MlockMode,
    /// madvise(2) of the whole mapping after each pass but the last (None: no call).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub madvise: Option<super::Madvice>,
}

impl Params for AnonSpec {
    fn build(&self) -> Box<dyn super::Program> {
        Box::new(Anon::new(self.clone()))
    }
    fn footprint(&self, _: &Scenario) -> Footprint {
        Footprint::mapping(self.size_bytes, u64::from(self.passes))
    }
}

/// `program = "anon"`.
pub const PROGRAM: ProgramDef = ProgramDef {
    name: "anon",
    summary: "map anonymous memory and touch every page of it, several passes",
    doc: "Maps `size` bytes of private anonymous memory (`mmap(MAP_PRIVATE|MAP_ANONYMOUS)`, \
          read and write; with `shared = true` `MAP_SHARED|MAP_ANONYMOUS`, shmem as \
          PostgreSQL's shared buffers are) and touches one byte of every page, `passes` \
          times: sequentially, \
          or with `pattern = \"random\"` in a random order of 64-page (256 KiB) chunks drawn \
          from `seed`, sleeping `think` between passes; then unmaps it and exits. The first \
          pass faults every page in (zero-filled); with more anonymous memory than RAM, later \
          passes swap in what reclaim swapped out — declare a `[swap]` area, or anonymous \
          memory is never reclaimed and the OOM killer ends the task.",
    params: &[
        Param {
            key: "size",
            ty: "size (bytes)",
            default: "required",
            rules: "≥ 1 byte; `ram` expressions allowed",
        },
        Param {
            key: "passes",
            ty: "integer",
            default: "`1`",
            rules: "≥ 1",
        },
        Param {
            key: "write",
            ty: "boolean",
            default: "`true`",
            rules: "`true`: every access writes (dirty pages, written to swap when \
                    reclaimed); `false`: every access only reads",
        },
        Param {
            key: "pattern",
            ty: "string",
            default: "`\"sequential\"`",
            rules: "`\"sequential\"` or `\"random\"` (64-page chunks in a seeded random order, \
                    a new order each pass)",
        },
        Param {
            key: "think",
            ty: "duration",
            default: "`\"0s\"`",
            rules: "sleep between passes",
        },
        Param {
            key: "seed",
            ty: "integer",
            default: "`1`",
            rules: "seed of the random order (not the scenario's `seed`)",
        },
        Param {
            key: "shared",
            ty: "boolean",
            default: "`false`",
            rules: "`true`: a shared anonymous mapping. The kernel backs it with an unlinked \
                    file on its internal tmpfs (shmem_zero_setup): its pages are shmem — \
                    memory.stat `shmem` and `file`, /proc/vmstat `nr_shmem`, on the anon LRU, \
                    written to swap by shmem_writepage (the swap entry stays in the file, \
                    the PTE is cleared) and read back by shmem_swapin — and a read \
                    allocates a page. The last unmap frees them and their swap",
        },
        MlockMode::param(
            "`true`: mlock(2) the mapping right after mmap — VM_LOCKED, then every \
             page faulted in at once (mlock's populate: written for a private mapping, \
             read for a shared one) before the first pass; its pages are mlocked \
             (/proc/vmstat `nr_mlock`), on the unevictable list (`nr_unevictable`, \
             memory.stat `unevictable`) and never reclaimed, until the unmap munlocks \
             them. `\"onfault\"`: mlock2(MLOCK_ONFAULT), VM_LOCKED without the \
             populate: each page is mlocked when the passes fault it in. The task \
             has CAP_IPC_LOCK (no RLIMIT_MEMLOCK). See `mm/mlock.rs`",
        ),
        Param {
            key: "madvise",
            ty: "string",
            default: "none",
            rules: "madvise(2) of the whole mapping after each pass but the last, before the \
                    `think` sleep (an idle process handing memory back): `\"none\"` (no \
                    call), `\"dontneed\"` (the \
                    pages are freed — a shared mapping's stay in shmem — and the next pass \
                    faults in zeroes), `\"cold\"` (MADV_COLD, 5.4: deactivated), \
                    `\"pageout\"` (MADV_PAGEOUT, 5.4: reclaimed now — swapped out, or kept \
                    and activated without swap), `\"free\"` (MADV_FREE, 4.5: lazily freeable; \
                    reclaim drops the pages not written again without swapping them, and \
                    the next pass finds zeroes there; EINVAL on a shared mapping), \
                    `\"willneed\"` (MADV_WILLNEED, 3.8: the swapped-out pages are read \
                    back into the swap cache now, so the next pass faults them in minor; \
                    EBADF before 3.8), or an access hint (`\"normal\"`, `\"sequential\"`, \
                    `\"random\"`: references through an MADV_SEQUENTIAL mapping, and from \
                    6.3 an MADV_RANDOM one, do not count for reclaim). On an era before \
                    5.4 `cold` and `pageout` (before 4.5 `free`) fail with EINVAL and the \
                    task stops (its error count shows it). See `mm/madvise.rs`",
        },
    ],
    samples: &[SampleDef {
        label: "pass",
        kind: SampleKind::Time,
        doc: "one pass over the whole mapping",
    }],
    example: r#"name = "anon-example"
kernel = "4.2"

[machine]
cpus_per_node = 2
memory_per_node = "64MiB"

[swap]
size = "256MiB"
preset = "ssd"

[[tasks]]
name = "seq"
cpu = 0
program = "anon"
size = "ram*3/4"
passes = 2

[[tasks]]
name = "rand"
cpu = 1
program = "anon"
size = "ram/2"
passes = 2
pattern = "random"
seed = 7
"#,
    parse: parse_anon,
};

fn parse_anon(task: &View<'_>, env: &Env<'_>) -> Result<ProgramSpec, ScenarioError> {
    let ram = env.total_memory_bytes;
    let (size_bytes, size_loc) = task.req(
        "size",
        "bytes of anonymous memory, e.g. \"ram/2\"",
        |i, l| want_size(i, l, Some(ram)),
    )?;
    if size_bytes == 0 {
        return Err(size_loc.err("the size must be at least 1 byte"));
    }
    let passes = super::parse_passes(task)?;
    let write = task.opt("write", want_bool)?.is_none_or(|(b, _)| b);
    let random = match task.opt("pattern", want_str)? {
        None => false,
        Some(("sequential", _)) => false,
        Some(("random", _)) => true,
        Some((other, loc)) => {
            return Err(loc.err(format!(
                "unknown pattern \"{other}\"; patterns: sequential, random"
            )))
        }
    };
    let think_ns = task.opt("think", want_duration)?.map_or(0, |(v, _)| v);
    let seed = task.opt("seed", want_u64)?.map_or(1, |(v, _)| v);
    let shared = task.opt("shared", want_bool)?.is_some_and(|(b, _)| b);
    let mlock = MlockMode::parse(task)?;
    let madvise = super::parse_advice(task, "madvise", &super::Madvice::ALL)?;
    Ok(ProgramSpec::new(
        PROGRAM.name,
        AnonSpec {
            size_bytes,
            passes,
            write,
            random,
            think_ns,
            seed,
            shared,
            mlock,
            madvise,
        },
    ))
}

const CHUNK: u64 = 64 * 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Map,
    Mlock,
    StartPass,
    Touch,
    Advise,
    Think,
    Unmap,
    Done,
}

/// The anon program state.
pub struct Anon {
    spec: AnonSpec,
    phase: Phase,
    addr: u64,
    pass: u32,
    order: Vec<u64>,
    next: usize,
    rng: rand_pcg::Pcg64,
    /// The mlock and populate ops after the mmap, popped from the back.
    queued: Vec<Op>,
}

impl Anon {
    /// An anon program as the spec says.
    pub fn new(spec: AnonSpec) -> Anon {
        let rng = rand_pcg::Pcg64::seed_from_u64(spec.seed);
        Anon {
            spec,
            phase: Phase::Map,
            addr: 0,
            pass: 0,
            order: Vec::new(),
            next: 0,
            rng,
            queued: Vec::new(),
        }
    }
}

impl Program for Anon {
    fn next_op(&mut self, last: &OpResult) -> Op {
        if let OpResult::Err(_) = last {
            self.phase = Phase::Done;
        }
        match self.phase {
            Phase::Map => {
                self.phase = if self.spec.mlock == MlockMode::Off {
                    Phase::StartPass
                } else {
                    Phase::Mlock
                };
                Op::Mmap {
                    path: None,
                    len: self.spec.size_bytes,
                    offset: 0,
                    prot: 3,
                    shared: self.spec.shared,
                }
            }
            Phase::Mlock => {
                let (mode, shape) = (self.spec.mlock, (self.spec.size_bytes, !self.spec.shared));
                match mode.next_after_mmap(&mut self.queued, last, &mut self.addr, shape) {
                    Some(op) => op,
                    None => {
                        self.phase = Phase::StartPass;
                        self.next_op(last)
                    }
                }
            }
            Phase::StartPass => {
                if let OpResult::Addr(a) = last {
                    self.addr = *a;
                }
                let chunks = self.spec.size_bytes.div_ceil(CHUNK);
                self.order = (0..chunks).collect();
                if self.spec.random {
                    self.order.shuffle(&mut self.rng);
                }
                self.next = 0;
                self.phase = Phase::Touch;
                Op::TimerStart("pass".into())
            }
            Phase::Touch => {
                if self.next >= self.order.len() {
                    self.pass += 1;
                    self.phase = if self.pass >= self.spec.passes {
                        Phase::Unmap
                    } else if self.spec.madvise.is_some() {
                        Phase::Advise
                    } else {
                        Phase::Think
                    };
                    return Op::TimerStop("pass".into());
                }
                let c = self.order[self.next];
                self.next += 1;
                let off = c * CHUNK;
                Op::Touch {
                    addr: self.addr + off,
                    len: CHUNK.min(self.spec.size_bytes - off),
                    stride: 4096,
                    write: self.spec.write,
                }
            }
            Phase::Advise => {
                self.phase = Phase::Think;
                Op::Madvise {
                    addr: self.addr,
                    len: self.spec.size_bytes,
                    advice: self.spec.madvise.expect("the advice"),
                }
            }
            Phase::Think => {
                self.phase = Phase::StartPass;
                Op::Sleep {
                    ns: self.spec.think_ns,
                }
            }
            Phase::Unmap => {
                self.phase = Phase::Done;
                Op::Munmap {
                    addr: self.addr,
                    len: self.spec.size_bytes,
                }
            }
            Phase::Done => Op::Exit,
        }
    }
}
