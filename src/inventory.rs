//! The host as rocmenv knows it: what the probe read (`host`), joined with what the matrices know about the parts it
//! found (`matrix`): GPU names, gfx targets of cards without a loaded driver, compute capabilities. Neither `host` nor
//! `matrix` imports the other; this is where they meet.

use crate::host::{self, HostFacts, HostRoot, ProbeOptions, Session};
use crate::matrix::{Matrices, Vendor};

/// Probes the host and identifies its GPUs.
pub fn probe(
    root: &HostRoot,
    session: &dyn Session,
    m: &Matrices,
    opts: &ProbeOptions,
) -> HostFacts {
    let mut f = host::probe(root, session, opts);
    identify_gpus(m, &mut f);
    f
}

/// Opens and probes a host without running external tools (what `env`, `dockerfile` and `run` need).
pub fn read(
    sysroot: Option<&std::path::Path>,
    m: &Matrices,
) -> Result<HostFacts, crate::error::Error> {
    let (root, session) = host::open(
        sysroot,
        std::time::Duration::from_secs(10),
        Some(crate::runtime::hip_seen),
    )?;
    Ok(probe(&root, session.as_ref(), m, &ProbeOptions::default()))
}

/// Names each GPU from its PCI id, and for a GPU whose driver is not loaded, takes its gfx target from the model.
pub fn identify_gpus(m: &Matrices, f: &mut HostFacts) {
    for g in &mut f.gpus {
        if host::is_dxg(g) && g.gfx.is_none() && g.vendor == Vendor::Amd {
            identify_by_name(m, g);
        }
        let Some(model) = m.gpu_by_pci(g.vendor, &g.device_id) else {
            continue;
        };
        // Under WSL the tool that found the GPU named it (`AMD Radeon RX 7900 GRE`); a PCI id shared by several
        // models (0x744c: 7900 XTX, XT and GRE) would name it less well.
        if !(host::is_dxg(g) && g.name.is_some()) {
            g.name = Some(model.name.clone());
        }
        match g.vendor {
            Vendor::Nvidia => g.compute_capability = model.compute_capability.clone(),
            Vendor::Amd => {
                // The gfx of a card with no KFD node (driver not loaded) comes from its PCI id, marked as such.
                if g.kfd_node.is_none() && g.gfx.is_none() {
                    g.gfx = model.gfx;
                    g.gfx_source = g.gfx.as_ref().map(|_| "pci-id".to_string());
                }
                if g.integrated.is_none() {
                    g.integrated = Some(model.integrated);
                }
                if model.integrated {
                    g.integrated = Some(true);
                }
            }
            // A GPU's vendor comes from its PCI id (`Vendor::from_pci`), never the CPU.
            Vendor::Cpu => {}
        }
    }
}

/// A GPU that only the HIP runtime named (under WSL): its gfx target from the gpus.yaml model of that name, marked
/// as such. Its PCI id stays unknown: nothing read it.
fn identify_by_name(m: &Matrices, g: &mut host::Gpu) {
    let Some(model) = g.name.as_deref().and_then(|n| m.gpu_by_name(g.vendor, n)) else {
        return;
    };
    g.gfx = model.gfx;
    g.gfx_source = model.gfx.map(|_| "name".to_string());
    if g.integrated.is_none() {
        g.integrated = Some(model.integrated);
    }
}
