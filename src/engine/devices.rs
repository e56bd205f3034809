//! Which host devices a container gets, per vendor: a pure function of the host facts, unit-tested on captured hosts.

use super::mount::Mount;
use super::seccomp::{strict_security_opt, Security};
use crate::host::{Gpu, HostFacts};
use crate::vendor::Vendor;
use serde::Serialize;

/// A request for NVIDIA GPUs (`docker run --gpus` or a CDI device).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GpuRequest {
    /// `nvidia` (the runtime hook) or `cdi`.
    pub driver: String,
    /// `Some(-1)` for every GPU; `None` when `device_ids` name them.
    pub count: Option<i64>,
    /// GPU indices (`0`) or CDI names (`nvidia.com/gpu=all`).
    pub device_ids: Vec<String>,
    /// `[["gpu"]]` for the nvidia driver, empty for CDI.
    pub capabilities: Vec<Vec<String>>,
}

/// What a container gets from the host to use its GPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceMap {
    /// The vendor mapped.
    pub vendor: Vendor,
    /// Device nodes passed through, same path inside.
    pub devices: Vec<String>,
    /// Group ids added to the container's process, numbers so images without the groups work.
    pub group_add: Vec<u32>,
    /// `seccomp=unconfined` for ROCm (its allocator uses syscalls Docker's profile blocks), or under
    /// `--security strict` the strict profile's content (`seccomp={…}`).
    pub security_opt: Vec<String>,
    /// How confined the container is.
    pub security: Security,
    /// `--ipc=host` (RCCL/NCCL share memory between processes).
    pub ipc_host: bool,
    /// `/dev/shm` size in bytes (PyTorch DataLoader workers pass tensors through it).
    pub shm_size: u64,
    /// Host files bound into the container (ROCm on WSL: WSL's libdxcore.so and the host's HSA runtime or ROCDXG
    /// bridge), read-only.
    pub mounts: Vec<Mount>,
    /// Variables the mapping needs (`HSA_ENABLE_DXG_DETECTION=1` with the ROCDXG bridge); `-e` overrides them.
    pub env: Vec<(String, String)>,
    /// NVIDIA's device request.
    pub gpu_request: Option<GpuRequest>,
    /// The GPUs the container gets, as messages name them (`GPU 0 (AMD Instinct MI210, 0000:e3:00.0)`).
    pub gpus: Vec<String>,
}

/// The `/dev/shm` size: half the host's memory in whole GiB, between 1 and 16 GiB (8 GiB when unknown).
pub fn shm_size(memory_bytes: Option<u64>) -> u64 {
    const GIB: u64 = 1 << 30;
    memory_bytes.map_or(8 * GIB, |m| (m / 2 / GIB * GIB).clamp(GIB, 16 * GIB))
}

/// The ids of `video` and `render` in an `/etc/group` text.
pub fn video_render_gids(etc_group: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for name in ["video", "render"] {
        let gid = etc_group.lines().find_map(|l| {
            let mut f = l.split(':');
            (f.next() == Some(name))
                .then(|| f.nth(1).and_then(|g| g.trim().parse::<u32>().ok()))
                .flatten()
        });
        out.extend(gid);
    }
    out
}

/// `--gpu n` names no GPU: the error lists the ones that exist, each with its PCI address.
/// The AMD GPUs a container gets, in KFD order: the `gpu`-th, else all but iGPUs that sit next to a discrete GPU.
fn amd_selection(facts: &HostFacts, gpu: Option<usize>) -> Result<Vec<&Gpu>, String> {
    let amd: Vec<&Gpu> = facts.amd_gpus().collect();
    if let Some(n) = gpu {
        return facts.gpu_number(Vendor::Amd, n).map(|g| vec![g]);
    }
    let discrete = amd.iter().any(|g| g.integrated != Some(true));
    Ok(amd
        .into_iter()
        .filter(|g| !(discrete && g.integrated == Some(true)))
        .collect())
}

/// Maps the host's GPUs for `vendor`. `etc_group` is the host's `/etc/group`; `daemon_cdi` is true when the daemon
/// reports CDI spec directories (API ≥ 1.46); `security` picks the vendors' documented flags or the strict profile.
/// An error says why the selection is impossible (bad `--gpu`, no GPU).
pub fn device_map(
    facts: &HostFacts,
    vendor: Vendor,
    gpu: Option<usize>,
    etc_group: &str,
    daemon_cdi: bool,
    security: Security,
) -> Result<DeviceMap, String> {
    let mut m = DeviceMap {
        vendor,
        devices: Vec::new(),
        group_add: Vec::new(),
        security_opt: Vec::new(),
        security,
        ipc_host: false,
        shm_size: shm_size(facts.memory_bytes),
        mounts: Vec::new(),
        env: Vec::new(),
        gpu_request: None,
        gpus: Vec::new(),
    };
    match vendor {
        Vendor::Cpu => {}
        Vendor::Amd => map_amd(&mut m, facts, gpu, etc_group)?,
        Vendor::Nvidia => map_nvidia(&mut m, facts, gpu, daemon_cdi)?,
    }
    if security == Security::Strict {
        // Docker's default profile plus the NUMA calls, and /dev/shm sized instead of the host's IPC namespace.
        m.security_opt = vec![strict_security_opt()];
        m.ipc_host = false;
    }
    Ok(m)
}

/// Maps the AMD GPUs `gpu` selects: /dev/kfd and each render node, the groups that own them, IPC and seccomp; under
/// WSL2 /dev/dxg and the host libraries AMD's instructions bind in instead (`dxg.rs`).
fn map_amd(
    m: &mut DeviceMap,
    facts: &HostFacts,
    gpu: Option<usize>,
    etc_group: &str,
) -> Result<(), String> {
    let gpus = amd_selection(facts, gpu)?;
    if gpus.is_empty() {
        return Err(if facts.wsl {
            "this WSL2 host shows no AMD GPU: under WSL2 only ROCm's rocminfo names one, and it named none here (install ROCm for WSL, or use --vendor cpu)".into()
        } else {
            "this host has no AMD GPU (use --vendor cpu, or run on a ROCm host)".into()
        });
    }
    if gpus.iter().any(|g| crate::host::is_dxg(g)) {
        // ROCm on WSL has no /dev/kfd or render nodes: the container gets /dev/dxg and the host's libraries.
        super::dxg::check_dxg_selection(facts, gpu)?;
        let d = super::dxg::dxg_mapping(facts)?;
        m.devices = d.devices;
        m.mounts = d.mounts;
        m.env = d.env;
        m.gpus = gpus.iter().map(|g| g.label()).collect();
        m.security_opt.push("seccomp=unconfined".into());
        m.ipc_host = true;
        return Ok(());
    }
    let kfd = facts.device_nodes.kfd.as_ref();
    m.devices
        .push(kfd.map_or("/dev/kfd".into(), |k| k.path.clone()));
    for g in &gpus {
        let node = g
            .render_node
            .clone()
            .ok_or_else(|| format!("{} has no render node (is amdgpu loaded?)", g.pci_address))?;
        m.devices.push(node);
        m.gpus.push(g.label());
    }
    m.group_add = video_render_gids(etc_group);
    // Nodes owned by another group (some distributions) still need that group.
    let owners = facts
        .device_nodes
        .render
        .iter()
        .chain(kfd)
        .filter(|n| m.devices.contains(&n.path))
        .filter_map(|n| n.gid)
        .collect::<Vec<_>>();
    for gid in owners {
        if !m.group_add.contains(&gid) {
            m.group_add.push(gid);
        }
    }
    m.security_opt.push("seccomp=unconfined".into());
    m.ipc_host = true;
    Ok(())
}

/// Maps the NVIDIA GPUs `gpu` selects as a device request: through CDI when the daemon and the host both have it.
fn map_nvidia(
    m: &mut DeviceMap,
    facts: &HostFacts,
    gpu: Option<usize>,
    daemon_cdi: bool,
) -> Result<(), String> {
    let count = facts.nvidia_gpus().count();
    if count == 0 {
        return Err("this host has no NVIDIA GPU (use --vendor cpu, or run on a CUDA host)".into());
    }
    if let Some(n) = gpu {
        facts.gpu_number(Vendor::Nvidia, n)?;
    }
    let nvidia_cdi = facts
        .container
        .cdi_specs
        .iter()
        .any(|s| s.kind.as_deref() == Some("nvidia.com/gpu"));
    m.gpus = facts
        .nvidia_gpus()
        .filter(|g| gpu.is_none_or(|n| g.index == n))
        .map(|g| g.label())
        .collect();
    m.gpu_request = Some(if daemon_cdi && nvidia_cdi {
        GpuRequest {
            driver: "cdi".into(),
            count: None,
            device_ids: vec![format!(
                "nvidia.com/gpu={}",
                gpu.map_or("all".into(), |n| n.to_string())
            )],
            capabilities: Vec::new(),
        }
    } else {
        GpuRequest {
            driver: "nvidia".into(),
            count: gpu.is_none().then_some(-1),
            device_ids: gpu.map(|n| vec![n.to_string()]).unwrap_or_default(),
            capabilities: vec![vec!["gpu".into()]],
        }
    });
    m.ipc_host = true;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::{HostRoot, ProbeOptions, RecordedSession};
    use crate::matrix::Matrices;

    fn fixture(name: &str) -> (HostFacts, String) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts")
            .join(name);
        let root = HostRoot::sysroot(&dir).unwrap();
        let session = RecordedSession::open(&root);
        let m = Matrices::load(None).unwrap();
        let facts = crate::inventory::probe(&root, &session, &m, &ProbeOptions::default());
        (facts, root.read_text("/etc/group").unwrap_or_default())
    }

    #[test]
    fn mi300x_gets_kfd_every_render_node_and_numeric_groups() {
        let (f, g) = fixture("mi300x-x4-ubuntu2204");
        let m = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap();
        assert_eq!(m.devices[0], "/dev/kfd");
        assert_eq!(m.devices.len(), 5, "{:?}", m.devices);
        assert!(m.devices[1..]
            .iter()
            .all(|d| d.starts_with("/dev/dri/renderD")));
        assert_eq!(&m.group_add[..2], &video_render_gids(&g)[..]);
        assert_eq!(m.group_add[..2].len(), 2);
        assert_eq!(m.security_opt, ["seccomp=unconfined"]);
        assert!(m.ipc_host);
        assert!(m.gpu_request.is_none());
    }

    #[test]
    fn strict_security_swaps_unconfined_for_the_profile_and_ipc_host_for_shm() {
        let (f, g) = fixture("mi300x-x4-ubuntu2204");
        for vendor in [Vendor::Amd, Vendor::Cpu] {
            let m = device_map(&f, vendor, None, &g, false, Security::Strict).unwrap();
            assert_eq!(m.security_opt, [strict_security_opt()], "{vendor:?}");
            assert!(!m.ipc_host, "{vendor:?}");
            assert!(m.shm_size >= 1 << 30);
        }
        let amd = device_map(&f, Vendor::Amd, None, &g, false, Security::Strict).unwrap();
        assert_eq!(
            amd.devices.len(),
            5,
            "the devices are the same as by default"
        );
    }

    #[test]
    fn one_amd_gpu_maps_only_its_render_node() {
        let (f, g) = fixture("mi300x-x4-ubuntu2204");
        let all = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap();
        let one = device_map(&f, Vendor::Amd, Some(2), &g, false, Security::Default).unwrap();
        assert_eq!(
            one.devices,
            vec!["/dev/kfd".to_string(), all.devices[3].clone()]
        );
        let err = device_map(&f, Vendor::Amd, Some(4), &g, false, Security::Default).unwrap_err();
        // The error lists the GPUs that exist by the numbers --gpu takes, each with its PCI address.
        for g in f.amd_gpus() {
            assert!(err.contains(&g.label()), "{err}");
        }
        assert!(
            err.starts_with("GPU 4 does not exist; this host's AMD GPUs are GPU 0 ("),
            "{err}"
        );
    }

    #[test]
    fn igpu_next_to_a_discrete_gpu_is_not_mapped() {
        let (f, g) = fixture("ryzen5600g-igpu-rx6800-mint21");
        let m = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap();
        assert_eq!(m.devices.len(), 2, "{:?}", m.devices);
    }

    /// Issue 34: an AMD GPU under WSL2 gets /dev/dxg and the host libraries AMD's WSL `docker run` binds in, no
    /// /dev/kfd or render node, no groups.
    #[test]
    fn a_wsl_amd_gpu_gets_dxg_and_amds_library_binds() {
        let (f, g) = fixture("wsl2-rx7900gre");
        let m = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap();
        assert_eq!(m.devices, ["/dev/dxg"]);
        let binds: Vec<String> = m
            .mounts
            .iter()
            .map(|b| format!("{}:{}:{}", b.source, b.container, b.read_only))
            .collect();
        assert_eq!(
            binds,
            [
                "/usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so:true",
                "/opt/rocm/lib/libhsa-runtime64.so.1:/opt/rocm/lib/libhsa-runtime64.so.1:true"
            ]
        );
        assert!(m.env.is_empty() && m.group_add.is_empty() && m.gpu_request.is_none());
        assert_eq!(m.security_opt, ["seccomp=unconfined"]);
        assert!(m.ipc_host);
        assert_eq!(m.gpus.len(), 1);
        assert!(m.gpus[0].contains("AMD Radeon RX 7900 GRE"), "{:?}", m.gpus);
        // The one GPU can be named; a GPU that is not there cannot.
        assert!(device_map(&f, Vendor::Amd, Some(0), &g, false, Security::Default).is_ok());
        assert!(device_map(&f, Vendor::Amd, Some(1), &g, false, Security::Default).is_err());
        // Strict swaps seccomp for the profile and keeps the mapping.
        let s = device_map(&f, Vendor::Amd, None, &g, false, Security::Strict).unwrap();
        assert_eq!(
            (s.devices, s.mounts, s.security_opt),
            (m.devices, m.mounts, vec![strict_security_opt()])
        );
    }

    #[test]
    fn a_wsl_host_without_a_library_is_one_line_naming_it() {
        let (mut f, g) = fixture("wsl2-rx7900gre");
        f.device_nodes
            .dxg_libs
            .retain(|l| l != crate::host::WSL_LIBHSA);
        let e = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap_err();
        assert!(
            e.starts_with("/opt/rocm/lib/libhsa-runtime64.so.1 is missing: install ROCm for WSL")
                && !e.contains('\n'),
            "{e}"
        );
        f.device_nodes.dxg_libs.clear();
        let e = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap_err();
        assert!(
            e.starts_with("/usr/lib/wsl/lib/libdxcore.so is missing"),
            "{e}"
        );
    }

    #[test]
    fn two_wsl_gpus_cannot_be_picked_apart_with_gpu() {
        let (mut f, g) = fixture("wsl2-rx7900gre");
        let mut second = f.gpus[0].clone();
        second.pci_address = crate::host::dxg_address(1);
        f.gpus.push(second);
        let all = device_map(&f, Vendor::Amd, None, &g, false, Security::Default).unwrap();
        assert_eq!((all.devices.len(), all.gpus.len()), (1, 2));
        let e = device_map(&f, Vendor::Amd, Some(1), &g, false, Security::Default).unwrap_err();
        assert!(e.contains("HIP_VISIBLE_DEVICES=1"), "{e}");
    }

    #[test]
    fn h100_gets_a_gpu_device_request() {
        let (f, g) = fixture("h100-x8-ubuntu2204");
        let m = device_map(&f, Vendor::Nvidia, None, &g, false, Security::Default).unwrap();
        let r = m.gpu_request.unwrap();
        assert_eq!((r.driver.as_str(), r.count), ("nvidia", Some(-1)));
        assert_eq!(r.capabilities, vec![vec!["gpu".to_string()]]);
        assert!(m.devices.is_empty() && m.group_add.is_empty());
        let one = device_map(&f, Vendor::Nvidia, Some(3), &g, false, Security::Default).unwrap();
        assert_eq!(one.gpu_request.unwrap().device_ids, ["3"]);
    }

    #[test]
    fn nvidia_cdi_when_the_daemon_and_etc_cdi_have_specs() {
        let (mut f, g) = fixture("h100-x8-ubuntu2204");
        f.container.cdi_specs = vec![crate::host::CdiSpec {
            path: "/etc/cdi/nvidia.yaml".into(),
            kind: Some("nvidia.com/gpu".into()),
        }];
        let m = device_map(&f, Vendor::Nvidia, None, &g, true, Security::Default).unwrap();
        let r = m.gpu_request.unwrap();
        assert_eq!(r.driver, "cdi");
        assert_eq!(r.device_ids, ["nvidia.com/gpu=all"]);
        let m = device_map(&f, Vendor::Nvidia, None, &g, false, Security::Default).unwrap();
        assert_eq!(m.gpu_request.unwrap().driver, "nvidia");
    }

    #[test]
    fn cpu_maps_nothing_and_wrong_vendor_is_refused() {
        let (f, g) = fixture("h100-x8-ubuntu2204");
        let m = device_map(&f, Vendor::Cpu, None, &g, false, Security::Default).unwrap();
        assert!(m.devices.is_empty() && m.gpu_request.is_none() && !m.ipc_host);
        assert!(device_map(&f, Vendor::Amd, None, &g, false, Security::Default).is_err());
        assert_eq!(f.vendor(), Vendor::Nvidia);
    }

    #[test]
    fn gids_are_read_as_numbers() {
        let g = "root:x:0:\nvideo:x:44:alice\nrender:x:110:alice\n";
        assert_eq!(video_render_gids(g), [44, 110]);
        assert_eq!(video_render_gids("video:x:44:\n"), [44]);
        assert_eq!(shm_size(Some(64 << 30)), 16 << 30);
        assert_eq!(shm_size(Some(1 << 30)), 1 << 30);
    }
}
