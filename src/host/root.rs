//! `HostRoot`: every probe reads through a root directory, `/` live or `--sysroot DIR`.
//!
//! A host tree comes from users and support bundles, so it is read as if chrooted into it: absolute symlinks and `..`
//! resolve inside the tree, never to the host running rocmenv. Nothing but a regular file is opened for reading (a
//! FIFO, socket or device node in place of `/proc/cpuinfo` would block or have side effects), and every read is
//! bounded. The live host (`/`) follows the same read rules; its links resolve as the kernel resolves them.

use std::fs;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod dirs;
mod open;
mod recording;
use dirs::{Dirs, Through};
use open::Resolver;
use recording::stat_seen;
pub use recording::{Asked, Recording, Seen};

/// The most bytes `read_text` takes: sysfs and procfs files are a few KiB, config files a few dozen.
pub const MAX_READ: u64 = 1 << 20;

/// The most bytes a one-line sysfs value may have (sysfs attributes are at most a page).
const MAX_VALUE: u64 = 64 << 10;

/// The most names `list` returns: `/dev` or `/sys/bus/pci/devices` hold hundreds, not a million.
const MAX_ENTRIES: usize = 65_536;

/// The directory a host is read from.
#[derive(Debug, Clone)]
pub struct HostRoot {
    root: PathBuf,
    /// How paths resolve: as the kernel does for the live host, inside the tree (opened once) for a sysroot.
    resolver: Arc<Resolver>,
    /// Handles of the `/sys` and `/proc` directories read through (src/host/root/dirs.rs).
    dirs: Arc<Dirs>,
    /// Opt-in: every object a read touched (`rocmenv collect` archives exactly these).
    recorder: Option<Arc<Mutex<Recording>>>,
    /// A bundle unpacked into a temporary directory, removed when the last clone of this root is dropped.
    _unpacked: Option<Arc<tempfile::TempDir>>,
}

/// A file that could not be read, with the path and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {why}")]
pub struct ReadError {
    /// The path as the host sees it (`/sys/...`).
    pub path: String,
    /// Why it could not be read.
    pub why: String,
}

/// The first part of a file, for files where a prefix is still useful (`/proc/cpuinfo`, `/etc/group`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// The text; bytes that are not UTF-8 become U+FFFD.
    pub text: String,
    /// True when the file was longer than the cap and `text` is only its beginning.
    pub truncated: bool,
    /// The offset of the first byte that is not UTF-8, when there is one.
    pub not_utf8_at: Option<usize>,
}

/// Said of a missing file; `is_missing` looks for it.
const MISSING: &str = "does not exist";

impl ReadError {
    /// True when the file does not exist (as opposed to unreadable).
    pub fn is_missing(&self) -> bool {
        self.why.starts_with(MISSING)
    }

    fn new(host_path: &str, why: impl Into<String>) -> Self {
        ReadError {
            path: host_path.to_string(),
            why: why.into(),
        }
    }

    /// An error number, in words a person can act on.
    fn from_errno(host_path: &str, errno: Option<i32>, fallback: &dyn std::fmt::Display) -> Self {
        let why = match errno {
            Some(libc::ENOENT) => MISSING.to_string(),
            Some(libc::ENOTDIR) => format!("{MISSING} (a part of the path is not a directory)"),
            Some(libc::EACCES) | Some(libc::EPERM) => "permission denied".to_string(),
            // The kernel gives up after 40 links, pathrs's fallback resolver after 128.
            Some(libc::ELOOP) => "is a symlink loop (or a chain of too many links)".to_string(),
            Some(libc::EXDEV) => "leads outside the host tree".to_string(),
            Some(n) => {
                let e = std::io::Error::from_raw_os_error(n).to_string();
                e.split(" (os error").next().unwrap_or(&e).to_string()
            }
            None => fallback.to_string(),
        };
        Self::new(host_path, why)
    }

    fn io(host_path: &str, e: &std::io::Error) -> Self {
        Self::from_errno(host_path, e.raw_os_error(), e)
    }

    fn pathrs(host_path: &str, e: &pathrs::error::Error) -> Self {
        let errno = match e.kind() {
            pathrs::error::ErrorKind::OsError(n) => n,
            pathrs::error::ErrorKind::SafetyViolation => Some(libc::EXDEV),
            _ => None,
        };
        Self::from_errno(host_path, errno, e)
    }
}

/// Why a file of this type is not opened for reading, or `None` for a regular file.
fn not_a_file_type(t: rustix::fs::FileType) -> Option<&'static str> {
    use rustix::fs::FileType as T;
    match t {
        T::RegularFile => None,
        T::Directory => Some("is a directory, not a file"),
        T::Fifo => Some("is a named pipe (FIFO), not a file: not opened, a read could block"),
        T::Socket => Some("is a socket, not a file: not opened"),
        T::CharacterDevice | T::BlockDevice => Some("is a device node, not a file: not opened"),
        _ => Some("is not a regular file: not opened"),
    }
}

/// `not_a_file_type` for a type std's metadata gave: one list of reasons for both.
fn not_a_file(t: fs::FileType) -> Option<&'static str> {
    use rustix::fs::FileType as T;
    not_a_file_type(if t.is_file() {
        T::RegularFile
    } else if t.is_dir() {
        T::Directory
    } else if t.is_fifo() {
        T::Fifo
    } else if t.is_socket() {
        T::Socket
    } else if t.is_char_device() {
        T::CharacterDevice
    } else if t.is_block_device() {
        T::BlockDevice
    } else {
        T::Unknown
    })
}

/// Reads at most `cap` bytes and says whether there was more. `size` is what the file's metadata says: on a disk a
/// file ends there, so a small file costs one read and no second read for its end; sysfs says a page and procfs 0,
/// and those are read to their end.
fn read_capped(f: impl Read, cap: u64, size: u64) -> std::io::Result<(Vec<u8>, bool)> {
    let mut buf = Vec::with_capacity((size.max(4095).min(cap) + 1) as usize);
    let mut f = f.take(cap + 1);
    if size > 0 && size <= cap {
        (&mut f).take(size).read_to_end(&mut buf)?;
        if buf.len() as u64 == size {
            return Ok((buf, false));
        }
    }
    f.read_to_end(&mut buf)?;
    let truncated = buf.len() as u64 > cap;
    buf.truncate(cap as usize);
    Ok((buf, truncated))
}

/// Strict UTF-8 with the offset of the first bad byte named.
fn utf8(host_path: &str, buf: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(buf).map_err(|e| {
        ReadError::new(
            host_path,
            format!(
                "is not UTF-8 text (bad byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn kib(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

impl HostRoot {
    /// The running host, `/`.
    pub fn live() -> Self {
        HostRoot {
            root: PathBuf::from("/"),
            resolver: Arc::new(Resolver::Live),
            dirs: Arc::default(),
            recorder: None,
            _unpacked: None,
        }
    }

    /// Keeps the temporary directory a bundle was unpacked into alive as long as this root.
    pub(crate) fn holding(mut self, dir: tempfile::TempDir, shown_as: &Path) -> Self {
        self._unpacked = Some(Arc::new(dir));
        self.root = shown_as.to_path_buf();
        self
    }

    /// A captured host tree or a mounted system. It must be a readable directory.
    pub fn sysroot(path: &Path) -> Result<Self, crate::error::Error> {
        let bad = |why: &str| crate::error::Error::Sysroot {
            path: path.to_path_buf(),
            why: why.to_string(),
        };
        match fs::metadata(path) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err(bad("is not a directory")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(bad(
                    "does not exist (give a directory that mirrors /, e.g. a captured host tree)",
                ))
            }
            Err(e) => return Err(bad(&format!("cannot be read: {e}"))),
        }
        fs::read_dir(path).map_err(|e| bad(&format!("cannot be listed: {e}")))?;
        // Every later path resolves as in a chroot: with openat2(RESOLVE_IN_ROOT) where the kernel has it (Linux
        // 5.6+), and with pathrs's O_PATH resolver where it does not (older kernels, seccomp profiles that refuse
        // openat2), so the same tree reads the same everywhere.
        let resolver = Resolver::tree(path).map_err(|why| bad(&why))?;
        Ok(HostRoot {
            root: path.to_path_buf(),
            resolver: Arc::new(resolver),
            dirs: Arc::default(),
            recorder: None,
            _unpacked: None,
        })
    }

    /// The files a host tree cannot lack, each as alternatives: a kernel release, an os-release and the PCI bus.
    pub const HOST_MARKERS: [&'static [&'static str]; 3] = [
        &["/proc/version", "/proc/sys/kernel/osrelease"],
        &["/etc/os-release", "/usr/lib/os-release"],
        &["/sys/bus/pci"],
    ];

    /// Refuses a tree that is not a host (an empty directory, random files, `/proc` itself), naming what is missing.
    /// Presence is enough: a marker that exists but cannot be read is the probes' to report.
    pub fn check_host_tree(&self) -> Result<(), crate::error::Error> {
        let missing: Vec<String> = Self::HOST_MARKERS
            .iter()
            .filter(|alts| {
                // Recorded: the alternative found, or every one when none is (not the ones tried before it, which
                // would put an empty `/proc/version` in a bundle that holds `/proc/sys/kernel/osrelease`).
                let found = alts.iter().find(|p| self.resolve(p, false).is_ok());
                match found {
                    Some(p) => self.record(Asked::Stat(p.to_string()), true, true, stat_seen),
                    None => alts.iter().for_each(|p| {
                        self.record(Asked::Stat(p.to_string()), false, true, stat_seen)
                    }),
                }
                found.is_none()
            })
            .map(|alts| alts.join(" or "))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        Err(crate::error::Error::Sysroot {
            path: self.root.clone(),
            why: format!(
                "is not a host tree: it has no {} (give a directory that mirrors /, e.g. a captured host tree)",
                missing.join(", no ")
            ),
        })
    }

    /// Drops the root of a process that is about to exit: an unpacked bundle is removed as usual, but the directory
    /// handles (about 60 on an 8-GPU host) are left for the exit to close, not closed one call at a time.
    pub fn end_of_process(self) {
        std::mem::forget(Arc::clone(&self.dirs));
    }

    /// True for the running host.
    pub fn is_live(&self) -> bool {
        matches!(*self.resolver, Resolver::Live)
    }

    /// The root directory, for display: read through the methods below, never by joining paths to it.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// An `O_PATH` handle on a host path: resolved inside the tree, or by the kernel on the live host.
    /// `follow`: whether a symlink in the last component is followed.
    fn resolve(&self, host_path: &str, follow: bool) -> Result<fs::File, ReadError> {
        self.resolver.resolve(host_path, follow)
    }

    /// Reads at most `cap` bytes of a regular file, and whether it held more.
    fn read_bytes(&self, host_path: &str, cap: u64) -> Result<(Vec<u8>, bool), ReadError> {
        let got = self.read_bytes_unrecorded(host_path, cap);
        self.record(Asked::Read(host_path.into(), cap), got.is_ok(), true, |m| {
            let (bytes, _) = got.as_ref().ok()?;
            Some(Seen::File {
                bytes: bytes.clone(),
                mode: m.mode() & 0o7777,
            })
        });
        got
    }

    fn read_bytes_unrecorded(
        &self,
        host_path: &str,
        cap: u64,
    ) -> Result<(Vec<u8>, bool), ReadError> {
        if let Through::Done(got) = self.dirs.read(&self.resolver, host_path, cap) {
            return got;
        }
        let handle = self.resolve(host_path, true)?;
        let meta = handle
            .metadata()
            .map_err(|e| ReadError::io(host_path, &e))?;
        if let Some(why) = not_a_file(meta.file_type()) {
            return Err(ReadError::new(host_path, why));
        }
        // Reopened through the handle, not the path, so the file read is the one whose type was checked;
        // `O_NONBLOCK` as well, should a FIFO get there anyway.
        use rustix::fs::OFlags;
        let f = open::reopen(host_path, handle.as_fd(), OFlags::RDONLY | OFlags::NONBLOCK)?;
        drop(handle);
        read_capped(f, cap, meta.len()).map_err(|e| ReadError::io(host_path, &e))
    }

    /// Reads a text file of at most 1 MiB. A longer file, or one that is not UTF-8, is an error naming the path:
    /// what the probes parse is short, and half a file parsed would be a wrong answer.
    pub fn read_text(&self, host_path: &str) -> Result<String, ReadError> {
        let (buf, truncated) = self.read_bytes(host_path, MAX_READ)?;
        if truncated {
            return Err(ReadError::new(
                host_path,
                format!("is larger than {}: not read", kib(MAX_READ)),
            ));
        }
        utf8(host_path, buf)
    }

    /// The first `cap` bytes of a file, for files whose beginning is still useful. Bytes that are not UTF-8 become
    /// U+FFFD (user names in `/etc/passwd` may be Latin-1); `truncated` says the file went on.
    pub fn read_head(&self, host_path: &str, cap: u64) -> Result<Head, ReadError> {
        let (buf, truncated) = self.read_bytes(host_path, cap)?;
        let not_utf8_at = match std::str::from_utf8(&buf) {
            Ok(_) => None,
            // A character cut by the cap is not a bad byte.
            Err(e) if truncated && e.error_len().is_none() => None,
            Err(e) => Some(e.valid_up_to()),
        };
        Ok(Head {
            text: String::from_utf8_lossy(&buf).into_owned(),
            truncated,
            not_utf8_at,
        })
    }

    /// The bytes of a small binary file (an EFI variable), at most `cap`; a longer file is an error naming the path.
    pub fn read_binary(&self, host_path: &str, cap: u64) -> Result<Vec<u8>, ReadError> {
        let (buf, truncated) = self.read_bytes(host_path, cap)?;
        if truncated {
            return Err(ReadError::new(
                host_path,
                format!("is longer than {cap} bytes: not read"),
            ));
        }
        Ok(buf)
    }

    /// Reads a one-line file and trims it; an empty file is an error.
    pub fn read_value(&self, host_path: &str) -> Result<String, ReadError> {
        let (buf, truncated) = self.read_bytes(host_path, MAX_VALUE)?;
        let t = utf8(host_path, buf)?;
        let v = t.trim();
        if v.is_empty() {
            return Err(ReadError::new(host_path, "is empty"));
        }
        if truncated || v.len() > 4096 {
            return Err(ReadError::new(
                host_path,
                "is far longer than a sysfs value",
            ));
        }
        Ok(v.to_string())
    }

    /// The last component of a symlink's target (sysfs links end in a BDF or a driver name). The link is read, not
    /// followed, so a relative sysfs link works whatever it points at.
    pub fn link_name(&self, host_path: &str) -> Result<String, ReadError> {
        let target = self.readlink(host_path);
        self.record(Asked::Link(host_path.into()), target.is_ok(), false, |_| {
            Some(Seen::Link {
                target: target.as_ref().ok()?.clone(),
            })
        });
        target?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| ReadError::new(host_path, "is a link with no name at its end"))
    }

    /// The names along a symlink's target, as written (`../../../devices/pci0000:00/0000:00:01.1/0000:03:00.0` →
    /// `["..", "..", "..", "devices", …]`): where a sysfs device sits, and so which bridges are above it. Read, not
    /// followed, and recorded as `link_name` records it.
    pub fn link_components(&self, host_path: &str) -> Result<Vec<String>, ReadError> {
        let target = self.readlink(host_path);
        self.record(Asked::Link(host_path.into()), target.is_ok(), false, |_| {
            Some(Seen::Link {
                target: target.as_ref().ok()?.clone(),
            })
        });
        Ok(target?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect())
    }

    /// The names in a directory, sorted; names that are not UTF-8 are skipped.
    pub fn list(&self, host_path: &str) -> Result<Vec<String>, ReadError> {
        let got = self.list_unrecorded(host_path);
        self.record(Asked::List(host_path.into()), got.is_ok(), true, |_| {
            Some(Seen::Dir)
        });
        got
    }

    fn list_unrecorded(&self, host_path: &str) -> Result<Vec<String>, ReadError> {
        let dir = match self.dirs.open_dir(&self.resolver, host_path) {
            Through::Done(dir) => dir?,
            Through::Whole => self.resolver.open_dir(host_path)?,
        };
        let entries = rustix::fs::Dir::new(dir).map_err(|e| ReadError::io(host_path, &e.into()))?;
        let mut names = Vec::new();
        for entry in entries {
            let Ok(entry) = entry else { continue };
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name == "." || name == ".." {
                continue;
            }
            if names.len() == MAX_ENTRIES {
                return Err(ReadError::new(
                    host_path,
                    format!("has more than {MAX_ENTRIES} entries: not listed"),
                ));
            }
            names.push(name.to_string());
        }
        names.sort();
        Ok(names)
    }

    /// True when something exists at the path (a dangling symlink does not count).
    pub fn exists(&self, host_path: &str) -> bool {
        let found = match self.dirs.exists(&self.resolver, host_path) {
            Through::Done(found) => found.unwrap_or(false),
            Through::Whole => self.resolve(host_path, true).is_ok(),
        };
        self.record(Asked::Stat(host_path.into()), found, true, stat_seen);
        found
    }

    /// True when the path is a directory (following links).
    pub fn is_dir(&self, host_path: &str) -> bool {
        self.metadata(host_path).is_ok_and(|m| m.is_dir())
    }

    /// Metadata of the path, following links.
    pub fn metadata(&self, host_path: &str) -> Result<fs::Metadata, ReadError> {
        let got = self
            .resolve(host_path, true)
            .and_then(|h| h.metadata().map_err(|e| ReadError::io(host_path, &e)));
        self.record(Asked::Stat(host_path.into()), got.is_ok(), true, stat_seen);
        got
    }

    /// The target of a link, as written.
    fn readlink(&self, host_path: &str) -> Result<PathBuf, ReadError> {
        match self.dirs.readlink(&self.resolver, host_path) {
            Through::Done(target) => target,
            Through::Whole => self.resolver.readlink(host_path),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errnos_become_words_a_person_can_act_on() {
        let e = |n| ReadError::from_errno("/etc/os-release", Some(n), &"x").why;
        // Tests run as root, so permission denied is checked here, through the seam every read error goes through.
        assert_eq!(e(libc::EACCES), "permission denied");
        assert_eq!(e(libc::EPERM), "permission denied");
        assert!(e(libc::ELOOP).starts_with("is a symlink loop"));
        assert!(ReadError::from_errno("/x", Some(libc::ENOENT), &"x").is_missing());
        assert!(ReadError::from_errno("/x", Some(libc::ENOTDIR), &"x").is_missing());
        assert!(!ReadError::from_errno("/x", Some(libc::EACCES), &"x").is_missing());
        assert_eq!(e(libc::EIO), "Input/output error");
        assert_eq!(
            ReadError::from_errno("/x", None, &"pathrs said so").why,
            "pathrs said so"
        );
    }

    #[test]
    fn reads_stop_at_the_cap_and_say_so() {
        let data = vec![b'a'; 100];
        assert_eq!(
            read_capped(&data[..], 100, 100).unwrap(),
            (data.clone(), false)
        );
        let (head, cut) = read_capped(&data[..], 10, 100).unwrap();
        assert_eq!((head.len(), cut), (10, true));
        // Sizes that are not the length (sysfs says 4096, procfs 0) still read everything there is, up to the cap;
        // a size below the length is where a file on a disk ends.
        for size in [0, 4096, 50] {
            let (got, cut) = read_capped(&data[..], 1000, size).unwrap();
            assert_eq!((got.len(), cut), (if size == 50 { 50 } else { 100 }, false));
            let (got, cut) = read_capped(&data[..], 60, size).unwrap();
            assert_eq!(
                (got.len(), cut),
                (if size == 50 { 50 } else { 60 }, size != 50)
            );
        }
    }

    #[test]
    fn bad_utf8_names_the_offset() {
        let e = utf8("/etc/os-release", b"ID=\xffubuntu".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/etc/os-release: is not UTF-8 text (bad byte at offset 3)"
        );
    }

    #[test]
    fn only_regular_files_are_opened() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a NUL-terminated path we own.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let t = |p: &Path| not_a_file(fs::metadata(p).unwrap().file_type());
        assert!(t(&fifo).unwrap().contains("FIFO"));
        assert!(t(d.path()).unwrap().contains("directory"));
        assert!(t(Path::new("/dev/null")).unwrap().contains("device node"));
        fs::write(d.path().join("f"), "x").unwrap();
        assert_eq!(t(&d.path().join("f")), None);
    }

    #[test]
    fn the_live_host_reads_regular_files_and_refuses_devices() {
        let root = HostRoot::live();
        let e = root.read_text("/dev/zero").unwrap_err();
        assert!(e.why.contains("device node"), "{e}");
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("big");
        fs::File::create(&p).unwrap().set_len(3 * MAX_READ).unwrap();
        let p = p.to_str().unwrap();
        assert!(root
            .read_text(p)
            .unwrap_err()
            .why
            .contains("larger than 1 MiB"));
        let h = root.read_head(p, 4096).unwrap();
        assert_eq!(
            (h.text.len(), h.truncated, h.not_utf8_at),
            (4096, true, None)
        );
        fs::write(p, b"ok\n\xff\xfe\n").unwrap();
        let h = root.read_head(p, 4096).unwrap();
        assert_eq!(
            (h.text.as_str(), h.truncated, h.not_utf8_at),
            ("ok\n\u{fffd}\u{fffd}\n", false, Some(3))
        );
    }
}
