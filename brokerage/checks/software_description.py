"""The queues' published software (queue_software rows) prepared once for the checks, the index of a
snapshot's descriptions, and the per-queue Outcome a description memoises per task request."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from brokerage.checks.software_request import clean_text
from brokerage.model.cache import GridCache


@dataclass(frozen=True, slots=True)
class Outcome:
    """One queue's result: passed, criteria code ('' when passed), why, and the resolved cmtconfig."""

    passed: bool
    criteria: str = ""
    reason: str = ""
    resolved: str = ""


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
        "_row",
        "all_sources",
        "cmtconfigs",
        "containers",
        "cpu",
        "cvmfs",
        "gpu",
        "memo",
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
            (clean_text(t.get("cmtconfig")), clean_text(t.get("project")), clean_text(t.get("release"))) for t in tags
        )
        self.tag_containers = frozenset(c for t in tags if (c := clean_text(t.get("container_name"))))
        self.tag_sources = frozenset(s for t in tags for s in _strings(t.get("sources")) if s)
        sources: dict[str, tuple[str, ...]] = {}
        for t in tags:
            name = clean_text(t.get("container_name"))
            if name:
                sources[name] = sources.get(name, ()) + tuple(s for s in _strings(t.get("sources")) if s)
        self.all_sources = sources
        self.memo: dict[str, Outcome] = {}

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
        self.plans: dict[tuple[int, int], Any] = {}  # software_plan's plans per (queue names, releases) ids


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
