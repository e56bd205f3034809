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
            .provenance
            .source
            .as_deref()
            .is_some_and(|s| s.contains("name no driver branch"));
        assert!(
            !n.datacenter_drivers.is_empty()
                || n.provenance.is_unconfirmed("datacenter_drivers")
                || said_none,
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
