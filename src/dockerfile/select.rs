//! Picking the base image: a `rocm/pytorch` tag, an NGC release or a Debian image, from the matrices.

use super::request::{DockerfileRequest, Stack};
use super::select_ngc::select_ngc;
use super::select_rocm::select_rocm;
use crate::error::Error;
use crate::matrix::Matrices;
use crate::sanitize;

/// The cpu stack's default base: Debian 12, whose `python3-torch` needs no GPU and no extra registry.
pub const CPU_DEFAULT_BASE: &str = "debian:bookworm-slim";
/// Debian bookworm's Python and `python3-torch` versions, for the default cpu base's labels.
const BOOKWORM_PYTHON: &str = "3.11";
const BOOKWORM_PYTORCH: &str = "1.13.1";
/// How many alternatives an error lists.
pub(super) const NEAREST: usize = 5;

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
}

/// Picks the base image for `req` from `m`, or says why none fits and what would.
pub fn select_base(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
    match req.stack {
        Stack::Rocm => select_rocm(req, m),
        Stack::Ngc => select_ngc(req, m),
        Stack::Cpu => select_cpu(req),
    }
}

/// A `FROM` reference from matrix data, checked like user input because `--matrices` is user input.
pub(super) fn pinned(
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
    sanitize::image_reference("--matrices", &reference)?;
    Ok((reference, digest))
}

fn select_cpu(req: &DockerfileRequest) -> Result<BaseImage, Error> {
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
        });
    };
    sanitize::image_reference("--base", base)?;
    let (name, digest) = match base.split_once('@') {
        Some((n, d)) => (n, Some(d.to_string())),
        None => (base.as_str(), None),
    };
    let tag = name
        .rsplit('/')
        .next()
        .and_then(|last| last.split_once(':'))
        .map(|(_, t)| t);
    if digest.is_none() && tag.is_none_or(|t| t == "latest") {
        return Err(Error::Usage {
            flag: "--base".into(),
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
    })
}
