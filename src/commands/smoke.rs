//! `rocmenv smoke`: the flags as a plan, `ops::suite::smoke`, and a row per test (and per device) as it finishes,
//! then the figures against the datasheet peak.

use crate::cli::SmokeArgs;
use crate::error::{Error, EXIT_FAILED};
use crate::ops::suite::{self, SmokeOutcome, SmokePlan};
use crate::ops::{Ctx, Event};
use crate::report::Style;
use std::io::Write;

/// The plan `a` asks for (no I/O).
pub fn plan(a: SmokeArgs) -> SmokePlan {
    SmokePlan {
        suite: super::suite_plan(a.suite),
        level: a.level,
        only: a.only,
        expect_gpus: a.expect_gpus,
        duration: a.duration,
    }
}

/// Runs `rocmenv smoke`; returns the exit code.
pub fn exec(
    a: SmokeArgs,
    ctx: &Ctx,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let p = plan(a);
    let mut show = super::SuiteReporter::new(style, false);
    let outcome = suite::smoke(ctx, &p, &mut |ev| {
        if let Event::SuiteStarted { plan, image } = &ev {
            let n = plan.tests.len();
            let _ = writeln!(
                out,
                "rocmenv smoke: {} level, {n} test{}, vendor {}, {}",
                plan.level,
                if n == 1 { "" } else { "s" },
                plan.vendor,
                super::place(*image)
            );
        }
        show.event(&ev, out, err)
    })?;
    show.result()?;
    match outcome {
        SmokeOutcome::NoGpu => {
            let _ = writeln!(err, "rocmenv: smoke: this host shows no GPU, so a GPU smoke test fails here; give --vendor cpu to test the CPU stack");
            Ok(EXIT_FAILED)
        }
        SmokeOutcome::TooFewGpus(why) => {
            let _ = writeln!(err, "rocmenv: {why}");
            Ok(EXIT_FAILED)
        }
        SmokeOutcome::Ran(finished) => Ok(suite::exit_code(&finished)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_flags_become_the_plan() {
        let cli = crate::cli::Cli::try_parse_from([
            "rocmenv",
            "smoke",
            "--image",
            "img",
            "--vendor",
            "cpu",
            "--timeout",
            "30",
        ])
        .unwrap();
        let crate::cli::Command::Smoke(a) = cli.command else {
            panic!("smoke")
        };
        let p = plan(a);
        assert_eq!(p.suite.image.as_deref(), Some("img"));
        assert_eq!(p.suite.vendor, Some(crate::vendor::Vendor::Cpu));
        assert_eq!(p.suite.timeout, Some(std::time::Duration::from_secs(30)));
        assert_eq!(p.level, crate::suites::Level::Quick);
    }
}
