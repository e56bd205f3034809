//! `rocmenv lint`: a user's own Dockerfiles, env files, shell profiles, compose files and Kubernetes manifests,
//! read without a daemon and judged like doctor judges a host: unpinned vendor bases, overrides that contradict the
//! build targets or the GPUs, variables nothing reads, wheel indexes for another ROCm or CUDA, device variables that
//! mix vendors or name GPUs that do not exist.

mod dockerfile;
mod files;
mod rules;
mod variables;
mod yaml;

pub use files::{assignments_in, kind_of, FileKind, LintFile, Located, ReadProblem, Scope};
pub use rules::{judge, Inputs, ScopeTarget, ARCH_VARS};
pub use variables::{Family, Variable, Variables};

use crate::status::Status;
use serde::Serialize;

/// One finding about a user's file.
#[derive(Debug, Clone, Serialize)]
pub struct LintFinding {
    /// Stable dotted id (`lint.override-arch`).
    pub id: &'static str,
    /// Outcome: `fail`, `warn`, or `skip` (a rule that could not run, and why).
    pub status: Status,
    /// The file, as given.
    pub path: String,
    /// 1-based line, when the finding is about one.
    pub line: Option<usize>,
    /// The stage, service or container, when the file has several.
    pub scope: Option<String>,
    /// One line: what is wrong, naming the values.
    pub summary: String,
    /// What to change.
    pub fix: Option<String>,
}

/// What lint found over every file.
#[derive(Debug, Clone, Serialize)]
pub struct LintReport {
    /// Each file read: its path, kind and number of scopes.
    pub files: Vec<FileSummary>,
    /// The findings, file by file in the order given, by line.
    pub findings: Vec<LintFinding>,
    /// The GPUs the overrides and device numbers were judged against (`gfx1100 (--gfx)`), or why none.
    pub gpus: String,
}

/// One file read.
#[derive(Debug, Clone, Serialize)]
pub struct FileSummary {
    /// The path, as given.
    pub path: String,
    /// What it was read as.
    pub kind: FileKind,
    /// Stages, services or containers (1 for an env file).
    pub scopes: usize,
}

impl LintReport {
    /// How many findings have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.findings.iter().filter(|f| f.status == status).count()
    }

    /// 1 when a finding fails (or warns, with `strict`), else 0.
    pub fn exit_code(&self, strict: bool) -> i32 {
        let bad = self.count(Status::Fail) > 0 || (strict && self.count(Status::Warn) > 0);
        if bad {
            crate::error::EXIT_FAILED
        } else {
            crate::error::EXIT_OK
        }
    }
}

/// Reads `text` (from `path`) as `kind`.
pub fn read(path: &str, kind: FileKind, text: &str) -> Result<LintFile, ReadProblem> {
    let scopes = match kind {
        FileKind::Dockerfile => dockerfile::scopes(text)?,
        FileKind::Env => vec![files::env_scope(text)],
        FileKind::Compose => yaml::compose_scopes(text)?,
        FileKind::Kubernetes => yaml::kubernetes_scopes(text)?,
    };
    Ok(LintFile {
        path: path.to_string(),
        kind,
        scopes,
    })
}
