//! `rocmenv doctor`: the options, the host probe, the checks, and a reporter.

use crate::checks::{self, Context, Summary};
use crate::cli::DoctorArgs;
use crate::error::Error;
use crate::host::{self, HostRoot, ProbeOptions, Session};
use crate::matrix::Matrices;
use crate::report::{self, DoctorReport, Style};
use crate::target::{self, TargetSpec};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// What `rocmenv doctor` checks and how: its flags, validated (also what tests and benchmarks call in-process).
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

/// Runs the doctor in-process and returns the report (no output).
pub fn build_report(opts: &DoctorOptions) -> Result<DoctorReport, Error> {
    // Flags and data first, without touching the host.
    let matrices = Matrices::load(opts.matrices.as_deref())?;
    let (root, session) = open_host(opts)?;
    build_report_on(opts, &matrices, &root, session.as_ref())
}

/// Opens the host `opts` names: the running one, a tree or a bundle.
pub fn open_host(opts: &DoctorOptions) -> Result<(HostRoot, Box<dyn Session>), Error> {
    host::open(
        opts.sysroot.as_deref(),
        opts.tool_timeout.unwrap_or(Duration::from_secs(10)),
    )
}

/// The report on a host already opened (`collect` opens it with a recorder).
pub fn build_report_on(
    opts: &DoctorOptions,
    matrices: &Matrices,
    root: &HostRoot,
    session: &dyn Session,
) -> Result<DoctorReport, Error> {
    let facts = crate::inventory::probe(root, session, matrices, &ProbeOptions { deep: opts.deep });
    let target = target::resolve(opts.target.as_ref(), matrices, &facts)?;
    // The same resolution `run` and `build` use: DOCKER_HOST and its TLS variables, a Docker context, the sockets.
    // `--only` another area does not wait on a daemon it will not show.
    let wants_docker = opts
        .only
        .as_deref()
        .is_none_or(|o| o == "containers" || o == "docker" || o.starts_with("docker."));
    let docker = (root.is_live() && !opts.no_docker && wants_docker)
        .then(crate::engine::docker_status_from_env);
    // The runtimes are the host's own: ask them only when checking the running host.
    let runtime = root
        .is_live()
        .then(|| crate::runtime::probe_all(&crate::runtime::RuntimeOptions::from_env()));
    let cx = Context {
        runtime: runtime.as_ref(),
        facts: &facts,
        matrices,
        target: &target,
        docker: docker.as_ref(),
        deep: opts.deep,
    };
    let mut findings = checks::run_all(&cx);
    if let Some(n) = opts.expect_gpus {
        findings.push(checks::expected_gpus(&facts, n));
    }
    if let Some(only) = &opts.only {
        findings = checks::only(findings, only)?;
    }
    let summary = Summary::of(&findings);
    let why = [
        target.rocm.as_ref().map(|r| r.why.clone()),
        target.cuda.as_ref().map(|c| c.why.clone()),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join("; ");
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
        facts,
        findings,
        summary,
    })
}

/// Runs `rocmenv doctor` and writes the report; returns the exit code.
pub fn exec(
    a: DoctorArgs,
    matrices: Option<PathBuf>,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let opts = DoctorOptions {
        sysroot: a.sysroot,
        matrices,
        target: a.target,
        deep: a.deep,
        tool_timeout: Some(Duration::from_secs(a.tool_timeout)),
        no_docker: false,
        only: a.only,
        expect_gpus: a.expect_gpus,
    };
    let r = build_report(&opts)?;
    super::written(if a.json {
        report::render_json(&r, out)
    } else {
        report::render_human(&r, style, out)
    })?;
    let code = r.summary.exit_code(a.strict);
    if a.strict && r.summary.fail == 0 && code != crate::error::EXIT_OK {
        // Say which warnings --strict turned into the failure, so the exit code is not a riddle.
        let warned: Vec<String> = r
            .findings
            .iter()
            .filter(|f| f.status == checks::Status::Warn)
            .map(|f| match &f.subject {
                Some(s) => format!("{} ({s})", f.id),
                None => f.id.to_string(),
            })
            .collect();
        let _ = writeln!(
            err,
            "rocmenv: --strict: exit 1 for {} {}: {}",
            warned.len(),
            if warned.len() == 1 {
                "warning"
            } else {
                "warnings"
            },
            warned.join(", ")
        );
    }
    Ok(code)
}
