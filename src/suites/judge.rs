//! Measured figures beside the datasheet peak (`matrices/gpus.yaml`) and a baseline (a team's own file): what
//! share of the peak a GEMM or a copy reached, and whether a benchmark regressed.

use super::placement::HostGpu;
use super::result::{Better, Comparison, Metric, SuiteResult, TestResult};
use crate::matrix::{GpuModel, Matrices};
use crate::status::Status;
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
    /// `lower` for a latency (a figure above it regresses); absent means higher is better.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub better: Option<Better>,
}

impl Baseline {
    /// True when `other` is a figure for the same thing (device, test, metric, unit and parameters).
    pub fn same_key(&self, other: &Baseline) -> bool {
        self.device == other.device
            && self.test == other.test
            && self.metric == other.metric
            && self.unit == other.unit
            && self.params == other.params
    }
}

impl Baselines {
    /// Adds `new` to these: a figure with the same key replaces the old one, the others are kept.
    pub fn merge(&mut self, new: Baselines) {
        for b in new.baselines {
            match self.baselines.iter_mut().find(|o| o.same_key(&b)) {
                Some(old) => *old = b,
                None => self.baselines.push(b),
            }
        }
    }
}

/// Which way a metric improves: its own `better`, else by unit (throughputs higher, times lower); `None` for
/// figures that are not judged against baselines (counts, speed-ups, bytes).
fn direction(m: &Metric) -> Option<Better> {
    if let Some(b) = m.better {
        return Some(b);
    }
    if matches!(
        m.unit.as_str(),
        "TFLOP/s" | "GB/s" | "images/s" | "samples/s" | "qps" | "QPS"
    ) {
        Some(Better::Higher)
    } else if m.lower_is_better() {
        Some(Better::Lower)
    } else {
        None
    }
}

/// The gpus.yaml model of a device: by its PCI device id (`0x74a1`) when the host showed one, else the model whose
/// name is exactly the device's name (ignoring case and spacing), else the model whose name shares the most words
/// with it among those whose first word with a digit (`7900`, `h100`, `mi300x`) the device name has. `None` when
/// two models tie.
pub fn model_for<'m>(
    m: &'m Matrices,
    pci_id: Option<&str>,
    device_name: &str,
) -> Option<&'m GpuModel> {
    if let Some(id) = pci_id {
        let id = id.to_ascii_lowercase();
        if let Some(g) = m.gpus.gpus.iter().find(|g| g.pci_ids.contains(&id)) {
            return Some(g);
        }
    }
    let words = |s: &str| -> Vec<String> {
        s.to_ascii_lowercase()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let have = words(device_name);
    if let Some(g) = m.gpus.gpus.iter().find(|g| words(&g.name) == have) {
        return Some(g);
    }
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
/// The figure is the package's divided by `divisor` (GCDs, partitions).
fn peak_for(
    model: &GpuModel,
    test: &str,
    metric: &str,
    precision: Option<&str>,
    divisor: u32,
) -> Option<f64> {
    let p = model.peaks.as_ref()?;
    let div = |v: Option<f64>| v.map(|v| v / f64::from(divisor.max(1)));
    let by_precision = |d: &str| match d {
        "fp32" => p.fp32_tflops,
        "fp16" => p.fp16_tflops,
        "bf16" => p.bf16_tflops,
        _ => None,
    };
    match (test, metric) {
        ("gemm", m) if m.starts_with("gemm_") && m.ends_with("_tflops") => {
            div(by_precision(&m["gemm_".len()..m.len() - "_tflops".len()]))
        }
        ("gemm", "throughput") => div(by_precision(precision?)),
        ("bandwidth", "bandwidth_device_copy_gbs") | ("bandwidth", "throughput") => {
            div(p.mem_bw_gbs)
        }
        _ => None,
    }
}

/// How many of the run's devices sit at the PCI address of torch's device `d` (a partitioned GPU shows one device per
/// partition at one address; torch does not report the PCI function); 1 when the address is unknown.
fn sharing(infos: &[super::result::DeviceInfo], d: Option<u32>) -> u32 {
    let addr = super::result::DeviceInfo::pci;
    let Some(mine) = d
        .and_then(|d| infos.iter().find(|i| i.index == Some(d)))
        .and_then(addr)
    else {
        return 1;
    };
    let n = infos.iter().filter(|i| addr(i) == Some(mine)).count();
    u32::try_from(n).unwrap_or(1).max(1)
}

/// The device name a test's figures are filed under: the name torch gave its device, else the run's device, or
/// `cpu` for CPU runs.
fn device_name(r: &SuiteResult, t: &TestResult) -> String {
    if r.device.kind == "cpu" {
        return "cpu".to_string();
    }
    let own = t.device.and_then(|d| {
        r.device
            .infos()
            .into_iter()
            .find(|i| i.index == Some(d))
            .and_then(|i| i.name)
    });
    own.or_else(|| r.device.name.clone()).unwrap_or_default()
}

/// Adds a comparison for every measured figure that has a peak or a matching baseline; `threshold` is the share
/// (0.10 = 10 %) a figure may fall below (a latency rise above) its baseline before it counts as a regression.
/// `host` is the host's GPUs, whose PCI ids find the datasheet. Returns, per baseline, whether any figure matched it.
pub fn compare(
    r: &mut SuiteResult,
    m: &Matrices,
    baselines: &[Baseline],
    threshold: f64,
    host: &[HostGpu],
) -> Vec<bool> {
    let on_gpu = r.device.kind != "cpu";
    let infos = r.device.infos();
    let mut matched = vec![false; baselines.len()];
    let mut out = Vec::new();
    for t in r.tests.iter().filter(|t| t.status == Status::Pass) {
        let device = device_name(r, t);
        let pci_id = t
            .gpu
            .and_then(|g| host.iter().find(|h| h.index == g))
            .map(|h| h.device_id.as_str());
        let model = on_gpu.then(|| model_for(m, pci_id, &device)).flatten();
        let split = model
            .and_then(|g| g.peaks.as_ref())
            .and_then(|p| p.split(sharing(&infos, t.device)));
        let precision = t.params.get("precision").and_then(|v| v.as_str());
        for metric in &t.metrics {
            let Some(measured) = metric.value else {
                continue;
            };
            let better = direction(metric);
            let peak = match (model, &split) {
                (Some(g), Some((div, _))) => peak_for(g, &t.name, &metric.name, precision, *div),
                _ => None,
            };
            let base = baselines.iter().position(|b| {
                b.device == device
                    && b.test == t.name
                    && b.metric == metric.name
                    && b.unit == metric.unit
                    && b.params.iter().all(|(k, v)| t.params.get(k) == Some(v))
            });
            if let Some(i) = base {
                matched[i] = true;
            }
            let base = base.map(|i| &baselines[i]);
            if peak.is_none() && base.is_none() {
                continue;
            }
            let pct = |of: f64| (of > 0.0).then(|| (measured / of * 1000.0).round() / 10.0);
            let baseline_pct = base.and_then(|b| pct(b.value));
            let lower = better == Some(Better::Lower)
                || base.is_some_and(|b| b.better == Some(Better::Lower));
            let regression = match (better, baseline_pct) {
                (None, _) | (_, None) => false,
                (Some(_), Some(p)) if lower => p > (1.0 + threshold) * 100.0,
                (Some(_), Some(p)) => p < (1.0 - threshold) * 100.0,
            };
            out.push(Comparison {
                test: t.name.clone(),
                metric: metric.name.clone(),
                unit: metric.unit.clone(),
                measured,
                peak,
                peak_pct: peak.and_then(pct),
                peak_basis: peak.and(split.as_ref()).and_then(|(_, why)| why.clone()),
                baseline: base.map(|b| b.value),
                baseline_source: base.map(|b| b.source.clone()),
                baseline_pct,
                regression,
                lower_is_better: lower,
                gpu: t.gpu,
                device: t.device,
            });
        }
    }
    r.comparisons = out;
    matched
}

/// A baselines file from this run's judged figures (throughputs, and latencies as lower-is-better) of passing tests,
/// for `--save-baseline`. The entries of several devices of one model become one figure: their median.
pub fn baselines_from(r: &SuiteResult, source: &str) -> Baselines {
    let keep = [
        "batch",
        "precision",
        "mode",
        "size",
        "size_mb",
        "image_size",
    ];
    let mut figures: Vec<(Baseline, Vec<f64>)> = Vec::new();
    for t in r.tests.iter().filter(|t| t.status == Status::Pass) {
        let params: serde_json::Map<_, _> = t
            .params
            .iter()
            .filter(|(k, _)| keep.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for m in &t.metrics {
            let (Some(better), Some(value)) = (direction(m), m.value) else {
                continue;
            };
            let b = Baseline {
                device: device_name(r, t),
                test: t.name.clone(),
                metric: m.name.clone(),
                params: params.clone(),
                value,
                unit: m.unit.clone(),
                source: source.to_string(),
                better: (better == Better::Lower).then_some(Better::Lower),
            };
            match figures.iter_mut().find(|(o, _)| o.same_key(&b)) {
                Some((_, values)) => values.push(value),
                None => figures.push((b, vec![value])),
            }
        }
    }
    let baselines = figures
        .into_iter()
        .map(|(mut b, mut values)| {
            values.sort_by(f64::total_cmp);
            b.value = values[values.len() / 2];
            b
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
        let name = |s| model_for(&m, None, s).map(|g| g.name.clone());
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

    /// Issue 21: every GPU in gpus.yaml with peaks is found, by its PCI id and by its exact name (MI300X, MI325X and
    /// PRO W7900 tied with their VF or Dual Slot entries before).
    #[test]
    fn every_gpu_with_peaks_is_found_by_pci_id_and_by_name() {
        let m = m();
        let with_peaks: Vec<_> = m.gpus.gpus.iter().filter(|g| g.peaks.is_some()).collect();
        assert!(with_peaks.len() > 10, "{}", with_peaks.len());
        for g in with_peaks {
            for id in &g.pci_ids {
                let found = model_for(&m, Some(id), "a name no model has");
                assert_eq!(found.map(|f| &f.name), Some(&g.name), "by PCI id {id}");
            }
            let found = model_for(&m, None, &g.name);
            assert_eq!(found.map(|f| &f.name), Some(&g.name), "by name");
        }
        // The PCI id wins over a name that says otherwise.
        let by_id = model_for(&m, Some("0x74A1"), "AMD Radeon RX 7900 XTX");
        assert_eq!(by_id.map(|g| g.name.as_str()), Some("AMD Instinct MI300X"));
    }

    fn on_devices(name: &str, pci: &[(u32, u32)], gemm: f64) -> SuiteResult {
        let mut r = run(name, "gemm", "gemm_bf16_tflops", "TFLOP/s", gemm, "bf16");
        r.device.kind = "rocm".into();
        let t = r.tests.remove(0);
        for (i, (bus, _)) in pci.iter().enumerate() {
            r.device
                .devices
                .push(serde_json::json!({"index": i, "name": name,
                "pci_bus_id": bus, "pci_domain_id": 0, "pci_device_id": 0, "uuid": null}));
            let mut t = t.clone();
            t.device = Some(i as u32);
            t.gpu = Some(pci[i].1 as usize);
            r.tests.push(t);
        }
        r
    }

    /// Issue 21: torch sees one GCD of an MI250X; a healthy GCD reaching 90% of its own peak is 45% of the package.
    #[test]
    fn an_mi250x_gcd_is_judged_against_half_the_package() {
        let m = m();
        let mi250x = m
            .gpus
            .gpus
            .iter()
            .find(|g| g.name == "AMD Instinct MI250X")
            .unwrap();
        let package = mi250x.peaks.as_ref().unwrap().bf16_tflops.unwrap();
        let mut r = on_devices(
            "AMD Instinct MI250X",
            &[(0xc1, 0), (0xc6, 1)],
            package / 2.0 * 0.9,
        );
        let host: Vec<HostGpu> = ["0000:c1:00.0", "0000:c6:00.0"]
            .iter()
            .enumerate()
            .map(|(i, a)| HostGpu {
                index: i,
                pci_address: a.to_string(),
                device_id: "0x7408".into(),
            })
            .collect();
        compare(&mut r, &m, &[], 0.1, &host);
        assert_eq!(r.comparisons.len(), 2);
        for c in &r.comparisons {
            assert_eq!(c.peak, Some(package / 2.0));
            assert_eq!(c.peak_pct, Some(90.0));
            assert_eq!(c.peak_basis.as_deref(), Some("per GCD: package / 2"));
        }
        assert_eq!(
            (r.comparisons[0].gpu, r.comparisons[1].gpu),
            (Some(0), Some(1))
        );
    }

    /// Issue 21: an MI300X in CPX shows 8 devices at one PCI address; each is judged against an eighth of the GPU.
    #[test]
    fn a_cpx_partition_is_judged_against_its_share() {
        let m = m();
        let mi300x = m
            .gpus
            .gpus
            .iter()
            .find(|g| g.name == "AMD Instinct MI300X")
            .unwrap();
        let whole = mi300x.peaks.as_ref().unwrap().bf16_tflops.unwrap();
        let eight: Vec<(u32, u32)> = (0..8).map(|i| (0x0c, i)).collect();
        let mut r = on_devices("AMD Instinct MI300X", &eight, whole / 8.0 / 2.0);
        compare(&mut r, &m, &[], 0.1, &[]);
        assert_eq!(r.comparisons.len(), 8);
        assert_eq!(r.comparisons[3].peak, Some(whole / 8.0));
        assert_eq!(r.comparisons[3].peak_pct, Some(50.0));
        assert!(r.comparisons[3]
            .peak_basis
            .as_deref()
            .unwrap()
            .starts_with("CPX partition"));
        // Three devices at one address match no mode: no peak rather than a wrong one.
        let mut r = on_devices("AMD Instinct MI300X", &eight[..3], 100.0);
        compare(&mut r, &m, &[], 0.1, &[]);
        assert!(r.comparisons.is_empty(), "{:?}", r.comparisons);
    }

    /// Issue 21: a latency is lower-is-better: saved as such, and a rise past the threshold is a regression.
    #[test]
    fn latencies_are_saved_and_judged_as_lower_is_better() {
        let m = m();
        let mut r = run("cpu", "resnet50", "median_ms", "ms", 12.0, "fp32");
        r.tests[0].metrics[0].better = Some(Better::Lower);
        let saved = baselines_from(&r, "run 1");
        assert_eq!(saved.baselines[0].better, Some(Better::Lower));
        let text = serde_yaml_ng::to_string(&saved).unwrap();
        assert!(text.contains("better: lower"), "{text}");
        let mut base = saved.baselines.clone();
        base[0].value = 10.0;
        let matched = compare(&mut r, &m, &base, 0.1, &[]);
        assert_eq!(matched, [true]);
        assert!(r.comparisons[0].regression && r.comparisons[0].lower_is_better);
        base[0].value = 11.5;
        compare(&mut r, &m, &base, 0.1, &[]);
        assert!(!r.comparisons[0].regression);
        // Faster than the baseline is never a regression.
        base[0].value = 20.0;
        compare(&mut r, &m, &base, 0.1, &[]);
        assert!(!r.comparisons[0].regression);
    }

    /// Issue 25: adding to a baselines file replaces the figure with the same key and keeps the others.
    #[test]
    fn merging_baselines_keeps_other_entries() {
        let r = run("cpu", "gemm", "throughput", "TFLOP/s", 1.0, "fp32");
        let mut file = baselines_from(
            &run("cpu", "resnet50", "throughput", "images/s", 8.0, "fp32"),
            "a",
        );
        file.merge(baselines_from(&r, "b"));
        assert_eq!(file.baselines.len(), 2);
        let mut again = baselines_from(&r, "c");
        again.baselines[0].value = 2.0;
        file.merge(again);
        assert_eq!(file.baselines.len(), 2);
        assert_eq!(file.baselines[0].test, "resnet50");
        assert_eq!(
            (file.baselines[1].value, file.baselines[1].source.as_str()),
            (2.0, "c")
        );
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
            status: Status::Pass,
            reason: None,
            fix: None,
            metrics: vec![Metric {
                name: metric.into(),
                value: Some(value),
                unit: unit.into(),
                better: None,
            }],
            params,
            duration_s: 1.0,
            device: None,
            gpu: None,
            checked: None,
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
        compare(&mut r, &m, &[], 0.1, &[]);
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
        compare(&mut r, &m, &base, 0.1, &[]);
        assert_eq!(r.comparisons[0].baseline_pct, Some(80.0));
        assert!(r.comparisons[0].regression);
        base[0].value = 8.5;
        compare(&mut r, &m, &base, 0.1, &[]);
        assert!(!r.comparisons[0].regression);
        // Another precision is another figure: no comparison.
        base[0].params.insert("precision".into(), "amp".into());
        compare(&mut r, &m, &base, 0.1, &[]);
        assert!(r.comparisons.is_empty());
    }
}
