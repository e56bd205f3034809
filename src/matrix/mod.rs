//! The compatibility matrices: YAML data embedded in the binary, replaceable with `--matrices DIR`.

mod deferred;
mod distro;
mod firmware;
mod gpu;
mod load;
mod lookup;
mod query;
mod schema;
mod support;
mod yaml_lines;

pub use distro::{canonical_distro_version, distro_version_matches, is_os_release_version};
pub use firmware::{hex_version, FirmwareFile, KnownBadFirmware, FIRMWARE_COMPONENTS};
pub use gpu::{GpuAnswer, GpuKey, GpuQuery};
pub(crate) use load::has_public_reference;
pub use load::{MatrixError, MATRIX_FILES, OPTIONAL_MATRIX_FILES};
pub use lookup::*;
pub use query::*;
pub use schema::*;
pub use support::HostGpu;

pub use deferred::Deferred;
pub use load::Part;

/// The matrices, loaded and validated. Each file is a [`Part`]: the built-in ones are parsed when first used, so a
/// command pays only for the files it reads (doctor on an NVIDIA host never parses rocm.yaml's 150 KB).
#[derive(Debug, Clone)]
pub struct Matrices {
    /// ROCm releases, oldest first.
    pub rocm: Part<RocmFile>,
    /// CUDA releases, oldest first.
    pub cuda: Part<CudaFile>,
    /// NGC releases, oldest first.
    pub ngc: Part<NgcFile>,
    /// GPU models and gfx targets.
    pub gpus: Part<GpusFile>,
    /// Firmware versions known to be bad.
    pub firmware: Part<FirmwareFile>,
    /// Where they came from: `embedded` or a directory.
    pub origin: String,
}
