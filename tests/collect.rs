//! Issue 13, `rocmenv collect`: a bundle holds exactly what doctor reads, `doctor --sysroot BUNDLE` reads it back to
//! the same findings, `--redact` leaves no host name, user name or secret in it, and a hostile bundle is refused
//! without writing outside its temporary directory.

use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
}

fn fixtures() -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(fixture(""))
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let n = e.file_name().into_string().unwrap();
            (e.file_type().unwrap().is_dir() && n != "gen").then_some(n)
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 22, "{names:?}");
    names
}

/// Runs the binary with a private TMPDIR (so a test can see that nothing is left there).
fn rocmenv(args: &[&str], tmp: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.args(args).env("TMPDIR", tmp);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A bundle's entries: path → (type, link target, bytes).
fn entries(bundle: &Path) -> BTreeMap<String, (tar::EntryType, Option<String>, Vec<u8>)> {
    let raw = zstd::stream::decode_all(fs::File::open(bundle).unwrap()).unwrap();
    let mut ar = tar::Archive::new(&raw[..]);
    let mut out = BTreeMap::new();
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        let path = e
            .path()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches('/')
            .to_string();
        let link = e
            .link_name()
            .unwrap()
            .map(|l| l.to_string_lossy().into_owned());
        let mut bytes = Vec::new();
        e.read_to_end(&mut bytes).unwrap();
        out.insert(path, (e.header().entry_type(), link, bytes));
    }
    out
}

/// The whole archive, decompressed: headers (paths, link targets) and contents.
fn archive_bytes(bundle: &Path) -> Vec<u8> {
    zstd::stream::decode_all(fs::File::open(bundle).unwrap()).unwrap()
}

/// True when `word` appears in `hay` with no letter, digit, `_` or `-` right before or after it.
fn has_word(hay: &[u8], word: &str) -> bool {
    let w = word.as_bytes();
    let inner = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    hay.windows(w.len()).enumerate().any(|(i, win)| {
        win == w
            && (i == 0 || !inner(hay[i - 1]))
            && hay.get(i + w.len()).is_none_or(|b| !inner(*b))
    })
}

/// The checks by (id, subject).
fn checks(doc: &Value) -> BTreeMap<(String, String), Value> {
    doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                (
                    c["id"].as_str().unwrap().to_string(),
                    c["subject"].as_str().unwrap_or("").to_string(),
                ),
                c.clone(),
            )
        })
        .collect()
}

/// What only the running host can answer: the GPU runtimes and the Docker daemon.
const LIVE_ONLY: [&str; 3] = ["runtime.hip", "runtime.cuda", "docker.daemon"];

#[test]
fn this_machine_round_trips_except_what_needs_the_live_host() {
    let d = tempfile::tempdir().unwrap();
    let tmp = d.path().join("tmp");
    fs::create_dir(&tmp).unwrap();
    let bundle = d.path().join("this.tar.zst");
    let b = bundle.to_str().unwrap();
    let o = rocmenv(&["collect", "--deep", "-o", b], &tmp, &[]);
    ok(&o);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains(&format!("rocmenv doctor --sysroot {b}")),
        "{said}"
    );

    let e = entries(&bundle);
    // doctor.json is the live report at the moment of collection; the tree read back must give its findings.
    let live: Value = serde_json::from_slice(&e["doctor.json"].2).unwrap();
    assert_eq!(live["host"]["mode"], "live");
    let o = rocmenv(&["doctor", "--deep", "--json", "--sysroot", b], &tmp, &[]);
    let back = json(&o);
    assert_eq!(back["host"]["mode"], "sysroot");
    let (live_checks, back_checks) = (checks(&live), checks(&back));
    assert_eq!(
        live_checks.keys().collect::<Vec<_>>(),
        back_checks.keys().collect::<Vec<_>>()
    );
    for (k, want) in &live_checks {
        let got = &back_checks[k];
        if LIVE_ONLY.contains(&k.0.as_str()) {
            assert_eq!(got["status"], "skip", "{k:?}: {got}");
            assert!(
                got["summary"].as_str().unwrap().contains("--sysroot"),
                "{k:?} must say it needs the live host: {got}"
            );
        } else {
            assert_eq!(got, want, "{k:?}");
        }
    }
    let (mut lh, mut bh) = (live["host"].clone(), back["host"].clone());
    lh["mode"] = Value::Null;
    bh["mode"] = Value::Null;
    assert_eq!(lh, bh, "the facts read back differ from the live ones");
    // The temporary tree is gone.
    assert_eq!(fs::read_dir(&tmp).unwrap().count(), 0);

    // The host markers and what the live probe reads through the kernel's API (sysinfo) are in the tree.
    for p in ["proc/meminfo", "proc/cpuinfo", ".rocmenv/recorded.yaml"] {
        assert!(e.contains_key(p), "{p} missing: {:?}", e.keys());
    }
    assert!(e.keys().any(|k| k == "sys/bus/pci"));
    // A file doctor only checks for is kept empty; none of those is under proc/ or etc/ (an empty /proc/version
    // would mislead whoever reads the bundle).
    for (path, (t, _, bytes)) in &e {
        if *t == tar::EntryType::Regular && (path.starts_with("proc/") || path.starts_with("etc/"))
        {
            assert!(!bytes.is_empty(), "{path} is empty");
        }
    }
    // sysfs device links are links, with their targets in the bundle too.
    for (path, (t, link, _)) in &e {
        if path.starts_with("sys/bus/pci/devices/") && path.matches('/').count() == 4 {
            assert_eq!(*t, tar::EntryType::Symlink, "{path}");
            let target = link.as_ref().unwrap();
            assert!(
                target.starts_with("../../../devices/"),
                "{path} -> {target}"
            );
            let real = format!(
                "sys/devices/{}",
                target.trim_start_matches("../../../devices/")
            );
            assert!(e.contains_key(&format!("{real}/uevent")), "{real}/uevent");
        }
    }
}

#[test]
fn every_fixture_reads_back_to_the_same_doctor_json() {
    let d = tempfile::tempdir().unwrap();
    for name in fixtures() {
        let tree = fixture(&name);
        let t = tree.to_str().unwrap();
        let bundle = d.path().join(format!("{name}.tar.zst"));
        let b = bundle.to_str().unwrap();
        ok(&rocmenv(
            &["collect", "--deep", "--sysroot", t, "-o", b],
            d.path(),
            &[],
        ));
        let want = rocmenv(
            &["doctor", "--deep", "--json", "--sysroot", t],
            d.path(),
            &[],
        );
        let got = rocmenv(
            &["doctor", "--deep", "--json", "--sysroot", b],
            d.path(),
            &[],
        );
        assert_eq!(json(&got), json(&want), "{name}");
        assert_eq!(got.status.code(), want.status.code(), "{name}");
        // `env` takes a bundle as it takes a tree.
        let (we, ge) = (
            rocmenv(&["env", "--sysroot", t], d.path(), &[]),
            rocmenv(&["env", "--sysroot", b], d.path(), &[]),
        );
        assert_eq!(
            (ge.status.code(), &ge.stdout),
            (we.status.code(), &we.stdout),
            "{name}: env"
        );
        // The bundle's doctor.json is that report too.
        let e = entries(&bundle);
        let inside: Value = serde_json::from_slice(&e["doctor.json"].2).unwrap();
        assert_eq!(inside, json(&want), "{name}: doctor.json");
    }
}

#[test]
fn a_bundle_holds_what_doctor_reads_and_nothing_else() {
    let d = tempfile::tempdir().unwrap();
    let tree = fixture("mi300x-x4-ubuntu2204");
    let bundle = d.path().join("b.tar.zst");
    let b = bundle.to_str().unwrap();
    ok(&rocmenv(
        &["collect", "--sysroot", tree.to_str().unwrap(), "-o", b],
        d.path(),
        &[],
    ));
    let e = entries(&bundle);
    // Read: a GPU's uevent (its class, ids and driver in one file), VRAM, KFD properties, the render link. Not read:
    // the separate id files uevent stands for, subsystem ids, KFD gpu_id.
    let gpu = "sys/bus/pci/devices/0000:26:00.0";
    for p in ["uevent", "mem_info_vram_total", "numa_node"] {
        assert!(e.contains_key(&format!("{gpu}/{p}")), "{gpu}/{p}");
    }
    for p in ["class", "vendor", "device", "subsystem_vendor"] {
        assert!(!e.contains_key(&format!("{gpu}/{p}")), "{gpu}/{p}");
    }
    assert!(!e.contains_key("sys/class/kfd/kfd/topology/nodes/4/gpu_id"));
    assert!(e.contains_key("sys/class/kfd/kfd/topology/nodes/4/properties"));
    // Links stay links with their targets.
    let (t, link, _) = &e["sys/class/drm/renderD128/device"];
    assert_eq!(*t, tar::EntryType::Symlink);
    assert!(link
        .as_ref()
        .unwrap()
        .starts_with("../../../bus/pci/devices/"));
    // The bound driver is in the uevent doctor read (the `driver` link is not read when uevent names it).
    let uevent = String::from_utf8(e[&format!("{gpu}/uevent")].2.clone()).unwrap();
    assert!(
        uevent.contains("DRIVER=amdgpu\nPCI_CLASS=120000\nPCI_ID=1002:74A1"),
        "{uevent}"
    );
    // Device nodes are empty files; their owners are in recorded.yaml. Without --deep no tool output is kept.
    assert!(e["dev/kfd"].2.is_empty());
    let rec = String::from_utf8(e[".rocmenv/recorded.yaml"].2.clone()).unwrap();
    assert!(rec.contains("/dev/kfd:"), "{rec}");
    assert!(rec.contains("name: alice"), "{rec}");
    assert!(!e.keys().any(|k| k.starts_with(".rocmenv/rocminfo")));
    assert!(!e.contains_key("REDACTED.txt"));
}

#[test]
fn redact_leaves_no_host_user_or_secret_in_the_bundle() {
    let d = tempfile::tempdir().unwrap();
    let host = rocmenv::engine::hostname();
    let user = "rocmenv-collect-tester";
    let secret = "s3cr3t-Value-0f-a-t0ken";
    let hexish = "0123456789abcdef0123456789abcdef01234567";
    let bundle = d.path().join("r.tar.zst");
    let b = bundle.to_str().unwrap();
    let o = rocmenv(
        &["collect", "--redact", "-o", b],
        d.path(),
        &[
            ("USER", user),
            ("HOME", &format!("/home/{user}")),
            ("MY_API_TOKEN", secret),
            ("BUILD_ID", hexish),
            (
                "HTTPS_PROXY",
                "http://bob:hunter2hunter2@proxy.example:3128",
            ),
            ("HOSTNAME", &host),
            ("ROCMENV_UNRELATED_NAME", "rocmenv-unrelated-value"),
            ("HIP_VISIBLE_DEVICES", "0"),
        ],
    );
    ok(&o);
    let bytes = archive_bytes(&bundle);
    // Issue 25: the whole environment was recorded (PWD, PATH, container names); only what doctor reads stays.
    let rec = String::from_utf8(entries(&bundle)[".rocmenv/recorded.yaml"].2.clone()).unwrap();
    for gone in [
        "ROCMENV_UNRELATED_NAME",
        "rocmenv-unrelated-value",
        "PWD:",
        "HOME:",
    ] {
        assert!(!rec.contains(gone), "{gone} is in recorded.yaml:\n{rec}");
    }
    assert!(
        rec.contains("HIP_VISIBLE_DEVICES: '0'") || rec.contains("HIP_VISIBLE_DEVICES: \"0\""),
        "{rec}"
    );
    assert!(rec.contains("PATH:"), "{rec}");
    assert!(
        !has_word(&bytes, &host),
        "the host name `{host}` is in the bundle"
    );
    assert!(!has_word(&bytes, user), "the user name is in the bundle");
    for s in [secret, hexish, "hunter2hunter2"] {
        assert!(
            !bytes.windows(s.len()).any(|w| w == s.as_bytes()),
            "{s} is in the bundle"
        );
    }
    // The user running the tests, unless it is root (kept: it names no person).
    let me = std::env::var("USER").unwrap_or_default();
    if !me.is_empty() && me != "root" {
        assert!(
            !has_word(&bytes, &me),
            "the current user `{me}` is in the bundle"
        );
    } else {
        eprintln!("the tests run as root: root is kept by design, so only the USER given to collect is checked");
    }
    let e = entries(&bundle);
    let note = String::from_utf8(e["REDACTED.txt"].2.clone()).unwrap();
    assert!(
        note.contains("MY_API_TOKEN") && note.contains("BUILD_ID") && note.contains("HTTPS_PROXY"),
        "{note}"
    );
    assert!(
        note.contains("host names: ") && !note.contains("host names: 0"),
        "{note}"
    );
    assert!(note.contains("environment variables left out: "), "{note}");
    // Still a bundle doctor reads (exit 0 or 1: the checks' verdict, not an error).
    let o = rocmenv(&["doctor", "--json", "--sysroot", b], d.path(), &[]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(json(&o)["host"]["user"]["name"], "user1");
}

#[test]
fn a_redacted_fixture_keeps_its_findings_under_placeholders() {
    let d = tempfile::tempdir().unwrap();
    let tree = fixture("user-not-in-render-group");
    let t = tree.to_str().unwrap();
    let bundle = d.path().join("r.tar.zst");
    let b = bundle.to_str().unwrap();
    ok(&rocmenv(
        &["collect", "--redact", "--sysroot", t, "-o", b],
        d.path(),
        &[],
    ));
    let bytes = archive_bytes(&bundle);
    assert!(!has_word(&bytes, "bob"), "bob is in the bundle");
    let want = json(&rocmenv(
        &["doctor", "--json", "--sysroot", t],
        d.path(),
        &[],
    ));
    let got = json(&rocmenv(
        &["doctor", "--json", "--sysroot", b],
        d.path(),
        &[],
    ));
    let (w, g) = (checks(&want), checks(&got));
    assert_eq!(w.keys().collect::<Vec<_>>(), g.keys().collect::<Vec<_>>());
    for (k, c) in &w {
        assert_eq!(g[k]["status"], c["status"], "{k:?}");
    }
    assert_eq!(got["host"]["user"]["name"], "user1");
    let kfd = &g[&("devices.kfd".to_string(), String::new())];
    assert_eq!(kfd["summary"], "user1 cannot open /dev/kfd");
}

/// A bundle with one hostile entry after a valid host tree: `make` writes the entry into the tar.
fn hostile(dir: &Path, name: &str, make: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> PathBuf {
    let mut tar = tar::Builder::new(Vec::new());
    tar.append_dir_all(".", fixture("no-gpu-debian12")).unwrap();
    make(&mut tar);
    let raw = tar.into_inner().unwrap();
    let path = dir.join(format!("{name}.tar.zst"));
    fs::write(&path, zstd::stream::encode_all(&raw[..], 3).unwrap()).unwrap();
    path
}

/// A header whose name is written as is (the tar crate refuses `..` and absolute names, as it should).
fn raw_header(name: &str, kind: tar::EntryType, size: u64) -> tar::Header {
    let mut h = tar::Header::new_old();
    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    h.set_entry_type(kind);
    h.set_mode(0o644);
    h.set_size(size);
    h.set_cksum();
    h
}

#[test]
fn hostile_bundles_are_refused_and_write_nothing_outside() {
    let d = tempfile::tempdir().unwrap();
    let work = d.path().join("work");
    let tmp = work.join("tmp");
    fs::create_dir_all(&tmp).unwrap();
    let cases: Vec<(&str, PathBuf, &str)> = vec![
        (
            "dotdot",
            hostile(d.path(), "dotdot", |t| {
                let h = raw_header("../x", tar::EntryType::Regular, 2);
                t.append(&h, &b"x\n"[..]).unwrap();
            }),
            "entry `../x` climbs out with `..`",
        ),
        (
            "absolute",
            hostile(d.path(), "absolute", |t| {
                let h = raw_header("/rocmenv-hostile-abs", tar::EntryType::Regular, 2);
                t.append(&h, &b"x\n"[..]).unwrap();
            }),
            "entry `/rocmenv-hostile-abs` is an absolute path",
        ),
        (
            "fifo",
            hostile(d.path(), "fifo", |t| {
                let h = raw_header("proc/fifo", tar::EntryType::Fifo, 0);
                t.append(&h, std::io::empty()).unwrap();
            }),
            "entry `proc/fifo` is a named pipe (FIFO)",
        ),
        (
            "device",
            hostile(d.path(), "device", |t| {
                let h = raw_header("dev/sda", tar::EntryType::Block, 0);
                t.append(&h, std::io::empty()).unwrap();
            }),
            "entry `dev/sda` is a device node",
        ),
        (
            "huge",
            hostile(d.path(), "huge", |t| {
                // The header claims 3 GiB; the size is refused before a byte is read.
                let h = raw_header("proc/cpuinfo2", tar::EntryType::Regular, 3 << 30);
                t.append(&h, &b"processor"[..]).unwrap();
            }),
            "entry `proc/cpuinfo2` is larger than 32 MiB",
        ),
        (
            "escaping-link",
            hostile(d.path(), "escaping-link", |t| {
                let mut h = tar::Header::new_gnu();
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                t.append_link(&mut h, "etc/shadow-link", "../../../../etc/shadow")
                    .unwrap();
            }),
            "leads out of the tree",
        ),
    ];
    for (name, bundle, want) in cases {
        let b = bundle.to_str().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args(["doctor", "--sysroot", b])
            .env("TMPDIR", &tmp)
            .current_dir(&work)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        assert!(
            err.starts_with(&format!("rocmenv: sysroot {b}: ")),
            "{name}: {err}"
        );
        assert!(err.contains(want), "{name}: {err}");
        assert!(o.stdout.is_empty(), "{name}");
        // Nothing left in TMPDIR, nothing written next to it or in the working directory.
        assert_eq!(
            fs::read_dir(&tmp).unwrap().count(),
            0,
            "{name}: TMPDIR not cleaned"
        );
        let mut names: Vec<_> = fs::read_dir(&work)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["tmp"],
            "{name}: wrote outside its temporary directory"
        );
        assert!(!Path::new("/rocmenv-hostile-abs").exists(), "{name}");
    }
    // Not a bundle at all: one line, exit 2.
    let junk = d.path().join("junk.tar.zst");
    fs::write(&junk, b"not zstd").unwrap();
    let o = rocmenv(&["doctor", "--sysroot", junk.to_str().unwrap()], &tmp, &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a directory, nor a bundle"));
    assert_eq!(fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn an_existing_output_needs_force() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("b.tar.zst");
    fs::write(&out, b"keep me").unwrap();
    let o = out.to_str().unwrap();
    let tree = fixture("no-gpu-debian12");
    let t = tree.to_str().unwrap();
    let r = rocmenv(&["collect", "--sysroot", t, "-o", o], d.path(), &[]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("exists: give --force"), "{err}");
    assert_eq!(fs::read(&out).unwrap(), b"keep me");
    ok(&rocmenv(
        &["collect", "--sysroot", t, "-o", o, "--force"],
        d.path(),
        &[],
    ));
    assert!(entries(&out).contains_key("doctor.json"));
    // Only the bundle is left: the temporary file it was written to was renamed over it.
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
}

#[test]
fn the_default_name_carries_host_and_date() {
    let d = tempfile::tempdir().unwrap();
    let tree = fixture("no-gpu-debian12");
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["collect", "--sysroot", tree.to_str().unwrap()])
        .current_dir(d.path())
        .output()
        .unwrap();
    ok(&o);
    let names: Vec<String> = fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let n = &names[0];
    assert!(n.starts_with("rocmenv-collect-no-gpu-debian12-20"), "{n}");
    assert!(n.ends_with(".tar.zst"), "{n}");
}

/// Copies a tree, links as links.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let t = entry.file_type().unwrap();
        if t.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if t.is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).unwrap();
        }
    }
}

/// Rearranges a fixture's sysfs the way the kernel lays it out: the PCI devices live under `sys/devices/pci0000:00/`
/// with `sys/bus/pci/devices/<BDF>` linking there, each DRM node is a directory under its device reached through a
/// `sys/class/drm/<name>` link (and links back with `device -> ../../../<BDF>`), and KFD lives under
/// `sys/devices/virtual/kfd/kfd`.
fn as_real_sysfs(tree: &Path) {
    use std::os::unix::fs::symlink;
    let sys = tree.join("sys");
    let pci = sys.join("devices/pci0000:00");
    fs::create_dir_all(&pci).unwrap();
    for e in fs::read_dir(sys.join("bus/pci/devices")).unwrap() {
        let e = e.unwrap();
        let bdf = e.file_name().into_string().unwrap();
        // Same depth, so the `driver` link inside (`../../../../bus/pci/drivers/<drv>`) still resolves.
        fs::rename(e.path(), pci.join(&bdf)).unwrap();
        symlink(format!("../../../devices/pci0000:00/{bdf}"), e.path()).unwrap();
    }
    for e in fs::read_dir(sys.join("class/drm")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let old = fs::read_link(e.path().join("device")).unwrap();
        let bdf = old.file_name().unwrap().to_str().unwrap().to_string();
        let node = pci.join(&bdf).join("drm").join(&name);
        fs::create_dir_all(&node).unwrap();
        symlink(format!("../../../{bdf}"), node.join("device")).unwrap();
        fs::remove_dir_all(e.path()).unwrap();
        symlink(
            format!("../../devices/pci0000:00/{bdf}/drm/{name}"),
            e.path(),
        )
        .unwrap();
    }
    let kfd = sys.join("devices/virtual/kfd");
    fs::create_dir_all(&kfd).unwrap();
    fs::rename(sys.join("class/kfd/kfd"), kfd.join("kfd")).unwrap();
    symlink("../../devices/virtual/kfd/kfd", sys.join("class/kfd/kfd")).unwrap();
}

#[test]
fn sysfs_laid_out_by_the_kernel_round_trips_through_its_links() {
    let d = tempfile::tempdir().unwrap();
    let tree = d.path().join("tree");
    copy_tree(&fixture("mi300x-x4-ubuntu2204"), &tree);
    as_real_sysfs(&tree);
    let t = tree.to_str().unwrap();
    let want = json(&rocmenv(
        &[
            "doctor",
            "--deep",
            "--json",
            "--sysroot",
            fixture("mi300x-x4-ubuntu2204").to_str().unwrap(),
        ],
        d.path(),
        &[],
    ));
    // The rearranged tree is the same host.
    assert_eq!(
        json(&rocmenv(
            &["doctor", "--deep", "--json", "--sysroot", t],
            d.path(),
            &[]
        )),
        want
    );
    let bundle = d.path().join("b.tar.zst");
    let b = bundle.to_str().unwrap();
    ok(&rocmenv(
        &["collect", "--deep", "--sysroot", t, "-o", b],
        d.path(),
        &[],
    ));
    assert_eq!(
        json(&rocmenv(
            &["doctor", "--deep", "--json", "--sysroot", b],
            d.path(),
            &[]
        )),
        want
    );
    let e = entries(&bundle);
    let link = |p: &str| match &e[p] {
        (tar::EntryType::Symlink, Some(t), _) => t.clone(),
        other => panic!("{p} is not a link: {other:?}"),
    };
    assert_eq!(
        link("sys/class/drm/renderD128"),
        "../../devices/pci0000:00/0000:26:00.0/drm/renderD128"
    );
    assert_eq!(
        link("sys/devices/pci0000:00/0000:26:00.0/drm/renderD128/device"),
        "../../../0000:26:00.0"
    );
    assert_eq!(
        link("sys/bus/pci/devices/0000:26:00.0"),
        "../../../devices/pci0000:00/0000:26:00.0"
    );
    assert_eq!(link("sys/class/kfd/kfd"), "../../devices/virtual/kfd/kfd");
    assert!(e.contains_key("sys/devices/virtual/kfd/kfd/topology/nodes/4/properties"));
    assert!(e.contains_key("sys/devices/pci0000:00/0000:26:00.0/mem_info_vram_total"));
}
