//! Version strings as the matrices and hosts write them, normalised to `semver`.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// A release version such as `6.2` or `6.2.4`, normalised to three parts (`6.2` → `6.2.0`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub semver::Version);

/// Why a version string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a version like 6.2 or 6.2.4: {why}")]
pub struct VersionError {
    /// The text that was offered.
    pub input: String,
    /// What was wrong with it.
    pub why: &'static str,
}

impl Version {
    /// Builds `major.minor.patch`.
    pub fn new(major: u64, minor: u64, patch: u64) -> Self {
        Version(semver::Version::new(major, minor, patch))
    }

    /// Major part.
    pub fn major(&self) -> u64 {
        self.0.major
    }

    /// Minor part.
    pub fn minor(&self) -> u64 {
        self.0.minor
    }

    /// Patch part.
    pub fn patch(&self) -> u64 {
        self.0.patch
    }

    /// True when `prefix` (e.g. `6.2` written as 6.2.0 with `parts` = 2) names this version's series.
    pub fn in_series(&self, series: &Version, parts: usize) -> bool {
        match parts {
            1 => self.major() == series.major(),
            2 => self.major() == series.major() && self.minor() == series.minor(),
            _ => self == series,
        }
    }

    /// `major.minor` only.
    pub fn short(&self) -> String {
        format!("{}.{}", self.major(), self.minor())
    }
}

/// Parses `X`, `X.Y` or `X.Y.Z` (each part a decimal number ≤ 2^32) and says how many parts were given.
pub fn parse_with_parts(input: &str) -> Result<(Version, usize), VersionError> {
    let err = |why| VersionError {
        input: input.to_string(),
        why,
    };
    let text = input.trim();
    if text.is_empty() {
        return Err(err("it is empty"));
    }
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() > 3 {
        return Err(err("it has more than three parts"));
    }
    let mut nums = [0u64; 3];
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err("each part must be a decimal number"));
        }
        nums[i] = part
            .parse::<u32>()
            .map_err(|_| err("a part is too large"))? as u64;
    }
    Ok((Version::new(nums[0], nums[1], nums[2]), parts.len()))
}

impl FromStr for Version {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_with_parts(s).map(|(v, _)| v)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl Serialize for Version {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = version_text(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Accepts a YAML string or number (`6.2` unquoted is a float to YAML) as version text. A visitor, not an untagged
/// enum: serde buffers an untagged value before trying each variant, and the matrices hold hundreds of versions.
pub(crate) fn version_text<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    struct Text;
    impl serde::de::Visitor<'_> for Text {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a version (a string such as \"6.2.0\")")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
            u64::try_from(v)
                .map(|u| u.to_string())
                .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
        }
        fn visit_f64<E: serde::de::Error>(self, f: f64) -> Result<String, E> {
            Err(E::custom(format!(
                "version {f} must be quoted (YAML reads an unquoted 6.10 as 6.1)"
            )))
        }
    }
    d.deserialize_any(Text)
}

/// An NVIDIA driver version such as `550.54.15` or `565.57.01`: compared part by part as numbers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DriverVersion {
    parts: Vec<u32>,
    text: String,
}

impl DriverVersion {
    /// The parts as numbers.
    pub fn parts(&self) -> &[u32] {
        &self.parts
    }
    /// The branch (first part), e.g. 550.
    pub fn branch(&self) -> u32 {
        self.parts[0]
    }
}

impl PartialOrd for DriverVersion {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for DriverVersion {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        let n = self.parts.len().max(other.parts.len());
        for i in 0..n {
            let a = self.parts.get(i).copied().unwrap_or(0);
            let b = other.parts.get(i).copied().unwrap_or(0);
            match a.cmp(&b) {
                std::cmp::Ordering::Equal => continue,
                o => return o,
            }
        }
        std::cmp::Ordering::Equal
    }
}

impl FromStr for DriverVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let text = s.trim();
        let err = |why| VersionError {
            input: s.to_string(),
            why,
        };
        if text.is_empty() {
            return Err(err("it is empty"));
        }
        let mut parts = Vec::new();
        for p in text.split('.') {
            if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err("each part must be a decimal number"));
            }
            parts.push(p.parse().map_err(|_| err("a part is too large"))?);
        }
        if parts.len() > 4 {
            return Err(err("it has more than four parts"));
        }
        Ok(DriverVersion {
            parts,
            text: text.to_string(),
        })
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for DriverVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DriverVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = version_text(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A version as a host reports it (a driver's sysfs file, an install's `.info/version`, a package database): the text
/// as read, which reports show byte for byte, and the version it parses to, or `None` when the text is no version
/// rocmenv reads (the checks then say so instead of comparing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported<V> {
    text: String,
    value: Option<V>,
}

impl<V: FromStr> Reported<V> {
    /// `text` as read, parsed once.
    pub fn new(text: impl Into<String>) -> Self {
        let text = text.into();
        let value = text.parse().ok();
        Reported { text, value }
    }
}

impl<V> Reported<V> {
    /// The text as read.
    pub fn as_str(&self) -> &str {
        &self.text
    }
    /// The version, when the text is one.
    pub fn value(&self) -> Option<&V> {
        self.value.as_ref()
    }
}

impl<V> fmt::Display for Reported<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<V> Serialize for Reported<V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A version in a matrix file: a string, or a whole number; a decimal is refused with the reason; anything else
    /// names what a version is.
    #[test]
    fn versions_read_from_yaml_as_strings_or_whole_numbers() {
        let v = |y: &str| serde_yaml_ng::from_str::<Version>(y).map(|v| v.to_string());
        assert_eq!(v("\"6.2.0\"").unwrap(), "6.2.0");
        assert_eq!(v("6.2.0").unwrap(), "6.2.0");
        assert_eq!(v("7").unwrap(), "7.0.0");
        let e = v("6.10").unwrap_err().to_string();
        assert!(e.contains("version 6.1 must be quoted"), "{e}");
        let e = v("true").unwrap_err().to_string();
        assert!(e.contains("expected a version"), "{e}");
        assert!(v("-1").is_err());
        assert_eq!(
            serde_json::from_str::<Version>("\"6.2.0\"")
                .unwrap()
                .to_string(),
            "6.2.0"
        );
    }

    #[test]
    fn short_versions_are_padded() {
        assert_eq!("6.2".parse::<Version>().unwrap(), Version::new(6, 2, 0));
        assert_eq!(parse_with_parts("7").unwrap(), (Version::new(7, 0, 0), 1));
        assert_eq!(parse_with_parts("6.4.3").unwrap().1, 3);
    }

    #[test]
    fn garbage_versions_are_refused() {
        for bad in [
            "",
            "6.x",
            "6..2",
            "1.2.3.4",
            "99999999999.1",
            "-1",
            "6.2-rc1",
        ] {
            assert!(bad.parse::<Version>().is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn driver_versions_compare_numerically() {
        let a: DriverVersion = "550.54.15".parse().unwrap();
        let b: DriverVersion = "550.127.05".parse().unwrap();
        let c: DriverVersion = "565.57.01".parse().unwrap();
        assert!(a < b && b < c);
        assert_eq!(c.to_string(), "565.57.01");
        assert_eq!(c.branch(), 565);
        assert!("".parse::<DriverVersion>().is_err());
        assert!("5x0".parse::<DriverVersion>().is_err());
    }

    #[test]
    fn a_reported_version_keeps_its_text_and_parses_once() {
        let r = Reported::<Version>::new("6.2");
        assert_eq!((r.as_str(), r.to_string()), ("6.2", "6.2".to_string()));
        assert_eq!(r.value(), Some(&Version::new(6, 2, 0)));
        assert_eq!(serde_json::to_value(&r).unwrap(), "6.2");
        let odd = Reported::<Version>::new("6.2.0-rc1");
        assert_eq!((odd.as_str(), odd.value()), ("6.2.0-rc1", None));
        let d = Reported::<DriverVersion>::new("565.57.01");
        assert_eq!(d.value().map(DriverVersion::branch), Some(565));
    }
}
