//! The errors rocmenv expects, each mapped to a documented exit code.

use crate::matrix::MatrixError;
use std::path::PathBuf;

/// Exit code: everything passed (warnings allowed unless `--strict`).
pub const EXIT_OK: i32 = 0;
/// Exit code: a check or test failed.
pub const EXIT_FAILED: i32 = 1;
/// Exit code: bad usage or bad input (flags, config, matrix files).
pub const EXIT_USAGE: i32 = 2;
/// Exit code: the environment could not be used (daemon unreachable, timeout).
pub const EXIT_ENVIRONMENT: i32 = 3;

/// An error that ends a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A matrix file is missing, malformed or inconsistent.
    #[error(
        "matrix {0} (fix the file, or drop --matrices/ROCMENV_MATRICES to use the built-in set)"
    )]
    Matrix(#[from] MatrixError),
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
    /// Writing the report failed (a closed pipe is not an error).
    #[error("cannot write the report: {0}")]
    Output(#[source] std::io::Error),
    /// The environment could not be used.
    #[error("{0}")]
    Environment(String),
    /// There is no GPU to work for.
    #[error("{0}")]
    NoGpu(String),
}

impl Error {
    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Matrix(_) | Error::Sysroot { .. } | Error::Usage { .. } => EXIT_USAGE,
            Error::Output(_) | Error::Environment(_) => EXIT_ENVIRONMENT,
            Error::NoGpu(_) => EXIT_FAILED,
        }
    }
}
