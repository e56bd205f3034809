//! `rocmenv build`: read the context, build it through the engine with progress on stderr, print the outcome.

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

/// Options of `rocmenv build`, parsed.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// What to build.
    pub source: BuildSource,
    /// `--tag`s.
    pub tags: Vec<String>,
    /// `--json`.
    pub json: bool,
}

/// Runs `rocmenv build`: the outcome goes to `out` (JSON or one line), progress to `err`. Returns the exit code.
pub fn run(
    o: &BuildOptions,
    terminal: bool,
    out: &mut dyn Write,
    err: Box<dyn Write>,
) -> Result<i32, Error> {
    let (ctx, stack) = match &o.source {
        BuildSource::Dir(d) => (BuildContext::from_dir(d)?, "context"),
        BuildSource::Files { stack, files } => {
            (BuildContext::from_files(files, None)?, stack.as_str())
        }
    };
    let engine = Engine::connect_default()?;
    let mut progress = BuildProgress::new(o.json, terminal, err);
    let res = engine::build_context(&engine, &ctx, stack, &o.tags, &mut |ev| progress.event(&ev));
    progress.finish();
    let outcome = res?;
    write_outcome(&outcome, o.json, out).map_err(Error::Output)?;
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
