//! The compatibility matrices: YAML data embedded in the binary, replaceable with `--matrices DIR`.

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

/// The matrices, loaded and validated.
#[derive(Debug, Clone)]
pub struct Matrices {
    /// ROCm releases, oldest first.
    pub rocm: RocmFile,
    /// CUDA releases, oldest first.
    pub cuda: CudaFile,
    /// NGC releases, oldest first.
    pub ngc: NgcFile,
    /// GPU models and gfx targets.
    pub gpus: GpusFile,
    /// Firmware versions known to be bad.
    pub firmware: FirmwareFile,
    /// Where they came from: `embedded` or a directory.
    pub origin: String,
}
