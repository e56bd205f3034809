//! The interpreter `smoke --host` and `bench --host` use when `--python` is not given: the first python on PATH
//! that imports torch, so a venv's python3 without torch does not fail every test with the same import error.

use crate::error::Error;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The names tried, in order; each is looked up in every PATH directory.
const NAMES: [&str; 10] = [
    "python3",
    "python",
    "python3.14",
    "python3.13",
    "python3.12",
    "python3.11",
    "python3.10",
    "python3.9",
    "python3.8",
    "python3.7",
];

/// How long one `import torch` may take (a cold import of a CUDA build reads gigabytes).
const IMPORT_TIMEOUT: Duration = Duration::from_secs(120);

/// An interpreter found, and how.
pub(crate) struct Found {
    /// Its path.
    pub path: PathBuf,
    /// How it was found, for the line that names it.
    pub how: String,
}

/// Why a candidate was passed over: `None` when it imports torch.
fn import_torch(python: &PathBuf) -> Option<String> {
    let child = Command::new(python)
        .args(["-c", "import torch"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Some(format!("does not start: {e}")),
    };
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return None,
            Ok(Some(_)) => {
                let mut text = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut text);
                }
                let last = text.lines().rev().find(|l| !l.trim().is_empty());
                return Some(last.unwrap_or("import torch failed").trim().to_string());
            }
            Ok(None) if started.elapsed() < IMPORT_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(50))
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(format!(
                    "import torch took over {} s",
                    IMPORT_TIMEOUT.as_secs()
                ));
            }
        }
    }
}

/// The candidates on PATH, each real file once (python3 and python are often one binary).
fn candidates() -> Vec<PathBuf> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in NAMES {
            let Ok(p) = which::which_in(name, Some(&dir), &dir) else {
                continue;
            };
            let real = std::fs::canonicalize(&p).unwrap_or_else(|_| p.clone());
            if !seen.contains(&real) {
                seen.push(real);
                out.push(p);
            }
        }
    }
    out
}

/// The first `n` of `items`, and how many more there are (pyenv and the like put a dozen shims on PATH).
fn some(items: &[String], n: usize) -> String {
    let mut text = items[..items.len().min(n)].join("; ");
    if items.len() > n {
        text.push_str(&format!("; and {} more", items.len() - n));
    }
    text
}

/// The first candidate that imports torch; when none does, an error that names each one tried and `--python`.
pub(crate) fn find() -> Result<Found, Error> {
    let mut tried = Vec::new();
    for (i, p) in candidates().into_iter().enumerate() {
        match import_torch(&p) {
            None => {
                let how = if i == 0 {
                    "the first python on PATH; it imports torch".to_string()
                } else {
                    format!(
                        "the first python on PATH that imports torch; passed over: {}",
                        some(&tried, 2)
                    )
                };
                return Ok(Found { path: p, how });
            }
            Some(why) => tried.push(format!("{} ({why})", p.display())),
        }
    }
    let seen = if tried.is_empty() {
        "found no python3 or python on PATH".to_string()
    } else {
        format!("no python on PATH imports torch: {}", some(&tried, 5))
    };
    Err(Error::Environment(format!(
        "{seen}; name the interpreter that has torch with --python PATH"
    )))
}
