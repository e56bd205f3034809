//! Device nodes: `/dev/kfd` and the render nodes exist and this user can open them; NVIDIA nodes exist.

use super::{Context, Finding, Status};
use crate::host::DeviceNode;

const AREA: &str = "devices";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    vec![kfd(cx), render(cx), nvidia(cx)]
}

fn user_name(cx: &Context) -> String {
    cx.facts
        .user
        .as_ref()
        .and_then(|u| u.name.clone())
        .unwrap_or_else(|| "this user".into())
}

const GROUP_FIX: &str =
    "sudo usermod -aG render,video $USER, then log out and back in (or run `newgrp render`)";

fn access_finding(cx: &Context, id: &'static str, nodes: &[&DeviceNode], what: &str) -> Finding {
    let user = user_name(cx);
    let denied: Vec<&&DeviceNode> = nodes
        .iter()
        .filter(|n| n.accessible == Some(false))
        .collect();
    let unknown = nodes.iter().any(|n| n.accessible.is_none());
    let paths = nodes
        .iter()
        .map(|n| n.path.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    if !denied.is_empty() {
        let detail = denied
            .iter()
            .map(|n| {
                format!(
                    "{} is {} {}",
                    n.path,
                    n.mode.as_deref().unwrap_or("?"),
                    n.group
                        .clone()
                        .or(n.gid.map(|g| g.to_string()))
                        .map(|g| format!("group {g}"))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        let groups = cx
            .facts
            .user
            .as_ref()
            .map(|u| u.groups.join(", "))
            .unwrap_or_default();
        return Finding::new(
            id,
            AREA,
            Status::Fail,
            format!(
                "{user} cannot open {}",
                denied
                    .iter()
                    .map(|n| n.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .detail(format!(
            "{detail}; {user} is in: {groups}. {what} fails with `Permission denied`"
        ))
        .fix(GROUP_FIX);
    }
    if unknown {
        let why = if cx.facts.user.is_none() {
            "who runs rocmenv is unknown".to_string()
        } else {
            "their owners are unknown".to_string()
        };
        return Finding::new(
            id,
            AREA,
            Status::Warn,
            format!("{paths} exist; whether {user} can open them is not known ({why})"),
        );
    }
    Finding::new(
        id,
        AREA,
        Status::Pass,
        format!("{paths}: present and readable/writable by {user}"),
    )
}

fn kfd(cx: &Context) -> Finding {
    const ID: &str = "devices.kfd";
    if cx.facts.amd_gpus().next().is_none() {
        return Finding::new(ID, AREA, Status::Skip, "/dev/kfd: not needed, no AMD GPU");
    }
    match &cx.facts.device_nodes.kfd {
        None => Finding::new(ID, AREA, Status::Fail, "/dev/kfd does not exist")
            .detail("ROCm talks to the GPU through /dev/kfd, which the amdgpu driver creates; in a container it must be passed in")
            .fix("load amdgpu (see driver.amdgpu-loaded); in a container add `--device=/dev/kfd --device=/dev/dri --group-add video --group-add render`"),
        Some(n) => access_finding(cx, ID, &[n], "hipInit / rocminfo"),
    }
}

fn render(cx: &Context) -> Finding {
    const ID: &str = "devices.render";
    let amd: Vec<_> = cx.facts.amd_gpus().collect();
    if amd.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "render nodes: not needed, no AMD GPU",
        );
    }
    let mut missing = Vec::new();
    let mut nodes = Vec::new();
    for g in &amd {
        match &g.render_node {
            None => missing.push(format!("{} has no render node", g.pci_address)),
            Some(p) => match cx.facts.device_nodes.render.iter().find(|n| &n.path == p) {
                Some(n) => nodes.push(n),
                None => missing.push(format!("{p} (for {}) does not exist", g.pci_address)),
            },
        }
    }
    if !missing.is_empty() {
        return Finding::new(
            ID,
            AREA,
            Status::Fail,
            format!("render nodes missing: {}", missing.join("; ")),
        )
        .fix("load amdgpu (see driver.amdgpu-loaded); in a container pass `--device=/dev/dri`");
    }
    access_finding(cx, ID, &nodes, "GPU memory allocation")
}

fn nvidia(cx: &Context) -> Finding {
    const ID: &str = "devices.nvidia";
    if cx.facts.nvidia_gpus().next().is_none() {
        return Finding::new(
            ID,
            AREA,
            Status::Skip,
            "NVIDIA device nodes: not needed, no NVIDIA GPU",
        );
    }
    let nodes = &cx.facts.device_nodes.nvidia;
    if !nodes.iter().any(|n| n.path == "/dev/nvidiactl") {
        return Finding::new(ID, AREA, Status::Fail, "/dev/nvidiactl does not exist")
            .detail("the NVIDIA driver creates /dev/nvidiactl and /dev/nvidia<N> when it loads")
            .fix("load the driver (sudo modprobe nvidia) or run `sudo nvidia-modprobe -c 0 -u`");
    }
    let refs: Vec<&DeviceNode> = nodes.iter().collect();
    access_finding(cx, ID, &refs, "cuInit")
}
