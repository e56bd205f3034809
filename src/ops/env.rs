//! env's work: the host plan's variables (or those of `--gfx` targets, with no host), and the user's own variables
//! judged against them, so `eval "$(rocmenv env)"` corrects a wrong exported override instead of keeping it.

use super::plan::{plan_on, PlanRequest};
use super::Ctx;
use crate::envplan::{self, EnvPlan, EnvVar};
use crate::error::Error;
use crate::hostplan::{judge_user_vars, UserVar, UserVarFix};
use crate::matrix::RocmRelease;
use crate::target::TargetSpec;
use crate::vendor::Vendor;

/// What `rocmenv env` asks, validated.
#[derive(Debug, Clone, Default)]
pub struct EnvRequest<'m> {
    /// `--gfx` targets; empty for the host's GPUs.
    pub gfx: Vec<String>,
    /// `--rocm`, looked up.
    pub rocm: Option<&'m RocmRelease>,
    /// `--device`.
    pub device: Option<usize>,
    /// The variables of the environment the output will be evaluated in.
    pub user_env: Vec<(String, String)>,
}

/// The answer: the plan (with the variables to remove), and each user variable it corrects.
#[derive(Debug, Clone)]
pub struct EnvAnswer {
    /// The variables.
    pub plan: EnvPlan,
    /// The user's variables that disagree with it, and the correction.
    pub corrected: Vec<UserVar>,
    /// The GPU `--device` names, in words.
    pub device_label: Option<String>,
}

/// Plans the variables for `req` over the context (the host is probed only without `--gfx`).
pub fn env<'c>(ctx: &'c Ctx, req: &EnvRequest<'c>) -> Result<EnvAnswer, Error> {
    let m = ctx.matrices()?;
    let (mut plan, counts) = if req.gfx.is_empty() {
        let facts = ctx.facts()?;
        if facts.gpus.is_empty() {
            // Under WSL nothing but the vendors' tools names a GPU: say which were asked.
            let why = if facts.wsl {
                "no AMD or NVIDIA GPU found under WSL: rocminfo and /usr/lib/wsl/lib/nvidia-smi name none (`rocmenv doctor` says why); name one with --gfx (e.g. --gfx gfx1100)"
            } else {
                "no AMD or NVIDIA GPU found on this host; name one with --gfx (e.g. --gfx gfx1100)"
            };
            return Err(Error::NoGpu(why.into()));
        }
        let release = release_for_host(req.rocm, facts.rocm.as_ref())?;
        let host = plan_on(
            m,
            facts,
            &PlanRequest {
                target: release.map(|r| TargetSpec::Rocm(r.version.to_string())),
                why: release.map(|r| format!("--rocm {}", r.version)),
                device: req.device,
                vendor: None,
            },
        )?;
        let counts = (facts.amd_gpus().count(), facts.nvidia_gpus().count());
        (host.env, counts)
    } else {
        let inputs = envplan::inputs_from_gfx(m, &req.gfx)?;
        (
            envplan::plan(m, &inputs, req.rocm, req.device)?,
            (inputs.len(), 0),
        )
    };
    let device_label = req.device.and_then(|d| {
        let amd_host = plan.devices.iter().any(|g| g.vendor == Vendor::Amd);
        plan.devices
            .iter()
            .filter(|g| (g.vendor == Vendor::Amd) == amd_host)
            .find(|g| g.index == d)
            .map(|g| g.label.clone())
    });
    let user = req.user_env.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let corrected = judge_user_vars(&plan, user, counts);
    for c in corrected.iter().filter(|c| c.fix == UserVarFix::Unset) {
        plan.unset.push(EnvVar {
            name: c.name.clone(),
            value: c.value.clone(),
            why: c.problem.clone(),
        });
    }
    Ok(EnvAnswer {
        plan,
        corrected,
        device_label,
    })
}

/// The release for a host: `--rocm` when given (refused when it belongs to another stream than the ROCm the
/// host has installed, whose paths and packages differ); `None` lets the host plan choose.
pub fn release_for_host<'m>(
    asked: Option<&'m RocmRelease>,
    installed: Option<&crate::host::RocmInstall>,
) -> Result<Option<&'m RocmRelease>, Error> {
    let (Some(r), Some(i)) = (asked, installed) else {
        return Ok(asked);
    };
    if r.stream.as_str() == i.stream {
        return Ok(Some(r));
    }
    Err(Error::Invalid {
        fields: vec!["rocm".into()],
        value: None,
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
    })
}
