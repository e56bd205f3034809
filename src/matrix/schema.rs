//! The shapes of the four matrix files. Every struct refuses unknown keys.

use super::deferred::Deferred;
use crate::gfx::GfxTarget;
use crate::version::{DriverVersion, Version};
use serde::{Deserialize, Serialize};

/// How sure the reference is of a record: where its facts came from, and the values it could not confirm, so
/// findings can say so. Every record has `source` and `unconfirmed` fields of its own, not a `#[serde(flatten)]`
/// struct: flatten buffers each record whole and reads it a second time (much of the time loading the matrices
/// took), and serde located its errors only at the start of the record and named no keys allowed.
pub trait Sourced {
    /// Where the facts came from (a document, commit or table).
    fn source(&self) -> Option<&str>;

    /// Fields of this record the reference marks unconfirmed (e.g. `cuda`, `peaks.fp16_tflops`, `*`).
    fn unconfirmed(&self) -> &[String];

    /// True when `field` (or the whole record, `*`) is marked unconfirmed.
    fn is_unconfirmed(&self, field: &str) -> bool {
        self.unconfirmed().iter().any(|f| f == field || f == "*")
    }
}

/// `impl Sourced` for records with `source: Option<String>` and `unconfirmed: Vec<String>` fields.
macro_rules! sourced {
    ($($record:ty),+ $(,)?) => {$(
        impl Sourced for $record {
            fn source(&self) -> Option<&str> {
                self.source.as_deref()
            }

            fn unconfirmed(&self) -> &[String] {
                &self.unconfirmed
            }
        }
    )+};
}

sourced!(
    WslRelease,
    LeftOut,
    RocmRelease,
    BuiltTargets,
    RocmImage,
    RocmWheels,
    CudaFamily,
    CudaRelease,
    NgcRelease,
    GfxTargetInfo,
    GpuModel,
    super::firmware::KnownBadFirmware,
);

// ---------------------------------------------------------------- rocm.yaml

/// `rocm.yaml`: ROCm releases.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RocmFile {
    /// Format version of this file; 1.
    pub schema_version: u32,
    /// One entry per ROCm release (`6.2.0`, `6.2.1`, …).
    pub releases: Vec<RocmRelease>,
    /// Releases deliberately left out (the TheRock technology previews), so a request for one is answered.
    #[serde(default)]
    pub left_out: Vec<LeftOut>,
    /// AMD's "ROCm on WSL" releases: what runs inside Windows Subsystem for Linux 2, through the Windows driver.
    #[serde(default)]
    pub wsl: Vec<WslRelease>,
}

/// One ROCm release as AMD supports it on WSL 2 (the Radeon "ROCm on WSL" packages): the GPUs, the Windows
/// driver and the Linux distributions AMD names for it. Under WSL the Linux kernel, amdgpu and `/dev/kfd` play no
/// part: the GPU is reached through `/dev/dxg` and the Windows driver.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WslRelease {
    /// The ROCm release, e.g. `6.1.3`.
    pub release: Version,
    /// The Windows driver AMD names for it (AMD Software: Adrenalin Edition), e.g. `24.6.1`; as AMD writes it. None
    /// where AMD names no version (librocdxg's table: "AMD Windows x86 drivers", the current one).
    #[serde(default)]
    pub windows_driver: Option<String>,
    /// The librocdxg (ROCDXG) release AMD pairs it with, e.g. `1.1.0`: from ROCm 7.1 the runtime reaches `/dev/dxg`
    /// through that library, built inside WSL and loaded with `HSA_ENABLE_DXG_DETECTION=1`, not through the 6.x WSL
    /// packages (`amdgpu-install --usecase=wsl`).
    #[serde(default)]
    pub rocdxg: Option<String>,
    /// The WSL distributions, as os-release `ID` and `VERSION_ID` (`ubuntu` `22.04`).
    pub distros: Vec<WslDistro>,
    /// The GPU models AMD lists, by marketing name without the vendor (`Radeon RX 7900 XTX`).
    pub gpus: Vec<String>,
    /// Their gfx targets.
    pub gfx: Vec<GfxTarget>,
    /// The PyTorch AMD publishes for it on WSL.
    #[serde(default)]
    pub pytorch: Vec<String>,
    /// Free-form notes shown in findings.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// A distribution AMD supports ROCm on WSL on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WslDistro {
    /// os-release `ID` (`ubuntu`).
    pub id: String,
    /// os-release `VERSION_ID` (`22.04`).
    pub version: String,
}

impl WslRelease {
    /// True when AMD lists the GPU named `name` (rocminfo's `Marketing Name`, `AMD Radeon RX 7900 GRE`): compared
    /// without the vendor, case or spaces.
    pub fn lists_gpu(&self, name: &str) -> bool {
        let want = model_key(name);
        self.gpus.iter().any(|g| model_key(g) == want)
    }

    /// `Radeon RX 7900 XTX, Radeon RX 7900 XT, …`.
    pub fn gpus_text(&self) -> String {
        self.gpus.join(", ")
    }

    /// The Windows driver it needs, in words: `the WSL edition of Adrenalin 24.6.1`, or AMD's current driver where
    /// AMD names no version.
    pub fn driver_text(&self) -> String {
        match &self.windows_driver {
            Some(v) => format!("the WSL edition of Adrenalin {v}"),
            None => "a current AMD Windows driver (AMD names no version)".to_string(),
        }
    }
}

/// A model name reduced for comparison: no vendor word, no parenthesis, no spaces, lower case.
pub(crate) fn model_key(name: &str) -> String {
    let n = name
        .split(" (")
        .next()
        .unwrap_or(name)
        .trim()
        .to_ascii_lowercase();
    let n = ["amd ", "nvidia "]
        .iter()
        .find_map(|p| n.strip_prefix(p))
        .unwrap_or(&n);
    n.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Release series left out of the matrices on purpose, and why.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeftOut {
    /// The `X.Y` series, e.g. `["7.9", "7.10"]`.
    pub series: Vec<String>,
    /// Why, in one phrase: "TheRock technology previews, not for production use".
    pub why: String,
    /// Where that is said.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// One ROCm release.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RocmRelease {
    /// The release, e.g. `6.2.4`.
    pub version: Version,
    /// The release stream: the 5.x-7.2.x line (`legacy`) or the ROCm Core SDK built with TheRock (`core-sdk`).
    pub stream: RocmStream,
    /// `production`, or `preview` for a technology preview (never a default or a series pick).
    pub status: ReleaseStatus,
    /// Supported distributions with their kernels.
    pub distros: Deferred<Vec<DistroSupport>>,
    /// gfx targets and their status in this release.
    pub gfx: Vec<GfxSupport>,
    /// amdgpu kernel-driver (KMD) series this user space works with, e.g. `6.4` or `30.10` (a `.x` series when two parts).
    pub kernel_drivers: Vec<Version>,
    /// The amdgpu driver release that ships with this release (`6.2`, `30.10.1`), when known.
    #[serde(default)]
    pub ships_driver: Option<Version>,
    /// The version `/sys/module/amdgpu/version` shows for that driver's amdgpu-dkms build (e.g. `6.8.5` for ROCm 6.2).
    #[serde(default)]
    pub amdgpu_dkms: Option<Version>,
    /// What the release's libraries ship kernels for, apart from AMD's supported list: each entry one
    /// component (rocBLAS, the PyTorch wheel). A target every entry builds runs even if `gfx` does not list
    /// it (doctor warns). Empty: only `gfx` says what is built.
    #[serde(default)]
    pub built: Deferred<Vec<BuiltTargets>>,
    /// PyTorch versions AMD supports on this release.
    #[serde(default)]
    pub pytorch: Deferred<Vec<String>>,
    /// Real `rocm/pytorch` image tags for this release.
    #[serde(default)]
    pub images: Deferred<Vec<RocmImage>>,
    /// PyTorch as AMD publishes it for a Core SDK release: pip wheels from AMD's index, on a plain OS image.
    #[serde(default)]
    pub wheels: Deferred<Option<RocmWheels>>,
    /// Free-form notes shown in findings.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// The two ROCm release streams, which version numbers alone do not tell apart (7.14 is Core SDK, 7.2 legacy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RocmStream {
    /// 5.x to 7.2.x: installed as `/opt/rocm-X.Y.Z`, packages `rocm-*`, `rocm/pytorch` images.
    Legacy,
    /// The ROCm Core SDK (7.14 on, and the TheRock previews 7.9-7.13): installed as `/opt/rocm/core-X.Y`,
    /// packages `amdrocm-*`, PyTorch as wheels from repo.amd.com.
    CoreSdk,
}

impl RocmStream {
    /// The name the matrices and reports use: `legacy` or `core-sdk`.
    pub fn as_str(self) -> &'static str {
        match self {
            RocmStream::Legacy => "legacy",
            RocmStream::CoreSdk => "core-sdk",
        }
    }

    /// Where AMD's packages install a release of this stream (`/opt/rocm-7.2.4`, `/opt/rocm/core-10.1`).
    pub fn install_prefix(self, v: &Version) -> String {
        match self {
            RocmStream::Legacy => format!("/opt/rocm-{v}"),
            RocmStream::CoreSdk => format!("/opt/rocm/core-{}", v.short()),
        }
    }
}

/// Whether a release is for production use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReleaseStatus {
    /// A production release.
    Production,
    /// A technology preview (TheRock 7.9-7.13): listed, never picked unless named exactly.
    Preview,
}

impl ReleaseStatus {
    /// `production` or `preview`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReleaseStatus::Production => "production",
            ReleaseStatus::Preview => "preview",
        }
    }
}

/// The gfx targets one component of a release ships kernels for (rocBLAS/Tensile, the PyTorch wheel).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltTargets {
    /// What ships the kernels, e.g. `rocBLAS` or `PyTorch wheel`.
    pub component: String,
    /// The targets it has kernels for.
    pub targets: Vec<GfxTarget>,
    /// Where the list comes from (a build script or CMake list at a commit).
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// A distribution version supported by a ROCm release.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DistroSupport {
    /// os-release `ID`: `ubuntu`, `rhel`, `sles`, `debian`, `ol`, `rocky`, `centos`, `azurelinux`.
    pub id: String,
    /// os-release `VERSION_ID` as the distro writes it: `22.04`, `9.4`, `15-SP5`, `12`.
    pub version: String,
    /// Point releases named by the docs (Ubuntu `22.04.5`), informative.
    #[serde(default)]
    pub point_releases: Vec<String>,
    /// Supported kernel series on this distro version.
    pub kernels: Vec<KernelSupport>,
    /// The gfx targets AMD supports this OS version for, where its tables split support by GPU
    /// ("MI325X, MI300X ... only" is `[gfx942, gfx90a]`); empty: every target of the release.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gfx: Vec<GfxTarget>,
    /// The GPU models AMD supports this OS version for, where its table names models rather than whole
    /// targets (gpus.yaml name, short name such as `MI300X`, or PCI id); empty: the `gfx` list decides.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// GPU models AMD's table or footnote leaves out of this OS version although their target is listed
    /// (`[MI350P]` on Ubuntu 22.04 with 10.0.0); judged before `gfx`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_gpus: Vec<String>,
    /// GPUs limited to this distro (e.g. "MI300X only"), shown with the finding.
    #[serde(default)]
    pub note: Option<String>,
}

impl DistroSupport {
    /// True when the OS version is supported for `target` (no `gfx:` list: for every target).
    pub fn supports_gfx(&self, target: GfxTarget) -> bool {
        self.gfx.is_empty() || self.gfx.contains(&target)
    }
}

/// A kernel series (`5.15`, `6.8`, `5.14.0-427`) and how the distro ships it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelSupport {
    /// `major.minor` series the host kernel must be in.
    pub series: String,
    /// How the distro ships it.
    pub kind: KernelKind,
}

impl KernelSupport {
    /// The `major.minor` series of the row (`5.14` for a pinned build `5.14.0-427`).
    pub fn major_minor(&self) -> String {
        let base = self.series.split('-').next().unwrap_or("");
        base.split('.').take(2).collect::<Vec<_>>().join(".")
    }
}

/// How a distribution ships a kernel series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KernelKind {
    /// The release's general-availability kernel.
    Ga,
    /// Ubuntu's hardware-enablement kernel.
    Hwe,
    /// Oracle's Unbreakable Enterprise Kernel.
    Uek,
    /// OEM kernel.
    Oem,
}

/// The status of a gfx target in one release.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GfxSupport {
    /// The target.
    pub target: GfxTarget,
    /// Its status.
    pub status: SupportStatus,
    /// A qualifier such as "Ubuntu only".
    #[serde(default)]
    pub note: Option<String>,
}

/// Support level of a target in a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SupportStatus {
    /// Listed as supported.
    Supported,
    /// Works but marked for removal.
    Deprecated,
    /// Listed as experimental (e.g. PyTorch preview).
    Experimental,
    /// Explicitly not supported.
    Unsupported,
}

/// A `rocm/pytorch` image tag.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RocmImage {
    /// The tag, e.g. `rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0`.
    pub tag: String,
    /// Ubuntu version of the image.
    pub ubuntu: String,
    /// Python version of the image.
    pub python: String,
    /// PyTorch version of the image.
    pub pytorch: String,
    /// Content digest, when the matrix pins one.
    #[serde(default)]
    pub digest: Option<String>,
    /// Where the tag was seen.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// AMD's PyTorch wheels for a Core SDK release, as its docs install them: `torch[device-gfxNNN]` from AMD's
/// multi-arch pip index (the wheel brings `rocm[libraries]` and the GPU's kernels), on a plain OS image.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RocmWheels {
    /// The pip index, e.g. `https://repo.amd.com/rocm/whl-multi-arch/` (an `https://` URL).
    pub index: String,
    /// The OS image the wheels go on, `repository:tag` (e.g. `ubuntu:24.04`).
    pub base: String,
    /// Ubuntu version of that image.
    pub ubuntu: String,
    /// Its Python (`python3`), which the wheels must support.
    pub python: String,
    /// The `[device-*]` extras the index has: one per gfx target with kernels in the wheels.
    pub devices: Vec<GfxTarget>,
    /// The torch builds for this release, newest first.
    pub builds: Vec<WheelBuild>,
    /// Where the index, the version scheme and the builds come from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// One torch build on a wheel index and the torchvision that goes with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WheelBuild {
    /// The torch version, without the local `+rocmX.Y.Z` label the index adds (e.g. `2.13.0`).
    pub pytorch: String,
    /// The torchvision series built with it (e.g. `0.28`).
    pub torchvision: String,
}

impl WheelBuild {
    /// The torch version on the index for ROCm release `rocm`: AMD's stable builds carry it as the local label,
    /// `2.13.0+rocm10.0.0` (TheRock `docs/packaging/versioning.md`).
    pub fn torch(&self, rocm: &crate::version::Version) -> String {
        format!("{}+rocm{rocm}", self.pytorch)
    }

    /// The torchvision requirement for this build: its series as a range that admits a pre-release,
    /// `>=0.29.0a0,<0.30`. TheRock gives each wheel the version in the project's `version.txt` at the ref it
    /// builds (`build_tools/github_actions/generate_pytorch_source_manifest.py`), which on a torchvision branch
    /// can read `0.29.0a0`: pip's `==0.29.*` skips pre-releases, so it would find nothing. The upper bound
    /// keeps the next series' pre-releases out (PEP 440 `<V`).
    pub fn torchvision_requirement(&self) -> String {
        match crate::version::parse_with_parts(&self.torchvision) {
            Ok((v, _)) => format!(
                ">={}.{}.0a0,<{}.{}",
                v.major(),
                v.minor(),
                v.major(),
                v.minor() + 1
            ),
            // The loader refuses a torchvision that is not a version; keep the old form if one slips through.
            Err(_) => format!("=={}.*", self.torchvision),
        }
    }
}

// ---------------------------------------------------------------- cuda.yaml

/// `cuda.yaml`: CUDA toolkit releases and their driver floors.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaFile {
    /// Format version of this file; 1.
    pub schema_version: u32,
    /// Minor-version compatibility floor of each CUDA major.
    pub families: Vec<CudaFamily>,
    /// Toolkit releases, one per update (12.4.0, 12.4.1, …).
    pub releases: Vec<CudaRelease>,
}

/// A CUDA major version's minor-version-compatibility floor.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaFamily {
    /// CUDA major, e.g. 12.
    pub major: u32,
    /// Minimum Linux driver for minor-version compatibility, e.g. `525.60.13`.
    pub min_driver: DriverVersion,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// One CUDA toolkit release.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaRelease {
    /// The release, e.g. `12.4.1`.
    pub version: Version,
    /// How NVIDIA names it, e.g. `12.4 Update 1`.
    pub label: String,
    /// Minimum Linux x86_64 driver (Table 3).
    pub min_driver_linux: DriverVersion,
    /// Minimum Windows driver, when there is one.
    #[serde(default)]
    pub min_driver_windows: Option<DriverVersion>,
    /// Compute capabilities this release compiles for (`7.5`, `9.0`, …).
    pub compute_capabilities: Vec<String>,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

// ---------------------------------------------------------------- ngc.yaml

/// `ngc.yaml`: NVIDIA NGC PyTorch container releases.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NgcFile {
    /// Format version of this file; 1.
    pub schema_version: u32,
    /// Image repository, `nvcr.io/nvidia/pytorch`.
    pub image: String,
    /// One entry per monthly release.
    pub releases: Vec<NgcRelease>,
}

/// One NGC PyTorch release (`YY.MM`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NgcRelease {
    /// `YY.MM`, e.g. `24.05`.
    pub release: String,
    /// Image tag, e.g. `24.05-py3`.
    pub tag: String,
    /// PyTorch version inside.
    pub pytorch: String,
    /// CUDA version inside.
    pub cuda: Version,
    /// Ubuntu version of the image.
    pub ubuntu: String,
    /// Python version of the image.
    pub python: String,
    /// Minimum driver for consumer GPUs (the full CUDA minimum).
    pub min_driver: DriverVersion,
    /// Datacenter forward-compatibility branches (R470.57, R525.85, …).
    #[serde(default)]
    pub datacenter_drivers: Vec<DriverVersion>,
    /// Content digest, when pinned.
    #[serde(default)]
    pub digest: Option<String>,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

// ---------------------------------------------------------------- gpus.yaml

/// `gpus.yaml`: GPU models and gfx targets.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpusFile {
    /// Format version of this file; 1.
    pub schema_version: u32,
    /// gfx targets: architecture family and the override a consumer part may use.
    pub gfx_targets: Vec<GfxTargetInfo>,
    /// GPU models by PCI id.
    pub gpus: Vec<GpuModel>,
}

/// What is known about a gfx target regardless of the release.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GfxTargetInfo {
    /// The target.
    pub target: GfxTarget,
    /// Architecture (`CDNA3`, `RDNA2`, `GCN5.1`, …).
    pub arch: String,
    /// The override to use when a release lacks this target, if one is known.
    #[serde(default)]
    pub override_to: Option<OverrideAdvice>,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it); `[arch]` when the architecture is
    /// general knowledge.
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// A known `HSA_OVERRIDE_GFX_VERSION` for a target.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OverrideAdvice {
    /// The target the runtime should treat the device as, e.g. `gfx1030`.
    pub target: GfxTarget,
    /// `high`, `medium` or `low`, from the reference.
    pub confidence: Confidence,
    /// True when the reference says overriding crashes (different ISA): warn instead of overriding.
    #[serde(default)]
    pub crashes: bool,
    /// Evidence and caveats.
    #[serde(default)]
    pub note: Option<String>,
}

/// How far the reference trusts a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Confirmed by several users or a primary source.
    High,
    /// Plausible, not confirmed by a primary source.
    Medium,
    /// Mixed results.
    Low,
}

pub use crate::vendor::Vendor;

/// A GPU model.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuModel {
    /// Marketing name.
    pub name: String,
    /// Vendor.
    pub vendor: Vendor,
    /// PCI device ids (`0x744c`); one model may have several.
    pub pci_ids: Vec<String>,
    /// AMD gfx target.
    #[serde(default)]
    pub gfx: Option<GfxTarget>,
    /// NVIDIA compute capability, e.g. `9.0`.
    #[serde(default)]
    pub compute_capability: Option<String>,
    /// Architecture name (`CDNA3`, `Hopper`).
    #[serde(default)]
    pub arch: Option<String>,
    /// VRAM in GiB (0 for APUs that share system memory).
    #[serde(default)]
    pub vram_gib: Option<f64>,
    /// True for an integrated GPU (APU).
    #[serde(default)]
    pub integrated: bool,
    /// Datasheet peaks.
    #[serde(default)]
    pub peaks: Option<Peaks>,
    /// Where the facts came from.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

/// Datasheet peaks, dense.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Peaks {
    /// FP32 vector TFLOP/s.
    #[serde(default)]
    pub fp32_tflops: Option<f64>,
    /// FP16 dense matrix TFLOP/s.
    #[serde(default)]
    pub fp16_tflops: Option<f64>,
    /// BF16 dense matrix TFLOP/s.
    #[serde(default)]
    pub bf16_tflops: Option<f64>,
    /// Memory bandwidth in GB/s.
    #[serde(default)]
    pub mem_bw_gbs: Option<f64>,
    /// How many devices torch sees in one package whose figures these are (MI250/MI250X: 2 GCDs, each its own
    /// device): each device's peak is the package's divided by this. Absent: 1.
    #[serde(default)]
    pub gcds: Option<u32>,
    /// Compute-partition modes (`DPX`, `QPX`, `CPX`) and how many logical devices each makes of one GPU: in a mode,
    /// each device's peak is the GPU's divided by that number.
    #[serde(default)]
    pub partitions: std::collections::BTreeMap<String, u32>,
}

impl Peaks {
    /// The share of these package figures one device has: `(divisor, why)`, given how many of the run's devices sit
    /// at one PCI address (`sharing`, 1 when unknown). `None` when devices share an address in a way no listed
    /// partition mode explains.
    pub fn split(&self, sharing: u32) -> Option<(u32, Option<String>)> {
        let gcds = self.gcds.unwrap_or(1).max(1);
        if sharing <= 1 {
            return Some((
                gcds,
                (gcds > 1).then(|| format!("per GCD: package / {gcds}")),
            ));
        }
        let (mode, n) = self.partitions.iter().find(|(_, n)| **n == sharing)?;
        Some((
            gcds * n,
            Some(format!("{mode} partition: {n} devices at one PCI address")),
        ))
    }
}

/// The field names of each record, which `unconfirmed:` may name (besides `*`).
pub mod fields {
    /// A ROCm release.
    pub const ROCM_RELEASE: &[&str] = &[
        "version",
        "stream",
        "status",
        "distros",
        "gfx",
        "kernel_drivers",
        "ships_driver",
        "amdgpu_dkms",
        "built",
        "pytorch",
        "images",
        "wheels",
        "notes",
    ];
    /// A `wsl:` entry of rocm.yaml.
    pub const WSL_RELEASE: &[&str] = &[
        "release",
        "windows_driver",
        "rocdxg",
        "distros",
        "gpus",
        "gfx",
        "pytorch",
        "notes",
    ];
    /// A `left_out:` entry of rocm.yaml.
    pub const LEFT_OUT: &[&str] = &["series", "why"];
    /// A `built:` entry of a ROCm release.
    pub const BUILT_TARGETS: &[&str] = &["component", "targets"];
    /// A `rocm/pytorch` image.
    pub const ROCM_IMAGE: &[&str] = &["tag", "ubuntu", "python", "pytorch", "digest"];
    /// A Core SDK release's PyTorch wheels.
    pub const ROCM_WHEELS: &[&str] = &["index", "base", "ubuntu", "python", "devices", "builds"];
    /// A CUDA major's compatibility floor.
    pub const CUDA_FAMILY: &[&str] = &["major", "min_driver"];
    /// A CUDA release.
    pub const CUDA_RELEASE: &[&str] = &[
        "version",
        "label",
        "min_driver_linux",
        "min_driver_windows",
        "compute_capabilities",
    ];
    /// An NGC release.
    pub const NGC_RELEASE: &[&str] = &[
        "release",
        "tag",
        "pytorch",
        "cuda",
        "ubuntu",
        "python",
        "min_driver",
        "datacenter_drivers",
        "digest",
    ];
    /// A gfx target.
    pub const GFX_TARGET: &[&str] = &["target", "arch", "override_to"];
    /// A GPU model; its peaks are named `peaks.<field>`.
    pub const GPU_MODEL: &[&str] = &[
        "name",
        "vendor",
        "pci_ids",
        "gfx",
        "compute_capability",
        "arch",
        "vram_gib",
        "integrated",
        "peaks",
    ];
    /// Datasheet peaks, under `peaks.`.
    pub const PEAKS: &[&str] = &[
        "fp32_tflops",
        "fp16_tflops",
        "bf16_tflops",
        "mem_bw_gbs",
        "gcds",
        "partitions",
    ];
}
