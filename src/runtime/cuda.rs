//! The CUDA probe: the driver API through cudarc's dynamic loading, NVRTC for the kernel step.
//!
//! `is_culib_present()` is asked before any other call, because cudarc's lazy loader panics when
//! libcuda is absent; every call also runs under `catch_unwind` (a symbol missing from an old driver
//! panics too). Only calls that exist since CUDA 11 are made.

use super::cuda_errors::cuda_error;
use super::loaded::{buffer_string, catch, compare, library_path_of, mib, pattern};
use super::{Check, ProbeStatus, RuntimeDevice, RuntimeError, RuntimeOptions, RuntimeProbe};
use cudarc::driver::result::{self as cu, DriverError};
use cudarc::driver::sys::{self, CUdevice_attribute as Attr};
use std::ffi::{c_void, CString};

/// The backend's name in reports.
pub(crate) fn backend_name() -> String {
    "cudarc 0.19 (dynamic loading)".to_string()
}

/// The vectorAdd kernel the GPU Operator's validator also runs.
const VECTOR_ADD: &str = r#"
extern "C" __global__ void vectorAdd(const float *a, const float *b, float *c, int n) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

/// Elements added by the kernel check.
const KERNEL_N: usize = 1 << 16;

fn derr(e: DriverError, call: &str) -> RuntimeError {
    let text =
        |r: Result<&std::ffi::CStr, DriverError>| r.ok().map(|s| s.to_string_lossy().into_owned());
    cuda_error(
        e.0 as i64,
        call,
        text(e.error_name()),
        text(e.error_string()),
    )
}

/// Probes the CUDA driver.
pub(crate) fn probe(opts: &RuntimeOptions) -> RuntimeProbe {
    let mut p = RuntimeProbe::stopped("cuda", backend_name(), ProbeStatus::Error);
    // SAFETY: only tries to dlopen libcuda under cudarc's candidate names.
    match catch(|| unsafe { sys::is_culib_present() }) {
        Err(panic) => {
            p.note = Some(format!("loading libcuda panicked: {panic}"));
            return p;
        }
        Ok(false) => {
            p.status = ProbeStatus::LibraryMissing;
            p.note = Some(
                "no CUDA driver library (libcuda.so.1): no NVIDIA driver here, or a container started without the NVIDIA Container Toolkit (--gpus)"
                    .to_string(),
            );
            return p;
        }
        Ok(true) => {}
    }
    // SAFETY: libcuda is present, so culib() loads it; the symbol is only used as an address.
    p.library = catch(|| unsafe {
        let sym = sys::culib().get::<*const c_void>(b"cuInit\0").ok()?;
        library_path_of(*sym)
    })
    .ok()
    .flatten()
    .or(Some("libcuda".to_string()));
    if let Err(e) = catch(cu::init).unwrap_or(Err(DriverError(sys::CUresult::CUDA_ERROR_UNKNOWN))) {
        p.status = if e.0 == sys::CUresult::CUDA_ERROR_NO_DEVICE {
            ProbeStatus::NoDevice
        } else {
            ProbeStatus::Error
        };
        p.error = Some(derr(e, "cuInit"));
        return p;
    }
    let mut v = 0;
    // SAFETY: writes one int.
    if let Ok(sys::CUresult::CUDA_SUCCESS) = catch(|| unsafe { sys::cuDriverGetVersion(&mut v) }) {
        p.driver_version = Some(format!("{}.{}", v / 1000, (v % 1000) / 10));
    }
    let count = match catch(cu::device::get_count) {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => {
            p.error = Some(derr(e, "cuDeviceGetCount"));
            return p;
        }
        Err(panic) => {
            p.note = Some(format!("cuDeviceGetCount panicked: {panic}"));
            return p;
        }
    };
    let ptx = if opts.kernel {
        Some(compile(&mut p))
    } else {
        None
    };
    for i in 0..count.max(0) {
        let d =
            catch(|| probe_device(i, opts, ptx.as_ref())).unwrap_or_else(|panic| RuntimeDevice {
                index: i as u32,
                notes: vec![format!("the device probe panicked: {panic}")],
                round_trip: Some(Check::fail("the device probe panicked", None)),
                ..Default::default()
            });
        p.devices.push(d);
    }
    p.settle();
    p
}

/// The kernel step's input: PTX to load, or the check every device reports instead.
enum Kernel {
    Ptx(CString),
    Instead(Check),
}

/// Compiles vectorAdd with NVRTC once for all devices.
fn compile(p: &mut RuntimeProbe) -> Kernel {
    // SAFETY: only tries to dlopen libnvrtc under cudarc's candidate names.
    match catch(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }) {
        Ok(true) => {}
        Ok(false) | Err(_) => {
            return Kernel::Instead(Check::skip(
                "NVRTC is not installed (libnvrtc.so or libnvrtc.so.12): install cuda-nvrtc to run the kernel check",
            ))
        }
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints.
    if let Ok(cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS) =
        catch(|| unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) })
    {
        p.runtime_version = Some(format!("{major}.{minor}"));
    }
    let fail = |why: String| Kernel::Instead(Check::fail(why, None));
    match catch(|| cudarc::nvrtc::compile_ptx(VECTOR_ADD)) {
        Ok(Ok(ptx)) => match CString::new(ptx.to_src()) {
            Ok(c) => Kernel::Ptx(c),
            Err(_) => fail("NVRTC returned PTX with a NUL byte".to_string()),
        },
        Ok(Err(e)) => fail(format!("NVRTC could not compile vectorAdd: {e}")),
        Err(panic) => Kernel::Instead(Check::skip(format!("NVRTC could not be used: {panic}"))),
    }
}

fn probe_device(i: i32, opts: &RuntimeOptions, ptx: Option<&Kernel>) -> RuntimeDevice {
    let mut d = RuntimeDevice {
        index: i as u32,
        ..Default::default()
    };
    let dev = match cu::device::get(i) {
        Ok(dev) => dev,
        Err(e) => {
            let e = derr(e, "cuDeviceGet");
            d.round_trip = Some(Check::fail(format!("cuDeviceGet({i}) failed"), Some(e)));
            return d;
        }
    };
    let mut note = |what: &str, e: DriverError, call: &str| {
        d.notes.push(format!("{what}: {}", derr(e, call).name))
    };
    match cu::device::get_name(dev) {
        Ok(n) => d.name = Some(n),
        Err(e) => note("name", e, "cuDeviceGetName"),
    }
    // SAFETY: `dev` came from cuDeviceGet.
    match unsafe { cu::device::total_mem(dev) } {
        Ok(b) => d.memory_total = Some(b as u64),
        Err(e) => note("total memory", e, "cuDeviceTotalMem"),
    }
    // SAFETY: `dev` came from cuDeviceGet.
    let attr = |a| unsafe { cu::device::get_attribute(dev, a) };
    match (
        attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
        attr(Attr::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
    ) {
        (Ok(ma), Ok(mi)) => d.compute_capability = Some(format!("{ma}.{mi}")),
        (Err(e), _) | (_, Err(e)) => note("compute capability", e, "cuDeviceGetAttribute"),
    }
    match attr(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT) {
        Ok(n) => d.multiprocessors = u32::try_from(n).ok(),
        Err(e) => note("multiprocessors", e, "cuDeviceGetAttribute"),
    }
    let mut buf = [0u8; 64];
    // SAFETY: the length is the buffer's.
    match unsafe { sys::cuDeviceGetPCIBusId(buf.as_mut_ptr().cast(), 64, dev) }.result() {
        Ok(()) => d.pci_bus_id = Some(buffer_string(&buf).to_ascii_lowercase()),
        Err(e) => note("PCI bus id", e, "cuDeviceGetPCIBusId"),
    }
    if !opts.round_trip && ptx.is_none() {
        return d;
    }
    // SAFETY: `dev` came from cuDeviceGet; every successful retain is released below.
    let current = unsafe {
        match cu::primary_ctx::retain(dev) {
            Err(e) => Err(derr(e, "cuDevicePrimaryCtxRetain")),
            Ok(ctx) => cu::ctx::set_current(ctx).map_err(|e| {
                let _ = cu::primary_ctx::release(dev);
                derr(e, "cuCtxSetCurrent")
            }),
        }
    };
    if let Err(e) = current {
        d.round_trip = Some(Check::fail("no context on this device", Some(e)));
        return d;
    }
    if let Ok((free, _)) = cu::mem_get_info() {
        d.memory_free = Some(free as u64);
    }
    if opts.round_trip {
        d.round_trip = Some(round_trip(opts.round_trip_bytes));
    }
    d.kernel = ptx.map(|k| match k {
        Kernel::Ptx(ptx) => vector_add(ptx),
        Kernel::Instead(check) => check.clone(),
    });
    // SAFETY: balances the retain above.
    let _ = unsafe { cu::primary_ctx::release(dev) };
    d
}

fn round_trip(n: usize) -> Check {
    let sent = pattern(n);
    let mut back = vec![0u8; n];
    // SAFETY: the allocation is `n` bytes, both host buffers are `n` bytes, and it is freed once.
    let mut run = || unsafe {
        let dptr = cu::malloc_sync(n).map_err(|e| derr(e, "cuMemAlloc"))?;
        let copied = cu::memcpy_htod_sync(dptr, &sent)
            .map_err(|e| derr(e, "cuMemcpyHtoD"))
            .and_then(|_| {
                cu::memcpy_dtoh_sync(&mut back, dptr).map_err(|e| derr(e, "cuMemcpyDtoH"))
            });
        let freed = cu::free_sync(dptr).map_err(|e| derr(e, "cuMemFree"));
        copied.and(freed)
    };
    match run() {
        Err(e) => Check::fail(format!("{} failed", e.call), Some(e)),
        Ok(()) => match compare(&sent, &back) {
            Ok(()) => Check::pass(format!("{} copied host→device→host and matched", mib(n))),
            Err(why) => Check::fail(format!("data came back changed: {why}"), None),
        },
    }
}

fn vector_add(ptx: &CString) -> Check {
    let a: Vec<f32> = (0..KERNEL_N).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..KERNEL_N).map(|i| (2 * i) as f32).collect();
    let mut c = vec![0f32; KERNEL_N];
    let bytes = KERNEL_N * std::mem::size_of::<f32>();
    // SAFETY: the module and buffers live until the end of the block; the kernel's parameters
    // are pointers to locals of the types vectorAdd declares, and the grid covers exactly n.
    let mut run = || unsafe {
        let module =
            cu::module::load_data(ptx.as_ptr().cast()).map_err(|e| derr(e, "cuModuleLoadData"))?;
        let result = (|| {
            let f = cu::module::get_function(module, CString::new("vectorAdd").unwrap_or_default())
                .map_err(|e| derr(e, "cuModuleGetFunction"))?;
            let mut bufs = [0u64; 3];
            let mut allocated = Ok(());
            for slot in bufs.iter_mut() {
                match cu::malloc_sync(bytes) {
                    Ok(ptr) => *slot = ptr,
                    Err(e) => {
                        allocated = Err(derr(e, "cuMemAlloc"));
                        break;
                    }
                }
            }
            let launched = allocated.and_then(|()| {
                cu::memcpy_htod_sync(bufs[0], &a).map_err(|e| derr(e, "cuMemcpyHtoD"))?;
                cu::memcpy_htod_sync(bufs[1], &b).map_err(|e| derr(e, "cuMemcpyHtoD"))?;
                let mut n = KERNEL_N as i32;
                let (mut pa, mut pb, mut pc) = (bufs[0], bufs[1], bufs[2]);
                let mut params: [*mut c_void; 4] = [
                    (&mut pa as *mut u64).cast(),
                    (&mut pb as *mut u64).cast(),
                    (&mut pc as *mut u64).cast(),
                    (&mut n as *mut i32).cast(),
                ];
                let grid = KERNEL_N.div_ceil(256) as u32;
                cu::launch_kernel(
                    f,
                    (grid, 1, 1),
                    (256, 1, 1),
                    0,
                    cu::stream::null(),
                    &mut params,
                )
                .map_err(|e| derr(e, "cuLaunchKernel"))?;
                cu::ctx::synchronize().map_err(|e| derr(e, "cuCtxSynchronize"))?;
                cu::memcpy_dtoh_sync(&mut c, bufs[2]).map_err(|e| derr(e, "cuMemcpyDtoH"))
            });
            for slot in bufs.iter().filter(|s| **s != 0) {
                let _ = cu::free_sync(*slot);
            }
            launched
        })();
        let _ = cu::module::unload(module);
        result
    };
    match run() {
        Err(e) => Check::fail(format!("{} failed", e.call), Some(e)),
        Ok(()) => match (0..KERNEL_N).find(|&i| c[i] != a[i] + b[i]) {
            None => Check::pass(format!(
                "NVRTC-compiled vectorAdd over {KERNEL_N} floats matched"
            )),
            Some(i) => Check::fail(
                format!(
                    "vectorAdd element {i} is {}, expected {}",
                    c[i],
                    a[i] + b[i]
                ),
                None,
            ),
        },
    }
}
