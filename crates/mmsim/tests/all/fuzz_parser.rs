//! A stable-Rust fallback for the cargo-fuzz targets in `fuzz/`: random and mutated
//! scenario TOML and `--set` overrides must give a scenario or an error, never a panic.

use mmsim::scenario::{builtin_scenarios, parse_scenario};
use proptest::prelude::*;

/// Values that stress the typed readers: huge, zero, negative, wrong types, odd strings.
const NASTY: &[&str] = &[
    "0",
    "-1",
    "18446744073709551615",
    "9223372036854775807",
    "1e308",
    "nan",
    "inf",
    "\"\"",
    "\"ram*0\"",
    "\"ram/0\"",
    "\"ram*99999999999999\"",
    "\"16TiB\"",
    "\"1.5\"",
    "\"-4KiB\"",
    "\"4 KiB\"",
    "\"µs\"",
    "true",
    "[]",
    "{}",
    "[1, \"a\"]",
    "{ a = 1 }",
    "1979-05-27T07:32:00Z",
    "\"/\"",
    "\"../x\"",
    "\"/mnt/../x\"",
];

fn builtin(i: usize) -> &'static str {
    let b = builtin_scenarios();
    b[i % b.len()].2
}

/// Replace the value of the `k`-th `key = value` line by `v`.
fn replace_value(text: &str, k: usize, v: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let assigns: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains(" = ") && !lines[i].trim_start().starts_with('#'))
        .collect();
    if assigns.is_empty() {
        return text.to_string();
    }
    let at = assigns[k % assigns.len()];
    let key = lines[at].split(" = ").next().unwrap_or("");
    let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    out[at] = format!("{key} = {v}");
    out.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        let _ = parse_scenario(&text, "fuzz.toml", &[]);
    }

    #[test]
    fn mutated_builtins_never_panic(
        which in 0usize..64,
        cut_at in 0usize..4000,
        cut_len in 0usize..64,
        insert in "\\PC{0,16}",
    ) {
        let text = builtin(which);
        let mut chars: Vec<char> = text.chars().collect();
        let at = cut_at % (chars.len() + 1);
        let end = (at + cut_len).min(chars.len());
        chars.splice(at..end, insert.chars());
        let s: String = chars.into_iter().collect();
        let _ = parse_scenario(&s, "fuzz.toml", &[]);
    }

    #[test]
    fn nasty_values_never_panic(which in 0usize..64, k in 0usize..200, v in 0usize..64) {
        let s = replace_value(builtin(which), k, NASTY[v % NASTY.len()]);
        let _ = parse_scenario(&s, "fuzz.toml", &[]);
    }

    #[test]
    fn arbitrary_sets_never_panic(
        which in 0usize..64,
        key in "[a-z0-9_.\\-]{0,40}",
        v in 0usize..64,
        raw in "\\PC{0,30}",
        use_raw in any::<bool>(),
    ) {
        let value = if use_raw { raw } else { NASTY[v % NASTY.len()].to_string() };
        let sets = vec![format!("{key}={value}"), key.clone(), format!("={value}")];
        for s in &sets {
            let _ = parse_scenario(builtin(which), "fuzz.toml", std::slice::from_ref(s));
        }
    }

    #[test]
    fn real_keys_with_nasty_values_never_panic(which in 0usize..64, k in 0usize..40, v in 0usize..64) {
        const KEYS: &[&str] = &[
            "seed", "sample_interval", "machine.nodes", "machine.cpus_per_node",
            "machine.memory_per_node", "machine.cost_profile", "tasks.0.cpu", "tasks.0.start",
            "tasks.0.size", "tasks.0.block_size", "tasks.0.iterations", "tasks.0.path",
            "tasks.0.program", "tasks.0.passes", "tasks.0.files", "tasks.0.file_size",
            "tasks.0.replicas", "devices.0.size", "devices.0.preset", "devices.0.latency",
            "devices.0.bandwidth", "devices.0.read_error_rate", "devices.0.fail",
            "filesystems.0.mount", "filesystems.0.type", "filesystems.0.device",
            "files.0.size", "files.0.path", "files.0.replicas", "swap.size",
            "features.workingset", "features.nosuch", "name", "description",
        ];
        let set = format!("{}={}", KEYS[k % KEYS.len()], NASTY[v % NASTY.len()]);
        let _ = parse_scenario(builtin(which), "fuzz.toml", &[set]);
    }
}

/// The trace formats of `mmsim replay`, with options.
const TRACE_FORMATS: &[&str] = &[
    "txt",
    "csv",
    "csv:time-col=1,obj-id-col=2,obj-size-col=3,has-header=true",
    "csv:obj-id-col=2,op-col=3,delimiter=tab,obj-id-is-num=false",
    "csv:time-col=1,obj-id-col=2,key-size-col=3,obj-size-col=4,op-col=6,obj-id-is-num=false",
    "msr",
    "blkparse",
    "blkparse:action=D",
    "oracleGeneral",
    "lcs",
    "vscsi",
    "alibaba",
    "tencent",
    "fiu",
    "spc",
    "spc:block-size=4096",
    "arc",
];

/// Every record of `bytes` read as `format`: requests then at most one error; the reader
/// stops there.
fn read_trace(bytes: Vec<u8>, format: &str) -> Result<usize, String> {
    let f = mmsim::trace::Format::parse(format).expect("valid format");
    let r = mmsim::trace::TraceReader::from_reader(
        Box::new(std::io::Cursor::new(bytes)),
        "fuzz.trace",
        &f,
    )
    .map_err(|e| e.to_string())?;
    let mut n = 0;
    for req in r {
        req.map_err(|e| e.to_string())?;
        n += 1;
    }
    Ok(n)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    /// lcs records of any bytes behind a valid header of any version (0 and 9 to 11 are
    /// not lcs versions), raw or zstd-compressed: requests or one error naming the file.
    #[test]
    fn lcs_records_never_panic(
        version in 0u64..12,
        raw in proptest::collection::vec(any::<u8>(), 0..400),
        compress in any::<bool>(),
    ) {
        let mut bytes = mmsim::trace::lcs::encode_header(version, 0, 0);
        bytes.extend_from_slice(&raw);
        if compress {
            bytes = zstd::stream::encode_all(&bytes[..], 1).unwrap();
        }
        match read_trace(bytes, "lcs") {
            Ok(n) => prop_assert!((1..=8).contains(&version) && n <= raw.len() / 24, "{n}"),
            Err(e) => prop_assert!(e.contains("fuzz.trace"), "{e}"),
        }
    }

    /// Arbitrary bytes, and lines built from trace-like fields, in every format (and
    /// zstd- or gzip-compressed, or behind gzip's magic number): requests or one error
    /// naming the file, never a panic.
    #[test]
    fn trace_readers_never_panic(
        which in 0usize..TRACE_FORMATS.len(),
        raw in proptest::collection::vec(any::<u8>(), 0..300),
        fields in proptest::collection::vec(
            proptest::sample::select(vec![
                "0", "1", "-1", "4096", "18446744073709551615", "99999999999999999999",
                "Read", "Write", "hm", "Q", "D", "RS", "WS", "+", "8,0", "[cat]", "abc", "",
                "1.5", "nan", ",", "\t", " ",
            ]),
            0..40,
        ),
        compress in 0u8..4,
    ) {
        let format = TRACE_FORMATS[which];
        let mut bytes = raw.clone();
        for (i, f) in fields.iter().enumerate() {
            bytes.extend_from_slice(f.as_bytes());
            bytes.push(if i % 7 == 6 { b'\n' } else { b',' });
        }
        match compress {
            1 => bytes = zstd::stream::encode_all(&bytes[..], 1).unwrap(),
            2 => {
                use std::io::Write;
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(&bytes).unwrap();
                bytes = e.finish().unwrap();
            }
            // The gzip magic number before arbitrary bytes: a corrupt stream.
            3 => bytes.splice(0..0, [0x1f, 0x8b]).for_each(drop),
            _ => {}
        }
        if let Err(e) = read_trace(bytes, format) {
            prop_assert!(e.contains("fuzz.trace"), "{format}: {e}");
        }
    }
}
