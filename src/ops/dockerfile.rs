//! dockerfile's work: take the GPUs (given, or detected from the context's host), pick the base image, bake the env,
//! render the Dockerfile and its context.

use super::{Ctx, Event, Sink};
use crate::dockerfile::{self, DockerfileRequest, Rendered, Stack};
use crate::envplan::{self, GpuInput};
use crate::error::Error;
use crate::matrix::{Matrices, Vendor};
use crate::version::DriverVersion;

/// The stack `rocmenv dockerfile`, `build` and `validate` render, validated: what rendering needs besides the
/// GPUs (the host, when detection is needed, is the context's).
#[derive(Debug, Clone)]
pub struct StackPlan {
    /// The request with every given choice filled in; the GPUs and the env are added when rendering.
    pub request: DockerfileRequest,
    /// `--gfx` targets; empty to detect.
    pub gfx: Vec<String>,
    /// `--driver` (NVIDIA); else detected.
    pub driver: Option<DriverVersion>,
}

/// The GPUs and the NVIDIA driver of the context's host.
fn detect(ctx: &Ctx) -> Result<(Vec<GpuInput>, Option<DriverVersion>), Error> {
    let facts = ctx.facts()?;
    Ok((
        envplan::inputs_from_host(facts),
        facts.nvidia_driver.as_ref().map(|d| d.version.clone()),
    ))
}

/// The GPUs rendering is for: `--gfx`, else the host's when the stack needs them or `--sysroot` names a host.
fn gpus(
    ctx: &Ctx,
    m: &Matrices,
    o: &StackPlan,
) -> Result<(Vec<GpuInput>, Option<DriverVersion>), Error> {
    let stack = o.request.stack;
    let needs_host = (stack == Stack::Rocm && o.gfx.is_empty())
        || (stack == Stack::Ngc && o.driver.is_none() && o.request.ngc.is_none());
    if !o.gfx.is_empty() {
        Ok((envplan::inputs_from_gfx(m, &o.gfx)?, None))
    } else if needs_host || ctx.host_spec().sysroot.is_some() {
        detect(ctx)
    } else {
        Ok((Vec::new(), None))
    }
}

/// Renders the Dockerfile and context for `o`; its notes (env warnings, base-image remarks) go to `on`.
pub fn render(ctx: &Ctx, o: &StackPlan, on: Sink) -> Result<Rendered, Error> {
    let m = ctx.matrices()?;
    let stack = o.request.stack;
    let (gpus, host_driver) = gpus(ctx, m, o)?;
    if o.gfx.is_empty() {
        if let Some(w) = wrong_vendor(ctx, stack)? {
            on(Event::Warning(w));
        }
    }
    let driver = o.driver.clone().or(host_driver);
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
    if stack == Stack::Rocm && o.gfx.is_empty() {
        req.amdgpu_driver = host_amdgpu(ctx, m)?;
        if req.rocm.is_none() {
            if let Some(note) = wsl_release(ctx, m, &mut req)? {
                on(Event::Note(note));
            }
        }
    }
    let mut warnings = Vec::new();
    // The env is computed for the ROCm release of the image that gets picked, so pick first.
    if stack == Stack::Rocm && !gpus.is_empty() {
        let base = dockerfile::select_base(&req, m)?;
        let release = base.rocm.as_deref().and_then(|v| m.rocm_release(v));
        let amd: Vec<GpuInput> = gpus
            .into_iter()
            .filter(|g| g.vendor == Vendor::Amd)
            .collect();
        if !amd.is_empty() {
            let plan = envplan::plan(m, &amd, release, None)?;
            warnings.extend(plan.warnings.iter().cloned());
            req.env = plan.image_env();
        }
    } else if stack == Stack::Ngc {
        let nvidia: Vec<GpuInput> = gpus
            .into_iter()
            .filter(|g| g.vendor == Vendor::Nvidia)
            .collect();
        req.env = envplan::plan(m, &nvidia, None, None)?.image_env();
    }
    let rendered = dockerfile::render(&req, m)?;
    for w in warnings.iter().chain(rendered.notes.iter()) {
        on(Event::Note(w.clone()));
    }
    Ok(rendered)
}

/// A stack for the other vendor's GPUs than every one the host (live, or `--sysroot`) has: the same answer doctor's
/// `gpu.vendor` gives, as a warning, since a Dockerfile may be written for another host.
fn wrong_vendor(ctx: &Ctx, stack: Stack) -> Result<Option<String>, Error> {
    let needs = match stack {
        Stack::Rocm => Vendor::Amd,
        Stack::Ngc => Vendor::Nvidia,
        _ => return Ok(None),
    };
    let facts = ctx.facts()?;
    if facts.gpus.is_empty() || facts.gpus.iter().any(|g| g.vendor == needs) {
        return Ok(None);
    }
    Ok(Some(format!(
        "--stack {} is for {} GPUs, and this host has none: it has {} (this Dockerfile is for another host; --gfx names its GPUs)",
        stack.name(),
        needs.label(),
        crate::hostplan::gpus_in_words(facts)
    )))
}

/// Under WSL with AMD's ROCm-on-WSL release installed (6.1.3, 7.2.x), the image is held to that release's series: the
/// Windows driver runs only the user space AMD published for it. The note says so, and how such a container reaches
/// the GPU.
fn wsl_release(
    ctx: &Ctx,
    m: &Matrices,
    req: &mut DockerfileRequest,
) -> Result<Option<String>, Error> {
    let facts = ctx.facts()?;
    let Some(installed) = facts.rocm.as_ref().filter(|_| facts.wsl) else {
        return Ok(None);
    };
    let Some(w) = m.wsl_release(installed.version.as_str()) else {
        return Ok(None);
    };
    let series = format!("{}.{}", w.release.major(), w.release.minor());
    let Some(r) = m.rocm_release(&series) else {
        return Ok(None);
    };
    req.rocm = Some(series);
    // The image needs nothing for WSL; the container does, and `rocmenv run` maps it (engine/dxg.rs).
    let run = match crate::engine::dxg_mapping(facts) {
        Ok(d) => format!(
            "`rocmenv run` maps it ({}), as does `docker run` with those flags",
            d.docker_flags()
        ),
        Err(e) => format!("`rocmenv run` cannot map it yet: {e}"),
    };
    // librocdxg's README (ROCm/librocdxg@021a477, "Container Launch"): the library and the variable go in as well.
    let rocdxg = match &w.rocdxg {
        Some(v) => {
            format!(" (librocdxg {v}: /opt/rocm/lib/librocdxg.so with HSA_ENABLE_DXG_DETECTION=1)")
        }
        None => String::new(),
    };
    Ok(Some(format!(
        "WSL: the host runs ROCm {} on WSL (AMD lists it for {}, with {}), so the image is of its series, ROCm {}; under WSL a container reaches the GPU through /dev/dxg and the host's libraries{rocdxg}: {run}",
        w.release,
        w.gpus_text(),
        w.driver_text(),
        r.version
    )))
}

/// The host's loaded amdgpu-dkms, as reported and as the driver release it maps to (the in-tree driver has none).
fn host_amdgpu(
    ctx: &Ctx,
    m: &Matrices,
) -> Result<Option<(String, crate::version::Version)>, Error> {
    Ok(crate::target::loaded_dkms_driver(m, ctx.facts()?))
}
