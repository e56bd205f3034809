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
    HostPlan::resolve(m, facts, target, req.device)
}
