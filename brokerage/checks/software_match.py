"""The software check of one queue: release/cache/nightly availability for an explicit releases list or for
the queue's published software (releases=AUTO), after the regex cmtconfig, hardware and container checks."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from brokerage.checks.software_container import CVMFS_CONTAINERS, container_rejection, container_sources
from brokerage.checks.software_description import Outcome, SoftwareDescription, describe
from brokerage.checks.software_hardware import hardware_rejection
from brokerage.checks.software_request import JEDI_ANALYSIS, UNCHECKED, Release, TaskSoftware
from brokerage.model.architecture import WILDCARD

CACHE = "-cache"
REGEXP_CMTCONFIG = "-regexpcmtconfig"

RELEASES_ANY = "ANY"  # CRIC releases=['ANY']: the queue is not checked
RELEASES_AUTO = "AUTO"  # CRIC releases=['AUTO']: the queue's published JSON decides


PASS = Outcome(True)
PASS_ANY = Outcome(True, reason=f"releases={RELEASES_ANY}: not checked")
NO_DESCRIPTION = Outcome(
    False, CACHE, f"releases={RELEASES_AUTO} but the queue publishes no software description (no queue_software row)"
)


def _fail(reason: str, criteria: str = CACHE) -> Outcome:
    return Outcome(False, criteria, reason)


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


def jedi_release_rejection(
    release: Release, sw_platform: str, base_platform: str, desc: SoftwareDescription
) -> str | None:
    """PanDA 1.0.4's release test (JsonSoftwareCheck, switch ``sw_check_as_jedi``): with the cvmfs repository the
    queue needs 'any' or '/cvmfs' in its containers, or the sw_platform in its cmtconfigs when the task names no
    base platform; the tags are read only when the queue lacks the repository. SW_PLATFORM is the task's as written
    (a regexp is not resolved here)."""
    containers_ok = WILDCARD in desc.containers or CVMFS_CONTAINERS in desc.containers
    if WILDCARD in desc.cvmfs or release.cvmfs in desc.cvmfs:
        if containers_ok or (not base_platform and sw_platform in desc.cmtconfigs):
            return None
        if base_platform:
            return f"base platform {base_platform} needs 'any' or '/cvmfs' in containers"
        return f"cmtconfig {sw_platform or '(none)'} not in cmtconfigs and containers lack 'any' and '/cvmfs'"
    tag_ok = (sw_platform, release.project, release.version) in desc.tag_keys
    if (WILDCARD in desc.containers or not base_platform) and tag_ok:
        return None
    if not tag_ok:
        return f"cvmfs lacks '{release.cvmfs}' and no tag {release.project} {release.version} for {sw_platform or '(none)'}"
    return f"cvmfs lacks '{release.cvmfs}'; base platform {base_platform} needs 'any' in containers to use the tag"


def jedi_analysis_release_rejection(release: Release, sw_platform: str, desc: SoftwareDescription) -> str | None:
    """PanDA 1.0.4's analysis broker release test (switch ``anal_sw_check_as_jedi``): JsonSoftwareCheck without
    need_container (a base platform changes nothing); a nightly needs the nightlies repository (need_cvmfs: the
    tags are never read); a release name JEDI cannot split in two checks no queue."""
    if release.kind == UNCHECKED:
        return "a base release not named project-X.Y.Z: JEDI's analysis broker finds it at no queue"
    if release.kind == "nightly" and not (WILDCARD in desc.cvmfs or release.cvmfs in desc.cvmfs):
        return f"cvmfs {sorted(desc.cvmfs)} has neither 'any' nor '{release.cvmfs}' (needed for nightlies)"
    return jedi_release_rejection(release, sw_platform, "", desc)


ARCH_ALTERNATION = re.compile(r"^\(([A-Za-z0-9_.+-]+(?:\|[A-Za-z0-9_.+-]+)*)\)([A-Za-z0-9_.+-]+)$")


def jedi_resolve(sw_platform: str, desc: SoftwareDescription) -> str:
    """PanDA 1.0.4's resolve_cmt_config: the first cmtconfig the regexp matches, else a leading architecture
    alternation '(a|b)-rest' resolved with the queue's CPU architectures ('any' or a listed one); '' when none."""
    pattern = re.compile(sw_platform)
    for c in desc.cmtconfigs:
        if pattern.fullmatch(c):
            return c
    m = ARCH_ALTERNATION.search(sw_platform)
    archs = [a for entry in desc.cpu for a in entry.get("arch", ())]
    if m and archs:
        for a in m.group(1).split("|"):
            if WILDCARD in archs or a in archs:
                return a + m.group(2)
    return ""


def jedi_auto_queue(task: TaskSoftware, desc: SoftwareDescription, all_sources: tuple[str, ...] = ()) -> Outcome:
    """PanDA 1.0.4's order (switch ``sw_check_as_jedi``): hardware, then container or release with the task's
    sw_platform as written, then (regexp sw_platform) the resolution; a queue failing the first steps is -cache."""
    arch = task.architecture
    why = hardware_rejection(arch, desc)
    if why:
        return _fail(why)
    if task.container_name:
        why = container_rejection(task.container_name, task.only_tags_for_fc, desc, all_sources)
    elif task.release is not None and task.jedi == JEDI_ANALYSIS:
        why = jedi_analysis_release_rejection(task.release, arch.sw_platform, desc)
        why = f"release {task.release.transhome}: {why}" if why else None
    elif task.release is not None:
        why = jedi_release_rejection(task.release, arch.sw_platform, arch.base_platform, desc)
        why = f"release {task.release.transhome}: {why}" if why else None
    if why:
        return _fail(why)
    if not arch.sw_platform_is_regex:
        return PASS
    resolved = jedi_resolve(arch.sw_platform, desc)
    if not resolved:
        return _fail(f"unresolved regexp in cmtconfig={arch.sw_platform}", REGEXP_CMTCONFIG)
    return Outcome(True, resolved=resolved)


def check_auto_queue(task: TaskSoftware, desc: SoftwareDescription, all_sources: tuple[str, ...] = ()) -> Outcome:
    """The releases=AUTO check of one queue: regex cmtconfig, hardware, fat container, then release.

    Usage: ``check_auto_queue(task_software(task), describe(row))``
    """
    if task.jedi:
        return jedi_auto_queue(task, desc, all_sources)
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
    return check_auto_queue(task, describe(desc), container_sources(task, all_desc))
