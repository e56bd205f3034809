//! A generated fleet for the scale tests of `report merge` and `report html` (issue 36): `doctor --json` of the
//! eight fixture trees of docs/fleet.md's merge, copied under numbered node names (`node-00001` …); every eighth
//! report (the RTX 4090 tree's) carries its node's name at the front of its docker.gpu-runtime message.

use std::path::{Path, PathBuf};

/// The trees of the eight-node merge in docs/fleet.md, in node order.
pub const EIGHT: [&str; 8] = [
    "mi300x-x4-ubuntu2204",
    "rhel94-mi300x-x8",
    "mi210-x4-ubuntu2204",
    "mi210-bad-env",
    "rx7900xtx-ubuntu2204-hwe",
    "user-not-in-render-group",
    "h100-x8-ubuntu2204",
    "rtx4090-driver-535",
];

/// The eight doctor documents, from the built binary.
pub fn eight_documents() -> Vec<serde_json::Value> {
    EIGHT
        .iter()
        .map(|t| {
            let tree = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/hosts")
                .join(t);
            let o = super::cli::rocmenv(
                &["doctor", "--sysroot", tree.to_str().unwrap(), "--json"],
                Some("x"),
            );
            assert!(matches!(o.status.code(), Some(0 | 1)), "doctor on {t}");
            serde_json::from_slice(&o.stdout).unwrap()
        })
        .collect()
}

/// `n` reports in `dir`; node `i` has the document of tree `i % 8`.
pub fn write_fleet(dir: &Path, n: usize) -> Vec<PathBuf> {
    let docs = eight_documents();
    (1..=n)
        .map(|i| {
            let node = format!("node-{i:05}");
            let mut d = docs[i % docs.len()].clone();
            d["node"] = node.clone().into();
            // The RTX 4090 tree fails docker.gpu-runtime; its message names the node, as a host's message may.
            if i % 8 == 7 {
                let checks = d["checks"].as_array_mut().unwrap();
                if let Some(c) = checks.iter_mut().find(|c| c["id"] == "docker.gpu-runtime") {
                    c["summary"] =
                        format!("{node}: {}", c["summary"].as_str().unwrap_or("")).into();
                }
            }
            let path = dir.join(format!("{node}.json"));
            std::fs::write(&path, d.to_string()).unwrap();
            path
        })
        .collect()
}

/// The nodes that failed or warned in the reports at `files`.
pub fn troubled(files: &[PathBuf]) -> Vec<String> {
    files
        .iter()
        .filter_map(|f| {
            let d: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            let bad = d["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["status"] == "fail" || c["status"] == "warn");
            bad.then(|| d["node"].as_str().unwrap().to_string())
        })
        .collect()
}
