//! Shared setup for the tests against a real Docker daemon: one at a time, the base image made locally, skip rules.

use rocmenv::engine::{self, BuildEvent, Engine};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The base image every test Dockerfile starts from, imported from a debootstrap tree (no registry is needed).
pub const BASE: &str = "rocmenv-test/bookworm:base";

static SERIAL: Mutex<()> = Mutex::new(());
static PYTHON_IMAGE: OnceLock<String> = OnceLock::new();

/// A test's hold on the daemon: the lock (tests share one daemon) and a connection.
pub struct Daemon {
    /// Connected engine.
    pub engine: Engine,
    _lock: MutexGuard<'static, ()>,
}

/// True when the tests must run (CI): a missing daemon is then a failure, not a skip.
fn required() -> bool {
    std::env::var("ROCMENV_ENGINE_TESTS").as_deref() == Ok("1")
}

/// The daemon, or `None` (after printing SKIP) when none answers and the tests are not required.
pub fn daemon(test: &str) -> Option<Daemon> {
    let lock = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let engine = match Engine::connect_default() {
        Ok(e) => e,
        Err(e) if required() => panic!("ROCMENV_ENGINE_TESTS=1 but no daemon answers: {e}"),
        Err(e) => {
            eprintln!("SKIP {test}: {e} (set ROCMENV_ENGINE_TESTS=1 to make this a failure)");
            return None;
        }
    };
    ensure_base();
    Some(Daemon {
        engine,
        _lock: lock,
    })
}

fn sh(cmd: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .output()
        .expect("sh runs")
}

/// Imports the base image from a cached debootstrap tarball, making the tarball first on a fresh machine.
fn ensure_base() {
    ensure_debootstrap_image("bookworm", BASE);
}

/// Debian 11's minimal tree as an image: glibc 2.31, the glibc of Ubuntu 20.04 and its rocm/pytorch images.
pub const BULLSEYE: &str = "rocmenv-test/bullseye:base";

/// Makes `BULLSEYE` on first use (debootstrap, cached like the bookworm base).
pub fn bullseye() -> &'static str {
    ensure_debootstrap_image("bullseye", BULLSEYE);
    BULLSEYE
}

/// `debootstrap --variant=minbase SUITE` imported as `tag`; the tarball is cached so a machine makes it once.
fn ensure_debootstrap_image(suite: &str, tag: &str) {
    if sh(&format!("docker image inspect {tag} >/dev/null 2>&1"))
        .status
        .success()
    {
        return;
    }
    let cache = std::env::var("ROCMENV_TEST_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or("/tmp".into())).join(".cache/rocmenv")
        });
    let tarball = cache.join(format!("{suite}-minbase.tar"));
    if !tarball.exists() {
        std::fs::create_dir_all(&cache).expect("cache dir");
        let tmp = tempfile::tempdir().expect("tempdir");
        let d = tmp.path().display();
        let o = sh(&format!(
            "debootstrap --variant=minbase {suite} {d}/root >{d}/log 2>&1 && tar -C {d}/root -cf {t}.part . && mv {t}.part {t} || {{ tail -20 {d}/log; exit 1; }}",
            t = tarball.display()
        ));
        assert!(
            o.status.success(),
            "debootstrap {suite} failed (apt-get install debootstrap?): {}",
            String::from_utf8_lossy(&o.stdout)
        );
    }
    let o = sh(&format!("docker import {} {tag}", tarball.display()));
    assert!(
        o.status.success(),
        "docker import: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The portable build (`scripts/build-portable`) named by `ROCMENV_PORTABLE_BIN`, or `None` after printing SKIP.
/// CI sets `ROCMENV_REQUIRE_PORTABLE=1`, which makes its absence a failure.
pub fn portable_binary(test: &str) -> Option<PathBuf> {
    match std::env::var_os("ROCMENV_PORTABLE_BIN") {
        Some(p) => {
            let p = PathBuf::from(p);
            assert!(
                p.is_file(),
                "ROCMENV_PORTABLE_BIN={} is not a file",
                p.display()
            );
            Some(p)
        }
        None if std::env::var("ROCMENV_REQUIRE_PORTABLE").as_deref() == Ok("1") => {
            panic!("ROCMENV_REQUIRE_PORTABLE=1 but ROCMENV_PORTABLE_BIN is not set (scripts/build-portable prints it)")
        }
        None => {
            eprintln!("SKIP {test}: ROCMENV_PORTABLE_BIN is not set (build it with scripts/build-portable)");
            None
        }
    }
}

/// Builds an inline Dockerfile as `rocmenv/<stack>:<hash>` and returns the outcome or the error, with its events.
pub fn build(
    e: &Engine,
    stack: &str,
    dockerfile: &str,
) -> (
    Result<engine::BuildOutcome, rocmenv::error::Error>,
    Vec<BuildEvent>,
) {
    let mut events = Vec::new();
    let files = vec![(PathBuf::from("Dockerfile"), dockerfile.as_bytes().to_vec())];
    let r = engine::build_files(e, &files, stack, &[], &mut |ev| events.push(ev));
    (r, events)
}

/// An image with Debian's python3, built once per test process.
pub fn python_image(e: &Engine) -> String {
    PYTHON_IMAGE
        .get_or_init(|| {
            let df = format!("FROM {BASE}\nRUN apt-get update && apt-get install -y --no-install-recommends python3 && rm -rf /var/lib/apt/lists/*\n");
            let (r, ev) = build(e, "test-python", &df);
            r.unwrap_or_else(|err| panic!("python image: {err}; events: {ev:?}")).tag
        })
        .clone()
}

/// An image with Debian's HIP 5.2 runtime (`libamdhip64-5`): without /dev/kfd it answers `hipErrorNoDevice`.
pub fn hip_image(e: &Engine) -> String {
    let df = format!("FROM {BASE}\nRUN apt-get update && apt-get install -y --no-install-recommends libamdhip64-5 && rm -rf /var/lib/apt/lists/*\n");
    let (r, ev) = build(e, "test-hip", &df);
    r.unwrap_or_else(|err| panic!("hip image: {err}; events: {ev:?}"))
        .tag
}

/// Runs the binary with `args`.
pub fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env("LC_ALL", "C.UTF-8")
        .env_remove("ROCMENV_MATRICES")
        .output()
        .expect("runs")
}

/// Fails when any container with the managed label is left.
pub fn assert_no_leftovers(e: &Engine) {
    let left = e.managed_containers().expect("list");
    assert!(left.is_empty(), "containers left behind: {left:?}");
}
