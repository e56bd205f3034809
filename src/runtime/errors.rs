//! The shape of the error tables and how a code becomes a [`RuntimeError`].

use super::RuntimeError;

/// A known error code: its name, what it means and what a person can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorInfo {
    /// The numeric code.
    pub code: i64,
    /// The name in the runtime's header (`hipErrorNoDevice`, `CUDA_ERROR_NO_DEVICE`).
    pub name: &'static str,
    /// One line on what it means.
    pub meaning: &'static str,
    /// What to do about it.
    pub fix: &'static str,
}

/// Table rows stay one line each.
pub(crate) const fn e(
    code: i64,
    name: &'static str,
    meaning: &'static str,
    fix: &'static str,
) -> ErrorInfo {
    ErrorInfo {
        code,
        name,
        meaning,
        fix,
    }
}

/// Builds the error for `code`: our table first, then what the library says, then `unknown error N`.
pub(crate) fn build(
    table: &'static [ErrorInfo],
    generic_fix: &str,
    code: i64,
    call: &str,
    lib_name: Option<String>,
    lib_message: Option<String>,
) -> RuntimeError {
    let info = table.iter().find(|i| i.code == code);
    // Libraries answer unknown codes with a placeholder name, which is no name at all.
    let placeholder = |s: &str| s.is_empty() || s.to_ascii_lowercase().contains("unknown");
    let lib_name = lib_name.filter(|n| !placeholder(n));
    let name = match (info, lib_name) {
        (Some(i), _) => i.name.to_string(),
        (None, Some(n)) => n,
        (None, None) => format!("unknown error {code}"),
    };
    // HIP 5 answers hipGetErrorString with the name again: then our meaning says more.
    let lib_message = lib_message.filter(|m| *m != name && !(info.is_none() && placeholder(m)));
    let message = match (lib_message.filter(|m| !m.is_empty()), info) {
        (Some(m), _) => m,
        (None, Some(i)) => i.meaning.to_string(),
        (None, None) => format!("{call} returned {code}"),
    };
    let fix = match info {
        Some(i) => i.fix.to_string(),
        None => generic_fix.to_string(),
    };
    RuntimeError {
        code,
        name,
        message,
        fix,
        call: call.to_string(),
    }
}
