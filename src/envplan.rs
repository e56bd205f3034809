//! `rocmenv env`: the variables a framework needs for the GPUs of a host (or named with `--gfx`), from the matrices only.

use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::host::HostFacts;
use crate::matrix::{Confidence, GfxRun, Matrices, RocmRelease, Vendor};
use crate::version::Version;
use serde::Serialize;

/// A GPU the plan is made for.
#[derive(Debug, Clone)]
pub struct GpuInput {
    /// Vendor.
    pub vendor: Vendor,
    /// AMD gfx target, when known.
    pub gfx: Option<GfxTarget>,
    /// NVIDIA compute capability, when known.
    pub compute_capability: Option<String>,
    /// True for an APU's integrated GPU.
    pub integrated: bool,
    /// How the user knows it (`RX 6700 XT at 0000:03:00.0`, or `gfx1031` for `--gfx`).
    pub label: String,
    /// PCI address, for a detected GPU.
    pub pci_address: Option<String>,
}

/// How one GPU runs on the release the plan is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum DeviceRun {
    /// Its own target's kernels (AMD), or a compute capability (NVIDIA) whose architecture list holds it.
    Native,
    /// Another target's kernels, through `HSA_OVERRIDE_GFX_VERSION[_n]`.
    Override {
        /// The target it runs as.
        to: GfxTarget,
        /// The variable's value (`10.3.0`).
        value: String,
    },
    /// It cannot run this release; why.
    Cannot {
        /// One line.
        why: String,
    },
    /// Not judged (target unknown, or another vendor's release); why.
    Unknown {
        /// One line.
        why: String,
    },
}

/// Why the environment hides a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hidden {
    /// `--device` chose another GPU.
    NotChosen,
    /// An integrated GPU next to a discrete one: set aside, not counted against the host.
    Integrated,
    /// It cannot run the release while other GPUs can.
    CannotRun,
}

impl Hidden {
    /// One line: why.
    pub fn why(self) -> &'static str {
        match self {
            Hidden::NotChosen => "not the --device",
            Hidden::Integrated => "an integrated GPU next to a discrete one",
            Hidden::CannotRun => "it cannot run this release",
        }
    }
}

/// One GPU in the plan: how it runs and whether the environment shows it.
#[derive(Debug, Clone, Serialize)]
pub struct DevicePlan {
    /// Vendor.
    pub vendor: Vendor,
    /// Its number within its vendor (what `HIP_VISIBLE_DEVICES` / `CUDA_VISIBLE_DEVICES` count).
    pub index: usize,
    /// How the user knows it.
    pub label: String,
    /// PCI address, for a detected GPU.
    pub pci_address: Option<String>,
    /// gfx target (AMD) or compute capability (NVIDIA), when known.
    pub arch: Option<String>,
    /// How it runs.
    pub runs: DeviceRun,
    /// Why the environment hides it (`None`: visible).
    pub hidden: Option<Hidden>,
}

/// One variable, and why it is set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    /// Name.
    pub name: String,
    /// Value (already from a safe character set; formats still quote it).
    pub value: String,
    /// One line: why.
    pub why: String,
}

/// The computed environment.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EnvPlan {
    /// Variables in output order.
    pub vars: Vec<EnvVar>,
    /// Things the user should know (low-confidence overrides, GPUs that cannot run).
    pub warnings: Vec<String>,
    /// True when a selected GPU cannot run the release at all.
    pub unusable: bool,
    /// The ROCm release the plan is for.
    pub rocm: Option<String>,
    /// Every GPU the plan was given, AMD then NVIDIA, each with how it runs and whether it is hidden.
    pub devices: Vec<DevicePlan>,
    /// Variables the user's environment sets that the plan removes: name, the user's value, and why.
    pub unset: Vec<EnvVar>,
}

impl EnvPlan {
    fn set(&mut self, name: &str, value: String, why: String) {
        self.vars.push(EnvVar {
            name: name.to_string(),
            value,
            why,
        });
    }

    /// The value of a variable, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value.as_str())
    }

    /// The variables that describe the image rather than this host's device numbering (for baking into a Dockerfile).
    pub fn image_env(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .filter(|v| !v.name.ends_with("_VISIBLE_DEVICES") && v.name != "CUDA_DEVICE_ORDER")
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect()
    }
}

/// AMD GPUs in runtime (KFD) order, then NVIDIA GPUs, as plan inputs.
pub fn inputs_from_host(facts: &HostFacts) -> Vec<GpuInput> {
    let label = |g: &crate::host::Gpu| g.label();
    facts
        .amd_gpus()
        .map(|g| GpuInput {
            vendor: Vendor::Amd,
            gfx: g.gfx,
            compute_capability: None,
            integrated: g.integrated == Some(true),
            label: label(g),
            pci_address: Some(g.pci_address.clone()),
        })
        .chain(facts.nvidia_gpus().map(|g| GpuInput {
            vendor: Vendor::Nvidia,
            gfx: None,
            compute_capability: g.compute_capability.clone(),
            integrated: false,
            label: label(g),
            pci_address: Some(g.pci_address.clone()),
        }))
        .collect()
}

/// `--gfx` values as plan inputs; unknown targets are refused with the known ones listed.
pub fn inputs_from_gfx(m: &Matrices, names: &[String]) -> Result<Vec<GpuInput>, Error> {
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let bad = |message: String| Error::Invalid {
                fields: vec!["gfx".into()],
                value: None,
                message,
            };
            let t: GfxTarget = n
                .parse()
                .map_err(|e: crate::gfx::GfxError| bad(e.to_string()))?;
            if m.gfx_info(t).is_none() {
                let known: Vec<String> = m
                    .gpus
                    .gfx_targets
                    .iter()
                    .map(|i| i.target.to_string())
                    .collect();
                return Err(bad(format!(
                    "{t} is not in gpus.yaml; known targets: {}",
                    known.join(", ")
                )));
            }
            let integrated = m.gpus.gpus.iter().any(|g| g.gfx == Some(t) && g.integrated)
                && !m
                    .gpus
                    .gpus
                    .iter()
                    .any(|g| g.gfx == Some(t) && !g.integrated);
            Ok(GpuInput {
                vendor: Vendor::Amd,
                gfx: Some(t),
                compute_capability: None,
                integrated,
                label: format!("GPU {i} ({t})"),
                pci_address: None,
            })
        })
        .collect()
}

/// How one AMD GPU runs on the release.
enum Runs {
    /// The release builds its own target.
    Native(GfxTarget),
    /// It runs another target's kernels through an override.
    Override {
        own: GfxTarget,
        to: GfxTarget,
        confidence: Confidence,
        note: Option<String>,
        /// True when the matrices cannot say whether the release builds `to` (no `built:` data).
        unconfirmed: bool,
    },
    /// It cannot run this release.
    No(String),
}

fn how_it_runs(m: &Matrices, r: &RocmRelease, own: GfxTarget) -> Runs {
    match m.gfx_on_release(r, own) {
        // Built but not on AMD's list: its own kernels run; doctor says it is untested.
        GfxRun::Native(_) | GfxRun::BuiltNotSupported(_) => Runs::Native(own),
        GfxRun::Override(a) => Runs::Override { own, to: a.target, confidence: a.confidence, note: a.note.clone(), unconfirmed: false },
        GfxRun::OverrideUnknown { advice: a, nearest } => Runs::Override { own, to: a.target, confidence: a.confidence, note: Some(unknown_note(r, a, nearest)), unconfirmed: true },
        GfxRun::OverrideCrashes(a) => Runs::No(format!("{own} is not built by ROCm {}, and overriding it to {} crashes (different ISA); no override is set", r.version, a.target)),
        GfxRun::OverrideNotBuilt(a) => Runs::No(format!("{own} is not built by ROCm {}, nor is its override target {}", r.version, a.target)),
        GfxRun::NoOverride => Runs::No(format!("{own} is not built by ROCm {} and no override is known", r.version)),
    }
}

/// Why an override whose target the matrices cannot confirm is still set: field practice, unconfirmed.
fn unknown_note(
    r: &RocmRelease,
    a: &crate::matrix::OverrideAdvice,
    nearest: Option<&crate::version::Version>,
) -> String {
    let near = nearest
        .map(|v| format!("; nearest release with data: {v}"))
        .unwrap_or_default();
    let evidence = a
        .note
        .as_deref()
        .map(|n| format!("; {n}"))
        .unwrap_or_default();
    format!("unconfirmed: the matrices do not say whether ROCm {} builds {} (no built data), so this is the override used in the field{near}{evidence}", r.version, a.target)
}

/// The newest release that builds every target natively, else through an override the matrices confirm, else through
/// one they cannot (no built data).
pub fn default_release<'m>(m: &'m Matrices, targets: &[GfxTarget]) -> &'m RocmRelease {
    let all = |pred: &dyn Fn(&RocmRelease, GfxTarget) -> bool| {
        m.production()
            .rev()
            .find(|r| targets.iter().all(|t| pred(r, *t)))
    };
    // Known data first: a release whose built lists confirm the override beats a newer one that cannot say.
    all(&|r, t| r.builds(t))
        .or_else(|| {
            all(&|r, t| {
                let how = m.gfx_on_release(r, t);
                how.runs() && !how.is_unconfirmed()
            })
        })
        .or_else(|| all(&|r, t| m.gfx_on_release(r, t).runs()))
        .unwrap_or_else(|| m.newest_rocm())
}

fn confidence_word(c: Confidence) -> &'static str {
    match c {
        Confidence::High => "high",
        Confidence::Medium => "medium",
        Confidence::Low => "low",
    }
}

/// Computes the plan. `device` selects one GPU by its index within its vendor (as `HIP_VISIBLE_DEVICES` counts).
pub fn plan(
    m: &Matrices,
    gpus: &[GpuInput],
    release: Option<&RocmRelease>,
    device: Option<usize>,
) -> Result<EnvPlan, Error> {
    let amd: Vec<(usize, &GpuInput)> = gpus
        .iter()
        .filter(|g| g.vendor == Vendor::Amd)
        .enumerate()
        .collect();
    let nvidia: Vec<(usize, &GpuInput)> = gpus
        .iter()
        .filter(|g| g.vendor == Vendor::Nvidia)
        .enumerate()
        .collect();
    let mut p = EnvPlan::default();
    if let Some(d) = device {
        // Counted within the vendor the plan numbers by: AMD when there is one, else NVIDIA.
        let (vendor, gpus) = match amd.is_empty() {
            true if nvidia.is_empty() => (None, &nvidia),
            true => (Some(Vendor::Nvidia), &nvidia),
            false => (Some(Vendor::Amd), &amd),
        };
        let have: Vec<String> = gpus.iter().map(|(_, g)| g.label.clone()).collect();
        crate::host::check_gpu_number(d, vendor, &have).map_err(|message| Error::Invalid {
            fields: vec!["device".into()],
            value: None,
            message,
        })?;
    }
    if !amd.is_empty() {
        plan_amd(m, &amd, release, device, &mut p);
    }
    if !nvidia.is_empty() {
        plan_nvidia(&nvidia, if amd.is_empty() { device } else { None }, &mut p);
    }
    Ok(p)
}

/// Plans the AMD side: the release, which GPUs to use and hide, their overrides, and the targets to build for.
fn plan_amd(
    m: &Matrices,
    amd: &[(usize, &GpuInput)],
    release: Option<&RocmRelease>,
    device: Option<usize>,
    p: &mut EnvPlan,
) {
    let known: Vec<GfxTarget> = amd.iter().filter_map(|(_, g)| g.gfx).collect();
    let r = release.unwrap_or_else(|| default_release(m, &known));
    p.rocm = Some(r.version.to_string());
    // Which GPUs to use: the one asked for, else all but iGPUs that sit next to a discrete GPU.
    let has_discrete = amd.iter().any(|(_, g)| !g.integrated);
    let selected: Vec<&(usize, &GpuInput)> = match device {
        Some(d) => amd.iter().filter(|(i, _)| *i == d).collect(),
        None => amd
            .iter()
            .filter(|(_, g)| !(g.integrated && has_discrete))
            .collect(),
    };
    let runs = how_selected_run(m, r, &selected, p);
    let chosen: Vec<usize> = selected.iter().map(|(i, _)| *i).collect();
    p.devices
        .extend(amd_devices(m, r, amd, &chosen, &runs.usable, device));
    hide_unusable(amd, &runs.usable, device, has_discrete, p);
    if !set_overrides(r, &runs, p) {
        return;
    }
    set_build_targets(runs.effective, !runs.overrides.is_empty(), p);
}

/// Why an AMD GPU is left out of the environment, when it is: the --device choice, an iGPU beside a discrete GPU,
/// or a GPU that cannot run the release while others can (`HIP_VISIBLE_DEVICES` hides it).
fn why_hidden(
    g: &GpuInput,
    chosen: bool,
    usable: bool,
    any_usable: bool,
    device: Option<usize>,
) -> Option<Hidden> {
    match (chosen, device) {
        (false, Some(_)) => Some(Hidden::NotChosen),
        (false, None) => Some(Hidden::Integrated),
        (true, _) if !usable && any_usable && g.gfx.is_some() => Some(Hidden::CannotRun),
        _ => None,
    }
}

/// Every AMD GPU as the plan sees it: how it runs on `r` and why it is hidden, if it is.
fn amd_devices(
    m: &Matrices,
    r: &RocmRelease,
    amd: &[(usize, &GpuInput)],
    chosen: &[usize],
    usable: &[usize],
    device: Option<usize>,
) -> Vec<DevicePlan> {
    amd.iter()
        .map(|(i, g)| {
            let runs = match g.gfx {
                None => DeviceRun::Unknown {
                    why: "gfx target unknown".into(),
                },
                Some(own) => match how_it_runs(m, r, own) {
                    Runs::Native(_) => DeviceRun::Native,
                    Runs::Override { to, .. } => DeviceRun::Override {
                        to,
                        value: to.override_value(),
                    },
                    Runs::No(why) => DeviceRun::Cannot { why },
                },
            };
            let hidden = why_hidden(
                g,
                chosen.contains(i),
                usable.contains(i),
                !usable.is_empty(),
                device,
            );
            DevicePlan {
                vendor: Vendor::Amd,
                index: *i,
                label: g.label.clone(),
                pci_address: g.pci_address.clone(),
                arch: g.gfx.map(|t| t.to_string()),
                runs,
                hidden,
            }
        })
        .collect()
}

/// How the selected AMD GPUs run on the release, gathered for the variables that follow.
#[derive(Default)]
struct AmdRuns<'a> {
    /// The targets whose kernels the usable GPUs run.
    effective: Vec<GfxTarget>,
    /// Each overridden device: its index, the target it runs as, and why.
    overrides: Vec<(usize, GfxTarget, String)>,
    /// The indices of the GPUs that run.
    usable: Vec<usize>,
    /// Each usable device, how the user knows it, and the override it needs (None: runs natively).
    runs_as: Vec<(usize, &'a str, Option<GfxTarget>)>,
}

/// How each selected GPU runs on `r`; warns in `p` about unknown targets, doubtful overrides and GPUs that cannot run.
fn how_selected_run<'a>(
    m: &Matrices,
    r: &RocmRelease,
    selected: &[&(usize, &'a GpuInput)],
    p: &mut EnvPlan,
) -> AmdRuns<'a> {
    let mut runs = AmdRuns::default();
    for (i, g) in selected.iter().copied() {
        let Some(own) = g.gfx else {
            p.warnings.push(format!(
                "{}: gfx target unknown; no variables for it",
                g.label
            ));
            continue;
        };
        match how_it_runs(m, r, own) {
            Runs::Native(t) => {
                runs.effective.push(t);
                runs.usable.push(*i);
                runs.runs_as.push((*i, &g.label, None));
            }
            Runs::Override {
                own,
                to,
                confidence,
                note,
                unconfirmed,
            } => {
                runs.effective.push(to);
                runs.usable.push(*i);
                runs.runs_as.push((*i, &g.label, Some(to)));
                // Without built data the release's own kernels for `own` are not known to be missing either.
                let lacks = if unconfirmed {
                    "is not on the supported list of"
                } else {
                    "is not built by"
                };
                let why = format!(
                    "{own} {lacks} ROCm {}; it runs {to} kernels (confidence: {}{})",
                    r.version,
                    confidence_word(confidence),
                    note.map(|n| format!("; {n}")).unwrap_or_default()
                );
                if confidence != Confidence::High || unconfirmed {
                    p.warnings.push(format!("{}: {why}", g.label));
                }
                runs.overrides.push((*i, to, why));
            }
            Runs::No(why) => {
                p.unusable = true;
                p.warnings.push(format!("{}: {why}", g.label));
            }
        }
    }
    runs
}

/// Sets `HIP_VISIBLE_DEVICES` to the usable GPUs when some AMD GPUs are not to be used, saying why each is hidden.
fn hide_unusable(
    amd: &[(usize, &GpuInput)],
    usable: &[usize],
    device: Option<usize>,
    has_discrete: bool,
    p: &mut EnvPlan,
) {
    // Hide what should not be used: an iGPU next to a discrete GPU, GPUs that cannot run, or all but --device.
    if usable.len() < amd.len() && !usable.is_empty() {
        let list = usable
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let hidden: Vec<String> = amd
            .iter()
            .filter(|(i, _)| !usable.contains(i))
            .map(|(_, g)| {
                let what = g
                    .gfx
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "unknown target".into());
                let why = match device {
                    Some(_) => "not the --device",
                    None if g.integrated && has_discrete => {
                        "an integrated GPU next to a discrete one"
                    }
                    None => "cannot run this release",
                };
                format!("{} ({what}): {why}", g.label)
            })
            .collect();
        p.set(
            "HIP_VISIBLE_DEVICES",
            list,
            format!("hides {}; set HIP_VISIBLE_DEVICES only, since ROCR_VISIBLE_DEVICES would renumber the devices first", hidden.join("; ")),
        );
    }
}

/// Sets the `HSA_OVERRIDE_GFX_VERSION[_n]` variables the usable GPUs need; false (and `p` emptied and marked
/// unusable) when no one environment can run them all.
fn set_overrides(r: &RocmRelease, runs: &AmdRuns, p: &mut EnvPlan) -> bool {
    let overrides = &runs.overrides;
    let same = overrides.first().map(|o| o.1);
    let all_overridden_alike = !overrides.is_empty()
        && overrides.len() == runs.usable.len()
        && overrides.iter().all(|o| Some(o.1) == same);
    if all_overridden_alike {
        let (_, to, why) = &overrides[0];
        p.set("HSA_OVERRIDE_GFX_VERSION", to.override_value(), why.clone());
    } else if !overrides.is_empty() {
        if r.version >= Version::new(6, 2, 0) {
            for (i, to, why) in overrides {
                p.set(
                    &format!("HSA_OVERRIDE_GFX_VERSION_{i}"),
                    to.override_value(),
                    format!("device {i} only (per-device overrides need ROCm ≥ 6.2): {why}"),
                );
            }
        } else {
            // One process-wide override cannot serve GPUs that need different ones: no environment runs them all, so
            // set nothing (a PYTORCH_ROCM_ARCH "after the override" without the override would be false) and fail.
            p.unusable = true;
            p.vars.clear();
            p.warnings.push(no_common_override(r, &runs.runs_as));
            return false;
        }
    }
    true
}

/// Sets the variables that name the targets to build for: the GPUs' own, or what they run as when `overridden`.
fn set_build_targets(mut effective: Vec<GfxTarget>, overridden: bool, p: &mut EnvPlan) {
    effective.sort();
    effective.dedup();
    if effective.is_empty() {
        return;
    }
    let names: Vec<String> = effective.iter().map(|t| t.to_string()).collect();
    let why = if overridden {
        "the targets the GPUs run as (after the override)".to_string()
    } else {
        "the GPUs' own targets".to_string()
    };
    p.set(
        "PYTORCH_ROCM_ARCH",
        names.join(";"),
        format!("PyTorch extension builds compile for {why}"),
    );
    p.set(
        "HCC_AMDGPU_TARGET",
        names.join(","),
        format!("older HIP builds read this comma list: {why}"),
    );
    p.set(
        "AMDGPU_TARGETS",
        names.join(";"),
        format!("CMake projects on ROCm (rocBLAS, Tensile, …): {why}"),
    );
    p.set(
        "GPU_TARGETS",
        names.join(";"),
        format!("newer ROCm CMake projects: {why}"),
    );
}

/// Why no single `HSA_OVERRIDE_GFX_VERSION` serves these devices on `r` (older than 6.2), with the choice per device.
fn no_common_override(r: &RocmRelease, runs_as: &[(usize, &str, Option<GfxTarget>)]) -> String {
    let needs: Vec<String> = runs_as
        .iter()
        .map(|(_, label, to)| match to {
            Some(t) => format!(
                "{label} runs only as {t} (HSA_OVERRIDE_GFX_VERSION={})",
                t.override_value()
            ),
            None => format!("{label} runs natively and must not be overridden"),
        })
        .collect();
    let choices: Vec<String> = runs_as
        .iter()
        .map(|(i, _, to)| match to {
            Some(t) => format!(
                "--device {i} (HIP_VISIBLE_DEVICES={i}, HSA_OVERRIDE_GFX_VERSION={})",
                t.override_value()
            ),
            None => format!("--device {i} (HIP_VISIBLE_DEVICES={i}, no override)"),
        })
        .collect();
    format!(
        "no single HSA_OVERRIDE_GFX_VERSION serves these GPUs on ROCm {}: {}; per-device HSA_OVERRIDE_GFX_VERSION_<n> needs ROCm ≥ 6.2. Choose one: {}, or --rocm 6.2 (or newer) for per-device overrides",
        r.version,
        needs.join(", "),
        choices.join(", ")
    )
}

fn plan_nvidia(nvidia: &[(usize, &GpuInput)], device: Option<usize>, p: &mut EnvPlan) {
    let selected: Vec<&(usize, &GpuInput)> = match device {
        Some(d) => nvidia.iter().filter(|(i, _)| *i == d).collect(),
        None => nvidia.iter().collect(),
    };
    if let Some(d) = device {
        // CUDA_VISIBLE_DEVICES counts in CUDA_DEVICE_ORDER, fastest first by default; rocmenv numbers NVIDIA GPUs
        // in PCI bus order (as nvidia-smi does), so the index means the same GPU only with PCI_BUS_ID.
        p.set(
            "CUDA_DEVICE_ORDER",
            "PCI_BUS_ID".into(),
            "CUDA numbers GPUs in PCI bus order, as nvidia-smi and rocmenv do (its default is fastest first)".into(),
        );
        let label = selected
            .first()
            .map_or(String::new(), |(_, g)| format!(" ({})", g.label));
        p.set(
            "CUDA_VISIBLE_DEVICES",
            d.to_string(),
            format!("--device {d}{label}: only that GPU is visible"),
        );
    }
    p.devices.extend(nvidia.iter().map(|(i, g)| DevicePlan {
        vendor: Vendor::Nvidia,
        index: *i,
        label: g.label.clone(),
        pci_address: g.pci_address.clone(),
        arch: g.compute_capability.clone(),
        runs: match &g.compute_capability {
            Some(_) => DeviceRun::Native,
            None => DeviceRun::Unknown {
                why: "compute capability unknown (not in gpus.yaml)".into(),
            },
        },
        hidden: device.filter(|d| d != i).map(|_| Hidden::NotChosen),
    }));
    let mut ccs: Vec<String> = selected
        .iter()
        .filter_map(|(_, g)| g.compute_capability.clone())
        .collect();
    ccs.sort_by_key(|c| crate::version::parse_with_parts(c).map(|(v, _)| v).ok());
    ccs.dedup();
    for (_, g) in &selected {
        if g.compute_capability.is_none() {
            p.warnings.push(format!("{}: compute capability unknown (not in gpus.yaml); TORCH_CUDA_ARCH_LIST leaves it out", g.label));
        }
    }
    if !ccs.is_empty() {
        p.set(
            "TORCH_CUDA_ARCH_LIST",
            ccs.join(" "),
            "PyTorch extension builds compile for these compute capabilities".into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m() -> Matrices {
        Matrices::embedded().unwrap()
    }

    fn amd(gfx: &str, integrated: bool) -> GpuInput {
        GpuInput {
            vendor: Vendor::Amd,
            gfx: Some(gfx.parse().unwrap()),
            compute_capability: None,
            integrated,
            label: gfx.into(),
            pci_address: None,
        }
    }

    #[test]
    fn gfx1031_on_62_overrides_to_10_3_0() {
        let m = m();
        let p = plan(&m, &[amd("gfx1031", false)], m.rocm_release("6.2"), None).unwrap();
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION"), Some("10.3.0"));
        assert_eq!(p.get("PYTORCH_ROCM_ARCH"), Some("gfx1030"));
        assert_eq!(p.get("HIP_VISIBLE_DEVICES"), None);
    }

    #[test]
    fn native_targets_get_no_override() {
        let m = m();
        let p = plan(
            &m,
            &[amd("gfx942", false), amd("gfx942", false)],
            m.rocm_release("6.2"),
            None,
        )
        .unwrap();
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION"), None);
        assert_eq!(p.get("HCC_AMDGPU_TARGET"), Some("gfx942"));
    }

    #[test]
    fn mixed_host_gets_per_device_overrides_and_hides_the_igpu() {
        let m = m();
        let p = plan(
            &m,
            &[
                amd("gfx1100", false),
                amd("gfx1031", false),
                amd("gfx1103", true),
            ],
            m.rocm_release("6.2"),
            None,
        )
        .unwrap();
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION_1"), Some("10.3.0"));
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION"), None);
        assert_eq!(p.get("HIP_VISIBLE_DEVICES"), Some("0,1"));
        assert_eq!(p.get("PYTORCH_ROCM_ARCH"), Some("gfx1030;gfx1100"));
    }

    /// Issue 10: gfx1031 + gfx1100 on ROCm 6.1 exported PYTORCH_ROCM_ARCH "after the override" with no override and
    /// exited 0. No single override serves both and per-device ones need 6.2: unusable, nothing set, choices named.
    #[test]
    fn different_overrides_before_62_are_unusable_with_the_choice_per_device() {
        let m = m();
        let gpus = inputs_from_gfx(&m, &["gfx1031".into(), "gfx1100".into()]).unwrap();
        let p = plan(&m, &gpus, m.rocm_release("6.1"), None).unwrap();
        assert!(p.unusable);
        assert!(p.vars.is_empty(), "{:?}", p.vars);
        let w = p.warnings.join("\n");
        for part in [
            "GPU 0 (gfx1031) runs only as gfx1030 (HSA_OVERRIDE_GFX_VERSION=10.3.0)",
            "GPU 1 (gfx1100) runs natively",
            "HSA_OVERRIDE_GFX_VERSION_<n> needs ROCm ≥ 6.2",
            "--device 0 (HIP_VISIBLE_DEVICES=0, HSA_OVERRIDE_GFX_VERSION=10.3.0)",
            "--device 1 (HIP_VISIBLE_DEVICES=1, no override)",
        ] {
            assert!(w.contains(part), "{part}: {w}");
        }
        // Each choice it offers works.
        let p = plan(&m, &gpus, m.rocm_release("6.1"), Some(0)).unwrap();
        assert!(!p.unusable);
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION"), Some("10.3.0"));
        assert_eq!(p.get("HIP_VISIBLE_DEVICES"), Some("0"));
        let p = plan(&m, &gpus, m.rocm_release("6.2"), None).unwrap();
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION_0"), Some("10.3.0"));
    }

    #[test]
    fn rdna1_gets_a_warning_not_an_override() {
        let m = m();
        let p = plan(&m, &[amd("gfx1010", false)], m.rocm_release("6.2"), None).unwrap();
        assert_eq!(p.get("HSA_OVERRIDE_GFX_VERSION"), None);
        assert!(p.unusable);
        assert!(p.warnings[0].contains("crashes"), "{:?}", p.warnings);
    }

    #[test]
    fn device_out_of_range_is_usage() {
        let m = m();
        let e = plan(&m, &[amd("gfx942", false)], None, Some(3)).unwrap_err();
        assert_eq!(e.exit_code(), 2);
    }
}
