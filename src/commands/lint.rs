//! `rocmenv lint`: validate the flags, read and judge the files (no daemon), print.

use crate::cli::LintArgs;
use crate::error::Error;
use crate::ops::lint::LintRequest;
use crate::ops::Ctx;
use crate::report::{render_lint, render_lint_json, Style};
use std::io::Write;

/// Runs `rocmenv lint`; returns the exit code.
pub fn exec(o: LintArgs, ctx: &Ctx, style: Style, out: &mut dyn Write) -> Result<i32, Error> {
    let m = ctx.matrices()?;
    let rocm = o
        .rocm
        .as_deref()
        .map(|s| super::rocm_release(m, s))
        .transpose()?;
    let req = LintRequest {
        paths: o.paths,
        gfx: o.gfx,
        rocm,
    };
    let report = crate::ops::lint::lint(ctx, &req)?;
    super::written(if o.json {
        render_lint_json(&report, out)
    } else {
        render_lint(&report, style, out)
    })?;
    Ok(report.exit_code(o.strict))
}
