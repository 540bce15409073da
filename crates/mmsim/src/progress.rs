//! The command line's one progress style (indicatif, on standard error): the host time
//! elapsed, then a bar of the runs done (`reproduce`) or of the requests replayed
//! (`replay`), or a spinner (`run`, whose length is not known ahead; `replay` reading its
//! trace), then what is running. The line is cleared when the work ends, so only the
//! results remain.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The bar of `reproduce`: `00:01:23 [=====>    ] 7/24 runs  exec-protect / desktop`.
pub fn runs_bar(total: u64) -> ProgressBar {
    let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} runs  {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    b
}

/// The bar of `replay`: `00:00:12 [=====>    ] 412000/1000000 requests  trace.bin at 64 MiB`
/// (`total`: the requests of every cache size together).
pub fn requests_bar(total: u64, what: &str) -> ProgressBar {
    let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} requests  {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    b.set_message(what.to_string());
    b
}

/// The spinner of `replay`'s first pass: `00:00:03 [ <=> ] T: reading the trace, 3538944
/// records`; the message is set by the caller.
pub fn reading_spinner() -> ProgressBar {
    let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{spinner:^30}] {msg}")
            .expect("a valid template")
            .tick_strings(&["<=>  ", " <=> ", "  <=>", " <=> ", "<=>  "]),
    );
    b
}

/// The spinner of `run`: `00:00:04 [  <=>  ] dd-tmpfs: simulated 0.215 s`; the message
/// is set by the caller as the simulation advances.
pub fn run_spinner(scenario: &str) -> ProgressBar {
    let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{spinner:^30}] {msg}")
            .expect("a valid template")
            .tick_strings(&["<=>  ", " <=> ", "  <=>", " <=> ", "<=>  "]),
    );
    b.set_message(format!("{scenario}: starting"));
    b
}
