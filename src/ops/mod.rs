//! The work of every command, over one [`Ctx`]: each operation takes the context and a validated plan (never clap
//! types), returns typed results and reports progress through one event sink, as nextest's runner feeds its
//! reporters. `commands/` turns flags into plans and events into output; validate composes these operations.

pub mod build;
pub mod collect;
pub mod compare;
pub mod ctx;
pub mod dockerfile;
pub mod doctor;
pub mod env;
pub mod files;
pub mod fix;
pub mod fleet;
pub mod gc;
pub mod init;
pub mod k8s;
pub mod lint;
pub mod matrix;
pub mod plan;
pub mod probe;
pub mod run;
pub mod slurm;
pub mod suite;
pub mod validate;

/// What `rocmenv dockerfile` and `build` name: the request a stack's flags make, and the context written with `-o`.
pub use crate::dockerfile::{write_context, DockerfileRequest};
/// What `rocmenv run` names from the engine: mounts, its output streams, and the `docker run` line it prints.
pub use crate::engine::{docker_run_line, Mount, MountKind, OutputStream};
/// What `rocmenv env` names: the release `--rocm` picks and how a user's variable is corrected.
pub use crate::hostplan::{is_user_var, UserVarFix};
/// What `rocmenv lint` reports.
pub use crate::lint::LintReport;
pub use crate::matrix::{Matrices, RocmRelease};
pub use ctx::{Ctx, Host, HostSpec};

use crate::engine::BuildEvent;
use crate::report::validate::Case;
use crate::suites::{Plan, SuiteResult, TestResult};

/// What an operation reports while it works; the caller's reporter decides what, if anything, to show.
#[derive(Debug)]
pub enum Event<'a> {
    /// Something a person should know (`rocmenv: note: …` on stderr).
    Note(String),
    /// Something likely wrong that does not stop the work (`rocmenv: warning: …`).
    Warning(String),
    /// Another line of the log, worded whole (`rocmenv run: maps …`, `rocmenv: python: …`).
    Log(String),
    /// A build's progress.
    Build(&'a BuildEvent),
    /// A suite is about to run `plan`, in `image` (`None`: on this host).
    SuiteStarted {
        /// The plan `run.py` gets.
        plan: &'a Plan,
        /// The image it runs in.
        image: Option<&'a str>,
    },
    /// One test of a suite finished.
    Test(&'a TestResult),
    /// A suite's result is complete (compared with the peaks and baselines), before it is written anywhere.
    SuiteFinished(&'a SuiteResult),
    /// `validate` starts on a stack of its config.
    Stack {
        /// The stack's name in the config.
        name: &'a str,
        /// Its kind (`rocm`, `ngc`, `cpu`).
        stack: &'a str,
        /// The base image its Dockerfile starts FROM.
        base: &'a str,
    },
    /// One case of `validate` was decided.
    Case(&'a Case),
}

/// Where an operation sends its events.
pub type Sink<'s> = &'s mut dyn FnMut(Event<'_>);
