"""Which function runs each test name of a plan, what optional modules it needs, whether it needs the device, and
how it spans the selected GPUs."""
import collections

# scope: "host" (not about a GPU: one entry, device null), "span" (one entry about every selected GPU together,
# device null), "each" (one entry per selected GPU, run concurrently: a thread per GPU), "serial" (one entry per
# selected GPU, one GPU after another: timings that share the host, PCIe or a process-wide profiler).
TestDef = collections.namedtuple("TestDef", "module function requires needs_device scope")

SMOKE = {
    "environment": TestDef("env", "test_environment", (), False, "host"),
    "no-cpu-fallback": TestDef("env", "test_no_cpu_fallback", (), False, "host"),
    "arch-fit": TestDef("env", "test_arch_fit", (), False, "span"),
    "numerics": TestDef("numerics", "test_numerics", (), True, "each"),
    "memory": TestDef("memory", "test_memory", (), True, "each"),
    "gemm": TestDef("perf", "test_gemm", (), True, "each"),
    "bandwidth": TestDef("perf", "test_bandwidth", (), True, "serial"),
    "models": TestDef("models", "test_models", ("torchvision",), True, "serial"),
    "onnx": TestDef("onnxrt", "test_onnx", ("onnxruntime", "onnx", "torchvision"), True, "serial"),
    "int8": TestDef("int8", "test_int8", (), True, "serial"),
    "profile": TestDef("profiling", "test_profile", ("torchvision",), True, "serial"),
    "max-batch": TestDef("batch", "test_max_batch", (), True, "each"),
    "diffusion": TestDef("diffusion", "test_diffusion", ("diffusers",), True, "serial"),
    "multi-gpu": TestDef("multigpu", "test_multi_gpu", (), True, "span"),
    "burn-in": TestDef("burnin", "test_burn_in", (), True, "each"),
}

BENCH = {
    "gemm": TestDef("perf", "bench_gemm", (), True, "serial"),
    "bandwidth": TestDef("perf", "bench_bandwidth", (), True, "serial"),
    "resnet50": TestDef("models", "bench_resnet50", ("torchvision",), True, "serial"),
    "vit_b_16": TestDef("models", "bench_vit_b_16", ("torchvision",), True, "serial"),
    "onnx": TestDef("onnxrt", "bench_onnx", ("onnxruntime", "onnx", "torchvision"), True, "serial"),
    "sd15_unet": TestDef("diffusion", "bench_sd15_unet", ("diffusers",), True, "serial"),
    "tune": TestDef("tune", "bench_tune", ("torchvision",), True, "serial"),
}

# What to install when an optional module is missing.
INSTALL_HINTS = {
    "torchvision": "install the torchvision that matches this torch build (rocm/pytorch and NGC images have it)",
    "onnxruntime": "rebuild the image with `rocmenv dockerfile --onnxruntime` (the stack's execution providers)",
    "onnx": "pip install onnx",
    "diffusers": "pip install diffusers",
}


def lookup(kind, name):
    """The TestDef for a plan's kind and test name, or None for an unknown test."""
    return (SMOKE if kind == "smoke" else BENCH).get(name)
