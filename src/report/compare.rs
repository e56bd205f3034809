//! `rocmenv report compare` as text, Markdown, JSON and a self-contained HTML page (bars drawn with CSS widths, no
//! script). A row per model, batch, precision and mode; a line per result with throughput, p50/p99 latency, peak
//! memory and cv, each later result against the first. Lines are at most 200 characters.

use super::html::chart::figure;
use crate::fleet::compare::{CompareRow, Comparison, Figures, RunInfo};
use crate::fleet::render::wrap;
use serde::Serialize;
use serde_json::{json, Value};
use std::io::{self, Write};

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), figure)
}

fn mem(v: Option<f64>) -> String {
    match v {
        Some(b) if b >= (1u64 << 30) as f64 => format!("{:.1} GiB", b / (1u64 << 30) as f64),
        Some(b) => format!("{:.0} MiB", b / (1u64 << 20) as f64),
        None => "-".into(),
    }
}

fn key(r: &CompareRow) -> String {
    let mut parts = vec![r.model.clone()];
    if r.batch != "-" {
        parts.push(format!("batch {}", r.batch));
    }
    parts.extend(
        [&r.precision, &r.mode]
            .into_iter()
            .filter(|s| *s != "-")
            .cloned(),
    );
    parts.join(" · ")
}

/// The verdict of a later cell against the first, in words (`+25.0 % vs A: B faster, beyond spread`).
fn versus(f: &Figures, first: &str) -> String {
    let Some(d) = f.delta_pct else {
        return String::new();
    };
    let faster = f.faster.as_deref().unwrap_or("?");
    let spread = match f.beyond_spread {
        Some(true) => "beyond spread",
        Some(false) => "within spread",
        None => "spread unknown (no cv)",
    };
    let mut s = format!("{d:+.1} % vs {first}: {faster} faster, {spread}");
    if f.regressed {
        s.push_str(", REGRESSION");
    }
    s
}

fn run_line(r: &RunInfo) -> String {
    format!(
        "{}  {} · {} · {} · {} ({})",
        r.label, r.node, r.vendor, r.device, r.image, r.file
    )
}

fn cell_line(f: &Figures) -> String {
    format!(
        "{} {}  p50 {} ms  p99 {} ms  peak {}  cv {} %",
        opt(f.throughput),
        f.unit,
        opt(f.p50_ms),
        opt(f.p99_ms),
        mem(f.peak_memory_bytes),
        cv(f.cv_pct)
    )
}

fn cv(v: Option<f64>) -> String {
    v.map_or("-".into(), |c| format!("{c:.1}"))
}

fn put(out: &mut dyn Write, first: &str, rest: &str, text: &str) -> io::Result<()> {
    for l in wrap(first, rest, text) {
        writeln!(out, "{}", l.trim_end())?;
    }
    Ok(())
}

fn verdict(c: &Comparison) -> String {
    match c.threshold_pct {
        Some(t) if c.regressions > 0 => format!(
            "{} regressed by more than {t} % against {} (or did not run)",
            plural(c.regressions),
            c.runs[0].label
        ),
        Some(t) => format!(
            "no result regressed by more than {t} % against {}",
            c.runs[0].label
        ),
        None => "not judged (--fail-on-regression PCT judges)".into(),
    }
}

fn plural(n: usize) -> String {
    format!("{n} result{}", if n == 1 { "" } else { "s" })
}

/// The text report.
pub fn text(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let first = &c.runs[0].label;
    writeln!(
        out,
        "rocmenv report compare: {} bench results, {} rows, each against {first}",
        c.runs.len(),
        c.rows.len()
    )?;
    for r in &c.runs {
        put(out, "  ", "      ", &run_line(r))?;
    }
    for row in &c.rows {
        writeln!(out)?;
        put(out, "", "  ", &key(row))?;
        for (run, cell) in c.runs.iter().zip(&row.results) {
            let line = match cell {
                Some(f) => format!("{}  {}", cell_line(f), versus(f, first)),
                None => "not measured (failed, skipped or not run)".into(),
            };
            put(out, &format!("  {}  ", run.label), "      ", &line)?;
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", verdict(c))
}

fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('<', "&lt;")
}

/// Markdown: the results, then one table.
pub fn markdown(c: &Comparison, out: &mut dyn Write) -> io::Result<()> {
    let first = &c.runs[0].label;
    writeln!(out, "## rocmenv report compare")?;
    writeln!(out)?;
    for r in &c.runs {
        put(
            out,
            "- ",
            "  ",
            &md(&format!(
                "**{}** {}",
                r.label,
                &run_line(r)[r.label.len() + 2..]
            )),
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "| benchmark | run | throughput | p50 ms | p99 ms | peak memory | cv % | vs {first} |"
    )?;
    writeln!(out, "| --- | --- | --: | --: | --: | --: | --: | --- |")?;
    for row in &c.rows {
        let k: String = md(&key(row)).chars().take(60).collect();
        for (run, cell) in c.runs.iter().zip(&row.results) {
            match cell {
                Some(f) => writeln!(
                    out,
                    "| {k} | {} | {} {} | {} | {} | {} | {} | {} |",
                    run.label,
                    opt(f.throughput),
                    md(&f.unit),
                    opt(f.p50_ms),
                    opt(f.p99_ms),
                    mem(f.peak_memory_bytes),
                    cv(f.cv_pct),
                    versus(f, first)
                )?,
                None => writeln!(out, "| {k} | {} | not measured | | | | | |", run.label)?,
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", verdict(c))
}

/// One JSON document (`kind: compare`).
pub fn json(c: &Comparison) -> Value {
    json!({
        "schema_version": 1,
        "kind": "compare",
        "rocmenv_version": env!("CARGO_PKG_VERSION"),
        "runs": c.runs,
        "rows": c.rows,
        "threshold_pct": c.threshold_pct,
        "regressions": c.regressions,
    })
}

/// A bar of the page: one result's throughput as a share of the row's best.
#[derive(Serialize)]
struct BarView {
    label: String,
    pct: f64,
    figure: String,
    detail: String,
    versus: String,
    regressed: bool,
}

#[derive(Serialize)]
struct RowView {
    key: String,
    bars: Vec<BarView>,
}

fn bars(row: &CompareRow, first: &str) -> Vec<BarView> {
    let best = row
        .results
        .iter()
        .flatten()
        .filter_map(|f| f.throughput)
        .fold(0.0_f64, f64::max);
    row.results
        .iter()
        .enumerate()
        .map(|(i, cell)| match cell {
            Some(f) => BarView {
                label: f.label.clone(),
                pct: match (f.throughput, best > 0.0) {
                    (Some(t), true) => (t / best * 100.0 * 10.0).round() / 10.0,
                    _ => 0.0,
                },
                figure: format!("{} {}", opt(f.throughput), f.unit),
                detail: format!(
                    "p50 {} ms · p99 {} ms · peak {} · cv {} %",
                    opt(f.p50_ms),
                    opt(f.p99_ms),
                    mem(f.peak_memory_bytes),
                    cv(f.cv_pct)
                ),
                versus: versus(f, first),
                regressed: f.regressed,
            },
            None => BarView {
                label: crate::fleet::compare::label(i),
                pct: 0.0,
                figure: "not measured".into(),
                detail: String::new(),
                versus: String::new(),
                regressed: false,
            },
        })
        .collect()
}

/// What the page template reads.
#[derive(Serialize)]
struct PageView<'a> {
    version: &'static str,
    runs: &'a [RunInfo],
    rows: Vec<RowView>,
    verdict: String,
    regressed: bool,
}

/// The page.
pub fn html(c: &Comparison) -> Result<String, minijinja::Error> {
    let first = &c.runs[0].label;
    let rows: Vec<RowView> = c
        .rows
        .iter()
        .map(|r| RowView {
            key: key(r),
            bars: bars(r, first),
        })
        .collect();
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
    env.add_template("compare.html", include_str!("html/compare.html"))?;
    env.get_template("compare.html")?
        .render(minijinja::value::Serde(PageView {
            version: env!("CARGO_PKG_VERSION"),
            runs: &c.runs,
            rows,
            verdict: verdict(c),
            regressed: c.regressions > 0,
        }))
}
