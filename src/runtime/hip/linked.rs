//! HIP through `hip-sys`, linked against `libamdhip64` at build time (the `hip` feature).

use super::api::{HipApi, HipResult};
use crate::runtime::loaded::{buffer_string, c_string, library_path_of};
use hip_sys::hiprt::{self as hip, hipDeviceAttribute_t, hipError_t, hipMemcpyKind};
use std::ffi::c_void;

/// The linked HIP runtime.
pub(crate) struct HipLinked;

/// `hipSuccess` or the code with the call's name.
fn ok(code: hipError_t, call: &'static str) -> HipResult<()> {
    match code {
        hipError_t::hipSuccess => Ok(()),
        other => Err((other as i32, call)),
    }
}

// SAFETY (every block below): each pointer passed is to a live local of the C type the function
// writes, and buffer lengths are the buffers' real lengths.
impl HipApi for HipLinked {
    fn backend(&self) -> String {
        super::api::backend_name()
    }

    fn library(&self) -> Option<String> {
        library_path_of(hip::hipGetDeviceCount as *const c_void)
    }

    fn runtime_version(&self) -> HipResult<i32> {
        let mut v = 0;
        ok(
            unsafe { hip::hipRuntimeGetVersion(&mut v) },
            "hipRuntimeGetVersion",
        )
        .map(|_| v)
    }

    fn driver_version(&self) -> HipResult<i32> {
        let mut v = 0;
        ok(
            unsafe { hip::hipDriverGetVersion(&mut v) },
            "hipDriverGetVersion",
        )
        .map(|_| v)
    }

    fn device_count(&self) -> HipResult<i32> {
        let mut n = 0;
        ok(
            unsafe { hip::hipGetDeviceCount(&mut n) },
            "hipGetDeviceCount",
        )
        .map(|_| n)
    }

    fn set_device(&self, dev: i32) -> HipResult<()> {
        ok(unsafe { hip::hipSetDevice(dev) }, "hipSetDevice")
    }

    fn device_name(&self, dev: i32) -> HipResult<String> {
        let mut buf = [0u8; 256];
        let r = unsafe { hip::hipDeviceGetName(buf.as_mut_ptr().cast(), 256, dev) };
        ok(r, "hipDeviceGetName").map(|_| buffer_string(&buf))
    }

    fn pci_bus_id(&self, dev: i32) -> HipResult<String> {
        let mut buf = [0u8; 64];
        let r = unsafe { hip::hipDeviceGetPCIBusId(buf.as_mut_ptr().cast(), 64, dev) };
        ok(r, "hipDeviceGetPCIBusId").map(|_| buffer_string(&buf))
    }

    fn multiprocessor_count(&self, dev: i32) -> HipResult<i32> {
        let mut n = 0;
        let attr = hipDeviceAttribute_t::hipDeviceAttributeMultiprocessorCount;
        let r = unsafe { hip::hipDeviceGetAttribute(&mut n, attr, dev) };
        ok(r, "hipDeviceGetAttribute").map(|_| n)
    }

    fn total_mem(&self, dev: i32) -> HipResult<u64> {
        let mut b = 0usize;
        ok(
            unsafe { hip::hipDeviceTotalMem(&mut b, dev) },
            "hipDeviceTotalMem",
        )
        .map(|_| b as u64)
    }

    fn mem_info(&self) -> HipResult<(u64, u64)> {
        let (mut free, mut total) = (0usize, 0usize);
        let r = unsafe { hip::hipMemGetInfo(&mut free, &mut total) };
        ok(r, "hipMemGetInfo").map(|_| (free as u64, total as u64))
    }

    fn round_trip(&self, data: &[u8], back: &mut [u8]) -> HipResult<()> {
        let n = data.len().min(back.len());
        let mut dev: *mut c_void = std::ptr::null_mut();
        ok(unsafe { hip::hipMalloc(&mut dev, n) }, "hipMalloc")?;
        let h2d = hipMemcpyKind::hipMemcpyHostToDevice;
        let d2h = hipMemcpyKind::hipMemcpyDeviceToHost;
        let copied = ok(
            unsafe { hip::hipMemcpy(dev, data.as_ptr().cast(), n, h2d) },
            "hipMemcpy (host to device)",
        )
        .and_then(|_| {
            let r = unsafe { hip::hipMemcpy(back.as_mut_ptr().cast(), dev, n, d2h) };
            ok(r, "hipMemcpy (device to host)")
        });
        let freed = ok(unsafe { hip::hipFree(dev) }, "hipFree");
        copied.and(freed)
    }

    fn error_name(&self, code: i32) -> Option<String> {
        let e = known(code)?;
        unsafe { c_string(hip::hipGetErrorName(e)) }
    }

    fn error_string(&self, code: i32) -> Option<String> {
        let e = known(code)?;
        unsafe { c_string(hip::hipGetErrorString(e)) }
    }
}

/// Only codes the runtime itself returned are turned back into the binding's enum.
fn known(code: i32) -> Option<hipError_t> {
    // Building a Rust enum from an arbitrary integer is undefined behaviour, so match the ones we ask about.
    [
        hipError_t::hipErrorInvalidValue,
        hipError_t::hipErrorOutOfMemory,
        hipError_t::hipErrorNotInitialized,
        hipError_t::hipErrorInsufficientDriver,
        hipError_t::hipErrorNoDevice,
        hipError_t::hipErrorInvalidDevice,
        hipError_t::hipErrorOperatingSystem,
        hipError_t::hipErrorNotSupported,
        hipError_t::hipErrorUnknown,
    ]
    .into_iter()
    .find(|e| *e as i32 == code)
}
