//! A mount, as the engine creates it and as `--print` writes it (`-v SOURCE:CONTAINER[:ro]`).

use serde::Serialize;

/// What a mount's source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MountKind {
    /// An absolute host path; the daemon refuses one that does not exist (it never creates it).
    Bind,
    /// A named volume; the daemon creates it on first use.
    Volume,
}

/// A host path or a named volume mounted into the container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// Bind or named volume.
    pub kind: MountKind,
    /// The host path (absolute) or the volume's name.
    pub source: String,
    /// Path inside the container (absolute).
    pub container: String,
    /// Mounted read-only.
    pub read_only: bool,
}

impl Mount {
    /// `-v SOURCE:CONTAINER[:ro]`, quoted for a shell.
    pub fn docker_flag(&self) -> String {
        let ro = if self.read_only { ":ro" } else { "" };
        format!(
            "-v {}",
            shell_word(&format!("{}:{}{ro}", self.source, self.container))
        )
    }
}

/// Quotes a word only when the shell would otherwise change it. A NUL cannot reach a shell line (the values are
/// checked before a run is planned), so it is shown escaped rather than refused here.
pub(super) fn shell_word(w: &str) -> String {
    match shlex::try_quote(w) {
        Ok(q) => q.into_owned(),
        Err(_) => format!("'{}'", w.escape_default()),
    }
}
