//! `rocmenv run --probe`: `ops::probe::in_container` copies a rocmenv binary into the image and runs `rocmenv probe
//! --json` there with the run's device mapping, so a container that cannot see the GPU is reported before any
//! Python runs; this renders what it found.

use super::usage;
use crate::error::Error;
use crate::ops::probe::{self, ContainerProbe};
use crate::ops::run::RunPlan;
use crate::ops::Ctx;
use std::io::Write;

/// `rocmenv run --probe`: the runtimes as the container sees them, before any Python runs.
pub(crate) fn probe_in_container(
    ctx: &Ctx,
    o: &RunPlan,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    if !o.command.is_empty() {
        return Err(usage(
            "--probe",
            "runs `rocmenv probe` in the image; give no command after --".into(),
        ));
    }
    let found = probe::in_container(ctx, o, &mut |ev| super::super::log_event(err, &ev))?;
    match found {
        ContainerProbe::Stopped(code) => {
            let _ = writeln!(
                err,
                "rocmenv: the probe did not finish; container stopped and removed"
            );
            Ok(code)
        }
        ContainerProbe::Report {
            mapping,
            report,
            exit_code,
        } => {
            crate::report::render_container_probe(&o.image, &mapping, &report, out)
                .map_err(Error::Output)?;
            Ok(exit_code)
        }
    }
}
