//! `CUresult` codes of the CUDA driver API (names as in `cuda.h` and cudarc's `CUresult`), with fixes.

use super::errors::{build, e, ErrorInfo};
use super::RuntimeError;

const FIX_LOG: &str = "check `nvidia-smi` and `dmesg | grep -iE 'nvrm|xid'` for driver errors";
const FIX_BUG: &str =
    "a bug in the caller or a library mismatch: report it with `rocmenv probe --json`";
const FIX_XID: &str = "the GPU faulted: check `dmesg | grep -i xid`; if the probe itself fails, the GPU or driver is unhealthy (reset with `nvidia-smi -r` or reboot)";
const FIX_MISMATCH: &str = "libcuda (user space) and the loaded nvidia kernel module are different versions: reboot after a driver upgrade, or in a container do not install a driver in the image (the NVIDIA Container Toolkit mounts the host's libcuda)";

/// The `CUresult` codes of CUDA 12.6. There is no driver-API code 35: `cudaErrorInsufficientDriver`
/// belongs to the runtime API (libcudart), which this probe does not use.
#[rustfmt::skip]
pub(crate) static CUDA_ERRORS: &[ErrorInfo] = &[
    e(0, "CUDA_SUCCESS", "no error", "nothing to do"),
    e(1, "CUDA_ERROR_INVALID_VALUE", "a parameter was out of range", FIX_BUG),
    e(2, "CUDA_ERROR_OUT_OF_MEMORY", "the device is out of memory", "free device memory: `nvidia-smi` lists the processes holding it"),
    e(3, "CUDA_ERROR_NOT_INITIALIZED", "the driver was not initialised (cuInit failed or was not called)", "check that the nvidia kernel module is loaded (`lsmod | grep nvidia`) and `dmesg | grep -i nvrm`"),
    e(4, "CUDA_ERROR_DEINITIALIZED", "the driver is shutting down", FIX_BUG),
    e(5, "CUDA_ERROR_PROFILER_DISABLED", "the profiler is disabled", FIX_BUG),
    e(6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", "the profiler is not initialised", FIX_BUG),
    e(7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "the profiler is already running", FIX_BUG),
    e(8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "the profiler is already stopped", FIX_BUG),
    e(34, "CUDA_ERROR_STUB_LIBRARY", "the loaded libcuda is the toolkit's stub, not the driver's", "a CUDA toolkit's stubs/libcuda.so is on the library path ahead of the driver's: remove .../lib64/stubs from LD_LIBRARY_PATH"),
    e(46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "the device is busy or unavailable", "the GPU is in exclusive-process compute mode and in use: `nvidia-smi -q -d COMPUTE`, or stop the other process"),
    e(100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is visible", "no GPU visible: check `nvidia-smi`, that /dev/nvidia* exist and are accessible, that CUDA_VISIBLE_DEVICES does not hide every GPU, and in a container run with --gpus all (NVIDIA Container Toolkit)"),
    e(101, "CUDA_ERROR_INVALID_DEVICE", "the device ordinal is out of range", "check CUDA_VISIBLE_DEVICES: it renumbers the devices"),
    e(102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "the device needs a license (vGPU)", "the vGPU guest driver has no license: check `nvidia-smi -q | grep -i license`"),
    e(200, "CUDA_ERROR_INVALID_IMAGE", "the module image is invalid", "the kernel image does not match this GPU or driver: rebuild for this compute capability"),
    e(201, "CUDA_ERROR_INVALID_CONTEXT", "invalid context", FIX_BUG),
    e(202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "the context is already current", FIX_BUG),
    e(205, "CUDA_ERROR_MAP_FAILED", "mapping failed", FIX_LOG),
    e(206, "CUDA_ERROR_UNMAP_FAILED", "unmapping failed", FIX_LOG),
    e(207, "CUDA_ERROR_ARRAY_IS_MAPPED", "the array is mapped", FIX_BUG),
    e(208, "CUDA_ERROR_ALREADY_MAPPED", "already mapped", FIX_BUG),
    e(209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image for this GPU", "the program has no SASS or PTX for this GPU's compute capability: rebuild with its sm_XX (or include PTX)"),
    e(210, "CUDA_ERROR_ALREADY_ACQUIRED", "already acquired", FIX_BUG),
    e(211, "CUDA_ERROR_NOT_MAPPED", "not mapped", FIX_BUG),
    e(212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "not mapped as an array", FIX_BUG),
    e(213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "not mapped as a pointer", FIX_BUG),
    e(214, "CUDA_ERROR_ECC_UNCORRECTABLE", "an uncorrectable ECC error was detected", "check `nvidia-smi -q -d ECC,PAGE_RETIREMENT` and dmesg for Xid 48/63/64; reset the GPU or reboot; repeated errors mean failing hardware"),
    e(215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "unsupported limit", FIX_BUG),
    e(216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "the context is in use by another thread", FIX_BUG),
    e(217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these devices", "check `nvidia-smi topo -m`; an IOMMU or ACS between the GPUs blocks P2P"),
    e(218, "CUDA_ERROR_INVALID_PTX", "the PTX failed to JIT-compile", "the PTX is invalid for this GPU: check the NVRTC/toolkit version against the driver"),
    e(219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "invalid graphics context", FIX_BUG),
    e(220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "an uncorrectable NVLink error", "check `nvidia-smi nvlink -e` and dmesg; reset the GPUs or reboot"),
    e(221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "the PTX JIT compiler library is missing", "libnvidia-ptxjitcompiler is missing: reinstall the driver's user-space libraries (in a container: the toolkit must mount the 'compute' capability)"),
    e(222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the PTX is newer than this driver understands", "the toolkit or NVRTC is newer than the driver: upgrade the driver, or use a CUDA release this driver supports"),
    e(223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation is disabled", "unset CUDA_DISABLE_PTX_JIT, or ship SASS for this GPU"),
    e(224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "unsupported execution affinity", FIX_BUG),
    e(300, "CUDA_ERROR_INVALID_SOURCE", "invalid source", FIX_BUG),
    e(301, "CUDA_ERROR_FILE_NOT_FOUND", "file not found", FIX_BUG),
    e(302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "a symbol is missing from a shared object", FIX_MISMATCH),
    e(303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "a shared object failed to initialise", FIX_LOG),
    e(304, "CUDA_ERROR_OPERATING_SYSTEM", "an operating-system call failed", "check that /dev/nvidia*, /dev/nvidiactl and /dev/nvidia-uvm exist and are accessible (`nvidia-modprobe -u -c0` creates nvidia-uvm), and dmesg"),
    e(400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle", FIX_BUG),
    e(401, "CUDA_ERROR_ILLEGAL_STATE", "the resource is in an illegal state", FIX_BUG),
    e(500, "CUDA_ERROR_NOT_FOUND", "a named symbol was not found", FIX_BUG),
    e(600, "CUDA_ERROR_NOT_READY", "asynchronous work is not done", "not an error by itself"),
    e(700, "CUDA_ERROR_ILLEGAL_ADDRESS", "a kernel accessed an illegal address", FIX_XID),
    e(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "the launch needs more resources than the device has", FIX_BUG),
    e(702, "CUDA_ERROR_LAUNCH_TIMEOUT", "the kernel ran too long (display watchdog)", "the GPU drives a display with a watchdog: run compute on a GPU without a display"),
    e(703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "incompatible texturing", FIX_BUG),
    e(704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled", "not an error by itself"),
    e(705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access was never enabled", FIX_BUG),
    e(708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "the primary context is already active", FIX_BUG),
    e(709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "the context is destroyed", FIX_BUG),
    e(710, "CUDA_ERROR_ASSERT", "a device-side assert failed", FIX_XID),
    e(711, "CUDA_ERROR_TOO_MANY_PEERS", "too many peers", FIX_BUG),
    e(712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "host memory is already registered", FIX_BUG),
    e(713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "host memory is not registered", FIX_BUG),
    e(714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "a hardware stack error", FIX_XID),
    e(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction", FIX_XID),
    e(716, "CUDA_ERROR_MISALIGNED_ADDRESS", "a misaligned address", FIX_XID),
    e(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "an invalid address space", FIX_XID),
    e(718, "CUDA_ERROR_INVALID_PC", "an invalid program counter", FIX_XID),
    e(719, "CUDA_ERROR_LAUNCH_FAILED", "a kernel failed while running", FIX_XID),
    e(720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks for a cooperative launch", FIX_BUG),
    e(800, "CUDA_ERROR_NOT_PERMITTED", "the operation is not permitted", "check the GPU's compute mode (`nvidia-smi -q -d COMPUTE`) and this user's access to /dev/nvidia*"),
    e(801, "CUDA_ERROR_NOT_SUPPORTED", "not supported on this device", "this GPU or driver lacks the feature"),
    e(802, "CUDA_ERROR_SYSTEM_NOT_READY", "the system is not ready (fabric manager)", "on NVSwitch systems (HGX/DGX) start nvidia-fabricmanager at the driver's exact version: `systemctl status nvidia-fabricmanager`"),
    e(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "libcuda and the kernel driver are different versions", FIX_MISMATCH),
    e(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility is not supported on this GPU", "a cuda-compat libcuda (forward compatibility) is loaded but only data-center GPUs support it: remove the compat directory from LD_LIBRARY_PATH, or upgrade the host driver"),
    e(805, "CUDA_ERROR_MPS_CONNECTION_FAILED", "cannot connect to the MPS server", "check the MPS control daemon (`nvidia-cuda-mps-control`) and CUDA_MPS_PIPE_DIRECTORY"),
    e(806, "CUDA_ERROR_MPS_RPC_FAILURE", "the MPS server call failed", "restart the MPS daemon"),
    e(807, "CUDA_ERROR_MPS_SERVER_NOT_READY", "the MPS server is not ready", "restart the MPS daemon"),
    e(808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "the MPS server has too many clients", "raise the MPS client limit or stop clients"),
    e(809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", "the MPS server has too many connections", "raise the MPS connection limit"),
    e(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "not allowed while capturing a stream", FIX_BUG),
    e(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "the stream capture was invalidated", FIX_BUG),
    e(902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "stream captures cannot merge", FIX_BUG),
    e(903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "unmatched stream capture", FIX_BUG),
    e(904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "the capture forked without joining", FIX_BUG),
    e(905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "the capture crossed its isolation", FIX_BUG),
    e(906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "implicit synchronisation during capture", FIX_BUG),
    e(907, "CUDA_ERROR_CAPTURED_EVENT", "the event was captured", FIX_BUG),
    e(908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "the capture was ended on another thread", FIX_BUG),
    e(909, "CUDA_ERROR_TIMEOUT", "the wait timed out", FIX_LOG),
    e(910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "the graph update failed", FIX_BUG),
    e(911, "CUDA_ERROR_EXTERNAL_DEVICE", "an external device failed", FIX_LOG),
    e(999, "CUDA_ERROR_UNKNOWN", "an unknown error", FIX_LOG),
];

/// The table row for a `CUresult` code.
pub fn cuda_error_info(code: i64) -> Option<&'static ErrorInfo> {
    CUDA_ERRORS.iter().find(|i| i.code == code)
}

/// A CUDA error for `code` returned by `call`, with what `cuGetErrorName`/`cuGetErrorString` said.
pub fn cuda_error(
    code: i64,
    call: &str,
    lib_name: Option<String>,
    lib_message: Option<String>,
) -> RuntimeError {
    build(CUDA_ERRORS, FIX_LOG, code, call, lib_name, lib_message)
}
