//! What a recording root saw: every object its reads touched (with each link on the way), and every read asked for,
//! found or not. `rocmenv collect` archives exactly these objects as a host tree, then asks the same reads of the
//! tree it wrote. The reads themselves stay in the parent module; this holds what is kept of them.

use super::HostRoot;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// One object a recording root saw, by its host path (with every link on the way resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// A directory on the way to something, or one that was listed.
    Dir,
    /// A regular file that was read: the bytes the probe got, and its permission bits.
    File {
        /// What the read returned (at most the read's cap).
        bytes: Vec<u8>,
        /// Permission bits.
        mode: u32,
    },
    /// A regular file whose existence or mode was checked, not its content (a tool on PATH).
    Stat {
        /// Permission bits.
        mode: u32,
    },
    /// A device node (`/dev/kfd`); a tree keeps it as an empty file, its owner and mode in `recorded.yaml`.
    Node,
    /// A symbolic link and its target, as written.
    Link {
        /// The target.
        target: PathBuf,
    },
}

/// A read a probe asked for, found or not, so it can be asked again of another root.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Asked {
    /// `read_text`, `read_head` or `read_value`, with the cap.
    Read(String, u64),
    /// `list`.
    List(String),
    /// `link_name`.
    Link(String),
    /// `exists`, `is_dir`, `metadata`.
    Stat(String),
}

/// What a recording root saw: the objects, and every read asked for.
#[derive(Debug, Clone, Default)]
pub struct Recording {
    /// The objects, by host path; parents sort before their children.
    pub seen: BTreeMap<String, Seen>,
    /// Every read asked for, in order, duplicates removed.
    pub asked: Vec<Asked>,
}

impl Recording {
    /// Adds what `other` saw and asked that this recording lacks.
    pub fn merge(&mut self, other: Recording) {
        for (p, s) in other.seen {
            self.note(p, s);
        }
        for a in other.asked {
            if !self.asked.contains(&a) {
                self.asked.push(a);
            }
        }
    }

    fn note(&mut self, path: String, s: Seen) {
        match (self.seen.get(&path), &s) {
            // A read file stays read; a checked one becomes read.
            (Some(Seen::File { .. }), _) => {}
            (Some(_), Seen::File { .. }) | (None, _) => {
                self.seen.insert(path, s);
            }
            _ => {}
        }
    }
}

/// Where recording stops: a host tree's own recorded facts are the session's, written anew by `collect`.
fn recordable(host_path: &str) -> bool {
    !(host_path.starts_with("/.rocmenv/") || host_path == "/.rocmenv")
}

/// What `trace` found: the link-free path of the object at the end, its metadata, and what was passed on the way.
type Traced = (String, fs::Metadata, Vec<(String, Seen)>);

/// The most links a path may pass through, as the kernel allows (path_resolution(7)).
const MAX_LINKS: usize = 40;

impl HostRoot {
    /// The same root, recording every object its reads touch from now on (see `take_recording`).
    pub fn recording(&self) -> Self {
        HostRoot {
            recorder: Some(Arc::new(Mutex::new(Recording::default()))),
            ..self.clone()
        }
    }

    /// What this root recorded so far (empty when it does not record).
    pub fn take_recording(&self) -> Recording {
        self.recorder
            .as_ref()
            .map(|r| std::mem::take(&mut *r.lock().unwrap_or_else(|e| e.into_inner())))
            .unwrap_or_default()
    }

    /// Asks the same read of this root that another root was asked (`collect` checks a tree it wrote this way).
    pub fn ask(&self, asked: &Asked) {
        let _ = match asked {
            Asked::Read(p, cap) => self.read_bytes(p, *cap).map(drop),
            Asked::List(p) => self.list(p).map(drop),
            Asked::Link(p) => self.link_name(p).map(drop),
            Asked::Stat(p) => self.metadata(p).map(drop),
        };
    }

    /// On a recording root: notes the read asked for and, when it succeeded, every object on the way to what it
    /// read (`follow`: whether a link at the end is followed) and `last`, what it found there.
    pub(super) fn record(
        &self,
        asked: Asked,
        ok: bool,
        follow: bool,
        last: impl FnOnce(&fs::Metadata) -> Option<Seen>,
    ) {
        let Some(rec) = &self.recorder else { return };
        let path = match &asked {
            Asked::Read(p, _) | Asked::List(p) | Asked::Link(p) | Asked::Stat(p) => p.clone(),
        };
        if !recordable(&path) {
            return;
        }
        let traced = if ok { self.trace(&path, follow) } else { None };
        let mut rec = rec.lock().unwrap_or_else(|e| e.into_inner());
        if !rec.asked.contains(&asked) {
            rec.asked.push(asked);
        }
        let Some((at, meta, on_the_way)) = traced else {
            return;
        };
        for (p, s) in on_the_way {
            rec.note(p, s);
        }
        if let Some(s) = last(&meta) {
            rec.note(at, s);
        }
    }

    /// Walks `host_path` a component at a time as the resolver does (links inside a tree resolve inside it), and
    /// returns the link-free path of the object at its end, its metadata (of the link itself when `follow` is false),
    /// and the directories and links passed on the way, so a tree written from them resolves the path the same way.
    fn trace(&self, host_path: &str, follow: bool) -> Option<Traced> {
        use std::collections::VecDeque;
        fn parts(p: &Path) -> VecDeque<String> {
            p.to_str()
                .unwrap_or("")
                .split('/')
                .filter(|c| !c.is_empty() && *c != ".")
                .map(str::to_string)
                .collect()
        }
        let join = |d: &[String]| format!("/{}", d.join("/"));
        // `done` holds no link, so only the last component of what is looked up may be one.
        let lstat = |p: &str| self.resolver.resolve_link_free(p).ok()?.metadata().ok();
        let mut done: Vec<String> = Vec::new();
        let mut todo = parts(Path::new(host_path));
        let mut passed = Vec::new();
        let mut links = 0;
        while let Some(c) = todo.pop_front() {
            if c == ".." {
                // `done` holds no link, so `..` is its parent (and `/..` is `/`, as in a chroot).
                done.pop();
                continue;
            }
            let mut next = done.clone();
            next.push(c);
            let p = join(&next);
            let meta = lstat(&p)?;
            if meta.file_type().is_symlink() && (follow || !todo.is_empty()) {
                links += 1;
                if links > MAX_LINKS {
                    return None;
                }
                let target = self.readlink(&p).ok()?;
                if target.is_absolute() {
                    done.clear();
                }
                let mut rest = parts(&target);
                rest.extend(todo);
                todo = rest;
                passed.push((p, Seen::Link { target }));
                continue;
            }
            if todo.is_empty() {
                return Some((p, meta, passed));
            }
            if !meta.is_dir() {
                return None;
            }
            passed.push((p, Seen::Dir));
            done = next;
        }
        let p = join(&done);
        let meta = lstat(&p)?;
        Some((p, meta, passed))
    }
}

/// What a successful `exists` or `metadata` saw at the end of a path.
pub(super) fn stat_seen(m: &fs::Metadata) -> Option<Seen> {
    let t = m.file_type();
    if t.is_dir() {
        Some(Seen::Dir)
    } else if t.is_file() {
        Some(Seen::Stat {
            mode: m.mode() & 0o7777,
        })
    } else if t.is_char_device() || t.is_block_device() {
        Some(Seen::Node)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_root_keeps_links_as_links_and_what_they_lead_to() {
        use std::os::unix::fs::symlink;
        let d = tempfile::tempdir().unwrap();
        let p = |s: &str| d.path().join(s);
        fs::create_dir_all(p("sys/devices/pci0000:00/0000:03:00.0")).unwrap();
        fs::write(p("sys/devices/pci0000:00/0000:03:00.0/class"), "0x030000\n").unwrap();
        fs::create_dir_all(p("sys/bus/pci/devices")).unwrap();
        symlink(
            "../../../devices/pci0000:00/0000:03:00.0",
            p("sys/bus/pci/devices/0000:03:00.0"),
        )
        .unwrap();
        fs::create_dir_all(p("opt/rocm-6.2.0/.info")).unwrap();
        fs::write(p("opt/rocm-6.2.0/.info/version"), "6.2.0-66\n").unwrap();
        // Absolute, as alternatives(8) makes them: it resolves inside the tree.
        symlink("/opt/rocm-6.2.0", p("opt/rocm")).unwrap();
        let root = HostRoot::sysroot(d.path()).unwrap().recording();
        assert_eq!(
            root.read_value("/sys/bus/pci/devices/0000:03:00.0/class")
                .unwrap(),
            "0x030000"
        );
        assert_eq!(
            root.read_value("/opt/rocm/.info/version").unwrap(),
            "6.2.0-66"
        );
        assert_eq!(root.link_name("/opt/rocm").unwrap(), "rocm-6.2.0");
        assert!(!root.exists("/sys/module/amdgpu"));
        let rec = root.take_recording();
        let link = |t: &str| Seen::Link {
            target: PathBuf::from(t),
        };
        assert_eq!(
            rec.seen["/sys/bus/pci/devices/0000:03:00.0"],
            link("../../../devices/pci0000:00/0000:03:00.0")
        );
        assert_eq!(rec.seen["/opt/rocm"], link("/opt/rocm-6.2.0"));
        assert!(matches!(
            &rec.seen["/sys/devices/pci0000:00/0000:03:00.0/class"],
            Seen::File { bytes, .. } if bytes == b"0x030000\n"
        ));
        assert!(matches!(
            &rec.seen["/opt/rocm-6.2.0/.info/version"],
            Seen::File { .. }
        ));
        for dir in [
            "/sys",
            "/sys/bus/pci/devices",
            "/sys/devices/pci0000:00/0000:03:00.0",
            "/opt/rocm-6.2.0/.info",
        ] {
            assert_eq!(rec.seen[dir], Seen::Dir, "{dir}");
        }
        // Only link-free paths hold files; what was missing is asked, not seen.
        assert!(!rec
            .seen
            .contains_key("/sys/bus/pci/devices/0000:03:00.0/class"));
        assert!(!rec.seen.contains_key("/sys/module/amdgpu"));
        assert!(rec
            .asked
            .contains(&Asked::Stat("/sys/module/amdgpu".into())));
        // A plain root records nothing.
        let plain = HostRoot::sysroot(d.path()).unwrap();
        plain.read_value("/opt/rocm/.info/version").unwrap();
        assert!(plain.take_recording().seen.is_empty());
    }
}
