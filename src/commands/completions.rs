//! `rocmenv completions SHELL`: the shell's completion script, generated from the command tree.

use crate::cli::Cli;
use crate::error::Error;
use clap::CommandFactory;
use std::io::Write;

/// Writes the completion script for `shell` to `out`; a reader that closes the pipe early is not an error.
pub fn exec(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<i32, Error> {
    // Generated into memory first: clap_complete panics when its own write fails (`… | head -1`).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "rocmenv", &mut script);
    super::written(out.write_all(&script))?;
    Ok(crate::error::EXIT_OK)
}
