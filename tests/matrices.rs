//! The embedded matrices load and hold real facts; broken matrix directories fail naming the file and line.

use rocmenv::gfx::GfxTarget;
use rocmenv::matrix::{
    check_rocm_tag, Matrices, MatrixError, ReleaseStatus, RocmStream, Sourced, SupportStatus,
    Vendor,
};
use rocmenv::version::Version;
use std::path::Path;

const ROCM: &str = include_str!("../matrices/rocm.yaml");
const CUDA: &str = include_str!("../matrices/cuda.yaml");
const NGC: &str = include_str!("../matrices/ngc.yaml");
const GPUS: &str = include_str!("../matrices/gpus.yaml");

fn m() -> Matrices {
    Matrices::embedded().expect("embedded matrices load")
}

fn gfx(s: &str) -> GfxTarget {
    s.parse().unwrap()
}

fn v(s: &str) -> Version {
    s.parse().unwrap()
}

#[test]
fn embedded_has_every_release() {
    let m = m();
    let want = [
        "5.7.0", "5.7.1", "6.0.0", "6.0.2", "6.1.0", "6.1.1", "6.1.2", "6.1.5", "6.2.0", "6.2.1",
        "6.2.2", "6.2.4", "6.3.0", "6.3.1", "6.3.2", "6.3.3", "6.4.0", "6.4.1", "6.4.2", "6.4.3",
        "6.4.4", "7.0.0", "7.0.1", "7.0.2", "7.1.0", "7.1.1", "7.2.0", "7.2.1", "7.2.2", "7.2.3",
        "7.2.4", "7.14.0", "7.14.1", "10.0.0", "10.1.0",
    ];
    assert_eq!(m.rocm_versions(), want);
    // The newest production release is the default, whatever its stream (issue 22).
    assert_eq!(m.newest_rocm().version, v("10.1.0"));
    for r in &m.rocm.releases {
        let core = r.version >= v("7.14.0");
        assert_eq!(
            r.stream,
            if core {
                RocmStream::CoreSdk
            } else {
                RocmStream::Legacy
            },
            "{}",
            r.version
        );
        assert_eq!(r.status, ReleaseStatus::Production, "{}", r.version);
    }
    assert_eq!(
        m.rocm_release("10.1.0").unwrap().install_prefix(),
        "/opt/rocm/core-10.1"
    );
    assert_eq!(
        m.rocm_release("7.2").unwrap().install_prefix(),
        "/opt/rocm-7.2.4"
    );
}

/// Issue 22: a preview is never picked for a series, and naming it exactly is one line naming what exists.
#[test]
fn previews_are_never_a_default_or_a_series_pick() {
    let dir = tempfile::tempdir().unwrap();
    for f in rocmenv::matrix::MATRIX_FILES {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("matrices")
                .join(f),
        )
        .unwrap();
        let text = if f == "rocm.yaml" {
            // A 7.13.0 preview (a copy of 7.14.0) and an 11.0.0 preview newer than everything.
            let at = text.find("  - version: \"7.14.0\"").unwrap();
            let end = text[at..].find("  - version: \"7.14.1\"").unwrap() + at;
            let rec = &text[at..end];
            let preview = |v: &str| {
                rec.replace("version: \"7.14.0\"", &format!("version: \"{v}\""))
                    .replace("status: production", "status: preview")
            };
            let left = text.find("\n# Series left out").unwrap();
            format!(
                "{}\n{}{}{}",
                &text[..left],
                preview("7.13.0"),
                preview("11.0.0"),
                // Without the left_out list, a preview in the matrices is refused as a preview.
                "\n"
            )
        } else {
            text
        };
        std::fs::write(dir.path().join(f), text).unwrap();
    }
    let m = Matrices::load_dir(dir.path()).unwrap();
    assert_eq!(m.newest_rocm().version, v("10.1.0"));
    assert_eq!(m.rocm_release("7").unwrap().version, v("7.14.1"));
    assert!(m.rocm_release("11").is_none());
    assert!(m.rocm_release("7.13").is_none());
    let e = m.rocm_request("7.13.0").unwrap_err();
    assert!(e.starts_with("ROCm 7.13.0 is a technology preview"), "{e}");
    assert!(e.contains("7.14.1"), "{e}");
    let e = m.rocm_request("7.13").unwrap_err();
    assert!(e.contains("only technology previews (7.13.0)"), "{e}");
}

#[test]
fn embedded_rocm_facts() {
    let m = m();
    assert_eq!(m.rocm_release("6.2").unwrap().version, v("6.2.4"));
    assert_eq!(m.rocm_release("6.1.5").unwrap().version, v("6.1.5"));
    assert!(m.rocm_release("6.5").is_none());

    let (r640, r641) = (
        m.rocm_release("6.4.0").unwrap(),
        m.rocm_release("6.4.1").unwrap(),
    );
    // 6.4.0 does not list gfx1101, but its `built:` (rocBLAS 6.4.0's TensileLibrary files and the
    // rocm6.4 PyTorch wheel's PYTORCH_ROCM_ARCH) both ship it (issue 14); 6.4.1 lists it.
    assert!(r640.gfx_status(gfx("gfx1101")).is_none());
    assert!(r640.built_by_components(gfx("gfx1101")) && r640.builds(gfx("gfx1101")));
    assert!(r641.builds(gfx("gfx1101")));
    assert!(r641.builds(gfx("gfx1201")) && r641.builds(gfx("gfx1200")));
    assert!(!r641.builds(gfx("gfx950")));
    assert!(m.rocm_release("7.0.0").unwrap().builds(gfx("gfx950")));

    let r600 = m.rocm_release("6.0.0").unwrap();
    assert_eq!(
        r600.gfx_status(gfx("gfx906")).unwrap().status,
        SupportStatus::Deprecated
    );
    // rocBLAS 6.4.0 ships no gfx906 TensileLibrary (ROCm/legacy-rocm-build#4625), so the wheel's gfx906 code alone
    // does not make it built.
    assert!(!r640.builds(gfx("gfx906")));
    // 6.0.0's rocBLAS (ROCm/legacy-rocm-build#3015) and its rocm6.0 wheel (pytorch/builder@b9d2b93c) both ship
    // gfx900, so the MI25 target AMD lists as unsupported is built there; the wheel has no gfx1101 code.
    assert!(r600.builds(gfx("gfx900")));
    assert!(!r600.builds(gfx("gfx1101")));
    let r720 = m.rocm_release("7.2.0").unwrap();
    assert_eq!(
        r720.gfx_status(gfx("gfx1151")).unwrap().status,
        SupportStatus::Experimental
    );

    // Kernel-driver windows (historical CSV row "AMD GPU Driver").
    let r62 = m.rocm_release("6.2").unwrap();
    assert!(r62.accepts_driver(&v("6.0.3")) && r62.accepts_driver(&v("6.4.1")));
    assert!(!r62.accepts_driver(&v("5.7.1")));
    assert!(r720.accepts_driver(&v("30.10.1")) && r720.accepts_driver(&v("6.4.3")));
    assert!(!r720.accepts_driver(&v("6.3.0")));
    assert_eq!(r720.ships_driver, Some(v("30.30.0")));
    assert_eq!(r62.amdgpu_dkms, Some(v("6.8.5")));
    assert!(r62.is_unconfirmed("amdgpu_dkms"));

    // Distros and kernels.
    let u = r62.distro("ubuntu", "22.04").unwrap();
    assert!(u.kernels.iter().any(|k| k.series == "6.8"));
    assert!(r62.distro("sles", "15-SP6").is_some());
    assert!(r62.distro("ubuntu", "20.04").is_none());
    assert!(m
        .rocm_release("7.1.1")
        .unwrap()
        .distro("rhel", "10.1")
        .is_some());
    assert!(m
        .rocm_release("7.1.0")
        .unwrap()
        .distro("azurelinux", "3.0")
        .is_none());
    assert!(m
        .rocm_release("7.0.2")
        .unwrap()
        .distro("azurelinux", "3.0")
        .is_some());

    assert_eq!(*r62.pytorch, ["2.3", "2.2", "2.1", "2.0", "1.13"]);
}

/// Issue 22: 6.1.5 ships the same rocBLAS (4.1.2) as 6.1.2, so it carries 6.1.2's `built:` lists; 6.2.4
/// ships rocBLAS 4.2.4, not 6.2.2's 4.2.1, so 6.2.2's list does not carry over and 6.2.4 has none.
#[test]
fn a_release_with_the_same_rocblas_carries_its_built_list() {
    use rocmenv::matrix::GfxRun;
    let m = m();
    let (r612, r615) = (
        m.rocm_release("6.1.2").unwrap(),
        m.rocm_release("6.1.5").unwrap(),
    );
    let lists = |r: &rocmenv::matrix::RocmRelease| {
        r.built
            .iter()
            .map(|b| (b.component.clone(), b.targets.clone()))
            .collect::<Vec<_>>()
    };
    assert!(!r615.built.is_empty());
    assert_eq!(lists(r615), lists(r612));
    // gfx900 (unsupported on 6.1.5) is built by both components, so gfx90c runs through it there.
    assert!(r615.builds(gfx("gfx900")));
    assert!(matches!(
        m.gfx_on_release(r615, gfx("gfx90c")),
        GfxRun::Override(a) if a.target == gfx("gfx900")
    ));
    assert!(m.rocm_release("6.2.4").unwrap().built.is_empty());
}

/// The Core SDK 10.0.0 `built:` comes from TheRock's release build at its release commit
/// (ROCm/TheRock@16adc4d875fd4f65ea23c7c84e1c66706fde3047): rocBLAS is compiled for every target of the
/// families a release run builds, and the PyTorch wheels for the same families, less gfx90c on 2.11/2.13.
#[test]
fn core_sdk_built_comes_from_therock() {
    use rocmenv::matrix::GfxRun;
    let m = m();
    let r = m.rocm_release("10.0.0").unwrap();
    // gfx1031 (RX 6700 XT) is not in AMD's 10.0.0 list, but rocBLAS and every wheel have it: it runs natively
    // there, while 7.14.1 (no `built:`) still needs the gfx1030 override.
    assert!(r.gfx_status(gfx("gfx1031")).is_none());
    assert!(r.built_by_components(gfx("gfx1031")) && r.builds(gfx("gfx1031")));
    assert!(matches!(
        m.gfx_on_release(r, gfx("gfx1031")),
        GfxRun::BuiltNotSupported(_)
    ));
    assert!(!m.rocm_release("7.14.1").unwrap().builds(gfx("gfx1031")));
    // gfx90c: rocBLAS has it, but the 2.11 and 2.13 wheels drop its family, so it is not built; it runs through
    // its override, gfx900, which both components build.
    let rocblas = r.built.iter().find(|b| b.component == "rocBLAS").unwrap();
    assert!(rocblas.targets.contains(&gfx("gfx90c")));
    assert!(!r.built_by_components(gfx("gfx90c")));
    assert!(r.built_by_components(gfx("gfx900")));
    assert!(matches!(
        m.gfx_on_release(r, gfx("gfx90c")),
        GfxRun::Override(a) if a.target == gfx("gfx900")
    ));
    // Every target AMD lists for 10.0.0 is one the release build compiles.
    for g in &r.gfx {
        assert!(r.built_by_components(g.target), "{}", g.target);
    }
    // 7.14.0 and 7.14.1 (GPU families read from an unpinned CI config) and 10.1.0 (commit not read) have none.
    for v in ["7.14.0", "7.14.1", "10.1.0"] {
        assert!(m.rocm_release(v).unwrap().built.is_empty(), "{v}");
    }
    // The releases are pinned to their TheRock commits, and 7.14.1 is confirmed but for the carried rows.
    for (v, commit) in [
        ("7.14.0", "418cd5f63abb7a604bad5874cd7b2e29334e640f"),
        ("7.14.1", "f51dc6c91e0d3214f22853fd5cb3f96dbc7d2c4b"),
        ("10.0.0", "16adc4d875fd4f65ea23c7c84e1c66706fde3047"),
    ] {
        let source = m.rocm_release(v).unwrap().source.clone().unwrap();
        assert!(
            source.contains(&format!("ROCm/TheRock@{commit}:version.json")),
            "{v}: {source}"
        );
    }
    let r7141 = m.rocm_release("7.14.1").unwrap();
    assert!(!r7141.is_unconfirmed("*"));
    assert!(r7141.is_unconfirmed("gfx") && !r7141.is_unconfirmed("status"));
}

#[test]
fn every_image_tag_names_its_release() {
    let m = m();
    let mut n = 0;
    for r in &m.rocm.releases {
        for img in &r.images {
            check_rocm_tag(&img.tag, &r.version)
                .unwrap_or_else(|e| panic!("{} under {}: {e}", img.tag, r.version));
            assert!(
                img.tag.contains(&format!("ubuntu{}", img.ubuntu)),
                "{}",
                img.tag
            );
            assert!(
                img.tag.contains(&format!("py{}", img.python)),
                "{}",
                img.tag
            );
            assert!(img.tag.ends_with(&img.pytorch), "{}", img.tag);
            n += 1;
        }
    }
    assert!(n > 60, "only {n} tags");
    let r62 = m.rocm_release("6.2.0").unwrap();
    assert!(r62
        .images
        .iter()
        .any(|i| i.tag == "rocm6.2_ubuntu22.04_py3.10_pytorch_release_2.3.0"));
    let r7 = m.rocm_release("7.0.0").unwrap();
    assert!(r7.images.iter().all(|i| i.is_unconfirmed("*")));
}

#[test]
fn embedded_cuda_and_ngc_facts() {
    let m = m();
    let c = m.cuda_release("12.4.1").unwrap();
    assert_eq!(c.label, "12.4 Update 1");
    assert_eq!(c.min_driver_linux.to_string(), "550.54.15");
    assert_eq!(m.cuda_release("12.4").unwrap().version, v("12.4.1"));
    // `12.4` is the newest 12.4.x (one rule for every series target, issue 10); 12.4.0 keeps its own floor.
    assert_eq!(
        m.cuda_release("12.4.0")
            .unwrap()
            .min_driver_linux
            .to_string(),
        "550.54.14"
    );
    assert_eq!(
        m.cuda_release("12.6.2")
            .unwrap()
            .min_driver_linux
            .to_string(),
        "560.35.03"
    );
    assert!(m.cuda_release("13.0").unwrap().min_driver_windows.is_none());
    assert_eq!(
        m.cuda_family(12).unwrap().min_driver.to_string(),
        "525.60.13"
    );
    assert_eq!(
        m.cuda_family(13).unwrap().min_driver.to_string(),
        "580.65.06"
    );
    assert_eq!(
        m.newest_cuda_for_driver(&"550.127.05".parse().unwrap())
            .unwrap()
            .version,
        v("12.4.1")
    );
    assert!(m
        .cuda_release("11.8")
        .unwrap()
        .compute_capabilities
        .contains(&"9.0".to_string()));
    assert!(!m
        .cuda_release("12.0")
        .unwrap()
        .compute_capabilities
        .contains(&"3.5".to_string()));
    let c13 = &m.cuda_release("13.0").unwrap().compute_capabilities;
    assert!(
        c13.contains(&"11.0".to_string())
            && !c13.contains(&"10.1".to_string())
            && !c13.contains(&"7.0".to_string())
    );
    assert!(
        m.cuda_release("11.0.1").is_none(),
        "release candidates are left out"
    );
    // 13.5 (issue 22): its floor is the first driver NVIDIA builds a CUDA 13.5 compat package for
    // (redistrib_620.70.06.json), an upper bound, so version, floor and SMs stay unconfirmed.
    let c135 = m.cuda_release("13.5").unwrap();
    assert_eq!(c135.version, v("13.5.0"));
    assert_eq!(c135.min_driver_linux.to_string(), "620.70.06");
    for f in ["version", "min_driver_linux", "compute_capabilities"] {
        assert!(c135.is_unconfirmed(f), "13.5.0 {f}");
    }
    assert_eq!(
        m.newest_cuda_for_driver(&"615.40.01".parse().unwrap())
            .unwrap()
            .version,
        v("13.4.2")
    );
    assert_eq!(
        m.newest_cuda_for_driver(&"620.70.06".parse().unwrap())
            .unwrap()
            .version,
        v("13.5.0")
    );

    let n = m.ngc_release("24.05").unwrap();
    assert_eq!(n.cuda, v("12.4.1"));
    assert_eq!(n.tag, "24.05-py3");
    assert_eq!(n.min_driver.to_string(), "545");
    assert!(m.ngc_release("25.07").is_none());
    assert!(m.ngc_release("24.08").unwrap().is_unconfirmed("min_driver"));
    assert_eq!(m.ngc.image, "nvcr.io/nvidia/pytorch");
}

#[test]
fn embedded_gpu_facts() {
    let m = m();
    let xtx = m.gpu_by_pci(Vendor::Amd, "0x744c").unwrap();
    assert!(xtx.name.contains("RX 7900 XTX"));
    assert_eq!(xtx.gfx, Some(gfx("gfx1100")));
    assert_eq!(
        m.gpu_by_pci(Vendor::Amd, "0x74A1").unwrap().gfx,
        Some(gfx("gfx942"))
    );
    assert_eq!(
        m.gpu_by_pci(Vendor::Nvidia, "0x2330")
            .unwrap()
            .compute_capability
            .as_deref(),
        Some("9.0")
    );
    assert!(m.gpu_by_pci(Vendor::Nvidia, "0x744c").is_none());
    let apu = m.gpu_by_pci(Vendor::Amd, "0x1638").unwrap();
    assert!(apu.integrated && apu.gfx == Some(gfx("gfx90c")));

    let o = m
        .gfx_info(gfx("gfx1031"))
        .unwrap()
        .override_to
        .as_ref()
        .unwrap();
    assert_eq!(o.target, gfx("gfx1030"));
    assert_eq!(o.target.override_value(), "10.3.0");
    let rdna1 = m
        .gfx_info(gfx("gfx1010"))
        .unwrap()
        .override_to
        .as_ref()
        .unwrap();
    assert!(rdna1.crashes);
    assert!(m.gfx_info(gfx("gfx1100")).unwrap().override_to.is_none());
    // Every AMD GPU's target is described (the loader checks this too).
    for g in m.gpus.gpus.iter().filter(|g| g.vendor == Vendor::Amd) {
        assert!(m.gfx_info(g.gfx.unwrap()).is_some(), "{}", g.name);
    }
}

// ------------------------------------------------------------------ broken matrices

/// A matrices dir with the embedded files, `file` replaced by `bytes` (or left out when `None`).
fn dir_with(file: &str, bytes: Option<&[u8]>) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (f, t) in [
        ("rocm.yaml", ROCM),
        ("cuda.yaml", CUDA),
        ("ngc.yaml", NGC),
        ("gpus.yaml", GPUS),
    ] {
        if f == file {
            if let Some(b) = bytes {
                std::fs::write(d.path().join(f), b).unwrap();
            }
        } else {
            std::fs::write(d.path().join(f), t).unwrap();
        }
    }
    d
}

/// Replaces the first `from` after the header comments (in the data) with `to`; returns the text
/// and the 1-based line where `from` began.
fn corrupt(text: &str, from: &str, to: &str) -> (String, usize) {
    let data = text.find("\nschema_version:").expect("data start");
    let at = data
        + text[data..]
            .find(from)
            .unwrap_or_else(|| panic!("`{from}` not in the data"));
    let line = text[..at].matches('\n').count() + 1;
    (
        format!("{}{}{}", &text[..at], to, &text[at + from.len()..]),
        line,
    )
}

fn load_err(file: &str, bytes: Option<&[u8]>) -> MatrixError {
    let d = dir_with(file, bytes);
    let e = Matrices::load_dir(d.path()).expect_err("must not load");
    assert_eq!(Path::new(&e.file).file_name().unwrap(), file, "{e}");
    assert!(e.to_string().contains(file), "{e}");
    e
}

#[test]
fn malformed_yaml_names_its_line() {
    let (text, line) = corrupt(NGC, "  - {release: \"24.05\",", "  - {release: \"24.05\",,");
    let e = load_err("ngc.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn unknown_key_names_its_line() {
    // Block style, inside a record with a flattened `source:` (serde buffers it).
    let (text, line) = corrupt(
        ROCM,
        "  - version: \"6.2.0\"\n",
        "  - version: \"6.2.0\"\n    colour: red\n",
    );
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line + 1), "{e}");
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    // Flow style.
    let (text, line) = corrupt(
        CUDA,
        "{version: \"12.4.1\",",
        "{version: \"12.4.1\", colour: red,",
    );
    let e = load_err("cuda.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    // A nested record.
    let (text, line) = corrupt(
        ROCM,
        "{id: debian, version: \"12\"",
        "{id: debian, colour: red, version: \"12\"",
    );
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn bad_version_names_its_line() {
    let (text, line) = corrupt(ROCM, "version: \"6.2.1\"", "version: \"6.x\"");
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("6.x"), "{e}");
    // Deeper in a release, after the fields serde buffers.
    let (text, line) = corrupt(ROCM, "amdgpu_dkms: \"6.8.5\"", "amdgpu_dkms: \"6.8.x\"");
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn duplicate_release_names_the_second() {
    let (text, line) = corrupt(ROCM, "version: \"6.2.1\"", "version: \"6.2.0\"");
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("duplicate release 6.2.0"), "{e}");
    // Flow style, with a trailing comment.
    let (text, line) = corrupt(CUDA, "{version: \"12.4.0\",", "{version: \"12.4.1\",");
    let text = text.replacen("\n", " # edited\n", 1);
    let e = load_err("cuda.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    let (text, line) = corrupt(NGC, "{release: \"24.05\",", "{release: \"24.04\",");
    let e = load_err("ngc.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn undecodable_gfx_names_its_line() {
    let (text, line) = corrupt(GPUS, "target: gfx906,", "target: gfx9z9,");
    let e = load_err("gpus.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("gfx9z9"), "{e}");
    let (text, line) = corrupt(
        ROCM,
        "{target: gfx906, status: deprecated",
        "{target: gfx9z9, status: deprecated",
    );
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn unquoted_float_version_names_its_line() {
    let (text, line) = corrupt(ROCM, "version: \"6.2.1\"", "version: 6.2");
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("quoted"), "{e}");
    let (text, line) = corrupt(
        CUDA,
        "min_driver_linux: \"570.26\"",
        "min_driver_linux: 570.26",
    );
    let e = load_err("cuda.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
}

#[test]
fn missing_file_is_named() {
    let e = load_err("ngc.yaml", None);
    assert_eq!(e.line, None);
    assert!(e.message.contains("cannot be read"), "{e}");
}

#[test]
fn non_utf8_file_names_its_line() {
    let (text, line) = corrupt(CUDA, "label: \"12.4 Update 1\"", "label: \"12.4 Update @\"");
    let bytes: Vec<u8> = text
        .bytes()
        .map(|b| if b == b'@' { 0xff } else { b })
        .collect();
    let e = load_err("cuda.yaml", Some(&bytes));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("UTF-8"), "{e}");
}

#[test]
fn empty_file_is_named() {
    for empty in ["", "\n", "# only a comment\n"] {
        let e = load_err("gpus.yaml", Some(empty.as_bytes()));
        assert_eq!(e.line, None);
        assert!(e.message.contains("empty"), "{e}");
    }
}

#[test]
fn missing_dir_is_named() {
    let d = tempfile::tempdir().unwrap();
    let gone = d.path().join("no-such-matrices");
    let e = Matrices::load_dir(&gone).expect_err("must not load");
    assert_eq!(e.file, gone.display().to_string());
    assert_eq!(e.line, None);
    assert!(e.to_string().contains("no-such-matrices"));
}

#[test]
fn load_dir_of_the_shipped_files_matches_embedded() {
    let d = dir_with("none", None);
    let m = Matrices::load_dir(d.path()).unwrap();
    assert_eq!(m.rocm_versions(), super_embedded_versions());
    assert_eq!(
        m.gpus.gpus.len(),
        Matrices::embedded().unwrap().gpus.gpus.len()
    );
}

fn super_embedded_versions() -> Vec<String> {
    m().rocm_versions()
}

/// Issue 9: one query says how a gfx target runs on a release; env, dockerfile and doctor all ask it.
#[test]
fn one_rule_says_how_a_target_runs_on_a_release() {
    use rocmenv::matrix::GfxRun;
    let m = Matrices::load(None).unwrap();
    let r = m.rocm_release("6.2.4").unwrap();
    let gfx = |s: &str| s.parse::<GfxTarget>().unwrap();
    assert!(matches!(
        m.gfx_on_release(r, gfx("gfx1100")),
        GfxRun::Native(_)
    ));
    let how = m.gfx_on_release(r, gfx("gfx1031"));
    assert!(how.runs());
    assert_eq!(how.override_target(), Some(gfx("gfx1030")));
    let how = m.gfx_on_release(r, gfx("gfx1010"));
    assert!(matches!(how, GfxRun::OverrideCrashes(_)) && !how.runs());
    // Issue 34: 6.2.4 has no `built:` data, so whether it builds gfx90c's override, gfx900, is unknown: the
    // field-practice override, unconfirmed, naming the nearest release with data (6.2.2).
    let how = m.gfx_on_release(r, gfx("gfx90c"));
    assert!(
        matches!(how, GfxRun::OverrideUnknown { .. }) && how.runs() && how.is_unconfirmed(),
        "{how:?}"
    );
    assert_eq!(how.override_target(), Some(gfx("gfx900")));
    assert_eq!(
        how.nearest_known().map(|v| v.to_string()).as_deref(),
        Some("6.2.2")
    );
    // 6.4.0's `built:` leaves gfx900 out: that is "not built", and nothing runs.
    let r640 = m.rocm_release("6.4.0").unwrap();
    assert_eq!(r640.built_state(gfx("gfx900")), rocmenv::matrix::Built::No);
    let how = m.gfx_on_release(r640, gfx("gfx90c"));
    assert!(
        matches!(how, GfxRun::OverrideNotBuilt(_)) && !how.runs(),
        "{how:?}"
    );
}

// ------------------------------------------------------------------ issue 11: provenance

/// Drops the `source: "…"` entry (flow or block style) that follows `anchor` in the data.
fn without_source(text: &str, anchor: &str) -> (String, usize) {
    let data = text.find("\nschema_version:").expect("data start");
    let at = data + text[data..].find(anchor).expect("anchor in the data");
    let line = text[..at].matches('\n').count() + 1;
    let s = at + text[at..].find("source: \"").unwrap();
    let end = s + "source: \"".len() + text[s + "source: \"".len()..].find('"').unwrap() + 1;
    // Also the `, ` before a flow-style entry, or the whole line in block style.
    let (s, end) = if text[..s].ends_with(", ") {
        (s - 2, end)
    } else {
        (text[..s].rfind('\n').unwrap(), end)
    };
    (format!("{}{}", &text[..s], &text[end..]), line)
}

/// Issue 11: every record names a public source; the loader refuses one without, naming the record's line.
#[test]
fn a_record_without_a_source_is_refused() {
    for (file, text, anchor, what) in [
        (
            "rocm.yaml",
            ROCM,
            "  - version: \"6.2.0\"",
            "release 6.2.0 has no `source`",
        ),
        (
            "rocm.yaml",
            ROCM,
            "  - release: \"6.1.3\"",
            "wsl release 6.1.3 has no `source`",
        ),
        (
            "cuda.yaml",
            CUDA,
            "{version: \"12.4.1\",",
            "release 12.4.1 has no `source`",
        ),
        (
            "ngc.yaml",
            NGC,
            "{release: \"24.05\",",
            "release 24.05 has no `source`",
        ),
        (
            "gpus.yaml",
            GPUS,
            "{target: gfx906,",
            "gfx target gfx906 has no `source`",
        ),
        (
            "gpus.yaml",
            GPUS,
            "{name: \"AMD Radeon RX 7900 XTX\",",
            "GPU `AMD Radeon RX 7900 XTX` has no `source`",
        ),
    ] {
        let (bad, line) = without_source(text, anchor);
        let e = load_err(file, Some(bad.as_bytes()));
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains(what), "{e}");
        assert!(e.message.contains("owner/repo@commit:path"), "{e}");
    }
}

/// `text` with the `source: "…"` value on the first line holding `anchor` (in the data) set to `value`;
/// returns the text and that line.
fn with_source(text: &str, anchor: &str, value: &str) -> (String, usize) {
    let data = text.find("\nschema_version:").expect("data start");
    let at = data + text[data..].find(anchor).expect("anchor in the data");
    let line = text[..at].matches('\n').count() + 1;
    let out: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 != line {
                return l.to_string();
            }
            let v = l.find("source: \"").unwrap() + "source: \"".len();
            let end = v + l[v..].find('"').unwrap();
            format!("{}{value}{}", &l[..v], &l[end..])
        })
        .collect();
    (out.join("\n") + "\n", line)
}

/// Issue 11: a source is a URL or owner/repo@commit:path, not "general knowledge" or a private note.
#[test]
fn a_source_that_names_no_public_reference_is_refused() {
    let rocm_source = "    source: \"ROCm/legacy-rocm-build@a2df48d20171f90f2bea1f7d211b056f57f78ffd:docs/compatibility/compatibility-matrix-historical-6.0.csv (column 6.2.0;";
    for private in [
        "general knowledge",
        "matrix-facts §2c",
        "ROCm/ROCm@main:README.md (a branch, not a commit)",
        "http://example.com/plain-http",
        "ROCm/ROCm@90a576ac (no path)",
    ] {
        let (text, line) = with_source(ROCM, rocm_source, private);
        let e = load_err("rocm.yaml", Some(text.as_bytes()));
        assert_eq!(e.line, Some(line), "{e}");
        assert!(e.message.contains("release 6.2.0: source"), "{e}");
        assert!(e.message.contains("names no public reference"), "{e}");
    }
    let (text, line) = with_source(NGC, "{release: \"24.05\",", "the 24.05 release notes");
    let e = load_err("ngc.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("release 24.05: source"), "{e}");
    // Both public forms are accepted on their own, and within prose.
    for ok in [
        "https://rocm.docs.amd.com/en/docs-6.2.0/compatibility/compatibility-matrix.html",
        "ROCm/ROCm@90a576acf33fdfc2d7d1c83945b65e0c937ae63f:docs/compatibility/compatibility-matrix.rst",
        "the OS table (alanina/ROCm@c6bf8d20:docs/reference/gpu-arch-specs.rst)",
    ] {
        let (text, _) = with_source(ROCM, rocm_source, ok);
        let d = dir_with("rocm.yaml", Some(text.as_bytes()));
        Matrices::load_dir(d.path()).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
}

/// Issue 11: `unconfirmed:` names real fields of its record (or `*`, or `peaks.<field>` on a GPU).
#[test]
fn unconfirmed_names_must_be_fields_of_the_record() {
    let (text, line) = corrupt(
        ROCM,
        "    unconfirmed: [\"ships_driver\", \"amdgpu_dkms\"]",
        "    unconfirmed: [\"ships_driver\", \"amdgpu_dkmz\"]",
    );
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(
        e.message
            .contains("unconfirmed names `amdgpu_dkmz`, which is not a field"),
        "{e}"
    );
    assert!(e.message.contains("amdgpu_dkms"), "lists the fields: {e}");

    let xtx = "{name: \"AMD Radeon RX 7900 XTX\",";
    for (bad, ok) in [
        ("peaks.fp64_tflops", false),
        ("source", false),
        ("peaks.fp16_tflops", true),
        ("*", true),
    ] {
        let (text, line) = corrupt(
            GPUS,
            xtx,
            &format!("{{name: \"AMD Radeon RX 7900 XTX\", unconfirmed: [\"{bad}\"],"),
        );
        let d = dir_with("gpus.yaml", Some(text.as_bytes()));
        match Matrices::load_dir(d.path()) {
            Ok(_) => assert!(ok, "{bad} accepted"),
            Err(e) => {
                assert!(!ok, "{bad} refused: {e}");
                assert_eq!(e.line, Some(line), "{e}");
                assert!(e.message.contains(&format!("`{bad}`")), "{e}");
            }
        }
    }
}

/// The field lists `unconfirmed:` is checked against are the fields the records really have.
#[test]
fn unconfirmed_field_lists_match_the_schema() {
    use rocmenv::matrix::fields;
    fn keys<T: serde::Serialize>(t: &T) -> Vec<String> {
        let mut k: Vec<String> = serde_json::to_value(t)
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| *k != "source" && *k != "unconfirmed")
            .cloned()
            .collect();
        k.sort();
        k
    }
    fn sorted(f: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = f.iter().map(|s| s.to_string()).collect();
        v.sort();
        v
    }
    let m = m();
    let r = m.rocm_release("7.2.4").unwrap();
    assert_eq!(keys(r), sorted(fields::ROCM_RELEASE));
    assert_eq!(keys(&r.images[0]), sorted(fields::ROCM_IMAGE));
    let wheels = m
        .rocm
        .releases
        .iter()
        .find_map(|r| r.wheels.as_ref())
        .unwrap();
    assert_eq!(keys(wheels), sorted(fields::ROCM_WHEELS));
    assert_eq!(keys(&m.rocm.wsl[0]), sorted(fields::WSL_RELEASE));
    assert_eq!(keys(&m.cuda.families[0]), sorted(fields::CUDA_FAMILY));
    assert_eq!(keys(&m.cuda.releases[0]), sorted(fields::CUDA_RELEASE));
    assert_eq!(keys(&m.ngc.releases[0]), sorted(fields::NGC_RELEASE));
    assert_eq!(keys(&m.gpus.gfx_targets[0]), sorted(fields::GFX_TARGET));
    assert_eq!(keys(&m.gpus.gpus[0]), sorted(fields::GPU_MODEL));
    let peaks = m.gpus.gpus.iter().find_map(|g| g.peaks.as_ref()).unwrap();
    assert_eq!(keys(peaks), sorted(fields::PEAKS));
}

/// Issue 34: a ROCm-on-WSL record says which GPUs and which Windows driver; one without either is refused.
#[test]
fn a_wsl_record_without_gpus_or_driver_is_refused() {
    for (from, to, what) in [
        ("    gfx: [gfx1100]\n", "    gfx: []\n", "`gpus` and `gfx`"),
        (
            "    windows_driver: \"24.6.1\"\n",
            "    windows_driver: \"\"\n",
            "`windows_driver` and `distros`",
        ),
    ] {
        let at = ROCM.find("\nwsl:").expect("rocm.yaml has wsl:");
        let hit = at + ROCM[at..].find(from).expect("field in the wsl record");
        let bad = format!("{}{}{}", &ROCM[..hit], to, &ROCM[hit + from.len()..]);
        let e = load_err("rocm.yaml", Some(bad.as_bytes()));
        assert!(e.message.contains("wsl release 6.1.3"), "{e}");
        assert!(e.message.contains(what), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

// ------------------------------------------------------------------ issue 11: invariants

/// Releases come out of the loader strictly ordered (so also without duplicates), in every file.
#[test]
fn versions_are_strictly_ordered_as_loaded() {
    let m = m();
    for w in m.rocm.releases.windows(2) {
        assert!(
            w[0].version < w[1].version,
            "{} then {}",
            w[0].version,
            w[1].version
        );
    }
    for w in m.cuda.releases.windows(2) {
        assert!(
            w[0].version < w[1].version,
            "{} then {}",
            w[0].version,
            w[1].version
        );
    }
    let ngc: Vec<(u32, u32)> = m
        .ngc
        .releases
        .iter()
        .map(|r| {
            let (y, mo) = r.release.split_once('.').unwrap();
            (y.parse().unwrap(), mo.parse().unwrap())
        })
        .collect();
    for w in ngc.windows(2) {
        assert!(w[0] < w[1], "{:?} then {:?}", w[0], w[1]);
    }
}

/// Every NGC release's CUDA is in cuda.yaml (a two-part `13.4`: some release of that series).
#[test]
fn every_ngc_cuda_is_in_cuda_yaml() {
    let m = m();
    for n in &m.ngc.releases {
        let exact = m.cuda.releases.iter().any(|c| c.version == n.cuda);
        let series = n.cuda.patch() == 0 && m.cuda_release(&n.cuda.short()).is_some();
        assert!(exact || series, "NGC {} ships CUDA {}", n.release, n.cuda);
    }
    // And the loader refuses one that is not.
    let (text, line) = corrupt(
        NGC,
        "{release: \"24.05\", tag: \"24.05-py3\", pytorch: \"2.4.0a0+07cecf4168\", cuda: \"12.4.1\"",
        "{release: \"24.05\", tag: \"24.05-py3\", pytorch: \"2.4.0a0+07cecf4168\", cuda: \"12.4.7\"",
    );
    let e = load_err("ngc.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(
        e.message
            .contains("release 24.05 ships CUDA 12.4.7, which cuda.yaml does not list"),
        "{e}"
    );
    let (text, _) = corrupt(NGC, "cuda: \"12.4.1\"", "cuda: \"12.99\"");
    let e = load_err("ngc.yaml", Some(text.as_bytes()));
    assert!(e.message.contains("CUDA 12.99.0"), "{e}");
}

/// Every rocm/pytorch image carries a PyTorch its release lists (`2.3` covers `2.3.0`).
#[test]
fn every_image_pytorch_is_in_its_release_list() {
    let m = m();
    for r in &m.rocm.releases {
        for img in &r.images {
            let listed = r.pytorch.iter().any(|p| {
                img.pytorch == *p
                    || img
                        .pytorch
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('.'))
            });
            assert!(
                listed,
                "ROCm {}: {} carries PyTorch {}, not in {:?}",
                r.version, img.tag, img.pytorch, r.pytorch
            );
        }
    }
}

/// Distro versions are os-release `VERSION_ID`s (SUSE's `15-SPn` is AMD's spelling of `15.n`).
#[test]
fn distro_versions_are_in_os_release_form() {
    use rocmenv::matrix::{canonical_distro_version, is_os_release_version};
    let m = m();
    for r in &m.rocm.releases {
        for d in &r.distros {
            assert!(
                is_os_release_version(&d.version),
                "ROCm {}: {} `{}` is not a VERSION_ID",
                r.version,
                d.id,
                d.version
            );
            assert!(
                d.id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "ROCm {}: `{}` is not an os-release ID",
                r.version,
                d.id
            );
            if d.version.contains("-SP") {
                assert_eq!(d.id, "sles", "{}", d.version);
            }
            for p in &d.point_releases {
                assert!(
                    p.starts_with(&canonical_distro_version(&d.version)),
                    "ROCm {}: point release {p} of {} {}",
                    r.version,
                    d.id,
                    d.version
                );
            }
        }
    }
}

/// Every gfx target the matrices name is an LLVM processor gfx.rs knows.
#[test]
fn every_gfx_is_known_to_gfx_rs() {
    let m = m();
    let mut named: Vec<(String, GfxTarget)> = Vec::new();
    for t in &m.gpus.gfx_targets {
        named.push(("gfx_targets".into(), t.target));
        if let Some(o) = &t.override_to {
            named.push((format!("{} override_to", t.target), o.target));
        }
    }
    for g in &m.gpus.gpus {
        if let Some(t) = g.gfx {
            named.push((g.name.clone(), t));
        }
    }
    for r in &m.rocm.releases {
        for g in &r.gfx {
            named.push((format!("ROCm {}", r.version), g.target));
        }
        for b in &r.built {
            for t in &b.targets {
                named.push((format!("ROCm {} built by {}", r.version, b.component), *t));
            }
        }
    }
    for (where_, t) in named {
        assert!(
            t.is_llvm_processor(),
            "{where_}: {t} is not an LLVM processor"
        );
    }
}

// ------------------------------------------------------------------ issue 11: supported is not built

/// rocm.yaml with a `built:` list on 6.2.4 (test data: two components that agree on all but gfx1101).
fn rocm_with_built() -> String {
    let built = "  - version: \"6.2.4\"\n    built:\n      \
        - {component: rocBLAS, targets: [gfx900, gfx906, gfx908, gfx90a, gfx942, gfx1030, gfx1100, gfx1101, gfx1103], source: \"https://example.org/rocblas-targets (test data)\"}\n      \
        - {component: PyTorch wheel, targets: [gfx900, gfx906, gfx908, gfx90a, gfx942, gfx1030, gfx1100, gfx1103], source: \"https://example.org/wheel-targets (test data)\"}\n";
    corrupt(ROCM, "  - version: \"6.2.4\"\n", built).0
}

/// Issue 11: a target the release's libraries are built for runs (doctor warns), and an override to a
/// built target is offered; releases without `built:` keep their behaviour.
#[test]
fn built_but_not_supported_runs_natively() {
    use rocmenv::matrix::GfxRun;
    let d = dir_with("rocm.yaml", Some(rocm_with_built().as_bytes()));
    let m = Matrices::load_dir(d.path()).unwrap();
    let plain = Matrices::embedded().unwrap();
    let r = m.rocm_release("6.2.4").unwrap();
    // gfx900 (MI25) is off 6.2.4's supported list; the test data's libraries build it.
    let how = m.gfx_on_release(r, gfx("gfx900"));
    assert!(
        matches!(how, GfxRun::BuiltNotSupported(_)) && how.runs(),
        "{how:?}"
    );
    assert_eq!(how.override_target(), None);
    assert!(r.builds(gfx("gfx900")));
    // Only one component ships gfx1101: not built.
    assert!(!r.built_by_components(gfx("gfx1101")));
    // gfx90c's override, gfx900, is built now: the APU runs through it.
    let how = m.gfx_on_release(r, gfx("gfx90c"));
    assert_eq!(how.override_target(), Some(gfx("gfx900")), "{how:?}");
    // Issue 34: the embedded 6.2.4 has no `built:`, so whether gfx900 is built there is unknown, not "no".
    let before = plain.gfx_on_release(plain.rocm_release("6.2.4").unwrap(), gfx("gfx90c"));
    assert!(
        matches!(before, GfxRun::OverrideUnknown { .. }) && before.is_unconfirmed(),
        "{before:?}"
    );
    // Listed targets and known overrides are unchanged.
    assert!(matches!(
        m.gfx_on_release(r, gfx("gfx1100")),
        GfxRun::Native(_)
    ));
    assert_eq!(
        m.gfx_on_release(r, gfx("gfx1031")).override_target(),
        Some(gfx("gfx1030"))
    );
    assert!(matches!(
        m.gfx_on_release(r, gfx("gfx1010")),
        GfxRun::OverrideCrashes(_)
    ));
    // A release without `built:` cannot say (6.3.3: its rocBLAS list is not sourced): gfx900 has no override.
    let r633 = m.rocm_release("6.3.3").unwrap();
    assert!(r633.built.is_empty());
    assert_eq!(
        r633.built_state(gfx("gfx900")),
        rocmenv::matrix::Built::Unknown
    );
    assert!(!m.gfx_on_release(r633, gfx("gfx900")).runs());
    // 6.2.2's `built:` (rocBLAS's CMake list and the rocm6.2 wheel) builds gfx900, not gfx1101.
    let r622 = plain.rocm_release("6.2.2").unwrap();
    assert!(r622.builds(gfx("gfx900")));
    assert!(!r622.built_by_components(gfx("gfx1101")));
}

/// Issue 11: doctor warns for a built-but-unsupported GPU and offers the override an APU needs.
#[test]
fn doctor_warns_for_built_but_not_supported() {
    use rocmenv::checks::Status;
    use rocmenv::ops::doctor::{build_report, DoctorOptions};
    let d = dir_with("rocm.yaml", Some(rocm_with_built().as_bytes()));
    let host = |name: &str, matrices: Option<&Path>| {
        let r = build_report(&DoctorOptions {
            sysroot: Some(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/hosts")
                    .join(name),
            ),
            matrices: matrices.map(Path::to_path_buf),
            target: Some("rocm-6.2.4".parse().unwrap()),
            ..DoctorOptions::default()
        })
        .unwrap();
        r.findings
            .into_iter()
            .filter(|f| f.id == "gpu.gfx-supported")
            .map(|f| (f.status, f.summary))
            .collect::<Vec<_>>()
    };
    // Radeon 780M (gfx1103): not supported by 6.2.4, but built in the test data.
    let f = host("radeon780m-apu-ubuntu2404", Some(d.path()));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].0, Status::Warn, "{f:?}");
    assert!(
        f[0].1.contains("gfx1103 is not on ROCm 6.2.4's supported list, but its libraries are built for it (rocBLAS, PyTorch wheel)"),
        "{f:?}"
    );
    // Without `built:` it needs the gfx1100 override.
    let before = host("radeon780m-apu-ubuntu2404", None);
    assert!(before[0].1.contains("runs as gfx1100"), "{before:?}");
    // The Cezanne iGPU (gfx90c) next to an RX 6800: its override gfx900 is built now, so doctor asks
    // for the override (the host does not set it) instead of saying nothing can run it.
    let f = host("ryzen5600g-igpu-rx6800-mint21", Some(d.path()));
    let igpu = f
        .iter()
        .find(|(_, s)| s.contains("gfx90c"))
        .expect("gfx90c finding");
    assert!(
        igpu.1.contains("HSA_OVERRIDE_GFX_VERSION_1=9.0.0"),
        "{igpu:?}"
    );
    // Issue 34: without `built:` the matrices cannot say whether 6.2.4 builds gfx900; doctor still asks for
    // the field-practice override and never calls gfx900 "not built".
    let before = host("ryzen5600g-igpu-rx6800-mint21", None);
    let igpu = before.iter().find(|(_, s)| s.contains("gfx90c")).unwrap();
    assert!(
        igpu.1.contains("HSA_OVERRIDE_GFX_VERSION_1=9.0.0")
            && igpu
                .1
                .contains("is not on the supported list of ROCm 6.2.4")
            && !igpu.1.contains("not built"),
        "{igpu:?}"
    );
}

/// A `built:` entry needs its own source, like every record.
#[test]
fn a_built_entry_without_a_source_is_refused() {
    let text = rocm_with_built().replacen(
        ", source: \"https://example.org/rocblas-targets (test data)\"",
        "",
        1,
    );
    let line = text
        .lines()
        .position(|l| l.contains("component: rocBLAS") && !l.trim_start().starts_with('#'))
        .unwrap()
        + 1;
    let e = load_err("rocm.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(
        e.message
            .contains("release 6.2.4: built by rocBLAS has no `source`"),
        "{e}"
    );
}

/// Issue 14: the embedded 6.4.0 `built:` lists (rocBLAS 6.4.0's TensileLibrary files, the rocm6.4 PyTorch wheel's
/// PYTORCH_ROCM_ARCH) decide the targets 6.4.0 does not list: gfx1101, gfx1102, gfx1200 and gfx1201 run natively,
/// gfx906 (no rocBLAS files, ROCm/legacy-rocm-build#4625) and gfx1010 (not in the wheel) do not.
#[test]
fn embedded_built_lists_decide_6_4_0_issue_14() {
    use rocmenv::matrix::GfxRun;
    let m = m();
    let r = m.rocm_release("6.4.0").unwrap();
    assert_eq!(r.built.len(), 2);
    for t in ["gfx1101", "gfx1102", "gfx1200", "gfx1201"] {
        let how = m.gfx_on_release(r, gfx(t));
        assert!(matches!(how, GfxRun::BuiltNotSupported(_)), "{t}: {how:?}");
        assert_eq!(how.override_target(), None, "{t}");
    }
    assert!(matches!(
        m.gfx_on_release(r, gfx("gfx1100")),
        GfxRun::Native(_)
    ));
    assert!(!m.gfx_on_release(r, gfx("gfx906")).runs());
    assert!(!r.builds(gfx("gfx900")) && !r.builds(gfx("gfx1010")));
    // gfx1103 is in neither list: it still runs through the gfx1100 override.
    assert_eq!(
        m.gfx_on_release(r, gfx("gfx1103")).override_target(),
        Some(gfx("gfx1100"))
    );
    // Releases without sourced `built:` data keep the listed-only rule (see matrices/README.md).
    for v in ["6.2.4", "6.4.1", "7.2.0"] {
        assert!(m.rocm_release(v).unwrap().built.is_empty(), "{v}");
    }
    let r624 = m.rocm_release("6.2.4").unwrap();
    assert_eq!(
        m.gfx_on_release(r624, gfx("gfx1101")).override_target(),
        Some(gfx("gfx1100"))
    );
}

/// Issue 23: one `Vendor` type holds `cpu` too; a GPU entry of the matrices still takes only amd or nvidia.
#[test]
fn a_gpu_entry_with_vendor_cpu_is_refused() {
    let (text, line) = corrupt(
        GPUS,
        "{name: \"NVIDIA H200\", vendor: nvidia,",
        "{name: \"NVIDIA H200\", vendor: cpu,",
    );
    let e = load_err("gpus.yaml", Some(text.as_bytes()));
    assert_eq!(e.line, Some(line), "{e}");
    assert!(
        e.message
            .contains("GPU `NVIDIA H200` names vendor cpu: a GPU's vendor is amd or nvidia"),
        "{e}"
    );
}

/// Issue 22: a release's `wheels:` reach a `RUN pip install` line, and `--matrices` makes them user input: an index
/// that is not a plain https URL, an unpinned base or a version that is not one is refused on load with its line.
#[test]
fn hostile_wheels_are_refused_with_their_line() {
    for (from, to, says) in [
        (
            "index: \"https://stable.repo.amd.com/rocm/whl-next/\"",
            "index: \"https://stable.repo.amd.com/rocm/$(reboot)/\"",
            "is not an https:// URL",
        ),
        (
            "index: \"https://stable.repo.amd.com/rocm/whl-next/\"",
            "index: \"http://stable.repo.amd.com/rocm/whl-next/\"",
            "is not an https:// URL",
        ),
        (
            "base: \"ubuntu:24.04\"",
            "base: \"ubuntu:latest\"",
            "is not `repository:tag`",
        ),
        (
            "base: \"ubuntu:24.04\"",
            "base: \"ubuntu\"",
            "is not `repository:tag`",
        ),
        (
            "{pytorch: \"2.13.0\", torchvision: \"0.28\"}",
            "{pytorch: \"2.13.0 --pre\", torchvision: \"0.28\"}",
            "is not a version",
        ),
    ] {
        let (text, line) = corrupt(ROCM, from, to);
        let d = dir_with("rocm.yaml", Some(text.as_bytes()));
        let e = Matrices::load_dir(d.path()).expect_err("must not load");
        assert_eq!(e.line, Some(line), "{to}: {e}");
        assert!(e.message.contains(says), "{to}: {e}");
    }
}
