//! `rocmenv smoke`: the smoke suite at a level, in a container or on the host; a row per test (and per device) as it
//! finishes, then the figures against the datasheet peak.

use super::suite;
use crate::cli::SmokeArgs;
use crate::error::{Error, EXIT_FAILED};
use crate::matrix::Matrices;
use crate::report::{self, Style};
use crate::status::Status;
use crate::suites::{self, Suite, TestResult};
use crate::vendor::Vendor;
use std::io::Write;
use std::path::PathBuf;

/// Runs `rocmenv smoke`; returns the exit code.
pub fn exec(
    a: SmokeArgs,
    matrices: Option<PathBuf>,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let m = Matrices::load(matrices.as_deref())?;
    let target = suite::target(&a.suite, &m)?;
    let plan = Suite::embedded()
        .smoke_plan(a.level.into(), target.vendor, &a.only)
        .map_err(|e| Error::usage("only", e.to_string()))?;
    // A node whose GPU fell off the bus looks like a CPU host: passing it would hide exactly that.
    if target.detected && target.vendor == Vendor::Cpu {
        let _ = writeln!(err, "rocmenv: smoke: this host shows no GPU, so a GPU smoke test fails here; give --vendor cpu to test the CPU stack");
        return Ok(EXIT_FAILED);
    }
    if let Some(why) = suite::expect_gpus(&target, a.expect_gpus) {
        let _ = writeln!(err, "rocmenv: {why}");
        return Ok(EXIT_FAILED);
    }
    let _ = writeln!(
        out,
        "rocmenv smoke: {} level, {} test{}, vendor {}, {}",
        plan.level,
        plan.tests.len(),
        if plan.tests.len() == 1 { "" } else { "s" },
        plan.vendor,
        match &a.suite.image {
            Some(i) => format!("in {i}"),
            None => "on this host".into(),
        }
    );
    let mut finished = suite::run(&a.suite, matrices, &target, &plan, style, out, err)?;
    if let Some(n) = a.expect_gpus {
        let seen = finished.result.device.count as usize;
        // With --gpu the run sees only what it was given; a failed run never described its devices.
        let described = !finished.result.device.kind.is_empty();
        if target.vendor != Vendor::Cpu && a.suite.gpu.is_empty() && described && seen < n {
            let why = format!(
                "torch sees {seen} device{} in the run; --expect-gpus {n}",
                if seen == 1 { "" } else { "s" }
            );
            let t = TestResult::new("expect-gpus", Status::Fail, Some(why));
            super::written(report::render_suite_test(&t, style, out))?;
            finished.result.tests.push(t);
        }
    }
    suites::compare(&mut finished.result, &m, &[], 0.0, &target.gpus);
    super::written(report::render_suite_summary(&finished.result, out))?;
    suite::write_outputs(&a.suite, &finished.result)?;
    Ok(suite::exit_code(&finished))
}
