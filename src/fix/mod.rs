//! `rocmenv fix`: what doctor and the host plan find, as concrete changes. Each action names the findings it fixes,
//! the exact change (a file's new text, or a command with its undo), whether it needs root, a new login or a reboot,
//! and the vendor's page it follows. Planning is pure: the files' texts and the facts go in, actions come out; applying
//! them (atomically, with a journal `--undo` reads) is ops' work.

mod blacklist;
mod boot;
mod cdi;
mod docker;
mod groups;
mod install;
mod profile;
mod udev;

pub use blacklist::{initramfs_command, plan_blacklist, ModprobeFile};
pub use boot::{plan_kernel_params, plan_numa_balancing, GRUB_DROPIN, SYSCTL_CONF};
pub use cdi::{
    amd_spec, plan_amd_cdi, plan_nvidia_cdi, CdiGpu, CdiNode, AMD_CDI_PATH, NVIDIA_CDI_PATH,
};
pub use docker::{plan_docker_runtime, DAEMON_JSON};
pub use groups::{plan_groups, TargetUser};
pub use install::{plan_install, Missing};
pub use profile::{plan_profiles, ProfileFile, PERSIST};
pub use udev::{plan_udev, udev_rule_text, UDEV_RULE};

use serde::Serialize;
use std::path::PathBuf;

/// What an action needs before it takes effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Needs {
    /// It changes files or accounts only root may change.
    pub root: bool,
    /// The user must log out and in again (group membership, a login profile).
    pub relogin: bool,
    /// The machine must reboot (a kernel parameter).
    pub reboot: bool,
}

/// The change an action makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// A file's whole new text (host path; `before` is `None` for a new file).
    Edit {
        /// Host path (`/etc/group`).
        path: String,
        /// The text now, `None` when the file does not exist.
        before: Option<String>,
        /// The text after.
        after: String,
    },
    /// A command run on the live host, and the commands that undo it.
    Command {
        /// The command.
        argv: Vec<String>,
        /// Run in order to undo it.
        undo: Vec<Vec<String>>,
    },
    /// Shell commands for the user to run (installing packages): printed, never run, never journalled.
    Manual {
        /// Each a shell line, in order.
        commands: Vec<String>,
    },
}

impl Change {
    /// The lines that differ, `-old` / `+new`, for a plan a person reads; a command as the shell line.
    pub fn shown(&self) -> Vec<String> {
        match self {
            Change::Edit {
                path,
                before,
                after,
            } => {
                let old: Vec<&str> = before.as_deref().unwrap_or("").lines().collect();
                let new: Vec<&str> = after.lines().collect();
                let mut out = vec![match before {
                    Some(_) => format!("edit {path}:"),
                    None => format!("create {path}:"),
                }];
                out.extend(line_diff(&old, &new));
                out
            }
            Change::Command { argv, .. } => vec![format!(
                "run: {}",
                shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_default()
            )],
            Change::Manual { commands } => {
                let mut out = vec!["for you to run (rocmenv does not run these):".to_string()];
                out.extend(commands.iter().map(|c| format!("  $ {c}")));
                out
            }
        }
    }

    /// Whether `--apply` performs it (a manual step is only printed).
    pub fn applies(&self) -> bool {
        !matches!(self, Change::Manual { .. })
    }
}

/// The changed lines of two texts that differ by lines replaced, removed or added (the edits fix makes): the lines
/// before the first difference and after the last are the same, and the middle is shown as removed then added.
fn line_diff(old: &[&str], new: &[&str]) -> Vec<String> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out: Vec<String> = old[head..old.len() - tail]
        .iter()
        .map(|l| format!("  -{l}"))
        .collect();
    out.extend(
        new[head..new.len() - tail]
            .iter()
            .map(|l| format!("  +{l}")),
    );
    out
}

/// One concrete change.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    /// Stable id (`fix.groups`, `fix.profile`, `fix.cdi`).
    pub id: &'static str,
    /// The doctor findings it fixes (`devices.kfd`).
    pub fixes: Vec<String>,
    /// One line: what it does and why.
    pub summary: String,
    /// The change.
    pub change: Change,
    /// What it needs.
    pub needs: Needs,
    /// The vendor's page it follows.
    pub source: &'static str,
}

/// AMD's ROCm install guide: the user must be in the render and video groups.
pub const GROUPS_SOURCE: &str =
    "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.2/install/prerequisites.html#setting-permissions-for-groups";

/// Where the actions apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FixRoot {
    /// This machine: files under `/`, accounts through `usermod`.
    Live,
    /// A host tree: files under it, accounts in its `/etc/group`.
    Tree(PathBuf),
    /// A support bundle: planned, never changed.
    Bundle(PathBuf),
}

/// The actions for one host.
#[derive(Debug, Clone)]
pub struct FixPlan {
    /// Where they apply.
    pub root: FixRoot,
    /// Whose access and login files.
    pub user: Option<String>,
    /// In order.
    pub actions: Vec<Action>,
    /// What could not be planned, and why (a skip, never silence).
    pub notes: Vec<String>,
}

/// What `--apply` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Applied {
    /// The action ids done, in order.
    pub done: Vec<String>,
    /// Where the journal is.
    pub journal: Option<String>,
}

/// What `--undo` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Undone {
    /// One line per step reverted, newest first.
    pub reverted: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_only_the_changed_lines() {
        let d = line_diff(&["a", "b", "c"], &["a", "B", "c"]);
        assert_eq!(d, ["  -b", "  +B"]);
        let d = line_diff(&["a"], &["a", "b"]);
        assert_eq!(d, ["  +b"]);
        let d = line_diff(&["a", "x", "b"], &["a", "b"]);
        assert_eq!(d, ["  -x"]);
    }
}
