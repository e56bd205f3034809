//! `doctor` on every captured host tree: the findings that matter asserted by hand, and the whole JSON as a snapshot.

use rocmenv::checks::{Finding, Status};
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use rocmenv::report::{doctor_json, render_human, DoctorReport, Style};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

fn doctor(name: &str, target: Option<&str>) -> DoctorReport {
    let opts = DoctorOptions {
        sysroot: Some(fixture(name)),
        target: target.map(|t| t.parse().unwrap()),
        ..DoctorOptions::default()
    };
    build_report(&opts).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn find<'a>(r: &'a DoctorReport, id: &str, subject: Option<&str>) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id && (subject.is_none() || f.subject.as_deref() == subject))
        .unwrap_or_else(|| panic!("no finding {id} {subject:?}"))
}

fn status(r: &DoctorReport, id: &str) -> Status {
    find(r, id, None).status
}

/// Every finding with this id has this status.
fn all(r: &DoctorReport, id: &str, want: Status) {
    let got: Vec<_> = r.findings.iter().filter(|f| f.id == id).collect();
    assert!(!got.is_empty(), "no finding {id}");
    for f in got {
        assert_eq!(f.status, want, "{id} {:?}: {}", f.subject, f.summary);
    }
}

fn snapshot(name: &str, r: &DoctorReport) {
    let json = doctor_json(r);
    insta::assert_json_snapshot!(name, json, { ".rocmenv_version" => "[version]" });
    // The human report renders without panicking and ends with the counts.
    let mut out = Vec::new();
    render_human(r, Style::Plain, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let s = r.summary;
    let warnings = if s.warn == 1 { "warning" } else { "warnings" };
    assert!(text.trim_end().ends_with(&format!(
        "{} passed, {} {warnings}, {} failed, {} skipped",
        s.pass, s.warn, s.fail, s.skip
    )));
    assert!(!text.contains('\x1b'), "plain style must not colour");
}

#[test]
fn mi300x_x4_on_ubuntu_2204_passes_against_rocm_62() {
    let r = doctor("mi300x-x4-ubuntu2204", Some("rocm-6.2"));
    assert_eq!(r.facts.gpus.len(), 4);
    assert!(r.facts.gpus.iter().all(
        |g| g.gfx.map(|t| t.to_string()).as_deref() == Some("gfx942")
            && g.vram_bytes == Some(206141652992)
    ));
    all(&r, "gpu.gfx-supported", Status::Pass);
    // Issue 14: the fix names the exact installed release, not the target's series again.
    let installed = find(&r, "rocm.installed", None);
    assert!(
        installed
            .fix
            .as_deref()
            .unwrap()
            .ends_with("check against the installed one: --target rocm-6.2.0"),
        "{installed:?}"
    );
    assert_eq!(status(&r, "kernel.rocm-supported"), Status::Pass);
    assert_eq!(status(&r, "driver.amdgpu-version"), Status::Pass);
    assert_eq!(status(&r, "devices.kfd"), Status::Pass);
    // Issue 14: GPUs on both sockets (NUMA 0,0,1,1) is how two-socket servers are built: information, so a
    // healthy server passes --strict.
    let numa = find(&r, "topology.numa", None);
    assert_eq!(numa.status, Status::Pass);
    assert_eq!(
        numa.summary,
        "GPUs sit on 2 NUMA nodes (node 0: GPU 0,1; node 1: GPU 2,3)"
    );
    assert_eq!(r.summary.fail, 0);
    assert_eq!(r.summary.exit_code(false), 0);
    assert_eq!(
        r.summary.exit_code(true),
        0,
        "a healthy server passes --strict"
    );
    snapshot("mi300x-x4-ubuntu2204-rocm-6.2", &r);
}

#[test]
fn mi300x_default_target_is_the_installed_rocm_and_the_newest_flags_the_old_driver() {
    // Issue 10: a healthy ROCm 6.2 host is green on a first run: without --target, the installed ROCm is the target,
    // and the header says so.
    let r = doctor("mi300x-x4-ubuntu2204", None);
    assert_eq!(r.target["rocm"], "6.2.0");
    assert_eq!(r.target_why, "the ROCm installed at /opt/rocm-6.2.0");
    assert_eq!(r.summary.fail, 0);
    assert_eq!(r.summary.exit_code(false), 0);
    // Against the newest release, its amdgpu-dkms 6.8.5 is out of the driver window.
    let r = doctor("mi300x-x4-ubuntu2204", Some("rocm-7.2.4"));
    let f = find(&r, "driver.amdgpu-version", None);
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(f.summary.contains("6.8.5"), "{}", f.summary);
    assert!(f.fix.as_deref().unwrap().contains("amdgpu-install"));
}

#[test]
fn without_rocm_user_space_the_default_target_follows_the_amdgpu_dkms_driver() {
    // Issue 10: a host with amdgpu-dkms 6.8.5 (driver 6.2) and no /opt/rocm is checked against the newest release whose
    // driver window holds driver 6.2, not against the newest release, whose window it is outside.
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("mi300x");
    let copy = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture("mi300x-x4-ubuntu2204"))
        .arg(&tree)
        .status()
        .unwrap();
    assert!(copy.success());
    for e in std::fs::read_dir(tree.join("opt")).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with("rocm") {
            let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
        }
    }
    let r = build_report(&DoctorOptions {
        sysroot: Some(tree.clone()),
        ..DoctorOptions::default()
    })
    .unwrap();
    assert!(
        r.target_why
            .starts_with("newest release that supports the loaded amdgpu-dkms 6.8.5, driver 6.2, and builds gfx942"),
        "{}",
        r.target_why
    );
    let f = find(&r, "driver.amdgpu-version", None);
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    let newest = doctor("mi300x-x4-ubuntu2204", Some("rocm-7.2.4"));
    assert_ne!(r.target["rocm"], newest.target["rocm"]);
    // Without the dkms module (the in-tree driver has no version), the newest release that builds the GPU is taken.
    std::fs::remove_file(tree.join("sys/module/amdgpu/version")).unwrap();
    let r = build_report(&DoctorOptions {
        sysroot: Some(tree),
        ..DoctorOptions::default()
    })
    .unwrap();
    assert_eq!(r.target_why, "newest release that builds gfx942");
}

#[test]
fn the_default_for_a_mixed_host_without_rocm_names_what_the_release_builds() {
    // Issue 10: the ryzen5600g header said "none builds gfx1030, gfx90c natively" while a check said gfx1030 is
    // supported: the header names what the chosen release builds and what it does not.
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("mint");
    let copy = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture("ryzen5600g-igpu-rx6800-mint21"))
        .arg(&tree)
        .status()
        .unwrap();
    assert!(copy.success());
    std::fs::remove_dir_all(tree.join("opt")).unwrap();
    std::fs::remove_file(tree.join("sys/module/amdgpu/version")).unwrap();
    let r = build_report(&DoctorOptions {
        sysroot: Some(tree),
        ..DoctorOptions::default()
    })
    .unwrap();
    assert_eq!(
        r.target_why,
        "newest release; it builds gfx1030 but not gfx90c natively"
    );
    let f = find(&r, "gpu.gfx-supported", Some("0000:03:00.0"));
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
}

#[test]
fn a_series_target_is_the_newest_release_of_that_series_for_rocm_and_cuda_alike() {
    // Issue 10: `cuda-12` resolved to 12.0.0 while `rocm-6` resolved to the newest 6.x.
    let m = rocmenv::matrix::Matrices::embedded().unwrap();
    let r = doctor("rtx4090-driver-535", Some("cuda-12"));
    let newest_12 = m
        .cuda
        .releases
        .iter()
        .filter(|c| c.version.major() == 12)
        .map(|c| c.version.to_string())
        .next_back()
        .unwrap();
    assert_eq!(r.target["cuda"], newest_12.as_str());
    assert_ne!(newest_12, "12.0.0");
    let r = doctor("rx6700xt-ubuntu2204", Some("rocm-6"));
    let newest_6 = m
        .rocm
        .releases
        .iter()
        .filter(|c| c.version.major() == 6)
        .map(|c| c.version.to_string())
        .next_back()
        .unwrap();
    assert_eq!(r.target["rocm"], newest_6.as_str());
}

#[test]
fn mi210_x4_reports_the_degraded_link() {
    let r = doctor("mi210-x4-ubuntu2204", Some("rocm-6.2"));
    let slow = find(&r, "pcie.link", Some("0000:c3:00.0"));
    assert_eq!(slow.status, Status::Warn);
    assert!(slow.summary.contains("x8 of x16"), "{}", slow.summary);
    for bdf in ["0000:03:00.0", "0000:06:00.0", "0000:e3:00.0"] {
        assert_eq!(find(&r, "pcie.link", Some(bdf)).status, Status::Pass);
    }
    all(&r, "gpu.gfx-supported", Status::Pass);
    snapshot("mi210-x4-ubuntu2204-rocm-6.2", &r);
}

#[test]
fn rx7900xtx_on_hwe_65_with_in_tree_driver() {
    let r = doctor("rx7900xtx-ubuntu2204-hwe", Some("rocm-6.0"));
    assert_eq!(
        r.facts.amdgpu_driver.as_ref().unwrap().kind.as_deref(),
        Some("in-tree")
    );
    let d = find(&r, "driver.amdgpu-version", None);
    assert_eq!(d.status, Status::Skip);
    assert!(d.summary.contains("in-tree"), "{}", d.summary);
    assert_eq!(
        status(&r, "kernel.rocm-supported"),
        Status::Pass,
        "6.0 lists Ubuntu 22.04.4 with the 6.5 HWE kernel"
    );
    assert_eq!(status(&r, "rocm.installed"), Status::Pass);
    snapshot("rx7900xtx-ubuntu2204-hwe-rocm-6.0", &r);
    // 6.3 lists only 22.04.5, with 5.15 GA and 6.8 HWE.
    let r = doctor("rx7900xtx-ubuntu2204-hwe", Some("rocm-6.3"));
    let k = find(&r, "kernel.rocm-supported", None);
    assert_eq!(k.status, Status::Fail, "{}", k.summary);
    assert!(
        k.fix
            .as_deref()
            .unwrap()
            .contains("linux-generic-hwe-22.04"),
        "{:?}",
        k.fix
    );
}

#[test]
fn rx6700xt_needs_the_10_3_0_override() {
    let r = doctor("rx6700xt-ubuntu2204", Some("rocm-6.2"));
    let f = find(&r, "gpu.gfx-supported", None);
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.contains("gfx1031") && f.summary.contains("HSA_OVERRIDE_GFX_VERSION=10.3.0"),
        "{}",
        f.summary
    );
    assert_eq!(
        f.fix.as_deref(),
        Some("export HSA_OVERRIDE_GFX_VERSION=10.3.0")
    );
    assert!(f.detail.as_deref().unwrap().contains("high confidence"));
    snapshot("rx6700xt-ubuntu2204-rocm-6.2", &r);
}

#[test]
fn radeon_780m_runs_through_its_override_with_a_warning() {
    let r = doctor("radeon780m-apu-ubuntu2404", Some("rocm-6.2"));
    let g = &r.facts.gpus[0];
    assert_eq!(
        (g.gfx.map(|t| t.to_string()).as_deref(), g.integrated),
        (Some("gfx1103"), Some(true))
    );
    let f = find(&r, "gpu.gfx-supported", None);
    assert_eq!(f.status, Status::Warn, "{}", f.summary);
    assert!(f.detail.as_deref().unwrap().contains("medium confidence"));
    assert_eq!(status(&r, "env.hsa-override"), Status::Pass);
    assert_eq!(status(&r, "gpu.igpu-with-dgpu"), Status::Pass);
    // Issue 14: 24.04.3 is newer than the listed 24.04.1: a note on a pass, not "update to the newest".
    let os = find(&r, "os.rocm-supported", None);
    assert_eq!(os.status, Status::Pass);
    assert!(
        os.summary
            .ends_with("(point release 24.04.3 is newer than the listed 24.04.1, 24.04)"),
        "{}",
        os.summary
    );
    assert_eq!(os.fix, None);
    snapshot("radeon780m-apu-ubuntu2404-rocm-6.2", &r);
}

#[test]
fn igpu_next_to_a_discrete_card_is_flagged_with_the_variable_to_hide_it() {
    let r = doctor("ryzen5600g-igpu-rx6800-mint21", Some("rocm-6.2"));
    let f = find(&r, "gpu.igpu-with-dgpu", None);
    assert_eq!(f.status, Status::Warn);
    assert_eq!(f.fix.as_deref(), Some("export HIP_VISIBLE_DEVICES=0"));
    // Issue 10: the Mint summary is a whole sentence.
    assert_eq!(
        find(&r, "os.rocm-supported", None).summary,
        "Linux Mint 21.3 is not listed for ROCm 6.2.4; it is built on Ubuntu 22.04 (jammy), which ROCm 6.2.4 lists"
    );
    assert_eq!(
        find(&r, "gpu.gfx-supported", Some("0000:03:00.0")).status,
        Status::Pass
    );
    assert_eq!(
        find(&r, "os.rocm-supported", None).status,
        Status::Warn,
        "Mint is a derivative of a listed Ubuntu"
    );
    snapshot("ryzen5600g-igpu-rx6800-mint21-rocm-6.2", &r);
}

#[test]
fn user_outside_render_group_gets_the_usermod_fix() {
    let r = doctor("user-not-in-render-group", Some("rocm-6.2"));
    for id in ["devices.kfd", "devices.render"] {
        let f = find(&r, id, None);
        assert_eq!(f.status, Status::Fail, "{id}");
        assert!(f.summary.starts_with("bob cannot open"), "{}", f.summary);
        assert!(f
            .fix
            .as_deref()
            .unwrap()
            .starts_with("sudo usermod -aG render,video $USER"));
    }
    snapshot("user-not-in-render-group-rocm-6.2", &r);
}

#[test]
fn amdgpu_not_loaded_fails_with_modprobe_and_falls_back_to_the_pci_id() {
    let r = doctor("amdgpu-not-loaded", Some("rocm-6.2"));
    assert_eq!(status(&r, "driver.amdgpu-loaded"), Status::Fail);
    assert!(find(&r, "driver.amdgpu-loaded", None)
        .fix
        .as_deref()
        .unwrap()
        .contains("modprobe amdgpu"));
    assert_eq!(status(&r, "devices.kfd"), Status::Fail);
    let g = &r.facts.gpus[0];
    assert_eq!(
        (
            g.gfx.map(|t| t.to_string()).as_deref(),
            g.gfx_source.as_deref()
        ),
        (Some("gfx1100"), Some("pci-id"))
    );
    snapshot("amdgpu-not-loaded-rocm-6.2", &r);
}

/// The same host with `blacklist amdgpu` in /etc/modprobe.d: the failure names the file and line (what `rocmenv fix`
/// removes); the tree without it says nothing of a blacklist.
#[test]
fn an_amdgpu_blacklist_is_named_with_its_file_and_line() {
    let r = doctor("amdgpu-blacklisted", Some("rocm-6.2"));
    let f = find(&r, "driver.amdgpu-loaded", None);
    assert_eq!(f.status, Status::Fail);
    assert!(f.summary.contains("blacklisted"), "{}", f.summary);
    assert!(
        f.detail
            .as_deref()
            .unwrap()
            .contains("/etc/modprobe.d/blacklist-amdgpu.conf:1 `blacklist amdgpu`"),
        "{:?}",
        f.detail
    );
    assert!(f.fix.as_deref().unwrap().contains("rocmenv fix"));
    let r = doctor("amdgpu-not-loaded", Some("rocm-6.2"));
    assert!(!find(&r, "driver.amdgpu-loaded", None)
        .summary
        .contains("blacklisted"));
}

#[test]
fn h100_x8_with_a_current_driver_passes() {
    let r = doctor("h100-x8-ubuntu2204", None);
    assert_eq!(
        r.facts.nvidia_gpus().count(),
        8,
        "NVSwitch functions are not GPUs"
    );
    assert_eq!(
        r.facts.nvidia_driver.as_ref().unwrap().version.to_string(),
        "565.57.01"
    );
    assert_eq!(status(&r, "driver.nvidia-version"), Status::Pass);
    all(&r, "gpu.cuda-arch", Status::Pass);
    assert_eq!(status(&r, "docker.gpu-runtime"), Status::Pass);
    assert_eq!(r.summary.fail, 0);
    snapshot("h100-x8-ubuntu2204", &r);
    let ngc = doctor("h100-x8-ubuntu2204", Some("ngc-24.05"));
    assert_eq!(status(&ngc, "driver.nvidia-version"), Status::Pass);
}

#[test]
fn rtx4090_driver_535_is_too_old_for_cuda_124() {
    let r = doctor("rtx4090-driver-535", Some("cuda-12.4"));
    let f = find(&r, "driver.nvidia-version", None);
    assert_eq!(f.status, Status::Fail);
    assert!(
        f.summary.contains("535.104.05")
            && f.summary.contains("550.54.15")
            && f.summary.contains("12.4 Update 1"),
        "{}",
        f.summary
    );
    assert_eq!(status(&r, "docker.gpu-runtime"), Status::Fail);
    // Issue 14: the captured idle link (Gen1 of Gen4, x16) is power saving, not a slow slot.
    let link = find(&r, "pcie.link", None);
    assert_eq!(link.status, Status::Pass);
    assert!(
        link.summary
            .contains("PCIe 2.5 GT/s x16, max 16 GT/s x16 (an idle GPU lowers its link speed"),
        "{}",
        link.summary
    );
    snapshot("rtx4090-driver-535-cuda-12.4", &r);
}

/// Issue 10: a GeForce RTX 4090 on driver 535 against ngc-24.05 got only a warning about forward compatibility,
/// which consumer GPUs cannot use: on a GeForce it is a failure naming the GPU. On a data center GPU NVIDIA's notes
/// support the branch through forward compatibility: a conditional pass (issue 34).
#[test]
fn rtx4090_driver_535_fails_ngc_2405_because_geforce_has_no_forward_compatibility() {
    let r = doctor("rtx4090-driver-535", Some("ngc-24.05"));
    let f = find(&r, "driver.nvidia-version", None);
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary.contains("535.104.05")
            && f.summary.contains("forward compatibility")
            && f.summary.contains("NVIDIA GeForce RTX 4090"),
        "{}",
        f.summary
    );
    assert!(
        f.fix.as_deref().unwrap_or("").contains("545"),
        "{:?}",
        f.fix
    );
    // The same host with a data center GPU (L40S) passes through forward compatibility, on that condition.
    let dir = tempfile::tempdir().unwrap();
    let copy = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture("rtx4090-driver-535"))
        .arg(dir.path().join("l40s"))
        .status()
        .unwrap();
    assert!(copy.success());
    // The device id is in `device` and in `uevent` (which doctor reads first), as in sysfs.
    let gpu = dir.path().join("l40s/sys/bus/pci/devices/0000:01:00.0");
    std::fs::write(gpu.join("device"), "0x26b9\n").unwrap();
    let uevent = std::fs::read_to_string(gpu.join("uevent")).unwrap();
    assert!(uevent.contains("PCI_ID=10DE:2684"), "{uevent}");
    std::fs::write(
        gpu.join("uevent"),
        uevent.replace("PCI_ID=10DE:2684", "PCI_ID=10DE:26B9"),
    )
    .unwrap();
    let r = build_report(&DoctorOptions {
        sysroot: Some(dir.path().join("l40s")),
        target: Some("ngc-24.05".parse().unwrap()),
        ..DoctorOptions::default()
    })
    .unwrap();
    let f = find(&r, "driver.nvidia-version", None);
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert!(
        f.conditional && f.summary.contains("forward compatibility"),
        "{}",
        f.summary
    );
}

#[test]
fn wsl2_is_recognised_and_the_kernel_matrix_skipped() {
    let r = doctor("wsl2-rx6800xt", Some("rocm-6.1"));
    assert!(r.facts.wsl);
    assert_eq!(status(&r, "kernel.rocm-supported"), Status::Skip);
    // The RX 6800 XT is found through the HIP runtime's record (what PyTorch saw on the host), judged by the WSL list.
    assert_eq!(status(&r, "gpu.present"), Status::Pass);
    assert_eq!(status(&r, "wsl.rocm-support"), Status::Warn);
    snapshot("wsl2-rx6800xt-rocm-6.1", &r);
}

/// Issue 34: the WSL trees with a GPU, found through what WSL exposes (rocminfo; /usr/lib/wsl/lib/nvidia-smi).
/// tests/wsl.rs asserts the findings; the snapshots keep the whole report.
#[test]
fn wsl2_trees_with_a_gpu() {
    let r = doctor("wsl2-rx7900gre", None);
    assert_eq!(status(&r, "wsl.rocm-support"), Status::Pass);
    snapshot("wsl2-rx7900gre", &r);
    let r = doctor("wsl2-rtx3060", None);
    assert_eq!(status(&r, "wsl.nvidia-driver"), Status::Pass);
    snapshot("wsl2-rtx3060", &r);
}

#[test]
fn a_box_with_no_gpu_fails_gpu_present() {
    let r = doctor("no-gpu-debian12", None);
    assert!(r.facts.gpus.is_empty(), "the QEMU VGA device is not a GPU");
    assert_eq!(status(&r, "gpu.present"), Status::Fail);
    assert_eq!(r.summary.exit_code(false), 1);
    snapshot("no-gpu-debian12", &r);
}

#[test]
fn wrong_override_and_missing_devices_in_the_environment() {
    let r = doctor("mi210-bad-env", Some("rocm-6.2"));
    let o = find(&r, "env.hsa-override", None);
    assert_eq!(o.status, Status::Fail);
    assert!(o.summary.contains("supported natively"), "{}", o.summary);
    assert_eq!(o.fix.as_deref(), Some("unset HSA_OVERRIDE_GFX_VERSION (or use HSA_OVERRIDE_GFX_VERSION_<n> only for the GPUs that need one)"));
    let v = find(&r, "env.visible-devices", None);
    assert_eq!(v.status, Status::Fail);
    assert!(
        v.summary
            .contains("names device 5, but there are 4 AMD GPUs"),
        "{}",
        v.summary
    );
    snapshot("mi210-bad-env-rocm-6.2", &r);
}

#[test]
fn rhel_94_with_two_rocm_installs_side_by_side() {
    let r = doctor("rhel94-mi300x-x8", Some("rocm-6.2"));
    assert_eq!(r.facts.rocm_installs.len(), 2);
    assert_eq!(r.facts.rocm.as_ref().unwrap().version.as_str(), "6.2.0");
    assert_eq!(status(&r, "os.rocm-supported"), Status::Pass);
    assert_eq!(status(&r, "kernel.rocm-supported"), Status::Pass);
    assert_eq!(
        status(&r, "devices.kfd"),
        Status::Pass,
        "render gid 998 is looked up by name"
    );
    snapshot("rhel94-mi300x-x8-rocm-6.2", &r);
}

/// Issue 10: the no-GPU tree printed "- no AMD GPU" twice under Device nodes and two identical "not checked under
/// --sysroot" lines under GPU runtimes. Every finding's line says what it is about, so no two are the same.
#[test]
fn no_two_findings_print_the_same_line() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hosts");
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !fixture(&name).join("sys").is_dir() {
            continue;
        }
        let r = doctor(&name, None);
        let mut seen = std::collections::HashSet::new();
        for f in &r.findings {
            assert!(
                seen.insert(f.summary.clone()),
                "{name}: `{}` printed twice",
                f.summary
            );
        }
    }
}

/// Copies a fixture tree to a temporary directory so a test can edit it.
fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join(name);
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(fixture(name))
        .arg(&tree)
        .status()
        .unwrap();
    assert!(ok.success());
    (dir, tree)
}

/// Issue 22: a ROCm Core SDK install (/opt/rocm/core-10.1, update-alternatives links, amdrocm-* packages) is found,
/// named with its stream and prefix, and is what doctor checks against.
#[test]
fn a_core_sdk_install_is_found_and_checked_against() {
    let r = doctor("mi300x-x4-coresdk-10.1-ubuntu2404", None);
    let rocm = r
        .facts
        .rocm
        .as_ref()
        .expect("the Core SDK install is found");
    assert_eq!(
        (rocm.version.as_str(), rocm.path.as_str(), rocm.stream),
        ("10.1.0", "/opt/rocm/core-10.1", "core-sdk")
    );
    assert_eq!(r.target["rocm"], "10.1.0");
    assert_eq!(r.target_why, "the ROCm installed at /opt/rocm/core-10.1");
    let f = find(&r, "rocm.installed", None);
    assert_eq!(f.status, Status::Pass);
    assert_eq!(
        f.summary,
        "ROCm 10.1.0 (ROCm Core SDK) is installed at /opt/rocm/core-10.1"
    );
    // Ubuntu 24.04 is listed for Instinct GPUs (GA 6.8) on 10.1.0: a pass with that condition, shown in text.
    let os = find(&r, "os.rocm-supported", None);
    assert_eq!(os.status, Status::Pass, "{}", os.summary);
    assert!(os.conditional, "{os:?}");
    assert!(os
        .detail
        .as_deref()
        .unwrap()
        .starts_with("for gfx950, gfx942, gfx90a, gfx908 only"));
    assert_eq!(status(&r, "kernel.rocm-supported"), Status::Pass);
    let mut text = Vec::new();
    render_human(&r, Style::Plain, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("for gfx950, gfx942, gfx90a, gfx908 only"),
        "{text}"
    );
    snapshot("mi300x-x4-coresdk-10.1-ubuntu2404", &r);

    // 10.1.0's OS and GPU rows are carried from 10.0.0 (`unconfirmed:` in rocm.yaml): each verdict resting on them
    // says so, in text too; against 10.0.0, whose rows were read from AMD's table, none does.
    let hedge = "ROCm 10.1.0's `distros` is marked unconfirmed in rocm.yaml";
    for id in ["os.rocm-supported", "kernel.rocm-supported"] {
        let f = find(&r, id, None);
        assert!(f.detail.as_deref().unwrap_or("").contains(hedge), "{f:?}");
        assert!(f.conditional, "{f:?}");
    }
    let gfx = find(&r, "gpu.gfx-supported", Some("0000:26:00.0"));
    assert!(
        gfx.detail
            .as_deref()
            .unwrap_or("")
            .contains("ROCm 10.1.0's `gfx` is marked unconfirmed"),
        "{gfx:?}"
    );
    assert!(text.contains(hedge), "{text}");
    let checked = doctor("mi300x-x4-coresdk-10.1-ubuntu2404", Some("rocm-10.0.0"));
    for f in checked.findings.iter() {
        assert!(
            !f.detail.as_deref().unwrap_or("").contains("unconfirmed"),
            "{f:?}"
        );
    }

    // Without the version file, the dpkg database still names the release.
    let (_d, tree) = copy_fixture("mi300x-x4-coresdk-10.1-ubuntu2404");
    std::fs::remove_file(tree.join("opt/rocm/core-10.1/.info/version")).unwrap();
    let r = build_report(&DoctorOptions {
        sysroot: Some(tree),
        ..DoctorOptions::default()
    })
    .unwrap();
    let rocm = r.facts.rocm.as_ref().unwrap();
    assert_eq!(rocm.version.as_str(), "10.1.0");
    assert_eq!(rocm.evidence, "dpkg: amdrocm-core10.1 10.1.0");
}

/// Issue 22: with 7.2.4 installed, doctor checks against 7.2.4, not the newest (Core SDK) release.
#[test]
fn a_host_with_rocm_724_is_checked_against_724() {
    let (_d, tree) = copy_fixture("mi300x-x4-ubuntu2204");
    std::fs::write(tree.join("opt/rocm-6.2.0/.info/version"), "7.2.4-1\n").unwrap();
    let r = build_report(&DoctorOptions {
        sysroot: Some(tree),
        ..DoctorOptions::default()
    })
    .unwrap();
    assert_eq!(r.target["rocm"], "7.2.4");
    // With nothing installed the newest production release, whatever its stream, is the default.
    let m = rocmenv::matrix::Matrices::embedded().unwrap();
    assert_eq!(m.newest_rocm().version.to_string(), "10.1.0");
}

/// Issue 22: `rocm-10` is the newest 10.x, `rocm-7` the newest 7.x production release, and `rocm-7.2` / `rocm-7.14`
/// are told apart number by number.
#[test]
fn series_targets_follow_the_numbers_and_the_streams() {
    for (t, want) in [
        ("rocm-10", "10.1.0"),
        ("rocm-7", "7.14.1"),
        ("rocm-7.2", "7.2.4"),
        ("rocm-7.14", "7.14.1"),
        ("rocm-10.0", "10.0.0"),
    ] {
        let r = doctor("mi300x-x4-ubuntu2204", Some(t));
        assert_eq!(r.target["rocm"], want, "{t}");
    }
}

/// Issue 25: Debian 12 is listed by ROCm 7.2.4 for Instinct GPUs only; an RX 7900 XTX on it fails the OS check,
/// and the pass on an Instinct host shows its condition.
#[test]
fn an_os_listed_for_other_gpus_fails_for_this_gpu() {
    let (_d, tree) = copy_fixture("rx7900xtx-ubuntu2204-hwe");
    let debian = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts/no-gpu-debian12/etc/os-release"),
    )
    .unwrap();
    std::fs::write(tree.join("etc/os-release"), debian).unwrap();
    std::fs::write(tree.join("proc/sys/kernel/osrelease"), "6.1.0-34-amd64\n").unwrap();
    let r = build_report(&DoctorOptions {
        sysroot: Some(tree),
        target: Some("rocm-7.2".parse().unwrap()),
        ..DoctorOptions::default()
    })
    .unwrap();
    let f = find(&r, "os.rocm-supported", None);
    assert_eq!(f.status, Status::Fail, "{}", f.summary);
    assert!(
        f.summary
            .contains("not for this host's Radeon RX 7900 XTX (gfx1100)"),
        "{}",
        f.summary
    );
    assert!(f.fix.as_deref().unwrap().contains("ubuntu 24.04"), "{f:?}");
}

/// Issue 22: advice that names a release names the exact installed one (wsl2: 6.1.3, not the 6.1 series).
/// Issue 34: 6.1.3 is AMD's ROCm-on-WSL release, so against its own series (6.1) it passes with no advice; against
/// another series the advice still names it exactly, and says what it is.
#[test]
fn the_installed_release_is_named_exactly_in_the_fix() {
    let r = doctor("wsl2-rx6800xt", Some("rocm-6.1"));
    let f = find(&r, "rocm.installed", None);
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert!(
        f.summary.contains("6.1.3, AMD's ROCm-on-WSL release"),
        "{}",
        f.summary
    );
    let r = doctor("wsl2-rx6800xt", Some("rocm-6.2"));
    let f = find(&r, "rocm.installed", None);
    let fix = f.fix.as_deref().unwrap();
    assert!(
        fix.contains("the installed ROCm 6.1.3 is AMD's ROCm-on-WSL release"),
        "{fix}"
    );
    assert!(
        !fix.contains("--target rocm-6.1 ") && !fix.ends_with("--target rocm-6.1"),
        "{fix}"
    );
}
