//! Writing a rendered build context to a directory without ever leaving a half-written file.

use super::render::Rendered;
use crate::error::Error;
use std::fs;
use std::io::Write;
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
    // a full disk halfway leaves the directory as it was, not a Dockerfile without its .dockerignore.
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let unstage = |staged: &[(PathBuf, PathBuf)]| {
        for (tmp, _) in staged {
            let _ = fs::remove_file(tmp);
        }
    };
    for (rel, bytes) in all {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            if let Err(e) = fs::create_dir_all(parent) {
                unstage(&staged);
                return Err(io(parent, "create", e));
            }
        }
        // A hidden name of our own, so the temp file cannot be a user's `Dockerfile.tmp`.
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(path.file_name().unwrap_or_default());
        tmp_name.push(format!(".rocmenv-{}.tmp", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            unstage(&staged);
            return Err(io(&path, "write", e));
        }
        staged.push((tmp, path));
    }
    for (i, (tmp, path)) in staged.iter().enumerate() {
        if let Err(e) = fs::rename(tmp, path) {
            unstage(&staged[i..]);
            return Err(io(path, "write", e));
        }
    }
    Ok(())
}
