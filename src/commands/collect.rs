//! `rocmenv collect`: the flags as a plan, `ops::collect`, and a summary of the bundle for people.

use crate::cli::CollectArgs;
use crate::error::Error;
use crate::ops::collect::{self, CollectPlan, Collected};
use crate::ops::files;
use crate::ops::{Ctx, HostSpec};
use std::io::Write;
use std::time::{Duration, SystemTime};

/// The host collect's flags name.
pub fn host_spec(a: &CollectArgs) -> HostSpec {
    HostSpec {
        sysroot: a.sysroot.clone(),
        tool_timeout: Duration::from_secs(a.tool_timeout),
        deep: a.deep,
    }
}

/// The flags as a plan, made now.
pub fn plan(a: &CollectArgs) -> CollectPlan {
    CollectPlan {
        output: a.output.clone(),
        sysroot: a.sysroot.clone(),
        redact: a.redact,
        force: a.force,
        deep: a.deep,
        now: SystemTime::now(),
    }
}

/// Runs `rocmenv collect`; the summary on `out` is for people.
pub fn exec(a: CollectArgs, ctx: &Ctx, out: &mut dyn Write) -> Result<i32, Error> {
    let c = collect::collect(ctx, &plan(&a))?;
    // `-o /dev/stdout` sends the bundle down a pipe; the summary must not follow it there.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = if files::is_stdout(&c.output) {
        &mut stderr
    } else {
        out
    };
    super::written(summary(out, &c))?;
    Ok(crate::error::EXIT_OK)
}

fn summary(out: &mut dyn Write, c: &Collected) -> std::io::Result<()> {
    let path = &c.output;
    writeln!(
        out,
        "Wrote {} ({} KiB): {} files and {} links doctor read under {}/, with .rocmenv/recorded.yaml and doctor.json",
        path.display(),
        c.bytes.div_ceil(1024),
        c.files,
        c.links,
        c.tops.join("/, ")
    )?;
    let s = &c.summary;
    let warnings = if s.warn == 1 { "warning" } else { "warnings" };
    writeln!(
        out,
        "doctor.json: {} passed, {} {warnings}, {} failed, {} skipped",
        s.pass, s.warn, s.fail, s.skip
    )?;
    if let Some(r) = &c.redacted {
        writeln!(out, "Redacted: {r} (REDACTED.txt in the bundle says what)")?;
    }
    writeln!(
        out,
        "Read it with: rocmenv doctor --sysroot {}",
        shlex::try_quote(&path.display().to_string())
            .map(|q| q.into_owned())
            .unwrap_or_else(|_| path.display().to_string())
    )
}
