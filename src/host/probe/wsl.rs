//! WSL 2: the GPUs are on no PCI bus Linux can see. The Windows driver shows them through `/dev/dxg`, and only the
//! vendors' own tools name them: NVIDIA's `nvidia-smi` (in `/usr/lib/wsl/lib`, put there by the Windows driver) and
//! AMD's `rocminfo` (ROCm on WSL). Both are read here, without `--deep`, because on WSL nothing else names a GPU.
//! Where rocminfo names no AMD GPU, the HIP runtime is asked: it is what PyTorch reports on WSL, and it may name a GPU
//! that rocminfo does not (a tree whose rocminfo capture failed, but whose PyTorch saw the card).

use super::deep::{nvidia_smi_summary, pci_address_of_bus_id, rocminfo_error_text};
use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::host::session::{Session, ToolRun};
use crate::parse;
use crate::vendor::Vendor;

/// Where WSL puts the Windows NVIDIA driver's `nvidia-smi` (WSL adds the directory to `PATH`).
pub const WSL_NVIDIA_SMI: &str = "/usr/lib/wsl/lib/nvidia-smi";

/// The address a GPU reached only through `/dev/dxg` gets: `dxg:0`, `dxg:1`, … (it has no PCI address in Linux).
pub fn dxg_address(n: usize) -> String {
    format!("dxg:{n}")
}

/// True for a GPU found through WSL's `/dev/dxg` rather than on the PCI bus.
pub fn is_dxg(g: &Gpu) -> bool {
    g.driver.as_deref() == Some("dxg")
}

/// Finds the GPUs WSL exposes, once the PCI probe found none: NVIDIA's from `nvidia-smi`, AMD's from `rocminfo`.
pub(super) fn probe_wsl_gpus(root: &HostRoot, session: &dyn Session, f: &mut HostFacts) {
    if !f.wsl || !f.gpus.is_empty() {
        return;
    }
    wsl_nvidia(root, session, f);
    wsl_amd(session, f);
    if !f.gpus.iter().any(|g| g.vendor == Vendor::Amd) && wants_rocm(f) {
        wsl_hip(session, f);
    }
}

/// True when an AMD GPU could be there: ROCm is installed, or rocminfo ran.
fn wants_rocm(f: &HostFacts) -> bool {
    !f.rocm_installs.is_empty() || f.evidence.rocminfo.is_some()
}

/// The GPUs the HIP runtime lists, named as HIP names them (`AMD Radeon RX 6800 XT`); their gfx target comes later,
/// from gpus.yaml by that name (`inventory`).
fn wsl_hip(session: &dyn Session, f: &mut HostFacts) {
    let seen = match session.hip_devices() {
        Ok(h) => h,
        Err(why) => {
            f.unavailable("wsl hip", why);
            return;
        }
    };
    let first = f.gpus.len();
    for (n, d) in seen.devices.iter().enumerate() {
        let address = d
            .pci_bus_id
            .as_deref()
            .and_then(pci_address_of_bus_id)
            .unwrap_or_else(|| dxg_address(first + n));
        let mut g = dxg_gpu(Vendor::Amd, address, "unknown".into());
        g.name = d.name.clone().filter(|m| !m.trim().is_empty());
        g.vram_bytes = d.memory_total;
        f.gpus.push(g);
    }
    f.evidence.hip = Some(seen);
}

fn wsl_nvidia(root: &HostRoot, session: &dyn Session, f: &mut HostFacts) {
    let path = if root.exists(WSL_NVIDIA_SMI) {
        Some(WSL_NVIDIA_SMI.to_string())
    } else {
        f.tools.get("nvidia-smi").cloned().flatten()
    };
    let Some(path) = path else {
        return;
    };
    let (text, outcome) = match session.run_tool("nvidia-smi", Some(&path)) {
        ToolRun::Output { text, outcome } => (text, outcome),
        ToolRun::NotRun(why) => {
            f.unavailable("wsl nvidia-smi", why);
            return;
        }
    };
    let table = parse::nvidia_smi::parse_nvidia_smi(&text);
    let (devices, errors) = nvidia_smi_summary(&text, &table);
    // The driver nvidia-smi names under WSL is the Windows one (`546.33`), which CUDA's Windows column judges.
    if let Some(version) = table.driver_version.clone() {
        f.nvidia_driver = Some(NvidiaDriver {
            version,
            open: false,
            from_windows: true,
        });
    }
    for (n, row) in table.gpus.iter().enumerate() {
        let address = row
            .bus_id
            .as_deref()
            .and_then(pci_address_of_bus_id)
            .unwrap_or_else(|| dxg_address(n));
        let mut g = dxg_gpu(Vendor::Nvidia, address, "unknown".into());
        g.name = Some(row.name.clone());
        g.vram_bytes = row.memory_total_mib.and_then(|m| m.checked_mul(1 << 20));
        f.gpus.push(g);
    }
    f.evidence.nvidia_smi = Some(ToolEvidence {
        devices,
        errors,
        outcome,
    });
}

fn wsl_amd(session: &dyn Session, f: &mut HostFacts) {
    let Some(path) = f.tools.get("rocminfo").cloned().flatten() else {
        return;
    };
    let (text, outcome) = match session.run_tool("rocminfo", Some(&path)) {
        ToolRun::Output { text, outcome } => (text, outcome),
        ToolRun::NotRun(why) => {
            f.unavailable("wsl rocminfo", why);
            return;
        }
    };
    let r = parse::rocminfo::parse_rocminfo(&text);
    let first = f.gpus.len();
    for (n, a) in r.info.gpus().enumerate() {
        let device_id = a
            .chip_id
            .map(|c| format!("0x{c:04x}"))
            .unwrap_or_else(|| "unknown".into());
        let mut g = dxg_gpu(Vendor::Amd, dxg_address(first + n), device_id);
        g.name = a.marketing_name.clone().filter(|m| !m.trim().is_empty());
        g.gfx = a.gfx;
        g.gfx_source = a.gfx.map(|_| "rocminfo".to_string());
        f.gpus.push(g);
    }
    f.evidence.rocminfo = Some(ToolEvidence {
        devices: r
            .info
            .gpus()
            .map(|a| {
                a.gfx
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| a.name.clone())
            })
            .collect(),
        errors: r.errors.iter().filter_map(rocminfo_error_text).collect(),
        outcome,
    });
}

fn dxg_gpu(vendor: Vendor, pci_address: String, device_id: String) -> Gpu {
    Gpu {
        driver: Some("dxg".into()),
        ..Gpu::new(vendor, pci_address, device_id)
    }
}
