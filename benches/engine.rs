//! `rocmenv run` against `docker run --rm` (same trivial command, same daemon; goal: ratio ≤ 1.00, rocmenv never slower
//! than the CLI it replaces), and the time of an unchanged `rocmenv build` (a cache hit; target ≤ 0.5 s). Both sides are
//! warmed up and take turns going first. Prints the figures; skips when no daemon answers.

use rocmenv::engine::Engine;
use std::process::Command;
use std::time::{Duration, Instant};

const IMAGE: &str = "rocmenv-test/bookworm:base";
const ROUNDS: usize = 15;

fn time(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let o = cmd.output().expect("runs");
    assert!(
        o.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo test --benches` runs this too; only `cargo bench` (which passes --bench) measures.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let engine = match Engine::connect_default() {
        Ok(e) => e,
        Err(e) => return println!("SKIP engine bench: {e}"),
    };
    let have_image = Command::new("docker")
        .args(["image", "inspect", IMAGE])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_image {
        return println!(
            "SKIP engine bench: {IMAGE} is missing (run the engine tests once to import it)"
        );
    }
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    let ours_cmd = || {
        let mut c = Command::new(bin);
        c.args(["run", "--vendor", "cpu", "--image", IMAGE, "--", "true"]);
        c
    };
    let docker_cmd = || {
        let mut c = Command::new("docker");
        c.args(["run", "--rm", IMAGE, "true"]);
        c
    };
    // Warm-up: the first container of a run pays for caches neither side should be charged for.
    for _ in 0..3 {
        time(&mut ours_cmd());
        time(&mut docker_cmd());
    }
    let (mut ours, mut docker) = (Vec::new(), Vec::new());
    // Interleaved, each side first in turn, so drift in the daemon's speed hits both sides alike.
    for round in 0..ROUNDS {
        if round % 2 == 0 {
            ours.push(time(&mut ours_cmd()));
            docker.push(time(&mut docker_cmd()));
        } else {
            docker.push(time(&mut docker_cmd()));
            ours.push(time(&mut ours_cmd()));
        }
    }
    let (o, d) = (median(ours), median(docker));
    println!(
        "rocmenv run --vendor cpu … true: median {:.0} ms over {ROUNDS}",
        o.as_secs_f64() * 1e3
    );
    println!(
        "docker run --rm … true:          median {:.0} ms over {ROUNDS}",
        d.as_secs_f64() * 1e3
    );
    println!(
        "ratio rocmenv / docker: {:.2} (goal ≤ 1.00)",
        o.as_secs_f64() / d.as_secs_f64()
    );

    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("Dockerfile"),
        format!("FROM {IMAGE}\nLABEL bench=engine\n"),
    )
    .expect("write");
    let ctx = dir.path().to_str().expect("utf-8 path");
    time(Command::new(bin).args(["build", "--context", ctx]));
    let hits: Vec<Duration> = (0..ROUNDS)
        .map(|_| time(Command::new(bin).args(["build", "--context", ctx])))
        .collect();
    println!("rocmenv build (unchanged context, cache hit): median {:.0} ms over {ROUNDS} (target ≤ 500 ms)", median(hits).as_secs_f64() * 1e3);
    drop(engine);
}
