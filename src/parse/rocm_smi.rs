//! `rocm-smi` output: `--json` (and `-a` text) key/value maps, the concise table, and `--showtopo`.

use crate::gfx::GfxTarget;
use serde::Serialize;
use std::collections::BTreeMap;

/// Largest GPU index accepted from text; beyond it a line is treated as garbage.
const MAX_GPUS: usize = 256;

/// Per-card key/value maps plus the `system` section.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmiCards {
    /// Cards sorted by index.
    pub cards: Vec<SmiCard>,
    /// The `system` section (`Driver version`, topology pairs) or top-level text lines.
    pub system: BTreeMap<String, String>,
}

/// One card's fields as rocm-smi names them (`VBIOS version`, `Card series`, …).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmiCard {
    /// The N of `cardN` / `GPU[N]`.
    pub index: u32,
    /// Every field, values trimmed.
    pub fields: BTreeMap<String, String>,
}

/// Why `rocm-smi --json` output could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RocmSmiError {
    /// No JSON object in the text.
    #[error("no JSON object in the rocm-smi output")]
    NoJson,
    /// The JSON did not parse.
    #[error("rocm-smi JSON is malformed: {0}")]
    BadJson(String),
}

/// A row of the concise `rocm-smi` table (legacy, 6.x and 7.x layouts).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmiRow {
    /// `Device`/`GPU` index.
    pub device: u32,
    /// KFD node (7.x `Node` column).
    pub node: Option<u32>,
    /// PCI device id (`0x74a1`) from `[Model : Revision]` or `IDs`.
    pub device_id: Option<String>,
    /// Product name from the second line of 6.x rows.
    pub name: Option<String>,
    /// Temperature in °C.
    pub temp_c: Option<f64>,
    /// Power draw in W.
    pub power_w: Option<f64>,
    /// Power cap in W.
    pub power_cap_w: Option<f64>,
    /// Shader clock in MHz.
    pub sclk_mhz: Option<u32>,
    /// Memory clock in MHz.
    pub mclk_mhz: Option<u32>,
    /// Fan speed in percent.
    pub fan_pct: Option<f64>,
    /// Memory partition (`NPS1`).
    pub mem_partition: Option<String>,
    /// Compute partition (`SPX`, `CPX`, …).
    pub compute_partition: Option<String>,
    /// VRAM use in percent.
    pub vram_pct: Option<f64>,
    /// GPU use in percent.
    pub gpu_pct: Option<f64>,
}

/// `--showtopo` (or JSON topology): link types and NUMA nodes per GPU.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SmiTopo {
    /// `link_types[i][j]`: "XGMI" or "PCIE"; `None` on the diagonal and where unknown.
    pub link_types: Vec<Vec<Option<String>>>,
    /// `weights[i][j]` from "Weight between two GPUs".
    pub weights: Vec<Vec<Option<u32>>>,
    /// `hops[i][j]` from "Hops between two GPUs".
    pub hops: Vec<Vec<Option<u32>>>,
    /// NUMA node per GPU (-1 where the platform has no NUMA affinity).
    pub numa_nodes: Vec<Option<i32>>,
    /// `WARNING:` lines rocm-smi printed.
    pub warnings: Vec<String>,
}

impl SmiCard {
    /// A field by its rocm-smi name, `None` for "N/A" and empty values.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty() && *v != "N/A")
    }

    /// Product name (`Card Series`, older `Card series`); hex ids that old versions print there are not names.
    pub fn product_name(&self) -> Option<&str> {
        ["Card Series", "Card series", "Device Name"]
            .iter()
            .find_map(|k| self.get(k))
            .filter(|v| !v.starts_with("0x"))
    }

    /// `GFX Version` (newer rocm-smi), e.g. gfx942.
    pub fn gfx_version(&self) -> Option<GfxTarget> {
        self.get("GFX Version")?.parse().ok()
    }

    /// `VBIOS version`.
    pub fn vbios(&self) -> Option<&str> {
        self.get("VBIOS version")
    }

    /// PCI device id, lower case: `Device ID` (ROCm ≥ 6) or `GPU ID` (older).
    pub fn device_id(&self) -> Option<String> {
        let v = self.get("Device ID").or_else(|| self.get("GPU ID"))?;
        let hex = v.strip_prefix("0x")?;
        (!hex.is_empty() && hex.len() <= 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .then(|| v.to_ascii_lowercase())
    }

    /// `VRAM Total Memory (B)` in bytes.
    pub fn vram_total_bytes(&self) -> Option<u64> {
        self.get("VRAM Total Memory (B)")?.parse().ok()
    }

    /// `PCI Bus`, e.g. `0000:26:00.0`.
    pub fn pci_bus(&self) -> Option<&str> {
        self.get("PCI Bus")
    }
}

impl SmiCards {
    /// The amdgpu driver version from the `system` section (`Driver version`).
    pub fn driver_version(&self) -> Option<&str> {
        self.system
            .get("Driver version")
            .map(|v| v.trim())
            .filter(|v| !v.is_empty() && *v != "N/A")
    }

    /// Topology from the JSON `system` pairs and per-card `(Topology) Numa Node`.
    pub fn topology(&self) -> SmiTopo {
        let n = self
            .cards
            .iter()
            .map(|c| c.index as usize + 1)
            .max()
            .unwrap_or(0)
            .min(MAX_GPUS);
        let mut t = SmiTopo {
            link_types: vec![vec![None; n]; n],
            weights: vec![vec![None; n]; n],
            hops: vec![vec![None; n]; n],
            numa_nodes: vec![None; n],
            warnings: Vec::new(),
        };
        for (k, v) in &self.system {
            let Some((kind, pair)) = k
                .strip_prefix("(Topology) ")
                .and_then(|r| r.split_once(" between DRM devices "))
            else {
                continue;
            };
            let Some((a, b)) = pair.split_once(" and ") else {
                continue;
            };
            let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) else {
                continue;
            };
            if a >= n || b >= n {
                continue;
            }
            let v = v.trim();
            match kind {
                "Link type" => {
                    t.link_types[a][b] = Some(v.to_string());
                    t.link_types[b][a] = Some(v.to_string());
                }
                "Weight" => {
                    t.weights[a][b] = v.parse().ok();
                    t.weights[b][a] = v.parse().ok();
                }
                "Hops" => {
                    t.hops[a][b] = v.parse().ok();
                    t.hops[b][a] = v.parse().ok();
                }
                _ => {}
            }
        }
        for c in &self.cards {
            if let Some(slot) = t.numa_nodes.get_mut(c.index as usize) {
                *slot = c.get("(Topology) Numa Node").and_then(|v| v.parse().ok());
            }
        }
        t
    }
}

/// Parses `rocm-smi … --json`; text before the first `{` (warnings) and after the object is ignored.
pub fn parse_rocm_smi_json(s: &str) -> Result<SmiCards, RocmSmiError> {
    let start = s.find('{').ok_or(RocmSmiError::NoJson)?;
    let value = serde_json::Deserializer::from_str(&s[start..])
        .into_iter::<serde_json::Value>()
        .next()
        .ok_or(RocmSmiError::NoJson)?
        .map_err(|e| RocmSmiError::BadJson(e.to_string()))?;
    let obj = value.as_object().ok_or(RocmSmiError::NoJson)?;
    let mut out = SmiCards::default();
    for (k, v) in obj {
        let Some(map) = v.as_object() else {
            continue;
        };
        let fields: BTreeMap<String, String> = map
            .iter()
            .map(|(fk, fv)| {
                let text = match fv {
                    serde_json::Value::String(s) => s.trim().to_string(),
                    other => other.to_string(),
                };
                (fk.trim().to_string(), text)
            })
            .collect();
        if k == "system" {
            out.system = fields;
        } else if let Some(index) = k.strip_prefix("card").and_then(|i| i.parse().ok()) {
            out.cards.push(SmiCard { index, fields });
        }
    }
    out.cards.sort_by_key(|c| c.index);
    Ok(out)
}

/// Parses `GPU[N] : key: value` text (`rocm-smi -a`, `--showmeminfo`, …) into the same maps.
pub fn parse_rocm_smi_text(s: &str) -> SmiCards {
    let mut cards: BTreeMap<u32, SmiCard> = BTreeMap::new();
    let mut system = BTreeMap::new();
    for line in s.lines() {
        let t = line.trim();
        if t.starts_with('=') || t.starts_with('-') || t.starts_with('#') || t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("GPU[") {
            let Some((idx, rest)) = rest.split_once(']') else {
                continue;
            };
            let Ok(index) = idx.parse::<u32>() else {
                continue;
            };
            if index as usize >= MAX_GPUS {
                continue;
            }
            let Some(kv) = rest.trim_start().strip_prefix(':') else {
                continue;
            };
            let Some((k, v)) = kv.split_once(':') else {
                continue;
            };
            let (k, v) = (k.trim(), v.trim());
            // Keep the first value: later sections repeat keys with other meanings (clock levels).
            if !k.is_empty() && !k.contains(',') {
                cards
                    .entry(index)
                    .or_insert_with(|| SmiCard {
                        index,
                        fields: BTreeMap::new(),
                    })
                    .fields
                    .entry(k.to_string())
                    .or_insert_with(|| v.to_string());
            }
        } else if let Some((k, v)) = t.split_once(':') {
            if k == "Driver version" {
                system.insert(k.to_string(), v.trim().to_string());
            }
        }
    }
    SmiCards {
        cards: cards.into_values().collect(),
        system,
    }
}

/// A number with a unit suffix: `35.0°C`, `28.0c`, `133.0W`, `900Mhz`, `65%`.
fn num_with<T: std::str::FromStr>(tok: &str, suffixes: &[&str]) -> Option<T> {
    let body = suffixes.iter().find_map(|s| tok.strip_suffix(s))?;
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return None;
    }
    body.parse().ok()
}

/// Parses the concise `rocm-smi` table (any of its layouts) into rows.
pub fn parse_rocm_smi_concise(s: &str) -> Vec<SmiRow> {
    let mut rows: Vec<SmiRow> = Vec::new();
    let mut has_node = false;
    let mut prev_row = false;
    for line in s.lines() {
        let toks: Vec<&str> = line.split_whitespace().collect();
        if toks.is_empty() {
            prev_row = false;
            continue;
        }
        if toks[0] == "Device" || toks[0] == "GPU" {
            has_node = toks.get(1) == Some(&"Node");
            prev_row = false;
            continue;
        }
        let indented = line.starts_with(char::is_whitespace);
        if indented {
            // 6.x prints the product name under each row.
            if prev_row {
                if let Some(r) = rows.last_mut() {
                    r.name = Some(toks.join(" "));
                }
            }
            prev_row = false;
            continue;
        }
        prev_row = false;
        let Some(device) = toks[0]
            .parse::<u32>()
            .ok()
            .filter(|d| (*d as usize) < MAX_GPUS && toks[0].len() <= 3)
        else {
            continue;
        };
        let pcts: Vec<&str> = toks.iter().copied().filter(|t| t.ends_with('%')).collect();
        let mhz: Vec<u32> = toks
            .iter()
            .filter_map(|t| num_with(t, &["Mhz", "MHz"]))
            .collect();
        if pcts.len() < 2 && mhz.is_empty() {
            continue;
        }
        let watts: Vec<f64> = toks.iter().filter_map(|t| num_with(t, &["W"])).collect();
        let watt_toks = toks.iter().filter(|t| t.ends_with('W')).count();
        let pct = |t: &str| num_with::<f64>(t, &["%"]);
        let mut r = SmiRow {
            device,
            node: if has_node {
                toks.get(1).and_then(|t| t.parse().ok())
            } else {
                None
            },
            device_id: toks.iter().find_map(|t| {
                let t = t.trim_start_matches('[').trim_end_matches(',');
                let hex = t.strip_prefix("0x")?;
                (!hex.is_empty() && hex.len() <= 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .then(|| t.to_ascii_lowercase())
            }),
            temp_c: toks.iter().find_map(|t| num_with(t, &["°C", "c", "C"])),
            sclk_mhz: mhz.first().copied(),
            mclk_mhz: mhz.get(1).copied(),
            mem_partition: toks
                .iter()
                .find(|t| t.starts_with("NPS"))
                .map(|t| t.trim_end_matches(',').to_string()),
            compute_partition: toks
                .iter()
                .map(|t| t.trim_end_matches(','))
                .find(|t| ["SPX", "DPX", "TPX", "QPX", "CPX"].contains(t))
                .map(str::to_string),
            vram_pct: pcts.len().checked_sub(2).and_then(|i| pct(pcts[i])),
            gpu_pct: pcts.last().and_then(|t| pct(t)),
            fan_pct: if pcts.len() >= 3 { pct(pcts[0]) } else { None },
            ..Default::default()
        };
        // Power comes before the cap; with one W column (cap "N/A") it is the power draw.
        if watt_toks >= 2 {
            r.power_w = num_with(
                toks.iter().find(|t| t.ends_with('W')).unwrap_or(&""),
                &["W"],
            );
            r.power_cap_w = num_with(
                toks.iter().rfind(|t| t.ends_with('W')).unwrap_or(&""),
                &["W"],
            );
        } else {
            r.power_w = watts.first().copied();
        }
        rows.push(r);
        prev_row = true;
    }
    rows
}

/// Parses `rocm-smi --showtopo` text.
pub fn parse_rocm_smi_topo(s: &str) -> SmiTopo {
    #[derive(PartialEq)]
    enum Sec {
        None,
        Weight,
        Hops,
        Link,
        Numa,
    }
    let mut t = SmiTopo::default();
    let mut sec = Sec::None;
    let mut raw: [BTreeMap<(usize, usize), String>; 3] = Default::default();
    let mut numa: BTreeMap<usize, i32> = BTreeMap::new();
    let mut n = 0usize;
    for line in s.lines() {
        let l = line.trim();
        if l.starts_with('=') {
            let title = l.trim_matches('=').trim().to_ascii_lowercase();
            sec = if title.starts_with("weight between") {
                Sec::Weight
            } else if title.starts_with("hops between") {
                Sec::Hops
            } else if title.starts_with("link type between") {
                Sec::Link
            } else if title.starts_with("numa nodes") {
                Sec::Numa
            } else {
                Sec::None
            };
            continue;
        }
        if l.starts_with("WARNING") {
            t.warnings.push(l.to_string());
            continue;
        }
        let slot = match sec {
            Sec::Weight => 0,
            Sec::Hops => 1,
            Sec::Link => 2,
            Sec::Numa => {
                // `GPU 0 : (Topology) Numa Node: 0` or `GPU[0] : (Topology) Numa Node: 0`.
                if let Some((head, val)) = l.split_once("(Topology) Numa Node:") {
                    let idx: String = head.chars().filter(char::is_ascii_digit).collect();
                    if let (Ok(i), Ok(v)) = (idx.parse::<usize>(), val.trim().parse::<i32>()) {
                        if i < MAX_GPUS {
                            numa.insert(i, v);
                            n = n.max(i + 1);
                        }
                    }
                }
                continue;
            }
            Sec::None => continue,
        };
        let toks: Vec<&str> = l.split_whitespace().collect();
        let Some(row) = toks
            .first()
            .and_then(|t| t.strip_prefix("GPU"))
            .and_then(|i| i.parse::<usize>().ok())
            .filter(|i| *i < MAX_GPUS)
        else {
            continue;
        };
        n = n.max(row + 1);
        for (col, v) in toks[1..].iter().enumerate().take(MAX_GPUS) {
            n = n.max(col + 1);
            raw[slot].insert((row, col), v.to_string());
        }
    }
    let cell = |slot: usize, i: usize, j: usize| raw[slot].get(&(i, j)).filter(|_| i != j);
    t.weights = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| cell(0, i, j).and_then(|v| v.parse().ok()))
                .collect()
        })
        .collect();
    t.hops = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| cell(1, i, j).and_then(|v| v.parse().ok()))
                .collect()
        })
        .collect();
    t.link_types = (0..n)
        .map(|i| (0..n).map(|j| cell(2, i, j).cloned()).collect())
        .collect();
    t.numa_nodes = (0..n).map(|i| numa.get(&i).copied()).collect();
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! capture {
        ($f:literal) => {
            include_str!(concat!("../../tests/fixtures/captures/", $f))
        };
    }

    #[test]
    fn json_captures() {
        // (text, cards, product name, device id, vbios, vram bytes, driver)
        let cases = [
            (
                capture!("rocm-smi_json_mi100_rocm571.txt"),
                6,
                Some("Arcturus GL-XL [Instinct MI100]"),
                "0x738c",
                "113-D3430400-037",
                34342961152,
                "6.2.4",
            ),
            (
                capture!("rocm-smi_json_mi100_rocm602.txt"),
                4,
                Some("Arcturus GL-XL [Instinct MI100]"),
                "0x738c",
                "113-D3431401-101",
                34342961152,
                "6.3.6",
            ),
            (
                capture!("rocm-smi_json_rx6700xt_rocm430.txt"),
                1,
                None,
                "0x73df",
                "113-67XA6SSB1-D01",
                12868124672,
                "6.3.6",
            ),
            (
                capture!("rocm-smi_json_rx6700xt_rocm571.txt"),
                1,
                Some("Navi 22 [Radeon RX 6700/6700 XT / 6800M]"),
                "0x73df",
                "113-67XA6SSB1-D01",
                12868124672,
                "6.3.6",
            ),
            (
                capture!("rocm-smi_json_rx6700xt_rocm602.txt"),
                1,
                Some("Navi 22 [Radeon RX 6700/6700 XT / 6800M]"),
                "0x73df",
                "113-67XA6SSB1-D01",
                12868124672,
                "6.3.6",
            ),
            (
                capture!("rocm-smi_json_vega-10-XT.txt"),
                1,
                None,
                "0x6861",
                "113-D0510100-106",
                17163091968,
                "5.9.25",
            ),
            (
                capture!("rocm-smi_json_vega-20-WKS-GL-XE.txt"),
                1,
                Some("Radeon Instinct MI50 32GB"),
                "0x66a1",
                "113-D1631700-111",
                34342961152,
                "5.9.17",
            ),
        ];
        for (text, n, name, dev, vbios, vram, drv) in cases {
            let c = parse_rocm_smi_json(text).unwrap();
            assert_eq!(c.cards.len(), n, "{vbios}");
            let card = &c.cards[0];
            assert_eq!(card.index, 0);
            assert_eq!(card.product_name(), name, "{vbios}");
            assert_eq!(card.device_id().as_deref(), Some(dev), "{vbios}");
            assert_eq!(card.vbios(), Some(vbios));
            assert_eq!(card.vram_total_bytes(), Some(vram), "{vbios}");
            assert_eq!(c.driver_version(), Some(drv));
            // None of these rocm-smi versions printed `GFX Version`.
            assert_eq!(card.gfx_version(), None);
        }
        let c = parse_rocm_smi_json(capture!("rocm-smi_json_mi100_rocm602.txt")).unwrap();
        assert_eq!(c.cards[3].pci_bus(), Some("0000:E3:00.0"));
        let topo = c.topology();
        assert_eq!(topo.link_types[0][1].as_deref(), Some("PCIE"));
        assert_eq!(topo.link_types[0][0], None);
        assert_eq!(topo.hops[2][3], Some(2));
        assert_eq!(topo.numa_nodes, vec![Some(1); 4]);
    }

    #[test]
    fn json_gfx_version_and_junk() {
        let c = parse_rocm_smi_json("WARNING: x\n{\"card1\": {\"GFX Version\": \"gfx942\", \"Card Series\": \"AMD Instinct MI300X\", \"Device ID\": \"0x74A1\"}, \"card0\": {}, \"cardX\": {}, \"other\": 5}").unwrap();
        assert_eq!(
            c.cards.iter().map(|c| c.index).collect::<Vec<_>>(),
            vec![0, 1]
        );
        assert_eq!(c.cards[1].gfx_version().unwrap().to_string(), "gfx942");
        assert_eq!(c.cards[1].product_name(), Some("AMD Instinct MI300X"));
        assert_eq!(c.cards[1].device_id().as_deref(), Some("0x74a1"));
        assert_eq!(c.cards[0].vram_total_bytes(), None);
        assert_eq!(parse_rocm_smi_json(""), Err(RocmSmiError::NoJson));
        assert_eq!(parse_rocm_smi_json("[1,2]"), Err(RocmSmiError::NoJson));
        assert!(matches!(
            parse_rocm_smi_json("{\"card0\": {"),
            Err(RocmSmiError::BadJson(_))
        ));
        assert!(parse_rocm_smi_json("\u{FFFD}{\0").is_err());
    }

    #[test]
    fn text_captures() {
        let a = parse_rocm_smi_text(capture!("rocm-smi_-a_mi300x_x4.txt"));
        assert_eq!(a.cards.len(), 4);
        assert_eq!(a.driver_version(), Some("6.7.0"));
        let c = &a.cards[0];
        assert_eq!(c.product_name(), Some("AMD Instinct MI300X OAM"));
        assert_eq!(c.device_id().as_deref(), Some("0x74a1"));
        assert_eq!(c.vbios(), Some("113-MI3SRIOV-001"));
        assert_eq!(c.pci_bus(), Some("0000:26:00.0"));
        assert_eq!(c.get("Compute Partition"), Some("SPX"));
        let m = parse_rocm_smi_text(capture!("rocm-smi_use_meminfo-vram_mi308x_x8_rocm7.2.txt"));
        assert_eq!(m.cards.len(), 8);
        assert!(m
            .cards
            .iter()
            .all(|c| c.vram_total_bytes() == Some(206141652992)));
        assert_eq!(m.cards[0].get("GPU use (%)"), Some("0"));
    }

    #[test]
    fn concise_new_formats() {
        let rows = parse_rocm_smi_concise(capture!("rocm-smi_concise_mi300x_x4.txt"));
        assert_eq!(rows.len(), 4);
        let r = &rows[0];
        assert_eq!(
            r,
            &SmiRow {
                device: 0,
                node: None,
                device_id: Some("0x74a1".into()),
                name: Some("AMD Instinct MI300X".into()),
                temp_c: Some(35.0),
                power_w: Some(133.0),
                power_cap_w: Some(750.0),
                sclk_mhz: Some(131),
                mclk_mhz: Some(900),
                fan_pct: Some(0.0),
                mem_partition: Some("NPS1".into()),
                compute_partition: Some("SPX".into()),
                vram_pct: Some(0.0),
                gpu_pct: Some(0.0),
            }
        );
        assert_eq!(rows[3].temp_c, Some(38.0));
        let rows = parse_rocm_smi_concise(capture!("rocm-smi_concise_mi308x_x8_rocm7.2.txt"));
        assert_eq!(rows.len(), 8);
        assert_eq!(
            rows.iter().map(|r| r.node).collect::<Vec<_>>(),
            (2..10).map(Some).collect::<Vec<_>>()
        );
        assert!(rows
            .iter()
            .all(|r| r.device_id.as_deref() == Some("0x74a2") && r.name.is_none()));
        assert_eq!(rows[7].sclk_mhz, Some(107));
        assert_eq!(rows[7].power_cap_w, Some(650.0));
        assert_eq!(rows[2].temp_c, Some(45.0));
    }

    #[test]
    fn concise_legacy_formats() {
        let rows = parse_rocm_smi_concise(capture!("rocm-smi_concise_legacy_mi210_x4_archer2.txt"));
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[2].temp_c, Some(33.0));
        assert_eq!(rows[3].power_w, Some(41.0));
        assert_eq!(rows[0].power_cap_w, Some(300.0));
        assert_eq!(
            (rows[0].sclk_mhz, rows[0].mclk_mhz),
            (Some(800), Some(1600))
        );
        assert_eq!((rows[0].vram_pct, rows[0].gpu_pct), (Some(0.0), Some(0.0)));
        assert_eq!(rows[0].device_id, None);
        let rows =
            parse_rocm_smi_concise(capture!("rocm-smi_legacy_renoir_vega6_rocm3.8_docker.txt"));
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.temp_c, r.power_w, r.power_cap_w),
            (Some(49.0), Some(29.0), None)
        );
        assert_eq!(
            (r.fan_pct, r.vram_pct, r.gpu_pct),
            (None, Some(65.0), Some(74.0))
        );
        assert_eq!((r.sclk_mhz, r.mclk_mhz), (Some(400), Some(1200)));
    }

    #[test]
    fn showtopo() {
        let t = parse_rocm_smi_topo(capture!("rocm-smi_showtopo_mi210_x4_xgmi_archer2.txt"));
        assert_eq!(t.link_types.len(), 4);
        for i in 0..4 {
            for j in 0..4 {
                let want = (i != j).then(|| "XGMI".to_string());
                assert_eq!(t.link_types[i][j], want);
                assert_eq!(t.weights[i][j], (i != j).then_some(15));
                assert_eq!(t.hops[i][j], (i != j).then_some(1));
            }
        }
        assert_eq!(t.numa_nodes, vec![Some(0), Some(1), Some(2), Some(3)]);
        assert!(t.warnings.is_empty());
        let t = parse_rocm_smi_topo(capture!("rocm-smi_showtopo_mi308x_x8_xgmi_rocm7.2.txt"));
        assert_eq!(t.link_types.len(), 8);
        assert!(
            t.link_types
                .iter()
                .flatten()
                .filter(|l| l.as_deref() == Some("XGMI"))
                .count()
                == 56
        );
        assert_eq!(t.numa_nodes, [0, 0, 0, 0, 1, 1, 1, 1].map(Some).to_vec());
        assert_eq!(t.warnings.len(), 1);
    }

    #[test]
    fn garbage() {
        for junk in [
            "",
            "\u{FFFD}\0",
            "0 1% 2%",
            "GPU99999999999 0 XGMI",
            "GPU[999999] : a: b",
            "====\nGPU0 x\n",
        ] {
            let _ = parse_rocm_smi_concise(junk);
            let _ = parse_rocm_smi_text(junk);
            let t = parse_rocm_smi_topo(junk);
            assert!(t.link_types.is_empty(), "{junk:?}");
        }
        let rows = parse_rocm_smi_concise("0  1%  2%\n5 \u{FFFD}W 9.9.9W 3Mhz\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].vram_pct, rows[0].gpu_pct, rows[0].temp_c),
            (Some(1.0), Some(2.0), None)
        );
        assert_eq!((rows[1].power_w, rows[1].sclk_mhz), (None, Some(3)));
        let t = parse_rocm_smi_topo("== Link Type between two GPUs ==\nGPU0 0 PCIE\nGPU1 PCIE\n== Numa Nodes ==\nGPU[1] : (Topology) Numa Node: -1\n");
        assert_eq!(
            t.link_types,
            vec![
                vec![None, Some("PCIE".into())],
                vec![Some("PCIE".into()), None]
            ]
        );
        assert_eq!(t.numa_nodes, vec![None, Some(-1)]);
    }
}
