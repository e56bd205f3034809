//! `rocmenv fix` (issue 35) on copies of captured host trees: a dry run changes nothing, `--apply` makes doctor's
//! findings pass, a second `--apply` changes nothing, and `--undo` restores the tree byte for byte.

#[allow(dead_code)]
#[path = "common/trees.rs"]
mod trees;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use trees::{copy_of, ok, rocmenv, tree_hash};

fn statuses(tree: &str, only: &str) -> Vec<(String, String)> {
    let o = rocmenv(&["doctor", "--sysroot", tree, "--only", only, "--json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_group_fix_round_trips_on_a_tree() {
    let t = copy_of("user-not-in-render-group");
    let tree = t.path().to_str().unwrap();
    let original = tree_hash(t.path());
    let before = statuses(tree, "devices");
    assert!(
        before.contains(&("devices.kfd".into(), "fail".into())),
        "{before:?}"
    );

    // The plan, as JSON: one action, for bob, editing /etc/group only; nothing changes.
    let o = rocmenv(&["fix", "--sysroot", tree, "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(plan["user"], "bob");
    let actions = plan["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{plan:#}");
    assert_eq!(actions[0]["id"], "fix.groups");
    assert_eq!(
        actions[0]["fixes"],
        serde_json::json!(["devices.kfd", "devices.render"])
    );
    assert_eq!(actions[0]["change"]["path"], "/etc/group");
    assert_eq!(actions[0]["needs"]["relogin"], true);
    let text = ok(&rocmenv(&["fix", "--sysroot", tree]));
    assert!(text.contains("     +render:x:109:bob"), "{text}");
    assert!(text.contains("dry run: nothing changed"), "{text}");
    assert_eq!(tree_hash(t.path()), original, "a dry run changed the tree");

    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    assert!(text.contains("applied 1 action(s)"), "{text}");
    let after = statuses(tree, "devices");
    for id in ["devices.kfd", "devices.render"] {
        assert!(after.contains(&(id.into(), "pass".into())), "{after:?}");
    }
    // Only the render line of /etc/group changed.
    let old = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts/user-not-in-render-group/etc/group"),
    )
    .unwrap();
    let new = std::fs::read_to_string(t.path().join("etc/group")).unwrap();
    assert_eq!(old.replace("render:x:109:\n", "render:x:109:bob\n"), new);

    let applied = tree_hash(t.path());
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    assert!(text.contains("nothing to fix"), "{text}");
    assert_eq!(
        tree_hash(t.path()),
        applied,
        "a second --apply changed the tree"
    );

    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert!(text.contains("restored /etc/group"), "{text}");
    assert_eq!(
        tree_hash(t.path()),
        original,
        "--undo did not restore the tree byte for byte"
    );
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert!(text.contains("nothing to undo"), "{text}");
}

#[test]
fn a_wrong_override_in_a_profile_is_corrected_in_its_line() {
    let t = copy_of("rx6700xt-ubuntu2204");
    let tree = t.path().to_str().unwrap();
    std::fs::create_dir_all(t.path().join("etc/profile.d")).unwrap();
    let profile = "# GPU settings from a forum post\nexport PATH=$PATH:/opt/rocm/bin\nexport HSA_OVERRIDE_GFX_VERSION=11.0.0 # RDNA\nalias gpu=\"rocm-smi\"\n";
    let p = t.path().join("etc/profile.d/gpu.sh");
    std::fs::write(&p, profile).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let original = tree_hash(t.path());

    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--only", "env"]));
    assert!(
        text.contains("-export HSA_OVERRIDE_GFX_VERSION=11.0.0 # RDNA"),
        "{text}"
    );
    assert!(
        text.contains("+export HSA_OVERRIDE_GFX_VERSION=10.3.0 # RDNA"),
        "{text}"
    );
    ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    let fixed = std::fs::read_to_string(&p).unwrap();
    assert_eq!(fixed, profile.replace("=11.0.0 #", "=10.3.0 #"));
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o640
    );
    // The file now sets what the plan sets: no rocmenv.sh is needed beside it.
    assert!(!t.path().join("etc/profile.d/rocmenv.sh").exists());
    let text = ok(&rocmenv(&["fix", "--sysroot", tree]));
    assert!(text.contains("nothing to fix"), "{text}");
    ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert_eq!(tree_hash(t.path()), original);
}

#[test]
fn the_plans_variables_are_persisted_when_no_file_sets_them() {
    let t = copy_of("rx6700xt-ubuntu2204");
    let tree = t.path().to_str().unwrap();
    let original = tree_hash(t.path());
    ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    let persisted = std::fs::read_to_string(t.path().join("etc/profile.d/rocmenv.sh")).unwrap();
    assert!(
        persisted.contains("\nexport HSA_OVERRIDE_GFX_VERSION=10.3.0\n"),
        "{persisted}"
    );
    // What fix wrote, doctor reads back: a login shell would export it.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            ". {}/etc/profile.d/rocmenv.sh; echo $HSA_OVERRIDE_GFX_VERSION",
            tree
        ))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "10.3.0");
    ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert_eq!(
        tree_hash(t.path()),
        original,
        "the made directory and file are gone"
    );
}

#[test]
fn links_bundles_and_changed_files_are_refused() {
    // A tree whose /etc/group is a link out of it: nothing is written through it.
    let t = copy_of("user-not-in-render-group");
    let tree = t.path().to_str().unwrap();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::copy(t.path().join("etc/group"), outside.path()).unwrap();
    std::fs::remove_file(t.path().join("etc/group")).unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path().join("etc/group")).unwrap();
    let before = std::fs::read(outside.path()).unwrap();
    let o = rocmenv(&["fix", "--sysroot", tree, "--apply"]);
    let err = String::from_utf8_lossy(&o.stderr);
    // The tree reader refuses the link too (the group is then unknown): either way nothing is written outside.
    assert_eq!(std::fs::read(outside.path()).unwrap(), before, "{err}");

    // A login file that is a link (inside the tree, so it reads fine) is not written through.
    let t = copy_of("rx6700xt-ubuntu2204");
    let tree = t.path().to_str().unwrap();
    std::fs::create_dir_all(t.path().join("etc/profile.d")).unwrap();
    std::fs::write(
        t.path().join("etc/gpu.conf"),
        "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("../gpu.conf", t.path().join("etc/profile.d/gpu.sh")).unwrap();
    let o = rocmenv(&["fix", "--sysroot", tree, "--apply"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("gpu.sh") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(t.path().join("etc/gpu.conf")).unwrap(),
        "export HSA_OVERRIDE_GFX_VERSION=11.0.0\n"
    );
    // Nothing was done, so no journal is left behind.
    assert!(!t.path().join(".rocmenv/fix").exists());

    // A bundle is planned, never changed.
    let b = tempfile::tempdir().unwrap();
    let bundle = b.path().join("b.tar.zst");
    let o = rocmenv(&[
        "collect",
        "--sysroot",
        "tests/fixtures/hosts/user-not-in-render-group",
        "-o",
        bundle.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = rocmenv(&["fix", "--sysroot", bundle.to_str().unwrap(), "--apply"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("never changed") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn dockers_nvidia_runtime_is_configured_as_nvidia_ctk_does() {
    let t = copy_of("rtx4090-driver-535");
    let tree = t.path().to_str().unwrap();
    // Without the runtime installed, no runtime entry is planned and the plan says why; NVIDIA's commands to install
    // the toolkit are printed (a manual step: --apply never runs it).
    let o = rocmenv(&["fix", "--sysroot", tree, "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    let actions = plan["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{plan:#}");
    assert_eq!(actions[0]["id"], "fix.install");
    assert_eq!(
        actions[0]["fixes"],
        serde_json::json!(["docker.gpu-runtime"])
    );
    assert_eq!(actions[0]["change"]["kind"], "manual");
    assert_eq!(
        actions[0]["change"]["commands"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "sudo apt-get install -y nvidia-container-toolkit"
    );
    assert!(
        plan["notes"][0]
            .as_str()
            .unwrap()
            .contains("install nvidia-container-toolkit"),
        "{plan:#}"
    );
    let bin = t.path().join("usr/bin/nvidia-container-runtime");
    std::fs::write(&bin, "").unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let original = tree_hash(t.path());
    assert!(statuses(tree, "docker").contains(&("docker.gpu-runtime".into(), "fail".into())));
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    assert!(text.contains("fix.docker-runtime"), "{text}");
    assert!(statuses(tree, "docker").contains(&("docker.gpu-runtime".into(), "pass".into())));
    let doc: Value = serde_json::from_str(
        &std::fs::read_to_string(t.path().join("etc/docker/daemon.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        doc["runtimes"]["nvidia"],
        serde_json::json!({"args": [], "path": "nvidia-container-runtime"})
    );
    assert_eq!(
        doc["log-opts"]["max-size"], "10m",
        "the other keys are kept"
    );
    assert!(ok(&rocmenv(&["fix", "--sysroot", tree])).contains("nothing to fix"));
    ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert_eq!(tree_hash(t.path()), original);
}

#[test]
fn kernel_parameters_and_numa_balancing_from_amds_mi300x_guide() {
    let t = copy_of("mi300x-x4-no-iommu-pt");
    let tree = t.path().to_str().unwrap();
    std::fs::create_dir_all(t.path().join("proc/sys/kernel")).unwrap();
    std::fs::write(t.path().join("proc/sys/kernel/numa_balancing"), "1\n").unwrap();
    let original = tree_hash(t.path());
    let o = rocmenv(&["fix", "--sysroot", tree, "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    // The tree's CDI spec is in an older layout than amd-ctk's, so fix.cdi replaces it too (tests/fix_cdi.rs).
    assert_eq!(
        ids,
        ["fix.kernel-params", "fix.sysctl", "fix.cdi"],
        "{plan:#}"
    );
    assert_eq!(plan["actions"][0]["needs"]["reboot"], true);
    ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    // The drop-in, sourced after /etc/default/grub as update-grub does, adds the parameters to what was there.
    let dropin = t.path().join("etc/default/grub.d/90-rocmenv.cfg");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "GRUB_CMDLINE_LINUX=\"quiet splash\"; . {}; echo \"$GRUB_CMDLINE_LINUX\"",
            dropin.display()
        ))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "quiet splash iommu=pt pci=realloc=off"
    );
    let conf = std::fs::read_to_string(t.path().join("etc/sysctl.d/90-rocmenv.conf")).unwrap();
    assert!(conf.ends_with("\nkernel.numa_balancing = 0\n"), "{conf}");
    // In a tree nothing reboots: the plan says the drop-in is there and what is left to do, and changes nothing.
    let text = ok(&rocmenv(&["fix", "--sysroot", tree]));
    assert!(
        text.contains("already adds `iommu=pt pci=realloc=off`; run `sudo update-grub` and reboot"),
        "{text}"
    );
    assert!(text.contains("nothing to fix"), "{text}");
    ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert_eq!(tree_hash(t.path()), original);
}

/// The recorded mode and group of a device node in a copied tree (`.rocmenv/recorded.yaml`), changed.
fn record_node(tree: &Path, node: &str, mode: &str, gid: u32) {
    let p = tree.join(".rocmenv/recorded.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{node}:")))
        .unwrap()
        .to_string();
    let new = format!("  {node}: {{mode: \"{mode}\", uid: 0, gid: {gid}}}");
    std::fs::write(&p, text.replace(&line, &new)).unwrap();
}

#[test]
fn a_udev_rule_opens_nodes_only_root_may_use_and_bob_joins_render() {
    let t = copy_of("user-not-in-render-group");
    let tree = t.path().to_str().unwrap();
    record_node(t.path(), "/dev/kfd", "0600", 0);
    let original = tree_hash(t.path());
    let o = rocmenv(&["fix", "--sysroot", tree, "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap())
        .collect();
    // The rule gives /dev/kfd to render; bob, not in render, joins it (never `root`, the node's group now).
    assert_eq!(ids, ["fix.udev", "fix.groups"], "{plan:#}");
    assert_eq!(
        plan["actions"][0]["fixes"],
        serde_json::json!(["devices.kfd"])
    );
    assert_eq!(
        plan["actions"][0]["change"]["path"],
        "/etc/udev/rules.d/70-rocmenv-amdgpu.rules"
    );
    let text = ok(&rocmenv(&["fix", "--sysroot", tree]));
    assert!(
        text.contains("/dev/kfd is 0600 group root")
            && text.contains("sudo udevadm control --reload-rules && sudo udevadm trigger"),
        "{text}"
    );
    assert!(text.contains("     +render:x:109:bob"), "{text}");
    assert_eq!(tree_hash(t.path()), original, "a dry run changed the tree");

    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    assert!(text.contains("applied 2 action(s)"), "{text}");
    let rule =
        std::fs::read_to_string(t.path().join("etc/udev/rules.d/70-rocmenv-amdgpu.rules")).unwrap();
    // AMD's rule for a group, with render as the group; nothing is run in a tree.
    assert!(
        rule.ends_with("KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\"\nSUBSYSTEM==\"drm\", KERNEL==\"renderD*\", GROUP=\"render\", MODE=\"0660\"\n"),
        "{rule}"
    );
    let applied = tree_hash(t.path());
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--apply"]));
    assert!(
        text.contains("is written already") && text.contains("nothing to fix"),
        "{text}"
    );
    assert_eq!(
        tree_hash(t.path()),
        applied,
        "a second --apply changed the tree"
    );
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert!(
        text.contains("removed /etc/udev/rules.d/70-rocmenv-amdgpu.rules")
            && text.contains("restored /etc/group"),
        "{text}"
    );
    assert_eq!(
        tree_hash(t.path()),
        original,
        "--undo did not restore the tree"
    );
}

#[test]
fn an_amdgpu_blacklist_line_is_removed_and_every_other_line_kept() {
    let t = copy_of("amdgpu-blacklisted");
    let tree = t.path().to_str().unwrap();
    // The fixture's file holds the one line; a second file keeps other settings around its own blacklist line.
    let other = "# local settings\noptions snd_hda_intel power_save=1\nblacklist amdgpu # debugging a hang\nblacklist pcspkr\n";
    let p = t.path().join("etc/modprobe.d/local.conf");
    std::fs::write(&p, other).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
    let original = tree_hash(t.path());
    assert!(statuses(tree, "driver").contains(&("driver.amdgpu-loaded".into(), "fail".into())));

    let o = rocmenv(&["fix", "--sysroot", tree, "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    let actions = plan["actions"].as_array().unwrap();
    // Both files, in name order; no driver install, since the blacklist explains the unloaded module.
    let paths: Vec<&str> = actions
        .iter()
        .map(|a| a["change"]["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "/etc/modprobe.d/blacklist-amdgpu.conf",
            "/etc/modprobe.d/local.conf"
        ],
        "{plan:#}"
    );
    assert!(actions.iter().all(|a| a["id"] == "fix.blacklist"));
    let text = ok(&rocmenv(&["fix", "--sysroot", tree]));
    // The initramfs step of Ubuntu's family, and modprobe named for the host (a tree runs nothing).
    assert!(
        text.contains("sudo update-initramfs -u") && text.contains("`sudo modprobe amdgpu`"),
        "{text}"
    );
    assert!(!text.contains("run: modprobe"), "{text}");
    assert_eq!(tree_hash(t.path()), original, "a dry run changed the tree");

    ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--only",
        "fix.blacklist",
        "--apply",
    ]));
    assert_eq!(
        std::fs::read_to_string(t.path().join("etc/modprobe.d/blacklist-amdgpu.conf")).unwrap(),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "# local settings\noptions snd_hda_intel power_save=1\nblacklist pcspkr\n"
    );
    assert_eq!(
        std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o640
    );
    let applied = tree_hash(t.path());
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--only",
        "fix.blacklist",
        "--apply",
    ]));
    assert!(text.contains("nothing to fix"), "{text}");
    assert_eq!(
        tree_hash(t.path()),
        applied,
        "a second --apply changed the tree"
    );
    ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert_eq!(
        tree_hash(t.path()),
        original,
        "--undo did not restore the tree"
    );

    // A blacklist on the kernel command line is named, never edited.
    std::fs::write(
        t.path().join("proc/cmdline"),
        "BOOT_IMAGE=/boot/vmlinuz ro quiet modprobe.blacklist=amdgpu\n",
    )
    .unwrap();
    let text = ok(&rocmenv(&["fix", "--sysroot", tree]));
    assert!(
        text.contains("`modprobe.blacklist=amdgpu` on the kernel command line"),
        "{text}"
    );
}

#[test]
fn install_commands_are_printed_with_the_targets_version_and_never_run() {
    // RHEL 9.4 with ROCm 6.2.0, against 6.2.4: AMD's dnf steps for 6.2.4 on 9.4.
    let t = copy_of("rhel94-mi300x-x8");
    let tree = t.path().to_str().unwrap();
    let original = tree_hash(t.path());
    let o = rocmenv(&["fix", "--sysroot", tree, "--target", "rocm-6.2.4", "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    let install: Vec<&Value> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["id"] == "fix.install")
        .collect();
    assert_eq!(install.len(), 1, "{plan:#}");
    assert_eq!(install[0]["fixes"], serde_json::json!(["rocm.installed"]));
    assert_eq!(install[0]["change"]["kind"], "manual");
    let commands: Vec<&str> = install[0]["change"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert!(
        commands.contains(&"sudo dnf install https://repo.radeon.com/amdgpu-install/6.2.4/rhel/9.4/amdgpu-install-6.2.60204-1.el9.noarch.rpm"),
        "{commands:?}"
    );
    assert_eq!(commands.last(), Some(&"sudo dnf install rocm"));
    // --apply performs nothing of it: no journal, no change, and the commands stay the user's.
    let text = apply_installs_nothing(t.path(), "rocm-6.2.4", &original);
    assert!(
        text.contains("     $ sudo dnf install rocm") && text.contains("rocmenv never runs them"),
        "{text}"
    );

    // A host without ROCm or amdgpu-dkms, Ubuntu 22.04: AMD's apt steps for the named release.
    let t = copy_of("amdgpu-not-loaded");
    let tree = t.path().to_str().unwrap();
    std::fs::remove_dir_all(t.path().join("opt")).unwrap();
    let _ = std::fs::remove_dir_all(t.path().join("usr/bin"));
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--target",
        "rocm-6.1.2",
    ]));
    assert!(
        text.contains("wget https://repo.radeon.com/amdgpu-install/6.1.2/ubuntu/jammy/amdgpu-install_6.1.60102-1_all.deb")
            && text.contains("$ sudo apt install amdgpu-dkms rocm"),
        "{text}"
    );

    // A release string with a shell metacharacter never reaches a command: one line, exit 2.
    let o = rocmenv(&["fix", "--sysroot", tree, "--target", "rocm-6.2;reboot"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a version") && err.trim().lines().count() == 1,
        "{err}"
    );
    // Nor does an os-release codename that is not a plain word: a note instead of the commands.
    let os = std::fs::read_to_string(t.path().join("etc/os-release")).unwrap();
    std::fs::write(
        t.path().join("etc/os-release"),
        os.replace("UBUNTU_CODENAME=jammy", "UBUNTU_CODENAME=\"jammy;reboot\""),
    )
    .unwrap();
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--target",
        "rocm-6.1.2",
    ]));
    assert!(!text.contains("reboot/"), "{text}");
    assert!(
        text.contains("is not a plain codename, so it is not put into a command"),
        "{text}"
    );
}

/// `fix --apply --target TARGET` on the tree at `root`: its output, after checking it installed nothing (the tree
/// hashes as `original`, no journal was written).
fn apply_installs_nothing(root: &Path, target: &str, original: &str) -> String {
    let tree = root.to_str().unwrap();
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--target",
        target,
        "--apply",
    ]));
    assert_eq!(
        tree_hash(root),
        original,
        "an install was performed in a tree"
    );
    assert!(!root.join(".rocmenv/fix").exists());
    text
}

/// The `fix.install` action's commands in a `fix --json` plan.
fn install_commands(plan: &Value) -> Vec<String> {
    let install: Vec<&Value> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["id"] == "fix.install")
        .collect();
    assert_eq!(install.len(), 1, "{plan:#}");
    install[0]["change"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_7x_target_prints_amds_7x_commands_and_never_runs_them() {
    // RHEL 9.4 with ROCm 6.2.0, against 7.2.4: AMD's 7.x installer (directory 7.2.4, package 7.2.4.70204-1).
    let t = copy_of("rhel94-mi300x-x8");
    let tree = t.path().to_str().unwrap();
    let original = tree_hash(t.path());
    let o = rocmenv(&["fix", "--sysroot", tree, "--target", "rocm-7.2.4", "--json"]);
    let commands = install_commands(&serde_json::from_slice(&o.stdout).unwrap());
    assert_eq!(
        commands[0],
        "sudo dnf install https://repo.radeon.com/amdgpu-install/7.2.4/rhel/9.4/amdgpu-install-7.2.4.70204-1.el9.noarch.rpm"
    );
    // Its amdgpu-dkms is outside 7.2.4's window too: RHEL 9's headers, then the driver.
    assert!(
        commands.iter().any(|c| c == "sudo dnf install rocm")
            && commands
                .iter()
                .any(|c| c.contains("\"kernel-devel-matched-$(uname -r)\""))
            && commands.last().unwrap() == "sudo dnf install amdgpu-dkms",
        "{commands:?}"
    );
    let text = apply_installs_nothing(t.path(), "rocm-7.2.4", &original);
    assert!(text.contains("rocmenv never runs them"), "{text}");

    // Ubuntu 24.04 with ROCm 6.2.0 (its amdgpu-dkms inside 7.0's window), against 7.0.0: a .0 release's
    // directory is `7.0`, and only ROCm's steps follow the installer.
    let t = copy_of("radeon780m-apu-ubuntu2404");
    let tree = t.path().to_str().unwrap();
    let original = tree_hash(t.path());
    let o = rocmenv(&["fix", "--sysroot", tree, "--target", "rocm-7.0.0", "--json"]);
    let commands = install_commands(&serde_json::from_slice(&o.stdout).unwrap());
    assert_eq!(
        commands[..3],
        [
            "wget https://repo.radeon.com/amdgpu-install/7.0/ubuntu/noble/amdgpu-install_7.0.70000-1_all.deb",
            "sudo apt install ./amdgpu-install_7.0.70000-1_all.deb",
            "sudo apt update"
        ]
    );
    assert_eq!(
        commands[3..],
        [
            "sudo apt install python3-setuptools python3-wheel",
            "sudo usermod -a -G render,video $LOGNAME",
            "sudo apt install rocm"
        ]
    );
    assert_eq!(tree_hash(t.path()), original);

    // The Core SDK's 7.14 is not the legacy 7.x: a note, no commands.
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--target",
        "rocm-7.14.0",
    ]));
    assert!(
        !text.contains("amdgpu-install_") && text.contains("skipped install: ROCm 7.14.0"),
        "{text}"
    );

    // A codename that is not a plain word never reaches a 7.x command either.
    let os = std::fs::read_to_string(t.path().join("etc/os-release")).unwrap();
    assert!(os.contains("UBUNTU_CODENAME=noble"), "{os}");
    std::fs::write(
        t.path().join("etc/os-release"),
        os.replace("UBUNTU_CODENAME=noble", "UBUNTU_CODENAME=\"noble;reboot\""),
    )
    .unwrap();
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--target",
        "rocm-7.2.4",
    ]));
    assert!(
        !text.contains("amdgpu-install_")
            && text.contains("is not a plain codename, so it is not put into a command"),
        "{text}"
    );
}
