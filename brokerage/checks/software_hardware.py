"""CPU and GPU matching: the task's host_cpu_spec / host_gpu_spec against the queue's architectures entries."""

from __future__ import annotations

import re

from brokerage.checks.software_description import SoftwareDescription
from brokerage.model.architecture import WILDCARD, CpuSpec, GpuSpec, TaskArchitecture, is_regex

EXCLUSIVE = "excl"  # "If 'excl' is included in the list, the queue accepts only tasks with attribute='blah'"


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
