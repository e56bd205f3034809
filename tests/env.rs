//! `rocmenv env`: every gfx target in the matrices × several ROCm releases as snapshots, shells that eval the output, errors.

use rocmenv::envplan::{inputs_from_gfx, plan};
use rocmenv::matrix::Matrices;
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

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Issue 22: without `--rocm` (and with `--gfx`, so no host is read), env targets the newest production release
/// that runs the GPU: ROCm 10.1.0 for gfx942, a Core SDK release, not the 7.2.x line.
#[test]
fn the_default_release_for_gfx942_is_the_newest_core_sdk_release() {
    let o = rocmenv(&["env", "--gfx", "gfx942", "--explain"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = stdout(&o);
    assert_eq!(
        out.lines().next(),
        Some("# rocmenv env: for ROCm 10.1.0"),
        "{out}"
    );
    assert!(out.contains("export PYTORCH_ROCM_ARCH='gfx942'"), "{out}");
    assert!(!out.contains("HSA_OVERRIDE_GFX_VERSION"), "{out}");
}

/// For one release: every gfx target in gpus.yaml → the variables (and warnings) a single GPU of it gets.
fn table(m: &Matrices, release: &str) -> serde_json::Value {
    let r = m.rocm_release(release).unwrap();
    let mut out = serde_json::Map::new();
    for t in &m.gpus.gfx_targets {
        let inputs = inputs_from_gfx(m, &[t.target.to_string()]).unwrap();
        let p = plan(m, &inputs, Some(r), None).unwrap();
        let mut vars: serde_json::Map<String, serde_json::Value> = p
            .vars
            .iter()
            .map(|v| (v.name.clone(), v.value.clone().into()))
            .collect();
        if !p.warnings.is_empty() {
            vars.insert("(warnings)".into(), p.warnings.clone().into());
        }
        out.insert(t.target.to_string(), vars.into());
    }
    out.into()
}

#[test]
fn every_gfx_target_across_releases() {
    let m = Matrices::embedded().unwrap();
    for release in ["5.7.1", "6.2.4", "6.4.0", "6.4.1", "7.2.0"] {
        let t = table(&m, release);
        // Spot checks that hold whatever the snapshot says.
        match release {
            "6.2.4" => {
                assert_eq!(t["gfx1031"]["HSA_OVERRIDE_GFX_VERSION"], "10.3.0");
                assert_eq!(t["gfx1101"]["HSA_OVERRIDE_GFX_VERSION"], "11.0.0");
                assert!(t["gfx942"].get("HSA_OVERRIDE_GFX_VERSION").is_none());
                assert!(
                    t["gfx1010"].get("HSA_OVERRIDE_GFX_VERSION").is_none(),
                    "RDNA1 gets a warning, not an override"
                );
            }
            // Issue 14: 6.4.0 does not list gfx1102 or gfx1200, but its `built:` lists ship them.
            "6.4.0" => {
                assert_eq!(t["gfx1102"]["PYTORCH_ROCM_ARCH"], "gfx1102");
                assert!(t["gfx1102"].get("HSA_OVERRIDE_GFX_VERSION").is_none());
                assert_eq!(t["gfx1200"]["PYTORCH_ROCM_ARCH"], "gfx1200");
                assert!(t["gfx906"].get("PYTORCH_ROCM_ARCH").is_none());
            }
            "6.4.1" => assert!(
                t["gfx1101"].get("HSA_OVERRIDE_GFX_VERSION").is_none(),
                "6.4.1 builds gfx1101"
            ),
            _ => {}
        }
        insta::assert_json_snapshot!(format!("env-rocm-{release}"), t);
    }
}

/// True when a missing zsh or fish must fail the test (.ci/run sets ROCMENV_REQUIRE_SHELLS=1).
fn shells_required() -> bool {
    std::env::var("ROCMENV_REQUIRE_SHELLS").as_deref() == Ok("1")
}

#[test]
fn eval_sets_the_override_in_bash_and_zsh() {
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    for shell in ["bash", "zsh", "sh"] {
        let script = format!("eval \"$('{bin}' env --gfx gfx1031 --rocm 6.2)\" && printf '%s|%s' \"$HSA_OVERRIDE_GFX_VERSION\" \"$PYTORCH_ROCM_ARCH\"");
        match Command::new(shell).args(["-c", &script]).output() {
            Ok(o) => assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                "10.3.0|gfx1030",
                "{shell}: {}",
                String::from_utf8_lossy(&o.stderr)
            ),
            // .ci/run installs zsh and sets ROCMENV_REQUIRE_SHELLS=1; elsewhere a missing shell is a SKIP, not a pass.
            Err(e) if !shells_required() => eprintln!("SKIP {shell}: {e}"),
            Err(e) => panic!("ROCMENV_REQUIRE_SHELLS=1 but {shell} cannot run: {e}"),
        }
    }
}

#[test]
fn fish_and_docker_formats_round_trip_through_their_consumers() {
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    // Several GPUs: the semicolon in PYTORCH_ROCM_ARCH must survive quoting.
    let gen = format!("'{bin}' env --gfx gfx1100 --gfx gfx1031 --rocm 6.2");
    let o = Command::new("bash")
        .args([
            "-c",
            &format!("eval \"set -- $({gen} --format docker)\"; printf '%s\\n' \"$@\""),
        ])
        .output()
        .unwrap();
    let args = String::from_utf8_lossy(&o.stdout);
    assert!(
        args.lines()
            .any(|l| l == "PYTORCH_ROCM_ARCH=gfx1030;gfx1100"),
        "{args}"
    );
    assert!(
        args.lines()
            .any(|l| l == "HSA_OVERRIDE_GFX_VERSION_1=10.3.0"),
        "{args}"
    );
    match Command::new("fish")
        .args([
            "-c",
            &format!("{gen} --format fish | source; echo $PYTORCH_ROCM_ARCH"),
        ])
        .output()
    {
        Ok(o) => assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            "gfx1030;gfx1100",
            "{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) if !shells_required() => eprintln!("SKIP fish: {e}"),
        Err(e) => panic!("ROCMENV_REQUIRE_SHELLS=1 but fish cannot run: {e}"),
    }
}

#[test]
fn host_trees() {
    let o = rocmenv(&[
        "env",
        "--sysroot",
        &fixture("ryzen5600g-igpu-rx6800-mint21"),
        "--rocm",
        "6.2",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["HIP_VISIBLE_DEVICES"], "0", "the 5600G iGPU is hidden");
    assert_eq!(v["PYTORCH_ROCM_ARCH"], "gfx1030");
    let o = rocmenv(&[
        "env",
        "--sysroot",
        &fixture("mi300x-x4-ubuntu2204"),
        "--format",
        "dotenv",
    ]);
    assert_eq!(stdout(&o), "PYTORCH_ROCM_ARCH=gfx942\nHCC_AMDGPU_TARGET=gfx942\nAMDGPU_TARGETS=gfx942\nGPU_TARGETS=gfx942\n");
    let o = rocmenv(&[
        "env",
        "--sysroot",
        &fixture("mi300x-x4-ubuntu2204"),
        "--device",
        "2",
        "--format",
        "github",
    ]);
    assert!(
        stdout(&o).starts_with("HIP_VISIBLE_DEVICES=2\n"),
        "{}",
        stdout(&o)
    );
    let o = rocmenv(&[
        "env",
        "--sysroot",
        &fixture("h100-x8-ubuntu2204"),
        "--device",
        "7",
    ]);
    assert_eq!(
        stdout(&o),
        "export CUDA_DEVICE_ORDER='PCI_BUS_ID'\nexport CUDA_VISIBLE_DEVICES='7'\nexport TORCH_CUDA_ARCH_LIST='9.0'\n"
    );
    let o = rocmenv(&[
        "env",
        "--sysroot",
        &fixture("radeon780m-apu-ubuntu2404"),
        "--rocm",
        "6.2",
    ]);
    assert!(stdout(&o).contains("export HSA_OVERRIDE_GFX_VERSION='11.0.0'"));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("confidence: medium"),
        "a medium-confidence override warns"
    );
}

#[test]
fn bad_input_is_exit_2_with_one_line() {
    for (args, needle) in [
        (vec!["env", "--gfx", "gfx1031;id"], "--gfx"),
        (vec!["env", "--gfx", "gfx9999"], "not in gpus.yaml"),
        (vec!["env", "--gfx", "gfx1031", "--rocm", "9.1"], "nearest"),
        (
            vec!["env", "--gfx", "gfx1031", "--device", "4"],
            "--device: GPU 4 does not exist; this host's AMD GPUs are GPU 0 (gfx1031)",
        ),
        (
            vec!["env", "--gfx", "gfx1031", "--sysroot", "/"],
            "the argument '--gfx <gfxNNNN>' cannot be used with '--sysroot <DIR>'",
        ),
        (vec!["env", "--sysroot", "/nonexistent"], "/nonexistent"),
        // Issue 22: a release that does not exist names the releases of its major.
        (
            vec!["env", "--gfx", "gfx942", "--rocm", "10.9"],
            "ROCm 10.9 is not in the matrices; nearest: ",
        ),
        (
            vec!["env", "--gfx", "gfx942", "--rocm", "10.9"],
            "; newest 10.x: 10.1.0",
        ),
        // Issue 22: a Core SDK release on a host with the legacy line installed names the installed release.
        (
            vec!["env", "--sysroot", &fixture("rx7900xtx-ubuntu2204-hwe"), "--rocm", "7.14"],
            "ROCm 7.14.1 is a core-sdk release (installed at /opt/rocm/core-7.14), but this host has ROCm 6.0.2 of the legacy stream at /opt/rocm-6.0.2; use --rocm 6.0.2",
        ),
    ] {
        let o = rocmenv(&args);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert_eq!(e.trim_end().lines().count(), 1, "{e}");
        assert!(e.contains(needle), "{args:?}: {e}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn a_gpu_that_cannot_run_is_exit_1_with_a_warning() {
    let o = rocmenv(&["env", "--gfx", "gfx1010", "--rocm", "6.2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("crashes"));
    assert!(!stdout(&o).contains("HSA_OVERRIDE"));
}

/// Issue 10: `env --gfx gfx1031 --gfx gfx1100 --rocm 6.1` exited 0 exporting targets "after the override" with no
/// override. Exit 1, nothing exported, the per-device choice on stderr.
#[test]
fn gpus_needing_different_overrides_before_rocm_62_are_exit_1_with_the_choice() {
    let o = rocmenv(&[
        "env", "--gfx", "gfx1031", "--gfx", "gfx1100", "--rocm", "6.1",
    ]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(o.stdout.is_empty(), "{}", stdout(&o));
    assert!(
        e.contains("no single HSA_OVERRIDE_GFX_VERSION serves these GPUs on ROCm 6.1")
            && e.contains("--device 0 (HIP_VISIBLE_DEVICES=0, HSA_OVERRIDE_GFX_VERSION=10.3.0)")
            && e.contains("--device 1 (HIP_VISIBLE_DEVICES=1, no override)"),
        "{e}"
    );
}

#[test]
fn no_gpu_on_the_host_is_exit_1() {
    let o = rocmenv(&["env", "--sysroot", &fixture("no-gpu-debian12")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--gfx"));
    assert!(o.stdout.is_empty());
}

/// Issue 14: on ROCm 6.4.0, which does not list gfx1101 or gfx1200 but whose rocBLAS and rocm6.4 PyTorch wheel ship
/// them (`built:` in matrices/rocm.yaml), env exports the GPU's own target and no override; gfx906, whose rocBLAS
/// files 6.4.0 lacks, still cannot run.
#[test]
fn built_targets_on_6_4_0_run_without_override_issue_14() {
    for (gfx, arch) in [("gfx1101", "gfx1101"), ("gfx1200", "gfx1200")] {
        let o = rocmenv(&["env", "--gfx", gfx, "--rocm", "6.4.0", "--format", "json"]);
        assert_eq!(o.status.code(), Some(0), "{gfx}: {o:?}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["PYTORCH_ROCM_ARCH"], arch, "{gfx}");
        assert!(v.get("HSA_OVERRIDE_GFX_VERSION").is_none(), "{gfx}: {v}");
    }
    // 6.3.3 has no `built:` data: gfx1101 still runs as gfx1100 there.
    let o = rocmenv(&[
        "env", "--gfx", "gfx1101", "--rocm", "6.3.3", "--format", "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["HSA_OVERRIDE_GFX_VERSION"], "11.0.0");
    let o = rocmenv(&["env", "--gfx", "gfx906", "--rocm", "6.4.0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("gfx906 is not built by ROCm 6.4.0"));
}
