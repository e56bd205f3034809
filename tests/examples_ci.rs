//! examples/ci: the GitHub Actions workflow and the GitLab CI file validate against the schemas check-jsonschema
//! bundles (`vendor.github-workflows`, `vendor.gitlab-ci`), and every rocmenv command line in them names a real
//! subcommand and real flags of this build (issue 12).
//!
//! CI sets ROCMENV_REQUIRE_CHECK_JSONSCHEMA (and pip-installs check-jsonschema), so a missing checker fails there; on a
//! machine without it the schema test says it skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/ci")
        .join(name)
}

const FILES: [(&str, &str); 2] = [
    ("github-actions.yml", "vendor.github-workflows"),
    ("gitlab-ci.yml", "vendor.gitlab-ci"),
];

fn check(schema: &str, file: &Path) -> Option<Output> {
    match Command::new("check-jsonschema")
        .args(["--builtin-schema", schema])
        .arg(file)
        .output()
    {
        Ok(o) => Some(o),
        Err(e) => {
            assert!(
                std::env::var_os("ROCMENV_REQUIRE_CHECK_JSONSCHEMA").is_none(),
                "ROCMENV_REQUIRE_CHECK_JSONSCHEMA is set but check-jsonschema cannot run ({e}): pip install check-jsonschema"
            );
            None
        }
    }
}

#[test]
fn the_examples_validate_against_their_public_schemas() {
    for (name, schema) in FILES {
        let Some(o) = check(schema, &example(name)) else {
            eprintln!("SKIP the_examples_validate_against_their_public_schemas: check-jsonschema is not on PATH (pip install check-jsonschema)");
            return;
        };
        assert_eq!(
            o.status.code(),
            Some(0),
            "{name} against {schema}:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // The checker must be able to fail: a key neither schema knows, where each allows only its own.
    let dir = tempfile::tempdir().unwrap();
    let gh = std::fs::read_to_string(example("github-actions.yml")).unwrap();
    let bad = dir.path().join("bad-gh.yml");
    std::fs::write(
        &bad,
        gh.replacen(
            "    runs-on: ubuntu-latest\n",
            "    runs-on: ubuntu-latest\n    run-on-gpu: yes\n",
            1,
        ),
    )
    .unwrap();
    assert_ne!(
        check("vendor.github-workflows", &bad)
            .unwrap()
            .status
            .code(),
        Some(0)
    );
    let gl = std::fs::read_to_string(example("gitlab-ci.yml")).unwrap();
    let bad = dir.path().join("bad-gl.yml");
    std::fs::write(
        &bad,
        gl.replacen("  artifacts:\n", "  artifacts:\n    junit_reports: x\n", 1),
    )
    .unwrap();
    assert_ne!(
        check("vendor.gitlab-ci", &bad).unwrap().status.code(),
        Some(0)
    );
}

fn help(args: &[&str]) -> Option<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .arg("--help")
        .env("LC_ALL", "C.UTF-8")
        .output()
        .expect("runs");
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Every `rocmenv …` line of the examples: the subcommand exists (a command another branch adds, such as `validate`,
/// is skipped with a note until this build has it) and each `--flag` is one its `--help` lists.
#[test]
fn every_rocmenv_line_uses_real_commands_and_flags() {
    let mut checked = 0;
    for (name, _) in FILES {
        let text = std::fs::read_to_string(example(name)).unwrap();
        for line in text.lines() {
            let Some(at) = line.find("rocmenv ").filter(|&i| {
                let rest = &line[i..];
                !line[..i].contains('#')
                    && rest
                        .split_whitespace()
                        .nth(1)
                        .is_some_and(|w| w.chars().all(|c| c.is_ascii_lowercase()))
            }) else {
                continue;
            };
            let words: Vec<&str> = line[at..]
                .split_whitespace()
                .take_while(|w| *w != ">" && *w != ">>")
                .collect();
            let mut sub = vec![words[1]];
            if words[1] == "report" {
                sub.push(words[2]);
            }
            let Some(usage) = help(&sub) else {
                assert!(
                    sub != ["doctor"] && sub != ["report", "merge"],
                    "{name}: `rocmenv {}` has no --help",
                    sub.join(" ")
                );
                eprintln!(
                    "SKIP {name}: this build has no `rocmenv {}` yet",
                    sub.join(" ")
                );
                continue;
            };
            for flag in words.iter().filter(|w| w.starts_with("--")) {
                assert!(
                    usage.contains(&format!("{flag} "))
                        || usage.contains(&format!("{flag}\n"))
                        || usage.contains(&format!("{flag} <")),
                    "{name}: `{}` uses {flag}, which `rocmenv {} --help` does not list",
                    line.trim(),
                    sub.join(" ")
                );
            }
            checked += 1;
        }
    }
    assert!(
        checked >= 2,
        "the doctor and report merge lines were checked"
    );
}
