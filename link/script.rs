//! The linker script that places `link/hot-text.txt`'s functions first (build.rs `hot_text`; link/README.md). Shared
//! by build.rs, tests/hot_text.rs and benches/process.rs (which counts what a build placed).

/// The symbol names of `link/hot-text.txt`: its lines that are not empty, not comments (`#`), and only ASCII
/// letters, digits, `_`, `$` and `.` (anything else could end a pattern or the script).
pub fn listed(list: &str) -> Vec<&str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter(|l| {
            l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_$.".contains(&b))
        })
        .collect()
}

/// A script adding an output section `.text.hot` before `.text`, with each listed function's section taken first by
/// its exact name, then, after every exact name, by its name without hash (`without_hash`); of the list, only what
/// `listed` keeps.
pub fn linker_script(list: &str) -> String {
    let names = listed(list);
    let mut script = String::from("SECTIONS {\n  .text.hot : {\n");
    let mut seen = std::collections::HashSet::new();
    let patterns = names
        .iter()
        .map(|n| n.to_string())
        .chain(names.iter().map(|n| without_hash(n)));
    for pattern in patterns {
        if seen.insert(pattern.clone()) {
            // rustc puts each function in a section of its own, `.text.<symbol>`; LLVM names a cold one's
            // (`#[cold]`: a Vec's growth, a OnceLock's first use) `.text.unlikely.<symbol>`.
            script.push_str(&format!(
                "    *(.text.{pattern} .text.unlikely.{pattern})\n"
            ));
        }
    }
    script.push_str("  }\n}\nINSERT BEFORE .text;\n");
    script
}

/// A symbol with its hash as a wildcard: Rust's legacy mangling ends a path with `17h`, 16 hex digits and `E`; the
/// v0 mangling names each crate with `Cs`, its disambiguator and `_`; LLVM suffixes a promoted local with `.llvm.`
/// and digits. `name` is ASCII (`linker_script` keeps no other).
pub fn without_hash(name: &str) -> String {
    let b = name.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let rest = &name[i..];
        if rest.starts_with("17h")
            && b.len() >= i + 20
            && b[i + 3..i + 19].iter().all(u8::is_ascii_hexdigit)
            && b[i + 19] == b'E'
        {
            out.push_str("17h*");
            i += 20;
        } else if let Some(digits) = rest.strip_prefix(".llvm.") {
            out.push_str(".llvm.*");
            i += ".llvm.".len() + digits.bytes().take_while(u8::is_ascii_digit).count();
        } else if name.starts_with("_R") && rest.starts_with("Cs") {
            let n = rest[2..]
                .bytes()
                .take_while(u8::is_ascii_alphanumeric)
                .count();
            if rest.as_bytes().get(2 + n) == Some(&b'_') {
                out.push_str("Cs*_");
                i += 3 + n;
            } else {
                out.push_str("Cs");
                i += 2;
            }
        } else {
            out.push(b[i] as char);
            i += 1;
        }
    }
    out
}
