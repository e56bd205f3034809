//! The merged table as text (a compact matrix with numbered node columns, readable for dozens of nodes, then every
//! failure and warning in full), JSON (which merge reads back) and Markdown; its JUnit is `report::merge_junit`.

use super::table::{Counts, Merged};
use crate::status::Status;
use serde_json::json;
use std::io::{self, Write};

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn headline(m: &Merged) -> String {
    let files: std::collections::BTreeSet<&String> =
        m.nodes.iter().flat_map(|n| &n.files).collect();
    format!(
        "{} from {}: {}, {}",
        plural(m.nodes.len(), "node", "nodes"),
        plural(files.len(), "report", "reports"),
        plural(m.summary.fail, "failure", "failures"),
        plural(m.summary.warn, "warning", "warnings"),
    )
}

fn mark(o: Status) -> &'static str {
    match o {
        Status::Pass => "✓",
        Status::Warn => "!",
        Status::Fail => "✗",
        Status::Skip => "-",
    }
}

fn counts(c: &Counts) -> String {
    format!(
        "pass {}, warn {}, fail {}, skip {}",
        c.pass, c.warn, c.fail, c.skip
    )
}

/// A failed or warned cell, for the list under the table.
struct Problem<'a> {
    status: Status,
    node: &'a str,
    group: &'a str,
    id: &'a str,
    summary: &'a str,
    fix: Option<&'a str>,
}

/// Failures, then warnings, node by node.
fn problems(m: &Merged) -> Vec<Problem<'_>> {
    let mut out = Vec::new();
    for want in [Status::Fail, Status::Warn] {
        for n in &m.nodes {
            for r in &m.rows {
                if let Some(c) = r.nodes.get(&n.name).filter(|c| c.status == want) {
                    out.push(Problem {
                        status: want,
                        node: &n.name,
                        group: &r.group,
                        id: &r.id,
                        summary: &c.summary,
                        fix: c.fix.as_deref(),
                    });
                }
            }
        }
    }
    out
}

/// The text report: nodes numbered, a row per check with a mark per node (`.`: not reported), then the problems.
pub fn text(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "rocmenv report merge: {}", headline(m))?;
    let num_w = m.nodes.len().to_string().len();
    let name_w = m.nodes.iter().map(|n| n.name.len()).max().unwrap_or(0);
    let kinds: Vec<String> = m.nodes.iter().map(|n| n.kinds.join(", ")).collect();
    let kinds_w = kinds.iter().map(|k| k.chars().count()).max().unwrap_or(0);
    for (i, (n, k)) in m.nodes.iter().zip(&kinds).enumerate() {
        writeln!(
            out,
            "  {:>num_w$}  {:<name_w$}  {k:<kinds_w$}  ({})",
            i + 1,
            n.name,
            counts(&n.summary)
        )?;
    }
    let id_w = m
        .rows
        .iter()
        .map(|r| r.id.chars().count() + 2)
        .chain(m.rows.iter().map(|r| r.group.chars().count()))
        .max()
        .unwrap_or(0)
        .max(5);
    let cols: Vec<String> = (1..=m.nodes.len())
        .map(|i| format!("{i:>num_w$}"))
        .collect();
    writeln!(out)?;
    writeln!(out, "{:<id_w$}  {}", "check", cols.join(" "))?;
    let mut group = "";
    for r in &m.rows {
        if r.group != group {
            group = &r.group;
            writeln!(out, "{group}")?;
        }
        let cells: Vec<String> = m
            .nodes
            .iter()
            .map(|n| {
                let c = r.nodes.get(&n.name).map_or(".", |c| mark(c.status));
                format!("{c:>num_w$}")
            })
            .collect();
        let id = format!("  {}", r.id);
        let pad = id_w.saturating_sub(id.chars().count());
        writeln!(out, "{id}{}  {}", " ".repeat(pad), cells.join(" "))?;
    }
    let p = problems(m);
    if !p.is_empty() {
        writeln!(out)?;
        writeln!(out, "Failures and warnings")?;
        for p in p {
            writeln!(
                out,
                "  {} {}  {} {}: {}",
                mark(p.status),
                p.node,
                p.group,
                p.id,
                p.summary
            )?;
            if let Some(f) = p.fix {
                writeln!(out, "      fix: {f}")?;
            }
        }
    }
    writeln!(out)?;
    writeln!(
        out,
        "{} (✓ pass, ! warn, ✗ fail, - skip, . not reported)",
        counts(&m.summary)
    )
}

/// The merge as one JSON document (`kind: merge`), which `rocmenv report merge` reads back.
pub fn json(m: &Merged) -> serde_json::Value {
    json!({
        "schema_version": 1,
        "kind": "merge",
        "rocmenv_version": env!("CARGO_PKG_VERSION"),
        "nodes": m.nodes,
        "checks": m.rows,
        "summary": m.summary,
    })
}

/// Text safe in a Markdown table cell: `|` escaped, lines joined.
fn md(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn md_mark(o: Status) -> &'static str {
    match o {
        Status::Pass => "pass",
        Status::Warn => "**warn**",
        Status::Fail => "**FAIL**",
        Status::Skip => "skip",
    }
}

/// Markdown: a table with a column per node, then the failures and warnings with their fixes.
pub fn markdown(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "## rocmenv report merge: {}", headline(m))?;
    writeln!(out)?;
    let names: Vec<String> = m.nodes.iter().map(|n| md(&n.name)).collect();
    writeln!(out, "| check | {} |", names.join(" | "))?;
    writeln!(out, "| --- |{}", " :-: |".repeat(names.len()))?;
    let mut group = "";
    for r in &m.rows {
        if r.group != group {
            group = &r.group;
            writeln!(out, "| **{}** |{}", md(group), " |".repeat(names.len()))?;
        }
        let cells: Vec<&str> = m
            .nodes
            .iter()
            .map(|n| r.nodes.get(&n.name).map_or("", |c| md_mark(c.status)))
            .collect();
        writeln!(out, "| `{}` | {} |", md(&r.id), cells.join(" | "))?;
    }
    let p = problems(m);
    if !p.is_empty() {
        writeln!(out)?;
        writeln!(out, "### Failures and warnings")?;
        writeln!(out)?;
        for p in p {
            let fix = p.fix.map(|f| format!(" Fix: `{}`", f.replace('`', "'")));
            writeln!(
                out,
                "- {} **{}** {} `{}`: {}{}",
                md_mark(p.status),
                md(p.node),
                md(p.group),
                md(p.id),
                md(p.summary),
                fix.unwrap_or_default()
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", counts(&m.summary))
}
