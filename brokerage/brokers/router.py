"""The router: which broker handles a task, decided here and nowhere else (from VO and prodSourceLabel, as JEDI does)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from brokerage.brokers import analysis, generic, nucleus, production
from brokerage.model import views
from brokerage.model.cache import GridCache, cache_for
from brokerage.model.explain import Decision
from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot

ANALYSIS_LABEL = "user"  # prodSourceLabel of analysis tasks; every other label is production
DEFAULT_LABEL = "managed"
ATLAS_VO = "atlas"  # JEDI's plugin config: atlas:any -> AtlasProdJobBroker, atlas:user -> AtlasAnalJobBroker, the
# other VOs (wlcg:any, the template's default) -> GenJobBroker; only ATLAS has a task broker (nucleus choice)
NUCLEUS_SEED = 0  # the nucleus broker's weighted draw is seeded so every caller gets the same choice


@dataclass(frozen=True)
class Route:
    """One broker as callers see it: its name in decisions and its one-task and many-task entry points."""

    name: str
    broker: Callable[..., Decision]
    broker_many: Callable[..., list[Decision]]


PRODUCTION = Route(production.BROKER, production.broker, production.broker_many)
ANALYSIS = Route(analysis.BROKER, analysis.broker, analysis.broker_many)
NUCLEUS = Route(nucleus.BROKER, nucleus.broker, nucleus.broker_many)
GENERIC = Route(generic.BROKER, generic.broker, generic.broker_many)
ROUTES = {r.name: r for r in (PRODUCTION, ANALYSIS, NUCLEUS, GENERIC)}


def label_of(task: Mapping[str, Any]) -> str:
    """The task's prodSourceLabel ('managed' when unset).

    Usage: ``label_of({"prodsourcelabel": "user"}) == "user"``
    """
    return str(task.get("prodsourcelabel") or DEFAULT_LABEL)


def vo_of(task: Mapping[str, Any]) -> str:
    """The task's VO ('atlas' when unset).

    Usage: ``vo_of({"vo": "wlcg"}) == "wlcg"``
    """
    return str(task.get("vo") or ATLAS_VO)


def grid_vo(snap: GridSnapshot) -> str:
    """The VO of SNAP's tasks when they all have one and the same, else 'atlas': the VO whose CONFIG rows a command
    loads by default (``--vo`` chooses another).

    Usage: ``grid_vo(snap) == "wlcg"``
    """
    t = snap.tasks
    vos = set(t["vo"].fillna(ATLAS_VO)) if "vo" in t and not t.empty else {ATLAS_VO}
    return vos.pop() if len(vos) == 1 else ATLAS_VO


def route(task: Mapping[str, Any]) -> Route:
    """The job broker of TASK: the generic broker for a VO other than atlas; for atlas, analysis for prodSourceLabel
    'user', production for every other label.

    Usage: ``route(views.task_row(cache, 4242)).name == "production"``
    """
    if vo_of(task) != ATLAS_VO:
        return GENERIC
    return ANALYSIS if label_of(task) == ANALYSIS_LABEL else PRODUCTION


def needs_nucleus(task: Mapping[str, Any]) -> bool:
    """Whether TASK is in task brokerage: a production task in 'assigning' without a nucleus.

    Usage: ``needs_nucleus(views.task_row(cache, 4242))``
    """
    return (
        task.get("status") == "assigning"
        and task.get("nucleus") is None
        and label_of(task) != ANALYSIS_LABEL
        and vo_of(task) == ATLAS_VO
    )


def tasks_needing_nucleus(snap: GridSnapshot, task_ids: Sequence[int] | None = None) -> list[int]:
    """``needs_nucleus`` over the whole task table: the ids among TASK_IDS (default: all) in task brokerage.

    Usage: ``tasks_needing_nucleus(snap)``
    """
    t = snap.tasks
    if t.empty:
        return []
    labels = t["prodsourcelabel"].fillna(DEFAULT_LABEL)
    atlas = t["vo"].fillna(ATLAS_VO) == ATLAS_VO if "vo" in t else True
    m = (t["status"] == "assigning") & t["nucleus"].isna() & (labels != ANALYSIS_LABEL) & atlas
    ids = [int(x) for x in t.loc[m, "jeditaskid"]]
    if task_ids is None:
        return ids
    keep = set(ids)
    return [int(x) for x in task_ids if int(x) in keep]


def run_job_brokerage(
    snap: GridSnapshot, jeditaskid: int, config: Config | None = None, *, cache: GridCache | None = None,
    task_fields: Mapping[str, Any] | None = None,
) -> Decision:  # fmt: skip
    """Run the job brokerage that fits the task (ATLAS: production for managed/test, analysis for user; other VOs:
    generic); TASK_FIELDS
    replace task fields for this call (e.g. a retried chunk's raised ramcount).

    Usage: ``run_job_brokerage(snap, 4242, cache=cache).status``
    """
    cache = cache_for(snap, cache)
    broker = route(views.task_row(cache, jeditaskid)).broker
    if task_fields:
        return broker(snap, jeditaskid, config or Config(), cache=cache, task_fields=task_fields)
    return broker(snap, jeditaskid, config or Config(), cache=cache)


def run_nucleus_brokerage(
    snap: GridSnapshot,
    jeditaskid: int,
    config: Config | None = None,
    *,
    cache: GridCache | None = None,
    seed: int = NUCLEUS_SEED,
) -> Decision:
    """Run task brokerage (the nucleus choice) for one task; SEED draws the nucleus (the shared seed by default).

    Usage: ``run_nucleus_brokerage(snap, 4242, cache=cache).extra["chosen"]``
    """
    return nucleus.broker(snap, jeditaskid, config or Config(), seed=seed, cache=cache)


def split_by_route(cache: GridCache, task_ids: Sequence[int]) -> dict[str, list[int]]:
    """TASK_IDS grouped by their job broker's name, in the given order (KeyError for an unknown id).

    Usage: ``split_by_route(cache, [1, 2])["production"]``
    """
    out: dict[str, list[int]] = {}
    for t in task_ids:
        out.setdefault(route(views.task_row(cache, int(t))).name, []).append(int(t))
    return out
