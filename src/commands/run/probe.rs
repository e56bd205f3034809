//! `rocmenv run --probe`: copy a rocmenv binary into the image and run `rocmenv probe --json` there with the run's
//! device mapping, so a container that cannot see the GPU is reported before any Python runs.

use super::usage;
use crate::engine::{self, OutputStream};
use crate::error::Error;
use crate::ops::run::{plan_run, RunPlan};
use crate::ops::Ctx;
use std::io::Write;
use std::path::PathBuf;

/// Where `--probe` puts the binary: `/tmp` exists in every image and is writable by any user.
const PROBE_PATH: (&str, &str) = ("/tmp", "rocmenv-probe");

/// `rocmenv run --probe`: the runtimes as the container sees them, before any Python runs.
pub(crate) fn probe_in_container(
    ctx: &Ctx,
    o: &RunPlan,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    if !o.command.is_empty() {
        return Err(usage(
            "--probe",
            "runs `rocmenv probe` in the image; give no command after --".into(),
        ));
    }
    let (path, bytes, exe) = probe_binary(o)?;
    let engine = ctx.engine()?;
    if let Some(arch) = engine.image_architecture(&o.image) {
        if arch != exe.arch {
            return Err(usage(
                "--probe-binary",
                format!(
                    "{} is built for {} but {} is {arch}: pass a {arch} build of rocmenv with --probe-binary FILE",
                    path.display(),
                    exe.arch,
                    o.image
                ),
            ));
        }
    }
    let mut spec = plan_run(ctx, o, Some(engine), &mut |ev| {
        super::super::log_event(err, &ev)
    })?;
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
        let _ = writeln!(
            err,
            "rocmenv: the probe did not finish; container stopped and removed"
        );
        return Ok(outcome.process_exit_code());
    }
    let text = String::from_utf8_lossy(&stderr);
    let Some(report) = serde_json::from_slice::<serde_json::Value>(&stdout).ok() else {
        if let Some(line) = text.lines().find(|l| l.contains("GLIBC_")) {
            return Err(Error::Environment(format!(
                "{}: the image's glibc is older than {} needs ({}; the loader said: {}): copy the portable build (glibc ≥ 2.17, made by scripts/build-portable) with --probe-binary FILE",
                o.image,
                path.display(),
                exe.glibc.as_ref().map_or("a newer glibc".into(), |v| format!("glibc ≥ {v}")),
                line.trim()
            )));
        }
        let exec_failed = text.contains(&format!("{}/{}", PROBE_PATH.0, PROBE_PATH.1))
            && text.to_lowercase().contains("no such file or directory");
        if let (true, Some(loader)) = (exec_failed, &exe.interpreter) {
            return Err(Error::Environment(format!(
                "{}: the image has no {loader}, so {} cannot start there: it is not a glibc image (musl, distroless-static or scratch), and libcuda and libamdhip64 are glibc libraries, so there is no GPU runtime in it to probe",
                o.image,
                path.display()
            )));
        }
        return Err(Error::Environment(format!(
            "`rocmenv probe` in {} exited {} without a report: {}",
            o.image,
            outcome.exit_code.map_or("?".into(), |c| c.to_string()),
            text.lines().last().unwrap_or("no output").trim()
        )));
    };
    render_probe(
        &o.image,
        &format!("{:?}", spec.devices.vendor).to_lowercase(),
        &report,
        out,
    )
    .map_err(Error::Output)?;
    Ok(probe_exit_code(&report))
}

/// The binary `--probe` copies in, read and checked: `--probe-binary` (or `ROCMENV_PROBE_BINARY`), else this one.
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
        usage(
            "--probe-binary",
            format!("cannot read {}: {e}", given.display()),
        )
    })?;
    let exe = crate::elf::inspect(&bytes).map_err(|e| {
        usage(
            "--probe-binary",
            format!("{}: {e}; give a rocmenv binary", given.display()),
        )
    })?;
    Ok((given.clone(), bytes, exe))
}

/// `rocmenv probe`'s exit rule, applied to its JSON; a status that cannot be read counts as an error.
fn probe_exit_code(v: &serde_json::Value) -> i32 {
    let statuses = ["cuda", "hip"].map(|r| {
        serde_json::from_value(v[r]["status"].clone()).unwrap_or(crate::runtime::ProbeStatus::Error)
    });
    crate::runtime::exit_code_of(&statuses)
}

/// One line per runtime as the container saw it, with the error's fix when there is one.
fn render_probe(
    image: &str,
    mapping: &str,
    v: &serde_json::Value,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "in {image} ({mapping} device mapping):")?;
    for r in ["hip", "cuda"] {
        let p = &v[r];
        let status = p["status"].as_str().unwrap_or("?");
        let lib = p["library"].as_str().unwrap_or("no library");
        let devices = p["devices"].as_array().map_or(0, |d| d.len());
        let mark = match status {
            "ok" => "✓",
            "no_device" | "error" => "✗",
            _ => "-",
        };
        let what = match status {
            "ok" => format!("{devices} device(s) through {lib}"),
            "library_missing" | "unsupported" => p["note"]
                .as_str()
                .unwrap_or("library not found")
                .to_string(),
            _ => format!("{lib}: {}", p["error"]["name"].as_str().unwrap_or(status)),
        };
        writeln!(out, "  {mark} {r}: {what}")?;
        if let Some(fix) = p["error"]["fix"].as_str() {
            writeln!(out, "      fix: {fix}")?;
        }
    }
    Ok(())
}
