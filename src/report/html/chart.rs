//! A benchmark figure as a horizontal bar chart: measured, the saved baseline and the datasheet peak on one scale,
//! laid out here (coordinates in SVG user units) so the template only places rectangles and text.

use serde::Serialize;

/// Left edge of the bars: the labels sit before it.
const LABEL_W: f64 = 120.0;
/// The longest bar.
const BAR_MAX: f64 = 300.0;
/// Room for the figure after a bar.
const TEXT_W: f64 = 230.0;
const BAR_H: f64 = 20.0;
const GAP: f64 = 8.0;

/// One bar.
#[derive(Debug, Clone, Serialize)]
pub struct Bar {
    /// `measured`, `baseline`, `datasheet peak`.
    pub label: &'static str,
    /// The CSS class that colours it: `m`, `b`, `p`.
    pub class: &'static str,
    /// Top edge.
    pub y: f64,
    /// Length (at least 1, so a tiny figure still shows).
    pub w: f64,
    /// Where its figure is written.
    pub text_x: f64,
    /// Its baseline for text.
    pub text_y: f64,
    /// The figure with its unit.
    pub text: String,
}

/// One chart.
#[derive(Debug, Clone, Serialize)]
pub struct Chart {
    /// The node.
    pub node: String,
    /// The GPU (or CPU) it ran on.
    pub gpu: String,
    /// The test.
    pub test: String,
    /// The metric.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// The SVG's width.
    pub width: f64,
    /// The SVG's height.
    pub height: f64,
    /// Where the bars start.
    pub label_w: f64,
    /// The bars, measured first.
    pub bars: Vec<Bar>,
    /// Measured as a share of the baseline and of the peak, in words.
    pub note: String,
    /// True when the figure regressed against the baseline (rocmenv's verdict when the report has one, else more
    /// than a tenth below it).
    pub below_baseline: bool,
}

/// A figure to three significant digits or more, without a trailing `.0`.
pub fn figure(v: f64) -> String {
    let a = v.abs();
    let s = if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.3e}")
    };
    s
}

/// True for a metric where more is better: the metric says so (`better`, schema_version 2), or its unit is a rate.
pub fn higher_is_better(unit: &str, better: Option<&str>) -> bool {
    match better {
        Some(b) => b == "higher",
        None => matches!(
            unit,
            "TFLOP/s" | "GB/s" | "images/s" | "samples/s" | "tokens/s" | "qps" | "QPS"
        ),
    }
}

fn pct(measured: f64, of: f64) -> Option<f64> {
    (of > 0.0).then(|| measured / of * 100.0)
}

impl Chart {
    /// Lays out the bars of one figure.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        node: &str,
        gpu: &str,
        test: &str,
        metric: &str,
        unit: &str,
        measured: f64,
        baseline: Option<f64>,
        baseline_source: Option<&str>,
        peak: Option<f64>,
    ) -> Chart {
        let mut values: Vec<(&'static str, &'static str, f64)> = vec![("measured", "m", measured)];
        if let Some(b) = baseline {
            values.push(("baseline", "b", b));
        }
        if let Some(p) = peak {
            values.push(("datasheet peak", "p", p));
        }
        let max = values
            .iter()
            .map(|(_, _, v)| *v)
            .fold(0.0_f64, f64::max)
            .max(f64::MIN_POSITIVE);
        let bars: Vec<Bar> = values
            .iter()
            .enumerate()
            .map(|(i, (label, class, v))| {
                let y = GAP + i as f64 * (BAR_H + GAP);
                let w = (v.max(0.0) / max * BAR_MAX).max(1.0);
                Bar {
                    label,
                    class,
                    y,
                    w: (w * 10.0).round() / 10.0,
                    text_x: ((LABEL_W + w + 6.0) * 10.0).round() / 10.0,
                    text_y: y + BAR_H * 0.72,
                    text: format!("{} {unit}", figure(*v)),
                }
            })
            .collect();
        let mut note = Vec::new();
        let of_base = baseline.and_then(|b| pct(measured, b));
        if let Some(p) = of_base {
            note.push(match baseline_source {
                Some(src) => format!("{p:.1} % of the baseline ({src})"),
                None => format!("{p:.1} % of the baseline"),
            });
        }
        if let Some(p) = peak.and_then(|p| pct(measured, p)) {
            note.push(format!("{p:.1} % of the datasheet peak"));
        }
        if note.is_empty() {
            note.push("no baseline or datasheet peak to compare with".into());
        }
        Chart {
            node: node.to_string(),
            gpu: gpu.to_string(),
            test: test.to_string(),
            metric: metric.to_string(),
            unit: unit.to_string(),
            width: LABEL_W + BAR_MAX + TEXT_W,
            height: GAP + values.len() as f64 * (BAR_H + GAP),
            label_w: LABEL_W,
            bars,
            note: note.join(", "),
            below_baseline: of_base.is_some_and(|p| p < 90.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_share_one_scale_and_say_their_share() {
        let c = Chart::new(
            "n",
            "GPU 0: AMD Instinct MI300X",
            "gemm",
            "gemm_bf16_tflops",
            "TFLOP/s",
            650.0,
            Some(700.0),
            Some("run 1"),
            Some(1307.4),
        );
        assert_eq!(c.bars.len(), 3);
        assert_eq!(c.bars[2].w, BAR_MAX, "the peak is the longest bar");
        assert!((c.bars[0].w - 650.0 / 1307.4 * BAR_MAX).abs() < 0.1);
        assert_eq!(c.bars[0].text, "650 TFLOP/s");
        assert_eq!(
            c.note,
            "92.9 % of the baseline (run 1), 49.7 % of the datasheet peak"
        );
        assert!(!c.below_baseline);
        assert!(c.bars[1].y > c.bars[0].y && c.height > c.bars[2].y + BAR_H);
    }

    #[test]
    fn a_lone_or_zero_figure_still_draws() {
        let c = Chart::new("n", "CPU", "gemm", "x", "GB/s", 0.0, None, None, None);
        assert_eq!(c.bars.len(), 1);
        assert_eq!(c.bars[0].w, 1.0);
        assert_eq!(c.note, "no baseline or datasheet peak to compare with");
        assert_eq!(figure(0.000123), "1.230e-4");
        assert_eq!(figure(12.345), "12.3");
        assert!(higher_is_better("ms", Some("higher")));
        assert!(!higher_is_better("GB/s", Some("lower")));
        assert!(!higher_is_better("ms", None));
    }
}
