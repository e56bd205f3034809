//! Image references: `[registry[:port]/]path[:tag][@sha256:<64 hex>]`, parsed once and used everywhere a reference
//! is checked (user input, matrix data), pulled or tagged.
//!
//! The grammar is the distribution project's reference grammar (distribution/reference `regexp.go`): path components
//! are lower-case alphanumerics joined by `.`, `_`, `__` or runs of `-`; the first component is a registry when it
//! holds a `.` or a `:`, is `localhost`, or has an upper-case letter. Hand-written rather than a crate because the
//! error must name what is wrong with which part, and no maintained crate reports that.

use std::fmt;

/// The longest reference accepted (Docker's own limit for a name is 255).
pub const MAX_LEN: usize = 255;

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// `host[:port]` when the reference names a registry.
    pub registry: Option<String>,
    /// The repository path inside the registry, e.g. `rocm/pytorch` or `debian`.
    pub path: String,
    /// The tag, when given.
    pub tag: Option<String>,
    /// `sha256:<64 hex>`, when given.
    pub digest: Option<String>,
}

/// Why a string is not an image reference.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    /// Nothing was given.
    #[error("is empty")]
    Empty,
    /// Longer than [`MAX_LEN`].
    #[error("is longer than {MAX_LEN} characters")]
    TooLong,
    /// A character no reference may hold.
    #[error("contains {0}")]
    Character(char),
    /// The digest part is not `sha256:` and 64 lower-case hex digits.
    #[error("has a digest that is not `sha256:` and 64 lower-case hex digits")]
    Digest,
    /// The tag part breaks the tag grammar.
    #[error("has a tag that is not `[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}}`")]
    Tag,
    /// The registry part is not a host with an optional port.
    #[error("has a registry host that is not `host[:port]`")]
    Registry,
    /// A path component breaks the component grammar.
    #[error("has `{0}` as a path component (lower-case letters and digits joined by `.`, `_`, `__` or `-`)")]
    Component(String),
}

impl ImageRef {
    /// Parses `s`, refusing anything outside the reference grammar.
    pub fn parse(s: &str) -> Result<ImageRef, RefError> {
        if s.is_empty() {
            return Err(RefError::Empty);
        }
        if s.len() > MAX_LEN {
            return Err(RefError::TooLong);
        }
        if let Some(c) = s.chars().find(|c| {
            !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '@'))
        }) {
            return Err(RefError::Character(c));
        }
        let (rest, digest) = match s.split_once('@') {
            Some((r, d)) => (r, Some(d)),
            None => (s, None),
        };
        if let Some(d) = digest {
            let hex = d.strip_prefix("sha256:").unwrap_or("");
            let lower_hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
            if hex.len() != 64 || !hex.bytes().all(lower_hex) {
                return Err(RefError::Digest);
            }
        }
        // A `:` after the last `/` starts the tag; one before it belongs to a registry's port.
        let last_slash = rest.rfind('/').map_or(0, |i| i + 1);
        let (name, tag) = match rest[last_slash..].rfind(':') {
            Some(i) => (&rest[..last_slash + i], Some(&rest[last_slash + i + 1..])),
            None => (rest, None),
        };
        if let Some(t) = tag {
            if !is_tag(t) {
                return Err(RefError::Tag);
            }
        }
        let mut parts: Vec<&str> = name.split('/').collect();
        let first = parts[0];
        let has_registry = parts.len() > 1
            && (first.contains('.')
                || first.contains(':')
                || first == "localhost"
                || first.bytes().any(|b| b.is_ascii_uppercase()));
        let registry = if has_registry {
            if !is_registry(first) {
                return Err(RefError::Registry);
            }
            parts.remove(0);
            Some(first.to_string())
        } else {
            None
        };
        if let Some(p) = parts.iter().find(|p| !is_path_component(p)) {
            return Err(RefError::Component(p.to_string()));
        }
        Ok(ImageRef {
            registry,
            path: parts.join("/"),
            tag: tag.map(str::to_string),
            digest: digest.map(str::to_string),
        })
    }

    /// `[registry/]path`, as written (no tag, no digest).
    pub fn repository(&self) -> String {
        match &self.registry {
            Some(r) => format!("{r}/{}", self.path),
            None => self.path.clone(),
        }
    }

    /// What the engine's pull endpoint takes: the repository, and the digest when pinned (the daemon pulls by
    /// digest and ignores a tag beside it, as `docker pull` does), else the tag (`latest` when none).
    pub fn pull_target(&self) -> (String, String) {
        let which = self
            .digest
            .clone()
            .or_else(|| self.tag.clone())
            .unwrap_or_else(|| "latest".into());
        (self.repository(), which)
    }

    /// The fully qualified name Docker resolves this to: `docker.io/library/debian:latest` for `debian`.
    pub fn normalized(&self) -> String {
        let registry = self.registry.as_deref().unwrap_or("docker.io");
        let path = if self.registry.is_none() && !self.path.contains('/') {
            format!("library/{}", self.path)
        } else {
            self.path.clone()
        };
        let mut s = format!("{registry}/{path}");
        if let Some(t) = &self.tag {
            s.push(':');
            s.push_str(t);
        } else if self.digest.is_none() {
            s.push_str(":latest");
        }
        if let Some(d) = &self.digest {
            s.push('@');
            s.push_str(d);
        }
        s
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repository())?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for ImageRef {
    type Err = RefError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ImageRef::parse(s)
    }
}

fn is_tag(t: &str) -> bool {
    let tb = t.as_bytes();
    !tb.is_empty()
        && tb.len() <= 128
        && (tb[0].is_ascii_alphanumeric() || tb[0] == b'_')
        && tb
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// One path component of an image name: `[a-z0-9]+` joined by `.`, `_`, `__` or `-`+.
fn is_path_component(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    if b.is_empty() || !alnum(&b[0]) || !alnum(&b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if alnum(&b[i]) {
            i += 1;
            continue;
        }
        let sep = s[i..].bytes().take_while(|c| !alnum(c)).count();
        let text = &s[i..i + sep];
        let fine = text == "." || text == "_" || text == "__" || text.bytes().all(|c| c == b'-');
        if !fine {
            return false;
        }
        i += sep;
    }
    true
}

/// A registry host: DNS labels joined by `.`, with an optional numeric `:port`.
fn is_registry(s: &str) -> bool {
    let (host, port) = match s.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    };
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    };
    host.split('.').all(label_ok)
        && port
            .is_none_or(|p| !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEX: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn parts_of_each_form() {
        let r = ImageRef::parse("debian").unwrap();
        assert_eq!(
            (r.registry.as_deref(), r.path.as_str(), r.tag.as_deref()),
            (None, "debian", None)
        );
        assert_eq!(r.pull_target(), ("debian".into(), "latest".into()));
        assert_eq!(r.normalized(), "docker.io/library/debian:latest");

        let r = ImageRef::parse("rocm/pytorch:rocm6.2_ubuntu22.04").unwrap();
        assert_eq!(r.path, "rocm/pytorch");
        assert_eq!(r.tag.as_deref(), Some("rocm6.2_ubuntu22.04"));
        assert_eq!(r.normalized(), "docker.io/rocm/pytorch:rocm6.2_ubuntu22.04");

        let r = ImageRef::parse("localhost:5000/img").unwrap();
        assert_eq!(r.registry.as_deref(), Some("localhost:5000"));
        assert_eq!(r.tag, None);
        assert_eq!(
            r.pull_target(),
            ("localhost:5000/img".into(), "latest".into())
        );
    }

    /// Issue 9: a digest-pinned reference was pulled as repo `…:2.1@sha256` with the hex as its tag.
    #[test]
    fn a_digest_pins_the_pull_and_keeps_the_registry_port() {
        let s = format!("127.0.0.1:5999/team/torch:2.1@sha256:{HEX}");
        let r = ImageRef::parse(&s).unwrap();
        assert_eq!(r.registry.as_deref(), Some("127.0.0.1:5999"));
        assert_eq!(r.path, "team/torch");
        assert_eq!(r.tag.as_deref(), Some("2.1"));
        assert_eq!(r.digest.as_deref(), Some(&*format!("sha256:{HEX}")));
        assert_eq!(
            r.pull_target(),
            ("127.0.0.1:5999/team/torch".into(), format!("sha256:{HEX}"))
        );
        assert_eq!(r.to_string(), s);
        let r = ImageRef::parse(&format!("nvcr.io/nvidia/pytorch@sha256:{HEX}")).unwrap();
        assert_eq!(r.tag, None);
        assert_eq!(r.pull_target().1, format!("sha256:{HEX}"));
    }

    #[test]
    fn refusals_name_the_part() {
        assert_eq!(ImageRef::parse(""), Err(RefError::Empty));
        assert_eq!(ImageRef::parse("a b"), Err(RefError::Character(' ')));
        assert_eq!(ImageRef::parse("x@sha256:abc"), Err(RefError::Digest));
        assert_eq!(ImageRef::parse("x:-bad"), Err(RefError::Tag));
        assert_eq!(ImageRef::parse("ho_st:5000/x"), Err(RefError::Registry));
        assert_eq!(
            ImageRef::parse("UX/Test:1"),
            Err(RefError::Component("Test".into()))
        );
        assert_eq!(ImageRef::parse(&"a".repeat(256)), Err(RefError::TooLong));
    }
}
