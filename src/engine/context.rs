//! Build contexts: in-memory files or a directory, packed as a tar and named by a hash of their content.

use super::dockerignore::DockerIgnore;
use crate::error::Error;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Contexts bigger than this are refused: a stack context is a Dockerfile and a few scripts, not a dataset.
const MAX_CONTEXT_BYTES: u64 = 512 << 20;

/// A build context: files by relative path, sorted, one of them `Dockerfile`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildContext {
    /// Relative paths and contents, sorted by path.
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

impl BuildContext {
    /// A context from rendered files; `dockerfile` (if given) becomes `Dockerfile`, replacing any there.
    pub fn from_files(
        files: &[(PathBuf, Vec<u8>)],
        dockerfile: Option<&str>,
    ) -> Result<Self, Error> {
        let mut out: Vec<(PathBuf, Vec<u8>)> = Vec::new();
        for (p, data) in files {
            if p.is_absolute() || p.components().any(|c| c == std::path::Component::ParentDir) {
                return Err(Error::Invalid {
                    fields: vec!["build context".into()],
                    value: None,
                    message: format!("{} is not a relative path inside the context", p.display()),
                });
            }
            out.push((p.clone(), data.clone()));
        }
        if let Some(d) = dockerfile {
            out.retain(|(p, _)| p != Path::new("Dockerfile"));
            out.push(("Dockerfile".into(), d.as_bytes().to_vec()));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        if !out.iter().any(|(p, _)| p == Path::new("Dockerfile")) {
            return Err(Error::Invalid {
                fields: vec!["build context".into()],
                value: None,
                message: "the context has no Dockerfile".into(),
            });
        }
        Ok(BuildContext { files: out })
    }

    /// Reads every regular file under `dir` that its `.dockerignore` keeps (symlinks and `.git` are skipped).
    pub fn from_dir(dir: &Path) -> Result<Self, Error> {
        let bad = |why: String| Error::Invalid {
            fields: vec!["context".into()],
            value: None,
            message: format!("{}: {why}", dir.display()),
        };
        let ignore_file = dir.join(".dockerignore");
        let ignore = match std::fs::read_to_string(&ignore_file) {
            Ok(text) => DockerIgnore::parse(&text).map_err(|why| Error::Invalid {
                fields: vec!["context".into()],
                value: None,
                message: format!("{}: {why}", ignore_file.display()),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => DockerIgnore::default(),
            Err(e) => return Err(bad(format!("cannot read .dockerignore: {e}"))),
        };
        let mut files = Vec::new();
        let mut total = 0u64;
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let entries = std::fs::read_dir(&d)
                .map_err(|e| bad(format!("cannot list {}: {e}", d.display())))?;
            for entry in entries {
                let entry = entry.map_err(|e| bad(e.to_string()))?;
                let path = entry.path();
                let kind = entry.file_type().map_err(|e| bad(e.to_string()))?;
                let rel = path.strip_prefix(dir).map_err(|e| bad(e.to_string()))?;
                let excluded = ignore.excludes(rel);
                if kind.is_dir() && entry.file_name() != ".git" {
                    // An excluded directory is walked only when a `!` line may bring something under it back.
                    if !excluded || ignore.has_exceptions() {
                        stack.push(path);
                    }
                } else if kind.is_file() && !excluded {
                    let data = std::fs::read(&path)
                        .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
                    total += data.len() as u64;
                    if total > MAX_CONTEXT_BYTES {
                        return Err(bad(format!(
                            "the context is over {} MiB",
                            MAX_CONTEXT_BYTES >> 20
                        )));
                    }
                    files.push((rel.to_path_buf(), data));
                }
            }
        }
        BuildContext::from_files(&files, None).map_err(|_| bad("has no Dockerfile".into()))
    }

    /// The Dockerfile text.
    pub fn dockerfile(&self) -> String {
        self.files
            .iter()
            .find(|(p, _)| p == Path::new("Dockerfile"))
            .map(|(_, d)| String::from_utf8_lossy(d).into_owned())
            .unwrap_or_default()
    }

    /// The first 12 hex digits of SHA-256 over every path and content: the same context, the same tag.
    pub fn content_hash(&self) -> String {
        let mut h = Sha256::new();
        for (p, data) in &self.files {
            let p = p.to_string_lossy();
            // Lengths first, so no two different contexts concatenate to the same bytes.
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
            h.update((data.len() as u64).to_le_bytes());
            h.update(data);
        }
        h.finalize()
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The hash in the image tag: the context's content and the ids of the base images it was built on, so a base
    /// retagged to another image under the same name makes another tag (and a rebuild).
    pub fn tag_hash(&self, base_ids: &[String]) -> String {
        if base_ids.is_empty() {
            return self.content_hash();
        }
        let mut h = Sha256::new();
        h.update(self.content_hash().as_bytes());
        for id in base_ids {
            h.update((id.len() as u64).to_le_bytes());
            h.update(id.as_bytes());
        }
        h.finalize()
            .iter()
            .take(6)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The context as an uncompressed tar, with fixed owners and times so it is reproducible.
    pub fn to_tar(&self) -> Result<Vec<u8>, Error> {
        let mut b = tar::Builder::new(Vec::new());
        for (p, data) in &self.files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            // Scripts in a context are run by RUN lines, so keep them executable.
            header.set_mode(0o755);
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            header.set_entry_type(tar::EntryType::Regular);
            b.append_data(&mut header, p, data.as_slice())
                .map_err(|e| Error::Engine(format!("cannot pack {}: {e}", p.display())))?;
        }
        b.into_inner()
            .map_err(|e| Error::Engine(format!("cannot pack the context: {e}")))
    }
}

/// The images a Dockerfile starts `FROM`, minus earlier stages and `scratch`; lines with `$` are skipped (build args).
pub fn base_images(dockerfile: &str) -> Vec<String> {
    let mut stages: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in dockerfile.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first().map(|w| w.eq_ignore_ascii_case("FROM")) != Some(true) {
            continue;
        }
        let rest: Vec<&str> = words[1..]
            .iter()
            .copied()
            .filter(|w| !w.starts_with("--"))
            .collect();
        let Some(image) = rest.first().map(|i| i.to_string()) else {
            continue;
        };
        let earlier_stage = stages.contains(&image.to_lowercase());
        if let (Some(kw), Some(name)) = (rest.get(1), rest.get(2)) {
            if kw.eq_ignore_ascii_case("AS") {
                stages.push(name.to_lowercase());
            }
        }
        if !(image.contains('$') || image == "scratch" || earlier_stage || out.contains(&image)) {
            out.push(image);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(df: &str) -> BuildContext {
        BuildContext::from_files(&[("run.sh".into(), b"echo hi\n".to_vec())], Some(df)).unwrap()
    }

    #[test]
    fn hash_follows_content_not_order() {
        let a = BuildContext::from_files(
            &[("b".into(), b"2".to_vec()), ("a".into(), b"1".to_vec())],
            Some("FROM x\n"),
        )
        .unwrap();
        let b = BuildContext::from_files(
            &[("a".into(), b"1".to_vec()), ("b".into(), b"2".to_vec())],
            Some("FROM x\n"),
        )
        .unwrap();
        assert_eq!(a.content_hash(), b.content_hash());
        assert_eq!(a.content_hash().len(), 12);
        assert_ne!(
            ctx("FROM x\n").content_hash(),
            ctx("FROM y\n").content_hash()
        );
        assert_eq!(a.to_tar().unwrap(), b.to_tar().unwrap());
    }

    #[test]
    fn tar_holds_every_file() {
        let t = ctx("FROM x\n").to_tar().unwrap();
        let mut a = tar::Archive::new(t.as_slice());
        let names: Vec<String> = a
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["Dockerfile", "run.sh"]);
    }

    #[test]
    fn escaping_paths_and_missing_dockerfile_are_refused() {
        assert!(BuildContext::from_files(&[("../x".into(), vec![])], Some("FROM x")).is_err());
        assert!(BuildContext::from_files(&[("/etc/x".into(), vec![])], Some("FROM x")).is_err());
        assert!(BuildContext::from_files(&[("x".into(), vec![])], None).is_err());
    }

    fn context_dir(ignore: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for (p, body) in [
            ("Dockerfile", "FROM x\nCOPY . /app\n"),
            (".dockerignore", ignore),
            ("run.sh", "echo hi\n"),
            ("data/train/0001.bin", "big"),
            ("data/README", "keep me"),
            ("src/model.py", "import torch\n"),
            ("src/model.pyc", "junk"),
        ] {
            let path = d.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        d
    }

    fn names(c: &BuildContext) -> Vec<String> {
        c.files
            .iter()
            .map(|(p, _)| p.display().to_string())
            .collect()
    }

    #[test]
    fn a_context_dir_honours_its_dockerignore() {
        let d = context_dir("# large inputs stay home\ndata\n!data/README\n**/*.pyc\n");
        let c = BuildContext::from_dir(d.path()).unwrap();
        assert_eq!(
            names(&c),
            [
                ".dockerignore",
                "Dockerfile",
                "data/README",
                "run.sh",
                "src/model.py"
            ]
        );
        // Excluding everything still sends what the daemon needs.
        let d = context_dir("*\n");
        let c = BuildContext::from_dir(d.path()).unwrap();
        assert_eq!(names(&c), [".dockerignore", "Dockerfile"]);
        // The ignore file is part of the content: changing it changes the tag.
        let a = BuildContext::from_dir(context_dir("data\n").path()).unwrap();
        let b = BuildContext::from_dir(context_dir("data\nsrc\n").path()).unwrap();
        assert_ne!(a.content_hash(), b.content_hash());
    }

    #[test]
    fn a_malformed_dockerignore_is_a_usage_error_naming_the_line() {
        let d = context_dir("data\n[oops\n");
        let e = BuildContext::from_dir(d.path()).unwrap_err().to_string();
        assert!(
            e.contains(".dockerignore: line 2: `[oops` has an unclosed `[`"),
            "{e}"
        );
    }

    #[test]
    fn base_images_skip_stages_args_and_scratch() {
        let df = "ARG B=x\nFROM --platform=linux/amd64 rocm/dev:6.2 AS build\nFROM build\nFROM scratch\nFROM $B\nfrom debian:12\n";
        assert_eq!(base_images(df), ["rocm/dev:6.2", "debian:12"]);
    }
}
