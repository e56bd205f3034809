//! The `rocmenv` binary: parse arguments, dispatch to the command, map the error to an exit code.

use rocmenv::cli::{usage_exit_code, Cli};

/// The first 4 MiB of allocations from huge pages (src/arena.rs says why).
#[global_allocator]
static ALLOC: rocmenv::arena::Arena = rocmenv::arena::Arena::new();

fn main() {
    let cli = match Cli::parse_args() {
        Ok(c) => c,
        Err(e) => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            let code = if e.use_stderr() {
                usage_exit_code(&args)
            } else {
                0
            };
            use clap::error::ErrorKind;
            match e.kind() {
                ErrorKind::DisplayHelp
                | ErrorKind::DisplayVersion
                | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                    let _ = e.print();
                }
                // A usage error is one `rocmenv:` line like every other error (README's promise).
                _ => eprintln!(
                    "{}",
                    rocmenv::cli::one_line_usage_error(&e.render().to_string(), &args)
                ),
            }
            std::process::exit(code);
        }
    };
    let code = match rocmenv::commands::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            let line = format!("rocmenv: {e}");
            if rocmenv::report::glyphs::locale_is_utf8() {
                eprintln!("{line}");
            } else {
                eprintln!("{}", rocmenv::report::glyphs::to_ascii(&line));
            }
            e.exit_code()
        }
    };
    std::process::exit(code);
}
