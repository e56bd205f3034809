//! `rocmenv lint` (issue 35): a user's own Dockerfiles, env files, compose files and manifests, judged without a
//! daemon. Each test runs the built binary on real files and reads its JSON.

#[path = "common/dockerfiles.rs"]
mod dockerfiles;

use rocmenv::dockerfile::render;
use rocmenv::matrix::Matrices;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const FIELD: &str = "tests/fixtures/lint/field-report";

fn lint(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .arg("lint")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

/// The JSON report and the exit code.
fn lint_json(args: &[&str]) -> (Value, i32) {
    let mut a = vec!["--json"];
    a.extend_from_slice(args);
    let out = lint(&a);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap())
}

fn findings<'a>(doc: &'a Value, id: &str) -> Vec<&'a Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id)
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn finds_the_three_mistakes_of_the_field_report() {
    let (doc, code) = lint_json(&[&format!("{FIELD}/Dockerfile"), &format!("{FIELD}/tune.sh")]);
    assert_eq!(code, 1, "{doc:#}");
    let base = findings(&doc, "lint.base-image");
    assert_eq!(base.len(), 1, "{doc:#}");
    assert_eq!(base[0]["status"], "fail");
    assert_eq!(base[0]["line"], 3);
    assert!(base[0]["summary"]
        .as_str()
        .unwrap()
        .contains("rocm/pytorch:latest"));
    // The fix names a real, pinned tag.
    assert!(
        base[0]["fix"]
            .as_str()
            .unwrap()
            .contains("rocm/pytorch:rocm"),
        "{doc:#}"
    );

    let arch = findings(&doc, "lint.override-arch");
    assert_eq!(arch.len(), 1, "{doc:#}");
    let s = arch[0]["summary"].as_str().unwrap();
    // Both values and both lines.
    for part in [
        "HSA_OVERRIDE_GFX_VERSION=9.0.0 (line 5)",
        "gfx900",
        "HCC_AMDGPU_TARGET=gfx90a (line 6)",
    ] {
        assert!(s.contains(part), "{part} not in {s}");
    }
    assert_eq!(arch[0]["line"], 5);

    let hcc: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["summary"].as_str().unwrap().starts_with("HCC_OPT_LEVEL"))
        .collect();
    assert_eq!(hcc.len(), 1, "{doc:#}");
    assert_eq!(hcc[0]["path"], format!("{FIELD}/tune.sh"));
    assert_eq!(hcc[0]["line"], 3);
    assert_eq!(hcc[0]["status"], "warn");
}

#[test]
fn the_text_report_names_file_line_and_fix() {
    let out = lint(&[&format!("{FIELD}/Dockerfile"), "--gfx", "gfx90a"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.starts_with("rocmenv lint: "), "{text}");
    assert!(
        text.contains(&format!("✗ {FIELD}/Dockerfile:5 lint.override-arch: ")),
        "{text}"
    );
    // Against a gfx90a, which runs natively, the override is also wrong for the GPU.
    assert!(text.contains("lint.override-gpu"), "{text}");
    assert!(text.contains("    fix: "), "{text}");
    assert!(text.lines().last().unwrap().contains("failed"), "{text}");
}

#[test]
fn every_generated_dockerfile_has_no_failure() {
    let m = Matrices::embedded().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, req) in dockerfiles::cases(&m) {
        let out = render(&req, &m).unwrap_or_else(|e| panic!("{name}: {e}"));
        paths.push(write(
            dir.path(),
            &format!("{name}.Dockerfile"),
            &out.dockerfile,
        ));
        // Against the GPUs the Dockerfile was made for, too, when the request named them and set nothing itself.
        if !req.gfx.is_empty() && req.env.is_empty() {
            let p = paths.last().unwrap().to_str().unwrap().to_string();
            let mut args = vec![p];
            for g in &req.gfx {
                args.extend(["--gfx".to_string(), g.to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let (doc, code) = lint_json(&args);
            assert_eq!(doc["summary"]["fail"], 0, "{name}: {doc:#}");
            assert_eq!(code, 0, "{name}");
        }
    }
    assert!(paths.len() > 10, "only {} Dockerfiles", paths.len());
    let args: Vec<&str> = paths.iter().map(|p| p.to_str().unwrap()).collect();
    let (doc, code) = lint_json(&args);
    assert_eq!(doc["files"].as_array().unwrap().len(), paths.len());
    assert_eq!(doc["summary"]["fail"], 0, "{doc:#}");
    assert_eq!(code, 0, "{doc:#}");
}

#[test]
fn an_override_is_judged_against_the_gpus_of_a_tree() {
    let dir = tempfile::tempdir().unwrap();
    // The RX 6700 XT (gfx1031) runs through 10.3.0; 11.0.0 forces it onto RDNA3 kernels.
    let good = write(dir.path(), "good.env", "HSA_OVERRIDE_GFX_VERSION=10.3.0\n");
    let bad = write(
        dir.path(),
        "bad.env",
        "# set by hand\nHSA_OVERRIDE_GFX_VERSION=11.0.0\n",
    );
    let tree = "tests/fixtures/hosts/rx6700xt-ubuntu2204";
    let (doc, code) = lint_json(&["--sysroot", tree, "--rocm", "6.2", good.to_str().unwrap()]);
    assert_eq!(findings(&doc, "lint.override-gpu").len(), 0, "{doc:#}");
    assert_eq!(code, 0, "{doc:#}");
    assert!(
        doc["gpus"].as_str().unwrap().contains("host tree"),
        "{doc:#}"
    );
    let (doc, code) = lint_json(&["--sysroot", tree, "--rocm", "6.2", bad.to_str().unwrap()]);
    let f = findings(&doc, "lint.override-gpu");
    assert_eq!(f.len(), 1, "{doc:#}");
    assert_eq!(f[0]["line"], 2);
    assert!(
        f[0]["summary"].as_str().unwrap().contains("11.0.0"),
        "{doc:#}"
    );
    assert!(f[0]["fix"].as_str().unwrap().contains("10.3.0"), "{doc:#}");
    assert_eq!(code, 1);
}

#[test]
fn without_gpus_the_gpu_rule_says_skip_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(dir.path(), "x.env", "HSA_OVERRIDE_GFX_VERSION=10.3.0\n");
    let (doc, _) = lint_json(&[
        "--sysroot",
        "tests/fixtures/hosts/no-gpu-debian12",
        f.to_str().unwrap(),
    ]);
    let s = findings(&doc, "lint.gpus");
    assert_eq!(s.len(), 1, "{doc:#}");
    assert_eq!(s[0]["status"], "skip");
    assert!(
        s[0]["summary"]
            .as_str()
            .unwrap()
            .contains("no AMD or NVIDIA GPU"),
        "{doc:#}"
    );
}

#[test]
fn compose_and_kubernetes_environments() {
    let dir = tempfile::tempdir().unwrap();
    let compose = write(
        dir.path(),
        "compose.yaml",
        "services:\n  train:\n    image: rocm/pytorch\n    environment:\n      HSA_OVERRIDE_GFX_VERSION: \"11.0.0\"\n      PYTORCH_ROCM_ARCH: gfx1030\n      HIP_VISIBLE_DEVICES: \"0\"\n      NVIDIA_VISIBLE_DEVICES: all\n",
    );
    let (doc, code) = lint_json(&[compose.to_str().unwrap()]);
    assert_eq!(code, 1);
    let base = findings(&doc, "lint.base-image");
    assert_eq!(
        (base.len(), &base[0]["line"]),
        (1, &Value::from(3)),
        "{doc:#}"
    );
    let arch = findings(&doc, "lint.override-arch");
    assert_eq!(arch[0]["line"], 5, "{doc:#}");
    assert!(arch[0]["summary"]
        .as_str()
        .unwrap()
        .contains("PYTORCH_ROCM_ARCH=gfx1030 (line 6)"));
    let mixed = findings(&doc, "lint.visible-devices");
    assert_eq!(mixed.len(), 1, "{doc:#}");
    assert_eq!(mixed[0]["status"], "warn");

    let k8s = write(
        dir.path(),
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: smoke\nspec:\n  template:\n    spec:\n      containers:\n      - name: t\n        image: nvcr.io/nvidia/pytorch:24.05-py3\n        command: [\"pip\", \"install\", \"--index-url\", \"https://download.pytorch.org/whl/cu118\", \"torch\"]\n        env:\n        - name: CUDA_VISIBLE_DEVICES\n          value: \"0\"\n",
    );
    let (doc, code) = lint_json(&[k8s.to_str().unwrap()]);
    let idx = findings(&doc, "lint.index-url");
    assert_eq!(idx.len(), 1, "{doc:#}");
    let s = idx[0]["summary"].as_str().unwrap();
    assert!(s.contains("CUDA 118") && s.contains("CUDA 12.4"), "{s}");
    assert_eq!(findings(&doc, "lint.base-image").len(), 0, "{doc:#}");
    assert_eq!(code, 1);
}

#[test]
fn an_index_for_another_rocm_than_the_image() {
    let dir = tempfile::tempdir().unwrap();
    let from = "FROM rocm/pytorch:rocm6.2_ubuntu20.04_py3.9_pytorch_2.2.1\n";
    let wrong = write(
        dir.path(),
        "Dockerfile.wrong",
        &format!(
            "{from}RUN pip3 install --index-url https://download.pytorch.org/whl/rocm6.1 torch\n"
        ),
    );
    let right = write(
        dir.path(),
        "Dockerfile.right",
        &format!(
            "{from}RUN pip3 install --index-url=https://download.pytorch.org/whl/rocm6.2 torch\n"
        ),
    );
    let (doc, code) = lint_json(&[wrong.to_str().unwrap()]);
    let f = findings(&doc, "lint.index-url");
    assert_eq!(f.len(), 1, "{doc:#}");
    assert_eq!(f[0]["line"], 2);
    assert!(
        f[0]["summary"].as_str().unwrap().contains("ROCm 6.1"),
        "{doc:#}"
    );
    assert_eq!(code, 1);
    let (doc, code) = lint_json(&[right.to_str().unwrap()]);
    assert_eq!(findings(&doc, "lint.index-url").len(), 0, "{doc:#}");
    assert_eq!(code, 0, "{doc:#}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let yaml = write(dir.path(), "compose.yaml", "services:\n  a: [\n");
    let latin1 = dir.path().join("x.env");
    std::fs::write(&latin1, b"A=\xe9\n").unwrap();
    for (arg, want) in [
        (yaml.to_str().unwrap(), "not valid YAML"),
        (latin1.to_str().unwrap(), "not UTF-8"),
        (dir.path().to_str().unwrap(), "not a regular file"),
        ("/nonexistent/Dockerfile", "cannot read it"),
    ] {
        let out = lint(&[arg]);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{arg}: {err}");
        assert!(err.contains(arg) && err.contains(want), "{arg}: {err}");
    }
    let out = lint(&["--gfx", "gfx9999", "x"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn variables_nothing_reads_get_did_you_mean() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "profile.sh",
        "export HIP_VISIBLE_DEVICE=0\nexport HSA_OVERRIDE_GFX_VERSION_1=10.3.0\nexport HSA_ENABLE_SDMA=0\nexport MY_APP_MODE=fast\n",
    );
    let (doc, _) = lint_json(&[f.to_str().unwrap(), "--gfx", "gfx1100", "--gfx", "gfx1031"]);
    let unread = findings(&doc, "lint.variable-unread");
    assert_eq!(unread.len(), 1, "{doc:#}");
    assert_eq!(unread[0]["line"], 1);
    assert!(
        unread[0]["fix"]
            .as_str()
            .unwrap()
            .contains("did you mean HIP_VISIBLE_DEVICES"),
        "{doc:#}"
    );
    // A per-node override, a variable ROCr reads, and an application's own variable are not reported as unread.
    let all: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["summary"].as_str().unwrap())
        .collect();
    assert!(
        !all.iter()
            .any(|s| s.starts_with("HSA_ENABLE_SDMA") || s.starts_with("MY_APP_MODE")),
        "{all:?}"
    );
    assert!(
        !all.iter()
            .any(|s| s.contains("HSA_OVERRIDE_GFX_VERSION_1 is read by no")),
        "{all:?}"
    );
}
