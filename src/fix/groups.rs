//! Membership of the groups that own `/dev/kfd` and the render nodes, for the user who will run the GPU work (not
//! necessarily who runs `sudo rocmenv fix`): an edit of `/etc/group` in a tree, `usermod -aG` on a live host.

use super::{Action, Change, Needs, GROUPS_SOURCE};
use crate::host::DeviceNode;

/// The user whose access is fixed, from `/etc/passwd` and `/etc/group`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetUser {
    /// Login name.
    pub name: String,
    /// User id.
    pub uid: u32,
    /// Primary and supplementary group ids.
    pub gids: Vec<u32>,
}

impl TargetUser {
    /// `name` as the two files describe it; `None` when `/etc/passwd` does not list it.
    pub fn from_files(name: &str, passwd: &str, group: &str) -> Option<TargetUser> {
        let (uid, gid) = passwd.lines().find_map(|l| {
            let p: Vec<&str> = l.split(':').collect();
            (p.len() > 3 && p[0] == name).then(|| Some((p[2].parse().ok()?, p[3].parse().ok()?)))?
        })?;
        let mut gids: Vec<u32> = vec![gid];
        gids.extend(
            crate::host::parse_groups(group)
                .into_iter()
                .filter(|(_, _, members)| members.iter().any(|m| m == name))
                .map(|(_, g, _)| g),
        );
        gids.sort_unstable();
        gids.dedup();
        Some(TargetUser {
            name: name.to_string(),
            uid,
            gids,
        })
    }

    /// Whether the user can read and write `node` by its group and other bits (device nodes belong to root);
    /// `None` when the node's mode or group is unknown.
    pub fn can_open(&self, node: &DeviceNode) -> Option<bool> {
        if self.uid == 0 {
            return Some(true);
        }
        let mode = u32::from_str_radix(node.mode.as_deref()?, 8).ok()?;
        let gid = node.gid?;
        let bits = if self.gids.contains(&gid) {
            mode >> 3
        } else {
            mode
        };
        Some(bits & 0o6 == 0o6)
    }
}

/// AMD's guide adds the user to both groups; `render` owns `/dev/kfd` and the render nodes on current distributions,
/// `video` on older ones.
const AMD_GROUPS: [&str; 2] = ["render", "video"];

/// Adds `user` to the groups it needs for the AMD `nodes` (`(finding id, node)`), given `/etc/group`'s text: the
/// groups of the nodes it cannot open, and the other of AMD's two groups where it exists. `None` when it needs none.
pub fn plan_groups(
    user: &TargetUser,
    nodes: &[(&str, &DeviceNode)],
    group_text: &str,
    live: bool,
) -> Option<Action> {
    let table = crate::host::parse_groups(group_text);
    let mut fixes: Vec<String> = Vec::new();
    let mut add: Vec<String> = Vec::new();
    for (id, node) in nodes {
        if user.can_open(node) != Some(false) {
            continue;
        }
        // Only AMD's groups: a node of another group (`root`) is the udev rule's to fix, never a membership.
        let Some((name, _, _)) = table
            .iter()
            .find(|(n, g, _)| Some(*g) == node.gid && AMD_GROUPS.contains(&n.as_str()))
        else {
            continue;
        };
        if !fixes.iter().any(|f| f == id) {
            fixes.push(id.to_string());
        }
        if !add.contains(name) {
            add.push(name.clone());
        }
    }
    if add.is_empty() {
        return None;
    }
    for g in AMD_GROUPS {
        let lacks = table
            .iter()
            .any(|(n, gid, _)| n == g && !user.gids.contains(gid));
        if lacks && !add.iter().any(|a| a == g) {
            add.push(g.to_string());
        }
    }
    let change = if live {
        Change::Command {
            argv: vec![
                "usermod".into(),
                "-aG".into(),
                add.join(","),
                user.name.clone(),
            ],
            undo: add
                .iter()
                .map(|g| vec!["gpasswd".into(), "-d".into(), user.name.clone(), g.clone()])
                .collect(),
        }
    } else {
        Change::Edit {
            path: "/etc/group".into(),
            before: Some(group_text.to_string()),
            after: with_members(group_text, &add, &user.name),
        }
    };
    Some(Action {
        id: "fix.groups",
        fixes,
        summary: format!(
            "add {} to {} (the groups of /dev/kfd and the render nodes), as AMD's install guide asks",
            user.name,
            add.join(" and ")
        ),
        change,
        needs: Needs {
            root: true,
            relogin: true,
            reboot: false,
        },
        source: GROUPS_SOURCE,
    })
}

/// `/etc/group` with `user` appended to the members of each group in `add`; every other byte is kept.
fn with_members(text: &str, add: &[String], user: &str) -> String {
    let mut out = String::with_capacity(text.len() + add.len() * (user.len() + 1));
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let name = body.split(':').next().unwrap_or_default();
        if add.iter().any(|g| g == name) && body.matches(':').count() == 3 {
            let sep = if body.ends_with(':') { "" } else { "," };
            out.push_str(body);
            out.push_str(sep);
            out.push_str(user);
            out.push_str(end);
        } else {
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GROUP: &str = "root:x:0:\nvideo:x:44:bob\nrender:x:109:\nbob:x:1000:\n";
    const PASSWD: &str =
        "root:x:0:0:root:/root:/bin/bash\nbob:x:1000:1000:Bob:/home/bob:/bin/bash\n";

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
    fn bob_joins_render_and_only_that_line_changes() {
        let bob = TargetUser::from_files("bob", PASSWD, GROUP).unwrap();
        assert_eq!(bob.gids, [44, 1000]);
        let kfd = node("/dev/kfd", "0660", 109);
        let r = node("/dev/dri/renderD128", "0660", 109);
        let a = plan_groups(
            &bob,
            &[("devices.kfd", &kfd), ("devices.render", &r)],
            GROUP,
            false,
        )
        .unwrap();
        assert_eq!(a.fixes, ["devices.kfd", "devices.render"]);
        let Change::Edit { after, .. } = &a.change else {
            panic!()
        };
        assert_eq!(
            after,
            "root:x:0:\nvideo:x:44:bob\nrender:x:109:bob\nbob:x:1000:\n"
        );
        // Once in the group, nothing is left to do.
        let bob = TargetUser::from_files("bob", PASSWD, after).unwrap();
        assert!(plan_groups(&bob, &[("devices.kfd", &kfd)], after, false).is_none());
    }

    #[test]
    fn live_hosts_get_usermod_and_its_undo() {
        let g = "video:x:44:\nrender:x:109:alice\n";
        let bob = TargetUser::from_files("bob", PASSWD, g).unwrap();
        let a = plan_groups(
            &bob,
            &[("devices.kfd", &node("/dev/kfd", "0660", 109))],
            g,
            true,
        )
        .unwrap();
        let Change::Command { argv, undo } = &a.change else {
            panic!()
        };
        assert_eq!(argv, &["usermod", "-aG", "render,video", "bob"]);
        assert_eq!(undo.len(), 2);
        // A world-writable node needs no group; an unknown user is not planned.
        assert!(plan_groups(
            &bob,
            &[("devices.kfd", &node("/dev/kfd", "0666", 109))],
            g,
            true
        )
        .is_none());
        assert!(TargetUser::from_files("carol", PASSWD, g).is_none());
        // A node only root's group may open is not fixed by joining `root`.
        assert!(plan_groups(
            &bob,
            &[("devices.kfd", &node("/dev/kfd", "0660", 0))],
            "root:x:0:\nvideo:x:44:\nrender:x:109:\n",
            true
        )
        .is_none());
        // Members are appended after a comma, and a file without a final newline keeps its end.
        assert_eq!(
            with_members("render:x:109:alice", &["render".into()], "bob"),
            "render:x:109:alice,bob"
        );
    }
}
