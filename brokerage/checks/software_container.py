"""Fat containers: may the queue run the task's container, directly or through the source paths the 'ALL'
pseudo queue publishes for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brokerage.checks.software_description import SoftwareDescription, describe
from brokerage.checks.software_request import TaskSoftware
from brokerage.model.architecture import WILDCARD

ALL_QUEUE = "ALL"  # pseudo queue whose tags map container names to source paths
CVMFS_CONTAINERS = "/cvmfs"  # "'any' or '/cvmfs' must be included in the containers list"


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


def container_sources(task: TaskSoftware, all_desc: Mapping[str, Any] | None) -> tuple[str, ...]:
    if not task.container_name or task.only_tags_for_fc or all_desc is None:
        return ()
    return describe(all_desc).all_sources.get(task.container_name, ())
