//! Issue 23: one context per process. A real `rocmenv validate` of the CPU stack (doctor, the Dockerfile, the build,
//! the image probe and the smoke suite, against the real daemon) loads the matrices once, probes the host once and
//! connects to the engine once; before, each step loaded and probed on its own. `ROCMENV_TRACE=loads` makes the
//! binary say each one on stderr. Without a daemon the test prints SKIP, unless ROCMENV_ENGINE_TESTS=1.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use common::{assert_no_leftovers, daemon, BASE};
use std::path::Path;
use std::process::{Command, Output};

fn rocmenv_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .current_dir(dir)
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("ROCMENV_TRACE", "loads")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("runs")
}

/// How many times stderr says `rocmenv: trace: {what}`.
fn count(o: &Output, what: &str) -> usize {
    let line = format!("rocmenv: trace: {what}");
    String::from_utf8_lossy(&o.stderr)
        .lines()
        .filter(|l| *l == line)
        .count()
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn validate_of_the_cpu_stack_loads_the_matrices_and_probes_the_host_once() {
    let Some(d) = daemon("loads_once") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let o = rocmenv_in(dir.path(), &["init", "--stack", "cpu"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = rocmenv_in(
        dir.path(),
        &["validate", "--base", BASE, "--json", "v.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    // Every step ran, so every step had the chance to load its own.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("v.json")).unwrap()).unwrap();
    let steps: std::collections::BTreeSet<&str> = json["stacks"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] != "skip")
        .map(|c| c["step"].as_str().unwrap())
        .collect();
    for step in ["doctor", "dockerfile", "build", "image", "smoke"] {
        assert!(steps.contains(step), "{step} did not run: {steps:?}");
    }
    assert_eq!(count(&o, "matrices loaded"), 1, "{}", show(&o));
    assert_eq!(count(&o, "host probed"), 1, "{}", show(&o));
    assert_eq!(count(&o, "engine connected"), 1, "{}", show(&o));
    // Without the variable the binary says nothing of the sort.
    let quiet = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["matrix", "rocm", "6.2"])
        .env_remove("ROCMENV_TRACE")
        .output()
        .unwrap();
    assert_eq!(count(&quiet, "matrices loaded"), 0);
    assert_no_leftovers(&d.engine);
}

/// The commands that need no host or matrices do not read them: `rocmenv doctor` probes once, `matrix` never.
#[test]
fn doctor_probes_once_and_matrix_never() {
    let dir = tempfile::tempdir().unwrap();
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts/amdgpu-not-loaded");
    let o = rocmenv_in(
        dir.path(),
        &["doctor", "--sysroot", fixture.to_str().unwrap(), "--json"],
    );
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", show(&o));
    assert_eq!(count(&o, "matrices loaded"), 1, "{}", show(&o));
    assert_eq!(count(&o, "host probed"), 1, "{}", show(&o));
    assert_eq!(count(&o, "engine connected"), 0, "{}", show(&o));
    let o = rocmenv_in(dir.path(), &["matrix", "rocm", "6.2"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert_eq!(count(&o, "matrices loaded"), 1, "{}", show(&o));
    assert_eq!(count(&o, "host probed"), 0, "{}", show(&o));
}
