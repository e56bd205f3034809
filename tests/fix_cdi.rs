//! `rocmenv fix`'s CDI spec (issue 35): on a copy of a captured MI300X ×4 tree the spec is written as
//! `amd-ctk cdi generate` writes it, a second `--apply` plans nothing, `--undo` restores the tree byte for byte; the
//! spec validates against the CDI JSON schema (vendored in tests/fixtures/schemas/cdi, with its source), and Podman
//! hands its devices to a real container once its nodes are pointed at nodes this machine has.
//!
//! check-jsonschema and Podman are external: without them the tests say SKIP and why, unless
//! ROCMENV_REQUIRE_CHECK_JSONSCHEMA / ROCMENV_PODMAN_TESTS=1 (set by CI) make that a failure.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;
#[allow(dead_code)]
#[path = "common/trees.rs"]
mod trees;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use trees::{copy_of, ok, rocmenv, tree_hash};

const TREE: &str = "mi300x-x4-ubuntu2204";

/// The spec `fix --only fix.cdi --apply` writes in a copy of the MI300X tree, and the copy.
fn written_spec() -> (tempfile::TempDir, Value) {
    let t = copy_of(TREE);
    let tree = t.path().to_str().unwrap();
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--only",
        "fix.cdi",
        "--apply",
    ]));
    assert!(text.contains("applied 1 action(s)"), "{text}");
    let spec = std::fs::read_to_string(t.path().join("etc/cdi/amd.json")).unwrap();
    (t, serde_json::from_str(&spec).unwrap())
}

fn node_paths(dev: &Value) -> Vec<&str> {
    dev["containerEdits"]["deviceNodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["path"].as_str().unwrap())
        .collect()
}

#[test]
fn the_spec_is_amds_layout_for_the_trees_gpus_and_round_trips() {
    let t = copy_of(TREE);
    let tree = t.path().to_str().unwrap();
    // A host with no spec yet (the tree has one, in an older layout: the next test replaces it).
    std::fs::remove_dir_all(t.path().join("etc/cdi")).unwrap();
    let original = tree_hash(t.path());

    let o = rocmenv(&["fix", "--sysroot", tree, "--only", "fix.cdi", "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0));
    let actions = plan["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 1, "{plan:#}");
    assert_eq!(actions[0]["id"], "fix.cdi");
    assert_eq!(actions[0]["change"]["kind"], "edit");
    assert_eq!(actions[0]["change"]["path"], "/etc/cdi/amd.json");
    assert_eq!(actions[0]["change"]["before"], Value::Null);
    assert!(actions[0]["source"]
        .as_str()
        .unwrap()
        .starts_with("https://github.com/ROCm/container-toolkit/blob/"));
    assert_eq!(tree_hash(t.path()), original, "a dry run changed the tree");

    ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--only",
        "fix.cdi",
        "--apply",
    ]));
    let text = std::fs::read_to_string(t.path().join("etc/cdi/amd.json")).unwrap();
    // What the plan showed is what was written, byte for byte.
    assert_eq!(actions[0]["change"]["after"].as_str().unwrap(), text);
    let spec: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(spec["kind"], "amd.com/gpu");
    let devices = spec["devices"].as_array().unwrap();
    let names: Vec<&str> = devices
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["0", "1", "2", "3", "all"]);
    // The tree's GPUs in PCI order: 26:00.0 has card1 and renderD128 (card0 is the BMC's VGA, not an AMD GPU).
    assert_eq!(
        node_paths(&devices[0]),
        ["/dev/dri/card1", "/dev/dri/renderD128", "/dev/kfd"]
    );
    assert_eq!(
        node_paths(&devices[3]),
        ["/dev/dri/card4", "/dev/dri/renderD131", "/dev/kfd"]
    );
    assert_eq!(node_paths(&devices[4]).len(), 9);
    assert_eq!(node_paths(&devices[4])[8], "/dev/kfd");
    // The modes and groups recorded for the nodes: 0660 = 432, render 109, video 44.
    let render = &devices[0]["containerEdits"]["deviceNodes"][1];
    assert_eq!(render["fileMode"], 432);
    assert_eq!(render["gid"], 109);
    assert_eq!(devices[0]["containerEdits"]["deviceNodes"][0]["gid"], 44);

    let applied = tree_hash(t.path());
    let text = ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--only",
        "fix.cdi",
        "--apply",
    ]));
    assert!(text.contains("nothing to fix"), "{text}");
    assert_eq!(
        tree_hash(t.path()),
        applied,
        "a second --apply changed the tree"
    );

    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert!(text.contains("removed /etc/cdi/amd.json"), "{text}");
    assert!(
        !t.path().join("etc/cdi").exists(),
        "the made directory stays"
    );
    assert_eq!(
        tree_hash(t.path()),
        original,
        "--undo did not restore the tree"
    );
}

#[test]
fn a_stale_spec_is_replaced_and_restored_and_hosts_without_an_engine_get_a_note() {
    // The tree's spec lists only the DRM nodes per device and /dev/kfd once, for the whole spec.
    let t = copy_of(TREE);
    let tree = t.path().to_str().unwrap();
    let stale = std::fs::read_to_string(t.path().join("etc/cdi/amd.json")).unwrap();
    let original = tree_hash(t.path());
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--only", "fix.cdi"]));
    assert!(
        text.contains("fix.cdi — replace AMD's CDI spec for 4 GPU(s)"),
        "{text}"
    );
    assert!(text.contains("edit /etc/cdi/amd.json:"), "{text}");
    ok(&rocmenv(&[
        "fix",
        "--sysroot",
        tree,
        "--only",
        "fix.cdi",
        "--apply",
    ]));
    assert_ne!(
        std::fs::read_to_string(t.path().join("etc/cdi/amd.json")).unwrap(),
        stale
    );
    let text = ok(&rocmenv(&["fix", "--sysroot", tree, "--undo"]));
    assert!(text.contains("restored /etc/cdi/amd.json"), "{text}");
    assert_eq!(tree_hash(t.path()), original);

    // An RX 6700 XT tree with no container engine: no spec, and the plan says why.
    let t = copy_of("rx6700xt-ubuntu2204");
    let o = rocmenv(&["fix", "--sysroot", t.path().to_str().unwrap(), "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        !plan["actions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "fix.cdi"),
        "{plan:#}"
    );
    assert!(
        plan["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("no container engine")),
        "{plan:#}"
    );

    // NVIDIA's spec comes from the live driver: on a tree it is a note with the command to run.
    let t = copy_of("h100-x8-ubuntu2204");
    let o = rocmenv(&["fix", "--sysroot", t.path().to_str().unwrap(), "--json"]);
    let plan: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        plan["notes"].as_array().unwrap().iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml")),
        "{plan:#}"
    );
}

/// check-jsonschema's answer for `file` against the vendored CDI schema; `None` (after saying SKIP) when it cannot run.
fn check_schema(file: &Path) -> Option<Output> {
    let schema =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schemas/cdi/schema.json");
    match Command::new("check-jsonschema")
        .arg("--schemafile")
        .arg(&schema)
        .arg(file)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            assert!(
                std::env::var_os("ROCMENV_REQUIRE_CHECK_JSONSCHEMA").is_none(),
                "ROCMENV_REQUIRE_CHECK_JSONSCHEMA is set but check-jsonschema cannot run ({e}): pip install check-jsonschema"
            );
            eprintln!("SKIP the_spec_validates_against_the_cdi_schema: check-jsonschema is not on PATH (pip install check-jsonschema)");
            None
        }
    }
}

#[test]
fn the_spec_validates_against_the_cdi_schema() {
    let (t, _) = written_spec();
    let file = t.path().join("etc/cdi/amd.json");
    let Some(o) = check_schema(&file) else { return };
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // The checker can fail: a device node without its required `path`.
    let text = std::fs::read_to_string(&file).unwrap();
    let bad = t.path().join("bad.json");
    std::fs::write(&bad, text.replacen("\"path\": \"/dev/kfd\",", "", 1)).unwrap();
    let o = check_schema(&bad).unwrap();
    assert_ne!(o.status.code(), Some(0), "a node without a path validated");
}

fn podman_required() -> bool {
    std::env::var("ROCMENV_PODMAN_TESTS").as_deref() == Ok("1")
}

fn skip(why: &str) {
    assert!(!podman_required(), "ROCMENV_PODMAN_TESTS=1 but {why}");
    eprintln!("SKIP podman_hands_the_specs_devices_to_a_container: {why} (ROCMENV_PODMAN_TESTS=1 makes this a failure)");
}

/// Podman's image of the test base: already in its store, or loaded from the Docker daemon's copy.
fn podman_image() -> Result<String, String> {
    let image = format!("localhost/{}", common::BASE);
    let has = |i: &str| {
        Command::new("podman")
            .args(["image", "exists", i])
            .status()
            .is_ok_and(|s| s.success())
    };
    if has(&image) {
        return Ok(image);
    }
    let load = Command::new("sh")
        .args(["-c", &format!("docker save {} | podman load", common::BASE)])
        .output()
        .map_err(|e| e.to_string())?;
    if load.status.success() && has(&image) {
        return Ok(image);
    }
    Err(format!(
        "{image} is not in Podman's store and `docker save {} | podman load` failed: {}",
        common::BASE,
        String::from_utf8_lossy(&load.stderr).trim()
    ))
}

/// A spec file in one of Podman's CDI directories, removed when dropped.
struct SpecFile(PathBuf);

impl Drop for SpecFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `spec` with every node taken from one this machine has (the container path stays), the numbers left to Podman.
fn on_this_machine(spec: &mut Value) {
    for d in spec["devices"].as_array_mut().unwrap() {
        for n in d["containerEdits"]["deviceNodes"].as_array_mut().unwrap() {
            let path = n["path"].as_str().unwrap().to_string();
            let host = if path == "/dev/kfd" {
                "/dev/null"
            } else if path.contains("renderD") {
                "/dev/zero"
            } else {
                "/dev/full"
            };
            let o = n.as_object_mut().unwrap();
            o.insert("hostPath".into(), host.into());
            o.remove("major");
            o.remove("minor");
        }
    }
}

fn podman_run(image: &str, device: &str, cmd: &str) -> Output {
    Command::new("podman")
        .args([
            "run",
            "--rm",
            "--network=none",
            "--device",
            device,
            image,
            "sh",
            "-c",
            cmd,
        ])
        .output()
        .expect("podman runs")
}

#[test]
fn podman_hands_the_specs_devices_to_a_container() {
    if Command::new("podman").arg("--version").output().is_err() {
        return skip("podman is not on PATH");
    }
    let image = match podman_image() {
        Ok(i) => i,
        Err(why) => return skip(&why),
    };
    // Podman reads /etc/cdi and /var/run/cdi; a file of our own in the latter, removed after.
    let dir = Path::new("/var/run/cdi");
    if std::fs::create_dir_all(dir).is_err() || tempfile::tempfile_in(dir).is_err() {
        return skip("/var/run/cdi is not writable (Podman reads CDI specs only from /etc/cdi and /var/run/cdi)");
    }
    let (_t, mut spec) = written_spec();
    on_this_machine(&mut spec);
    let file = SpecFile(dir.join(format!("rocmenv-test-{}.json", std::process::id())));
    std::fs::write(&file.0, serde_json::to_string_pretty(&spec).unwrap()).unwrap();

    let o = podman_run(&image, "amd.com/gpu=0", "ls -n /dev/dri /dev/kfd");
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    // GPU 0's card and render node and /dev/kfd, as character devices with the spec's group, and no other GPU's.
    for want in ["card1", "renderD128", "/dev/kfd"] {
        assert!(out.contains(want), "{want} missing:\n{out}");
    }
    assert!(!out.contains("renderD129"), "{out}");
    let render = out.lines().find(|l| l.ends_with("renderD128")).unwrap();
    assert!(render.starts_with("crw-rw----"), "{render}");
    assert_eq!(render.split_whitespace().nth(3), Some("109"), "{render}");

    let o = podman_run(&image, "amd.com/gpu=all", "ls /dev/dri");
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let names: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(
        names,
        [
            "card1",
            "card2",
            "card3",
            "card4",
            "renderD128",
            "renderD129",
            "renderD130",
            "renderD131"
        ]
    );
}
