//! `rocmenv dockerfile`: detect (or take) the GPUs, pick the base image, bake the env, render, write.

use crate::cli::{DockerfileArgs, StackArgs};
use crate::dockerfile::{self, DockerfileRequest, Rendered, Stack};
use crate::envplan::{self, GpuInput};
use crate::error::Error;
use crate::matrix::{Matrices, Vendor};
use crate::version::{DriverVersion, VersionError};
use std::io::Write;
use std::path::PathBuf;

/// The stack flags of `rocmenv dockerfile` and `rocmenv build`, validated: what rendering needs besides the GPUs.
#[derive(Debug, Clone)]
pub struct StackPlan {
    /// The request with every flag-given choice filled in; the GPUs and the env are added when rendering.
    pub request: DockerfileRequest,
    /// `--gfx` targets; empty to detect.
    pub gfx: Vec<String>,
    /// `--sysroot` for detection.
    pub sysroot: Option<PathBuf>,
    /// `--driver` (NVIDIA); else detected.
    pub driver: Option<DriverVersion>,
    /// `--matrices`.
    pub matrices: Option<PathBuf>,
}

impl StackPlan {
    /// The plan for `a`; `None` without `--stack`.
    pub fn from_args(a: StackArgs, matrices: Option<PathBuf>) -> Result<Option<StackPlan>, Error> {
        let Some(stack) = a.stack else {
            return Ok(None);
        };
        let driver = a
            .driver
            .as_deref()
            .map(|d| {
                d.parse()
                    .map_err(|e: VersionError| Error::usage("--driver", e.to_string()))
            })
            .transpose()?;
        let mut request = DockerfileRequest::new(stack.into());
        request.rocm = a.rocm;
        request.pytorch = a.pytorch;
        request.ubuntu = a.ubuntu;
        request.python = a.python;
        request.ngc = a.ngc;
        request.base = a.base;
        request.pip = a.pip;
        request.apt = a.apt;
        request.onnxruntime = a.onnxruntime;
        request.with_smoke_tests = a.with_smoke_tests;
        request.source = a.source;
        Ok(Some(StackPlan {
            request,
            gfx: a.gfx,
            sysroot: a.sysroot,
            driver,
            matrices,
        }))
    }
}

fn detect(m: &Matrices, o: &StackPlan) -> Result<(Vec<GpuInput>, Option<String>), Error> {
    let facts = crate::inventory::read(o.sysroot.as_deref(), m)?;
    Ok((
        envplan::inputs_from_host(&facts),
        facts.nvidia_driver.map(|d| d.version),
    ))
}

/// Renders the Dockerfile and context for `o`, writing its notes (env warnings, base-image remarks) to `err`;
/// also used by `rocmenv build`.
pub fn render(o: &StackPlan, err: &mut dyn Write) -> Result<Rendered, Error> {
    let m = Matrices::load(o.matrices.as_deref())?;
    let stack = o.request.stack;
    let needs_host = (stack == Stack::Rocm && o.gfx.is_empty())
        || (stack == Stack::Ngc && o.driver.is_none() && o.request.ngc.is_none());
    let (gpus, host_driver) = if !o.gfx.is_empty() {
        (envplan::inputs_from_gfx(&m, &o.gfx)?, None)
    } else if needs_host || o.sysroot.is_some() {
        detect(&m, o)?
    } else {
        (Vec::new(), None)
    };
    // A driver version the host reports that does not parse is no driver to pick by.
    let driver = o
        .driver
        .clone()
        .or_else(|| host_driver.as_deref().and_then(|d| d.parse().ok()));
    let mut req = o.request.clone();
    // An iGPU next to a discrete card is hidden by the env (HIP_VISIBLE_DEVICES), so it does not choose the image.
    let has_discrete = gpus
        .iter()
        .any(|g| g.vendor == Vendor::Amd && !g.integrated);
    req.gfx = gpus
        .iter()
        .filter(|g| g.vendor == Vendor::Amd && !(g.integrated && has_discrete))
        .filter_map(|g| g.gfx)
        .collect();
    req.driver = driver;
    let mut warnings = Vec::new();
    // The env is computed for the ROCm release of the image that gets picked, so pick first.
    if stack == Stack::Rocm && !gpus.is_empty() {
        let base = dockerfile::select_base(&req, &m)?;
        let release = base.rocm.as_deref().and_then(|v| m.rocm_release(v));
        let amd: Vec<GpuInput> = gpus
            .into_iter()
            .filter(|g| g.vendor == Vendor::Amd)
            .collect();
        if !amd.is_empty() {
            let plan = envplan::plan(&m, &amd, release, None)?;
            warnings.extend(plan.warnings.iter().cloned());
            req.env = plan.image_env();
        }
    } else if stack == Stack::Ngc {
        let plan = envplan::plan(
            &m,
            &gpus
                .into_iter()
                .filter(|g| g.vendor == Vendor::Nvidia)
                .collect::<Vec<_>>(),
            None,
            None,
        )?;
        req.env = plan.image_env();
    }
    let rendered = dockerfile::render(&req, &m)?;
    for w in warnings.iter().chain(rendered.notes.iter()) {
        let _ = writeln!(err, "rocmenv: note: {w}");
    }
    Ok(rendered)
}

/// Runs `rocmenv dockerfile`: the Dockerfile to `out`, or the context to `-o DIR`.
pub fn exec(
    a: DockerfileArgs,
    matrices: Option<PathBuf>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let o = StackPlan::from_args(a.stack, matrices)?.expect("clap requires --stack");
    let rendered = render(&o, err)?;
    match a.output.as_deref() {
        Some(d) => {
            dockerfile::write_context(&rendered, d, a.force)?;
            // The Dockerfile plus every other context file (.dockerignore, smoke-tests/…).
            let count = 1 + rendered.files.len();
            writeln!(
                out,
                "wrote {} ({count} files, FROM {})",
                d.display(),
                rendered.base_image
            )
            .map_err(Error::Output)?;
        }
        None => super::written(out.write_all(rendered.dockerfile.as_bytes()))?,
    }
    Ok(crate::error::EXIT_OK)
}
