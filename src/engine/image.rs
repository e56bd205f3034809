//! Images in the daemon's store: make sure one is there, pulling it by tag or digest when a registry answers.

use super::connect::Engine;
use super::events::BuildEvent;
use super::fault::describe;
use crate::error::Error;
use crate::image_ref::ImageRef;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures_util::StreamExt;
use std::time::Duration;

/// How long a pull of a missing image may take before it counts as impossible.
const PULL_TIMEOUT: Duration = Duration::from_secs(60);

/// Makes sure `image` is in the daemon's store, pulling it if it can; without a registry, says how to provide it.
pub(crate) async fn ensure_image(
    engine: &Engine,
    image: &str,
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<(), Error> {
    let d = &engine.docker;
    match d.inspect_image(image).await {
        Ok(_) => return Ok(()),
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => {}
        Err(e) => {
            return Err(Error::Engine(format!(
                "cannot inspect {image}: {}",
                describe(&e)
            )))
        }
    }
    pull_image(engine, image, on_event).await
}

/// Pulls `image` from its registry, also when the daemon has it (`build --pull`); without a registry, says how to
/// provide it.
pub(crate) async fn pull_image(
    engine: &Engine,
    image: &str,
    on_event: &mut dyn FnMut(BuildEvent),
) -> Result<(), Error> {
    let d = &engine.docker;
    on_event(BuildEvent::Pulling {
        image: image.to_string(),
    });
    let reference = ImageRef::parse(image).map_err(|why| Error::Reference {
        reference: image.to_string(),
        why,
    })?;
    let (repo, version) = reference.pull_target();
    let opts = CreateImageOptionsBuilder::new()
        .from_image(&repo)
        .tag(&version)
        .build();
    let pull = async {
        let mut s = d.create_image(Some(opts), None, None);
        while let Some(item) = s.next().await {
            let info = item.map_err(|e| describe(&e))?;
            if let Some(status) = info.status {
                let p = info.progress_detail.unwrap_or_default();
                on_event(BuildEvent::Progress {
                    id: info.id.unwrap_or_default(),
                    status,
                    current: p.current.map(|c| c.max(0) as u64),
                    total: p.total.map(|t| t.max(0) as u64),
                });
            }
        }
        Ok::<(), String>(())
    };
    let why = match tokio::time::timeout(PULL_TIMEOUT, pull).await {
        Ok(Ok(())) => return Ok(()),
        Ok(Err(why)) => why,
        Err(_) => format!(
            "no answer from the registry within {} s",
            PULL_TIMEOUT.as_secs()
        ),
    };
    Err(Error::ImageMissing {
        image: image.to_string(),
        why,
    })
}
