//! The fuzz targets (issue 13): one per parser of outside text, each an entry point that takes the fuzzer's bytes.
//!
//! Each takes the raw bytes the fuzzer made, runs the parser the way rocmenv runs it on what a host, a tool or a user
//! gives it, and asserts what must hold beyond "no panic" where that is cheap: a value that parsed prints back to text
//! that parses to the same value, accepted input holds none of the bytes a check forbids, an error is one line.
//! Compiled twice: into the AFL++ binary (`fuzz/src/main.rs`) and into `tests/fuzz_seeds.rs`, which replays the
//! committed seeds and `fuzz/regressions/<target>/*` (every crash or hang a fuzzer found) under `cargo test`. Both
//! reach rocmenv only through its library API (`rocmenv::parse` is public for them, hidden from the docs).

use rocmenv::engine::DockerIgnore;
use rocmenv::gfx::GfxTarget;
use rocmenv::host::{self, HostRoot, ProbeOptions, RecordedSession, Session, ToolRun};
use rocmenv::image_ref::{self, ImageRef};
use rocmenv::matrix::Matrices;
use rocmenv::parse::{
    kernel, kfd, nvidia_proc, nvidia_smi, nvidia_smi_xml, os_release, ras, rocm_smi, rocminfo,
};
use rocmenv::suites::{self as result, SuiteResult};
use rocmenv::version::{parse_with_parts, DriverVersion, Version};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A fuzz target: its name (the directory under `fuzz/seeds/` and `fuzz/regressions/`) and its entry point.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `scripts/fuzz-smoke` runs them.
pub const TARGETS: &[Target] = &[
    ("kernel", kernel_release),
    ("version", versions),
    ("os_release", os_release_file),
    ("kfd", kfd_properties),
    ("rocminfo", rocminfo_output),
    ("rocm_smi", rocm_smi_output),
    ("nvidia_smi", nvidia_smi_output),
    ("ras", sysfs_error_counters),
    ("dockerignore", dockerignore),
    ("image_ref", image_reference),
    ("sanitize", sanitiser),
    ("matrices", matrices),
    ("suite_result", suite_result),
    ("recorded", recorded_session),
    ("host_tree", host_tree),
    ("config", config_file),
    ("report", report_file),
    ("bundle", bundle_file),
];

/// The entry point of the target called `name`.
pub fn target(name: &str) -> Option<fn(&[u8])> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Text the way rocmenv reads it from a file or a pipe: bad bytes become U+FFFD.
fn text(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// `uname -r` and `/proc/version`: a release that parses re-parses to the same value from its own text.
pub fn kernel_release(data: &[u8]) {
    let s = text(data);
    if let Ok(k) = kernel::parse_kernel_release(&s) {
        assert_eq!(k.release, s.trim(), "the release is the input, trimmed");
        assert!(k.release.len() <= 256 && k.release.is_ascii());
        let again = kernel::parse_kernel_release(&k.release).expect("a parsed release re-parses");
        assert_eq!(again, k);
        let v: Version = k
            .version
            .to_string()
            .parse()
            .expect("a kernel's version re-parses");
        assert_eq!(v, k.version);
        let _ = (k.series(), k.is_wsl());
    }
    if let Some(r) = kernel::kernel_release_from_proc_version(&s) {
        assert!(s.contains(&r));
        assert!(kernel::parse_kernel_release(&r).is_ok());
    }
}

/// Version strings (matrix versions, driver versions, gfx targets, `HSA_OVERRIDE_GFX_VERSION`): each round-trips.
pub fn versions(data: &[u8]) {
    let s = text(data);
    if let Ok((v, parts)) = parse_with_parts(&s) {
        assert!((1..=3).contains(&parts));
        let (again, _) = parse_with_parts(&v.to_string()).expect("a version re-parses");
        assert_eq!(again, v);
    }
    if let Ok(d) = s.parse::<DriverVersion>() {
        assert!(!d.parts().is_empty() && d.parts().len() <= 4);
        assert_eq!(d.to_string().parse::<DriverVersion>().as_ref(), Ok(&d));
        let _ = d.branch();
    }
    let gfx_round_trips = |g: GfxTarget| {
        let name = g.to_string();
        assert_eq!(
            name.parse::<GfxTarget>().as_ref(),
            Ok(&g),
            "{name} re-parses"
        );
        assert_eq!(GfxTarget::from_kfd_version(g.kfd_version()), Ok(Some(g)));
        assert_eq!(GfxTarget::from_override(&g.override_value()), Ok(g));
        let _ = g.is_llvm_processor();
    };
    if let Ok(g) = s.parse::<GfxTarget>() {
        gfx_round_trips(g);
    }
    if let Ok(g) = GfxTarget::from_override(&s) {
        gfx_round_trips(g);
    }
    if data.len() >= 8 {
        let n = u64::from_le_bytes(data[..8].try_into().expect("8 bytes"));
        for value in [n, n % 1_000_000] {
            if let Ok(Some(g)) = GfxTarget::from_kfd_version(value) {
                assert_eq!(g.kfd_version(), value);
                gfx_round_trips(g);
            }
        }
    }
}

/// Writes `s` as a double-quoted os-release value (the four shell escapes).
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if matches!(c, '"' | '\\' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// `/etc/os-release`: what parsed, written back as os-release, parses to the same fields.
pub fn os_release_file(data: &[u8]) {
    let s = text(data);
    let r = os_release::parse_os_release(&s);
    let _ = r.point_release();
    assert!(r
        .id_like
        .iter()
        .all(|t| !t.is_empty() && !t.contains(char::is_whitespace)));
    let mut back = String::new();
    let fields = [
        ("ID", &r.id),
        ("VERSION_ID", &r.version_id),
        ("VERSION", &r.version),
        ("PRETTY_NAME", &r.pretty_name),
        ("NAME", &r.name),
        ("VERSION_CODENAME", &r.version_codename),
        ("UBUNTU_CODENAME", &r.ubuntu_codename),
    ];
    for (key, value) in fields {
        if let Some(v) = value {
            assert!(v.chars().count() <= 256, "{key} is capped");
            assert!(!v.contains('\n'), "{key} is one line");
            let _ = writeln!(back, "{key}={}", quoted(v));
        }
    }
    if !r.id_like.is_empty() {
        let _ = writeln!(back, "ID_LIKE={}", quoted(&r.id_like.join(" ")));
    }
    assert_eq!(
        os_release::parse_os_release(&back),
        r,
        "written back:\n{back}"
    );
}

/// KFD topology `properties`: what parsed, written back as `name value` lines, parses to the same node.
pub fn kfd_properties(data: &[u8]) {
    let node = kfd::parse_kfd_properties(&text(data));
    let _ = (node.gfx(), node.is_cpu(), node.simd_count());
    if let Some(bdf) = node.bdf() {
        assert!(bdf.is_ascii() && bdf.len() >= 12, "{bdf}");
    }
    let back: String = node
        .props
        .iter()
        .map(|(k, v)| format!("{k} {v}\n"))
        .collect();
    assert_eq!(kfd::parse_kfd_properties(&back), node);
}

/// `rocminfo`: agents and errors; a GPU's gfx target is its name's.
pub fn rocminfo_output(data: &[u8]) {
    let r = rocminfo::parse_rocminfo(&text(data));
    for a in &r.info.agents {
        assert!(!a.name.contains('\n'));
        if let Some(g) = a.gfx {
            assert!(a.name.starts_with("gfx"), "{} has gfx {g}", a.name);
        }
    }
    let _ = r.info.gpus().count();
}

/// The concise `rocm-smi` table.
pub fn rocm_smi_output(data: &[u8]) {
    for row in rocm_smi::parse_rocm_smi_concise(&text(data)) {
        assert!(row.device < 256);
        if let Some(id) = &row.device_id {
            assert!(
                id.starts_with("0x")
                    && id.len() <= 6
                    && id.bytes().all(|b| !b.is_ascii_uppercase())
            );
        }
    }
}

/// `nvidia-smi` (table and failures) and `/proc/driver/nvidia/version`: a driver version round-trips.
pub fn nvidia_smi_output(data: &[u8]) {
    let s = text(data);
    // `nvidia-smi -q -x` (issue 37): refused or read, never a panic or a stack overflow.
    if let Ok(gpus) = nvidia_smi_xml::parse_nvidia_smi_xml(&s) {
        for g in gpus {
            // A count comes from an element that names it.
            if g.volatile_uncorrectable.is_some() {
                assert!(s.contains("uncorrectable") || s.contains("double_bit"));
            }
        }
    }
    let t = nvidia_smi::parse_nvidia_smi(&s);
    if let Some(d) = &t.driver_version {
        assert_eq!(d.to_string().parse::<DriverVersion>().as_ref(), Ok(d));
    }
    if let Some(c) = &t.cuda_version {
        assert!(c.contains('.') && c.bytes().all(|b| b.is_ascii_digit() || b == b'.'));
    }
    for g in &t.gpus {
        assert!(!g.name.contains('\n'));
    }
    if let Some(nvidia_smi::NvidiaSmiError::Other(line)) = nvidia_smi::nvidia_smi_error(&s) {
        assert!(!line.contains('\n'));
    }
    if let Some(m) = nvidia_proc::parse_nvidia_proc_version(&s) {
        assert_eq!(
            m.version.to_string().parse::<DriverVersion>().as_ref(),
            Ok(&m.version)
        );
    }
}

/// `.dockerignore` (the bytes before the first NUL) against paths (the lines after it): the Dockerfile and the
/// `.dockerignore` are always sent, and without `!` lines a directory left out leaves out what is under it.
pub fn dockerignore(data: &[u8]) {
    let s = text(data);
    let (file, paths) = s
        .split_once('\0')
        .unwrap_or((&s, "a/b\nDockerfile\nsrc/main.rs"));
    let Ok(ignore) = DockerIgnore::parse(file) else {
        return;
    };
    assert!(!ignore.excludes(Path::new("Dockerfile")));
    assert!(!ignore.excludes(Path::new(".dockerignore")));
    for p in paths.lines().take(16) {
        let excluded = ignore.excludes(Path::new(p));
        if excluded && !ignore.has_exceptions() {
            let child = format!("{}/x", p.trim_end_matches('/'));
            assert!(
                ignore.excludes(Path::new(&child)),
                "{p} is excluded but {child} is not"
            );
        }
    }
}

/// Image references: a parsed reference prints back to itself, and its normalized name is a fixed point.
pub fn image_reference(data: &[u8]) {
    let s = text(data);
    let parsed = ImageRef::parse(&s);
    assert_eq!(
        rocmenv::sanitize::image_reference("--image", &s).is_ok(),
        parsed.is_ok(),
        "the sanitiser and the parser agree on {s:?}"
    );
    let Ok(r) = parsed else {
        return;
    };
    assert_eq!(r.to_string(), s, "a reference prints as given");
    assert_eq!(ImageRef::parse(&r.to_string()).as_ref(), Ok(&r));
    let _ = r.pull_target();
    let n = r.normalized();
    if n.len() <= image_ref::MAX_LEN {
        let again =
            ImageRef::parse(&n).unwrap_or_else(|e| panic!("normalized {n} is refused: {e}"));
        assert_eq!(again.normalized(), n, "normalizing twice changes {n}");
    }
}

/// The sanitiser (`src/sanitize.rs`): what it accepts holds none of the characters its module documentation lists
/// as special to a shell or a Dockerfile, and what it refuses is reported on one line that shows every character.
pub fn sanitiser(data: &[u8]) {
    use rocmenv::sanitize::*;
    let s = text(data);
    // Inside `"…"` on an ENV or LABEL line only these change the meaning; a bare word (a package, a name) may hold
    // none of the shell's specials or a space either.
    let in_quotes =
        |c: char| c.is_control() || !c.is_ascii() || matches!(c, '"' | '\\' | '$' | '`');
    let shell_special = |c: char| in_quotes(c) || matches!(c, '\'' | ';' | '|' | '&' | ' ');
    let checks: [(&str, Check, &str); 5] = [
        ("--pip", pip_requirement, ""),
        ("--apt", apt_package, "<>"),
        ("--env", env_name, "<>=-.:+~"),
        ("--env-value", env_value, ""),
        ("--label", label_value, ""),
    ];
    for (flag, check, also_forbidden) in checks {
        let forbidden = |c: char| {
            also_forbidden.contains(c)
                || if flag.starts_with("--env-") || flag == "--label" {
                    in_quotes(c)
                } else {
                    shell_special(c)
                }
        };
        match check(flag, &s) {
            Ok(()) => {
                assert!(s.len() <= MAX_LEN);
                if let Some(c) = s.chars().find(|&c| forbidden(c)) {
                    panic!("{flag} accepted {s:?} with {c:?}");
                }
            }
            Err(e) => one_visible_line(flag, &e.to_string()),
        }
    }
    match image_reference("--image", &s) {
        Ok(r) => assert!(!s.chars().any(shell_special) && !s.contains(' ') && r.to_string() == s),
        Err(e) => one_visible_line("--image", &e.to_string()),
    }
}

/// A check of `src/sanitize.rs`: (flag, value) → accepted or the usage error.
type Check = fn(&str, &str) -> Result<(), rocmenv::error::Error>;

/// An error message shows every character it names: nothing Rust's `escape_debug` would escape (a control
/// character, a line or paragraph separator, a bidi override) but the quotes and the backslash.
fn one_visible_line(flag: &str, line: &str) {
    let hidden = |c: &char| !matches!(c, '"' | '\'' | '\\') && c.escape_debug().nth(1).is_some();
    if let Some(c) = line.chars().find(hidden) {
        panic!("{flag}'s error holds {c:?}: {line:?}");
    }
}

/// The embedded matrices' text, the starting point a `--matrices` directory usually is.
pub const EMBEDDED_MATRICES: [&str; 4] = [
    include_str!("../../matrices/rocm.yaml"),
    include_str!("../../matrices/cuda.yaml"),
    include_str!("../../matrices/ngc.yaml"),
    include_str!("../../matrices/gpus.yaml"),
];

/// `--matrices DIR` from bytes: the four files (`rocm.yaml`, `cuda.yaml`, `ngc.yaml`, `gpus.yaml`) and the optional
/// `firmware.yaml`, separated by NUL bytes; one of the four not given is the embedded one, a missing firmware.yaml
/// is left out (the embedded list is used). An error names a line that the file has.
pub fn matrices(data: &[u8]) {
    let s = text(data);
    let mut parts = s.split('\0');
    let files: Vec<(String, String)> = rocmenv::matrix::MATRIX_FILES
        .iter()
        .zip(EMBEDDED_MATRICES)
        .map(|(name, embedded)| {
            (
                name.to_string(),
                parts.next().unwrap_or(embedded).to_string(),
            )
        })
        .collect();
    let [rocm, cuda, ngc, gpus]: [(String, String); 4] = files.try_into().expect("four files");
    let firmware = parts
        .next()
        .map(|t| ("firmware.yaml".to_string(), t.to_string()));
    let texts = [
        rocm.1.clone(),
        cuda.1.clone(),
        ngc.1.clone(),
        gpus.1.clone(),
        firmware.as_ref().map(|f| f.1.clone()).unwrap_or_default(),
    ];
    match Matrices::from_texts(rocm, cuda, ngc, gpus, firmware, "fuzz".into()) {
        Ok(m) => {
            assert!(m
                .rocm
                .releases
                .windows(2)
                .all(|w| w[0].version <= w[1].version));
            assert!(m
                .cuda
                .releases
                .windows(2)
                .all(|w| w[0].version <= w[1].version));
        }
        Err(e) => {
            let i = rocmenv::matrix::MATRIX_FILES
                .iter()
                .chain(&rocmenv::matrix::OPTIONAL_MATRIX_FILES)
                .position(|f| *f == e.file)
                .expect("the error names a matrix file");
            if let Some(line) = e.line {
                let lines = texts[i].lines().count().max(1);
                assert!(
                    line >= 1 && line <= lines + 1,
                    "{e} (the file has {lines} lines)"
                );
            }
            assert!(!e.message.is_empty());
            assert!(!e.to_string().contains(char::is_control), "one line: {e:?}");
        }
    }
}

/// The smoke/bench result document `run.py` writes and its progress lines: a parsed document serialises and
/// parses back to itself, and its counts agree with its verdict.
pub fn suite_result(data: &[u8]) {
    if let Ok(doc) = result::parse_result(Some(data)) {
        let (pass, fail, skip) = doc.counts();
        assert_eq!(pass + fail + skip, doc.tests.len());
        assert_eq!(doc.passed(), fail == 0);
        let json = serde_json::to_vec(&doc).expect("a parsed document serialises");
        let again: SuiteResult = result::parse_result(Some(&json)).expect("and parses back");
        assert_eq!(
            serde_json::to_value(&again).ok(),
            serde_json::to_value(&doc).ok()
        );
    }
    let s = text(data);
    for line in s.lines() {
        if let Some(t) = result::parse_progress(line) {
            assert!(line.starts_with(result::PROGRESS_PREFIX));
            let _ = t.status;
        }
    }
    assert!(result::tail_lines(&s, 5).lines().count() <= 5);
}

/// A private scratch directory for the targets that need a host tree on disk: one per process and thread, emptied
/// after each input.
fn scratch() -> PathBuf {
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    std::env::temp_dir().join(format!("rocmenv-fuzz-{}-{thread}", std::process::id()))
}

/// Writes `files` (host path, contents; contents `-> target` make a symlink) under a fresh `dir`. Paths that are
/// not plain relative names are skipped, as are files that collide with a directory.
fn write_tree(dir: &Path, files: &[(String, Vec<u8>)]) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("the scratch directory can be made");
    for (path, contents) in files {
        let rel = path.trim_start_matches('/');
        let plain = !rel.is_empty()
            && rel.len() < 200
            && rel
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != "..");
        if !plain {
            continue;
        }
        let at = dir.join(rel);
        if let Some(parent) = at.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                continue;
            }
        }
        match contents.strip_prefix(b"-> ") {
            Some(target) => {
                let target = String::from_utf8_lossy(target);
                let _ = std::os::unix::fs::symlink(target.trim(), &at);
            }
            None => {
                let _ = std::fs::write(&at, contents);
            }
        }
    }
}

/// Splits `data` into (path, contents) pairs at NUL bytes: `path\0contents\0path\0contents…`.
fn tree_entries(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut it = data.split(|b| *b == 0);
    let mut out = Vec::new();
    while let (Some(p), Some(c)) = (it.next(), it.next()) {
        if out.len() == 512 {
            break;
        }
        out.push((String::from_utf8_lossy(p).into_owned(), c.to_vec()));
    }
    out
}

/// `.rocmenv/recorded.yaml` (the bytes before the first NUL) and the tool output it may name (`rocminfo.txt`, the
/// rest):
/// a malformed file is reported on one line, never fatal.
pub fn recorded_session(data: &[u8]) {
    let (yaml, tool) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let dir = scratch();
    write_tree(
        &dir,
        &[
            (host::RECORDED_FILE.into(), yaml.to_vec()),
            ("/.rocmenv/rocminfo.txt".into(), tool.to_vec()),
        ],
    );
    let root = HostRoot::sysroot(&dir).expect("the scratch tree opens");
    let session = RecordedSession::open(&root);
    let _ = session.identity();
    let _ = session.env();
    let _ = session.node_meta("/dev/kfd");
    for tool in ["rocminfo", "rocm-smi", "nvidia-smi"] {
        if let ToolRun::NotRun(why) = session.run_tool(tool, None) {
            assert!(!why.contains('\n'), "{why}");
        }
    }
    let why = session.describe();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!why.contains('\n'), "describe() is one line: {why:?}");
}

/// `rocmenv.yaml`: a config loads or is refused with one line naming the file and a line within it.
pub fn config_file(data: &[u8]) {
    let path = Path::new("rocmenv.yaml");
    if let Err(e) = rocmenv::config::Config::parse(path, &text(data)) {
        let msg = e.to_string();
        assert!(!msg.contains('\n'), "one line: {msg:?}");
        assert!(msg.contains("rocmenv.yaml"), "names the file: {msg}");
    }
}

/// A report `rocmenv report merge` reads: parsed or refused in one line; what parsed merges and renders.
pub fn report_file(data: &[u8]) {
    match rocmenv::fleet::parse(Path::new("node.json"), &text(data)) {
        Ok(nodes) => {
            let merged = rocmenv::fleet::merge(&nodes);
            let mut out = Vec::new();
            rocmenv::fleet::render::text(&merged, &mut out).expect("rendering to memory");
            rocmenv::fleet::render::markdown(&merged, &mut out).expect("rendering to memory");
            rocmenv::fleet::render::json(&merged, &mut out).expect("rendering to memory");
            let xml = rocmenv::report::merge_junit(&merged);
            assert!(xml.starts_with("<?xml"), "{xml}");
        }
        Err(why) => assert!(!why.to_string().contains('\n'), "one line: {why}"),
    }
}

/// A support bundle (`doctor --sysroot FILE.tar.zst`): unpacked into a private directory or refused in one line, and
/// never a file outside it.
pub fn bundle_file(data: &[u8]) {
    let dir = scratch();
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the scratch directory can be made");
    let file = dir.join("bundle.tar.zst");
    std::fs::write(&file, data).expect("the scratch file can be written");
    let before: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    match host::bundle::open(&file) {
        Ok(root) => {
            let _ = root.read_text("/proc/version");
            let _ = root.list("/sys/bus/pci/devices");
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "one line: {e}"),
    }
    let after: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(before, after, "nothing written beside the bundle");
}

/// A whole host tree (`path\0contents\0…`: sysfs PCI and DRM values, KFD properties, os-release, the kernel
/// release, module versions, the recorded tools' output), probed as `doctor --sysroot --deep` probes one.
pub fn host_tree(data: &[u8]) {
    let dir = scratch();
    write_tree(&dir, &tree_entries(data));
    let root = HostRoot::sysroot(&dir).expect("the scratch tree opens");
    let session = RecordedSession::open(&root);
    let facts = host::probe(&root, &session, &ProbeOptions { deep: true });
    let _ = std::fs::remove_dir_all(&dir);
    for g in &facts.gpus {
        if let Some(n) = &g.render_node {
            assert!(n.starts_with("/dev/dri/renderD"), "{n}");
        }
        if let Some(p) = &g.pcie {
            assert!(p.current_width.is_none_or(|w| (1..=32).contains(&w)));
        }
        assert!(g.numa_node.is_none_or(|n| (0..4096).contains(&n)));
    }
    let mut amd: Vec<usize> = facts.amd_gpus().map(|g| g.index).collect();
    amd.sort_unstable();
    assert!(
        amd.iter().enumerate().all(|(i, n)| i == *n),
        "AMD GPUs are numbered 0..n"
    );
    serde_json::to_string(&facts).expect("the facts serialise");
}

/// The kernel's error counters in sysfs (issue 37): amdgpu's `*_err_count`, `gpu_vram_bad_pages`, `xgmi_error`, and
/// PCIe `aer_dev_*`.
pub fn sysfs_error_counters(data: &[u8]) {
    let s = text(data);
    let _ = ras::parse_err_count(&s);
    if let Ok(p) = ras::parse_bad_pages(&s) {
        assert!(p.total() as usize <= s.lines().count());
    }
    if let Ok(a) = ras::parse_aer(&s) {
        assert!(a.nonzero.iter().all(|(_, n)| *n > 0));
    }
    let _ = ras::parse_xgmi_error(&s);
}
