//! The `rocmenv` binary: parse arguments, dispatch to the command, map the error to an exit code.

use clap::Parser;
use rocmenv::cli::Cli;
use rocmenv::error::EXIT_USAGE;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match rocmenv::commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocmenv: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
