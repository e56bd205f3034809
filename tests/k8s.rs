//! `rocmenv k8s`: every manifest variant validates against the Kubernetes schemas `kubernetes-validate` bundles (the
//! newest minor version it ships and the two before it, strict: unknown fields fail), and the manifests committed in
//! examples/k8s are exactly what the binary prints now (issue 12).
//!
//! CI sets ROCMENV_REQUIRE_K8S_VALIDATE (and pip-installs kubernetes-validate), so a missing validator fails there; on
//! a machine without it the schema test says it skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const IMAGE: &str = "registry.example.com/gpu/rocmenv:1.0";

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

fn printed(args: &[&str]) -> String {
    let o = rocmenv(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8")
}

/// Every combination of workload, vendor and command (and the optional flags once).
fn variants() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for kind in ["job", "daemonset"] {
        for vendor in ["amd", "nvidia"] {
            for check in ["doctor-smoke", "validate"] {
                let mut args: Vec<String> = [
                    "k8s",
                    kind,
                    "--vendor",
                    vendor,
                    "--image",
                    IMAGE,
                    "--command",
                    check,
                ]
                .map(String::from)
                .to_vec();
                if check == "validate" {
                    args.extend(["--config-map".into(), "rocmenv-config".into()]);
                }
                out.push((format!("{kind}-{vendor}-{check}"), args));
            }
        }
    }
    let extra = [
        "k8s",
        "job",
        "--vendor",
        "amd",
        "--image",
        IMAGE,
        "--namespace",
        "gpu-checks",
        "--level",
        "standard",
        "--gpus",
        "2",
        "--group-add",
        "44",
        "--group-add",
        "992",
        "--node",
        "gpu-node-1.example.com",
    ];
    out.push(("job-amd-all-flags".into(), extra.map(String::from).to_vec()));
    out
}

/// The Kubernetes versions to validate against: the newest `kubernetes-validate` defaults to, and the two minor
/// versions before it. `None` (after saying why) when the tool is missing and not required.
fn k8s_versions() -> Option<Vec<String>> {
    let help = Command::new("kubernetes-validate").arg("--help").output();
    let help = match help {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        other => {
            let why = match other {
                Ok(o) => format!("kubernetes-validate --help exited {:?}", o.status.code()),
                Err(e) => format!("kubernetes-validate is not on PATH ({e})"),
            };
            assert!(
                std::env::var_os("ROCMENV_REQUIRE_K8S_VALIDATE").is_none(),
                "ROCMENV_REQUIRE_K8S_VALIDATE is set but {why} (pip install kubernetes-validate)"
            );
            eprintln!("SKIP manifests_validate_against_three_kubernetes_versions: {why} (pip install kubernetes-validate)");
            return None;
        }
    };
    // "Defaults to 1.37.0" in its --help: the newest schema set it bundles.
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let newest = flat
        .split("Defaults to ")
        .nth(1)
        .and_then(|rest| {
            rest.split(|c: char| !(c.is_ascii_digit() || c == '.'))
                .next()
        })
        .unwrap_or_else(|| panic!("no default version in kubernetes-validate --help:\n{help}"));
    let parts: Vec<u32> = newest.split('.').map(|p| p.parse().unwrap()).collect();
    assert!(
        parts.len() >= 2 && parts[1] >= 2,
        "unexpected version {newest}"
    );
    Some(
        (0..3)
            .map(|back| format!("{}.{}.0", parts[0], parts[1] - back))
            .collect(),
    )
}

fn validate(versions: &[String], files: &[PathBuf]) -> Vec<(String, Output)> {
    versions
        .iter()
        .map(|v| {
            let o = Command::new("kubernetes-validate")
                .args(["--strict", "-k", v])
                .args(files)
                .output()
                .expect("kubernetes-validate runs");
            (v.clone(), o)
        })
        .collect()
}

#[test]
fn manifests_validate_against_three_kubernetes_versions() {
    let Some(versions) = k8s_versions() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, args) in variants() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, printed(&args)).unwrap();
        files.push(path);
    }
    for (v, o) in validate(&versions, &files) {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.status.code(), Some(0), "Kubernetes {v}:\n{text}");
        assert_eq!(
            text.matches(" passed for resource ").count(),
            files.len(),
            "Kubernetes {v}: every manifest checked:\n{text}"
        );
    }
    // The validator must be able to fail: a field no Kubernetes knows, under --strict.
    let bad = dir.path().join("bad.yaml");
    let good = std::fs::read_to_string(&files[0]).unwrap();
    std::fs::write(
        &bad,
        good.replace(
            "  backoffLimit: 0\n",
            "  backoffLimit: 0\n  retryForever: true\n",
        ),
    )
    .unwrap();
    for (v, o) in validate(&versions[..1], &[bad]) {
        assert_ne!(
            o.status.code(),
            Some(0),
            "Kubernetes {v} accepted an unknown field"
        );
    }
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/k8s")
}

/// Each committed example starts with the command line that printed it; running it again gives the same bytes.
/// `ROCMENV_UPDATE_EXAMPLES=1 cargo test --test k8s` rewrites them after an intended change.
#[test]
fn the_committed_examples_are_what_the_binary_prints() {
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    entries.sort();
    for path in entries {
        let committed = std::fs::read_to_string(&path).unwrap();
        let first = committed.lines().next().unwrap_or_default();
        let command = first
            .split_once(": rocmenv ")
            .map(|(_, c)| c)
            .unwrap_or_else(|| {
                panic!(
                    "{}: no `# Generated by rocmenv …: rocmenv …` line",
                    path.display()
                )
            });
        let args: Vec<&str> = command.split(' ').collect();
        let now = printed(&args);
        if std::env::var_os("ROCMENV_UPDATE_EXAMPLES").is_some() {
            std::fs::write(&path, &now).unwrap();
        } else {
            assert!(
                now == committed,
                "{} differs from `rocmenv {command}`; regenerate with ROCMENV_UPDATE_EXAMPLES=1 cargo test --test k8s",
                path.display()
            );
        }
        seen += 1;
    }
    assert_eq!(
        seen, 8,
        "examples/k8s holds job and daemonset × amd and nvidia × doctor-smoke and validate"
    );
}

#[test]
fn bad_names_exit_2_naming_the_flag() {
    let o = rocmenv(&["k8s", "job", "--image", IMAGE, "--namespace", "GPU_Checks"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("rocmenv: --namespace: `GPU_Checks` is not valid;"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = rocmenv(&["k8s", "daemonset", "--image", "Bad Image"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("rocmenv: --image: "));
    let o = rocmenv(&["k8s", "job", "--image", IMAGE, "--command", "validate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--config-map"));
}

/// The pod's script, run here as the pod would run it: the node's files are a captured host tree in place of /host,
/// rocmenv and Debian's python3 on PATH, ROCMENV_NODE_NAME set as the downward API sets it. Its stdout is one JSON
/// document that names the node and holds both doctor's checks and the smoke tests (issue 12).
#[test]
fn the_pod_script_prints_one_merged_document_naming_its_node() {
    let torch = Command::new("/usr/bin/python3")
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !torch {
        assert!(
            std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_TORCH=1 but /usr/bin/python3 cannot import torch"
        );
        eprintln!("SKIP the_pod_script_prints_one_merged_document_naming_its_node: /usr/bin/python3 cannot import torch");
        return;
    }
    let manifest = printed(&["k8s", "job", "--vendor", "amd", "--image", IMAGE]);
    let doc: serde_yaml_ng::Value =
        serde_yaml_ng::from_str(manifest.split("\n---\n").nth(1).unwrap()).unwrap();
    let script = doc["spec"]["template"]["spec"]["containers"][0]["command"][2]
        .as_str()
        .expect("the script is the third word of the command");
    let tree =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/mi300x-x4-ubuntu2204");
    let out = tempfile::tempdir().unwrap();
    let local = script
        .replace(
            "--sysroot /host ",
            &format!("--sysroot {} ", tree.display()),
        )
        .replace(
            "out=/tmp/rocmenv\n",
            &format!("out={}\n", out.path().display()),
        )
        // Only the quick level's first two tests, to keep the test short.
        .replace(
            "--level quick ",
            "--level quick --only environment,numerics ",
        );
    assert_ne!(local, script);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_rocmenv")).parent().unwrap();
    let o = Command::new("/bin/sh")
        .args(["-c", &local])
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin_dir.display()))
        .env("ROCMENV_NODE_NAME", "gpu-node-7")
        .env("HOME", out.path())
        .env("LC_ALL", "C.UTF-8")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.is_empty(),
        "every step ran, so nothing on stderr: {stderr}"
    );
    let merged: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("one JSON document ({e}):\n{stdout}"));
    assert_eq!(merged["kind"], "merge");
    assert_eq!(merged["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(merged["nodes"][0]["name"], "gpu-node-7");
    assert_eq!(
        merged["nodes"][0]["kinds"],
        serde_json::json!(["doctor", "smoke"])
    );
    let groups: Vec<&str> = merged["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["group"].as_str().unwrap())
        .collect();
    assert!(
        groups.contains(&"doctor") && groups.contains(&"smoke"),
        "{groups:?}"
    );
    // The Job's exit code is the merge's: 1 exactly when a cell failed (the smoke suite finds no AMD GPU here).
    let failed = merged["summary"]["fail"].as_u64().unwrap() > 0;
    assert_eq!(o.status.code(), Some(i32::from(failed)), "{stdout}");
}
