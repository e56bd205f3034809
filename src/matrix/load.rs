//! Loading and validating the matrix files, with errors that name the file and line.

use super::firmware::{hex_version, FirmwareFile, FIRMWARE_COMPONENTS, KNOWN_BAD_FIELDS};
use super::schema::*;
use super::yaml_lines::{
    contains_token, error_line, item_line, key_values, line_of, record_line, strip_location,
};
use super::Matrices;
use crate::cc::ComputeCapability;
use crate::gfx::GfxTarget;
use include_dir::{include_dir, Dir};
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;
use std::path::Path;

static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/matrices");

/// The files a matrices directory must hold.
pub const MATRIX_FILES: [&str; 4] = ["rocm.yaml", "cuda.yaml", "ngc.yaml", "gpus.yaml"];

/// A matrix file that could not be read or does not validate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}{}: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct MatrixError {
    /// The file, as given (or `embedded:rocm.yaml`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// A file a matrices directory may hold; without it, the embedded one is used (so a directory made for an older
/// rocmenv, with the four files above, still loads).
pub const OPTIONAL_MATRIX_FILES: [&str; 1] = ["firmware.yaml"];

/// The embedded matrices as build.rs converted them to JSON.
const EMBEDDED_JSON: [(&str, &str); 5] = [
    (
        "rocm.yaml",
        include_str!(concat!(env!("OUT_DIR"), "/rocm.json")),
    ),
    (
        "cuda.yaml",
        include_str!(concat!(env!("OUT_DIR"), "/cuda.json")),
    ),
    (
        "ngc.yaml",
        include_str!(concat!(env!("OUT_DIR"), "/ngc.json")),
    ),
    (
        "gpus.yaml",
        include_str!(concat!(env!("OUT_DIR"), "/gpus.json")),
    ),
    (
        "firmware.yaml",
        include_str!(concat!(env!("OUT_DIR"), "/firmware.json")),
    ),
];

fn from_json<T: DeserializeOwned>(name: &str, json: &str) -> Result<T, MatrixError> {
    super::deferred::while_built_in(|| serde_json::from_str(json)).map_err(|e| MatrixError {
        file: format!("embedded:{name}"),
        line: None,
        message: e.to_string(),
    })
}

impl Matrices {
    /// The matrices built into the binary: the JSON build.rs made from `matrices/*.yaml`, which a test validates
    /// exactly as `--matrices DIR` would be (so a release build never validates them again at start).
    pub fn embedded() -> Result<Matrices, MatrixError> {
        let [rocm, cuda, ngc, gpus, firmware] = EMBEDDED_JSON;
        Ok(Matrices {
            rocm: embedded(rocm),
            cuda: embedded(cuda),
            ngc: embedded(ngc),
            gpus: embedded(gpus),
            firmware: embedded(firmware),
            origin: "embedded".into(),
        })
    }

    /// The embedded YAML, parsed and validated as a `--matrices` directory is (what the test compares with).
    pub fn embedded_yaml() -> Result<Matrices, MatrixError> {
        let text = |name: &str| -> Result<(String, String), MatrixError> {
            let f = EMBEDDED.get_file(name).ok_or_else(|| MatrixError {
                file: format!("embedded:{name}"),
                line: None,
                message: "missing from the build".into(),
            })?;
            Ok((
                format!("embedded:{name}"),
                f.contents_utf8().unwrap_or_default().to_string(),
            ))
        };
        Self::from_texts(
            text("rocm.yaml")?,
            text("cuda.yaml")?,
            text("ngc.yaml")?,
            text("gpus.yaml")?,
            Some(text("firmware.yaml")?),
            "embedded".into(),
        )
    }

    /// Loads `rocm.yaml`, `cuda.yaml`, `ngc.yaml` and `gpus.yaml` from `dir`.
    pub fn load_dir(dir: &Path) -> Result<Matrices, MatrixError> {
        if !dir.is_dir() {
            return Err(MatrixError {
                file: dir.display().to_string(),
                line: None,
                message: "is not a directory of matrix files (expected rocm.yaml, cuda.yaml, ngc.yaml, gpus.yaml)".into(),
            });
        }
        let read = |name: &str| -> Result<(String, String), MatrixError> {
            let path = dir.join(name);
            let file = path.display().to_string();
            let bytes = std::fs::read(&path).map_err(|e| MatrixError {
                file: file.clone(),
                line: None,
                message: format!("cannot be read: {e}"),
            })?;
            let text = String::from_utf8(bytes).map_err(|e| {
                let bad = e.utf8_error().valid_up_to();
                let line = e.as_bytes()[..bad].iter().filter(|&&b| b == b'\n').count() + 1;
                MatrixError {
                    file: file.clone(),
                    line: Some(line),
                    message: format!("is not UTF-8 text (invalid byte at offset {bad})"),
                }
            })?;
            Ok((file, text))
        };
        let firmware = match dir.join("firmware.yaml").exists() {
            true => Some(read("firmware.yaml")?),
            false => None,
        };
        Self::from_texts(
            read("rocm.yaml")?,
            read("cuda.yaml")?,
            read("ngc.yaml")?,
            read("gpus.yaml")?,
            firmware,
            dir.display().to_string(),
        )
    }

    /// `--matrices DIR`, else `ROCMENV_MATRICES`, else the embedded set.
    pub fn load(dir: Option<&Path>) -> Result<Matrices, MatrixError> {
        match dir {
            Some(d) => Self::load_dir(d),
            None => Self::embedded(),
        }
    }

    /// Parses and validates the files' (name, text); what `load_dir` does once it has read them. Without
    /// `firmware`, the embedded firmware list is used.
    pub fn from_texts(
        rocm: (String, String),
        cuda: (String, String),
        ngc: (String, String),
        gpus: (String, String),
        firmware: Option<(String, String)>,
        origin: String,
    ) -> Result<Matrices, MatrixError> {
        let firmware_file = match &firmware {
            Some(f) => Part::ready(parse::<FirmwareFile>(&f.0, &f.1)?),
            None => embedded(EMBEDDED_JSON[4]),
        };
        let mut m = Matrices {
            rocm: Part::ready(parse::<RocmFile>(&rocm.0, &rocm.1)?),
            cuda: Part::ready(parse::<CudaFile>(&cuda.0, &cuda.1)?),
            ngc: Part::ready(parse::<NgcFile>(&ngc.0, &ngc.1)?),
            gpus: Part::ready(parse::<GpusFile>(&gpus.0, &gpus.1)?),
            firmware: firmware_file,
            origin,
        };
        if let Some(f) = &firmware {
            validate_firmware(&m.firmware, &m.gpus, f)?;
        }
        validate_rocm(&m.rocm, &rocm)?;
        validate_cuda(&m.cuda, &cuda)?;
        validate_ngc(&m.ngc, &ngc)?;
        validate_gpus(&m.gpus, &gpus)?;
        validate_ngc_cuda(&m.ngc, &m.cuda, &ngc)?;
        validate_distro_gpus(&m.rocm, &m.gpus, &rocm)?;
        m.sort();
        Ok(m)
    }

    /// Releases in version order, whatever order the files list them in.
    fn sort(&mut self) {
        self.rocm.settle();
        self.cuda.settle();
        self.ngc.settle();
    }
}

/// What a matrix file needs once parsed, before anything reads it.
pub trait Settle {
    /// Puts the releases in version order, whatever order the file lists them in.
    fn settle(&mut self) {}
}

impl Settle for RocmFile {
    fn settle(&mut self) {
        self.releases.sort_by(|a, b| a.version.cmp(&b.version));
    }
}

impl Settle for CudaFile {
    fn settle(&mut self) {
        self.releases.sort_by(|a, b| a.version.cmp(&b.version));
    }
}

impl Settle for NgcFile {
    fn settle(&mut self) {
        self.releases.sort_by(|a, b| a.release.cmp(&b.release));
    }
}

impl Settle for GpusFile {}
impl Settle for FirmwareFile {}

/// One matrix file: parsed already (from a `--matrices` directory, validated), or the built-in JSON, parsed and
/// settled on first use.
pub type Part<T> = super::deferred::Deferred<T>;

/// The built-in file `json` (name, text), parsed when first read.
fn embedded<T: DeserializeOwned + Settle>(json: (&'static str, &'static str)) -> Part<T> {
    Part::built_in(json.0, json.1, |name, json| {
        let mut v: T = from_json(name, json)
            .unwrap_or_else(|e| panic!("rocmenv was built with a defective embedded matrix: {e}"));
        v.settle();
        v
    })
}

fn parse<T: DeserializeOwned>(file: &str, text: &str) -> Result<T, MatrixError> {
    if text.lines().all(|l| {
        let l = l.trim();
        l.is_empty() || l.starts_with('#') || l == "---"
    }) {
        return Err(MatrixError {
            file: file.to_string(),
            line: None,
            message: "is empty (expected `schema_version: 1` and the matrix)".into(),
        });
    }
    serde_yaml_ng::from_str(text).map_err(|e| {
        let message = crate::text::one_line(&strip_location(&e.to_string()));
        MatrixError {
            file: file.to_string(),
            line: error_line(text, &e, &message),
            message,
        }
    })
}

fn fail(
    src: &(String, String),
    key: &str,
    value: &str,
    nth: usize,
    message: String,
) -> MatrixError {
    MatrixError {
        file: src.0.clone(),
        line: line_of(&src.1, key, value, nth),
        message,
    }
}

/// True when `source` names at least one public reference: an `https://` URL, or
/// `owner/repo@commit:path` with a 7-to-40-digit hex commit.
pub(crate) fn has_public_reference(source: &str) -> bool {
    let name = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    let repo_ref = |t: &str| -> Option<()> {
        let (repo, rest) = t.split_once('@')?;
        let (owner, repo) = repo.split_once('/')?;
        let (commit, path) = rest.split_once(':')?;
        let commit_ok =
            (7..=40).contains(&commit.len()) && commit.bytes().all(|b| b.is_ascii_hexdigit());
        (name(owner) && name(repo) && commit_ok && !path.is_empty()).then_some(())
    };
    source
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | ',' | '(' | ')' | '"' | '\''))
        .any(|t| {
            t.strip_prefix("https://")
                .is_some_and(|host| host.len() > 3 && host.contains('.'))
                || repo_ref(t).is_some()
        })
}

/// The forms a `source` may take, for error messages.
const SOURCE_FORMS: &str =
    "a public URL (https://...) or owner/repo@commit:path (commit: 7 to 40 hex digits)";

/// One record's provenance: a `source` with a public reference (required unless `optional`), and
/// `unconfirmed` names that are fields of the record (`*`, or `peaks.<field>` where `peaks` is one).
fn check_provenance(
    src: &(String, String),
    start: Option<usize>,
    what: &str,
    p: &dyn Sourced,
    names: &[&str],
    optional: bool,
) -> Result<(), MatrixError> {
    let at = |hit: &dyn Fn(&str) -> bool| start.map(|s| record_line(&src.1, s, hit).unwrap_or(s));
    let err = |line, message| MatrixError {
        file: src.0.clone(),
        line,
        message,
    };
    match p.source() {
        None if !optional => {
            return Err(err(
                start,
                format!(
                    "{what} has no `source`: every record needs {}",
                    SOURCE_FORMS
                ),
            ))
        }
        Some(s) if !has_public_reference(s) => {
            let shown: String = s.chars().take(60).collect();
            return Err(err(
                at(&|l| !key_values(l, "source").is_empty()),
                format!(
                    "{what}: source \"{shown}{}\" names no public reference; use {}",
                    if shown.len() < s.len() { "…" } else { "" },
                    SOURCE_FORMS
                ),
            ));
        }
        _ => {}
    }
    for f in p.unconfirmed() {
        let peak = f
            .strip_prefix("peaks.")
            .is_some_and(|k| names.contains(&"peaks") && fields::PEAKS.contains(&k));
        if f != "*" && !peak && !names.contains(&f.as_str()) {
            return Err(err(
                at(&|l| contains_token(l, f)),
                format!(
                    "{what}: unconfirmed names `{f}`, which is not a field of this record (fields: {}; or \"*\" for all)",
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

fn check_schema(v: u32, src: &(String, String)) -> Result<(), MatrixError> {
    if v != 1 {
        return Err(fail(
            src,
            "schema_version",
            &v.to_string(),
            0,
            format!("schema_version {v} is not supported by this rocmenv (it reads 1)"),
        ));
    }
    Ok(())
}

fn validate_rocm(f: &RocmFile, src: &(String, String)) -> Result<(), MatrixError> {
    check_schema(f.schema_version, src)?;
    if f.releases.is_empty() {
        return Err(fail(src, "releases", "", 0, "has no releases".into()));
    }
    for l in &f.left_out {
        check_provenance(
            src,
            line_of(&src.1, "why", &l.why, 0),
            &format!("left_out {}", l.series.join(", ")),
            l,
            fields::LEFT_OUT,
            false,
        )?;
    }
    validate_wsl(f, src)?;
    let mut seen = BTreeSet::new();
    for r in &f.releases {
        let v = r.version.to_string();
        if !seen.insert(r.version.clone()) {
            return Err(fail(
                src,
                "version",
                &raw_version(&src.1, &r.version),
                1,
                format!("duplicate release {v}"),
            ));
        }
        let mut targets = BTreeSet::new();
        for g in &r.gfx {
            if !targets.insert(g.target) {
                return Err(fail(
                    src,
                    "version",
                    &raw_version(&src.1, &r.version),
                    0,
                    format!("release {v} lists {} twice", g.target),
                ));
            }
        }
        for d in &r.distros {
            for k in &d.kernels {
                if crate::version::parse_with_parts(k.series.split('-').next().unwrap_or(""))
                    .is_err()
                {
                    return Err(fail(
                        src,
                        "series",
                        &k.series,
                        0,
                        format!("release {v}: kernel series `{}` is not a version", k.series),
                    ));
                }
            }
        }
        for img in &r.images {
            if let Err(why) = crate::matrix::query::check_rocm_tag(&img.tag, &r.version) {
                return Err(fail(
                    src,
                    "tag",
                    &img.tag,
                    0,
                    format!("release {v}: image tag `{}` {why}", img.tag),
                ));
            }
            // An image without a source of its own is covered by its release's.
            check_provenance(
                src,
                item_line(&src.1, "tag", &img.tag),
                &format!("release {v}: image {}", img.tag),
                img,
                fields::ROCM_IMAGE,
                true,
            )?;
        }
        if let Some(w) = r.wheels.as_ref() {
            check_wheels(src, &v.to_string(), w)?;
        }
        for b in &r.built {
            check_provenance(
                src,
                item_line(&src.1, "component", &b.component),
                &format!("release {v}: built by {}", b.component),
                b,
                fields::BUILT_TARGETS,
                false,
            )?;
        }
        check_provenance(
            src,
            item_line(&src.1, "version", &raw_version(&src.1, &r.version)),
            &format!("release {v}"),
            r,
            fields::ROCM_RELEASE,
            false,
        )?;
    }
    Ok(())
}

/// The `wsl:` records: one per release, each with GPUs, a Windows driver and a source.
fn validate_wsl(f: &RocmFile, src: &(String, String)) -> Result<(), MatrixError> {
    let mut seen = BTreeSet::new();
    for w in &f.wsl {
        let v = w.release.to_string();
        let line = item_line(&src.1, "release", &raw_version(&src.1, &w.release));
        let bad = |message: String| MatrixError {
            file: src.0.clone(),
            line,
            message,
        };
        if !seen.insert(w.release.clone()) {
            return Err(bad(format!("wsl: duplicate release {v}")));
        }
        if w.gpus.is_empty() || w.gfx.is_empty() {
            return Err(bad(format!(
                "wsl release {v}: `gpus` and `gfx` name the GPUs AMD supports on WSL; neither may be empty"
            )));
        }
        let named = |x: &Option<String>| x.as_deref().is_some_and(|x| !x.trim().is_empty());
        if !(named(&w.windows_driver) || named(&w.rocdxg)) || w.distros.is_empty() {
            return Err(bad(format!(
                "wsl release {v}: `windows_driver` and `distros` say what AMD supports it with; neither may be empty (`rocdxg` stands for the driver where AMD names no version)"
            )));
        }
        check_provenance(
            src,
            line,
            &format!("wsl release {v}"),
            w,
            fields::WSL_RELEASE,
            false,
        )?;
    }
    Ok(())
}

/// Every model a distro row names (`gpus:`, `exclude_gpus:`) is an AMD model of gpus.yaml, by name, short name
/// or PCI id: a misspelt exclusion would silently exclude nothing.
fn validate_distro_gpus(
    f: &RocmFile,
    gpus: &GpusFile,
    src: &(String, String),
) -> Result<(), MatrixError> {
    for r in &f.releases {
        for d in &r.distros {
            for (key, e) in d
                .gpus
                .iter()
                .map(|e| ("gpus", e))
                .chain(d.exclude_gpus.iter().map(|e| ("exclude_gpus", e)))
            {
                let known = gpus
                    .gpus
                    .iter()
                    .any(|g| g.vendor == Vendor::Amd && g.answers_to(e));
                if !known {
                    return Err(MatrixError {
                        file: src.0.clone(),
                        // The first row naming it under that key: where an editor fixes it.
                        line: src
                            .1
                            .lines()
                            .position(|l| l.contains(&format!("{key}: [")) && l.contains(e.as_str()))
                            .map(|i| i + 1),
                        message: format!(
                            "release {}: {} {}: `{key}` names `{e}`, which is no AMD model of gpus.yaml (use its name, e.g. MI300X, or a PCI id, and add the model to gpus.yaml first)",
                            r.version, d.id, d.version
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// A release's `wheels:`: its values reach a `RUN pip install` line of a generated Dockerfile, so each is held
/// to what it may be (an https index, a pinned OS image, versions); `--matrices` makes them user input.
fn check_wheels(
    src: &(String, String),
    v: &str,
    w: &crate::matrix::RocmWheels,
) -> Result<(), MatrixError> {
    // Both the index and the base reach a shell word: letters, digits and `.-_/:` only.
    let plain = |t: &str| {
        t.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/' | ':'))
    };
    let url_ok = w.index.starts_with("https://")
        && w.index.ends_with('/')
        && w.index.len() > "https://".len() + 1
        && plain(&w.index);
    if !url_ok {
        return Err(fail(
            src,
            "index",
            &w.index,
            0,
            format!("release {v}: wheel index `{}` is not an https:// URL ending in `/` (letters, digits, `.-_/:` only)", w.index),
        ));
    }
    // `repository:tag`, pinned by its tag; the Dockerfile renderer parses it again as an image reference.
    let tagged = w
        .base
        .rsplit('/')
        .next()
        .and_then(|last| last.split_once(':'));
    let base_ok = tagged
        .is_some_and(|(name, tag)| !name.is_empty() && !tag.is_empty() && tag != "latest")
        && plain(&w.base);
    if !base_ok {
        return Err(fail(
            src,
            "base",
            &w.base,
            0,
            format!("release {v}: wheel base image `{}` is not `repository:tag` (a tag other than latest)", w.base),
        ));
    }
    let versions = [("ubuntu", &w.ubuntu), ("python", &w.python)]
        .into_iter()
        .chain(
            w.builds
                .iter()
                .flat_map(|b| [("pytorch", &b.pytorch), ("torchvision", &b.torchvision)]),
        );
    for (key, value) in versions {
        if crate::version::parse_with_parts(value).is_err() {
            return Err(fail(
                src,
                key,
                value,
                0,
                format!("release {v}: wheel {key} `{value}` is not a version like 2.13.0"),
            ));
        }
    }
    if w.builds.is_empty() || w.devices.is_empty() {
        return Err(fail(
            src,
            "index",
            &w.index,
            0,
            format!("release {v}: wheels need at least one build and one device"),
        ));
    }
    check_provenance(
        src,
        item_line(&src.1, "index", &w.index),
        &format!("release {v}: wheels"),
        w,
        fields::ROCM_WHEELS,
        false,
    )
}

/// The version as written in the file (`6.2` or `6.2.0`), so its line can be found.
fn raw_version(text: &str, v: &crate::version::Version) -> String {
    let short = v.short();
    let full = v.to_string();
    if v.patch() == 0
        && line_of(text, "version", &short, 0).is_some()
        && line_of(text, "version", &full, 0).is_none()
    {
        short
    } else {
        full
    }
}

fn validate_cuda(f: &CudaFile, src: &(String, String)) -> Result<(), MatrixError> {
    check_schema(f.schema_version, src)?;
    for fam in &f.families {
        check_provenance(
            src,
            item_line(&src.1, "major", &fam.major.to_string()),
            &format!("family {}", fam.major),
            fam,
            fields::CUDA_FAMILY,
            false,
        )?;
    }
    let mut seen = BTreeSet::new();
    for r in &f.releases {
        if !seen.insert(r.version.clone()) {
            return Err(fail(
                src,
                "version",
                &raw_version(&src.1, &r.version),
                1,
                format!("duplicate release {}", r.version),
            ));
        }
        for cc in &r.compute_capabilities {
            if cc.parse::<ComputeCapability>().is_err() {
                return Err(fail(
                    src,
                    "version",
                    &raw_version(&src.1, &r.version),
                    0,
                    format!(
                        "release {}: `{cc}` is not a compute capability like 8.6",
                        r.version
                    ),
                ));
            }
        }
        if !f
            .families
            .iter()
            .any(|fam| fam.major as u64 == r.version.major())
        {
            return Err(fail(
                src,
                "version",
                &raw_version(&src.1, &r.version),
                0,
                format!(
                    "release {} has no family entry for CUDA {}",
                    r.version,
                    r.version.major()
                ),
            ));
        }
        check_provenance(
            src,
            item_line(&src.1, "version", &raw_version(&src.1, &r.version)),
            &format!("release {}", r.version),
            r,
            fields::CUDA_RELEASE,
            false,
        )?;
    }
    Ok(())
}

fn validate_ngc(f: &NgcFile, src: &(String, String)) -> Result<(), MatrixError> {
    check_schema(f.schema_version, src)?;
    let mut seen = BTreeSet::new();
    for r in &f.releases {
        let ok = r.release.len() == 5
            && r.release.as_bytes()[2] == b'.'
            && r.release[..2].bytes().all(|b| b.is_ascii_digit())
            && r.release[3..].bytes().all(|b| b.is_ascii_digit())
            && (1..=12).contains(&r.release[3..].parse::<u32>().unwrap_or(0));
        if !ok {
            return Err(fail(
                src,
                "release",
                &r.release,
                0,
                format!("`{}` is not a YY.MM release", r.release),
            ));
        }
        if !seen.insert(r.release.clone()) {
            return Err(fail(
                src,
                "release",
                &r.release,
                1,
                format!("duplicate release {}", r.release),
            ));
        }
        if !crate::matrix::query::is_safe_tag(&r.tag) {
            return Err(fail(
                src,
                "tag",
                &r.tag,
                0,
                format!("`{}` is not a valid image tag", r.tag),
            ));
        }
        check_provenance(
            src,
            item_line(&src.1, "release", &r.release),
            &format!("release {}", r.release),
            r,
            fields::NGC_RELEASE,
            false,
        )?;
    }
    Ok(())
}

/// Every NGC release ships a CUDA that cuda.yaml lists: that release, or for a two-part `13.4`
/// (update not published) a release of that series, as `--target ngc-YY.MM` resolves it.
fn validate_ngc_cuda(
    f: &NgcFile,
    cuda: &CudaFile,
    src: &(String, String),
) -> Result<(), MatrixError> {
    for r in &f.releases {
        let listed = cuda.releases.iter().any(|c| {
            c.version == r.cuda || (r.cuda.patch() == 0 && c.version.in_series(&r.cuda, 2))
        });
        if !listed {
            return Err(MatrixError {
                file: src.0.clone(),
                line: item_line(&src.1, "release", &r.release),
                message: format!(
                    "release {} ships CUDA {}, which cuda.yaml does not list (add that CUDA release first)",
                    r.release, r.cuda
                ),
            });
        }
    }
    Ok(())
}

/// Validates firmware.yaml: each entry names a component doctor reads, gfx targets gpus.yaml lists, hex versions,
/// and its source.
fn validate_firmware(
    f: &FirmwareFile,
    gpus: &GpusFile,
    src: &(String, String),
) -> Result<(), MatrixError> {
    check_schema(f.schema_version, src)?;
    for (i, e) in f.known_bad.iter().enumerate() {
        let what = format!("known_bad[{i}] ({} firmware)", e.component);
        check_provenance(
            src,
            line_of(&src.1, "component", &e.component, 0),
            &what,
            e,
            KNOWN_BAD_FIELDS,
            false,
        )?;
        if !FIRMWARE_COMPONENTS.contains(&e.component.as_str()) {
            return Err(fail(
                src,
                "component",
                &e.component,
                0,
                format!(
                    "{what}: component `{}` is not one doctor reads ({})",
                    e.component,
                    FIRMWARE_COMPONENTS.join(", ")
                ),
            ));
        }
        if let Some(t) = e
            .gfx
            .iter()
            .find(|t| !gpus.gfx_targets.iter().any(|g| g.target == **t))
        {
            return Err(fail(
                src,
                "gfx",
                &t.to_string(),
                0,
                format!("{what}: gfx target {t} is not in gpus.yaml"),
            ));
        }
        if e.versions.is_empty() {
            return Err(fail(
                src,
                "component",
                &e.component,
                0,
                format!("{what}: lists no versions"),
            ));
        }
        if let Some(v) = e.versions.iter().find(|v| hex_version(v).is_none()) {
            return Err(fail(
                src,
                "versions",
                v,
                0,
                format!("{what}: version `{v}` is not hex as sysfs shows it (0x00000083)"),
            ));
        }
    }
    Ok(())
}

/// Validates gpus.yaml: its gfx targets, then each GPU against them, with PCI ids unique per vendor.
fn validate_gpus(f: &GpusFile, src: &(String, String)) -> Result<(), MatrixError> {
    check_schema(f.schema_version, src)?;
    let targets = validate_gfx_targets(f, src)?;
    let mut ids = BTreeSet::new();
    for g in &f.gpus {
        check_provenance(
            src,
            item_line(&src.1, "name", &g.name),
            &format!("GPU `{}`", g.name),
            g,
            fields::GPU_MODEL,
            false,
        )?;
        check_gpu_identity(g, &targets, src)?;
        check_pci_ids(g, &mut ids, src)?;
    }
    Ok(())
}

/// The gfx targets gpus.yaml lists, each once and with its provenance.
fn validate_gfx_targets(
    f: &GpusFile,
    src: &(String, String),
) -> Result<BTreeSet<GfxTarget>, MatrixError> {
    let mut targets: BTreeSet<GfxTarget> = BTreeSet::new();
    for t in &f.gfx_targets {
        if !targets.insert(t.target) {
            return Err(fail(
                src,
                "target",
                &t.target.to_string(),
                1,
                format!("duplicate gfx target {}", t.target),
            ));
        }
        check_provenance(
            src,
            item_line(&src.1, "target", &t.target.to_string()),
            &format!("gfx target {}", t.target),
            t,
            fields::GFX_TARGET,
            false,
        )?;
    }
    Ok(targets)
}

/// A GPU names what its vendor needs: an AMD GPU a listed gfx target, an NVIDIA GPU a compute capability.
fn check_gpu_identity(
    g: &GpuModel,
    targets: &BTreeSet<GfxTarget>,
    src: &(String, String),
) -> Result<(), MatrixError> {
    match g.vendor {
        Vendor::Amd if g.gfx.is_none() => {
            return Err(fail(
                src,
                "name",
                &g.name,
                0,
                format!("AMD GPU `{}` needs a gfx target", g.name),
            ))
        }
        Vendor::Nvidia
            if g.compute_capability
                .as_deref()
                .and_then(|c| c.parse::<ComputeCapability>().ok())
                .is_none() =>
        {
            return Err(fail(
                src,
                "name",
                &g.name,
                0,
                format!(
                    "NVIDIA GPU `{}` needs a compute_capability like 9.0",
                    g.name
                ),
            ))
        }
        Vendor::Cpu => {
            return Err(fail(
                src,
                "name",
                &g.name,
                0,
                format!(
                    "GPU `{}` names vendor cpu: a GPU's vendor is amd or nvidia",
                    g.name
                ),
            ))
        }
        _ => {}
    }
    if let Some(t) = g.gfx {
        if !targets.contains(&t) {
            return Err(fail(
                src,
                "name",
                &g.name,
                0,
                format!("GPU `{}` uses {t}, which gfx_targets does not list", g.name),
            ));
        }
    }
    Ok(())
}

/// A GPU's PCI ids are lowercase `0x` and four hex digits, and none is listed before for the same vendor.
fn check_pci_ids(
    g: &GpuModel,
    ids: &mut BTreeSet<(Vendor, String)>,
    src: &(String, String),
) -> Result<(), MatrixError> {
    for id in &g.pci_ids {
        let ok = id.len() == 6
            && id.starts_with("0x")
            && id[2..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if !ok {
            return Err(fail(
                src,
                "name",
                &g.name,
                0,
                format!("GPU `{}`: PCI id `{id}` must look like 0x744c", g.name),
            ));
        }
        if !ids.insert((g.vendor, id.clone())) {
            return Err(fail(
                src,
                "name",
                &g.name,
                0,
                format!("PCI id {id} is listed twice"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {

    /// Issue 37: a command parses only the built-in files it reads, and each comes out as a directory's would:
    /// releases in version order.
    #[test]
    fn the_built_in_files_are_parsed_when_first_read() {
        let m = Matrices::embedded().expect("loads");
        assert!(m.rocm.value.get().is_none() && m.cuda.value.get().is_none());
        assert!(m.rocm.releases.len() > 10);
        assert!(m.rocm.value.get().is_some());
        assert!(
            m.cuda.value.get().is_none(),
            "reading rocm.yaml parsed only rocm.yaml"
        );
        assert!(m
            .rocm
            .releases
            .windows(2)
            .all(|w| w[0].version < w[1].version));
        assert!(m
            .cuda
            .releases
            .windows(2)
            .all(|w| w[0].version < w[1].version));
        assert!(m
            .ngc
            .releases
            .windows(2)
            .all(|w| w[0].release < w[1].release));
    }

    /// Issue 11: the JSON the binary loads is the YAML, validated as a `--matrices` directory is.
    #[test]
    fn embedded_json_is_the_validated_yaml() {
        let yaml = Matrices::embedded_yaml().expect("the embedded YAML validates");
        let json = Matrices::embedded().expect("the embedded JSON loads");
        let v = |x: serde_json::Result<serde_json::Value>| x.unwrap();
        assert_eq!(
            v(serde_json::to_value(&json.rocm)),
            v(serde_json::to_value(&yaml.rocm))
        );
        assert_eq!(
            v(serde_json::to_value(&json.cuda)),
            v(serde_json::to_value(&yaml.cuda))
        );
        assert_eq!(
            v(serde_json::to_value(&json.ngc)),
            v(serde_json::to_value(&yaml.ngc))
        );
        assert_eq!(
            v(serde_json::to_value(&json.gpus)),
            v(serde_json::to_value(&yaml.gpus))
        );
        assert_eq!(
            v(serde_json::to_value(&json.firmware)),
            v(serde_json::to_value(&yaml.firmware))
        );
        assert!(!yaml.firmware.known_bad.is_empty());
    }

    use super::*;

    /// Issue 13, found by the matrices fuzz target: YAML breaks lines at a lone CR (and NEL, LS, PS) too, so its
    /// line numbers ran past the file's; errors name the line as editors count it, and quote keys on one line.
    #[test]
    fn errors_name_lines_as_editors_count_them() {
        let text = "schema_version: 1\na\r\r\r\r [x, x]\nb: é\n\"c\\nd\": x\nreleases: [\n";
        let e = parse::<RocmFile>("rocm.yaml", text).unwrap_err();
        let lines = text.lines().count();
        assert!(
            e.line.is_some_and(|l| l <= lines + 1),
            "{e} ({lines} lines)"
        );
        let e = parse::<RocmFile>("rocm.yaml", "schema_version: 1\n\"é\\nrm\": 1\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        assert!(!e.message.contains('\n'), "{e:?}");
    }
}
