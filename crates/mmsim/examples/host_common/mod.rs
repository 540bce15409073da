//! What the host measurement examples (`host_replay`, `host_anon`) share: a memory cgroup
//! of their own (v2 or v1) and the `key value` files of /proc and the cgroup.

// Each example uses a part of it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A memory cgroup of its own, v2 or v1.
pub struct Cgroup {
    path: PathBuf,
    v2: bool,
}

impl Cgroup {
    /// A cgroup with memory limit `limit` (none: no limit of its own), below the existing
    /// memory cgroup `parent` (a path below the hierarchy's root) or the root.
    pub fn create_in(limit: Option<u64>, parent: Option<&str>) -> Result<Cgroup, String> {
        let v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        let mut base = if v2 {
            PathBuf::from("/sys/fs/cgroup")
        } else {
            PathBuf::from("/sys/fs/cgroup/memory")
        };
        if let Some(p) = parent {
            base = base.join(p.trim_matches('/'));
            if !base.is_dir() {
                return Err(format!("--parent: {} is not a cgroup", base.display()));
            }
        }
        let path = base.join(format!("mmsim-host-{}", std::process::id()));
        if v2 {
            let _ = fs::write(base.join("cgroup.subtree_control"), "+memory");
        }
        fs::create_dir(&path)
            .map_err(|e| format!("{}: {e} (needs root and a memory cgroup)", path.display()))?;
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        if let Some(limit) = limit {
            write(&path.join(file), &limit.to_string())?;
        }
        Ok(Cgroup { path, v2 })
    }

    /// The hierarchy the memory controller is on: 2 (unified) or 1 (legacy), as
    /// `mmsim replay --cgroup-version` takes it.
    pub fn version(&self) -> u8 {
        if self.v2 {
            2
        } else {
            1
        }
    }

    /// The cgroup's directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn join(&self) -> Result<(), String> {
        write(
            &self.path.join("cgroup.procs"),
            &std::process::id().to_string(),
        )
    }

    /// Back to the parent, and the cgroup removed (its page cache is reparented).
    pub fn remove(&self) {
        let parent = self.path.parent().expect("a parent");
        let _ = fs::write(parent.join("cgroup.procs"), std::process::id().to_string());
        let _ = fs::remove_dir(&self.path);
    }

    /// The cgroup v1 memory controller's own files as they read (None on cgroup v2), in
    /// the shape of mmsim's report (`CgroupReport::v1`): the memory counter's files and
    /// memory.stat under its v1 names.
    pub fn v1_files(&self) -> Option<serde_json::Value> {
        if self.v2 {
            return None;
        }
        let mut v = serde_json::Map::new();
        for (file, key) in [
            ("memory.limit_in_bytes", "limit_in_bytes"),
            ("memory.usage_in_bytes", "usage_in_bytes"),
            ("memory.max_usage_in_bytes", "max_usage_in_bytes"),
            ("memory.failcnt", "failcnt"),
            ("memory.memsw.usage_in_bytes", "memsw_usage_in_bytes"),
            ("memory.memsw.limit_in_bytes", "memsw_limit_in_bytes"),
            ("memory.memsw.failcnt", "memsw_failcnt"),
            (
                "memory.memsw.max_usage_in_bytes",
                "memsw_max_usage_in_bytes",
            ),
            ("memory.kmem.usage_in_bytes", "kmem_usage_in_bytes"),
        ] {
            if let Some(n) = fs::read_to_string(self.path.join(file))
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
            {
                v.insert(key.into(), n.into());
            }
        }
        v.insert(
            "stat".into(),
            serde_json::json!(keyed(&self.path.join("memory.stat"))),
        );
        Some(serde_json::Value::Object(v))
    }

    /// memory.stat, under cgroup v2 names where v1 differs.
    pub fn stat(&self) -> BTreeMap<String, i64> {
        let mut m = keyed(&self.path.join("memory.stat"));
        if !self.v2 {
            // v1 keeps the kernel memory (slab, page tables) in a counter of its own.
            for (file, key) in [
                ("memory.kmem.usage_in_bytes", "kmem"),
                ("memory.usage_in_bytes", "usage"),
            ] {
                if let Some(v) = fs::read_to_string(self.path.join(file))
                    .ok()
                    .and_then(|t| t.trim().parse().ok())
                {
                    m.insert(key.into(), v);
                }
            }
            m.retain(|k, _| !k.starts_with("total_") && !k.starts_with("hierarchical_"));
            if let Some(v) = m.remove("cache") {
                m.insert("file".into(), v);
            }
        }
        m
    }
}

pub fn write(p: &Path, s: &str) -> Result<(), String> {
    fs::write(p, s).map_err(|e| format!("{}: {e}", p.display()))
}

/// `key value` lines.
pub fn keyed(p: &Path) -> BTreeMap<String, i64> {
    fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// The device queue's read_ahead_kb, restored on drop.
pub struct Readahead {
    path: PathBuf,
    old: String,
}

impl Readahead {
    pub fn set(dir: &Path, kb: u64) -> Result<Readahead, String> {
        let dev = fs::metadata(dir).map_err(|e| e.to_string())?.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let path = [
            sys.join("queue/read_ahead_kb"),
            sys.join("../queue/read_ahead_kb"),
        ]
        .into_iter()
        .find(|p| p.exists())
        .ok_or(format!("{}: no queue/read_ahead_kb", sys.display()))?;
        let old = fs::read_to_string(&path).map_err(|e| e.to_string())?;
        write(&path, &kb.to_string())?;
        Ok(Readahead { path, old })
    }
}

impl Drop for Readahead {
    fn drop(&mut self) {
        let _ = fs::write(&self.path, self.old.trim());
    }
}

/// /proc/vmstat and the cgroup's memory.stat, read together.
pub type Snapshot = (BTreeMap<String, i64>, BTreeMap<String, i64>);

/// The keys whose value moved from `before` to `after`, with the difference.
pub fn deltas(
    before: &BTreeMap<String, i64>,
    after: &BTreeMap<String, i64>,
) -> BTreeMap<String, i64> {
    after
        .iter()
        .filter_map(|(k, v)| {
            let d = v - before.get(k).copied().unwrap_or(0);
            (d != 0).then(|| (k.clone(), d))
        })
        .collect()
}

/// The report's (/proc/vmstat deltas, memory.stat): the cgroup's event counters (`pg*`,
/// `workingset_*`) as deltas, its sizes (file, active_file, …) as they ended.
pub fn report_stats(
    before: &Snapshot,
    after: &Snapshot,
) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let mut cg = after.1.clone();
    for (k, v) in deltas(&before.1, &after.1) {
        if k.starts_with("pg") || k.starts_with("workingset_") {
            cg.insert(k, v);
        }
    }
    (deltas(&before.0, &after.0), cg)
}

/// The running kernel's release (/proc/sys/kernel/osrelease).
pub fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// A tracefs capture of the events of [`mmsim::mm::tracepoints::Tracepoints`]: the
/// events enabled and the buffer cleared at the start; read, summed and disabled by
/// [`Capture::finish`] (or disabled when dropped).
pub struct Capture {
    root: PathBuf,
    enabled: Vec<PathBuf>,
}

impl Capture {
    pub fn start() -> Result<Capture, String> {
        let root = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.join("trace").exists())
            .ok_or("--tracepoints: tracefs is not mounted (/sys/kernel/tracing)")?;
        let w = |p: &Path, v: &str| {
            fs::write(p, v).map_err(|e| format!("--tracepoints: {}: {e}", p.display()))
        };
        w(&root.join("tracing_on"), "0")?;
        w(&root.join("buffer_size_kb"), "65536")?;
        w(&root.join("trace"), "")?;
        let mut c = Capture {
            root: root.clone(),
            enabled: Vec::new(),
        };
        for e in mmsim::mm::tracepoints::Tracepoints::EVENTS {
            let p = root.join("events").join(e).join("enable");
            if !p.exists() {
                eprintln!("--tracepoints: this kernel has no {e} event");
                continue;
            }
            w(&p, "1")?;
            c.enabled.push(p);
        }
        w(&root.join("tracing_on"), "1")?;
        Ok(c)
    }

    /// Stop, sum the captured events and the lost ones, disable and clear.
    pub fn finish(self) -> Result<(mmsim::mm::tracepoints::Tracepoints, u64), String> {
        let _ = fs::write(self.root.join("tracing_on"), "0");
        let path = self.root.join("trace");
        // Line by line: the buffer holds up to 64 MiB per CPU of text, and the replay
        // still sits in its cgroup, whose limit it must not be charged for.
        let file = fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut t = mmsim::mm::tracepoints::Tracepoints::default();
        let mut lost = 0u64;
        for line in std::io::BufRead::lines(std::io::BufReader::new(file)) {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let line = line.as_str();
            if !t.add_trace_line(line) {
                // "CPU:1 [LOST 123 EVENTS]"
                if let Some(n) = line
                    .split_once("[LOST ")
                    .and_then(|(_, r)| r.split_whitespace().next())
                {
                    lost += n.parse::<u64>().unwrap_or(0);
                }
            }
        }
        Ok((t, lost))
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = fs::write(self.root.join("tracing_on"), "0");
        for p in &self.enabled {
            let _ = fs::write(p, "0");
        }
        let _ = fs::write(self.root.join("trace"), "");
    }
}
