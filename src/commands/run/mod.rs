//! `rocmenv run`: validate the flags into a `RunPlan`, probe the host for devices and variables, then run through
//! the engine (`probe` copies rocmenv itself in instead of a command). `run` exits like `docker run`: the
//! container's code, 124 timeout, 125 own failure, 130/143 signals.

mod probe;

use crate::cli::RunArgs;
use crate::engine::{self, Engine, Mount, MountKind, OutputStream, RunSpec};
use crate::envplan;
use crate::error::Error;
use crate::host::{self, ProbeOptions};
use crate::matrix::Matrices;
use crate::vendor::Vendor;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// `rocmenv run`'s code for its own failures, as `docker run` uses it.
pub use crate::error::EXIT_RUN_FAILED;

/// `rocmenv run`'s flags, validated without touching the host: the high-level form the rest of the command uses.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// `--image`, checked as a reference.
    pub image: String,
    /// `--vendor`; `None` detects.
    pub vendor: Option<Vendor>,
    /// `--gpu N`.
    pub gpu: Option<usize>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--memory` as given (`16m`) and in bytes.
    pub memory: Option<(String, u64)>,
    /// `-e NAME=VALUE`, split.
    pub env: Vec<(String, String)>,
    /// `-v HOST:CONTAINER[:ro]`, parsed.
    pub mounts: Vec<Mount>,
    /// `--result PATH` and the file it is written to.
    pub result: Option<(String, PathBuf)>,
    /// `--print`.
    pub print: bool,
    /// `--sysroot` (with `--print`).
    pub sysroot: Option<PathBuf>,
    /// `--matrices`.
    pub matrices: Option<PathBuf>,
    /// The command.
    pub command: Vec<String>,
    /// `--probe`: copy this rocmenv into the container and run `rocmenv probe --json` there instead of a command.
    pub probe: bool,
    /// `--probe-binary`: the binary `--probe` copies in; `None` copies the running one.
    pub probe_binary: Option<PathBuf>,
    /// `--security`.
    pub security: engine::Security,
}

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

pub(crate) fn usage(flag: &str, message: String) -> Error {
    Error::Usage {
        flag: flag.into(),
        message,
    }
}

impl RunPlan {
    /// Validates the flags without touching the host: the image reference, variables, mounts, memory.
    pub fn from_args(a: RunArgs, matrices: Option<PathBuf>) -> Result<RunPlan, Error> {
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
            sysroot: a.sysroot,
            matrices,
            command: a.command,
            probe: a.probe,
            probe_binary: a.probe_binary,
            security: a.security,
        })
    }
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

/// Turns the options into a `RunSpec`: probes the host (or `--sysroot`) for devices, groups and variables.
pub fn plan_run(
    o: &RunPlan,
    engine: Option<&Engine>,
    err: &mut dyn Write,
) -> Result<RunSpec, Error> {
    let m = Matrices::load(o.matrices.as_deref())?;
    let (root, session) = host::open(o.sysroot.as_deref(), Duration::from_secs(10))?;
    let facts = crate::inventory::probe(&root, session.as_ref(), &m, &ProbeOptions::default());
    let vendor = o.vendor.unwrap_or_else(|| facts.vendor());
    if let Some(n) = o.gpu {
        // A GPU that is not there must not quietly become a CPU run.
        let (amd, nvidia) = (facts.amd_gpus().count(), facts.nvidia_gpus().count());
        let count = match vendor {
            Vendor::Amd => amd,
            Vendor::Nvidia => nvidia,
            Vendor::Cpu => 0,
        };
        if n >= count {
            let have = |gpus: Vec<&crate::host::Gpu>| {
                gpus.iter()
                    .map(|g| g.label())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let why = match vendor {
                _ if facts.gpus.is_empty() => {
                    format!("GPU {n} does not exist; this host has no GPU")
                }
                Vendor::Cpu => {
                    format!("--vendor cpu maps no GPU, so GPU {n} cannot be given")
                }
                Vendor::Amd if amd == 0 => {
                    format!("GPU {n} does not exist; this host has no AMD GPU")
                }
                Vendor::Nvidia if nvidia == 0 => {
                    format!("GPU {n} does not exist; this host has no NVIDIA GPU")
                }
                Vendor::Amd => format!(
                    "GPU {n} does not exist; this host's AMD GPUs are {}",
                    have(facts.amd_gpus().collect())
                ),
                Vendor::Nvidia => format!(
                    "GPU {n} does not exist; this host's NVIDIA GPUs are {}",
                    have(facts.nvidia_gpus().collect())
                ),
            };
            return Err(usage("--gpu", why));
        }
    }
    let mut env: Vec<(String, String)> = Vec::new();
    if let Some(v) = vendor.gpu() {
        let inputs: Vec<_> = envplan::inputs_from_host(&facts)
            .into_iter()
            .filter(|g| g.vendor == v)
            .collect();
        if !inputs.is_empty() {
            let plan = envplan::plan(&m, &inputs, None, o.gpu)
                .map_err(|e| e.named_as_flags(&[("device", "gpu")]))?;
            for w in &plan.warnings {
                let _ = writeln!(err, "rocmenv: warning: {w}");
            }
            // Device numbering is handled by mapping only the selected GPUs, so *_VISIBLE_DEVICES stay unset.
            env = plan.image_env();
        }
    }
    for (k, v) in &o.env {
        env.retain(|(n, _)| n != k);
        env.push((k.clone(), v.clone()));
    }
    let daemon_cdi = match (vendor, engine) {
        (Vendor::Nvidia, Some(e)) => e
            .info()
            .map(|i| !i.cdi_spec_dirs.is_empty())
            .unwrap_or(false),
        _ => false,
    };
    let groups = root.read_text("/etc/group").unwrap_or_default();
    let devices = engine::device_map(&facts, vendor, o.gpu, &groups, daemon_cdi, o.security)
        .map_err(|e| usage("--vendor", e))?;
    if !devices.gpus.is_empty() {
        let _ = writeln!(err, "rocmenv run: maps {}", devices.gpus.join(", "));
    } else if facts.wsl && o.vendor.is_none() {
        let _ = writeln!(err, "rocmenv run: note: WSL2 reaches the GPU only through /dev/dxg, which rocmenv does not map: this runs on the CPU");
    } else if o.vendor != Some(Vendor::Cpu) {
        // A run that could have had a GPU says it has none; `--vendor cpu` asked for exactly that.
        let _ = writeln!(err, "rocmenv run: note: maps no GPU ({}): the command runs on the CPU; --vendor cpu runs there without this note", if facts.gpus.is_empty() { "this host shows none" } else { "none of this vendor's" });
    }
    Ok(RunSpec {
        image: o.image.clone(),
        command: o.command.clone(),
        env,
        mounts: o.mounts.clone(),
        timeout: o.timeout,
        memory: o.memory.as_ref().map(|(_, b)| *b),
        devices,
        result_path: o.result.as_ref().map(|(p, _)| p.clone()),
        uploads: Vec::new(),
    })
}

/// Runs `rocmenv run`; the container's output goes to `out`/`err` as it comes. Returns the process exit code.
pub fn exec(
    a: RunArgs,
    matrices: Option<PathBuf>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match RunPlan::from_args(a, matrices)
        .and_then(|o| run(&o, out, err))
        .map_err(|e| e.named_as_flags(&[]))
    {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "rocmenv: {e}");
            EXIT_RUN_FAILED
        }
    }
}

fn run(o: &RunPlan, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Error> {
    if o.print {
        let spec = plan_run(o, None, err)?;
        writeln!(out, "{}", engine::docker_run_line(&spec)).map_err(Error::Output)?;
        return Ok(0);
    }
    if o.probe {
        return probe::probe_in_container(o, out, err);
    }
    let engine = Engine::connect_default()?;
    let spec = plan_run(o, Some(&engine), err)?;
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
            Some(data) => std::fs::write(to, data).map_err(|e| Error::io("write", to, e))?,
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
