"""Which function runs each test name of a plan, what optional modules it needs, and whether it needs the device."""
import collections

TestDef = collections.namedtuple("TestDef", "module function requires needs_device")

SMOKE = {
    "environment": TestDef("env", "test_environment", (), False),
    "no-cpu-fallback": TestDef("env", "test_no_cpu_fallback", (), False),
    "arch-fit": TestDef("env", "test_arch_fit", (), False),
    "numerics": TestDef("numerics", "test_numerics", (), True),
    "memory": TestDef("memory", "test_memory", (), True),
    "gemm": TestDef("perf", "test_gemm", (), True),
    "bandwidth": TestDef("perf", "test_bandwidth", (), True),
    "models": TestDef("models", "test_models", ("torchvision",), True),
    "onnx": TestDef("onnxrt", "test_onnx", ("onnxruntime", "onnx"), True),
    "int8": TestDef("int8", "test_int8", (), True),
    "profile": TestDef("profiling", "test_profile", ("torchvision",), True),
    "max-batch": TestDef("batch", "test_max_batch", (), True),
    "diffusion": TestDef("diffusion", "test_diffusion", ("diffusers",), True),
    "multi-gpu": TestDef("multigpu", "test_multi_gpu", (), True),
}

BENCH = {
    "gemm": TestDef("perf", "bench_gemm", (), True),
    "bandwidth": TestDef("perf", "bench_bandwidth", (), True),
    "resnet50": TestDef("models", "bench_resnet50", ("torchvision",), True),
    "vit_b_16": TestDef("models", "bench_vit_b_16", ("torchvision",), True),
    "onnx": TestDef("onnxrt", "bench_onnx", ("onnxruntime", "onnx"), True),
    "sd15_unet": TestDef("diffusion", "bench_sd15_unet", ("diffusers",), True),
    "tune": TestDef("tune", "bench_tune", ("torchvision",), True),
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
