//! `rocmenv init`: a commented `rocmenv.yaml` for this host, checked to load, written atomically and never over an
//! existing file.

use super::files::{self, Existing, OutputKind};
use super::Ctx;
use crate::config::{self, Config};
use crate::error::Error;
use std::path::{Path, PathBuf};

pub use crate::config::{ExampleInput, Stack};

/// What to write and where.
#[derive(Debug, Clone)]
pub struct InitPlan {
    /// The stack to write; `None`: the one the host's GPUs call for.
    pub stack: Option<Stack>,
    /// Where the file goes; `None`: nowhere (the caller prints the text).
    pub output: Option<PathBuf>,
    /// The name the config is checked under (the output's, or `-`).
    pub name: PathBuf,
}

/// The example made for this host.
#[derive(Debug)]
pub struct Example {
    /// What it was filled in with.
    pub input: ExampleInput,
    /// The commented YAML.
    pub text: String,
}

/// Makes the example for this host, checks that it loads, and writes it to `plan.output` when there is one.
pub fn init(ctx: &Ctx, plan: &InitPlan) -> Result<Example, Error> {
    let input = example_for_host(plan.stack, ctx)?;
    let text = config::render_example(&input);
    // What is written must load: a template that drifted from the schema is caught here, not in the user's CI.
    Config::parse(&plan.name, &text)?;
    if let Some(path) = &plan.output {
        write_new(path, &text)?;
    }
    Ok(Example { input, text })
}

/// What the example is filled in with: the stack the GPUs call for (or `--stack`), doctor's default target.
pub fn example_for_host(stack: Option<Stack>, ctx: &Ctx) -> Result<ExampleInput, Error> {
    let facts = ctx.facts()?;
    // The GPUs the host plan leaves visible: an iGPU that env hides is not a target to build for.
    let plan = super::plan::resolve(ctx, &super::plan::PlanRequest::default())?;
    let amd: Vec<String> = plan
        .devices()
        .iter()
        .filter(|d| d.vendor == crate::vendor::Vendor::Amd && d.hidden.is_none())
        .filter_map(|d| d.arch.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let ccs: Vec<String> = facts
        .nvidia_gpus()
        .filter_map(|g| g.compute_capability.as_deref())
        .filter_map(|cc| crate::cc::ComputeCapability::parse_cuda_arch(cc).ok())
        .map(crate::cc::ComputeCapability::sm)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let has_amd = facts.amd_gpus().next().is_some();
    let has_nvidia = facts.nvidia_gpus().next().is_some();
    let stack = match stack {
        Some(s) => s,
        None if has_amd => Stack::Rocm,
        None if has_nvidia => Stack::Ngc,
        None => Stack::Cpu,
    };
    // The rule doctor uses when it is given no --target.
    let target = &plan.target;
    let (spec, why) = match (stack, &target.rocm, &target.cuda) {
        (Stack::Ngc, _, Some(c)) | (Stack::Cpu, None, Some(c)) => (
            Some(format!("cuda-{}", c.cuda.version.short())),
            c.why.clone(),
        ),
        (_, Some(r), _) => (Some(format!("rocm-{}", r.release.version)), r.why.clone()),
        _ => (None, String::new()),
    };
    let gpus = facts.gpus.len();
    let host = match gpus {
        0 => "no GPU".to_string(),
        n => {
            let mut kinds = amd.clone();
            kinds.extend(ccs.iter().cloned());
            format!(
                "{n} GPU{}{}",
                if n == 1 { "" } else { "s" },
                if kinds.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", kinds.join(", "))
                }
            )
        }
    };
    Ok(ExampleInput {
        stack,
        target: spec,
        target_why: why,
        rocm: target.rocm.as_ref().map(|r| r.release.version.short()),
        gfx: amd,
        cuda_arch: ccs,
        nvidia_driver: facts.nvidia_driver.as_ref().map(|d| d.version.to_string()),
        host,
    })
}

/// Writes `text` to `path` unless a file is there: through a temporary file in the same directory, persisted
/// without replacing (link(2)), so a reader never sees half a file and a file written meanwhile is not lost. A
/// device or FIFO (`/dev/stdout`) is written through; a directory is refused.
pub fn write_new(path: &Path, text: &str) -> Result<(), Error> {
    let exists = || {
        Error::Config {
        path: path.to_path_buf(),
        line: None,
        column: None,
        message: "already exists; rocmenv init does not replace it (edit it, remove it, or write elsewhere with -o FILE)".into(),
    }
    };
    // Checked again when the file is put in place; this only spares making a temporary file for nothing.
    if files::output_kind(path)? == OutputKind::File && path.symlink_metadata().is_ok() {
        return Err(exists());
    }
    files::write_with(path, Existing::Refuse(&exists), 0o644, &mut |w| {
        w.write_all(text.as_bytes())
    })?;
    Ok(())
}
