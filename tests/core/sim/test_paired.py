"""Paired-t intervals of replicated runs, against hand-computed figures."""

from __future__ import annotations

import math

import pytest

from brokerage.sim.paired import differences, mean_interval, paired, t975


def test_t_quantile_from_the_table_and_between_its_rows() -> None:
    """Student's t 0.975: table rows exact; between rows interpolated in 1/df (df 50 -> 2.0084, true 2.0086)."""
    assert t975(1) == 12.706 and t975(9) == 2.262 and t975(30) == 2.042
    assert t975(50) == pytest.approx(2.021 - 0.6 * 0.021)  # w = (1/40 - 1/50) / (1/40 - 1/60) = 0.6
    assert t975(1000) == pytest.approx(1.980 - 0.88 * 0.020)  # w = (1/120 - 1/1000) / (1/120) = 0.88
    with pytest.raises(ValueError, match="df: 0"):
        t975(0)


def test_paired_interval_that_includes_zero_is_not_significant() -> None:
    """d = (1, 3, 2): mean 2, sd 1, n 3: 2 ± 4.303 / √3 = (-0.484, 4.484), which includes 0: not significant."""
    iv = paired([10, 12, 14], [11, 15, 16])
    half = 4.303 / math.sqrt(3)
    assert iv.mean == 2 and iv.low == pytest.approx(2 - half) and iv.high == pytest.approx(2 + half)
    assert iv.n == 3 and not iv.significant


def test_paired_interval_that_excludes_zero_is_significant() -> None:
    """d = (2, 3, 4, 3): mean 3, sd √(2/3), n 4: 3 ± 3.182 · 0.8165 / 2 = (1.701, 4.299): significant."""
    iv = paired([0, 0, 0, 0], [2, 3, 4, 3])
    half = 3.182 * math.sqrt(2 / 3) / 2
    assert iv.low == pytest.approx(3 - half) and iv.high == pytest.approx(3 + half)
    assert iv.significant and iv.to_dict()["significant"] is True


def test_missing_pairs_are_left_out_and_one_pair_gives_no_interval() -> None:
    """A pair with a missing value is dropped; a single pair has a mean but no interval and is never significant."""
    assert differences([1, None, 3], [2, 5, None]) == [1.0, None, None]
    one = paired([1, None], [5, 7])
    assert one.mean == 4 and one.low is None and not one.significant
    assert mean_interval([]).mean is None
    with pytest.raises(ValueError, match="paired by seed"):
        paired([1, 2], [1])


def test_identical_runs_give_a_zero_width_interval_at_zero() -> None:
    """Equal values pair by pair: difference 0 with interval (0, 0), not significant; a constant non-zero shift is."""
    same = paired([5, 6, 7], [5, 6, 7])
    assert (same.mean, same.low, same.high, same.significant) == (0, 0, 0, False)
    assert paired([5, 6, 7], [6, 7, 8]).significant
