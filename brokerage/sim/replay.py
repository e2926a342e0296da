"""Any job's or task's simulated history, by replaying a run: the same snapshot, config, seed and commands."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from brokerage.model.errors import SimulationError
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from brokerage.sim.commands import TaskCommand
from brokerage.sim.engine import Progress, Simulation
from brokerage.sim.events import job_history
from brokerage.sim.jobs import FINAL, STATUSES


class UnknownJob(SimulationError, ValueError):
    """The replayed run never made a job with that PandaID."""


def replay_job(
    snap: GridSnapshot, config: Config, seed: int, hours: float, panda_id: int,
    commands: Sequence[TaskCommand] = (), progress: Progress | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Replay the run until job PANDA_ID is final (or the run's HOURS end) and return its steps with their causes,
    plus its task's status changes up to then. A run is a pure function of its inputs, so the replay takes the
    same steps as the run that showed the job; UnknownJob when the run made no job with that id.

    Usage: ``replay_job(snap, Config(), 0, 6, 1234)["steps"][0]["cause"]``
    """
    row = panda_id - 1  # PandaIDs are given in row order from 1

    def done(sim: Simulation) -> bool:
        return sim.jobs.n > row and int(sim.jobs["jobStatus"][row]) in FINAL

    sim = Simulation(snap, config, seed=seed).run(hours, progress=progress, commands=commands, until=done)
    if panda_id < 1 or sim.jobs.n <= row:
        raise UnknownJob(f"job {panda_id}: this run made jobs 1 to {sim.jobs.n:,} in {hours:g} h")
    tid = int(sim.jobs["jediTaskID"][row])
    task_steps = [
        {"time_h": round(t / 3600.0, 3), "from": old, "to": new, "cause": why}
        for t, task, old, new, why in sim.task_causes
        if task == tid
    ]
    j = sim.jobs
    job = {
        "queue": sim.g.queues[int(j["computingSite"][row])], "status": STATUSES[int(j["jobStatus"][row])],
        "attemptNr": int(j["attemptNr"][row]), "ramCount": _number(j["ramCount"][row]),
        "maxPSS_MB": _number(j["maxPSS"][row]), "errorCode": int(j["errorCode"][row]),
        "scout": bool(j["isScout"][row]),
    }  # fmt: skip
    return {"panda_id": panda_id, "task": tid if tid >= 0 else None, "job": job,
            "steps": job_history(sim.log.frame(), panda_id), "task_steps": task_steps,
            "replayed_to_h": round(sim.now / 3600.0, 3)}  # fmt: skip


def _number(x: float) -> float | None:
    """A float for JSON (None for the NaN of jobs the snapshot held: their memory is not known)."""
    return None if math.isnan(float(x)) else round(float(x), 1)
