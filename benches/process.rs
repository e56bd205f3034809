//! `rocmenv doctor` as people run it: a process, like for like with what it replaces. On the live host (Docker and
//! the HIP runtime asked, as a user's first run does) and on the 8-GPU tree, beside `python3 -m torch.utils.collect_env`
//! (PyTorch's own environment report) in the same run when Debian's torch is installed. Prints medians and the ratios;
//! issue 23's goal for the process on a host tree is ≤ 4 ms, ≥ 400× faster than collect_env; issue 37's is ≤ 5 ms.
//! `ROCMENV_BENCH_BASELINE=/path/to/an/older/rocmenv` times that binary on the same tree in the same rounds, so a
//! before and after compare on one machine under one load.

use std::process::Command;
use std::time::{Duration, Instant};

const ROUNDS: usize = 11;
const PYTHON: &str = "/usr/bin/python3";

fn time(cmd: &mut Command) -> Duration {
    let start = Instant::now();
    let o = cmd.output().expect("runs");
    // doctor exits 1 on a host with failing checks: that is a verdict, not a failed run.
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // `cargo test --benches` runs this too; only `cargo bench` (which passes --bench) measures.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_rocmenv");
    let tree = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/hosts/h100-x8-ubuntu2204"
    );
    let live = || {
        let mut c = Command::new(bin);
        c.args(["doctor", "--json"]);
        c
    };
    let fixture = || {
        let mut c = Command::new(bin);
        c.args(["doctor", "--json", "--sysroot", tree]);
        c
    };
    let baseline = std::env::var_os("ROCMENV_BENCH_BASELINE");
    let old_fixture = || {
        let mut c = Command::new(baseline.as_ref().expect("a baseline"));
        c.args(["doctor", "--json", "--sysroot", tree]);
        c
    };
    let torch = Command::new(PYTHON)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    let collect_env = || {
        let mut c = Command::new(PYTHON);
        c.args(["-m", "torch.utils.collect_env"]);
        c
    };
    // Warm-up: page cache and the daemon's first answer.
    time(&mut live());
    time(&mut fixture());
    if torch {
        time(&mut collect_env());
    }
    if baseline.is_some() {
        time(&mut old_fixture());
    }
    let (mut l, mut f, mut p, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        // Each takes its turn going first.
        let mut order: Vec<u8> = vec![0, 1, 2, 3];
        order.rotate_left(round % 4);
        for which in order {
            match which {
                0 => l.push(time(&mut live())),
                1 => f.push(time(&mut fixture())),
                2 if torch => p.push(time(&mut collect_env())),
                3 if baseline.is_some() => b.push(time(&mut old_fixture())),
                _ => {}
            }
        }
    }
    let (l, f) = (median(l), median(f));
    println!(
        "rocmenv doctor --json (live host, Docker and HIP asked): median {:.1} ms over {ROUNDS}",
        ms(l)
    );
    println!(
        "rocmenv doctor --json --sysroot h100-x8 tree:           median {:.1} ms over {ROUNDS}",
        ms(f)
    );
    if let Some(path) = &baseline {
        let b = median(b);
        println!(
            "baseline {} on the same tree:  median {:.1} ms over {ROUNDS} (this build takes {:.2}× its time)",
            path.to_string_lossy(),
            ms(b),
            ms(f) / ms(b)
        );
    }
    if torch {
        let p = median(p);
        println!("python3 -m torch.utils.collect_env:                      median {:.1} ms over {ROUNDS}", ms(p));
        println!("ratio doctor (live) / collect_env: {:.3}", ms(l) / ms(p));
        println!(
            "doctor (tree) is {:.0}× faster than collect_env (goal ≥ 400×, ≤ 4 ms)",
            ms(p) / ms(f)
        );
    } else {
        println!("SKIP collect_env: {PYTHON} has no torch (apt-get install python3-torch)");
    }
}
