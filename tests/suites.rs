//! `rocmenv smoke` and `rocmenv bench` for real: the quick level on this machine's CPU with Debian's torch, on the
//! host and inside the CPU stack image (built without --with-smoke-tests), and suites that crash, hang, write
//! garbage or nothing, time out or get Ctrl-C: each a failed run with its reason, no container left behind.
//!
//! The torch tests need Debian's python3-torch at /usr/bin/python3 (ROCMENV_REQUIRE_TORCH=1 makes its absence a
//! failure, as .ci/run does); the container tests need the daemon (ROCMENV_ENGINE_TESTS=1, as in tests/engine.rs).

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use common::{assert_no_leftovers, daemon, BASE};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const PYTHON: &str = "/usr/bin/python3";

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .env("LC_ALL", "C.UTF-8")
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs")
}

/// True when Debian's Python can import `modules`; panics when it must (ROCMENV_REQUIRE_TORCH=1, as in CI), prints
/// SKIP otherwise.
fn python_has(modules: &str, test: &str) -> bool {
    let ok = Command::new(PYTHON)
        .args(["-c", &format!("import {modules}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_TORCH=1 but {PYTHON} cannot import {modules} (apt-get install python3-torch python3-torchvision python3-pytest)"
        );
        eprintln!("SKIP {test}: {PYTHON} cannot import {modules}");
    }
    ok
}

/// True when Debian's torch and torchvision are importable.
fn torch(test: &str) -> bool {
    python_has("torch, torchvision", test)
}

/// Stdout of a run that must have exited 0; the assertion shows both streams.
fn succeeded(o: &Output) -> String {
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the result file exists"))
        .expect("valid JSON")
}

fn test_names(doc: &serde_json::Value) -> Vec<String> {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn status_of(doc: &serde_json::Value, name: &str) -> String {
    doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name} in {doc}"))["status"]
        .as_str()
        .unwrap()
        .to_string()
}

const QUICK: [&str; 7] = [
    "environment",
    "no-cpu-fallback",
    "arch-fit",
    "numerics",
    "memory",
    "gemm",
    "bandwidth",
];

/// Issue 15: the whole quick level runs for real on the CPU, on the host, and writes JSON and JUnit.
#[test]
fn the_quick_level_passes_on_the_host_cpu() {
    if !torch("host quick level") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (j, x) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let o = rocmenv(&[
        "smoke",
        "--host",
        "--python",
        PYTHON,
        "--vendor",
        "cpu",
        "--json",
        j.to_str().unwrap(),
        "--junit",
        x.to_str().unwrap(),
    ]);
    let out = succeeded(&o);
    let doc = json(&j);
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["level"], "quick");
    assert_eq!(doc["device"]["kind"], "cpu");
    assert!(
        doc["versions"]["torch"]
            .as_str()
            .unwrap()
            .starts_with("1.13"),
        "{doc}"
    );
    let names = test_names(&doc);
    for t in QUICK {
        assert!(names.contains(&t.to_string()), "{t} missing: {names:?}");
    }
    for t in ["numerics", "memory", "gemm", "bandwidth"] {
        assert_eq!(status_of(&doc, t), "pass", "{doc}");
    }
    // Without a GPU vendor there is no GPU to fall back from: a skip with the reason, never a pass.
    assert_eq!(status_of(&doc, "no-cpu-fallback"), "skip");
    let gemm = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "gemm")
        .unwrap();
    let fp32 = gemm["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "gemm_fp32_tflops")
        .unwrap();
    assert!(fp32["value"].as_f64().unwrap() > 0.0, "{gemm}");
    assert!(
        out.contains("✓ gemm") && out.contains("smoke quick on"),
        "{out}"
    );
    let xml = std::fs::read_to_string(&x).unwrap();
    assert!(
        xml.contains(r#"<testsuite name="smoke-quick" tests="7""#),
        "{xml}"
    );
    for t in QUICK {
        assert!(
            xml.contains(&format!(
                r#"<testcase name="{t}" classname="rocmenv.smoke""#
            )),
            "{t}: {xml}"
        );
    }
}

/// A stand-in interpreter: `sh SCRIPT` runs as `--python`, receiving `run.py --plan P --out O` as arguments.
fn fake_python(dir: &Path, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("python");
    std::fs::write(
        &p,
        format!("#!/bin/sh\n# $1 run.py, $3 plan, $5 result\n{body}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn broken(body: &str, extra: &[&str]) -> (Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let py = fake_python(dir.path(), body);
    let j = dir.path().join("r.json");
    let mut args = vec![
        "smoke",
        "--host",
        "--vendor",
        "cpu",
        "--python",
        py.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = rocmenv(&args);
    let doc = json(&j);
    (o, doc)
}

fn last_reason(doc: &serde_json::Value) -> String {
    let tests = doc["tests"].as_array().unwrap();
    tests.last().unwrap()["reason"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// Issue 15: a suite that writes nothing, writes garbage, crashes or hangs is a failed run with the last lines of
/// its output, never a pass.
#[test]
fn broken_suites_are_failed_runs_with_their_last_output() {
    let (o, doc) = broken("echo 'ImportError: No module named torch' >&2; exit 0", &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(test_names(&doc), ["run"]);
    let why = last_reason(&doc);
    assert!(
        why.contains("wrote no result document (exit code 0)")
            && why.contains("No module named torch"),
        "{why}"
    );

    let (o, doc) = broken(
        "printf '{\"schema_version\": 1, \"tests\": [' > \"$5\"",
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(last_reason(&doc).contains("not valid"), "{doc}");

    let progress = r#"{"name": "numerics", "status": "pass", "reason": null, "fix": null, "metrics": [], "params": {}, "duration_s": 0.1}"#;
    let (o, doc) = broken(&format!("echo '@rocmenv-test {progress}'; echo 'Fatal Python error: Segmentation fault' >&2; kill -SEGV $$"), &[]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(test_names(&doc), ["numerics", "run"]);
    let why = last_reason(&doc);
    assert!(
        why.contains("killed by a signal") && why.contains("Segmentation fault"),
        "{why}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("✓ numerics"));

    let start = std::time::Instant::now();
    let (o, doc) = broken("sleep 30", &["--timeout", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(test_names(&doc), ["timeout"]);
    assert!(
        last_reason(&doc).contains("outlived --timeout 1 s"),
        "{doc}"
    );
    assert!(
        start.elapsed().as_secs() < 25,
        "the hung suite was not killed"
    );
}

/// Issue 15: bad names are usage errors naming the choices; a missing interpreter cannot run (exit 3).
#[test]
fn usage_errors_and_a_missing_interpreter() {
    let o = rocmenv(&["smoke", "--host", "--vendor", "cpu", "--only", "nonsense"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.starts_with(
            "rocmenv: --only: no test `nonsense` at level quick; the tests are: environment"
        ),
        "{e}"
    );
    let o = rocmenv(&[
        "bench", "--host", "--vendor", "cpu", "--model", "gemm", "--batch", "8",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("the gemm benchmark takes no batch"));
    let o = rocmenv(&[
        "smoke",
        "--host",
        "--vendor",
        "cpu",
        "--python",
        "/nonexistent/python3",
    ]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot start /nonexistent/python3"));
    let o = rocmenv(&["smoke", "--vendor", "cpu"]);
    assert_eq!(o.status.code(), Some(2), "neither --image nor --host");
}

/// A bench run saves a baseline; the next run compares with it, and a baseline far above is a regression that
/// fails only with --fail-on-regression.
#[test]
fn bench_saves_and_compares_a_baseline() {
    if !torch("bench baseline") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.yaml");
    let args = [
        "bench", "--host", "--python", PYTHON, "--vendor", "cpu", "--model", "gemm", "--iters", "3",
    ];
    let mut first = args.to_vec();
    first.extend(["--save-baseline", base.to_str().unwrap()]);
    let o = rocmenv(&first);
    succeeded(&o);
    let saved = std::fs::read_to_string(&base).unwrap();
    assert!(
        saved.contains("test: gemm")
            && saved.contains("metric: throughput")
            && saved.contains("device: cpu"),
        "{saved}"
    );
    // A throughput baseline a thousand times faster than this machine: a regression. Only that figure is kept: the
    // latencies of a 3-iteration CPU run move by more than the 10% threshold from one run to the next (a p99 139% of
    // its baseline failed CI once), and the summary's count below must not depend on that noise.
    let mut doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&saved).unwrap();
    let list = doc["baselines"].as_sequence_mut().unwrap();
    list.retain(|b| b["metric"].as_str() == Some("throughput"));
    assert_eq!(list.len(), 1, "{saved}");
    let value = list[0]["value"].as_f64().unwrap();
    list[0]["value"] = serde_yaml_ng::Value::from(value * 1000.0);
    std::fs::write(&base, serde_yaml_ng::to_string(&doc).unwrap()).unwrap();
    let mut again = args.to_vec();
    again.extend(["--baseline", base.to_str().unwrap()]);
    let o = rocmenv(&again);
    let out = succeeded(&o);
    assert!(out.contains("(regression)"), "{out}");
    // Issue 25: the summary counts it, so the exit 1 below never stands beside a bare "0 fail".
    assert!(
        out.contains("1 pass, 0 fail, 0 skip, 1 regression"),
        "{out}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("regressed past --threshold 10%"));
    again.push("--fail-on-regression");
    assert_eq!(rocmenv(&again).status.code(), Some(1));
}

/// Issue 25: `--save-baseline` adds to a file (the same figure replaced, others kept); a file that is not a baselines
/// document is refused before the run and left as it was; a `--baseline` that matches nothing is reported, and
/// fails the run under --fail-on-regression.
#[test]
fn baselines_are_never_lost_and_a_baseline_that_matches_nothing_is_reported() {
    if !torch("baseline merge") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("base.yaml");
    let resnet = "schema_version: 1\nbaselines:\n- device: cpu\n  test: resnet50\n  metric: throughput\n  params:\n    batch: 4\n  value: 7.0\n  unit: images/s\n  source: a team run\n";
    std::fs::write(&base, resnet).unwrap();
    let gemm = [
        "bench", "--host", "--python", PYTHON, "--vendor", "cpu", "--model", "gemm", "--iters", "2",
    ];
    let mut save = gemm.to_vec();
    save.extend(["--save-baseline", base.to_str().unwrap()]);
    let out = succeeded(&rocmenv(&save));
    assert!(out.contains("(0 replaced, 1 kept)"), "{out}");
    let out = succeeded(&rocmenv(&save));
    assert!(out.contains("replaced, 1 kept)"), "{out}");
    let saved = std::fs::read_to_string(&base).unwrap();
    assert!(
        saved.contains("test: resnet50") && saved.contains("test: gemm"),
        "{saved}"
    );
    assert_eq!(saved.matches("metric: throughput").count(), 2, "{saved}");
    // No temporary file is left beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");

    let not_baselines = dir.path().join("notes.yaml");
    std::fs::write(&not_baselines, "shopping: [milk]\n").unwrap();
    let mut refuse = gemm.to_vec();
    refuse.extend(["--save-baseline", not_baselines.to_str().unwrap()]);
    let o = rocmenv(&refuse);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty() || !String::from_utf8_lossy(&o.stdout).contains("gemm"));
    assert_eq!(
        std::fs::read_to_string(&not_baselines).unwrap(),
        "shopping: [milk]\n"
    );

    // A baseline for resnet50 batch 4 against a gemm run: no comparison happens, and that is said.
    let only_resnet = dir.path().join("resnet.yaml");
    std::fs::write(&only_resnet, resnet).unwrap();
    let mut compare = gemm.to_vec();
    compare.extend(["--baseline", only_resnet.to_str().unwrap()]);
    let o = rocmenv(&compare);
    succeeded(&o);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("rocmenv: note: --baseline")
            && e.contains("matches no figure of this run")
            && e.contains("resnet50 throughput on cpu (batch 4)"),
        "{e}"
    );
    compare.push("--fail-on-regression");
    let o = rocmenv(&compare);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("rocmenv: error: --baseline"));
}

/// A directory holding one executable script `name`.
fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Issue 25: without --python, `smoke --host` passes over a python3 that lacks torch, uses the first python on
/// PATH that has it and names it; when none has it, one line names each one tried and --python.
#[test]
fn the_host_interpreter_is_found_and_named() {
    if !torch("interpreter search") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (venv, system) = (dir.path().join("venv"), dir.path().join("system"));
    script(
        &venv,
        "python3",
        "echo \"ModuleNotFoundError: No module named 'torch'\" >&2; exit 1",
    );
    script(&system, "python", &format!("exec {PYTHON} \"$@\""));
    let path = std::env::join_paths([&venv, &system]).unwrap();
    let run = |path: &std::ffi::OsStr| {
        Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args([
                "smoke",
                "--host",
                "--vendor",
                "cpu",
                "--only",
                "environment",
            ])
            .env("PATH", path)
            .env("NO_COLOR", "1")
            .env_remove("ROCMENV_MATRICES")
            .output()
            .unwrap()
    };
    let o = run(&path);
    succeeded(&o);
    let e = String::from_utf8_lossy(&o.stderr);
    let expect = format!(
        "rocmenv: python: {} (the first python on PATH that imports torch; passed over: {} (ModuleNotFoundError: No module named 'torch'))",
        system.join("python").display(),
        venv.join("python3").display()
    );
    assert!(e.contains(&expect), "{e}");

    let o = run(venv.as_os_str());
    assert_eq!(o.status.code(), Some(3));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("rocmenv: no python on PATH imports torch: ")
            && e.contains(&venv.join("python3").display().to_string())
            && e.trim_end()
                .ends_with("name the interpreter that has torch with --python PATH"),
        "{e}"
    );
}

/// True when this machine shows a GPU to doctor (then the no-GPU checks cannot run here).
fn host_has_gpu() -> bool {
    let o = rocmenv(&["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    doc["host"]["gpus"]
        .as_array()
        .is_some_and(|g| !g.is_empty())
}

/// Issue 25: on a host without a GPU, smoke fails unless --vendor cpu was given; --expect-gpus fails a node that
/// shows fewer GPUs. Each says so in one line.
#[test]
fn no_gpu_fails_smoke_unless_the_cpu_is_asked_for() {
    if host_has_gpu() {
        eprintln!("SKIP no_gpu_fails_smoke: this machine has a GPU");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A suite that would pass: if smoke ran it, the exit code would be 0.
    let py = fake_python(dir.path(), "exit 0");
    let o = rocmenv(&["smoke", "--host", "--python", py.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(
        e.starts_with("rocmenv: smoke: this host shows no GPU") && e.contains("--vendor cpu"),
        "{e}"
    );
    let o = rocmenv(&[
        "smoke",
        "--host",
        "--vendor",
        "cpu",
        "--expect-gpus",
        "1",
        "--python",
        py.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        e.trim_end(),
        "rocmenv: --expect-gpus 1: this host shows 0 GPUs (rocmenv doctor lists them)"
    );
    let o = rocmenv(&["smoke", "--host", "--vendor", "cpu", "--gpu", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--vendor cpu uses no GPU"));
}

/// Issue 21: a schema-2 document's per-device entries stay per device in the JSON, get a row and a JUnit case each,
/// a passing test's note shows, and a failure names its device.
#[test]
fn per_device_entries_reach_rows_json_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let entry = |device: &str, status: &str, reason: &str| {
        format!(
            r#"{{"name": "gemm", "status": "{status}", "reason": {reason}, "fix": null, "device": {device}, "metrics": [], "params": {{}}, "duration_s": 0.1}}"#
        )
    };
    let tests = [
        r#"{"name": "environment", "status": "pass", "reason": null, "fix": null, "device": null, "metrics": [], "params": {}, "duration_s": 0.1}"#.to_string(),
        entry("0", "pass", r#""fp16 skipped: no CPU matmul""#),
        entry("1", "fail", r#""gemm fp32: row 3000 off by 2.5 (atol 0.01)""#),
    ];
    let doc = format!(
        r#"{{"schema_version": 2, "kind": "smoke", "level": "quick", "device": {{"kind": "cpu", "name": "x", "count": 2, "devices": []}}, "tests": [{}]}}"#,
        tests.join(",")
    );
    let lines: String = tests
        .iter()
        .map(|t| format!("echo '@rocmenv-test {t}'\n"))
        .collect();
    let py = fake_python(dir.path(), &format!("{lines}echo '{doc}' > \"$5\""));
    let (j, x) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let o = rocmenv(&[
        "smoke",
        "--host",
        "--vendor",
        "cpu",
        "--python",
        py.to_str().unwrap(),
        "--json",
        j.to_str().unwrap(),
        "--junit",
        x.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("✓ gemm (torch device 0)"), "{out}");
    assert!(
        out.contains("      note: fp16 skipped: no CPU matmul"),
        "{out}"
    );
    assert!(
        out.contains("✗ gemm (torch device 1)")
            && out.contains("torch device 1: gemm fp32: row 3000 off by 2.5"),
        "{out}"
    );
    let doc = json(&j);
    assert_eq!(doc["schema_version"], 2);
    let devices: Vec<_> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["device"].clone())
        .collect();
    assert_eq!(devices, [serde_json::Value::Null, 0.into(), 1.into()]);
    let xml = std::fs::read_to_string(&x).unwrap();
    assert!(
        xml.contains(r#"<testcase name="gemm (torch device 0)""#)
            && xml.contains(r#"<testcase name="gemm (torch device 1)""#)
            && xml.contains("<system-out>fp16 skipped: no CPU matmul</system-out>"),
        "{xml}"
    );
}

/// The CPU stack built without --with-smoke-tests: rocmenv copies the suite in.
fn cpu_image_without_suite() -> String {
    let o = rocmenv(&["build", "--stack", "cpu", "--base", BASE, "--json"]);
    succeeded(&o);
    let built: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    built["tag"].as_str().unwrap().to_string()
}

/// Issue 15: the quick level passes inside the CPU stack image, which has no suite of its own.
#[test]
fn the_quick_level_passes_in_an_image_without_the_suite() {
    let Some(d) = daemon("smoke-in-image") else {
        return;
    };
    let image = cpu_image_without_suite();
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--image",
        &image,
        "--",
        "test",
        "!",
        "-e",
        "/opt/rocmenv/smoke-tests",
    ]);
    succeeded(&o);
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    let o = rocmenv(&[
        "smoke",
        "--image",
        &image,
        "--vendor",
        "cpu",
        "--json",
        j.to_str().unwrap(),
    ]);
    succeeded(&o);
    let doc = json(&j);
    assert_eq!(test_names(&doc).len(), QUICK.len(), "{doc}");
    assert_eq!(status_of(&doc, "numerics"), "pass");
    assert_no_leftovers(&d.engine);

    // Timed out inside the container: a failed test named timeout, the container killed and removed.
    let o = rocmenv(&[
        "smoke",
        "--image",
        &image,
        "--vendor",
        "cpu",
        "--level",
        "standard",
        "--only",
        "models",
        "--timeout",
        "2",
        "--json",
        j.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert_eq!(test_names(&json(&j)).last().unwrap(), "timeout");
    assert_no_leftovers(&d.engine);

    // Ctrl-C after the first test: exit 130, the container removed, the finished tests still written.
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args([
            "smoke",
            "--image",
            &image,
            "--vendor",
            "cpu",
            "--level",
            "standard",
            "--json",
            j.to_str().unwrap(),
        ])
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("environment") {
            break;
        }
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let doc = json(&j);
    let names = test_names(&doc);
    assert_eq!(
        names.first().map(String::as_str),
        Some("environment"),
        "{names:?}"
    );
    assert_eq!(
        names.last().map(String::as_str),
        Some("interrupted"),
        "{names:?}"
    );
    assert_no_leftovers(&d.engine);
}

/// The Python side's own tests (schema, statistics, tolerances, the bounded batch search, plan errors).
#[test]
fn the_suites_pytest_passes() {
    if !python_has("pytest, torch", "pytest") {
        return;
    }
    let o = Command::new(PYTHON)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/smoke-tests"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains(" passed"), "{out}");
}

/// Issue 15: the field report's invented knobs appear nowhere in the product (code, templates, data, suites, docs).
#[test]
fn no_invented_knob_anywhere_in_the_product() {
    // Spelled in pieces so this file does not match itself.
    let invented = [
        format!("torch.backends.{}", "roc"),
        format!("torch.utils.{}", "roc"),
        format!("ROCm{}", "DataLoader"),
        format!("HCC_{}", "OPT_LEVEL"),
    ];
    fn walk(p: &Path, out: &mut Vec<PathBuf>) {
        if p.is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                let e = e.unwrap().path();
                if e.file_name()
                    .is_some_and(|n| n != "__pycache__" && n != "target")
                {
                    walk(&e, out);
                }
            }
        } else {
            out.push(p.to_path_buf());
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for part in [
        "src",
        "images",
        "matrices",
        "smoke-tests",
        "docs",
        "examples",
        "README.md",
        "scripts",
    ] {
        if root.join(part).exists() {
            walk(&root.join(part), &mut files);
        }
    }
    assert!(files.len() > 50, "{}", files.len());
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        // `rocmenv lint` names the invented variable as a mistake to remove (issue 35): its code, its list of what
        // each component reads, and a finding line that says nothing reads it are not the product using it.
        let rel = f.strip_prefix(root).unwrap();
        let lint_knows = rel.starts_with("src/lint") || rel == Path::new("matrices/variables.yaml");
        for api in &invented {
            let uses = text
                .lines()
                .filter(|l| l.contains(api.as_str()))
                .any(|l| !(lint_knows || l.contains("lint.variable-unread: ")));
            assert!(!uses, "{} mentions {api}", f.display());
        }
    }
}

/// Issue 15: the `onnx` and `int8` tests run for real on the CPU, with ONNX Runtime from PyPI in a test image
/// (pinned to releases that load with Debian's numpy 1.24 and torch 1.13). PyPI is reached over TLS: the host's
/// CA bundle goes into the build so a TLS-inspecting proxy that the host trusts is trusted there too.
#[test]
fn onnx_and_int8_run_for_real_with_onnxruntime_from_pypi() {
    let Some(d) = daemon("onnx-in-image") else {
        return;
    };
    let cpu = cpu_image_without_suite();
    let ca = std::fs::read("/etc/ssl/certs/ca-certificates.crt").expect("the host's CA bundle");
    let dockerfile = format!(
        "FROM {cpu}\nUSER root\n\
         RUN apt-get update && apt-get install -y --no-install-recommends python3-pip && rm -rf /var/lib/apt/lists/*\n\
         COPY host-ca.pem /tmp/host-ca.pem\n\
         RUN python3 -m pip install --no-cache-dir --break-system-packages --cert /tmp/host-ca.pem \
         onnxruntime==1.19.2 onnx==1.16.2 'numpy<2'\n\
         USER 1000\n"
    );
    let files = vec![
        (PathBuf::from("Dockerfile"), dockerfile.into_bytes()),
        (PathBuf::from("host-ca.pem"), ca),
    ];
    let image = rocmenv::engine::build_files(&d.engine, &files, "test-onnx", &[], &mut |_| {})
        .unwrap_or_else(|e| panic!("onnx image: {e}"))
        .tag;
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("r.json");
    let o = rocmenv(&[
        "smoke",
        "--image",
        &image,
        "--vendor",
        "cpu",
        "--level",
        "standard",
        "--only",
        "onnx,int8",
        "--json",
        j.to_str().unwrap(),
    ]);
    succeeded(&o);
    let doc = json(&j);
    assert_eq!(status_of(&doc, "onnx"), "pass", "{doc}");
    assert_eq!(status_of(&doc, "int8"), "pass", "{doc}");
    assert_eq!(doc["versions"]["onnxruntime"], "1.19.2", "{doc}");
    let metric_names: Vec<String> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m["name"].as_str().unwrap().to_string())
        })
        .collect();
    assert!(
        metric_names
            .iter()
            .any(|m| m.contains("cpu") && m.contains("qps")),
        "{metric_names:?}"
    );
    assert!(
        metric_names.iter().any(|m| m.contains("agreement")),
        "{metric_names:?}"
    );
    assert_no_leftovers(&d.engine);
}
