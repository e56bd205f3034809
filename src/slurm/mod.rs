//! `rocmenv slurm`: an sbatch script that runs rocmenv's checks on every node of an allocation and merges the
//! reports. Pure: a validated [`Plan`] in, the script's text out (`script`); the command only prints it.

pub mod plan;
pub mod script;

pub use plan::{Check, Plan, Request, Runtime, Vendor};
pub use script::render;
