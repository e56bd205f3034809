//! One module per subcommand. Each takes its clap arguments, turns them into a validated plan once (no host touched),
//! then calls `ops` with the one context `dispatch` made, and shows the events and result. No command calls another;
//! what several share (flags → plan conversions, reporters) is here. `main.rs` only parses and dispatches here.

pub mod bench;
pub mod build;
pub mod collect;
pub mod completions;
pub mod dockerfile;
pub mod doctor;
pub mod env;
pub mod fix;
pub mod gc;
pub mod init;
pub mod k8s;
pub mod lint;
pub mod matrix;
pub mod probe;
pub mod report;
pub mod run;
pub mod slurm;
pub mod smoke;
pub mod validate;

use crate::cli::{Cli, Command, StackArgs, SuiteArgs};
use crate::error::Error;
use crate::ops::dockerfile::StackPlan;
use crate::ops::suite::{Outputs, SuitePlan};
use crate::ops::{Ctx, DockerfileRequest, Event, HostSpec};
use crate::report::glyphs::{self, AsciiWriter};
use crate::report::{self as rpt, Style};
use crate::version::VersionError;
use std::io::{IsTerminal, Write};
use std::time::Duration;

/// Runs the command `cli` names; returns the process exit code, or the error that ended it.
pub fn dispatch(cli: Cli) -> Result<i32, Error> {
    let stdout = std::io::stdout();
    // Where the locale is not UTF-8, human output is transliterated to ASCII (`✓` → `+`); JSON, shell code,
    // Dockerfiles and a container's own output are data and keep their bytes.
    let ascii = !glyphs::locale_is_utf8();
    let is_data = match &cli.command {
        Command::Doctor(a) => a.json,
        Command::Lint(a) => a.json,
        Command::Fix(a) => a.json,
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
            crate::cli::ReportCommand::Compare(c) => matches!(
                c.format,
                crate::cli::CompareFormatArg::Json | crate::cli::CompareFormatArg::Html
            ),
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
    // The one context of this process: each command reads the matrices, the host and the engine through it.
    let process_ctx = Ctx::new(cli.matrices, host_spec(&cli.command));
    let ctx = &process_ctx;
    let style = Style::detect(&stdout);
    let done = match cli.command {
        Command::Doctor(a) => doctor::exec(a, ctx, style, &mut out, &mut err),
        Command::Collect(a) => collect::exec(a, ctx, &mut out),
        Command::Lint(a) => lint::exec(a, ctx, style, &mut out),
        Command::Fix(a) => fix::exec(a, ctx, &mut out),
        Command::Env(a) => env::exec(a, ctx, &mut out, &mut err),
        Command::Dockerfile(a) => dockerfile::exec(*a, ctx, &mut out, &mut err),
        Command::Probe { json } => probe::exec(json, &mut out),
        Command::Build(a) => {
            let terminal = std::io::stderr().is_terminal();
            build::exec(a, ctx, terminal, &mut out, err)
        }
        // The container's stdout and stderr pass through untouched.
        Command::Run(a) => Ok(run::exec(a, ctx, &mut out, &mut std::io::stderr())),
        Command::Smoke(a) => smoke::exec(a, ctx, style, &mut out, &mut err),
        Command::Bench(a) => bench::exec(a, ctx, style, &mut out, &mut err),
        Command::Matrix(a) => matrix::exec(a, ctx, &mut out),
        Command::Init(a) => init::exec(a, ctx, &mut out, &mut err),
        Command::Validate(a) => validate::exec(a, ctx, style, &mut out, &mut err),
        Command::Gc {
            json,
            all,
            force,
            images,
            dry_run,
        } => gc::exec(gc::plan(all, force, images, dry_run), json, ctx, &mut out),
        Command::Completions { shell } => completions::exec(shell, &mut out),
        Command::K8s(a) => k8s::exec(a, &mut out),
        Command::Slurm(a) => slurm::exec(a, &mut out),
        Command::Report(a) => report::exec(a, &mut out),
    };
    process_ctx.end_of_process();
    // The library names the field a value was for; here it becomes the flag the user typed.
    done.map_err(|e| e.named_as_flags(&[]))
}

/// Looks up `--rocm`, listing the nearest releases when it is unknown.
pub(crate) fn rocm_release<'m>(
    m: &'m crate::ops::Matrices,
    spec: &str,
) -> Result<&'m crate::ops::RocmRelease, Error> {
    // A value that is no version gets that answer, not a list of releases near nothing.
    crate::version::parse_with_parts(spec).map_err(|e| Error::usage("--rocm", e.to_string()))?;
    m.rocm_request(spec).map_err(|message| Error::Usage {
        flag: "--rocm".into(),
        message,
    })
}

/// The result of writing a report: a closed pipe (`rocmenv doctor | head`) is the reader's choice, not a failure.
pub(crate) fn written(res: std::io::Result<()>) -> Result<(), Error> {
    match res {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Output(e)),
        _ => Ok(()),
    }
}

/// The host a command's flags name (`--sysroot`, `--tool-timeout`, `--deep`); the running host for the rest.
fn host_spec(c: &Command) -> HostSpec {
    let on = |sysroot: &Option<std::path::PathBuf>| HostSpec {
        sysroot: sysroot.clone(),
        ..HostSpec::default()
    };
    match c {
        Command::Doctor(a) => doctor::host_spec(a),
        Command::Collect(a) => collect::host_spec(a),
        Command::Env(a) => on(&a.sysroot),
        Command::Lint(a) => on(&a.sysroot),
        Command::Fix(a) => on(&a.sysroot),
        Command::Dockerfile(a) => on(&a.stack.sysroot),
        Command::Build(a) => on(&a.stack.sysroot),
        Command::Run(a) => on(&a.sysroot),
        Command::Init(a) => on(&a.sysroot),
        _ => HostSpec::default(),
    }
}

/// The stack flags of `dockerfile` and `build`, validated; `None` without `--stack`.
pub(crate) fn stack_plan(a: StackArgs) -> Result<Option<StackPlan>, Error> {
    let Some(stack) = a.stack else {
        return Ok(None);
    };
    let driver = a
        .driver
        .as_deref()
        .map(|d| {
            d.parse()
                .map_err(|e: VersionError| Error::usage("--driver", e.to_string()))
        })
        .transpose()?;
    let mut request = DockerfileRequest::new(stack);
    request.rocm = a.rocm;
    request.pytorch = a.pytorch;
    request.ubuntu = a.ubuntu;
    request.python = a.python;
    request.ngc = a.ngc;
    request.base = a.base;
    request.pip = a.pip;
    request.apt = a.apt;
    request.onnxruntime = a.onnxruntime;
    request.with_smoke_tests = a.with_smoke_tests;
    request.source = a.source;
    Ok(Some(StackPlan {
        request,
        gfx: a.gfx,
        driver,
    }))
}

/// The suite flags `smoke` and `bench` share, as a plan (no I/O).
pub(crate) fn suite_plan(a: SuiteArgs) -> SuitePlan {
    SuitePlan {
        image: a.image,
        python: a.python,
        vendor: a.vendor,
        gpu: a.gpu,
        security: a.security,
        timeout: a.timeout.map(Duration::from_secs),
        outputs: Outputs {
            json: a.json,
            junit: a.junit,
            html: a.html,
        },
    }
}

/// Where a suite runs, as its header line says it.
pub(crate) fn place(image: Option<&str>) -> String {
    match image {
        Some(i) => format!("in {i}"),
        None => "on this host".into(),
    }
}

/// Shows an operation's log events on `err`: notes, warnings and lines worded whole.
pub(crate) fn log_event(err: &mut dyn Write, ev: &Event) {
    let _ = match ev {
        Event::Note(n) => writeln!(err, "rocmenv: note: {n}"),
        Event::Warning(w) => writeln!(err, "rocmenv: warning: {w}"),
        Event::Log(l) => writeln!(err, "{l}"),
        _ => Ok(()),
    };
}

/// Shows a suite's events: a row per finished test and the summary on `out` (with the tuning table for `--tune`),
/// the log on `err`.
pub(crate) struct SuiteReporter {
    rows: rpt::SuiteRows,
    style: Style,
    tune: bool,
    failed: Option<std::io::Error>,
}

impl SuiteReporter {
    /// A reporter in `style`; `tune` adds the tuning table.
    pub(crate) fn new(style: Style, tune: bool) -> Self {
        SuiteReporter {
            rows: rpt::SuiteRows::default(),
            style,
            tune,
            failed: None,
        }
    }

    /// Shows `ev`.
    pub(crate) fn event(&mut self, ev: &Event, out: &mut dyn Write, err: &mut dyn Write) {
        let res = match ev {
            Event::Test(t) => self.rows.row(t, self.style, out).and_then(|_| out.flush()),
            Event::SuiteFinished(r) => rpt::render_suite_summary(r, out).and_then(|_| {
                if self.tune {
                    rpt::render_tune(r, out)
                } else {
                    Ok(())
                }
            }),
            _ => {
                log_event(err, ev);
                Ok(())
            }
        };
        if let (Err(e), None) = (res, &self.failed) {
            self.failed = Some(e);
        }
    }

    /// The first output error, as `written` judges it.
    pub(crate) fn result(&mut self) -> Result<(), Error> {
        written(self.failed.take().map_or(Ok(()), Err))
    }
}
