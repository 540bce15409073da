//! `mmsim compare --csv`: the comparison's tables as one CSV document, one row per table,
//! statistic, metric and run, for spreadsheets and scripts.
//!
//! Columns: `table` (the table's title as in the text, `vmstat` for the counters), `stat` (`Amean`, `Min`,
//! …; empty for counters), `metric` (the row's name), `run` (the column name, as in the
//! text tables), `value` (empty where undefined), `change_pct` (against the first run:
//! positive is better, or larger for a row without a direction; empty for the baseline
//! and where undefined) and `better` (`lower`, `higher`, or empty for a row without a
//! direction). Values are printed in full precision, not rounded as in the text tables.

use super::compare::{CompareRow, CompareTable};
use super::load::RunDoc;
use super::stats::Direction;
use super::tables;

/// The CSV header line (without the newline).
pub const HEADER: &str = "table,stat,metric,run,value,change_pct,better";

/// A CSV field, quoted when it holds a comma, a quote or a line break.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x}"),
        _ => String::new(),
    }
}

fn push_row(out: &mut String, cells: [&str; 7]) {
    let line: Vec<String> = cells.iter().map(|c| field(c)).collect();
    out.push_str(&line.join(","));
    out.push('\n');
}

fn push_table(out: &mut String, table: &str, t: &CompareTable) {
    for r in &t.rows {
        push_compare_row(out, table, &t.columns, r);
    }
}

fn push_compare_row(out: &mut String, table: &str, columns: &[String], r: &CompareRow) {
    let better = if r.neutral {
        ""
    } else {
        match r.effective_direction() {
            Direction::LowerIsBetter => "lower",
            Direction::HigherIsBetter => "higher",
        }
    };
    for (i, run) in columns.iter().enumerate() {
        let value = num(r.values.get(i).copied().flatten());
        let pct = if i == 0 { String::new() } else { num(r.pct(i)) };
        push_row(out, [table, &r.stat, &r.name, run, &value, &pct, better]);
    }
}

/// The comparison of `docs` (the first the baseline), columns named `names`, as CSV: the
/// sample tables, Ops, time, the replay table, the vmstat counters that differ, the cgroup
/// tables, the profile and the replay speed — what `mmsim compare` prints as text.
pub fn render_csv(docs: &[RunDoc], names: &[String]) -> String {
    let mut out = String::from(HEADER);
    out.push('\n');
    let title = |t: &CompareTable, default: &str| {
        if t.title.is_empty() {
            default.to_string()
        } else {
            t.title.clone()
        }
    };
    for t in tables::sample_tables(docs, names) {
        push_table(&mut out, &title(&t, "samples"), &t);
    }
    for t in [
        tables::ops_table(docs, names),
        tables::time_table(docs, names),
    ] {
        push_table(&mut out, &title(&t, "ops"), &t);
    }
    if let Some(t) = tables::replay_table(docs, names) {
        push_table(&mut out, &title(&t, "replay"), &t);
    }
    for (counter, values) in tables::vmstat_differences(docs) {
        let base = values.first().copied();
        for (i, run) in names.iter().enumerate() {
            let v = values.get(i).copied();
            let pct = match (i, base, v) {
                (0, _, _) | (_, None, _) | (_, _, None) | (_, Some(0), _) => String::new(),
                (_, Some(b), Some(v)) => num(Some(v as f64 * 100.0 / b as f64 - 100.0)),
            };
            let value = v.map(|v| v.to_string()).unwrap_or_default();
            // Counters have no direction here (as in the text table): the plain change.
            push_row(&mut out, ["vmstat", "", &counter, run, &value, &pct, ""]);
        }
    }
    for t in tables::cgroup_tables(docs, names) {
        push_table(&mut out, &title(&t, "cgroup"), &t);
    }
    let prof = tables::profile_table(docs, names);
    push_table(&mut out, &title(&prof, "profile"), &prof);
    if let Some(t) = tables::replay_speed_table(docs, names) {
        push_table(&mut out, &title(&t, "replay speed"), &t);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("a"), "a");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(num(None), "");
        assert_eq!(num(Some(f64::NAN)), "");
        assert_eq!(num(Some(1.5)), "1.5");
    }
}
