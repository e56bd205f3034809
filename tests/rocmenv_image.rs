//! Issue 25: `k8s` and `slurm` need an image that holds rocmenv, and nothing built one. scripts/build-rocmenv-image
//! adds the binary to a base image through `rocmenv build --context`; here with this build's binary (ROCMENV_BIN) on
//! the test base, whose glibc is this machine's, and the image's rocmenv answers `--version`. A base reference that
//! could add a Dockerfile instruction is refused with exit 2 before anything is built.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use std::path::Path;
use std::process::Command;

fn script() -> Command {
    let mut c =
        Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-rocmenv-image"));
    c.env("ROCMENV_BIN", env!("CARGO_BIN_EXE_rocmenv"));
    c
}

#[test]
fn a_bad_base_is_refused_before_any_build() {
    let o = script().arg("x\nRUN rm -rf /").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not an image reference"));
}

#[test]
fn the_image_holds_a_rocmenv_that_runs() {
    let Some(_d) = common::daemon("the_image_holds_a_rocmenv_that_runs") else {
        return;
    };
    let tag = format!("rocmenv-test/with-rocmenv:{}", std::process::id());
    let o = script().args([common::BASE, &tag]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), tag);
    let run = Command::new("docker")
        .args(["run", "--rm", &tag, "rocmenv", "--version"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&run.stdout).into_owned();
    // The image is the test's own: its tags go, whatever the assertion says.
    let content = err
        .split_whitespace()
        .find(|w| w.starts_with("rocmenv/context:"))
        .map(|w| w.trim_end_matches(',').to_string());
    let _ = Command::new("docker")
        .arg("rmi")
        .arg(&tag)
        .args(content)
        .output();
    assert_eq!(
        said.trim(),
        format!("rocmenv {}", env!("CARGO_PKG_VERSION"))
    );
}
