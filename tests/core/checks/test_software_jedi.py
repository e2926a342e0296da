"""PanDA 1.0.4's release/cache checks (switches sw_check_as_jedi, anal_sw_check_as_jedi) against the seed's, one queue each."""

from __future__ import annotations

from typing import Any

from brokerage.checks.software_description import describe
from brokerage.checks.software_match import check_auto_queue
from brokerage.checks.software_request import (
    JEDI_ANALYSIS,
    JEDI_PRODUCTION,
    UNCHECKED,
    jedi_analysis_release,
    jedi_transhome,
    task_software,
)

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


def _anal(architecture: str, row: dict[str, Any], transhome: str = "Athena-24.0.53") -> tuple[Any, Any, Any]:
    """(seed, production broker, analysis broker) outcomes of an analysis task at a queue described by ROW."""
    task = {"architecture": architecture, "transhome": transhome}
    desc = {"cvmfs": ["atlas"], "containers": [], "cmtconfigs": [], "architectures": CPU, "tags": [], **row}
    return tuple(
        check_auto_queue(task_software(task, jedi=mode), describe(dict(desc)))
        for mode in (False, JEDI_PRODUCTION, JEDI_ANALYSIS)
    )


def test_analysis_broker_tags_are_read_only_without_the_repository() -> None:
    """Seed: 'If the above is not the case' a tag with sw_platform, sw_project and sw_version passes; JEDI's
    analysis broker, like the production one, reads the tags only when cvmfs lacks 'atlas': at cvmfs ['atlas'],
    cmtconfigs [x86_64-centos7-gcc11-opt], no containers, the tag of Athena 24.0.53 for x86_64-el9-gcc13-opt does
    not save the queue (-cache, as task 43003 of the random grids), and at cvmfs [] it does."""
    row = {"cmtconfigs": ["x86_64-centos7-gcc11-opt"], "tags": [TAG]}
    seed, _, anal = _anal("x86_64-el9-gcc13-opt", row)
    assert seed.passed and not anal.passed and anal.criteria == "-cache"
    _, _, open_tags = _anal("x86_64-el9-gcc13-opt", {**row, "cvmfs": []})
    assert open_tags.passed


def test_analysis_broker_ignores_the_base_platform() -> None:
    """JEDI's analysis broker calls JsonSoftwareCheck without need_container: a task x86_64-el9-gcc13-opt@el9 passes
    through the cmtconfigs route (cvmfs 'atlas', cmtconfigs holding x86_64-el9-gcc13-opt, no containers) where the
    production broker (need_container for a base platform) fails it, and through the tag route when cvmfs lacks
    'atlas' and the containers lack 'any'."""
    _, prod, anal = _anal("x86_64-el9-gcc13-opt@el9", {"cmtconfigs": ["x86_64-el9-gcc13-opt"]})
    assert not prod.passed and anal.passed
    _, prod2, anal2 = _anal("x86_64-el9-gcc13-opt@el9", {"cvmfs": [], "tags": [TAG]})
    assert not prod2.passed and anal2.passed


def test_analysis_broker_resolves_the_regexp_after_the_release() -> None:
    """JEDI's analysis broker has the production broker's order: (x86_64|aarch64)-el9-gcc13-opt as written is in no
    cmtconfigs list, so a queue without 'any' or '/cvmfs' in its containers fails -cache (the seed says
    -regexpcmtconfig); with '/cvmfs' the alternation resolves with the queue's CPU x86_64."""
    seed, _, anal = _anal("(x86_64|aarch64)-el9-gcc13-opt", {"cmtconfigs": ["x86_64-el7"]})
    assert seed.criteria == "-regexpcmtconfig" and anal.criteria == "-cache"
    _, _, ok = _anal("(x86_64|aarch64)-el9-gcc13-opt", {"containers": ["/cvmfs"]})
    assert ok.passed and ok.resolved == "x86_64-el9-gcc13-opt"


def test_analysis_transhome_as_jedi_reads_it() -> None:
    """JEDI strips 'AnalysisTransforms-' and reads '_' as '-': Athena-24.0.53 (stored AnalysisTransforms-Athena_24.0.53)
    is the release Athena 24.0.53 with the atlas repository, AthDerivation-21.2.2.0 a cache, a time stamp a nightly
    (no project or version), Ath-Foo-1.2.3 a base release JEDI cannot split (no queue), and '' no release."""
    assert jedi_transhome("Athena-24.0.53") == "AnalysisTransforms-Athena_24.0.53"
    rel = jedi_analysis_release("Athena-24.0.53")
    assert rel is not None and (rel.kind, rel.project, rel.version, rel.cvmfs) == (
        "release",
        "Athena",
        "24.0.53",
        "atlas",
    )
    cache = jedi_analysis_release("AthDerivation-21.2.2.0")
    assert cache is not None and (cache.kind, cache.project, cache.version) == ("cache", "AthDerivation", "21.2.2.0")
    night = jedi_analysis_release("Athena-2024-05-01T0200")
    assert night is not None and (night.kind, night.cvmfs, night.project) == ("nightly", "nightlies", "")
    odd = jedi_analysis_release("Ath-Foo-1.2.3")
    assert odd is not None and odd.kind == UNCHECKED
    assert jedi_analysis_release("") is None


def test_analysis_nightly_needs_the_nightlies_repository() -> None:
    """JEDI's analysis broker checks nightlies with need_cvmfs: a queue whose cvmfs lacks 'nightlies' fails even with
    '/cvmfs' in its containers; with 'nightlies' and '/cvmfs' it passes."""
    stamp = "Athena-2024-05-01T0200"
    _, _, no = _anal("x86_64-el9-gcc13-opt", {"containers": ["/cvmfs"]}, stamp)
    assert not no.passed and no.criteria == "-cache"
    _, _, yes = _anal("x86_64-el9-gcc13-opt", {"containers": ["/cvmfs"], "cvmfs": ["nightlies"]}, stamp)
    assert yes.passed
