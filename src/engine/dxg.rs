//! ROCm on WSL2: an AMD GPU is reached through `/dev/dxg` and libraries of the host, not `/dev/kfd` and render
//! nodes. A container gets what AMD's instructions give it:
//! - ROCm 6.1.3 to 6.4 on WSL ("Install PyTorch for ROCm", WSL, Option B: Docker,
//!   https://rocm.docs.amd.com/projects/radeon/en/docs-6.1.3/docs/install/wsl/install-pytorch.html):
//!   `--device=/dev/dxg -v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so
//!   -v /opt/rocm/lib/libhsa-runtime64.so.1:/opt/rocm/lib/libhsa-runtime64.so.1` (the host's WSL HSA runtime replaces
//!   the image's, which knows only /dev/kfd). That section could not be read here (2026-12-07); the line is as an AMD
//!   engineer points to it (https://github.com/ROCm/AMDMIGraphX/issues/3834, schung-amd, 2025-02-21) and as users
//!   quote it;
//! - ROCm 7.x with AMD's ROCDXG bridge (ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md,
//!   "Container Launch – WSL-Specific Flags"): `--device=/dev/dxg`, the same libdxcore.so,
//!   `-v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so` and `-e HSA_ENABLE_DXG_DETECTION=1`.
//!
//! Both also pass `--security-opt seccomp=unconfined --ipc=host`, as on Linux. rocmenv mounts the libraries
//! read-only: a container has no business writing the host's runtime.

use super::mount::{Mount, MountKind};
use crate::host::{HostFacts, WSL_LIBDXCORE, WSL_LIBHSA, WSL_LIBROCDXG};

/// The device node a ROCm-on-WSL container gets.
pub const DXG: &str = "/dev/dxg";

/// What a container gets to reach a ROCm-on-WSL GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DxgMapping {
    /// `/dev/dxg`.
    pub devices: Vec<String>,
    /// The host libraries, read-only, where AMD's instructions put them.
    pub mounts: Vec<Mount>,
    /// `HSA_ENABLE_DXG_DETECTION=1` with the ROCDXG bridge; empty otherwise.
    pub env: Vec<(String, String)>,
    /// Which of AMD's two ways: `the WSL HSA runtime` (ROCm 6.x) or `the ROCDXG bridge` (ROCm 7.x).
    pub via: &'static str,
}

impl DxgMapping {
    /// The `docker run` flags for it, as `rocmenv run --print` writes them.
    pub fn docker_flags(&self) -> String {
        let mut a: Vec<String> = self
            .devices
            .iter()
            .map(|d| format!("--device={d}"))
            .collect();
        a.extend(self.mounts.iter().map(Mount::docker_flag));
        a.extend(self.env.iter().map(|(k, v)| format!("-e {k}={v}")));
        a.join(" ")
    }
}

fn bind(source: &str, container: &str) -> Mount {
    Mount {
        kind: MountKind::Bind,
        source: source.into(),
        container: container.into(),
        read_only: true,
    }
}

/// The mapping this host's files allow, or one line naming the first missing file and what puts it there.
pub fn dxg_mapping(facts: &HostFacts) -> Result<DxgMapping, String> {
    let has = |p: &str| facts.device_nodes.dxg_libs.iter().any(|l| l == p);
    if !facts.device_nodes.dxg {
        return Err(format!("{DXG} is missing: the Windows AMD driver exposes the GPU to WSL2 through it (install AMD's Adrenalin driver with WSL support on Windows, then run wsl --shutdown)"));
    }
    if !has(WSL_LIBDXCORE) {
        return Err(format!("{WSL_LIBDXCORE} is missing: WSL2 puts it there with GPU support (update WSL from Windows: wsl --update)"));
    }
    let dxcore = bind(WSL_LIBDXCORE, "/usr/lib/libdxcore.so");
    let devices = vec![DXG.to_string()];
    if has(WSL_LIBROCDXG) {
        return Ok(DxgMapping {
            devices,
            mounts: vec![dxcore, bind(WSL_LIBROCDXG, "/usr/lib/librocdxg.so")],
            env: vec![("HSA_ENABLE_DXG_DETECTION".into(), "1".into())],
            via: "the ROCDXG bridge",
        });
    }
    // ROCm 7 has no WSL HSA runtime package: it reaches /dev/dxg through the ROCDXG bridge only (librocdxg's README).
    let rocm = facts.rocm.as_ref().and_then(|r| r.version.value());
    if let Some(v) = rocm.filter(|v| v.major() >= 7) {
        return Err(format!("{WSL_LIBROCDXG} is missing: ROCm {v} on WSL reaches the GPU through AMD's ROCDXG bridge (build and install ROCm/librocdxg; `rocmenv fix` prints the steps)"));
    }
    if has(WSL_LIBHSA) {
        return Ok(DxgMapping {
            devices,
            mounts: vec![dxcore, bind(WSL_LIBHSA, WSL_LIBHSA)],
            env: Vec::new(),
            via: "the WSL HSA runtime",
        });
    }
    Err(format!("{WSL_LIBHSA} is missing: install ROCm for WSL (amdgpu-install -y --usecase=wsl,rocm --no-dkms), or for ROCm 7.x AMD's ROCDXG bridge ({WSL_LIBROCDXG})"))
}

/// Refuses `--gpu n` where it cannot hold: `/dev/dxg` hands the container every GPU behind it.
pub fn check_dxg_selection(facts: &HostFacts, gpu: Option<usize>) -> Result<(), String> {
    let n = facts.amd_gpus().filter(|g| crate::host::is_dxg(g)).count();
    match gpu {
        Some(g) if n > 1 => Err(format!("under WSL2 {DXG} hands a container all {n} GPUs, so --gpu {g} cannot pick one: leave --gpu out and pass -e HIP_VISIBLE_DEVICES={g}")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wsl(libs: &[&str]) -> HostFacts {
        let mut f = HostFacts {
            wsl: true,
            ..Default::default()
        };
        f.device_nodes.dxg = true;
        f.device_nodes.dxg_libs = libs.iter().map(|s| s.to_string()).collect();
        f
    }

    #[test]
    fn the_wsl_hsa_runtime_is_mounted_where_amds_docker_line_puts_it() {
        let m = dxg_mapping(&wsl(&[WSL_LIBDXCORE, WSL_LIBHSA])).unwrap();
        assert_eq!(m.devices, ["/dev/dxg"]);
        assert_eq!(
            m.mounts,
            [
                bind("/usr/lib/wsl/lib/libdxcore.so", "/usr/lib/libdxcore.so"),
                bind(
                    "/opt/rocm/lib/libhsa-runtime64.so.1",
                    "/opt/rocm/lib/libhsa-runtime64.so.1"
                ),
            ]
        );
        assert!(m
            .mounts
            .iter()
            .all(|b| b.read_only && b.kind == MountKind::Bind));
        assert!(m.env.is_empty());
        assert_eq!(m.docker_flags(), "--device=/dev/dxg -v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so:ro -v /opt/rocm/lib/libhsa-runtime64.so.1:/opt/rocm/lib/libhsa-runtime64.so.1:ro");
    }

    #[test]
    fn the_rocdxg_bridge_wins_and_sets_dxg_detection() {
        let m = dxg_mapping(&wsl(&[WSL_LIBDXCORE, WSL_LIBROCDXG, WSL_LIBHSA])).unwrap();
        assert_eq!(
            m.mounts[1],
            bind("/opt/rocm/lib/librocdxg.so", "/usr/lib/librocdxg.so")
        );
        assert_eq!(m.mounts.len(), 2, "the image keeps its own HSA runtime");
        assert_eq!(
            m.env,
            [("HSA_ENABLE_DXG_DETECTION".to_string(), "1".to_string())]
        );
        assert_eq!(m.via, "the ROCDXG bridge");
    }

    #[test]
    fn a_missing_file_is_one_line_naming_it_and_what_to_install() {
        let e = dxg_mapping(&wsl(&[WSL_LIBDXCORE])).unwrap_err();
        assert!(
            e.starts_with("/opt/rocm/lib/libhsa-runtime64.so.1 is missing")
                && e.contains("--usecase=wsl,rocm"),
            "{e}"
        );
        let e = dxg_mapping(&wsl(&[WSL_LIBHSA])).unwrap_err();
        assert!(
            e.starts_with("/usr/lib/wsl/lib/libdxcore.so is missing") && e.contains("wsl --update"),
            "{e}"
        );
        let mut f = wsl(&[WSL_LIBDXCORE, WSL_LIBHSA]);
        f.device_nodes.dxg = false;
        let e = dxg_mapping(&f).unwrap_err();
        assert!(e.starts_with("/dev/dxg is missing"), "{e}");
        for e in [e, dxg_mapping(&wsl(&[])).unwrap_err()] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn rocm_7_needs_the_bridge_not_the_hsa_runtime() {
        let mut f = wsl(&[WSL_LIBDXCORE, WSL_LIBHSA]);
        f.rocm = Some(crate::host::RocmInstall {
            version: crate::version::Reported::new("7.2.3"),
            path: "/opt/rocm-7.2.3".into(),
            stream: "legacy",
            evidence: ".info/version".into(),
        });
        let e = dxg_mapping(&f).unwrap_err();
        assert!(
            e.starts_with("/opt/rocm/lib/librocdxg.so is missing: ROCm 7.2.3"),
            "{e}"
        );
        f.device_nodes.dxg_libs.push(WSL_LIBROCDXG.into());
        assert_eq!(dxg_mapping(&f).unwrap().via, "the ROCDXG bridge");
    }
}
