"""Release, cache, nightly, CPU/GPU and fat-container matching of a task against the queues' software."""

from __future__ import annotations

import contextlib
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from brokerage.framework import Filter, Verdict
from brokerage.model.architecture import (
    WILDCARD,
    CpuSpec,
    GpuSpec,
    TaskArchitecture,
    is_regex,
    parse_architecture,
)
from brokerage.model.cache import GridCache

CACHE = "-cache"
REGEXP_CMTCONFIG = "-regexpcmtconfig"

RELEASES_ANY = "ANY"  # CRIC releases=['ANY']: the queue is not checked
RELEASES_AUTO = "AUTO"  # CRIC releases=['AUTO']: the queue's published JSON decides
ALL_QUEUE = "ALL"  # pseudo queue whose tags map container names to source paths
CVMFS_CONTAINERS = "/cvmfs"  # "'any' or '/cvmfs' must be included in the containers list"
CVMFS_RELEASES = "atlas"  # "cvmfs_tag is atlas for standard releases and caches"
CVMFS_NIGHTLIES = "nightlies"  # "... or nightlies for nightlies"
EXCLUSIVE = "excl"  # "If 'excl' is included in the list, the queue accepts only tasks with attribute='blah'"
ANALYSIS_TRANSFORMS = "AnalysisTransforms-"  # analysis transHome prefix in front of project_version


_NIGHTLY_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{4}")
_BASE_RELEASE = re.compile(r"\d+\.\d+\.\d+")
_MAX_RESULTS_PER_DESCRIPTION = 4096  # memo bound: distinct task software requests remembered per description


# --- task release -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Release:
    """A classified transHome: project, version, the cvmfs repository it needs and its kind."""

    transhome: str
    project: str
    version: str
    cvmfs: str  # CVMFS_RELEASES or CVMFS_NIGHTLIES
    kind: str  # release (3-number base release), cache, or nightly

    @property
    def names(self) -> tuple[str, ...]:
        """How an explicit CRIC releases list may name it: transHome as written, or project-version."""
        pv = f"{self.project}-{self.version}" if self.project else self.version
        return (self.transhome,) if pv == self.transhome else (self.transhome, pv)


@lru_cache(maxsize=4096)
def classify_release(transhome: str) -> Release | None:
    """Classify a transHome ('' = none): project before the first '-', version after, and its cvmfs repo.

    Usage: ``classify_release("AthDerivation-21.2.2.0").kind == "cache"``
    """
    text = (transhome or "").strip()
    if not text:
        return None
    body = text
    if body.startswith(ANALYSIS_TRANSFORMS):
        body = body[len(ANALYSIS_TRANSFORMS) :].replace("_", "-", 1)
    sep = "-" if "-" in body else "_" if "_" in body else ""
    project, version = body.split(sep, 1) if sep else ("", body)
    if version.startswith("rel_") or _NIGHTLY_STAMP.search(version):
        return Release(text, project, version, CVMFS_NIGHTLIES, "nightly")
    kind = "release" if _BASE_RELEASE.fullmatch(version) else "cache"
    return Release(text, project, version, CVMFS_RELEASES, kind)


@dataclass(frozen=True)
class TaskSoftware:
    """What a task asks of a queue's software: architecture, release, fat container."""

    architecture: TaskArchitecture
    release: Release | None
    container_name: str
    only_tags_for_fc: bool


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


@lru_cache(maxsize=4096)
def _task_software(architecture: str, transhome: str, container: str, only_tags: bool) -> TaskSoftware:
    return TaskSoftware(parse_architecture(architecture), classify_release(transhome), container, only_tags)


def task_software(task: Mapping[str, Any]) -> TaskSoftware:
    """The software request of a task row (columns architecture, transhome, container_name, onlytagsforfc).

    Usage: ``task_software({"architecture": "x86_64-el9-gcc13-opt", "transhome": "Athena-22.0.41"})``
    """
    only = task.get("onlytagsforfc")
    only_tags = bool(only) and not (isinstance(only, float) and math.isnan(only))
    return _task_software(
        _text(task.get("architecture")), _text(task.get("transhome")), _text(task.get("container_name")), only_tags
    )


# --- queue software descriptions ------------------------------------------------------------------


def _strings(value: Any) -> tuple[str, ...]:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


class SoftwareDescription(Mapping[str, Any]):
    """One queue_software row, read-only, with the lookups the checks need prepared once.

    It also memoises check outcomes per task request, so queues sharing a description cost one check.
    Usage: ``desc = SoftwareDescription({"cmtconfigs": [...], "tags": [...]}); desc.cvmfs``
    """

    __slots__ = (
        "_results",
        "_row",
        "all_sources",
        "cmtconfigs",
        "containers",
        "cpu",
        "cvmfs",
        "gpu",
        "tag_containers",
        "tag_keys",
        "tag_sources",
    )

    def __init__(self, row: Mapping[str, Any]) -> None:
        self._row = dict(row)
        self.cmtconfigs = _strings(row.get("cmtconfigs"))
        self.containers = _strings(row.get("containers"))
        self.cvmfs = frozenset(_strings(row.get("cvmfs")))
        archs = row.get("architectures") or []
        if isinstance(archs, Mapping):
            archs = [archs]
        dicts = [a for a in archs if isinstance(a, Mapping)]
        self.cpu = tuple(_hardware_entry(a) for a in dicts if str(a.get("type", "")).lower() == "cpu")
        self.gpu = tuple(_hardware_entry(a) for a in dicts if str(a.get("type", "")).lower() == "gpu")
        tags = [t for t in (row.get("tags") or []) if isinstance(t, Mapping)]
        self.tag_keys = frozenset(
            (_text(t.get("cmtconfig")), _text(t.get("project")), _text(t.get("release"))) for t in tags
        )
        self.tag_containers = frozenset(c for t in tags if (c := _text(t.get("container_name"))))
        self.tag_sources = frozenset(s for t in tags for s in _strings(t.get("sources")) if s)
        sources: dict[str, tuple[str, ...]] = {}
        for t in tags:
            name = _text(t.get("container_name"))
            if name:
                sources[name] = sources.get(name, ()) + tuple(s for s in _strings(t.get("sources")) if s)
        self.all_sources = sources
        self._results: dict[str, Outcome] = {}

    def __getitem__(self, key: str) -> Any:
        return self._row[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._row)

    def __len__(self) -> int:
        return len(self._row)

    def __repr__(self) -> str:
        return f"SoftwareDescription(cmtconfigs={list(self.cmtconfigs)}, cvmfs={sorted(self.cvmfs)}, ...)"


def _hardware_entry(entry: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    # a bare string is read as a one-element list; a null attribute as absent
    return {str(k): _strings(v) for k, v in entry.items() if k != "type" and v is not None}


def describe(row: Mapping[str, Any]) -> SoftwareDescription:
    """The prepared form of one queue_software row (returned unchanged if already prepared).

    Usage: ``describe({"cmtconfigs": ["x86_64-el9-gcc13-opt"], "cvmfs": ["atlas"]})``
    """
    return row if isinstance(row, SoftwareDescription) else SoftwareDescription(row)


class SoftwareIndex(dict[str, SoftwareDescription]):
    """panda_queue (and 'ALL') -> prepared description, plus the queue groupings software_verdict reuses.

    Usage: ``index = build_software_index(snapshot); index["AGLT2"].cvmfs``
    """

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._plans: dict[tuple[int, int], _Plan] = {}


def content_key(row: Mapping[str, Any]) -> str:
    """A canonical string of a queue_software row without its queue name (equal rows, equal keys).

    Usage: ``content_key(row_a) == content_key(row_b)``
    """
    return json.dumps({k: v for k, v in row.items() if k != "panda_queue"}, sort_keys=True, default=str)


def build_software_index(snapshot: Any) -> SoftwareIndex:
    """panda_queue (and 'ALL') -> prepared description; identical descriptions share one object.

    Usage: ``software = build_software_index(snap)``
    """
    table = snapshot.queue_software
    shared: dict[str, SoftwareDescription] = {}
    index = SoftwareIndex()
    columns = [c for c in ("cmtconfigs", "containers", "cvmfs", "architectures", "tags") if c in table.columns]
    for row in table[["panda_queue", *columns]].to_dict("records"):
        content = {c: row[c] for c in columns}
        key = content_key(content)
        desc = shared.get(key)
        if desc is None:
            desc = shared[key] = SoftwareDescription(content)
        index[str(row["panda_queue"])] = desc
    return index


def software_index(cache: GridCache) -> SoftwareIndex:
    """build_software_index of the cache's snapshot, built once.

    Usage: ``software_verdict(task, names, releases, software_index(cache))``
    """
    return cache.get("software_index", lambda: build_software_index(cache.snap))


# --- checks -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """One queue's result: passed, criteria code ('' when passed), why, and the resolved cmtconfig."""

    passed: bool
    criteria: str = ""
    reason: str = ""
    resolved: str = ""


PASS = Outcome(True)
PASS_ANY = Outcome(True, reason=f"releases={RELEASES_ANY}: not checked")
NO_DESCRIPTION = Outcome(
    False, CACHE, f"releases={RELEASES_AUTO} but the queue publishes no software description (no queue_software row)"
)


def _fail(reason: str, criteria: str = CACHE) -> Outcome:
    return Outcome(False, criteria, reason)


def _accepts(values: tuple[str, ...], wanted: str | None, regex: bool) -> bool:
    """One queue attribute list against one task value (None = the task does not specify it)."""
    exclusive = EXCLUSIVE in values
    if wanted is None:
        return not exclusive
    listed = [v for v in values if v != EXCLUSIVE]
    if not listed or any(v == "" or v.lower() == WILDCARD for v in listed):
        return True
    if regex:
        pattern = re.compile(wanted, re.IGNORECASE)
        return any(pattern.fullmatch(v) for v in listed)
    return wanted.lower() in (v.lower() for v in listed)


def _entry_rejection(kind: str, entry: dict[str, tuple[str, ...]], spec: CpuSpec | GpuSpec | None) -> str | None:
    for attribute, values in entry.items():
        wanted = spec.value(attribute) if spec is not None else None
        regex = kind == "CPU" and attribute == "arch" and wanted is not None and is_regex(wanted)
        if _accepts(values, wanted, regex):
            continue
        shown = "[" + ", ".join(repr(v) for v in values) + "]"
        if wanted is None:
            return f"{kind} {attribute} not specified by the task but the queue only accepts {attribute} {shown}"
        derived = " (taken from sw_platform)" if isinstance(spec, CpuSpec) and not spec.explicit else ""
        return f"{kind} {attribute} {wanted}{derived} rejected: queue {attribute} {shown}"
    return None


def hardware_rejection(arch: TaskArchitecture, desc: SoftwareDescription) -> str | None:
    """Why the queue's CPU/GPU description rejects the task, or None.

    A queue without a cpu entry accepts any CPU; a GPU request needs a gpu entry. With several entries of
    one type, any entry may accept.
    Usage: ``hardware_rejection(parse_architecture("#aarch64"), describe(row))``
    """
    if desc.cpu:
        reasons = [_entry_rejection("CPU", e, arch.cpu) for e in desc.cpu]
        if all(reasons):
            return reasons[0]
    if arch.gpu is not None and not desc.gpu:
        return f"GPU {arch.gpu} requested but the queue publishes no gpu architecture"
    if desc.gpu:
        reasons = [_entry_rejection("GPU", e, arch.gpu) for e in desc.gpu]
        if all(reasons):
            return reasons[0]
    return None


def container_rejection(
    name: str, only_tags: bool, desc: SoftwareDescription, all_sources: tuple[str, ...]
) -> str | None:
    """Why the queue cannot run fat container NAME, or None (ALL_SOURCES: its source paths via 'ALL').

    Usage: ``container_rejection("atlas/athena:22.0.41", False, describe(row), ())``
    """
    if only_tags:
        if name in desc.tag_containers or name in desc.tag_sources:
            return None
        return f"container {name} is neither a tag's container_name nor in a tag's sources (onlyTagsForFC)"
    if WILDCARD in desc.containers or CVMFS_CONTAINERS in desc.containers:
        return None
    prefixes = [c for c in desc.containers if c]
    if any(name.startswith(c) for c in prefixes):
        return None
    if any(s.startswith(c) for s in all_sources for c in prefixes):
        return None
    shown = "[" + ", ".join(repr(c) for c in desc.containers) + "]"
    if not all_sources:
        return f"container {name} not in containers {shown} and not resolvable via {ALL_QUEUE}"
    return f"container {name} not in containers {shown} and its source path {', '.join(all_sources)} (via {ALL_QUEUE}) matches none"


def release_rejection(release: Release, sw_platform: str, base_platform: str, desc: SoftwareDescription) -> str | None:
    """Why the queue lacks the release/cache/nightly for SW_PLATFORM, or None (seed, 'Checks for Releases').

    Usage: ``release_rejection(classify_release("Athena-22.0.41"), "x86_64-el9-gcc13-opt", "", describe(row))``
    """
    cvmfs_ok = WILDCARD in desc.cvmfs or release.cvmfs in desc.cvmfs
    containers_ok = WILDCARD in desc.containers or CVMFS_CONTAINERS in desc.containers
    if cvmfs_ok and (containers_ok or sw_platform in desc.cmtconfigs):
        return None
    tag_ok = (sw_platform, release.project, release.version) in desc.tag_keys
    if (WILDCARD in desc.containers or not base_platform) and tag_ok:
        return None
    if not cvmfs_ok:
        first = f"cvmfs {sorted(desc.cvmfs)} has neither 'any' nor '{release.cvmfs}'"
    else:
        first = f"cmtconfig {sw_platform or '(none)'} not in cmtconfigs and containers lack 'any' and '/cvmfs'"
    if not tag_ok:
        second = f"no tag {release.project} {release.version} for cmtconfig {sw_platform or '(none)'}"
    else:
        second = (
            f"base platform {base_platform} needs 'any' in containers to use tag {release.project} {release.version}"
        )
    return f"{first}; {second}"


def check_auto_queue(task: TaskSoftware, desc: SoftwareDescription, all_sources: tuple[str, ...] = ()) -> Outcome:
    """The releases=AUTO check of one queue: regex cmtconfig, hardware, fat container, then release.

    Usage: ``check_auto_queue(task_software(task), describe(row))``
    """
    arch = task.architecture
    candidates: tuple[str, ...] = (arch.sw_platform,)
    if arch.sw_platform_is_regex:
        pattern = re.compile(arch.sw_platform)
        candidates = tuple(c for c in desc.cmtconfigs if pattern.fullmatch(c))
        if not candidates:
            return _fail(f"regexp {arch.sw_platform} matches no cmtconfig of the queue", REGEXP_CMTCONFIG)
    resolved = candidates[0] if arch.sw_platform_is_regex else ""
    why = hardware_rejection(arch, desc)
    if why:
        return _fail(why)
    if task.container_name:
        why = container_rejection(task.container_name, task.only_tags_for_fc, desc, all_sources)
        return _fail(why) if why else Outcome(True, resolved=resolved)
    if task.release is None:
        return Outcome(True, resolved=resolved)
    first_reason = ""
    for platform in candidates:
        why = release_rejection(task.release, platform, arch.base_platform, desc)
        if why is None:
            return Outcome(True, resolved=platform if arch.sw_platform_is_regex else "")
        first_reason = first_reason or why
    if len(candidates) > 1:
        first_reason += f" (and {len(candidates) - 1} more cmtconfigs matching {arch.sw_platform})"
    return _fail(f"release {task.release.transhome}: {first_reason}")


def check_listed_release(task: TaskSoftware, releases: Sequence[str]) -> Outcome:
    """An explicit CRIC releases list: the task's transHome (as written or project-version) must be listed.

    Usage: ``check_listed_release(task_software(task), ["Athena-22.0.41"])``
    """
    if task.release is None or any(n in releases for n in task.release.names):
        return PASS
    return _fail(f"release {task.release.transhome} not in releases {list(releases)}")


def check_queue(
    task: TaskSoftware,
    releases: Sequence[str],
    desc: Mapping[str, Any] | None,
    all_desc: Mapping[str, Any] | None = None,
) -> Outcome:
    """The whole software check of one queue (scalar form of software_verdict).

    Usage: ``check_queue(task_software(task), ["AUTO"], software.get(q), software.get("ALL"))``
    """
    if RELEASES_ANY in releases:
        return PASS_ANY
    if RELEASES_AUTO not in releases:
        return check_listed_release(task, releases)
    if desc is None:
        return NO_DESCRIPTION
    return check_auto_queue(task, describe(desc), _all_sources(task, all_desc))


def _all_sources(task: TaskSoftware, all_desc: Mapping[str, Any] | None) -> tuple[str, ...]:
    if not task.container_name or task.only_tags_for_fc or all_desc is None:
        return ()
    return describe(all_desc).all_sources.get(task.container_name, ())


# --- vectorised entry point --------------------------------------------------------------------------

_ANY, _MISSING, _LISTED, _AUTO = 0, 1, 2, 3
_MAX_PLANS = 16  # candidate lists remembered per index (the broker passes the same arrays every call)
_VERDICT_MEMO_CELLS = 2_000_000  # queues x remembered task requests per plan (about 30 bytes per cell)


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


def _cached_plan(queue_names: np.ndarray, releases: Sequence[Any], software: Mapping[str, Mapping[str, Any]]) -> _Plan:
    if not isinstance(software, SoftwareIndex):
        return _plan(queue_names, releases, software)
    key = (id(queue_names), id(releases))
    plan = software._plans.get(key)
    if plan is None or plan.names is not queue_names or plan.releases is not releases:
        if len(software._plans) >= _MAX_PLANS:
            # tolerate a concurrent caller evicting the same entry (dashboard callbacks run in threads)
            with contextlib.suppress(StopIteration, RuntimeError):
                software._plans.pop(next(iter(software._plans)), None)
        plan = software._plans[key] = _plan(queue_names, releases, software)
    return plan


def _fixed_outcome(kind: int, payload: Any, request: TaskSoftware) -> Outcome:
    if kind == _ANY:
        return PASS_ANY
    if kind == _MISSING:
        return NO_DESCRIPTION
    return check_listed_release(request, payload)


def _auto_by_description(plan: _Plan, request: TaskSoftware, all_sources: tuple[str, ...], memo_key: str) -> Any:
    """Outcome of every AUTO description, checked one by one (memoised on each description)."""
    outcomes = []
    for desc in plan.descs:
        outcome = desc._results.get(memo_key)
        if outcome is None:
            outcome = check_auto_queue(request, desc, all_sources)
            if len(desc._results) >= _MAX_RESULTS_PER_DESCRIPTION:
                desc._results.clear()
            desc._results[memo_key] = outcome
        outcomes.append(outcome)
    return outcomes, np.arange(len(outcomes), dtype=np.intp)


def _auto_by_class(plan: _Plan, request: TaskSoftware, all_sources: tuple[str, ...], memo_key: str) -> Any:
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
        return _auto_by_description(plan, request, all_sources, memo_key)
    key = np.where(ended >= 0, -1 - ended, key)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    outcomes = [check_auto_queue(request, descs[i], all_sources) for i in first.tolist()]
    return outcomes, inverse.reshape(-1)


@dataclass
class SoftwareVerdict(Verdict):
    """A Verdict plus, per queue, the cmtconfig a regex sw_platform resolved to ('' when none)."""

    resolved: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))


def software_verdict(
    task: Mapping[str, Any],
    queue_names: np.ndarray,
    releases: Sequence[list[str]],
    software: Mapping[str, Mapping[str, Any]],
) -> SoftwareVerdict:
    """Release/cache/architecture/container verdict of a task over queues (criteria -cache, -regexpcmtconfig).

    SOFTWARE maps panda_queue (and 'ALL') to its queue_software row. With a SoftwareIndex (see
    build_software_index) the grouping of QUEUE_NAMES / RELEASES is remembered (they are treated as
    immutable), descriptions the task cannot tell apart are checked once, and the outcome of a task
    request is reused by later tasks asking the same.
    Raises ArchitectureError when the task's architecture is malformed.
    Usage: ``v = software_verdict(task, qa.name, qa["releases"], software_index(cache))``
    """
    request = task_software(task)
    all_sources = _all_sources(request, software.get(ALL_QUEUE))
    transhome = request.release.transhome if request.release else ""
    # a str key: its hash is cached, so memo lookups stay cheap
    memo_key = "\x1f".join(
        (request.architecture.text, transhome, request.container_name, str(request.only_tags_for_fc), *all_sources)
    )
    plan = _cached_plan(queue_names, releases, software)
    indexed = isinstance(software, SoftwareIndex)
    hit = plan.verdicts.get(memo_key) if indexed else None
    if hit is None:
        outcomes = [_fixed_outcome(*plan.groups[g], request) for g in plan.fixed]
        by = _auto_by_class if indexed else _auto_by_description
        auto_outcomes, auto_index = by(plan, request, all_sources, memo_key)
        per_group = np.empty(len(plan.groups), dtype=np.intp)
        per_group[plan.fixed] = np.arange(len(outcomes), dtype=np.intp)
        per_group[plan.auto] = auto_index + len(outcomes)
        outcomes.extend(auto_outcomes)
        which = per_group[plan.group]
        passed = np.array([o.passed for o in outcomes], dtype=bool)[which]
        criteria = np.array([o.criteria for o in outcomes], dtype=object)[which]
        resolved = np.array([o.resolved for o in outcomes], dtype=object)[which]
        for a in (which, passed, criteria, resolved):
            a.flags.writeable = False  # shared by every task asking the same

        def reasons(idx: np.ndarray) -> list[str]:
            return [outcomes[k].reason for k in which[idx].tolist()]

        hit = (passed, criteria, reasons, resolved)
        if indexed:
            if len(plan.verdicts) * max(len(queue_names), 1) >= _VERDICT_MEMO_CELLS:
                plan.verdicts.clear()
            plan.verdicts[memo_key] = hit
    passed, criteria, reasons, resolved = hit
    return SoftwareVerdict(passed, criteria, reasons, resolved=resolved)


def resolved_cmtconfig(
    task: Mapping[str, Any],
    queue_names: np.ndarray,
    releases: Sequence[list[str]],
    software: Mapping[str, Mapping[str, Any]],
) -> np.ndarray:
    """Per queue, the cmtconfig a regex sw_platform resolved to ('' when not a regex or the queue fails).

    Usage: ``resolved_cmtconfig(task, qa.name, qa["releases"], software_index(snap))[i]``
    """
    return software_verdict(task, queue_names, releases, software).resolved


def f_software(ctx: Any) -> Verdict:
    """Availability of ATLAS release/cache: ANY skips the check, AUTO uses the queue's published software.

    The same queue arrays are passed on every call so that the check's per-description memo is reused.
    """
    qa = ctx.qa
    return software_verdict(ctx.task, qa.name, qa["releases"], software_index(ctx.cache))


SOFTWARE = Filter(
    "release/cache check",
    ("-cache", "-regexpcmtconfig"),
    "the queue must offer the task's release/cache, architecture and container (releases ANY skips the check, "
    "AUTO reads the queue's published software)",
    f_software,
)
