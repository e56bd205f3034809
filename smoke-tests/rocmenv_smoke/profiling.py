"""profile: the share of time by operator class over a few ResNet training steps, from torch.profiler.

On a GPU the shares are of device time (kernels and copies, classified by kernel name) plus the host
time spent blocked in synchronise calls; on the CPU they are of operators' self CPU time.
"""
import re

CLASSES = ("convolution", "matmul", "memory_copy", "synchronisation", "other")

_CONV = re.compile(r"conv|winograd|fprop|dgrad|wgrad|igemm|implicit_?gemm|miopensp\d|gridwise_convolution", re.I)
_MATMUL = re.compile(r"gemm|matmul|\bbmm\b|\baddmm\b|\bmm\b|aten::(add)?mm|aten::linear|cijk_|cutlass", re.I)
_COPY = re.compile(r"memcpy|copy|aten::to\b|_to_copy|dtod|htod|dtoh", re.I)
_SYNC = re.compile(r"synchroni[sz]e|streamwaitevent|eventsync", re.I)


def classify(name):
    """Operator class of an operator or kernel name (order matters: implicit-GEMM convolutions are convolutions)."""
    if _SYNC.search(name):
        return "synchronisation"
    if _CONV.search(name):
        return "convolution"
    if _COPY.search(name):
        return "memory_copy"
    if _MATMUL.search(name):
        return "matmul"
    return "other"


def shares(times):
    """{class: microseconds} -> {class: percent of the total}; all zeros when nothing was timed."""
    total = float(sum(times.values()))
    return dict((c, 100.0 * times.get(c, 0.0) / total if total > 0 else 0.0) for c in CLASSES)


def _attr(evt, *names):
    for n in names:
        v = getattr(evt, n, None)
        if v is not None:
            return float(v)
    return 0.0


def _is_cpu_event(evt):
    dt = getattr(evt, "device_type", None)
    return dt is None or str(dt).endswith("CPU")


def class_times(events, on_gpu):
    """Sums time per class over the profiler's events (see the module doc)."""
    times = dict((c, 0.0) for c in CLASSES)
    for evt in events:
        name = evt.name
        if on_gpu:
            if _is_cpu_event(evt):
                if _SYNC.search(name):
                    times["synchronisation"] += _attr(evt, "self_cpu_time_total")
                continue
            times[classify(name)] += _attr(evt, "self_device_time_total", "self_cuda_time_total")
        elif _is_cpu_event(evt):
            times[classify(name)] += _attr(evt, "self_cpu_time_total")
    return times


def test_profile(ctx):
    from torch.profiler import ProfilerActivity, profile

    from .models import build, make_step

    device = ctx.device
    batch = int(ctx.param("batch", 2))
    image = int(ctx.param("image_size", 64))
    steps = int(ctx.param("steps", 2))
    model = build(ctx.param("model", "resnet50"), image)
    step, model = make_step(model, device, "train", ctx.param("precision", "fp32"), batch, image)
    for _ in range(int(ctx.param("warmup", 1))):
        step()
    device.sync()
    activities = [ProfilerActivity.CPU]
    if device.is_gpu:
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        for _ in range(steps):
            step()
        device.sync()
    events = list(prof.events())
    times = class_times(events, device.is_gpu)
    if device.is_gpu and sum(v for k, v in times.items() if k != "synchronisation") == 0:
        # No device activity recorded (a profiler without the GPU tracer): fall back to CPU operator time.
        ctx.note("the profiler recorded no GPU activity; the shares are of CPU operator time")
        times = class_times(events, False)
    pct = shares(times)
    for c in CLASSES:
        ctx.metric("%s_pct" % c, pct[c], "%")
    ctx.metric("profiled_time_ms", sum(times.values()) / 1e3, "ms")
    if sum(times.values()) <= 0:
        ctx.fail("the profiler recorded no time")
    ctx.note("shares of %s over %d training step(s)"
             % ("device time plus host time blocked in synchronise calls" if device.is_gpu
                else "operators' self CPU time", steps))
