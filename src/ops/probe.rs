//! `rocmenv probe` and `rocmenv run --probe`: what the GPU runtimes themselves see, on this host or inside an image
//! with a run's device mapping (a rocmenv binary copied in runs `rocmenv probe --json` there).

use super::run::{plan_run, RunPlan};
use super::{Ctx, Sink};
use crate::engine::{self, OutputStream};
use crate::error::Error;
use crate::runtime::{self, ProbeStatus};
use std::path::PathBuf;

pub use crate::runtime::{RuntimeOptions, RuntimeReport};

/// Where `--probe` puts the binary: `/tmp` exists in every image and is writable by any user.
const PROBE_PATH: (&str, &str) = ("/tmp", "rocmenv-probe");

/// What `rocmenv probe` found on this host, and its exit code.
#[derive(Debug)]
pub struct HostProbe {
    /// Both runtimes.
    pub report: RuntimeReport,
    /// `rocmenv probe`'s exit rule over the report.
    pub exit_code: i32,
}

/// Probes every runtime on this host (`opts`: where to look).
pub fn probe(opts: &RuntimeOptions) -> HostProbe {
    let report = runtime::probe_all(opts);
    let exit_code = runtime::exit_code(&report);
    HostProbe { report, exit_code }
}

/// What `rocmenv probe --json` said inside an image.
#[derive(Debug)]
pub enum ContainerProbe {
    /// The container was stopped (timeout, Ctrl-C) before the probe finished; the process exit code.
    Stopped(i32),
    /// The probe's report.
    Report {
        /// The device mapping the container got (`amd`, `nvidia`, `cpu`).
        mapping: String,
        /// `rocmenv probe --json`'s document as it came back (the binary in the image may be another version).
        report: serde_json::Value,
        /// `rocmenv probe`'s exit rule over it.
        exit_code: i32,
    },
}

/// Runs `rocmenv probe --json` in `plan.image` with the run's device mapping. The binary copied in is
/// `plan.probe_binary`, else this one; a binary for another architecture is refused (field `probe-binary`).
pub fn in_container(ctx: &Ctx, plan: &RunPlan, on: Sink) -> Result<ContainerProbe, Error> {
    let (path, bytes, exe) = probe_binary(plan)?;
    let engine = ctx.engine()?;
    if let Some(arch) = engine.image_architecture(&plan.image) {
        if arch != exe.arch {
            return Err(Error::invalid(
                "probe-binary",
                format!(
                    "{} is built for {} but {} is {arch}: pass a {arch} build of rocmenv with --probe-binary FILE",
                    path.display(),
                    exe.arch,
                    plan.image
                ),
            ));
        }
    }
    let mut spec = plan_run(ctx, plan, Some(engine), on)?;
    spec.command = vec![
        format!("{}/{}", PROBE_PATH.0, PROBE_PATH.1),
        "probe".into(),
        "--json".into(),
    ];
    spec.uploads = vec![engine::Upload {
        dir: PROBE_PATH.0.into(),
        name: PROBE_PATH.1.into(),
        mode: 0o755,
        bytes,
    }];
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let outcome = engine.run(&spec, &mut |which, bytes| match which {
        OutputStream::Stdout => stdout.extend_from_slice(bytes),
        OutputStream::Stderr => stderr.extend_from_slice(bytes),
    })?;
    if outcome.interrupted.is_some() || outcome.timed_out {
        return Ok(ContainerProbe::Stopped(outcome.process_exit_code()));
    }
    let Some(report) = serde_json::from_slice::<serde_json::Value>(&stdout).ok() else {
        let stderr = String::from_utf8_lossy(&stderr);
        return Err(no_report(plan, &path, &exe, &stderr, outcome.exit_code));
    };
    let exit_code = probe_exit_code(&report);
    Ok(ContainerProbe::Report {
        mapping: format!("{:?}", spec.devices.vendor).to_lowercase(),
        report,
        exit_code,
    })
}

/// Why the probe in the image gave no report, from what it wrote on stderr.
fn no_report(
    plan: &RunPlan,
    path: &std::path::Path,
    exe: &crate::elf::Executable,
    text: &str,
    exit_code: Option<i64>,
) -> Error {
    if let Some(line) = text.lines().find(|l| l.contains("GLIBC_")) {
        return Error::Environment(format!(
            "{}: the image's glibc is older than {} needs ({}; the loader said: {}): copy the portable build (glibc ≥ 2.17, made by scripts/build-portable) with --probe-binary FILE",
            plan.image,
            path.display(),
            exe.glibc.as_ref().map_or("a newer glibc".into(), |v| format!("glibc ≥ {v}")),
            line.trim()
        ));
    }
    let exec_failed = text.contains(&format!("{}/{}", PROBE_PATH.0, PROBE_PATH.1))
        && text.to_lowercase().contains("no such file or directory");
    if let (true, Some(loader)) = (exec_failed, &exe.interpreter) {
        return Error::Environment(format!(
            "{}: the image has no {loader}, so {} cannot start there: it is not a glibc image (musl, distroless-static or scratch), and libcuda and libamdhip64 are glibc libraries, so there is no GPU runtime in it to probe",
            plan.image,
            path.display()
        ));
    }
    Error::Environment(format!(
        "`rocmenv probe` in {} exited {} without a report: {}",
        plan.image,
        exit_code.map_or("?".into(), |c| c.to_string()),
        text.lines().last().unwrap_or("no output").trim()
    ))
}

/// The binary `--probe` copies in, read and checked: `probe_binary` (or `ROCMENV_PROBE_BINARY`), else this one.
fn probe_binary(o: &RunPlan) -> Result<(PathBuf, Vec<u8>, crate::elf::Executable), Error> {
    let Some(given) = &o.probe_binary else {
        let this = std::env::current_exe().map_err(|e| {
            Error::Environment(format!("cannot find the running rocmenv binary: {e}"))
        })?;
        let bytes = std::fs::read(&this).map_err(|e| Error::io("read", &this, e))?;
        let exe = crate::elf::inspect(&bytes)
            .map_err(|e| Error::Environment(format!("{}: {e}", this.display())))?;
        return Ok((this, bytes, exe));
    };
    let bytes = std::fs::read(given).map_err(|e| {
        Error::invalid(
            "probe-binary",
            format!("cannot read {}: {e}", given.display()),
        )
    })?;
    let exe = crate::elf::inspect(&bytes).map_err(|e| {
        Error::invalid(
            "probe-binary",
            format!("{}: {e}; give a rocmenv binary", given.display()),
        )
    })?;
    Ok((given.clone(), bytes, exe))
}

/// `rocmenv probe`'s exit rule, applied to its JSON; a status that cannot be read counts as an error.
fn probe_exit_code(v: &serde_json::Value) -> i32 {
    let statuses = ["cuda", "hip"]
        .map(|r| serde_json::from_value(v[r]["status"].clone()).unwrap_or(ProbeStatus::Error));
    runtime::exit_code_of(&statuses)
}
