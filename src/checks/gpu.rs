//! GPUs: present, gfx target built by the release (or the override that makes it run), CUDA arch, iGPU next to dGPU.

use super::system::versions_text;
use super::{gpu_label, Context, Finding, Status};
use crate::gfx::GfxTarget;
use crate::host::Gpu;
use crate::matrix::{
    BuiltTargets, Confidence, GfxRun, GfxSupport, OverrideAdvice, RocmRelease, SupportStatus,
};

const AREA: &str = "gpu";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    let mut out = vec![present(cx)];
    if let Some(why) = &cx.plan.mismatch {
        // The wrong vendor's target would otherwise pass on per-GPU skips alone.
        out.push(
            Finding::new("gpu.vendor", AREA, Status::Fail, why.clone()).fix(
                "check the host against its GPUs' stack (rocmenv doctor without --target picks it)",
            ),
        );
    }
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
        let text = crate::text::counted(gpus.iter().map(|g| {
            g.name
                .clone()
                .unwrap_or_else(|| format!("unknown GPU {}", g.device_id))
        }));
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

/// The id of the per-GPU gfx target check.
const GFX_ID: &str = "gpu.gfx-supported";

/// Whether ROCm runs AMD GPU `g` (device `index`): natively, through an override, or not at all.
fn gfx_supported(cx: &Context, g: &Gpu, index: usize) -> Finding {
    let label = gpu_label(g);
    let Some(t) = &cx.target.rocm else {
        return gfx_skipped(g, format!("{label}: no ROCm target (the target is CUDA)"));
    };
    if let Some((var, val)) = hidden_by(cx, index) {
        return gfx_skipped(
            g,
            format!("{label}: hidden by {var}={val}, so its target does not matter"),
        );
    }
    let Some(gfx) = g.gfx else {
        return gfx_skipped(g, format!("{label}: gfx target unknown (no gfx_target_version in KFD, and the PCI id {} is not in gpus.yaml)", g.device_id))
            .fix("run `rocminfo | grep gfx` to see the target, and add the card to matrices/gpus.yaml");
    };
    let f = gfx_verdict(cx, g, index, label, t.release, gfx);
    match cx.plan.hidden(&g.pci_address) {
        // A GPU the plan sets aside (an iGPU beside a discrete one) does not stop the others: a warning.
        Some(h) if f.status == Status::Fail && h != crate::envplan::Hidden::CannotRun => {
            let summary = format!("{} (rocmenv env hides it: {})", f.summary, h.why());
            let fix = f
                .fix
                .clone()
                .map(|x| match x.contains("HIP_VISIBLE_DEVICES") {
                    true => x,
                    false => format!("{x}, to use it; else hide it as `rocmenv env` does"),
                });
            Finding {
                status: Status::Warn,
                summary,
                fix,
                ..f
            }
        }
        _ => f,
    }
}

/// How AMD GPU `g` (device `index`, target `gfx`) runs on `release`, as a finding.
fn gfx_verdict(
    cx: &Context,
    g: &Gpu,
    index: usize,
    label: String,
    release: &RocmRelease,
    gfx: GfxTarget,
) -> Finding {
    let case = GfxCase::new(cx, g, label, release, gfx);
    let how = cx.matrices.gfx_on_release(release, gfx);
    match how {
        GfxRun::Native(s) => {
            if let Some(f) = native_verdict(&case, s) {
                return f;
            }
        }
        GfxRun::BuiltNotSupported(built) => return built_not_supported_verdict(&case, built),
        _ => {}
    }
    match how {
        GfxRun::OverrideCrashes(a) => override_crashes_verdict(&case, a),
        GfxRun::OverrideNotBuilt(a) => override_not_built_verdict(cx, g, &case, a),
        GfxRun::Override(a) => override_env_verdict(cx, index, &case, a, None),
        GfxRun::OverrideUnknown { advice, nearest } => {
            let v = &release.version;
            let near = nearest
                .map(|n| format!("; nearest release with data: {n}"))
                .unwrap_or_default();
            let why = format!("unconfirmed: rocm.yaml has no built data for ROCm {v}, so whether it ships {} kernels is unknown; the override is the one used in the field{near}", advice.target);
            override_env_verdict(cx, index, &case, advice, Some(why))
        }
        GfxRun::Native(_) | GfxRun::BuiltNotSupported(_) | GfxRun::NoOverride => {
            no_override_verdict(&case)
        }
    }
}

/// A skipped gfx-supported finding about `g`, for when its target cannot be judged.
fn gfx_skipped(g: &Gpu, summary: String) -> Finding {
    Finding::new(GFX_ID, AREA, Status::Skip, summary).subject(g.pci_address.clone())
}

/// One GPU's gfx-supported check: what every verdict names, whatever it decides.
struct GfxCase<'a> {
    /// The GPU as the report names it.
    label: String,
    /// Its PCI address, the finding's subject.
    sub: String,
    /// Its gfx target.
    gfx: GfxTarget,
    /// How the target was found, when not from KFD.
    src: &'static str,
    /// The ROCm release the target asks for.
    release: &'a RocmRelease,
    /// Every release that fully supports the target.
    natively: Vec<String>,
}

impl<'a> GfxCase<'a> {
    /// Gathers what the verdicts for `g` on `release` name.
    fn new(cx: &Context, g: &Gpu, label: String, release: &'a RocmRelease, gfx: GfxTarget) -> Self {
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
        GfxCase {
            label,
            sub: g.pci_address.clone(),
            gfx,
            src,
            release,
            natively,
        }
    }

    /// A gfx-supported finding about this GPU.
    fn finding(&self, status: Status, summary: String) -> Finding {
        Finding::new(GFX_ID, AREA, status, summary).subject(self.sub.clone())
    }

    /// The releases that support the target natively, as a clause to append ("" when none).
    fn later(&self) -> String {
        if self.natively.is_empty() {
            String::new()
        } else {
            format!(
                "; releases that support {} natively: {}",
                self.gfx,
                versions_text(&self.natively)
            )
        }
    }
}

/// The verdict when the release builds the target itself; `None` when it lists it as unsupported.
fn native_verdict(case: &GfxCase, s: &GfxSupport) -> Option<Finding> {
    let GfxCase {
        label, gfx, src, ..
    } = case;
    let version = &case.release.version;
    let note = s
        .note
        .as_deref()
        .map(|n| format!(" ({n})"))
        .unwrap_or_default();
    match s.status {
        SupportStatus::Supported => Some(case.finding(
            Status::Pass,
            format!("{label}: {gfx}{src} is supported by ROCm {version}{note}"),
        )),
        SupportStatus::Deprecated => Some(
            case.finding(
                Status::Warn,
                format!("{label}: {gfx}{src} is deprecated in ROCm {version}{note}"),
            )
            .detail("deprecated targets still get kernels but are removed in a later release")
            .fix(format!(
                "plan for a newer GPU; releases that fully support {gfx}: {}",
                versions_text(&case.natively)
            )),
        ),
        SupportStatus::Experimental => Some(
            case.finding(
                Status::Warn,
                format!("{label}: {gfx}{src} is experimental in ROCm {version}{note}"),
            )
            .detail("experimental targets build, but AMD does not promise they work"),
        ),
        SupportStatus::Unsupported => None,
    }
}

/// The verdict when the release's libraries ship kernels for a target it does not list as supported.
fn built_not_supported_verdict(case: &GfxCase, built: &[BuiltTargets]) -> Finding {
    let GfxCase {
        label, gfx, src, ..
    } = case;
    let by: Vec<&str> = built.iter().map(|b| b.component.as_str()).collect();
    case.finding(
        Status::Warn,
        format!(
            "{label}: {gfx}{src} is not on ROCm {}'s supported list, but its libraries are built for it ({})",
            case.release.version,
            by.join(", ")
        ),
    )
    .detail("the kernels exist, so PyTorch runs without an override, but AMD does not test this target on this release")
    .fix(match case.natively.last() {
        Some(v) => format!("for a supported combination use ROCm {v} (--target rocm-{v})"),
        None => "expect community support only; report problems with the GPU and release named".into(),
    })
}

/// The verdict when the release lacks the target and no override is known.
fn no_override_verdict(case: &GfxCase) -> Finding {
    let GfxCase {
        label, gfx, src, ..
    } = case;
    case.finding(
        Status::Fail,
        format!(
            "{label}: {gfx}{src} is not built by ROCm {} and no override is known",
            case.release.version
        ),
    )
    .detail(format!(
        "PyTorch would fail with `HIP error: invalid device function`{}",
        case.later()
    ))
    .fix(match case.natively.last() {
        Some(v) => format!("use ROCm {v} (--target rocm-{v}), or a GPU the release supports"),
        None => "use a GPU that ROCm supports, or a community build of ROCm for this target".into(),
    })
}

/// The override's value, its confidence in words, and its reference note as a sentence to append.
fn override_terms(a: &OverrideAdvice) -> (String, &'static str, String) {
    let note = a
        .note
        .as_deref()
        .map(|n| format!(" Reference: {n}"))
        .unwrap_or_default();
    (
        a.target.override_value(),
        confidence_text(a.confidence),
        note,
    )
}

/// The verdict when the target's known override crashes (a different ISA).
fn override_crashes_verdict(case: &GfxCase, a: &OverrideAdvice) -> Finding {
    let GfxCase { label, gfx, .. } = case;
    let (value, conf, note) = override_terms(a);
    let later = case.later();
    case.finding(Status::Fail, format!("{label}: {gfx} is not built by ROCm {}, and overriding it to {} crashes (different ISA)", case.release.version, a.target))
        .detail(format!("do not set HSA_OVERRIDE_GFX_VERSION={value} for this GPU ({conf}).{note}{later}"))
        .fix("use a GPU that ROCm supports, or a community ROCm build that includes this target")
}

/// The verdict when the release builds neither the target nor its override target.
fn override_not_built_verdict(
    cx: &Context,
    g: &Gpu,
    case: &GfxCase,
    a: &OverrideAdvice,
) -> Finding {
    let GfxCase { label, gfx, .. } = case;
    let version = &case.release.version;
    let mut f = case.finding(
        Status::Fail,
        format!(
            "{label}: {gfx} is not built by ROCm {version}, nor is its override target {}",
            a.target
        ),
    );
    let later = case.later();
    if !later.is_empty() {
        f = f.detail(later.trim_start_matches("; ").to_string());
    }
    if let Some(keep) = discrete_indices(cx, g) {
        f = f.fix(format!("this integrated GPU cannot run ROCm {version}: hide it with export HIP_VISIBLE_DEVICES={keep}"));
    }
    f
}

/// The verdict when the target runs through a known override: set right, set wrong, or not set.
/// `unknown`: why the override rests on missing data (the release's built lists are unknown), when it does.
fn override_env_verdict(
    cx: &Context,
    index: usize,
    case: &GfxCase,
    a: &OverrideAdvice,
    unknown: Option<String>,
) -> Finding {
    let GfxCase { label, gfx, .. } = case;
    let r = case.release;
    let (value, conf, mut note) = override_terms(a);
    // Not on the list is all the matrices know when they have no built data: never say "not built".
    let lacks = if unknown.is_some() {
        "is not on the supported list of"
    } else {
        "is not built by"
    };
    if let Some(u) = &unknown {
        note.push_str(&format!(" ({u})"));
    }
    let later = case.later();
    let per_device_ok = r.version >= crate::version::Version::new(6, 2, 0);
    match override_for(cx, index) {
        Some((var, v)) if GfxTarget::from_override(&v).ok() == Some(a.target) => case
            .finding(
                Status::Warn,
                format!(
                    "{label}: {gfx} runs as {} through {var}={v} (not officially supported)",
                    a.target
                ),
            )
            .detail(format!(
                "the override is the known one for {gfx} ({conf}).{note}{later}"
            )),
        Some((var, v)) => case
            .finding(
                Status::Fail,
                format!(
                    "{label}: {gfx} {lacks} ROCm {}, and {var}={v} is not its override ({value})",
                    r.version
                ),
            )
            .detail(format!(
                "{gfx} runs kernels built for {} ({conf}).{note}",
                a.target
            ))
            .fix(format!("export {var}={value}")),
        None => {
            let var = planned_override_var(cx, index, per_device_ok);
            case.finding(Status::Fail, format!("{label}: {gfx} {lacks} ROCm {}; it needs {var}={value}", r.version))
                .detail(format!("without it PyTorch fails with `HIP error: invalid device function`; with it the GPU runs {} kernels ({conf}).{note}{later}", a.target))
                .fix(format!("export {var}={value}"))
        }
    }
}

/// The override variable the host plan sets for AMD device `index` (the global one when it serves every visible
/// device, as `rocmenv env` prints it); for a device the plan leaves out, the per-device one where the release reads it.
fn planned_override_var(cx: &Context, index: usize, per_device_ok: bool) -> String {
    let per = format!("HSA_OVERRIDE_GFX_VERSION_{index}");
    let env = &cx.plan.env;
    if env.get(&per).is_some() {
        per
    } else if env.get("HSA_OVERRIDE_GFX_VERSION").is_some() || !per_device_ok || amd_count(cx) < 2 {
        "HSA_OVERRIDE_GFX_VERSION".to_string()
    } else {
        per
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
        // Under WSL nvidia-smi names the GPU but gives no PCI device id to look it up by.
        let why = match crate::host::is_dxg(g) {
            true => "WSL shows no PCI device id, and nvidia-smi's table gives none".to_string(),
            false => format!("PCI id {} is not in gpus.yaml", g.device_id),
        };
        return Finding::new(ID, AREA, Status::Skip, format!("{label}: compute capability unknown ({why})"))
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
