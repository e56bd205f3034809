//! `rocmenv build`: read the context, build it through the engine with progress on stderr, print the outcome.

use super::dockerfile::StackPlan;
use crate::cli::BuildArgs;
use crate::engine::{self, BuildContext, BuildOutcome, Engine};
use crate::error::Error;
use crate::report::BuildProgress;
use std::io::Write;
use std::path::PathBuf;

/// What to build.
#[derive(Debug, Clone)]
pub enum BuildSource {
    /// `--context DIR`: a directory holding a Dockerfile; tagged `rocmenv/context:<hash>`.
    Dir(PathBuf),
    /// Rendered files (a stack's Dockerfile and friends), tagged `rocmenv/<stack>:<hash>`.
    Files {
        /// The stack name in the tag (`rocm`, `ngc`, `cpu`).
        stack: String,
        /// Relative paths and contents; one is `Dockerfile`.
        files: Vec<(PathBuf, Vec<u8>)>,
    },
}

/// Runs `rocmenv build`: the outcome goes to `out` (JSON or one line), progress to `err` (bars only when
/// `terminal`). Returns the exit code.
pub fn exec(
    a: BuildArgs,
    matrices: Option<PathBuf>,
    terminal: bool,
    out: &mut dyn Write,
    mut err: Box<dyn Write>,
) -> Result<i32, Error> {
    // Names are checked before anything is built, so a bad --tag does not cost a build.
    for t in &a.tag {
        crate::sanitize::image_reference("tag", t)?;
    }
    let source = match (a.context, StackPlan::from_args(a.stack, matrices)?) {
        (Some(dir), _) => BuildSource::Dir(dir),
        (None, Some(plan)) => build_source(&plan, &mut err)?,
        (None, None) => unreachable!("clap requires --context or --stack"),
    };
    let (ctx, stack) = match &source {
        BuildSource::Dir(d) => (BuildContext::from_dir(d)?, "context"),
        BuildSource::Files { stack, files } => {
            (BuildContext::from_files(files, None)?, stack.as_str())
        }
    };
    let engine = Engine::connect_default()?;
    let mut progress = BuildProgress::new(a.json, terminal, err);
    let flags = engine::BuildFlags {
        pull: a.pull,
        no_cache: a.no_cache,
    };
    let res = engine::build_context(&engine, &ctx, stack, &a.tag, flags, &mut |ev| {
        progress.event(&ev)
    });
    progress.finish();
    let outcome = res?;
    write_outcome(&outcome, a.json, out).map_err(Error::Output)?;
    Ok(crate::error::EXIT_OK)
}

/// Renders `o` into the files `rocmenv build` sends to the daemon; notes go to `err`.
pub fn build_source(
    o: &StackPlan,
    err: &mut dyn Write,
) -> Result<super::build::BuildSource, Error> {
    let rendered = super::dockerfile::render(o, err)?;
    let mut files = vec![(
        PathBuf::from("Dockerfile"),
        rendered.dockerfile.into_bytes(),
    )];
    files.extend(rendered.files);
    Ok(BuildSource::Files {
        stack: o.request.stack.name().to_string(),
        files,
    })
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
