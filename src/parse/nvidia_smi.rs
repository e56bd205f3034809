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
            assert_eq!(nvidia_smi_error(junk), None);
        }
        let s = "| NVIDIA-SMI 1.2  Driver Version: 99999999999.1  CUDA Version: 12.x |";
        let p = parse_nvidia_smi(s);
        assert_eq!((p.driver_version, p.cuda_version), (None, None));
    }
}
