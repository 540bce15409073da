//! libCacheSim's `lcs` binary traces (its current format; `traceConv` writes it): an
//! 8,192-byte header, then packed little-endian records whose layout the header's version
//! gives.
//!
//! ```text
//! header: u64 start_magic @0 (0x123456789abcdef0), u64 version @8,
//!         8,000 bytes of trace statistics @16 (n_req @24 and n_obj @32, i64),
//!         168 bytes unused, u64 end_magic @8184 (0x123456789abcdef0)
//! v1, 24 bytes: u32 clock_time, u64 obj_id, u32 obj_size, i64 next_access_vtime
//!               (oracleGeneral's record)
//! v2, 28 bytes: u32 clock_time, u64 obj_id, u32 obj_size, u32 op:8 | tenant:24,
//!               i64 next_access_vtime
//! v3, 36 bytes: u32 clock_time, u64 obj_id, i64 obj_size, u32 op:8 | tenant:24, u32 ttl,
//!               i64 next_access_vtime
//! v4–v8: v3 followed by 1, 2, 4, 8 or 16 u32 features (40, 44, 52, 68, 100 bytes)
//! ```
//!
//! An object trace: time in seconds, the object's id and size. The operation (v2 and
//! later, libCacheSim's `req_op_e`) decides read or write: `get`, `gets`, `read` and `nop`
//! (0, what a trace without operations holds) read; `set`, `add`, `cas`, `replace`,
//! `append`, `prepend`, `incr`, `decr`, `write` and `update` write; `delete` (9) deletes
//! (`Request::delete`: the replay drops the object's pages). Any other operation, a
//! negative v3 size, a wrong magic number or version, and a truncated header or record
//! are errors naming the record (or the field `header`).

use super::{read_record, RecErr, RecordSource, Request};
use std::io::BufRead;

/// `lcs`: `*.lcs`.
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["lcs"],
    usage: "lcs",
    kind: super::TraceKind::Object,
    guess: |name, _| name.ends_with(".lcs"),
    options: super::no_options,
    reader: |input, _| Box::new(LcsReader::new(input)),
};

/// Bytes of the header.
pub const HEADER_BYTES: usize = 8192;
/// The header's start and end magic number.
pub const MAGIC: u64 = 0x1234_5678_9abc_def0;
/// libCacheSim's `OP_DELETE`.
const OP_DELETE: u8 = 9;

/// Bytes of a record of `version` (1 to 8), None for another version.
pub fn record_bytes(version: u64) -> Option<usize> {
    Some(match version {
        1 => 24,
        2 => 28,
        3 => 36,
        4 => 40,
        5 => 44,
        6 => 52,
        7 => 68,
        8 => 100,
        _ => return None,
    })
}

/// Reads an lcs trace.
pub struct LcsReader {
    input: Box<dyn BufRead>,
    /// The header's version once read (0 before).
    version: u64,
    record: u64,
    buf: Vec<u8>,
}

impl LcsReader {
    /// A reader of `input`.
    pub fn new(input: Box<dyn BufRead>) -> LcsReader {
        LcsReader {
            input,
            version: 0,
            record: 0,
            buf: Vec::new(),
        }
    }

    /// Read and check the header (lcsReader_setup, _verify_lcs_header).
    fn read_header(&mut self) -> Result<(), RecErr> {
        let header_err = |msg: String| (None, Some("header".to_string()), msg);
        let mut h = vec![0u8; HEADER_BYTES];
        match read_record(&mut *self.input, &mut h, 0) {
            Ok(true) => {}
            Ok(false) => {
                return Err(header_err(
                    "empty file: an lcs trace starts with an 8192-byte header".into(),
                ))
            }
            Err((_, _, msg)) => return Err(header_err(msg.replace("record", "header"))),
        }
        let le8 = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        let (start, version, end) = (le8(0), le8(8), le8(HEADER_BYTES - 8));
        if start != MAGIC || end != MAGIC {
            return Err(header_err(format!(
                "magic numbers {start:#x} and {end:#x}, not lcs's {MAGIC:#x} (not an lcs trace?)"
            )));
        }
        let (n_req, n_obj) = (le8(24) as i64, le8(32) as i64);
        if n_req < 0 || n_obj < 0 {
            return Err(header_err(format!(
                "negative request or object count ({n_req}, {n_obj})"
            )));
        }
        let Some(bytes) = record_bytes(version) else {
            return Err(header_err(format!(
                "version {version}: lcs versions are 1 to 8"
            )));
        };
        self.version = version;
        self.buf = vec![0u8; bytes];
        Ok(())
    }
}

/// Encode a header of `version` (for tests and trace generators).
pub fn encode_header(version: u64, n_req: i64, n_obj: i64) -> Vec<u8> {
    let mut h = vec![0u8; HEADER_BYTES];
    h[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    h[8..16].copy_from_slice(&version.to_le_bytes());
    h[16..24].copy_from_slice(&1i64.to_le_bytes());
    h[24..32].copy_from_slice(&n_req.to_le_bytes());
    h[32..40].copy_from_slice(&n_obj.to_le_bytes());
    h[HEADER_BYTES - 8..].copy_from_slice(&MAGIC.to_le_bytes());
    h
}

/// Encode one record of `version` (for tests and trace generators); features are zero.
pub fn encode(version: u64, time_s: u32, obj_id: u64, obj_size: i64, op: u8) -> Vec<u8> {
    let mut b = vec![0u8; record_bytes(version).expect("lcs version 1 to 8")];
    b[0..4].copy_from_slice(&time_s.to_le_bytes());
    b[4..12].copy_from_slice(&obj_id.to_le_bytes());
    let next = (-1i64).to_le_bytes();
    match version {
        1 | 2 => {
            b[12..16].copy_from_slice(&(obj_size as u32).to_le_bytes());
            if version == 1 {
                b[16..24].copy_from_slice(&next);
            } else {
                b[16..20].copy_from_slice(&u32::from(op).to_le_bytes());
                b[20..28].copy_from_slice(&next);
            }
        }
        _ => {
            b[12..20].copy_from_slice(&obj_size.to_le_bytes());
            b[20..24].copy_from_slice(&u32::from(op).to_le_bytes());
            b[28..36].copy_from_slice(&next);
        }
    }
    b
}

impl RecordSource for LcsReader {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        if self.version == 0 {
            self.read_header()?;
        }
        self.record += 1;
        if !read_record(&mut *self.input, &mut self.buf, self.record)? {
            return Ok(None);
        }
        let b = &self.buf;
        let le4 = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"));
        let le8 = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        let (len, op) = match self.version {
            1 => (u64::from(le4(12)), 0),
            2 => (u64::from(le4(12)), le4(16) as u8),
            _ => {
                let size = le8(12) as i64;
                if size < 0 {
                    return Err((
                        Some(self.record),
                        Some("obj_size".into()),
                        format!("negative object size {size}"),
                    ));
                }
                (size as u64, le4(20) as u8)
            }
        };
        let (write, delete) = match op {
            0 | 1 | 2 | 12 => (false, false),
            3..=8 | 10 | 11 | 13 | 14 => (true, false),
            OP_DELETE => (false, true),
            _ => {
                return Err((
                    Some(self.record),
                    Some("op".into()),
                    format!("unknown operation {op} (libCacheSim's req_op_e is 0 to 14)"),
                ))
            }
        };
        Ok(Some(Request {
            time_ns: u64::from(le4(0)) * 1_000_000_000,
            id: le8(4),
            offset: 0,
            len,
            write,
            delete,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::testutil::*;
    use crate::trace::Format;

    fn trace(version: u64, recs: &[(u32, u64, i64, u8)]) -> Vec<u8> {
        let mut t = encode_header(version, recs.len() as i64, recs.len() as i64);
        for &(time, id, size, op) in recs {
            t.extend_from_slice(&encode(version, time, id, size, op));
        }
        t
    }

    #[test]
    fn every_version_reads_time_id_size_and_operation() {
        for v in 1..=8 {
            let t = trace(v, &[(5, 42, 4096, 1), (6, 43, 100, 3), (7, 44, 8192, 13)]);
            let r = read_all(&t, "a.lcs", &Format::of(&super::FORMAT)).unwrap();
            assert_eq!(r.len(), 3, "v{v}");
            assert_eq!((r[0].time_ns, r[0].id, r[0].len), (5_000_000_000, 42, 4096));
            assert_eq!((r[1].id, r[1].len), (43, 100), "v{v}");
            assert_eq!((r[2].id, r[2].len), (44, 8192), "v{v}");
            // v1 has no operation: every request reads.
            let writes: Vec<bool> = r.iter().map(|q| q.write).collect();
            let want = if v == 1 {
                [false; 3]
            } else {
                [false, true, true]
            };
            assert_eq!(writes, want, "v{v}");
            assert_eq!(
                read_all(&zst(&t), "a.lcs.zst", &Format::of(&super::FORMAT)).unwrap(),
                r
            );
        }
    }

    #[test]
    fn a_v1_record_is_an_oracle_general_record() {
        let rec = encode(1, 9, 77, 512, 0);
        assert_eq!(rec, crate::trace::oracle::encode(9, 77, 512, -1).to_vec());
    }

    #[test]
    fn deletes_are_read_and_an_unknown_operation_is_an_error() {
        let t = trace(2, &[(1, 10, 4096, 1), (2, 10, 0, 9), (3, 11, 4096, 2)]);
        let r = read_all(&t, "a.lcs", &Format::of(&super::FORMAT)).unwrap();
        let ops: Vec<_> = r.iter().map(|q| (q.id, q.write, q.delete)).collect();
        assert_eq!(
            ops,
            vec![(10, false, false), (10, false, true), (11, false, false)]
        );
        let t = trace(3, &[(1, 10, 4096, 1), (2, 10, 4096, 42)]);
        let e = read_all(&t, "b.lcs", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!(
            (e.file.as_str(), e.record, e.field.as_deref()),
            ("b.lcs", Some(2), Some("op"))
        );
    }

    #[test]
    fn a_negative_v3_size_names_the_record() {
        let t = trace(4, &[(1, 10, 4096, 1), (2, 11, -5, 1)]);
        let e = read_all(&t, "a.lcs", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!((e.record, e.field.as_deref()), (Some(2), Some("obj_size")));
    }

    #[test]
    fn header_errors_name_the_header() {
        let good = trace(2, &[(1, 10, 4096, 1)]);
        let mut bad_magic = good.clone();
        bad_magic[0] ^= 1;
        let mut bad_version = good.clone();
        bad_version[8] = 9;
        let mut negative = good.clone();
        negative[24..32].copy_from_slice(&(-1i64).to_le_bytes());
        for (t, what) in [
            (bad_magic, "magic"),
            (bad_version, "version 9"),
            (negative, "negative"),
            (good[..100].to_vec(), "truncated"),
            (Vec::new(), "empty"),
        ] {
            let e = read_all(&t, "h.lcs", &Format::of(&super::FORMAT)).unwrap_err();
            assert_eq!(
                (e.record, e.field.as_deref()),
                (None, Some("header")),
                "{e}"
            );
            assert!(e.msg.contains(what), "{what}: {e}");
        }
    }

    #[test]
    fn a_truncated_record_names_it() {
        let mut t = trace(5, &[(1, 10, 4096, 1), (2, 11, 4096, 1)]);
        t.truncate(t.len() - 3);
        let e = read_all(&t, "a.lcs", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!(e.record, Some(2));
        assert!(e.msg.contains("truncated"), "{e}");
    }
}
