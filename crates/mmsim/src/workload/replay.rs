//! `replay`: a trace (`crate::trace`) replayed through the page cache — block traces on
//! one file per device, object traces on one file per object (or one range of pages per
//! object in a single file), read with `pread` (readahead included) and written with
//! `pwrite`, or both through shared mappings (`mmap = true`). `docs/replay.md`
//! has the mapping rules, the options and what the figures mean.
//!
//! # Plan, program, observer
//!
//! 1. [`plan`] reads the trace once when the scenario is loaded: it validates every record
//!    (a bad trace is a scenario error, exit status 2, before anything runs) and lays the
//!    trace out on files ([`Layout`]): their paths and sizes, which the scenario then
//!    declares as `[[files]]` with data on the device.
//! 2. [`Replay`], the program, streams the trace again (one record in memory) and turns
//!    each request into one op (`Pread` or `Touch`), sleeping first when timestamps pace
//!    the replay.
//! 3. Whether a request hit the page cache is a kernel fact the program cannot see, so an
//!    observer outside the kernel, `ReplayObserver` (installed by [`ReplayDriver`] as the
//!    simulation's [`crate::sim::StepObserver`]), looks the pages of the request the
//!    program published as next (`Shared::pending`) up in the radix tree right before the
//!    program is asked for its next op, in the step that issues it (read-only: nothing is
//!    charged, nothing changes), and hands the result to the program through a shared
//!    cell: the lookup sees the state the request will meet.
//!    Without the driver the program still runs; its hit figures are then absent.
//!
//! The program and its observer find each other through a thread-local list filled by
//! [`Replay::new`] and drained by [`ReplayDriver::attach`] right after `Sim::new`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

use serde::Serialize;

use super::{Op, OpResult, Program};
use crate::trace::{Format, TraceKind, TraceReader, PAGE_SIZE};

/// How object traces map onto files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectMap {
    /// Each object is a file of its size.
    File,
    /// Each object is a page-aligned range of one file, in order of first appearance.
    Range,
}

/// Where an object's pages are: first page, pages, object index. Its file is the object
/// index with a file per object (`Layout::files` in first-appearance order), the one file
/// (index 0) with ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjLoc {
    /// First page of the object in its file.
    pub first_page: u64,
    /// Pages of the object.
    pub pages: u64,
    /// Object index (first-appearance order).
    pub index: u64,
}

/// The trace laid out on files (the first pass).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Files: absolute path (shared with the open calls) and size in bytes.
    pub files: Vec<(Arc<str>, u64)>,
    /// Block traces: device id → file index.
    pub devs: HashMap<u64, u32, rustc_hash::FxBuildHasher>,
    /// Object traces: object id → where it lives (emptied when `dense_objs` holds them).
    pub objs: HashMap<u64, ObjLoc, rustc_hash::FxBuildHasher>,
    /// Object traces whose ids are small integers, most of them used (`0..n` for about
    /// `n` objects, as txt traces of generated workloads have): the locations indexed by
    /// id, an absent id with 0 pages. One load per request instead of a hash probe.
    pub dense_objs: Vec<ObjLoc>,
    /// Distinct objects (object traces).
    pub objects: u64,
    /// Requests the replay will issue (after `limit`).
    pub requests: u64,
    /// Of which writes.
    pub writes: u64,
    /// Of which deletes (object traces).
    pub deletes: u64,
    /// Time of the first request, ns.
    pub t0_ns: u64,
}

/// Parameters of the `replay` program (`docs/scenarios.md`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplaySpec {
    /// The trace file on the host.
    pub trace: String,
    /// The format, canonical spelling (`Format::spec`).
    pub format: String,
    /// Directory (under a blockfs mount) holding the replay's files.
    pub dir: String,
    /// Access through shared mappings (else pread and pwrite).
    pub mmap: bool,
    /// Object files stay open after their first request (an fd cache), else each request
    /// opens and closes its object's file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_open: bool,
    /// Sleep until each request's timestamp (virtual time), else back to back.
    pub pace: bool,
    /// Object traces: one file per object or one range per object.
    pub object_map: ObjectMap,
    /// Object size for traces without sizes (or size 0), bytes.
    pub object_size: u64,
    /// Block traces: minimum file size per device, bytes (the first pass sizes each file to
    /// the highest offset the trace reaches).
    pub size: u64,
    /// Replay at most this many requests.
    pub limit: u64,
    /// Requests per miss-ratio window (0: requests/100, at least 1).
    pub window: u64,
    /// The first pass's result.
    #[serde(skip)]
    pub layout: Arc<Layout>,
}

/// Options of [`plan`] (what the scenario's keys give).
#[derive(Clone, Debug)]
pub struct PlanOptions {
    /// Directory of the files.
    pub dir: String,
    /// Object mapping.
    pub object_map: ObjectMap,
    /// Default object size, bytes.
    pub object_size: u64,
    /// Minimum block file size, bytes.
    pub size: u64,
    /// Request limit.
    pub limit: u64,
}

impl Layout {
    /// Where object `id` lives (None when the plan did not see it).
    #[inline(always)]
    pub fn obj(&self, id: u64) -> Option<ObjLoc> {
        if self.dense_objs.is_empty() {
            return self.objs.get(&id).copied();
        }
        let loc = *self.dense_objs.get(usize::try_from(id).ok()?)?;
        (loc.pages > 0).then_some(loc)
    }

    /// Index the objects by id when the ids are dense enough (at most twice as many ids
    /// as objects, plus a little): the hash map is dropped for the vector.
    fn index_dense(&mut self) {
        let n = self.objs.len() as u64;
        let Some(max) = self.objs.keys().copied().max() else {
            return;
        };
        if max >= 2 * n + 1024 {
            return;
        }
        let absent = ObjLoc {
            first_page: 0,
            pages: 0,
            index: 0,
        };
        let mut dense = vec![absent; max as usize + 1];
        for (id, loc) in self.objs.drain() {
            dense[id as usize] = loc;
        }
        self.dense_objs = dense;
        self.objs = HashMap::default();
    }
}

/// Request length in pages of a block request at `offset` of `len` bytes.
pub(crate) fn block_pages(offset: u64, len: u64) -> (u64, u64) {
    let first = offset / PAGE_SIZE;
    let last = (offset + len.max(1) - 1) / PAGE_SIZE;
    (first, last - first + 1)
}

/// The first pass: read the whole trace, validate it and lay it out on files.
pub fn plan(path: &str, format: &Format, o: &PlanOptions) -> Result<Layout, String> {
    let (reader, _) =
        TraceReader::open(Path::new(path), Some(format)).map_err(|e| e.to_string())?;
    let mut l = Layout::default();
    let kind = format.kind();
    let mut dev_end: Vec<u64> = Vec::new();
    let mut range_cursor: u64 = 0;
    let mut name = String::new();
    if kind == TraceKind::Object && o.object_map == ObjectMap::Range {
        l.files.push((format!("{}/objects", o.dir).into(), 0));
    }
    let mut reader = reader;
    loop {
        let r = match reader.next_buffered() {
            Some(r) => r,
            None => match reader.next() {
                Some(r) => r.map_err(|e| e.to_string())?,
                None => break,
            },
        };
        if l.requests >= o.limit {
            break;
        }
        if l.requests % 65_536 == 0 {
            RECORDS_PLANNED.fetch_add(
                u64::from(l.requests > 0) * 65_536,
                std::sync::atomic::Ordering::Relaxed,
            );
        }
        if l.requests == 0 {
            l.t0_ns = r.time_ns;
        }
        l.requests += 1;
        l.writes += u64::from(r.write);
        l.deletes += u64::from(r.delete);
        match kind {
            TraceKind::Block => {
                let n = l.devs.len() as u32;
                let f = *l.devs.entry(r.id).or_insert(n);
                if f as usize == dev_end.len() {
                    dev_end.push(0);
                }
                let end = r.offset.checked_add(r.len.max(1)).ok_or_else(|| {
                    format!("{path}: record {}: offset + size overflows", l.requests)
                })?;
                dev_end[f as usize] = dev_end[f as usize].max(end);
            }
            TraceKind::Object => {
                let index = l.objs.len() as u64;
                let std::collections::hash_map::Entry::Vacant(slot) = l.objs.entry(r.id) else {
                    continue;
                };
                let bytes = if r.len == 0 { o.object_size } else { r.len };
                let pages = bytes.div_ceil(PAGE_SIZE).max(1);
                let loc = match o.object_map {
                    ObjectMap::File => {
                        // The path is written into one reused buffer, then shared.
                        name.clear();
                        write!(name, "{}/o{index}", o.dir).expect("a String takes any text");
                        l.files.push((name.as_str().into(), pages * PAGE_SIZE));
                        debug_assert_eq!(l.files.len() as u64, index + 1, "a file per object");
                        ObjLoc {
                            first_page: 0,
                            pages,
                            index,
                        }
                    }
                    ObjectMap::Range => {
                        let loc = ObjLoc {
                            first_page: range_cursor,
                            pages,
                            index,
                        };
                        range_cursor += pages;
                        loc
                    }
                };
                slot.insert(loc);
            }
        }
    }
    if l.requests == 0 {
        return Err(format!("{path}: the trace holds no requests"));
    }
    match kind {
        TraceKind::Block => {
            let mut devs: Vec<(u64, u32)> = l.devs.iter().map(|(k, v)| (*k, *v)).collect();
            devs.sort_by_key(|(_, v)| *v);
            for (i, end) in dev_end.iter().enumerate() {
                let size = end.div_ceil(PAGE_SIZE).max(o.size.div_ceil(PAGE_SIZE)) * PAGE_SIZE;
                l.files.push((format!("{}/disk{i}", o.dir).into(), size));
            }
        }
        TraceKind::Object => {
            if o.object_map == ObjectMap::Range {
                l.files[0].1 = range_cursor * PAGE_SIZE;
            }
            l.objects = l.objs.len() as u64;
            l.index_dense();
        }
    }
    Ok(l)
}

// ---------------------------------------------------------------------------------------
// What the program and the observer share
// ---------------------------------------------------------------------------------------

/// The next request, published by the program for the observer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pending {
    /// Request sequence number.
    pub seq: u64,
    /// Its file (index into `Layout::files`).
    pub file: usize,
    /// First page.
    pub first_page: u64,
    /// Pages.
    pub pages: u64,
}

/// Counters of one replay task.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReplayCounters {
    /// Requests issued.
    pub requests: u64,
    /// Of which writes.
    pub writes: u64,
    /// Of which deletes (object traces): the object's pages dropped, not a lookup.
    pub deletes: u64,
    /// Requests whose page-cache state was observed (all of them under the driver).
    pub observed: u64,
    /// Pages requested.
    pub pages: u64,
    /// Pages not in the page cache when requested.
    pub page_misses: u64,
    /// Bytes requested.
    pub bytes: u64,
    /// Bytes of the missed pages (pro rata per request).
    pub byte_misses: u64,
    /// Requests with at least one missed page.
    pub request_misses: u64,
    /// Hits on pages never requested before: brought in by readahead (or read-around).
    pub readahead_used: u64,
    /// Miss ratio over time: (requests so far, page miss ratio of the window).
    pub windows: Vec<(u64, f64)>,
    /// Requests at which the replay stopped with an error, and the error.
    pub error: Option<String>,
}

/// What the program and its observer exchange at every step: plain cells, read and
/// written without a `RefCell` borrow (the program and the observer run one after the
/// other on one thread and hold no reference into them).
#[derive(Default)]
pub struct Hot {
    /// The next request, for the observer to look up.
    pub pending: Cell<Option<Pending>>,
    /// The program's next op may issue the pending request: only then does the observer
    /// look it up (an observation counts only when made right before the issuing step).
    pub pending_may_issue: Cell<bool>,
    /// The observation: the sequence number it is for and each page's residency.
    pub observed_seq: Cell<Option<u64>>,
    /// Residency of the pending request's pages when it has at most
    /// [`RESIDENT_WORD_PAGES`]: bit i for its page i.
    pub resident_word: Cell<u64>,
    /// Residency of a longer request's pages (taken and put back whole).
    pub resident: Cell<Vec<bool>>,
    /// Virtual time at the observation, ps (divided only where pacing needs ns).
    pub now_ps: Cell<u64>,
}

impl std::fmt::Debug for Hot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let resident = self.resident.take();
        let r = f
            .debug_struct("Hot")
            .field("pending", &self.pending.get())
            .field("pending_may_issue", &self.pending_may_issue.get())
            .field("observed_seq", &self.observed_seq.get())
            .field("resident_word", &self.resident_word.get())
            .field("resident", &resident)
            .field("now_ps", &self.now_ps.get())
            .finish();
        self.resident.set(resident);
        r
    }
}

/// Requests of at most this many pages have their residency observed in one word
/// (`Hot::resident_word`), longer ones page by page (`Hot::resident`).
pub const RESIDENT_WORD_PAGES: u64 = 64;

/// The cell the program and its observer share.
#[derive(Debug, Default)]
pub struct Shared {
    /// The per-step exchange.
    pub hot: Rc<Hot>,
    /// An observer is attached.
    pub attached: bool,
    /// The counters.
    pub counters: ReplayCounters,
}

/// Requests replayed so far by every replay driver of this process, added after each
/// chunk of engine steps: what `mmsim replay`'s progress bar shows (nothing in a run
/// reads it).
pub static REQUESTS_REPLAYED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Records the first passes ([`plan`]) of this process have read, in steps of 65,536:
/// the spinner `mmsim replay` shows while it reads a trace before running it.
pub static RECORDS_PLANNED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

thread_local! {
    static PROBES: RefCell<Vec<Rc<RefCell<Shared>>>> = const { RefCell::new(Vec::new()) };
}

// ---------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Opening (and mapping) the files of block and range layouts, index `i`.
    Setup,
    /// Issuing requests.
    Run,
    /// Finished.
    Done,
}

/// What an open file has: descriptor and (when mapped) the mapping's address.
#[derive(Clone, Copy, Debug, Default)]
struct OpenState {
    fd: Option<u32>,
    addr: Option<std::num::NonZeroU64>,
}

/// The replay program state.
pub struct Replay {
    spec: ReplaySpec,
    kind: TraceKind,
    shared: Rc<RefCell<Shared>>,
    /// `shared`'s per-step cells.
    hot: Rc<Hot>,
    reader: Option<TraceReader>,
    phase: Phase,
    /// Per file: descriptor and mapping.
    open: Vec<OpenState>,
    /// Per file: its path as the opens hand it out (made at the first open; the layout's
    /// `Arc` is shared between threads, the op's `Rc` is not).
    paths: Vec<Option<super::OpenPath>>,
    /// Setup cursor (files opened so far) and what is being done to the current one.
    setup_file: usize,
    /// The request being prepared or issued, and its placement.
    cur: Option<Placement>,
    /// The request read ahead (published as pending).
    next: Option<Placement>,
    /// The current request's sleep was done.
    slept: bool,
    /// Awaiting the result of an open (file index) or mmap (file index).
    awaiting: Option<Await>,
    /// The result of the current request is outstanding.
    in_flight: bool,
    seq: u64,
    /// Pages requested before, per file (block and range layouts), one bit per page.
    seen_pages: Vec<PageBits>,
    /// Objects requested before (file layout), one bit per object.
    seen_objs: Vec<u64>,
    /// Requests issued before the current window and misses in it.
    win_pages: u64,
    win_misses: u64,
    win_requests: u64,
    /// Virtual time the first request was issued at, ns (pacing).
    start_ns: Option<u64>,
    window: u64,
    /// The observation of the request in flight, taken when it was issued.
    cur_observed: bool,
    cur_resident_word: u64,
    cur_resident: Vec<bool>,
    /// Requests read from the trace so far.
    read_count: u64,
    /// Requests to read at most (the spec's limit, at most the plan's requests).
    limit: u64,
    /// Close this file after the request in flight (object files read with pread).
    close_after: Option<usize>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Await {
    Open(usize),
    Map(usize),
    Close,
}

/// A request placed on a file (with what of the trace record the program still needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The record's time, ns (pacing).
    pub time_ns: u64,
    /// A write (else a read).
    pub write: bool,
    /// A delete: the object's pages are dropped (POSIX_FADV_DONTNEED), nothing is read.
    pub delete: bool,
    /// The file (index into `Layout::files`).
    pub file: usize,
    /// First page and pages of the request in its file.
    pub first_page: u64,
    /// Pages.
    pub pages: u64,
    /// Byte position and length of the pread or pwrite.
    pub pos: u64,
    /// Bytes.
    pub len: u64,
    /// Object index (file layout), for the seen bit.
    pub obj: Option<u64>,
}

impl Placement {
    /// Where trace record `r` lands on layout `l` (`kind`'s mapping rules, docs/replay.md):
    /// a block request on its device's file at its offset, an object on its file or range.
    /// Err when the plan does not know the record's device or object.
    #[inline(always)]
    pub fn of(
        l: &Layout,
        kind: TraceKind,
        object_map: ObjectMap,
        r: &crate::trace::Request,
    ) -> Result<Placement, &'static str> {
        Ok(match kind {
            TraceKind::Block => {
                let file = *l.devs.get(&r.id).ok_or("device not in the plan")? as usize;
                let (first_page, pages) = block_pages(r.offset, r.len);
                Placement {
                    time_ns: r.time_ns,
                    write: r.write,
                    delete: false,
                    file,
                    first_page,
                    pages,
                    pos: r.offset,
                    len: r.len.max(1),
                    obj: None,
                }
            }
            TraceKind::Object => {
                let loc = l.obj(r.id).ok_or("object not in the plan")?;
                Placement {
                    time_ns: r.time_ns,
                    write: r.write,
                    delete: r.delete,
                    file: match object_map {
                        ObjectMap::File => loc.index as usize,
                        ObjectMap::Range => 0,
                    },
                    first_page: loc.first_page,
                    pages: loc.pages,
                    pos: loc.first_page * PAGE_SIZE,
                    len: loc.pages * PAGE_SIZE,
                    obj: (object_map == ObjectMap::File).then_some(loc.index),
                }
            }
        })
    }
}

/// A mapping's address (never 0: the kernel maps nothing at 0).
fn nonzero_addr(a: u64) -> std::num::NonZeroU64 {
    std::num::NonZeroU64::new(a).expect("a mapping at address 0")
}

fn bit(v: &[u64], i: u64) -> bool {
    v.get((i / 64) as usize)
        .is_some_and(|w| w & (1 << (i % 64)) != 0)
}

fn set_bit(v: &mut Vec<u64>, i: u64) {
    let w = (i / 64) as usize;
    if v.len() <= w {
        v.resize(w + 1, 0);
    }
    v[w] |= 1 << (i % 64);
}

/// A bit per page of a file: a flat bitmap for the first `DENSE_WORDS` words (a million
/// pages, 4 GiB), and the words beyond it that have a page set in a hash. An object or a
/// small file is a few flat words; a block trace's device file of terabytes, touched here
/// and there, costs what it touches (a flat bitmap up to the highest page touched costs
/// 300 MB for a request at 10 TiB).
#[derive(Clone, Debug, Default)]
struct PageBits {
    dense: Vec<u64>,
    sparse: rustc_hash::FxHashMap<u64, u64>,
}

impl PageBits {
    /// Words in the flat part, at most.
    const DENSE_WORDS: usize = 1 << 14;

    fn get(&self, i: u64) -> bool {
        let w = (i / 64) as usize;
        let word = match self.dense.get(w) {
            Some(x) => *x,
            None if w < Self::DENSE_WORDS => 0,
            None => self.sparse.get(&(i / 64)).copied().unwrap_or(0),
        };
        word & (1 << (i % 64)) != 0
    }

    /// Set the pages `first .. first + n`, a word at a time.
    fn set_range(&mut self, first: u64, n: u64) {
        let end = first + n;
        let mut i = first;
        while i < end {
            let hi = end.min((i / 64 + 1) * 64);
            // Bits i % 64 .. (hi - 1) % 64 of the word.
            let bits = (hi - i) as u32;
            let mask = if bits == 64 {
                u64::MAX
            } else {
                ((1u64 << bits) - 1) << (i % 64)
            };
            let w = (i / 64) as usize;
            if w < Self::DENSE_WORDS {
                if self.dense.len() <= w {
                    self.dense.resize(w + 1, 0);
                }
                self.dense[w] |= mask;
            } else {
                *self.sparse.entry(w as u64).or_insert(0) |= mask;
            }
            i = hi;
        }
    }
}

impl Replay {
    /// A replay as the spec says; registers its shared cell for the observer.
    pub fn new(spec: ReplaySpec) -> Replay {
        let shared = Rc::new(RefCell::new(Shared::default()));
        let hot = shared.borrow().hot.clone();
        PROBES.with(|p| p.borrow_mut().push(shared.clone()));
        let format = Format::parse(&spec.format).expect("validated when the scenario was read");
        let kind = format.kind();
        let nfiles = spec.layout.files.len();
        let limit = spec.limit.min(spec.layout.requests);
        let window = if spec.window > 0 {
            spec.window
        } else {
            (spec.layout.requests / 100).max(1)
        };
        Replay {
            kind,
            shared,
            hot,
            reader: None,
            phase: Phase::Setup,
            open: vec![OpenState::default(); nfiles],
            paths: vec![None; nfiles],
            setup_file: 0,
            cur: None,
            next: None,
            slept: false,
            awaiting: None,
            in_flight: false,
            seq: 0,
            seen_pages: Vec::new(),
            seen_objs: Vec::new(),
            win_pages: 0,
            win_misses: 0,
            win_requests: 0,
            start_ns: None,
            window,
            spec,
            cur_observed: false,
            cur_resident_word: 0,
            cur_resident: Vec::new(),
            read_count: 0,
            limit,
            close_after: None,
        }
    }

    /// The shared cell (tests).
    pub fn shared(&self) -> Rc<RefCell<Shared>> {
        self.shared.clone()
    }

    /// File `f`'s path for an open.
    #[inline]
    fn path(&mut self, f: usize) -> super::OpenPath {
        self.paths[f]
            .get_or_insert_with(|| (&*self.spec.layout.files[f].0).into())
            .clone()
    }

    /// Requests go through a shared mapping (`mmap = true`) instead of pread / pwrite.
    fn needs_map(&self) -> bool {
        self.spec.mmap
    }

    #[cold]
    #[inline(never)]
    fn fail(&mut self, msg: String) -> Op {
        self.shared.borrow_mut().counters.error = Some(msg);
        self.phase = Phase::Done;
        Op::Exit
    }

    /// Read the next request and place it.
    #[inline(always)]
    fn read_next(&mut self) -> Result<Option<Placement>, String> {
        if self.read_count >= self.limit {
            return Ok(None);
        }
        self.read_count += 1;
        let r = match self.reader.as_mut().and_then(TraceReader::next_buffered) {
            Some(r) => r,
            None => match self.read_slow()? {
                Some(r) => r,
                None => return Ok(None),
            },
        };
        let p = Placement::of(&self.spec.layout, self.kind, self.spec.object_map, &r)?;
        Ok(Some(p))
    }

    /// `read_next`'s request when none is decoded ahead: the trace opened at the first
    /// request, the next batch decoded, the end or an error.
    #[cold]
    #[inline(never)]
    fn read_slow(&mut self) -> Result<Option<crate::trace::Request>, String> {
        if self.reader.is_none() {
            let format = Format::parse(&self.spec.format).map_err(|e| e.to_string())?;
            let (r, _) = TraceReader::open(Path::new(&self.spec.trace), Some(&format))
                .map_err(|e| e.to_string())?;
            self.reader = Some(r);
        }
        match self.reader.as_mut().expect("opened").next() {
            Some(r) => r.map(Some).map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }

    /// Publish `self.next` for the observer (when its file is open).
    fn publish_next(&mut self) {
        self.hot.pending.set(self.next.map(|p| Pending {
            seq: self.seq + 1,
            file: p.file,
            first_page: p.first_page,
            pages: p.pages,
        }));
    }

    /// Publish the current (not yet issued) request for the observer.
    fn publish_cur(&mut self) {
        self.hot.pending.set(self.cur.map(|p| Pending {
            seq: self.seq + 1,
            file: p.file,
            first_page: p.first_page,
            pages: p.pages,
        }));
    }

    /// Account the request that just completed (sequence `self.seq`).
    fn account(&mut self, p: Placement) {
        let mut s = self.shared.borrow_mut();
        if p.delete {
            // Not a lookup: no pages requested, no miss, not in the windows.
            s.counters.requests += 1;
            s.counters.deletes += 1;
            return;
        }
        let by_word = p.pages <= RESIDENT_WORD_PAGES;
        let observed = self.cur_observed && (by_word || self.cur_resident.len() as u64 == p.pages);
        let c_pages = p.pages;
        let mut misses = c_pages;
        let mut ra_used = 0;
        if observed && by_word {
            let mut w = self.cur_resident_word;
            misses = c_pages - u64::from(w.count_ones());
            // Resident pages never requested before came in by readahead.
            while w != 0 {
                let i = u64::from(w.trailing_zeros());
                w &= w - 1;
                let seen = match p.obj {
                    Some(o) => bit(&self.seen_objs, o),
                    None => self
                        .seen_pages
                        .get(p.file)
                        .is_some_and(|v| v.get(p.first_page + i)),
                };
                ra_used += u64::from(!seen);
            }
        } else if observed {
            misses = 0;
            for (i, res) in self.cur_resident.iter().enumerate() {
                let page = p.first_page + i as u64;
                if !res {
                    misses += 1;
                } else {
                    let seen = match p.obj {
                        Some(o) => bit(&self.seen_objs, o),
                        None => self.seen_pages.get(p.file).is_some_and(|v| v.get(page)),
                    };
                    if !seen {
                        ra_used += 1;
                    }
                }
            }
        }
        if p.obj.is_none() {
            if self.seen_pages.len() <= p.file {
                self.seen_pages.resize(p.file + 1, PageBits::default());
            }
            self.seen_pages[p.file].set_range(p.first_page, p.pages);
        } else if let Some(o) = p.obj {
            set_bit(&mut self.seen_objs, o);
        }
        let c = &mut s.counters;
        c.requests += 1;
        c.writes += u64::from(p.write);
        c.observed += u64::from(observed);
        c.pages += c_pages;
        c.page_misses += misses;
        c.bytes += p.len;
        // Pro rata; a request missed entirely or not at all needs no division.
        c.byte_misses += if misses == 0 {
            0
        } else if misses == c_pages {
            p.len
        } else {
            (u128::from(p.len) * u128::from(misses) / u128::from(c_pages.max(1))) as u64
        };
        c.request_misses += u64::from(misses > 0);
        c.readahead_used += ra_used;
        self.win_pages += c_pages;
        self.win_misses += misses;
        self.win_requests += 1;
        if self.win_requests >= self.window {
            let ratio = self.win_misses as f64 / self.win_pages.max(1) as f64;
            c.windows.push((c.requests, ratio));
            if c.windows.len() > 1000 {
                // Constant memory: halve the resolution.
                let merged: Vec<(u64, f64)> = c
                    .windows
                    .chunks(2)
                    .map(|w| {
                        (
                            w[w.len() - 1].0,
                            w.iter().map(|x| x.1).sum::<f64>() / w.len() as f64,
                        )
                    })
                    .collect();
                c.windows = merged;
                self.window *= 2;
            }
            self.win_pages = 0;
            self.win_misses = 0;
            self.win_requests = 0;
        }
    }

    fn setup_op(&mut self, last: &OpResult) -> Op {
        // Files of block and range layouts are opened (and mapped) up front.
        match self.awaiting.take() {
            Some(Await::Open(f)) => match last {
                OpResult::Fd(fd) => {
                    self.open[f].fd = Some(*fd);
                    if self.needs_map() {
                        self.awaiting = Some(Await::Map(f));
                        return self.map_op(f);
                    }
                    self.setup_file += 1;
                }
                other => {
                    return self.fail(format!("open {}: {other:?}", self.spec.layout.files[f].0))
                }
            },
            Some(Await::Map(f)) => match last {
                OpResult::Addr(a) => {
                    self.open[f].addr = Some(nonzero_addr(*a));
                    self.setup_file += 1;
                }
                other => {
                    return self.fail(format!("mmap {}: {other:?}", self.spec.layout.files[f].0))
                }
            },
            Some(Await::Close) | None => {}
        }
        let upfront = self.kind == TraceKind::Block || self.spec.object_map == ObjectMap::Range;
        if upfront && self.setup_file < self.open.len() {
            let f = self.setup_file;
            self.awaiting = Some(Await::Open(f));
            return Op::Open {
                path: self.path(f),
                create: false,
                truncate: false,
            };
        }
        self.phase = Phase::Run;
        // Read the first request now and publish it: the observer looks it up before
        // the step that issues it.
        self.cur = match self.read_next() {
            Ok(x) => x,
            Err(e) => return self.fail(e),
        };
        self.publish_cur();
        Op::TimerStart("replay".into())
    }

    fn map_op(&self, f: usize) -> Op {
        Op::Mmap {
            path: Some(self.spec.layout.files[f].0.to_string()),
            len: self.spec.layout.files[f].1,
            offset: 0,
            prot: 3,
            shared: true,
        }
    }

    fn run_op(&mut self, last: &OpResult) -> Op {
        // The result of an open or mmap of an object's file.
        match self.awaiting.take() {
            Some(Await::Open(f)) => match last {
                OpResult::Fd(fd) => self.open[f].fd = Some(*fd),
                other => {
                    return self.fail(format!("open {}: {other:?}", self.spec.layout.files[f].0))
                }
            },
            Some(Await::Close) => {}
            Some(Await::Map(f)) => match last {
                OpResult::Addr(a) => self.open[f].addr = Some(nonzero_addr(*a)),
                other => {
                    return self.fail(format!("mmap {}: {other:?}", self.spec.layout.files[f].0))
                }
            },
            None => {
                if self.in_flight {
                    self.in_flight = false;
                    if let OpResult::Err(e) = last {
                        let msg = format!("request {}: {}", self.seq, e.name());
                        return self.fail(msg);
                    }
                    let p = self.cur.take().expect("a request in flight");
                    self.account(p);
                    if let Some(f) = self.close_after.take() {
                        let fd = self.open[f].fd.take().expect("open");
                        self.awaiting = Some(Await::Close);
                        // The next call issues the next request only when its file is
                        // open (else its open comes first).
                        let may_issue = self.next.is_none_or(|p| self.open[p.file].fd.is_some());
                        self.hot.pending_may_issue.set(may_issue);
                        return Op::Close { fd };
                    }
                }
            }
        }
        if self.cur.is_none() {
            self.cur = match self.next.take() {
                Some(x) => Some(x),
                None => match self.read_next() {
                    Ok(x) => x,
                    Err(e) => return self.fail(e),
                },
            };
            self.slept = false;
            let Some(_) = self.cur else {
                self.phase = Phase::Done;
                self.hot.pending.set(None);
                return Op::TimerStop("replay".into());
            };
        }
        let p = self.cur.expect("a current request");
        // Open and map its file first when needed (object-per-file layout).
        if self.open[p.file].fd.is_none() {
            self.awaiting = Some(Await::Open(p.file));
            return Op::Open {
                path: self.path(p.file),
                create: false,
                truncate: false,
            };
        }
        if self.needs_map() && self.open[p.file].addr.is_none() {
            self.awaiting = Some(Await::Map(p.file));
            return self.map_op(p.file);
        }
        // Pacing: sleep until the request's time.
        if self.spec.pace && !self.slept {
            self.slept = true;
            let now = self.hot.now_ps.get() / 1000;
            let start = *self.start_ns.get_or_insert(now);
            let due = start + p.time_ns.saturating_sub(self.spec.layout.t0_ns);
            if due > now {
                return Op::Sleep { ns: due - now };
            }
        }
        // Issue it, and publish the one after for the observer.
        self.seq += 1;
        self.in_flight = true;
        self.cur_observed = self.hot.observed_seq.get() == Some(self.seq);
        if self.cur_observed {
            if p.pages <= RESIDENT_WORD_PAGES {
                self.cur_resident_word = self.hot.resident_word.get();
            } else {
                self.cur_resident = self
                    .hot
                    .resident
                    .replace(std::mem::take(&mut self.cur_resident));
            }
        }
        self.next = match self.read_next() {
            Ok(x) => x,
            Err(e) => {
                self.shared.borrow_mut().counters.error = Some(e);
                None
            }
        };
        self.publish_next();
        let fd = self.open[p.file].fd.expect("open");
        if !self.needs_map()
            && !self.spec.keep_open
            && p.obj.is_some()
            && self.open[p.file].addr.is_none()
        {
            // An object file is opened, read and closed per request, as a server does: a
            // new struct file each time, so a re-read of the same page is marked accessed
            // (a re-read through one open file at the same position is not: the prev_pos
            // rule of do_generic_file_read and filemap_read — what `keep_open` shows).
            self.close_after = Some(p.file);
        }
        // Not the next call when it closes this request's file first.
        self.hot.pending_may_issue.set(self.close_after.is_none());
        if p.delete {
            // A key-value cache's delete: the object's clean pages leave the page cache
            // (invalidate_mapping_pages; dirty ones are written first, and mapped ones stay).
            Op::Fadvise {
                fd,
                offset: p.pos,
                len: p.len,
                advice: super::Fadvice::Dontneed,
            }
        } else if self.needs_map() {
            let addr = self.open[p.file].addr.expect("mapped").get();
            Op::Touch {
                addr: addr + p.first_page * PAGE_SIZE,
                len: p.pages * PAGE_SIZE,
                stride: PAGE_SIZE,
                write: p.write,
            }
        } else if p.write {
            Op::Pwrite {
                fd,
                len: p.len,
                pos: p.pos,
            }
        } else {
            Op::Pread {
                fd,
                len: p.len,
                pos: p.pos,
            }
        }
    }
}

impl Program for Replay {
    /// The next op. Whether the call after this one may issue the pending request (else
    /// the observer need not look it up before it) is set here, true, and cleared by
    /// `run_op` where it returns an op after which it is not: a request that closes its
    /// file next, and that close when the next request's file is not open (its open comes
    /// first).
    fn next_op(&mut self, last: &OpResult) -> Op {
        self.hot.pending_may_issue.set(true);
        match self.phase {
            Phase::Setup => self.setup_op(last),
            Phase::Run => self.run_op(last),
            Phase::Done => Op::Exit,
        }
    }
}

// ---------------------------------------------------------------------------------------
// The observer
// ---------------------------------------------------------------------------------------

/// Runs a simulation with the replay tasks' page-cache observer installed
/// (`ReplayObserver`) and reports on the replays.
pub struct ReplayDriver {
    tasks: Vec<(crate::sched::TaskId, Rc<RefCell<Shared>>)>,
    host_start: std::time::Instant,
    /// The largest page cache seen (nr_file_pages), pages.
    pub cache_pages_max: u64,
    specs: Vec<ReplaySpec>,
    /// Per task, the inode of each of its files (resolved once, at attach).
    inos: Rc<Vec<Vec<Option<u32>>>>,
}

/// The observer the driver installs in the simulation ([`crate::sim::StepObserver`]):
/// before a replay task fetches its next op it looks up the pages of the request the task
/// published as pending (read-only); between top-level actions it keeps the largest page
/// cache seen.
struct ReplayObserver {
    /// Per replay task: its id and its program's per-step cells.
    tasks: Vec<(crate::sched::TaskId, Rc<Hot>)>,
    inos: Rc<Vec<Vec<Option<u32>>>>,
    cache_pages_max: Rc<std::cell::Cell<u64>>,
}

impl ReplayObserver {
    /// Keep the largest nr_file_pages seen.
    fn note_cache(&self, sim: &crate::sim::Sim) {
        let file_pages = sim
            .vmstat
            .get(crate::mm::vmstat::VmItem::NrFilePages)
            .max(0) as u64;
        if file_pages > self.cache_pages_max.get() {
            self.cache_pages_max.set(file_pages);
        }
    }
}

impl crate::sim::StepObserver for ReplayObserver {
    fn before_action(&mut self, sim: &crate::sim::Sim) {
        self.note_cache(sim);
    }

    fn before_next_op(&mut self, sim: &crate::sim::Sim, tid: crate::sched::TaskId, clock_ps: u64) {
        let Some(k) = self.tasks.iter().position(|(t, _)| *t == tid) else {
            return;
        };
        let t = &sim.tasks[tid];
        let s = &self.tasks[k].1;
        s.now_ps.set(clock_ps.max(t.ready_at_ps));
        if !s.pending_may_issue.get() {
            return;
        }
        let Some(p) = s.pending.get() else {
            return;
        };
        Self::observe(&self.inos[k], sim, s, p);
    }
}

impl ReplayObserver {
    /// Look up the pages of pending request `p` (its file's inode in `inos`): their
    /// residency and the request's sequence number go to the shared cell `s`. Out of line:
    /// the calls of `before_next_op` that only note the time stay small.
    #[inline(never)]
    fn observe(inos: &[Option<u32>], sim: &crate::sim::Sim, s: &Hot, p: Pending) {
        use crate::mm::radix_tree::Entry;
        let Some(Some(inode)) = inos
            .get(p.file)
            .copied()
            .flatten()
            .and_then(|ino| sim.inodes.get(ino as usize))
        else {
            return;
        };
        let tree = &inode.mapping.tree;
        if p.pages <= RESIDENT_WORD_PAGES {
            let mut w = 0u64;
            for i in 0..p.pages {
                w |= u64::from(matches!(tree.lookup(p.first_page + i), Entry::Page(_))) << i;
            }
            s.resident_word.set(w);
            s.observed_seq.set(Some(p.seq));
            return;
        }
        let mut resident = s.resident.take();
        resident.clear();
        for i in p.first_page..p.first_page + p.pages {
            resident.push(matches!(tree.lookup(i), Entry::Page(_)));
        }
        s.resident.set(resident);
        s.observed_seq.set(Some(p.seq));
    }
}

/// Forget the shared cells of programs built on this thread (before `Sim::new`).
pub fn clear_probes() {
    PROBES.with(|p| p.borrow_mut().clear());
}

/// The shared cells of the replay programs built on this thread since `clear_probes`,
/// in task order (for a caller that runs the simulation without a `ReplayDriver`).
pub fn take_probes() -> Vec<Rc<RefCell<Shared>>> {
    PROBES.with(|p| std::mem::take(&mut *p.borrow_mut()))
}

impl ReplayDriver {
    /// The observer of the replay tasks of `sc` in `sim` (None when there are none). Call
    /// right after `Sim::new` on the same thread.
    pub fn attach(sim: &crate::sim::Sim, sc: &crate::scenario::Scenario) -> Option<ReplayDriver> {
        let probes: Vec<Rc<RefCell<Shared>>> =
            PROBES.with(|p| std::mem::take(&mut *p.borrow_mut()));
        let replay_tasks: Vec<(&str, &ReplaySpec)> = sc
            .tasks
            .iter()
            .filter_map(|t| t.program.get::<ReplaySpec>().map(|r| (t.name.as_str(), r)))
            .collect();
        if replay_tasks.is_empty() || probes.len() < replay_tasks.len() {
            return None;
        }
        let probes = &probes[probes.len() - replay_tasks.len()..];
        let mut tasks = Vec::new();
        for ((name, _), probe) in replay_tasks.iter().zip(probes) {
            let tid = sim.tasks.iter().position(|t| t.name == *name)?;
            probe.borrow_mut().attached = true;
            tasks.push((tid, probe.clone()));
        }
        let inos = replay_tasks
            .iter()
            .map(|(_, spec)| {
                spec.layout
                    .files
                    .iter()
                    .map(|(path, _)| {
                        let fs = sim.resolve_fs(path)?;
                        sim.fss[fs].names.get(&**path).copied()
                    })
                    .collect()
            })
            .collect();
        Some(ReplayDriver {
            inos: Rc::new(inos),
            tasks,
            host_start: std::time::Instant::now(),
            cache_pages_max: 0,
            specs: replay_tasks.iter().map(|(_, s)| (*s).clone()).collect(),
        })
    }

    /// Run `sim` to its end with the observer installed; stops at `max_steps` or when
    /// `crate::run::INTERRUPT` is set (checked every `INTERRUPT_CHECK_STEPS` steps).
    pub fn run(
        &mut self,
        sim: &mut crate::sim::Sim,
        max_steps: u64,
        progress: &mut dyn FnMut(u64),
    ) -> crate::sim::RunEnd {
        use crate::run::INTERRUPT_CHECK_STEPS;
        use crate::sim::RunEnd;
        self.host_start = std::time::Instant::now();
        let cache_pages_max = Rc::new(std::cell::Cell::new(self.cache_pages_max));
        let observer = ReplayObserver {
            tasks: self
                .tasks
                .iter()
                .map(|(t, s)| (*t, s.borrow().hot.clone()))
                .collect(),
            inos: self.inos.clone(),
            cache_pages_max: cache_pages_max.clone(),
        };
        observer.note_cache(sim);
        sim.observer = Some(Box::new(observer));
        let mut published = 0;
        let end = loop {
            if sim.steps >= max_steps {
                break RunEnd::StepLimit;
            }
            let chunk_end = (sim.steps / INTERRUPT_CHECK_STEPS + 1) * INTERRUPT_CHECK_STEPS;
            let end = sim.run_with_progress(chunk_end.min(max_steps), progress);
            published = self.publish_requests(published);
            if end != RunEnd::StepLimit {
                break end;
            }
            if crate::run::INTERRUPT.load(std::sync::atomic::Ordering::Relaxed) {
                break RunEnd::Interrupted;
            }
        };
        sim.observer = None;
        let file_pages = sim
            .vmstat
            .get(crate::mm::vmstat::VmItem::NrFilePages)
            .max(0) as u64;
        self.cache_pages_max = cache_pages_max.get().max(file_pages);
        end
    }

    /// Add the requests replayed since `published` to [`REQUESTS_REPLAYED`]; returns the
    /// new total of this driver's tasks.
    fn publish_requests(&self, published: u64) -> u64 {
        let done: u64 = self
            .tasks
            .iter()
            .map(|(_, s)| s.borrow().counters.requests)
            .sum();
        REQUESTS_REPLAYED.fetch_add(
            done.saturating_sub(published),
            std::sync::atomic::Ordering::Relaxed,
        );
        done
    }

    /// Requests the replay tasks of `sc` will issue (each trace's, after its `limit`).
    pub fn planned_requests(sc: &crate::scenario::Scenario) -> u64 {
        sc.tasks
            .iter()
            .filter_map(|t| t.program.get::<ReplaySpec>())
            .map(|r| r.limit.min(r.layout.requests))
            .sum()
    }

    /// The replay section of the run report.
    pub fn report(&self, sim: &crate::sim::Sim) -> ReplayReport {
        use crate::mm::vmstat::VmItem;
        let host_s = self.host_start.elapsed().as_secs_f64();
        let v = |i: VmItem| sim.vmstat.get(i).max(0) as u64;
        let tasks: Vec<ReplayTaskReport> = self
            .tasks
            .iter()
            .zip(&self.specs)
            .map(|((tid, probe), spec)| {
                let c = probe.borrow().counters.clone();
                let t = &sim.tasks[*tid];
                let ra_read = t.stats.cache_misses.saturating_sub(c.page_misses);
                let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
                ReplayTaskReport {
                    task: t.name.clone(),
                    trace: spec.trace.clone(),
                    format: spec.format.clone(),
                    mmap: spec.mmap,
                    keep_open: spec.keep_open,
                    pace: spec.pace,
                    files: spec.layout.files.len() as u64,
                    objects: spec.layout.objects,
                    footprint_pages: spec.layout.files.iter().map(|f| f.1 / PAGE_SIZE).sum(),
                    page_miss_ratio: ratio(c.page_misses, c.pages),
                    byte_miss_ratio: ratio(c.byte_misses, c.bytes),
                    request_miss_ratio: ratio(c.request_misses, c.requests - c.deletes),
                    pages_read_in: t.stats.cache_misses,
                    readahead_pages: ra_read,
                    readahead_wasted: ra_read.saturating_sub(c.readahead_used),
                    inode_table_pages_read: t.stats.inode_table_misses,
                    dir_pages_read: t.stats.dir_block_misses,
                    elapsed_ns: t.stats.exit_ps.map_or(0, |e| (e - t.stats.start_ps) / 1000),
                    cgroup: match sim.memcgs[t.memcg as usize].name.as_str() {
                        "" => "/".to_string(),
                        n => n.to_string(),
                    },
                    memory_max: crate::mm::memcontrol::limit_bytes(
                        sim.memcgs[t.memcg as usize].max,
                    ),
                    counters: c,
                }
            })
            .collect();
        let requests: u64 = tasks.iter().map(|t| t.counters.requests).sum();
        ReplayReport {
            tasks,
            cache_pages_max: self.cache_pages_max,
            io_pages_read: v(VmItem::Pgpgin) / (PAGE_SIZE / 1024),
            io_pages_written: v(VmItem::Pgpgout) / (PAGE_SIZE / 1024),
            refaults: v(VmItem::WorkingsetRefault).max(v(VmItem::WorkingsetRefaultFile)),
            refault_activations: v(VmItem::WorkingsetActivate)
                .max(v(VmItem::WorkingsetActivateFile)),
            activations: v(VmItem::Pgactivate),
            host_seconds: host_s,
            host_requests_per_s: if host_s > 0.0 {
                requests as f64 / host_s
            } else {
                0.0
            },
        }
    }
}

/// The `replay` section of a run report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReplayReport {
    /// One entry per replay task.
    pub tasks: Vec<ReplayTaskReport>,
    /// The largest page cache seen during the run (nr_file_pages), pages: the cache size
    /// to give a textbook policy for a like-for-like comparison.
    pub cache_pages_max: u64,
    /// Pages read from block devices (pgpgin in pages).
    pub io_pages_read: u64,
    /// Pages written to block devices (pgpgout in pages).
    pub io_pages_written: u64,
    /// workingset refaults.
    pub refaults: u64,
    /// Refaults that activated the page (workingset_activate).
    pub refault_activations: u64,
    /// Pages activated (pgactivate).
    pub activations: u64,
    /// Host seconds the run took.
    pub host_seconds: f64,
    /// Requests replayed per host second.
    pub host_requests_per_s: f64,
}

/// One replay task's figures.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReplayTaskReport {
    /// Task name.
    pub task: String,
    /// Trace file.
    pub trace: String,
    /// Format.
    pub format: String,
    /// Through mappings.
    pub mmap: bool,
    /// Object files kept open (`keep_open`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_open: bool,
    /// Paced by timestamps.
    pub pace: bool,
    /// Files the trace was laid out on.
    pub files: u64,
    /// Distinct objects (object traces).
    pub objects: u64,
    /// Pages of all the files.
    pub footprint_pages: u64,
    /// Page miss ratio: pages not cached when requested / pages requested.
    pub page_miss_ratio: f64,
    /// Byte miss ratio.
    pub byte_miss_ratio: f64,
    /// Request (object) miss ratio: requests with a missed page / requests (deletes
    /// aside).
    pub request_miss_ratio: f64,
    /// Pages the task's accesses read into the page cache (demand + readahead).
    pub pages_read_in: u64,
    /// Of which read ahead (read in but not missed by a request then).
    pub readahead_pages: u64,
    /// Read-ahead pages never hit before they went (read ahead minus first hits).
    pub readahead_wasted: u64,
    /// Inode-table pages its opens read into the page cache: files whose inode was not in
    /// the inode cache (cold, or evicted by the shrinker). Also in `io_pages_read` when
    /// they came from the device.
    pub inode_table_pages_read: u64,
    /// Directory blocks its lookups read into the page cache (names looked up in an
    /// indexed directory, `fs::htree`: the one of a file-per-object layout). Also in
    /// `io_pages_read` when they came from the device.
    #[serde(default)]
    pub dir_pages_read: u64,
    /// Virtual time of the replay, ns.
    pub elapsed_ns: u64,
    /// The memory cgroup the task ran in ("/" = the root).
    pub cgroup: String,
    /// That cgroup's memory.max, bytes (None = max, and for the root).
    pub memory_max: Option<u64>,
    /// The counters.
    #[serde(flatten)]
    pub counters: ReplayCounters,
}

// ---------------------------------------------------------------------------------------
// Parameters (called from scenario.rs)
// ---------------------------------------------------------------------------------------

/// `program = "replay"`.
pub const PROGRAM: super::ProgramDef = super::ProgramDef {
    name: "replay",
    summary: "a block or object trace replayed through the page cache (docs/replay.md)",
    doc: "Replays an I/O trace through the page cache (`docs/replay.md`). The trace is read \
          once when the scenario is loaded (every record checked; an error names the trace \
          file, the record and the field) and laid out on files that then exist with data on \
          the device; they must fit on it beside the scenario's other data files. Each \
          request is one `pread` or `pwrite` (or a load or store through a shared mapping with \
          `mmap = true`). The run's JSON has a `replay` section: hits, misses \
          and the miss ratio per window.",
    params: &[
        super::Param {
            key: "trace",
            ty: "string",
            default: "required",
            rules: "path of the trace on the host (relative to the working directory); zstd- and gzip-compressed traces (`.zst`, `.gz`) are read directly",
        },
        super::Param {
            key: "format",
            ty: "string",
            default: "from the file name and first line",
            rules: "`csv[:options]`, `txt`, `oracleGeneral`, `lcs`, `vscsi`, `msr`, `alibaba`, `tencent`, `fiu`, `blkparse[:action=Q]`, `spc[:block-size=512]`, `arc[:block-size=512]` (`docs/replay.md`)",
        },
        super::Param {
            key: "dir",
            ty: "string",
            default: "`<first blockfs mount>/replay`",
            rules: "absolute, under a blockfs: where the replay's files go",
        },
        super::Param {
            key: "mmap",
            ty: "boolean",
            default: "`false`",
            rules: "read and write through shared mappings instead of `pread` and `pwrite`",
        },
        super::Param {
            key: "keep_open",
            ty: "boolean",
            default: "`false`",
            rules: "object traces, one file per object, `pread`/`pwrite`: each object's file stays open after its first request (an unbounded fd cache, as a server's open-file cache or a database's table cache) instead of being opened and closed per request; a re-read through the same open file at the same position is then not marked accessed (filemap_read's prev_pos rule), so one-page objects are not activated by their re-reads",
        },
        super::Param {
            key: "pace",
            ty: "boolean",
            default: "`false`",
            rules: "sleep until each request's timestamp (virtual time)",
        },
        super::Param {
            key: "object_map",
            ty: "string",
            default: "`\"file\"`",
            rules: "object traces: `file` (one file per object) or `range` (one page range per object in one file)",
        },
        super::Param {
            key: "object_size",
            ty: "size (bytes)",
            default: "`\"4KiB\"`",
            rules: "≥ 1: the size of objects the trace gives none (txt) or 0",
        },
        super::Param {
            key: "size",
            ty: "size (bytes)",
            default: "`0`",
            rules: "block traces: the minimum size of each device's file",
        },
        super::Param {
            key: "limit",
            ty: "integer",
            default: "all",
            rules: "≥ 1: replay the first N requests",
        },
        super::Param {
            key: "window",
            ty: "integer",
            default: "requests/100",
            rules: "requests per miss-ratio window",
        },
    ],
    samples: &[super::SampleDef {
        label: "replay",
        kind: super::SampleKind::Time,
        doc: "the whole replay, first to last request",
    }],
    example: r#"name = "replay-example"
kernel = "6.18"

[machine]
cpus_per_node = 2
memory_per_node = "16MiB"

[[devices]]
name = "sda"
preset = "ssd"
size = "1GiB"

[[filesystems]]
mount = "/mnt"
type = "blockfs"
device = "sda"

[[tasks]]
name = "replay"
program = "replay"
trace = "docs/traces/loop.txt"
"#,
    parse: parse_replay,
};

impl super::Params for ReplaySpec {
    fn build(&self) -> Box<dyn Program> {
        Box::new(Replay::new(self.clone()))
    }
    fn files(&self) -> Vec<crate::scenario::FileSpec> {
        // The files a replay lays its trace on exist before the run, with data.
        self.layout
            .files
            .iter()
            .map(|(path, size)| crate::scenario::FileSpec {
                path: path.clone(),
                size_bytes: *size,
                data: true,
            })
            .collect()
    }
}

/// Raw parameters as read from the task table (the scenario reader checks types).
#[derive(Clone, Debug, Default)]
pub struct RawParams {
    /// `trace`.
    pub trace: String,
    /// `format`.
    pub format: Option<String>,
    /// `dir`.
    pub dir: String,
    /// `mmap`.
    pub mmap: bool,
    /// `keep_open`.
    pub keep_open: bool,
    /// `pace`.
    pub pace: bool,
    /// `object_map`.
    pub object_map: Option<String>,
    /// `object_size`.
    pub object_size: Option<u64>,
    /// `size`.
    pub size: Option<u64>,
    /// `limit`.
    pub limit: Option<u64>,
    /// `window`.
    pub window: Option<u64>,
}

/// Validate the parameters and run the first pass. Errors name the key.
pub fn build_spec(p: RawParams) -> Result<ReplaySpec, (&'static str, String)> {
    let format = match &p.format {
        Some(f) => Format::parse(f).map_err(|e| ("format", e))?,
        None => Format::guess(Path::new(&p.trace)).ok_or((
            "trace",
            format!(
                "cannot tell the format of \"{}\" from its name or first line; add format = \"...\" ({})",
                p.trace,
                crate::trace::format_names()
            ),
        ))?,
    };
    let object_map = match p.object_map.as_deref() {
        None | Some("file") => ObjectMap::File,
        Some("range") => ObjectMap::Range,
        Some(o) => {
            return Err((
                "object_map",
                format!("unknown object_map \"{o}\"; file or range"),
            ))
        }
    };
    let object_size = match p.object_size {
        Some(0) => {
            return Err((
                "object_size",
                "the object size must be at least 1 byte".into(),
            ))
        }
        Some(s) => s,
        None => PAGE_SIZE,
    };
    let limit = match p.limit {
        Some(0) => return Err(("limit", "limit must be at least 1".into())),
        Some(l) => l,
        None => u64::MAX,
    };
    let o = PlanOptions {
        dir: p.dir.clone(),
        object_map,
        object_size,
        size: p.size.unwrap_or(0),
        limit,
    };
    if p.keep_open {
        let why = if format.kind() == TraceKind::Block {
            Some("a block trace's files stay open anyway")
        } else if object_map == ObjectMap::Range {
            Some("object_map = \"range\" keeps its one file open anyway")
        } else if p.mmap {
            Some("with mmap the objects' mappings keep their files open anyway")
        } else {
            None
        };
        if let Some(why) = why {
            return Err((
                "keep_open",
                format!("keep_open is for object traces read a file per object: {why}"),
            ));
        }
    }
    let layout = plan(&p.trace, &format, &o).map_err(|e| ("trace", e))?;
    Ok(ReplaySpec {
        trace: p.trace,
        format: format.spec(),
        dir: p.dir,
        mmap: p.mmap,
        keep_open: p.keep_open,
        pace: p.pace,
        object_map,
        object_size,
        size: o.size,
        limit,
        window: p.window.unwrap_or(0),
        layout: Arc::new(layout),
    })
}

/// `replay`: the keys are read here, checked and the trace planned (its first pass) by
/// `workload::replay::build_spec`; the replay's files are added to the scenario's files.
fn parse_replay(
    task: &crate::scenario::View<'_>,
    env: &crate::scenario::Env<'_>,
) -> Result<super::ProgramSpec, crate::scenario::ScenarioError> {
    use crate::scenario::{
        check_abs_path, fmt_bytes, fs_capacity, resolve_mount_in, want_bool, want_size, want_str,
        want_u64, FsKind,
    };
    let (trace, trace_loc) = task.req("trace", "path of the trace file on the host", want_str)?;
    let dir = match task.opt("dir", want_str)? {
        Some((d, loc)) => {
            check_abs_path(d).map_err(|why| loc.err(why))?;
            match resolve_mount_in(env.filesystems, d) {
                Some((_, fs)) if fs.kind == FsKind::Blockfs => d.to_string(),
                _ => return Err(loc.err(format!("\"{d}\" is not under a blockfs mount"))),
            }
        }
        None => match env.filesystems.iter().find(|f| f.kind == FsKind::Blockfs) {
            Some(fs) if fs.mount == "/" => "/replay".to_string(),
            Some(fs) => format!("{}/replay", fs.mount),
            None => {
                return Err(trace_loc.err(
                    "a replay needs a blockfs filesystem for its files; declare one or set dir",
                ))
            }
        },
    };
    let size_of = |k: &str| task.opt(k, |i, l| want_size(i, l, Some(env.total_memory_bytes)));
    let raw = RawParams {
        trace: trace.to_string(),
        format: task.opt("format", want_str)?.map(|(f, _)| f.to_string()),
        dir: dir.clone(),
        mmap: task.opt("mmap", want_bool)?.is_some_and(|(b, _)| b),
        keep_open: task.opt("keep_open", want_bool)?.is_some_and(|(b, _)| b),
        pace: task.opt("pace", want_bool)?.is_some_and(|(b, _)| b),
        object_map: task
            .opt("object_map", want_str)?
            .map(|(f, _)| f.to_string()),
        object_size: size_of("object_size")?.map(|(v, _)| v),
        size: size_of("size")?.map(|(v, _)| v),
        limit: task.opt("limit", want_u64)?.map(|(v, _)| v),
        window: task.opt("window", want_u64)?.map(|(v, _)| v),
    };
    let spec = build_spec(raw).map_err(|(key, msg)| {
        task.get(key)
            .map(|(_, l)| l)
            .unwrap_or_else(|| trace_loc.clone())
            .err(msg)
    })?;
    let total: u64 = spec.layout.files.iter().map(|f| f.1).sum();
    let (cap, what) = fs_capacity(&dir, env);
    let used: u64 = env
        .files
        .iter()
        .filter(|f| f.data)
        .map(|f| f.size_bytes)
        .sum();
    if total.saturating_add(used) > cap {
        let hint = match what.strip_prefix("device ") {
            Some(dev) => format!(
                "; give the device more room: its `size` (mmsim replay: --set devices.{dev}.size=SIZE)"
            ),
            None => String::new(),
        };
        return Err(trace_loc.err(format!(
            "the trace's files ({}, {:.1} TiB) do not fit in {what} ({}){hint}",
            fmt_bytes(total),
            total as f64 / (1u64 << 40) as f64,
            fmt_bytes(cap)
        )));
    }
    if let Some((path, _)) = spec
        .layout
        .files
        .iter()
        .find(|(p, _)| env.files.iter().any(|f| *f.path == **p))
    {
        return Err(trace_loc.err(format!(
            "the replay file {path} is also a [[files]] entry; set another dir"
        )));
    }
    Ok(super::ProgramSpec::new(PROGRAM.name, spec))
}

#[cfg(test)]
mod page_bits_tests {
    use super::PageBits;
    use proptest::prelude::*;

    proptest! {
        /// Ranges set across word boundaries (and at 10 TiB) read back as a set of pages.
        #[test]
        fn page_bits_read_as_a_set(ranges in proptest::collection::vec(
            (prop_oneof![0u64..300, (10u64 << 28) - 200..(10u64 << 28)], 0u64..140), 0..12)) {
            let mut b = PageBits::default();
            let mut model = std::collections::BTreeSet::new();
            for (first, n) in &ranges {
                b.set_range(*first, *n);
                model.extend(*first..first + n);
            }
            for base in [0u64, (10 << 28) - 200] {
                for i in base..base + 450 {
                    prop_assert_eq!(b.get(i), model.contains(&i), "page {}", i);
                }
            }
            prop_assert!(b.dense.len() <= PageBits::DENSE_WORDS);
        }
    }

    /// Pages on both sides of the flat part's end.
    #[test]
    fn page_bits_across_the_flat_parts_end() {
        let mut b = PageBits::default();
        let edge = 64 * PageBits::DENSE_WORDS as u64;
        b.set_range(edge - 3, 6);
        assert_eq!((b.dense.len(), b.sparse.len()), (PageBits::DENSE_WORDS, 1));
        let set: Vec<u64> = (edge - 70..edge + 70).filter(|i| b.get(*i)).collect();
        assert_eq!(set, (edge - 3..edge + 3).collect::<Vec<_>>());
    }
}
