//! rocmenv: checks that a Linux GPU host and a container stack will run PyTorch on ROCm or CUDA.

pub mod gfx;
pub mod matrix;
pub mod parse;
pub mod version;
