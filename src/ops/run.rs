//! run's work: a validated `RunPlan` turned into a `RunSpec` for the host the context reads (its devices, groups and
//! the variables its GPUs need), which the engine then runs.

use super::{Ctx, Event, Host, Sink};
use crate::engine::{self, Engine, Mount, RunSpec};
use crate::envplan;
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
    if let Some(v) = vendor.gpu() {
        let inputs: Vec<_> = envplan::inputs_from_host(facts)
            .into_iter()
            .filter(|g| g.vendor == v)
            .collect();
        if !inputs.is_empty() {
            let plan = envplan::plan(m, &inputs, None, o.gpu)?;
            for w in &plan.warnings {
                on(Event::Warning(w.clone()));
            }
            // Device numbering is handled by mapping only the selected GPUs, so *_VISIBLE_DEVICES stay unset.
            env = plan.image_env();
        }
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
        .map_err(|e| Error::invalid("vendor", e))?;
    if !devices.gpus.is_empty() {
        on(Event::Log(format!(
            "rocmenv run: maps {}",
            devices.gpus.join(", ")
        )));
    } else if facts.wsl && o.vendor.is_none() {
        on(Event::Log("rocmenv run: note: WSL2 reaches the GPU only through /dev/dxg, which rocmenv does not map: this runs on the CPU".into()));
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

/// `--gpu n` against the host's GPUs of `vendor`: a GPU that is not there must not quietly become a CPU run.
fn check_gpu(facts: &crate::host::HostFacts, vendor: Vendor, n: usize) -> Result<(), Error> {
    // A GPU that is not there must not quietly become a CPU run.
    let (amd, nvidia) = (facts.amd_gpus().count(), facts.nvidia_gpus().count());
    let count = match vendor {
        Vendor::Amd => amd,
        Vendor::Nvidia => nvidia,
        Vendor::Cpu => 0,
    };
    if n >= count {
        let have = |gpus: Vec<&crate::host::Gpu>| {
            gpus.iter()
                .map(|g| g.label())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let why = match vendor {
            _ if facts.gpus.is_empty() => {
                format!("GPU {n} does not exist; this host has no GPU")
            }
            Vendor::Cpu => {
                format!("--vendor cpu maps no GPU, so GPU {n} cannot be given")
            }
            Vendor::Amd if amd == 0 => {
                format!("GPU {n} does not exist; this host has no AMD GPU")
            }
            Vendor::Nvidia if nvidia == 0 => {
                format!("GPU {n} does not exist; this host has no NVIDIA GPU")
            }
            Vendor::Amd => format!(
                "GPU {n} does not exist; this host's AMD GPUs are {}",
                have(facts.amd_gpus().collect())
            ),
            Vendor::Nvidia => format!(
                "GPU {n} does not exist; this host's NVIDIA GPUs are {}",
                have(facts.nvidia_gpus().collect())
            ),
        };
        return Err(Error::invalid("gpu", why));
    }
    Ok(())
}
