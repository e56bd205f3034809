//! `rocmenv probe`: ask the GPU runtimes themselves what they see, and report it.

use crate::error::Error;
use crate::runtime::{self, RuntimeOptions};
use std::io::Write;

/// Probes every runtime; the report goes to `out` as text or one JSON document. Returns the exit code.
pub fn exec(json: bool, out: &mut dyn Write) -> Result<i32, Error> {
    let report = runtime::probe_all(&RuntimeOptions::from_env());
    super::written(if json {
        serde_json::to_string_pretty(&report)
            .map_err(std::io::Error::other)
            .and_then(|t| writeln!(out, "{t}"))
    } else {
        crate::report::render_runtime(&report, out)
    })?;
    Ok(runtime::exit_code(&report))
}
