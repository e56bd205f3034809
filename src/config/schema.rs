//! The shape of `rocmenv.yaml`. Every struct refuses unknown keys, so a typo is an error with its line, not a
//! setting silently ignored.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `rocmenv.yaml`: what `rocmenv validate` checks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// Format version of this file; 1.
    pub schema_version: u32,
    /// What the GPU hosts the images deploy to run.
    #[serde(default)]
    pub host: HostExpectation,
    /// The smoke suite on a runner with a GPU.
    #[serde(default)]
    pub smoke: SmokeConfig,
    /// The images to validate, in order.
    pub stacks: Vec<StackConfig>,
    /// Benchmarks on a runner with a GPU, compared with baselines.
    #[serde(default)]
    pub benchmarks: Vec<BenchConfig>,
    /// Check ids (`kernel.rocm-supported`, `image.rocm-driver`) whose failure counts as a warning.
    #[serde(default)]
    pub allow_warn: Vec<String>,
}

/// The GPU hosts' side: what doctor checks against, and what the image checks compare with.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostExpectation {
    /// `rocm-X.Y[.Z]`, `cuda-X.Y` or `ngc-YY.MM`, as `rocmenv doctor --target`.
    #[serde(default)]
    pub target: Option<String>,
    /// The NVIDIA driver the hosts run (`550.54.15`); without it, the driver floor of the CUDA target.
    #[serde(default)]
    pub nvidia_driver: Option<String>,
}

/// `smoke:`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SmokeConfig {
    /// Run the smoke suite when a GPU is present (default true).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// How much to run.
    #[serde(default)]
    pub level: Level,
    /// Seconds the suite may run (default 1800).
    #[serde(default = "default_timeout")]
    pub timeout: u64,
}

impl Default for SmokeConfig {
    fn default() -> Self {
        SmokeConfig {
            enabled: true,
            level: Level::Quick,
            timeout: default_timeout(),
        }
    }
}

fn yes() -> bool {
    true
}

fn default_timeout() -> u64 {
    1800
}

fn default_threshold() -> f64 {
    10.0
}

/// One image to validate: the same choices `rocmenv build --stack` takes as flags.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StackConfig {
    /// A name for reports and `--stack` (letters, digits, `.`, `_`, `-`).
    pub name: String,
    /// Which stack.
    pub stack: Stack,
    /// rocm: the ROCm release (`6.2`).
    #[serde(default)]
    pub rocm: Option<String>,
    /// rocm: the PyTorch version prefix.
    #[serde(default)]
    pub pytorch: Option<String>,
    /// rocm: the image's Ubuntu version.
    #[serde(default)]
    pub ubuntu: Option<String>,
    /// rocm: the image's Python version.
    #[serde(default)]
    pub python: Option<String>,
    /// ngc: the release (`"24.05"`).
    #[serde(default)]
    pub ngc: Option<String>,
    /// The AMD gfx targets the image must run on (`gfx942`).
    #[serde(default)]
    pub gfx: Vec<String>,
    /// The NVIDIA compute capabilities the image must run on (`sm_90` or `"9.0"`).
    #[serde(default)]
    pub cuda_arch: Vec<String>,
    /// Extra pip packages.
    #[serde(default)]
    pub pip: Vec<String>,
    /// Extra Debian/Ubuntu packages.
    #[serde(default)]
    pub apt: Vec<String>,
    /// Add ONNX Runtime.
    #[serde(default)]
    pub onnxruntime: bool,
    /// Start from this image instead (as `build --base`); `validate --base` overrides it.
    #[serde(default)]
    pub base: Option<String>,
    /// This stack's hosts, when they differ from `host.target`.
    #[serde(default)]
    pub target: Option<String>,
    /// The user's own files to check with `rocmenv lint` beside the rendered Dockerfile (Dockerfiles, env files,
    /// compose files, Kubernetes manifests), relative to rocmenv.yaml.
    #[serde(default)]
    pub lint: Vec<PathBuf>,
}

pub use crate::dockerfile::Stack;
pub use crate::suites::{Level, Mode, Precision};

/// One benchmark, as `rocmenv bench` runs it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchConfig {
    /// resnet50, vit_b_16, gemm, bandwidth, onnx or sd15_unet.
    pub model: String,
    /// Batch size.
    #[serde(default)]
    pub batch: Option<u64>,
    /// Precision.
    #[serde(default)]
    pub precision: Option<Precision>,
    /// Train or infer.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Timed iterations.
    #[serde(default)]
    pub iters: Option<u64>,
    /// A baselines file (`rocmenv bench --save-baseline`), relative to the config file.
    #[serde(default)]
    pub baseline: Option<PathBuf>,
    /// Percent below the baseline a figure may fall before it is a regression (default 10).
    #[serde(default = "default_threshold")]
    pub threshold: f64,
    /// A regression fails the case (otherwise it warns).
    #[serde(default)]
    pub fail_on_regression: bool,
    /// Only on these stacks (names); empty for every stack.
    #[serde(default)]
    pub stacks: Vec<String>,
}
