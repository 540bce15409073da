//! Fuzz the scenario parser: any bytes, read as UTF-8 scenario TOML, must give a scenario
//! or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = mmsim::scenario::parse_scenario(text, "fuzz.toml", &[]);
    }
});
