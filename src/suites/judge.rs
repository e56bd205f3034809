//! Measured figures beside the datasheet peak (`matrices/gpus.yaml`) and a baseline (a team's own file): what
//! share of the peak a GEMM or a copy reached, and whether a benchmark regressed.

use super::result::{Comparison, SuiteResult, TestStatus};
use crate::matrix::{GpuModel, Matrices};
use serde::{Deserialize, Serialize};

/// A baselines file (`--baseline FILE`, written by `--save-baseline FILE`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baselines {
    /// Format version; 1.
    pub schema_version: u32,
    /// One figure per device, test, metric and parameters.
    pub baselines: Vec<Baseline>,
}

/// One figure to compare against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The device name as the run reports it (`AMD Radeon RX 7900 XTX`), or `cpu` for CPU runs.
    pub device: String,
    /// The test or benchmark (`resnet50`).
    pub test: String,
    /// The metric (`throughput`).
    pub metric: String,
    /// The parameters that must match (batch, precision, mode, size…); others are ignored.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
    /// The figure.
    pub value: f64,
    /// Its unit.
    pub unit: String,
    /// Where it came from: a URL, a commit, or the run that saved it.
    pub source: String,
}

/// Higher is better for these units; the rest (latencies) are not judged against baselines.
fn higher_is_better(unit: &str) -> bool {
    matches!(
        unit,
        "TFLOP/s" | "GB/s" | "images/s" | "samples/s" | "qps" | "QPS"
    )
}

/// The gpus.yaml model a device name means: the model whose name shares the most words with it, among those whose
/// first word with a digit (`7900`, `h100`, `mi300x`) the device name has. `None` when two models tie.
pub fn model_for<'m>(m: &'m Matrices, device_name: &str) -> Option<&'m GpuModel> {
    let words = |s: &str| -> Vec<String> {
        s.to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let have = words(device_name);
    let mut best: Vec<(usize, &GpuModel)> = Vec::new();
    for model in &m.gpus.gpus {
        let want = words(&model.name);
        let Some(key) = want.iter().find(|w| w.chars().any(|c| c.is_ascii_digit())) else {
            continue;
        };
        if !have.contains(key) {
            continue;
        }
        let score = want.iter().filter(|w| have.contains(w)).count();
        match best.first() {
            Some((s, _)) if *s > score => {}
            Some((s, _)) if *s == score => best.push((score, model)),
            _ => best = vec![(score, model)],
        }
    }
    match best.as_slice() {
        [(_, one)] => Some(one),
        _ => None,
    }
}

/// The datasheet peak a metric is a share of: GEMM TFLOP/s per precision, device-copy GB/s.
fn peak_for(model: &GpuModel, test: &str, metric: &str, precision: Option<&str>) -> Option<f64> {
    let p = model.peaks.as_ref()?;
    let by_precision = |d: &str| match d {
        "fp32" => p.fp32_tflops,
        "fp16" => p.fp16_tflops,
        "bf16" => p.bf16_tflops,
        _ => None,
    };
    match (test, metric) {
        ("gemm", m) if m.starts_with("gemm_") && m.ends_with("_tflops") => {
            by_precision(&m["gemm_".len()..m.len() - "_tflops".len()])
        }
        ("gemm", "throughput") => by_precision(precision?),
        ("bandwidth", "bandwidth_device_copy_gbs") | ("bandwidth", "throughput") => p.mem_bw_gbs,
        _ => None,
    }
}

/// Adds a comparison for every measured figure that has a peak or a matching baseline; `threshold` is the share
/// (0.10 = 10 %) a figure may fall below its baseline before it counts as a regression.
pub fn compare(r: &mut SuiteResult, m: &Matrices, baselines: &[Baseline], threshold: f64) {
    let on_gpu = r.device.kind != "cpu";
    let device = if on_gpu {
        r.device.name.clone().unwrap_or_default()
    } else {
        "cpu".to_string()
    };
    let model = on_gpu.then(|| model_for(m, &device)).flatten();
    let mut out = Vec::new();
    for t in r.tests.iter().filter(|t| t.status == TestStatus::Pass) {
        let precision = t.params.get("precision").and_then(|v| v.as_str());
        for metric in &t.metrics {
            let Some(measured) = metric.value else {
                continue;
            };
            let peak = model.and_then(|g| peak_for(g, &t.name, &metric.name, precision));
            let base = baselines.iter().find(|b| {
                b.device == device
                    && b.test == t.name
                    && b.metric == metric.name
                    && b.unit == metric.unit
                    && b.params.iter().all(|(k, v)| t.params.get(k) == Some(v))
            });
            if peak.is_none() && base.is_none() {
                continue;
            }
            let pct = |of: f64| (of > 0.0).then(|| (measured / of * 1000.0).round() / 10.0);
            let baseline_pct = base.and_then(|b| pct(b.value));
            out.push(Comparison {
                test: t.name.clone(),
                metric: metric.name.clone(),
                unit: metric.unit.clone(),
                measured,
                peak,
                peak_pct: peak.and_then(pct),
                baseline: base.map(|b| b.value),
                baseline_source: base.map(|b| b.source.clone()),
                baseline_pct,
                regression: higher_is_better(&metric.unit)
                    && baseline_pct.is_some_and(|p| p < (1.0 - threshold) * 100.0),
            });
        }
    }
    r.comparisons = out;
}

/// A baselines file from this run's figures (higher-is-better metrics of passing tests), for `--save-baseline`.
pub fn baselines_from(r: &SuiteResult, source: &str) -> Baselines {
    let device = if r.device.kind == "cpu" {
        "cpu".to_string()
    } else {
        r.device.name.clone().unwrap_or_default()
    };
    let keep = [
        "batch",
        "precision",
        "mode",
        "size",
        "size_mb",
        "image_size",
    ];
    let baselines = r
        .tests
        .iter()
        .filter(|t| t.status == TestStatus::Pass)
        .flat_map(|t| {
            let params: serde_json::Map<_, _> = t
                .params
                .iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let device = device.clone();
            t.metrics
                .iter()
                .filter(|m| higher_is_better(&m.unit))
                .filter_map(move |m| {
                    Some(Baseline {
                        device: device.clone(),
                        test: t.name.clone(),
                        metric: m.name.clone(),
                        params: params.clone(),
                        value: m.value?,
                        unit: m.unit.clone(),
                        source: source.to_string(),
                    })
                })
        })
        .collect();
    Baselines {
        schema_version: 1,
        baselines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::result::{Metric, TestResult};

    fn m() -> Matrices {
        Matrices::load(None).unwrap()
    }

    #[test]
    fn device_names_as_torch_reports_them_find_their_model() {
        let m = m();
        let name = |s| model_for(&m, s).map(|g| g.name.clone());
        assert_eq!(
            name("AMD Radeon RX 7900 XTX").as_deref(),
            Some("AMD Radeon RX 7900 XTX")
        );
        assert_eq!(name("NVIDIA H200").as_deref(), Some("NVIDIA H200"));
        assert_eq!(
            name("NVIDIA GeForce RTX 4090").as_deref(),
            Some("NVIDIA GeForce RTX 4090")
        );
        assert_eq!(name("Some Other Card 1234"), None);
    }

    fn run(
        device: &str,
        test: &str,
        metric: &str,
        unit: &str,
        value: f64,
        precision: &str,
    ) -> SuiteResult {
        let mut r = SuiteResult::failed_run("bench", "standard", vec![], "x", String::new(), "");
        r.tests.clear();
        r.device.kind = if device == "cpu" { "cpu" } else { "cuda" }.into();
        r.device.name = Some(device.into());
        let mut params = serde_json::Map::new();
        params.insert("precision".into(), precision.into());
        r.tests.push(TestResult {
            name: test.into(),
            status: TestStatus::Pass,
            reason: None,
            fix: None,
            metrics: vec![Metric {
                name: metric.into(),
                value: Some(value),
                unit: unit.into(),
            }],
            params,
            duration_s: 1.0,
        });
        r
    }

    #[test]
    fn gemm_is_a_share_of_the_datasheet_peak() {
        let m = m();
        let mut r = run(
            "NVIDIA H200",
            "gemm",
            "gemm_bf16_tflops",
            "TFLOP/s",
            700.0,
            "bf16",
        );
        compare(&mut r, &m, &[], 0.1);
        let c = &r.comparisons[0];
        let peak = c.peak.expect("H200 has a bf16 peak");
        assert_eq!(c.peak_pct, Some((700.0 / peak * 1000.0_f64).round() / 10.0));
        assert!(!c.regression);
    }

    #[test]
    fn a_team_baseline_flags_a_regression_past_the_threshold() {
        let m = m();
        let mut r = run("cpu", "resnet50", "throughput", "images/s", 8.0, "fp32");
        let saved = baselines_from(&r, "run 1");
        assert_eq!(saved.baselines.len(), 1);
        let mut base = saved.baselines.clone();
        base[0].value = 10.0;
        compare(&mut r, &m, &base, 0.1);
        assert_eq!(r.comparisons[0].baseline_pct, Some(80.0));
        assert!(r.comparisons[0].regression);
        base[0].value = 8.5;
        compare(&mut r, &m, &base, 0.1);
        assert!(!r.comparisons[0].regression);
        // Another precision is another figure: no comparison.
        base[0].params.insert("precision".into(), "amp".into());
        compare(&mut r, &m, &base, 0.1);
        assert!(r.comparisons.is_empty());
    }
}
