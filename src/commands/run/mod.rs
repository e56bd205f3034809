//! `rocmenv run`: validate the flags into a `RunPlan`, probe the host for devices and variables, then run through
//! the engine (`probe` copies rocmenv itself in instead of a command). `run` exits like `docker run`: the
//! container's code, 124 timeout, 125 own failure, 130/143 signals.

mod probe;

use crate::cli::RunArgs;
use crate::error::Error;
use crate::ops::run::{plan_run, RunPlan};
use crate::ops::Ctx;
use crate::ops::{docker_run_line, Mount, MountKind, OutputStream};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// A usage error naming `flag`.
pub(super) fn usage(flag: &str, message: String) -> Error {
    Error::Usage {
        flag: flag.into(),
        message,
    }
}

/// `rocmenv run`'s code for its own failures, as `docker run` uses it.
pub use crate::error::EXIT_RUN_FAILED;

/// `16m`, `2g`, `512k`, `1048576` → bytes.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').unwrap_or(&s);
    let (num, shift) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 10),
        'm' => (&s[..s.len() - 1], 20),
        'g' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    num.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Validates the flags without touching the host: the image reference, variables, mounts, memory.
pub fn plan(a: RunArgs) -> Result<RunPlan, Error> {
    crate::sanitize::image_reference("image", &a.image)?;
    let env = a
        .env
        .iter()
        .map(|e| match e.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(usage("--env", format!("`{e}` is not NAME=VALUE"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mounts = a
        .volume
        .iter()
        .map(|v| parse_volume(v))
        .collect::<Result<Vec<_>, _>>()?;
    let memory = a
        .memory
        .map(|m| match parse_size(&m) {
            Some(bytes) => Ok((m, bytes)),
            None => Err(usage(
                "--memory",
                format!("`{m}` is not a size such as 512m or 16g"),
            )),
        })
        .transpose()?;
    let result = a
        .result
        .map(|path| {
            let to = match a.result_to {
                Some(to) => to,
                None => match path.trim_end_matches('/').rsplit('/').next() {
                    Some(name) if !name.is_empty() && name != "." && name != ".." => {
                        PathBuf::from(name)
                    }
                    _ => {
                        return Err(usage(
                            "--result",
                            format!("`{path}` names no file; name the file the command writes"),
                        ))
                    }
                },
            };
            Ok((path, to))
        })
        .transpose()?;
    Ok(RunPlan {
        image: a.image,
        vendor: a.vendor,
        gpu: a.gpu,
        timeout: a.timeout.map(Duration::from_secs),
        memory,
        env,
        mounts,
        result,
        print: a.print,
        command: a.command,
        probe: a.probe,
        probe_binary: a.probe_binary,
        security: a.security,
        strict: a.strict,
    })
}

/// `SOURCE:CONTAINER[:ro|:rw]` → a mount, as the docker CLI reads `-v`: a source starting with `/` is a host path, a
/// bare name (`myvol`) a named volume, anything else (`./x`, `~/x`, `x/y`) an error, since the host path must be
/// absolute. Pure: whether the host path exists is the daemon's to say (it refuses a missing one, never creates it).
fn parse_volume(v: &str) -> Result<Mount, Error> {
    let parts: Vec<&str> = v.split(':').collect();
    let (src, c, read_only) = match parts[..] {
        [s, c] | [s, c, "rw"] => (s, c, false),
        [s, c, "ro"] => (s, c, true),
        _ => {
            return Err(usage(
                "--volume",
                format!("`{v}` is not HOST:CONTAINER[:ro] or VOLUME:CONTAINER[:ro]"),
            ))
        }
    };
    if !c.starts_with('/') {
        return Err(usage(
            "--volume",
            format!("`{v}`: the container path `{c}` must be absolute"),
        ));
    }
    let kind = if src.starts_with('/') {
        MountKind::Bind
    } else if is_volume_name(src) {
        MountKind::Volume
    } else {
        let hint = match src.strip_prefix('~') {
            Some(rest) => {
                format!("the shell expands `~` only at the start of a word: write $HOME{rest}")
            }
            None => format!(
                "write it as an absolute path, e.g. \"$PWD/{}\"",
                src.trim_start_matches("./")
            ),
        };
        return Err(usage(
            "--volume",
            format!(
                "`{v}`: the host path `{src}` is not absolute, and not a volume name ([A-Za-z0-9][A-Za-z0-9_.-]+); {hint}"
            ),
        ));
    };
    Ok(Mount {
        kind,
        source: src.to_string(),
        container: c.to_string(),
        read_only,
    })
}

/// A name the local volume driver accepts, as the docker CLI checks it: `[a-zA-Z0-9][a-zA-Z0-9_.-]+`.
fn is_volume_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// Runs `rocmenv run`; the container's output goes to `out`/`err` as it comes. Returns the process exit code.
pub fn exec(a: RunArgs, ctx: &Ctx, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match plan(a)
        .and_then(|o| run(ctx, &o, out, err))
        .map_err(|e| e.named_as_flags(&[("device", "gpu")]))
    {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "rocmenv: {e}");
            EXIT_RUN_FAILED
        }
    }
}

fn run(ctx: &Ctx, o: &RunPlan, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Error> {
    if o.print {
        let spec = plan_run(ctx, o, None, &mut |ev| super::log_event(err, &ev))?;
        writeln!(out, "{}", docker_run_line(&spec)).map_err(Error::Output)?;
        return Ok(0);
    }
    if o.probe {
        return probe::probe_in_container(ctx, o, out, err);
    }
    let engine = ctx.engine()?;
    let spec = plan_run(ctx, o, Some(engine), &mut |ev| super::log_event(err, &ev))?;
    // A bind mount the image's user cannot read fails inside with a bare "Permission denied": say why first.
    if let Some(user) = engine.image_user(&o.image) {
        for m in o.mounts.iter().filter(|m| m.kind == MountKind::Bind) {
            if let Some(note) = unreadable_bind(&m.source, &user) {
                let _ = writeln!(err, "rocmenv run: note: {note}");
            }
        }
    }
    let outcome = engine.run(&spec, &mut |which, bytes| {
        let w: &mut dyn Write = match which {
            OutputStream::Stdout => out,
            OutputStream::Stderr => err,
        };
        let _ = w.write_all(bytes);
        let _ = w.flush();
    })?;
    if let Some(why) = &outcome.start_error {
        let _ = writeln!(err, "rocmenv: the command did not start: {why}");
    }
    if outcome.oom_killed {
        let limit = o
            .memory
            .as_ref()
            .map_or(String::new(), |(m, _)| format!(" (--memory {m})"));
        let _ = writeln!(
            err,
            "rocmenv: the container ran out of memory and the kernel's OOM killer ended it{limit}"
        );
    }
    // cgroup v2 engines sometimes lose the OOM event: a SIGKILL under a memory limit is then most likely the same.
    let unreported_oom = !outcome.oom_killed
        && !outcome.timed_out
        && outcome.interrupted.is_none()
        && outcome.exit_code == Some(137);
    if let (true, Some((m, _))) = (unreported_oom, &o.memory) {
        let _ = writeln!(
            err,
            "rocmenv: the container was killed (SIGKILL, exit 137) under --memory {m}: most likely the kernel's OOM killer, which the engine did not report"
        );
    }
    if outcome.timed_out {
        let s = o.timeout.map_or(0, |t| t.as_secs());
        let _ = writeln!(
            err,
            "rocmenv: the command outlived --timeout {s} s; container killed and removed"
        );
    }
    if outcome.interrupted.is_some() {
        let _ = writeln!(err, "rocmenv: interrupted; container stopped and removed");
    }
    let mut code = outcome.process_exit_code();
    // A run that was stopped has no result to copy; saying so would only repeat the stop.
    if let (Some((path, to)), None) = (&o.result, outcome.interrupted) {
        match &outcome.result_file {
            Some(data) => crate::ops::files::write_atomic(to, data)?,
            None => {
                let why = outcome
                    .result_error
                    .as_deref()
                    .unwrap_or("does not exist in the container");
                let _ = writeln!(
                    err,
                    "rocmenv: --result {path}: {why}; nothing was written to {}",
                    to.display()
                );
                // A command that succeeded without its result is a failed run; a failing one keeps its own code.
                if code == 0 {
                    code = EXIT_RUN_FAILED;
                }
            }
        }
    }
    Ok(code)
}

/// Why the image's non-root `user` may not read the bind source `path` (a root-only directory), or `None`.
pub fn unreadable_bind(path: &str, user: &str) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = user.split(':').next().unwrap_or(user);
    if uid == "0" || uid == "root" {
        return None;
    }
    let meta = std::fs::metadata(path).ok()?;
    let mode = meta.mode();
    let need = if meta.is_dir() { 0o005 } else { 0o004 };
    // Owner and group bits would apply only if the container's uid or gid matched; the other bits always do.
    if mode & need == need || uid.parse::<u32>().ok() == Some(meta.uid()) {
        return None;
    }
    Some(format!(
        "-v {path}: the image runs as user {user}, and {path} (owner uid {}, mode {:04o}) is closed to other users, so the command will get \"Permission denied\" there; make it readable (chmod o+rX {path}), or bind a copy this user can read",
        meta.uid(),
        mode & 0o7777
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25: a read-only bind of a root-only directory failed inside (uid 1000) with no explanation.
    #[test]
    fn a_root_only_bind_source_is_explained() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("secret");
        std::fs::create_dir(&p).unwrap();
        let path = p.to_str().unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700)).unwrap();
        let owner = {
            use std::os::unix::fs::MetadataExt;
            std::fs::metadata(&p).unwrap().uid()
        };
        let other = if owner == 1000 { "1001" } else { "1000" };
        let note = unreadable_bind(path, other).expect("a note");
        assert!(
            note.contains("mode 0700") && note.contains("chmod o+rX"),
            "{note}"
        );
        assert_eq!(unreadable_bind(path, "root"), None);
        assert_eq!(unreadable_bind(path, &owner.to_string()), None);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(unreadable_bind(path, other), None);
    }

    /// Issue 10: `-v myvol:/data` made a host directory `./myvol`, `-v '~/x:/x'` a literal `./~`; the docker CLI
    /// reads a bare name as a named volume and refuses a relative host path.
    #[test]
    fn volumes_follow_the_docker_cli() {
        let m = parse_volume("myvol:/data").unwrap();
        assert_eq!(
            (m.kind, m.source.as_str(), m.container.as_str()),
            (MountKind::Volume, "myvol", "/data")
        );
        let m = parse_volume("/srv/data:/data:ro").unwrap();
        assert_eq!(
            (m.kind, m.source.as_str(), m.read_only),
            (MountKind::Bind, "/srv/data", true)
        );
        for bad in [
            "./x:/x", "~/x:/x", "x/y:/x", "..:/x", "x:/x", "/a:rel", "/a:/b:zz", "/a",
        ] {
            let e = parse_volume(bad).unwrap_err().to_string();
            assert!(
                e.starts_with("--volume: `") && e.contains(bad),
                "{bad}: {e}"
            );
        }
        assert!(parse_volume("~/x:/x")
            .unwrap_err()
            .to_string()
            .contains("$HOME/x"));
        assert!(parse_volume("./x:/x")
            .unwrap_err()
            .to_string()
            .contains("$PWD/x"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16m"), Some(16 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("lots"), None);
    }
}
