//! What the tests on captured host trees share (tests/fix.rs, tests/fix_cdi.rs, tests/wsl.rs, tests/wsl_run.rs): the
//! built binary run with a fixed locale, the trees and copies of them, `run --print` and `dockerfile` on a tree, and a
//! hash of a whole tree to prove a dry run or an `--undo` left it as it was.

use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The captured host tree tests/fixtures/hosts/`name`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

/// `rocmenv ARGS` with a fixed locale, no colour, the embedded matrices and no `SUDO_USER`.
pub fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("SUDO_USER")
        .output()
        .expect("runs")
}

/// A run's stdout and stderr.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `rocmenv run --print --sysroot TREE --image IMAGE [EXTRA] -- python -c 1`: exit code, stdout, stderr.
pub fn print_run(tree: &Path, image: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let tree = tree.to_str().unwrap();
    let mut args = vec!["run", "--print", "--sysroot", tree, "--image", image];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "python", "-c", "1"]);
    let o = rocmenv(&args);
    let (out, err) = text(&o);
    (o.status.code(), out, err)
}

/// `rocmenv dockerfile --stack STACK --sysroot TREE -o DIR/ctx` into a temporary DIR: the run, and the Dockerfile it
/// wrote (read before DIR goes), if it wrote one.
pub fn dockerfile_in(tree: &Path, stack: &str) -> (Output, Option<String>) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = dir.path().join("ctx");
    let o = rocmenv(&[
        "dockerfile",
        "--stack",
        stack,
        "--sysroot",
        tree.to_str().unwrap(),
        "-o",
        ctx.to_str().unwrap(),
    ]);
    let df = std::fs::read_to_string(ctx.join("Dockerfile")).ok();
    (o, df)
}

/// The stdout of a run that must exit 0.
pub fn ok(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

/// Every path under `dir` with its kind, mode and bytes (or link target), hashed in order.
pub fn tree_hash(dir: &Path) -> String {
    fn walk(dir: &Path, base: &Path, h: &mut Sha256) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            let m = std::fs::symlink_metadata(&p).unwrap();
            h.update(p.strip_prefix(base).unwrap().to_string_lossy().as_bytes());
            h.update(m.permissions().mode().to_le_bytes());
            if m.file_type().is_symlink() {
                h.update(std::fs::read_link(&p).unwrap().to_string_lossy().as_bytes());
            } else if m.is_dir() {
                walk(&p, base, h);
            } else {
                h.update(std::fs::read(&p).unwrap());
            }
        }
    }
    let mut h = Sha256::new();
    walk(dir, dir, &mut h);
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// A copy of a fixture tree in a temporary directory.
pub fn copy_of(name: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let src = fixture(name);
    let st = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(t.path())
        .status()
        .unwrap();
    assert!(st.success());
    t
}
