//! GPU vendors, as the PCI bus names them.

use serde::{Deserialize, Serialize};

/// GPU vendor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// AMD (PCI vendor 0x1002).
    Amd,
    /// NVIDIA (PCI vendor 0x10de).
    Nvidia,
}

impl Vendor {
    /// The PCI vendor id.
    pub fn pci_id(self) -> u16 {
        match self {
            Vendor::Amd => 0x1002,
            Vendor::Nvidia => 0x10de,
        }
    }
    /// From a PCI vendor id.
    pub fn from_pci(id: u16) -> Option<Self> {
        match id {
            0x1002 => Some(Vendor::Amd),
            0x10de => Some(Vendor::Nvidia),
            _ => None,
        }
    }
}
