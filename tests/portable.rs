//! The portable build (`scripts/build-portable`: glibc 2.17 symbols, everything else linked in) and `run --probe`
//! choosing which binary goes into an image. The binary comes from `ROCMENV_PORTABLE_BIN`; CI builds it and sets
//! `ROCMENV_REQUIRE_PORTABLE=1`, elsewhere its absence is a SKIP. The in-container tests need a daemon
//! (`ROCMENV_ENGINE_TESTS=1` makes its absence a failure).

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use common::{assert_no_leftovers, bullseye, daemon, portable_binary, rocmenv, BASE};
use rocmenv::elf::{self, GlibcVersion};
use std::process::{Command, Output};

/// The libraries every glibc system has; the portable build may need nothing else (no libgcc_s, no libstdc++).
const GLIBC_LIBS: [&str; 7] = [
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "libpthread.so.0",
    "librt.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
];

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `rocmenv run --probe --probe-binary BIN --vendor cpu --image IMAGE`.
fn probe_with(bin: &std::path::Path, image: &str) -> Output {
    rocmenv(&[
        "run",
        "--probe",
        "--probe-binary",
        bin.to_str().unwrap(),
        "--vendor",
        "cpu",
        "--image",
        image,
    ])
}

fn glibc(s: &str) -> GlibcVersion {
    GlibcVersion::parse(s).unwrap()
}

#[test]
fn the_portable_build_needs_only_glibc_2_17() {
    let Some(bin) = portable_binary("portable-elf") else {
        return;
    };
    let exe = elf::inspect(&std::fs::read(&bin).unwrap()).unwrap();
    assert!(!exe.is_static() && !exe.is_musl(), "{exe:?}");
    assert!(
        exe.glibc.as_ref().is_some_and(|v| *v <= glibc("2.17")),
        "{} asks for glibc {:?}",
        bin.display(),
        exe.glibc
    );
    let extra: Vec<&String> = exe
        .needed
        .iter()
        .filter(|n| !GLIBC_LIBS.contains(&n.as_str()))
        .collect();
    assert!(extra.is_empty(), "needs more than glibc: {extra:?}");
    // The ordinary build on this machine asks for the glibc it was linked against, which is the point of the other.
    // (glibc ≥ 2.34 moved dlopen and pthread into libc with new symbol versions, so any such host shows it.)
    let host = elf::inspect(&std::fs::read(env!("CARGO_BIN_EXE_rocmenv")).unwrap()).unwrap();
    assert_eq!(host.arch, exe.arch);
    assert!(
        host.glibc.as_ref().is_some_and(|v| *v > glibc("2.17")),
        "the ordinary build asks only for glibc {:?}",
        host.glibc
    );
}

/// On this host the portable build's probe answers as the ordinary build's does: same statuses, same HIP library.
#[test]
fn the_portable_build_probes_this_host_like_the_ordinary_build() {
    let Some(bin) = portable_binary("portable-probe") else {
        return;
    };
    let run = |exe: &std::path::Path| {
        let o = Command::new(exe)
            .args(["probe", "--json"])
            .output()
            .unwrap();
        let v: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&o)));
        (o.status.code(), v)
    };
    let (code, portable) = run(&bin);
    let (host_code, host) = run(std::path::Path::new(env!("CARGO_BIN_EXE_rocmenv")));
    assert_eq!(code, host_code);
    for r in ["cuda", "hip"] {
        assert_eq!(portable[r]["status"], host[r]["status"], "{r}");
        assert_eq!(portable[r]["library"], host[r]["library"], "{r}");
        assert_eq!(portable[r]["error"], host[r]["error"], "{r}");
    }
}

/// Ubuntu 20.04's glibc (2.31, here Debian 11's): the ordinary build cannot start there and says which binary to copy
/// instead; the portable build runs and reports.
#[test]
fn run_probe_in_an_image_with_glibc_2_31() {
    let Some(bin) = portable_binary("portable-bullseye") else {
        return;
    };
    let Some(d) = daemon("portable-bullseye") else {
        return;
    };
    let image = bullseye();
    let host = elf::inspect(&std::fs::read(env!("CARGO_BIN_EXE_rocmenv")).unwrap()).unwrap();
    if host.glibc.as_ref().is_some_and(|v| *v > glibc("2.31")) {
        let o = rocmenv(&["run", "--probe", "--vendor", "cpu", "--image", image]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(125), "{}", text(&o));
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        let want = format!("glibc ≥ {}", host.glibc.as_ref().unwrap());
        assert!(
            err.contains(&want) && err.contains("--probe-binary"),
            "{err}"
        );
    } else {
        eprintln!(
            "SKIP the ordinary-build half: this build asks only for glibc {:?}, which bullseye has",
            host.glibc
        );
    }
    let o = probe_with(&bin, image);
    let out = String::from_utf8_lossy(&o.stdout);
    // Neither runtime is in Debian 11's minimal tree: both missing is exit 3, reported by the probe that ran there.
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(out.contains("hip: no HIP runtime library"), "{out}");
    assert!(out.contains("cuda: no CUDA driver library"), "{out}");
    assert_no_leftovers(&d.engine);
}

/// The portable build loads the image's own libamdhip64 (Debian's HIP 5.2) and gets its real answer without a GPU.
#[test]
fn the_portable_build_loads_hip_inside_an_image() {
    let Some(bin) = portable_binary("portable-hip") else {
        return;
    };
    let Some(d) = daemon("portable-hip") else {
        return;
    };
    let image = common::hip_image(&d.engine);
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["run", "--probe", "--vendor", "cpu", "--image", &image])
        .env("ROCMENV_PROBE_BINARY", &bin)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        out.contains("✗ hip: /lib/x86_64-linux-gnu/libamdhip64.so.5: hipErrorNoDevice"),
        "{out}"
    );
    assert_no_leftovers(&d.engine);
}

/// A probe binary that cannot run in the image is refused before a container exists (exit 125, rocmenv's own
/// failure): not an ELF, missing, or another architecture (here this build with its ELF machine patched to AArch64).
#[test]
fn run_probe_refuses_a_binary_that_cannot_run_in_the_image() {
    let Some(d) = daemon("probe-binary-refused") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rocmenv.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let o = probe_with(&script, BASE);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    assert!(
        err.starts_with("rocmenv: --probe-binary: ") && err.contains("not an ELF executable"),
        "{err}"
    );
    let missing = dir.path().join("nope");
    let o = probe_with(&missing, BASE);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));

    let mut arm = std::fs::read(env!("CARGO_BIN_EXE_rocmenv")).unwrap();
    arm[18..20].copy_from_slice(&183u16.to_le_bytes()); // e_machine = EM_AARCH64
    let arm_path = dir.path().join("rocmenv-arm64");
    std::fs::write(&arm_path, &arm).unwrap();
    let o = probe_with(&arm_path, BASE);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    assert!(
        err.contains("is built for arm64 but rocmenv-test/bookworm:base is amd64"),
        "{err}"
    );
    assert_no_leftovers(&d.engine);
}

/// An image without glibc (here: nothing but /tmp) cannot start a glibc binary; the one line says why that also means
/// there is no GPU runtime to probe in it, instead of relaying the runtime's bare "no such file or directory".
#[test]
fn run_probe_in_an_image_without_glibc_says_so() {
    let Some(d) = daemon("probe-no-glibc") else {
        return;
    };
    let exe = elf::inspect(&std::fs::read(env!("CARGO_BIN_EXE_rocmenv")).unwrap()).unwrap();
    let Some(loader) = exe.interpreter.clone() else {
        eprintln!("SKIP probe-no-glibc: this rocmenv is static and starts anywhere");
        return;
    };
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("tmp")).unwrap();
    let tarball = root.path().join("empty.tar");
    let status = Command::new("tar")
        .args(["-C", root.path().to_str().unwrap(), "-cf"])
        .arg(&tarball)
        .arg("tmp")
        .status()
        .unwrap();
    assert!(status.success());
    let tag = "rocmenv-test/no-glibc:1";
    let o = Command::new("docker")
        .arg("import")
        .arg(&tarball)
        .arg(tag)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = rocmenv(&["run", "--probe", "--vendor", "cpu", "--image", tag]);
    let _ = Command::new("docker").args(["rmi", tag]).output();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{}", text(&o));
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("the image has no {loader}")) && err.contains("not a glibc image"),
        "{err}"
    );
    assert_no_leftovers(&d.engine);
}
