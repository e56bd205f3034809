//! The hostile corpus: every value that could change a Dockerfile's meaning is refused, naming the flag.

use super::*;

/// `image_reference` with the parsed reference dropped, so it fits beside the other checks.
fn image_reference_unit(flag: &str, value: &str) -> Result<(), Error> {
    image_reference(flag, value).map(drop)
}

/// Values no check may accept, whatever the flag.
const HOSTILE: &[&str] = &[
    "",
    "numpy\n",
    "numpy\nRUN id",
    "numpy\r",
    "numpy\\\nRUN id",
    "numpy$(id)",
    "numpy${HOME}",
    "numpy`id`",
    "numpy'",
    "numpy\"",
    "numpy;id",
    "numpy&&id",
    "numpy|id",
    "numpy>/etc/x",
    "numpy</etc/passwd",
    "numpy 1",
    "numpy\t1",
    "numpy\0",
    "numpy\u{ff1b}id",
    "numpy\u{2215}x",
    "--index-url=http://evil",
    "-e git+https://evil/x.git",
    "numpy @ file:///etc/passwd",
    "numpy@file:///etc/passwd",
];

/// One of the checks in this module.
type Check = fn(&str, &str) -> Result<(), Error>;

fn refused(f: Check, flag: &str, value: &str) -> String {
    match f(flag, value) {
        Err(Error::Invalid {
            fields, message, ..
        }) => {
            let got = fields.join("/");
            assert_eq!(got, flag);
            message
        }
        other => panic!("{flag} {value:?} accepted: {other:?}"),
    }
}

#[test]
fn hostile_values_are_refused_by_every_check() {
    let checks: [(Check, &str); 4] = [
        (pip_requirement, "--pip"),
        (apt_package, "--apt"),
        (image_reference_unit, "--base"),
        (label_value, "--label"),
    ];
    for (check, flag) in checks {
        for bad in HOSTILE {
            // Spaces, `<`/`>`, `;`, `|` and `&` are fine inside a quoted label; the rest is not.
            if flag == "--label" && !bad.is_empty() && bad.chars().all(is_plain_text) {
                continue;
            }
            refused(check, flag, bad);
        }
    }
}

#[test]
fn messages_name_the_character() {
    let m = refused(pip_requirement, "--pip", "torch;rm -rf /");
    assert!(m.contains("contains `;`"), "{m}");
    assert!(m.contains("numpy==1.26.4"), "{m}");
    let m = refused(pip_requirement, "--pip", "numpy\nRUN id");
    assert!(m.contains("a newline"), "{m}");
    assert!(!m.contains('\n'), "message must not carry the newline: {m}");
    let m = refused(pip_requirement, "--pip", "numpy\u{ff1b}id");
    assert!(m.contains("U+FF1B"), "{m}");
    let m = refused(apt_package, "--apt", "vim`id`");
    assert!(m.contains("backtick"), "{m}");
    let m = refused(env_value, "--env", "a$(id)");
    assert!(m.contains("`$`"), "{m}");
    let m = refused(pip_requirement, "--pip", "--index-url=http://evil");
    assert!(m.contains("starts with `-`"), "{m}");
    let m = refused(label_value, "--label", "x\0");
    assert!(m.contains("NUL"), "{m}");
}

/// Issue 13: characters a terminal hides or obeys (NEL, a bidi override, a zero-width space) are named by code,
/// never printed as themselves.
#[test]
fn messages_never_print_invisible_characters() {
    for (c, named) in [
        ('\u{85}', "a control character (U+0085)"),
        ('\u{202e}', "an invisible character (U+202E, not ASCII)"),
        ('\u{200b}', "an invisible character (U+200B, not ASCII)"),
    ] {
        let m = refused(pip_requirement, "--pip", &format!("numpy{c}1"));
        assert!(m.contains(named), "{m}");
        assert!(!m.contains(c), "{m:?}");
    }
}

#[test]
fn long_and_empty_values_are_refused() {
    let long = "a".repeat(MAX_LEN + 1);
    for (check, flag) in [
        (pip_requirement as Check, "--pip"),
        (apt_package, "--apt"),
        (image_reference_unit, "--base"),
        (env_name, "--env"),
        (label_value, "--label"),
    ] {
        let m = refused(check, flag, &long);
        assert!(m.contains("at most 255"), "{m}");
        assert!(m.len() < 400, "message echoes the whole value: {}", m.len());
        refused(check, flag, "");
    }
    assert!(env_value("--env", "").is_ok());
}

#[test]
fn valid_pip_requirements() {
    for ok in [
        "numpy",
        "numpy==1.26.4",
        "torch>=2.1,<2.5",
        "transformers[torch]~=4.40",
        "a.b_c-d[x,y]===1.0+local",
        "pkg!=1.*",
        "pkg==1!2.0",
        "onnxruntime-gpu>1.17",
    ] {
        pip_requirement("--pip", ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in [
        ">=1.0",
        "numpy==",
        "numpy=1.0",
        "numpy[",
        "numpy[a,]",
        "numpy[a]b",
        "-numpy",
        "numpy-",
        "numpy==1.0,",
        "numpy<>1",
        "numpy==1.0;python_version<'3.9'",
    ] {
        refused(pip_requirement, "--pip", bad);
    }
}

#[test]
fn valid_apt_packages() {
    for ok in [
        "python3-numpy",
        "libstdc++6=12.2.0-14",
        "vim",
        "vim=2:9.0.1378-2",
        "g++",
        "libc6=2.36-9+deb12u4",
        "x11-common=1:7.7+23~rc1",
    ] {
        apt_package("--apt", ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in [
        "Vim",
        "v",
        "-vim",
        "vim=",
        "vim=~1",
        "vim=a:1",
        "vim=1:~x",
        "vim==1",
        "vim/bookworm",
        "vim*",
    ] {
        refused(apt_package, "--apt", bad);
    }
}

#[test]
fn valid_image_references() {
    let digest = format!("debian:bookworm-slim@sha256:{}", "ab12".repeat(16));
    for ok in [
        "rocm/pytorch:rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0",
        "nvcr.io/nvidia/pytorch:24.05-py3",
        "localhost:5000/x/y:z",
        "localhost:5000/debian:bookworm",
        "debian",
        "my-registry.example.com/a__b/c.d/e---f:1",
        digest.as_str(),
    ] {
        image_reference("--base", ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in [
        "Debian:12",
        "debian:",
        "debian@sha256:abc",
        &format!("debian@sha256:{}", "AB12".repeat(16)),
        "debian:-x",
        "/debian",
        "debian/",
        "a//b",
        "-a/b",
        "a/b_",
        "a/b...c",
        "localhost:port/x",
        "exa_mple.com:5000/x",
        &format!("debian:{}", "t".repeat(129)),
    ] {
        refused(image_reference_unit, "--base", bad);
    }
}

#[test]
fn env_names_and_values() {
    env_name("--env", "HSA_OVERRIDE_GFX_VERSION").unwrap();
    env_name("--env", "_X1").unwrap();
    for bad in ["1X", "lower", "A-B", "A B", "A=B", "A\n"] {
        refused(env_name, "--env", bad);
    }
    env_value("--env", "10.3.0").unwrap();
    env_value("--env", "gfx90a;gfx942 with spaces").unwrap();
    for bad in [
        "a\"b", "a\\", "$HOME", "${HOME}", "`id`", "a\nb", "a\tb", "é",
    ] {
        refused(env_value, "--env", bad);
    }
}
