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


# A CPU torch whose fp16/bf16 gemm adds in the dtype itself cannot meet the fp32-accumulation bound above: torch
# before 2.1 without oneDNN's bf16 path (no AVX-512 on x86) rounds every product and every partial sum of its
# reference gemm to the dtype, which matmul and conv2d (im2col + gemm) go through. A probe finds such an op
# (dtype_accumulation), and its result is judged against the rounding-error bound of a dot product computed in the
# dtype: |fl(a.b) - a.b| <= ((1 + u)^K - 1) * sum_k |a_k b_k|, whatever the order of the sum (each term carries at
# most K roundings of relative size u: the product and up to K - 1 additions; Higham, Accuracy and Stability of
# Numerical Algorithms, 2nd ed., section 3.1, before its simplification to K u / (1 - K u)). A GPU is never probed.


def unit_roundoff(dtype_name):
    """u of one rounding to the dtype, plus fp32's: the CPU kernels compute in fp32 and round that to the dtype."""
    return eps(dtype_name) / 2 + _EPS["fp32"]


def dtype_accumulation_gamma(dtype_name, k):
    """(1 + u)^K - 1: the relative bound (to sum |a_k b_k|) of a length-K dot product accumulated in the dtype."""
    return math.expm1(max(int(k), 1) * math.log1p(unit_roundoff(dtype_name)))


def probe_inputs(op, inputs, dtype_name):
    """Inputs shaped like the op's whose every output sums one 1 and copies of t = eps/4 (a quarter of the dtype's
    spacing at 1), the 1 at a different place in each: fp32 accumulation adds them exactly and rounds once; a sum
    kept in the dtype loses the t's that come after the 1 (1 + t rounds to 1). None for an op without a probe."""
    t = eps(dtype_name) / 4
    if op == "matmul":
        a = torch.full(tuple(inputs[0].shape), t)
        a.fill_diagonal_(1.0)
        return [a, torch.ones(tuple(inputs[1].shape))]
    if op == "conv2d":
        c_out, c_in, kh, kw = inputs[1].shape
        w = torch.full((c_out, c_in * kh * kw), t)
        w[torch.arange(c_out), torch.arange(c_out) * (c_in * kh * kw) // c_out] = 1.0
        return [torch.ones(tuple(inputs[0].shape)), w.reshape(c_out, c_in, kh, kw)]
    return None


def dtype_accumulation(device, fn, op, inputs, dtype_name):
    """None when op (fn, on inputs shaped like `inputs`) adds like fp32, has no probe, or runs on a GPU (never
    probed); else what its probe got: {got, want, at}, an output that differs from the once-rounded exact sum."""
    if device.is_gpu or dtype_name == "fp32":
        return None
    probe = probe_inputs(op, inputs, dtype_name)
    if probe is None:
        return None
    rounded = [t.to(DTYPES[dtype_name]) for t in probe]
    want = fn(*[t.to(torch.float64) for t in rounded]).to(DTYPES[dtype_name])
    got = fn(*[t.to(device.torch) for t in rounded]).to("cpu")
    differ = (got != want).reshape(-1)
    if not bool(differ.any()):
        return None
    flat = int(differ.nonzero()[0])
    return {"got": float(got.reshape(-1)[flat]), "want": float(want.reshape(-1)[flat]),
            "at": fmt_index(flat, list(want.shape))}


def dtype_accumulation_bound(fn, inputs, dtype_name, k):
    """(gamma, bound): ((1 + u)^K - 1) * fn(|inputs|) per output, in float64 from the inputs rounded to the dtype;
    fn(|a|, |b|) is sum_k |a_k b_k| for a bilinear op (matmul, conv2d)."""
    gamma = dtype_accumulation_gamma(dtype_name, k)
    return gamma, gamma * fn(*[t.to(DTYPES[dtype_name]).to(torch.float64).abs() for t in inputs])


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


def compare(out, ref, rtol, floor=None):
    """Element-wise |out - ref| <= atol + rtol * |ref| with atol = rtol * rms(ref), in float64 on the CPU; `floor`
    (a tensor shaped like ref) raises each element's bound to at least its value.

    Returns {bad, total, worst, worst_at, worst_abs, worst_bound, max_abs, at, bound_at}: worst is the largest
    |out - ref| / bound (1 is the bound) at worst_at, with that element's error and bound; max_abs is the largest
    |out - ref|, at `at`, with its bound bound_at. A NaN or Inf in out counts as a difference.
    """
    out = out.detach().to("cpu", torch.float64).reshape(ref.shape)
    ref = ref.detach().to("cpu", torch.float64)
    atol = rtol * float(ref.pow(2).mean().sqrt()) if ref.numel() else 0.0
    bound = atol + rtol * ref.abs()
    if floor is not None:
        bound = torch.maximum(bound, floor.detach().to("cpu", torch.float64).reshape(ref.shape))
    diff = (out - ref).abs()
    diff = torch.where(torch.isfinite(diff), diff, torch.full_like(diff, float("inf")))
    bad = diff > bound
    if not diff.numel():
        return {"bad": 0, "total": 0, "worst": 0.0, "worst_at": "[]", "worst_abs": 0.0, "worst_bound": 0.0,
                "max_abs": 0.0, "at": "[]", "bound_at": 0.0}
    ratio = (diff / bound.clamp_min(1e-300)).reshape(-1)
    diff, bound = diff.reshape(-1), bound.reshape(-1)
    flat, worst = int(diff.argmax()), int(ratio.argmax())
    shape = list(ref.shape)
    return {"bad": int(bad.sum()), "total": int(ref.numel()), "worst": float(ratio[worst]),
            "worst_at": fmt_index(worst, shape), "worst_abs": float(diff[worst]), "worst_bound": float(bound[worst]),
            "max_abs": float(diff[flat]), "at": fmt_index(flat, shape), "bound_at": float(bound[flat])}


def describe(c):
    """"2 of 4096 elements differ, worst [8, 35]: |out-ref| 0.46, bound 0.35 (1.3x); max |out-ref| 0.56 at [28, 3]
    (bound 0.87)": the element furthest over its own bound, and the largest error where that is elsewhere."""
    return "%d of %d elements differ, %s" % (c["bad"], c["total"], describe_worst(c))


def describe_worst(c):
    """The worst element by |out-ref| / bound with its error and bound; the largest |out-ref| if elsewhere."""
    text = "worst %s: |out-ref| %.2g, bound %.2g (%.3gx)" % (c["worst_at"], c["worst_abs"], c["worst_bound"],
                                                            c["worst"])
    if c["at"] != c["worst_at"]:
        text += "; max |out-ref| %.2g at %s (bound %.2g)" % (c["max_abs"], c["at"], c["bound_at"])
    return text


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


def dtype_accumulation_note(name, ops):
    """What a dtype-accumulating CPU op was judged against: the probe that found it, and the bound per op."""
    first = ops[0][3]
    text = ("%s accumulates in %s on this CPU (torch %s): %s judged against ((1+u)^K - 1) * sum|a*b|, u = %s: "
            "%s; probe: a sum that fp32 accumulation rounds to %.6g came back %.6g in %s" % (
                name, name, torch.__version__, ", ".join("%s (K %d)" % (op, k) for op, k, _, _ in ops),
                "2^%d + 2^-23" % round(math.log2(eps(name) / 2)),
                ", ".join("%.2g" % gamma for _, _, gamma, _ in ops) + " * sum|a*b|", first["want"], first["got"],
                ops[0][0]))
    if any(gamma >= 1 for _, _, gamma, _ in ops):
        text += "; a bound of 1 or more admits any sign: it catches only non-finite or grossly wrong results"
    return text


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
    skipped, reduced = [], {}
    with strict_fp32():
        for op, (inputs, fn, k) in sorted(cases.items()):
            for name in dtypes:
                if name not in DTYPES:
                    ctx.fail("unknown dtype %r in params.dtypes" % name)
                    continue
                try:
                    out, ref = run_op(ctx.device, fn, inputs, DTYPES[name])
                    probe = dtype_accumulation(ctx.device, fn, op, inputs, name)
                except RuntimeError as e:
                    if not ctx.device.is_gpu and cpu_lacks_kernel(e):
                        skipped.append("%s %s" % (op, name))
                        continue
                    # One broken op/dtype (bf16 on an older GPU, a missing kernel) must not hide the others.
                    ctx.fail("%s %s on %s: %s" % (op, name, ctx.where, exception_line(e)),
                             fix_for_error(exception_line(e)))
                    continue
                rtol = rtol_for(name, k, tolerance, tf32 and op == "matmul")
                floor = None
                if probe is not None:
                    gamma, floor = dtype_accumulation_bound(fn, inputs, name, k)
                    reduced.setdefault(name, []).append((op, k, gamma, probe))
                c = compare(out, ref, rtol, floor)
                ctx.metric("%s_%s_max_rel_err" % (op, name), rel_error(out, ref), "ratio", "lower")
                ctx.metric("%s_%s_err_over_bound" % (op, name), c["worst"], "ratio", "lower")
                if c["bad"]:
                    judged = ("rtol %.2g, K %d" % (rtol, k) if floor is None else
                              "K %d, accumulated in %s: bound ((1+u)^K - 1) * sum|a*b| = %.2g * sum|a*b|"
                              % (k, name, gamma))
                    ctx.fail("%s %s on %s: %s (%s)" % (op, name, ctx.where, describe(c), judged))
    for name, ops in sorted(reduced.items()):
        ctx.note(dtype_accumulation_note(name, ops))
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
