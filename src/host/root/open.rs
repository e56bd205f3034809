//! How a root's paths become file descriptors, at one resolution each.
//!
//! A tree is resolved by the kernel as in a chroot: one `openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)` per path
//! from the tree's directory, opened once. Where the kernel has no `openat2` (before 5.6, or a seccomp profile that
//! refuses it; found once, when the tree is opened) pathrs's own resolver does the same work at a higher price. The
//! live host resolves as the kernel resolves, so `/proc/self` and the links in `/proc` and `/sys` work as they do for
//! any program. A handle is reopened for reading through `/proc/self/fd`, so the file read is the one whose type was
//! checked.

use super::ReadError;
use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsString;
use std::fs;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// How a root resolves its paths.
#[derive(Debug)]
pub(super) enum Resolver {
    /// The running host: paths resolve as the kernel resolves them.
    Live,
    /// A tree, resolved by `openat2` inside its directory (an `O_PATH` descriptor opened once).
    InRoot(OwnedFd),
    /// A tree on a kernel without `openat2`: pathrs's emulated resolver.
    Emulated(pathrs::Root),
}

/// Every resolution inside a tree: `..` and absolute links stay in it, and no `/proc` magic link is followed.
const IN_ROOT: ResolveFlags = ResolveFlags::IN_ROOT.union(ResolveFlags::NO_MAGICLINKS);

/// `openat2` answers EAGAIN when a rename or mount raced the lookup anywhere on the system; pathrs retries as often.
const RETRIES: usize = 128;

impl Resolver {
    /// Opens a tree's directory, and finds out (once) whether the kernel resolves inside it with `openat2`.
    pub(super) fn tree(path: &Path) -> Result<Self, String> {
        let dir = rustix::fs::open(
            path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| format!("cannot be opened: {}", std::io::Error::from(e)))?;
        // The trivial lookup of the tree itself fails only where openat2 is missing or refused (ENOSYS, or EPERM
        // from an older seccomp profile): then every path goes through pathrs's resolver instead.
        match openat2(dir.as_fd(), "/", OFlags::PATH | OFlags::DIRECTORY, IN_ROOT) {
            Ok(_) => Ok(Resolver::InRoot(dir)),
            Err(_) => Ok(Resolver::Emulated(pathrs::Root::from_fd(dir))),
        }
    }

    /// An `O_PATH` handle on a host path. `follow`: whether a symlink in the last component is followed.
    pub(super) fn resolve(&self, host_path: &str, follow: bool) -> Result<fs::File, ReadError> {
        let nofollow = if follow {
            OFlags::empty()
        } else {
            OFlags::NOFOLLOW
        };
        let fd = match self {
            Resolver::Live => rustix::fs::open(
                host_path,
                OFlags::PATH | OFlags::CLOEXEC | nofollow,
                Mode::empty(),
            )
            .map_err(|e| errno(host_path, e))?,
            Resolver::InRoot(dir) => {
                openat2(dir.as_fd(), host_path, OFlags::PATH | nofollow, IN_ROOT)
                    .map_err(|e| errno(host_path, e))?
            }
            Resolver::Emulated(tree) => if follow {
                tree.resolve(host_path)
            } else {
                tree.resolve_nofollow(host_path)
            }
            .map_err(|e| ReadError::pathrs(host_path, &e))?
            .into(),
        };
        Ok(fs::File::from(fd))
    }

    /// An `O_PATH` handle on the last component of a path whose parents are known to hold no link (a recording root
    /// walks paths one component at a time): a link on the way is refused, not followed.
    pub(super) fn resolve_link_free(&self, host_path: &str) -> Result<fs::File, ReadError> {
        match self {
            Resolver::InRoot(dir) => openat2(
                dir.as_fd(),
                host_path,
                OFlags::PATH | OFlags::NOFOLLOW,
                IN_ROOT | ResolveFlags::NO_SYMLINKS,
            )
            .map(fs::File::from)
            .map_err(|e| errno(host_path, e)),
            _ => self.resolve(host_path, false),
        }
    }

    /// A directory opened for listing. A directory has no side effect when opened, so a tree's is opened by its one
    /// lookup (`O_DIRECTORY` refuses anything else).
    pub(super) fn open_dir(&self, host_path: &str) -> Result<OwnedFd, ReadError> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NONBLOCK;
        let opened = match self {
            Resolver::Live => rustix::fs::open(host_path, flags | OFlags::CLOEXEC, Mode::empty()),
            Resolver::InRoot(dir) => openat2(dir.as_fd(), host_path, flags, IN_ROOT),
            Resolver::Emulated(_) => {
                let handle = self.resolve(host_path, true)?;
                let meta = handle
                    .metadata()
                    .map_err(|e| ReadError::io(host_path, &e))?;
                if !meta.is_dir() {
                    return Err(ReadError::new(host_path, "is not a directory"));
                }
                return reopen(host_path, handle.as_fd(), flags).map(OwnedFd::from);
            }
        };
        opened.map_err(|e| match e {
            // ENOTDIR also says a directory on the way is a file: only a path that resolves is "not a directory".
            Errno::NOTDIR if self.resolve(host_path, true).is_ok() => {
                ReadError::new(host_path, "is not a directory")
            }
            e => errno(host_path, e),
        })
    }

    /// An `O_PATH` handle on a directory, for the names in it (src/host/root/dirs.rs); none from pathrs's resolver.
    pub(super) fn dir_handle(&self, host_path: &str) -> Result<OwnedFd, ReadError> {
        let flags = OFlags::PATH | OFlags::DIRECTORY;
        match self {
            Resolver::Live => rustix::fs::open(host_path, flags | OFlags::CLOEXEC, Mode::empty()),
            Resolver::InRoot(dir) => openat2(dir.as_fd(), host_path, flags, IN_ROOT),
            Resolver::Emulated(_) => Err(Errno::NOSYS),
        }
        .map_err(|e| errno(host_path, e))
    }

    /// The target of a link, as written.
    pub(super) fn readlink(&self, host_path: &str) -> Result<PathBuf, ReadError> {
        match self {
            Resolver::Live => fs::read_link(host_path).map_err(|e| ReadError::io(host_path, &e)),
            Resolver::InRoot(_) => {
                let link = self.resolve(host_path, false)?;
                rustix::fs::readlinkat(&link, "", Vec::new())
                    .map(|t| PathBuf::from(OsString::from_vec(t.into_bytes())))
                    // The handle exists, so ENOENT says it is not a link: EINVAL, as readlink(2) says it.
                    .map_err(|e| match e {
                        Errno::NOENT => errno(host_path, Errno::INVAL),
                        e => errno(host_path, e),
                    })
            }
            Resolver::Emulated(tree) => emulated_readlink(tree, host_path),
        }
    }
}

/// pathrs's readlink, kept out of line: it holds a 128 KiB buffer on the stack, and inlined into `readlink` every
/// call touched (and page-faulted) all of it, on every resolver.
#[inline(never)]
fn emulated_readlink(tree: &pathrs::Root, host_path: &str) -> Result<PathBuf, ReadError> {
    tree.readlink(host_path)
        .map_err(|e| ReadError::pathrs(host_path, &e))
}

/// `openat2` with `O_CLOEXEC`, retried while the kernel reports a racing rename or mount.
fn openat2(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    how: ResolveFlags,
) -> rustix::io::Result<OwnedFd> {
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(dir, path, flags | OFlags::CLOEXEC, Mode::empty(), how) {
            Err(Errno::AGAIN) if tries < RETRIES => tries += 1,
            got => return got,
        }
    }
}

pub(super) fn errno(host_path: &str, e: Errno) -> ReadError {
    ReadError::from_errno(host_path, Some(e.raw_os_error()), &std::io::Error::from(e))
}

/// This process's `/proc/self/fd`, opened once and checked to be procfs; `None` where no procfs is mounted.
/// rocmenv never forks without exec, so the directory stays this process's own.
fn proc_fds() -> Option<&'static OwnedFd> {
    static FDS: OnceLock<Option<OwnedFd>> = OnceLock::new();
    FDS.get_or_init(|| {
        let fds = rustix::fs::open(
            "/proc/self/fd",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let procfs = rustix::fs::fstatfs(&fds).ok()?.f_type == rustix::fs::PROC_SUPER_MAGIC;
        procfs.then_some(fds)
    })
    .as_ref()
}

/// Opens a resolved handle again, for reading, through its `/proc/self/fd` entry: the file opened is the one the
/// handle holds, whatever happened to its path since. Without a procfs, pathrs's reopen (its own procfs mount).
pub(super) fn reopen(
    host_path: &str,
    handle: BorrowedFd<'_>,
    flags: OFlags,
) -> Result<fs::File, ReadError> {
    let flags = flags | OFlags::NOCTTY | OFlags::CLOEXEC;
    match proc_fds() {
        Some(fds) => {
            let name = handle.as_raw_fd().to_string();
            rustix::fs::openat(fds, name.as_str(), flags, Mode::empty())
                .map(fs::File::from)
                .map_err(|e| errno(host_path, e))
        }
        None => pathrs::HandleRef::from_fd(handle)
            .reopen(pathrs::flags::OpenFlags::from_bits_retain(u64::from(
                flags.bits(),
            )))
            .map_err(|e| ReadError::pathrs(host_path, &e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A small tree that tries to leave itself, read with openat2 and with pathrs's emulated resolver: both must
    /// give the same answers, since a kernel without openat2 reads the same tree.
    #[test]
    fn openat2_and_the_emulated_resolver_agree_on_a_hostile_tree() {
        let d = tempfile::tempdir().unwrap();
        let p = |s: &str| d.path().join(s);
        fs::create_dir_all(p("etc")).unwrap();
        fs::create_dir_all(p("sys/class")).unwrap();
        fs::write(p("etc/os-release"), "ID=tree\n").unwrap();
        symlink("/etc/os-release", p("abs")).unwrap();
        symlink("../../../../etc/os-release", p("sys/class/up")).unwrap();
        symlink("/proc/self/root/etc/hostname", p("magic")).unwrap();
        symlink("loop", p("loop")).unwrap();
        let in_root = Resolver::tree(d.path()).unwrap();
        assert!(matches!(in_root, Resolver::InRoot(_)), "{in_root:?}");
        let emulated = Resolver::Emulated(pathrs::Root::open(d.path()).unwrap());
        for r in [&in_root, &emulated] {
            let read = |path: &str| -> Result<String, String> {
                let h = r.resolve(path, true).map_err(|e| e.why)?;
                let mut f = reopen(path, h.as_fd(), OFlags::RDONLY).map_err(|e| e.why)?;
                let mut s = String::new();
                std::io::Read::read_to_string(&mut f, &mut s).unwrap();
                Ok(s)
            };
            // Absolute links and `..` stay in the tree.
            assert_eq!(read("/abs").unwrap(), "ID=tree\n");
            assert_eq!(read("/sys/class/up").unwrap(), "ID=tree\n");
            assert_eq!(read("/../../etc/os-release").unwrap(), "ID=tree\n");
            assert_eq!(read("/magic").unwrap_err(), "does not exist");
            assert!(read("/loop").unwrap_err().starts_with("is a symlink loop"));
            assert_eq!(
                r.readlink("/abs").unwrap(),
                PathBuf::from("/etc/os-release")
            );
            assert_eq!(
                r.readlink("/etc/os-release").unwrap_err().why,
                "Invalid argument"
            );
            assert!(r.readlink("/nothing").unwrap_err().is_missing());
            assert!(r.open_dir("/sys/class").is_ok());
            assert_eq!(
                r.open_dir("/etc/os-release").unwrap_err().why,
                "is not a directory"
            );
            assert_eq!(
                r.open_dir("/etc/os-release/x").unwrap_err().why,
                "does not exist (a part of the path is not a directory)"
            );
            assert!(r.resolve_link_free("/etc/os-release").is_ok());
        }
        // A link on the way is refused where the walk said there is none.
        assert!(in_root.resolve_link_free("/abs/x").is_err());
    }

    #[test]
    fn the_live_host_reads_proc_as_any_program_does() {
        let live = super::super::HostRoot::live();
        assert!(live
            .read_text("/proc/self/status")
            .unwrap()
            .contains("Pid:"));
        // /proc/self is a link and /proc/self/exe a magic link: both resolve as the kernel resolves them.
        assert!(!live.link_name("/proc/self/exe").unwrap().is_empty());
        assert!(live
            .list("/proc/self/fd")
            .unwrap()
            .contains(&"0".to_string()));
    }
}
