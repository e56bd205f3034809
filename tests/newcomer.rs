//! Issue 25, "a newcomer's first hour": the answers a first run gives, through the binary, on captured host trees
//! (no daemon, no GPU needed): doctor's verdict, `--only` and `--expect-gpus`; `matrix gpu`; nearest suggestions that
//! look past the end of a list; and `run` saying when it maps no GPU.

use std::path::Path;
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
        .display()
        .to_string()
}

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("rocmenv runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The first line is the verdict; `--only AREA` keeps that area; `--only ID` one check; a name that is neither is a
/// usage error listing the areas.
#[test]
fn doctor_opens_with_a_verdict_and_checks_one_area_with_only() {
    let tree = fixture("mi300x-x4-ubuntu2204");
    let o = rocmenv(&["doctor", "--sysroot", &tree, "--target", "rocm-6.2"]);
    let out = text(&o.stdout);
    assert!(
        out.starts_with("verdict: this host tree can run PyTorch on ROCm 6.2.4 on 4 of 4 GPUs"),
        "{out}"
    );
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &tree,
        "--target",
        "rocm-6.2",
        "--only",
        "topology",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let checks = doc["checks"].as_array().unwrap();
    assert!(!checks.is_empty());
    assert!(
        checks
            .iter()
            .all(|c| c["id"].as_str().unwrap().starts_with("pcie.") || c["id"] == "topology.numa"),
        "{checks:?}"
    );
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &tree,
        "--only",
        "devices.kfd",
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let ids: Vec<&str> = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["devices.kfd"]);
    let o = rocmenv(&["doctor", "--sysroot", &tree, "--only", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.starts_with("rocmenv: --only: `nosuch` is no area (system, gpu,")
            && e.lines().count() == 1,
        "{e}"
    );
}

/// `--expect-gpus N` fails a node that shows fewer GPUs (one fell off the bus), and passes one that shows N.
#[test]
fn expect_gpus_fails_a_node_with_fewer() {
    let tree = fixture("mi300x-x4-ubuntu2204");
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &tree,
        "--target",
        "rocm-6.2",
        "--expect-gpus",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("4 GPU(s) found, 4 expected"));
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &tree,
        "--target",
        "rocm-6.2",
        "--expect-gpus",
        "8",
        "--only",
        "gpu.count",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(
        out.contains("✗ 4 of 8 expected GPU(s) found (--expect-gpus 8)"),
        "{out}"
    );
    assert!(out.contains("lspci -d 1002:"), "{out}");
}

/// `rocmenv matrix gpu` finds a model by name or id, with its gfx table; an unknown one exits 2 in one line.
#[test]
fn matrix_gpu_looks_up_a_model() {
    let o = rocmenv(&["matrix", "gpu", "MI300X"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("MI300X") && out.contains("gfx942"), "{out}");
    let o = rocmenv(&["matrix", "gpu", "1002:744c", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["query"], "gpu");
    assert!(
        doc["gpu"][0]["name"].as_str().unwrap().contains("7900 XTX"),
        "{doc}"
    );
    let o = rocmenv(&["matrix", "gpu", "Voodoo 5"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr).lines().count(), 1);
}

/// `--rocm 6.9` suggested only 6.4.x though 7.x is as near; `matrix kernel 6.18` did not say it is past the newest.
#[test]
fn nearest_suggestions_look_both_ways_and_past_the_end() {
    let o = rocmenv(&["matrix", "rocm", "6.9"]);
    let e = text(&o.stderr);
    assert!(
        e.contains("6.4.4") && e.contains("7.0.") && !e.contains("6.4.3"),
        "{e}"
    );
    // 6.18 lies between listed series (6.17, and the Core SDK's 7.0): both sides are named.
    let o = rocmenv(&["matrix", "kernel", "6.18"]);
    let e = text(&o.stderr);
    assert!(
        e.contains("6.17") && e.contains("7.0") && !e.contains("newer than any"),
        "{e}"
    );
    let o = rocmenv(&["matrix", "kernel", "99.1"]);
    let e = text(&o.stderr);
    assert!(e.contains("(99.1 is newer than any listed)"), "{e}");
}

/// A run that could have had a GPU says it maps none; `--vendor cpu` asked for the CPU and gets no note.
#[test]
fn run_says_when_it_maps_no_gpu() {
    let tree = fixture("no-gpu-debian12");
    let o = rocmenv(&[
        "run",
        "--print",
        "--sysroot",
        &tree,
        "--image",
        "x",
        "--",
        "true",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    assert!(
        e.contains("rocmenv run: note: maps no GPU (this host shows none)"),
        "{e}"
    );
    let o = rocmenv(&[
        "run",
        "--print",
        "--vendor",
        "cpu",
        "--sysroot",
        &tree,
        "--image",
        "x",
        "--",
        "true",
    ]);
    assert!(
        !text(&o.stderr).contains("maps no GPU"),
        "{}",
        text(&o.stderr)
    );
}
