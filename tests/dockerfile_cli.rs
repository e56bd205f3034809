//! `rocmenv dockerfile` as people run it: detection from host trees, the env baked in, files written, hostile values refused.

use std::path::PathBuf;
use std::process::{Command, Output};

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
        .display()
        .to_string()
}

fn dockerfile(args: &[&str]) -> String {
    let o = rocmenv(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn a_gfx1031_host_gets_the_override_baked_in() {
    let d = dockerfile(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--sysroot",
        &fixture("rx6700xt-ubuntu2204"),
        "--rocm",
        "6.2",
    ]);
    assert!(d.contains("FROM rocm/pytorch:rocm6.2"), "{d}");
    assert!(d.contains("HSA_OVERRIDE_GFX_VERSION=\"10.3.0\""), "{d}");
    assert!(d.contains("PYTORCH_ROCM_ARCH=\"gfx1030\""));
    assert!(d.contains("io.rocmenv.gfx=\"gfx1031\""));
}

#[test]
fn a_natively_supported_gpu_gets_no_override() {
    let d = dockerfile(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--sysroot",
        &fixture("mi300x-x4-ubuntu2204"),
        "--rocm",
        "6.2",
    ]);
    assert!(!d.contains("HSA_OVERRIDE_GFX_VERSION"), "{d}");
    assert!(d.contains("PYTORCH_ROCM_ARCH=\"gfx942\""));
}

#[test]
fn the_igpu_neither_picks_the_image_nor_is_baked_in() {
    let d = dockerfile(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--sysroot",
        &fixture("ryzen5600g-igpu-rx6800-mint21"),
        "--rocm",
        "6.2",
    ]);
    assert!(d.contains("io.rocmenv.gfx=\"gfx1030\""), "{d}");
    assert!(
        !d.contains("VISIBLE_DEVICES"),
        "device numbering is the host's, not the image's"
    );
}

#[test]
fn ngc_follows_the_host_driver() {
    let d = dockerfile(&[
        "dockerfile",
        "--stack",
        "ngc",
        "--sysroot",
        &fixture("rtx4090-driver-535"),
    ]);
    assert!(
        d.contains("FROM nvcr.io/nvidia/pytorch:23.10-py3"),
        "driver 535.104.05 runs CUDA 12.2 at most: {d}"
    );
    assert!(d.contains("TORCH_CUDA_ARCH_LIST=\"8.9\""));
    let d = dockerfile(&["dockerfile", "--stack", "ngc", "--driver", "550.54.15"]);
    assert!(d.contains("FROM nvcr.io/nvidia/pytorch:24.05-py3"), "{d}");
    let o = rocmenv(&["dockerfile", "--stack", "ngc", "--driver", "470.0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no NGC PyTorch release runs on driver 470.0")
    );
}

#[test]
fn output_dir_gets_the_whole_context_and_no_temp_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ctx");
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "cpu",
        "--with-smoke-tests",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stdout).starts_with(&format!("wrote {}", out.display())));
    let mut names: Vec<String> = walk(&out);
    names.sort();
    assert_eq!(names[..2], [".dockerignore", "Dockerfile"]);
    for f in [
        "smoke-tests/run.py",
        "smoke-tests/suite.yaml",
        "smoke-tests/rocmenv_smoke/runner.py",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} missing: {names:?}");
    }
    // The suite's own pytest files and byte-code stay out of images.
    assert!(
        names
            .iter()
            .all(|n| !n.contains("/tests/") && !n.contains("__pycache__") && !n.ends_with(".tmp")),
        "{names:?}"
    );
    let d = std::fs::read_to_string(out.join("Dockerfile")).unwrap();
    assert!(d.contains("COPY smoke-tests/ /opt/rocmenv/smoke-tests/"));
}

/// Issue 10: `dockerfile -o DIR` replaced an existing Dockerfile and .dockerignore without a word. Now: exit 2, one
/// line naming the file and --force, the user's file untouched; `--force` replaces.
#[test]
fn output_dir_refuses_to_replace_a_file_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = dir.path();
    std::fs::write(ctx.join("Dockerfile"), "FROM mine\n").unwrap();
    let o = rocmenv(&["dockerfile", "--stack", "cpu", "-o", ctx.to_str().unwrap()]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains(&ctx.join("Dockerfile").display().to_string()) && e.contains("--force"),
        "{e}"
    );
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(ctx.join("Dockerfile")).unwrap(),
        "FROM mine\n"
    );
    assert!(!ctx.join(".dockerignore").exists());
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "cpu",
        "-o",
        ctx.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = std::fs::read_to_string(ctx.join("Dockerfile")).unwrap();
    assert!(d.contains("FROM debian:bookworm-slim"), "{d}");
}

fn walk(root: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    out
}

#[test]
fn hostile_values_are_refused_naming_the_flag() {
    for (flag, value) in [
        ("--pip", "numpy\nRUN curl evil | sh"),
        ("--pip", "torch;rm -rf /"),
        ("--pip", "$(id)"),
        ("--apt", "vim && curl x"),
        ("--apt", "`reboot`"),
        ("--base", "debian:bookworm\nRUN id"),
        ("--base", "Debian:Latest"),
        ("--source", "https://x\" evil=\"y"),
    ] {
        let mut args = vec!["dockerfile", "--stack", "cpu", flag, value];
        if flag == "--base" {
            args = vec!["dockerfile", "--stack", "cpu", "--base", value];
        }
        let o = rocmenv(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{flag} {value:?} accepted: {e}");
        assert!(e.contains(flag), "{e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn an_unknown_combination_lists_the_nearest() {
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--gfx",
        "gfx942",
        "--rocm",
        "6.9",
        "--pytorch",
        "2.4",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("nearest: rocm6.4"), "{e}");
}

/// Runs `dockerfile --stack rocm --rocm VERSION -o DIR/ctx` that must be refused: exit 2, one line on stderr and
/// nothing written. Returns that line.
fn refused_rocm(version: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ctx");
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--rocm",
        version,
        "-o",
        out.to_str().unwrap(),
    ]);
    let e = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(!out.exists(), "nothing is written");
    e
}

/// Issue 22: a release with no PyTorch image or wheels in the matrices (7.14.1: its index is one per GPU family,
/// from an unpinned list) is one line naming where AMD documents its PyTorch and the newest release that has one;
/// nothing is written.
#[test]
fn a_release_without_an_image_names_the_newest_that_has_one() {
    let e = refused_rocm("7.14");
    assert!(
        e.contains("no PyTorch image or wheels for ROCm 7.14.1") && e.contains("--rocm 10.1.0"),
        "{e}"
    );
    // It says where AMD documents that release's PyTorch instead.
    assert!(
        e.contains("pip wheels") && e.contains("https://rocm.docs.amd.com/en/docs-7.14.1/"),
        "{e}"
    );
}

/// Issue 22: without --rocm the rocm stack renders the newest release, ROCm 10.1.0, as AMD documents its PyTorch:
/// torch 2.14.0 wheels from AMD's ROCm 10 index on ubuntu:24.04, and says so in the Dockerfile and on stderr.
#[test]
fn the_default_names_the_release_it_targets_and_why() {
    let o = rocmenv(&["dockerfile", "--stack", "rocm"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{e}");
    let d = String::from_utf8_lossy(&o.stdout);
    assert!(d.contains("\nFROM ubuntu:24.04\n"), "{d}");
    assert!(
        d.contains("--index-url 'https://stable.repo.amd.com/rocm/whl-next/' 'torch[device-all]==2.14.0+rocm10.1.0' 'torchvision[device-all]>=0.29.0a0,<0.30'"),
        "{d}"
    );
    assert!(d.contains("io.rocmenv.rocm=\"10.1.0\""), "{d}");
    for text in [&*e, &*d] {
        assert!(
            text.contains("ROCm 10.1.0 (core-sdk stream) has no rocm/pytorch image: AMD publishes its PyTorch as wheels on https://stable.repo.amd.com/rocm/whl-next/"),
            "{text}"
        );
        assert!(!text.contains("is the newest release, but"), "{text}");
    }
}

/// Issue 22: a Core SDK release's image installs the kernels of the GPUs named (an override's target where the
/// release does not build a GPU, with HSA_OVERRIDE_GFX_VERSION), and the older torch builds by --pytorch.
#[test]
fn core_sdk_wheels_follow_the_gpus_and_the_pytorch_flag() {
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--rocm",
        "10.0",
        "--gfx",
        "gfx942",
        "--gfx",
        "gfx1100",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = String::from_utf8_lossy(&o.stdout);
    assert!(
        d.contains("'torch[device-gfx942,device-gfx1100]==2.13.0+rocm10.0.0' 'torchvision[device-gfx942,device-gfx1100]>=0.28.0a0,<0.29'"),
        "{d}"
    );
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--rocm",
        "10.0",
        "--pytorch",
        "2.11",
        "--gfx",
        "gfx1031",
    ]);
    let (d, e) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{e}");
    // 10.0.0's libraries and wheels are built for gfx1031 (its built:), though AMD does not list it: its own
    // kernels, no override, and a note that it is untested.
    assert!(
        d.contains(
            "'torch[device-gfx1031]==2.11.0+rocm10.0.0' 'torchvision[device-gfx1031]>=0.26.0a0,<0.27'"
        ),
        "{d}"
    );
    assert!(!d.contains("HSA_OVERRIDE_GFX_VERSION"), "{d}");
    assert!(
        e.contains("ROCm 10.0.0 ships kernels for gfx1031, but AMD does not list it as supported"),
        "{e}"
    );
    // gfx90c (an APU) has no wheel of its own: it runs as gfx900 through the override.
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--rocm",
        "10.0",
        "--gfx",
        "gfx90c",
    ]);
    let (d, e) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        d.contains("'torch[device-gfx900]==2.13.0+rocm10.0.0'"),
        "{d}"
    );
    assert!(
        e.contains("ROCm 10.0.0 does not build gfx90c; it runs as gfx900"),
        "{e}"
    );
    // A torch the release has no build of is refused in one line that names the nearest builds.
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--rocm",
        "10.0",
        "--pytorch",
        "2.9",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("nearest: torch 2.11.0+rocm10.0.0 wheels on ubuntu:24.04"),
        "{e}"
    );
}

/// Issue 22: the torchvision requirement a Core SDK Dockerfile writes is one pip can satisfy. TheRock versions each
/// wheel from the project's `version.txt`, so a torchvision built for ROCm 10.1.0 can be `0.29.0a0+rocm10.1.0`, a
/// pre-release that `==0.29.*` skips. Real pip, against a local index of empty wheels with such versions: the
/// requirement of the default (10.1.0) Dockerfile takes 0.29.0a0 and never the next series' pre-release.
#[test]
fn the_torchvision_requirement_resolves_with_real_pip() {
    let pip_ok = Command::new("python3")
        .args(["-m", "pip", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !pip_ok {
        eprintln!(
            "skip: `python3 -m pip` is not available here, so the requirement cannot be resolved"
        );
        return;
    }
    let o = rocmenv(&["dockerfile", "--stack", "rocm"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d = String::from_utf8_lossy(&o.stdout);
    let start = d.find("'torchvision[").expect("a torchvision requirement") + 1;
    let req = &d[start..start + d[start..].find('\'').unwrap()];
    assert!(req.contains("0.29"), "{req}");

    let dir = tempfile::tempdir().unwrap();
    let index = dir.path().join("index");
    let make = r#"
import sys, zipfile, pathlib
out = pathlib.Path(sys.argv[1]); out.mkdir()
for v in sys.argv[2:]:
    dist = f"torchvision-{v}.dist-info"
    with zipfile.ZipFile(out / f"torchvision-{v}-py3-none-any.whl", "w") as z:
        z.writestr("torchvision/__init__.py", "")
        z.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: torchvision\nVersion: {v}\n")
        z.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: rocmenv-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{dist}/RECORD", "")
"#;
    let status = Command::new("python3")
        .args(["-c", make])
        .arg(&index)
        .args([
            "0.28.0+rocm10.0.0",
            "0.29.0a0+rocm10.1.0",
            "0.30.0a0+rocm10.2.0",
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let resolve = |requirement: &str| {
        let dest = tempfile::tempdir().unwrap();
        let o = Command::new("python3")
            .args([
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-index",
                "--disable-pip-version-check",
                "-q",
            ])
            .arg("--find-links")
            .arg(&index)
            .arg("-d")
            .arg(dest.path())
            .arg(requirement)
            .output()
            .unwrap();
        let got: Vec<String> = std::fs::read_dir(dest.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        (o, got)
    };
    let (o, got) = resolve(req);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        got,
        ["torchvision-0.29.0a0+rocm10.1.0-py3-none-any.whl"],
        "{req}"
    );
    // The form it replaces finds nothing there: pip leaves pre-releases out of `==X.Y.*`.
    let (o, got) = resolve("torchvision==0.29.*");
    assert!(!o.status.success() && got.is_empty(), "{got:?}");
}

/// Issue 22: `--rocm 10.9` (no such release) is one line that says it is not a release, names the newest 10.x and
/// the nearest builds that exist; exit 2, nothing written.
#[test]
fn a_rocm_that_is_not_a_release_says_so() {
    let e = refused_rocm("10.9");
    assert!(
        e.contains("ROCm 10.9 (not a release in the matrices; newest 10.x: 10.1.0)")
            && e.contains("nearest: torch 2.14.0+rocm10.1.0 wheels on ubuntu:24.04"),
        "{e}"
    );
}
