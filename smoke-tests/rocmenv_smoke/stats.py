"""Statistics over timed iterations.

Percentiles use the nearest-rank method: the p-th percentile of n sorted values is the value at rank
ceil(p/100 * n) (1-based), so it is always one of the measured values; with 100 iterations p99 is the
99th fastest. The median is the middle value, or the mean of the two middle values when n is even.
The coefficient of variation is the sample standard deviation (n - 1) over the mean.
"""
import math


def _checked(values):
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("no values")
    return xs


def mean(values):
    """Arithmetic mean."""
    xs = _checked(values)
    return sum(xs) / len(xs)


def median(values):
    """The middle value; the mean of the two middle values when there is an even number of them."""
    xs = sorted(_checked(values))
    n = len(xs)
    mid = n // 2
    if n % 2:
        return xs[mid]
    return (xs[mid - 1] + xs[mid]) / 2.0


def percentile(values, p):
    """Nearest-rank percentile: the value at rank ceil(p/100 * n) of the sorted values, for 0 < p <= 100."""
    if not 0 < p <= 100:
        raise ValueError("percentile must be in (0, 100], got %r" % (p,))
    xs = sorted(_checked(values))
    rank = int(math.ceil(p / 100.0 * len(xs)))
    return xs[max(rank, 1) - 1]


def stdev(values):
    """Sample standard deviation (divides by n - 1); needs two values."""
    xs = _checked(values)
    if len(xs) < 2:
        raise ValueError("standard deviation needs at least two values")
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def cv(values):
    """Coefficient of variation: sample standard deviation / mean (a fraction, not a percentage)."""
    m = mean(values)
    if m == 0:
        raise ValueError("coefficient of variation of values whose mean is 0")
    return stdev(values) / m


def summarize_seconds(times_s):
    """Per-iteration times in seconds -> dict of mean/median/p50/p99 in ms and cv in percent (None for n < 2)."""
    xs = _checked(times_s)
    return {
        "mean_ms": mean(xs) * 1e3,
        "median_ms": median(xs) * 1e3,
        "p50_ms": percentile(xs, 50) * 1e3,
        "p99_ms": percentile(xs, 99) * 1e3,
        "cv_pct": cv(xs) * 100.0 if len(xs) >= 2 else None,
        "total_s": sum(xs),
        "n": len(xs),
    }
