"""PanDA 1.0.4's release/cache check (switch sw_check_as_jedi) against the seed's, one queue description each."""

from __future__ import annotations

from typing import Any

from brokerage.checks.software_description import describe
from brokerage.checks.software_match import check_auto_queue
from brokerage.checks.software_request import task_software

CPU = [{"type": "cpu", "arch": ["x86_64"], "vendor": ["any"], "instr": ["any"]}]
TAG = {"cmtconfig": "x86_64-el9-gcc13-opt", "project": "Athena", "release": "24.0.53", "container_name": "",
       "sources": []}  # fmt: skip


def _both(architecture: str, row: dict[str, Any]) -> tuple[Any, Any]:
    """(seed outcome, PanDA 1.0.4 outcome) of task Athena-24.0.53 with ARCHITECTURE at a queue described by ROW."""
    task = {"architecture": architecture, "transhome": "Athena-24.0.53"}
    desc = {"cvmfs": ["atlas"], "containers": [], "cmtconfigs": [], "architectures": CPU, "tags": [], **row}
    return check_auto_queue(task_software(task), describe(desc)), check_auto_queue(
        task_software(task, jedi=True), describe(dict(desc))
    )


def test_cmtconfig_route_needs_a_task_without_base_platform() -> None:
    """Seed: with cvmfs 'atlas', 'the task sw_platform ... must be included in the cmtconfigs list'; JEDI passes
    that route only when need_container is off (no base platform): x86_64-el9-gcc13-opt@el9 fails there (-cache)."""
    seed, jedi = _both("x86_64-el9-gcc13-opt@el9", {"cmtconfigs": ["x86_64-el9-gcc13-opt"]})
    assert seed.passed and not jedi.passed and jedi.criteria == "-cache"
    _, plain = _both("x86_64-el9-gcc13-opt", {"cmtconfigs": ["x86_64-el9-gcc13-opt"]})
    assert plain.passed


def test_tags_are_read_only_when_cvmfs_lacks_the_repository() -> None:
    """Seed: 'if the above is not the case' a matching tag passes; JEDI reads the tags only in the branch where
    the cvmfs list lacks the repository (need_cvmfs is off), so with cvmfs ['atlas'] a tag alone does not pass."""
    seed, jedi = _both("x86_64-el9-gcc13-opt", {"tags": [TAG]})
    assert seed.passed and not jedi.passed
    seed2, jedi2 = _both("x86_64-el9-gcc13-opt", {"tags": [TAG], "cvmfs": []})
    assert seed2.passed and jedi2.passed


def test_architecture_alternation_resolves_with_the_queue_cpu() -> None:
    """JEDI's resolve_cmt_config: no cmtconfig matches (x86_64|aarch64)-el9-gcc13-opt, but its leading alternation
    resolves with the queue's CPU architecture x86_64 to x86_64-el9-gcc13-opt; the seed resolves only against the
    cmtconfigs list (-regexpcmtconfig)."""
    seed, jedi = _both("(x86_64|aarch64)-el9-gcc13-opt", {"containers": ["/cvmfs"], "cmtconfigs": ["x86_64-el7"]})
    assert not seed.passed and seed.criteria == "-regexpcmtconfig"
    assert jedi.passed and jedi.resolved == "x86_64-el9-gcc13-opt"


def test_release_is_checked_before_the_regexp_is_resolved() -> None:
    """JEDI's order: the JsonSoftwareCheck (release with sw_platform as written) comes before the resolution, so a
    queue without 'any' or '/cvmfs' in its containers fails -cache; the seed resolves first (-regexpcmtconfig)."""
    seed, jedi = _both("(x86_64|aarch64)-el9-gcc13-opt", {"cmtconfigs": ["x86_64-el7"]})
    assert seed.criteria == "-regexpcmtconfig" and jedi.criteria == "-cache"
