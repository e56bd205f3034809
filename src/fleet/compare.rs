//! `rocmenv report compare`: bench results side by side, a row per model, batch, precision and mode, each later
//! result against the first (throughput difference in percent, which is faster, and whether the difference is
//! beyond the two runs' own spread). Pure: documents in, a [`Comparison`] out; `report::compare` writes it.

use super::environment::{image_of, text_at};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// What one bench result ran on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunInfo {
    /// `A`, `B`, … in the order given.
    pub label: String,
    /// The file.
    pub file: String,
    /// The node it names (else the file's name).
    pub node: String,
    /// The device kind (`rocm`, `cuda`, `cpu`).
    pub vendor: String,
    /// The device's name, with the count when several.
    pub device: String,
    /// The image (digest, id or reference), or the software when no image is named (`torch 2.5.1, HIP 6.2`).
    pub image: String,
}

/// One result's figures for one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// The report's label.
    pub label: String,
    /// Throughput, and its unit.
    pub throughput: Option<f64>,
    /// `images/s`, `TFLOP/s`, `GB/s`, …
    pub unit: String,
    /// Median latency of one iteration, ms.
    pub p50_ms: Option<f64>,
    /// 99th percentile latency, ms.
    pub p99_ms: Option<f64>,
    /// Peak memory (the device's, or the process's RSS on a CPU), bytes.
    pub peak_memory_bytes: Option<f64>,
    /// Coefficient of variation of the iteration times, percent.
    pub cv_pct: Option<f64>,
    /// Throughput against the first result, percent (`+25.0`: a quarter more); none for the first.
    pub delta_pct: Option<f64>,
    /// The faster of this and the first, by label; none for the first or when either lacks a throughput.
    pub faster: Option<String>,
    /// True when |delta| exceeds the sum of both runs' cv; none when a cv is missing.
    pub beyond_spread: Option<bool>,
    /// True when it is more than the threshold slower than the first (or, with a threshold, did not run what the
    /// first did).
    pub regressed: bool,
}

/// One model at one batch, precision and mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    /// The bench test (`resnet50`, `gemm`, …).
    pub model: String,
    /// Its batch size, or `-`.
    pub batch: String,
    /// Its precision, or `-`.
    pub precision: String,
    /// `train`, `infer`, or `-`.
    pub mode: String,
    /// A cell per result, in the order given; `None` where that result did not measure the row.
    pub results: Vec<Option<Figures>>,
}

/// The comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The results, in the order given.
    pub runs: Vec<RunInfo>,
    /// The rows, by model, batch, precision, mode.
    pub rows: Vec<CompareRow>,
    /// `--fail-on-regression`: the largest slowdown (percent) that passes.
    pub threshold_pct: Option<f64>,
    /// Cells that regressed beyond it.
    pub regressions: usize,
}

/// Why a document cannot be compared.
pub type Why = String;

/// The label of the `i`th result: `A`, `B`, … (`R27` past Z).
pub fn label(i: usize) -> String {
    let letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    match i {
        0..=25 => (letters[i] as char).to_string(),
        _ => format!("R{}", i + 1),
    }
}

fn param(p: &Value, key: &str) -> String {
    match &p[key] {
        Value::String(s) if !s.is_empty() => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => "-".into(),
    }
}

/// What the document ran on.
fn run_info(i: usize, file: &str, node: &str, doc: &Value) -> RunInfo {
    let dev = &doc["device"];
    let name = text_at(dev, &["name"]).unwrap_or("unknown device");
    let count = dev["count"].as_u64().unwrap_or(0);
    let v = &doc["versions"];
    let software: Vec<String> = [("torch", "torch"), ("HIP", "hip"), ("CUDA", "cuda")]
        .iter()
        .filter_map(|(l, k)| text_at(v, &[k]).map(|x| format!("{l} {x}")))
        .collect();
    RunInfo {
        label: label(i),
        file: file.to_string(),
        node: node.to_string(),
        vendor: text_at(dev, &["kind"]).unwrap_or("?").to_string(),
        device: if count > 1 {
            format!("{count} × {name}")
        } else {
            name.to_string()
        },
        image: image_of(doc)
            .map(str::to_string)
            .unwrap_or_else(|| match software.is_empty() {
                true => "-".into(),
                false => software.join(", "),
            }),
    }
}

fn metric(t: &Value, names: &[&str]) -> Option<(f64, String)> {
    t["metrics"].as_array()?.iter().find_map(|m| {
        let n = m["name"].as_str()?;
        names.contains(&n).then(|| {
            Some((
                m["value"].as_f64()?,
                m["unit"].as_str().unwrap_or("").to_string(),
            ))
        })?
    })
}

/// The figures of one passing test (bench_metrics of smoke-tests/rocmenv_smoke/perf.py names them).
fn figures(label: &str, t: &Value) -> Figures {
    let thr = metric(t, &["throughput"]);
    Figures {
        label: label.to_string(),
        throughput: thr.as_ref().map(|x| x.0),
        unit: thr.map(|x| x.1).unwrap_or_default(),
        p50_ms: metric(t, &["median_ms", "latency_p50_ms"]).map(|x| x.0),
        p99_ms: metric(t, &["p99_ms", "latency_p99_ms"]).map(|x| x.0),
        peak_memory_bytes: metric(t, &["peak_memory_bytes", "peak_rss_bytes"]).map(|x| x.0),
        cv_pct: metric(t, &["cv_pct"]).map(|x| x.0),
        delta_pct: None,
        faster: None,
        beyond_spread: None,
        regressed: false,
    }
}

type Key = (String, String, String, String);

/// The rows of one bench document: its passing tests by (model, batch, precision, mode).
fn rows_of(label: &str, doc: &Value) -> Result<Vec<(Key, Figures)>, Why> {
    match doc.get("kind").and_then(Value::as_str) {
        Some("bench") => {}
        Some(k) => {
            return Err(format!(
                "is a {k} report; compare reads bench results (`rocmenv bench --json`)"
            ))
        }
        None => return Err("is not a bench result (`rocmenv bench --json`)".into()),
    }
    let tests = doc["tests"]
        .as_array()
        .ok_or("is a bench result without `tests`")?;
    Ok(tests
        .iter()
        .filter(|t| t["status"].as_str() == Some("pass"))
        .filter_map(|t| {
            let p = &t["params"];
            let key = (
                t["name"].as_str()?.to_string(),
                param(p, "batch"),
                param(p, "precision"),
                param(p, "mode"),
            );
            Some((key, figures(label, t)))
        })
        .collect())
}

/// Fills in each later cell against the first: the difference, the faster, the spread, the regression.
fn judge(first: &Option<Figures>, cell: &mut Option<Figures>, threshold: Option<f64>) -> bool {
    let Some(base) = first else { return false };
    let Some(c) = cell else {
        // A row the first result measured and this one did not: an upgrade that broke a model.
        return threshold.is_some();
    };
    if let (Some(a), Some(b)) = (base.throughput, c.throughput) {
        if a > 0.0 {
            // Rounded to a thousandth of a percent, so 0.9× reads -10, not -9.999999999999998.
            let d = ((b / a - 1.0) * 100.0 * 1000.0).round() / 1000.0;
            c.delta_pct = Some(d);
            c.faster = Some(if b >= a {
                c.label.clone()
            } else {
                base.label.clone()
            });
            c.beyond_spread = match (base.cv_pct, c.cv_pct) {
                (Some(x), Some(y)) => Some(d.abs() > x + y),
                _ => None,
            };
            c.regressed = threshold.is_some_and(|t| d < -t);
        }
    }
    c.regressed
}

/// Compares `docs` (file, node, document), each later one against the first.
pub fn compare(
    docs: &[(String, String, Value)],
    threshold_pct: Option<f64>,
) -> Result<Comparison, (usize, Why)> {
    let mut runs = Vec::new();
    let mut table: BTreeMap<Key, Vec<Option<Figures>>> = BTreeMap::new();
    for (i, (file, node, doc)) in docs.iter().enumerate() {
        let info = run_info(i, file, node, doc);
        for (key, f) in rows_of(&info.label, doc).map_err(|w| (i, w))? {
            let cells = table.entry(key).or_insert_with(|| vec![None; docs.len()]);
            // The same test twice in one result (a test per GPU): the first stands.
            if cells[i].is_none() {
                cells[i] = Some(f);
            }
        }
        runs.push(info);
    }
    let mut regressions = 0;
    let rows = table
        .into_iter()
        .map(|((model, batch, precision, mode), mut results)| {
            let first = results[0].clone();
            for cell in results.iter_mut().skip(1) {
                regressions += usize::from(judge(&first, cell, threshold_pct));
            }
            CompareRow {
                model,
                batch,
                precision,
                mode,
                results,
            }
        })
        .collect();
    Ok(Comparison {
        runs,
        rows,
        threshold_pct,
        regressions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(thr: f64, cv: f64) -> Value {
        json!({"schema_version": 2, "kind": "bench", "level": "standard",
               "device": {"kind": "rocm", "name": "AMD Instinct MI300X", "count": 1},
               "tests": [{"name": "resnet50", "status": "pass", "params": {"batch": 64, "precision": "amp", "mode": "train"},
                          "metrics": [{"name": "throughput", "value": thr, "unit": "images/s"},
                                      {"name": "cv_pct", "value": cv, "unit": "%"}]}]})
    }

    #[test]
    fn a_slower_second_result_regresses_beyond_its_spread() {
        let docs = vec![
            ("a.json".to_string(), "n1".to_string(), doc(1000.0, 1.0)),
            ("b.json".to_string(), "n1".to_string(), doc(900.0, 2.0)),
        ];
        let c = compare(&docs, Some(5.0)).unwrap();
        let b = c.rows[0].results[1].as_ref().unwrap();
        assert!((b.delta_pct.unwrap() + 10.0).abs() < 1e-9);
        assert_eq!(b.faster.as_deref(), Some("A"));
        assert_eq!(b.beyond_spread, Some(true));
        assert!(b.regressed);
        assert_eq!(c.regressions, 1);
        assert_eq!(compare(&docs, Some(15.0)).unwrap().regressions, 0);
    }
}
