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
    smoke_cmd(faults, only, json)
        .output()
        .expect("rocmenv runs")
}

/// The command `smoke` runs.
fn smoke_cmd(faults: Option<&str>, only: Option<&str>, json: &Path) -> Command {
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
        .env_remove("ROCMENV_DEADLINE_SCALE")
        .env_remove("ROCMENV_SMOKE_FAULTS");
    if let Some(f) = faults {
        cmd.env("ROCMENV_SMOKE_FAULTS", f);
    }
    cmd
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
    // The CPU quick gemm is 256 x 256: the element sits in row 171, column 17; one of the 65536 differs, in each of
    // the 8 products the quick level checks.
    fault_turns_it_red(
        "gemm-element",
        "gemm",
        &[
            "gemm fp32 on cpu: 8 of 8 products wrong; product 1: 1 of 65536 elements differ, worst [171, 17]: \
             |out-ref| ",
            ", bound ",
        ],
    );
}

#[test]
fn a_wrong_last_byte_of_a_copy_fails_bandwidth() {
    // 64 MiB: the last byte is at offset 67108863.
    fault_turns_it_red(
        "copy-last-byte",
        "bandwidth",
        &[
            "device copy on cpu: 1 of 8 copies wrong; copy 8: ",
            "1 of 67108864 bytes differ, first at offset 67108863",
        ],
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
    // A figure, not an assertion (performance targets live in benchmarks): the issue's bound is 60 s on this CPU.
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
    // Issue 36: and what to do about it, on the next line.
    let (_, fix) = reason_and_fix(&text, "run");
    assert!(fix.contains("--python"), "{text}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["device"]["kind"], "cpu", "{doc}");
}

/// A directory holding a `sitecustomize.py` of `code`: Python imports it at start-up from PYTHONPATH, so the suite's
/// torch is the real one with a fault patched in (the suite's own ROCMENV_SMOKE_FAULTS hook is not involved).
fn shim(code: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sitecustomize.py"), code).unwrap();
    dir
}

/// The lines rocmenv printed under the row of the failed test `test`: its reason, then its fix.
fn reason_and_fix(out: &str, test: &str) -> (String, String) {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim_start().starts_with(&format!("✗ {test} ")))
        .unwrap_or_else(|| panic!("no failed row for {test}: {out}"));
    let (reason, fix) = (lines.get(at + 1), lines.get(at + 2));
    let (reason, fix) = (reason.unwrap().trim(), fix.unwrap().trim());
    assert!(!reason.is_empty() && !reason.starts_with("fix:"), "{out}");
    assert!(fix.starts_with("fix: ") && fix.len() > 10, "{out}");
    (reason.to_string(), fix.to_string())
}

/// The quick level with the shim `code`: exit 1, and the failed test `test`'s reason (document and terminal)
/// holds each of `expected`.
fn shim_turns_it_red(code: &str, test: &str, expected: &[&str]) {
    if !torch(test) {
        return;
    }
    let s = shim(code);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = smoke_cmd(None, None, &json)
        .env("PYTHONPATH", s.path())
        .output()
        .unwrap();
    let out = both(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let reason = failed_reason(&json, test);
    let (shown, fix) = reason_and_fix(&out, test);
    for piece in expected {
        assert!(reason.contains(piece), "{piece:?} not in {reason:?}");
        assert!(shown.contains(piece), "{piece:?} not shown: {out}");
    }
    assert!(fix.contains("--duration"), "{fix}");
}

/// Issue 36: a torch whose matmul corrupts one element in one product of four passed quick, because the products
/// went into one output and only the last was checked. Every product is checked now.
#[test]
fn one_wrong_product_in_four_fails_gemm() {
    shim_turns_it_red(
        r#"
import torch
_mm, _n = torch.mm, [0]
def mm(*args, **kwargs):
    r = _mm(*args, **kwargs)
    _n[0] += 1
    if _n[0] % 4 == 2 and r.dim() == 2 and r.shape[0] > 8:
        r[r.shape[0] // 2, 1] += 1000.0
    return r
torch.mm = mm
"#,
        "gemm",
        &["gemm fp32 on cpu: 2 of 8 products wrong; product 2: 1 of 65536 elements differ"],
    );
}

/// Issue 36: the same for copies: one byte of one copy in eight.
#[test]
fn one_wrong_copy_in_eight_fails_bandwidth() {
    shim_turns_it_red(
        r#"
import torch
_copy, _n = torch.Tensor.copy_, [0]
def copy_(self, *args, **kwargs):
    r = _copy(self, *args, **kwargs)
    if self.numel() >= (1 << 20):
        _n[0] += 1
        if _n[0] % 8 == 3:
            self.view(-1)[self.numel() // 3].add_(1)
    return r
torch.Tensor.copy_ = copy_
"#,
        "bandwidth",
        &["device copy on cpu: 1 of 8 copies wrong; copy 3: 1 of 67108864 bytes differ, first at offset 22369621"],
    );
}

/// A matmul that never returns from its third product (the patched torch.mm waits forever).
const HANG: &str = r#"
import threading, torch
_mm, _n = torch.mm, [0]
def mm(*args, **kwargs):
    _n[0] += 1
    if _n[0] == 3:
        threading.Event().wait()
    return _mm(*args, **kwargs)
torch.mm = mm
"#;

/// Issue 36: such a torch kept `smoke --level quick` (no --timeout) running until it was killed 15 minutes later,
/// with no result. gemm's default deadline (from the level and its parameters) ends it: gemm fails as a possibly
/// stuck device, the result names it and its device, and the run goes on.
#[test]
fn a_matmul_that_never_returns_fails_gemm_at_its_deadline() {
    if !torch("a matmul that never returns") {
        return;
    }
    let s = shim(HANG);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let t0 = Instant::now();
    let mut child = smoke_cmd(None, None, &json)
        .args(["--only", "gemm,bandwidth"])
        .env("PYTHONPATH", s.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The issue's bound: red within 10 minutes. Past it, the run is stopped and the test fails.
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed().as_secs() > 600 {
            let _ = child.kill();
            panic!("smoke with a matmul that never returns still ran after 10 minutes");
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let o = child.wait_with_output().unwrap();
    eprintln!(
        "a matmul that never returns: red after {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    let out = both(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let reason = failed_reason(&json, "gemm");
    assert!(
        reason.starts_with("gemm on cpu: still running after its deadline of ")
            && reason.contains("possibly a stuck device"),
        "{reason}"
    );
    let (shown, fix) = reason_and_fix(&out, "gemm");
    assert!(shown.contains("possibly a stuck device"), "{out}");
    assert!(fix.contains("dmesg"), "{fix}");
    // The run went on: bandwidth ran after it, and the document was written.
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let bandwidth = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "bandwidth")
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(bandwidth["status"], "pass", "{bandwidth}");
}

/// Issue 36: Ctrl-C gave exit 130 with no line saying the run was interrupted, and a device kind of "". The
/// terminal says so with a fix, and the result is written with no empty device field.
#[test]
fn ctrl_c_says_interrupted_and_writes_the_result() {
    use std::io::{BufRead, BufReader};
    if !torch("ctrl-c") {
        return;
    }
    let s = shim(HANG);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut child = smoke_cmd(None, None, &json)
        .args(["--only", "gemm"])
        .env("PYTHONPATH", s.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let header = lines.next().unwrap().unwrap();
    assert!(header.starts_with("rocmenv smoke: quick level"), "{header}");
    // The suite is under way (gemm waits in its third product); give Python time to start it.
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let text = rest.join("\n");
    let (reason, fix) = reason_and_fix(&text, "interrupted");
    assert!(reason.contains("interrupted by SIGINT"), "{text}");
    assert!(fix.contains("rerun"), "{text}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["device"]["kind"], "cpu", "{doc}");
    for (k, v) in doc["device"].as_object().unwrap() {
        assert_ne!(v, "", "device.{k} is empty: {doc}");
    }
}

/// Issue 36: `--timeout 1` printed only "0 pass, 1 fail"; the reason was in --json alone. Now a reason line and a
/// fix line.
#[test]
fn a_timeout_shows_its_reason_and_fix() {
    if !torch("timeout") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let o = smoke_cmd(None, Some("models"), &json)
        .args(["--level", "standard", "--timeout", "1"])
        .output()
        .unwrap();
    let out = both(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    let (reason, fix) = reason_and_fix(&out, "timeout");
    assert_eq!(
        reason, "the suite outlived --timeout 1 s and was killed",
        "{out}"
    );
    assert!(fix.starts_with("fix: raise --timeout"), "{out}");
}
