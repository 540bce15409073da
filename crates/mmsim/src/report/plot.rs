//! Plots of `mmsim compare --plot DIR`: every run on the same axes, one SVG and one PNG per
//! plot, named predictably:
//!
//! - `series-<column>.{svg,png}` — the time series of each `series_columns` counter
//!   (pages for `nr_*` gauges, a cumulative count for event counters such as
//!   `pgmajfault`) against virtual time;
//! - `cgroup-<name>-usage.{svg,png}` — memory.current of each memory cgroup but the root
//!   (MiB) against virtual time, when the runs have `[[cgroups]]`; a nested cgroup's `/`
//!   becomes `.` (`cgroup-a.b-usage`: dots cannot appear in cgroup names);
//! - `lru-gen-<run>.{svg,png}` — MGLRU runs: the size of each generation (youngest =
//!   max_seq), anon and file, against virtual time;
//! - `samples-<task>-<label>.{svg,png}` — the empirical CDF of each task's timed samples.
//!
//! Names are sanitized to `[A-Za-z0-9_.-]`. Rendering needs no system fonts: plotters is
//! built without its `ttf`/`ab_glyph` font features, the SVG files carry their text as
//! `<text>` elements (the viewer's sans-serif font draws them), and the PNG files draw text
//! with the public-domain 8×8 bitmap font of the `font8x8` crate through
//! [`PixelFontBackend`], so the same bytes come out on every machine.

use std::path::{Path, PathBuf};

use plotters::backend::{BitMapBackend, SVGBackend};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};

use super::load::RunDoc;
use super::tables::{sample_labels, sample_unit, samples_ns, task_names};

/// Size of every plot, pixels.
pub const PLOT_SIZE: (u32, u32) = (960, 540);

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
#[derive(Clone, Debug, PartialEq)]
pub struct Plot {
    /// File stem (sanitized), e.g. `series-nr_active_file`.
    pub stem: String,
    /// Caption.
    pub title: String,
    /// X axis description.
    pub x_desc: String,
    /// Y axis description.
    pub y_desc: String,
    /// One line per run.
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
    /// An empirical CDF (legend lower right, x padded on both sides) rather than a time
    /// series (legend upper left).
    pub cdf: bool,
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

/// The plots for these runs: one per series column, one per memory cgroup but the root,
/// then one per task and sample label.
pub fn plots(docs: &[RunDoc], names: &[String]) -> Vec<Plot> {
    let mut out = Vec::new();
    for col in series_columns(docs) {
        let lines = docs
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
        let y_desc = if col.starts_with("nr_") {
            "pages"
        } else {
            "events (cumulative)"
        };
        out.push(Plot {
            stem: format!("series-{}", sanitize(&col)),
            title: col.clone(),
            x_desc: "virtual time (s)".into(),
            y_desc: y_desc.into(),
            lines,
            cdf: false,
        });
    }
    for cg in cgroup_names(docs) {
        let lines = docs
            .iter()
            .zip(names)
            .map(|(d, n)| {
                let pts = d
                    .cgroup_series(&cg)
                    .into_iter()
                    .map(|(t, b)| (t as f64 / 1e9, b as f64 / f64::from(1u32 << 20)))
                    .collect();
                (n.clone(), pts)
            })
            .collect();
        out.push(Plot {
            stem: format!("cgroup-{}-usage", sanitize(&cg.replace('/', "."))),
            title: format!("cgroup {cg}: memory.current"),
            x_desc: "virtual time (s)".into(),
            y_desc: "memory.current (MiB)".into(),
            lines,
            cdf: false,
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
            title: format!("{n}: MGLRU generation sizes (youngest = max_seq)"),
            x_desc: "virtual time (s)".into(),
            y_desc: "folios (pages)".into(),
            lines,
            cdf: false,
        });
    }
    for task in task_names(docs) {
        for label in sample_labels(docs, &task) {
            let unit = sample_unit(docs, &task, &label);
            let lines = docs
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
            out.push(Plot {
                stem: format!("samples-{}-{}", sanitize(&task), sanitize(&label)),
                title: format!("{task} {label}: empirical CDF"),
                x_desc: format!("time per sample ({})", unit.suffix()),
                y_desc: "fraction of samples <=".into(),
                lines,
                cdf: true,
            });
        }
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

/// Axis ranges covering every point, never empty: `(x range, y range)`. Y starts at 0
/// unless a value is negative; both get a little headroom.
fn bounds(p: &Plot) -> (std::ops::Range<f64>, std::ops::Range<f64>) {
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
    if x1 <= x0 {
        let pad = if x0 == 0.0 { 1.0 } else { x0.abs() * 0.1 };
        (x0, x1) = (x0 - pad, x1 + pad);
    } else if p.cdf {
        let pad = (x1 - x0) * 0.03;
        (x0, x1) = (x0 - pad, x1 + pad);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let pad = (y1 - y0) * 0.08;
    y1 += pad;
    if y0 < 0.0 {
        y0 -= pad;
    }
    (x0..x1, y0..y1)
}

/// A tick label: no more decimals than the axis span needs.
fn tick(v: f64, span: f64) -> String {
    let decimals = if span >= 100.0 {
        0
    } else if span >= 1.0 {
        2
    } else {
        (-(span.log10().floor()) as usize + 2).min(9)
    };
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    }
}

/// Draws `p` on `root` (any backend).
fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, p: &Plot) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let e = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    root.fill(&WHITE).map_err(e)?;
    let (xr, yr) = bounds(p);
    let (xs, ys) = (xr.end - xr.start, yr.end - yr.start);
    let mut chart = ChartBuilder::on(&root)
        .caption(&p.title, ("sans-serif", 26))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(96)
        .build_cartesian_2d(xr, yr)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc(p.x_desc.as_str())
        .y_desc(p.y_desc.as_str())
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&|v| tick(*v, xs))
        .y_label_formatter(&|v| tick(*v, ys))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 16))
        .light_line_style(RGBColor(235, 235, 235))
        .bold_line_style(RGBColor(210, 210, 210))
        .draw()
        .map_err(e)?;
    for (i, (name, pts)) in p.lines.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        // Earlier runs wider, so identical lines still show every colour.
        let width = 2 + 2 * (p.lines.len() - 1 - i).min(2) as u32;
        chart
            .draw_series(LineSeries::new(
                pts.iter().copied(),
                color.stroke_width(width),
            ))
            .map_err(e)?
            .label(name.as_str())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], color.stroke_width(3))
            });
    }
    let position = if p.cdf {
        SeriesLabelPosition::LowerRight
    } else {
        SeriesLabelPosition::UpperLeft
    };
    chart
        .configure_series_labels()
        .position(position)
        .margin(10)
        .label_font(("sans-serif", 18))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)?;
    Ok(())
}

/// Writes `p` as `DIR/<stem>.svg` and `DIR/<stem>.png`; returns the two paths.
pub fn write_plot(p: &Plot, dir: &Path) -> Result<[PathBuf; 2], PlotError> {
    let svg = dir.join(format!("{}.svg", p.stem));
    let png = dir.join(format!("{}.png", p.stem));
    let fail = |path: &Path, msg: String| PlotError(format!("{}: {}", path.display(), msg));
    draw(SVGBackend::new(&svg, PLOT_SIZE).into_drawing_area(), p).map_err(|m| fail(&svg, m))?;
    let backend = PixelFontBackend(BitMapBackend::new(&png, PLOT_SIZE));
    draw(backend.into_drawing_area(), p).map_err(|m| fail(&png, m))?;
    Ok([svg, png])
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

/// A bitmap backend that draws text with the 8×8 `font8x8` glyphs (scaled by an integer
/// factor from the requested size) instead of a system font; everything else is the
/// wrapped [`BitMapBackend`]'s. Characters outside ASCII draw as `?`.
pub struct PixelFontBackend<'a>(pub BitMapBackend<'a>);

impl PixelFontBackend<'_> {
    /// Integer scale of the 8×8 glyphs for a font size in points.
    fn scale(size: f64) -> i32 {
        ((size / 13.0).round() as i32).max(1)
    }

    /// The glyph rows of `c` (bit 0 is the leftmost pixel).
    fn glyph(c: char) -> [u8; 8] {
        let i = if c.is_ascii() && !c.is_ascii_control() {
            c as usize
        } else {
            '?' as usize
        };
        font8x8::legacy::BASIC_LEGACY[i]
    }
}

type BitMapError<'a> = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

impl<'a> DrawingBackend for PixelFontBackend<'a> {
    type ErrorType = BitMapError<'a>;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: plotters_backend::BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: plotters_backend::BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        let s = Self::scale(style.size()) as u32;
        Ok((8 * s * text.chars().count() as u32, 8 * s))
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let s = Self::scale(style.size());
        let width = 8 * s * text.chars().count() as i32;
        let height = 8 * s;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let trans = style.transform();
        let (w, h) = self.get_size();
        for (ci, c) in text.chars().enumerate() {
            for (row, bits) in Self::glyph(c).iter().enumerate() {
                for col in 0..8 {
                    if bits & (1 << col) == 0 {
                        continue;
                    }
                    for (sx, sy) in (0..s).flat_map(|a| (0..s).map(move |b| (a, b))) {
                        let lx = dx + (ci as i32 * 8 + col) * s + sx;
                        let ly = dy + row as i32 * s + sy;
                        let (x, y) = trans.transform(lx, ly);
                        let (x, y) = (pos.0 + x, pos.1 + y);
                        if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 {
                            self.0.draw_pixel((x, y), color)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
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
        assert_eq!(
            stems,
            [
                "series-nr_free_pages",
                "series-pgmajfault",
                "samples-read_1-pass"
            ]
        );
        assert_eq!(p[0].lines[0].1, [(0.0, 10.0), (0.1, 8.0), (0.2, 6.0)]);
        assert_eq!(p[0].y_desc, "pages");
        assert_eq!(p[1].y_desc, "events (cumulative)");
        // CDF of 1 us, 3 us: steps 0 -> 0.5 at 1, 0.5 -> 1 at 3.
        let cdf = &p[2].lines[0].1;
        assert_eq!(cdf, &[(1.0, 0.0), (1.0, 0.5), (3.0, 0.5), (3.0, 1.0)]);
        assert_eq!(p[2].x_desc, "time per sample (us)");
        assert!(ecdf_steps(&[]).is_empty());
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
        assert_eq!(files.len(), 6);
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
