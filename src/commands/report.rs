//! `rocmenv report merge|html|compare`: read every file one at a time (a bad one is a one-line error naming it),
//! merge, write one format (and, with `--html`, the page); compare bench results.

use crate::cli::{
    CompareArgs, CompareFormatArg, HtmlArgs, MergeArgs, MergeFormatArg, ReportArgs, ReportCommand,
};
use crate::error::Error;
use crate::ops::compare::{self as cmp, ComparePlan, Comparison};
use crate::ops::files::{write_atomic, write_page};
use crate::ops::fleet::{self, render};
use crate::report::compare as view;
use std::io::Write;

fn render(m: &fleet::Merged, format: MergeFormatArg, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        MergeFormatArg::Text => render::text(m, out),
        MergeFormatArg::Markdown => render::markdown(m, out),
        MergeFormatArg::Junit => out.write_all(crate::report::merge_junit(m).as_bytes()),
        MergeFormatArg::Json => render::json(m, out),
    }
}

fn exit_code(failed: bool) -> i32 {
    if failed {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    }
}

fn merge(a: MergeArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let (page, m) = fleet::read_all(&a.files)?.finish("rocmenv report merge");
    if let Some(path) = &a.html {
        write_page(path, &page)?;
    }
    drop(page);
    match &a.output {
        Some(path) => {
            let mut buf = Vec::new();
            render(&m, a.format, &mut buf).map_err(Error::Output)?;
            write_atomic(path, &buf)?;
        }
        None => {
            let mut w = std::io::BufWriter::new(out);
            super::written(render(&m, a.format, &mut w).and_then(|()| w.flush()))?
        }
    }
    Ok(exit_code(m.failed()))
}

fn page(a: HtmlArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let (p, _) = fleet::read_all(&a.files)?.finish(&a.title);
    write_page(&a.output, &p)?;
    super::written(writeln!(
        out,
        "rocmenv report html: wrote {} ({} nodes, {} charts)",
        a.output.display(),
        p.nodes.len(),
        p.charts.len()
    ))?;
    Ok(exit_code(p.failed))
}

fn render_compare(
    c: &Comparison,
    format: CompareFormatArg,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        CompareFormatArg::Text => view::text(c, out),
        CompareFormatArg::Markdown => view::markdown(c, out),
        CompareFormatArg::Json => {
            let text =
                serde_json::to_string_pretty(&view::json(c)).map_err(std::io::Error::other)?;
            writeln!(out, "{text}")
        }
        CompareFormatArg::Html => {
            let text = view::html(c).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())
        }
    }
}

fn compare(a: CompareArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let c = cmp::compare(&ComparePlan {
        files: a.files,
        fail_on_regression: a.fail_on_regression,
    })?;
    match &a.output {
        Some(path) => {
            let mut buf = Vec::new();
            render_compare(&c, a.format, &mut buf).map_err(Error::Output)?;
            write_atomic(path, &buf)?;
        }
        None => super::written(render_compare(&c, a.format, out))?,
    }
    Ok(exit_code(c.regressions > 0))
}

/// Runs `rocmenv report`; returns the exit code.
pub fn exec(a: ReportArgs, out: &mut dyn Write) -> Result<i32, Error> {
    match a.action {
        ReportCommand::Merge(m) => merge(m, out),
        ReportCommand::Html(h) => page(h, out),
        ReportCommand::Compare(c) => compare(c, out),
    }
}
