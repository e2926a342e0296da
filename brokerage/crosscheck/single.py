"""One task of a snapshot through PanDA's brokers and ours, compared: the dashboard's "PanDA 1.0.4 agrees" check."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from brokerage.crosscheck.compare import TaskComparison
from brokerage.crosscheck.convert import grid_document
from brokerage.crosscheck.panda import PandaEnv, PandaMissing, find_panda, run_jedi
from brokerage.crosscheck.run import DEFAULT_BROKERS, brokers_of, compare_task, panda_config
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.gdpconfig import Config
from brokerage.model.profiles import PANDA_104
from brokerage.model.snapshot import GridSnapshot


@dataclass
class TaskCheck:
    """One task's crosscheck: the PanDA version and rule profile used, one comparison per broker the task goes
    through, and where the time went (seconds: convert, jedi_process, ours)."""

    task: int
    panda_version: str
    profile: str
    comparisons: list[TaskComparison] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        """Every broker's candidate set, weights and removal codes agree and PanDA did not fail."""
        return bool(self.comparisons) and all(c.identical for c in self.comparisons)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON: version, profile, identical, seconds and each broker's comparison (``TaskComparison.to_dict``).

        Usage: ``json.dumps(crosscheck_task(snap, 4242, Config()).to_dict())``
        """
        return {
            "task": self.task, "panda_version": self.panda_version, "profile": self.profile,
            "identical": self.identical, "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "brokers": [c.to_dict() for c in self.comparisons],
        }  # fmt: skip


def panda_missing() -> str | None:
    """The sentence saying PanDA's source is not set up and how to get it (scripts/panda.sh), or None when it is.

    Usage: ``if (why := panda_missing()): print(why)``
    """
    try:
        find_panda()
    except PandaMissing as exc:
        return str(exc)
    return None


def crosscheck_task(
    snap: GridSnapshot,
    task_id: int,
    config: Config,
    env: PandaEnv | None = None,
    cache: GridCache | None = None,
) -> TaskCheck:
    """Task TASK_ID of SNAP through PanDA's brokers (in their own venv) and ours, both under CONFIG with the
    panda-1.0.4 rule profile; the broker is the one the task goes through (``run.brokers_of``). Raises PandaMissing
    (saying how to get PanDA) when ENV is None and PanDA is not set up, UnknownIdError for an unknown task,
    PandaFailed when PanDA's driver stops.

    Usage: ``check = crosscheck_task(snap, 4242, Config()); check.identical``
    """
    env = env or find_panda()
    started = time.perf_counter()
    cache = cache_for(snap, cache)
    cfg = panda_config(config)
    row = views.task_row(cache, int(task_id))
    row["brokers"] = brokers_of(row, DEFAULT_BROKERS)
    doc = grid_document(cache, cfg, [row])
    t0 = time.perf_counter()
    out = run_jedi(env, [doc])
    check = TaskCheck(int(task_id), str(out.get("panda_version", env.version)), PANDA_104)
    check.seconds = {"convert": t0 - started, "jedi_process": time.perf_counter() - t0}
    t1 = time.perf_counter()
    check.comparisons.extend(compare_task(cache, cfg, row, out["grids"][0]))
    check.seconds["ours"] = time.perf_counter() - t1
    return check
