//! MSR Cambridge block traces (SNIA IOTTA): CSV lines
//! `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` — Timestamp in Windows
//! filetime ticks (100 ns), Type `Read` or `Write`, Offset and Size in bytes. A header line
//! (the first line, starting with a letter) is skipped. The device is (Hostname, DiskNumber); times are
//! relative to the first record.

use super::{fnv1a, parse_u64, RecErr, Request};

/// The columns of a record.
const SCHEMA: &str = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime";

/// `msr`: a `.csv` name holding `msr`, or any `.csv` whose first line is the header or a
/// record of this shape (the SNIA files are `<host>_<disk>.csv`, `hm_0.csv`, without a
/// header).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["msr"],
    usage: "msr",
    kind: super::TraceKind::Block,
    guess: |name, line| {
        use super::Col::{Any, Num, Word};
        let record = [Num, Any, Num, Word(&["Read", "Write"]), Num, Num, Num];
        name.ends_with(".csv")
            && (name.contains("msr") || super::csv_shape(line, SCHEMA, Some(&record)))
    },
    options: super::no_options,
    reader: |input, _| {
        // Times are relative to the first record's.
        let mut t0: Option<u64> = None;
        super::csv_records(input, SCHEMA, "an MSR", move |n, f| parse(n, f, &mut t0))
    },
};

/// The device id of (host, disk).
pub fn device_id(host: &str, disk: u64) -> u64 {
    fnv1a(format!("{host},{disk}").as_bytes())
}

/// The request of line `n`'s fields `f`; `t0`, the first record's timestamp.
fn parse(n: u64, f: &[&str], t0: &mut Option<u64>) -> Result<Request, RecErr> {
    let ts = parse_u64(f[0], n, "Timestamp")?;
    let disk = parse_u64(f[2], n, "DiskNumber")?;
    let write = match f[3].to_ascii_lowercase().as_str() {
        "read" => false,
        "write" => true,
        other => {
            return Err((
                Some(n),
                Some("Type".into()),
                format!("\"{other}\" is neither Read nor Write"),
            ))
        }
    };
    let offset = parse_u64(f[4], n, "Offset")?;
    let len = parse_u64(f[5], n, "Size")?;
    parse_u64(f[6], n, "ResponseTime")?;
    let t0 = *t0.get_or_insert(ts);
    Ok(Request {
        time_ns: ts.saturating_sub(t0).saturating_mul(100),
        id: device_id(f[1], disk),
        offset,
        len,
        write,
        delete: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    const T: &[u8] = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
128166372003061629,hm,0,Read,3154128896,4096,5023\n\
128166372003071629,hm,0,Write,8192,16384,100\n\
128166372003081629,hm,1,Read,0,512,100\n";

    #[test]
    fn reads_msr() {
        let r = read_all(T, "hm_0.csv", &Format::of(&super::FORMAT)).unwrap();
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].time_ns, r[0].offset, r[0].len, r[0].write),
            (0, 3154128896, 4096, false)
        );
        assert_eq!((r[1].time_ns, r[1].write), (1_000_000, true));
        assert_eq!(r[0].id, r[1].id);
        assert_ne!(r[0].id, r[2].id);
        assert_eq!(
            read_all(&zst(T), "hm_0.csv.zst", &Format::of(&super::FORMAT)).unwrap(),
            r
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = read_all(
            b"1,hm,0,Read,0,4096\n",
            "m.csv",
            &Format::of(&super::FORMAT),
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.record), ("m.csv", Some(1)));
        assert!(e.msg.contains("wrong column count"), "{e}");
        let e = read_all(
            b"1,hm,0,Read,0,4096,1\n2,hm,0,Trim,0,4096,1\n",
            "m.csv",
            &Format::of(&super::FORMAT),
        )
        .unwrap_err();
        assert_eq!((e.record, e.field.as_deref()), (Some(2), Some("Type")));
        let e = read_all(
            b"1,hm,0,Read,zz,4096,1\n",
            "m.csv",
            &Format::of(&super::FORMAT),
        )
        .unwrap_err();
        assert_eq!(e.field.as_deref(), Some("Offset"));
    }
}
