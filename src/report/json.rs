//! `doctor --json`: one document, as DESIGN.md fixes it (`schema_version`, `host`, `checks`, `summary`), plus `target` and
//! `node` (the host a fleet report names).

use super::DoctorReport;
use serde_json::json;
use std::io::Write;

/// The JSON document of a doctor run.
pub fn doctor_json(r: &DoctorReport) -> serde_json::Value {
    json!({
        "schema_version": 1,
        "rocmenv_version": env!("CARGO_PKG_VERSION"),
        "node": r.node,
        "target": r.target,
        "matrices": r.matrices_origin,
        "host": r.facts,
        "checks": r.findings,
        "summary": r.summary,
        "verdict": r.verdict(),
    })
}

/// Writes the document, pretty-printed, with a trailing newline.
pub fn render_json(r: &DoctorReport, out: &mut dyn Write) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(&doctor_json(r)).map_err(std::io::Error::other)?;
    out.write_all(text.as_bytes())?;
    out.write_all(b"\n")
}
