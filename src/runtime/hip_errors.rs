//! `hipError_t` codes from `hip/hip_runtime_api.h` (HIP 5.2; unchanged in ROCm 6 and 7), with fixes.

use super::errors::{build, e, ErrorInfo};
use super::RuntimeError;

const FIX_LOG: &str = "rerun with AMD_LOG_LEVEL=4 to see the HIP runtime's log, and check `dmesg | grep -iE 'amdgpu|kfd'`";
const FIX_BUG: &str = "a bug in the caller or a mismatch between libamdhip64 and the rest of ROCm: make sure one ROCm release is installed (`ls -d /opt/rocm*`, `ldconfig -p | grep amdhip`)";
const FIX_KERNEL: &str = "the GPU or its driver faulted: check `dmesg | grep -iE 'amdgpu|kfd|page fault'`; if the probe itself fails, the GPU or driver is unhealthy (reset or reboot)";

/// Every `hipError_t` in HIP 5.2's header; aliases (`hipErrorMemoryAllocation` = 2, …) use the name
/// `hipGetErrorName` returns.
#[rustfmt::skip]
pub(crate) static HIP_ERRORS: &[ErrorInfo] = &[
    e(0, "hipSuccess", "no error", "nothing to do"),
    e(1, "hipErrorInvalidValue", "a parameter was NULL or out of range", FIX_BUG),
    e(2, "hipErrorOutOfMemory", "the device is out of memory", "free device memory: `rocm-smi --showmemuse --showpids` lists the processes holding it"),
    e(3, "hipErrorNotInitialized", "the HIP runtime could not initialise", "check that the amdgpu driver is loaded (`lsmod | grep amdgpu`), that /dev/kfd is readable and writable by this user (groups video and render), and `dmesg | grep -i kfd`"),
    e(4, "hipErrorDeinitialized", "the HIP runtime is shutting down", "a call came after the runtime was torn down: report it with `rocmenv probe --json`"),
    e(5, "hipErrorProfilerDisabled", "the profiler is disabled", FIX_LOG),
    e(6, "hipErrorProfilerNotInitialized", "the profiler is not initialised", FIX_LOG),
    e(7, "hipErrorProfilerAlreadyStarted", "the profiler is already running", FIX_LOG),
    e(8, "hipErrorProfilerAlreadyStopped", "the profiler is already stopped", FIX_LOG),
    e(9, "hipErrorInvalidConfiguration", "invalid kernel launch configuration", FIX_BUG),
    e(12, "hipErrorInvalidPitchValue", "invalid pitch", FIX_BUG),
    e(13, "hipErrorInvalidSymbol", "invalid device symbol", FIX_BUG),
    e(17, "hipErrorInvalidDevicePointer", "invalid device pointer", FIX_BUG),
    e(21, "hipErrorInvalidMemcpyDirection", "invalid copy direction", FIX_BUG),
    e(35, "hipErrorInsufficientDriver", "the kernel driver is too old for this HIP runtime", "the amdgpu kernel driver is older than this HIP runtime supports: install amdgpu-dkms from the same ROCm release (or a newer kernel), or use a ROCm release whose support window includes this driver (`rocmenv doctor`)"),
    e(52, "hipErrorMissingConfiguration", "a launch had no configuration", FIX_BUG),
    e(53, "hipErrorPriorLaunchFailure", "an earlier kernel launch failed", FIX_KERNEL),
    e(98, "hipErrorInvalidDeviceFunction", "no kernel for this device", "the code object has no kernel for this GPU's gfx target: use a build for this target, or set HSA_OVERRIDE_GFX_VERSION (`rocmenv env` prints it)"),
    e(100, "hipErrorNoDevice", "no GPU is visible to the HIP runtime", "no GPU visible: check /dev/kfd and /dev/dri are present and this user can open them (groups video and render; in a container: --device=/dev/kfd --device=/dev/dri --group-add video --group-add render), that HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES do not hide every GPU, and that the amdgpu driver is loaded"),
    e(101, "hipErrorInvalidDevice", "the device ordinal is out of range", "check HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and CUDA_VISIBLE_DEVICES: they renumber the devices"),
    e(200, "hipErrorInvalidImage", "the code object is invalid", "the code object does not match this runtime or GPU: rebuild for this ROCm release and gfx target"),
    e(201, "hipErrorInvalidContext", "invalid context", FIX_BUG),
    e(202, "hipErrorContextAlreadyCurrent", "the context is already current", FIX_BUG),
    e(205, "hipErrorMapFailed", "mapping memory failed", FIX_LOG),
    e(206, "hipErrorUnmapFailed", "unmapping memory failed", FIX_LOG),
    e(207, "hipErrorArrayIsMapped", "the array is mapped", FIX_BUG),
    e(208, "hipErrorAlreadyMapped", "already mapped", FIX_BUG),
    e(209, "hipErrorNoBinaryForGpu", "no code object for this GPU's gfx target", "the program was not built for this GPU's gfx target: use a build that includes it, or set HSA_OVERRIDE_GFX_VERSION to a supported target (`rocmenv env` prints it)"),
    e(210, "hipErrorAlreadyAcquired", "already acquired", FIX_BUG),
    e(211, "hipErrorNotMapped", "not mapped", FIX_BUG),
    e(212, "hipErrorNotMappedAsArray", "not mapped as an array", FIX_BUG),
    e(213, "hipErrorNotMappedAsPointer", "not mapped as a pointer", FIX_BUG),
    e(214, "hipErrorECCNotCorrectable", "an uncorrectable ECC error was detected", "the GPU memory reported an uncorrectable error: check `rocm-smi --showrasinfo all` and dmesg, then reset the GPU or reboot; repeated errors mean failing hardware"),
    e(215, "hipErrorUnsupportedLimit", "unsupported limit", FIX_BUG),
    e(216, "hipErrorContextAlreadyInUse", "the context is in use by another thread", FIX_BUG),
    e(217, "hipErrorPeerAccessUnsupported", "peer access is not supported between these devices", "the GPUs cannot reach each other's memory (no large BAR or IOMMU in the way): check `rocm-smi --showtopo` and the BIOS's Above 4G decoding / Resizable BAR"),
    e(218, "hipErrorInvalidKernelFile", "invalid kernel file", FIX_BUG),
    e(219, "hipErrorInvalidGraphicsContext", "invalid graphics context", FIX_BUG),
    e(300, "hipErrorInvalidSource", "invalid source", FIX_BUG),
    e(301, "hipErrorFileNotFound", "file not found", "a code object or library file is missing: check the ROCm installation (`ls /opt/rocm/lib`)"),
    e(302, "hipErrorSharedObjectSymbolNotFound", "a symbol is missing from a shared object", "the ROCm libraries come from different releases: install one release (`ldconfig -p | grep -E 'amdhip|hsa-runtime'`)"),
    e(303, "hipErrorSharedObjectInitFailed", "a shared object failed to initialise", FIX_LOG),
    e(304, "hipErrorOperatingSystem", "an operating-system call failed", "check dmesg, that /dev/kfd is accessible, and the locked-memory limit (`ulimit -l`; in a container: --ulimit memlock=-1)"),
    e(400, "hipErrorInvalidHandle", "invalid resource handle", FIX_BUG),
    e(401, "hipErrorIllegalState", "the resource is in an illegal state", FIX_BUG),
    e(500, "hipErrorNotFound", "not found", FIX_BUG),
    e(600, "hipErrorNotReady", "not ready yet", "asynchronous work is still running: not an error by itself"),
    e(700, "hipErrorIllegalAddress", "a kernel accessed an illegal address", FIX_KERNEL),
    e(701, "hipErrorLaunchOutOfResources", "the launch needs more resources than the device has", FIX_BUG),
    e(702, "hipErrorLaunchTimeOut", "the kernel ran too long", FIX_KERNEL),
    e(704, "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled", "not an error by itself"),
    e(705, "hipErrorPeerAccessNotEnabled", "peer access was never enabled", FIX_BUG),
    e(708, "hipErrorSetOnActiveProcess", "cannot set flags on an active device", FIX_BUG),
    e(709, "hipErrorContextIsDestroyed", "the context is destroyed", FIX_BUG),
    e(710, "hipErrorAssert", "a device-side assert failed", FIX_KERNEL),
    e(712, "hipErrorHostMemoryAlreadyRegistered", "host memory is already registered", FIX_BUG),
    e(713, "hipErrorHostMemoryNotRegistered", "host memory is not registered", FIX_BUG),
    e(719, "hipErrorLaunchFailure", "a kernel failed while running", FIX_KERNEL),
    e(720, "hipErrorCooperativeLaunchTooLarge", "too many blocks for a cooperative launch", FIX_BUG),
    e(801, "hipErrorNotSupported", "not supported on this device or platform", "this GPU or ROCm release lacks the feature: check the GPU's gfx target against the ROCm release (`rocmenv doctor`)"),
    e(900, "hipErrorStreamCaptureUnsupported", "not allowed while capturing a stream", FIX_BUG),
    e(901, "hipErrorStreamCaptureInvalidated", "the stream capture was invalidated", FIX_BUG),
    e(902, "hipErrorStreamCaptureMerge", "stream captures cannot merge", FIX_BUG),
    e(903, "hipErrorStreamCaptureUnmatched", "unmatched stream capture", FIX_BUG),
    e(904, "hipErrorStreamCaptureUnjoined", "the capture forked without joining", FIX_BUG),
    e(905, "hipErrorStreamCaptureIsolation", "the capture crossed its isolation", FIX_BUG),
    e(906, "hipErrorStreamCaptureImplicit", "implicit synchronisation during capture", FIX_BUG),
    e(907, "hipErrorCapturedEvent", "the event was captured", FIX_BUG),
    e(908, "hipErrorStreamCaptureWrongThread", "the capture was ended on another thread", FIX_BUG),
    e(910, "hipErrorGraphExecUpdateFailure", "the graph update failed", FIX_BUG),
    e(999, "hipErrorUnknown", "an unknown error", FIX_LOG),
    e(1052, "hipErrorRuntimeMemory", "an HSA runtime memory call failed", FIX_LOG),
    e(1053, "hipErrorRuntimeOther", "an HSA runtime call failed", FIX_LOG),
];

/// The table row for a `hipError_t` code.
pub fn hip_error_info(code: i64) -> Option<&'static ErrorInfo> {
    HIP_ERRORS.iter().find(|i| i.code == code)
}

/// A HIP error for `code` returned by `call`, with what `hipGetErrorName`/`hipGetErrorString` said.
pub fn hip_error(
    code: i64,
    call: &str,
    lib_name: Option<String>,
    lib_message: Option<String>,
) -> RuntimeError {
    build(HIP_ERRORS, FIX_LOG, code, call, lib_name, lib_message)
}
