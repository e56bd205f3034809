//! The suite's files, embedded in the binary so one rocmenv can run them in any image or on any host.

use include_dir::{include_dir, Dir};
use std::path::PathBuf;

static SMOKE_TESTS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/smoke-tests");

/// The manifest, `smoke-tests/suite.yaml`.
pub const SUITE_YAML: &str = include_str!("../../smoke-tests/suite.yaml");

/// The files a run needs, relative to the suite's directory: `run.py`, `rocmenv_smoke/*.py`, `suite.yaml`,
/// `README.md`. The suite's own pytest tests and any byte-code a local run left behind are not part of it.
pub fn suite_files() -> Vec<(PathBuf, &'static [u8])> {
    let mut out = Vec::new();
    collect(&SMOKE_TESTS, &mut out);
    out.sort();
    out
}

fn collect(dir: &Dir<'static>, out: &mut Vec<(PathBuf, &'static [u8])>) {
    for f in dir.files() {
        let p = f.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.ends_with(".pyc") || name == "pytest.ini" || name.starts_with('.') {
            continue;
        }
        out.push((p.to_path_buf(), f.contents()));
    }
    for d in dir.dirs() {
        let name = d.path().file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "__pycache__" || name == "tests" || name.starts_with('.') {
            continue;
        }
        collect(d, out);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_runner_and_its_package_are_there_and_nothing_else() {
        let files = super::suite_files();
        let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
        for must in [
            "run.py",
            "suite.yaml",
            "rocmenv_smoke/runner.py",
            "rocmenv_smoke/result.py",
        ] {
            assert!(
                names.iter().any(|n| n == must),
                "{must} missing from {names:?}"
            );
        }
        assert!(
            names.iter().all(|n| !n.contains("__pycache__")
                && !n.starts_with("tests/")
                && !n.ends_with(".pyc")),
            "{names:?}"
        );
    }
}
