//! Fuzz the text trace readers — libCacheSim txt and csv (with column options), MSR
//! Cambridge CSV, blkparse output, Alibaba and Tencent CBS CSV, FIU's, SPC (UMass) and
//! ARC (.lis) lines — and the zstd and gzip detection in front of them: the first byte picks the
//! format, the rest is the trace; it must give requests or one error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mmsim::trace::{Format, TraceReader};

const FORMATS: &[&str] = &[
    "txt",
    "csv",
    "csv:time-col=1,obj-id-col=2,obj-size-col=3,has-header=true",
    "csv:obj-id-col=2,op-col=3,delimiter=tab,obj-id-is-num=false",
    "csv:time-col=1,obj-id-col=2,key-size-col=3,obj-size-col=4,op-col=6,obj-id-is-num=false",
    "msr",
    "blkparse",
    "blkparse:action=D",
    "alibaba",
    "tencent",
    "fiu",
    "spc",
    "spc:block-size=4096",
    "arc",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, trace)) = data.split_first() else {
        return;
    };
    let format = Format::parse(FORMATS[pick as usize % FORMATS.len()]).expect("valid format");
    let Ok(r) = TraceReader::from_reader(
        Box::new(std::io::Cursor::new(trace.to_vec())),
        "fuzz.trace",
        &format,
    ) else {
        return;
    };
    for req in r {
        if req.is_err() {
            break;
        }
    }
});
