"""What a task asks of a queue's software: its transHome classified as release, cache or nightly, its
architecture and its fat container."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from brokerage.model.architecture import TaskArchitecture, parse_architecture

CVMFS_RELEASES = "atlas"  # "cvmfs_tag is atlas for standard releases and caches"
CVMFS_NIGHTLIES = "nightlies"  # "... or nightlies for nightlies"
ANALYSIS_TRANSFORMS = "AnalysisTransforms-"  # analysis transHome prefix in front of project_version
JEDI_PRODUCTION = "production"  # PanDA 1.0.4's production broker (switch sw_check_as_jedi)
JEDI_ANALYSIS = "analysis"  # PanDA 1.0.4's analysis broker (switch anal_sw_check_as_jedi)
UNCHECKED = "unchecked"  # a kind no queue publishes: JEDI's analysis broker checks no AUTO queue for it

_NIGHTLY_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{4}")
_BASE_RELEASE = re.compile(r"\d+\.\d+\.\d+")
_TRANSFORMS = ANALYSIS_TRANSFORMS.rstrip("-")
_JEDI_NIGHTLY = re.compile(r"rel_\d+(\n|$)")
_JEDI_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{4}$")
_JEDI_BASE = re.compile(r"-\d+\.\d+\.\d+$")


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


def jedi_transhome(transhome: str) -> str:
    """An analysis task's transHome as JEDI stores it: ``AnalysisTransforms-<project>_<version>`` (a value already
    in that form is kept). Usage: ``jedi_transhome("Athena-24.0.53") == "AnalysisTransforms-Athena_24.0.53"``"""
    if not transhome or transhome.startswith(_TRANSFORMS):
        return transhome
    return f"{ANALYSIS_TRANSFORMS}{transhome.replace('-', '_', 1)}"


@lru_cache(maxsize=4096)
def jedi_analysis_release(transhome: str) -> Release | None:
    """PanDA 1.0.4's analysis broker reading of a transHome (without transUses, which the snapshot does not
    carry): the first ``word-`` stripped, then every ``_`` read as ``-``; a release ``P-X.Y.Z`` and a cache are checked
    with the atlas repository, a time stamp (or a bare ``AnalysisTransforms``) as a nightly (no project or version;
    JEDI's ``rel_N`` test never matches once ``_`` reads as ``-``), ``None`` (no transHome): only the platform,
    hardware and container. A release whose name is not two parts checks no queue (UNCHECKED).

    Usage: ``jedi_analysis_release("Athena-24.0.53").kind == "release"``
    """
    text = jedi_transhome((transhome or "").strip())
    if not text:
        return None
    body = re.sub("^[^-]+-*", "", text).replace("_", "-")
    parts = body.split("-")
    project, version = parts[0], parts[1] if len(parts) > 1 else ""
    if _JEDI_BASE.search(body):
        kind = "release" if len(parts) == 2 else UNCHECKED
        return Release(text, project, version, CVMFS_RELEASES, kind)
    if _JEDI_NIGHTLY.search(body) is None and text != _TRANSFORMS and not _JEDI_STAMP.search(body):
        return Release(text, project, version, CVMFS_RELEASES, "cache")
    return Release(text, "", "", CVMFS_NIGHTLIES, "nightly")


@dataclass(frozen=True)
class TaskSoftware:
    """What a task asks of a queue's software: architecture, release, fat container."""

    architecture: TaskArchitecture
    release: Release | None
    container_name: str
    only_tags_for_fc: bool
    jedi: str = ""  # PanDA 1.0.4's JsonSoftwareCheck of this broker (JEDI_PRODUCTION, JEDI_ANALYSIS), '' for the seed


def clean_text(value: Any) -> str:
    """A table value as stripped text ('' for None and NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


@lru_cache(maxsize=4096)
def _task_software(architecture: str, transhome: str, container: str, only_tags: bool, jedi: str) -> TaskSoftware:
    release = jedi_analysis_release(transhome) if jedi == JEDI_ANALYSIS else classify_release(transhome)
    return TaskSoftware(parse_architecture(architecture), release, container, only_tags, jedi)


def task_software(task: Mapping[str, Any], jedi: bool | str = False) -> TaskSoftware:
    """The software request of a task row (columns architecture, transhome, container_name, onlytagsforfc);
    JEDI: checked with PanDA 1.0.4's rules of that broker (True: the production broker's, switch
    ``sw_check_as_jedi``; JEDI_ANALYSIS: the analysis broker's, switch ``anal_sw_check_as_jedi``).

    Usage: ``task_software({"architecture": "x86_64-el9-gcc13-opt", "transhome": "Athena-22.0.41"})``
    """
    only = task.get("onlytagsforfc")
    only_tags = bool(only) and not (isinstance(only, float) and math.isnan(only))
    return _task_software(
        clean_text(task.get("architecture")),
        clean_text(task.get("transhome")),
        clean_text(task.get("container_name")),
        only_tags,
        JEDI_PRODUCTION if jedi is True else str(jedi or ""),
    )
