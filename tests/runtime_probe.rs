//! The runtime probes on this machine: no libcuda, and (when `libamdhip64-dev` is installed)
//! a HIP runtime with no GPU, which must say `hipErrorNoDevice`. Issue: "Native runtime probes".
//!
//! CI installs `libamdhip64-dev` (Debian's HIP 5.2); without it the HIP assertions become
//! "library missing". Hosts with a real GPU or driver skip the assertions that expect none.

use rocmenv::runtime::{probe_all, ProbeStatus, RuntimeOptions, RuntimeReport};
use std::path::{Path, PathBuf};
use std::process::Command;

/// True when the loader can open one of `names` (what the probe will find).
fn loadable(names: &[&str]) -> bool {
    // SAFETY: loading a GPU runtime library only runs its initialisers.
    names
        .iter()
        .any(|n| unsafe { libloading::Library::new(*n) }.is_ok())
}

fn libcuda_here() -> bool {
    loadable(&["libcuda.so.1", "libcuda.so"])
}

fn hip_here() -> bool {
    loadable(&[
        "libamdhip64.so",
        "libamdhip64.so.7",
        "libamdhip64.so.6",
        "libamdhip64.so.5",
    ])
}

/// Asserts what this machine should report; `why` names the situation in failures.
fn assert_this_machine(report: &RuntimeReport, why: &str) {
    if cfg!(target_env = "musl") {
        // A musl build cannot load glibc's GPU libraries, and says so instead of trying.
        assert_eq!(report.cuda.status, ProbeStatus::Unsupported, "{why}");
        assert_eq!(report.hip.status, ProbeStatus::Unsupported, "{why}");
        return;
    }
    if libcuda_here() {
        eprintln!("skipped the CUDA assertions ({why}): libcuda is installed on this machine");
    } else {
        assert_eq!(
            report.cuda.status,
            ProbeStatus::LibraryMissing,
            "{why}: {:?}",
            report.cuda
        );
        assert!(
            report
                .cuda
                .note
                .as_deref()
                .unwrap_or("")
                .contains("libcuda"),
            "{why}: {:?}",
            report.cuda.note
        );
        assert_eq!(report.cuda.library, None);
    }
    let expected_backend = if cfg!(feature = "hip") {
        "hip-sys (linked)"
    } else {
        "libamdhip64 via dlopen"
    };
    assert!(
        report.hip.backend.starts_with(expected_backend),
        "{why}: {}",
        report.hip.backend
    );
    if !hip_here() {
        assert!(
            std::env::var("ROCMENV_REQUIRE_HIP").as_deref() != Ok("1"),
            "{why}: ROCMENV_REQUIRE_HIP=1 but libamdhip64 cannot be loaded (apt-get install libamdhip64-dev)"
        );
        assert_eq!(
            report.hip.status,
            ProbeStatus::LibraryMissing,
            "{why}: {:?}",
            report.hip
        );
        assert!(report
            .hip
            .note
            .as_deref()
            .unwrap_or("")
            .contains("libamdhip64"));
        return;
    }
    if Path::new("/dev/kfd").exists() {
        eprintln!(
            "skipped the no-device assertions ({why}): /dev/kfd exists, so a GPU may be visible"
        );
        assert_ne!(report.hip.status, ProbeStatus::LibraryMissing, "{why}");
        return;
    }
    assert_eq!(
        report.hip.status,
        ProbeStatus::NoDevice,
        "{why}: {:?}",
        report.hip
    );
    let error = report.hip.error.as_ref().expect("a no-device error");
    assert_eq!(error.name, "hipErrorNoDevice", "{why}");
    assert_eq!(error.code, 100);
    assert_eq!(error.call, "hipGetDeviceCount");
    assert!(error.fix.contains("/dev/kfd"));
    assert!(
        report
            .hip
            .library
            .as_deref()
            .unwrap_or("")
            .contains("libamdhip64"),
        "{why}: {:?}",
        report.hip.library
    );
    assert!(
        report.hip.runtime_version.is_some(),
        "{why}: hipRuntimeGetVersion works without a GPU"
    );
    assert!(report.hip.devices.is_empty());
}

#[test]
fn this_machine_reports_cuda_absent_and_hip_without_device() {
    let report = probe_all(&RuntimeOptions::from_env());
    assert_this_machine(&report, "default options");
    if cfg!(target_env = "musl") {
        return;
    }
    let json = serde_json::to_value(&report).unwrap();
    if !libcuda_here() {
        assert_eq!(json["cuda"]["status"], "library_missing");
        assert_eq!(json["cuda"]["library"], serde_json::Value::Null);
    }
    if hip_here() && !Path::new("/dev/kfd").exists() {
        assert_eq!(json["hip"]["status"], "no_device");
        assert_eq!(json["hip"]["error"]["name"], "hipErrorNoDevice");
        assert_eq!(json["hip"]["devices"], serde_json::json!([]));
    }
    // Issue 14: one expected code per situation, not any of several.
    let code = rocmenv::runtime::exit_code(&report);
    if libcuda_here() || Path::new("/dev/kfd").exists() {
        eprintln!("skipped the exit-code assertion: this machine has a GPU runtime or device");
    } else if hip_here() {
        assert_eq!(code, 1, "HIP loads and sees no device");
    } else {
        assert_eq!(code, 3, "no runtime library at all");
    }
    let mut text = Vec::new();
    rocmenv::report::render_runtime(&report, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.starts_with("CUDA: cudarc") && text.contains("\nHIP: "),
        "{text}"
    );
}

#[test]
fn a_wrong_rocm_path_falls_back_to_the_system_library() {
    let opts = RuntimeOptions {
        rocm_path: Some(PathBuf::from("/nonexistent")),
        hip_library: Some(PathBuf::from("/nonexistent/lib/libamdhip64.so")),
        ..Default::default()
    };
    assert_this_machine(&probe_all(&opts), "ROCM_PATH=/nonexistent");
}

/// Runs only as the child of `bogus_library_paths_do_not_crash` (which passes `--ignored`): probes and prints the
/// JSON. Ignored on its own, so it is counted as ignored rather than as a pass that checked nothing.
#[test]
#[ignore = "runs only as the child of bogus_library_paths_do_not_crash"]
fn child_probe_json() {
    assert!(
        std::env::var_os("ROCMENV_PROBE_CHILD").is_some(),
        "run by bogus_library_paths_do_not_crash"
    );
    let report = probe_all(&RuntimeOptions::from_env());
    println!("@@{}@@", serde_json::to_string(&report).unwrap());
}

#[test]
fn bogus_library_paths_do_not_crash() {
    // Garbage files under every soname, first on LD_LIBRARY_PATH: dlopen must fail cleanly.
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "libcuda.so",
        "libcuda.so.1",
        "libnvrtc.so",
        "libamdhip64.so",
        "libamdhip64.so.6",
        "libamdhip64.so.7",
    ] {
        std::fs::write(dir.path().join(name), "not an ELF file").unwrap();
    }
    let ld = format!("{}:/nonexistent/lib", dir.path().display());
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_probe_json",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ROCMENV_PROBE_CHILD", "1")
        .env("LD_LIBRARY_PATH", &ld)
        .env("ROCM_PATH", "/nonexistent")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = stdout
        .split("@@")
        .nth(1)
        .expect("the child printed its report");
    let report: serde_json::Value = serde_json::from_str(json).unwrap();
    if cfg!(target_env = "musl") {
        assert_eq!(report["hip"]["status"], "unsupported", "{report}");
        return;
    }
    if !libcuda_here() {
        assert_eq!(report["cuda"]["status"], "library_missing", "{report}");
    }
    // Garbage under the newer sonames is skipped with a note; the real .so.5 (when installed) still
    // loads. The linked (`hip`) build never dlopens, so it has no note.
    let hip = &report["hip"];
    if hip_here() && !Path::new("/dev/kfd").exists() {
        assert_eq!(hip["status"], "no_device", "{report}");
        let note = hip["note"].as_str().unwrap_or("");
        assert!(
            cfg!(feature = "hip") || note.contains("failed to load"),
            "{report}"
        );
    } else if !hip_here() {
        assert_eq!(hip["status"], "error", "{report}");
        assert!(
            hip["note"]
                .as_str()
                .unwrap()
                .contains("exists but failed to load"),
            "{report}"
        );
    }
}

/// The device list the host probe asks for under WSL, from the real runtime: without libamdhip64 it cannot be
/// asked (an `Err` naming the library); with it and no GPU, HIP answers with no device and says why.
#[test]
fn the_hip_device_list_for_wsl_is_this_machines_real_answer() {
    let seen = rocmenv::runtime::hip_seen();
    if cfg!(target_env = "musl") {
        assert!(seen.unwrap_err().contains("musl"));
        return;
    }
    if !hip_here() {
        assert!(std::env::var("ROCMENV_REQUIRE_HIP").as_deref() != Ok("1"));
        assert!(seen.unwrap_err().contains("libamdhip64"));
        return;
    }
    if Path::new("/dev/kfd").exists() {
        eprintln!("skipped the no-device assertions: /dev/kfd exists, so a GPU may be visible");
        assert!(seen.is_ok());
        return;
    }
    let seen = seen.expect("the runtime loads");
    assert!(seen.devices.is_empty(), "{seen:?}");
    assert!(seen.runtime_version.is_some(), "{seen:?}");
    assert!(
        seen.error
            .as_deref()
            .unwrap_or("")
            .starts_with("hipErrorNoDevice"),
        "{seen:?}"
    );
}
