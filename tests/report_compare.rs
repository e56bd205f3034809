//! `rocmenv report compare` (issue 36, item 2): a bench result written to the suite schema (docs/schema, checked
//! with check-jsonschema where it is installed) as an AMD node's, and a doctored second result, an NVIDIA node's
//! on another image, whose figures are the first's times known ratios; the percentages, the faster side, the
//! spread, every format, `--fail-on-regression`, and bad input.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/schema.rs"]
mod schema;

use cli::rocmenv;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Output;

/// One bench test as smoke-tests/rocmenv_smoke/perf.py's bench_metrics writes it: throughput, p50, p99, cv, peak.
fn test(name: &str, params: Value, unit: &str, [thr, p50, p99, cv, peak]: [f64; 5]) -> Value {
    json!({"name": name, "status": "pass", "reason": null, "fix": null, "device": 0, "duration_s": 12.5,
           "params": params,
           "metrics": [
               {"name": "throughput", "value": thr, "unit": unit},
               {"name": "median_ms", "value": p50, "unit": "ms", "better": "lower"},
               {"name": "p99_ms", "value": p99, "unit": "ms", "better": "lower"},
               {"name": "cv_pct", "value": cv, "unit": "%", "better": "lower"},
               {"name": "peak_memory_bytes", "value": peak, "unit": "bytes", "better": "lower"}]})
}

/// The first result: an MI300X node on a ROCm image.
fn first() -> Value {
    json!({"schema_version": 2, "kind": "bench", "level": "standard", "node": "mi300x-node-1",
           "rocmenv_version": "0.1.0", "image": {"reference": "rocm/pytorch:rocm6.2.4_ubuntu22.04_py3.10_pytorch_release_2.4.0"},
           "device": {"kind": "rocm", "name": "AMD Instinct MI300X", "gfx": "gfx942", "count": 1,
                      "devices": [{"index": 0, "name": "AMD Instinct MI300X"}]},
           "versions": {"torch": "2.4.0", "hip": "6.2.41134"},
           "tests": [
               test("resnet50", json!({"batch": 64, "precision": "amp", "mode": "train"}), "images/s", [1000.0, 63.0, 70.0, 1.5, 2.0e10]),
               test("gemm", json!({"size": 8192, "precision": "fp16"}), "TFLOP/s", [400.0, 2.7, 2.9, 0.5, 4.0e8]),
               test("vit_b_16", json!({"batch": 32, "precision": "fp32", "mode": "infer"}), "images/s", [500.0, 64.0, 66.0, 8.0, 3.0e9])],
           "comparisons": []})
}

/// The doctored second result: an H100 node on an NGC image, resnet50 at 1.25× the throughput and 0.8× the p99,
/// gemm at 0.9×, vit_b_16 at 1.05× (within both runs' cv of 8 % + 4 %).
fn second() -> Value {
    let mut d = first();
    d["node"] = "h100-node-7".into();
    d["image"] = json!({"reference": "nvcr.io/nvidia/pytorch:24.08-py3"});
    d["device"] = json!({"kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "count": 1,
                         "devices": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]});
    d["versions"] = json!({"torch": "2.5.0a0", "cuda": "12.6"});
    let scale = |t: &mut Value, thr: f64, p99: f64, cv: Option<f64>| {
        let m = t["metrics"].as_array_mut().unwrap();
        m[0]["value"] = (m[0]["value"].as_f64().unwrap() * thr).into();
        m[2]["value"] = (m[2]["value"].as_f64().unwrap() * p99).into();
        if let Some(cv) = cv {
            m[3]["value"] = cv.into();
        }
    };
    let tests = d["tests"].as_array_mut().unwrap();
    scale(&mut tests[0], 1.25, 0.8, None);
    scale(&mut tests[1], 0.9, 1.1, None);
    scale(&mut tests[2], 1.05, 1.0, Some(4.0));
    d
}

fn write(dir: &Path, name: &str, doc: &Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_string_pretty(doc).unwrap()).unwrap();
    p
}

fn compare(args: &[&str]) -> Output {
    let mut all = vec!["report", "compare"];
    all.extend_from_slice(args);
    rocmenv(&all, None)
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn files() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "mi300x.json", &first());
    let b = write(dir.path(), "h100.json", &second());
    schema::valid("report compare inputs", "suite", &[a.clone(), b.clone()]);
    (dir, a, b)
}

#[test]
fn two_results_show_both_throughputs_both_p99s_and_the_difference() {
    let (_dir, a, b) = files();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let o = compare(&[a, b]);
    let text = out(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "nothing judged without the flag\n{text}"
    );
    assert!(
        text.starts_with("rocmenv report compare: 2 bench results, 3 rows, each against A\n"),
        "{text}"
    );
    assert!(
        text.contains("  A  mi300x-node-1 · rocm · AMD Instinct MI300X · rocm/pytorch:rocm6.2.4"),
        "{text}"
    );
    assert!(
        text.contains(
            "  B  h100-node-7 · cuda · NVIDIA H100 80GB HBM3 · nvcr.io/nvidia/pytorch:24.08-py3"
        ),
        "{text}"
    );
    assert!(text.contains("\nresnet50 · batch 64 · amp · train\n  A  1000 images/s  p50 63.0 ms  p99 70.0 ms  peak 18.6 GiB  cv 1.5 %"), "{text}");
    assert!(text.contains("  B  1250 images/s  p50 63.0 ms  p99 56.0 ms  peak 18.6 GiB  cv 1.5 %  +25.0 % vs A: B faster, beyond spread\n"), "{text}");
    assert!(text.contains("  B  360 TFLOP/s  p50 2.700 ms  p99 3.190 ms  peak 381 MiB  cv 0.5 %  -10.0 % vs A: A faster, beyond spread\n"), "{text}");
    assert!(
        text.contains("+5.0 % vs A: B faster, within spread\n"),
        "{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 200), "{text}");

    // JSON: the exact ratios.
    let o = compare(&[a, b, "--format", "json"]);
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["kind"], "compare");
    let delta = |model: &str| {
        let row = doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["model"] == model)
            .unwrap();
        row["results"][1]["delta_pct"].as_f64().unwrap()
    };
    assert!((delta("resnet50") - 25.0).abs() < 1e-9);
    assert!((delta("gemm") + 10.0).abs() < 1e-9);
    assert!((delta("vit_b_16") - 5.0).abs() < 1e-9);
    assert_eq!(doc["runs"][1]["vendor"], "cuda");

    // Markdown and HTML carry the same figures; the page draws bars with CSS widths and runs no script.
    let md = out(&compare(&[a, b, "--format", "markdown"]));
    assert!(md.contains("| resnet50 · batch 64 · amp · train | B | 1250 images/s | 63.0 | 56.0 | 18.6 GiB | 1.5 | +25.0 % vs A: B faster, beyond spread |"), "{md}");
    let html = out(&compare(&[a, b, "--format", "html"]));
    assert!(html.contains("default-src 'none'") && !html.contains("<script"));
    assert!(
        html.contains("style=\"width: 80.0%\"") && html.contains("style=\"width: 100.0%\""),
        "{html}"
    );
    assert!(html.contains("+25.0 % vs A: B faster, beyond spread"));
}

#[test]
fn fail_on_regression_is_the_upgrade_gate() {
    let (dir, a, b) = files();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    // gemm is 10 % slower in B.
    let o = compare(&[a, b, "--fail-on-regression", "5"]);
    let text = out(&o);
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert!(
        text.contains("-10.0 % vs A: A faster, beyond spread, REGRESSION"),
        "{text}"
    );
    assert!(
        text.ends_with("1 result regressed by more than 5 % against A (or did not run)\n"),
        "{text}"
    );
    let o = compare(&[a, b, "--fail-on-regression", "15"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(out(&o).ends_with("no result regressed by more than 15 % against A\n"));
    // Against B, A is slower on resnet50 by 20 %.
    assert_eq!(
        compare(&[b, a, "--fail-on-regression", "15"]).status.code(),
        Some(1)
    );
    // A model the first result ran and a later one did not is a regression under the flag.
    let mut c = second();
    c["tests"][0]["status"] = "fail".into();
    let c = write(dir.path(), "broken.json", &c);
    let o = compare(&[a, c.to_str().unwrap(), "--fail-on-regression", "50"]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    assert!(out(&o).contains("  B  not measured (failed, skipped or not run)\n"));
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let (dir, a, _) = files();
    let doctor = write(
        dir.path(),
        "doctor.json",
        &json!({"schema_version": 1, "host": {}, "summary": {}, "checks": []}),
    );
    let o = compare(&[a.to_str().unwrap(), doctor.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("doctor.json") && err.contains("bench result"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    let o = compare(&[a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "two results at least");
    let o = compare(&[
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--fail-on-regression",
        "-3",
    ]);
    assert_eq!(o.status.code(), Some(2));
}
