//! Reads a host through a `HostRoot` and a `Session` into `HostFacts`. Never aborts: what cannot be read is recorded.

use super::facts::*;
use super::root::HostRoot;
use super::session::{Session, ToolRun};
use crate::gfx::GfxTarget;
use crate::parse;
use crate::vendor::Vendor;
use std::collections::BTreeMap;

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

const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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
    let env = session.env();
    probe_kernel(root, &mut f);
    probe_os(root, &mut f);
    probe_pci(root, &mut f);
    probe_kfd(root, &mut f);
    probe_drm(root, &mut f);
    probe_amdgpu(root, &mut f);
    probe_nvidia(root, &mut f);
    probe_rocm(root, &mut f);
    probe_cuda(root, &mut f);
    probe_user(root, session, &mut f);
    probe_nodes(root, session, &mut f);
    probe_tools(root, &env, &mut f);
    probe_system(root, &mut f);
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
        || root.exists("/dev/dxg");
    probe_container_config(root, &mut f);
    if opts.deep {
        probe_tools_output(session, &mut f);
    }
    f
}

fn probe_kernel(root: &HostRoot, f: &mut HostFacts) {
    let release = match root.read_value("/proc/sys/kernel/osrelease") {
        Ok(r) => Ok(r),
        Err(e) => root
            .read_text("/proc/version")
            .ok()
            .and_then(|v| parse::kernel::kernel_release_from_proc_version(&v))
            .ok_or(e),
    };
    match release {
        Ok(r) => match parse::kernel::parse_kernel_release(&r) {
            Ok(k) => {
                f.kernel = Some(KernelFacts {
                    series: k.series(),
                    version: k.version.to_string(),
                    flavour: k.flavour.clone(),
                    release: k.release.clone(),
                })
            }
            Err(e) => f.unavailable("kernel", e.to_string()),
        },
        Err(e) => f.unavailable("kernel", e.to_string()),
    }
}

fn probe_os(root: &HostRoot, f: &mut HostFacts) {
    let text = match root.read_text("/etc/os-release") {
        Err(e) if e.is_missing() => root.read_text("/usr/lib/os-release").map_err(|_| e),
        other => other,
    };
    match text {
        Ok(t) => {
            let os = parse::os_release::parse_os_release(&t);
            if os.id.is_none() {
                f.unavailable("os", "/etc/os-release has no ID");
            } else {
                f.os = Some(OsFacts {
                    point_release: os.point_release(),
                    id: os.id.clone(),
                    id_like: os.id_like.clone(),
                    version_id: os.version_id.clone(),
                    pretty_name: os.pretty_name.clone(),
                    codename: os.version_codename.clone(),
                    ubuntu_codename: os.ubuntu_codename.clone(),
                });
            }
        }
        Err(e) => f.unavailable("os", format!("{e} (nor /usr/lib/os-release)")),
    }
}

fn hex_id(root: &HostRoot, path: &str) -> Option<u16> {
    let v = root.read_value(path).ok()?;
    u16::from_str_radix(v.trim_start_matches("0x"), 16).ok()
}

/// `16.0 GT/s PCIe` → 16.0; `Unknown` → None.
fn link_speed(text: &str) -> Option<f64> {
    let n: f64 = text.split_whitespace().next()?.parse().ok()?;
    (n.is_finite() && n > 0.0 && n < 1000.0).then_some(n)
}

fn probe_pci(root: &HostRoot, f: &mut HostFacts) {
    let base = "/sys/bus/pci/devices";
    let devices = match root.list(base) {
        Ok(d) => d,
        Err(e) => {
            f.unavailable("pci", e.to_string());
            return;
        }
    };
    for bdf in devices {
        let dir = format!("{base}/{bdf}");
        let Some(class) = root.read_value(&format!("{dir}/class")).ok() else {
            continue;
        };
        // Display controllers (0x03xx: VGA, 3D, other) and processing accelerators (0x12xx: Instinct MI300).
        let class = class.trim_start_matches("0x");
        if !(class.starts_with("03") || class.starts_with("12")) {
            continue;
        }
        let Some(vendor) = hex_id(root, &format!("{dir}/vendor")).and_then(Vendor::from_pci) else {
            continue;
        };
        let device_id = match hex_id(root, &format!("{dir}/device")) {
            Some(d) => format!("0x{d:04x}"),
            None => {
                f.unavailable(format!("gpu {bdf}"), "its PCI device id cannot be read");
                continue;
            }
        };
        let read_u64 = |name: &str| {
            root.read_value(&format!("{dir}/{name}"))
                .ok()
                .and_then(|v| v.parse::<u64>().ok())
        };
        let numa_node = root
            .read_value(&format!("{dir}/numa_node"))
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|n| *n >= 0 && *n < 4096);
        let speed = |name: &str| {
            root.read_value(&format!("{dir}/{name}"))
                .ok()
                .and_then(|v| link_speed(&v))
        };
        let width = |name: &str| {
            root.read_value(&format!("{dir}/{name}"))
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .filter(|w| *w > 0 && *w <= 32)
        };
        let pcie = PcieLink {
            current_speed_gts: speed("current_link_speed"),
            current_width: width("current_link_width"),
            max_speed_gts: speed("max_link_speed"),
            max_width: width("max_link_width"),
        };
        let pcie =
            (pcie.current_speed_gts.is_some() || pcie.current_width.is_some()).then_some(pcie);
        let driver = root.link_name(&format!("{dir}/driver")).ok();
        let mut gpu = Gpu {
            vendor,
            pci_address: bdf.clone(),
            device_id,
            name: None,
            gfx: None,
            gfx_source: None,
            compute_capability: None,
            vram_bytes: None,
            render_node: None,
            kfd_node: None,
            integrated: None,
            numa_node,
            pcie,
            driver,
        };
        if vendor == Vendor::Amd {
            gpu.vram_bytes = read_u64("mem_info_vram_total");
            let discrete_marker = root.exists(&format!("{dir}/mem_info_vram_vendor"))
                || root.exists(&format!("{dir}/board_info"));
            let gtt = read_u64("mem_info_gtt_total");
            gpu.integrated = if discrete_marker {
                Some(false)
            } else {
                match (gpu.vram_bytes, gtt) {
                    // ollama's heuristic: a small carve-out with a large GTT is an APU.
                    (Some(v), Some(g)) => Some(v <= 4 << 30 && g >= 8 << 30 && g >= 4 * v),
                    _ => None,
                }
            };
        }
        f.gpus.push(gpu);
    }
}

fn probe_kfd(root: &HostRoot, f: &mut HostFacts) {
    let base = "/sys/class/kfd/kfd/topology/nodes";
    let mut nodes: Vec<u32> = match root.list(base) {
        Ok(n) => n.iter().filter_map(|s| s.parse().ok()).collect(),
        Err(e) => {
            if f.amd_gpus().next().is_some() {
                f.unavailable("kfd", e.to_string());
            }
            return;
        }
    };
    nodes.sort();
    for n in nodes {
        let path = format!("{base}/{n}/properties");
        let text = match root.read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                f.unavailable(format!("kfd node {n}"), e.to_string());
                continue;
            }
        };
        let node = parse::kfd::parse_kfd_properties(&text);
        if node.is_cpu() {
            continue;
        }
        let bdf = node.bdf();
        let gfx = match node.gfx() {
            Ok(g) => g,
            Err(e) => {
                f.unavailable(format!("kfd node {n} gfx"), e.to_string());
                None
            }
        };
        let render = node
            .drm_render_minor()
            .filter(|m| *m >= 128 && *m < 1024)
            .map(|m| format!("/dev/dri/renderD{m}"));
        let existing = bdf
            .as_ref()
            .and_then(|b| f.gpus.iter_mut().position(|g| &g.pci_address == b));
        let idx = match existing {
            Some(i) => i,
            None => {
                let vendor_ok = node.vendor_id() == Some(0x1002);
                let (Some(b), true) = (bdf.clone(), vendor_ok) else {
                    continue;
                };
                f.gpus.push(Gpu {
                    vendor: Vendor::Amd,
                    pci_address: b,
                    device_id: node
                        .device_id()
                        .map(|d| format!("0x{d:04x}"))
                        .unwrap_or_default(),
                    name: None,
                    gfx: None,
                    gfx_source: None,
                    compute_capability: None,
                    vram_bytes: None,
                    render_node: None,
                    kfd_node: None,
                    integrated: None,
                    numa_node: None,
                    pcie: None,
                    driver: None,
                });
                f.gpus.len() - 1
            }
        };
        let g = &mut f.gpus[idx];
        g.kfd_node = Some(n);
        g.gfx = gfx.map(|t| t.to_string());
        g.gfx_source = g.gfx.as_ref().map(|_| "kfd".to_string());
        if render.is_some() {
            g.render_node = render;
        }
    }
    f.gpus.sort_by(|a, b| a.pci_address.cmp(&b.pci_address));
}

fn probe_drm(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/sys/class/drm") else {
        return;
    };
    for name in names.iter().filter(|n| n.starts_with("renderD")) {
        let Ok(bdf) = root.link_name(&format!("/sys/class/drm/{name}/device")) else {
            continue;
        };
        if let Some(g) = f
            .gpus
            .iter_mut()
            .find(|g| g.pci_address == bdf && g.render_node.is_none())
        {
            g.render_node = Some(format!("/dev/dri/{name}"));
        }
    }
}

fn probe_amdgpu(root: &HostRoot, f: &mut HostFacts) {
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

fn probe_nvidia(root: &HostRoot, f: &mut HostFacts) {
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

fn probe_rocm(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/opt") else { return };
    let linked = root.link_name("/opt/rocm").ok();
    for name in names.iter().filter(|n| n.starts_with("rocm")) {
        let dir = format!("/opt/{name}");
        // /opt/rocm is usually a link to /opt/rocm-X.Y.Z: count the install once.
        if name == "rocm" && linked.is_some() {
            continue;
        }
        match root.read_value(&format!("{dir}/.info/version")) {
            Ok(v) => {
                let ver = v.split(['-', '\n']).next().unwrap_or("").trim().to_string();
                if ver.parse::<crate::version::Version>().is_ok() {
                    f.rocm_installs.push(RocmInstall {
                        version: ver,
                        path: dir,
                    });
                } else {
                    f.unavailable(
                        format!("rocm {dir}"),
                        format!(
                            "{dir}/.info/version holds `{}`, not a version",
                            v.chars().take(40).collect::<String>()
                        ),
                    );
                }
            }
            Err(e) if root.path(&dir).is_dir() => {
                f.unavailable(format!("rocm {dir}"), e.to_string())
            }
            Err(_) => {}
        }
    }
    f.rocm_installs
        .sort_by_key(|r| r.version.parse::<crate::version::Version>().ok());
    f.rocm = match &linked {
        Some(target) => f
            .rocm_installs
            .iter()
            .find(|r| r.path == format!("/opt/{target}"))
            .cloned(),
        None => f.rocm_installs.last().cloned(),
    };
}

fn probe_cuda(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/usr/local") else {
        return;
    };
    let linked = root.link_name("/usr/local/cuda").ok();
    for name in names.iter().filter(|n| n.starts_with("cuda")) {
        if name == "cuda" && linked.is_some() {
            continue;
        }
        let dir = format!("/usr/local/{name}");
        let version = root
            .read_text(&format!("{dir}/version.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| {
                v.pointer("/cuda/version")
                    .and_then(|s| s.as_str())
                    .map(str::to_string)
            })
            .or_else(|| {
                root.read_value(&format!("{dir}/version.txt"))
                    .ok()
                    .and_then(|t| {
                        t.strip_prefix("CUDA Version ")
                            .map(|s| s.trim().to_string())
                    })
            });
        match version {
            Some(v)
                if crate::version::parse_with_parts(&v).is_ok() || v.split('.').count() == 4 =>
            {
                f.cuda_installs.push(CudaInstall {
                    version: v,
                    path: dir,
                })
            }
            _ if root.path(&dir).is_dir() => f.unavailable(
                format!("cuda {dir}"),
                "no readable version.json or version.txt",
            ),
            _ => {}
        }
    }
    f.cuda = match &linked {
        Some(t) => f
            .cuda_installs
            .iter()
            .find(|c| c.path == format!("/usr/local/{t}"))
            .cloned(),
        None => f.cuda_installs.last().cloned(),
    };
}

/// `/etc/group` as (name, gid, members).
fn read_groups(root: &HostRoot) -> Vec<(String, u32, Vec<String>)> {
    let Ok(text) = root.read_text("/etc/group") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut it = l.split(':');
            let name = it.next()?.to_string();
            let _pw = it.next()?;
            let gid = it.next()?.parse().ok()?;
            let members = it
                .next()
                .unwrap_or("")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            Some((name, gid, members))
        })
        .collect()
}

fn probe_user(root: &HostRoot, session: &dyn Session, f: &mut HostFacts) {
    let Some(id) = session.identity() else {
        f.unavailable(
            "user",
            format!("who runs rocmenv is {}", session.describe()),
        );
        return;
    };
    let groups = read_groups(root);
    let name = id.name.clone().or_else(|| {
        root.read_text("/etc/passwd").ok().and_then(|t| {
            t.lines().find_map(|l| {
                let p: Vec<&str> = l.split(':').collect();
                (p.len() > 2 && p[2].parse::<u32>().ok() == Some(id.uid)).then(|| p[0].to_string())
            })
        })
    });
    let mut gids = vec![id.gid];
    match &id.supplementary {
        Some(s) => gids.extend(s.iter().copied()),
        None => {
            if let Some(n) = &name {
                gids.extend(
                    groups
                        .iter()
                        .filter(|(_, _, mem)| mem.contains(n))
                        .map(|(_, g, _)| *g),
                );
            }
        }
    }
    gids.sort();
    gids.dedup();
    let names = gids
        .iter()
        .map(|g| {
            groups
                .iter()
                .find(|(_, gid, _)| gid == g)
                .map(|(n, _, _)| n.clone())
                .unwrap_or_else(|| g.to_string())
        })
        .collect();
    f.user = Some(UserFacts {
        name,
        uid: id.uid,
        gids,
        groups: names,
    });
}

fn node(
    root: &HostRoot,
    session: &dyn Session,
    path: &str,
    user: Option<&UserFacts>,
    groups: &[(String, u32, Vec<String>)],
) -> Option<DeviceNode> {
    if !root.exists(path) {
        return None;
    }
    let live_path = root.path(path);
    let meta = session.node_meta(if root.is_live() {
        live_path.to_str().unwrap_or(path)
    } else {
        path
    });
    let accessible = match (meta, user) {
        (_, Some(u)) if u.uid == 0 => Some(true),
        (Some(m), Some(u)) => {
            let bits = if m.uid == u.uid {
                m.mode >> 6
            } else if u.gids.contains(&m.gid) {
                m.mode >> 3
            } else {
                m.mode
            };
            Some(bits & 0o6 == 0o6)
        }
        _ => None,
    };
    Some(DeviceNode {
        path: path.to_string(),
        mode: meta.map(|m| format!("{:04o}", m.mode)),
        gid: meta.map(|m| m.gid),
        group: meta.and_then(|m| {
            groups
                .iter()
                .find(|(_, g, _)| *g == m.gid)
                .map(|(n, _, _)| n.clone())
        }),
        accessible,
    })
}

fn probe_nodes(root: &HostRoot, session: &dyn Session, f: &mut HostFacts) {
    let groups = read_groups(root);
    let user = f.user.clone();
    f.device_nodes.kfd = node(root, session, "/dev/kfd", user.as_ref(), &groups);
    if let Ok(names) = root.list("/dev/dri") {
        for n in names.iter().filter(|n| n.starts_with("renderD")) {
            if let Some(d) = node(
                root,
                session,
                &format!("/dev/dri/{n}"),
                user.as_ref(),
                &groups,
            ) {
                f.device_nodes.render.push(d);
            }
        }
    }
    if let Ok(names) = root.list("/dev") {
        for n in names.iter().filter(|n| {
            *n == "nvidiactl"
                || (n.starts_with("nvidia")
                    && n[6..].bytes().all(|b| b.is_ascii_digit())
                    && n.len() > 6)
        }) {
            if let Some(d) = node(root, session, &format!("/dev/{n}"), user.as_ref(), &groups) {
                f.device_nodes.nvidia.push(d);
            }
        }
    }
    f.device_nodes.dxg = root.exists("/dev/dxg");
}

fn probe_tools(root: &HostRoot, env: &BTreeMap<String, String>, f: &mut HostFacts) {
    let path = env.get("PATH").map(String::as_str).unwrap_or(DEFAULT_PATH);
    // The tree's PATH, mapped into the tree: `/usr/bin` in a sysroot is `<tree>/usr/bin`. Relative entries are
    // skipped: they depend on a working directory the host's processes had, not rocmenv's.
    let dirs: Vec<std::path::PathBuf> = path
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(|d| root.dir().join(d.trim_start_matches('/')))
        .collect();
    let search = std::env::join_paths(&dirs).ok();
    for tool in TOOLS {
        let found = search.as_ref().and_then(|p| {
            let file = which::which_in(tool, Some(p), root.dir()).ok()?;
            let inside = file.strip_prefix(root.dir()).ok()?;
            Some(format!("/{}", inside.display()))
        });
        f.tools.insert(tool.to_string(), found);
    }
}

fn probe_system(root: &HostRoot, f: &mut HostFacts) {
    if root.is_live() {
        let mut sys = sysinfo::System::new();
        sys.refresh_memory();
        sys.refresh_cpu_list(sysinfo::CpuRefreshKind::nothing());
        f.memory_bytes = Some(sys.total_memory()).filter(|m| *m > 0);
        f.cpu = Some(CpuFacts {
            model: sys
                .cpus()
                .first()
                .map(|c| c.brand().trim().to_string())
                .filter(|s| !s.is_empty()),
            logical_cores: sys.cpus().len(),
        });
        return;
    }
    match root.read_text("/proc/meminfo") {
        Ok(t) => {
            f.memory_bytes = t.lines().find_map(|l| {
                let rest = l.strip_prefix("MemTotal:")?;
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                kb.checked_mul(1024)
            })
        }
        Err(e) => f.unavailable("memory", e.to_string()),
    }
    match root.read_text("/proc/cpuinfo") {
        Ok(t) => {
            let cores = t.lines().filter(|l| l.starts_with("processor")).count();
            let model = t.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_string())
            });
            f.cpu = Some(CpuFacts {
                model,
                logical_cores: cores,
            });
        }
        Err(e) => f.unavailable("cpu", e.to_string()),
    }
}

fn probe_container_config(root: &HostRoot, f: &mut HostFacts) {
    if let Ok(t) = root.read_text("/etc/docker/daemon.json") {
        match serde_json::from_str::<serde_json::Value>(&t) {
            Ok(v) => {
                if let Some(r) = v.get("runtimes").and_then(|r| r.as_object()) {
                    f.container.docker_runtimes = r.keys().cloned().collect();
                }
                f.container.docker_default_runtime = v
                    .get("default-runtime")
                    .and_then(|s| s.as_str())
                    .map(str::to_string);
            }
            Err(e) => f.unavailable(
                "docker daemon.json",
                format!("/etc/docker/daemon.json is not JSON: {e}"),
            ),
        }
    }
    for dir in ["/etc/cdi", "/var/run/cdi"] {
        let Ok(names) = root.list(dir) else { continue };
        for n in names
            .iter()
            .filter(|n| n.ends_with(".yaml") || n.ends_with(".json"))
        {
            let path = format!("{dir}/{n}");
            let kind = root.read_text(&path).ok().and_then(|t| cdi_kind(&t));
            f.container.cdi_specs.push(CdiSpec { path, kind });
        }
    }
}

/// The `kind` of a CDI spec, YAML or JSON (JSON is YAML).
fn cdi_kind(text: &str) -> Option<String> {
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(text).ok()?;
    v.get("kind")?.as_str().map(str::to_string)
}

fn probe_tools_output(session: &dyn Session, f: &mut HostFacts) {
    let path_of = |f: &HostFacts, t: &str| f.tools.get(t).cloned().flatten();
    let rocminfo_path = path_of(f, "rocminfo");
    if rocminfo_path.is_some() || f.amd_gpus().next().is_some() {
        let run = session.run_tool("rocminfo", rocminfo_path.as_deref());
        f.evidence.rocminfo = Some(match run {
            ToolRun::Output { text, outcome } => {
                let r = parse::rocminfo::parse_rocminfo(&text);
                ToolEvidence {
                    devices: r
                        .info
                        .gpus()
                        .map(|a| {
                            a.gfx
                                .map(|g: GfxTarget| g.to_string())
                                .unwrap_or_else(|| a.name.clone())
                        })
                        .collect(),
                    errors: r.errors.iter().filter_map(rocminfo_error_text).collect(),
                    outcome,
                }
            }
            ToolRun::NotRun(why) => ToolEvidence {
                devices: vec![],
                errors: vec![],
                outcome: ToolOutcome::NotRun(why),
            },
        });
    }
    if let Some(path) = path_of(f, "rocm-smi") {
        f.evidence.rocm_smi = Some(match session.run_tool("rocm-smi", Some(&path)) {
            ToolRun::Output { text, outcome } => {
                let rows = parse::rocm_smi::parse_rocm_smi_concise(&text);
                let errors = if rows.is_empty() && !outcome.succeeded() {
                    vec![text
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("no output")
                        .chars()
                        .take(200)
                        .collect()]
                } else {
                    vec![]
                };
                ToolEvidence {
                    devices: rows
                        .iter()
                        .map(|r| {
                            r.name
                                .clone()
                                .unwrap_or_else(|| format!("GPU[{}]", r.device))
                        })
                        .collect(),
                    errors,
                    outcome,
                }
            }
            ToolRun::NotRun(why) => ToolEvidence {
                devices: vec![],
                errors: vec![],
                outcome: ToolOutcome::NotRun(why),
            },
        });
    }
    let smi_path = path_of(f, "nvidia-smi");
    if smi_path.is_some() || f.nvidia_gpus().next().is_some() {
        let run = session.run_tool("nvidia-smi", smi_path.as_deref());
        f.evidence.nvidia_smi = Some(match run {
            ToolRun::Output { text, outcome } => {
                let table = parse::nvidia_smi::parse_nvidia_smi(&text);
                let (devices, errors) = nvidia_smi_summary(&text, &table);
                fill_nvidia_vram(f, &table);
                ToolEvidence {
                    devices,
                    errors,
                    outcome,
                }
            }
            ToolRun::NotRun(why) => ToolEvidence {
                devices: vec![],
                errors: vec![],
                outcome: ToolOutcome::NotRun(why),
            },
        });
    }
}

/// rocminfo's failures in rocmenv's words; `None` for notes that are not failures.
fn rocminfo_error_text(e: &parse::rocminfo::RocmInfoError) -> Option<String> {
    use parse::rocminfo::RocmInfoError as E;
    Some(match e {
        E::NotLoaded => "ROCk module is NOT loaded (amdgpu/KFD is not loaded)".into(),
        E::KfdPermissionDenied => "cannot open /dev/kfd: permission denied".into(),
        E::KfdMissing => "cannot open /dev/kfd: it does not exist".into(),
        E::NotInGroup { group } => format!("the user is not in the `{group}` group"),
        E::WslOutOfResources => "hsa_init failed with HSA_STATUS_ERROR_OUT_OF_RESOURCES (WSL2 without ROCm-on-WSL support)".into(),
        // Inside containers rocminfo's lsmod check fails on its own; not a driver problem.
        E::LsmodMissing => return None,
        E::Other(t) => t.chars().take(200).collect(),
    })
}

/// NVIDIA exposes no VRAM size in sysfs; nvidia-smi's table has it, matched to the GPU by PCI address.
fn fill_nvidia_vram(f: &mut HostFacts, table: &parse::nvidia_smi::NvidiaSmiSummary) {
    for row in &table.gpus {
        let (Some(bus), Some(mib)) = (&row.bus_id, row.memory_total_mib) else {
            continue;
        };
        let Some(address) = pci_address_of_bus_id(bus) else {
            continue;
        };
        for g in f.gpus.iter_mut() {
            if g.vendor == Vendor::Nvidia && g.pci_address == address && g.vram_bytes.is_none() {
                g.vram_bytes = mib.checked_mul(1 << 20);
            }
        }
    }
}

/// nvidia-smi's `00000000:17:00.0` (an 8-digit domain) → sysfs's `0000:17:00.0`.
fn pci_address_of_bus_id(bus: &str) -> Option<String> {
    let (domain, rest) = bus.trim().split_once(':')?;
    let domain = u32::from_str_radix(domain, 16).ok()?;
    Some(format!("{domain:04x}:{}", rest.to_ascii_lowercase()))
}

/// GPU names and errors from nvidia-smi's default output.
fn nvidia_smi_summary(
    text: &str,
    table: &parse::nvidia_smi::NvidiaSmiSummary,
) -> (Vec<String>, Vec<String>) {
    use parse::nvidia_smi::{nvidia_smi_error, NvidiaSmiError as E};
    let errors = match nvidia_smi_error(text) {
        Some(E::DriverLibraryMismatch { nvml_version }) => vec![format!(
            "NVML driver/library version mismatch{}",
            nvml_version
                .map(|v| format!(" (library {v})"))
                .unwrap_or_default()
        )],
        Some(E::CannotCommunicate) => {
            vec!["nvidia-smi couldn't communicate with the NVIDIA driver".into()]
        }
        Some(E::NotFound) => vec!["nvidia-smi is not installed".into()],
        Some(E::Other(t)) => vec![t.chars().take(200).collect()],
        None => vec![],
    };
    let devices = table.gpus.iter().map(|g| g.name.clone()).collect();
    (devices, errors)
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
}
