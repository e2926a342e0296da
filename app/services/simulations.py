"""Simulations of the grid for the dashboard: the stored config or a what-if, as background jobs with progress."""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.services import work
from app.services.jobs import Jobs, JobState
from app.state import AppState
from brokerage.model.errors import InputError
from brokerage.model.gdpconfig import Value, parse_edits

MAX_HOURS = 48  # the dashboard's longest run; `brokerage simulate` goes further
MAX_COMMANDS = 20  # task commands in one request
DEFAULT_HOURS = 6
MAX_REPLICAS = 20  # the dashboard's most replicas; `brokerage simulate --replicas` goes to 100
MAX_SWEEP_VALUES = 8


REQUEST_KEYS = ("hours", "seed", "compare", "cmd", "job", "replicas", "sweep")  # any other key is a gdpconfig edit

# memory of one simulated run, estimated before it starts: a fixed part plus about 210 bytes per job row (the job
# table's 120 bytes, its doubling capacity and temporaries); rows are the snapshot's jobs (job_counts) plus about
# two generation cycles' worth of the tasks' chunk_njobs per simulated hour. Measured on the demo grid (734,050 jobs,
# chunk_njobs 165,159 in all): 309 MB for 1 h, 638 MB for 6 h, 1,641 MB for 1 h with 10x the jobs; the estimate
# says 373, 720 and 1,761 MB.
RUN_BASE_BYTES = 150 * 2**20
JOB_ROW_BYTES = 210
CHUNKS_PER_HOUR = 2
SIM_MEMORY_ENV = "BROKERAGE_SIM_MEMORY"  # bytes one simulated run may take (default 2 GiB); larger ones are refused
DEFAULT_SIM_MEMORY = 2 * 2**30


def estimated_bytes(snap: Any, hours: float) -> int:
    """Memory one simulated run of HOURS on SNAP is expected to take, from the grid alone.

    Usage: ``estimated_bytes(snap, 6) / 2**20``  (MB)
    """
    jobs = int(snap.tables["job_counts"]["njobs"].clip(lower=0).sum())
    made = int(snap.tables["tasks"]["chunk_njobs"].clip(lower=0).sum()) * CHUNKS_PER_HOUR * math.ceil(hours)
    return RUN_BASE_BYTES + JOB_ROW_BYTES * (jobs + made)


def memory_budget(env: str | None = None) -> int:
    """The bytes one simulated run may take: BROKERAGE_SIM_MEMORY, else 2 GiB.

    Usage: ``memory_budget("4000000000")``
    """
    raw = (os.environ.get(SIM_MEMORY_ENV, "") if env is None else env).strip()
    return int(raw) if raw.isdigit() and len(raw) < 16 else DEFAULT_SIM_MEMORY


class SimulationRequestError(InputError, ValueError):
    """A simulation asked for with a bad parameter (named in the message)."""


@dataclass(frozen=True)
class SimRequest:
    """One simulation request: the what-if edits, how long, which seed, and whether the stored config runs too."""

    overrides: dict[str, Value]
    hours: float
    seed: int
    compare: bool
    commands: tuple[str, ...] = ()  # task commands at simulated times, "HOURSh:TASK:COMMAND"
    replicas: int = 1  # seeds seed .. seed+replicas-1 of every config (common random numbers)
    sweep: tuple[str, tuple[Value, ...]] | None = None  # a key and its values, each run against the stored config

    @property
    def replicated(self) -> bool:
        """Replicas of stored vs what-if (or a sweep): paired intervals instead of one run per config."""
        return self.sweep is not None or (self.replicas > 1 and self.compare and bool(self.overrides))

    @property
    def labels(self) -> list[str]:
        """The runs' names, in result order."""
        if not self.overrides:
            return ["stored"]
        return ["stored", "what-if"] if self.compare else ["what-if"]


def parse_request(config: Any, query: Mapping[str, Any]) -> tuple[SimRequest, dict[str, str]]:
    """The request a page URL or an API query carries, and the refused edits (key -> why); bad hours or seed raise.

    Usage: ``req, refused = parse_request(state.config(), {"hours": "6", "THROTTLE_THRESHOLD": "1.5"})``
    """
    raw_hours = str(query.get("hours") or DEFAULT_HOURS)
    try:
        hours = float(raw_hours)
    except ValueError:
        hours = math.nan
    if not math.isfinite(hours) or not 0 < hours <= MAX_HOURS:
        raise SimulationRequestError(
            f"hours: {raw_hours!r} is not allowed; expected a number above 0 and at most {MAX_HOURS}"
        )
    raw_seed = str(query.get("seed") or 0)
    if not raw_seed.isdigit() or int(raw_seed) >= 2**32:
        raise SimulationRequestError(f"seed: {raw_seed!r} is not allowed; expected an integer in [0, 2^32)")
    compare = str(query.get("compare", "")).lower() in ("1", "true", "yes", "on")
    commands = _commands(str(query.get("cmd") or ""), hours)
    replicas = _replicas(str(query.get("replicas") or 1), int(raw_seed))
    sweep = _sweep(config, str(query.get("sweep") or "").strip())
    edits = {k: v for k, v in query.items() if k not in REQUEST_KEYS and v not in (None, "")}
    parsed = parse_edits(edits, config, variants=False)
    req = SimRequest(dict(parsed.overrides), hours, int(raw_seed), compare, commands, replicas, sweep)
    return req, parsed.errors


def _replicas(raw: str, seed: int) -> int:
    """The replicas of a request: 1 to MAX_REPLICAS, their seeds within [0, 2^32)."""
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_REPLICAS:
        raise SimulationRequestError(f"replicas: {raw!r} is not allowed; expected an integer from 1 to {MAX_REPLICAS}")
    if seed + int(raw) > 2**32:
        raise SimulationRequestError(f"replicas: seeds {seed} to {seed + int(raw) - 1} go past 2^32 - 1")
    return int(raw)


def _sweep(config: Any, text: str) -> tuple[str, tuple[Value, ...]] | None:
    """KEY=v1,v2,... with each value checked as an edit of KEY; None when empty."""
    if not text:
        return None
    key, _, raw = (x.strip() for x in text.partition("="))
    values = [v.strip() for v in raw.split(",") if v.strip()]
    if not key or not 1 <= len(values) <= MAX_SWEEP_VALUES:
        raise SimulationRequestError(
            f"sweep: {text!r} is not allowed; expected KEY=v1,v2,... with 1 to {MAX_SWEEP_VALUES} values"
        )
    typed = []
    for v in values:
        parsed = parse_edits({key: v}, config, variants=False)
        if parsed.errors:
            raise SimulationRequestError("sweep: " + "; ".join(parsed.errors.values()))
        typed.append(parsed.overrides[key] if key in parsed.overrides else config[key])  # the stored value itself
    return key, tuple(typed)


def _commands(text: str, hours: float) -> tuple[str, ...]:
    """The task commands of a request (comma or space separated HOURSh:TASK:COMMAND), each checked."""
    from brokerage.sim.commands import CommandRefused, parse_commands

    specs = tuple(x for x in re.split(r"[,\s]+", text.strip()) if x)
    if len(specs) > MAX_COMMANDS:
        raise SimulationRequestError(f"cmd: {len(specs)} task commands; at most {MAX_COMMANDS}")
    try:
        parse_commands(specs, hours, field="cmd")
    except CommandRefused as exc:
        raise SimulationRequestError(str(exc)) from exc
    return specs


class Simulations:
    """Starts, polls and cancels simulation jobs; identical requests on one snapshot share a job and its result.

    Usage: ``job_id, state = sims.start(request, client="10.0.0.7")``
    """

    def __init__(self, state: AppState, jobs: Jobs) -> None:
        self.state = state
        self.jobs = jobs

    def job_id(self, req: SimRequest) -> str:
        """The job of REQ on the current snapshot (the config fingerprint names the edits; the database the runs
        are stored in is part of it)."""
        fp = self.state.effective_config(req.overrides).fingerprint()
        cmds = ",".join(req.commands)
        url = self._database_url()
        db = hashlib.sha256(url.encode()).hexdigest()[:8] if url else "file"
        many = f":r{req.replicas}" if req.replicated else ""
        if req.sweep:
            many += f":sweep:{req.sweep[0]}=" + ",".join(map(str, req.sweep[1]))
        return (f"sim:{self.state.keys()[0]}:{fp}:{req.hours:g}h:s{req.seed}:{'c' if req.compare else '1'}:{db}:"
                f"{cmds}{many}")  # fmt: skip

    def _inputs(self, req: SimRequest) -> tuple[Any, list[Any]]:
        """The current grid and REQ's task commands checked against it; SimulationRequestError naming what the grid
        lacks for the simulator or the command refused."""
        from brokerage.sim.commands import CommandRefused, parse_commands
        from brokerage.sim.setup import SimInputError, input_problems

        snap = self.state.snapshot()
        if problems := input_problems(snap):
            raise SimulationRequestError(str(SimInputError(problems)))
        need, budget = estimated_bytes(snap, req.hours), memory_budget()
        if need > budget:
            raise SimulationRequestError(
                f"hours: {req.hours:g} h on this grid would take about {need / 2**30:.1f} GiB, more than the "
                f"{budget / 2**30:.1f} GiB a run may use ({SIM_MEMORY_ENV}); simulate fewer hours"
            )
        tasks = set(snap.tables["tasks"]["jeditaskid"].tolist())
        try:
            return snap, parse_commands(req.commands, req.hours, tasks, "cmd")
        except CommandRefused as exc:
            raise SimulationRequestError(str(exc)) from exc

    def _database_url(self) -> str | None:
        """The database the grid came from (finished runs are stored there), None for a file grid."""
        engine = self.state.engine()
        return None if engine is None else engine.url.render_as_string(hide_password=False)

    def start(self, req: SimRequest, client: str = "local") -> tuple[str, JobState]:
        """Start (or join) the job that simulates REQ; it waits its turn among the long jobs, and each simulated
        config runs as a task of its own on the cluster."""
        snap, cmds = self._inputs(req)
        if req.replicated:
            return self._start_replicas(req, snap, cmds, client)
        configs = [self.state.effective_config({})] if "stored" in req.labels else []
        if req.overrides:
            configs.append(self.state.effective_config(req.overrides))
        job_id = self.job_id(req)
        request = {"labels": req.labels, "overrides": req.overrides, "hours": req.hours, "seed": req.seed,
                   "commands": list(req.commands)}  # fmt: skip
        snap_future = self.jobs.snapshot(snap)
        state = self.jobs.start(
            job_id, work.simulations, snap_future, configs, req.labels, req.hours, req.seed, cmds,
            self._database_url(), request, admit=client,
        )  # fmt: skip
        return job_id, state

    def _start_replicas(self, req: SimRequest, snap: Any, cmds: list[Any], client: str) -> tuple[str, JobState]:
        """Start (or join) the replicated comparison or sweep of REQ: every config once per seed, each run a part of
        its own on the cluster (brokerage.sim.replicas)."""
        from brokerage.sim.replicas import compare_plan, sweep_plan

        stored = self.state.effective_config({})
        if req.sweep:
            plan = sweep_plan(stored, req.sweep[0], req.sweep[1], req.overrides)
        else:
            plan = compare_plan(stored, req.overrides)
        job_id = self.job_id(req)
        request = {"overrides": req.overrides, "hours": req.hours, "seed": req.seed, "commands": list(req.commands),
                   "compare": req.compare, "sweep": None if req.sweep is None else
                   {"key": req.sweep[0], "values": list(req.sweep[1])}}  # fmt: skip
        state = self.jobs.start(
            job_id, work.replica_simulations, self.jobs.snapshot(snap), plan, req.hours, req.replicas, req.seed, cmds,
            self._database_url(), request, admit=client,
        )  # fmt: skip
        return job_id, state

    def start_history(self, req: SimRequest, panda_id: int, client: str = "local") -> tuple[str, JobState]:
        """Start (or join) the replay of REQ's last run (the what-if when there are edits) until job PANDA_ID is
        final: its steps with their causes and its task's status changes (brokerage.sim.replay)."""
        if panda_id < 1:
            raise SimulationRequestError(f"job: {panda_id} is not allowed; expected a PandaID of the run (1 or more)")
        snap, cmds = self._inputs(req)
        label = req.labels[-1]
        config = self.state.effective_config(req.overrides if label != "stored" else {})
        job_id = self.history_job_id(req, panda_id)
        snap_future = self.jobs.snapshot(snap)
        # a replay is a pure function of its inputs: a job id the run never made fails the same way every time
        shown = {"label": label, "hours": req.hours, "seed": req.seed}
        state = self.jobs.start(
            job_id, work.job_history, snap_future, config, req.hours, req.seed, cmds, panda_id, shown, admit=client,
            restart_failed=False,
        )  # fmt: skip
        return job_id, state

    def history_job_id(self, req: SimRequest, panda_id: int) -> str:
        """The job replaying REQ's last run until job PANDA_ID is final."""
        return f"simjob:{self.job_id(req)}:{req.labels[-1]}:{panda_id}"

    def poll(self, job_id: str) -> JobState:
        """Where the job is."""
        return self.jobs.poll(job_id)

    def cancel(self, job_id: str) -> None:
        """Cancel the job (its runs on the cluster stop at their next progress report)."""
        self.jobs.cancel(job_id)
