//! Issue 36: an output flag never destroys a file that is not a regular file. As root, `rocmenv smoke --json
//! /dev/null` used to rename a regular file over /dev/null. Each flag here is pointed at a copy of /dev/null (a
//! character device made with mknod in a temp dir) and the node must still be a character device afterwards; a
//! directory is refused with one line and exit 2; `/dev/stdout` prints the document, also when stdout is a file.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod engine;

use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn rocmenv_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .current_dir(dir)
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("NO_COLOR", "1")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .expect("runs")
}

fn show(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn fixture(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
        .to_str()
        .unwrap()
        .to_string()
}

/// A temp dir holding `names` as copies of /dev/null (character device 1:3), or `None` after printing SKIP when
/// mknod is refused (not root, or a container without CAP_MKNOD).
fn nodes(test: &str, names: &[&str]) -> Option<(tempfile::TempDir, Vec<String>)> {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for n in names {
        let p = dir.path().join(n);
        let made = rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::CharacterDevice,
            rustix::fs::Mode::from_raw_mode(0o666),
            rustix::fs::makedev(1, 3),
        );
        if let Err(e) = made {
            eprintln!(
                "SKIP {test}: mknod {} refused: {e} (run as root)",
                p.display()
            );
            return None;
        }
        paths.push(p.to_str().unwrap().to_string());
    }
    Some((dir, paths))
}

/// Every one of `paths` is still a character device, after `what`.
fn still_devices(what: &str, paths: &[String]) {
    for p in paths {
        let t = std::fs::symlink_metadata(p).unwrap().file_type();
        assert!(
            t.is_char_device(),
            "{what}: {p} is no longer a character device: {t:?}"
        );
    }
}

/// A stand-in for python that writes `doc` as the suite's result (`$5`) and touches `ran` beside itself.
fn fake_python(dir: &Path, doc: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join("python");
    let ran = dir.join("ran");
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\n# $1 run.py, $3 plan, $5 result\ntouch '{}'\necho '{doc}' > \"$5\"\n",
            ran.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.to_str().unwrap().to_string()
}

const SMOKE: &str = r#"{"schema_version": 2, "kind": "smoke", "level": "quick", "device": {"kind": "cpu", "name": "x", "count": 1, "devices": []}, "tests": [{"name": "environment", "status": "pass", "reason": null, "fix": null, "device": null, "metrics": [], "params": {}, "duration_s": 0.1}]}"#;

const BENCH: &str = r#"{"schema_version": 2, "kind": "bench", "level": "quick", "device": {"kind": "cpu", "name": "x", "count": 1, "devices": []}, "tests": [{"name": "gemm", "status": "pass", "reason": null, "fix": null, "device": null, "metrics": [{"name": "throughput", "value": 3.5, "unit": "TFLOP/s"}], "params": {}, "duration_s": 0.1}]}"#;

#[test]
fn smoke_and_bench_write_through_devices() {
    let Some((dir, n)) = nodes(
        "smoke_and_bench",
        &["j", "x", "h", "bj", "bx", "bh", "base"],
    ) else {
        return;
    };
    let py = fake_python(dir.path(), SMOKE);
    let smoke = [
        "smoke", "--host", "--vendor", "cpu", "--python", &py, "--json", &n[0], "--junit", &n[1],
        "--html", &n[2],
    ];
    let o = rocmenv_in(dir.path(), &smoke);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    still_devices("smoke --json/--junit/--html", &n[..3]);
    let py = fake_python(dir.path(), BENCH);
    let bench = [
        "bench",
        "--host",
        "--vendor",
        "cpu",
        "--python",
        &py,
        "--model",
        "gemm",
        "--json",
        &n[3],
        "--junit",
        &n[4],
        "--html",
        &n[5],
        "--save-baseline",
        &n[6],
    ];
    let o = rocmenv_in(dir.path(), &bench);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("saved 1 figure(s) to"),
        "{}",
        show(&o)
    );
    still_devices("bench --json/--junit/--html/--save-baseline", &n[3..]);
}

#[test]
fn report_slurm_init_and_collect_write_through_devices() {
    let Some((dir, n)) = nodes(
        "report_slurm_init_collect",
        &["m", "mh", "h", "s", "i", "c"],
    ) else {
        return;
    };
    let report = fixture("reports/smoke-cpu-quick.json");
    let host = fixture("hosts/no-gpu-debian12");
    let runs: [(&str, Vec<&str>, &[String]); 5] = [
        (
            "report merge -o/--html",
            vec!["report", "merge", &report, "-o", &n[0], "--html", &n[1]],
            &n[0..2],
        ),
        (
            "report html -o",
            vec!["report", "html", &report, "-o", &n[2]],
            &n[2..3],
        ),
        (
            "slurm -o",
            vec![
                "slurm",
                "--runtime",
                "none",
                "--results",
                "/tmp/r",
                "-o",
                &n[3],
            ],
            &n[3..4],
        ),
        (
            "init -o",
            vec!["init", "--sysroot", &host, "--stack", "cpu", "-o", &n[4]],
            &n[4..5],
        ),
        (
            "collect -o",
            vec!["collect", "--sysroot", &host, "-o", &n[5]],
            &n[5..6],
        ),
    ];
    for (what, args, written) in runs {
        let o = rocmenv_in(dir.path(), &args);
        assert_eq!(o.status.code(), Some(0), "{what}: {}", show(&o));
        still_devices(what, written);
    }
}

/// Written to a regular file, a support bundle stays private (0600: it is about a host) and a report is shared
/// (0644), as before the write went through one helper.
#[test]
fn a_bundle_is_private_and_a_report_is_shared() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let host = fixture("hosts/no-gpu-debian12");
    let report = fixture("reports/smoke-cpu-quick.json");
    let o = rocmenv_in(
        dir.path(),
        &["collect", "--sysroot", &host, "-o", "b.tar.zst"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let o = rocmenv_in(dir.path(), &["report", "html", &report, "-o", "r.html"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let mode = |f: &str| {
        std::fs::metadata(dir.path().join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!((mode("b.tar.zst"), mode("r.html")), (0o600, 0o644));
}

/// A build context holds regular files: a device as `-o DIR`, or as the Dockerfile in it, is refused even with
/// --force, and stays.
#[test]
fn dockerfile_refuses_a_device_for_its_directory_or_a_file_in_it() {
    let Some((dir, n)) = nodes("dockerfile", &["ctx"]) else {
        return;
    };
    let o = rocmenv_in(dir.path(), &["dockerfile", "--stack", "cpu", "-o", &n[0]]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        err.lines().count() == 1 && err.contains("ctx is not a directory"),
        "{err}"
    );
    std::fs::create_dir(dir.path().join("c")).unwrap();
    let df = dir.path().join("c/Dockerfile");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &df,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(1, 3),
    )
    .unwrap();
    let o = rocmenv_in(
        dir.path(),
        &["dockerfile", "--stack", "cpu", "-o", "c", "--force"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", show(&o));
    assert!(
        err.lines().count() == 1 && err.contains("c/Dockerfile is not a regular file"),
        "{err}"
    );
    let df = df.to_str().unwrap().to_string();
    still_devices("dockerfile -o", &[n[0].clone(), df]);
    assert_eq!(std::fs::read_dir(dir.path().join("c")).unwrap().count(), 1);
}

/// A directory given as an output file is refused with one line and exit 2, before any work (the suite never ran),
/// and nothing is written into it.
#[test]
fn a_directory_is_refused_before_the_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let out = out.to_str().unwrap();
    let py = fake_python(dir.path(), SMOKE);
    let report = fixture("reports/smoke-cpu-quick.json");
    let runs: [Vec<&str>; 3] = [
        vec![
            "smoke", "--host", "--vendor", "cpu", "--python", &py, "--json", out,
        ],
        vec!["report", "html", &report, "-o", out],
        vec!["report", "merge", &report, "-o", out],
    ];
    for args in runs {
        let o = rocmenv_in(dir.path(), &args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", show(&o));
        assert_eq!(
            err.trim_end(),
            format!("rocmenv: output file: {out} is a directory; name a file to write (in it or elsewhere), or a device such as /dev/stdout"),
            "{args:?}"
        );
    }
    assert!(
        !dir.path().join("ran").exists(),
        "smoke ran its suite before refusing --json"
    );
    assert_eq!(std::fs::read_dir(out).unwrap().count(), 0);
}

/// `--json /dev/stdout` prints the document; with stdout appended to a file, it lands after what was there. The
/// path is a link to /proc/self/fd/1 made in a temp dir, as /dev/stdout is: a regression then replaces that link,
/// not this machine's /dev/stdout (as root, a rename over /dev/stdout succeeds).
#[test]
fn json_to_dev_stdout_prints_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &stdout).unwrap();
    let stdout = stdout.to_str().unwrap();
    let py = fake_python(dir.path(), SMOKE);
    let o = rocmenv_in(
        dir.path(),
        &[
            "smoke", "--host", "--vendor", "cpu", "--python", &py, "--json", stdout,
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let start = out.find("{\n").unwrap_or_else(|| panic!("no JSON: {out}"));
    let doc = serde_json::Deserializer::from_str(&out[start..])
        .into_iter::<serde_json::Value>()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(
        (doc["kind"].as_str(), doc["tests"][0]["name"].as_str()),
        (Some("smoke"), Some("environment")),
        "{out}"
    );
    // Stdout is a file opened for appending: written through the same open file, never renamed over.
    let file = dir.path().join("merged.txt");
    std::fs::write(&file, "before\n").unwrap();
    let append = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    let report = fixture("reports/smoke-cpu-quick.json");
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["report", "merge", &report, "--format", "json", "-o", stdout])
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .stdout(Stdio::from(append))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let text = std::fs::read_to_string(&file).unwrap();
    let rest = text
        .strip_prefix("before\n")
        .unwrap_or_else(|| panic!("{text}"));
    let doc: serde_json::Value = serde_json::from_str(rest).unwrap();
    assert!(doc["checks"].is_array(), "{rest}");
    assert!(
        std::fs::symlink_metadata(stdout).unwrap().is_symlink(),
        "the link to stdout was replaced"
    );
}

/// validate's four reports, on a stack whose build fails at once (an empty base image: no shell to RUN).
#[test]
fn validate_writes_its_reports_through_devices() {
    let Some(d) = engine::daemon("validate reports to devices") else {
        return;
    };
    let Some((dir, n)) = nodes("validate reports", &["j", "x", "h", "m"]) else {
        return;
    };
    let empty = dir.path().join("empty.tar");
    tar::Builder::new(std::fs::File::create(&empty).unwrap())
        .into_inner()
        .unwrap();
    let o = Command::new("docker")
        .args(["import", empty.to_str().unwrap(), "rocmenv-test/empty:1"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", show(&o));
    let host = fixture("hosts/no-gpu-debian12");
    let o = rocmenv_in(dir.path(), &["init", "--sysroot", &host, "--stack", "cpu"]);
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    let args = [
        "validate",
        "--base",
        "rocmenv-test/empty:1",
        "--json",
        &n[0],
        "--junit",
        &n[1],
        "--html",
        &n[2],
        "--markdown",
        &n[3],
    ];
    let o = rocmenv_in(dir.path(), &args);
    assert_eq!(o.status.code(), Some(1), "{}", show(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("wrote JSON to") && out.contains("wrote Markdown to"),
        "{}",
        show(&o)
    );
    still_devices("validate --json/--junit/--html/--markdown", &n);
    engine::assert_no_leftovers(&d.engine);
}

/// `run --result-to` a device: the file copied out of the container is written through it.
#[test]
fn run_result_to_writes_through_a_device() {
    let Some(_d) = engine::daemon("run --result-to a device") else {
        return;
    };
    let Some((dir, n)) = nodes("run --result-to", &["r"]) else {
        return;
    };
    let o = rocmenv_in(
        dir.path(),
        &[
            "run",
            "--vendor",
            "cpu",
            "--image",
            engine::BASE,
            "--result",
            "/etc/hostname",
            "--result-to",
            &n[0],
            "--",
            "true",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", show(&o));
    still_devices("run --result-to", &n);
}
