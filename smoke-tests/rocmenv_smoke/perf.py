"""gemm and bandwidth, as smoke tests (one figure per dtype/direction) and as benchmarks (statistics)."""
import math

import torch

from . import faults, numerics, stats
from .deadlines import MIN_CHECKED
from .devices import DTYPES, cpu_lacks_kernel, is_oom
from .result import WRONG_RESULT_FIX, Failed, Skip, device_label, exception_line, fix_for_error

MIB = 1 << 20

def gemm_case(device, n, dtype, warmup, iters, seed=0, tolerance=None, tf32=False, checked=0, gamma=0.0):
    """(per-iteration seconds, check) for an n x n x n matmul: max(warmup + iters, checked) products, each checked.

    Every product is written into an output filled with NaN first (a product that writes nothing cannot pass on
    the previous one's numbers) and checked by Freivalds' method (O(n^2) against the product's O(n^3)). The timed
    products are the `iters` after the `warmup`. check is {ok, worst, bad_rows, reason, products, bad_products}.
    gamma > 0: the products accumulate in the dtype (a CPU torch that numerics.dtype_accumulation finds), judged
    against gamma * sum|a*b| where that is looser (Freivalds).
    """
    gen = torch.Generator().manual_seed(seed)
    a = torch.randn(n, n, generator=gen).to(dtype).to(device.torch)
    b = torch.randn(n, n, generator=gen).to(dtype).to(device.torch)
    out = torch.empty(n, n, dtype=dtype, device=device.torch)
    checker = Freivalds(a, b, DTYPE_NAMES[dtype], tolerance, tf32, seed=seed, gamma=gamma)
    total = max(int(warmup) + int(iters), int(checked))
    times, bad, worst, first = [], 0, 0.0, None
    for i in range(total):
        out.fill_(float("nan"))
        if int(warmup) <= i < int(warmup) + int(iters):
            times.extend(device.time_iters(lambda: torch.mm(a, b, out=out), 0, 1))
        else:
            torch.mm(a, b, out=out)
        if faults.on("gemm-element"):
            inject_gemm_fault(out)
        check = checker.check(out)
        worst = max(worst, check["worst"])
        if not check["ok"]:
            bad += 1
            first = first or (i + 1, check)
    if first is None:
        return times, {"ok": True, "worst": worst, "bad_rows": 0, "reason": None, "products": total,
                       "bad_products": 0}
    at, check = first
    reason = "%d of %d products wrong; product %d: %s" % (bad, total, at, check["reason"])
    return times, {"ok": False, "worst": worst, "bad_rows": check["bad_rows"], "reason": reason, "products": total,
                   "bad_products": bad}


DTYPE_NAMES = dict((v, k) for k, v in DTYPES.items())
CHUNK = 1024  # rows converted to float64 at a time: 64 MiB for n = 8192


def inject_gemm_fault(out):
    """The gemm-element fault: one element two thirds down the output, off by 32 x its row's RMS."""
    n = out.shape[0]
    r, c = n - n // 3, 17 % out.shape[1]
    rms = float(out[r].double().pow(2).mean().sqrt())
    out[r, c] = float(out[r, c]) + 32.0 * max(rms, 1.0)


def _rows64(m, fn):
    """fn applied to row chunks of m converted to float64, concatenated: float64 work without an n x n copy."""
    return torch.cat([fn(m[i:i + CHUNK].double()) for i in range(0, m.shape[0], CHUNK)])


def freivalds(a, b, out, dtype_name, tolerance=None, tf32=False, vectors=3, seed=0, report_rows=8, gamma=0.0):
    """Freivalds(...).check(out) for one product: see Freivalds."""
    return Freivalds(a, b, dtype_name, tolerance, tf32, vectors, seed, report_rows, gamma).check(out)


class Freivalds(object):
    """Checks every row of out = a @ b in O(n^2): out @ x against a @ (b @ x) in float64 for random +-1 vectors x.

    Row i's bound: eps_multiple * (eps(dtype) * ||out_i|| + eps(tf32) * s_i) + accumulation_multiple * eps(fp32)
    * sqrt(n) * s_i, with s_i = sqrt(sum_k a_ik^2 ||b_k||^2): the output's rounding plus fp32 accumulation (and TF32's
    input rounding). Rows over it are recomputed exactly to report the elements that differ. The parts that depend
    on a and b alone are computed once, so checking each of many products costs O(n^2) each. gamma > 0 (a product
    accumulated in its dtype, numerics.dtype_accumulation_gamma): row i's bound is at least gamma * sum_j
    (|a| |b|)_ij, the sum of its elements' bounds gamma * sum_k |a_ik b_kj|, as |(out - a b) x|_i <= sum_j |err_ij|.
    """

    def __init__(self, a, b, dtype_name, tolerance=None, tf32=False, vectors=3, seed=0, report_rows=8, gamma=0.0):
        tol = dict(numerics.DEFAULT_GEMM_TOLERANCE)
        tol.update(tolerance or {})
        self.a, self.b, self.tol, self.report_rows = a, b, tol, report_rows
        self.k = a.shape[1]
        gen = torch.Generator().manual_seed(seed + 1)
        self.x = (torch.randint(0, 2, (b.shape[1], vectors), generator=gen).double() * 2 - 1).to(a.device)
        bx = _rows64(b, lambda r: r @ self.x)
        self.ref = _rows64(a, lambda r: r @ bx)
        b_sq = _rows64(b, lambda r: r.pow(2).sum(1))
        self.s = _rows64(a, lambda r: (r.pow(2) @ b_sq).sqrt())
        self.gamma = float(gamma)
        if self.gamma > 0:
            b_abs = _rows64(b, lambda r: r.abs().sum(1))
            self.floor = self.gamma * _rows64(a, lambda r: r.abs() @ b_abs)
        self.e_out = numerics.eps(dtype_name)
        self.e_in = numerics.TF32_EPS if (tf32 and dtype_name == "fp32") else 0.0

    def check(self, out):
        """{ok, worst, bad_rows, reason}; worst is the largest |out x - a b x| / bound (1 is the bound)."""
        tol, e_out, e_in, k, s = self.tol, self.e_out, self.e_in, self.k, self.s
        got = _rows64(out, lambda r: r @ self.x)
        out_norm = _rows64(out, lambda r: r.pow(2).sum(1).sqrt())
        bound = (float(tol["eps_multiple"]) * (e_out * out_norm + e_in * s)
                 + float(tol["accumulation_multiple"]) * numerics.eps("fp32") * math.sqrt(k) * s)
        if self.gamma > 0:
            bound = torch.maximum(bound, self.floor)
        diff = (got - self.ref).abs().max(dim=1)[0]
        diff = torch.where(torch.isfinite(diff), diff, torch.full_like(diff, float("inf")))
        bound = torch.where(torch.isfinite(bound), bound, torch.zeros_like(bound))
        ratio = diff / bound.clamp_min(1e-300)
        bad_rows = torch.nonzero(ratio > 1).flatten().tolist()
        worst = float(ratio.max())
        if not bad_rows:
            return {"ok": True, "worst": worst, "bad_rows": 0, "reason": None}
        return {"ok": False, "worst": worst, "bad_rows": len(bad_rows), "reason": self._explain(out, bad_rows)}

    def _explain(self, out, bad_rows):
        """The elements that differ in the first failing rows, recomputed exactly."""
        a, b, tol, e_out, e_in, k = self.a, self.b, self.tol, self.e_out, self.e_in, self.k
        rows = bad_rows[:self.report_rows]
        exact = torch.cat([a[rows].double() @ b[:, j:j + CHUNK].double() for j in range(0, b.shape[1], CHUNK)],
                          dim=1)
        spread = torch.cat([a[rows].double().pow(2) @ b[:, j:j + CHUNK].double().pow(2)
                            for j in range(0, b.shape[1], CHUNK)], dim=1).sqrt()
        ebound = (float(tol["eps_multiple"]) * (e_out * exact.abs() + e_in * spread)
                  + float(tol["accumulation_multiple"]) * numerics.eps("fp32") * math.sqrt(k) * spread)
        if self.gamma > 0:
            ebound = torch.maximum(ebound, self.gamma * torch.cat(
                [a[rows].double().abs() @ b[:, j:j + CHUNK].double().abs() for j in range(0, b.shape[1], CHUNK)],
                dim=1))
        ediff = (out[rows].double() - exact).abs()
        ediff = torch.where(torch.isfinite(ediff), ediff, torch.full_like(ediff, float("inf")))
        ratio = (ediff / ebound.clamp_min(1e-300)).reshape(-1)
        flat, worst = int(ediff.reshape(-1).argmax()), int(ratio.argmax())

        def at(i):
            return "[%d, %d]" % (rows[i // ediff.shape[1]], i % ediff.shape[1])
        count = int((ediff > ebound).sum())
        where = ("%d of %d elements differ" % (count, out.numel()) if len(bad_rows) <= self.report_rows else
                 "%d elements differ in %d of the %d rows that fail" % (count, len(rows), len(bad_rows)))
        c = {"worst_at": at(worst), "worst_abs": float(ediff.reshape(-1)[worst]),
             "worst_bound": float(ebound.reshape(-1)[worst]), "worst": float(ratio[worst]), "at": at(flat),
             "max_abs": float(ediff.reshape(-1)[flat]), "bound_at": float(ebound.reshape(-1)[flat])}
        return "%s, %s (Freivalds: %d of %d rows fail)" % (where, numerics.describe_worst(c), len(bad_rows),
                                                           out.shape[0])


def tflops(n, seconds):
    """TFLOP/s of an n x n x n matmul: 2 n^3 floating-point operations (a multiply and an add per term)."""
    return 2.0 * n ** 3 / seconds / 1e12


def test_gemm(ctx):
    n = int(ctx.param("size", 256))
    warmup, iters = int(ctx.param("warmup", 1)), int(ctx.param("iters", 3))
    checked = int(ctx.param("checked", MIN_CHECKED.get(ctx.level, 8)))
    tolerance = ctx.criterion("tolerance", numerics.DEFAULT_GEMM_TOLERANCE)
    tf32 = ctx.device.is_gpu and numerics.tf32_matmul()
    skipped, reduced = [], []
    for name in ctx.param("dtypes", ["fp32", "fp16", "bf16"]):
        try:
            gamma, probe = 0.0, numerics.dtype_accumulation(ctx.device, torch.mm, "matmul", [torch.empty(n, n)] * 2,
                                                            name)
            if probe is not None:
                gamma = numerics.dtype_accumulation_gamma(name, n)
                reduced.append((name, [("gemm", n, gamma, probe)]))
            times, check = gemm_case(ctx.device, n, DTYPES[name], warmup, iters, tolerance=tolerance, tf32=tf32,
                                     checked=checked, gamma=gamma)
        except RuntimeError as e:
            if not ctx.device.is_gpu and cpu_lacks_kernel(e):
                skipped.append(name)
                continue
            if is_oom(e):
                raise
            ctx.fail("gemm %s on %s: %s" % (name, ctx.where, exception_line(e)), fix_for_error(exception_line(e)))
            continue
        ctx.count_checked(products=check["products"])
        ctx.metric("gemm_%s_tflops" % name, tflops(n, stats.mean(times)), "TFLOP/s")
        ctx.metric("gemm_%s_err_over_bound" % name, check["worst"], "ratio", "lower")
        if not check["ok"]:
            ctx.fail("gemm %s on %s: %s" % (name, ctx.where, check["reason"]), WRONG_RESULT_FIX)
    for name, ops in reduced:
        ctx.note(numerics.dtype_accumulation_note(name, ops))
    if skipped:
        ctx.note("skipped (this torch has no CPU matmul for the dtype): %s" % ", ".join(skipped))
    if tf32:
        ctx.note("fp32 is measured and judged as TF32 (torch.backends.cuda.matmul.allow_tf32 or an override "
                 "variable)")
    elif ctx.device.is_gpu and torch.version.cuda and not torch.version.hip:
        ctx.note("fp32 is measured with TF32 off (torch.backends.cuda.matmul.allow_tf32)")


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
    tf32 = ctx.device.is_gpu and numerics.tf32_matmul()
    try:
        times, check = gemm_case(ctx.device, n, DTYPES[precision], int(ctx.param("warmup", 1)),
                                 int(ctx.param("iters", 3)),
                                 tolerance=ctx.criterion("tolerance", numerics.DEFAULT_GEMM_TOLERANCE), tf32=tf32)
    except RuntimeError as e:
        if not ctx.device.is_gpu and cpu_lacks_kernel(e):
            raise Skip("this torch has no CPU matmul for %s" % precision)
        raise
    ctx.count_checked(products=check["products"])
    bench_metrics(ctx, times, 2.0 * n ** 3 / 1e12, "TFLOP/s", ctx.device)
    ctx.metric("err_over_bound", check["worst"], "ratio", "lower")
    if tf32:
        ctx.note("fp32 is measured and judged as TF32")
    if not check["ok"]:
        ctx.fail("gemm %s on %s: %s" % (precision, ctx.where, check["reason"]), WRONG_RESULT_FIX)


def byte_diff(got, want):
    """None when the buffers are equal (compared whole, where they are), else "N of M bytes differ, first at ..."."""
    if torch.equal(got, want):
        return None
    ne = got != want
    count = int(ne.sum())
    first = int(torch.nonzero(ne)[0, 0])
    return "%d of %d bytes differ, first at offset %d (0x%02x, expected 0x%02x)" % (
        count, want.numel(), first, int(got[first]), int(want[first]))


def checked_copies(device, copy, pairs, warmup, iters, checked, label, fault=None, on_checked=None):
    """Per-iteration seconds of max(warmup + iters, checked) copies, each checked whole.

    pairs is ((dst, src, want), ...) taken in turn: consecutive copies move different bytes, so a copy that writes
    nothing cannot pass on what the previous one left. copy(dst, src) is one copy; the timed ones are the `iters`
    after the `warmup`. fault(dst) (a test hook) corrupts the last copy; on_checked(nbytes) hears of each copy
    checked. Raises Failed naming the direction, how many copies were wrong, and the first wrong byte of the first.
    """
    total = max(int(warmup) + int(iters), int(checked))
    times, bad, first = [], 0, None
    for i in range(total):
        dst, src, want = pairs[i % len(pairs)]
        if int(warmup) <= i < int(warmup) + int(iters):
            times.extend(device.time_iters(lambda: copy(dst, src), 0, 1))
        else:
            copy(dst, src)
            device.sync()
        if fault is not None and i == total - 1:
            fault(dst)
        diff = byte_diff(dst, want)
        if on_checked is not None:
            on_checked(want.numel())
        if diff:
            bad += 1
            first = first or "copy %d: %s" % (i + 1, diff)
    if bad:
        raise Failed("%s on %s: %d of %d copies wrong; %s" % (label, device_label(device), bad, total, first),
                     WRONG_RESULT_FIX)
    return times, total


def _one_byte(dst, at):
    dst[at:at + 1].add_(1)


def copy_times(device, nbytes, warmup, iters, checked=0, on_checked=None):
    """({direction: (per-iteration seconds, bytes moved per iteration)}, copies checked); h2d/d2h only on a GPU.

    Every copy is checked whole (checked_copies): the device copy and the host-to-device copy against their source
    on the device, the device-to-host copy against the host buffer; on_checked(nbytes) hears of each. Raises
    Failed naming the direction and the first wrong byte.
    """
    gen = torch.Generator().manual_seed(0)
    src = torch.randint(0, 256, (min(nbytes, MIB),), dtype=torch.uint8, generator=gen).to(device.torch)
    src = src.repeat((nbytes + src.numel() - 1) // src.numel())[:nbytes].contiguous()
    # Position-dependent bytes: a copy that drops or repeats a block cannot match.
    src.add_(torch.arange(nbytes, device=device.torch).div(MIB, rounding_mode="floor").to(torch.uint8))
    # A second source that differs in every byte: copies alternate between the two.
    other = src.add(1)
    dst = torch.empty_like(src)
    count = 0

    def copy(d, s):
        d.copy_(s, non_blocking=True)

    fault = (lambda d: _one_byte(d, nbytes - 1)) if faults.on("copy-last-byte") else None
    times, n = checked_copies(device, copy, ((dst, src, src), (dst, other, other)), warmup, iters, checked,
                              "device copy", fault, on_checked)
    out = {"device_copy": (times, 2 * nbytes)}
    count += n
    if device.is_gpu:
        host = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        host.copy_(src)
        host_other = torch.empty(nbytes, dtype=torch.uint8).pin_memory()
        host_other.copy_(other)
        fault = (lambda d: _one_byte(d, nbytes // 2)) if faults.on("h2d-byte") else None
        times, n = checked_copies(device, copy, ((dst, host, src), (dst, host_other, other)), warmup, iters,
                                  checked, "host-to-device copy", fault, on_checked)
        out["h2d"] = (times, nbytes)
        count += n
        back = torch.zeros(nbytes, dtype=torch.uint8).pin_memory()
        fault = (lambda d: _one_byte(d, nbytes // 2)) if faults.on("d2h-byte") else None
        times, n = checked_copies(device, copy, ((back, src, host), (back, other, host_other)), warmup, iters,
                                  checked, "device-to-host copy", fault, on_checked)
        out["d2h"] = (times, nbytes)
        count += n
    return out, count


def test_bandwidth(ctx):
    nbytes = int(ctx.param("size_mb", 64)) * MIB
    runs, _ = copy_times(ctx.device, nbytes, int(ctx.param("warmup", 1)), int(ctx.param("iters", 5)),
                         int(ctx.param("checked", MIN_CHECKED.get(ctx.level, 8))),
                         lambda b: ctx.count_checked(nbytes=b))
    for direction, (times, moved) in sorted(runs.items()):
        ctx.metric("bandwidth_%s_gbs" % direction, moved / stats.mean(times) / 1e9, "GB/s")
    if not ctx.device.is_gpu:
        ctx.note("CPU: device_copy is a host memory copy (read + write counted); h2d and d2h do not apply")
    else:
        ctx.note("device_copy counts read + write (2 x bytes); h2d and d2h use pinned host memory; every copy "
                 "is checked whole")


def bench_bandwidth(ctx):
    nbytes = int(ctx.param("size_mb", 64)) * MIB
    ctx.device.reset_peak_memory()
    runs, _ = copy_times(ctx.device, nbytes, int(ctx.param("warmup", 1)), int(ctx.param("iters", 5)),
                         on_checked=lambda b: ctx.count_checked(nbytes=b))
    times, moved = runs["device_copy"]
    bench_metrics(ctx, times, moved / 1e9, "GB/s", ctx.device)
    for direction in ("h2d", "d2h"):
        if direction in runs:
            t, m = runs[direction]
            ctx.metric("%s_throughput" % direction, m / stats.mean(t) / 1e9, "GB/s")
    ctx.note("throughput is the device copy, read + write counted (2 x bytes)"
             + ("" if ctx.device.is_gpu else "; CPU: a host memory copy, no h2d/d2h"))
