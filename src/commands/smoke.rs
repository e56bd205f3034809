//! `rocmenv smoke`: the smoke suite at a level, in a container or on the host; a row per test as it finishes,
//! then the figures against the datasheet peak.

use super::suite;
use crate::cli::SmokeArgs;
use crate::error::Error;
use crate::matrix::Matrices;
use crate::report::{self, Style};
use crate::suites::{self, Suite};
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
    let vendor = suite::vendor(&a.suite, &m)?;
    let plan = Suite::embedded()
        .smoke_plan(a.level.into(), suite::vendor_name(vendor), &a.only)
        .map_err(|e| Error::usage("only", e.to_string()))?;
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
    let mut finished = suite::run(&a.suite, matrices, vendor, &plan, style, out, err)?;
    suites::compare(&mut finished.result, &m, &[], 0.0);
    super::written(report::render_suite_summary(&finished.result, out))?;
    suite::write_outputs(&a.suite, &finished.result)?;
    Ok(suite::exit_code(&finished))
}
