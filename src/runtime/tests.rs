//! Unit tests: exit codes, and the HIP probe over a fake backend (no GPU needed).

use super::hip::{hip_version, kfd_gfx_targets, probe_with, HipApi, HipResult, PciAddress};
use super::*;
use std::cell::Cell;

#[test]
fn hip_versions_decode() {
    assert_eq!(hip_version(50221153), "5.2.21153");
    assert_eq!(hip_version(60443483), "6.4.43483");
    assert_eq!(hip_version(70051831), "7.0.51831");
    assert_eq!(hip_version(0), "0");
}

#[test]
fn pci_addresses_compare_by_value() {
    let a = PciAddress::parse("0000:0c:00.0").unwrap();
    assert_eq!(PciAddress::parse("0000:0C:00.0"), Some(a));
    assert_eq!(
        PciAddress::parse("00000000:0c:00.0"),
        Some(a),
        "CUDA prints 8-digit domains"
    );
    assert_eq!(PciAddress::parse("0c:00.0"), Some(a));
    assert_ne!(PciAddress::parse("0000:0c:00.1"), Some(a));
    for bad in ["", "zz:00.0", "0000:0c:00", "0000:0c:00.x"] {
        assert_eq!(PciAddress::parse(bad), None, "{bad}");
    }
}

/// A HIP runtime in memory: `devices` GPUs, optionally corrupting one byte on the way back.
struct FakeHip {
    devices: i32,
    count_error: Option<i32>,
    corrupt: bool,
    malloc_error: Option<i32>,
    calls: Cell<u32>,
}

impl FakeHip {
    fn new(devices: i32) -> Self {
        FakeHip {
            devices,
            count_error: None,
            corrupt: false,
            malloc_error: None,
            calls: Cell::new(0),
        }
    }
}

impl HipApi for FakeHip {
    fn backend(&self) -> String {
        "fake".into()
    }
    fn library(&self) -> Option<String> {
        Some("/fake/libamdhip64.so.6".into())
    }
    fn runtime_version(&self) -> HipResult<i32> {
        Ok(60443483)
    }
    fn driver_version(&self) -> HipResult<i32> {
        Ok(60443483)
    }
    fn device_count(&self) -> HipResult<i32> {
        match self.count_error {
            Some(c) => Err((c, "hipGetDeviceCount")),
            None => Ok(self.devices),
        }
    }
    fn set_device(&self, dev: i32) -> HipResult<()> {
        if dev < self.devices {
            Ok(())
        } else {
            Err((101, "hipSetDevice"))
        }
    }
    fn device_name(&self, _: i32) -> HipResult<String> {
        Ok("AMD Instinct MI300X".into())
    }
    fn pci_bus_id(&self, dev: i32) -> HipResult<String> {
        Ok(format!("0000:{:02x}:00.0", 0x0c + dev))
    }
    fn multiprocessor_count(&self, _: i32) -> HipResult<i32> {
        Ok(304)
    }
    fn total_mem(&self, _: i32) -> HipResult<u64> {
        Ok(192 << 30)
    }
    fn mem_info(&self) -> HipResult<(u64, u64)> {
        Ok((190 << 30, 192 << 30))
    }
    fn round_trip(&self, data: &[u8], back: &mut [u8]) -> HipResult<()> {
        self.calls.set(self.calls.get() + 1);
        if let Some(c) = self.malloc_error {
            return Err((c, "hipMalloc"));
        }
        back.copy_from_slice(data);
        if self.corrupt {
            back[7] ^= 0xff;
        }
        Ok(())
    }
    fn error_name(&self, _: i32) -> Option<String> {
        None
    }
    fn error_string(&self, _: i32) -> Option<String> {
        None
    }
}

fn opts_with_kfd() -> (tempfile::TempDir, RuntimeOptions) {
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("sys/class/kfd/kfd/topology/nodes/1");
    std::fs::create_dir_all(&node).unwrap();
    // location_id 3072 = bus 0x0c, device 0, function 0.
    std::fs::write(
        node.join("properties"),
        "simd_count 1216\nlocation_id 3072\ndomain 0\ngfx_target_version 90402\n",
    )
    .unwrap();
    let cpu = dir.path().join("sys/class/kfd/kfd/topology/nodes/0");
    std::fs::create_dir_all(&cpu).unwrap();
    std::fs::write(
        cpu.join("properties"),
        "simd_count 0\ngfx_target_version 0\n",
    )
    .unwrap();
    let opts = RuntimeOptions {
        root: crate::host::HostRoot::sysroot(dir.path()).unwrap(),
        round_trip_bytes: 4096,
        ..Default::default()
    };
    (dir, opts)
}

#[test]
fn fake_gpus_pass_and_get_gfx_from_kfd() {
    let (_dir, opts) = opts_with_kfd();
    assert_eq!(
        kfd_gfx_targets(&opts.root).len(),
        1,
        "the CPU node is not a GPU"
    );
    let p = probe_with(&FakeHip::new(2), &opts);
    assert_eq!(p.status, ProbeStatus::Ok, "{p:?}");
    assert_eq!(p.runtime_version.as_deref(), Some("6.4.43483"));
    assert_eq!(p.devices.len(), 2);
    let d0 = &p.devices[0];
    assert_eq!(d0.gfx.as_deref(), Some("gfx942"));
    assert_eq!(d0.multiprocessors, Some(304));
    assert_eq!(d0.memory_free, Some(190 << 30));
    assert_eq!(
        d0.round_trip.as_ref().unwrap().status,
        crate::status::Status::Pass
    );
    assert!(d0.kernel.is_none());
    // The second device has no KFD node: gfx is null and a note says why.
    assert_eq!(p.devices[1].gfx, None);
    assert!(p.devices[1].notes.iter().any(|n| n.contains("KFD")));
    let report = RuntimeReport {
        cuda: RuntimeProbe::stopped("cuda", "x".into(), ProbeStatus::LibraryMissing),
        hip: p,
    };
    assert_eq!(exit_code(&report), 0);
    let mut text = Vec::new();
    crate::report::render_runtime(&report, &mut text).unwrap();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("✓ 2 devices working") && text.contains("gfx942"),
        "{text}"
    );
}

#[test]
fn corrupted_copies_and_failed_allocations_fail() {
    let (_dir, opts) = opts_with_kfd();
    let p = probe_with(
        &FakeHip {
            corrupt: true,
            ..FakeHip::new(1)
        },
        &opts,
    );
    assert_eq!(p.status, ProbeStatus::Error);
    assert!(
        p.note.as_deref().unwrap().contains("byte 7"),
        "{:?}",
        p.note
    );
    let p = probe_with(
        &FakeHip {
            malloc_error: Some(2),
            ..FakeHip::new(1)
        },
        &opts,
    );
    assert_eq!(p.status, ProbeStatus::Error);
    assert_eq!(p.error.as_ref().unwrap().name, "hipErrorOutOfMemory");
    assert_eq!(p.error.as_ref().unwrap().call, "hipMalloc");
    let no_copy = RuntimeOptions {
        round_trip: false,
        ..opts
    };
    let fake = FakeHip::new(1);
    assert_eq!(probe_with(&fake, &no_copy).status, ProbeStatus::Ok);
    assert_eq!(fake.calls.get(), 0);
}

#[test]
fn no_device_and_errors_map_to_status() {
    let opts = RuntimeOptions::default();
    let p = probe_with(
        &FakeHip {
            count_error: Some(100),
            ..FakeHip::new(0)
        },
        &opts,
    );
    assert_eq!(p.status, ProbeStatus::NoDevice);
    assert_eq!(p.error.as_ref().unwrap().name, "hipErrorNoDevice");
    let p = probe_with(&FakeHip::new(0), &opts);
    assert_eq!(p.status, ProbeStatus::NoDevice);
    let p = probe_with(
        &FakeHip {
            count_error: Some(35),
            ..FakeHip::new(0)
        },
        &opts,
    );
    assert_eq!(p.status, ProbeStatus::Error);
    assert_eq!(p.error.as_ref().unwrap().name, "hipErrorInsufficientDriver");
}

#[test]
fn exit_codes() {
    let probe = |s| RuntimeProbe::stopped("x", "x".into(), s);
    let r = |c, h| RuntimeReport {
        cuda: probe(c),
        hip: probe(h),
    };
    use ProbeStatus::*;
    assert_eq!(exit_code(&r(LibraryMissing, LibraryMissing)), 3);
    assert_eq!(exit_code(&r(LibraryMissing, NoDevice)), 1);
    assert_eq!(
        exit_code(&r(Ok, NoDevice)),
        0,
        "a stray libamdhip64 on a CUDA host is fine"
    );
    assert_eq!(exit_code(&r(Ok, Error)), 1);
    assert_eq!(exit_code(&r(Error, LibraryMissing)), 1);
    assert_eq!(exit_code(&r(LibraryMissing, Ok)), 0);
    assert_eq!(exit_code(&r(Unsupported, Unsupported)), 3);
}

#[cfg(not(feature = "hip"))]
#[test]
fn hip_candidates_in_order() {
    use std::path::{Path, PathBuf};
    let c = super::hip::candidates(
        Some(Path::new("/x/libamdhip64.so")),
        Some(Path::new("/r")),
        &[PathBuf::from("/opt/rocm")],
    );
    let c: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
    assert_eq!(c[0], "/x/libamdhip64.so");
    assert_eq!(c[1], "/r/lib/libamdhip64.so");
    assert_eq!(c[5], "libamdhip64.so");
    assert_eq!(
        &c[6..9],
        ["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"]
    );
    assert_eq!(c.last().unwrap(), "/opt/rocm/lib/libamdhip64.so.5");
}

#[cfg(feature = "hip")]
#[test]
fn hip_sys_attribute_values_match_ours() {
    use hip_sys::hiprt::{hipDeviceAttribute_t as A, hipMemcpyKind as K};
    assert_eq!(
        A::hipDeviceAttributeMultiprocessorCount as i32,
        HIP_ATTR_MULTIPROCESSOR_COUNT
    );
    assert_eq!(K::hipMemcpyHostToDevice as i32, HIP_MEMCPY_HOST_TO_DEVICE);
    assert_eq!(K::hipMemcpyDeviceToHost as i32, HIP_MEMCPY_DEVICE_TO_HOST);
}
