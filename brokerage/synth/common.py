"""What every table of the demo grid shares: the fixed demo time, the gdpconfig defaults it is built around,
its sizes, and small array helpers (timestamps, proportional splits, weighted choices)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from brokerage.model.gdpconfig import REGISTRY

DEFAULT_TAKEN_AT = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _default(key: str) -> Any:
    return REGISTRY[key].default


# The demo grid is built around the gdpconfig defaults so that every rule has cases on both sides.
DISK_THRESHOLD_GB = float(_default("DISK_THRESHOLD")) * 1024.0
STORAGE_MIN_FREE_GB = float(_default("STORAGE_MIN_FREE_SIZE"))
NQUEUED_SAT_CAP = float(_default("NQUEUED_SAT_CAP"))
NQUEUED_NUC_CAP = float(_default("NQUEUED_NUC_CAP"))
NQUEUED_NUC_CAP_FOR_JOBS = float(_default("NQUEUED_NUC_CAP_FOR_JOBS"))
INACTIVE_HOURS = float(_default("INACTIVE_HOURS"))
NO_PILOT_HOURS = float(_default("NO_PILOT_HOURS"))
IO_INTENSITY_CUTOFF = float(_default("IO_INTENSITY_CUTOFF"))
MIN_BAD_JOBS = float(_default("MIN_BAD_JOBS_TO_SKIP_PQ"))
TW_DONE_JOB_STAT_H = float(_default("TW_DONE_JOB_STAT"))
BASE_QUEUE_LENGTH = float(_default("BASE_QUEUE_LENGTH_PER_PQ"))
BASE_WAIT_H = float(_default("BASE_EXPECTED_WAIT_HOUR_ON_PQ"))
BASE_USER_QUEUE = float(_default("BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER"))
BASE_QUEUE_RATIO = float(_default("BASE_QUEUE_RATIO_ON_PQ"))
STATIC_QR_RATIO = float(_default("STATIC_MAX_QUEUE_RUNNING_RATIO"))
MAX_WAIT_H = float(_default("MAX_EXPECTED_WAIT_HOUR"))
CLASS_C_USAGE = float(_default("USAGE_THROTTLE_CLASS_C"))
HEAVY_USER_RUNNING = 1000  # running jobs of a user that a CAP_RUNNING_USER_JOBS an operator sets would catch
NETWORK_FRESH_MINUTES = 60  # the brokers read only network rows newer than this

QUEUES_PER_SITE = 3.5  # ~700 PanDA queues over ~200 ATLAS sites
MAX_SITES = 2000  # bigger grids get more queues per site, not more sites: the link matrix stays small
NUCLEUS_FRACTION = 0.1
TASK_ID_BASE = 45_000_000
DATASET_ID_BASE = 700_000_000


def split(total: int, weight: np.ndarray) -> np.ndarray:
    """Split TOTAL into integers proportional to WEIGHT (largest remainder)."""
    share = total * weight / weight.sum()
    out = np.floor(share).astype(np.int64)
    left = total - int(out.sum())
    if left > 0:
        out[np.argsort(-(share - out), kind="stable")[:left]] += 1
    return out


def times(taken: pd.Timestamp, seconds_ago: np.ndarray) -> pd.DatetimeIndex:
    """Timestamps SECONDS_AGO before TAKEN, rounded to the second (NaN -> missing)."""
    return taken - pd.to_timedelta(np.round(seconds_ago), unit="s")


def choice_by(rng: np.random.Generator, table: tuple[tuple[int, float], ...], size: int) -> np.ndarray:
    """SIZE draws of the values of TABLE ((value, weight) pairs), weights normalised."""
    values = np.array([v for v, _ in table])
    p = np.array([p for _, p in table])
    return rng.choice(values, size=size, p=p / p.sum())
