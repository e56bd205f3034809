//! `rocmenv doctor`: the flags as a plan, `ops::doctor`, and a reporter.

use crate::cli::DoctorArgs;
use crate::error::Error;
use crate::ops::doctor::DoctorPlan;
use crate::ops::{Ctx, HostSpec};
use crate::report::{self, Style};
use std::io::Write;
use std::time::Duration;

/// The host doctor's flags name: `--sysroot`, `--tool-timeout`, `--deep`.
pub fn host_spec(a: &DoctorArgs) -> HostSpec {
    HostSpec {
        sysroot: a.sysroot.clone(),
        tool_timeout: Duration::from_secs(a.tool_timeout),
        deep: a.deep,
    }
}

/// What doctor's flags ask beside the host.
pub fn plan(a: &DoctorArgs) -> DoctorPlan {
    DoctorPlan {
        target: a.target.clone(),
        no_docker: false,
        only: a.only.clone(),
        expect_gpus: a.expect_gpus,
        strict: a.strict,
    }
}

/// Runs `rocmenv doctor` and writes the report; returns the exit code.
pub fn exec(
    a: DoctorArgs,
    ctx: &Ctx,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let r = crate::ops::doctor::report(ctx, &plan(&a))?;
    super::written(if a.json {
        report::render_json(&r, out)
    } else {
        report::render_human(&r, style, out)
    })?;
    let code = r.verdict().exit_code;
    if a.strict && r.summary.fail == 0 && code != crate::error::EXIT_OK {
        // Say which warnings --strict turned into the failure, so the exit code is not a riddle.
        let warned: Vec<String> = r
            .findings
            .iter()
            .filter(|f| f.status == crate::status::Status::Warn)
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_flags_become_the_host_and_the_plan() {
        let cli = crate::cli::Cli::try_parse_from([
            "rocmenv",
            "doctor",
            "--sysroot",
            "/x",
            "--deep",
            "--only",
            "kernel",
        ])
        .unwrap();
        let crate::cli::Command::Doctor(a) = cli.command else {
            panic!("doctor")
        };
        let h = host_spec(&a);
        assert_eq!(h.sysroot.as_deref(), Some(std::path::Path::new("/x")));
        assert!(h.deep);
        assert_eq!(plan(&a).only.as_deref(), Some("kernel"));
    }
}
