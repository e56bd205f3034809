//! The binary as people and CI run it: exit codes, one-line errors, JSON on stdout, completions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        // The marks these tests look for are the UTF-8 ones; tests/cli.rs checks the ASCII ones on its own.
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs")
}

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hosts")
        .join(name)
        .display()
        .to_string()
}

/// The finding with this id in a doctor JSON document; panics naming the id when there is none.
fn check<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no {id} finding"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// One line on stderr, starting with `rocmenv:`, and nothing on stdout.
fn assert_one_line_error(o: &Output, code: i32, needle: &str) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "more than one line: {e}");
    assert!(e.starts_with("rocmenv: "), "{e}");
    assert!(e.contains(needle), "`{needle}` not in: {e}");
    assert!(o.stdout.is_empty());
}

#[test]
fn version_and_help() {
    let o = rocmenv(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("rocmenv {}", env!("CARGO_PKG_VERSION"))
    );
    let h = rocmenv(&["doctor", "--help"]);
    let text = String::from_utf8_lossy(&h.stdout);
    for flag in [
        "--sysroot",
        "--target",
        "--json",
        "--strict",
        "--deep",
        "--matrices",
        "Exit codes",
    ] {
        assert!(text.contains(flag), "help lacks {flag}");
    }
}

/// Issue 23: `rocmenv --help` lists each command in one line (clap's `about`, as cargo and ripgrep do); the paragraph
/// and the exit codes are in `rocmenv help CMD` / `CMD --help` (`long_about`).
#[test]
fn help_lists_each_command_in_one_line() {
    let h = rocmenv(&["--help"]);
    assert_eq!(h.status.code(), Some(0));
    let text = String::from_utf8_lossy(&h.stdout).into_owned();
    insta::assert_snapshot!("help", text);
    let commands = text
        .split("Commands:\n")
        .nth(1)
        .and_then(|t| t.split("\n\n").next())
        .expect("a Commands section");
    assert!(commands.lines().count() >= 17, "{commands}");
    assert!(
        commands
            .lines()
            .all(|l| l.starts_with("  ") && !l.starts_with("   ")),
        "{commands}"
    );
    for args in [&["help", "validate"][..], &["validate", "--help"]] {
        let long = String::from_utf8_lossy(&rocmenv(args).stdout).into_owned();
        assert!(long.starts_with("The CI gate: check, build and test each stack of rocmenv.yaml.\n\nThe CI gate: for each stack"), "{long}");
        assert!(long.contains("Exit codes: 0 every case passed"), "{long}");
    }
}

#[test]
fn completions_for_each_shell() {
    for shell in ["bash", "zsh", "fish"] {
        let o = rocmenv(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(
            text.contains("doctor") && text.contains("sysroot"),
            "{shell} completion lacks the doctor command"
        );
    }
    assert_eq!(rocmenv(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn unknown_flag_is_usage_error() {
    assert_eq!(rocmenv(&["doctor", "--frobnicate"]).status.code(), Some(2));
}

#[test]
fn missing_sysroot_is_exit_2_naming_it() {
    let o = rocmenv(&["doctor", "--sysroot", "/nonexistent/host-tree"]);
    assert_one_line_error(&o, 2, "/nonexistent/host-tree");
    let file = tempfile::NamedTempFile::new().unwrap();
    let o = rocmenv(&["doctor", "--sysroot", file.path().to_str().unwrap()]);
    assert_one_line_error(&o, 2, "is not a directory");
}

/// Issue 10: `doctor --sysroot` on an empty directory or on /proc exited 0. It is exit 2, one line naming what a host
/// tree lacks; the same holds for every command that reads a tree.
#[test]
fn a_sysroot_that_is_not_a_host_is_exit_2_naming_what_it_lacks() {
    let empty = tempfile::tempdir().unwrap();
    let e = empty.path().to_str().unwrap();
    for args in [
        &["doctor", "--sysroot", e][..],
        &["doctor", "--sysroot", "/proc"][..],
        &["env", "--sysroot", e][..],
    ] {
        let o = rocmenv(args);
        assert_one_line_error(
            &o,
            2,
            "is not a host tree: it has no /proc/version or /proc/sys/kernel/osrelease",
        );
        assert!(stderr(&o).contains("/sys/bus/pci"), "{}", stderr(&o));
    }
}

#[test]
fn unknown_target_lists_the_nearest_releases() {
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &fixture("no-gpu-debian12"),
        "--target",
        "rocm-6.9",
    ]);
    // Issue 25: the five 6.4.x patches crowded out 7.x, which is as near; one per series, from both sides.
    assert_one_line_error(&o, 2, "6.4.4, 7.0.");
    assert!(!stderr(&o).contains("6.4.3"), "{}", stderr(&o));
    let o = rocmenv(&["doctor", "--target", "rocm-6.2;reboot"]);
    assert_eq!(o.status.code(), Some(2));
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &fixture("no-gpu-debian12"),
        "--target",
        "ngc-19.01",
    ]);
    assert_one_line_error(&o, 2, "NGC 19.01 is not in the matrices");
}

/// Issue 22: a TheRock preview and a 10.x release that does not exist are one line each naming what exists.
#[test]
fn previews_and_unknown_core_sdk_releases_are_refused_naming_what_exists() {
    for (target, needle) in [
        (
            "rocm-7.13",
            "ROCm 7.13 is left out of the matrices (TheRock technology previews, not for production use)",
        ),
        ("rocm-10.9", "newest 10.x: 10.1.0"),
    ] {
        let o = rocmenv(&["doctor", "--sysroot", &fixture("no-gpu-debian12"), "--target", target]);
        assert_one_line_error(&o, 2, needle);
    }
}

fn copy_matrices(dir: &Path) {
    for f in ["rocm.yaml", "cuda.yaml", "ngc.yaml", "gpus.yaml"] {
        std::fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("matrices")
                .join(f),
            dir.join(f),
        )
        .unwrap();
    }
}

#[test]
fn malformed_matrices_dir_is_exit_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    copy_matrices(dir.path());
    let path = dir.path().join("ngc.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    // Line 3 of the file becomes an unknown key.
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(2, "bogus_key: 1");
    std::fs::write(&path, lines.join("\n")).unwrap();
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &fixture("no-gpu-debian12"),
        "--matrices",
        dir.path().to_str().unwrap(),
    ]);
    assert_one_line_error(&o, 2, &format!("{}:3:", path.display()));
    // The same through the environment variable.
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["doctor", "--sysroot", &fixture("no-gpu-debian12")])
        .env("ROCMENV_MATRICES", dir.path())
        .output()
        .unwrap();
    assert_one_line_error(&o, 2, "ngc.yaml:3:");
}

#[test]
fn an_edited_matrices_dir_is_used() {
    // Issue 14: an edit changes the verdict. ROCm 6.2.4 lacks gfx1031, so the RX 6700 XT fails without its override;
    // a copy that lists gfx1031 for 6.2.4 makes the same host pass.
    let args = |m: &str| {
        let o = rocmenv(&[
            "doctor",
            "--json",
            "--sysroot",
            &fixture("rx6700xt-ubuntu2204"),
            "--target",
            "rocm-6.2.4",
            "--matrices",
            m,
        ]);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    copy_matrices(dir.path());
    let path = dir.path().to_str().unwrap();
    let before = args(path);
    assert_eq!(before["matrices"], path);
    assert_eq!(check(&before, "gpu.gfx-supported")["status"], "fail");
    let rocm = dir.path().join("rocm.yaml");
    let text = std::fs::read_to_string(&rocm).unwrap();
    let at = text.find("\n  - version: \"6.2.4\"").unwrap();
    let gfx = at + text[at..].find("    gfx:\n").unwrap() + "    gfx:\n".len();
    let edited = format!(
        "{}      - {{target: gfx1031, status: supported}}\n{}",
        &text[..gfx],
        &text[gfx..]
    );
    std::fs::write(&rocm, edited).unwrap();
    let after = args(path);
    let f = check(&after, "gpu.gfx-supported");
    assert_eq!(f["status"], "pass", "{f}");
    assert!(
        f["summary"]
            .as_str()
            .unwrap()
            .contains("gfx1031 is supported by ROCm 6.2.4"),
        "{f}"
    );
}

#[test]
fn json_on_a_fixture_matches_the_design_contract() {
    let o = rocmenv(&[
        "doctor",
        "--json",
        "--sysroot",
        &fixture("rx6700xt-ubuntu2204"),
        "--target",
        "rocm-6.2",
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "gfx1031 without its override fails"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["host"]["kernel"]["release"], "5.15.0-127-generic");
    assert_eq!(v["host"]["kernel"]["version"], "5.15.0");
    assert_eq!(v["host"]["os"]["id"], "ubuntu");
    assert_eq!(v["host"]["gpus"][0]["gfx"], "gfx1031");
    assert_eq!(v["host"]["gpus"][0]["device_id"], "0x73df");
    assert_eq!(v["host"]["gpus"][0]["render_node"], "/dev/dri/renderD128");
    assert_eq!(v["host"]["amdgpu_driver"]["loaded"], true);
    assert_eq!(v["host"]["rocm"]["path"], "/opt/rocm-6.2.0");
    assert!(v["host"]["nvidia_driver"].is_null());
    let checks = v["checks"].as_array().unwrap();
    let n = |s: &str| checks.iter().filter(|c| c["status"] == s).count();
    assert_eq!(v["summary"]["fail"], n("fail"));
    assert_eq!(v["summary"]["pass"], n("pass"));
    assert_eq!(v["summary"]["warn"], n("warn"));
    assert_eq!(v["summary"]["skip"], n("skip"));
    for c in checks {
        for key in ["id", "status", "summary", "detail", "fix"] {
            assert!(c.get(key).is_some(), "check lacks {key}: {c}");
        }
    }
}

#[test]
fn nvidia_gpus_carry_compute_capability_not_gfx() {
    let o = rocmenv(&[
        "doctor",
        "--json",
        "--sysroot",
        &fixture("h100-x8-ubuntu2204"),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let g = &v["host"]["gpus"][0];
    assert_eq!(g["compute_capability"], "9.0");
    assert!(g.get("gfx").is_none());
}

#[test]
fn strict_turns_warnings_into_exit_1() {
    // The mi210 host's one warning: a link trained at x8 of x16.
    let args = [
        "doctor",
        "--sysroot",
        &fixture("mi210-x4-ubuntu2204"),
        "--target",
        "rocm-6.2",
    ];
    let o = rocmenv(&args);
    assert_eq!(o.status.code(), Some(0));
    // Issue 10: "1 warning", not "1 warnings".
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .trim_end()
            .ends_with("1 warning, 0 failed, 21 skipped"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let mut strict = args.to_vec();
    strict.push("--strict");
    let o = rocmenv(&strict);
    assert_eq!(o.status.code(), Some(1));
    // Issue 10: --strict says which warnings made it fail.
    assert_eq!(
        stderr(&o).trim_end(),
        "rocmenv: --strict: exit 1 for 1 warning: pcie.link (0000:c3:00.0)"
    );
}

#[test]
fn human_report_has_marks_and_no_colour_off_a_terminal() {
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &fixture("user-not-in-render-group"),
        "--target",
        "rocm-6.2",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("✗ bob cannot open /dev/kfd"), "{text}");
    assert!(text.contains("fix: sudo usermod -aG render,video $USER"));
    assert!(!text.contains('\x1b'));
}

#[test]
fn deep_reads_recorded_tool_output_under_sysroot() {
    let o = rocmenv(&[
        "doctor",
        "--json",
        "--deep",
        "--sysroot",
        &fixture("user-not-in-render-group"),
        "--target",
        "rocm-6.2",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = check(&v, "tools.rocminfo");
    assert_eq!(c["status"], "fail");
    assert!(
        c["summary"].as_str().unwrap().contains("permission denied"),
        "{c}"
    );
    let o = rocmenv(&[
        "doctor",
        "--json",
        "--deep",
        "--sysroot",
        &fixture("amdgpu-not-loaded"),
        "--target",
        "rocm-6.2",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = check(&v, "tools.rocminfo");
    assert!(c["summary"].as_str().unwrap().contains("NOT loaded"), "{c}");
    let o = rocmenv(&[
        "doctor",
        "--json",
        "--deep",
        "--sysroot",
        &fixture("h100-x8-ubuntu2204"),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = check(&v, "tools.nvidia-smi");
    assert_eq!(c["status"], "pass", "{c}");
    // sysfs has no NVIDIA VRAM size; nvidia-smi's Memory-Usage column (81559MiB per H100) fills it in, by bus id.
    let gpus = v["host"]["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 8);
    for g in gpus {
        assert_eq!(g["vram_bytes"], 81559u64 << 20, "{g}");
    }
    let o = rocmenv(&[
        "doctor",
        "--json",
        "--sysroot",
        &fixture("h100-x8-ubuntu2204"),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["host"]["gpus"][0]["vram_bytes"].is_null(),
        "without --deep nothing tells"
    );
}

/// The acceptance: on this machine (no GPU in CI) doctor prints an honest report and exits 1.
#[test]
fn live_doctor_exit_code_matches_its_findings() {
    let o = rocmenv(&["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["host"]["mode"], "live");
    let fails = v["summary"]["fail"].as_u64().unwrap();
    assert_eq!(o.status.code(), Some(if fails > 0 { 1 } else { 0 }));
    let present = check(&v, "gpu.present");
    let gpus = v["host"]["gpus"].as_array().unwrap().len();
    if gpus == 0 && v["host"]["wsl"] == false {
        assert_eq!(present["status"], "fail");
        assert_eq!(o.status.code(), Some(1));
    }
    let daemon = check(&v, "docker.daemon");
    assert_ne!(daemon["status"], "skip", "live mode asks the daemon");
}

#[test]
fn closed_stdout_is_not_an_error() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["doctor", "--sysroot", &fixture("h100-x8-ubuntu2204")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    // Issue 14: a closed pipe is the reader's choice: the verdict's exit code, and nothing on stderr.
    let read = rocmenv(&["doctor", "--sysroot", &fixture("h100-x8-ubuntu2204")]);
    assert_eq!(out.status.code(), read.status.code());
    assert!(matches!(out.status.code(), Some(0 | 1)), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// True when the loader can open Debian's (or ROCm's) HIP runtime.
fn hip_loadable() -> bool {
    // SAFETY: loading the HIP runtime only runs its initialisers.
    [
        "libamdhip64.so",
        "libamdhip64.so.7",
        "libamdhip64.so.6",
        "libamdhip64.so.5",
    ]
    .iter()
    .any(|n| unsafe { libloading::Library::new(*n) }.is_ok())
}

/// `rocmenv probe` on this machine, which has no GPU and no libcuda: with HIP installed (CI installs Debian's
/// libamdhip64; `ROCMENV_REQUIRE_HIP=1` makes its absence a failure) HIP answers hipErrorNoDevice and probe exits 1;
/// without any runtime library it exits 3. Hosts with a GPU or libcuda skip, saying so.
#[test]
fn probe_reports_this_machine_with_fixed_exit_codes() {
    let gpu = std::path::Path::new("/dev/kfd").exists()
        || std::path::Path::new("/dev/nvidiactl").exists();
    let libcuda = unsafe { libloading::Library::new("libcuda.so.1") }.is_ok();
    if gpu || libcuda {
        eprintln!("SKIP probe on this machine: it has a GPU or libcuda, so the answers are not the fixed ones");
        return;
    }
    let hip = hip_loadable();
    assert!(
        hip || std::env::var("ROCMENV_REQUIRE_HIP").as_deref() != Ok("1"),
        "ROCMENV_REQUIRE_HIP=1 but libamdhip64 cannot be loaded (apt-get install libamdhip64-dev)"
    );
    let o = rocmenv(&["probe", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["cuda"]["status"], "library_missing", "{v}");
    if !hip {
        assert_eq!(v["hip"]["status"], "library_missing", "{v}");
        assert_eq!(o.status.code(), Some(3), "no runtime library at all");
        return;
    }
    assert_eq!(v["hip"]["status"], "no_device", "{v}");
    assert_eq!(v["hip"]["error"]["name"], "hipErrorNoDevice");
    assert_eq!(o.status.code(), Some(1), "a runtime that sees no device");
    // doctor turns the same answer into its runtime.hip finding.
    let d = rocmenv(&["doctor", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    let c = check(&d, "runtime.hip");
    assert!(
        c["summary"].as_str().unwrap().contains("hipErrorNoDevice"),
        "{c}"
    );
}

/// The daemon unreachable (a socket that does not exist, a closed tcp port): one line naming the endpoint;
/// exit 3 for build and gc, 125 for run (like `docker run`).
#[test]
fn unreachable_daemon_is_one_line_naming_the_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Dockerfile"), "FROM scratch\n").unwrap();
    let ctx = dir.path().to_str().unwrap();
    for host in ["unix:///nonexistent/docker.sock", "tcp://127.0.0.1:1"] {
        let run = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_rocmenv"))
                .args(args)
                .env("DOCKER_HOST", host)
                .output()
                .expect("runs")
        };
        for (args, code) in [
            (&["build", "--context", ctx][..], 3),
            (&["gc"][..], 3),
            (
                &["run", "--vendor", "cpu", "--image", "x", "--", "true"][..],
                125,
            ),
        ] {
            let o = run(args);
            assert_one_line_error(&o, code, &format!("no container engine answers at {host}"));
            assert!(stderr(&o).contains("start dockerd"), "{}", stderr(&o));
        }
    }
}

/// Issue 10: `run -v ./x:/x` and `-v '~/x:/x'` created `./x` and a literal `./~` on the host. A relative host path
/// is a usage error (125, like `docker run`) naming the value, before any daemon is asked, and nothing is created.
#[test]
fn a_relative_volume_path_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["./x:/x", "~/x:/x", "sub/dir:/x"] {
        let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args([
                "run",
                "--vendor",
                "cpu",
                "--image",
                "debian:12",
                "-v",
                v,
                "--",
                "true",
            ])
            .current_dir(dir.path())
            // No daemon answers here: the error must come from the flag check, not from the engine.
            .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
            .output()
            .expect("runs");
        assert_one_line_error(&o, 125, &format!("--volume: `{v}`"));
        assert!(stderr(&o).contains("not absolute"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Issue 10: colour follows the CLI conventions — forced by CLICOLOR_FORCE, never with NO_COLOR or on a pipe,
/// and TERM=dumb does not get colour unless forced.
#[test]
fn colour_follows_no_color_clicolor_force_and_term() {
    let run = |env: &[(&str, &str)]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
        c.args(["doctor", "--sysroot", &fixture("rx6700xt-ubuntu2204")])
            .env_remove("ROCMENV_MATRICES")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CLICOLOR");
        for (k, v) in env {
            c.env(k, v);
        }
        String::from_utf8_lossy(&c.output().expect("runs").stdout).into_owned()
    };
    assert!(!run(&[]).contains('\u{1b}'), "a pipe gets no colour");
    assert!(!run(&[("TERM", "dumb")]).contains('\u{1b}'));
    assert!(run(&[("CLICOLOR_FORCE", "1")]).contains("\u{1b}["));
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\u{1b}'));
}

/// Issue 11: AMD's tables write SLES 15 SP5 as `15-SP5`, its os-release says `VERSION_ID="15.5"`;
/// doctor must match them instead of saying "not supported (supported versions: 15-SP6, 15-SP5)".
#[test]
fn sles_15_sp5_matches_the_15_sp5_rows() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    // /etc/os-release as SLES 15 SP5 ships it, in the os-release(5) format
    // (https://www.freedesktop.org/software/systemd/man/latest/os-release.html): NAME "SLES",
    // VERSION "15-SP5", VERSION_ID "15.5", ID "sles", CPE cpe:/o:suse:sles:15:sp5.
    write(
        "etc/os-release",
        "NAME=\"SLES\"\nVERSION=\"15-SP5\"\nVERSION_ID=\"15.5\"\n\
         PRETTY_NAME=\"SUSE Linux Enterprise Server 15 SP5\"\nID=\"sles\"\nID_LIKE=\"suse\"\n\
         ANSI_COLOR=\"0;32\"\nCPE_NAME=\"cpe:/o:suse:sles:15:sp5\"\n\
         DOCUMENTATION_URL=\"https://documentation.suse.com/\"\n",
    );
    // The SLES 15 SP5 GA kernel (5.14.21-150500.53) and its default flavour.
    write("proc/sys/kernel/osrelease", "5.14.21-150500.53-default\n");
    // A host tree has a PCI bus (here with no GPU on it).
    std::fs::create_dir_all(dir.path().join("sys/bus/pci/devices")).unwrap();
    let root = dir.path().display().to_string();
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &root,
        "--target",
        "rocm-6.2",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(report["host"]["os"]["version_id"], "15.5");
    let os = check(&report, "os.rocm-supported");
    assert_eq!(os["status"], "pass", "{os}");
    assert!(
        os["summary"]
            .as_str()
            .unwrap()
            .contains("SUSE Linux Enterprise Server 15 SP5 is supported by ROCm 6.2.4"),
        "{os}"
    );
    let k = check(&report, "kernel.rocm-supported");
    assert_eq!(k["status"], "pass", "{k}");
    assert!(
        k["summary"].as_str().unwrap().contains("sles 15-SP5"),
        "{k}"
    );
    // SP4 is listed by older releases only: 7.0's list names the service packs it does support.
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &root,
        "--target",
        "rocm-7.0",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let os = check(&report, "os.rocm-supported");
    assert_eq!(os["status"], "fail", "{os}");
    assert!(
        os["detail"].as_str().unwrap().contains("6.3.3"),
        "the releases that list 15.5: {os}"
    );
}

/// Issue 10: the fish script loads without running anything (help texts once carried `$(rocmenv env)` into a
/// double-quoted fish string), and a reader that stops after one line is not a panic.
#[test]
fn completions_load_without_running_anything_and_survive_a_closed_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rocmenv.fish");
    std::fs::write(&script, rocmenv(&["completions", "fish"]).stdout).unwrap();
    match Command::new("fish")
        .args(["--no-config", "-c", &format!("source {}", script.display())])
        .env("PATH", "/usr/bin:/bin")
        .output()
    {
        Ok(o) => {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                "",
                "sourcing printed errors"
            );
        }
        Err(e) if std::env::var("ROCMENV_REQUIRE_SHELLS").as_deref() != Ok("1") => {
            eprintln!("SKIP fish: {e}")
        }
        Err(e) => panic!("ROCMENV_REQUIRE_SHELLS=1 but fish cannot run: {e}"),
    }
    for shell in ["bash", "zsh", "fish"] {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "{} completions {shell} | head -c 10 >/dev/null; echo ${{PIPESTATUS:-0}}",
                env!("CARGO_BIN_EXE_rocmenv")
            ))
            .output()
            .unwrap();
        assert!(
            !String::from_utf8_lossy(&o.stderr).contains("panicked"),
            "{shell}"
        );
    }
}

/// Issue 10: a --rocm that is no version says so, instead of listing releases near nothing.
#[test]
fn a_rocm_value_that_is_no_version_says_so() {
    let o = rocmenv(&["env", "--gfx", "gfx1100", "--rocm", "abc"]);
    assert_one_line_error(&o, 2, "--rocm: `abc` is not a version");
    assert!(!stderr(&o).contains("nearest"), "{}", stderr(&o));
}

/// Issue 10: `run --gpu N` for a GPU the host does not have is an error naming what exists, never a quiet CPU run.
#[test]
fn run_gpu_that_does_not_exist_is_an_error_not_a_cpu_run() {
    let o = rocmenv(&[
        "run",
        "--print",
        "--sysroot",
        &fixture("no-gpu-debian12"),
        "--gpu",
        "0",
        "--image",
        "debian:12",
        "--",
        "true",
    ]);
    assert_one_line_error(&o, 125, "--gpu: GPU 0 does not exist; this host has no GPU");
    let o = rocmenv(&[
        "run",
        "--print",
        "--sysroot",
        &fixture("mi300x-x4-ubuntu2204"),
        "--gpu",
        "4",
        "--image",
        "rocm/pytorch:latest",
        "--",
        "true",
    ]);
    assert_one_line_error(
        &o,
        125,
        "--gpu: GPU 4 does not exist; this host's AMD GPUs are GPU 0 (AMD Instinct MI300X",
    );
}

/// Issue 10: on the mi210 fixture doctor's row 0 was 0000:03:00.0 (PCI order) while `run --gpu 0` mapped
/// renderD128 (0000:e3:00.0, KFD node 1) and `env --device` followed a third rule. Now doctor's `#`, the JSON
/// `index`, `run --gpu N` and `env --device N` all mean the GPU the runtime numbers N, and each names its PCI address.
#[test]
fn doctor_run_and_env_number_gpus_alike() {
    // ROCr numbers GPUs in KFD topology node order: on this host node 1 is 0000:e3:00.0, not the lowest PCI address.
    let o = rocmenv(&[
        "doctor",
        "--sysroot",
        &fixture("mi210-x4-ubuntu2204"),
        "--json",
    ]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(d["host"]["gpus"][0]["pci_address"], "0000:e3:00.0");
    assert_eq!(d["host"]["gpus"][0]["index"], 0);
    for (name, amd) in [
        ("mi210-x4-ubuntu2204", true),
        ("mi300x-x4-ubuntu2204", true),
        ("rhel94-mi300x-x8", true),
        ("ryzen5600g-igpu-rx6800-mint21", true),
        ("h100-x8-ubuntu2204", false),
    ] {
        let tree = fixture(name);
        let o = rocmenv(&["doctor", "--sysroot", &tree, "--json"]);
        let d: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        let human =
            String::from_utf8_lossy(&rocmenv(&["doctor", "--sysroot", &tree]).stdout).into_owned();
        let gpus = d["host"]["gpus"].as_array().expect("gpus");
        assert!(gpus.len() >= 2, "{name}: a multi-GPU fixture");
        for g in gpus {
            let n = g["index"].as_u64().expect("index").to_string();
            let pci = g["pci_address"].as_str().expect("pci");
            // doctor: the table row with this number shows this address.
            assert!(
                human.lines().any(|l| {
                    let mut w = l.split_whitespace();
                    w.next() == Some(n.as_str()) && l.contains(pci)
                }),
                "{name}: no table row `{n} … {pci}` in\n{human}"
            );
            // run --gpu N maps this GPU and says so.
            let r = rocmenv(&[
                "run",
                "--print",
                "--sysroot",
                &tree,
                "--gpu",
                &n,
                "--image",
                "x",
                "--",
                "true",
            ]);
            assert_eq!(r.status.code(), Some(0), "{name} --gpu {n}: {}", stderr(&r));
            let line = String::from_utf8_lossy(&r.stdout).into_owned();
            if amd {
                let render = g["render_node"].as_str().expect("render node");
                assert!(
                    line.contains(&format!("--device={render} ")),
                    "{name} --gpu {n}: {line}"
                );
                assert_eq!(line.matches("/dev/dri/render").count(), 1, "{line}");
            } else {
                assert!(
                    line.contains(&format!("device={n}")),
                    "{name} --gpu {n}: {line}"
                );
            }
            let label = format!("GPU {n} (");
            let said = stderr(&r);
            assert!(
                said.contains(&label) && said.contains(pci),
                "{name}: {said}"
            );
            // env --device N is the same GPU, by name and address.
            let e = rocmenv(&["env", "--sysroot", &tree, "--device", &n]);
            let said = stderr(&e);
            assert!(
                said.contains(&format!("--device {n} is GPU {n} (")) && said.contains(pci),
                "{name} --device {n}: {said}"
            );
            let out = String::from_utf8_lossy(&e.stdout).into_owned();
            let var = if amd {
                "HIP_VISIBLE_DEVICES"
            } else {
                "CUDA_VISIBLE_DEVICES"
            };
            if e.status.code() == Some(1) {
                // A GPU that cannot run the release (the Cezanne iGPU) is refused, naming it the same way.
                assert!(
                    out.is_empty() && said.contains(&format!("warning: GPU {n} (")),
                    "{said}"
                );
                continue;
            }
            assert_eq!(e.status.code(), Some(0), "{name} --device {n}: {said}");
            assert!(out.contains(&format!("{var}='{n}'")), "{name}: {out}");
            if !amd {
                assert!(out.contains("CUDA_DEVICE_ORDER='PCI_BUS_ID'"), "{out}");
            }
        }
    }
}

/// Issue 10: `run --help` promises docker's 125 when rocmenv itself fails, but clap refused `run`'s flags with 2.
#[test]
fn run_refuses_bad_flags_with_125_like_docker_run() {
    for args in [
        &["run", "--bogus", "--image", "x", "--", "true"][..],
        &["run", "--timeout", "abc", "--image", "x", "--", "true"],
        &["--matrices", "m", "run", "--memory"],
    ] {
        let o = rocmenv(args);
        assert_one_line_error(&o, 125, "(see `rocmenv run --help`)");
    }
    // Issue 25: usage errors were clap's multi-line `error:` blocks; README promises one `rocmenv:` line.
    let o = rocmenv(&["doctor", "--bogus"]);
    assert_one_line_error(
        &o,
        2,
        "rocmenv: unexpected argument '--bogus' found (see `rocmenv doctor --help`)",
    );
    let o = rocmenv(&["matrix", "nosuch"]);
    assert_one_line_error(&o, 2, "nosuch");
    let o = rocmenv(&["run", "--", "true"]);
    assert_one_line_error(
        &o,
        125,
        "the following required arguments were not provided: --image <IMAGE>",
    );
    let o = rocmenv(&["run", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("125 rocmenv itself"));
}

#[test]
fn a_locale_that_is_not_utf8_gets_ascii_marks_and_json_keeps_its_text() {
    // Issue 10: plain output where the terminal cannot show more; ASCII marks where the locale is not UTF-8.
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hosts/rtx4090-driver-535"
    );
    let run = |vars: &[(&str, &str)], extra: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
        c.args(["doctor", "--sysroot", fixture, "--target", "cuda-12.4"])
            .args(extra)
            .env_remove("ROCMENV_MATRICES")
            .env_remove("LC_ALL")
            .env_remove("LC_CTYPE")
            .env_remove("LANG");
        for (k, v) in vars {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        (o.status.code(), String::from_utf8(o.stdout).unwrap())
    };
    for vars in [
        &[][..],
        &[("LANG", "C")][..],
        &[("LANG", "en_US.UTF-8"), ("LC_ALL", "POSIX")][..],
    ] {
        let (code, text) = run(vars, &[]);
        assert_eq!(code, Some(1), "{vars:?}");
        assert!(text.is_ascii(), "{vars:?}: {text}");
        assert!(
            text.contains("\n  x NVIDIA driver 535.104.05 is too old"),
            "{text}"
        );
        assert!(
            text.contains("\n  + 1 GPU: NVIDIA GeForce RTX 4090"),
            "{text}"
        );
        assert!(text.contains("needs >= 550.54.15"), "{text}");
    }
    let (_, text) = run(&[("LANG", "C.UTF-8")], &[]);
    assert!(
        text.contains("\n  ✗ NVIDIA driver 535.104.05 is too old"),
        "{text}"
    );
    assert!(text.contains("needs ≥ 550.54.15"), "{text}");
    // JSON is data: its text is the same in any locale.
    let (_, json) = run(&[("LANG", "C")], &["--json"]);
    assert!(json.contains("needs ≥ 550.54.15"), "{json}");
    // Errors on stderr follow the locale too.
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["env", "--gfx", "gfx1030", "--rocm", "abc"])
        .env("LC_ALL", "C")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stderr.is_ascii());
}
