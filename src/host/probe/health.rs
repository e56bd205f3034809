//! Error counters in sysfs: amdgpu's RAS files of each AMD GPU, and the PCIe AER statistics of every GPU and of the
//! bridges above it. Each file is read once: `ras/` is listed and only what it holds is read; the AER files and
//! `xgmi_error` are opened where they would be (a failed open costs less than listing a device's hundred entries).
//! What exists but cannot be read is named, never fatal.

use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::parse::ras;
use crate::vendor::Vendor;

/// The most of `gpu_vram_bad_pages` read: 28 bytes a page, so about 9,000 pages, past the driver's formula threshold
/// (VRAM / 100 MiB) of any GPU with less than 880 GiB of VRAM.
const BAD_PAGES_CAP: u64 = 256 << 10;

pub(super) fn probe_health(root: &HostRoot, f: &mut HostFacts) {
    if f.gpus.is_empty() {
        return;
    }
    f.uptime_seconds = root
        .read_value("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0);
    let threshold = if f.amd_gpus().next().is_some() {
        root.read_value(AMDGPU_BAD_PAGE_THRESHOLD)
            .ok()
            .and_then(|v| v.parse::<i64>().ok())
    } else {
        None
    };
    for g in f.gpus.iter_mut() {
        g.health.aer = probe_aer_chain(root, &g.pci_address);
        if g.vendor == Vendor::Amd {
            g.health.ras = probe_ras(root, &g.pci_address, threshold);
        }
    }
}

/// Text of a file that may not exist: `Ok(None)` when it does not, `Err("path: why")` when it cannot be read.
fn optional_text(root: &HostRoot, path: &str) -> Result<Option<String>, String> {
    match root.read_text(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.is_missing() => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn probe_ras(root: &HostRoot, bdf: &str, threshold: Option<i64>) -> Option<AmdRas> {
    let device = format!("/sys/bus/pci/devices/{bdf}");
    let dir = format!("{device}/ras");
    let mut r = AmdRas {
        bad_page_threshold_param: threshold,
        ..AmdRas::default()
    };
    match root.list(&dir) {
        Ok(names) => {
            r.dir = Some(dir.clone());
            read_ras_dir(root, &dir, &names, &mut r);
        }
        Err(e) if e.is_missing() => {}
        Err(e) => r.unreadable.push(e.to_string()),
    }
    // `xgmi_error` sits on the device, next to `ras/` (amdgpu_xgmi.c's sysfs files), on GPUs in an XGMI hive.
    match optional_text(root, &format!("{device}/xgmi_error")) {
        Ok(Some(t)) => match ras::parse_xgmi_error(&t) {
            Ok(n) => r.xgmi_error = Some(n),
            Err(why) => r.unreadable.push(format!("{device}/xgmi_error: {why}")),
        },
        Ok(None) => {}
        Err(e) => r.unreadable.push(e),
    }
    let found = r.dir.is_some() || r.xgmi_error.is_some() || !r.unreadable.is_empty();
    found.then_some(r)
}

/// The `*_err_count` files and `gpu_vram_bad_pages` among `names`, the entries of `dir`.
fn read_ras_dir(root: &HostRoot, dir: &str, names: &[String], r: &mut AmdRas) {
    for name in names {
        let Some(block) = name.strip_suffix("_err_count") else {
            continue;
        };
        let path = format!("{dir}/{name}");
        match optional_text(root, &path) {
            Ok(Some(t)) => match ras::parse_err_count(&t) {
                Ok(c) => r.blocks.push(RasBlock {
                    block: block.to_string(),
                    path,
                    ue: c.ue,
                    ce: c.ce,
                }),
                Err(why) => r.unreadable.push(format!("{path}: {why}")),
            },
            Ok(None) => {}
            Err(e) => r.unreadable.push(e),
        }
    }
    if names.iter().any(|n| n == "gpu_vram_bad_pages") {
        r.bad_pages = read_bad_pages(
            root,
            &format!("{dir}/gpu_vram_bad_pages"),
            &mut r.unreadable,
        );
    }
}

fn read_bad_pages(
    root: &HostRoot,
    path: &str,
    unreadable: &mut Vec<String>,
) -> Option<RasBadPages> {
    let head = match root.read_head(path, BAD_PAGES_CAP) {
        Ok(h) => h,
        Err(e) => {
            unreadable.push(e.to_string());
            return None;
        }
    };
    // Past the cap, only whole lines count: the counts are then a lower bound, which the check says.
    let text = if head.truncated {
        head.text.rsplit_once('\n').map_or("", |(whole, _)| whole)
    } else {
        head.text.as_str()
    };
    match ras::parse_bad_pages(text) {
        Ok(p) => Some(RasBadPages {
            path: path.to_string(),
            reserved: p.reserved,
            pending: p.pending,
            failed: p.failed,
            truncated: head.truncated,
        }),
        Err(why) => {
            unreadable.push(format!("{path}: {why}"));
            None
        }
    }
}

/// The GPU's AER counters, then those of each bridge above it (nearest first), from the PCI path its sysfs link
/// names. A device without AER files (AER off, or not PCIe) is left out.
fn probe_aer_chain(root: &HostRoot, bdf: &str) -> Vec<AerDevice> {
    let mut chain = vec![bdf.to_string()];
    // `/sys/bus/pci/devices/<BDF>` links to `../../../devices/pci0000:00/<root port>/…/<BDF>`; a tree that keeps it
    // as a directory shows no bridges.
    if let Ok(parts) = root.link_components(&format!("/sys/bus/pci/devices/{bdf}")) {
        let mut above: Vec<String> = parts
            .into_iter()
            .filter(|p| is_bdf(p) && p != bdf)
            .collect();
        above.reverse();
        chain.extend(above);
    }
    chain
        .iter()
        .enumerate()
        .filter_map(|(i, addr)| aer_device(root, addr, i == 0))
        .collect()
}

fn aer_device(root: &HostRoot, addr: &str, is_gpu: bool) -> Option<AerDevice> {
    let mut d = AerDevice {
        pci_address: addr.to_string(),
        is_gpu,
        fatal: None,
        nonfatal: None,
        correctable: None,
        unreadable: vec![],
    };
    let mut read = |kind: &str| -> Option<AerFile> {
        let path = format!("/sys/bus/pci/devices/{addr}/aer_dev_{kind}");
        match optional_text(root, &path) {
            Ok(Some(t)) => match ras::parse_aer(&t) {
                Ok(c) => Some(AerFile {
                    path,
                    total: c.total,
                    kinds: c.nonzero,
                }),
                Err(why) => {
                    d.unreadable.push(format!("{path}: {why}"));
                    None
                }
            },
            Ok(None) => None,
            Err(e) => {
                d.unreadable.push(e);
                None
            }
        }
    };
    let (fatal, nonfatal, correctable) = (read("fatal"), read("nonfatal"), read("correctable"));
    d.fatal = fatal;
    d.nonfatal = nonfatal;
    d.correctable = correctable;
    let any = d.fatal.is_some() || d.nonfatal.is_some() || d.correctable.is_some();
    (any || !d.unreadable.is_empty()).then_some(d)
}

/// `0000:03:00.0`: a PCI address as sysfs writes it.
fn is_bdf(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && hex(0..4)
        && hex(5..7)
        && hex(8..10)
        && b[11].is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdfs_are_told_from_other_path_parts() {
        assert!(is_bdf("0000:03:00.0"));
        assert!(is_bdf("0001:ab:1f.7"));
        assert!(!is_bdf("pci0000:00"));
        assert!(!is_bdf(".."));
        assert!(!is_bdf("0000:03:00"));
        assert!(!is_bdf("0000:03:00.x"));
    }
}
