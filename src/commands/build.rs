//! `rocmenv build`: the flags as a source and plan, `ops::build` with progress on stderr, the outcome printed.

use crate::cli::BuildArgs;
use crate::error::Error;
use crate::ops::build::{BuildFlags, BuildOutcome, BuildPlan, BuildSource};
use crate::ops::{Ctx, Event};
use crate::report::BuildProgress;
use std::io::Write;

/// Runs `rocmenv build`: the outcome goes to `out` (JSON or one line), progress to `err` (bars only when
/// `terminal`). Returns the exit code.
pub fn exec(
    a: BuildArgs,
    ctx: &Ctx,
    terminal: bool,
    out: &mut dyn Write,
    mut err: Box<dyn Write>,
) -> Result<i32, Error> {
    // Names are checked before anything is built, so a bad --tag does not cost a build.
    for t in &a.tag {
        crate::sanitize::image_reference("tag", t)?;
    }
    let plan = BuildPlan {
        tags: a.tag,
        flags: BuildFlags {
            pull: a.pull,
            no_cache: a.no_cache,
        },
    };
    let source = match (a.context, super::stack_plan(a.stack)?) {
        (Some(dir), _) => BuildSource::Dir(dir),
        (None, Some(stack)) => {
            let rendered = crate::ops::dockerfile::render(ctx, &stack, &mut |ev| {
                super::log_event(&mut err, &ev)
            })?;
            BuildSource::rendered(stack.request.stack, &rendered)
        }
        (None, None) => unreachable!("clap requires --context or --stack"),
    };
    let mut progress = BuildProgress::new(a.json, terminal, err);
    let res = crate::ops::build::build(ctx, &source, &plan, &mut |ev| {
        if let Event::Build(b) = ev {
            progress.event(b)
        }
    });
    progress.finish();
    let outcome = res?;
    write_outcome(&outcome, a.json, out).map_err(Error::Output)?;
    Ok(crate::error::EXIT_OK)
}

fn write_outcome(o: &BuildOutcome, json: bool, out: &mut dyn Write) -> std::io::Result<()> {
    if json {
        let doc = serde_json::to_string_pretty(o).map_err(std::io::Error::other)?;
        return writeln!(out, "{doc}");
    }
    // The daemon answers `sha256:<64 hex>` on a cache hit and the short id after a build: print the short one.
    let id = o.image_id.as_deref().map_or("id unknown", |i| {
        let hex = i.trim_start_matches("sha256:");
        &hex[..hex.len().min(12)]
    });
    let verb = if o.cached { "cached" } else { "built" };
    writeln!(
        out,
        "{verb} {} ({id}) in {:.2} s",
        o.tags.join(", "),
        o.seconds
    )
}
