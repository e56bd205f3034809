//! `rocmenv report merge|html`: read every file (a bad one is a one-line error naming it), merge, write one format
//! (and, with `--html`, the page).

use crate::cli::{HtmlArgs, MergeArgs, MergeFormatArg, ReportArgs, ReportCommand};
use crate::error::Error;
use crate::ops::files::{write_atomic, write_html};
use crate::ops::fleet::{self, render};
use crate::report::html;
use std::io::Write;
use std::path::PathBuf;

/// Reads `files`, each as its JSON document and node reports; the first file that is not a report ends it with
/// [`Error::Report`].
pub fn read_sources(files: &[PathBuf]) -> Result<Vec<html::Source>, Error> {
    let mut out = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).map_err(|e| Error::Report {
            path: path.clone(),
            why: format!("cannot be read ({e})"),
        })?;
        let text = String::from_utf8(bytes).map_err(|_| Error::Report {
            path: path.clone(),
            why: "is not UTF-8 text".into(),
        })?;
        let (doc, reports) = fleet::parse_doc(path, &text).map_err(|why| Error::Report {
            path: path.clone(),
            why,
        })?;
        out.push(html::Source {
            file: path.display().to_string(),
            doc,
            reports,
        });
    }
    Ok(out)
}

/// Reads and merges `files`; the first file that is not a report ends it with [`Error::Report`].
pub fn merge_files(files: &[PathBuf]) -> Result<fleet::Merged, Error> {
    let reports: Vec<fleet::NodeReport> = read_sources(files)?
        .into_iter()
        .flat_map(|s| s.reports)
        .collect();
    Ok(fleet::merge(&reports))
}

fn render(m: &fleet::Merged, format: MergeFormatArg, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        MergeFormatArg::Text => render::text(m, out),
        MergeFormatArg::Markdown => render::markdown(m, out),
        MergeFormatArg::Junit => out.write_all(crate::report::merge_junit(m).as_bytes()),
        MergeFormatArg::Json => {
            let text =
                serde_json::to_string_pretty(&render::json(m)).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\n")
        }
    }
}

fn exit_code(m: &fleet::Merged) -> i32 {
    if m.failed() {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    }
}

fn merge(a: MergeArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let sources = read_sources(&a.files)?;
    let reports: Vec<fleet::NodeReport> = sources.iter().flat_map(|s| s.reports.clone()).collect();
    let m = fleet::merge(&reports);
    if let Some(path) = &a.html {
        write_html(path, "rocmenv report merge", &sources)?;
    }
    match &a.output {
        Some(path) => {
            let mut buf = Vec::new();
            render(&m, a.format, &mut buf).map_err(Error::Output)?;
            write_atomic(path, &buf)?;
        }
        None => super::written(render(&m, a.format, out))?,
    }
    Ok(exit_code(&m))
}

fn page(a: HtmlArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let sources = read_sources(&a.files)?;
    let p = html::page(&a.title, &sources);
    let text = html::render(&p).map_err(|e| Error::Output(std::io::Error::other(e)))?;
    write_atomic(&a.output, text.as_bytes())?;
    super::written(writeln!(
        out,
        "rocmenv report html: wrote {} ({} nodes, {} charts)",
        a.output.display(),
        p.nodes.len(),
        p.charts.len()
    ))?;
    Ok(if p.failed {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    })
}

/// Runs `rocmenv report`; returns the exit code.
pub fn exec(a: ReportArgs, out: &mut dyn Write) -> Result<i32, Error> {
    match a.action {
        ReportCommand::Merge(m) => merge(m, out),
        ReportCommand::Html(h) => page(h, out),
    }
}
