//! `rocmenv lint`'s report: a header naming the files and the GPUs judged against, then each file's findings by
//! line with doctor's marks, each with its fix, and a count line; or one JSON document.

use super::human::{mark, Style};
use crate::lint::LintReport;
use crate::status::Status;
use std::io::{self, Write};

/// The human report.
pub fn render_lint(r: &LintReport, style: Style, out: &mut dyn Write) -> io::Result<()> {
    let kinds: Vec<String> = r
        .files
        .iter()
        .map(|f| format!("{} ({})", f.path, f.kind.word()))
        .collect();
    writeln!(out, "rocmenv lint: {}; GPUs: {}", kinds.join(", "), r.gpus)?;
    for f in &r.files {
        let mine: Vec<_> = r.findings.iter().filter(|x| x.path == f.path).collect();
        if mine.is_empty() {
            writeln!(
                out,
                "{} {}: nothing to report",
                mark(Status::Pass, style),
                f.path
            )?;
            continue;
        }
        for x in mine {
            let at = x
                .line
                .map(|l| format!("{}:{l}", x.path))
                .unwrap_or_else(|| x.path.clone());
            let scope = x
                .scope
                .as_deref()
                .map(|s| format!(" [{s}]"))
                .unwrap_or_default();
            writeln!(
                out,
                "{} {at}{scope} {}: {}",
                mark(x.status, style),
                x.id,
                x.summary
            )?;
            if let Some(fix) = &x.fix {
                writeln!(out, "    fix: {fix}")?;
            }
        }
    }
    writeln!(
        out,
        "{} failed, {} {}, {} skipped in {} {}",
        r.count(Status::Fail),
        r.count(Status::Warn),
        if r.count(Status::Warn) == 1 {
            "warning"
        } else {
            "warnings"
        },
        r.count(Status::Skip),
        r.files.len(),
        if r.files.len() == 1 { "file" } else { "files" },
    )
}

/// One JSON document: `schema_version`, the files, the GPUs, the findings and the counts.
pub fn render_lint_json(r: &LintReport, out: &mut dyn Write) -> io::Result<()> {
    let doc = serde_json::json!({
        "schema_version": 1,
        "files": r.files,
        "gpus": r.gpus,
        "findings": r.findings,
        "summary": {
            "fail": r.count(Status::Fail),
            "warn": r.count(Status::Warn),
            "skip": r.count(Status::Skip),
        },
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
