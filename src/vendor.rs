//! Whose GPUs: the one vendor type of the crate (PCI ids, matrices, host facts, device mapping, `--vendor`).

use serde::{Deserialize, Serialize};

/// Whose GPUs, or none. Where only a GPU vendor makes sense (a GPU's PCI id, a matrix's GPU entry, a Kubernetes
/// device plugin) the reader of that input rejects [`Vendor::Cpu`]; see [`Vendor::is_gpu`].
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    /// AMD (PCI vendor 0x1002), ROCm.
    #[value(help = "AMD (ROCm): `/dev/kfd` and the render nodes")]
    Amd,
    /// NVIDIA (PCI vendor 0x10de), CUDA.
    #[value(help = "NVIDIA (CUDA): a device request to the nvidia runtime or CDI")]
    Nvidia,
    /// No GPU: the CPU stack.
    #[value(help = "No GPU")]
    Cpu,
}

impl Vendor {
    /// The GPU vendors, in the order a ROCm tool prefers them.
    pub const GPUS: [Vendor; 2] = [Vendor::Amd, Vendor::Nvidia];

    /// `amd`, `nvidia` or `cpu`, as `--vendor` and the JSON reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Vendor::Amd => "amd",
            Vendor::Nvidia => "nvidia",
            Vendor::Cpu => "cpu",
        }
    }

    /// `AMD`, `NVIDIA` or `CPU`, as a sentence names the vendor.
    pub fn label(self) -> &'static str {
        match self {
            Vendor::Amd => "AMD",
            Vendor::Nvidia => "NVIDIA",
            Vendor::Cpu => "CPU",
        }
    }

    /// True for a GPU vendor (not [`Vendor::Cpu`]).
    pub fn is_gpu(self) -> bool {
        self != Vendor::Cpu
    }

    /// Itself for a GPU vendor, `None` for the CPU.
    pub fn gpu(self) -> Option<Vendor> {
        self.is_gpu().then_some(self)
    }

    /// The PCI vendor id; `None` for the CPU.
    pub fn pci_id(self) -> Option<u16> {
        match self {
            Vendor::Amd => Some(0x1002),
            Vendor::Nvidia => Some(0x10de),
            Vendor::Cpu => None,
        }
    }

    /// From a PCI vendor id: only a GPU vendor.
    pub fn from_pci(id: u16) -> Option<Self> {
        match id {
            0x1002 => Some(Vendor::Amd),
            0x10de => Some(Vendor::Nvidia),
            _ => None,
        }
    }
}

impl std::fmt::Display for Vendor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_serde_and_clap() {
        for v in [Vendor::Amd, Vendor::Nvidia, Vendor::Cpu] {
            assert_eq!(
                serde_json::to_string(&v).unwrap(),
                format!("\"{}\"", v.name())
            );
            let clap = clap::ValueEnum::to_possible_value(&v).unwrap();
            assert_eq!(clap.get_name(), v.name());
            assert_eq!(
                v.pci_id().and_then(Vendor::from_pci),
                v.is_gpu().then_some(v)
            );
        }
    }
}
