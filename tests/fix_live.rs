//! `rocmenv fix --apply` on a live host (issue 35): a Debian container with Debian's real `useradd`, `usermod` and
//! `gpasswd`, where the GPU facts come from a captured tree bound over `/sys` and `/dev/kfd` and a render node are
//! real device nodes owned by `render`. `id` shows the groups after `--apply`, and `--undo` removes them.
//!
//! Without a daemon the test prints SKIP, unless ROCMENV_ENGINE_TESTS=1.

#[path = "common/engine.rs"]
#[allow(dead_code)]
mod common;

use std::process::Command;

const SCRIPT: &str = r#"
set -eu
getent group render >/dev/null || groupadd -r render
useradd -m bob
# The GPU as the kernel shows it: a captured tree over /sys, and device nodes as amdgpu makes them (0660, render).
mount --bind /fixture/sys /sys
mknod /dev/kfd c 1 3
mkdir -p /dev/dri
mknod /dev/dri/renderD128 c 1 3
chgrp render /dev/kfd /dev/dri/renderD128
chmod 0660 /dev/kfd /dev/dri/renderD128
echo "== before"; id -nG bob
echo "== plan"; rocmenv fix --user bob --only devices
echo "== apply"; rocmenv fix --user bob --only devices --apply
echo "== after"; id -nG bob
echo "== again"; rocmenv fix --user bob --only devices --apply
echo "== undo"; rocmenv fix --undo
echo "== undone"; id -nG bob
test ! -e /var/lib/rocmenv/fix && echo "== no journal"
"#;

#[test]
fn the_group_fix_runs_usermod_and_undoes_it_in_a_container() {
    let Some(_d) = common::daemon("fix_live") else {
        return;
    };
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hosts/user-not-in-render-group"
    );
    let name = format!("rocmenv-test-fix-live-{}", std::process::id());
    let out = Command::new("docker")
        // Only what the script needs: a bind mount over /sys (CAP_SYS_ADMIN, no seccomp or AppArmor filter) and mknod,
        // which Docker grants by default; --privileged asks for capabilities a nested runner may not have.
        .args([
            "run",
            "--rm",
            "--cap-add",
            "SYS_ADMIN",
            "--security-opt",
            "seccomp=unconfined",
        ])
        .args(["--security-opt", "apparmor=unconfined", "--name", &name])
        .arg("-v")
        .arg(format!("{bin}:/usr/local/bin/rocmenv:ro"))
        .arg("-v")
        .arg(format!("{fixture}:/fixture:ro"))
        .args([
            "-e",
            "LC_ALL=C.UTF-8",
            "-e",
            "NO_COLOR=1",
            common::BASE,
            "sh",
            "-c",
            SCRIPT,
        ])
        .output()
        .expect("docker runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{text}\n{err}");
    let part = |from: &str, to: &str| -> String {
        let a = text
            .find(from)
            .unwrap_or_else(|| panic!("no {from} in {text}"))
            + from.len();
        let b = text[a..].find(to).map_or(text.len(), |i| a + i);
        text[a..b].trim().to_string()
    };
    let groups = |s: String| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert!(
        !groups(part("== before", "== plan")).contains(&"render".to_string()),
        "{text}"
    );
    let plan = part("== plan", "== apply");
    assert!(
        plan.contains("run: usermod -aG 'render,video' bob"),
        "{plan}"
    );
    assert!(
        plan.contains("fixes: devices.kfd, devices.render"),
        "{plan}"
    );
    let after = groups(part("== after", "== again"));
    assert!(
        after.contains(&"render".to_string()) && after.contains(&"video".to_string()),
        "{text}"
    );
    assert!(
        part("== again", "== undo").contains("nothing to fix"),
        "{text}"
    );
    assert!(
        part("== undo", "== undone").contains("undid `usermod -aG render,video bob`"),
        "{text}"
    );
    let undone = groups(part("== undone", "== no journal"));
    assert_eq!(undone, ["bob"], "{text}");
    assert!(text.contains("== no journal"), "{text}");
}
