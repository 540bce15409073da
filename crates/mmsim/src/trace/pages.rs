//! `mmsim pages TRACE OUT`: a block trace's page requests as libCacheSim's oracleGeneral
//! binary, so textbook cache simulators replay what `mmsim replay` asks the page cache for.
//!
//! A block request asks for every 4 KiB page its byte range touches (the replay's
//! `block_pages`); each page becomes one oracleGeneral record: an object of 4,096 bytes
//! whose id is the device's index (in order of first appearance, as the replay lays the
//! devices out on files) times 2^40 plus the page's index on the device. A cache of N
//! objects of 4 KiB is then a page cache of N pages, and its miss ratio over the records is
//! a page miss ratio. Times are whole seconds from the first request (the format's u32);
//! the next-access field is -1 (unknown: the oracle policies need libCacheSim's own
//! conversion). Writes become requests like reads (oracleGeneral has no operation).
//! Object traces need no conversion: libCacheSim reads their formats itself.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::trace::{Format, TraceKind, TraceReader};

/// Arguments of `mmsim pages`.
#[derive(clap::Args, Debug, Clone)]
pub struct PagesArgs {
    /// The block trace (zstd- and gzip-compressed files are read directly).
    pub trace: PathBuf,
    /// The oracleGeneral file to write (replaced if it exists).
    pub out: PathBuf,
    /// Trace format (default: guessed from the file name and first line).
    #[arg(long, long_help = format!("Trace format: {} (default: guessed from the file name and first line)", crate::trace::format_names()))]
    pub format: Option<String>,
    /// Convert the first N requests only (as `mmsim replay --limit`).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

/// The bytes of one oracleGeneral record: u32 time (s), u64 id, u32 size, i64 next access.
const RECORD: usize = 24;

/// The page ids of a device: its index above this many bits of page index.
const PAGE_BITS: u32 = 40;

/// What a conversion wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagesSummary {
    /// Trace requests read.
    pub requests: u64,
    /// Page records written.
    pub pages: u64,
    /// Devices seen.
    pub devices: u64,
}

/// Write the page requests of block trace `trace` (format `format`, or guessed) to `out`.
pub fn write_pages(
    trace: &Path,
    format: Option<&Format>,
    limit: Option<u64>,
    out: &mut dyn Write,
) -> Result<PagesSummary, String> {
    let (reader, format) = TraceReader::open(trace, format).map_err(|e| e.to_string())?;
    if format.kind() != TraceKind::Block {
        return Err(format!(
            "{}: {} is an object trace: libCacheSim reads it as it is (pages converts block traces)",
            trace.display(),
            format.spec()
        ));
    }
    // Device id -> index, in order of first appearance.
    let mut devices: rustc_hash::FxHashMap<u64, u64> = Default::default();
    let mut s = PagesSummary {
        requests: 0,
        pages: 0,
        devices: 0,
    };
    let mut t0: Option<u64> = None;
    let mut rec = [0u8; RECORD];
    rec[12..16].copy_from_slice(&(super::PAGE_SIZE as u32).to_le_bytes());
    rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
    for r in reader {
        if limit.is_some_and(|l| s.requests >= l) {
            break;
        }
        let r = r.map_err(|e| e.to_string())?;
        s.requests += 1;
        let next = devices.len() as u64;
        let dev = *devices.entry(r.id).or_insert(next);
        let start = *t0.get_or_insert(r.time_ns);
        let secs = r.time_ns.saturating_sub(start) / 1_000_000_000;
        rec[0..4].copy_from_slice(&(secs.min(u64::from(u32::MAX)) as u32).to_le_bytes());
        let end = r.offset.checked_add(r.len.max(1));
        if end.is_none_or(|e| e > (1 << PAGE_BITS) * super::PAGE_SIZE) {
            return Err(format!(
                "{}: request {}: offset {} is past the {} TiB a device's page ids hold",
                trace.display(),
                s.requests,
                r.offset,
                ((1u64 << PAGE_BITS) * super::PAGE_SIZE) >> 40
            ));
        }
        let (first, n) = crate::workload::replay::block_pages(r.offset, r.len);
        for p in first..first + n {
            rec[4..12].copy_from_slice(&(dev << PAGE_BITS | p).to_le_bytes());
            out.write_all(&rec).map_err(|e| format!("writing: {e}"))?;
        }
        s.pages += n;
    }
    s.devices = devices.len() as u64;
    Ok(s)
}

/// `mmsim pages`: convert, then print what was written.
pub fn cmd_pages(a: &PagesArgs) -> Result<std::process::ExitCode, String> {
    let format = a
        .format
        .as_deref()
        .map(|f| Format::parse(f).map_err(|e| format!("--format: {e}")))
        .transpose()?;
    crate::run::check_output_file("OUT", &a.out)?;
    let file = std::fs::File::create(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let s = write_pages(&a.trace, format.as_ref(), a.limit, &mut w)
        .and_then(|s| w.flush().map(|_| s).map_err(|e| format!("writing: {e}")))
        .map_err(|e| {
            let _ = std::fs::remove_file(&a.out);
            format!("{e} ({} removed)", a.out.display())
        })?;
    println!(
        "{}: {} requests, {} page records of {} devices -> {} (oracleGeneral)",
        a.trace.display(),
        s.requests,
        s.pages,
        s.devices,
        a.out.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(bytes: &[u8]) -> Vec<(u32, u64, u32, i64)> {
        bytes
            .chunks(RECORD)
            .map(|c| {
                (
                    u32::from_le_bytes(c[0..4].try_into().unwrap()),
                    u64::from_le_bytes(c[4..12].try_into().unwrap()),
                    u32::from_le_bytes(c[12..16].try_into().unwrap()),
                    i64::from_le_bytes(c[16..24].try_into().unwrap()),
                )
            })
            .collect()
    }

    #[test]
    fn each_page_a_request_touches_is_one_record_of_its_device() {
        let dir = std::env::temp_dir().join(format!("mmsim-pages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("t.csv");
        // MSR: 100 ns ticks. Device (hm, 1) first; a request across a page boundary; then
        // (hm, 0), 2.5 s later; then (hm, 1) again.
        std::fs::write(
            &p,
            "1000,hm,1,Read,4000,200,1\n1000,hm,0,Write,8192,4096,1\n\
             25001000,hm,1,Read,0,1,1\n",
        )
        .unwrap();
        let f = Format::parse("msr").unwrap();
        let mut out = Vec::new();
        let s = write_pages(&p, Some(&f), None, &mut out).unwrap();
        assert_eq!((s.requests, s.pages, s.devices), (3, 4, 2));
        let r = records(&out);
        assert_eq!(
            r,
            vec![
                (0, 0, 4096, -1),
                (0, 1, 4096, -1),
                (0, 1 << 40 | 2, 4096, -1),
                (2, 0, 4096, -1),
            ]
        );
        let mut first = Vec::new();
        let s = write_pages(&p, Some(&f), Some(1), &mut first).unwrap();
        assert_eq!((s.requests, s.pages), (1, 2));
        assert_eq!(first, out[..2 * RECORD]);
        // An object trace is refused, naming it.
        let t = dir.join("ids.txt");
        std::fs::write(&t, "1\n2\n").unwrap();
        let e = write_pages(&t, None, None, &mut Vec::new()).unwrap_err();
        assert!(e.contains("ids.txt") && e.contains("object trace"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
