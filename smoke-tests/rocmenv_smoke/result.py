"""The result document: test entries, the context a test records into, the progress line, the atomic write."""
import json
import os
import sys
import traceback

SCHEMA_VERSION = 2
PROGRESS_PREFIX = "@rocmenv-test "
STATUSES = ("pass", "fail", "skip")
# What to do about a product, a copy or a memory block that came back wrong: the device (or its driver) returned
# wrong data.
WRONG_RESULT_FIX = ("the device returned wrong data: rerun with --duration 600 to see how often, check the kernel log "
                    "(dmesg) and the GPU's error counters (rocm-smi --showrasinfo / nvidia-smi -q -d ECC), and take "
                    "the GPU out of service if it recurs")


def where():
    """Where the suite runs, in words: "on this host" when rocmenv ran it with --host (ROCMENV_SMOKE_WHERE=host),
    else "in this image"; messages that name a missing module must not send a host user to rebuild an image."""
    return "on this host" if os.environ.get("ROCMENV_SMOKE_WHERE") == "host" else "in this image"


class Skip(Exception):
    """Raised by a test that cannot run here; the entry becomes `skip` with this reason."""

    def __init__(self, reason, fix=None):
        Exception.__init__(self, reason)
        self.reason = reason
        self.fix = fix


class Failed(Exception):
    """Raised by a test that found a problem; the entry becomes `fail` with this reason and fix."""

    def __init__(self, reason, fix=None):
        Exception.__init__(self, reason)
        self.reason = reason
        self.fix = fix


def _round(value):
    # Six significant digits keep documents readable; metrics are measurements, not exact values.
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return float("%.6g" % value)


# Units whose smaller values are better (times); every other metric is higher-is-better unless it says so.
LOWER_IS_BETTER_UNITS = ("ms",)


def metric(name, value, unit, better=None):
    """One metric as the document holds it: {name, value, unit[, better]}; value is a number or null.

    `better` is "lower" for times (unit ms, or given), absent for the usual higher-is-better figures.
    """
    m = {"name": name, "value": _round(value), "unit": unit}
    if better is None and unit in LOWER_IS_BETTER_UNITS:
        better = "lower"
    if better not in (None, "higher", "lower"):
        raise ValueError("better must be higher or lower, got %r" % (better,))
    if better == "lower":
        m["better"] = "lower"
    return m


def device_label(device):
    """How a reason names where a test ran: "torch device i" (torch's index in this process) or "cpu".

    Not "GPU i": rocmenv prefixes each reason with the host's GPU number (doctor's, `run --gpu`'s), which differs
    from torch's index when only some GPUs are visible, and "GPU 3: gemm on GPU 0" would name two GPUs."""
    if device is None or not device.is_gpu:
        return "cpu"
    return "torch device %d" % device.index


class Context(object):
    """What a test reads (params, criteria, device) and records (metrics, notes, soft failures)."""

    def __init__(self, name, kind, level, vendor, device, params=None, criteria=None, run_py=None, emit=None,
                 per_device=False, devices=None):
        self.name = name
        # True when the entry is about this one GPU (its `device` is the index), False for the CPU or many GPUs.
        self.per_device = per_device
        # Every GPU the run selected (--devices), for the tests that span them (multi-gpu, arch-fit).
        self.devices = list(devices or [])
        self.kind = kind
        self.level = level
        self.vendor = vendor
        self.device = device
        self.run_py = run_py
        self._params = dict(params or {})
        self._criteria = dict(criteria or {})
        self._emit = emit
        self.used_params = {}
        self.metrics = []
        self.notes = []
        self.failures = []
        self.fixes = []
        # What the test verified: products checked (gemm) and bytes checked (copies, memory blocks).
        self.checked = {"products": 0, "bytes": 0}

    def param(self, key, default=None):
        """A param from the plan, or `default` when the plan has none; either way recorded as used."""
        value = self._params.get(key, default)
        self.used_params[key] = value
        return value

    def criterion(self, key, default=None):
        """A pass criterion from the plan, or `default`."""
        return self._criteria.get(key, default)

    @property
    def where(self):
        """"GPU i" or "cpu": the device this context's test runs on, as failure reasons name it."""
        return device_label(self.device)

    @property
    def device_index(self):
        """The entry's `device`: torch's index of the GPU, or None for the CPU."""
        if self.per_device and self.device is not None and self.device.is_gpu:
            return self.device.index
        return None

    def metric(self, name, value, unit, better=None):
        self.metrics.append(metric(name, value, unit, better))

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def fail(self, reason, fix=None):
        """A soft failure: the test goes on, and ends as `fail`."""
        self.failures.append(reason)
        if fix and fix not in self.fixes:
            self.fixes.append(fix)

    def count_checked(self, products=0, nbytes=0):
        """Adds to what the entry says was checked: whole products, and bytes compared after a copy or a fill."""
        self.checked["products"] += int(products)
        self.checked["bytes"] += int(nbytes)

    def emit_part(self, entry):
        """Adds a detail entry (named `<test>/<part>`) to the document and prints its progress line."""
        if self._emit is not None:
            self._emit(entry)

    def effective_params(self):
        """The plan's params with the defaults the test used filled in."""
        out = dict(self._params)
        for key, value in self.used_params.items():
            out.setdefault(key, value)
        return out

    def unused_params(self):
        return sorted(k for k in self._params if k not in self.used_params)


def entry(name, status, reason=None, fix=None, metrics=None, params=None, duration_s=0.0, device=None,
          checked=None):
    """One test entry of the document; `device` is torch's GPU index, or None for a test not about one GPU;
    `checked` ({products, bytes}) is what it verified, kept when it verified anything."""
    if status not in STATUSES:
        raise ValueError("status must be one of %s, got %r" % (STATUSES, status))
    out = {
        "name": name,
        "status": status,
        "reason": reason,
        "fix": fix,
        "metrics": list(metrics or []),
        "params": dict(params or {}),
        "duration_s": round(float(duration_s), 3),
        "device": device,
    }
    if checked and (checked.get("products") or checked.get("bytes")):
        out["checked"] = {"products": int(checked.get("products", 0)), "bytes": int(checked.get("bytes", 0))}
    return out


def entry_from_context(ctx, duration_s):
    """The entry for a test that returned normally: pass, or fail when it recorded soft failures."""
    unused = ctx.unused_params()
    if unused:
        ctx.note("params not used by this test: %s" % ", ".join(unused))
    status = "fail" if ctx.failures else "pass"
    reason = "; ".join(ctx.failures + ctx.notes) or None
    fix = " ".join(ctx.fixes) or None
    return entry(ctx.name, status, reason, fix, ctx.metrics, ctx.effective_params(), duration_s, ctx.device_index,
                 ctx.checked)


def exception_line(exc):
    """`Type: first line of the message`: the line a traceback ends with, without the hints some runtimes append."""
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def fix_for_error(text):
    """A step a person can follow for errors whose cause is well known, else None."""
    low = text.lower()
    if "invalid device function" in low or "no kernel image is available" in low:
        return ("the torch wheel has no kernels for this GPU's architecture: install a build for it, or on a "
                "consumer AMD GPU set HSA_OVERRIDE_GFX_VERSION to a target the wheel has (rocmenv env computes it)")
    if "out of memory" in low:
        return "lower the batch or the size in the test's params, or free the GPU (other processes hold memory)"
    if "no hip gpus are available" in low or "no cuda gpus are available" in low:
        return "run `rocmenv doctor`: the container sees no GPU"
    return None


def progress_line(test_entry):
    """The line printed to stdout when a test finishes."""
    return PROGRESS_PREFIX + json.dumps(test_entry, sort_keys=True, allow_nan=False)


def print_progress(test_entry, stream=None):
    stream = stream or sys.stdout
    stream.write(progress_line(test_entry) + "\n")
    stream.flush()


def write_atomic(path, document):
    """Writes JSON to PATH.tmp, syncs it, and renames it over PATH, so readers see the whole file or none."""
    tmp = path + ".tmp"
    data = json.dumps(document, indent=2, sort_keys=True, allow_nan=False) + "\n"
    try:
        with open(tmp, "w") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
