//! docs/schema: every report document the tests make is valid against its published JSON Schema (draft 2020-12),
//! checked with check-jsonschema: `doctor --json` on every captured host tree, a real `smoke --host --vendor cpu` and
//! `bench` run, a validate report as the library serialises it, and `report merge --format json`; and a document
//! that breaks the contract is refused (issue 24).
//!
//! CI sets ROCMENV_REQUIRE_CHECK_JSONSCHEMA (and pip-installs check-jsonschema), so a missing checker fails there; on
//! a machine without it these tests say they skipped. The smoke and bench runs need Debian's torch
//! (ROCMENV_REQUIRE_TORCH=1 makes its absence a failure).

#[path = "common/schema.rs"]
mod schema;

#[path = "common/cli.rs"]
mod cli;

use cli::rocmenv;
use schema::{check, schema, valid};
use std::path::{Path, PathBuf};
use std::process::Command;

const PYTHON: &str = "/usr/bin/python3";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Asserts `doc` is refused by `name` (the schema can fail).
fn refused(dir: &Path, name: &str, label: &str, doc: &serde_json::Value) {
    let path = dir.join(format!("bad-{label}.json"));
    std::fs::write(&path, serde_json::to_string(doc).unwrap()).unwrap();
    let o = check(label, name, &[path]).expect("checked before");
    assert_eq!(
        o.status.code(),
        Some(1),
        "{label} should be refused by {name}"
    );
}

fn read(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn torch(test: &str) -> bool {
    let ok = Command::new(PYTHON)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_TORCH=1 but {PYTHON} cannot import torch"
        );
        eprintln!("SKIP {test}: {PYTHON} cannot import torch");
    }
    ok
}

/// Every captured host tree's `doctor --json`, one file per tree in `dir`.
fn doctor_reports(dir: &Path) -> Vec<PathBuf> {
    let hosts = root().join("tests/fixtures/hosts");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&hosts).unwrap() {
        let tree = e.unwrap().path();
        if !tree.is_dir() || tree.file_name().unwrap() == "gen" {
            continue;
        }
        let name = tree.file_name().unwrap().to_string_lossy().into_owned();
        let o = rocmenv(
            &["doctor", "--sysroot", tree.to_str().unwrap(), "--json"],
            Some(&name),
        );
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{name}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, &o.stdout).unwrap();
        out.push(path);
    }
    out.sort();
    out
}

#[test]
fn doctor_reports_of_every_host_tree_and_their_merge_are_valid() {
    let dir = tempfile::tempdir().unwrap();
    let files = doctor_reports(dir.path());
    assert!(files.len() >= 10, "{} host trees", files.len());
    if !valid("doctor schemas", "doctor", &files) {
        return;
    }
    let merged = dir.path().join("merged.json");
    let mut args = vec!["report", "merge", "--format", "json", "-o"];
    args.push(merged.to_str().unwrap());
    args.extend(files.iter().map(|p| p.to_str().unwrap()));
    let o = rocmenv(&args, None);
    assert_eq!(o.status.code(), Some(1), "some trees fail doctor");
    assert!(valid(
        "merge schema",
        "merge",
        std::slice::from_ref(&merged)
    ));
    // A merge of a merge is a merge too.
    let again = dir.path().join("again.json");
    let o = rocmenv(
        &[
            "report",
            "merge",
            "--format",
            "json",
            "-o",
            again.to_str().unwrap(),
            merged.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(valid("merge schema", "merge", &[again]));

    // Each schema can fail: a status the contract lacks, a finding without its fix key, a merge cell without status.
    let mut doc = read(&files[0]);
    doc["checks"][0]["status"] = "ok".into();
    refused(dir.path(), "doctor", "doctor-status", &doc);
    let mut doc = read(&files[0]);
    doc["checks"][0].as_object_mut().unwrap().remove("fix");
    refused(dir.path(), "doctor", "doctor-no-fix", &doc);
    let mut doc = read(&merged);
    let cells = doc["checks"][0]["nodes"].as_object_mut().unwrap();
    let first = cells.keys().next().unwrap().clone();
    cells[&first].as_object_mut().unwrap().remove("status");
    refused(dir.path(), "merge", "merge-cell", &doc);
}

#[test]
fn a_real_smoke_and_bench_run_are_valid_suite_documents() {
    let dir = tempfile::tempdir().unwrap();
    let committed = root().join("tests/fixtures/reports/smoke-cpu-quick.json");
    if !valid("suite schema", "suite", std::slice::from_ref(&committed)) || !torch("suite schema") {
        return;
    }
    let smoke = dir.path().join("smoke.json");
    let o = rocmenv(
        &[
            "smoke",
            "--host",
            "--python",
            PYTHON,
            "--vendor",
            "cpu",
            "--json",
            smoke.to_str().unwrap(),
        ],
        Some("ci-cpu-1"),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // bench twice: the second run compares with the baseline the first saved, so `comparisons` is there.
    let base = dir.path().join("base.yaml");
    let bench = dir.path().join("bench.json");
    let args = [
        "bench", "--host", "--python", PYTHON, "--vendor", "cpu", "--model", "gemm", "--iters", "3",
    ];
    let mut first = args.to_vec();
    first.extend(["--save-baseline", base.to_str().unwrap()]);
    assert_eq!(rocmenv(&first, None).status.code(), Some(0));
    let mut second = args.to_vec();
    second.extend([
        "--baseline",
        base.to_str().unwrap(),
        "--json",
        bench.to_str().unwrap(),
    ]);
    let o = rocmenv(&second, Some("ci-cpu-1"));
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = read(&bench);
    assert!(
        !doc["comparisons"].as_array().unwrap().is_empty(),
        "the bench result compares with its baseline: {doc}"
    );
    assert!(valid(
        "suite schema",
        "suite",
        &[smoke.clone(), bench.clone()]
    ));
    let merged = dir.path().join("merged.json");
    let o = rocmenv(
        &[
            "report",
            "merge",
            "--format",
            "json",
            "-o",
            merged.to_str().unwrap(),
            smoke.to_str().unwrap(),
            bench.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(valid("merge schema", "merge", &[merged]));

    // schema_version 2: each test names its torch device (null on the CPU); a v2 test without it is refused.
    let mut v2 = read(&smoke);
    v2["schema_version"] = 2.into();
    for t in v2["tests"].as_array_mut().unwrap() {
        t["device"] = serde_json::Value::Null;
    }
    let v2_path = dir.path().join("smoke-v2.json");
    std::fs::write(&v2_path, serde_json::to_string(&v2).unwrap()).unwrap();
    assert!(valid("suite schema v2", "suite", &[v2_path]));
    v2["tests"][0].as_object_mut().unwrap().remove("device");
    refused(dir.path(), "suite", "suite-v2-no-device", &v2);
    let mut bad = read(&smoke);
    bad["tests"][0]["status"] = "warn".into();
    refused(dir.path(), "suite", "suite-warn", &bad);
    let mut bad = read(&bench);
    bad["tests"][0]["metrics"][0]["better"] = "faster".into();
    refused(dir.path(), "suite", "suite-better", &bad);
    // Issue 36: gemm says how many products it checked, bandwidth how many bytes; a count is a whole number.
    let doc = read(&smoke);
    let checked = |name: &str, key: &str| {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["checked"][key].as_u64())
            .unwrap_or(0)
    };
    assert!(checked("gemm", "products") >= 8, "{doc}");
    assert!(checked("bandwidth", "bytes") >= 8 << 26, "{doc}");
    let mut bad = doc.clone();
    let gemm = bad["tests"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "gemm")
        .unwrap();
    gemm["checked"]["products"] = "8".into();
    refused(dir.path(), "suite", "suite-checked", &bad);
}

/// The validate document as the library serialises it (a real `validate` needs an image build; tests/validate.rs
/// runs those), with every step and status.
#[test]
fn a_validate_report_is_valid() {
    use rocmenv::checks::{Status, Summary};
    use rocmenv::report::validate::{Case, StackReport, Step, ValidateReport};
    let steps = [
        (Step::Doctor, "doctor.gpu.present", Status::Skip),
        (Step::Dockerfile, "dockerfile.render", Status::Pass),
        (Step::Hadolint, "hadolint", Status::Warn),
        (Step::Build, "build.image", Status::Pass),
        (Step::Image, "image.torch-arch", Status::Fail),
        (Step::Smoke, "smoke.quick", Status::Pass),
        (Step::Bench, "bench.gemm", Status::Pass),
    ];
    let mut r = ValidateReport {
        schema_version: 1,
        kind: "validate",
        node: Some("ci-runner-3".into()),
        rocmenv_version: env!("CARGO_PKG_VERSION").into(),
        config: "rocmenv.yaml".into(),
        stacks: vec![StackReport {
            name: "cpu".into(),
            stack: "cpu".into(),
            image: Some("rocmenv/cpu:3f2a".into()),
            cases: steps
                .iter()
                .map(|(s, id, st)| Case::new(*s, *id, *st, "one line").fix("a step"))
                .collect(),
            comparisons: vec![],
        }],
        summary: Summary::default(),
    };
    r.tally();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("validate.json");
    std::fs::write(&path, serde_json::to_string_pretty(&r).unwrap()).unwrap();
    if !valid("validate schema", "validate", std::slice::from_ref(&path)) {
        return;
    }
    let mut bad = read(&path);
    bad["stacks"][0]["cases"][0]["step"] = "deploy".into();
    refused(dir.path(), "validate", "validate-step", &bad);
}

/// The schemas themselves are valid draft 2020-12 schemas.
#[test]
fn the_schemas_are_valid_schemas() {
    let files: Vec<PathBuf> = ["common", "doctor", "suite", "validate", "merge"]
        .iter()
        .map(|n| schema(n))
        .collect();
    let Ok(o) = Command::new("check-jsonschema")
        .arg("--check-metaschema")
        .args(&files)
        .output()
    else {
        assert!(std::env::var_os("ROCMENV_REQUIRE_CHECK_JSONSCHEMA").is_none());
        eprintln!("SKIP the_schemas_are_valid_schemas: check-jsonschema is not on PATH");
        return;
    };
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
