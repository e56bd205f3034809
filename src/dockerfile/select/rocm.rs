//! Picking the rocm stack's base: a `rocm/pytorch` tag (5.x-7.2.x) or a Core SDK release's PyTorch wheels on a
//! plain OS image, by version filters and gfx targets (with overrides), with "nearest" suggestions.

use super::base::{pinned, BaseImage, WheelInstall, NEAREST};
use crate::dockerfile::request::DockerfileRequest;
use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::matrix::{GfxRun, Matrices, RocmImage, RocmRelease, RocmWheels, Sourced, WheelBuild};
use crate::version::{parse_with_parts, Version};

/// Where AMD publishes its PyTorch images.
pub const ROCM_REPOSITORY: &str = "rocm/pytorch";

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
        Some(v) => parse_with_parts(v).map(|_| ()).map_err(|e| Error::Invalid {
            fields: vec![flag.into()],
            value: None,
            message: e.to_string(),
        }),
        None => Ok(()),
    }
}

/// True when `release` runs `target`: it builds it, or the override gpus.yaml names (and does not call crashing).
fn runs(m: &Matrices, release: &RocmRelease, target: GfxTarget) -> Option<Option<GfxTarget>> {
    let how = m.gfx_on_release(release, target);
    how.runs().then(|| how.override_target())
}

/// The newest `rocm/pytorch` image that matches the version flags and runs every gfx target.
pub(super) fn select_rocm(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
    for (flag, v) in [
        ("rocm", &req.rocm),
        ("pytorch", &req.pytorch),
        ("ubuntu", &req.ubuntu),
        ("python", &req.python),
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
    let fits = |c: &Candidate| -> [bool; 4] {
        [
            series
                .as_ref()
                .is_none_or(|(v, p)| c.release.version.in_series(v, *p)),
            req.pytorch
                .as_deref()
                .is_none_or(|p| version_prefix(c.pytorch, p)),
            req.ubuntu
                .as_deref()
                .is_none_or(|u| version_prefix(c.ubuntu, u)),
            req.python
                .as_deref()
                .is_none_or(|p| version_prefix(c.python, p)),
        ]
    };
    let base_tag = listed_base_tag(req, m, &series);
    let is_base = |c: &Candidate| match (&base_tag, c.source) {
        (Some(t), Source::Image(i)) => &i.tag == t,
        (Some(_), Source::Wheels(..)) => false,
        (None, _) => true,
    };
    let fits = |c: &Candidate| -> [bool; 4] {
        let [a, b, u, p] = fits(c);
        [a && is_base(c), b, u, p]
    };
    let runs_all = |c: &Candidate| c.devices(m, &req.gfx).is_some();
    refuse_unserved_rocm(req, m, &series)?;
    let all = candidates_newest_first(m);
    // The first candidate that fits the flags and runs every GPU, with the kernels each GPU needs.
    // Without --rocm, a host's amdgpu-dkms narrows the choice to releases whose driver window holds it.
    let driver_fits = |c: &Candidate| match (&req.amdgpu_driver, &series) {
        (Some((_, d)), None) => c.release.accepts_driver(d),
        _ => true,
    };
    let chosen = all.iter().find_map(|c| {
        let devices = c.devices(m, &req.gfx)?;
        (fits(c).iter().all(|&b| b) && driver_fits(c)).then_some((c, devices))
    });
    let Some((chosen, devices)) = chosen else {
        if let (Some((raw, d)), Some(c)) = (
            &req.amdgpu_driver,
            all.iter()
                .find(|c| runs_all(c) && fits(c).iter().all(|&b| b)),
        ) {
            return Err(no_release_for_driver(raw, d, c.release));
        }
        return Err(rocm_not_found(req, m, &all, &fits, &runs_all));
    };
    let mut notes = image_notes(req, m, chosen);
    notes.extend(driver_note(req, chosen.release, series.is_some()));
    match chosen.source {
        Source::Image(image) => {
            let (reference, digest) = pinned(ROCM_REPOSITORY, &image.tag, image.digest.as_deref())?;
            Ok(chosen.base_image(reference, digest, notes, None))
        }
        Source::Wheels(w, build) => {
            let install = wheel_install(chosen.release, w, build, &devices);
            // Matrix data, which `--matrices` makes user input: parsed like any image reference.
            crate::sanitize::image_reference("matrices", &w.base)?;
            Ok(chosen.base_image(w.base.clone(), None, notes, Some(install)))
        }
    }
}

/// Where a candidate's PyTorch comes from.
#[derive(Clone, Copy)]
enum Source<'m> {
    /// A `rocm/pytorch` image tag.
    Image(&'m RocmImage),
    /// A Core SDK release's wheels: one torch build on AMD's index.
    Wheels(&'m RocmWheels, &'m WheelBuild),
}

/// One way to get PyTorch on a ROCm release, with what the version flags are matched against.
#[derive(Clone, Copy)]
struct Candidate<'m> {
    release: &'m RocmRelease,
    source: Source<'m>,
    pytorch: &'m str,
    ubuntu: &'m str,
    python: &'m str,
}

impl<'m> Candidate<'m> {
    /// What an error lists for it: the tag, or the wheels and their base.
    fn name(&self) -> String {
        match self.source {
            Source::Image(i) => i.tag.clone(),
            Source::Wheels(w, b) => format!(
                "torch {} wheels on {}",
                b.torch(&self.release.version),
                w.base
            ),
        }
    }

    /// True when the matrix marks it unconfirmed (an image tag seen only on Docker Hub, unconfirmed wheels).
    fn unconfirmed(&self) -> bool {
        match self.source {
            Source::Image(i) => i.is_unconfirmed("*"),
            Source::Wheels(w, _) => w.is_unconfirmed("*") || self.release.is_unconfirmed("pytorch"),
        }
    }

    /// The kernels each GPU needs (its own target, or its override's): `Some(targets)` when the release runs
    /// every GPU and, for wheels, the index has a device package for each; `None` when it cannot.
    fn devices(&self, m: &Matrices, gfx: &[GfxTarget]) -> Option<Vec<GfxTarget>> {
        let mut out = Vec::new();
        for &t in gfx {
            let how = runs(m, self.release, t)?;
            let needed = how.unwrap_or(t);
            if let Source::Wheels(w, _) = self.source {
                if !w.devices.contains(&needed) {
                    return None;
                }
            }
            if !out.contains(&needed) {
                out.push(needed);
            }
        }
        Some(out)
    }

    fn base_image(
        &self,
        reference: String,
        digest: Option<String>,
        notes: Vec<String>,
        wheels: Option<WheelInstall>,
    ) -> BaseImage {
        BaseImage {
            reference,
            digest,
            matrix_release: format!("rocm-{}", self.release.version),
            rocm: Some(self.release.version.to_string()),
            pytorch: Some(self.pytorch.to_string()),
            python: Some(self.python.to_string()),
            ubuntu: Some(self.ubuntu.to_string()),
            cuda: None,
            unconfirmed: self.unconfirmed(),
            notes,
            wheels,
        }
    }
}

/// The `pip install` of a wheel candidate, as AMD's docs write it: `torch[device-…]` and `torchvision[device-…]`
/// from the release's index, torch pinned to the release's build (`2.13.0+rocm10.0.0`), so pip brings the
/// matching `rocm[libraries]` and each GPU's kernels, and torchvision to its series (`>=0.28.0a0,<0.29`).
/// No GPU named: every device (`device-all`).
fn wheel_install(
    release: &RocmRelease,
    w: &RocmWheels,
    build: &WheelBuild,
    devices: &[GfxTarget],
) -> WheelInstall {
    let extras = if devices.is_empty() {
        "device-all".to_string()
    } else {
        devices
            .iter()
            .map(|d| format!("device-{d}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    WheelInstall {
        index: w.index.clone(),
        packages: vec![
            format!("torch[{extras}]=={}", build.torch(&release.version)),
            format!("torchvision[{extras}]{}", build.torchvision_requirement()),
        ],
    }
}

/// Refuses a `--rocm` that names a preview, a left-out series, or a series the matrices list no image for.
fn refuse_unserved_rocm(
    req: &DockerfileRequest,
    m: &Matrices,
    series: &Option<(Version, usize)>,
) -> Result<(), Error> {
    // A preview or a left-out series is refused as such; a release named by --rocm whose series lists no image
    // is one line naming the newest release that has one. Other unknown versions get the nearest images (rocm_not_found).
    if let Some(spec) = req.rocm.as_deref() {
        if let Some(message) = m.rocm_refusal(spec) {
            return Err(Error::Invalid {
                fields: vec!["rocm".into()],
                value: None,
                message,
            });
        }
        if let (Some(release), Some((v, p))) = (m.rocm_release(spec), series) {
            // `--rocm 7.2` may be served by an older 7.2.x image; only a series without any image is refused.
            let any_image = m
                .rocm
                .releases
                .iter()
                .any(|r| r.version.in_series(v, *p) && serves_pytorch(r));
            if !any_image {
                return Err(no_image(m, release));
            }
        }
    }
    Ok(())
}

/// True when the matrices say how to get PyTorch on `r`: an image tag or wheels.
fn serves_pytorch(r: &RocmRelease) -> bool {
    !r.images.is_empty() || r.wheels.is_some()
}

/// Every image and wheel build of every release, newest first: the order the first match is taken in.
fn candidates_newest_first(m: &Matrices) -> Vec<Candidate<'_>> {
    let mut all: Vec<Candidate> = Vec::new();
    for r in &m.rocm.releases {
        all.extend(r.images.iter().map(|i| Candidate {
            release: r,
            source: Source::Image(i),
            pytorch: &i.pytorch,
            ubuntu: &i.ubuntu,
            python: &i.python,
        }));
        if let Some(w) = r.wheels.as_ref() {
            all.extend(w.builds.iter().map(|b| Candidate {
                release: r,
                source: Source::Wheels(w, b),
                pytorch: &b.pytorch,
                ubuntu: &w.ubuntu,
                python: &w.python,
            }));
        }
    }
    // Newest ROCm, then PyTorch, Ubuntu, Python; then confirmed ones and AMD's `_release_` tag naming.
    all.sort_by_key(|c| {
        std::cmp::Reverse((
            c.release.version.clone(),
            num_key(c.pytorch),
            num_key(c.ubuntu),
            num_key(c.python),
            !c.unconfirmed(),
            match c.source {
                Source::Image(i) => i.tag.contains("_release_"),
                Source::Wheels(..) => true,
            },
        ))
    });
    all
}

/// What to say about the chosen base: an unconfirmed tag, wheels, a newer release without either, overrides.
fn image_notes(req: &DockerfileRequest, m: &Matrices, c: &Candidate) -> Vec<String> {
    let release = c.release;
    let mut notes = Vec::new();
    match c.source {
        Source::Image(image) if c.unconfirmed() => notes.push(format!(
            "the matrix marks tag {} unconfirmed ({}): check that it exists before building",
            image.tag,
            image.source.as_deref().unwrap_or("no source given")
        )),
        Source::Wheels(w, _) => {
            notes.push(format!(
                "ROCm {} ({} stream) has no rocm/pytorch image: AMD publishes its PyTorch as wheels on {}, installed here on {}",
                release.version,
                release.stream.as_str(),
                w.index,
                w.base
            ));
            if c.unconfirmed() {
                notes.push(format!(
                    "the matrix marks these wheels unconfirmed ({}): check that the versions exist on the index before building",
                    w.source.as_deref().unwrap_or("no source given")
                ));
            }
        }
        Source::Image(_) => {}
    }
    let newest = m.newest_rocm();
    if req.rocm.is_none() && newest.version > release.version && !serves_pytorch(newest) {
        notes.push(format!(
            "ROCm {} ({} stream) is the newest release, but the matrices list no PyTorch image or wheels for it{}; this is ROCm {}, the newest release with one",
            newest.version,
            newest.stream.as_str(),
            where_pytorch_is(newest),
            release.version
        ));
    }
    if req.gfx.is_empty() {
        notes.push(match c.source {
            Source::Image(_) => "no GPU given: this is the newest matching image; pass --gfx to pick one that builds your GPU".into(),
            Source::Wheels(..) => "no GPU given: the wheels bring every GPU's kernels (device-all); pass --gfx to install only yours".into(),
        });
    }
    for &t in &req.gfx {
        match m.gfx_on_release(release, t) {
            GfxRun::BuiltNotSupported(_) => notes.push(format!(
                "ROCm {} ships kernels for {t}, but AMD does not list it as supported: it runs untested",
                release.version
            )),
            GfxRun::Override(a) => notes.push(format!(
                "ROCm {} does not build {t}; it runs as {} with HSA_OVERRIDE_GFX_VERSION={}",
                release.version,
                a.target,
                a.target.override_value()
            )),
            GfxRun::OverrideUnknown { advice: a, nearest } => notes.push(format!(
                "ROCm {} does not list {t}, and the matrices have no built data for it: it runs as {} with HSA_OVERRIDE_GFX_VERSION={} as in the field, unconfirmed{}",
                release.version,
                a.target,
                a.target.override_value(),
                nearest.map(|n| format!(" (nearest release with data: {n})")).unwrap_or_default()
            )),
            _ => {}
        }
    }
    notes
}

/// A `--base` whose tag the matrices list, under a release of the `--rocm` series (or any, without `--rocm`): that
/// image is picked, so its own PyTorch is what the Dockerfile uses; another release's tag is refused in base.rs.
fn listed_base_tag(
    req: &DockerfileRequest,
    m: &Matrices,
    series: &Option<(crate::version::Version, usize)>,
) -> Option<String> {
    let tag = crate::image_ref::ImageRef::parse(req.base.as_deref()?)
        .ok()?
        .tag?;
    m.rocm
        .releases
        .iter()
        .any(|r| {
            r.images.iter().any(|i| i.tag == tag)
                && series
                    .as_ref()
                    .is_none_or(|(v, p)| r.version.in_series(v, *p))
        })
        .then_some(tag)
}

/// What the host's amdgpu-dkms says about the chosen release: outside its window (`--rocm` chose it anyway), or why
/// this release was picked.
fn driver_note(req: &DockerfileRequest, release: &RocmRelease, asked: bool) -> Option<String> {
    let (raw, d) = req.amdgpu_driver.as_ref()?;
    if !release.accepts_driver(d) {
        return Some(format!(
            "the host's amdgpu-dkms {raw} (driver {}) is outside ROCm {}'s driver window: the container's ROCm may not run on this host's driver",
            d.short(),
            release.version
        ));
    }
    (!asked).then(|| {
        format!(
            "ROCm {}: the newest with PyTorch whose driver window holds the host's amdgpu-dkms {raw} (driver {})",
            release.version,
            d.short()
        )
    })
}

/// No release with PyTorch for these GPUs accepts the host's amdgpu-dkms: say so, and name the newest one there is.
fn no_release_for_driver(
    raw: &str,
    driver: &crate::version::Version,
    newest: &RocmRelease,
) -> Error {
    Error::Invalid {
        fields: vec!["rocm".into()],
        value: None,
        message: format!(
            "no ROCm release with PyTorch for these GPUs accepts the host's amdgpu-dkms {raw} (driver {}); the newest, ROCm {}, works with drivers {}: update the driver (sudo amdgpu-install --usecase=dkms), or pass --rocm to write the Dockerfile anyway",
            driver.short(),
            newest.version,
            newest.kernel_drivers.iter().map(|k| k.short()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// "ROCm 10.1.0 has no PyTorch image": the newest release that has one, as the flag to use.
fn no_image(m: &Matrices, release: &RocmRelease) -> Error {
    let with = m.production().rev().find(|r| serves_pytorch(r));
    Error::Invalid {
        fields: vec!["rocm".into()],
        value: None,
        message: format!(
            "the matrices list no PyTorch image or wheels for ROCm {} ({} stream{}); the newest release with one is {}",
            release.version,
            release.stream.as_str(),
            where_pytorch_is(release),
            with.map(|r| format!("{}: --rocm {}", r.version, r.version))
                .unwrap_or_else(|| "none".into())
        ),
    }
}

/// Where AMD documents a Core SDK release's PyTorch (pip wheels, not a `rocm/pytorch` image), so a refusal
/// says where to look; empty for the legacy stream.
fn where_pytorch_is(release: &RocmRelease) -> String {
    if release.stream == crate::matrix::RocmStream::CoreSdk {
        format!(
            ": AMD documents its PyTorch as pip wheels, see \"Install PyTorch for ROCm\" at https://rocm.docs.amd.com/en/docs-{}/",
            release.version
        )
    } else {
        String::new()
    }
}

/// The "nothing matches" error, listing the images closest to what was asked; a `--rocm` that names no release
/// at all says so and names the newest release of its major, as `env --rocm` and `doctor --target` do.
fn rocm_not_found(
    req: &DockerfileRequest,
    m: &Matrices,
    all: &[Candidate],
    fits: &dyn Fn(&Candidate) -> [bool; 4],
    runs_all: &dyn Fn(&Candidate) -> bool,
) -> Error {
    let asked = [&req.rocm, &req.pytorch, &req.ubuntu, &req.python];
    let names = ["rocm", "pytorch", "ubuntu", "python"];
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
    if let (Some(spec), Some(first)) = (req.rocm.as_deref(), wanted.first_mut()) {
        if m.rocm_release(spec).is_none() {
            let newest = parse_with_parts(spec).ok().and_then(|(v, _)| {
                m.newest_of_major(v.major())
                    .map(|r| format!("; newest {}.x: {}", v.major(), r.version))
            });
            first.push_str(&format!(
                " (not a release in the matrices{})",
                newest.unwrap_or_default()
            ));
        }
    }
    let mut wanted = wanted.join(" with ");
    if !req.gfx.is_empty() {
        let gfx: Vec<String> = req.gfx.iter().map(|g| g.to_string()).collect();
        wanted = if wanted.is_empty() {
            format!("a release running {}", gfx.join(", "))
        } else {
            format!("{wanted} running {}", gfx.join(", "))
        };
        flags.push("gfx");
    }
    let any_runs = all.iter().any(runs_all);
    let rocm_want = req.rocm.as_deref().map(num_key);
    let pt_want = req.pytorch.as_deref().map(num_key);
    let distance = |have: &[u64], want: &Option<Vec<u64>>| -> u64 {
        want.as_ref().map_or(0, |w| {
            let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
            (at(have, 0).abs_diff(at(w, 0))) * 100 + at(have, 1).abs_diff(at(w, 1))
        })
    };
    let mut near: Vec<&Candidate> = all.iter().filter(|c| !any_runs || runs_all(c)).collect();
    // Stable sort: among equals, the newest-first order of `all` decides.
    near.sort_by_key(|c| {
        let missed = fits(c).iter().filter(|&&b| !b).count();
        let rv = [c.release.version.major(), c.release.version.minor()];
        (
            missed,
            distance(&rv, &rocm_want),
            distance(&num_key(c.pytorch), &pt_want),
        )
    });
    let list: Vec<String> = near.iter().take(NEAREST).map(|c| c.name()).collect();
    let flag: Vec<String> = if flags.is_empty() {
        vec!["matrices".to_string()]
    } else {
        flags.iter().map(|f| f.to_string()).collect()
    };
    Error::Invalid {
        fields: flag,
        value: None,
        message: format!(
            "no rocm/pytorch image or ROCm wheels for {}; nearest: {}",
            if wanted.is_empty() {
                "any release".into()
            } else {
                wanted
            },
            if list.is_empty() {
                "none (the matrix lists no images)".into()
            } else {
                list.join(", ")
            }
        ),
    }
}
