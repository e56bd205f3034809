//! `rocmenv dockerfile`: snapshots of every stack's Dockerfile, base-image selection, hostile input and context writing.

use rocmenv::dockerfile::{render, DockerfileRequest, Stack};
use rocmenv::error::Error;
use rocmenv::matrix::Matrices;

/// Loaded once: parsing the YAML for each of the corpus's hundreds of renders is what made this suite slow.
fn m() -> &'static Matrices {
    static M: std::sync::OnceLock<Matrices> = std::sync::OnceLock::new();
    M.get_or_init(|| Matrices::embedded().expect("embedded matrices load"))
}

fn req(stack: Stack) -> DockerfileRequest {
    DockerfileRequest::new(stack)
}

fn dockerfile(r: &DockerfileRequest) -> String {
    render(r, m())
        .unwrap_or_else(|e| panic!("{r:?}: {e}"))
        .dockerfile
}

fn usage(r: &DockerfileRequest) -> (String, String) {
    usage_with(r, m())
}

fn usage_with(r: &DockerfileRequest, m: &Matrices) -> (String, String) {
    match render(r, m) {
        Err(Error::Invalid {
            fields, message, ..
        }) => (fields.join("/"), message),
        other => panic!("expected a usage error for {r:?}, got {other:?}"),
    }
}

/// Snapshots name the rocmenv version; redact it so a version bump does not rewrite them all. Only where the header
/// and the label name it (`rocmenv 0.1.0`, `version="0.1.0"`), so a ROCm release such as 10.1.0 is left alone.
fn stable(text: String) -> String {
    let v = env!("CARGO_PKG_VERSION");
    text.replace(&format!("rocmenv {v}"), "rocmenv <version>")
        .replace(&format!("version=\"{v}\""), "version=\"<version>\"")
}

#[test]
fn snapshot_rocm_default() {
    insta::assert_snapshot!("rocm-default", stable(dockerfile(&req(Stack::Rocm))));
}

#[test]
fn snapshot_rocm_62_gfx1031_everything() {
    let mut r = req(Stack::Rocm);
    r.rocm = Some("6.2".into());
    r.pytorch = Some("2.3".into());
    r.gfx = vec!["gfx1031".parse().unwrap()];
    r.env = vec![
        ("HSA_OVERRIDE_GFX_VERSION".into(), "10.3.0".into()),
        ("PYTORCH_ROCM_ARCH".into(), "gfx1030".into()),
    ];
    r.onnxruntime = true;
    r.with_smoke_tests = true;
    r.pip = vec!["numpy==1.26.4".into()];
    r.apt = vec!["vim".into()];
    insta::assert_snapshot!("rocm-6.2-gfx1031-full", stable(dockerfile(&r)));
}

#[test]
fn snapshot_rocm_57_old_tag_scheme() {
    let mut r = req(Stack::Rocm);
    r.rocm = Some("5.7".into());
    insta::assert_snapshot!("rocm-5.7", stable(dockerfile(&r)));
}

#[test]
fn snapshot_ngc_2405() {
    let mut r = req(Stack::Ngc);
    r.ngc = Some("24.05".into());
    insta::assert_snapshot!("ngc-24.05", stable(dockerfile(&r)));
}

#[test]
fn snapshot_ngc_driver_550() {
    let mut r = req(Stack::Ngc);
    r.driver = Some("550.54.15".parse().unwrap());
    insta::assert_snapshot!("ngc-driver-550", stable(dockerfile(&r)));
}

#[test]
fn ngc_driver_470_is_refused() {
    let mut r = req(Stack::Ngc);
    r.driver = Some("470.0".parse().unwrap());
    let (flag, message) = usage(&r);
    assert_eq!(flag, "driver");
    assert!(
        message.contains("no NGC PyTorch release runs on driver 470.0"),
        "{message}"
    );
    assert!(message.contains('≥'), "{message}");
}

#[test]
fn snapshot_cpu_default() {
    insta::assert_snapshot!("cpu-default", stable(dockerfile(&req(Stack::Cpu))));
}

#[test]
fn snapshot_cpu_base_pip_onnxruntime() {
    let mut r = req(Stack::Cpu);
    r.base = Some("localhost:5000/debian:bookworm".into());
    r.pip = vec!["transformers~=4.40".into()];
    r.onnxruntime = true;
    insta::assert_snapshot!("cpu-base-pip-onnxruntime", stable(dockerfile(&r)));
}

#[test]
fn dockerignore_lets_in_only_what_is_copied() {
    let mut r = req(Stack::Cpu);
    r.with_smoke_tests = true;
    let out = render(&r, m()).unwrap();
    let (_, ignore) = out
        .files
        .iter()
        .find(|(p, _)| p.as_os_str() == ".dockerignore")
        .unwrap();
    insta::assert_snapshot!(
        "dockerignore-smoke",
        stable(String::from_utf8(ignore.clone()).unwrap())
    );
}

#[path = "dockerfile/context.rs"]
mod context;
#[path = "dockerfile/hostile.rs"]
mod hostile;
#[path = "dockerfile/select.rs"]
mod select;
