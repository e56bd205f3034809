//! `rocmenv completions SHELL`: the shell's completion script, generated from the command tree.

use crate::cli::Cli;
use crate::error::Error;
use clap::CommandFactory;
use std::io::Write;

/// Writes the completion script for `shell` to `out`.
pub fn exec(shell: clap_complete::Shell, out: &mut dyn Write) -> Result<i32, Error> {
    clap_complete::generate(shell, &mut Cli::command(), "rocmenv", out);
    Ok(crate::error::EXIT_OK)
}
