//! The rules: each judges one scope of a user's file and returns findings for what is wrong (a check that cannot
//! run returns a skip that says why; what holds is counted, not listed).

use super::files::{Located, Scope};
use super::variables::Variables;
use super::LintFinding;
use crate::envplan::{self, GpuInput};
use crate::gfx::GfxTarget;
use crate::image_ref::ImageRef;
use crate::matrix::{Matrices, NgcRelease, RocmRelease};
use crate::status::Status;
use crate::vendor::Vendor;

/// What a scope is judged against: its image's release (or `--rocm`), and the GPUs (`--gfx`, a tree, the host).
pub struct ScopeTarget<'m> {
    /// The ROCm release the scope's image (or `--rocm`) runs.
    pub rocm: Option<&'m RocmRelease>,
    /// The NGC release of an `nvcr.io/nvidia/pytorch` image.
    pub ngc: Option<&'m NgcRelease>,
    /// How the release was found (`the image's tag rocm6.2.3_…`, `--rocm 6.2`).
    pub why: String,
}

impl ScopeTarget<'_> {
    fn vendor(&self) -> Option<Vendor> {
        match (self.rocm, self.ngc) {
            (Some(_), _) => Some(Vendor::Amd),
            (None, Some(_)) => Some(Vendor::Nvidia),
            _ => None,
        }
    }
}

/// What every rule reads.
pub struct Inputs<'a> {
    /// The matrices.
    pub matrices: &'a Matrices,
    /// The variables list.
    pub variables: &'a Variables,
    /// The GPUs to judge overrides and device numbers against; `None` when none were named or found, with why.
    pub gpus: Result<&'a [GpuInput], String>,
}

/// The variables that name the gfx targets a build compiles for.
pub const ARCH_VARS: [&str; 4] = [
    "PYTORCH_ROCM_ARCH",
    "HCC_AMDGPU_TARGET",
    "AMDGPU_TARGETS",
    "GPU_TARGETS",
];

/// Every rule over one scope.
pub fn judge(inp: &Inputs, scope: &Scope, target: &ScopeTarget) -> Vec<LintFinding> {
    let mut out = Vec::new();
    out.extend(base_image(inp.matrices, scope));
    out.extend(override_vs_arch(scope));
    out.extend(against_gpus(inp, scope, target));
    out.extend(unread_variables(inp.variables, scope, target));
    out.extend(index_urls(scope, target));
    out.extend(mixed_vendors(scope, target));
    for f in &mut out {
        f.scope = scope.name.clone();
    }
    out
}

fn finding(id: &'static str, status: Status, line: usize, summary: String) -> LintFinding {
    LintFinding {
        id,
        status,
        path: String::new(),
        line: Some(line),
        scope: None,
        summary: crate::text::one_line(&summary),
        fix: None,
    }
}

/// Vendor bases (`rocm/*`, `nvcr.io/nvidia/*`) must be pinned: a tag other than `latest`, or a digest.
fn base_image(m: &Matrices, scope: &Scope) -> Option<LintFinding> {
    let img = scope.image.as_ref()?;
    let r = ImageRef::parse(&img.name).ok()?;
    if r.digest.is_some() || r.tag.as_deref().is_some_and(|t| t != "latest") {
        return None;
    }
    let hub = r.registry.as_deref().is_none_or(|h| h == "docker.io");
    let amd = hub && r.path.starts_with("rocm/");
    let nvidia = r.registry.as_deref() == Some("nvcr.io") && r.path.starts_with("nvidia/");
    let how = match r.tag.as_deref() {
        Some(_) => "`latest`",
        None => "no tag (so `latest`)",
    };
    let pinned = if amd {
        // The newest production release that names rocm/pytorch images (the Core SDK names none yet).
        m.production()
            .rev()
            .find_map(|rel| Some((rel, rel.images.first()?)))
            .map(|(rel, i)| format!("{}:{} (ROCm {})", r.repository(), i.tag, rel.version))
    } else if nvidia {
        m.ngc
            .releases
            .last()
            .map(|n| format!("{}:{} (NGC {})", r.repository(), n.tag, n.release))
    } else {
        None
    };
    let status = if amd || nvidia {
        Status::Fail
    } else {
        Status::Warn
    };
    let mut f = finding(
        "lint.base-image",
        status,
        img.line,
        format!(
            "FROM {} has {how}: the image changes under you, and its ROCm or CUDA with it",
            img.name
        ),
    );
    f.fix = Some(match pinned {
        Some(p) => format!("pin a release's tag, e.g. {p}, or a digest (@sha256:…); `rocmenv matrix rocm` and `rocmenv matrix ngc` list them"),
        None => "pin a version tag or a digest (@sha256:…)".into(),
    });
    Some(f)
}

/// The gfx targets a list names (`gfx90a;gfx942`, `gfx90a:xnack-,gfx1100`), feature suffixes dropped.
fn targets_in(value: &str) -> Vec<GfxTarget> {
    value
        .split([';', ',', ' '])
        .filter_map(|t| t.split(':').next()?.trim().parse().ok())
        .collect()
}

/// A global override beside a list of build targets that does not hold the override's target: the kernels built
/// are not the kernels the override makes the runtime load.
fn override_vs_arch(scope: &Scope) -> Vec<LintFinding> {
    let Some(ov) = scope.var("HSA_OVERRIDE_GFX_VERSION") else {
        return Vec::new();
    };
    let Ok(to) = GfxTarget::from_override(&ov.value) else {
        let mut f = finding(
            "lint.override-value",
            Status::Fail,
            ov.line,
            format!(
                "HSA_OVERRIDE_GFX_VERSION={} is not a gfx version (MAJOR.MINOR.STEPPING, e.g. 10.3.0)",
                ov.value
            ),
        );
        f.fix = Some("set it to the version of a target the release builds, or remove it (`rocmenv env` prints the right one)".into());
        return vec![f];
    };
    ARCH_VARS
        .iter()
        .filter_map(|name| scope.var(name))
        .filter_map(|arch| {
            let built = targets_in(&arch.value);
            (!built.is_empty() && !built.contains(&to)).then(|| {
                let mut f = finding(
                    "lint.override-arch",
                    Status::Fail,
                    ov.line,
                    format!(
                        "HSA_OVERRIDE_GFX_VERSION={} (line {}) makes every GPU load {to} kernels, but {}={} (line {}) builds {}",
                        ov.value,
                        ov.line,
                        arch.name,
                        arch.value,
                        arch.line,
                        built.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
                    ),
                );
                f.fix = Some(format!(
                    "build for the target the GPUs run ({}={to}), or drop the override where the GPUs run {} natively",
                    arch.name, arch.value
                ));
                f
            })
        })
        .collect()
}

/// The scope's override and visible-device variables against the GPUs, through the host plan's own judgement.
fn against_gpus(inp: &Inputs, scope: &Scope, target: &ScopeTarget) -> Vec<LintFinding> {
    let set: Vec<&Located> = scope
        .vars
        .iter()
        .filter(|v| crate::hostplan::is_user_var(&v.name))
        .collect();
    let Some(first) = set.first() else {
        return Vec::new();
    };
    let gpus = match &inp.gpus {
        Ok(g) if !g.is_empty() => *g,
        Ok(_) | Err(_) => {
            let why = inp
                .gpus
                .as_ref()
                .err()
                .cloned()
                .unwrap_or_else(|| "no GPU was named or found".into());
            let mut f = finding(
                "lint.gpus",
                Status::Skip,
                first.line,
                format!("{} not judged against GPUs: {why}", first.name),
            );
            f.fix = Some(
                "name the GPUs with --gfx (e.g. --gfx gfx1100), or a host tree with --sysroot"
                    .into(),
            );
            return vec![f];
        }
    };
    let release = target.rocm;
    let Ok(plan) = envplan::plan(inp.matrices, gpus, release, None) else {
        return Vec::new();
    };
    let amd = gpus.iter().filter(|g| g.vendor == Vendor::Amd).count();
    let counts = (amd, gpus.len() - amd);
    let vars = set.iter().map(|v| (v.name.as_str(), v.value.as_str()));
    crate::hostplan::judge_user_vars(&plan, vars, counts)
        .into_iter()
        .map(|u| {
            let line = scope.var(&u.name).map_or(first.line, |v| v.line);
            let (id, status) = if u.name.starts_with("HSA_OVERRIDE_GFX_VERSION") {
                ("lint.override-gpu", Status::Fail)
            } else {
                ("lint.visible-devices", Status::Warn)
            };
            // The plan's own words name the release when it matters; say it once.
            let on = plan
                .rocm
                .as_deref()
                .filter(|r| !u.problem.contains(&format!("ROCm {r}")))
                .map(|r| format!(" (ROCm {r})"))
                .unwrap_or_default();
            let mut f = finding(id, status, line, format!("{}{on}", u.problem));
            f.fix = Some(match u.fix {
                crate::hostplan::UserVarFix::Set(v) => format!("set {}={v}", u.name),
                crate::hostplan::UserVarFix::Unset => format!("remove {}", u.name),
            });
            f
        })
        .collect()
}

/// Variables of a listed prefix that nothing reads, retired ones, ones newer than the release, and another
/// vendor's.
fn unread_variables(list: &Variables, scope: &Scope, target: &ScopeTarget) -> Vec<LintFinding> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for v in &scope.vars {
        if !seen.insert(v.name.as_str()) {
            continue;
        }
        if let Some(f) = unread_variable(list, v, target) {
            out.push(f);
        }
    }
    out
}

fn unread_variable(list: &Variables, v: &Located, target: &ScopeTarget) -> Option<LintFinding> {
    let version = |s: &str| s.parse::<crate::version::Version>().ok();
    let release = target.rocm.map(|r| r.version.clone());
    // libhsakmt reads a per-node HSA_OVERRIDE_GFX_VERSION_<node> (ROCm 6.3 on), which the list cannot name.
    let per_node = v
        .name
        .strip_prefix("HSA_OVERRIDE_GFX_VERSION_")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let name = if per_node {
        "HSA_OVERRIDE_GFX_VERSION"
    } else {
        v.name.as_str()
    };
    let Some(rec) = list.get(name) else {
        let fam = list.family_of(&v.name)?;
        let mut f = finding(
            "lint.variable-unread",
            Status::Warn,
            v.line,
            format!(
                "{} is read by no ROCm or CUDA component: it is not among the {}* variables of {}",
                v.name, fam.prefix, fam.reader
            ),
        );
        f.fix = Some(match list.nearest(&v.name) {
            Some(n) => format!("did you mean {n}? Otherwise remove it"),
            None => "remove it".into(),
        });
        return Some(f);
    };
    if let Some(until) = rec.until.as_deref() {
        let retired = match (&release, version(until)) {
            (Some(r), Some(u)) => r > &u,
            // No release to compare with: a retired variable is retired for every current one.
            _ => true,
        };
        if retired {
            let mut f = finding(
                "lint.variable-retired",
                Status::Warn,
                v.line,
                format!("{} was last read by ROCm {until} ({}); no component of a current release reads it", v.name, rec.reader),
            );
            f.fix = Some(match &rec.replaced_by {
                Some(n) => format!("use {n} instead"),
                None => "remove it".into(),
            });
            return Some(f);
        }
    }
    if let (Some(since), Some(r)) = (rec.since.as_deref(), &release) {
        if rec.vendor == Some(Vendor::Amd) && version(since).is_some_and(|s| r < &s) {
            let mut f = finding(
                "lint.variable-unread",
                Status::Warn,
                v.line,
                format!(
                    "{} is read from ROCm {since} on, and this image runs ROCm {r} ({})",
                    v.name, target.why
                ),
            );
            f.fix = Some(format!("use ROCm {since} or newer, or remove it"));
            return Some(f);
        }
    }
    let other = match (rec.vendor, target.vendor()) {
        (Some(Vendor::Amd), Some(Vendor::Nvidia)) => Some(("AMD's ROCm", "an NVIDIA")),
        (Some(Vendor::Nvidia), Some(Vendor::Amd)) => Some(("NVIDIA's CUDA", "a ROCm")),
        _ => None,
    };
    other.map(|(stack, image)| {
        let mut f = finding(
            "lint.variable-vendor",
            Status::Warn,
            v.line,
            format!(
                "{} is read by {stack} stack ({}), and this is {image} image ({})",
                v.name, rec.reader, target.why
            ),
        );
        f.fix = Some(format!(
            "remove {}, or use the matching variable of this image's stack",
            v.name
        ));
        f
    })
}

/// A PyTorch wheel index for another ROCm or CUDA than the image's.
fn index_urls(scope: &Scope, target: &ScopeTarget) -> Vec<LintFinding> {
    scope
        .index_urls
        .iter()
        .filter_map(|u| {
            let flavour = u.name.trim_end_matches('/').rsplit('/').next()?;
            let (want, have) = match (flavour, target.rocm, target.ngc) {
                (f, Some(r), _) if f.starts_with("rocm") => {
                    let named = f.trim_start_matches("rocm");
                    let same = named
                        .split('.')
                        .zip([r.version.major(), r.version.minor()])
                        .all(|(a, b)| a.parse::<u64>() == Ok(b));
                    (!same).then(|| (format!("ROCm {named}"), format!("ROCm {}", r.version)))?
                }
                (f, _, Some(n)) if f.starts_with("cu") => {
                    let digits = f.trim_start_matches("cu");
                    let cuda = format!("{}{}", n.cuda.major(), n.cuda.minor());
                    (digits != cuda).then(|| {
                        (
                            format!("CUDA {digits}"),
                            format!(
                                "CUDA {}.{} (NGC {})",
                                n.cuda.major(),
                                n.cuda.minor(),
                                n.release
                            ),
                        )
                    })?
                }
                (f, Some(r), _) if f.starts_with("cu") => {
                    (format!("CUDA ({f})"), format!("ROCm {}", r.version))
                }
                (f, _, Some(n)) if f.starts_with("rocm") => (
                    format!("ROCm ({f})"),
                    format!("CUDA {} (NGC {})", n.cuda, n.release),
                ),
                _ => return None,
            };
            let mut f = finding(
                "lint.index-url",
                Status::Fail,
                u.line,
                format!(
                    "{} installs wheels built for {want}, and the image runs {have} ({})",
                    u.name, target.why
                ),
            );
            f.fix = Some(
                "use the index of the image's own ROCm or CUDA, or keep the torch the image ships"
                    .into(),
            );
            Some(f)
        })
        .collect()
}

/// Visible-device variables of both vendors in one scope.
fn mixed_vendors(scope: &Scope, _target: &ScopeTarget) -> Option<LintFinding> {
    let amd = [
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "GPU_DEVICE_ORDINAL",
    ];
    let nvidia = ["NVIDIA_VISIBLE_DEVICES"];
    let a = amd.iter().find_map(|n| scope.var(n))?;
    let n = nvidia.iter().find_map(|n| scope.var(n))?;
    let mut f = finding(
        "lint.visible-devices",
        Status::Warn,
        a.line.max(n.line),
        format!(
            "{}={} (line {}) picks AMD GPUs and {}={} (line {}) NVIDIA GPUs in one place",
            a.name, a.value, a.line, n.name, n.value, n.line
        ),
    );
    f.fix = Some("keep the variables of the one vendor this image runs on".into());
    Some(f)
}
