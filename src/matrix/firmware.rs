//! `firmware.yaml`: GPU firmware versions known to be bad, each with the vendor issue or advisory that says so.
//! Adding one is a YAML edit: doctor's `firmware.known-bad` compares every AMD GPU's loaded firmware with this list.

use crate::gfx::GfxTarget;
use serde::{Deserialize, Serialize};

/// The amdgpu firmware components an entry may name: the `fw_version/<name>_fw_version` files doctor reads
/// (the same list as `host::FIRMWARE_COMPONENTS`; a test keeps them equal).
pub const FIRMWARE_COMPONENTS: [&str; 6] = ["mes", "mes_kiq", "mec", "rlc", "sos", "smc"];

/// The field names of a known-bad entry, which `unconfirmed:` may name.
pub const KNOWN_BAD_FIELDS: &[&str] = &["component", "gfx", "versions", "problem", "fix"];

/// `firmware.yaml`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareFile {
    /// Format version of this file; 1.
    pub schema_version: u32,
    /// Firmware versions known to be bad.
    #[serde(default)]
    pub known_bad: Vec<KnownBadFirmware>,
}

/// Firmware versions of one component known to be bad on some GPUs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownBadFirmware {
    /// The component, as the sysfs file names it without `_fw_version` (`mes`).
    pub component: String,
    /// The gfx targets it is bad on (the firmware file is per IP version); empty means every AMD GPU.
    #[serde(default)]
    pub gfx: Vec<GfxTarget>,
    /// The bad versions as sysfs shows them, hex (`"0x00000083"`).
    pub versions: Vec<String>,
    /// What goes wrong, in one line.
    pub problem: String,
    /// What to do.
    pub fix: String,
    /// The vendor issue or advisory.
    #[serde(default)]
    pub source: Option<String>,
    /// Fields of this record the reference marks unconfirmed (`*`: all of it).
    #[serde(default)]
    pub unconfirmed: Vec<String>,
}

impl KnownBadFirmware {
    /// The versions as numbers; a version that is not hex (refused when the file loads) is left out.
    pub fn values(&self) -> Vec<u32> {
        self.versions
            .iter()
            .filter_map(|v| hex_version(v))
            .collect()
    }

    /// True when this entry is about GPUs of `gfx` (`None`: unknown, matched only by an entry for every GPU).
    pub fn applies_to(&self, gfx: Option<GfxTarget>) -> bool {
        self.gfx.is_empty() || gfx.is_some_and(|g| self.gfx.contains(&g))
    }
}

/// `0x00000083` → 0x83 (at most 8 hex digits after `0x`); anything else is `None`.
pub fn hex_version(s: &str) -> Option<u32> {
    let h = s.trim().strip_prefix("0x")?;
    if h.is_empty() || h.len() > 8 {
        return None;
    }
    u32::from_str_radix(h, 16).ok()
}
