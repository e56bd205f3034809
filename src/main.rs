//! The `rocmenv` binary: parse arguments, dispatch to the command, map the error to an exit code.

use rocmenv::cli::{usage_exit_code, Cli};

/// The first 4 MiB of allocations from huge pages (src/arena.rs says why).
#[global_allocator]
static ALLOC: rocmenv::arena::Arena = rocmenv::arena::Arena::new();

/// `pow`, the one function of glibc's libm the binary calls (minijinja's `**`, tokio's scheduler statistics), from
/// the `libm` crate (musl's implementation, in Rust). Defined here, it leaves the linker (`--as-needed`) no reason
/// to record libm.so.6, so the dynamic loader no longer finds, maps and relocates a second library at every start
/// (see build.rs, `static_unwinder`, for the third). Not exported: a library loaded later (the HIP runtime) calls
/// its own libm's.
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn pow_is_libms() {
        assert_eq!(super::pow(2.0, 10.0), 1024.0);
        assert_eq!(super::pow(10.0, -2.0), 0.01);
        assert!(super::pow(-8.0, 1.0 / 3.0).is_nan());
        assert_eq!(super::pow(0.0, 0.0), 1.0);
        assert!((super::pow(1.5, 2.5) - 2.755_675_960_631_075_5).abs() < 1e-15);
    }
}
