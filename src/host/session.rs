//! Facts no file shows — who runs rocmenv, its environment, device-node owners, tool output —
//! behind one trait with a live and a recorded implementation.

use super::facts::{HipSeen, ToolOutcome};
use super::root::HostRoot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
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
    /// What the HIP runtime lists (live: asks it; a tree: its recorded `hip:`), or why it was not asked.
    fn hip_devices(&self) -> Result<HipSeen, String>;
    /// Why a fact is unknown in this session (shown in skips).
    fn describe(&self) -> String;
}

/// Asks the HIP runtime for its devices. The runtime module provides it: the host layer cannot import the runtime
/// (which reads the host), so whoever opens a live host hands it in.
pub type HipLister = fn() -> Result<HipSeen, String>;

/// The running host.
pub struct LiveSession {
    /// How long an external tool may run.
    pub tool_timeout: Duration,
    /// The HIP runtime's device list; `None`: not asked in this session.
    pub hip: Option<HipLister>,
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
            // A tool named with its arguments (`nvidia-smi -q -x`) runs the file found for its first word with them.
            Some(path) => run_with_timeout(tool, path, self.tool_timeout),
            None => ToolRun::NotRun(format!("{tool} is not on PATH")),
        }
    }

    fn hip_devices(&self) -> Result<HipSeen, String> {
        match self.hip {
            Some(list) => list(),
            None => Err("the HIP runtime is not asked by this command".into()),
        }
    }

    fn describe(&self) -> String {
        "live".into()
    }
}

/// Runs `path` with the arguments `tool` names after its first word (none for `rocminfo`, `-q -x` for
/// `nvidia-smi -q -x`), killing it after `timeout`: tools like rocminfo hang on broken drivers.
fn run_with_timeout(tool: &str, path: &str, timeout: Duration) -> ToolRun {
    use std::process::{Command, Stdio};
    use wait_timeout::ChildExt;
    let mut child = match Command::new(path)
        .args(tool.split_whitespace().skip(1))
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

/// `.rocmenv/recorded.yaml` in a host tree: the facts no file shows. `rocmenv collect` writes it; older files (no
/// `groups`) load as before.
#[derive(Debug, Default, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedFacts {
    /// Who ran rocmenv.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<RecordedUser>,
    /// `None`: not recorded, so unknown (not empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// Modes and owners of device nodes, by host path.
    #[serde(default)]
    pub nodes: BTreeMap<String, RecordedNode>,
    /// Tool outputs for `--deep`: tool → file, relative to `.rocmenv/`.
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
    /// How each tool ended when it was recorded (`rocmenv collect --deep`); a tool without one reads as `recorded`.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        with = "serde_yaml_ng::with::singleton_map_recursive"
    )]
    pub outcomes: BTreeMap<String, RecordedOutcome>,
    /// What the HIP runtime listed, where it was asked (under WSL, when rocminfo named no GPU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hip: Option<HipSeen>,
}

/// How a recorded tool ended, in `recorded.yaml`: `{exit: 0}`, `signalled`, `{timed_out: 10}`,
/// `{wait_failed: why}`, or `{not_run: why}` (then it has no output file).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedOutcome {
    /// It exited with this code.
    Exit(i32),
    /// A signal ended it.
    Signalled,
    /// It was killed after this many seconds.
    TimedOut(u64),
    /// Waiting for it failed.
    WaitFailed(String),
    /// It was not run, and why.
    NotRun(String),
}

impl RecordedOutcome {
    /// The outcome as it was recorded; `None` for output read from a tree (already `recorded`).
    fn of(o: &ToolOutcome) -> Option<Self> {
        Some(match o {
            ToolOutcome::Exited(c) => RecordedOutcome::Exit(*c),
            ToolOutcome::Signalled => RecordedOutcome::Signalled,
            ToolOutcome::TimedOut { seconds } => RecordedOutcome::TimedOut(*seconds),
            ToolOutcome::WaitFailed(w) => RecordedOutcome::WaitFailed(w.clone()),
            ToolOutcome::NotRun(w) => RecordedOutcome::NotRun(w.clone()),
            ToolOutcome::Recorded => return None,
        })
    }

    fn outcome(&self) -> ToolOutcome {
        match self {
            RecordedOutcome::Exit(c) => ToolOutcome::Exited(*c),
            RecordedOutcome::Signalled => ToolOutcome::Signalled,
            RecordedOutcome::TimedOut(s) => ToolOutcome::TimedOut { seconds: *s },
            RecordedOutcome::WaitFailed(w) => ToolOutcome::WaitFailed(w.clone()),
            RecordedOutcome::NotRun(w) => ToolOutcome::NotRun(w.clone()),
        }
    }
}

/// The user in `recorded.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedUser {
    /// Login name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// User id.
    pub uid: u32,
    /// Primary group id.
    pub gid: u32,
    /// Supplementary group ids as the process had them (`getgroups`); without them, membership comes from
    /// `/etc/group`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub groups: Option<Vec<u32>>,
}

/// A device node in `recorded.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedNode {
    /// Permission bits in octal (`"0660"`).
    pub mode: String,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
}

/// A session that answers from another and writes down every answer, so `rocmenv collect` can record them in
/// `recorded.yaml` (and the output of the tools it ran next to it).
pub struct RecordingSession<'a> {
    inner: &'a dyn Session,
    facts: Mutex<RecordedFacts>,
    outputs: Mutex<BTreeMap<String, String>>,
}

impl<'a> RecordingSession<'a> {
    /// Records what `inner` answers.
    pub fn new(inner: &'a dyn Session) -> Self {
        RecordingSession {
            inner,
            facts: Mutex::new(RecordedFacts::default()),
            outputs: Mutex::new(BTreeMap::new()),
        }
    }

    /// The facts recorded, and the tools' outputs by file name (relative to `.rocmenv/`).
    pub fn into_recorded(self) -> (RecordedFacts, BTreeMap<String, String>) {
        let facts = self.facts.into_inner().unwrap_or_else(|e| e.into_inner());
        let outputs = self.outputs.into_inner().unwrap_or_else(|e| e.into_inner());
        (facts, outputs)
    }

    fn facts(&self) -> std::sync::MutexGuard<'_, RecordedFacts> {
        self.facts.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The file a tool's recorded output goes to: `rocm-smi` → `rocm-smi.txt`.
fn output_file(tool: &str) -> String {
    let name: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{name}.txt")
}

impl Session for RecordingSession<'_> {
    fn identity(&self) -> Option<Identity> {
        let id = self.inner.identity();
        if let Some(id) = &id {
            self.facts().user = Some(RecordedUser {
                name: id.name.clone(),
                uid: id.uid,
                gid: id.gid,
                groups: id.supplementary.clone(),
            });
        }
        id
    }

    fn env(&self) -> Result<BTreeMap<String, String>, String> {
        let env = self.inner.env();
        if let Ok(e) = &env {
            self.facts().env = Some(e.clone());
        }
        env
    }

    fn node_meta(&self, host_path: &str) -> Option<NodeMeta> {
        let meta = self.inner.node_meta(host_path);
        if let Some(m) = meta {
            self.facts().nodes.insert(
                host_path.to_string(),
                RecordedNode {
                    mode: format!("{:04o}", m.mode),
                    uid: m.uid,
                    gid: m.gid,
                },
            );
        }
        meta
    }

    fn run_tool(&self, tool: &str, path: Option<&str>) -> ToolRun {
        let run = self.inner.run_tool(tool, path);
        let outcome = match &run {
            ToolRun::Output { text, outcome } => {
                let file = output_file(tool);
                self.facts().tools.insert(tool.to_string(), file.clone());
                self.outputs
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(file, text.clone());
                RecordedOutcome::of(outcome)
            }
            ToolRun::NotRun(why) => Some(RecordedOutcome::NotRun(why.clone())),
        };
        if let Some(o) = outcome {
            self.facts().outcomes.insert(tool.to_string(), o);
        }
        run
    }

    fn hip_devices(&self) -> Result<HipSeen, String> {
        let seen = self.inner.hip_devices();
        if let Ok(h) = &seen {
            self.facts().hip = Some(h.clone());
        }
        seen
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }
}

/// A host tree read with `--sysroot`: facts from `.rocmenv/recorded.yaml` when the tree has one.
pub struct RecordedSession {
    recorded: Option<RecordedFacts>,
    problem: Option<String>,
    root: HostRoot,
}

/// Where a host tree keeps its recorded facts.
pub const RECORDED_FILE: &str = "/.rocmenv/recorded.yaml";

impl RecordedSession {
    /// Reads the recorded file of `root`, if any. A malformed one is reported, not fatal.
    pub fn open(root: &HostRoot) -> Self {
        let (recorded, problem) = match root.read_text(RECORDED_FILE) {
            Ok(text) => match serde_yaml_ng::from_str::<RecordedFacts>(&text) {
                Ok(r) => (Some(r), None),
                // One line: serde quotes keys from the file, which may hold newlines (issue 13).
                Err(e) => (
                    None,
                    Some(format!(
                        "{RECORDED_FILE} is not valid: {}",
                        crate::text::one_line(&e.to_string())
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
            supplementary: u.groups.clone(),
        })
    }

    fn env(&self) -> Result<BTreeMap<String, String>, String> {
        match &self.recorded {
            Some(RecordedFacts { env: Some(env), .. }) => Ok(env.clone()),
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
        let recorded_outcome = self.recorded.as_ref().and_then(|r| r.outcomes.get(tool));
        if let Some(RecordedOutcome::NotRun(why)) = recorded_outcome {
            return ToolRun::NotRun(crate::text::one_line(why));
        }
        let Some(file) = self.recorded.as_ref().and_then(|r| r.tools.get(tool)) else {
            return ToolRun::NotRun(format!(
                "{tool} is not run under --sysroot and the tree has no recorded output"
            ));
        };
        // The file name comes from the tree: quoted through one_line, so a newline in it (a YAML scalar folded
        // over a blank line) cannot split the message; control characters name no file rocmenv records.
        let shown = crate::text::one_line(file);
        if file.contains("..") || file.starts_with('/') {
            return ToolRun::NotRun(format!("recorded output path `{shown}` leaves .rocmenv/"));
        }
        if file.chars().any(char::is_control) {
            return ToolRun::NotRun(format!(
                "recorded output path `{shown}` is not a file name (it holds control characters)"
            ));
        }
        // The same cap as a live tool's output; the tree's resolver keeps a link in .rocmenv/ inside the tree.
        match self
            .root
            .read_head(&format!("/.rocmenv/{file}"), TOOL_OUTPUT_CAP)
        {
            Ok(head) => ToolRun::Output {
                text: head.text,
                outcome: recorded_outcome
                    .map(RecordedOutcome::outcome)
                    .unwrap_or(ToolOutcome::Recorded),
            },
            Err(e) => ToolRun::NotRun(format!(
                "recorded output {}",
                crate::text::one_line(&e.to_string())
            )),
        }
    }

    fn hip_devices(&self) -> Result<HipSeen, String> {
        match &self.recorded {
            Some(RecordedFacts { hip: Some(h), .. }) => Ok(h.clone()),
            Some(_) => Err(format!("{RECORDED_FILE} records no HIP device list")),
            None => Err(self.describe()),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A session with fixed answers.
    struct Fixed;

    impl Session for Fixed {
        fn identity(&self) -> Option<Identity> {
            Some(Identity {
                name: Some("alice".into()),
                uid: 1000,
                gid: 1000,
                supplementary: Some(vec![44, 109]),
            })
        }
        fn env(&self) -> Result<BTreeMap<String, String>, String> {
            Ok([("PATH".to_string(), "/usr/bin".to_string())].into())
        }
        fn node_meta(&self, _: &str) -> Option<NodeMeta> {
            Some(NodeMeta {
                mode: 0o660,
                uid: 0,
                gid: 109,
            })
        }
        fn run_tool(&self, tool: &str, _: Option<&str>) -> ToolRun {
            match tool {
                "rocminfo" => ToolRun::Output {
                    text: "ROCk module is NOT loaded\n".into(),
                    outcome: ToolOutcome::Exited(1),
                },
                "rocm-smi" => ToolRun::Output {
                    text: "partial\n".into(),
                    outcome: ToolOutcome::TimedOut { seconds: 10 },
                },
                _ => ToolRun::NotRun(format!("{tool} is not on PATH")),
            }
        }
        fn hip_devices(&self) -> Result<HipSeen, String> {
            Ok(HipSeen {
                runtime_version: Some("6.1.40093".into()),
                devices: vec![crate::host::HipSeenDevice {
                    name: Some("AMD Radeon RX 6800 XT".into()),
                    ..Default::default()
                }],
                error: None,
            })
        }
        fn describe(&self) -> String {
            "fixed".into()
        }
    }

    #[test]
    fn what_a_recording_session_wrote_reads_back_the_same() {
        let rec = RecordingSession::new(&Fixed);
        let asked = [
            rec.run_tool("rocminfo", Some("/usr/bin/rocminfo")),
            rec.run_tool("rocm-smi", Some("/usr/bin/rocm-smi")),
            rec.run_tool("nvidia-smi", None),
        ];
        let id = rec.identity();
        let env = rec.env();
        let node = rec.node_meta("/dev/kfd");
        let hip = rec.hip_devices();
        let (facts, outputs) = rec.into_recorded();
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join(".rocmenv")).unwrap();
        std::fs::write(
            d.path().join(".rocmenv/recorded.yaml"),
            serde_yaml_ng::to_string(&facts).unwrap(),
        )
        .unwrap();
        for (f, t) in &outputs {
            std::fs::write(d.path().join(".rocmenv").join(f), t).unwrap();
        }
        let root = HostRoot::sysroot(d.path()).unwrap();
        let back = RecordedSession::open(&root);
        assert_eq!(back.describe(), format!("recorded in {RECORDED_FILE}"));
        for (tool, want) in ["rocminfo", "rocm-smi", "nvidia-smi"].iter().zip(asked) {
            assert_eq!(back.run_tool(tool, None), want, "{tool}");
        }
        assert_eq!(back.identity(), id);
        assert_eq!(back.env(), env);
        assert_eq!(back.node_meta("/dev/kfd"), node);
        assert_eq!(back.hip_devices(), hip);
    }

    #[test]
    fn recorded_files_without_groups_or_outcomes_still_load() {
        let old = "user: {name: alice, uid: 1000, gid: 1000}\nenv:\n  PATH: /usr/bin\nnodes: {}\ntools:\n  rocminfo: rocminfo.txt\n";
        let f: RecordedFacts = serde_yaml_ng::from_str(old).unwrap();
        assert_eq!(f.user.unwrap().groups, None);
        assert!(f.outcomes.is_empty());
        let with = "outcomes:\n  rocminfo: {exit: 1}\n  rocm-smi: signalled\n  nvidia-smi: {not_run: not on PATH}\n";
        let f: RecordedFacts = serde_yaml_ng::from_str(with).unwrap();
        assert_eq!(f.outcomes["rocminfo"], RecordedOutcome::Exit(1));
        assert_eq!(f.outcomes["rocm-smi"], RecordedOutcome::Signalled);
        let text = serde_yaml_ng::to_string(&f).unwrap();
        assert!(text.contains("rocminfo:\n    exit: 1"), "{text}");
    }
}
