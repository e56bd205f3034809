"""The device tests run on, what it is (names, gfx targets, compute capabilities, versions), and timing on it."""
import glob
import importlib
import importlib.util
import os
import platform
import re
import time

import torch

# Variables that change what torch sees or how it runs, reported as the process sees them.
ENV_VARS = (
    "HSA_OVERRIDE_GFX_VERSION",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "NVIDIA_VISIBLE_DEVICES",
    "PYTORCH_ROCM_ARCH",
    "TORCH_CUDA_ARCH_LIST",
    "PYTORCH_TUNABLEOP_ENABLED",
    "PYTORCH_HIP_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "MIOPEN_FIND_MODE",
    "MIOPEN_USER_DB_PATH",
    "HSA_XNACK",
    "OMP_NUM_THREADS",
)


def env_snapshot(environ=None):
    """Every variable of ENV_VARS with its value, or None when unset."""
    environ = os.environ if environ is None else environ
    return dict((k, environ.get(k)) for k in ENV_VARS)


def build_kind():
    """What this torch was built for: "rocm", "cuda" or "cpu"."""
    if getattr(torch.version, "hip", None):
        return "rocm"
    if getattr(torch.version, "cuda", None):
        return "cuda"
    return "cpu"


def gpu_available():
    try:
        return bool(torch.cuda.is_available())
    except Exception:
        return False


def base_gfx(name):
    """gcnArchName without its feature suffixes: "gfx90a:sramecc+:xnack-" -> "gfx90a"."""
    return name.split(":", 1)[0].strip() if name else name


def gfx_from_version(text):
    """An HSA_OVERRIDE_GFX_VERSION value ("10.3.0", "9.0.10") -> its gfx target ("gfx1030", "gfx90a")."""
    m = re.match(r"^\s*(\d+)\.(\d+)\.(\d+)\s*$", text or "")
    if not m:
        raise ValueError("HSA_OVERRIDE_GFX_VERSION=%r is not MAJOR.MINOR.STEPPING" % (text,))
    major, minor, step = (int(g) for g in m.groups())
    if minor > 15 or step > 15:
        raise ValueError("HSA_OVERRIDE_GFX_VERSION=%r: minor and stepping are single hex digits (0-15)" % (text,))
    return "gfx%d%x%x" % (major, minor, step)


def gfx_from_target_version(value):
    """KFD topology's gfx_target_version (90010) -> "gfx90a"."""
    value = int(value)
    return "gfx%d%x%x" % (value // 10000, (value // 100) % 100, value % 100)


def kfd_gfx_targets(root="/"):
    """gfx targets of the GPU nodes in the KFD topology (sysfs), in node order; [] when there is none."""
    out = []
    pattern = os.path.join(root, "sys/class/kfd/kfd/topology/nodes/*/properties")
    for path in sorted(glob.glob(pattern), key=lambda p: int(os.path.basename(os.path.dirname(p)) or 0)):
        try:
            with open(path) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == "gfx_target_version" and int(parts[1]) != 0:
                        out.append(gfx_from_target_version(parts[1]))
        except (IOError, OSError, ValueError):
            continue
    return out


def wheel_arch_list():
    """The GPU targets this torch was compiled for (["gfx90a", ...] or ["sm_80", "compute_90", ...])."""
    flags = None
    getter = getattr(torch._C, "_cuda_getArchFlags", None)
    if getter is not None:
        try:
            flags = getter()
        except Exception:
            flags = None
    if flags:
        return [f for f in flags.split() if f]
    try:
        return list(torch.cuda.get_arch_list())
    except Exception:
        return []


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except (IOError, OSError):
        pass
    return platform.processor() or platform.machine() or "cpu"


def host_memory_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _optional(props, name, convert):
    """A device property newer torch has (pci_bus_id, uuid), converted; None where this torch lacks it."""
    value = getattr(props, name, None)
    if value is None:
        return None
    try:
        return convert(value)
    except (TypeError, ValueError):
        return None


def gpu_devices():
    """[{index, name, gfx, compute_capability, total_memory_bytes, pci_*, uuid}] for every GPU torch sees.

    index is torch's (0..n-1 in this process); the PCI address lets rocmenv map it to the host's GPU number.
    """
    kind = build_kind()
    out = []
    kfd = kfd_gfx_targets() if kind == "rocm" else []
    for i in range(torch.cuda.device_count()):
        props = torch.cuda.get_device_properties(i)
        d = {"index": i, "name": props.name, "gfx": None, "compute_capability": None,
             "total_memory_bytes": int(props.total_memory),
             "pci_domain_id": _optional(props, "pci_domain_id", int),
             "pci_bus_id": _optional(props, "pci_bus_id", int),
             "pci_device_id": _optional(props, "pci_device_id", int),
             "uuid": _optional(props, "uuid", str)}
        if kind == "rocm":
            gfx = getattr(props, "gcnArchName", None)
            if not gfx and kfd and len(set(kfd)) == 1:
                # Old ROCm builds of torch lack gcnArchName; one target across the KFD nodes is unambiguous.
                gfx = kfd[0]
            d["gfx"] = gfx or None
        else:
            d["compute_capability"] = "%d.%d" % (props.major, props.minor)
        out.append(d)
    return out


def device_info(vendor):
    """The document's "device" object: where the tests run."""
    if vendor != "cpu" and gpu_available():
        devices = gpu_devices()
        first = devices[0] if devices else {}
        return {"kind": build_kind(), "name": first.get("name"), "gfx": first.get("gfx"),
                "compute_capability": first.get("compute_capability"), "count": len(devices),
                "devices": devices}
    if vendor != "cpu":
        # A GPU run without a GPU: nothing runs on the CPU instead, so there is no device.
        return {"kind": "cpu", "name": None, "gfx": None, "compute_capability": None, "count": 0, "devices": []}
    cpu = {"index": 0, "name": cpu_name(), "gfx": None, "compute_capability": None,
           "total_memory_bytes": host_memory_bytes(), "pci_domain_id": None, "pci_bus_id": None,
           "pci_device_id": None, "uuid": None}
    return {"kind": "cpu", "name": cpu["name"], "gfx": None, "compute_capability": None, "count": 1,
            "devices": [cpu]}


def _dist_version(names):
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        return None
    for n in names:
        try:
            return metadata.version(n)
        except Exception:
            continue
    return None


def _module_version(module, dists):
    v = _dist_version(dists)
    if v is not None:
        return v
    try:
        if importlib.util.find_spec(module) is None:
            return None
        return getattr(importlib.import_module(module), "__version__", None)
    except Exception:
        return None


def versions():
    """The document's "versions" object; None for what is absent."""
    kind = build_kind()
    dnn = None
    try:
        if torch.backends.cudnn.is_available():
            dnn = torch.backends.cudnn.version()
    except Exception:
        dnn = None
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "hip": getattr(torch.version, "hip", None),
        "cuda": getattr(torch.version, "cuda", None),
        # torch reports MIOpen through the cudnn API on ROCm builds: the integer torch gives, as text.
        "miopen": str(dnn) if dnn is not None and kind == "rocm" else None,
        "cudnn": str(dnn) if dnn is not None and kind == "cuda" else None,
        "onnxruntime": _module_version("onnxruntime", ("onnxruntime", "onnxruntime-gpu", "onnxruntime-rocm",
                                                       "onnxruntime-migraphx", "onnxruntime-training")),
        "torchvision": _module_version("torchvision", ("torchvision",)),
    }


def is_oom(exc):
    """True for an out-of-memory error, whichever class this torch raises it as."""
    oom_cls = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_cls is not None and isinstance(exc, oom_cls):
        return True
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "hiperroroutofmemory" in text)


class Device(object):
    """Where a test runs: the CPU, or one GPU through torch.cuda (ROCm builds use the same API)."""

    def __init__(self, kind, index=0):
        self.kind = kind
        self.index = index
        self.torch = torch.device("cpu") if kind == "cpu" else torch.device("cuda", index)

    @property
    def is_gpu(self):
        return self.kind != "cpu"

    def __repr__(self):
        return "Device(%s, %d)" % (self.kind, self.index)

    def sync(self):
        if self.is_gpu:
            torch.cuda.synchronize(self.torch)

    def time_iters(self, fn, warmup, iters):
        """Runs fn `warmup` times, then `iters` timed times; per-iteration seconds.

        A GPU times each iteration between two device events (what the kernels took, the method of
        the published ROCm-vs-CUDA comparisons); the CPU uses time.perf_counter.
        """
        for _ in range(int(warmup)):
            fn()
        self.sync()
        iters = int(iters)
        if iters < 1:
            raise ValueError("iters must be at least 1")
        if self.is_gpu:
            events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                      for _ in range(iters)]
            for start, end in events:
                start.record()
                fn()
                end.record()
            self.sync()
            return [start.elapsed_time(end) / 1e3 for start, end in events]
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return times

    def reset_peak_memory(self):
        if self.is_gpu:
            torch.cuda.reset_peak_memory_stats(self.torch)

    def peak_memory_metric(self, prefix):
        """(name, bytes): torch's peak allocated device memory, or on the CPU the process's peak RSS."""
        if self.is_gpu:
            return prefix + "peak_memory_bytes", int(torch.cuda.max_memory_allocated(self.torch))
        try:
            import resource
            # ru_maxrss is KiB on Linux; it is the whole process's peak, so only a rough upper bound.
            return prefix + "peak_rss_bytes", int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
        except Exception:
            return prefix + "peak_rss_bytes", None

    def free_memory(self):
        """Frees what the caching allocator holds (after a test or an out-of-memory error)."""
        import gc
        gc.collect()
        if self.is_gpu:
            torch.cuda.empty_cache()


def autocast(device, dtype):
    """torch.autocast for the device, across torch versions."""
    dev_type = "cuda" if device.is_gpu else "cpu"
    if hasattr(torch, "autocast"):
        return torch.autocast(device_type=dev_type, dtype=dtype)
    if device.is_gpu:
        return torch.cuda.amp.autocast(dtype=dtype)
    return torch.cpu.amp.autocast(dtype=dtype)


def grad_scaler():
    """A GradScaler for fp16 training on the GPU, across torch versions."""
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        try:
            return amp.GradScaler("cuda")
        except TypeError:
            pass
    return torch.cuda.amp.GradScaler()


DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def amp_dtype(device):
    """AMP's lower precision: fp16 on a GPU (fp16 mixed precision), bf16 on the CPU."""
    return torch.float16 if device.is_gpu else torch.bfloat16


def cpu_lacks_kernel(exc):
    """True when a CPU op has no kernel for a dtype (fp16 on older torch): a case to skip, not a failure."""
    return isinstance(exc, RuntimeError) and "not implemented for" in str(exc)
