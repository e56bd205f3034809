//! WSL 2: the GPUs WSL exposes (through `/dev/dxg`) judged against AMD's ROCm-on-WSL list and NVIDIA's Windows
//! driver, and the checks that do not apply there (no amdgpu, no `/dev/kfd`, no PCI bus, a kernel Windows boots)
//! turned into skips that say so.

use super::{gpu_label, Context, Finding, Status};
use crate::host::{is_dxg, Gpu};
use crate::matrix::WslRelease;

const AREA: &str = "gpu";

/// The id of the ROCm-on-WSL check.
pub const ROCM_ID: &str = "wsl.rocm-support";
/// The id of the NVIDIA-on-WSL check.
pub const NVIDIA_ID: &str = "wsl.nvidia-driver";

/// Checks whose subject WSL does not have, and why: each becomes a skip under WSL, never a pass.
const NOT_UNDER_WSL: &[(&str, &str)] = &[
    ("driver.amdgpu-loaded", "amdgpu: not under WSL (the Windows driver drives the GPU; WSL has no amdgpu module)"),
    ("driver.amdgpu-version", "amdgpu version: not under WSL (the Windows driver drives the GPU; WSL has no amdgpu module)"),
    ("devices.kfd", "/dev/kfd: not under WSL (ROCm on WSL reaches the GPU through /dev/dxg)"),
    ("devices.render", "render nodes and their group: not under WSL (ROCm on WSL reaches the GPU through /dev/dxg)"),
    ("devices.nvidia", "/dev/nvidia* nodes: not under WSL (CUDA on WSL reaches the GPU through /dev/dxg)"),
    ("firmware.known-bad", "GPU firmware: not under WSL (amdgpu loads none; the Windows driver loads its own)"),
    ("pcie.link", "PCIe link: not under WSL (Linux sees no PCI bus under the GPU)"),
    ("pcie.aer", "PCIe AER counters: not under WSL (Linux sees no PCI bus under the GPU)"),
    ("topology.numa", "NUMA placement: not under WSL (Linux sees no PCI bus under the GPU)"),
    ("health.amd-ecc", "RAS error counts: not under WSL (they come from amdgpu, which WSL does not load)"),
    ("health.amd-bad-pages", "retired VRAM pages: not under WSL (they come from amdgpu, which WSL does not load)"),
    ("health.amd-xgmi", "XGMI link counts: not under WSL (they come from amdgpu, which WSL does not load)"),
    ("boot.iommu", "IOMMU boot parameters: not under WSL (Windows boots WSL's kernel with its own command line)"),
    ("boot.numa-balancing", "NUMA balancing: not under WSL (Windows boots WSL's kernel with its own settings)"),
    ("boot.amdgpu-params", "amdgpu parameters: not under WSL (WSL has no amdgpu module)"),
    ("boot.next-kernel", "the next kernel: not under WSL (WSL's kernel comes with WSL, not from /boot)"),
    ("boot.next-kernel-module", "the next kernel's GPU module: not under WSL (WSL's kernel needs none)"),
    ("boot.secure-boot", "Secure Boot: not under WSL (no out-of-tree module is loaded into WSL's kernel)"),
];

/// Under WSL, turns the checks WSL does not have into skips that say why.
pub(super) fn not_under_wsl(cx: &Context, findings: &mut [Finding]) {
    if !cx.facts.wsl {
        return;
    }
    for f in findings.iter_mut() {
        if let Some((_, why)) = NOT_UNDER_WSL.iter().find(|(id, _)| *id == f.id) {
            f.status = Status::Skip;
            f.summary = (*why).to_string();
            f.detail = None;
            f.fix = None;
            f.conditional = false;
        }
        // Overrides do not reach the Windows driver, so the per-GPU target check defers to AMD's WSL list.
        if f.id == "gpu.gfx-supported" && cx.facts.amd_gpus().any(is_dxg) {
            f.status = Status::Skip;
            f.summary = format!(
                "gfx target against the Linux release: not under WSL (judged by {ROCM_ID} against AMD's ROCm-on-WSL list)"
            );
            f.detail = None;
            f.fix = None;
            f.conditional = false;
        }
    }
}

/// The WSL checks: present only on WSL.
pub(super) fn check(cx: &Context) -> Vec<Finding> {
    if !cx.facts.wsl {
        return vec![];
    }
    let mut out = rocm_support(cx);
    if let Some(f) = nvidia_driver(cx) {
        out.push(f);
    }
    out
}

/// The ROCm-on-WSL release that the installed ROCm is, when AMD lists it.
fn installed_wsl_release<'m>(cx: &Context<'m>) -> Option<&'m WslRelease> {
    let installed = cx.facts.rocm.as_ref()?;
    cx.matrices
        .rocm
        .wsl
        .iter()
        .find(|w| w.release.to_string() == installed.version.as_str())
}

/// The WSL releases the matrices know, a series' run written once: `6.1.3, 7.2.0-7.2.4`.
fn known_wsl_releases(cx: &Context) -> String {
    let mut runs: Vec<(String, String)> = Vec::new();
    for w in &cx.matrices.rocm.wsl {
        let v = w.release.to_string();
        match runs.last_mut() {
            Some((first, last))
                if first.rsplit_once('.').map(|p| p.0) == v.rsplit_once('.').map(|p| p.0) =>
            {
                *last = v
            }
            _ => runs.push((v.clone(), v)),
        }
    }
    let v: Vec<String> = runs
        .into_iter()
        .map(|(a, b)| if a == b { a } else { format!("{a}-{b}") })
        .collect();
    v.join(", ")
}

/// How AMD's WSL releases are installed, for the fix texts: `rocmenv fix` prints the steps for the host.
const WSL_INSTALL: &str = "`rocmenv fix` prints AMD's WSL steps: 6.x with `amdgpu-install --usecase=wsl,rocm --no-dkms`, 7.2.x as on Linux without amdgpu-dkms, plus librocdxg and HSA_ENABLE_DXG_DETECTION=1";

fn rocm_support(cx: &Context) -> Vec<Finding> {
    let amd: Vec<&Gpu> = cx.facts.amd_gpus().filter(|g| is_dxg(g)).collect();
    let wants_rocm =
        cx.facts.rocm.is_some() || !amd.is_empty() || cx.facts.evidence.rocminfo.is_some();
    if !wants_rocm {
        return vec![];
    }
    let Some(installed) = cx.facts.rocm.as_ref() else {
        return vec![Finding::new(
            ROCM_ID,
            AREA,
            Status::Skip,
            "ROCm on WSL: no ROCm is installed, so none to judge",
        )
        .fix(format!(
            "install a ROCm-on-WSL release (known: {}); {WSL_INSTALL}",
            known_wsl_releases(cx)
        ))];
    };
    let Some(w) = installed_wsl_release(cx) else {
        return vec![Finding::new(
            ROCM_ID,
            AREA,
            Status::Warn,
            format!("ROCm {} is not a ROCm-on-WSL release the matrices know (known: {})", installed.version, known_wsl_releases(cx)),
        )
        .detail("under WSL only AMD's WSL packages reach the GPU (through /dev/dxg and the Windows driver); the GPUs and driver each WSL release supports differ")
        .fix(format!("install a ROCm-on-WSL release ({WSL_INSTALL}), or add this one to rocm.yaml's `wsl:` from AMD's WSL compatibility page"))];
    };
    if amd.is_empty() {
        return vec![no_gpu_found(cx, w)];
    }
    amd.iter().map(|g| judge_gpu(cx, w, g)).collect()
}

/// What AMD names for a WSL release: driver, distributions, GPUs, PyTorch.
fn wsl_terms(w: &WslRelease) -> String {
    let distros: Vec<String> = w
        .distros
        .iter()
        .map(|d| format!("{} {}", d.id, d.version))
        .collect();
    let driver = match (&w.windows_driver, &w.rocdxg) {
        (Some(v), _) => format!("Windows driver AMD Software: Adrenalin Edition {v} (the WSL edition)"),
        (None, Some(r)) => format!("a current AMD Windows driver (AMD names no version) with librocdxg {r} (HSA_ENABLE_DXG_DETECTION=1)"),
        (None, None) => "no Windows driver named".to_string(),
    };
    format!(
        "AMD's ROCm {} on WSL: {driver}; {}; GPUs: {}{}",
        w.release,
        distros.join(", "),
        w.gpus_text(),
        match w.pytorch.first() {
            Some(p) => format!("; PyTorch {p}"),
            None => String::new(),
        }
    )
}

fn judge_gpu(cx: &Context, w: &WslRelease, g: &Gpu) -> Finding {
    let label = gpu_label(g);
    let name = g.name.clone().unwrap_or_default();
    let processor = listed_processor(cx, w, g);
    let listed = w.lists_gpu(&name) || processor.is_some();
    let distro_ok = cx.facts.os.as_ref().is_some_and(|o| {
        w.distros.iter().any(|d| {
            o.id.as_deref() == Some(d.id.as_str())
                && o.version_id.as_deref() == Some(d.version.as_str())
        })
    });
    let on_list = match &processor {
        Some(p) => format!(
            "{label}, the integrated GPU of the {p}, is on AMD's ROCm {} on WSL list",
            w.release
        ),
        None => format!("{label} is on AMD's ROCm {} on WSL list", w.release),
    };
    let f = if listed {
        Finding::new(ROCM_ID, AREA, Status::Pass, on_list)
            .detail(format!("{}. The Windows driver's version cannot be read from inside WSL: check it in AMD Software", wsl_terms(w)))
    } else {
        let why = match g.gfx {
            Some(t) if !w.gfx.contains(&t) => format!(
                "its target {t} is not one ROCm {} supports on WSL ({})",
                w.release,
                join(&w.gfx)
            ),
            Some(t) => format!("AMD lists only some {t} models for WSL"),
            None => "its gfx target is unknown".to_string(),
        };
        off_the_list(cx, w, g, &label, &why)
    };
    let f = f.subject(g.pci_address.clone());
    match (distro_ok, f.status) {
        (false, Status::Pass) => Finding {
            status: Status::Warn,
            summary: format!(
                "{}; but this WSL distribution is not one AMD lists for it",
                f.summary
            ),
            ..f
        },
        _ => f,
    }
}

/// AMD lists APUs by processor (`Ryzen AI Max+ 395`), while rocminfo names their integrated GPU (`AMD Radeon(TM)
/// 8060S Graphics`): an integrated GPU is listed when the host's CPU is one of the listed processors (WSL's
/// `/proc/cpuinfo` shows the Windows host's, `AMD RYZEN AI MAX+ 395 w/ Radeon 8060S`).
fn listed_processor(cx: &Context, w: &WslRelease, g: &Gpu) -> Option<String> {
    if g.integrated != Some(true) {
        return None;
    }
    let cpu = cx.facts.cpu.as_ref()?.model.as_deref()?;
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let cpu = norm(cpu);
    w.gpus
        .iter()
        .filter(|e| e.starts_with("Ryzen"))
        .find(|e| {
            let e = norm(e);
            cpu.match_indices(&e).any(|(at, _)| {
                let before = cpu[..at].chars().next_back();
                let after = cpu[at + e.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric())
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '+')
            })
        })
        .cloned()
}

/// A GPU AMD does not list for the WSL release. The runtime refusing it fails; the HIP runtime opening it (as PyTorch
/// does) is a warning: it runs, but nothing AMD tests.
fn off_the_list(cx: &Context, w: &WslRelease, g: &Gpu, label: &str, why: &str) -> Finding {
    let by_hip = g.gfx_source.as_deref() == Some("name")
        || (g.gfx.is_none()
            && cx
                .facts
                .evidence
                .hip
                .as_ref()
                .is_some_and(|h| !h.devices.is_empty()));
    let named = match (by_hip, g.gfx_source.as_deref()) {
        (true, Some("name")) => " Named by the HIP runtime (rocminfo named no GPU); its target comes from gpus.yaml by that name.",
        (true, _) => " Named by the HIP runtime (rocminfo named no GPU).",
        _ => "",
    };
    let detail = format!(
        "{}. HSA_OVERRIDE_GFX_VERSION does not help: WSL uses the Windows driver.{named}",
        wsl_terms(w)
    );
    if by_hip {
        return Finding::new(
            ROCM_ID,
            AREA,
            Status::Warn,
            format!(
                "{label} is not on AMD's ROCm {} on WSL list: {why}; the HIP runtime opens it, but AMD does not support it under WSL",
                w.release
            ),
        )
        .detail(detail)
        .fix("expect what AMD does not test to fail: use a GPU on AMD's list, or run ROCm on native Linux");
    }
    Finding::new(
        ROCM_ID,
        AREA,
        Status::Fail,
        format!(
            "{label} is not on AMD's ROCm {} on WSL list: {why}",
            w.release
        ),
    )
    .detail(detail)
    .fix("use a GPU on AMD's list, or run ROCm on native Linux")
}

/// No GPU found, though WSL may expose one: rocminfo's own words, against the release's list.
fn no_gpu_found(cx: &Context, w: &WslRelease) -> Finding {
    let dxg = cx.facts.device_nodes.dxg;
    let Some(ev) = &cx.facts.evidence.rocminfo else {
        return Finding::new(
            ROCM_ID,
            AREA,
            Status::Skip,
            "ROCm on WSL: rocminfo is not installed, and nothing else names an AMD GPU under WSL",
        )
        .detail(wsl_terms(w))
        .fix(format!(
            "install ROCm on WSL ({WSL_INSTALL}), then run `rocminfo`"
        ));
    };
    let said = match ev.errors.first() {
        Some(e) => format!("rocminfo ({}): {e}", ev.outcome),
        None => format!("rocminfo ({}) lists no GPU agent", ev.outcome),
    };
    let summary = match dxg {
        true => format!("the Windows driver exposes a GPU through /dev/dxg, but ROCm {} on WSL does not open it: {said}", w.release),
        false => format!("no GPU is exposed to WSL (/dev/dxg is missing), and {said}"),
    };
    Finding::new(ROCM_ID, AREA, Status::Fail, summary)
        .detail(format!("{}. A GPU off that list fails this way; so does the regular (not WSL) edition of the Windows driver", wsl_terms(w)))
        .fix(format!("check the GPU in AMD Software on Windows: ROCm {} on WSL needs one of {} and {}; else run ROCm on native Linux", w.release, w.gpus_text(), w.driver_text()))
}

fn nvidia_driver(cx: &Context) -> Option<Finding> {
    let d = cx.facts.nvidia_driver.as_ref().filter(|d| d.from_windows);
    let gpus: Vec<&Gpu> = cx.facts.nvidia_gpus().filter(|g| is_dxg(g)).collect();
    if d.is_none() && gpus.is_empty() {
        return match &cx.facts.evidence.nvidia_smi {
            Some(ev) if cx.facts.device_nodes.dxg => Some(
                Finding::new(NVIDIA_ID, AREA, Status::Fail, format!("nvidia-smi ({}) names no GPU under WSL: {}", ev.outcome, ev.errors.first().cloned().unwrap_or_else(|| "no table".into())))
                    .fix("install or update the NVIDIA driver on Windows (WSL takes it from there; install no Linux driver inside WSL)"),
            ),
            _ => None,
        };
    }
    let names = crate::text::counted(
        gpus.iter()
            .map(|g| g.name.clone().unwrap_or_else(|| "unknown GPU".into())),
    );
    let f = match d {
        Some(d) => Finding::new(NVIDIA_ID, AREA, Status::Pass, format!("{names} through /dev/dxg; the Windows driver is {}", d.version))
            .detail(format!("{} (the driver WSL's libraries in /usr/lib/wsl/lib come from); CUDA's Windows driver column and NGC's driver floors are judged against it", crate::host::WSL_NVIDIA_SMI)),
        None => Finding::new(NVIDIA_ID, AREA, Status::Warn, format!("{names} through /dev/dxg; nvidia-smi named no driver version"))
            .fix("run `nvidia-smi` in WSL and `nvidia-smi.exe` on Windows; update the Windows NVIDIA driver"),
    };
    Some(f)
}

fn join(t: &[crate::gfx::GfxTarget]) -> String {
    t.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
