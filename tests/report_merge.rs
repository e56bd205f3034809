//! `rocmenv report merge` on reports real runs wrote: `doctor --json` on captured host trees (each named a node by
//! ROCMENV_NODE_NAME, as a Kubernetes pod names it), a smoke result from a real `rocmenv smoke` run on this machine's
//! CPU (when Debian's torch is there) and one committed from such a run, and a validate report written to the
//! contract `validate --json` follows. Issue 12.

#[path = "common/cli.rs"]
mod cli;
#[path = "common/fleet.rs"]
mod fleet;

use cli::rocmenv;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// `doctor --sysroot` on a captured tree as node `node`, written into `dir`.
fn doctor(dir: &Path, host: &str, node: &str) -> PathBuf {
    let tree = fixture(&format!("hosts/{host}"));
    let o = rocmenv(
        &["doctor", "--sysroot", tree.to_str().unwrap(), "--json"],
        Some(node),
    );
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{host}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let path = dir.join(format!("{node}.json"));
    std::fs::write(&path, &o.stdout).unwrap();
    path
}

/// A validate report as the contract of `validate --json` fixes it: a stack whose build passed and whose smoke step
/// was skipped without a GPU, and one whose static arch check failed.
const VALIDATE: &str = r#"{"schema_version":1,"kind":"validate","node":"ci-runner-3","rocmenv_version":"0.1.0",
 "config":"rocmenv.yaml","stacks":[
  {"name":"cpu","stack":"cpu","image":"rocmenv/cpu:3f2a","cases":[
    {"step":"doctor","id":"doctor.gpu.present","status":"skip","summary":"no GPU on this runner","fix":null},
    {"step":"build","id":"build.image","status":"pass","summary":"built rocmenv/cpu:3f2a","fix":null},
    {"step":"smoke","id":"smoke.quick","status":"skip","summary":"no GPU on this runner","fix":null}]},
  {"name":"mi300","stack":"rocm","image":null,"cases":[
    {"step":"image","id":"image.torch-arch","status":"fail","summary":"the torch wheel has no gfx942 code","fix":"pin a wheel built for gfx942"}]}],
 "summary":{"pass":1,"warn":0,"fail":1,"skip":2}}"#;

fn merge(args: &[&str]) -> Output {
    let mut all = vec!["report", "merge"];
    all.extend_from_slice(args);
    rocmenv(&all, None)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The lines of the text report's grid, from its header (`check  1 2 …`) on.
fn grid(text: &str) -> impl Iterator<Item = &str> {
    text.lines().skip_while(|l| !l.starts_with("check "))
}

/// The node names of the grid's numbered list (`  1  gpu-node-1  doctor  (…)`), in column order.
fn numbered_nodes(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| {
            l.contains("  (pass ")
                && l.split_whitespace()
                    .next()
                    .is_some_and(|w| w.parse::<usize>().is_ok())
        })
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect()
}

/// The row of `id` in the text table: its marks, one per node column.
fn marks(table: &str, id: &str) -> String {
    let line = grid(table)
        .find(|l| l.trim_start().starts_with(&format!("{id} ")))
        .unwrap_or_else(|| panic!("no row {id} in\n{table}"));
    line.trim_start()[id.len()..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn doctor_reports_of_four_nodes_merge_into_one_table() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        doctor(dir.path(), "mi300x-x4-ubuntu2204", "gpu-node-1"),
        doctor(dir.path(), "mi210-bad-env", "gpu-node-2"),
        doctor(dir.path(), "h100-x8-ubuntu2204", "gpu-node-10"),
        doctor(dir.path(), "user-not-in-render-group", "gpu-node-3"),
    ];
    let args: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let o = merge(&args);
    let text = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "a failure on some node: exit 1\n{text}"
    );
    assert!(
        text.starts_with("rocmenv report merge: 4 nodes from 4 reports: 4 failures, 0 warnings\n"),
        "{text}"
    );
    // Natural order: gpu-node-10 is the last column.
    assert_eq!(
        numbered_nodes(&text),
        ["gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-10"]
    );
    assert_eq!(marks(&text, "devices.kfd"), "✓ ✓ ✗ -");
    assert_eq!(marks(&text, "env.hsa-override"), "✓ ✗ ✓ ✓");
    assert_eq!(marks(&text, "driver.nvidia-version"), "- - - ✓");
    assert_eq!(
        marks(&text, "gpu.cuda-arch"),
        ". . . ✓",
        "only the NVIDIA node reports it"
    );
    // Failures first, grouped by check and message, with their nodes and fix (issue 36).
    assert!(
        text.contains("\nFailures, by check and message\n  ✗ doctor "),
        "{text}"
    );
    assert!(text.contains("  ✗ doctor devices.kfd: bob cannot open /dev/kfd\n      1 node: gpu-node-3\n      fix: sudo usermod -aG render,video"), "{text}");
    assert!(
        text.find("Failures, by check") < text.find("\nChecks ")
            && text.find("\nChecks ") < text.find("\ncheck "),
        "failures, then counts per check, then the grid\n{text}"
    );
    assert!(text.lines().all(|l| l.chars().count() <= 200), "{text}");

    // JSON, read back by merge itself, gives the same table.
    let json_path = dir.path().join("merged.json");
    let o = merge(
        &[
            &args[..],
            &["--format", "json", "-o", json_path.to_str().unwrap()],
        ]
        .concat(),
    );
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(doc["kind"], "merge");
    assert_eq!(doc["summary"]["fail"], 4);
    assert_eq!(doc["nodes"][3]["name"], "gpu-node-10");
    let again = merge(&[json_path.to_str().unwrap()]);
    let again = stdout(&again);
    assert_eq!(
        grid(&again).collect::<Vec<_>>(),
        grid(&text).collect::<Vec<_>>(),
        "a merge of the merge is the same table"
    );

    // JUnit: a suite per node, a case per check it reported; failures carry summary and fix.
    let o = merge(&[&args[..], &["--format", "junit"]].concat());
    let xml = stdout(&o);
    let doc = roxmltree::Document::parse(&xml).expect("the JUnit parses");
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(
        suites
            .iter()
            .map(|s| s.attribute("name").unwrap())
            .collect::<Vec<_>>(),
        ["gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-10"]
    );
    let node3 = suites[2];
    assert_eq!(node3.attribute("failures"), Some("2"));
    let kfd = node3
        .children()
        .find(|c| c.attribute("name") == Some("devices.kfd"))
        .expect("a case devices.kfd");
    assert_eq!(kfd.attribute("classname"), Some("rocmenv.doctor"));
    let failure = kfd
        .children()
        .find(|c| c.has_tag_name("failure"))
        .expect("a failure");
    assert_eq!(
        failure.attribute("message"),
        Some("bob cannot open /dev/kfd")
    );
    assert!(failure
        .text()
        .unwrap_or_default()
        .contains("fix: sudo usermod -aG render,video"));

    // Markdown: the same order; the grid's columns are the numbered nodes.
    let o = merge(&[&args[..], &["--format", "markdown"]].concat());
    let md = stdout(&o);
    assert!(
        md.contains("### Failures, by check and message\n\n- **FAIL** doctor `"),
        "{md}"
    );
    assert!(
        md.contains("\n1. gpu-node-1 (") && md.contains("\n4. gpu-node-10 ("),
        "{md}"
    );
    assert!(
        md.contains("| check | 1 | 2 | 3 | 4 |\n| --- | :-: | :-: | :-: | :-: |\n"),
        "{md}"
    );
    assert!(md.contains("| `devices.kfd` | ✓ | ✓ | ✗ | - |"), "{md}");
    assert!(md.lines().all(|l| l.chars().count() <= 200), "{md}");
}

/// Issue 12: the smoke result of a real run names its node and merges beside the doctor report of the same node.
#[test]
fn smoke_and_validate_reports_merge_beside_doctor() {
    let dir = tempfile::tempdir().unwrap();
    let doctor_file = doctor(dir.path(), "no-gpu-debian12", "ci-cpu-1");
    let committed = fixture("reports/smoke-cpu-quick.json");
    let mut files = vec![doctor_file, committed];
    // A fresh run here, when Debian's torch is installed (CI requires it with ROCMENV_REQUIRE_TORCH=1).
    let torch = Command::new("/usr/bin/python3")
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if torch {
        let fresh = dir.path().join("smoke-fresh.json");
        let o = rocmenv(
            &[
                "smoke",
                "--host",
                "--python",
                "/usr/bin/python3",
                "--vendor",
                "cpu",
                "--only",
                "environment,numerics",
                "--json",
                fresh.to_str().unwrap(),
            ],
            Some("ci-cpu-2"),
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&fresh).unwrap()).unwrap();
        assert_eq!(
            doc["node"], "ci-cpu-2",
            "the result names the node from ROCMENV_NODE_NAME"
        );
        files.push(fresh);
    } else {
        assert!(
            std::env::var("ROCMENV_REQUIRE_TORCH").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_TORCH=1 but /usr/bin/python3 cannot import torch"
        );
        eprintln!("SKIP the fresh smoke run: /usr/bin/python3 cannot import torch (the committed result still merges)");
    }
    let validate = dir.path().join("validate.json");
    std::fs::write(&validate, VALIDATE).unwrap();
    files.push(validate);
    let args: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let o = merge(&args);
    let text = stdout(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the validate report failed a case\n{text}"
    );
    // The committed smoke result and the doctor report are both ci-cpu-1's: one column.
    let first = text
        .lines()
        .find(|l| l.trim_start().starts_with("1 ") && l.contains("(pass "))
        .unwrap();
    assert!(
        first.contains("ci-cpu-1") && first.contains("doctor, smoke"),
        "{text}"
    );
    assert!(text.contains("\nsmoke\n  environment "), "{text}");
    assert!(
        text.contains("\nvalidate mi300\n  image.torch-arch "),
        "{text}"
    );
    assert!(text.contains("✗ validate mi300 image.torch-arch: the torch wheel has no gfx942 code\n      1 node: ci-runner-3\n      fix: pin a wheel built for gfx942"), "{text}");
    let smoke: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[1]).unwrap()).unwrap();
    let want = if smoke["tests"]
        .as_array()
        .unwrap()
        .iter()
        .all(|t| t["status"] != "fail")
    {
        "✓"
    } else {
        "✗"
    };
    assert!(marks(&text, "numerics").starts_with(want), "{text}");
}

/// A file that is not a rocmenv report is one line naming it, exit 2; nothing is merged.
#[test]
fn malformed_and_unknown_reports_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let good = doctor(dir.path(), "mi300x-x4-ubuntu2204", "gpu-node-1");
    let cases = [
        ("truncated.json", "{\"schema_version\": 1, \"checks\": [", "is not JSON ("),
        ("empty.json", "", "is empty"),
        ("v3.json", "{\"schema_version\": 3, \"kind\": \"smoke\"}", "has schema_version 3; this rocmenv reads 1 and 2"),
        ("other.json", "{\"schema_version\": 1, \"kind\": \"sbom\"}", "has kind `sbom`"),
        ("noschema.json", "{\"checks\": []}", "has no schema_version"),
        ("badstatus.json", "{\"schema_version\":1,\"kind\":\"smoke\",\"tests\":[{\"name\":\"x\",\"status\":\"ok\"}]}", "a smoke test status `ok`"),
    ];
    for (name, body, why) in cases {
        let bad = dir.path().join(name);
        std::fs::write(&bad, body).unwrap();
        let o = merge(&[good.to_str().unwrap(), bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(
            err.starts_with(&format!("rocmenv: report {}: {why}", bad.display())),
            "{name}: {err}"
        );
        assert!(o.stdout.is_empty(), "{name}: nothing merged");
    }
    let o = merge(&[dir.path().join("missing.json").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json: cannot be read"));
    // A clean report alone exits 0.
    assert_eq!(merge(&[good.to_str().unwrap()]).status.code(), Some(0));
}

/// Issue 36: 2,000 nodes merge into failures grouped by check and message (a message naming its own node groups
/// with the others), counts per check, no grid; every troubled node is named; no line is over 200 characters, in
/// text or Markdown.
#[test]
fn two_thousand_nodes_merge_grouped_with_short_lines() {
    let dir = tempfile::tempdir().unwrap();
    let files = fleet::write_fleet(dir.path(), 2000);
    let args: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let o = merge(&args);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.starts_with("rocmenv report merge: 2000 nodes from 2000 reports: "),
        "{}",
        &text[..300]
    );
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 200).collect();
    assert!(long.is_empty(), "{long:?}");
    for node in fleet::troubled(&files) {
        assert!(text.contains(&node), "{node} is not named");
    }
    // docker.gpu-runtime fails on every eighth node (the RTX 4090 tree), each message naming its node: one group of
    // 250 nodes, with the name taken out.
    assert!(
        text.contains("  ✗ doctor docker.gpu-runtime: <node>: Docker has no nvidia runtime"),
        "{text}"
    );
    let group = text
        .lines()
        .skip_while(|l| !l.contains("doctor docker.gpu-runtime: <node>"))
        .find(|l| {
            l.trim_start()
                .starts_with("250 nodes: node-00007, node-00015,")
        });
    assert!(group.is_some(), "{text}");
    assert!(text.contains("The grid of checks by node shows up to 32 nodes; this merge has 2000"));
    assert!(
        text.contains("\nEnvironments (7 distinct)\n  500 nodes: "),
        "{text}"
    );
    assert!(!text.contains("\ncheck "), "no grid");

    let o = merge(&[&args[..], &["--format", "markdown"]].concat());
    let md = stdout(&o);
    let long: Vec<&str> = md.lines().filter(|l| l.chars().count() > 200).collect();
    assert!(long.is_empty(), "{long:?}");
    assert!(
        md.contains("  <details><summary>250 nodes</summary>"),
        "{md}"
    );
}
