//! The result document `run.py` writes (schema_version 2; 1 is still read), the progress line it prints per test, and
//! the document rocmenv makes itself when a run crashed, hung or wrote nothing: a failed run, never a pass.
//!
//! Schema 2 adds `device` to every test entry (torch's index of the device it ran on, `null` for a test that is not
//! about one device), `index`/`pci_*`/`uuid` to `device.devices[]`, and `better` to metrics. rocmenv adds `gpu` (the
//! host's GPU number, as doctor and `run --gpu` count) to each device test it can place.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use crate::status::Status;

/// The result document's format version rocmenv writes.
pub const SCHEMA_VERSION: u32 = 2;

/// The prefix of the line `run.py` prints when a test finishes; the rest is the test's entry as JSON.
pub const PROGRESS_PREFIX: &str = "@rocmenv-test ";

/// One run of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteResult {
    /// Format version: 2 (rocmenv writes 2; a version-1 document reads as one whose tests have no device).
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
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
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
    /// What share of the package's datasheet figure `peak` is, when not the whole (`per GCD: package / 2`, a
    /// partition mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_basis: Option<String>,
    /// The baseline's value, when a baseline matches.
    #[serde(default)]
    pub baseline: Option<f64>,
    /// Where the baseline came from.
    #[serde(default)]
    pub baseline_source: Option<String>,
    /// `measured / baseline` in percent.
    #[serde(default)]
    pub baseline_pct: Option<f64>,
    /// True when the measurement is more than the threshold below the baseline (above it, for a latency).
    #[serde(default)]
    pub regression: bool,
    /// True for a latency: lower is better, and a figure above its baseline regresses.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub lower_is_better: bool,
    /// The host's GPU the figure was measured on, when rocmenv placed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<usize>,
    /// torch's index of that device, when the test was about one device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<u32>,
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

/// One test's entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The test (`numerics`, or `models/resnet50` for a part).
    pub name: String,
    /// How it ended: pass, skip or fail.
    #[serde(deserialize_with = "Status::deserialize_test")]
    pub status: Status,
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
    /// The device it ran on, as torch numbers them in the process (0..n-1); `None` for a test not about one device.
    #[serde(default)]
    pub device: Option<u32>,
    /// The host's number for that device (doctor's `#`, `run --gpu N`), added by rocmenv when it can place it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<usize>,
    /// What the test verified (gemm's products, the copies' and memory blocks' bytes); absent when nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<Checked>,
}

/// What a test verified, each whole: matrix products (Freivalds' check of every row), and bytes compared after a
/// copy or a fill (issue 36: a fault in one product or copy of several must land in a checked one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Checked {
    /// Products checked.
    #[serde(default)]
    pub products: u64,
    /// Bytes checked.
    #[serde(default)]
    pub bytes: u64,
}

impl TestResult {
    /// A test entry with no metrics, parameters or device.
    pub fn new(name: &str, status: Status, reason: Option<String>) -> TestResult {
        TestResult {
            name: name.to_string(),
            status,
            reason,
            fix: None,
            metrics: Vec::new(),
            params: Map::new(),
            duration_s: 0.0,
            device: None,
            gpu: None,
            checked: None,
        }
    }

    /// How the entry names its device: `GPU 3` (the host's number), `torch device 1` when rocmenv could not place
    /// it on the host, `None` for a test not about one device.
    pub fn device_label(&self) -> Option<String> {
        match (self.gpu, self.device) {
            (Some(g), _) => Some(format!("GPU {g}")),
            (None, Some(d)) => Some(format!("torch device {d}")),
            (None, None) => None,
        }
    }
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
    /// Which way is better; absent means higher.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
}

/// Which way a metric improves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    /// Throughput, TFLOP/s, GB/s.
    Higher,
    /// Latencies.
    Lower,
}

impl Metric {
    /// True for a latency-like metric: `better: lower`, or (in documents that predate `better`) a time unit.
    pub fn lower_is_better(&self) -> bool {
        match self.better {
            Some(b) => b == Better::Lower,
            None => matches!(self.unit.as_str(), "ms" | "s" | "us" | "µs"),
        }
    }
}

/// One entry of `device.devices[]` as rocmenv reads it (schema 2; fields torch does not expose are `None`). PCI
/// fields are numbers as torch gives them, or strings (`"0xc1"`, or a whole address `"0000:c1:00.0"` as bus id).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct DeviceInfo {
    /// torch's index of the device.
    #[serde(default)]
    pub index: Option<u32>,
    /// Its name.
    #[serde(default)]
    pub name: Option<String>,
    /// PCI bus.
    #[serde(default)]
    pub pci_bus_id: Option<Value>,
    /// PCI domain.
    #[serde(default)]
    pub pci_domain_id: Option<Value>,
    /// PCI device (slot).
    #[serde(default)]
    pub pci_device_id: Option<Value>,
    /// The device's UUID, when torch has one.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// A PCI number given as a JSON number, a `0x` hex string or a decimal string.
fn pci_number(v: &Value) -> Option<u32> {
    match v {
        Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
        Value::String(s) => match s.trim().strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => s.trim().parse().ok(),
        },
        _ => None,
    }
}

/// `0000:c1:00.0` or `c1:00.0` → (domain, bus, device).
pub fn pci_address_parts(address: &str) -> Option<(u32, u32, u32)> {
    let parts: Vec<&str> = address.trim().split(':').collect();
    let (domain, bus, rest) = match parts.as_slice() {
        [d, b, r] => (*d, *b, *r),
        [b, r] => ("0", *b, *r),
        _ => return None,
    };
    let device = rest.split('.').next()?;
    Some((
        u32::from_str_radix(domain, 16).ok()?,
        u32::from_str_radix(bus, 16).ok()?,
        u32::from_str_radix(device, 16).ok()?,
    ))
}

impl DeviceInfo {
    /// The device's PCI (domain, bus, device), when torch gave all three (or a whole address).
    pub fn pci(&self) -> Option<(u32, u32, u32)> {
        if let Some(Value::String(s)) = &self.pci_bus_id {
            if s.contains(':') {
                return pci_address_parts(s);
            }
        }
        Some((
            pci_number(self.pci_domain_id.as_ref()?)?,
            pci_number(self.pci_bus_id.as_ref()?)?,
            pci_number(self.pci_device_id.as_ref()?)?,
        ))
    }
}

impl Device {
    /// `devices[]` entries that parse as schema-2 descriptions, in order.
    pub fn infos(&self) -> Vec<DeviceInfo> {
        self.devices
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect()
    }
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
    #[error("the suite's result document has schema_version {0}; this rocmenv reads 1 and 2")]
    Version(u32),
}

/// Parses a result document.
pub fn parse_result(bytes: Option<&[u8]>) -> Result<SuiteResult, ResultError> {
    let bytes = bytes.ok_or(ResultError::Missing)?;
    let doc: SuiteResult =
        serde_json::from_slice(bytes).map_err(|e| ResultError::Invalid(e.to_string()))?;
    let mut doc = doc;
    match doc.schema_version {
        // A version-1 document is a version-2 one whose tests name no device; rocmenv writes what it holds as 2.
        1 | 2 => doc.schema_version = SCHEMA_VERSION,
        v => return Err(ResultError::Version(v)),
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
        let mut t = TestResult::new(failure, Status::Fail, Some(reason));
        t.fix = Some(failed_run_fix(failure).to_string());
        tests.push(t);
        SuiteResult {
            schema_version: SCHEMA_VERSION,
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

    /// What every test checked, summed: products and bytes.
    pub fn checked(&self) -> Checked {
        self.tests
            .iter()
            .filter_map(|t| t.checked)
            .fold(Checked::default(), |a, c| Checked {
                products: a.products + c.products,
                bytes: a.bytes + c.bytes,
            })
    }

    /// True when no test failed.
    pub fn passed(&self) -> bool {
        self.tests.iter().all(|t| t.status != Status::Fail)
    }

    /// How many tests passed, failed and skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s| self.tests.iter().filter(|t| t.status == s).count();
        (n(Status::Pass), n(Status::Fail), n(Status::Skip))
    }
}

/// The step a person can follow for each way rocmenv ends a run that wrote no document of its own (the names
/// `ops::suite` gives them).
fn failed_run_fix(failure: &str) -> &'static str {
    match failure {
        "interrupted" => {
            "rerun the suite to finish it; --only NAME runs just the tests that did not finish"
        }
        "timeout" => {
            "raise --timeout (each test also has its own deadline), or run fewer tests with --only NAME"
        }
        _ => {
            "run the interpreter by hand (PYTHON -c 'import torch') to see why: --python, or the image's python3, must be Python 3 with torch"
        }
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
        assert_eq!((t.name.as_str(), t.status), ("numerics", Status::Fail));
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
        let v3 = DOC.replace("\"schema_version\": 1", "\"schema_version\": 3");
        assert_eq!(
            parse_result(Some(v3.as_bytes())),
            Err(ResultError::Version(3))
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

    /// Issue 21: schema 2 carries a device per test entry, PCI addresses per device and the direction of a metric;
    /// a version-1 document still reads, as one whose tests name no device.
    #[test]
    fn schema_2_entries_carry_their_device() {
        let v1 = parse_result(Some(DOC.as_bytes())).unwrap();
        assert_eq!(v1.schema_version, 2);
        assert_eq!(v1.tests[0].device, None);
        assert!(!v1.tests[0].metrics[0].lower_is_better());
        let doc = r#"{"schema_version": 2, "kind": "smoke", "level": "quick",
          "device": {"kind": "rocm", "name": "AMD Instinct MI210", "count": 2, "devices": [
            {"index": 0, "name": "AMD Instinct MI210", "pci_bus_id": 227, "pci_domain_id": 0, "pci_device_id": 0, "uuid": "GPU-1"},
            {"index": 1, "name": "AMD Instinct MI210", "pci_bus_id": null, "pci_domain_id": null, "pci_device_id": null, "uuid": null}]},
          "tests": [
            {"name": "environment", "status": "pass", "device": null, "metrics": [], "params": {}, "duration_s": 0.1},
            {"name": "gemm", "status": "pass", "device": 0,
             "metrics": [{"name": "latency_ms", "value": 2.0, "unit": "ms", "better": "lower"}], "params": {}, "duration_s": 0.1},
            {"name": "gemm", "status": "fail", "device": 1, "reason": "row 4000 off by 3.1", "metrics": [], "params": {}, "duration_s": 0.1}]}"#;
        let r = parse_result(Some(doc.as_bytes())).unwrap();
        assert_eq!(
            r.tests.iter().map(|t| t.device).collect::<Vec<_>>(),
            [None, Some(0), Some(1)]
        );
        assert!(r.tests[1].metrics[0].lower_is_better());
        assert_eq!(r.counts(), (2, 1, 0));
        let infos = r.device.infos();
        assert_eq!(infos.len(), 2);
        assert_eq!((infos[0].pci(), infos[1].pci()), (Some((0, 227, 0)), None));
        let whole: DeviceInfo =
            serde_json::from_str(r#"{"index": 0, "pci_bus_id": "0000:c1:00.0"}"#).unwrap();
        assert_eq!(whole.pci(), Some((0, 0xc1, 0)));
        let hex: DeviceInfo = serde_json::from_str(
            r#"{"pci_bus_id": "0xc1", "pci_domain_id": "0", "pci_device_id": 0}"#,
        )
        .unwrap();
        assert_eq!(hex.pci(), Some((0, 0xc1, 0)));
        assert_eq!(r.tests[2].device_label().as_deref(), Some("torch device 1"));
        // What rocmenv writes keeps the device (null included) and the direction.
        let text = serde_json::to_string(&r).unwrap();
        assert!(
            text.contains(r#""device":null"#) && text.contains(r#""better":"lower""#),
            "{text}"
        );
        let line = r#"@rocmenv-test {"name": "memory", "status": "pass", "device": 3, "metrics": [], "params": {}, "duration_s": 1.0}"#;
        assert_eq!(parse_progress(line).unwrap().device, Some(3));
    }

    #[test]
    fn tails_skip_progress_lines() {
        let text = "a\n@rocmenv-test {}\n\nb\nc\n";
        assert_eq!(tail_lines(text, 2), "    b\n    c");
    }
}
