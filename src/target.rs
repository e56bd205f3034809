//! What a host is checked against: `--target rocm-6.2 | cuda-12.4 | ngc-24.05`, or the newest release that fits.

use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::host::HostFacts;
use crate::matrix::nearest;
use crate::matrix::{CudaRelease, Matrices, NgcRelease, ReleaseStatus, RocmRelease};
use crate::version::Version;

/// A `--target` value, validated but not yet looked up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// `rocm-6.2`, `rocm-6.2.4`.
    Rocm(String),
    /// `cuda-12.4`.
    Cuda(String),
    /// `ngc-24.05`.
    Ngc(String),
}

impl std::str::FromStr for TargetSpec {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = |m: String| Error::Invalid {
            fields: vec!["target".into()],
            value: None,
            message: m,
        };
        let (kind, ver) = s.split_once('-').ok_or_else(|| {
            bad(format!(
                "`{s}` is not a target; use rocm-X.Y, cuda-X.Y or ngc-YY.MM (e.g. rocm-6.2)"
            ))
        })?;
        let version_like = !ver.is_empty()
            && ver.len() <= 16
            && ver.bytes().all(|b| b.is_ascii_digit() || b == b'.');
        if !version_like {
            return Err(bad(format!("`{ver}` in `{s}` is not a version")));
        }
        match kind {
            "rocm" => Ok(TargetSpec::Rocm(ver.into())),
            "cuda" => Ok(TargetSpec::Cuda(ver.into())),
            "ngc" => Ok(TargetSpec::Ngc(ver.into())),
            _ => Err(bad(format!(
                "`{kind}` is not a target kind; use rocm-X.Y, cuda-X.Y or ngc-YY.MM"
            ))),
        }
    }
}

/// The ROCm side of a target.
#[derive(Debug, Clone)]
pub struct RocmTarget<'m> {
    /// The release.
    pub release: &'m RocmRelease,
    /// How it was chosen.
    pub why: String,
}

/// The CUDA side of a target.
#[derive(Debug, Clone)]
pub struct CudaTarget<'m> {
    /// The release whose driver floor applies (the first update of a `cuda-X.Y` series, or an NGC image's CUDA).
    pub cuda: &'m CudaRelease,
    /// The NGC release, for `ngc-YY.MM`.
    pub ngc: Option<&'m NgcRelease>,
    /// How it was chosen.
    pub why: String,
}

/// What the host is checked against.
#[derive(Debug, Clone)]
pub struct Target<'m> {
    /// ROCm, when the target (or an AMD GPU, or no GPU at all) calls for it.
    pub rocm: Option<RocmTarget<'m>>,
    /// CUDA, when the target (or an NVIDIA GPU) calls for it.
    pub cuda: Option<CudaTarget<'m>>,
    /// True for `--target`.
    pub explicit: bool,
}

impl<'m> Target<'m> {
    /// How the target was chosen, ROCm's reason then CUDA's.
    pub fn why(&self) -> String {
        [
            self.rocm.as_ref().map(|r| r.why.clone()),
            self.cuda.as_ref().map(|c| c.why.clone()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("; ")
    }

    /// One line for the report header.
    pub fn label(&self) -> String {
        let mut parts = Vec::new();
        if let Some(r) = &self.rocm {
            parts.push(format!("ROCm {}", r.release.version));
        }
        if let Some(c) = &self.cuda {
            match c.ngc {
                Some(n) => parts.push(format!("NGC {} (CUDA {})", n.release, n.cuda)),
                None => parts.push(format!("CUDA {}", c.cuda.version)),
            }
        }
        parts.join(" + ")
    }
}

/// Looks a target up, or picks the newest release that fits the detected GPUs.
pub fn resolve<'m>(
    spec: Option<&TargetSpec>,
    m: &'m Matrices,
    facts: &HostFacts,
) -> Result<Target<'m>, Error> {
    let unknown = |flag_value: String, valid: String| Error::Invalid {
        fields: vec!["target".into()],
        value: None,
        message: format!("{flag_value} is not in the matrices; nearest: {valid}"),
    };
    match spec {
        Some(TargetSpec::Rocm(v)) => {
            let release = m.rocm_request(v).map_err(|message| Error::Invalid {
                fields: vec!["target".into()],
                value: None,
                message,
            })?;
            Ok(Target {
                rocm: Some(RocmTarget {
                    release,
                    why: format!("--target rocm-{v}"),
                }),
                cuda: None,
                explicit: true,
            })
        }
        Some(TargetSpec::Cuda(v)) => {
            let all: Vec<String> = m
                .cuda
                .releases
                .iter()
                .map(|r| r.version.to_string())
                .collect();
            let cuda = m
                .cuda_release(v)
                .ok_or_else(|| unknown(format!("CUDA {v}"), nearest(v, &all)))?;
            Ok(Target {
                rocm: None,
                cuda: Some(CudaTarget {
                    cuda,
                    ngc: None,
                    why: format!("--target cuda-{v}"),
                }),
                explicit: true,
            })
        }
        Some(TargetSpec::Ngc(v)) => {
            let all: Vec<String> = m.ngc.releases.iter().map(|r| r.release.clone()).collect();
            let ngc = m
                .ngc_release(v)
                .ok_or_else(|| unknown(format!("NGC {v}"), nearest(v, &all)))?;
            let cuda = m
                .cuda_release(&ngc.cuda.to_string())
                .or_else(|| m.cuda_release(&ngc.cuda.short()))
                .ok_or_else(|| Error::Invalid {
                    fields: vec!["target".into()],
                    value: None,
                    message: format!(
                        "NGC {v} ships CUDA {}, which cuda.yaml does not list",
                        ngc.cuda
                    ),
                })?;
            Ok(Target {
                rocm: None,
                cuda: Some(CudaTarget {
                    cuda,
                    ngc: Some(ngc),
                    why: format!("--target ngc-{v}"),
                }),
                explicit: true,
            })
        }
        None => Ok(auto(m, facts)),
    }
}

/// The newest releases that fit the host's GPUs, its installed ROCm, or its loaded driver.
fn auto<'m>(m: &'m Matrices, facts: &HostFacts) -> Target<'m> {
    let amd: Vec<GfxTarget> = facts.amd_gpus().filter_map(|g| g.gfx).collect();
    let has_amd = facts.amd_gpus().next().is_some();
    let has_nvidia = facts.nvidia_gpus().next().is_some();
    let rocm = if let (Some(t), true) = (installed_rocm(m, facts), has_amd || !has_nvidia) {
        Some(t)
    } else if let (Some((raw, driver)), true) = (&loaded_dkms_driver(m, facts), has_amd) {
        Some(rocm_for_dkms(m, raw, driver, &amd))
    } else if has_amd || !has_nvidia {
        Some(rocm_for_targets(m, &amd, has_amd))
    } else {
        None
    };
    let cuda = if has_nvidia {
        cuda_for_host(m, facts)
    } else {
        None
    };
    Target {
        rocm,
        cuda,
        explicit: false,
    }
}

/// The ROCm installed on the host, when the matrices know it: what its work runs against.
fn installed_rocm<'m>(m: &'m Matrices, facts: &HostFacts) -> Option<RocmTarget<'m>> {
    facts.rocm.as_ref().and_then(|i| {
        if facts.wsl {
            if let Some(t) = installed_wsl_rocm(m, i) {
                return Some(t);
            }
        }
        let release = m.rocm_release(i.version.as_str())?;
        let why = if release.version.to_string() == i.version.as_str() {
            format!("the ROCm installed at {}", i.path)
        } else {
            format!(
                "the ROCm installed at {} ({}; newest of its series)",
                i.path, i.version
            )
        };
        Some(RocmTarget { release, why })
    })
}

/// Under WSL, an installed ROCm-on-WSL release the Linux tables do not list (6.1.3): the newest Linux release of its
/// series stands in for its libraries; the GPUs are judged against the WSL record (`wsl.rocm-support`).
fn installed_wsl_rocm<'m>(m: &'m Matrices, i: &crate::host::RocmInstall) -> Option<RocmTarget<'m>> {
    let w = m.wsl_release(i.version.as_str())?;
    if m.rocm_release(i.version.as_str()).is_some() {
        return None;
    }
    let series = format!("{}.{}", w.release.major(), w.release.minor());
    let release = m.rocm_release(&series)?;
    Some(RocmTarget {
        release,
        why: format!(
            "the ROCm installed at {} ({}, AMD's ROCm-on-WSL release; the Linux tables of its series are {}'s)",
            i.path, i.version, release.version
        ),
    })
}

/// The loaded amdgpu-dkms module's version as reported, and the driver release it came with (the in-tree driver has
/// none): what picks a release for a host without ROCm, and what `dockerfile` holds a host's release to.
pub fn loaded_dkms_driver(m: &Matrices, facts: &HostFacts) -> Option<(String, Version)> {
    facts
        .amdgpu_driver
        .as_ref()
        .filter(|d| d.loaded)
        .and_then(|d| d.version.as_ref())
        .and_then(|raw| {
            let (driver, _) = m.driver_release_of_dkms(raw.value()?)?;
            Some((raw.to_string(), driver))
        })
}

/// Without ROCm user space, an amdgpu-dkms driver still says which releases the host is set up for: the
/// newest user space release whose driver window holds `driver`, preferring one that builds every target.
fn rocm_for_dkms<'m>(
    m: &'m Matrices,
    raw: &str,
    driver: &Version,
    amd: &[GfxTarget],
) -> RocmTarget<'m> {
    let fits: Vec<&RocmRelease> = m
        .rocm
        .releases
        .iter()
        .rev()
        .filter(|r| r.accepts_driver(driver) && r.status == ReleaseStatus::Production)
        .collect();
    let native = fits.iter().find(|r| {
        r.status == ReleaseStatus::Production && !amd.is_empty() && amd.iter().all(|t| r.builds(*t))
    });
    match (native, fits.first()) {
        (Some(release), _) => RocmTarget {
            release,
            why: format!(
                "newest release that supports the loaded amdgpu-dkms {raw}, driver {}, and builds {}",
                driver.short(),
                join_targets(amd)
            ),
        },
        (None, Some(release)) => RocmTarget {
            release,
            why: format!(
                "newest release that supports the loaded amdgpu-dkms {raw}, driver {}; {}",
                driver.short(),
                built_and_not(release, amd)
            ),
        },
        (None, None) => RocmTarget {
            release: m.newest_rocm(),
            why: format!(
                "newest release (no release lists amdgpu-dkms {raw}'s driver {})",
                driver.short()
            ),
        },
    }
}

/// The newest production release that builds every known AMD target, else the newest release.
fn rocm_for_targets<'m>(m: &'m Matrices, amd: &[GfxTarget], has_amd: bool) -> RocmTarget<'m> {
    let native = m
        .production()
        .rev()
        .find(|r| !amd.is_empty() && amd.iter().all(|t| r.builds(*t)));
    match native {
        Some(release) => RocmTarget {
            release,
            why: format!("newest release that builds {}", join_targets(amd)),
        },
        None if amd.is_empty() && has_amd => RocmTarget {
            release: m.newest_rocm(),
            why: "newest release (the GPU's gfx target is unknown)".into(),
        },
        None if amd.is_empty() => RocmTarget {
            release: m.newest_rocm(),
            why: "newest release (no GPU found)".into(),
        },
        None => RocmTarget {
            release: m.newest_rocm(),
            why: format!("newest release; {}", built_and_not(m.newest_rocm(), amd)),
        },
    }
}

/// The newest CUDA that builds for every NVIDIA GPU, preferring one the loaded driver runs.
fn cuda_for_host<'m>(m: &'m Matrices, facts: &HostFacts) -> Option<CudaTarget<'m>> {
    let ccs: Vec<String> = facts
        .nvidia_gpus()
        .filter_map(|g| g.compute_capability.clone())
        .collect();
    let driver = facts.nvidia_driver.as_ref().map(|d| d.version.clone());
    let windows = facts.nvidia_driver.as_ref().is_some_and(|d| d.from_windows);
    let fits = |r: &&CudaRelease| ccs.iter().all(|cc| r.compute_capabilities.contains(cc));
    // Under WSL the driver is Windows', judged by Table 3's Windows column where it has one.
    let floor = |r: &CudaRelease| match (windows, &r.min_driver_windows) {
        (true, Some(w)) => w.clone(),
        _ => r.min_driver_linux.clone(),
    };
    let whose = if windows {
        "the Windows driver"
    } else {
        "the driver"
    };
    let pick = match &driver {
        Some(d) => m
            .cuda
            .releases
            .iter()
            .rev()
            .filter(fits)
            .find(|r| &floor(r) <= d)
            .map(|r| (r, format!("newest CUDA {whose} {d} runs"))),
        None => None,
    }
    .or_else(|| {
        m.cuda
            .releases
            .iter()
            .rev()
            .find(fits)
            .map(|r| (r, "newest CUDA that builds for the GPUs".to_string()))
    });
    pick.map(|(cuda, why)| CudaTarget {
        cuda,
        ngc: None,
        why,
    })
}

/// "it builds gfx1030; no release builds gfx90c natively": which of the GPUs' targets a release builds.
fn built_and_not(release: &RocmRelease, amd: &[GfxTarget]) -> String {
    let (built, not): (Vec<GfxTarget>, Vec<GfxTarget>) =
        amd.iter().partition(|t| release.builds(**t));
    match (built.is_empty(), not.is_empty()) {
        (_, true) => format!("it builds {}", join_targets(&built)),
        (true, false) => format!("it does not build {} natively", join_targets(&not)),
        (false, false) => format!(
            "it builds {} but not {} natively",
            join_targets(&built),
            join_targets(&not)
        ),
    }
}

fn join_targets(t: &[GfxTarget]) -> String {
    let mut names: Vec<String> = t.iter().map(|g| g.to_string()).collect();
    names.sort();
    names.dedup();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_specs_parse_and_refuse_garbage() {
        assert_eq!(
            "rocm-6.2".parse::<TargetSpec>().unwrap(),
            TargetSpec::Rocm("6.2".into())
        );
        assert_eq!(
            "cuda-12.4".parse::<TargetSpec>().unwrap(),
            TargetSpec::Cuda("12.4".into())
        );
        assert_eq!(
            "ngc-24.05".parse::<TargetSpec>().unwrap(),
            TargetSpec::Ngc("24.05".into())
        );
        for bad in [
            "rocm",
            "rocm-",
            "rocm-6.x",
            "hip-6.2",
            "rocm-6.2;ls",
            "",
            "rocm-6.2 ",
        ] {
            let e = bad.parse::<TargetSpec>().unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }
}
