//! What `smoke` and `bench` share: pick the vendor, hand `run.py` its plan in a container (through the engine, the
//! suite copied in) or on the host, report each test as it finishes, and turn a crash, a hang, a signal or a silent
//! suite into a failed result instead of a pass. Results go to `--json` and `--junit` on every path.

mod bench;
mod python;
mod smoke;

pub use bench::{bench, BenchOutcome, BenchPlan, Saved, Unmatched};
pub use smoke::{smoke, SmokeOutcome, SmokePlan};

use super::run::{plan_run, RunPlan};
use super::{Ctx, Event, Sink};
use crate::engine::{OutputStream, Security, StopSignals, Upload};
use crate::error::{Error, StopSignal};
use crate::report;
use crate::suites::{self, HostGpu, Placement, Plan, ResultError, SuiteResult, TestResult};
use crate::vendor::Vendor;
use std::path::PathBuf;
use std::time::Duration;

/// Where and how a suite runs: the flags `smoke` and `bench` share, validated.
#[derive(Debug, Clone, Default)]
pub struct SuitePlan {
    /// `--image`: run in a container of it; `None` runs on this host.
    pub image: Option<String>,
    /// `--python`.
    pub python: Option<String>,
    /// `--vendor`; `None` detects from the host's GPUs.
    pub vendor: Option<Vendor>,
    /// `--gpu N`, repeated.
    pub gpu: Vec<usize>,
    /// `--security`.
    pub security: Security,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// Where the result goes besides the caller.
    pub outputs: Outputs,
}

/// The files a suite's result is written to: `--json`, `--junit`, `--html`.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// `--json FILE`.
    pub json: Option<PathBuf>,
    /// `--junit FILE`.
    pub junit: Option<PathBuf>,
    /// `--html FILE`.
    pub html: Option<PathBuf>,
}

impl Outputs {
    /// Refuses, before any work, a file flag that names a directory (it would fail only at the end).
    pub fn check(&self) -> Result<(), Error> {
        for p in [&self.json, &self.junit, &self.html].into_iter().flatten() {
            super::files::output_kind(p)?;
        }
        Ok(())
    }
}

/// Where the suite goes inside a container: `/tmp` exists in every image and is writable by any user.
const CONTAINER_DIR: &str = "/tmp/rocmenv-suite";
/// The result file inside a container (outside the uploaded directory, which root owns).
const CONTAINER_RESULT: &str = "/tmp/rocmenv-suite-result.json";
/// The variable that stretches every test's deadline (smoke-tests/rocmenv_smoke/deadlines.py).
const DEADLINE_SCALE: &str = "ROCMENV_DEADLINE_SCALE";
/// How many lines of the suite's own output a failure shows.
const TAIL: usize = 15;

/// How a suite run ended.
#[derive(Debug)]
pub struct Finished {
    /// The result: the suite's own document, or the one rocmenv made for a run that did not finish.
    pub result: SuiteResult,
    /// The signal that stopped it, if one did.
    pub signal: Option<StopSignal>,
    /// True when the suite's own document described the devices (a run that did not finish never did).
    pub described: bool,
}

/// What a run is aimed at: the vendor and the host's GPUs of that vendor, as doctor numbers them.
pub(crate) struct Target {
    /// `--vendor`, else what the host's GPUs suggest.
    pub vendor: Vendor,
    /// True when `--vendor` was not given.
    pub detected: bool,
    /// The host's GPUs of the vendor (every GPU for the CPU vendor), in doctor's order.
    pub gpus: Vec<HostGpu>,
    /// The numbers of those the host plan does not set aside (an iGPU next to a discrete GPU): what a run without
    /// `--gpu` tests, as `env` shows and `run` maps.
    pub visible: Vec<usize>,
}

/// The vendor (`vendor`, else detected) and its GPUs on the context's host.
pub(crate) fn target(ctx: &Ctx, vendor: Option<Vendor>) -> Result<Target, Error> {
    let facts = ctx.facts()?;
    let detected = vendor.is_none();
    let vendor = vendor.unwrap_or_else(|| facts.vendor());
    let gpus = facts
        .gpus
        .iter()
        .filter(|g| !vendor.is_gpu() || g.vendor == vendor)
        .map(|g| HostGpu {
            index: g.index,
            pci_address: g.pci_address.clone(),
            device_id: g.device_id.clone(),
        })
        .collect::<Vec<HostGpu>>();
    let aside: Vec<String> = match vendor.is_gpu() {
        true => super::plan::plan_on(
            ctx.matrices()?,
            facts,
            &super::plan::PlanRequest {
                vendor: Some(vendor),
                ..Default::default()
            },
        )?
        .set_aside()
        .into_iter()
        .map(|(p, _)| p.to_string())
        .collect(),
        false => Vec::new(),
    };
    let visible = gpus
        .iter()
        .filter(|g| !aside.contains(&g.pci_address))
        .map(|g| g.index)
        .collect();
    Ok(Target {
        vendor,
        detected,
        gpus,
        visible,
    })
}

/// `--expect-gpus N` against what the host shows: one line when it shows fewer.
pub(crate) fn expect_gpus(t: &Target, expect: Option<usize>) -> Option<String> {
    let n = expect?;
    let have = t.gpus.len();
    let kind = match t.vendor {
        Vendor::Amd => "AMD GPU",
        Vendor::Nvidia => "NVIDIA GPU",
        Vendor::Cpu => "GPU",
    };
    (have < n).then(|| {
        format!(
            "--expect-gpus {n}: this host shows {have} {kind}{} (rocmenv doctor lists them)",
            if have == 1 { "" } else { "s" }
        )
    })
}

/// Collects `run.py`'s stdout into lines, reporting each finished test.
struct Progress<'s> {
    pending: Vec<u8>,
    finished: Vec<TestResult>,
    placement: Option<Placement>,
    on: Sink<'s>,
}

impl Progress<'_> {
    fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        while let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=i).collect();
            if let Some(mut t) = suites::parse_progress(&String::from_utf8_lossy(&line)) {
                // torch's PCI addresses come with the document at the end; until then, the mapping rocmenv made.
                if let (Some(p), Some(d)) = (&self.placement, t.device) {
                    t.gpu = p.gpu_for(d, &[]);
                }
                (self.on)(Event::Test(&t));
                self.finished.push(t);
            }
        }
    }
}

/// Where the suite runs and which devices it tests: the interpreter, torch's device numbers for `run.py --devices`,
/// the GPU a single-GPU container maps, and how torch's numbers map back to the host's.
struct Where {
    /// `--python`; on the host, `None` searches PATH (after the suite is unpacked, so a full disk is said first).
    python: Option<String>,
    devices: Option<Vec<u32>>,
    map_one: Option<usize>,
    placement: Option<Placement>,
}

/// Checks `--gpu` against the host and works out `Where` (on the host, finding the interpreter when not given).
fn locate(args: &SuitePlan, t: &Target) -> Result<Where, Error> {
    let vendor = t.vendor.gpu();
    if vendor.is_none() && !args.gpu.is_empty() {
        return Err(Error::invalid(
            "gpu",
            "--vendor cpu uses no GPU, so --gpu cannot be given",
        ));
    }
    let have: Vec<String> = t
        .gpus
        .iter()
        .map(|g| format!("GPU {} ({})", g.index, g.pci_address))
        .collect();
    for n in &args.gpu {
        crate::host::check_gpu_number(*n, vendor, &have).map_err(|e| Error::invalid("gpu", e))?;
    }
    let mut selection = args.gpu.clone();
    selection.dedup();
    // What the engine maps without --gpu: the GPUs the host plan leaves visible.
    let all: Vec<usize> = t.visible.clone();
    if args.image.is_some() {
        // One GPU is mapped alone (torch's 0); otherwise every GPU is mapped, in the host's order.
        let (map_one, placement, devices) = match selection.as_slice() {
            [one] => (
                Some(*one),
                Placement::mapped(t.gpus.clone(), vec![*one]),
                None,
            ),
            [] => (None, Placement::mapped(t.gpus.clone(), all), None),
            many => {
                let placement = Placement::mapped(t.gpus.clone(), all);
                let devices = many
                    .iter()
                    .filter_map(|g| placement.torch_for(*g))
                    .collect();
                (None, placement, Some(devices))
            }
        };
        return Ok(Where {
            python: Some(args.python.clone().unwrap_or_else(|| "python3".into())),
            devices,
            map_one,
            placement: vendor.map(|_| placement),
        });
    }
    let placement =
        vendor.map(|v| Placement::on_host(v, t.gpus.clone(), &|k| std::env::var(k).ok()));
    let mut devices = None;
    if selection.is_empty() && t.visible.len() < t.gpus.len() && vendor.is_some() {
        // On the host torch sees a set-aside iGPU too; test only what the plan leaves visible.
        selection = t.visible.clone();
    }
    if let (Some(p), false) = (&placement, selection.is_empty()) {
        let mut torch = Vec::new();
        for n in &selection {
            torch.push(p.torch_for(*n).ok_or_else(|| {
                Error::invalid(
                    "gpu",
                    format!("GPU {n} is not visible to this process, or its place in torch's order is unknown (check HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES; NVIDIA: set CUDA_DEVICE_ORDER=PCI_BUS_ID)"),
                )
            })?);
        }
        devices = Some(torch);
    }
    Ok(Where {
        python: args.python.clone(),
        devices,
        map_one: None,
        placement,
    })
}

/// Runs `plan` where `args` says and returns its result.
pub(crate) fn run(
    ctx: &Ctx,
    args: &SuitePlan,
    t: &Target,
    plan: &Plan,
    on: Sink,
) -> Result<Finished, Error> {
    let plan_json =
        serde_json::to_vec_pretty(plan).map_err(|e| Error::Environment(e.to_string()))?;
    let timeout = args.timeout;
    let at = locate(args, t)?;
    let mut extra = Vec::new();
    if let Some(d) = &at.devices {
        let list: Vec<String> = d.iter().map(u32::to_string).collect();
        extra = vec!["--devices".to_string(), list.join(",")];
    }
    let mut progress = Progress {
        pending: Vec::new(),
        finished: Vec::new(),
        placement: at.placement.clone(),
        on,
    };
    let how = How {
        at: &at,
        extra: &extra,
        timeout,
        plan_json: &plan_json,
    };
    let (result_bytes, logs, ended) = match &args.image {
        Some(image) => in_container(ctx, args, image, t.vendor, &how, &mut progress)?,
        None => on_host(&how, &mut progress)?,
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
                format!(
                    "the run was interrupted by {}; the tests above finished, the rest did not run",
                    s.name()
                ),
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
    if let Some(p) = &at.placement {
        p.place(&mut result);
    }
    let described = !result.device.kind.is_empty();
    if !described {
        // A run that ended without its document still ran on this vendor's devices: never an empty kind.
        result.device.kind = device_kind(t.vendor).into();
        // The failure rocmenv wrote for it was never streamed: show it, with its reason, like every test.
        if let Some(last) = result.tests.last() {
            (progress.on)(Event::Test(last));
        }
    }
    Ok(Finished {
        result,
        signal,
        described,
    })
}

/// The result document's device kind for a vendor's run.
fn device_kind(vendor: Vendor) -> &'static str {
    match vendor {
        Vendor::Amd => "rocm",
        Vendor::Nvidia => "cuda",
        Vendor::Cpu => "cpu",
    }
}

/// What a run left: the result file's bytes (if any), the suite's own output, how its process ended.
type Ran = (Option<Vec<u8>>, Vec<u8>, Ended);

/// How the suite's process ended.
enum Ended {
    Exited(Option<i32>),
    TimedOut(Duration),
    Signal(StopSignal),
}

/// How a suite runs wherever it runs: the place worked out, `run.py`'s extra arguments, the timeout, the plan.
struct How<'a> {
    at: &'a Where,
    extra: &'a [String],
    timeout: Option<Duration>,
    plan_json: &'a [u8],
}

/// The suite in a container of `image`: the suite files and the plan are copied in through the API.
fn in_container(
    ctx: &Ctx,
    args: &SuitePlan,
    image: &str,
    vendor: Vendor,
    how: &How,
    progress: &mut Progress,
) -> Result<Ran, Error> {
    let How {
        at,
        extra,
        timeout,
        plan_json,
    } = *how;
    crate::sanitize::image_reference("image", image)?;
    // CUDA's own default order puts the fastest GPU first; PCI order is the host's numbering.
    let mut env = match vendor {
        Vendor::Nvidia => vec![("CUDA_DEVICE_ORDER".into(), "PCI_BUS_ID".into())],
        _ => Vec::new(),
    };
    // The tests' deadlines stretch the same in a container as on the host (run.py refuses a value that is not a
    // positive number).
    if let Ok(scale) = std::env::var(DEADLINE_SCALE) {
        env.push((DEADLINE_SCALE.into(), scale));
    }
    let run_plan = RunPlan {
        image: image.to_string(),
        vendor: Some(vendor),
        gpu: at.map_one,
        timeout,
        memory: None,
        env,
        mounts: Vec::new(),
        result: None,
        print: false,
        command: [
            at.python.clone().unwrap_or_else(|| "python3".into()),
            format!("{CONTAINER_DIR}/run.py"),
            "--plan".into(),
            format!("{CONTAINER_DIR}/plan.json"),
            "--out".into(),
            CONTAINER_RESULT.into(),
        ]
        .into_iter()
        .chain(extra.iter().cloned())
        .collect(),
        probe: false,
        probe_binary: None,
        security: args.security,
        strict: false,
    };
    let engine = ctx.engine()?;
    let mut spec = plan_run(ctx, &run_plan, Some(engine), &mut *progress.on)?;
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

/// Writes the suite and the plan into a fresh private directory under the system's temporary directory, removed
/// when the guard drops (also when the run fails).
fn unpack(plan_json: &[u8]) -> Result<tempfile::TempDir, Error> {
    let dir = tempfile::Builder::new()
        .prefix("rocmenv-suite-")
        .tempdir()
        .map_err(|e| Error::io("create", std::env::temp_dir(), e))?;
    for (rel, bytes) in suites::suite_files() {
        let path = dir.path().join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("create", parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| Error::io("write", &path, e))?;
    }
    let plan = dir.path().join("plan.json");
    std::fs::write(&plan, plan_json).map_err(|e| Error::io("write", &plan, e))?;
    Ok(dir)
}

/// The suite on this host, with `python`; killed on timeout, SIGINT or SIGTERM.
fn on_host(how: &How, progress: &mut Progress) -> Result<Ran, Error> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let How {
        at,
        extra,
        timeout,
        plan_json,
    } = *how;
    let python = at.python.as_deref();
    let dir = unpack(plan_json)?;
    let result_path = dir.path().join("result.json");
    let python = match python {
        Some(p) => p.to_string(),
        None => {
            let found = python::find()?;
            (progress.on)(Event::Log(format!(
                "rocmenv: python: {} ({})",
                found.path.display(),
                found.how
            )));
            found.path.to_string_lossy().into_owned()
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Environment(format!("cannot start the runtime: {e}")))?;
    let (ended, logs) = rt.block_on(async {
        let mut signals = StopSignals::install()?;
        let mut child = tokio::process::Command::new(&python)
            .arg(dir.path().join("run.py"))
            .arg("--plan")
            .arg(dir.path().join("plan.json"))
            .arg("--out")
            .arg(&result_path)
            .args(extra)
            // The suite's messages say "on this host", not "in this image" (issue 25).
            .env("ROCMENV_SMOKE_WHERE", "host")
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

/// Writes `--json` and `--junit` when asked.
pub(crate) fn write_outputs(args: &Outputs, r: &SuiteResult) -> Result<(), Error> {
    if let Some(p) = &args.json {
        let mut text =
            serde_json::to_vec_pretty(r).map_err(|e| Error::Environment(e.to_string()))?;
        text.push(b'\n');
        super::files::write_atomic(p, &text)?;
    }
    if let Some(p) = &args.junit {
        super::files::write_atomic(
            p,
            report::junit(r, &format!("{}-{}", r.kind, r.level)).as_bytes(),
        )?;
    }
    if let Some(p) = &args.html {
        let label = format!("{}.json", r.kind);
        super::files::write_html_of(p, &format!("rocmenv {}", r.kind), &label, r)?;
    }
    Ok(())
}

/// The exit code of a finished run: the signal's, 1 when a test failed, else 0.
pub fn exit_code(f: &Finished) -> i32 {
    match f.signal {
        Some(s) => s.exit_code(),
        None if f.result.passed() => crate::error::EXIT_OK,
        None => crate::error::EXIT_FAILED,
    }
}
