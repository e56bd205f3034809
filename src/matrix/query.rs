//! Questions the checks ask of the matrices.

use super::distro::{canonical_distro_version, distro_version_matches};
use super::schema::*;
use super::{HostGpu, Matrices};
use crate::gfx::GfxTarget;
use crate::version::{parse_with_parts, DriverVersion, Version};

impl Matrices {
    /// The release a `X`, `X.Y` or `X.Y.Z` request names: exact for three parts (a preview too), else the newest
    /// production release of that series (`7` is the newest 7.x, `7.2` the newest 7.2.x).
    pub fn rocm_release(&self, spec: &str) -> Option<&RocmRelease> {
        let (v, parts) = parse_with_parts(spec).ok()?;
        self.rocm
            .releases
            .iter()
            .rev()
            .filter(|r| parts == 3 || r.status == ReleaseStatus::Production)
            .find(|r| r.version.in_series(&v, parts))
    }

    /// The release a user asked for (`--rocm`, `--target rocm-X`), or one line saying what exists: a version the
    /// matrices do not list names the nearest releases and the newest of its major, and a preview is refused.
    pub fn rocm_request(&self, spec: &str) -> Result<&RocmRelease, String> {
        let (v, _) = parse_with_parts(spec).map_err(|e| e.to_string())?;
        if let Some(why) = self.rocm_refusal(spec) {
            return Err(why);
        }
        self.rocm_release(spec).ok_or_else(|| {
            format!(
                "ROCm {spec} is not in the matrices; {}",
                self.what_exists(spec, v.major())
            )
        })
    }

    /// "nearest: …; newest 10.x: 10.1.0".
    fn what_exists(&self, spec: &str, major: u64) -> String {
        let mut exists = format!("nearest: {}", nearest(spec, &self.rocm_versions()));
        if let Some(newest) = self.newest_of_major(major) {
            exists.push_str(&format!("; newest {major}.x: {}", newest.version));
        }
        exists
    }

    /// The newest production release of ROCm `major` (10 → 10.1.0), if the matrices list one.
    pub fn newest_of_major(&self, major: u64) -> Option<&RocmRelease> {
        self.production().rev().find(|r| r.version.major() == major)
    }

    /// Why a request is refused on purpose: it names a technology preview, or a series the matrices leave out
    /// (`left_out:`). `None` for a production release and for a version that is simply not listed.
    pub fn rocm_refusal(&self, spec: &str) -> Option<String> {
        let (v, parts) = parse_with_parts(spec).ok()?;
        let exists = || self.what_exists(spec, v.major());
        if let Some(r) = self
            .rocm_release(spec)
            .filter(|r| r.status == ReleaseStatus::Preview)
        {
            return Some(format!(
                "ROCm {} is a technology preview, not a production release; {}",
                r.version,
                exists()
            ));
        }
        if self.rocm_release(spec).is_some() {
            return None;
        }
        let previews: Vec<String> = self
            .rocm
            .releases
            .iter()
            .filter(|r| r.status == ReleaseStatus::Preview && r.version.in_series(&v, parts))
            .map(|r| r.version.to_string())
            .collect();
        if !previews.is_empty() {
            return Some(format!(
                "ROCm {spec} names only technology previews ({}), never picked for a series; {}",
                previews.join(", "),
                exists()
            ));
        }
        // A left-out series is named by major.minor, so `7` alone (which has production releases) is not one.
        let left_out = self.rocm.left_out.iter().find(|l| {
            parts > 1
                && l.series.iter().any(|x| {
                    parse_with_parts(x)
                        .is_ok_and(|(s, _)| s.major() == v.major() && s.minor() == v.minor())
                })
        })?;
        Some(format!(
            "ROCm {spec} is left out of the matrices ({}); {}",
            left_out.why,
            exists()
        ))
    }

    /// The ROCm-on-WSL record of release `spec` (three parts: `6.1.3`).
    pub fn wsl_release(&self, spec: &str) -> Option<&WslRelease> {
        let (v, parts) = parse_with_parts(spec).ok()?;
        (parts == 3)
            .then(|| self.rocm.wsl.iter().find(|w| w.release == v))
            .flatten()
    }

    /// Production releases, oldest first.
    pub fn production(&self) -> impl DoubleEndedIterator<Item = &RocmRelease> {
        self.rocm
            .releases
            .iter()
            .filter(|r| r.status == ReleaseStatus::Production)
    }

    /// The newest production ROCm release (whatever its stream).
    pub fn newest_rocm(&self) -> &RocmRelease {
        self.production()
            .next_back()
            .or(self.rocm.releases.last())
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
            Some((r.ships_driver.clone()?, r.is_unconfirmed("amdgpu_dkms")))
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

    /// The GPU model a runtime's device name names (`AMD Radeon RX 6800 XT` is one of "AMD Radeon RX 6900 XT /
    /// 6800 XT / 6800"): compared without the vendor, case, spaces or a parenthesis (`(Navi 23)`).
    pub fn gpu_by_name(&self, vendor: Vendor, name: &str) -> Option<&GpuModel> {
        let want = model_key(name);
        if want.is_empty() {
            return None;
        }
        self.gpus.gpus.iter().find(|g| {
            g.vendor == vendor && model_names(&g.name).iter().any(|n| model_key(n) == want)
        })
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
    /// The release builds neither the target nor its override target: its `built:` lists leave it out.
    OverrideNotBuilt(&'m OverrideAdvice),
    /// The release lacks the target, and the matrices cannot say whether it builds the override target
    /// (no `built:` data, not on AMD's list): the field-practice override, unconfirmed. `nearest` is the
    /// closest release whose data does say.
    OverrideUnknown {
        /// The override gpus.yaml names.
        advice: &'m OverrideAdvice,
        /// The closest release that has `built:` data or lists the override target.
        nearest: Option<&'m Version>,
    },
    /// The release lacks the target and no override is known.
    NoOverride,
}

impl GfxRun<'_> {
    /// True when the device runs on the release, natively or through the override.
    pub fn runs(&self) -> bool {
        matches!(
            self,
            GfxRun::Native(_)
                | GfxRun::BuiltNotSupported(_)
                | GfxRun::Override(_)
                | GfxRun::OverrideUnknown { .. }
        )
    }

    /// True when the answer rests on data the matrices lack (an override whose target may not be built).
    pub fn is_unconfirmed(&self) -> bool {
        matches!(self, GfxRun::OverrideUnknown { .. })
    }

    /// The closest release whose data says what is built, when this answer is unknown.
    pub fn nearest_known(&self) -> Option<&Version> {
        match self {
            GfxRun::OverrideUnknown { nearest, .. } => *nearest,
            _ => None,
        }
    }

    /// The target whose kernels the device runs when it runs through an override.
    pub fn override_target(&self) -> Option<GfxTarget> {
        match self {
            GfxRun::Override(a) | GfxRun::OverrideUnknown { advice: a, .. } => Some(a.target),
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
            Some(a) => match release.built_state(a.target) {
                Built::Yes => GfxRun::Override(a),
                Built::No => GfxRun::OverrideNotBuilt(a),
                Built::Unknown => GfxRun::OverrideUnknown {
                    advice: a,
                    nearest: self.nearest_known_built(release, a.target),
                },
            },
        }
    }

    /// The release closest to `release` (same stream first, then any) whose data says whether `target` is built.
    fn nearest_known_built(&self, release: &RocmRelease, target: GfxTarget) -> Option<&Version> {
        let at = self
            .rocm
            .releases
            .iter()
            .position(|r| r.version == release.version)?;
        let known: Vec<(usize, &RocmRelease)> = self
            .rocm
            .releases
            .iter()
            .enumerate()
            .filter(|(_, r)| r.built_state(target) != Built::Unknown)
            .collect();
        let distance =
            |(i, r): &(usize, &RocmRelease)| (r.stream != release.stream, i.abs_diff(at), *i < at);
        known
            .iter()
            .min_by_key(|x| distance(x))
            .map(|(_, r)| &r.version)
    }
}

/// Whether a release ships kernels for a target, as far as the matrices know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Built {
    /// Listed (supported, deprecated or experimental), or in every `built:` component.
    Yes,
    /// The release's `built:` lists leave it out.
    No,
    /// Not on the release's list and no `built:` data: the matrices cannot say (never "not built").
    Unknown,
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

    /// Whether the release builds `target`: yes (listed, or in every `built:` component), no (its `built:`
    /// lists leave it out), or unknown (neither listed nor any `built:` data).
    pub fn built_state(&self, target: GfxTarget) -> Built {
        if self.builds(target) {
            Built::Yes
        } else if self.built.is_empty() {
            Built::Unknown
        } else {
            Built::No
        }
    }

    /// True when the release has a `built:` list and every component in it ships kernels for `target`.
    pub fn built_by_components(&self, target: GfxTarget) -> bool {
        !self.built.is_empty() && self.built.iter().all(|b| b.targets.contains(&target))
    }

    /// The distro entry for os-release `ID`/`VERSION_ID`: the same version in canonical form (SLES `15-SP5`
    /// is `15.5`), else a row naming only the major version (`rocky 9` for `9.6`). Where a release lists the
    /// version once per GPU class, the first row.
    pub fn distro(&self, id: &str, version_id: &str) -> Option<&DistroSupport> {
        self.distro_rows(id, version_id).into_iter().next()
    }

    /// Every row for os-release `ID`/`VERSION_ID` (one per GPU class where AMD's tables split support).
    pub fn distro_rows(&self, id: &str, version_id: &str) -> Vec<&DistroSupport> {
        let same = canonical_distro_version(version_id);
        let exact: Vec<&DistroSupport> = self
            .distros
            .iter()
            .filter(|d| d.id == id && canonical_distro_version(&d.version) == same)
            .collect();
        if !exact.is_empty() {
            return exact;
        }
        self.distros
            .iter()
            .filter(|d| d.id == id && distro_version_matches(&d.version, version_id))
            .collect()
    }

    /// The row for this OS that covers the most of `gpus` (the first on a tie), and the GPUs it leaves out:
    /// each judged by its model, then its gfx target ([`DistroSupport::covers`]).
    pub fn distro_for<'g>(
        &self,
        id: &str,
        version_id: &str,
        gpus: &[HostGpu<'g>],
    ) -> Option<(&DistroSupport, Vec<HostGpu<'g>>)> {
        self.distro_rows(id, version_id)
            .into_iter()
            .map(|d| {
                let left_out: Vec<HostGpu<'g>> =
                    gpus.iter().copied().filter(|g| !d.covers(g)).collect();
                (d, left_out)
            })
            .min_by_key(|(_, left_out)| left_out.len())
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

    /// Where AMD's packages install this release: `/opt/rocm-7.2.4`, `/opt/rocm/core-10.1`.
    pub fn install_prefix(&self) -> String {
        self.stream.install_prefix(&self.version)
    }

    /// How AMD documents installing this release's user space.
    pub fn install_how(&self) -> String {
        match self.stream {
            RocmStream::Legacy => "amdgpu-install --usecase=rocm".into(),
            RocmStream::CoreSdk => format!(
                "apt or dnf install amdrocm{} from AMD's repository",
                self.version.short()
            ),
        }
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

/// Every name a combined model name stands for: "AMD Radeon RX 6900 XT / 6800 XT / 6800" is the RX 6900 XT, the
/// RX 6800 XT and the RX 6800 (an alternative without the family takes the first name's, up to its first number).
fn model_names(name: &str) -> Vec<String> {
    let mut alts = name.split(" / ");
    let Some(first) = alts.next() else {
        return vec![];
    };
    let family_end = first
        .split_whitespace()
        .take_while(|w| !w.chars().any(|c| c.is_ascii_digit()))
        .map(|w| w.len() + 1)
        .sum::<usize>()
        .min(first.len());
    let family = &first[..family_end];
    let mut out = vec![first.to_string()];
    for alt in alts {
        out.push(alt.to_string());
        out.push(format!("{family}{alt}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runtime_name_finds_its_model_among_a_combined_name() {
        let m = Matrices::embedded().unwrap();
        let by = |n: &str| m.gpu_by_name(Vendor::Amd, n).map(|g| g.name.as_str());
        let navi21 = Some("AMD Radeon RX 6900 XT / 6800 XT / 6800");
        assert_eq!(by("AMD Radeon RX 6800 XT"), navi21);
        assert_eq!(by("AMD Radeon RX 6800"), navi21);
        assert_eq!(by("amd radeon rx 6900xt"), navi21);
        assert_eq!(
            by("AMD Radeon RX 7700 XT"),
            Some("AMD Radeon RX 7800 XT / 7700 XT")
        );
        assert_eq!(
            by("AMD Radeon RX 6650 XT"),
            Some("AMD Radeon RX 6650 XT (Navi 23)")
        );
        assert_eq!(by("AMD Radeon RX 6800 XTX"), None);
        assert_eq!(by("AMD Radeon RX"), None);
        assert_eq!(by(""), None);
        assert!(m
            .gpu_by_name(Vendor::Nvidia, "AMD Radeon RX 6800 XT")
            .is_none());
    }

    #[test]
    fn a_combined_name_stands_for_each_model_with_the_family_of_the_first() {
        assert_eq!(
            model_names("AMD Instinct MI250 / MI250X"),
            ["AMD Instinct MI250", "MI250X", "AMD Instinct MI250X"]
        );
        assert_eq!(
            model_names("AMD Radeon PRO W6800"),
            ["AMD Radeon PRO W6800"]
        );
    }
}
