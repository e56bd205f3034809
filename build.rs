//! What the build does once so that every start of the binary does less:
//! - the embedded matrices as JSON: parsing YAML costs most of doctor's start, so the build converts
//!   `matrices/*.yaml` once and the binary reads JSON. The YAML stays the source (and what `--matrices DIR` reads);
//!   the test `matrix::load::tests::embedded_json_is_the_validated_yaml` checks the two load to the same, validated
//!   matrices; the fields of rocm.yaml a run mostly does not read stay JSON text until read (`defer`);
//! - GCC's unwinder linked in rather than loaded (`static_unwinder`), and `pow` (`local_pow`);
//! - the functions a doctor run executes placed together at the start of the code (`hot_text`).

use std::path::{Path, PathBuf};

#[path = "link/script.rs"]
mod hot_text_script;

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    embed_matrices(&out);
    static_unwinder(&out);
    local_pow();
    hot_text(&out);
}

fn embed_matrices(out: &str) {
    println!("cargo:rerun-if-changed=matrices");
    for name in ["rocm", "cuda", "ngc", "gpus", "firmware"] {
        let src = Path::new("matrices").join(format!("{name}.yaml"));
        println!("cargo:rerun-if-changed={}", src.display());
        let text =
            std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        // A file that is not YAML fails here; one that is YAML but not a valid matrix fails the test above.
        let mut value: serde_json::Value =
            serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
        if name == "rocm" {
            defer(&mut value, Path::new(out));
        }
        let json = serde_json::to_string(&value).expect("YAML values are JSON values");
        std::fs::write(Path::new(out).join(format!("{name}.json")), json)
            .expect("OUT_DIR is writable");
    }
}

/// The fields of each rocm.yaml release that a doctor run reads for one release or none, kept as JSON until read
/// (src/matrix/deferred.rs): each value goes into `rocm.deferred.json`, one after another, its span into
/// `rocm.deferred.rs`, and the field holds the span's index.
const DEFERRED: [&str; 5] = ["distros", "built", "pytorch", "images", "wheels"];

fn defer(rocm: &mut serde_json::Value, out: &Path) {
    let mut text = String::new();
    let mut spans = Vec::new();
    let releases = rocm.get_mut("releases").and_then(|r| r.as_array_mut());
    for release in releases.into_iter().flatten() {
        for key in DEFERRED {
            if let Some(v) = release.get_mut(key) {
                let start = text.len();
                text.push_str(&serde_json::to_string(v).expect("a JSON value"));
                spans.push(format!("({start}, {})", text.len()));
                *v = serde_json::Value::from(spans.len() - 1);
            }
        }
    }
    std::fs::write(out.join("rocm.deferred.json"), text).expect("OUT_DIR is writable");
    std::fs::write(
        out.join("rocm.deferred.rs"),
        format!("&[{}]", spans.join(", ")),
    )
    .expect("OUT_DIR is writable");
}

/// Rust links GCC's unwinder as `-lgcc_s`, which on a glibc target is the shared `libgcc_s.so.1`: one more library
/// for the dynamic loader to find, map and relocate at every start, whose constructor (`__cpu_indicator_init`) runs
/// `cpuid`s that trap to the hypervisor on a VM. The same unwinder is in GCC's static `libgcc_eh.a`, what
/// `gcc -static-libgcc` links; rustc has no such switch for glibc targets, so a directory holding that archive under
/// the name `libgcc_s.a`, searched before the system's, makes the linker take it (docs/performance.md: a doctor run
/// 0.14 to 0.19 ms shorter). The unwinder is not exported: a C++ library loaded later (the HIP runtime) unwinds its
/// own exceptions with its own libgcc_s, as before.
///
/// Only for linux-gnu without `crt-static` (which links libgcc_eh itself), and only where the C compiler names the
/// archive; elsewhere the shared library, as before. `cfg(static_unwinder)` tells tests/startup.rs which it was.
fn static_unwinder(out: &str) {
    println!("cargo::rustc-check-cfg=cfg(static_unwinder)");
    if !dynamic_glibc() {
        return;
    }
    let Ok(compiler) = cc::Build::new().cargo_metadata(false).try_get_compiler() else {
        return;
    };
    let Ok(printed) = compiler
        .to_command()
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    // A compiler that does not know the file prints its bare name back.
    let archive = PathBuf::from(String::from_utf8_lossy(&printed.stdout).trim());
    if !archive.is_absolute() || !archive.is_file() {
        return;
    }
    let dir = Path::new(out).join("static-unwinder");
    let copied = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::copy(&archive, dir.join("libgcc_s.a")));
    if copied.is_ok() {
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-cfg=static_unwinder");
    }
}

/// A target linked against glibc's shared libraries: linux-gnu without `crt-static`.
fn dynamic_glibc() -> bool {
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
        && !var("CARGO_CFG_TARGET_FEATURE")
            .split(',')
            .any(|f| f == "crt-static")
}

/// The one function of glibc's libm the binary calls, `pow` (minijinja's `**`, tokio's scheduler statistics), defined
/// in the binary: loading `libm.so.6` for it costs every start about 0.07 ms (a C program on the development VM: 0.68
/// against 0.61 ms), where its relocation runs the resolvers of libm's CPU-specific functions. `link/pow.c` defines
/// it hidden and calls the `libm` crate (src/lib.rs `rocmenv_libm_pow`); the linker (`--as-needed`) then drops
/// libm.so.6. A Rust `#[no_mangle]` `pow` would be exported from the binary, and the HIP or CUDA runtime loaded later
/// would call it instead of glibc's. Same conditions as `static_unwinder`; `cfg(local_pow)` says it was built.
fn local_pow() {
    println!("cargo::rustc-check-cfg=cfg(local_pow)");
    println!("cargo:rerun-if-changed=link/pow.c");
    if !dynamic_glibc() {
        return;
    }
    if cc::Build::new()
        .file("link/pow.c")
        .try_compile("rocmenv_pow")
        .is_ok()
    {
        println!("cargo:rustc-cfg=local_pow");
    }
}

/// The functions a doctor run executes (`link/hot-text.txt`, written by `scripts/hot-text`) placed together at the
/// start of the binary's code. Of 12 MB of code a doctor run executes about 1.4 MB, spread over the whole: each first
/// call into a page the process has not touched is a page fault that maps the 64 KB around it, and the exit unmaps
/// them all again. Together, a doctor run on an 8-GPU tree takes 55 fewer page faults (144, not 199) and about a
/// tenth less time (docs/performance.md).
///
/// A linker script (link/script.rs) adds an output section `.text.hot` before `.text`, taking each listed function's
/// section by its exact name, then by the name without its hash: a symbol's hash changes with the compiler, the
/// dependencies and the profile, so the exact names match the build the list was made from, and the rest still
/// brings every instance of a listed function near the front. A name the build does not have matches nothing; the
/// output and the behaviour do not change either way.
///
/// Only for release builds of the binary on x86_64-unknown-linux-gnu with rustc 1.90 or later, which links there
/// with its own lld (which reads the script as an addition to its layout) unless told otherwise: not when a linker
/// or link arguments are configured (`RUSTC_LINKER`, or `link` in the rustflags: the portable build's zig, mold).
fn hot_text(out: &str) {
    let list = Path::new("link/hot-text.txt");
    println!("cargo:rerun-if-changed={}", list.display());
    println!("cargo:rerun-if-changed=link/script.rs");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    if var("PROFILE") != "release"
        || var("TARGET") != "x86_64-unknown-linux-gnu"
        || std::env::var_os("RUSTC_LINKER").is_some()
        || var("CARGO_ENCODED_RUSTFLAGS")
            .split('\x1f')
            .any(|f| f.contains("link") || f.contains("fuse-ld"))
        || !rustc_links_with_lld(&var("RUSTC"))
    {
        return;
    }
    let Ok(text) = std::fs::read_to_string(list) else {
        return;
    };
    let path = Path::new(out).join("hot-text.ld");
    std::fs::write(&path, hot_text_script::linker_script(&text)).expect("OUT_DIR is writable");
    println!("cargo:rustc-link-arg-bins=-Wl,-T,{}", path.display());
}

/// rustc 1.90 and later link x86_64-unknown-linux-gnu with their own lld by default.
fn rustc_links_with_lld(rustc: &str) -> bool {
    let Ok(o) = std::process::Command::new(rustc).arg("-vV").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&o.stdout);
    let Some(release) = text.lines().find_map(|l| l.strip_prefix("release: ")) else {
        return false;
    };
    let mut parts = release
        .split(['.', '-'])
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (1, 90)
}
