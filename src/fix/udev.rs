//! A udev rule for `/dev/kfd` and the render nodes when their group or mode keeps the render group out (a node
//! `0600 root:root`, or owned by a group that is neither `render` nor `video`), as AMD's install guide writes it for
//! a group: `KERNEL=="kfd", GROUP=…, MODE="0660"` and `SUBSYSTEM=="drm", KERNEL=="renderD*", GROUP=…, MODE="0660"`,
//! with `render`, the group AMD's guide adds users to. On a live host udev then reloads its rules and re-applies them
//! (`udevadm control --reload-rules && udevadm trigger`, AMD's next step); in a tree only the file is written.

use super::{Action, Change, Needs};
use crate::host::DeviceNode;

/// The rule file fix writes (after AMD's `70-amdgpu.rules` in udev's order, so its assignments win).
pub const UDEV_RULE: &str = "/etc/udev/rules.d/70-rocmenv-amdgpu.rules";

/// AMD's install prerequisites, "Configuring permissions for GPU access", "Grant GPU access to a custom group".
pub const UDEV_SOURCE: &str =
    "ROCm/rocm-install-on-linux@77c5183fa2943fef2c96b0e3cde90e4c7fed11d5:docs/install/prerequisites.rst";

/// The group the rule gives the nodes.
const GROUP: &str = "render";

/// The rule's text.
pub fn udev_rule_text() -> String {
    format!(
        "# Written by `rocmenv fix`: /dev/kfd and the render nodes for the {GROUP} group, read-write, as AMD's install\n\
         # guide writes the rule for a group ({UDEV_SOURCE}).\n\
         KERNEL==\"kfd\", GROUP=\"{GROUP}\", MODE=\"0660\"\n\
         SUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"{GROUP}\", MODE=\"0660\"\n"
    )
}

/// Whether members of `render` or `video` (`groups`: their gids) can read and write `node` by its mode and group;
/// `None` when its mode or group is unknown.
fn group_accessible(node: &DeviceNode, groups: &[u32]) -> Option<bool> {
    let mode = u32::from_str_radix(node.mode.as_deref()?, 8).ok()?;
    if mode & 0o6 == 0o6 {
        return Some(true);
    }
    let gid = node.gid?;
    Some(groups.contains(&gid) && (mode >> 3) & 0o6 == 0o6)
}

/// The rule, when a node (`(finding id, node)`) is not open to the render and video groups; `group_text` is
/// `/etc/group`, `existing` the rule file's text now, `live` whether udev runs here. A note when it cannot be planned
/// or is written already.
pub fn plan_udev(
    nodes: &[(&str, &DeviceNode)],
    group_text: &str,
    existing: Option<&str>,
    live: bool,
) -> (Vec<Action>, Vec<String>) {
    let table = crate::host::parse_groups(group_text);
    let gids: Vec<u32> = table
        .iter()
        .filter(|(n, _, _)| n == "render" || n == "video")
        .map(|(_, g, _)| *g)
        .collect();
    let closed: Vec<&(&str, &DeviceNode)> = nodes
        .iter()
        .filter(|(_, n)| group_accessible(n, &gids) == Some(false))
        .collect();
    let mut notes = Vec::new();
    if closed.is_empty() {
        return (Vec::new(), notes);
    }
    if !table.iter().any(|(n, _, _)| n == GROUP) {
        notes.push(format!("udev: /etc/group has no `{GROUP}` group for the rule to give the nodes to; create it (sudo groupadd --system {GROUP}), then run `rocmenv fix` again"));
        return (Vec::new(), notes);
    }
    let mut fixes: Vec<String> = Vec::new();
    for (id, _) in &closed {
        if !fixes.iter().any(|f| f == id) {
            fixes.push(id.to_string());
        }
    }
    let shown: Vec<String> = closed
        .iter()
        .map(|(_, n)| {
            let group = n
                .group
                .clone()
                .or(n.gid.map(|g| g.to_string()))
                .unwrap_or_else(|| "?".into());
            format!(
                "{} is {} group {group}",
                n.path,
                n.mode.as_deref().unwrap_or("?")
            )
        })
        .collect();
    let needs = Needs {
        root: true,
        relogin: false,
        reboot: false,
    };
    let after = udev_rule_text();
    let mut out = Vec::new();
    if existing == Some(after.as_str()) {
        if !live {
            notes.push(format!("udev: {UDEV_RULE} is written already; on the host run `sudo udevadm control --reload-rules && sudo udevadm trigger` (or reboot) for it to take effect"));
            return (out, notes);
        }
    } else {
        out.push(Action {
            id: "fix.udev",
            fixes: fixes.clone(),
            summary: format!(
                "{UDEV_RULE}: /dev/kfd and the render nodes {GROUP}-group read-write ({}); {}",
                shown.join("; "),
                if live {
                    "udev applies it at once (next steps)"
                } else {
                    "on the host then run `sudo udevadm control --reload-rules && sudo udevadm trigger`"
                }
            ),
            change: Change::Edit {
                path: UDEV_RULE.into(),
                before: existing.map(str::to_string),
                after,
            },
            needs,
            source: UDEV_SOURCE,
        });
    }
    if live {
        out.extend(live_steps(&closed, fixes));
    }
    (out, notes)
}

/// On a live host: udev reads its rules again and applies them; the undo gives each node back the mode and group it
/// has now (the rule file is gone by then too).
fn live_steps(closed: &[&(&str, &DeviceNode)], fixes: Vec<String>) -> Vec<Action> {
    let needs = Needs {
        root: true,
        relogin: false,
        reboot: false,
    };
    let undo = closed
        .iter()
        .flat_map(|(_, n)| {
            let mut u = Vec::new();
            if let Some(m) = &n.mode {
                u.push(vec!["chmod".into(), m.clone(), n.path.clone()]);
            }
            if let Some(g) = n.gid {
                u.push(vec!["chgrp".into(), g.to_string(), n.path.clone()]);
            }
            u
        })
        .collect();
    vec![
        Action {
            id: "fix.udev",
            fixes: fixes.clone(),
            summary: "udev reads its rules again".into(),
            change: Change::Command {
                argv: vec!["udevadm".into(), "control".into(), "--reload-rules".into()],
                undo: Vec::new(),
            },
            needs,
            source: UDEV_SOURCE,
        },
        Action {
            id: "fix.udev",
            fixes,
            summary: "udev applies the rules to the devices now".into(),
            change: Change::Command {
                argv: vec!["udevadm".into(), "trigger".into()],
                undo,
            },
            needs,
            source: UDEV_SOURCE,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP_TEXT: &str = "root:x:0:\nvideo:x:44:bob\nrender:x:109:\n";

    fn node(path: &str, mode: &str, gid: u32) -> DeviceNode {
        DeviceNode {
            path: path.into(),
            mode: Some(mode.into()),
            gid: Some(gid),
            group: None,
            accessible: None,
        }
    }

    #[test]
    fn a_root_only_node_gets_the_rule_and_a_group_node_does_not() {
        let kfd = node("/dev/kfd", "0600", 0);
        let r = node("/dev/dri/renderD128", "0660", 109);
        let (a, notes) = plan_udev(
            &[("devices.kfd", &kfd), ("devices.render", &r)],
            GROUP_TEXT,
            None,
            false,
        );
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].fixes, ["devices.kfd"]);
        let Change::Edit { after, path, .. } = &a[0].change else {
            panic!()
        };
        assert_eq!(path, UDEV_RULE);
        assert!(after.contains("KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\"\n"));
        assert!(after.contains(
            "SUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"render\", MODE=\"0660\"\n"
        ));
        // Written already: in a tree a note, nothing to do.
        let (a, notes) = plan_udev(&[("devices.kfd", &kfd)], GROUP_TEXT, Some(after), false);
        assert!(a.is_empty() && notes[0].contains("written already"));
        // Group-accessible nodes (render, video, or world read-write) need no rule.
        for n in [node("/dev/kfd", "0660", 44), node("/dev/kfd", "0666", 0)] {
            assert!(plan_udev(&[("devices.kfd", &n)], GROUP_TEXT, None, false)
                .0
                .is_empty());
        }
    }

    #[test]
    fn a_live_host_reloads_and_triggers_and_the_undo_restores_the_mode() {
        let kfd = node("/dev/kfd", "0600", 0);
        let (a, _) = plan_udev(&[("devices.kfd", &kfd)], GROUP_TEXT, None, true);
        assert_eq!(a.len(), 3);
        let Change::Command { argv, undo } = &a[2].change else {
            panic!()
        };
        assert_eq!(argv, &["udevadm", "trigger"]);
        assert_eq!(
            undo,
            &[
                vec!["chmod".to_string(), "0600".into(), "/dev/kfd".into()],
                vec!["chgrp".to_string(), "0".into(), "/dev/kfd".into()]
            ]
        );
        // Without a render group the rule has nothing to name.
        let (a, notes) = plan_udev(&[("devices.kfd", &kfd)], "root:x:0:\n", None, true);
        assert!(a.is_empty() && notes[0].contains("groupadd"));
    }
}
