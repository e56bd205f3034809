//! `rocmenv validate`: the flags as a plan, `ops::validate`, and its reporter: each stack's header and each case as
//! it is decided on stdout, build progress and notes on stderr, then the summary, the report files and (under
//! GitHub Actions) the annotations.

use crate::cli::ValidateArgs;
use crate::error::Error;
use crate::ops::validate::{self, Reports, ValidatePlan};
use crate::ops::{Ctx, Event};
use crate::report::validate as vr;
use crate::report::{BuildProgress, Style};
use std::io::{IsTerminal, Write};

/// The plan `a` asks for: the base image is checked as a reference; nothing is read.
pub fn plan(a: ValidateArgs) -> Result<ValidatePlan, Error> {
    if let Some(b) = &a.base {
        crate::sanitize::image_reference("base", b).map_err(|e| e.named_as_flags(&[]))?;
    }
    Ok(ValidatePlan {
        config: a.config,
        stacks: a.stack,
        base: a.base,
        expect_gpus: a.expect_gpus,
        reports: Reports {
            junit: a.junit,
            json: a.json,
            html: a.html,
            markdown: a.markdown,
        },
    })
}

/// Runs `rocmenv validate`.
pub fn exec(
    a: ValidateArgs,
    ctx: &Ctx,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let p = plan(a)?;
    let config = p.config.display().to_string();
    // Build output is a log, not the report: it goes to stderr as `rocmenv build` prints it.
    let stderr = std::io::stderr();
    let mut progress = BuildProgress::new(false, stderr.is_terminal(), Box::new(stderr));
    let report = validate::validate(ctx, &p, &mut |ev| match ev {
        Event::Stack { name, stack, base } => {
            let _ = writeln!(
                out,
                "rocmenv validate: stack {name} ({stack} stack, FROM {base}), from {config}"
            );
        }
        Event::Case(c) => {
            let _ = vr::render_case(c, style, out);
            let _ = out.flush();
        }
        Event::Build(b) => progress.event(b),
        ev => super::log_event(err, &ev),
    });
    progress.finish();
    let report = report?;
    let _ = writeln!(out, "{}", report.summary.line());
    for (what, path) in validate::write_reports(&p.reports, &report)? {
        let _ = writeln!(out, "wrote {what} to {}", path.display());
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        super::written(vr::validate_annotations(&report, out))?;
    }
    Ok(if report.summary.fail > 0 {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_flags_become_the_plan_and_a_bad_base_is_refused() {
        let parse = |args: &[&str]| {
            let cli = crate::cli::Cli::try_parse_from(args).unwrap();
            let crate::cli::Command::Validate(a) = cli.command else {
                panic!("validate")
            };
            plan(a)
        };
        let p = parse(&["rocmenv", "validate", "--stack", "cpu", "--junit", "v.xml"]).unwrap();
        assert_eq!(p.stacks, ["cpu"]);
        assert_eq!(
            p.reports.junit.as_deref(),
            Some(std::path::Path::new("v.xml"))
        );
        let e = parse(&["rocmenv", "validate", "--base", "Bad Image"]).unwrap_err();
        assert!(e.to_string().contains("--base"), "{e}");
    }
}
