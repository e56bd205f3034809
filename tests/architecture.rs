//! Issue 9: the module graph points downhill. Reads `crate::<module>` paths in src/ (test code left out) and checks
//! there is no import circle between top-level modules, and that the low layers import only what is below them.
//! Issue 23: it also parses every file in src/ with syn to hold each function to 100 lines.

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
    let allowed: [(&str, &[&str]); 7] = [
        ("cc", &[]),
        ("parse", &["gfx", "version"]),
        ("matrix", &["cc", "gfx", "text", "vendor", "version"]),
        (
            "host",
            &["error", "gfx", "parse", "text", "vendor", "version"],
        ),
        ("engine", &["error", "host", "image_ref", "vendor"]),
        ("runtime", &["host", "parse", "status"]),
        ("suites", &["matrix", "status", "vendor"]),
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

/// Every non-test source file under src/, as (path relative to src/, code before its test module).
fn sources() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|f| !f.to_string_lossy().ends_with("tests.rs"))
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap()
                .to_string();
            (f.strip_prefix(&src).unwrap().to_path_buf(), code)
        })
        .collect()
}

/// Issue 23: ops/ is the work every front end calls, so it never sees clap or a command.
#[test]
fn ops_imports_neither_cli_nor_commands() {
    let g = graph();
    let deps = g.get("ops").expect("a module ops");
    for above in ["cli", "commands"] {
        assert!(!deps.contains(above), "ops imports {above}: {deps:?}");
    }
    for (path, code) in sources() {
        if path.starts_with("ops") {
            assert!(!code.contains("clap::"), "{} names clap", path.display());
        }
    }
}

/// Issue 23: a command never calls another (validate composes ops, collect uses ops::doctor, build
/// ops::dockerfile): no file in commands/ names a command module other than its own.
#[test]
fn no_command_names_another() {
    let commands: BTreeSet<String> = sources()
        .iter()
        .filter_map(|(p, _)| {
            let mut c = p.components();
            (c.next()?.as_os_str() == "commands").then_some(())?;
            let name = c.next()?.as_os_str().to_string_lossy().to_string();
            Some(name.trim_end_matches(".rs").to_string())
        })
        .filter(|n| n != "mod")
        .collect();
    assert!(
        commands.contains("validate") && commands.contains("doctor"),
        "{commands:?}"
    );
    let mut checked = 0;
    for (path, code) in sources() {
        let parts: Vec<String> = path
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        if parts.first().map(String::as_str) != Some("commands") || parts.len() < 2 {
            continue;
        }
        let own = parts[1].trim_end_matches(".rs").to_string();
        // The path that reaches commands/ from this file: `super::` from commands/x.rs and commands/x/mod.rs,
        // `super::super::` from commands/x/y.rs; commands/mod.rs is the dispatcher, which names them all.
        let is_mod = parts.last().map(String::as_str) == Some("mod.rs");
        let depth = parts.len() - 1 - usize::from(is_mod);
        if depth == 0 {
            continue;
        }
        for prefix in ["crate::commands::".to_string(), "super::".repeat(depth)] {
            for (i, _) in code.match_indices(prefix.as_str()) {
                // `super::super::x` also contains `super::x` one level down: only whole prefixes count.
                if i >= 2 && &code[i - 2..i] == "::" {
                    continue;
                }
                let rest = &code[i + prefix.len()..];
                // `super::{a, b::c}` names each of a and b.
                let names: Vec<String> = match rest.strip_prefix('{') {
                    Some(group) => group
                        .split('}')
                        .next()
                        .unwrap_or_default()
                        .split(',')
                        .map(|n| n.trim().split("::").next().unwrap_or_default().to_string())
                        .collect(),
                    None => vec![rest
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_' || c.is_ascii_digit())
                        .collect()],
                };
                for name in names {
                    assert!(
                        !commands.contains(&name) || name == own,
                        "{} names the command module {name} ({prefix}{name})",
                        path.display()
                    );
                }
            }
        }
        checked += 1;
    }
    assert!(checked > 15, "read only {checked} command files");
}

/// Issue 23: the matrices are loaded in one place, where the context is made, so a process loads them once.
#[test]
fn the_matrices_are_loaded_only_by_the_context() {
    let sites: Vec<String> = sources()
        .iter()
        .flat_map(|(p, code)| {
            code.match_indices("Matrices::load(")
                .map(move |_| p.display().to_string())
        })
        .collect();
    assert_eq!(sites, ["ops/ctx.rs"], "Matrices::load outside the context");
}

/// The enums of every source file, as (`path: Name`, variants).
fn all_enums() -> Vec<(String, Vec<String>)> {
    sources()
        .iter()
        .flat_map(|(p, code)| {
            enums(code)
                .into_iter()
                .map(move |(name, v)| (format!("{}: {name}", p.display()), v))
        })
        .collect()
}

/// The enums of `code`: each one's name and the names of its variants.
fn enums(code: &str) -> Vec<(String, Vec<String>)> {
    let mut found = Vec::new();
    for (at, _) in code.match_indices("enum ") {
        // `enum` as a keyword: at a line's start, after `pub `, `pub(crate) ` and the like.
        let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
        let before = code[line_start..at].trim();
        if !(before.is_empty() || before.starts_with("pub")) {
            continue;
        }
        let rest = &code[at + 5..];
        let Some(open) = rest.find('{') else { continue };
        let name: String = rest[..open]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let mut depth = 0usize;
        let mut body = String::new();
        for c in rest[open..].chars() {
            match c {
                '{' | '(' => depth += 1,
                '}' | ')' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                break;
            }
            // Only the enum's own level: a variant's fields are not variants.
            if depth == 1 && c != '{' {
                body.push(c);
            }
        }
        let variants = body
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with("//") && !l.starts_with("#["))
            .filter_map(|l| {
                let v: String = l
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                (!v.is_empty()).then_some(v)
            })
            .collect();
        found.push((name, variants));
    }
    found
}

/// Issue 23: one type per idea. A GPU vendor is `vendor::Vendor`, a pass/warn/fail/skip verdict is
/// `status::Status`, and JUnit XML is written by `report/junit.rs` alone.
#[test]
fn one_vendor_one_status_one_junit_writer() {
    let mut vendors = Vec::new();
    let mut statuses = Vec::new();
    let mut junit = Vec::new();
    let all = sources();
    for (p, code) in &all {
        for (name, variants) in enums(code) {
            let has = |v: &str| variants.iter().any(|x| x == v);
            if has("Amd") || has("Nvidia") {
                vendors.push(format!("{}: {name}", p.display()));
            }
            if has("Pass") && has("Fail") {
                statuses.push(format!("{}: {name}", p.display()));
            }
        }
        // A doc comment may name the elements; code that writes them (quick_junit, or XML by hand) may not.
        let writes = code
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .any(|l| {
                l.contains("quick_junit") || l.contains("<testsuite") || l.contains("<testcase")
            });
        if writes {
            junit.push(p.display().to_string());
        }
    }
    assert_eq!(vendors, ["vendor.rs: Vendor"], "GPU vendor enums");
    assert_eq!(statuses, ["status.rs: Status"], "status enums");
    assert_eq!(junit, ["report/junit.rs"], "files that write JUnit");
    // The scan itself works: it sees the variants of the enums it allows.
    let vendor = &all
        .iter()
        .find(|(p, _)| p == Path::new("vendor.rs"))
        .unwrap()
        .1;
    assert_eq!(enums(vendor)[0].1, ["Amd", "Nvidia", "Cpu"]);
}

/// Issue 33: one type per idea, continued. A container stack is `dockerfile::Stack` (`--stack`, a config entry's
/// `stack:`, the templates), an env output format `report::EnvFormat` (`env --format`) and a Slurm container
/// runtime `slurm::Runtime` (`slurm --runtime`): clap and serde derive on the library's type, no copy converts.
#[test]
fn one_stack_one_env_format_one_slurm_runtime() {
    let all = all_enums();
    let with = |wanted: &[&str]| -> Vec<String> {
        all.iter()
            .filter(|(_, v)| wanted.iter().all(|w| v.iter().any(|x| x == w)))
            .map(|(n, _)| n.clone())
            .collect()
    };
    // A stack enum: Rocm and Ngc and nothing but stacks (`TargetSpec::Rocm("6.2")` and the matrix queries are
    // other ideas that happen to name a stack).
    let stacks: Vec<&String> = all
        .iter()
        .filter(|(_, v)| {
            v.iter().any(|x| x == "Rocm")
                && v.iter().any(|x| x == "Ngc")
                && v.iter()
                    .all(|x| ["Rocm", "Ngc", "Cpu"].contains(&x.as_str()))
        })
        .map(|(n, _)| n)
        .collect();
    assert_eq!(stacks, ["dockerfile/request.rs: Stack"], "stack enums");
    assert_eq!(
        with(&["Sh", "Fish", "Dotenv"]),
        ["report/env.rs: EnvFormat"],
        "env format enums"
    );
    assert_eq!(
        with(&["Apptainer", "Enroot"]),
        ["slurm/plan.rs: Runtime"],
        "Slurm runtime enums"
    );
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

/// Every function in one parsed file, as (line of its signature, name, lines from signature to closing brace).
#[derive(Default)]
struct FnLengths(Vec<(usize, String, usize)>);

impl FnLengths {
    /// Records one function whose signature is `sig` and whose body is `block`.
    fn record(&mut self, sig: &syn::Signature, block: &syn::Block) {
        let first = sig.fn_token.span.start().line;
        let last = block.brace_token.span.close().end().line;
        self.0
            .push((first, sig.ident.to_string(), last - first + 1));
    }
}

impl<'ast> syn::visit::Visit<'ast> for FnLengths {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.record(&f.sig, &f.block);
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.record(&f.sig, &f.block);
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if let Some(block) = &f.default {
            self.record(&f.sig, block);
        }
        syn::visit::visit_trait_item_fn(self, f);
    }
}

/// Issue 23: no function in src/ (tests included) is over 100 lines; a longer one is several steps that want names.
#[test]
fn no_function_in_src_is_over_100_lines() {
    use syn::visit::Visit;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut lengths = FnLengths::default();
        lengths.visit_file(&file);
        let path = f.strip_prefix(root).unwrap().display().to_string();
        for (line, name, n) in lengths.0 {
            if n > 100 {
                long.push(format!("{path}:{line} {name} ({n} lines)"));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over 100 lines:\n{}",
        long.join("\n")
    );
}

/// Issue 33: the GPU number (`run --gpu`, `env --device`, `smoke --gpu`, the engine's device map) was checked in four
/// places with four messages. Only `host::check_gpu_number` words that answer now.
#[test]
fn the_gpu_number_is_checked_in_one_place() {
    let words = "does not exist; this host";
    let hits: Vec<String> = sources()
        .into_iter()
        .filter(|(_, code)| code.contains(words))
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].ends_with("host/facts.rs"), "{hits:?}");
    let callers: Vec<String> = sources()
        .into_iter()
        .filter(|(_, code)| code.contains("check_gpu_number") || code.contains(".gpu_number("))
        .map(|(p, _)| p.display().to_string())
        .collect();
    for want in [
        "envplan.rs",
        "ops/run.rs",
        "ops/suite/mod.rs",
        "engine/devices.rs",
    ] {
        assert!(
            callers.iter().any(|c| c.ends_with(want)),
            "{want} does not use it: {callers:?}"
        );
    }
}

/// The `crate::…` paths one file's non-test code names, as (`module::rest`, line): use trees flattened
/// (`use crate::matrix::{A, B}` is `matrix::A` and `matrix::B`) and every `crate::x::…` path in code.
#[derive(Default)]
struct CratePaths(Vec<(String, usize)>);

impl CratePaths {
    /// Each path a use tree below `crate::` names, `prefix` being what the tree is under.
    fn use_tree(&mut self, prefix: &str, tree: &syn::UseTree) {
        let join = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}::{name}")
            }
        };
        match tree {
            syn::UseTree::Path(p) => self.use_tree(&join(&p.ident.to_string()), &p.tree),
            syn::UseTree::Name(n) if n.ident == "self" => self.push(prefix, n.ident.span()),
            syn::UseTree::Name(n) => self.push(&join(&n.ident.to_string()), n.ident.span()),
            syn::UseTree::Rename(r) => self.push(&join(&r.ident.to_string()), r.ident.span()),
            syn::UseTree::Glob(g) => self.push(&join("*"), g.star_token.span),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }

    fn push(&mut self, path: &str, span: proc_macro2::Span) {
        self.0.push((path.to_string(), span.start().line));
    }
}

/// Test code (`#[cfg(test)]` items and modules) may name anything.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string() == "test")
    })
}

impl<'ast> syn::visit::Visit<'ast> for CratePaths {
    fn visit_item(&mut self, i: &'ast syn::Item) {
        let attrs = match i {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Impl(x) => &x.attrs,
            _ => &Vec::new(),
        };
        if !is_test(attrs) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if let syn::UseTree::Path(p) = &u.tree {
            if p.ident == "crate" {
                self.use_tree("", &p.tree);
            }
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let names: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if names.len() > 1 && names[0] == "crate" {
            self.push(&names[1..].join("::"), p.segments[0].ident.span());
        }
        syn::visit::visit_path(self, p);
    }
}

/// Issue 33: a command turns flags into a plan, calls `ops::…` and renders; the work lives in ops. So no file in
/// commands/ names a working module (engine, host, checks, matrix, config, …) except through ops; it may name the
/// command line, ops, the reporters and the small value types every layer shares.
#[test]
fn commands_reach_the_work_only_through_ops() {
    use syn::visit::Visit;
    // What a command may name: itself and the other layers of the front end, and leaf value types.
    let allowed = [
        "cli",
        "commands",
        "ops",
        "report",
        "error",
        "vendor",
        "status",
        "gfx",
        "version",
        "text",
        "sanitize",
        "image_ref",
    ];
    // Single items of working modules a command may still name, each with why; none today: what commands need
    // from below ops (engine mounts, k8s and slurm plans, fleet reports, …) is re-exported by ops.
    let exceptions: [(&str, &str); 0] = [];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("commands"), &mut files);
    files.sort();
    let (mut found, mut seen) = (Vec::new(), 0);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut paths = CratePaths::default();
        paths.visit_file(&file);
        seen += paths.0.len();
        for (path, line) in paths.0 {
            let module = path.split("::").next().unwrap_or_default();
            let excepted = exceptions
                .iter()
                .any(|(p, _)| path == *p || path.starts_with(&format!("{p}::")));
            if !allowed.contains(&module) && !excepted {
                let rel = f.strip_prefix(&src).unwrap().display();
                found.push(format!("{rel}:{line} crate::{path}"));
            }
        }
    }
    // The scan itself works: it reads every command and the paths they name.
    assert!(files.len() > 15, "read only {} command files", files.len());
    assert!(seen > 100, "saw only {seen} crate:: paths in commands/");
    assert!(
        found.is_empty(),
        "commands/ names working modules, not through ops:\n{}",
        found.join("\n")
    );
}
