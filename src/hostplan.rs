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

impl<'m> HostPlan<'m> {
    /// Resolves the plan for the host's GPUs against `target`; `device` keeps one GPU (by its number within its
    /// vendor), checked here once for every command.
    pub fn resolve(
        m: &'m Matrices,
        facts: &HostFacts,
        target: Target<'m>,
        device: Option<usize>,
    ) -> Result<HostPlan<'m>, Error> {
        // Each vendor's GPUs are judged only when the target has that vendor's stack.
        let judged = |v: Vendor| match v {
            Vendor::Amd => target.rocm.is_some(),
            _ => target.cuda.is_some(),
        };
        let inputs: Vec<GpuInput> = envplan::inputs_from_host(facts)
            .into_iter()
            .filter(|g| judged(g.vendor))
            .collect();
        let mut env = envplan::plan(m, &inputs, target.rocm.as_ref().map(|r| r.release), device)?;
        // A GPU of the vendor the target is not for is listed, not judged.
        for g in facts.gpus.iter().filter(|g| !judged(g.vendor)) {
            env.devices.push(DevicePlan {
                vendor: g.vendor,
                index: g.index,
                label: g.label(),
                pci_address: Some(g.pci_address.clone()),
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
        if judged(Vendor::Amd) {
            dxg_detection(facts, &mut env);
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
}

/// `8× NVIDIA H100 SXM5 80GB`: the host's GPUs, counted by name, each with its vendor.
pub fn gpus_in_words(facts: &HostFacts) -> String {
    crate::text::counted(facts.gpus.iter().map(|g| {
        let name = g
            .name
            .clone()
            .unwrap_or_else(|| format!("{} {}", g.vendor.label(), g.device_id));
        if name.starts_with(g.vendor.label()) {
            name
        } else {
            format!("{} {name}", g.vendor.label())
        }
    }))
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

/// Under WSL with AMD's ROCDXG bridge (ROCm 7), the runtime looks for the GPU behind /dev/dxg only when
/// `HSA_ENABLE_DXG_DETECTION=1` is set (ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md).
fn dxg_detection(facts: &HostFacts, env: &mut EnvPlan) {
    let bridge = facts.wsl
        && facts.amd_gpus().any(crate::host::is_dxg)
        && facts
            .device_nodes
            .dxg_libs
            .iter()
            .any(|l| l == crate::host::WSL_LIBROCDXG);
    if bridge && env.get("HSA_ENABLE_DXG_DETECTION").is_none() {
        env.vars.push(envplan::EnvVar {
            name: "HSA_ENABLE_DXG_DETECTION".into(),
            value: "1".into(),
            why: format!("ROCm on WSL reaches the GPU through AMD's ROCDXG bridge ({}), which looks behind /dev/dxg only with it", crate::host::WSL_LIBROCDXG),
        });
    }
}

/// The variables a user sets that decide which GPUs run and as what: rocmenv judges each against the plan.
pub const USER_VARS: [&str; 4] = [
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "HSA_OVERRIDE_GFX_VERSION",
];

/// True for a variable [`judge_user_vars`] looks at (`HSA_OVERRIDE_GFX_VERSION_<n>` included).
pub fn is_user_var(name: &str) -> bool {
    USER_VARS.contains(&name) || name.starts_with("HSA_OVERRIDE_GFX_VERSION_")
}

/// What to do about a user's variable that disagrees with the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UserVarFix {
    /// Set it to the plan's value.
    Set(String),
    /// Remove it.
    Unset,
}

/// A user's variable that disagrees with the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserVar {
    /// Its name.
    pub name: String,
    /// The value the user set.
    pub value: String,
    /// One line: what it breaks, naming the devices.
    pub problem: String,
    /// The correction.
    pub fix: UserVarFix,
}

/// Judges the user's `vars` (exported, or `-e` for a container) against `env`: each override or visible-devices
/// variable that the plan sets otherwise, or that forces a device onto kernels the plan does not run it on, or that
/// names a device beyond the `visible` AMD / NVIDIA GPUs. Only the variables of [`is_user_var`] are looked at.
pub fn judge_user_vars<'v>(
    env: &EnvPlan,
    vars: impl IntoIterator<Item = (&'v str, &'v str)>,
    visible: (usize, usize),
) -> Vec<UserVar> {
    let mut out = Vec::new();
    for (name, value) in vars.into_iter().filter(|(n, _)| is_user_var(n)) {
        let problem = match env.get(name) {
            Some(planned) if planned == value => continue,
            // Fewer devices than the plan shows is the user's choice; one the plan hides is not.
            Some(planned) if name.ends_with("_VISIBLE_DEVICES") && subset(value, planned) => {
                continue
            }
            Some(planned) => Some((
                format!(
                    "{name}={value} is not what the plan sets ({name}={planned}): {}",
                    planned_why(env, name)
                ),
                UserVarFix::Set(planned.to_string()),
            )),
            None if name.starts_with("HSA_OVERRIDE_GFX_VERSION") => {
                override_problem(env, name, value).map(|p| (p, UserVarFix::Unset))
            }
            None => devices_problem(name, value, visible).map(|p| (p, UserVarFix::Unset)),
        };
        if let Some((problem, fix)) = problem {
            out.push(UserVar {
                name: name.to_string(),
                value: value.to_string(),
                problem: crate::text::one_line(&problem),
                fix,
            });
        }
    }
    out
}

/// True when every entry of the list `value` is in the list `of`.
fn subset(value: &str, of: &str) -> bool {
    let of: Vec<&str> = of.split(',').map(str::trim).collect();
    value.split(',').map(str::trim).all(|v| of.contains(&v))
}

fn planned_why(env: &EnvPlan, name: &str) -> String {
    env.vars
        .iter()
        .find(|v| v.name == name)
        .map(|v| v.why.clone())
        .unwrap_or_default()
}

/// An override the plan does not set: which AMD devices it forces onto other kernels.
fn override_problem(env: &EnvPlan, name: &str, value: &str) -> Option<String> {
    let index = name
        .strip_prefix("HSA_OVERRIDE_GFX_VERSION_")
        .and_then(|n| n.parse::<usize>().ok());
    let hit: Vec<(String, String, usize)> = env
        .devices
        .iter()
        .filter(|d| d.vendor == Vendor::Amd && d.hidden.is_none())
        .filter(|d| index.is_none_or(|i| d.index == i))
        // A per-device variable wins over the global one for its device.
        .filter(|d| {
            index.is_some()
                || env
                    .get(&format!("HSA_OVERRIDE_GFX_VERSION_{}", d.index))
                    .is_none()
        })
        .filter_map(|d| {
            let own = d.arch.clone().unwrap_or_else(|| "an unknown target".into());
            // The value a device's own target already reads as (gfx1030 is 10.3.0) changes nothing.
            let own_value = d
                .arch
                .as_deref()
                .and_then(|a| a.parse::<crate::gfx::GfxTarget>().ok())
                .map(|t| t.override_value());
            let how = match &d.runs {
                DeviceRun::Override { value: v, .. } if v == value => return None,
                DeviceRun::Native if own_value.as_deref() == Some(value) => return None,
                DeviceRun::Native => "runs its own kernels natively".to_string(),
                DeviceRun::Override { value, .. } => format!("needs {value}"),
                DeviceRun::Cannot { .. } | DeviceRun::Unknown { .. } => {
                    "is not run through an override".to_string()
                }
            };
            Some((own, how, d.index))
        })
        .collect();
    let hit = grouped(hit);
    let rocm = env
        .rocm
        .as_deref()
        .map(|r| format!(" on ROCm {r}"))
        .unwrap_or_default();
    if hit.is_empty() {
        return match index {
            Some(i)
                if !env
                    .devices
                    .iter()
                    .any(|d| d.vendor == Vendor::Amd && d.index == i) =>
            {
                Some(format!(
                    "{name}={value} names AMD device {i}, which does not exist"
                ))
            }
            _ => None,
        };
    }
    Some(format!(
        "{name}={value} forces kernels the plan does not run{rocm}: {}",
        hit.join("; ")
    ))
}

/// `GPUs 0, 1, 2, 3 (gfx90a) runs its own kernels natively`: one clause per target and outcome, not per device.
fn grouped(items: Vec<(String, String, usize)>) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<usize>)> = Vec::new();
    for (own, how, i) in items {
        match groups.iter_mut().find(|(o, h, _)| *o == own && *h == how) {
            Some((_, _, is)) => is.push(i),
            None => groups.push((own, how, vec![i])),
        }
    }
    groups
        .into_iter()
        .map(|(own, how, is)| {
            let n: Vec<String> = is.iter().map(|i| i.to_string()).collect();
            let gpus = if is.len() == 1 { "GPU" } else { "GPUs" };
            let how = if is.len() == 1 {
                how
            } else {
                how.replacen("runs its", "run their", 1)
                    .replacen("needs", "need", 1)
                    .replacen("is not", "are not", 1)
            };
            format!("AMD {gpus} {} ({own}) {how}", n.join(", "))
        })
        .collect()
}

/// A visible-devices list naming a device beyond the ones there are.
fn devices_problem(name: &str, value: &str, (amd, nvidia): (usize, usize)) -> Option<String> {
    let count = if name == "CUDA_VISIBLE_DEVICES" && nvidia > 0 {
        nvidia
    } else {
        amd.max(nvidia)
    };
    let beyond: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|p| p.parse::<usize>().is_ok_and(|i| i >= count))
        .collect();
    (!beyond.is_empty()).then(|| {
        format!(
            "{name}={value} names device {}, but there {} {count} GPU{}: nothing would run on it",
            beyond.join(", "),
            if count == 1 { "is" } else { "are" },
            if count == 1 { "" } else { "s" }
        )
    })
}
