"""numerics: matmul, conv2d, softmax and layernorm against a float64 CPU reference, and a training step."""
import contextlib
import math
import os
import threading

import torch
import torch.nn.functional as F

from . import faults
from .devices import DTYPES, cpu_lacks_kernel
from .result import exception_line, fix_for_error

# rtol = eps_multiple * eps(dtype) + accumulation_multiple * eps(fp32) * sqrt(K), atol = rtol * rms(ref): the
# rounding of the output in its dtype plus fp32 accumulation over a reduction of length K (suite.yaml: numerics).
DEFAULT_TOLERANCE = {"eps_multiple": 4.0, "accumulation_multiple": 16.0}
# gemm's Freivalds row bound (perf.freivalds): the same two multiples, with room for a row's worst element.
DEFAULT_GEMM_TOLERANCE = {"eps_multiple": 8.0, "accumulation_multiple": 16.0}
TF32_EPS = 2.0 ** -10  # TF32 keeps 10 mantissa bits, like fp16
_EPS = {"fp32": 2.0 ** -23, "fp16": 2.0 ** -10, "bf16": 2.0 ** -7}


def rel_error(out, ref):
    """max|out - ref| / max|ref|: the error relative to the output's scale (robust where ref is near 0)."""
    out = out.detach().to("cpu", torch.float64)
    ref = ref.detach().to("cpu", torch.float64)
    scale = float(ref.abs().max())
    return float((out - ref).abs().max()) / (scale if scale > 0 else 1.0)


def eps(dtype_name, tf32=False):
    """Machine epsilon of the dtype the op rounds to (TF32's for an fp32 matmul that runs as TF32)."""
    if dtype_name == "fp32" and tf32:
        return TF32_EPS
    return _EPS[dtype_name]


def rtol_for(dtype_name, k, criteria=None, tf32=False):
    """The relative tolerance of an op in dtype_name reducing over k terms (k = 1 for element-wise ops)."""
    c = dict(DEFAULT_TOLERANCE)
    c.update(criteria or {})
    return (float(c["eps_multiple"]) * eps(dtype_name, tf32)
            + float(c["accumulation_multiple"]) * _EPS["fp32"] * math.sqrt(max(int(k), 1)))


def fmt_index(flat, shape):
    idx = []
    for dim in reversed(shape):
        idx.append(flat % dim)
        flat //= dim
    return "[%s]" % ", ".join(str(i) for i in reversed(idx))


def compare(out, ref, rtol):
    """Element-wise |out - ref| <= atol + rtol * |ref| with atol = rtol * rms(ref), in float64 on the CPU.

    Returns {bad, total, max_abs, at, bound_at, worst} where worst is max(|out - ref| / bound) (1 is the bound) and
    `at` is the index of the largest |out - ref|; a NaN or Inf in out counts as a difference.
    """
    out = out.detach().to("cpu", torch.float64).reshape(ref.shape)
    ref = ref.detach().to("cpu", torch.float64)
    atol = rtol * float(ref.pow(2).mean().sqrt()) if ref.numel() else 0.0
    bound = atol + rtol * ref.abs()
    diff = (out - ref).abs()
    diff = torch.where(torch.isfinite(diff), diff, torch.full_like(diff, float("inf")))
    bad = diff > bound
    flat = int(diff.reshape(-1).argmax()) if diff.numel() else 0
    ratio = diff / bound.clamp_min(1e-300)
    return {"bad": int(bad.sum()), "total": int(ref.numel()), "max_abs": float(diff.reshape(-1)[flat]),
            "at": fmt_index(flat, list(ref.shape)), "bound_at": float(bound.reshape(-1)[flat]),
            "worst": float(ratio.max()) if ratio.numel() else 0.0}


def describe(c):
    """"1 of 16777216 elements differ, max |out-ref| 3.1e+01 at [3001, 17]; bound 4.9e-02"."""
    return "%d of %d elements differ, max |out-ref| %.2g at %s; bound %.2g" % (
        c["bad"], c["total"], c["max_abs"], c["at"], c["bound_at"])


_TF32_LOCK = threading.Lock()
_TF32_USERS = [0, None]  # threads inside strict_fp32, and the flags to restore when the last one leaves


def tf32_matmul(strict=False):
    """True when an fp32 matmul on this GPU may run as TF32: torch allows it, or an override variable forces it.

    TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 makes cuBLAS use TF32 whatever torch says; HIPBLASLT_ALLOW_TF32=1 does the
    same for hipBLASLt on ROCm. `strict`: inside strict_fp32, where torch's own flag is off.
    """
    if os.environ.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1":
        return True
    if getattr(torch.version, "hip", None) and os.environ.get("HIPBLASLT_ALLOW_TF32") == "1":
        return True
    return not strict and bool(torch.backends.cuda.matmul.allow_tf32)


@contextlib.contextmanager
def strict_fp32():
    """fp32 means fp32: TF32 off for matmul and cuDNN while comparing, restored when the last thread leaves."""
    with _TF32_LOCK:
        if _TF32_USERS[0] == 0:
            _TF32_USERS[1] = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
        _TF32_USERS[0] += 1
    try:
        yield
    finally:
        with _TF32_LOCK:
            _TF32_USERS[0] -= 1
            if _TF32_USERS[0] == 0:
                torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = _TF32_USERS[1]


def make_cases(sizes, gen):
    """op name -> (inputs in fp32 on the CPU, function of the inputs, reduction length K of one output)."""
    n = int(sizes["matmul_n"])
    b, c, hw = int(sizes["conv_batch"]), int(sizes["conv_channels"]), int(sizes["conv_hw"])
    rows, width = int(sizes["rows"]), int(sizes["width"])
    return {
        "matmul": ([torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)],
                   lambda a, w: a @ w, n),
        "conv2d": ([torch.randn(b, c, hw, hw, generator=gen), torch.randn(c, c, 3, 3, generator=gen) / 3.0],
                   lambda x, w: F.conv2d(x, w, padding=1), c * 9),
        "softmax": ([torch.randn(rows, width, generator=gen) * 3.0], lambda x: torch.softmax(x, dim=-1), width),
        "layernorm": ([torch.randn(rows, width, generator=gen) * 2.0 + 1.0,
                       torch.randn(width, generator=gen), torch.randn(width, generator=gen)],
                      lambda x, w, bias: F.layer_norm(x, (x.shape[-1],), w, bias), width),
    }


def run_op(device, fn, inputs, dtype):
    """(output, reference): the op on the device in dtype, and in float64 on the CPU from the same rounded inputs."""
    rounded = [t.to(dtype) for t in inputs]
    ref = fn(*[t.to(torch.float64) for t in rounded])
    out = fn(*[t.to(device.torch) for t in rounded])
    device.sync()
    return out, ref


def train_losses(device, steps, seed, lr):
    """Losses of a small MLP fitting a fixed linear target with SGD: they must go down."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(256, 32, generator=gen)
    y = x @ torch.randn(32, 4, generator=gen)
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).to(device.torch)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    x, y = x.to(device.torch), y.to(device.torch)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return losses


def check_losses(losses, max_ratio, what, where):
    """Failure reasons for a training run's losses: every step finite, and the last below max_ratio x the first."""
    bad = [i for i, v in enumerate(losses) if not math.isfinite(v)]
    if bad:
        return ["%s on %s: the loss at step %d of %d is %r (%d non-finite step%s)"
                % (what, where, bad[0] + 1, len(losses), losses[bad[0]], len(bad), "" if len(bad) == 1 else "s")]
    ratio = losses[-1] / losses[0] if losses[0] > 0 else float("nan")
    if not (ratio == ratio and ratio <= max_ratio):
        return ["%s on %s: the loss went from %.4g to %.4g in %d steps on a fixed batch (ratio %.3g, must be <= %g)"
                % (what, where, losses[0], losses[-1], len(losses), ratio, max_ratio)]
    return []


def inject_nan(losses):
    """The train-nan fault: a NaN loss at a late step (as a GradScaler-skipped overflow would leave it)."""
    if faults.on("train-nan") and len(losses) > 1:
        losses[max(1, (len(losses) * 4) // 5)] = float("nan")
    return losses


def test_numerics(ctx):
    seed = int(ctx.param("seed", 0))
    dtypes = ctx.param("dtypes", ["fp32", "fp16", "bf16"])
    sizes = {
        "matmul_n": ctx.param("matmul_n", 64),
        "conv_batch": ctx.param("conv_batch", 2),
        "conv_channels": ctx.param("conv_channels", 8),
        "conv_hw": ctx.param("conv_hw", 16),
        "rows": ctx.param("rows", 64),
        "width": ctx.param("width", 256),
    }
    tolerance = ctx.criterion("tolerance", DEFAULT_TOLERANCE)
    if not isinstance(tolerance, dict) or set(tolerance) - set(DEFAULT_TOLERANCE):
        raise ValueError("criteria.tolerance takes %s, got %r" % (", ".join(sorted(DEFAULT_TOLERANCE)), tolerance))
    cases = make_cases(sizes, torch.Generator().manual_seed(seed))
    tf32 = ctx.device.is_gpu and tf32_matmul(strict=True)
    if tf32:
        ctx.note("fp32 matmul is judged as TF32: an override variable forces TF32 in the BLAS library")
    skipped = []
    with strict_fp32():
        for op, (inputs, fn, k) in sorted(cases.items()):
            for name in dtypes:
                if name not in DTYPES:
                    ctx.fail("unknown dtype %r in params.dtypes" % name)
                    continue
                try:
                    out, ref = run_op(ctx.device, fn, inputs, DTYPES[name])
                except RuntimeError as e:
                    if not ctx.device.is_gpu and cpu_lacks_kernel(e):
                        skipped.append("%s %s" % (op, name))
                        continue
                    # One broken op/dtype (bf16 on an older GPU, a missing kernel) must not hide the others.
                    ctx.fail("%s %s on %s: %s" % (op, name, ctx.where, exception_line(e)),
                             fix_for_error(exception_line(e)))
                    continue
                rtol = rtol_for(name, k, tolerance, tf32 and op == "matmul")
                c = compare(out, ref, rtol)
                ctx.metric("%s_%s_max_rel_err" % (op, name), rel_error(out, ref), "ratio", "lower")
                ctx.metric("%s_%s_err_over_bound" % (op, name), c["worst"], "ratio", "lower")
                if c["bad"]:
                    ctx.fail("%s %s on %s: %s (rtol %.2g, K %d)" % (op, name, ctx.where, describe(c), rtol, k))
    if skipped:
        ctx.note("skipped (this torch has no CPU kernel for the dtype): %s" % ", ".join(skipped))
    steps = int(ctx.param("train_steps", 10))
    losses = inject_nan(train_losses(ctx.device, steps, seed, float(ctx.param("train_lr", 0.05))))
    ratio = losses[-1] / losses[0] if losses[0] > 0 else float("nan")
    ctx.metric("train_loss_first", losses[0], "loss", "lower")
    ctx.metric("train_loss_last", losses[-1], "loss", "lower")
    ctx.metric("train_loss_ratio", ratio, "ratio", "lower")
    for reason in check_losses(losses, float(ctx.criterion("max_loss_ratio", 0.9)), "training", ctx.where):
        ctx.fail(reason)
