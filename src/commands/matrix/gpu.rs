//! `rocmenv matrix gpu NAME|PCI-ID`: the GPU models gpus.yaml lists under that name or device id, and for an AMD
//! model how its gfx target runs on each ROCm release (the `matrix gfx` answer).

use crate::error::Error;
use crate::matrix::{GpuModel, Matrices, MatrixQuery};
use crate::ops::Ctx;
use crate::vendor::Vendor;
use std::io::Write;

/// How a query names a GPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuQuery {
    /// A PCI device id, normalised to `0x744c` (a `1002:` or `10de:` vendor prefix picks the vendor).
    PciId(Option<Vendor>, String),
    /// Part of a marketing name, compared without case or spaces.
    Name(String),
}

/// Reads the query: `0x744c`, `744c` and `1002:744c` are device ids; anything else is a name.
pub fn parse_query(q: &str) -> Result<GpuQuery, Error> {
    let q = q.trim();
    let hex4 = |s: &str| s.len() == 4 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let (vendor, id) = match q.split_once(':') {
        Some((v, id)) if hex4(v) => {
            let vendor = match v.to_ascii_lowercase().as_str() {
                "1002" => Vendor::Amd,
                "10de" => Vendor::Nvidia,
                _ => {
                    return Err(Error::usage(
                        "matrix gpu",
                        format!("`{q}`: PCI vendor {v} is neither AMD (1002) nor NVIDIA (10de)"),
                    ))
                }
            };
            (Some(vendor), id)
        }
        _ => (None, q),
    };
    let bare = id
        .strip_prefix("0x")
        .or_else(|| id.strip_prefix("0X"))
        .unwrap_or(id);
    if hex4(bare) && (vendor.is_some() || id.len() == 6 || bare.bytes().any(|b| b.is_ascii_digit()))
    {
        return Ok(GpuQuery::PciId(
            vendor,
            format!("0x{}", bare.to_ascii_lowercase()),
        ));
    }
    if q.is_empty() {
        return Err(Error::usage(
            "matrix gpu",
            "give a GPU name (MI300X) or PCI device id (0x744c)",
        ));
    }
    Ok(GpuQuery::Name(squash(q)))
}

/// Lower case without spaces or dashes: `RX 7900XTX` finds `Radeon RX 7900 XTX`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The models the query names, in gpus.yaml order.
pub fn find<'m>(m: &'m Matrices, q: &GpuQuery) -> Vec<&'m GpuModel> {
    m.gpus
        .gpus
        .iter()
        .filter(|g| match q {
            GpuQuery::PciId(v, id) => {
                v.is_none_or(|v| v == g.vendor) && g.pci_ids.iter().any(|p| p == id)
            }
            GpuQuery::Name(n) => squash(&g.name).contains(n.as_str()),
        })
        .collect()
}

/// The models `raw` names: as a device id first; a bare four-digit `7900` that is no id is then read as a name.
pub fn lookup<'m>(m: &'m Matrices, raw: &str) -> Result<Vec<&'m GpuModel>, Error> {
    let q = parse_query(raw)?;
    let found = find(m, &q);
    let bare = !raw.trim().to_ascii_lowercase().starts_with("0x");
    if found.is_empty() && bare && matches!(q, GpuQuery::PciId(None, _)) {
        return Ok(find(m, &GpuQuery::Name(squash(raw))));
    }
    Ok(found)
}

/// Runs `rocmenv matrix gpu`.
pub fn exec(query: &str, json: bool, ctx: &Ctx, out: &mut dyn Write) -> Result<i32, Error> {
    parse_query(query)?;
    let m = ctx.matrices()?;
    let found = lookup(m, query)?;
    if found.is_empty() {
        return Err(Error::usage(
            "matrix gpu",
            format!(
                "`{query}` names no GPU in the matrices; they list {} models: `rocmenv matrix check` counts them, gpus.yaml names them (a name part such as MI300 or 7900, or an id such as 0x744c)",
                m.gpus.gpus.len()
            ),
        ));
    }
    if json {
        let doc = serde_json::json!({
            "schema_version": 1,
            "matrices": m.origin,
            "query": "gpu",
            "gpu": found,
        });
        let res = serde_json::to_string_pretty(&doc)
            .map_err(std::io::Error::other)
            .and_then(|d| writeln!(out, "{d}"));
        crate::commands::written(res)?;
        return Ok(crate::error::EXIT_OK);
    }
    crate::commands::written(write_text(m, &found, out))?;
    Ok(crate::error::EXIT_OK)
}

fn write_text(m: &Matrices, found: &[&GpuModel], out: &mut dyn Write) -> std::io::Result<()> {
    for (n, g) in found.iter().enumerate() {
        if n > 0 {
            writeln!(out)?;
        }
        let vendor = g.vendor.label();
        writeln!(
            out,
            "{} ({vendor}, PCI id {})",
            g.name,
            g.pci_ids.join(", ")
        )?;
        if let Some(t) = &g.gfx {
            writeln!(out, "  gfx target:   {t}")?;
        }
        if let Some(cc) = &g.compute_capability {
            writeln!(out, "  compute capability: {cc}")?;
        }
        if let Some(a) = &g.arch {
            writeln!(out, "  architecture: {a}")?;
        }
        match g.vram_gib {
            Some(v) if v > 0.0 => writeln!(out, "  VRAM:         {v} GiB")?,
            Some(_) => writeln!(out, "  VRAM:         shares system memory")?,
            None => {}
        }
        if let Some(p) = &g.peaks {
            let figs: Vec<String> = [
                (p.fp32_tflops, "FP32 TFLOP/s"),
                (p.fp16_tflops, "FP16 TFLOP/s"),
                (p.bf16_tflops, "BF16 TFLOP/s"),
                (p.mem_bw_gbs, "GB/s"),
            ]
            .into_iter()
            .filter_map(|(v, u)| v.map(|v| format!("{v} {u}")))
            .collect();
            if !figs.is_empty() {
                writeln!(out, "  peaks:        {}", figs.join(", "))?;
            }
        }
        if let Some(s) = &g.provenance.source {
            writeln!(out, "  source:       {s}")?;
        }
        // One gfx table is enough when several matches share the target.
        let first_with_target = found
            .iter()
            .position(|x| x.gfx == g.gfx)
            .is_some_and(|i| i == n);
        if let (Some(t), true) = (g.gfx, first_with_target) {
            if let Ok(a) = m.answer(&MatrixQuery::Gfx(t)) {
                writeln!(out)?;
                crate::report::render_matrix(&a, &m.origin, out)?;
            }
        }
        if g.vendor == Vendor::Nvidia {
            writeln!(
                out,
                "  CUDA: every current release runs compute capability {}; `rocmenv matrix cuda X.Y` gives a release's driver floor",
                g.compute_capability.as_deref().unwrap_or("?")
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25: `rocmenv matrix gpu "MI300X"` was an unrecognised subcommand. A name part, an id with or without
    /// `0x`, and a vendor-prefixed id each find the model.
    #[test]
    fn a_gpu_is_found_by_name_or_pci_id() {
        let m = Matrices::load(None).unwrap();
        let names = |q: &str| -> Vec<String> {
            lookup(&m, q)
                .unwrap()
                .iter()
                .map(|g| g.name.clone())
                .collect()
        };
        assert!(
            names("mi300x").iter().any(|n| n.contains("MI300X")),
            "{:?}",
            names("mi300x")
        );
        let xtx = names("RX 7900XTX");
        assert!(xtx.iter().any(|n| n.contains("7900 XTX")), "{xtx:?}");
        assert_eq!(names("0x744c"), names("744c"));
        assert_eq!(names("1002:744C"), names("744c"));
        assert!(names("744c").iter().any(|n| n.contains("7900 XTX")));
        assert!(names("10de:744c").is_empty());
        assert!(names("nosuchgpu").is_empty());
        assert!(
            names("7900").iter().any(|n| n.contains("7900 XTX")),
            "a bare number that is no id is a name"
        );
        assert!(parse_query("abcd:744c").is_err());
    }
}
