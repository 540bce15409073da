//! Fuzz the lcs reader (and the zstd detection in front of it): the first byte picks a
//! header — a valid one of version `byte % 10` (0 and 9 are not lcs versions), or none —
//! and the rest are records; requests or one error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmsim::trace::{lcs, Format, TraceReader};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = if first & 0x80 == 0 {
        lcs::encode_header(u64::from(first % 10), 0, 0)
    } else {
        Vec::new()
    };
    bytes.extend_from_slice(rest);
    let Ok(r) = TraceReader::from_reader(
        Box::new(std::io::Cursor::new(bytes)),
        "fuzz.lcs",
        &Format::of(&lcs::FORMAT),
    ) else {
        return;
    };
    for req in r {
        if req.is_err() {
            break;
        }
    }
});
