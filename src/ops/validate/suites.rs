//! validate's suites: the smoke suite and the configured benchmarks in the stack's image, through `ops::suite`,
//! their results read straight from the run.

use super::Run;
use crate::checks::Status;
use crate::config::{self, BenchConfig, StackConfig};
use crate::engine::Security;
use crate::ops::suite::{self, BenchPlan, Outputs, SmokeOutcome, SmokePlan, SuitePlan};
use crate::ops::{Event, Sink};
use crate::report::validate::{Case, Step};
use crate::suites::{Comparison, SuiteResult, TestResult};
use crate::vendor::Vendor;
use std::time::{Duration, Instant};

/// Why smoke is skipped on a runner without GPUs.
const NO_GPU_SMOKE: &str =
    "no GPU on this runner: the smoke suite runs on a GPU runner or node (same command there)";
/// Why a benchmark is skipped there.
const NO_GPU_BENCH: &str = "no GPU on this runner: benchmarks run on a GPU runner or node";

/// A cpu stack that names no GPU target: its suites run on the CPU.
fn cpu_only(s: &StackConfig) -> bool {
    s.stack == config::Stack::Cpu && s.gfx.is_empty() && s.cuda_arch.is_empty()
}

/// Where a suite runs: in the stack's image, with the host's GPUs, except a cpu stack that names no GPU, which runs
/// on the CPU (its torch has no GPU to find, and must not be failed for it).
fn suite_plan(s: &StackConfig, tag: &str, timeout: u64) -> SuitePlan {
    SuitePlan {
        image: Some(tag.to_string()),
        python: None,
        vendor: cpu_only(s).then_some(Vendor::Cpu),
        gpu: Vec::new(),
        security: Security::Default,
        timeout: Some(Duration::from_secs(timeout)),
        outputs: Outputs::default(),
    }
}

/// Only what a suite logs reaches validate's sink: its tests become cases when it ends.
fn logs_only(on: Sink<'_>) -> impl FnMut(Event<'_>) + '_ {
    move |ev| {
        if matches!(
            ev,
            Event::Note(_) | Event::Warning(_) | Event::Log(_) | Event::Build(_)
        ) {
            on(ev)
        }
    }
}

/// A smoke test as a case.
fn test_case(t: &TestResult) -> Case {
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
}

impl Run<'_> {
    /// The smoke suite's cases: one per test, or one saying why it did not run.
    pub(super) fn smoke(&self, s: &StackConfig, tag: &str, on: Sink) -> Vec<Case> {
        let cfg = &self.cfg.file.smoke;
        let one = |status, summary: String| vec![Case::new(Step::Smoke, "smoke", status, summary)];
        if !cfg.enabled {
            return one(Status::Skip, "smoke.enabled is false in the config".into());
        }
        // A cpu stack's smoke runs on the CPU: a runner without GPUs runs it all the same.
        if !self.has_gpu && !cpu_only(s) {
            return one(Status::Skip, NO_GPU_SMOKE.into());
        }
        let plan = SmokePlan {
            suite: suite_plan(s, tag, cfg.timeout),
            level: cfg.level,
            only: Vec::new(),
            expect_gpus: None,
            duration: None,
        };
        let why = match suite::smoke(self.ctx, &plan, &mut logs_only(on)) {
            Ok(SmokeOutcome::Ran(f)) => return f.result.tests.iter().map(test_case).collect(),
            Ok(SmokeOutcome::NoGpu) => "this host shows no GPU".to_string(),
            Ok(SmokeOutcome::TooFewGpus(why)) => why,
            Err(e) => e.to_string(),
        };
        one(
            Status::Fail,
            format!("the smoke suite could not run: {why}"),
        )
    }

    /// Each configured benchmark for stack `s`: its case and its figures.
    pub(super) fn benches(
        &self,
        s: &StackConfig,
        tag: &str,
        on: Sink,
    ) -> Vec<(Case, Vec<Comparison>)> {
        let mine = self
            .cfg
            .file
            .benchmarks
            .iter()
            .filter(|b| b.stacks.is_empty() || b.stacks.contains(&s.name));
        let mut cases = Vec::new();
        for b in mine {
            let id = format!("bench.{}", b.model);
            if !self.has_gpu {
                let c = Case::new(Step::Bench, id, Status::Skip, NO_GPU_BENCH);
                cases.push((c, Vec::new()));
                continue;
            }
            let started = Instant::now();
            let (mut c, figures) = self.bench(s, b, &id, tag, &mut *on);
            c.duration = started.elapsed();
            cases.push((c, figures));
        }
        cases
    }

    fn bench(
        &self,
        s: &StackConfig,
        b: &BenchConfig,
        id: &str,
        tag: &str,
        on: Sink,
    ) -> (Case, Vec<Comparison>) {
        let plan = BenchPlan {
            suite: suite_plan(s, tag, self.cfg.file.smoke.timeout),
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
        let outcome = match suite::bench(self.ctx, &plan, &mut logs_only(&mut *on)) {
            Ok(o) => o,
            Err(e) => {
                let why = format!("the benchmark could not run: {e}");
                return (Case::new(Step::Bench, id, Status::Fail, why), Vec::new());
            }
        };
        for u in &outcome.unmatched {
            on(Event::Note(format!(
                "{}: baseline {} matches no figure of this run; {}",
                id,
                u.file.display(),
                u.held
            )));
        }
        let r = outcome.finished.result;
        let status = match (outcome.code, outcome.regressed) {
            (0, false) => Status::Pass,
            (0, true) => Status::Warn,
            _ => Status::Fail,
        };
        let mut c = Case::new(Step::Bench, id, status, bench_summary(&r));
        if outcome.regressed {
            c.fix = Some(format!(
                "find what slowed it (driver, image, clocks), or refresh the baseline with `rocmenv bench --model {} --save-baseline FILE`",
                b.model
            ));
        }
        (c, r.comparisons)
    }
}

/// A benchmark's case summary: the failures' reasons, else its figures.
fn bench_summary(r: &SuiteResult) -> String {
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
    match (reasons.is_empty(), figures.is_empty()) {
        (false, _) => reasons.join("; "),
        (true, false) => figures.join("; "),
        (true, true) => "ran".into(),
    }
}
