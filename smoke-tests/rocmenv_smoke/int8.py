"""int8: dynamic INT8 quantisation of the Linear layers against fp32 (and fp16 on a GPU) on the same inputs."""
import copy

import torch

from . import stats
from .devices import Device
from .models import quantize_dynamic
from .numerics import rel_error
from .result import Skip, where


def build_model(name, image_size, seed):
    """(model, input shape without batch, note). ViT gets a random head: torchvision zero-initialises it."""
    gen = torch.Generator().manual_seed(seed)
    if name == "mlp":
        torch.manual_seed(seed)
        model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * image_size * image_size, 512),
                                    torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
                                    torch.nn.Linear(512, 100))
        return model, (3, image_size, image_size), None
    try:
        import torchvision  # noqa: F401
    except ImportError:
        raise Skip("torchvision is not installed %s (params.model %s needs it; mlp does not)" % (where(), name))
    from .models import build
    model = build(name, image_size)
    head = getattr(getattr(model, "heads", None), "head", None)
    note = None
    if head is not None:
        with torch.no_grad():
            head.weight.copy_(torch.randn(head.weight.shape, generator=gen) * 0.02)
        note = "the ViT head is re-initialised at random (torchvision zero-initialises it: every output would be 0)"
    return model, (3, image_size, image_size), note


def agreement_pct(out, ref):
    """Share of rows whose argmax (top-1 class) matches the reference, in percent."""
    return 100.0 * float((out.argmax(dim=1).cpu() == ref.argmax(dim=1).cpu()).float().mean())


def test_int8(ctx):
    if torch.backends.quantized.engine in (None, "none"):
        raise Skip("this torch has no quantized engine (fbgemm/x86/onednn/qnnpack) for dynamic INT8")
    seed = int(ctx.param("seed", 0))
    name = ctx.param("model", "vit_b_16")
    image = int(ctx.param("image_size", 32))
    batch = int(ctx.param("batch", 2))
    n_agree = int(ctx.param("agreement_batch", 16))
    warmup, iters = int(ctx.param("warmup", 1)), int(ctx.param("iters", 3))
    model, shape, note = build_model(name, image, seed)
    if note:
        ctx.note(note)
    model = model.eval()
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn((n_agree,) + shape, generator=gen)
    cpu = Device("cpu")
    with torch.no_grad():
        ref = model(x)
        qmodel = quantize_dynamic(copy.deepcopy(model)).eval()
        out = qmodel(x)
        xb = x[:batch]
        t32 = cpu.time_iters(lambda: model(xb), warmup, iters)
        t8 = cpu.time_iters(lambda: qmodel(xb), warmup, iters)
    agree, err = agreement_pct(out, ref), rel_error(out, ref)
    ctx.metric("int8_top1_agreement_pct", agree, "%")
    ctx.metric("int8_max_rel_err", err, "ratio", "lower")
    ctx.metric("int8_cpu_latency_p50_ms", stats.percentile(t8, 50) * 1e3, "ms")
    ctx.metric("fp32_cpu_latency_p50_ms", stats.percentile(t32, 50) * 1e3, "ms")
    ctx.metric("int8_speedup_vs_fp32", stats.mean(t32) / stats.mean(t8), "x")
    ctx.note("dynamic INT8 runs on the CPU (engine %s): int8 and its fp32 baseline are CPU figures"
             % torch.backends.quantized.engine)
    min_agree = float(ctx.criterion("min_top1_agreement_pct", 70))
    max_err = float(ctx.criterion("max_rel_err", 0.15))
    if agree < min_agree:
        ctx.fail("int8 on cpu: top-1 agreement with fp32 is %.1f%%, below %g%%" % (agree, min_agree))
    if not err <= max_err:
        ctx.fail("int8 on cpu: max relative error vs fp32 is %.3g, above %g" % (err, max_err))
    if ctx.device.is_gpu:
        dev = ctx.device
        m16 = copy.deepcopy(model).to(dev.torch)
        xg = x.to(dev.torch)
        with torch.no_grad():
            g32 = dev.time_iters(lambda: m16(xg[:batch]), warmup, iters)
            m16 = m16.half()
            out16 = m16(xg.half()).float()
            g16 = dev.time_iters(lambda: m16(xg[:batch].half()), warmup, iters)
        a16, e16 = agreement_pct(out16, ref), rel_error(out16, ref)
        ctx.metric("fp16_top1_agreement_pct", a16, "%")
        ctx.metric("fp16_max_rel_err", e16, "ratio", "lower")
        ctx.metric("fp16_gpu_latency_p50_ms", stats.percentile(g16, 50) * 1e3, "ms")
        ctx.metric("fp32_gpu_latency_p50_ms", stats.percentile(g32, 50) * 1e3, "ms")
        ctx.metric("fp16_speedup_vs_fp32_gpu", stats.mean(g32) / stats.mean(g16), "x")
        if a16 < min_agree:
            ctx.fail("fp16 on %s: top-1 agreement with fp32 is %.1f%%, below %g%%" % (ctx.where, a16, min_agree))
        if not e16 <= max_err:
            ctx.fail("fp16 on %s: max relative error vs fp32 is %.3g, above %g" % (ctx.where, e16, max_err))
