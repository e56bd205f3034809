//! `rocmenv env`: validate the flags, find the GPUs (host or `--gfx`), plan, print.

use crate::cli::EnvArgs;
use crate::envplan;
use crate::error::Error;
use crate::matrix::{Matrices, RocmRelease};
use crate::ops::Ctx;
use crate::report::render_env;
use std::io::Write;

/// Looks up `--rocm`, listing the nearest releases when it is unknown.
pub fn rocm_release<'m>(m: &'m Matrices, spec: &str) -> Result<&'m RocmRelease, Error> {
    // A value that is no version gets that answer, not a list of releases near nothing.
    crate::version::parse_with_parts(spec).map_err(|e| Error::usage("--rocm", e.to_string()))?;
    m.rocm_request(spec).map_err(|message| Error::Usage {
        flag: "--rocm".into(),
        message,
    })
}

/// The release for a host: `--rocm` when given (refused when it belongs to another stream than the ROCm the
/// host has installed, whose paths and packages differ), else the installed ROCm when the matrices know it.
pub fn release_for_host<'m>(
    m: &'m Matrices,
    asked: Option<&'m RocmRelease>,
    installed: Option<&crate::host::RocmInstall>,
) -> Result<Option<&'m RocmRelease>, Error> {
    let Some(i) = installed else { return Ok(asked) };
    match asked {
        Some(r) if r.stream.as_str() != i.stream => Err(Error::Usage {
            flag: "--rocm".into(),
            message: format!(
                "ROCm {} is a {} release (installed at {}), but this host has ROCm {} of the {} stream at {}; use --rocm {}, or install ROCm {} first",
                r.version,
                r.stream.as_str(),
                r.install_prefix(),
                i.version,
                i.stream,
                i.path,
                i.version,
                r.version
            ),
        }),
        Some(r) => Ok(Some(r)),
        None => Ok(m.rocm_release(i.version.as_str())),
    }
}

/// Runs `rocmenv env`; warnings go to `err`, variables to `out`. Returns the exit code.
pub fn exec(o: EnvArgs, ctx: &Ctx, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Error> {
    let m = ctx.matrices()?;
    let mut release = o.rocm.as_deref().map(|s| rocm_release(m, s)).transpose()?;
    let inputs = if o.gfx.is_empty() {
        let facts = ctx.facts()?;
        release = release_for_host(m, release, facts.rocm.as_ref())?;
        envplan::inputs_from_host(facts)
    } else {
        envplan::inputs_from_gfx(m, &o.gfx)?
    };
    if inputs.is_empty() {
        return Err(Error::NoGpu(
            "no AMD or NVIDIA GPU found on this host; name one with --gfx (e.g. --gfx gfx1100)"
                .into(),
        ));
    }
    let plan = envplan::plan(m, &inputs, release, o.device)?;
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
