//! `rocmenv run` and `rocmenv gc`: validate the flags, probe the host for devices and variables, then run through
//! the engine. `run` exits like `docker run`: the container's code, 124 timeout, 125 own failure, 130/143 signals.

use crate::engine::{self, DeviceVendor, Engine, Mount, OutputStream, RunSpec};
use crate::envplan;
use crate::error::Error;
use crate::host::{self, ProbeOptions};
use crate::matrix::Matrices;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

/// `rocmenv run`'s code for its own failures, as `docker run` uses it.
pub use crate::error::EXIT_RUN_FAILED;

/// Options of `rocmenv run`, parsed.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// `--image`.
    pub image: String,
    /// `--vendor`; `None` detects.
    pub vendor: Option<DeviceVendor>,
    /// `--gpu N`.
    pub gpu: Option<usize>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--memory` as given (`16m`).
    pub memory: Option<String>,
    /// `-e NAME=VALUE`.
    pub env: Vec<String>,
    /// `-v HOST:CONTAINER[:ro]`.
    pub volumes: Vec<String>,
    /// `--result PATH` and where it goes.
    pub result: Option<(String, Option<PathBuf>)>,
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

/// The flags that need no host: `-e` variables, `-v` mounts, `--memory` bytes.
struct Flags {
    env: Vec<(String, String)>,
    mounts: Vec<Mount>,
    memory: Option<u64>,
}

/// Validates the flags without touching the host: variables, mounts, memory.
fn parse_flags(o: &RunOptions) -> Result<Flags, Error> {
    let env = o
        .env
        .iter()
        .map(|e| match e.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(usage("--env", format!("`{e}` is not NAME=VALUE"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mounts = o
        .volumes
        .iter()
        .map(|v| {
            let parts: Vec<&str> = v.split(':').collect();
            match parts[..] {
                [h, c] | [h, c, "rw"] => Ok((h, c, false)),
                [h, c, "ro"] => Ok((h, c, true)),
                _ => Err(usage(
                    "--volume",
                    format!("`{v}` is not HOST:CONTAINER[:ro]"),
                )),
            }
            .and_then(|(h, c, read_only)| {
                let host = std::path::absolute(h)
                    .map_err(|e| usage("--volume", format!("{h}: {e}")))?
                    .display()
                    .to_string();
                Ok(Mount {
                    host,
                    container: c.to_string(),
                    read_only,
                })
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let memory = o
        .memory
        .as_deref()
        .map(|m| {
            parse_size(m).ok_or_else(|| {
                usage(
                    "--memory",
                    format!("`{m}` is not a size such as 512m or 16g"),
                )
            })
        })
        .transpose()?;
    Ok(Flags {
        env,
        mounts,
        memory,
    })
}

/// Turns the options into a `RunSpec`: probes the host (or `--sysroot`) for devices, groups and variables.
pub fn plan_run(
    o: &RunOptions,
    engine: Option<&Engine>,
    err: &mut dyn Write,
) -> Result<RunSpec, Error> {
    let Flags {
        env: user_env,
        mounts,
        memory,
    } = parse_flags(o)?;
    let m = Matrices::load(o.matrices.as_deref())?;
    let (root, session) = host::open(o.sysroot.as_deref(), Duration::from_secs(10))?;
    let facts = crate::inventory::probe(&root, session.as_ref(), &m, &ProbeOptions::default());
    let vendor = o.vendor.unwrap_or_else(|| DeviceVendor::detect(&facts));
    let mut env: Vec<(String, String)> = Vec::new();
    if let Some(v) = vendor.gpu_vendor() {
        let inputs: Vec<_> = envplan::inputs_from_host(&facts)
            .into_iter()
            .filter(|g| g.vendor == v)
            .collect();
        if !inputs.is_empty() {
            let plan = envplan::plan(&m, &inputs, None, o.gpu)
                .map_err(|e| usage("--gpu", e.to_string().replace("--device", "--gpu")))?;
            for w in &plan.warnings {
                let _ = writeln!(err, "rocmenv: warning: {w}");
            }
            // Device numbering is handled by mapping only the selected GPUs, so *_VISIBLE_DEVICES stay unset.
            env = plan.portable();
        }
    }
    for (k, v) in user_env {
        env.retain(|(n, _)| *n != k);
        env.push((k, v));
    }
    let daemon_cdi = match (vendor, engine) {
        (DeviceVendor::Nvidia, Some(e)) => e
            .info()
            .map(|i| !i.cdi_spec_dirs.is_empty())
            .unwrap_or(false),
        _ => false,
    };
    let groups = root.read_text("/etc/group").unwrap_or_default();
    let devices = engine::device_map(&facts, vendor, o.gpu, &groups, daemon_cdi)
        .map_err(|e| usage("--vendor", e))?;
    Ok(RunSpec {
        image: o.image.clone(),
        command: o.command.clone(),
        env,
        mounts,
        timeout: o.timeout,
        memory,
        devices,
        result_path: o.result.as_ref().map(|(p, _)| p.clone()),
        uploads: Vec::new(),
    })
}

/// Runs `rocmenv run`; the container's output goes to `out`/`err` as it comes. Returns the process exit code.
pub fn run(o: &RunOptions, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    match run_inner(o, out, err) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "rocmenv: {e}");
            EXIT_RUN_FAILED
        }
    }
}

fn run_inner(o: &RunOptions, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32, Error> {
    if o.print {
        let spec = plan_run(o, None, err)?;
        writeln!(out, "{}", engine::docker_run_line(&spec)).map_err(Error::Output)?;
        return Ok(0);
    }
    parse_flags(o)?;
    if o.probe {
        return crate::run_probe::probe_in_container(o, out, err);
    }
    let engine = Engine::connect_default()?;
    let spec = plan_run(o, Some(&engine), err)?;
    let outcome = engine.run(&spec, &mut |which, bytes| {
        let w: &mut dyn Write = match which {
            OutputStream::Stdout => out,
            OutputStream::Stderr => err,
        };
        let _ = w.write_all(bytes);
        let _ = w.flush();
    })?;
    if outcome.oom_killed {
        let limit = o
            .memory
            .as_deref()
            .map_or(String::new(), |m| format!(" (--memory {m})"));
        let _ = writeln!(
            err,
            "rocmenv: the container ran out of memory and the kernel's OOM killer ended it{limit}"
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
    if let Some((path, to)) = &o.result {
        let to = to
            .clone()
            .unwrap_or_else(|| PathBuf::from(path.rsplit('/').next().unwrap_or("result")));
        match &outcome.result_file {
            Some(data) => std::fs::write(&to, data)
                .map_err(|e| Error::Environment(format!("cannot write {}: {e}", to.display())))?,
            None => {
                let _ = writeln!(
                    err,
                    "rocmenv: the command did not leave {path} in the container"
                );
            }
        }
    }
    Ok(outcome.process_exit_code())
}

/// Runs `rocmenv gc`: removes leftover managed containers and lists them on `out`.
pub fn gc(json: bool, out: &mut dyn Write) -> Result<i32, Error> {
    let engine = Engine::connect_default()?;
    let removed = engine.gc()?;
    let res = if json {
        serde_json::to_string_pretty(&removed)
            .map_err(std::io::Error::other)
            .and_then(|d| writeln!(out, "{d}"))
    } else if removed.is_empty() {
        writeln!(out, "no leftover rocmenv containers")
    } else {
        let names: Vec<String> = removed
            .iter()
            .map(|c| format!("{} ({})", c.name, c.state))
            .collect();
        writeln!(
            out,
            "removed {} container(s): {}",
            removed.len(),
            names.join(", ")
        )
    };
    res.map_err(Error::Output)?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("16m"), Some(16 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("lots"), None);
    }
}
