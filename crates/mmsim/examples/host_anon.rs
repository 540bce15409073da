//! Run mmsim's `anon` program on the host's own kernel, in a memory cgroup: map `--size`
//! bytes of private anonymous memory and touch one byte of every page, `--passes` times,
//! sequentially or (`--pattern random`) in the same seeded order of 64-page chunks as
//! `program = "anon"` draws (rand_pcg's Pcg64 from `--seed`, a new shuffle each pass).
//! It reports each pass's seconds, /proc/vmstat's deltas and the cgroup's memory.stat
//! under the names mmsim reports, to set beside
//! `mmsim run examples/zram_memcg.toml` (docs/EXPERIMENTS.md, "Anonymous memory against a
//! real kernel").
//!
//!     sudo target/release/examples/host_anon --size 128MiB --passes 4 --pattern random \
//!         --memory-max 96MiB [--swappiness 60] [--json out.json]
//!
//! `--map FILE` maps a file instead (MAP_PRIVATE, PROT_READ, `--exec` for PROT_EXEC: the
//! passes read one byte of each page, as `program = "mmap-read"` with `stride = "4KiB"`
//! does; the file is written first when it is not `--size` bytes long).
//!
//! `--stream FILE` reads a file beside the anonymous passes, in a second thread of the same
//! process (so the same cgroup), as `program = "read"` does: sequential `--stream-block`
//! preads, `--stream-passes` times (the file is written first when it is not
//! `--stream-size` bytes long; the page cache is dropped before the run). `--readahead-kb`
//! sets the file's device's read_ahead_kb for the run (0: off; restored after).
//!
//! `--tracepoints` captures the reclaim tracepoints in tracefs during the run (machine-wide,
//! as host_replay's `--tracepoints`) and adds their totals as `tracepoints`.
//!
//! Needs root on Linux and a swap area (`swapon`; for zram: `echo 1G >
//! /sys/block/zram0/disksize; mkswap /dev/zram0; swapon /dev/zram0`). /proc/vmstat is
//! machine-wide: run it on an idle machine.

#[cfg(target_os = "linux")]
#[path = "host_common/mod.rs"]
mod host_common;

#[cfg(target_os = "linux")]
fn main() {
    if let Err(e) = host::main() {
        eprintln!("host_anon: {e}");
        std::process::exit(2);
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("host_anon: needs Linux (memory cgroups, swap)");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
mod host {
    use std::io::Write;
    use std::os::unix::fs::FileExt;
    use std::os::unix::io::AsRawFd;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use crate::host_common::{
        kernel_release, keyed, report_stats, write, Capture, Cgroup, Readahead, Snapshot,
    };
    use clap::Parser;
    use rand::seq::SliceRandom;
    use rand::SeedableRng;

    const PAGE: usize = 4096;
    /// `anon`'s chunk: 64 pages.
    const CHUNK: usize = 64 * PAGE;

    /// Touch anonymous memory as mmsim's `anon` program does, in a memory cgroup (root).
    #[derive(Parser, Debug)]
    struct Args {
        /// Bytes to map, e.g. 128MiB.
        #[arg(long)]
        size: String,
        /// Passes over the memory.
        #[arg(long, default_value_t = 1)]
        passes: u32,
        /// `sequential` or `random` (64-page chunks in a seeded order).
        #[arg(long, default_value = "sequential")]
        pattern: String,
        /// Seed of the random order (`anon`'s `seed`).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Sleep between passes, milliseconds (`anon`'s `think`).
        #[arg(long, default_value_t = 0)]
        think_ms: u64,
        /// Only read (else every access writes).
        #[arg(long)]
        read_only: bool,
        /// The cgroup's memory limit, e.g. 96MiB, or "max" for none.
        #[arg(long)]
        memory_max: String,
        /// The cgroup's memory.swappiness (cgroup v1 only; v2 reads the global one).
        #[arg(long)]
        swappiness: Option<u32>,
        /// The cgroup's memory.memsw.limit_in_bytes, e.g. 160MiB (cgroup v1 only; at least
        /// `--memory-max`): mmsim's `memsw_max`. A limit the workload needs more than is
        /// an OOM kill of this process.
        #[arg(long)]
        memsw_max: Option<String>,
        /// The cgroup's memory.soft_limit_in_bytes, e.g. 256MiB (cgroup v1 only): mmsim's
        /// `soft_limit`, which only global reclaim heeds.
        #[arg(long)]
        soft_limit: Option<String>,
        /// Map this file instead of anonymous memory (`program = "mmap-read"`: MAP_PRIVATE,
        /// PROT_READ, one byte read per page); written first when it is not `--size` bytes.
        #[arg(long)]
        map: Option<PathBuf>,
        /// With `--map`: PROT_EXEC too (`mmap-read`'s `exec = true`, a program's text).
        #[arg(long)]
        exec: bool,
        /// Read this file beside the anonymous passes, in a second thread.
        #[arg(long)]
        stream: Option<PathBuf>,
        /// The stream file's size (written when it differs).
        #[arg(long, default_value = "256MiB")]
        stream_size: String,
        /// Passes over the stream file.
        #[arg(long, default_value_t = 1)]
        stream_passes: u32,
        /// Bytes per pread of the stream.
        #[arg(long, default_value = "128KiB")]
        stream_block: String,
        /// Set the stream file's device's read_ahead_kb for the run (0: readahead off).
        #[arg(long)]
        readahead_kb: Option<u64>,
        /// Write the JSON report to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Capture the reclaim tracepoints (tracefs, /sys/kernel/tracing; machine-wide)
        /// during the run and report their totals (`tracepoints`, in the shape of mmsim's
        /// report) and the events the trace buffer lost (`tracepoints_lost`).
        #[arg(long)]
        tracepoints: bool,
    }

    /// The file read beside the anonymous passes.
    struct Stream {
        file: std::fs::File,
        size: u64,
        block: usize,
        passes: u32,
    }

    impl Stream {
        fn open(a: &Args, path: &Path) -> Result<Stream, String> {
            let size = mmsim::scenario::parse_size_arg(&a.stream_size)
                .map_err(|e| format!("--stream-size: {e}"))?;
            let block = mmsim::scenario::parse_size_arg(&a.stream_block)
                .map_err(|e| format!("--stream-block: {e}"))?;
            if block == 0 || size == 0 {
                return Err("--stream-size and --stream-block must be at least 1".into());
            }
            let file = ensure_file(path, size)?;
            Ok(Stream {
                file,
                size,
                block: block as usize,
                passes: a.stream_passes,
            })
        }

        /// Read the file from start to end, `passes` times; seconds per pass.
        fn run(&self) -> Result<Vec<f64>, String> {
            let mut buf = vec![0u8; self.block];
            let mut seconds = Vec::new();
            for _ in 0..self.passes {
                let t = Instant::now();
                let mut off = 0;
                while off < self.size {
                    let n = self
                        .file
                        .read_at(&mut buf, off)
                        .map_err(|e| format!("stream pread: {e}"))?;
                    if n == 0 {
                        break;
                    }
                    off += n as u64;
                }
                seconds.push(t.elapsed().as_secs_f64());
            }
            Ok(seconds)
        }
    }

    /// `path` opened for reading, written first with `size` bytes of data when it is not
    /// that long.
    fn ensure_file(path: &Path, size: u64) -> Result<std::fs::File, String> {
        let err = |e: std::io::Error| format!("{}: {e}", path.display());
        if std::fs::metadata(path).map(|m| m.len()).ok() != Some(size) {
            let mut f = std::fs::File::create(path).map_err(err)?;
            let buf = vec![0x5au8; 1 << 20];
            let mut left = size;
            while left > 0 {
                let n = left.min(buf.len() as u64) as usize;
                f.write_all(&buf[..n]).map_err(err)?;
                left -= n as u64;
            }
            f.sync_all().map_err(err)?;
        }
        std::fs::File::open(path).map_err(err)
    }

    pub fn main() -> Result<(), String> {
        let a = Args::parse();
        let size = mmsim::scenario::parse_size_arg(&a.size).map_err(|e| format!("--size: {e}"))?;
        let limit = match a.memory_max.trim() {
            "max" => None,
            m => {
                Some(mmsim::scenario::parse_size_arg(m).map_err(|e| format!("--memory-max: {e}"))?)
            }
        };
        let random = match a.pattern.as_str() {
            "sequential" => false,
            "random" => true,
            o => return Err(format!("--pattern: `{o}` is not `sequential` or `random`")),
        };
        if a.passes == 0 || size == 0 {
            return Err("--passes and --size must be at least 1".into());
        }
        let swaps = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
        if swaps.lines().count() < 2 {
            return Err("no swap area (/proc/swaps): swapon one first".into());
        }
        if a.exec && a.map.is_none() {
            return Err("--exec is for --map's file".into());
        }
        let memsw = match &a.memsw_max {
            Some(m) => {
                let m =
                    mmsim::scenario::parse_size_arg(m).map_err(|e| format!("--memsw-max: {e}"))?;
                match limit {
                    Some(l) if m >= l => {}
                    _ => return Err("--memsw-max: below --memory-max (v1 refuses it)".into()),
                }
                Some(m)
            }
            None => None,
        };
        // Before the opens: an open file's readahead window (and a mapping's read-around)
        // starts from its device's.
        let mut ra = Vec::new();
        if let Some(kb) = a.readahead_kb {
            let files: Vec<&PathBuf> = a.stream.iter().chain(a.map.iter()).collect();
            if files.is_empty() {
                return Err("--readahead-kb is for --stream's or --map's file".into());
            }
            for p in files {
                ra.push(Readahead::set(p.parent().unwrap_or(Path::new("/")), kb)?);
            }
        }
        let stream = match &a.stream {
            Some(p) => Some(Stream::open(&a, p)?),
            None => None,
        };
        let map = match &a.map {
            Some(p) => Some(ensure_file(p, size)?),
            None => None,
        };
        // SAFETY: sync(2) takes no arguments and cannot fail.
        unsafe { libc::sync() };
        write(Path::new("/proc/sys/vm/drop_caches"), "3")?;
        let soft = match &a.soft_limit {
            Some(s) => {
                Some(mmsim::scenario::parse_size_arg(s).map_err(|e| format!("--soft-limit: {e}"))?)
            }
            None => None,
        };
        let cg = Cgroup::create_in(limit, None)?;
        if let Some(s) = soft {
            if cg.version() != 1 {
                cg.remove();
                return Err("--soft-limit: the memory controller is on cgroup v2 here".into());
            }
            write(
                &cg.path().join("memory.soft_limit_in_bytes"),
                &s.to_string(),
            )?;
        }
        if let Some(s) = a.swappiness {
            write(&cg.path().join("memory.swappiness"), &s.to_string())?;
        }
        if let Some(m) = memsw {
            if cg.version() != 1 {
                cg.remove();
                return Err("--memsw-max: the memory controller is on cgroup v2 here".into());
            }
            write(
                &cg.path().join("memory.memsw.limit_in_bytes"),
                &m.to_string(),
            )?;
        }
        let anon = Anon {
            size: size as usize,
            passes: a.passes,
            random,
            seed: a.seed,
            write: !a.read_only && map.is_none(),
            think: std::time::Duration::from_millis(a.think_ms),
            file: map.as_ref(),
            exec: a.exec,
        };
        let capture = if a.tracepoints {
            Some(Capture::start()?)
        } else {
            None
        };
        let result = run(&cg, &anon, stream.as_ref());
        let traced = capture.map(Capture::finish).transpose();
        // After the unmap, as mmsim's report is after its tasks exited.
        let v1 = cg.v1_files();
        cg.remove();
        drop(ra);
        drop(map);
        let (passes, stream_passes, before, after) = result?;
        let mut report = report(&a, size, &passes, &before, &after);
        if a.stream.is_some() {
            report["stream_pass_seconds"] = serde_json::json!(stream_passes);
        }
        if let Some(v1) = v1 {
            report["v1"] = v1;
        }
        if let Some((t, lost)) = traced? {
            report["tracepoints"] = serde_json::json!(t);
            report["tracepoints_lost"] = serde_json::json!(lost);
        }
        println!("{report}");
        if let Some(p) = &a.json {
            std::fs::write(p, format!("{report}\n"))
                .map_err(|e| format!("{}: {e}", p.display()))?;
        }
        Ok(())
    }

    /// The anonymous passes.
    /// The passes: over anonymous memory, or over a mapped file (`--map`).
    struct Anon<'f> {
        size: usize,
        passes: u32,
        random: bool,
        seed: u64,
        write: bool,
        think: std::time::Duration,
        file: Option<&'f std::fs::File>,
        exec: bool,
    }

    /// Join the cgroup, run the passes (and the stream beside them), then snapshot;
    /// (seconds per pass, per stream pass, snapshots before the map and after both ended,
    /// before the unmap).
    #[allow(clippy::type_complexity)]
    fn run(
        cg: &Cgroup,
        anon: &Anon<'_>,
        stream: Option<&Stream>,
    ) -> Result<(Vec<f64>, Vec<f64>, Snapshot, Snapshot), String> {
        let snap = || (keyed(Path::new("/proc/vmstat")), cg.stat());
        cg.join()?;
        let before = snap();
        std::thread::scope(|sc| {
            let reader = stream.map(|s| sc.spawn(|| s.run()));
            let passes = touch(anon);
            let streamed = match reader {
                Some(h) => h.join().map_err(|_| "the stream thread panicked")??,
                None => Vec::new(),
            };
            let (seconds, unmap) = passes?;
            let after = snap();
            unmap();
            Ok((seconds, streamed, before, after))
        })
    }

    /// Map and touch as `anon` does; (seconds per pass, the unmap to call after the last
    /// snapshot).
    fn touch(anon: &Anon<'_>) -> Result<(Vec<f64>, impl FnOnce()), String> {
        let Anon {
            size,
            passes,
            random,
            seed,
            write,
            think,
            file,
            exec,
        } = *anon;
        let (prot, flags, fd) = match file {
            Some(f) => (
                libc::PROT_READ | if exec { libc::PROT_EXEC } else { 0 },
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
            ),
            None => (
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
            ),
        };
        // SAFETY: a fresh private mapping (of a file at least `size` long, or anonymous),
        // checked for MAP_FAILED; every access below is inside it, a file's only read, and
        // it is unmapped once, at the end.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, flags, fd, 0) };
        if base == libc::MAP_FAILED {
            return Err(format!("mmap: {}", std::io::Error::last_os_error()));
        }
        let base = base.cast::<u8>();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut seconds = Vec::new();
        let mut sink = 0u8;
        for pass in 0..passes {
            if pass > 0 {
                std::thread::sleep(think);
            }
            let mut order: Vec<usize> = (0..size.div_ceil(CHUNK)).collect();
            if random {
                order.shuffle(&mut rng);
            }
            let t = Instant::now();
            for c in order {
                let end = ((c + 1) * CHUNK).min(size);
                let mut off = c * CHUNK;
                while off < end {
                    // SAFETY: off < size, inside the mapping.
                    unsafe {
                        let p = base.add(off);
                        if write {
                            p.write_volatile(p.read_volatile().wrapping_add(1));
                        } else {
                            sink ^= p.read_volatile();
                        }
                    }
                    off += PAGE;
                }
            }
            seconds.push(t.elapsed().as_secs_f64());
        }
        std::hint::black_box(sink);
        let base = base as usize;
        // SAFETY: the mapping made above, unmapped once.
        let unmap = move || unsafe {
            libc::munmap(base as *mut libc::c_void, size);
        };
        Ok((seconds, unmap))
    }

    fn report(
        a: &Args,
        size: u64,
        passes: &[f64],
        before: &Snapshot,
        after: &Snapshot,
    ) -> serde_json::Value {
        let (vm, cg) = report_stats(before, after);
        serde_json::json!({
            "kernel": kernel_release(),
            "size": size,
            "passes": a.passes,
            "pattern": a.pattern,
            "seed": a.seed,
            "think_ms": a.think_ms,
            "write": !a.read_only && a.map.is_none(),
            "map": a.map,
            "exec": a.exec,
            "memory_max": a.memory_max,
            "memsw_max": a.memsw_max,
            "soft_limit": a.soft_limit,
            "pass_seconds": passes,
            "vmstat": vm,
            "cgroup_stat": cg,
        })
    }
}
