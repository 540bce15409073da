//! Alibaba Cloud's block traces (github.com/alibaba/block-traces, `io_traces.csv`): CSV
//! lines `device_id,opcode,offset,length,timestamp` — opcode `R` or `W`, offset and length
//! in bytes, timestamp in microseconds. The device is `device_id` (the 1,000 virtual disks
//! of the published set share one file: each becomes a file of the replay). A header line
//! (the first, starting with a letter) is skipped.

use super::{parse_u64, RecErr, Request};

/// The columns of a record.
const SCHEMA: &str = "device_id,opcode,offset,length,timestamp";

/// `alibaba`: a `.csv` name holding `alibaba`, or any `.csv` whose first line is the header
/// or a record of this shape (the published file is `io_traces.csv`).
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["alibaba"],
    usage: "alibaba",
    kind: super::TraceKind::Block,
    guess: |name, line| {
        use super::Col::{Num, Word};
        let record = [Num, Word(&["R", "W"]), Num, Num, Num];
        name.ends_with(".csv")
            && (name.contains("alibaba") || super::csv_shape(line, SCHEMA, Some(&record)))
    },
    options: super::no_options,
    reader: |input, _| super::csv_records(input, SCHEMA, "an Alibaba", parse),
};

/// The request of line `n`'s fields.
fn parse(n: u64, f: &[&str]) -> Result<Request, RecErr> {
    let write = match f[1].trim() {
        "R" | "r" => false,
        "W" | "w" => true,
        other => {
            return Err((
                Some(n),
                Some("opcode".into()),
                format!("\"{other}\" is neither R nor W"),
            ))
        }
    };
    Ok(Request {
        time_ns: parse_u64(f[4], n, "timestamp")?.saturating_mul(1000),
        id: parse_u64(f[0], n, "device_id")?,
        offset: parse_u64(f[2], n, "offset")?,
        len: parse_u64(f[3], n, "length")?,
        write,
        delete: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    #[test]
    fn reads_devices_offsets_and_opcodes() {
        let t = b"0,R,126703644672,4096,1577808000000626\n\n3,W,8192,16384,1577808000000700\n";
        let f = Format::of(&super::FORMAT);
        let r = read_all(t, "io_traces.csv", &f).unwrap();
        assert_eq!(r.len(), 2);
        let r0 = (r[0].id, r[0].offset, r[0].len, r[0].write);
        assert_eq!(r0, (0, 126703644672, 4096, false));
        assert_eq!(r[0].time_ns, 1_577_808_000_000_626_000);
        assert_eq!(
            (r[1].id, r[1].offset, r[1].len, r[1].write),
            (3, 8192, 16384, true)
        );
        assert_eq!(read_all(&zst(t), "io_traces.csv.zst", &f).unwrap(), r);
    }

    #[test]
    fn errors_name_line_and_field() {
        let f = Format::of(&super::FORMAT);
        let e = read_all(b"0,R,0,4096,1\n0,X,0,4096,2\n", "a.csv", &f).unwrap_err();
        assert_eq!((e.record, e.field.as_deref()), (Some(2), Some("opcode")));
        let e = read_all(b"0,R,0,4096\n", "a.csv", &f).unwrap_err();
        assert_eq!(e.record, Some(1));
        assert!(e.msg.contains("column count"), "{e}");
        let e = read_all(b"0,R,-5,4096,1\n", "a.csv", &f).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("offset"));
    }
}
