//! Kernel drivers: amdgpu loaded and inside the ROCm release's window; NVIDIA new enough for the CUDA target.

use super::{Context, Finding, Status};
use crate::matrix::{CudaRelease, NgcRelease, Sourced};
use crate::version::DriverVersion;

const AREA: &str = "driver";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    vec![amdgpu_loaded(cx), amdgpu_version(cx), nvidia(cx)]
}

fn amdgpu_loaded(cx: &Context) -> Finding {
    const ID: &str = "driver.amdgpu-loaded";
    if cx.facts.amd_gpus().next().is_none() {
        return Finding::new(ID, AREA, Status::Skip, "amdgpu: not needed, no AMD GPU");
    }
    let d = cx.facts.amdgpu_driver.as_ref();
    let bound: Vec<String> = cx
        .facts
        .amd_gpus()
        .filter_map(|g| g.driver.clone())
        .filter(|d| d != "amdgpu")
        .collect();
    match d {
        Some(d) if d.loaded => {
            let kind = match (&d.version, d.kind.as_deref()) {
                (Some(v), _) => format!("amdgpu-dkms {v}"),
                (None, Some("in-tree")) => "in-tree amdgpu".to_string(),
                (None, _) => "amdgpu (version unreadable)".to_string(),
            };
            if let Some(state) = d.initstate.as_deref().filter(|s| *s != "live") {
                return Finding::new(ID, AREA, Status::Fail, format!("{kind} is present but its state is `{state}`, not live"))
                    .fix("check `sudo dmesg | grep -i amdgpu` for firmware or init errors");
            }
            if !bound.is_empty() {
                return Finding::new(ID, AREA, Status::Warn, format!("{kind} is loaded, but some AMD GPUs are bound to {}", bound.join(", ")))
                    .detail("a GPU bound to vfio-pci is reserved for a VM and invisible to ROCm on this host")
                    .fix("unbind it from vfio-pci (check /etc/modprobe.d and the kernel command line) if the host should use it");
            }
            Finding::new(ID, AREA, Status::Pass, format!("{kind} is loaded"))
        }
        _ if !cx.facts.boot.amdgpu_blacklist.is_empty() => {
            let at = cx.facts.boot.amdgpu_blacklist.join("; ");
            Finding::new(ID, AREA, Status::Fail, "the amdgpu kernel module is not loaded: it is blacklisted")
                .detail(format!("blacklisted by {at}; without amdgpu there is no /dev/kfd and rocminfo says `ROCk module is NOT loaded`"))
                .fix("remove the blacklist (`rocmenv fix` removes it from /etc/modprobe.d and says where else it is), then sudo modprobe amdgpu")
        }
        _ => Finding::new(ID, AREA, Status::Fail, "the amdgpu kernel module is not loaded")
            .detail("without amdgpu there is no /dev/kfd and rocminfo says `ROCk module is NOT loaded`")
            .fix("sudo modprobe amdgpu; if it refuses, check `sudo dmesg | grep -i amdgpu`, remove any `blacklist amdgpu` in /etc/modprobe.d, or install the driver: sudo amdgpu-install --usecase=dkms"),
    }
}

fn window(r: &crate::matrix::RocmRelease) -> String {
    r.kernel_drivers
        .iter()
        .map(|k| {
            if k.patch() == 0 {
                format!("{}.x", k.short())
            } else {
                k.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn amdgpu_version(cx: &Context) -> Finding {
    const ID: &str = "driver.amdgpu-version";
    let Some(t) = &cx.target.rocm else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "amdgpu against ROCm: not checked, no ROCm target",
        );
    };
    let r = t.release;
    let Some(d) = cx.facts.amdgpu_driver.as_ref().filter(|d| d.loaded) else {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "amdgpu is not loaded, so it has no version to compare",
        );
    };
    if let Some(why) = cx.facts.why_unavailable("amdgpu version") {
        return Finding::new(
            ID,
            AREA,
            Status::Warn,
            format!("amdgpu is loaded but its version could not be read: {why}"),
        );
    }
    let Some(raw) = &d.version else {
        return Finding::new(ID, AREA, Status::Skip, "in-tree amdgpu: the kernel's own driver has no /sys/module/amdgpu/version to compare")
            .detail(format!("ROCm {} supports the in-tree driver only on the listed kernels (see kernel.rocm-supported); amdgpu-dkms would show its version here", r.version));
    };
    let Some(v) = raw.value().cloned() else {
        return Finding::new(
            ID,
            AREA,
            Status::Warn,
            format!("amdgpu version `{raw}` is not a version rocmenv can compare"),
        );
    };
    let Some((release, unconfirmed)) = cx.matrices.driver_release_of_dkms(&v) else {
        return Finding::new(ID, AREA, Status::Warn, format!("amdgpu-dkms {raw} does not map to a driver release in rocm.yaml"))
            .detail(format!("ROCm {} works with driver releases {}", r.version, window(r)))
            .fix("check `dpkg -l amdgpu-dkms` (or `rpm -q amdgpu-dkms`): its version ends in the ROCm release it came from, e.g. 6.8.5.60200 = ROCm 6.2.0");
    };
    let hedge = if unconfirmed {
        " (the dkms→release mapping is marked unconfirmed in rocm.yaml)"
    } else {
        ""
    };
    if r.accepts_driver(&release) {
        Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "amdgpu-dkms {raw} (driver {}) works with ROCm {} user space",
                release.short(),
                r.version
            ),
        )
        .detail(format!("window: {}{hedge}", window(r)))
    } else {
        let fix = match &r.ships_driver {
            Some(s) => format!("install the amdgpu driver that ships with ROCm {} (driver {s}): sudo amdgpu-install --usecase=dkms, then reboot", r.version),
            None => format!("install an amdgpu-dkms in the window {}", window(r)),
        };
        Finding::new(
            ID,
            AREA,
            Status::Fail,
            format!(
                "amdgpu-dkms {raw} (driver {}) is outside ROCm {}'s window ({})",
                release.short(),
                r.version,
                window(r)
            ),
        )
        .detail(format!(
            "kernel driver and user space are supported up to about a year apart{hedge}"
        ))
        .fix(fix)
    }
}

/// The id of the NVIDIA driver check.
const NVIDIA_ID: &str = "driver.nvidia-version";

/// Whether the loaded NVIDIA driver runs the CUDA (or NGC) target.
fn nvidia(cx: &Context) -> Finding {
    let has = cx.facts.nvidia_gpus().next().is_some();
    let Some(t) = &cx.target.cuda else {
        return Finding::new(
            NVIDIA_ID,
            AREA,
            Status::Skip,
            if has {
                "NVIDIA driver: no CUDA target to check it against"
            } else {
                "NVIDIA driver: not needed, no NVIDIA GPU"
            },
        );
    };
    let Some(d) = &cx.facts.nvidia_driver else {
        // No fix installs a vendor's driver on a host without that vendor's GPU (gpu.vendor fails that target).
        return if has || (cx.facts.gpus.is_empty() && (t.ngc.is_some() || cx.target.explicit)) {
            Finding::new(NVIDIA_ID, AREA, Status::Fail, "the NVIDIA kernel driver is not loaded (no /proc/driver/nvidia/version)")
                .detail("nvidia-smi would say it `couldn't communicate with the NVIDIA driver`")
                .fix("install the driver (e.g. sudo apt install nvidia-driver-570-server or the CUDA repo's cuda-drivers), then reboot; check `sudo dmesg | grep -i nvrm`")
        } else {
            Finding::new(
                NVIDIA_ID,
                AREA,
                Status::Skip,
                "NVIDIA driver: not needed, no NVIDIA GPU",
            )
        };
    };
    let have = d.version.clone();
    let c = t.cuda;
    let (what, need) = match t.ngc {
        Some(n) => (
            format!("NGC {} (CUDA {})", n.release, n.cuda),
            n.min_driver.clone(),
        ),
        // Under WSL the driver is the Windows one, which Table 3's Windows column judges.
        None => (
            format!("CUDA {} ({})", c.version.short(), c.label),
            match (d.from_windows, &c.min_driver_windows) {
                (true, Some(w)) => w.clone(),
                _ => c.min_driver_linux.clone(),
            },
        ),
    };
    let whose = if d.from_windows {
        "Windows NVIDIA driver"
    } else {
        "NVIDIA driver"
    };
    if have >= need {
        return Finding::new(
            NVIDIA_ID,
            AREA,
            Status::Pass,
            format!("{whose} {have} runs {what} (needs ≥ {need})"),
        );
    }
    // Datacenter GPUs can run newer CUDA on older long-term branches through the forward-compatibility package.
    if let Some(f) = t
        .ngc
        .and_then(|n| forward_compat_verdict(cx, n, &have, &what, &need))
    {
        return f;
    }
    driver_too_old(cx, c, &have, &what, &need)
}

/// When driver `have` is too old for NGC release `n` but on one of its datacenter branches: whether forward
/// compatibility runs it here (not on consumer GPUs). `None` when no such branch holds `have`.
fn forward_compat_verdict(
    cx: &Context,
    n: &NgcRelease,
    have: &DriverVersion,
    what: &str,
    need: &DriverVersion,
) -> Option<Finding> {
    let b = n
        .datacenter_drivers
        .iter()
        .find(|b| b.branch() == have.branch() && have >= *b)?;
    // NVIDIA: forward compatibility is for data center GPUs and select NGC-ready RTX SKUs only, never GeForce
    // (https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html); on one the container's
    // CUDA fails with cudaErrorCompatNotSupportedOnDevice.
    let consumer: Vec<String> = cx
        .facts
        .nvidia_gpus()
        .filter_map(|g| g.name.clone())
        .filter(|n| is_consumer_nvidia(n))
        .collect();
    if !consumer.is_empty() {
        return Some(Finding::new(NVIDIA_ID, AREA, Status::Fail, format!("NVIDIA driver {have} is too old for {what}, which needs ≥ {need}; forward compatibility, which lets branch R{} run it on data center GPUs, does not work on {}", have.branch(), consumer.join(", ")))
            .detail("NVIDIA supports forward compatibility (the cuda-compat package) only on data center GPUs and select NGC Server Ready RTX SKUs; on a GeForce the container's CUDA fails with cudaErrorCompatNotSupportedOnDevice")
            .fix(format!("upgrade the NVIDIA driver to {need} or newer (branch R{}+), or target an older release", need.branch())));
    }
    // NVIDIA's notes support these branches on data center GPUs (the container brings cuda-compat): a pass, on a
    // condition the text names (issue 34: an H100 on R525.85 runs NGC 23.04).
    // A list carried from a neighbouring month's notes says so, as every verdict on unconfirmed data does.
    let carried = if n.is_unconfirmed("datacenter_drivers") {
        format!("; NGC {r}'s `datacenter_drivers` is marked unconfirmed in ngc.yaml (`rocmenv matrix ngc {r}` shows its source)", r = n.release)
    } else {
        String::new()
    };
    Some(Finding::new(NVIDIA_ID, AREA, Status::Pass, format!("NVIDIA driver {have} runs {what} on data center GPUs through forward compatibility (branch R{} ≥ {b}; consumer GPUs need ≥ {need})", have.branch()))
        .detail(format!("NGC {}'s release notes list R{} among the data center branches it supports with the forward-compatibility package; consumer GPUs cannot use it; upgrade the driver to ≥ {need} to drop the compatibility layer{carried}", n.release, have.branch()))
        .conditional())
}

/// The failure for a driver older than the target needs: the newest CUDA it runs, and whether minor-version
/// compatibility may help.
fn driver_too_old(
    cx: &Context,
    c: &CudaRelease,
    have: &DriverVersion,
    what: &str,
    need: &DriverVersion,
) -> Finding {
    let newest: Option<String> = cx
        .matrices
        .newest_cuda_for_driver(have)
        .map(|r| format!("CUDA {} ({})", r.version.short(), r.label));
    let family = cx
        .matrices
        .cuda_family(c.version.major())
        .filter(|f| *have >= f.min_driver);
    let mut f = Finding::new(
        NVIDIA_ID,
        AREA,
        Status::Fail,
        format!("NVIDIA driver {have} is too old for {what}, which needs ≥ {need}"),
    )
    .fix(format!(
        "upgrade the NVIDIA driver to {need} or newer (branch R{}+), or target an older release{}",
        need.branch(),
        newest
            .as_ref()
            .map(|n| format!("; this driver runs up to {n}"))
            .unwrap_or_default()
    ));
    if let Some(fam) = family {
        f = f.detail(format!("CUDA {}.x minor-version compatibility (≥ {}) may run some applications, but not PTX JIT or newer driver APIs", c.version.major(), fam.min_driver));
    }
    f
}

/// A consumer (GeForce or TITAN) NVIDIA GPU, by its marketing name: these cannot use CUDA forward compatibility.
pub(crate) fn is_consumer_nvidia(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.contains("geforce") || n.contains("titan")
}
