//! Picking a `rocm/pytorch` tag: version filters, gfx targets (with overrides) and "nearest" suggestions.

use super::base::{pinned, BaseImage, NEAREST};
use crate::dockerfile::request::DockerfileRequest;
use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::matrix::{Matrices, RocmImage, RocmRelease};
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
    refuse_unserved_rocm(req, m, &series)?;
    let all = images_newest_first(m);
    let chosen = all
        .iter()
        .find(|(r, i)| runs_all(r) && fits(r, i).iter().all(|&b| b));
    let Some(&(release, image)) = chosen else {
        return Err(rocm_not_found(req, &all, &fits, &runs_all));
    };
    let (reference, digest) = pinned(ROCM_REPOSITORY, &image.tag, image.digest.as_deref())?;
    let unconfirmed = image.provenance.is_unconfirmed("*");
    let notes = image_notes(req, m, release, image);
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
                .any(|r| r.version.in_series(v, *p) && !r.images.is_empty());
            if !any_image {
                return Err(no_image(m, release));
            }
        }
    }
    Ok(())
}

/// Every image of every release, newest first: the order the first match is taken in.
fn images_newest_first(m: &Matrices) -> Vec<(&RocmRelease, &RocmImage)> {
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
    all
}

/// What to say about the chosen image: an unconfirmed tag, a newer release without images, overrides.
fn image_notes(
    req: &DockerfileRequest,
    m: &Matrices,
    release: &RocmRelease,
    image: &RocmImage,
) -> Vec<String> {
    let mut notes = Vec::new();
    if image.provenance.is_unconfirmed("*") {
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
    let newest = m.newest_rocm();
    if req.rocm.is_none() && newest.version > release.version && newest.images.is_empty() {
        notes.push(format!(
            "ROCm {} ({} stream) is the newest release, but the matrices list no PyTorch image for it{}; this image is ROCm {}, the newest release with one",
            newest.version,
            newest.stream.as_str(),
            where_pytorch_is(newest),
            release.version
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
    notes
}

/// "ROCm 10.1.0 has no PyTorch image": the newest release that has one, as the flag to use.
fn no_image(m: &Matrices, release: &RocmRelease) -> Error {
    let with = m.production().rev().find(|r| !r.images.is_empty());
    Error::Invalid {
        fields: vec!["rocm".into()],
        value: None,
        message: format!(
            "the matrices list no PyTorch image for ROCm {} ({} stream{}); the newest release with one is {}",
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

/// The "nothing matches" error, listing the images closest to what was asked.
fn rocm_not_found(
    req: &DockerfileRequest,
    all: &[(&RocmRelease, &RocmImage)],
    fits: &dyn Fn(&RocmRelease, &RocmImage) -> [bool; 4],
    runs_all: &dyn Fn(&RocmRelease) -> bool,
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
    if !req.gfx.is_empty() {
        let gfx: Vec<String> = req.gfx.iter().map(|g| g.to_string()).collect();
        wanted.push(format!("running {}", gfx.join(", ")));
        flags.push("gfx");
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
    let flag: Vec<String> = if flags.is_empty() {
        vec!["matrices".to_string()]
    } else {
        flags.iter().map(|f| f.to_string()).collect()
    };
    Error::Invalid {
        fields: flag,
        value: None,
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
