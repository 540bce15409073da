//! `--html`: one self-contained HTML page a person opens in a browser — the compare tables
//! (sortable, the better value marked, changes coloured by direction), the vmstat table, the
//! profile as bars, interactive plots (hover values, runs toggled, range zoom) and the
//! runs' inputs; for `reproduce`, each experiment's figures beside the published ones, its
//! verdicts and notes, linked from a summary.
//!
//! Nothing is computed twice: the tables are the [`CompareTable`]s of
//! [`super::tables`] and [`super::reproduce`], their cells the strings
//! [`CompareTable::cells`] gives the text output, and the plots the [`Plot`]s of
//! [`super::plot::plots`] (downsampled to [`MAX_POINTS`] points a line, keeping each
//! bucket's extremes). The page fetches nothing: the style sheet and the script
//! (`html_assets/`) are inlined and the plot data is one JSON block the script draws as SVG.
//! Colours are the Okabe-Ito palette (distinguishable with the common colour-vision
//! deficiencies); lines after the first are also dashed, and changes carry their sign, so
//! nothing is told by colour alone.

use std::path::{Path, PathBuf};

use super::compare::CompareTable;
use super::load::{self, LoadError, RunDoc};
use super::plot::{plots, Plot};
use super::reproduce::{Check, CheckStatus, ExperimentResult, Summary};
use super::stats::Direction;
use super::tables;
use crate::kernel::{resolve_features, KernelEra};

/// The style sheet, inlined in every page.
const CSS: &str = include_str!("html_assets/report.css");
/// The script (sortable tables, SVG plots), inlined in every page.
const JS: &str = include_str!("html_assets/report.js");

/// Points kept per plotted line (the plot is ~700 px wide: two points a pixel at most).
pub const MAX_POINTS: usize = 600;

/// The mmsim that writes the page.
pub const MMSIM_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `text` with the HTML special characters escaped (element content and quoted attributes).
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `v` rounded to `digits` significant digits.
fn round_sig(v: f64, digits: i32) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let e = digits - 1 - v.abs().log10().floor() as i32;
    if e >= 0 {
        let m = 10f64.powi(e);
        (v * m).round() / m
    } else {
        let m = 10f64.powi(-e);
        (v / m).round() * m
    }
}

/// A number for the embedded JSON: integers below 1e12 exactly, others to `digits`
/// significant digits, in the shortest form; `null` if not finite.
fn json_num(v: f64, digits: i32) -> String {
    if !v.is_finite() {
        return "null".into();
    }
    if v == v.trunc() && v.abs() < 1e12 {
        return format!("{}", v as i64);
    }
    let r = round_sig(v, digits);
    if r == r.trunc() && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

/// At most `max` points of a line, in order: the first and last point and, per bucket of
/// consecutive points, the ones with the smallest and the largest y (so peaks survive).
pub fn downsample(pts: &[(f64, f64)], max: usize) -> Vec<(f64, f64)> {
    if pts.len() <= max.max(4) {
        return pts.to_vec();
    }
    let buckets = (max.max(4) - 2) / 2;
    let size = (pts.len() - 2).div_ceil(buckets);
    let mut out = vec![pts[0]];
    for chunk in pts[1..pts.len() - 1].chunks(size) {
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = i;
            }
            if p.1 > chunk[hi].1 {
                hi = i;
            }
        }
        out.push(chunk[lo.min(hi)]);
        if lo != hi {
            out.push(chunk[lo.max(hi)]);
        }
    }
    out.push(pts[pts.len() - 1]);
    out
}

/// A plot as the script reads it: `{"t":title,"x":x axis,"y":y axis,"cdf":bool,
/// "l":[{"n":run,"d":[x0,y0,x1,y1,...]}]}`.
fn plot_json(p: &Plot) -> String {
    let s = |t: &str| serde_json::to_string(t).unwrap_or_else(|_| "\"\"".into());
    let lines: Vec<String> = p
        .lines
        .iter()
        .map(|(name, pts)| {
            let d: Vec<String> = downsample(pts, MAX_POINTS)
                .iter()
                .map(|(x, y)| format!("{},{}", json_num(*x, 6), json_num(*y, 5)))
                .collect();
            format!("{{\"n\":{},\"d\":[{}]}}", s(name), d.join(","))
        })
        .collect();
    format!(
        "{{\"t\":{},\"x\":{},\"y\":{},\"cdf\":{},\"l\":[{}]}}",
        s(&p.title),
        s(&p.x_desc),
        s(&p.y_desc),
        p.cdf,
        lines.join(",")
    )
}

/// An HTML page under construction: the body, the plots it refers to, and its contents.
pub struct Page {
    body: String,
    plots: Vec<String>,
    toc: Vec<(String, String)>,
}

impl Default for Page {
    fn default() -> Self {
        Page::new()
    }
}

impl Page {
    /// An empty page.
    pub fn new() -> Page {
        Page {
            body: String::new(),
            plots: Vec::new(),
            toc: Vec::new(),
        }
    }

    /// Appends raw HTML.
    pub fn raw(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// A section heading (`h2`) with an anchor, listed in the page's contents.
    pub fn section(&mut self, id: &str, title: &str) {
        self.toc.push((id.to_string(), title.to_string()));
        self.raw(&format!("<h2 id=\"{}\">{}</h2>\n", esc(id), esc(title)));
    }

    /// A sub-heading.
    pub fn h3(&mut self, text: &str) {
        self.raw(&format!("<h3>{}</h3>\n", esc(text)));
    }

    /// A paragraph of text.
    pub fn para(&mut self, text: &str) {
        self.raw(&format!("<p>{}</p>\n", esc(text)));
    }

    /// Preformatted text (a table already rendered as text).
    pub fn pre(&mut self, text: &str) {
        self.raw(&format!("<pre>{}</pre>\n", esc(text)));
    }

    /// A compare table: one cell per column with the value and its change (the strings of
    /// [`CompareTable::cells`]), the best of our values marked, changes coloured by
    /// whether they are better or worse, the published pair after ours; sortable.
    pub fn compare_table(&mut self, t: &CompareTable) {
        let cells = t.cells();
        let ncols = t.columns.len();
        let mut h = String::from("<div class=\"tw\"><table class=\"cmp sortable\">");
        if !t.title.is_empty() {
            h.push_str(&format!("<caption>{}</caption>", esc(&t.title)));
        }
        h.push_str("<thead><tr><th data-sort=\"text\">Stat</th><th data-sort=\"text\">Metric</th>");
        for (i, c) in t.columns.iter().enumerate() {
            let base = if i == 0 { " (baseline)" } else { "" };
            h.push_str(&format!(
                "<th data-sort=\"num\"><span class=\"sw c{}\"></span>{}{}</th>",
                i % 8,
                esc(c),
                base
            ));
        }
        if let Some((b, n)) = &t.published_columns {
            h.push_str(&format!(
                "<th data-sort=\"num\" class=\"pub first\">{}</th><th data-sort=\"num\" class=\"pub\">{}</th>",
                esc(b),
                esc(n)
            ));
        }
        h.push_str("</tr></thead><tbody>");
        for (r, row_cells) in t.rows.iter().zip(&cells) {
            let dir = if r.neutral {
                ("size: no direction", "&#8597;")
            } else {
                match r.effective_direction() {
                    Direction::LowerIsBetter => ("lower is better", "&#9660;"),
                    Direction::HigherIsBetter => ("higher is better", "&#9650;"),
                }
            };
            // The best of our values, when they are not all equal.
            let ours: Vec<Option<f64>> = (0..ncols)
                .map(|i| r.values.get(i).copied().flatten().filter(|v| v.is_finite()))
                .collect();
            let defined: Vec<f64> = ours.iter().flatten().copied().collect();
            let best = if r.neutral || defined.len() < 2 || defined.iter().all(|v| *v == defined[0])
            {
                None
            } else {
                match r.effective_direction() {
                    Direction::LowerIsBetter => defined.iter().copied().reduce(f64::min),
                    Direction::HigherIsBetter => defined.iter().copied().reduce(f64::max),
                }
            };
            h.push_str(&format!(
                "<tr><td>{}</td><td>{} <span class=\"dir\" title=\"{}\">{}</span></td>",
                esc(&r.stat),
                esc(&r.name),
                dir.0,
                dir.1
            ));
            for (i, (v, p)) in row_cells.iter().enumerate() {
                let (value, change, class) = if i < ncols {
                    let change = if i == 0 { None } else { r.pct(i) };
                    let best = ours[i].is_some() && ours[i] == best;
                    (ours[i], change, if best { " best" } else { "" })
                } else if i == ncols {
                    (r.published.map(|p| p.0), None, " pub first")
                } else {
                    (r.published.map(|p| p.1), r.published_pct(), " pub")
                };
                let tone = match change {
                    Some(c) if r.neutral && c.abs() >= 0.005 => "neu",
                    Some(c) if c >= 0.5 => "up",
                    Some(c) if c <= -0.5 => "down",
                    Some(c) if c.abs() >= 0.005 => {
                        if c > 0.0 {
                            "up small"
                        } else {
                            "down small"
                        }
                    }
                    _ => "",
                };
                let dv = value.map_or(String::new(), |v| {
                    format!(" data-v=\"{}\"", json_num(v, 12))
                });
                let title = if class.contains("best") {
                    " title=\"best\""
                } else {
                    ""
                };
                h.push_str(&format!(
                    "<td class=\"n{}\"{}{}><span class=\"v\">{}</span> <span class=\"p {}\">({})</span></td>",
                    class,
                    dv,
                    title,
                    esc(v),
                    tone,
                    esc(p)
                ));
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></div>\n");
        self.raw(&h);
    }

    /// Plain counters (the vmstat differences): name, one value per column; sortable.
    pub fn counter_table(
        &mut self,
        title: &str,
        columns: &[String],
        counters: &[(String, Vec<u64>)],
    ) {
        let mut h = format!(
            "<div class=\"tw\"><table class=\"counters sortable\"><caption>{}</caption><thead><tr><th data-sort=\"text\">counter</th>",
            esc(title)
        );
        for (i, c) in columns.iter().enumerate() {
            h.push_str(&format!(
                "<th data-sort=\"num\"><span class=\"sw c{}\"></span>{}</th>",
                i % 8,
                esc(c)
            ));
        }
        h.push_str("</tr></thead><tbody>");
        for (name, v) in counters {
            h.push_str(&format!("<tr><td>{}</td>", esc(name)));
            for i in 0..columns.len() {
                match v.get(i) {
                    Some(x) => h.push_str(&format!("<td class=\"n\" data-v=\"{x}\">{x}</td>")),
                    None => h.push_str("<td class=\"n\">-</td>"),
                }
            }
            h.push_str("</tr>");
        }
        h.push_str("</tbody></table></div>\n");
        self.raw(&h);
    }

    /// The profile table as horizontal bars: per kernel function one bar per run (the run's
    /// colour), length proportional to its share; the table itself below, folded.
    pub fn profile_bars(&mut self, t: &CompareTable) {
        let max = t
            .rows
            .iter()
            .flat_map(|r| r.values.iter().flatten())
            .fold(0.0f64, |a, b| a.max(*b));
        let mut h = format!(
            "<figure class=\"bars\"><figcaption>{}: bars per kernel function, one per run</figcaption>",
            esc(&t.title)
        );
        for r in &t.rows {
            h.push_str(&format!(
                "<div class=\"bar-row\"><div class=\"bar-label\" title=\"{0}\">{0}</div><div class=\"bar-set\">",
                esc(&r.name)
            ));
            for (i, v) in r.values.iter().enumerate() {
                let v = v.unwrap_or(0.0);
                let w = if max > 0.0 { v / max * 100.0 } else { 0.0 };
                h.push_str(&format!(
                    "<div class=\"bar-line\"><span class=\"bar c{}\" style=\"width:{:.2}%\" title=\"{}: {:.2}%\"></span><span class=\"bar-v\">{:.2}%</span></div>",
                    i % 8,
                    w,
                    esc(t.columns.get(i).map_or("", String::as_str)),
                    v,
                    v
                ));
            }
            h.push_str("</div></div>");
        }
        h.push_str("<div class=\"legend static\">");
        for (i, c) in t.columns.iter().enumerate() {
            h.push_str(&format!(
                "<span class=\"key\"><span class=\"sw c{}\"></span>{}</span>",
                i % 8,
                esc(c)
            ));
        }
        h.push_str("</div></figure>\n<details><summary>the profile as a table</summary>\n");
        self.raw(&h);
        self.compare_table(t);
        self.raw("</details>\n");
    }

    /// A plot: a placeholder the script draws into from the page's plot data.
    pub fn plot(&mut self, p: &Plot) {
        let i = self.plots.len();
        self.plots.push(plot_json(p));
        self.raw(&format!(
            "<figure class=\"plot\" data-plot=\"{}\" id=\"plot-{}\"><figcaption>{}</figcaption></figure>\n",
            i,
            i,
            esc(&p.title)
        ));
    }

    /// The finished page: head (inlined style), title, contents, body, plot data, script.
    pub fn finish(self, title: &str, subtitle: &str) -> String {
        let mut toc = String::new();
        if !self.toc.is_empty() {
            toc.push_str("<nav class=\"toc\"><strong>Contents</strong><ul>");
            for (id, t) in &self.toc {
                toc.push_str(&format!("<li><a href=\"#{}\">{}</a></li>", esc(id), esc(t)));
            }
            toc.push_str("</ul></nav>");
        }
        // `</` cannot end the script element early: JSON strings escape it.
        let data = format!("[{}]", self.plots.join(",\n")).replace("</", "<\\/");
        format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <meta name=\"generator\" content=\"mmsim {ver}\">\n<title>{t}</title>\n\
             <style>\n{css}</style>\n</head>\n<body>\n<header class=\"top\"><h1>{t}</h1>\
             <p class=\"sub\">{sub}</p></header>\n{toc}\n<main>\n{body}</main>\n\
             <footer>Written by mmsim {ver}. Self-contained: no network access. Tables: \
             positive % is better (&#9660; lower is better, &#9650; higher is better, \
             &#8597; a size: signed change); &#9733; marks the best value. Plots: hover for \
             values, click a legend entry to hide or show a run, drag across a plot to zoom, \
             double-click to reset.</footer>\n\
             <script type=\"application/json\" id=\"mmsim-plots\">{data}</script>\n\
             <script>\n{js}</script>\n</body>\n</html>\n",
            ver = MMSIM_VERSION,
            t = esc(title),
            sub = esc(subtitle),
            css = CSS,
            toc = toc,
            body = self.body,
            data = data,
            js = JS
        )
    }
}

// ---------------------------------------------------------------------------------------
// A comparison of runs (compare --html, report)
// ---------------------------------------------------------------------------------------

/// The text of the scenario a run document names: a built-in's TOML, or the file at its
/// `source` path as it is now; `None` if neither is available.
fn scenario_text(d: &RunDoc) -> Option<(String, String)> {
    if let Some(name) = d.source.strip_prefix("built-in:") {
        let (_, _, text) = crate::scenario::builtin_scenarios()
            .iter()
            .find(|(n, _, _)| *n == name)?;
        return Some((format!("built-in scenario {name}"), text.to_string()));
    }
    let text = std::fs::read_to_string(&d.source).ok()?;
    Some((format!("{} (the file as it is now)", d.source), text))
}

/// The `mmsim run` command that repeats a run: the scenario, its kernel, the vanilla
/// preset and the switches in which the run departs from what that resolves to, and the
/// seed; `sets` are the `--set` overrides when known (documents do not record them).
pub fn run_command(d: &RunDoc, sets: &[String], json: &str) -> String {
    let scenario = d
        .source
        .strip_prefix("built-in:")
        .map_or_else(|| d.source.clone(), str::to_string);
    let scenario = if scenario.is_empty() {
        d.scenario.clone()
    } else {
        scenario
    };
    let era = d.era().unwrap_or(KernelEra::V4_2);
    let loaded = crate::scenario::load_scenario(&scenario, sets).ok();
    let resolved = match &loaded {
        Some(sc) => resolve_features(sc.kernel, Some(era), "vanilla", &sc.features, None).ok(),
        None => era.features("vanilla"),
    }
    .map(|f| f.to_map())
    .unwrap_or_default();
    let diff: Vec<String> = d
        .features
        .iter()
        .filter(|(k, v)| resolved.get(*k).copied().unwrap_or(false) != **v)
        .map(|(k, v)| format!("{}{}", if *v { '+' } else { '-' }, k))
        .collect();
    let features = if diff.is_empty() {
        String::new()
    } else {
        format!(" --features {}", diff.join(","))
    };
    if let Some(cmd) = replay_command(d, era, &features, sets, json) {
        return cmd;
    }
    let mut cmd = format!(
        "mmsim run {} --kernel {} --preset vanilla{features}",
        shell_word(&scenario),
        era
    );
    for s in sets {
        cmd.push_str(&format!(" --set {}", shell_word(s)));
    }
    cmd.push_str(&format!(" --seed {} --json {}", d.seed, shell_word(json)));
    cmd
}

/// A size as `--ram` and `--memory-max` take it: whole MiB, else bytes.
fn size_arg(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 20) {
        format!("{}MiB", bytes >> 20)
    } else {
        bytes.to_string()
    }
}

/// The `mmsim replay` command of a document `mmsim replay` wrote (source `replay`, one
/// replay task): its trace and format, RAM, memory.max, readahead, mmap, keep-open and
/// pace, kernel and features, seed. Options documents do not record (`--cgroup-version`,
/// `--object-map`, `--object-size`, `--size`, `--limit`, `--policy`) are for the reader to
/// add.
fn replay_command(
    d: &RunDoc,
    era: KernelEra,
    features: &str,
    sets: &[String],
    json: &str,
) -> Option<String> {
    let r = d.replay.as_ref()?;
    let [t] = r.tasks.as_slice() else {
        return None;
    };
    if d.source != "replay" {
        return None;
    }
    let ram = d.machine.memory_per_node_bytes * d.machine.nodes.max(1);
    let mut cmd = format!(
        "mmsim replay {} --format {} --ram {}",
        shell_word(&t.trace),
        shell_word(&t.format),
        size_arg(ram)
    );
    if let Some(m) = t.memory_max {
        cmd.push_str(&format!(" --memory-max {}", size_arg(m)));
    }
    if let Some(dev) = d.devices.first() {
        match dev.read_ahead_kb {
            0 => cmd.push_str(" --readahead off"),
            kb => cmd.push_str(&format!(" --readahead {kb}KiB")),
        }
    }
    for (on, flag) in [
        (t.mmap, "--mmap"),
        (t.keep_open, "--keep-open"),
        (t.pace, "--pace"),
    ] {
        if on {
            cmd.push(' ');
            cmd.push_str(flag);
        }
    }
    cmd.push_str(&format!(" --kernel {era} --preset vanilla{features}"));
    for s in sets {
        cmd.push_str(&format!(" --set {}", shell_word(s)));
    }
    cmd.push_str(&format!(
        " --set seed={} --json {}",
        d.seed,
        shell_word(json)
    ));
    Some(cmd)
}

/// `s` quoted for a POSIX shell when it has characters the shell would interpret.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:+,@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The inputs of each run: name, file, scenario, kernel, features on, machine, seed,
/// cgroups, how it ended; then per run the command that repeats it and the scenario text.
fn inputs(page: &mut Page, docs: &[RunDoc], names: &[String], sets: &[Vec<String>]) {
    let mut h = String::from(
        "<div class=\"tw\"><table class=\"inputs\"><caption>Runs (the first is the baseline)</caption>\
         <thead><tr><th>run</th><th>file</th><th>scenario</th><th>kernel</th><th>features on</th>\
         <th>machine</th><th>seed</th><th>cgroups</th><th>end</th></tr></thead><tbody>",
    );
    for (i, (d, n)) in docs.iter().zip(names).enumerate() {
        let on: Vec<&str> = d
            .features
            .iter()
            .filter(|(_, v)| **v)
            .map(|(k, _)| k.as_str())
            .collect();
        let cgroups: Vec<&str> = d
            .cgroups
            .iter()
            .filter(|c| !c.is_root())
            .map(|c| c.name.as_str())
            .collect();
        let end = if d.completed() {
            "completed".to_string()
        } else {
            format!("did not complete: {}", d.end)
        };
        let (machine, seed) = if d.host {
            // A report of examples/host_replay: a run on the machine's own kernel.
            (
                "this machine (examples/host_replay)".to_string(),
                "-".to_string(),
            )
        } else {
            (
                format!(
                    "{}&times;{} CPUs, {} MiB/node",
                    d.machine.nodes,
                    d.machine.cpus_per_node,
                    d.machine.memory_per_node_bytes >> 20
                ),
                d.seed.to_string(),
            )
        };
        h.push_str(&format!(
            "<tr><td><span class=\"sw c{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i % 8,
            esc(n),
            esc(&d.path.display().to_string()),
            esc(&d.scenario),
            esc(d.era_label()),
            esc(&if on.is_empty() { "(none)".to_string() } else { on.join(", ") }),
            machine,
            seed,
            esc(&if cgroups.is_empty() { "-".to_string() } else { cgroups.join(", ") }),
            esc(&end)
        ));
    }
    h.push_str("</tbody></table></div>\n<details class=\"inputs\"><summary>commands that repeat the runs, and the scenario text</summary>\n");
    let no_sets = Vec::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    for (i, (d, n)) in docs.iter().zip(names).enumerate() {
        let sets = sets.get(i).unwrap_or(&no_sets);
        let json = d
            .path
            .file_name()
            .map_or("run.json".into(), |f| f.to_string_lossy().into_owned());
        if d.host {
            h.push_str(&format!(
                "<p><span class=\"sw c{}\"></span>{}: a report of <code>examples/host_replay</code> \
                 (the trace replayed on this machine's kernel; docs/replay.md, \"Against a real \
                 kernel\")</p>\n",
                i % 8,
                esc(n)
            ));
            continue;
        }
        h.push_str(&format!(
            "<p><span class=\"sw c{}\"></span>{}: <code class=\"cmd\">{}</code></p>\n",
            i % 8,
            esc(n),
            esc(&run_command(d, sets, &json))
        ));
        if let Some(t) = scenario_text(d) {
            if !texts.contains(&t) {
                texts.push(t);
            }
        }
    }
    if sets.is_empty() {
        h.push_str("<p class=\"note\">Run documents do not record <code>--set</code> overrides; add any the runs were given.</p>\n");
    }
    if docs
        .iter()
        .any(|d| d.source == "replay" && d.replay.is_some())
    {
        h.push_str("<p class=\"note\">Nor <code>mmsim replay</code>'s <code>--cgroup-version</code>, <code>--object-map</code>, <code>--object-size</code>, <code>--size</code>, <code>--limit</code> or <code>--policy</code>.</p>\n");
    }
    for (what, text) in texts {
        h.push_str(&format!(
            "<p>Scenario: {}</p><pre class=\"scenario\">{}</pre>\n",
            esc(&what),
            esc(&text)
        ));
    }
    h.push_str("</details>\n");
    page.raw(&h);
}

/// The plots of the runs ([`plots`], what `compare --plot` draws), grouped: counters over
/// time, cgroup usage, MGLRU generations, sample CDFs, then any other.
fn plot_grid(page: &mut Page, docs: &[RunDoc], names: &[String]) {
    let all = plots(docs, names);
    type Keep = fn(&Plot) -> bool;
    let groups: [(&str, Keep); 4] = [
        ("Counters over time", |p| p.stem.starts_with("series-")),
        (
            "Memory cgroups: memory.current (and memory.swap.current) over time",
            |p| p.stem.starts_with("cgroup-"),
        ),
        ("MGLRU generations over time", |p| {
            p.stem.starts_with("lru-gen-")
        }),
        ("Sample distributions (empirical CDFs)", |p| p.cdf),
    ];
    let mut shown = vec![false; all.len()];
    let mut section = |page: &mut Page, title: &str, keep: &dyn Fn(&Plot) -> bool| {
        let ps: Vec<usize> = (0..all.len())
            .filter(|&i| !shown[i] && keep(&all[i]))
            .collect();
        if ps.is_empty() {
            return;
        }
        page.h3(title);
        page.raw("<div class=\"grid\">\n");
        for i in ps {
            shown[i] = true;
            page.plot(&all[i]);
        }
        page.raw("</div>\n");
    };
    for (title, keep) in groups {
        section(page, title, &keep);
    }
    // Any other plot `compare --plot` draws is shown too.
    section(page, "Other plots", &|_| true);
}

/// One comparison (runs of one scenario, the first the baseline): the runs' inputs, the
/// compare tables, vmstat, the cgroup tables, the profile, the plots. `sets` are the
/// runs' `--set` overrides when known (empty otherwise).
pub fn comparison(page: &mut Page, docs: &[RunDoc], names: &[String], sets: &[Vec<String>]) {
    inputs(page, docs, names, sets);
    if let Some(note) = tables::identical_note(docs, names) {
        page.para(&note);
    }
    page.h3("Compare tables");
    for t in tables::sample_tables(docs, names) {
        page.compare_table(&t);
    }
    page.compare_table(&tables::ops_table(docs, names));
    page.compare_table(&tables::time_table(docs, names));
    if let Some(t) = tables::replay_table(docs, names) {
        page.compare_table(&t);
    }
    for t in tables::cgroup_tables(docs, names) {
        page.compare_table(&t);
    }
    let vm = tables::vmstat_differences(docs);
    page.h3("vmstat");
    if vm.is_empty() {
        page.para("vmstat: no counter differs between the runs.");
    } else {
        page.counter_table("vmstat (end of run, counters that differ)", names, &vm);
    }
    // What a host report does not have: the simulated runs'.
    let (sims, sim_names, of_sims) = tables::simulated_runs(docs, names);
    type Section = fn(&[RunDoc]) -> Vec<(String, Vec<u64>)>;
    let sections: [(&str, &str, Section); 4] = [
        (
            "Pressure",
            "pressure (PSI total stall ms; that differ",
            tables::pressure_differences,
        ),
        (
            "Devices",
            "devices (requests, pages, seeks, busy ms; counters that differ",
            tables::device_differences,
        ),
        (
            "zram",
            "zram (the swap device's pool and traffic; that differ",
            tables::zram_differences,
        ),
        (
            "zswap",
            "zswap (the compressed pool and its writeback; that differ",
            tables::zswap_differences,
        ),
    ];
    for (heading, title, differences) in sections {
        let rows = differences(&sims);
        if !rows.is_empty() {
            page.h3(heading);
            page.counter_table(&format!("{title}{of_sims})"), &sim_names, &rows);
        }
    }
    page.h3("Profile");
    page.profile_bars(&tables::profile_table(docs, names));
    if let Some(t) = tables::replay_speed_table(docs, names) {
        page.compare_table(&t);
    }
    plot_grid(page, docs, names);
}

/// A slug for an anchor: lower-case ASCII letters, digits and `-`.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

/// The page of `mmsim compare --html` and `mmsim report`: one section per group of runs
/// (each group compared on its own, its first run the baseline); `names` per group.
pub fn compare_page(groups: &[(Vec<RunDoc>, Vec<String>)], command: &str) -> String {
    let mut page = Page::new();
    let scenarios: Vec<&str> = groups
        .iter()
        .filter_map(|(d, _)| d.first().map(|d| d.scenario.as_str()))
        .collect();
    page.raw(&format!(
        "<p>Made by <code class=\"cmd\">{}</code> with mmsim {}. Each comparison's first run \
         is its baseline; percentages are changes against it, positive is better.</p>\n",
        esc(command),
        MMSIM_VERSION
    ));
    for (i, (docs, names)) in groups.iter().enumerate() {
        let scenario = docs.first().map_or("", |d| d.scenario.as_str());
        let dir = docs
            .first()
            .and_then(|d| d.path.parent())
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let title = if groups.len() > 1 && !dir.is_empty() {
            format!("{scenario}: {} ({dir})", names.join(" vs "))
        } else {
            format!("{scenario}: {}", names.join(" vs "))
        };
        page.raw("<section class=\"group\">\n");
        page.section(&format!("g{}-{}", i + 1, slug(scenario)), &title);
        comparison(&mut page, docs, names, &[]);
        page.raw("</section>\n");
    }
    let title = format!("mmsim compare: {}", scenarios.join(", "));
    let runs: usize = groups.iter().map(|(d, _)| d.len()).sum();
    page.finish(
        &title,
        &format!("{} run(s) in {} comparison(s)", runs, groups.len()),
    )
}

// ---------------------------------------------------------------------------------------
// mmsim report: inputs
// ---------------------------------------------------------------------------------------

/// The run documents named on the command line: files as given, directories searched
/// recursively for `*.json` (sorted by path). A missing path, a directory without
/// documents, or a file that is not a run document is an error naming it.
pub fn collect_runs(args: &[String]) -> Result<Vec<RunDoc>, String> {
    let mut docs = Vec::new();
    for a in args {
        let p = Path::new(a);
        if p.is_dir() {
            let mut files = Vec::new();
            find_json(p, &mut files).map_err(|e| format!("{}: cannot read: {}", p.display(), e))?;
            files.sort();
            if files.is_empty() {
                return Err(format!(
                    "{}: no run documents (*.json) in this directory",
                    p.display()
                ));
            }
            for f in files {
                docs.push(load::load_run(&f).map_err(|e: LoadError| e.to_string())?);
            }
        } else {
            docs.push(load::load_run(p).map_err(|e| e.to_string())?);
        }
    }
    Ok(docs)
}

/// Every `*.json` file below `dir`.
fn find_json(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            find_json(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// Runs grouped for comparison: by directory and scenario, in order of first appearance;
/// within a group the order given, except that a run whose file name ends in `vanilla`
/// comes first (the baseline) and, as `reproduce --out` names them, `KEY-vanilla` /
/// `KEY-patched` pairs of one directory form a group per KEY.
pub fn group_runs(docs: Vec<RunDoc>) -> Vec<Vec<RunDoc>> {
    let key = |d: &RunDoc| {
        let stem = d.file_stem();
        let pair = ["-vanilla", "-patched"]
            .iter()
            .find_map(|s| stem.strip_suffix(s))
            .unwrap_or("")
            .to_string();
        (
            d.path.parent().map(Path::to_path_buf),
            d.scenario.clone(),
            pair,
        )
    };
    let mut groups: Vec<(_, Vec<RunDoc>)> = Vec::new();
    for d in docs {
        let k = key(&d);
        match groups.iter_mut().find(|(gk, _)| *gk == k) {
            Some((_, g)) => g.push(d),
            None => groups.push((k, vec![d])),
        }
    }
    groups
        .into_iter()
        .map(|(_, mut g)| {
            // Stable: the vanilla runs first, the rest in their order.
            g.sort_by_key(|d| !d.file_stem().ends_with("vanilla"));
            g
        })
        .collect()
}

/// Writes `html` to `path`.
pub fn write_page(path: &Path, html: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {}", dir.display(), e))?;
    }
    std::fs::write(path, html).map_err(|e| format!("{}: {}", path.display(), e))
}

// ---------------------------------------------------------------------------------------
// mmsim reproduce --out DIR --html
// ---------------------------------------------------------------------------------------

/// A check's verdict: (class, text).
fn verdict(c: &Check) -> (&'static str, &'static str) {
    match c.status() {
        CheckStatus::Holds => ("ok", "holds"),
        CheckStatus::NotReproduced => ("fail", "NOT REPRODUCED"),
        CheckStatus::PublishedOpposite => ("info", "differs: published the other way"),
        CheckStatus::Differs => ("info", "differs (informational)"),
    }
}

/// A number of a check as the text report prints it.
fn check_num(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

/// The anchor of an experiment's section.
fn exp_id(e: &ExperimentResult) -> String {
    format!("exp-{}-{}", slug(&e.change), slug(&e.name))
}

/// A table of checks (directions): what, expectation, ours, published, verdict; with a
/// link to the experiment when `link`.
fn checks_table(checks: &[(&ExperimentResult, &Check)], link: bool) -> String {
    let mut h = String::from("<div class=\"tw\"><table class=\"checks sortable\"><thead><tr>");
    if link {
        h.push_str("<th data-sort=\"text\">experiment</th>");
    }
    h.push_str(
        "<th data-sort=\"text\">direction checked</th><th data-sort=\"text\">expected</th>\
         <th data-sort=\"num\">ours: vanilla</th><th data-sort=\"num\">ours: +change</th>\
         <th data-sort=\"num\">ours %</th><th data-sort=\"num\">published %</th>\
         <th data-sort=\"text\">verdict</th></tr></thead><tbody>",
    );
    let pct = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}%"));
    let dv = |v: Option<f64>| {
        v.map_or(String::new(), |v| {
            format!(" data-v=\"{}\"", json_num(v, 12))
        })
    };
    for (e, c) in checks {
        let (class, text) = verdict(c);
        h.push_str("<tr>");
        if link {
            h.push_str(&format!(
                "<td><a href=\"#{}\">{} / {}</a></td>",
                exp_id(e),
                esc(&e.change),
                esc(&e.name)
            ));
        }
        let tone = |p: Option<f64>| match p {
            Some(p) if p >= 0.5 => "up",
            Some(p) if p <= -0.5 => "down",
            _ => "",
        };
        h.push_str(&format!(
            "<td>{}</td><td>{}</td><td class=\"n\"{}>{}</td><td class=\"n\"{}>{}</td>\
             <td class=\"n\"{}><span class=\"p {}\">{}</span></td><td class=\"n\"{}><span class=\"p {}\">{}</span></td>\
             <td><span class=\"verdict {}\">{}{}</span></td></tr>",
            esc(&c.name),
            esc(&c.requirement),
            dv(Some(c.vanilla)),
            check_num(c.vanilla),
            dv(Some(c.patched)),
            check_num(c.patched),
            dv(c.ours_pct),
            tone(c.ours_pct),
            pct(c.ours_pct),
            dv(c.published_pct),
            tone(c.published_pct),
            pct(c.published_pct),
            class,
            text,
            if c.required { "" } else { " · not required" }
        ));
    }
    h.push_str("</tbody></table></div>\n");
    h
}

/// The page of `mmsim reproduce --out DIR --html`: a summary (every experiment and every
/// direction, linked), then per experiment its runs and their commands, its directions,
/// its tables with the published figures beside ours, the notes on how ours differ, and
/// per run pair the comparison of the two runs read back from `DIR` (as `--out` wrote
/// them). `command` is the command line that made the summary.
pub fn reproduce_page(summary: &Summary, dir: &Path, command: &str) -> Result<String, String> {
    let mut page = Page::new();
    let all: Vec<(&ExperimentResult, &Check)> = summary.checks().collect();
    let failing = all
        .iter()
        .filter(|(_, c)| c.required && !c.reproduced())
        .count();
    let held = all.iter().filter(|(_, c)| c.reproduced()).count();
    page.raw("<section id=\"summary\">\n");
    page.section("summary-top", "Summary");
    let (class, text) = if failing == 0 {
        ("ok", "Every required direction holds.".to_string())
    } else {
        (
            "fail",
            format!("{failing} required direction(s) NOT reproduced."),
        )
    };
    page.raw(&format!(
        "<p class=\"banner {class}\">{} {held} of {} directions hold.</p>\n",
        esc(&text),
        all.len()
    ));
    page.raw(&format!(
        "<p>Made by <code class=\"cmd\">{}</code> with mmsim {} ({} scale). Each experiment \
         runs vanilla (every studied change off) against vanilla plus that one change; \
         published figures are the seed's.</p>\n",
        esc(command),
        MMSIM_VERSION,
        summary.scale.name()
    ));
    let mut h = String::from(
        "<div class=\"tw\"><table class=\"experiments sortable\"><thead><tr>\
         <th data-sort=\"text\">change</th><th data-sort=\"text\">experiment</th>\
         <th data-sort=\"text\">what the seed measured</th><th data-sort=\"num\">directions holding</th>\
         <th data-sort=\"num\">required not reproduced</th><th data-sort=\"num\">host wall time (s)</th>\
         </tr></thead><tbody>",
    );
    for e in &summary.experiments {
        let n = e.analysis.checks.len();
        let ok = e.analysis.checks.iter().filter(|c| c.reproduced()).count();
        let bad = e
            .analysis
            .checks
            .iter()
            .filter(|c| c.required && !c.reproduced())
            .count();
        h.push_str(&format!(
            "<tr><td>{}</td><td><a href=\"#{}\">{}</a></td><td>{}</td><td class=\"n\" data-v=\"{ok}\">{ok} / {n}</td>\
             <td class=\"n\" data-v=\"{bad}\"><span class=\"verdict {}\">{bad}</span></td><td class=\"n\" data-v=\"{:.1}\">{:.1}</td></tr>",
            esc(&e.change),
            exp_id(e),
            esc(&e.name),
            esc(&e.title),
            if bad == 0 { "ok" } else { "fail" },
            e.wall_s,
            e.wall_s
        ));
    }
    h.push_str("</tbody></table></div>\n");
    page.raw(&h);
    page.h3("Directions (positive % is better)");
    page.raw(&checks_table(&all, true));
    page.raw("</section>\n");

    for e in &summary.experiments {
        page.raw(&format!(
            "<section class=\"experiment\" id=\"sec-{}\">\n",
            exp_id(e)
        ));
        page.section(&exp_id(e), &format!("{} / {}", e.change, e.name));
        page.raw(&format!(
            "<p class=\"lead\">{}</p><p class=\"muted\">host wall time {:.1} s · <a href=\"#summary-top\">back to the summary</a></p>\n",
            esc(&e.title),
            e.wall_s
        ));
        page.h3("Directions");
        let checks: Vec<(&ExperimentResult, &Check)> =
            e.analysis.checks.iter().map(|c| (e, c)).collect();
        page.raw(&checks_table(&checks, false));
        page.h3("Our figures beside the published ones");
        for t in &e.analysis.tables {
            page.compare_table(t);
        }
        for t in &e.analysis.texts {
            page.pre(t);
        }
        if !e.analysis.notes.is_empty() {
            page.h3("How our runs differ from the seed's");
            page.raw("<div class=\"notes\">");
            for n in &e.analysis.notes {
                page.para(n);
            }
            page.raw("</div>\n");
        }
        page.h3("The runs");
        let base = dir.join(&e.change).join(&e.name);
        for (i, r) in e.runs.iter().enumerate() {
            let mut docs = Vec::new();
            for which in ["vanilla", "patched"] {
                let p = base.join(format!("{}-{}.json", r.key, which));
                docs.push(load::load_run(&p).map_err(|e| e.to_string())?);
            }
            let names = vec!["vanilla".to_string(), format!("+{}", e.change)];
            let sets = vec![r.sets.clone(), r.sets.clone()];
            page.raw(&format!(
                "<details class=\"pair\"{}><summary>{}: <code>{}</code> {} — vanilla against +{}</summary>\n",
                if i == 0 { " open" } else { "" },
                esc(&r.label),
                esc(&r.scenario),
                esc(&r.sets.iter().map(|s| format!("--set {s}")).collect::<Vec<_>>().join(" ")),
                esc(&e.change)
            ));
            comparison(&mut page, &docs, &names, &sets);
            page.raw("</details>\n");
        }
        page.raw("</section>\n");
    }
    Ok(page.finish(
        &format!("mmsim reproduce ({} scale)", summary.scale.name()),
        &format!(
            "{} experiment(s), {} of {} directions hold",
            summary.experiments.len(),
            held,
            all.len()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_escaping() {
        assert_eq!(json_num(524288.0, 5), "524288");
        assert_eq!(json_num(0.123456, 4), "0.1235");
        assert_eq!(json_num(1234567.5, 5), "1234600");
        assert_eq!(json_num(f64::NAN, 5), "null");
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("tasks.dd.sync=true"), "tasks.dd.sync=true");
        assert_eq!(slug("accessed-init / dd"), "accessed-init-dd");
    }

    #[test]
    fn downsample_keeps_ends_and_extremes() {
        let pts: Vec<(f64, f64)> = (0..10_000)
            .map(|i| (i as f64, if i == 4321 { 1e6 } else { (i % 7) as f64 }))
            .collect();
        let d = downsample(&pts, 100);
        assert!(d.len() <= 100, "{}", d.len());
        assert_eq!(d[0], pts[0]);
        assert_eq!(d[d.len() - 1], pts[pts.len() - 1]);
        assert!(d.contains(&(4321.0, 1e6)), "the peak survives");
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0), "x order kept");
        assert_eq!(downsample(&pts[..50], 100).len(), 50);
    }

    #[test]
    fn table_cells_are_the_text_cells() {
        use super::super::compare::CompareRow;
        let mut t = CompareTable::new("t", vec!["a".into(), "b".into()])
            .with_published_columns("seed a", "seed b");
        t.rows.push(
            CompareRow::new(
                "Amean",
                "Time",
                Direction::LowerIsBetter,
                vec![Some(10.0), Some(8.0)],
            )
            .with_published(5.0, 6.0),
        );
        let mut p = Page::new();
        p.compare_table(&t);
        let text = t.render();
        for s in ["10.00", "8.00", "20.00%", "-20.00%"] {
            assert!(
                text.contains(s) && p.body.contains(s),
                "{s}: {text}\n{}",
                p.body
            );
        }
        assert!(
            p.body.contains("class=\"n best\" data-v=\"8\""),
            "{}",
            p.body
        );
        assert!(p.body.contains("p up\">(20.00%)"), "{}", p.body);
        assert!(p.body.contains("p down\">(-20.00%)"), "{}", p.body);
        let html = p.finish("x", "y");
        for fetch in ["src=\"http", "href=\"http", "url(http", "@import", "<link "] {
            assert!(!html.contains(fetch), "the page fetches: {fetch}");
        }
    }
}
