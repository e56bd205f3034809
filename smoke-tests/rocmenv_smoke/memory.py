"""memory: allocate and free most of the free memory, and a bit-exact host<->device round trip."""
import torch

from . import faults
from .devices import is_oom
from .result import WRONG_RESULT_FIX, Failed

MIB = 1 << 20


def free_and_total(device):
    """(free, total) bytes of the GPU: torch.cuda.mem_get_info where this torch has it."""
    getter = getattr(torch.cuda, "mem_get_info", None)
    if getter is not None:
        free, total = getter(device.torch)
        return int(free), int(total)
    total = int(torch.cuda.get_device_properties(device.torch).total_memory)
    return total - int(torch.cuda.memory_reserved(device.torch)), total


def fill_blocks(device, target_bytes, block_bytes):
    """Allocates and touches blocks until target_bytes; returns (blocks, bytes). Raises on out-of-memory."""
    blocks, total = [], 0
    while total + block_bytes <= target_bytes:
        b = torch.empty(block_bytes, dtype=torch.uint8, device=device.torch)
        b.fill_(len(blocks) % 251)
        blocks.append(b)
        total += block_bytes
    device.sync()
    return blocks, total


def block_diff(b, value):
    """None when every byte of the block holds value (compared on its device), else "N of M bytes differ, ..."."""
    ne = b.ne(value)
    count = int(ne.sum())
    if not count:
        return None
    first = int(torch.nonzero(ne)[0, 0])
    return "%d of %d bytes differ, first at offset %d (0x%02x, expected 0x%02x)" % (
        count, b.numel(), first, int(b[first]), value)


def test_memory(ctx):
    device = ctx.device
    block = int(ctx.param("block_mb", 16)) * MIB
    if device.is_gpu:
        fraction = float(ctx.criterion("fraction_of_free", 0.8))
        device.free_memory()
        free, total = free_and_total(device)
        target = int(free * fraction)
        ctx.metric("memory_free_bytes", free, "bytes")
        ctx.metric("memory_total_bytes", total, "bytes")
    else:
        target = int(ctx.param("total_mb", 64)) * MIB
        ctx.note("CPU: allocates a fixed %d MiB from params, not a fraction of free memory" % (target // MIB))
    baseline = torch.cuda.memory_allocated(device.torch) if device.is_gpu else 0
    blocks = []
    try:
        blocks, got = fill_blocks(device, target, block)
        if faults.on("memory-block") and blocks:
            blocks[len(blocks) // 2][-1:].add_(1)
        # Every byte of every block must still hold what was written into it (compared where the block lives).
        for i in range(len(blocks)):
            bad = block_diff(blocks[i], i % 251)
            ctx.count_checked(nbytes=blocks[i].numel())
            if bad:
                ctx.fail("memory on %s: block %d of %d (%d MiB each): %s"
                         % (ctx.where, i, len(blocks), block // MIB, bad), WRONG_RESULT_FIX)
                break
    except Exception as e:
        if not is_oom(e):
            raise
        got = sum(b.numel() for b in blocks)
        raise Failed("memory on %s: out of memory after %d of %d MiB (%s)"
                     % (ctx.where, got // MIB, target // MIB, str(e).splitlines()[0]),
                     "free the GPU (other processes hold memory) or lower criteria.fraction_of_free")
    finally:
        del blocks[:]
        device.free_memory()
    ctx.metric("memory_allocated_bytes", got, "bytes")
    if device.is_gpu:
        ctx.metric("memory_fraction_of_free", 100.0 * got / max(free, 1), "%")
        left = torch.cuda.memory_allocated(device.torch) - baseline
        if left > 0:
            ctx.fail("memory on %s: %d bytes were still allocated after freeing every block" % (ctx.where, left))
    roundtrip(ctx, device, int(ctx.param("roundtrip_mb", 16)) * MIB)


def roundtrip(ctx, device, nbytes):
    """Random bytes to the device and back, compared with torch.equal (pageable, and pinned on a GPU)."""
    gen = torch.Generator().manual_seed(int(ctx.param("seed", 0)))
    host = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=gen)
    if not device.is_gpu:
        back = host.clone()
        ctx.note("CPU: the round trip is a copy within host memory")
        if not torch.equal(back, host):
            ctx.fail("memory on cpu: a host memory copy differs from its source", WRONG_RESULT_FIX)
        ctx.count_checked(nbytes=nbytes)
        ctx.metric("roundtrip_bytes", nbytes, "bytes")
        return
    for label, src in (("pageable", host), ("pinned", host.pin_memory())):
        back = src.to(device.torch).to("cpu")
        if not torch.equal(back, host):
            ctx.fail("memory on %s: %s host->device->host round trip: %d of %d bytes differ"
                     % (ctx.where, label, int((back != host).sum()), nbytes), WRONG_RESULT_FIX)
        ctx.count_checked(nbytes=nbytes)
    ctx.metric("roundtrip_bytes", nbytes, "bytes")
