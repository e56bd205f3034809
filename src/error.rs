//! The errors rocmenv expects, each mapped to a documented exit code.

use crate::matrix::MatrixError;
use serde::Serialize;
use std::path::PathBuf;

/// Exit code: everything passed (warnings allowed unless `--strict`).
pub const EXIT_OK: i32 = 0;
/// Exit code: a check or test failed.
pub const EXIT_FAILED: i32 = 1;
/// Exit code: bad usage or bad input (flags, config, matrix files).
pub const EXIT_USAGE: i32 = 2;
/// Exit code: the environment could not be used (daemon unreachable, timeout).
pub const EXIT_ENVIRONMENT: i32 = 3;
/// Exit code of `rocmenv run` (like `timeout(1)`): the container outlived `--timeout` and was killed.
pub const EXIT_TIMEOUT: i32 = 124;
/// Exit code of `rocmenv run` (like `docker run`): rocmenv itself failed before or around the container.
pub const EXIT_RUN_FAILED: i32 = 125;
/// Exit code after SIGINT (Ctrl-C): 128 + 2.
pub const EXIT_SIGINT: i32 = 130;
/// Exit code after SIGTERM: 128 + 15.
pub const EXIT_SIGTERM: i32 = 143;

/// The signal that ended a run or a build early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum StopSignal {
    /// SIGINT (Ctrl-C).
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl StopSignal {
    /// `SIGINT` or `SIGTERM`.
    pub fn name(self) -> &'static str {
        match self {
            StopSignal::Interrupt => "SIGINT",
            StopSignal::Terminate => "SIGTERM",
        }
    }

    /// What a shell reports for a process the signal ended: 128 + its number.
    pub fn exit_code(self) -> i32 {
        match self {
            StopSignal::Interrupt => EXIT_SIGINT,
            StopSignal::Terminate => EXIT_SIGTERM,
        }
    }
}

/// An error that ends a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A matrix file is missing, malformed or inconsistent.
    #[error(
        "matrix {0} (fix the file, or drop --matrices/ROCMENV_MATRICES to use the built-in set)"
    )]
    Matrix(#[from] MatrixError),
    /// A file given as input is not usable as it is: `rocmenv.yaml` that does not load (a syntax error, an unknown
    /// key, a wrong type, a value that is not valid), a file `lint` cannot read, a file `fix` will not change.
    #[error("{}{}: {message}", path.display(), match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    })]
    Config {
        /// The config file.
        path: PathBuf,
        /// 1-based line of the offending value, when known.
        line: Option<usize>,
        /// 1-based column, when known.
        column: Option<usize>,
        /// What is wrong, and what would be valid.
        message: String,
    },
    /// `--sysroot` does not name a readable directory.
    #[error("sysroot {}: {why}", path.display())]
    Sysroot {
        /// The path given.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// A flag value is not valid.
    #[error("{flag}: {message}")]
    Usage {
        /// The flag, e.g. `--target`.
        flag: String,
        /// What is wrong, and what would be valid.
        message: String,
    },
    /// A value given to the library is not valid. The library names its inputs, not flags: only the command layer
    /// maps `fields` to the flags or keys they came from ([`Error::named_as_flags`]).
    #[error("{}: {message}", fields.join("/"))]
    Invalid {
        /// The inputs it is about (`pip`; `rocm` and `pytorch` when they are wrong together).
        fields: Vec<String>,
        /// The offending value, when one value is at fault.
        value: Option<String>,
        /// What is wrong, and what would be valid.
        message: String,
    },
    /// A string that must be an image reference is not one.
    #[error("`{reference}` is not an image reference: it {why}")]
    Reference {
        /// The string given.
        reference: String,
        /// What is wrong with it.
        why: crate::image_ref::RefError,
    },
    /// A file given to `rocmenv report merge` is not a report it reads.
    #[error("report {}: {why} (merge reads what doctor --json, smoke/bench --json, validate --json and report merge --format json write)", path.display())]
    Report {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// Writing the report failed (a closed pipe is not an error).
    #[error("cannot write the report: {0}")]
    Output(#[source] std::io::Error),
    /// A file or directory could not be read or written.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What was being done: `create`, `write`, `read`.
        what: &'static str,
        /// The path it was done to.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// The environment could not be used.
    #[error("{0}")]
    Environment(String),
    /// There is no GPU to work for.
    #[error("{0}")]
    NoGpu(String),
    /// No Docker-compatible daemon could be used at the endpoint: no socket, permission denied, or no answer.
    #[error("{} at {endpoint}: {why} ({})", reason.headline(), reason.fix())]
    DaemonUnreachable {
        /// The endpoint tried (`unix:///var/run/docker.sock`).
        endpoint: String,
        /// What the connection said.
        why: String,
        /// Which of the failures it was, which decides the one fix given.
        reason: Unreachable,
    },
    /// A Docker context named by `DOCKER_CONTEXT` or `currentContext` cannot be used.
    #[error("docker context {name} (named by {via}): {why}")]
    DockerContext {
        /// The context's name.
        name: String,
        /// What named it: `DOCKER_CONTEXT`, or `currentContext in PATH`.
        via: String,
        /// What is wrong with it.
        why: String,
    },
    /// The daemon's endpoint speaks (or needs) TLS and the connection could not be made with the files given.
    #[error("TLS to the container engine at {endpoint} failed: {why}")]
    DockerTls {
        /// The endpoint, with where its certificates come from.
        endpoint: String,
        /// The cause, naming the file to fix.
        why: String,
    },
    /// An image is not in the daemon's store and could not be pulled (no registry).
    #[error("image {image} is not available locally and could not be pulled ({why}): load it with `docker load -i FILE.tar` (or `docker import`), or build from a copy of it (`--base MIRROR/IMAGE:TAG`, on any stack)")]
    ImageMissing {
        /// The image reference.
        image: String,
        /// Why the pull failed.
        why: String,
    },
    /// A build step ran and failed (a failed check, not a broken environment).
    #[error("build failed at {step}: {message}\n{tail}")]
    BuildFailed {
        /// The failing step (`Step 2/3 : RUN false`), or `before the first step`.
        step: String,
        /// The daemon's error message.
        message: String,
        /// The last lines the step printed, indented.
        tail: String,
    },
    /// The daemon refused or broke a request (build could not start, container could not be created).
    #[error("container engine: {0}")]
    Engine(String),
    /// SIGINT or SIGTERM arrived during a long operation, which was cancelled and cleaned up.
    #[error("interrupted by {}: {what}", signal.name())]
    Interrupted {
        /// SIGINT or SIGTERM.
        signal: StopSignal,
        /// What was cancelled and what was cleaned up.
        what: String,
    },
}

impl Error {
    /// A flag value that is not valid, and what would be.
    pub fn usage(flag: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Usage {
            flag: flag.into(),
            message: message.into(),
        }
    }

    /// A value of the library's input `field` that is not valid, and what would be.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Invalid {
            fields: vec![field.into()],
            value: None,
            message: message.into(),
        }
    }

    /// Names the library field a usage error is about as the command-line flag it came from (`pip` → `--pip`);
    /// `renames` maps fields whose flag has another name in this command (`device` → `gpu` for `rocmenv run`).
    pub fn named_as_flags(self, renames: &[(&str, &str)]) -> Error {
        let flag = |field: &str| {
            let name = renames
                .iter()
                .find(|(f, _)| *f == field)
                .map_or(field, |(_, to)| to);
            format!("--{name}")
        };
        match self {
            // A field with a space (`build context`) is no flag's; it stays as written.
            Error::Invalid {
                fields, message, ..
            } => Error::Usage {
                flag: if fields.iter().any(|f| f.contains(' ')) {
                    fields.join("/")
                } else {
                    fields.iter().map(|f| flag(f)).collect::<Vec<_>>().join("/")
                },
                message,
            },
            // `rocm/pytorch`: the value was wrong in combination, so every field is named.
            // `matrix rocm` names a positional value, not a field: it stays as written.
            Error::Usage { flag, message } if !flag.starts_with('-') && !flag.contains(' ') => {
                let flags: Vec<String> = flag
                    .split('/')
                    .map(|field| {
                        let name = renames
                            .iter()
                            .find(|(f, _)| *f == field)
                            .map_or(field, |(_, to)| to);
                        format!("--{name}")
                    })
                    .collect();
                Error::Usage {
                    flag: flags.join("/"),
                    message,
                }
            }
            e => e,
        }
    }

    /// An I/O error on `path`, kept with the path and what was being done.
    pub fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            what,
            path: path.into(),
            source,
        }
    }

    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Matrix(_)
            | Error::Config { .. }
            | Error::Sysroot { .. }
            | Error::Usage { .. }
            | Error::Invalid { .. }
            | Error::Reference { .. }
            | Error::Report { .. } => EXIT_USAGE,
            Error::Output(_)
            | Error::Io { .. }
            | Error::Environment(_)
            | Error::DaemonUnreachable { .. }
            | Error::DockerContext { .. }
            | Error::DockerTls { .. }
            | Error::ImageMissing { .. }
            | Error::Engine(_) => EXIT_ENVIRONMENT,
            Error::NoGpu(_) | Error::BuildFailed { .. } => EXIT_FAILED,
            Error::Interrupted { signal, .. } => signal.exit_code(),
        }
    }
}

/// Why no daemon could be used at an endpoint; each has one fix, and the others' fixes would mislead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unreachable {
    /// The socket file does not exist: no daemon was started there.
    NoSocket,
    /// The socket exists and the daemon may well run, but this user may not open it.
    PermissionDenied,
    /// Something listens, or used to, but no daemon answers: refused, reset, or hung.
    NoAnswer,
    /// The endpoint is not one rocmenv can speak to (ssh://, a typo).
    Unsupported,
}

impl Unreachable {
    /// The start of the one-line error: what was found at the endpoint.
    pub fn headline(self) -> &'static str {
        match self {
            Unreachable::PermissionDenied => "this user may not use the container engine",
            Unreachable::Unsupported => "cannot use the container engine endpoint",
            Unreachable::NoSocket | Unreachable::NoAnswer => "no container engine answers",
        }
    }

    /// The one step that fixes this failure.
    pub fn fix(self) -> &'static str {
        match self {
            Unreachable::NoSocket => "start dockerd: sudo systemctl start docker; or point DOCKER_HOST at a running daemon, e.g. unix:///run/podman/podman.sock",
            Unreachable::PermissionDenied => "the daemon runs but its socket is closed to this user: add the user to the docker group (sudo usermod -aG docker $USER, then log in again), or point DOCKER_HOST at a daemon this user may use, e.g. a rootless Podman's unix://$XDG_RUNTIME_DIR/podman/podman.sock",
            Unreachable::NoAnswer => "start dockerd, or restart it if it hangs: sudo systemctl restart docker; or point DOCKER_HOST at a running daemon",
            Unreachable::Unsupported => "set DOCKER_HOST to unix:///PATH, tcp://HOST:PORT or, with DOCKER_TLS_VERIFY=1, https://HOST:PORT",
        }
    }

    /// What an I/O error opening or speaking to the endpoint means.
    pub fn of_io(kind: std::io::ErrorKind) -> Unreachable {
        match kind {
            std::io::ErrorKind::NotFound => Unreachable::NoSocket,
            std::io::ErrorKind::PermissionDenied => Unreachable::PermissionDenied,
            _ => Unreachable::NoAnswer,
        }
    }
}
