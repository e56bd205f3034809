//! `rocmenv init`: the flags as a plan, `ops::init` (a commented `rocmenv.yaml` for this host, never over an
//! existing file), and what was written.

use crate::cli::InitArgs;
use crate::error::Error;
use crate::ops::init::{self, InitPlan};
use crate::ops::Ctx;
use std::io::Write;

/// The flags as a plan: `-o -` writes to stdout.
pub fn plan(a: &InitArgs) -> InitPlan {
    InitPlan {
        stack: a.stack,
        output: (a.output.as_os_str() != "-").then(|| a.output.clone()),
        name: a.output.clone(),
    }
}

/// Runs `rocmenv init`.
pub fn exec(
    a: InitArgs,
    ctx: &Ctx,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let p = plan(&a);
    let example = init::init(ctx, &p)?;
    let Some(path) = &p.output else {
        super::written(out.write_all(example.text.as_bytes()))?;
        return Ok(crate::error::EXIT_OK);
    };
    let _ = err;
    let input = &example.input;
    let _ = writeln!(
        out,
        "wrote {} (stack {}{}); check it with `rocmenv validate --config {}`",
        path.display(),
        input.stack_name(),
        input
            .target
            .as_deref()
            .map(|t| format!(", hosts {t}"))
            .unwrap_or_default(),
        path.display()
    );
    Ok(crate::error::EXIT_OK)
}
