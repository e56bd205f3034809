//! The engine against a real Docker daemon (serially): build, run, result files, failures, OOM, timeout, signals,
//! and that no container is ever left behind. Without a daemon they print SKIP, unless ROCMENV_ENGINE_TESTS=1.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use common::{assert_no_leftovers, build, daemon, python_image, rocmenv, BASE};
use rocmenv::engine::{BuildEvent, DeviceMap, RunSpec};
use rocmenv::error::Error;
use rocmenv::vendor::Vendor;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn cpu_spec(image: &str, cmd: &[&str]) -> RunSpec {
    RunSpec {
        image: image.to_string(),
        command: cmd.iter().map(|s| s.to_string()).collect(),
        env: vec![],
        mounts: vec![],
        timeout: None,
        memory: None,
        devices: DeviceMap {
            vendor: Vendor::Cpu,
            devices: vec![],
            group_add: vec![],
            security_opt: vec![],
            security: rocmenv::engine::Security::Default,
            ipc_host: false,
            shm_size: 64 << 20,
            mounts: vec![],
            env: vec![],
            gpu_request: None,
            gpus: Vec::new(),
        },
        result_path: None,
        uploads: Vec::new(),
    }
}

#[test]
fn build_then_run_a_python_one_liner_and_hit_the_cache() {
    let Some(d) = daemon("build_then_run") else {
        return;
    };
    let image = python_image(&d.engine);
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--image",
        &image,
        "--",
        "python3",
        "-c",
        "print(6*7)",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "42\n");
    // Same context again: the image exists, the builder is not asked.
    let df = format!("FROM {BASE}\nRUN apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*\n");
    let (r, ev) = build(&d.engine, "test-python", &df);
    let out = r.expect("cached build");
    assert!(out.cached && out.tag == image, "{out:?}");
    assert!(out.seconds < 0.5, "cache hit took {} s", out.seconds);
    assert!(matches!(ev[..], [BuildEvent::CacheHit { .. }]), "{ev:?}");
    assert_no_leftovers(&d.engine);
}

#[test]
fn a_result_file_is_copied_out() {
    let Some(d) = daemon("result_file") else {
        return;
    };
    let mut spec = cpu_spec(
        BASE,
        &[
            "sh",
            "-c",
            "echo '{\"ok\": true}' > /tmp/result.json; echo done",
        ],
    );
    spec.result_path = Some("/tmp/result.json".into());
    let mut seen = Vec::new();
    let out = d
        .engine
        .run(&spec, &mut |_, b| seen.extend_from_slice(b))
        .expect("runs");
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.result_file.as_deref(), Some(&b"{\"ok\": true}\n"[..]));
    assert_eq!(out.logs, b"done\n");
    assert_eq!(seen, b"done\n");
    // Through the CLI: --result copies it to --result-to.
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("r.json");
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--image",
        BASE,
        "--result",
        "/r.json",
        "--result-to",
        to.to_str().unwrap(),
        "--",
        "sh",
        "-c",
        "echo 1 > /r.json",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(std::fs::read_to_string(&to).unwrap(), "1\n");
    assert_no_leftovers(&d.engine);
}

#[test]
fn a_build_failing_mid_stream_names_the_step_and_its_last_lines() {
    let Some(d) = daemon("build_fails") else {
        return;
    };
    let df = format!("FROM {BASE}\nRUN echo fine\nRUN echo about-to-fail && echo 'last words' >&2 && exit 3\nRUN echo never\n");
    let (r, ev) = build(&d.engine, "test-fail", &df);
    match r {
        Err(Error::BuildFailed {
            step,
            message,
            tail,
        }) => {
            // The builder counts the LABEL steps rocmenv adds, so only the step number is fixed.
            assert!(
                step.starts_with("Step 3/") && step.contains(": RUN echo about-to-fail"),
                "{step}"
            );
            assert!(message.contains("returned a non-zero code: 3"), "{message}");
            assert!(
                tail.contains("about-to-fail") && tail.contains("last words"),
                "{tail}"
            );
        }
        other => panic!("expected BuildFailed, got {other:?}"),
    }
    assert!(ev
        .iter()
        .any(|e| matches!(e, BuildEvent::Step { index: 2, .. })));
    assert!(matches!(ev.last(), Some(BuildEvent::Error(_))));
    // The CLI: a failed build step is a failed check (1), with the step in the message.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Dockerfile"), &df).unwrap();
    let o = rocmenv(&["build", "--context", dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("rocmenv: build failed at Step 3/") && err.contains("last words"),
        "{err}"
    );
    assert_no_leftovers(&d.engine);
}

#[test]
fn a_non_zero_exit_is_passed_through() {
    let Some(d) = daemon("non_zero") else { return };
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--image",
        BASE,
        "--",
        "sh",
        "-c",
        "echo out; echo err >&2; exit 7",
    ]);
    assert_eq!(o.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "out\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("err\n"));
    assert_no_leftovers(&d.engine);
}

#[test]
fn the_oom_killer_is_reported() {
    let Some(d) = daemon("oom") else { return };
    let mut spec = cpu_spec(BASE, &["tail", "/dev/zero"]);
    spec.memory = Some(16 << 20);
    let out = d.engine.run(&spec, &mut |_, _| {}).expect("runs");
    assert!(out.oom_killed, "{out:?}");
    assert_eq!(out.exit_code, Some(137));
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--memory",
        "16m",
        "--image",
        BASE,
        "--",
        "tail",
        "/dev/zero",
    ]);
    assert_eq!(o.status.code(), Some(137));
    assert!(String::from_utf8_lossy(&o.stderr).contains("OOM killer"));
    assert_no_leftovers(&d.engine);
}

#[test]
fn a_container_that_outlives_its_timeout_is_killed() {
    let Some(d) = daemon("timeout") else { return };
    // Exit 124 and the message are the proof: a container that was not killed would exit 0 after 60 s.
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--timeout",
        "1",
        "--image",
        BASE,
        "--",
        "sleep",
        "60",
    ]);
    assert_eq!(
        o.status.code(),
        Some(124),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("outlived --timeout 1 s"));
    assert_no_leftovers(&d.engine);
}

fn signal_a_run(d: &common::Daemon, sig: i32) -> (Option<i32>, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args([
            "run",
            "--vendor",
            "cpu",
            "--image",
            BASE,
            "--",
            "sh",
            "-c",
            "echo started; sleep 60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let deadline = Instant::now() + Duration::from_secs(30);
    while d
        .engine
        .managed_containers()
        .unwrap()
        .iter()
        .all(|c| c.state != "running")
    {
        assert!(Instant::now() < deadline, "the container never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, sig) };
    let o = child.wait_with_output().expect("waits");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn sigint_and_sigterm_stop_and_remove_the_container() {
    let Some(d) = daemon("signals") else { return };
    let (code, err) = signal_a_run(&d, libc::SIGINT);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_no_leftovers(&d.engine);
    let (code, err) = signal_a_run(&d, libc::SIGTERM);
    assert_eq!(code, Some(143), "{err}");
    assert_no_leftovers(&d.engine);
}

/// Ctrl-C (and SIGTERM) in the middle of a RUN step: the build is cancelled, the step's container removed, one line
/// says so, and the exit code is the shell's for the signal.
#[test]
fn a_signal_during_a_build_cancels_it_and_leaves_no_container() {
    use std::io::BufRead;
    let Some(_d) = daemon("build-signals") else {
        return;
    };
    for (sig, code, name) in [
        (libc::SIGINT, 130, "SIGINT"),
        (libc::SIGTERM, 143, "SIGTERM"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let nonce = rocmenv::engine::new_run_id();
        std::fs::write(
            dir.path().join("Dockerfile"),
            format!("FROM {BASE}\nRUN echo {nonce}; sleep 60\n"),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args(["build", "--context", dir.path().to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawns");
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let mut seen = Vec::new();
        let container = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("the step never ran: {seen:?}"))
                .unwrap();
            seen.push(line.clone());
            if let Some(id) = line.trim().strip_prefix("---> Running in ") {
                break id.trim().to_string();
            }
        };
        // Wait until the step prints, so the signal lands while its container runs.
        while !seen.iter().any(|l| l.trim() == nonce) {
            seen.push(lines.next().expect("the step printed").unwrap());
        }
        // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
        unsafe { libc::kill(child.id() as i32, sig) };
        let rest: Vec<String> = lines.map_while(Result::ok).collect();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{seen:?} {rest:?}");
        let last = rest.last().cloned().unwrap_or_default();
        assert!(
            last.starts_with(&format!(
                "rocmenv: interrupted by {name}: the build of rocmenv/context:"
            )),
            "{rest:?}"
        );
        let o = Command::new("docker")
            .args(["ps", "-a", "-q", "--filter", &format!("id={container}")])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            "",
            "step container {container} left"
        );
    }
}

#[test]
fn a_missing_base_image_says_how_to_provide_it() {
    let Some(d) = daemon("missing_base") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Dockerfile"),
        "FROM rocmenv-test/not-there:1\nRUN true\n",
    )
    .unwrap();
    let o = rocmenv(&["build", "--context", dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    // Progress ("pulling …") may precede it; the error itself is one line.
    assert_eq!(
        err.lines().filter(|l| l.starts_with("rocmenv:")).count(),
        1,
        "{err}"
    );
    assert!(
        err.trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("rocmenv: image"),
        "{err}"
    );
    assert!(
        err.contains(
            "image rocmenv-test/not-there:1 is not available locally and could not be pulled"
        ),
        "{err}"
    );
    assert!(
        err.contains("docker load") && err.contains("--base"),
        "{err}"
    );
    assert_no_leftovers(&d.engine);
}

#[test]
fn gc_removes_what_a_crashed_run_left() {
    let Some(d) = daemon("gc") else { return };
    let o = Command::new("docker")
        .args([
            "create",
            "--label",
            "rocmenv.managed=true",
            "--name",
            "rocmenv-crashed-test",
            BASE,
            "sleep",
            "1",
        ])
        .output()
        .expect("docker create");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = rocmenv(&["gc"]);
    assert_eq!(o.status.code(), Some(0));
    // The first line; `kept …` lines may follow for live runs of other processes on this daemon.
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).lines().next(),
        Some("removed 1 container(s): rocmenv-crashed-test (created)")
    );
    assert_no_leftovers(&d.engine);
}

/// Issue 10: `rocmenv gc` removed the running container of a live `rocmenv run`, which then died with 125 ("no such
/// container"). gc now keeps what a live rocmenv owns and removes a running container whose owner is gone.
#[test]
fn gc_keeps_a_live_runs_container_and_removes_one_whose_owner_is_gone() {
    let Some(d) = daemon("gc-live") else { return };
    // A pid that has exited: the owner of an orphaned, still running container.
    let mut gone = Command::new("true").spawn().expect("true runs");
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let host = rocmenv::engine::hostname();
    let o = Command::new("docker")
        .args(["run", "-d", "--label", "rocmenv.managed=true"])
        .args(["--label", &format!("rocmenv.owner.host={host}")])
        .args(["--label", &format!("rocmenv.owner.pid={gone_pid}")])
        .args(["--label", "rocmenv.owner.start=1"])
        .args(["--name", "rocmenv-owner-gone-test", BASE, "sleep", "60"])
        .output()
        .expect("docker run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(["run", "--vendor", "cpu", "--image", BASE, "--"])
        .args(["sh", "-c", "echo started; sleep 6; echo finished"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let name = running_container_of(&d.engine, child.id());
    let o = rocmenv(&["gc"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("removed 1 container(s): rocmenv-owner-gone-test (running)"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "kept {name} (running): its rocmenv run (pid {}) is still running",
            child.id()
        )),
        "{out}"
    );
    assert!(
        container_of(&d.engine, child.id()).is_some(),
        "gc removed the live run's container"
    );
    let o = child.wait_with_output().expect("waits");
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "started\nfinished\n");
    assert_no_leftovers(&d.engine);
}

/// Issue 36: `gc --dry-run` lists what gc would remove and removes nothing; a plain `gc` then removes it.
#[test]
fn gc_dry_run_lists_and_removes_nothing() {
    let Some(d) = daemon("gc-dry-run") else {
        return;
    };
    let name = "rocmenv-dry-run-test";
    let o = Command::new("docker")
        .args(["create", "--label", "rocmenv.managed=true", "--name", name])
        .args([BASE, "sleep", "1"])
        .output()
        .expect("docker create");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let there = |e: &rocmenv::engine::Engine| {
        e.managed_containers()
            .unwrap()
            .iter()
            .any(|c| c.name == name)
    };
    let o = rocmenv(&["gc", "--dry-run"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    // Other processes' runs on this daemon may be listed beside it.
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("would remove ") && first.contains(&format!("{name} (created)")),
        "{out}"
    );
    let o = rocmenv(&["gc", "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(doc["dry_run"], true, "{doc}");
    assert!(
        doc["containers"]["removed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == name),
        "{doc}"
    );
    assert!(there(&d.engine), "gc --dry-run removed {name}");
    let o = rocmenv(&["gc"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    let first = out.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("removed ") && first.contains(&format!("{name} (created)")),
        "{out}"
    );
    assert!(!there(&d.engine), "gc left {name}");
    assert_no_leftovers(&d.engine);
}

/// Issue 36: `gc --all` killed live runs (which then failed with 125). It now keeps a live run's container and
/// says `--all --force` removes it; a dry run of that lists it and leaves it; `--all --force` removes it.
#[test]
fn gc_all_keeps_a_live_run_unless_forced() {
    let Some(d) = daemon("gc-all-live") else {
        return;
    };
    let child = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args([
            "run", "--vendor", "cpu", "--image", BASE, "--", "sleep", "60",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let name = running_container_of(&d.engine, child.id());
    let o = rocmenv(&["gc", "--all"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "kept {name} (running): its rocmenv run (pid {}) is still running (rocmenv gc --all --force removes it)",
            child.id()
        )),
        "{out}"
    );
    assert!(
        container_of(&d.engine, child.id()).is_some(),
        "gc --all removed a live run"
    );
    let o = rocmenv(&["gc", "--all", "--force", "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert!(
        doc["dry_run"] == true
            && doc["containers"]["removed"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == name.as_str()),
        "{doc}"
    );
    assert!(
        container_of(&d.engine, child.id()).is_some(),
        "a dry run removed a live run"
    );
    let o = rocmenv(&["gc", "--all", "--force"]);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.starts_with("removed ") && out.contains(&format!("{name} (running)")),
        "{out}"
    );
    let o = child.wait_with_output().expect("waits");
    assert_eq!(
        o.status.code(),
        Some(125),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_leftovers(&d.engine);
}

/// `--force` means something only with `--all`: alone it is a usage error, one line, exit 2.
#[test]
fn gc_force_needs_all() {
    let o = rocmenv(&["gc", "--force"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.lines().count() == 1 && err.starts_with("rocmenv: ") && err.contains("--all"),
        "{err}"
    );
}

#[test]
fn the_cpu_stack_builds_end_to_end_and_runs_torch() {
    let Some(d) = daemon("cpu-stack") else { return };
    if std::env::var("ROCMENV_SKIP_TORCH_TEST").as_deref() == Ok("1") {
        // A skip asked for by hand; under ROCMENV_ENGINE_TESTS=1 (CI) the test must run.
        assert!(
            std::env::var("ROCMENV_ENGINE_TESTS").as_deref() != Ok("1"),
            "ROCMENV_SKIP_TORCH_TEST=1 and ROCMENV_ENGINE_TESTS=1 contradict each other"
        );
        eprintln!("SKIP the_cpu_stack_builds_end_to_end: ROCMENV_SKIP_TORCH_TEST=1");
        return;
    }
    // The real stack: `rocmenv dockerfile --stack cpu` rendered and built through the API, from the local base.
    let args = [
        "build",
        "--stack",
        "cpu",
        "--base",
        BASE,
        "--with-smoke-tests",
        "--json",
    ];
    let o = rocmenv(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let built: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let image = built["tag"].as_str().unwrap().to_string();
    assert!(image.starts_with("rocmenv/cpu:"), "{image}");
    let code = "import torch, torchvision; x = torch.ones(64, 64); print(torch.__version__, float((x @ x).sum()))";
    let o = rocmenv(&[
        "run", "--vendor", "cpu", "--image", &image, "--", "python3", "-c", code,
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.trim_end().ends_with(" 262144.0"), "{out}");
    // The image runs as the non-root user the template creates, and carries the smoke-test suites.
    let o = rocmenv(&[
        "run",
        "--vendor",
        "cpu",
        "--image",
        &image,
        "--",
        "sh",
        "-c",
        "id -u; ls /opt/rocmenv/smoke-tests",
    ]);
    let listing = String::from_utf8_lossy(&o.stdout);
    let mut lines = listing.lines();
    assert_eq!(lines.next(), Some("1000"));
    let files: Vec<&str> = lines.collect();
    for f in ["run.py", "suite.yaml", "rocmenv_smoke"] {
        assert!(
            files.contains(&f),
            "{f} missing from /opt/rocmenv/smoke-tests: {files:?}"
        );
    }
    // `run --probe` copies this rocmenv in and asks the runtimes there: the CPU image has neither, so exit 3.
    let o = rocmenv(&["run", "--probe", "--vendor", "cpu", "--image", &image]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(text.contains("hip: no HIP runtime library"), "{text}");
    assert!(text.contains("cuda: no CUDA driver library"), "{text}");
    // The binary to ship (the portable build, glibc 2.17) runs in the stack image too and reports the same.
    if let Some(bin) = common::portable_binary("cpu-stack-portable-probe") {
        let o = rocmenv(&[
            "run",
            "--probe",
            "--probe-binary",
            bin.to_str().unwrap(),
            "--vendor",
            "cpu",
            "--image",
            &image,
        ]);
        let portable = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(3), "{portable}");
        assert_eq!(
            portable, text,
            "the portable build reports what this build reports"
        );
    }
    // Unchanged: a cache hit that does not run the builder (how fast it is belongs in benches/engine.rs).
    let o = rocmenv(&args);
    let again: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(again["cached"], true);
    assert_eq!(again["tag"], built["tag"]);
    assert_no_leftovers(&d.engine);
}

/// The classic container mistake, for real: HIP is in the image, but the container got no /dev/kfd. The probe run
/// inside says `hipErrorNoDevice` with the device-mapping fix, before any Python runs.
#[test]
fn probe_in_a_hip_image_without_devices_reports_no_device() {
    let Some(d) = daemon("hip-probe") else { return };
    let image = common::hip_image(&d.engine);
    let o = rocmenv(&["run", "--probe", "--vendor", "cpu", "--image", &image]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        text.contains("✗ hip: ") && text.contains("hipErrorNoDevice"),
        "{text}"
    );
    assert!(
        text.contains("--device=/dev/kfd"),
        "the fix names the missing mapping: {text}"
    );
    assert_no_leftovers(&d.engine);
}

/// Removes the stand-in tags when the test ends, however it ends: a local `rocm/pytorch:…` must not outlive it.
struct Untag(Vec<String>);

impl Drop for Untag {
    fn drop(&mut self) {
        for t in &self.0 {
            let _ = Command::new("docker").args(["rmi", t]).output();
        }
    }
}

/// The rocm and ngc templates' own instructions — user and groups, baked env, copied suites, the pip layer — run for
/// real. This checks OUR instructions, not the vendor's images: no registry is reachable, so the base reference each
/// template names is a local stand-in (Debian with python3 and pip in a venv, as the vendor images have them, and an
/// `ubuntu` user holding uid 1000, as Ubuntu 24.04 images do).
#[test]
fn the_rocm_and_ngc_templates_run_their_instructions_for_real() {
    let Some(d) = daemon("templates") else { return };
    // The host's CA bundle goes in too: this sandbox reaches PyPI through a TLS proxy whose CA only the host trusts.
    let df = format!(
        "FROM {BASE}\nRUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv && rm -rf /var/lib/apt/lists/* \\\n    && python3 -m venv /opt/venv && useradd -m -u 1000 ubuntu\nCOPY host-ca.crt /etc/ssl/host-ca.crt\nENV PATH=/opt/venv/bin:$PATH PIP_CERT=/etc/ssl/host-ca.crt\n"
    );
    let ca = std::fs::read("/etc/ssl/certs/ca-certificates.crt").unwrap_or_default();
    let files = vec![
        (std::path::PathBuf::from("Dockerfile"), df.into_bytes()),
        (std::path::PathBuf::from("host-ca.crt"), ca),
    ];
    let r =
        rocmenv::engine::build_files(&d.engine, &files, "test-vendor-standin", &[], &mut |_| {});
    let standin = r.unwrap_or_else(|e| panic!("stand-in image: {e}")).tag;
    let mut untag = Untag(Vec::new());
    for stack in [
        vec!["--stack", "rocm", "--gfx", "gfx1031", "--rocm", "6.2"],
        vec!["--stack", "ngc", "--ngc", "24.05"],
    ] {
        let mut args: Vec<&str> = stack.clone();
        args.extend(["--pip", "six==1.16.0", "--with-smoke-tests"]);
        // The FROM line the template names, so the stand-in can be tagged as it.
        let mut render = vec!["dockerfile"];
        render.extend(&args);
        let o = rocmenv(&render);
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let from = text
            .lines()
            .find_map(|l| l.strip_prefix("FROM "))
            .expect("a FROM line")
            .to_string();
        let tagged = Command::new("docker")
            .args(["tag", &standin, &from])
            .output()
            .unwrap();
        assert!(
            tagged.status.success(),
            "{}",
            String::from_utf8_lossy(&tagged.stderr)
        );
        untag.0.push(from.clone());

        let mut build_args = vec!["build"];
        build_args.extend(&args);
        build_args.push("--json");
        let o = rocmenv(&build_args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{stack:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let built: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
        let image = built["tag"].as_str().unwrap().to_string();

        let script = "id -u; id -Gn; echo \"hsa=${HSA_OVERRIDE_GFX_VERSION:-} arch=${PYTORCH_ROCM_ARCH:-}\"; ls /opt/rocmenv/smoke-tests; python3 -c 'import six; print(six.__version__)'";
        let o = rocmenv(&[
            "run", "--vendor", "cpu", "--image", &image, "--", "sh", "-c", script,
        ]);
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{stack:?}: {out}{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0], "1000",
            "{stack:?}: the template's user replaces the image's uid-1000 user: {out}"
        );
        assert!(
            lines.contains(&"README.md"),
            "{stack:?}: smoke tests copied: {out}"
        );
        assert_eq!(
            lines.last(),
            Some(&"1.16.0"),
            "{stack:?}: the pip layer ran: {out}"
        );
        if stack[1] == "rocm" {
            let groups: Vec<&str> = lines[1].split_whitespace().collect();
            assert!(
                groups.contains(&"video") && groups.contains(&"render"),
                "{out}"
            );
            assert!(
                lines[2] == "hsa=10.3.0 arch=gfx1030",
                "the computed env is baked in: {out}"
            );
        } else {
            assert!(
                lines[2] == "hsa= arch=",
                "no ROCm variables in the NGC image: {out}"
            );
        }
    }
    assert_no_leftovers(&d.engine);
}

/// Issue 9: a digest-pinned reference is pulled by digest from its own registry, not split at its last `:` into
/// a repository `…:2.1@sha256` that the daemon refuses as an invalid reference. Nothing listens on port 5999, so
/// the pull fails at that registry, and the error says so.
#[test]
fn a_digest_pinned_image_is_pulled_from_its_registry() {
    let Some(d) = daemon("digest") else { return };
    let image = format!(
        "127.0.0.1:5999/team/torch:2.1@sha256:{}",
        "0123456789abcdef".repeat(4)
    );
    let o = rocmenv(&["run", "--vendor", "cpu", "--image", &image, "--", "true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert!(!err.contains("invalid reference format"), "{err}");
    assert!(err.contains("127.0.0.1:5999"), "{err}");
    assert!(err.contains("could not be pulled"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_no_leftovers(&d.engine);
}

/// Issue 10: `run -v myvol:/data` bound a new host directory `./myvol`, and `-v /nonexistent/x:/x` created
/// `/nonexistent/x`. A bare name is a named volume (the data outlives the container, no host directory appears);
/// a missing host path is an error (125) naming it, and it is not created.
#[test]
fn volumes_are_named_volumes_or_existing_absolute_host_paths() {
    let Some(d) = daemon("volumes") else { return };
    let cwd = tempfile::tempdir().unwrap();
    let vol = format!("rocmenv-test-vol-{}", rocmenv::engine::new_run_id());
    let run = |v: &str, script: &str| {
        Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args(["run", "--vendor", "cpu", "--image", BASE, "-v", v, "--"])
            .args(["sh", "-c", script])
            .current_dir(cwd.path())
            .output()
            .expect("runs")
    };
    let first = run(&format!("{vol}:/data"), "echo kept > /data/f");
    let o = run(&format!("{vol}:/data:ro"), "cat /data/f");
    // Removed before any assertion, so a failure leaves no volume behind.
    let vol_rm = Command::new("docker").args(["volume", "rm", &vol]).output();
    let err = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(first.status.code(), Some(0), "{}", err(&first));
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "kept\n");
    assert!(
        vol_rm.unwrap().status.success(),
        "the named volume {vol} was not made"
    );
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "a host directory appeared"
    );

    let missing = cwd.path().join("not-there/x");
    let o = run(&format!("{}:/x", missing.display()), "true");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&missing.display().to_string()), "{err}");
    assert!(
        !cwd.path().join("not-there").exists(),
        "the missing host path was created"
    );
    // An existing absolute path is bound as before.
    std::fs::write(cwd.path().join("in.txt"), "host\n").unwrap();
    let o = run(
        &format!("{}:/in:ro", cwd.path().display()),
        "cat /in/in.txt",
    );
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "host\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_no_leftovers(&d.engine);
}

/// Issue 10: `--result /etc` wrote an empty file `./etc` (the first file inside the directory's archive), and a
/// `--result` the workload never wrote exited 0. A directory is refused and a missing file is a failed run (125),
/// each one line naming the path, nothing written; a symbolic link is followed to its file.
#[test]
fn a_missing_or_directory_result_fails_naming_it() {
    let Some(d) = daemon("result-errors") else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let run = |result: &str, script: &str| {
        Command::new(env!("CARGO_BIN_EXE_rocmenv"))
            .args([
                "run", "--vendor", "cpu", "--image", BASE, "--result", result,
            ])
            .args(["--", "sh", "-c", script])
            .current_dir(cwd.path())
            .output()
            .expect("runs")
    };
    for (result, why) in [
        ("/etc", "is a directory in the container"),
        ("/never-written.json", "does not exist in the container"),
    ] {
        let o = run(result, "true");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(125), "{result}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("rocmenv: --result {result}: {why}")),
            "{err}"
        );
    }
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "a file was written"
    );
    // A failing command keeps its own exit code; the missing result is still named.
    let o = run("/never-written.json", "exit 3");
    assert_eq!(o.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/never-written.json"));
    // A link to the file the command wrote is followed.
    let o = run(
        "/r.json",
        "echo linked > /tmp/real.json; ln -s tmp/real.json /r.json",
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(cwd.path().join("r.json")).unwrap(),
        "linked\n"
    );
    assert_no_leftovers(&d.engine);
}

/// Issue 10: after the base image changed under the same tag (`FROM` retagged to another image), `build` said
/// "cached" and kept the old image, where `docker build` rebuilds. The tag's hash now includes the base image's id;
/// `--no-cache` rebuilds even then.
#[test]
fn a_retagged_base_image_is_not_a_cache_hit() {
    let Some(d) = daemon("retagged-base") else {
        return;
    };
    let other = python_image(&d.engine);
    let nonce = rocmenv::engine::new_run_id();
    let base = format!("rocmenv-test/retag-{nonce}:1");
    let docker = |args: &[&str]| {
        let o = Command::new("docker").args(args).output().expect("docker");
        assert!(
            o.status.success(),
            "docker {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    };
    docker(&["tag", BASE, &base]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Dockerfile"),
        format!("FROM {base}\nRUN echo {nonce} > /built\n"),
    )
    .unwrap();
    let ctx = dir.path().to_str().unwrap();
    let build = |extra: &[&str]| {
        let mut args = vec!["build", "--json", "--context", ctx];
        args.extend_from_slice(extra);
        let o = rocmenv(&args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("one JSON document")
    };
    let first = build(&[]);
    assert_eq!(first["cached"], false);
    let again = build(&[]);
    assert_eq!(
        (again["cached"].as_bool(), &again["tag"]),
        (Some(true), &first["tag"])
    );
    // --no-cache builds although the image exists.
    let rebuilt = build(&["--no-cache"]);
    assert_eq!(rebuilt["cached"], false);
    // The same name now means another image.
    docker(&["tag", &other, &base]);
    let retagged = build(&[]);
    // Every image this test made (the --no-cache build left the first one untagged), then the base's name.
    let ids: Vec<&str> = [&first, &rebuilt, &retagged]
        .iter()
        .filter_map(|b| b["image_id"].as_str())
        .collect();
    let _ = Command::new("docker")
        .args(["rmi", "-f"])
        .args(&ids)
        .output();
    let _ = Command::new("docker").args(["rmi", &base]).output();
    assert_eq!(retagged["cached"], false, "{retagged}");
    assert_ne!(retagged["tag"], first["tag"]);
    assert_ne!(retagged["base_image_ids"], first["base_image_ids"]);
    assert_no_leftovers(&d.engine);
}

/// Issue 33: run decides the override by the image's ROCm. Without a tag the matrices know, the release comes from
/// the image's ENV, else from /opt/rocm/.info/version read through a container that is created and removed unstarted.
#[test]
fn the_images_rocm_comes_from_its_environment_or_its_version_file() {
    let Some(d) = daemon("image release") else {
        return;
    };
    let e = &d.engine;
    let m = rocmenv::matrix::Matrices::embedded().unwrap();
    let base = BASE;
    let file = format!(
        "FROM {base}\nRUN mkdir -p /opt/rocm/.info && echo 6.2.1-112 > /opt/rocm/.info/version\n"
    );
    let (r, ev) = build(e, "test-rocm-file", &file);
    let tag = r.unwrap_or_else(|err| panic!("{err}; {ev:?}")).tag;
    let got = rocmenv::ops::plan::image_release(&m, &tag, Some(e));
    assert_eq!(
        got.target,
        Some(rocmenv::target::TargetSpec::Rocm("6.2.1".into())),
        "{}",
        got.why
    );
    assert!(
        got.why.contains("/opt/rocm/.info/version (6.2.1-112)"),
        "{}",
        got.why
    );
    let env = format!("FROM {base}\nENV ROCM_VERSION=6.2.4\n");
    let (r, ev) = build(e, "test-rocm-env", &env);
    let tag = r.unwrap_or_else(|err| panic!("{err}; {ev:?}")).tag;
    let got = rocmenv::ops::plan::image_release(&m, &tag, Some(e));
    assert_eq!(
        got.target,
        Some(rocmenv::target::TargetSpec::Rocm("6.2.4".into())),
        "{}",
        got.why
    );
    // An image that names none: unknown, and said so.
    let got = rocmenv::ops::plan::image_release(&m, base, Some(e));
    assert_eq!(got.target, None);
    assert!(
        got.why.contains("names no release the matrices know"),
        "{}",
        got.why
    );
    // A tag the matrices list needs no engine.
    let got = rocmenv::ops::plan::image_release(
        &m,
        "rocm/pytorch:rocm6.2.1_ubuntu22.04_py3.10_pytorch_release_2.1.2",
        None,
    );
    assert_eq!(
        got.target,
        Some(rocmenv::target::TargetSpec::Rocm("6.2.1".into()))
    );
    assert_no_leftovers(e);
}

/// The managed container the `rocmenv run` with process id `pid` made, if it is there.
fn container_of(e: &rocmenv::engine::Engine, pid: u32) -> Option<rocmenv::engine::Leftover> {
    e.managed_containers()
        .unwrap()
        .into_iter()
        .find(|c| c.owner.as_ref().is_some_and(|o| o.pid == pid))
}

/// The name of the running container the `rocmenv run` with process id `pid` made, waiting up to 30 s for it.
fn running_container_of(e: &rocmenv::engine::Engine, pid: u32) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match container_of(e, pid) {
            Some(c) if c.state == "running" => return c.name,
            _ => assert!(Instant::now() < deadline, "the run's container never ran"),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
