//! Plots of `mmsim compare --plot DIR`: every run on the same axes, one SVG and one PNG per
//! plot, named predictably:
//!
//! - `series-<column>.{svg,png}` — the time series of each `series_columns` counter
//!   (pages for `nr_*` gauges, a cumulative count for event counters such as
//!   `pgmajfault`) against virtual time; a counter that is zero throughout every run is
//!   not drawn; free pages show the zone watermarks (min, low, high) as dashed lines;
//! - `dirty-limits.{svg,png}` — each run's dirty and writeback pages (nr_dirty +
//!   nr_writeback) beside its nr_dirty_threshold and nr_dirty_background_threshold as
//!   /proc/vmstat gave them at each sample (the two thresholds have no plot of their own),
//!   when some run had dirty pages;
//! - `cgroup-<name>-usage.{svg,png}` — memory.current of each memory cgroup but the root
//!   (and `cgroup-<name>-swap`, its memory.swap.current, when a run swapped from it)
//!   (MiB) against virtual time, when the runs have `[[cgroups]]`; a nested cgroup's `/`
//!   becomes `.` (`cgroup-a.b-usage`: dots cannot appear in cgroup names);
//! - `pressure-proc.{svg,png}` and `cgroup-<name>-pressure.{svg,png}` — on the eras with
//!   PSI, the share of each sampling interval that /proc/pressure (or the cgroup's
//!   memory.pressure and io.pressure) counted as a memory or IO stall, some and full (%),
//!   per 2 s PSI period (from the totals the aggregator collected at each period's end),
//!   against virtual time; a run shorter than a period, or without any stall, draws none;
//! - `lru-gen-<run>.{svg,png}` — MGLRU runs: the size of each generation (youngest =
//!   max_seq), anon and file, against virtual time;
//! - `samples-<task>-<label>.{svg,png}` — the empirical CDF of each task's timed samples,
//!   on a logarithmic x axis when the samples span two decades or more.
//!
//! Every title names what is plotted, then the scenario, its seed and the runs compared;
//! the legend sits beside the plot, never over the data; tick labels have thousands
//! separators. Names are sanitized to `[A-Za-z0-9_.-]`.
//!
//! Text is drawn with DejaVu Sans, bundled in `assets/fonts/` (its licence beside it) and
//! compiled in: the PNG files rasterise it (plotters' `ab_glyph` support) and the SVG
//! files name it first in their `font-family` (then `sans-serif`), and both measure text
//! with its metrics, so the two look alike and no system font is needed.

use std::ops::Range;
use std::path::{Path, PathBuf};

use plotters::backend::{BitMapBackend, SVGBackend};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::load::RunDoc;
use super::tables::{sample_labels, sample_unit, samples_ns, task_names};

/// Size of every plot, pixels.
pub const PLOT_SIZE: (u32, u32) = (960, 540);

/// The font of every plot's text: DejaVu Sans 2.37 (Debian's fonts-dejavu-core), under the
/// Bitstream Vera / DejaVu licence in `assets/fonts/LICENSE-DejaVu.txt`.
const FONT_TTF: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The family the text styles ask for: registered with [`FONT_TTF`] for PNG rendering and
/// written as is into the SVG `font-family` attribute (a CSS list: DejaVu Sans where the
/// viewer has it, its sans-serif font otherwise).
const FONT: &str = "DejaVu Sans, sans-serif";

/// Registers [`FONT_TTF`] under [`FONT`] once per process.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if plotters::style::register_font(FONT, FontStyle::Normal, FONT_TTF).is_err() {
            panic!("the bundled DejaVu Sans does not parse");
        }
    });
}

/// Line colours, one per run, in column order (then repeated).
const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// A plot failed (the file could not be written, or drawing failed).
#[derive(Debug)]
pub struct PlotError(pub String);

impl std::fmt::Display for PlotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlotError {}

/// One plot: lines `(run name, points)` on shared axes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plot {
    /// File stem (sanitized), e.g. `series-nr_active_file`.
    pub stem: String,
    /// Caption: what is plotted.
    pub title: String,
    /// Second caption line: scenario, seed and the runs compared (may be empty).
    pub subtitle: String,
    /// X axis description.
    pub x_desc: String,
    /// Y axis description.
    pub y_desc: String,
    /// One line per run.
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
    /// An empirical CDF (x padded on both sides) rather than a time series.
    pub cdf: bool,
    /// Logarithmic x axis (a CDF whose samples span decades).
    pub log_x: bool,
    /// Horizontal reference lines `(label, y)`, dashed (the free pages' watermarks).
    pub marks: Vec<(String, f64)>,
}

/// `name` with every character outside `[A-Za-z0-9_.-]` replaced by `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Series column names over all runs, in order of first appearance.
fn series_columns(docs: &[RunDoc]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for c in docs.iter().flat_map(|d| &d.series_columns) {
        if !cols.contains(c) {
            cols.push(c.clone());
        }
    }
    cols
}

/// Memory cgroups but the root over all runs, in order of first appearance.
fn cgroup_names(docs: &[RunDoc]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in docs.iter().flat_map(|d| &d.cgroups) {
        if !c.is_root() && !out.contains(&c.name) {
            out.push(c.name.clone());
        }
    }
    out
}

/// The second caption line of the plots of `docs`: the scenario(s), seed(s) and the runs
/// compared, e.g. `dd-tmpfs, seed 0: vanilla vs patched`.
pub fn context(docs: &[RunDoc], names: &[String]) -> String {
    let mut scenarios: Vec<&str> = Vec::new();
    let mut seeds: Vec<u64> = Vec::new();
    for d in docs {
        if !scenarios.contains(&d.scenario.as_str()) {
            scenarios.push(&d.scenario);
        }
        if !seeds.contains(&d.seed) {
            seeds.push(d.seed);
        }
    }
    let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
    let seed_word = if seeds.len() == 1 { "seed" } else { "seeds" };
    format!(
        "{}, {seed_word} {}: {}",
        scenarios.join(" / "),
        seeds.join(", "),
        names.join(" vs ")
    )
}

/// The zone watermarks of a machine, summed over its nodes, pages: `[min, low, high]` as
/// the simulator sets them (`page_alloc::boot_watermarks`, with the run's
/// `watermark-scale-factor` and `min-free-kbytes-256m` — a report without them has the
/// rules off — and its vm.min_free_kbytes and vm.watermark_scale_factor). `None` for a
/// document without a machine.
pub fn watermarks(
    m: &super::load::MachineView,
    features: &std::collections::BTreeMap<String, bool>,
    vm: &super::load::VmView,
) -> Option<[u64; 3]> {
    let per_node = m.memory_per_node_bytes / crate::mm::page::PAGE_SIZE;
    per_node.checked_mul(m.nodes).filter(|t| *t > 0)?;
    let on = |k: &str| features.get(k).copied().unwrap_or(false);
    let nodes = vec![per_node; m.nodes as usize];
    let marks = crate::mm::page_alloc::boot_watermarks(
        &nodes,
        crate::mm::page_alloc::WatermarkRules {
            min_free_kbytes: vm.min_free_kbytes,
            watermark_scale_factor: vm.watermark_scale_factor,
            ..crate::mm::page_alloc::WatermarkRules::defaults(
                on("watermark-scale-factor"),
                on("min-free-kbytes-256m"),
            )
        },
    );
    let sum = |f: fn(&crate::mm::node::Watermarks) -> u64| marks.iter().map(f).sum::<u64>();
    Some([sum(|w| w.min), sum(|w| w.low), sum(|w| w.high)])
}

/// The sampled dirty thresholds, plotted with the dirty pages rather than alone.
const DIRTY_LIMIT_COLUMNS: [&str; 2] = ["nr_dirty_threshold", "nr_dirty_background_threshold"];

/// `dirty-limits`: each run's dirty and writeback pages (nr_dirty + nr_writeback, what
/// balance_dirty_pages holds to the limits) beside its global dirty and background
/// thresholds over time, as /proc/vmstat gave them at each sample. None when no run had
/// dirty pages, or no run sampled the thresholds (a report from before they were sampled).
fn dirty_limits_plot(docs: &[RunDoc], names: &[String], subtitle: &str) -> Option<Plot> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut dirtied = false;
    let secs = |pts: Vec<(u64, i64)>| -> Vec<(f64, f64)> {
        pts.into_iter()
            .map(|(t, v)| (t as f64 / 1e9, v as f64))
            .collect()
    };
    for (d, n) in docs.iter().zip(names) {
        let thresh = d.series_of("nr_dirty_threshold");
        if thresh.is_empty() {
            continue;
        }
        let writeback = d.series_of("nr_writeback");
        let busy: Vec<(u64, i64)> = d
            .series_of("nr_dirty")
            .into_iter()
            .zip(writeback)
            .map(|((t, dirty), (_, wb))| (t, dirty + wb))
            .collect();
        dirtied |= busy.iter().any(|&(_, v)| v > 0);
        lines.push((format!("{n}: dirty + writeback"), secs(busy)));
        lines.push((format!("{n}: nr_dirty_threshold"), secs(thresh)));
        lines.push((
            format!("{n}: nr_dirty_background_threshold"),
            secs(d.series_of("nr_dirty_background_threshold")),
        ));
    }
    dirtied.then(|| Plot {
        stem: "dirty-limits".into(),
        title: "dirty and writeback pages against the dirty thresholds".into(),
        subtitle: subtitle.to_string(),
        x_desc: "virtual time (s)".into(),
        y_desc: "pages".into(),
        lines,
        ..Plot::default()
    })
}

/// True when every point of every line is zero (or there are none).
fn all_zero(lines: &[(String, Vec<(f64, f64)>)]) -> bool {
    lines
        .iter()
        .all(|(_, pts)| pts.iter().all(|&(_, y)| y == 0.0))
}

/// The axis description of a task's samples in `unit` (one place, so that a sample's own
/// unit can replace the time unit here).
fn sample_axis(unit_suffix: &str) -> String {
    format!("time per sample ({unit_suffix})")
}

/// The plots for these runs: one per series column that is not zero throughout, one per
/// memory cgroup but the root, one per MGLRU run, then one per task and sample label.
pub fn plots(docs: &[RunDoc], names: &[String]) -> Vec<Plot> {
    let subtitle = context(docs, names);
    let mut out = Vec::new();
    for col in series_columns(docs) {
        if DIRTY_LIMIT_COLUMNS.contains(&col.as_str()) {
            continue; // in the dirty-limits plot
        }
        let lines: Vec<(String, Vec<(f64, f64)>)> = docs
            .iter()
            .zip(names)
            .map(|(d, n)| {
                let pts = d
                    .series_of(&col)
                    .into_iter()
                    .map(|(t, v)| (t as f64 / 1e9, v as f64))
                    .collect();
                (n.clone(), pts)
            })
            .collect();
        if all_zero(&lines) {
            continue;
        }
        let y_desc = if col.starts_with("nr_") {
            "pages"
        } else {
            "events (cumulative)"
        };
        let mut marks = Vec::new();
        if col == "nr_free_pages" {
            // The watermarks of the first run's machine (the same machine in a comparison
            // of one scenario; a run on another machine has its own).
            let mut seen: Vec<[u64; 3]> = Vec::new();
            for d in docs {
                if let Some(w) = watermarks(&d.machine, &d.features, &d.vm) {
                    if !seen.contains(&w) {
                        seen.push(w);
                    }
                }
            }
            for (i, w) in seen.iter().enumerate() {
                let suffix = if seen.len() > 1 {
                    format!(" ({})", i + 1)
                } else {
                    String::new()
                };
                for (name, v) in ["min", "low", "high"].iter().zip(w) {
                    marks.push((format!("{name}{suffix}"), *v as f64));
                }
            }
        }
        out.push(Plot {
            stem: format!("series-{}", sanitize(&col)),
            title: col.clone(),
            subtitle: subtitle.clone(),
            x_desc: "virtual time (s)".into(),
            y_desc: y_desc.into(),
            lines,
            marks,
            ..Plot::default()
        });
    }
    if let Some(p) = dirty_limits_plot(docs, names, &subtitle) {
        out.push(p);
    }
    // Per cgroup: memory.current, and memory.swap.current when some run swapped from it.
    type CgroupSeries = fn(&RunDoc, &str) -> Vec<(u64, u64)>;
    let per_cgroup: [(&str, &str, CgroupSeries, bool); 2] = [
        ("usage", "memory.current", RunDoc::cgroup_series, true),
        (
            "swap",
            "memory.swap.current",
            RunDoc::cgroup_swap_series,
            false,
        ),
    ];
    for cg in cgroup_names(docs) {
        for (suffix, file, series, always) in per_cgroup {
            let lines: Vec<(String, Vec<(f64, f64)>)> = docs
                .iter()
                .zip(names)
                .map(|(d, n)| {
                    let pts = series(d, &cg)
                        .into_iter()
                        .map(|(t, b)| (t as f64 / 1e9, b as f64 / f64::from(1u32 << 20)))
                        .collect();
                    (n.clone(), pts)
                })
                .collect();
            if !always
                && lines
                    .iter()
                    .all(|(_, pts)| pts.iter().all(|&(_, v)| v == 0.0))
            {
                continue;
            }
            out.push(Plot {
                stem: format!("cgroup-{}-{suffix}", sanitize(&cg.replace('/', "."))),
                title: format!("cgroup {cg}: {file}"),
                subtitle: subtitle.clone(),
                x_desc: "virtual time (s)".into(),
                y_desc: format!("{file} (MiB)"),
                lines,
                ..Plot::default()
            });
        }
    }
    // PSI: the stall share of each sampling interval, /proc and each cgroup.
    let mut groups = vec!["/".to_string()];
    groups.extend(cgroup_names(docs));
    for g in groups {
        let mut lines = Vec::new();
        for (d, n) in docs.iter().zip(names) {
            let series = d.pressure_series(&g);
            for (k, what) in ["memory some", "memory full", "io some", "io full"]
                .iter()
                .enumerate()
            {
                let pts = stall_shares(&series, k);
                if pts.iter().all(|&(_, v)| v == 0.0) {
                    continue;
                }
                lines.push((format!("{n}: {what}"), pts));
            }
        }
        if lines.is_empty() {
            continue;
        }
        let (stem, title) = if g == "/" {
            (
                "pressure-proc".to_string(),
                "/proc/pressure: memory and IO stall share per 2 s PSI period".to_string(),
            )
        } else {
            (
                format!("cgroup-{}-pressure", sanitize(&g.replace('/', "."))),
                format!(
                    "cgroup {g}: memory.pressure and io.pressure, stall share per 2 s PSI period"
                ),
            )
        };
        out.push(Plot {
            stem,
            title,
            subtitle: subtitle.clone(),
            x_desc: "virtual time (s)".into(),
            y_desc: "stalled (% of the interval)".into(),
            lines,
            ..Plot::default()
        });
    }
    // MGLRU: generation sizes over time, one plot per run that has them.
    for (d, n) in docs.iter().zip(names) {
        let ranks = d.series.iter().map(|s| s.lru_gen.len()).max().unwrap_or(0);
        if ranks == 0 {
            continue;
        }
        let mut lines = Vec::new();
        for rank in 0..ranks {
            for (t, kind) in [(0, "anon"), (1, "file")] {
                let pts: Vec<(f64, f64)> = d
                    .series
                    .iter()
                    .map(|s| {
                        let v = s.lru_gen.get(rank).map_or(0, |g| g[t]);
                        (s.t_ns as f64 / 1e9, v as f64)
                    })
                    .collect();
                if pts.iter().all(|&(_, v)| v == 0.0) {
                    continue;
                }
                let age = if rank == 0 {
                    "max_seq".to_string()
                } else {
                    format!("max_seq-{rank}")
                };
                lines.push((format!("{age} {kind}"), pts));
            }
        }
        out.push(Plot {
            stem: format!("lru-gen-{}", sanitize(n)),
            title: format!("MGLRU generation sizes of run {n} (youngest = max_seq)"),
            subtitle: format!("{}, seed {}: {n}", d.scenario, d.seed),
            x_desc: "virtual time (s)".into(),
            y_desc: "folios (pages)".into(),
            lines,
            ..Plot::default()
        });
    }
    for task in task_names(docs) {
        for label in sample_labels(docs, &task) {
            let unit = sample_unit(docs, &task, &label);
            let lines: Vec<(String, Vec<(f64, f64)>)> = docs
                .iter()
                .zip(names)
                .map(|(d, n)| {
                    let mut s: Vec<f64> = samples_ns(d, &task, &label)
                        .iter()
                        .map(|&ns| unit.convert(ns))
                        .collect();
                    s.sort_by(f64::total_cmp);
                    (n.clone(), ecdf_steps(&s))
                })
                .collect();
            let xs = || lines.iter().flat_map(|(_, v)| v.iter().map(|q| q.0));
            let lo = xs().fold(f64::INFINITY, f64::min);
            let hi = xs().fold(f64::NEG_INFINITY, f64::max);
            let log_x = lo > 0.0 && hi.is_finite() && hi / lo >= 100.0;
            out.push(Plot {
                stem: format!("samples-{}-{}", sanitize(&task), sanitize(&label)),
                title: format!("{task} {label}: empirical CDF"),
                subtitle: subtitle.clone(),
                x_desc: sample_axis(unit.suffix()),
                y_desc: "fraction of samples <=".into(),
                lines,
                cdf: true,
                log_x,
                ..Plot::default()
            });
        }
    }
    out
}

/// The share (%) of each PSI period (from one entry of `series` to the next; the first
/// from time 0) that stall total `k` grew by, at the period's end.
pub fn stall_shares(series: &[(u64, [u64; 4])], k: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    let (mut t0, mut v0) = (0u64, 0u64);
    for &(t, v) in series {
        if t > t0 {
            let share = 100.0 * v[k].saturating_sub(v0) as f64 / ((t - t0) as f64 / 1e3);
            out.push((t as f64 / 1e9, share.min(100.0)));
        }
        (t0, v0) = (t, v[k]);
    }
    out
}

/// The empirical CDF of sorted samples as a step line: from `(x0, 0)` up to `(x_last, 1)`.
pub fn ecdf_steps(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut pts = Vec::with_capacity(sorted.len() * 2);
    for (i, &x) in sorted.iter().enumerate() {
        pts.push((x, i as f64 / n));
        pts.push((x, (i + 1) as f64 / n));
    }
    pts
}

/// Axis ranges covering every point and mark, never empty: `(x range, y range)`. Y starts
/// at 0 unless a value is negative; both get a little headroom. On a logarithmic x axis
/// the range stays positive and is padded by a factor.
fn bounds(p: &Plot) -> (Range<f64>, Range<f64>) {
    let pts = || p.lines.iter().flat_map(|(_, v)| v.iter());
    let fold = |f: fn(&(f64, f64)) -> f64| {
        pts()
            .map(f)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            })
    };
    let (mut x0, mut x1) = fold(|q| q.0);
    let (y0, mut y1) = fold(|q| q.1);
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    let mut y0 = if y0.is_finite() { y0.min(0.0) } else { 0.0 };
    if !y1.is_finite() {
        y1 = 1.0;
    }
    for (_, m) in &p.marks {
        y1 = y1.max(*m);
        y0 = y0.min(*m);
    }
    if p.log_x && x0 > 0.0 {
        (x0, x1) = (x0 / 1.25, x1 * 1.25);
    } else if x1 <= x0 {
        let pad = if x0 == 0.0 { 1.0 } else { x0.abs() * 0.1 };
        (x0, x1) = (x0 - pad, x1 + pad);
    } else if p.cdf {
        let pad = (x1 - x0) * 0.03;
        (x0, x1) = (x0 - pad, x1 + pad);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let pad = (y1 - y0) * 0.06;
    y1 += pad;
    if y0 < 0.0 {
        y0 -= pad;
    }
    (x0..x1, y0..y1)
}

/// `digits` (an optional `-`, then ASCII digits) with a comma every three digits.
fn group_thousands(digits: &str) -> String {
    let (sign, body) = match digits.strip_prefix('-') {
        Some(b) => ("-", b),
        None => ("", digits),
    };
    let mut out = String::new();
    for (i, c) in body.chars().enumerate() {
        if i > 0 && (body.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// `v` with `decimals` decimals, thousands separated (`12,500.5`), never `-0`.
fn fmt_grouped(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    let s = if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    };
    match s.split_once('.') {
        Some((int, frac)) => format!("{}.{frac}", group_thousands(int)),
        None => group_thousands(&s),
    }
}

/// A tick label: no more decimals than the axis span needs, thousands separated.
fn tick(v: f64, span: f64) -> String {
    let decimals = if span >= 20.0 {
        0
    } else if span >= 2.0 {
        1
    } else if span > 0.0 {
        (-(span.log10().floor()) as usize + 2).min(9)
    } else {
        2
    };
    fmt_grouped(v, decimals)
}

/// A tick label of a logarithmic axis: the decimals the value's own size needs.
fn log_tick(v: f64) -> String {
    let a = v.abs();
    let decimals = if a >= 1.0 || a == 0.0 {
        0
    } else {
        (-(a.log10().floor()) as usize).min(9)
    };
    fmt_grouped(v, decimals)
}

/// Width of the legend column beside the plot, pixels: room for the longest name.
fn legend_width(p: &Plot) -> u32 {
    let longest = p
        .lines
        .iter()
        .map(|(n, _)| n.chars().count())
        .chain(p.marks.iter().map(|(n, _)| n.chars().count() + 6))
        .max()
        .unwrap_or(0) as u32;
    (48 + 9 * longest).clamp(110, 320)
}

/// Draws `p` on `root` (any backend): the captions, the chart, the legend column.
fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, p: &Plot) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let root = root.titled(&p.title, (FONT, 22)).map_err(e)?;
    let root = if p.subtitle.is_empty() {
        root
    } else {
        root.titled(
            &p.subtitle,
            (FONT, 15).into_font().color(&RGBColor(90, 90, 90)),
        )
        .map_err(e)?
    };
    let (w, _) = root.dim_in_pixel();
    let (chart_area, legend_area) = root.split_horizontally(w.saturating_sub(legend_width(p)));
    let (xr, yr) = bounds(p);
    if p.log_x {
        let x: LogCoord<f64> = xr.log_scale().into();
        draw_chart(&chart_area, p, x, yr, &|v: &f64| log_tick(*v))?;
    } else {
        let xs = xr.end - xr.start;
        let x: RangedCoordf64 = xr.into();
        draw_chart(&chart_area, p, x, yr, &|v: &f64| tick(*v, xs))?;
    }
    draw_legend(&legend_area, p).map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

/// The chart of `p` on `area` with the x coordinate `x` (linear or logarithmic).
fn draw_chart<DB, X>(
    area: &DrawingArea<DB, Shift>,
    p: &Plot,
    x: X,
    yr: Range<f64>,
    x_fmt: &dyn Fn(&f64) -> String,
) -> Result<(), String>
where
    DB: DrawingBackend,
    DB::ErrorType: 'static,
    X: Ranged<ValueType = f64>
        + ValueFormatter<f64>
        + AsRangedCoord<CoordDescType = X, Value = f64>,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    let ys = yr.end - yr.start;
    let (y_lo, y_hi) = (yr.start, yr.end);
    let y_fmt = |v: &f64| tick(*v, ys);
    let label_width = [y_lo, y_hi]
        .iter()
        .map(|v| y_fmt(v).chars().count())
        .max()
        .unwrap_or(4) as u32;
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(16)
        .margin_top(8)
        .margin_bottom(8)
        .x_label_area_size(46)
        .y_label_area_size(40 + 9 * label_width)
        .build_cartesian_2d(x, yr)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .x_labels(8)
        .y_labels(7)
        .x_label_formatter(x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(214, 214, 214))
        .draw()
        .map_err(e)?;
    let x_span = chart.x_range();
    for (label, y) in &p.marks {
        let grey = RGBColor(110, 110, 110);
        chart
            .draw_series(DashedLineSeries::new(
                [(x_span.start, *y), (x_span.end, *y)],
                6,
                4,
                grey.stroke_width(1),
            ))
            .map_err(e)?;
        chart
            .draw_series(std::iter::once(Text::new(
                label.clone(),
                (x_span.start, *y),
                (FONT, 12)
                    .into_font()
                    .color(&grey)
                    .pos(Pos::new(HPos::Left, VPos::Bottom)),
            )))
            .map_err(e)?;
    }
    for (i, (_, pts)) in p.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // Earlier runs wider, so identical lines still show every colour.
        let width = 2 + 2 * (p.lines.len() - 1 - i).min(2) as u32;
        chart
            .draw_series(LineSeries::new(
                pts.iter().copied(),
                color.stroke_width(width),
            ))
            .map_err(e)?;
    }
    Ok(())
}

/// The legend column: one swatch and name per line (then the marks), top-aligned.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Plot,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let style = (FONT, 15).into_font();
    let mut y = 16;
    for (i, (name, _)) in p.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        area.draw(&PathElement::new(
            vec![(4, y + 8), (32, y + 8)],
            color.stroke_width(4),
        ))?;
        area.draw(&Text::new(name.clone(), (40, y), style.clone()))?;
        y += 24;
    }
    if !p.marks.is_empty() {
        y += 8;
        area.draw(&PathElement::new(
            vec![(4, y + 8), (32, y + 8)],
            RGBColor(110, 110, 110).stroke_width(1),
        ))?;
        area.draw(&Text::new("watermarks".to_string(), (40, y), style.clone()))?;
    }
    Ok(())
}

/// Writes `p` as `DIR/<stem>.svg` and `DIR/<stem>.png`; returns the two paths.
pub fn write_plot(p: &Plot, dir: &Path) -> Result<[PathBuf; 2], PlotError> {
    register_font();
    let svg = dir.join(format!("{}.svg", p.stem));
    let png = dir.join(format!("{}.png", p.stem));
    let fail = |path: &Path, msg: String| PlotError(format!("{}: {}", path.display(), msg));
    draw(SVGBackend::new(&svg, PLOT_SIZE).into_drawing_area(), p).map_err(|m| fail(&svg, m))?;
    let (w, h) = PLOT_SIZE;
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    draw(
        BitMapBackend::with_buffer(&mut rgb, PLOT_SIZE).into_drawing_area(),
        p,
    )
    .map_err(|m| fail(&png, m))?;
    let bytes = encode_png(&rgb, w, h).map_err(|m| fail(&png, m))?;
    std::fs::write(&png, bytes).map_err(|err| fail(&png, err.to_string()))?;
    Ok([svg, png])
}

/// An RGB buffer as PNG bytes (the `png` crate directly: no image library needed).
fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Best);
    let mut writer = enc.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(rgb).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// Writes every plot of [`plots`] into `dir` (created if missing); returns the files
/// written, SVG then PNG for each plot.
pub fn write_plots(
    docs: &[RunDoc],
    names: &[String],
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| PlotError(format!("{}: cannot create directory: {}", dir.display(), e)))?;
    let mut files = Vec::new();
    for p in plots(docs, names) {
        files.extend(write_plot(&p, dir)?);
    }
    Ok(files)
}

/// The `## Plots` section of `reproduce --out DIR`'s `summary.md`: for every plot directory
/// below `dir` (`<change>/<experiment>/plots-<run>/`, in path order) a line of links to
/// its PNG files (SVG beside each), relative to `dir`. Empty when there are none.
pub fn markdown_index(dir: &Path) -> String {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                if p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("plots-"))
                {
                    out.push(p.clone());
                }
                walk(&p, out);
            }
        }
    }
    let mut dirs = Vec::new();
    walk(dir, &mut dirs);
    let mut out = String::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut pngs: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "png"))
            .collect();
        if pngs.is_empty() {
            continue;
        }
        pngs.sort();
        let rel = |p: &Path| {
            p.strip_prefix(dir)
                .unwrap_or(p)
                .to_string_lossy()
                .replace('\\', "/")
        };
        if out.is_empty() {
            out.push_str("\n## Plots\n\nPNG (SVG beside each, same name), one directory per pair of runs:\n\n");
        }
        let links: Vec<String> = pngs
            .iter()
            .map(|p| {
                let stem = p.file_stem().unwrap_or_default().to_string_lossy();
                format!("[{stem}]({})", rel(p))
            })
            .collect();
        out.push_str(&format!("- `{}/`: {}\n", rel(&d), links.join(", ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::parse_run;

    fn doc(samples: &[u64], free: &[i64]) -> RunDoc {
        let series: Vec<_> = free
            .iter()
            .enumerate()
            .map(|(i, v)| serde_json::json!({"t_ns": i as u64 * 100_000_000, "values": [v, 0]}))
            .collect();
        let j = serde_json::json!({
            "schema_version": crate::run::SCHEMA_VERSION,
            "scenario": "s",
            "tasks": [{"name": "kworker/x", "kthread": true},
                      {"name": "read 1", "samples": {"pass": samples}}],
            "series_columns": ["nr_free_pages", "pgmajfault"],
            "series": series,
        });
        parse_run(&j.to_string(), Path::new("d.json")).unwrap()
    }

    #[test]
    fn names_and_lines() {
        assert_eq!(sanitize("kworker/flush-nvme0 x"), "kworker_flush-nvme0_x");
        let docs = [doc(&[3_000, 1_000], &[10, 8, 6]), doc(&[2_000], &[10, 9])];
        let names = ["a".to_string(), "b".to_string()];
        let p = plots(&docs, &names);
        let stems: Vec<&str> = p.iter().map(|p| p.stem.as_str()).collect();
        // pgmajfault is zero throughout both runs: not drawn.
        assert_eq!(stems, ["series-nr_free_pages", "samples-read_1-pass"]);
        assert_eq!(p[0].lines[0].1, [(0.0, 10.0), (0.1, 8.0), (0.2, 6.0)]);
        assert_eq!(p[0].y_desc, "pages");
        assert_eq!(p[0].subtitle, "s, seed 0: a vs b");
        // CDF of 1 us, 3 us: steps 0 -> 0.5 at 1, 0.5 -> 1 at 3.
        let cdf = &p[1].lines[0].1;
        assert_eq!(cdf, &[(1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0)]);
        assert_eq!(p[1].x_desc, "time per sample (us)");
        assert!(!p[1].log_x, "1..3 us span no decades");
        assert!(ecdf_steps(&[]).is_empty());
        // Samples over three decades: a logarithmic x axis.
        let wide = [doc(&[1_000, 2_000_000], &[1])];
        let p = plots(&wide, &names[..1]);
        assert!(p.iter().find(|p| p.cdf).unwrap().log_x);
    }

    #[test]
    fn watermarks_are_the_simulators() {
        let eras = [
            crate::kernel::KernelEra::V4_2,
            crate::kernel::KernelEra::V6_18,
        ];
        for era in eras {
            let features = era.features("patched").unwrap();
            let map: std::collections::BTreeMap<String, bool> = crate::scenario::KNOWN_FEATURES
                .iter()
                .map(|k| (k.to_string(), features.get(k).unwrap()))
                .collect();
            // The sysctls (4.6's watermark_scale_factor only where it exists).
            let vm_sets: &[&[&str]] = if era >= crate::scenario::WATERMARK_SCALE_FACTOR_SINCE {
                &[
                    &[],
                    &["vm.min_free_kbytes=2048", "vm.watermark_scale_factor=300"],
                ]
            } else {
                &[&[], &["vm.min_free_kbytes=2048"]]
            };
            for ((mem, nodes), vm_set) in [("64MiB", 1), ("1GiB", 2), ("16MiB", 1), ("2GiB", 1)]
                .into_iter()
                .flat_map(|m| vm_sets.iter().map(move |v| (m, *v)))
            {
                let mut sets = vec![
                    format!("kernel={era}"),
                    format!("machine.memory_per_node={mem}"),
                    format!("machine.nodes={nodes}"),
                ];
                sets.extend(vm_set.iter().map(|s| s.to_string()));
                let sc = crate::scenario::load_scenario("dd-tmpfs", &sets).unwrap();
                let vm = super::super::load::VmView {
                    min_free_kbytes: sc.vm.min_free_kbytes,
                    watermark_scale_factor: sc.vm.watermark_scale_factor,
                    ..Default::default()
                };
                let sim = crate::sim::Sim::new(&sc, features.clone()).unwrap();
                let sum = |f: fn(&crate::mm::node::Watermarks) -> u64| {
                    sim.nodes.iter().map(|n| f(&n.watermark)).sum::<u64>()
                };
                let m = super::super::load::MachineView {
                    nodes,
                    cpus_per_node: 1,
                    memory_per_node_bytes: sc.machine.memory_per_node_bytes,
                };
                assert_eq!(
                    watermarks(&m, &map, &vm),
                    Some([sum(|w| w.min), sum(|w| w.low), sum(|w| w.high)]),
                    "{era:?} {mem} x {nodes} {vm_set:?}"
                );
            }
        }
        let docs = [doc(&[], &[10, 8, 6])];
        assert!(plots(&docs, &["a".to_string()])[0].marks.is_empty());
    }

    /// The dirty thresholds are not plotted alone: one `dirty-limits` plot shows each run's
    /// dirty + writeback pages beside them, and only when some run had dirty pages.
    #[test]
    fn dirty_pages_are_plotted_against_the_thresholds() {
        let run = |dirty: [i64; 2], wb: [i64; 2]| {
            let series: Vec<_> = (0..2)
                .map(|i| {
                    serde_json::json!({"t_ns": i as u64 * 500_000_000,
                        "values": [dirty[i], wb[i], 900 + i as i64, 450]})
                })
                .collect();
            let j = serde_json::json!({
                "schema_version": crate::run::SCHEMA_VERSION,
                "scenario": "s",
                "series_columns": ["nr_dirty", "nr_writeback", "nr_dirty_threshold",
                                   "nr_dirty_background_threshold"],
                "series": series,
            });
            parse_run(&j.to_string(), Path::new("d.json")).unwrap()
        };
        let names = ["a".to_string()];
        let p = plots(&[run([10, 300], [0, 200])], &names);
        let stems: Vec<&str> = p.iter().map(|p| p.stem.as_str()).collect();
        assert_eq!(
            stems,
            ["series-nr_dirty", "series-nr_writeback", "dirty-limits"]
        );
        let d = &p[2];
        assert_eq!(
            d.lines[0],
            (
                "a: dirty + writeback".into(),
                vec![(0.0, 10.0), (0.5, 500.0)]
            )
        );
        assert_eq!(d.lines[1].1, [(0.0, 900.0), (0.5, 901.0)]);
        assert_eq!(d.lines[2].1, [(0.0, 450.0), (0.5, 450.0)]);
        // Nothing dirty: no dirty-limits plot (nor the zero series).
        assert!(plots(&[run([0, 0], [0, 0])], &names)
            .iter()
            .all(|p| p.stem != "dirty-limits"));
    }

    #[test]
    fn tick_labels() {
        assert_eq!(tick(12_500.0, 40_000.0), "12,500");
        assert_eq!(tick(-1_234_567.0, 1e7), "-1,234,567");
        assert_eq!(tick(2.5, 5.0), "2.5");
        assert_eq!(tick(999.0, 1000.0), "999");
        assert_eq!(log_tick(20_000.0), "20,000");
        assert_eq!(log_tick(0.05), "0.05");
        assert_eq!(group_thousands("100"), "100");
        assert_eq!(group_thousands("-1000"), "-1,000");
    }

    #[test]
    fn cgroup_usage_plots() {
        let mut docs = [doc(&[], &[10, 8, 6]), doc(&[], &[10, 9])];
        let names = ["a".to_string(), "b".to_string()];
        assert!(plots(&docs, &names)
            .iter()
            .all(|p| !p.stem.starts_with("cgroup-")));
        let cg = |names: &[&str]| -> Vec<crate::report::load::CgroupView> {
            let j: Vec<_> = names
                .iter()
                .map(|n| serde_json::json!({"name": n}))
                .collect();
            serde_json::from_value(serde_json::Value::Array(j)).unwrap()
        };
        docs[0].cgroups = cg(&["/", "web", "web/db"]);
        docs[1].cgroups = cg(&["/", "web/db"]);
        for (i, s) in docs[0].series.iter_mut().enumerate() {
            s.cgroups = vec![1000, 256 * i as u64, 256];
        }
        for s in &mut docs[1].series {
            s.cgroups = vec![1000, 512];
        }
        let p = plots(&docs, &names);
        let cgp: Vec<&Plot> = p.iter().filter(|p| p.stem.starts_with("cgroup-")).collect();
        let stems: Vec<&str> = cgp.iter().map(|p| p.stem.as_str()).collect();
        assert_eq!(stems, ["cgroup-web-usage", "cgroup-web.db-usage"]);
        assert_eq!(cgp[0].y_desc, "memory.current (MiB)");
        // 256 pages = 1 MiB; a run without the cgroup has an empty line.
        assert_eq!(cgp[0].lines[0].1, [(0.0, 0.0), (0.1, 1.0), (0.2, 2.0)]);
        assert!(cgp[0].lines[1].1.is_empty());
        assert_eq!(
            cgp[1].lines[1],
            ("b".to_string(), vec![(0.0, 2.0), (0.1, 2.0)])
        );
        // Swap: a plot of memory.swap.current only for a cgroup that some run swapped from.
        for (i, s) in docs[0].series.iter_mut().enumerate() {
            s.cgroups_swap = vec![0, 0, 512 * i as u64];
        }
        let p = plots(&docs, &names);
        let stems: Vec<&str> = p
            .iter()
            .filter(|p| p.stem.starts_with("cgroup-"))
            .map(|p| p.stem.as_str())
            .collect();
        assert_eq!(
            stems,
            [
                "cgroup-web-usage",
                "cgroup-web.db-usage",
                "cgroup-web.db-swap"
            ]
        );
        let sw = p.iter().find(|p| p.stem == "cgroup-web.db-swap").unwrap();
        assert_eq!(sw.lines[0].1, [(0.0, 0.0), (0.1, 2.0), (0.2, 4.0)]);
        assert!(sw.lines[1].1.is_empty(), "run b sampled no swap");
    }

    #[test]
    fn stall_shares_are_per_period() {
        let ms = 1_000_000u64;
        // Periods end at 2, 4 and 6 s: 1 s, then 2 s, then nothing stalled.
        let series = [
            (2_000 * ms, [1_000_000, 0, 0, 0]),
            (4_000 * ms, [3_000_000, 0, 0, 0]),
            (6_000 * ms, [3_000_000, 0, 0, 0]),
        ];
        let got = stall_shares(&series, 0);
        let want = [(2.0, 50.0), (4.0, 100.0), (6.0, 0.0)];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for ((t, v), (wt, wv)) in got.iter().zip(want) {
            assert!((t - wt).abs() < 1e-12 && (v - wv).abs() < 1e-9, "{got:?}");
        }
        assert!(stall_shares(&series, 1).iter().all(|&(_, v)| v == 0.0));
        assert!(stall_shares(&[], 0).is_empty());
    }

    #[test]
    fn degenerate_bounds() {
        let mut p = plots(&[doc(&[], &[])], &["a".to_string()]).remove(0);
        let (x, y) = bounds(&p);
        assert!(x.end > x.start && y.end > y.start);
        p.lines[0].1 = vec![(2.0, 5.0)];
        let (x, y) = bounds(&p);
        assert!(x.start < 2.0 && x.end > 2.0 && y.start == 0.0 && y.end > 5.0);
        assert_eq!(tick(-0.0001, 1000.0), "0");
        assert_eq!(tick(0.25, 0.5), "0.250");
    }

    #[test]
    fn writes_svg_and_png() {
        let dir = std::env::temp_dir().join(format!("mmsim-plot-{}", std::process::id()));
        let docs = [doc(&[3_000, 1_000], &[10, 8, 6]), doc(&[2_000], &[10, 9])];
        let names = ["vanilla".to_string(), "patched".to_string()];
        let files = write_plots(&docs, &names, &dir).unwrap();
        // nr_free_pages and the samples' CDF, SVG and PNG (pgmajfault is zero throughout).
        assert_eq!(files.len(), 4);
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            assert!(bytes.len() > 1000, "{}", f.display());
        }
        let svg = std::fs::read_to_string(dir.join("series-nr_free_pages.svg")).unwrap();
        assert!(svg.contains("<svg") && svg.contains("vanilla") && svg.contains("patched"));
        let png = std::fs::read(dir.join("samples-read_1-pass.png")).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        // Deterministic: the same input gives the same bytes.
        write_plots(&docs, &names, &dir).unwrap();
        assert_eq!(
            std::fs::read(dir.join("samples-read_1-pass.png")).unwrap(),
            png
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
