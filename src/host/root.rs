//! `HostRoot`: every probe reads through a root directory, `/` live or `--sysroot DIR`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Files larger than this are cut: sysfs and procfs files are small, anything bigger is not what we expect.
const MAX_READ: u64 = 1 << 20;

/// The directory a host is read from.
#[derive(Debug, Clone)]
pub struct HostRoot {
    root: PathBuf,
    live: bool,
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

impl ReadError {
    /// True when the file does not exist (as opposed to unreadable).
    pub fn is_missing(&self) -> bool {
        self.why == "does not exist"
    }
}

impl HostRoot {
    /// The running host, `/`.
    pub fn live() -> Self {
        HostRoot {
            root: PathBuf::from("/"),
            live: true,
        }
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
        Ok(HostRoot {
            root: path.to_path_buf(),
            live: false,
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
                !alts
                    .iter()
                    .any(|p| fs::symlink_metadata(self.path(p)).is_ok())
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

    /// True for the running host.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// The root directory.
    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The real path of a host path such as `/sys/class/kfd`.
    pub fn path(&self, host_path: &str) -> PathBuf {
        self.root.join(host_path.trim_start_matches('/'))
    }

    fn err(host_path: &str, e: &std::io::Error) -> ReadError {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "does not exist".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
            _ if e.raw_os_error() == Some(libc::ELOOP) => "is a symlink loop".to_string(),
            _ => e.to_string(),
        };
        ReadError {
            path: host_path.to_string(),
            why,
        }
    }

    /// Reads a text file; bytes that are not UTF-8 become U+FFFD, and at most 1 MiB is read.
    pub fn read_text(&self, host_path: &str) -> Result<String, ReadError> {
        let p = self.path(host_path);
        let f = fs::File::open(&p).map_err(|e| Self::err(host_path, &e))?;
        if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
            return Err(ReadError {
                path: host_path.to_string(),
                why: "is a directory".into(),
            });
        }
        let mut buf = Vec::new();
        f.take(MAX_READ)
            .read_to_end(&mut buf)
            .map_err(|e| Self::err(host_path, &e))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    }

    /// Reads a one-line file and trims it; an empty file is an error.
    pub fn read_value(&self, host_path: &str) -> Result<String, ReadError> {
        let t = self.read_text(host_path)?;
        let v = t.trim();
        if v.is_empty() {
            return Err(ReadError {
                path: host_path.to_string(),
                why: "is empty".into(),
            });
        }
        if v.len() > 4096 {
            return Err(ReadError {
                path: host_path.to_string(),
                why: "is far longer than a sysfs value".into(),
            });
        }
        Ok(v.to_string())
    }

    /// The last component of a symlink's target (sysfs links end in a BDF or a driver name).
    pub fn link_name(&self, host_path: &str) -> Result<String, ReadError> {
        let target = fs::read_link(self.path(host_path)).map_err(|e| Self::err(host_path, &e))?;
        target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| ReadError {
                path: host_path.to_string(),
                why: "is a link with no name at its end".into(),
            })
    }

    /// The names in a directory, sorted; names that are not UTF-8 are skipped.
    pub fn list(&self, host_path: &str) -> Result<Vec<String>, ReadError> {
        let rd = fs::read_dir(self.path(host_path)).map_err(|e| Self::err(host_path, &e))?;
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        Ok(names)
    }

    /// True when something exists at the path (a dangling symlink does not count).
    pub fn exists(&self, host_path: &str) -> bool {
        self.path(host_path).exists()
    }

    /// Metadata of the path, following links.
    pub fn metadata(&self, host_path: &str) -> Result<fs::Metadata, ReadError> {
        fs::metadata(self.path(host_path)).map_err(|e| Self::err(host_path, &e))
    }
}
