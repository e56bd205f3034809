//! Issue 33: one answer per host. Over every captured tree with AMD GPUs and every ROCm release whose rocm/pytorch
//! image the matrices name, `env --format json`, `run --print` with that release's image, doctor's fixes and the
//! Dockerfile agree on the override variables, the architecture list and the visible devices; and the user's own
//! wrong variables are corrected by env and warned about (or refused) by run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rocmenv(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.args(args);
    for k in rocmenv::hostplan::USER_VARS {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn trees_with_amd() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("sys/class/kfd").exists() || p.join("sys/module/amdgpu").exists())
        .collect();
    out.sort();
    assert!(out.len() >= 8, "{out:?}");
    out
}

/// Each release with a rocm/pytorch image: (version, one image tag).
fn releases_with_images() -> Vec<(String, String)> {
    let m = rocmenv::matrix::Matrices::embedded().unwrap();
    let out: Vec<(String, String)> = m
        .rocm
        .releases
        .iter()
        .filter_map(|r| {
            r.images
                .first()
                .map(|i| (r.version.to_string(), i.tag.clone()))
        })
        .collect();
    assert!(out.len() >= 10, "{out:?}");
    out
}

/// The variables that describe the GPUs (not the device numbering, which run does by mapping).
fn gpu_vars(map: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    map.iter()
        .filter(|(k, _)| !k.ends_with("_VISIBLE_DEVICES") && *k != "CUDA_DEVICE_ORDER")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn env_json(tree: &Path, rocm: &str) -> Option<BTreeMap<String, String>> {
    let o = rocmenv(
        &[
            "env",
            "--sysroot",
            tree.to_str().unwrap(),
            "--rocm",
            rocm,
            "--format",
            "json",
        ],
        &[],
    );
    if o.status.code() != Some(0) {
        return None; // a release this host cannot run: nothing to agree on
    }
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    Some(
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect(),
    )
}

/// `-e 'K=V'` pairs and the number of render nodes of a printed `docker run` line.
fn run_print(tree: &Path, image: &str) -> (BTreeMap<String, String>, usize) {
    let o = rocmenv(
        &[
            "run",
            "--print",
            "--sysroot",
            tree.to_str().unwrap(),
            "--image",
            image,
            "--",
            "true",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let line = String::from_utf8(o.stdout).unwrap();
    let words = shlex::split(line.trim()).unwrap();
    let mut vars = BTreeMap::new();
    for w in words.windows(2) {
        if w[0] == "-e" {
            let (k, v) = w[1].split_once('=').unwrap();
            vars.insert(k.to_string(), v.to_string());
        }
    }
    let renders = words
        .iter()
        .filter(|w| w.starts_with("--device=/dev/dri/renderD"))
        .count();
    (vars, renders)
}

/// The `export K=V` fixes of doctor's gpu.gfx-supported findings.
fn doctor_fixes(tree: &Path, rocm: &str) -> Vec<(String, String)> {
    let o = rocmenv(
        &[
            "doctor",
            "--json",
            "--sysroot",
            tree.to_str().unwrap(),
            "--target",
            &format!("rocm-{rocm}"),
        ],
        &[],
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "gpu.gfx-supported" && c["status"] == "fail")
        .filter_map(|c| c["fix"].as_str()?.strip_prefix("export "))
        .filter_map(|x| x.split([',', ' ']).next()?.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `ENV` values of a Dockerfile written by `rocmenv dockerfile`.
fn dockerfile_env(tree: &Path, rocm: &str) -> Option<BTreeMap<String, String>> {
    let o = rocmenv(
        &[
            "dockerfile",
            "--stack",
            "rocm",
            "--sysroot",
            tree.to_str().unwrap(),
            "--rocm",
            rocm,
        ],
        &[],
    );
    if o.status.code() != Some(0) {
        return None;
    }
    let text = String::from_utf8(o.stdout).unwrap();
    let mut out = BTreeMap::new();
    let mut in_env = false;
    for line in text.lines() {
        if line.starts_with("ENV ") {
            in_env = true;
        } else if !line.starts_with(' ') {
            in_env = false;
        }
        if in_env {
            if let Some((k, v)) = line.trim().trim_end_matches('\\').trim().split_once('=') {
                out.insert(k.to_string(), v.trim_matches('"').to_string());
            }
        }
    }
    Some(out)
}

#[test]
fn env_run_doctor_and_dockerfile_agree_on_every_tree_and_release() {
    let (mut compared, mut fixes, mut dockerfiles, mut overrides) = (0, 0, 0, 0);
    for tree in trees_with_amd() {
        let amd_gpus = std::fs::read_dir(tree.join("sys/class/drm")).map_or(0, |d| {
            d.filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("renderD")
            })
            .count()
        });
        for (rocm, tag) in releases_with_images() {
            let Some(env) = env_json(&tree, &rocm) else {
                continue;
            };
            let image = format!("rocm/pytorch:{tag}");
            let (run, renders) = run_print(&tree, &image);
            let what = format!("{} on ROCm {rocm}", tree.display());
            assert_eq!(gpu_vars(&env), gpu_vars(&run), "env vs run --print: {what}");
            // Visible devices: run maps exactly the GPUs env leaves visible.
            if let Some(list) = env.get("HIP_VISIBLE_DEVICES") {
                assert_eq!(renders, list.split(',').count(), "visible devices: {what}");
            } else if amd_gpus > 0 && renders > 0 {
                assert_eq!(renders, amd_gpus, "visible devices: {what}");
            }
            overrides += usize::from(env.keys().any(|k| k.starts_with("HSA_OVERRIDE")));
            for (k, v) in doctor_fixes(&tree, &rocm) {
                fixes += 1;
                assert_eq!(env.get(&k), Some(&v), "doctor's fix {k}={v} vs env: {what}");
            }
            if let Some(df) = dockerfile_env(&tree, &rocm) {
                dockerfiles += 1;
                for (k, v) in gpu_vars(&env) {
                    assert_eq!(df.get(&k), Some(&v), "Dockerfile ENV {k} vs env: {what}");
                }
            }
            compared += 1;
        }
    }
    assert!(
        compared > 100,
        "only {compared} tree × release pairs compared"
    );
    // Each comparison ran on real cases: overrides, doctor fixes and Dockerfiles.
    assert!(
        overrides > 10 && fixes > 10 && dockerfiles > 50,
        "{overrides} overrides, {fixes} fixes, {dockerfiles} Dockerfiles"
    );
}

/// Issue 33: run ignored the image's ROCm; with a ROCm 6.2.1 image the RX 6700 XT gets its override.
#[test]
fn the_rx6700xt_gets_its_override_from_a_rocm_62_image() {
    let tree =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/rx6700xt-ubuntu2204");
    let (run, _) = run_print(
        &tree,
        "rocm/pytorch:rocm6.2.1_ubuntu22.04_py3.10_pytorch_release_2.1.2",
    );
    assert_eq!(
        run.get("HSA_OVERRIDE_GFX_VERSION").map(String::as_str),
        Some("10.3.0")
    );
    assert_eq!(
        run.get("PYTORCH_ROCM_ARCH").map(String::as_str),
        Some("gfx1030")
    );
}

/// Issue 33: a wrong exported HSA_OVERRIDE_GFX_VERSION was kept by `eval "$(rocmenv env)"` and passed on by run.
#[test]
fn a_wrong_exported_override_is_corrected_by_env_and_warned_about_by_run() {
    let tree =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/mi210-x4-ubuntu2204");
    let t = tree.to_str().unwrap();
    let wrong = [("HSA_OVERRIDE_GFX_VERSION", "9.0.0")];
    let o = rocmenv(&["env", "--sysroot", t], &wrong);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.lines()
            .any(|l| l.starts_with("unset HSA_OVERRIDE_GFX_VERSION  # ")),
        "{out}"
    );
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("HSA_OVERRIDE_GFX_VERSION=9.0.0")
            && err.contains("AMD GPUs 0, 1, 2, 3 (gfx90a)"),
        "{err}"
    );
    // The shell that evaluates it ends without the variable.
    let sh = Command::new("sh")
        .args([
            "-c",
            &format!("{out}\necho \"[${{HSA_OVERRIDE_GFX_VERSION-unset}}]\""),
        ])
        .env("HSA_OVERRIDE_GFX_VERSION", "9.0.0")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(sh.stdout).unwrap().trim(), "[unset]");
    let json = rocmenv(&["env", "--sysroot", t, "--format", "json"], &wrong);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert!(v["HSA_OVERRIDE_GFX_VERSION"].is_null(), "{v}");
    // A wrong value where the plan sets one: the plan's value, and a warning.
    let rx = tree.with_file_name("rx6700xt-ubuntu2204");
    let o = rocmenv(&["env", "--sysroot", rx.to_str().unwrap()], &wrong);
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("export HSA_OVERRIDE_GFX_VERSION='10.3.0'"));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("this output sets HSA_OVERRIDE_GFX_VERSION=10.3.0"));
    // run -e: a warning naming the devices, passed on; --strict refuses with exit 125 and one line.
    let args = [
        "run",
        "--print",
        "--sysroot",
        t,
        "-e",
        "HSA_OVERRIDE_GFX_VERSION=9.0.0",
        "--image",
        "rocm/pytorch:latest",
        "--",
        "true",
    ];
    let o = rocmenv(&args, &[]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("rocmenv: warning: -e HSA_OVERRIDE_GFX_VERSION=9.0.0")
            && err.contains("(gfx90a)"),
        "{err}"
    );
    assert!(String::from_utf8(o.stdout)
        .unwrap()
        .contains("HSA_OVERRIDE_GFX_VERSION=9.0.0"));
    let o = rocmenv(&[&args[..2], &["--strict"], &args[2..]].concat(), &[]);
    assert_eq!(o.status.code(), Some(125));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(o.stdout.is_empty(), "nothing printed");
    assert_eq!(
        err.lines()
            .filter(|l| l.starts_with("rocmenv: ") && !l.starts_with("rocmenv: note"))
            .count(),
        1,
        "{err}"
    );
}

/// Issue 33: `dockerfile --stack ngc` on an AMD-only host (and rocm on an NVIDIA-only one) said nothing.
#[test]
fn dockerfile_warns_about_the_other_vendors_stack() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    for (tree, stack, has) in [
        ("mi300x-x4-ubuntu2204", "ngc", "4× AMD Instinct MI300X"),
        ("h100-x8-ubuntu2204", "rocm", "8× NVIDIA H100 SXM5 80GB"),
    ] {
        let t = dir.join(tree);
        let o = rocmenv(
            &[
                "dockerfile",
                "--stack",
                stack,
                "--sysroot",
                t.to_str().unwrap(),
            ],
            &[],
        );
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(
            err.lines().any(|l| l
                .starts_with(&format!("rocmenv: warning: --stack {stack} is for"))
                && l.contains(has)),
            "{tree}: {err}"
        );
    }
    // Its own vendor's stack: no such warning.
    let t = dir.join("mi300x-x4-ubuntu2204");
    let o = rocmenv(
        &[
            "dockerfile",
            "--stack",
            "rocm",
            "--sysroot",
            t.to_str().unwrap(),
        ],
        &[],
    );
    assert!(!String::from_utf8(o.stderr)
        .unwrap()
        .contains("is for NVIDIA"));
}

/// Issue 33: `dockerfile --stack rocm --sysroot` on the RX 6700 XT pinned ROCm 10.1.0, whose driver window does not
/// hold the host's amdgpu-dkms (doctor says so). On a host, the release is one whose window holds the driver.
#[test]
fn dockerfile_on_a_host_picks_a_release_whose_driver_window_holds_its_amdgpu() {
    let tree =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/rx6700xt-ubuntu2204");
    let t = tree.to_str().unwrap();
    let o = rocmenv(&["dockerfile", "--stack", "rocm", "--sysroot", t], &[]);
    assert_eq!(o.status.code(), Some(0));
    let from = String::from_utf8(o.stdout).unwrap();
    let from = from
        .lines()
        .find(|l| l.starts_with("FROM "))
        .unwrap()
        .to_string();
    let err = String::from_utf8(o.stderr).unwrap();
    let note = err
        .lines()
        .find(|l| l.contains("whose driver window holds the host's amdgpu-dkms 6.8.5"))
        .unwrap_or_else(|| panic!("{err}"));
    // doctor, against the release the Dockerfile names, passes the driver.
    let release = note
        .split(':')
        .nth(2)
        .unwrap()
        .trim()
        .trim_start_matches("ROCm ")
        .to_string();
    assert!(
        from.contains(&format!("rocm{}", release.trim_end_matches(".0"))),
        "{from} vs {note}"
    );
    let d = rocmenv(
        &[
            "doctor",
            "--json",
            "--sysroot",
            t,
            "--target",
            &format!("rocm-{release}"),
        ],
        &[],
    );
    let doc: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    let drv = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "driver.amdgpu-version")
        .unwrap();
    assert_eq!(drv["status"], "pass", "{drv}");
    // --rocm still chooses, with a note that the driver is outside its window.
    let o = rocmenv(
        &[
            "dockerfile",
            "--stack",
            "rocm",
            "--sysroot",
            t,
            "--rocm",
            "10.1",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8(o.stderr)
        .unwrap()
        .contains("is outside ROCm 10.1.0's driver window"));
}

/// Issue 33: `--base rocm/pytorch:rocm6.2…` installed the 10.1 wheels on top of that image's own ROCm.
#[test]
fn a_base_of_another_release_is_refused_and_a_listed_base_is_used_as_it_is() {
    let base = "rocm/pytorch:rocm6.2.1_ubuntu22.04_py3.10_pytorch_release_2.1.2";
    let o = rocmenv(
        &[
            "dockerfile",
            "--stack",
            "rocm",
            "--rocm",
            "10.1",
            "--base",
            base,
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("is ROCm 6.2.1's image") && err.contains("--rocm 6.2.1"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // Without --rocm, a listed tag is that image, with its own PyTorch.
    let o = rocmenv(
        &[
            "dockerfile",
            "--stack",
            "rocm",
            "--gfx",
            "gfx1031",
            "--base",
            base,
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(0));
    let df = String::from_utf8(o.stdout).unwrap();
    assert!(df.lines().any(|l| l == format!("FROM {base}")), "{df}");
    assert!(df.contains("HSA_OVERRIDE_GFX_VERSION=\"10.3.0\""), "{df}");
    let o = rocmenv(
        &[
            "dockerfile",
            "--stack",
            "ngc",
            "--ngc",
            "24.05",
            "--base",
            "nvcr.io/nvidia/pytorch:24.10-py3",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8(o.stderr).unwrap().contains("--ngc 24.10"));
}

/// Issue 33: `init` wrote the iGPU's gfx target, which env hides. On every AMD tree, init's `gfx:` is the own targets
/// of the GPUs the plan (that env prints and run maps) leaves visible, and its target is the plan's release.
#[test]
fn init_writes_what_the_plan_leaves_visible() {
    use rocmenv::ops::plan::{resolve, PlanRequest};
    use rocmenv::ops::{Ctx, HostSpec};
    let mut checked = 0;
    for tree in trees_with_amd() {
        let ctx = Ctx::new(
            None,
            HostSpec {
                sysroot: Some(tree.clone()),
                ..HostSpec::default()
            },
        );
        let plan = resolve(&ctx, &PlanRequest::default()).unwrap();
        let mut want: Vec<String> = plan
            .devices()
            .iter()
            .filter(|d| d.vendor == rocmenv::vendor::Vendor::Amd && d.hidden.is_none())
            .filter_map(|d| d.arch.clone())
            .collect();
        want.sort();
        want.dedup();
        let o = rocmenv(
            &["init", "--sysroot", tree.to_str().unwrap(), "-o", "-"],
            &[],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8(o.stdout).unwrap();
        let Some(line) = text.lines().find(|l| l.trim_start().starts_with("gfx: [")) else {
            continue; // no AMD stack written (no gfx known)
        };
        let list = line.split('[').nth(1).unwrap().split(']').next().unwrap();
        let got: Vec<String> = list
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        assert_eq!(got, want, "{}", tree.display());
        let release = plan
            .target
            .rocm
            .as_ref()
            .unwrap()
            .release
            .version
            .to_string();
        assert!(
            text.contains(&format!("target: rocm-{release}")),
            "{}: {text}",
            tree.display()
        );
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} trees had an AMD stack");
}
