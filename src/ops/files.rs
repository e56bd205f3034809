//! Writing the files the commands produce: atomically, through a uniquely named temporary file beside the target.

use crate::error::Error;
use crate::fleet;
use crate::report::html;
use std::io::Write;
use std::path::Path;

/// Writes `text` to `path` through a temporary file in the same directory (a unique name, removed on failure), so
/// a reader never sees half of it and two runs never share the temporary file.
pub fn write_atomic(path: &Path, text: &[u8]) -> Result<(), Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".rocmenv-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("write", path, e))?;
    // tempfile makes it 0600; results and baselines are shared with CI and teammates like any written file.
    use std::os::unix::fs::PermissionsExt;
    tmp.write_all(text)
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))
        })
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| Error::io("write", path, e))?;
    tmp.persist(path)
        .map_err(|e| Error::io("write", path, e.error))?;
    Ok(())
}

/// Writes the HTML page of `sources` to `path`, atomically.
pub fn write_html(path: &Path, title: &str, sources: &[html::Source]) -> Result<(), Error> {
    let text = html::render(&html::page(title, sources))
        .map_err(|e| Error::Output(std::io::Error::other(e)))?;
    write_atomic(path, text.as_bytes())
}

/// `--html FILE` of smoke, bench and validate: the page of the one report `doc` (the document `--json` writes),
/// named `label` on the page.
pub fn write_html_of(
    path: &Path,
    title: &str,
    label: &str,
    doc: &impl serde::Serialize,
) -> Result<(), Error> {
    let text = serde_json::to_string(doc).map_err(|e| Error::Output(std::io::Error::other(e)))?;
    let (doc, reports) = fleet::parse_doc(Path::new(label), &text)
        .map_err(|why| Error::Output(std::io::Error::other(why)))?;
    let source = html::Source {
        file: label.to_string(),
        doc,
        reports,
    };
    write_html(path, title, &[source])
}
