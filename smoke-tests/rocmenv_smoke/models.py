"""models: ResNet-50 and ViT-B/16 (torchvision, random weights) training and inference; the resnet50 and
vit_b_16 benchmarks. The method of the published ROCm-vs-CUDA
comparisons: warm-up iterations, then timed iterations between device events."""
import sys
import traceback

import torch
import torch.nn.functional as F

from . import stats
from .devices import DTYPES, amp_dtype, autocast, grad_scaler, is_oom
from .result import Failed, Skip, exception_line, fix_for_error

PRECISIONS = ("fp32", "fp16", "bf16", "amp", "int8")
MODES = ("train", "infer")


def build(name, image_size, num_classes=1000):
    """A torchvision model with random weights; never downloads anything."""
    import torchvision.models as tvm

    fn = getattr(tvm, name, None)
    if fn is None:
        raise Skip("torchvision %s has no %s" % (_tv_version(), name))
    kwargs = {"num_classes": num_classes}
    if name.startswith("vit_"):
        kwargs["image_size"] = int(image_size)
    try:
        return fn(weights=None, **kwargs)
    except TypeError:
        # torchvision < 0.13 takes pretrained= instead of weights=.
        return fn(pretrained=False, **kwargs)


def _tv_version():
    try:
        import torchvision
        return torchvision.__version__
    except Exception:
        return "?"


def check_precision(device, precision, mode, model_name=None):
    """Raises Skip or Failed when the precision cannot run here; returns a note or None."""
    if precision not in PRECISIONS:
        raise Failed("precision must be one of %s, got %r" % ("|".join(PRECISIONS), precision))
    if mode not in MODES:
        raise Failed("mode must be train or infer, got %r" % (mode,))
    if precision == "int8":
        if mode != "infer":
            raise Failed("int8 (dynamic quantisation) is inference only; use mode infer")
        if model_name is not None and not model_name.startswith("vit_"):
            # Dynamic INT8 quantises Linear layers only: ResNet-50 would be fp32 convolutions and one int8 Linear.
            raise Skip("int8 is not measured for %s: dynamic INT8 quantisation covers Linear layers, and its "
                       "convolutions would run in fp32 on the CPU" % model_name,
                       "use --precision int8 with --model vit_b_16, whose matmuls are Linear layers")
        if torch.backends.quantized.engine in (None, "none"):
            raise Skip("this torch has no quantized engine for dynamic INT8")
        return ("int8: dynamic INT8 quantisation of the Linear layers (patch embedding and layer norms stay fp32), "
                "on the CPU" + ("" if not device.is_gpu else " (PyTorch has no GPU kernels for it)"))
    if not device.is_gpu:
        dt = torch.bfloat16 if precision in ("amp", "bf16") else DTYPES.get(precision)
        if dt is not None and dt != torch.float32 and not cpu_supports(dt):
            raise Skip("this torch has no CPU kernels for %s" % precision)
        if precision == "amp":
            return "CPU AMP is bf16 autocast"
    return None


def amp_gap_on_cpu(device, precision, exc):
    """True when CPU autocast hit an op it does not cover (a dtype mismatch): skip that case, do not fail it."""
    text = str(exc)
    return (not device.is_gpu and precision == "amp" and isinstance(exc, RuntimeError)
            and ("expected scalar type" in text or "not implemented for" in text))


def cpu_supports(dtype):
    try:
        w = torch.randn(4, 3, 3, 3).to(dtype)
        F.conv2d(torch.randn(1, 3, 8, 8).to(dtype), w)
        with autocast(_CPU, torch.bfloat16):
            torch.randn(4, 4) @ torch.randn(4, 4)
        return True
    except RuntimeError:
        return False


class _Cpu(object):
    is_gpu = False


_CPU = _Cpu()


def optimizer_step(loss, opt, scaler):
    """Backward and one optimizer step; through the GradScaler when fp16 autocast needs loss scaling."""
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    else:
        loss.backward()
        opt.step()


def make_step(model, device, mode, precision, batch, image_size, channels_last=False, seed=0, num_classes=1000):
    """A closure running one training step or one inference pass, and the model it runs."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, 3, image_size, image_size, generator=gen)
    y = torch.randint(0, num_classes, (batch,), generator=gen)
    if precision == "int8":
        model = quantize_dynamic(model.eval())
        dev = torch.device("cpu")
    else:
        dev = device.torch
        model = model.to(dev)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    x, y = x.to(dev), y.to(dev)
    if precision in ("fp16", "bf16"):
        model = model.to(DTYPES[precision])
        x = x.to(DTYPES[precision])
    use_amp = precision == "amp"
    low = amp_dtype(device)
    if mode == "infer":
        model.eval()

        def step():
            with torch.no_grad():
                if use_amp:
                    with autocast(device, low):
                        return model(x)
                return model(x)

        return step, model
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = grad_scaler() if use_amp and device.is_gpu and low == torch.float16 else None
    losses = []

    def train_step():
        opt.zero_grad(set_to_none=True)
        if use_amp:
            with autocast(device, low):
                loss = F.cross_entropy(model(x), y)
        else:
            loss = F.cross_entropy(model(x), y)
        optimizer_step(loss, opt, scaler)
        losses.append(loss.detach())
        return loss

    train_step.losses = losses
    train_step.scaler = scaler
    return train_step, model


def quantize_dynamic(model):
    """INT8 dynamic quantisation of the Linear layers (torch.ao.quantization where it exists)."""
    try:
        from torch.ao.quantization import quantize_dynamic as qd
    except ImportError:
        from torch.quantization import quantize_dynamic as qd
    return qd(model.to("cpu"), {torch.nn.Linear}, dtype=torch.qint8)


# The smallest image a BatchNorm model can train on at batch 1: ResNet-50 downsamples by 32, and training BatchNorm
# needs more than one value per channel (2 x 2 at the last stage).
MIN_IMAGE_AT_BATCH_1 = 64
# Training steps (warm-up and timed) from which the last loss on the fixed batch must be below the first.
MIN_TREND_STEPS = 5


def check_training(losses, scaler, what, where):
    """Failure reasons for a training case: every step's loss finite, the loss lower at the end than at the start on
    its fixed batch, and an AMP loss scale that did not collapse (GradScaler halves it on every overflowing step)."""
    from .numerics import check_losses, inject_nan
    values = inject_nan([float(v.float().item()) for v in losses])
    # Momentum SGD from random weights may overshoot at first: under MIN_TREND_STEPS only finiteness is judged.
    reasons = check_losses(values, 1.0 if len(values) >= MIN_TREND_STEPS else float("inf"), what, where)
    if scaler is not None:
        scale = float(scaler.get_scale())
        if scale < 1.0:
            reasons.append("%s on %s: the AMP loss scale collapsed to %.3g (overflowing fp16 gradients at most steps)"
                           % (what, where, scale))
    return reasons


def run_case(ctx, model_name, mode, precision, batch, image_size, warmup, iters, channels_last=False):
    """Builds, warms up and times one case; returns (per-iteration seconds, peak memory (name, bytes), note)."""
    device = ctx.device
    note = check_precision(device, precision, mode, model_name)
    if mode == "train" and batch == 1 and model_name == "resnet50" and image_size < MIN_IMAGE_AT_BATCH_1:
        ctx.note("image_size %d raised to %d: training BatchNorm at batch 1 needs more than one value per channel"
                 % (image_size, MIN_IMAGE_AT_BATCH_1))
        image_size = MIN_IMAGE_AT_BATCH_1
    device.free_memory()
    device.reset_peak_memory()
    model = build(model_name, image_size)
    step, model = make_step(model, device, mode, precision, batch, image_size, channels_last)
    timer_device = device if precision != "int8" else _cpu_device()
    times = timer_device.time_iters(step, warmup, iters)
    out = step() if mode == "infer" else None
    losses = getattr(step, "losses", None)
    if losses:
        reasons = check_training(losses, getattr(step, "scaler", None),
                                 "%s %s %s" % (model_name, mode, precision), ctx.where)
        if reasons:
            raise Failed("; ".join(reasons))
    if out is not None and not bool(torch.isfinite(out.float()).all()):
        raise Failed("%s %s %s on %s: the output has NaN or Inf" % (model_name, mode, precision, ctx.where))
    peak = timer_device.peak_memory_metric("")
    del model, step
    return times, peak, note


def _cpu_device():
    from .devices import Device
    return Device("cpu")


def test_models(ctx):
    batches = ctx.param("batch", 2)
    image = int(ctx.param("image_size", 32))
    warmup, iters = int(ctx.param("warmup", 1)), int(ctx.param("iters", 3))
    for model_name in ctx.param("models", ["resnet50", "vit_b_16"]):
        # batch is one number for every model, or a map of model name to batch.
        batch = int(batches.get(model_name, 2) if isinstance(batches, dict) else batches)
        for mode in ctx.param("modes", ["train", "infer"]):
            for precision in ctx.param("precisions", ["fp32", "amp"]):
                prefix = "%s_%s_%s_" % (model_name, mode, precision)
                try:
                    times, (peak_name, peak), note = run_case(ctx, model_name, mode, precision, batch, image,
                                                              warmup, iters)
                except Skip as s:
                    ctx.note("%s %s %s skipped: %s" % (model_name, mode, precision, s.reason))
                    continue
                except Failed as f:
                    ctx.fail(f.reason, f.fix)
                    continue
                except Exception as e:
                    if amp_gap_on_cpu(ctx.device, precision, e):
                        ctx.note("%s %s amp skipped: this torch's CPU bf16 autocast does not cover it (%s)"
                                 % (model_name, mode, exception_line(e)))
                        continue
                    if not is_oom(e):
                        sys.stderr.write(traceback.format_exc())
                    ctx.fail("%s %s %s: %s" % (model_name, mode, precision, exception_line(e)),
                             fix_for_error(exception_line(e)))
                    continue
                if note:
                    ctx.note(note)
                s = stats.summarize_seconds(times)
                ctx.metric(prefix + "images_per_s", batch * s["n"] / s["total_s"], "images/s")
                ctx.metric(prefix + "latency_p50_ms", s["p50_ms"], "ms")
                ctx.metric(prefix + "latency_p99_ms", s["p99_ms"], "ms")
                ctx.metric(prefix + peak_name, peak, "bytes")
    if not ctx.device.is_gpu:
        ctx.note("CPU peak_rss_bytes is the process's peak resident memory so far, a rough upper bound")


def bench_model(ctx, model_name):
    from .perf import bench_metrics

    batch = int(ctx.param("batch", 2))
    image = int(ctx.param("image_size", 64 if not ctx.device.is_gpu else 224))
    mode = ctx.param("mode", "train")
    precision = ctx.param("precision", "fp32")
    channels_last = bool(ctx.param("channels_last", False))
    bench = ctx.param("cudnn_benchmark", None)
    if bench is not None and not ctx.device.is_gpu:
        raise Skip("cudnn_benchmark selects cuDNN/MIOpen convolution algorithms; the CPU does not use it")
    saved = torch.backends.cudnn.benchmark
    try:
        if bench is not None:
            # On ROCm this turns on MIOpen's find (it benchmarks the convolution solvers once per shape).
            torch.backends.cudnn.benchmark = bool(bench)
        times, _, note = run_case(ctx, model_name, mode, precision, batch, image, int(ctx.param("warmup", 1)),
                                  int(ctx.param("iters", 3)), channels_last)
    finally:
        torch.backends.cudnn.benchmark = saved
    if note:
        ctx.note(note)
    dev = ctx.device if precision != "int8" else _cpu_device()
    bench_metrics(ctx, times, batch, "images/s", dev)


def bench_resnet50(ctx):
    bench_model(ctx, "resnet50")


def bench_vit_b_16(ctx):
    bench_model(ctx, "vit_b_16")
