//! mmtests statistics of the era of the seeds (before 2019).
//!
//! All functions are pure and take the samples in any order. A statistic that is
//! undefined for its input (empty input, Hmean with a sample <= 0, a percentage against a
//! zero base, ...) is `None`; tables print it as `-`, never as `NaN`.

/// Whether lower or higher values are better for a metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Direction {
    /// Smaller is better (times, latencies, fault counts).
    LowerIsBetter,
    /// Larger is better (ops/s, throughput).
    HigherIsBetter,
}

/// Samples sorted ascending (total order, so NaN cannot panic).
fn sorted(samples: &[f64]) -> Vec<f64> {
    let mut v = samples.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// Arithmetic mean; `None` for empty input.
pub fn amean(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() {
        return None;
    }
    Some(samples.iter().sum::<f64>() / samples.len() as f64)
}

/// Harmonic mean `n / Σ 1/x`; `None` for empty input or if any sample is <= 0.
pub fn hmean(samples: &[f64]) -> Option<f64> {
    if samples.is_empty() || samples.iter().any(|&x| x.is_nan() || x <= 0.0) {
        return None;
    }
    Some(samples.len() as f64 / samples.iter().map(|x| 1.0 / x).sum::<f64>())
}

/// The mean mmtests shows for a direction: Amean when lower is better, Hmean otherwise.
pub fn mean_for(samples: &[f64], direction: Direction) -> Option<f64> {
    match direction {
        Direction::LowerIsBetter => amean(samples),
        Direction::HigherIsBetter => hmean(samples),
    }
}

/// Sample standard deviation (divides by n−1). `None` for empty input; a single sample
/// has no spread and gives `Some(0.0)`.
pub fn stddev(samples: &[f64]) -> Option<f64> {
    let mean = amean(samples)?;
    if samples.len() < 2 {
        return Some(0.0);
    }
    let ss: f64 = samples.iter().map(|x| (x - mean) * (x - mean)).sum();
    Some((ss / (samples.len() - 1) as f64).sqrt())
}

/// Coefficient of variation in percent, `stddev · 100 / mean`, with the mean of
/// [`mean_for`] the direction. `None` if that mean is undefined or zero.
pub fn coeffvar(samples: &[f64], direction: Direction) -> Option<f64> {
    let mean = mean_for(samples, direction)?;
    if mean == 0.0 {
        return None;
    }
    Some(stddev(samples)? * 100.0 / mean)
}

/// Smallest sample; `None` for empty input.
pub fn min(samples: &[f64]) -> Option<f64> {
    samples.iter().copied().min_by(f64::total_cmp)
}

/// Largest sample; `None` for empty input.
pub fn max(samples: &[f64]) -> Option<f64> {
    samples.iter().copied().max_by(f64::total_cmp)
}

/// The p-th percentile as mmtests computed it before 2019: the value of the
/// sorted-ascending sample at 0-based position `int((n−1)·p/100 + 0.5)` (clamped to
/// `0..n`). Quartiles are p = 25, 50, 75; the `Max-90%` row is p = 90. `None` for
/// empty input.
pub fn percentile(samples: &[f64], p: f64) -> Option<f64> {
    let v = sorted(samples);
    let last = v.len().checked_sub(1)?;
    let pos = ((last as f64 * p) / 100.0 + 0.5).floor();
    let idx = if pos <= 0.0 {
        0
    } else {
        (pos as usize).min(last)
    };
    Some(v[idx])
}

/// How many samples the BestN% rows average: the old inclusive rule,
/// `floor(n·N/100) + 1`, capped at `n` (so N = 100 takes all, N = 0 takes the best one).
pub fn best_n_count(n: usize, n_percent: u32) -> usize {
    (n * n_percent as usize / 100 + 1).min(n)
}

/// Arithmetic mean of the best N% of the samples: the [`best_n_count`] smallest when
/// lower is better, the largest when higher is better. `None` for empty input.
pub fn best_n_amean(samples: &[f64], n_percent: u32, direction: Direction) -> Option<f64> {
    let mut v = sorted(samples);
    if direction == Direction::HigherIsBetter {
        v.reverse();
    }
    amean(&v[..best_n_count(v.len(), n_percent)])
}

/// Percentage change of `new` against `base`, positive always meaning better:
/// `new·100/base − 100` when higher is better, `100 − new·100/base` when lower is better.
/// Equal values (including both 0) give `Some(0.0)`; a zero base with a different `new`,
/// or a non-finite input, gives `None` (printed as `-`).
pub fn pct_change(base: f64, new: f64, direction: Direction) -> Option<f64> {
    if !base.is_finite() || !new.is_finite() {
        return None;
    }
    if base == new {
        return Some(0.0);
    }
    if base == 0.0 {
        return None;
    }
    let ratio = new * 100.0 / base;
    Some(match direction {
        Direction::HigherIsBetter => ratio - 100.0,
        Direction::LowerIsBetter => 100.0 - ratio,
    })
}

/// Whether a stat row always compares lower-is-better regardless of the metric
/// (mmtests does this for `Stddev` and `CoeffVar`).
pub fn is_spread_stat(stat: &str) -> bool {
    matches!(stat, "Stddev" | "CoeffVar")
}

/// The mmtests summary rows for one run's samples, in table order.
///
/// LowerIsBetter: Min, 1st-qrtle, 2nd-qrtle, 3rd-qrtle, Max-90%, Max-95%, Max-99%, Max,
/// Amean, Stddev, CoeffVar, Best99%Amean, Best95%Amean, Best90%Amean, Best75%Amean,
/// Best50%Amean, Best25%Amean. HigherIsBetter: the same with Hmean for the mean row and
/// the BestN% rows omitted. Undefined values are `None`.
pub fn summarize(samples: &[f64], direction: Direction) -> Vec<(String, Option<f64>)> {
    let mut rows: Vec<(String, Option<f64>)> = vec![("Min".into(), min(samples))];
    for (name, p) in [
        ("1st-qrtle", 25.0),
        ("2nd-qrtle", 50.0),
        ("3rd-qrtle", 75.0),
        ("Max-90%", 90.0),
        ("Max-95%", 95.0),
        ("Max-99%", 99.0),
    ] {
        rows.push((name.into(), percentile(samples, p)));
    }
    rows.push(("Max".into(), max(samples)));
    let mean_name = match direction {
        Direction::LowerIsBetter => "Amean",
        Direction::HigherIsBetter => "Hmean",
    };
    rows.push((mean_name.into(), mean_for(samples, direction)));
    rows.push(("Stddev".into(), stddev(samples)));
    rows.push(("CoeffVar".into(), coeffvar(samples, direction)));
    if direction == Direction::LowerIsBetter {
        for n in [99, 95, 90, 75, 50, 25] {
            let v = best_n_amean(samples, n, direction);
            rows.push((format!("Best{n}%Amean"), v));
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::Direction::{HigherIsBetter as Hi, LowerIsBetter as Lo};
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn means() {
        assert!(close(amean(&[1.0, 2.0, 3.0, 6.0]), 3.0));
        assert!(close(hmean(&[1.0, 2.0, 4.0]), 3.0 / 1.75));
        assert!(close(hmean(&[5.0]), 5.0));
        assert_eq!(amean(&[]), None);
        assert_eq!(hmean(&[]), None);
        assert_eq!(hmean(&[1.0, 0.0]), None);
        assert_eq!(hmean(&[1.0, -2.0]), None);
        assert!(close(mean_for(&[1.0, 2.0, 4.0], Lo), 7.0 / 3.0));
    }

    #[test]
    fn spread() {
        // mean 5, squares 9+1+1+1+0+0+4+16 = 32, /7.
        let s = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!(close(stddev(&s), (32.0f64 / 7.0).sqrt()));
        assert!(close(
            coeffvar(&s, Lo),
            (32.0f64 / 7.0).sqrt() * 100.0 / 5.0
        ));
        assert!(close(coeffvar(&[1.0, 3.0], Hi), 2f64.sqrt() * 100.0 / 1.5));
        assert_eq!(stddev(&[7.0]), Some(0.0));
        assert_eq!(stddev(&[]), None);
        assert_eq!(stddev(&[3.0, 3.0, 3.0]), Some(0.0));
        assert_eq!(coeffvar(&[3.0, 3.0], Lo), Some(0.0));
        assert_eq!(coeffvar(&[-1.0, 1.0], Lo), None); // zero mean
        assert_eq!(coeffvar(&[0.0, 1.0], Hi), None); // Hmean undefined
    }

    #[test]
    fn extremes() {
        assert_eq!(min(&[3.0, 1.0, 2.0]), Some(1.0));
        assert_eq!(max(&[3.0, 1.0, 2.0]), Some(3.0));
        assert_eq!(min(&[]), None);
        assert_eq!(max(&[4.0]), Some(4.0));
    }

    #[test]
    fn percentile_positions() {
        // n = 4: p25 -> int(0.75+0.5)=1, p50 -> int(1.5+0.5)=2, p75 -> int(2.25+0.5)=2,
        // p90 -> int(2.7+0.5)=3.
        let s4 = [40.0, 10.0, 30.0, 20.0];
        assert_eq!(percentile(&s4, 25.0), Some(20.0));
        assert_eq!(percentile(&s4, 50.0), Some(30.0));
        assert_eq!(percentile(&s4, 75.0), Some(30.0));
        assert_eq!(percentile(&s4, 90.0), Some(40.0));
        // n = 10: p25 -> int(2.75)=2, p50 -> int(5.0)=5, p75 -> int(7.25)=7,
        // p90 -> int(8.6)=8, p95 -> int(9.05)=9, p99 -> int(9.41)=9.
        let s10: Vec<f64> = (0..10).rev().map(|i| i as f64 * 10.0).collect();
        let want = [(25.0, 20.0), (50.0, 50.0), (75.0, 70.0), (90.0, 80.0)];
        for (p, v) in want.into_iter().chain([(95.0, 90.0), (99.0, 90.0)]) {
            assert_eq!(percentile(&s10, p), Some(v), "p{p}");
        }
        assert_eq!(percentile(&s10, 0.0), Some(0.0));
        assert_eq!(percentile(&s10, 100.0), Some(90.0));
        assert_eq!(percentile(&[5.0], 50.0), Some(5.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn best_n() {
        assert_eq!(best_n_count(10, 25), 3); // floor(2.5)+1
        assert_eq!(best_n_count(10, 50), 6);
        assert_eq!(best_n_count(10, 95), 10); // floor(9.5)+1
        assert_eq!(best_n_count(10, 99), 10);
        assert_eq!(best_n_count(100, 99), 100);
        assert_eq!(best_n_count(200, 99), 199);
        assert_eq!(best_n_count(1, 25), 1);
        assert_eq!(best_n_count(4, 100), 4);
        let s: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!(close(best_n_amean(&s, 25, Lo), 2.0)); // 1,2,3
        assert!(close(best_n_amean(&s, 25, Hi), 9.0)); // 10,9,8
        assert!(close(best_n_amean(&s, 50, Lo), 3.5)); // 1..=6
        assert!(close(best_n_amean(&s, 99, Lo), 5.5));
        assert_eq!(best_n_amean(&[], 50, Lo), None);
        // Like seed 003: a bimodal sample whose slow tail pulls Amean above Best99%Amean.
        let mut b: Vec<f64> = (0..100).map(|i| 38.0 + (i % 5) as f64).collect();
        b.extend((0..100).map(|i| 140.0 + (i % 40) as f64));
        let (a, b99) = (amean(&b).unwrap(), best_n_amean(&b, 99, Lo).unwrap());
        assert!(b99 < a && a - b99 < 2.0);
    }

    #[test]
    fn pct() {
        // Seed 003: Min 38 -> 27 is 28.95% better; bonnie SeqCreate del +2.53%.
        let p = pct_change(38.0, 27.0, Lo).unwrap();
        assert_eq!(format!("{p:.2}"), "28.95");
        let p = pct_change(26519.88, 27191.87, Hi).unwrap();
        assert_eq!(format!("{p:.2}"), "2.53");
        // Seed 003: 3rd-qrtle 146 -> 147 is -0.68%; seed 002 time_range 0.91 -> 1.44.
        assert_eq!(
            format!("{:.2}", pct_change(146.0, 147.0, Lo).unwrap()),
            "-0.68"
        );
        assert_eq!(
            format!("{:.2}", pct_change(0.91, 1.44, Lo).unwrap()),
            "-58.24"
        );
        assert!(pct_change(10.0, 8.0, Hi).unwrap() < 0.0);
        assert_eq!(pct_change(5.0, 5.0, Hi), Some(0.0));
        assert_eq!(pct_change(0.0, 0.0, Lo), Some(0.0));
        assert_eq!(pct_change(0.0, 1.0, Lo), None);
        assert_eq!(pct_change(f64::NAN, 1.0, Lo), None);
    }

    #[test]
    fn summary_rows() {
        let lo = summarize(&[1.0, 2.0, 3.0, 4.0], Lo);
        let names: Vec<&str> = lo.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 17);
        assert_eq!(&names[..3], ["Min", "1st-qrtle", "2nd-qrtle"]);
        assert_eq!(names[8], "Amean");
        assert_eq!(names[16], "Best25%Amean");
        assert_eq!(lo[8].1, Some(2.5));
        assert_eq!(lo[16].1, Some(1.5)); // floor(1)+1 = 2 best
        let hi = summarize(&[1.0, 0.0], Hi);
        assert_eq!(hi.len(), 11);
        assert_eq!(hi[8], ("Hmean".to_string(), None));
        assert_eq!(summarize(&[7.0], Lo)[9].1, Some(0.0)); // Stddev, n = 1
        assert!(summarize(&[], Lo).iter().all(|(_, v)| v.is_none()));
        assert!(is_spread_stat("CoeffVar") && !is_spread_stat("Amean"));
    }
}
