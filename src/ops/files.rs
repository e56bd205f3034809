//! Writing the files the commands produce: a regular file atomically, through a uniquely named temporary file beside
//! it; anything else a path can name (a device, a FIFO, this process's own stdout) written through, never replaced.

use crate::error::Error;
use crate::fleet;
use crate::report::html;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::Path;

/// What an output path names, which decides how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputKind {
    /// Nothing yet, or a regular file: written to a temporary file beside it, then renamed over it.
    File,
    /// A device, a FIFO or a socket (symlinks followed), or this process's own stdout or stderr (`/dev/stdout`
    /// redirected to a file): written through as it is, never replaced.
    Stream,
}

/// What to do when a regular file is already at the path.
#[derive(Clone, Copy)]
pub enum Existing<'a> {
    /// Replace it, atomically.
    Replace,
    /// Leave it and fail with this error (checked atomically when the new file is put in place).
    Refuse(&'a dyn Fn() -> Error),
}

/// How `path` is written: [`OutputKind::File`] or [`OutputKind::Stream`]. A directory is refused (exit 2): the
/// path is the user's input and names the wrong kind of thing, wherever it runs.
pub fn output_kind(path: &Path) -> Result<OutputKind, Error> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        // Nothing there (or a dangling link): the atomic write makes the file, or says why it cannot.
        Err(_) => return Ok(OutputKind::File),
    };
    if meta.is_dir() {
        return Err(Error::Invalid {
            fields: vec!["output file".into()],
            value: Some(path.display().to_string()),
            message: format!(
                "{} is a directory; name a file to write (in it or elsewhere), or a device such as /dev/stdout",
                path.display()
            ),
        });
    }
    if meta.is_file() && own_stdio(&meta).is_none() {
        Ok(OutputKind::File)
    } else {
        Ok(OutputKind::Stream)
    }
}

/// True when `path` is this process's stdout (`/dev/stdout`, `/dev/fd/1`, or the file stdout is redirected to), so
/// a command writing its output there keeps its own lines off it.
pub fn is_stdout(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(p), Ok(fd)) = (
        std::fs::metadata(path),
        io::stdout().as_fd().try_clone_to_owned(),
    ) else {
        return false;
    };
    File::from(fd)
        .metadata()
        .is_ok_and(|m| m.dev() == p.dev() && m.ino() == p.ino())
}

/// A new handle on this process's stdout or stderr when `meta` is the file it writes to (`/dev/stdout`,
/// `/proc/self/fd/2`).
fn own_stdio(meta: &std::fs::Metadata) -> Option<File> {
    use std::os::unix::fs::MetadataExt;
    let (out, err) = (io::stdout(), io::stderr());
    let found = [out.as_fd(), err.as_fd()].into_iter().find_map(|fd| {
        let f = File::from(fd.try_clone_to_owned().ok()?);
        let m = f.metadata().ok()?;
        (m.dev() == meta.dev() && m.ino() == meta.ino()).then_some(f)
    });
    found
}

/// Writes what `fill` writes to `path` and returns the bytes written: to a regular file (or a new one) through a
/// temporary file in the same directory (a unique name, removed on failure), so a reader never sees half of it and
/// two runs never share the temporary file; to a device, FIFO or this process's stdout by writing through it, so
/// `--json /dev/stdout` prints and `/dev/null` stays a device. A directory is refused; `existing` says what
/// becomes of a regular file already there, and a file made gets `mode`.
pub fn write_with(
    path: &Path,
    existing: Existing,
    mode: u32,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<u64, Error> {
    match output_kind(path)? {
        OutputKind::Stream => write_through(path, fill),
        OutputKind::File => write_replacing(path, existing, mode, fill),
    }
}

/// Writes `text` to `path` as [`write_with`] does, replacing a regular file there; a file made is 0644, since
/// results and baselines are shared with CI and teammates like any written file.
pub fn write_atomic(path: &Path, text: &[u8]) -> Result<(), Error> {
    write_with(path, Existing::Replace, 0o644, &mut |w| w.write_all(text)).map(|_| ())
}

fn write_through(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<u64, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io("write", path, e))?;
    let file = match own_stdio(&meta) {
        // Our own stdout: the same open file, so its offset and O_APPEND hold and what was printed stays before it.
        Some(f) => {
            let _ = io::stdout().flush();
            let _ = io::stderr().flush();
            Ok(f)
        }
        // No O_CREAT, no O_TRUNC: the node is written to, never made or replaced.
        None => std::fs::OpenOptions::new().write(true).open(path),
    };
    let mut w = Counted(file.map_err(|e| Error::io("write", path, e))?, 0);
    match fill(&mut w).and_then(|_| w.flush()) {
        // A reader that stopped reading (`| head`) is its own choice, as for a report on stdout.
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(Error::io("write", path, e)),
        _ => Ok(w.1),
    }
}

fn write_replacing(
    path: &Path,
    existing: Existing,
    mode: u32,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<u64, Error> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".rocmenv-")
        .tempfile_in(dir)
        .map_err(|e| Error::io("write", path, e))?;
    use std::os::unix::fs::PermissionsExt;
    let mut w = Counted(tmp.as_file(), 0);
    fill(&mut w)
        .and_then(|_| w.flush())
        .and_then(|_| {
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(mode))
        })
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| Error::io("write", path, e))?;
    let n = w.1;
    let persisted = match existing {
        Existing::Replace => tmp.persist(path).map(|_| ()),
        Existing::Refuse(exists) => match tmp.persist_noclobber(path) {
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => return Err(exists()),
            r => r.map(|_| ()),
        },
    };
    persisted.map_err(|e| Error::io("write", path, e.error))?;
    Ok(n)
}

/// A writer that counts the bytes it passed on.
struct Counted<W>(W, u64);

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.0.write(buf)?;
        self.1 += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Writes `page` to `path` as HTML, atomically.
pub fn write_page(path: &Path, page: &html::Page) -> Result<(), Error> {
    let text = html::render(page).map_err(|e| Error::Output(std::io::Error::other(e)))?;
    write_atomic(path, text.as_bytes())
}

/// Writes the HTML page of `sources` to `path`, atomically.
pub fn write_html(path: &Path, title: &str, sources: &[html::Source]) -> Result<(), Error> {
    write_page(path, &html::page(title, sources))
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};

    /// Issue 36: a FIFO is written through (a reader on it gets the text) and is still a FIFO afterwards.
    #[test]
    fn a_fifo_is_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mkfifoat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
        )
        .unwrap();
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        assert_eq!(output_kind(&fifo).unwrap(), OutputKind::Stream);
        write_atomic(&fifo, b"{\"ok\": true}\n").unwrap();
        assert_eq!(reader.join().unwrap(), b"{\"ok\": true}\n");
        let t = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(t.is_fifo(), "the FIFO was replaced: {t:?}");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "a temporary file was left: {names:?}");
    }

    /// Issue 36: a directory, or a link to one, is refused with exit 2 and left as it was.
    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        for p in [&out, &link] {
            let e = write_atomic(p, b"x").unwrap_err();
            assert_eq!(e.exit_code(), crate::error::EXIT_USAGE, "{e}");
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("{} is a directory", p.display()))
                    && msg.contains("name a file"),
                "{msg}"
            );
        }
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    /// A regular file is replaced by a new one (a new inode: a reader holding the old one never sees half of the
    /// new), made 0644, and no temporary file stays; `Existing::Refuse` keeps it and returns the caller's error; a
    /// new file gets the mode asked for.
    #[test]
    fn a_regular_file_is_replaced_atomically() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        std::fs::write(&p, "old").unwrap();
        let before = std::fs::metadata(&p).unwrap().ino();
        assert_eq!(output_kind(&p).unwrap(), OutputKind::File);
        write_atomic(&p, b"new").unwrap();
        let m = std::fs::metadata(&p).unwrap();
        assert_ne!(m.ino(), before, "written in place, not replaced");
        assert_eq!(m.permissions().mode() & 0o777, 0o644);
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let refuse = || Error::invalid("output", "exists");
        let e = write_with(&p, Existing::Refuse(&refuse), 0o644, &mut |w| {
            w.write_all(b"x")
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "output: exists");
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let fresh = dir.path().join("fresh");
        let n = write_with(&fresh, Existing::Refuse(&refuse), 0o600, &mut |w| {
            w.write_all(b"12345")
        })
        .unwrap();
        assert_eq!((n, std::fs::read(&fresh).unwrap()), (5, b"12345".to_vec()));
        let mode = std::fs::metadata(&fresh).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the mode asked for");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}
