//! One answer per host: the release a host (or an image run on it) is judged against, and for each of its GPUs how it
//! runs there (natively, through an override, or not at all), whether the environment shows it, and the variables
//! that make it so. `ops::plan` resolves it once per question; doctor's checks compare against it, env prints it,
//! run maps it, dockerfile pins it and init writes it, so no command decides an override on its own.

use crate::envplan::{self, DevicePlan, DeviceRun, EnvPlan, GpuInput, Hidden};
use crate::error::Error;
use crate::host::HostFacts;
use crate::matrix::Matrices;
use crate::target::Target;
use crate::vendor::Vendor;
use serde::Serialize;

/// The resolved plan for one host and one target.
#[derive(Debug, Clone)]
pub struct HostPlan<'m> {
    /// The release(s) the plan is for, and how they were chosen.
    pub target: Target<'m>,
    /// The variables, and every GPU with how it runs and whether it is hidden.
    pub env: EnvPlan,
    /// The target is another vendor's than every GPU the host has: why, naming the GPUs.
    pub mismatch: Option<String>,
}

/// The plan as `--format json` and reports show it.
#[derive(Debug, Serialize)]
pub struct PlanView<'a> {
    /// The ROCm release, when the target has one.
    pub rocm: Option<String>,
    /// The CUDA release, when the target has one.
    pub cuda: Option<String>,
    /// How the target was chosen.
    pub why: String,
    /// Each GPU.
    pub devices: &'a [DevicePlan],
    /// The variables, in order.
    pub vars: &'a [envplan::EnvVar],
    /// The wrong-vendor failure, if any.
    pub mismatch: Option<&'a str>,
}

impl<'m> HostPlan<'m> {
    /// Resolves the plan for the host's GPUs against `target`; `device` keeps one GPU (by its number within its
    /// vendor), checked here once for every command.
    pub fn resolve(
        m: &'m Matrices,
        facts: &HostFacts,
        target: Target<'m>,
        device: Option<usize>,
    ) -> Result<HostPlan<'m>, Error> {
        let all = envplan::inputs_from_host(facts);
        let wanted = |g: &&GpuInput| match g.vendor {
            Vendor::Amd => target.rocm.is_some(),
            _ => target.cuda.is_some(),
        };
        let inputs: Vec<GpuInput> = all.iter().filter(wanted).cloned().collect();
        let mut env = envplan::plan(m, &inputs, target.rocm.as_ref().map(|r| r.release), device)?;
        // A GPU of the vendor the target is not for is listed, not judged.
        for g in all.iter().filter(|g| !wanted(g)) {
            let index = all
                .iter()
                .filter(|x| x.vendor == g.vendor)
                .position(|x| x.pci_address == g.pci_address)
                .unwrap_or(0);
            env.devices.push(DevicePlan {
                vendor: g.vendor,
                index,
                label: g.label.clone(),
                pci_address: g.pci_address.clone(),
                arch: g
                    .gfx
                    .map(|t| t.to_string())
                    .or_else(|| g.compute_capability.clone()),
                runs: DeviceRun::Unknown {
                    why: format!(
                        "the target ({}) is not for {} GPUs",
                        target.label(),
                        g.vendor.label()
                    ),
                },
                hidden: None,
            });
        }
        let mismatch = mismatch(&target, facts);
        Ok(HostPlan {
            target,
            env,
            mismatch,
        })
    }

    /// Every GPU of the host, AMD (in runtime order) then NVIDIA.
    pub fn devices(&self) -> &[DevicePlan] {
        &self.env.devices
    }

    /// The GPU at `pci_address`.
    pub fn device_at(&self, pci_address: &str) -> Option<&DevicePlan> {
        self.env
            .devices
            .iter()
            .find(|d| d.pci_address.as_deref() == Some(pci_address))
    }

    /// Why the environment hides the GPU at `pci_address`, when it does.
    pub fn hidden(&self, pci_address: &str) -> Option<Hidden> {
        self.device_at(pci_address)?.hidden
    }

    /// The GPUs the plan sets aside (an iGPU next to a discrete GPU, or not the `--device`): their failures do not
    /// count against the host. A GPU hidden because it cannot run still does.
    pub fn set_aside(&self) -> Vec<(&str, Hidden)> {
        self.env
            .devices
            .iter()
            .filter_map(|d| match (d.pci_address.as_deref(), d.hidden) {
                (Some(p), Some(h)) if h != Hidden::CannotRun => Some((p, h)),
                _ => None,
            })
            .collect()
    }

    /// The plan as JSON shows it.
    pub fn view(&self) -> PlanView<'_> {
        PlanView {
            rocm: self
                .target
                .rocm
                .as_ref()
                .map(|r| r.release.version.to_string()),
            cuda: self
                .target
                .cuda
                .as_ref()
                .map(|c| c.cuda.version.to_string()),
            why: self.target.why(),
            devices: &self.env.devices,
            vars: &self.env.vars,
            mismatch: self.mismatch.as_deref(),
        }
    }
}

/// `8× NVIDIA H100 SXM5 80GB`: the host's GPUs, counted by name.
pub fn gpus_in_words(facts: &HostFacts) -> String {
    let mut counted: Vec<(String, usize)> = Vec::new();
    for g in &facts.gpus {
        let name = g
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", g.vendor.label(), g.device_id));
        let name = if name.starts_with(g.vendor.label()) {
            name
        } else {
            format!("{} {name}", g.vendor.label())
        };
        match counted.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counted.push((name, 1)),
        }
    }
    counted
        .into_iter()
        .map(|(n, c)| if c == 1 { n } else { format!("{c}× {n}") })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The target names one vendor's stack and the host has GPUs, none of them that vendor's.
fn mismatch(target: &Target, facts: &HostFacts) -> Option<String> {
    if facts.gpus.is_empty() {
        return None;
    }
    let has = |v: Vendor| facts.gpus.iter().any(|g| g.vendor == v);
    let (needs, other_target) = match (&target.rocm, &target.cuda) {
        (Some(_), None) if !has(Vendor::Amd) => (Vendor::Amd, "--target cuda-X.Y or ngc-YY.MM"),
        (None, Some(_)) if !has(Vendor::Nvidia) => (Vendor::Nvidia, "--target rocm-X.Y"),
        _ => return None,
    };
    Some(format!(
        "{} runs on {} GPUs, and this host has none: it has {} (check it against its own vendor's stack: {other_target})",
        target.label(),
        needs.label(),
        gpus_in_words(facts)
    ))
}
