"""A pilot's resource description: parsing, normalisation as DIRAC's Matcher does it, request-level refusals."""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from typing import Any

from brokerage.model.errors import InputError

# the fields a pilot may send (DIRAC's names); lists are written a;b;c in the pilot string
FIELDS: dict[str, str] = {
    "Site": "str",
    "GridCE": "str",
    "Platform": "str",
    "CPUTime": "int",
    "JobType": "str",
    "Tags": "list",
    "RequiredTags": "list",
    "OwnerGroup": "list",
    "Owner": "str",
    "NumberOfProcessors": "int",
    "MaxRAM": "int",
    "WholeNode": "bool",
}
ALIASES = {"Tag": "Tags", "RequiredTag": "RequiredTags"}  # DIRAC's own singular spellings
MAX_AUTO_TAGS = 1024  # Matcher adds no <n>Processors / <g>GB tags at all when n or g exceeds this
RAM_TAG_MB = 1000  # MaxRAM (MB) -> int(MaxRAM / 1000) GB tags

MISSING_SITE = "Missing Site Name in Resource JDL"
MISSING_CPU = "Missing mandatory field 'CPUTime' in match request definition"
WRONG_CONDITIONS = "Wrong conditions"  # RequiredTag not a subset of Tag
TEST_JOB_TYPE = "Test"  # "Banned destinations can only take Test jobs"


class PilotError(InputError, ValueError):
    """A pilot description that cannot be read; ``field`` names the offending field."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name

    def line(self) -> str:
        """The one line a command or page says."""
        return f"bad pilot field {self}"


@dataclass(frozen=True)
class Resource:
    """A normalised resource description (Matcher._processResourceDescription), plus what normalising did."""

    given: dict[str, Any]
    site: str | None
    grid_ce: str | None
    platform: str | None
    cpu_time: int | None
    job_type: str | None
    tags: tuple[str, ...] | None  # None: the pilot sent no tag at all (only tag-less task queues match)
    required_tags: tuple[str, ...]
    owner_groups: tuple[str, ...]
    owner: str | None
    auto_tags: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON form: what the pilot sent and what the matcher uses."""
        return {
            "given": self.given,
            "Site": self.site,
            "GridCE": self.grid_ce,
            "Platform": self.platform,
            "CPUTime": self.cpu_time,
            "JobType": self.job_type,
            "Tags": None if self.tags is None else list(self.tags),
            "RequiredTags": list(self.required_tags),
            "OwnerGroup": list(self.owner_groups),
            "Owner": self.owner,
            "auto_tags": list(self.auto_tags),
            "notes": list(self.notes),
        }


def _value(name: str, kind: str, raw: Any) -> Any:
    if kind == "list":
        items = raw if isinstance(raw, list) else re.split(r"[;|]", str(raw))
        return [str(x).strip().strip("\"'[]") for x in items if str(x).strip().strip("\"'[]")]
    if kind == "int":
        try:
            if isinstance(raw, bool):
                raise ValueError(raw)
            v = float(raw)
            if not v.is_integer() or v < 0:
                raise ValueError(raw)
            return int(v)
        except (TypeError, ValueError):
            raise PilotError(name, f"expected a non-negative integer, got {raw!r}") from None
    if kind == "bool":
        text = str(raw).strip().lower()
        if isinstance(raw, bool) or text in ("1", "true", "yes", "y", "0", "false", "no", "n", ""):
            return raw if isinstance(raw, bool) else text in ("1", "true", "yes", "y")
        raise PilotError(name, f"expected true or false, got {raw!r}")
    return str(raw).strip()


def parse_pilot(text: str | dict[str, Any]) -> dict[str, Any]:
    """Read a pilot description: ``'Site=LCG.CERN.cern,CPUTime=40000,Tags=MultiProcessor;8Processors'`` or JSON.

    Unknown fields and unreadable values raise PilotError naming the field.
    Usage: ``parse_pilot("Site=LCG.CERN.cern,CPUTime=40000")["CPUTime"] == 40000``
    """
    if isinstance(text, dict):
        pairs = list(text.items())
    elif text.strip().startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise PilotError("pilot", f"not JSON: {exc.msg}") from exc
        if not isinstance(data, dict):
            raise PilotError("pilot", "expected a JSON object")
        pairs = list(data.items())
    else:
        pairs = []
        for part in (p for p in text.split(",") if p.strip()):
            if "=" not in part:
                raise PilotError(part.strip(), "expected Field=value")
            k, v = part.split("=", 1)
            pairs.append((k.strip(), v))
    out: dict[str, Any] = {}
    for k, v in pairs:
        name = ALIASES.get(k, k)
        if name not in FIELDS:
            raise PilotError(k, "unknown pilot field; known: " + ", ".join(FIELDS))
        if name in out:
            raise PilotError(k, "given twice")
        out[name] = _value(k, FIELDS[name], v)
    return out


def format_pilot(pilot: dict[str, Any]) -> str:
    """The pilot string of PILOT (inverse of parse_pilot for the string form)."""
    parts = []
    for k, v in pilot.items():
        if isinstance(v, list):
            v = ";".join(v)
        elif isinstance(v, bool):
            v = "true" if v else "false"
        parts.append(f"{k}={v}")
    return ",".join(parts)


def is_any(value: str | None) -> bool:
    """DIRAC's wildcard: a value that reads "any" once punctuation is stripped, in any case."""
    return value is not None and value.translate(str.maketrans("", "", string.punctuation)).lower() == "any"


def normalise(
    pilot: dict[str, Any], masked: bool = False, *, first_processor_tag: int = 2, ram_tags: bool = True
) -> tuple[Resource, str | None]:
    """The resource description the matcher uses, and the request-level refusal if any.

    Auto tags: MaxRAM -> 2GB..<g>GB, NumberOfProcessors -> 2Processors..<n>Processors (none when g or n > 1024;
    MultiProcessor when n > 1), a WholeNode field (whatever its value) -> WholeNode. RequiredTags are kept only when
    the pilot sent some Tags. A MASKED site (outside the site mask)
    may only take Test jobs. DIRAC 9.1.22 (switches dirac_processor_tags_from_one, dirac_ram_not_tags): the processor
    tags start at FIRST_PROCESSOR_TAG 1, and without RAM_TAGS MaxRAM offers no GB tag.
    Usage: ``res, refusal = normalise(parse_pilot("Site=A,CPUTime=100"))``
    """
    notes: list[str] = []
    tags = list(pilot["Tags"]) if pilot.get("Tags") else None
    required = list(pilot.get("RequiredTags", [])) if tags is not None else []
    if pilot.get("RequiredTags") and tags is None:
        notes.append("RequiredTags ignored: the pilot sent no Tags")
    auto: list[str] = []
    ram = pilot.get("MaxRAM")
    if ram_tags and ram and int(ram / RAM_TAG_MB) <= MAX_AUTO_TAGS:
        auto += [f"{i}GB" for i in range(2, int(ram / RAM_TAG_MB) + 1)]
    nproc = pilot.get("NumberOfProcessors")
    if nproc and nproc <= MAX_AUTO_TAGS:
        auto += [f"{i}Processors" for i in range(first_processor_tag, nproc + 1)]
    if nproc and nproc > 1:
        auto.append("MultiProcessor")
    if "WholeNode" in pilot:  # the Matcher tests the key, not its value
        auto.append("WholeNode")
    if auto:
        tags = list(dict.fromkeys([*(tags or []), *auto]))
    job_type = pilot.get("JobType")
    if masked:
        job_type = TEST_JOB_TYPE
        notes.append("site not in the mask: only Test jobs")
    res = Resource(
        given=dict(pilot),
        site=pilot.get("Site") or None,
        grid_ce=pilot.get("GridCE") or None,
        platform=pilot.get("Platform") or None,
        cpu_time=pilot.get("CPUTime"),
        job_type=job_type or None,
        tags=None if tags is None else tuple(tags),
        required_tags=tuple(required),
        owner_groups=tuple(pilot.get("OwnerGroup", [])),
        owner=pilot.get("Owner") or None,
        auto_tags=tuple(auto),
        notes=tuple(notes),
    )
    refusal = None
    if not res.site:
        refusal = MISSING_SITE
    elif res.cpu_time is None:
        refusal = MISSING_CPU
    elif (
        res.required_tags
        and not any(is_any(t) for t in res.required_tags)
        and not set(res.required_tags) <= set(res.tags or ())
    ):
        refusal = WRONG_CONDITIONS
    return res, refusal
