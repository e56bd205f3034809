//! `rocmenv fix`: plan the changes (and with `--apply` make them, with `--undo` revert them), print.

use crate::cli::FixArgs;
use crate::error::Error;
use crate::ops::fix::{FixRequest, FixRoot};
use crate::ops::Ctx;
use crate::report::{render_fix, render_fix_json, FixOutcome};
use std::io::Write;

/// Runs `rocmenv fix`; returns the exit code.
pub fn exec(o: FixArgs, ctx: &Ctx, out: &mut dyn Write) -> Result<i32, Error> {
    if o.undo {
        let root = match &o.sysroot {
            None => FixRoot::Live,
            Some(p) if p.is_dir() => FixRoot::Tree(p.clone()),
            Some(p) => FixRoot::Bundle(p.clone()),
        };
        let undone = crate::ops::fix::undo(&root)?;
        super::written(if o.json {
            render_fix_json(None, &FixOutcome::Undone(&undone), out)
        } else {
            render_fix(None, &FixOutcome::Undone(&undone), out)
        })?;
        return Ok(crate::error::EXIT_OK);
    }
    let plan = crate::ops::fix::plan(
        ctx,
        &FixRequest {
            only: o.only,
            user: o.user,
            target: o.target,
        },
    )?;
    let applied = if o.apply {
        Some(crate::ops::fix::apply(&plan)?)
    } else {
        None
    };
    let outcome = match &applied {
        Some(a) => FixOutcome::Applied(a),
        None => FixOutcome::Planned,
    };
    super::written(if o.json {
        render_fix_json(Some(&plan), &outcome, out)
    } else {
        render_fix(Some(&plan), &outcome, out)
    })?;
    Ok(crate::error::EXIT_OK)
}
