//! What every stack's pick returns: the base image and what the matrices say is inside it.

use crate::error::Error;
use crate::sanitize;

/// How many alternatives an error lists.
pub(crate) const NEAREST: usize = 5;

/// The image a Dockerfile starts from, and what the matrices say is inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseImage {
    /// The `FROM` reference: `repository:tag`, plus `@sha256:…` when the matrix pins a digest.
    pub reference: String,
    /// The digest the reference is pinned to, if any.
    pub digest: Option<String>,
    /// The matrix record used: `rocm-6.2.4`, `ngc-24.05`, `cpu-debian-bookworm`.
    pub matrix_release: String,
    /// ROCm version (rocm stack).
    pub rocm: Option<String>,
    /// PyTorch version inside, when known.
    pub pytorch: Option<String>,
    /// Python version inside, when known.
    pub python: Option<String>,
    /// Ubuntu version of the image, when known.
    pub ubuntu: Option<String>,
    /// CUDA version inside (ngc stack).
    pub cuda: Option<String>,
    /// True when the matrix marks the tag unconfirmed: it may not exist on the registry.
    pub unconfirmed: bool,
    /// One-line remarks for the Dockerfile header and the caller (why this image, what to check).
    pub notes: Vec<String>,
    /// For a Core SDK release: the PyTorch wheels to install on the plain OS image `reference` names.
    pub wheels: Option<WheelInstall>,
}

/// The `pip install` that puts a Core SDK release's PyTorch on a plain OS image.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WheelInstall {
    /// AMD's pip index (`--index-url`).
    pub index: String,
    /// The requirements, pinned: `torch[device-gfx942]==2.13.0+rocm10.0.0`, `torchvision[…]>=0.28.0a0,<0.29`.
    pub packages: Vec<String>,
}

/// `--base` on the rocm or ngc stack: the matrices still pick the release (ROCm, PyTorch, CUDA versions, and so the
/// variables and checks), and the Dockerfile starts `FROM` the user's copy of that image: a registry mirror, or an
/// image `docker load`ed where Docker Hub or nvcr.io is out of reach. It must be pinned, like every base.
pub(crate) fn replaced(picked: BaseImage, base: &str) -> Result<BaseImage, Error> {
    let parsed = sanitize::image_reference("base", base)?;
    if parsed.digest.is_none() && parsed.tag.as_deref().is_none_or(|t| t == "latest") {
        return Err(Error::Invalid {
            fields: vec!["base".into()],
            value: None,
            message: format!(
                "`{base}` is not pinned; name a tag other than `latest` (or a digest) so the build is reproducible"
            ),
        });
    }
    refuse_other_release(&picked, base, parsed.tag.as_deref())?;
    let mut notes = picked.notes;
    if base == picked.reference {
        // The image the matrices list, named as they name it: nothing replaced, nothing to say.
        return Ok(BaseImage { notes, ..picked });
    }
    notes.push(format!(
        "FROM {base} (--base) in place of {}: it must be that image (a mirror or a loaded copy), since the variables and checks assume {}",
        picked.reference, picked.matrix_release
    ));
    Ok(BaseImage {
        reference: base.to_string(),
        digest: parsed.digest,
        notes,
        ..picked
    })
}

/// A `--base` whose tag names another ROCm release (`rocm6.2.1_…`) or NGC release (`24.05-py3`) than the one picked
/// would put one release's PyTorch, variables and checks on another's image: refused, naming the flag that uses the
/// image's own PyTorch.
fn refuse_other_release(picked: &BaseImage, base: &str, tag: Option<&str>) -> Result<(), Error> {
    let Some(tag) = tag else { return Ok(()) };
    let refuse = |theirs: String, flag: String| {
        Err(Error::Invalid {
            fields: vec!["base".into()],
            value: None,
            message: format!(
                "`{base}` is {theirs}'s image, but this Dockerfile is for {} ({}): pass {flag} to use that image's own PyTorch, or a --base that is a copy of {}",
                picked.matrix_release, picked.reference, picked.reference
            ),
        })
    };
    let rocm_of_tag = tag
        .strip_prefix("rocm")
        .and_then(|t| t.split('_').next())
        .filter(|v| crate::version::parse_with_parts(v).is_ok());
    if let Some(v) = rocm_of_tag {
        let same = picked.rocm.as_deref().is_some_and(|p| {
            let (want, parts) = crate::version::parse_with_parts(v).expect("checked above");
            p.parse::<crate::version::Version>()
                .is_ok_and(|have| have.in_series(&want, parts))
        });
        if !same || picked.wheels.is_some() {
            return refuse(format!("ROCm {v}"), format!("--rocm {v}"));
        }
    }
    let ngc_of_tag = tag
        .strip_suffix("-py3")
        .filter(|t| t.len() == 5 && t.as_bytes()[2] == b'.');
    if let (Some(n), Some(mine)) = (ngc_of_tag, picked.matrix_release.strip_prefix("ngc-")) {
        if n != mine {
            return refuse(format!("NGC {n}"), format!("--ngc {n}"));
        }
    }
    Ok(())
}

/// A `FROM` reference from matrix data, checked like user input because `--matrices` is user input.
pub(crate) fn pinned(
    repository: &str,
    tag: &str,
    digest: Option<&str>,
) -> Result<(String, Option<String>), Error> {
    let digest = digest.map(|d| {
        if d.starts_with("sha256:") {
            d.to_string()
        } else {
            format!("sha256:{d}")
        }
    });
    let reference = match &digest {
        Some(d) => format!("{repository}:{tag}@{d}"),
        None => format!("{repository}:{tag}"),
    };
    sanitize::image_reference("matrices", &reference)?;
    Ok((reference, digest))
}
