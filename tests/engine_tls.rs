//! rocmenv against a second dockerd that listens on 127.0.0.1 with `--tlsverify` and certificates this test makes with
//! openssl (issue 12: CI reaches Docker over TCP+TLS or through a Docker context). doctor, run and a context work over
//! it; a wrong CA, a missing or expired client certificate, plain HTTP to the TLS port and an unknown context each end
//! in one line naming the endpoint or context, exit 125 from `run` and 3 from `build`. The shared daemon is never
//! touched: the second one has its own data-root, exec-root, pidfile, containerd namespace and bridge, and is stopped
//! at the end (never `--bridge=none`: at start-up moby deletes the default `docker0` bridge then, the shared daemon's).
//! A TLS proxy in front of the shared daemon's socket that checks client certificates (socat with `verify=1`, issue
//! 23) carries doctor and run, which open several connections each. Without root, dockerd, openssl or socat this
//! prints SKIP, unless ROCMENV_ENGINE_TESTS=1 makes that a failure.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;
#[allow(dead_code)]
#[path = "common/dockerd.rs"]
mod dockerd;

use dockerd::{assert_one_line, is_root, skip, stderr, Bridge, SecondDaemon};
use std::ffi::OsString;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn sh(dir: &Path, script: &str) -> Output {
    Command::new("sh")
        .args(["-ec", script])
        .current_dir(dir)
        .output()
        .expect("sh runs")
}

/// A CA, the daemon's certificate (for 127.0.0.1), a good client certificate, an expired one, and a second CA;
/// laid out as the DOCKER_CERT_PATH directories each case uses.
fn make_certs(dir: &Path) {
    let o = sh(
        dir,
        r#"
        q() { "$@" >/dev/null 2>&1 || { echo "failed: $*"; "$@"; exit 1; }; }
        q openssl req -x509 -newkey rsa:2048 -nodes -keyout ca-key.pem -out ca.pem -days 2 -subj /CN=rocmenv-test-ca
        q openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca-key.pem -out other-ca.pem -days 2 -subj /CN=other-ca
        q openssl req -newkey rsa:2048 -nodes -keyout server-key.pem -out server.csr -subj /CN=127.0.0.1
        printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > server.ext
        q openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -extfile server.ext -out server-cert.pem
        q openssl req -newkey rsa:2048 -nodes -keyout key.pem -out client.csr -subj /CN=rocmenv-test-client
        printf 'extendedKeyUsage=clientAuth\n' > client.ext
        q openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 2 -extfile client.ext -out cert.pem
        # -days -1 ends the validity a day before it starts: a certificate that has expired.
        q openssl x509 -req -in client.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days -1 -extfile client.ext -out expired-cert.pem
        mkdir good wrongca nocert expired
        cp ca.pem cert.pem key.pem good/
        cp other-ca.pem wrongca/ca.pem; cp cert.pem key.pem wrongca/
        cp ca.pem nocert/
        cp ca.pem key.pem expired/; cp expired-cert.pem expired/cert.pem
        "#,
    );
    assert!(
        o.status.success(),
        "openssl: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The TLS dockerd on a free port of 127.0.0.1; the docker CLI reaches it with the good certificates.
fn start_daemon(tmp: &Path, certs: &Path) -> SecondDaemon {
    let host = format!("tcp://127.0.0.1:{}", free_port());
    let tls: Vec<OsString> = vec![
        "--tlsverify".into(),
        "--tlscacert".into(),
        certs.join("ca.pem").into(),
        "--tlscert".into(),
        certs.join("server-cert.pem").into(),
        "--tlskey".into(),
        certs.join("server-key.pem").into(),
    ];
    let cli_env = vec![
        ("DOCKER_TLS_VERIFY".to_string(), "1".to_string()),
        (
            "DOCKER_CERT_PATH".to_string(),
            certs.join("good").display().to_string(),
        ),
    ];
    SecondDaemon::start(tmp, &host, &tls, cli_env, Bridge::create("rocmtls", 213))
}

/// rocmenv with only the Docker variables given (the test's own DOCKER_* are cleared, DOCKER_CONFIG is empty).
fn rocmenv(config: &Path, vars: &[(&str, String)], args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rocmenv"));
    c.args(args).env_remove("ROCMENV_MATRICES");
    for v in [
        "DOCKER_HOST",
        "DOCKER_TLS_VERIFY",
        "DOCKER_TLS",
        "DOCKER_CERT_PATH",
        "DOCKER_CONTEXT",
    ] {
        c.env_remove(v);
    }
    c.env("DOCKER_CONFIG", config);
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().expect("rocmenv runs")
}

/// doctor's `docker.daemon` finding as JSON.
fn doctor_docker(config: &Path, vars: &[(&str, String)]) -> serde_json::Value {
    let o = rocmenv(config, vars, &["doctor", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("doctor --json: {e}: {}", stderr(&o)));
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "docker.daemon")
        .cloned()
        .expect("a docker.daemon check")
}

/// One failure: the Docker variables, and what its one line must contain.
type Case<'a> = (Vec<(&'a str, String)>, Vec<&'a str>);

#[test]
fn doctor_run_and_contexts_over_tls_and_each_tls_failure_in_one_line() {
    if !is_root() {
        return skip("engine_tls", "a second dockerd needs root");
    }
    for tool in ["dockerd", "docker", "openssl", "ip"] {
        if which::which(tool).is_err() {
            return skip("engine_tls", &format!("{tool} is not installed"));
        }
    }
    // The base image comes from the shared daemon (made there by debootstrap), saved into the TLS daemon.
    let Some(_shared) = common::daemon("engine_tls") else {
        return skip(
            "engine_tls",
            "no shared Docker daemon to take the base image from",
        );
    };
    let tmp = tempfile::Builder::new()
        .prefix("rocmenv-tls")
        .tempdir()
        .unwrap();
    let certs = tmp.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    make_certs(&certs);
    let daemon = start_daemon(tmp.path(), &certs);
    let host = daemon.host.clone();
    daemon.load_from_shared(common::BASE);
    let config = tmp.path().join("docker-config");
    std::fs::create_dir(&config).unwrap();
    let tls = |dir: &str| {
        vec![
            ("DOCKER_HOST", host.clone()),
            ("DOCKER_TLS_VERIFY", "1".to_string()),
            ("DOCKER_CERT_PATH", certs.join(dir).display().to_string()),
        ]
    };

    // doctor and run, over TLS with DOCKER_HOST / DOCKER_TLS_VERIFY / DOCKER_CERT_PATH.
    let d = doctor_docker(&config, &tls("good"));
    assert_eq!(d["status"], "pass", "{d}");
    let summary = d["summary"].as_str().unwrap();
    assert!(
        summary.contains(&format!("answers at {host} (TLS, certificates in")),
        "{summary}"
    );
    let run_args = [
        "run",
        "--vendor",
        "cpu",
        "--image",
        common::BASE,
        "--",
        "sh",
        "-c",
        "echo over-tls",
    ];
    let o = rocmenv(&config, &tls("good"), &run_args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "over-tls\n");

    // A context made by the docker CLI in our DOCKER_CONFIG: by DOCKER_CONTEXT, then as currentContext.
    let good = certs.join("good");
    let made = daemon
        .docker()
        .env("DOCKER_CONFIG", &config)
        .args(["context", "create", "rocmenv-tls", "--docker"])
        .arg(format!(
            "host={host},ca={},cert={},key={}",
            good.join("ca.pem").display(),
            good.join("cert.pem").display(),
            good.join("key.pem").display()
        ))
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", stderr(&made));
    let o = rocmenv(
        &config,
        &[("DOCKER_CONTEXT", "rocmenv-tls".into())],
        &run_args,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "over-tls\n");
    std::fs::write(
        config.join("config.json"),
        r#"{"currentContext": "rocmenv-tls"}"#,
    )
    .unwrap();
    let d = doctor_docker(&config, &[]);
    assert_eq!(d["status"], "pass", "{d}");
    assert!(
        d["summary"]
            .as_str()
            .unwrap()
            .contains("(TLS, docker context rocmenv-tls)"),
        "{d}"
    );
    // DOCKER_HOST wins over the context, as in the docker CLI: plain HTTP to the TLS port says so.
    let o = rocmenv(&config, &[("DOCKER_HOST", host.clone())], &run_args);
    assert_one_line(
        &o,
        125,
        &[
            &host,
            "the daemon speaks TLS on this port: set DOCKER_TLS_VERIFY=1",
        ],
    );
    std::fs::remove_file(config.join("config.json")).unwrap();

    // Each failure: one line naming the endpoint and the cause; 125 from run, 3 from build, a failed doctor check.
    let wrong_ca = certs.join("wrongca/ca.pem").display().to_string();
    let nocert = certs.join("nocert/cert.pem").display().to_string();
    let expired = certs.join("expired/cert.pem").display().to_string();
    let cases: Vec<Case> = vec![
        (
            tls("wrongca"),
            vec![
                &host,
                "the daemon's certificate is not signed by the CA in",
                &wrong_ca,
            ],
        ),
        (
            tls("nocert"),
            vec![
                &host,
                "the daemon requires a client certificate and",
                &nocert,
                "does not exist",
            ],
        ),
        (
            tls("expired"),
            vec![
                &host,
                "the daemon refused the client certificate",
                &expired,
                "it expired on",
            ],
        ),
        (
            vec![("DOCKER_HOST", host.clone())],
            vec![&host, "the daemon speaks TLS on this port"],
        ),
        (
            vec![("DOCKER_CONTEXT", "no-such-context".into())],
            vec!["docker context no-such-context (named by DOCKER_CONTEXT): no such context in"],
        ),
    ];
    let build_dir = tmp.path().join("build");
    std::fs::create_dir(&build_dir).unwrap();
    std::fs::write(
        build_dir.join("Dockerfile"),
        format!("FROM {}\n", common::BASE),
    )
    .unwrap();
    let build_args = ["build", "--context", build_dir.to_str().unwrap()];
    // validate: a rocm stack for gfx1031 on the bare base builds in seconds without a registry (the image checks then
    // find no ROCm or torch in it, so it exits 1; what matters here is that it built and checked over TLS).
    let validate_yaml = tmp.path().join("rocmenv.yaml");
    std::fs::write(
        &validate_yaml,
        "schema_version: 1\nhost:\n  target: rocm-6.2\nstacks:\n  - name: rx6700\n    stack: rocm\n    rocm: \"6.2\"\n    gfx: [gfx1031]\n",
    )
    .unwrap();
    let report = tmp.path().join("validate.json");
    let validate_args = [
        "validate",
        "--config",
        validate_yaml.to_str().unwrap(),
        "--base",
        common::BASE,
        "--json",
        report.to_str().unwrap(),
    ];
    let o = rocmenv(&config, &tls("good"), &validate_args);
    assert_eq!(
        o.status.code(),
        Some(1),
        "validate over TLS: {}",
        stderr(&o)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let case = |id: &str| {
        v["stacks"][0]["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .map(|c| c["status"].as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no {id} case in {v}"))
    };
    assert_eq!(case("build.image"), "pass", "{v}");
    assert_eq!(case("image.hsa-override"), "pass", "{v}");
    for (vars, needles) in &cases {
        let o = rocmenv(&config, vars, &run_args);
        assert_one_line(&o, 125, needles);
        let o = rocmenv(&config, vars, &build_args);
        assert_one_line(&o, 3, needles);
        let o = rocmenv(&config, vars, &validate_args);
        assert_eq!(o.status.code(), Some(3), "validate: {}", stderr(&o));
        let last = stderr(&o);
        let last = last
            .trim_end()
            .lines()
            .last()
            .unwrap_or_default()
            .to_string();
        for n in needles {
            assert!(
                last.contains(n),
                "`{n}` not in validate's last line: {last}"
            );
        }
        let d = doctor_docker(&config, vars);
        assert_eq!(d["status"], "fail", "{d}");
        for n in needles {
            let all = format!("{} {}", d["summary"], d["fix"]);
            assert!(all.contains(n), "`{n}` not in doctor's {d}");
        }
    }

    // A context directory without meta.json names the directory.
    let broken = config
        .join("contexts/meta")
        .join(rocmenv::engine::context_dir_name("broken"));
    std::fs::create_dir_all(&broken).unwrap();
    let o = rocmenv(&config, &[("DOCKER_CONTEXT", "broken".into())], &run_args);
    assert_one_line(
        &o,
        125,
        &[
            "docker context broken (named by DOCKER_CONTEXT)",
            &format!("{} has no meta.json", broken.display()),
        ],
    );

    // Nothing was left on the TLS daemon.
    let ps = daemon.docker().args(["ps", "-aq"]).output().unwrap();
    assert!(ps.status.success(), "{}", stderr(&ps));
    assert!(
        ps.stdout.is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
}

/// A socat TLS proxy in front of a unix socket, killed when dropped; its log says why a handshake failed.
struct TlsProxy {
    child: Child,
    host: String,
    log: std::path::PathBuf,
}

impl TlsProxy {
    /// `socat openssl-listen:PORT,…,verify=1 unix-connect:SOCKET`, as people put one in front of a daemon: it
    /// demands a client certificate signed by `ca.pem` and sets no session id context, so it refuses resumption.
    fn start(certs: &Path, socket: &str, log: std::path::PathBuf) -> TlsProxy {
        let port = free_port();
        let listen = format!(
            "openssl-listen:{port},bind=127.0.0.1,reuseaddr,fork,cert={},key={},cafile={},verify=1",
            certs.join("server-cert.pem").display(),
            certs.join("server-key.pem").display(),
            certs.join("ca.pem").display()
        );
        // `-d -d` logs "listening on" once the port is open: a probe connection would log an error of its own.
        let child = Command::new("socat")
            .args(["-d", "-d", &listen, &format!("unix-connect:{socket}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("socat starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("listening on")) {
            assert!(Instant::now() < deadline, "socat does not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        TlsProxy {
            child,
            host: format!("tcp://127.0.0.1:{port}"),
            log,
        }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Issue 23: through a TLS proxy that checks client certificates, every connection after the first used to fail
/// ("received fatal alert: InternalError"; the proxy: "SSL_accept(): session id context uninitialized") because
/// rustls offered to resume the first session. doctor (version handshake, /version, /info) and two runs (inspect,
/// create, attach, start, wait, remove) each open several connections; all of them must pass.
#[test]
fn doctor_and_run_through_a_tls_proxy_that_checks_client_certificates() {
    let socket = "/var/run/docker.sock";
    for tool in ["socat", "openssl"] {
        if which::which(tool).is_err() {
            return skip("engine_tls proxy", &format!("{tool} is not installed"));
        }
    }
    if !Path::new(socket).exists() {
        return skip("engine_tls proxy", &format!("{socket} does not exist"));
    }
    let Some(_shared) = common::daemon("engine_tls proxy") else {
        return skip(
            "engine_tls proxy",
            "no shared Docker daemon to put the proxy in front of",
        );
    };
    let tmp = tempfile::Builder::new()
        .prefix("rocmenv-tls-proxy")
        .tempdir()
        .unwrap();
    let certs = tmp.path().join("certs");
    std::fs::create_dir(&certs).unwrap();
    make_certs(&certs);
    let proxy = TlsProxy::start(&certs, socket, tmp.path().join("socat.log"));
    let config = tmp.path().join("docker-config");
    std::fs::create_dir(&config).unwrap();
    let vars = vec![
        ("DOCKER_HOST", proxy.host.clone()),
        ("DOCKER_TLS_VERIFY", "1".to_string()),
        ("DOCKER_CERT_PATH", certs.join("good").display().to_string()),
    ];

    let d = doctor_docker(&config, &vars);
    assert_eq!(d["status"], "pass", "{d}\nproxy: {}", proxy.log());
    for n in 1..=2 {
        let o = rocmenv(
            &config,
            &vars,
            &[
                "run",
                "--vendor",
                "cpu",
                "--image",
                common::BASE,
                "--",
                "sh",
                "-c",
                &format!("echo through-proxy-{n}"),
            ],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "run {n}: {}\nproxy: {}",
            stderr(&o),
            proxy.log()
        );
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            format!("through-proxy-{n}\n")
        );
    }
    let log = proxy.log();
    assert!(
        !log.contains("SSL_accept"),
        "the proxy refused a handshake: {log}"
    );
    // No container of these runs is left (others' tests may use the shared daemon at the same time).
    let ps = Command::new("docker")
        .args(["ps", "-a", "--no-trunc", "--format", "{{.Command}}"])
        .output()
        .unwrap();
    assert!(ps.status.success(), "{}", stderr(&ps));
    let ps = String::from_utf8_lossy(&ps.stdout);
    assert!(!ps.contains("through-proxy"), "containers left: {ps}");
}
