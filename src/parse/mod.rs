//! Parsers for text that hosts and tools print. Each takes `&str` and returns typed values.

pub mod collect_env;
pub mod docker_info;
pub mod kernel;
pub mod kfd;
pub mod nvidia_proc;
pub mod nvidia_smi;
pub mod os_release;
pub mod rocm_smi;
pub mod rocminfo;
