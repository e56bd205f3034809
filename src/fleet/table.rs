//! Many node reports as one table: a row per check or test, a cell per node holding the worst outcome of that check
//! there (a per-GPU doctor check runs once per device). [`Merger`] folds reports in one at a time, so a merge of
//! 10,000 files holds one document at a time and the table's cells, whose lines are stored once (a fleet repeats
//! the same few messages), never a copy per node.

use super::environment::EnvGroup;
use super::input::{Entry, NodeReport};
use crate::status::Status;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// The most nodes a node × check grid shows: beyond it the grid is wider than a screen and longer than anyone
/// reads, and the failures (grouped) and the counts per check say what it would.
pub const GRID_MAX_NODES: usize = 32;

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
    /// Counts one more cell.
    pub fn add(&mut self, o: Status) {
        match o {
            Status::Pass => self.pass += 1,
            Status::Warn => self.warn += 1,
            Status::Fail => self.fail += 1,
            Status::Skip => self.skip += 1,
        }
    }

    /// All cells counted.
    pub fn total(&self) -> usize {
        self.pass + self.warn + self.fail + self.skip
    }
}

/// One check on one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// The worst outcome of the check there.
    pub status: Status,
    /// The worst entry's line, with how many of several entries it stands for.
    pub summary: Arc<str>,
    /// Its fix.
    pub fix: Option<Arc<str>>,
}

/// One check or test across the nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// `doctor`, `validate <stack>`, `smoke`, `bench`.
    pub group: String,
    /// The check's dotted id or the test's name.
    pub id: String,
    /// (node's place in [`Merged::nodes`], its cell), by place; a node that did not report the check has none.
    pub cells: Vec<(usize, Cell)>,
    /// Its cells counted.
    pub counts: Counts,
}

impl Row {
    /// The cell of the node at `place`, if it reported the check.
    pub fn cell(&self, place: usize) -> Option<&Cell> {
        self.cells
            .binary_search_by_key(&place, |(p, _)| *p)
            .ok()
            .map(|i| &self.cells[i].1)
    }
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

/// Failures (or warnings) of one check with the same message once node names are taken out, and the nodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// Fail or warn.
    pub status: Status,
    /// The check's group.
    pub group: String,
    /// The check.
    pub id: String,
    /// The message, each node's own name replaced by `<node>`.
    pub summary: String,
    /// The fix, likewise.
    pub fix: Option<String>,
    /// The nodes' places in [`Merged::nodes`], in node order.
    pub nodes: Vec<usize>,
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
    /// Identical environments once, with their nodes (from the documents' host, device and versions).
    pub envs: Vec<EnvGroup>,
    /// How many distinct report files were read.
    pub files: usize,
}

impl Merged {
    /// True when a cell failed.
    pub fn failed(&self) -> bool {
        self.summary.fail > 0
    }

    /// Failures, then warnings, grouped by check and message (node names taken out); in each status the rows'
    /// order, and within a check the largest group first.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        for want in [Status::Fail, Status::Warn] {
            for r in &self.rows {
                let mut groups: Vec<Problem> = Vec::new();
                let mut index: HashMap<(String, Option<String>), usize> = HashMap::new();
                for (place, c) in r.cells.iter().filter(|(_, c)| c.status == want) {
                    let name = &self.nodes[*place].name;
                    let key = (
                        without_node(&c.summary, name),
                        c.fix.as_deref().map(|f| without_node(f, name)),
                    );
                    let i = *index.entry(key.clone()).or_insert_with(|| {
                        groups.push(Problem {
                            status: want,
                            group: r.group.clone(),
                            id: r.id.clone(),
                            summary: key.0,
                            fix: key.1,
                            nodes: Vec::new(),
                        });
                        groups.len() - 1
                    });
                    groups[i].nodes.push(*place);
                }
                groups.sort_by_key(|g| std::cmp::Reverse(g.nodes.len()));
                out.extend(groups);
            }
        }
        out
    }
}

/// `text` with `node` (a name of 3 characters or more, so `a` does not eat every word) replaced by `<node>`.
pub fn without_node(text: &str, node: &str) -> String {
    if node.chars().count() >= 3 && text.contains(node) {
        text.replace(node, "<node>")
    } else {
        text.to_string()
    }
}

/// A cell while reports come in: the worst entry so far, how many entries, and how many share the worst status.
struct CellAcc {
    status: Status,
    summary: Arc<str>,
    fix: Option<Arc<str>>,
    n: u32,
    k: u32,
}

/// A node while reports come in.
struct NodeAcc {
    name: String,
    files: Vec<String>,
    kinds: Vec<String>,
    env: Vec<(String, String)>,
}

/// Folds node reports in one at a time; [`Merger::finish`] orders them into a [`Merged`].
#[derive(Default)]
pub struct Merger {
    node_ix: HashMap<String, usize>,
    nodes: Vec<NodeAcc>,
    key_ix: HashMap<(String, String), usize>,
    keys: Vec<(String, String)>,
    /// Per key: node index → cell.
    cells: Vec<HashMap<usize, CellAcc>>,
    /// Each distinct line once.
    pool: std::collections::HashSet<Arc<str>>,
    files: std::collections::HashSet<String>,
}

impl Merger {
    /// An empty merge.
    pub fn new() -> Self {
        Self::default()
    }

    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.pool.get(s) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(s);
        self.pool.insert(a.clone());
        a
    }

    fn node(&mut self, name: &str) -> usize {
        if let Some(&i) = self.node_ix.get(name) {
            return i;
        }
        self.nodes.push(NodeAcc {
            name: name.to_string(),
            files: Vec::new(),
            kinds: Vec::new(),
            env: Vec::new(),
        });
        self.node_ix.insert(name.to_string(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    /// Adds what a document says about its node's software and devices (kept once per label).
    pub fn add_env(&mut self, node: &str, items: Vec<(String, String)>) {
        let i = self.node(node);
        let env = &mut self.nodes[i].env;
        for (label, value) in items {
            if !env.iter().any(|(l, _)| *l == label) {
                env.push((label, value));
            }
        }
    }

    /// Adds one node report.
    pub fn add(&mut self, r: &NodeReport) {
        let i = self.node(&r.node);
        self.files.insert(r.file.clone());
        let n = &mut self.nodes[i];
        if !n.files.contains(&r.file) {
            n.files.push(r.file.clone());
        }
        for k in r.kind.split('+').filter(|k| !k.is_empty()) {
            if !n.kinds.iter().any(|x| x == k) {
                n.kinds.push(k.to_string());
            }
        }
        for e in &r.entries {
            self.add_entry(i, e);
        }
    }

    fn add_entry(&mut self, node: usize, e: &Entry) {
        let key = match self.key_ix.get(&(e.group.clone(), e.id.clone())) {
            Some(&k) => k,
            None => {
                self.keys.push((e.group.clone(), e.id.clone()));
                self.cells.push(HashMap::new());
                self.key_ix
                    .insert((e.group.clone(), e.id.clone()), self.keys.len() - 1);
                self.keys.len() - 1
            }
        };
        let summary = self.intern(&e.summary);
        let fix = e.fix.as_deref().map(|f| self.intern(f));
        match self.cells[key].get_mut(&node) {
            None => {
                self.cells[key].insert(
                    node,
                    CellAcc {
                        status: e.status,
                        summary,
                        fix,
                        n: 1,
                        k: 1,
                    },
                );
            }
            Some(c) => {
                c.n += 1;
                // The last of equally bad entries stands for them, as `Iterator::max_by_key` picks.
                if e.status.rank() >= c.status.rank() {
                    c.k = if e.status == c.status { c.k + 1 } else { 1 };
                    c.status = e.status;
                    c.summary = summary;
                    c.fix = fix;
                }
            }
        }
    }

    /// The table: nodes in natural order, rows by group (doctor, validate, smoke, bench) in first-seen order.
    pub fn finish(self) -> Merged {
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by(|&a, &b| natural_cmp(&self.nodes[a].name, &self.nodes[b].name));
        let mut place = vec![0usize; order.len()];
        for (p, &i) in order.iter().enumerate() {
            place[i] = p;
        }
        let mut per_node = vec![Counts::default(); order.len()];
        let mut summary = Counts::default();
        let mut keyed: Vec<(usize, (String, String))> = self.keys.into_iter().enumerate().collect();
        keyed.sort_by_key(|(_, (g, _))| group_rank(g));
        let mut cells = self.cells;
        let rows = keyed
            .into_iter()
            .map(|(k, (group, id))| {
                let mut counts = Counts::default();
                let mut row: Vec<(usize, Cell)> = std::mem::take(&mut cells[k])
                    .into_iter()
                    .map(|(node, c)| {
                        counts.add(c.status);
                        per_node[place[node]].add(c.status);
                        (place[node], finish_cell(c))
                    })
                    .collect();
                row.sort_by_key(|(p, _)| *p);
                summary.add_all(&counts);
                Row {
                    group,
                    id,
                    cells: row,
                    counts,
                }
            })
            .collect();
        let mut accs: Vec<Option<NodeAcc>> = self.nodes.into_iter().map(Some).collect();
        let mut envs: Vec<(Vec<(String, String)>, usize)> = Vec::new();
        let nodes = order
            .iter()
            .enumerate()
            .map(|(p, &i)| {
                let a = accs[i].take().expect("each node once");
                if !a.env.is_empty() {
                    envs.push((a.env, p));
                }
                Node {
                    name: a.name,
                    files: a.files,
                    kinds: a.kinds,
                    summary: per_node[p],
                }
            })
            .collect();
        Merged {
            nodes,
            rows,
            summary,
            envs: super::environment::group(envs),
            files: self.files.len(),
        }
    }
}

impl Counts {
    fn add_all(&mut self, o: &Counts) {
        self.pass += o.pass;
        self.warn += o.warn;
        self.fail += o.fail;
        self.skip += o.skip;
    }
}

fn finish_cell(c: CellAcc) -> Cell {
    Cell {
        status: c.status,
        summary: if c.n > 1 && c.k < c.n {
            Arc::from(format!(
                "{} ({} of {} {})",
                c.summary,
                c.k,
                c.n,
                c.status.name()
            ))
        } else {
            c.summary
        },
        fix: c.fix,
    }
}

/// Merges the reports (all at hand; [`Merger`] takes them one at a time).
pub fn merge(reports: &[NodeReport]) -> Merged {
    let mut m = Merger::new();
    for r in reports {
        m.add(r);
    }
    m.finish()
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
        assert_eq!(
            &*m.rows[0].cell(1).unwrap().summary,
            "1: broken (1 of 3 fail)"
        );
        assert_eq!(m.rows[0].cell(0).unwrap().status, Status::Pass);
        assert!(m.rows[1].cell(1).is_none());
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
