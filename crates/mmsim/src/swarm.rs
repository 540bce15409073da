//! Swarm testing (TigerBeetle's VOPR, "swarm testing" of Groce et al.): each seed derives a
//! random small machine, a random mix of workload programs and random feature switches,
//! and runs it with the invariant checker and the content oracle. The seed is the whole
//! bug report: a failure prints the one command that replays it.
//!
//! - One PCG stream per seed (`Pcg64::seed_from_u64(seed)`) makes every choice, so
//!   `mmsim swarm --seed N --runs 1` rebuilds exactly the same case.
//! - The case is generated as scenario TOML text and read by `parse_scenario`, so the
//!   generator also exercises the parser (a rejected case is a failure too).
//! - Machine: 1–2 nodes, 1–4 CPUs per node, 16–128 MiB per node, swap (with its own
//!   preset, sometimes with swap-out errors) or not, one block device with a random preset
//!   (sometimes with read / write error rates), a blockfs at `/mnt` (its `atime` option and
//!   journal drawn) and a tmpfs at `/tmp`
//!   as large as RAM (`size = "ram"`: the programs' files there are drawn up to RAM).
//! - Programs (1–3 tasks): dd, read, anon (a quarter of them shared, shmem; a tenth
//!   mlocked, from a generator of its own), mmap-read (an access hint, from a generator of
//!   its own), dd and read with nocache or RWF_DONTCACHE (generators of their own),
//!   pread-stride, sparsetruncate, bonnie, desktop, at small sizes.
//! - Features: a kernel era (`kernel = "…"`, one of `kernel::ERAS`, and in a quarter of
//!   the cases, from a generator of its own, a release between the named era before it and
//!   it, 4.13 or 6.5; `--kernel` replaces it), every studied change on or off, and about a quarter of the era's rules
//!   overridden in `[features]`, so the cases cover each era and combinations no kernel
//!   had. The era and the overrides are drawn after the machine and the tasks, so the rest
//!   of a seed's case is what it was before eras existed.
//! - Memory cgroups (drawn last, after the era, so a case without them is the case of the
//!   same seed before cgroups existed): in half of the cases 1–3 `[[cgroups]]`, the
//!   second sometimes a child of the first (`a/b`), each with a random memory.max between
//!   RAM/16 and RAM (or `"max"`), sometimes memory.high, memory.low and memory.min below
//!   the max, and with swap sometimes swap_max (and swap_high from the 6.1 era, from a
//!   generator of its own), from the 6.1 era sometimes memory.oom.group; each task then
//!   runs in a random one of them or in the root, sometimes with an oom_score_adj (both
//!   from a third generator). The limits always pass the scenario's validation.
//! - Threads, from a generator of their own (drawn after the cgroups, which it reads): in a
//!   quarter of the cases with two tasks or more, task 0 and every other `t<i>` in its
//!   cgroup with its oom_score_adj are threads of one process (`thread_group = "p"`: one
//!   shared mm), when that makes at least two.
//! - Policy (drawn last): MGLRU (`policy = "mglru"`) in half of the cases whose era has
//!   it (6.1 and later).
//! - Swap-in errors (drawn after the policy): in a quarter of the cases with swap, a
//!   `[swap] read_error_rate` (0.01 %, 0.1 % or 1 % per page); the task that faults on a
//!   page whose swap read failed gets SIGBUS (killed, counted), never a hang.
//! - `[swap] vma_ra_enabled = false`, from a generator of its own: in a fifth of the cases
//!   with swap whose features have VMA-based swap readahead (back to the slot window).
//! - zram (`[swap] preset = "zram"`), from a generator of its own: in a quarter of the
//!   cases with swap whose era has it (3.14 on), compression ratio 1–6, a random
//!   algorithm, and in a third of them `mem_limit` = swap / 8 (writes that fail).
//! - zswap (`[swap.zswap]`), from a generator of its own: in a quarter of the cases with
//!   swap on a block device whose era has it (6.1 on), ratio 1–6, a compressor, a pool of
//!   1–20 % of RAM, an accept threshold of 50–100 %; in a third of them a memory.zswap.max
//!   of 16–1024 KiB on each cgroup, and on 6.18 in a quarter of those
//!   memory.zswap.writeback = 0.
//! - Trace replay (drawn last): in a fifth of the cases a `replay` task with a generated
//!   trace of 50–500 requests in one of twelve formats: txt, oracleGeneral, lcs, MSR,
//!   vscsi, Alibaba or Tencent, or — from a generator of its own, which replaces the
//!   drawn format in 5/12 of the cases, so every later draw stays what the seed gave
//!   before — libCacheSim csv (its columns, delimiter and header drawn and named in the
//!   format's options), blkparse, SPC, FIU or ARC (a third of those with default options
//!   without a `format` key: the file's name tells it); objects or block reads and
//!   writes; pread/pwrite or mappings; paced or not; sometimes `limit`. In 30 % of those
//!   a device `read_ahead_kb` (0, 16, 128, 512) and, drawn after it, in 30 % a
//!   `max_sectors_kb` (4, 64, 128, 512, 1280). The trace is written to
//!   `$TMPDIR/mmsim-swarm-traces/` (one file per seed and content), zstd-compressed in a
//!   fifth of the cases and gzip-compressed in a tenth (`.zst`, `.gz`; a generator of its
//!   own). Besides the checks
//!   below, a replay that was not killed must end without an error and, in a completed
//!   case without injected IO errors, have issued every request (`replay_problem`).
//! - Proactive reclaim (drawn after the replay): in a quarter of the cases with cgroups, a
//!   `memory-reclaim` agent writing RAM/2048 ..= RAM/8 to the memory.reclaim of one of
//!   them or of the root, 1–5 times, 0–500 ms apart, after 0–1 s, in a third of them with
//!   `swappiness` 0, 60 or 200 (EAGAIN, EINVAL before 6.11 with a swappiness, and ENOENT
//!   before the 6.1 era are its expected errors); and in a quarter, a `senpai` controller
//!   on one of them or the root (every 50–500 ms, 2–20 ticks, probes of up to 1–20 % of
//!   memory.current, a stall target of 1 µs to 100 ms, in a third of them in memory.high
//!   mode after 0–1 s; ENOENT before the 6.1 era); and, from a generator of its own, in a
//!   fifth a `cgroup-write` of one cgroup's memory.max, memory.high, memory.swap.max or
//!   memory.swap.high (RAM/64 ..= RAM/4, or "max" in a fifth of them) after 0–1 s
//!   (memory.swap.high is ENOENT before the 6.1 era); after it, in a tenth, a
//!   `cgroup-write` of one cgroup's memory.oom.group (0 or 1; ENOENT before the 6.1 era).
//! - A flash device (`[[devices]] queue_depth`), from a generator of its own: in a quarter
//!   of the cases whose device is an ssd or nvme, a queue depth of 1, 2, 4 or 32.
//! - fork and copy-on-write, from a generator of its own: in a sixth of the cases a
//!   `fork-snapshot` task (a heap of RAM/64 ..= RAM/4, 1–2 snapshots, parent writes every
//!   20 µs, 200 µs or none, half of them saving to /mnt or /tmp), in a cgroup or the root.
//! - The /proc/sys/vm tunables (`[vm]`), from a generator of their own: in a fifth of the
//!   cases a swappiness of 0, 1, 10, 60 or 100 (150 or 200 too from the 6.1 era), dirty
//!   ratios of 1–60 % each (the background one sometimes at or above the dirty one), a
//!   vfs_cache_pressure of 0, 50, 100, 200 or 1000; from another generator, in a fifth
//!   of the cases, vm.watermark_scale_factor (1–3000, in the era's range), min_free_kbytes
//!   (RAM/1000, /100 or /20), dirty_bytes and dirty_background_bytes (where the ratios
//!   were not drawn), dirty_expire_centisecs and dirty_writeback_centisecs (0 among them).
//! - Checks: `mm::check::check_all` every `check_every` steps (sampled: after every step
//!   would cost O(frames) per step; see `docs/reliability.md` for the figures) and once at
//!   the end; the pressure files at the end (`psi::check`: full ≤ some, no stall longer
//!   than the run, averages within 0–100 %); the content oracle on every read (a violation
//!   is a silent loss); a stall; a panic (caught with `catch_unwind`). Reaching `max_steps` is not a failure: the case
//!   is only cut short.

use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::kernel::{resolve_features, KernelEra, ERAS, RULES};
use crate::run::{io_errors_report, run_chunked};
use crate::scenario::{parse_scenario, Scenario, KNOWN_FEATURES};
use crate::sim::{Features, RunEnd, Sim};

/// Options of a swarm run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwarmOptions {
    /// Step limit of each case.
    pub max_steps: u64,
    /// Run the invariant checker every this many steps (and at the end).
    pub check_every: u64,
    /// Debug: break an invariant on purpose (`Sim::debug_skip_lru_del_on_free`).
    pub debug_skip_lru_del_on_free: bool,
    /// The kernel era of every case (`--kernel`); None: each case's drawn era.
    pub kernel: Option<KernelEra>,
    /// The reclaim policy of every case (`--policy`); None: each case's drawn policy.
    pub policy: Option<crate::mm::policy::ReclaimPolicy>,
}

/// Default step limit of a swarm case.
pub const DEFAULT_MAX_STEPS: u64 = 60_000;
/// Default interval of the sampled invariant check, steps.
pub const DEFAULT_CHECK_EVERY: u64 = 25;

impl Default for SwarmOptions {
    fn default() -> Self {
        SwarmOptions {
            max_steps: DEFAULT_MAX_STEPS,
            check_every: DEFAULT_CHECK_EVERY,
            debug_skip_lru_del_on_free: false,
            kernel: None,
            policy: None,
        }
    }
}

impl SwarmOptions {
    /// The command that replays seed `seed` with these options.
    pub fn replay_command(&self, seed: u64) -> String {
        let mut c = format!("mmsim swarm --seed {seed} --runs 1");
        if self.max_steps != DEFAULT_MAX_STEPS {
            let _ = write!(c, " --max-steps {}", self.max_steps);
        }
        if self.check_every != DEFAULT_CHECK_EVERY {
            let _ = write!(c, " --check-every {}", self.check_every);
        }
        if self.debug_skip_lru_del_on_free {
            c.push_str(" --debug-skip-lru-del-on-free");
        }
        if let Some(k) = self.kernel {
            let _ = write!(c, " --kernel {k}");
        }
        if let Some(p) = self.policy {
            let _ = write!(c, " --policy {p}");
        }
        c
    }
}

/// One generated case.
#[derive(Clone, Debug)]
pub struct SwarmCase {
    /// The seed it came from.
    pub seed: u64,
    /// The scenario TOML text.
    pub toml: String,
    /// One line describing machine, devices, features and tasks.
    pub summary: String,
}

/// How a case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Completed (or cut short at the step limit) with every check passing.
    Pass,
    /// A failure: what went wrong.
    Fail(String),
}

/// The result of one case.
#[derive(Clone, Debug)]
pub struct SwarmResult {
    /// The seed.
    pub seed: u64,
    /// The case's one-line description.
    pub summary: String,
    /// Pass or fail.
    pub verdict: Verdict,
    /// How the engine stopped (None when it panicked or the case did not parse).
    pub end: Option<RunEnd>,
    /// Simulation steps run.
    pub steps: u64,
    /// Invariant checks run.
    pub checks: u64,
    /// IO errors injected.
    pub io_errors: u64,
    /// The replay command.
    pub replay: String,
}

/// The tasks of the case's thread group (`thread_group = "p"`): in a quarter of the cases
/// with two tasks or more (own generator), task 0 and every other task in its cgroup with
/// its oom_score_adj (a process's threads share both); all false otherwise.
fn draw_thread_group(seed: u64, nr_tasks: usize, cg: Option<&CaseCgroups>) -> Vec<bool> {
    let mut rng = Pcg64::seed_from_u64(seed ^ 0x7468_7265_6164);
    let mut members = vec![false; nr_tasks];
    if nr_tasks < 2 || !rng.gen_bool(0.25) {
        return members;
    }
    let key = |i: usize| cg.map(|c| (c.task_cgroup[i].clone(), c.oom_score_adj[i].unwrap_or(0)));
    for (i, m) in members.iter_mut().enumerate() {
        *m = key(i) == key(0);
    }
    members
}

fn pick<'a, T>(rng: &mut Pcg64, xs: &'a [T]) -> &'a T {
    &xs[rng.gen_range(0..xs.len())]
}

/// The first kernel with zram out of staging (3.14), which the swarm's zram swap needs.
const ZRAM_SINCE: KernelEra = KernelEra::new(3, 14);

/// Derive the case of `seed`: scenario TOML and its one-line summary.
pub fn generate(seed: u64) -> SwarmCase {
    let mut rng = Pcg64::seed_from_u64(seed);
    let mut t = String::new();
    let mut sum = String::new();
    let nodes: u32 = rng.gen_range(1..=2);
    let cpus: u32 = rng.gen_range(1..=4);
    let mib: u64 = *pick(&mut rng, &[16, 24, 32, 48, 64, 96, 128]);
    let ram = (u64::from(nodes) * mib) << 20;
    let _ = writeln!(t, "name = \"swarm-{seed}\"");
    let _ = writeln!(t, "description = \"mmsim swarm case, seed {seed}\"");
    let _ = writeln!(t, "seed = {}", rng.gen_range(0..1u64 << 62));
    let _ = writeln!(
        t,
        "sample_interval = \"{}\"",
        pick(&mut rng, &["1ms", "10ms", "100ms"])
    );
    let kernel_at = t.len();
    let _ = writeln!(
        t,
        "\n[machine]\nnodes = {nodes}\ncpus_per_node = {cpus}\nmemory_per_node = \"{mib}MiB\""
    );
    let _ = write!(sum, "{nodes}x{cpus} CPUs {mib} MiB/node");
    let presets = ["hdd", "ssd", "nvme"];
    let dev_preset = *pick(&mut rng, &presets);
    let _ = writeln!(
        t,
        "\n[[devices]]\nname = \"sda\"\npreset = \"{dev_preset}\"\nsize = \"4GiB\""
    );
    let _ = write!(sum, ", sda {dev_preset}");
    // A flash device's queue depth (`fs/blockdev.rs`), from a generator of its own: in a
    // quarter of the cases with an ssd or nvme.
    if dev_preset != "hdd" {
        let mut qrng = Pcg64::seed_from_u64(seed ^ 0x5155_4555_4544_4550);
        if qrng.gen_bool(0.25) {
            let q = *pick(&mut qrng, &[1u64, 2, 4, 32]);
            let _ = writeln!(t, "queue_depth = {q}");
            let _ = write!(sum, " queue_depth {q}");
        }
    }
    let rates = ["0.001", "0.01", "0.05"];
    if rng.gen_bool(0.3) {
        let r = *pick(&mut rng, &rates);
        let w = *pick(&mut rng, &rates);
        let _ = writeln!(t, "read_error_rate = {r}\nwrite_error_rate = {w}");
        let _ = write!(sum, " (errors r {r} w {w})");
    }
    // The blockfs's access-time option and journal (`fs/jbd2.rs`), from a generator of
    // their own.
    let mut arng = Pcg64::seed_from_u64(seed ^ 0x4154_494d_454a_4e4c);
    let atime = *pick(
        &mut arng,
        &["relatime", "relatime", "relatime", "noatime", "strictatime"],
    );
    let journal = arng.gen_bool(0.4);
    let _ = writeln!(
        t,
        "\n[[filesystems]]\nmount = \"/mnt\"\ntype = \"blockfs\"\ndevice = \"sda\"\natime = \"{atime}\"\njournal = {journal}\n\n[[filesystems]]\nmount = \"/tmp\"\ntype = \"tmpfs\"\nsize = \"ram\""
    );
    let _ = write!(
        sum,
        ", /mnt {atime}{}",
        if journal { " journal" } else { "" }
    );
    let mut swap_mib = None;
    if rng.gen_bool(0.5) {
        let smib = *pick(&mut rng, &[16u64, 64, 256]);
        swap_mib = Some(smib);
        let sp = *pick(&mut rng, &presets);
        let pc = rng.gen_range(0..=4);
        let _ = writeln!(
            t,
            "\n[swap]\nsize = \"{smib}MiB\"\npreset = \"{sp}\"\npage_cluster = {pc}"
        );
        let _ = write!(sum, ", swap {smib} MiB {sp} page_cluster {pc}");
        if rng.gen_bool(0.3) {
            let w = *pick(&mut rng, &rates);
            let _ = writeln!(t, "write_error_rate = {w}");
            let _ = write!(sum, " (swap-out errors {w})");
        }
    } else {
        sum.push_str(", no swap");
    }
    // The switches are drawn here (as before eras existed); which era rules they override
    // is drawn at the end.
    let drawn: Vec<(&str, bool)> = KNOWN_FEATURES
        .iter()
        .map(|f| (*f, rng.gen_bool(0.5)))
        .collect();
    let features_at = t.len();
    let summary_at = sum.len();
    let nr_tasks = rng.gen_range(1..=3);
    let total_cpus = nodes * cpus;
    let mut files = String::new();
    let mut tasks = String::new();
    let mut descr = Vec::new();
    // Where each task's table ends in `tasks` (its `cgroup` key goes there).
    let mut task_ends = Vec::new();
    for i in 0..nr_tasks {
        let cpu = rng.gen_range(0..total_cpus);
        let start_us = if rng.gen_bool(0.5) {
            0
        } else {
            rng.gen_range(0..2000)
        };
        let _ = writeln!(
            tasks,
            "\n[[tasks]]\nname = \"t{i}\"\ncpu = {cpu}\nstart = \"{start_us}us\""
        );
        let kib = |rng: &mut Pcg64, lo: u64, hi: u64| rng.gen_range(lo..=hi) * 4;
        let d = match rng.gen_range(0..8) {
            0 => {
                let dir = *pick(&mut rng, &["/mnt", "/tmp"]);
                let size = kib(&mut rng, 64, (ram >> 12) / 4);
                let bs = *pick(&mut rng, &["4KiB", "64KiB", "1MiB", "3000", "12KiB"]);
                let it = rng.gen_range(1..=2);
                let sync = rng.gen_bool(0.5);
                let _ = writeln!(
                    tasks,
                    "program = \"dd\"\npath = \"{dir}/dd{i}\"\nsize = \"{size}KiB\"\nblock_size = \"{bs}\"\niterations = {it}\nsync = {sync}"
                );
                // oflag=nocache in a quarter of the cases, from a generator of its own.
                let nocache =
                    Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4e4f_4341_4348_4544)
                        .gen_bool(0.25);
                if nocache {
                    tasks.push_str("nocache = true\n");
                }
                // RWF_DONTCACHE otherwise in a fifth of the cases (EOPNOTSUPP before 6.14
                // and on tmpfs: the task stops, a path worth running too).
                let dontcache = !nocache
                    && Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x444f_4e54_4341_4348)
                        .gen_bool(0.2);
                if dontcache {
                    tasks.push_str("dontcache = true\n");
                }
                format!(
                    "dd {dir} {size}KiB bs {bs} x{it}{}{}{}",
                    if sync { " sync" } else { "" },
                    if nocache { " nocache" } else { "" },
                    if dontcache { " dontcache" } else { "" }
                )
            }
            1 => {
                let size = kib(&mut rng, 16, (ram >> 12) * 3 / 4);
                let bs = *pick(&mut rng, &["4KiB", "128KiB", "1MiB", "5000"]);
                let passes = rng.gen_range(1..=2);
                let _ = writeln!(
                    files,
                    "\n[[files]]\npath = \"/mnt/f{i}\"\nsize = \"{size}KiB\"\ndata = true"
                );
                let _ = writeln!(
                    tasks,
                    "program = \"read\"\npath = \"/mnt/f{i}\"\nblock_size = \"{bs}\"\npasses = {passes}"
                );
                // posix_fadvise in some cases (an advice per pass, iflag=nocache), from a
                // generator of its own.
                let mut frng =
                    Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4641_4456_4953_4521);
                let advice = frng
                    .gen_bool(0.3)
                    .then(|| crate::workload::Fadvice::ALL[frng.gen_range(0..5)].0);
                let nocache = frng.gen_bool(0.25);
                if let Some(a) = advice {
                    let _ = writeln!(tasks, "advice = \"{a}\"");
                }
                if nocache {
                    tasks.push_str("nocache = true\n");
                }
                let dontcache = !nocache && frng.gen_bool(0.2);
                if dontcache {
                    tasks.push_str("dontcache = true\n");
                }
                format!(
                    "read {size}KiB bs {bs} x{passes}{}{}{}",
                    advice.map_or(String::new(), |a| format!(" advice {a}")),
                    if nocache { " nocache" } else { "" },
                    if dontcache { " dontcache" } else { "" }
                )
            }
            2 => {
                let size = kib(&mut rng, 16, (ram >> 12) * 3 / 4);
                let passes = rng.gen_range(1..=2);
                let pat = *pick(&mut rng, &["sequential", "random"]);
                let write = rng.gen_bool(0.8);
                let _ = writeln!(
                    tasks,
                    "program = \"anon\"\nsize = \"{size}KiB\"\npasses = {passes}\npattern = \"{pat}\"\nwrite = {write}\nseed = {}",
                    rng.gen_range(0..1000)
                );
                // MAP_SHARED (shmem) in a quarter of the cases, from a generator of its own
                // (the rest of the case is as before shared mappings existed).
                let shared = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x5348_4d45_4d5f_5a45)
                    .gen_bool(0.25);
                if shared {
                    tasks.push_str("shared = true\n");
                }
                // mlock in a tenth of the cases (a third of them MLOCK_ONFAULT), from a
                // generator of its own.
                let mut mrng =
                    Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4d4c_4f43_4b5f_414e);
                let mlock = match mrng.gen_range(0..30) {
                    0..=1 => "true",
                    2 => "\"onfault\"",
                    _ => "false",
                };
                if mlock != "false" {
                    let _ = writeln!(tasks, "mlock = {mlock}");
                }
                // madvise between passes in a fifth of the cases, from a generator of its
                // own (on a locked mapping, or before 5.4 for cold and pageout, the call
                // fails and the task stops: a path worth running too).
                let mut arng =
                    Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4d41_4456_4953_4521);
                let madvise = arng.gen_bool(0.2).then(|| {
                    crate::workload::Madvice::ALL
                        [arng.gen_range(0..crate::workload::Madvice::ALL.len())]
                    .0
                });
                if let Some(a) = madvise {
                    let _ = writeln!(tasks, "madvise = \"{a}\"");
                }
                format!(
                    "anon {size}KiB {pat} x{passes}{}{}{}",
                    if shared { " shared" } else { "" },
                    if mlock != "false" { " mlocked" } else { "" },
                    madvise.map_or(String::new(), |a| format!(" madvise {a}"))
                )
            }
            3 => {
                let size = kib(&mut rng, 16, (ram >> 12) / 2);
                let data = rng.gen_bool(0.5);
                let stride = *pick(&mut rng, &["4096", "8", "64KiB"]);
                let _ = writeln!(
                    files,
                    "\n[[files]]\npath = \"/mnt/m{i}\"\nsize = \"{size}KiB\"\ndata = {data}"
                );
                let _ = writeln!(
                    tasks,
                    "program = \"mmap-read\"\npath = \"/mnt/m{i}\"\nstride = \"{stride}\"\nexec = {}",
                    rng.gen_bool(0.3)
                );
                // An access hint after mmap in a quarter of the cases, from a generator of
                // its own (two passes then, so the hint meets reclaim and refaults).
                let mut hrng =
                    Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4143_4345_5353_2121);
                let access = hrng
                    .gen_bool(0.25)
                    .then(|| *pick(&mut hrng, &["normal", "sequential", "random", "willneed"]));
                if let Some(a) = access {
                    let _ = writeln!(tasks, "access = \"{a}\"\npasses = 2");
                }
                format!(
                    "mmap-read {size}KiB data={data} stride {stride}{}",
                    access.map_or(String::new(), |a| format!(" access {a}"))
                )
            }
            4 => {
                let pages = rng.gen_range(16..=(ram >> 12) / 2);
                let rp = rng.gen_range(1..=8);
                let step = rng.gen_range(rp..=rp + 16);
                let count = rng.gen_range(1..=pages / step + 1);
                let _ = writeln!(
                    files,
                    "\n[[files]]\npath = \"/mnt/p{i}\"\nsize = \"{}KiB\"\ndata = true",
                    pages * 4
                );
                let _ = writeln!(
                    tasks,
                    "program = \"pread-stride\"\npath = \"/mnt/p{i}\"\ncount = {count}\nread_pages = {rp}\nstep_pages = {step}"
                );
                format!("pread-stride {count}x{rp}/{step} pages")
            }
            5 => {
                let dir = *pick(&mut rng, &["/mnt", "/tmp"]);
                let nfiles = rng.gen_range(2..=24);
                let dirs = rng.gen_range(1..=4);
                let fsize = kib(&mut rng, 4, 128);
                let _ = writeln!(
                    tasks,
                    "program = \"sparsetruncate\"\npath = \"{dir}/st{i}\"\nfiles = {nfiles}\ndirs = {dirs}\nfile_size = \"{fsize}KiB\"\nread_stride = \"{}\"",
                    pick(&mut rng, &["4KiB", "16KiB"])
                );
                format!("sparsetruncate {dir} {nfiles} files of {fsize}KiB")
            }
            6 => {
                // A small desktop: text, shared libraries, anon, data files per app.
                let apps = rng.gen_range(1..=6);
                let libs = rng.gen_range(0..=2);
                for a in 0..apps {
                    let _ = writeln!(
                        files,
                        "\n[[files]]\npath = \"/mnt/d{i}/app{a}\"\nsize = \"64KiB\"\ndata = true\n\n[[files]]\npath = \"/mnt/d{i}/doc{a}\"\nsize = \"32KiB\"\ndata = true"
                    );
                }
                for k in 0..libs {
                    let _ = writeln!(
                        files,
                        "\n[[files]]\npath = \"/mnt/d{i}/lib{k}.so\"\nsize = \"32KiB\"\ndata = true"
                    );
                }
                let code = *pick(&mut rng, &["first", "spread"]);
                let hot_anon = rng.gen_range(0..=100);
                let write = rng.gen_range(0..=100);
                let _ = writeln!(
                    tasks,
                    "program = \"desktop\"\napps = {apps}\nnoop_apps = {}\ntext_path = \"/mnt/d{i}/app{{i}}\"\ndata_path = \"/mnt/d{i}/doc{{i}}\"\ntext_min = \"4KiB\"\ntext_max = \"64KiB\"\nanon_min = \"4KiB\"\nanon_max = \"{}KiB\"\ndata_min = \"4KiB\"\ndata_max = \"32KiB\"\nlibs = {libs}\nlib_path = \"/mnt/d{i}/lib{{i}}.so\"\nhot_code = \"{code}\"\nhot_anon = {hot_anon}\nhot_anon_write = {write}\nsession = \"{}KiB\"",
                    rng.gen_range(0..=apps.min(2)),
                    kib(&mut rng, 1, (ram >> 12) / 16),
                    kib(&mut rng, 0, (ram >> 12) / 16),
                );
                format!("desktop {apps} apps, {libs} libs, hot code {code}, hot anon {hot_anon}% ({write}% written)")
            }
            _ => {
                let dir = *pick(&mut rng, &["/mnt", "/tmp"]);
                let nfiles = rng.gen_range(2..=32);
                let fsize = rng.gen_range(0..=64) * 1024;
                let _ = writeln!(
                    tasks,
                    "program = \"bonnie\"\npath = \"{dir}/b{i}\"\nfiles = {nfiles}\nfile_size = {fsize}\nblock_size = \"{}\"\niterations = 1",
                    pick(&mut rng, &["4KiB", "8KiB", "5000"])
                );
                format!("bonnie {dir} {nfiles} files of {fsize} B")
            }
        };
        task_ends.push(tasks.len());
        descr.push((format!("t{i}@cpu{cpu}"), d));
    }
    // The era, and for each of its rules whether `[features]` overrides it.
    let era = *pick(&mut rng, ERAS);
    // In a quarter of the cases the kernel is a release after the named era before this one
    // and at most this one (6.2–6.18 for 6.18), from a generator of its own: a case that
    // keeps its named era is what it was before releases between them could be named.
    let era = {
        let mut vr = Pcg64::seed_from_u64(seed ^ 0x4b45_524e_454c_5631);
        let i = ERAS.iter().position(|e| *e == era).expect("a named era");
        if i > 0 && vr.gen_bool(0.25) {
            let between: Vec<KernelEra> = KernelEra::releases()
                .into_iter()
                .filter(|r| *r > ERAS[i - 1] && *r <= era)
                .collect();
            *pick(&mut vr, &between)
        } else {
            era
        }
    };
    let mut block = String::from("\n[features]\n");
    let mut overrides: Vec<(&str, bool)> = Vec::new();
    let mut effective = era.features("vanilla").expect("the vanilla preset");
    for (f, v) in drawn {
        let rule = RULES.iter().any(|r| r.feature == f);
        if rule && !rng.gen_bool(0.25) {
            continue;
        }
        overrides.push((f, v));
        effective.set(f, v);
    }
    if effective.check().is_err() {
        // PCID and lazy TLB mode need the TLB generations: a case that keeps either keeps
        // them too.
        match overrides.iter_mut().find(|(f, _)| *f == "tlb-gen") {
            Some(o) => o.1 = true,
            None => overrides.push(("tlb-gen", true)),
        }
    }
    let mut on = Vec::new();
    for (f, v) in overrides {
        let _ = writeln!(block, "{f} = {v}");
        on.push(format!("{}{f}", if v { '+' } else { '-' }));
    }
    t.insert_str(features_at, &block);
    sum.insert_str(
        summary_at,
        &format!("; kernel {era} features {}", on.join(",")),
    );
    t.insert_str(kernel_at, &format!("kernel = \"{era}\"\n"));
    let cgroups = draw_cgroups(&mut rng, ram, swap_mib, nr_tasks, era);
    // Threads, from a generator of their own (a case without them is the case of the same
    // seed before they existed): in a quarter of the cases with two tasks or more, the
    // tasks in the first one's cgroup with its oom_score_adj are threads of one process.
    let mut threads = draw_thread_group(seed, nr_tasks as usize, cgroups.as_ref());
    if threads.iter().filter(|&&m| m).count() < 2 {
        threads.fill(false);
    } else {
        let names: Vec<String> = (0..nr_tasks as usize)
            .filter(|&i| threads[i])
            .map(|i| format!("t{i}"))
            .collect();
        let _ = write!(sum, "; threads {}", names.join(","));
        if cgroups.is_none() {
            // From the last task back, so the earlier offsets stay valid.
            for (i, end) in task_ends.iter().enumerate().rev() {
                if threads[i] {
                    tasks.insert_str(*end, "thread_group = \"p\"\n");
                }
            }
        }
    }
    if let Some(cg) = &cgroups {
        if cg.v1 {
            t.insert_str(kernel_at, "cgroup_version = 1\n");
        }
        t.push_str(&cg.toml);
        let _ = write!(
            sum,
            "; cgroups{} {}",
            if cg.v1 { " (v1)" } else { "" },
            cg.summary.join(", ")
        );
        // From the last task back, so the earlier offsets stay valid; each task's keys go
        // in at its end.
        for (i, end) in task_ends.iter().enumerate().rev() {
            if threads[i] {
                tasks.insert_str(*end, "thread_group = \"p\"\n");
            }
            if let Some(adj) = cg.oom_score_adj[i] {
                tasks.insert_str(*end, &format!("oom_score_adj = {adj}\n"));
                descr[i].0.push_str(&format!(" adj {adj}"));
            }
            match &cg.task_cgroup[i] {
                Some(name) => {
                    tasks.insert_str(*end, &format!("cgroup = \"{name}\"\n"));
                    descr[i].0.push_str(&format!(" in {name}"));
                }
                None if cg.explicit_root[i] => tasks.insert_str(*end, "cgroup = \"/\"\n"),
                None => {}
            }
        }
    }
    // The reclaim policy, drawn last so a case that keeps the classic policy is the case of
    // the same seed before MGLRU existed: MGLRU in half of the cases of eras that have it.
    if era >= crate::mm::policy::ReclaimPolicy::Mglru.ops().since && rng.gen_bool(0.5) {
        t.insert_str(kernel_at, "policy = \"mglru\"\n");
        sum.push_str("; policy mglru");
    }
    // Swap-in errors, drawn after everything else (a case without them is the case of the
    // same seed before they existed): in a quarter of the cases with swap, a failed swap
    // read SIGBUSes the task that faults on it.
    if swap_mib.is_some() && rng.gen_bool(0.25) {
        let r = *pick(&mut rng, &["0.0001", "0.001", "0.01"]);
        if let Some(at) = t.find("\n[swap]\n") {
            t.insert_str(at + "\n[swap]\n".len(), &format!("read_error_rate = {r}\n"));
            let _ = write!(sum, "; swap-in errors {r}");
        }
    }
    // /sys/kernel/mm/swap/vma_ra_enabled = 0, from a generator of its own (every other
    // draw stays that of the same seed before it existed): in a fifth of the cases with
    // swap whose features have VMA-based swap readahead (the key is an error without it).
    let vma_ra = on
        .iter()
        .find(|o| &o[1..] == "vma-swap-readahead")
        .map(|o| o.starts_with('+'))
        .unwrap_or_else(|| {
            RULES
                .iter()
                .any(|r| r.feature == "vma-swap-readahead" && r.since <= era)
        });
    if swap_mib.is_some() && vma_ra && Pcg64::seed_from_u64(seed ^ 0x5641_5241_4f46).gen_bool(0.2) {
        if let Some(at) = t.find("\n[swap]\n") {
            t.insert_str(at + "\n[swap]\n".len(), "vma_ra_enabled = false\n");
            sum.push_str("; vma_ra_enabled false");
        }
    }
    // zram as the swap device, from a generator of its own (every other draw stays that of
    // the same seed before it existed): in a quarter of the cases with swap whose era has
    // zram (3.14 on), with a compression ratio of 1 to 6 and an algorithm, and in a third
    // of them a mem_limit of an eighth of the swap size (failed writes).
    let mut zr = Pcg64::seed_from_u64(seed ^ 0x7a72_616d_5357);
    if let (Some(smib), true) = (swap_mib, era >= ZRAM_SINCE && zr.gen_bool(0.25)) {
        let swap_at = t.find("\n[swap]\n");
        if let Some(p) = swap_at.and_then(|at| t[at..].find("preset = \"").map(|p| at + p)) {
            let end = p + t[p..].find('\n').unwrap_or(t.len() - p);
            let ratio = zr.gen_range(1..=6);
            let algo = *pick(&mut zr, &["lzo-rle", "lz4", "zstd"]);
            let mut z = format!(
                "preset = \"zram\"\ncompression_ratio = {ratio}\ncomp_algorithm = \"{algo}\""
            );
            let _ = write!(sum, "; swap on zram ({algo}, ratio {ratio}");
            if zr.gen_bool(1.0 / 3.0) {
                let _ = write!(z, "\nmem_limit = \"{}KiB\"", smib * 1024 / 8);
                let _ = write!(sum, ", mem_limit {}KiB", smib * 1024 / 8);
            }
            sum.push(')');
            t.replace_range(p..end, &z);
        }
    }
    // zswap in front of a block device, from a generator of its own: in a quarter of the
    // cases with swap not on zram whose era has it (the 6.1 era on), a ratio of 1 to 6, a
    // compressor, a pool of 1, 2, 5 or 20 % of RAM and an accept threshold; in a third of
    // them each cgroup gets a memory.zswap.max of 16 to 1024 KiB, and on 6.18 in a quarter
    // memory.zswap.writeback = 0.
    let mut zs = Pcg64::seed_from_u64(seed ^ 0x7a73_7761_7053);
    let on_zram = t.contains("preset = \"zram\"");
    if swap_mib.is_some()
        && !on_zram
        && era >= crate::scenario::ZSWAP_MAX_SINCE
        && zs.gen_bool(0.25)
    {
        let ratio = zs.gen_range(1..=6);
        let comp = *pick(&mut zs, &["lzo", "lzo-rle", "lz4", "zstd"]);
        let pool = *pick(&mut zs, &[1u32, 2, 5, 20]);
        let accept = *pick(&mut zs, &[50u32, 90, 100]);
        let table = format!(
            "\n[swap.zswap]\ncompressor = \"{comp}\"\ncompression_ratio = {ratio}\n\
             max_pool_percent = {pool}\naccept_threshold_percent = {accept}\n"
        );
        if let Some(at) = t.find("\n[swap]\n") {
            let next = t[at + 1..].find("\n[").map_or(t.len(), |n| at + 1 + n);
            t.insert_str(next, table.trim_end_matches('\n'));
            let _ = write!(
                sum,
                "; zswap ({comp}, ratio {ratio}, pool {pool}%, accept {accept}%"
            );
            // (The cgroups' zswap files are cgroup v2's: a v1 case draws them and goes
            // without.)
            let v1 = cgroups.as_ref().is_some_and(|c| c.v1);
            if zs.gen_bool(1.0 / 3.0) && !v1 {
                let kib = 16 << zs.gen_range(0..=6);
                t = t.replace(
                    "\n[[cgroups]]\n",
                    &format!("\n[[cgroups]]\nzswap_max = \"{kib}KiB\"\n"),
                );
                let _ = write!(sum, ", cgroups' zswap.max {kib}KiB");
                if era >= crate::scenario::ZSWAP_WRITEBACK_SINCE && zs.gen_bool(0.25) {
                    t = t.replace(
                        "\n[[cgroups]]\n",
                        "\n[[cgroups]]\nzswap_writeback = false\n",
                    );
                    sum.push_str(", no writeback");
                }
            }
            sum.push(')');
        }
    }
    // A trace replay task, drawn after everything else (a case without one is the case of
    // the same seed before replay existed): in a fifth of the cases.
    if rng.gen_bool(0.2) {
        let r = draw_replay(&mut rng, seed, total_cpus);
        let dev = "size = \"4GiB\"\n";
        for (key, v) in [
            ("read_ahead_kb", r.read_ahead_kb),
            ("max_sectors_kb", r.max_sectors_kb),
        ] {
            if let (Some(v), Some(at)) = (v, t.find(dev)) {
                t.insert_str(at + dev.len(), &format!("{key} = {v}\n"));
                let _ = write!(sum, "; {key} {v}");
            }
        }
        tasks.push_str(&r.toml);
        descr.push(r.descr);
    }
    // A proactive-reclaim agent (`memory-reclaim`), drawn after everything else (a case
    // without one is the case of the same seed before the program existed): in a quarter
    // of the cases with cgroups, writing RAM/2048 ..= RAM/8 to the memory.reclaim of one
    // of them or of the root, 1–5 times, 0–500 ms apart, after 0–1 s.
    if let Some(cg) = &cgroups {
        // One of the cgroups or the root.
        let pick_target = |rng: &mut Pcg64| {
            let k = rng.gen_range(0..=cg.names.len());
            if k == 0 {
                "/"
            } else {
                cg.names[k - 1].as_str()
            }
        };
        if rng.gen_bool(0.25) {
            let target = pick_target(&mut rng);
            let ram_pages = ram >> 12;
            let pages = rng.gen_range((ram_pages / 2048).max(1)..=ram_pages / 8);
            let count = rng.gen_range(1..=5u32);
            let interval = rng.gen_range(0..=500u32);
            let delay = rng.gen_range(0..=1000u32);
            let cpu = rng.gen_range(0..total_cpus);
            let _ = write!(
                tasks,
                "\n[[tasks]]\nname = \"agent\"\ncpu = {cpu}\nprogram = \"memory-reclaim\"\ntarget = \"{target}\"\namount = \"{}KiB\"\ncount = {count}\ninterval = \"{interval}ms\"\ndelay = \"{delay}ms\"\n",
                pages * 4
            );
            // In a third of them `swappiness=` (0, 60 or 200; EINVAL before 6.11); half the
            // 200s are `max` (6.16; EINVAL before), drawn from a generator of their own so
            // that the rest of a seed's case is what it was before `max` existed.
            let mut what = format!("memory.reclaim {target} {}KiB x{count}", pages * 4);
            if rng.gen_bool(1.0 / 3.0) {
                let s = *pick(&mut rng, &[0u32, 60, 200]);
                let mut side = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x5357_4d41_5800);
                if s == 200 && side.gen_bool(0.5) {
                    let _ = writeln!(tasks, "swappiness = \"max\"");
                    what.push_str(" swappiness=max");
                } else {
                    let _ = writeln!(tasks, "swappiness = {s}");
                    let _ = write!(what, " swappiness={s}");
                }
            }
            descr.push((format!("agent@cpu{cpu}"), what));
        }
        // A pressure-driven controller (`senpai`), drawn after the agent: in a quarter of
        // the cases with cgroups, on one of them or the root, every 50–500 ms for 2–20
        // ticks, probing up to 1–20 % of memory.current, with a stall target of 1 µs to
        // 100 ms (ENOENT before the 6.1 era is its expected error).
        if rng.gen_bool(0.25) {
            let target = pick_target(&mut rng);
            let tick = rng.gen_range(50..=500u32);
            let count = rng.gen_range(2..=20u32);
            let interval = rng.gen_range(0..=6u32);
            let pressure_us = *pick(&mut rng, &[1u32, 100, 1_000, 10_000, 100_000]);
            let max_probe = f64::from(rng.gen_range(1..=20u32)) / 100.0;
            let limit_min_kib = (ram >> 10) / rng.gen_range(8..=64u64);
            let cpu = rng.gen_range(0..total_cpus);
            let _ = write!(
                tasks,
                "\n[[tasks]]\nname = \"senpai\"\ncpu = {cpu}\nprogram = \"senpai\"\ntarget = \"{target}\"\ntick = \"{tick}ms\"\ncount = {count}\ninterval = {interval}\npressure = \"{pressure_us}us\"\nmax_probe = {max_probe}\nlimit_min = \"{limit_min_kib}KiB\"\n"
            );
            // In a third of them the memory.high mode, after 0–1 s.
            let mut what = format!(
                "{target} every {tick}ms x{count} interval {interval} pressure {pressure_us}us max_probe {max_probe}"
            );
            if rng.gen_bool(1.0 / 3.0) {
                let delay = rng.gen_range(0..=1000u32);
                let _ = writeln!(tasks, "mode = \"high\"\ndelay = \"{delay}ms\"");
                let _ = write!(what, " memory.high after {delay}ms");
            }
            descr.push((format!("senpai@cpu{cpu}"), what));
        }
        // A limit changed mid-run (`cgroup-write`), in a fifth of the cases with cgroups:
        // drawn from a generator of its own, so that the rest of a seed's case is what it
        // was before the program existed.
        let mut side = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4347_5752_4954);
        if side.gen_bool(0.2) {
            let target = &cg.names[side.gen_range(0..cg.names.len())];
            let file = *pick(
                &mut side,
                &[
                    "memory.max",
                    "memory.high",
                    "memory.swap.max",
                    "memory.swap.high",
                ],
            );
            let value = if side.gen_bool(0.2) {
                "\"max\"".to_string()
            } else {
                format!(
                    "\"{}KiB\"",
                    side.gen_range((ram >> 18).max(1)..=(ram >> 14).max(1)) * 4
                )
            };
            let delay = side.gen_range(0..=1000u32);
            let cpu = side.gen_range(0..total_cpus);
            CgroupWrite("admin", cpu, target, file, &value, delay).push(&mut tasks, &mut descr);
        }
        // memory.oom.group set or cleared mid-run, as a kubelet or systemd does, in a
        // tenth of the cases with cgroups: drawn after the rest of `side`.
        if side.gen_bool(0.1) {
            let target = &cg.names[side.gen_range(0..cg.names.len())];
            let value = side.gen_range(0..=1u32);
            let delay = side.gen_range(0..=1000u32);
            let cpu = side.gen_range(0..total_cpus);
            let (file, value) = ("memory.oom.group", value.to_string());
            CgroupWrite("oomgroup", cpu, target, file, &value, delay).push(&mut tasks, &mut descr);
        }
    }
    // fork and copy-on-write (`fork-snapshot`), from a generator of its own (every other
    // draw stays what the seed gave before the program existed): in a sixth of the cases,
    // a heap of RAM/64 ..= RAM/4, 1–2 snapshots, the parent writing every 20 µs, 200 µs or
    // not at all, half of them saving to a file; in a cgroup or the root.
    let mut fork_rng = Pcg64::seed_from_u64(seed ^ 0x464f_524b_534e);
    if fork_rng.gen_bool(1.0 / 6.0) {
        let size = fork_rng.gen_range((ram >> 18).max(1)..=(ram >> 14).max(1)) * 4;
        let snapshots = fork_rng.gen_range(1..=2u32);
        let write_interval = *pick(&mut fork_rng, &["0s", "20us", "200us"]);
        let chunk = *pick(&mut fork_rng, &["64KiB", "1MiB"]);
        let cpu = fork_rng.gen_range(0..total_cpus);
        let _ = write!(
            tasks,
            "\n[[tasks]]\nname = \"snap\"\ncpu = {cpu}\nprogram = \"fork-snapshot\"\nsize = \"{size}KiB\"\nsnapshots = {snapshots}\nchunk = \"{chunk}\"\nwrite_interval = \"{write_interval}\"\n"
        );
        let mut what =
            format!("fork-snapshot {size}KiB x{snapshots} writes every {write_interval}");
        if fork_rng.gen_bool(0.5) {
            let dir = *pick(&mut fork_rng, &["/mnt", "/tmp"]);
            let _ = writeln!(tasks, "path = \"{dir}/snap.rdb\"");
            let _ = write!(what, " to {dir}");
        }
        if let Some(cg) = &cgroups {
            let k = fork_rng.gen_range(0..=cg.names.len());
            if k > 0 {
                let name = &cg.names[k - 1];
                let _ = writeln!(tasks, "cgroup = \"{name}\"");
                let _ = write!(what, " in {name}");
            }
        }
        descr.push((format!("snap@cpu{cpu}"), what));
    }
    // The /proc/sys/vm tunables, from a generator of their own (every other draw stays
    // what the seed gave before `[vm]` existed): in a fifth of the cases, a swappiness of
    // 0, 1, 10, 60, 100 (and 150 or 200 from the 6.1 era), dirty ratios of 1–60 % (the
    // background one sometimes at or above the dirty one), a vfs_cache_pressure of 0, 50,
    // 100, 200 or 1000.
    let mut vm_rng = Pcg64::seed_from_u64(seed ^ 0x7379_7363_746c);
    // The table's lines (one `[vm]` for both generators).
    let mut vm_lines = String::new();
    let mut vm_ratios = false;
    if vm_rng.gen_bool(0.2) {
        vm_ratios = true;
        let mut sw: Vec<u64> = vec![0, 1, 10, 60, 100];
        if era >= crate::scenario::SWAPPINESS_200_SINCE {
            sw.extend([150, 200]);
        }
        let swappiness = *pick(&mut vm_rng, &sw);
        let dirty = vm_rng.gen_range(1..=60u64);
        let background = vm_rng.gen_range(1..=60u64);
        let pressure = *pick(&mut vm_rng, &[0u64, 50, 100, 200, 1000]);
        let _ = writeln!(
            vm_lines,
            "swappiness = {swappiness}\ndirty_ratio = {dirty}\ndirty_background_ratio = {background}\nvfs_cache_pressure = {pressure}"
        );
        let _ = write!(
            sum,
            "; vm swappiness {swappiness} dirty {dirty}/{background} % vfs_cache_pressure {pressure}"
        );
    }
    // The watermark and writeback sysctls, from a generator of their own: in a fifth of
    // the cases a watermark_scale_factor of 1–1000 (3000 from 5.17) where the era's rule
    // is on, in half of those a min_free_kbytes of RAM/1000, /100 or /20, and the dirty
    // thresholds in bytes (where the ratios were not drawn) and the flusher's period and
    // expiry, 0 (off, or at once) among them.
    let mut wm_rng = Pcg64::seed_from_u64(seed ^ 0x766d_5f77_6d61_726b);
    if wm_rng.gen_bool(0.2) {
        let mut drawn = Vec::new();
        let wsf_rule = on
            .iter()
            .find(|o| &o[1..] == "watermark-scale-factor")
            .map(|o| o.starts_with('+'))
            .unwrap_or(era >= crate::scenario::WATERMARK_SCALE_FACTOR_SINCE);
        if wsf_rule {
            let mut choices = vec![1u64, 10, 100, 300, 1000];
            if era >= crate::scenario::WATERMARK_SCALE_FACTOR_3000_SINCE {
                choices.push(3000);
            }
            drawn.push(format!(
                "watermark_scale_factor = {}",
                pick(&mut wm_rng, &choices)
            ));
        }
        if wm_rng.gen_bool(0.5) {
            let div = *pick(&mut wm_rng, &[1000u64, 100, 20]);
            drawn.push(format!("min_free_kbytes = {}", (ram >> 10) / div));
        }
        if !vm_ratios && wm_rng.gen_bool(0.3) {
            let b = *pick(&mut wm_rng, &[8192u64, 1 << 20, ram / 10]);
            drawn.push(format!("dirty_bytes = {b}"));
        }
        if !vm_ratios && wm_rng.gen_bool(0.3) {
            let b = *pick(&mut wm_rng, &[1u64, 256 << 10, ram / 20]);
            drawn.push(format!("dirty_background_bytes = {b}"));
        }
        if wm_rng.gen_bool(0.3) {
            let e = *pick(&mut wm_rng, &[0u64, 100, 3000]);
            drawn.push(format!("dirty_expire_centisecs = {e}"));
        }
        if wm_rng.gen_bool(0.3) {
            let w = *pick(&mut wm_rng, &[0u64, 100, 500]);
            drawn.push(format!("dirty_writeback_centisecs = {w}"));
        }
        for d in &drawn {
            let _ = writeln!(vm_lines, "{d}");
        }
        if !drawn.is_empty() {
            let _ = write!(sum, "; vm {}", drawn.join(", ").replace(" = ", " "));
        }
    }
    if !vm_lines.is_empty() {
        let _ = write!(t, "\n[vm]\n{vm_lines}");
    }
    t.push_str(&files);
    t.push_str(&tasks);
    let descr: Vec<String> = descr.iter().map(|(who, d)| format!("{who}: {d}")).collect();
    let _ = write!(sum, "; {}", descr.join("; "));
    SwarmCase {
        seed,
        toml: t,
        summary: sum,
    }
}

/// A case's replay task.
struct CaseReplay {
    /// The `[[tasks]]` table.
    toml: String,
    /// (who, what) for the summary.
    descr: (String, String),
    /// The device's `read_ahead_kb`, when drawn.
    read_ahead_kb: Option<u64>,
    /// The device's `max_sectors_kb`, when drawn (after everything else).
    max_sectors_kb: Option<u64>,
}

/// Where the trace of `seed`'s case lives: one file per seed and content, written
/// atomically (a rename), so concurrent generations of the same seed agree and a case
/// prints as a scenario `mmsim run` can replay.
fn trace_file(seed: u64, ext: &str, bytes: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join("mmsim-swarm-traces");
    let p = dir.join(format!(
        "seed-{seed}-{:016x}.{ext}",
        crate::trace::fnv1a(bytes)
    ));
    if !p.exists() {
        let tmp = dir.join(format!(
            "seed-{seed}.{}.{:?}.tmp",
            std::process::id(),
            std::thread::current().id()
        ));
        let ok = std::fs::create_dir_all(&dir).is_ok()
            && std::fs::write(&tmp, bytes).is_ok()
            && std::fs::rename(&tmp, &p).is_ok();
        if !ok {
            // The scenario's loader then names the missing trace: a failure, not a hang.
            let _ = std::fs::remove_file(&tmp);
        }
    }
    p
}

/// The trace formats the case's generator draws a replay's trace in (the seven it drew
/// before the others were added; the pick among them stays, so every later draw of a seed
/// is what it was).
const REPLAY_FORMATS: [&str; 7] = [
    "txt",
    "oracleGeneral",
    "lcs",
    "msr",
    "vscsi",
    "alibaba",
    "tencent",
];

/// The trace formats a generator of their own draws: in 5/12 of the replay cases one of
/// these replaces the drawn format, so that each of the twelve is about as likely.
const REPLAY_FORMATS_OWN: [&str; 5] = ["csv", "blkparse", "spc", "fiu", "arc"];

/// Every trace format a swarm case may replay (`Format::spec`'s canonical names): the
/// main generator's seven, then the five of the generator of their own.
pub const REPLAY_FORMAT_NAMES: [&str; 12] = {
    let mut all = [""; 12];
    let mut i = 0;
    while i < 12 {
        all[i] = if i < 7 {
            REPLAY_FORMATS[i]
        } else {
            REPLAY_FORMATS_OWN[i - 7]
        };
        i += 1;
    }
    all
};

/// Draws a replay task (program `replay`) and writes its trace: 50–500 requests of one of
/// twelve formats — libCacheSim txt, oracleGeneral, lcs or csv (objects of 0–4 pages over
/// a set of up to 4,096 ids; lcs version 2 and csv with 30 % `set` and 5 % `delete`
/// operations; csv with its columns, delimiter, header and ids drawn and given in the
/// format's options), MSR Cambridge, Alibaba or Tencent CSV, vscsi, blkparse text, SPC
/// (UMass), FIU or ARC (block reads and writes, 30 % writes — ARC's traces are all reads —,
/// of 512 B–64 KiB, in sequential runs or at random, over a disk of 1–64 MiB, or two in a
/// quarter of the blkparse, SPC and FIU traces) — read through `pread`/`pwrite` or through
/// mappings (a quarter), one file or one range per object, paced by the timestamps (a
/// fifth), sometimes cut by `limit`, and in 30 % of the cases a device `read_ahead_kb` of 0
/// (off), 16, 128 or 512.
///
/// The case's generator `rng` draws one of the first seven formats and its trace, as it did
/// before the other five existed; a generator of its own (from `seed`) then replaces the
/// format in 5/12 of the cases with csv, blkparse, spc, fiu or arc and draws that trace
/// itself, so `rng` draws the same values for every seed either way.
fn draw_replay(rng: &mut Pcg64, seed: u64, total_cpus: u32) -> CaseReplay {
    let cpu = rng.gen_range(0..total_cpus);
    let n: u64 = rng.gen_range(50..=500);
    let drawn = *pick(rng, &REPLAY_FORMATS);
    let trace = draw_trace(rng, drawn, n);
    let mut own = Pcg64::seed_from_u64(seed ^ 0x5245_504c_4159_464d);
    let trace = if own.gen_bool(5.0 / 12.0) {
        let format = *pick(&mut own, &REPLAY_FORMATS_OWN);
        draw_trace(&mut own, format, n)
    } else {
        trace
    };
    let mut toml = format!("\n[[tasks]]\nname = \"replay\"\ncpu = {cpu}\nprogram = \"replay\"\n");
    let mut what = format!("replay {} {n} requests", trace.name);
    if trace.range {
        toml.push_str("object_map = \"range\"\n");
    }
    what.push_str(&trace.notes);
    // A fifth of the traces zstd-compressed and a tenth gzip-compressed (the readers
    // decompress by content; the name keeps the format's extension before `.zst` / `.gz`),
    // from a generator of their own.
    let mut comp = Pcg64::seed_from_u64(seed ^ 0x434f_4d50_5245_5353);
    let (ext, bytes) = match comp.gen_range(0..10) {
        0 | 1 => {
            what.push_str(", zstd");
            (
                format!("{}.zst", trace.ext),
                zstd::stream::encode_all(&trace.bytes[..], 1).expect("in memory"),
            )
        }
        2 => {
            use std::io::Write;
            what.push_str(", gzip");
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(&trace.bytes).expect("in memory");
            (format!("{}.gz", trace.ext), e.finish().expect("in memory"))
        }
        _ => (trace.ext.to_string(), trace.bytes),
    };
    let path = trace_file(seed, &ext, &bytes);
    let _ = writeln!(toml, "trace = {:?}", path.display().to_string());
    if let Some(f) = &trace.format {
        let _ = writeln!(toml, "format = \"{f}\"");
    }
    if rng.gen_bool(0.25) {
        toml.push_str("mmap = true\n");
        what.push_str(", mmap");
    }
    if rng.gen_bool(0.2) {
        toml.push_str("pace = true\n");
        what.push_str(", paced");
    }
    if rng.gen_bool(0.2) {
        let limit = rng.gen_range(1..=n);
        let _ = writeln!(toml, "limit = {limit}");
        let _ = write!(what, ", limit {limit}");
    }
    let read_ahead_kb = rng.gen_bool(0.3).then(|| *pick(rng, &[0u64, 16, 128, 512]));
    let max_sectors_kb = rng
        .gen_bool(0.3)
        .then(|| *pick(rng, &[4u64, 64, 128, 512, 1280]));
    CaseReplay {
        toml,
        descr: (format!("replay@cpu{cpu}"), what),
        read_ahead_kb,
        max_sectors_kb,
    }
}

/// A drawn replay trace.
struct CaseTrace {
    /// The format's name (`REPLAY_FORMAT_NAMES`).
    name: &'static str,
    /// The task's `format` (with options), None where the file's name tells it.
    format: Option<String>,
    /// The trace file's extension.
    ext: &'static str,
    /// The file's bytes.
    bytes: Vec<u8>,
    /// `object_map = "range"`.
    range: bool,
    /// What the summary adds after the request count (", ranges", ", sequential", …).
    notes: String,
}

/// A request of an object trace: the object and its operation (lcs's codes: 1 get, 3 set,
/// 9 delete).
type ObjectRequest = (u64, u8);

/// A request of a block trace: offset and length (bytes), a write.
type BlockRequest = (u64, u64, bool);

/// The size of object `id` in the swarm's traces, from the id so that an object keeps its
/// size: 0 (the replay's object_size) to 4 pages.
fn object_bytes(id: u64) -> u64 {
    (crate::trace::fnv1a(&id.to_le_bytes()) % 5) * 4096
}

/// Draws `n` requests of a trace in `format` (one of `REPLAY_FORMAT_NAMES`) from `rng` and
/// encodes them. The first seven formats draw exactly what the swarm drew for them before
/// the others existed (the requests, then the object map of an object trace); the others
/// draw their requests the same way, then what their encoding varies.
fn draw_trace(rng: &mut Pcg64, format: &'static str, n: u64) -> CaseTrace {
    let mut t = CaseTrace {
        name: format,
        format: Some(format.to_string()),
        ext: match format {
            "txt" => "txt",
            "oracleGeneral" => "oracleGeneral.bin",
            "lcs" => "lcs",
            "alibaba" => "alibaba.csv",
            "tencent" => "tencent.csv",
            "msr" => "msr.csv",
            "vscsi" => "vscsi",
            "csv" => "csv",
            "blkparse" => "blkparse",
            "spc" => "spc",
            "fiu" => "fiu",
            _ => "lis",
        },
        bytes: Vec::new(),
        range: false,
        notes: String::new(),
    };
    if matches!(format, "txt" | "oracleGeneral" | "lcs" | "csv") {
        let objects: u64 = rng.gen_range(8..=4096);
        let ops = matches!(format, "lcs" | "csv");
        let reqs: Vec<ObjectRequest> = (0..n)
            .map(|_| {
                let id = rng.gen_range(0..objects);
                // get (1), 30 % set (3), 5 % delete (9).
                let op = match ops.then(|| rng.gen_range(0..20)) {
                    Some(0) => 9,
                    Some(1..=6) => 3,
                    _ => 1,
                };
                (id, op)
            })
            .collect();
        if rng.gen_bool(0.3) {
            t.range = true;
            t.notes.push_str(", ranges");
        }
        t.bytes = match format {
            "txt" => reqs
                .iter()
                .flat_map(|(id, _)| format!("{id}\n").into_bytes())
                .collect(),
            "lcs" => {
                let mut b = crate::trace::lcs::encode_header(2, n as i64, objects as i64);
                for (i, &(id, op)) in reqs.iter().enumerate() {
                    let size = object_bytes(id) as i64;
                    b.extend(crate::trace::lcs::encode(2, i as u32 / 100, id, size, op));
                }
                b
            }
            "oracleGeneral" => reqs
                .iter()
                .enumerate()
                .flat_map(|(i, &(id, _))| {
                    crate::trace::oracle::encode(i as u32 / 100, id, object_bytes(id) as u32, -1)
                })
                .collect(),
            _ => {
                let (bytes, spec) = encode_csv(rng, &reqs);
                t.format = Some(spec);
                bytes
            }
        };
        return t;
    }
    let disk: u64 = rng.gen_range(1..=64) << 20;
    let sequential = rng.gen_bool(0.5);
    let mut off = 0u64;
    let reqs: Vec<BlockRequest> = (0..n)
        .map(|_| {
            let len: u64 = *pick(rng, &[512, 4096, 8192, 16384, 65536, 3000]);
            off = if sequential && off + len <= disk {
                off
            } else {
                rng.gen_range(0..disk / 512) * 512
            };
            let write = rng.gen_bool(0.3);
            let r = (off, len, write);
            off += len;
            r
        })
        .collect();
    if sequential {
        t.notes.push_str(", sequential");
    }
    let (bytes, spec) = match format {
        "blkparse" => encode_blkparse(rng, &reqs),
        "spc" => encode_spc(rng, &reqs),
        "fiu" => encode_fiu(rng, &reqs),
        "arc" => encode_arc(rng, &reqs),
        _ => {
            return CaseTrace {
                bytes: encode_block(format, &reqs),
                ..t
            }
        }
    };
    t.bytes = bytes;
    // The files of these four are told by their names (`Format::guess`): in a third of the
    // cases with the default options, no `format` key.
    if spec == format && rng.gen_bool(1.0 / 3.0) {
        t.format = None;
        t.notes.push_str(", format guessed");
    } else {
        t.format = Some(spec);
    }
    t
}

/// `reqs` in MSR Cambridge's, Alibaba's or Tencent's CSV or as vscsi version 2 records
/// (`format`), as the swarm wrote them before the other block formats were drawn.
fn encode_block(format: &str, reqs: &[BlockRequest]) -> Vec<u8> {
    let mut b = Vec::new();
    for (i, &(off, len, write)) in reqs.iter().enumerate() {
        let i = i as u64;
        match format {
            "alibaba" => {
                let op = if write { "W" } else { "R" };
                let t = 1577808000000000 + i * 500;
                b.extend_from_slice(format!("0,{op},{off},{len},{t}\n").as_bytes());
            }
            "tencent" => {
                // Sectors: the offset's and the length's, rounded up.
                let (sector, sectors) = (off / 512, len.div_ceil(512));
                let io = u8::from(write);
                b.extend_from_slice(format!("{},{sector},{sectors},{io},7\n", i / 10).as_bytes());
            }
            "msr" => {
                let op = if write { "Write" } else { "Read" };
                b.extend_from_slice(
                    format!(
                        "{},hm,0,{op},{off},{len},10\n",
                        128166372000000000 + i * 5000
                    )
                    .as_bytes(),
                );
            }
            _ => {
                let cmd = if write { 0x2a } else { 0x28 };
                b.extend_from_slice(&crate::trace::vscsi::encode_v2(
                    cmd,
                    off / 512,
                    len as u32,
                    i * 500,
                ));
            }
        }
    }
    b
}

/// Lines ended by `\n`, or in `crlf` by `\r\n` (a trace written on Windows).
fn end_lines(text: String, crlf: bool) -> Vec<u8> {
    if crlf {
        text.replace('\n', "\r\n").into_bytes()
    } else {
        text.into_bytes()
    }
}

/// A libCacheSim csv of `reqs`, its layout drawn from `rng`: the object id's column and
/// any of a time (seconds, decimals or not), a size (with, in a quarter, a key size apart,
/// as Twitter's traces give it), an operation (spelled as memcached's commands) and up to
/// two ignored columns, in a random order; a delimiter of `,` (the default, or named
/// `comma` or `,`), tab, space, `;`, `|` or `:`; a header in 30 %; string ids in 30 %; ids
/// quoted in a fifth; CRLF in a tenth. The bytes, and the `csv:…` format naming the
/// columns.
fn encode_csv(rng: &mut Pcg64, reqs: &[ObjectRequest]) -> (Vec<u8>, String) {
    #[derive(Clone, Copy, PartialEq)]
    enum Col {
        Id,
        Time,
        Size,
        KeySize,
        Op,
        Other,
    }
    let mut cols = vec![Col::Id];
    if rng.gen_bool(0.5) {
        cols.push(Col::Time);
    }
    if rng.gen_bool(0.7) {
        cols.push(Col::Size);
        if rng.gen_bool(0.25) {
            cols.push(Col::KeySize);
        }
    }
    if rng.gen_bool(0.7) {
        cols.push(Col::Op);
    }
    for _ in 0..rng.gen_range(0..=2) {
        cols.push(Col::Other);
    }
    {
        use rand::seq::SliceRandom;
        cols.shuffle(rng);
    }
    let (delim, delim_opt) = *pick(
        rng,
        &[
            (',', None),
            (',', Some("comma")),
            (',', Some(",")),
            ('\t', Some("tab")),
            (' ', Some("space")),
            (';', Some(";")),
            ('|', Some("|")),
            (':', Some(":")),
        ],
    );
    let header = rng.gen_bool(0.3);
    let numeric = rng.gen_bool(0.7);
    let quoted = rng.gen_bool(0.2);
    let decimal_time = rng.gen_bool(0.5);
    let crlf = rng.gen_bool(0.1);
    let col = |c: Col| cols.iter().position(|&x| x == c).map_or(0, |p| p + 1);
    let mut spec = format!("csv:obj-id-col={}", col(Col::Id));
    for (key, c) in [
        ("time-col", Col::Time),
        ("obj-size-col", Col::Size),
        ("key-size-col", Col::KeySize),
        ("op-col", Col::Op),
    ] {
        if col(c) > 0 {
            let _ = write!(spec, ",{key}={}", col(c));
        }
    }
    if let Some(d) = delim_opt {
        let _ = write!(spec, ",delimiter={d}");
    }
    if header {
        spec.push_str(",has-header=true");
    }
    if !numeric {
        spec.push_str(",obj-id-is-num=false");
    }
    let mut text = String::new();
    let mut fields: Vec<String> = Vec::with_capacity(cols.len());
    if header {
        for (k, c) in cols.iter().enumerate() {
            fields.push(match c {
                Col::Id => "key".to_string(),
                Col::Time => "timestamp".to_string(),
                Col::Size => "value_size".to_string(),
                Col::KeySize => "key_size".to_string(),
                Col::Op => "op".to_string(),
                Col::Other => format!("extra{k}"),
            });
        }
        let _ = writeln!(text, "{}", fields.join(&delim.to_string()));
    }
    for (i, &(id, op)) in reqs.iter().enumerate() {
        let key = if numeric {
            id.to_string()
        } else {
            format!("obj-{id:x}")
        };
        fields.clear();
        for c in &cols {
            fields.push(match c {
                Col::Id if quoted => format!("\"{key}\""),
                Col::Id => key.clone(),
                Col::Time if decimal_time => format!("{}.{:02}", i / 100, i % 100),
                Col::Time => (i / 100).to_string(),
                Col::Size => object_bytes(id).to_string(),
                Col::KeySize => key.len().to_string(),
                Col::Op => {
                    let spellings: &[&str] = match op {
                        1 => &["get", "gets", "read", "r", "GET"],
                        3 => &[
                            "set", "add", "replace", "cas", "append", "prepend", "incr", "decr",
                            "update", "put", "write", "w", "SET",
                        ],
                        _ => &["delete", "del"],
                    };
                    pick(rng, spellings).to_string()
                }
                Col::Other => rng.gen_range(0..100_000u32).to_string(),
            });
        }
        let _ = writeln!(text, "{}", fields.join(&delim.to_string()));
    }
    (end_lines(text, crlf), spec)
}

/// blkparse's default text output of `reqs`: each request's queue (Q), issue (D) and
/// completion (C) events, sometimes its get-request (G) and insert (I) events, on device
/// 8,0 (and 8,16 in a quarter of the traces), with flushes and plugs (no sector range),
/// preflushes (`FWS 0 + 0`: no data) and discards (neither read nor write) among them and the per-CPU summary at the end. The
/// requests are the events of the action drawn (`Q` in half of the cases, `D` or `C`
/// otherwise): the bytes and the format (`blkparse` or `blkparse:action=…`).
fn encode_blkparse(rng: &mut Pcg64, reqs: &[BlockRequest]) -> (Vec<u8>, String) {
    let action = *pick(rng, &['Q', 'Q', 'Q', 'Q', 'D', 'C']);
    let spec = if action == 'Q' && rng.gen_bool(0.5) {
        "blkparse".to_string()
    } else {
        format!("blkparse:action={action}")
    };
    let two = rng.gen_bool(0.25);
    let mut text = String::new();
    let mut seq = 0u64;
    let (mut reads, mut writes) = (0u64, 0u64);
    for (i, &(off, len, write)) in reqs.iter().enumerate() {
        let dev = if two && rng.gen_bool(0.5) {
            "8,16"
        } else {
            "8,0"
        };
        let cpu = rng.gen_range(0..4u32);
        let pid = rng.gen_range(1..32768u32);
        let rwbs = if write {
            *pick(rng, &["W", "WS", "WM", "WFS"])
        } else {
            *pick(rng, &["R", "RA", "RS", "RM"])
        };
        let process = *pick(
            rng,
            &["kjournald", "kworker/u8:2", "dd", "postgres", "jbd2/sda1-8"],
        );
        let (sector, sectors) = (off / 512, len.div_ceil(512));
        let t = i as u64 * 500_000;
        for (act, dt) in [
            ('Q', 0),
            ('G', 1_000),
            ('I', 2_000),
            ('D', 3_000),
            ('C', 250_000),
        ] {
            if matches!(act, 'G' | 'I') && act != action && rng.gen_bool(0.5) {
                continue;
            }
            seq += 1;
            let who = if act == 'C' { "0" } else { process };
            let at = t + dt;
            let _ = writeln!(
                text,
                "{dev:>5} {cpu:>4} {seq:>8} {:>5}.{:09} {pid:>5}  {act} {rwbs:>3} {sector} + {sectors} [{who}]",
                at / 1_000_000_000,
                at % 1_000_000_000
            );
        }
        if write {
            writes += 1;
        } else {
            reads += 1;
        }
        // Events without data: a flush or a plug, an unplug, a discard, a preflush.
        if rng.gen_bool(0.05) {
            seq += 1;
            let (at, s) = (t + 100_000, (t + 100_000) / 1_000_000_000);
            let ns = at % 1_000_000_000;
            let line = match rng.gen_range(0..5) {
                0 => format!("{action}  FN [{process}]"),
                1 => format!("P   N [{process}]"),
                2 => format!("U   N [{process}] 1"),
                3 => format!("{action} FWS 0 + 0 [{process}]"),
                _ => format!("{action}   D {sector} + 8 [fstrim]"),
            };
            let _ = writeln!(
                text,
                "{dev:>5} {cpu:>4} {seq:>8} {s:>5}.{ns:09} {pid:>5}  {line}"
            );
        }
    }
    let _ = write!(
        text,
        "CPU0 (8,0):\n Reads Queued:      {reads:>7},  {:>9}KiB\t Writes Queued:      {writes:>7},  {:>9}KiB\n\
         \nTotal (8,0):\n Reads Queued:      {reads:>7},  {:>9}KiB\t Writes Queued:      {writes:>7},  {:>9}KiB\n\
         \nThroughput (R/W): 0KiB/s / 0KiB/s\nEvents (8,0): {seq} entries\nSkips: 0 forward (0 -   0.0%)\n",
        reads * 4,
        writes * 4,
        reads * 4,
        writes * 4,
    );
    (text.into_bytes(), spec)
}

/// The SPC format (UMass) of `reqs`: `ASU,LBA,Size,Opcode,Timestamp`, LBAs in blocks of 512
/// bytes (4,096 in a third of the traces, named by the format's `block-size`; an offset is
/// rounded down to its block), ASU 0 (and 1 in a quarter of the traces), opcodes in either
/// case, seconds with decimals; in 30 % a further field, in a fifth spaces around the
/// fields, in a tenth CRLF. The bytes and the format (`spc`, or its alias `umass`, with
/// the block size when not 512 and sometimes when it is).
fn encode_spc(rng: &mut Pcg64, reqs: &[BlockRequest]) -> (Vec<u8>, String) {
    let block = *pick(rng, &[512u64, 512, 4096]);
    let name = *pick(rng, &["spc", "spc", "umass"]);
    let spec = if block != 512 || rng.gen_bool(0.2) {
        format!("{name}:block-size={block}")
    } else {
        name.to_string()
    };
    let two = rng.gen_bool(0.25);
    let extra = rng.gen_bool(0.3);
    let sep = if rng.gen_bool(0.2) { " , " } else { "," };
    let crlf = rng.gen_bool(0.1);
    let mut text = String::new();
    for (i, &(off, len, write)) in reqs.iter().enumerate() {
        let asu = u32::from(two && rng.gen_bool(0.5));
        let op = if write {
            *pick(rng, &["w", "W"])
        } else {
            *pick(rng, &["r", "R"])
        };
        let us = i as u64 * 250;
        let fields = [
            asu.to_string(),
            (off / block).to_string(),
            len.to_string(),
            op.to_string(),
            format!("{}.{:06}", us / 1_000_000, us % 1_000_000),
        ];
        text.push_str(&fields.join(sep));
        if extra {
            let _ = write!(text, "{sep}{}", rng.gen_range(0..1000u32));
        }
        text.push('\n');
    }
    (end_lines(text, crlf), spec)
}

/// FIU's format of `reqs`: `ts pid process lba size op major minor md5`, ns, 512-byte
/// sectors (a length rounded up), `W`/`R` or `Write`/`Read`, device 6,0 (and 8,1 in a
/// quarter of the traces), process names some of which hold a space. The bytes and the
/// format (`fiu`).
fn encode_fiu(rng: &mut Pcg64, reqs: &[BlockRequest]) -> (Vec<u8>, String) {
    let two = rng.gen_bool(0.25);
    let mut text = String::new();
    for (i, &(off, len, write)) in reqs.iter().enumerate() {
        let (major, minor) = if two && rng.gen_bool(0.5) {
            (8, 1)
        } else {
            (6, 0)
        };
        let ts = 89_155_760_310_131 + i as u64 * 250_000;
        let pid = rng.gen_range(1..32768u32);
        let process = *pick(
            rng,
            &["syslogd", "kjournald", "Web Content", "httpd", "java"],
        );
        let op = if write {
            *pick(rng, &["W", "W", "Write"])
        } else {
            *pick(rng, &["R", "R", "Read"])
        };
        let md5 = crate::trace::fnv1a(&(off ^ ((i as u64) << 40)).to_le_bytes());
        let _ = writeln!(
            text,
            "{ts} {pid} {process} {} {} {op} {major} {minor} {md5:016x}{:016x}",
            off / 512,
            len.div_ceil(512),
            md5.rotate_left(17)
        );
    }
    (text.into_bytes(), "fiu".to_string())
}

/// The ARC paper's format of `reqs`: `start blocks 0 request-number`, in blocks of 512
/// bytes (4,096 in a third of the traces, by the format's `block-size`; the start rounded
/// down, the length up), separated by spaces or tabs. Every request is a read (the format
/// has no writes). The bytes and the format (`arc`, or its alias `lis`).
fn encode_arc(rng: &mut Pcg64, reqs: &[BlockRequest]) -> (Vec<u8>, String) {
    let block = *pick(rng, &[512u64, 512, 4096]);
    let name = *pick(rng, &["arc", "arc", "lis"]);
    let spec = if block != 512 || rng.gen_bool(0.2) {
        format!("{name}:block-size={block}")
    } else {
        name.to_string()
    };
    let sep = *pick(rng, &[" ", " ", "\t"]);
    let mut text = String::new();
    for (i, &(off, len, _)) in reqs.iter().enumerate() {
        let _ = writeln!(
            text,
            "{}{sep}{}{sep}0{sep}{i}",
            off / block,
            len.div_ceil(block)
        );
    }
    (text.into_bytes(), spec)
}

/// The memory cgroups of a case.
struct CaseCgroups {
    /// The `[[cgroups]]` tables.
    toml: String,
    /// One description per cgroup (`a (max 12 MiB, low 2 MiB)`).
    summary: Vec<String>,
    /// Per task: its cgroup, None for the root.
    task_cgroup: Vec<Option<String>>,
    /// Per task in the root: whether it says so (`cgroup = "/"`) rather than by default.
    explicit_root: Vec<bool>,
    /// The cgroups' names.
    names: Vec<String>,
    /// Per task: its oom_score_adj, if it sets one.
    oom_score_adj: Vec<Option<i16>>,
    /// The memory controller is on cgroup v1's legacy hierarchy (`cgroup_version = 1`).
    v1: bool,
}

/// Draws a case's memory cgroups (None in half of the cases): 1–3 cgroups, the second a
/// child of the first (`a/b`) in 40 % of the cases with two or more, each with
/// - memory.max in 80 %: RAM/16 ..= RAM (the upper end itself drawn among RAM, RAM/2,
///   RAM/4 and RAM/8, so tight limits are common), else "max" (written or left to the
///   default);
/// - memory.high in 1/3: RAM/16 ..= the max (or RAM);
/// - memory.low in 1/3: up to half the max (or RAM);
/// - memory.min in 1/4: up to a quarter of the max (or RAM), at most RAM/8;
/// - swap_max in 1/3 of the cases with swap: 0 ..= the swap size;
/// - swap_high in 1/4 of the cases with swap on eras that have it (6.1 and later): 0 ..=
///   the swap size, drawn from a generator of its own (seeded from a copy of the case's),
///   so that the rest of a seed's case is what it was before swap_high existed;
/// - memory.oom.group in 1/4 on eras that have it (6.1 and later), and for each task an
///   oom_score_adj in 1/4 (-1000, -500, -1, 1, 500 or 1000), both from a third generator
///   of their own (the rest of the case is as before they existed);
///
/// In 1/4 of the cases (a generator of its own) the memory controller is on cgroup v1's
/// legacy hierarchy: only memory.max is written (the other limits are drawn, and left
/// out), and in a third of the cgroups with a memory.max, from a generator of its own,
/// memory.memsw.limit_in_bytes: the max and up to half the swap (a sixteenth of RAM
/// without swap) more;
///
/// and each of the `nr_tasks` tasks in one of them or in the root, uniformly. Sizes are
/// whole pages, written in KiB. Every limit is at most RAM and memory.min at most
/// memory.max, as the scenario's validation requires.
fn draw_cgroups(
    rng: &mut Pcg64,
    ram: u64,
    swap_mib: Option<u64>,
    nr_tasks: u32,
    era: KernelEra,
) -> Option<CaseCgroups> {
    if !rng.gen_bool(0.5) {
        return None;
    }
    let mut side = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x5357_4150_4849_4748);
    // memory.oom.group and oom_score_adj come from a generator of their own too.
    let mut oom_side = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4f4f_4d5f_4752_4f55);
    // The hierarchy too (the rest of the case is as before cgroup v1 was modelled).
    let v1 = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4347_5250_5631_4c47).gen_bool(0.25);
    // v1's memsw limits too (a case without them is the case of the same seed before).
    let mut memsw_side = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x4d45_4d53_575f_4d41);
    // v1 soft limits from their own generator too.
    let mut soft_side = Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x534f_4654_4c49_4d54);
    // v1's memory.swappiness from its own generator too.
    let mut swappiness_side =
        Pcg64::seed_from_u64(rng.clone().gen::<u64>() ^ 0x5357_4150_5049_4e53);
    let n = rng.gen_range(1..=3usize);
    let nested = n >= 2 && rng.gen_bool(0.4);
    let names: &[&str] = if nested {
        &["a", "a/b", "c"]
    } else {
        &["a", "b", "c"]
    };
    let ram_pages = ram >> 12;
    let mut toml = String::new();
    let mut summary = Vec::new();
    for name in &names[..n] {
        let _ = write!(toml, "\n[[cgroups]]\nname = \"{name}\"\n");
        let mut lim = Vec::new();
        // Biased towards tight limits: the upper end is RAM, RAM/2, RAM/4 or RAM/8.
        let max = rng.gen_bool(0.8).then(|| {
            let hi = ram_pages >> rng.gen_range(0..=3);
            rng.gen_range(ram_pages / 16..=hi)
        });
        match max {
            Some(p) => {
                let _ = writeln!(toml, "memory_max = \"{}KiB\"", p * 4);
                lim.push(format!("max {}KiB", p * 4));
                if v1 && memsw_side.gen_bool(1.0 / 3.0) {
                    // memory.memsw.limit_in_bytes: the max and up to half the swap (or a
                    // sixteenth of RAM) more.
                    let room = swap_mib.map_or(ram_pages / 16, |m| (m << 8) / 2);
                    let m = p + memsw_side.gen_range(0..=room);
                    let _ = writeln!(toml, "memsw_max = \"{}KiB\"", m * 4);
                    lim.push(format!("memsw {}KiB", m * 4));
                }
            }
            None if rng.gen_bool(0.5) => toml.push_str("memory_max = \"max\"\n"),
            None => {}
        }
        if v1 && soft_side.gen_bool(1.0 / 3.0) {
            // memory.soft_limit_in_bytes: anywhere up to RAM, tight ones likelier.
            let hi = ram_pages >> soft_side.gen_range(0..=3);
            let p = soft_side.gen_range(0..=hi);
            let _ = writeln!(toml, "soft_limit = \"{}KiB\"", p * 4);
            lim.push(format!("soft {}KiB", p * 4));
        }
        if v1 && swappiness_side.gen_bool(0.25) {
            // memory.swappiness: 0 (limit reclaim never swaps) to 200 (from 5.8).
            let choices: &[u64] = if era >= crate::scenario::SWAPPINESS_200_SINCE {
                &[0, 10, 60, 100, 200]
            } else {
                &[0, 10, 60, 100]
            };
            let s = *pick(&mut swappiness_side, choices);
            let _ = writeln!(toml, "swappiness = {s}");
            lim.push(format!("swappiness {s}"));
        }
        let cap = max.unwrap_or(ram_pages);
        if rng.gen_bool(1.0 / 3.0) {
            let p = rng.gen_range(ram_pages / 16..=cap);
            if !v1 {
                let _ = writeln!(toml, "memory_high = \"{}KiB\"", p * 4);
                lim.push(format!("high {}KiB", p * 4));
            }
        }
        if rng.gen_bool(1.0 / 3.0) {
            let p = rng.gen_range(0..=cap / 2);
            if !v1 {
                let _ = writeln!(toml, "memory_low = \"{}KiB\"", p * 4);
                lim.push(format!("low {}KiB", p * 4));
            }
        }
        if rng.gen_bool(0.25) {
            let p = rng.gen_range(0..=(cap / 4).min(ram_pages / 8));
            if !v1 {
                let _ = writeln!(toml, "memory_min = \"{}KiB\"", p * 4);
                lim.push(format!("min {}KiB", p * 4));
            }
        }
        if let Some(smib) = swap_mib {
            if rng.gen_bool(1.0 / 3.0) {
                let p = rng.gen_range(0..=smib << 8);
                if !v1 {
                    let _ = writeln!(toml, "swap_max = \"{}KiB\"", p * 4);
                    lim.push(format!("swap {}KiB", p * 4));
                }
            }
            if era >= crate::scenario::SWAP_HIGH_SINCE && side.gen_bool(0.25) {
                let p = side.gen_range(0..=smib << 8);
                if !v1 {
                    let _ = writeln!(toml, "swap_high = \"{}KiB\"", p * 4);
                    lim.push(format!("swap.high {}KiB", p * 4));
                }
            }
        }
        if era >= crate::scenario::OOM_GROUP_SINCE && oom_side.gen_bool(0.25) && !v1 {
            toml.push_str("oom_group = true\n");
            lim.push("oom.group".to_string());
        }
        summary.push(if lim.is_empty() {
            format!("{name} (no limits)")
        } else {
            format!("{name} ({})", lim.join(" "))
        });
    }
    let mut task_cgroup = Vec::new();
    let mut explicit_root = Vec::new();
    for _ in 0..nr_tasks {
        let k = rng.gen_range(0..=n);
        task_cgroup.push((k > 0).then(|| names[k - 1].to_string()));
        explicit_root.push(k == 0 && rng.gen_bool(0.5));
    }
    let oom_score_adj = (0..nr_tasks)
        .map(|_| {
            oom_side
                .gen_bool(0.25)
                .then(|| *pick(&mut oom_side, &[-1000i16, -500, -1, 1, 500, 1000]))
        })
        .collect();
    Some(CaseCgroups {
        toml,
        summary,
        task_cgroup,
        explicit_root,
        names: names[..n].iter().map(|s| s.to_string()).collect(),
        oom_score_adj,
        v1,
    })
}

/// The features a case runs with: its era (`kernel`, else the case's), the vanilla
/// preset, then its `[features]`.
pub fn case_features(sc: &Scenario, kernel: Option<KernelEra>) -> Result<Features, String> {
    resolve_features(sc.kernel, kernel, "vanilla", &sc.features, None).or_else(|e| {
        // A case drawn on another era may keep PCID or lazy TLB mode where the forced era
        // has no TLB generations (or turn them off where it keeps the other two): as the
        // generator does for the era it draws, the case keeps them.
        if kernel.is_none() {
            return Err(e);
        }
        let mut f = sc.features.clone();
        f.insert("tlb-gen".to_string(), true);
        resolve_features(sc.kernel, kernel, "vanilla", &f, None).map_err(|_| e)
    })
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_string()
    }
}

/// Generate and run the case of `seed`.
pub fn run_seed(seed: u64, opts: &SwarmOptions) -> SwarmResult {
    let case = generate(seed);
    let mut res = SwarmResult {
        seed,
        summary: case.summary.clone(),
        verdict: Verdict::Pass,
        end: None,
        steps: 0,
        checks: 0,
        io_errors: 0,
        replay: opts.replay_command(seed),
    };
    let mut sc = match parse_scenario(&case.toml, &format!("swarm:{seed}"), &[]) {
        Ok(sc) => sc,
        Err(e) => {
            res.verdict = Verdict::Fail(format!("generated scenario rejected: {e}"));
            return res;
        }
    };
    let features = match case_features(&sc, opts.kernel) {
        Ok(f) => f,
        Err(e) => {
            res.verdict = Verdict::Fail(format!("generated features rejected: {e}"));
            return res;
        }
    };
    if let Some(k) = opts.kernel {
        let _ = write!(res.summary, " (--kernel {k})");
        if k < crate::scenario::SWAP_HIGH_SINCE && sc.cgroups.iter().any(|c| c.swap_high.is_some())
        {
            // --kernel older than memory.swap.high: the case runs without it.
            sc.cgroups.iter_mut().for_each(|c| c.swap_high = None);
            res.summary.push_str(" (no swap.high: the era has none)");
        }
        if k < crate::scenario::OOM_GROUP_SINCE && sc.cgroups.iter().any(|c| c.oom_group) {
            // --kernel older than memory.oom.group: the case runs without it.
            sc.cgroups.iter_mut().for_each(|c| c.oom_group = false);
            res.summary.push_str(" (no oom.group: the era has none)");
        }
        if k < crate::scenario::ZSWAP_MAX_SINCE
            && sc.swap.as_ref().is_some_and(|s| s.zswap.is_some())
        {
            // --kernel older than the zswap mmsim models: the case swaps to the device alone.
            if let Some(s) = sc.swap.as_mut() {
                s.zswap = None;
            }
            sc.cgroups.iter_mut().for_each(|c| c.zswap_max = None);
            res.summary
                .push_str(" (no zswap: the era's is not modelled)");
        }
        if k < crate::scenario::ZSWAP_WRITEBACK_SINCE
            && sc.cgroups.iter().any(|c| !c.zswap_writeback)
        {
            // --kernel older than memory.zswap.writeback: the case writes back.
            sc.cgroups.iter_mut().for_each(|c| c.zswap_writeback = true);
            res.summary
                .push_str(" (zswap writeback: the era has no switch)");
        }
        if !features.vma_swap_readahead
            && sc.swap.as_ref().is_some_and(|s| s.vma_ra_enabled.is_some())
        {
            // --kernel without VMA-based swap readahead: no vma_ra_enabled to write.
            if let Some(s) = sc.swap.as_mut() {
                s.vma_ra_enabled = None;
            }
            res.summary
                .push_str(" (no vma_ra_enabled: the era has no VMA swap readahead)");
        }
        let d = crate::mm::page_alloc::WATERMARK_SCALE_FACTOR;
        if sc.vm.watermark_scale_factor != d
            && (sc.vm.era_error(k).is_some() || !features.watermark_scale_factor)
        {
            // --kernel before the drawn watermark_scale_factor (4.6), or its 3000 (5.17).
            let w = &mut sc.vm.watermark_scale_factor;
            *w = if features.watermark_scale_factor {
                (*w).min(1000)
            } else {
                d
            };
            res.summary
                .push_str(&format!(" (watermark_scale_factor {w}: the era's range)"));
        }
        if k < crate::scenario::SWAPPINESS_200_SINCE && sc.vm.swappiness > 100 {
            // --kernel older than 5.8's swappiness range: the case runs at 100.
            sc.vm.swappiness = 100;
            res.summary.push_str(" (swappiness 100: the era's maximum)");
        }
        if k < crate::scenario::SWAPPINESS_200_SINCE {
            for c in sc.cgroups.iter_mut().filter(|c| c.swappiness > Some(100)) {
                c.swappiness = Some(100);
                res.summary
                    .push_str(" (a cgroup's swappiness 100: the era's maximum)");
            }
        }
        if k < ZRAM_SINCE && sc.swap.as_ref().is_some_and(|s| s.zram.is_some()) {
            // --kernel older than zram: the case swaps to an SSD.
            if let Some(s) = sc.swap.as_mut() {
                s.zram = None;
                s.preset = crate::scenario::DevicePreset::Ssd;
            }
            res.summary
                .push_str(" (swap on an ssd: the era has no zram)");
        }
        if sc.policy.is_some_and(|p| k < p.ops().since) {
            // --kernel older than the drawn policy: the case runs the classic policy.
            sc.policy = None;
            sc.mglru = None;
            res.summary
                .push_str(" (classic policy: the era has no MGLRU)");
        }
    }
    if let Some(p) = opts.policy {
        let era = opts.kernel.or(sc.kernel).unwrap_or(KernelEra::V6_18);
        if era >= p.ops().since {
            sc.policy = Some(p);
            if p != crate::mm::policy::ReclaimPolicy::Mglru {
                sc.mglru = None;
            }
            let _ = write!(res.summary, " (--policy {p})");
        }
    }
    let mut checks = 0u64;
    // The machine lives outside the unwinding closure so that a panic mid-run still
    // reports the step it happened in (`sim.steps` counts the step being run).
    let mut machine: Option<Sim> = None;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        crate::workload::replay::clear_probes();
        let sim = machine.insert(Sim::new(&sc, features)?);
        let probes = crate::workload::replay::take_probes();
        sim.seed_faults(sc.seed);
        sim.debug_skip_lru_del_on_free = opts.debug_skip_lru_del_on_free;
        let mut between = |s: &Sim| {
            checks += 1;
            crate::mm::check::check_all(s)
                .err()
                .map(RunEnd::CheckFailed)
        };
        let mut end = run_chunked(
            sim,
            opts.max_steps,
            opts.check_every,
            &mut |_| {},
            &mut between,
        );
        if matches!(end, RunEnd::Completed | RunEnd::StepLimit) {
            checks += 1;
            if let Err(e) = crate::mm::check::check_all(sim) {
                end = RunEnd::CheckFailed(e);
            }
        }
        if matches!(end, RunEnd::Completed | RunEnd::StepLimit) {
            let at = sim.pressure_read_time();
            if let Err(e) = crate::psi::check(&sim.psi.read(at), at) {
                end = RunEnd::CheckFailed(format!("pressure: {e}"));
            }
        }
        let io = io_errors_report(sim);
        if io.total == 0 && !matches!(end, RunEnd::CheckFailed(_) | RunEnd::Stalled(_)) {
            if let Some(e) = replay_problem(&sc, sim, &probes, &end) {
                end = RunEnd::CheckFailed(e);
            }
        }
        Ok::<_, String>((end, io))
    }));
    res.steps = machine.as_ref().map_or(0, |s| s.steps);
    res.checks = checks;
    match outcome {
        Err(p) => {
            res.verdict = Verdict::Fail(format!("panic: {}", panic_message(p.as_ref())));
        }
        Ok(Err(e)) => res.verdict = Verdict::Fail(format!("cannot build the machine: {e}")),
        Ok(Ok((end, io))) => {
            res.io_errors = io.total;
            res.verdict = match &end {
                RunEnd::CheckFailed(e) => Verdict::Fail(format!("invariant check failed: {e}")),
                RunEnd::Stalled(e) => Verdict::Fail(format!("stalled: {e}")),
                _ if io.silent_losses > 0 => Verdict::Fail(format!(
                    "content oracle: {} silent loss(es)",
                    io.silent_losses
                )),
                _ => Verdict::Pass,
            };
            res.end = Some(end);
        }
    }
    res
}

/// The replay tasks' own check (cases without injected IO errors): a replay that was
/// not killed stops with no error (EFBIG, ENOSPC, EBADF, a failed open or mmap of its
/// files) and, when the case completed, has issued every request of its trace.
pub fn replay_problem(
    sc: &Scenario,
    sim: &Sim,
    probes: &[std::rc::Rc<std::cell::RefCell<crate::workload::replay::Shared>>],
    end: &RunEnd,
) -> Option<String> {
    use crate::workload::replay::ReplaySpec;
    let specs = sc
        .tasks
        .iter()
        .filter_map(|t| t.program.get::<ReplaySpec>().map(|r| (t.name.as_str(), r)));
    for ((name, spec), probe) in specs.zip(probes) {
        let killed = sim
            .tasks
            .iter()
            .any(|t| t.name == name && (t.oom_killed || !t.stats.errors.is_empty()));
        if killed {
            continue;
        }
        let c = &probe.borrow().counters;
        if let Some(e) = &c.error {
            return Some(format!("replay task {name} stopped: {e}"));
        }
        let want = spec.limit.min(spec.layout.requests);
        if *end == RunEnd::Completed && c.requests != want {
            return Some(format!(
                "replay task {name} issued {} of its {want} requests",
                c.requests
            ));
        }
    }
    None
}

/// Process CPU time so far (user + system), seconds; 0 where /proc is unavailable.
pub fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) start at ") ".
    let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of stat: 12 and 13 after the state field.
    (ticks(11) + ticks(12)) / 100.0
}

/// Totals of a swarm run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwarmTotals {
    /// Seeds run.
    pub seeds: u64,
    /// Seeds that failed.
    pub failed: Vec<u64>,
    /// Cases cut short at the step limit.
    pub step_limited: u64,
    /// Steps, all cases.
    pub steps: u64,
    /// Invariant checks, all cases.
    pub checks: u64,
    /// IO errors injected, all cases.
    pub io_errors: u64,
}

impl SwarmTotals {
    /// Add one case's result.
    pub fn add(&mut self, r: &SwarmResult) {
        self.seeds += 1;
        if r.verdict != Verdict::Pass {
            self.failed.push(r.seed);
        }
        if r.end == Some(RunEnd::StepLimit) {
            self.step_limited += 1;
        }
        self.steps += r.steps;
        self.checks += r.checks;
        self.io_errors += r.io_errors;
    }
}

/// Format one case's result line (and, for a failure, the replay command).
pub fn format_result(r: &SwarmResult) -> String {
    let end = match &r.end {
        Some(RunEnd::Completed) => "completed",
        Some(RunEnd::StepLimit) => "step limit",
        Some(RunEnd::Interrupted) => "interrupted",
        Some(_) | None => "failed",
    };
    match &r.verdict {
        Verdict::Pass => format!(
            "seed {}: ok ({end}, {} steps, {} checks, {} IO errors) | {}",
            r.seed, r.steps, r.checks, r.io_errors, r.summary
        ),
        Verdict::Fail(why) => format!(
            "seed {}: FAIL after {} steps: {why}\n  case: {}\n  replay: {}",
            r.seed, r.steps, r.summary, r.replay
        ),
    }
}

/// The `mmsim swarm` command line (parsed by the binary, run here).
pub mod cli {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    /// `mmsim swarm` arguments.
    #[derive(clap::Args, Debug, Clone)]
    pub struct SwarmArgs {
        /// First seed (each run takes the next one).
        #[arg(long, default_value_t = 0)]
        pub seed: u64,
        /// Number of seeds (default 100; unbounded with --minutes).
        #[arg(long)]
        pub runs: Option<u64>,
        /// Stop starting new seeds after this many minutes (wall clock).
        #[arg(long)]
        pub minutes: Option<f64>,
        /// Step limit of each case.
        #[arg(long, default_value_t = DEFAULT_MAX_STEPS)]
        pub max_steps: u64,
        /// Invariant check every N steps (1 = after every step).
        #[arg(long, default_value_t = DEFAULT_CHECK_EVERY)]
        pub check_every: u64,
        /// Parallel workers.
        #[arg(long, default_value_t = 1)]
        pub jobs: usize,
        /// Print the scenario TOML of each case.
        #[arg(long)]
        pub print_toml: bool,
        /// Debug: break an invariant on purpose (put_page frees a page still on the LRU).
        #[arg(long)]
        pub debug_skip_lru_del_on_free: bool,
        /// Kernel of every case (any release from 2.6.30 to 6.18) instead of the one each
        /// seed draws.
        #[arg(long, value_name = "VERSION")]
        pub kernel: Option<String>,
        /// Reclaim policy of every case (`classic` or `mglru`) instead of the one each seed
        /// draws; a case whose era is older than the policy keeps the classic policy.
        #[arg(long, value_name = "POLICY")]
        pub policy: Option<String>,
    }

    static CTRLC_INSTALLED: AtomicBool = AtomicBool::new(false);

    /// Make Ctrl-C set `run::INTERRUPT` (once per process); a second Ctrl-C still kills.
    pub fn install_ctrlc() {
        if CTRLC_INSTALLED.swap(true, Ordering::SeqCst) {
            return;
        }
        let _ = ctrlc::set_handler(|| {
            if crate::run::INTERRUPT.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!(
                "\nmmsim: interrupted; finishing with partial results (Ctrl-C again to kill)"
            );
        });
    }

    /// Run the swarm; exit status 1 if any seed failed. A bad argument is an error
    /// message (exit status 2 in the binary).
    pub fn cmd_swarm(a: &SwarmArgs) -> Result<std::process::ExitCode, String> {
        let kernel = a
            .kernel
            .as_deref()
            .map(|v| KernelEra::parse(v).map_err(|e| format!("--kernel: {e}")))
            .transpose()?;
        let policy = a
            .policy
            .as_deref()
            .map(|p| {
                crate::mm::policy::ReclaimPolicy::parse(p).map_err(|e| format!("--policy: {e}"))
            })
            .transpose()?;
        install_ctrlc();
        let opts = SwarmOptions {
            policy,
            max_steps: a.max_steps,
            check_every: a.check_every.max(1),
            debug_skip_lru_del_on_free: a.debug_skip_lru_del_on_free,
            kernel,
        };
        let runs = a
            .runs
            .unwrap_or(if a.minutes.is_some() { u64::MAX } else { 100 });
        let deadline = a
            .minutes
            .map(|m| Instant::now() + Duration::from_secs_f64(m.max(0.0) * 60.0));
        let next = AtomicU64::new(0);
        let totals = Mutex::new(SwarmTotals::default());
        let started = Instant::now();
        let cpu0 = process_cpu_seconds();
        let worker = || loop {
            if crate::run::INTERRUPT.load(Ordering::Relaxed)
                || deadline.is_some_and(|d| Instant::now() >= d)
            {
                break;
            }
            let i = next.fetch_add(1, Ordering::SeqCst);
            if i >= runs {
                break;
            }
            let seed = a.seed.wrapping_add(i);
            let r = run_seed(seed, &opts);
            let line = format_result(&r);
            let mut t = totals.lock().unwrap_or_else(|e| e.into_inner());
            t.add(&r);
            println!("{line}");
            if a.print_toml || (runs == 1 && r.verdict != Verdict::Pass) {
                println!("{}", generate(seed).toml);
            }
        };
        std::thread::scope(|s| {
            for _ in 0..a.jobs.max(1) {
                s.spawn(worker);
            }
        });
        let t = totals.into_inner().unwrap_or_else(|e| e.into_inner());
        let cpu = process_cpu_seconds() - cpu0;
        println!(
            "swarm: {} seeds from {}, {} failed, {} cut at the step limit; {} steps, {} invariant checks, {} IO errors injected; {:.1} s wall, {:.1} s CPU",
            t.seeds,
            a.seed,
            t.failed.len(),
            t.step_limited,
            t.steps,
            t.checks,
            t.io_errors,
            started.elapsed().as_secs_f64(),
            cpu
        );
        Ok(if t.failed.is_empty() {
            std::process::ExitCode::SUCCESS
        } else {
            let mut f = t.failed.clone();
            f.sort_unstable();
            println!("failed seeds: {f:?}; replay one with:");
            println!("  {}", opts.replay_command(f[0]));
            std::process::ExitCode::from(1)
        })
    }
}

/// A `cgroup-write` task of a case (name, CPU, target cgroup, file, value, delay in ms):
/// its table and its line in the case's description.
struct CgroupWrite<'a>(&'a str, u32, &'a str, &'a str, &'a str, u32);

impl CgroupWrite<'_> {
    fn push(&self, tasks: &mut String, descr: &mut Vec<(String, String)>) {
        let CgroupWrite(name, cpu, target, file, value, delay) = self;
        let _ = write!(
            tasks,
            "\n[[tasks]]\nname = \"{name}\"\ncpu = {cpu}\nprogram = \"cgroup-write\"\ntarget = \"{target}\"\nfile = \"{file}\"\nvalue = {value}\ndelay = \"{delay}ms\"\n"
        );
        descr.push((
            format!("{name}@cpu{cpu}"),
            format!("{target} {file} = {value} after {delay}ms"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Format, TraceKind, TraceReader};

    /// Some replay traces are written zstd- or gzip-compressed (named `….zst` / `….gz`, the
    /// compressed bytes on disk) and read back to the same requests as the plain bytes.
    #[test]
    fn some_replay_traces_are_compressed_and_read_back() {
        let (mut zstd_seen, mut gzip_seen) = (0, 0);
        for seed in 0..400u64 {
            let case = generate(seed);
            let Some(at) = case.toml.find("trace = \"") else {
                continue;
            };
            let path = case.toml[at + 9..].split('"').next().unwrap().to_string();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let (magic, zstd): (&[u8], bool) = if path.ends_with(".zst") {
                (&[0x28, 0xb5, 0x2f, 0xfd], true)
            } else if path.ends_with(".gz") {
                (&[0x1f, 0x8b], false)
            } else {
                continue;
            };
            assert!(bytes.starts_with(magic), "seed {seed}: {path}");
            assert!(
                case.summary
                    .contains(if zstd { ", zstd" } else { ", gzip" }),
                "{}",
                case.summary
            );
            let sc = crate::scenario::parse_scenario(&case.toml, "swarm", &[])
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            let spec = sc
                .tasks
                .iter()
                .find_map(|t| t.program.get::<crate::workload::replay::ReplaySpec>())
                .expect("a replay task");
            assert!(spec.layout.requests > 0, "seed {seed}: {path}");
            if zstd {
                zstd_seen += 1;
            } else {
                gzip_seen += 1;
            }
        }
        assert!(
            zstd_seen > 5 && gzip_seen > 2,
            "{zstd_seen} zstd, {gzip_seen} gzip"
        );
    }

    /// Every format's drawn trace reads back, with the format the case names (or, without
    /// a `format` key, the one its file's name and first line tell), as all its requests:
    /// the blkparse trace's other events, flushes, plugs, discards and summary, the csv's
    /// header and ignored columns add none.
    #[test]
    fn every_replay_format_reads_back_its_requests() {
        let dir = std::env::temp_dir().join(format!("mmsim-swarm-formats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut guessed = 0;
        for name in REPLAY_FORMAT_NAMES {
            let (mut writes, mut deletes) = (0, 0);
            for seed in 0..40u64 {
                let mut rng = Pcg64::seed_from_u64(seed);
                let n = 50 + seed * 11 % 451;
                let t = draw_trace(&mut rng, name, n);
                assert_eq!(t.name, name);
                let path = dir.join(format!("s{seed}.{}", t.ext));
                std::fs::write(&path, &t.bytes).unwrap();
                let format = t.format.as_deref().map(|f| {
                    Format::parse(f).unwrap_or_else(|e| panic!("{name} seed {seed}: {f}: {e}"))
                });
                guessed += usize::from(format.is_none());
                let (reader, f) = TraceReader::open(&path, format.as_ref())
                    .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
                assert_eq!(f.spec().split(':').next(), Some(name), "seed {seed}");
                let reqs: Vec<_> = reader
                    .collect::<Result<_, _>>()
                    .unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
                assert_eq!(reqs.len() as u64, n, "{name} seed {seed}");
                writes += reqs.iter().filter(|r| r.write).count();
                deletes += reqs.iter().filter(|r| r.delete).count();
                for r in &reqs {
                    match f.kind() {
                        TraceKind::Block => {
                            assert!(
                                r.len > 0 && r.offset < 64 << 20,
                                "{name} seed {seed}: {r:?}"
                            )
                        }
                        TraceKind::Object => assert!(r.len <= 4 * 4096 + 64, "{name}: {r:?}"),
                    }
                }
            }
            // Writes in every format that has them, deletes in lcs and csv.
            assert_eq!(
                writes > 0,
                !matches!(name, "txt" | "oracleGeneral" | "arc"),
                "{name}"
            );
            assert_eq!(deletes > 0, matches!(name, "lcs" | "csv"), "{name}");
        }
        assert!(guessed > 0, "some block traces go without a format key");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
