//! What the HTML page shows, from the report documents: the node × check grid (the merge's table), each node's
//! environment, a bar chart per benchmark figure of each GPU, and a throughput table per GPU kind. Pure: documents
//! in, a serialisable page out; the template (`page.html`) lays it out.

use super::chart::{self, Chart};
use crate::fleet::{self, Merged, NodeReport};
use crate::status::Status;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// One report file, read: its JSON and the node reports merge makes of it.
#[derive(Debug, Clone)]
pub struct Source {
    /// The file's path, as given.
    pub file: String,
    /// Its JSON document.
    pub doc: Value,
    /// Its node reports (one, or one per node of a merge).
    pub reports: Vec<NodeReport>,
}

/// A grid cell: one check on one node.
#[derive(Debug, Clone, Serialize)]
pub struct CellView {
    /// `pass`, `warn`, `fail`, `skip`, or `none` where the node did not report the check.
    pub status: &'static str,
    /// The cell's line.
    pub summary: String,
    /// Its fix.
    pub fix: Option<String>,
}

/// A grid row.
#[derive(Debug, Clone, Serialize)]
pub struct RowView {
    /// The check's id or the test's name.
    pub id: String,
    /// A cell per node, in the page's node order.
    pub cells: Vec<CellView>,
}

/// The rows of one group (`doctor`, `smoke`, `validate cpu`, …).
#[derive(Debug, Clone, Serialize)]
pub struct GroupView {
    /// The group.
    pub name: String,
    /// Its rows.
    pub rows: Vec<RowView>,
}

/// A node's column head and counts.
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    /// Its name.
    pub name: String,
    /// The kinds of reports that described it.
    pub kinds: String,
    /// Its cells counted.
    pub summary: fleet::Counts,
}

/// What a node runs: a label and its value, in a fixed order.
#[derive(Debug, Clone, Serialize)]
pub struct EnvView {
    /// The node.
    pub node: String,
    /// (what, value) pairs.
    pub items: Vec<(String, String)>,
}

/// The throughput table: a row per (model, batch), a column per GPU kind.
#[derive(Debug, Clone, Serialize)]
pub struct SeedTable {
    /// The GPU kinds (device names).
    pub kinds: Vec<String>,
    /// The rows.
    pub rows: Vec<SeedRow>,
}

/// One model at one batch size.
#[derive(Debug, Clone, Serialize)]
pub struct SeedRow {
    /// The benchmark.
    pub model: String,
    /// Its batch size and precision (`64, amp`).
    pub batch: String,
    /// The figure on each kind (`1234.5 images/s`), empty where that kind did not run it.
    pub values: Vec<String>,
}

/// The whole page.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    /// The title.
    pub title: String,
    /// This rocmenv's version.
    pub version: String,
    /// The files it was made from.
    pub files: Vec<String>,
    /// The nodes, in natural order.
    pub nodes: Vec<NodeView>,
    /// The grid.
    pub groups: Vec<GroupView>,
    /// Every cell counted.
    pub summary: fleet::Counts,
    /// True when a cell failed.
    pub failed: bool,
    /// Each node's environment.
    pub envs: Vec<EnvView>,
    /// The benchmark charts.
    pub charts: Vec<Chart>,
    /// The throughput table, when several GPU kinds ran the same benchmarks.
    pub seed: Option<SeedTable>,
}

fn s<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_str().filter(|t| !t.is_empty())
}

fn kind(doc: &Value) -> &str {
    match doc.get("kind").and_then(Value::as_str) {
        Some(k) => k,
        None => "doctor",
    }
}

/// Adds `(label, value)` unless the label is there already or the value is missing.
fn add(items: &mut Vec<(String, String)>, label: &str, value: Option<&str>) {
    if let Some(v) = value {
        if !items.iter().any(|(l, _)| l == label) {
            items.push((label.to_string(), v.to_string()));
        }
    }
}

/// What a document says about its node's software and devices.
fn environment(doc: &Value, items: &mut Vec<(String, String)>) {
    match kind(doc) {
        "doctor" => {
            let h = &doc["host"];
            add(items, "OS", s(h, &["os", "pretty_name"]));
            add(items, "kernel", s(h, &["kernel", "release"]));
            add(items, "ROCm", s(h, &["rocm", "version"]));
            add(items, "CUDA", s(h, &["cuda", "version"]));
            add(items, "amdgpu driver", s(h, &["amdgpu_driver", "version"]));
            add(items, "NVIDIA driver", s(h, &["nvidia_driver", "version"]));
            let gpus: Vec<String> = h["gpus"]
                .as_array()
                .map(|g| {
                    g.iter()
                        .map(|g| {
                            let name = s(g, &["name"]).unwrap_or("unknown GPU");
                            match s(g, &["gfx"]).or(s(g, &["compute_capability"])) {
                                Some(arch) => format!("{name} ({arch})"),
                                None => name.to_string(),
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            if !gpus.is_empty() {
                add(items, "GPUs", Some(&count_same(&gpus)));
            }
        }
        "smoke" | "bench" => {
            let v = &doc["versions"];
            add(items, "torch", s(v, &["torch"]));
            add(items, "HIP (torch)", s(v, &["hip"]));
            add(items, "CUDA (torch)", s(v, &["cuda"]));
            add(items, "Python", s(v, &["python"]));
            let dev = &doc["device"];
            let name = s(dev, &["name"]).map(str::to_string);
            let count = dev["count"].as_u64().unwrap_or(0);
            add(
                items,
                "device",
                name.map(|n| {
                    if count > 1 {
                        format!("{count} × {n}")
                    } else {
                        n
                    }
                })
                .as_deref(),
            );
            add(items, "image", image_of(doc));
        }
        "validate" => {
            for st in doc["stacks"].as_array().into_iter().flatten() {
                if let (Some(name), Some(image)) = (s(st, &["name"]), s(st, &["image"])) {
                    add(items, &format!("image ({name})"), Some(image));
                }
            }
        }
        _ => {}
    }
}

/// The image a suite ran in, by digest when the document has one.
fn image_of(doc: &Value) -> Option<&str> {
    s(doc, &["image", "digest"])
        .or(s(doc, &["image", "id"]))
        .or(s(doc, &["image", "reference"]))
        .or(s(doc, &["image"]))
}

/// `["A", "A", "B"]` → `2 × A, B`.
fn count_same(names: &[String]) -> String {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for n in names {
        match seen.iter_mut().find(|(s, _)| s == n) {
            Some((_, c)) => *c += 1,
            None => seen.push((n.clone(), 1)),
        }
    }
    seen.iter()
        .map(|(n, c)| {
            if *c > 1 {
                format!("{c} × {n}")
            } else {
                n.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The GPU a suite test ran on: by the test's device index (schema_version 2), else the document's device.
fn gpu_of(doc: &Value, test: &Value) -> String {
    let dev = &doc["device"];
    if let Some(i) = test.get("device").and_then(Value::as_u64) {
        let named = dev["devices"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["index"].as_u64() == Some(i)))
            .and_then(|d| s(d, &["name"]));
        if let Some(n) = named {
            return format!("GPU {i}: {n}");
        }
    }
    let name = s(dev, &["name"]).unwrap_or("unknown device");
    match s(dev, &["kind"]) {
        Some("cpu") => format!("CPU: {name}"),
        _ => name.to_string(),
    }
}

fn find_test<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["tests"]
        .as_array()?
        .iter()
        .find(|t| t["name"].as_str() == Some(name))
}

/// The charts of one suite document: its comparisons (measured, baseline, peak), or, for a bench run without any,
/// each higher-is-better figure of its passing tests on its own.
fn charts_of(node: &str, doc: &Value, out: &mut Vec<Chart>) {
    let comparisons = doc["comparisons"].as_array().cloned().unwrap_or_default();
    if !comparisons.is_empty() {
        for c in &comparisons {
            let (Some(test), Some(metric), Some(measured)) = (
                c["test"].as_str(),
                c["metric"].as_str(),
                c["measured"].as_f64(),
            ) else {
                continue;
            };
            let gpu = find_test(doc, test)
                .map(|t| gpu_of(doc, t))
                .unwrap_or_else(|| gpu_of(doc, &Value::Null));
            let mut ch = chart::Chart::new(
                node,
                &gpu,
                test,
                metric,
                c["unit"].as_str().unwrap_or(""),
                measured,
                c["baseline"].as_f64(),
                c["baseline_source"].as_str(),
                c["peak"].as_f64(),
            );
            // rocmenv's own verdict, which knows a latency regresses upwards.
            if let Some(r) = c["regression"].as_bool() {
                ch.below_baseline = r;
            }
            out.push(ch);
        }
        return;
    }
    if kind(doc) != "bench" {
        return;
    }
    for t in doc["tests"].as_array().into_iter().flatten() {
        if t["status"].as_str() != Some("pass") {
            continue;
        }
        let gpu = gpu_of(doc, t);
        for m in t["metrics"].as_array().into_iter().flatten() {
            let (Some(metric), Some(unit), Some(value)) =
                (m["name"].as_str(), m["unit"].as_str(), m["value"].as_f64())
            else {
                continue;
            };
            if chart::higher_is_better(unit, m["better"].as_str()) {
                out.push(chart::Chart::new(
                    node,
                    &gpu,
                    t["name"].as_str().unwrap_or(""),
                    metric,
                    unit,
                    value,
                    None,
                    None,
                    None,
                ));
            }
        }
    }
}

/// Throughput figures of bench runs: (model, batch) → GPU kind → figure.
fn seed_table(sources: &[(&str, &Value)]) -> Option<SeedTable> {
    let mut kinds: Vec<String> = Vec::new();
    let mut rows: BTreeMap<(String, String), BTreeMap<String, String>> = BTreeMap::new();
    for (_, doc) in sources {
        if kind(doc) != "bench" {
            continue;
        }
        for t in doc["tests"].as_array().into_iter().flatten() {
            if t["status"].as_str() != Some("pass") {
                continue;
            }
            let Some(m) = t["metrics"].as_array().into_iter().flatten().find(|m| {
                matches!(
                    m["unit"].as_str(),
                    Some("images/s" | "samples/s" | "tokens/s")
                )
            }) else {
                continue;
            };
            let gpu = gpu_of(doc, t);
            let p = &t["params"];
            let batch = match (&p["batch"], p["precision"].as_str()) {
                (Value::Number(b), Some(prec)) => format!("{b}, {prec}"),
                (Value::Number(b), None) => b.to_string(),
                _ => String::from("-"),
            };
            let value = format!(
                "{} {}",
                chart::figure(m["value"].as_f64().unwrap_or(0.0)),
                m["unit"].as_str().unwrap_or("")
            );
            if !kinds.contains(&gpu) {
                kinds.push(gpu.clone());
            }
            rows.entry((t["name"].as_str().unwrap_or("").to_string(), batch))
                .or_default()
                .insert(gpu, value);
        }
    }
    if kinds.len() < 2 {
        return None;
    }
    kinds.sort();
    Some(SeedTable {
        rows: rows
            .into_iter()
            .map(|((model, batch), by)| SeedRow {
                model,
                batch,
                values: kinds
                    .iter()
                    .map(|k| by.get(k).cloned().unwrap_or_default())
                    .collect(),
            })
            .collect(),
        kinds,
    })
}

fn cell_status(o: Status) -> &'static str {
    o.name()
}

/// The page for `sources`, titled `title`.
pub fn page(title: &str, sources: &[Source]) -> Page {
    let reports: Vec<NodeReport> = sources.iter().flat_map(|s| s.reports.clone()).collect();
    let m: Merged = fleet::merge(&reports);
    let mut groups: Vec<GroupView> = Vec::new();
    for r in &m.rows {
        let cells = m
            .nodes
            .iter()
            .map(|n| match r.nodes.get(&n.name) {
                Some(c) => CellView {
                    status: cell_status(c.status),
                    summary: c.summary.clone(),
                    fix: c.fix.clone(),
                },
                None => CellView {
                    status: "none",
                    summary: "not reported".into(),
                    fix: None,
                },
            })
            .collect();
        let row = RowView {
            id: r.id.clone(),
            cells,
        };
        match groups.last_mut() {
            Some(g) if g.name == r.group => g.rows.push(row),
            _ => groups.push(GroupView {
                name: r.group.clone(),
                rows: vec![row],
            }),
        }
    }
    // The node a plain document is about: the one its single report names.
    let docs: Vec<(&str, &Value)> = sources
        .iter()
        .filter(|s| kind(&s.doc) != "merge" && s.reports.len() == 1)
        .map(|s| (s.reports[0].node.as_str(), &s.doc))
        .collect();
    let mut envs: Vec<EnvView> = Vec::new();
    let mut charts = Vec::new();
    for n in &m.nodes {
        let mut items = Vec::new();
        for (_, doc) in docs.iter().filter(|(node, _)| *node == n.name) {
            environment(doc, &mut items);
            charts_of(&n.name, doc, &mut charts);
        }
        if !items.is_empty() {
            envs.push(EnvView {
                node: n.name.clone(),
                items,
            });
        }
    }
    Page {
        title: title.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        files: sources.iter().map(|s| s.file.clone()).collect(),
        nodes: m
            .nodes
            .iter()
            .map(|n| NodeView {
                name: n.name.clone(),
                kinds: n.kinds.join(", "),
                summary: n.summary,
            })
            .collect(),
        groups,
        summary: m.summary,
        failed: m.failed(),
        envs,
        charts,
        seed: seed_table(&docs),
    }
}
