//! The GPUs as the PCI bus, the KFD topology and DRM show them.

use crate::host::facts::*;
use crate::host::root::{HostRoot, ReadError, MAX_READ};
use crate::parse;
use crate::vendor::Vendor;
use std::cell::RefCell;

/// A sysfs value, or `None`; a value that exists but cannot be read (a FIFO, a loop, bad bytes) is kept in `seen`
/// so the probe can name it. Missing values are normal (NVIDIA cards have no `mem_info_vram_total`).
fn value(root: &HostRoot, path: &str, seen: &RefCell<Vec<ReadError>>) -> Option<String> {
    match root.read_value(path) {
        Ok(v) => Some(v),
        Err(e) => {
            if !e.is_missing() {
                seen.borrow_mut().push(e);
            }
            None
        }
    }
}

fn hex_id(root: &HostRoot, path: &str, seen: &RefCell<Vec<ReadError>>) -> Option<u16> {
    let v = value(root, path, seen)?;
    u16::from_str_radix(v.trim_start_matches("0x"), 16).ok()
}

/// `16.0 GT/s PCIe` → 16.0; `Unknown` → None.
pub(super) fn link_speed(text: &str) -> Option<f64> {
    let n: f64 = text.split_whitespace().next()?.parse().ok()?;
    (n.is_finite() && n > 0.0 && n < 1000.0).then_some(n)
}

pub(super) fn probe_pci(root: &HostRoot, f: &mut HostFacts) {
    let base = "/sys/bus/pci/devices";
    let devices = match root.list(base) {
        Ok(d) => d,
        Err(e) => {
            f.unavailable("pci", e.to_string());
            return;
        }
    };
    for bdf in devices {
        let seen = RefCell::new(Vec::new());
        probe_pci_device(root, f, base, &bdf, &seen);
        for e in seen.into_inner() {
            f.unavailable(format!("pci {bdf}"), e.to_string());
        }
    }
}

fn probe_pci_device(
    root: &HostRoot,
    f: &mut HostFacts,
    base: &str,
    bdf: &str,
    seen: &RefCell<Vec<ReadError>>,
) {
    let dir = format!("{base}/{bdf}");
    let Some((vendor, device_id, driver)) = identify(root, f, bdf, &dir, seen) else {
        return;
    };
    let read_u64 = |name: &str| {
        value(root, &format!("{dir}/{name}"), seen).and_then(|v| v.parse::<u64>().ok())
    };
    let numa_node = value(root, &format!("{dir}/numa_node"), seen)
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|n| *n >= 0 && *n < 4096);
    let speed =
        |name: &str| value(root, &format!("{dir}/{name}"), seen).and_then(|v| link_speed(&v));
    let width = |name: &str| {
        value(root, &format!("{dir}/{name}"), seen)
            .and_then(|v| v.parse::<u32>().ok())
            .filter(|w| *w > 0 && *w <= 32)
    };
    let pcie = PcieLink {
        current_speed_gts: speed("current_link_speed"),
        current_width: width("current_link_width"),
        max_speed_gts: speed("max_link_speed"),
        max_width: width("max_link_width"),
    };
    let pcie = (pcie.current_speed_gts.is_some() || pcie.current_width.is_some()).then_some(pcie);
    let mut gpu = Gpu {
        numa_node,
        pcie,
        driver,
        ..Gpu::new(vendor, bdf.to_string(), device_id)
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

/// What a PCI device's `uevent` says, in the kernel's format (`dev_uevent` in drivers/base/core.c writes
/// `DRIVER=amdgpu` for a bound device, `pci_uevent` in drivers/pci/pci-driver.c `PCI_CLASS=30000` and
/// `PCI_ID=1002:744C`; torvalds/linux@d5e8ff5f7b2a41d503914d4896ed3c6b3befe933): one read instead of `class`, `vendor`,
/// `device` and the `driver` link.
#[derive(Debug, PartialEq)]
struct Uevent {
    class: u32,
    vendor: u16,
    device: u16,
    driver: Option<String>,
}

fn parse_uevent(text: &str) -> Option<Uevent> {
    let (mut class, mut id, mut driver) = (None, None, None);
    for line in text.lines() {
        match line.split_once('=') {
            Some(("PCI_CLASS", v)) => class = u32::from_str_radix(v.trim(), 16).ok(),
            Some(("PCI_ID", v)) => {
                id = v.trim().split_once(':').and_then(|(a, b)| {
                    Some((
                        u16::from_str_radix(a, 16).ok()?,
                        u16::from_str_radix(b, 16).ok()?,
                    ))
                })
            }
            Some(("DRIVER", v)) if !v.trim().is_empty() => driver = Some(v.trim().to_string()),
            _ => {}
        }
    }
    let (vendor, device) = id?;
    Some(Uevent {
        class: class?,
        vendor,
        device,
        driver,
    })
}

/// A display controller (0x03xx: VGA, 3D, other) or processing accelerator (0x12xx: Instinct MI300) of a GPU
/// vendor: its vendor, device id and bound driver. From `uevent` where it is readable and whole, else (a host tree
/// recorded without it) from the separate files.
fn identify(
    root: &HostRoot,
    f: &mut HostFacts,
    bdf: &str,
    dir: &str,
    seen: &RefCell<Vec<ReadError>>,
) -> Option<(Vendor, String, Option<String>)> {
    let is_gpu_class = |class: u32| matches!(class >> 16, 0x03 | 0x12);
    let ev = value(root, &format!("{dir}/uevent"), seen).and_then(|t| parse_uevent(&t));
    if let Some(ev) = ev {
        if !is_gpu_class(ev.class) {
            return None;
        }
        let vendor = Vendor::from_pci(ev.vendor)?;
        return Some((vendor, format!("0x{:04x}", ev.device), ev.driver));
    }
    let class = value(root, &format!("{dir}/class"), seen)?;
    let class = u32::from_str_radix(class.trim_start_matches("0x"), 16).ok()?;
    if !is_gpu_class(class) {
        return None;
    }
    let vendor = hex_id(root, &format!("{dir}/vendor"), seen).and_then(Vendor::from_pci)?;
    let Some(device) = hex_id(root, &format!("{dir}/device"), seen) else {
        f.unavailable(format!("gpu {bdf}"), "its PCI device id cannot be read");
        return None;
    };
    let driver = match root.link_name(&format!("{dir}/driver")) {
        Ok(d) => Some(d),
        Err(e) => {
            if !e.is_missing() {
                seen.borrow_mut().push(e);
            }
            None
        }
    };
    Some((vendor, format!("0x{device:04x}"), driver))
}

pub(super) fn probe_kfd(root: &HostRoot, f: &mut HostFacts) {
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
        let Some(text) = read_kfd_node(root, f, n, &path) else {
            continue;
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
        let Some(idx) = kfd_gpu_index(f, n, &path, bdf, &node) else {
            continue;
        };
        let g = &mut f.gpus[idx];
        g.kfd_node = Some(n);
        g.gfx = gfx;
        g.gfx_source = g.gfx.as_ref().map(|_| "kfd".to_string());
        if render.is_some() {
            g.render_node = render;
        }
    }
}

/// The text of KFD node `n`'s properties file at `path`, or None (noted in `f`) when it cannot be read whole.
fn read_kfd_node(root: &HostRoot, f: &mut HostFacts, n: u32, path: &str) -> Option<String> {
    // Lenient on bytes: one junk line does not hide a GPU, but it is named.
    match root.read_head(path, MAX_READ) {
        Ok(h) if h.truncated => {
            f.unavailable(
                format!("kfd node {n}"),
                format!("{path}: is larger than 1 MiB: not read"),
            );
            None
        }
        Ok(h) => {
            if let Some(at) = h.not_utf8_at {
                f.unavailable(
                    format!("kfd node {n} text"),
                    format!("{path}: is not UTF-8 text (bad byte at offset {at}): lines that are not `name value` are skipped"),
                );
            }
            Some(h.text)
        }
        Err(e) => {
            f.unavailable(format!("kfd node {n}"), e.to_string());
            None
        }
    }
}

/// The index in `f.gpus` of the GPU KFD node `n` describes, added when PCI did not list it; None for no GPU.
fn kfd_gpu_index(
    f: &mut HostFacts,
    n: u32,
    path: &str,
    bdf: Option<String>,
    node: &parse::kfd::KfdNode,
) -> Option<usize> {
    let existing = bdf
        .as_ref()
        .and_then(|b| f.gpus.iter_mut().position(|g| &g.pci_address == b));
    match existing {
        Some(i) => Some(i),
        None => {
            let vendor_ok = node.vendor_id() == Some(0x1002);
            let (Some(b), true) = (bdf.clone(), vendor_ok) else {
                if bdf.is_none() {
                    f.unavailable(
                        format!("kfd node {n}"),
                        format!("{path}: a GPU node with no location_id matches no PCI device (is the file cut short?)"),
                    );
                }
                return None;
            };
            f.gpus.push(Gpu::new(
                Vendor::Amd,
                b,
                node.device_id()
                    .map(|d| format!("0x{d:04x}"))
                    .unwrap_or_default(),
            ));
            Some(f.gpus.len() - 1)
        }
    }
}

/// Orders `f.gpus` and numbers each within its vendor, the way the runtimes do, so doctor's table, `run --gpu`,
/// `env --device` and every message use one numbering.
///
/// AMD: ROCr registers a GPU agent per KFD topology node, walking nodes from 0 up
/// (`ROCm/ROCR-Runtime@291bd2aae7f0077bd0fee9afd6d5ec02605c1ccb:src/core/runtime/amd_topology.cpp`, `BuildTopology`),
/// and HIP numbers its devices, and `HIP_VISIBLE_DEVICES` / `ROCR_VISIBLE_DEVICES` count, in that agent order
/// (https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html). A GPU without a KFD node (amdgpu not
/// loaded, a tree without KFD) follows them in PCI order: a guess, since the runtime sees none of them.
/// NVIDIA: PCI bus order, as NVML, `nvidia-smi`, the container toolkit's `NVIDIA_VISIBLE_DEVICES` and
/// `CUDA_DEVICE_ORDER=PCI_BUS_ID` count; CUDA's default `FASTEST_FIRST` may differ
/// (https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables).
pub(super) fn number_gpus(f: &mut HostFacts) {
    f.gpus.sort_by(|a, b| {
        let key = |g: &Gpu| {
            (
                g.vendor != Vendor::Amd,
                if g.vendor == Vendor::Amd {
                    g.kfd_node.unwrap_or(u32::MAX)
                } else {
                    0
                },
                g.pci_address.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    let (mut amd, mut nvidia) = (0, 0);
    for g in &mut f.gpus {
        let next = if g.vendor == Vendor::Amd {
            &mut amd
        } else {
            &mut nvidia
        };
        g.index = *next;
        *next += 1;
    }
}

pub(super) fn probe_drm(root: &HostRoot, f: &mut HostFacts) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uevent_gives_class_ids_and_driver() {
        let text = "DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\nPCI_SUBSYS_ID=10DE:16C1\nPCI_SLOT_NAME=0000:18:00.0\nMODALIAS=pci:v000010DEd00002330sv000010DEsd000016C1bc03sc02i00\n";
        assert_eq!(
            parse_uevent(text),
            Some(Uevent {
                class: 0x030200,
                vendor: 0x10de,
                device: 0x2330,
                driver: Some("nvidia".into())
            })
        );
        let unbound = parse_uevent("PCI_CLASS=120000\nPCI_ID=1002:74A1\n").unwrap();
        assert_eq!((unbound.class, unbound.driver), (0x120000, None));
        // Not whole, or not the kernel's format: the separate files decide.
        for bad in [
            "",
            "PCI_CLASS=30000\n",
            "PCI_ID=1002:744C\n",
            "PCI_CLASS=x\nPCI_ID=1002:744C\n",
            "PCI_CLASS=30000\nPCI_ID=1002\n",
        ] {
            assert_eq!(parse_uevent(bad), None, "{bad:?}");
        }
    }
}
