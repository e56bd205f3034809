//! `--security strict` (issue 13): the shipped profile is Docker's default plus only the NUMA memory-policy rule, and a
//! CPU container runs under it for real, where `get_mempolicy` works, while under Docker's default profile it is
//! refused (EPERM) to a container without CAP_SYS_NICE.

#[allow(dead_code)]
#[path = "common/engine.rs"]
mod common;

use rocmenv::engine::{NUMA_SYSCALLS, STRICT_PROFILE};
use serde_json::Value;

/// Docker's default profile: the file ROCMENV_DOCKER_SECCOMP_DEFAULT names (`.ci/run` extracts it from Debian's
/// golang-github-docker-docker-dev, the profile of the dockerd the tests use). `None` after SKIP when unset, unless
/// ROCMENV_REQUIRE_DOCKER_SECCOMP=1.
fn docker_default() -> Option<Value> {
    let Ok(path) = std::env::var("ROCMENV_DOCKER_SECCOMP_DEFAULT") else {
        assert!(
            std::env::var("ROCMENV_REQUIRE_DOCKER_SECCOMP").as_deref() != Ok("1"),
            "ROCMENV_REQUIRE_DOCKER_SECCOMP=1 but ROCMENV_DOCKER_SECCOMP_DEFAULT is not set"
        );
        eprintln!(
            "SKIP seccomp: ROCMENV_DOCKER_SECCOMP_DEFAULT does not name Docker's default.json (scripts/gen-seccomp-strict \
             says where it comes from)"
        );
        return None;
    };
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    Some(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}")))
}

fn names(rule: &Value) -> Vec<&str> {
    rule["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

#[test]
fn the_strict_profile_is_dockers_default_plus_the_numa_rule_and_nothing_else() {
    let Some(default) = docker_default() else {
        return;
    };
    let mut strict: Value = serde_json::from_str(STRICT_PROFILE).unwrap();
    let rules = strict["syscalls"].as_array_mut().unwrap();
    let ours: Vec<usize> = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            r["comment"]
                .as_str()
                .is_some_and(|c| c.starts_with("rocmenv --security strict"))
        })
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ours.len(), 1, "one rule of rocmenv's own");
    let rule = rules.remove(ours[0]);
    assert_eq!(names(&rule), NUMA_SYSCALLS);
    assert_eq!(rule["action"], "SCMP_ACT_ALLOW");
    assert_eq!(rule["includes"], serde_json::json!({}), "no condition");
    assert_eq!(rule["excludes"], serde_json::json!({}), "no condition");
    // Without it, the profile is Docker's default, value for value.
    assert_eq!(strict, default, "the rest differs from Docker's default");
    // In Docker's default the NUMA calls are allowed only with CAP_SYS_NICE: that gate is what strict lifts.
    for call in NUMA_SYSCALLS {
        let gates: Vec<&Value> = default["syscalls"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| names(r).contains(&call))
            .map(|r| &r["includes"])
            .collect();
        assert_eq!(
            gates,
            [&serde_json::json!({"caps": ["CAP_SYS_NICE"]})],
            "{call} in Docker's default"
        );
    }
}

/// The `get_mempolicy(NULL, NULL, 0, NULL, 0)` result and errno, and the Seccomp mode, from inside the container.
const PROBE: &str = "import ctypes, os\n\
nr = {'x86_64': 239, 'aarch64': 236}[os.uname().machine]\n\
libc = ctypes.CDLL(None, use_errno=True)\n\
r = libc.syscall(nr, None, None, 0, None, 0)\n\
mode = [l.split()[1] for l in open('/proc/self/status') if l.startswith('Seccomp:')][0]\n\
print(r, ctypes.get_errno(), mode)\n";

#[test]
fn a_cpu_container_runs_under_the_strict_profile_and_may_set_its_memory_policy() {
    let Some(d) = common::daemon("seccomp") else {
        return;
    };
    let image = common::python_image(&d.engine);
    let run = |security: &str| {
        let o = common::rocmenv(&[
            "run",
            "--vendor",
            "cpu",
            "--security",
            security,
            "--image",
            &image,
            "--",
            "python3",
            "-c",
            PROBE,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "--security {security}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    // Filter mode (2) under both; the call succeeds only under strict.
    assert_eq!(
        run("strict"),
        "0 0 2",
        "get_mempolicy under --security strict"
    );
    assert_eq!(
        run("default"),
        "-1 1 2",
        "Docker's default profile refuses get_mempolicy (EPERM) without CAP_SYS_NICE"
    );
    common::assert_no_leftovers(&d.engine);
}
