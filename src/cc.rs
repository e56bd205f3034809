//! An NVIDIA compute capability: the one type that reads `9.0`, `sm_90` and torch's `sm_90a`, and writes them back.

use std::fmt;
use std::str::FromStr;

/// A compute capability, `major.minor` (`9.0`, `8.6`, `12.0`). [`Display`](fmt::Display) writes the matrices' and
/// host facts' spelling (`9.0`); [`ComputeCapability::sm`] the compiler's (`sm_90`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ComputeCapability {
    /// `9` of `9.0`.
    pub major: u32,
    /// `0` of `9.0`.
    pub minor: u32,
}

/// Why a string is not a compute capability as rocmenv.yaml's `cuda_arch` writes it.
pub const NOT_A_CUDA_ARCH: &str = "is not a compute capability; write sm_90 or \"9.0\"";

impl ComputeCapability {
    /// `major.minor`.
    pub fn new(major: u32, minor: u32) -> Self {
        ComputeCapability { major, minor }
    }

    /// `sm_90`: the name nvcc, torch and `TORCH_CUDA_ARCH_LIST` tables give it.
    pub fn sm(self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }

    /// As rocmenv.yaml's `cuda_arch` (and what `rocmenv init` writes there) spells it: `sm_90`, `sm_90a`, `sm_90f`
    /// or `9.0`, at most three digits of major and one of minor.
    pub fn parse_cuda_arch(s: &str) -> Result<Self, &'static str> {
        let digits =
            |d: &str| !d.is_empty() && d.len() <= 3 && d.bytes().all(|b| b.is_ascii_digit());
        if let Some(rest) = s.strip_prefix("sm_") {
            let rest = rest.strip_suffix(['a', 'f']).unwrap_or(rest);
            if digits(rest) && rest.len() >= 2 {
                let (major, minor) = rest.split_at(rest.len() - 1);
                return Ok(ComputeCapability::new(number(major)?, number(minor)?));
            }
        } else if let Some((major, minor)) = s.split_once('.') {
            if digits(major) && minor.len() == 1 && digits(minor) {
                return Ok(ComputeCapability::new(number(major)?, number(minor)?));
            }
        }
        Err(NOT_A_CUDA_ARCH)
    }

    /// The number of an arch in torch's list after its `sm_` or `compute_` prefix: `90`, `90a`, `120` (the last
    /// digit is the minor).
    pub fn from_arch_number(s: &str) -> Option<Self> {
        let n: u32 = s.trim_end_matches(['a', 'f']).parse().ok()?;
        Some(ComputeCapability::new(n / 10, n % 10))
    }
}

/// Up to three ASCII digits (already checked) as a number.
fn number(d: &str) -> Result<u32, &'static str> {
    d.parse().map_err(|_| NOT_A_CUDA_ARCH)
}

/// `8.6`: two decimal numbers around a dot, as the matrices and host facts write it.
impl FromStr for ComputeCapability {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("`{s}` is not a compute capability like 8.6");
        let (a, b) = s.split_once('.').ok_or_else(bad)?;
        Ok(ComputeCapability::new(
            a.parse().map_err(|_| bad())?,
            b.parse().map_err(|_| bad())?,
        ))
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(s: &str) -> ComputeCapability {
        s.parse().unwrap()
    }

    #[test]
    fn the_matrices_spelling_round_trips() {
        for s in ["9.0", "8.6", "12.0", "10.1"] {
            assert_eq!(cc(s).to_string(), s);
        }
        assert_eq!(cc("9.0").sm(), "sm_90");
        assert_eq!(cc("12.0").sm(), "sm_120");
        for bad in ["", "9", "90", "sm_90", "9.x", ".0", "9."] {
            assert!(bad.parse::<ComputeCapability>().is_err(), "{bad}");
        }
    }

    #[test]
    fn cuda_arch_takes_both_spellings() {
        let arch = |s| ComputeCapability::parse_cuda_arch(s).map(|c| c.to_string());
        assert_eq!(arch("sm_90").unwrap(), "9.0");
        assert_eq!(arch("sm_90a").unwrap(), "9.0");
        assert_eq!(arch("sm_100f").unwrap(), "10.0");
        assert_eq!(arch("sm_120").unwrap(), "12.0");
        assert_eq!(arch("8.6").unwrap(), "8.6");
        for bad in ["sm_", "90", "sm_9", "9.x", "compute_90", "8.10", "sm_1200"] {
            assert_eq!(arch(bad), Err(NOT_A_CUDA_ARCH), "{bad}");
        }
    }

    #[test]
    fn torch_arch_numbers() {
        let n = |s| ComputeCapability::from_arch_number(s).map(|c| c.to_string());
        assert_eq!(n("90a").as_deref(), Some("9.0"));
        assert_eq!(n("86").as_deref(), Some("8.6"));
        assert_eq!(n("120").as_deref(), Some("12.0"));
        assert_eq!(n("x"), None);
    }
}
