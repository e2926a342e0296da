"""Scalar reference of the seed's software checks, one queue at a time, written to read like the seed.

The seed is ``shared/seeds/000_f8f78ef8e3a9ac50.txt``, sections "Release/cache Availability Check for
releases=AUTO", "Checks for CPU and/or GPU Hardware", "Checks for Fat Containers" and "Checks for Releases,
Caches, or Nightlies". This module never calls ``brokerage.checks.software``: it parses the task's strings
itself and walks the seed's sentences in order. Where the seed is silent it takes the decisions written
down in ``docs/software.md`` (each is marked "docs:" where it is used).

It expects well-formed task strings (the vectorised module's parser owns the error messages).
Usage: ``passed, criteria, reason = check(task, "AGLT2", ["AUTO"], software)``
"""

from __future__ import annotations

import re
from typing import Any

REGEXP_METACHARACTERS = "*+?|()[]{}^$\\"  # docs: sw_platform / arch is a regexp if it holds one of these


# --- reading the task ------------------------------------------------------------------------------


def split_outside_brackets(text: str, separator: str) -> list[str]:
    """Split at SEPARATOR, but not inside (...) / [...] / {...} of a regexp."""
    pieces = []
    current = ""
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == separator and depth == 0:
            pieces.append(current)
            current = ""
        else:
            current += ch
    pieces.append(current)
    return pieces


def read_architecture(architecture: str) -> dict[str, Any]:
    """'sw_platform<@base_platform><#host_cpu_spec><&host_gpu_spec>' as a dict of its parts."""
    host_gpu_spec = None
    host_cpu_spec = None
    base_platform = ""
    if "&" in architecture:
        architecture, host_gpu_spec = architecture.split("&")
    if "#" in architecture:
        architecture, host_cpu_spec = architecture.split("#")
    if "@" in architecture:
        architecture, base_platform = architecture.split("@")
    sw_platform = architecture

    def given(value: str) -> str | None:
        # docs: '*' and 'any' in the task mean "not specified"
        return None if value in ("", "*", "any") else value

    cpu: dict[str, str | None] = {"arch": None, "vendor": None, "instr": None}
    if host_cpu_spec is not None:
        # host_cpu_spec is architecture<-vendor<-instruction_set>>
        parts = [*split_outside_brackets(host_cpu_spec, "-"), "", ""]
        cpu = {"arch": given(parts[0]), "vendor": given(parts[1]), "instr": given(parts[2])}
    elif sw_platform:
        # "If #host_cpu_spec is not specified in task's architecture, the first part of sw_platform is used"
        cpu["arch"] = given(split_outside_brackets(sw_platform, "-")[0])
    gpu: dict[str, str | None] = {"vendor": None, "model": None}
    if host_gpu_spec is not None:
        # host_gpu_spec is vendor<-model>
        parts = [*host_gpu_spec.split("-"), ""]
        gpu = {"vendor": given(parts[0]), "model": given(parts[1])}
    return {
        "sw_platform": sw_platform,
        "base_platform": base_platform,
        "cpu": cpu,
        "gpu": gpu,
        "gpu_requested": host_gpu_spec is not None,
    }


def read_release(transhome: str) -> dict[str, str] | None:
    """transHome as sw_project, sw_version and the cvmfs_tag it needs (None when the task has no release)."""
    if not transhome:
        return None
    text = transhome
    if text.startswith("AnalysisTransforms-"):  # docs: analysis prefix, then project_version
        text = text[len("AnalysisTransforms-") :].replace("_", "-", 1)
    if "-" in text:
        sw_project, sw_version = text.split("-", 1)
    elif "_" in text:
        sw_project, sw_version = text.split("_", 1)
    else:
        sw_project, sw_version = "", text
    is_nightly = sw_version.startswith("rel_") or re.search(r"\d\d\d\d-\d\d-\d\dT\d\d\d\d", sw_version) is not None
    # "cvmfs_tag is atlas for standard releases and caches or nightlies for nightlies"
    cvmfs_tag = "nightlies" if is_nightly else "atlas"
    return {"transhome": transhome, "sw_project": sw_project, "sw_version": sw_version, "cvmfs_tag": cvmfs_tag}


def is_regexp(text: str) -> bool:
    return any(ch in REGEXP_METACHARACTERS for ch in text)


def as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


# --- "Checks for CPU and/or GPU Hardware" ------------------------------------------------------------


def attribute_accepts(queue_list: list[str], task_value: str | None, allow_regexp: bool) -> bool:
    """One attribute of a queue dictionary (a list of strings) against the task's value."""
    # "If 'excl' is included in the list, the queue accepts only tasks with attribute='blah'."
    if task_value is None:
        return "excl" not in queue_list
    # "If 'attribute': ['blah'], the queue accepts tasks with attribute='blah' or without specifying it."
    blahs = [v for v in queue_list if v != "excl"]
    if len(blahs) == 0:
        return True  # docs: nothing listed = no restriction on the value
    for blah in blahs:
        if blah == "" or blah.lower() == "any":
            return True  # seed: 'tasks with #x86_64 are accepted by "arch": [""]'; docs: 'any' likewise
        if allow_regexp and is_regexp(task_value):
            if re.fullmatch(task_value, blah, re.IGNORECASE):
                return True
        elif task_value.lower() == blah.lower():  # docs: hardware names compare case-insensitively
            return True
    return False


def dictionary_accepts(dictionary: dict[str, Any], task_spec: dict[str, str | None], hardware: str) -> str | None:
    """Why one cpu/gpu dictionary of the queue rejects the task (None = accepted)."""
    # "All attributes of the dictionaries except for the type attribute take lists of strings."
    for attribute, value in dictionary.items():
        if attribute == "type" or value is None:
            continue
        queue_list = as_list(value)
        task_value = task_spec.get(attribute)
        # "It is possible to use regexp in the architecture field of host_cpu_spec"
        allow_regexp = hardware == "CPU" and attribute == "arch"
        if not attribute_accepts(queue_list, task_value, allow_regexp):
            return f"{hardware} {attribute} {task_value} rejected by queue {attribute} {queue_list}"
    return None


def hardware_check(arch: dict[str, Any], queue_json: dict[str, Any]) -> str | None:
    """The architectures of the queue against the task's host_cpu_spec and host_gpu_spec."""
    architectures = queue_json.get("architectures") or []
    if isinstance(architectures, dict):
        architectures = [architectures]
    cpu_dicts = [d for d in architectures if isinstance(d, dict) and str(d.get("type", "")).lower() == "cpu"]
    gpu_dicts = [d for d in architectures if isinstance(d, dict) and str(d.get("type", "")).lower() == "gpu"]
    # docs: no cpu dictionary = any CPU; several dictionaries of a type = any one of them may accept
    if cpu_dicts:
        reasons = [dictionary_accepts(d, arch["cpu"], "CPU") for d in cpu_dicts]
        if None not in reasons:
            return reasons[0]
    # docs: a GPU request needs a gpu dictionary
    if arch["gpu_requested"] and not gpu_dicts:
        return "GPU requested but no gpu dictionary"
    if gpu_dicts:
        reasons = [dictionary_accepts(d, arch["gpu"], "GPU") for d in gpu_dicts]
        if None not in reasons:
            return reasons[0]
    return None


# --- "Checks for Fat Containers" ----------------------------------------------------------------------


def fat_container_check(
    container_name: str, only_tags_for_fc: bool, queue_json: dict[str, Any], all_json: dict[str, Any] | None
) -> str | None:
    tags = queue_json.get("tags") or []
    containers = as_list(queue_json.get("containers"))
    # "If the task uses only tags, i.e., it sets onlyTagsForFC,"
    if only_tags_for_fc:
        for tag in tags:
            # "the container_name must be equal to the container_name of a tag in the tags list"
            if tag.get("container_name") and container_name == tag.get("container_name"):
                return None
            # "or must be included in the sources of a tag in the tags list"
            if container_name in as_list(tag.get("sources")):
                return None
        return f"container {container_name} not among the tags (onlyTagsForFC)"
    # "'any' or '/cvmfs' must be included in the containers list, or"
    if "any" in containers or "/cvmfs" in containers:
        return None
    # "container_name must be forward-matched with one of the strings in the containers list, or"
    for entry in containers:
        if entry and container_name.startswith(entry):
            return None
    # "container_name is resolved to the source path using the dictionary of the 'ALL' queue, and the
    # resolved source path must be forward-matched with one of the strings in the containers list"
    if all_json is not None:
        for tag in all_json.get("tags") or []:
            if tag.get("container_name") and tag.get("container_name") == container_name:
                for source_path in as_list(tag.get("sources")):
                    for entry in containers:
                        if entry and source_path and source_path.startswith(entry):
                            return None
    return f"container {container_name} not in containers and not resolvable via ALL"


# --- "Checks for Releases, Caches, or Nightlies" -------------------------------------------------------


def release_check(release: dict[str, str], sw_platform: str, base_platform: str, queue_json: dict[str, Any]) -> bool:
    cvmfs = as_list(queue_json.get("cvmfs"))
    containers = as_list(queue_json.get("containers"))
    cmtconfigs = as_list(queue_json.get("cmtconfigs"))
    # "'any' or cvmfs_tag must be included in the cvmfs list"
    if "any" in cvmfs or release["cvmfs_tag"] in cvmfs:
        # "In addition, 'any' or '/cvmfs' must be included in the containers list"
        if "any" in containers or "/cvmfs" in containers:
            return True
        # "or the task sw_platform is extracted from the task architecture and must be included in the cmtconfigs list"
        if sw_platform in cmtconfigs:
            return True
    # "If the above is not the case, 'any' must be in the containers list or base_platform ... must be empty"
    if "any" in containers or base_platform == "":
        # "and the task sw_platform, sw_project, and sw_version must be equal to cmtconfig, project, and release
        # of a tag in the tags list"
        for tag in queue_json.get("tags") or []:
            if (
                tag.get("cmtconfig") == sw_platform
                and tag.get("project") == release["sw_project"]
                and tag.get("release") == release["sw_version"]
            ):
                return True
    return False


# --- one queue -----------------------------------------------------------------------------------------


def check(
    task: dict[str, Any], queue_name: str, releases: list[str], software: dict[str, Any]
) -> tuple[bool, str, str]:
    """(passed, criteria code or '', reason) of the software check of one queue."""
    architecture = read_architecture((task.get("architecture") or "").strip())
    release = read_release((task.get("transhome") or "").strip())
    container_name = (task.get("container_name") or "").strip()
    only_tags_for_fc = bool(task.get("onlytagsforfc"))

    # docs: releases=['ANY'] skips the check
    if "ANY" in releases:
        return True, "", ""
    # docs: an explicit releases list must name the task's release (as written, or project-version)
    if "AUTO" not in releases:
        if release is None:
            return True, "", ""
        names = [release["transhome"], f"{release['sw_project']}-{release['sw_version']}"]
        if any(name in releases for name in names):
            return True, "", ""
        return False, "-cache", f"{release['transhome']} not in releases"
    # "Release/cache Availability Check for releases=AUTO": the queue publishes its JSON
    queue_json = software.get(queue_name)
    if queue_json is None:
        return False, "-cache", "AUTO queue without published software"
    all_json = software.get("ALL")

    # "The regexp in sw_platform is resolved to a relevant string in the cmtconfigs list of the queue."
    sw_platforms = [architecture["sw_platform"]]
    if is_regexp(architecture["sw_platform"]):
        sw_platforms = [
            c for c in as_list(queue_json.get("cmtconfigs")) if re.fullmatch(architecture["sw_platform"], c)
        ]
        if not sw_platforms:
            return False, "-regexpcmtconfig", f"regexp {architecture['sw_platform']} matches no cmtconfig"

    why = hardware_check(architecture, queue_json)
    if why is not None:
        return False, "-cache", why

    # "If the task uses a container, i.e., the container_name attribute is set"
    # docs: the release lives in the fat container, so the release rules are not asked
    if container_name:
        why = fat_container_check(container_name, only_tags_for_fc, queue_json, all_json)
        if why is not None:
            return False, "-cache", why
        return True, "", ""

    # docs: no transHome = only the hardware / container / cmtconfig checks
    if release is None:
        return True, "", ""

    for sw_platform in sw_platforms:
        if release_check(release, sw_platform, architecture["base_platform"], queue_json):
            return True, "", ""
    return False, "-cache", f"no {release['transhome']} for {sw_platforms}"
