//! What a caller asks `rocmenv dockerfile` for: the stack, version choices and additions.

use crate::gfx::GfxTarget;
use crate::version::DriverVersion;
use crate::version::Version;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The container stack: the one type of `--stack`, a config entry's `stack:` and the Dockerfile templates.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Stack {
    /// AMD's `rocm/pytorch` images.
    #[value(help = "AMD's rocm/pytorch images")]
    Rocm,
    /// NVIDIA's NGC `nvcr.io/nvidia/pytorch` images.
    #[value(help = "NVIDIA's nvcr.io/nvidia/pytorch images")]
    Ngc,
    /// Debian with Debian's own `python3-torch`: no GPU, no registry.
    #[value(help = "Debian with python3-torch: no GPU, no registry needed")]
    Cpu,
}

impl Stack {
    /// The name used on the command line, in labels and in template names.
    pub fn name(self) -> &'static str {
        match self {
            Stack::Rocm => "rocm",
            Stack::Ngc => "ngc",
            Stack::Cpu => "cpu",
        }
    }
}

impl Stack {
    /// Every stack, in the order `--stack` lists them.
    pub const ALL: [Stack; 3] = [Stack::Rocm, Stack::Ngc, Stack::Cpu];
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything `rocmenv dockerfile` needs to render one Dockerfile; values are validated when rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerfileRequest {
    /// `--stack`.
    pub stack: Stack,
    /// `--rocm X.Y[.Z]`: a ROCm release series (rocm stack).
    pub rocm: Option<String>,
    /// `--pytorch X.Y[.Z]`: a prefix of the image's PyTorch version (rocm stack).
    pub pytorch: Option<String>,
    /// `--ubuntu 22.04` (rocm stack).
    pub ubuntu: Option<String>,
    /// `--python 3.10` (rocm stack).
    pub python: Option<String>,
    /// Detected or `--gfx` targets; the image must run on every one (may be empty).
    pub gfx: Vec<GfxTarget>,
    /// `--ngc YY.MM` (ngc stack).
    pub ngc: Option<String>,
    /// The host's NVIDIA driver or `--driver` (ngc stack).
    pub driver: Option<DriverVersion>,
    /// `--base IMAGE`: for cpu, a Debian-based image instead of `debian:bookworm-slim`; for rocm and ngc, a copy of the picked image.
    pub base: Option<String>,
    /// `--pip PKG`, repeatable.
    pub pip: Vec<String>,
    /// `--apt PKG`, repeatable.
    pub apt: Vec<String>,
    /// `--onnxruntime`: add ONNX Runtime with the stack's execution providers.
    pub onnxruntime: bool,
    /// `--with-smoke-tests`: copy `smoke-tests/` into the image.
    pub with_smoke_tests: bool,
    /// Computed variables (`HSA_OVERRIDE_GFX_VERSION`, `PYTORCH_ROCM_ARCH`, …) baked in as `ENV`.
    pub env: Vec<(String, String)>,
    /// The project's URL for `org.opencontainers.image.source`; omitted when `None`.
    pub source: Option<String>,
    /// The host's loaded amdgpu-dkms, as it reports its version and as the driver release it came with (rocm
    /// stack): without `--rocm`, only a release whose driver window holds it is picked.
    pub amdgpu_driver: Option<(String, Version)>,
}

impl DockerfileRequest {
    /// A request for `stack` with every choice left to the defaults.
    pub fn new(stack: Stack) -> Self {
        DockerfileRequest {
            stack,
            rocm: None,
            pytorch: None,
            ubuntu: None,
            python: None,
            gfx: Vec::new(),
            ngc: None,
            driver: None,
            base: None,
            pip: Vec::new(),
            apt: Vec::new(),
            onnxruntime: false,
            with_smoke_tests: false,
            env: Vec::new(),
            source: None,
            amdgpu_driver: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde_and_clap() {
        for s in Stack::ALL {
            assert_eq!(
                serde_json::to_string(&s).unwrap(),
                format!("\"{}\"", s.name())
            );
            let clap = clap::ValueEnum::to_possible_value(&s).unwrap();
            assert_eq!(clap.get_name(), s.name());
        }
    }
}
