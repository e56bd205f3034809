//! `rocmenv dockerfile`: detect (or take) the GPUs, pick the base image, bake the env, render, write.

use crate::dockerfile::{self, DockerfileRequest, Rendered, Stack};
use crate::envplan::{self, GpuInput};
use crate::error::Error;
use crate::matrix::{Matrices, Vendor};
use std::io::Write;
use std::path::PathBuf;

/// Options of `rocmenv dockerfile` (and the stack half of `rocmenv build`), parsed.
#[derive(Debug, Clone)]
pub struct DockerfileOptions {
    /// The stack.
    pub stack: Stack,
    /// Version filters.
    pub rocm: Option<String>,
    /// PyTorch filter.
    pub pytorch: Option<String>,
    /// Ubuntu filter.
    pub ubuntu: Option<String>,
    /// Python filter.
    pub python: Option<String>,
    /// `--gfx` targets; empty to detect.
    pub gfx: Vec<String>,
    /// `--sysroot` for detection.
    pub sysroot: Option<PathBuf>,
    /// `--ngc YY.MM`.
    pub ngc: Option<String>,
    /// `--driver` (NVIDIA); else detected.
    pub driver: Option<String>,
    /// `--base` (cpu).
    pub base: Option<String>,
    /// `--pip`.
    pub pip: Vec<String>,
    /// `--apt`.
    pub apt: Vec<String>,
    /// `--onnxruntime`.
    pub onnxruntime: bool,
    /// `--with-smoke-tests`.
    pub with_smoke_tests: bool,
    /// `--source` URL for the OCI label.
    pub source: Option<String>,
    /// `--matrices`.
    pub matrices: Option<PathBuf>,
}

fn detect(m: &Matrices, o: &DockerfileOptions) -> Result<(Vec<GpuInput>, Option<String>), Error> {
    let facts = crate::inventory::read(o.sysroot.as_deref(), m)?;
    Ok((
        envplan::inputs_from_host(&facts),
        facts.nvidia_driver.map(|d| d.version),
    ))
}

/// Renders the Dockerfile and context for `o`, writing its notes (env warnings, base-image remarks) to `err`;
/// also used by `rocmenv build`.
pub fn render(o: &DockerfileOptions, err: &mut dyn Write) -> Result<Rendered, Error> {
    let m = Matrices::load(o.matrices.as_deref())?;
    if !o.gfx.is_empty() && o.sysroot.is_some() {
        return Err(Error::Usage {
            flag: "--gfx".into(),
            message: "give either --gfx or --sysroot, not both".into(),
        });
    }
    let needs_host = (o.stack == Stack::Rocm && o.gfx.is_empty())
        || (o.stack == Stack::Ngc && o.driver.is_none() && o.ngc.is_none());
    let (gpus, host_driver) = if !o.gfx.is_empty() {
        (envplan::inputs_from_gfx(&m, &o.gfx)?, None)
    } else if needs_host || o.sysroot.is_some() {
        detect(&m, o)?
    } else {
        (Vec::new(), None)
    };
    let driver = match o.driver.as_deref().or(host_driver.as_deref()) {
        Some(d) => Some(
            d.parse()
                .map_err(|e: crate::version::VersionError| Error::Usage {
                    flag: "--driver".into(),
                    message: e.to_string(),
                })?,
        ),
        None => None,
    };
    let mut req = DockerfileRequest::new(o.stack);
    req.rocm = o.rocm.clone();
    req.pytorch = o.pytorch.clone();
    req.ubuntu = o.ubuntu.clone();
    req.python = o.python.clone();
    // An iGPU next to a discrete card is hidden by the env (HIP_VISIBLE_DEVICES), so it does not choose the image.
    let has_discrete = gpus
        .iter()
        .any(|g| g.vendor == Vendor::Amd && !g.integrated);
    req.gfx = gpus
        .iter()
        .filter(|g| g.vendor == Vendor::Amd && !(g.integrated && has_discrete))
        .filter_map(|g| g.gfx)
        .collect();
    req.ngc = o.ngc.clone();
    req.driver = driver;
    req.base = o.base.clone();
    req.pip = o.pip.clone();
    req.apt = o.apt.clone();
    req.onnxruntime = o.onnxruntime;
    req.with_smoke_tests = o.with_smoke_tests;
    req.source = o.source.clone();
    let mut warnings = Vec::new();
    // The env is computed for the ROCm release of the image that gets picked, so pick first.
    if o.stack == Stack::Rocm && !gpus.is_empty() {
        let base = dockerfile::select_base(&req, &m)?;
        let release = base.rocm.as_deref().and_then(|v| m.rocm_release(v));
        let amd: Vec<GpuInput> = gpus
            .into_iter()
            .filter(|g| g.vendor == Vendor::Amd)
            .collect();
        if !amd.is_empty() {
            let plan = envplan::plan(&m, &amd, release, None)?;
            warnings.extend(plan.warnings.iter().cloned());
            req.env = plan.portable();
        }
    } else if o.stack == Stack::Ngc {
        let plan = envplan::plan(
            &m,
            &gpus
                .into_iter()
                .filter(|g| g.vendor == Vendor::Nvidia)
                .collect::<Vec<_>>(),
            None,
            None,
        )?;
        req.env = plan.portable();
    }
    let rendered = dockerfile::render(&req, &m)?;
    for w in warnings.iter().chain(rendered.notes.iter()) {
        let _ = writeln!(err, "rocmenv: note: {w}");
    }
    Ok(rendered)
}

/// Runs `rocmenv dockerfile`: the Dockerfile to `out`, or the context to `dir`.
pub fn run(
    o: &DockerfileOptions,
    dir: Option<&std::path::Path>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let rendered = render(o, err)?;
    match dir {
        Some(d) => {
            dockerfile::write_context(&rendered, d)?;
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
        None => match out.write_all(rendered.dockerfile.as_bytes()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => return Err(Error::Output(e)),
        },
    }
    Ok(crate::error::EXIT_OK)
}

/// Renders `o` into the files `rocmenv build` sends to the daemon; notes go to `err`.
pub fn build_source(
    o: &DockerfileOptions,
    err: &mut dyn Write,
) -> Result<crate::build_command::BuildSource, Error> {
    let rendered = render(o, err)?;
    let mut files = vec![(
        PathBuf::from("Dockerfile"),
        rendered.dockerfile.into_bytes(),
    )];
    files.extend(rendered.files);
    Ok(crate::build_command::BuildSource::Files {
        stack: o.stack.name().to_string(),
        files,
    })
}
