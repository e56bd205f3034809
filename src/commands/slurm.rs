//! `rocmenv slurm`: the flags checked into a plan, the sbatch script printed (or written with `-o`).

use crate::cli::{SlurmArgs, SlurmCheckArg};
use crate::error::Error;
use crate::ops::slurm::{self, Check, Plan, Request};
use std::io::Write;

/// The plan `rocmenv slurm` prints, from its flags.
pub fn plan(a: SlurmArgs) -> Result<Plan, Error> {
    Plan::new(Request {
        check: match a.check {
            SlurmCheckArg::Doctor => Check::Doctor,
            SlurmCheckArg::DoctorSmoke => Check::DoctorSmoke,
            SlurmCheckArg::Smoke => Check::Smoke,
            SlurmCheckArg::Validate => Check::Validate,
        },
        runtime: a.runtime,
        image: a.image,
        vendor: a.vendor,
        level: a.level,
        config: a.config,
        nodes: a.nodes,
        gpus_per_node: a.gpus_per_node,
        gres: a.gres,
        partition: a.partition,
        time: a.time,
        nodelist: a.nodelist,
        account: a.account,
        reservation: a.reservation,
        results: a.results,
    })
}

/// Runs `rocmenv slurm`: prints (or writes) the script; returns the exit code.
pub fn exec(a: SlurmArgs, out: &mut dyn Write) -> Result<i32, Error> {
    let output = a.output.clone();
    let text = slurm::render(&plan(a)?);
    match output {
        Some(path) => crate::ops::files::write_atomic(&path, text.as_bytes())?,
        None => super::written(out.write_all(text.as_bytes()))?,
    }
    Ok(crate::error::EXIT_OK)
}
