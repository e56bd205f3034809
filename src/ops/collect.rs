//! `rocmenv collect`: doctor on this host (or a tree) through a recorder, and the bundle of what it read, written
//! atomically (0600) where the plan says.

use super::doctor::{report_on, DoctorPlan};
use super::files::{self, Existing, OutputKind};
use super::Ctx;
use crate::checks::Summary;
use crate::collect::{self, redact::Redactor, Item};
use crate::error::Error;
use crate::host::{ProbeOptions, RecordingSession};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// What to collect and where to write it (the host itself is the context's).
#[derive(Debug, Clone)]
pub struct CollectPlan {
    /// The bundle's path; `None`: `rocmenv-<host>-<date>.tar.zst` in the working directory.
    pub output: Option<PathBuf>,
    /// The tree read instead of this host, which names the default output.
    pub sysroot: Option<PathBuf>,
    /// Hide host names, user names and secrets.
    pub redact: bool,
    /// Replace an existing bundle.
    pub force: bool,
    /// Doctor's deep checks (and the files they read).
    pub deep: bool,
    /// When the bundle is made: its date and the files' mtime.
    pub now: SystemTime,
}

/// The bundle written.
#[derive(Debug)]
pub struct Collected {
    /// Where it went.
    pub output: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Host files in it (not what collect adds: recorded.yaml, tool output, doctor.json, REDACTED.txt).
    pub files: usize,
    /// Host symlinks in it.
    pub links: usize,
    /// The top directories of the host's files (`etc`, `proc`, `sys`, …).
    pub tops: Vec<String>,
    /// doctor.json's counts.
    pub summary: Summary,
    /// What was redacted, in words, when the plan asked for it.
    pub redacted: Option<String>,
}

/// Runs doctor through a recorder and writes the bundle of what it read.
pub fn collect(ctx: &Ctx, plan: &CollectPlan) -> Result<Collected, Error> {
    // Flags and data first, without touching the host.
    let m = ctx.matrices()?;
    let output = plan.output.clone().unwrap_or_else(|| default_output(plan));
    // Checked again, atomically, when the bundle is put in place; this saves probing the host for nothing. A device
    // or FIFO (`-o /dev/stdout`) is written through, so there is nothing to replace and no --force to ask for.
    let kind = files::output_kind(&output)?;
    if !plan.force && kind == OutputKind::File && std::fs::symlink_metadata(&output).is_ok() {
        return Err(collect::exists(&output));
    }
    let (root, session) = ctx.open_host()?;
    let recording_root = root.recording();
    let recording_session = RecordingSession::new(session.as_ref());
    let facts = ctx.probe(&recording_root, &recording_session, m);
    let r = report_on(&DoctorPlan::default(), m, &recording_root, facts, plan.deep)?;
    let (facts, outputs) = recording_session.into_recorded();
    let rec = collect::complete(
        &root,
        recording_root.take_recording(),
        &facts,
        &outputs,
        &ProbeOptions { deep: plan.deep },
    )?;
    let mut redactor = plan.redact.then(|| {
        let (hosts, users) = collect::names_to_hide(&root, &facts);
        Redactor::new(&hosts, &users)
    });
    let items = collect::bundle_items(
        &rec,
        facts,
        &outputs,
        crate::report::doctor_json(&r),
        redactor.as_mut(),
    )?;
    let mtime = plan
        .now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let exists = || collect::exists(&output);
    let existing = if plan.force {
        Existing::Replace
    } else {
        Existing::Refuse(&exists)
    };
    // 0600: a bundle is about a host (its users, groups, environment), for whoever asked for it.
    let bytes = files::write_with(&output, existing, 0o600, &mut |w| {
        collect::write_tar(&items, w, mtime)
    })?;
    let (files, links, tops) = contents(&items);
    Ok(Collected {
        output,
        bytes,
        files,
        links,
        tops,
        summary: r.summary,
        redacted: redactor.as_ref().map(Redactor::summary),
    })
}

/// `rocmenv-<host>-<date>.tar.zst`: `redacted`, the tree's name, or this host's name.
fn default_output(plan: &CollectPlan) -> PathBuf {
    let date = chrono::DateTime::<chrono::Utc>::from(plan.now)
        .format("%Y-%m-%d")
        .to_string();
    let host = if plan.redact {
        "redacted".to_string()
    } else {
        match &plan.sysroot {
            None => crate::engine::hostname(),
            Some(p) => name_of_tree(p),
        }
    };
    PathBuf::from(collect::default_name(&host, &date))
}

/// A tree's name as a host name: `trees/mi300x.tar.zst` → `mi300x`.
fn name_of_tree(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().trim_end_matches(".tar.zst").to_string())
        .unwrap_or_default()
}

/// The host's files and links in the bundle, and their top directories.
fn contents(items: &collect::Items) -> (usize, usize, Vec<String>) {
    // The host's files, not what collect adds (recorded.yaml and tool output, doctor.json, REDACTED.txt).
    let read =
        |k: &String| !k.starts_with(".rocmenv") && !k.ends_with(".json") && !k.ends_with(".txt");
    let count = |f: fn(&Item) -> bool| items.iter().filter(|(k, i)| read(k) && f(i)).count();
    let files = count(|i| matches!(i, Item::File(..)));
    let links = count(|i| matches!(i, Item::Link(_)));
    let mut tops: Vec<String> = items
        .keys()
        .filter_map(|k| k.split('/').next())
        .filter(|t| !t.starts_with('.') && !t.contains('.'))
        .map(String::from)
        .collect();
    tops.dedup();
    (files, links, tops)
}
