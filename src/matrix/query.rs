//! Questions the checks ask of the matrices.

use super::distro::{canonical_distro_version, distro_version_matches};
use super::schema::*;
use super::Matrices;
use crate::gfx::GfxTarget;
use crate::version::{parse_with_parts, DriverVersion, Version};

impl Matrices {
    /// The release a `X.Y[.Z]` request names: exact for three parts, else the newest of that series.
    pub fn rocm_release(&self, spec: &str) -> Option<&RocmRelease> {
        let (v, parts) = parse_with_parts(spec).ok()?;
        self.rocm
            .releases
            .iter()
            .rev()
            .find(|r| r.version.in_series(&v, parts))
    }

    /// The newest ROCm release.
    pub fn newest_rocm(&self) -> &RocmRelease {
        self.rocm
            .releases
            .last()
            .expect("validated: at least one release")
    }

    /// Release versions, for "did you mean" lists.
    pub fn rocm_versions(&self) -> Vec<String> {
        self.rocm
            .releases
            .iter()
            .map(|r| r.version.to_string())
            .collect()
    }

    /// The CUDA release a `X.Y[.Z]` request names (newest update of the series).
    pub fn cuda_release(&self, spec: &str) -> Option<&CudaRelease> {
        let (v, parts) = parse_with_parts(spec).ok()?;
        self.cuda
            .releases
            .iter()
            .rev()
            .find(|r| r.version.in_series(&v, parts))
    }

    /// The AMD GPU Driver release an amdgpu-dkms module version belongs to (`/sys/module/amdgpu/version` 6.8.5 →
    /// driver 6.2), by the releases' `amdgpu_dkms`, and whether that mapping is marked unconfirmed.
    pub fn driver_release_of_dkms(&self, dkms_version: &Version) -> Option<(Version, bool)> {
        self.rocm.releases.iter().rev().find_map(|r| {
            let dkms = r.amdgpu_dkms.as_ref()?;
            if dkms.major() != dkms_version.major() || dkms.minor() != dkms_version.minor() {
                return None;
            }
            Some((
                r.ships_driver.clone()?,
                r.provenance.is_unconfirmed("amdgpu_dkms"),
            ))
        })
    }

    /// The minor-version-compatibility family of a CUDA major.
    pub fn cuda_family(&self, major: u64) -> Option<&CudaFamily> {
        self.cuda.families.iter().find(|f| f.major as u64 == major)
    }

    /// The newest CUDA release whose full driver floor `driver` meets.
    pub fn newest_cuda_for_driver(&self, driver: &DriverVersion) -> Option<&CudaRelease> {
        self.cuda
            .releases
            .iter()
            .rev()
            .find(|r| &r.min_driver_linux <= driver)
    }

    /// An NGC release by `YY.MM`.
    pub fn ngc_release(&self, release: &str) -> Option<&NgcRelease> {
        self.ngc.releases.iter().find(|r| r.release == release)
    }

    /// The GPU model with this vendor and PCI device id (`0x744c`).
    pub fn gpu_by_pci(&self, vendor: Vendor, device_id: &str) -> Option<&GpuModel> {
        let id = device_id.to_ascii_lowercase();
        self.gpus
            .gpus
            .iter()
            .find(|g| g.vendor == vendor && g.pci_ids.contains(&id))
    }

    /// What is known about a gfx target.
    pub fn gfx_info(&self, target: GfxTarget) -> Option<&GfxTargetInfo> {
        self.gpus.gfx_targets.iter().find(|t| t.target == target)
    }
}

/// How a gfx target runs on a ROCm release: the one rule doctor, env and dockerfile all ask.
#[derive(Debug, Clone, Copy)]
pub enum GfxRun<'m> {
    /// The release builds the target's own kernels (supported, deprecated or experimental).
    Native(&'m GfxSupport),
    /// The release lacks the target, and the override gpus.yaml names is built: the device runs those kernels.
    Override(&'m OverrideAdvice),
    /// The release does not list the target as supported, but every component its `built:` names ships
    /// kernels for it: it runs natively, untested by AMD.
    BuiltNotSupported(&'m [BuiltTargets]),
    /// The release lacks the target, and its known override crashes (a different ISA).
    OverrideCrashes(&'m OverrideAdvice),
    /// The release builds neither the target nor its override target.
    OverrideNotBuilt(&'m OverrideAdvice),
    /// The release lacks the target and no override is known.
    NoOverride,
}

impl GfxRun<'_> {
    /// True when the device runs on the release, natively or through the override.
    pub fn runs(&self) -> bool {
        matches!(
            self,
            GfxRun::Native(_) | GfxRun::BuiltNotSupported(_) | GfxRun::Override(_)
        )
    }

    /// The target whose kernels the device runs when it runs through an override.
    pub fn override_target(&self) -> Option<GfxTarget> {
        match self {
            GfxRun::Override(a) => Some(a.target),
            _ => None,
        }
    }
}

impl Matrices {
    /// How `target` runs on `release`: natively, through its override, or not, and why.
    pub fn gfx_on_release<'m>(&'m self, release: &'m RocmRelease, target: GfxTarget) -> GfxRun<'m> {
        if let Some(s) = release
            .gfx_status(target)
            .filter(|s| s.status != SupportStatus::Unsupported)
        {
            return GfxRun::Native(s);
        }
        if release.built_by_components(target) {
            return GfxRun::BuiltNotSupported(&release.built);
        }
        match self.gfx_info(target).and_then(|i| i.override_to.as_ref()) {
            None => GfxRun::NoOverride,
            Some(a) if a.crashes => GfxRun::OverrideCrashes(a),
            Some(a) if release.builds(a.target) => GfxRun::Override(a),
            Some(a) => GfxRun::OverrideNotBuilt(a),
        }
    }
}

impl RocmRelease {
    /// The status of `target` in this release; `None` when the release does not list it.
    pub fn gfx_status(&self, target: GfxTarget) -> Option<&GfxSupport> {
        self.gfx.iter().find(|g| g.target == target)
    }

    /// True when the release builds kernels for `target`: listed (supported, deprecated or experimental),
    /// or shipped by every component its `built:` names.
    pub fn builds(&self, target: GfxTarget) -> bool {
        self.gfx_status(target)
            .is_some_and(|g| g.status != SupportStatus::Unsupported)
            || self.built_by_components(target)
    }

    /// True when the release has a `built:` list and every component in it ships kernels for `target`.
    pub fn built_by_components(&self, target: GfxTarget) -> bool {
        !self.built.is_empty() && self.built.iter().all(|b| b.targets.contains(&target))
    }

    /// The distro entry for os-release `ID`/`VERSION_ID`: the same version in canonical form (SLES `15-SP5`
    /// is `15.5`), else a row naming only the major version (`rocky 9` for `9.6`).
    pub fn distro(&self, id: &str, version_id: &str) -> Option<&DistroSupport> {
        let same = canonical_distro_version(version_id);
        self.distros
            .iter()
            .find(|d| d.id == id && canonical_distro_version(&d.version) == same)
            .or_else(|| {
                self.distros
                    .iter()
                    .find(|d| d.id == id && distro_version_matches(&d.version, version_id))
            })
    }

    /// True when the amdgpu driver `driver` (e.g. 6.7.0 or 30.10.1) is in this release's window.
    pub fn accepts_driver(&self, driver: &Version) -> bool {
        self.kernel_drivers.iter().any(|k| {
            k.major() == driver.major()
                && k.minor() == driver.minor()
                && (k.patch() == 0 || k.patch() == driver.patch())
        })
    }

    /// `rocm-6.2`-style short name.
    pub fn label(&self) -> String {
        format!("ROCm {}", self.version)
    }
}

/// True for a Docker tag: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
pub fn is_safe_tag(tag: &str) -> bool {
    let b = tag.as_bytes();
    !b.is_empty()
        && b.len() <= 128
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// Checks a `rocm/pytorch` tag against the documented scheme and the release it is listed under.
pub fn check_rocm_tag(tag: &str, release: &Version) -> Result<(), String> {
    if !is_safe_tag(tag) {
        return Err("is not a valid image tag".into());
    }
    let rest = tag
        .strip_prefix("rocm")
        .ok_or("does not start with `rocm`")?;
    let (ver, rest) = rest
        .split_once('_')
        .ok_or("does not follow rocmX.Y_osV_pyV_pytorch_V")?;
    let (v, parts) = parse_with_parts(ver).map_err(|e| e.to_string())?;
    if !release.in_series(&v, parts) {
        return Err(format!("names ROCm {ver}, not {release}"));
    }
    let mut it = rest.split('_');
    let os = it.next().unwrap_or("");
    if !(os.starts_with("ubuntu") || os.starts_with("centos")) {
        return Err("does not name ubuntuXX.YY or centosN".into());
    }
    let py = it.next().unwrap_or("");
    if !py.starts_with("py3.") {
        return Err("does not name py3.N".into());
    }
    if it.next() != Some("pytorch") {
        return Err("does not name pytorch".into());
    }
    Ok(())
}

/// Up to five valid values near `spec`, in order: one per series (its newest), the closest series below and above it, so
/// `6.9` names 6.x and 7.x releases; past either end of the list, it says so (`6.18 is newer than any listed`).
pub fn nearest(spec: &str, all: &[String]) -> String {
    let key = |v: &str| -> Option<i64> {
        let (v, _) = crate::version::parse_with_parts(v).ok()?;
        Some((v.major() as i64 * 1000 + v.minor() as i64) * 1000 + v.patch() as i64)
    };
    let Some(want) = key(spec) else {
        return all
            .iter()
            .rev()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
    };
    let mut series: std::collections::BTreeMap<i64, (i64, &String)> = Default::default();
    for v in all {
        if let Some(k) = key(v) {
            let e = series.entry(k / 1000).or_insert((k, v));
            if k > e.0 {
                *e = (k, v);
            }
        }
    }
    let below: Vec<&String> = series
        .range(..=want / 1000)
        .rev()
        .map(|(_, e)| e.1)
        .collect();
    let above: Vec<&String> = series.range(want / 1000 + 1..).map(|(_, e)| e.1).collect();
    let n_above = above.len().min(2.max(5usize.saturating_sub(below.len())));
    let n_below = below.len().min(5 - n_above);
    let mut pick: Vec<&String> = below[..n_below]
        .iter()
        .chain(&above[..n_above])
        .copied()
        .collect();
    pick.sort_by_key(|v| key(v));
    let list = pick.into_iter().cloned().collect::<Vec<_>>().join(", ");
    match (below.is_empty(), above.is_empty()) {
        (false, true) if !list.is_empty() => format!("{list} ({spec} is newer than any listed)"),
        (true, false) => format!("{list} ({spec} is older than any listed)"),
        _ => list,
    }
}
