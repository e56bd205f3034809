//! bench's work: one benchmark with more iterations (or the tuning sweep), compared with the datasheet peak and the
//! baselines given; the figures can be added to a baselines file for the next run.

use super::{Finished, SuitePlan};
use crate::config::{Mode, Precision};
use crate::error::Error;
use crate::ops::files::{self, OutputKind};
use crate::ops::{Ctx, Event, Sink};
use crate::suites::{self, Baseline, Baselines, BenchOverrides, Suite};
use crate::vendor::Vendor;
use std::path::{Path, PathBuf};

/// What `rocmenv bench` runs, validated.
#[derive(Debug, Clone)]
pub struct BenchPlan {
    /// Where and how.
    pub suite: SuitePlan,
    /// `--model`.
    pub model: String,
    /// `--tune`: the tuning sweep instead of a model.
    pub tune: bool,
    /// `--batch`.
    pub batch: Option<u64>,
    /// `--precision`.
    pub precision: Option<Precision>,
    /// `--mode`.
    pub mode: Option<Mode>,
    /// `--iters`.
    pub iters: Option<u64>,
    /// `--warmup`.
    pub warmup: Option<u64>,
    /// `--baseline FILE`, repeated.
    pub baseline: Vec<PathBuf>,
    /// `--save-baseline FILE`.
    pub save_baseline: Option<PathBuf>,
    /// `--threshold` percent.
    pub threshold: f64,
    /// `--fail-on-regression`.
    pub fail_on_regression: bool,
}

/// The figures `--save-baseline` wrote.
#[derive(Debug)]
pub struct Saved {
    /// The file.
    pub path: PathBuf,
    /// Figures this run added.
    pub added: usize,
    /// Of those, how many replaced one already there.
    pub replaced: usize,
    /// Figures the file had that stay.
    pub kept: usize,
}

/// A `--baseline` file none of whose figures this run matched.
#[derive(Debug)]
pub struct Unmatched {
    /// The file.
    pub file: PathBuf,
    /// What it holds, briefly.
    pub held: String,
}

/// How a bench run ended.
#[derive(Debug)]
pub struct BenchOutcome {
    /// The run.
    pub finished: Finished,
    /// What `--save-baseline` wrote.
    pub saved: Option<Saved>,
    /// The baselines files that matched nothing.
    pub unmatched: Vec<Unmatched>,
    /// True when a figure regressed past the threshold.
    pub regressed: bool,
    /// The exit code.
    pub code: i32,
}

/// Reads one baselines document (YAML or JSON); a missing file is `None`.
fn read_baselines(f: &Path, missing_ok: bool) -> Result<Option<Baselines>, Error> {
    let text = match std::fs::read_to_string(f) {
        Ok(t) => t,
        Err(e) if missing_ok && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io("read", f, e)),
    };
    let b: Baselines = serde_yaml_ng::from_str(&text).map_err(|e| {
        Error::invalid(
            "baseline",
            format!("{}: {e} (write one with --save-baseline FILE)", f.display()),
        )
    })?;
    if b.schema_version != 1 {
        return Err(Error::invalid(
            "baseline",
            format!(
                "{}: schema_version {} (this rocmenv reads 1)",
                f.display(),
                b.schema_version
            ),
        ));
    }
    Ok(Some(b))
}

/// Reads the `--baseline` files: every figure, and which file each came from.
fn load_baselines(files: &[PathBuf]) -> Result<(Vec<Baseline>, Vec<usize>), Error> {
    let mut all = Vec::new();
    let mut from = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let b = read_baselines(f, false)?.unwrap_or_default();
        from.extend(std::iter::repeat_n(i, b.baselines.len()));
        all.extend(b.baselines);
    }
    Ok((all, from))
}

/// What a baselines file holds, briefly: `resnet50 throughput on cpu (batch 4, precision fp32)`, at most three.
fn holds(b: &[&Baseline]) -> String {
    let mut shown: Vec<String> = Vec::new();
    for x in b {
        let params: Vec<String> = x
            .params
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k} {}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect();
        let p = if params.is_empty() {
            String::new()
        } else {
            format!(" ({})", params.join(", "))
        };
        let line = format!("{} {} on {}{p}", x.test, x.metric, x.device);
        if !shown.contains(&line) {
            shown.push(line);
        }
    }
    let more = shown.len().saturating_sub(3);
    shown.truncate(3);
    let mut text = shown.join("; ");
    if more > 0 {
        text.push_str(&format!("; and {more} more"));
    }
    text
}

/// The plan's overrides of the benchmark's parameters.
fn overrides(p: &BenchPlan) -> BenchOverrides {
    BenchOverrides {
        batch: p.batch,
        precision: p.precision,
        mode: p.mode,
        iters: p.iters,
        warmup: p.warmup,
    }
}

/// Runs the benchmark `p` asks for; each row goes to `on` as it finishes, the result to `p`'s files.
pub fn bench(ctx: &Ctx, p: &BenchPlan, on: Sink) -> Result<BenchOutcome, Error> {
    if !(0.0..100.0).contains(&p.threshold) {
        return Err(Error::invalid(
            "threshold",
            format!("{} is not a percentage below 100", p.threshold),
        ));
    }
    p.suite.outputs.check()?;
    let (baselines, from) = load_baselines(&p.baseline)?;
    // Read before the run: a file that cannot take the figures should fail now, not after minutes of work.
    let saved_before = match &p.save_baseline {
        // A device or FIFO holds no baselines to keep, and reading one would wait on it.
        Some(path) if files::output_kind(path)? == OutputKind::Stream => None,
        Some(path) => read_baselines(path, true)?,
        None => None,
    };
    let m = ctx.matrices()?;
    let target = super::target(ctx, p.suite.vendor)?;
    let model = if p.tune { "tune" } else { p.model.as_str() };
    let plan = Suite::embedded()
        .bench_plan(model, target.vendor, &overrides(p))
        .map_err(|e| Error::invalid(if p.tune { "tune" } else { "model" }, e.to_string()))?;
    if target.detected && target.vendor == Vendor::Cpu {
        on(Event::Note("this host shows no GPU, so this benchmarks the CPU (--vendor cpu asks for that without this note)".into()));
    }
    on(Event::SuiteStarted {
        plan: &plan,
        image: p.suite.image.as_deref(),
    });
    let mut finished = super::run(ctx, &p.suite, &target, &plan, &mut *on)?;
    let matched = suites::compare(
        &mut finished.result,
        m,
        &baselines,
        p.threshold / 100.0,
        &target.gpus,
    );
    on(Event::SuiteFinished(&finished.result));
    super::write_outputs(&p.suite.outputs, &finished.result)?;
    let saved = match &p.save_baseline {
        Some(path) => Some(save(path, model, &finished, saved_before)?),
        None => None,
    };
    let unmatched = unmatched(&p.baseline, &baselines, &from, &matched);
    let regressed = finished.result.comparisons.iter().any(|c| c.regression);
    let code = super::exit_code(&finished);
    let code = if code == 0 && (regressed || !unmatched.is_empty()) && p.fail_on_regression {
        crate::error::EXIT_FAILED
    } else {
        code
    };
    Ok(BenchOutcome {
        finished,
        saved,
        unmatched,
        regressed,
        code,
    })
}

/// Adds this run's figures to the baselines file `path` (what it held before is `before`).
fn save(
    path: &Path,
    model: &str,
    finished: &Finished,
    before: Option<Baselines>,
) -> Result<Saved, Error> {
    let source = format!(
        "rocmenv bench --model {model}, {}",
        finished
            .result
            .finished_at
            .as_deref()
            .unwrap_or("date unknown")
    );
    let new = suites::baselines_from(&finished.result, &source);
    let n = new.baselines.len();
    let mut doc = before.unwrap_or(Baselines {
        schema_version: 1,
        baselines: Vec::new(),
    });
    let kept = doc.baselines.len();
    doc.merge(new);
    let replaced = kept + n - doc.baselines.len();
    let text = serde_yaml_ng::to_string(&doc).map_err(|e| Error::Environment(e.to_string()))?;
    files::write_atomic(path, text.as_bytes())?;
    Ok(Saved {
        path: path.to_path_buf(),
        added: n,
        replaced,
        kept: kept - replaced,
    })
}

/// The `--baseline` files none of whose figures were compared: a comparison asked for happens or is reported.
fn unmatched(
    files: &[PathBuf],
    baselines: &[Baseline],
    from: &[usize],
    matched: &[bool],
) -> Vec<Unmatched> {
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mine: Vec<(usize, &Baseline)> = baselines
            .iter()
            .enumerate()
            .filter(|(j, _)| from[*j] == i)
            .collect();
        if mine.iter().any(|(j, _)| matched[*j]) {
            continue;
        }
        let entries: Vec<&Baseline> = mine.iter().map(|(_, b)| *b).collect();
        let held = if entries.is_empty() {
            "it holds no figures".to_string()
        } else {
            format!("it holds {}", holds(&entries))
        };
        out.push(Unmatched {
            file: f.clone(),
            held,
        });
    }
    out
}
