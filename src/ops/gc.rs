//! gc's work: find the containers (and with `--images`, the images) rocmenv left behind, decide what may go, and
//! remove it, or in a dry run only say what would go; through the context's one engine connection.

use super::Ctx;
use crate::engine::{
    hostname, keep_reason, plan_image_gc, Engine, ImageGcOutcome, Kept, KeptImage,
};
pub use crate::engine::{GcOutcome, GcScope};
use crate::error::Error;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

/// What `rocmenv gc` is asked to do, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcPlan {
    /// Which containers may go.
    pub scope: GcScope,
    /// `--images`: also the images rocmenv built that no container uses.
    pub images: bool,
    /// `--dry-run`: decide, list, remove nothing.
    pub dry_run: bool,
}

/// What `rocmenv gc` did, or in a dry run would do.
#[derive(Debug, Clone, Default)]
pub struct GcReport {
    /// The containers removed (would be, in a dry run) and kept.
    pub containers: GcOutcome,
    /// With `--images`: the images removed (would be) and kept.
    pub images: Option<ImageGcOutcome>,
    /// True when nothing was removed because the plan asked for a dry run.
    pub dry_run: bool,
}

/// Runs gc as `p` says against the context's engine.
pub fn gc(ctx: &Ctx, p: &GcPlan) -> Result<GcReport, Error> {
    let engine = ctx.engine()?;
    let containers = containers(engine, p)?;
    let images = if p.images {
        Some(images(engine, p, &containers)?)
    } else {
        None
    };
    Ok(GcReport {
        containers,
        images,
        dry_run: p.dry_run,
    })
}

fn containers(engine: &Engine, p: &GcPlan) -> Result<GcOutcome, Error> {
    let host = hostname();
    let mut outcome = GcOutcome::default();
    for c in engine.managed_containers()? {
        if let Some((why, live)) = keep_reason(&c, p.scope, &host, Path::new("/proc")) {
            outcome.kept.push(Kept {
                container: c,
                why,
                live,
            });
        } else if p.dry_run || engine.remove_managed(&c)? {
            outcome.removed.push(c);
        }
    }
    Ok(outcome)
}

fn images(engine: &Engine, p: &GcPlan, gone: &GcOutcome) -> Result<ImageGcOutcome, Error> {
    let built = engine.built_images()?;
    // A dry run still sees the containers it would remove: their images count as free, as after a real run.
    let leaving: BTreeSet<&str> = gone.removed.iter().map(|c| c.name.as_str()).collect();
    let used: HashMap<String, String> = engine
        .image_users()?
        .into_iter()
        .filter(|(_, c)| !leaving.contains(c.as_str()))
        .collect();
    let all = p.scope != GcScope::Orphans;
    let (remove, mut kept) = plan_image_gc(built, &used, all);
    if p.dry_run {
        return Ok(ImageGcOutcome {
            freed_bytes: remove.iter().map(|i| i.size).sum(),
            freed_measured: false,
            removed: remove,
            kept,
        });
    }
    let before = engine.layers_size();
    let mut removed = Vec::new();
    for i in remove {
        match engine.remove_built_image(&i)? {
            Some(why) => kept.push(KeptImage {
                image: i,
                why: format!("the engine refused: {why}"),
            }),
            None => removed.push(i),
        }
    }
    let after = if removed.is_empty() {
        before
    } else {
        engine.layers_size()
    };
    let (freed_bytes, freed_measured) = match (before, after) {
        (Some(b), Some(a)) => (b.saturating_sub(a), true),
        _ => (removed.iter().map(|i| i.size).sum(), false),
    };
    Ok(ImageGcOutcome {
        removed,
        kept,
        freed_bytes,
        freed_measured,
    })
}
