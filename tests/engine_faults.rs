//! Faults in the engine and the filesystem (issue 13): a daemon that accepts the connection and never answers, a
//! dockerd killed (SIGKILL) in the middle of a run and of a build, and a full filesystem under `dockerfile -o` and
//! under the smoke suite's temporary directory. Each ends in one line and the documented exit code; after the killed
//! dockerd restarts, `rocmenv gc` leaves nothing labelled. The killed daemon is a second one of the test's own
//! (tests/common/dockerd.rs), never the shared one. Without root, dockerd or `ip` the cases that need them print
//! SKIP, unless ROCMENV_ENGINE_TESTS=1 makes that a failure.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;
#[allow(dead_code)]
#[path = "common/dockerd.rs"]
mod dockerd;

use dockerd::{assert_one_line, is_root, skip, stderr, Bridge, SecondDaemon};
use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// rocmenv against `host` only (the test's own Docker variables cleared, an empty DOCKER_CONFIG).
fn rocmenv_cmd(host: &str, config: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.args(args)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .env_remove("DOCKER_TLS_VERIFY")
        .env_remove("DOCKER_CERT_PATH")
        .env_remove("DOCKER_CONTEXT")
        .env("DOCKER_CONFIG", config)
        .env("DOCKER_HOST", host)
        .stdin(Stdio::null());
    c
}

/// Waits for `child` at most `limit`: a rocmenv that outlives it hangs, and the test says so.
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().expect("output");
            panic!(
                "{what} still running after {limit:?}: it hangs; stderr so far: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_daemon_that_accepts_and_never_answers_gets_a_bounded_wait_and_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let sock = tmp.path().join("silent.sock");
    let listener = UnixListener::bind(&sock).unwrap();
    // Accepts every connection and holds it open without a byte back, for as long as the test runs.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in listener.incoming().flatten() {
            held.push(c);
        }
    });
    let host = format!("unix://{}", sock.display());
    let config = tmp.path().join("docker-config");
    std::fs::create_dir(&config).unwrap();
    let ctx = tmp.path().join("ctx");
    std::fs::create_dir(&ctx).unwrap();
    std::fs::write(ctx.join("Dockerfile"), "FROM scratch\n").unwrap();
    let cases: [(&[&str], i32); 3] = [
        (&["gc"], 3),
        (&["build", "--context", ctx.to_str().unwrap()], 3),
        (
            &[
                "run",
                "--vendor",
                "cpu",
                "--image",
                common::BASE,
                "--",
                "true",
            ],
            125,
        ),
    ];
    for (args, code) in cases {
        let child = rocmenv_cmd(&host, &config, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let o = wait_bounded(child, Duration::from_secs(60), &format!("rocmenv {args:?}"));
        assert_one_line(&o, code, &[&host, "no answer within"]);
    }
    // doctor does not end: its docker.daemon check fails and names the endpoint.
    let child = rocmenv_cmd(&host, &config, &["doctor", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let o = wait_bounded(child, Duration::from_secs(60), "rocmenv doctor");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("doctor --json");
    let d = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "docker.daemon")
        .expect("a docker.daemon check");
    assert_eq!(d["status"], "fail", "{d}");
    assert!(
        d["summary"].as_str().unwrap().contains("no answer within"),
        "{d}"
    );
}

/// The labelled containers on `daemon`: what `rocmenv gc` must have removed.
fn labelled(daemon: &SecondDaemon) -> String {
    let o = daemon
        .docker()
        .args(["ps", "-aq", "--filter", "label=rocmenv.managed"])
        .output()
        .unwrap();
    assert!(o.status.success(), "docker ps: {}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// Waits until the daemon shows a running container (the run's, or the build step's).
fn wait_for_container(daemon: &SecondDaemon, what: &str) {
    let start = Instant::now();
    loop {
        let o = daemon.docker().args(["ps", "-q"]).output().unwrap();
        if o.status.success() && !o.stdout.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{what}: no running container after 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn dockerd_killed_mid_run_and_mid_build_ends_in_one_line_and_gc_cleans_up_after_restart() {
    const TEST: &str = "engine_faults (killed dockerd)";
    if !is_root() {
        return skip(TEST, "a second dockerd needs root");
    }
    for tool in ["dockerd", "docker", "ip"] {
        if which::which(tool).is_err() {
            return skip(TEST, &format!("{tool} is not installed"));
        }
    }
    let Some(_shared) = common::daemon("engine_faults") else {
        return skip(TEST, "no shared Docker daemon to take the base image from");
    };
    let tmp = tempfile::Builder::new()
        .prefix("rocmenv-faults")
        .tempdir()
        .unwrap();
    let host = format!("unix://{}", tmp.path().join("docker.sock").display());
    let mut daemon = SecondDaemon::start(
        tmp.path(),
        &host,
        &[],
        Vec::new(),
        Bridge::create("rocmflt", 214),
    );
    daemon.load_from_shared(common::BASE);
    let config = tmp.path().join("docker-config");
    std::fs::create_dir(&config).unwrap();

    // Mid-run: the container prints, then sleeps; dockerd dies under it.
    let mut run = rocmenv_cmd(
        &host,
        &config,
        &[
            "run",
            "--vendor",
            "cpu",
            "--image",
            common::BASE,
            "--",
            "sh",
            "-c",
            "echo started; sleep 300",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut first = String::new();
    BufReader::new(run.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "started\n", "the container's output passes through");
    daemon.crash();
    let o = wait_bounded(
        run,
        Duration::from_secs(60),
        "rocmenv run after dockerd died",
    );
    assert_one_line(&o, 125, &[&host]);
    daemon.restart();
    let gc = rocmenv_cmd(&host, &config, &["gc"]).output().unwrap();
    assert_eq!(gc.status.code(), Some(0), "gc: {}", stderr(&gc));
    assert_eq!(labelled(&daemon), "", "gc left labelled containers");

    // Mid-build: a RUN step that sleeps; dockerd dies while its build container runs.
    let ctx = tmp.path().join("ctx");
    std::fs::create_dir(&ctx).unwrap();
    std::fs::write(
        ctx.join("Dockerfile"),
        format!("FROM {}\nRUN sleep 300\n", common::BASE),
    )
    .unwrap();
    let tag = "rocmenv-test/faults:killed";
    let build = rocmenv_cmd(
        &host,
        &config,
        &["build", "--context", ctx.to_str().unwrap(), "--tag", tag],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for_container(&daemon, "the build's RUN step");
    daemon.crash();
    let o = wait_bounded(
        build,
        Duration::from_secs(60),
        "rocmenv build after dockerd died",
    );
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(3), "stderr: {e}");
    let last = e.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("rocmenv: ") && last.contains(&host),
        "the last line names the daemon: {e}"
    );
    daemon.restart();
    let gc = rocmenv_cmd(&host, &config, &["gc"]).output().unwrap();
    assert_eq!(gc.status.code(), Some(0), "gc: {}", stderr(&gc));
    assert_eq!(labelled(&daemon), "", "gc left labelled containers");
    let img = daemon
        .docker()
        .args(["image", "inspect", tag])
        .output()
        .unwrap();
    assert!(!img.status.success(), "the interrupted build tagged {tag}");
}

/// A tmpfs of `pages` pages at `dir`, unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, pages: u32) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={}", pages * 4096),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }

    /// Fills it but `free` pages.
    fn fill_but(&self, free: u32) {
        let o = Command::new("sh")
            .arg("-c")
            .arg("dd if=/dev/zero of=\"$1/filler\" bs=4096 2>/dev/null; df -B4096 --output=avail \"$1\" | tail -1")
            .arg("sh")
            .arg(&self.0)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            "0",
            "the tmpfs is full"
        );
        // Give back `free` pages.
        let filler = self.0.join("filler");
        let len = std::fs::metadata(&filler).unwrap().len();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&filler)
            .unwrap();
        f.set_len(len - u64::from(free) * 4096).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_full_filesystem_gives_one_line_and_no_half_written_file() {
    const TEST: &str = "engine_faults (full filesystem)";
    if !is_root() {
        return skip(TEST, "mounting a tmpfs needs root");
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&tmp.path().join("small"), 16) else {
        return skip(TEST, "mount -t tmpfs failed");
    };
    // One free page: the Dockerfile's temp file fits, the next file does not.
    fs.fill_but(1);
    let out = fs.0.join("ctx");
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .args(["dockerfile", "--stack", "cpu", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_one_line(&o, 3, &["cannot write", "No space left on device"]);
    assert!(
        listing(&out).is_empty(),
        "a failed -o left files behind: {:?}",
        listing(&out)
    );

    // The smoke suite on the host unpacks under TMPDIR: a full one is one line, and nothing is left there.
    fs.fill_but(0);
    let o = Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .env("TMPDIR", &fs.0)
        .args(["smoke", "--host", "--vendor", "cpu"])
        .output()
        .unwrap();
    assert_one_line(&o, 3, &["No space left on device"]);
    assert_eq!(
        listing(&fs.0),
        ["ctx", "filler"],
        "the suite's temp dir was left"
    );
}
