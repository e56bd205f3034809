//! Issue 9: the module graph points downhill. Reads `crate::<module>` paths in src/ (test code left out) and checks
//! there is no import circle between top-level modules, and that the low layers import only what is below them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Top-level module → the top-level modules its non-test code names as `crate::<name>`.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .to_string();
        let module = first.trim_end_matches(".rs").to_string();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if matches!(module.as_str(), "lib" | "main") || name.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let deps = g.entry(module.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let rest = &code[i + "crate::".len()..];
            let dep: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !dep.is_empty() && dep != module {
                deps.insert(dep);
            }
        }
    }
    g
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(n) = stack.pop() {
        if n == to {
            return true;
        }
        if seen.insert(n.clone()) {
            stack.extend(g.get(&n).into_iter().flatten().cloned());
        }
    }
    false
}

#[test]
fn no_import_circle_between_modules() {
    let g = graph();
    assert!(g.len() > 15, "{g:?}");
    for (a, deps) in &g {
        for b in deps {
            assert!(!reaches(&g, b, a), "import circle: {a} → {b} → … → {a}");
        }
    }
}

#[test]
fn low_layers_import_nothing_above_them() {
    let g = graph();
    let allowed: [(&str, &[&str]); 6] = [
        ("parse", &["gfx", "version"]),
        ("matrix", &["gfx", "text", "vendor", "version"]),
        (
            "host",
            &["error", "gfx", "parse", "text", "vendor", "version"],
        ),
        ("engine", &["error", "host", "image_ref", "vendor"]),
        ("runtime", &["host", "parse"]),
        ("suites", &["matrix"]),
    ];
    for (module, ok) in allowed {
        let deps = g
            .get(module)
            .unwrap_or_else(|| panic!("no module {module}"));
        let above: Vec<&String> = deps.iter().filter(|d| !ok.contains(&d.as_str())).collect();
        assert!(
            above.is_empty(),
            "{module} imports {above:?}, which are not below it"
        );
    }
}

/// Per directory module (`engine`, `host`, …): file → the sibling files its non-test code names, as `super::<file>`
/// or `crate::<module>::<file>`.
fn sibling_graphs() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for f in &files {
        let dir = f.parent().unwrap();
        if dir == src {
            continue;
        }
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        if stem == "mod" {
            continue;
        }
        let module = dir
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('/', "::");
        let siblings: BTreeSet<String> = files
            .iter()
            .filter(|g| g.parent() == Some(dir))
            .map(|g| g.file_stem().unwrap().to_string_lossy().to_string())
            .filter(|s| s != "mod" && *s != stem)
            .collect();
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        let mut deps = BTreeSet::new();
        for prefix in ["super::".to_string(), format!("crate::{module}::")] {
            for (i, _) in code.match_indices(&prefix) {
                let rest = &code[i + prefix.len()..];
                // `super::{a, b::C}` names several siblings at once.
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group
                        .split('}')
                        .next()
                        .unwrap()
                        .split(',')
                        .map(|n| n.trim())
                        .collect(),
                    None => vec![rest],
                };
                for n in names {
                    let name: String = n
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if siblings.contains(&name) {
                        deps.insert(name);
                    }
                }
            }
        }
        out.entry(module).or_default().insert(stem, deps);
    }
    out
}

/// Issue 23: the files inside a module import one another without a circle either (engine's connect, endpoint and
/// tls used to).
#[test]
fn no_import_circle_between_files_of_a_module() {
    let graphs = sibling_graphs();
    let engine = &graphs["engine"];
    assert!(engine["run"].contains("connect"), "{engine:?}");
    for (module, g) in &graphs {
        for (a, deps) in g {
            for b in deps {
                assert!(
                    !reaches(g, b, a),
                    "import circle in {module}: {a} → {b} → … → {a}"
                );
            }
        }
    }
}
