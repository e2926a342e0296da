"""JEDI's skip messages as our criteria codes: every ``criteria=`` token PanDA 1.0.4's ``jedibrokerage/`` emits.

Each token maps to one of our codes, or is listed as not modelled with the reason. ``parse_lines`` reads a
broker's log (INFO and above) into per-queue / per-nucleus verdicts; a token found in a log that is in neither
table is *unmapped* (a crosscheck reports it, and a test fails on it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# token -> our criteria code (the same word where the project kept JEDI's vocabulary)
MAPPED: dict[str, str] = {
    t: t
    for t in (
        "-status", "-link_unusable", "-links_full", "-inactive", "-zeroshare", "-diskIO", "-cpucore", "-max_cpucore",
        "-regexpcmtconfig", "-cache", "-lowmemory", "-highmemory", "-remoteio", "-disk", "-read_lan_blacklist",
        "-write_lan_blacklist", "-write_wan_blacklist", "-read_wan_blacklist", "-shortwalltime", "-scout_walltime",
        "-min_walltime", "-longwalltime", "-network", "-es", "-eshigh", "-nones", "-transferring", "-t1weight",
        "-full_chain", "-not_full_chain", "-nopilot", "-io", "-cap", "-lowNetworkWeight", "-low_weight",
        "-transfer_backlog", "-match", "-space", "-job", "-insize", "-innum", "-excluded", "-notincluded",
        "-nonpreassigned", "-overloaded", "-overloaded_vp", "-tmp_user_problem", "-badsite",
    )
} | {
    "-dest_blacklisted": "-dest_blacklisted",  # switch links_as_jedi (checks/panda_rules.py)
    "-jumbo": "-jumbo",
    "-es_ucore": "-es_ucore",  # switch es_ucore_check (checks/panda_activity.py)
    "-non_local": "-non_local",  # switch non_local_check (checks/panda_rules.py)
    "-source_blacklist": "-source_blacklist",  # switch nucleus_as_jedi (brokers/nucleus_panda.py)
    "-destination_blacklist": "-destination_blacklist",  # switch jumbo_check (checks/panda_rules.py)
    "-cap_rt": "-cap",  # the resource-type cap: our one queue cap code
    "avoid VP": "-avoid_vp",  # "  skip site=S to avoid VP" carries no criteria token
    "architecture": "-architecture",  # the analysis GPU architecture check's lines carry none either
    "-blacklist": "-blacklist",  # switch anal_order_as_jedi (brokers/analysis_panda.py)
    "-closed": "-closed",  # switch anal_order_as_jedi (brokers/analysis_panda.py)
}  # fmt: skip

# token -> why there is no code of ours (the rule is not modelled, or cannot happen offline)
NOT_MODELLED: dict[str, str] = {
    "-opportunistic": "pledgedcpu = -1 queues for high priority: the snapshot has no pledgedcpu",
    "-fewevents": "jumbo jobs: the snapshot has no ready-event counts",
    "-non_pledged": "WORK_SHORTAGE pledge check: the snapshot has no pledgedcpu",
    "-over_pledged": "WORK_SHORTAGE pledge check: the snapshot has no pledged cores",
    "-max_io_intensity": "queue param max_io_intensity: the snapshot has no queue params",
    "-lock": "process locks of other brokerages: none offline",
    "-others_bootstrap": "final selection: a bootstrap (weight 0) site while others exist (not modelled)",
    "-below_min_weight": "MIN_WEIGHT_<label> is off by default (not modelled)",
    "-t1_weight": "final selection with negative t1Weight keeps the largest-nRunningAll site only (not modelled)",
    "-full_chain_parent": "full-chain parent ran elsewhere",
    "-local_quota": "rucio local quota: the snapshot has no quotas per endpoint",
    "-cloudmismatch": "analysis: task cloud other than the site's (tasks carry no cloud here)",
    "-hospital": "analysis: *_HOSPITAL queues (not modelled)",
    "-fileunavailable": "analysis: use_only_local_data queues lacking files (not modelled)",
}

# every criteria token the brokers of panda-server 1.0.4 write (grep "criteria=[-+]..." in pandajedi/jedibrokerage/,
# plus the link check's variable ones); tests/core/crosscheck checks each is mapped or listed as not modelled
JEDI_104_TOKENS: tuple[str, ...] = (
    "-badsite", "-below_min_weight", "-blacklist", "-cache", "-cap", "-cap_rt", "-closed", "-cloudmismatch",
    "-cpucore", "-dest_blacklisted", "-destination_blacklist", "-disk", "-diskIO", "-es", "-es_ucore", "-eshigh",
    "-excluded", "-fewevents", "-fileunavailable", "-full_chain", "-highmemory", "-hospital", "-inactive", "-innum",
    "-insize", "-io", "-job", "-jumbo", "-link_unusable", "-links_full", "-local_quota", "-lock", "-longwalltime",
    "-lowNetworkWeight", "-low_weight", "-lowmemory", "-match", "-max_cpucore", "-max_io_intensity", "-min_walltime",
    "-network", "-non_local", "-non_pledged", "-nones", "-nonpreassigned", "-nopilot", "-not_full_chain",
    "-notincluded", "-opportunistic", "-others_bootstrap", "-over_pledged", "-overloaded", "-overloaded_vp",
    "-read_lan_blacklist", "-read_wan_blacklist", "-regexpcmtconfig", "-remoteio", "-scout_walltime",
    "-shortwalltime", "-source_blacklist", "-space", "-status", "-t1_weight", "-t1weight", "-tmp_user_problem",
    "-transfer_backlog", "-transferring", "-write_lan_blacklist", "-write_wan_blacklist", "-zeroshare", "avoid VP",
    "architecture",
)  # fmt: skip

SKIP_SITE = re.compile(r"^\s*skip site[= ](?P<name>\S+)\s(?P<msg>.*?)\s*:?\s*criteria=(?P<token>[-+][A-Za-z_0-9]+)\s*$")
AVOID_VP = re.compile(r"^\s*skip site=(?P<name>\S+) to avoid VP\s*$")
GPU_ARCH = re.compile(
    r"^\s*skip site=(?P<name>\S+) since (?P<msg>architecture(?: is required for GPU queues|=.* is unavailable))\s*$"
)
USE_SITE = re.compile(r"^\s*use site=(?P<name>\S+) (?:for jumbo jobs )?with (?:weight=(?P<w>\S+) )?")
SKIP_NUCLEUS = re.compile(r"^\s*skip nucleus=(?P<name>\S+)\s(?P<msg>.*?)\s*criteria=(?P<token>-[A-Za-z_0-9]+)\s*$")
USE_NUCLEUS = re.compile(r"^\s*use nucleus=(?P<name>\S+) weight=(?P<w>\S+)\s")
ANY_TOKEN = re.compile(r"criteria=(?P<token>[-+][A-Za-z_0-9]+)")


def unified(name: str) -> str:
    """A pseudo queue's unified queue (``BNL_UCORE/MCORE`` -> ``BNL_UCORE``); other names unchanged."""
    return name.split("/", 1)[0]


@dataclass
class Parsed:
    """One broker's log as verdicts: removed names with (our code, JEDI token, message), used names with weights."""

    skips: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    uses: dict[str, float] = field(default_factory=dict)
    unmapped: set[str] = field(default_factory=set)


def our_code(token: str) -> str | None:
    """Our criteria code for JEDI TOKEN; None when not modelled. KeyError for an unknown (unmapped) token."""
    if token in MAPPED:
        return MAPPED[token]
    if token in NOT_MODELLED:
        return None
    raise KeyError(token)


def _add_skip(out: Parsed, name: str, token: str, msg: str) -> None:
    try:
        code = our_code(token)
    except KeyError:
        out.unmapped.add(token)
        code = None
    # the first message about a name is the filter that removed it (temporary ones are printed when applied)
    out.skips.setdefault(name, (code or f"?{token}", token, msg.strip()))


def parse_lines(lines: list[str], kind: str = "site") -> Parsed:
    """Verdicts from a broker's log lines; KIND ``site`` reads queue lines (unified names), ``nucleus`` nuclei.

    Usage: ``parse_lines(["  skip site=X due to status=offline criteria=-status"]).skips["X"][0] == "-status"``
    """
    out = Parsed()
    skip_re, use_re = (SKIP_SITE, USE_SITE) if kind == "site" else (SKIP_NUCLEUS, USE_NUCLEUS)
    for line in lines:
        if kind == "site" and (m := AVOID_VP.match(line)):
            _add_skip(out, unified(m["name"]), "avoid VP", "to avoid VP")
        elif kind == "site" and (m := GPU_ARCH.match(line)):
            _add_skip(out, unified(m["name"]), "architecture", m["msg"])
        elif m := skip_re.match(line):
            name = unified(m["name"]) if kind == "site" else m["name"]
            _add_skip(out, name, m["token"], m["msg"])
        elif m := use_re.match(line):
            name = unified(m["name"]) if kind == "site" else m["name"]
            if m["w"] is not None:
                out.uses[name] = float(m["w"])
        elif (m := ANY_TOKEN.search(line)) and m["token"].startswith("-"):
            tok = m["token"]
            if tok not in MAPPED and tok not in NOT_MODELLED:
                out.unmapped.add(tok)
    return out
