"""onnx: ResNet-50 exported with a dynamic batch axis, run on every available ONNX Runtime execution provider,
compared with eager PyTorch, with QPS and p99 latency beside eager's."""
import inspect
import os
import shutil
import tempfile

import torch

from . import stats
from .numerics import rel_error, strict_fp32
from . import faults
from .result import Failed, exception_line

# In the order of preference; short names become metric names.
PROVIDERS = (
    ("MIGraphXExecutionProvider", "migraphx"),
    ("ROCMExecutionProvider", "rocm"),
    ("TensorrtExecutionProvider", "tensorrt"),
    ("CUDAExecutionProvider", "cuda"),
    ("CPUExecutionProvider", "cpu"),
)


GPU_PROVIDERS = tuple(p for p, _ in PROVIDERS if p != "CPUExecutionProvider")


def available_providers(ort):
    """ONNX Runtime's available providers; the onnx-cpu-only fault stubs the list to the CPU provider alone."""
    if faults.on("onnx-cpu-only"):
        return ["CPUExecutionProvider"]
    return list(ort.get_available_providers())


def judge_providers(vendor, ran, available, where):
    """(reason, fix) when a GPU vendor's run had no GPU provider (ROCm, MIGraphX, CUDA, TensorRT) run, else None:
    CPU figures must never stand in for the GPU's."""
    if vendor not in ("amd", "nvidia") or any(p in GPU_PROVIDERS for p in ran):
        return None
    return ("onnx on %s: no GPU execution provider ran (ran: %s; available: %s); CPU figures do not count on "
            "%s host" % (where, ", ".join(ran) or "none", ", ".join(available) or "none",
                         "an AMD" if vendor == "amd" else "an NVIDIA"),
            "install onnxruntime with this stack's GPU providers (`rocmenv dockerfile --onnxruntime`: "
            "onnxruntime-rocm or onnxruntime-migraphx on ROCm, onnxruntime-gpu on CUDA)")


def session_providers(provider, device):
    """The providers argument: the GPU providers get the device's index (torch's, which is ONNX Runtime's too)."""
    if provider in GPU_PROVIDERS and device.is_gpu:
        return [(provider, {"device_id": device.index})]
    return [provider]


def bound_runner(ort, sess, provider, xd, device):
    """A function running the session on an input already in device memory (IOBinding), and how it binds.

    Eager's input is on the device, so ONNX Runtime's must be too; with the CPU provider both are host tensors.
    """
    if provider not in GPU_PROVIDERS or not device.is_gpu:
        feed = {"input": xd.cpu().numpy()}
        return (lambda: sess.run(None, feed)[0]), "host input"
    import numpy as np
    x = xd.contiguous()
    io = sess.io_binding()
    io.bind_input(name="input", device_type="cuda", device_id=device.index, element_type=np.float32,
                  shape=tuple(x.shape), buffer_ptr=x.data_ptr())
    io.bind_output("logits", device_type="cuda", device_id=device.index)

    def run():
        sess.run_with_iobinding(io)
        return io.copy_outputs_to_cpu()[0]

    run.keep = x  # the bound buffer must outlive the binding
    return run, "IOBinding, input in device memory"


def export(model, path, image, opset):
    """torch.onnx.export with a dynamic batch axis on input and output (the TorchScript exporter)."""
    if opset < 13:
        raise Failed("params.opset must be 13 or newer, got %d" % opset)
    kwargs = dict(input_names=["input"], output_names=["logits"], opset_version=opset,
                  dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}}, do_constant_folding=True)
    try:
        if "dynamo" in inspect.signature(torch.onnx.export).parameters:
            # torch 2.9 made the dynamo exporter the default; dynamic_axes belongs to the TorchScript one.
            kwargs["dynamo"] = False
    except (TypeError, ValueError):
        pass
    example = torch.randn(1, 3, image, image)
    with torch.no_grad():
        torch.onnx.export(model, (example,), path, **kwargs)


def run_onnx(ctx, bench):
    import onnx
    import onnxruntime as ort

    from .models import build

    device = ctx.device
    batch = int(ctx.param("batch", 2))
    image = int(ctx.param("image_size", 64))
    warmup, iters = int(ctx.param("warmup", 1)), int(ctx.param("iters", 3))
    opset = int(ctx.param("opset", 17))
    wanted = ctx.param("providers", [p for p, _ in PROVIDERS])
    max_diff = float(ctx.criterion("max_rel_diff", 1e-3))
    model = build(ctx.param("model", "resnet50"), image).eval()
    tmp = tempfile.mkdtemp(prefix="rocmenv-onnx-")
    try:
        path = os.path.join(tmp, "model.onnx")
        export(model, path, image, opset)
        onnx.checker.check_model(onnx.load(path))
        x = torch.randn(batch, 3, image, image, generator=torch.Generator().manual_seed(0))
        with torch.no_grad(), strict_fp32():
            reference = model(x)
            # Eager on the device, timed the same way as ONNX Runtime (host clock around a synchronous call).
            dev_model = model.to(device.torch)
            xd = x.to(device.torch)

            def eager():
                # The output comes back to the host, as ONNX Runtime's does.
                return dev_model(xd).cpu()

            t_eager = _host_times(eager, warmup, iters)
        _report(ctx, "eager", batch, t_eager, bench)
        available = available_providers(ort)
        ctx.note("onnxruntime %s providers: %s" % (ort.__version__, ", ".join(available)))
        ran = []
        for provider, short in PROVIDERS:
            if provider not in available or provider not in wanted:
                continue
            if provider != "CPUExecutionProvider" and not device.is_gpu:
                continue
            opts = ort.SessionOptions()
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            try:
                sess = ort.InferenceSession(path, sess_options=opts, providers=session_providers(provider, device))
            except Exception as e:
                ctx.note("%s could not start: %s" % (provider, str(e).splitlines()[0] if str(e) else type(e).__name__))
                continue
            if sess.get_providers()[:1] != [provider]:
                ctx.note("%s is listed but the session fell back to %s" % (provider, sess.get_providers()))
                continue
            try:
                runner, how = bound_runner(ort, sess, provider, xd, device)
                out = torch.from_numpy(runner())
            except Exception as e:
                ctx.note("%s: IOBinding failed (%s); timed with a host input" % (provider, exception_line(e)))
                feed = {"input": x.numpy()}
                runner, how = (lambda: sess.run(None, feed)[0]), "host input"
                out = torch.from_numpy(runner())
            diff = rel_error(out, reference)
            ctx.metric("onnx_%s_max_rel_diff" % short, diff, "ratio", "lower")
            ctx.metric("onnx_%s_max_abs_diff" % short, float((out - reference).abs().max()), "abs", "lower")
            if not diff <= max_diff:
                ctx.fail("onnx on %s: %s output differs from eager by %.3g (relative), above %g"
                         % (ctx.where, provider, diff, max_diff))
            times = _host_times(runner, warmup, iters)
            _report(ctx, "onnx_" + short, batch, times, bench)
            ctx.note("%s timed with %s" % (provider, how))
            ran.append(provider)
        if not ran:
            raise Failed("onnx on %s: no ONNX Runtime execution provider could run the model (available: %s)"
                         % (ctx.where, ", ".join(available)), "install onnxruntime with this stack's providers "
                         "(`rocmenv dockerfile --onnxruntime`)")
        verdict = judge_providers(ctx.vendor, ran, available, ctx.where)
        if verdict:
            ctx.fail(*verdict)
        ctx.note("the ONNX model was exported at batch 1 and run at batch %d (dynamic batch axis, opset %d)"
                 % (batch, opset))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _host_times(fn, warmup, iters):
    import time
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def _report(ctx, prefix, batch, times, bench):
    s = stats.summarize_seconds(times)
    ctx.metric(prefix + "_qps", batch * s["n"] / s["total_s"], "images/s")
    ctx.metric(prefix + "_p99_ms", s["p99_ms"], "ms")
    if bench:
        ctx.metric(prefix + "_median_ms", s["median_ms"], "ms")
        if s["cv_pct"] is not None:
            ctx.metric(prefix + "_cv_pct", s["cv_pct"], "%")


def test_onnx(ctx):
    run_onnx(ctx, bench=False)


def bench_onnx(ctx):
    run_onnx(ctx, bench=True)
    # The throughput a benchmark reports: the first (preferred) provider that ran; on a GPU vendor, a GPU provider.
    for provider, short in PROVIDERS:
        if ctx.vendor in ("amd", "nvidia") and provider not in GPU_PROVIDERS:
            continue
        m = [x for x in ctx.metrics if x["name"] == "onnx_%s_qps" % short]
        if m:
            ctx.metric("throughput", m[0]["value"], "images/s")
            for stat in ("median_ms", "p99_ms", "cv_pct"):
                v = [x for x in ctx.metrics if x["name"] == "onnx_%s_%s" % (short, stat)]
                if v:
                    ctx.metric(stat, v[0]["value"], v[0]["unit"])
            ctx.note("throughput, median_ms, p99_ms and cv_pct are onnx_%s's (%s); ONNX Runtime's memory is not "
                     "torch's, so no peak memory" % (short, provider))
            break
