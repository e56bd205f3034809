//! The engine against Podman's Docker-compatible socket (`podman system service`): doctor, run, timeout, build, cleanup.
//! `.ci/run` starts the service and sets ROCMENV_PODMAN_SOCKET; without it these print SKIP, unless
//! ROCMENV_PODMAN_TESTS=1 makes that a failure.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use common::{daemon, BASE};
use rocmenv::engine::Engine;
use std::process::{Command, Output};

fn socket() -> Option<String> {
    match std::env::var("ROCMENV_PODMAN_SOCKET") {
        Ok(s) if !s.is_empty() => Some(s),
        _ if std::env::var("ROCMENV_PODMAN_TESTS").as_deref() == Ok("1") => {
            panic!("ROCMENV_PODMAN_TESTS=1 but ROCMENV_PODMAN_SOCKET is not set")
        }
        _ => {
            eprintln!("SKIP podman: ROCMENV_PODMAN_SOCKET is not set (.ci/run starts `podman system service`)");
            None
        }
    }
}

fn rocmenv(host: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("DOCKER_HOST", host)
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

#[test]
fn the_engine_works_through_podman() {
    let Some(host) = socket() else { return };
    // The base image comes from the Docker daemon's copy (made by debootstrap there), loaded into Podman.
    let Some(_docker) = daemon("podman") else {
        assert!(
            std::env::var("ROCMENV_PODMAN_TESTS").as_deref() != Ok("1"),
            "ROCMENV_PODMAN_TESTS=1 but no Docker daemon answers: the Podman test loads its base image from Docker"
        );
        return;
    };
    let load = Command::new("sh")
        .args(["-c", &format!("docker save {BASE} | podman load")])
        .output()
        .unwrap();
    assert!(
        load.status.success(),
        "{}",
        String::from_utf8_lossy(&load.stderr)
    );
    let image = format!("localhost/{BASE}");

    let o = rocmenv(&host, &["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "docker.daemon")
        .unwrap();
    assert_eq!(d["status"], "pass", "{d}");
    assert!(d["summary"].as_str().unwrap().contains(&host), "{d}");

    let o = rocmenv(
        &host,
        &[
            "run",
            "--vendor",
            "cpu",
            "--image",
            &image,
            "--",
            "sh",
            "-c",
            "echo hello from podman; exit 7",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello from podman\n");

    let o = rocmenv(
        &host,
        &[
            "run",
            "--vendor",
            "cpu",
            "--timeout",
            "2",
            "--image",
            &image,
            "--",
            "sleep",
            "60",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(124),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let ctx = tempfile::tempdir().unwrap();
    std::fs::write(
        ctx.path().join("Dockerfile"),
        format!("FROM {image}\nRUN echo built > /built.txt\n"),
    )
    .unwrap();
    let dir = ctx.path().to_str().unwrap();
    let first = rocmenv(&host, &["build", "--context", dir, "--json"]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let again = rocmenv(&host, &["build", "--context", dir, "--json"]);
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["cached"], true);

    // A failing step is a failed build (exit 1) naming Podman's step, as with Docker's builder.
    std::fs::write(
        ctx.path().join("Dockerfile"),
        format!("FROM {image}\nRUN echo about-to-fail\nRUN false\n"),
    )
    .unwrap();
    let failed = rocmenv(&host, &["build", "--context", dir]);
    let err = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{err}");
    assert!(err.contains("[3/5] RUN false"), "{err}");
    assert!(
        err.contains("rocmenv: build failed at STEP 3/5: RUN false"),
        "{err}"
    );

    let engine = Engine::connect(&host).expect("podman answers");
    assert!(
        engine.managed_containers().expect("list").is_empty(),
        "a managed container was left in Podman"
    );
}
