//! Picking the base image: a `rocm/pytorch` tag, an NGC release or a Debian image, from the matrices.

mod base;
mod cpu;
mod ngc;
mod rocm;

pub use base::{BaseImage, WheelInstall};
pub use cpu::CPU_DEFAULT_BASE;
pub use rocm::ROCM_REPOSITORY;

use super::request::{DockerfileRequest, Stack};
use crate::error::Error;
use crate::matrix::Matrices;

/// Picks the base image for `req` from `m`, or says why none fits and what would.
pub fn select_base(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
    let picked = match req.stack {
        Stack::Rocm => rocm::select_rocm(req, m)?,
        Stack::Ngc => ngc::select_ngc(req, m)?,
        Stack::Cpu => return cpu::select_cpu(req),
    };
    match &req.base {
        Some(b) => base::replaced(picked, b),
        None => Ok(picked),
    }
}
