//! A Dockerfile read into scopes, one per stage: its base image (build arguments' defaults substituted), the
//! variables `ENV` and `ARG` set (a later stage `FROM` an earlier one inherits them), the variables `RUN` exports
//! and the index URLs its commands name.

use super::files::{assignments_in, index_urls_in, is_name, Located, ReadProblem, Scope};
use parse_dockerfile::{Command, Instruction};
use std::collections::BTreeMap;

/// The stages of `text`, in order.
pub fn scopes(text: &str) -> Result<Vec<Scope>, ReadProblem> {
    let d = parse_dockerfile::parse(text).map_err(|e| ReadProblem {
        line: None,
        message: format!("not a Dockerfile: {e}"),
    })?;
    let line_of = |at: usize| text.get(..at).map_or(1, |b| b.matches('\n').count() + 1);
    let mut args: BTreeMap<String, String> = BTreeMap::new();
    let mut stages: Vec<(Option<String>, Scope)> = Vec::new();
    for ins in &d.instructions {
        match ins {
            Instruction::From(f) => {
                let image = substitute(&f.image.value, &args);
                let alias = f.as_.as_ref().map(|(_, n)| n.value.to_string());
                let parent = stages
                    .iter()
                    .find(|(a, _)| a.as_deref() == Some(image.as_str()))
                    .map(|(_, s)| s.clone());
                let n = stages.len() + 1;
                let mut scope = parent.unwrap_or_else(|| Scope {
                    image: Some(Located {
                        name: image.clone(),
                        value: String::new(),
                        line: line_of(f.from.span.start),
                    }),
                    ..Scope::default()
                });
                scope.name = Some(match &alias {
                    Some(a) => format!("stage {n} ({a})"),
                    None => format!("stage {n}"),
                });
                stages.push((alias, scope));
            }
            Instruction::Arg(a) => {
                let line = line_of(a.arg.span.start);
                let mut vars = pairs(&a.arguments.value, line, false);
                place(&mut vars, text, a.arguments.span.clone(), &line_of);
                for v in vars {
                    match stages.last_mut() {
                        // Before the first FROM: a default for FROM lines.
                        None => {
                            args.insert(v.name.clone(), v.value.clone());
                        }
                        Some((_, s)) if !v.value.is_empty() => s.vars.push(v),
                        Some(_) => {}
                    }
                }
            }
            Instruction::Env(e) => {
                let line = line_of(e.env.span.start);
                let mut vars = pairs(&e.arguments.value, line, true);
                place(&mut vars, text, e.arguments.span.clone(), &line_of);
                if let Some((_, s)) = stages.last_mut() {
                    s.vars.extend(vars);
                }
            }
            Instruction::Run(r) => {
                let Some((_, s)) = stages.last_mut() else {
                    continue;
                };
                let (body, start) = match &r.arguments {
                    Command::Shell(sh) => (sh.value.to_string(), sh.span.start),
                    Command::Exec(ex) => (
                        ex.value
                            .iter()
                            .map(|w| w.value.as_ref())
                            .collect::<Vec<_>>()
                            .join(" "),
                        ex.span.start,
                    ),
                    // The enum is non-exhaustive; a new form has no text lint can read.
                    _ => continue,
                };
                let first = line_of(start);
                for (i, part) in body.split('\n').enumerate() {
                    let part = part.trim().trim_end_matches('\\');
                    for cmd in part.split("&&").flat_map(|c| c.split(';')) {
                        s.vars.extend(assignments_in(cmd.trim(), first + i));
                    }
                    s.index_urls.extend(index_urls_in(part, first + i));
                }
                for h in &r.here_docs {
                    let at = line_of(h.span.start);
                    for (i, l) in h.value.lines().enumerate() {
                        s.vars.extend(assignments_in(l.trim(), at + i));
                        s.index_urls.extend(index_urls_in(l, at + i));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(stages.into_iter().map(|(_, s)| s).collect())
}

/// Each variable's own line within an instruction continued over several (`ENV A=1 \\` / `    B=2`).
fn place(
    vars: &mut [Located],
    text: &str,
    span: std::ops::Range<usize>,
    line_of: &dyn Fn(usize) -> usize,
) {
    let Some(raw) = text.get(span.clone()) else {
        return;
    };
    let mut from = 0;
    for v in vars {
        if let Some(i) = raw[from..].find(v.name.as_str()) {
            from += i;
            v.line = line_of(span.start + from);
            from += v.name.len();
        }
    }
}

/// `A=1 B="x y"` (and, for `ENV`, the old `ENV A 1 2` form) as variables.
fn pairs(args: &str, line: usize, env: bool) -> Vec<Located> {
    let words = shlex::split(args).unwrap_or_default();
    let legacy = env && words.first().is_some_and(|w| !w.contains('='));
    if legacy {
        let (name, rest) = words.split_first().expect("checked non-empty");
        return is_name(name)
            .then(|| Located {
                name: name.clone(),
                value: rest.join(" "),
                line,
            })
            .into_iter()
            .collect();
    }
    words
        .iter()
        .filter_map(|w| {
            let (n, v) = w.split_once('=').unwrap_or((w.as_str(), ""));
            is_name(n).then(|| Located {
                name: n.to_string(),
                value: v.to_string(),
                line,
            })
        })
        .collect()
}

/// `${NAME}`, `${NAME:-default}` and `$NAME` replaced by the build arguments' defaults.
fn substitute(s: &str, args: &BTreeMap<String, String>) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, default, used) = if let Some(b) = after.strip_prefix('{') {
            let Some(end) = b.find('}') else {
                out.push_str(&rest[i..]);
                return out;
            };
            let inner = &b[..end];
            let (n, d) = inner.split_once(":-").unwrap_or((inner, ""));
            (n, d, end + 2)
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], "", end)
        };
        out.push_str(args.get(name).map_or(default, String::as_str));
        rest = &after[used..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELD: &str = "FROM rocm/pytorch:latest\n\
        ENV HSA_OVERRIDE_GFX_VERSION=9.0.0 \\\n    HCC_AMDGPU_TARGET=gfx90a\n\
        RUN pip3 install --index-url https://download.pytorch.org/whl/rocm6.2 torch && \\\n    export HIP_VISIBLE_DEVICES=0\n";

    #[test]
    fn the_field_report() {
        let s = scopes(FIELD).unwrap();
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!(s.image.as_ref().unwrap().name, "rocm/pytorch:latest");
        assert_eq!(s.var("HSA_OVERRIDE_GFX_VERSION").unwrap().line, 2);
        assert_eq!(s.var("HCC_AMDGPU_TARGET").unwrap().line, 3);
        assert_eq!(s.var("HCC_AMDGPU_TARGET").unwrap().value, "gfx90a");
        assert_eq!(s.index_urls[0].line, 4);
        assert_eq!(s.var("HIP_VISIBLE_DEVICES").unwrap().line, 5);
    }

    #[test]
    fn args_stages_and_legacy_env() {
        let t = "ARG TAG=rocm6.2.3_ubuntu22.04\nFROM rocm/pytorch:${TAG} AS base\nENV PYTORCH_ROCM_ARCH gfx90a;gfx942\nARG GPU_TARGETS=gfx942\nFROM base\nENV A=1\n";
        let s = scopes(t).unwrap();
        assert_eq!(
            s[0].image.as_ref().unwrap().name,
            "rocm/pytorch:rocm6.2.3_ubuntu22.04"
        );
        assert_eq!(
            s[0].var("PYTORCH_ROCM_ARCH").unwrap().value,
            "gfx90a;gfx942"
        );
        assert_eq!(s[0].var("GPU_TARGETS").unwrap().line, 4);
        // The second stage inherits the first's variables and base.
        assert_eq!(s[1].name.as_deref(), Some("stage 2"));
        assert!(s[1].var("PYTORCH_ROCM_ARCH").is_some());
        assert_eq!(s[1].image.as_ref().unwrap().line, 2);
    }

    #[test]
    fn substitution() {
        let a = BTreeMap::from([("V".to_string(), "1".to_string())]);
        assert_eq!(substitute("x:${V}-$V-${W:-d}", &a), "x:1-1-d");
        assert_eq!(substitute("x:${V", &a), "x:${V");
    }
}
