"""Each test's default deadline, from its level and parameters: a test still running past it is stopped waiting for
(its thread is left behind), fails as a possibly stuck device, and the run goes on (issue 36).

deadline = (base for the level and device + the test's own work at a slow floor rate) * ROCMENV_DEADLINE_SCALE.
The base covers what no parameter says (imports, first-use kernel compilation, MIOpen's find step); the floor
rates are far below any working device, so a deadline is missed only by a device that has stopped.
"""
import os

SCALE_VARIABLE = "ROCMENV_DEADLINE_SCALE"

# Products (and copies) a smoke level checks at least, even when it times fewer: a fault in one of every few
# products must land in a checked one (issue 36).
MIN_CHECKED = {"quick": 8, "standard": 64, "full": 64}

# Seconds every test gets before its work is counted: first use of a GPU compiles and loads kernels.
BASE_S = {"cpu": {"quick": 30, "standard": 60, "full": 120},
          "gpu": {"quick": 120, "standard": 240, "full": 480}}
# Floor rates: FLOP/s of a matmul and bytes/s of a copy or a check, far below any working device.
FLOPS_FLOOR = {"cpu": 2e8, "gpu": 5e11}
BYTES_FLOOR = {"cpu": 2e8, "gpu": 2e9}
# Tests whose work no simple count gives (models, ONNX, profiling): this many bases.
OPAQUE_BASES = 10


class ScaleError(Exception):
    """ROCMENV_DEADLINE_SCALE is not a positive number."""


def scale(environ=None):
    """The factor every deadline is multiplied by: ROCMENV_DEADLINE_SCALE, 1 when unset; raises ScaleError."""
    environ = os.environ if environ is None else environ
    text = environ.get(SCALE_VARIABLE, "").strip()
    if not text:
        return 1.0
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise ScaleError("%s=%r: expected a positive number (2 doubles every test's deadline)"
                         % (SCALE_VARIABLE, text))
    return value


def _work_s(name, params, level, where):
    """Seconds of the test's own work at the floor rates, or None when no count describes it."""
    p = params or {}
    if name == "gemm":
        n = int(p.get("size", 256))
        count = max(int(p.get("warmup", 1)) + int(p.get("iters", 3)),
                    int(p.get("checked", MIN_CHECKED.get(level, 8))))
        dtypes = p.get("dtypes", [p.get("precision", "fp32")])
        # The product, plus Freivalds' float64 check (a few n^2 passes) and the NaN fill.
        return count * len(dtypes) * (2.0 * n ** 3 / FLOPS_FLOOR[where] + 16.0 * n * n / BYTES_FLOOR[where])
    if name == "bandwidth":
        nbytes = int(p.get("size_mb", 64)) << 20
        count = max(int(p.get("warmup", 1)) + int(p.get("iters", 5)),
                    int(p.get("checked", MIN_CHECKED.get(level, 8))))
        directions = 3 if where == "gpu" else 1
        # Each copy reads and writes, and its check reads both buffers again.
        return directions * count * 4.0 * nbytes / BYTES_FLOOR[where]
    if name == "memory":
        total = int(p.get("total_mb", 64)) << 20 if where == "cpu" else 192 << 30
        return 3.0 * total / BYTES_FLOOR[where]
    if name == "burn-in":
        return float(p.get("seconds", 60))
    if name in ("environment", "no-cpu-fallback", "arch-fit", "numerics", "multi-gpu"):
        return 0.0
    return None


def deadline_s(name, params, level, is_gpu):
    """The test's deadline in seconds on a GPU (is_gpu) or the CPU, scaled by ROCMENV_DEADLINE_SCALE."""
    where = "gpu" if is_gpu else "cpu"
    base = BASE_S[where].get(level, BASE_S[where]["full"])
    try:
        work = _work_s(name, params, level, where)
    except (ValueError, TypeError):
        work = None  # a bad parameter fails the test itself, with its own reason; the deadline only must exist

    total = base * OPAQUE_BASES if work is None else base + work
    return total * scale()
