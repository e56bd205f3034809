//! The HIP calls the probe makes, as a trait with one implementation per way of reaching `libamdhip64`, and the
//! ABI constants both implementations share.

/// `hipDeviceAttributeMultiprocessorCount`: 63 in HIP 5.2's header and in ROCm 6.x and 7.x.
pub const HIP_ATTR_MULTIPROCESSOR_COUNT: i32 = 63;
/// `hipMemcpyHostToDevice`, unchanged since HIP 1.
pub const HIP_MEMCPY_HOST_TO_DEVICE: i32 = 1;
/// `hipMemcpyDeviceToHost`, unchanged since HIP 1.
pub const HIP_MEMCPY_DEVICE_TO_HOST: i32 = 2;
/// `hipErrorNoDevice`.
pub(crate) const HIP_ERROR_NO_DEVICE: i32 = 100;

/// A failed call: the `hipError_t` code and the function that returned it.
pub(crate) type HipResult<T> = Result<T, (i32, &'static str)>;

/// The HIP calls the probe makes; one implementation per way of reaching `libamdhip64`.
pub(crate) trait HipApi {
    /// How the runtime was reached, for the report.
    fn backend(&self) -> String;
    /// The library file that was loaded.
    fn library(&self) -> Option<String>;
    /// Something the loader had to skip on the way, for the report's note.
    fn load_note(&self) -> Option<String> {
        None
    }
    /// `hipRuntimeGetVersion`.
    fn runtime_version(&self) -> HipResult<i32>;
    /// `hipDriverGetVersion`.
    fn driver_version(&self) -> HipResult<i32>;
    /// `hipGetDeviceCount`.
    fn device_count(&self) -> HipResult<i32>;
    /// `hipSetDevice`.
    fn set_device(&self, dev: i32) -> HipResult<()>;
    /// `hipDeviceGetName`.
    fn device_name(&self, dev: i32) -> HipResult<String>;
    /// `hipDeviceGetPCIBusId`.
    fn pci_bus_id(&self, dev: i32) -> HipResult<String>;
    /// `hipDeviceGetAttribute(hipDeviceAttributeMultiprocessorCount)`.
    fn multiprocessor_count(&self, dev: i32) -> HipResult<i32>;
    /// `hipDeviceTotalMem`.
    fn total_mem(&self, dev: i32) -> HipResult<u64>;
    /// `hipMemGetInfo` on the current device: (free, total).
    fn mem_info(&self) -> HipResult<(u64, u64)>;
    /// `hipMalloc`, `hipMemcpy` there and back into `back`, `hipFree`.
    fn round_trip(&self, data: &[u8], back: &mut [u8]) -> HipResult<()>;
    /// `hipGetErrorName`.
    fn error_name(&self, code: i32) -> Option<String>;
    /// `hipGetErrorString`.
    fn error_string(&self, code: i32) -> Option<String>;
}

/// The backend this build uses, for the report.
pub(crate) fn backend_name() -> String {
    if cfg!(feature = "hip") {
        "hip-sys (linked)".to_string()
    } else {
        "libamdhip64 via dlopen".to_string()
    }
}
