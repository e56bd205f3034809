//! The page from documents: the grid, the charts, the environment, and hostile strings kept as text.

use super::*;
use serde_json::json;
use std::path::Path;

fn source(file: &str, doc: serde_json::Value) -> Source {
    let text = doc.to_string();
    let (doc, reports) = crate::fleet::parse_doc(Path::new(file), &text).unwrap();
    Source {
        file: file.into(),
        doc,
        reports,
    }
}

fn bench(node: &str, gpu: &str, throughput: f64) -> serde_json::Value {
    json!({
        "schema_version": 1, "kind": "bench", "level": "standard", "node": node,
        "device": {"kind": "rocm", "name": gpu, "count": 1, "devices": []},
        "versions": {"torch": "2.5.1", "hip": "6.2.41133"},
        "tests": [
            {"name": "gemm", "status": "pass", "reason": null, "fix": null, "params": {},
             "metrics": [{"name": "gemm_bf16_tflops", "value": 612.5, "unit": "TFLOP/s"}]},
            {"name": "resnet50", "status": "pass", "reason": null, "fix": null,
             "params": {"batch": 64, "precision": "amp"},
             "metrics": [{"name": "throughput", "value": throughput, "unit": "images/s"}]}
        ],
        "comparisons": [
            {"test": "gemm", "metric": "gemm_bf16_tflops", "unit": "TFLOP/s", "measured": 612.5,
             "peak": 1307.4, "peak_pct": 46.8, "baseline": 640.0, "baseline_source": "week 48",
             "baseline_pct": 95.7, "regression": false}
        ]
    })
}

const HOSTILE: &str = "<script>alert('x')</script>\"onload=\"x";

#[test]
fn a_bench_merge_of_two_gpu_kinds_has_charts_environment_and_the_throughput_table() {
    let p = page(
        "fleet",
        &[
            source("a.json", bench("gpu-1", "AMD Instinct MI300X", 2500.0)),
            source("b.json", bench("gpu-2", "AMD Instinct MI210", 900.0)),
        ],
    );
    assert_eq!(p.nodes.len(), 2);
    assert_eq!(p.charts.len(), 2, "one comparison per node");
    assert_eq!(p.charts[0].bars.len(), 3);
    let seed = p.seed.as_ref().expect("two GPU kinds");
    assert_eq!(seed.kinds, ["AMD Instinct MI210", "AMD Instinct MI300X"]);
    assert_eq!(seed.rows.len(), 1);
    assert_eq!(seed.rows[0].batch, "64, amp");
    assert_eq!(seed.rows[0].values, ["900 images/s", "2500 images/s"]);
    assert!(p.envs[0].items.contains(&("torch".into(), "2.5.1".into())));
    let html = render(&p).unwrap();
    assert_eq!(html.matches("<rect class=\"bar ").count(), 6);
    assert_eq!(
        html.matches("<td class=\"cell ").count(),
        4,
        "2 rows × 2 nodes"
    );
    assert!(html.contains("46.8 % of the datasheet peak"));
    assert!(html.contains("95.7 % of the baseline (week 48)"));
}

#[test]
fn hostile_strings_are_text_and_nothing_is_loaded() {
    let doc = json!({
        "schema_version": 1, "node": HOSTILE, "host": {}, "summary": {},
        "checks": [{"id": "gpu.present", "status": "fail", "summary": format!("{HOSTILE} {}", "x".repeat(3000)),
                    "fix": "</td></tr></table><img src=http://example.com/x>", "detail": null}]
    });
    let p = page(HOSTILE, &[source("h.json", doc)]);
    let html = render(&p).unwrap();
    assert!(!html.contains("<script>"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(&#x27;x&#x27;)&lt;&#x2f;script&gt;&quot;onload=&quot;x")
    );
    assert_eq!(
        html.matches("<table").count(),
        2,
        "the fix did not close a table: the counts and the grid"
    );
    // Nothing outside the file: no scheme in any src or href, and the policy forbids loading anything.
    for attr in ["src=\"", "href=\""] {
        assert!(!html.contains(attr), "{attr} in the page");
    }
    assert!(html.contains("default-src 'none'"));
    assert!(!html.contains("<script"));
}

#[test]
fn a_failure_is_listed_first_with_its_fix_and_node_and_marked_in_the_grid() {
    let doc = json!({
        "schema_version": 1, "node": "gpu-node-6", "host": {"gpus": [], "rocm": {"version": "6.2.0"}}, "summary": {},
        "checks": [
            {"id": "devices.kfd", "status": "fail", "summary": "bob cannot open /dev/kfd", "fix": "sudo usermod -aG render,video $USER"},
            {"id": "gpu.present", "status": "pass", "summary": "1 GPU", "fix": null}
        ]
    });
    let p = page("t", &[source("n.json", doc)]);
    assert!(p.failed);
    assert_eq!(p.envs[0].items, [("ROCm".to_string(), "6.2.0".to_string())]);
    let html = render(&p).unwrap();
    assert!(html.contains("<code>doctor devices.kfd</code> <span class=\"count\">1 node</span><span class=\"msg\">bob cannot open &#x2f;dev&#x2f;kfd</span></summary>\n<p class=\"fix\">sudo usermod -aG render,video $USER</p><p class=\"nodes\">gpu-node-6</p></details>"), "{html}");
    assert!(
        html.find("id=\"problems\"") < html.find("id=\"counts\"")
            && html.find("id=\"counts\"") < html.find("id=\"checks\""),
        "failures, then counts, then the grid"
    );
    assert!(
        html.contains(
            "<td class=\"cell fail\" title=\"bob cannot open &#x2f;dev&#x2f;kfd\">&#10007;</td>"
        ),
        "{html}"
    );
    assert!(p.seed.is_none() && p.charts.is_empty());
}
