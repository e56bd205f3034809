//! A second dockerd for the tests that must not touch the shared one: its own data-root, exec-root, pidfile,
//! containerd namespace (in the shared containerd) and bridge. It can be killed (SIGKILL, as a crash) and restarted on
//! the same state. Dropping it stops it and removes what it made. Used by engine_tls.rs and engine_faults.rs.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A bridge of the test's own for the second daemon (its default network); dropping it deletes the bridge.
/// Never `--bridge=none`: at start-up moby deletes the default `docker0` bridge then, the shared daemon's.
pub struct Bridge(pub String);

impl Bridge {
    /// `<prefix><pid>` with 10.N.M.1/24 from the pid and `net`: no clash with docker0's 172.17/16 or another test.
    pub fn create(prefix: &str, net: u8) -> Bridge {
        let pid = std::process::id();
        let name = format!("{prefix}{}", pid % 10_000_000);
        let cidr = format!("10.{net}.{}.1/24", pid % 250 + 1);
        let b = Bridge(name.clone());
        for args in [
            vec!["link", "add", &name, "type", "bridge"],
            vec!["addr", "add", &cidr, "dev", &name],
            vec!["link", "set", &name, "up"],
        ] {
            let o = Command::new("ip").args(&args).output().expect("ip runs");
            assert!(
                o.status.success(),
                "ip {args:?}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        b
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "delete", &self.0])
            .stderr(Stdio::null())
            .status();
    }
}

/// The second dockerd.
pub struct SecondDaemon {
    child: Option<Child>,
    _bridge: Bridge,
    /// The `-H` address, as DOCKER_HOST names it.
    pub host: String,
    /// Variables the docker CLI needs beside DOCKER_HOST (TLS), for the readiness check and `docker()`.
    pub cli_env: Vec<(String, String)>,
    namespace: String,
    containerd: Option<PathBuf>,
    cmd_args: Vec<OsString>,
    /// The daemon's log (stdout; stderr is `log.err` beside it).
    pub log: PathBuf,
}

impl SecondDaemon {
    /// Starts dockerd under `dir` listening on `host` (`unix:///…` or `tcp://127.0.0.1:…`), with `extra` flags
    /// (TLS); waits up to 60 s for it to answer.
    pub fn start(
        dir: &Path,
        host: &str,
        extra: &[OsString],
        cli_env: Vec<(String, String)>,
        bridge: Bridge,
    ) -> SecondDaemon {
        let namespace = format!(
            "rocmenv-test-{}-{}",
            bridge.0.trim_end_matches(|c: char| c.is_ascii_digit()),
            std::process::id()
        );
        // The shared daemon's containerd, in a namespace of our own; without one, dockerd starts its own.
        let containerd = [
            "/var/run/docker/containerd/containerd.sock",
            "/run/containerd/containerd.sock",
        ]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
        let d = dir.join("dockerd");
        for sub in ["data", "exec"] {
            std::fs::create_dir_all(d.join(sub)).unwrap();
        }
        // An empty daemon.json, so the host's /etc/docker/daemon.json (hosts, bridges) cannot clash with our flags.
        std::fs::write(d.join("daemon.json"), "{}").unwrap();
        let mut args: Vec<OsString> = vec!["--config-file".into(), d.join("daemon.json").into()];
        args.extend(extra.iter().cloned());
        args.extend(["-H".into(), host.into()]);
        args.extend(["--data-root".into(), d.join("data").into()]);
        args.extend(["--exec-root".into(), d.join("exec").into()]);
        args.extend(["--pidfile".into(), d.join("pid").into()]);
        args.push(format!("--bridge={}", bridge.0).into());
        for a in ["--iptables=false", "--ip-masq=false", "--ip-forward=false"] {
            args.push(a.into());
        }
        if let Some(sock) = &containerd {
            args.extend(["--containerd".into(), sock.into()]);
            args.extend(["--containerd-namespace".into(), namespace.clone().into()]);
            args.extend([
                "--containerd-plugins-namespace".into(),
                format!("{namespace}-plugins").into(),
            ]);
        }
        let mut daemon = SecondDaemon {
            child: None,
            _bridge: bridge,
            host: host.to_string(),
            cli_env,
            namespace,
            containerd,
            cmd_args: args,
            log: d.join("log"),
        };
        daemon.spawn();
        daemon
    }

    fn spawn(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let err = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log.with_extension("err"))
            .unwrap();
        let child = Command::new("dockerd")
            .args(&self.cmd_args)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .expect("dockerd starts");
        self.child = Some(child);
        let start = Instant::now();
        loop {
            let ok = self
                .docker()
                .args(["version", "--format", "{{.Server.Version}}"])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the second dockerd did not come up in 60 s: {}{}",
                std::fs::read_to_string(&self.log).unwrap_or_default(),
                std::fs::read_to_string(self.log.with_extension("err")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The docker CLI against this daemon.
    pub fn docker(&self) -> Command {
        let mut c = Command::new("docker");
        c.env("DOCKER_HOST", &self.host)
            .env_remove("DOCKER_CONTEXT");
        for (k, v) in &self.cli_env {
            c.env(k, v);
        }
        c
    }

    /// Kills dockerd with SIGKILL, as a crash or the OOM killer would, and reaps it.
    pub fn crash(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts dockerd again on the same state, after `crash`.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "restart after crash");
        // A killed dockerd leaves its pidfile; the new one refuses to start while the file names a live process only.
        self.spawn();
    }

    /// Copies `image` from the shared daemon into this one.
    pub fn load_from_shared(&self, image: &str) {
        let mut save = Command::new("docker")
            .args(["save", image])
            .env_remove("DOCKER_HOST")
            .env_remove("DOCKER_CONTEXT")
            .stdout(Stdio::piped())
            .spawn()
            .expect("docker save runs");
        let o = self
            .docker()
            .args(["load", "-q"])
            .stdin(save.stdout.take().unwrap())
            .output()
            .expect("docker load runs");
        assert!(save.wait().unwrap().success(), "docker save {image}");
        assert!(
            o.status.success(),
            "docker load: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

impl Drop for SecondDaemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on our own child's pid; no memory is touched.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(20) {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(sock) = &self.containerd {
            for ns in [
                self.namespace.clone(),
                format!("{}-plugins", self.namespace),
            ] {
                let _ = Command::new("ctr")
                    .args(["--address", &sock.display().to_string()])
                    .args(["namespaces", "remove", &ns])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// True when the engine tests must run (CI): a missing prerequisite is then a failure.
pub fn required() -> bool {
    std::env::var("ROCMENV_ENGINE_TESTS").as_deref() == Ok("1")
}

/// Prints SKIP with the reason, or fails when the engine tests are required.
pub fn skip(test: &str, why: &str) {
    assert!(!required(), "ROCMENV_ENGINE_TESTS=1 but {why}");
    eprintln!("SKIP {test}: {why} (set ROCMENV_ENGINE_TESTS=1 to make this a failure)");
}

/// A process's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exactly one line on stderr, `rocmenv: …`, containing each needle, and the exit code.
pub fn assert_one_line(o: &Output, code: i32, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "more than one line: {e}");
    assert!(e.starts_with("rocmenv: "), "{e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` not in: {e}");
    }
}

/// True when the tests run as root (a second dockerd, a tmpfs mount).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}
