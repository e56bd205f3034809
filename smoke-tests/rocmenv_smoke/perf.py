"""gemm and bandwidth, as smoke tests (one figure per dtype/direction) and as benchmarks (statistics)."""
import torch

from . import stats
from .devices import DTYPES, cpu_lacks_kernel, is_oom
from .numerics import DEFAULT_TOLERANCE, rel_error, within
from .result import Failed, Skip, exception_line, fix_for_error

MIB = 1 << 20


def gemm_case(device, n, dtype, warmup, iters, seed=0):
    """(per-iteration seconds, max rel error of 4 rows against float64) for an n x n x n matmul."""
    gen = torch.Generator().manual_seed(seed)
    a_cpu = torch.randn(n, n, generator=gen).to(dtype)
    b_cpu = torch.randn(n, n, generator=gen).to(dtype)
    a, b = a_cpu.to(device.torch), b_cpu.to(device.torch)
    out = torch.empty(n, n, dtype=dtype, device=device.torch)
    times = device.time_iters(lambda: torch.mm(a, b, out=out), warmup, iters)
    # Four rows against float64 catch a kernel that is fast because it computes garbage.
    ref = a_cpu[:4].double() @ b_cpu.double()
    return times, rel_error(out[:4], ref)


def tflops(n, seconds):
    return 2.0 * n ** 3 / seconds / 1e12


def test_gemm(ctx):
    n = int(ctx.param("size", 256))
    warmup, iters = int(ctx.param("warmup", 1)), int(ctx.param("iters", 3))
    tolerances = ctx.criterion("tolerance", DEFAULT_TOLERANCE)
    skipped = []
    for name in ctx.param("dtypes", ["fp32", "fp16", "bf16"]):
        try:
            times, err = gemm_case(ctx.device, n, DTYPES[name], warmup, iters)
        except RuntimeError as e:
            if not ctx.device.is_gpu and cpu_lacks_kernel(e):
                skipped.append(name)
                continue
            if is_oom(e):
                raise
            ctx.fail("gemm %s: %s" % (name, exception_line(e)), fix_for_error(exception_line(e)))
            continue
        ctx.metric("gemm_%s_tflops" % name, tflops(n, stats.mean(times)), "TFLOP/s")
        if not within(err, name, tolerances):
            ctx.fail("gemm %s: result rows differ from float64 by %.3g (relative)" % (name, err))
    if skipped:
        ctx.note("skipped (this torch has no CPU matmul for the dtype): %s" % ", ".join(skipped))
    if ctx.device.is_gpu and torch.version.cuda and not torch.version.hip:
        ctx.note("fp32 is measured with TF32 %s (torch.backends.cuda.matmul.allow_tf32)"
                 % ("on" if torch.backends.cuda.matmul.allow_tf32 else "off"))


def bench_metrics(ctx, times, per_iter_work, unit, device):
    """The metrics every benchmark reports: throughput, median, p99, cv, peak memory."""
    s = stats.summarize_seconds(times)
    ctx.metric("throughput", per_iter_work * s["n"] / s["total_s"], unit)
    ctx.metric("median_ms", s["median_ms"], "ms")
    ctx.metric("p99_ms", s["p99_ms"], "ms")
    if s["cv_pct"] is not None:
        ctx.metric("cv_pct", s["cv_pct"], "%")
    else:
        ctx.note("one timed iteration: no coefficient of variation")
    name, value = device.peak_memory_metric("")
    ctx.metric(name, value, "bytes")


def bench_gemm(ctx):
    n = int(ctx.param("size", 256))
    precision = ctx.param("precision", "fp32")
    if precision not in DTYPES:
        raise Failed("gemm precision must be fp32, fp16 or bf16, got %r" % precision)
    ctx.device.reset_peak_memory()
    try:
        times, err = gemm_case(ctx.device, n, DTYPES[precision], int(ctx.param("warmup", 1)),
                               int(ctx.param("iters", 3)))
    except RuntimeError as e:
        if not ctx.device.is_gpu and cpu_lacks_kernel(e):
            raise Skip("this torch has no CPU matmul for %s" % precision)
        raise
    bench_metrics(ctx, times, 2.0 * n ** 3 / 1e12, "TFLOP/s", ctx.device)
    if not within(err, precision, ctx.criterion("tolerance", DEFAULT_TOLERANCE)):
        ctx.fail("gemm %s: result rows differ from float64 by %.3g (relative)" % (precision, err))


def copy_times(device, nbytes, warmup, iters):
    """{direction: (per-iteration seconds, bytes moved per iteration)}; h2d/d2h only on a GPU."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=device.torch).random_(0, 256)
    dst = torch.empty_like(src)
    out = {"device_copy": (device.time_iters(lambda: dst.copy_(src), warmup, iters), 2 * nbytes)}
    if not torch.equal(dst[:4096], src[:4096]):
        raise Failed("a device copy came back different")
    if device.is_gpu:
        host = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        out["h2d"] = (device.time_iters(lambda: src.copy_(host, non_blocking=True), warmup, iters), nbytes)
        out["d2h"] = (device.time_iters(lambda: host.copy_(dst, non_blocking=True), warmup, iters), nbytes)
    return out


def test_bandwidth(ctx):
    nbytes = int(ctx.param("size_mb", 64)) * MIB
    runs = copy_times(ctx.device, nbytes, int(ctx.param("warmup", 1)), int(ctx.param("iters", 5)))
    for direction, (times, moved) in sorted(runs.items()):
        ctx.metric("bandwidth_%s_gbs" % direction, moved / stats.mean(times) / 1e9, "GB/s")
    if not ctx.device.is_gpu:
        ctx.note("CPU: device_copy is a host memory copy (read + write counted); h2d and d2h do not apply")
    elif ctx.device.is_gpu:
        ctx.note("device_copy counts read + write (2 x bytes); h2d and d2h use pinned host memory")


def bench_bandwidth(ctx):
    nbytes = int(ctx.param("size_mb", 64)) * MIB
    ctx.device.reset_peak_memory()
    runs = copy_times(ctx.device, nbytes, int(ctx.param("warmup", 1)), int(ctx.param("iters", 5)))
    times, moved = runs["device_copy"]
    bench_metrics(ctx, times, moved / 1e9, "GB/s", ctx.device)
    for direction in ("h2d", "d2h"):
        if direction in runs:
            t, m = runs[direction]
            ctx.metric("%s_throughput" % direction, m / stats.mean(t) / 1e9, "GB/s")
    ctx.note("throughput is the device copy, read + write counted (2 x bytes)"
             + ("" if ctx.device.is_gpu else "; CPU: a host memory copy, no h2d/d2h"))
