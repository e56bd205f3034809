//! What is installed: ROCm and CUDA user space, and the tools on PATH.

use super::{DEFAULT_PATH, TOOLS};
use crate::host::facts::*;
use crate::host::root::HostRoot;
use std::collections::BTreeMap;

pub(super) fn probe_rocm(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/opt") else { return };
    let linked = root.link_name("/opt/rocm").ok();
    for name in names.iter().filter(|n| n.starts_with("rocm")) {
        let dir = format!("/opt/{name}");
        // /opt/rocm is usually a link to /opt/rocm-X.Y.Z: count the install once.
        if name == "rocm" && linked.is_some() {
            continue;
        }
        match root.read_value(&format!("{dir}/.info/version")) {
            Ok(v) => {
                let ver = v.split(['-', '\n']).next().unwrap_or("").trim().to_string();
                if ver.parse::<crate::version::Version>().is_ok() {
                    f.rocm_installs.push(RocmInstall {
                        version: ver,
                        path: dir,
                    });
                } else {
                    f.unavailable(
                        format!("rocm {dir}"),
                        format!(
                            "{dir}/.info/version holds `{}`, not a version",
                            v.chars().take(40).collect::<String>()
                        ),
                    );
                }
            }
            Err(e) if root.is_dir(&dir) => f.unavailable(format!("rocm {dir}"), e.to_string()),
            Err(_) => {}
        }
    }
    f.rocm_installs
        .sort_by_key(|r| r.version.parse::<crate::version::Version>().ok());
    f.rocm = match &linked {
        Some(target) => f
            .rocm_installs
            .iter()
            .find(|r| r.path == format!("/opt/{target}"))
            .cloned(),
        None => f.rocm_installs.last().cloned(),
    };
}

pub(super) fn probe_cuda(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/usr/local") else {
        return;
    };
    let linked = root.link_name("/usr/local/cuda").ok();
    for name in names.iter().filter(|n| n.starts_with("cuda")) {
        if name == "cuda" && linked.is_some() {
            continue;
        }
        let dir = format!("/usr/local/{name}");
        let version = root
            .read_text(&format!("{dir}/version.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| {
                v.pointer("/cuda/version")
                    .and_then(|s| s.as_str())
                    .map(str::to_string)
            })
            .or_else(|| {
                root.read_value(&format!("{dir}/version.txt"))
                    .ok()
                    .and_then(|t| {
                        t.strip_prefix("CUDA Version ")
                            .map(|s| s.trim().to_string())
                    })
            });
        match version {
            Some(v)
                if crate::version::parse_with_parts(&v).is_ok() || v.split('.').count() == 4 =>
            {
                f.cuda_installs.push(CudaInstall {
                    version: v,
                    path: dir,
                })
            }
            _ if root.is_dir(&dir) => f.unavailable(
                format!("cuda {dir}"),
                "no readable version.json or version.txt",
            ),
            _ => {}
        }
    }
    f.cuda = match &linked {
        Some(t) => f
            .cuda_installs
            .iter()
            .find(|c| c.path == format!("/usr/local/{t}"))
            .cloned(),
        None => f.cuda_installs.last().cloned(),
    };
}

pub(super) fn probe_tools(root: &HostRoot, env: &BTreeMap<String, String>, f: &mut HostFacts) {
    let path = env.get("PATH").map(String::as_str).unwrap_or(DEFAULT_PATH);
    // Relative PATH entries are skipped: they depend on a working directory the host's processes had, not rocmenv's.
    let dirs: Vec<&str> = path.split(':').filter(|d| d.starts_with('/')).collect();
    for tool in TOOLS {
        let found = if root.is_live() {
            let search = std::env::join_paths(&dirs).ok();
            search
                .and_then(|p| which::which_in(tool, Some(p), "/").ok())
                .map(|p| p.display().to_string())
        } else {
            // In a tree, PATH is looked up through the tree's resolver, so a link out of it finds nothing.
            dirs.iter()
                .map(|d| format!("{}/{tool}", d.trim_end_matches('/')))
                .find(|p| {
                    use std::os::unix::fs::PermissionsExt;
                    root.metadata(p)
                        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
                })
        };
        f.tools.insert(tool.to_string(), found);
    }
}
