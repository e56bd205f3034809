//! What is installed: ROCm and CUDA user space, and the tools on PATH.

use super::{DEFAULT_PATH, TOOLS};
use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::version::Reported;
use std::collections::BTreeMap;

/// The version in a `.info/version` file (`6.2.0-66` → `6.2.0`), or why it is not one.
fn info_version(root: &HostRoot, dir: &str) -> Result<Option<String>, String> {
    match root.read_value(&format!("{dir}/.info/version")) {
        Ok(v) => {
            let ver = v.split(['-', '\n']).next().unwrap_or("").trim().to_string();
            if ver.parse::<crate::version::Version>().is_ok() {
                Ok(Some(ver))
            } else {
                Err(format!(
                    "{dir}/.info/version holds `{}`, not a version",
                    v.chars().take(40).collect::<String>()
                ))
            }
        }
        Err(e) if root.is_dir(dir) => Err(e.to_string()),
        Err(_) => Ok(None),
    }
}

/// The last path component a chain of links ends at (`/opt/rocm/core` → `/etc/alternatives/core` →
/// `/opt/rocm/core-10.1` gives `core-10.1`), at most a few hops.
fn link_end(root: &HostRoot, path: &str) -> Option<String> {
    let mut here = path.to_string();
    let mut last = None;
    for _ in 0..4 {
        let Ok(to) = root.link_name(&here) else { break };
        let base = std::path::Path::new(&here)
            .parent()
            .unwrap_or(std::path::Path::new("/"));
        let next = base.join(&to);
        // Normalise `..` so the next hop is read at an absolute path inside the tree.
        let mut parts: Vec<String> = Vec::new();
        for c in next.components() {
            match c {
                std::path::Component::ParentDir => {
                    parts.pop();
                }
                std::path::Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        here = format!("/{}", parts.join("/"));
        last = parts.last().cloned();
    }
    last
}

/// Installed `amdrocm-coreX.Y` packages in the dpkg database: (X.Y, package version without its build).
fn dpkg_core_sdk(root: &HostRoot) -> Vec<(String, String)> {
    let Ok(text) = root.read_text("/var/lib/dpkg/status") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let field = |name: &str| {
            stanza
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(str::trim))
        };
        let (Some(pkg), Some(status), Some(version)) =
            (field("Package"), field("Status"), field("Version"))
        else {
            continue;
        };
        let Some(series) = pkg.strip_prefix("amdrocm-core") else {
            continue;
        };
        if status != "install ok installed"
            || !matches!(crate::version::parse_with_parts(series), Ok((_, 2)))
        {
            continue;
        }
        let v = version
            .split(['-', '~', '+'])
            .next()
            .unwrap_or("")
            .to_string();
        if v.parse::<crate::version::Version>().is_ok() {
            out.push((series.to_string(), v));
        }
    }
    out
}

pub(super) fn probe_rocm(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/opt") else { return };
    let linked = root.link_name("/opt/rocm").ok();
    for name in names.iter().filter(|n| n.starts_with("rocm")) {
        let dir = format!("/opt/{name}");
        // /opt/rocm is usually a link to /opt/rocm-X.Y.Z: count the install once. The Core SDK makes it a
        // directory of update-alternatives links next to its real prefixes, core-X.Y.
        if name == "rocm" && linked.is_some() {
            continue;
        }
        if name == "rocm" && root.is_dir(&dir) && !root.exists("/opt/rocm/.info/version") {
            probe_core_sdk(root, f);
            continue;
        }
        match info_version(root, &dir) {
            Ok(Some(version)) => f.rocm_installs.push(RocmInstall {
                version: Reported::new(version),
                path: dir,
                stream: "legacy",
                evidence: ".info/version".into(),
            }),
            Ok(None) => {}
            Err(why) => f.unavailable(format!("rocm {dir}"), why),
        }
    }
    // A package database that lists the Core SDK whose prefix holds no readable version file still says it is there.
    for (series, version) in dpkg_core_sdk(root) {
        let path = format!("/opt/rocm/core-{series}");
        if !f.rocm_installs.iter().any(|i| i.path == path) {
            f.rocm_installs.push(RocmInstall {
                version: Reported::new(version.as_str()),
                path,
                stream: "core-sdk",
                evidence: format!("dpkg: amdrocm-core{series} {version}"),
            });
        }
    }
    f.rocm_installs.sort_by_key(|r| r.version.value().cloned());
    // What /opt/rocm (legacy) or /opt/rocm/core (Core SDK, through update-alternatives) points at.
    let current = match &linked {
        Some(target) => Some(format!("/opt/{}", target.trim_start_matches("/opt/"))),
        None => link_end(root, "/opt/rocm/core").map(|c| format!("/opt/rocm/{c}")),
    };
    f.rocm = match current {
        Some(path) => f
            .rocm_installs
            .iter()
            .find(|r| r.path == path)
            .cloned()
            .or_else(|| {
                linked
                    .is_none()
                    .then(|| f.rocm_installs.last().cloned())
                    .flatten()
            }),
        None => f.rocm_installs.last().cloned(),
    };
}

/// The Core SDK's prefixes under the directory /opt/rocm: `core-X.Y` directories (not the `core`, `core-N`
/// alternatives links) holding rocm-core's `.info/version`.
fn probe_core_sdk(root: &HostRoot, f: &mut HostFacts) {
    let Ok(names) = root.list("/opt/rocm") else {
        return;
    };
    for name in names.iter().filter(|n| n.starts_with("core-")) {
        let dir = format!("/opt/rocm/{name}");
        let series = &name["core-".len()..];
        if root.link_name(&dir).is_ok()
            || !matches!(crate::version::parse_with_parts(series), Ok((_, 2)))
        {
            continue;
        }
        match info_version(root, &dir) {
            Ok(Some(version)) => f.rocm_installs.push(RocmInstall {
                version: Reported::new(version),
                path: dir,
                stream: "core-sdk",
                evidence: ".info/version".into(),
            }),
            Ok(None) => {}
            Err(why) => f.unavailable(format!("rocm {dir}"), why),
        }
    }
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
                    version: Reported::new(v),
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
    let tree_dirs = (!root.is_live()).then(|| tree_path_dirs(root, &dirs));
    for tool in TOOLS {
        let found = if root.is_live() {
            let search = std::env::join_paths(&dirs).ok();
            search
                .and_then(|p| which::which_in(tool, Some(p), "/").ok())
                .map(|p| p.display().to_string())
        } else {
            // In a tree, PATH is looked up through the tree's resolver, so a link out of it finds nothing.
            tree_dirs
                .iter()
                .flatten()
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

/// The PATH directories a tree has, each once: a directory that is missing is not searched for every tool, and
/// `/bin` that is a link to `usr/bin` (a merged /usr) is searched once, as the same directory (device and inode).
pub(super) fn tree_path_dirs<'p>(root: &HostRoot, dirs: &[&'p str]) -> Vec<&'p str> {
    use std::os::unix::fs::MetadataExt;
    let mut seen = Vec::new();
    dirs.iter()
        .copied()
        .filter(|d| match root.metadata(d) {
            Ok(m) if m.is_dir() && !seen.contains(&(m.dev(), m.ino())) => {
                seen.push((m.dev(), m.ino()));
                true
            }
            _ => false,
        })
        .collect()
}
