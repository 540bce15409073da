//! Tencent Cloud Block Storage traces (SNIA IOTTA, "OSCA", ATC '20): CSV lines
//! `Timestamp,Offset,Size,IOType,VolumeID` — Timestamp in Unix seconds, Offset and Size in
//! 512-byte sectors, IOType `0` (read) or `1` (write). The device is the VolumeID. A header
//! line (the first, starting with a letter) is skipped.

use super::{csv_fields, parse_u64, Lines, RecErr, RecordSource, Request};
use std::io::BufRead;

/// `tencent`: a `.csv` name holding `tencent` (the published files are
/// `<date>-<hour>.tgz` of CSV: give `--format tencent` for them).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["tencent", "tencent-cbs"],
    usage: "tencent",
    kind: super::TraceKind::Block,
    guess: |name| name.ends_with(".csv") && name.contains("tencent"),
    options: super::no_options,
    reader: |input, _| Box::new(TencentReader::new(input)),
};

/// Reads a Tencent CBS trace.
pub struct TencentReader {
    lines: Lines,
}

impl TencentReader {
    /// A reader of `input`.
    pub fn new(input: Box<dyn BufRead>) -> TencentReader {
        TencentReader {
            lines: Lines::new(input),
        }
    }
}

impl RecordSource for TencentReader {
    fn next_record(&mut self) -> Result<Option<Request>, RecErr> {
        loop {
            let n = self.lines.line + 1;
            let Some(line) = self.lines.next_line()? else {
                return Ok(None);
            };
            let schema = "Timestamp,Offset,Size,IOType,VolumeID";
            let Some(f) = csv_fields(n, line, schema, "a Tencent CBS")? else {
                continue;
            };
            let write = match parse_u64(f[3], n, "IOType")? {
                0 => false,
                1 => true,
                other => {
                    return Err((
                        Some(n),
                        Some("IOType".into()),
                        format!("{other} is neither 0 (read) nor 1 (write)"),
                    ))
                }
            };
            let sectors = |v: u64, field: &str| {
                v.checked_mul(512)
                    .ok_or_else(|| (Some(n), Some(field.to_string()), "too large".to_string()))
            };
            return Ok(Some(Request {
                time_ns: parse_u64(f[0], n, "Timestamp")?.saturating_mul(1_000_000_000),
                id: parse_u64(f[4], n, "VolumeID")?,
                offset: sectors(parse_u64(f[1], n, "Offset")?, "Offset")?,
                len: sectors(parse_u64(f[2], n, "Size")?, "Size")?,
                write,
                delete: false,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    #[test]
    fn reads_volumes_sectors_and_io_types() {
        let t = b"Timestamp,Offset,Size,IOType,VolumeID\n1538323200,8,16,0,1063\n\
                  1538323201,2048,8,1,77\n";
        let f = Format::of(&super::FORMAT);
        let r = read_all(t, "2018-10-01-01.csv", &f).unwrap();
        assert_eq!(r.len(), 2);
        let r0 = (r[0].id, r[0].offset, r[0].len, r[0].write);
        assert_eq!(r0, (1063, 8 * 512, 16 * 512, false));
        assert_eq!(r[0].time_ns, 1_538_323_200_000_000_000);
        assert_eq!(
            (r[1].id, r[1].offset, r[1].len, r[1].write),
            (77, 2048 * 512, 4096, true)
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let f = Format::of(&super::FORMAT);
        let e = read_all(b"1,8,16,2,1\n", "t.csv", &f).unwrap_err();
        assert_eq!((e.record, e.field.as_deref()), (Some(1), Some("IOType")));
        let e = read_all(b"1,18446744073709551615,16,0,1\n", "t.csv", &f).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("Offset"));
        let e = read_all(b"1,8,16,0\n", "t.csv", &f).unwrap_err();
        assert!(e.msg.contains("column count"), "{e}");
    }
}
