//! The `rocmenv` binary: parse arguments, call one function per command, map the error to an exit code.

use clap::{CommandFactory, Parser};
use rocmenv::cli::{Cli, Command};
use rocmenv::doctor::{self, DoctorOptions};
use rocmenv::error::{Error, EXIT_USAGE};
use rocmenv::report::Style;
use std::io::IsTerminal;
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
        Command::Build(a) => {
            let opts = rocmenv::build_command::BuildOptions {
                source: rocmenv::build_command::BuildSource::Dir(a.context),
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
