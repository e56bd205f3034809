//! Issue 25, item 1: when no daemon can be used, doctor, run and gc tell apart a missing socket, a socket this user
//! may not open, and a socket nothing answers on, and each gives the one fix that applies. Run as a user outside the
//! docker group, rocmenv told people to `systemctl start docker` for a daemon that was running. The permission case
//! runs for real as another user (setpriv to `nobody`), against a root-only socket of the test's own and, when the
//! shared daemon is there, against /var/run/docker.sock; without root it prints SKIP.

#[allow(dead_code)]
#[path = "common/dockerd.rs"]
mod dockerd;

use dockerd::{is_root, stderr};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::process::{Command, Output};

/// The uid and gid of `nobody`, a user in no docker group.
const NOBODY: &str = "65534";

/// rocmenv `args` against `host`, as root or (with `as_nobody`) as `nobody`, with no Docker configuration of its own.
fn rocmenv(host: &str, home: &Path, as_nobody: bool, args: &[&str]) -> Output {
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    let mut c = if as_nobody {
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid",
            NOBODY,
            "--regid",
            NOBODY,
            "--clear-groups",
            "--",
            bin,
        ]);
        c
    } else {
        Command::new(bin)
    };
    c.args(args)
        .env("LC_ALL", "C.UTF-8")
        .env("HOME", home)
        .env("DOCKER_CONFIG", home.join("docker-config"))
        .env("DOCKER_HOST", host)
        .env_remove("DOCKER_TLS_VERIFY")
        .env_remove("DOCKER_CERT_PATH")
        .env_remove("DOCKER_CONTEXT")
        .env_remove("ROCMENV_MATRICES")
        .current_dir(home)
        .output()
        .expect("rocmenv runs")
}

/// doctor's `docker.daemon` line and its fix; run's and gc's one-line error: each names `want` and none names `wrong`.
fn assert_advice(host: &str, home: &Path, as_nobody: bool, want: &[&str], wrong: &[&str]) {
    let doctor = rocmenv(host, home, as_nobody, &["doctor"]);
    let text = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let daemon: String = text
        .lines()
        .skip_while(|l| !l.contains("docker.daemon") && !l.contains("container engine"))
        .take(3)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!daemon.is_empty(), "doctor shows no daemon check:\n{text}");
    for (what, o, code, shown) in [
        (
            "run",
            rocmenv(
                host,
                home,
                as_nobody,
                &["run", "--vendor", "cpu", "--image", "x", "--", "true"],
            ),
            Some(125),
            None,
        ),
        ("gc", rocmenv(host, home, as_nobody, &["gc"]), Some(3), None),
        ("doctor", doctor, None, Some(daemon)),
    ] {
        let said = shown.unwrap_or_else(|| {
            let e = stderr(&o);
            assert_eq!(o.status.code(), code, "{what}: {e}");
            assert_eq!(
                e.trim_end().lines().count(),
                1,
                "{what}: more than one line: {e}"
            );
            assert!(e.starts_with("rocmenv: "), "{what}: {e}");
            e
        });
        for w in want {
            assert!(said.contains(w), "{what}: `{w}` not in:\n{said}");
        }
        for w in wrong {
            assert!(
                !said.contains(w),
                "{what}: `{w}` is the wrong advice here:\n{said}"
            );
        }
    }
}

/// A socket file nothing listens on (its daemon died): start or restart it; nothing about groups.
#[test]
fn a_dead_socket_says_start_the_daemon_not_join_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("dead.sock");
    drop(UnixListener::bind(&sock).unwrap());
    let host = format!("unix://{}", sock.display());
    assert_advice(
        &host,
        dir.path(),
        false,
        &["no container engine answers", "systemctl restart docker"],
        &["usermod", "docker group"],
    );
}

/// No socket at all: start dockerd.
#[test]
fn a_missing_socket_says_start_dockerd() {
    let dir = tempfile::tempdir().unwrap();
    let host = format!("unix://{}/none.sock", dir.path().display());
    assert_advice(
        &host,
        dir.path(),
        false,
        &["does not exist", "systemctl start docker"],
        &["usermod", "docker group"],
    );
}

/// A user outside the docker group, for real: the daemon runs, so the fix is the group, never starting it.
#[test]
fn a_user_outside_the_docker_group_is_told_to_join_it() {
    if !is_root() {
        eprintln!("SKIP a_user_outside_the_docker_group_is_told_to_join_it: needs root to run rocmenv as another user (setpriv)");
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("SKIP a_user_outside_the_docker_group_is_told_to_join_it: setpriv (util-linux) is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    // A root-only socket that accepts connections, like dockerd's root:docker 0660 one seen from outside the group.
    let sock = dir.path().join("root-only.sock");
    let _listener = UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o600)).unwrap();
    let want = [
        "this user may not use the container engine",
        "usermod -aG docker",
    ];
    let wrong = ["systemctl start", "systemctl restart", "start dockerd"];
    assert_advice(
        &format!("unix://{}", sock.display()),
        dir.path(),
        true,
        &want,
        &wrong,
    );
    // The shared daemon's own socket, when it is there and closed to others.
    let docker = Path::new("/var/run/docker.sock");
    match std::fs::metadata(docker) {
        Ok(m) if m.permissions().mode() & 0o006 == 0 => assert_advice(
            "unix:///var/run/docker.sock",
            dir.path(),
            true,
            &want,
            &wrong,
        ),
        _ => eprintln!("SKIP (part) /var/run/docker.sock: absent or open to every user"),
    }
}
