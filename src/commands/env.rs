//! `rocmenv env`: validate the flags, find the GPUs (host or `--gfx`), plan, print.

use crate::cli::EnvArgs;
use crate::envplan::{self, GpuInput};
use crate::error::Error;
use crate::matrix::{Matrices, RocmRelease};
use crate::report::render_env;
use std::io::Write;
use std::path::PathBuf;

/// Looks up `--rocm`, listing the nearest releases when it is unknown.
pub fn rocm_release<'m>(m: &'m Matrices, spec: &str) -> Result<&'m RocmRelease, Error> {
    // A value that is no version gets that answer, not a list of releases near nothing.
    crate::version::parse_with_parts(spec).map_err(|e| Error::usage("--rocm", e.to_string()))?;
    m.rocm_release(spec).ok_or_else(|| Error::Usage {
        flag: "--rocm".into(),
        message: format!(
            "ROCm {spec} is not in the matrices; nearest: {}",
            crate::matrix::nearest(spec, &m.rocm_versions())
        ),
    })
}

/// The GPUs of the host (or the tree under `sysroot`), as plan inputs.
pub fn host_inputs(
    m: &Matrices,
    sysroot: Option<&std::path::Path>,
) -> Result<Vec<GpuInput>, Error> {
    let facts = crate::inventory::read(sysroot, m)?;
    Ok(envplan::inputs_from_host(&facts))
}

/// Runs `rocmenv env`; warnings go to `err`, variables to `out`. Returns the exit code.
pub fn exec(
    o: EnvArgs,
    matrices: Option<PathBuf>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    if !o.gfx.is_empty() && o.sysroot.is_some() {
        return Err(Error::usage(
            "--gfx",
            "give either --gfx or --sysroot, not both",
        ));
    }
    let m = Matrices::load(matrices.as_deref())?;
    let release = o.rocm.as_deref().map(|s| rocm_release(&m, s)).transpose()?;
    let inputs = if o.gfx.is_empty() {
        host_inputs(&m, o.sysroot.as_deref())?
    } else {
        envplan::inputs_from_gfx(&m, &o.gfx)?
    };
    if inputs.is_empty() {
        return Err(Error::NoGpu(
            "no AMD or NVIDIA GPU found on this host; name one with --gfx (e.g. --gfx gfx1100)"
                .into(),
        ));
    }
    let plan = envplan::plan(&m, &inputs, release, o.device)?;
    if let Some(d) = o.device {
        // Name the GPU the index means, so a number is never taken on trust.
        let amd_host = inputs
            .iter()
            .any(|g| g.vendor == crate::vendor::Vendor::Amd);
        if let Some(g) = inputs
            .iter()
            .filter(|g| (g.vendor == crate::vendor::Vendor::Amd) == amd_host)
            .nth(d)
        {
            let _ = writeln!(err, "rocmenv env: --device {d} is {}", g.label);
        }
    }
    for w in &plan.warnings {
        let _ = writeln!(err, "rocmenv: warning: {w}");
    }
    super::written(render_env(&plan, o.format.into(), o.explain, out))?;
    Ok(if plan.unusable {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    })
}
