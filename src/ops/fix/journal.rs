//! Applying a plan and undoing it. Every file edit is atomic (a temporary file in the same directory, renamed over
//! the old one, with its mode and owner) and keeps the old bytes in a journal; every command keeps its undo. The
//! journal (`/var/lib/rocmenv/fix/` on a live host, `<tree>/.rocmenv/fix/` in a tree) is written after each step,
//! so an interrupted run can still be undone; `--undo` reverts every run, newest first, and removes the journal.

use crate::error::Error;
use crate::fix::Change;
use crate::fix::{Applied, FixPlan, FixRoot, Undone};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

/// One step done.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Entry {
    /// A file written.
    Edit {
        /// Host path.
        path: String,
        /// The journal file holding the old bytes; `None`: the file did not exist.
        backup: Option<String>,
        /// The old mode, owner and group.
        mode: u32,
        uid: u32,
        gid: u32,
        /// sha256 of what was written, to refuse undoing over a later change.
        after_sha256: String,
        /// Directories made for it, outermost first.
        made_dirs: Vec<String>,
    },
    /// A command run.
    Command {
        argv: Vec<String>,
        undo: Vec<Vec<String>>,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Journal {
    /// Runs, oldest first; each a list of entries in the order done.
    runs: Vec<Vec<Entry>>,
    /// Directories made for the journal itself, outermost first (removed with it).
    made_dirs: Vec<String>,
}

fn base(root: &FixRoot) -> Result<PathBuf, Error> {
    match root {
        FixRoot::Live => Ok(PathBuf::from("/")),
        FixRoot::Tree(p) => Ok(p.clone()),
        FixRoot::Bundle(p) => Err(Error::Sysroot {
            path: p.clone(),
            why: "a bundle is read, never changed: unpack it (tar --zstd -xf) and name the directory to apply fixes to it".into(),
        }),
    }
}

fn journal_dir(root: &FixRoot, base: &Path) -> PathBuf {
    match root {
        FixRoot::Live => PathBuf::from("/var/lib/rocmenv/fix"),
        _ => base.join(".rocmenv/fix"),
    }
}

/// A file that could not be read or written (exit 3).
fn failed(path: &Path, why: impl std::fmt::Display) -> Error {
    Error::Output(std::io::Error::other(format!("{}: {why}", path.display())))
}

/// A file fix will not touch as it is (exit 2): a link, a path that leaves the root, a change since the plan.
fn refused(path: &Path, why: &str) -> Error {
    Error::Config {
        path: path.to_path_buf(),
        line: None,
        column: None,
        message: why.to_string(),
    }
}

/// `host_path` under `base`, refusing `..` and any symbolic link on the way (a tree must not steer a write outside
/// itself, and a live login file that is a link is the user's to change).
fn real_path(base: &Path, host_path: &str) -> Result<PathBuf, Error> {
    let rel = Path::new(host_path.trim_start_matches('/'));
    let mut p = base.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(n) => p.push(n),
            _ => return Err(refused(rel, "not a plain path")),
        }
        if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(refused(
                &p,
                "is a symbolic link; rocmenv fix does not write through links, change it by hand",
            ));
        }
    }
    Ok(p)
}

fn sha256(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Writes `bytes` to `path` through a temporary file in its directory, with `mode`, `uid` and `gid`.
fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: u32,
    owner: Option<(u32, u32)>,
) -> Result<(), Error> {
    let dir = path
        .parent()
        .ok_or_else(|| failed(path, "has no directory"))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| failed(path, e))?;
    tmp.write_all(bytes).map_err(|e| failed(path, e))?;
    tmp.as_file().sync_all().map_err(|e| failed(path, e))?;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
        .map_err(|e| failed(path, e))?;
    if let Some((u, g)) = owner {
        // Only root can give a file away; as anyone else the file stays theirs, as it was.
        let _ = std::os::unix::fs::chown(tmp.path(), Some(u), Some(g));
    }
    tmp.persist(path).map_err(|e| failed(path, e.error))?;
    Ok(())
}

fn load(dir: &Path) -> Result<Journal, Error> {
    match std::fs::read(dir.join("journal.json")) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| failed(&dir.join("journal.json"), e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Journal::default()),
        Err(e) => Err(failed(dir, e)),
    }
}

fn save(dir: &Path, j: &Journal) -> Result<(), Error> {
    let text = serde_json::to_vec_pretty(j).map_err(|e| failed(dir, e))?;
    write_atomic(&dir.join("journal.json"), &text, 0o600, None)
}

/// Makes `dir` and its missing parents; returns those it made, outermost first.
fn make_dirs(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|a| !a.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    for d in &missing {
        std::fs::create_dir(d).map_err(|e| failed(d, e))?;
    }
    Ok(missing)
}

/// Performs `plan` on its root, journalling each step.
pub fn apply(plan: &FixPlan) -> Result<Applied, Error> {
    let base = base(&plan.root)?;
    if !plan.actions.iter().any(|a| a.change.applies()) {
        return Ok(Applied::default());
    }
    let dir = journal_dir(&plan.root, &base);
    let mut j = load(&dir)?;
    if !dir.exists() {
        j.made_dirs = make_dirs(&dir)?
            .iter()
            .map(|d| d.display().to_string())
            .collect();
    }
    j.runs.push(Vec::new());
    let mut done = Vec::new();
    for a in &plan.actions {
        let n = j.runs.iter().map(Vec::len).sum::<usize>();
        let step = match &a.change {
            Change::Edit {
                path,
                before,
                after,
            } => edit(&base, &dir, n, path, before.as_deref(), after),
            Change::Command { argv, undo } => run(argv).map(|()| Entry::Command {
                argv: argv.clone(),
                undo: undo.clone(),
            }),
            // Printed for the user, never run.
            Change::Manual { .. } => continue,
        };
        let entry = match step {
            Ok(e) => e,
            Err(e) => {
                settle(&dir, &mut j)?;
                return Err(e);
            }
        };
        j.runs.last_mut().expect("pushed above").push(entry);
        save(&dir, &j)?;
        done.push(a.id.to_string());
    }
    Ok(Applied {
        done,
        journal: Some(dir.display().to_string()),
    })
}

/// After a failed step: keeps the journal of what was done, or, when nothing ever was, leaves no journal behind.
fn settle(dir: &Path, j: &mut Journal) -> Result<(), Error> {
    if j.runs.last().is_some_and(Vec::is_empty) {
        j.runs.pop();
    }
    if !j.runs.is_empty() {
        return save(dir, j);
    }
    for f in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let _ = std::fs::remove_file(f.path());
    }
    let _ = std::fs::remove_dir(dir);
    for d in j.made_dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    Ok(())
}

fn edit(
    base: &Path,
    dir: &Path,
    n: usize,
    path: &str,
    before: Option<&str>,
    after: &str,
) -> Result<Entry, Error> {
    let p = real_path(base, path)?;
    let now = match std::fs::read(&p) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(failed(&p, e)),
    };
    if now.as_deref() != before.map(str::as_bytes) {
        return Err(refused(
            &p,
            "changed since the plan was made; run `rocmenv fix` again to see the plan for it now",
        ));
    }
    let (backup, mode, uid, gid, made) = match &now {
        Some(old) => {
            let m = std::fs::metadata(&p).map_err(|e| failed(&p, e))?;
            let name = format!("backup-{n}");
            write_atomic(&dir.join(&name), old, 0o600, None)?;
            (Some(name), m.mode() & 0o7777, m.uid(), m.gid(), Vec::new())
        }
        None => {
            let parent = p.parent().ok_or_else(|| failed(&p, "has no directory"))?;
            let made = make_dirs(parent)?;
            (None, 0o644, 0, 0, made)
        }
    };
    write_atomic(
        &p,
        after.as_bytes(),
        mode,
        now.is_some().then_some((uid, gid)),
    )?;
    Ok(Entry::Edit {
        path: path.to_string(),
        backup,
        mode,
        uid,
        gid,
        after_sha256: sha256(after.as_bytes()),
        made_dirs: made.iter().map(|d| d.display().to_string()).collect(),
    })
}

fn run(argv: &[String]) -> Result<(), Error> {
    let (cmd, args) = argv
        .split_first()
        .ok_or_else(|| failed(Path::new("fix"), "empty command"))?;
    let out = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| failed(Path::new(cmd), e))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(failed(
            Path::new(cmd),
            format!(
                "`{}` failed ({}): {}",
                argv.join(" "),
                out.status,
                crate::text::one_line(err.trim())
            ),
        ));
    }
    Ok(())
}

/// Reverts every journalled run on `root`, newest first, and removes the journal.
pub fn undo(root: &FixRoot) -> Result<Undone, Error> {
    let base = base(root)?;
    let dir = journal_dir(root, &base);
    if !dir.join("journal.json").exists() {
        return Ok(Undone::default());
    }
    let j = load(&dir)?;
    let mut out = Undone::default();
    for e in j.runs.iter().rev().flat_map(|r| r.iter().rev()) {
        out.reverted.push(revert(&base, &dir, e)?);
    }
    for f in std::fs::read_dir(&dir).map_err(|e| failed(&dir, e))? {
        let f = f.map_err(|e| failed(&dir, e))?;
        std::fs::remove_file(f.path()).map_err(|e| failed(&f.path(), e))?;
    }
    std::fs::remove_dir(&dir).map_err(|e| failed(&dir, e))?;
    for d in j.made_dirs.iter().rev() {
        let _ = std::fs::remove_dir(d);
    }
    Ok(out)
}

fn revert(base: &Path, dir: &Path, e: &Entry) -> Result<String, Error> {
    match e {
        Entry::Edit {
            path,
            backup,
            mode,
            uid,
            gid,
            after_sha256,
            made_dirs,
        } => {
            let p = real_path(base, path)?;
            let now = std::fs::read(&p).map_err(|e| failed(&p, e))?;
            if &sha256(&now) != after_sha256 {
                return Err(refused(&p, "changed after rocmenv fix wrote it; the journal keeps the old text, restore it by hand"));
            }
            match backup {
                Some(b) => {
                    let old = std::fs::read(dir.join(b)).map_err(|e| failed(&dir.join(b), e))?;
                    write_atomic(&p, &old, *mode, Some((*uid, *gid)))?;
                    Ok(format!("restored {path}"))
                }
                None => {
                    std::fs::remove_file(&p).map_err(|e| failed(&p, e))?;
                    for d in made_dirs.iter().rev() {
                        let _ = std::fs::remove_dir(d);
                    }
                    Ok(format!("removed {path}"))
                }
            }
        }
        Entry::Command { argv, undo } => {
            for u in undo {
                run(u)?;
            }
            Ok(format!("undid `{}`", argv.join(" ")))
        }
    }
}
