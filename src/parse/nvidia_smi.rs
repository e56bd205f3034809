//! `nvidia-smi` output: the default table, `-q` text, `-q -x` XML, and its failure messages.

use crate::version::DriverVersion;
use serde::Serialize;

/// What the default `nvidia-smi` table says.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NvidiaSmiSummary {
    /// `Driver Version:` from the header.
    pub driver_version: Option<DriverVersion>,
    /// `CUDA Version:` from the header; `None` for "N/A" (vGPU hosts).
    pub cuda_version: Option<String>,
    /// One row per GPU.
    pub gpus: Vec<NvidiaSmiGpu>,
}

/// A GPU row of the default table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvidiaSmiGpu {
    /// GPU index as nvidia-smi numbers it.
    pub index: u32,
    /// Product name (may be cut short with `...` by nvidia-smi).
    pub name: String,
    /// PCI bus id, e.g. `00000000:18:00.0`.
    pub bus_id: Option<String>,
    /// Total memory in MiB from the `Memory-Usage` column.
    pub memory_total_mib: Option<u64>,
}

/// Per-GPU details from `nvidia-smi -q` or `nvidia-smi -q -x`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NvidiaGpuDetail {
    /// `Product Name`.
    pub product_name: Option<String>,
    /// PCI bus id, e.g. `00000000:18:00.0`.
    pub bus_id: Option<String>,
    /// PCI device id without the vendor half, e.g. `0x2330` (from `0x233010DE`).
    pub device_id: Option<String>,
    /// Driver version (printed once for all GPUs).
    pub driver_version: Option<DriverVersion>,
    /// CUDA version the driver supports; `None` for "N/A".
    pub cuda_version: Option<String>,
    /// Highest PCIe generation the link supports.
    pub pcie_gen_max: Option<u32>,
    /// Current PCIe generation (drops at idle on consumer cards).
    pub pcie_gen_current: Option<u32>,
    /// Highest PCIe link width (16 for `16x`).
    pub pcie_width_max: Option<u32>,
    /// Current PCIe link width.
    pub pcie_width_current: Option<u32>,
    /// Framebuffer memory total in MiB.
    pub memory_total_mib: Option<u64>,
}

/// Failures `nvidia-smi` reports instead of a table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum NvidiaSmiError {
    /// "Failed to initialize NVML: Driver/library version mismatch" (reboot or reload the module).
    DriverLibraryMismatch {
        /// `NVML library version:` printed by newer drivers, e.g. "570.124".
        nvml_version: Option<String>,
    },
    /// "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver".
    CannotCommunicate,
    /// The `nvidia-smi` binary is not installed.
    NotFound,
    /// Another failure line, verbatim.
    Other(String),
}

/// `None` for nvidia-smi's placeholders (`N/A`, `[N/A]`, `[Not Supported]`, redactions, empty).
fn real(v: &str) -> Option<&str> {
    let v = v.trim();
    (!v.is_empty() && !v.starts_with('[') && v != "N/A").then_some(v)
}

/// Leading decimal number of `16x`, `4`, `81559 MiB`.
fn leading<T: std::str::FromStr>(v: &str) -> Option<T> {
    let d: String = real(v)?.chars().take_while(char::is_ascii_digit).collect();
    d.parse().ok()
}

/// `0x233010DE` / `233010DE` → `0x2330`; `None` unless the low half is NVIDIA's vendor id.
fn device_id(v: &str) -> Option<String> {
    let v = real(v)?;
    let hex = v
        .strip_prefix("0x")
        .or_else(|| v.strip_prefix("0X"))
        .unwrap_or(v);
    if hex.len() != 8 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let hex = hex.to_ascii_lowercase();
    // Sanitised captures zero the id (`000000DE`); without the vendor half it is not an id.
    (hex[4..] == *"10de").then(|| format!("0x{}", &hex[..4]))
}

/// A CUDA version, or `None` for "N/A" and anything that is not `X.Y`.
fn cuda(v: &str) -> Option<String> {
    let v = real(v)?;
    (v.contains('.') && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')).then(|| v.to_string())
}

/// Parses the default `nvidia-smi` table; missing parts are `None` or empty.
pub fn parse_nvidia_smi(s: &str) -> NvidiaSmiSummary {
    let mut out = NvidiaSmiSummary::default();
    let mut prev_was_gpu = false;
    for line in s.lines() {
        if out.driver_version.is_none() {
            if let Some(v) = value_after(line, "Driver Version:") {
                out.driver_version = v.parse().ok();
            }
        }
        if out.cuda_version.is_none() {
            if let Some(v) = value_after(line, "CUDA Version:") {
                out.cuda_version = cuda(v);
            }
        }
        let cells: Vec<&str> = line.trim().split('|').collect();
        // A row is `| a | b | c |`: empty text before the first and after the last bar.
        if cells.len() < 4 || !cells[0].is_empty() {
            prev_was_gpu = false;
            continue;
        }
        if prev_was_gpu {
            // The line under a GPU row carries `used / total` memory in its second cell.
            prev_was_gpu = false;
            if let (Some(g), Some((_, total))) = (out.gpus.last_mut(), cells[2].split_once('/')) {
                if g.memory_total_mib.is_none() && total.trim().ends_with("MiB") {
                    g.memory_total_mib = leading(total);
                }
            }
            continue;
        }
        if let Some(g) = gpu_row(cells[1], cells[2]) {
            out.gpus.push(g);
            prev_was_gpu = true;
        }
    }
    out
}

/// The first whitespace-separated token after `label`.
fn value_after<'a>(line: &'a str, label: &str) -> Option<&'a str> {
    let at = line.find(label)?;
    line[at + label.len()..].split_whitespace().next()
}

/// A GPU row: `0  NVIDIA H100 80GB HBM3   On` and `00000000:18:00.0 Off`.
fn gpu_row(first: &str, second: &str) -> Option<NvidiaSmiGpu> {
    let first = first.trim();
    let (idx, rest) = first.split_once(char::is_whitespace)?;
    if idx.is_empty() || idx.len() > 4 || !idx.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let bus = second.split_whitespace().next()?;
    // The bus id (`00000000:18:00.0`) tells GPU rows from vGPU, MIG and process rows.
    let is_bus = bus.len() >= 12
        && bus.contains(':')
        && bus.contains('.')
        && bus
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.');
    if !is_bus {
        return None;
    }
    let mut name = rest.trim();
    for pm in [" On", " Off", " N/A"] {
        if let Some(n) = name.strip_suffix(pm) {
            name = n.trim_end();
            break;
        }
    }
    Some(NvidiaSmiGpu {
        index: idx.parse().ok()?,
        name: name.to_string(),
        bus_id: Some(bus.to_string()),
        memory_total_mib: None,
    })
}

/// Parses `nvidia-smi -q` text into one entry per `GPU <bus id>` block.
pub fn parse_nvidia_smi_q(s: &str) -> Vec<NvidiaGpuDetail> {
    let mut gpus: Vec<NvidiaGpuDetail> = Vec::new();
    let (mut driver, mut cuda_v) = (None, None);
    let mut stack: Vec<(usize, String)> = Vec::new();
    for line in s.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with("====") {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 && !t.contains(" : ") {
            if let Some(bus) = t.strip_prefix("GPU ") {
                stack.clear();
                gpus.push(NvidiaGpuDetail {
                    bus_id: real(bus).map(str::to_string),
                    ..Default::default()
                });
                continue;
            }
        }
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let Some((key, value)) = t.split_once(':') else {
            stack.push((indent, t.to_string()));
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let mut path: Vec<&str> = stack.iter().map(|(_, n)| n.as_str()).collect();
        path.push(key);
        let path = path.join("/");
        match (gpus.last_mut(), indent) {
            (None, _) | (Some(_), 0) => match key {
                "Driver Version" => driver = real(value).and_then(|v| v.parse().ok()),
                "CUDA Version" => cuda_v = cuda(value),
                _ => {}
            },
            (Some(g), _) => match path.as_str() {
                "Product Name" => g.product_name = real(value).map(str::to_string),
                "PCI/Bus Id" => {
                    if let Some(b) = real(value) {
                        g.bus_id = Some(b.to_string());
                    }
                }
                "PCI/Device Id" => g.device_id = device_id(value),
                "PCI/GPU Link Info/PCIe Generation/Max" => g.pcie_gen_max = leading(value),
                "PCI/GPU Link Info/PCIe Generation/Current" => g.pcie_gen_current = leading(value),
                "PCI/GPU Link Info/Link Width/Max" => g.pcie_width_max = leading(value),
                "PCI/GPU Link Info/Link Width/Current" => g.pcie_width_current = leading(value),
                "FB Memory Usage/Total" => g.memory_total_mib = leading(value),
                _ => {}
            },
        }
    }
    for g in &mut gpus {
        g.driver_version = driver.clone();
        g.cuda_version = cuda_v.clone();
    }
    gpus
}

/// Decodes the five predefined XML entities.
fn unescape_xml(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Parses `nvidia-smi -q -x` XML with a tolerant tag scanner (no DTD, no validation).
pub fn parse_nvidia_smi_xml(s: &str) -> Vec<NvidiaGpuDetail> {
    let mut gpus: Vec<NvidiaGpuDetail> = Vec::new();
    let (mut driver, mut cuda_v) = (None, None);
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = s;
    while let Some(open) = rest.find('<') {
        let text = rest[..open].trim();
        let Some(close) = rest[open..].find('>') else {
            break;
        };
        let tag = &rest[open + 1..open + close];
        rest = &rest[open + close + 1..];
        if !text.is_empty() {
            let value = unescape_xml(text);
            let path = stack.join("/");
            let in_gpu = stack.len() >= 2 && stack[1] == "gpu";
            if !in_gpu {
                match path.as_str() {
                    "nvidia_smi_log/driver_version" => {
                        driver = real(&value).and_then(|v| v.parse().ok())
                    }
                    "nvidia_smi_log/cuda_version" => cuda_v = cuda(&value),
                    _ => {}
                }
            } else if let Some(g) = gpus.last_mut() {
                match stack[2..].join("/").as_str() {
                    "product_name" => g.product_name = real(&value).map(str::to_string),
                    "pci/pci_bus_id" => {
                        if let Some(b) = real(&value) {
                            g.bus_id = Some(b.to_string());
                        }
                    }
                    "pci/pci_device_id" => g.device_id = device_id(&value),
                    "pci/pci_gpu_link_info/pcie_gen/max_link_gen" => {
                        g.pcie_gen_max = leading(&value)
                    }
                    "pci/pci_gpu_link_info/pcie_gen/current_link_gen" => {
                        g.pcie_gen_current = leading(&value)
                    }
                    "pci/pci_gpu_link_info/link_widths/max_link_width" => {
                        g.pcie_width_max = leading(&value)
                    }
                    "pci/pci_gpu_link_info/link_widths/current_link_width" => {
                        g.pcie_width_current = leading(&value)
                    }
                    "fb_memory_usage/total" => g.memory_total_mib = leading(&value),
                    _ => {}
                }
            }
        }
        if tag.starts_with('?') || tag.starts_with('!') || tag.ends_with('/') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            // Tolerate mismatched closers: pop back to the matching opener if there is one.
            let name = name.trim();
            if let Some(pos) = stack.iter().rposition(|n| *n == name) {
                stack.truncate(pos);
            }
            continue;
        }
        let name = tag.split_whitespace().next().unwrap_or("");
        if name.is_empty() || stack.len() > 64 {
            continue;
        }
        stack.push(name);
        if stack.len() == 2 && name == "gpu" && stack[0] == "nvidia_smi_log" {
            // The `id` attribute is the bus id; `pci_bus_id` below replaces it when present.
            let id = tag
                .split_once("id=\"")
                .and_then(|(_, r)| r.split_once('"'))
                .map(|(v, _)| v.to_string());
            gpus.push(NvidiaGpuDetail {
                bus_id: id,
                ..Default::default()
            });
        }
    }
    for g in &mut gpus {
        g.driver_version = driver.clone();
        g.cuda_version = cuda_v.clone();
    }
    gpus
}

/// Recognises a failure message in `nvidia-smi` output (stdout and stderr together).
pub fn nvidia_smi_error(s: &str) -> Option<NvidiaSmiError> {
    if s.contains("Driver/library version mismatch") {
        let nvml_version = s
            .lines()
            .find_map(|l| l.trim().strip_prefix("NVML library version:"))
            .and_then(real)
            .map(str::to_string);
        return Some(NvidiaSmiError::DriverLibraryMismatch { nvml_version });
    }
    if s.contains("couldn't communicate with the NVIDIA driver") {
        return Some(NvidiaSmiError::CannotCommunicate);
    }
    if s.contains("nvidia-smi: command not found") || s.contains("nvidia-smi: not found") {
        return Some(NvidiaSmiError::NotFound);
    }
    s.lines()
        .map(str::trim)
        .find(|l| {
            l.starts_with("Failed to initialize NVML") || l.starts_with("No devices were found")
        })
        .map(|l| NvidiaSmiError::Other(l.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! capture {
        ($f:literal) => {
            include_str!(concat!("../../tests/fixtures/captures/", $f))
        };
    }

    fn dv(s: &str) -> Option<DriverVersion> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn default_tables() {
        let h = parse_nvidia_smi(capture!("nvidia-smi_h100sxm_x8.txt"));
        assert_eq!(h.driver_version, dv("565.57.01"));
        assert_eq!(h.cuda_version.as_deref(), Some("12.7"));
        assert_eq!(h.gpus.len(), 8);
        assert!(h.gpus.iter().all(|g| g.name == "NVIDIA H100 80GB HBM3"));
        assert!(h.gpus.iter().all(|g| g.memory_total_mib == Some(81559)));
        assert_eq!(h.gpus[7].index, 7);
        assert_eq!(h.gpus[7].bus_id.as_deref(), Some("00000000:DB:00.0"));

        let r = parse_nvidia_smi(capture!("nvidia-smi_rtx4090_x8.txt"));
        assert_eq!(r.driver_version, dv("550.127.05"));
        assert_eq!(r.cuda_version.as_deref(), Some("12.4"));
        assert_eq!(r.gpus.len(), 8);
        assert_eq!(r.gpus[0].name, "NVIDIA GeForce RTX 4090");
        assert_eq!(r.gpus[1].bus_id.as_deref(), Some("00000000:25:00.0"));
        assert_eq!(r.gpus[0].memory_total_mib, Some(24564));

        let a = parse_nvidia_smi(capture!("nvidia-smi_a100sxm_x4.txt"));
        assert_eq!(a.driver_version, dv("555.42.02"));
        assert_eq!(a.cuda_version.as_deref(), Some("12.5"));
        assert_eq!(a.gpus.len(), 4);
        assert_eq!(a.gpus[0].name, "NVIDIA A100-SXM4-80GB");
        assert_eq!(a.gpus[0].memory_total_mib, Some(81920));
    }

    #[test]
    fn older_table_layout() {
        // nvidia-smi 470 layout: narrower columns, persistence mode before the bar.
        let s = concat!(
            "+-----------------------------------------------------------------------------+\n",
            "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n",
            "|-------------------------------+----------------------+----------------------+\n",
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n",
            "|===============================+======================+======================|\n",
            "|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |\n",
            "| N/A   34C    P8     9W /  70W |      0MiB / 15109MiB |      0%      Default |\n",
            "+-------------------------------+----------------------+----------------------+\n",
        );
        let p = parse_nvidia_smi(s);
        assert_eq!(p.driver_version, dv("470.82.01"));
        assert_eq!(p.cuda_version.as_deref(), Some("11.4"));
        assert_eq!(p.gpus.len(), 1);
        assert_eq!(p.gpus[0].name, "Tesla T4");
        assert_eq!(p.gpus[0].bus_id.as_deref(), Some("00000000:00:04.0"));
        assert_eq!(p.gpus[0].memory_total_mib, Some(15109));
    }

    #[test]
    fn vgpu_hosts() {
        let p = parse_nvidia_smi(capture!("nvidia-smi_proxmox-vgpu-host_cmp40hx_cuda-na.txt"));
        assert_eq!(p.driver_version, dv("550.54.10"));
        assert_eq!(p.cuda_version, None);
        assert_eq!(p.gpus.len(), 1);
        assert_eq!(p.gpus[0].name, "NVIDIA CMP 40HX");
        assert_eq!(p.gpus[0].memory_total_mib, Some(8192));
        // `nvidia-smi vgpu`: the vGPU line below the GPU row is not a GPU.
        let v = parse_nvidia_smi(capture!("nvidia-smi_vgpu_proxmox-host_cmp40hx.txt"));
        assert_eq!(v.driver_version, dv("550.54.14"));
        assert_eq!(v.cuda_version, None);
        assert_eq!(v.gpus.len(), 1);
        assert_eq!(v.gpus[0].name, "NVIDIA CMP 40HX");
        assert_eq!(v.gpus[0].bus_id.as_deref(), Some("00000000:01:00.0"));
        assert_eq!(v.gpus[0].memory_total_mib, None);
    }

    #[test]
    fn q_text() {
        // (text, gpus, name, device id, driver, cuda, gen max/cur, width max/cur, MiB)
        let cases = [
            (
                capture!("nvidia-smi_-q_h100sxm_x8.txt"),
                8,
                "NVIDIA H100 80GB HBM3",
                "0x2330",
                "565.57.01",
                "12.7",
                (5, 5),
                (16, 16),
                81559,
                "00000000:18:00.0",
            ),
            (
                capture!("nvidia-smi_-q_rtx4090_x8.txt"),
                8,
                "NVIDIA GeForce RTX 4090",
                "0x2684",
                "550.127.05",
                "12.4",
                (4, 1),
                (16, 16),
                24564,
                "00000000:01:00.0",
            ),
            (
                capture!("nvidia-smi_-q_a100sxm_x4.txt"),
                4,
                "NVIDIA A100-SXM4-80GB",
                "0x20b2",
                "555.42.02",
                "12.5",
                (4, 4),
                (16, 16),
                81920,
                "00000000:68:00.0",
            ),
        ];
        for (text, n, name, dev, drv, cu, gen, width, mib, bus) in cases {
            let gpus = parse_nvidia_smi_q(text);
            assert_eq!(gpus.len(), n, "{name}");
            let g = &gpus[0];
            assert_eq!(g.product_name.as_deref(), Some(name));
            assert_eq!(g.device_id.as_deref(), Some(dev), "{name}");
            assert_eq!(g.driver_version, dv(drv));
            assert_eq!(g.cuda_version.as_deref(), Some(cu));
            assert_eq!(
                (g.pcie_gen_max, g.pcie_gen_current),
                (Some(gen.0), Some(gen.1)),
                "{name}"
            );
            assert_eq!(
                (g.pcie_width_max, g.pcie_width_current),
                (Some(width.0), Some(width.1)),
                "{name}"
            );
            assert_eq!(g.memory_total_mib, Some(mib), "{name}");
            assert_eq!(g.bus_id.as_deref(), Some(bus));
            assert!(gpus
                .iter()
                .all(|x| x.product_name == g.product_name && x.driver_version == g.driver_version));
        }
    }

    #[test]
    fn q_xml() {
        // (text, gpus, name, device id, driver, cuda, gen max/cur, width max/cur, MiB)
        let cases = [
            (
                capture!("nvidia-smi_-q-x_a100-sxm4-v12.txt"),
                1,
                "NVIDIA A100-SXM4-80GB",
                Some("0x20b2"),
                Some("535.54.03"),
                Some("12.2"),
                (Some(4), Some(4)),
                (Some(16), Some(16)),
                81920,
            ),
            (
                capture!("nvidia-smi_-q-x_tesla-t4.txt"),
                1,
                "Tesla T4",
                Some("0x1eb8"),
                Some("515.105.01"),
                Some("11.7"),
                (Some(3), Some(3)),
                (Some(16), Some(8)),
                15360,
            ),
            (
                capture!("nvidia-smi_-q-x_a10g.txt"),
                1,
                "NVIDIA A10G",
                None,
                Some("515.105.01"),
                Some("11.7"),
                (Some(4), Some(1)),
                (Some(16), Some(8)),
                23028,
            ),
            (
                capture!("nvidia-smi_-q-x_rtx-3090-v12.txt"),
                1,
                "NVIDIA GeForce RTX 3090",
                None,
                Some("525.147.05"),
                Some("12.0"),
                (Some(4), Some(1)),
                (Some(16), Some(16)),
                24576,
            ),
            (
                capture!("nvidia-smi_-q-x_rtx-4000-sff-ada-v13.txt"),
                1,
                "NVIDIA RTX 4000 SFF Ada Generation",
                Some("0x27b0"),
                Some("595.84"),
                Some("13.2"),
                (Some(4), Some(1)),
                (Some(16), Some(16)),
                20475,
            ),
            (
                capture!("nvidia-smi_-q-x_dual_a5000-v13.txt"),
                2,
                "NVIDIA RTX A5000",
                Some("0x2231"),
                Some("590.44.01"),
                Some("13.1"),
                (Some(4), Some(1)),
                (Some(16), Some(16)),
                24564,
            ),
            (
                capture!("nvidia-smi_-q-x_gtx-1070-ti.txt"),
                1,
                "GeForce GTX 1070 Ti",
                None,
                None,
                None,
                (None, Some(1)),
                (None, Some(16)),
                4096,
            ),
        ];
        for (text, n, name, dev, drv, cu, gen, width, mib) in cases {
            let gpus = parse_nvidia_smi_xml(text);
            assert_eq!(gpus.len(), n, "{name}");
            let g = &gpus[0];
            assert_eq!(g.product_name.as_deref(), Some(name));
            assert_eq!(g.device_id.as_deref(), dev, "{name}");
            assert_eq!(g.driver_version, drv.and_then(dv), "{name}");
            assert_eq!(g.cuda_version.as_deref(), cu, "{name}");
            assert_eq!((g.pcie_gen_max, g.pcie_gen_current), gen, "{name}");
            assert_eq!((g.pcie_width_max, g.pcie_width_current), width, "{name}");
            assert_eq!(g.memory_total_mib, Some(mib), "{name}");
            assert!(g.bus_id.is_some(), "{name}");
        }
        let dual = parse_nvidia_smi_xml(capture!("nvidia-smi_-q-x_dual_a5000-v13.txt"));
        assert_eq!(dual[1].bus_id.as_deref(), Some("00000000:C1:00.0"));
        let gtx = parse_nvidia_smi_xml(capture!("nvidia-smi_-q-x_gtx-1070-ti.txt"));
        assert_eq!(gtx[0].bus_id.as_deref(), Some("00000000:01:00.0"));
    }

    #[test]
    fn error_captures() {
        assert_eq!(
            nvidia_smi_error(capture!(
                "nvidia-smi_err_driver-library-mismatch_with-nvml-version_ubuntu22.04.txt"
            )),
            Some(NvidiaSmiError::DriverLibraryMismatch {
                nvml_version: Some("570.124".into())
            })
        );
        assert_eq!(
            nvidia_smi_error(capture!(
                "nvidia-smi_err_driver-library-mismatch_legacy_ubuntu20.04.txt"
            )),
            Some(NvidiaSmiError::DriverLibraryMismatch { nvml_version: None })
        );
        assert_eq!(
            nvidia_smi_error(capture!(
                "nvidia-smi_err_couldnt-communicate-with-driver_gcp-debian11.txt"
            )),
            Some(NvidiaSmiError::CannotCommunicate)
        );
        assert_eq!(
            nvidia_smi_error("bash: nvidia-smi: command not found"),
            Some(NvidiaSmiError::NotFound)
        );
        assert_eq!(
            nvidia_smi_error("Failed to initialize NVML: Unknown Error"),
            Some(NvidiaSmiError::Other(
                "Failed to initialize NVML: Unknown Error".into()
            ))
        );
        assert_eq!(
            nvidia_smi_error(capture!("nvidia-smi_h100sxm_x8.txt")),
            None
        );
        let e = parse_nvidia_smi(capture!(
            "nvidia-smi_err_couldnt-communicate-with-driver_gcp-debian11.txt"
        ));
        assert_eq!(e, NvidiaSmiSummary::default());
    }

    #[test]
    fn garbage() {
        for junk in [
            "",
            "\u{FFFD}\0|||\u{FFFD}",
            "<<<>>>",
            "<a><b>x</c>",
            "GPU \nPCI\n    Device Id : 0xZZ",
            "| 99999999999 x | 0000:00:00.0:0.0 | |",
        ] {
            assert_eq!(parse_nvidia_smi(junk).gpus.len(), 0, "{junk:?}");
            let _ = parse_nvidia_smi_q(junk);
            let _ = parse_nvidia_smi_xml(junk);
            assert_eq!(nvidia_smi_error(junk), None);
        }
        let s = "| NVIDIA-SMI 1.2  Driver Version: 99999999999.1  CUDA Version: 12.x |";
        let p = parse_nvidia_smi(s);
        assert_eq!((p.driver_version, p.cuda_version), (None, None));
        let x = parse_nvidia_smi_xml("<nvidia_smi_log><gpu id=\"x\"><product_name>A &amp; B</product_name><fb_memory_usage><total>99999999999999999999999 MiB");
        assert_eq!(x[0].product_name.as_deref(), Some("A & B"));
        assert_eq!(x[0].memory_total_mib, None);
        assert_eq!(device_id("0x233010DE").as_deref(), Some("0x2330"));
        assert_eq!(device_id("0x2330"), None);
    }
}
