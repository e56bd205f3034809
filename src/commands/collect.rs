//! `rocmenv collect`: doctor on this host (or a tree) through a recorder, and the bundle of what it read.

use crate::cli::CollectArgs;
use crate::collect::{self, redact::Redactor, Item};
use crate::error::Error;
use crate::host::{ProbeOptions, RecordingSession};
use crate::ops::doctor::DoctorPlan;
use crate::ops::files::{self, Existing, OutputKind};
use crate::ops::{Ctx, HostSpec};
use crate::report;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The host collect's flags name.
pub fn host_spec(a: &CollectArgs) -> HostSpec {
    HostSpec {
        sysroot: a.sysroot.clone(),
        tool_timeout: Duration::from_secs(a.tool_timeout),
        deep: a.deep,
    }
}

/// Runs `rocmenv collect`; the summary on `out` is for people.
pub fn exec(a: CollectArgs, ctx: &Ctx, out: &mut dyn Write) -> Result<i32, Error> {
    let now = SystemTime::now();
    let date = chrono::DateTime::<chrono::Utc>::from(now)
        .format("%Y-%m-%d")
        .to_string();
    // Flags and data first, without touching the host.
    let m = ctx.matrices()?;
    let output = match &a.output {
        Some(o) => o.clone(),
        None => {
            let host = if a.redact {
                "redacted".to_string()
            } else {
                match &a.sysroot {
                    None => crate::engine::hostname(),
                    Some(p) => p
                        .file_name()
                        .map(|n| n.to_string_lossy().trim_end_matches(".tar.zst").to_string())
                        .unwrap_or_default(),
                }
            };
            PathBuf::from(collect::default_name(&host, &date))
        }
    };
    // Checked again, atomically, when the bundle is put in place; this saves probing the host for nothing. A device
    // or FIFO (`-o /dev/stdout`) is written through, so there is nothing to replace and no --force to ask for.
    let kind = files::output_kind(&output)?;
    if !a.force && kind == OutputKind::File && std::fs::symlink_metadata(&output).is_ok() {
        return Err(collect::exists(&output));
    }
    let (root, session) = ctx.open_host()?;
    let recording_root = root.recording();
    let recording_session = RecordingSession::new(session.as_ref());
    let facts = ctx.probe(&recording_root, &recording_session, m);
    let r =
        crate::ops::doctor::report_on(&DoctorPlan::default(), m, &recording_root, facts, a.deep)?;
    let (facts, outputs) = recording_session.into_recorded();
    let rec = collect::complete(
        &root,
        recording_root.take_recording(),
        &facts,
        &outputs,
        &ProbeOptions { deep: a.deep },
    )?;
    let mut redactor = a.redact.then(|| {
        let (hosts, users) = collect::names_to_hide(&root, &facts);
        Redactor::new(&hosts, &users)
    });
    let items = collect::bundle_items(
        &rec,
        facts,
        &outputs,
        report::doctor_json(&r),
        redactor.as_mut(),
    )?;
    let mtime = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let exists = || collect::exists(&output);
    let existing = if a.force {
        Existing::Replace
    } else {
        Existing::Refuse(&exists)
    };
    // 0600: a bundle is about a host (its users, groups, environment), for whoever asked for it.
    let bytes = files::write_with(&output, existing, 0o600, &mut |w| {
        collect::write_tar(&items, w, mtime)
    })?;
    // `-o /dev/stdout` sends the bundle down a pipe; the summary must not follow it there.
    let mut stderr = std::io::stderr();
    let out: &mut dyn Write = if files::is_stdout(&output) {
        &mut stderr
    } else {
        out
    };
    super::written(summary(
        out,
        &output,
        &items,
        bytes,
        &r.summary,
        redactor.as_ref(),
    ))?;
    Ok(crate::error::EXIT_OK)
}

fn summary(
    out: &mut dyn Write,
    path: &Path,
    items: &collect::Items,
    bytes: u64,
    s: &crate::checks::Summary,
    redactor: Option<&Redactor>,
) -> std::io::Result<()> {
    // The host's files, not what collect adds (recorded.yaml and tool output, doctor.json, REDACTED.txt).
    let read =
        |k: &String| !k.starts_with(".rocmenv") && !k.ends_with(".json") && !k.ends_with(".txt");
    let count = |f: fn(&Item) -> bool| items.iter().filter(|(k, i)| read(k) && f(i)).count();
    let files = count(|i| matches!(i, Item::File(..)));
    let links = count(|i| matches!(i, Item::Link(_)));
    let mut tops: Vec<&str> = items
        .keys()
        .filter_map(|k| k.split('/').next())
        .filter(|t| !t.starts_with('.') && !t.contains('.'))
        .collect();
    tops.dedup();
    writeln!(
        out,
        "Wrote {} ({} KiB): {files} files and {links} links doctor read under {}/, with .rocmenv/recorded.yaml and doctor.json",
        path.display(),
        bytes.div_ceil(1024),
        tops.join("/, ")
    )?;
    let warnings = if s.warn == 1 { "warning" } else { "warnings" };
    writeln!(
        out,
        "doctor.json: {} passed, {} {warnings}, {} failed, {} skipped",
        s.pass, s.warn, s.fail, s.skip
    )?;
    if let Some(r) = redactor {
        writeln!(
            out,
            "Redacted: {} (REDACTED.txt in the bundle says what)",
            r.summary()
        )?;
    }
    writeln!(
        out,
        "Read it with: rocmenv doctor --sysroot {}",
        shlex::try_quote(&path.display().to_string())
            .map(|q| q.into_owned())
            .unwrap_or_else(|_| path.display().to_string())
    )
}
