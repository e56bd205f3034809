"""burn-in: checked matmuls and copies, back to back, for a given time on each selected GPU (`smoke --duration`):
a device that returns wrong data now and then, or stops, shows it here where a few products would not."""
import time

import torch

from . import numerics, perf
from .devices import DTYPES
from .result import WRONG_RESULT_FIX, Failed

MIB = 1 << 20


def test_burn_in(ctx):
    seconds = float(ctx.param("seconds", 60))
    n = int(ctx.param("size", 256))
    dtype_name = ctx.param("dtype", "fp32")
    nbytes = int(ctx.param("size_mb", 16)) * MIB
    if dtype_name not in DTYPES:
        raise Failed("burn-in dtype must be one of %s, got %r" % (", ".join(sorted(DTYPES)), dtype_name))
    device = ctx.device
    gen = torch.Generator().manual_seed(int(ctx.param("seed", 0)))
    a = torch.randn(n, n, generator=gen).to(DTYPES[dtype_name]).to(device.torch)
    b = torch.randn(n, n, generator=gen).to(DTYPES[dtype_name]).to(device.torch)
    out = torch.empty_like(a)
    tf32 = device.is_gpu and numerics.tf32_matmul()
    checker = perf.Freivalds(a, b, dtype_name, ctx.criterion("tolerance"), tf32)
    src = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=gen).to(device.torch)
    pairs = (src, src.add(1))
    dst = torch.empty_like(src)
    products = copies = bad_products = bad_copies = 0
    first = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        out.fill_(float("nan"))
        torch.mm(a, b, out=out)
        check = checker.check(out)
        products += 1
        if not check["ok"]:
            bad_products += 1
            if len(first) < 2:
                first.append("product %d at %.0f s: %s" % (products, time.perf_counter() - t0, check["reason"]))
        want = pairs[copies % 2]
        dst.copy_(want)
        device.sync()
        diff = perf.byte_diff(dst, want)
        copies += 1
        if diff:
            bad_copies += 1
            if len(first) < 2:
                first.append("copy %d at %.0f s: %s" % (copies, time.perf_counter() - t0, diff))
    took = time.perf_counter() - t0
    ctx.count_checked(products=products, nbytes=copies * nbytes)
    ctx.metric("burn_in_products", products, "products")
    ctx.metric("burn_in_copies", copies, "copies")
    ctx.metric("burn_in_seconds", took, "s")
    if bad_products or bad_copies:
        ctx.fail("burn-in on %s: %d of %d products and %d of %d copies wrong in %.0f s; %s"
                 % (ctx.where, bad_products, products, bad_copies, copies, took, "; ".join(first)), WRONG_RESULT_FIX)
    else:
        ctx.note("%d products (%d x %d %s) and %d copies of %d MiB, each checked, in %.0f s"
                 % (products, n, n, dtype_name, copies, nbytes // MIB, took))
