//! `write_context`: exactly the context files, atomically, and nothing half-written left behind.

use super::{m, req};
use rocmenv::dockerfile::{render, write_context, Stack};
use std::path::{Path, PathBuf};

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = PathBuf::from(p.file_name().unwrap());
        if p.is_dir() {
            out.extend(files_under(&p).into_iter().map(|f| name.join(f)));
        } else {
            out.push(name);
        }
    }
    out.sort();
    out
}

#[test]
fn writes_dockerfile_and_dockerignore_only() {
    let d = tempfile::tempdir().unwrap();
    let ctx = d.path().join("ctx");
    let out = render(&req(Stack::Cpu), m()).unwrap();
    write_context(&out, &ctx, false).unwrap();
    assert_eq!(
        files_under(&ctx),
        [PathBuf::from(".dockerignore"), PathBuf::from("Dockerfile")]
    );
    assert_eq!(
        std::fs::read_to_string(ctx.join("Dockerfile")).unwrap(),
        out.dockerfile
    );
    // Writing again replaces the files only when forced, and leaves nothing else.
    assert!(write_context(&out, &ctx, false).is_err());
    write_context(&out, &ctx, true).unwrap();
    assert_eq!(files_under(&ctx).len(), 2);
}

#[test]
fn smoke_tests_are_copied_and_no_tmp_is_left() {
    let d = tempfile::tempdir().unwrap();
    let mut r = req(Stack::Rocm);
    r.with_smoke_tests = true;
    let out = render(&r, m()).unwrap();
    write_context(&out, d.path(), false).unwrap();
    let files = files_under(d.path());
    assert!(
        files.contains(&PathBuf::from("smoke-tests/README.md")),
        "{files:?}"
    );
    assert!(
        files
            .iter()
            .all(|f| f.extension().is_none_or(|e| e != "tmp")),
        "{files:?}"
    );
    // Everything the suite runs with, and none of its own pytest files or byte-code.
    let shipped: Vec<PathBuf> =
        files_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("smoke-tests"))
            .into_iter()
            .filter(|f| {
                !f.starts_with("tests")
                    && f.extension().is_none_or(|e| e != "pyc")
                    && f != Path::new("pytest.ini")
            })
            .collect();
    assert_eq!(files.len(), shipped.len() + 2, "{files:?}");
    assert!(out
        .dockerfile
        .contains("COPY smoke-tests/ /opt/rocmenv/smoke-tests/"));
}

#[test]
fn failure_leaves_no_tmp_file() {
    let d = tempfile::tempdir().unwrap();
    let out = render(&req(Stack::Cpu), m()).unwrap();
    // A directory where the Dockerfile should go makes the rename fail after the temp file was written.
    std::fs::create_dir_all(d.path().join("Dockerfile/x")).unwrap();
    assert!(write_context(&out, d.path(), true).is_err());
    // Only the (empty) directories remain: no temp file.
    assert_eq!(files_under(d.path()), Vec::<PathBuf>::new());
}

/// Issue 10: `-o DIR` silently replaced a user's Dockerfile and .dockerignore. Without `force` an existing file
/// is an error naming it, and nothing at all is written (the .dockerignore neither).
#[test]
fn an_existing_file_is_not_replaced_without_force() {
    let d = tempfile::tempdir().unwrap();
    let out = render(&req(Stack::Cpu), m()).unwrap();
    std::fs::write(d.path().join("Dockerfile"), "FROM mine\n").unwrap();
    let e = write_context(&out, d.path(), false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&format!("{}", d.path().join("Dockerfile").display())),
        "{e}"
    );
    assert!(e.contains("--force"), "{e}");
    assert_eq!(
        std::fs::read_to_string(d.path().join("Dockerfile")).unwrap(),
        "FROM mine\n"
    );
    assert_eq!(files_under(d.path()), [PathBuf::from("Dockerfile")]);
    // Only .dockerignore there: refused too.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(".dockerignore"), "secrets\n").unwrap();
    assert!(write_context(&out, d.path(), false).is_err());
    assert_eq!(files_under(d.path()), [PathBuf::from(".dockerignore")]);
    // A user's own Dockerfile.tmp is not a temp file of ours.
    std::fs::write(d.path().join("Dockerfile.tmp"), "keep\n").unwrap();
    write_context(&out, d.path(), true).unwrap();
    assert_eq!(
        std::fs::read_to_string(d.path().join("Dockerfile.tmp")).unwrap(),
        "keep\n"
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join(".dockerignore")).unwrap(),
        String::from_utf8_lossy(
            &out.files
                .iter()
                .find(|(p, _)| p == Path::new(".dockerignore"))
                .unwrap()
                .1
        )
    );
}
