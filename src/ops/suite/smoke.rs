//! smoke's work: the smoke suite at a level, in a container or on the host, compared with the datasheet peaks.

use super::{Finished, SuitePlan};
use crate::error::Error;
use crate::ops::{Ctx, Event, Sink};
use crate::status::Status;
use crate::suites::{self, Level, Suite, TestResult};
use crate::vendor::Vendor;

/// What `rocmenv smoke` runs, validated.
#[derive(Debug, Clone)]
pub struct SmokePlan {
    /// Where and how.
    pub suite: SuitePlan,
    /// `--level`.
    pub level: Level,
    /// `--only NAME`, repeated.
    pub only: Vec<String>,
    /// `--expect-gpus N`.
    pub expect_gpus: Option<usize>,
    /// `--duration SECONDS`: the burn-in test for that long, after the level's tests.
    pub duration: Option<u64>,
}

/// How a smoke run ended.
#[derive(Debug)]
pub enum SmokeOutcome {
    /// The vendor was detected and the host shows no GPU: a node whose GPU fell off the bus looks like a CPU
    /// host, and passing it would hide exactly that.
    NoGpu,
    /// The host shows fewer GPUs than `--expect-gpus` (the line says how many).
    TooFewGpus(String),
    /// The suite ran.
    Ran(Box<Finished>),
}

/// Runs the smoke suite `p` asks for; each test goes to `on` as it finishes, the result to `p`'s files.
pub fn smoke(ctx: &Ctx, p: &SmokePlan, on: Sink) -> Result<SmokeOutcome, Error> {
    p.suite.outputs.check()?;
    let m = ctx.matrices()?;
    let target = super::target(ctx, p.suite.vendor)?;
    let suite = Suite::embedded();
    let mut plan = suite
        .smoke_plan(p.level, target.vendor, &p.only)
        .map_err(|e| Error::invalid("only", e.to_string()))?;
    if let Some(seconds) = p.duration {
        suite.add_burn_in(&mut plan, seconds);
    }
    if target.detected && target.vendor == Vendor::Cpu {
        return Ok(SmokeOutcome::NoGpu);
    }
    if let Some(why) = super::expect_gpus(&target, p.expect_gpus) {
        return Ok(SmokeOutcome::TooFewGpus(why));
    }
    on(Event::SuiteStarted {
        plan: &plan,
        image: p.suite.image.as_deref(),
    });
    let mut finished = super::run(ctx, &p.suite, &target, &plan, &mut *on)?;
    if let Some(n) = p.expect_gpus {
        let seen = finished.result.device.count as usize;
        // With --gpu the run sees only what it was given; a failed run never described its devices.
        let described = finished.described;
        if target.vendor != Vendor::Cpu && p.suite.gpu.is_empty() && described && seen < n {
            let why = format!(
                "torch sees {seen} device{} in the run; --expect-gpus {n}",
                if seen == 1 { "" } else { "s" }
            );
            let t = TestResult::new("expect-gpus", Status::Fail, Some(why));
            on(Event::Test(&t));
            finished.result.tests.push(t);
        }
    }
    suites::compare(&mut finished.result, m, &[], 0.0, &target.gpus);
    on(Event::SuiteFinished(&finished.result));
    super::write_outputs(&p.suite.outputs, &finished.result)?;
    Ok(SmokeOutcome::Ran(Box::new(finished)))
}
