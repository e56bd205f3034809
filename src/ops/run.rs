//! run's work: a validated `RunPlan` turned into a `RunSpec` for the host the context reads (its devices, groups and
//! the variables its GPUs need), which the engine then runs.

use super::{Ctx, Event, Host, Sink};
use crate::engine::{self, Engine, Mount, RunSpec};
use crate::error::Error;
use crate::vendor::Vendor;
use std::path::PathBuf;
use std::time::Duration;

/// `rocmenv run`'s flags, validated without touching the host: the high-level form the rest of the command uses.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// `--image`, checked as a reference.
    pub image: String,
    /// `--vendor`; `None` detects.
    pub vendor: Option<Vendor>,
    /// `--gpu N`.
    pub gpu: Option<usize>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--memory` as given (`16m`) and in bytes.
    pub memory: Option<(String, u64)>,
    /// `-e NAME=VALUE`, split.
    pub env: Vec<(String, String)>,
    /// `-v HOST:CONTAINER[:ro]`, parsed.
    pub mounts: Vec<Mount>,
    /// `--result PATH` and the file it is written to.
    pub result: Option<(String, PathBuf)>,
    /// `--print`.
    pub print: bool,
    /// The command.
    pub command: Vec<String>,
    /// `--probe`: copy this rocmenv into the container and run `rocmenv probe --json` there instead of a command.
    pub probe: bool,
    /// `--probe-binary`: the binary `--probe` copies in; `None` copies the running one.
    pub probe_binary: Option<PathBuf>,
    /// `--security`.
    pub security: engine::Security,
    /// `--strict`: refuse `-e` variables that disagree with the host plan.
    pub strict: bool,
}

/// Turns the options into a `RunSpec`: probes the host (or `--sysroot`) for devices, groups and variables.
pub fn plan_run(
    ctx: &Ctx,
    o: &RunPlan,
    engine: Option<&Engine>,
    on: Sink,
) -> Result<RunSpec, Error> {
    let m = ctx.matrices()?;
    let Host { root, facts } = ctx.host()?;
    let vendor = o.vendor.unwrap_or_else(|| facts.vendor());
    if let Some(n) = o.gpu {
        check_gpu(facts, vendor, n)?;
    }
    let mut env: Vec<(String, String)> = Vec::new();
    let mut planned = None;
    if vendor.gpu().is_some() && facts.gpus.iter().any(|g| Some(g.vendor) == vendor.gpu()) {
        // The image's release decides the override: a ROCm 6.2 image needs it where a 10.x one builds the target.
        let image = super::plan::image_release(m, &o.image, engine);
        let host_plan = super::plan::plan_on(
            m,
            facts,
            &super::plan::PlanRequest {
                why: image.target.is_some().then(|| image.why.clone()),
                target: image.target.clone(),
                device: o.gpu,
                vendor: Some(vendor),
            },
        )?;
        if image.target.is_none() {
            on(Event::Note(format!(
                "{}; assumed {}, {}",
                image.why,
                host_plan.target.label(),
                host_plan.target.why()
            )));
        }
        if let Some(why) = &host_plan.mismatch {
            on(Event::Warning(format!("{}: {why}", o.image)));
        }
        for w in &host_plan.env.warnings {
            on(Event::Warning(w.clone()));
        }
        // Device numbering is handled by mapping only the selected GPUs, so *_VISIBLE_DEVICES stay unset.
        env = host_plan.env.image_env();
        planned = Some(host_plan.env);
    }
    for (k, v) in &o.env {
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), v.clone()));
    }
    let daemon_cdi = match (vendor, engine) {
        (Vendor::Nvidia, Some(e)) => e
            .info()
            .map(|i| !i.cdi_spec_dirs.is_empty())
            .unwrap_or(false),
        _ => false,
    };
    let groups = root.read_text("/etc/group").unwrap_or_default();
    let devices = engine::device_map(facts, vendor, o.gpu, &groups, daemon_cdi, o.security)
        // Blame the flag only when one was given: a host without amdgpu is no --vendor mistake.
        .map_err(|e| match (o.gpu, o.vendor) {
            (Some(_), _) => Error::invalid("gpu", e),
            (None, Some(_)) => Error::invalid("vendor", e),
            (None, None) => {
                Error::invalid("device mapping", format!("{e}; `rocmenv doctor` says why"))
            }
        })?;
    if let Some(plan) = &planned {
        user_vars(o, plan, devices.gpus.len(), vendor, on)?;
    }
    if !devices.gpus.is_empty() {
        // Under WSL2 an AMD GPU goes through /dev/dxg and the host's libraries: say which, since both are the host's.
        let via = match engine::dxg_mapping(facts) {
            Ok(d) if devices.devices.iter().any(|p| p == engine::DXG) => {
                format!(" through {} and {}", engine::DXG, d.via)
            }
            _ => String::new(),
        };
        on(Event::Log(format!(
            "rocmenv run: maps {}{via}",
            devices.gpus.join(", ")
        )));
    } else if facts.wsl && o.vendor.is_none() {
        // Under WSL2 only nvidia-smi or ROCm's rocminfo name a GPU; neither did.
        on(Event::Log("rocmenv run: note: this WSL2 host shows no GPU (under WSL2 only nvidia-smi or ROCm's rocminfo name one, and neither did): this runs on the CPU; `rocmenv doctor` says why".into()));
    } else if o.vendor != Some(Vendor::Cpu) {
        // A run that could have had a GPU says it has none; `--vendor cpu` asked for exactly that.
        on(Event::Log(format!("rocmenv run: note: maps no GPU ({}): the command runs on the CPU; --vendor cpu runs there without this note", if facts.gpus.is_empty() { "this host shows none" } else { "none of this vendor's" })));
    }
    Ok(RunSpec {
        image: o.image.clone(),
        command: o.command.clone(),
        env,
        mounts: o.mounts.clone(),
        timeout: o.timeout,
        memory: o.memory.as_ref().map(|(_, b)| *b),
        devices,
        result_path: o.result.as_ref().map(|(p, _)| p.clone()),
        uploads: Vec::new(),
    })
}

/// The `-e` variables that disagree with the plan, named with the device each breaks: a warning, or with
/// `--strict` (or `--security strict`) a refusal.
fn user_vars(
    o: &RunPlan,
    plan: &crate::envplan::EnvPlan,
    mapped: usize,
    vendor: Vendor,
    on: Sink,
) -> Result<(), Error> {
    // Inside the container the mapped GPUs are numbered from 0.
    let counts = match vendor {
        Vendor::Nvidia => (0, mapped),
        _ => (mapped, 0),
    };
    let user = o.env.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let wrong = crate::hostplan::judge_user_vars(plan, user, counts);
    if wrong.is_empty() {
        return Ok(());
    }
    let text: Vec<String> = wrong.iter().map(|w| format!("-e {}", w.problem)).collect();
    if o.strict || o.security == engine::Security::Strict {
        return Err(Error::invalid(
            "env",
            format!(
                "{} (drop it, or run without --strict to pass it on)",
                text.join("; ")
            ),
        ));
    }
    for t in text {
        on(Event::Warning(format!("{t}; passed on as given")));
    }
    Ok(())
}

/// `--gpu n` against the host's GPUs of `vendor`: a GPU that is not there must not quietly become a CPU run.
fn check_gpu(facts: &crate::host::HostFacts, vendor: Vendor, n: usize) -> Result<(), Error> {
    if facts.gpus.is_empty() {
        // No GPU at all says so, whatever the vendor.
        return crate::host::check_gpu_number(n, None, &[]).map_err(|e| Error::invalid("gpu", e));
    }
    facts
        .gpu_number(vendor, n)
        .map(|_| ())
        .map_err(|e| Error::invalid("gpu", e))
}
