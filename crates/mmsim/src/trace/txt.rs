//! libCacheSim's txt traces: one object id per line (a number, or any other string,
//! hashed to 64 bits with FNV-1a). No time, no size (the replay's `object_size` applies).

use super::{fnv1a, Lines, RecErr, RecordSource, Request};
use std::io::BufRead;

/// Reads a txt trace.
pub struct TxtReader {
    lines: Lines,
}

impl TxtReader {
    /// A reader of `input`.
    pub fn new(input: Box<dyn BufRead>) -> TxtReader {
        TxtReader {
            lines: Lines::new(input),
        }
    }
}

/// The value of a line of 1 to 19 ASCII digits (always within u64), None for any other
/// line: those take the general path (UTF-8 check, trim, parse or hash).
fn plain_number(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    Some(v)
}

impl RecordSource for TxtReader {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        loop {
            let line_no = self.lines.line + 1;
            let Some(bytes) = self.lines.next_line_bytes()? else {
                return Ok(None);
            };
            let id = match plain_number(bytes) {
                Some(v) => v,
                None => {
                    let Ok(line) = std::str::from_utf8(bytes) else {
                        return Err((Some(line_no), None, "not valid UTF-8 text".into()));
                    };
                    let t = line.trim();
                    if t.is_empty() {
                        continue;
                    }
                    t.parse::<u64>().unwrap_or_else(|_| fnv1a(t.as_bytes()))
                }
            };
            return Ok(Some(Request {
                time_ns: 0,
                id,
                offset: 0,
                len: 0,
                write: false,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    #[test]
    fn one_id_per_line() {
        let r = read_all(b"1\n\n2\r\nabc\n1\n", "t.txt", &Format::Txt).unwrap();
        assert_eq!(r.len(), 4);
        assert_eq!((r[0].id, r[1].id), (1, 2));
        assert_eq!(r[3].id, 1);
    }

    #[test]
    fn plain_numbers_and_the_general_path_agree() {
        // The digit fast path and the general one (trim, parse, else FNV-1a) give one id.
        let r = read_all(
            b"42\n 42 \n+42\n0042\n18446744073709551615\n18446744073709551616\nx1\n",
            "t.txt",
            &Format::Txt,
        )
        .unwrap();
        let ids: Vec<u64> = r.iter().map(|q| q.id).collect();
        assert_eq!(&ids[..5], &[42, 42, 42, 42, u64::MAX]);
        assert_eq!(ids[5], crate::trace::fnv1a(b"18446744073709551616"));
        assert_eq!(ids[6], crate::trace::fnv1a(b"x1"));
        assert_eq!(
            super::plain_number(b"9999999999999999999"),
            Some(9_999_999_999_999_999_999)
        );
        assert_eq!(super::plain_number(b"12a"), None);
    }

    #[test]
    fn lines_across_buffer_refills_are_whole() {
        // Many short lines and one long one: lines that cross the reader's 64 KiB buffer
        // come out whole.
        let mut text = String::new();
        for i in 0..30_000u64 {
            text.push_str(&format!("{}\n", i * 7));
        }
        text.push_str(&"9".repeat(70_000));
        text.push('\n');
        text.push_str("5\n");
        let r = read_all(text.as_bytes(), "t.txt", &Format::Txt).unwrap();
        assert_eq!(r.len(), 30_002);
        assert!(r[..30_000]
            .iter()
            .enumerate()
            .all(|(i, q)| q.id == i as u64 * 7));
        assert_eq!(
            r[30_000].id,
            crate::trace::fnv1a("9".repeat(70_000).as_bytes())
        );
        assert_eq!(r[30_001].id, 5);
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let e = read_all(b"1\n\xff\xfe\n", "t.txt", &Format::Txt).unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("t.txt", Some(2)));
    }
}
