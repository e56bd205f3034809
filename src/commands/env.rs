//! `rocmenv env`: validate the flags, find the GPUs (host or `--gfx`), plan, print.

use crate::cli::EnvArgs;
use crate::error::Error;
use crate::ops::env::EnvRequest;
use crate::ops::Ctx;
use crate::ops::{is_user_var, UserVarFix};
use crate::report::render_env;
use crate::report::EnvFormat;
use std::io::Write;

/// Runs `rocmenv env`; warnings go to `err`, variables to `out`. Returns the exit code.
pub fn exec(o: EnvArgs, ctx: &Ctx, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Error> {
    let m = ctx.matrices()?;
    let rocm = o
        .rocm
        .as_deref()
        .map(|s| super::rocm_release(m, s))
        .transpose()?;
    let req = EnvRequest {
        gfx: o.gfx.clone(),
        rocm,
        device: o.device,
        // The shell that evaluates the output has this process's environment.
        user_env: std::env::vars().filter(|(k, _)| is_user_var(k)).collect(),
    };
    let answer = crate::ops::env::env(ctx, &req).map_err(|e| e.named_as_flags(&[]))?;
    if let (Some(d), Some(label)) = (o.device, &answer.device_label) {
        // Name the GPU the index means, so a number is never taken on trust.
        let _ = writeln!(err, "rocmenv env: --device {d} is {label}");
    }
    for w in &answer.plan.warnings {
        let _ = writeln!(err, "rocmenv: warning: {w}");
    }
    for c in &answer.corrected {
        let what = match &c.fix {
            UserVarFix::Set(v) => format!("this output sets {}={v}", c.name),
            UserVarFix::Unset => match o.format {
                EnvFormat::Sh | EnvFormat::Fish | EnvFormat::Json => {
                    format!("this output unsets {}", c.name)
                }
                _ => format!(
                    "remove {} from this environment by hand (this format cannot unset it)",
                    c.name
                ),
            },
        };
        let _ = writeln!(
            err,
            "rocmenv: warning: your environment's {}; {what}",
            c.problem
        );
    }
    super::written(render_env(&answer.plan, o.format, o.explain, out))?;
    Ok(if answer.plan.unusable {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    })
}
