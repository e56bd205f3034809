//! The CDI specs' inputs from the host: each AMD GPU's card and render node (the card found by the PCI device its
//! sysfs entry links to), their numbers from sysfs, and their modes and groups from the facts; planned where a
//! container engine is on PATH.

use crate::fix::{
    plan_amd_cdi, plan_nvidia_cdi, Action, CdiGpu, CdiNode, AMD_CDI_PATH, NVIDIA_CDI_PATH,
};
use crate::host::{DeviceNode, HostFacts, HostRoot};

/// The CDI actions for the host, and what could not be planned.
pub(super) fn plan_cdi(
    root: &HostRoot,
    facts: &HostFacts,
    live: bool,
) -> (Vec<Action>, Vec<String>) {
    let mut actions = Vec::new();
    let mut notes = Vec::new();
    // Only a container engine reads a CDI spec: without one, a spec would be a file nothing uses.
    let engines = ["podman", "docker"];
    let engine = engines
        .iter()
        .any(|t| facts.tools.get(*t).is_some_and(Option::is_some));
    let gpus = facts.amd_gpus().next().is_some() || facts.nvidia_gpus().next().is_some();
    if gpus && !engine {
        notes.push(
            "cdi: no container engine (podman, docker) is on PATH, so no CDI spec is planned"
                .into(),
        );
        return (actions, notes);
    }
    if facts.amd_gpus().next().is_some() {
        match amd_inputs(root, facts, &mut notes) {
            Ok((gpus, kfd)) if !gpus.is_empty() => {
                let existing = root.read_text(AMD_CDI_PATH).ok();
                actions.extend(plan_amd_cdi(&gpus, &kfd, existing.as_deref()));
            }
            Ok(_) => {
                notes.push("cdi: AMD's spec is not planned: no AMD GPU has a render node".into())
            }
            Err(why) => notes.push(format!("cdi: AMD's spec is not planned: {why}")),
        }
    }
    if facts.nvidia_gpus().next().is_some() {
        let ctk = live
            .then(|| which::which("nvidia-ctk").ok())
            .flatten()
            .map(|p| p.display().to_string());
        match plan_nvidia_cdi(live, ctk.as_deref(), root.exists(NVIDIA_CDI_PATH)) {
            Ok(a) => actions.push(a),
            Err(why) => notes.push(why),
        }
    }
    (actions, notes)
}

/// The GPUs with a render node (amd-ctk lists only those; the others are named in `notes`) and `/dev/kfd`.
fn amd_inputs(
    root: &HostRoot,
    facts: &HostFacts,
    notes: &mut Vec<String>,
) -> Result<(Vec<CdiGpu>, CdiNode), String> {
    let kfd = facts
        .device_nodes
        .kfd
        .as_ref()
        .ok_or("there is no /dev/kfd (the amdgpu driver's compute interface)")?;
    let kfd = cdi_node(root, kfd, "/sys/class/kfd/kfd/dev");
    let drm = root.list("/sys/class/drm").unwrap_or_default();
    let mut gpus = Vec::new();
    for g in facts.amd_gpus() {
        let Some(render) = g.render_node.as_deref() else {
            notes.push(format!(
                "cdi: {} has no render node (driver {}), so AMD's spec leaves it out, as amd-ctk does",
                g.label(),
                g.driver.as_deref().unwrap_or("unknown")
            ));
            continue;
        };
        let card = drm.iter().find(|n| {
            n.strip_prefix("card")
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
                && root
                    .link_name(&format!("/sys/class/drm/{n}/device"))
                    .is_ok_and(|bdf| bdf == g.pci_address)
        });
        let mut nodes = Vec::new();
        for path in card
            .map(|c| format!("/dev/dri/{c}"))
            .iter()
            .map(String::as_str)
            .chain([render])
        {
            let known = facts
                .device_nodes
                .card
                .iter()
                .chain(&facts.device_nodes.render)
                .find(|n| n.path == path)
                .ok_or_else(|| format!("{path} of {} does not exist", g.label()))?;
            let name = path.trim_start_matches("/dev/dri/");
            nodes.push(cdi_node(root, known, &format!("/sys/class/drm/{name}/dev")));
        }
        gpus.push(CdiGpu {
            pci_address: g.pci_address.clone(),
            nodes,
        });
    }
    Ok((gpus, kfd))
}

/// `node` with its `major:minor` from `dev` (the sysfs file the kernel keeps for it), where the host has it.
fn cdi_node(root: &HostRoot, node: &DeviceNode, dev: &str) -> CdiNode {
    let numbers = root.read_text(dev).ok().and_then(|t| {
        let (a, b) = t.trim().split_once(':')?;
        Some((a.parse().ok()?, b.parse().ok()?))
    });
    CdiNode {
        path: node.path.clone(),
        numbers,
        mode: node
            .mode
            .as_deref()
            .and_then(|m| u32::from_str_radix(m, 8).ok()),
        gid: node.gid,
    }
}
