//! The `docker run` line equivalent to a `RunSpec`, for `rocmenv run --print` (people paste it into scripts).

use super::mount::{shell_word as word, Mount};
use super::run::RunSpec;

/// The file name `--print` gives the strict seccomp profile; the docs say where to get it.
pub const STRICT_PROFILE_FILE: &str = "rocm-strict.json";

/// `docker run --rm …` with the same devices, groups, options, environment, mounts and command.
pub fn docker_run_line(spec: &RunSpec) -> String {
    let m = &spec.devices;
    let mut a: Vec<String> = vec!["docker".into(), "run".into(), "--rm".into()];
    for d in &m.devices {
        a.push(format!("--device={}", word(d)));
    }
    for g in &m.group_add {
        a.push(format!("--group-add={g}"));
    }
    if m.security == super::Security::Strict {
        // The docker CLI takes the profile as a file (rocmenv's is images/seccomp/rocm-strict.json), not inline.
        a.push(format!("--security-opt=seccomp={STRICT_PROFILE_FILE}"));
    } else {
        for s in &m.security_opt {
            a.push(format!("--security-opt={}", word(s)));
        }
    }
    if m.ipc_host {
        a.push("--ipc=host".into());
    } else {
        a.push(format!("--shm-size={}m", m.shm_size >> 20));
    }
    if let Some(r) = &m.gpu_request {
        if r.driver == "cdi" {
            for id in &r.device_ids {
                a.push(format!("--device={}", word(id)));
            }
        } else if r.device_ids.is_empty() {
            a.push("--gpus=all".into());
        } else {
            // The inner double quotes keep docker from splitting a list of ids at the comma.
            a.push(format!(
                "--gpus={}",
                word(&format!("\"device={}\"", r.device_ids.join(",")))
            ));
        }
    }
    if let Some(mem) = spec.memory {
        a.push(format!("--memory={mem}"));
        a.push(format!("--memory-swap={mem}"));
    }
    for (k, v) in &spec.container_env() {
        a.push(format!("-e {}", word(&format!("{k}={v}"))));
    }
    a.extend(spec.container_mounts().map(Mount::docker_flag));
    a.push(word(&spec.image));
    a.extend(spec.command.iter().map(|c| word(c)));
    a.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{DeviceMap, GpuRequest, Security};
    use crate::vendor::Vendor;

    fn spec(devices: DeviceMap) -> RunSpec {
        RunSpec {
            image: "rocm/pytorch:latest".into(),
            command: vec![
                "python3".into(),
                "-c".into(),
                "import torch; print(torch.cuda.is_available())".into(),
            ],
            env: vec![("HSA_OVERRIDE_GFX_VERSION".into(), "10.3.0".into())],
            mounts: vec![],
            timeout: None,
            memory: None,
            devices,
            result_path: None,
            uploads: Vec::new(),
        }
    }

    #[test]
    fn amd_line_has_devices_numeric_groups_and_quoted_command() {
        let m = DeviceMap {
            vendor: Vendor::Amd,
            devices: vec!["/dev/kfd".into(), "/dev/dri/renderD128".into()],
            group_add: vec![44, 110],
            security_opt: vec!["seccomp=unconfined".into()],
            security: Security::Default,
            ipc_host: true,
            shm_size: 8 << 30,
            mounts: vec![],
            env: vec![],
            gpu_request: None,
            gpus: Vec::new(),
        };
        assert_eq!(
            docker_run_line(&spec(m)),
            "docker run --rm --device=/dev/kfd --device=/dev/dri/renderD128 --group-add=44 --group-add=110 \
             --security-opt='seccomp=unconfined' --ipc=host -e 'HSA_OVERRIDE_GFX_VERSION=10.3.0' rocm/pytorch:latest \
             python3 -c 'import torch; print(torch.cuda.is_available())'"
        );
    }

    #[test]
    fn nvidia_line_names_gpus_or_cdi_devices() {
        let mut m = DeviceMap {
            vendor: Vendor::Nvidia,
            devices: vec![],
            group_add: vec![],
            security_opt: vec![],
            security: Security::Default,
            ipc_host: true,
            shm_size: 1 << 30,
            mounts: vec![],
            env: vec![],
            gpu_request: Some(GpuRequest {
                driver: "nvidia".into(),
                count: None,
                device_ids: vec!["0".into(), "2".into()],
                capabilities: vec![vec!["gpu".into()]],
            }),
            gpus: Vec::new(),
        };
        assert!(docker_run_line(&spec(m.clone())).contains(r#"--gpus='"device=0,2"'"#));
        m.gpu_request = Some(GpuRequest {
            driver: "cdi".into(),
            count: None,
            device_ids: vec!["nvidia.com/gpu=all".into()],
            capabilities: vec![],
        });
        assert!(docker_run_line(&spec(m)).contains("--device='nvidia.com/gpu=all'"));
    }

    /// Issue 34: a ROCm-on-WSL mapping prints /dev/dxg, the library binds and the mapping's variable, which an `-e`
    /// of the same name replaces.
    #[test]
    fn a_wsl_line_has_dxg_the_library_binds_and_the_mappings_env() {
        let bind = |s: &str, c: &str| crate::engine::Mount {
            kind: crate::engine::MountKind::Bind,
            source: s.into(),
            container: c.into(),
            read_only: true,
        };
        let m = DeviceMap {
            vendor: Vendor::Amd,
            devices: vec!["/dev/dxg".into()],
            group_add: vec![],
            security_opt: vec!["seccomp=unconfined".into()],
            security: Security::Default,
            ipc_host: true,
            shm_size: 8 << 30,
            mounts: vec![
                bind("/usr/lib/wsl/lib/libdxcore.so", "/usr/lib/libdxcore.so"),
                bind("/opt/rocm/lib/librocdxg.so", "/usr/lib/librocdxg.so"),
            ],
            env: vec![("HSA_ENABLE_DXG_DETECTION".into(), "1".into())],
            gpu_request: None,
            gpus: Vec::new(),
        };
        let mut s = spec(m);
        assert_eq!(
            docker_run_line(&s),
            "docker run --rm --device=/dev/dxg --security-opt='seccomp=unconfined' --ipc=host \
             -e 'HSA_ENABLE_DXG_DETECTION=1' -e 'HSA_OVERRIDE_GFX_VERSION=10.3.0' \
             -v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so:ro \
             -v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so:ro rocm/pytorch:latest \
             python3 -c 'import torch; print(torch.cuda.is_available())'"
        );
        s.env.push(("HSA_ENABLE_DXG_DETECTION".into(), "0".into()));
        let line = docker_run_line(&s);
        assert!(
            line.contains("-e 'HSA_ENABLE_DXG_DETECTION=0'") && !line.contains("DETECTION=1"),
            "{line}"
        );
    }

    #[test]
    fn a_strict_line_names_the_profile_file_and_sizes_shm() {
        let m = DeviceMap {
            vendor: Vendor::Amd,
            devices: vec!["/dev/kfd".into()],
            group_add: vec![],
            security_opt: vec![crate::engine::strict_security_opt()],
            security: Security::Strict,
            ipc_host: false,
            shm_size: 8 << 30,
            mounts: vec![],
            env: vec![],
            gpu_request: None,
            gpus: Vec::new(),
        };
        let line = docker_run_line(&spec(m));
        assert!(
            line.contains("--security-opt=seccomp=rocm-strict.json --shm-size=8192m"),
            "{line}"
        );
        assert!(
            !line.contains("unconfined") && !line.contains("--ipc=host"),
            "{line}"
        );
    }
}
