//! Issue 34, WSL2: `run` maps the GPU WSL exposes, without a daemon (`run --print --sysroot`). An AMD GPU gets
//! `/dev/dxg` and the host libraries AMD's ROCm-on-WSL `docker run` binds in (src/engine/dxg.rs cites it); a missing
//! library is one line naming it; doctor's container finding judges the same mapping; NVIDIA keeps `--gpus`.

#[allow(dead_code)]
#[path = "common/trees.rs"]
mod trees;

use rocmenv::checks::Status;
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use std::path::Path;
use trees::{copy_of, dockerfile_in, fixture, print_run};

const AMD_IMAGE: &str = "rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.1.2";

fn gpu_runtime(tree: &Path) -> rocmenv::checks::Finding {
    let opts = DoctorOptions {
        sysroot: Some(tree.to_path_buf()),
        ..DoctorOptions::default()
    };
    let r = build_report(&opts).unwrap();
    r.findings
        .into_iter()
        .find(|f| f.id == "docker.gpu-runtime")
        .unwrap()
}

#[test]
fn run_print_maps_the_wsl_amd_gpu_through_dxg_with_amds_binds() {
    for extra in [&[][..], &["--gpu", "0"][..], &["--vendor", "amd"][..]] {
        let (code, out, err) = print_run(&fixture("wsl2-rx7900gre"), AMD_IMAGE, extra);
        assert_eq!(code, Some(0), "{extra:?}: {out}{err}");
        for flag in [
            "--device=/dev/dxg ",
            " -v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so:ro ",
            " -v /opt/rocm/lib/libhsa-runtime64.so.1:/opt/rocm/lib/libhsa-runtime64.so.1:ro ",
            "--security-opt='seccomp=unconfined'",
            "--ipc=host",
        ] {
            assert!(out.contains(flag), "{extra:?}: {flag} in {out}");
        }
        for absent in [
            "/dev/kfd",
            "renderD",
            "--group-add",
            "--gpus",
            "HSA_ENABLE_DXG",
        ] {
            assert!(!out.contains(absent), "{extra:?}: {absent} in {out}");
        }
        assert!(
            err.contains("maps GPU 0 (AMD Radeon RX 7900 GRE")
                && err.contains("through /dev/dxg and the WSL HSA runtime"),
            "{err}"
        );
        assert!(!err.contains("runs on the CPU"), "{err}");
    }
    // A GPU the host does not have is refused, not mapped.
    let (code, _, err) = print_run(&fixture("wsl2-rx7900gre"), AMD_IMAGE, &["--gpu", "1"]);
    assert_eq!(code, Some(125), "{err}");
}

#[test]
fn a_missing_wsl_library_is_one_line_naming_it_and_doctor_fails_the_same_way() {
    let tree = copy_of("wsl2-rx7900gre");
    std::fs::remove_file(tree.path().join("opt/rocm-6.1.3/lib/libhsa-runtime64.so.1")).unwrap();
    let (code, out, err) = print_run(tree.path(), AMD_IMAGE, &[]);
    assert_eq!(code, Some(125), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("is missing")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("/opt/rocm/lib/libhsa-runtime64.so.1 is missing")
            && lines[0].contains("amdgpu-install -y --usecase=wsl,rocm --no-dkms"),
        "{err}"
    );
    let f = gpu_runtime(tree.path());
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary
            .contains("/opt/rocm/lib/libhsa-runtime64.so.1 is missing"),
        "{}",
        f.summary
    );
}

#[test]
fn doctor_passes_the_wsl_amd_container_mapping_run_would_use() {
    let f = gpu_runtime(&fixture("wsl2-rx7900gre"));
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert!(
        f.summary.contains("--device=/dev/dxg")
            && f.summary
                .contains("/usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so:ro")
            && f.summary.contains("the WSL HSA runtime"),
        "{}",
        f.summary
    );
}

/// The ROCDXG bridge (ROCm 7.x on WSL) is preferred where installed: its library and HSA_ENABLE_DXG_DETECTION=1.
#[test]
fn run_print_uses_the_rocdxg_bridge_where_installed() {
    let tree = copy_of("wsl2-rx7900gre");
    std::fs::write(tree.path().join("opt/rocm-6.1.3/lib/librocdxg.so"), b"").unwrap();
    let (code, out, err) = print_run(tree.path(), AMD_IMAGE, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("-v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so:ro")
            && out.contains("-e 'HSA_ENABLE_DXG_DETECTION=1'")
            && !out.contains("libhsa-runtime64"),
        "{out}"
    );
    assert!(err.contains("the ROCDXG bridge"), "{err}");
}

/// NVIDIA under WSL2 goes through the NVIDIA container toolkit (`--gpus`), never /dev/dxg binds, and `--gpu n` holds.
#[test]
fn run_print_maps_the_wsl_nvidia_gpu_with_gpus() {
    let image = "nvcr.io/nvidia/pytorch:24.05-py3";
    let tree = fixture("wsl2-rtx3060");
    let (code, out, err) = print_run(&tree, image, &["--gpu", "0"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains(r#"--gpus='"device=0"'"#), "{out}");
    let (code, out, err) = print_run(&tree, image, &["--vendor", "nvidia"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("--gpus=all"), "{out}");
    assert!(
        !out.contains("/dev/dxg") && !out.contains("libdxcore"),
        "{out}"
    );
    assert!(err.contains("maps GPU 0 (NVIDIA GeForce RTX 3060"), "{err}");
    assert!(!err.contains("through /dev/dxg"), "{err}");
}

/// `dockerfile` on the WSL AMD host: the image is the release's series, and the note shows run's WSL flags.
#[test]
fn dockerfile_note_shows_the_wsl_run_flags() {
    let (o, df) = dockerfile_in(&fixture("wsl2-rx7900gre"), "rocm");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("--device=/dev/dxg -v /usr/lib/wsl/lib/libdxcore.so:/usr/lib/libdxcore.so:ro -v /opt/rocm/lib/libhsa-runtime64.so.1:/opt/rocm/lib/libhsa-runtime64.so.1:ro"),
        "{err}"
    );
    assert!(!err.contains("does not do"), "{err}");
    let df = df.expect("a Dockerfile");
    assert!(df.contains("FROM rocm/pytorch:rocm6.1_"), "{df}");
    assert!(!df.contains("dxg"), "the image needs nothing for WSL: {df}");
}
