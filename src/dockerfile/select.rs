//! Picking the base image: a `rocm/pytorch` tag, an NGC release or a Debian image, from the matrices.

use super::request::{DockerfileRequest, Stack};
use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::matrix::{Matrices, NgcRelease, RocmImage, RocmRelease};
use crate::validate;
use crate::version::parse_with_parts;

/// Where AMD publishes its PyTorch images.
pub const ROCM_REPOSITORY: &str = "rocm/pytorch";
/// The cpu stack's default base: Debian 12, whose `python3-torch` needs no GPU and no extra registry.
pub const CPU_DEFAULT_BASE: &str = "debian:bookworm-slim";
/// Debian bookworm's Python and `python3-torch` versions, for the default cpu base's labels.
const BOOKWORM_PYTHON: &str = "3.11";
const BOOKWORM_PYTORCH: &str = "1.13.1";
/// How many alternatives an error lists.
const NEAREST: usize = 5;

/// The image a Dockerfile starts from, and what the matrices say is inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseImage {
    /// The `FROM` reference: `repository:tag`, plus `@sha256:…` when the matrix pins a digest.
    pub reference: String,
    /// The digest the reference is pinned to, if any.
    pub digest: Option<String>,
    /// The matrix record used: `rocm-6.2.4`, `ngc-24.05`, `cpu-debian-bookworm`.
    pub matrix_release: String,
    /// ROCm version (rocm stack).
    pub rocm: Option<String>,
    /// PyTorch version inside, when known.
    pub pytorch: Option<String>,
    /// Python version inside, when known.
    pub python: Option<String>,
    /// Ubuntu version of the image, when known.
    pub ubuntu: Option<String>,
    /// CUDA version inside (ngc stack).
    pub cuda: Option<String>,
    /// True when the matrix marks the tag unconfirmed: it may not exist on the registry.
    pub unconfirmed: bool,
    /// One-line remarks for the Dockerfile header and the caller (why this image, what to check).
    pub notes: Vec<String>,
}

/// Picks the base image for `req` from `m`, or says why none fits and what would.
pub fn select_base(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
    match req.stack {
        Stack::Rocm => select_rocm(req, m),
        Stack::Ngc => select_ngc(req, m),
        Stack::Cpu => select_cpu(req),
    }
}

/// Numeric parts of a version-like string (`2.4.0a0` → 2, 4, 0) for ordering.
fn num_key(s: &str) -> Vec<u64> {
    s.split('.')
        .map(|p| {
            let digits: String = p.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        })
        .collect()
}

/// True when `want` names `have` or a series of it: `2.3` matches `2.3.0`, not `2.30.0`.
fn version_prefix(have: &str, want: &str) -> bool {
    have == want || have.strip_prefix(want).is_some_and(|r| r.starts_with('.'))
}

/// Refuses a version flag that is not `X[.Y[.Z]]`, so it can be matched and echoed safely.
fn version_flag(flag: &str, value: &Option<String>) -> Result<(), Error> {
    match value {
        Some(v) => parse_with_parts(v).map(|_| ()).map_err(|e| Error::Usage {
            flag: flag.into(),
            message: e.to_string(),
        }),
        None => Ok(()),
    }
}

/// A `FROM` reference from matrix data, checked like user input because `--matrices` is user input.
fn pinned(
    repository: &str,
    tag: &str,
    digest: Option<&str>,
) -> Result<(String, Option<String>), Error> {
    let digest = digest.map(|d| {
        if d.starts_with("sha256:") {
            d.to_string()
        } else {
            format!("sha256:{d}")
        }
    });
    let reference = match &digest {
        Some(d) => format!("{repository}:{tag}@{d}"),
        None => format!("{repository}:{tag}"),
    };
    validate::image_reference("--matrices", &reference)?;
    Ok((reference, digest))
}

/// True when `release` runs `target`: it builds it, or the override gpus.yaml names (and does not call crashing).
fn runs(m: &Matrices, release: &RocmRelease, target: GfxTarget) -> Option<Option<GfxTarget>> {
    if release.builds(target) {
        return Some(None);
    }
    let o = m.gfx_info(target)?.override_to.as_ref()?;
    (!o.crashes && release.builds(o.target)).then_some(Some(o.target))
}

fn select_rocm(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
    for (flag, v) in [
        ("--rocm", &req.rocm),
        ("--pytorch", &req.pytorch),
        ("--ubuntu", &req.ubuntu),
        ("--python", &req.python),
    ] {
        version_flag(flag, v)?;
    }
    let series = req
        .rocm
        .as_deref()
        .map(parse_with_parts)
        .transpose()
        .ok()
        .flatten();
    let fits = |r: &RocmRelease, i: &RocmImage| -> [bool; 4] {
        [
            series
                .as_ref()
                .is_none_or(|(v, p)| r.version.in_series(v, *p)),
            req.pytorch
                .as_deref()
                .is_none_or(|p| version_prefix(&i.pytorch, p)),
            req.ubuntu
                .as_deref()
                .is_none_or(|u| version_prefix(&i.ubuntu, u)),
            req.python
                .as_deref()
                .is_none_or(|p| version_prefix(&i.python, p)),
        ]
    };
    let runs_all = |r: &RocmRelease| req.gfx.iter().all(|&t| runs(m, r, t).is_some());
    let mut all: Vec<(&RocmRelease, &RocmImage)> = m
        .rocm
        .releases
        .iter()
        .flat_map(|r| r.images.iter().map(move |i| (r, i)))
        .collect();
    // Newest ROCm, then PyTorch, Ubuntu, Python; then confirmed tags and AMD's `_release_` naming.
    all.sort_by_key(|(r, i)| {
        std::cmp::Reverse((
            r.version.clone(),
            num_key(&i.pytorch),
            num_key(&i.ubuntu),
            num_key(&i.python),
            !i.provenance.is_unconfirmed("*"),
            i.tag.contains("_release_"),
        ))
    });
    let chosen = all
        .iter()
        .find(|(r, i)| runs_all(r) && fits(r, i).iter().all(|&b| b));
    let Some(&(release, image)) = chosen else {
        return Err(rocm_not_found(req, &all, &fits, &runs_all));
    };
    let (reference, digest) = pinned(ROCM_REPOSITORY, &image.tag, image.digest.as_deref())?;
    let unconfirmed = image.provenance.is_unconfirmed("*");
    let mut notes = Vec::new();
    if unconfirmed {
        notes.push(format!(
            "the matrix marks tag {} unconfirmed ({}): check that it exists before building",
            image.tag,
            image
                .provenance
                .source
                .as_deref()
                .unwrap_or("no source given")
        ));
    }
    if req.gfx.is_empty() {
        notes.push("no GPU given: this is the newest matching image; pass --gfx to pick one that builds your GPU".into());
    }
    for &t in &req.gfx {
        if let Some(Some(to)) = runs(m, release, t) {
            notes.push(format!(
                "ROCm {} does not build {t}; it runs as {to} with HSA_OVERRIDE_GFX_VERSION={}",
                release.version,
                to.override_value()
            ));
        }
    }
    Ok(BaseImage {
        reference,
        digest,
        matrix_release: format!("rocm-{}", release.version),
        rocm: Some(release.version.to_string()),
        pytorch: Some(image.pytorch.clone()),
        python: Some(image.python.clone()),
        ubuntu: Some(image.ubuntu.clone()),
        cuda: None,
        unconfirmed,
        notes,
    })
}

/// The "nothing matches" error, listing the images closest to what was asked.
fn rocm_not_found(
    req: &DockerfileRequest,
    all: &[(&RocmRelease, &RocmImage)],
    fits: &dyn Fn(&RocmRelease, &RocmImage) -> [bool; 4],
    runs_all: &dyn Fn(&RocmRelease) -> bool,
) -> Error {
    let asked = [&req.rocm, &req.pytorch, &req.ubuntu, &req.python];
    let names = ["--rocm", "--pytorch", "--ubuntu", "--python"];
    let words = ["ROCm", "PyTorch", "Ubuntu", "Python"];
    let mut flags: Vec<&str> = names
        .iter()
        .zip(asked)
        .filter(|(_, a)| a.is_some())
        .map(|(n, _)| *n)
        .collect();
    let mut wanted: Vec<String> = words
        .iter()
        .zip(asked)
        .filter_map(|(w, a)| a.as_ref().map(|a| format!("{w} {a}")))
        .collect();
    if !req.gfx.is_empty() {
        let gfx: Vec<String> = req.gfx.iter().map(|g| g.to_string()).collect();
        wanted.push(format!("running {}", gfx.join(", ")));
        flags.push("--gfx");
    }
    let any_runs = all.iter().any(|(r, _)| runs_all(r));
    let rocm_want = req.rocm.as_deref().map(num_key);
    let pt_want = req.pytorch.as_deref().map(num_key);
    let distance = |have: &[u64], want: &Option<Vec<u64>>| -> u64 {
        want.as_ref().map_or(0, |w| {
            let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
            (at(have, 0).abs_diff(at(w, 0))) * 100 + at(have, 1).abs_diff(at(w, 1))
        })
    };
    let mut near: Vec<&(&RocmRelease, &RocmImage)> = all
        .iter()
        .filter(|(r, _)| !any_runs || runs_all(r))
        .collect();
    // Stable sort: among equals, the newest-first order of `all` decides.
    near.sort_by_key(|(r, i)| {
        let missed = fits(r, i).iter().filter(|&&b| !b).count();
        let rv = [r.version.major(), r.version.minor()];
        (
            missed,
            distance(&rv, &rocm_want),
            distance(&num_key(&i.pytorch), &pt_want),
        )
    });
    let list: Vec<&str> = near
        .iter()
        .take(NEAREST)
        .map(|(_, i)| i.tag.as_str())
        .collect();
    let flag = if flags.is_empty() {
        "--matrices".to_string()
    } else {
        flags.join("/")
    };
    Error::Usage {
        flag,
        message: format!(
            "no rocm/pytorch image for {}; nearest: {}",
            if wanted.is_empty() {
                "any release".into()
            } else {
                wanted.join(" with ")
            },
            if list.is_empty() {
                "none (the matrix lists no images)".into()
            } else {
                list.join(", ")
            }
        ),
    }
}

/// `YY.MM` as a month count, for "nearest release" lists.
fn months(release: &str) -> Option<i64> {
    let (y, mo) = release.split_once('.')?;
    Some(y.parse::<i64>().ok()? * 12 + mo.parse::<i64>().ok()?)
}

fn ngc_base(r: &NgcRelease, repository: &str, notes: Vec<String>) -> Result<BaseImage, Error> {
    let (reference, digest) = pinned(repository, &r.tag, r.digest.as_deref())?;
    let unconfirmed = r.provenance.is_unconfirmed("*");
    let mut notes = notes;
    if unconfirmed {
        notes.push(format!(
            "the matrix marks NGC {} unconfirmed: check that {} exists before building",
            r.release, reference
        ));
    }
    Ok(BaseImage {
        reference,
        digest,
        matrix_release: format!("ngc-{}", r.release),
        rocm: None,
        pytorch: Some(r.pytorch.clone()),
        python: Some(r.python.clone()),
        ubuntu: Some(r.ubuntu.clone()),
        cuda: Some(r.cuda.to_string()),
        unconfirmed,
        notes,
    })
}

fn select_ngc(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
    let releases = &m.ngc.releases;
    if let Some(want) = &req.ngc {
        let Some(r) = m.ngc_release(want) else {
            let target = months(want);
            let mut near: Vec<&NgcRelease> = releases.iter().rev().collect();
            near.sort_by_key(|r| match (target, months(&r.release)) {
                (Some(t), Some(h)) => (t - h).abs(),
                _ => i64::MAX,
            });
            let list: Vec<&str> = near
                .iter()
                .take(NEAREST)
                .map(|r| r.release.as_str())
                .collect();
            return Err(Error::Usage {
                flag: "--ngc".into(),
                message: format!(
                    "no NGC PyTorch release `{}`; nearest: {}",
                    validate_shown(want),
                    list.join(", ")
                ),
            });
        };
        let mut notes = Vec::new();
        if let Some(d) = req.driver.as_ref().filter(|d| **d < r.min_driver) {
            notes.push(format!(
                "driver {d} is older than the {} NGC {} needs on consumer GPUs; datacenter GPUs may run it with forward compatibility",
                r.min_driver, r.release
            ));
        }
        return ngc_base(r, &m.ngc.image, notes);
    }
    match &req.driver {
        Some(d) => match releases.iter().rev().find(|r| r.min_driver <= *d) {
            Some(r) => ngc_base(
                r,
                &m.ngc.image,
                vec![format!(
                    "newest NGC release whose CUDA {} runs on driver {d}",
                    r.cuda
                )],
            ),
            None => {
                let oldest = releases
                    .iter()
                    .min_by(|a, b| a.min_driver.cmp(&b.min_driver));
                Err(Error::Usage {
                    flag: "--driver".into(),
                    message: match oldest {
                        Some(o) => format!(
                            "no NGC PyTorch release runs on driver {d}; the oldest requirement is NGC {} needing ≥ {} (update the driver, or pass --ngc for a datacenter GPU with forward compatibility)",
                            o.release, o.min_driver
                        ),
                        None => "no NGC PyTorch release in the matrix".into(),
                    },
                })
            }
        },
        None => {
            let r = releases.last().ok_or_else(|| Error::Usage {
                flag: "--matrices".into(),
                message: "ngc.yaml lists no releases".into(),
            })?;
            let note = format!(
                "no NVIDIA driver known: this is the newest release, which needs driver ≥ {}",
                r.min_driver
            );
            ngc_base(r, &m.ngc.image, vec![note])
        }
    }
}

/// A user value for an error message: escaped so it cannot break the terminal.
fn validate_shown(v: &str) -> String {
    v.chars()
        .take(40)
        .collect::<String>()
        .escape_debug()
        .to_string()
}

fn select_cpu(req: &DockerfileRequest) -> Result<BaseImage, Error> {
    let Some(base) = &req.base else {
        return Ok(BaseImage {
            reference: CPU_DEFAULT_BASE.into(),
            digest: None,
            matrix_release: "cpu-debian-bookworm".into(),
            rocm: None,
            pytorch: Some(BOOKWORM_PYTORCH.into()),
            python: Some(BOOKWORM_PYTHON.into()),
            ubuntu: None,
            cuda: None,
            unconfirmed: false,
            notes: Vec::new(),
        });
    };
    validate::image_reference("--base", base)?;
    let (name, digest) = match base.split_once('@') {
        Some((n, d)) => (n, Some(d.to_string())),
        None => (base.as_str(), None),
    };
    let tag = name
        .rsplit('/')
        .next()
        .and_then(|last| last.split_once(':'))
        .map(|(_, t)| t);
    if digest.is_none() && tag.is_none_or(|t| t == "latest") {
        return Err(Error::Usage {
            flag: "--base".into(),
            message: format!(
                "`{base}` is not pinned; name a tag other than `latest` (or a digest) so the build is reproducible"
            ),
        });
    }
    Ok(BaseImage {
        reference: base.clone(),
        digest,
        matrix_release: "cpu-base".into(),
        rocm: None,
        pytorch: None,
        python: None,
        ubuntu: None,
        cuda: None,
        unconfirmed: false,
        notes: vec![format!(
            "{base} must be Debian-based with python3-torch in its apt sources"
        )],
    })
}
