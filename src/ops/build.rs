//! build's work: a context (a directory, or a rendered stack) built through the context's engine.

use super::{Ctx, Event, Sink};
use crate::dockerfile::{Rendered, Stack};
use crate::engine::{self, BuildContext};
pub use crate::engine::{BuildFlags, BuildOutcome};
use crate::error::Error;
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

impl BuildSource {
    /// The files of `stack`, rendered: its Dockerfile and the rest of its context.
    pub fn rendered(stack: Stack, r: &Rendered) -> BuildSource {
        let mut files = vec![(
            PathBuf::from("Dockerfile"),
            r.dockerfile.clone().into_bytes(),
        )];
        files.extend(r.files.iter().cloned());
        BuildSource::Files {
            stack: stack.name().to_string(),
            files,
        }
    }
}

/// What a build is given beside its source: `--tag`, `--pull`, `--no-cache`.
#[derive(Debug, Clone, Default)]
pub struct BuildPlan {
    /// Extra tags, each checked as an image reference.
    pub tags: Vec<String>,
    /// `--pull`, `--no-cache`.
    pub flags: BuildFlags,
}

/// Builds `source` through the context's engine; progress goes to `on`.
pub fn build(
    ctx: &Ctx,
    source: &BuildSource,
    plan: &BuildPlan,
    on: Sink,
) -> Result<BuildOutcome, Error> {
    let (bctx, stack) = match source {
        BuildSource::Dir(d) => (BuildContext::from_dir(d)?, "context"),
        BuildSource::Files { stack, files } => {
            (BuildContext::from_files(files, None)?, stack.as_str())
        }
    };
    let engine = ctx.engine()?;
    engine::build_context(engine, &bctx, stack, &plan.tags, plan.flags, &mut |ev| {
        on(Event::Build(&ev))
    })
}
