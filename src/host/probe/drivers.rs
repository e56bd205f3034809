//! The kernel drivers: amdgpu and nvidia.

use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::parse;

pub(super) fn probe_amdgpu(root: &HostRoot, f: &mut HostFacts) {
    if root.exists("/sys/module/amdgpu") {
        let version = root.read_value("/sys/module/amdgpu/version").ok();
        f.amdgpu_driver = Some(AmdgpuDriver {
            loaded: true,
            kind: Some(if version.is_some() { "dkms" } else { "in-tree" }.into()),
            version,
            initstate: root.read_value("/sys/module/amdgpu/initstate").ok(),
        });
    } else if f.amd_gpus().next().is_some() {
        f.amdgpu_driver = Some(AmdgpuDriver {
            loaded: false,
            version: None,
            kind: None,
            initstate: None,
        });
    }
}

pub(super) fn probe_nvidia(root: &HostRoot, f: &mut HostFacts) {
    let from_proc = root
        .read_text("/proc/driver/nvidia/version")
        .ok()
        .and_then(|t| parse::nvidia_proc::parse_nvidia_proc_version(&t));
    if let Some(m) = from_proc {
        f.nvidia_driver = Some(NvidiaDriver {
            version: m.version.to_string(),
            open: m.open,
        });
        return;
    }
    if let Ok(v) = root.read_value("/sys/module/nvidia/version") {
        if v.parse::<crate::version::DriverVersion>().is_ok() {
            f.nvidia_driver = Some(NvidiaDriver {
                version: v,
                open: false,
            });
        }
    }
}
