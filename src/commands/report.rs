//! `rocmenv report merge`: read every file (a bad one is a one-line error naming it), merge, write one format.

use crate::cli::{MergeArgs, MergeFormatArg, ReportArgs, ReportCommand};
use crate::error::Error;
use crate::fleet::{self, render};
use std::io::Write;

/// Reads and merges `files`; the first file that is not a report ends it with [`Error::Report`].
pub fn merge_files(files: &[std::path::PathBuf]) -> Result<fleet::Merged, Error> {
    let mut reports = Vec::new();
    for path in files {
        let bytes = std::fs::read(path).map_err(|e| Error::Report {
            path: path.clone(),
            why: format!("cannot be read ({e})"),
        })?;
        let text = String::from_utf8(bytes).map_err(|_| Error::Report {
            path: path.clone(),
            why: "is not UTF-8 text".into(),
        })?;
        reports.extend(fleet::parse(path, &text).map_err(|why| Error::Report {
            path: path.clone(),
            why,
        })?);
    }
    Ok(fleet::merge(&reports))
}

fn render(m: &fleet::Merged, format: MergeFormatArg, out: &mut dyn Write) -> std::io::Result<()> {
    match format {
        MergeFormatArg::Text => render::text(m, out),
        MergeFormatArg::Markdown => render::markdown(m, out),
        MergeFormatArg::Junit => out.write_all(render::junit(m).as_bytes()),
        MergeFormatArg::Json => {
            let text =
                serde_json::to_string_pretty(&render::json(m)).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\n")
        }
    }
}

fn merge(a: MergeArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let m = merge_files(&a.files)?;
    match &a.output {
        Some(path) => {
            let mut buf = Vec::new();
            render(&m, a.format, &mut buf).map_err(Error::Output)?;
            super::suite::write_atomic(path, &buf)?;
        }
        None => super::written(render(&m, a.format, out))?,
    }
    Ok(if m.failed() {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    })
}

/// Runs `rocmenv report`; returns the exit code.
pub fn exec(a: ReportArgs, out: &mut dyn Write) -> Result<i32, Error> {
    match a.action {
        ReportCommand::Merge(m) => merge(m, out),
    }
}
