//! One AFL++ binary for every fuzz target: `rocmenv-fuzz TARGET` (the names `rocmenv-fuzz --list` prints) runs
//! `targets::TARGET` on each input AFL gives it, in persistent mode.

mod targets;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    if name == "--list" {
        for (n, _) in targets::TARGETS {
            println!("{n}");
        }
        return;
    }
    let Some(run) = targets::target(&name) else {
        eprintln!("usage: rocmenv-fuzz TARGET (one of: `rocmenv-fuzz --list`)");
        std::process::exit(2);
    };
    afl::fuzz!(|data: &[u8]| run(data));
}
