//! Picking an NGC PyTorch release whose CUDA runs on the host's NVIDIA driver.

use super::base::{pinned, BaseImage, NEAREST};
use crate::dockerfile::request::DockerfileRequest;
use crate::error::Error;
use crate::matrix::{Matrices, NgcRelease, Sourced};

/// `YY.MM` as a month count, for "nearest release" lists.
fn months(release: &str) -> Option<i64> {
    let (y, mo) = release.split_once('.')?;
    Some(y.parse::<i64>().ok()? * 12 + mo.parse::<i64>().ok()?)
}

fn ngc_base(r: &NgcRelease, repository: &str, notes: Vec<String>) -> Result<BaseImage, Error> {
    let (reference, digest) = pinned(repository, &r.tag, r.digest.as_deref())?;
    let unconfirmed = r.is_unconfirmed("*");
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
        wheels: None,
    })
}

/// The NGC release `--ngc` names, else the newest one the driver runs.
pub(super) fn select_ngc(req: &DockerfileRequest, m: &Matrices) -> Result<BaseImage, Error> {
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
            return Err(Error::Invalid {
                fields: vec!["ngc".into()],
                value: None,
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
                Err(Error::Invalid {
                    fields: vec!["driver".into()],
                    value: None,
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
            let r = releases.last().ok_or_else(|| Error::Invalid {
                fields: vec!["matrices".into()],
                value: None,
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
