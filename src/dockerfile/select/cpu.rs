//! The cpu stack's base: Debian bookworm, or a pinned local image the user names.

use super::base::BaseImage;
use crate::dockerfile::request::DockerfileRequest;
use crate::error::Error;
use crate::sanitize;

/// The cpu stack's default base: Debian 12, whose `python3-torch` needs no GPU and no extra registry.
pub const CPU_DEFAULT_BASE: &str = "debian:bookworm-slim";
/// Debian bookworm's Python and `python3-torch` versions, for the default cpu base's labels.
const BOOKWORM_PYTHON: &str = "3.11";
const BOOKWORM_PYTORCH: &str = "1.13.1";

pub(super) fn select_cpu(req: &DockerfileRequest) -> Result<BaseImage, Error> {
    let Some(base) = &req.base else {
        return Ok(BaseImage {
            reference: CPU_DEFAULT_BASE.into(),
            digest: None,
            matrix_release: "cpu-debian-bookworm".into(),
            rocm: None,
            pytorch: Some(BOOKWORM_PYTORCH.into()),
            python: Some(BOOKWORM_PYTHON.into()),
            ubuntu: None,
            cuda: None,
            unconfirmed: false,
            notes: Vec::new(),
            wheels: None,
        });
    };
    let parsed = sanitize::image_reference("base", base)?;
    let digest = parsed.digest.clone();
    let tag = parsed.tag.as_deref();
    if digest.is_none() && tag.is_none_or(|t| t == "latest") {
        return Err(Error::Invalid {
            fields: vec!["base".into()],
            value: None,
            message: format!(
                "`{base}` is not pinned; name a tag other than `latest` (or a digest) so the build is reproducible"
            ),
        });
    }
    Ok(BaseImage {
        reference: base.clone(),
        digest,
        matrix_release: "cpu-base".into(),
        rocm: None,
        pytorch: None,
        python: None,
        ubuntu: None,
        cuda: None,
        unconfirmed: false,
        notes: vec![format!(
            "{base} must be Debian-based with python3-torch in its apt sources"
        )],
        wheels: None,
    })
}
