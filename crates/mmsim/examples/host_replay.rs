//! Replay a trace on the host's own kernel, in a memory cgroup, as `mmsim replay` lays it
//! out: the same files, pages and requests, read with pread(2) (written with pwrite(2))
//! through the host's page cache (an object's file opened, read and closed per request, as
//! mmsim's replay does). It measures the page miss ratio the way mmsim's observer does (the
//! pages of each request's range in the page cache right before it is issued, which changes
//! nothing: cachestat(2), Linux 6.5; `--resident mincore` for mincore(2), which counts only
//! pages already read) and reports the cgroup's memory.stat and /proc/vmstat deltas under the names
//! mmsim reports. docs/replay.md, "Against a real kernel", compares the two.
//!
//!     sudo target/release/examples/host_replay TRACE --format msr --memory-max 64MiB \
//!         --dir /var/tmp/mmsim-host [--readahead-kb 0] [--json out.json] \
//!         [--sample-every N]
//!
//! `--sample-every N` adds `samples`: memory.stat every N requests (cgroup v1: with
//! `kmem`, memory.kmem.usage_in_bytes, and `usage`). A read of memory.stat flushes the
//! cgroup's statistics, which from 6.12 reclaim otherwise sees only as the periodic flush
//! left them: sampling changes what is measured (on the VM a 1M-request object trace at
//! 64 MiB missed 0.5930 sampled every 50,000 requests against 0.5615–0.5866 unsampled).
//! Compare sampled runs with sampled runs (mmsim's `senpai` reads flush the same way).
//!
//! `--tracepoints` captures the reclaim tracepoints in tracefs during the replay (machine-wide)
//! and adds `tracepoints`: their totals in the shape of `mmsim replay`'s report
//! (`mmsim::mm::tracepoints`), and `tracepoints_lost`, the events the trace buffer lost.
//!
//! Two replays sharing one limit: make a parent cgroup with the limit, sync and drop the
//! page cache once, start each replay with `--parent P --no-drop-caches --wait-for GO`
//! (its own `--dir`), and create the file GO when both have set up (docs/replay.md,
//! "Two cgroups under one limit").
//!
//! Needs root on Linux: it creates a memory cgroup (v2 `memory.max`, or v1
//! `memory.limit_in_bytes`; the report's `cgroup_version` says which, for `mmsim replay
//! --cgroup-version`), drops the page cache (`/proc/sys/vm/drop_caches`) and, with
//! `--readahead-kb`, sets the directory's block device's `queue/read_ahead_kb` for the run
//! (restored after). The files are written with data once (kept for the next run). The
//! trace is read into memory before the replay joins the cgroup, so neither its page cache
//! nor this program's heap is charged to the cgroup; /proc/vmstat is machine-wide, so run
//! it on an idle machine.

#[cfg(target_os = "linux")]
#[path = "host_common/mod.rs"]
mod host_common;

#[cfg(target_os = "linux")]
fn main() {
    if let Err(e) = host::main() {
        eprintln!("host_replay: {e}");
        std::process::exit(2);
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("host_replay: needs Linux (memory cgroups, mincore, drop_caches)");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
mod host {
    use std::collections::BTreeMap;
    use std::fs::{self, File, OpenOptions};
    use std::io::Write;
    use std::os::unix::fs::{FileExt, MetadataExt};
    use std::os::unix::io::AsRawFd;
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use crate::host_common::{
        kernel_release, keyed, report_stats, write, Capture, Cgroup, Readahead, Snapshot,
    };
    use clap::Parser;
    use mmsim::trace::{Format, TraceReader, PAGE_SIZE};
    use mmsim::workload::replay::{plan, Layout, ObjectMap, Placement, PlanOptions};

    /// Replay a trace on this machine's kernel in a memory cgroup (root; Linux).
    #[derive(Parser, Debug)]
    struct Args {
        /// The trace file (any format `mmsim replay` reads).
        trace: PathBuf,
        /// Trace format, as `mmsim replay --format` (default: guessed from the name).
        #[arg(long)]
        format: Option<String>,
        /// The cgroup's memory limit, e.g. 64MiB (required without `--parent`).
        #[arg(long)]
        memory_max: Option<String>,
        /// Make the cgroup below this existing memory cgroup (a path below the hierarchy's
        /// root), whose limit then bounds it with its siblings': two replays started
        /// together (`--no-drop-caches`, `--wait-for`) share one limit.
        #[arg(long)]
        parent: Option<String>,
        /// Do not sync and drop the page cache before the replay (the caller did, once for
        /// all the replays it starts together).
        #[arg(long)]
        no_drop_caches: bool,
        /// Set up (files, cgroup, trace in memory), then wait for FILE to exist before the
        /// replay starts: the way to start several replays at once.
        #[arg(long)]
        wait_for: Option<PathBuf>,
        /// Directory for the replay's files (created; on the filesystem to measure).
        #[arg(long)]
        dir: PathBuf,
        /// Set the directory's device's read_ahead_kb for the run (0: readahead off).
        #[arg(long)]
        readahead_kb: Option<u64>,
        /// Object traces: `file` (one file per object) or `range` (one file).
        #[arg(long, default_value = "file")]
        object_map: String,
        /// Size of objects without one, e.g. 4KiB.
        #[arg(long, default_value = "4KiB")]
        object_size: String,
        /// Replay at most N requests.
        #[arg(long)]
        limit: Option<u64>,
        /// Write the JSON report to this file.
        #[arg(long)]
        json: Option<PathBuf>,
        /// How a request's resident pages are counted: `cachestat` (cachestat(2), Linux
        /// 6.5: pages in the page cache, as mmsim counts them, a page still being read
        /// included) or `mincore` (mincore(2) on a mapping of a block trace's files: only
        /// pages already read — uptodate — count).
        #[arg(long, default_value = "cachestat")]
        resident: String,
        /// Read the cgroup's memory.stat every N requests (the report's `samples`). Each
        /// read flushes the cgroup's statistics, which reclaim reads: it changes the run.
        #[arg(long)]
        sample_every: Option<u64>,
        /// Access the pages through a shared mapping of each file (mapped after joining
        /// the cgroup, at the file's first request), as `mmsim replay --mmap` does: a load
        /// of one byte of each page of a read request, a store of one byte for a write
        /// (block traces and the range layout).
        #[arg(long)]
        mmap: bool,
        /// Object traces, a file per object: keep each object's file open after its first
        /// request (opened in the cgroup), as `mmsim replay --keep-open` does, instead of
        /// opening and closing it per request. Raises RLIMIT_NOFILE to its hard limit.
        #[arg(long)]
        keep_open: bool,
        /// Capture the reclaim tracepoints (tracefs, /sys/kernel/tracing) during the
        /// replay and report their totals (`tracepoints`).
        #[arg(long)]
        tracepoints: bool,
    }

    pub fn main() -> Result<(), String> {
        let a = Args::parse();
        let trace = a.trace.to_str().ok_or("the trace path is not UTF-8")?;
        let format = match &a.format {
            Some(f) => Format::parse(f)?,
            None => Format::guess(&a.trace).ok_or("give --format: the name does not say")?,
        };
        let limit = match &a.memory_max {
            Some(m) => {
                Some(mmsim::scenario::parse_size_arg(m).map_err(|e| format!("--memory-max: {e}"))?)
            }
            None if a.parent.is_some() => None,
            None => return Err("--memory-max: required (or --parent)".into()),
        };
        let object_map = match a.object_map.as_str() {
            "file" => ObjectMap::File,
            "range" => ObjectMap::Range,
            o => return Err(format!("--object-map: `{o}` is not `file` or `range`")),
        };
        let object_size = mmsim::scenario::parse_size_arg(&a.object_size)
            .map_err(|e| format!("--object-size: {e}"))?;
        fs::create_dir_all(&a.dir).map_err(|e| format!("{}: {e}", a.dir.display()))?;
        let dir = fs::canonicalize(&a.dir).map_err(|e| format!("{}: {e}", a.dir.display()))?;
        let o = PlanOptions {
            dir: dir
                .to_str()
                .ok_or("the directory is not UTF-8")?
                .to_string(),
            object_map,
            object_size,
            size: 0,
            limit: a.limit.unwrap_or(u64::MAX),
        };
        let layout = plan(trace, &format, &o)?;
        let reqs = place(trace, &format, &layout, object_map, o.limit)?;
        make_files(&layout)?;
        let cg = Cgroup::create_in(limit, a.parent.as_deref())?;
        let ra = match a.readahead_kb {
            Some(kb) => Some(Readahead::set(&dir, kb)?),
            None => None,
        };
        let mincore = match a.resident.as_str() {
            "cachestat" => false,
            "mincore" => true,
            o => return Err(format!("--resident: `{o}` is not `cachestat` or `mincore`")),
        };
        let start = Start {
            drop_caches: !a.no_drop_caches,
            wait_for: a.wait_for.clone(),
        };
        let capture = if a.tracepoints {
            Some(Capture::start()?)
        } else {
            None
        };
        if a.keep_open {
            raise_nofile(layout.files.len() as u64 + 64)?;
        }
        let how = Access {
            mincore,
            mapped: a.mmap,
            keep_open: a.keep_open,
        };
        let result = replay(&layout, &reqs, &cg, a.sample_every, &how, &start);
        let traced = capture.map(Capture::finish).transpose()?;
        drop(ra);
        let (misses, pages, seconds, before, after, samples) = result?;
        let v1 = cg.v1_files();
        cg.remove();
        let mut report = report(&a, &reqs, misses, pages, seconds, &before, &after);
        report["cgroup_version"] = serde_json::json!(cg.version());
        if let Some(v1) = v1 {
            report["v1"] = v1;
        }
        if !samples.is_empty() {
            report["samples"] = serde_json::json!(samples);
        }
        if let Some((t, lost)) = traced {
            report["tracepoints"] = serde_json::json!(t);
            report["tracepoints_lost"] = serde_json::json!(lost);
        }
        println!("{report}");
        if let Some(p) = &a.json {
            fs::write(p, format!("{report}\n")).map_err(|e| format!("{}: {e}", p.display()))?;
        }
        Ok(())
    }

    /// Each record placed on the layout's files, as the replay program places it.
    fn place(
        trace: &str,
        format: &Format,
        l: &Layout,
        object_map: ObjectMap,
        limit: u64,
    ) -> Result<Vec<Placement>, String> {
        let (reader, _) =
            TraceReader::open(Path::new(trace), Some(format)).map_err(|e| e.to_string())?;
        let mut v = Vec::new();
        for r in reader.take(limit.min(l.requests) as usize) {
            let r = r.map_err(|e| e.to_string())?;
            v.push(Placement::of(l, format.kind(), object_map, &r)?);
        }
        Ok(v)
    }

    /// The layout's files, with data (mmsim's replay files have data on the device).
    fn make_files(l: &Layout) -> Result<(), String> {
        let chunk = vec![0x5au8; 1 << 20];
        for (path, size) in &l.files {
            let p = Path::new(&**path);
            if fs::metadata(p).is_ok_and(|m| m.len() == *size && m.blocks() * 512 >= *size) {
                continue;
            }
            let mut f = File::create(p).map_err(|e| format!("{}: {e}", p.display()))?;
            let mut left = *size;
            while left > 0 {
                let n = left.min(chunk.len() as u64) as usize;
                f.write_all(&chunk[..n])
                    .map_err(|e| format!("{}: {e}", p.display()))?;
                left -= n as u64;
            }
        }
        // One sync for all (the replay syncs again before it drops the caches).
        // SAFETY: sync(2) takes no arguments.
        unsafe { libc::sync() };
        Ok(())
    }

    /// Raise RLIMIT_NOFILE's soft limit to its hard limit; an error when that is under
    /// `need` descriptors (`--keep-open` holds one per object file).
    fn raise_nofile(need: u64) -> Result<(), String> {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit with a valid rlimit.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) != 0 {
                return Err(format!("getrlimit: {}", std::io::Error::last_os_error()));
            }
            r.rlim_cur = r.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
            }
        }
        if r.rlim_max < need {
            return Err(format!(
                "--keep-open: {need} open files needed, RLIMIT_NOFILE allows {}",
                r.rlim_max
            ));
        }
        Ok(())
    }

    /// How requests reach the pages and are measured.
    struct Access {
        /// Residency by mincore(2) (else cachestat(2)).
        mincore: bool,
        /// Through shared mappings (`--mmap`).
        mapped: bool,
        /// Object files kept open after their first request (`--keep-open`).
        keep_open: bool,
    }

    /// How the replay starts: after a sync and a drop of the page cache (or not), at once
    /// or when a file appears.
    struct Start {
        drop_caches: bool,
        wait_for: Option<PathBuf>,
    }

    /// memory.stat read during the replay, with the requests and page misses so far.
    type Sample = BTreeMap<String, i64>;

    /// Drop the page cache, join the cgroup, replay; (page misses, pages, seconds,
    /// snapshots before and after).
    #[allow(clippy::type_complexity)]
    fn replay(
        l: &Layout,
        reqs: &[Placement],
        cg: &Cgroup,
        sample_every: Option<u64>,
        access: &Access,
        how: &Start,
    ) -> Result<(u64, u64, f64, Snapshot, Snapshot, Vec<Sample>), String> {
        let (mincore, access_mapped) = (access.mincore, access.mapped);
        let mut files = Vec::new();
        let mut maps = Vec::new();
        // Object files (a file per object) are opened, read and closed per request, as
        // mmsim's replay program does; block devices' and the range layout's files stay open.
        let per_request = reqs.iter().any(|r| r.obj.is_some());
        if access.keep_open && !per_request {
            return Err("--keep-open: only for object traces, a file per object".into());
        }
        // `--keep-open`: each object file opened at its first request, kept.
        let mut kept: Vec<Option<File>> = Vec::new();
        if access.keep_open {
            kept.resize_with(l.files.len(), || None);
        }
        if per_request && mincore {
            return Err("--resident mincore: only for block traces and the range layout".into());
        }
        if per_request && access_mapped {
            return Err("--mmap: only for block traces and the range layout".into());
        }
        // The shared read-write mappings `--mmap` accesses through, made at each file's
        // first request (after the cgroup is joined: its VMA and page tables are the
        // cgroup's, as the replay task's mmap in mmsim).
        let mut access_maps: Vec<Option<usize>> = vec![None; l.files.len()];
        for (path, size) in l.files.iter().filter(|_| !per_request) {
            let f = OpenOptions::new()
                .read(true)
                .write(true)
                .open(&**path)
                .map_err(|e| format!("{path}: {e}"))?;
            if !mincore {
                files.push(f);
                continue;
            }
            // A mapping only to ask mincore; never touched.
            let len = (*size).max(PAGE_SIZE) as usize;
            // SAFETY: a read-only shared mapping of an open file, unmapped at exit.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(format!("{path}: mmap: {}", std::io::Error::last_os_error()));
            }
            maps.push(p as usize);
            files.push(f);
        }
        let max_len = reqs.iter().map(|r| r.len).max().unwrap_or(0) as usize;
        let mut buf = vec![0u8; max_len];
        let max_pages = reqs.iter().map(|r| r.pages).max().unwrap_or(0) as usize;
        let mut vec = vec![0u8; max_pages];
        if let Some(f) = &how.wait_for {
            while !f.exists() {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        if how.drop_caches {
            // SAFETY: sync(2) takes no arguments.
            unsafe { libc::sync() };
            write(Path::new("/proc/sys/vm/drop_caches"), "3")?;
        }
        let before = (keyed(Path::new("/proc/vmstat")), cg.stat());
        cg.join()?;
        let start = Instant::now();
        let (mut misses, mut pages) = (0u64, 0u64);
        let mut samples = Vec::new();
        for (i, r) in reqs.iter().enumerate() {
            if i > 0 && sample_every.is_some_and(|n| n > 0 && (i as u64).is_multiple_of(n)) {
                let mut st = cg.stat();
                st.insert("requests".into(), i as i64);
                st.insert("page_misses".into(), misses as i64);
                samples.push(st);
            }
            let len = (r.pages * PAGE_SIZE) as usize;
            let path = &*l.files[r.file].0;
            let opened;
            let file = if access.keep_open {
                if kept[r.file].is_none() {
                    // Read and write: a later request of the object may write it.
                    let f = OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(path)
                        .map_err(|e| format!("{path}: {e}"))?;
                    kept[r.file] = Some(f);
                }
                kept[r.file].as_ref().expect("opened")
            } else if per_request {
                opened = OpenOptions::new()
                    .read(true)
                    .write(r.write)
                    .open(path)
                    .map_err(|e| format!("{path}: {e}"))?;
                &opened
            } else {
                &files[r.file]
            };
            if r.delete {
                // A key-value cache's delete drops the object's pages (docs/replay.md,
                // Deletes), as mmsim's replay does; not a lookup.
                // SAFETY: posix_fadvise on an open descriptor; no memory is passed.
                let rc = unsafe {
                    libc::posix_fadvise(
                        file.as_raw_fd(),
                        r.pos as libc::off_t,
                        r.len as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    )
                };
                if rc != 0 {
                    let e = std::io::Error::from_raw_os_error(rc);
                    return Err(format!("{path}: posix_fadvise: {e}"));
                }
                continue;
            }
            if mincore {
                let addr = maps[r.file] + (r.first_page * PAGE_SIZE) as usize;
                // SAFETY: the range lies in the file's mapping; vec holds one byte per page.
                let rc = unsafe { libc::mincore(addr as *mut libc::c_void, len, vec.as_mut_ptr()) };
                if rc == 0 {
                    pages += r.pages;
                    misses += vec[..r.pages as usize]
                        .iter()
                        .filter(|b| *b & 1 == 0)
                        .count() as u64;
                }
            } else {
                // cachestat(2) counts the range's cached pages without a mapping, so
                // measuring charges no object (a VMA) to the cgroup.
                let cached =
                    cachestat(file, r.first_page * PAGE_SIZE, len as u64).map_err(|e| {
                        format!(
                            "{path}: cachestat (Linux 6.5 or later; else --resident mincore): {e}"
                        )
                    })?;
                pages += r.pages;
                misses += r.pages.saturating_sub(cached);
            }
            if access_mapped {
                let base = match access_maps[r.file] {
                    Some(b) => b,
                    None => {
                        let len = l.files[r.file].1.max(PAGE_SIZE) as usize;
                        // SAFETY: a shared mapping of an open file, unmapped at exit.
                        let p = unsafe {
                            libc::mmap(
                                std::ptr::null_mut(),
                                len,
                                libc::PROT_READ | libc::PROT_WRITE,
                                libc::MAP_SHARED,
                                file.as_raw_fd(),
                                0,
                            )
                        };
                        if p == libc::MAP_FAILED {
                            return Err(format!(
                                "{path}: mmap: {}",
                                std::io::Error::last_os_error()
                            ));
                        }
                        access_maps[r.file] = Some(p as usize);
                        p as usize
                    }
                };
                for i in 0..r.pages {
                    let at = (base + ((r.first_page + i) * PAGE_SIZE) as usize) as *mut u8;
                    // SAFETY: the page lies inside the file's mapping (the layout sizes each
                    // file to hold every request's range).
                    unsafe {
                        if r.write {
                            std::ptr::write_volatile(at, 0x5a);
                        } else {
                            std::ptr::read_volatile(at);
                        }
                    }
                }
                continue;
            }
            let b = &mut buf[..r.len as usize];
            let io = if r.write {
                file.write_at(b, r.pos)
            } else {
                file.read_at(b, r.pos)
            };
            io.map_err(|e| format!("{path}: {e}"))?;
        }
        let seconds = start.elapsed().as_secs_f64();
        let after = (keyed(Path::new("/proc/vmstat")), cg.stat());
        for (f, b) in access_maps.iter().enumerate() {
            if let Some(b) = b {
                // SAFETY: the mapping made above, of this length; nothing refers to it now.
                unsafe {
                    libc::munmap(
                        *b as *mut libc::c_void,
                        l.files[f].1.max(PAGE_SIZE) as usize,
                    )
                };
            }
        }
        Ok((misses, pages, seconds, before, after, samples))
    }

    /// cachestat(2): the pages of `[off, off + len)` of `f` in the page cache.
    fn cachestat(f: &File, off: u64, len: u64) -> std::io::Result<u64> {
        #[repr(C)]
        struct Range {
            off: u64,
            len: u64,
        }
        #[repr(C)]
        #[derive(Default)]
        struct Stat {
            nr_cache: u64,
            nr_dirty: u64,
            nr_writeback: u64,
            nr_evicted: u64,
            nr_recently_evicted: u64,
        }
        const SYS_CACHESTAT: libc::c_long = 451;
        let range = Range { off, len };
        let mut st = Stat::default();
        // SAFETY: cachestat(fd, range, stat, flags) reads `range` and writes `st`.
        let rc = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                f.as_raw_fd(),
                &range as *const Range,
                &mut st as *mut Stat,
                0u32,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(st.nr_cache)
    }

    /// The JSON report: mmsim replay's figures and the counters' deltas.
    fn report(
        a: &Args,
        reqs: &[Placement],
        misses: u64,
        pages: u64,
        seconds: f64,
        before: &Snapshot,
        after: &Snapshot,
    ) -> serde_json::Value {
        let (vm, cg) = report_stats(before, after);
        let ratio = if pages > 0 {
            misses as f64 / pages as f64
        } else {
            0.0
        };
        serde_json::json!({
            "trace": a.trace,
            "kernel": kernel_release(),
            "memory_max": a.memory_max,
            "parent": a.parent,
            "readahead_kb": a.readahead_kb,
            "resident": a.resident,
            "mmap": a.mmap,
            "keep_open": a.keep_open,
            "requests": reqs.len(),
            "pages": pages,
            "page_misses": misses,
            "page_miss_ratio": ratio,
            "host_seconds": seconds,
            "vmstat": vm,
            "cgroup_stat": cg,
        })
    }
}
