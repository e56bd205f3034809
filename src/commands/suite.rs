//! What `smoke` and `bench` share: pick the vendor, hand `run.py` its plan in a container (through the engine, the
//! suite copied in) or on the host, show each test as it finishes, and turn a crash, a hang, a signal or a silent
//! suite into a failed result instead of a pass. Results go to `--json` and `--junit` on every path.

use super::run::{plan_run, RunPlan};
use crate::cli::SuiteArgs;
use crate::engine::{DeviceVendor, Engine, OutputStream, StopSignals, Upload};
use crate::error::{Error, StopSignal};
use crate::matrix::Matrices;
use crate::report::{self, Style};
use crate::suites::{self, Plan, ResultError, SuiteResult, TestResult};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where the suite goes inside a container: `/tmp` exists in every image and is writable by any user.
const CONTAINER_DIR: &str = "/tmp/rocmenv-suite";
/// The result file inside a container (outside the uploaded directory, which root owns).
const CONTAINER_RESULT: &str = "/tmp/rocmenv-suite-result.json";
/// How many lines of the suite's own output a failure shows.
const TAIL: usize = 15;

/// How a suite run ended.
pub(crate) struct Finished {
    /// The result: the suite's own document, or the one rocmenv made for a run that did not finish.
    pub result: SuiteResult,
    /// The signal that stopped it, if one did.
    pub signal: Option<StopSignal>,
}

/// The vendor a run uses: `--vendor`, else what the host's GPUs suggest.
pub(crate) fn vendor(args: &SuiteArgs, m: &Matrices) -> Result<DeviceVendor, Error> {
    match args.vendor {
        Some(v) => Ok(v.into()),
        None => Ok(DeviceVendor::detect(&crate::inventory::read(None, m)?)),
    }
}

/// The name a plan and a result use for `v`.
pub(crate) fn vendor_name(v: DeviceVendor) -> &'static str {
    match v {
        DeviceVendor::Amd => "amd",
        DeviceVendor::Nvidia => "nvidia",
        DeviceVendor::Cpu => "cpu",
    }
}

/// Collects `run.py`'s stdout into lines, printing a row for each finished test.
struct Progress<'a> {
    pending: Vec<u8>,
    finished: Vec<TestResult>,
    style: Style,
    out: &'a mut dyn Write,
}

impl Progress<'_> {
    fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            if let Some(t) = suites::parse_progress(&String::from_utf8_lossy(&line)) {
                let _ = report::render_suite_test(&t, self.style, self.out);
                let _ = self.out.flush();
                self.finished.push(t);
            }
        }
    }
}

/// Runs `plan` where `args` says and returns its result.
pub(crate) fn run(
    args: &SuiteArgs,
    matrices: Option<PathBuf>,
    vendor: DeviceVendor,
    plan: &Plan,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Finished, Error> {
    let plan_json =
        serde_json::to_vec_pretty(plan).map_err(|e| Error::Environment(e.to_string()))?;
    let timeout = args.timeout.map(Duration::from_secs);
    let mut progress = Progress {
        pending: Vec::new(),
        finished: Vec::new(),
        style,
        out,
    };
    let (result_bytes, logs, ended) = match &args.image {
        Some(image) => in_container(
            args,
            image,
            matrices,
            vendor,
            timeout,
            &plan_json,
            &mut progress,
            err,
        )?,
        None => on_host(&args.python, timeout, &plan_json, &mut progress)?,
    };
    progress.feed(b"\n");
    let finished = progress.finished;
    let tail = suites::tail_lines(&String::from_utf8_lossy(&logs), TAIL);
    let failed = |name: &str, reason: String| {
        SuiteResult::failed_run(plan.kind, plan.level, finished.clone(), name, reason, &tail)
    };
    let (mut result, signal) = match ended {
        Ended::Signal(s) => (
            failed(
                "interrupted",
                format!("{} stopped the suite; the tests above finished", s.name()),
            ),
            Some(s),
        ),
        Ended::TimedOut(t) => (
            failed(
                "timeout",
                format!(
                    "the suite outlived --timeout {} s and was killed",
                    t.as_secs()
                ),
            ),
            None,
        ),
        Ended::Exited(code) => match suites::parse_result(result_bytes.as_deref()) {
            Ok(r) => (r, None),
            Err(e) => {
                let how = match code {
                    Some(c) => format!("exit code {c}"),
                    None => "killed by a signal".into(),
                };
                let why = match e {
                    ResultError::Missing if code == Some(2) => {
                        "run.py refused its plan (exit 2)".to_string()
                    }
                    e => format!("{e} ({how})"),
                };
                (failed("run", why), None)
            }
        },
    };
    // The suite ran here (on this host, or in a container on it): the report names this node.
    result.node = crate::report::node::node_name(true);
    Ok(Finished { result, signal })
}

/// What a run left: the result file's bytes (if any), the suite's own output, how its process ended.
type Ran = (Option<Vec<u8>>, Vec<u8>, Ended);

/// How the suite's process ended.
enum Ended {
    Exited(Option<i32>),
    TimedOut(Duration),
    Signal(StopSignal),
}

/// The suite in a container of `image`: the suite files and the plan are copied in through the API.
#[allow(clippy::too_many_arguments)]
fn in_container(
    args: &SuiteArgs,
    image: &str,
    matrices: Option<PathBuf>,
    vendor: DeviceVendor,
    timeout: Option<Duration>,
    plan_json: &[u8],
    progress: &mut Progress,
    err: &mut dyn Write,
) -> Result<Ran, Error> {
    crate::sanitize::image_reference("image", image)?;
    let run_plan = RunPlan {
        image: image.to_string(),
        vendor: Some(vendor),
        gpu: args.gpu,
        timeout,
        memory: None,
        env: Vec::new(),
        mounts: Vec::new(),
        result: None,
        print: false,
        sysroot: None,
        matrices,
        command: vec![
            args.python.clone(),
            format!("{CONTAINER_DIR}/run.py"),
            "--plan".into(),
            format!("{CONTAINER_DIR}/plan.json"),
            "--out".into(),
            CONTAINER_RESULT.into(),
        ],
        probe: false,
        probe_binary: None,
        security: args.security,
    };
    let engine = Engine::connect_default()?;
    let mut spec = plan_run(&run_plan, Some(&engine), err)?;
    spec.result_path = Some(CONTAINER_RESULT.into());
    spec.uploads = suites::suite_files()
        .into_iter()
        .map(|(p, bytes)| Upload {
            dir: "/tmp".into(),
            name: format!("rocmenv-suite/{}", p.display()),
            mode: 0o644,
            bytes: bytes.to_vec(),
        })
        .chain([Upload {
            dir: "/tmp".into(),
            name: "rocmenv-suite/plan.json".into(),
            mode: 0o644,
            bytes: plan_json.to_vec(),
        }])
        .collect();
    let outcome = engine.run(&spec, &mut |stream, bytes| {
        if stream == OutputStream::Stdout {
            progress.feed(bytes);
        }
    })?;
    let ended = match (outcome.interrupted, outcome.timed_out) {
        (Some(s), _) => Ended::Signal(s),
        (None, true) => Ended::TimedOut(timeout.unwrap_or_default()),
        (None, false) => Ended::Exited(outcome.exit_code.map(|c| c as i32)),
    };
    Ok((outcome.result_file, outcome.logs, ended))
}

/// A directory rocmenv made and removes again, also when the run fails.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes the suite and the plan into a fresh private directory under the system's temporary directory.
fn unpack(plan_json: &[u8]) -> Result<TempDir, Error> {
    use std::os::unix::fs::DirBuilderExt;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("rocmenv-suite-{}-{nanos}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&dir)
        .map_err(|e| Error::io("create", &dir, e))?;
    let guard = TempDir(dir);
    for (rel, bytes) in suites::suite_files() {
        let path = guard.0.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| Error::io("write", &path, e))?;
    }
    let plan = guard.0.join("plan.json");
    std::fs::write(&plan, plan_json).map_err(|e| Error::io("write", &plan, e))?;
    Ok(guard)
}

/// The suite on this host, with `python`; killed on timeout, SIGINT or SIGTERM.
fn on_host(
    python: &str,
    timeout: Option<Duration>,
    plan_json: &[u8],
    progress: &mut Progress,
) -> Result<Ran, Error> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let dir = unpack(plan_json)?;
    let result_path = dir.0.join("result.json");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Environment(format!("cannot start the runtime: {e}")))?;
    let (ended, logs) = rt.block_on(async {
        let mut signals = StopSignals::install()?;
        let mut child = tokio::process::Command::new(python)
            .arg(dir.0.join("run.py"))
            .arg("--plan")
            .arg(dir.0.join("plan.json"))
            .arg("--out")
            .arg(&result_path)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Error::Environment(format!(
                    "cannot start {python} for the suite: {e} (name the interpreter that has torch with --python PATH)"
                ))
            })?;
        let mut stdout = tokio::io::BufReader::new(child.stdout.take().expect("piped")).lines();
        let mut stderr = child.stderr.take().expect("piped");
        let collect_err = async {
            let mut buf = Vec::new();
            let _ = (&mut stderr).take(8 << 20).read_to_end(&mut buf).await;
            buf
        };
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let mut logs = Vec::new();
        let work = async {
            while let Ok(Some(line)) = stdout.next_line().await {
                progress.feed(format!("{line}\n").as_bytes());
                logs.extend_from_slice(line.as_bytes());
                logs.push(b'\n');
            }
            child.wait().await
        };
        let (ended, err_bytes) = tokio::select! {
            (status, e) = async { tokio::join!(work, collect_err) } => {
                (Ended::Exited(status.ok().and_then(|s| s.code())), e)
            }
            _ = deadline => (Ended::TimedOut(timeout.unwrap_or_default()), Vec::new()),
            s = signals.recv() => (Ended::Signal(s), Vec::new()),
        };
        logs.extend_from_slice(&err_bytes);
        Ok::<_, Error>((ended, logs))
    })?;
    // kill_on_drop ended a child still running (timeout, signal) when the runtime dropped it.
    let result = std::fs::read(&result_path).ok();
    drop(dir);
    Ok((result, logs, ended))
}

/// Writes `text` to `path` through a temporary file in the same directory, so a reader never sees half of it.
pub(crate) fn write_atomic(path: &Path, text: &[u8]) -> Result<(), Error> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.rocmenv-tmp"));
    std::fs::write(&tmp, text).map_err(|e| Error::io("write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io("write", path, e)
    })
}

/// Writes `--json` and `--junit` when asked.
pub(crate) fn write_outputs(args: &SuiteArgs, r: &SuiteResult) -> Result<(), Error> {
    if let Some(p) = &args.json {
        let mut text =
            serde_json::to_vec_pretty(r).map_err(|e| Error::Environment(e.to_string()))?;
        text.push(b'\n');
        write_atomic(p, &text)?;
    }
    if let Some(p) = &args.junit {
        write_atomic(
            p,
            report::junit(r, &format!("{}-{}", r.kind, r.level)).as_bytes(),
        )?;
    }
    Ok(())
}

/// The exit code of a finished run: the signal's, 1 when a test failed, else 0.
pub(crate) fn exit_code(f: &Finished) -> i32 {
    match f.signal {
        Some(s) => s.exit_code(),
        None if f.result.passed() => crate::error::EXIT_OK,
        None => crate::error::EXIT_FAILED,
    }
}
