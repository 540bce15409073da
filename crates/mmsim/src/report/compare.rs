//! mmtests-style compare tables: one column per run/config, each value followed by its
//! percentage change against the first column (positive always means better).
//!
//! ```text
//!                               vanilla                patched
//! Min          Time       38.00 (   0.00%)       27.00 (  28.95%)
//! Amean        Time       93.04 (   0.00%)       88.43 (   4.96%)
//! ```
//!
//! Undefined values and percentages (see [`crate::report::stats`]) print as `-`.
//!
//! A row of a quantity that is neither better nor worse when it grows (a size, such as a
//! cgroup's file pages: [`CompareRow::neutral`]) shows its plain change instead, with an
//! explicit sign: `+12.50%` is 12.5 % larger than the baseline, `-12.50%` smaller.

use super::stats::{is_spread_stat, pct_change, summarize, Direction};

/// One row of a compare table: a statistic of a metric, one value per column.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CompareRow {
    /// Statistic, e.g. "Amean", "Min", "Hmean".
    pub stat: String,
    /// Metric name, e.g. "Time" or "SeqCreate ops".
    pub name: String,
    /// Whether lower or higher values of the metric are better.
    pub direction: Direction,
    /// One value per table column; `None` where undefined.
    pub values: Vec<Option<f64>>,
    /// Published (base, new) values from the seed, shown beside ours.
    pub published: Option<(f64, f64)>,
    /// No direction (a size): percentages are the plain signed change, `+` larger,
    /// and mark neither better nor worse; `direction` is then ignored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub neutral: bool,
}

impl CompareRow {
    /// A row without published values.
    pub fn new(stat: &str, name: &str, direction: Direction, values: Vec<Option<f64>>) -> Self {
        let (stat, name) = (stat.to_string(), name.to_string());
        CompareRow {
            stat,
            name,
            direction,
            values,
            published: None,
            neutral: false,
        }
    }

    /// A row without a direction (a size): its change against the baseline is shown
    /// signed, `+` larger, `-` smaller, neither better nor worse.
    pub fn neutral(stat: &str, name: &str, values: Vec<Option<f64>>) -> Self {
        let mut r = CompareRow::new(stat, name, Direction::LowerIsBetter, values);
        r.neutral = true;
        r
    }

    /// Attaches the published (base, new) pair.
    pub fn with_published(mut self, base: f64, new: f64) -> Self {
        self.published = Some((base, new));
        self
    }

    /// The direction percentages use: always LowerIsBetter for Stddev and CoeffVar rows
    /// (as mmtests does), the row's own direction otherwise.
    pub fn effective_direction(&self) -> Direction {
        if is_spread_stat(&self.stat) {
            Direction::LowerIsBetter
        } else {
            self.direction
        }
    }

    /// Percentage change of column `i` against column 0 (positive is better; for a
    /// [`neutral`](CompareRow::neutral) row, positive is larger); `None` if either is
    /// undefined or the base is 0.
    pub fn pct(&self, i: usize) -> Option<f64> {
        let base = (*self.values.first()?)?;
        let new = (*self.values.get(i)?)?;
        if self.neutral {
            pct_change(base, new, Direction::HigherIsBetter)
        } else {
            pct_change(base, new, self.effective_direction())
        }
    }

    /// The published change of the new value against the published base (positive is
    /// better; for a [`neutral`](CompareRow::neutral) row, positive is larger); `None`
    /// without a published pair or when the base is 0.
    pub fn published_pct(&self) -> Option<f64> {
        let (b, n) = self.published?;
        if self.neutral {
            pct_change(b, n, Direction::HigherIsBetter)
        } else {
            pct_change(b, n, self.effective_direction())
        }
    }
}

/// A compare table: title, column headers and rows.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CompareTable {
    /// Title line printed above the table (omitted when empty).
    pub title: String,
    /// Column headers, one per run/config; the first is the baseline.
    pub columns: Vec<String>,
    /// The rows, in print order.
    pub rows: Vec<CompareRow>,
    /// Headers of the published pair of columns, printed as given after ours,
    /// e.g. ("published vanilla", "published patched"); `None` hides them.
    pub published_columns: Option<(String, String)>,
}

/// Formats a value with 2 decimals; `-` if undefined, never "-0.00".
fn fmt2(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => {
            let s = format!("{x:.2}");
            if s == "-0.00" {
                "0.00".into()
            } else {
                s
            }
        }
        _ => "-".into(),
    }
}

/// Formats a percentage as `x.xx%`; a bare `-` if undefined.
fn fmt_pct(v: Option<f64>) -> String {
    match fmt2(v).as_str() {
        "-" => "-".into(),
        s => format!("{s}%"),
    }
}

/// Formats a plain change (no direction) as `+x.xx%` / `-x.xx%` (`0.00%` unsigned); a
/// bare `-` if undefined.
fn fmt_change(v: Option<f64>) -> String {
    match fmt2(v).as_str() {
        "-" => "-".into(),
        "0.00" => "0.00%".into(),
        s if s.starts_with('-') => format!("{s}%"),
        s => format!("+{s}%"),
    }
}

impl CompareTable {
    /// An empty table with the given title and column headers.
    pub fn new(title: &str, columns: Vec<String>) -> Self {
        let title = title.to_string();
        CompareTable {
            title,
            columns,
            rows: Vec::new(),
            published_columns: None,
        }
    }

    /// Shows the published pair of columns under the given headers.
    pub fn with_published_columns(mut self, base: &str, new: &str) -> Self {
        self.published_columns = Some((base.to_string(), new.to_string()));
        self
    }

    /// All [`summarize`] rows of metric `name` for each `(header, samples)` column.
    /// Stddev and CoeffVar rows get direction LowerIsBetter.
    pub fn from_samples(
        title: &str,
        name: &str,
        direction: Direction,
        columns: &[(String, Vec<f64>)],
    ) -> Self {
        let headers = columns.iter().map(|(h, _)| h.clone()).collect();
        let mut table = CompareTable::new(title, headers);
        let sums: Vec<_> = columns
            .iter()
            .map(|(_, s)| summarize(s, direction))
            .collect();
        let Some(first) = sums.first() else {
            return table;
        };
        for (i, (stat, _)) in first.iter().enumerate() {
            let dir = if is_spread_stat(stat) {
                Direction::LowerIsBetter
            } else {
                direction
            };
            let values = sums.iter().map(|s| s[i].1).collect();
            table.rows.push(CompareRow::new(stat, name, dir, values));
        }
        table
    }

    /// The formatted cells of every row, as [`CompareTable::render`] prints them: per row,
    /// one `(value, percentage)` pair per column of ours, then the published pair when
    /// [`CompareTable::published_columns`] is set. The HTML report shows the same strings.
    pub fn cells(&self) -> Vec<Vec<(String, String)>> {
        let ncols = self.columns.len();
        let show_pub = self.published_columns.is_some();
        self.rows
            .iter()
            .map(|r| {
                let mut c: Vec<_> = (0..ncols)
                    .map(|i| {
                        let v = r.values.get(i).copied().flatten();
                        let pct = if i == 0 { v.map(|_| 0.0) } else { r.pct(i) };
                        let pct = if r.neutral && i > 0 {
                            fmt_change(pct)
                        } else {
                            fmt_pct(pct)
                        };
                        (fmt2(v), pct)
                    })
                    .collect();
                if show_pub {
                    let (b, n) = match r.published {
                        Some((b, n)) => (Some(b), Some(n)),
                        None => (None, None),
                    };
                    let pn = r.published_pct();
                    let pn = if r.neutral {
                        fmt_change(pn)
                    } else {
                        fmt_pct(pn)
                    };
                    c.push((fmt2(b), fmt_pct(b.map(|_| 0.0))));
                    c.push((fmt2(n), pn));
                }
                c
            })
            .collect()
    }

    /// Renders the table as plain text: `Stat Name  base (  0.00%)  new ( x.xx%) ...`,
    /// numbers right-aligned with 2 decimals, then the published pair if enabled.
    pub fn render(&self) -> String {
        let ncols = self.columns.len();
        // Cells per row: (value, pct) strings; ours first, then the published pair.
        let cells = self.cells();
        let mut headers: Vec<&str> = self.columns.iter().map(String::as_str).collect();
        if let Some((b, n)) = &self.published_columns {
            headers.extend([b.as_str(), n.as_str()]);
        }
        let all = cells.iter().flatten();
        let pw = all.clone().map(|c| c.1.len()).max().unwrap_or(0).max(8);
        let mut vw = all.map(|c| c.0.len() + 1).max().unwrap_or(0).max(12);
        let hw = headers.iter().map(|h| h.len() + 1).max().unwrap_or(0);
        vw = vw.max(hw.saturating_sub(pw + 3));
        let block = vw + pw + 3;
        let sw = self.rows.iter().map(|r| r.stat.len()).max().unwrap_or(0);
        let nw = self.rows.iter().map(|r| r.name.len()).max().unwrap_or(0);

        let mut out = String::new();
        if !self.title.is_empty() {
            out.push_str(&self.title);
            out.push('\n');
        }
        let mut line = " ".repeat(sw + 1 + nw);
        for (i, h) in headers.iter().enumerate() {
            if i == ncols {
                line.push_str("  ");
            }
            line.push_str(&format!("{h:>block$}"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
        for (r, c) in self.rows.iter().zip(&cells) {
            let mut line = format!("{:<sw$} {:<nw$}", r.stat, r.name);
            for (i, (v, p)) in c.iter().enumerate() {
                if i == ncols {
                    line.push_str("  ");
                }
                line.push_str(&format!("{v:>vw$} ({p:>pw$})"));
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

/// Renders plain counters (e.g. vmstat deltas) as a table: a title line, the column
/// headers, then one line per counter with its name and one right-aligned value per
/// column (`-` where a counter has fewer values than columns).
pub fn render_counter_table(
    title: &str,
    columns: &[String],
    counters: &[(String, Vec<u64>)],
) -> String {
    let nw = counters.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let vals = counters
        .iter()
        .flat_map(|(_, v)| v.iter().map(|x| x.to_string().len()));
    let cw = columns
        .iter()
        .map(String::len)
        .chain(vals)
        .max()
        .unwrap_or(0)
        .max(8);
    let mut out = String::new();
    if !title.is_empty() {
        out.push_str(title);
        out.push('\n');
    }
    let mut line = " ".repeat(nw);
    for h in columns {
        line.push_str(&format!("  {h:>cw$}"));
    }
    out.push_str(line.trim_end());
    out.push('\n');
    for (name, v) in counters {
        let mut line = format!("{name:<nw$}");
        for i in 0..columns.len() {
            let s = v.get(i).map_or("-".to_string(), u64::to_string);
            line.push_str(&format!("  {s:>cw$}"));
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Direction::{HigherIsBetter as Hi, LowerIsBetter as Lo};
    use super::*;

    fn cols(a: &str, b: &str) -> Vec<String> {
        vec![a.to_string(), b.to_string()]
    }

    #[test]
    fn seed_003_layout() {
        let mut t = CompareTable::new(
            "sparsetruncate (large)",
            cols("pickhelper-v1r1", "batchshadow-v1r1"),
        );
        for (stat, b, n) in [
            ("Min", 38.0, 27.0),
            ("3rd-qrtle", 146.0, 147.0),
            ("Best99%Amean", 92.08, 86.13),
        ] {
            t.rows
                .push(CompareRow::new(stat, "Time", Lo, vec![Some(b), Some(n)]));
        }
        let out = t.render();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "sparsetruncate (large)");
        assert_eq!(
            lines[1],
            "                         pickhelper-v1r1       batchshadow-v1r1"
        );
        assert_eq!(
            lines[2],
            "Min          Time       38.00 (   0.00%)       27.00 (  28.95%)"
        );
        assert_eq!(
            lines[3],
            "3rd-qrtle    Time      146.00 (   0.00%)      147.00 (  -0.68%)"
        );
        assert_eq!(
            lines[4],
            "Best99%Amean Time       92.08 (   0.00%)       86.13 (   6.46%)"
        );
    }

    #[test]
    fn signs_and_spread_rows() {
        let mut t = CompareTable::new("", cols("vanilla", "patched"));
        t.rows.push(CompareRow::new(
            "Hmean",
            "SeqCreate del",
            Hi,
            vec![Some(26519.88), Some(27191.87)],
        ));
        t.rows.push(CompareRow::new(
            "Hmean",
            "RandCreate del",
            Hi,
            vec![Some(24948.62), Some(24764.97)],
        ));
        t.rows.push(CompareRow::new(
            "Amean",
            "Time",
            Lo,
            vec![Some(10.0), Some(8.0)],
        ));
        // A Stddev row compares lower-is-better even on a higher-is-better metric.
        t.rows.push(CompareRow::new(
            "Stddev",
            "ops",
            Hi,
            vec![Some(10.0), Some(8.0)],
        ));
        let out = t.render();
        let l: Vec<&str> = out.lines().collect();
        assert!(l[1].ends_with("27191.87 (   2.53%)"), "{out}");
        assert!(l[2].ends_with("24764.97 (  -0.74%)"), "{out}");
        assert!(l[3].ends_with("8.00 (  20.00%)"), "{out}");
        assert!(l[4].ends_with("8.00 (  20.00%)"), "{out}");
        assert_eq!(t.rows[1].pct(1).map(|p| p < 0.0), Some(true));
    }

    #[test]
    fn undefined_and_published() {
        let mut t = CompareTable::new("t", cols("vanilla", "patched"))
            .with_published_columns("published vanilla", "published patched");
        t.rows.push(
            CompareRow::new("Max", "Time", Lo, vec![Some(0.0), Some(3.0)])
                .with_published(159.62, 120.68),
        );
        t.rows
            .push(CompareRow::new("Hmean", "ops", Hi, vec![None, Some(1.0)]));
        let out = t.render();
        assert!(!out.contains("NaN") && !out.contains("inf"), "{out}");
        let l: Vec<&str> = out.lines().collect();
        assert!(
            l[1].ends_with("published vanilla      published patched"),
            "{out}"
        );
        assert!(l[2].contains("3.00 (       -)"), "{out}");
        assert!(
            l[2].ends_with("159.62 (   0.00%)      120.68 (  24.40%)"),
            "{out}"
        );
        assert!(
            l[3].contains("- (       -)        1.00 (       -)"),
            "{out}"
        );
        assert!(l[1].len() == l[2].len() && l[2].len() == l[3].len());
    }

    #[test]
    fn from_samples_rows() {
        let c = vec![
            ("a".to_string(), vec![1.0, 2.0, 3.0]),
            ("b".to_string(), vec![2.0, 2.0, 2.0]),
        ];
        let t = CompareTable::from_samples("x", "Time", Lo, &c);
        assert_eq!(t.rows.len(), 17);
        assert_eq!(t.columns, cols("a", "b"));
        let sd = t.rows.iter().find(|r| r.stat == "Stddev").unwrap();
        assert_eq!(
            (sd.direction, sd.values.clone()),
            (Lo, vec![Some(1.0), Some(0.0)])
        );
        assert_eq!(sd.pct(1), Some(100.0));
        let h = CompareTable::from_samples("x", "ops", Hi, &c);
        assert_eq!(
            h.rows
                .iter()
                .find(|r| r.stat == "CoeffVar")
                .unwrap()
                .direction,
            Lo
        );
        assert_eq!(
            h.rows.iter().find(|r| r.stat == "Hmean").unwrap().direction,
            Hi
        );
        assert!(CompareTable::from_samples("x", "y", Lo, &[])
            .rows
            .is_empty());
    }

    #[test]
    fn neutral_rows_show_a_signed_change() {
        let mut t = CompareTable::new("", cols("a", "b"));
        t.rows.push(CompareRow::neutral(
            "memory.peak",
            "(MiB)",
            vec![Some(40.0), Some(50.0)],
        ));
        t.rows.push(CompareRow::neutral(
            "x",
            "smaller",
            vec![Some(40.0), Some(30.0)],
        ));
        t.rows
            .push(CompareRow::neutral("x", "same", vec![Some(4.0), Some(4.0)]));
        t.rows.push(CompareRow::neutral(
            "x",
            "from0",
            vec![Some(0.0), Some(4.0)],
        ));
        assert_eq!(t.rows[0].pct(1), Some(25.0));
        assert_eq!(t.rows[1].pct(1), Some(-25.0));
        let out = t.render();
        let l: Vec<&str> = out.lines().collect();
        assert!(l[1].ends_with("50.00 ( +25.00%)"), "{out}");
        assert!(l[1].contains("40.00 (   0.00%)"), "{out}");
        assert!(l[2].ends_with("30.00 ( -25.00%)"), "{out}");
        assert!(l[3].ends_with("4.00 (   0.00%)"), "{out}");
        assert!(l[4].ends_with("4.00 (       -)"), "{out}");
        // The serialized form of a directed row is unchanged.
        let j = serde_json::to_string(&CompareRow::new("a", "b", Lo, vec![])).unwrap();
        assert!(!j.contains("neutral"), "{j}");
    }

    #[test]
    fn counter_table() {
        let c = vec![
            ("nr_free_pages".to_string(), vec![1293, 3898]),
            ("pgmajfault".to_string(), vec![452116]),
        ];
        let out = render_counter_table("vmstat", &cols("before", "after"), &c);
        let want = "vmstat\n                 before     after\n\
                    nr_free_pages      1293      3898\n\
                    pgmajfault       452116         -\n";
        assert_eq!(out, want);
    }
}
