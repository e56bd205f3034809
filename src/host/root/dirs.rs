//! Directory handles, reused for the names in them.
//!
//! A probe reads a dozen attributes of each GPU's sysfs directory. Resolved whole, each read walks the full path
//! (`openat2` from the root), checks the handle's type, and reopens it through `/proc/self/fd`: six system calls,
//! three of them path lookups. A directory's handle is kept from its first use, and each name in it costs one
//! single-name `statat` (the type and size, known before anything is opened: a FIFO, socket or device node is still
//! never opened), one `openat` of that name with `O_NOFOLLOW`, one `read` and `close`; a name that is not there, one
//! `statat`. Even a directory used once comes out cheaper than the whole path (2026-12-07, this VM: 4.6 against
//! 5.6 µs a file; the reopen through procfs is the dearest step). A directory that is not there answers for every
//! name in it (the firmware versions of a GPU whose driver exposes none).
//!
//! The handle is the directory the root's resolver found (inside the tree for a sysroot), so a single name looked up
//! in it is the path the resolver would have resolved, except where that name is a link: links, and every other
//! case this module does not answer (`..`, an error other than "not there"), take the whole-path route, which says
//! what it always said. Between the `statat` and the `openat` the name could only become a device node by someone
//! with CAP_MKNOD (root); a FIFO it could become reads nothing, without blocking (`O_NONBLOCK`).
//!
//! Only the kernel's own trees (`/sys`, `/proc`, a tree's copies of them) keep handles: nothing in a run rewrites
//! them (a directory that is not there stays so), where `fix --apply` rewrites files in `/etc` that a later read in
//! the same run must see as they are then.
//! A live host's `/proc/self` (this process) and `/proc/PID` are left out.

use super::open::{errno, Resolver};
use super::{not_a_file_type, read_capped, ReadError};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::HashMap;
use std::fs;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

/// The most directories one root keeps handles for (an 8-GPU host uses about 60: each PCI device's, each GPU's
/// `fw_version`, `ras` and DRM card, each kfd topology node's); past it, whole paths.
const MAX_DIRS: usize = 256;

/// What is known of a directory.
#[derive(Debug)]
enum Slot {
    /// Its handle.
    Open(Arc<OwnedFd>),
    /// Not there: nor is anything in it, for the rest of the run.
    Missing,
    /// Its handle could not be opened for another reason (not a directory, a link the resolver refused): whole
    /// paths from now on.
    Unusable,
}

/// A directory's handle, or the news that it is not there.
enum Handle {
    Open(Arc<OwnedFd>),
    Missing,
}

/// The directory handles of one root, shared by its clones.
#[derive(Debug, Default)]
pub(super) struct Dirs {
    slots: Mutex<HashMap<String, Slot>>,
}

/// What a read through a directory handle came to.
pub(super) enum Through<T> {
    /// The answer, as the whole-path route gives it.
    Done(Result<T, ReadError>),
    /// A case this module leaves to the whole-path route.
    Whole,
}

/// `/sys/...` and `/proc/...`, without a live host's `/proc/self` or `/proc/PID`.
fn keeps_handles(dir: &str) -> bool {
    if dir.starts_with("/sys/") {
        return true;
    }
    let Some(rest) = dir.strip_prefix("/proc/") else {
        return false;
    };
    let first = rest.split('/').next().unwrap_or("");
    !(first == "self" || first == "thread-self" || first.bytes().all(|b| b.is_ascii_digit()))
}

/// The directory and the name of a path, when the name is a plain one.
fn split(host_path: &str) -> Option<(&str, &str)> {
    let (dir, name) = host_path.rsplit_once('/')?;
    (!dir.is_empty() && !name.is_empty() && name != "." && name != "..").then_some((dir, name))
}

impl Dirs {
    /// The handle of `dir`, opened on its first use; `None` for directories outside the kernel's trees, past
    /// `MAX_DIRS`, and for pathrs's emulated resolver (which has no single-name lookup of its own).
    fn handle(&self, resolver: &Resolver, dir: &str) -> Option<Handle> {
        if matches!(resolver, Resolver::Emulated(_)) || !keeps_handles(dir) {
            return None;
        }
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        match slots.get(dir) {
            Some(Slot::Open(fd)) => return Some(Handle::Open(fd.clone())),
            Some(Slot::Missing) => return Some(Handle::Missing),
            Some(Slot::Unusable) => return None,
            None if slots.len() >= MAX_DIRS => return None,
            None => {}
        }
        let (slot, handle) = match Self::open_in_parent(&slots, resolver, dir) {
            Ok(fd) => {
                let fd = Arc::new(fd);
                (Slot::Open(fd.clone()), Some(Handle::Open(fd)))
            }
            Err(e) if e.is_missing() => (Slot::Missing, Some(Handle::Missing)),
            Err(_) => (Slot::Unusable, None),
        };
        slots.insert(dir.to_string(), slot);
        handle
    }

    /// `dir` opened as one name in its parent's handle when that is kept (`fw_version` in a GPU's directory: one
    /// name looked up, not the whole path); not there when its parent is not; else, and where the name is a link,
    /// as the resolver opens it.
    fn open_in_parent(
        slots: &HashMap<String, Slot>,
        resolver: &Resolver,
        dir: &str,
    ) -> Result<OwnedFd, ReadError> {
        let Some((parent, name)) = split(dir) else {
            return resolver.dir_handle(dir);
        };
        match slots.get(parent) {
            Some(Slot::Open(fd)) => {
                let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                match rustix::fs::openat(&**fd, name, flags, Mode::empty()) {
                    Ok(d) => Ok(d),
                    Err(e @ Errno::NOENT) => Err(errno(dir, e)),
                    // A link (ENOTDIR with O_NOFOLLOW), or another error: the resolver says.
                    Err(_) => resolver.dir_handle(dir),
                }
            }
            Some(Slot::Missing) => Err(errno(dir, Errno::NOENT)),
            _ => resolver.dir_handle(dir),
        }
    }

    /// The open handle of the directory of `host_path` and the name in it; `Err` with the answer where the directory
    /// is not there; `Ok(None)`: the whole-path route.
    fn name_in<'p>(
        &self,
        resolver: &Resolver,
        host_path: &'p str,
    ) -> Result<Option<(Arc<OwnedFd>, &'p str)>, ReadError> {
        let Some((dir, name)) = split(host_path) else {
            return Ok(None);
        };
        match self.handle(resolver, dir) {
            Some(Handle::Open(fd)) => Ok(Some((fd, name))),
            Some(Handle::Missing) => Err(errno(host_path, Errno::NOENT)),
            None => Ok(None),
        }
    }

    /// Reads at most `cap` bytes of the regular file at `host_path` through its directory's handle.
    pub(super) fn read(
        &self,
        resolver: &Resolver,
        host_path: &str,
        cap: u64,
    ) -> Through<(Vec<u8>, bool)> {
        let (fd, name) = match self.name_in(resolver, host_path) {
            Ok(Some(found)) => found,
            Ok(None) => return Through::Whole,
            Err(missing) => return Through::Done(Err(missing)),
        };
        let st = match rustix::fs::statat(&*fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(e @ (Errno::NOENT | Errno::NOTDIR)) => {
                return Through::Done(Err(errno(host_path, e)))
            }
            Err(_) => return Through::Whole,
        };
        let kind = FileType::from_raw_mode(st.st_mode);
        if kind == FileType::Symlink {
            return Through::Whole;
        }
        if let Some(why) = not_a_file_type(kind) {
            return Through::Done(Err(ReadError::new(host_path, why)));
        }
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let file = match rustix::fs::openat(&*fd, name, flags, Mode::empty()) {
            Ok(f) => fs::File::from(f),
            Err(_) => return Through::Whole,
        };
        // The size `statat` gave: the name was a regular file then, and only root could have made it a device
        // node since (a FIFO it could have become reads nothing, without blocking, through O_NONBLOCK).
        let size = u64::try_from(st.st_size).unwrap_or(0);
        let read = read_capped(&file, cap, size).map_err(|e| ReadError::io(host_path, &e));
        Through::Done(read)
    }

    /// Whether something that is not a link is at `host_path` (a link is the whole-path route's to follow).
    pub(super) fn exists(&self, resolver: &Resolver, host_path: &str) -> Through<bool> {
        let (fd, name) = match self.name_in(resolver, host_path) {
            Ok(Some(found)) => found,
            Ok(None) => return Through::Whole,
            Err(missing) => return Through::Done(Err(missing)),
        };
        match rustix::fs::statat(&*fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::Symlink => {
                Through::Done(Ok(true))
            }
            Err(Errno::NOENT | Errno::NOTDIR) => Through::Done(Ok(false)),
            _ => Through::Whole,
        }
    }

    /// The directory at `host_path`, opened for listing through its parent's handle; not a link.
    pub(super) fn open_dir(&self, resolver: &Resolver, host_path: &str) -> Through<OwnedFd> {
        let (fd, name) = match self.name_in(resolver, host_path) {
            Ok(Some(found)) => found,
            Ok(None) => return Through::Whole,
            Err(missing) => return Through::Done(Err(missing)),
        };
        let flags = OFlags::RDONLY
            | OFlags::DIRECTORY
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        match rustix::fs::openat(&*fd, name, flags, Mode::empty()) {
            Ok(d) => Through::Done(Ok(d)),
            Err(e @ Errno::NOENT) => Through::Done(Err(errno(host_path, e))),
            // A link, or not a directory: the whole-path route says which.
            Err(_) => Through::Whole,
        }
    }

    /// The target of the link at `host_path`, as written.
    pub(super) fn readlink(
        &self,
        resolver: &Resolver,
        host_path: &str,
    ) -> Through<std::path::PathBuf> {
        let (fd, name) = match self.name_in(resolver, host_path) {
            Ok(Some(found)) => found,
            Ok(None) => return Through::Whole,
            Err(missing) => return Through::Done(Err(missing)),
        };
        use std::os::unix::ffi::OsStringExt;
        match rustix::fs::readlinkat(&*fd, name, Vec::new()) {
            Ok(t) => Through::Done(Ok(std::ffi::OsString::from_vec(t.into_bytes()).into())),
            // Not a link (EINVAL) or not there: as readlink(2) says it, and as the whole-path route does.
            Err(e @ (Errno::INVAL | Errno::NOENT)) => Through::Done(Err(errno(host_path, e))),
            Err(_) => Through::Whole,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::HostRoot;
    use super::*;
    use std::path::Path;

    fn write(root: &Path, path: &str, text: &str) {
        let p = root.join(path.trim_start_matches('/'));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    fn slot(root: &HostRoot, dir: &str) -> &'static str {
        match root.dirs.slots.lock().unwrap().get(dir) {
            None => "none",
            Some(Slot::Open(_)) => "open",
            Some(Slot::Missing) => "missing",
            Some(Slot::Unusable) => "unusable",
        }
    }

    /// Through a kept handle a tree reads as through whole paths: files, links that leave the directory (resolved
    /// inside the tree), a FIFO never opened, names and directories that are not there.
    #[test]
    fn a_kept_handle_reads_what_the_whole_path_reads() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        write(t, "/sys/d/a", "1\n");
        write(t, "/sys/d/b", "2\n");
        write(t, "/etc/secret", "inside the tree\n");
        std::os::unix::fs::symlink("/etc/secret", t.join("sys/d/out")).unwrap();
        std::os::unix::fs::symlink("../../../../../../../etc/secret", t.join("sys/d/up")).unwrap();
        let fifo = std::ffi::CString::new(t.join("sys/d/fifo").to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path in our temporary directory.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let root = HostRoot::sysroot(t).unwrap();
        assert_eq!(root.read_value("/sys/d/a").unwrap(), "1");
        assert_eq!(
            slot(&root, "/sys/d"),
            "open",
            "the first use keeps the handle"
        );
        assert_eq!(root.read_value("/sys/d/b").unwrap(), "2");
        assert_eq!(root.read_value("/sys/d/a").unwrap(), "1");
        assert_eq!(root.read_value("/sys/d/out").unwrap(), "inside the tree");
        assert_eq!(root.read_value("/sys/d/up").unwrap(), "inside the tree");
        assert_eq!(
            root.read_value("/sys/d/fifo").unwrap_err().to_string(),
            "/sys/d/fifo: is a named pipe (FIFO), not a file: not opened, a read could block"
        );
        assert!(root.read_value("/sys/d/none").unwrap_err().is_missing());
        assert!(
            root.exists("/sys/d/a") && root.exists("/sys/d/out") && !root.exists("/sys/d/none")
        );
        assert_eq!(root.link_name("/sys/d/out").unwrap(), "secret");
        assert!(root.link_name("/sys/d/a").is_err(), "not a link");
        assert_eq!(root.list("/sys/d").unwrap().len(), 5);
        // A directory that is not there answers for its names from then on.
        assert!(root.read_value("/sys/gone/x").unwrap_err().is_missing());
        assert_eq!(slot(&root, "/sys/gone"), "missing");
        assert!(root.read_value("/sys/gone/y").unwrap_err().is_missing());
        assert!(!root.exists("/sys/gone/x"));
    }

    /// A directory under a kept one is opened as one name in it; one that is a link is opened as the resolver
    /// opens it (inside the tree); one under a missing directory is missing without a lookup.
    #[test]
    fn a_directory_under_a_kept_one_is_opened_in_it() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        write(t, "/sys/d/a", "1\n");
        write(t, "/sys/d/sub/b", "2\n");
        write(t, "/etc/real/c", "3\n");
        std::os::unix::fs::symlink("../../etc/real", t.join("sys/d/link")).unwrap();
        let root = HostRoot::sysroot(t).unwrap();
        assert_eq!(root.read_value("/sys/d/a").unwrap(), "1");
        assert_eq!(root.read_value("/sys/d/sub/b").unwrap(), "2");
        assert_eq!(slot(&root, "/sys/d/sub"), "open");
        assert_eq!(root.read_value("/sys/d/link/c").unwrap(), "3");
        assert_eq!(slot(&root, "/sys/d/link"), "open");
        assert!(root.read_value("/sys/d/none/x").unwrap_err().is_missing());
        assert_eq!(slot(&root, "/sys/d/none"), "missing");
        assert!(root
            .read_value("/sys/d/none/deeper/x")
            .unwrap_err()
            .is_missing());
        assert_eq!(slot(&root, "/sys/d/none/deeper"), "missing");
    }

    /// Past `MAX_DIRS` directories the names are read by whole path, as before the cap.
    #[test]
    fn past_the_cap_names_are_read_by_whole_path() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        let n = MAX_DIRS + 20;
        for i in 0..n {
            write(
                t,
                &format!("/sys/bus/pci/devices/{i}/uevent"),
                &format!("ID={i}\n"),
            );
        }
        let root = HostRoot::sysroot(t).unwrap();
        for i in 0..n {
            let path = format!("/sys/bus/pci/devices/{i}/uevent");
            assert_eq!(root.read_value(&path).unwrap(), format!("ID={i}"));
        }
        let slots = root.dirs.slots.lock().unwrap();
        assert_eq!(slots.len(), MAX_DIRS);
        assert!(slots.values().all(|s| matches!(s, Slot::Open(_))));
    }

    /// `/etc` keeps no handle: `fix --apply` replaces files there, and a later read sees the new one.
    #[test]
    fn files_outside_the_kernels_trees_are_read_by_whole_path() {
        let tmp = tempfile::tempdir().unwrap();
        let t = tmp.path();
        write(t, "/etc/a", "old\n");
        let root = HostRoot::sysroot(t).unwrap();
        for _ in 0..3 {
            assert_eq!(root.read_value("/etc/a").unwrap(), "old");
        }
        assert_eq!(slot(&root, "/etc"), "none");
        fs::rename(t.join("etc"), t.join("etc.old")).unwrap();
        write(t, "/etc/a", "new\n");
        assert_eq!(root.read_value("/etc/a").unwrap(), "new");
    }

    #[test]
    fn only_the_kernels_trees_keep_handles() {
        assert!(keeps_handles("/sys/bus/pci/devices/0000:03:00.0"));
        assert!(keeps_handles("/proc/sys/kernel"));
        assert!(keeps_handles("/proc/driver/nvidia"));
        assert!(!keeps_handles("/proc/self"));
        assert!(!keeps_handles("/proc/self/fd"));
        assert!(!keeps_handles("/proc/thread-self"));
        assert!(!keeps_handles("/proc/1234/status"));
        assert!(!keeps_handles("/proc"));
        assert!(!keeps_handles("/etc"));
        assert!(!keeps_handles("/etc/modprobe.d"));
        assert!(!keeps_handles("/system"));
    }

    #[test]
    fn names_that_are_not_plain_take_the_whole_path() {
        assert_eq!(split("/sys/a/b"), Some(("/sys/a", "b")));
        assert_eq!(split("/sys/a/.."), None);
        assert_eq!(split("/sys/a/."), None);
        assert_eq!(split("/sys/a/"), None);
        assert_eq!(split("/top"), None);
        assert_eq!(split("relative"), None);
    }
}
