//! VMware vscsi binary block traces (as libCacheSim reads them), little-endian records in
//! one of two layouts, told apart by the version byte of the first two records:
//!
//! ```text
//! version 1, 32 bytes: u32 sn @0, u32 len @4, u32 nSG @8, u16 cmd @12, u16 ver @14,
//!                      u64 lbn @16, u64 ts @24
//! version 2, 40 bytes: u16 cmd @0, u16 ver @2, u32 sn @4, u32 len @8, u32 nSG @12,
//!                      u64 lbn @16, u64 ts @24, u64 rt @32
//! ```
//!
//! `ver >> 8` is the version; `lbn` is the logical block number in 512-byte sectors, `len`
//! the request's bytes, `ts` microseconds. `cmd` is the SCSI opcode: WRITE(6/10/12/16)
//! (0x0a, 0x2a, 0xaa, 0x8a) are writes, everything else reads. One device (id 0).

use super::{read_record, RecErr, RecordSource, Request};
use std::io::BufRead;

/// `vscsi`: `*.vscsi`, and `*.vscsitrace` (the CloudPhysics traces as libCacheSim's
/// users have them, `w106_vscsi1.vscsitrace`).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["vscsi"],
    usage: "vscsi",
    kind: super::TraceKind::Block,
    guess: |name, _| name.ends_with(".vscsi") || name.ends_with(".vscsitrace"),
    options: super::no_options,
    reader: |input, _| Box::new(VscsiReader::new(input)),
};

/// Bytes of a version-1 record.
pub const V1_BYTES: usize = 32;
/// Bytes of a version-2 record.
pub const V2_BYTES: usize = 40;

/// Reads a vscsi trace.
pub struct VscsiReader {
    input: Box<dyn BufRead>,
    /// Bytes read ahead to detect the version, consumed first.
    head: Vec<u8>,
    head_pos: usize,
    version: u8,
    record: u64,
}

impl VscsiReader {
    /// A reader of `input`.
    pub fn new(input: Box<dyn BufRead>) -> VscsiReader {
        VscsiReader {
            input,
            head: Vec::new(),
            head_pos: 0,
            version: 0,
            record: 0,
        }
    }

    fn detect(&mut self) -> Result<(), RecErr> {
        let mut buf = vec![0u8; 2 * V2_BYTES];
        let mut got = 0;
        while got < buf.len() {
            match self.input.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err((Some(1), None, format!("read error: {e}"))),
            }
        }
        buf.truncate(got);
        self.head = buf;
        if got == 0 {
            self.version = 1;
            return Ok(());
        }
        let ver_at = |off: usize| -> Option<u8> {
            self.head
                .get(off..off + 2)
                .map(|b| (u16::from_le_bytes([b[0], b[1]]) >> 8) as u8)
        };
        let all = |size: usize, off: usize, v: u8| -> bool {
            let n = (got / size).clamp(1, 2);
            (0..n).all(|i| ver_at(i * size + off) == Some(v))
        };
        self.version = if got >= V2_BYTES && all(V2_BYTES, 2, 2) {
            2
        } else if got >= V1_BYTES && all(V1_BYTES, 14, 1) {
            1
        } else if got < V1_BYTES {
            return Err((
                Some(1),
                None,
                format!("truncated record: {got} bytes, a vscsi record has 32 (v1) or 40 (v2)"),
            ));
        } else {
            return Err((
                Some(1),
                Some("ver".into()),
                "not a vscsi trace: the version byte of the first records is neither 1 nor 2"
                    .into(),
            ));
        };
        Ok(())
    }
}

/// Encode a version-2 record (tests, generators).
pub fn encode_v2(cmd: u8, lbn: u64, len: u32, ts_us: u64) -> [u8; V2_BYTES] {
    let mut b = [0u8; V2_BYTES];
    b[0..2].copy_from_slice(&u16::from(cmd).to_le_bytes());
    b[2..4].copy_from_slice(&(2u16 << 8).to_le_bytes());
    b[8..12].copy_from_slice(&len.to_le_bytes());
    b[16..24].copy_from_slice(&lbn.to_le_bytes());
    b[24..32].copy_from_slice(&ts_us.to_le_bytes());
    b
}

/// Encode a version-1 record.
pub fn encode_v1(cmd: u8, lbn: u64, len: u32, ts_us: u64) -> [u8; V1_BYTES] {
    let mut b = [0u8; V1_BYTES];
    b[4..8].copy_from_slice(&len.to_le_bytes());
    b[12..14].copy_from_slice(&u16::from(cmd).to_le_bytes());
    b[14..16].copy_from_slice(&(1u16 << 8).to_le_bytes());
    b[16..24].copy_from_slice(&lbn.to_le_bytes());
    b[24..32].copy_from_slice(&ts_us.to_le_bytes());
    b
}

impl RecordSource for VscsiReader {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        if self.version == 0 {
            self.detect()?;
        }
        let size = if self.version == 2 {
            V2_BYTES
        } else {
            V1_BYTES
        };
        let mut b = [0u8; V2_BYTES];
        let rec = &mut b[..size];
        self.record += 1;
        // Bytes from the detection buffer first, then the stream.
        let from_head = (self.head.len() - self.head_pos).min(size);
        rec[..from_head].copy_from_slice(&self.head[self.head_pos..self.head_pos + from_head]);
        self.head_pos += from_head;
        if from_head < size {
            let got_rest = read_record(&mut *self.input, &mut rec[from_head..], self.record);
            match got_rest {
                Ok(false) if from_head == 0 => return Ok(None),
                Ok(false) => {
                    return Err((
                        Some(self.record),
                        None,
                        format!(
                        "truncated record: {from_head} of {size} bytes (the file ends inside it)"
                    ),
                    ))
                }
                Ok(true) => {}
                Err((r, f, m)) => {
                    // read_record counted only the bytes it read.
                    return Err((
                        r,
                        f,
                        m.replace(
                            "truncated record",
                            "truncated record (after the read-ahead bytes)",
                        ),
                    ));
                }
            }
        }
        let le2 = |o: usize| u16::from_le_bytes([rec[o], rec[o + 1]]);
        let le4 = |o: usize| u32::from_le_bytes(rec[o..o + 4].try_into().expect("4"));
        let le8 = |o: usize| u64::from_le_bytes(rec[o..o + 8].try_into().expect("8"));
        let (cmd, ver, len) = if self.version == 2 {
            (le2(0), le2(2), le4(8))
        } else {
            (le2(12), le2(14), le4(4))
        };
        if (ver >> 8) as u8 != self.version {
            return Err((
                Some(self.record),
                Some("ver".into()),
                format!(
                    "version {} in a version-{} trace (corrupt or misaligned record)",
                    ver >> 8,
                    self.version
                ),
            ));
        }
        let lbn = le8(16);
        let offset = lbn.checked_mul(512).ok_or((
            Some(self.record),
            Some("lbn".into()),
            format!("block number {lbn} too large"),
        ))?;
        let write = matches!((cmd & 0xff) as u8, 0x0a | 0x2a | 0xaa | 0x8a);
        Ok(Some(Request {
            time_ns: le8(24).saturating_mul(1000),
            id: 0,
            offset,
            len: u64::from(len),
            write,
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
    fn reads_both_versions() {
        for v in [1, 2] {
            let mut t = Vec::new();
            for (i, cmd) in [0x28u8, 0x2a, 0x28].iter().enumerate() {
                let (a, b);
                let rec: &[u8] = if v == 1 {
                    a = encode_v1(*cmd, 8 * i as u64, 4096, 100 * i as u64);
                    &a
                } else {
                    b = encode_v2(*cmd, 8 * i as u64, 4096, 100 * i as u64);
                    &b
                };
                t.extend_from_slice(rec);
            }
            let r = read_all(&t, "w.vscsi", &Format::of(&super::FORMAT)).unwrap();
            assert_eq!(r.len(), 3, "v{v}");
            assert_eq!(
                (r[1].offset, r[1].len, r[1].write, r[1].time_ns),
                (4096, 4096, true, 100_000)
            );
            assert!(!r[2].write);
            assert_eq!(
                read_all(&zst(&t), "w.vscsi.zst", &Format::of(&super::FORMAT)).unwrap(),
                r
            );
        }
    }

    #[test]
    fn truncated_and_garbage() {
        let mut t = encode_v2(0x28, 0, 4096, 0).to_vec();
        t.extend_from_slice(&encode_v2(0x28, 8, 4096, 0));
        t.extend_from_slice(&encode_v2(0x28, 16, 4096, 0)[..7]);
        let e = read_all(&t, "w.vscsi", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("w.vscsi", Some(3)));
        assert!(e.msg.contains("truncated"), "{e}");
        let e = read_all(&[0u8; 100], "w.vscsi", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!(e.record, Some(1));
        assert!(e.msg.contains("not a vscsi trace"), "{e}");
        let e = read_all(&[1u8; 5], "w.vscsi", &Format::of(&super::FORMAT)).unwrap_err();
        assert!(e.msg.contains("truncated"), "{e}");
        // A misaligned later record.
        let mut t = encode_v2(0x28, 0, 4096, 0).to_vec();
        t.extend_from_slice(&encode_v2(0x28, 8, 4096, 0));
        t.extend_from_slice(&[0xffu8; 40]);
        let e = read_all(&t, "w.vscsi", &Format::of(&super::FORMAT)).unwrap_err();
        assert_eq!(e.record, Some(3));
    }
}
