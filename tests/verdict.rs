//! Issue 33: doctor's verdict line and its exit code come from one function. On every captured host tree (against
//! its own target, a ROCm, a CUDA and an NGC target, with and without --strict and --only) and on the live host, a
//! line that says the host can run exits 0 and one that says it cannot (or fails) exits 1.

use std::path::PathBuf;
use std::process::Command;

fn trees() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && p.file_name().unwrap() != "gen")
        .collect();
    out.sort();
    assert!(out.len() >= 15, "fixture trees: {out:?}");
    out
}

/// Runs doctor and returns (exit code, first stdout line).
fn doctor(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .arg("doctor")
        .args(args)
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&o.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    (o.status.code().unwrap_or(-1), line)
}

/// The line's answer: true for "can run" / "passes", false for "cannot" / "fails" / "--strict fails".
fn says_yes(line: &str) -> bool {
    assert!(line.starts_with("verdict: "), "no verdict line: {line}");
    let no = line.contains(" cannot ") || line.contains(" fails ");
    let yes = line.contains(" can run ") || line.contains(" passes ");
    assert!(
        yes != no || (no && line.contains("--strict fails")),
        "ambiguous: {line}"
    );
    !no
}

fn agree(args: &[&str]) {
    let (code, line) = doctor(args);
    let want = if says_yes(&line) { 0 } else { 1 };
    assert_eq!(code, want, "doctor {args:?}: `{line}` exited {code}");
}

#[test]
fn every_trees_verdict_agrees_with_its_exit_code() {
    for t in trees() {
        let t = t.to_str().unwrap();
        for target in [None, Some("rocm-6.2"), Some("cuda-12.4"), Some("ngc-24.05")] {
            let mut args = vec!["--sysroot", t];
            if let Some(x) = target {
                args.extend(["--target", x]);
            }
            agree(&args);
            agree(&[args.as_slice(), &["--strict"]].concat());
            agree(&[args.as_slice(), &["--only", "env.hsa-override"]].concat());
        }
    }
}

#[test]
fn the_live_host_verdict_agrees_with_its_exit_code() {
    agree(&[]);
    agree(&["--only", "env.hsa-override"]);
    agree(&["--strict"]);
}

/// Issue 33: the H100 tree passed a ROCm target on per-GPU skips alone, and the MI300X tree against CUDA was told
/// to install an NVIDIA driver. Both fail on `gpu.vendor`, naming the GPUs the host has.
#[test]
fn the_wrong_vendors_target_fails_and_installs_no_driver() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    for (tree, target, has, other) in [
        (
            "h100-x8-ubuntu2204",
            "rocm-6.2",
            "8× NVIDIA H100 SXM5 80GB",
            "ROCm 6.2.4 runs on AMD GPUs",
        ),
        (
            "mi300x-x4-ubuntu2204",
            "cuda-12.4",
            "4× AMD Instinct MI300X",
            "CUDA 12.4.1 runs on NVIDIA GPUs",
        ),
        (
            "mi300x-x4-ubuntu2204",
            "ngc-24.05",
            "4× AMD Instinct MI300X",
            "runs on NVIDIA GPUs",
        ),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args(["doctor", "--json", "--sysroot"])
            .arg(dir.join(tree))
            .args(["--target", target])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{tree} {target}");
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let checks = doc["checks"].as_array().unwrap();
        let vendor = checks
            .iter()
            .find(|c| c["id"] == "gpu.vendor")
            .expect("gpu.vendor");
        assert_eq!(vendor["status"], "fail");
        let summary = vendor["summary"].as_str().unwrap();
        assert!(
            summary.contains(has) && summary.contains(other),
            "{summary}"
        );
        for c in checks {
            let fix = c["fix"].as_str().unwrap_or_default();
            let installs_the_wrong_driver = if target.starts_with("rocm") {
                fix.contains("amdgpu-install") || fix.contains("install ROCm")
            } else {
                fix.contains("nvidia-driver") || fix.contains("cuda-drivers")
            };
            assert!(
                !installs_the_wrong_driver,
                "{tree} {target}: {} fixes with `{fix}`",
                c["id"]
            );
        }
        assert_eq!(doc["verdict"]["exit_code"], 1);
    }
}
