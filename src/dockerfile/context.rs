//! Writing a rendered build context to a directory without ever leaving a half-written file.

use super::render::Rendered;
use crate::error::Error;
use std::fs;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

/// Writes `Dockerfile`, `.dockerignore` and the other context files into `dir`, creating it if missing.
///
/// Each file goes to `<name>.tmp` first and is renamed into place, so an error or Ctrl-C leaves
/// either the old file or the new one; files rocmenv did not write are left alone.
pub fn write_context(rendered: &Rendered, dir: &Path) -> Result<(), Error> {
    let io = |path: &Path, what: &'static str, e: std::io::Error| Error::io(what, path, e);
    fs::create_dir_all(dir).map_err(|e| io(dir, "create", e))?;
    let mut all: Vec<(PathBuf, &[u8])> =
        vec![(PathBuf::from("Dockerfile"), rendered.dockerfile.as_bytes())];
    all.extend(
        rendered
            .files
            .iter()
            .map(|(p, b)| (p.clone(), b.as_slice())),
    );
    for (rel, bytes) in all {
        // Context paths come from our own templates; refuse anything that would escape `dir`.
        if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(Error::Environment(format!(
                "refusing to write {} outside {}",
                rel.display(),
                dir.display()
            )));
        }
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| io(parent, "create", e))?;
        }
        let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
        tmp_name.push(".tmp");
        let tmp = path.with_file_name(tmp_name);
        let result = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            fs::rename(&tmp, &path)
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&tmp);
            return Err(io(&path, "write", e));
        }
    }
    Ok(())
}
