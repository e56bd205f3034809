//! HIP through `dlopen` of `libamdhip64`, so one binary runs with ROCm 5, 6, 7 or none.

use super::api::{
    HipApi, HipResult, HIP_ATTR_MULTIPROCESSOR_COUNT, HIP_MEMCPY_DEVICE_TO_HOST,
    HIP_MEMCPY_HOST_TO_DEVICE,
};
use crate::runtime::loaded::{buffer_string, c_string, library_path_of};
use crate::runtime::{ProbeStatus, RuntimeOptions, RuntimeProbe};
use libloading::Library;
use std::ffi::{c_char, c_int, c_void};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

/// Sonames of every HIP runtime we support, the unversioned development link first.
pub(crate) const SONAMES: [&str; 4] = [
    "libamdhip64.so",
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
];

type IntOut = unsafe extern "C" fn(*mut c_int) -> c_int;
type StrOut = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type ErrText = unsafe extern "C" fn(c_int) -> *const c_char;

/// The resolved functions; their C signatures are the same in HIP 5.x, 6.x and 7.x.
struct Fns {
    runtime_get_version: IntOut,
    driver_get_version: IntOut,
    get_device_count: IntOut,
    set_device: unsafe extern "C" fn(c_int) -> c_int,
    device_get_name: StrOut,
    device_get_pci_bus_id: StrOut,
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int,
    device_total_mem: unsafe extern "C" fn(*mut usize, c_int) -> c_int,
    mem_get_info: unsafe extern "C" fn(*mut usize, *mut usize) -> c_int,
    malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int,
    free: unsafe extern "C" fn(*mut c_void) -> c_int,
    memcpy: unsafe extern "C" fn(*mut c_void, *const c_void, usize, c_int) -> c_int,
    get_error_name: ErrText,
    get_error_string: ErrText,
}

/// `libamdhip64` loaded with `dlopen`.
pub(crate) struct HipDl {
    // Never unloaded: the HIP runtime keeps threads and exit handlers that must outlive the probe.
    _lib: ManuallyDrop<Library>,
    fns: Fns,
    soname: String,
    skipped: Option<String>,
}

/// Where to look, in order: the explicit library, `$ROCM_PATH/lib`, the loader's search path,
/// then `/opt/rocm/lib` and versioned `/opt/rocm-X.Y.Z/lib` (newest first).
pub(crate) fn candidates(
    explicit: Option<&Path>,
    rocm_path: Option<&Path>,
    opt_dirs: &[PathBuf],
) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = explicit.map(Path::to_path_buf).into_iter().collect();
    let in_dir = |dir: PathBuf| SONAMES.iter().map(move |s| dir.join(s));
    if let Some(r) = rocm_path {
        out.extend(in_dir(r.join("lib")));
    }
    out.extend(SONAMES.iter().map(PathBuf::from));
    for dir in opt_dirs {
        out.extend(in_dir(dir.join("lib")));
    }
    out
}

/// `/opt/rocm` then `/opt/rocm-*`, newest version first.
pub(crate) fn opt_rocm_dirs() -> Vec<PathBuf> {
    let mut versioned: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir("/opt")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let v = name.strip_prefix("rocm-")?;
            let key = v.split('.').map(|p| p.parse().unwrap_or(0)).collect();
            Some((key, e.path()))
        })
        .collect();
    versioned.sort_by(|a, b| b.0.cmp(&a.0));
    std::iter::once(PathBuf::from("/opt/rocm"))
        .chain(versioned.into_iter().map(|(_, p)| p))
        .collect()
}

/// libloading's error with the loader's own words (its `Display` alone says only "dlopen failed").
fn dl_message(e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(src) => src.to_string(),
        None => e.to_string(),
    }
}

/// True when dlopen's message says the candidate itself is absent, not that it failed to load.
fn is_absent(candidate: &Path, message: &str) -> bool {
    let name = candidate.to_string_lossy();
    message.starts_with(&format!("{name}:")) && message.contains("No such file")
}

impl HipDl {
    /// Loads the first candidate that exists; `Err` is the finished probe (missing or broken).
    pub(crate) fn load(opts: &RuntimeOptions) -> Result<Self, Box<RuntimeProbe>> {
        let list = candidates(
            opts.hip_library.as_deref(),
            opts.rocm_path.as_deref(),
            &opt_rocm_dirs(),
        );
        let backend = super::api::backend_name();
        // A candidate that exists but will not load is remembered; a later one may still work.
        let mut broken: Option<(String, String)> = None;
        for cand in &list {
            // Absolute paths that do not exist are skipped without asking the loader.
            if cand.is_absolute() && !cand.exists() {
                continue;
            }
            // SAFETY: loading libamdhip64 runs its initialisers, which only set up the runtime.
            let lib = match unsafe { Library::new(cand) } {
                Ok(lib) => lib,
                Err(e) => {
                    let why = dl_message(&e);
                    if !is_absent(cand, &why) && broken.is_none() {
                        broken = Some((cand.display().to_string(), why));
                    }
                    continue;
                }
            };
            let soname = cand.display().to_string();
            let skipped =
                broken.map(|(c, why)| format!("skipped {c}, which failed to load: {why}"));
            return match resolve(&lib) {
                Ok(fns) => Ok(HipDl {
                    _lib: ManuallyDrop::new(lib),
                    fns,
                    soname,
                    skipped,
                }),
                Err(missing) => {
                    let mut p = RuntimeProbe::stopped("hip", backend, ProbeStatus::Error);
                    p.library = Some(soname);
                    p.note = Some(format!(
                        "the library lacks {missing}: not a HIP runtime this probe understands"
                    ));
                    Err(Box::new(p))
                }
            };
        }
        if let Some((cand, why)) = broken {
            let mut p = RuntimeProbe::stopped("hip", backend, ProbeStatus::Error);
            p.library = Some(cand.clone());
            p.note = Some(format!("{cand} exists but failed to load: {why}"));
            return Err(Box::new(p));
        }
        let mut p = RuntimeProbe::stopped("hip", backend, ProbeStatus::LibraryMissing);
        p.note = Some(format!(
            "no HIP runtime library ({}; also $ROCM_PATH/lib and /opt/rocm*/lib)",
            SONAMES.join(", ")
        ));
        Err(Box::new(p))
    }
}

/// Resolves every function; `Err` names the first missing one.
fn resolve(lib: &Library) -> Result<Fns, &'static str> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the type is the function's C signature, identical across HIP 5-7.
            unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map(|s| *s)
                .map_err(|_| $name)?
        };
    }
    Ok(Fns {
        runtime_get_version: sym!("hipRuntimeGetVersion"),
        driver_get_version: sym!("hipDriverGetVersion"),
        get_device_count: sym!("hipGetDeviceCount"),
        set_device: sym!("hipSetDevice"),
        device_get_name: sym!("hipDeviceGetName"),
        device_get_pci_bus_id: sym!("hipDeviceGetPCIBusId"),
        device_get_attribute: sym!("hipDeviceGetAttribute"),
        device_total_mem: sym!("hipDeviceTotalMem"),
        mem_get_info: sym!("hipMemGetInfo"),
        malloc: sym!("hipMalloc"),
        free: sym!("hipFree"),
        memcpy: sym!("hipMemcpy"),
        get_error_name: sym!("hipGetErrorName"),
        get_error_string: sym!("hipGetErrorString"),
    })
}

/// `hipSuccess` or the code with the call's name.
fn ok(code: c_int, call: &'static str) -> HipResult<()> {
    if code == 0 {
        Ok(())
    } else {
        Err((code, call))
    }
}

// SAFETY (every block below): each pointer passed is to a live local of the C type the function
// writes, and buffer lengths are the buffers' real lengths.
impl HipApi for HipDl {
    fn backend(&self) -> String {
        format!("{} ({})", super::api::backend_name(), self.soname)
    }

    fn library(&self) -> Option<String> {
        library_path_of(self.fns.get_device_count as *const c_void).or(Some(self.soname.clone()))
    }

    fn load_note(&self) -> Option<String> {
        self.skipped.clone()
    }

    fn runtime_version(&self) -> HipResult<i32> {
        let mut v = 0;
        ok(
            unsafe { (self.fns.runtime_get_version)(&mut v) },
            "hipRuntimeGetVersion",
        )
        .map(|_| v)
    }

    fn driver_version(&self) -> HipResult<i32> {
        let mut v = 0;
        ok(
            unsafe { (self.fns.driver_get_version)(&mut v) },
            "hipDriverGetVersion",
        )
        .map(|_| v)
    }

    fn device_count(&self) -> HipResult<i32> {
        let mut n = 0;
        ok(
            unsafe { (self.fns.get_device_count)(&mut n) },
            "hipGetDeviceCount",
        )
        .map(|_| n)
    }

    fn set_device(&self, dev: i32) -> HipResult<()> {
        ok(unsafe { (self.fns.set_device)(dev) }, "hipSetDevice")
    }

    fn device_name(&self, dev: i32) -> HipResult<String> {
        let mut buf = [0u8; 256];
        let r = unsafe { (self.fns.device_get_name)(buf.as_mut_ptr().cast(), 256, dev) };
        ok(r, "hipDeviceGetName").map(|_| buffer_string(&buf))
    }

    fn pci_bus_id(&self, dev: i32) -> HipResult<String> {
        let mut buf = [0u8; 64];
        let r = unsafe { (self.fns.device_get_pci_bus_id)(buf.as_mut_ptr().cast(), 64, dev) };
        ok(r, "hipDeviceGetPCIBusId").map(|_| buffer_string(&buf))
    }

    fn multiprocessor_count(&self, dev: i32) -> HipResult<i32> {
        let mut n = 0;
        let attr = HIP_ATTR_MULTIPROCESSOR_COUNT;
        let r = unsafe { (self.fns.device_get_attribute)(&mut n, attr, dev) };
        ok(r, "hipDeviceGetAttribute").map(|_| n)
    }

    fn total_mem(&self, dev: i32) -> HipResult<u64> {
        let mut b = 0usize;
        ok(
            unsafe { (self.fns.device_total_mem)(&mut b, dev) },
            "hipDeviceTotalMem",
        )
        .map(|_| b as u64)
    }

    fn mem_info(&self) -> HipResult<(u64, u64)> {
        let (mut free, mut total) = (0usize, 0usize);
        let r = unsafe { (self.fns.mem_get_info)(&mut free, &mut total) };
        ok(r, "hipMemGetInfo").map(|_| (free as u64, total as u64))
    }

    fn round_trip(&self, data: &[u8], back: &mut [u8]) -> HipResult<()> {
        let n = data.len().min(back.len());
        let mut dev: *mut c_void = std::ptr::null_mut();
        ok(unsafe { (self.fns.malloc)(&mut dev, n) }, "hipMalloc")?;
        let copied = ok(
            unsafe { (self.fns.memcpy)(dev, data.as_ptr().cast(), n, HIP_MEMCPY_HOST_TO_DEVICE) },
            "hipMemcpy (host to device)",
        )
        .and_then(|_| {
            let dst = back.as_mut_ptr().cast();
            let r = unsafe { (self.fns.memcpy)(dst, dev, n, HIP_MEMCPY_DEVICE_TO_HOST) };
            ok(r, "hipMemcpy (device to host)")
        });
        let freed = ok(unsafe { (self.fns.free)(dev) }, "hipFree");
        copied.and(freed)
    }

    fn error_name(&self, code: i32) -> Option<String> {
        unsafe { c_string((self.fns.get_error_name)(code)) }
    }

    fn error_string(&self, code: i32) -> Option<String> {
        unsafe { c_string((self.fns.get_error_string)(code)) }
    }
}
