//! lint's work: read each file the user names (no daemon), find the GPUs to judge against (`--gfx`, a host tree, or
//! this host), the release each scope's image runs (its tag), and run the rules.

use super::plan::image_release;
use super::Ctx;
use crate::envplan::{self, GpuInput};
use crate::error::Error;
use crate::lint::{
    self, FileKind, FileSummary, Inputs, LintFile, LintFinding, LintReport, ScopeTarget, Variables,
};
use crate::matrix::{Matrices, RocmRelease};
use crate::target::TargetSpec;
use std::path::PathBuf;

/// What lint is asked.
#[derive(Debug, Clone, Default)]
pub struct LintRequest<'m> {
    /// The files.
    pub paths: Vec<PathBuf>,
    /// gfx targets to judge against instead of the host's GPUs.
    pub gfx: Vec<String>,
    /// The ROCm release for scopes whose image names none (an env file, a script).
    pub rocm: Option<&'m RocmRelease>,
}

/// A file larger than this is not a Dockerfile or an env file a person wrote.
const MAX_BYTES: u64 = 4 << 20;

/// Reads and judges every file; a file that cannot be read, or is not what its name says, is an error (exit 2).
pub fn lint(ctx: &Ctx, req: &LintRequest) -> Result<LintReport, Error> {
    let files = read_files(&req.paths)?;
    judge_files(ctx, &files, &req.gfx, req.rocm)
}

/// Reads every file (nothing judged yet), so a caller can refuse a bad file before it does anything else.
pub fn read_files(paths: &[PathBuf]) -> Result<Vec<LintFile>, Error> {
    paths.iter().map(read_file).collect()
}

/// A text rocmenv made itself (a rendered Dockerfile), read as `kind`.
pub fn read_text(name: &str, kind: FileKind, text: &str) -> Result<LintFile, Error> {
    lint::read(name, kind, text).map_err(|p| Error::Invalid {
        fields: vec![name.to_string()],
        value: None,
        message: format!("read as a {}: {}", kind.word(), p.message),
    })
}

/// Judges `files` against the GPUs (`gfx`, else the context's host) and, where a scope's image names none, `rocm`.
pub fn judge_files(
    ctx: &Ctx,
    files: &[LintFile],
    gfx: &[String],
    rocm: Option<&RocmRelease>,
) -> Result<LintReport, Error> {
    let m = ctx.matrices()?;
    let variables = Variables::embedded().map_err(|message| Error::Invalid {
        fields: vec!["variables".into()],
        value: None,
        message,
    })?;
    let (gpus, gpus_said) = gpus(ctx, m, gfx)?;
    let inputs = Inputs {
        matrices: m,
        variables: &variables,
        gpus: gpus.as_deref().map_err(Clone::clone),
    };
    let mut findings: Vec<LintFinding> = Vec::new();
    for f in files {
        let mut of_file: Vec<LintFinding> = Vec::new();
        for scope in &f.scopes {
            let target = scope_target(m, scope, rocm);
            of_file.extend(lint::judge(&inputs, scope, &target));
        }
        for x in &mut of_file {
            x.path = f.path.clone();
            // A stage, service or container is named only where the file has several.
            if f.scopes.len() < 2 {
                x.scope = None;
            }
        }
        of_file.sort_by_key(|x| x.line);
        // Stages inherit their parent's variables: one problem is reported once.
        of_file.dedup_by(|a, b| a.id == b.id && a.line == b.line && a.summary == b.summary);
        findings.extend(of_file);
    }
    Ok(LintReport {
        files: files
            .iter()
            .map(|f| FileSummary {
                path: f.path.clone(),
                kind: f.kind,
                scopes: f.scopes.len(),
            })
            .collect(),
        findings,
        gpus: gpus_said,
    })
}

fn read_file(path: &PathBuf) -> Result<LintFile, Error> {
    let shown = path.display().to_string();
    let bad = |line: Option<usize>, message: String| Error::Config {
        path: path.clone(),
        line,
        column: None,
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| bad(None, format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(bad(None, "not a regular file; name the Dockerfiles, env files, compose files or manifests to check".into()));
    }
    if meta.len() > MAX_BYTES {
        return Err(bad(
            None,
            format!(
                "{} bytes is larger than lint reads ({MAX_BYTES})",
                meta.len()
            ),
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| bad(None, format!("cannot read it: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| bad(None, "not UTF-8 text".into()))?;
    let kind = lint::kind_of(&shown, &text);
    lint::read(&shown, kind, &text)
        .map_err(|p| bad(p.line, format!("read as a {}: {}", kind.word(), p.message)))
}

/// The GPUs: `--gfx`, else the context's host (a tree or this machine); `Err(why)` when there are none to use.
#[allow(clippy::type_complexity)]
fn gpus(
    ctx: &Ctx,
    m: &Matrices,
    gfx: &[String],
) -> Result<(Result<Vec<GpuInput>, String>, String), Error> {
    if !gfx.is_empty() {
        let g = envplan::inputs_from_gfx(m, gfx)?;
        let said = format!("{} (--gfx)", gfx.join(", "));
        return Ok((Ok(g), said));
    }
    let where_ = if ctx.host_spec().sysroot.is_some() {
        "the host tree"
    } else {
        "this host"
    };
    match ctx.facts() {
        Ok(f) if !f.gpus.is_empty() => {
            let g = envplan::inputs_from_host(f);
            let said = format!(
                "{} on {where_}",
                crate::text::counted(g.iter().map(|x| x.label.clone()))
            );
            Ok((Ok(g), said))
        }
        Ok(_) => {
            let why = format!("no AMD or NVIDIA GPU found on {where_}");
            Ok((Err(why.clone()), why))
        }
        Err(e) => {
            let why = format!("{where_} could not be read: {e}");
            Ok((Err(why.clone()), why))
        }
    }
}

/// The release a scope is judged on: its image's tag, else `--rocm`.
fn scope_target<'m>(
    m: &'m Matrices,
    scope: &lint::Scope,
    rocm: Option<&'m RocmRelease>,
) -> ScopeTarget<'m> {
    let from_image = scope
        .image
        .as_ref()
        .map(|i| image_release(m, &i.name, None));
    match from_image
        .as_ref()
        .and_then(|r| r.target.as_ref().map(|t| (t, &r.why)))
    {
        Some((TargetSpec::Rocm(v), why)) => ScopeTarget {
            rocm: m.rocm_release(v),
            ngc: None,
            why: why.clone(),
        },
        Some((TargetSpec::Ngc(v), why)) => ScopeTarget {
            rocm: None,
            ngc: m.ngc_release(v),
            why: why.clone(),
        },
        _ => ScopeTarget {
            rocm,
            ngc: None,
            why: rocm.map_or_else(
                || "no release named".into(),
                |r| format!("--rocm {}", r.version),
            ),
        },
    }
}
