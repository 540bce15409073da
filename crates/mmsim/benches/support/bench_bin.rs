//! The mmsim binary a benchmark measures (shared by `perf` and `replay`, which include
//! this file by path): `MMSIM_PERF_BIN` when set (e.g. the profile-guided build of
//! `scripts/build-pgo`), else the one cargo built.

use std::path::PathBuf;

/// `MMSIM_PERF_BIN`, or cargo's `mmsim`; exits with status 2 when the variable names no
/// file.
pub fn mmsim_bin() -> PathBuf {
    match std::env::var_os("MMSIM_PERF_BIN") {
        Some(p) => {
            let p = PathBuf::from(p);
            if !p.is_file() {
                eprintln!("MMSIM_PERF_BIN: {} is not a file", p.display());
                std::process::exit(2);
            }
            p
        }
        None => PathBuf::from(env!("CARGO_BIN_EXE_mmsim")),
    }
}
