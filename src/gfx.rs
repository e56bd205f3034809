//! AMD LLVM gfx targets: `gfx90a`, `gfx1100`, … and how KFD and `HSA_OVERRIDE_GFX_VERSION` spell them.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// An LLVM AMDGPU target: major (decimal), minor and stepping (one hex digit each).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GfxTarget {
    /// Major version, written in decimal (9, 10, 11, 12).
    pub major: u8,
    /// Minor version, one hex digit.
    pub minor: u8,
    /// Stepping, one hex digit.
    pub stepping: u8,
}

/// Why a gfx name, a `gfx_target_version` or an override value could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` {why}")]
pub struct GfxError {
    /// The text that was offered.
    pub input: String,
    /// What was wrong with it.
    pub why: &'static str,
}

/// The AMDGCN processors LLVM compiles for: the `EF_AMDGPU_MACH` table of `llvm/docs/AMDGPUUsage.rst`
/// (https://llvm.org/docs/AMDGPUUsage.html#processors, llvm/llvm-project tag llvmorg-20.1.0) plus gfx1250 and
/// gfx1251 (`EF_AMDGPU_MACH_AMDGCN_GFX1250` 0x49 and `_GFX1251` 0x5a in llvm/include/llvm/BinaryFormat/ELF.h, LLVM 21+).
pub const LLVM_PROCESSORS: &[&str] = &[
    "gfx600", "gfx601", "gfx602", "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705",
    "gfx801", "gfx802", "gfx803", "gfx805", "gfx810", "gfx900", "gfx902", "gfx904", "gfx906",
    "gfx908", "gfx909", "gfx90a", "gfx90c", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1010",
    "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034",
    "gfx1035", "gfx1036", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
    "gfx1152", "gfx1153", "gfx1200", "gfx1201", "gfx1250", "gfx1251",
];

impl GfxTarget {
    /// True when LLVM has a processor of this name ([`LLVM_PROCESSORS`]); a name that only parses
    /// (`gfx1105`) is not a real target.
    pub fn is_llvm_processor(&self) -> bool {
        LLVM_PROCESSORS.contains(&self.to_string().as_str())
    }

    /// Builds a target; major must be 1..=99 (a name holds two decimal digits for it, KFD's encoding too), minor and
    /// stepping ≤ 15.
    pub fn new(major: u8, minor: u8, stepping: u8) -> Option<Self> {
        ((1..=99).contains(&major) && minor <= 0xf && stepping <= 0xf).then_some(GfxTarget {
            major,
            minor,
            stepping,
        })
    }

    /// Decodes KFD's `gfx_target_version` (`major*10000 + minor*100 + stepping`, decimal).
    /// `0` is a CPU node and yields `Ok(None)`.
    pub fn from_kfd_version(value: u64) -> Result<Option<Self>, GfxError> {
        if value == 0 {
            return Ok(None);
        }
        let err = |why| GfxError {
            input: value.to_string(),
            why,
        };
        let major = value / 10000;
        let minor = (value / 100) % 100;
        let stepping = value % 100;
        if major == 0 || major > 99 {
            return Err(err("is not a gfx_target_version (major out of range)"));
        }
        if minor > 0xf || stepping > 0xf {
            return Err(err(
                "is not a gfx_target_version (minor and stepping must be 0..15)",
            ));
        }
        Ok(GfxTarget::new(major as u8, minor as u8, stepping as u8))
    }

    /// Encodes back to KFD's `gfx_target_version`.
    pub fn kfd_version(&self) -> u64 {
        self.major as u64 * 10000 + self.minor as u64 * 100 + self.stepping as u64
    }

    /// Parses an `HSA_OVERRIDE_GFX_VERSION` value: `x.y.z` with each part 0..15, or a `gfx…` name.
    pub fn from_override(value: &str) -> Result<Self, GfxError> {
        let v = value.trim();
        if v.starts_with("gfx") {
            return v.parse();
        }
        let err = |why| GfxError {
            input: value.to_string(),
            why,
        };
        let parts: Vec<&str> = v.split('.').collect();
        if parts.len() != 3 {
            return Err(err("is not an override value like 10.3.0"));
        }
        let mut n = [0u8; 3];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(err("is not an override value like 10.3.0"));
            }
            n[i] = p
                .parse()
                .map_err(|_| err("is not an override value like 10.3.0"))?;
        }
        // Issue 13 (fuzzing): `100.0.0` made a target printed as `gfx10000`, a name that does not parse back.
        if !(1..=99).contains(&n[0]) {
            return Err(err(
                "has a major version outside 1..99, which no gfx target can have",
            ));
        }
        GfxTarget::new(n[0], n[1], n[2])
            .ok_or_else(|| err("has a minor or stepping above 15, which no gfx target can have"))
    }

    /// The `HSA_OVERRIDE_GFX_VERSION` spelling: `10.3.0`.
    pub fn override_value(&self) -> String {
        format!("{}.{}.{}", self.major, self.minor, self.stepping)
    }
}

impl FromStr for GfxTarget {
    type Err = GfxError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |why| GfxError {
            input: s.to_string(),
            why,
        };
        let rest = s
            .strip_prefix("gfx")
            .ok_or_else(|| err("is not a gfx target (expected a name like gfx90a or gfx1100)"))?;
        // The feature suffix rocminfo prints (`gfx90a:sramecc+:xnack-`) is not part of the target.
        let rest = rest.split(':').next().unwrap_or("");
        if rest.len() < 3 || rest.len() > 4 || !rest.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(err(
                "is not a gfx target (expected a name like gfx90a or gfx1100)",
            ));
        }
        let (major, tail) = rest.split_at(rest.len() - 2);
        if !major.bytes().all(|b| b.is_ascii_digit()) {
            return Err(err("is not a gfx target (the major part must be decimal)"));
        }
        let major: u8 = major
            .parse()
            .map_err(|_| err("is not a gfx target (major out of range)"))?;
        let minor = u8::from_str_radix(&tail[0..1], 16).map_err(|_| err("is not a gfx target"))?;
        let stepping =
            u8::from_str_radix(&tail[1..2], 16).map_err(|_| err("is not a gfx target"))?;
        if tail.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(err("is not a gfx target (write hex digits in lower case)"));
        }
        GfxTarget::new(major, minor, stepping).ok_or_else(|| err("is not a gfx target"))
    }
}

impl fmt::Display for GfxTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gfx{}{:x}{:x}", self.major, self.minor, self.stepping)
    }
}

impl Serialize for GfxTarget {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for GfxTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // A visitor, so the name is parsed where it lies in the input (no String for each of the matrices' targets).
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = GfxTarget;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a gfx target such as gfx90a or gfx1100")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<GfxTarget, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_str(Name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kfd_versions_decode_with_hex_minor_and_stepping() {
        let cases = [
            (90402, "gfx942"),
            (90010, "gfx90a"),
            (90012, "gfx90c"),
            (100300, "gfx1030"),
            (100302, "gfx1032"),
            (110000, "gfx1100"),
            (110003, "gfx1103"),
            (120001, "gfx1201"),
            (90006, "gfx906"),
            (80003, "gfx803"),
        ];
        for (v, name) in cases {
            let t = GfxTarget::from_kfd_version(v).unwrap().unwrap();
            assert_eq!(t.to_string(), name);
            assert_eq!(t.kfd_version(), v);
            assert_eq!(name.parse::<GfxTarget>().unwrap(), t);
        }
        assert_eq!(GfxTarget::from_kfd_version(0).unwrap(), None);
        assert!(GfxTarget::from_kfd_version(90016).is_err());
        assert!(GfxTarget::from_kfd_version(91600).is_err());
        assert!(GfxTarget::from_kfd_version(u64::MAX).is_err());
    }

    #[test]
    fn llvm_processors_parse_and_round_trip() {
        for name in LLVM_PROCESSORS {
            let t: GfxTarget = name.parse().unwrap();
            assert_eq!(t.to_string(), *name);
            assert!(t.is_llvm_processor());
            assert_eq!(
                GfxTarget::from_kfd_version(t.kfd_version()).unwrap(),
                Some(t)
            );
        }
        assert!(!"gfx1105".parse::<GfxTarget>().unwrap().is_llvm_processor());
    }

    #[test]
    fn names_refuse_garbage() {
        for bad in [
            "gfx", "gfx9", "gfxZZZ", "gpu1100", "gfx11000", "gfx90A", "", "gfx0000",
        ] {
            assert!(bad.parse::<GfxTarget>().is_err(), "{bad} accepted");
        }
        assert_eq!(
            "gfx90a:sramecc+:xnack-"
                .parse::<GfxTarget>()
                .unwrap()
                .to_string(),
            "gfx90a"
        );
    }

    #[test]
    fn override_values_round_trip() {
        assert_eq!(
            GfxTarget::from_override("10.3.0").unwrap().to_string(),
            "gfx1030"
        );
        assert_eq!(
            GfxTarget::from_override("9.0.10").unwrap().to_string(),
            "gfx90a"
        );
        assert_eq!(
            GfxTarget::from_override("gfx1100")
                .unwrap()
                .override_value(),
            "11.0.0"
        );
        for bad in [
            "10.3",
            "10.3.0.1",
            "a.b.c",
            "10.16.0",
            "",
            "10.3.0; rm -rf /",
        ] {
            assert!(GfxTarget::from_override(bad).is_err(), "{bad} accepted");
        }
    }

    /// Issue 13, found by the `version` fuzz target: an override with a major of 100 or more made a target whose
    /// name (`gfx10000`) does not parse back. Every accepted override now round-trips through its name.
    #[test]
    fn override_majors_past_99_are_refused() {
        for bad in ["100.0.0", "211.0.02", "0.0.0", "255.1.0"] {
            let e = GfxTarget::from_override(bad).unwrap_err();
            assert!(e.to_string().contains("major version outside 1..99"), "{e}");
        }
        let g = GfxTarget::from_override("99.15.15").unwrap();
        assert_eq!(g.to_string().parse::<GfxTarget>(), Ok(g));
    }
}
