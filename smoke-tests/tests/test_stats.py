import math

import pytest

from rocmenv_smoke import stats


def test_median_odd_and_even():
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 3, 2]) == 2.5
    assert stats.median([7]) == 7


def test_percentile_is_nearest_rank():
    # The classic nearest-rank example: 15, 20, 35, 40, 50.
    xs = [50, 15, 40, 20, 35]
    assert stats.percentile(xs, 5) == 15
    assert stats.percentile(xs, 30) == 20
    assert stats.percentile(xs, 40) == 20
    assert stats.percentile(xs, 50) == 35
    assert stats.percentile(xs, 100) == 50


def test_p99_of_100_iterations_is_the_99th_value():
    xs = list(range(1, 101))
    assert stats.percentile(xs, 99) == 99
    assert stats.percentile(xs, 50) == 50
    # With fewer than 100 values p99 is the maximum.
    assert stats.percentile([1, 2, 3], 99) == 3


def test_cv_is_sample_stdev_over_mean():
    xs = [2, 4, 4, 4, 5, 5, 7, 9]
    assert stats.mean(xs) == 5
    assert math.isclose(stats.stdev(xs), math.sqrt(32 / 7.0))
    assert math.isclose(stats.cv(xs), math.sqrt(32 / 7.0) / 5)
    assert stats.cv([3, 3, 3]) == 0


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        stats.median([])
    with pytest.raises(ValueError):
        stats.percentile([1, 2], 0)
    with pytest.raises(ValueError):
        stats.percentile([1, 2], 101)
    with pytest.raises(ValueError):
        stats.stdev([1])
    with pytest.raises(ValueError):
        stats.cv([0, 0])


def test_summarize_seconds():
    s = stats.summarize_seconds([0.010, 0.020, 0.030, 0.040])
    assert s["n"] == 4
    assert math.isclose(s["median_ms"], 25.0)
    assert math.isclose(s["p50_ms"], 20.0)
    assert math.isclose(s["p99_ms"], 40.0)
    assert math.isclose(s["mean_ms"], 25.0)
    assert math.isclose(s["total_s"], 0.1)
    assert math.isclose(s["cv_pct"], 100 * stats.cv([1, 2, 3, 4]))
    assert stats.summarize_seconds([0.5])["cv_pct"] is None
