//! Fuzz `--set key=value`: the input's lines are applied as overrides to a built-in
//! scenario (chosen by the first byte); the result must be a scenario or an error, never a
//! panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let builtins = mmsim::scenario::builtin_scenarios();
    let (name, _, toml) = builtins[first as usize % builtins.len()];
    let sets: Vec<String> = text.lines().map(str::to_string).collect();
    let _ = mmsim::scenario::parse_scenario(toml, name, &sets);
});
