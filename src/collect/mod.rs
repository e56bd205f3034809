//! `rocmenv collect`: a support bundle. The host is read by doctor through a recording `HostRoot` and a recording
//! `Session`, and the bundle holds exactly what they saw, in the `--sysroot` layout: every file read (the bytes
//! the probe got), every directory listed, every link passed on the way (as a link, with its target), device nodes
//! as empty files, and `.rocmenv/recorded.yaml` with the facts no file shows. The tree is then read back as
//! `--sysroot` reads it, and whatever that asks for and the host has (`/proc/meminfo`, which the live probe takes
//! from the kernel's API, a tool's file on PATH) is added, until the tree answers every read. `doctor.json` is the
//! report on the host as collected.

pub mod redact;

use crate::error::Error;
use crate::host::{self, Asked, HostRoot, ProbeOptions, RecordedFacts, Recording, Seen};
use redact::Redactor;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An entry of a bundle, by its path relative to the tree's root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A directory.
    Dir,
    /// A regular file with its bytes and permission bits.
    File(Vec<u8>, u32),
    /// A symbolic link with its target.
    Link(PathBuf),
}

/// The files of a bundle, parents before children.
pub type Items = BTreeMap<String, Item>;

/// How many passes of reading the tree back may add files before collect gives up adding.
const MAX_PASSES: usize = 4;

/// The tree of what `rec` saw: paths relative to the root, device nodes and checked files as empty files.
pub fn tree_items(rec: &Recording) -> Items {
    let mut items = Items::new();
    for (path, seen) in &rec.seen {
        let rel = path.trim_start_matches('/').to_string();
        if rel.is_empty() {
            continue;
        }
        // Owner bits only matter to who unpacks it; execute bits matter to a PATH lookup.
        let mode = |m: u32| if m & 0o111 != 0 { 0o755 } else { 0o644 };
        let item = match seen {
            Seen::Dir => Item::Dir,
            Seen::File { bytes, mode: m } => Item::File(bytes.clone(), mode(*m)),
            Seen::Stat { mode: m } => Item::File(Vec::new(), mode(*m)),
            Seen::Node => Item::File(Vec::new(), 0o644),
            Seen::Link { target } => Item::Link(clamp_link(&rel, target)),
        };
        items.insert(rel, item);
    }
    items
}

/// A relative link target that climbs above the root (`/a -> ../../x`, which the kernel resolves as `/x`, since `/..`
/// is `/`) without the `..`s that have nowhere to go: the same link, and one `--sysroot` unpacks (it refuses links
/// that lead out of the tree).
fn clamp_link(rel: &str, target: &Path) -> PathBuf {
    use std::path::Component;
    if target.is_absolute() {
        return target.to_path_buf();
    }
    let mut depth = rel.split('/').count() as i64 - 1;
    let mut out = PathBuf::new();
    for c in target.components() {
        match c {
            Component::ParentDir if depth == 0 => continue,
            Component::ParentDir => depth -= 1,
            Component::Normal(_) => depth += 1,
            _ => {}
        }
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Adds `.rocmenv/recorded.yaml` and the tools' outputs.
pub fn add_recorded(
    items: &mut Items,
    facts: &RecordedFacts,
    outputs: &BTreeMap<String, String>,
) -> Result<(), Error> {
    let yaml = serde_yaml_ng::to_string(facts)
        .map_err(|e| Error::Environment(format!("cannot write recorded.yaml: {e}")))?;
    let text = format!(
        "# Facts no file in this tree shows, recorded by rocmenv collect {}.\n{yaml}",
        env!("CARGO_PKG_VERSION")
    );
    items.insert(".rocmenv".into(), Item::Dir);
    items.insert(
        host::RECORDED_FILE.trim_start_matches('/').into(),
        Item::File(text.into_bytes(), 0o644),
    );
    for (file, text) in outputs {
        items.insert(
            format!(".rocmenv/{file}"),
            Item::File(text.clone().into_bytes(), 0o644),
        );
    }
    Ok(())
}

/// Writes the items under `dir` (a fresh directory of ours).
pub fn write_tree(items: &Items, dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::PermissionsExt;
    for (rel, item) in items {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        match item {
            Item::Dir => std::fs::create_dir_all(&p).map_err(|e| Error::io("create", &p, e))?,
            Item::File(bytes, mode) => {
                std::fs::write(&p, bytes).map_err(|e| Error::io("write", &p, e))?;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode))
                    .map_err(|e| Error::io("write", &p, e))?;
            }
            Item::Link(target) => {
                std::os::unix::fs::symlink(target, &p).map_err(|e| Error::io("create", &p, e))?
            }
        }
    }
    Ok(())
}

/// Reads the tree written from `items` as `--sysroot` does, asks `source` every read that made, and returns the
/// recording grown by what `source` has that the tree lacked. Stops when the tree answers every read.
pub fn complete(
    source: &HostRoot,
    mut rec: Recording,
    facts: &RecordedFacts,
    outputs: &BTreeMap<String, String>,
    opts: &ProbeOptions,
) -> Result<Recording, Error> {
    for _ in 0..MAX_PASSES {
        let mut items = tree_items(&rec);
        add_recorded(&mut items, facts, outputs)?;
        let stage = tempfile::Builder::new()
            .prefix("rocmenv-collect-")
            .tempdir()
            .map_err(|e| Error::io("create", std::env::temp_dir(), e))?;
        write_tree(&items, stage.path())?;
        let tree = HostRoot::sysroot(stage.path())?.recording();
        // `--sysroot` refuses a tree without the files every host has: they are asked for too.
        let _ = tree.check_host_tree();
        let session = host::RecordedSession::open(&tree);
        let _ = host::probe(&tree, &session, opts);
        let asked = tree.take_recording().asked;
        let before = rec.seen.len();
        let more = source.recording();
        for a in asked
            .iter()
            .filter(|a| !matches!(a, Asked::Read(p, _) if p == host::RECORDED_FILE))
        {
            more.ask(a);
        }
        rec.merge(more.take_recording());
        if rec.seen.len() == before {
            break;
        }
    }
    Ok(rec)
}

/// The names a bundle of this host hides with `--redact`: its host names and the people's user names.
pub fn names_to_hide(source: &HostRoot, facts: &RecordedFacts) -> (Vec<String>, Vec<String>) {
    let mut hosts = Vec::new();
    if source.is_live() {
        hosts.push(crate::engine::hostname());
        if let Ok(n) = std::env::var(crate::report::node::NODE_ENV) {
            hosts.push(n);
        }
    }
    for p in ["/proc/sys/kernel/hostname", "/etc/hostname"] {
        if let Ok(n) = source.read_value(p) {
            hosts.push(n);
        }
    }
    if let Some(env) = &facts.env {
        hosts.extend(env.get("HOSTNAME").cloned());
    }
    // People are the current user unless root, accounts in the login range (login.defs: UID_MIN 1000 to UID_MAX
    // 60000), and group members that are no system account.
    let mut system = vec!["root".to_string()];
    let mut people = Vec::new();
    if let Some(n) = facts.user.as_ref().and_then(|u| u.name.clone()) {
        people.push(n);
    }
    if let Ok(h) = source.read_head("/etc/passwd", host::MAX_READ) {
        for l in h.text.lines() {
            let f: Vec<&str> = l.split(':').collect();
            let Some(uid) = f.get(2).and_then(|u| u.parse::<u32>().ok()) else {
                continue;
            };
            if (1000..=60000).contains(&uid) {
                people.push(f[0].to_string());
            } else {
                system.push(f[0].to_string());
            }
        }
    }
    if let Ok(h) = source.read_head("/etc/group", host::MAX_READ) {
        for l in h.text.lines() {
            if let Some(members) = l.split(':').nth(3) {
                people.extend(
                    members
                        .split(',')
                        .map(str::trim)
                        .filter(|m| !m.is_empty())
                        .map(str::to_string),
                );
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    people.retain(|p| !system.contains(p) && seen.insert(p.clone()));
    (hosts, people)
}

/// True for an environment variable doctor reads: the GPU ones it checks, and PATH, on which it finds the tools.
pub fn doctor_reads(name: &str) -> bool {
    name == "PATH"
        || crate::host::GPU_ENV.contains(&name)
        || name.starts_with("HSA_OVERRIDE_GFX_VERSION_")
}

/// The bundle: the tree `rec` saw, `.rocmenv/recorded.yaml` with the tools' outputs, `doctor.json`, and with a
/// redactor everything redacted (file contents, paths, link targets, the recorded facts and the JSON) and
/// `REDACTED.txt` saying what was.
pub fn bundle_items(
    rec: &Recording,
    mut facts: RecordedFacts,
    outputs: &BTreeMap<String, String>,
    mut doctor: serde_json::Value,
    redactor: Option<&mut Redactor>,
) -> Result<Items, Error> {
    let mut items = tree_items(rec);
    let Some(r) = redactor else {
        add_recorded(&mut items, &facts, outputs)?;
        items.insert(
            "doctor.json".into(),
            Item::File(json_bytes(&doctor)?, 0o644),
        );
        return Ok(items);
    };
    // Secret values first: once known, they are replaced wherever else they appear.
    if let Some(env) = facts.env.as_mut() {
        r.environment(env);
        // Then only the variables doctor reads stay (the GPU ones and PATH, on which it finds tools): the rest (PWD,
        // container names, a shell's exports) says nothing about the GPUs.
        let before = env.len();
        env.retain(|k, _| doctor_reads(k));
        r.env_left_out = before - env.len();
    }
    if let Some(env) = doctor
        .pointer_mut("/host/env")
        .and_then(|e| e.as_object_mut())
    {
        let mut map: BTreeMap<String, String> = env
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect();
        r.environment(&mut map);
        for (k, v) in map {
            env.insert(k, serde_json::Value::String(v));
        }
    }
    add_recorded(&mut items, &facts, outputs)?;
    r.json(&mut doctor);
    let mut items: Items = items
        .into_iter()
        .map(|(path, item)| {
            let item = match item {
                Item::File(bytes, mode) if path == "etc/passwd" => {
                    Item::File(r.bytes(&r.passwd(&bytes)), mode)
                }
                Item::File(bytes, mode) => Item::File(r.bytes(&bytes), mode),
                Item::Link(t) => Item::Link(PathBuf::from(r.text(&t.to_string_lossy()))),
                Item::Dir => Item::Dir,
            };
            (r.text(&path), item)
        })
        .collect();
    items.insert(
        "doctor.json".into(),
        Item::File(json_bytes(&doctor)?, 0o644),
    );
    items.insert(
        "REDACTED.txt".into(),
        Item::File(r.report().into_bytes(), 0o644),
    );
    Ok(items)
}

fn json_bytes(v: &serde_json::Value) -> Result<Vec<u8>, Error> {
    let mut b = serde_json::to_vec_pretty(v)
        .map_err(|e| Error::Environment(format!("cannot write doctor.json: {e}")))?;
    b.push(b'\n');
    Ok(b)
}

/// Writes the items as a zstd-compressed tar to `w` (the caller decides where: a temporary file put in place when
/// complete, or a device written through).
pub fn write_tar(items: &Items, w: &mut dyn Write, mtime: u64) -> std::io::Result<()> {
    let enc = zstd::stream::write::Encoder::new(w, 9)?;
    let mut tar = tar::Builder::new(enc);
    tar.mode(tar::HeaderMode::Deterministic);
    for (rel, item) in items {
        let mut h = tar::Header::new_gnu();
        h.set_mtime(mtime);
        h.set_uid(0);
        h.set_gid(0);
        match item {
            Item::Dir => {
                h.set_entry_type(tar::EntryType::Directory);
                h.set_mode(0o755);
                h.set_size(0);
                tar.append_data(&mut h, format!("{rel}/"), std::io::empty())?;
            }
            Item::File(bytes, mode) => {
                h.set_entry_type(tar::EntryType::Regular);
                h.set_mode(*mode);
                h.set_size(bytes.len() as u64);
                tar.append_data(&mut h, rel, &bytes[..])?;
            }
            Item::Link(target) => {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_mode(0o777);
                h.set_size(0);
                tar.append_link(&mut h, rel, target)?;
            }
        }
    }
    tar.into_inner()?.finish()?.flush()
}

/// The error for an output file that exists.
pub fn exists(out: &Path) -> Error {
    Error::invalid(
        "-o",
        format!(
            "{} exists: give --force to replace it, or another -o FILE",
            out.display()
        ),
    )
}

/// `rocmenv-collect-<host>-<YYYY-MM-DD>.tar.zst`; the host part keeps only letters, digits, `.` and `-`.
pub fn default_name(host: &str, date: &str) -> String {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let host = host.trim_matches(['-', '.']);
    let host = if host.is_empty() { "host" } else { host };
    format!("rocmenv-collect-{host}-{date}.tar.zst")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_that_climb_above_the_root_lose_the_extra_steps() {
        let c = |rel: &str, t: &str| clamp_link(rel, Path::new(t));
        assert_eq!(
            c(
                "sys/bus/pci/devices/0000:03:00.0",
                "../../../devices/pci0000:00/0000:03:00.0"
            ),
            PathBuf::from("../../../devices/pci0000:00/0000:03:00.0")
        );
        assert_eq!(c("a", "../../x"), PathBuf::from("x"));
        assert_eq!(c("a/b", "../../../x/../y"), PathBuf::from("../x/../y"));
        assert_eq!(c("a", ".."), PathBuf::from("."));
        assert_eq!(
            c("opt/rocm", "/etc/alternatives/rocm"),
            PathBuf::from("/etc/alternatives/rocm")
        );
    }

    #[test]
    fn default_names_are_safe_file_names() {
        assert_eq!(
            default_name("gpu-node7.example.com", "2026-12-04"),
            "rocmenv-collect-gpu-node7.example.com-2026-12-04.tar.zst"
        );
        assert_eq!(
            default_name("../../etc", "2026-12-04"),
            "rocmenv-collect-etc-2026-12-04.tar.zst"
        );
        assert_eq!(
            default_name("", "2026-12-04"),
            "rocmenv-collect-host-2026-12-04.tar.zst"
        );
    }
}
