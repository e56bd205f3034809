//! `--sysroot FILE.tar.zst`: a support bundle (`rocmenv collect`) unpacked into a temporary directory and read as a
//! host tree. A bundle comes from someone else, so it is unpacked as carefully as a tree is read: every entry is
//! created through the tree's in-root resolver (nothing lands outside it, whatever links came before), only
//! directories, regular files and links are taken, relative links may not climb out of the tree, and the sizes are
//! bounded. The directory is removed with the last `HostRoot` that reads it, also when reading fails.

use super::root::HostRoot;
use crate::error::Error;
use pathrs::flags::OpenFlags;
use pathrs::InodeType;
use std::fs::{self, Permissions};
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The most bytes a bundle may unpack to, tar headers included: a host's bundle is a few MiB.
pub const MAX_UNPACKED: u64 = 256 << 20;
/// The most bytes one file may hold: `/proc/cpuinfo` is read up to 16 MiB, a tool's output up to 4 MiB.
pub const MAX_FILE: u64 = 32 << 20;
/// The most entries a bundle may hold.
pub const MAX_ENTRIES: usize = 100_000;

/// A reader that fails once more than `left` bytes came through: a zstd bomb stops at the cap.
struct Capped<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n as u64 > self.left {
            return Err(io::Error::other(format!(
                "unpacks to more than {} MiB: not read",
                MAX_UNPACKED >> 20
            )));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// True when `path` names a file, which `--sysroot` reads as a bundle (a directory is a tree).
pub fn is_bundle(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Unpacks the bundle at `path` into a new temporary directory and opens it as a host tree shown as `path`.
pub fn open(path: &Path) -> Result<HostRoot, Error> {
    // A corrupt archive's error can quote its bytes (tar's "numeric field was not a number: …"): one line, escaped.
    let bad = |why: String| Error::Sysroot {
        path: path.to_path_buf(),
        why: crate::text::one_line(&why),
    };
    let file = fs::File::open(path).map_err(|e| bad(format!("cannot be read: {e}")))?;
    let dir = tempfile::Builder::new()
        .prefix("rocmenv-bundle-")
        .tempdir()
        .map_err(|e| bad(format!("cannot be unpacked: no temporary directory: {e}")))?;
    let tree =
        pathrs::Root::open(dir.path()).map_err(|e| bad(format!("cannot be unpacked: {e}")))?;
    // On an error `dir` is dropped here, and the half-unpacked tree with it.
    unpack(file, &tree).map_err(bad)?;
    let root = HostRoot::sysroot(dir.path())?;
    Ok(root.holding(dir, path))
}

/// The entry's path as a relative path of plain names; `None` for the tree's root itself.
fn entry_path(raw: &Path) -> Result<Option<PathBuf>, String> {
    let shown = raw.display();
    let mut rel = PathBuf::new();
    for c in raw.components() {
        match c {
            Component::Normal(n) => rel.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(format!(
                    "entry `{shown}` climbs out with `..`: not unpacked"
                ))
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!("entry `{shown}` is an absolute path: not unpacked"))
            }
        }
    }
    Ok((!rel.as_os_str().is_empty()).then_some(rel))
}

/// Refuses a relative link whose target climbs above the tree from where the link is. Absolute targets resolve
/// inside the tree, as in a chroot, when the tree is read.
fn link_stays_inside(rel: &Path, target: &Path) -> Result<(), String> {
    if target.is_absolute() {
        return Ok(());
    }
    let mut depth = rel.components().count() as i64 - 1;
    for c in target.components() {
        match c {
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        if depth < 0 {
            return Err(format!(
                "link `{}` -> `{}` leads out of the tree: not unpacked",
                rel.display(),
                target.display()
            ));
        }
    }
    Ok(())
}

fn unpack(file: fs::File, tree: &pathrs::Root) -> Result<(), String> {
    let decoder =
        zstd::stream::read::Decoder::new(file).map_err(|e| format!("cannot be read: {e}"))?;
    let mut archive = tar::Archive::new(Capped {
        inner: decoder,
        left: MAX_UNPACKED,
    });
    let not_a_bundle = |e: io::Error| {
        format!("is not a directory, nor a bundle as rocmenv collect writes (a zstd-compressed tar): {e}")
    };
    let entries = archive.entries().map_err(not_a_bundle)?;
    for (n, entry) in entries.enumerate() {
        if n == MAX_ENTRIES {
            return Err(format!("has more than {MAX_ENTRIES} entries: not unpacked"));
        }
        let mut entry = entry.map_err(not_a_bundle)?;
        let raw = entry.path().map_err(not_a_bundle)?.into_owned();
        let Some(rel) = entry_path(&raw)? else {
            continue;
        };
        let shown = rel.display().to_string();
        let io_err = |e: &dyn std::fmt::Display| format!("entry `{shown}` cannot be unpacked: {e}");
        let mkparent = |rel: &Path| -> Result<(), String> {
            match rel.parent().filter(|p| !p.as_os_str().is_empty()) {
                Some(p) => tree
                    .mkdir_all(p, &Permissions::from_mode(0o755))
                    .map(drop)
                    .map_err(|e| io_err(&e)),
                None => Ok(()),
            }
        };
        let kind = entry.header().entry_type();
        match kind {
            tar::EntryType::Directory => {
                tree.mkdir_all(&rel, &Permissions::from_mode(0o755))
                    .map_err(|e| io_err(&e))?;
            }
            tar::EntryType::Regular | tar::EntryType::Continuous => {
                let size = entry.header().size().map_err(not_a_bundle)?;
                if size > MAX_FILE {
                    return Err(format!(
                        "entry `{shown}` is larger than {} MiB ({size} bytes): not unpacked",
                        MAX_FILE >> 20
                    ));
                }
                let exec = entry.header().mode().unwrap_or(0o644) & 0o111 != 0;
                mkparent(&rel)?;
                let mut f = tree
                    .create_file(
                        &rel,
                        OpenFlags::O_WRONLY | OpenFlags::O_CREAT | OpenFlags::O_EXCL,
                        &Permissions::from_mode(if exec { 0o755 } else { 0o644 }),
                    )
                    .map_err(|e| io_err(&e))?;
                io::copy(&mut (&mut entry).take(MAX_FILE), &mut f).map_err(|e| io_err(&e))?;
            }
            tar::EntryType::Symlink => {
                let target = entry
                    .link_name()
                    .map_err(not_a_bundle)?
                    .ok_or_else(|| format!("link `{shown}` has no target: not unpacked"))?
                    .into_owned();
                link_stays_inside(&rel, &target)?;
                mkparent(&rel)?;
                tree.create(&rel, &InodeType::Symlink(target))
                    .map_err(|e| io_err(&e))?;
            }
            tar::EntryType::Fifo => {
                return Err(format!(
                    "entry `{shown}` is a named pipe (FIFO): not unpacked"
                ))
            }
            tar::EntryType::Char | tar::EntryType::Block => {
                return Err(format!("entry `{shown}` is a device node: not unpacked"))
            }
            tar::EntryType::Link => {
                return Err(format!("entry `{shown}` is a hard link: not unpacked"))
            }
            other => {
                return Err(format!(
                "entry `{shown}` is of type {other:?}, not a file, directory or link: not unpacked"
            ))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_past_the_cap_is_an_error() {
        let mut c = Capped {
            inner: &[0u8; 100][..],
            left: 60,
        };
        let mut buf = Vec::new();
        let e = c.read_to_end(&mut buf).unwrap_err();
        assert!(e.to_string().contains("unpacks to more than"), "{e}");
        let mut c = Capped {
            inner: &[0u8; 100][..],
            left: 100,
        };
        assert_eq!(c.read_to_end(&mut Vec::new()).unwrap(), 100);
    }

    #[test]
    fn entry_paths_stay_relative() {
        assert_eq!(
            entry_path(Path::new("./proc/version")).unwrap(),
            Some(PathBuf::from("proc/version"))
        );
        assert_eq!(entry_path(Path::new("./")).unwrap(), None);
        assert!(entry_path(Path::new("../x")).unwrap_err().contains("`..`"));
        assert!(entry_path(Path::new("a/../../x")).is_err());
        assert!(entry_path(Path::new("/etc/passwd"))
            .unwrap_err()
            .contains("absolute"));
    }

    #[test]
    fn relative_links_may_not_climb_out() {
        let ok = |l: &str, t: &str| link_stays_inside(Path::new(l), Path::new(t));
        assert!(ok(
            "sys/bus/pci/devices/0000:03:00.0",
            "../../../devices/pci0000:00/0000:03:00.0"
        )
        .is_ok());
        assert!(ok("opt/rocm", "/etc/alternatives/rocm").is_ok());
        assert!(ok("opt/rocm", "rocm-6.2.0").is_ok());
        assert!(ok("etc/os-release", "../../etc/shadow").is_err());
        assert!(ok("x", "..").is_err());
    }
}
