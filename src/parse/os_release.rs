//! `/etc/os-release` per os-release(5): `KEY=value` lines, shell-like quoting, no expansion.

use serde::Serialize;

/// Longest value kept; os-release values are short, anything longer is cut here.
const MAX_VALUE: usize = 256;

/// The fields of os-release that identify a distribution and its release.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OsRelease {
    /// `ID`, e.g. `ubuntu`, `rhel`, `opensuse-leap`.
    pub id: Option<String>,
    /// `ID_LIKE`, split on whitespace.
    pub id_like: Vec<String>,
    /// `VERSION_ID`, e.g. `22.04`, `9.6`.
    pub version_id: Option<String>,
    /// `VERSION`, e.g. `22.04.4 LTS (Jammy Jellyfish)`.
    pub version: Option<String>,
    /// `PRETTY_NAME`.
    pub pretty_name: Option<String>,
    /// `NAME`.
    pub name: Option<String>,
    /// `VERSION_CODENAME`, e.g. `jammy`.
    pub version_codename: Option<String>,
    /// `UBUNTU_CODENAME`: which Ubuntu a derivative (Linux Mint, Pop!_OS) is built on.
    pub ubuntu_codename: Option<String>,
}

impl OsRelease {
    /// The most precise release number given: `22.04.4` from Ubuntu's `VERSION`, else `VERSION_ID`.
    pub fn point_release(&self) -> Option<String> {
        let from_version = self.version.as_deref().and_then(|v| {
            v.split(|c: char| c.is_whitespace() || c == '(' || c == ',')
                .find(|t| {
                    t.starts_with(|c: char| c.is_ascii_digit())
                        && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                        && !t.ends_with('.')
                })
                .map(str::to_string)
        });
        match (from_version, &self.version_id) {
            // Only trust VERSION when it refines VERSION_ID (`22.04.4` refines `22.04`).
            (Some(v), Some(id)) if v.starts_with(id.as_str()) && v.len() >= id.len() => Some(v),
            (_, Some(id)) => Some(id.clone()),
            (v, None) => v,
        }
    }
}

/// Parses os-release text; invalid lines are skipped, never fatal.
pub fn parse_os_release(s: &str) -> OsRelease {
    let mut out = OsRelease::default();
    for line in s.lines() {
        let Some((key, value)) = parse_line(line) else {
            continue;
        };
        match key {
            "ID" => out.id = Some(value),
            "ID_LIKE" => out.id_like = value.split_whitespace().map(str::to_string).collect(),
            "VERSION_ID" => out.version_id = Some(value),
            "VERSION" => out.version = Some(value),
            "PRETTY_NAME" => out.pretty_name = Some(value),
            "NAME" => out.name = Some(value),
            "VERSION_CODENAME" => out.version_codename = Some(value),
            "UBUNTU_CODENAME" => out.ubuntu_codename = Some(value),
            _ => {}
        }
    }
    out
}

/// One `KEY=value` line → (key, unquoted value); `None` for comments, blanks and invalid lines.
fn parse_line(line: &str) -> Option<(&str, String)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (key, raw) = line.split_once('=')?;
    if key.is_empty()
        || !key
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
    {
        return None;
    }
    let value = unquote(raw)?;
    // Cap the value so a hostile file cannot make us carry megabytes around.
    Some((key, value.chars().take(MAX_VALUE).collect()))
}

/// Removes one level of shell quoting; `None` for an unterminated quote.
fn unquote(raw: &str) -> Option<String> {
    let mut chars = raw.chars();
    match raw.chars().next() {
        Some('"') => {
            chars.next();
            let mut out = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => return Some(out),
                    // In double quotes only these four are escapes, as in the shell.
                    '\\' => match chars.next() {
                        Some(e @ ('"' | '\\' | '$' | '`')) => out.push(e),
                        Some(e) => {
                            out.push('\\');
                            out.push(e);
                        }
                        None => return None,
                    },
                    c => out.push(c),
                }
            }
            None
        }
        Some('\'') => {
            let inner = &raw[1..];
            inner.find('\'').map(|end| inner[..end].to_string())
        }
        _ => {
            // Unquoted: a backslash escapes the next character; the rest is literal text.
            let mut out = String::new();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    if let Some(e) = chars.next() {
                        out.push(e);
                    }
                } else {
                    out.push(c);
                }
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! capture {
        ($f:literal) => {
            include_str!(concat!("../../tests/fixtures/captures/", $f))
        };
    }

    /// (text, id, version_id, id_like, point release, codename)
    type Case = (
        &'static str,
        &'static str,
        Option<&'static str>,
        &'static [&'static str],
        Option<&'static str>,
        Option<&'static str>,
    );

    #[test]
    fn every_capture() {
        // (text, id, version_id, id_like, point release, codename)
        let cases: [Case; 9] = [
            (
                capture!("os-release_arch.txt"),
                "arch",
                None,
                &[],
                None,
                None,
            ),
            (
                capture!("os-release_debian12_vm.txt"),
                "debian",
                Some("12"),
                &[],
                Some("12"),
                Some("bookworm"),
            ),
            (
                capture!("os-release_debian13.txt"),
                "debian",
                Some("13"),
                &[],
                Some("13"),
                Some("trixie"),
            ),
            (
                capture!("os-release_opensuse15.txt"),
                "opensuse-leap",
                Some("15.2"),
                &["suse", "opensuse"],
                Some("15.2"),
                None,
            ),
            (
                capture!("os-release_rhel9.txt"),
                "rhel",
                Some("9.6"),
                &["fedora"],
                Some("9.6"),
                None,
            ),
            (
                capture!("os-release_rocky9.txt"),
                "rocky",
                Some("9.3"),
                &["rhel", "centos", "fedora"],
                Some("9.3"),
                None,
            ),
            (
                capture!("os-release_sles12.txt"),
                "sles",
                Some("12.1"),
                &[],
                Some("12.1"),
                None,
            ),
            (
                capture!("os-release_ubuntu22.04_vm.txt"),
                "ubuntu",
                Some("22.04"),
                &["debian"],
                Some("22.04.5"),
                Some("jammy"),
            ),
            (
                capture!("os-release_ubuntu24.txt"),
                "ubuntu",
                Some("24.04"),
                &["debian"],
                Some("24.04.3"),
                Some("noble"),
            ),
        ];
        for (text, id, vid, like, point, code) in cases {
            let r = parse_os_release(text);
            assert_eq!(r.id.as_deref(), Some(id));
            assert_eq!(r.version_id.as_deref(), vid, "{id}");
            assert_eq!(r.id_like, like, "{id}");
            assert_eq!(r.point_release().as_deref(), point, "{id}");
            assert_eq!(r.version_codename.as_deref(), code, "{id}");
            assert!(r.pretty_name.is_some() && r.name.is_some(), "{id}");
        }
        let u = parse_os_release(capture!("os-release_ubuntu24.txt"));
        assert_eq!(u.pretty_name.as_deref(), Some("Ubuntu 24.04.3 LTS"));
        assert_eq!(u.version.as_deref(), Some("24.04.3 LTS (Noble Numbat)"));
        assert_eq!(
            parse_os_release(capture!("os-release_sles12.txt"))
                .version
                .as_deref(),
            Some("12-SP1")
        );
    }

    #[test]
    fn quoting_rules() {
        let r = parse_os_release(concat!(
            "NAME='Single Quoted'\n",
            "PRETTY_NAME=\"a \\\"b\\\" \\$c \\\\ \\n\"\n",
            "  ID=plain  \n",
            "id=lower\n",
            "VERSION_ID=\"1.0\" trailing\n",
            "VERSION_CODENAME=\n",
        ));
        assert_eq!(r.name.as_deref(), Some("Single Quoted"));
        assert_eq!(r.pretty_name.as_deref(), Some("a \"b\" $c \\ \\n"));
        assert_eq!(r.id.as_deref(), Some("plain"));
        assert_eq!(r.version_id.as_deref(), Some("1.0"));
        assert_eq!(r.version_codename.as_deref(), Some(""));
    }

    #[test]
    fn hostile_inputs() {
        assert_eq!(parse_os_release(""), OsRelease::default());
        assert_eq!(
            parse_os_release("\u{FFFD}\u{0}\u{1}=\u{FFFD}\n\u{7f}"),
            OsRelease::default()
        );
        let r = parse_os_release("ID=$(rm -rf /)\nNAME=`reboot`\n");
        assert_eq!(r.id.as_deref(), Some("$(rm -rf /)"));
        assert_eq!(r.name.as_deref(), Some("`reboot`"));
        let r = parse_os_release("ID=\"unterminated\nVERSION_ID='also\nNAME=\"trailing\\");
        assert_eq!(r, OsRelease::default());
        let huge = format!("ID=\"{}\"\nVERSION_ID=1", "x".repeat(1 << 20));
        let r = parse_os_release(&huge);
        assert_eq!(r.id.map(|s| s.len()), Some(256));
        assert_eq!(r.version_id.as_deref(), Some("1"));
        let r = parse_os_release("ID=ubuntu\nID=debian\nVERSION=\"garbage (x)\"\nVERSION_ID=9");
        assert_eq!(r.id.as_deref(), Some("debian"));
        assert_eq!(r.point_release().as_deref(), Some("9"));
        assert_eq!(parse_os_release("VERSION=\"1. 2.\"").point_release(), None);
    }
}
