//! Containers: the Docker daemon answers (live), and it can hand GPUs to containers (runtime or CDI).

use super::{Context, Finding, Status};
use crate::engine::Unreachable;

const AREA: &str = "containers";

pub(super) fn check(cx: &Context) -> Vec<Finding> {
    vec![daemon(cx), gpu_runtime(cx)]
}

fn daemon(cx: &Context) -> Finding {
    const ID: &str = "docker.daemon";
    let Some(d) = cx.docker else {
        return Finding::new(ID, AREA, Status::Skip, "not checked under --sysroot (the daemon of the host running rocmenv is not the tree's)");
    };
    match &d.result {
        Ok(i) => Finding::new(
            ID,
            AREA,
            Status::Pass,
            format!(
                "{} {} answers at {} (API {})",
                i.product, i.version, d.endpoint, i.api_version
            ),
        ),
        Err(e) => {
            let installed = cx.facts.tools.get("docker").is_some_and(|t| t.is_some())
                || cx.facts.tools.get("podman").is_some_and(|t| t.is_some());
            let finding = Finding::new(
                ID,
                AREA,
                if installed {
                    Status::Fail
                } else {
                    Status::Warn
                },
                format!(
                    "{} at {}: {e}",
                    d.reason.unwrap_or(Unreachable::NoAnswer).headline(),
                    d.endpoint
                ),
            );
            // No socket and no engine installed: installing comes before starting.
            let nothing_there =
                d.reason == Some(Unreachable::NoSocket) || (d.reason.is_none() && d.fix.is_none());
            if !installed && nothing_there {
                return finding.fix(
                    "install Docker Engine (sudo apt install docker.io) to build and smoke-test images",
                );
            }
            // The engine's classification gives the one fix that applies (join the docker group, start the daemon,
            // fix the TLS files or the context); starting a daemon that runs would mislead.
            match &d.fix {
                Some(fix) => finding.fix(fix.clone()),
                None => finding.fix(Unreachable::NoAnswer.fix()),
            }
        }
    }
}

fn gpu_runtime(cx: &Context) -> Finding {
    const ID: &str = "docker.gpu-runtime";
    let cfg = &cx.facts.container;
    let mut runtimes = cfg.docker_runtimes.clone();
    let mut cdi_dirs = Vec::new();
    if let Some(Ok(i)) = cx.docker.map(|d| &d.result) {
        for r in &i.runtimes {
            if !runtimes.contains(r) {
                runtimes.push(r.clone());
            }
        }
        cdi_dirs = i.cdi_spec_dirs.clone();
    }
    let cdi: Vec<String> = cfg
        .cdi_specs
        .iter()
        .map(|s| {
            format!(
                "{} ({})",
                s.path,
                s.kind.as_deref().unwrap_or("kind unreadable")
            )
        })
        .collect();
    let has_nvidia = cx.facts.nvidia_gpus().next().is_some();
    let has_amd = cx.facts.amd_gpus().next().is_some();
    if !has_nvidia && !has_amd {
        return Finding::new(ID, AREA, Status::Skip, "no GPU to hand to containers");
    }
    if !has_nvidia && cx.facts.amd_gpus().all(crate::host::is_dxg) {
        // ROCm on WSL: no runtime to install; what counts is what `rocmenv run` maps (/dev/dxg and host libraries).
        return match crate::engine::dxg_mapping(cx.facts) {
            Ok(d) => Finding::new(
                ID,
                AREA,
                Status::Pass,
                format!(
                    "containers can get the AMD GPU through /dev/dxg and {}: rocmenv run passes {}",
                    d.via,
                    d.docker_flags()
                ),
            ),
            Err(e) => Finding::new(
                ID,
                AREA,
                Status::Fail,
                format!("a container cannot reach the AMD GPU under WSL2: {e}"),
            ),
        };
    }
    let mut parts = Vec::new();
    if !runtimes.is_empty() {
        parts.push(format!("runtimes: {}", runtimes.join(", ")));
    }
    if !cdi.is_empty() {
        parts.push(format!("CDI specs: {}", cdi.join(", ")));
    }
    if !cdi_dirs.is_empty() {
        parts.push(format!("CDI dirs: {}", cdi_dirs.join(", ")));
    }
    let known = parts.join("; ");
    if has_nvidia {
        let nv_cdi = cfg.cdi_specs.iter().any(|s| {
            s.kind
                .as_deref()
                .is_some_and(|k| k.starts_with("nvidia.com/"))
        });
        if runtimes.iter().any(|r| r == "nvidia") || nv_cdi {
            return Finding::new(
                ID,
                AREA,
                Status::Pass,
                format!("containers can get NVIDIA GPUs ({known})"),
            );
        }
        return Finding::new(ID, AREA, Status::Fail, "Docker has no nvidia runtime and no NVIDIA CDI spec: `--gpus` fails with `could not select device driver \"\" with capabilities: [[gpu]]`")
            .detail(if known.is_empty() { "nothing GPU-related in /etc/docker/daemon.json or /etc/cdi".to_string() } else { known })
            .fix("install nvidia-container-toolkit, then: sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker (or generate CDI: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml)");
    }
    let extra = if known.is_empty() {
        String::new()
    } else {
        format!(" ({known})")
    };
    Finding::new(ID, AREA, Status::Pass, format!("AMD GPUs need no container runtime: rocmenv passes /dev/kfd and /dev/dri/renderD* with the video and render groups{extra}"))
}
