//! The ARC paper's traces (Megiddo and Modha, FAST '03: `OLTP.lis`, `P1.lis` … `P14.lis`,
//! `DS1.lis`, `S1.lis` … `S3.lis`, `spc1likeread.lis`; the traces Caffeine's and moka's
//! simulators replay), one request a line, fields separated by white space:
//!
//! ```text
//! 110765 64 0 0
//! start  blocks (ignored) request number
//! ```
//!
//! `start` and `blocks` are in 512-byte blocks (option `block-size=N`). Every request is a
//! read (the paper kept only the reads) of one device, and the trace has no times (a paced
//! replay goes back to back).

use super::{RecErr, Request};

/// `arc[:block-size=512]`: `*.lis`.
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["arc", "lis"],
    usage: "arc[:block-size=512]",
    kind: super::TraceKind::Block,
    guess: |name, _| name.ends_with(".lis"),
    options: super::block_size_options,
    reader: |input, o| {
        let block = super::block_size(o).expect("spelled by the format's options");
        Box::new(super::FieldRecords::new(
            input,
            super::Sep::Whitespace,
            Box::new(move |n, f| parse(n, f, block).map(Some)),
        ))
    },
};

/// The request of line `n`'s fields `f`, of blocks of `block` bytes.
fn parse(n: u64, f: &[&str], block: u64) -> Result<Request, RecErr> {
    if f.len() != 4 {
        return Err((
            Some(n),
            None,
            format!(
                "wrong column count: {} field(s), an ARC trace line has 4 \
                 (start blocks ignored request-number)",
                f.len()
            ),
        ));
    }
    let bytes = |field: &str, v: &str| super::parse_units(v, n, field, block);
    Ok(Request {
        time_ns: 0,
        id: 0,
        offset: bytes("start", f[0])?,
        len: bytes("blocks", f[1])?,
        write: false,
        delete: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    #[test]
    fn reads_blocks_as_reads_of_one_device() {
        let t = b"110765 64 0 0\n\n7 8\t0 1\n";
        let f = Format::parse("arc").unwrap();
        let r = read_all(t, "P6.lis", &f).unwrap();
        assert_eq!(r.len(), 2);
        let r0 = (r[0].id, r[0].offset, r[0].len, r[0].write);
        assert_eq!(r0, (0, 110765 * 512, 64 * 512, false));
        assert_eq!((r[1].offset, r[1].len), (7 * 512, 4096));
        assert_eq!(read_all(&zst(t), "P6.lis.zst", &f).unwrap(), r);
        let k = Format::parse("lis:block-size=4096").unwrap();
        assert_eq!(k.spec(), "arc:block-size=4096");
        assert_eq!(read_all(t, "S1.lis", &k).unwrap()[1].len, 8 * 4096);
    }

    #[test]
    fn errors_name_line_and_field() {
        let f = Format::parse("arc").unwrap();
        let e = read_all(b"1 8 0 0\n1 8 0\n", "t.lis", &f).unwrap_err();
        assert_eq!(e.record, Some(2));
        assert!(e.msg.contains("column count"), "{e}");
        let e = read_all(b"1 x 0 0\n", "t.lis", &f).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("blocks"));
        let e = read_all(b"36028797018963968 8 0 0\n", "t.lis", &f).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.msg.as_str()),
            (Some("start"), "too large")
        );
    }
}
