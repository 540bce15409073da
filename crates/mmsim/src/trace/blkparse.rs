//! blkparse's default text output, one event per line:
//!
//! ```text
//!   8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]
//!   dev   cpu  sequence  time (s.ns)   pid act rwbs sector + sectors [process]
//! ```
//!
//! Events of one action (default `Q`, queued; `D` issued and `C` completed are the usual
//! alternatives) with a sector range are requests: offset = sector × 512, length = sectors ×
//! 512, a write when RWBS holds `W`, a read when it holds `R` (others — discards, flushes
//! without data, and any event of zero sectors such as a preflush's `FWS 0 + 0` — are
//! skipped). The device is `major,minor`. Lines not starting with a
//! `major,minor` field (the per-CPU and total summaries at the end) are skipped; an event
//! line of the chosen action that does not parse is an error naming the line and field.

use super::{fnv1a, parse_seconds_ns, parse_u64, RecErr, Request};

/// `blkparse[:action=Q]`: `*.blkparse`, `*.blktrace`. The one option, `action=<letter>`, is
/// the action whose events are requests (`Q` unless given).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["blkparse"],
    usage: "blkparse[:action=Q]",
    kind: super::TraceKind::Block,
    guess: |name, _| name.ends_with(".blkparse") || name.ends_with(".blktrace"),
    options: |o| action(o).map(|a| format!("action={a}")),
    reader: |input, o| {
        let a = action(o)
            .expect("spelled by the format's options")
            .to_string();
        Box::new(super::FieldRecords::new(
            input,
            super::Sep::Whitespace,
            Box::new(move |n, f| parse(n, f, &a)),
        ))
    },
};

/// The action of `blkparse`'s options (`action=D`; `Q` when not given).
fn action(opts: &str) -> Result<char, String> {
    let mut action = 'Q';
    for kv in opts.split(',').map(str::trim) {
        if kv.is_empty() {
            continue;
        }
        match kv.split_once('=') {
            Some(("action", a)) if a.trim().len() == 1 => {
                action = a.trim().chars().next().expect("one char")
            }
            _ => {
                return Err(format!(
                    "option \"{kv}\": expected action=<letter> (Q, D, C, …)"
                ))
            }
        }
    }
    Ok(action)
}

fn is_dev(s: &str) -> bool {
    match s.split_once(',') {
        Some((a, b)) => {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The request of line `n`'s fields `f` when it is an event of `action` with a sector
/// range; None for a line to skip.
fn parse(n: u64, f: &[&str], action: &str) -> Result<Option<Request>, RecErr> {
    if !is_dev(f[0]) {
        return Ok(None);
    }
    if f.len() < 7 {
        return Err((
            Some(n),
            None,
            format!("wrong column count: {} field(s); an event has at least 7 (dev cpu seq time pid action rwbs)", f.len()),
        ));
    }
    if f[5] != action {
        return Ok(None);
    }
    let rwbs = f[6];
    if f.len() < 10 || f[8] != "+" {
        // No sector range (a flush, a plug): not a data request.
        return Ok(None);
    }
    let write = rwbs.contains('W');
    if !write && !rwbs.contains('R') {
        return Ok(None);
    }
    let time_ns = parse_seconds_ns(f[3], n, "time")?;
    let sector = parse_u64(f[7], n, "sector")?;
    let sectors = parse_u64(f[9], n, "sectors")?;
    if sectors == 0 {
        // `FWS 0 + 0`: a preflush (or another request without data), not a read or write.
        return Ok(None);
    }
    let bad = |what: &str| {
        (
            Some(n),
            Some(what.to_string()),
            "value too large".to_string(),
        )
    };
    Ok(Some(Request {
        time_ns,
        id: fnv1a(f[0].as_bytes()),
        offset: sector.checked_mul(512).ok_or_else(|| bad("sector"))?,
        len: sectors.checked_mul(512).ok_or_else(|| bad("sectors"))?,
        write,
        delete: false,
    }))
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    const T: &[u8] = b"  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n\
  8,0    3        2     0.000001000   697  G  WS 223490 + 8 [kjournald]\n\
  8,0    3        3     0.500000000   697  Q   R 100 + 16 [cat]\n\
  8,0    3        4     0.600000000   697  Q  FN [kworker]\n\
  8,0    3        5     0.700000000   697  Q FWS 0 + 0 [jbd2]\n\
CPU3 (8,0):\n Reads Queued:           1,        8KiB\n";

    #[test]
    fn reads_queue_events() {
        let f = Format::parse("blkparse").unwrap();
        let r = read_all(T, "t.blkparse", &f).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].offset, r[0].len, r[0].write),
            (223490 * 512, 4096, true)
        );
        assert_eq!(
            (r[1].time_ns, r[1].offset, r[1].len, r[1].write),
            (500_000_000, 51200, 8192, false)
        );
        let g = Format::parse("blkparse:action=G").unwrap();
        assert_eq!(read_all(T, "t", &g).unwrap().len(), 1);
        assert_eq!(read_all(&zst(T), "t.blkparse.zst", &f).unwrap(), r);
    }

    #[test]
    fn bad_event_names_line_and_field() {
        let f = Format::parse("blkparse").unwrap();
        let e = read_all(b"  8,0 3 1 0.1 697 Q R x + 8 [a]\n", "b.txt", &f).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.record, e.field.as_deref()),
            ("b.txt", Some(1), Some("sector"))
        );
        let e = read_all(b"  8,0 3 1 0.1 697\n", "b.txt", &f).unwrap_err();
        assert!(e.msg.contains("wrong column count"), "{e}");
    }
}
