//! Turning a request into a Dockerfile: validate every value, pick the base, fill the templates.

use super::request::{DockerfileRequest, Stack};
use super::select::{select_base, BaseImage};
use crate::error::Error;
use crate::matrix::Matrices;
use crate::sanitize;
use include_dir::{include_dir, Dir};
use minijinja::value::Serde;
use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The templates, embedded so one binary works anywhere.
static IMAGES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/images");
/// The suites `--with-smoke-tests` copies into the build context.

/// Where `--with-smoke-tests` puts the suites inside the image.
pub const SMOKE_TESTS_DIR: &str = "/opt/rocmenv/smoke-tests";
/// The non-root user every image ends with.
pub const USER_NAME: &str = "rocmenv";
/// Its uid: 1000 is what most hosts give the first user, so bind mounts keep working.
pub const USER_UID: u32 = 1000;

/// A rendered Dockerfile and the build context around it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The Dockerfile text.
    pub dockerfile: String,
    /// Other files of the build context, relative to it: `.dockerignore`, `smoke-tests/…`.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    /// The `FROM` reference.
    pub base_image: String,
    /// The image's labels, as written to the `LABEL` instruction.
    pub labels: BTreeMap<String, String>,
    /// Remarks about the choice (unconfirmed tags, overrides, defaults taken).
    pub notes: Vec<String>,
}

/// ONNX Runtime as a stack installs it.
#[derive(Debug, Serialize)]
struct Onnx {
    package: &'static str,
    providers: Vec<&'static str>,
}

/// What the templates see; `images/README.md` describes each name.
#[derive(Debug, Serialize)]
struct TemplateContext<'a> {
    rocmenv_version: &'static str,
    stack: &'static str,
    base_image: &'a str,
    matrix_release: &'a str,
    unconfirmed: bool,
    notes: &'a [String],
    labels: Vec<(&'a str, &'a str)>,
    env: &'a [(String, String)],
    apt: &'a [String],
    apt_unpinned: bool,
    pip: Vec<String>,
    pip_unpinned: bool,
    onnxruntime: Option<Onnx>,
    smoke_tests_dir: Option<&'static str>,
    user: &'static str,
    uid: u32,
    groups: Vec<&'static str>,
}

/// The ONNX Runtime package and execution providers that fit `stack`.
fn onnxruntime_for(stack: Stack) -> Onnx {
    match stack {
        Stack::Rocm => Onnx {
            package: "onnxruntime-rocm",
            providers: vec!["MIGraphXExecutionProvider", "ROCMExecutionProvider"],
        },
        Stack::Ngc => Onnx {
            package: "onnxruntime-gpu",
            providers: vec!["CUDAExecutionProvider", "TensorrtExecutionProvider"],
        },
        Stack::Cpu => Onnx {
            package: "onnxruntime",
            providers: vec!["CPUExecutionProvider"],
        },
    }
}

/// Checks every user value before any of it reaches a template.
fn validate_request(req: &DockerfileRequest) -> Result<(), Error> {
    for p in &req.pip {
        sanitize::pip_requirement("pip", p)?;
    }
    for a in &req.apt {
        sanitize::apt_package("apt", a)?;
    }
    for (name, value) in &req.env {
        sanitize::env_name("env", name)?;
        sanitize::env_value("env", value)?;
    }
    if let Some(s) = &req.source {
        sanitize::label_value("source", s)?;
    }
    let rocm_flags = [
        ("rocm", &req.rocm),
        ("pytorch", &req.pytorch),
        ("ubuntu", &req.ubuntu),
        ("python", &req.python),
    ];
    let stray = match req.stack {
        Stack::Rocm => None,
        _ => rocm_flags
            .iter()
            .find(|(_, v)| v.is_some())
            .map(|(f, _)| *f),
    };
    let stray = stray.or((req.stack != Stack::Ngc && req.ngc.is_some()).then_some("ngc"));
    if let Some(flag) = stray {
        return Err(Error::Usage {
            flag: flag.into(),
            message: format!("does not apply to the {} stack", req.stack),
        });
    }
    if req.base.is_some() && req.stack != Stack::Cpu {
        return Err(Error::Usage {
            flag: "base".into(),
            message: format!(
                "only the cpu stack takes a base image; the {} stack's base comes from the matrices",
                req.stack
            ),
        });
    }
    Ok(())
}

/// The image's labels: OCI keys plus rocmenv's own, all checked as label values.
fn labels(
    req: &DockerfileRequest,
    base: &BaseImage,
    onnx: Option<&Onnx>,
) -> Result<BTreeMap<String, String>, Error> {
    let mut l = BTreeMap::new();
    let oci = "org.opencontainers.image";
    let what = match req.stack {
        Stack::Rocm => "PyTorch on AMD ROCm",
        Stack::Ngc => "PyTorch on NVIDIA CUDA (NGC)",
        Stack::Cpu => "PyTorch on CPU (Debian python3-torch)",
    };
    l.insert(
        format!("{oci}.title"),
        format!("rocmenv-{}-pytorch", req.stack),
    );
    l.insert(
        format!("{oci}.description"),
        format!("{what}, generated by rocmenv from {}", base.matrix_release),
    );
    if let Some(s) = &req.source {
        l.insert(format!("{oci}.source"), s.clone());
    }
    l.insert(format!("{oci}.version"), env!("CARGO_PKG_VERSION").into());
    l.insert(format!("{oci}.base.name"), base.reference.clone());
    if let Some(d) = &base.digest {
        l.insert(format!("{oci}.base.digest"), d.clone());
    }
    l.insert("io.rocmenv.stack".into(), req.stack.to_string());
    l.insert(
        "io.rocmenv.matrix-release".into(),
        base.matrix_release.clone(),
    );
    let known = [
        ("rocm", &base.rocm),
        ("pytorch", &base.pytorch),
        ("python", &base.python),
        ("ubuntu", &base.ubuntu),
        ("cuda", &base.cuda),
    ];
    for (key, value) in known {
        if let Some(v) = value {
            l.insert(format!("io.rocmenv.{key}"), v.clone());
        }
    }
    // gfx targets describe AMD GPUs; a caller may pass the detected ones whatever the stack.
    if req.stack == Stack::Rocm && !req.gfx.is_empty() {
        let gfx: Vec<String> = req.gfx.iter().map(|g| g.to_string()).collect();
        l.insert("io.rocmenv.gfx".into(), gfx.join(","));
    }
    if base.unconfirmed {
        l.insert("io.rocmenv.tag-confidence".into(), "unconfirmed".into());
    }
    if let Some(o) = onnx {
        l.insert(
            "io.rocmenv.onnxruntime.providers".into(),
            o.providers.join(","),
        );
    }
    if req.with_smoke_tests {
        l.insert("io.rocmenv.smoke-tests".into(), SMOKE_TESTS_DIR.into());
    }
    for value in l.values() {
        // Matrix text can come from `--matrices DIR`, so it is checked like any user value.
        sanitize::label_value("matrices", value)?;
    }
    Ok(l)
}

/// Renders one embedded template with `ctx`.
fn render_template(name: &str, ctx: &TemplateContext<'_>) -> Result<String, Error> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
    let syntax = minijinja::syntax::SyntaxConfig::builder()
        .trim_blocks(true)
        .lstrip_blocks(true)
        .build()
        .map_err(template_error)?;
    env.set_syntax(syntax);
    env.add_filter("sq", single_quote);
    for file in IMAGES
        .files()
        .filter(|f| f.path().extension().is_some_and(|e| e == "j2"))
    {
        let path = file.path().to_string_lossy().into_owned();
        let text = file.contents_utf8().unwrap_or_default().to_string();
        env.add_template_owned(path, text).map_err(template_error)?;
    }
    let tmpl = env.get_template(name).map_err(template_error)?;
    tmpl.render(Serde(ctx)).map_err(template_error)
}

/// The `sq` filter: a shell word in single quotes; validation has already refused `'` in any value.
fn single_quote(value: String) -> Result<String, minijinja::Error> {
    if value.contains('\'') {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            "a single quote reached a shell word",
        ));
    }
    Ok(format!("'{value}'"))
}

/// A broken embedded template is a bug in this build, reported as such.
fn template_error(e: minijinja::Error) -> Error {
    Error::Environment(format!(
        "rocmenv's embedded Dockerfile templates are broken: {e:#}"
    ))
}

/// Validates `req`, picks its base image from `m`, and renders the Dockerfile and build context.
pub fn render(req: &DockerfileRequest, m: &Matrices) -> Result<Rendered, Error> {
    validate_request(req)?;
    let base = select_base(req, m)?;
    let onnx = req.onnxruntime.then(|| onnxruntime_for(req.stack));
    let labels = labels(req, &base, onnx.as_ref())?;
    let notes: Vec<String> = base
        .notes
        .iter()
        .map(|n| n.replace(['\n', '\r'], " "))
        .collect();
    let mut pip: Vec<String> = req.pip.clone();
    if let Some(o) = &onnx {
        pip.push(o.package.to_string());
    }
    let ctx = TemplateContext {
        rocmenv_version: env!("CARGO_PKG_VERSION"),
        stack: req.stack.name(),
        base_image: &base.reference,
        matrix_release: &base.matrix_release,
        unconfirmed: base.unconfirmed,
        notes: &notes,
        labels: labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect(),
        env: &req.env,
        apt: &req.apt,
        apt_unpinned: req.apt.iter().any(|a| !a.contains('=')),
        pip_unpinned: pip.iter().any(|p| !p.contains(['=', '<', '>'])),
        pip,
        onnxruntime: onnx,
        smoke_tests_dir: req.with_smoke_tests.then_some(SMOKE_TESTS_DIR),
        user: USER_NAME,
        uid: USER_UID,
        groups: match req.stack {
            Stack::Rocm => vec!["video", "render"],
            Stack::Ngc | Stack::Cpu => Vec::new(),
        },
    };
    let dockerfile = render_template(&format!("{}-pytorch.Dockerfile.j2", req.stack), &ctx)?;
    let mut files = vec![(
        PathBuf::from(".dockerignore"),
        render_template("dockerignore.j2", &ctx)?.into_bytes(),
    )];
    if req.with_smoke_tests {
        files.extend(
            crate::suites::suite_files()
                .into_iter()
                .map(|(p, b)| (PathBuf::from("smoke-tests").join(p), b.to_vec())),
        );
    }
    Ok(Rendered {
        dockerfile,
        files,
        base_image: base.reference,
        labels,
        notes,
    })
}

