//! The Dockerfile requests the tests render: each stack with old, middle and newest versions, and the optional
//! layers. hadolint lints them (tests/hadolint.rs), and so does `rocmenv lint` (tests/lint.rs).

use rocmenv::dockerfile::{DockerfileRequest, Stack};
use rocmenv::matrix::Matrices;

/// The requests to lint: each stack with old, middle and newest versions, and the optional layers.
pub fn cases(m: &Matrices) -> Vec<(String, DockerfileRequest)> {
    let mut out = Vec::new();
    for rocm in ["5.7", "6.2", "7.2"] {
        let mut r = DockerfileRequest::new(Stack::Rocm);
        r.rocm = Some(rocm.into());
        out.push((format!("rocm-{rocm}"), r));
    }
    // The default: the newest release with an image or wheels (a Core SDK release: wheels on ubuntu:24.04).
    out.push(("rocm-default".into(), DockerfileRequest::new(Stack::Rocm)));
    // Every Core SDK release with wheels, each torch build, one GPU and an overridden one, with every option.
    for r in m.rocm.releases.iter().filter(|r| r.wheels.is_some()) {
        for b in &r.wheels.as_ref().unwrap().builds {
            let mut q = DockerfileRequest::new(Stack::Rocm);
            q.rocm = Some(r.version.to_string());
            q.pytorch = Some(b.pytorch.clone());
            q.gfx = vec!["gfx942".parse().unwrap()];
            out.push((format!("rocm-{}-torch-{}", r.version, b.pytorch), q));
        }
        let mut q = DockerfileRequest::new(Stack::Rocm);
        q.rocm = Some(r.version.to_string());
        q.gfx = vec!["gfx1100".parse().unwrap(), "gfx1031".parse().unwrap()];
        q.env = vec![("HSA_OVERRIDE_GFX_VERSION".into(), "10.3.0".into())];
        q.onnxruntime = true;
        q.with_smoke_tests = true;
        q.pip = vec!["numpy==2.1.0".into(), "transformers".into()];
        q.apt = vec!["vim".into()];
        out.push((format!("rocm-{}-full", r.version), q));
    }
    assert!(
        out.iter()
            .any(|(n, _)| n.ends_with("-full") && n != "rocm-6.2-full"),
        "no Core SDK release has wheels: the Core SDK template goes unlinted"
    );
    let mut r = DockerfileRequest::new(Stack::Rocm);
    r.rocm = Some("6.2".into());
    r.pytorch = Some("2.3".into());
    r.gfx = vec!["gfx1031".parse().unwrap()];
    r.env = vec![("HSA_OVERRIDE_GFX_VERSION".into(), "10.3.0".into())];
    r.onnxruntime = true;
    r.with_smoke_tests = true;
    r.pip = vec!["numpy==1.26.4".into(), "transformers".into()];
    r.apt = vec!["vim".into(), "libstdc++6=12.2.0-14".into()];
    out.push(("rocm-6.2-full".into(), r));
    let newest = m.ngc.releases.last().unwrap().release.clone();
    for ngc in ["23.12", "24.05", newest.as_str()] {
        let mut r = DockerfileRequest::new(Stack::Ngc);
        r.ngc = Some(ngc.into());
        out.push((format!("ngc-{ngc}"), r));
    }
    let mut r = DockerfileRequest::new(Stack::Ngc);
    r.driver = Some("550.54.15".parse().unwrap());
    r.onnxruntime = true;
    r.env = vec![("TORCH_CUDA_ARCH_LIST".into(), "8.0 8.6 9.0".into())];
    out.push(("ngc-driver-550-onnx".into(), r));
    out.push(("cpu-default".into(), DockerfileRequest::new(Stack::Cpu)));
    // hadolint cannot parse a registry `host:port` without a dot (hadolint/hadolint#355), so not localhost:5000.
    let mut r = DockerfileRequest::new(Stack::Cpu);
    r.base = Some("127.0.0.1:5000/debian:bookworm".into());
    out.push(("cpu-base".into(), r));
    let mut r = DockerfileRequest::new(Stack::Cpu);
    r.pip = vec!["transformers~=4.40".into(), "numpy==1.26.4".into()];
    r.apt = vec!["git".into()];
    r.onnxruntime = true;
    r.with_smoke_tests = true;
    out.push(("cpu-pip".into(), r));
    out
}
