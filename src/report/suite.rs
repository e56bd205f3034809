//! Smoke and benchmark results for people (a row per test as it finishes, then the figures beside their peak and
//! baseline) and for CI (JUnit XML through quick-junit: one suite per run, one case per test).

use super::Style;
use crate::checks::Status;
use crate::suites::{Comparison, SuiteResult, TestResult, TestStatus};
use std::io::Write;
use std::time::Duration;

fn status(s: TestStatus) -> Status {
    match s {
        TestStatus::Pass => Status::Pass,
        TestStatus::Skip => Status::Skip,
        TestStatus::Fail => Status::Fail,
    }
}

/// A figure with its unit, rounded for reading.
fn figure(value: f64, unit: &str) -> String {
    if unit == "bytes" && value >= 1048576.0 {
        return figure(value / 1048576.0, "MiB");
    }
    let v = if value.fract() == 0.0 || value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    };
    format!("{v} {unit}")
}

/// A metric's name beside its figure: a `_bytes` suffix goes, since `figure` shows bytes in MiB (issue 25:
/// `device0_total_memory_bytes 24105 MiB` named one unit and showed another).
fn shown_name<'a>(name: &'a str, unit: &str) -> &'a str {
    match (unit, name.strip_suffix("_bytes")) {
        ("bytes", Some(stem)) => stem,
        _ => name,
    }
}

/// One line for a finished test, then its reason (and fix) when it did not pass.
pub fn render_suite_test(t: &TestResult, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    let shown: Vec<String> = t
        .metrics
        .iter()
        .filter_map(|m| {
            Some(format!(
                "{} {}",
                shown_name(&m.name, &m.unit),
                figure(m.value?, &m.unit)
            ))
        })
        .take(3)
        .collect();
    let more = if t.metrics.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    let metrics = if shown.is_empty() {
        String::new()
    } else {
        format!("  {}{more}", shown.join(", "))
    };
    writeln!(
        out,
        "  {} {:<16} {:>7.1} s{metrics}",
        super::human::mark(status(t.status), style),
        t.name,
        t.duration_s
    )?;
    if t.status != TestStatus::Pass {
        if let Some(r) = &t.reason {
            for line in r.lines() {
                writeln!(out, "      {line}")?;
            }
        }
        if let Some(f) = &t.fix {
            writeln!(out, "      fix: {f}")?;
        }
    }
    Ok(())
}

fn comparison_row(c: &Comparison) -> String {
    let peak = match (c.peak, c.peak_pct) {
        (Some(p), Some(pct)) => format!("{pct:.1}% of {}", figure(p, &c.unit)),
        _ => "-".into(),
    };
    let base = match (c.baseline, c.baseline_pct) {
        (Some(b), Some(pct)) => format!(
            "{pct:.1}% of {}{}",
            figure(b, &c.unit),
            if c.regression { " (regression)" } else { "" }
        ),
        _ => "-".into(),
    };
    format!(
        "  {:<28} {:>16}  peak: {:<28} baseline: {base}",
        format!("{}/{}", c.test, c.metric),
        figure(c.measured, &c.unit),
        peak
    )
}

/// The closing part: measured / datasheet peak / baseline for each compared figure, and the counts.
pub fn render_suite_summary(r: &SuiteResult, out: &mut dyn Write) -> std::io::Result<()> {
    if !r.comparisons.is_empty() {
        writeln!(
            out,
            "\nMeasured, against the datasheet peak and the baseline"
        )?;
        for c in &r.comparisons {
            writeln!(out, "{}", comparison_row(c))?;
        }
    }
    let (pass, fail, skip) = r.counts();
    let device = match (&r.device.name, r.device.count) {
        (Some(n), c) if c > 1 => format!("{c} × {n}"),
        (Some(n), _) => n.clone(),
        (None, _) if r.device.kind.is_empty() => "an unknown device".into(),
        (None, _) => r.device.kind.clone(),
    };
    // A benchmark run is named after its benchmark, a smoke run after its level.
    let what = match (r.kind.as_str(), r.tests.first()) {
        ("bench", Some(t)) => t.name.split('/').next().unwrap_or_default().to_string(),
        _ => r.level.clone(),
    };
    writeln!(
        out,
        "\n{} {what} on {device}: {pass} pass, {fail} fail, {skip} skip",
        r.kind
    )
}

/// How a tuning knob is applied: a variable set before the process starts, or a line of code.
enum Apply {
    Env(&'static str, &'static str),
    Code(&'static str),
}

/// The knobs `bench --tune` measures (its metric is `<name>_speedup`), and how to apply each: real ones only (the
/// knobs a field report invented appear nowhere in the product; tests/suites.rs checks the whole tree).
const KNOBS: [(&str, Apply); 5] = [
    (
        "cudnn_benchmark",
        Apply::Code("torch.backends.cudnn.benchmark = True  (MIOpen's find step on ROCm)"),
    ),
    ("tunableop", Apply::Env("PYTORCH_TUNABLEOP_ENABLED", "1")),
    ("miopen_find_mode", Apply::Env("MIOPEN_FIND_MODE", "NORMAL")),
    (
        "channels_last",
        Apply::Code("model = model.to(memory_format=torch.channels_last)"),
    ),
    (
        "amp",
        Apply::Code("with torch.autocast(device_type=\"cuda\"): …  (mixed precision)"),
    ),
];

/// A knob helps when it is at least this much faster than the default.
const HELPS: f64 = 1.05;

/// `bench --tune`: each measured knob's speed-up, and those that help as variables (for `rocmenv run -e`, a
/// Dockerfile's ENV or a .env file) or as code.
pub fn render_tune(r: &SuiteResult, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(t) = r.tests.iter().find(|t| t.name == "tune") else {
        return Ok(());
    };
    let speedup = |knob: &str| {
        t.metrics
            .iter()
            .find(|m| m.name == format!("{knob}_speedup"))
            .and_then(|m| m.value)
    };
    writeln!(
        out,
        "\nTuning knobs against the default (a knob helps at {HELPS}× or more)"
    )?;
    let mut vars = Vec::new();
    for (knob, apply) in &KNOBS {
        let shown = knob.replace('_', "-");
        let Some(x) = speedup(knob) else {
            writeln!(out, "  {shown:<18} not measured here (see its row above)")?;
            continue;
        };
        let how = match apply {
            Apply::Env(k, v) => format!("{k}={v}"),
            Apply::Code(c) => format!("in code: {c}"),
        };
        let verdict = if x >= HELPS { "helps" } else { "no gain" };
        writeln!(out, "  {shown:<18} {x:>5.2}×  {verdict:<8} {how}")?;
        if let (Apply::Env(k, v), true) = (apply, x >= HELPS) {
            vars.push(format!("{k}={v}"));
        }
    }
    if vars.is_empty() {
        writeln!(out, "No variable helps on this device; keep the defaults.")
    } else {
        writeln!(
            out,
            "Variables that help on this device (Dockerfile ENV, `rocmenv run -e`, or .env):"
        )?;
        for v in vars {
            writeln!(out, "  {v}")?;
        }
        Ok(())
    }
}

/// The run as JUnit XML: one `<testsuite>` named after the kind and level, one `<testcase>` per test; a failure
/// carries the reason as its message and the fix as its text, a skip its reason.
pub fn junit(r: &SuiteResult, suite_name: &str) -> String {
    use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new(suite_name);
    for t in &r.tests {
        let mut st = match t.status {
            TestStatus::Pass => TestCaseStatus::success(),
            TestStatus::Skip => TestCaseStatus::skipped(),
            TestStatus::Fail => TestCaseStatus::non_success(NonSuccessKind::Failure),
        };
        if t.status != TestStatus::Pass {
            if let Some(reason) = &t.reason {
                st.set_message(reason.lines().next().unwrap_or_default());
            }
            let mut text = t.reason.clone().unwrap_or_default();
            if let Some(f) = &t.fix {
                text.push_str(&format!("\nfix: {f}"));
            }
            st.set_description(text);
        }
        let mut case = TestCase::new(t.name.clone(), st);
        case.set_classname(format!("rocmenv.{}", r.kind));
        case.set_time(Duration::from_secs_f64(t.duration_s.max(0.0)));
        for m in &t.metrics {
            if let Some(v) = m.value {
                case.add_property((m.name.as_str(), format!("{v} {}", m.unit).as_str()));
            }
        }
        suite.add_test_case(case);
    }
    let mut report = Report::new("rocmenv");
    report.add_test_suite(suite);
    // Serialising owned strings into memory cannot fail.
    report.to_string().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::Metric;

    fn result() -> SuiteResult {
        let mut r = SuiteResult::failed_run(
            "smoke",
            "quick",
            vec![TestResult {
                name: "gemm".into(),
                status: TestStatus::Pass,
                reason: None,
                fix: None,
                metrics: vec![Metric {
                    name: "gemm_fp32_tflops".into(),
                    value: Some(0.0421),
                    unit: "TFLOP/s".into(),
                }],
                params: Default::default(),
                duration_s: 0.5,
            }],
            "timeout",
            "the suite outlived --timeout 5 s".into(),
            "",
        );
        r.tests.push(TestResult {
            name: "onnx".into(),
            status: TestStatus::Skip,
            reason: Some("onnxruntime is not installed in this image".into()),
            fix: None,
            metrics: vec![],
            params: Default::default(),
            duration_s: 0.0,
        });
        r
    }

    #[test]
    fn rows_show_marks_metrics_and_reasons() {
        let r = result();
        let mut out = Vec::new();
        for t in &r.tests {
            render_suite_test(t, Style::Plain, &mut out).unwrap();
        }
        render_suite_summary(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("✓ gemm") && text.contains("gemm_fp32_tflops 0.042 TFLOP/s"),
            "{text}"
        );
        assert!(
            text.contains("✗ timeout") && text.contains("the suite outlived --timeout 5 s"),
            "{text}"
        );
        assert!(
            text.contains("- onnx") && text.contains("onnxruntime is not installed"),
            "{text}"
        );
        assert!(
            text.trim_end()
                .ends_with("smoke quick on an unknown device: 1 pass, 1 fail, 1 skip"),
            "{text}"
        );
    }

    /// Issue 25: `device0_total_memory_bytes 24105 MiB` was labelled in bytes and shown in MiB.
    #[test]
    fn a_bytes_metric_shown_in_mib_drops_its_bytes_suffix() {
        let t = TestResult {
            name: "env".into(),
            status: TestStatus::Pass,
            reason: None,
            fix: None,
            metrics: vec![Metric {
                name: "device0_total_memory_bytes".into(),
                value: Some(24105.0 * 1048576.0),
                unit: "bytes".into(),
            }],
            params: Default::default(),
            duration_s: 0.1,
        };
        let mut out = Vec::new();
        render_suite_test(&t, Style::Plain, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("device0_total_memory 24105 MiB"), "{text}");
        assert!(!text.contains("_bytes"), "{text}");
    }

    #[test]
    fn tune_names_the_knobs_that_help_and_their_variables() {
        let mut r = result();
        r.tests.push(TestResult {
            name: "tune".into(),
            status: TestStatus::Pass,
            reason: None,
            fix: None,
            metrics: vec![
                Metric {
                    name: "tunableop_speedup".into(),
                    value: Some(1.31),
                    unit: "x".into(),
                },
                Metric {
                    name: "amp_speedup".into(),
                    value: Some(1.01),
                    unit: "x".into(),
                },
            ],
            params: Default::default(),
            duration_s: 1.0,
        });
        let mut out = Vec::new();
        render_tune(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("tunableop           1.31×  helps    PYTORCH_TUNABLEOP_ENABLED=1"),
            "{text}"
        );
        assert!(
            text.contains("amp                 1.01×  no gain"),
            "{text}"
        );
        assert!(
            text.contains("cudnn-benchmark    not measured here"),
            "{text}"
        );
        assert!(
            text.trim_end().ends_with("  PYTORCH_TUNABLEOP_ENABLED=1"),
            "{text}"
        );
    }

    #[test]
    fn junit_has_a_case_per_test_with_failures_and_skips() {
        let xml = junit(&result(), "smoke-quick");
        assert!(
            xml.contains(
                r#"<testsuite name="smoke-quick" tests="3" disabled="1" errors="0" failures="1""#
            ),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<testcase name="timeout" classname="rocmenv.smoke""#),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<failure message="the suite outlived --timeout 5 s""#),
            "{xml}"
        );
        assert!(
            xml.contains("<skipped message=\"onnxruntime is not installed in this image\""),
            "{xml}"
        );
        assert!(
            xml.contains(r#"<property name="gemm_fp32_tflops" value="0.0421 TFLOP/s"/>"#),
            "{xml}"
        );
    }
}
