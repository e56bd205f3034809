//! The `rocmenv` binary: parse arguments, call one function per command, map the error to an exit code.

use clap::{CommandFactory, Parser};
use rocmenv::cli::{Cli, Command};
use rocmenv::doctor::{self, DoctorOptions};
use rocmenv::error::{Error, EXIT_USAGE};
use rocmenv::report::Style;
use std::io::{IsTerminal, Write};
use std::time::Duration;

fn main() {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("rocmenv: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}

fn run(cli: Cli) -> Result<i32, Error> {
    let stdout = std::io::stdout();
    match cli.command {
        Command::Doctor(a) => {
            let opts = DoctorOptions {
                sysroot: a.sysroot,
                matrices: cli.matrices,
                target: a.target,
                deep: a.deep,
                tool_timeout: Some(Duration::from_secs(a.tool_timeout)),
                no_docker: false,
            };
            let style = Style::detect(stdout.is_terminal());
            doctor::run(&opts, a.json, a.strict, style, &mut stdout.lock())
        }
        Command::Env(a) => {
            let opts = rocmenv::env_command::EnvOptions {
                sysroot: a.sysroot,
                matrices: cli.matrices,
                gfx: a.gfx,
                rocm: a.rocm,
                device: a.device,
                format: a.format,
                explain: a.explain,
            };
            rocmenv::env_command::run(&opts, &mut stdout.lock(), &mut std::io::stderr())
        }
        Command::Dockerfile(a) => {
            let a = *a;
            let opts = a
                .stack
                .options(cli.matrices)
                .expect("clap requires --stack");
            rocmenv::dockerfile_command::run(
                &opts,
                a.output.as_deref(),
                &mut stdout.lock(),
                &mut std::io::stderr(),
            )
        }
        Command::Probe { json } => {
            let report = rocmenv::runtime::probe_all(&rocmenv::runtime::ProbeOptions::from_env());
            let mut out = stdout.lock();
            let written = if json {
                serde_json::to_string_pretty(&report)
                    .map_err(std::io::Error::other)
                    .and_then(|t| writeln!(out, "{t}"))
            } else {
                rocmenv::runtime::render_human(&report, &mut out)
            };
            match written {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(Error::Output(e))
                }
                _ => {}
            }
            Ok(rocmenv::runtime::exit_code(&report))
        }
        Command::Build(a) => {
            let source = match (a.context, a.stack.options(cli.matrices)) {
                (Some(dir), _) => rocmenv::build_command::BuildSource::Dir(dir),
                (None, Some(opts)) => {
                    rocmenv::dockerfile_command::build_source(&opts, &mut std::io::stderr())?
                }
                (None, None) => unreachable!("clap requires --context or --stack"),
            };
            let opts = rocmenv::build_command::BuildOptions {
                source,
                tags: a.tag,
                json: a.json,
            };
            let terminal = std::io::stderr().is_terminal();
            rocmenv::build_command::run(
                &opts,
                terminal,
                &mut stdout.lock(),
                Box::new(std::io::stderr()),
            )
        }
        Command::Run(a) => {
            let opts = rocmenv::run_command::RunOptions {
                image: a.image,
                vendor: a.vendor,
                gpu: a.gpu,
                timeout: a.timeout.map(Duration::from_secs),
                memory: a.memory,
                env: a.env,
                volumes: a.volume,
                result: a.result.map(|r| (r, a.result_to)),
                print: a.print,
                sysroot: a.sysroot,
                matrices: cli.matrices,
                command: a.command,
                probe: a.probe,
                probe_binary: a.probe_binary,
            };
            Ok(rocmenv::run_command::run(
                &opts,
                &mut stdout.lock(),
                &mut std::io::stderr(),
            ))
        }
        Command::Gc { json } => rocmenv::run_command::gc(json, &mut stdout.lock()),
        Command::Completions { shell } => {
            clap_complete::generate(shell, &mut Cli::command(), "rocmenv", &mut stdout.lock());
            Ok(0)
        }
    }
}
