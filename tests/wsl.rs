//! Issue 34, WSL2: AMD's ROCm-on-WSL support in the matrices, the GPUs WSL exposes found and judged against it,
//! the checks WSL does not have skipped as such, and env, dockerfile and run following the WSL host. Each tree is
//! built from a real capture (tests/fixtures/hosts/README.md names them).

#[allow(dead_code)]
#[path = "common/trees.rs"]
mod trees;

use rocmenv::checks::{Finding, Status};
use rocmenv::host::HostFacts;
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use rocmenv::report::DoctorReport;
use rocmenv::vendor::Vendor;
use std::path::PathBuf;
use trees::{dockerfile_in, fixture, print_run, rocmenv, text};

fn doctor(name: &str, deep: bool) -> DoctorReport {
    doctor_at(&fixture(name), deep)
}

fn doctor_at(tree: &std::path::Path, deep: bool) -> DoctorReport {
    let opts = DoctorOptions {
        sysroot: Some(tree.to_path_buf()),
        deep,
        ..DoctorOptions::default()
    };
    build_report(&opts).unwrap_or_else(|e| panic!("{}: {e}", tree.display()))
}

/// A copy of the RX 7900 GRE WSL tree with ROCm `release` installed (in /opt/rocm-`release`, as AMD's packages put
/// it), on Ubuntu `ubuntu`, its rocminfo naming `gpu` (`AMD Radeon RX 7800 XT`) with target `gfx` instead.
fn wsl_tree(release: &str, ubuntu: &str, gpu: Option<(&str, &str)>) -> tempfile::TempDir {
    let t = trees::copy_of("wsl2-rx7900gre");
    let opt = t.path().join("opt");
    std::fs::rename(opt.join("rocm-6.1.3"), opt.join(format!("rocm-{release}"))).unwrap();
    std::fs::remove_file(opt.join("rocm")).unwrap();
    std::os::unix::fs::symlink(format!("rocm-{release}"), opt.join("rocm")).unwrap();
    std::fs::write(
        opt.join(format!("rocm-{release}/.info/version")),
        format!("{release}-1\n"),
    )
    .unwrap();
    let os = t.path().join("etc/os-release");
    let code = if ubuntu == "24.04" { "noble" } else { "jammy" };
    let text = std::fs::read_to_string(&os)
        .unwrap()
        .replace("22.04", ubuntu)
        .replace("jammy", code);
    std::fs::write(&os, text).unwrap();
    if let Some((name, gfx)) = gpu {
        let ri = t.path().join(".rocmenv/rocminfo.txt");
        let text = std::fs::read_to_string(&ri)
            .unwrap()
            .replace("AMD Radeon RX 7900 GRE", name)
            .replace("gfx1100", gfx);
        std::fs::write(&ri, text).unwrap();
    }
    t
}

fn find<'a>(r: &'a DoctorReport, id: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
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

/// A copy of the RX 6800 XT tree whose ROCm refuses the GPU: rocminfo fails with HSA_STATUS_ERROR_OUT_OF_RESOURCES
/// (a real WSL capture, from an RX 7800 XT host, ROCm's answer for a GPU off AMD's WSL list) and HIP lists nothing.
fn tree_whose_rocm_refuses_the_gpu() -> tempfile::TempDir {
    let d = trees::copy_of("wsl2-rx6800xt");
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
    let rec = d.path().join(".rocmenv");
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
        let r = doctor_at(d.path(), deep);
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
    let (o, df) = dockerfile_in(&fixture("wsl2-rtx3060"), "ngc");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let df = df.expect("a Dockerfile");
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

    let (o, df) = dockerfile_in(&tree, "rocm");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let df = df.expect("a Dockerfile");
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
    let o = rocmenv(&["env", "--sysroot", d.path().to_str().unwrap()]);
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
    let nvcr = "nvcr.io/nvidia/pytorch:24.05-py3";
    let (code, out, err) = print_run(&fixture("wsl2-rtx3060"), nvcr, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("--gpus=all"), "{out}");
    assert!(err.contains("maps GPU 0 (NVIDIA GeForce RTX 3060"), "{err}");
    let rocm = "rocm/pytorch:rocm6.1_ubuntu22.04_py3.10_pytorch_2.1.2";
    let (code, out, err) = print_run(&fixture("wsl2-rx7900gre"), rocm, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("--device=/dev/dxg") && !out.contains("--device=/dev/kfd"),
        "{out}"
    );
}

/// Issue 34: the later ROCm-on-WSL releases AMD documents are in the matrices: 7.2.x (librocdxg 1.1.0's table), one
/// record per 7.2 release, shown beside the Linux record of the same release by `matrix rocm`.
#[test]
fn the_7_2_wsl_releases_are_shown_beside_their_linux_records() {
    let o = rocmenv(&["matrix", "rocm", "7.2.3"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.starts_with("ROCm 7.2.3 ("), "{out}");
    assert!(
        out.contains("also AMD's ROCm-on-WSL release (librocdxg 1.1.0)"),
        "{out}"
    );
    assert!(out.contains("Radeon RX 9070 XT"), "{out}");
    let o = rocmenv(&["matrix", "rocm", "7.2.3", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["query"], "rocm");
    let w = &v["rocm"]["wsl"];
    assert_eq!(w["rocdxg"], "1.1.0");
    assert!(w["windows_driver"].is_null(), "AMD names no driver version");
    assert!(w["source"]
        .as_str()
        .unwrap()
        .contains("ROCm/librocdxg@021a477ae052e38dc03c82213480157b20a10735:README.md"));
    // A release with no WSL record has none.
    let o = rocmenv(&["matrix", "rocm", "7.1.1", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["rocm"].get("wsl").is_none(), "{v}");
}

/// Every WSL release of the matrices is found for the ROCm installed under WSL, exactly: the RX 7900 GRE (on every
/// list) passes on the Ubuntu each lists, and the summary names the installed release.
#[test]
fn every_wsl_release_is_found_for_the_installed_rocm() {
    let m = rocmenv::matrix::Matrices::embedded().unwrap();
    let releases: Vec<String> = m.rocm.wsl.iter().map(|w| w.release.to_string()).collect();
    assert!(releases.len() >= 6, "{releases:?}");
    for w in &m.rocm.wsl {
        let v = w.release.to_string();
        let ubuntu = &w.distros[0].version;
        let t = wsl_tree(&v, ubuntu, None);
        let r = doctor_at(t.path(), false);
        let f = find(&r, "wsl.rocm-support");
        assert_eq!(f.status, Status::Pass, "{v}: {}", f.summary);
        assert!(
            f.summary.contains(&format!("ROCm {v} on WSL")),
            "{v}: {}",
            f.summary
        );
        assert_eq!(
            find(&r, "rocm.installed").status,
            Status::Pass,
            "{v}: {}",
            find(&r, "rocm.installed").summary
        );
        not_under_wsl_is_never_a_pass(&r);
    }
}

/// The lists differ per release, as AMD's do: an RX 7800 XT (gfx1101) is on 7.2.x's list and not on 6.1.3's; an
/// RX 7600 (gfx1102) is on neither; Ubuntu 24.04 is listed for 7.2.x and not for 6.1.3.
#[test]
fn each_wsl_release_judges_by_its_own_lists() {
    let judge = |release: &str, ubuntu: &str, gpu: Option<(&str, &str)>| {
        let t = wsl_tree(release, ubuntu, gpu);
        let r = doctor_at(t.path(), false);
        let f = find(&r, "wsl.rocm-support").clone();
        (f.status, f.summary, f.detail.unwrap_or_default())
    };
    let rx7800 = Some(("AMD Radeon RX 7800 XT", "gfx1101"));
    let (st, sum, detail) = judge("7.2.3", "22.04", rx7800);
    assert_eq!(st, Status::Pass, "{sum}");
    assert!(detail.contains("librocdxg 1.1.0"), "{detail}");
    let (st, sum, _) = judge("6.1.3", "22.04", rx7800);
    assert_eq!(st, Status::Fail, "{sum}");
    assert!(
        sum.contains("gfx1101 is not one ROCm 6.1.3 supports"),
        "{sum}"
    );
    let (st, sum, _) = judge("7.2.4", "24.04", Some(("AMD Radeon RX 7600", "gfx1102")));
    assert_eq!(st, Status::Fail, "{sum}");
    assert!(sum.contains("gfx1102"), "{sum}");
    let (st, sum, _) = judge("7.2.0", "24.04", None);
    assert_eq!(st, Status::Pass, "{sum}");
    let (st, sum, _) = judge("6.1.3", "24.04", None);
    assert_eq!(st, Status::Warn, "{sum}");
    assert!(sum.contains("not one AMD lists"), "{sum}");
}

/// A release AMD published no WSL record for here (6.4.1) warns, and the known list reads as runs of a series.
#[test]
fn an_unknown_wsl_release_warns_with_the_known_ones() {
    let t = wsl_tree("6.4.1", "24.04", None);
    let r = doctor_at(t.path(), false);
    let f = find(&r, "wsl.rocm-support");
    assert_eq!(f.status, Status::Warn, "{}", f.summary);
    assert!(
        f.summary.contains("(known: 6.1.3, 7.2.0-7.2.4)"),
        "{}",
        f.summary
    );
    assert!(
        f.fix.as_deref().unwrap().contains("rocmenv fix"),
        "{:?}",
        f.fix
    );
}

/// `rocmenv fix` under WSL prints AMD's WSL steps (no kernel headers, no amdgpu-dkms, never the Linux driver), for
/// the newest WSL release listed for the distribution; a host whose ROCm is a WSL release gets none.
#[test]
fn fix_install_under_wsl_prints_amds_wsl_steps() {
    let t = wsl_tree("6.4.1", "24.04", None);
    let o = rocmenv(&["fix", "--sysroot", t.path().to_str().unwrap()]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("fix.install"), "{out}");
    assert!(
        out.contains("ROCm 7.2.4 on WSL with librocdxg 1.1.0"),
        "{out}"
    );
    assert!(out.contains("wget https://repo.radeon.com/amdgpu-install/7.2.4/ubuntu/noble/amdgpu-install_7.2.4.70204-1_all.deb"), "{out}");
    assert!(out.contains("export HSA_ENABLE_DXG_DETECTION=1"), "{out}");
    let commands: Vec<&str> = out
        .lines()
        .filter(|l| l.trim_start().starts_with("$ "))
        .collect();
    assert!(
        !commands
            .iter()
            .any(|c| c.contains("amdgpu-dkms") || c.contains("linux-headers")),
        "{out}"
    );
    assert!(out.contains("ROCm/librocdxg@021a477"), "{out}");
    for (release, ubuntu) in [("6.1.3", "22.04"), ("7.2.3", "24.04")] {
        let t = wsl_tree(release, ubuntu, None);
        let o = rocmenv(&["fix", "--sysroot", t.path().to_str().unwrap()]);
        let (out, _) = text(&o);
        assert!(!out.contains("fix.install"), "{release}: {out}");
    }
}

/// `dockerfile --stack rocm` on a 7.2.x WSL host holds the image to the 7.2 series and says what a container needs
/// for librocdxg besides /dev/dxg: the library and HSA_ENABLE_DXG_DETECTION=1.
#[test]
fn dockerfile_on_a_7_2_wsl_host_names_librocdxg() {
    let t = wsl_tree("7.2.3", "22.04", None);
    let (o, df) = dockerfile_in(t.path(), "rocm");
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let df = df.expect("a Dockerfile");
    assert!(df.contains("FROM rocm/pytorch:rocm7.2"), "{df}");
    assert!(err.contains("ROCm 7.2.3 on WSL"), "{err}");
    assert!(
        err.contains("librocdxg 1.1.0: /opt/rocm/lib/librocdxg.so with HSA_ENABLE_DXG_DETECTION=1"),
        "{err}"
    );
    // Its ROCm 7 has no WSL HSA runtime to mount: without the bridge, run cannot map the GPU and says what is missing.
    assert!(
        err.contains("cannot map it yet: /opt/rocm/lib/librocdxg.so is missing: ROCm 7.2.3 on WSL"),
        "{err}"
    );
}

/// A 7.2.x WSL host with AMD's ROCDXG bridge built and installed: env adds HSA_ENABLE_DXG_DETECTION=1 (the bridge
/// looks behind /dev/dxg only with it), run binds the bridge and sets the variable, doctor judges the GPU against
/// the 7.2.3 list and passes the container mapping.
#[test]
fn a_7_2_wsl_host_with_the_rocdxg_bridge_gets_dxg_detection() {
    let t = wsl_tree("7.2.3", "24.04", None);
    std::fs::write(t.path().join("opt/rocm-7.2.3/lib/librocdxg.so"), "").unwrap();
    let tree = t.path().to_str().unwrap();
    let o = rocmenv(&["env", "--sysroot", tree]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(out.contains("export HSA_ENABLE_DXG_DETECTION='1'"), "{out}");
    assert!(out.contains("PYTORCH_ROCM_ARCH='gfx1100'"), "{out}");
    let image = "rocm/pytorch:rocm7.2.3_ubuntu24.04_py3.12_pytorch_release_2.9.1";
    let (code, out, err) = print_run(t.path(), image, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("-v /opt/rocm/lib/librocdxg.so:/usr/lib/librocdxg.so:ro")
            && out.contains("HSA_ENABLE_DXG_DETECTION=1")
            && !out.contains("libhsa-runtime64"),
        "{out}"
    );
    let r = doctor_at(t.path(), false);
    assert_eq!(find(&r, "wsl.rocm-support").status, Status::Pass);
    assert_eq!(find(&r, "docker.gpu-runtime").status, Status::Pass);
    // Without the bridge there is nothing to look behind /dev/dxg with: no variable.
    std::fs::remove_file(t.path().join("opt/rocm-7.2.3/lib/librocdxg.so")).unwrap();
    let (out, _) = text(&rocmenv(&["env", "--sysroot", tree]));
    assert!(!out.contains("HSA_ENABLE_DXG_DETECTION"), "{out}");
}

/// AMD's 7.2 WSL list names APUs by processor; rocminfo names the integrated GPU. A Strix Halo host (CPU "AMD RYZEN
/// AI MAX+ 395 w/ Radeon 8060S", as WSL's /proc/cpuinfo shows it; its GPU agent "AMD Radeon(TM) 8060S Graphics",
/// gfx1151, Chip ID 0x1586) is on the list through its processor; a Ryzen AI Max 390 entry does not match a 395, nor
/// the 395 entry a hypothetical "395X".
#[test]
fn an_apu_under_wsl_is_judged_by_its_listed_processor() {
    let t = wsl_tree(
        "7.2.3",
        "24.04",
        Some(("AMD Radeon(TM) 8060S Graphics", "gfx1151")),
    );
    let ri = t.path().join(".rocmenv/rocminfo.txt");
    let text = std::fs::read_to_string(&ri).unwrap();
    assert!(text.contains("29772(0x744c)"));
    std::fs::write(&ri, text.replace("29772(0x744c)", "5510(0x1586)")).unwrap();
    let cpuinfo = t.path().join("proc/cpuinfo");
    let set_cpu = |model: &str| {
        let text: String = std::fs::read_to_string(&cpuinfo)
            .unwrap()
            .lines()
            .map(|l| match l.starts_with("model name") {
                true => format!("model name\t: {model}\n"),
                false => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&cpuinfo, text).unwrap();
    };
    set_cpu("AMD RYZEN AI MAX+ 395 w/ Radeon 8060S");
    let r = doctor_at(t.path(), false);
    let w = find(&r, "wsl.rocm-support");
    assert_eq!(w.status, Status::Pass, "{}", w.summary);
    assert!(
        w.summary
            .contains("the integrated GPU of the Ryzen AI Max+ 395"),
        "{}",
        w.summary
    );
    for other in [
        "AMD RYZEN AI MAX+ 395X w/ Radeon 8060S",
        "AMD Ryzen 9 9950X",
    ] {
        set_cpu(other);
        let r = doctor_at(t.path(), false);
        let w = find(&r, "wsl.rocm-support");
        assert_eq!(w.status, Status::Fail, "{other}: {}", w.summary);
    }
}
