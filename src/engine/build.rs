//! Building an image from a context: content-hash tags (a cache hit skips the builder), base-image checks, and a
//! stream of events in which a build error can arrive at any point.

use super::connect::Engine;
use super::context::{base_images, BuildContext};
use super::events::BuildEvent;
use super::fault::describe;
use super::image::{ensure_image, pull_image};
use super::signals::StopSignals;
use crate::error::Error;
use crate::image_ref::ImageRef;
use bollard::query_parameters::{
    BuildImageOptionsBuilder, RemoveContainerOptionsBuilder, TagImageOptionsBuilder,
};
use futures_util::StreamExt;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

/// How many lines of a failing step's output the error keeps.
const TAIL_LINES: usize = 20;

/// What a finished build produced.
#[derive(Debug, Clone, Serialize)]
pub struct BuildOutcome {
    /// `rocmenv/<stack>:<hash>`.
    pub tag: String,
    /// Every tag the image now carries (the content tag first, then `--tag`s).
    pub tags: Vec<String>,
    /// The image id (`sha256:…`), when the daemon said it.
    pub image_id: Option<String>,
    /// True when the image existed and the builder was not asked.
    pub cached: bool,
    /// The hash of the context.
    pub context_hash: String,
    /// The ids of the base images (`FROM`) the tag's hash includes, in `FROM` order.
    pub base_image_ids: Vec<String>,
    /// Wall time of the whole command in seconds.
    pub seconds: f64,
}

/// How a build treats what the daemon already has, as `docker build` has them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuildFlags {
    /// `--pull`: pull every base image even when the daemon has it, so a newer one under the same tag is used.
    pub pull: bool,
    /// `--no-cache`: neither take an existing image for the tag nor the builder's layer cache.
    pub no_cache: bool,
}

/// Builds rendered files (`files` holds `Dockerfile`) as `rocmenv/<stack>:<hash>`, plus `tags`.
pub fn build_files(
    engine: &Engine,
    files: &[(PathBuf, Vec<u8>)],
    stack: &str,
    tags: &[String],
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<BuildOutcome, Error> {
    let ctx = BuildContext::from_files(files, None)?;
    build_context(engine, &ctx, stack, tags, BuildFlags::default(), on_event)
}

/// The content tag of a context built on these base image ids: `rocmenv/<stack>:<hash>`.
pub fn content_tag(ctx: &BuildContext, stack: &str, base_ids: &[String]) -> String {
    format!("rocmenv/{stack}:{}", ctx.tag_hash(base_ids))
}

/// Builds a context as `rocmenv/<stack>:<hash>`, plus `tags`. The hash covers the context and the ids of its base
/// images (made present first), so an existing image for it is a cache hit only while the bases are unchanged.
pub fn build_context(
    engine: &Engine,
    ctx: &BuildContext,
    stack: &str,
    tags: &[String],
    flags: BuildFlags,
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<BuildOutcome, Error> {
    let start = Instant::now();
    let d = &engine.docker;
    let mut outcome = BuildOutcome {
        tag: String::new(),
        tags: Vec::new(),
        image_id: None,
        cached: false,
        context_hash: ctx.content_hash(),
        base_image_ids: Vec::new(),
        seconds: 0.0,
    };
    // The container of the step running now, so a Ctrl-C can remove it instead of trusting the daemon to.
    let running: RefCell<Option<String>> = RefCell::new(None);
    // Known before the work starts, for the message when a signal cancels it.
    let current_tag = RefCell::new(content_tag(ctx, stack, &[]));
    let work = async {
        outcome.base_image_ids = present_base_ids(engine, ctx, flags, on_event).await?;
        let tag = content_tag(ctx, stack, &outcome.base_image_ids);
        *current_tag.borrow_mut() = tag.clone();
        outcome.tag = tag.clone();
        outcome.tags = vec![tag.clone()];
        let existing = match flags.no_cache {
            true => None,
            false => d.inspect_image(&tag).await.ok(),
        };
        if let Some(img) = existing {
            on_event(BuildEvent::CacheHit { tag: tag.clone() });
            outcome.cached = true;
            outcome.image_id = img.id;
        } else {
            let said = run_build(engine, ctx, stack, &tag, flags, on_event, &running).await?;
            outcome.image_id = stored_image_id(engine, &tag, said).await?;
        }
        add_tags(engine, &tag, tags).await?;
        outcome.tags.extend(tags.iter().cloned());
        Ok::<(), Error>(())
    };
    engine.rt.block_on(async {
        let mut signals = StopSignals::install()?;
        // Dropping `work` closes the build's connection, which makes the daemon cancel the build.
        let signal = tokio::select! {
            r = work => return match r {
                Err(e) => Err(engine.explain_lost(e, "the build").await),
                ok => ok,
            },
            s = signals.recv() => s,
        };
        let tag = current_tag.borrow().clone();
        let step_container = running.borrow_mut().take();
        let what = cancel_build(engine, &tag, step_container).await;
        Err(Error::Interrupted { signal, what })
    })
    .map_err(|e| match e {
        // Podman (4.3) cancels the build but keeps its Buildah working container, which its Docker API cannot list.
        Error::Interrupted { signal, mut what }
            if engine.info().is_ok_and(|i| i.product == "Podman") =>
        {
            what.push_str("; Podman keeps the build's working container: list it with `podman ps -a --external` and remove it with `podman rm`");
            Error::Interrupted { signal, what }
        }
        e => e,
    })?;
    outcome.seconds = start.elapsed().as_secs_f64();
    Ok(outcome)
}

/// Makes each base image of the context present (pulled when `flags.pull`) and returns their ids, in order.
async fn present_base_ids(
    engine: &Engine,
    ctx: &BuildContext,
    flags: BuildFlags,
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<Vec<String>, Error> {
    let d = &engine.docker;
    let mut ids = Vec::new();
    for base in base_images(&ctx.dockerfile()) {
        if flags.pull {
            pull_image(engine, &base, on_event).await?;
        } else {
            ensure_image(engine, &base, on_event).await?;
        }
        let id = d
            .inspect_image(&base)
            .await
            .map_err(|e| Error::Engine(format!("cannot inspect {base}: {}", describe(&e))))?
            .id
            .unwrap_or_default();
        ids.push(id);
    }
    Ok(ids)
}

/// The built image's full id from the store, else the (short) id the build stream `said`.
async fn stored_image_id(
    engine: &Engine,
    tag: &str,
    said: Option<String>,
) -> Result<Option<String>, Error> {
    // The classic builder prints a short id; the store has the full one.
    match engine.docker.inspect_image(tag).await {
        Ok(i) => Ok(i.id.or(said)),
        Err(_) if said.is_some() => Ok(said),
        // The stream ended without an image and the store has none: the daemon went away or cut the build.
        Err(e) => Err(Error::Engine(format!(
            "the build ended without an image: {}",
            describe(&e)
        ))),
    }
}

/// Tags the built image `tag` with each of `tags` as well.
async fn add_tags(engine: &Engine, tag: &str, tags: &[String]) -> Result<(), Error> {
    for t in tags {
        let target = ImageRef::parse(t).map_err(|why| Error::Reference {
            reference: t.clone(),
            why,
        })?;
        let opts = TagImageOptionsBuilder::new()
            .repo(&target.repository())
            .tag(target.tag.as_deref().unwrap_or("latest"))
            .build();
        engine
            .docker
            .tag_image(tag, Some(opts))
            .await
            .map_err(|e| Error::Engine(format!("cannot tag {tag} as {t}: {}", describe(&e))))?;
    }
    Ok(())
}

/// Removes the cancelled build's step container, if one was running, and says what the cancel left behind.
async fn cancel_build(engine: &Engine, tag: &str, step_container: Option<String>) -> String {
    let mut what = format!("the build of {tag} was cancelled");
    if let Some(id) = step_container {
        let opts = RemoveContainerOptionsBuilder::new().force(true).build();
        match engine.docker.remove_container(&id, Some(opts)).await {
            Ok(()) => what.push_str(&format!(" and its step container {id} removed")),
            // Already gone: the daemon cleaned up first.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(e) => what.push_str(&format!(
                "; its step container {id} may be left: docker rm -f {id} ({})",
                describe(&e)
            )),
        }
    }
    what
}

/// Drops terminal escapes (the classic builder colours a step's stderr red).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters… final byte in @..~
            if chars.next() == Some('[') {
                for f in chars.by_ref() {
                    if ('@'..='~').contains(&f) {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The builder's own bookkeeping lines, which say nothing about why a step failed.
fn is_builder_noise(line: &str) -> bool {
    let l = line.trim_start();
    l.starts_with("---> ")
        || l.starts_with("--> ")
        || l.starts_with("Removing intermediate container")
}

/// `Step 2/5 : RUN make` (Docker's classic builder) or `STEP 2/5: RUN make` (Podman/Buildah) → (2, 5, `RUN make`).
fn parse_step(line: &str) -> Option<(u32, u32, String)> {
    let (nums, instruction) = match line.strip_prefix("Step ") {
        Some(rest) => rest.split_once(" : ")?,
        None => line.strip_prefix("STEP ")?.split_once(": ")?,
    };
    let (i, n) = nums.split_once('/')?;
    Some((
        i.parse().ok()?,
        n.parse().ok()?,
        instruction.trim().to_string(),
    ))
}

async fn run_build(
    engine: &Engine,
    ctx: &BuildContext,
    stack: &str,
    tag: &str,
    flags: BuildFlags,
    on_event: &mut dyn FnMut(BuildEvent),
    running: &RefCell<Option<String>>,
) -> Result<Option<String>, Error> {
    let labels = HashMap::from([
        (super::image_gc::STACK_LABEL.to_string(), stack.to_string()),
        ("rocmenv.context-hash".to_string(), ctx.content_hash()),
    ]);
    let opts = BuildImageOptionsBuilder::new()
        .dockerfile("Dockerfile")
        .t(tag)
        .rm(true)
        .forcerm(true)
        .nocache(flags.no_cache)
        .labels(&labels)
        .build();
    let body = bollard::body_full(ctx.to_tar()?.into());
    let mut stream = engine.docker.build_image(opts, None, Some(body));
    let mut step: Option<String> = None;
    let mut tail: VecDeque<String> = VecDeque::new();
    let mut image_id = None;
    while let Some(item) = stream.next().await {
        let info = match item {
            Ok(info) => info,
            Err(e) => {
                let message = describe(&e);
                on_event(BuildEvent::Error(message.clone()));
                return Err(match (&e, step) {
                    (bollard::errors::Error::DockerStreamError { .. }, Some(step)) => {
                        Error::BuildFailed {
                            step,
                            message,
                            tail: tail
                                .iter()
                                .map(|l| format!("  | {l}"))
                                .collect::<Vec<_>>()
                                .join("\n"),
                        }
                    }
                    _ => Error::Engine(format!("the build could not start: {message}")),
                });
            }
        };
        if let Some(text) = info.stream {
            let text = strip_ansi(&text);
            for line in text
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty())
            {
                if let Some((index, total, instruction)) = parse_step(line) {
                    step = Some(line.to_string());
                    tail.clear();
                    on_event(BuildEvent::Step {
                        index,
                        total,
                        instruction,
                    });
                } else {
                    let l = line.trim_start();
                    if let Some(id) = l.strip_prefix("---> Running in ") {
                        *running.borrow_mut() = Some(id.trim().to_string());
                    } else if l.starts_with("Removing intermediate container") {
                        *running.borrow_mut() = None;
                    }
                    if let Some(id) = line.strip_prefix("Successfully built ") {
                        image_id = Some(id.trim().to_string());
                    }
                    if !is_builder_noise(line) {
                        tail.push_back(line.to_string());
                    }
                    if tail.len() > TAIL_LINES {
                        tail.pop_front();
                    }
                    on_event(BuildEvent::Line(line.to_string()));
                }
            }
        }
        if let Some(status) = info.status {
            let p = info.progress_detail.unwrap_or_default();
            on_event(BuildEvent::Progress {
                id: info.id.unwrap_or_default(),
                status,
                current: p.current.map(|c| c.max(0) as u64),
                total: p.total.map(|t| t.max(0) as u64),
            });
        }
        if let Some(id) = info.aux.and_then(|a| a.id) {
            image_id = Some(id);
        }
    }
    Ok(image_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_parsed() {
        assert_eq!(
            parse_step("Step 2/5 : RUN make -j"),
            Some((2, 5, "RUN make -j".into()))
        );
        // Podman 4.3's builder, as it streams over the Docker API.
        assert_eq!(
            parse_step("STEP 3/5: RUN false"),
            Some((3, 5, "RUN false".into()))
        );
        assert_eq!(parse_step(" ---> Running in 1234"), None);
        assert_eq!(parse_step("--> 86addcb6f9f"), None);
        assert_eq!(parse_step("STEP x/5: RUN"), None);
    }

    #[test]
    fn escapes_and_builder_noise_are_dropped() {
        assert_eq!(
            strip_ansi("\u{1b}[91mlast words\n\u{1b}[0m"),
            "last words\n"
        );
        assert!(is_builder_noise(" ---> Running in ad7c1d515348"));
        assert!(is_builder_noise(
            "Removing intermediate container ad7c1d515348"
        ));
        assert!(is_builder_noise("--> 86addcb6f9f"));
        assert!(!is_builder_noise("about-to-fail"));
    }
}
