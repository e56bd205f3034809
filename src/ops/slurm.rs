//! `rocmenv slurm`: an sbatch script that checks every node. The work is pure (a checked plan rendered as a script),
//! so this is the slurm module as commands see it.

pub use crate::slurm::{render, Check, Plan, Request, Runtime};
