//! doctor's verdict: the first line of the report and the exit code, made by one function from the same findings,
//! so the words and the code can never disagree (nextest's summary line and `ExitCode` come from one place too).

use super::{Finding, Status, Summary};
use crate::envplan::Hidden;
use crate::host::HostFacts;
use serde::Serialize;

/// The answer a person came for, and the exit code that says the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// `verdict: this host can run PyTorch on ROCm 6.2.4 on 4 of 4 GPUs`.
    pub line: String,
    /// 0 when the line says the host can (warnings allowed unless strict), else 1.
    pub exit_code: i32,
}

/// What the verdict is made from.
pub struct VerdictInput<'a> {
    /// The host.
    pub facts: &'a HostFacts,
    /// The findings shown (after `--only`).
    pub findings: &'a [Finding],
    /// The GPUs the host plan sets aside (PCI address, why): their failures do not count against the host.
    pub set_aside: &'a [(String, Hidden)],
    /// The target in words (`ROCm 6.2.4`).
    pub target: &'a str,
    /// `--only`, when given.
    pub only: Option<&'a str>,
    /// `--strict`: warnings fail.
    pub strict: bool,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Verdict {
    fn can(line: String) -> Verdict {
        Verdict {
            line,
            exit_code: crate::error::EXIT_OK,
        }
    }
    fn cannot(line: String) -> Verdict {
        Verdict {
            line,
            exit_code: crate::error::EXIT_FAILED,
        }
    }

    /// The verdict on `v`'s findings.
    pub fn of(v: &VerdictInput) -> Verdict {
        let host = if v.facts.mode == "live" {
            "this host"
        } else {
            "this host tree"
        };
        let target = if v.target.is_empty() {
            "its GPUs"
        } else {
            v.target
        };
        let s = Summary::of(v.findings);
        if let Some(only) = v.only {
            return Self::of_only(v, host, only, s);
        }
        let failed: Vec<&Finding> = v
            .findings
            .iter()
            .filter(|f| f.status == Status::Fail)
            .collect();
        let gpus = &v.facts.gpus;
        if gpus.is_empty() {
            let others = failed.iter().filter(|f| f.id != "gpu.present").count();
            let also = match others {
                0 => String::new(),
                n => format!(", and {} failed", plural(n, "other check", "other checks")),
            };
            let wsl = if v.facts.wsl {
                "; WSL2 shows GPUs only through /dev/dxg"
            } else {
                ""
            };
            return Self::cannot(format!("verdict: {host} cannot run PyTorch on {target}: no GPU found{also} (PyTorch runs on its CPU only{wsl})"));
        }
        let aside = |pci: &str| v.set_aside.iter().any(|(p, _)| p == pci);
        let on_gpu = |f: &Finding| {
            f.subject
                .as_deref()
                .is_some_and(|s| gpus.iter().any(|g| g.pci_address == s))
        };
        if let Some(first) = failed.iter().find(|f| !on_gpu(f)) {
            return Self::cannot(format!(
                "verdict: {host} cannot run PyTorch on {target} yet: {} (the first: {})",
                plural(failed.len(), "check failed", "checks failed"),
                first.id
            ));
        }
        let used: Vec<_> = gpus.iter().filter(|g| !aside(&g.pci_address)).collect();
        let bad: Vec<_> = used
            .iter()
            .filter(|g| {
                failed
                    .iter()
                    .any(|f| f.subject.as_deref() == Some(&g.pci_address))
            })
            .collect();
        let ok = used.len() - bad.len();
        let aside_text = Self::aside_text(v, gpus);
        if ok == 0 {
            return Self::cannot(match used.len() {
                1 => format!("verdict: {host} cannot run PyTorch on {target} on its one GPU{aside_text}"),
                n => format!("verdict: {host} cannot run PyTorch on {target} on any of its {n} GPUs{aside_text}"),
            });
        }
        if !bad.is_empty() {
            let names: Vec<String> = bad.iter().map(|g| format!("GPU {}", g.index)).collect();
            return Self::cannot(format!(
                "verdict: {host} cannot run PyTorch on {target} on {} ({} of its {} can){aside_text}",
                names.join(", "),
                ok,
                plural(used.len(), "GPU", "GPUs")
            ));
        }
        let of = format!("{ok} of {}", plural(used.len(), "GPU", "GPUs"));
        match s.warn {
            n if v.strict && n > 0 => Self::cannot(format!(
                "verdict: {host} can run PyTorch on {target} on {of}{aside_text}, but --strict fails its {}",
                plural(n, "warning", "warnings")
            )),
            0 => Self::can(format!("verdict: {host} can run PyTorch on {target} on {of}{aside_text}")),
            n => Self::can(format!(
                "verdict: {host} can run PyTorch on {target} on {of}{aside_text}, with {}",
                plural(n, "warning", "warnings")
            )),
        }
    }

    /// `; GPU 1 set aside (an integrated GPU next to a discrete one)`.
    fn aside_text(v: &VerdictInput, gpus: &[crate::host::Gpu]) -> String {
        let parts: Vec<String> = gpus
            .iter()
            .filter_map(|g| {
                let (_, h) = v.set_aside.iter().find(|(p, _)| *p == g.pci_address)?;
                Some(format!("GPU {} set aside ({})", g.index, h.why()))
            })
            .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!("; {}", parts.join(", "))
        }
    }

    /// With `--only`, the verdict is on the checks shown, not on the host.
    fn of_only(v: &VerdictInput, host: &str, only: &str, s: Summary) -> Verdict {
        let failing: Vec<&str> = v
            .findings
            .iter()
            .filter(|f| f.status == Status::Fail || (v.strict && f.status == Status::Warn))
            .map(|f| f.id)
            .collect();
        let counts = s.line();
        if failing.is_empty() {
            Self::can(format!(
                "verdict: {host} passes the checks of --only {only} ({counts})"
            ))
        } else {
            let mut ids = failing.clone();
            ids.dedup();
            Self::cannot(format!(
                "verdict: {host} fails the checks of --only {only}: {} ({counts})",
                ids.join(", ")
            ))
        }
    }
}
