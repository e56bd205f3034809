//! Writing a rendered build context to a directory without ever leaving a half-written file.

use super::render::Rendered;
use crate::error::Error;
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// Writes `Dockerfile`, `.dockerignore` and the other context files into `dir`, creating it if missing.
///
/// A file already there is a user's work: unless `force`, nothing is written and the error names the first file
/// that would be replaced. Each file goes to a hidden temp file first and is renamed into place, so an error or
/// Ctrl-C leaves either the old file or the new one; files rocmenv does not write are left alone.
pub fn write_context(rendered: &Rendered, dir: &Path, force: bool) -> Result<(), Error> {
    let io = |path: &Path, what: &'static str, e: std::io::Error| Error::io(what, path, e);
    let mut all: Vec<(PathBuf, &[u8])> =
        vec![(PathBuf::from("Dockerfile"), rendered.dockerfile.as_bytes())];
    all.extend(
        rendered
            .files
            .iter()
            .map(|(p, b)| (p.clone(), b.as_slice())),
    );
    // A device or FIFO where the context should be is a wrong -o, never something to replace (issue 36).
    if fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(Error::invalid(
            "output",
            format!(
                "{} is not a directory; -o names the directory the build context is written to (a new one, or one of yours)",
                dir.display()
            ),
        ));
    }
    for (rel, _) in &all {
        // Context paths come from our own templates; refuse anything that would escape `dir`.
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(Error::Environment(format!(
                "refusing to write {} outside {}",
                rel.display(),
                dir.display()
            )));
        }
        let path = dir.join(rel);
        // A context holds regular files: a directory, device or FIFO in one's place stays, even with --force.
        if fs::metadata(&path).is_ok_and(|m| !m.is_file()) {
            return Err(Error::invalid(
                "output",
                format!(
                    "{} is not a regular file, and rocmenv does not replace it: remove it, or write the context to another -o DIR",
                    path.display()
                ),
            ));
        }
        if !force && fs::symlink_metadata(&path).is_ok() {
            return Err(Error::invalid(
                "output",
                format!(
                    "{} already exists; add --force to replace it (and the other files rocmenv writes there)",
                    path.display()
                ),
            ));
        }
    }
    fs::create_dir_all(dir).map_err(|e| io(dir, "create", e))?;
    // Two phases: every file goes to its temp file first; only when all are written are they renamed into place, so
    // a full disk halfway leaves the directory as it was, not a Dockerfile without its .dockerignore. A temp file not
    // renamed is removed when it is dropped, on every error path.
    let mut staged: Vec<(tempfile::NamedTempFile, PathBuf)> = Vec::new();
    for (rel, bytes) in all {
        let path = dir.join(&rel);
        staged.push((
            stage(&path, bytes).map_err(|(p, what, e)| io(&p, what, e))?,
            path,
        ));
    }
    for (tmp, path) in staged {
        tmp.persist(&path)
            .map_err(|e| io(&path, "write", e.error))?;
    }
    Ok(())
}

/// Writes `bytes` to a hidden temp file of a unique name beside `path` (never a user's `Dockerfile.tmp`), made
/// 0644 like any file rocmenv writes (tempfile makes it 0600), and synced; an error names the path and the step.
fn stage(
    path: &Path,
    bytes: &[u8],
) -> Result<tempfile::NamedTempFile, (PathBuf, &'static str, std::io::Error)> {
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(|e| (parent.to_path_buf(), "create", e))?;
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(path.file_name().unwrap_or_default());
    prefix.push(".rocmenv-");
    let write = || {
        let mut f = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .tempfile_in(parent)?;
        f.write_all(bytes)?;
        f.as_file()
            .set_permissions(fs::Permissions::from_mode(0o644))?;
        f.as_file().sync_all()?;
        Ok(f)
    };
    write().map_err(|e| (path.to_path_buf(), "write", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn rendered() -> Rendered {
        Rendered {
            dockerfile: "FROM scratch\n".into(),
            files: vec![
                (PathBuf::from(".dockerignore"), b"*\n".to_vec()),
                (PathBuf::from("smoke-tests/run.py"), b"print(1)\n".to_vec()),
            ],
            base_image: "scratch".into(),
            labels: BTreeMap::new(),
            notes: Vec::new(),
        }
    }

    /// Every file lands whole, 0644 like any file rocmenv writes, and no temp file stays beside it.
    #[test]
    fn writes_every_file_readable_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        write_context(&rendered(), dir.path(), false).unwrap();
        for (rel, text) in [
            ("Dockerfile", "FROM scratch\n"),
            (".dockerignore", "*\n"),
            ("smoke-tests/run.py", "print(1)\n"),
        ] {
            let p = dir.path().join(rel);
            assert_eq!(fs::read_to_string(&p).unwrap(), text);
            let mode = fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644, "{rel}");
        }
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .chain(fs::read_dir(dir.path().join("smoke-tests")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [".dockerignore", "Dockerfile", "run.py", "smoke-tests"]
        );
        // A second write is refused without force, and replaces with it.
        let e = write_context(&rendered(), dir.path(), false).unwrap_err();
        assert!(e.to_string().contains("--force"), "{e}");
        write_context(&rendered(), dir.path(), true).unwrap();
    }

    /// Issue 36: a FIFO where the Dockerfile goes (or where the directory goes) is refused, even with --force, and
    /// stays a FIFO; nothing is written beside it.
    #[test]
    fn a_fifo_in_the_context_or_as_the_directory_is_never_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = rustix::fs::Mode::from_raw_mode(0o600);
        let fifo = dir.path().join("Dockerfile");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, mode).unwrap();
        let e = write_context(&rendered(), dir.path(), true).unwrap_err();
        assert!(
            e.to_string().contains("Dockerfile is not a regular file") && e.exit_code() == 2,
            "{e}"
        );
        let as_dir = dir.path().join("ctx");
        rustix::fs::mkfifoat(rustix::fs::CWD, &as_dir, mode).unwrap();
        let e = write_context(&rendered(), &as_dir, true).unwrap_err();
        assert!(e.to_string().contains("ctx is not a directory"), "{e}");
        for p in [&fifo, &as_dir] {
            assert!(fs::symlink_metadata(p).unwrap().file_type().is_fifo());
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
