//! validate's report files: JUnit, JSON, HTML and Markdown where asked, and GitHub's step summary.

use crate::error::Error;
use crate::ops::files::{output_kind, write_atomic, write_html_of};
use crate::report::validate::{self as vr, ValidateReport};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The report files asked for: `--junit`, `--json`, `--html`, `--markdown`.
#[derive(Debug, Clone, Default)]
pub struct Reports {
    /// `--junit FILE`.
    pub junit: Option<PathBuf>,
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `--html FILE`.
    pub html: Option<PathBuf>,
    /// `--markdown FILE`.
    pub markdown: Option<PathBuf>,
}

impl Reports {
    /// Refuses, before any work, a report flag that names a directory (it would fail only after every stack ran).
    pub fn check(&self) -> Result<(), Error> {
        let all = [&self.junit, &self.json, &self.html, &self.markdown];
        for p in all.into_iter().flatten() {
            output_kind(p)?;
        }
        Ok(())
    }
}

/// Writes the files `to` asks for and, under GitHub Actions, appends the step summary; returns what was written
/// (`JUnit`, `JSON`, `HTML`, `Markdown`) and where, in that order.
pub fn write_reports(
    to: &Reports,
    r: &ValidateReport,
) -> Result<Vec<(&'static str, PathBuf)>, Error> {
    let write = |p: &Path, text: String| write_atomic(p, text.as_bytes());
    let mut written = Vec::new();
    if let Some(p) = &to.junit {
        write(p, vr::validate_junit(r))?;
        written.push(("JUnit", p.clone()));
    }
    if let Some(p) = &to.json {
        write(p, vr::validate_json(r))?;
        written.push(("JSON", p.clone()));
    }
    if let Some(p) = &to.html {
        write_html_of(p, "rocmenv validate", "validate.json", r)?;
        written.push(("HTML", p.clone()));
    }
    if let Some(p) = &to.markdown {
        write(p, vr::validate_markdown(r))?;
        written.push(("Markdown", p.clone()));
    }
    if let Some(p) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .and_then(|mut f| f.write_all(vr::validate_markdown(r).as_bytes()))
            .map_err(|e| Error::io("append to", &p, e))?;
    }
    Ok(written)
}
