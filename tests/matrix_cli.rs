//! Issue 11: `rocmenv matrix` through the binary: real answers from the built-in matrices, one JSON
//! document with --json, exit 2 and one line naming the nearest values for anything not listed.

use std::process::{Command, Output};

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs")
}

fn text(args: &[&str]) -> String {
    let o = rocmenv(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = args.to_vec();
    all.push("--json");
    let doc: serde_json::Value = serde_json::from_str(&text(&all)).expect("one JSON document");
    assert_eq!(doc["schema_version"], 1);
    assert_eq!(doc["matrices"], "embedded");
    doc
}

/// Exit 2, one line on stderr starting with `rocmenv:` and holding every needle, nothing on stdout.
fn refused(args: &[&str], needles: &[&str]) {
    let o = rocmenv(args);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "more than one line: {e}");
    assert!(e.starts_with("rocmenv: "), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
    assert!(o.stdout.is_empty());
}

#[test]
fn rocm_release_lists_what_the_matrix_holds() {
    let t = text(&["matrix", "rocm", "7.2.4"]);
    assert!(t.starts_with("ROCm 7.2.4 (embedded matrices)\n"), "{t}");
    for want in [
        "ubuntu 24.04 (24.04.4)",
        "kernels 6.8 GA, 6.17 HWE",
        "sles 15-SP7",
        "gfx950",
        "amdgpu 30.30, 30.20, 30.10, 6.4; ships 30.30.4",
        "2.9.1, 2.8.0, 2.7.1",
        "rocm/pytorch:rocm7.2.4_ubuntu24.04_py3.12_pytorch_release_2.9.1 (unconfirmed)",
        "source ",
    ] {
        assert!(t.contains(want), "`{want}` not in:\n{t}");
    }

    let d = json(&["matrix", "rocm", "7.2"]);
    assert_eq!(d["query"], "rocm");
    assert_eq!(d["rocm"]["requested"], "7.2");
    let r = &d["rocm"]["release"];
    assert_eq!(r["version"], "7.2.4", "7.2 is the newest 7.2.x");
    assert!(r["distros"]
        .as_array()
        .unwrap()
        .iter()
        .any(|x| x["id"] == "ubuntu" && x["version"] == "24.04"));
    assert!(r["gfx"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["target"] == "gfx942" && g["status"] == "supported"));
    assert_eq!(r["pytorch"][0], "2.9.1");
    assert!(r["source"].as_str().unwrap().contains("https://"));
    assert!(r["unconfirmed"].is_array());
}

#[test]
fn gfx_says_how_each_release_runs_the_target() {
    let t = text(&["matrix", "gfx", "gfx1031"]);
    assert!(
        t.starts_with("gfx1031 (RDNA2) (embedded matrices)\n"),
        "{t}"
    );
    assert!(t.contains("AMD Radeon RX 6700 XT"), "{t}");
    assert!(
        t.contains("override to gfx1030 (HSA_OVERRIDE_GFX_VERSION=10.3.0)"),
        "{t}"
    );

    let d = json(&["matrix", "gfx", "gfx1031"]);
    let rows = d["gfx"]["releases"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        json(&["matrix", "check"])["check"]["rocm"]["releases"]
    );
    for r in rows {
        // TheRock's 10.0.0 release build compiles gfx1031 for rocBLAS and every PyTorch wheel (its `built:`),
        // so it runs there without the override.
        if r["version"] == "10.0.0" {
            assert_eq!(r["runs"], "built-not-supported", "{r}");
            assert!(r["override_to"].is_null(), "{r}");
            continue;
        }
        assert_eq!(r["runs"], "override", "{r}");
        assert_eq!(r["override_to"], "gfx1030");
        assert_eq!(r["hsa_override_gfx_version"], "10.3.0");
    }
    // A target the newer releases build natively: native there, not before.
    let d = json(&["matrix", "gfx", "gfx1101"]);
    let runs = |v: &str| {
        d["gfx"]["releases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["version"] == v)
            .map(|r| r["runs"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(runs("6.4.1"), "native");
    assert_ne!(runs("6.4.0"), "native");
}

#[test]
fn kernel_lists_the_releases_for_a_distro() {
    let t = text(&["matrix", "kernel", "6.8", "--os", "ubuntu:24.04"]);
    assert!(
        t.starts_with("kernel 6.8 on ubuntu 24.04: listed by "),
        "{t}"
    );
    assert!(t.contains("7.2.4    ubuntu 24.04       6.8 GA"), "{t}");
    assert!(!t.contains("22.04"), "{t}");

    let d = json(&["matrix", "kernel", "6.8"]);
    let rows = d["kernel"]["rows"].as_array().unwrap();
    assert!(rows
        .iter()
        .any(|r| r["distro"] == "ubuntu" && r["version"] == "22.04" && r["kind"] == "hwe"));
    assert!(rows.iter().all(|r| r["series"] == "6.8"));
    // A full `uname -r` is cut to its series.
    let d = json(&[
        "matrix",
        "kernel",
        "6.8.0-45-generic",
        "--os",
        "ubuntu:24.04",
    ]);
    assert_eq!(d["kernel"]["series"], "6.8");
}

/// Issue 11: SLES rows say 15-SP5, os-release says 15.5; both spellings find the same rows.
#[test]
fn kernel_on_sles_takes_the_os_release_version() {
    let a = json(&["matrix", "kernel", "5.14", "--os", "sles:15.5"]);
    let b = json(&["matrix", "kernel", "5.14", "--os", "sles:15-SP5"]);
    assert_eq!(a["kernel"]["rows"], b["kernel"]["rows"]);
    let rows = a["kernel"]["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["version"] == "15-SP5"), "{rows:?}");
    assert_eq!(a["kernel"]["os"], "sles:15.5");
}

#[test]
fn cuda_and_ngc_give_driver_floors_and_images() {
    let t = text(&["matrix", "cuda", "12.4"]);
    assert!(
        t.contains("12.4.0   12.4 GA            Linux driver >= 550.54.14"),
        "{t}"
    );
    assert!(t.contains("driver floor     >= 550.54.14 (Linux)"), "{t}");
    assert!(t.contains("nvcr.io/nvidia/pytorch:24.05-py3"), "{t}");
    let d = json(&["matrix", "cuda", "12.4"]);
    assert_eq!(d["cuda"]["min_driver_linux"], "550.54.14");
    assert_eq!(d["cuda"]["family"]["min_driver"], "525.60.13");
    assert_eq!(d["cuda"]["releases"].as_array().unwrap().len(), 2);

    let t = text(&["matrix", "ngc", "24.05"]);
    for want in [
        "image            nvcr.io/nvidia/pytorch:24.05-py3",
        "cuda             12.4.1 (12.4 Update 1; toolkit driver >= 550.54.15)",
        "driver           >= 545",
        "forward-compat   470.57, 525.85, 535.86, 545.23",
    ] {
        assert!(t.contains(want), "`{want}` not in:\n{t}");
    }
    let d = json(&["matrix", "ngc", "24.05"]);
    assert_eq!(
        d["ngc"]["release"]["image"],
        "nvcr.io/nvidia/pytorch:24.05-py3"
    );
    assert_eq!(d["ngc"]["release"]["cuda"], "12.4.1");
    assert_eq!(d["ngc"]["cuda"]["min_driver_linux"], "550.54.15");
}

#[test]
fn check_validates_and_counts() {
    let t = text(&["matrix", "check"]);
    assert!(t.starts_with("matrices embedded: valid\n"), "{t}");
    assert!(t.contains("rocm.yaml        "), "{t}");
    let d = json(&["matrix", "check"]);
    let c = &d["check"];
    assert!(c["rocm"]["releases"].as_u64().unwrap() > 30);
    assert_eq!(c["rocm"]["oldest"], "5.7.0");
    assert!(c["amd_gpus"].as_u64().unwrap() > 10);

    // A broken directory: exit 2 with the file and line, nothing on stdout.
    let dir = tempfile::tempdir().unwrap();
    for f in ["rocm.yaml", "cuda.yaml", "ngc.yaml", "gpus.yaml"] {
        let text = std::fs::read_to_string(format!("{}/matrices/{f}", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
        let text = if f == "ngc.yaml" {
            format!("{text}colour: red\n")
        } else {
            text
        };
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    let d = dir.path().display().to_string();
    refused(
        &["--matrices", &d, "matrix", "check"],
        &["ngc.yaml:", "unknown field `colour`"],
    );
    // The same directory, repaired, answers from it.
    std::fs::copy(
        format!("{}/matrices/ngc.yaml", env!("CARGO_MANIFEST_DIR")),
        dir.path().join("ngc.yaml"),
    )
    .unwrap();
    let t = text(&["--matrices", &d, "matrix", "check"]);
    assert!(t.starts_with(&format!("matrices {d}: valid")), "{t}");
}

#[test]
fn unknown_values_exit_2_with_the_nearest_ones() {
    refused(
        &["matrix", "rocm", "7.2.9"],
        &[
            "matrix rocm: ROCm 7.2.9 is not in the matrices; nearest: ",
            "7.2.4",
        ],
    );
    refused(&["matrix", "rocm", "7.x"], &["`7.x` is not a version"]);
    refused(
        &["matrix", "cuda", "12.11"],
        &["CUDA 12.11", "nearest: ", "12.9.1"],
    );
    refused(
        &["matrix", "ngc", "19.01"],
        &["NGC 19.01", "nearest: ", "22.08"],
    );
    refused(
        &["matrix", "ngc", "24.5"],
        &["not an NGC release like 24.05"],
    );
    refused(
        &["matrix", "gfx", "gfx1105"],
        &["gfx1105", "nearest: ", "gfx1100"],
    );
    refused(&["matrix", "gfx", "navi21"], &["matrix gfx: ", "navi21"]);
    refused(
        &["matrix", "kernel", "6.5", "--os", "ubuntu:24.04"],
        &["kernel 6.5 on ubuntu 24.04", "nearest: ", "6.8"],
    );
    refused(
        &["matrix", "kernel", "6.8", "--os", "ubuntu:23.10"],
        &["--os: ubuntu 23.10 is not in the matrices", "ubuntu:24.04"],
    );
    refused(
        &["matrix", "kernel", "6.8", "--os", "noble"],
        &["--os: ", "ID:VERSION"],
    );
    for args in [
        &["matrix", "rocm", "9.9", "--json"][..],
        &["matrix", "--json", "gfx", "gfx1105"][..],
    ] {
        refused(args, &["not in the matrices"]);
    }
}

/// Issue 11: with a `built:` list, `matrix gfx` and `matrix rocm` say what the libraries ship (test data on
/// 6.3.3, whose own `built:` is not sourced).
#[test]
fn built_targets_show_in_rocm_and_gfx() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["rocm.yaml", "cuda.yaml", "ngc.yaml", "gpus.yaml"] {
        let mut text =
            std::fs::read_to_string(format!("{}/matrices/{f}", env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        if f == "rocm.yaml" {
            text = text.replacen(
                "\n  - version: \"6.3.3\"\n",
                "\n  - version: \"6.3.3\"\n    built:\n      - {component: rocBLAS, targets: [gfx900, gfx1100], source: \"https://example.org/test-data\"}\n",
                1,
            );
        }
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    let d = dir.path().display().to_string();
    let t = text(&["--matrices", &d, "matrix", "gfx", "gfx900"]);
    assert!(
        t.contains("6.3.3             built, not on AMD's supported list"),
        "{t}"
    );
    let doc: serde_json::Value = serde_json::from_str(&text(&[
        "--matrices",
        &d,
        "matrix",
        "gfx",
        "gfx900",
        "--json",
    ]))
    .unwrap();
    let row = doc["gfx"]["releases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["version"] == "6.3.3")
        .unwrap()
        .clone();
    assert_eq!(row["runs"], "built-not-supported");
    let t = text(&["--matrices", &d, "matrix", "rocm", "6.3.3"]);
    assert!(
        t.contains("built: rocBLAS   gfx900, gfx1100 (https://example.org/test-data)"),
        "{t}"
    );
}

/// Issue 22: `matrix rocm` lists every release with its stream and status; `matrix rocm 10.1.0` its distros,
/// kernels (per GPU class) and GPUs.
#[test]
fn rocm_without_a_release_lists_streams_and_the_core_sdk() {
    let t = text(&["matrix", "rocm"]);
    assert!(
        t.starts_with("ROCm releases (embedded matrices); newest production: 10.1.0\n"),
        "{t}"
    );
    for row in [
        "7.2.4    legacy    production  /opt/rocm-7.2.4",
        "7.14.0   core-sdk  production  /opt/rocm/core-7.14",
        "10.1.0   core-sdk  production  /opt/rocm/core-10.1",
    ] {
        assert!(t.contains(row), "{row} not in:\n{t}");
    }
    let j = json(&["matrix", "rocm"]);
    assert_eq!(j["query"], "rocm_releases");
    let rows = j["rocm_releases"]["releases"].as_array().unwrap();
    assert!(rows.iter().any(|r| r["version"] == "10.0.0"
        && r["stream"] == "core-sdk"
        && r["status"] == "production"));
    let t = text(&["matrix", "rocm", "10.1.0"]);
    assert!(
        t.contains("stream           core-sdk, production; installs at /opt/rocm/core-10.1"),
        "{t}"
    );
    assert!(
        t.contains("kernels 7.0 HWE  for gfx1201, gfx1200, gfx1100, gfx1101, gfx1102, gfx1030"),
        "{t}"
    );
    assert!(t.contains("gfx supported"), "{t}");
    assert_eq!(
        text(&["matrix", "rocm", "10"]),
        t,
        "`10` is the newest 10.x"
    );
}

/// Issue 22: the release list says which fields of each record are unconfirmed, so a release whose tables were
/// partly carried from an earlier one (10.1.0: its PyTorch is read, its other OS rows, gfx and drivers are 10.0.0's)
/// is told apart from one read whole; `matrix rocm 10.0.0` and `10.1.0` show their wheels.
#[test]
fn the_release_list_names_unconfirmed_fields_and_wheels() {
    let t = text(&["matrix", "rocm"]);
    let row = t
        .lines()
        .find(|l| l.trim_start().starts_with("10.1.0"))
        .unwrap();
    assert!(
        row.ends_with("(unconfirmed: distros, gfx, kernel_drivers)"),
        "{row}"
    );
    let row = t
        .lines()
        .find(|l| l.trim_start().starts_with("7.2.4"))
        .unwrap();
    assert!(!row.contains("unconfirmed"), "{row}");
    let o = rocmenv(&["matrix", "rocm", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["rocm_releases"]["releases"].as_array().unwrap();
    let r = rows.iter().find(|r| r["version"] == "10.1.0").unwrap();
    assert_eq!(
        r["unconfirmed"],
        serde_json::json!(["distros", "gfx", "kernel_drivers"])
    );
    let t = text(&["matrix", "rocm", "10.0.0"]);
    assert!(
        t.contains("wheels           torch 2.13.0+rocm10.0.0 (torchvision 0.28)")
            && t.contains("on ubuntu:24.04, from https://stable.repo.amd.com/rocm/whl-next/"),
        "{t}"
    );
    let t = text(&["matrix", "rocm", "10.1.0"]);
    assert!(
        t.contains("wheels           torch 2.14.0+rocm10.1.0 (torchvision 0.29)"),
        "{t}"
    );
}
