//! `rocmenv bench`: the flags as a plan, `ops::suite::bench`, and its rows, figures and baselines shown.

use crate::cli::BenchArgs;
use crate::error::Error;
use crate::ops::suite::{self, BenchPlan};
use crate::ops::{Ctx, Event};
use crate::report::Style;
use std::io::Write;

/// The plan `a` asks for (no I/O).
pub fn plan(a: BenchArgs) -> BenchPlan {
    BenchPlan {
        suite: super::suite_plan(a.suite),
        model: a.model,
        tune: a.tune,
        batch: a.batch,
        precision: a.precision,
        mode: a.mode,
        iters: a.iters,
        warmup: a.warmup,
        baseline: a.baseline,
        save_baseline: a.save_baseline,
        threshold: a.threshold,
        fail_on_regression: a.fail_on_regression,
    }
}

/// Runs `rocmenv bench`; returns the exit code.
pub fn exec(
    a: BenchArgs,
    ctx: &Ctx,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let p = plan(a);
    let model = if p.tune { "tune" } else { p.model.as_str() };
    let mut show = super::SuiteReporter::new(style, p.tune);
    let outcome = suite::bench(ctx, &p, &mut |ev| {
        if let Event::SuiteStarted { plan, image } = &ev {
            let _ = writeln!(
                out,
                "rocmenv bench: {model}, vendor {}, {}",
                plan.vendor,
                super::place(*image)
            );
        }
        show.event(&ev, out, err)
    })?;
    show.result()?;
    if let Some(s) = &outcome.saved {
        let _ = writeln!(
            out,
            "saved {} figure(s) to {} ({} replaced, {} kept)",
            s.added,
            s.path.display(),
            s.replaced,
            s.kept
        );
    }
    for u in &outcome.unmatched {
        let _ = writeln!(
            err,
            "rocmenv: {}: --baseline {} matches no figure of this run (same device, test, metric and parameters); {}",
            if p.fail_on_regression { "error" } else { "note" },
            u.file.display(),
            u.held
        );
    }
    if outcome.regressed && !p.fail_on_regression {
        let _ = writeln!(err, "rocmenv: warning: a figure regressed past --threshold {}% (add --fail-on-regression to fail)", p.threshold);
    }
    Ok(outcome.code)
}
