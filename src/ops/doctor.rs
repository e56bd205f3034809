//! doctor's work: the host's facts (from the context), the target, the checks, as one report.

use super::{Ctx, HostSpec};
use crate::checks::{self, Context, Summary};
use crate::error::Error;
use crate::host::{HostFacts, HostRoot};
use crate::matrix::Matrices;
use crate::report::DoctorReport;
use crate::target::TargetSpec;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// What doctor checks besides the host the context reads: `--target`, `--only`, `--expect-gpus`.
#[derive(Debug, Clone, Default)]
pub struct DoctorPlan {
    /// `--target`.
    pub target: Option<TargetSpec>,
    /// Skip asking the Docker daemon even in live mode (benchmarks).
    pub no_docker: bool,
    /// `--only ID|AREA`: keep the findings of one area, check or id prefix.
    pub only: Option<String>,
    /// `--expect-gpus N`: add `gpu.count`, failing with fewer GPUs.
    pub expect_gpus: Option<usize>,
    /// `--strict`: warnings fail (the verdict says so).
    pub strict: bool,
}

/// Everything one in-process doctor run needs (the host, the matrices and the plan): what tests and benchmarks call.
#[derive(Debug, Clone, Default)]
pub struct DoctorOptions {
    /// `--sysroot DIR`; `None` for the live host.
    pub sysroot: Option<PathBuf>,
    /// `--matrices DIR` / `ROCMENV_MATRICES`.
    pub matrices: Option<PathBuf>,
    /// `--target`.
    pub target: Option<TargetSpec>,
    /// `--deep`: run rocminfo / nvidia-smi (or read their recorded output).
    pub deep: bool,
    /// How long an external tool may run.
    pub tool_timeout: Option<Duration>,
    /// Skip asking the Docker daemon even in live mode (benchmarks).
    pub no_docker: bool,
    /// `--only ID|AREA`: keep the findings of one area, check or id prefix.
    pub only: Option<String>,
    /// `--expect-gpus N`: add `gpu.count`, failing with fewer GPUs.
    pub expect_gpus: Option<usize>,
}

impl DoctorOptions {
    /// The host these options name.
    pub fn host_spec(&self) -> HostSpec {
        HostSpec {
            sysroot: self.sysroot.clone(),
            tool_timeout: self
                .tool_timeout
                .unwrap_or(HostSpec::default().tool_timeout),
            deep: self.deep,
        }
    }

    /// The plan part of these options.
    pub fn plan(&self) -> DoctorPlan {
        DoctorPlan {
            target: self.target.clone(),
            no_docker: self.no_docker,
            only: self.only.clone(),
            expect_gpus: self.expect_gpus,
            strict: false,
        }
    }
}

/// Runs the doctor in-process in a context of its own and returns the report (no output).
pub fn build_report(opts: &DoctorOptions) -> Result<DoctorReport, Error> {
    let ctx = Ctx::new(opts.matrices.clone(), opts.host_spec());
    report(&ctx, &opts.plan())
}

/// doctor on the context's host.
pub fn report(ctx: &Ctx, plan: &DoctorPlan) -> Result<DoctorReport, Error> {
    let m = ctx.matrices()?;
    let host = ctx.host()?;
    report_on(
        plan,
        m,
        &host.root,
        host.facts.clone(),
        ctx.host_spec().deep,
    )
}

/// The report on facts already probed through `root` (`collect` probes through a recorder).
pub fn report_on(
    plan: &DoctorPlan,
    matrices: &Matrices,
    root: &HostRoot,
    facts: HostFacts,
    deep: bool,
) -> Result<DoctorReport, Error> {
    let host_plan = super::plan::plan_on(
        matrices,
        &facts,
        &super::plan::PlanRequest {
            target: plan.target.clone(),
            ..Default::default()
        },
    )?;
    let target = &host_plan.target;
    // The same resolution `run` and `build` use: DOCKER_HOST and its TLS variables, a Docker context, the sockets.
    // `--only` another area does not wait on a daemon it will not show.
    let wants_docker = plan
        .only
        .as_deref()
        .is_none_or(|o| o == "containers" || o == "docker" || o.starts_with("docker."));
    let docker = (root.is_live() && !plan.no_docker && wants_docker)
        .then(crate::engine::docker_status_from_env);
    // The runtimes are the host's own: ask them only when checking the running host.
    let runtime = root
        .is_live()
        .then(|| crate::runtime::probe_all(&crate::runtime::RuntimeOptions::from_env()));
    let cx = Context {
        runtime: runtime.as_ref(),
        facts: &facts,
        matrices,
        target,
        plan: &host_plan,
        docker: docker.as_ref(),
        deep,
    };
    let mut findings = checks::run_all(&cx);
    if let Some(n) = plan.expect_gpus {
        findings.push(checks::expected_gpus(&facts, n));
    }
    if let Some(only) = &plan.only {
        findings = checks::only(findings, only)?;
    }
    let summary = Summary::of(&findings);
    let why = target.why();
    let target_json = json!({
        "rocm": target.rocm.as_ref().map(|r| r.release.version.to_string()),
        "cuda": target.cuda.as_ref().map(|c| c.cuda.version.to_string()),
        "ngc": target.cuda.as_ref().and_then(|c| c.ngc).map(|n| n.release.clone()),
        "explicit": target.explicit,
        "why": why,
    });
    Ok(DoctorReport {
        target_label: target.label(),
        target_why: why,
        target: target_json,
        matrices_origin: matrices.origin.clone(),
        root: root.dir().display().to_string(),
        node: crate::report::node::node_name(root.is_live()),
        set_aside: host_plan
            .set_aside()
            .into_iter()
            .map(|(p, h)| (p.to_string(), h))
            .collect(),
        only: plan.only.clone(),
        strict: plan.strict,
        facts,
        findings,
        summary,
    })
}
