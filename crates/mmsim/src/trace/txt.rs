//! libCacheSim's txt traces: one object id per line (a number, or any other string,
//! hashed to 64 bits with FNV-1a). No time, no size (the replay's `object_size` applies).

use super::{fnv1a, Lines, RecErr, RecordSource, Request};
use std::io::BufRead;

/// `txt` (or `plainTxt`, libCacheSim's name): `*.txt`.
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["txt", "plainTxt"],
    usage: "txt",
    kind: super::TraceKind::Object,
    guess: |name, _| name.ends_with(".txt"),
    options: super::no_options,
    reader: |input, _| Box::new(TxtReader::new(input)),
};

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

/// The request of object `id`.
#[inline]
fn request(id: u64) -> Request {
    Request {
        time_ns: 0,
        id,
        offset: 0,
        len: 0,
        write: false,
        delete: false,
    }
}

impl TxtReader {
    /// The next request by the general path (any line `Lines::next_digits_line` did not
    /// take): UTF-8 check, trim, parse or hash; blank lines skipped.
    fn next_general(&mut self) -> Result<Option<Request>, RecErr> {
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
            return Ok(Some(request(id)));
        }
    }
}

impl RecordSource for TxtReader {
    /// Runs of short plain-digit lines take `Lines::digits_lines_into`, other lines of plain
    /// digits `Lines::next_digits_line`; the rest `next_general`.
    fn next_batch(&mut self, out: &mut Vec<Request>, max: usize) -> Result<(), RecErr> {
        while out.len() < max {
            self.lines.digits_lines_into(out, max, request);
            if out.len() >= max {
                break;
            }
            if let Some(id) = self.lines.next_digits_line() {
                out.push(request(id));
                continue;
            }
            match self.next_general()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(())
    }

    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        match self.lines.next_digits_line() {
            Some(id) => Ok(Some(request(id))),
            None => self.next_general(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    #[test]
    fn one_id_per_line() {
        let r = read_all(b"1\n\n2\r\nabc\n1\n", "t.txt", &Format::of(&super::FORMAT)).unwrap();
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
            &Format::of(&super::FORMAT),
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
    fn an_error_comes_after_the_requests_before_it_and_ends_the_trace() {
        // Requests are decoded in batches: the 100 good lines before a bad one come out
        // first, then the error naming line 101, then nothing (the lines after it are
        // never read).
        let mut text: Vec<u8> = (0..100u64)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        text.extend_from_slice(b"\xff\xfe\n7\n8\n");
        let mut r = crate::trace::TraceReader::from_reader(
            Box::new(std::io::Cursor::new(text)),
            "bad.txt",
            &Format::of(&super::FORMAT),
        )
        .unwrap();
        for i in 0..100u64 {
            assert_eq!(r.next().unwrap().unwrap().id, i);
        }
        let e = r.next().unwrap().unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("bad.txt", Some(101)));
        assert!(r.next().is_none());
        assert_eq!(r.records(), 100);
    }

    #[test]
    fn the_digit_fast_path_leaves_other_lines_to_the_general_one() {
        // Twenty digits (within u64: parsed, not hashed), a CR, a sign, a last line without
        // its newline: each reads as the general path reads it alone.
        let text = b"12345678901234567890\n12\r\n-3\n00\n99";
        let r = read_all(text, "t.txt", &Format::of(&super::FORMAT)).unwrap();
        let ids: Vec<u64> = r.iter().map(|q| q.id).collect();
        assert_eq!(
            ids,
            vec![
                12_345_678_901_234_567_890,
                12,
                crate::trace::fnv1a(b"-3"),
                0,
                99
            ]
        );
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
        let r = read_all(text.as_bytes(), "t.txt", &Format::of(&super::FORMAT)).unwrap();
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

    proptest::proptest! {
        /// A batch (`next_batch`, its run of plain digit lines in one loop) reads the
        /// same requests, errors and line numbers as request by request (`next_record`).
        #[test]
        fn batches_read_as_records_one_by_one(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    4 => "[0-9]{1,7}",
                    2 => "[0-9]{8,21}",
                    1 => "[ +]?[0-9a-z]{0,3}\\r?",
                    1 => proptest::strategy::Just(String::new()),
                ],
                0..200,
            ),
            max in 1usize..80,
        ) {
            use crate::trace::RecordSource;
            let text = lines.join("\n");
            let reader = || {
                super::TxtReader::new(Box::new(std::io::Cursor::new(text.clone().into_bytes())))
            };
            let mut one = reader();
            let mut want = Vec::new();
            while let Some(r) = one.next_record().unwrap() {
                want.push(r);
            }
            let mut batched = reader();
            let mut got = Vec::new();
            loop {
                let before = got.len();
                batched.next_batch(&mut got, before + max).unwrap();
                proptest::prop_assert!(got.len() <= before + max);
                if got.len() == before {
                    break;
                }
            }
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert_eq!(batched.lines.line, one.lines.line);
        }
    }

    #[test]
    fn invalid_utf8_names_the_line() {
        let e = read_all(b"1\n\xff\xfe\n", "t.txt", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("t.txt", Some(2)));
    }
}
