//! Fuzz the vscsi reader (version detection, both layouts) (and the zstd detection in front of it): arbitrary bytes
//! must give requests or one error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmsim::trace::{Format, TraceReader};

fuzz_target!(|data: &[u8]| {
    let Ok(r) = TraceReader::from_reader(
        Box::new(std::io::Cursor::new(data.to_vec())),
        "fuzz.vscsi",
        &Format::of(&mmsim::trace::vscsi::FORMAT),
    ) else {
        return;
    };
    for req in r {
        if req.is_err() {
            break;
        }
    }
});
