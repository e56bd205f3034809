//! What the host lacks for its target, by the same facts doctor judges (`rocm.installed`, `driver.amdgpu-loaded`,
//! `driver.amdgpu-version`, `docker.gpu-runtime`): the input of fix's printed install commands.

use super::super::Ctx;
use crate::fix::Missing;
use crate::host::{HostFacts, HostRoot};
use crate::hostplan::HostPlan;

/// (Debian family, RHEL family) by os-release `ID` and `ID_LIKE`.
pub fn family(f: &HostFacts) -> (bool, bool) {
    let Some(o) = f.os.as_ref() else {
        return (false, false);
    };
    let ids: Vec<&str> =
        o.id.iter()
            .chain(o.id_like.iter())
            .map(String::as_str)
            .collect();
    let any = |xs: &[&str]| ids.iter().any(|i| xs.contains(i));
    (
        any(&["debian", "ubuntu"]),
        any(&["rhel", "fedora", "centos", "rocky", "almalinux", "ol"]),
    )
}

/// An amdgpu-dkms is installed: dkms's tree for it, or an out-of-tree amdgpu module for some kernel.
fn dkms_installed(root: &HostRoot, f: &HostFacts) -> bool {
    root.is_dir("/var/lib/dkms/amdgpu") || f.boot.modules.iter().any(|k| k.amdgpu.is_some())
}

/// Docker is on the host (its binary, or its configuration).
fn has_docker(root: &HostRoot, f: &HostFacts) -> bool {
    f.tools.get("docker").is_some_and(|t| t.is_some()) || root.exists(crate::fix::DAEMON_JSON)
}

/// What to install for the host plan's target. `blacklisted`: a blacklist explains an unloaded amdgpu (fix.blacklist
/// removes it; installing a driver would not help).
pub fn missing<'h>(
    ctx: &'h Ctx,
    root: &HostRoot,
    f: &HostFacts,
    hp: &'h HostPlan<'h>,
    blacklisted: bool,
) -> Missing<'h> {
    let mut m = Missing::default();
    let amd = f.amd_gpus().next().is_some() && !f.wsl && hp.mismatch.is_none();
    if let Some(t) = hp.target.rocm.as_ref().filter(|_| amd) {
        let r = t.release;
        m.dkms_release = Some(&r.version);
        m.stream = Some(r.stream);
        match (&f.rocm, f.rocm_installs.is_empty()) {
            (None, true) => {
                m.rocm = Some((
                    &r.version,
                    "no ROCm user space under /opt/rocm*".to_string(),
                ))
            }
            (Some(p), _) => {
                if let Some(v) = p.version.value().filter(|v| **v < r.version) {
                    m.rocm = Some((
                        &r.version,
                        format!("ROCm {v} at {} is older than the target", p.path),
                    ));
                }
            }
            _ => {}
        }
        match f.amdgpu_driver.as_ref().filter(|d| d.loaded) {
            None if !blacklisted && !dkms_installed(root, f) => {
                m.dkms = Some(("driver.amdgpu-loaded", "amdgpu is not loaded and no amdgpu-dkms is installed; try `sudo modprobe amdgpu` first".to_string()));
            }
            Some(d) => {
                let v = d.version.as_ref().and_then(|v| v.value());
                let release = v.and_then(|v| ctx.matrices().ok()?.driver_release_of_dkms(v));
                if let (Some(v), Some((rel, _))) = (v, release) {
                    if !r.accepts_driver(&rel) {
                        m.dkms = Some((
                            "driver.amdgpu-version",
                            format!(
                                "amdgpu-dkms {v} (driver {}) is outside ROCm {}'s window",
                                rel.short(),
                                r.version
                            ),
                        ));
                    }
                }
            }
            None => {}
        }
    }
    m.wsl = wsl_release(ctx, f);
    let c = &f.container;
    let nvidia_cdi = c.cdi_specs.iter().any(|s| {
        s.kind
            .as_deref()
            .is_some_and(|k| k.starts_with("nvidia.com/"))
    });
    let runtime = ["/usr/bin", "/usr/local/bin", "/usr/sbin"]
        .iter()
        .any(|d| root.exists(&format!("{d}/nvidia-container-runtime")));
    m.toolkit = f.nvidia_gpus().next().is_some()
        && has_docker(root, f)
        && !runtime
        && !nvidia_cdi
        && !c.docker_runtimes.iter().any(|r| r == "nvidia");
    m
}

/// Under WSL with an AMD GPU (or ROCm, or rocminfo): the ROCm-on-WSL release to install when the installed ROCm is
/// none AMD publishes for WSL. The newest release listed for this distribution, else the newest (plan_install says
/// why it prints none).
fn wsl_release<'m>(ctx: &'m Ctx, f: &HostFacts) -> Option<(&'m crate::matrix::WslRelease, String)> {
    let amd =
        f.amd_gpus().any(crate::host::is_dxg) || f.evidence.rocminfo.is_some() || f.rocm.is_some();
    if !f.wsl || !amd {
        return None;
    }
    let known = &ctx.matrices().ok()?.rocm.wsl;
    let why = match &f.rocm {
        Some(p)
            if known
                .iter()
                .any(|w| w.release.to_string() == p.version.as_str()) =>
        {
            return None
        }
        Some(p) => format!(
            "ROCm {} at {} is not a ROCm-on-WSL release",
            p.version, p.path
        ),
        None => "no ROCm user space under /opt/rocm*".to_string(),
    };
    let listed = |w: &&crate::matrix::WslRelease| {
        f.os.as_ref().is_some_and(|o| {
            w.distros.iter().any(|d| {
                o.id.as_deref() == Some(d.id.as_str())
                    && o.version_id.as_deref() == Some(d.version.as_str())
            })
        })
    };
    let newest =
        |a: &&crate::matrix::WslRelease, b: &&crate::matrix::WslRelease| a.release.cmp(&b.release);
    let w = known
        .iter()
        .filter(listed)
        .max_by(newest)
        .or_else(|| known.iter().max_by(newest))?;
    Some((w, why))
}
