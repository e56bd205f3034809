//! Kubernetes object names, checked before they reach a manifest: the API server would refuse a bad one only when the
//! manifest is applied, far from the flag that carried it.

use crate::error::Error;

/// What a DNS-1123 label is, for the error message.
const LABEL_HELP: &str = "a Kubernetes name here is a DNS-1123 label: at most 63 lower-case letters, digits and `-`, starting and ending with a letter or digit, like `gpu-checks`";
/// What a DNS-1123 subdomain is, for the error message.
const SUBDOMAIN_HELP: &str = "a Kubernetes name here is a DNS-1123 subdomain: at most 253 characters, DNS-1123 labels joined by `.`, like `rocmenv-config` or `node-1.example.com`";

/// True for a DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters
/// (<https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names>).
pub fn is_dns1123_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// True for a DNS-1123 subdomain: labels joined by `.`, at most 253 characters
/// (<https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-subdomain-names>).
pub fn is_dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(is_dns1123_label)
}

/// The value as safe to print in an error: escaped and cut.
fn shown(value: &str) -> String {
    let cut: String = value.chars().take(70).collect();
    cut.escape_debug().collect()
}

/// `value` of `flag` as a DNS-1123 label (namespaces).
pub fn label(flag: &str, value: &str) -> Result<String, Error> {
    if is_dns1123_label(value) {
        Ok(value.to_string())
    } else {
        Err(Error::invalid(
            flag,
            format!("`{}` is not valid; {LABEL_HELP}", shown(value)),
        ))
    }
}

/// `value` of `flag` as a DNS-1123 subdomain (ConfigMaps, nodes).
pub fn subdomain(flag: &str, value: &str) -> Result<String, Error> {
    if is_dns1123_subdomain(value) {
        Ok(value.to_string())
    } else {
        Err(Error::invalid(
            flag,
            format!("`{}` is not valid; {SUBDOMAIN_HELP}", shown(value)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_subdomains() {
        for ok in ["a", "gpu-checks", "x1", &"a".repeat(63)] {
            assert!(is_dns1123_label(ok), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "a_b",
            "a.b",
            "a b",
            "é",
            &"a".repeat(64),
        ] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
        assert!(is_dns1123_subdomain("node-1.example.com"));
        for bad in ["a..b", ".a", "a.", "a/b", "$(id)"] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
        let e = label("namespace", "Prod\n").unwrap_err().to_string();
        assert!(e.starts_with("namespace: `Prod\\n` is not valid;"), "{e}");
    }
}
