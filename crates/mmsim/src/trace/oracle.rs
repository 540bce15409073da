//! libCacheSim's oracleGeneral binary traces: packed little-endian 24-byte records
//!
//! ```text
//! offset 0  u32 clock_time        seconds
//! offset 4  u64 obj_id
//! offset 12 u32 obj_size          bytes
//! offset 16 i64 next_access_vtime (-1: never again; not used here)
//! ```
//!
//! An object trace. A file whose length is not a multiple of 24 ends in a truncated
//! record: an error naming it.

use super::{read_record, RecErr, RecordSource, Request};
use std::io::BufRead;

/// `oracleGeneral`: any name holding `oracleGeneral` (libCacheSim's `.oracleGeneral.bin`,
/// `.oracleGeneral.zst`).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["oracleGeneral", "oracle-general", "oracle_general"],
    usage: "oracleGeneral",
    kind: super::TraceKind::Object,
    guess: |name, _| name.contains("oraclegeneral"),
    options: super::no_options,
    reader: |input, _| Box::new(OracleGeneralReader::new(input)),
};

/// Bytes per record.
pub const RECORD_BYTES: usize = 24;

/// Reads an oracleGeneral trace.
pub struct OracleGeneralReader {
    input: Box<dyn BufRead>,
    record: u64,
}

impl OracleGeneralReader {
    /// A reader of `input`.
    pub fn new(input: Box<dyn BufRead>) -> OracleGeneralReader {
        OracleGeneralReader { input, record: 0 }
    }
}

/// Encode one record (for tests and trace generators).
pub fn encode(time_s: u32, obj_id: u64, obj_size: u32, next: i64) -> [u8; RECORD_BYTES] {
    let mut b = [0u8; RECORD_BYTES];
    b[0..4].copy_from_slice(&time_s.to_le_bytes());
    b[4..12].copy_from_slice(&obj_id.to_le_bytes());
    b[12..16].copy_from_slice(&obj_size.to_le_bytes());
    b[16..24].copy_from_slice(&next.to_le_bytes());
    b
}

impl RecordSource for OracleGeneralReader {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        let mut b = [0u8; RECORD_BYTES];
        self.record += 1;
        if !read_record(&mut *self.input, &mut b, self.record)? {
            return Ok(None);
        }
        let le4 = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let le8 = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        Ok(Some(Request {
            time_ns: u64::from(le4(0)) * 1_000_000_000,
            id: le8(4),
            offset: 0,
            len: u64::from(le4(12)),
            write: false,
            delete: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::testutil::*;
    use crate::trace::Format;

    #[test]
    fn reads_records() {
        let mut t = Vec::new();
        t.extend_from_slice(&encode(5, 42, 4096, -1));
        t.extend_from_slice(&encode(6, 43, 100, 7));
        let r = read_all(&t, "a.oracleGeneral", &Format::of(&super::FORMAT)).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].time_ns, r[0].id, r[0].len), (5_000_000_000, 42, 4096));
        assert_eq!((r[1].id, r[1].len), (43, 100));
        assert_eq!(
            read_all(&zst(&t), "a.zst", &Format::of(&super::FORMAT)).unwrap(),
            r
        );
    }

    #[test]
    fn truncated_record_names_it() {
        let mut t = encode(5, 42, 4096, -1).to_vec();
        t.extend_from_slice(&encode(6, 43, 100, 7)[..10]);
        let e = read_all(&t, "a.bin", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("a.bin", Some(2)));
        assert!(e.msg.contains("truncated"), "{e}");
    }
}
