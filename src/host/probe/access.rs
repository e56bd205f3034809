//! Who may use the GPUs: the user, its groups, and the device nodes' owners and modes.

use crate::host::facts::*;
use crate::host::root::HostRoot;
use crate::host::session::Session;

/// `/etc/group` as (name, gid, members).
pub(super) fn read_groups(root: &HostRoot) -> Vec<(String, u32, Vec<String>)> {
    let Ok(head) = root.read_head("/etc/group", crate::host::root::MAX_READ) else {
        return Vec::new();
    };
    parse_groups(&head.text)
}

/// The lines of an `/etc/group` text as (name, gid, members); malformed lines are left out.
pub fn parse_groups(text: &str) -> Vec<(String, u32, Vec<String>)> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split(':');
            let name = it.next()?.to_string();
            let _pw = it.next()?;
            let gid = it.next()?.parse().ok()?;
            let members = it
                .next()
                .unwrap_or("")
                .split(',')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            Some((name, gid, members))
        })
        .collect()
}

pub(super) fn probe_user(
    root: &HostRoot,
    session: &dyn Session,
    groups: &[(String, u32, Vec<String>)],
    f: &mut HostFacts,
) {
    let Some(id) = session.identity() else {
        f.unavailable(
            "user",
            format!("who runs rocmenv is {}", session.describe()),
        );
        return;
    };
    let name = id.name.clone().or_else(|| {
        root.read_head("/etc/passwd", crate::host::root::MAX_READ)
            .ok()
            .and_then(|h| {
                h.text.lines().find_map(|l| {
                    let p: Vec<&str> = l.split(':').collect();
                    (p.len() > 2 && p[2].parse::<u32>().ok() == Some(id.uid))
                        .then(|| p[0].to_string())
                })
            })
    });
    let mut gids = vec![id.gid];
    match &id.supplementary {
        Some(s) => gids.extend(s.iter().copied()),
        None => {
            if let Some(n) = &name {
                gids.extend(
                    groups
                        .iter()
                        .filter(|(_, _, mem)| mem.contains(n))
                        .map(|(_, g, _)| *g),
                );
            }
        }
    }
    gids.sort();
    gids.dedup();
    let names = gids
        .iter()
        .map(|g| {
            groups
                .iter()
                .find(|(_, gid, _)| gid == g)
                .map(|(n, _, _)| n.clone())
                .unwrap_or_else(|| g.to_string())
        })
        .collect();
    f.user = Some(UserFacts {
        name,
        uid: id.uid,
        gids,
        groups: names,
    });
}

pub(super) fn node(
    root: &HostRoot,
    session: &dyn Session,
    path: &str,
    user: Option<&UserFacts>,
    groups: &[(String, u32, Vec<String>)],
) -> Option<DeviceNode> {
    if !root.exists(path) {
        return None;
    }
    let meta = session.node_meta(path);
    let accessible = match (meta, user) {
        (_, Some(u)) if u.uid == 0 => Some(true),
        (Some(m), Some(u)) => {
            let bits = if m.uid == u.uid {
                m.mode >> 6
            } else if u.gids.contains(&m.gid) {
                m.mode >> 3
            } else {
                m.mode
            };
            Some(bits & 0o6 == 0o6)
        }
        _ => None,
    };
    Some(DeviceNode {
        path: path.to_string(),
        mode: meta.map(|m| format!("{:04o}", m.mode)),
        gid: meta.map(|m| m.gid),
        group: meta.and_then(|m| {
            groups
                .iter()
                .find(|(_, g, _)| *g == m.gid)
                .map(|(n, _, _)| n.clone())
        }),
        accessible,
    })
}

pub(super) fn probe_nodes(
    root: &HostRoot,
    session: &dyn Session,
    groups: &[(String, u32, Vec<String>)],
    f: &mut HostFacts,
) {
    let user = f.user.clone();
    f.device_nodes.kfd = node(root, session, "/dev/kfd", user.as_ref(), groups);
    if let Ok(names) = root.list("/dev/dri") {
        for n in names
            .iter()
            .filter(|n| n.starts_with("renderD") || n.starts_with("card"))
        {
            if let Some(d) = node(
                root,
                session,
                &format!("/dev/dri/{n}"),
                user.as_ref(),
                groups,
            ) {
                if n.starts_with("card") {
                    f.device_nodes.card.push(d);
                } else {
                    f.device_nodes.render.push(d);
                }
            }
        }
    }
    if let Ok(names) = root.list("/dev") {
        for n in names.iter().filter(|n| {
            *n == "nvidiactl"
                || (n.starts_with("nvidia")
                    && n[6..].bytes().all(|b| b.is_ascii_digit())
                    && n.len() > 6)
        }) {
            if let Some(d) = node(root, session, &format!("/dev/{n}"), user.as_ref(), groups) {
                f.device_nodes.nvidia.push(d);
            }
        }
    }
    f.device_nodes.dxg = root.exists("/dev/dxg");
    if f.device_nodes.dxg {
        f.device_nodes.dxg_libs = DXG_CONTAINER_LIBS
            .iter()
            .filter(|p| root.exists(p))
            .map(|p| p.to_string())
            .collect();
    }
}

/// WSL's DirectX core library (WSL itself puts it there); a container reaching a GPU through `/dev/dxg` needs it.
pub const WSL_LIBDXCORE: &str = "/usr/lib/wsl/lib/libdxcore.so";
/// AMD's ROCDXG bridge (ROCm 7.x on WSL), which the HSA runtime loads to reach the GPU through `/dev/dxg`.
pub const WSL_LIBROCDXG: &str = "/opt/rocm/lib/librocdxg.so";
/// The HSA runtime of AMD's earlier ROCm-on-WSL releases (6.1.3 to 6.4), which reaches the GPU through `/dev/dxg`.
pub const WSL_LIBHSA: &str = "/opt/rocm/lib/libhsa-runtime64.so.1";
/// The host files AMD's ROCm-on-WSL container instructions bind into a container beside `/dev/dxg`.
pub const DXG_CONTAINER_LIBS: [&str; 3] = [WSL_LIBDXCORE, WSL_LIBROCDXG, WSL_LIBHSA];
