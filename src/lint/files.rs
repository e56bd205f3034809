//! A user's file read into what lint judges: per scope (a Dockerfile stage, a compose service, a Kubernetes
//! container, or the whole env file), the base image, the variables set, and the PyTorch index URLs named, each with
//! its line.

use serde::Serialize;

/// What kind of file a path holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A Dockerfile (`FROM`, `ENV`, `ARG`, `RUN`).
    Dockerfile,
    /// `KEY=VALUE` lines: an env file, a shell profile or script (`export KEY=VALUE`).
    Env,
    /// A Docker Compose file (`services:`).
    Compose,
    /// Kubernetes manifests (`apiVersion:` and `kind:`), one or more documents.
    Kubernetes,
}

impl FileKind {
    /// The word a report uses.
    pub fn word(self) -> &'static str {
        match self {
            FileKind::Dockerfile => "Dockerfile",
            FileKind::Env => "env file",
            FileKind::Compose => "compose file",
            FileKind::Kubernetes => "Kubernetes manifest",
        }
    }
}

/// A value set in a file, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located {
    /// The name (a variable) or the whole value (an image, a URL).
    pub name: String,
    /// The value; empty for an image or a URL.
    pub value: String,
    /// 1-based line.
    pub line: usize,
}

/// One place a set of variables applies to: a Dockerfile stage, a compose service, a Kubernetes container, or an
/// env file as a whole.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// `stage 2 (builder)`, `service web`, `Deployment/trainer container main`; `None` for a whole env file.
    pub name: Option<String>,
    /// The base image (`FROM`, `image:`), when the scope names one.
    pub image: Option<Located>,
    /// The variables set, in file order.
    pub vars: Vec<Located>,
    /// PyTorch wheel index URLs (`--index-url`, `--extra-index-url`, `-f`) named in commands.
    pub index_urls: Vec<Located>,
}

impl Scope {
    /// The last value set for `name`, with its line.
    pub fn var(&self, name: &str) -> Option<&Located> {
        self.vars.iter().rev().find(|v| v.name == name)
    }
}

/// A file read for lint.
#[derive(Debug, Clone)]
pub struct LintFile {
    /// The path as the user gave it.
    pub path: String,
    /// Its kind.
    pub kind: FileKind,
    /// Its scopes, in file order.
    pub scopes: Vec<Scope>,
}

/// Why a file could not be read as its kind: a line (when known) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadProblem {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// The kind of `path` holding `text`: by its name first (`Dockerfile`, `*.dockerfile`, `Containerfile`,
/// `compose.yaml`, `docker-compose*.yml`, `.env`, `*.sh`), else by its content.
pub fn kind_of(path: &str, text: &str) -> FileKind {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    if name.starts_with("dockerfile")
        || name.ends_with(".dockerfile")
        || name.starts_with("containerfile")
    {
        return FileKind::Dockerfile;
    }
    let yaml = name.ends_with(".yaml") || name.ends_with(".yml");
    if yaml && (name.starts_with("compose") || name.starts_with("docker-compose")) {
        return FileKind::Compose;
    }
    let first_word = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default()
        .to_ascii_uppercase();
    if !yaml && matches!(first_word.as_str(), "FROM" | "ARG") {
        return FileKind::Dockerfile;
    }
    if yaml || first_word.ends_with(':') || first_word == "---" {
        let has = |key: &str| text.lines().any(|l| l.starts_with(key));
        if has("services:") {
            return FileKind::Compose;
        }
        if has("apiVersion:") || has("kind:") {
            return FileKind::Kubernetes;
        }
    }
    FileKind::Env
}

/// An env file or shell script as one scope: `KEY=VALUE`, `export KEY=VALUE [KEY2=…]`, `declare -x KEY=VALUE`,
/// `set -gx KEY VALUE` (fish), and the index URLs its commands name.
pub fn env_scope(text: &str) -> Scope {
    let mut scope = Scope::default();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        scope.vars.extend(assignments_in(l, line));
        scope.index_urls.extend(index_urls_in(l, line));
    }
    scope
}

/// The variables one shell line sets (`export A=1 B=2`, `A=1 cmd`, `declare -x A=1`, `set -gx A 1`); words are
/// split as a POSIX shell splits them (shlex), so quotes and escapes are the shell's.
pub fn assignments_in(line: &str, at: usize) -> Vec<Located> {
    let Some(words) = shlex::split(line) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut w = words.iter().map(String::as_str).peekable();
    match w.peek().copied() {
        Some("export") | Some("declare") | Some("typeset") | Some("readonly") => {
            w.next();
            while w.peek().is_some_and(|x| x.starts_with('-')) {
                w.next();
            }
        }
        Some("set") => {
            // fish: `set -gx NAME value…`
            let rest: Vec<&str> = w.skip(1).collect();
            let flags = rest.iter().take_while(|x| x.starts_with('-')).count();
            if rest[..flags].iter().any(|f| f.contains('x')) {
                if let Some((name, values)) = rest[flags..].split_first() {
                    if is_name(name) {
                        out.push(located(name, &values.join(" "), at));
                    }
                }
            }
            return out;
        }
        _ => {}
    }
    for word in w {
        match word.split_once('=') {
            Some((name, value)) if is_name(name) => out.push(located(name, value, at)),
            // `A=1 B=2 cmd …`: assignments end at the first word that is not one.
            _ => break,
        }
    }
    out
}

fn located(name: &str, value: &str, line: usize) -> Located {
    Located {
        name: name.to_string(),
        value: value.to_string(),
        line,
    }
}

/// A shell variable name.
pub fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// The PyTorch wheel index URLs a command line names (`--index-url U`, `--extra-index-url=U`, `-f U`,
/// `--find-links U`, or a bare `https://download.pytorch.org/whl/…`).
pub fn index_urls_in(text: &str, at: usize) -> Vec<Located> {
    let mut out: Vec<Located> = Vec::new();
    for (i, part) in text.split(['\n']).enumerate() {
        for word in part.split_whitespace() {
            let word = word.trim_matches(|c| c == '"' || c == '\'' || c == '\\');
            let url = word.split_once('=').map_or(word, |(_, v)| v);
            if url.contains("download.pytorch.org/whl")
                || url.contains("repo.radeon.com/rocm/manylinux")
            {
                out.push(located(url, "", at + i));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_by_name_then_content() {
        assert_eq!(kind_of("x/Dockerfile.rocm", ""), FileKind::Dockerfile);
        assert_eq!(kind_of("build/rocm.dockerfile", ""), FileKind::Dockerfile);
        assert_eq!(kind_of("docker-compose.yml", ""), FileKind::Compose);
        assert_eq!(kind_of("a.txt", "# c\nFROM debian\n"), FileKind::Dockerfile);
        assert_eq!(
            kind_of("deploy.yaml", "apiVersion: v1\nkind: Pod\n"),
            FileKind::Kubernetes
        );
        assert_eq!(
            kind_of("stack.yaml", "services:\n  a: {}\n"),
            FileKind::Compose
        );
        assert_eq!(kind_of("tune.sh", "export A=1\n"), FileKind::Env);
        assert_eq!(kind_of(".env", "A=1\n"), FileKind::Env);
    }

    #[test]
    fn shell_assignments() {
        let names = |l: &str| {
            assignments_in(l, 1)
                .into_iter()
                .map(|v| format!("{}={}", v.name, v.value))
                .collect::<Vec<_>>()
        };
        assert_eq!(names("export HCC_OPT_LEVEL=3"), ["HCC_OPT_LEVEL=3"]);
        assert_eq!(names("export -n A=\"x y\" B=2"), ["A=x y", "B=2"]);
        assert_eq!(
            names("HIP_VISIBLE_DEVICES=0 python3 t.py"),
            ["HIP_VISIBLE_DEVICES=0"]
        );
        assert_eq!(
            names("set -gx HSA_OVERRIDE_GFX_VERSION 10.3.0"),
            ["HSA_OVERRIDE_GFX_VERSION=10.3.0"]
        );
        assert!(names("echo A=1").is_empty());
        assert!(names("export 1A=2").is_empty());
        assert!(names("export A='unterminated").is_empty());
    }

    #[test]
    fn env_file_lines() {
        let s = env_scope("# tuning\nexport HSA_OVERRIDE_GFX_VERSION=9.0.0\n\nHCC_OPT_LEVEL=3\npip install torch --index-url https://download.pytorch.org/whl/rocm6.2\n");
        assert_eq!(s.var("HCC_OPT_LEVEL").unwrap().line, 4);
        assert_eq!(s.var("HSA_OVERRIDE_GFX_VERSION").unwrap().value, "9.0.0");
        assert_eq!(
            s.index_urls[0].name,
            "https://download.pytorch.org/whl/rocm6.2"
        );
        assert_eq!(s.index_urls[0].line, 5);
    }
}
