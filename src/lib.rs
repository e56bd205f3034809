//! rocmenv: checks that a Linux GPU host and a container stack will run PyTorch on ROCm or CUDA.

pub mod arena;
pub mod cc;
pub mod checks;
pub mod cli;
pub mod collect;
pub mod commands;
pub mod config;
pub mod dockerfile;
pub mod elf;
pub mod engine;
pub mod envplan;
pub mod error;
pub mod fix;
pub mod fleet;
pub mod gfx;
pub mod host;
pub mod hostplan;
pub mod image_ref;
pub mod inventory;
pub mod k8s;
pub mod lint;
pub mod matrix;
pub mod ops;
/// Parsers of what hosts and tools print; public only for the fuzz targets (`fuzz/src/targets.rs`), not an API.
#[doc(hidden)]
pub mod parse;
pub mod report;
pub mod runtime;
pub mod sanitize;
pub mod slurm;
pub mod status;
pub mod suites;
pub mod target;
pub mod text;
pub mod vendor;
pub mod version;

/// The arithmetic of the binary's `pow` (link/pow.c, build.rs `local_pow`), which spares every start loading
/// glibc's libm.so.6: musl's implementation, from the `libm` crate. Exported under this name only (it interposes
/// nothing); not an API.
#[cfg(local_pow)]
#[doc(hidden)]
#[no_mangle]
pub extern "C" fn rocmenv_libm_pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
