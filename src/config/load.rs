//! Loading `rocmenv.yaml`: syntax, unknown keys and types from serde (with the parser's line and column), then every
//! value that reaches a Dockerfile checked by the same functions that check the flags of `rocmenv build`.

use super::schema::{ConfigFile, StackConfig};
use crate::cc::ComputeCapability;
use crate::dockerfile::{self, DockerfileRequest};
use crate::error::Error;
use crate::gfx::GfxTarget;
use crate::target::TargetSpec;
use std::path::{Path, PathBuf};

/// The file `rocmenv validate` reads when `--config` is not given.
pub const DEFAULT_FILE: &str = "rocmenv.yaml";

/// A loaded, validated config and where it came from.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file.
    pub path: PathBuf,
    /// Its contents, validated.
    pub file: ConfigFile,
    text: String,
    /// The values validation parsed, kept so no later step parses them again.
    parsed: Parsed,
}

/// The typed values of a config's strings, as validation parsed them.
#[derive(Debug, Clone, Default)]
struct Parsed {
    /// `host.target`.
    host_target: Option<TargetSpec>,
    /// `host.nvidia_driver`.
    nvidia_driver: Option<crate::version::DriverVersion>,
    /// Each stack's typed values, in the file's order.
    stacks: Vec<StackValues>,
}

/// One stack's typed values, as validation parsed them: later steps read these, never the strings again.
#[derive(Debug, Clone, Default)]
pub struct StackValues {
    /// The stack's own `target:`.
    pub target: Option<TargetSpec>,
    /// `gfx:`, each an LLVM AMDGPU processor.
    pub gfx: Vec<GfxTarget>,
    /// `cuda_arch:` (`sm_90` or `"9.0"`).
    pub cuda_arch: Vec<ComputeCapability>,
}

impl Config {
    /// Reads and validates `path`.
    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?;
        Config::parse(path, &text)
    }

    /// Validates `text` as the contents of `path` (which is only named in errors, and anchors baseline paths).
    pub fn parse(path: &Path, text: &str) -> Result<Config, Error> {
        let file: ConfigFile = serde_yaml_ng::from_str(text).map_err(|e| {
            let loc = e
                .location()
                .map(|l| within_text(text, l.line(), l.column()));
            let message = strip_location(&e.to_string());
            Error::Config {
                path: path.to_path_buf(),
                line: loc.map(|l| l.0),
                column: loc.map(|l| l.1),
                message,
            }
        })?;
        let mut c = Config {
            path: path.to_path_buf(),
            file,
            text: text.to_string(),
            parsed: Parsed::default(),
        };
        c.parsed = c.validate()?;
        Ok(c)
    }

    /// The stack named `name`.
    pub fn stack(&self, name: &str) -> Option<&StackConfig> {
        self.file.stacks.iter().find(|s| s.name == name)
    }

    /// A config error about `needle` (a value or a key as written), searched from the record of stack `stack` (or
    /// the top of the file), so the message points at the line to fix.
    pub fn error(&self, stack: Option<&str>, needle: &str, message: impl Into<String>) -> Error {
        let start = stack
            .and_then(|s| find(&self.text, 0, &format!("name: {s}")).map(|(l, _)| l))
            .unwrap_or(1);
        let at = find(&self.text, start, needle).or_else(|| find(&self.text, 1, needle));
        Error::Config {
            path: self.path.clone(),
            line: at.map(|(l, _)| l),
            column: at.map(|(_, c)| c),
            message: message.into(),
        }
    }

    /// Turns an error from a shared validator (a `Usage` naming the field) into a config error at the value.
    pub fn value_error(&self, stack: Option<&str>, key: &str, value: &str, e: Error) -> Error {
        let message = match e {
            Error::Invalid { message, .. } => message,
            Error::Reference { reference, why } => {
                format!("`{reference}` is not an image reference: it {why}")
            }
            other => other.to_string(),
        };
        let field = match stack {
            Some(s) => format!("stack {s}: {key}"),
            None => key.to_string(),
        };
        let needle = if value.is_empty() {
            format!("{key}:")
        } else {
            value.to_string()
        };
        self.error(stack, &needle, format!("{field}: {message}"))
    }

    /// The Dockerfile request a stack asks for (before the GPUs and the env are added), with `base` overriding its
    /// own base image.
    pub fn request(s: &StackConfig, base: Option<&str>) -> DockerfileRequest {
        let mut r = DockerfileRequest::new(s.stack);
        r.rocm = s.rocm.clone();
        r.pytorch = s.pytorch.clone();
        r.ubuntu = s.ubuntu.clone();
        r.python = s.python.clone();
        r.ngc = s.ngc.clone();
        r.base = base.map(str::to_string).or_else(|| s.base.clone());
        r.pip = s.pip.clone();
        r.apt = s.apt.clone();
        r.onnxruntime = s.onnxruntime;
        r
    }

    /// The target stack `s` is checked against: its own `target:`, else `host.target`, else none (detected).
    pub fn target(&self, s: &StackConfig) -> Option<&TargetSpec> {
        let own = self.values(s).target.as_ref();
        own.or(self.parsed.host_target.as_ref())
    }

    /// Stack `s`'s typed values (its gfx targets, compute capabilities, own target).
    ///
    /// # Panics
    /// When `s` is not one of this config's stacks.
    pub fn values(&self, s: &StackConfig) -> &StackValues {
        let i = self
            .file
            .stacks
            .iter()
            .position(|x| x.name == s.name)
            .expect("a stack of this config");
        &self.parsed.stacks[i]
    }

    /// `host.nvidia_driver`: the driver the NVIDIA stacks are checked against instead of the host's.
    pub fn nvidia_driver(&self) -> Option<&crate::version::DriverVersion> {
        self.parsed.nvidia_driver.as_ref()
    }

    /// A baselines file named by a benchmark, relative to the config's directory.
    pub fn resolve(&self, p: &Path) -> PathBuf {
        match self.path.parent() {
            Some(d) if p.is_relative() => d.join(p),
            _ => p.to_path_buf(),
        }
    }

    fn validate(&self) -> Result<Parsed, Error> {
        let f = &self.file;
        if f.schema_version != 1 {
            return Err(self.error(
                None,
                "schema_version",
                format!(
                    "schema_version {} is not one this rocmenv reads (1)",
                    f.schema_version
                ),
            ));
        }
        if f.stacks.is_empty() {
            return Err(self.error(None, "stacks", "stacks: list at least one stack"));
        }
        let mut parsed = Parsed::default();
        if let Some(t) = &f.host.target {
            parsed.host_target = Some(
                t.parse::<TargetSpec>()
                    .map_err(|e| self.value_error(None, "host.target", t, e))?,
            );
        }
        if let Some(d) = &f.host.nvidia_driver {
            parsed.nvidia_driver = Some(
                d.parse::<crate::version::DriverVersion>()
                    .map_err(|e| self.error(None, d, format!("host.nvidia_driver: {e}")))?,
            );
        }
        let mut seen = Vec::new();
        for s in &f.stacks {
            parsed.stacks.push(self.validate_stack(s)?);
            if seen.contains(&s.name.as_str()) {
                return Err(self.error(
                    Some(&s.name),
                    &format!("name: {}", s.name),
                    format!("stack {} is listed twice; names must differ", s.name),
                ));
            }
            seen.push(s.name.as_str());
        }
        for b in &f.benchmarks {
            if !(0.0..100.0).contains(&b.threshold) {
                return Err(self.error(
                    None,
                    "threshold",
                    format!(
                        "benchmark {}: threshold {} is not a percentage below 100",
                        b.model, b.threshold
                    ),
                ));
            }
            if let Some(n) = b.stacks.iter().find(|n| !seen.contains(&n.as_str())) {
                return Err(self.error(
                    None,
                    n,
                    format!(
                        "benchmark {}: no stack is named {n}; stacks: {}",
                        b.model,
                        seen.join(", ")
                    ),
                ));
            }
            if let Some(p) = &b.baseline {
                let full = self.resolve(p);
                if !full.is_file() {
                    return Err(self.error(
                        None,
                        &p.display().to_string(),
                        format!(
                            "benchmark {}: baseline {} is not a file (write one with `rocmenv bench --save-baseline FILE`)",
                            b.model,
                            full.display()
                        ),
                    ));
                }
            }
        }
        for id in &f.allow_warn {
            let ok = !id.is_empty()
                && id.len() <= 80
                && id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
            if !ok {
                return Err(self.error(
                    None,
                    id,
                    format!(
                        "allow_warn: `{}` is not a check id (like kernel.rocm-supported)",
                        id.escape_debug()
                    ),
                ));
            }
        }
        Ok(parsed)
    }

    /// Checks one stack; its values, parsed.
    fn validate_stack(&self, s: &StackConfig) -> Result<StackValues, Error> {
        let name_ok = !s.name.is_empty()
            && s.name.len() <= 64
            && s.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !name_ok {
            return Err(self.error(
                None,
                &s.name,
                format!(
                    "stack name `{}` may hold only letters, digits, `.`, `_` and `-` (at most 64)",
                    s.name.escape_debug()
                ),
            ));
        }
        let at = Some(s.name.as_str());
        // The same checks `rocmenv build --stack` runs on its flags, field by field.
        let req = Config::request(s, None);
        dockerfile::validate_request(&req).map_err(|e| {
            // The validator says which input and which value: the message is placed at that value.
            let (key, value) = match &e {
                Error::Invalid { fields, value, .. } => (fields.join("/"), value.clone()),
                _ => (String::new(), None),
            };
            self.value_error(at, &key, value.as_deref().unwrap_or_default(), e)
        })?;
        if let Some(b) = &s.base {
            crate::sanitize::image_reference("base", b)
                .map_err(|e| self.value_error(at, "base", b, e))?;
        }
        let gfx = s
            .gfx
            .iter()
            .map(|g| self.gfx(s, g))
            .collect::<Result<_, _>>()?;
        let cuda_arch = s
            .cuda_arch
            .iter()
            .map(|c| {
                ComputeCapability::parse_cuda_arch(c).map_err(|why| {
                    self.error(
                        at,
                        c,
                        format!("stack {}: cuda_arch: `{}` {why}", s.name, c.escape_debug()),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        let target = s
            .target
            .as_ref()
            .map(|t| {
                t.parse::<TargetSpec>()
                    .map_err(|e| self.value_error(at, "target", t, e))
            })
            .transpose()?;
        Ok(StackValues {
            target,
            gfx,
            cuda_arch,
        })
    }

    /// One entry `g` of stack `s`'s `gfx:`: an LLVM AMDGPU processor, or an error at its line.
    fn gfx(&self, s: &StackConfig, g: &str) -> Result<GfxTarget, Error> {
        let at = Some(s.name.as_str());
        let t: GfxTarget = g.parse().map_err(|e: crate::gfx::GfxError| {
            self.error(at, g, format!("stack {}: gfx: {e}", s.name))
        })?;
        if !t.is_llvm_processor() {
            return Err(self.error(
                at,
                g,
                format!("stack {}: gfx: {t} is not an LLVM AMDGPU processor", s.name),
            ));
        }
        Ok(t)
    }
}

/// The parser reports an error at the end of the file (an unclosed `[`) on the line after the last one; people look
/// for it on the last line that has text, just past its end (issue 25: `broken.yaml:6:1` for a 5-line file).
fn within_text(text: &str, line: usize, column: usize) -> (usize, usize) {
    let lines: Vec<&str> = text.lines().collect();
    let blank_from = |l: usize| lines.iter().skip(l - 1).all(|x| x.trim().is_empty());
    if line == 0 || (line <= lines.len() && !(column == 1 && blank_from(line))) {
        return (line, column);
    }
    match lines.iter().rposition(|l| !l.trim().is_empty()) {
        Some(i) => (i + 1, lines[i].chars().count() + 1),
        None => (line, column),
    }
}

/// The serde message without its trailing ` at line L column C` (the error carries them as fields).
fn strip_location(msg: &str) -> String {
    match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The 1-based line and column of the first `needle` at or after line `from`, outside comments.
fn find(text: &str, from: usize, needle: &str) -> Option<(usize, usize)> {
    if needle.is_empty() {
        return None;
    }
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find_map(|(i, l)| {
            let code = l.split(" #").next().unwrap_or(l);
            if code.trim_start().starts_with('#') {
                return None;
            }
            code.find(needle)
                .map(|c| (i + 1, l[..c].chars().count() + 1))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Result<Config, Error> {
        Config::parse(Path::new("rocmenv.yaml"), text)
    }

    fn err(text: &str) -> String {
        let e = load(text).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e}");
        e.to_string()
    }

    const OK: &str = "schema_version: 1\nhost:\n  target: rocm-6.2\nstacks:\n  - name: mi300\n    stack: rocm\n    rocm: \"6.2\"\n    gfx: [gfx942]\n    pip: [\"numpy==1.26.4\"]\n  - name: cpu\n    stack: cpu\nallow_warn: [kernel.rocm-supported]\n";

    #[test]
    fn a_valid_file_loads() {
        let c = load(OK).unwrap();
        assert_eq!(c.file.stacks.len(), 2);
        assert_eq!(c.file.stacks[0].gfx, ["gfx942"]);
        assert_eq!(c.file.smoke.level.name(), "quick");
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_line() {
        let e = err(&OK.replace("    stack: cpu\n", "    stack: cpu\n    stak: x\n"));
        assert!(e.starts_with("rocmenv.yaml:12:"), "{e}");
        assert!(e.contains("unknown field `stak`"), "{e}");
        let e = err(&OK.replace("gfx: [gfx942]", "gfx: {a: 1}"));
        assert!(e.starts_with("rocmenv.yaml:8:"), "{e}");
        assert!(e.contains("invalid type: map, expected a sequence"), "{e}");
        // YAML's 6.2 is read as written, so an unquoted version is still the text `6.2`.
        assert_eq!(
            load(&OK.replace("\"6.2\"", "6.2")).unwrap().file.stacks[0]
                .rocm
                .as_deref(),
            Some("6.2")
        );
        let e = err(&OK.replace("stack: cpu", "stack: tpu"));
        assert!(e.starts_with("rocmenv.yaml:11:"), "{e}");
    }

    #[test]
    fn values_that_reach_a_dockerfile_are_checked_like_flags() {
        let e = err(&OK.replace("numpy==1.26.4", "numpy; rm -rf /"));
        assert!(e.starts_with("rocmenv.yaml:9:"), "{e}");
        assert!(e.contains("stack mi300: pip:"), "{e}");
        let e = err(&OK.replace("    stack: cpu\n", "    stack: cpu\n    rocm: \"6.2\"\n"));
        assert!(e.contains("does not apply to the cpu stack"), "{e}");
        assert!(e.starts_with("rocmenv.yaml:12:"), "{e}");
        let e = err(&OK.replace(
            "    stack: cpu\n",
            "    stack: cpu\n    base: \"Debian:12\"\n",
        ));
        assert!(
            e.contains("not an image reference") || e.contains("lowercase"),
            "{e}"
        );
        let e = err(&OK.replace("gfx942", "gfx9x2"));
        assert!(e.starts_with("rocmenv.yaml:8:"), "{e}");
        let e = err(&OK.replace("rocm-6.2", "hip-6.2"));
        assert!(e.starts_with("rocmenv.yaml:3:"), "{e}");
    }

    /// Issue 23: the validator's error carries the bad value, so the line is that value's, found without reading the
    /// message (here the second of two pip entries, on its own line).
    #[test]
    fn a_bad_list_entry_is_placed_at_its_own_line() {
        let e = err(&OK.replace(
            "    pip: [\"numpy==1.26.4\"]\n",
            "    pip:\n      - numpy==1.26.4\n      - \"x; id\"\n",
        ));
        assert!(e.starts_with("rocmenv.yaml:11:"), "{e}");
        assert!(e.contains("stack mi300: pip: `x; id`"), "{e}");
    }

    #[test]
    fn duplicate_names_and_bad_ids_are_refused() {
        let e = err(&OK.replace("name: cpu", "name: mi300"));
        assert!(e.contains("listed twice"), "{e}");
        let e = err(&OK.replace("kernel.rocm-supported", "Kernel!"));
        assert!(e.contains("not a check id"), "{e}");
        assert!(err("schema_version: 2\nstacks: []\n").contains("schema_version 2"));
    }

    /// Issue 33: gfx and cuda_arch are parsed once, here; a bad entry is an error at its line, and validate reads the
    /// typed values instead of parsing the strings again.
    #[test]
    fn gfx_and_cuda_arch_are_kept_typed() {
        let c = load(&OK.replace(
            "    stack: cpu\n",
            "    stack: cpu\n    cuda_arch: [sm_90a, \"8.6\"]\n",
        ))
        .unwrap();
        let v = c.values(&c.file.stacks[0]);
        assert_eq!(v.gfx, ["gfx942".parse::<GfxTarget>().unwrap()]);
        let v = c.values(&c.file.stacks[1]);
        let shown: Vec<String> = v.cuda_arch.iter().map(|c| c.to_string()).collect();
        assert_eq!(shown, ["9.0", "8.6"]);
        let e = err(&OK.replace(
            "    stack: cpu\n",
            "    stack: cpu\n    cuda_arch:\n      - sm_90\n      - sm_9x\n",
        ));
        assert!(e.starts_with("rocmenv.yaml:14:"), "{e}");
        assert!(
            e.contains("stack cpu: cuda_arch: `sm_9x` is not a compute capability"),
            "{e}"
        );
        let e = err(&OK.replace("gfx: [gfx942]", "gfx: [gfx942, gfx9000]"));
        assert!(e.starts_with("rocmenv.yaml:8:"), "{e}");
        assert!(e.contains("stack mi300: gfx:"), "{e}");
    }

    #[test]
    fn a_stack_is_checked_against_its_own_target_else_the_hosts() {
        let c = load(&OK.replace(
            "  - name: cpu\n    stack: cpu\n",
            "  - name: cpu\n    stack: cpu\n    target: cuda-12\n",
        ))
        .unwrap();
        let [mi300, cpu] = &c.file.stacks[..] else {
            panic!("two stacks")
        };
        assert_eq!(c.target(mi300), Some(&"rocm-6.2".parse().unwrap()));
        assert_eq!(c.target(cpu), Some(&"cuda-12".parse().unwrap()));
        assert_eq!(c.nvidia_driver(), None);
        let c =
            load(&OK.replace("  target: rocm-6.2\n", "  nvidia_driver: \"570.86.15\"\n")).unwrap();
        assert_eq!(c.target(&c.file.stacks[0]), None);
        assert_eq!(c.nvidia_driver().map(|d| d.branch()), Some(570));
    }
}
