"""DIRAC CPU-time buckets: round up to the first bucket >= the job's CPU time, capped at the last."""

from __future__ import annotations

import pytest

from brokerage.dirac.buckets import DIRAC_BUCKETS, SEED_BUCKETS, fit_cpu_time
from brokerage.model.gdpconfig import Config, ConfigError


@pytest.mark.parametrize(
    ("cpu", "expected"),
    [(0, 500), (10, 500), (500, 500), (501, 5000), (4000, 5000), (5000, 5000), (5001, 50000),
     (50000, 50000), (50001, 300000), (300000, 300000), (300001, 300000), (10**7, 300000)],
)  # fmt: skip
def test_seed_bucket_edges(cpu: int, expected: int) -> None:
    """Seed: a job's CPU time moves to the next of 500/5000/50000/300000 s; above 300000 it stays at 300000."""
    assert fit_cpu_time([cpu], SEED_BUCKETS).tolist() == [expected]


@pytest.mark.parametrize(("cpu", "expected"), [(360, 360), (361, 1800), (4000, 21600), (86401, 172800),
                                               (1080000, 1080000), (2_000_000, 1080000)])  # fmt: skip
def test_dirac_code_bucket_edges(cpu: int, expected: int) -> None:
    """DIRAC's 13 default buckets follow the same rule (4000 s -> 21600 s)."""
    assert fit_cpu_time([cpu], DIRAC_BUCKETS).tolist() == [expected]


def test_buckets_are_a_bounded_config_parameter() -> None:
    """The seed's buckets are the default; DIRAC's 13 are one override away; a non-increasing list is refused."""
    assert Config()["DIRAC_CPU_BUCKETS"] == list(SEED_BUCKETS)
    assert Config().with_overrides({"DIRAC_CPU_BUCKETS": list(DIRAC_BUCKETS)})["DIRAC_CPU_BUCKETS"][-1] == 1080000
    with pytest.raises(ConfigError, match="strictly increasing"):
        Config().with_overrides({"DIRAC_CPU_BUCKETS": "[5000, 500]"})
    with pytest.raises(ConfigError, match="DIRAC_CPU_BUCKETS"):
        Config().with_overrides({"DIRAC_CPU_BUCKETS": "[0, 5]"})
