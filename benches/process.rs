//! `rocmenv doctor` as people run it: a process, like for like with what it replaces. On the live host (Docker and
//! the HIP runtime asked, as a user's first run does) and on the two 8-GPU trees, beside
//! `python3 -m torch.utils.collect_env` (PyTorch's own environment report) in the same run when Debian's torch is
//! installed. Prints medians and the ratios; issue 37's goal for the process on the 8-GPU tree is ≤ 5 ms and ≥ 400×
//! faster than collect_env. `ROCMENV_BENCH_BASELINE=/path/to/an/older/rocmenv` times that binary on the same trees in
//! the same rounds, so a before and after compare on one machine under one load. Both are timed from copies in a
//! temporary directory, as `cargo install` or a package puts a binary in place (see `installed`).

#[path = "../link/script.rs"]
#[allow(dead_code)] // the bench reads the list; the script is build.rs's
mod script;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Rounds of every job. A doctor run varies by a tenth from one to the next on the development VM: 11 rounds once
/// put a build at 1.02× of the one before it, where 151 rounds right after put it at 0.91× (docs/performance.md).
const ROUNDS: usize = 31;
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

/// A copy of `from` in `dir`, timed instead of the file itself. The same bytes straight from the linker ran 15 to 20%
/// slower on the development VM (2026-12-07: doctor on the H100 tree 2.84 against 2.37 ms, `task-clock` 2.31 against
/// 1.87 ms) until the page cache was dropped: how the linker wrote the file into the cache, not the code. An installed
/// binary, or one read from disk after a reboot, runs like the copy; and a baseline copied by hand would otherwise
/// start with that advantage.
fn installed(dir: &Path, name: &str, from: &Path) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(from, &to)
        .unwrap_or_else(|e| panic!("copy {} to {}: {e}", from.display(), to.display()));
    to
}

/// How much of `link/hot-text.txt` this build placed first by exact name (build.rs `hot_text`): the rest of the list
/// is placed by name without hash, where the names' hashes moved since the list was made (a compiler or dependency
/// update, which `scripts/hot-text` follows).
fn hot_text(bin: &Path) -> String {
    use object::{Object, ObjectSection, ObjectSymbol};
    let list = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/link/hot-text.txt"))
        .unwrap_or_default();
    let listed: std::collections::HashSet<&str> = script::listed(&list).into_iter().collect();
    let bytes = std::fs::read(bin).expect("the binary reads");
    let file = object::File::parse(&*bytes).expect("the binary is an object file");
    let Some(hot) = file.section_by_name(".text.hot") else {
        return "SKIP text order: this build has no .text.hot section (build.rs orders release builds linked by \
                rustc 1.90's own lld on x86_64-unknown-linux-gnu only)"
            .into();
    };
    let range = hot.address()..hot.address() + hot.size();
    let placed = file
        .symbols()
        .filter(|s| range.contains(&s.address()))
        .filter(|s| s.name().is_ok_and(|n| listed.contains(n)))
        .count();
    format!(
        "text order: {placed} of the {} functions of link/hot-text.txt placed by exact name in .text.hot ({:.1} MB)",
        listed.len(),
        hot.size() as f64 / 1e6
    )
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The two 8-GPU trees: NVIDIA (the tree of the earlier figures) and AMD, whose health reads (RAS, AER, firmware
/// versions, the next boot) are the most a tree asks for.
const TREES: [(&str, &str); 2] = [
    ("h100-x8", "h100-x8-ubuntu2204"),
    ("mi300x-x8", "rhel94-mi300x-x8"),
];

fn main() {
    // `cargo test --benches` runs this too; only `cargo bench` (which passes --bench) measures.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let copies = tempfile::tempdir().expect("a temporary directory");
    let bin = installed(
        copies.path(),
        "rocmenv",
        Path::new(env!("CARGO_BIN_EXE_rocmenv")),
    );
    let bin: &'static Path = Box::leak(bin.into_boxed_path());
    let tree = |dir: &str| format!("{}/tests/fixtures/hosts/{dir}", env!("CARGO_MANIFEST_DIR"));
    let doctor = |program: &std::ffi::OsStr, dir: &str| {
        let mut c = Command::new(program);
        c.args(["doctor", "--json", "--sysroot", &tree(dir)]);
        c
    };
    let live = move || {
        let mut c = Command::new(bin);
        c.args(["doctor", "--json"]);
        c
    };
    let baseline_given = std::env::var_os("ROCMENV_BENCH_BASELINE");
    let baseline = baseline_given
        .as_ref()
        .map(|b| installed(copies.path(), "baseline", Path::new(b)).into_os_string());
    let torch = Command::new(PYTHON)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    let collect_env = || {
        let mut c = Command::new(PYTHON);
        c.args(["-m", "torch.utils.collect_env"]);
        c
    };
    // What each round runs, in turn: the live host, each tree with this build (and the baseline), collect_env.
    let mut jobs: Vec<(String, Box<dyn Fn() -> Command>)> = vec![("live".into(), Box::new(live))];
    for (name, dir) in TREES {
        jobs.push((name.into(), Box::new(move || doctor(bin.as_os_str(), dir))));
        if let Some(b) = baseline.clone() {
            jobs.push((
                format!("baseline {name}"),
                Box::new(move || doctor(&b, dir)),
            ));
        }
    }
    if torch {
        jobs.push(("collect_env".into(), Box::new(collect_env)));
    }
    // Warm-up: page cache and the daemon's first answer.
    for (_, job) in &jobs {
        time(&mut job());
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); jobs.len()];
    for round in 0..ROUNDS {
        // A new order each round (seeded, so a rerun repeats it): each job follows every other in turn. Rotating one
        // order kept each job's neighbour: the baseline ran right after this build on the same tree, its caches warm,
        // and this build's first tree right after the live run.
        let mut order: Vec<usize> = (0..jobs.len()).collect();
        fastrand::Rng::with_seed(round as u64).shuffle(&mut order);
        for i in order {
            times[i].push(time(&mut jobs[i].1()));
        }
    }
    println!("{}", hot_text(bin));
    let medians: Vec<(String, Duration)> = jobs
        .iter()
        .zip(times)
        .map(|((name, _), t)| (name.clone(), median(t)))
        .collect();
    let of = |name: &str| medians.iter().find(|(n, _)| n == name).map(|(_, d)| *d);
    println!(
        "rocmenv doctor --json (live host, Docker and HIP asked): median {:.1} ms over {ROUNDS}",
        ms(of("live").unwrap())
    );
    for (name, dir) in TREES {
        let t = of(name).unwrap();
        println!(
            "rocmenv doctor --json --sysroot {dir}: median {:.1} ms over {ROUNDS}",
            ms(t)
        );
        if let (Some(path), Some(b)) = (&baseline_given, of(&format!("baseline {name}"))) {
            println!(
                "  baseline {} on the same tree: median {:.1} ms (this build takes {:.2}× its time)",
                path.to_string_lossy(),
                ms(b),
                ms(t) / ms(b)
            );
        }
    }
    match of("collect_env") {
        Some(p) => {
            println!(
                "python3 -m torch.utils.collect_env: median {:.1} ms over {ROUNDS}",
                ms(p)
            );
            println!(
                "ratio doctor (live) / collect_env: {:.3}",
                ms(of("live").unwrap()) / ms(p)
            );
            for (name, _) in TREES {
                println!(
                    "doctor ({name} tree) is {:.0}× faster than collect_env (issue 37: ≤ 5 ms, ≥ 400×)",
                    ms(p) / ms(of(name).unwrap())
                );
            }
        }
        None => println!("SKIP collect_env: {PYTHON} has no torch (apt-get install python3-torch)"),
    }
}
