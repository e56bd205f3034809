//! `rocmenv dockerfile`: the stack flags as a plan, `ops::dockerfile::render`, and the Dockerfile (or its context
//! directory) written.

use crate::cli::DockerfileArgs;
use crate::error::Error;
use crate::ops::Ctx;
use std::io::Write;

/// Runs `rocmenv dockerfile`: the Dockerfile to `out`, or the context to `-o DIR`.
pub fn exec(
    a: DockerfileArgs,
    ctx: &Ctx,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let o = super::stack_plan(a.stack)?.expect("clap requires --stack");
    let rendered = crate::ops::dockerfile::render(ctx, &o, &mut |ev| super::log_event(err, &ev))?;
    match a.output.as_deref() {
        Some(d) => {
            crate::ops::write_context(&rendered, d, a.force)?;
            // The Dockerfile plus every other context file (.dockerignore, smoke-tests/…).
            let count = 1 + rendered.files.len();
            writeln!(
                out,
                "wrote {} ({count} files, FROM {})",
                d.display(),
                rendered.base_image
            )
            .map_err(Error::Output)?;
        }
        None => super::written(out.write_all(rendered.dockerfile.as_bytes()))?,
    }
    Ok(crate::error::EXIT_OK)
}
