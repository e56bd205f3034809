//! Distribution versions in one canonical form, so a matrix row and a host's os-release compare equal.
//!
//! AMD's tables write SUSE service packs as `15-SP5`, while SLES's own `/etc/os-release` says
//! `VERSION_ID="15.5"` (and `VERSION="15-SP5"`); every other distro is written as its `VERSION_ID`.

/// The os-release `VERSION_ID` form of a distro version: `15-SP5` → `15.5`, `15-sp5` → `15.5`,
/// anything else unchanged (`22.04`, `9.6`, `12`).
pub fn canonical_distro_version(version: &str) -> String {
    let v = version.trim();
    if let Some((major, sp)) = v.split_once('-') {
        let sp = sp
            .strip_prefix("SP")
            .or_else(|| sp.strip_prefix("sp"))
            .unwrap_or("");
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if digits(major) && digits(sp) {
            return format!("{major}.{sp}");
        }
    }
    v.to_string()
}

/// True when a host's os-release `VERSION_ID` is the version a matrix row lists: equal in canonical
/// form, or the row names only a major version (`rocky 9`, `ol 8`) and the host is a point release of it (`9.6`).
pub fn distro_version_matches(listed: &str, version_id: &str) -> bool {
    let (listed, host) = (
        canonical_distro_version(listed),
        canonical_distro_version(version_id),
    );
    if listed == host {
        return true;
    }
    !listed.contains('.') && !listed.is_empty() && host.split('.').next() == Some(listed.as_str())
}

/// True when `version` is written as an os-release `VERSION_ID` (digits separated by dots), or is
/// a SUSE `15-SPn` that [`canonical_distro_version`] turns into one.
pub fn is_os_release_version(version: &str) -> bool {
    let c = canonical_distro_version(version);
    !c.is_empty()
        && c.split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suse_service_packs_compare_with_os_release() {
        assert_eq!(canonical_distro_version("15-SP5"), "15.5");
        assert_eq!(canonical_distro_version("15-sp7"), "15.7");
        assert_eq!(canonical_distro_version("15.5"), "15.5");
        assert_eq!(canonical_distro_version("22.04"), "22.04");
        assert!(distro_version_matches("15-SP5", "15.5"));
        assert!(distro_version_matches("15.5", "15-SP5"));
        assert!(!distro_version_matches("15-SP6", "15.5"));
        assert!(!distro_version_matches("15-SP5", "15"));
    }

    #[test]
    fn a_major_only_row_matches_its_point_releases() {
        assert!(distro_version_matches("9", "9.6"));
        assert!(distro_version_matches("9", "9"));
        assert!(!distro_version_matches("9", "10.0"));
        assert!(!distro_version_matches("9.6", "9"));
        assert!(!distro_version_matches("9.4", "9.6"));
        assert!(!distro_version_matches("22.04", "22.10"));
        assert!(!distro_version_matches("", "9"));
    }

    #[test]
    fn os_release_form() {
        for ok in ["22.04", "9", "15-SP5", "3.0", "10.1"] {
            assert!(is_os_release_version(ok), "{ok}");
        }
        for bad in ["", "22.04 LTS", "bookworm", "9.x", "15 SP5", "15-SPx", ".1"] {
            assert!(!is_os_release_version(bad), "{bad}");
        }
    }
}
