"""numerics: matmul, conv2d, softmax and layernorm against a float64 CPU reference, and a training step."""
import contextlib

import torch
import torch.nn.functional as F

from .devices import DTYPES, cpu_lacks_kernel
from .result import exception_line, fix_for_error

DEFAULT_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 5e-2}


def rel_error(out, ref):
    """max|out - ref| / max|ref|: the error relative to the output's scale (robust where ref is near 0)."""
    out = out.detach().to("cpu", torch.float64)
    ref = ref.detach().to("cpu", torch.float64)
    scale = float(ref.abs().max())
    return float((out - ref).abs().max()) / (scale if scale > 0 else 1.0)


def within(err, dtype_name, tolerances):
    """True when the error is finite and within the dtype's tolerance."""
    tol = float(tolerances.get(dtype_name, DEFAULT_TOLERANCE[dtype_name]))
    return err == err and err <= tol


@contextlib.contextmanager
def strict_fp32():
    """fp32 means fp32: TF32 off for matmul and cuDNN while comparing, restored afterwards."""
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def make_cases(sizes, gen):
    """op name -> (inputs in fp32 on the CPU, function of the inputs)."""
    n = int(sizes["matmul_n"])
    b, c, hw = int(sizes["conv_batch"]), int(sizes["conv_channels"]), int(sizes["conv_hw"])
    rows, width = int(sizes["rows"]), int(sizes["width"])
    return {
        "matmul": ([torch.randn(n, n, generator=gen), torch.randn(n, n, generator=gen)],
                   lambda a, w: a @ w),
        "conv2d": ([torch.randn(b, c, hw, hw, generator=gen), torch.randn(c, c, 3, 3, generator=gen) / 3.0],
                   lambda x, w: F.conv2d(x, w, padding=1)),
        "softmax": ([torch.randn(rows, width, generator=gen) * 3.0], lambda x: torch.softmax(x, dim=-1)),
        "layernorm": ([torch.randn(rows, width, generator=gen) * 2.0 + 1.0,
                       torch.randn(width, generator=gen), torch.randn(width, generator=gen)],
                      lambda x, w, bias: F.layer_norm(x, (x.shape[-1],), w, bias)),
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
    tolerances = ctx.criterion("tolerance", DEFAULT_TOLERANCE)
    cases = make_cases(sizes, torch.Generator().manual_seed(seed))
    skipped = []
    with strict_fp32():
        for op, (inputs, fn) in sorted(cases.items()):
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
                    ctx.fail("%s %s: %s" % (op, name, exception_line(e)), fix_for_error(exception_line(e)))
                    continue
                err = rel_error(out, ref)
                ctx.metric("%s_%s_max_rel_err" % (op, name), err, "ratio")
                if not within(err, name, tolerances):
                    ctx.fail("%s %s: max relative error %.3g exceeds %g"
                             % (op, name, err, float(tolerances.get(name, DEFAULT_TOLERANCE[name]))))
    if skipped:
        ctx.note("skipped (this torch has no CPU kernel for the dtype): %s" % ", ".join(skipped))
    steps = int(ctx.param("train_steps", 10))
    losses = train_losses(ctx.device, steps, seed, float(ctx.param("train_lr", 0.05)))
    ratio = losses[-1] / losses[0] if losses[0] > 0 else float("nan")
    ctx.metric("train_loss_first", losses[0], "loss")
    ctx.metric("train_loss_last", losses[-1], "loss")
    ctx.metric("train_loss_ratio", ratio, "ratio")
    max_ratio = float(ctx.criterion("max_loss_ratio", 0.9))
    if not (ratio == ratio and ratio <= max_ratio):
        ctx.fail("training: loss went from %.4g to %.4g in %d SGD steps (ratio %.3g, must be <= %g)"
                 % (losses[0], losses[-1], steps, ratio, max_ratio))
