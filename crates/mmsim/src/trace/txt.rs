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

impl RecordSource for TxtReader {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        loop {
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            let id = t.parse::<u64>().unwrap_or_else(|_| fnv1a(t.as_bytes()));
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
    fn invalid_utf8_names_the_line() {
        let e = read_all(b"1\n\xff\xfe\n", "t.txt", &Format::Txt).unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("t.txt", Some(2)));
    }
}
