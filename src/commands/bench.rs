//! `rocmenv bench`: one benchmark with more iterations (or `--tune`), compared with the datasheet peak and the
//! baselines given; `--save-baseline` keeps this run's figures for the next.

use super::suite;
use crate::cli::{BenchArgs, ModeArg, PrecisionArg};
use crate::error::Error;
use crate::matrix::Matrices;
use crate::report::{self, Style};
use crate::suites::{self, Baselines, Suite};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;

/// Reads the `--baseline` files, each a YAML (or JSON) baselines document.
fn load_baselines(files: &[PathBuf]) -> Result<Vec<suites::Baseline>, Error> {
    let mut all = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| Error::io("read", f, e))?;
        let b: Baselines = serde_yaml_ng::from_str(&text).map_err(|e| {
            Error::usage(
                "baseline",
                format!("{}: {e} (write one with --save-baseline FILE)", f.display()),
            )
        })?;
        if b.schema_version != 1 {
            return Err(Error::usage(
                "baseline",
                format!(
                    "{}: schema_version {} (this rocmenv reads 1)",
                    f.display(),
                    b.schema_version
                ),
            ));
        }
        all.extend(b.baselines);
    }
    Ok(all)
}

/// Runs `rocmenv bench`; returns the exit code.
pub fn exec(
    a: BenchArgs,
    matrices: Option<PathBuf>,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    if !(0.0..100.0).contains(&a.threshold) {
        return Err(Error::usage(
            "threshold",
            format!("{} is not a percentage below 100", a.threshold),
        ));
    }
    let baselines = load_baselines(&a.baseline)?;
    let m = Matrices::load(matrices.as_deref())?;
    let vendor = suite::vendor(&a.suite, &m)?;
    let mut overrides: Vec<(&str, Value)> = Vec::new();
    if let Some(b) = a.batch {
        overrides.push(("batch", b.into()));
    }
    if let Some(p) = a.precision {
        let name = match p {
            PrecisionArg::Fp32 => "fp32",
            PrecisionArg::Fp16 => "fp16",
            PrecisionArg::Bf16 => "bf16",
            PrecisionArg::Amp => "amp",
            PrecisionArg::Int8 => "int8",
        };
        overrides.push(("precision", name.into()));
    }
    if let Some(mode) = a.mode {
        overrides.push((
            "mode",
            if mode == ModeArg::Train {
                "train"
            } else {
                "infer"
            }
            .into(),
        ));
    }
    if let Some(n) = a.iters {
        overrides.push(("iters", n.into()));
    }
    if let Some(n) = a.warmup {
        overrides.push(("warmup", n.into()));
    }
    let model = if a.tune { "tune" } else { a.model.as_str() };
    let plan = Suite::embedded()
        .bench_plan(model, suite::vendor_name(vendor), &overrides)
        .map_err(|e| Error::usage(if a.tune { "tune" } else { "model" }, e.to_string()))?;
    let _ = writeln!(
        out,
        "rocmenv bench: {model}, vendor {}, {}",
        plan.vendor,
        match &a.suite.image {
            Some(i) => format!("in {i}"),
            None => "on this host".into(),
        }
    );
    let mut finished = suite::run(&a.suite, matrices, vendor, &plan, style, out, err)?;
    suites::compare(&mut finished.result, &m, &baselines, a.threshold / 100.0);
    super::written(report::render_suite_summary(&finished.result, out))?;
    if a.tune {
        super::written(report::render_tune(&finished.result, out))?;
    }
    suite::write_outputs(&a.suite, &finished.result)?;
    if let Some(path) = &a.save_baseline {
        let source = format!(
            "rocmenv bench --model {model}, {}",
            finished
                .result
                .finished_at
                .as_deref()
                .unwrap_or("date unknown")
        );
        let doc = suites::baselines_from(&finished.result, &source);
        let text = serde_yaml_ng::to_string(&doc).map_err(|e| Error::Environment(e.to_string()))?;
        suite::write_atomic(path, text.as_bytes())?;
        let _ = writeln!(
            out,
            "saved {} figure(s) to {}",
            doc.baselines.len(),
            path.display()
        );
    }
    let regressed = finished.result.comparisons.iter().any(|c| c.regression);
    if regressed && !a.fail_on_regression {
        let _ = writeln!(err, "rocmenv: warning: a figure regressed past --threshold {}% (add --fail-on-regression to fail)", a.threshold);
    }
    let code = suite::exit_code(&finished);
    Ok(if code == 0 && regressed && a.fail_on_regression {
        crate::error::EXIT_FAILED
    } else {
        code
    })
}
