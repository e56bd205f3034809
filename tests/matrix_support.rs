//! Issue 34: support as AMD and NVIDIA state it. What the matrices do not know is "unknown", never "no";
//! NGC data-center driver branches; support per GPU model, not only per gfx target.

use std::process::{Command, Output};

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs")
}

/// `env --gfx gfx90c --rocm 6.2.4`: 6.2.4 has no `built:` data, so whether it ships gfx900 kernels is unknown.
/// env answers with the override the field uses (9.0.0), and says on stderr that it is unconfirmed and which
/// release has data, instead of refusing with "its override target is not built either".
#[test]
fn unknown_built_data_gives_the_field_override_marked_unconfirmed() {
    let o = rocmenv(&["env", "--gfx", "gfx90c", "--rocm", "6.2.4"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l == "export HSA_OVERRIDE_GFX_VERSION='9.0.0'"),
        "{out}"
    );
    assert!(err.contains("unconfirmed"), "{err}");
    assert!(err.contains("nearest release with data: 6.2.2"), "{err}");
    assert!(!err.contains("not built"), "{err}");
    // Without --rocm, a release whose data confirms the override (10.0.0) wins over a newer one that cannot say.
    let o = rocmenv(&["env", "--gfx", "gfx90c"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("ROCm 10.0.0") && !err.contains("unconfirmed"),
        "{err}"
    );
}

/// `matrix gfx gfx90c` shows the releases without data as "unknown", and "not" only where a `built:` list
/// leaves gfx900 out (6.4.0).
#[test]
fn matrix_gfx_shows_unknown_ranges_as_such() {
    let o = rocmenv(&["matrix", "gfx", "gfx90c"]);
    let t = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{t}");
    let line = |v: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(v))
            .unwrap_or_else(|| panic!("{v}: {t}"))
            .to_string()
    };
    for v in ["5.7.0", "6.2.4", "10.1.0"] {
        let l = line(v);
        assert!(
            l.contains("unknown (no built data): override to gfx900"),
            "{l}"
        );
        assert!(l.contains("unconfirmed"), "{l}");
        assert!(!l.contains("not built"), "{l}");
    }
    assert!(
        line("6.4.0").contains("not: its override target is not built"),
        "{t}"
    );
    assert!(line("10.0.0").contains("override to gfx900"), "{t}");

    let o = rocmenv(&["matrix", "gfx", "gfx90c", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = d["gfx"]["releases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["version"] == "6.2.4")
        .unwrap()
        .clone();
    assert_eq!(row["runs"], "override-unknown", "{row}");
    assert_eq!(row["hsa_override_gfx_version"], "9.0.0", "{row}");
    assert_eq!(row["nearest_known"], "6.2.2", "{row}");
}

// ------------------------------------------------------------------ doctor on copied host trees

use rocmenv::checks::{Finding, Status};
use rocmenv::matrix::Sourced;
use rocmenv::ops::doctor::{build_report, DoctorOptions};
use rocmenv::report::DoctorReport;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

/// A copy of host fixture `name` in a temp dir, to change one thing in.
fn copy_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(name);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(fixture(name))
        .arg(&to)
        .status()
        .unwrap();
    assert!(ok.success());
    (dir, to)
}

fn doctor_on(root: &Path, target: &str) -> DoctorReport {
    build_report(&DoctorOptions {
        sysroot: Some(root.to_path_buf()),
        target: Some(target.parse().unwrap()),
        ..DoctorOptions::default()
    })
    .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
}

fn finding<'a>(r: &'a DoctorReport, id: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no finding {id}"))
}

/// Every file of `root` (below `rel`) that holds `from` gets `to` instead.
fn replace_in(root: &Path, rels: &[&str], from: &str, to: &str) {
    for rel in rels {
        let p = root.join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{}", p.display());
        std::fs::write(&p, text.replace(from, to)).unwrap();
    }
}

/// NGC 23.04 (CUDA 12.1.0) needs driver 530 on consumer GPUs, but NVIDIA's notes of that month list R450.51,
/// R470.57, R510.47, R515.65, R525.85 and R530.30 for data center GPUs: an H100 on 525.85.12 runs it.
#[test]
fn an_h100_on_r525_passes_the_driver_check_against_ngc_2304() {
    let (_d, root) = copy_of("h100-x8-ubuntu2204");
    replace_in(
        &root,
        &[
            "proc/driver/nvidia/version",
            "sys/module/nvidia/version",
            ".rocmenv/nvidia-smi.txt",
            ".rocmenv/nvidia-smi-q.txt",
        ],
        "565.57.01",
        "525.85.12",
    );
    let r = doctor_on(&root, "ngc-23.04");
    let f = finding(&r, "driver.nvidia-version");
    assert_eq!(f.status, Status::Pass, "{}", f.summary);
    assert!(
        f.summary.contains("525.85.12") && f.summary.contains("forward compatibility"),
        "{}",
        f.summary
    );
    // R520 is on no list: the same H100 on 520.61.05 is too old.
    replace_in(
        &root,
        &["proc/driver/nvidia/version"],
        "525.85.12",
        "520.61.05",
    );
    let r = doctor_on(&root, "ngc-23.04");
    assert_eq!(finding(&r, "driver.nvidia-version").status, Status::Fail);
}

/// Every NGC release either lists its data-center branches or marks the list unconfirmed (issue 34).
#[test]
fn every_ngc_release_has_data_center_branches_or_says_it_does_not_know() {
    let m = rocmenv::matrix::Matrices::embedded().unwrap();
    for n in &m.ngc.releases {
        let said_none = n
            .source
            .as_deref()
            .is_some_and(|s| s.contains("name no driver branch"));
        assert!(
            !n.datacenter_drivers.is_empty() || n.is_unconfirmed("datacenter_drivers") || said_none,
            "NGC {}: no data-center branches and not marked unconfirmed",
            n.release
        );
    }
    let r2304 = m.ngc_release("23.04").unwrap();
    let branches: Vec<String> = r2304
        .datacenter_drivers
        .iter()
        .map(|d| d.to_string())
        .collect();
    for b in ["450.51", "470.57", "510.47", "515.65", "525.85"] {
        assert!(branches.iter().any(|x| x == b), "{b}: {branches:?}");
    }
}

// ------------------------------------------------------------------ OS support per GPU model

fn capture(name: &str) -> String {
    std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/captures")
            .join(name),
    )
    .unwrap()
}

/// Every AMD GPU of `root` gets PCI device id `id`, in `device` and in `uevent` (which doctor reads first), as
/// sysfs shows it; with `gfx`, KFD reports that `gfx_target_version` too.
fn make_gpus(root: &Path, from_id: &str, id: &str, gfx: Option<(&str, &str)>) {
    let devs = root.join("sys/bus/pci/devices");
    let hex = |id: &str| id.trim_start_matches("0x").to_ascii_uppercase();
    for e in std::fs::read_dir(&devs).unwrap() {
        let dir = e.unwrap().path();
        let p = dir.join("device");
        if std::fs::read_to_string(&p).is_ok_and(|t| t.trim() == from_id) {
            std::fs::write(&p, format!("{id}\n")).unwrap();
            let ev = dir.join("uevent");
            let text = std::fs::read_to_string(&ev).unwrap();
            let (old, new) = (
                format!("PCI_ID=1002:{}", hex(from_id)),
                format!("PCI_ID=1002:{}", hex(id)),
            );
            assert!(text.contains(&old), "{text}");
            std::fs::write(&ev, text.replace(&old, &new)).unwrap();
        }
    }
    if let Some((from, to)) = gfx {
        let nodes = root.join("sys/class/kfd/kfd/topology/nodes");
        for e in std::fs::read_dir(&nodes).unwrap() {
            let p = e.unwrap().path().join("properties");
            let t = std::fs::read_to_string(&p).unwrap();
            std::fs::write(
                &p,
                t.replace(
                    &format!("gfx_target_version {from}"),
                    &format!("gfx_target_version {to}"),
                ),
            )
            .unwrap();
        }
    }
}

fn os_check(root: &Path, target: &str, matrices: Option<&Path>) -> (Status, String) {
    let r = build_report(&DoctorOptions {
        sysroot: Some(root.to_path_buf()),
        target: Some(target.parse().unwrap()),
        matrices: matrices.map(Path::to_path_buf),
        ..DoctorOptions::default()
    })
    .unwrap();
    let f = finding(&r, "os.rocm-supported");
    (f.status, format!("{} | {:?}", f.summary, f.detail))
}

/// AMD's 7.0.x and 7.2.x footnotes keep Radeon cards off RHEL 8.10 and Rocky 9 (rhel-700: "RHEL 8.10 is
/// supported only on AMD Instinct MI300X, MI300A, MI250X, MI250, MI210, and MI100 GPUs"; rl-700: "Rocky Linux 9
/// is supported only on AMD Instinct MI300X and MI300A GPUs"): an RX 7900 XTX on either is not passed.
#[test]
fn an_rx_7900_xtx_on_rocky_9_or_rhel_8_10_is_not_passed() {
    for (os, target) in [
        ("os-release_rocky9.3.txt", "rocm-7.2.4"),
        ("os-release_rhel8.10.txt", "rocm-7.0.2"),
    ] {
        let (_d, root) = copy_of("rx7900xtx-ubuntu2204-hwe");
        std::fs::write(root.join("etc/os-release"), capture(os)).unwrap();
        let (status, text) = os_check(&root, target, None);
        assert_eq!(status, Status::Fail, "{os} {target}: {text}");
        assert!(
            text.contains("Radeon RX 7900 XTX (gfx1100)"),
            "{os}: {text}"
        );
    }
}

/// AMD's 10.0.0 table, per GPU model (the audit's 15 cells: MI350P ×7, MI325X ×3, MI300A ×4, MI210 ×1): each
/// excluded model fails on its OS, while a listed model of the same gfx target passes there.
#[test]
fn every_per_model_exclusion_of_the_10_0_table_holds() {
    use rocmenv::matrix::{HostGpu, Matrices};
    let m = Matrices::embedded().unwrap();
    let r = m.rocm_release("10.0.0").unwrap();
    let gpu = |name: &str| {
        let model = m.model_named(name).unwrap_or_else(|| panic!("{name}"));
        HostGpu {
            model: Some(model),
            gfx: model.gfx.unwrap(),
        }
    };
    let cells: [(&str, &str, &str, &str); 15] = [
        ("MI350P", "ubuntu", "22.04", "MI355X"),
        ("MI350P", "rhel", "10.0", "MI355X"),
        ("MI350P", "rhel", "9.4", "MI355X"),
        ("MI350P", "rhel", "8.10", "MI355X"),
        ("MI350P", "debian", "12", "MI355X"),
        ("MI350P", "ol", "10", "MI355X"),
        ("MI350P", "ol", "9", "MI355X"),
        ("MI325X", "rhel", "8.10", "MI300X"),
        ("MI325X", "ol", "8", "MI300X"),
        ("MI325X", "rocky", "9.6", "MI300X"),
        ("MI300A", "debian", "13", "MI300X"),
        ("MI300A", "ol", "10", "MI300X"),
        ("MI300A", "ol", "9", "MI300X"),
        ("MI300A", "ol", "8", "MI300X"),
        ("MI210", "debian", "12", "MI250"),
    ];
    for (out, id, v, listed) in cells {
        let (_, left) = r.distro_for(id, v, &[gpu(out)]).unwrap();
        assert_eq!(left.len(), 1, "{out} on {id} {v} should be excluded");
        let (_, left) = r.distro_for(id, v, &[gpu(listed)]).unwrap();
        assert!(left.is_empty(), "{listed} on {id} {v} should be listed");
    }
    // A model AMD's table does not name (a VF, MI308X) is judged by its gfx target.
    let (_, left) = r.distro_for("rocky", "9.6", &[gpu("MI300X VF")]).unwrap();
    assert!(left.is_empty());
}

/// The same cells on host trees: the model comes from the PCI id, the target from KFD.
#[test]
fn a_tree_with_an_excluded_model_fails_and_a_listed_one_passes() {
    let debian12 =
        std::fs::read_to_string(fixture("no-gpu-debian12").join("etc/os-release")).unwrap();
    let cases: [(&str, &str, &str, String); 4] = [
        (
            "mi300x-x4-ubuntu2204",
            "0x74a1",
            "0x74a5",
            capture("os-release_rhel8.10.txt"),
        ), // MI325X / MI300X
        (
            "mi300x-x4-ubuntu2204",
            "0x74a1",
            "0x74a5",
            capture("os-release_rocky9.3.txt"),
        ),
        (
            "mi300x-x4-ubuntu2204",
            "0x74a1",
            "0x74a0",
            capture("os-release_debian13.txt"),
        ), // MI300A / MI300X
        ("mi210-x4-ubuntu2204", "0x740f", "0x740f", debian12.clone()), // MI210 / MI250
    ];
    for (tree, listed_id, out_id, os) in cases {
        let (_d, root) = copy_of(tree);
        std::fs::write(root.join("etc/os-release"), &os).unwrap();
        if tree.starts_with("mi210") {
            let (status, text) = os_check(&root, "rocm-10.0", None);
            assert_eq!(status, Status::Fail, "MI210 on Debian 12: {text}");
            assert!(text.contains("MI210 (gfx90a)"), "{text}");
            make_gpus(&root, "0x740f", "0x740c", None);
            let (status, text) = os_check(&root, "rocm-10.0", None);
            assert_ne!(status, Status::Fail, "MI250 on Debian 12: {text}");
            continue;
        }
        let (status, text) = os_check(&root, "rocm-10.0", None);
        assert_ne!(status, Status::Fail, "MI300X ({listed_id}): {text}");
        make_gpus(&root, listed_id, out_id, None);
        let (status, text) = os_check(&root, "rocm-10.0", None);
        assert_eq!(status, Status::Fail, "{out_id}: {text}");
    }
}

/// Adding a model and its exclusion is a YAML edit: give MI350P a PCI id in a copy of gpus.yaml, and an MI350P
/// tree on Ubuntu 22.04 fails against 10.0.0 (AMD lists 22.04 for every Instinct GPU but MI350P), while an
/// MI355X tree passes.
#[test]
fn an_exclusion_is_a_yaml_edit() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["rocm.yaml", "cuda.yaml", "ngc.yaml", "gpus.yaml"] {
        let text = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("matrices")
                .join(f),
        )
        .unwrap();
        // 0x7fff is a stand-in for the id AMD has not published: test data only.
        let text = text.replacen(
            "{name: \"AMD Instinct MI350P\", vendor: amd, pci_ids: []",
            "{name: \"AMD Instinct MI350P\", vendor: amd, pci_ids: [\"0x7fff\"]",
            1,
        );
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    let (_d, root) = copy_of("mi300x-x4-ubuntu2204");
    make_gpus(&root, "0x74a1", "0x75a3", Some(("90402", "90500"))); // MI355X, gfx950
    let (status, text) = os_check(&root, "rocm-10.0", Some(dir.path()));
    assert_ne!(status, Status::Fail, "MI355X: {text}");
    make_gpus(&root, "0x75a3", "0x7fff", None);
    let (status, text) = os_check(&root, "rocm-10.0", Some(dir.path()));
    assert_eq!(status, Status::Fail, "MI350P: {text}");
    assert!(text.contains("MI350P (gfx950)"), "{text}");
}

/// AMD's 6.2.x footnotes (mi300_620 … mi300_624): "MI300X (gfx942) is supported on listed operating systems
/// except Ubuntu 22.04.5 [6.8 HWE] and Ubuntu 22.04.4 [6.5 HWE]". A row per model carries it: an MI300X on the
/// 6.5 HWE kernel fails the kernel check against 6.2.4, while an RX 7900 XTX on the same kernel passes.
#[test]
fn a_kernel_limit_of_one_model_is_data() {
    let kernel_check = |root: &Path| {
        let r = doctor_on(root, "rocm-6.2.4");
        let f = finding(&r, "kernel.rocm-supported");
        (f.status, f.summary.clone())
    };
    let (_d, root) = copy_of("mi300x-x4-ubuntu2204");
    let (status, text) = kernel_check(&root);
    assert_eq!(status, Status::Pass, "GA kernel: {text}");
    std::fs::write(root.join("proc/sys/kernel/osrelease"), "6.5.0-26-generic\n").unwrap();
    let (status, text) = kernel_check(&root);
    assert_eq!(status, Status::Fail, "MI300X on 6.5 HWE: {text}");
    let (status, text) = kernel_check(&fixture("rx7900xtx-ubuntu2204-hwe"));
    assert_eq!(status, Status::Pass, "RX 7900 XTX on 6.5 HWE: {text}");
}
