//! `rocm-smi` output: `--json` (and `-a` text) key/value maps, the concise table, and `--showtopo`.

use serde::Serialize;

/// Largest GPU index accepted from text; beyond it a line is treated as garbage.
const MAX_GPUS: usize = 256;

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

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! capture {
        ($f:literal) => {
            include_str!(concat!("../../tests/fixtures/captures/", $f))
        };
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
    fn garbage() {
        for junk in [
            "",
            "\u{FFFD}\0",
            "0 1% 2%",
            "GPU99999999999 0 XGMI",
            "GPU[999999] : a: b",
            "====\nGPU0 x\n",
        ] {
            assert!(
                parse_rocm_smi_concise(junk)
                    .iter()
                    .all(|r| r.name.is_none()),
                "{junk:?}"
            );
        }
        let rows = parse_rocm_smi_concise("0  1%  2%\n5 \u{FFFD}W 9.9.9W 3Mhz\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].vram_pct, rows[0].gpu_pct, rows[0].temp_c),
            (Some(1.0), Some(2.0), None)
        );
        assert_eq!((rows[1].power_w, rows[1].sclk_mhz), (None, Some(3)));
    }
}
