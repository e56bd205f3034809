"""Test-only fault injection: ROCMENV_SMOKE_FAULTS names results to corrupt on purpose, so that the checks can be
shown to fail (smoke-tests/tests and tests/suites_faults.rs). Never set it on a real run: it makes tests fail."""
import os

VARIABLE = "ROCMENV_SMOKE_FAULTS"

# name -> what it corrupts (README.md: "Test hook: fault injection").
FAULTS = {
    "gemm-element": "one element of each gemm output, far from the first rows",
    "copy-last-byte": "the last byte of the bandwidth test's device copy",
    "h2d-byte": "one byte of what arrives on the device in the host-to-device copy",
    "d2h-byte": "one byte of what arrives on the host in the device-to-host copy",
    "train-nan": "the loss of a late training step (numerics' MLP and the models' training)",
    "onnx-cpu-only": "ONNX Runtime's provider list, stubbed to the CPU provider only",
    "memory-block": "one byte of one memory block",
}


class FaultError(Exception):
    """ROCMENV_SMOKE_FAULTS names a fault that does not exist."""


def active(environ=None):
    """The set of faults the environment asks for; raises FaultError for an unknown name."""
    environ = os.environ if environ is None else environ
    names = set(n.strip() for n in environ.get(VARIABLE, "").split(",") if n.strip())
    unknown = sorted(names - set(FAULTS))
    if unknown:
        raise FaultError("%s: unknown fault%s %s (known: %s)" % (VARIABLE, "s" if len(unknown) > 1 else "",
                                                                  ", ".join(unknown), ", ".join(sorted(FAULTS))))
    return names


def on(name):
    """True when the fault `name` is injected in this run."""
    assert name in FAULTS, name
    try:
        return name in active()
    except FaultError:
        return False
