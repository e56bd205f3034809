//! `rocmenv probe`: ask the GPU runtimes themselves what they see (`ops::probe`), and report it.

use crate::error::Error;
use crate::ops::probe::{self, RuntimeOptions};
use std::io::Write;

/// Probes every runtime; the report goes to `out` as text or one JSON document. Returns the exit code.
pub fn exec(json: bool, out: &mut dyn Write) -> Result<i32, Error> {
    let found = probe::probe(&RuntimeOptions::from_env());
    super::written(if json {
        serde_json::to_string_pretty(&found.report)
            .map_err(std::io::Error::other)
            .and_then(|t| writeln!(out, "{t}"))
    } else {
        crate::report::render_runtime(&found.report, out)
    })?;
    Ok(found.exit_code)
}
