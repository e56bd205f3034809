"""multi-gpu: copy bandwidth between every ordered pair of GPUs."""
import time

import torch

from .perf import byte_diff
from .result import Skip

MIB = 1 << 20


def pair_gbs(src_index, dst_index, nbytes, warmup, iters):
    """GB/s of copies from one GPU to another (bytes moved once per copy), timed on the host across both."""
    src = torch.empty(nbytes, dtype=torch.uint8, device=torch.device("cuda", src_index)).random_(0, 256)
    dst = torch.empty(nbytes, dtype=torch.uint8, device=torch.device("cuda", dst_index))

    def sync():
        torch.cuda.synchronize(src.device)
        torch.cuda.synchronize(dst.device)

    for _ in range(warmup):
        dst.copy_(src)
    sync()
    t0 = time.perf_counter()
    for _ in range(iters):
        dst.copy_(src)
    sync()
    elapsed = time.perf_counter() - t0
    # The whole buffer, compared on the destination GPU with the source brought over through the host (not the peer
    # path under test).
    want = src.cpu().to(dst.device)
    return nbytes * iters / elapsed / 1e9, byte_diff(dst, want)


def test_multi_gpu(ctx):
    if not ctx.device.is_gpu:
        raise Skip("vendor cpu: no GPUs to pair")
    gpus = [d.index for d in ctx.devices if d.is_gpu]
    count = len(gpus)
    if count < 2:
        raise Skip("%d GPU selected: peer copies need at least 2" % count)
    nbytes = int(ctx.param("size_mb", 256)) * MIB
    warmup, iters = int(ctx.param("warmup", 2)), int(ctx.param("iters", 5))
    no_peer = []
    for i in gpus:
        for j in gpus:
            if i == j:
                continue
            gbs, bad = pair_gbs(i, j, nbytes, warmup, iters)
            ctx.metric("p2p_%d_%d_gbs" % (i, j), gbs, "GB/s")
            if bad:
                ctx.fail("multi-gpu: a copy from torch device %d to torch device %d: %s" % (i, j, bad))
            if not torch.cuda.can_device_access_peer(i, j):
                no_peer.append("%d->%d" % (i, j))
    ctx.metric("gpu_count", count, "devices")
    if no_peer:
        ctx.note("no peer access (copies go through the host): %s" % " ".join(no_peer))
