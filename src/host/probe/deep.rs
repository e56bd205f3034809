//! `--deep`: what rocminfo, rocm-smi and nvidia-smi say (run, or read from the tree's recording).

use crate::gfx::GfxTarget;
use crate::host::facts::*;
use crate::host::session::{Session, ToolRun};
use crate::parse;
use crate::vendor::Vendor;

pub(super) fn probe_tools_output(session: &dyn Session, f: &mut HostFacts) {
    let path_of = |f: &HostFacts, t: &str| f.tools.get(t).cloned().flatten();
    let rocminfo_path = path_of(f, "rocminfo");
    // Under WSL the GPU probe already read rocminfo and nvidia-smi (`wsl.rs`): once is enough.
    if (rocminfo_path.is_some() || f.amd_gpus().next().is_some())
        && !(f.wsl && f.evidence.rocminfo.is_some())
    {
        let run = session.run_tool("rocminfo", rocminfo_path.as_deref());
        f.evidence.rocminfo = Some(match run {
            ToolRun::Output { text, outcome } => {
                let r = parse::rocminfo::parse_rocminfo(&text);
                ToolEvidence {
                    devices: r
                        .info
                        .gpus()
                        .map(|a| {
                            a.gfx
                                .map(|g: GfxTarget| g.to_string())
                                .unwrap_or_else(|| a.name.clone())
                        })
                        .collect(),
                    errors: r.errors.iter().filter_map(rocminfo_error_text).collect(),
                    outcome,
                }
            }
            ToolRun::NotRun(why) => ToolEvidence {
                devices: vec![],
                errors: vec![],
                outcome: ToolOutcome::NotRun(why),
            },
        });
    }
    if let Some(path) = path_of(f, "rocm-smi") {
        f.evidence.rocm_smi = Some(match session.run_tool("rocm-smi", Some(&path)) {
            ToolRun::Output { text, outcome } => {
                let rows = parse::rocm_smi::parse_rocm_smi_concise(&text);
                let errors = if rows.is_empty() && !outcome.succeeded() {
                    vec![text
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("no output")
                        .chars()
                        .take(200)
                        .collect()]
                } else {
                    vec![]
                };
                ToolEvidence {
                    devices: rows
                        .iter()
                        .map(|r| {
                            r.name
                                .clone()
                                .unwrap_or_else(|| format!("GPU[{}]", r.device))
                        })
                        .collect(),
                    errors,
                    outcome,
                }
            }
            ToolRun::NotRun(why) => ToolEvidence {
                devices: vec![],
                errors: vec![],
                outcome: ToolOutcome::NotRun(why),
            },
        });
    }
    let smi_path = path_of(f, "nvidia-smi");
    if (smi_path.is_some() || f.nvidia_gpus().next().is_some())
        && !(f.wsl && f.evidence.nvidia_smi.is_some())
    {
        let run = session.run_tool("nvidia-smi", smi_path.as_deref());
        f.evidence.nvidia_smi = Some(match run {
            ToolRun::Output { text, outcome } => {
                let table = parse::nvidia_smi::parse_nvidia_smi(&text);
                let (devices, errors) = nvidia_smi_summary(&text, &table);
                fill_nvidia_vram(f, &table);
                ToolEvidence {
                    devices,
                    errors,
                    outcome,
                }
            }
            ToolRun::NotRun(why) => ToolEvidence {
                devices: vec![],
                errors: vec![],
                outcome: ToolOutcome::NotRun(why),
            },
        });
    }
}

/// NVIDIA memory health from `nvidia-smi -q -x`, matched to each GPU by PCI address; why not, in `unavailable`.
pub(super) fn probe_nvidia_xml(session: &dyn Session, f: &mut HostFacts) {
    if f.nvidia_gpus().next().is_none() {
        return;
    }
    let path = f.tools.get("nvidia-smi").cloned().flatten();
    let (text, outcome) = match session.run_tool(NVIDIA_SMI_XML, path.as_deref()) {
        ToolRun::Output { text, outcome } if outcome.has_output() => (text, outcome),
        ToolRun::Output { outcome, .. } => {
            return f.unavailable(NVIDIA_SMI_XML, outcome.to_string())
        }
        ToolRun::NotRun(why) => return f.unavailable(NVIDIA_SMI_XML, why),
    };
    let listed = match parse::nvidia_smi_xml::parse_nvidia_smi_xml(&text) {
        Ok(l) => l,
        Err(why) => {
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("no output");
            let first: String = first
                .chars()
                .filter(|c| !c.is_control())
                .take(120)
                .collect();
            return f.unavailable(
                NVIDIA_SMI_XML,
                format!("the output of `{NVIDIA_SMI_XML}` ({outcome}) {why}; it begins `{first}`"),
            );
        }
    };
    for m in listed {
        let Some(address) = pci_address_of_bus_id(&m.bus_id) else {
            continue;
        };
        let Some(g) = f
            .gpus
            .iter_mut()
            .find(|g| g.vendor == Vendor::Nvidia && g.pci_address == address)
        else {
            continue;
        };
        g.health.nvidia = Some(NvidiaMemory {
            source: format!("{NVIDIA_SMI_XML} ({outcome})"),
            volatile_uncorrectable: m.volatile_uncorrectable,
            aggregate_uncorrectable: m.aggregate_uncorrectable,
            retired_pages: m.retired_pages,
            retirement_pending: m.retirement_pending,
            remap_pending: m.remap_pending,
            remap_failure: m.remap_failure,
        });
    }
}

/// rocminfo's failures in rocmenv's words; `None` for notes that are not failures.
pub(super) fn rocminfo_error_text(e: &parse::rocminfo::RocmInfoError) -> Option<String> {
    use parse::rocminfo::RocmInfoError as E;
    Some(match e {
        E::NotLoaded => "ROCk module is NOT loaded (amdgpu/KFD is not loaded)".into(),
        E::KfdPermissionDenied => "cannot open /dev/kfd: permission denied".into(),
        E::KfdMissing => "cannot open /dev/kfd: it does not exist".into(),
        E::NotInGroup { group } => format!("the user is not in the `{group}` group"),
        E::WslOutOfResources => "hsa_init failed with HSA_STATUS_ERROR_OUT_OF_RESOURCES (WSL2 without ROCm-on-WSL support)".into(),
        // Inside containers rocminfo's lsmod check fails on its own; not a driver problem.
        E::LsmodMissing => return None,
        E::Other(t) => t.chars().take(200).collect(),
    })
}

/// NVIDIA exposes no VRAM size in sysfs; nvidia-smi's table has it, matched to the GPU by PCI address.
pub(super) fn fill_nvidia_vram(f: &mut HostFacts, table: &parse::nvidia_smi::NvidiaSmiSummary) {
    for row in &table.gpus {
        let (Some(bus), Some(mib)) = (&row.bus_id, row.memory_total_mib) else {
            continue;
        };
        let Some(address) = pci_address_of_bus_id(bus) else {
            continue;
        };
        for g in f.gpus.iter_mut() {
            if g.vendor == Vendor::Nvidia && g.pci_address == address && g.vram_bytes.is_none() {
                g.vram_bytes = mib.checked_mul(1 << 20);
            }
        }
    }
}

/// nvidia-smi's `00000000:17:00.0` (an 8-digit domain) → sysfs's `0000:17:00.0`.
pub(super) fn pci_address_of_bus_id(bus: &str) -> Option<String> {
    let (domain, rest) = bus.trim().split_once(':')?;
    let domain = u32::from_str_radix(domain, 16).ok()?;
    Some(format!("{domain:04x}:{}", rest.to_ascii_lowercase()))
}

/// GPU names and errors from nvidia-smi's default output.
pub(super) fn nvidia_smi_summary(
    text: &str,
    table: &parse::nvidia_smi::NvidiaSmiSummary,
) -> (Vec<String>, Vec<String>) {
    use parse::nvidia_smi::{nvidia_smi_error, NvidiaSmiError as E};
    let errors = match nvidia_smi_error(text) {
        Some(E::DriverLibraryMismatch { nvml_version }) => vec![format!(
            "NVML driver/library version mismatch{}",
            nvml_version
                .map(|v| format!(" (library {v})"))
                .unwrap_or_default()
        )],
        Some(E::CannotCommunicate) => {
            vec!["nvidia-smi couldn't communicate with the NVIDIA driver".into()]
        }
        Some(E::NotFound) => vec!["nvidia-smi is not installed".into()],
        Some(E::Other(t)) => vec![t.chars().take(200).collect()],
        None => vec![],
    };
    let devices = table.gpus.iter().map(|g| g.name.clone()).collect();
    (devices, errors)
}
