//! The `mmsim` command line.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use mmsim::kernel::{resolve_features, KernelEra};
use mmsim::run::{run_scenario, RunOptions};
use mmsim::scenario::{builtin_scenarios, load_scenario};
use mmsim::sim::RunEnd;

#[derive(Parser)]
#[command(
    name = "mmsim",
    version,
    about = "A deterministic user-space simulator of the Linux kernel memory manager"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// List the built-in scenarios.
    Scenarios {
        /// Also show the programs each one runs (loads every built-in).
        #[arg(long, short)]
        verbose: bool,
        /// Print the table of docs/scenarios.md (markdown).
        #[arg(long)]
        markdown: bool,
    },
    /// List the workload programs, or show one: its parameters, samples and an example.
    Programs {
        /// A program name (dd, read, bonnie, …).
        name: Option<String>,
        /// Print only the program's example scenario (TOML), ready for `mmsim run`.
        #[arg(long, requires = "name")]
        example: bool,
        /// Print the whole program reference of docs/scenarios.md (markdown).
        #[arg(long, conflicts_with = "name")]
        markdown: bool,
    },
    /// Run a scenario (a built-in name or a .toml file).
    Run {
        /// Built-in scenario name or path to a scenario TOML file.
        scenario: String,
        /// Feature preset: `vanilla` (every studied change off) or `patched` (on).
        #[arg(long, default_value = "patched", value_name = "PRESET")]
        preset: String,
        /// Feature overrides, e.g. `+accessed-init,-workingset` (names below).
        #[arg(long, allow_hyphen_values = true, value_name = "+NAME,-NAME")]
        features: Option<String>,
        /// Kernel whose rules the run follows: any release from 2.6.30 to 6.18 (6.8, 5.15,
        /// 2.6.32, or as `uname -r` prints it); overrides the scenario's `kernel` (default
        /// 6.18). docs/kernel-eras.md lists the rules and the named eras.
        #[arg(long, value_name = "VERSION")]
        kernel: Option<String>,
        /// Reclaim policy: `classic` (active/inactive lists) or `mglru` (the
        /// multi-generational LRU, kernel 6.1 and later); overrides the scenario's `policy`.
        #[arg(long, value_name = "POLICY")]
        policy: Option<String>,
        /// Scenario overrides, `key=value` (dotted TOML path), repeatable.
        #[arg(long = "set")]
        sets: Vec<String>,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Write the JSON report to PATH (`-` for standard output).
        #[arg(long, value_name = "PATH")]
        json: Option<String>,
        /// Run the invariant checker after every step (slow).
        #[arg(long)]
        check: bool,
        /// Stop after this many simulation steps.
        #[arg(long)]
        max_steps: Option<u64>,
        /// Refuse to start when the run's estimated host memory exceeds SIZE (e.g. 4GiB).
        #[arg(long, value_name = "SIZE")]
        max_host_mem: Option<String>,
    },
    /// Swarm testing: random machines, workloads and features per seed, checked.
    Swarm(mmsim::swarm::cli::SwarmArgs),
    /// Replay an I/O trace through the page cache (docs/replay.md); several --ram sizes
    /// give a miss-ratio curve.
    Replay(Box<mmsim::trace::cli::ReplayArgs>),
    /// Write a block trace's page requests as libCacheSim's oracleGeneral binary: one
    /// 4 KiB object per page a request touches, for textbook cache simulators
    /// (docs/replay.md; scripts/libcachesim_compare.py uses it)
    Pages(mmsim::trace::pages::PagesArgs),
    /// Replay a studied change's benchmarks, vanilla against vanilla + the change, beside
    /// the published figures.
    Reproduce {
        /// accessed-init, exec-protect, batch-tlb-flush, truncate-batch-shadow or all.
        change: String,
        /// `small` (CI-sized) or `full` (the published machines and sizes).
        #[arg(long, default_value = "small")]
        scale: String,
        /// Write every run's JSON, the plots and summary.md into DIR.
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        /// With --out DIR: also write DIR/index.html, the whole study as one page.
        #[arg(long, requires = "out")]
        html: bool,
        /// Print a machine-readable summary (JSON) instead of the tables.
        #[arg(long)]
        json: bool,
        /// Runs executed at once.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Kernel of every run (any release from 2.6.30 to 6.18); default: each scenario's
        /// `kernel`.
        #[arg(long, value_name = "VERSION")]
        kernel: Option<String>,
        /// Reclaim policy of every run (`classic` or `mglru`; mglru needs --kernel 6.1 or
        /// later on scenarios pinned to older eras); default: each scenario's `policy`.
        #[arg(long, value_name = "POLICY")]
        policy: Option<String>,
    },
    /// Compare run documents (`run --json`) in mmtests-style tables; the first is the baseline.
    Compare {
        /// Run documents written by `mmsim run --json PATH`.
        #[arg(required = true, num_args = 2..)]
        files: Vec<String>,
        /// Column names, comma-separated, one per file (default: the features that differ).
        #[arg(long)]
        names: Option<String>,
        /// Compare documents of different scenarios.
        #[arg(long)]
        force: bool,
        /// Also write SVG and PNG plots (time series, sample CDFs) into DIR.
        #[arg(long, value_name = "DIR")]
        plot: Option<std::path::PathBuf>,
        /// Also write the comparison as one self-contained HTML page (docs/html-report.md).
        #[arg(long, value_name = "OUT.html")]
        html: Option<std::path::PathBuf>,
        /// Print the tables as CSV (one row per table, statistic, metric and run: the
        /// value and its change against the baseline) instead of text.
        #[arg(long)]
        csv: bool,
    },
    /// Write run documents (files, or directories searched for *.json) as one
    /// self-contained HTML page: runs grouped by directory and scenario, each group compared.
    Report {
        /// Run documents (`run --json`) or directories holding them (e.g. `reproduce --out`).
        #[arg(required = true)]
        inputs: Vec<String>,
        /// The page to write.
        #[arg(long, value_name = "OUT.html", required = true)]
        html: std::path::PathBuf,
    },
    /// Print a shell completion script, e.g. `mmsim completions bash >
    /// ~/.local/share/bash-completion/completions/mmsim`.
    Completions {
        /// bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
}

/// The text after `mmsim run --help`: the names `--features` and a scenario argument take.
fn run_after_help() -> String {
    let mut studied = Vec::new();
    let mut rules = Vec::new();
    for f in mmsim::scenario::KNOWN_FEATURES {
        if mmsim::kernel::RULES.iter().any(|r| r.feature == *f) {
            rules.push(*f);
        } else {
            studied.push(*f);
        }
    }
    let names: Vec<&str> = builtin_scenarios().iter().map(|(n, _, _)| *n).collect();
    let wrap = |items: &[&str]| {
        let mut out = String::new();
        let mut line = String::from(" ");
        for (i, item) in items.iter().enumerate() {
            let word = if i + 1 < items.len() {
                format!(" {item},")
            } else {
                format!(" {item}")
            };
            if line.len() + word.len() > 88 {
                out.push_str(&line);
                out.push('\n');
                line = String::from(" ");
            }
            line.push_str(&word);
        }
        out.push_str(&line);
        out
    };
    format!(
        "Features (--features, [features]): the studied changes, set by the presets\n{}\n\
         and the reclaim and workingset rules of the kernel eras (docs/kernel-eras.md)\n{}\n\n\
         Built-in scenarios (`mmsim scenarios` describes them):\n{}",
        wrap(&studied),
        wrap(&rules),
        wrap(&names)
    )
}

/// The command line as typed, for the HTML pages (`mmsim` and its arguments, quoted).
fn command_line() -> String {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .map(|a| mmsim::report::html::shell_word(&a))
        .collect();
    format!("mmsim {}", args.join(" "))
}

/// A user error: printed as `mmsim: error: …`, exit status 2.
struct UsageError(String);

/// `--kernel VERSION`.
fn parse_kernel(arg: Option<&str>) -> Result<Option<KernelEra>, UsageError> {
    arg.map(|v| KernelEra::parse(v).map_err(|e| UsageError(format!("--kernel: {e}"))))
        .transpose()
}

/// `--policy NAME`.
fn parse_policy(p: Option<&str>) -> Result<Option<mmsim::mm::policy::ReclaimPolicy>, UsageError> {
    p.map(|p| {
        mmsim::mm::policy::ReclaimPolicy::parse(p).map_err(|e| UsageError(format!("--policy: {e}")))
    })
    .transpose()
}

#[allow(clippy::too_many_arguments)]
fn cmd_run(
    scenario: &str,
    preset: &str,
    features: Option<&str>,
    kernel: Option<&str>,
    policy: Option<&str>,
    sets: &[String],
    seed: Option<u64>,
    json: Option<&str>,
    check: bool,
    max_steps: Option<u64>,
    max_host_mem: Option<&str>,
) -> Result<ExitCode, UsageError> {
    let kernel = parse_kernel(kernel)?;
    let policy = parse_policy(policy)?;
    // Bad --preset / --features are reported before the scenario is read.
    resolve_features(None, kernel, preset, &Default::default(), features).map_err(UsageError)?;
    // --seed is `--set seed=N`: what the scenario draws from its seed at load time (the
    // desktop's application sizes) changes with it too.
    let mut sets = sets.to_vec();
    if let Some(s) = seed {
        sets.push(format!("seed={s}"));
    }
    // --kernel is the scenario's kernel too, so its era checks (vm.swappiness above 100,
    // vm.watermark_scale_factor, the cgroup files of later releases) are the run's.
    if let Some(k) = kernel {
        sets.insert(0, format!("kernel={k}"));
    }
    let sc = load_scenario(scenario, &sets).map_err(|e| UsageError(e.to_string()))?;
    let max_mem = match max_host_mem {
        Some(v) => Some(
            mmsim::scenario::parse_size_arg(v)
                .map_err(|e| UsageError(format!("--max-host-mem: {e}")))?,
        ),
        None => None,
    };
    mmsim::run::check_host_memory(&sc, max_mem).map_err(UsageError)?;
    if let Some(path) = json.filter(|p| *p != "-") {
        mmsim::run::check_output_file("--json", std::path::Path::new(path)).map_err(UsageError)?;
    }
    mmsim::swarm::cli::install_ctrlc();
    // The era (--kernel, else the scenario's), the preset's studied changes, the
    // scenario's [features], then --features.
    let mut f =
        resolve_features(sc.kernel, kernel, preset, &sc.features, features).map_err(UsageError)?;
    if policy.is_some() {
        f.policy = policy;
    }
    mmsim::mm::policy::check_policy_era(&sc, &f).map_err(UsageError)?;
    let era = f.era;
    let opts = RunOptions {
        features: f,
        check,
        max_steps: max_steps.unwrap_or(u64::MAX),
        ..RunOptions::default()
    };
    let spinner = std::io::stderr()
        .is_terminal()
        .then(|| mmsim::progress::run_spinner(&sc.name));
    let mut last_report = std::time::Instant::now();
    let mut progress = |t_ps: u64| {
        if let Some(b) = &spinner {
            if last_report.elapsed().as_millis() >= 100 {
                last_report = std::time::Instant::now();
                b.set_message(format!(
                    "{}: simulated {:.3} s",
                    sc.name,
                    t_ps as f64 / 1e12
                ));
                b.tick();
            }
        }
    };
    let host_start = std::time::Instant::now();
    let report = run_scenario(&sc, &opts, &mut progress).map_err(UsageError)?;
    let host = mmsim::run::HostTime {
        elapsed: host_start.elapsed(),
        checked: check,
    };
    if let Some(b) = spinner {
        b.finish_and_clear();
    }
    let mut stdout = std::io::stdout().lock();
    match json {
        Some("-") => {
            // A reader that closes the pipe early (`| head`) is not an error of the run.
            match serde_json::to_writer_pretty(&mut stdout, &report) {
                Err(e) if e.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe) => {}
                Err(e) => return Err(UsageError(format!("--json -: {e}"))),
                Ok(()) => {
                    let _ = writeln!(stdout);
                }
            }
        }
        Some(path) => {
            let text =
                serde_json::to_string_pretty(&report).map_err(|e| UsageError(e.to_string()))?;
            std::fs::write(path, text + "\n")
                .map_err(|e| UsageError(format!("--json {}: {}", path, e)))?;
            let _ = mmsim::run::write_summary(&report, era, Some(&host), &mut stdout);
        }
        None => {
            let _ = mmsim::run::write_summary(&report, era, Some(&host), &mut stdout);
        }
    }
    Ok(match report.end {
        RunEnd::Completed if report.oracle_violations.is_empty() => ExitCode::SUCCESS,
        RunEnd::Completed => {
            eprintln!(
                "mmsim: content oracle found {} violation(s)",
                report.oracle_violations.len()
            );
            ExitCode::from(1)
        }
        ref e => {
            eprintln!("mmsim: run did not complete: {:?}", e);
            ExitCode::from(1)
        }
    })
}

fn cmd_compare(
    files: &[String],
    names: Option<&str>,
    force: bool,
    plot: Option<&std::path::Path>,
    html: Option<&std::path::Path>,
    csv: bool,
) -> Result<ExitCode, UsageError> {
    use mmsim::report::{load, plot as plots, tables};
    let docs = load::load_runs(files, force).map_err(|e| UsageError(e.to_string()))?;
    let names = match names {
        None => tables::default_names(&docs),
        Some(list) => {
            let n: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
            if n.len() != docs.len() || n.iter().any(String::is_empty) {
                return Err(UsageError(format!(
                    "--names: {} name(s) given for {} file(s)",
                    n.iter().filter(|s| !s.is_empty()).count(),
                    docs.len()
                )));
            }
            n
        }
    };
    let text = if csv {
        mmsim::report::csv::render_csv(&docs, &names)
    } else {
        tables::render_all(&docs, &names)
    };
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if let Some(dir) = plot {
        let written = plots::write_plots(&docs, &names, dir)
            .map_err(|e| UsageError(format!("--plot {}", e)))?;
        let note = format!("plots: {} files in {}", written.len(), dir.display());
        if csv {
            eprintln!("{note}");
        } else {
            let _ = writeln!(stdout, "\n{note}");
        }
    }
    if let Some(path) = html {
        let page = mmsim::report::html::compare_page(&[(docs, names)], &command_line());
        mmsim::report::html::write_page(path, &page)
            .map_err(|e| UsageError(format!("--html {e}")))?;
        if csv {
            eprintln!("html: {}", path.display());
        } else {
            let _ = writeln!(stdout, "\nhtml: {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_report(inputs: &[String], html: &std::path::Path) -> Result<ExitCode, UsageError> {
    use mmsim::report::{html as page, tables};
    let docs = page::collect_runs(inputs).map_err(UsageError)?;
    let groups: Vec<_> = page::group_runs(docs)
        .into_iter()
        .map(|g| {
            let names = tables::default_names(&g);
            (g, names)
        })
        .collect();
    let text = page::compare_page(&groups, &command_line());
    page::write_page(html, &text).map_err(|e| UsageError(format!("--html {e}")))?;
    let runs: usize = groups.iter().map(|(g, _)| g.len()).sum();
    println!(
        "html: {} ({} runs in {} comparisons, {} bytes)",
        html.display(),
        runs,
        groups.len(),
        text.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[allow(clippy::too_many_arguments)]
fn cmd_reproduce(
    change: &str,
    scale: &str,
    out: Option<std::path::PathBuf>,
    json: bool,
    jobs: usize,
    kernel: Option<&str>,
    policy: Option<&str>,
    html: bool,
) -> Result<ExitCode, UsageError> {
    use mmsim::report::reproduce::{reproduce, ReproduceOptions, Scale};
    let html_dir = out.clone().filter(|_| html);
    let scale = Scale::parse(scale)
        .ok_or_else(|| UsageError(format!("--scale: `{scale}` (known: small, full)")))?;
    // The output directory is made before the runs, not after the first experiment's.
    if let Some(dir) = &out {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("--out {}: {e}", dir.display())))?;
    }
    let opts = ReproduceOptions {
        scale,
        out,
        jobs: jobs.max(1),
        progress: std::io::stderr().is_terminal(),
        kernel: parse_kernel(kernel)?,
        policy: parse_policy(policy)?,
    };
    let summary = reproduce(change, &opts).map_err(UsageError)?;
    let mut stdout = std::io::stdout().lock();
    if json {
        let _ = serde_json::to_writer_pretty(&mut stdout, &summary.to_json());
        let _ = writeln!(stdout);
    } else {
        let _ = stdout.write_all(summary.render().as_bytes());
    }
    if let Some(dir) = html_dir {
        let path = dir.join("index.html");
        let page = mmsim::report::html::reproduce_page(&summary, &dir, &command_line())
            .map_err(UsageError)?;
        mmsim::report::html::write_page(&path, &page)
            .map_err(|e| UsageError(format!("--html {e}")))?;
        if !json {
            let _ = writeln!(stdout, "\nhtml: {} ({} bytes)", path.display(), page.len());
        }
    }
    Ok(if summary.all_required_passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn main() -> ExitCode {
    let command = Cli::command().mut_subcommand("run", |c| c.after_help(run_after_help()));
    let cli = match command
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let r = match cli.cmd {
        Cmd::Scenarios { verbose, markdown } => {
            if markdown {
                print!("{}", mmsim::scenario::builtins_markdown());
            } else if verbose {
                print!("{}", mmsim::scenario::builtins_text());
            } else {
                for (name, desc, _) in builtin_scenarios() {
                    println!("{:<24} {}", name, desc);
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Programs {
            name,
            example,
            markdown,
        } => mmsim::workload::programs_command(name.as_deref(), example, markdown)
            .map(|text| {
                print!("{text}");
                ExitCode::SUCCESS
            })
            .map_err(UsageError),
        Cmd::Run {
            scenario,
            preset,
            features,
            kernel,
            policy,
            sets,
            seed,
            json,
            check,
            max_steps,
            max_host_mem,
        } => cmd_run(
            &scenario,
            &preset,
            features.as_deref(),
            kernel.as_deref(),
            policy.as_deref(),
            &sets,
            seed,
            json.as_deref(),
            check,
            max_steps,
            max_host_mem.as_deref(),
        ),
        Cmd::Swarm(args) => mmsim::swarm::cli::cmd_swarm(&args).map_err(UsageError),
        Cmd::Replay(args) => mmsim::trace::cli::cmd_replay(&args).map_err(UsageError),
        Cmd::Pages(args) => mmsim::trace::pages::cmd_pages(&args).map_err(UsageError),
        Cmd::Reproduce {
            change,
            scale,
            out,
            json,
            jobs,
            kernel,
            policy,
            html,
        } => cmd_reproduce(
            &change,
            &scale,
            out,
            json,
            jobs,
            kernel.as_deref(),
            policy.as_deref(),
            html,
        ),
        Cmd::Compare {
            files,
            names,
            force,
            plot,
            html,
            csv,
        } => cmd_compare(
            &files,
            names.as_deref(),
            force,
            plot.as_deref(),
            html.as_deref(),
            csv,
        ),
        Cmd::Report { inputs, html } => cmd_report(&inputs, &html),
        Cmd::Completions { shell } => {
            let mut command =
                Cli::command().mut_subcommand("run", |c| c.after_help(run_after_help()));
            clap_complete::generate(shell, &mut command, "mmsim", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    };
    match r {
        Ok(c) => c,
        Err(UsageError(msg)) => {
            eprintln!("mmsim: error: {}", msg);
            ExitCode::from(2)
        }
    }
}
