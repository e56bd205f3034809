//! Issue 34, WSL2: AMD's ROCm-on-WSL support in the matrices, the GPUs WSL exposes found and judged against it,
//! the checks WSL does not have skipped as such, and env, dockerfile and run following the WSL host. Each tree is
//! built from a real capture (tests/fixtures/hosts/README.md names them).

use rocmenv::checks::{Finding, Status};
use rocmenv::host::HostFacts;
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use rocmenv::report::DoctorReport;
use rocmenv::vendor::Vendor;
use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

fn doctor(name: &str, deep: bool) -> DoctorReport {
    let opts = DoctorOptions {
        sysroot: Some(fixture(name)),
        deep,
        ..DoctorOptions::default()
    };
    build_report(&opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn find<'a>(r: &'a DoctorReport, id: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
}

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// What WSL lacks is skipped and says "not under WSL"; none of it passes.
fn not_under_wsl_is_never_a_pass(r: &DoctorReport) {
    for id in [
        "driver.amdgpu-loaded",
        "driver.amdgpu-version",
        "devices.kfd",
        "devices.render",
        "devices.nvidia",
        "pcie.aer",
        "topology.numa",
        "health.amd-ecc",
        "boot.iommu",
        "boot.secure-boot",
    ] {
        let f = find(r, id);
        assert_eq!(f.status, Status::Skip, "{id}: {}", f.summary);
        assert!(f.summary.contains("not under WSL"), "{id}: {}", f.summary);
    }
}

#[test]
fn the_wsl_release_6_1_3_is_known_to_matrix_rocm() {
    let o = rocmenv(&["matrix", "rocm", "6.1.3"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.starts_with("ROCm 6.1.3 on WSL"), "{out}");
    assert!(out.contains("Radeon RX 7900 GRE"), "{out}");
    assert!(out.contains("Adrenalin Edition 24.6.1"), "{out}");
    assert!(
        out.contains("https://github.com/ROCm/legacy-rocm-build/issues/3402"),
        "{out}"
    );
    let o = rocmenv(&["matrix", "rocm", "6.1.3", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["query"], "rocm_wsl");
    assert_eq!(v["rocm_wsl"]["wsl"]["windows_driver"], "24.6.1");
    assert_eq!(v["rocm_wsl"]["wsl"]["gfx"][0], "gfx1100");
    // A Linux release is answered as before, and an unknown one still exits 2.
    let o = rocmenv(&["matrix", "rocm", "6.1.2", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["query"], "rocm");
    assert_eq!(rocmenv(&["matrix", "rocm", "6.1.4"]).status.code(), Some(2));
}

/// A GPU on AMD's WSL list: rocminfo (the only thing under WSL that names it) finds the RX 7900 GRE through
/// /dev/dxg, with its own name (its PCI id 0x744c is shared with the 7900 XTX and XT), and it passes.
#[test]
fn a_gpu_on_amds_wsl_list_is_found_and_passes() {
    for deep in [false, true] {
        let r = doctor("wsl2-rx7900gre", deep);
        let f: &HostFacts = &r.facts;
        assert!(f.wsl);
        assert_eq!(f.gpus.len(), 1, "deep={deep}");
        let g = &f.gpus[0];
        assert_eq!(g.vendor, Vendor::Amd);
        assert_eq!(g.name.as_deref(), Some("AMD Radeon RX 7900 GRE"));
        assert_eq!(g.gfx.map(|t| t.to_string()).as_deref(), Some("gfx1100"));
        assert_eq!(g.pci_address, "dxg:0");
        assert_eq!(g.driver.as_deref(), Some("dxg"));
        let w = find(&r, "wsl.rocm-support");
        assert_eq!(w.status, Status::Pass, "{}", w.summary);
        assert!(w.summary.contains("ROCm 6.1.3 on WSL"), "{}", w.summary);
        assert!(w
            .detail
            .as_deref()
            .unwrap()
            .contains("Adrenalin Edition 24.6.1"));
        // The Linux override logic does not judge a WSL GPU: AMD says overrides do not reach the Windows driver.
        let gfx = find(&r, "gpu.gfx-supported");
        assert_eq!(gfx.status, Status::Skip);
        assert!(gfx.summary.contains("not under WSL"), "{}", gfx.summary);
        assert_eq!(find(&r, "gpu.present").status, Status::Pass);
        not_under_wsl_is_never_a_pass(&r);
        // The target is the installed WSL release's series, not the newest Linux release.
        assert_eq!(r.target["rocm"], "6.1.5");
        assert!(r.target_why.contains("ROCm-on-WSL"), "{}", r.target_why);
    }
}

fn doctor_at(root: &std::path::Path, deep: bool) -> DoctorReport {
    let opts = DoctorOptions {
        sysroot: Some(root.to_path_buf()),
        deep,
        ..DoctorOptions::default()
    };
    build_report(&opts).unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

/// A copy of the RX 6800 XT tree whose ROCm refuses the GPU: rocminfo fails with HSA_STATUS_ERROR_OUT_OF_RESOURCES
/// (a real WSL capture, from an RX 7800 XT host, ROCm's answer for a GPU off AMD's WSL list) and HIP lists nothing.
fn tree_whose_rocm_refuses_the_gpu() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let ok = Command::new("cp")
        .arg("-a")
        .arg(fixture("wsl2-rx6800xt"))
        .arg(d.path().join("h"))
        .status()
        .unwrap();
    assert!(ok.success());
    let capture =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(
            "tests/fixtures/captures/rocminfo_err_wsl2_out_of_resources_rx7800xt_rocm6.4.2.txt",
        ))
        .unwrap();
    let body: String = capture
        .lines()
        .filter(|l| !l.starts_with("# source:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let rec = d.path().join("h/.rocmenv");
    std::fs::write(rec.join("rocminfo.txt"), body).unwrap();
    let yaml = std::fs::read_to_string(rec.join("recorded.yaml")).unwrap();
    let yaml = yaml
        .split("\nhip:")
        .next()
        .unwrap()
        .replace("tools: {}", "tools:\n  rocminfo: rocminfo.txt");
    let yaml = format!("{yaml}\nhip:\n  runtime_version: \"6.1.40093\"\n  devices: []\n  error: \"hipErrorNoDevice: no ROCm-capable device is detected\"\n");
    std::fs::write(rec.join("recorded.yaml"), yaml).unwrap();
    d
}

/// ROCm on WSL refuses the GPU: rocminfo fails and HIP lists none, so no model can be named; doctor says the
/// Windows driver exposes a GPU through /dev/dxg that ROCm 6.1.3 on WSL does not open, and names what AMD lists.
#[test]
fn a_gpu_rocm_on_wsl_refuses_is_judged_against_the_list() {
    let d = tree_whose_rocm_refuses_the_gpu();
    for deep in [false, true] {
        let r = doctor_at(&d.path().join("h"), deep);
        assert!(r.facts.gpus.is_empty());
        let w = find(&r, "wsl.rocm-support");
        assert_eq!(w.status, Status::Fail, "{}", w.summary);
        assert!(w.summary.contains("/dev/dxg"), "{}", w.summary);
        assert!(
            w.summary.contains("HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
            "{}",
            w.summary
        );
        assert!(w.fix.as_deref().unwrap().contains("Radeon RX 7900 XTX"));
        not_under_wsl_is_never_a_pass(&r);
        // Judged against the installed WSL release's series, not ROCm 10.1.0 ("no GPU found" against the newest).
        assert_eq!(r.target["rocm"], "6.1.5");
    }
}

/// The RX 6800 XT tree as its host was (ROCm/ROCm#3581): PyTorch, that is the HIP runtime, saw "AMD Radeon RX 6800
/// XT". doctor finds it by that name, takes gfx1030 from gpus.yaml's RX 6900 XT / 6800 XT / 6800 model, and judges
/// it against AMD's 6.1.3 WSL list (gfx1100 cards only): it runs, but AMD does not support it there, so a warning.
#[test]
fn the_rx_6800_xt_the_hip_runtime_names_is_judged_against_amds_wsl_list() {
    for deep in [false, true] {
        let r = doctor("wsl2-rx6800xt", deep);
        assert_eq!(r.facts.gpus.len(), 1);
        let g = &r.facts.gpus[0];
        assert_eq!(g.name.as_deref(), Some("AMD Radeon RX 6800 XT"));
        assert_eq!(g.gfx.map(|t| t.to_string()).as_deref(), Some("gfx1030"));
        assert_eq!(g.gfx_source.as_deref(), Some("name"));
        assert_eq!(g.pci_address, "dxg:0");
        let hip = r.facts.evidence.hip.as_ref().unwrap();
        assert_eq!(hip.runtime_version.as_deref(), Some("6.1.40093"));
        let w = find(&r, "wsl.rocm-support");
        assert_eq!(w.status, Status::Warn, "{}", w.summary);
        assert!(
            w.summary.contains("AMD Radeon RX 6800 XT")
                && w.summary.contains("not on AMD's ROCm 6.1.3 on WSL list")
                && w.summary.contains("gfx1030")
                && w.summary.contains("HIP runtime opens it"),
            "{}",
            w.summary
        );
        assert!(w
            .detail
            .as_deref()
            .unwrap()
            .contains("Named by the HIP runtime"));
        assert_eq!(find(&r, "gpu.present").status, Status::Pass);
        not_under_wsl_is_never_a_pass(&r);
        assert_eq!(r.target["rocm"], "6.1.5");
    }
}

/// An NVIDIA GPU under WSL: its driver is Windows' (546.33), its nvidia-smi sits in /usr/lib/wsl/lib. doctor finds
/// both, judges CUDA by the Windows column of NVIDIA's Table 3 (12.4 needs ≥ 551.61 there, 12.3.2 ≥ 546.12).
#[test]
fn an_nvidia_gpu_and_its_windows_driver_are_found() {
    for deep in [false, true] {
        let r = doctor("wsl2-rtx3060", deep);
        let f = &r.facts;
        assert_eq!(f.gpus.len(), 1);
        let g = &f.gpus[0];
        assert_eq!(g.vendor, Vendor::Nvidia);
        assert_eq!(g.name.as_deref(), Some("NVIDIA GeForce RTX 3060"));
        assert_eq!(g.pci_address, "0000:07:00.0");
        assert_eq!(g.vram_bytes, Some(12288 << 20));
        let d = f.nvidia_driver.as_ref().unwrap();
        assert_eq!(d.version.to_string(), "546.33");
        assert!(d.from_windows);
        let w = find(&r, "wsl.nvidia-driver");
        assert_eq!(w.status, Status::Pass, "{}", w.summary);
        assert!(w.summary.contains("546.33"), "{}", w.summary);
        assert_eq!(r.target["cuda"], "12.3.2", "{}", r.target);
        let drv = find(&r, "driver.nvidia-version");
        assert_eq!(drv.status, Status::Pass, "{}", drv.summary);
        assert!(
            drv.summary.contains("Windows NVIDIA driver 546.33"),
            "{}",
            drv.summary
        );
        not_under_wsl_is_never_a_pass(&r);
    }
}

/// `dockerfile --stack ngc` on the WSL NVIDIA tree picks the newest NGC release whose driver floor the Windows
/// driver meets (24.05: "545 or later"), not the newest release (which needs a far newer driver).
#[test]
fn dockerfile_ngc_fits_the_windows_driver() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ctx");
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "ngc",
        "--sysroot",
        fixture("wsl2-rtx3060").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let df = std::fs::read_to_string(out.join("Dockerfile")).unwrap();
    assert!(df.contains("FROM nvcr.io/nvidia/pytorch:24.05-py3"), "{df}");
    assert!(err.contains("runs on driver 546.33"), "{err}");
}

/// On the WSL AMD tree, env and dockerfile follow AMD's WSL release: the image is of 6.1.3's series with the note
/// that a container needs /dev/dxg, env sets no override, and run maps /dev/dxg, not /dev/kfd.
#[test]
fn env_dockerfile_and_run_follow_the_wsl_release() {
    let tree = fixture("wsl2-rx7900gre");
    let o = rocmenv(&["env", "--sysroot", tree.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("PYTORCH_ROCM_ARCH='gfx1100'"), "{out}");
    assert!(!out.contains("HSA_OVERRIDE_GFX_VERSION="), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let ctx = dir.path().join("ctx");
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        "rocm",
        "--sysroot",
        tree.to_str().unwrap(),
        "-o",
        ctx.to_str().unwrap(),
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let df = std::fs::read_to_string(ctx.join("Dockerfile")).unwrap();
    assert!(df.contains("FROM rocm/pytorch:rocm6.1_"), "{df}");
    assert!(
        err.contains("ROCm 6.1.3 on WSL") && err.contains("/dev/dxg"),
        "{err}"
    );

    let r = doctor("wsl2-rx7900gre", false);
    let m = rocmenv::engine::device_map(
        &r.facts,
        Vendor::Amd,
        None,
        "",
        false,
        rocmenv::engine::Security::Default,
    )
    .unwrap();
    assert_eq!(m.devices, ["/dev/dxg"]);
    assert!(m.gpus[0].contains("AMD Radeon RX 7900 GRE"), "{:?}", m.gpus);

    // The RX 6800 XT the HIP runtime names: its target from gpus.yaml, and no override (WSL ignores one).
    let o = rocmenv(&[
        "env",
        "--sysroot",
        fixture("wsl2-rx6800xt").to_str().unwrap(),
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("PYTORCH_ROCM_ARCH='gfx1030'"), "{out}");
    assert!(!out.contains("HSA_OVERRIDE_GFX_VERSION="), "{out}");

    // A tree whose ROCm refuses the GPU names none: env says where it looked instead of calling it a host without one.
    let d = tree_whose_rocm_refuses_the_gpu();
    let o = rocmenv(&["env", "--sysroot", d.path().join("h").to_str().unwrap()]);
    let (_, err) = text(&o);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        err.contains("under WSL") && err.contains("rocminfo"),
        "{err}"
    );
}

/// `run --print` on the WSL trees: the NVIDIA GPU is handed over with `--gpus` (the NVIDIA container toolkit works
/// under WSL), and an AMD GPU behind /dev/dxg gets /dev/dxg (tests/wsl_run.rs checks the binds), not /dev/kfd.
#[test]
fn run_print_maps_the_wsl_nvidia_gpu_and_dxg_for_amd() {
    let o = rocmenv(&[
        "run",
        "--print",
        "--sysroot",
        fixture("wsl2-rtx3060").to_str().unwrap(),
        "--image",
        "nvcr.io/nvidia/pytorch:24.05-py3",
        "--",
        "python",
        "-c",
        "1",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("--gpus=all"), "{out}");
    assert!(err.contains("maps GPU 0 (NVIDIA GeForce RTX 3060"), "{err}");
    let o = rocmenv(&[
        "run",
        "--print",
        "--sysroot",
        fixture("wsl2-rx7900gre").to_str().unwrap(),
        "--image",
        "rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.1.2",
        "--",
        "python",
        "-c",
        "1",
    ]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.contains("--device=/dev/dxg") && !out.contains("--device=/dev/kfd"),
        "{out}"
    );
}
