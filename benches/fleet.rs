//! `rocmenv report merge` (text, Markdown) and `report html` over 1,000 and 10,000 doctor reports (issue 36): the
//! reports are the eight fixture trees of docs/fleet.md's merge, copied under numbered node names, one in eight with
//! its node's name inside a message. Each command runs as a child of this bench, so its peak memory is the child's
//! own (`ru_maxrss` from `wait4`), not the bench's. Prints a table; docs/performance.md records it.
//! `ROCMENV_FLEET_SIZES=2000` picks other sizes.

use rocmenv::ops::doctor::{build_report, DoctorOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

const TREES: [&str; 8] = [
    "mi300x-x4-ubuntu2204",
    "rhel94-mi300x-x8",
    "mi210-x4-ubuntu2204",
    "mi210-bad-env",
    "rx7900xtx-ubuntu2204-hwe",
    "user-not-in-render-group",
    "h100-x8-ubuntu2204",
    "rtx4090-driver-535",
];

/// The eight doctor documents.
fn documents() -> Vec<serde_json::Value> {
    TREES
        .iter()
        .map(|t| {
            let opts = DoctorOptions {
                sysroot: Some(
                    Path::new(env!("CARGO_MANIFEST_DIR"))
                        .join("tests/fixtures/hosts")
                        .join(t),
                ),
                ..DoctorOptions::default()
            };
            let r = build_report(&opts).expect("fixture loads");
            let mut out = Vec::new();
            rocmenv::report::render_json(&r, &mut out).unwrap();
            serde_json::from_slice(&out).unwrap()
        })
        .collect()
}

/// `n` reports in `dir`, `node-00001.json` …
fn write_fleet(dir: &Path, docs: &[serde_json::Value], n: usize) -> Vec<PathBuf> {
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

/// Runs the binary with `args`, output thrown away; (seconds, peak resident MiB).
// `wait4` reaps the child (std's `wait` would not return its rusage), which clippy cannot see.
#[allow(clippy::zombie_processes)]
fn run(args: &[String]) -> (f64, f64) {
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("rocmenv runs");
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by the kernel for the child we spawned.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(got, pid, "wait4");
    let secs = start.elapsed().as_secs_f64();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) <= 1,
        "rocmenv {args:?} exited with {status}"
    );
    (secs, usage.ru_maxrss as f64 / 1024.0)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs this with no flag and wants it quick.
    let benching = std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> = match std::env::var("ROCMENV_FLEET_SIZES") {
        Ok(s) => s.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
        Err(_) if benching => vec![1000, 10000],
        Err(_) => vec![16],
    };
    let docs = documents();
    println!(
        "{:>7}  {:<32} {:>8} {:>10}",
        "nodes", "command", "seconds", "peak MiB"
    );
    for n in sizes {
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<String> = write_fleet(dir.path(), &docs, n)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let page = dir.path().join("fleet.html").display().to_string();
        let commands: [(&str, Vec<&str>); 4] = [
            ("report merge (text)", vec!["report", "merge"]),
            (
                "report merge --format markdown",
                vec!["report", "merge", "--format", "markdown"],
            ),
            (
                "report merge --format json",
                vec!["report", "merge", "--format", "json"],
            ),
            ("report html", vec!["report", "html", "-o", &page]),
        ];
        for (name, head) in commands {
            let args: Vec<String> = head
                .iter()
                .map(|s| s.to_string())
                .chain(files.iter().cloned())
                .collect();
            let (secs, mib) = run(&args);
            println!("{n:>7}  {name:<32} {secs:>8.2} {mib:>10.1}");
        }
    }
}
