"""Release, cache, architecture and fat-container matching: seed rules, parser, and agreement with the reference."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from brokerage.checks import software as sw
from brokerage.checks import software_plan
from brokerage.checks.software import resolved_cmtconfig, software_verdict
from brokerage.checks.software_description import build_software_index, describe, software_index
from brokerage.checks.software_request import classify_release
from brokerage.model.architecture import ArchitectureError
from brokerage.model.cache import GridCache
from tests.builders import anal_queue, anal_task, grid, queue, task
from tests.core.checks.helpers import PLATFORM, codes, run
from tests.reference import software_reference as ref

# The seed's example, verbatim ("Release/cache Availability Check for releases=AUTO").
AGLT2_JSON = """
{
"AGLT2": {
  "cmtconfigs": [
    "x86_64-centos7-gcc62-opt",
    "x86_64-centos7-gcc8-opt",
    "x86_64-slc6-gcc49-opt",
    "x86_64-slc6-gcc62-opt",
    "x86_64-slc6-gcc8-opt"
  ],
  "containers": [
    "any",
    "/cvmfs"
  ],
  "cvmfs": [
    "atlas",
    "nightlies"
  ],
  "architectures": [
    {
      "arch": ["x86_64"],
      "instr": ["avx2"],
      "type": "cpu",
      "vendor": ["intel","excl"]
    },
    {
      "type": "gpu",
      "vendor": ["nvidia","excl"],
      "model":["kt100"]
    }
  ],
  "tags": [
    {
      "cmtconfig": "x86_64-slc6-gcc62-opt",
      "container_name": "",
      "project": "AthDerivation",
      "release": "21.2.2.0",
      "sources": [],
      "tag": "VO-atlas-AthDerivation-21.2.2.0-x86_64-slc6-gcc62-opt"
    },
    {
      "cmtconfig": "x86_64-slc6-gcc62-opt",
      "container_name": "",
      "project": "Athena",
      "release": "21.0.38",
      "sources": [],
      "tag": "VO-atlas-Athena-21.0.38-x86_64-slc6-gcc62-opt"
    }
  ]
}
}
"""


@pytest.fixture
def aglt2() -> dict[str, Any]:
    """The seed's AGLT2 software description."""
    return json.loads(AGLT2_JSON)["AGLT2"]


def one(
    task_row: dict[str, Any],
    row: dict[str, Any] | None,
    releases: list[str] | None = None,
    all_row: dict[str, Any] | None = None,
) -> tuple[bool, str, str, str]:
    """(passed, criteria, reason, resolved) of software_verdict for a single queue Q."""
    software: dict[str, Any] = {} if row is None else {"Q": row}
    if all_row is not None:
        software["ALL"] = all_row
    v = software_verdict(task_row, np.array(["Q"], dtype=object), [releases or ["AUTO"]], software)
    idx = np.array([0])
    return bool(v.passed[0]), v.codes(idx)[0], v.texts(idx)[0], str(v.resolved[0])


def desc(**kw: Any) -> dict[str, Any]:
    """A queue software description; keyword arguments override the (empty) columns."""
    row: dict[str, Any] = {"cmtconfigs": [], "containers": [], "cvmfs": [], "architectures": [], "tags": []}
    row.update(kw)
    return row


def tag(cmtconfig: str, project: str, release: str, container_name: str = "", sources: list[str] | None = None) -> dict:
    """A tags entry."""
    return {
        "cmtconfig": cmtconfig,
        "container_name": container_name,
        "project": project,
        "release": release,
        "sources": sources or [],
        "tag": f"VO-atlas-{project}-{release}-{cmtconfig}",
    }


def cpu(**attrs: list[str]) -> dict[str, Any]:
    """A cpu architectures entry."""
    return {"type": "cpu", **attrs}


def gpu(**attrs: list[str]) -> dict[str, Any]:
    """A gpu architectures entry."""
    return {"type": "gpu", **attrs}


EL9 = "x86_64-el9-gcc13-opt"
ATHENA = "Athena-22.0.41"
FC = "/cvmfs/unpacked.cern.ch/registry.hub.docker.com/atlas/athena:22.0.41"

# --- the seed's AGLT2 example --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("architecture", "transhome", "passed", "fragment"),
    [
        # AGLT2's cpu vendor is ['intel','excl']: only tasks that ask for an intel CPU are accepted.
        ("x86_64-slc6-gcc62-opt", "AthDerivation-21.2.2.0", False, "CPU vendor not specified"),
        # AGLT2's gpu vendor is ['nvidia','excl']: a CPU-only task is turned away even with intel.
        ("x86_64-slc6-gcc62-opt#x86_64-intel", "AthDerivation-21.2.2.0", False, "GPU vendor not specified"),
        # intel CPU + nvidia kt100 GPU, cvmfs atlas and containers 'any': the release is available.
        ("x86_64-slc6-gcc62-opt#x86_64-intel-avx2&nvidia-kt100", "AthDerivation-21.2.2.0", True, ""),
        # a model not listed (and no '' / 'any') is rejected even though 'excl' is absent from model.
        ("x86_64-slc6-gcc62-opt#x86_64-intel&nvidia-a100", "Athena-21.0.38", False, "GPU model a100 rejected"),
        # an amd vendor is not in ['intel','excl'].
        ("x86_64-slc6-gcc62-opt#x86_64-amd&nvidia", "Athena-21.0.38", False, "CPU vendor amd rejected"),
        # nightlies are published in cvmfs, and containers hold '/cvmfs'.
        ("x86_64-centos7-gcc8-opt#x86_64-intel&nvidia", "Athena-rel_3", True, ""),
        # an aarch64 CPU is rejected by arch ['x86_64'].
        ("#aarch64-intel&nvidia", "", False, "CPU arch aarch64 rejected"),
    ],
    ids=[
        "-cache:cpu-vendor-unspecified",
        "-cache:gpu-vendor-unspecified",
        "-cache:intel-avx2-nvidia-kt100",
        "-cache:gpu-model-a100",
        "-cache:cpu-vendor-amd",
        "-cache:nightly",
        "-cache:cpu-arch-aarch64",
    ],
)
def test_aglt2_example(aglt2: dict[str, Any], architecture: str, transhome: str, passed: bool, fragment: str) -> None:
    """The seed's AGLT2 description judged against tasks of every kind."""
    ok, code, reason, _ = one({"architecture": architecture, "transhome": transhome}, aglt2)
    assert ok is passed, reason
    if not passed:
        assert code == "-cache"
        assert fragment in reason


def test_aglt2_regexp_resolves_to_published_cmtconfig(aglt2: dict[str, Any]) -> None:
    """A regex sw_platform is resolved to a string of AGLT2's cmtconfigs and reported."""
    t = {"architecture": "x86_64-centos7-.*#x86_64-intel&nvidia", "transhome": "Athena-22.0.41"}
    ok, _, _, resolved = one(t, aglt2)
    assert ok
    assert resolved == "x86_64-centos7-gcc62-opt"


# --- the seed's hardware example ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arch_list", "passed"),
    [
        (["x86_64"], True),
        ([""], True),
        (["x86_64", "excl"], True),
        (["arm64"], False),
    ],
    ids=["-cache:arch-x86_64", "-cache:arch-empty", "-cache:arch-x86_64-excl", "-cache:arch-arm64"],
)
def test_seed_hardware_example(arch_list: list[str], passed: bool) -> None:
    """Seed: tasks with #x86_64 are accepted by arch ["x86_64"], [""], ["x86_64","excl"] but not by ["arm64"]."""
    ok, code, reason, _ = one({"architecture": "#x86_64"}, desc(architectures=[cpu(arch=arch_list)]))
    assert ok is passed
    if not passed:
        assert code == "-cache"
        assert reason == "CPU arch x86_64 rejected: queue arch ['arm64']"


# --- one table per rule, both outcomes ------------------------------------------------------------------

RULE_CASES = [
    # (id, rule sentence, task, queue description or None, releases, all row, passed, code, reason fragment)
    # releases handling
    ("any_skips", "releases=ANY skips the check, whatever the task asks.",
     {"architecture": "&amd", "transhome": ATHENA}, None, ["ANY"], None, True, "", ""),
    ("any_wins_over_auto", "ANY in the list wins over AUTO.",
     {"transhome": ATHENA}, desc(), ["AUTO", "ANY"], None, True, "", ""),
    ("auto_without_row", "An AUTO queue without a queue_software row fails.",
     {"transhome": ATHENA}, None, ["AUTO"], None, False, "-cache", "publishes no software description"),
    ("auto_with_row", "An AUTO queue with a row is judged by its JSON.",
     {"transhome": ATHENA}, desc(cvmfs=["atlas"], containers=["/cvmfs"]), ["AUTO"], None, True, "", ""),
    ("list_as_written", "An explicit releases list passes a transHome written as listed.",
     {"transhome": ATHENA}, None, ["Athena-22.0.41"], None, True, "", ""),
    ("list_project_version", "An explicit list also matches project-version of an analysis transHome.",
     {"transhome": "AnalysisTransforms-AthAnalysis_21.2.100"}, None, ["AthAnalysis-21.2.100"], None, True, "", ""),
    ("list_missing", "An explicit list without the task's release fails.",
     {"transhome": ATHENA}, None, ["Athena-21.0.38"], None, False, "-cache", "not in releases"),
    ("list_no_transhome", "An explicit list does not judge a task without transHome.",
     {"architecture": EL9}, None, ["Athena-21.0.38"], None, True, "", ""),
    # regexp sw_platform
    ("regexp_resolves", "A regex sw_platform resolving to a queue cmtconfig passes the cmtconfig rule.",
     {"architecture": "(x86_64|aarch64)-el9.*"}, desc(cmtconfigs=["aarch64-el9-gcc13-opt"]), ["AUTO"], None,
     True, "", ""),
    ("regexp_no_match", "A regex sw_platform matching no queue cmtconfig fails with -regexpcmtconfig.",
     {"architecture": "(x86_64|aarch64)-el9.*"}, desc(cmtconfigs=["x86_64-centos7-gcc8-opt"]), ["AUTO"], None,
     False, "-regexpcmtconfig", "regexp (x86_64|aarch64)-el9.* matches no cmtconfig"),
    ("regexp_anchored", "Resolution is anchored: a regexp matching only a substring does not resolve.",
     {"architecture": "el9"}, desc(cmtconfigs=[EL9]), ["AUTO"], None, True, "", ""),
    ("regexp_anchored_fail", "Resolution is anchored: 'el9.*' does not match 'x86_64-el9-...'.",
     {"architecture": "el9.*"}, desc(cmtconfigs=[EL9]), ["AUTO"], None, False, "-regexpcmtconfig", "matches no"),
    # CPU attributes
    ("excl_needs_value", "'excl' makes the queue accept only tasks that specify the attribute.",
     {"architecture": "#x86_64"}, desc(architectures=[cpu(vendor=["intel", "excl"])]), ["AUTO"], None,
     False, "-cache", "CPU vendor not specified by the task but the queue only accepts vendor ['intel', 'excl']"),
    ("excl_with_value", "'excl' accepts a task that specifies a listed value.",
     {"architecture": "#x86_64-intel"}, desc(architectures=[cpu(vendor=["intel", "excl"])]), ["AUTO"], None,
     True, "", ""),
    ("no_excl_unspecified", "Without 'excl' a task not specifying the attribute is accepted.",
     {"architecture": "#x86_64"}, desc(architectures=[cpu(vendor=["intel"])]), ["AUTO"], None, True, "", ""),
    ("no_excl_other_value", "Without 'excl' a task with another value is still rejected.",
     {"architecture": "#x86_64-amd"}, desc(architectures=[cpu(vendor=["intel"])]), ["AUTO"], None,
     False, "-cache", "CPU vendor amd rejected: queue vendor ['intel']"),
    ("any_entry", "'any' in a queue list accepts every value.",
     {"architecture": "#riscv"}, desc(architectures=[cpu(arch=["any"])]), ["AUTO"], None, True, "", ""),
    ("empty_entry_excl", "[''] with 'excl' accepts any value but still needs one.",
     {"architecture": EL9}, desc(architectures=[cpu(instr=["", "excl"])]), ["AUTO"], None,
     False, "-cache", "CPU instr not specified"),
    ("instr_listed", "An instruction set listed by the queue is accepted.",
     {"architecture": "#x86_64-intel-avx2"}, desc(architectures=[cpu(instr=["avx2", "avx512"])]), ["AUTO"], None,
     True, "", ""),
    ("case_insensitive", "Hardware names compare case-insensitively.",
     {"architecture": "#x86_64-Intel"}, desc(architectures=[cpu(vendor=["intel"])]), ["AUTO"], None, True, "", ""),
    ("regex_arch_match", "A regex CPU architecture matches a queue arch it full-matches.",
     {"architecture": "#(x86_64|aarch64)"}, desc(architectures=[cpu(arch=["aarch64"])]), ["AUTO"], None,
     True, "", ""),
    ("regex_arch_nomatch", "A regex CPU architecture matching no queue arch is rejected.",
     {"architecture": "#(x86_64|aarch64)"}, desc(architectures=[cpu(arch=["ppc64le"])]), ["AUTO"], None,
     False, "-cache", "CPU arch (x86_64|aarch64) rejected"),
    ("default_arch_ok", "Without #host_cpu_spec the CPU architecture is sw_platform's first part.",
     {"architecture": EL9}, desc(architectures=[cpu(arch=["x86_64"])]), ["AUTO"], None, True, "", ""),
    ("default_arch_rejected", "The sw_platform-derived architecture is checked like an explicit one.",
     {"architecture": "aarch64-el9-gcc13-opt"}, desc(architectures=[cpu(arch=["x86_64"])]), ["AUTO"], None,
     False, "-cache", "CPU arch aarch64 (taken from sw_platform) rejected: queue arch ['x86_64']"),
    ("no_cpu_entry", "A queue without a cpu entry accepts any CPU.",
     {"architecture": "#aarch64-ampere"}, desc(), ["AUTO"], None, True, "", ""),
    ("several_cpu_entries", "With several cpu entries any one of them may accept.",
     {"architecture": "#aarch64"}, desc(architectures=[cpu(arch=["x86_64"]), cpu(arch=["aarch64"])]), ["AUTO"],
     None, True, "", ""),
    ("several_cpu_entries_none", "With several cpu entries, none accepting rejects.",
     {"architecture": "#ppc64le"}, desc(architectures=[cpu(arch=["x86_64"]), cpu(arch=["aarch64"])]), ["AUTO"],
     None, False, "-cache", "CPU arch ppc64le rejected"),
    # GPU
    ("gpu_needs_entry", "A GPU request needs a gpu entry in the queue's architectures.",
     {"architecture": "&nvidia"}, desc(), ["AUTO"], None, False, "-cache", "publishes no gpu architecture"),
    ("gpu_vendor_ok", "A GPU vendor listed by the queue is accepted.",
     {"architecture": "&nvidia-a100"}, desc(architectures=[gpu(vendor=["nvidia"], model=["a100", "h100"])]),
     ["AUTO"], None, True, "", ""),
    ("gpu_vendor_other", "A GPU vendor not listed is rejected.",
     {"architecture": "&amd"}, desc(architectures=[gpu(vendor=["nvidia"])]), ["AUTO"], None,
     False, "-cache", "GPU vendor amd rejected"),
    ("gpu_excl_cpu_task", "An exclusive GPU queue turns away tasks that ask for no GPU.",
     {"architecture": EL9}, desc(architectures=[gpu(vendor=["nvidia", "excl"])]), ["AUTO"], None,
     False, "-cache", "GPU vendor not specified"),
    ("gpu_shared_cpu_task", "A non-exclusive GPU queue accepts tasks that ask for no GPU.",
     {"architecture": EL9}, desc(architectures=[gpu(vendor=["nvidia"])]), ["AUTO"], None, True, "", ""),
    # fat containers
    ("fc_onlytags_name", "onlyTagsForFC: the name equal to a tag's container_name passes.",
     {"container_name": "atlas/athena:22.0.41", "onlytagsforfc": True},
     desc(tags=[tag(EL9, "Athena", "22.0.41", container_name="atlas/athena:22.0.41")]), ["AUTO"], None,
     True, "", ""),
    ("fc_onlytags_source", "onlyTagsForFC: the name among a tag's sources passes.",
     {"container_name": FC, "onlytagsforfc": True},
     desc(tags=[tag(EL9, "Athena", "22.0.41", container_name="atlas/athena:22.0.41", sources=[FC])]), ["AUTO"],
     None, True, "", ""),
    ("fc_onlytags_any_ignored", "onlyTagsForFC: 'any' in containers does not help.",
     {"container_name": FC, "onlytagsforfc": True}, desc(containers=["any"]), ["AUTO"], None,
     False, "-cache", f"container {FC} is neither a tag's container_name nor in a tag's sources"),
    ("fc_any", "'any' in containers accepts every container.",
     {"container_name": "user/custom:1"}, desc(containers=["any"]), ["AUTO"], None, True, "", ""),
    ("fc_cvmfs", "'/cvmfs' in containers accepts every container.",
     {"container_name": "user/custom:1"}, desc(containers=["/cvmfs"]), ["AUTO"], None, True, "", ""),
    ("fc_prefix", "A container name forward-matching a containers entry passes.",
     {"container_name": FC}, desc(containers=["/cvmfs/unpacked.cern.ch/"]), ["AUTO"], None, True, "", ""),
    ("fc_via_all", "A name whose source path via ALL forward-matches a containers entry passes.",
     {"container_name": "atlas/athena:22.0.41"}, desc(containers=["/cvmfs/unpacked.cern.ch/"]), ["AUTO"],
     desc(tags=[tag(EL9, "Athena", "22.0.41", container_name="atlas/athena:22.0.41", sources=[FC])]),
     True, "", ""),
    ("fc_via_all_no_prefix", "A source path via ALL that matches no containers entry fails.",
     {"container_name": "atlas/athena:22.0.41"}, desc(containers=["docker://"]), ["AUTO"],
     desc(tags=[tag(EL9, "Athena", "22.0.41", container_name="atlas/athena:22.0.41", sources=[FC])]),
     False, "-cache", "(via ALL) matches none"),
    ("fc_unresolvable", "A name neither forward-matching nor resolvable via ALL fails.",
     {"container_name": "user/custom:1"}, desc(containers=["/cvmfs/unpacked.cern.ch/"]), ["AUTO"], None,
     False, "-cache", "container user/custom:1 not in containers ['/cvmfs/unpacked.cern.ch/'] and not resolvable via ALL"),
    ("fc_skips_release", "A fat-container task is not asked for the release (it lives in the container).",
     {"container_name": FC, "transhome": ATHENA}, desc(containers=["/cvmfs/"]), ["AUTO"], None, True, "", ""),
    # releases, caches, nightlies
    ("rel_cvmfs_containers", "cvmfs 'atlas' plus '/cvmfs' in containers makes a release available.",
     {"architecture": EL9, "transhome": ATHENA}, desc(cvmfs=["atlas"], containers=["/cvmfs"]), ["AUTO"], None,
     True, "", ""),
    ("rel_cvmfs_cmtconfig", "cvmfs 'atlas' plus the sw_platform in cmtconfigs makes a release available.",
     {"architecture": EL9, "transhome": ATHENA}, desc(cvmfs=["atlas"], cmtconfigs=[EL9]), ["AUTO"], None,
     True, "", ""),
    ("rel_cvmfs_any", "'any' in cvmfs stands for every repository.",
     {"architecture": EL9, "transhome": "Athena-rel_3"}, desc(cvmfs=["any"], containers=["any"]), ["AUTO"], None,
     True, "", ""),
    ("rel_cvmfs_no_cmtconfig", "cvmfs alone is not enough: cmtconfig or '/cvmfs' containers are needed too.",
     {"architecture": EL9, "transhome": ATHENA}, desc(cvmfs=["atlas"]), ["AUTO"], None,
     False, "-cache", f"cmtconfig {EL9} not in cmtconfigs and containers lack 'any' and '/cvmfs'; no tag Athena 22.0.41"),
    ("nightly_needs_nightlies", "A nightly needs 'nightlies' in cvmfs ('atlas' is not enough).",
     {"architecture": EL9, "transhome": "Athena-22.0.X-2026-11-01T2101"}, desc(cvmfs=["atlas"], cmtconfigs=[EL9]),
     ["AUTO"], None, False, "-cache", "has neither 'any' nor 'nightlies'"),
    ("nightly_ok", "A nightly with 'nightlies' in cvmfs is available.",
     {"architecture": EL9, "transhome": "Athena-rel_3"}, desc(cvmfs=["nightlies"], cmtconfigs=[EL9]), ["AUTO"], None,
     True, "", ""),
    ("tag_match", "Without cvmfs, a tag with the same cmtconfig, project and release makes it available.",
     {"architecture": EL9, "transhome": ATHENA}, desc(tags=[tag(EL9, "Athena", "22.0.41")]), ["AUTO"], None,
     True, "", ""),
    ("tag_other_release", "A tag of another release does not.",
     {"architecture": EL9, "transhome": ATHENA}, desc(tags=[tag(EL9, "Athena", "22.0.40")]), ["AUTO"], None,
     False, "-cache", "no tag Athena 22.0.41 for cmtconfig x86_64-el9-gcc13-opt"),
    ("tag_other_project", "A tag of another project does not.",
     {"architecture": EL9, "transhome": "AthDerivation-21.2.2.0"}, desc(tags=[tag(EL9, "Athena", "21.2.2.0")]),
     ["AUTO"], None, False, "-cache", "no tag AthDerivation 21.2.2.0"),
    ("tag_base_platform", "With a base_platform the tag route needs 'any' in containers.",
     {"architecture": EL9 + "@el9", "transhome": ATHENA}, desc(tags=[tag(EL9, "Athena", "22.0.41")]), ["AUTO"],
     None, False, "-cache", "base platform el9 needs 'any' in containers"),
    ("tag_base_platform_any", "With a base_platform and 'any' in containers the tag route is open.",
     {"architecture": EL9 + "@el9", "transhome": ATHENA},
     desc(containers=["any"], tags=[tag(EL9, "Athena", "22.0.41")]), ["AUTO"], None, True, "", ""),
    ("no_transhome", "Without transHome only hardware, container and cmtconfig are checked.",
     {"architecture": EL9}, desc(), ["AUTO"], None, True, "", ""),
    ("regexp_tag", "A regex sw_platform is resolved before the tag comparison.",
     {"architecture": "x86_64-el9-.*", "transhome": ATHENA},
     desc(cmtconfigs=["x86_64-el9-gcc12-opt", EL9], tags=[tag(EL9, "Athena", "22.0.41")]), ["AUTO"], None,
     True, "", ""),
]  # fmt: skip


def _rule_id(case: tuple[Any, ...]) -> str:
    """'<criteria code>:<case>': the code the case's rule gives when it fails (-regexpcmtconfig for regex resolution)."""
    name, code = case[0], case[7]
    if not code:
        code = "-regexpcmtconfig" if name.startswith("regexp_") else "-cache"
    return f"{code}:{name}"


@pytest.mark.parametrize(
    ("rule", "task_row", "row", "releases", "all_row", "passed", "code", "fragment"),
    [pytest.param(*case[1:], id=_rule_id(case)) for case in RULE_CASES],
)
def test_rule(
    rule: str,
    task_row: dict[str, Any],
    row: dict[str, Any] | None,
    releases: list[str],
    all_row: dict[str, Any] | None,
    passed: bool,
    code: str,
    fragment: str,
) -> None:
    """Each rule of the seed (and of docs/software.md where the seed is silent), both outcomes."""
    ok, got_code, reason, _ = one(task_row, row, releases, all_row)
    assert ok is passed, f"{rule}: {reason}"
    assert got_code == code, rule
    assert fragment in reason, f"{rule}: {reason!r}"
    ref_ok, ref_code, _ = ref.check(
        task_row, "Q", releases, {} if row is None else {"Q": row, "ALL": all_row} if all_row else {"Q": row}
    )
    assert (ref_ok, ref_code) == (passed, code), f"reference disagrees on: {rule}"


def test_rule_table_covers_both_outcomes() -> None:
    """Every group of rules in the table has passing and failing cases."""
    assert {case[6] for case in RULE_CASES} == {True, False}
    assert {case[7] for case in RULE_CASES} == {"", "-cache", "-regexpcmtconfig"}


def test_regexp_resolution_prefers_a_cmtconfig_that_has_the_release() -> None:
    """Among several cmtconfigs matching the regexp, the one with the tag is the resolved one."""
    row = desc(cmtconfigs=["x86_64-el9-gcc12-opt", EL9], tags=[tag(EL9, "Athena", "22.0.41")])
    ok, _, _, resolved = one({"architecture": "x86_64-el9-.*", "transhome": ATHENA}, row)
    assert ok and resolved == EL9


def test_resolved_is_empty_for_plain_sw_platform() -> None:
    """A plain sw_platform is not resolved, so nothing is reported."""
    _, _, _, resolved = one({"architecture": EL9}, desc(cmtconfigs=[EL9]))
    assert resolved == ""


def test_verdict_raises_on_malformed_architecture() -> None:
    """A malformed task architecture is a task error, not a queue property."""
    with pytest.raises(ArchitectureError, match="empty architecture"):
        one({"architecture": "#-intel"}, desc())


@pytest.mark.parametrize(
    ("transhome", "project", "version", "cvmfs", "kind"),
    [
        ("Athena-22.0.41", "Athena", "22.0.41", "atlas", "release"),
        ("AthDerivation-21.2.2.0", "AthDerivation", "21.2.2.0", "atlas", "cache"),
        ("Athena-rel_3", "Athena", "rel_3", "nightlies", "nightly"),
        ("Athena-22.0.X-2026-11-01T2101", "Athena", "22.0.X-2026-11-01T2101", "nightlies", "nightly"),
        ("AnalysisTransforms-AthAnalysis_21.2.100", "AthAnalysis", "21.2.100", "atlas", "release"),
        ("AthAnalysis_21.2.100", "AthAnalysis", "21.2.100", "atlas", "release"),
    ],
)
def test_classify_release(transhome: str, project: str, version: str, cvmfs: str, kind: str) -> None:
    """Project before the first '-', version after; rel_N and date-stamped versions are nightlies."""
    r = classify_release(transhome)
    assert r is not None
    assert (r.project, r.version, r.cvmfs, r.kind) == (project, version, cvmfs, kind)


def test_classify_no_release() -> None:
    """No transHome means no release."""
    assert classify_release("") is None


# --- the vectorised entry point ------------------------------------------------------------------------


def software_grid() -> Any:
    """Four queues: two sharing one description, one ANY queue, one AUTO queue without a row."""
    queues = [
        queue("A1", "S1", releases=["AUTO"]),
        queue("A2", "S1", releases=["AUTO"]),
        queue("B", "S2", releases=["ANY"]),
        queue("C", "S2", releases=["AUTO"]),
    ]
    shared = {"cmtconfigs": [EL9], "cvmfs": ["atlas"], "containers": [], "architectures": [], "tags": []}
    rows = [
        {"panda_queue": "A1", **shared},
        {"panda_queue": "A2", **shared},
        {"panda_queue": "ALL", "tags": [tag(EL9, "Athena", "22.0.41", "atlas/athena:22.0.41", [FC])]},
    ]
    return grid(queues, [task(1, architecture=EL9, transhome=ATHENA)], queue_software=rows)


def test_verdict_over_a_snapshot() -> None:
    """Criteria per row, reasons only for the rows asked, and identical descriptions shared."""
    snap = software_grid()
    cache = GridCache(snap)
    index = software_index(cache)
    assert index["A1"] is index["A2"]
    assert software_index(cache) is index
    names = snap.queues["panda_queue"].to_numpy(dtype=object)
    releases = list(snap.queues["releases"])
    v = software_verdict({"architecture": EL9, "transhome": ATHENA}, names, releases, index)
    assert v.passed.tolist() == [True, True, True, False]
    assert v.codes(np.array([3])) == ["-cache"]
    assert "no queue_software row" in v.texts(np.array([3]))[0]
    other = software_verdict({"architecture": "aarch64-el9-gcc13-opt", "transhome": ATHENA}, names, releases, index)
    assert other.passed.tolist() == [False, False, True, False]
    assert "cmtconfig aarch64-el9-gcc13-opt not in cmtconfigs" in other.texts(np.array([0]))[0]


def test_lazy_reasons_and_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    """Queues sharing a description are checked once, and the outcome is reused by later calls."""
    snap = software_grid()
    index = build_software_index(snap)
    names = np.array(["A1", "A2"] * 300, dtype=object)
    releases = [["AUTO"]] * len(names)
    calls: list[str] = []
    real = software_plan.check_auto_queue

    def counting(*args: Any, **kw: Any) -> Any:
        calls.append("x")
        return real(*args, **kw)

    monkeypatch.setattr(software_plan, "check_auto_queue", counting)
    t = {"architecture": EL9, "transhome": "Athena-21.0.1"}
    first = software_verdict(t, names, releases, index)
    second = software_verdict(t, names, releases, index)
    assert len(calls) == 1
    assert first.passed.all() and second.passed.all()


def test_plain_dicts_and_index_agree() -> None:
    """software_verdict accepts plain row dicts as well as the prepared index."""
    snap = software_grid()
    index = build_software_index(snap)
    plain = {k: dict(v) for k, v in index.items()}
    names = np.array(["A1", "A2", "B", "C"], dtype=object)
    releases = [["AUTO"], ["AUTO"], ["ANY"], ["AUTO"]]
    for t in ({"architecture": EL9, "transhome": ATHENA}, {"container_name": "atlas/athena:22.0.41"}):
        a = software_verdict(t, names, releases, index)
        b = software_verdict(t, names, releases, plain)
        assert a.passed.tolist() == b.passed.tolist()
        assert list(a.criteria) == list(b.criteria)


def test_resolved_cmtconfig_per_queue() -> None:
    """resolved_cmtconfig gives the cmtconfig a regex resolved to, per queue ('' elsewhere)."""
    software = {"A": desc(cmtconfigs=["x86_64-el9-gcc13-opt"]), "B": desc(cmtconfigs=["aarch64-el9-gcc13-opt"])}
    names = np.array(["A", "B", "C"], dtype=object)
    got = resolved_cmtconfig({"architecture": "(x86_64|aarch64)-el9.*"}, names, [["AUTO"], ["AUTO"], ["ANY"]], software)
    assert got.tolist() == ["x86_64-el9-gcc13-opt", "aarch64-el9-gcc13-opt", ""]


def test_description_is_a_read_only_mapping() -> None:
    """A prepared description reads like its row."""
    d = describe({"cmtconfigs": [EL9], "cvmfs": ["atlas"]})
    assert d["cmtconfigs"] == [EL9]
    assert set(d) == {"cmtconfigs", "cvmfs"}
    assert describe(d) is d


def test_core_imports_no_screen() -> None:
    """The software module imports no dash, flask or plotly."""
    with open(sw.__file__) as fh:
        source = fh.read()
    assert not any(f"import {m}" in source or f"from {m}" in source for m in ("dash", "flask", "plotly"))


# --- through the analysis broker ---------------------------------------------------------------------


def test_analysis_release_cache_check() -> None:
    """Analysis: releases=ANY is not checked; an AUTO queue must publish the task's cache."""
    qs = [
        anal_queue("ANY", "S1"),
        anal_queue("HAS", "S2", releases=["AUTO"]),
        anal_queue("LACKS", "S3", releases=["AUTO"]),
        anal_queue("SILENT", "S4", releases=["AUTO"]),
    ]
    software = [
        {"panda_queue": "HAS", "cmtconfigs": [PLATFORM], "cvmfs": ["atlas"], "containers": ["any"]},
        {"panda_queue": "LACKS", "cmtconfigs": ["aarch64-el9-gcc13-opt"], "containers": []},
    ]
    t = anal_task(1, transhome="AnalysisBase-21.2.100", architecture=PLATFORM)
    d = run(grid(qs, [t], queue_software=software))
    assert sorted(d.ranked_names) == ["ANY", "HAS"]
    assert codes(d) == {"LACKS": "-cache", "SILENT": "-cache"}
    assert not d.skip_of("LACKS").temporary and d.skip_of("LACKS").stage == "release/cache check"


# --- property: the vectorised module agrees with the scalar reference ------------------------------------

CMTCONFIGS = ["x86_64-el9-gcc13-opt", "x86_64-centos7-gcc8-opt", "aarch64-el9-gcc13-opt", "x86_64-slc6-gcc62-opt"]
SW_PLATFORMS = [*CMTCONFIGS, "", "(x86_64|aarch64)-el9.*", "x86_64-.*", ".*-centos7-.*", "ppc64le-el9-gcc13-opt"]
CONTAINER_NAMES = ["atlas/athena:22.0.41", FC, "docker://atlas/analysisbase:21.2", "user/custom:1"]
CONTAINER_ENTRIES = ["any", "/cvmfs", "/cvmfs/unpacked.cern.ch/", "docker://atlas/", "atlas/", "user/", ""]
TRANSHOMES = [
    "",
    "Athena-22.0.41",
    "AthDerivation-21.2.2.0",
    "Athena-21.0.38",
    "Athena-rel_3",
    "Athena-22.0.X-2026-11-01T2101",
    "AnalysisTransforms-AthAnalysis_21.2.100",
]
# transHome -> (project, release) as a tag would publish it, to bias tags towards the task's own release
TAG_OF = {
    "Athena-22.0.41": ("Athena", "22.0.41"),
    "AthDerivation-21.2.2.0": ("AthDerivation", "21.2.2.0"),
    "Athena-21.0.38": ("Athena", "21.0.38"),
    "Athena-rel_3": ("Athena", "rel_3"),
    "Athena-22.0.X-2026-11-01T2101": ("Athena", "22.0.X-2026-11-01T2101"),
    "AnalysisTransforms-AthAnalysis_21.2.100": ("AthAnalysis", "21.2.100"),
}
RELEASE_LISTS = [["AUTO"]] * 6 + [
    ["ANY"],
    ["AUTO", "ANY"],
    ["Athena-22.0.41"],
    ["AthAnalysis-21.2.100", "Athena-rel_3"],
    [],
]
HW_VALUES = {  # specific names repeated so that wildcards do not hide most comparisons
    "arch": ["x86_64", "x86_64", "aarch64", "arm64", "", "any", "excl", "excl"],
    "vendor": ["intel", "intel", "amd", "Intel", "", "excl", "excl"],
    "instr": ["avx2", "avx512", "excl"],
    "model": ["kt100", "a100", "", "excl"],
}
SOURCES = [FC, "docker://atlas/athena:22.0.41", "/cvmfs/unpacked.cern.ch/registry.hub.docker.com/user/custom:1"]


def _pick(values: list[Any]) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


def _subset(values: list[Any], min_size: int = 0, max_size: int = 3) -> st.SearchStrategy[list[Any]]:
    return st.lists(st.sampled_from(values), unique=True, min_size=min_size, max_size=max_size)


# strategies built once: hypothesis validates every new strategy object, which dominated the run time
BOOL = st.booleans()
SW_PLATFORM = _pick(SW_PLATFORMS)
BASE_PLATFORM = _pick(["", "", "el9", "centos7"])
CPU_ARCH = _pick(["x86_64", "aarch64", "(x86_64|aarch64)", "*", "arm64"])
CPU_VENDOR = _pick(["intel", "amd", "*"])
CPU_INSTR = _pick(["avx2", "avx512", "*"])
GPU_VENDOR = _pick(["nvidia", "amd"])
GPU_MODEL = _pick(["kt100", "a100"])
QUARTER = st.integers(0, 3)
EIGHTH = st.integers(0, 7)
COUNT3 = st.integers(0, 3)
COUNT4 = st.integers(0, 4)
HW_KIND = _pick(["cpu", "cpu", "gpu"])
HW_ATTRS = {"cpu": _subset(["arch", "vendor", "instr"]), "gpu": _subset(["vendor", "model"])}
HW_LISTS = {a: _subset(v, min_size=1) for a, v in HW_VALUES.items()}
CMTCONFIG = _pick(CMTCONFIGS)
TAG_RELEASE = _pick(list(TAG_OF.values()))
TAG_CONTAINER = _pick(["", *CONTAINER_NAMES])
TAG_SOURCES = _subset(SOURCES, max_size=2)
CMTCONFIG_SET = _subset(CMTCONFIGS)
CONTAINER_SET = _subset(CONTAINER_ENTRIES)
CVMFS_SET = _subset(["any", "atlas", "nightlies"], max_size=2)
TRANSHOME = _pick(TRANSHOMES)
TRANSHOME_SET = _pick(TRANSHOMES[1:])
TASK_CONTAINER = _pick(["", "", *CONTAINER_NAMES])
TASK_CONTAINER_SET = _pick(CONTAINER_NAMES)
RELEASE_LIST = _pick(RELEASE_LISTS)
QUEUE_COUNT = st.integers(1, 8)
POOL_INDEX = st.integers(0, 2)


def draw_architecture(draw: st.DrawFn) -> str:
    """A well-formed task architecture string."""
    text = draw(SW_PLATFORM)
    base = draw(BASE_PLATFORM)
    if base:
        text += "@" + base
    if draw(BOOL):
        parts = [draw(CPU_ARCH)]
        if draw(BOOL):
            parts.append(draw(CPU_VENDOR))
            if draw(BOOL):
                parts.append(draw(CPU_INSTR))
        if draw(BOOL):  # hardware names compare case-insensitively
            parts = [p.upper() for p in parts]
        text += "#" + "-".join(parts)
    if draw(QUARTER) == 0:
        parts = [draw(GPU_VENDOR)]
        if draw(BOOL):
            parts.append(draw(GPU_MODEL))
        text += "&" + "-".join(parts)
    return text


def draw_hardware_entry(draw: st.DrawFn) -> dict[str, Any]:
    """A cpu or gpu architectures entry with random attribute lists."""
    kind = draw(HW_KIND)
    entry: dict[str, Any] = {"type": kind}
    for a in draw(HW_ATTRS[kind]):
        entry[a] = draw(HW_LISTS[a])
    return entry


def draw_tag(draw: st.DrawFn, task_row: dict[str, Any]) -> dict[str, Any]:
    """A tags entry, half of the time for the task's own cmtconfig / release / container."""
    sw_platform = task_row["architecture"].split("@")[0].split("#")[0].split("&")[0]
    own = draw(BOOL)
    cmtconfig = sw_platform if own and sw_platform else draw(CMTCONFIG)
    project, release = TAG_OF[task_row["transhome"]] if own and task_row["transhome"] else draw(TAG_RELEASE)
    container = task_row["container_name"] if own and task_row["container_name"] else draw(TAG_CONTAINER)
    return tag(cmtconfig, project, release, container, draw(TAG_SOURCES))


def draw_description(draw: st.DrawFn, task_row: dict[str, Any], focus: str) -> dict[str, Any]:
    """A queue_software row (no hardware entries when the focus is containers or releases)."""
    n_hardware = draw(COUNT3) if focus in ("any", "hardware") else 0
    return desc(
        cmtconfigs=draw(CMTCONFIG_SET),
        containers=draw(CONTAINER_SET),
        cvmfs=draw(CVMFS_SET),
        architectures=[draw_hardware_entry(draw) for _ in range(n_hardware)],
        tags=[draw_tag(draw, task_row) for _ in range(draw(COUNT3))],
    )


FOCUSES = ("any", "hardware", "container", "release")


@st.composite
def grids(draw: st.DrawFn, focus: str = "any") -> tuple[dict[str, Any], list[str], list[list[str]], dict[str, Any]]:
    """A task and 1-8 queues with releases and (mostly) software rows, plus maybe an ALL row.

    FOCUS other than 'any' keeps every queue AUTO with a row and neutralises the other rule groups, so
    the property exercises that group's boundaries densely.
    """
    architecture = draw_architecture(draw)
    if focus in ("container", "release"):
        architecture = architecture.split("#")[0].split("&")[0]
    transhome = "" if focus in ("hardware", "container") else draw(TRANSHOME_SET if focus == "release" else TRANSHOME)
    container = (
        "" if focus in ("hardware", "release") else draw(TASK_CONTAINER_SET if focus == "container" else TASK_CONTAINER)
    )
    task_row = {
        "architecture": architecture,
        "transhome": transhome,
        "container_name": container,
        "onlytagsforfc": draw(BOOL),
    }
    names = [f"Q{i}" for i in range(draw(QUEUE_COUNT))]
    releases = [["AUTO"] if focus != "any" else draw(RELEASE_LIST) for _ in names]
    pool = [draw_description(draw, task_row, focus) for _ in range(1 + draw(POOL_INDEX))]
    software: dict[str, Any] = {}
    for name in names:
        if focus != "any" or draw(EIGHTH) > 0:
            software[name] = pool[draw(POOL_INDEX) % len(pool)]  # shared objects, as in the index
    if focus == "container" or draw(QUARTER) > 0:
        software["ALL"] = desc(tags=[draw_tag(draw, task_row) for _ in range(draw(COUNT4))])
    return task_row, names, releases, software


@pytest.mark.parametrize("focus", FOCUSES)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_vectorised_agrees_with_reference(focus: str, data: st.DataObject) -> None:
    """For every queue, software_verdict and the scalar reference agree on pass/fail and criteria code."""
    task_row, names, releases, software = data.draw(grids(focus))
    arr = np.array(names, dtype=object)
    plain = software_verdict(task_row, arr, releases, software)
    prepared = software_verdict(task_row, arr, releases, {k: describe(v) for k, v in software.items()})
    for i, name in enumerate(names):
        ok, code, _ = ref.check(task_row, name, releases[i], software)
        idx = np.array([i])
        for v in (plain, prepared):
            got = (bool(v.passed[i]), v.codes(idx)[0] if not v.passed[i] else "")
            assert got == (ok, code), f"{name} releases={releases[i]} row={software.get(name)}: {v.texts(idx)}"
        if not ok:
            assert plain.texts(idx)[0]
