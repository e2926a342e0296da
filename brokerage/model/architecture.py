"""A task's architecture string parsed: sw_platform@base_platform#host_cpu_spec&host_gpu_spec."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from brokerage.model.errors import InputError

WILDCARD = "any"  # 'any' in cmtconfigs / containers / cvmfs / hardware lists
CPU_ATTRIBUTES = ("arch", "vendor", "instr")  # host_cpu_spec = architecture<-vendor<-instruction_set>>
GPU_ATTRIBUTES = ("vendor", "model")  # host_gpu_spec = vendor<-model>

_REGEX_CHARS = frozenset("*+?|()[]{}^$\\")
_OPEN = {"(": ")", "{": "}"}


class ArchitectureError(InputError, ValueError):
    """A task architecture string is malformed; the message names the part that is wrong."""

    def line(self) -> str:
        """The command line's one line."""
        return f"malformed task architecture: {self}"


def _join_spec(values: list[str | None]) -> str:
    while values and values[-1] is None:
        values.pop()
    return "-".join(v or "*" for v in values) or "*"


@dataclass(frozen=True)
class CpuSpec:
    """host_cpu_spec; None = not specified. ``explicit`` is False when arch comes from sw_platform."""

    arch: str | None
    vendor: str | None = None
    instr: str | None = None
    explicit: bool = True

    def value(self, attribute: str) -> str | None:
        """The task's value of a queue cpu attribute (None when the task does not specify it)."""
        return getattr(self, attribute, None) if attribute in CPU_ATTRIBUTES else None

    def __str__(self) -> str:
        return _join_spec([self.arch, self.vendor, self.instr])


@dataclass(frozen=True)
class GpuSpec:
    """host_gpu_spec; None = not specified."""

    vendor: str | None
    model: str | None = None

    def value(self, attribute: str) -> str | None:
        """The task's value of a queue gpu attribute (None when the task does not specify it)."""
        return getattr(self, attribute, None) if attribute in GPU_ATTRIBUTES else None

    def __str__(self) -> str:
        return _join_spec([self.vendor, self.model])


@dataclass(frozen=True)
class TaskArchitecture:
    """Parsed ``sw_platform<@base_platform><#host_cpu_spec><&host_gpu_spec>``."""

    text: str
    sw_platform: str = ""
    base_platform: str = ""
    cpu: CpuSpec | None = None
    gpu: GpuSpec | None = None

    @property
    def sw_platform_is_regex(self) -> bool:
        """True when sw_platform must be resolved against the queue's cmtconfigs."""
        return is_regex(self.sw_platform)


def is_regex(text: str) -> bool:
    """True when TEXT contains a regular-expression metacharacter ('.' alone does not count).

    Usage: ``is_regex("(x86_64|aarch64)")``
    """
    return not _REGEX_CHARS.isdisjoint(text)


def _split_top(text: str, sep: str, part: str, shown: str) -> list[str]:
    """Split TEXT at SEP outside (), [] and {}; unbalanced brackets raise ArchitectureError."""
    pieces: list[str] = []
    stack: list[str] = []
    in_class = False
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in ")}":
            if not stack or stack.pop() != ch:
                raise ArchitectureError(f"{part}: unbalanced parentheses in {shown!r}")
        elif ch == sep and not stack:
            pieces.append(text[start:i])
            start = i + 1
        i += 1
    if stack or in_class:
        raise ArchitectureError(f"{part}: unbalanced parentheses in {shown!r}")
    pieces.append(text[start:])
    return pieces


def _check_regex(value: str, part: str, shown: str) -> None:
    if not is_regex(value):
        return
    _split_top(value, "\0", part, shown)
    try:
        re.compile(value)
    except re.error as exc:
        raise ArchitectureError(f"{part}: invalid regular expression {value!r} in {shown!r} ({exc})") from exc


def _spec_value(value: str) -> str | None:
    return None if value in ("*", WILDCARD) else value


@lru_cache(maxsize=4096)
def parse_architecture(text: str) -> TaskArchitecture:
    """Parse a task architecture; raise ArchitectureError naming the wrong part.

    Without ``#host_cpu_spec`` the CPU architecture is the part of sw_platform before its first '-'.
    Usage: ``parse_architecture("x86_64-el9-gcc13-opt@el9#x86_64-intel&nvidia-a100")``
    """
    text = (text or "").strip()
    if not text:
        return TaskArchitecture("")
    if any(ch.isspace() for ch in text):
        raise ArchitectureError(f"architecture: whitespace in {text!r}")
    positions = []
    for sep, part in (("@", "base_platform"), ("#", "host_cpu_spec"), ("&", "host_gpu_spec")):
        if text.count(sep) > 1:
            raise ArchitectureError(f"{part}: repeated {sep!r} in {text!r}")
        if sep in text:
            positions.append((text.index(sep), sep))
    if positions != sorted(positions):
        raise ArchitectureError(
            f"architecture: parts must come in the order sw_platform@base_platform#host_cpu_spec&host_gpu_spec, got {text!r}"
        )
    rest, _, gpu_text = text.partition("&")
    rest, _, cpu_text = rest.partition("#")
    sw_platform, _, base_platform = rest.partition("@")
    if "@" in text and not base_platform:
        raise ArchitectureError(f"base_platform: empty after '@' in {text!r}")
    _check_regex(sw_platform, "sw_platform", sw_platform)
    cpu = _parse_cpu(cpu_text) if "#" in text else _default_cpu(sw_platform)
    gpu = _parse_gpu(gpu_text) if "&" in text else None
    return TaskArchitecture(text, sw_platform, base_platform, cpu, gpu)


def _parse_cpu(spec: str) -> CpuSpec:
    shown = "#" + spec
    if not spec:
        raise ArchitectureError(f"host_cpu_spec: empty after '#' in {shown!r}")
    parts = _split_top(spec, "-", "host_cpu_spec", shown)
    if len(parts) > len(CPU_ATTRIBUTES):
        raise ArchitectureError(f"host_cpu_spec: more than 3 parts (architecture-vendor-instruction_set) in {shown!r}")
    for name, value in zip(("architecture", "vendor", "instruction set"), parts, strict=False):
        if not value:
            raise ArchitectureError(f"host_cpu_spec: empty {name} in {shown!r}")
    if parts[0] != "*":
        _check_regex(parts[0], "host_cpu_spec", shown)
    for value in parts[1:]:
        if is_regex(value) and value != "*":
            raise ArchitectureError(
                f"host_cpu_spec: regular expressions are allowed only in the architecture, got {shown!r}"
            )
    arch, vendor, instr = [*parts, "", ""][:3]
    return CpuSpec(_spec_value(arch), _spec_value(vendor) if vendor else None, _spec_value(instr) if instr else None)


def _default_cpu(sw_platform: str) -> CpuSpec | None:
    if not sw_platform:
        return None
    first = _split_top(sw_platform, "-", "sw_platform", sw_platform)[0]
    return CpuSpec(_spec_value(first) if first else None, explicit=False)


def _parse_gpu(spec: str) -> GpuSpec:
    shown = "&" + spec
    if not spec:
        raise ArchitectureError(f"host_gpu_spec: empty after '&' in {shown!r}")
    parts = spec.split("-")
    if len(parts) > len(GPU_ATTRIBUTES):
        raise ArchitectureError(f"host_gpu_spec: more than 2 parts (vendor-model) in {shown!r}")
    for name, value in zip(("vendor", "model"), parts, strict=False):
        if not value:
            raise ArchitectureError(f"host_gpu_spec: empty {name} in {shown!r}")
        if is_regex(value) and value != "*":
            raise ArchitectureError(f"host_gpu_spec: regular expressions are not allowed, got {shown!r}")
    vendor, model = [*parts, ""][:2]
    return GpuSpec(_spec_value(vendor), _spec_value(model) if model else None)
