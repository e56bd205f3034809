//! One module per subcommand. Each takes its clap arguments, turns them into a validated plan once (no host touched),
//! then calls the library and a reporter. `main.rs` only parses and dispatches here.

pub mod bench;
pub mod build;
pub mod collect;
pub mod completions;
pub mod dockerfile;
pub mod doctor;
pub mod env;
pub mod gc;
pub mod init;
pub mod k8s;
pub mod matrix;
pub mod matrix_gpu;
pub mod probe;
pub mod report;
pub mod run;
pub mod slurm;
pub mod smoke;
mod suite;
pub mod validate;

use crate::cli::{Cli, Command};
use crate::error::Error;
use crate::report::glyphs::{self, AsciiWriter};
use crate::report::Style;
use std::io::{IsTerminal, Write};

/// Runs the command `cli` names; returns the process exit code, or the error that ended it.
pub fn dispatch(cli: Cli) -> Result<i32, Error> {
    let stdout = std::io::stdout();
    // Where the locale is not UTF-8, human output is transliterated to ASCII (`✓` → `+`); JSON, shell code,
    // Dockerfiles and a container's own output are data and keep their bytes.
    let ascii = !glyphs::locale_is_utf8();
    let is_data = match &cli.command {
        Command::Doctor(a) => a.json,
        Command::Probe { json } | Command::Gc { json, .. } => *json,
        Command::Matrix(a) => a.json,
        // `init -o -` prints the file; otherwise one human line. validate's reports go to files.
        Command::Init(a) => a.output.as_os_str() == "-",
        Command::Validate(_) => false,
        // A manifest is data.
        Command::K8s(_) | Command::Slurm(_) => true,
        // A merge as JSON or JUnit is data; as text or Markdown it is for people.
        Command::Report(a) => match &a.action {
            crate::cli::ReportCommand::Merge(m) => matches!(
                m.format,
                crate::cli::MergeFormatArg::Json | crate::cli::MergeFormatArg::Junit
            ),
            // One human line; the page goes to its file.
            crate::cli::ReportCommand::Html(_) => false,
        },
        Command::Smoke(_) | Command::Bench(_) | Command::Collect(_) => false,
        // `run --probe` prints a report; a plain run passes the container's output through.
        Command::Run(a) => !a.probe,
        _ => true,
    };
    let mut out: Box<dyn Write> = if ascii && !is_data {
        Box::new(AsciiWriter::new(stdout.lock()))
    } else {
        Box::new(stdout.lock())
    };
    let mut err: Box<dyn Write + Send> = if ascii {
        Box::new(AsciiWriter::new(std::io::stderr()))
    } else {
        Box::new(std::io::stderr())
    };
    let matrices = cli.matrices;
    let style = Style::detect(&stdout);
    let done = match cli.command {
        Command::Doctor(a) => doctor::exec(a, matrices, style, &mut out, &mut err),
        Command::Collect(a) => collect::exec(a, matrices, &mut out),
        Command::Env(a) => env::exec(a, matrices, &mut out, &mut err),
        Command::Dockerfile(a) => dockerfile::exec(*a, matrices, &mut out, &mut err),
        Command::Probe { json } => probe::exec(json, &mut out),
        Command::Build(a) => {
            let terminal = std::io::stderr().is_terminal();
            build::exec(a, matrices, terminal, &mut out, err)
        }
        // The container's stdout and stderr pass through untouched.
        Command::Run(a) => Ok(run::exec(a, matrices, &mut out, &mut std::io::stderr())),
        Command::Smoke(a) => smoke::exec(a, matrices, style, &mut out, &mut err),
        Command::Bench(a) => bench::exec(a, matrices, style, &mut out, &mut err),
        Command::Matrix(a) => matrix::exec(a, matrices, &mut out),
        Command::Init(a) => init::exec(a, matrices, &mut out, &mut err),
        Command::Validate(a) => validate::exec(a, matrices, style, &mut out, &mut err),
        Command::Gc { json, all, images } => gc::exec(json, all, images, &mut out),
        Command::Completions { shell } => completions::exec(shell, &mut out),
        Command::K8s(a) => k8s::exec(a, &mut out),
        Command::Slurm(a) => slurm::exec(a, &mut out),
        Command::Report(a) => report::exec(a, &mut out),
    };
    // The library names the field a value was for; here it becomes the flag the user typed.
    done.map_err(|e| e.named_as_flags(&[]))
}

/// The result of writing a report: a closed pipe (`rocmenv doctor | head`) is the reader's choice, not a failure.
pub(crate) fn written(res: std::io::Result<()>) -> Result<(), Error> {
    match res {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output(e)),
        _ => Ok(()),
    }
}
