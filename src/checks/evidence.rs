//! With `--deep`: what rocminfo and nvidia-smi say, compared with sysfs.

use super::{Context, Finding, Status};
use crate::host::ToolEvidence;

const AREA: &str = "tools";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    if !cx.deep {
        return vec![];
    }
    vec![rocminfo(cx), rocm_smi(cx), nvidia_smi(cx)]
}

fn rocminfo(cx: &Context) -> Finding {
    const ID: &str = "tools.rocminfo";
    let Some(e) = &cx.facts.evidence.rocminfo else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "rocminfo is not installed and there is no AMD GPU",
        );
    };
    if e.outcome.timed_out() {
        return Finding::new(ID, AREA, Status::Fail, format!("rocminfo {}", e.outcome))
            .detail("a hanging rocminfo usually means a wedged driver or a GPU stuck in reset")
            .fix("check `sudo dmesg | grep -i amdgpu`; a reboot clears a wedged GPU");
    }
    if !e.outcome.has_output() {
        return Finding::new(ID, AREA, Status::Skip, e.outcome.to_string());
    }
    compare(ID, "rocminfo", e, cx.facts.amd_gpus().count(), rocminfo_fix)
}

fn rocm_smi(cx: &Context) -> Finding {
    const ID: &str = "tools.rocm-smi";
    let Some(e) = &cx.facts.evidence.rocm_smi else {
        return Finding::new(ID, AREA, Status::Skip, "rocm-smi is not installed");
    };
    if e.outcome.timed_out() {
        return Finding::new(ID, AREA, Status::Fail, format!("rocm-smi {}", e.outcome))
            .fix("check `sudo dmesg | grep -i amdgpu`; a reboot clears a wedged GPU");
    }
    if !e.outcome.has_output() {
        return Finding::new(ID, AREA, Status::Skip, e.outcome.to_string());
    }
    compare(ID, "rocm-smi", e, cx.facts.amd_gpus().count(), |_| {
        "run rocm-smi by hand and read its first error; check that amdgpu is loaded"
    })
}

fn rocminfo_fix(err: &str) -> &'static str {
    if err.contains("not loaded") {
        "sudo modprobe amdgpu (see driver.amdgpu-loaded)"
    } else if err.contains("permission") || err.contains("group") {
        "sudo usermod -aG render,video $USER, then log in again"
    } else if err.contains("WSL") {
        "update the Windows AMD driver to one that supports ROCm on WSL, and use the WSL ROCm packages"
    } else {
        "run rocminfo by hand and read its first error"
    }
}

fn nvidia_fix(err: &str) -> &'static str {
    if err.contains("mismatch") {
        "the loaded kernel module and the user-space library differ (a driver upgrade without reboot): reboot, or reload the nvidia modules"
    } else if err.contains("communicate") {
        "the driver is not loaded: sudo modprobe nvidia; check `sudo dmesg | grep -i nvrm`, Secure Boot module signing, and that the driver matches the kernel"
    } else {
        "run nvidia-smi by hand and read its error"
    }
}

fn compare(
    id: &'static str,
    tool: &str,
    e: &ToolEvidence,
    sysfs: usize,
    fix: fn(&str) -> &'static str,
) -> Finding {
    if let Some(err) = e.errors.first() {
        return Finding::new(id, AREA, Status::Fail, format!("{tool}: {err}"))
            .detail(if e.errors.len() > 1 {
                e.errors[1..].join("; ")
            } else {
                format!("{tool} {}", e.outcome)
            })
            .fix(fix(&err.to_lowercase()));
    }
    if e.devices.len() != sysfs {
        return Finding::new(id, AREA, Status::Warn, format!("{tool} lists {} GPU{}, sysfs shows {sysfs}", e.devices.len(), if e.devices.len() == 1 { "" } else { "s" }))
            .detail(format!("{tool} saw: {}", if e.devices.is_empty() { "none".to_string() } else { e.devices.join(", ") }))
            .fix("GPUs hidden by *_VISIBLE_DEVICES, bound to vfio-pci, or failed at init do not show up; compare with `lspci`");
    }
    Finding::new(
        id,
        AREA,
        Status::Pass,
        format!(
            "{tool} sees {} GPU{}{}",
            e.devices.len(),
            if e.devices.len() == 1 { "" } else { "s" },
            if e.devices.is_empty() {
                String::new()
            } else {
                format!(": {}", e.devices.join(", "))
            }
        ),
    )
}

fn nvidia_smi(cx: &Context) -> Finding {
    const ID: &str = "tools.nvidia-smi";
    let Some(e) = &cx.facts.evidence.nvidia_smi else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "nvidia-smi is not installed and there is no NVIDIA GPU",
        );
    };
    if e.outcome.timed_out() {
        return Finding::new(ID, AREA, Status::Fail, format!("nvidia-smi {}", e.outcome)).fix("check `sudo dmesg | grep -i -e nvrm -e xid`; a GPU that fell off the bus needs a reboot");
    }
    if !e.outcome.has_output() {
        return Finding::new(ID, AREA, Status::Skip, e.outcome.to_string());
    }
    compare(
        ID,
        "nvidia-smi",
        e,
        cx.facts.nvidia_gpus().count(),
        nvidia_fix,
    )
}
