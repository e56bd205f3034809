//! The one place that says which user values may reach a Dockerfile or a shell line.
//!
//! Every check is a small scanner over bytes: a value is accepted only when each character is in a
//! short allow-list and the value follows the grammar, so nothing a shell or the Dockerfile parser
//! treats specially (newline, `\`, `$`, backtick, quotes, `;`, `|`, `&`, `<`/`>` outside a version
//! specifier, spaces) can change what the generated file means.

use crate::error::Error;
use crate::image_ref::ImageRef;

/// Longest value any check accepts; longer input is refused before it is scanned.
pub const MAX_LEN: usize = 255;

const PIP_HELP: &str = "a package is a name with optional extras and version specifiers, like `numpy==1.26.4`, `transformers[torch]~=4.40` or `torch>=2.1,<2.5` (no URLs, markers, options or spaces)";
const APT_HELP: &str =
    "a Debian package is a name like `python3-numpy`, optionally pinned as `libstdc++6=12.2.0-14`";
const IMAGE_HELP: &str = "an image reference is `[registry[:port]/]path[:tag][@sha256:<64 hex>]` with lowercase path components, like `debian:bookworm-slim` or `localhost:5000/x/y:z`";
const ENV_NAME_HELP: &str =
    "a variable name is upper-case letters, digits and `_`, not starting with a digit";
const TEXT_HELP: &str =
    "a value is printable ASCII without `\"`, `\\`, `$` or backtick, at most 255 characters";

/// Builds the `Usage` error for `flag`, naming the value safely and what would be allowed.
fn refuse(flag: &str, value: &str, problem: &str, help: &str) -> Error {
    Error::Invalid {
        fields: vec![flag.to_string()],
        value: Some(value.to_string()),
        message: format!("`{}` {problem}; {help}", shown(value)),
    }
}

/// The value as it is safe to print: escaped, and cut so a huge input does not flood the terminal.
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(60).collect();
    // Char by char: `str::escape_debug` leaves a combining mark after the first character as it is (issue 13).
    let mut s: String = cut.chars().flat_map(char::escape_debug).collect();
    if value.chars().count() > 60 {
        s.push('…');
    }
    s
}

pub use crate::text::one_line;

/// Names a character so a person can see it, including invisible and look-alike ones.
pub fn describe(c: char) -> String {
    match c {
        '\n' => "a newline (\\n)".into(),
        '\r' => "a carriage return (\\r)".into(),
        '\t' => "a tab".into(),
        '\0' => "a NUL byte".into(),
        ' ' => "a space".into(),
        '`' => "a backtick (`)".into(),
        // Not only ASCII's: U+0085 (NEL) ends a line on some terminals (issue 13, found by the sanitiser's fuzz target).
        c if c.is_control() => format!("a control character (U+{:04X})", c as u32),
        // A character Rust would escape (a bidi override, a zero-width space) is named, never printed as itself.
        c if !c.is_ascii() && c.escape_debug().nth(1).is_some() => {
            format!("an invisible character (U+{:04X}, not ASCII)", c as u32)
        }
        c if !c.is_ascii() => format!("`{c}` (U+{:04X}, not ASCII)", c as u32),
        c => format!("`{c}`"),
    }
}

/// Refuses an empty or over-long value, and the first character `allowed` rejects.
fn scan(flag: &str, value: &str, help: &str, allowed: impl Fn(char) -> bool) -> Result<(), Error> {
    if value.is_empty() {
        return Err(refuse(flag, value, "is empty", help));
    }
    if value.len() > MAX_LEN {
        let problem = format!("is {} bytes long (at most {MAX_LEN})", value.len());
        return Err(refuse(flag, value, &problem, help));
    }
    match value.chars().find(|&c| !allowed(c)) {
        Some(c) => Err(refuse(
            flag,
            value,
            &format!("contains {}", describe(c)),
            help,
        )),
        None => Ok(()),
    }
}

/// Length of the leading run of bytes that `f` accepts.
fn run_len(s: &str, f: impl Fn(u8) -> bool) -> usize {
    s.bytes().take_while(|&b| f(b)).count()
}

/// A PyPI project name (PEP 508): letters and digits, with `.`, `_`, `-` only between them.
fn is_pep508_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// A `--pip` value: a PEP 508 name, optional `[extras]`, optional comma-separated specifiers.
pub fn pip_requirement(flag: &str, value: &str) -> Result<(), Error> {
    let bad = |problem: &str| Err(refuse(flag, value, problem, PIP_HELP));
    if value.starts_with('-') {
        return bad("starts with `-`: pip options (`--index-url`, `-e`) are not packages");
    }
    let version_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '*' | '+' | '!');
    scan(flag, value, PIP_HELP, |c| {
        version_char(c) || matches!(c, '-' | '_' | '[' | ']' | ',' | '=' | '<' | '>' | '~')
    })?;
    let name_len = run_len(value, |b| {
        b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')
    });
    let (name, mut rest) = value.split_at(name_len);
    if !is_pep508_name(name) {
        return bad("does not start with a package name");
    }
    if let Some(after) = rest.strip_prefix('[') {
        let Some((extras, tail)) = after.split_once(']') else {
            return bad("opens `[` for extras without closing it");
        };
        if !extras.split(',').all(is_pep508_name) {
            return bad("has an extra that is not a name (write `name[a,b]`)");
        }
        rest = tail;
    }
    if rest.is_empty() {
        return Ok(());
    }
    for spec in rest.split(',') {
        let op_len = ["===", "==", "!=", "<=", ">=", "~=", "<", ">"]
            .iter()
            .find(|op| spec.starts_with(*op))
            .map(|op| op.len());
        let Some(op_len) = op_len else {
            return bad(&format!(
                "has `{}` where a specifier (==, !=, <=, >=, <, >, ~=, ===) belongs",
                shown(spec)
            ));
        };
        let version = &spec[op_len..];
        if version.is_empty() || !version.chars().all(|c| version_char(c) || c == '-') {
            return bad(&format!("has `{}` without a version after it", shown(spec)));
        }
    }
    Ok(())
}

/// An `--apt` value: a Debian package name, optionally `=version` (epoch digits, then a digit).
pub fn apt_package(flag: &str, value: &str) -> Result<(), Error> {
    scan(flag, value, APT_HELP, |c| {
        c.is_ascii_lowercase()
            || c.is_ascii_digit()
            || matches!(c, '+' | '.' | '-' | '=' | ':' | '~')
            || c.is_ascii_uppercase()
    })?;
    let bad = |problem: &str| Err(refuse(flag, value, problem, APT_HELP));
    let (name, version) = match value.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (value, None),
    };
    let nb = name.as_bytes();
    if nb.len() < 2 || !(nb[0].is_ascii_lowercase() || nb[0].is_ascii_digit()) {
        return bad("does not start with a package name of two or more characters");
    }
    if let Some(c) = name
        .chars()
        .find(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '+' | '.' | '-')))
    {
        return bad(&format!(
            "has {} in the package name (names are lower case)",
            describe(c)
        ));
    }
    let Some(version) = version else {
        return Ok(());
    };
    // A version that starts with a digit (after an optional epoch) cannot trigger tilde expansion.
    let upstream = match version.split_once(':') {
        Some((epoch, up)) if !epoch.is_empty() && epoch.bytes().all(|b| b.is_ascii_digit()) => up,
        Some(_) => return bad("has an epoch that is not a number (write `=2:9.0.1378-2`)"),
        None => version,
    };
    let ok = upstream.starts_with(|c: char| c.is_ascii_digit())
        && upstream
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '~' | '-'));
    if !ok {
        return bad("has a version that does not start with a digit");
    }
    Ok(())
}

/// An image reference as Docker's reference grammar defines it, at most 255 characters; returns it parsed.
pub fn image_reference(flag: &str, value: &str) -> Result<ImageRef, Error> {
    scan(flag, value, IMAGE_HELP, |c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '@')
    })?;
    ImageRef::parse(value).map_err(|e| refuse(flag, value, &e.to_string(), IMAGE_HELP))
}

/// A variable name for an `ENV` line.
pub fn env_name(flag: &str, value: &str) -> Result<(), Error> {
    scan(flag, value, ENV_NAME_HELP, |c| {
        c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'
    })?;
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(refuse(flag, value, "starts with a digit", ENV_NAME_HELP));
    }
    Ok(())
}

/// True for a character that may sit inside `"…"` on an `ENV` or `LABEL` line unchanged.
fn is_plain_text(c: char) -> bool {
    (c == ' ' || c.is_ascii_graphic()) && !matches!(c, '"' | '\\' | '$' | '`')
}

/// A value for an `ENV` line, written as `NAME="value"`.
pub fn env_value(flag: &str, value: &str) -> Result<(), Error> {
    // An empty variable is a legitimate setting (e.g. clearing a default), unlike an empty package.
    if value.is_empty() {
        return Ok(());
    }
    scan(flag, value, TEXT_HELP, is_plain_text)
}

/// A value for a `LABEL` line, written as `key="value"`.
pub fn label_value(flag: &str, value: &str) -> Result<(), Error> {
    scan(flag, value, TEXT_HELP, is_plain_text)
}

#[cfg(test)]
#[path = "sanitize_tests.rs"]
mod tests;
