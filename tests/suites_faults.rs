//! Issue 21: each deliberately wrong result that applies to the CPU (the suite's `ROCMENV_SMOKE_FAULTS` test hook)
//! turns the real `rocmenv smoke --host --vendor cpu` red: exit 1, and the output names the test, where it ran and
//! how large the difference is. Without a fault the quick level passes (the time is printed, never asserted).
//!
//! Needs Debian's python3-torch at /usr/bin/python3 (ROCMENV_REQUIRE_TORCH=1 makes its absence a failure, as .ci/run
//! does), like tests/suites.rs.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

const PYTHON: &str = "/usr/bin/python3";

/// True when Debian's torch and torchvision are importable; panics when they must be (ROCMENV_REQUIRE_TORCH=1).
fn torch(test: &str) -> bool {
    let ok = Command::new(PYTHON)
        .args(["-c", "import torch, torchvision"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_TORCH=1 but {PYTHON} cannot import torch, torchvision"
        );
        eprintln!("SKIP {test}: {PYTHON} cannot import torch, torchvision");
    }
    ok
}

/// `rocmenv smoke --host --vendor cpu` at the quick level (only the test `only`, when given) with `faults` injected;
/// the JSON result goes to `json`.
fn smoke(faults: Option<&str>, only: Option<&str>, json: &Path) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    cmd.args(["smoke", "--host", "--vendor", "cpu", "--python", PYTHON]);
    if let Some(test) = only {
        cmd.args(["--only", test]);
    }
    cmd.arg("--json")
        .arg(json)
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("OMP_NUM_THREADS", "2")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("ROCMENV_SMOKE_FAULTS");
    if let Some(f) = faults {
        cmd.env("ROCMENV_SMOKE_FAULTS", f);
    }
    cmd.output().expect("rocmenv runs")
}

/// Stdout and stderr together, for messages and assertions.
fn both(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The reason of the failed entry named `test` in the result document.
fn failed_reason(json: &Path, test: &str) -> String {
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(json).expect("a result document")).unwrap();
    let t = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == test)
        .unwrap_or_else(|| panic!("no {test} in {doc}"));
    assert_eq!(t["status"], "fail", "{t}");
    t["reason"].as_str().unwrap().to_string()
}

/// Runs the quick level with one fault; asserts exit 1 and that the test's reason, in the document and in what
/// rocmenv printed, names where it ran and every expected piece of the difference.
fn fault_turns_it_red(fault: &str, test: &str, expected: &[&str]) {
    if !torch(fault) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = smoke(Some(fault), Some(test), &json);
    let out = both(&o);
    assert_eq!(o.status.code(), Some(1), "{fault}: {out}");
    assert!(out.contains(test), "{fault}: {test} is not named: {out}");
    let reason = failed_reason(&json, test);
    for piece in expected {
        assert!(
            reason.contains(piece),
            "{fault}: {piece:?} not in {reason:?}"
        );
        assert!(
            out.contains(piece),
            "{fault}: {piece:?} not shown by rocmenv: {out}"
        );
    }
}

#[test]
fn one_wrong_gemm_element_far_from_the_first_rows_fails_gemm() {
    // The CPU quick gemm is 256 x 256: the element sits in row 171, column 17; one of the 65536 differs.
    fault_turns_it_red(
        "gemm-element",
        "gemm",
        &[
            "gemm fp32 on cpu: 1 of 65536 elements differ, max |out-ref| ",
            " at [171, 17]; bound ",
        ],
    );
}

#[test]
fn a_wrong_last_byte_of_a_copy_fails_bandwidth() {
    // 64 MiB: the last byte is at offset 67108863.
    fault_turns_it_red(
        "copy-last-byte",
        "bandwidth",
        &["device copy on cpu: 1 of 67108864 bytes differ, first at offset 67108863"],
    );
}

#[test]
fn a_nan_at_a_late_training_step_fails_numerics() {
    fault_turns_it_red(
        "train-nan",
        "numerics",
        &["training on cpu: the loss at step 17 of 20 is nan"],
    );
}

#[test]
fn one_wrong_byte_in_a_memory_block_fails_memory() {
    // 64 MiB in 16 MiB blocks: the middle block is block 2 of 4.
    fault_turns_it_red(
        "memory-block",
        "memory",
        &["memory on cpu: block 2 of 4 (16 MiB each): 1 of 16777216 bytes differ, first at offset 16777215"],
    );
}

#[test]
fn an_unknown_fault_is_refused() {
    if !torch("unknown fault") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = smoke(Some("gemm-element,no-such-fault"), Some("gemm"), &json);
    // run.py refuses the run (exit 2, nothing measured); rocmenv records that as a failed run.
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    let reason = failed_reason(&json, "run");
    assert!(
        reason.contains("exit 2") && reason.contains("unknown fault no-such-fault"),
        "{reason}"
    );
}

#[test]
fn without_faults_the_quick_level_passes() {
    if !torch("quick level without faults") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let t0 = Instant::now();
    let o = smoke(None, None, &json);
    // A figure, not an assertion (performance targets live in benchmarks): the bound is 60 s on this CPU.
    eprintln!(
        "quick level on the host CPU: {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(o.status.code(), Some(0), "{}", both(&o));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    for t in doc["tests"].as_array().unwrap() {
        assert_ne!(t["status"], "fail", "{t}");
    }
}

/// Issue 36: a run that ends without its result document (an interpreter that is not Python) printed only
/// "0 pass, 1 fail"; the reason was in --json alone, whose device kind was "". The failure is a row with its reason,
/// and the kind is the vendor's.
#[test]
fn a_run_without_a_result_says_why_in_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args([
            "smoke",
            "--host",
            "--vendor",
            "cpu",
            "--python",
            "/bin/true",
            "--json",
        ])
        .arg(&json)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let text = both(&o);
    assert!(text.contains("✗ run"), "{text}");
    assert!(
        text.contains("the suite wrote no result document (exit code 0)"),
        "{text}"
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["device"]["kind"], "cpu", "{doc}");
}
