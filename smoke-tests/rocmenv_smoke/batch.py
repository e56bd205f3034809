"""max-batch: the largest training batch that fits (doubling, then binary search, bounded), and a chunked
inference run of an over-large batch that matches one pass."""
import torch

from .devices import is_oom
from .result import Failed, Skip, where


def search_max_batch(try_batch, start, max_batch, max_steps, is_oom_error=is_oom):
    """Largest batch b in [start, max_batch] with try_batch(b) succeeding, and the batches tried in order.

    Doubles from `start` until a batch fails (an out-of-memory error from try_batch) or max_batch is reached,
    then bisects between the last fit and the first failure. At most `max_steps` calls of try_batch; then the
    largest batch known to fit is returned. 0 when even `start` does not fit. Errors other than
    out-of-memory propagate.
    """
    tried = []

    def fits(b):
        tried.append(b)
        try:
            try_batch(b)
            return True
        except Exception as e:
            if not is_oom_error(e):
                raise
            return False

    start, max_batch = int(start), int(max_batch)
    if start < 1 or max_batch < start:
        raise ValueError("need 1 <= start <= max_batch, got start=%d max_batch=%d" % (start, max_batch))
    good, bad = 0, None
    b = start
    while len(tried) < max_steps:
        if fits(b):
            good = b
            if b >= max_batch:
                return good, tried
            b = min(b * 2, max_batch)
        else:
            bad = b
            break
    if bad is None:
        return good, tried
    while bad - good > 1 and len(tried) < max_steps:
        mid = (good + bad) // 2
        if mid < start:
            break
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good, tried


def _model(name, image):
    if name == "convnet":
        return torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 1000))
    try:
        import torchvision  # noqa: F401
    except ImportError:
        raise Skip("torchvision is not installed %s (params.model %s needs it; convnet does not)" % (where(), name))
    from .models import build
    return build(name, image)


def test_max_batch(ctx):
    from .models import make_step
    from .numerics import strict_fp32

    device = ctx.device
    name = ctx.param("model", "convnet")
    image = int(ctx.param("image_size", 32))
    start = int(ctx.param("start_batch", 1))
    cap = int(ctx.param("max_batch", 8))
    max_steps = int(ctx.param("max_steps", 12))
    torch.manual_seed(0)
    model = _model(name, image)

    def try_batch(b):
        step = None
        try:
            step, _ = make_step(model, device, "train", "fp32", b, image)
            step()
            device.sync()
        finally:
            del step
            model.zero_grad(set_to_none=True)
            device.free_memory()

    found, tried = search_max_batch(try_batch, start, cap, max_steps)
    ctx.metric("max_batch", found, "images")
    ctx.metric("search_tries", len(tried), "tries")
    ctx.note("batches tried: %s" % " ".join(str(b) for b in tried))
    if not device.is_gpu:
        ctx.note("CPU: no out-of-memory here; the search stops at params.max_batch (%d)" % cap)
    elif found >= cap:
        ctx.note("every batch up to params.max_batch (%d) fits" % cap)
    if found < 1:
        raise Failed("a training step of %s at batch %d does not fit in memory" % (name, start),
                     "free the GPU or lower params.start_batch")
    # Chunked inference: an over-large batch in chunks under no_grad, concatenated, must match one pass.
    chunk = int(ctx.param("chunk", max(found, 1)))
    total = int(ctx.param("chunked_batch", 4 * chunk))
    model = model.to(device.torch).eval()
    x = torch.randn(total, 3, image, image, generator=torch.Generator().manual_seed(1)).to(device.torch)
    with torch.no_grad(), strict_fp32():
        chunked = torch.cat([model(part) for part in x.split(chunk)])
        try:
            whole = model(x)
            compared = total
        except Exception as e:
            if not is_oom(e):
                raise
            device.free_memory()
            compared = min(total, 2 * chunk)
            ctx.note("one pass of %d does not fit; compared the first %d" % (total, compared))
            whole = model(x[:compared])
    rtol = float(ctx.criterion("rtol", 1e-3))
    # atol is relative to the largest output magnitude: random weights make the scale arbitrary.
    scale = float(whole.abs().max())
    atol = float(ctx.criterion("atol", 1e-4)) * (scale if scale > 0 else 1.0)
    diff = float((chunked[:compared] - whole).abs().max())
    ctx.metric("chunked_batch", total, "images")
    ctx.metric("chunk_size", chunk, "images")
    ctx.metric("chunked_max_abs_diff", diff, "abs")
    ctx.metric("output_max_abs", scale, "abs")
    if not torch.allclose(chunked[:compared], whole, rtol=rtol, atol=atol):
        ctx.fail("chunked inference (%d in chunks of %d) differs from one pass by up to %.3g (rtol %g, atol %.3g)"
                 % (total, chunk, diff, rtol, atol))
