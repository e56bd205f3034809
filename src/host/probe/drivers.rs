//! The kernel drivers: amdgpu and nvidia.

use crate::host::facts::*;
use crate::host::root::{HostRoot, ReadError};
use crate::parse;
use crate::version::{DriverVersion, Reported};

/// The value, or `None`; a file that exists but cannot be read is recorded with its path, a missing one is not.
fn known(r: Result<String, ReadError>, fact: &str, f: &mut HostFacts) -> Option<String> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            if !e.is_missing() {
                f.unavailable(fact, e.to_string());
            }
            None
        }
    }
}

pub(super) fn probe_amdgpu(root: &HostRoot, f: &mut HostFacts) {
    if root.exists("/sys/module/amdgpu") {
        // No version file is the in-tree driver; one that cannot be read leaves the kind unknown, with the reason.
        let (version, kind) = match root.read_value("/sys/module/amdgpu/version") {
            Ok(v) => (Some(Reported::new(v)), Some("dkms")),
            Err(e) if e.is_missing() => (None, Some("in-tree")),
            Err(e) => {
                f.unavailable("amdgpu version", e.to_string());
                (None, None)
            }
        };
        let initstate = known(
            root.read_value("/sys/module/amdgpu/initstate"),
            "amdgpu initstate",
            f,
        );
        f.amdgpu_driver = Some(AmdgpuDriver {
            loaded: true,
            kind: kind.map(str::to_string),
            version,
            initstate,
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
    let from_proc = known(
        root.read_text("/proc/driver/nvidia/version"),
        "nvidia version",
        f,
    )
    .and_then(|t| parse::nvidia_proc::parse_nvidia_proc_version(&t));
    if let Some(m) = from_proc {
        f.nvidia_driver = Some(NvidiaDriver {
            version: m.version,
            open: m.open,
            from_windows: false,
        });
        return;
    }
    if let Ok(v) = root.read_value("/sys/module/nvidia/version") {
        if let Ok(version) = v.parse::<DriverVersion>() {
            f.nvidia_driver = Some(NvidiaDriver {
                version,
                open: false,
                from_windows: false,
            });
        }
    }
}
