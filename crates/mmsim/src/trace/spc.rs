//! The Storage Performance Council's trace format (SPC Trace File Format Specification
//! 1.0.1), as the UMass Trace Repository publishes its storage traces (`Financial1.spc`,
//! `WebSearch1.spc`, the OLTP and search-engine traces of the ARC paper): comma-separated
//! lines `ASU,LBA,Size,Opcode,Timestamp[,…]` —
//!
//! - ASU, the application specific unit: the device (each becomes a file of the replay);
//! - LBA, the block offset within the ASU, in blocks of the trace's block size (the
//!   specification leaves it to each trace's description; 512 bytes in UMass's traces,
//!   the default; option `block-size=N`);
//! - Size, bytes; Opcode `r`/`R` read, `w`/`W` write; Timestamp, seconds (decimals) from
//!   the trace's start;
//!
//! further fields (the specification allows optional ones) are ignored, and white space
//! around a field is allowed (its revision 1.0.1).

use super::{parse_seconds_ns, parse_u64, RecErr, Request};

/// The columns a record starts with.
const SCHEMA: &str = "ASU,LBA,Size,Opcode,Timestamp";

/// `spc[:block-size=512]`: `*.spc`.
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["spc", "umass"],
    usage: "spc[:block-size=512]",
    kind: super::TraceKind::Block,
    guess: |name, _| name.ends_with(".spc"),
    options: super::block_size_options,
    reader: |input, o| {
        let block = super::block_size(o).expect("spelled by the format's options");
        Box::new(super::FieldRecords::new(
            input,
            super::Sep::Comma,
            Box::new(move |n, f| parse(n, f, block).map(Some)),
        ))
    },
};

/// The request of line `n`'s fields `f` (trimmed), LBAs of `block` bytes.
fn parse(n: u64, f: &[&str], block: u64) -> Result<Request, RecErr> {
    if f.len() < 5 {
        return Err((
            Some(n),
            None,
            format!(
                "wrong column count: {} column(s), an SPC record has at least 5 ({SCHEMA})",
                f.len()
            ),
        ));
    }
    let write = match f[3] {
        "r" | "R" => false,
        "w" | "W" => true,
        other => {
            return Err((
                Some(n),
                Some("Opcode".into()),
                format!("\"{other}\" is neither r nor w"),
            ))
        }
    };
    Ok(Request {
        time_ns: parse_seconds_ns(f[4], n, "Timestamp")?,
        id: parse_u64(f[0], n, "ASU")?,
        offset: super::parse_units(f[1], n, "LBA", block)?,
        len: parse_u64(f[2], n, "Size")?,
        write,
        delete: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    const T: &[u8] = b"0,303567,3584,w,0.000000\n1,55590, 3072 ,R,0.000025,extra\n\n\
                       0,303574,1024,W,1.5\n";

    #[test]
    fn reads_asus_blocks_and_opcodes() {
        let f = Format::parse("spc").unwrap();
        let r = read_all(T, "Financial1.spc", &f).unwrap();
        assert_eq!(r.len(), 3);
        let r0 = (r[0].id, r[0].offset, r[0].len, r[0].write, r[0].time_ns);
        assert_eq!(r0, (0, 303567 * 512, 3584, true, 0));
        let r1 = (r[1].id, r[1].offset, r[1].len, r[1].write, r[1].time_ns);
        assert_eq!(r1, (1, 55590 * 512, 3072, false, 25_000));
        assert_eq!(r[2].time_ns, 1_500_000_000);
        assert_eq!(read_all(&gz(T), "Financial1.spc.gz", &f).unwrap(), r);
        let k = Format::parse("spc:block-size=4096").unwrap();
        assert_eq!(k.spec(), "spc:block-size=4096");
        assert_eq!(Format::parse("umass:block-size=512").unwrap(), f);
        assert_eq!(read_all(T, "t", &k).unwrap()[0].offset, 303567 * 4096);
    }

    #[test]
    fn errors_name_line_and_field() {
        let f = Format::parse("spc").unwrap();
        let e = read_all(b"0,1,512,r,0\n0,1,512,x,0\n", "t.spc", &f).unwrap_err();
        assert_eq!((e.record, e.field.as_deref()), (Some(2), Some("Opcode")));
        let e = read_all(b"0,1,512,r\n", "t.spc", &f).unwrap_err();
        assert!(e.msg.contains("column count"), "{e}");
        let e = read_all(b"0,1,512,r,-1\n", "t.spc", &f).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("Timestamp"));
        let e = read_all(b"0,36028797018963968,512,r,0\n", "t.spc", &f).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.msg.as_str()),
            (Some("LBA"), "too large")
        );
        for bad in ["spc:block-size=0", "spc:block=512", "spc:block-size=x"] {
            assert!(Format::parse(bad).is_err(), "{bad}");
        }
    }
}
