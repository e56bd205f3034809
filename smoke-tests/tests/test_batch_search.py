import pytest
import torch

from rocmenv_smoke.batch import search_max_batch
from rocmenv_smoke.devices import is_oom


def oom_error():
    """The error this torch raises on out-of-memory: torch.cuda.OutOfMemoryError where it exists."""
    cls = getattr(torch.cuda, "OutOfMemoryError", None)
    msg = "CUDA out of memory. Tried to allocate 2.00 GiB"
    return cls(msg) if cls is not None else RuntimeError(msg)


class FakeAllocator(object):
    """Fits batches up to `limit`; above it raises the out-of-memory error. Counts calls."""

    def __init__(self, limit, error=None):
        self.limit = limit
        self.calls = []
        self.error = error or oom_error

    def __call__(self, batch):
        self.calls.append(batch)
        if batch > self.limit:
            raise self.error()


def test_doubles_then_bisects_to_the_limit():
    fake = FakeAllocator(100)
    found, tried = search_max_batch(fake, start=1, max_batch=1024, max_steps=20)
    assert found == 100
    # 1..64 fit, 128 fails, then bisect (64, 128): 96 fit, 112 / 104 fail, 100 fits, 102 / 101 fail.
    assert tried == [1, 2, 4, 8, 16, 32, 64, 128, 96, 112, 104, 100, 102, 101]
    assert fake.calls == tried


def test_stops_at_the_cap_when_everything_fits():
    fake = FakeAllocator(10 ** 6)
    found, tried = search_max_batch(fake, start=16, max_batch=100, max_steps=20)
    assert found == 100
    assert tried == [16, 32, 64, 100]


def test_max_steps_bounds_the_search_and_keeps_the_largest_fit():
    fake = FakeAllocator(100)
    found, tried = search_max_batch(fake, start=1, max_batch=1024, max_steps=10)
    assert len(tried) == 10
    assert found == 96  # after 1..64, 128 (fail), 96 (fit), 112 (fail)


def test_nothing_fits():
    fake = FakeAllocator(3)
    found, tried = search_max_batch(fake, start=8, max_batch=64, max_steps=10)
    assert found == 0
    assert tried == [8]


def test_old_torch_out_of_memory_as_runtime_error():
    fake = FakeAllocator(5, error=lambda: RuntimeError("HIP out of memory. Tried to allocate 20.00 MiB"))
    found, tried = search_max_batch(fake, start=1, max_batch=64, max_steps=20)
    assert found == 5
    assert tried == [1, 2, 4, 8, 6, 5]


def test_other_errors_propagate():
    def broken(batch):
        raise RuntimeError("HIP error: invalid device function")

    with pytest.raises(RuntimeError, match="invalid device function"):
        search_max_batch(broken, start=1, max_batch=8, max_steps=5)


def test_is_oom():
    assert is_oom(oom_error())
    assert is_oom(RuntimeError("CUDA out of memory."))
    assert not is_oom(RuntimeError("HIP error: invalid device function"))
    assert not is_oom(ValueError("out of memory"))


def test_bad_bounds():
    with pytest.raises(ValueError):
        search_max_batch(FakeAllocator(1), start=0, max_batch=8, max_steps=5)
    with pytest.raises(ValueError):
        search_max_batch(FakeAllocator(1), start=16, max_batch=8, max_steps=5)
