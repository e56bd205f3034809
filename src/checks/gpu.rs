//! GPUs: present, gfx target built by the release (or the override that makes it run), CUDA arch, iGPU next to dGPU.

use super::system::versions_text;
use super::{gpu_label, Context, Finding, Status};
use crate::gfx::GfxTarget;
use crate::host::Gpu;
use crate::matrix::{Confidence, GfxRun, SupportStatus};

const AREA: &str = "gpu";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    let mut out = vec![present(cx)];
    let amd = amd_in_order(cx);
    for (i, g) in amd.iter().enumerate() {
        out.push(gfx_supported(cx, g, i));
    }
    for g in cx.facts.nvidia_gpus() {
        out.push(cuda_arch(cx, g));
    }
    out.push(igpu_with_dgpu(cx));
    out
}

/// AMD GPUs in the order the ROCm runtime numbers them (KFD node order).
pub(crate) fn amd_in_order<'a>(cx: &Context<'a>) -> Vec<&'a Gpu> {
    cx.facts.amd_gpus().collect()
}

/// The override the environment applies to AMD device `index`: the per-device variable wins.
pub(crate) fn override_for(cx: &Context, index: usize) -> Option<(String, String)> {
    let per = format!("HSA_OVERRIDE_GFX_VERSION_{index}");
    cx.facts
        .env
        .get(&per)
        .map(|v| (per.clone(), v.clone()))
        .or_else(|| {
            cx.facts
                .env
                .get("HSA_OVERRIDE_GFX_VERSION")
                .map(|v| ("HSA_OVERRIDE_GFX_VERSION".to_string(), v.clone()))
        })
}

fn present(cx: &Context) -> Finding {
    const ID: &str = "gpu.present";
    let gpus = &cx.facts.gpus;
    if !gpus.is_empty() {
        let names: Vec<String> = gpus
            .iter()
            .map(|g| {
                g.name
                    .clone()
                    .unwrap_or_else(|| format!("unknown GPU {}", g.device_id))
            })
            .collect();
        let mut counted: Vec<(String, usize)> = Vec::new();
        for n in names {
            match counted.iter_mut().find(|(m, _)| *m == n) {
                Some((_, c)) => *c += 1,
                None => counted.push((n, 1)),
            }
        }
        let text = counted
            .iter()
            .map(|(n, c)| {
                if *c > 1 {
                    format!("{c}× {n}")
                } else {
                    n.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "{} GPU{}: {text}",
                gpus.len(),
                if gpus.len() == 1 { "" } else { "s" }
            ),
        );
    }
    if cx.facts.wsl {
        return Finding::new(ID, AREA, Status::Warn, "WSL2: GPUs are not on a PCI bus Linux can see; only /dev/dxg is")
            .detail(if cx.facts.device_nodes.dxg { "/dev/dxg is present, so the Windows driver exposes a GPU through DirectX" } else { "/dev/dxg is missing too: no GPU is exposed to this WSL2 instance" })
            .fix("check the GPU from Windows (AMD Software / nvidia-smi.exe) and use the WSL-specific ROCm or CUDA packages");
    }
    if let Some(why) = cx.facts.why_unavailable("pci") {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("the PCI bus could not be read: {why}"),
        );
    }
    Finding::new(ID, AREA, Status::Fail, "no AMD or NVIDIA GPU on the PCI bus")
        .detail("no display controller with vendor 0x1002 (AMD) or 0x10de (NVIDIA) in /sys/bus/pci/devices")
        .fix("check `lspci -nn | grep -Ei 'vga|display|3d'`; in a VM, pass the GPU through; in a container, run rocmenv on the host")
}

fn confidence_text(c: Confidence) -> &'static str {
    match c {
        Confidence::High => "high confidence",
        Confidence::Medium => "medium confidence",
        Confidence::Low => "low confidence",
    }
}

fn gfx_supported(cx: &Context, g: &Gpu, index: usize) -> Finding {
    const ID: &str = "gpu.gfx-supported";
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let Some(t) = &cx.target.rocm else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("{label}: no ROCm target (the target is CUDA)"),
        )
        .subject(sub);
    };
    let r = t.release;
    if let Some((var, val)) = hidden_by(cx, index) {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            format!("{label}: hidden by {var}={val}, so its target does not matter"),
        )
        .subject(sub);
    }
    let Some(gfx) = g.gfx else {
        return Finding::new(ID, AREA, Status::Skip, format!("{label}: gfx target unknown (no gfx_target_version in KFD, and the PCI id {} is not in gpus.yaml)", g.device_id))
            .subject(sub)
            .fix("run `rocminfo | grep gfx` to see the target, and add the card to matrices/gpus.yaml");
    };
    let src = if g.gfx_source.as_deref() == Some("pci-id") {
        " (from its PCI id; KFD is not available)"
    } else {
        ""
    };
    let natively: Vec<String> = cx
        .matrices
        .rocm
        .releases
        .iter()
        .filter(|x| {
            x.gfx_status(gfx)
                .is_some_and(|s| s.status == SupportStatus::Supported)
        })
        .map(|x| x.version.to_string())
        .collect();
    let how = cx.matrices.gfx_on_release(r, gfx);
    if let GfxRun::Native(s) = how {
        let note = s
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        match s.status {
            SupportStatus::Supported => {
                return Finding::new(
                    ID,
                    AREA,
                    Status::Pass,
                    format!(
                        "{label}: {gfx}{src} is supported by ROCm {}{note}",
                        r.version
                    ),
                )
                .subject(sub)
            }
            SupportStatus::Deprecated => {
                return Finding::new(
                    ID,
                    AREA,
                    Status::Warn,
                    format!(
                        "{label}: {gfx}{src} is deprecated in ROCm {}{note}",
                        r.version
                    ),
                )
                .subject(sub)
                .detail("deprecated targets still get kernels but are removed in a later release")
                .fix(format!(
                    "plan for a newer GPU; releases that fully support {gfx}: {}",
                    versions_text(&natively)
                ))
            }
            SupportStatus::Experimental => {
                return Finding::new(
                    ID,
                    AREA,
                    Status::Warn,
                    format!(
                        "{label}: {gfx}{src} is experimental in ROCm {}{note}",
                        r.version
                    ),
                )
                .subject(sub)
                .detail("experimental targets build, but AMD does not promise they work")
            }
            SupportStatus::Unsupported => {}
        }
    }
    if let GfxRun::BuiltNotSupported(built) = how {
        let by: Vec<&str> = built.iter().map(|b| b.component.as_str()).collect();
        return Finding::new(
            ID,
            AREA,
            Status::Warn,
            format!(
                "{label}: {gfx}{src} is not on ROCm {}'s supported list, but its libraries are built for it ({})",
                r.version,
                by.join(", ")
            ),
        )
        .subject(sub)
        .detail("the kernels exist, so PyTorch runs without an override, but AMD does not test this target on this release")
        .fix(match natively.last() {
            Some(v) => format!("for a supported combination use ROCm {v} (--target rocm-{v})"),
            None => "expect community support only; report problems with the GPU and release named".into(),
        });
    }
    let later = if natively.is_empty() {
        String::new()
    } else {
        format!(
            "; releases that support {gfx} natively: {}",
            versions_text(&natively)
        )
    };
    let set = override_for(cx, index);
    let a = match how {
        GfxRun::Override(a) | GfxRun::OverrideCrashes(a) | GfxRun::OverrideNotBuilt(a) => a,
        GfxRun::Native(_) | GfxRun::BuiltNotSupported(_) | GfxRun::NoOverride => {
            return Finding::new(
                ID,
                AREA,
                Status::Fail,
                format!(
                    "{label}: {gfx}{src} is not built by ROCm {} and no override is known",
                    r.version
                ),
            )
            .subject(sub)
            .detail(format!(
                "PyTorch would fail with `HIP error: invalid device function`{later}"
            ))
            .fix(match natively.last() {
                Some(v) => {
                    format!("use ROCm {v} (--target rocm-{v}), or a GPU the release supports")
                }
                None => {
                    "use a GPU that ROCm supports, or a community build of ROCm for this target"
                        .into()
                }
            });
        }
    };
    let value = a.target.override_value();
    let conf = confidence_text(a.confidence);
    let note = a
        .note
        .as_deref()
        .map(|n| format!(" Reference: {n}"))
        .unwrap_or_default();
    if matches!(how, GfxRun::OverrideCrashes(_)) {
        return Finding::new(ID, AREA, Status::Fail, format!("{label}: {gfx} is not built by ROCm {}, and overriding it to {} crashes (different ISA)", r.version, a.target))
            .subject(sub)
            .detail(format!("do not set HSA_OVERRIDE_GFX_VERSION={value} for this GPU ({conf}).{note}{later}"))
            .fix("use a GPU that ROCm supports, or a community ROCm build that includes this target");
    }
    if matches!(how, GfxRun::OverrideNotBuilt(_)) {
        let mut f = Finding::new(
            ID,
            AREA,
            Status::Fail,
            format!(
                "{label}: {gfx} is not built by ROCm {}, nor is its override target {}",
                r.version, a.target
            ),
        )
        .subject(sub);
        if !later.is_empty() {
            f = f.detail(later.trim_start_matches("; ").to_string());
        }
        if let Some(keep) = discrete_indices(cx, g) {
            f = f.fix(format!("this integrated GPU cannot run ROCm {}: hide it with export HIP_VISIBLE_DEVICES={keep}", r.version));
        }
        return f;
    }
    let per_device_ok = r.version >= crate::version::Version::new(6, 2, 0);
    match set {
        Some((var, v)) if GfxTarget::from_override(&v).ok() == Some(a.target) => Finding::new(ID, AREA, Status::Warn, format!("{label}: {gfx} runs as {} through {var}={v} (not officially supported)", a.target))
            .subject(sub)
            .detail(format!("the override is the known one for {gfx} ({conf}).{note}{later}")),
        Some((var, v)) => Finding::new(ID, AREA, Status::Fail, format!("{label}: {gfx} is not built by ROCm {}, and {var}={v} is not its override ({value})", r.version))
            .subject(sub)
            .detail(format!("{gfx} runs kernels built for {} ({conf}).{note}", a.target))
            .fix(format!("export {var}={value}")),
        None => {
            let var = if per_device_ok && amd_count(cx) > 1 { format!("HSA_OVERRIDE_GFX_VERSION_{index}") } else { "HSA_OVERRIDE_GFX_VERSION".to_string() };
            Finding::new(ID, AREA, Status::Fail, format!("{label}: {gfx} is not built by ROCm {}; it needs {var}={value}", r.version))
                .subject(sub)
                .detail(format!("without it PyTorch fails with `HIP error: invalid device function`; with it the GPU runs {} kernels ({conf}).{note}{later}", a.target))
                .fix(format!("export {var}={value}"))
        }
    }
}

/// The visible-devices variable that hides AMD device `index`, if one does.
fn hidden_by(cx: &Context, index: usize) -> Option<(&'static str, String)> {
    ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"]
        .into_iter()
        .find_map(|var| {
            let val = cx.facts.env.get(var)?;
            let listed: Vec<&str> = val.split(',').map(str::trim).collect();
            // UUID lists cannot be matched to indices here.
            let indices_only = listed.iter().all(|p| p.parse::<usize>().is_ok());
            (indices_only && !listed.contains(&index.to_string().as_str()))
                .then(|| (var, val.clone()))
        })
}

/// For an integrated GPU next to discrete ones: the discrete GPUs' indices, comma-separated.
fn discrete_indices(cx: &Context, g: &Gpu) -> Option<String> {
    if g.integrated != Some(true) {
        return None;
    }
    let keep: Vec<String> = amd_in_order(cx)
        .iter()
        .enumerate()
        .filter(|(_, x)| x.integrated != Some(true))
        .map(|(i, _)| i.to_string())
        .collect();
    (!keep.is_empty()).then(|| keep.join(","))
}

fn amd_count(cx: &Context) -> usize {
    cx.facts.amd_gpus().count()
}

fn cuda_arch(cx: &Context, g: &Gpu) -> Finding {
    const ID: &str = "gpu.cuda-arch";
    let label = gpu_label(g);
    let sub = g.pci_address.clone();
    let Some(t) = &cx.target.cuda else {
        return Finding::new(ID, AREA, Status::Skip, format!("{label}: no CUDA target"))
            .subject(sub);
    };
    let Some(cc) = &g.compute_capability else {
        return Finding::new(ID, AREA, Status::Skip, format!("{label}: compute capability unknown (PCI id {} is not in gpus.yaml)", g.device_id))
            .subject(sub)
            .fix("run `nvidia-smi --query-gpu=compute_cap --format=csv` and add the card to matrices/gpus.yaml");
    };
    let c = t.cuda;
    if c.compute_capabilities.contains(cc) {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "{label}: compute capability {cc} is built by CUDA {}",
                c.version
            ),
        )
        .subject(sub);
    }
    let builds: Vec<String> = cx
        .matrices
        .cuda
        .releases
        .iter()
        .filter(|r| r.compute_capabilities.contains(cc))
        .map(|r| r.version.to_string())
        .collect();
    Finding::new(
        ID,
        AREA,
        Status::Fail,
        format!(
            "{label}: CUDA {} does not build for compute capability {cc}",
            c.version
        ),
    )
    .subject(sub)
    .detail(format!("CUDA releases that do: {}", versions_text(&builds)))
    .fix(match builds.last() {
        Some(v) => format!(
            "use CUDA {v} or older for this GPU (--target cuda-{})",
            v.rsplit_once('.').map(|x| x.0).unwrap_or(v)
        ),
        None => "use a GPU that current CUDA supports".into(),
    })
}

fn igpu_with_dgpu(cx: &Context) -> Finding {
    const ID: &str = "gpu.igpu-with-dgpu";
    let amd = amd_in_order(cx);
    let igpus: Vec<(usize, &&Gpu)> = amd
        .iter()
        .enumerate()
        .filter(|(_, g)| g.integrated == Some(true))
        .collect();
    let dgpus: Vec<(usize, &&Gpu)> = amd
        .iter()
        .enumerate()
        .filter(|(_, g)| g.integrated != Some(true))
        .collect();
    if amd.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "iGPU next to a discrete GPU: no AMD GPU",
        );
    }
    if igpus.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            "no integrated AMD GPU competes with the discrete ones",
        );
    }
    if dgpus.is_empty() && cx.facts.nvidia_gpus().next().is_none() {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            "the only AMD GPU is integrated; nothing to hide",
        );
    }
    if dgpus.is_empty() {
        return Finding::new(ID, AREA, Status::Warn, "an AMD iGPU sits next to NVIDIA GPUs")
            .detail("tools that pick the stack by `lspci` vendor may install ROCm instead of CUDA (stable-diffusion-webui#15197)")
            .fix("choose the CUDA stack explicitly (rocmenv dockerfile --stack ngc)");
    }
    let keep: Vec<String> = dgpus.iter().map(|(i, _)| i.to_string()).collect();
    let hidden = ["HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"]
        .iter()
        .find_map(|v| cx.facts.env.get(*v).map(|val| (v, val)));
    let ig_names: Vec<String> = igpus
        .iter()
        .map(|(i, g)| {
            format!(
                "device {i} ({})",
                g.gfx.map_or("?".into(), |t| t.to_string())
            )
        })
        .collect();
    if let Some((var, val)) = hidden {
        let listed: Vec<&str> = val.split(',').map(str::trim).collect();
        if igpus
            .iter()
            .all(|(i, _)| !listed.contains(&i.to_string().as_str()))
        {
            return Finding::new(
                ID,
                AREA,
                Status::Pass,
                format!("the iGPU {} is hidden by {var}={val}", ig_names.join(", ")),
            );
        }
    }
    Finding::new(ID, AREA, Status::Warn, format!("the integrated GPU {} is visible next to discrete GPU{} {}", ig_names.join(", "), if keep.len() > 1 { "s" } else { "" }, keep.join(",")))
        .detail("ROCm enumerates the iGPU too: frameworks may pick it as device 0, and a mixed set needs per-device overrides (ollama#8473)")
        .fix(format!("export HIP_VISIBLE_DEVICES={}", keep.join(",")))
}

/// `gpu.count`: the host shows at least `expected` GPUs (`--expect-gpus`).
pub(super) fn expected_count(facts: &crate::host::HostFacts, expected: usize) -> Finding {
    const ID: &str = "gpu.count";
    let found = facts.gpus.len();
    let listed: Vec<String> = facts.gpus.iter().map(gpu_label).collect();
    if found >= expected {
        return Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!("{found} GPU(s) found, {expected} expected (--expect-gpus)"),
        );
    }
    Finding::new(
        ID,
        AREA,
        Status::Fail,
        format!("{found} of {expected} expected GPU(s) found (--expect-gpus {expected})"),
    )
    .detail(if listed.is_empty() {
        "no GPU on the PCI bus: it fell off the bus, is not seated, or the node has none".to_string()
    } else {
        format!("found: {}", listed.join("; "))
    })
    .fix("look for the missing GPU: `lspci -d 1002:` (AMD) or `lspci -d 10de:` (NVIDIA), and `sudo dmesg | grep -i -e amdgpu -e nvrm -e 'fallen off'`; reseat or replace it, or drain the node")
}
