//! Checks: pure functions of (facts, matrices, target) that return findings. They never print.

mod aer;
mod boot;
mod containers;
mod devices;
mod driver;
mod environment;
mod evidence;
mod gpu;
mod health;
pub mod image;
mod runtime;
mod system;
mod topology;
mod userspace;
mod verdict;
mod wsl;

pub use boot::{iommu_params, mi300_gpus, MI300X_GUIDE};
pub use verdict::{Verdict, VerdictInput};

use crate::host::HostFacts;
use crate::matrix::{Matrices, Sourced};
use crate::target::Target;
use serde::Serialize;

pub use crate::status::Status;

/// One finding.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Stable dotted id, e.g. `kernel.rocm-supported`.
    pub id: &'static str,
    /// The report section it belongs to.
    pub area: &'static str,
    /// What it is about when a check runs per device (a PCI address), else `None`.
    pub subject: Option<String>,
    /// Outcome.
    pub status: Status,
    /// One line.
    pub summary: String,
    /// More, when there is more to say.
    pub detail: Option<String>,
    /// A command or step a person can follow.
    pub fix: Option<String>,
    /// A pass that holds under a condition (the detail says which): text output shows its detail too.
    #[serde(skip)]
    pub conditional: bool,
}

impl Finding {
    fn new(
        id: &'static str,
        area: &'static str,
        status: Status,
        summary: impl Into<String>,
    ) -> Self {
        Finding {
            id,
            area,
            subject: None,
            status,
            summary: summary.into(),
            detail: None,
            fix: None,
            conditional: false,
        }
    }
    fn subject(mut self, s: impl Into<String>) -> Self {
        self.subject = Some(s.into());
        self
    }
    fn detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }
    fn fix(mut self, f: impl Into<String>) -> Self {
        self.fix = Some(f.into());
        self
    }
    fn conditional(mut self) -> Self {
        self.conditional = true;
        self
    }
}

pub use crate::engine::{DockerInfo, DockerStatus};

/// What every check sees.
pub struct Context<'a> {
    /// The host.
    pub facts: &'a HostFacts,
    /// The matrices.
    pub matrices: &'a Matrices,
    /// The target.
    pub target: &'a Target<'a>,
    /// The host plan for that target: how each GPU runs, which are hidden, the variables (`hostplan`).
    pub plan: &'a crate::hostplan::HostPlan<'a>,
    /// Docker, in live mode; `None` under `--sysroot`.
    pub docker: Option<&'a DockerStatus>,
    /// True with `--deep`.
    pub deep: bool,
    /// What the GPU runtimes said, in live mode; `None` under `--sysroot`.
    pub runtime: Option<&'a crate::runtime::RuntimeReport>,
}

/// The report sections, in order.
pub const AREAS: [&str; 12] = [
    "system",
    "gpu",
    "driver",
    "devices",
    "userspace",
    "runtime",
    "environment",
    "topology",
    "health",
    "containers",
    "boot",
    "tools",
];

/// Runs every check.
pub fn run_all(cx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(system::check(cx));
    out.extend(gpu::check(cx));
    out.extend(wsl::check(cx));
    out.extend(driver::check(cx));
    out.extend(devices::check(cx));
    out.extend(userspace::check(cx));
    out.extend(runtime::check(cx));
    out.extend(environment::check(cx));
    out.extend(topology::check(cx));
    out.extend(health::check(cx));
    out.extend(containers::check(cx));
    out.extend(boot::check(cx));
    out.extend(evidence::check(cx));
    wsl::not_under_wsl(cx, &mut out);
    hedge_unconfirmed(cx, &mut out);
    out
}

/// Names, on each verdict that rests on a matrix field marked `unconfirmed:`, that field and where to read its
/// source: a pass on 10.1.0's OS rows carried from 10.0.0 must not read like one checked against AMD's table.
/// A pass so hedged is conditional, so text output shows why.
fn hedge_unconfirmed(cx: &Context, findings: &mut [Finding]) {
    for f in findings.iter_mut().filter(|f| f.status != Status::Skip) {
        let Some(hedge) = unconfirmed_basis(cx, f.id) else {
            continue;
        };
        f.detail = Some(match f.detail.take() {
            Some(d) => format!("{d}; {hedge}"),
            None => hedge,
        });
        f.conditional = true;
    }
}

/// The unconfirmed field a check's verdict rests on, as one clause, or `None` when its data is confirmed.
fn unconfirmed_basis(cx: &Context, id: &str) -> Option<String> {
    let rocm = |field: &str| {
        let r = cx.target.rocm.as_ref()?.release;
        r.is_unconfirmed(field).then(|| {
            format!(
                "ROCm {v}'s `{field}` is marked unconfirmed in rocm.yaml (`rocmenv matrix rocm {v}` shows its source)",
                v = r.version
            )
        })
    };
    match id {
        "os.rocm-supported" | "kernel.rocm-supported" => rocm("distros"),
        "gpu.gfx-supported" => rocm("gfx"),
        "driver.amdgpu-version" => rocm("kernel_drivers"),
        "driver.nvidia-version" => {
            let t = cx.target.cuda.as_ref()?;
            match t.ngc {
                Some(n) => n.is_unconfirmed("min_driver").then(|| {
                    format!(
                        "NGC {r}'s `min_driver` is marked unconfirmed in ngc.yaml (`rocmenv matrix ngc {r}` shows its source)",
                        r = n.release
                    )
                }),
                None => cuda_unconfirmed(t.cuda, "min_driver_linux"),
            }
        }
        "gpu.cuda-arch" => cuda_unconfirmed(cx.target.cuda.as_ref()?.cuda, "compute_capabilities"),
        _ => None,
    }
}

fn cuda_unconfirmed(c: &crate::matrix::CudaRelease, field: &str) -> Option<String> {
    c.is_unconfirmed(field).then(|| {
        format!(
            "CUDA {v}'s `{field}` is marked unconfirmed in cuda.yaml (`rocmenv matrix cuda {v}` shows its source)",
            v = c.version
        )
    })
}

/// `--expect-gpus N`: `gpu.count` fails when the host shows fewer than `expected` GPUs (one fell off the bus, or its
/// driver did not bind), which no other check notices.
pub fn expected_gpus(facts: &HostFacts, expected: usize) -> Finding {
    gpu::expected_count(facts, expected)
}

/// `--only X`: the findings whose area is `X`, whose id is `X`, or whose id starts with `X.`; a usage error naming the
/// areas and ids when none match.
pub fn only(findings: Vec<Finding>, x: &str) -> Result<Vec<Finding>, crate::error::Error> {
    let prefix = format!("{x}.");
    let hit = |f: &Finding| f.area == x || f.id == x || f.id.starts_with(&prefix);
    if findings.iter().any(hit) {
        return Ok(findings.into_iter().filter(hit).collect());
    }
    if AREAS.contains(&x) {
        return Err(crate::error::Error::invalid(
            "only",
            format!("area `{x}` has no checks in this run (the tools area needs --deep)"),
        ));
    }
    let mut ids: Vec<&str> = findings.iter().map(|f| f.id).collect();
    ids.sort_unstable();
    ids.dedup();
    Err(crate::error::Error::invalid(
        "only",
        format!(
            "`{x}` is no area ({}) and no check id here ({})",
            AREAS.join(", "),
            ids.join(", ")
        ),
    ))
}

/// Counts by status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Passed.
    pub pass: usize,
    /// Warnings.
    pub warn: usize,
    /// Failures.
    pub fail: usize,
    /// Skipped.
    pub skip: usize,
}

impl Summary {
    /// Counts findings.
    pub fn of(findings: &[Finding]) -> Self {
        let mut s = Summary::default();
        for f in findings {
            match f.status {
                Status::Pass => s.pass += 1,
                Status::Warn => s.warn += 1,
                Status::Fail => s.fail += 1,
                Status::Skip => s.skip += 1,
            }
        }
        s
    }

    /// `13 passed, 1 warning, 0 failed, 7 skipped`: the report's last line.
    pub fn line(&self) -> String {
        let warnings = if self.warn == 1 {
            "warning"
        } else {
            "warnings"
        };
        format!(
            "{} passed, {} {warnings}, {} failed, {} skipped",
            self.pass, self.warn, self.fail, self.skip
        )
    }

    /// The exit code: 1 on a failure, or on a warning with `strict`.
    pub fn exit_code(&self, strict: bool) -> i32 {
        if self.fail > 0 || (strict && self.warn > 0) {
            crate::error::EXIT_FAILED
        } else {
            crate::error::EXIT_OK
        }
    }
}

/// A GPU's short label for summaries: `GPU 0 (Radeon RX 7900 XTX, 0000:03:00.0)`.
fn gpu_label(g: &crate::host::Gpu) -> String {
    g.label()
}
