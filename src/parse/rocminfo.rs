//! `rocminfo` output: HSA runtime version, agents (CPUs and GPUs), and its failure messages.

use crate::gfx::GfxTarget;
use serde::Serialize;

/// What `rocminfo` reported about the HSA runtime and its agents.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RocmInfo {
    /// `Runtime Version:` of the HSA runtime, e.g. "1.14".
    pub runtime_version: Option<String>,
    /// amdgpu (ROCk) module version from `ROCk module version 6.10.5 is loaded` (ROCm ≥ 6.2).
    pub rock_module_version: Option<String>,
    /// Agents in the order printed.
    pub agents: Vec<RocmAgent>,
}

/// One HSA agent (a CPU socket or a GPU).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RocmAgent {
    /// `Name:`: the gfx target for GPUs (`gfx1100`), the CPU model for CPUs.
    pub name: String,
    /// `Marketing Name:`; `None` when printed empty (gfx90c APUs on ROCm 5).
    pub marketing_name: Option<String>,
    /// `Device Type:`: "CPU" or "GPU".
    pub device_type: Option<String>,
    /// The gfx target when `name` is one.
    pub gfx: Option<GfxTarget>,
    /// `Uuid:`, e.g. `GPU-3b5a…` or `CPU-XX`.
    pub uuid: Option<String>,
    /// `Compute Unit:` count.
    pub compute_units: Option<u32>,
    /// `Node:`, the KFD topology node.
    pub node: Option<u32>,
    /// `Chip ID:`, the PCI device id (`29772(0x744c)` → 0x744c); 0 for CPUs.
    pub chip_id: Option<u32>,
}

/// A failure `rocminfo` printed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum RocmInfoError {
    /// "ROCk module is NOT loaded": amdgpu/KFD not loaded (unless `LsmodMissing` explains it).
    NotLoaded,
    /// "Unable to open /dev/kfd read-write: Permission denied".
    KfdPermissionDenied,
    /// "Unable to open /dev/kfd read-write: No such file or directory".
    KfdMissing,
    /// The user is not in the group that owns the device nodes ("render" or "video").
    NotInGroup {
        /// The group rocminfo named.
        group: String,
    },
    /// WSL2 `hsa_init` failure with `HSA_STATUS_ERROR_OUT_OF_RESOURCES` (no ROCm-on-WSL support).
    WslOutOfResources,
    /// "lsmod: not found" (containers): rocminfo's "NOT loaded" check is then meaningless.
    LsmodMissing,
    /// Any other HSA error line, verbatim.
    Other(String),
}

/// Agents and failures together: one output can have both (the docker capture does).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RocmInfoReport {
    /// What was parsed.
    pub info: RocmInfo,
    /// Failures recognised, in order of appearance.
    pub errors: Vec<RocmInfoError>,
}

impl RocmInfo {
    /// The GPU agents only.
    pub fn gpus(&self) -> impl Iterator<Item = &RocmAgent> {
        self.agents
            .iter()
            .filter(|a| a.device_type.as_deref() == Some("GPU"))
    }
}

/// Removes tmux copy-mode scroll markers (`   [391/1815]`) that pasted outputs carry.
fn strip_marker(line: &str) -> &str {
    let t = line.trim_end();
    if let Some(open) = t.rfind('[') {
        let inner = &t[open + 1..];
        if let Some(inner) = inner.strip_suffix(']') {
            if let Some((a, b)) = inner.split_once('/') {
                let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
                if digits(a) && digits(b) {
                    return t[..open].trim_end();
                }
            }
        }
    }
    t
}

/// Leading decimal number of a value like `128(0x80)` or `96`.
fn leading_u32(v: &str) -> Option<u32> {
    let d: String = v.chars().take_while(char::is_ascii_digit).collect();
    d.parse().ok()
}

/// What the failure and status lines before the agent blocks said, read into errors once every line is seen.
#[derive(Default)]
struct StatusLines {
    /// `lsmod: not found`.
    lsmod_missing: bool,
    /// `ROCk module is NOT loaded`.
    not_loaded: bool,
    /// `WSL environment detected`.
    wsl: bool,
    /// The `HSA_STATUS_ERROR_OUT_OF_RESOURCES` line, verbatim.
    out_of_resources: Option<String>,
}

/// Parses `rocminfo` output; never fails, unknown lines are ignored.
pub fn parse_rocminfo(s: &str) -> RocmInfoReport {
    let mut rep = RocmInfoReport::default();
    let mut current: Option<(RocmAgent, Vec<&'static str>)> = None;
    let mut status = StatusLines::default();

    for raw in s.lines() {
        let line = strip_marker(raw);
        let t = line.trim();
        if t.starts_with('#') && current.is_none() && rep.info.agents.is_empty() {
            continue;
        }
        // Failure and status lines appear before the attribute blocks.
        if read_status_line(t, &mut rep, &mut status) {
            continue;
        }

        // `Agent N` opens a new agent block.
        if let Some(n) = t.strip_prefix("Agent ") {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                if let Some((a, _)) = current.take() {
                    rep.info.agents.push(a);
                }
                current = Some((RocmAgent::default(), Vec::new()));
                continue;
            }
        }
        let Some((key, value)) = t.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let indent = line.len() - line.trim_start().len();
        match current.as_mut() {
            None => {
                if key == "Runtime Version" && !value.is_empty() {
                    rep.info.runtime_version = Some(value.to_string());
                }
            }
            // Agent-level keys sit at indent 2; deeper ones belong to pools, caches and ISAs.
            Some((agent, seen)) if indent < 4 => read_agent_key(agent, seen, key, value),
            Some(_) => {}
        }
    }
    if let Some((a, _)) = current.take() {
        rep.info.agents.push(a);
    }
    status.into_errors(&mut rep);
    rep
}

/// Reads one failure or status line (trimmed) into `rep` or `status`; false when `t` is not one.
fn read_status_line(t: &str, rep: &mut RocmInfoReport, status: &mut StatusLines) -> bool {
    if t.contains("lsmod: not found") {
        status.lsmod_missing = true;
        return true;
    }
    if let Some(rest) = t.strip_prefix("ROCk module") {
        if rest.contains("NOT loaded") {
            status.not_loaded = true;
        } else if let Some(v) = rest.trim().strip_prefix("version ") {
            rep.info.rock_module_version = v
                .split_whitespace()
                .next()
                .filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                .map(str::to_string);
        }
        return true;
    }
    if let Some(why) = t.strip_prefix("Unable to open /dev/kfd read-write:") {
        let why = why.trim();
        rep.errors.push(if why.contains("Permission denied") {
            RocmInfoError::KfdPermissionDenied
        } else if why.contains("No such file") {
            RocmInfoError::KfdMissing
        } else {
            RocmInfoError::Other(t.to_string())
        });
        return true;
    }
    if let Some(pos) = t.find("is not member of \"") {
        let rest = &t[pos + "is not member of \"".len()..];
        if let Some(end) = rest.find('"') {
            rep.errors.push(RocmInfoError::NotInGroup {
                group: rest[..end].to_string(),
            });
            return true;
        }
    }
    if t.starts_with("WSL environment detected") {
        status.wsl = true;
        return true;
    }
    if t.starts_with("Call returned HSA_STATUS_ERROR") {
        if t.contains("HSA_STATUS_ERROR_OUT_OF_RESOURCES") {
            status.out_of_resources = Some(t.to_string());
        } else {
            rep.errors.push(RocmInfoError::Other(t.to_string()));
        }
        return true;
    }
    false
}

/// Sets the agent attribute `key` names from `value`; `seen` keeps the first occurrence of each.
fn read_agent_key(agent: &mut RocmAgent, seen: &mut Vec<&'static str>, key: &str, value: &str) {
    let slot: &'static str = match key {
        "Name" => "Name",
        "Marketing Name" => "Marketing Name",
        "Device Type" => "Device Type",
        "Uuid" => "Uuid",
        "Compute Unit" => "Compute Unit",
        "Node" => "Node",
        "Chip ID" => "Chip ID",
        _ => return,
    };
    // The first occurrence wins, so a stray ISA `Name:` in a mangled paste can't override it.
    if seen.contains(&slot) {
        return;
    }
    seen.push(slot);
    let text = (!value.is_empty()).then(|| value.to_string());
    match slot {
        "Name" => {
            agent.name = value.to_string();
            agent.gfx = value.parse().ok();
        }
        "Marketing Name" => agent.marketing_name = text,
        "Device Type" => agent.device_type = text,
        "Uuid" => agent.uuid = text,
        "Compute Unit" => agent.compute_units = leading_u32(value),
        "Chip ID" => agent.chip_id = leading_u32(value).filter(|&c| c > 0 && c <= 0xffff),
        _ => agent.node = leading_u32(value),
    }
}

impl StatusLines {
    /// Adds the errors the status lines imply: the module's state first, the resource failure last.
    fn into_errors(self, rep: &mut RocmInfoReport) {
        // Without lsmod the loaded check always fails, so its "NOT loaded" says nothing.
        if self.lsmod_missing {
            rep.errors.insert(0, RocmInfoError::LsmodMissing);
        } else if self.not_loaded {
            rep.errors.insert(0, RocmInfoError::NotLoaded);
        }
        if let Some(line) = self.out_of_resources {
            // On WSL this is the known "no ROCm-on-WSL support for this setup" failure; elsewhere keep it verbatim.
            rep.errors.push(if self.wsl {
                RocmInfoError::WslOutOfResources
            } else {
                RocmInfoError::Other(line)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! capture {
        ($f:literal) => {
            include_str!(concat!("../../tests/fixtures/captures/", $f))
        };
    }

    fn gpu_names(r: &RocmInfoReport) -> Vec<String> {
        r.info
            .gpus()
            .map(|a| a.gfx.map(|g| g.to_string()).unwrap_or_default())
            .collect()
    }

    /// Issue 34: under WSL rocminfo is the only thing that names an AMD GPU; its Chip ID is the PCI device id.
    #[test]
    fn wsl2_rx7900gre_names_its_gpu_and_chip_id() {
        let r = parse_rocminfo(capture!(
            "rocminfo_wsl2_rx7900gre_gfx1100_rocm6.3.0_ubuntu24.04.txt"
        ));
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(gpu_names(&r), vec!["gfx1100"]);
        let g = r.info.gpus().next().unwrap();
        assert_eq!(g.marketing_name.as_deref(), Some("AMD Radeon RX 7900 GRE"));
        assert_eq!(g.chip_id, Some(0x744c));
        // A CPU agent's `0(0x0)` is no id.
        assert_eq!(r.info.agents[0].chip_id, None);
    }

    #[test]
    fn mi300x_x4() {
        let r = parse_rocminfo(capture!("rocminfo_mi300x_x4.txt"));
        assert!(r.errors.is_empty());
        assert_eq!(r.info.runtime_version.as_deref(), Some("1.1"));
        assert_eq!(r.info.rock_module_version, None);
        assert_eq!(r.info.agents.len(), 6);
        assert_eq!(gpu_names(&r), vec!["gfx942"; 4]);
        let g = r.info.gpus().next().unwrap();
        assert_eq!(g.marketing_name.as_deref(), Some("AMD Instinct MI300X"));
        assert_eq!(g.compute_units, Some(304));
        assert_eq!(g.node, Some(2));
        let cpu = &r.info.agents[0];
        assert_eq!(cpu.device_type.as_deref(), Some("CPU"));
        assert_eq!(cpu.name, "AMD EPYC 9474F 48-Core Processor");
        assert_eq!(cpu.gfx, None);
        assert_eq!(cpu.uuid.as_deref(), Some("CPU-XX"));
    }

    #[test]
    fn mi210_messy_paste() {
        let r = parse_rocminfo(capture!(
            "rocminfo_mi210_x4_gfx90a_rocm6.2.4_ubuntu22.04_messy-paste.txt"
        ));
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        assert_eq!(r.info.runtime_version.as_deref(), Some("1.14"));
        assert_eq!(r.info.rock_module_version.as_deref(), Some("6.10.5"));
        assert_eq!(r.info.agents.len(), 5);
        assert_eq!(gpu_names(&r), vec!["gfx90a"; 4]);
        for g in r.info.gpus() {
            assert_eq!(g.marketing_name.as_deref(), Some("AMD Instinct MI210"));
            assert_eq!(g.compute_units, Some(104));
            assert_eq!(g.name, "gfx90a");
        }
    }

    #[test]
    fn single_gpu_captures() {
        // (text, gfx, marketing name, agents)
        let cases = [
            (
                capture!("rocminfo_rx7900xtx_gfx1100_rocm6.0.2_ubuntu22.04.txt"),
                "gfx1100",
                Some("Radeon RX 7900 XTX"),
                2,
            ),
            (
                capture!("rocminfo_780m_gfx1103_apu_rocm6.2_ubuntu24.04.txt"),
                "gfx1103",
                Some("AMD Radeon Graphics"),
                2,
            ),
            (
                capture!("rocminfo_5600g_gfx90c_apu_rocm5.x_mint21.txt"),
                "gfx90c",
                None,
                2,
            ),
            (
                capture!("rocminfo_rx6800_gfx1030_rocm6.0_nixos24.05.txt"),
                "gfx1030",
                Some("AMD Radeon RX 6800"),
                2,
            ),
            (
                capture!("rocminfo_docker_lsmod-missing_renoir-gfx900_rocm3.8_ubuntu18.04.txt"),
                "gfx900",
                Some("Device 1636"),
                2,
            ),
        ];
        for (text, gfx, market, agents) in cases {
            let r = parse_rocminfo(text);
            assert_eq!(r.info.agents.len(), agents, "{gfx}");
            assert_eq!(gpu_names(&r), vec![gfx]);
            let g = r.info.gpus().next().unwrap();
            assert_eq!(g.marketing_name.as_deref(), market, "{gfx}");
            assert_eq!(g.node, Some(1), "{gfx}");
            assert!(r.info.runtime_version.is_some());
        }
        let r = parse_rocminfo(capture!(
            "rocminfo_rx7900xtx_gfx1100_rocm6.0.2_ubuntu22.04.txt"
        ));
        assert!(r.errors.is_empty());
        assert_eq!(r.info.agents[1].compute_units, Some(96));
        assert_eq!(
            r.info.agents[1].uuid.as_deref(),
            Some("GPU-0000000000000000")
        );
    }

    #[test]
    fn docker_lsmod_note_kept_with_agents() {
        let r = parse_rocminfo(capture!(
            "rocminfo_docker_lsmod-missing_renoir-gfx900_rocm3.8_ubuntu18.04.txt"
        ));
        assert_eq!(r.errors, vec![RocmInfoError::LsmodMissing]);
        assert_eq!(r.info.gpus().count(), 1);
    }

    #[test]
    fn error_captures() {
        let r = parse_rocminfo(capture!(
            "rocminfo_err_kfd_permission_denied_not_in_render_group.txt"
        ));
        assert_eq!(
            r.errors,
            vec![
                RocmInfoError::KfdPermissionDenied,
                RocmInfoError::NotInGroup {
                    group: "render".into()
                }
            ]
        );
        assert!(r.info.agents.is_empty());
        let r = parse_rocminfo(capture!(
            "rocminfo_err_not_loaded_no_dev_kfd_centos7_rocm3.8.txt"
        ));
        assert_eq!(
            r.errors,
            vec![
                RocmInfoError::NotLoaded,
                RocmInfoError::KfdMissing,
                RocmInfoError::Other("Call returned HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources. This error may also occur when the core runtime library needs to spawn threads or create internal OS-specific events.".into())
            ]
        );
        let r = parse_rocminfo(capture!(
            "rocminfo_err_wsl2_out_of_resources_rx7800xt_rocm6.4.2.txt"
        ));
        assert_eq!(r.errors, vec![RocmInfoError::WslOutOfResources]);
        let r = parse_rocminfo("x is not member of \"video\" group, the default DRM access group.");
        assert_eq!(
            r.errors,
            vec![RocmInfoError::NotInGroup {
                group: "video".into()
            }]
        );
    }

    #[test]
    fn garbage() {
        assert_eq!(parse_rocminfo(""), RocmInfoReport::default());
        let r = parse_rocminfo("\u{FFFD}\0:\u{FFFD}\nAgent 1\n  Name: \u{FFFD}\n  Node: 99999999999999\n  Compute Unit: -3\n[1/2]\nAgent x");
        assert_eq!(r.info.agents.len(), 1);
        let a = &r.info.agents[0];
        assert_eq!((a.gfx, a.node, a.compute_units), (None, None, None));
        assert_eq!(strip_marker("  Name: x   [12/1815]"), "  Name: x");
        assert_eq!(strip_marker("[a/b]"), "[a/b]");
    }
}
