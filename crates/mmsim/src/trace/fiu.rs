//! FIU's block traces (SNIA IOTTA "FIU IODedup": `homes`, `mail`, `web-vm`; the traces
//! CACHEUS and LeCaR were evaluated on), one request a line, fields separated by spaces:
//!
//! ```text
//! 89155760310131 4348 syslogd 8240400 8 W 6 0 bb9f7d05b5b2c3d4e5f60718293a4b5c
//! ts (ns)        pid  process lba  size op major minor md5
//! ```
//!
//! `lba` and `size` are in 512-byte sectors; `op` is `W` or `R` (`Write`/`Read` too). The
//! device is `major,minor`, as the kernel's dev_t encodes it (MKDEV: major << 20 | minor).
//! The files are published as `<host>-<dates>.<n>.blkparse`, though they are not blkparse
//! output: a `.blkparse` whose first line has this shape is guessed to be FIU's. The fields
//! are read from the line's end (the process name may hold spaces); the md5 digest (per
//! 4 KiB, or per 512 bytes in `homes`) is not used.

use super::{parse_u64, RecErr, Request};

/// `fiu`: a `.blkparse` (or `.fiu`) file whose first line is a record of this shape.
pub const FORMAT: super::FormatDef = super::FormatDef {
    names: &["fiu"],
    usage: "fiu",
    kind: super::TraceKind::Block,
    guess: |name, line| {
        name.ends_with(".fiu") || (name.ends_with(".blkparse") && fields(line).is_some())
    },
    options: super::no_options,
    reader: |input, _| {
        Box::new(super::FieldRecords::new(
            input,
            super::Sep::Whitespace,
            Box::new(|n, f| parse(n, f).map(Some)),
        ))
    },
};

/// The fields a record holds after the process name.
const TAIL: usize = 6;

/// A record's fields: (ts, lba, size, op, major, minor), or None when `line` does not have
/// the shape of one (at least nine fields, numbers where numbers go, `op` R or W).
fn fields(line: &str) -> Option<[&str; 6]> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() < 3 + TAIL {
        return None;
    }
    let t = &f[f.len() - TAIL..];
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let shape = num(f[0])
        && num(f[1])
        && num(t[0])
        && num(t[1])
        && op(t[2]).is_some()
        && num(t[3])
        && num(t[4]);
    shape.then_some([f[0], t[0], t[1], t[2], t[3], t[4]])
}

/// Whether op field `s` is a write (`W`, `Write`), a read (`R`, `Read`), or neither.
fn op(s: &str) -> Option<bool> {
    match s.to_ascii_lowercase().as_str() {
        "w" | "write" => Some(true),
        "r" | "read" => Some(false),
        _ => None,
    }
}

/// The request of line `n`'s fields `f`.
fn parse(n: u64, f: &[&str]) -> Result<Request, RecErr> {
    if f.len() < 3 + TAIL {
        return Err((
            Some(n),
            None,
            format!(
                "wrong column count: {} field(s), an FIU record has 9 \
                 (ts pid process lba size op major minor md5)",
                f.len()
            ),
        ));
    }
    let t = &f[f.len() - TAIL..];
    let write = op(t[2]).ok_or_else(|| {
        (
            Some(n),
            Some("op".to_string()),
            format!("\"{}\" is neither W nor R", t[2]),
        )
    })?;
    let sectors = |field: &str, v: &str| super::parse_units(v, n, field, 512);
    let major = parse_u64(t[3], n, "major")?;
    let minor = parse_u64(t[4], n, "minor")?;
    if major >= 1 << 12 || minor >= 1 << 20 {
        return Err((
            Some(n),
            Some(if major >= 1 << 12 { "major" } else { "minor" }.to_string()),
            "outside a dev_t (12-bit major, 20-bit minor)".to_string(),
        ));
    }
    Ok(Request {
        time_ns: parse_u64(f[0], n, "ts")?,
        id: major << 20 | minor,
        offset: sectors("lba", t[0])?,
        len: sectors("size", t[1])?,
        write,
        delete: false,
    })
}

#[cfg(test)]
mod tests {
    use crate::trace::testutil::*;
    use crate::trace::Format;

    const T: &[u8] = b"89155760310131 4348 syslogd 8240400 8 W 6 0 bb9f7d05b5b2c3d4\n\
\n\
89155760478123 4349 Web Content 16 24 Read 8 1 aa9f7d05b5b2c3d4\n";

    #[test]
    fn reads_sectors_ops_and_devices() {
        let f = Format::parse("fiu").unwrap();
        let r = read_all(T, "homes-110108-112108.1.blkparse", &f).unwrap();
        assert_eq!(r.len(), 2);
        let r0 = (r[0].time_ns, r[0].offset, r[0].len, r[0].write, r[0].id);
        assert_eq!(r0, (89155760310131, 8240400 * 512, 4096, true, 6 << 20));
        // A process name with a space: the fields are read from the end.
        let r1 = (r[1].offset, r[1].len, r[1].write, r[1].id);
        assert_eq!(r1, (16 * 512, 24 * 512, false, 8 << 20 | 1));
        assert_eq!(read_all(&gz(T), "t.blkparse.gz", &f).unwrap(), r);
    }

    #[test]
    fn errors_name_line_and_field() {
        let f = Format::parse("fiu").unwrap();
        let e = read_all(b"1 2 p 8 8 X 6 0 d\n", "t.blkparse", &f).unwrap_err();
        assert_eq!((e.record, e.field.as_deref()), (Some(1), Some("op")));
        let e = read_all(b"1 2 p 8 8 W 6 0 d\n1 2 p 8 W 6 0 d\n", "t", &f).unwrap_err();
        assert_eq!(e.record, Some(2));
        assert!(e.msg.contains("column count"), "{e}");
        let e = read_all(b"1 2 p -8 8 W 6 0 d\n", "t", &f).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("lba"));
        let e = read_all(b"1 2 p 8 8 W 6 1048576 d\n", "t", &f).unwrap_err();
        assert_eq!(e.field.as_deref(), Some("minor"));
        let e = read_all(b"1 2 p 36028797018963968 8 W 6 0 d\n", "t", &f).unwrap_err();
        assert_eq!(
            (e.field.as_deref(), e.msg.as_str()),
            (Some("lba"), "too large")
        );
    }

    #[test]
    fn a_blkparse_name_is_fiu_only_with_an_fiu_first_line() {
        let fiu = b"89155760310131 4348 syslogd 8240400 8 W 6 0 bb9f7d05\n";
        let blk = b"  8,0    3        1     0.000000000   697  Q  WS 223490 + 8 [kjournald]\n";
        let dir = std::env::temp_dir().join(format!("mmsim-fiu-guess-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let guess = |name: &str, bytes: &[u8]| {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            Format::guess(&p)
        };
        let (f, b) = (
            Some(Format::of(&super::FORMAT)),
            Some(Format::of(&crate::trace::blkparse::FORMAT)),
        );
        assert_eq!(guess("homes.1.blkparse", fiu), f);
        assert_eq!(guess("web-vm.1.blkparse.gz", &gz(fiu)), f);
        assert_eq!(guess("sda.blkparse", blk), b);
        assert_eq!(guess("x.fiu", blk), f);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
