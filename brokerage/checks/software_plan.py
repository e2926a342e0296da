"""The vectorised software check: queues grouped by what decides them, descriptions the task cannot tell apart
checked once, outcomes memoised per task request."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from brokerage.checks.software_description import Outcome, SoftwareDescription, SoftwareIndex, describe
from brokerage.checks.software_hardware import hardware_rejection
from brokerage.checks.software_match import (
    NO_DESCRIPTION,
    PASS_ANY,
    RELEASES_ANY,
    RELEASES_AUTO,
    check_auto_queue,
    check_listed_release,
)
from brokerage.checks.software_request import TaskSoftware

_MAX_RESULTS_PER_DESCRIPTION = 4096  # memo bound: distinct task software requests remembered per description
_ANY, _MISSING, _LISTED, _AUTO = 0, 1, 2, 3
_MAX_PLANS = 16  # candidate lists remembered per index (the broker passes the same arrays every call)
VERDICT_MEMO_CELLS = 2_000_000  # queues x remembered task requests per plan (about 30 bytes per cell)


@dataclass
class _Features:
    """What check_auto_queue reads of each distinct AUTO description, as small ids and inverted indexes.

    Per description: ids of its cpu/gpu entries, cmtconfigs, containers and cvmfs (equal ids, equal
    values, order kept where a sentence shows it); per cmtconfig, tag key and tag container name the
    descriptions that list it.
    """

    hardware: np.ndarray  # hardware id of every description
    hardware_first: list[int]  # a description of each hardware id
    cmt: np.ndarray  # cmtconfigs id of every description
    cmt_values: list[tuple[str, ...]]  # the cmtconfigs of each id
    containers: np.ndarray
    n_containers: int
    cvmfs: np.ndarray
    n_cvmfs: int
    cmtconfigs: tuple[str, ...]  # every cmtconfig of any description (regex sw_platforms resolve among them)
    cmt_members: dict[str, np.ndarray]  # cmtconfig -> descriptions listing it
    tag_keys: dict[tuple[str, str, str], np.ndarray]  # (cmtconfig, project, release) -> descriptions having it
    tag_names: dict[str, np.ndarray]  # tag container_name or source -> descriptions having it


def _features(descs: list[SoftwareDescription]) -> _Features:
    hardware: dict[Any, int] = {}
    cmt: dict[tuple[str, ...], int] = {}
    containers: dict[tuple[str, ...], int] = {}
    cvmfs: dict[frozenset[str], int] = {}
    ids = np.empty((4, len(descs)), dtype=np.int64)
    cmt_members: dict[str, list[int]] = {}
    tag_keys: dict[tuple[str, str, str], list[int]] = {}
    tag_names: dict[str, list[int]] = {}
    for i, d in enumerate(descs):
        hw = (tuple(tuple(e.items()) for e in d.cpu), tuple(tuple(e.items()) for e in d.gpu))
        ids[0, i] = hardware.setdefault(hw, len(hardware))
        ids[1, i] = cmt.setdefault(d.cmtconfigs, len(cmt))
        ids[2, i] = containers.setdefault(d.containers, len(containers))
        ids[3, i] = cvmfs.setdefault(d.cvmfs, len(cvmfs))
        for c in dict.fromkeys(d.cmtconfigs):
            cmt_members.setdefault(c, []).append(i)
        for k in d.tag_keys:
            tag_keys.setdefault(k, []).append(i)
        for name in d.tag_containers | d.tag_sources:
            tag_names.setdefault(name, []).append(i)
    first = np.unique(ids[0], return_index=True)[1].tolist()

    def arrays(index: dict[Any, list[int]]) -> dict[Any, np.ndarray]:
        return {k: np.asarray(v, dtype=np.intp) for k, v in index.items()}

    return _Features(
        hardware=ids[0],
        hardware_first=first,
        cmt=ids[1],
        cmt_values=list(cmt),
        containers=ids[2],
        n_containers=len(containers),
        cvmfs=ids[3],
        n_cvmfs=len(cvmfs),
        cmtconfigs=tuple(cmt_members),
        cmt_members=arrays(cmt_members),
        tag_keys=arrays(tag_keys),
        tag_names=arrays(tag_names),
    )


@dataclass
class _Plan:
    """Queues grouped by what decides them: ANY, AUTO without row, one explicit list, one description."""

    names: Any  # held so that the ids in the plan key cannot be reused while the plan lives
    releases: Any
    group: np.ndarray  # group index of every queue
    groups: list[tuple[int, Any]]  # (kind, explicit releases tuple or description)
    fixed: list[int] = field(default_factory=list)  # groups that are not AUTO descriptions
    auto: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))  # AUTO groups, in order
    descs: list[SoftwareDescription] = field(default_factory=list)  # the description of each AUTO group
    features: _Features | None = None  # built on first use by an index
    verdicts: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # SoftwareVerdict fields per task request


def _plan(queue_names: np.ndarray, releases: Sequence[Any], software: Mapping[str, Mapping[str, Any]]) -> _Plan:
    n = len(queue_names)
    group = np.empty(n, dtype=np.intp)
    groups: list[tuple[int, Any]] = []
    seen: dict[Any, int] = {}
    prepared: dict[int, SoftwareDescription] = {}
    for i in range(n):
        rel = releases[i]
        payload: Any = None
        if RELEASES_ANY in rel:
            key: Any = _ANY
        elif RELEASES_AUTO not in rel:
            payload = tuple(rel)
            key = (_LISTED, payload)
        else:
            row = software.get(queue_names[i])
            if row is None:
                key = _MISSING
            else:
                key = (_AUTO, id(row))
                payload = prepared.get(id(row))
                if payload is None:
                    payload = prepared[id(row)] = describe(row)
        g = seen.get(key)
        if g is None:
            g = seen[key] = len(groups)
            groups.append((key if isinstance(key, int) else key[0], payload))
        group[i] = g
    auto = [g for g, (kind, _) in enumerate(groups) if kind == _AUTO]
    return _Plan(
        queue_names,
        releases,
        group,
        groups,
        fixed=[g for g, (kind, _) in enumerate(groups) if kind != _AUTO],
        auto=np.asarray(auto, dtype=np.intp),
        descs=[groups[g][1] for g in auto],
    )


def cached_plan(queue_names: np.ndarray, releases: Sequence[Any], software: Mapping[str, Mapping[str, Any]]) -> _Plan:
    """The grouping of QUEUE_NAMES / RELEASES, remembered on a SoftwareIndex while the same arrays are passed."""
    if not isinstance(software, SoftwareIndex):
        return _plan(queue_names, releases, software)
    key = (id(queue_names), id(releases))
    plan = software.plans.get(key)
    if plan is None or plan.names is not queue_names or plan.releases is not releases:
        if len(software.plans) >= _MAX_PLANS:
            # tolerate a concurrent caller evicting the same entry (dashboard callbacks run in threads)
            with contextlib.suppress(StopIteration, RuntimeError):
                software.plans.pop(next(iter(software.plans)), None)
        plan = software.plans[key] = _plan(queue_names, releases, software)
    return plan


def fixed_outcome(kind: int, payload: Any, request: TaskSoftware) -> Outcome:
    """The outcome of a group that is not an AUTO description: releases ANY, AUTO without a row, or a list."""
    if kind == _ANY:
        return PASS_ANY
    if kind == _MISSING:
        return NO_DESCRIPTION
    return check_listed_release(request, payload)


def auto_by_description(plan: _Plan, request: TaskSoftware, all_sources: tuple[str, ...], memo_key: str) -> Any:
    """Outcome of every AUTO description, checked one by one (memoised on each description)."""
    outcomes = []
    for desc in plan.descs:
        outcome = desc.memo.get(memo_key)
        if outcome is None:
            outcome = check_auto_queue(request, desc, all_sources)
            if len(desc.memo) >= _MAX_RESULTS_PER_DESCRIPTION:
                desc.memo.clear()
            desc.memo[memo_key] = outcome
        outcomes.append(outcome)
    return outcomes, np.arange(len(outcomes), dtype=np.intp)


def auto_by_class(plan: _Plan, request: TaskSoftware, all_sources: tuple[str, ...], memo_key: str) -> Any:
    """Outcome of every AUTO description, checked once per class of descriptions the task cannot tell apart.

    A class key mixes exactly what check_auto_queue reads for this request, in its order: the regex
    resolution (cmtconfigs), the hardware verdict (a rejection ends the check: its sentence is the key),
    then the container or release inputs. Returns (outcomes, class of each description).
    """
    descs = plan.descs
    if not descs:
        return [], np.empty(0, dtype=np.intp)
    f = plan.features
    if f is None:
        f = plan.features = _features(descs)
    arch = request.architecture
    key = np.zeros(len(descs), dtype=np.int64)
    size = 1  # how many keys the mix can take; past int64 the check goes description by description

    def mix(values: np.ndarray, cardinality: int) -> None:
        nonlocal key, size
        key = key * cardinality + values
        size *= cardinality

    def member(index: np.ndarray | None) -> np.ndarray:
        out = np.zeros(len(descs), dtype=np.int64)
        if index is not None:
            out[index] = 1
        return out

    # rows whose check ends early get a negative key naming how: 0 no regex match, h > 0 hardware sentence h
    ended = np.full(len(descs), -1, dtype=np.int64)
    if arch.sw_platform_is_regex:
        pattern = re.compile(arch.sw_platform)
        platforms = [c for c in f.cmtconfigs if pattern.fullmatch(c)]
        matched = set(platforms)
        has = np.array([not matched.isdisjoint(v) for v in f.cmt_values], dtype=bool)[f.cmt]
        ended[~has] = 0
        mix(f.cmt, len(f.cmt_values))
    else:
        platforms = [arch.sw_platform]
    sentences: dict[str, int] = {}
    rejection = [hardware_rejection(arch, descs[i]) for i in f.hardware_first]
    hw = np.array([0 if r is None else sentences.setdefault(r, len(sentences) + 1) for r in rejection])[f.hardware]
    ended = np.where((ended < 0) & (hw > 0), hw, ended)
    if request.container_name:
        if request.only_tags_for_fc:
            mix(member(f.tag_names.get(request.container_name)), 2)
        else:
            mix(f.containers, f.n_containers)
    elif request.release is not None:
        if not arch.sw_platform_is_regex:
            mix(member(f.cmt_members.get(arch.sw_platform)), 2)
        mix(f.containers, f.n_containers)
        mix(f.cvmfs, f.n_cvmfs)
        project, version = request.release.project, request.release.version
        for p in platforms:
            mix(member(f.tag_keys.get((p, project, version))), 2)
    if size >= 2**62:
        return auto_by_description(plan, request, all_sources, memo_key)
    key = np.where(ended >= 0, -1 - ended, key)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    outcomes = [check_auto_queue(request, descs[i], all_sources) for i in first.tolist()]
    return outcomes, inverse.reshape(-1)
