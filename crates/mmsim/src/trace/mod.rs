//! Trace readers: I/O traces of real systems, read as a stream of [`Request`]s for the
//! `replay` workload program (`workload/replay.rs`, `docs/replay.md`).
//!
//! # What a trace is
//!
//! Two kinds of traces are read:
//!
//! - **object traces** (CDNs, key-value stores): each record names an object (an id) and
//!   its size; libCacheSim's `csv`, `txt` (one id per line), `oracleGeneral` and `lcs`
//!   binaries;
//! - **block traces** (VM disks, storage servers): each record names a device, a byte
//!   offset, a length and whether it reads or writes; `vscsi` binary, the MSR Cambridge,
//!   Alibaba and Tencent CBS CSVs (`msr`, `alibaba`, `tencent`), FIU's traces (`fiu`), the
//!   SPC format of UMass's traces (`spc`), the ARC paper's `.lis` traces (`arc`) and
//!   `blkparse` text.
//!
//! Every reader is a streaming iterator: one record in memory at a time (the text readers
//! reuse one line buffer), so host memory does not grow with the trace's length. Any of
//! them reads a zstd- or gzip-compressed file directly: a file that starts with the zstd or
//! gzip magic number is decompressed on the fly (one whose name ends in `.zst` or `.gz`
//! must; `COMPRESSIONS`). A tar archive is an error saying to extract the trace first.
//!
//! # Errors
//!
//! Every problem is one [`TraceError`] naming the file, the record (1-based: the line for
//! text formats, header included; the record index for binary formats) and, where one
//! applies, the field. After an error the iterator ends. Nothing panics on bad input: the
//! fuzz targets in `fuzz/` feed the binary readers arbitrary bytes.
//!
//! # Formats
//!
//! A format is named by a string ([`Format::parse`]), `name[:options]`; each is defined
//! beside its reader ([`FormatDef`], its file's `FORMAT`) and listed in [`FORMATS`]: a new
//! format is a new file and one line there. The csv options follow libCacheSim's `-t`
//! options (`csv.rs`). Without `--format` the format is guessed from the file name and
//! first line ([`Format::guess`]).

pub mod alibaba;
pub mod arc;
pub mod blkparse;
pub mod cli;
pub mod csv;
pub mod fiu;
pub mod lcs;
pub mod msr;
pub mod oracle;
pub mod pages;
pub mod spc;
pub mod tencent;
pub mod txt;
pub mod vscsi;

use std::fmt;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Bytes of a page (the mapping of traces onto files is in pages).
pub const PAGE_SIZE: u64 = 4096;

/// One request of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// When the request was issued, ns since the trace's own epoch (0 when the format has
    /// no time).
    pub time_ns: u64,
    /// Object traces: the object id. Block traces: the device (disk) id.
    pub id: u64,
    /// Block traces: the byte offset on the device. Object traces: 0.
    pub offset: u64,
    /// Bytes: the object's size or the request's length (0 for an object of unknown size).
    pub len: u64,
    /// A write (else a read).
    pub write: bool,
    /// Object traces: the object is deleted (a key-value cache's `delete`): the replay
    /// drops its pages from the page cache (POSIX_FADV_DONTNEED). `write` is then false.
    pub delete: bool,
}

/// What the records of a trace name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// Objects with sizes.
    Object,
    /// Byte ranges of devices.
    Block,
}

/// A trace reading error: the file, the record and the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The trace file.
    pub file: String,
    /// 1-based record number (the line for text formats), if one applies.
    pub record: Option<u64>,
    /// The field, if one applies.
    pub field: Option<String>,
    /// What is wrong.
    pub msg: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(r) = self.record {
            write!(f, ": record {r}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        write!(f, ": {}", self.msg)
    }
}

impl std::error::Error for TraceError {}

/// A trace format: how `--format` names it, what its records name, which file names are
/// guessed to be in it, its options and its reader. Each reader's file defines one
/// (`pub const FORMAT`, its options parsed and documented there); a new format is a new
/// file and one line in [`FORMATS`].
pub struct FormatDef {
    /// `--format` spellings (matched without regard to case); the first is canonical.
    pub names: &'static [&'static str],
    /// How help texts and errors write it (`csv[:options]`).
    pub usage: &'static str,
    /// Objects or block ranges.
    pub kind: TraceKind,
    /// Whether a trace is this format's, from its file name (lowercased, a compression
    /// suffix removed) and its first line (decompressed, without the line end; "" when the
    /// file cannot be read).
    pub guess: fn(&str, &str) -> bool,
    /// The options after `name:` ("" when none) checked and spelled canonically.
    pub options: fn(&str) -> Result<String, String>,
    /// The reader of a (decompressed) stream, with options as `options` spelled them.
    pub(crate) reader: fn(Box<dyn BufRead>, &str) -> Box<dyn RecordSource>,
}

/// Every trace format. A file is guessed to be in the first whose `guess` says so
/// (`*oracleGeneral*` before the extensions; `msr`, `alibaba` or `tencent` in a `.csv`
/// name, or a first line of their header or record shape, before csv; an FIU first line
/// in a `.blkparse` before blkparse).
pub const FORMATS: &[&FormatDef] = &[
    &oracle::FORMAT,
    &lcs::FORMAT,
    &txt::FORMAT,
    &msr::FORMAT,
    &alibaba::FORMAT,
    &tencent::FORMAT,
    &csv::FORMAT,
    &vscsi::FORMAT,
    &fiu::FORMAT,
    &blkparse::FORMAT,
    &spc::FORMAT,
    &arc::FORMAT,
];

/// The formats `--format` (and a replay task's `format`) takes, for help texts and errors:
/// `oracleGeneral, lcs, …`.
pub fn format_names() -> String {
    FORMATS
        .iter()
        .map(|d| d.usage)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `FormatDef::options` of a format that takes none.
pub fn no_options(o: &str) -> Result<String, String> {
    if o.trim().is_empty() {
        Ok(String::new())
    } else {
        Err(format!("takes no options (got \"{o}\")"))
    }
}

/// The block size of a block format's options (`block-size=4096`; 512, the sector, when
/// not given): `spc` and `arc`, whose traces count blocks of a size each trace's
/// description gives.
pub(crate) fn block_size(opts: &str) -> Result<u64, String> {
    let mut block = 512;
    for kv in opts.split(',').map(str::trim).filter(|kv| !kv.is_empty()) {
        match kv.split_once('=') {
            Some(("block-size", v)) => match v.trim().parse::<u64>() {
                Ok(b) if b > 0 => block = b,
                _ => {
                    return Err(format!(
                        "option \"{kv}\": the block size is a positive number of bytes"
                    ))
                }
            },
            _ => return Err(format!("option \"{kv}\": expected block-size=<bytes>")),
        }
    }
    Ok(block)
}

/// `block_size`'s options spelled canonically (nothing for 512).
pub(crate) fn block_size_options(opts: &str) -> Result<String, String> {
    let b = block_size(opts)?;
    Ok(if b == 512 {
        String::new()
    } else {
        format!("block-size={b}")
    })
}

/// A trace format with its options ([`Format::parse`], [`Format::guess`]).
#[derive(Clone)]
pub struct Format {
    def: &'static FormatDef,
    /// As the format's `options` spelled them.
    options: String,
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        // By name: a `const` definition has no one address.
        self.def.names[0] == other.def.names[0] && self.options == other.options
    }
}

impl Eq for Format {}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Format({})", self.spec())
    }
}

impl Format {
    /// A format with its default options.
    pub fn of(def: &'static FormatDef) -> Format {
        let options = (def.options)("").expect("a format's default options are valid");
        Format { def, options }
    }

    /// Parse a format name with options, `name[:options]` (see the module documentation).
    pub fn parse(s: &str) -> Result<Format, String> {
        let (name, opts) = match s.split_once(':') {
            Some((n, o)) => (n.trim(), o),
            None => (s.trim(), ""),
        };
        let Some(def) = FORMATS
            .iter()
            .find(|d| d.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
        else {
            return Err(format!(
                "unknown trace format \"{name}\"; formats: {}",
                format_names()
            ));
        };
        let options = (def.options)(opts).map_err(|e| format!("format {name}: {e}"))?;
        Ok(Format { def, options })
    }

    /// Guess the format from the file name (a compression suffix is looked through) and
    /// the file's first line, with its default options: the first of [`FORMATS`] whose
    /// `guess` takes them.
    pub fn guess(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
        let name = strip_compression(&name);
        let line = first_line(path);
        FORMATS
            .iter()
            .find(|d| (d.guess)(name, &line))
            .map(|d| Format::of(d))
    }

    /// Object or block trace.
    pub fn kind(&self) -> TraceKind {
        self.def.kind
    }

    /// The canonical spelling (parses back to the same format).
    pub fn spec(&self) -> String {
        if self.options.is_empty() {
            self.def.names[0].to_string()
        } else {
            format!("{}:{}", self.def.names[0], self.options)
        }
    }
}

/// A stream of requests with its error context.
pub struct TraceReader {
    src: Box<dyn RecordSource>,
    file: String,
    done: bool,
    records: u64,
    /// Requests decoded ahead (`RecordSource::next_batch`), handed out from `batch_pos`.
    batch: Vec<Request>,
    batch_pos: usize,
    /// The error that ended the last batch, reported after the batch's requests.
    batch_err: Option<RecErr>,
}

/// Requests a reader decodes per batch (one dynamic call per batch, not per request).
const BATCH: usize = 64;

/// A reader's error: record, field, message (the file is added by [`TraceReader`]).
pub(crate) type RecErr = (Option<u64>, Option<String>, String);

/// What a format reader implements: the next request, or None at the end.
pub(crate) trait RecordSource {
    /// Read one request; errors carry the record number and field, not the file.
    fn next_record(&mut self) -> Result<Option<Request>, RecErr>;

    /// Append up to `max` requests to `out` (fewer only at the end of the trace or at an
    /// error, which comes after the requests before it). The same records, in the same
    /// order, as `max` calls of `next_record`.
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<(), RecErr> {
        for _ in 0..max {
            match self.next_record()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(())
    }
}

impl TraceReader {
    /// Open a trace file in a format (None: guess from the name; an error when that fails).
    pub fn open(path: &Path, format: Option<&Format>) -> Result<(TraceReader, Format), TraceError> {
        let file = path.display().to_string();
        let format = match format {
            Some(f) => f.clone(),
            None => Format::guess(path).ok_or_else(|| TraceError {
                file: file.clone(),
                record: None,
                field: None,
                msg: format!(
                    "cannot tell the trace format from the file name or first line; give it \
                     with --format ({})",
                    format_names()
                ),
            })?,
        };
        let f = std::fs::File::open(path).map_err(|e| TraceError {
            file: file.clone(),
            record: None,
            field: None,
            msg: format!("cannot open: {e}"),
        })?;
        let r = Self::from_reader(Box::new(f), &file, &format)?;
        Ok((r, format))
    }

    /// Read a trace from any byte stream (`name` names it in errors); zstd and gzip are
    /// detected by their magic numbers.
    pub fn from_reader(
        inner: Box<dyn Read>,
        name: &str,
        format: &Format,
    ) -> Result<TraceReader, TraceError> {
        let input = decompressed(inner, name).map_err(|msg| TraceError {
            file: name.to_string(),
            record: None,
            field: None,
            msg,
        })?;
        let src = (format.def.reader)(input, &format.options);
        Ok(TraceReader {
            src,
            file: name.to_string(),
            done: false,
            records: 0,
            batch: Vec::with_capacity(BATCH),
            batch_pos: 0,
            batch_err: None,
        })
    }

    /// Requests read so far.
    pub fn records(&self) -> u64 {
        self.records
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request, TraceError>;
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(r) = self.batch.get(self.batch_pos) {
            self.batch_pos += 1;
            self.records += 1;
            return Some(Ok(*r));
        }
        self.next_slow()
    }
}

impl TraceReader {
    /// The next request when one is decoded ahead, as `next` returns it then (None when
    /// the batch is used up: `next` then decodes the next one or reports the end or an
    /// error). The hot path of a caller that reads request by request.
    #[inline(always)]
    pub fn next_buffered(&mut self) -> Option<Request> {
        let r = *self.batch.get(self.batch_pos)?;
        self.batch_pos += 1;
        self.records += 1;
        Some(r)
    }

    /// The batch is used up: report its error, or decode the next one.
    #[cold]
    fn next_slow(&mut self) -> Option<Result<Request, TraceError>> {
        if let Some((record, field, msg)) = self.batch_err.take() {
            self.done = true;
            return Some(Err(TraceError {
                file: self.file.clone(),
                record,
                field,
                msg,
            }));
        }
        if self.done {
            return None;
        }
        self.batch.clear();
        self.batch_pos = 0;
        if let Err(e) = self.src.next_batch(&mut self.batch, BATCH) {
            self.batch_err = Some(e);
        } else if self.batch.is_empty() {
            self.done = true;
            return None;
        }
        self.next()
    }
}

/// The bytes of trace file `name` read from `inner`, decompressed when they start with a
/// compression's magic number ([`COMPRESSIONS`]); errors: a compressed name without the
/// magic number, a corrupt stream's start, a tar archive.
fn decompressed(inner: Box<dyn Read>, name: &str) -> Result<Box<dyn BufRead>, String> {
    let mut buf = BufReader::with_capacity(1 << 16, inner);
    let head = buf.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
    let lower = name.to_ascii_lowercase();
    let by_magic = COMPRESSIONS.iter().find(|c| head.starts_with(c.magic));
    let by_name = COMPRESSIONS
        .iter()
        .find(|c| c.suffixes.iter().any(|s| lower.ends_with(s)));
    let mut input: Box<dyn BufRead> = match (by_magic, by_name) {
        (Some(c), _) => {
            let dec = (c.decoder)(buf).map_err(|e| format!("corrupt {} stream: {e}", c.name))?;
            Box::new(BufReader::with_capacity(
                1 << 16,
                Corrupt {
                    what: c.name,
                    inner: dec,
                },
            ))
        }
        (None, Some(c)) => {
            return Err(format!(
                "the name ends in {} but the file does not start with the {} magic number",
                c.suffixes
                    .iter()
                    .find(|s| lower.ends_with(*s))
                    .expect("matched"),
                c.name
            ))
        }
        (None, None) => Box::new(buf),
    };
    // A tar archive (a `.tgz` or `.tar` of traces, as some are published) holds files;
    // the readers read one trace.
    let head = input.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        return Err("a tar archive, not a trace: extract the trace first (tar -xf)".into());
    }
    Ok(input)
}

/// The first line of trace file `path` (decompressed; at most 1 KiB, lossily UTF-8; empty
/// when it cannot be read): what [`Format::guess`] shows each format's `guess`.
fn first_line(path: &Path) -> String {
    let Ok(f) = std::fs::File::open(path) else {
        return String::new();
    };
    let Ok(input) = decompressed(Box::new(f), &path.to_string_lossy()) else {
        return String::new();
    };
    let mut line = Vec::new();
    if input.take(1024).read_until(b'\n', &mut line).is_err() {
        return String::new();
    }
    String::from_utf8_lossy(&line).trim_end().to_string()
}

/// A compression a trace file may come in, decompressed on the fly: known by its magic
/// number; a file whose name ends in one of its suffixes must start with it.
struct Compression {
    /// As errors name it ("corrupt gzip stream").
    name: &'static str,
    /// File-name suffixes (lowercase); [`Format::guess`] looks through them.
    suffixes: &'static [&'static str],
    /// The first bytes of a compressed file.
    magic: &'static [u8],
    /// The decompressing reader of the file's bytes.
    decoder: fn(RawTrace) -> std::io::Result<Box<dyn Read>>,
}

/// A trace file's bytes as read, before any decompression.
type RawTrace = BufReader<Box<dyn Read>>;

/// The compressions read: zstd (libCacheSim's `.zst` traces) and gzip (the SNIA IOTTA
/// repository's `.csv.gz` block traces, MSR Cambridge's among them; concatenated members,
/// as `cat a.gz b.gz` or bgzip write them, read as one stream).
const COMPRESSIONS: &[Compression] = &[
    Compression {
        name: "zstd",
        suffixes: &[".zst", ".zstd"],
        magic: &[0x28, 0xb5, 0x2f, 0xfd],
        decoder: |b| Ok(Box::new(zstd::stream::read::Decoder::with_buffer(b)?)),
    },
    Compression {
        name: "gzip",
        suffixes: &[".gz", ".tgz"],
        magic: &[0x1f, 0x8b],
        decoder: |b| Ok(Box::new(flate2::bufread::MultiGzDecoder::new(b))),
    },
];

/// A file name without its compression suffix (`hm_0.csv.gz` → `hm_0.csv`).
fn strip_compression(name: &str) -> &str {
    COMPRESSIONS
        .iter()
        .flat_map(|c| c.suffixes.iter())
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name)
}

/// Decoder errors read as "corrupt zstd stream: ..." (or gzip).
struct Corrupt<R: Read> {
    what: &'static str,
    inner: R,
}

impl<R: Read> Read for Corrupt<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read(buf).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("corrupt {} stream: {e}", self.what),
            )
        })
    }
}

/// The 8 bytes `w` (little-endian: the first byte lowest) read as a line start: when the
/// first byte that is not an ASCII digit is at 1 to 7, the digits' value and that byte's
/// position (the caller checks it ends the line); None when the first byte is not a digit
/// or all eight are. SWAR: a byte is a digit when its high nibble is 3 and its low one at
/// most 9; the digits, moved to the top of the word, are summed pairwise in three
/// multiplications.
#[inline(always)]
fn digits_line_word(w: u64) -> Option<(u64, usize)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let high_not_3 = (w & (0xf0 * ONES)) ^ (0x30 * ONES);
    let low_over_9 = ((w & (0x0f * ONES)) + 0x06 * ONES) & (0xf0 * ONES);
    let non_digit = high_not_3 | low_over_9;
    if non_digit == 0 {
        return None;
    }
    let i = (non_digit.trailing_zeros() / 8) as usize;
    if i == 0 {
        return None;
    }
    let mut x = (w ^ (0x30 * ONES)) << (8 * (8 - i));
    x = ((x & (0x0f * ONES)).wrapping_mul(10 * 256 + 1)) >> 8;
    x = ((x & 0x00ff_00ff_00ff_00ff).wrapping_mul(100 * 65_536 + 1)) >> 16;
    x = ((x & 0x0000_ffff_0000_ffff).wrapping_mul(10_000 * (1 << 32) + 1)) >> 32;
    Some((x, i))
}

/// Reads lines into one reused buffer, counting them.
pub(crate) struct Lines {
    input: Box<dyn BufRead>,
    /// Bytes read from `input`: `buf[start..end]` not yet returned as lines.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// `input` has reached its end.
    eof: bool,
    /// Lines read so far (the current line's 1-based number).
    pub line: u64,
}

/// Bytes `Lines` reads from its input at a time.
const LINES_CHUNK: usize = 1 << 16;
/// The longest line a text trace may hold.
const LINE_MAX: usize = 1 << 20;

impl Lines {
    pub(crate) fn new(input: Box<dyn BufRead>) -> Lines {
        Lines {
            input,
            buf: Vec::new(),
            start: 0,
            end: 0,
            eof: false,
            line: 0,
        }
    }

    /// The next line when it is 1 to 19 ASCII digits ended by `\n` and already read: its
    /// value, the line consumed. None (nothing consumed) for any other line, which
    /// `next_line_bytes` then reads: the fast path of txt traces.
    #[inline]
    pub(crate) fn next_digits_line(&mut self) -> Option<u64> {
        let rest = &self.buf[self.start..self.end];
        if let Some(b) = rest.first_chunk::<8>() {
            // 1 to 7 digits and the '\n' in the next 8 bytes: eight bytes at a time.
            let w = u64::from_le_bytes(*b);
            if let Some((v, i)) = digits_line_word(w) {
                if b[i] != b'\n' {
                    return None;
                }
                self.start += i + 1;
                self.line += 1;
                return Some(v);
            }
            if !b[0].is_ascii_digit() {
                return None;
            }
            // Eight digits or more: the byte loop.
        }
        let n = rest.len().min(20);
        let (mut v, mut i) = (0u64, 0);
        while i < n {
            let d = rest[i].wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            // Up to 19 digits fit in a u64; a 20th makes the line take the general path.
            v = v.wrapping_mul(10).wrapping_add(u64::from(d));
            i += 1;
        }
        if i == 0 || i == n || rest[i] != b'\n' {
            return None;
        }
        self.start += i + 1;
        self.line += 1;
        Some(v)
    }

    /// `next_digits_line`'s eight-byte path over as many lines as it takes, each value
    /// turned into a request by `req` and pushed to `out` (until it holds `max`): the same
    /// lines, values and count as that many calls, the buffer's cursor kept in a local.
    /// Stops before the first line the path does not take (the caller goes on with
    /// `next_digits_line` and the general path).
    #[inline]
    pub(crate) fn digits_lines_into<T>(
        &mut self,
        out: &mut Vec<T>,
        max: usize,
        req: impl Fn(u64) -> T,
    ) {
        let buf = &self.buf[..self.end];
        let mut start = self.start;
        let mut n = 0u64;
        while out.len() < max {
            let Some(b) = buf.get(start..).and_then(|r| r.first_chunk::<8>()) else {
                break;
            };
            let Some((v, i)) = digits_line_word(u64::from_le_bytes(*b)) else {
                break;
            };
            if b[i] != b'\n' {
                break;
            }
            start += i + 1;
            n += 1;
            out.push(req(v));
        }
        self.start = start;
        self.line += n;
    }

    /// The next line's bytes without its line ending (not checked to be UTF-8), or None
    /// at the end of the file. Lines are returned in place from the reader's own buffer
    /// (no copy); a line that crosses the end of what was read is moved to the buffer's
    /// front and the rest read after it. Memory stays bounded: a line longer than 1 MiB is
    /// an error as soon as that much was read without its end.
    pub(crate) fn next_line_bytes(&mut self) -> Result<Option<&[u8]>, RecErr> {
        let mut scan = self.start;
        loop {
            let (s, e) = match self.buf[scan..self.end].iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let nl = scan + i;
                    let s = self.start;
                    self.start = nl + 1;
                    (s, nl)
                }
                None if self.eof => {
                    if self.start == self.end {
                        return Ok(None);
                    }
                    let s = self.start;
                    self.start = self.end;
                    (s, self.end)
                }
                None => {
                    if self.end - self.start > LINE_MAX {
                        return Err((Some(self.line + 1), None, "line longer than 1 MiB".into()));
                    }
                    // Nothing up to `end` ends the line: scan only what is read next.
                    let scanned = self.end - self.start;
                    self.refill()?;
                    scan = self.start + scanned;
                    continue;
                }
            };
            self.line += 1;
            if self.start - s > LINE_MAX {
                return Err((Some(self.line), None, "line longer than 1 MiB".into()));
            }
            let mut e = e;
            while e > s && matches!(self.buf[e - 1], b'\n' | b'\r') {
                e -= 1;
            }
            return Ok(Some(&self.buf[s..e]));
        }
    }

    /// Move the unread bytes to the front and read more after them (sets `eof` at the end
    /// of the input).
    fn refill(&mut self) -> Result<(), RecErr> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < LINES_CHUNK / 2 {
            self.buf.resize(self.end + LINES_CHUNK, 0);
        }
        loop {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err((Some(self.line + 1), None, format!("read error: {e}"))),
            }
        }
    }

    /// The next line without its line ending, or None at the end of the file.
    pub(crate) fn next_line(&mut self) -> Result<Option<&str>, RecErr> {
        let line = self.line + 1;
        match self.next_line_bytes()? {
            None => Ok(None),
            Some(b) => match std::str::from_utf8(b) {
                Ok(s) => Ok(Some(s)),
                Err(_) => Err((Some(line), None, "not valid UTF-8 text".into())),
            },
        }
    }
}

/// Read exactly `buf.len()` bytes: Ok(false) at a clean end of file, an error naming the
/// record when the file ends inside it.
pub(crate) fn read_record(
    input: &mut dyn BufRead,
    buf: &mut [u8],
    record: u64,
) -> Result<bool, RecErr> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err((Some(record), None, format!("read error: {e}"))),
        }
    }
    if got == 0 {
        return Ok(false);
    }
    if got < buf.len() {
        return Err((
            Some(record),
            None,
            format!(
                "truncated record: {got} of {} bytes (the file ends inside it)",
                buf.len()
            ),
        ));
    }
    Ok(true)
}

/// What a column of a comma-separated trace's first line must be for [`csv_shape`].
#[derive(Clone, Copy)]
pub(crate) enum Col {
    /// Decimal digits.
    Num,
    /// One of these words (any case).
    Word(&'static [&'static str]),
    /// Anything.
    Any,
}

/// Whether `line` (a trace's first line) is `schema`'s header (its column names, any case)
/// or, when `cols` is given, a record of that shape: what a format's `guess` reads of a
/// `.csv` whose name does not say.
pub(crate) fn csv_shape(line: &str, schema: &str, cols: Option<&[Col]>) -> bool {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let names: Vec<&str> = schema.split(',').collect();
    if f.len() != names.len() {
        return false;
    }
    if f.iter().zip(&names).all(|(a, b)| a.eq_ignore_ascii_case(b)) {
        return true;
    }
    let Some(cols) = cols else {
        return false;
    };
    f.iter().zip(cols).all(|(v, c)| match c {
        Col::Num => !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()),
        Col::Word(w) => w.iter().any(|w| v.eq_ignore_ascii_case(w)),
        Col::Any => true,
    })
}

/// A comma-separated block trace whose records are `schema`'s columns
/// (`Timestamp,Offset,…`; `what` names the format in errors, "an MSR"), every record line a
/// request of its own (MSR, Alibaba, Tencent CBS): `parse` makes the request of line `n`'s
/// fields (trimmed). Blank lines and a header (a first line starting with a letter) are
/// skipped; a wrong column count is an error naming the line.
pub(crate) fn csv_records(
    input: Box<dyn BufRead>,
    schema: &'static str,
    what: &'static str,
    mut parse: impl FnMut(u64, &[&str]) -> Result<Request, RecErr> + 'static,
) -> Box<dyn RecordSource> {
    let columns = schema.split(',').count();
    Box::new(FieldRecords::new(
        input,
        Sep::Comma,
        Box::new(move |n, f| {
            if n == 1 && f[0].starts_with(|c: char| c.is_ascii_alphabetic()) {
                return Ok(None);
            }
            if f.len() != columns {
                return Err((
                    Some(n),
                    None,
                    format!(
                        "wrong column count: {} column(s), {what} record has {columns} ({schema})",
                        f.len()
                    ),
                ));
            }
            parse(n, f).map(Some)
        }),
    ))
}

/// How a text block trace separates a line's fields.
#[derive(Clone, Copy)]
pub(crate) enum Sep {
    /// Runs of white space (FIU, ARC, blkparse).
    Whitespace,
    /// Commas, white space around a field trimmed (SPC, and the CSVs of `csv_records`).
    Comma,
}

/// What a text trace's `parse` makes of line `n`'s fields: a request, or None for a line to
/// skip (blkparse's other actions and summaries).
pub(crate) type ParseLine = Box<dyn FnMut(u64, &[&str]) -> Result<Option<Request>, RecErr>>;

/// A text trace read line by line: blank lines skipped, every other line's fields (split
/// at `sep`) given to `parse`. The line loop of the readers whose lines are records of
/// their own (FIU, SPC, ARC, blkparse, and MSR, Alibaba and Tencent through `csv_records`).
pub(crate) struct FieldRecords {
    lines: Lines,
    sep: Sep,
    parse: ParseLine,
}

impl FieldRecords {
    pub(crate) fn new(input: Box<dyn BufRead>, sep: Sep, parse: ParseLine) -> FieldRecords {
        FieldRecords {
            lines: Lines::new(input),
            sep,
            parse,
        }
    }
}

impl RecordSource for FieldRecords {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        loop {
            let n = self.lines.line + 1;
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            if line.trim().is_empty() {
                continue;
            }
            let f: Vec<&str> = match self.sep {
                Sep::Whitespace => line.split_whitespace().collect(),
                Sep::Comma => line.split(',').map(str::trim).collect(),
            };
            if let Some(r) = (self.parse)(n, &f)? {
                return Ok(Some(r));
            }
        }
    }
}

/// FNV-1a, 64 bits: string ids to numbers (deterministic, no table).
pub fn fnv1a(s: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Parse an unsigned integer field (decimal, or hex with 0x), naming the field on error.
pub(crate) fn parse_u64(s: &str, record: u64, field: &str) -> Result<u64, RecErr> {
    let t = s.trim();
    let r = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        t.parse::<u64>()
    };
    r.map_err(|_| {
        (
            Some(record),
            Some(field.to_string()),
            format!("\"{t}\" is not a non-negative integer"),
        )
    })
}

/// Parse an unsigned integer field counting units of `unit` bytes (sectors, blocks) into
/// bytes, naming the field on error ("too large" when the bytes overflow).
pub(crate) fn parse_units(s: &str, record: u64, field: &str, unit: u64) -> Result<u64, RecErr> {
    parse_u64(s, record, field)?
        .checked_mul(unit)
        .ok_or_else(|| {
            (
                Some(record),
                Some(field.to_string()),
                "too large".to_string(),
            )
        })
}

/// Parse a non-negative decimal number of seconds (`12`, `12.5`) into ns.
pub(crate) fn parse_seconds_ns(s: &str, record: u64, field: &str) -> Result<u64, RecErr> {
    let t = s.trim();
    let bad = || {
        (
            Some(record),
            Some(field.to_string()),
            format!("\"{t}\" is not a time in seconds"),
        )
    };
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let secs: u64 = int.parse().map_err(|_| bad())?;
    let mut ns: u64 = 0;
    for (i, d) in frac.bytes().take(9).enumerate() {
        ns += u64::from(d - b'0') * 10u64.pow(8 - i as u32);
    }
    secs.checked_mul(1_000_000_000)
        .and_then(|v| v.checked_add(ns))
        .ok_or_else(bad)
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Read all of `bytes` in `format`: the requests, or the first error.
    pub fn read_all(bytes: &[u8], name: &str, format: &Format) -> Result<Vec<Request>, TraceError> {
        let r =
            TraceReader::from_reader(Box::new(std::io::Cursor::new(bytes.to_vec())), name, format)?;
        r.collect()
    }

    /// zstd-compress.
    pub fn zst(bytes: &[u8]) -> Vec<u8> {
        zstd::stream::encode_all(bytes, 3).expect("compress")
    }

    /// gzip-compress.
    pub fn gz(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).expect("compress");
        e.finish().expect("compress")
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;

    /// A reader that hands out at most `chunk` bytes per read (lines cross reads).
    struct Trickle {
        data: Vec<u8>,
        at: usize,
        chunk: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.chunk.min(buf.len()).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn all_lines(data: &[u8], chunk: usize) -> Result<Vec<Vec<u8>>, RecErr> {
        let input = BufReader::with_capacity(
            chunk,
            Trickle {
                data: data.to_vec(),
                at: 0,
                chunk,
            },
        );
        let mut l = Lines::new(Box::new(input));
        let mut out = Vec::new();
        while let Some(b) = l.next_line_bytes()? {
            out.push(b.to_vec());
            assert_eq!(l.line, out.len() as u64, "line numbers count the lines");
        }
        Ok(out)
    }

    /// `Lines::next_digits_line` as its byte loop reads a line (the reference of the
    /// eight-byte path): the value and the bytes consumed, or None.
    fn digits_line_bytewise(rest: &[u8]) -> Option<(u64, usize)> {
        let n = rest.len().min(20);
        let (mut v, mut i) = (0u64, 0);
        while i < n && rest[i].is_ascii_digit() {
            v = v.wrapping_mul(10).wrapping_add(u64::from(rest[i] - b'0'));
            i += 1;
        }
        (i > 0 && i < n && rest[i] == b'\n').then_some((v, i + 1))
    }

    proptest::proptest! {
        #[test]
        fn digits_lines_read_eight_bytes_at_a_time_as_byte_by_byte(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    6 => b'0'..=b'9',
                    2 => proptest::strategy::Just(b'\n'),
                    1 => proptest::prelude::any::<u8>(),
                ],
                0..40,
            )
        ) {
            let mut l = Lines::new(Box::new(std::io::empty()));
            l.end = bytes.len();
            l.buf = bytes.clone();
            let got = l.next_digits_line().map(|v| (v, l.start));
            proptest::prop_assert_eq!(got, digits_line_bytewise(&bytes));
        }
    }

    #[test]
    fn lines_split_on_newlines_whatever_the_read_sizes() {
        // Line endings \n and \r\n, an empty line, a last line without an ending, and
        // a line longer than a whole read chunk.
        let long = "x".repeat(3 * LINES_CHUNK + 17);
        let text = format!("1\r\n22\n\n{long}\n333\r\n4444");
        let want: Vec<Vec<u8>> = text
            .split('\n')
            .map(|l| l.trim_end_matches('\r').as_bytes().to_vec())
            .collect();
        for chunk in [1, 2, 3, 7, 4096, 1 << 20] {
            assert_eq!(
                all_lines(text.as_bytes(), chunk).unwrap(),
                want,
                "chunk {chunk}"
            );
        }
        assert_eq!(all_lines(b"", 5).unwrap(), Vec::<Vec<u8>>::new());
        assert_eq!(all_lines(b"\n", 5).unwrap(), vec![Vec::<u8>::new()]);
    }

    #[test]
    fn a_line_over_one_mib_is_an_error_naming_it() {
        let text = format!("1\n{}\n2\n", "y".repeat(LINE_MAX + 5));
        for chunk in [4096, 1 << 21] {
            let e = all_lines(text.as_bytes(), chunk).unwrap_err();
            assert_eq!((e.0, e.2.as_str()), (Some(2), "line longer than 1 MiB"));
        }
        // Exactly 1 MiB with its ending is fine.
        let ok = format!("{}\n", "z".repeat(LINE_MAX - 1));
        assert_eq!(all_lines(ok.as_bytes(), 4096).unwrap().len(), 1);
    }

    #[test]
    fn every_registered_format_parses_by_each_name_and_is_listed() {
        let names = format_names();
        for d in FORMATS {
            assert!(names.contains(d.usage), "{}", d.names[0]);
            for n in d.names {
                let f = Format::parse(n).unwrap();
                assert_eq!(f, Format::of(d), "{n}");
                assert_eq!(Format::parse(&n.to_ascii_uppercase()).unwrap(), f);
                assert_eq!(Format::parse(&f.spec()).unwrap(), f, "{n}");
                assert_eq!(f.kind(), d.kind);
            }
        }
    }

    #[test]
    fn format_names_parse_and_round_trip() {
        for s in [
            "txt",
            "oracleGeneral",
            "lcs",
            "vscsi",
            "msr",
            "blkparse:action=D",
            "csv",
        ] {
            let f = Format::parse(s).unwrap();
            assert_eq!(Format::parse(&f.spec()).unwrap(), f, "{s}");
        }
        let opts = " time-col=1, obj-id-col=2, obj-size-col=3, delimiter=,, has-header=true";
        let f = Format::parse(&format!("csv:{opts}")).unwrap();
        let o = csv::CsvOptions::parse(opts).unwrap();
        assert_eq!(f, Format::parse(&format!("csv:{}", o.spell())).unwrap());
        assert_eq!(
            (
                o.time_col,
                o.obj_id_col,
                o.obj_size_col,
                o.delimiter,
                o.has_header
            ),
            (1, 2, 3, b',', true)
        );
        assert!(Format::parse("nope")
            .unwrap_err()
            .contains("unknown trace format"));
        assert!(Format::parse("csv:obj-id-col=x")
            .unwrap_err()
            .contains("column number"));
        assert!(Format::parse("csv:bogus=1")
            .unwrap_err()
            .contains("unknown option"));
        assert!(Format::parse("vscsi:x=1")
            .unwrap_err()
            .contains("takes no options"));
    }

    #[test]
    fn guess_from_names() {
        let g = |n: &str| Format::guess(Path::new(n));
        let f = |d: &'static FormatDef| Some(Format::of(d));
        assert_eq!(g("a.oracleGeneral.bin.zst"), f(&oracle::FORMAT));
        assert_eq!(g("a.oracleGeneral.txt"), f(&oracle::FORMAT));
        assert_eq!(g("w82.lcs.zst"), f(&lcs::FORMAT));
        assert_eq!(g("w01.vscsi"), f(&vscsi::FORMAT));
        assert_eq!(g("w106_vscsi1.vscsitrace"), f(&vscsi::FORMAT));
        assert_eq!(g("x.txt.zst"), f(&txt::FORMAT));
        assert_eq!(g("msr_hm_0.csv"), f(&msr::FORMAT));
        assert_eq!(g("hm_0.csv"), f(&csv::FORMAT));
        assert_eq!(g("alibaba_io_traces.csv.zst"), f(&alibaba::FORMAT));
        assert_eq!(g("tencent-2018-10-01-01.csv"), f(&tencent::FORMAT));
        assert_eq!(g("sda.blktrace"), f(&blkparse::FORMAT));
        assert_eq!(g("Financial1.spc.gz"), f(&spc::FORMAT));
        assert_eq!(g("P6.lis.zst"), f(&arc::FORMAT));
        assert_eq!(g("webmail.fiu"), f(&fiu::FORMAT));
        assert_eq!(g("data.bin"), None);
    }

    #[test]
    fn corrupt_zstd_is_an_error_naming_the_file() {
        let mut z = zst(b"1\n2\n3\n");
        let n = z.len();
        for b in &mut z[6..n] {
            *b ^= 0x5a;
        }
        let e = read_all(&z, "t.txt.zst", &Format::of(&txt::FORMAT)).unwrap_err();
        assert_eq!(e.file, "t.txt.zst");
        assert!(
            e.to_string().contains("zstd") || e.to_string().contains("read error"),
            "{e}"
        );
        let e = read_all(b"1\n2\n", "t.txt.zst", &Format::of(&txt::FORMAT)).unwrap_err();
        assert!(e.msg.contains("magic"), "{e}");
    }

    #[test]
    fn zstd_round_trip() {
        let z = zst(b"7\n8\n");
        let r = read_all(&z, "t.txt.zst", &Format::of(&txt::FORMAT)).unwrap();
        assert_eq!(r.iter().map(|r| r.id).collect::<Vec<_>>(), vec![7, 8]);
    }

    #[test]
    fn gzip_round_trip_and_concatenated_members() {
        let f = Format::of(&txt::FORMAT);
        let r = read_all(&gz(b"7\n8\n"), "t.txt.gz", &f).unwrap();
        assert_eq!(r.iter().map(|r| r.id).collect::<Vec<_>>(), vec![7, 8]);
        // `cat a.gz b.gz` (and bgzip's blocks): one stream. The magic, not the name, tells.
        let mut two = gz(b"1\n2\n");
        two.extend(gz(b"3\n"));
        let r = read_all(&two, "t.txt", &f).unwrap();
        assert_eq!(r.iter().map(|r| r.id).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn corrupt_or_truncated_gzip_is_an_error_naming_the_file() {
        let f = Format::of(&txt::FORMAT);
        let text: String = (0..20_000).map(|i| format!("{i}\n")).collect();
        let z = gz(text.as_bytes());
        // Cut short: the deflate stream ends early.
        let e = read_all(&z[..z.len() / 2], "t.txt.gz", &f).unwrap_err();
        assert_eq!(e.file, "t.txt.gz");
        assert!(e.to_string().contains("gzip"), "{e}");
        // Bytes changed after the header: bad deflate data or a CRC that does not match.
        let mut bad = z.clone();
        let n = bad.len();
        for b in &mut bad[n - 12..n - 8] {
            *b ^= 0xff;
        }
        let e = read_all(&bad, "t.txt.gz", &f).unwrap_err();
        assert!(e.to_string().contains("gzip"), "{e}");
        // A .gz name on a file that is not gzip.
        let e = read_all(b"1\n2\n", "t.txt.gz", &f).unwrap_err();
        assert!(e.msg.contains(".gz") && e.msg.contains("magic"), "{e}");
    }

    #[test]
    fn a_tar_archive_is_an_error_saying_to_extract_it() {
        // A ustar header block: the name, then "ustar" at byte 257.
        let mut tar = vec![0u8; 1024];
        tar[..9].copy_from_slice(b"hm_0.csv\0");
        tar[257..263].copy_from_slice(b"ustar\0");
        for (bytes, name) in [(tar.clone(), "t.tar"), (gz(&tar), "t.tgz")] {
            let e = read_all(&bytes, name, &Format::of(&msr::FORMAT)).unwrap_err();
            assert_eq!(e.file, name);
            assert!(e.msg.contains("tar archive"), "{e}");
        }
    }

    #[test]
    fn guess_reads_the_first_line_of_a_csv() {
        let dir = std::env::temp_dir().join(format!("mmsim-guess-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let g = |name: &str, bytes: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            Format::guess(&p)
        };
        let f = |d: &'static FormatDef| Some(Format::of(d));
        let msr_line = b"128166372003061629,hm,0,Read,383496192,32768,1331\n";
        assert_eq!(g("hm_0.csv", msr_line), f(&msr::FORMAT));
        assert_eq!(g("hm_1.csv.gz", &gz(msr_line)), f(&msr::FORMAT));
        let msr_header = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n";
        assert_eq!(g("x.csv", msr_header), f(&msr::FORMAT));
        let ali = b"0,R,126703644672,4096,1577808000000626\n";
        assert_eq!(g("io_traces.csv.zst", &zst(ali)), f(&alibaba::FORMAT));
        let ten = b"timestamp,offset,size,iotype,volumeid\n1538323200,8,8,1,1283\n";
        assert_eq!(g("day1.csv", ten), f(&tencent::FORMAT));
        // Headerless Tencent lines are five numbers, as a libCacheSim csv may be: csv.
        assert_eq!(g("day2.csv", b"1538323200,8,8,1,1283\n"), f(&csv::FORMAT));
        // One field off the shape: csv.
        assert_eq!(
            g(
                "y.csv",
                b"128166372003061629,hm,0,Trim,383496192,32768,1331\n"
            ),
            f(&csv::FORMAT)
        );
        assert_eq!(g("z.csv", b"1,4096\n"), f(&csv::FORMAT));
        // A name that says wins over the line; a file that cannot be read, by its name.
        assert_eq!(g("a.txt", msr_line), f(&txt::FORMAT));
        assert_eq!(Format::guess(&dir.join("absent.csv")), f(&csv::FORMAT));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn seconds_parse() {
        assert_eq!(parse_seconds_ns("1.5", 1, "t").unwrap(), 1_500_000_000);
        assert_eq!(parse_seconds_ns("0.000000001", 1, "t").unwrap(), 1);
        assert!(parse_seconds_ns("-1", 1, "t").is_err());
        assert!(parse_seconds_ns("1e3", 1, "t").is_err());
    }
}
