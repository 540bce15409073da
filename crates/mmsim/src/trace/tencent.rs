//! Tencent Cloud Block Storage traces (SNIA IOTTA, "OSCA", ATC '20): CSV lines
//! `Timestamp,Offset,Size,IOType,VolumeID` — Timestamp in Unix seconds, Offset and Size in
//! 512-byte sectors, IOType `0` (read) or `1` (write). The device is the VolumeID. A header
//! line (the first, starting with a letter) is skipped.

use super::{parse_u64, RecErr, Request};

/// The columns of a record.
const SCHEMA: &str = "Timestamp,Offset,Size,IOType,VolumeID";

/// `tencent`: a `.csv` name holding `tencent`, or any `.csv` whose first line is the header
/// (the published files are `<date>-<hour>.tgz` archives of headerless CSV, five numbers a
/// line, which a libCacheSim csv could be too: give `--format tencent` for them).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["tencent", "tencent-cbs"],
    usage: "tencent",
    kind: super::TraceKind::Block,
    guess: |name, line| {
        name.ends_with(".csv") && (name.contains("tencent") || super::csv_shape(line, SCHEMA, None))
    },
    options: super::no_options,
    reader: |input, _| super::csv_records(input, SCHEMA, "a Tencent CBS", parse),
};

/// The request of line `n`'s fields.
fn parse(n: u64, f: &[&str]) -> Result<Request, RecErr> {
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
    let sectors = |field: &str, v: &str| super::parse_units(v, n, field, 512);
    Ok(Request {
        time_ns: parse_u64(f[0], n, "Timestamp")?.saturating_mul(1_000_000_000),
        id: parse_u64(f[4], n, "VolumeID")?,
        offset: sectors("Offset", f[1])?,
        len: sectors("Size", f[2])?,
        write,
        delete: false,
    })
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
