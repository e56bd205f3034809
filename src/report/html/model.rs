//! What the HTML page shows, from the report documents: the node × check grid (the merge's table), each node's
//! environment, a bar chart per benchmark figure of each GPU, and a throughput table per GPU kind. Pure: documents
//! in, a serialisable page out; the template (`page.html`) lays it out.

use super::chart::{self, Chart};
use crate::fleet::environment::{kind, text_at as s};
use crate::fleet::{self, render::names, Merged, Merger, NodeReport};
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
    /// The cell's line (the cell's tooltip; failures are listed in full above the grid).
    pub summary: String,
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

/// A node and its counts.
#[derive(Debug, Clone, Serialize)]
pub struct NodeView {
    /// Its name.
    pub name: String,
    /// The kinds of reports that described it.
    pub kinds: String,
    /// Its cells counted.
    pub summary: fleet::Counts,
}

/// Failures (or warnings) of one check with one message, and the nodes that have them.
#[derive(Debug, Clone, Serialize)]
pub struct ProblemView {
    /// `fail` or `warn`.
    pub status: &'static str,
    /// The check's group and id (`doctor devices.kfd`).
    pub check: String,
    /// The message, node names taken out.
    pub summary: String,
    /// The fix.
    pub fix: Option<String>,
    /// How many nodes.
    pub count: usize,
    /// Their names, comma-separated.
    pub nodes: String,
}

/// One check's cells counted over the fleet.
#[derive(Debug, Clone, Serialize)]
pub struct CheckView {
    /// Its group.
    pub group: String,
    /// Its id.
    pub id: String,
    /// Its cells counted.
    pub counts: fleet::Counts,
    /// Nodes that did not report it.
    pub none: usize,
}

/// One environment, once, with the nodes that have it.
#[derive(Debug, Clone, Serialize)]
pub struct EnvView {
    /// How many nodes.
    pub count: usize,
    /// Their names, comma-separated.
    pub nodes: String,
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

/// The whole page, in reading order: failures grouped, counts per check, the grid (small fleets), environments,
/// benchmarks, files.
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
    /// Failures, then warnings, grouped by check and message.
    pub problems: Vec<ProblemView>,
    /// Every check counted.
    pub checks: Vec<CheckView>,
    /// The node × check grid, only up to `grid_max` nodes.
    pub groups: Option<Vec<GroupView>>,
    /// The most nodes the grid shows.
    pub grid_max: usize,
    /// Every cell counted.
    pub summary: fleet::Counts,
    /// True when a cell failed.
    pub failed: bool,
    /// Identical environments once.
    pub envs: Vec<EnvView>,
    /// The benchmark charts.
    pub charts: Vec<Chart>,
    /// The throughput table, when several GPU kinds ran the same benchmarks.
    pub seed: Option<SeedTable>,
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

/// Throughput figures of bench runs as they come in: (model, batch) → GPU kind → figure.
#[derive(Default)]
struct SeedAcc {
    kinds: Vec<String>,
    rows: BTreeMap<(String, String), BTreeMap<String, String>>,
}

impl SeedAcc {
    fn add(&mut self, doc: &Value) {
        if kind(doc) != "bench" {
            return;
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
            if !self.kinds.contains(&gpu) {
                self.kinds.push(gpu.clone());
            }
            self.rows
                .entry((t["name"].as_str().unwrap_or("").to_string(), batch))
                .or_default()
                .insert(gpu, value);
        }
    }

    /// The table, when several GPU kinds ran.
    fn finish(mut self) -> Option<SeedTable> {
        if self.kinds.len() < 2 {
            return None;
        }
        self.kinds.sort();
        let kinds = self.kinds;
        Some(SeedTable {
            rows: self
                .rows
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
}

/// The page, built as reports come in: the merge, the charts and the throughput figures; no document is kept.
#[derive(Default)]
pub struct Builder {
    merger: Merger,
    files: Vec<String>,
    charts: Vec<Chart>,
    seed: SeedAcc,
}

impl Builder {
    /// An empty page.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one report file: `doc`, and the node reports merge made of it.
    pub fn add(&mut self, file: &str, doc: &Value, reports: &[NodeReport]) {
        self.files.push(file.to_string());
        for r in reports {
            self.merger.add(r);
        }
        // A plain document is about the one node its single report names; a merge carries no environment.
        if let ([r], false) = (reports, kind(doc) == "merge") {
            self.merger.add_env(&r.node, fleet::environment(doc));
            charts_of(&r.node, doc, &mut self.charts);
            self.seed.add(doc);
        }
    }

    /// The page titled `title`, and the merge it shows.
    pub fn finish(self, title: &str) -> (Page, Merged) {
        let m = self.merger.finish();
        let page = Page {
            title: title.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            files: self.files,
            nodes: m
                .nodes
                .iter()
                .map(|n| NodeView {
                    name: n.name.clone(),
                    kinds: n.kinds.join(", "),
                    summary: n.summary,
                })
                .collect(),
            problems: problems(&m),
            checks: m
                .rows
                .iter()
                .map(|r| CheckView {
                    group: r.group.clone(),
                    id: r.id.clone(),
                    counts: r.counts,
                    none: m.nodes.len() - r.counts.total(),
                })
                .collect(),
            groups: (m.nodes.len() <= fleet::GRID_MAX_NODES).then(|| grid(&m)),
            grid_max: fleet::GRID_MAX_NODES,
            summary: m.summary,
            failed: m.failed(),
            envs: m
                .envs
                .iter()
                .map(|e| EnvView {
                    count: e.nodes.len(),
                    nodes: names(&m, &e.nodes),
                    items: e.items.clone(),
                })
                .collect(),
            charts: self.charts,
            seed: self.seed.finish(),
        };
        (page, m)
    }
}

fn problems(m: &Merged) -> Vec<ProblemView> {
    m.problems()
        .into_iter()
        .map(|p| ProblemView {
            status: p.status.name(),
            check: format!("{} {}", p.group, p.id),
            count: p.nodes.len(),
            nodes: names(m, &p.nodes),
            summary: p.summary,
            fix: p.fix,
        })
        .collect()
}

/// The node × check grid.
fn grid(m: &Merged) -> Vec<GroupView> {
    let mut groups: Vec<GroupView> = Vec::new();
    for r in &m.rows {
        let cells = (0..m.nodes.len())
            .map(|p| match r.cell(p) {
                Some(c) => CellView {
                    status: c.status.name(),
                    summary: c.summary.to_string(),
                },
                None => CellView {
                    status: "none",
                    summary: "not reported".into(),
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
    groups
}

/// The page for `sources`, titled `title` (all at hand; [`Builder`] takes them one at a time).
pub fn page(title: &str, sources: &[Source]) -> Page {
    let mut b = Builder::new();
    for s in sources {
        b.add(&s.file, &s.doc, &s.reports);
    }
    b.finish(title).0
}
