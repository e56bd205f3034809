//! The result document `run.py` writes (schema_version 1), the progress line it prints per test, and the
//! document rocmenv makes itself when a run crashed, hung or wrote nothing: a failed run, never a pass.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The prefix of the line `run.py` prints when a test finishes; the rest is the test's entry as JSON.
pub const PROGRESS_PREFIX: &str = "@rocmenv-test ";

/// One run of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    /// Format version; 1.
    pub schema_version: u32,
    /// `smoke` or `bench`.
    pub kind: String,
    /// The level that ran.
    pub level: String,
    /// The node the run was on (`ROCMENV_NODE_NAME`, else the hostname), added by rocmenv; `null` in older documents.
    #[serde(default)]
    pub node: Option<String>,
    /// Where the tests ran.
    pub device: Device,
    /// Python, torch, HIP, CUDA, MIOpen, cuDNN, ONNX Runtime… (`null` when absent).
    #[serde(default)]
    pub versions: BTreeMap<String, Value>,
    /// The GPU variables as the process saw them.
    #[serde(default)]
    pub env: BTreeMap<String, Value>,
    /// The tests, in the order they finished.
    pub tests: Vec<TestResult>,
    /// When the run started (ISO 8601), when known.
    #[serde(default)]
    pub started_at: Option<String>,
    /// When it finished, when known.
    #[serde(default)]
    pub finished_at: Option<String>,
    /// Measured figures beside their datasheet peak and baseline, added by rocmenv.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comparisons: Vec<Comparison>,
}

/// A measured figure beside what it is compared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The test (`gemm`, `resnet50`).
    pub test: String,
    /// The metric (`gemm_bf16_tflops`, `throughput`).
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// What the run measured.
    pub measured: f64,
    /// The datasheet peak for this metric on this device, when gpus.yaml has one.
    #[serde(default)]
    pub peak: Option<f64>,
    /// `measured / peak` in percent.
    #[serde(default)]
    pub peak_pct: Option<f64>,
    /// The baseline's value, when a baseline matches.
    #[serde(default)]
    pub baseline: Option<f64>,
    /// Where the baseline came from.
    #[serde(default)]
    pub baseline_source: Option<String>,
    /// `measured / baseline` in percent.
    #[serde(default)]
    pub baseline_pct: Option<f64>,
    /// True when the measurement is more than the threshold below the baseline.
    #[serde(default)]
    pub regression: bool,
}

/// The device a run used.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Device {
    /// `cpu`, `rocm` or `cuda`.
    pub kind: String,
    /// The first device's name.
    #[serde(default)]
    pub name: Option<String>,
    /// AMD: `gcnArchName` (`gfx90a:sramecc+:xnack-`).
    #[serde(default)]
    pub gfx: Option<String>,
    /// NVIDIA: `9.0`.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// How many devices the process sees.
    #[serde(default)]
    pub count: u32,
    /// Every device, as `run.py` describes it.
    #[serde(default)]
    pub devices: Vec<Value>,
}

/// How one test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// It passed.
    Pass,
    /// It could not run here, and says why.
    Skip,
    /// It failed.
    Fail,
}

/// One test's entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The test (`numerics`, or `models/resnet50` for a part).
    pub name: String,
    /// How it ended.
    pub status: TestStatus,
    /// Why it failed or skipped, or notes on a pass.
    #[serde(default)]
    pub reason: Option<String>,
    /// A step a person can follow.
    #[serde(default)]
    pub fix: Option<String>,
    /// What it measured.
    #[serde(default)]
    pub metrics: Vec<Metric>,
    /// The parameters it ran with.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// How long it took.
    #[serde(default)]
    pub duration_s: f64,
}

/// One measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// `gemm_bf16_tflops`, `images_per_s`, …
    pub name: String,
    /// The value; `null` when it could not be measured.
    pub value: Option<f64>,
    /// `TFLOP/s`, `GB/s`, `ms`, …
    pub unit: String,
}

/// Why a result document is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultError {
    /// The run wrote no document.
    #[error("the suite wrote no result document")]
    Missing,
    /// The document is not the JSON it should be.
    #[error("the suite's result document is not valid: {0}")]
    Invalid(String),
    /// A document of another format version.
    #[error("the suite's result document has schema_version {0}; this rocmenv reads 1")]
    Version(u32),
}

/// Parses a result document.
pub fn parse_result(bytes: Option<&[u8]>) -> Result<SuiteResult, ResultError> {
    let bytes = bytes.ok_or(ResultError::Missing)?;
    let doc: SuiteResult =
        serde_json::from_slice(bytes).map_err(|e| ResultError::Invalid(e.to_string()))?;
    if doc.schema_version != 1 {
        return Err(ResultError::Version(doc.schema_version));
    }
    Ok(doc)
}

/// The test entry a progress line carries; `None` for any other line.
pub fn parse_progress(line: &str) -> Option<TestResult> {
    serde_json::from_str(line.trim_end().strip_prefix(PROGRESS_PREFIX)?).ok()
}

impl SuiteResult {
    /// The document for a run that ended without a usable result: the tests that finished (from their progress
    /// lines), then a failed entry named `failure` with the reason and the last lines the suite printed.
    pub fn failed_run(
        kind: &str,
        level: &str,
        finished: Vec<TestResult>,
        failure: &str,
        reason: String,
        tail: &str,
    ) -> SuiteResult {
        let mut tests = finished;
        let reason = if tail.trim().is_empty() {
            reason
        } else {
            format!("{reason}; its last output:\n{tail}")
        };
        tests.push(TestResult {
            name: failure.to_string(),
            status: TestStatus::Fail,
            reason: Some(reason),
            fix: None,
            metrics: Vec::new(),
            params: Map::new(),
            duration_s: 0.0,
        });
        SuiteResult {
            schema_version: 1,
            kind: kind.to_string(),
            level: level.to_string(),
            node: None,
            device: Device::default(),
            versions: BTreeMap::new(),
            env: BTreeMap::new(),
            tests,
            started_at: None,
            finished_at: None,
            comparisons: Vec::new(),
        }
    }

    /// True when no test failed.
    pub fn passed(&self) -> bool {
        self.tests.iter().all(|t| t.status != TestStatus::Fail)
    }

    /// How many tests passed, failed and skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s| self.tests.iter().filter(|t| t.status == s).count();
        (
            n(TestStatus::Pass),
            n(TestStatus::Fail),
            n(TestStatus::Skip),
        )
    }
}

/// The last `n` non-empty lines of `text`, indented, for a failure message.
pub fn tail_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with(PROGRESS_PREFIX))
        .collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r#"{"schema_version": 1, "kind": "smoke", "level": "quick",
      "device": {"kind": "cpu", "name": "x", "gfx": null, "compute_capability": null, "count": 1, "devices": []},
      "versions": {"torch": "1.13.1", "hip": null}, "env": {},
      "tests": [{"name": "gemm", "status": "pass", "reason": null, "fix": null,
                 "metrics": [{"name": "gemm_fp32_tflops", "value": 0.05, "unit": "TFLOP/s"}], "params": {"size": 256},
                 "duration_s": 0.4}], "started_at": "2026-12-03T06:00:00Z", "finished_at": "2026-12-03T06:00:01Z"}"#;

    #[test]
    fn a_document_and_a_progress_line_parse() {
        let r = parse_result(Some(DOC.as_bytes())).unwrap();
        assert_eq!(r.tests[0].metrics[0].value, Some(0.05));
        assert!(r.passed());
        let line = r#"@rocmenv-test {"name": "numerics", "status": "fail", "reason": "fp16 matmul off", "fix": null, "metrics": [], "params": {}, "duration_s": 1.0}"#;
        let t = parse_progress(line).unwrap();
        assert_eq!((t.name.as_str(), t.status), ("numerics", TestStatus::Fail));
        assert_eq!(parse_progress("numerics ok"), None);
    }

    /// Issue 15: a suite that writes nothing, writes garbage or another format is a failed run, never a pass.
    #[test]
    fn broken_documents_are_errors() {
        assert_eq!(parse_result(None), Err(ResultError::Missing));
        assert!(matches!(
            parse_result(Some(b"{\"tests\": [")),
            Err(ResultError::Invalid(_))
        ));
        assert!(matches!(
            parse_result(Some(b"")),
            Err(ResultError::Invalid(_))
        ));
        let v2 = DOC.replace("\"schema_version\": 1", "\"schema_version\": 2");
        assert_eq!(
            parse_result(Some(v2.as_bytes())),
            Err(ResultError::Version(2))
        );
        let bad_status = DOC.replace("\"pass\"", "\"ok\"");
        assert!(matches!(
            parse_result(Some(bad_status.as_bytes())),
            Err(ResultError::Invalid(_))
        ));
        let r = SuiteResult::failed_run(
            "smoke",
            "quick",
            vec![],
            "run",
            "it crashed".into(),
            "    Segmentation fault",
        );
        assert!(!r.passed());
        assert_eq!(r.counts(), (0, 1, 0));
        assert!(r.tests[0]
            .reason
            .as_deref()
            .unwrap()
            .ends_with("Segmentation fault"));
    }

    #[test]
    fn tails_skip_progress_lines() {
        let text = "a\n@rocmenv-test {}\n\nb\nc\n";
        assert_eq!(tail_lines(text, 2), "    b\n    c");
    }
}
