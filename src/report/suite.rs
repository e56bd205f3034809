//! Smoke and benchmark results for people (a row per test as it finishes, then the figures beside their peak and
//! baseline) and for CI (JUnit XML through quick-junit: one suite per run, one case per test and device).

use super::junit as xml;
use super::Style;
use crate::checks::Status;
use crate::suites::{Comparison, SuiteResult, TestResult};
use std::io::Write;
use std::time::Duration;

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

/// The name a row, a JUnit case and a message give a test entry: `gemm`, or `gemm (GPU 3)` for one device's entry.
pub fn entry_name(t: &TestResult) -> String {
    match t.device_label() {
        Some(d) => format!("{} ({d})", t.name),
        None => t.name.clone(),
    }
}

/// The first line of `text`, cut to `max` characters, with `…` when anything was left out.
fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let more = text.trim().lines().count() > 1 || line.chars().count() > max;
    let cut: String = line.trim().chars().take(max).collect();
    if more {
        format!("{cut}…")
    } else {
        cut
    }
}

/// Prints a row per finished test as it comes; an error already shown for an earlier test is named, not repeated
/// (an image without torch fails every test with the same words).
#[derive(Debug, Default)]
pub struct SuiteRows {
    /// Each reason shown in full, with the test that showed it.
    shown: Vec<(String, String)>,
}

impl SuiteRows {
    /// One line for a finished test, then its reason (and fix) when it did not pass, or its note in one line when it
    /// passed with one.
    pub fn row(
        &mut self,
        t: &TestResult,
        style: Style,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
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
            super::human::mark(t.status, style),
            entry_name(t),
            t.duration_s
        )?;
        let Some(reason) = t.reason.as_deref().filter(|r| !r.trim().is_empty()) else {
            return Ok(());
        };
        if t.status == Status::Pass {
            return writeln!(out, "      note: {}", first_line(reason, 160));
        }
        if let Some((_, first)) = self.shown.iter().find(|(r, _)| r == reason) {
            writeln!(out, "      the same error as {first}")?;
            return match t.status {
                Status::Fail => writeln!(out, "      fix: as for {first}"),
                _ => Ok(()),
            };
        }
        let device = t
            .device_label()
            .map(|d| format!("{d}: "))
            .unwrap_or_default();
        // One line with the reason, one with the fix; what the suite printed last (a crash's traceback) after them.
        let (first, rest) = match reason.split_once('\n') {
            Some((first, rest)) => (first, Some(rest)),
            None => (reason, None),
        };
        let (first, tail_label) = match first.strip_suffix("; its last output:") {
            Some(f) => (f, "its last output:"),
            None => (first, ""),
        };
        writeln!(out, "      {device}{first}")?;
        match (&t.fix, t.status) {
            (Some(f), _) => writeln!(out, "      fix: {f}")?,
            (None, Status::Fail) => writeln!(out, "      fix: {}", generic_fix(t))?,
            (None, _) => {}
        }
        if let Some(rest) = rest {
            if !tail_label.is_empty() {
                writeln!(out, "      {tail_label}")?;
            }
            for line in rest.lines() {
                writeln!(out, "      {line}")?;
            }
        }
        self.shown.push((reason.to_string(), entry_name(t)));
        Ok(())
    }
}

/// The step shown under a failed test whose entry names none (a suite older than this rocmenv, or a failure no
/// known cause explains): rerun it alone, where its whole record is easier to read.
fn generic_fix(t: &TestResult) -> String {
    let name = t.name.split('/').next().unwrap_or(&t.name);
    format!("rerun {name} alone with --json FILE and read its entry; the suite's stderr has any traceback")
}

/// One line for a finished test, then its reason (and fix) when it did not pass, or its note when it passed.
pub fn render_suite_test(t: &TestResult, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    SuiteRows::default().row(t, style, out)
}

/// Errors that more than one test ended with, each once with the tests it affected.
fn repeated_errors(r: &SuiteResult) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for t in r.tests.iter().filter(|t| t.status == Status::Fail) {
        let Some(reason) = t.reason.as_deref().filter(|r| !r.trim().is_empty()) else {
            continue;
        };
        match groups.iter_mut().find(|(r, _)| r == reason) {
            Some((_, names)) => names.push(entry_name(t)),
            None => groups.push((reason.to_string(), vec![entry_name(t)])),
        }
    }
    groups.retain(|(_, names)| names.len() > 1);
    groups
}

fn comparison_row(c: &Comparison) -> String {
    let peak = match (c.peak, c.peak_pct) {
        (Some(p), Some(pct)) => match &c.peak_basis {
            Some(b) => format!("{pct:.1}% of {} ({b})", figure(p, &c.unit)),
            None => format!("{pct:.1}% of {}", figure(p, &c.unit)),
        },
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
        match (c.gpu, c.device) {
            (Some(g), _) => format!("{}/{} (GPU {g})", c.test, c.metric),
            (None, Some(d)) => format!("{}/{} (torch device {d})", c.test, c.metric),
            (None, None) => format!("{}/{}", c.test, c.metric),
        },
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
    for (reason, names) in repeated_errors(r) {
        writeln!(
            out,
            "\n{} tests failed with the same error ({}): {}",
            names.len(),
            names.join(", "),
            first_line(&reason, 200)
        )?;
    }
    let (pass, fail, skip) = r.counts();
    let regressions = r.comparisons.iter().filter(|c| c.regression).count();
    let regressed = match regressions {
        0 => String::new(),
        1 => ", 1 regression".into(),
        n => format!(", {n} regressions"),
    };
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
    // Issue 36: how much of what ran was verified, so a pass says what it rests on.
    let checked = r.checked();
    let mut parts = Vec::new();
    if checked.products > 0 {
        let p = checked.products;
        parts.push(format!("{p} product{}", if p == 1 { "" } else { "s" }));
    }
    if checked.bytes > 0 {
        parts.push(figure(checked.bytes as f64, "bytes"));
    }
    let verified = match parts.is_empty() {
        true => String::new(),
        false => format!("; checked {}", parts.join(", ")),
    };
    writeln!(
        out,
        "\n{} {what} on {device}: {pass} pass, {fail} fail, {skip} skip{regressed}{verified}",
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
    let cases = r
        .tests
        .iter()
        .map(|t| {
            let device = t
                .device_label()
                .map(|d| format!("{d}: "))
                .unwrap_or_default();
            let mut case = xml::Case::new(entry_name(t), format!("rocmenv.{}", r.kind), t.status);
            case.message = t
                .reason
                .as_ref()
                .map(|reason| format!("{device}{}", reason.lines().next().unwrap_or_default()));
            case.text = format!("{device}{}", t.reason.clone().unwrap_or_default());
            if let Some(f) = &t.fix {
                case.text.push_str(&format!("\nfix: {f}"));
            }
            if t.status == Status::Pass {
                case.note = t.reason.clone().filter(|r| !r.trim().is_empty());
            }
            case.time = Some(Duration::from_secs_f64(t.duration_s.max(0.0)));
            case.properties = t
                .metrics
                .iter()
                .filter_map(|m| Some((m.name.clone(), format!("{} {}", m.value?, m.unit))))
                .collect();
            case
        })
        .collect();
    xml::write(
        "rocmenv",
        vec![xml::Suite {
            name: suite_name.to_string(),
            cases,
        }],
    )
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
                status: Status::Pass,
                reason: None,
                fix: None,
                metrics: vec![Metric {
                    name: "gemm_fp32_tflops".into(),
                    value: Some(0.0421),
                    unit: "TFLOP/s".into(),
                    better: None,
                }],
                params: Default::default(),
                duration_s: 0.5,
                device: None,
                gpu: None,
                checked: None,
            }],
            "timeout",
            "the suite outlived --timeout 5 s".into(),
            "",
        );
        r.tests.push(TestResult {
            name: "onnx".into(),
            status: Status::Skip,
            reason: Some("onnxruntime is not installed in this image".into()),
            fix: None,
            metrics: vec![],
            params: Default::default(),
            duration_s: 0.0,
            device: None,
            gpu: None,
            checked: None,
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

    /// Issue 36: under each failed test, one reason line and one fix line (one made up when the entry has none);
    /// what the suite printed last comes after them; the summary says what was checked.
    #[test]
    fn a_failed_row_shows_one_reason_line_then_the_fix() {
        let mut crashed = on_gpu(
            "run",
            Status::Fail,
            Some("killed by a signal; its last output:\n    Fatal Python error"),
            None,
        );
        crashed.fix = Some("run it by hand".into());
        let mut out = Vec::new();
        let mut rows = SuiteRows::default();
        rows.row(&crashed, Style::Plain, &mut out).unwrap();
        let bare = on_gpu("gemm", Status::Fail, Some("2 of 8 products wrong"), Some(3));
        rows.row(&bare, Style::Plain, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        assert_eq!(
            lines[1..4],
            [
                "killed by a signal",
                "fix: run it by hand",
                "its last output:"
            ],
            "{text}"
        );
        assert_eq!(lines[6], "GPU 3: 2 of 8 products wrong", "{text}");
        assert!(lines[7].starts_with("fix: rerun gemm alone"), "{text}");

        let mut r = result();
        r.tests[0].checked = Some(crate::suites::Checked {
            products: 24,
            bytes: 512 << 20,
        });
        let mut out = Vec::new();
        render_suite_summary(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.trim_end()
                .ends_with("1 skip; checked 24 products, 512 MiB"),
            "{text}"
        );
    }

    fn on_gpu(name: &str, status: Status, reason: Option<&str>, gpu: Option<usize>) -> TestResult {
        let mut t = TestResult::new(name, status, reason.map(str::to_string));
        t.device = gpu.map(|g| g as u32 - 2);
        t.gpu = gpu;
        t
    }

    /// Issue 25: `device0_total_memory_bytes 24105 MiB` was labelled in bytes and shown in MiB.
    #[test]
    fn a_bytes_metric_shown_in_mib_drops_its_bytes_suffix() {
        let mut t = TestResult::new("env", Status::Pass, None);
        t.metrics = vec![Metric {
            name: "device0_total_memory_bytes".into(),
            value: Some(24105.0 * 1048576.0),
            unit: "bytes".into(),
            better: None,
        }];
        let mut out = Vec::new();
        render_suite_test(&t, Style::Plain, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("device0_total_memory 24105 MiB"), "{text}");
        assert!(!text.contains("_bytes"), "{text}");
    }

    /// Issue 21: a row per device named by the host's number; a failure says which GPU; a passing test's note is
    /// one line; JUnit has a case per device and the note as system-out.
    #[test]
    fn per_device_rows_notes_and_junit_cases() {
        let mut r = result();
        r.tests = vec![
            on_gpu(
                "gemm",
                Status::Pass,
                Some("fp16 skipped: no fp16 matmul\nmore"),
                Some(2),
            ),
            on_gpu(
                "gemm",
                Status::Fail,
                Some("row 4000 off by 3.1 (atol 0.01)"),
                Some(3),
            ),
        ];
        let mut out = Vec::new();
        let mut rows = SuiteRows::default();
        for t in &r.tests {
            rows.row(t, Style::Plain, &mut out).unwrap();
        }
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("✓ gemm (GPU 2)"), "{text}");
        assert!(
            text.contains("      note: fp16 skipped: no fp16 matmul…"),
            "{text}"
        );
        assert!(text.contains("✗ gemm (GPU 3)"), "{text}");
        assert!(text.contains("      GPU 3: row 4000 off by 3.1"), "{text}");
        let xml = junit(&r, "smoke-quick");
        assert!(xml.contains(r#"<testcase name="gemm (GPU 2)""#), "{xml}");
        assert!(xml.contains(r#"<testcase name="gemm (GPU 3)""#), "{xml}");
        assert!(
            xml.contains(r#"<failure message="GPU 3: row 4000 off by 3.1 (atol 0.01)""#),
            "{xml}"
        );
        assert!(
            xml.contains("<system-out>fp16 skipped: no fp16 matmul"),
            "{xml}"
        );
    }

    /// Issue 25: an error every test repeats is shown in full once; the others name the first, and the summary
    /// lists the tests it affected.
    #[test]
    fn a_repeated_error_is_shown_once() {
        let mut r = result();
        let why = "torch cannot be imported: No module named 'torch'";
        r.tests = ["environment", "numerics", "gemm"]
            .iter()
            .map(|n| TestResult::new(n, Status::Fail, Some(why.into())))
            .collect();
        let mut out = Vec::new();
        let mut rows = SuiteRows::default();
        for t in &r.tests {
            rows.row(t, Style::Plain, &mut out).unwrap();
        }
        render_suite_summary(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("No module named").count(), 2, "{text}");
        assert!(
            text.contains("      the same error as environment"),
            "{text}"
        );
        assert!(
            text.contains("3 tests failed with the same error (environment, numerics, gemm): torch cannot be imported"),
            "{text}"
        );
    }

    /// Issue 25: the summary counts regressions, so a regression exit never stands beside "0 fail" alone.
    #[test]
    fn the_summary_counts_regressions() {
        let mut r = result();
        r.tests.truncate(1);
        r.comparisons.push(Comparison {
            test: "gemm".into(),
            metric: "throughput".into(),
            unit: "TFLOP/s".into(),
            measured: 1.0,
            baseline: Some(10.0),
            baseline_pct: Some(10.0),
            regression: true,
            ..Default::default()
        });
        let mut out = Vec::new();
        render_suite_summary(&r, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.trim_end()
                .ends_with("1 pass, 0 fail, 0 skip, 1 regression"),
            "{text}"
        );
        assert!(text.contains("10.0% of 10 TFLOP/s (regression)"), "{text}");
    }

    #[test]
    fn tune_names_the_knobs_that_help_and_their_variables() {
        let mut r = result();
        r.tests.push(TestResult {
            name: "tune".into(),
            status: Status::Pass,
            reason: None,
            fix: None,
            metrics: vec![
                Metric {
                    name: "tunableop_speedup".into(),
                    value: Some(1.31),
                    unit: "x".into(),
                    better: None,
                },
                Metric {
                    name: "amp_speedup".into(),
                    value: Some(1.01),
                    unit: "x".into(),
                    better: None,
                },
            ],
            params: Default::default(),
            duration_s: 1.0,
            device: None,
            gpu: None,
            checked: None,
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
