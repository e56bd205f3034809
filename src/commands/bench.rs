//! `rocmenv bench`: one benchmark with more iterations (or `--tune`), compared with the datasheet peak and the
//! baselines given; `--save-baseline` adds this run's figures to a file for the next.

use super::suite;
use crate::cli::BenchArgs;
use crate::error::Error;
use crate::matrix::Matrices;
use crate::report::{self, Style};
use crate::suites::{self, Baseline, Baselines, BenchOverrides, Suite};
use crate::vendor::Vendor;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Reads one baselines document (YAML or JSON); a missing file is `None`.
fn read_baselines(f: &Path, missing_ok: bool) -> Result<Option<Baselines>, Error> {
    let text = match std::fs::read_to_string(f) {
        Ok(t) => t,
        Err(e) if missing_ok && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", f, e)),
    };
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
    Ok(Some(b))
}

/// Reads the `--baseline` files: every figure, and which file each came from.
fn load_baselines(files: &[PathBuf]) -> Result<(Vec<Baseline>, Vec<usize>), Error> {
    let mut all = Vec::new();
    let mut from = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let b = read_baselines(f, false)?.unwrap_or_default();
        from.extend(std::iter::repeat_n(i, b.baselines.len()));
        all.extend(b.baselines);
    }
    Ok((all, from))
}

/// What a baselines file holds, briefly: `resnet50 throughput on cpu (batch 4, precision fp32)`, at most three.
fn holds(b: &[&Baseline]) -> String {
    let mut shown: Vec<String> = Vec::new();
    for x in b {
        let params: Vec<String> = x
            .params
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k} {}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect();
        let p = if params.is_empty() {
            String::new()
        } else {
            format!(" ({})", params.join(", "))
        };
        let line = format!("{} {} on {}{p}", x.test, x.metric, x.device);
        if !shown.contains(&line) {
            shown.push(line);
        }
    }
    let more = shown.len().saturating_sub(3);
    shown.truncate(3);
    let mut text = shown.join("; ");
    if more > 0 {
        text.push_str(&format!("; and {more} more"));
    }
    text
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
    let (baselines, from) = load_baselines(&a.baseline)?;
    // Read before the run: a file that cannot take the figures should fail now, not after minutes of work.
    let saved_before = match &a.save_baseline {
        Some(p) => read_baselines(p, true)?,
        None => None,
    };
    let m = Matrices::load(matrices.as_deref())?;
    let target = suite::target(&a.suite, &m)?;
    let overrides = BenchOverrides {
        batch: a.batch,
        precision: a.precision,
        mode: a.mode,
        iters: a.iters,
        warmup: a.warmup,
    };
    let model = if a.tune { "tune" } else { a.model.as_str() };
    let plan = Suite::embedded()
        .bench_plan(model, target.vendor, &overrides)
        .map_err(|e| Error::usage(if a.tune { "tune" } else { "model" }, e.to_string()))?;
    if target.detected && target.vendor == Vendor::Cpu {
        let _ = writeln!(
            err,
            "rocmenv: note: this host shows no GPU, so this benchmarks the CPU (--vendor cpu asks for that without this note)"
        );
    }
    let _ = writeln!(
        out,
        "rocmenv bench: {model}, vendor {}, {}",
        plan.vendor,
        match &a.suite.image {
            Some(i) => format!("in {i}"),
            None => "on this host".into(),
        }
    );
    let mut finished = suite::run(&a.suite, matrices, &target, &plan, style, out, err)?;
    let matched = suites::compare(
        &mut finished.result,
        &m,
        &baselines,
        a.threshold / 100.0,
        &target.gpus,
    );
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
        let new = suites::baselines_from(&finished.result, &source);
        let n = new.baselines.len();
        let mut doc = saved_before.unwrap_or(Baselines {
            schema_version: 1,
            baselines: Vec::new(),
        });
        let kept = doc.baselines.len();
        doc.merge(new);
        let replaced = kept + n - doc.baselines.len();
        let text = serde_yaml_ng::to_string(&doc).map_err(|e| Error::Environment(e.to_string()))?;
        suite::write_atomic(path, text.as_bytes())?;
        let _ = writeln!(
            out,
            "saved {n} figure(s) to {} ({replaced} replaced, {} kept)",
            path.display(),
            kept - replaced
        );
    }
    // A comparison asked for either happens or is reported as missing.
    let mut unmatched = 0;
    for (i, f) in a.baseline.iter().enumerate() {
        let mine: Vec<(usize, &Baseline)> = baselines
            .iter()
            .enumerate()
            .filter(|(j, _)| from[*j] == i)
            .collect();
        if mine.iter().any(|(j, _)| matched[*j]) {
            continue;
        }
        unmatched += 1;
        let entries: Vec<&Baseline> = mine.iter().map(|(_, b)| *b).collect();
        let held = if entries.is_empty() {
            "it holds no figures".to_string()
        } else {
            format!("it holds {}", holds(&entries))
        };
        let _ = writeln!(
            err,
            "rocmenv: {}: --baseline {} matches no figure of this run (same device, test, metric and parameters); {held}",
            if a.fail_on_regression { "error" } else { "note" },
            f.display()
        );
    }
    let regressed = finished.result.comparisons.iter().any(|c| c.regression);
    if regressed && !a.fail_on_regression {
        let _ = writeln!(err, "rocmenv: warning: a figure regressed past --threshold {}% (add --fail-on-regression to fail)", a.threshold);
    }
    let code = suite::exit_code(&finished);
    Ok(
        if code == 0 && (regressed || unmatched > 0) && a.fail_on_regression {
            crate::error::EXIT_FAILED
        } else {
            code
        },
    )
}
