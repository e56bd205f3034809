//! Many node reports as one table: a row per check or test, a cell per node holding the worst outcome of that check
//! there (a per-GPU doctor check runs once per device).

use super::input::{Entry, NodeReport};
use crate::status::Status;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many cells passed, warned, failed and skipped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Passed.
    pub pass: usize,
    /// Warned.
    pub warn: usize,
    /// Failed.
    pub fail: usize,
    /// Skipped.
    pub skip: usize,
}

impl Counts {
    fn add(&mut self, o: Status) {
        match o {
            Status::Pass => self.pass += 1,
            Status::Warn => self.warn += 1,
            Status::Fail => self.fail += 1,
            Status::Skip => self.skip += 1,
        }
    }
}

/// One check on one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// The worst outcome of the check there.
    pub status: Status,
    /// The worst entry's line, with how many of several entries it stands for.
    pub summary: String,
    /// Its fix.
    pub fix: Option<String>,
}

/// One check or test across the nodes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `doctor`, `validate <stack>`, `smoke`, `bench`.
    pub group: String,
    /// The check's id or the test's name.
    pub id: String,
    /// Node name → its cell; a node that did not report the check has none.
    pub nodes: BTreeMap<String, Cell>,
}

/// One node's part.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    /// Its name.
    pub name: String,
    /// The files that described it.
    pub files: Vec<String>,
    /// The kinds of those reports.
    pub kinds: Vec<String>,
    /// Its cells counted.
    pub summary: Counts,
}

/// The merged table.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// The nodes, in natural order (`gpu-2` before `gpu-10`).
    pub nodes: Vec<Node>,
    /// The rows: doctor first, then validate, smoke and bench; in each, the order the reports list them.
    pub rows: Vec<Row>,
    /// Every cell counted.
    pub summary: Counts,
}

impl Merged {
    /// True when a cell failed.
    pub fn failed(&self) -> bool {
        self.summary.fail > 0
    }
}

/// Orders names so digit runs compare as numbers.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    fn parts(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (pa, pb) = (parts(a), parts(b));
    for (x, y) in pa.iter().zip(&pb) {
        let o = match (x, y) {
            ((true, x), (true, y)) => x
                .trim_start_matches('0')
                .len()
                .cmp(&y.trim_start_matches('0').len())
                .then_with(|| x.trim_start_matches('0').cmp(y.trim_start_matches('0'))),
            ((_, x), (_, y)) => x.cmp(y),
        };
        if o.is_ne() {
            return o;
        }
    }
    pa.len().cmp(&pb.len()).then_with(|| a.cmp(b))
}

fn group_rank(g: &str) -> u8 {
    match g {
        "doctor" => 0,
        g if g.starts_with("validate") => 1,
        "smoke" => 2,
        "bench" => 3,
        _ => 4,
    }
}

/// The worst of several entries for one check on one node.
fn cell(entries: &[&Entry]) -> Cell {
    let worst = entries
        .iter()
        .max_by_key(|e| e.status.rank())
        .expect("a cell has an entry");
    let n = entries.len();
    let k = entries.iter().filter(|e| e.status == worst.status).count();
    Cell {
        status: worst.status,
        summary: if n > 1 && k < n {
            format!("{} ({k} of {n} {})", worst.summary, worst.status.name())
        } else {
            worst.summary.clone()
        },
        fix: worst.fix.clone(),
    }
}

/// Merges the reports.
pub fn merge(reports: &[NodeReport]) -> Merged {
    let mut names: Vec<String> = Vec::new();
    for r in reports {
        if !names.contains(&r.node) {
            names.push(r.node.clone());
        }
    }
    names.sort_by(|a, b| natural_cmp(a, b));
    // (group, id) in first-seen order, then stably by group rank.
    let mut keys: Vec<(String, String)> = Vec::new();
    for r in reports {
        for e in &r.entries {
            let k = (e.group.clone(), e.id.clone());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    keys.sort_by_key(|(g, _)| group_rank(g));
    let mut summary = Counts::default();
    let mut per_node: BTreeMap<String, Counts> = BTreeMap::new();
    let rows: Vec<Row> = keys
        .into_iter()
        .map(|(group, id)| {
            let mut nodes = BTreeMap::new();
            for name in &names {
                let entries: Vec<&Entry> = reports
                    .iter()
                    .filter(|r| &r.node == name)
                    .flat_map(|r| &r.entries)
                    .filter(|e| e.group == group && e.id == id)
                    .collect();
                if !entries.is_empty() {
                    let c = cell(&entries);
                    summary.add(c.status);
                    per_node.entry(name.clone()).or_default().add(c.status);
                    nodes.insert(name.clone(), c);
                }
            }
            Row { group, id, nodes }
        })
        .collect();
    let nodes = names
        .into_iter()
        .map(|name| {
            let mine: Vec<&NodeReport> = reports.iter().filter(|r| r.node == name).collect();
            let mut files: Vec<String> = Vec::new();
            let mut kinds: Vec<String> = Vec::new();
            for r in &mine {
                if !files.contains(&r.file) {
                    files.push(r.file.clone());
                }
                for k in r.kind.split('+').filter(|k| !k.is_empty()) {
                    if !kinds.iter().any(|x| x == k) {
                        kinds.push(k.to_string());
                    }
                }
            }
            Node {
                summary: per_node.get(&name).copied().unwrap_or_default(),
                name,
                files,
                kinds,
            }
        })
        .collect();
    Merged {
        nodes,
        rows,
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_puts_2_before_10() {
        let mut v = vec!["gpu-10", "gpu-2", "gpu-1", "cpu", "gpu-02b"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["cpu", "gpu-1", "gpu-2", "gpu-02b", "gpu-10"]);
    }

    fn entry(id: &str, status: Status, summary: &str) -> Entry {
        Entry {
            group: "doctor".into(),
            id: id.into(),
            status,
            summary: summary.into(),
            fix: None,
        }
    }

    #[test]
    fn a_cell_is_the_worst_of_its_entries() {
        let r = |node: &str, entries| NodeReport {
            file: format!("{node}.json"),
            node: node.into(),
            kind: "doctor".into(),
            entries,
        };
        let m = merge(&[
            r(
                "b",
                vec![
                    entry("gpu.x", Status::Pass, "0: ok"),
                    entry("gpu.x", Status::Fail, "1: broken"),
                    entry("gpu.x", Status::Pass, "2: ok"),
                ],
            ),
            r(
                "a",
                vec![
                    entry("gpu.x", Status::Pass, "0: ok"),
                    entry("os", Status::Warn, "old"),
                ],
            ),
        ]);
        assert_eq!(
            m.nodes.iter().map(|n| n.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(m.rows.len(), 2);
        assert_eq!(m.rows[0].nodes["b"].summary, "1: broken (1 of 3 fail)");
        assert_eq!(m.rows[0].nodes["a"].status, Status::Pass);
        assert!(!m.rows[1].nodes.contains_key("b"));
        assert_eq!(
            m.summary,
            Counts {
                pass: 1,
                warn: 1,
                fail: 1,
                skip: 0
            }
        );
        assert!(m.failed());
    }
}
