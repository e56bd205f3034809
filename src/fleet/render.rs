//! The merged table as text and Markdown, in one order that reads at any fleet size: failures, then warnings,
//! grouped by check and message with their nodes; the counts per check; identical environments once; and the node ×
//! check grid only up to [`GRID_MAX_NODES`] nodes. Every line is at most [`WIDTH`] characters (long messages and
//! node lists wrap). JSON (which merge reads back) keeps every cell; the JUnit is `report::merge_junit`.

use super::environment::EnvGroup;
use super::table::{Counts, Merged, Problem, GRID_MAX_NODES};
use crate::status::Status;
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::io::{self, Write};

/// The longest line the text and Markdown merges write.
pub const WIDTH: usize = 200;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn headline(m: &Merged) -> String {
    format!(
        "{} from {}: {}, {}",
        plural(m.nodes.len(), "node", "nodes"),
        plural(m.files, "report", "reports"),
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

/// `text` in lines of at most [`WIDTH`] characters: the first after `first`, the others after `rest`; words longer
/// than a line are cut.
pub fn wrap(first: &str, rest: &str, text: &str) -> Vec<String> {
    // A line that fits stays as written, its spacing included.
    if first.chars().count() + text.chars().count() <= WIDTH && !text.contains(['\n', '\r']) {
        return vec![format!("{first}{text}")];
    }
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut len = first.chars().count();
    let mut empty = true;
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let room = WIDTH.saturating_sub(len + usize::from(!empty));
            if word.len() <= room {
                if !empty {
                    line.push(' ');
                }
                line.extend(word.iter());
                len += word.len() + usize::from(!empty);
                empty = false;
                break;
            }
            if !empty {
                lines.push(std::mem::replace(&mut line, rest.to_string()));
                len = rest.chars().count();
                empty = true;
                continue;
            }
            let cut = room.max(1);
            line.extend(word[..cut].iter());
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            len = rest.chars().count();
            word.drain(..cut);
            if word.is_empty() {
                break;
            }
        }
    }
    if !empty || lines.is_empty() {
        lines.push(line);
    }
    lines
}

fn put(out: &mut dyn Write, first: &str, rest: &str, text: &str) -> io::Result<()> {
    for l in wrap(first, rest, text) {
        writeln!(out, "{}", l.trim_end())?;
    }
    Ok(())
}

/// The names of the nodes at `places`, comma-separated.
pub fn names(m: &Merged, places: &[usize]) -> String {
    places
        .iter()
        .map(|&p| m.nodes[p].name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn env_line(e: &EnvGroup) -> String {
    e.items
        .iter()
        .map(|(l, v)| format!("{l} {v}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

fn text_problems(m: &Merged, problems: &[Problem], out: &mut dyn Write) -> io::Result<()> {
    for (want, title) in [(Status::Fail, "Failures"), (Status::Warn, "Warnings")] {
        let mine: Vec<&Problem> = problems.iter().filter(|p| p.status == want).collect();
        if mine.is_empty() {
            continue;
        }
        writeln!(out)?;
        writeln!(out, "{title}, by check and message")?;
        for p in mine {
            let head = format!("  {} {} {}: ", mark(p.status), p.group, p.id);
            put(out, &head, "      ", &p.summary)?;
            let n = plural(p.nodes.len(), "node", "nodes");
            put(
                out,
                &format!("      {n}: "),
                "        ",
                &names(m, &p.nodes),
            )?;
            if let Some(f) = &p.fix {
                put(out, "      fix: ", "        ", f)?;
            }
        }
    }
    Ok(())
}

fn text_counts(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    let id_w = m
        .rows
        .iter()
        .map(|r| r.id.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .clamp(8, 60);
    writeln!(out)?;
    writeln!(
        out,
        "{:<id_w$}  {:>6} {:>6} {:>6} {:>6} {:>6}",
        "Checks", "pass", "warn", "fail", "skip", "none"
    )?;
    let mut group = "";
    for r in &m.rows {
        if r.group != group {
            group = &r.group;
            put(out, "", "", group)?;
        }
        let c = &r.counts;
        let id: String = format!("  {}", r.id).chars().take(id_w).collect();
        writeln!(
            out,
            "{id:<id_w$}  {:>6} {:>6} {:>6} {:>6} {:>6}",
            c.pass,
            c.warn,
            c.fail,
            c.skip,
            m.nodes.len() - c.total()
        )?;
    }
    Ok(())
}

fn text_envs(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    if m.envs.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "Environments ({} distinct)", m.envs.len())?;
    for e in &m.envs {
        let n = plural(e.nodes.len(), "node", "nodes");
        put(out, &format!("  {n}: "), "      ", &env_line(e))?;
        put(out, "      nodes: ", "        ", &names(m, &e.nodes))?;
    }
    Ok(())
}

/// The grid: nodes numbered, a row per check with a mark per node (`.`: not reported).
fn text_grid(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    if m.nodes.len() > GRID_MAX_NODES {
        return put(
            out,
            "",
            "",
            &format!(
                "The grid of checks by node shows up to {GRID_MAX_NODES} nodes; this merge has {}: `--format json` \
                 has every cell.",
                m.nodes.len()
            ),
        );
    }
    let num_w = m.nodes.len().to_string().len();
    let name_w = m
        .nodes
        .iter()
        .map(|n| n.name.chars().count())
        .max()
        .unwrap_or(0)
        .min(80);
    for (i, n) in m.nodes.iter().enumerate() {
        let head = format!(
            "  {:>num_w$}  {:<name_w$}  {}  ({})",
            i + 1,
            n.name,
            n.kinds.join(", "),
            counts(&n.summary)
        );
        if head.chars().count() <= WIDTH {
            writeln!(out, "{head}")?;
        } else {
            put(out, "", "      ", &head)?;
        }
    }
    let id_w = m
        .rows
        .iter()
        .map(|r| r.id.chars().count() + 2)
        .max()
        .unwrap_or(0)
        .clamp(5, 60);
    let cols: Vec<String> = (1..=m.nodes.len())
        .map(|i| format!("{i:>num_w$}"))
        .collect();
    writeln!(out)?;
    writeln!(out, "{:<id_w$}  {}", "check", cols.join(" "))?;
    let mut group = "";
    for r in &m.rows {
        if r.group != group {
            group = &r.group;
            put(out, "", "", group)?;
        }
        let cells: Vec<String> = (0..m.nodes.len())
            .map(|p| format!("{:>num_w$}", r.cell(p).map_or(".", |c| mark(c.status))))
            .collect();
        let id: String = format!("  {}", r.id).chars().take(id_w).collect();
        writeln!(out, "{id:<id_w$}  {}", cells.join(" "))?;
    }
    Ok(())
}

/// The text report: failures and warnings grouped, counts per check, environments, then the grid.
pub fn text(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    put(out, "rocmenv report merge: ", "  ", &headline(m))?;
    text_problems(m, &m.problems(), out)?;
    text_counts(m, out)?;
    text_envs(m, out)?;
    text_grid(m, out)?;
    writeln!(out)?;
    writeln!(
        out,
        "{} (✓ pass, ! warn, ✗ fail, - skip, . not reported)",
        counts(&m.summary)
    )
}

/// The merge as one JSON document (`kind: merge`), which `rocmenv report merge` reads back; serialised straight
/// from the table (never a copy of it as a `serde_json::Value`, which at 10,000 nodes is hundreds of MB).
pub struct JsonMerge<'a>(pub &'a Merged);

struct JsonRows<'a>(&'a Merged);
struct JsonRow<'a>(&'a Merged, &'a super::table::Row);
struct JsonCells<'a>(&'a Merged, &'a super::table::Row);
struct JsonCell<'a>(&'a super::table::Cell);

impl Serialize for JsonMerge<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(6))?;
        m.serialize_entry("checks", &JsonRows(self.0))?;
        m.serialize_entry("kind", "merge")?;
        m.serialize_entry("nodes", &self.0.nodes)?;
        m.serialize_entry("rocmenv_version", env!("CARGO_PKG_VERSION"))?;
        m.serialize_entry("schema_version", &1)?;
        m.serialize_entry("summary", &self.0.summary)?;
        m.end()
    }
}

impl Serialize for JsonRows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.rows.iter().map(|r| JsonRow(self.0, r)))
    }
}

impl Serialize for JsonRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("group", &self.1.group)?;
        m.serialize_entry("id", &self.1.id)?;
        m.serialize_entry("nodes", &JsonCells(self.0, self.1))?;
        m.end()
    }
}

impl Serialize for JsonCells<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(
            self.1
                .cells
                .iter()
                .map(|(p, c)| (&self.0.nodes[*p].name, JsonCell(c))),
        )
    }
}

impl Serialize for JsonCell<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("fix", &self.0.fix.as_deref())?;
        m.serialize_entry("status", &self.0.status)?;
        m.serialize_entry("summary", &*self.0.summary)?;
        m.end()
    }
}

/// Writes [`JsonMerge`] of `m`, pretty-printed, and a newline.
pub fn json(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &JsonMerge(m)).map_err(io::Error::other)?;
    writeln!(out)
}

/// Text safe in Markdown: `|` and `<` escaped, lines joined.
fn md(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('<', "&lt;")
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

fn md_problems(m: &Merged, problems: &[Problem], out: &mut dyn Write) -> io::Result<()> {
    for (want, title) in [(Status::Fail, "Failures"), (Status::Warn, "Warnings")] {
        let mine: Vec<&Problem> = problems.iter().filter(|p| p.status == want).collect();
        if mine.is_empty() {
            continue;
        }
        writeln!(out)?;
        writeln!(out, "### {title}, by check and message")?;
        writeln!(out)?;
        for p in mine {
            let head = format!("- {} {} `{}`: ", md_mark(p.status), md(&p.group), md(&p.id));
            put(out, &head, "  ", &md(&p.summary))?;
            if let Some(f) = &p.fix {
                writeln!(out)?;
                put(out, "  Fix: ", "  ", &md(f))?;
            }
            writeln!(out)?;
            writeln!(
                out,
                "  <details><summary>{}</summary>",
                plural(p.nodes.len(), "node", "nodes")
            )?;
            writeln!(out)?;
            put(out, "  ", "  ", &md(&names(m, &p.nodes)))?;
            writeln!(out)?;
            writeln!(out, "  </details>")?;
        }
    }
    Ok(())
}

fn md_counts(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    writeln!(out, "### Checks")?;
    writeln!(out)?;
    writeln!(
        out,
        "| group | check | pass | warn | fail | skip | not reported |"
    )?;
    writeln!(out, "| --- | --- | --: | --: | --: | --: | --: |")?;
    for r in &m.rows {
        let c = &r.counts;
        let id: String = md(&r.id).chars().take(100).collect();
        writeln!(
            out,
            "| {} | `{id}` | {} | {} | {} | {} | {} |",
            md(&r.group).chars().take(40).collect::<String>(),
            c.pass,
            c.warn,
            c.fail,
            c.skip,
            m.nodes.len() - c.total()
        )?;
    }
    Ok(())
}

fn md_envs(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    if m.envs.is_empty() {
        return Ok(());
    }
    writeln!(out)?;
    writeln!(out, "### Environments ({} distinct)", m.envs.len())?;
    writeln!(out)?;
    for e in &m.envs {
        let n = plural(e.nodes.len(), "node", "nodes");
        put(out, &format!("- **{n}**: "), "  ", &md(&env_line(e)))?;
        writeln!(out)?;
        writeln!(out, "  <details><summary>nodes</summary>")?;
        writeln!(out)?;
        put(out, "  ", "  ", &md(&names(m, &e.nodes)))?;
        writeln!(out)?;
        writeln!(out, "  </details>")?;
    }
    Ok(())
}

/// The grid with numbered node columns (a column per name would not fit a line).
fn md_grid(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out)?;
    if m.nodes.len() > GRID_MAX_NODES {
        return put(
            out,
            "",
            "",
            &format!(
                "The grid of checks by node shows up to {GRID_MAX_NODES} nodes; this merge has {}.",
                m.nodes.len()
            ),
        );
    }
    writeln!(out, "### Checks by node")?;
    writeln!(out)?;
    for (i, n) in m.nodes.iter().enumerate() {
        let head = format!("{}. {} ({})", i + 1, md(&n.name), counts(&n.summary));
        put(out, "", "   ", &head)?;
    }
    writeln!(out)?;
    let cols: Vec<String> = (1..=m.nodes.len()).map(|i| i.to_string()).collect();
    writeln!(out, "| check | {} |", cols.join(" | "))?;
    writeln!(out, "| --- |{}", " :-: |".repeat(cols.len()))?;
    let mut group = "";
    for r in &m.rows {
        if r.group != group {
            group = &r.group;
            writeln!(out, "| **{}** |{}", md(group), " |".repeat(cols.len()))?;
        }
        let cells: Vec<&str> = (0..m.nodes.len())
            .map(|p| r.cell(p).map_or("", |c| mark(c.status)))
            .collect();
        let id: String = md(&r.id).chars().take(60).collect();
        writeln!(out, "| `{id}` | {} |", cells.join(" | "))?;
    }
    Ok(())
}

/// Markdown, in the text report's order.
pub fn markdown(m: &Merged, out: &mut dyn Write) -> io::Result<()> {
    put(out, "## rocmenv report merge: ", "", &headline(m))?;
    md_problems(m, &m.problems(), out)?;
    md_counts(m, out)?;
    md_envs(m, out)?;
    md_grid(m, out)?;
    writeln!(out)?;
    writeln!(out, "{}", counts(&m.summary))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_every_line_short_and_every_word() {
        let long = format!("{} tail", "x".repeat(450));
        let lines = wrap("  fix: ", "    ", &format!("a b {long}"));
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        let back: String = lines
            .join("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("");
        assert_eq!(back, format!("fix:ab{}tail", "x".repeat(450)));
        assert_eq!(wrap("- ", "  ", "short"), ["- short"]);
    }
}
