//! The host plan (`hostplan::HostPlan`) of one question: which target (`--target`, `--rocm`, an image's release, or
//! the host's own choice) and which device, resolved once over the context's matrices and host. Every command that
//! answers which release, which override, which GPUs or which architectures asks here.

use super::Ctx;
use crate::error::Error;
use crate::host::HostFacts;
use crate::hostplan::HostPlan;
use crate::matrix::Matrices;
use crate::target::{self, TargetSpec};

/// What the plan is asked for.
#[derive(Debug, Clone, Default)]
pub struct PlanRequest {
    /// The target; `None` lets the host choose (its installed ROCm, its driver, its GPUs).
    pub target: Option<TargetSpec>,
    /// Why that target, when it was not typed as `--target` (`the image's tag rocm6.2.1_…`).
    pub why: Option<String>,
    /// One GPU, by its number within its vendor.
    pub device: Option<usize>,
    /// Only this vendor's stack (`run --vendor`, or the vendor an image is for).
    pub vendor: Option<crate::vendor::Vendor>,
}

/// The plan for the context's host.
pub fn resolve<'c>(ctx: &'c Ctx, req: &PlanRequest) -> Result<HostPlan<'c>, Error> {
    plan_on(ctx.matrices()?, ctx.facts()?, req)
}

/// The plan for `facts` (probed elsewhere, as `collect` does).
pub fn plan_on<'m>(
    m: &'m Matrices,
    facts: &HostFacts,
    req: &PlanRequest,
) -> Result<HostPlan<'m>, Error> {
    let mut target = target::resolve(req.target.as_ref(), m, facts)?;
    if let Some(why) = &req.why {
        if let Some(r) = target.rocm.as_mut() {
            r.why = why.clone();
        }
        if let Some(c) = target.cuda.as_mut() {
            c.why = why.clone();
        }
        target.explicit = false;
    }
    match req.vendor {
        Some(crate::vendor::Vendor::Amd) if target.rocm.is_some() => target.cuda = None,
        Some(crate::vendor::Vendor::Nvidia) if target.cuda.is_some() => target.rocm = None,
        _ => {}
    }
    HostPlan::resolve(m, facts, target, req.device)
}

/// The release an image runs, and how that was learnt: the plan's target for `run`, `run --probe` and container
/// smoke and bench, where the image's ROCm (or CUDA) decides the override, not the host's.
#[derive(Debug, Clone, Default)]
pub struct ImageRelease {
    /// The target the image names; `None`: unknown, the host's target is assumed.
    pub target: Option<TargetSpec>,
    /// How it was found (`the image's tag rocm6.2.1_…`), or why it was not.
    pub why: String,
}

/// The release `image` runs: from its tag when the matrices know it, else from the ROCm / CUDA / NGC variables its
/// environment sets (read through `engine`, when the image is local), else unknown.
pub fn image_release(
    m: &Matrices,
    image: &str,
    engine: Option<&crate::engine::Engine>,
) -> ImageRelease {
    if let Some(r) = release_of_tag(m, image) {
        return r;
    }
    if let Some(env) = engine.and_then(|e| e.image_env(image).ok()) {
        if let Some(r) = release_of_env(m, &env) {
            return r;
        }
    }
    if let Some(r) = engine.and_then(|e| release_of_file(m, e, image)) {
        return r;
    }
    ImageRelease {
        target: None,
        why: format!("{image} names no release the matrices know (by its tag, ROCM_VERSION / CUDA_VERSION / NVIDIA_PYTORCH_VERSION in its environment, or /opt/rocm/.info/version)"),
    }
}

/// `rocm/pytorch:rocm6.2.1_ubuntu22.04_…` → ROCm 6.2.1; `nvcr.io/nvidia/pytorch:24.05-py3` → NGC 24.05.
fn release_of_tag(m: &Matrices, image: &str) -> Option<ImageRelease> {
    let r = crate::image_ref::ImageRef::parse(image).ok()?;
    let tag = r.tag.as_deref()?;
    let listed = m
        .rocm
        .releases
        .iter()
        .find(|rel| rel.images.iter().any(|i| i.tag == tag));
    let named = || {
        let v = tag.strip_prefix("rocm")?.split('_').next()?;
        crate::version::parse_with_parts(v).ok()?;
        m.rocm_release(v)
    };
    if let Some(rel) = listed.or_else(named) {
        return Some(ImageRelease {
            target: Some(TargetSpec::Rocm(rel.version.to_string())),
            why: format!("the image's tag {tag} (ROCm {})", rel.version),
        });
    }
    let ngc = tag.split('-').next()?;
    (r.path.ends_with("nvidia/pytorch") && m.ngc_release(ngc).is_some()).then(|| ImageRelease {
        target: Some(TargetSpec::Ngc(ngc.to_string())),
        why: format!("the image's tag {tag} (NGC {ngc})"),
    })
}

/// The ROCm `/opt/rocm/.info/version` names inside the image (`6.2.1-112`), when the matrices know it.
fn release_of_file(m: &Matrices, e: &crate::engine::Engine, image: &str) -> Option<ImageRelease> {
    const FILE: &str = "/opt/rocm/.info/version";
    let text = e.read_image_file(image, FILE).ok()??;
    let text = String::from_utf8(text).ok()?;
    let v = text.trim().split(['-', '_', ' ']).next()?;
    crate::version::parse_with_parts(v).ok()?;
    let rel = m.rocm_release(v)?;
    Some(ImageRelease {
        target: Some(TargetSpec::Rocm(rel.version.to_string())),
        why: format!("the image's {FILE} ({})", text.trim()),
    })
}

/// The release an image's environment names (`ROCM_VERSION`, `NVIDIA_PYTORCH_VERSION`, `CUDA_VERSION`).
fn release_of_env(m: &Matrices, env: &[(String, String)]) -> Option<ImageRelease> {
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.trim());
    if let Some(v) = get("ROCM_VERSION").filter(|v| m.rocm_release(v).is_some()) {
        let rel = m.rocm_release(v)?;
        return Some(ImageRelease {
            target: Some(TargetSpec::Rocm(rel.version.to_string())),
            why: format!("the image's ROCM_VERSION={v}"),
        });
    }
    if let Some(v) = get("NVIDIA_PYTORCH_VERSION").filter(|v| m.ngc_release(v).is_some()) {
        return Some(ImageRelease {
            target: Some(TargetSpec::Ngc(v.to_string())),
            why: format!("the image's NVIDIA_PYTORCH_VERSION={v}"),
        });
    }
    let v = get("CUDA_VERSION")?;
    let (ver, _) = crate::version::parse_with_parts(v).ok()?;
    let series = ver.short();
    m.cuda_release(&series)?;
    Some(ImageRelease {
        target: Some(TargetSpec::Cuda(series)),
        why: format!("the image's CUDA_VERSION={v}"),
    })
}
