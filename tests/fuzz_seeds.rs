//! Issue 13: every committed seed and every input a fuzzer made fail (`fuzz/regressions/`) replayed through the fuzz
//! targets (`fuzz/src/targets.rs`), so a parser change that breaks one shows under `cargo test`, without AFL++.

#[allow(dead_code)]
#[path = "../fuzz/src/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};
use targets::TARGETS;

fn replay(kind: &str) -> usize {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join(kind);
    let mut n = 0;
    let mut failed = Vec::new();
    for (name, run) in TARGETS {
        let Ok(entries) = std::fs::read_dir(base.join(name)) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                failed.push(format!("{name}: {}", f.display()));
            }
            n += 1;
        }
    }
    assert!(
        failed.is_empty(),
        "these inputs fail (issue 13):\n{}",
        failed.join("\n")
    );
    n
}

#[test]
fn every_target_has_seeds_and_they_pass() {
    for (name, _) in TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/seeds")
            .join(name);
        let count = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
        assert!(count > 0, "fuzz/seeds/{name} has no seed");
    }
    assert!(replay("seeds") >= TARGETS.len());
}

#[test]
fn regressions_found_by_fuzzing_stay_fixed() {
    replay("regressions");
}

#[test]
fn targets_take_empty_and_junk_input() {
    let junk: Vec<u8> = (0..=255u8).cycle().take(1024).collect();
    for (_, run) in TARGETS {
        run(b"");
        run(&junk);
    }
}
