//! Facts no file shows — who runs rocmenv, its environment, device-node owners, tool output —
//! behind one trait with a live and a recorded implementation.

use super::facts::ToolOutcome;
use super::root::HostRoot;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Who runs rocmenv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Login name, when known.
    pub name: Option<String>,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Supplementary group ids, when the session knows them (live); recorded sessions derive them from `/etc/group`.
    pub supplementary: Option<Vec<u32>>,
}

/// Owner and mode of a device node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeMeta {
    /// Permission bits.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
}

/// What running a tool gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolRun {
    /// It ran (or was recorded) and printed this (stdout and stderr together).
    Output {
        /// The text.
        text: String,
        /// How it ended.
        outcome: ToolOutcome,
    },
    /// It could not be run, and why.
    NotRun(String),
}

/// The seam for facts no file shows.
pub trait Session {
    /// Who runs rocmenv; `None` when not known.
    fn identity(&self) -> Option<Identity>;
    /// The environment rocmenv runs with, or why it is not known (a host tree that recorded none).
    fn env(&self) -> Result<BTreeMap<String, String>, String>;
    /// Owner and mode of a device node; `None` when unknown.
    fn node_meta(&self, host_path: &str) -> Option<NodeMeta>;
    /// Runs a tool (`rocminfo`, `nvidia-smi`) at `path`, the file PATH lookup found (`None`: not on PATH, so it is
    /// not run), or returns its recorded output.
    fn run_tool(&self, tool: &str, path: Option<&str>) -> ToolRun;
    /// Why a fact is unknown in this session (shown in skips).
    fn describe(&self) -> String;
}

/// The running host.
pub struct LiveSession {
    /// How long an external tool may run.
    pub tool_timeout: Duration,
}

impl Session for LiveSession {
    fn identity(&self) -> Option<Identity> {
        // SAFETY: getuid/getgid/getgroups only read process credentials.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
        let supplementary = if n >= 0 {
            let mut buf = vec![0 as libc::gid_t; n as usize];
            let got = unsafe { libc::getgroups(n, buf.as_mut_ptr()) };
            (got >= 0).then(|| buf[..got as usize].to_vec())
        } else {
            None
        };
        Some(Identity {
            name: std::env::var("USER").ok().filter(|s| !s.is_empty()),
            uid,
            gid,
            supplementary,
        })
    }

    fn env(&self) -> Result<BTreeMap<String, String>, String> {
        Ok(std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect())
    }

    fn node_meta(&self, host_path: &str) -> Option<NodeMeta> {
        use std::os::unix::fs::MetadataExt;
        let m = HostRoot::live().metadata(host_path).ok()?;
        Some(NodeMeta {
            mode: m.mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        })
    }

    fn run_tool(&self, tool: &str, path: Option<&str>) -> ToolRun {
        match path {
            Some(path) => run_with_timeout(tool, path, self.tool_timeout),
            None => ToolRun::NotRun(format!("{tool} is not on PATH")),
        }
    }

    fn describe(&self) -> String {
        "live".into()
    }
}

/// Runs `path` with no arguments, killing it after `timeout`: tools like rocminfo hang on broken drivers.
fn run_with_timeout(tool: &str, path: &str, timeout: Duration) -> ToolRun {
    use std::process::{Command, Stdio};
    use wait_timeout::ChildExt;
    let mut child = match Command::new(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return ToolRun::NotRun(format!("{tool} could not be started: {e}")),
    };
    // Read pipes on threads so a chatty tool cannot block on a full pipe.
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let t_out = std::thread::spawn(move || read_capped(out.as_mut()));
    let t_err = std::thread::spawn(move || read_capped(err.as_mut()));
    let outcome = match child.wait_timeout(timeout) {
        Ok(Some(status)) => match status.code() {
            Some(c) => ToolOutcome::Exited(c),
            None => ToolOutcome::Signalled,
        },
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            ToolOutcome::TimedOut {
                seconds: timeout.as_secs(),
            }
        }
        Err(e) => ToolOutcome::WaitFailed(e.to_string()),
    };
    let mut text = t_out.join().unwrap_or_default();
    text.push_str(&t_err.join().unwrap_or_default());
    ToolRun::Output { text, outcome }
}

/// The most output of a tool that is kept: rocminfo on 8 GPUs prints about 100 KiB.
const TOOL_OUTPUT_CAP: u64 = 4 << 20;

fn read_capped<R: std::io::Read>(r: Option<&mut R>) -> String {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Some(r) = r {
        let _ = r.take(TOOL_OUTPUT_CAP).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// `.rocmenv/recorded.yaml` in a host tree.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Recorded {
    #[serde(default)]
    user: Option<RecordedUser>,
    /// `None`: not recorded, so unknown (not empty).
    #[serde(default)]
    env: Option<BTreeMap<String, String>>,
    #[serde(default)]
    nodes: BTreeMap<String, RecordedNode>,
    #[serde(default)]
    tools: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordedUser {
    #[serde(default)]
    name: Option<String>,
    uid: u32,
    gid: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordedNode {
    mode: String,
    uid: u32,
    gid: u32,
}

/// A host tree read with `--sysroot`: facts from `.rocmenv/recorded.yaml` when the tree has one.
pub struct RecordedSession {
    recorded: Option<Recorded>,
    problem: Option<String>,
    root: HostRoot,
}

/// Where a host tree keeps its recorded facts.
pub const RECORDED_FILE: &str = "/.rocmenv/recorded.yaml";

impl RecordedSession {
    /// Reads the recorded file of `root`, if any. A malformed one is reported, not fatal.
    pub fn open(root: &HostRoot) -> Self {
        let (recorded, problem) = match root.read_text(RECORDED_FILE) {
            Ok(text) => match serde_yaml_ng::from_str::<Recorded>(&text) {
                Ok(r) => (Some(r), None),
                // One line: serde quotes keys from the file, which may hold newlines (issue 13).
                Err(e) => (
                    None,
                    Some(format!(
                        "{RECORDED_FILE} is not valid: {}",
                        crate::sanitize::one_line(&e.to_string())
                    )),
                ),
            },
            Err(e) if e.is_missing() => (None, None),
            Err(e) => (None, Some(e.to_string())),
        };
        RecordedSession {
            recorded,
            problem,
            root: root.clone(),
        }
    }
}

impl Session for RecordedSession {
    fn identity(&self) -> Option<Identity> {
        let u = self.recorded.as_ref()?.user.as_ref()?;
        Some(Identity {
            name: u.name.clone(),
            uid: u.uid,
            gid: u.gid,
            supplementary: None,
        })
    }

    fn env(&self) -> Result<BTreeMap<String, String>, String> {
        match &self.recorded {
            Some(Recorded { env: Some(env), .. }) => Ok(env.clone()),
            Some(_) => Err(format!("{RECORDED_FILE} records no env")),
            None => Err(self.describe()),
        }
    }

    fn node_meta(&self, host_path: &str) -> Option<NodeMeta> {
        if let Some(n) = self.recorded.as_ref().and_then(|r| r.nodes.get(host_path)) {
            let mode = u32::from_str_radix(n.mode.trim_start_matches("0o"), 8).ok()?;
            return Some(NodeMeta {
                mode,
                uid: n.uid,
                gid: n.gid,
            });
        }
        // A mounted system keeps real owners; a git checkout does not, so only real device files count.
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let m = self.root.metadata(host_path).ok()?;
        m.file_type().is_char_device().then(|| NodeMeta {
            mode: m.mode() & 0o7777,
            uid: m.uid(),
            gid: m.gid(),
        })
    }

    fn run_tool(&self, tool: &str, _path: Option<&str>) -> ToolRun {
        let Some(file) = self.recorded.as_ref().and_then(|r| r.tools.get(tool)) else {
            return ToolRun::NotRun(format!(
                "{tool} is not run under --sysroot and the tree has no recorded output"
            ));
        };
        if file.contains("..") || file.starts_with('/') {
            return ToolRun::NotRun(format!("recorded output path `{file}` leaves .rocmenv/"));
        }
        // The same cap as a live tool's output; the tree's resolver keeps a link in .rocmenv/ inside the tree.
        match self
            .root
            .read_head(&format!("/.rocmenv/{file}"), TOOL_OUTPUT_CAP)
        {
            Ok(head) => ToolRun::Output {
                text: head.text,
                outcome: ToolOutcome::Recorded,
            },
            Err(e) => ToolRun::NotRun(format!("recorded output {e}")),
        }
    }

    fn describe(&self) -> String {
        match (&self.recorded, &self.problem) {
            (_, Some(p)) => p.clone(),
            (Some(_), None) => format!("recorded in {RECORDED_FILE}"),
            (None, None) => format!("not recorded: the tree has no {RECORDED_FILE}"),
        }
    }
}
