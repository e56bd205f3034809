//! Issue 34: support as AMD and NVIDIA state it. What the matrices do not know is "unknown", never "no";
//! NGC data-center driver branches; support per GPU model, not only per gfx target.

use std::process::{Command, Output};

fn rocmenv(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rocmenv"))
        .args(args)
        .env_remove("ROCMENV_MATRICES")
        .env("NO_COLOR", "1")
        .output()
        .expect("runs")
}

/// `env --gfx gfx90c --rocm 6.2.4`: 6.2.4 has no `built:` data, so whether it ships gfx900 kernels is unknown.
/// env answers with the override the field uses (9.0.0), and says on stderr that it is unconfirmed and which
/// release has data, instead of refusing with "its override target is not built either".
#[test]
fn unknown_built_data_gives_the_field_override_marked_unconfirmed() {
    let o = rocmenv(&["env", "--gfx", "gfx90c", "--rocm", "6.2.4"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    assert!(
        out.lines()
            .any(|l| l == "export HSA_OVERRIDE_GFX_VERSION='9.0.0'"),
        "{out}"
    );
    assert!(err.contains("unconfirmed"), "{err}");
    assert!(err.contains("nearest release with data: 6.2.2"), "{err}");
    assert!(!err.contains("not built"), "{err}");
}

/// `matrix gfx gfx90c` shows the releases without data as "unknown", and "not" only where a `built:` list
/// leaves gfx900 out (6.4.0).
#[test]
fn matrix_gfx_shows_unknown_ranges_as_such() {
    let o = rocmenv(&["matrix", "gfx", "gfx90c"]);
    let t = String::from_utf8(o.stdout).unwrap();
    assert_eq!(o.status.code(), Some(0), "{t}");
    let line = |v: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(v))
            .unwrap_or_else(|| panic!("{v}: {t}"))
            .to_string()
    };
    for v in ["5.7.0", "6.2.4", "10.1.0"] {
        let l = line(v);
        assert!(
            l.contains("unknown (no built data): override to gfx900"),
            "{l}"
        );
        assert!(l.contains("unconfirmed"), "{l}");
        assert!(!l.contains("not built"), "{l}");
    }
    assert!(
        line("6.4.0").contains("not: its override target is not built"),
        "{t}"
    );
    assert!(line("10.0.0").contains("override to gfx900"), "{t}");

    let o = rocmenv(&["matrix", "gfx", "gfx90c", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = d["gfx"]["releases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["version"] == "6.2.4")
        .unwrap()
        .clone();
    assert_eq!(row["runs"], "override-unknown", "{row}");
    assert_eq!(row["hsa_override_gfx_version"], "9.0.0", "{row}");
    assert_eq!(row["nearest_known"], "6.2.2", "{row}");
}
