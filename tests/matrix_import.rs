//! Issue 11 ("easy to extend"): `scripts/matrix-import` turns a column of AMD's
//! compatibility-matrix-historical-6.0.csv into a rocm.yaml release entry. The entry it prints for
//! 6.2.4 from the fixture copy of that CSV must load (`rocmenv matrix check` on a directory whose
//! rocm.yaml holds only that entry) and must agree with the hand-made 6.2.4 row of matrices/rocm.yaml.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

const CSV: &str = "tests/fixtures/rocm-compat-historical-6.0.csv";
const SOURCE: &str = "ROCm/ROCm@e396b48:docs/compatibility/compatibility-matrix-historical-6.0.csv";

fn import(args: &[&str]) -> Output {
    Command::new("python3")
        .arg("scripts/matrix-import")
        .arg(CSV)
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("python3 runs")
}

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .env("NO_COLOR", "1")
        .output()
        .expect("rocmenv runs")
}

fn ok(o: &Output, what: &str) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// A --matrices directory: the real cuda/ngc/gpus files and a rocm.yaml holding only `entry`.
fn matrices_with(entry: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("matrices");
    for f in ["cuda.yaml", "ngc.yaml", "gpus.yaml"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    std::fs::write(
        dir.path().join("rocm.yaml"),
        format!("schema_version: 1\nreleases:\n{entry}"),
    )
    .unwrap();
    dir
}

/// `rocmenv [--matrices DIR] matrix rocm 6.2.4 --json`: the release record as the loader read it.
fn release(matrices: Option<&Path>) -> Value {
    let mut args = vec![];
    if let Some(d) = matrices {
        args = vec!["--matrices", d.to_str().unwrap()];
    }
    args.extend(["matrix", "rocm", "6.2.4", "--json"]);
    let doc: Value = serde_json::from_str(&ok(&rocmenv(&args), "matrix rocm")).unwrap();
    doc["rocm"]["release"].clone()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not a list: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

fn supported(r: &Value) -> BTreeSet<String> {
    r["gfx"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["status"] == "supported")
        .map(|g| g["target"].as_str().unwrap().to_string())
        .collect()
}

fn distro<'a>(r: &'a Value, id: &str, version: &str) -> &'a Value {
    r["distros"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == id && d["version"] == version)
        .unwrap_or_else(|| panic!("{id} {version} not in {}", r["distros"]))
}

#[test]
fn imported_6_2_4_loads_and_matches_the_hand_made_row() {
    let entry = ok(
        &import(&["--release", "6.2.4", "--source", SOURCE]),
        "matrix-import",
    );
    assert!(entry.contains("  - version: \"6.2.4\"\n"), "{entry}");
    let dir = matrices_with(&entry);

    let check = ok(
        &rocmenv(&[
            "--matrices",
            dir.path().to_str().unwrap(),
            "matrix",
            "check",
        ]),
        "matrix check",
    );
    assert!(check.contains(": valid"), "{check}");
    assert!(check.contains("1 releases, 6.2.4 … 6.2.4"), "{check}");

    let got = release(Some(dir.path()));
    let hand = release(None);

    assert_eq!(got["version"], "6.2.4");
    assert_eq!(
        got["source"],
        format!("{SOURCE}, column 6.2.4"),
        "the source names the file at a commit and the column"
    );
    let unconfirmed: BTreeSet<String> = strings(&got["unconfirmed"]).into_iter().collect();
    for f in ["distros", "ships_driver", "amdgpu_dkms", "images"] {
        assert!(
            unconfirmed.contains(f),
            "{f} not unconfirmed: {unconfirmed:?}"
        );
    }

    // The CSV lists AMD's supported targets only: the same set the hand-made row marks supported
    // (its gfx906 `deprecated` / gfx900 `unsupported` come from release notes, not the CSV).
    assert_eq!(supported(&got), supported(&hand));
    assert_eq!(
        supported(&got),
        ["gfx1030", "gfx1100", "gfx908", "gfx90a", "gfx942"]
            .map(String::from)
            .into()
    );
    assert!(got["gfx"]
        .as_array()
        .unwrap()
        .iter()
        .all(|g| g["status"] == "supported"));

    // Distros: the same os-release ids and versions, and the same Ubuntu point releases.
    let ids = |r: &Value| -> BTreeSet<(String, String)> {
        r["distros"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["id"].as_str().unwrap().to_string(),
                    d["version"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(ids(&got), ids(&hand));
    for v in ["22.04", "24.04"] {
        assert_eq!(
            strings(&distro(&got, "ubuntu", v)["point_releases"]),
            strings(&distro(&hand, "ubuntu", v)["point_releases"]),
            "ubuntu {v}"
        );
    }
    assert_eq!(
        strings(&distro(&got, "ubuntu", "22.04")["point_releases"]),
        ["22.04.5", "22.04.4"]
    );
    assert_eq!(distro(&got, "sles", "15-SP6")["id"], "sles");
    // No kernel rows in the CSV: the imported distros carry none (hence `distros` unconfirmed).
    assert!(got["distros"]
        .as_array()
        .unwrap()
        .iter()
        .all(|d| d["kernels"].as_array().unwrap().is_empty()));

    assert_eq!(strings(&got["pytorch"]), strings(&hand["pytorch"]));
    assert_eq!(
        strings(&got["pytorch"]),
        ["2.3", "2.2", "2.1", "2.0", "1.13"]
    );

    // The fixture (ROCm/ROCm@e396b48, March 2025) has the older "Tested user space versions" row,
    // written before 6.4 existed: 6.3.x back to 6.0.x. The hand-made row took the later CSV, whose
    // "AMD GPU Driver" row adds 6.4.x; everything the fixture gives is in it, in the same order.
    // (The JSON writes a two-part series in full: "6.3" as 6.3.0.)
    assert!(
        entry.contains("kernel_drivers: [\"6.3\", \"6.2\", \"6.1\", \"6.0\"]"),
        "{entry}"
    );
    let drivers = strings(&got["kernel_drivers"]);
    assert_eq!(drivers, ["6.3.0", "6.2.0", "6.1.0", "6.0.0"]);
    let hand_drivers = strings(&hand["kernel_drivers"]);
    assert_eq!(hand_drivers, ["6.4.0", "6.3.0", "6.2.0", "6.1.0", "6.0.0"]);
    assert_eq!(hand_drivers[1..], drivers[..]);
}

#[test]
fn default_source_names_no_commit_and_the_loader_says_so() {
    let o = import(&["--release", "6.2.4"]);
    let entry = ok(&o, "matrix-import");
    assert!(entry.contains(
        "source: \"ROCm/ROCm docs/compatibility/compatibility-matrix-historical-6.0.csv, column 6.2.4\""
    ));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--source"));
    let dir = matrices_with(&entry);
    let o = rocmenv(&[
        "--matrices",
        dir.path().to_str().unwrap(),
        "matrix",
        "check",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("names no public reference"));
}

#[test]
fn unknown_release_exits_2_with_one_line_listing_the_columns() {
    let o = import(&["--release", "6.9.9"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    assert!(
        e.contains("6.9.9") && e.contains("6.3.3, 6.3.2") && e.contains("6.0.0"),
        "{e}"
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn list_prints_every_column_trimmed() {
    let out = ok(&import(&["--list"]), "--list");
    let cols: Vec<&str> = out.lines().collect();
    assert!(cols.contains(&"6.2.4") && cols.contains(&"6.0.0"), "{out}");
    // " 6.1.2" in the header is trimmed.
    assert!(cols.contains(&"6.1.2"), "{out}");
    assert_eq!(cols.len(), 13, "{out}");
}
