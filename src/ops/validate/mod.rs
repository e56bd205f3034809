//! validate's work: per stack of rocmenv.yaml, doctor, the Dockerfile (and hadolint), the build, the static image
//! checks, then smoke and benchmarks, each step composed from the other operations over the one context. Every
//! step is a case, sent to the sink as it is decided; the config is checked, and every Dockerfile rendered, before
//! anything is built.

mod reports;
mod steps;
mod suites;

pub use reports::{write_reports, Reports};

use super::dockerfile::StackPlan;
use super::{Ctx, Event, Sink};
use crate::checks::Status;
use crate::config::{Config, StackConfig, StackValues};
use crate::dockerfile::Rendered;
use crate::error::Error;
use crate::report::validate::{Case, StackReport, ValidateReport};
use crate::target::{Target, TargetSpec};
use std::path::{Path, PathBuf};

/// What `rocmenv validate` runs, validated without reading anything.
#[derive(Debug, Clone, Default)]
pub struct ValidatePlan {
    /// `--config FILE`.
    pub config: PathBuf,
    /// `--stack NAME`, repeated; empty for every stack.
    pub stacks: Vec<String>,
    /// `--base IMAGE`, checked as a reference: every stack's base image.
    pub base: Option<String>,
    /// `--expect-gpus N`.
    pub expect_gpus: Option<usize>,
    /// The report files.
    pub reports: Reports,
}

/// One stack, planned: its config and typed values, the rendered Dockerfile and the hosts it targets.
struct Planned<'c> {
    cfg: &'c StackConfig,
    /// Its gfx and cuda_arch lists, as the config parsed them.
    values: &'c StackValues,
    rendered: Rendered,
    target: Option<TargetSpec>,
    /// `target` resolved against the matrices and the host, once.
    resolved: Option<Target<'c>>,
    /// The stack's own files for lint, read (and refused when unreadable) before anything is built.
    lint_files: Vec<crate::lint::LintFile>,
}

impl Planned<'_> {
    fn stack_name(&self) -> &'static str {
        self.cfg.stack.name()
    }
}

/// Runs every selected stack of the config `p` names; each case goes to `on` as it is decided.
pub fn validate(ctx: &Ctx, p: &ValidatePlan, on: Sink) -> Result<ValidateReport, Error> {
    p.reports.check()?;
    let cfg = load_config(&p.config)?;
    let selected = select(&cfg, &p.stacks)?;
    let facts = ctx.facts()?;
    let nvidia_driver = cfg.nvidia_driver().cloned();
    // Everything that can be wrong in the config is found before the first build.
    let planned = selected
        .into_iter()
        .map(|s| plan_stack(ctx, &cfg, s, p.base.as_deref(), &nvidia_driver))
        .collect::<Result<Vec<_>, _>>()?;
    ctx.engine()?;
    let mut report = ValidateReport {
        schema_version: 1,
        kind: "validate",
        node: crate::report::node::node_name(true),
        rocmenv_version: env!("CARGO_PKG_VERSION").to_string(),
        config: p.config.display().to_string(),
        stacks: Vec::new(),
        summary: Default::default(),
    };
    let run = Run {
        ctx,
        cfg: &cfg,
        has_gpu: !facts.gpus.is_empty(),
        nvidia_driver,
        expect_gpus: p.expect_gpus,
    };
    for planned in &planned {
        on(Event::Stack {
            name: &planned.cfg.name,
            stack: planned.stack_name(),
            base: &planned.rendered.base_image,
        });
        report.stacks.push(run.stack(planned, &mut *on)?);
    }
    report.tally();
    Ok(report)
}

/// Checks stack `s`'s target against the host and renders its Dockerfile; a wrong value names its config line.
fn plan_stack<'c>(
    ctx: &'c Ctx,
    cfg: &'c Config,
    s: &'c StackConfig,
    base: Option<&str>,
    driver: &Option<crate::version::DriverVersion>,
) -> Result<Planned<'c>, Error> {
    let target = cfg.target(s).cloned();
    // The text as written, for placing an error at its line.
    let spec = s.target.as_ref().or(cfg.file.host.target.as_ref());
    let resolved = match (&target, spec) {
        (Some(t), Some(spec)) => Some(
            crate::target::resolve(Some(t), ctx.matrices()?, ctx.facts()?).map_err(|e| {
                let key = if s.target.is_some() {
                    "target"
                } else {
                    "host.target"
                };
                cfg.value_error(s.target.as_ref().map(|_| s.name.as_str()), key, spec, e)
            })?,
        ),
        _ => None,
    };
    let plan = StackPlan {
        request: Config::request(s, base),
        gfx: s.gfx.clone(),
        driver: driver.clone(),
    };
    // The notes are the render case's detail, not lines of their own.
    let rendered = super::dockerfile::render(ctx, &plan, &mut |_| {}).map_err(|e| match e {
        // `--base` came from the command line, not the file: it stays the library's error.
        Error::Invalid { ref fields, .. } if fields == &["base"] && base.is_some() => e,
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
    let dir = cfg.path.parent().unwrap_or(Path::new("."));
    let paths: Vec<PathBuf> = s.lint.iter().map(|f| dir.join(f)).collect();
    let lint_files = super::lint::read_files(&paths).map_err(|e| {
        cfg.error(
            Some(&s.name),
            "lint:",
            format!("stack {}: lint: {e}", s.name),
        )
    })?;
    Ok(Planned {
        cfg: s,
        values: cfg.values(s),
        rendered,
        target,
        resolved,
        lint_files,
    })
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
        return Err(Error::invalid(
            "stack",
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
    ctx: &'a Ctx,
    cfg: &'a Config,
    has_gpu: bool,
    nvidia_driver: Option<crate::version::DriverVersion>,
    /// `--expect-gpus N`.
    expect_gpus: Option<usize>,
}

impl Run<'_> {
    /// Keeps a case after `allow_warn` has had its say, and reports it.
    fn record(&self, st: &mut StackReport, mut c: Case, on: Sink) {
        if c.status == Status::Fail && self.cfg.file.allow_warn.contains(&c.id) {
            c.status = Status::Warn;
            c.summary.push_str(" (a warning by allow_warn)");
        }
        on(Event::Case(&c));
        st.cases.push(c);
    }

    /// `rocmenv lint` on the rendered Dockerfile and the stack's own files, against the stack's gfx targets (else
    /// the host's GPUs) and release.
    fn lint(&self, p: &Planned) -> Result<Vec<Case>, Error> {
        let rendered = super::lint::read_text(
            "Dockerfile",
            crate::lint::FileKind::Dockerfile,
            &p.rendered.dockerfile,
        )?;
        let mut files = vec![rendered];
        files.extend(p.lint_files.iter().cloned());
        let rocm = p
            .resolved
            .as_ref()
            .and_then(|t| t.rocm.as_ref())
            .map(|r| r.release);
        let report = super::lint::judge_files(self.ctx, &files, &p.cfg.gfx, rocm)?;
        Ok(steps::lint_cases(&report))
    }

    /// Every step of one stack, in order; a failed build skips the steps that need its image.
    fn stack(&self, p: &Planned, on: Sink) -> Result<StackReport, Error> {
        let mut st = StackReport {
            name: p.cfg.name.clone(),
            stack: p.stack_name().to_string(),
            image: None,
            cases: Vec::new(),
            comparisons: Vec::new(),
        };
        for c in self.doctor(p)? {
            self.record(&mut st, c, &mut *on);
        }
        for c in [
            steps::render_case(&p.rendered),
            steps::hadolint(&p.rendered.dockerfile),
        ] {
            self.record(&mut st, c, &mut *on);
        }
        for c in self.lint(p)? {
            self.record(&mut st, c, &mut *on);
        }
        let (c, tag) = self.build(p, &mut *on)?;
        self.record(&mut st, c, &mut *on);
        let Some(tag) = tag else {
            for c in steps::no_image() {
                self.record(&mut st, c, &mut *on);
            }
            return Ok(st);
        };
        st.image = Some(tag.clone());
        for c in self.image_checks(p, &tag)? {
            self.record(&mut st, c, &mut *on);
        }
        for c in self.smoke(p.cfg, &tag, &mut *on) {
            self.record(&mut st, c, &mut *on);
        }
        for (c, comparisons) in self.benches(p.cfg, &tag, &mut *on) {
            st.comparisons.extend(comparisons);
            self.record(&mut st, c, &mut *on);
        }
        Ok(st)
    }
}
