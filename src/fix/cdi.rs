//! Container Device Interface specs, so `podman run --device amd.com/gpu=0` (and Docker with CDI) can hand GPUs to
//! containers. AMD's spec is written as `amd-ctk cdi generate` writes it (ROCm/container-toolkit, pinned in
//! `AMD_CDI_SOURCE`): one device per GPU, named by its number, holding its `/dev/dri` card and render nodes and
//! `/dev/kfd`, and a device `all` holding every GPU's nodes and `/dev/kfd` once. NVIDIA's spec comes from the driver
//! itself, so it is `nvidia-ctk cdi generate`'s to write.

use super::{Action, Change, Needs};
use serde::Serialize;

/// AMD's generator, at the commit followed: `GenerateSpec` (the devices and their nodes) and `New` (the kind).
/// The node fields come from `internal/amdgpu/amdgpu.go` `GetAMDGPUWithFS` at the same commit (type `c`,
/// permissions `rwm`, uid 0, the node's permission bits and group), the default path from
/// `cmd/amd-ctk/cdi/generate/generate.go`.
pub const AMD_CDI_SOURCE: &str = "https://github.com/ROCm/container-toolkit/blob/192fe8e9e7044562440ae99ba44f913f7ebb81c9/internal/cdi/cdi.go";

/// Where `amd-ctk cdi generate` writes by default (`defaultOutputPath` + `defaultOutputFile`).
pub const AMD_CDI_PATH: &str = "/etc/cdi/amd.json";

/// Where NVIDIA's guide writes its spec.
pub const NVIDIA_CDI_PATH: &str = "/etc/cdi/nvidia.yaml";

/// NVIDIA's guide to generating the CDI spec.
pub const NVIDIA_CDI_SOURCE: &str =
    "https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/1.20.1/cdi-support.html";

/// amd-ctk writes `0.6.0`, but nothing in its spec needs more than `0.5.0` (the first version that allows a device
/// name starting with a digit: `requiresV050` in cncf-tags/container-device-interface@05ae4b5bb730a036cb3f79477bd6676eea4a8c83:specs-go/version.go),
/// and runtimes that vendor an older CDI library refuse `0.6.0` (Podman 4.3.1 answers "unresolvable CDI devices").
const CDI_VERSION: &str = "0.5.0";

/// One device node as the spec names it, with what the host says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdiNode {
    /// Host path, the same in the container (`/dev/dri/renderD128`).
    pub path: String,
    /// `major:minor` from sysfs (`/sys/class/drm/renderD128/dev`); `None` leaves it to the runtime, which reads the
    /// node.
    pub numbers: Option<(i64, i64)>,
    /// Permission bits (`0o660`).
    pub mode: Option<u32>,
    /// Owning group.
    pub gid: Option<u32>,
}

/// One AMD GPU's nodes: its card node, then its render node (amd-ctk's order: the names of its `drm` directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CdiGpu {
    /// PCI address: amd-ctk numbers the GPUs in this order.
    pub pci_address: String,
    /// Card and render node.
    pub nodes: Vec<CdiNode>,
}

// The spec's JSON, field for field in the order and with the omissions of Go's `specs-go` structs (`omitempty`
// drops a zero major or minor, as there).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    cdi_version: &'static str,
    kind: &'static str,
    devices: Vec<Device>,
    container_edits: Edits,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Device {
    name: String,
    container_edits: Edits,
}

#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
struct Edits {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    device_nodes: Vec<Node>,
}

#[derive(Serialize, Clone)]
#[serde(rename_all = "camelCase")]
struct Node {
    path: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "is_zero")]
    major: i64,
    #[serde(skip_serializing_if = "is_zero")]
    minor: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    file_mode: Option<u32>,
    permissions: &'static str,
    uid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    gid: Option<u32>,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

fn node(n: &CdiNode) -> Node {
    let (major, minor) = n.numbers.unwrap_or((0, 0));
    Node {
        path: n.path.clone(),
        kind: "c",
        major,
        minor,
        file_mode: n.mode,
        permissions: "rwm",
        uid: 0,
        gid: n.gid,
    }
}

/// The spec's text for `gpus` and `/dev/kfd`: 2-space JSON and a final newline, as Go's encoder writes it. The GPUs
/// are numbered in PCI address order, as amd-ctk numbers them (its glob of the driver's PCI devices).
pub fn amd_spec(gpus: &[CdiGpu], kfd: &CdiNode) -> String {
    let mut gpus: Vec<&CdiGpu> = gpus.iter().collect();
    gpus.sort_by(|a, b| a.pci_address.cmp(&b.pci_address));
    let kfd = node(kfd);
    let mut devices: Vec<Device> = gpus
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let mut nodes: Vec<Node> = g.nodes.iter().map(node).collect();
            nodes.push(kfd.clone());
            Device {
                name: i.to_string(),
                container_edits: Edits {
                    device_nodes: nodes,
                },
            }
        })
        .collect();
    let mut all: Vec<Node> = gpus.iter().flat_map(|g| g.nodes.iter().map(node)).collect();
    all.push(kfd);
    devices.push(Device {
        name: "all".into(),
        container_edits: Edits { device_nodes: all },
    });
    let spec = Spec {
        cdi_version: CDI_VERSION,
        kind: "amd.com/gpu",
        devices,
        container_edits: Edits::default(),
    };
    let mut text = serde_json::to_string_pretty(&spec).expect("plain data serializes");
    text.push('\n');
    text
}

/// Writes AMD's spec at [`AMD_CDI_PATH`] when none is there or the one there differs from this host's (`existing`
/// is its text); `None` when it is already this host's.
pub fn plan_amd_cdi(gpus: &[CdiGpu], kfd: &CdiNode, existing: Option<&str>) -> Option<Action> {
    let after = amd_spec(gpus, kfd);
    if existing == Some(after.as_str()) {
        return None;
    }
    let what = match existing {
        Some(_) => "replace",
        None => "write",
    };
    Some(Action {
        id: "fix.cdi",
        fixes: Vec::new(),
        summary: format!(
            "{what} AMD's CDI spec for {} GPU(s), as `amd-ctk cdi generate` writes it, so `--device amd.com/gpu=0` (or `=all`) works in Podman and Docker",
            gpus.len()
        ),
        change: Change::Edit {
            path: AMD_CDI_PATH.into(),
            before: existing.map(str::to_string),
            after,
        },
        needs: Needs {
            root: true,
            relogin: false,
            reboot: false,
        },
        source: AMD_CDI_SOURCE,
    })
}

/// What fix does about NVIDIA's spec on a host with NVIDIA GPUs: `nvidia-ctk cdi generate` (undone by removing the
/// file it makes) on a live host where `nvidia_ctk` (its path) is found and no spec is there yet; else why not (an
/// existing spec is never regenerated: its undo would remove a file fix did not make).
pub fn plan_nvidia_cdi(
    live: bool,
    nvidia_ctk: Option<&str>,
    spec_exists: bool,
) -> Result<Action, String> {
    let run = format!("sudo nvidia-ctk cdi generate --output={NVIDIA_CDI_PATH}");
    if spec_exists {
        return Err(format!(
            "cdi: {NVIDIA_CDI_PATH} exists; after a driver update regenerate it with `{run}`"
        ));
    }
    if !live {
        return Err(format!(
            "cdi: NVIDIA's spec is made from the live driver, not a host tree; on the host run `{run}`"
        ));
    }
    let Some(ctk) = nvidia_ctk else {
        return Err(format!(
            "cdi: nvidia-ctk is not on PATH: install nvidia-container-toolkit, then run `{run}`"
        ));
    };
    Ok(Action {
        id: "fix.cdi",
        fixes: vec!["docker.gpu-runtime".into()],
        summary: format!("generate NVIDIA's CDI spec at {NVIDIA_CDI_PATH} with nvidia-ctk, so `--device nvidia.com/gpu=all` works"),
        change: Change::Command {
            argv: vec![
                ctk.to_string(),
                "cdi".into(),
                "generate".into(),
                format!("--output={NVIDIA_CDI_PATH}"),
            ],
            undo: vec![vec!["rm".into(), "-f".into(), NVIDIA_CDI_PATH.into()]],
        },
        needs: Needs {
            root: true,
            relogin: false,
            reboot: false,
        },
        source: NVIDIA_CDI_SOURCE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(path: &str, numbers: Option<(i64, i64)>) -> CdiNode {
        CdiNode {
            path: path.into(),
            numbers,
            mode: Some(0o660),
            gid: Some(109),
        }
    }

    fn gpu(bdf: &str, card: u32, render: u32) -> CdiGpu {
        CdiGpu {
            pci_address: bdf.into(),
            nodes: vec![
                n(&format!("/dev/dri/card{card}"), Some((226, card as i64))),
                n(
                    &format!("/dev/dri/renderD{render}"),
                    Some((226, render as i64)),
                ),
            ],
        }
    }

    #[test]
    fn one_device_per_gpu_in_pci_order_and_all() {
        let kfd = n("/dev/kfd", Some((235, 0)));
        let text = amd_spec(
            &[gpu("0000:c1:00.0", 2, 129), gpu("0000:03:00.0", 1, 128)],
            &kfd,
        );
        assert!(text.ends_with("}\n"));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["cdiVersion"], "0.5.0");
        assert_eq!(v["kind"], "amd.com/gpu");
        assert_eq!(v["containerEdits"], serde_json::json!({}));
        let names: Vec<&str> = v["devices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["0", "1", "all"]);
        let paths = |i: usize| -> Vec<String> {
            v["devices"][i]["containerEdits"]["deviceNodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["path"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            paths(0),
            ["/dev/dri/card1", "/dev/dri/renderD128", "/dev/kfd"]
        );
        assert_eq!(
            paths(2),
            [
                "/dev/dri/card1",
                "/dev/dri/renderD128",
                "/dev/dri/card2",
                "/dev/dri/renderD129",
                "/dev/kfd"
            ]
        );
        // Go's omitempty: a zero minor is left out; the mode is the permission bits as a number.
        let kfd = &v["devices"][0]["containerEdits"]["deviceNodes"][2];
        assert_eq!(
            kfd,
            &serde_json::json!({"path": "/dev/kfd", "type": "c", "major": 235, "fileMode": 432,
                "permissions": "rwm", "uid": 0, "gid": 109})
        );
    }

    #[test]
    fn the_spec_is_written_once_and_replaced_when_it_differs() {
        let kfd = n("/dev/kfd", None);
        let gpus = [gpu("0000:03:00.0", 0, 128)];
        let a = plan_amd_cdi(&gpus, &kfd, None).unwrap();
        let Change::Edit { after, before, .. } = &a.change else {
            panic!()
        };
        assert!(before.is_none());
        assert!(plan_amd_cdi(&gpus, &kfd, Some(after)).is_none());
        let stale = after.replace("renderD128", "renderD129");
        let b = plan_amd_cdi(&gpus, &kfd, Some(&stale)).unwrap();
        assert!(b.summary.starts_with("replace"), "{}", b.summary);
    }

    #[test]
    fn nvidia_is_generated_only_live_with_the_tool_and_no_spec() {
        let a = plan_nvidia_cdi(true, Some("/usr/bin/nvidia-ctk"), false).unwrap();
        let Change::Command { argv, undo } = &a.change else {
            panic!()
        };
        assert_eq!(
            argv,
            &[
                "/usr/bin/nvidia-ctk",
                "cdi",
                "generate",
                "--output=/etc/cdi/nvidia.yaml"
            ]
        );
        assert_eq!(undo, &[vec!["rm", "-f", "/etc/cdi/nvidia.yaml"]]);
        let why = plan_nvidia_cdi(true, None, false).unwrap_err();
        assert!(why.contains("nvidia-ctk is not on PATH"), "{why}");
        assert!(plan_nvidia_cdi(true, Some("/x"), true)
            .unwrap_err()
            .contains("exists"));
        assert!(plan_nvidia_cdi(false, Some("/x"), false)
            .unwrap_err()
            .contains("host tree"));
    }
}
