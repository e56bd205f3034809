//! `rocmenv validate`'s results and their renderings: a progress row per case, the JSON document (schema_version 1,
//! which `rocmenv report merge` reads), JUnit (one suite per stack), Markdown, and GitHub Actions annotations.

use super::human::mark;
use super::junit;
use super::Style;
use crate::checks::{Status, Summary};
use crate::suites::Comparison;
use serde::Serialize;
use std::io::Write;
use std::time::Duration;

/// The step a case belongs to, in the order validate runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Step {
    /// Host checks.
    Doctor,
    /// Rendering the Dockerfile.
    Dockerfile,
    /// hadolint on it.
    Hadolint,
    /// `rocmenv lint` on it and on the stack's own files.
    Lint,
    /// Building the image.
    Build,
    /// Static image checks.
    Image,
    /// The smoke suite.
    Smoke,
    /// A benchmark.
    Bench,
}

impl Step {
    /// As the JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            Step::Doctor => "doctor",
            Step::Dockerfile => "dockerfile",
            Step::Hadolint => "hadolint",
            Step::Lint => "lint",
            Step::Build => "build",
            Step::Image => "image",
            Step::Smoke => "smoke",
            Step::Bench => "bench",
        }
    }
}

/// One test case: a step, a check or a test.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// The step.
    pub step: Step,
    /// Stable dotted id (`kernel.rocm-supported`, `image.torch-arch`, `smoke.gemm`).
    pub id: String,
    /// Outcome.
    pub status: Status,
    /// One line.
    pub summary: String,
    /// What to do, for a failure or a warning.
    pub fix: Option<String>,
    /// What it is about when a check runs per device (a PCI address); part of the JUnit name.
    #[serde(skip)]
    pub subject: Option<String>,
    /// More, when there is more to say.
    #[serde(skip)]
    pub detail: Option<String>,
    /// How long it took.
    #[serde(skip)]
    pub duration: Duration,
}

impl Case {
    /// A case with no fix, subject or detail.
    pub fn new(
        step: Step,
        id: impl Into<String>,
        status: Status,
        summary: impl Into<String>,
    ) -> Case {
        Case {
            step,
            id: id.into(),
            status,
            summary: summary.into(),
            fix: None,
            subject: None,
            detail: None,
            duration: Duration::ZERO,
        }
    }

    /// With a fix.
    pub fn fix(mut self, f: impl Into<String>) -> Case {
        self.fix = Some(f.into());
        self
    }

    /// The JUnit name: the id, with the device it is about.
    pub fn name(&self) -> String {
        match &self.subject {
            Some(s) => format!("{} ({s})", self.id),
            None => self.id.clone(),
        }
    }
}

/// One stack's cases.
#[derive(Debug, Clone, Serialize)]
pub struct StackReport {
    /// The stack's name in the config.
    pub name: String,
    /// rocm, ngc or cpu.
    pub stack: String,
    /// The built image's tag, once built.
    pub image: Option<String>,
    /// The cases, in order.
    pub cases: Vec<Case>,
    /// Benchmark figures against baselines and peaks, for the Markdown table.
    #[serde(skip)]
    pub comparisons: Vec<Comparison>,
}

/// A whole run.
#[derive(Debug, Clone, Serialize)]
pub struct ValidateReport {
    /// 1.
    pub schema_version: u32,
    /// `validate`.
    pub kind: &'static str,
    /// The node (`ROCMENV_NODE_NAME`, else the hostname).
    pub node: Option<String>,
    /// This rocmenv's version.
    pub rocmenv_version: String,
    /// The config file, as given.
    pub config: String,
    /// Per stack.
    pub stacks: Vec<StackReport>,
    /// Counts over every case.
    pub summary: Summary,
}

impl ValidateReport {
    /// Recounts the summary from the cases.
    pub fn tally(&mut self) {
        let mut s = Summary::default();
        for c in self.stacks.iter().flat_map(|s| &s.cases) {
            match c.status {
                Status::Pass => s.pass += 1,
                Status::Warn => s.warn += 1,
                Status::Fail => s.fail += 1,
                Status::Skip => s.skip += 1,
            }
        }
        self.summary = s;
    }
}

/// One progress row: `  ✓ image      image.torch-arch  torch 1.13.0a0 is a CPU-only build …`, then the fix.
pub fn render_case(c: &Case, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(
        out,
        "  {} {:<10} {}: {}",
        mark(c.status, style),
        c.step.name(),
        c.name(),
        c.summary
    )?;
    if let (Status::Fail | Status::Warn, Some(f)) = (c.status, &c.fix) {
        writeln!(out, "      fix: {f}")?;
    }
    Ok(())
}

/// The JSON document.
pub fn validate_json(r: &ValidateReport) -> String {
    // Serialising plain owned data cannot fail.
    serde_json::to_string_pretty(r).unwrap_or_default() + "\n"
}

/// JUnit XML: one `<testsuite>` per stack, one `<testcase>` per case (classname `<stack>.<step>`); a failure carries
/// the summary as its message and the fix in its text, a skip its reason, a warning passes with it in system-out.
pub fn validate_junit(r: &ValidateReport) -> String {
    let suites = r
        .stacks
        .iter()
        .map(|s| junit::Suite {
            name: s.name.clone(),
            cases: s
                .cases
                .iter()
                .map(|c| {
                    let fix = c
                        .fix
                        .as_deref()
                        .map(|f| format!("\nfix: {f}"))
                        .unwrap_or_default();
                    let detail = c
                        .detail
                        .as_deref()
                        .map(|d| format!("\n{d}"))
                        .unwrap_or_default();
                    let mut case = junit::Case::new(
                        c.name(),
                        format!("{}.{}", s.name, c.step.name()),
                        c.status,
                    );
                    case.message = Some(c.summary.clone());
                    case.text = format!("{}{detail}{fix}", c.summary);
                    case.note = (c.status == Status::Warn).then(|| format!("{}{fix}", c.summary));
                    case.time = Some(c.duration);
                    case
                })
                .collect(),
        })
        .collect();
    junit::write("rocmenv validate", suites)
}

/// A Markdown table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn status_word(s: Status) -> &'static str {
    match s {
        Status::Pass => "✅ pass",
        Status::Warn => "⚠️ warn",
        Status::Fail => "❌ fail",
        Status::Skip => "⏭️ skip",
    }
}

fn figure(v: Option<f64>) -> String {
    match v {
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.2}"),
        None => "–".into(),
    }
}

/// `1402 (86 %)`: a reference figure and how much of it was measured.
fn with_pct(v: Option<f64>, pct: Option<f64>) -> String {
    match (v, pct) {
        (Some(_), Some(p)) => format!("{} ({p:.0} %)", figure(v)),
        _ => figure(v),
    }
}

/// The Markdown summary (for `--markdown` and `GITHUB_STEP_SUMMARY`): the counts, a table per stack, and the
/// measured / baseline / peak table when benchmarks ran.
pub fn validate_markdown(r: &ValidateReport) -> String {
    let mut s = String::new();
    let sum = &r.summary;
    let verdict = if sum.fail > 0 {
        "❌ failed"
    } else {
        "✅ passed"
    };
    s.push_str(&format!(
        "## rocmenv validate: {verdict}\n\n{} · config `{}` · rocmenv {}{}\n\n",
        sum.line(),
        r.config,
        r.rocmenv_version,
        r.node
            .as_deref()
            .map(|n| format!(" · node `{n}`"))
            .unwrap_or_default()
    ));
    for st in &r.stacks {
        s.push_str(&format!(
            "### {} ({} stack){}\n\n",
            st.name,
            st.stack,
            st.image
                .as_deref()
                .map(|i| format!(": `{i}`"))
                .unwrap_or_default()
        ));
        s.push_str("| step | case | status | summary | time |\n| --- | --- | --- | --- | --- |\n");
        for c in &st.cases {
            s.push_str(&format!(
                "| {} | `{}` | {} | {} | {:.1} s |\n",
                c.step.name(),
                cell(&c.name()),
                status_word(c.status),
                cell(&c.summary),
                c.duration.as_secs_f64()
            ));
        }
        let fixes: Vec<&Case> = st
            .cases
            .iter()
            .filter(|c| matches!(c.status, Status::Fail | Status::Warn) && c.fix.is_some())
            .collect();
        if !fixes.is_empty() {
            s.push_str("\n**Fixes**\n\n");
            for c in fixes {
                s.push_str(&format!(
                    "- `{}`: {}\n",
                    c.name(),
                    cell(c.fix.as_deref().unwrap_or_default())
                ));
            }
        }
        if !st.comparisons.is_empty() {
            s.push_str("\n| benchmark | metric | measured | baseline | peak | |\n| --- | --- | --- | --- | --- | --- |\n");
            for c in &st.comparisons {
                s.push_str(&format!(
                    "| {} | {} | {} {} | {} | {} | {} |\n",
                    c.test,
                    c.metric,
                    figure(Some(c.measured)),
                    c.unit,
                    with_pct(c.baseline, c.baseline_pct),
                    with_pct(c.peak, c.peak_pct),
                    if c.regression { "regressed" } else { "" }
                ));
            }
        }
        s.push('\n');
    }
    s
}

/// GitHub Actions' escaping of a workflow command's message.
fn gha_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// …and of a property value.
fn gha_property(s: &str) -> String {
    gha_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `::error title=…::…` for each failure and `::warning …` for each warning (GitHub Actions shows them on the run).
pub fn validate_annotations(r: &ValidateReport, out: &mut dyn Write) -> std::io::Result<()> {
    for st in &r.stacks {
        for c in &st.cases {
            let level = match c.status {
                Status::Fail => "error",
                Status::Warn => "warning",
                _ => continue,
            };
            let fix = c
                .fix
                .as_deref()
                .map(|f| format!("\nfix: {f}"))
                .unwrap_or_default();
            writeln!(
                out,
                "::{level} title={}::{}",
                gha_property(&format!("rocmenv validate {} {}", st.name, c.name())),
                gha_data(&format!("{}{fix}", c.summary))
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report() -> ValidateReport {
        let mut r = ValidateReport {
            schema_version: 1,
            kind: "validate",
            node: Some("ci-1".into()),
            rocmenv_version: "0.1.0".into(),
            config: "rocmenv.yaml".into(),
            stacks: vec![StackReport {
                name: "mi300".into(),
                stack: "rocm".into(),
                image: Some("rocmenv/rocm:abc".into()),
                cases: vec![
                    Case::new(Step::Build, "build.image", Status::Pass, "built"),
                    Case::new(
                        Step::Image,
                        "image.torch-arch",
                        Status::Fail,
                        "no kernels for gfx942, a|b",
                    )
                    .fix("use a ROCm torch"),
                    Case::new(Step::Smoke, "smoke", Status::Skip, "no GPU on this runner"),
                ],
                comparisons: vec![],
            }],
            summary: Summary::default(),
        };
        r.tally();
        r
    }

    #[test]
    fn json_keeps_the_contract() {
        let v: serde_json::Value = serde_json::from_str(&validate_json(&report())).unwrap();
        assert_eq!(v["schema_version"], 1);
        assert_eq!(v["kind"], "validate");
        let case = &v["stacks"][0]["cases"][1];
        let keys: Vec<&str> = case
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        // serde_json's map sorts keys; the document itself keeps the contract's order.
        assert_eq!(keys, ["fix", "id", "status", "step", "summary"]);
        let text = validate_json(&report());
        let at = |k: &str| text.find(&format!("\"{k}\":")).unwrap();
        assert!(
            at("schema_version") < at("kind")
                && at("kind") < at("node")
                && at("config") < at("stacks")
        );
        assert!(at("step") < at("id") && at("id") < at("status") && at("summary") < at("fix"));
        assert_eq!(case["step"], "image");
        assert_eq!(
            v["summary"],
            serde_json::json!({"pass": 1, "warn": 0, "fail": 1, "skip": 1})
        );
        let stack: Vec<&str> = v["stacks"][0]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(stack, ["cases", "image", "name", "stack"]);
        let top: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            top,
            [
                "config",
                "kind",
                "node",
                "rocmenv_version",
                "schema_version",
                "stacks",
                "summary"
            ]
        );
    }

    #[test]
    fn annotations_escape_and_carry_the_fix() {
        let mut out = Vec::new();
        validate_annotations(&report(), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "::error title=rocmenv validate mi300 image.torch-arch::no kernels for gfx942, a|b%0Afix: use a ROCm torch\n"
        );
    }

    #[test]
    fn junit_has_a_suite_per_stack_and_the_fix_in_failures() {
        let x = validate_junit(&report());
        assert!(
            x.contains(
                "<testsuite name=\"mi300\" tests=\"3\" disabled=\"1\" errors=\"0\" failures=\"1\""
            ),
            "{x}"
        );
        assert!(x.contains("fix: use a ROCm torch"), "{x}");
    }

    #[test]
    fn markdown_shows_measured_baseline_and_peak_when_benchmarks_ran() {
        let mut r = report();
        r.stacks[0].comparisons.push(Comparison {
            test: "resnet50".into(),
            metric: "throughput".into(),
            unit: "images/s".into(),
            measured: 1210.4,
            peak: None,
            peak_pct: None,
            baseline: Some(1402.0),
            baseline_source: Some("team-baseline.yaml".into()),
            baseline_pct: Some(86.3),
            regression: true,
            ..Default::default()
        });
        r.stacks[0].comparisons.push(Comparison {
            test: "gemm".into(),
            metric: "gemm_bf16_tflops".into(),
            unit: "TFLOP/s".into(),
            measured: 612.3,
            peak: Some(989.4),
            peak_pct: Some(61.9),
            baseline: None,
            baseline_source: None,
            baseline_pct: None,
            regression: false,
            ..Default::default()
        });
        let md = validate_markdown(&r);
        assert!(
            md.starts_with(
                "## rocmenv validate: ❌ failed\n\n1 passed, 0 warnings, 1 failed, 1 skipped"
            ),
            "{md}"
        );
        assert!(
            md.contains("| `image.torch-arch` | ❌ fail | no kernels for gfx942, a\\|b | 0.0 s |"),
            "{md}"
        );
        assert!(
            md.contains("- `image.torch-arch`: use a ROCm torch"),
            "{md}"
        );
        assert!(
            md.contains("| benchmark | metric | measured | baseline | peak | |"),
            "{md}"
        );
        assert!(
            md.contains("| resnet50 | throughput | 1210 images/s | 1402 (86 %) | – | regressed |"),
            "{md}"
        );
        assert!(
            md.contains("| gemm | gemm_bf16_tflops | 612 TFLOP/s | – | 989 (62 %) |  |"),
            "{md}"
        );
    }
}
