//! KFD topology node `properties` files (`/sys/class/kfd/kfd/topology/nodes/N/properties`).

use crate::gfx::{GfxError, GfxTarget};
use serde::Serialize;
use std::collections::BTreeMap;

/// One KFD topology node: every `key value` line whose value is a decimal u64.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KfdNode {
    /// All parsable properties by name.
    pub props: BTreeMap<String, u64>,
}

/// Parses a `properties` file; lines that are not `name <decimal u64>` are skipped.
pub fn parse_kfd_properties(s: &str) -> KfdNode {
    let mut props = BTreeMap::new();
    for line in s.lines() {
        let mut it = line.split_whitespace();
        let (Some(key), Some(value), None) = (it.next(), it.next(), it.next()) else {
            continue;
        };
        if !key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            continue;
        }
        // Only plain decimal: `-1`, `+5`, hex and values above u64 are not KFD's format.
        if !value.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(v) = value.parse::<u64>() {
            props.insert(key.to_string(), v);
        }
    }
    KfdNode { props }
}

/// Formats a PCI address from a KFD domain and `location_id` (bus 15:8, device 7:3, function 2:0).
pub fn pci_bdf(domain: u64, location_id: u64) -> String {
    format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        domain,
        (location_id >> 8) & 0xff,
        (location_id >> 3) & 0x1f,
        location_id & 0x7
    )
}

impl KfdNode {
    /// A property by name.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.props.get(key).copied()
    }

    /// The gfx target from `gfx_target_version`; absent or 0 (CPU) is `Ok(None)`.
    pub fn gfx(&self) -> Result<Option<GfxTarget>, GfxError> {
        match self.get("gfx_target_version") {
            None => Ok(None),
            Some(v) => GfxTarget::from_kfd_version(v),
        }
    }

    /// PCI vendor id (4098 = 0x1002 for AMD).
    pub fn vendor_id(&self) -> Option<u64> {
        self.get("vendor_id")
    }

    /// PCI device id.
    pub fn device_id(&self) -> Option<u64> {
        self.get("device_id")
    }

    /// The `/dev/dri/renderD<128+n>` minor this node maps to.
    pub fn drm_render_minor(&self) -> Option<u64> {
        self.get("drm_render_minor")
    }

    /// PCI location (bus/device/function packed as KFD reports it).
    pub fn location_id(&self) -> Option<u64> {
        self.get("location_id")
    }

    /// The node's PCI address (`0000:63:00.0`); a missing `domain` (older kernels) counts as 0.
    pub fn bdf(&self) -> Option<String> {
        let loc = self.location_id()?;
        Some(pci_bdf(self.get("domain").unwrap_or(0), loc))
    }

    /// SIMD count; 0 on CPU nodes.
    pub fn simd_count(&self) -> Option<u64> {
        self.get("simd_count")
    }

    /// True for a CPU node: no SIMDs or a gfx target version of 0.
    pub fn is_cpu(&self) -> bool {
        self.simd_count() == Some(0) || self.get("gfx_target_version") == Some(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: &str =
        include_str!("../../tests/fixtures/captures/kfd_properties_node0_cpu_24core.txt");
    const GFX906: &str =
        include_str!("../../tests/fixtures/captures/kfd_properties_node1_gfx906_radeon-vii.txt");
    const GFX1032: &str =
        include_str!("../../tests/fixtures/captures/kfd_properties_node3_gfx1032_navi23.txt");
    const GFX942: &str =
        include_str!("../../tests/fixtures/captures/kfd_properties_node4_gfx942_mi300x.txt");

    #[test]
    fn cpu_node() {
        let n = parse_kfd_properties(CPU);
        assert!(n.is_cpu());
        assert_eq!(n.gfx().unwrap(), None);
        assert_eq!(n.get("cpu_cores_count"), Some(24));
        assert_eq!(n.simd_count(), Some(0));
        assert_eq!(n.props.len(), 30);
        // The `# source:` comment line is skipped, not read as a property.
        assert!(!n.props.keys().any(|k| k.starts_with('#')));
    }

    #[test]
    fn gpu_nodes() {
        // (text, gfx, device id, bdf, cu, num_xcc, unique id)
        let cases = [
            (
                GFX906,
                "gfx906",
                0x66af,
                "0000:63:00.0",
                60,
                1,
                985321441578344217,
            ),
            (GFX1032, "gfx1032", 0x73ef, "0000:43:00.0", 32, 1, 0),
            (
                GFX942,
                "gfx942",
                0x74a1,
                "0000:26:00.0",
                304,
                8,
                5593906200782126851,
            ),
        ];
        for (text, gfx, dev, bdf, cu, xcc, uid) in cases {
            let n = parse_kfd_properties(text);
            assert!(!n.is_cpu(), "{gfx}");
            assert_eq!(n.gfx().unwrap().unwrap().to_string(), gfx);
            assert_eq!(n.vendor_id(), Some(0x1002));
            assert_eq!(n.device_id(), Some(dev), "{gfx}");
            assert_eq!(n.bdf().as_deref(), Some(bdf), "{gfx}");
            let simd_per_cu = n.get("simd_per_cu").unwrap();
            assert_eq!(n.simd_count().map(|s| s / simd_per_cu), Some(cu), "{gfx}");
            assert_eq!(n.get("num_xcc"), Some(xcc), "{gfx}");
            assert_eq!(n.get("unique_id"), Some(uid), "{gfx}");
            assert_eq!(n.drm_render_minor(), Some(0));
            assert_eq!(n.get("local_mem_size"), Some(0));
        }
        assert_eq!(parse_kfd_properties(GFX942).simd_count(), Some(1216));
    }

    #[test]
    fn bdf_bits() {
        assert_eq!(pci_bdf(0, 0x8600), "0000:86:00.0");
        assert_eq!(pci_bdf(1, 0x86ff), "0001:86:1f.7");
        assert_eq!(pci_bdf(0, u64::MAX), "0000:ff:1f.7");
    }

    #[test]
    fn junk_lines() {
        let n = parse_kfd_properties(concat!(
            "simd_count 99999999999999999999999\n",
            "gfx_target_version -90402\n",
            "vendor_id\n",
            "device_id 0x74a1\n",
            "location_id 1 2\n",
            "\u{FFFD}\u{FFFD} 5\n",
            "num_xcc 8\n",
            "\0\u{1}\u{FFFD}",
        ));
        assert_eq!(n.props.len(), 1);
        assert_eq!(n.get("num_xcc"), Some(8));
        assert_eq!(n.gfx(), Ok(None));
        assert!(!n.is_cpu());
        assert_eq!(n.bdf(), None);
        assert_eq!(parse_kfd_properties(""), KfdNode::default());
        // A gfx_target_version that is no gfx target is an error, not a guess.
        assert!(parse_kfd_properties("gfx_target_version 91600")
            .gfx()
            .is_err());
    }
}
