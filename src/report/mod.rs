//! Reporters: render a doctor run as human text or JSON, and build progress. They write to `&mut dyn Write`, so tests capture them.

pub mod compare;
mod env;
mod fix;
pub mod glyphs;
pub mod html;
mod human;
mod json;
pub mod junit;
mod lint;
mod matrix;
pub mod node;
mod progress;
mod runtime;
mod suite;
pub mod validate;

pub use env::{render_env, sh_quote, EnvFormat};
pub use fix::{render_fix, render_fix_json, FixOutcome};
pub use human::{render_human, Style};
pub use json::{doctor_json, render_json};
pub use junit::merge_junit;
pub use lint::{render_lint, render_lint_json};
pub use matrix::render_matrix;
pub use progress::BuildProgress;
pub use runtime::{render_container_probe, render_runtime};
pub use suite::{
    entry_name, junit, render_suite_summary, render_suite_test, render_tune, SuiteRows,
};

use crate::checks::{Finding, Summary};
use crate::host::HostFacts;

/// Everything a doctor run produced.
pub struct DoctorReport {
    /// The host.
    pub facts: HostFacts,
    /// The findings, in check order.
    pub findings: Vec<Finding>,
    /// Counts.
    pub summary: Summary,
    /// The target, in words (`ROCm 6.2.4`).
    pub target_label: String,
    /// How the target was chosen.
    pub target_why: String,
    /// Machine-readable target: `rocm`, `cuda`, `ngc` versions.
    pub target: serde_json::Value,
    /// Where the matrices came from.
    pub matrices_origin: String,
    /// The host root (`/` or the sysroot path).
    pub root: String,
    /// The node the report describes (`ROCMENV_NODE_NAME`, else the live host's name; `None` for an unnamed tree).
    pub node: Option<String>,
    /// The GPUs the host plan sets aside (PCI address, why): their failures do not count against the host.
    pub set_aside: Vec<(String, crate::envplan::Hidden)>,
    /// `--only`, when given: the verdict is on those checks.
    pub only: Option<String>,
    /// `--strict`: warnings fail.
    pub strict: bool,
}

impl DoctorReport {
    /// The verdict line and the exit code, from one function over the findings.
    pub fn verdict(&self) -> crate::checks::Verdict {
        crate::checks::Verdict::of(&crate::checks::VerdictInput {
            facts: &self.facts,
            findings: &self.findings,
            set_aside: &self.set_aside,
            target: &self.target_label,
            only: self.only.as_deref(),
            strict: self.strict,
        })
    }
}
