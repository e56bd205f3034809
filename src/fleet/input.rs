//! Reading one report file: doctor (`doctor --json`), a suite result (`smoke`/`bench --json`), a validate report
//! (`validate --json`) or a merge (`report merge --format json`), each turned into rows of the same shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

use crate::status::Status;

/// One check or test of one report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Where it comes from: `doctor`, `smoke`, `bench`, or `validate <stack>`.
    pub group: String,
    /// The check's dotted id or the test's name.
    pub id: String,
    /// How it ended.
    pub status: Status,
    /// One line (a per-device doctor check names its device first).
    pub summary: String,
    /// A step a person can follow.
    #[serde(default)]
    pub fix: Option<String>,
}

/// One report file, read.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeReport {
    /// The file it came from.
    pub file: String,
    /// The node it names (`null` in the file: its file name without the extension).
    pub node: String,
    /// `doctor`, `smoke`, `bench`, `validate` (and one per node of a merge).
    pub kind: String,
    /// Its checks and tests.
    pub entries: Vec<Entry>,
}

/// Why a file is not a report merge can read.
pub type Why = String;

fn field<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a Value, Why> {
    v.get(key)
        .ok_or_else(|| format!("a {what} report without `{key}`"))
}

fn text(v: &Value, key: &str, what: &str) -> Result<String, Why> {
    field(v, key, what)?
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("`{key}` of a {what} report is not a string"))
}

fn opt_text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn array<'a>(v: &'a Value, key: &str, what: &str) -> Result<&'a Vec<Value>, Why> {
    field(v, key, what)?
        .as_array()
        .ok_or_else(|| format!("`{key}` of a {what} report is not a list"))
}

fn status(v: &Value, what: &str, allowed: &[Status]) -> Result<Status, Why> {
    let s = text(v, "status", what)?;
    let o: Status = serde_json::from_value(Value::String(s.clone()))
        .map_err(|_| format!("a {what} status `{s}` (expected pass, warn, fail or skip)"))?;
    if allowed.contains(&o) {
        Ok(o)
    } else {
        Err(format!(
            "a {what} status `{s}` this report kind does not have"
        ))
    }
}

const ALL: [Status; 4] = [Status::Pass, Status::Warn, Status::Fail, Status::Skip];

/// `doctor --json`: its findings; a per-device finding names its device before a summary that does not.
fn doctor(doc: &Value) -> Result<Vec<Entry>, Why> {
    field(doc, "host", "doctor")?;
    field(doc, "summary", "doctor")?;
    array(doc, "checks", "doctor")?
        .iter()
        .map(|c| {
            let summary = text(c, "summary", "doctor check")?;
            Ok(Entry {
                group: "doctor".into(),
                id: text(c, "id", "doctor check")?,
                status: status(c, "doctor check", &ALL)?,
                summary: match opt_text(c, "subject") {
                    Some(s) if !summary.contains(&s) => format!("{s}: {summary}"),
                    _ => summary,
                },
                fix: opt_text(c, "fix"),
            })
        })
        .collect()
}

/// `smoke`/`bench --json`: its tests (no warnings there).
fn suite(doc: &Value, kind: &str) -> Result<Vec<Entry>, Why> {
    let what = format!("{kind} test");
    array(doc, "tests", kind)?
        .iter()
        .map(|t| {
            let st = status(t, &what, &[Status::Pass, Status::Fail, Status::Skip])?;
            let reason = opt_text(t, "reason").unwrap_or_default();
            Ok(Entry {
                group: kind.to_string(),
                id: text(t, "name", &what)?,
                status: st,
                summary: match reason.lines().next() {
                    Some(l) if !l.is_empty() => l.to_string(),
                    _ => st.name().into(),
                },
                fix: opt_text(t, "fix"),
            })
        })
        .collect()
}

/// `validate --json`: a group per stack, a row per case (`step` and `id`).
fn validate(doc: &Value) -> Result<Vec<Entry>, Why> {
    let mut out = Vec::new();
    for s in array(doc, "stacks", "validate")? {
        let name = text(s, "name", "validate stack")?;
        for c in array(s, "cases", "validate stack")? {
            let step = text(c, "step", "validate case")?;
            let id = text(c, "id", "validate case")?;
            out.push(Entry {
                group: format!("validate {name}"),
                id: if id.starts_with(&format!("{step}.")) || id == step {
                    id
                } else {
                    format!("{step}: {id}")
                },
                status: status(c, "validate case", &ALL)?,
                summary: text(c, "summary", "validate case")?,
                fix: opt_text(c, "fix"),
            });
        }
    }
    Ok(out)
}

/// The file's name without its extension: the node of a report that names none.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Reads `text` (the contents of `path`) as one report, or as the nodes of a merge.
pub fn parse(path: &Path, text: &str) -> Result<Vec<NodeReport>, Why> {
    parse_doc(path, text).map(|(_, reports)| reports)
}

/// [`parse`], also returning the JSON document (the HTML page reads more of it than the table does).
pub fn parse_doc(path: &Path, text: &str) -> Result<(Value, Vec<NodeReport>), Why> {
    if text.trim().is_empty() {
        return Err("is empty".into());
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("is not JSON ({e})"))?;
    let reports = reports_of(path, &doc)?;
    Ok((doc, reports))
}

/// The node reports of one parsed document (`path` names a node that the document does not).
pub fn reports_of(path: &Path, doc: &Value) -> Result<Vec<NodeReport>, Why> {
    if !doc.is_object() {
        return Err("is JSON but not an object".into());
    }
    let is_suite = matches!(
        doc.get("kind").and_then(Value::as_str),
        Some("smoke" | "bench")
    );
    match doc.get("schema_version").and_then(Value::as_u64) {
        Some(1) => {}
        // A suite result of schema_version 2 adds fields (each test's device, a metric's `better`) merge can ignore.
        Some(2) if is_suite => {}
        Some(v) if is_suite => {
            return Err(format!(
                "has schema_version {v}; this rocmenv reads 1 and 2"
            ))
        }
        Some(v) => return Err(format!("has schema_version {v}; this rocmenv reads 1")),
        None => return Err("has no schema_version: not a rocmenv report".into()),
    }
    let file = path.display().to_string();
    let node = opt_text(doc, "node")
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| stem(path));
    let one = |kind: &str, entries: Vec<Entry>| {
        Ok(vec![NodeReport {
            file: file.clone(),
            node: node.clone(),
            kind: kind.to_string(),
            entries,
        }])
    };
    match doc.get("kind").and_then(Value::as_str) {
        Some(k @ ("smoke" | "bench")) => one(k, suite(doc, k)?),
        Some("validate") => one("validate", validate(doc)?),
        Some("merge") => merged(doc, &file),
        Some(other) => Err(format!(
            "has kind `{other}` (merge reads doctor, smoke, bench, validate and merge reports)"
        )),
        None if doc.get("checks").is_some() => one("doctor", doctor(doc)?),
        None => Err("has neither `kind` nor `checks`: not a rocmenv report".into()),
    }
}

/// A merge's own JSON: its nodes, each with the entries it had.
fn merged(doc: &Value, file: &str) -> Result<Vec<NodeReport>, Why> {
    let mut out = Vec::new();
    for n in array(doc, "nodes", "merge")? {
        let name = text(n, "name", "merge node")?;
        let kinds: Vec<String> = array(n, "kinds", "merge node")?
            .iter()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        out.push(NodeReport {
            file: file.to_string(),
            node: name.clone(),
            kind: kinds.join("+"),
            entries: Vec::new(),
        });
    }
    for row in array(doc, "checks", "merge")? {
        let group = text(row, "group", "merge check")?;
        let id = text(row, "id", "merge check")?;
        let cells = field(row, "nodes", "merge check")?
            .as_object()
            .ok_or("`nodes` of a merge check is not an object")?;
        for (node, cell) in cells {
            let target = out
                .iter_mut()
                .find(|r| &r.node == node)
                .ok_or_else(|| format!("a merge check names node `{node}`, which `nodes` lacks"))?;
            target.entries.push(Entry {
                group: group.clone(),
                id: id.clone(),
                status: status(cell, "merge cell", &ALL)?,
                summary: text(cell, "summary", "merge cell")?,
                fix: opt_text(cell, "fix"),
            });
        }
    }
    Ok(out)
}
