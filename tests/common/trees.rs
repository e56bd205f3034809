//! What the `rocmenv fix` tests share (tests/fix.rs, tests/fix_cdi.rs): the built binary run with a fixed locale,
//! copies of captured host trees, and a hash of a whole tree to prove a dry run or an `--undo` left it as it was.

use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

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
pub fn copy_of(fixture: &str) -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(fixture);
    let st = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(t.path())
        .status()
        .unwrap();
    assert!(st.success());
    t
}
