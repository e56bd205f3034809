//! Reads a host through a `HostRoot` and a `Session` into `HostFacts`. Never aborts: what cannot be read is recorded.

mod access;
pub use access::{parse_groups, DXG_CONTAINER_LIBS, WSL_LIBDXCORE, WSL_LIBHSA, WSL_LIBROCDXG};
mod boot;
mod deep;
mod drivers;
mod gpus;
mod health;
mod installs;
mod system;
mod wsl;

use super::facts::*;
use super::root::HostRoot;
use super::session::Session;
use crate::parse;
use access::*;
use boot::*;
use deep::*;
use drivers::*;
use gpus::*;
use health::*;
use installs::*;
use system::*;
pub use wsl::{dxg_address, is_dxg, WSL_NVIDIA_SMI};

pub use boot::{FIRMWARE_COMPONENTS, MODPROBE_DIRS, SECURE_BOOT_VAR};

/// How far the probe goes.
#[derive(Debug, Clone, Default)]
pub struct ProbeOptions {
    /// Run (or read the recorded output of) rocminfo and nvidia-smi.
    pub deep: bool,
}

/// Tools whose presence on PATH the report shows.
pub const TOOLS: [&str; 8] = [
    "rocminfo",
    "rocm-smi",
    "amd-smi",
    "nvidia-smi",
    "hipcc",
    "nvcc",
    "docker",
    "podman",
];

/// Environment variables that change which GPUs a framework uses and how.
pub const GPU_ENV: [&str; 12] = [
    "HSA_OVERRIDE_GFX_VERSION",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "NVIDIA_VISIBLE_DEVICES",
    "PYTORCH_ROCM_ARCH",
    "HCC_AMDGPU_TARGET",
    "ROCM_PATH",
    "HIP_PATH",
    "CUDA_HOME",
    "DOCKER_HOST",
];

pub(super) const DEFAULT_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Probes the host: facts only. Names and targets that come from the matrices are added by `inventory`.
pub fn probe(root: &HostRoot, session: &dyn Session, opts: &ProbeOptions) -> HostFacts {
    let mut f = HostFacts {
        mode: if root.is_live() {
            "live".into()
        } else {
            "sysroot".into()
        },
        ..HostFacts::default()
    };
    let env = session.env().unwrap_or_else(|why| {
        f.unavailable("env", why);
        Default::default()
    });
    probe_kernel(root, &mut f);
    probe_os(root, &mut f);
    probe_pci(root, &mut f);
    probe_kfd(root, &mut f);
    probe_drm(root, &mut f);
    probe_amdgpu(root, &mut f);
    probe_nvidia(root, &mut f);
    probe_rocm(root, &mut f);
    probe_cuda(root, &mut f);
    // `/etc/group` is read once, for the user's groups and the device nodes' group names.
    let groups = read_groups(root);
    probe_user(root, session, &groups, &mut f);
    probe_nodes(root, session, &groups, &mut f);
    probe_tools(root, &env, &mut f);
    probe_system(root, &mut f);
    probe_boot(root, &mut f);
    f.env = env
        .iter()
        .filter(|(k, _)| {
            GPU_ENV.contains(&k.as_str()) || k.starts_with("HSA_OVERRIDE_GFX_VERSION_")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    f.wsl = f
        .kernel
        .as_ref()
        .and_then(|k| parse::kernel::parse_kernel_release(&k.release).ok())
        .is_some_and(|k| k.is_wsl())
        || f.device_nodes.dxg;
    probe_container_config(root, &mut f);
    probe_health(root, &mut f);
    wsl::probe_wsl_gpus(root, session, &mut f);
    if opts.deep {
        probe_tools_output(session, &mut f);
        probe_nvidia_xml(session, &mut f);
    }
    gpus::number_gpus(&mut f);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_bus_ids_become_sysfs_addresses() {
        assert_eq!(
            pci_address_of_bus_id("00000000:17:00.0").as_deref(),
            Some("0000:17:00.0")
        );
        assert_eq!(
            pci_address_of_bus_id("00000001:AB:00.0").as_deref(),
            Some("0001:ab:00.0")
        );
        assert_eq!(pci_address_of_bus_id("N/A"), None);
        assert_eq!(pci_address_of_bus_id("zz:00.0"), None);
    }

    #[test]
    fn link_speeds_parse_sysfs_text() {
        assert_eq!(link_speed("16.0 GT/s PCIe"), Some(16.0));
        assert_eq!(link_speed("2.5 GT/s"), Some(2.5));
        assert_eq!(link_speed("Unknown"), None);
        assert_eq!(link_speed("inf GT/s"), None);
        assert_eq!(link_speed(""), None);
    }

    #[test]
    fn a_tree_searches_path_in_order_skipping_missing_and_repeated_directories() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let tool = |p: &str| {
            let p = d.path().join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        tool("usr/bin/rocminfo");
        tool("opt/x/bin/rocminfo");
        tool("usr/bin/nvidia-smi");
        std::os::unix::fs::symlink("usr/bin", d.path().join("bin")).unwrap();
        let root = HostRoot::sysroot(d.path()).unwrap();
        assert_eq!(
            installs::tree_path_dirs(&root, &["/missing", "/bin", "/usr/bin", "/opt/x/bin"]),
            ["/bin", "/opt/x/bin"]
        );
        let find = |path: &str| {
            let mut f = HostFacts::default();
            let env = [("PATH".to_string(), path.to_string())].into();
            probe_tools(&root, &env, &mut f);
            f
        };
        let f = find("/missing:/opt/x/bin:/bin:/usr/bin");
        assert_eq!(f.tools["rocminfo"].as_deref(), Some("/opt/x/bin/rocminfo"));
        assert_eq!(f.tools["nvidia-smi"].as_deref(), Some("/bin/nvidia-smi"));
        assert_eq!(f.tools["hipcc"], None);
        let f = find("/usr/bin:/opt/x/bin");
        assert_eq!(f.tools["rocminfo"].as_deref(), Some("/usr/bin/rocminfo"));
    }
}
