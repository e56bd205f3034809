//! Answers to `rocmenv matrix` queries: plain data that the text and JSON reporters render.

use super::distro::{canonical_distro_version, distro_version_matches};
use super::schema::*;
use super::{GfxRun, Matrices};
use crate::gfx::GfxTarget;
use crate::version::{DriverVersion, Version};
use serde::Serialize;

/// A validated `rocmenv matrix` question (nothing looked up yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatrixQuery {
    /// One ROCm release: `7.2.4`, or `7.2` for the newest of the series.
    Rocm(String),
    /// Every ROCm release with its stream and status.
    RocmReleases,
    /// How a gfx target runs on every ROCm release.
    Gfx(GfxTarget),
    /// Releases that list a kernel series, optionally on one distro version (`ubuntu`, `24.04`).
    Kernel {
        /// `major.minor`, e.g. `6.8`.
        series: String,
        /// os-release `ID` and `VERSION_ID`.
        os: Option<(String, String)>,
    },
    /// One CUDA release or series: `12.4`, `12.4.1`.
    Cuda(String),
    /// One NGC PyTorch release: `24.05`.
    Ngc(String),
    /// What the matrices hold.
    Check,
    /// GPU models by name part or PCI device id.
    Gpu(super::GpuQuery),
}

/// Why a query has no answer: the value asked about is not in the matrices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotListed {
    /// The option the value came from (`os` for `--os`), when it was not the query's own argument.
    pub field: Option<&'static str>,
    /// What was not found, in words (`ROCm 7.2.9`).
    pub what: String,
    /// The nearest values that are listed.
    pub nearest: String,
}

/// The answer to one query.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum MatrixAnswer<'m> {
    /// `matrix rocm X.Y[.Z]`.
    Rocm(RocmAnswer<'m>),
    /// `matrix rocm`.
    RocmReleases(RocmReleasesAnswer),
    /// `matrix rocm X.Y.Z` for a release AMD published for WSL only (`6.1.3`).
    RocmWsl(RocmWslAnswer<'m>),
    /// `matrix gfx`.
    Gfx(GfxAnswer<'m>),
    /// `matrix kernel`.
    Kernel(KernelAnswer),
    /// `matrix cuda`.
    Cuda(CudaAnswer<'m>),
    /// `matrix ngc`.
    Ngc(NgcAnswer<'m>),
    /// `matrix check`.
    Check(CheckAnswer),
    /// `matrix gpu`.
    Gpu(super::GpuAnswer<'m>),
}

impl MatrixAnswer<'_> {
    /// The query kind: `rocm`, `gfx`, `kernel`, `cuda`, `ngc`, `check` or `gpu` (the JSON key of the answer).
    pub fn kind(&self) -> &'static str {
        match self {
            MatrixAnswer::Rocm(_) => "rocm",
            MatrixAnswer::RocmReleases(_) => "rocm_releases",
            MatrixAnswer::RocmWsl(_) => "rocm_wsl",
            MatrixAnswer::Gfx(_) => "gfx",
            MatrixAnswer::Kernel(_) => "kernel",
            MatrixAnswer::Cuda(_) => "cuda",
            MatrixAnswer::Ngc(_) => "ngc",
            MatrixAnswer::Check(_) => "check",
            MatrixAnswer::Gpu(_) => "gpu",
        }
    }
}

/// `matrix rocm X.Y[.Z]`: the release, as the matrix holds it.
#[derive(Debug, Serialize)]
pub struct RocmAnswer<'m> {
    /// What was asked (`7.2` picks the newest 7.2.x).
    pub requested: String,
    /// The release record: distros and kernels, gfx, drivers, PyTorch, images, notes, source, unconfirmed.
    pub release: &'m RocmRelease,
    /// AMD's ROCm-on-WSL record of the same release (7.2.x), where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wsl: Option<&'m WslRelease>,
}

/// `matrix rocm X.Y.Z` for a ROCm-on-WSL release the Linux tables do not list.
#[derive(Debug, Serialize)]
pub struct RocmWslAnswer<'m> {
    /// What was asked.
    pub requested: String,
    /// AMD's WSL record: GPUs, Windows driver, distributions, PyTorch, notes, source.
    pub wsl: &'m WslRelease,
}

/// `matrix rocm`: every release, its stream and status, and what a default target picks.
#[derive(Debug, Serialize)]
pub struct RocmReleasesAnswer {
    /// Oldest first.
    pub releases: Vec<RocmReleaseRow>,
    /// The newest production release: what a target without a version, and `--rocm` unset, start from.
    pub newest: Version,
}

/// One release in the list.
#[derive(Debug, Serialize)]
pub struct RocmReleaseRow {
    /// The release.
    pub version: Version,
    /// `legacy` or `core-sdk`.
    pub stream: RocmStream,
    /// `production` or `preview`.
    pub status: ReleaseStatus,
    /// Where AMD's packages install it.
    pub prefix: String,
    /// Newest PyTorch AMD supports on it, when listed.
    pub pytorch: Option<String>,
    /// gfx targets it lists as supported, deprecated or experimental.
    pub gfx: usize,
    /// The fields of the record marked unconfirmed (`*`: all of them), e.g. the rows a release carries from an
    /// earlier one whose own tables were not read.
    pub unconfirmed: Vec<String>,
}

/// `matrix gfx gfxNNNN`: what is known about a target and how it runs on every release.
#[derive(Debug, Serialize)]
pub struct GfxAnswer<'m> {
    /// The target.
    pub target: GfxTarget,
    /// What gpus.yaml says about it (architecture, override, source), when it lists it.
    pub info: Option<&'m GfxTargetInfo>,
    /// GPU models with this target.
    pub gpus: Vec<&'m GpuModel>,
    /// One row per ROCm release, oldest first.
    pub releases: Vec<GfxOnRelease>,
}

/// How a target runs on one release.
#[derive(Debug, Serialize)]
pub struct GfxOnRelease {
    /// The release.
    pub version: Version,
    /// `native`, `built-not-supported`, `override`, `override-unknown` (the override target may not be built:
    /// no data), `override-crashes`, `override-not-built` or `no-override`.
    pub runs: &'static str,
    /// For `override-unknown`: the closest release whose data says whether the override target is built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nearest_known: Option<Version>,
    /// The release's status for the target when it lists it natively.
    pub status: Option<SupportStatus>,
    /// The target whose kernels the device runs through `HSA_OVERRIDE_GFX_VERSION`.
    pub override_to: Option<GfxTarget>,
    /// The `HSA_OVERRIDE_GFX_VERSION` value for that target.
    pub hsa_override_gfx_version: Option<String>,
    /// The release's qualifier for the target (e.g. "Ubuntu only").
    pub note: Option<String>,
}

/// `matrix kernel X.Y [--os ID:VERSION]`: the releases that list a kernel series.
#[derive(Debug, Serialize)]
pub struct KernelAnswer {
    /// The series asked about.
    pub series: String,
    /// The distro filter, `ubuntu:24.04`, when given.
    pub os: Option<String>,
    /// One row per release and distro version that lists the series, oldest release first.
    pub rows: Vec<KernelRow>,
}

/// One release listing a kernel series on one distro version.
#[derive(Debug, Serialize)]
pub struct KernelRow {
    /// The ROCm release.
    pub release: Version,
    /// os-release `ID`.
    pub distro: String,
    /// The version as the matrix writes it (`24.04`, `15-SP5`).
    pub version: String,
    /// The series as listed (`6.8`, or `5.14.0-427` where a distro pins a build).
    pub series: String,
    /// How the distro ships it.
    pub kind: KernelKind,
}

/// `matrix cuda X.Y[.Z]`: the toolkit's driver floors and the NGC images that ship it.
#[derive(Debug, Serialize)]
pub struct CudaAnswer<'m> {
    /// What was asked.
    pub requested: String,
    /// Every update of the series asked about (one for `X.Y.Z`), oldest first.
    pub releases: Vec<&'m CudaRelease>,
    /// The Linux driver the first of them needs (what `--target cuda-X.Y` checks).
    pub min_driver_linux: DriverVersion,
    /// The CUDA major's minor-version-compatibility floor.
    pub family: Option<&'m CudaFamily>,
    /// NGC PyTorch releases built on this CUDA, with their forward-compatibility branches.
    pub ngc: Vec<NgcImage<'m>>,
}

/// An NGC release as an image.
#[derive(Debug, Serialize)]
pub struct NgcImage<'m> {
    /// `nvcr.io/nvidia/pytorch:24.05-py3`.
    pub image: String,
    /// The release record.
    #[serde(flatten)]
    pub release: &'m NgcRelease,
}

/// `matrix ngc YY.MM`: one NGC release and the CUDA it ships.
#[derive(Debug, Serialize)]
pub struct NgcAnswer<'m> {
    /// The release, with its image reference.
    pub release: NgcImage<'m>,
    /// The CUDA release inside, from cuda.yaml.
    pub cuda: Option<&'m CudaRelease>,
    /// Its CUDA major's minor-version-compatibility floor.
    pub family: Option<&'m CudaFamily>,
}

/// `matrix check`: the matrices validated, and what they hold.
#[derive(Debug, Serialize)]
pub struct CheckAnswer {
    /// `embedded` or the directory.
    pub matrices: String,
    /// ROCm releases.
    pub rocm: FileSummary,
    /// CUDA releases.
    pub cuda: FileSummary,
    /// NGC releases.
    pub ngc: FileSummary,
    /// AMD GPU models.
    pub amd_gpus: usize,
    /// NVIDIA GPU models.
    pub nvidia_gpus: usize,
    /// gfx targets described.
    pub gfx_targets: usize,
    /// Records (releases, images, GPUs, targets) with at least one unconfirmed field.
    pub records_with_unconfirmed: usize,
}

/// Counts and range of one file's releases.
#[derive(Debug, Serialize)]
pub struct FileSummary {
    /// How many releases.
    pub releases: usize,
    /// The oldest.
    pub oldest: String,
    /// The newest.
    pub newest: String,
}

impl GfxRun<'_> {
    /// How the target runs, as one word for reports: `native`, `override`, `override-crashes`, ….
    pub fn kind(&self) -> &'static str {
        match self {
            GfxRun::Native(_) => "native",
            GfxRun::BuiltNotSupported(_) => "built-not-supported",
            GfxRun::Override(_) => "override",
            GfxRun::OverrideCrashes(_) => "override-crashes",
            GfxRun::OverrideNotBuilt(_) => "override-not-built",
            GfxRun::OverrideUnknown { .. } => "override-unknown",
            GfxRun::NoOverride => "no-override",
        }
    }
}

impl Matrices {
    /// Answers a query, or says what is not listed and the nearest values that are.
    pub fn answer(&self, q: &MatrixQuery) -> Result<MatrixAnswer<'_>, NotListed> {
        Ok(match q {
            MatrixQuery::Rocm(spec) => match (self.rocm_release(spec), self.wsl_release(spec)) {
                (None, Some(wsl)) => MatrixAnswer::RocmWsl(RocmWslAnswer {
                    requested: spec.clone(),
                    wsl,
                }),
                (release, wsl) => MatrixAnswer::Rocm(RocmAnswer {
                    wsl: wsl.filter(|w| release.is_some_and(|r| r.version == w.release)),
                    requested: spec.clone(),
                    release: release.ok_or_else(|| NotListed {
                        field: None,
                        what: format!("ROCm {spec}"),
                        nearest: crate::matrix::nearest(spec, &self.rocm_versions()),
                    })?,
                }),
            },
            MatrixQuery::RocmReleases => MatrixAnswer::RocmReleases(RocmReleasesAnswer {
                releases: self
                    .rocm
                    .releases
                    .iter()
                    .map(|r| RocmReleaseRow {
                        version: r.version.clone(),
                        stream: r.stream,
                        status: r.status,
                        prefix: r.install_prefix(),
                        pytorch: r.pytorch.first().cloned(),
                        gfx: r
                            .gfx
                            .iter()
                            .filter(|g| g.status != SupportStatus::Unsupported)
                            .count(),
                        unconfirmed: r.unconfirmed.clone(),
                    })
                    .collect(),
                newest: self.newest_rocm().version.clone(),
            }),
            MatrixQuery::Gfx(t) => MatrixAnswer::Gfx(self.gfx_answer(*t)?),
            MatrixQuery::Kernel { series, os } => {
                MatrixAnswer::Kernel(self.kernel_answer(series, os.as_ref())?)
            }
            MatrixQuery::Cuda(spec) => MatrixAnswer::Cuda(self.cuda_answer(spec)?),
            MatrixQuery::Ngc(rel) => MatrixAnswer::Ngc(self.ngc_answer(rel)?),
            MatrixQuery::Check => MatrixAnswer::Check(self.check_answer()),
            MatrixQuery::Gpu(q) => MatrixAnswer::Gpu(self.gpu_answer(q)),
        })
    }

    fn gfx_answer(&self, target: GfxTarget) -> Result<GfxAnswer<'_>, NotListed> {
        let info = self.gfx_info(target);
        let in_a_release = self
            .rocm
            .releases
            .iter()
            .any(|r| r.gfx_status(target).is_some());
        if info.is_none() && !in_a_release {
            let mut known: Vec<GfxTarget> =
                self.gpus.gfx_targets.iter().map(|t| t.target).collect();
            known.sort_by_key(|k| (k.kfd_version() as i64 - target.kfd_version() as i64).abs());
            known.truncate(5);
            known.sort();
            return Err(NotListed {
                field: None,
                what: format!("{target}"),
                nearest: known
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        let releases = self
            .rocm
            .releases
            .iter()
            .map(|r| {
                let how = self.gfx_on_release(r, target);
                let (status, note) = match how {
                    GfxRun::Native(s) => (Some(s.status), s.note.clone()),
                    _ => (None, None),
                };
                GfxOnRelease {
                    version: r.version.clone(),
                    runs: how.kind(),
                    status,
                    override_to: how.override_target(),
                    hsa_override_gfx_version: how.override_target().map(|t| t.override_value()),
                    nearest_known: how.nearest_known().cloned(),
                    note,
                }
            })
            .collect();
        Ok(GfxAnswer {
            target,
            info,
            gpus: self
                .gpus
                .gpus
                .iter()
                .filter(|g| g.gfx == Some(target))
                .collect(),
            releases,
        })
    }

    fn kernel_answer(
        &self,
        series: &str,
        os: Option<&(String, String)>,
    ) -> Result<KernelAnswer, NotListed> {
        let os_label = os.map(|(id, v)| format!("{id}:{v}"));
        let on_os = |d: &DistroSupport| {
            os.is_none_or(|(id, v)| &d.id == id && distro_version_matches(&d.version, v))
        };
        // A row pinning a build (`5.14.0-427`) is in the series `5.14`.
        let in_series = |s: &str| {
            s == series
                || s.strip_prefix(series)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
        };
        if let Some((id, v)) = os {
            if !self
                .rocm
                .releases
                .iter()
                .any(|r| r.distros.iter().any(on_os))
            {
                // The versions listed for that distro, or the distros when it is not listed at all.
                let distros = || self.rocm.releases.iter().flat_map(|r| &r.distros);
                let same_id = distros().any(|d| d.id == *id);
                let mut listed: Vec<String> = distros()
                    .filter(|d| !same_id || d.id == *id)
                    .map(|d| {
                        if same_id {
                            format!("{}:{}", d.id, d.version)
                        } else {
                            d.id.clone()
                        }
                    })
                    .collect();
                listed.dedup();
                listed.sort();
                listed.dedup();
                return Err(NotListed {
                    field: Some("os"),
                    what: format!("{id} {v}"),
                    nearest: listed.join(", "),
                });
            }
        }
        let mut rows = Vec::new();
        let mut other_series: Vec<String> = Vec::new();
        for r in &self.rocm.releases {
            for d in r.distros.iter().filter(|d| on_os(d)) {
                for k in &d.kernels {
                    if in_series(&k.series) {
                        rows.push(KernelRow {
                            release: r.version.clone(),
                            distro: d.id.clone(),
                            version: d.version.clone(),
                            series: k.series.clone(),
                            kind: k.kind,
                        });
                    } else if !other_series.contains(&k.series) {
                        other_series.push(k.series.clone());
                    }
                }
            }
        }
        if rows.is_empty() {
            other_series.sort_by_key(|s| crate::version::parse_with_parts(s).map(|p| p.0).ok());
            return Err(NotListed {
                field: None,
                what: match &os_label {
                    Some(o) => format!("kernel {series} on {}", o.replacen(':', " ", 1)),
                    None => format!("kernel {series}"),
                },
                nearest: crate::matrix::nearest(series, &other_series),
            });
        }
        Ok(KernelAnswer {
            series: series.to_string(),
            os: os_label.map(|o| {
                let (id, v) = o.split_once(':').unwrap_or((&o, ""));
                format!("{id}:{}", canonical_distro_version(v))
            }),
            rows,
        })
    }

    fn cuda_answer(&self, spec: &str) -> Result<CudaAnswer<'_>, NotListed> {
        let all: Vec<String> = self
            .cuda
            .releases
            .iter()
            .map(|r| r.version.to_string())
            .collect();
        let not_listed = || NotListed {
            field: None,
            what: format!("CUDA {spec}"),
            nearest: crate::matrix::nearest(spec, &all),
        };
        let (v, parts) = crate::version::parse_with_parts(spec).map_err(|_| not_listed())?;
        let releases: Vec<&CudaRelease> = self
            .cuda
            .releases
            .iter()
            .filter(|r| r.version.in_series(&v, parts))
            .collect();
        let first = releases.first().ok_or_else(not_listed)?;
        let ngc = self
            .ngc
            .releases
            .iter()
            .filter(|n| releases.iter().any(|r| r.version == n.cuda))
            .map(|n| self.ngc_image(n))
            .collect();
        Ok(CudaAnswer {
            requested: spec.to_string(),
            min_driver_linux: first.min_driver_linux.clone(),
            family: self.cuda_family(v.major()),
            releases,
            ngc,
        })
    }

    fn ngc_image<'m>(&self, n: &'m NgcRelease) -> NgcImage<'m> {
        NgcImage {
            image: format!("{}:{}", self.ngc.image, n.tag),
            release: n,
        }
    }

    fn ngc_answer(&self, rel: &str) -> Result<NgcAnswer<'_>, NotListed> {
        let n = self.ngc_release(rel).ok_or_else(|| {
            let all: Vec<String> = self
                .ngc
                .releases
                .iter()
                .map(|r| r.release.clone())
                .collect();
            NotListed {
                field: None,
                what: format!("NGC {rel}"),
                nearest: crate::matrix::nearest(rel, &all),
            }
        })?;
        Ok(NgcAnswer {
            release: self.ngc_image(n),
            cuda: self.cuda.releases.iter().find(|c| c.version == n.cuda),
            family: self.cuda_family(n.cuda.major()),
        })
    }

    fn check_answer(&self) -> CheckAnswer {
        let summary = |vs: Vec<String>| FileSummary {
            releases: vs.len(),
            oldest: vs.first().cloned().unwrap_or_default(),
            newest: vs.last().cloned().unwrap_or_default(),
        };
        let unconfirmed = |p: &dyn Sourced| usize::from(!p.unconfirmed().is_empty());
        let records_with_unconfirmed = self
            .rocm
            .releases
            .iter()
            .map(|r| unconfirmed(r) + r.images.iter().map(|i| unconfirmed(i)).sum::<usize>())
            .chain(self.cuda.releases.iter().map(|r| unconfirmed(r)))
            .chain(self.cuda.families.iter().map(|r| unconfirmed(r)))
            .chain(self.ngc.releases.iter().map(|r| unconfirmed(r)))
            .chain(self.gpus.gpus.iter().map(|r| unconfirmed(r)))
            .chain(self.gpus.gfx_targets.iter().map(|r| unconfirmed(r)))
            .sum();
        CheckAnswer {
            matrices: self.origin.clone(),
            rocm: summary(self.rocm_versions()),
            cuda: summary(
                self.cuda
                    .releases
                    .iter()
                    .map(|r| r.version.to_string())
                    .collect(),
            ),
            ngc: summary(
                self.ngc
                    .releases
                    .iter()
                    .map(|r| r.release.clone())
                    .collect(),
            ),
            amd_gpus: self
                .gpus
                .gpus
                .iter()
                .filter(|g| g.vendor == Vendor::Amd)
                .count(),
            nvidia_gpus: self
                .gpus
                .gpus
                .iter()
                .filter(|g| g.vendor == Vendor::Nvidia)
                .count(),
            gfx_targets: self.gpus.gfx_targets.len(),
            records_with_unconfirmed,
        }
    }
}
