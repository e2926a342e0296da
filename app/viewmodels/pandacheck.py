"""The task page's PanDA panel: a task's crosscheck (``TaskCheck.to_dict``) as a headline, lines and differing rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MISSING_HEADLINE = "PanDA source not available: run scripts/panda.sh"
BROKERS = {
    "prod": "Job broker (AtlasProdJobBroker)",
    "nucleus": "Task broker (AtlasProdTaskBroker)",
    "anal": "Analysis job broker (AtlasAnalJobBroker)",
}
NAMES = {"prod": ("queue", "queues"), "nucleus": ("nucleus", "nuclei"), "anal": ("queue", "queues")}
USE = "+use"
ABSENT = "absent"
CRASH = "known PanDA crash"  # the comparison's allowed reason of a row PanDA's crash left without a verdict


@dataclass(frozen=True)
class PandaVerdict:
    """What the panel says: PanDA agrees or not, the headline, one line per broker, the differing rows, the note
    on the rule profile used."""

    agrees: bool
    headline: str
    lines: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)
    profile: str = ""
    failure: str = ""


def profile_note(result: dict[str, Any]) -> str:
    """Which config and rule profile both sides ran under (the crosscheck's: stored gdpconfig, panda-1.0.4 rules)."""
    profile = result.get("profile", "panda-1.0.4")
    note = (
        f"Both sides ran under the stored gdpconfig with the {profile} rule profile, as the brokerage crosscheck "
        "command compares (docs/crosscheck.md)"
    )
    stored = result.get("stored_profile")
    if stored and stored != profile:
        return f"{note}; the job brokerage above uses the stored profile, {stored}."
    return f"{note}."


def shown(code: str, weight: float | None, precise: bool = False) -> str:
    """One side's verdict on a name in words: a candidate with its weight, a removal code, or not listed.

    Usage: ``shown("+use", 0.25)  # "candidate, weight 0.25"``
    """
    if code == USE:
        if weight is None:
            return "candidate"
        return f"candidate, weight {weight:.10g}" if precise else f"candidate, weight {weight:.4g}"
    if code == ABSENT:
        return "not listed"
    if code.startswith("?"):
        return f"{code[1:]} (a JEDI token with no code of ours)"
    return code


def difference_rows(result: dict[str, Any]) -> list[dict[str, str]]:
    """The names whose verdict, weight or nucleus probability differ, per broker: name, ours, PanDA's, the field
    (marked allowed, or PanDA crashed, when the allow-list or a known crash covers it) and why (that reason).

    Usage: ``difference_rows(check)[0]["field"]  # "verdict"``
    """
    out = []
    for b in result.get("brokers", []):
        ours, theirs = b.get("ours", {}).get("candidates", {}), b.get("jedi", {}).get("candidates", {})
        for q in b.get("queues", []):
            if q.get("agree", True):
                continue
            name = str(q.get("name", ""))
            precise = q.get("differs") in ("weight", "probability")
            allowed = str(q.get("allowed", ""))
            note = " (PanDA crashed)" if allowed.startswith(CRASH) else (" (allowed)" if allowed else "")
            out.append({
                "broker": str(b.get("broker", "")), "name": name,
                "ours": shown(str(q.get("ours", "")), ours.get(name), precise),
                "panda": shown(str(q.get("jedi", "")), theirs.get(name), precise),
                "field": f"{q.get('differs', '')}{note}", "why": allowed,
            })  # fmt: skip
    return out


def _plural(n: int, names: tuple[str, str]) -> str:
    return f"{n} {names[0] if n == 1 else names[1]}"


def counts(b: dict[str, Any]) -> dict[str, int]:
    """One broker's name counts: compared, agreeing, and agreeing removals (kept by ``summarised``)."""
    if "counts" in b:
        return dict(b["counts"])
    queues = b.get("queues", [])
    agree = [q for q in queues if q.get("agree", True)]
    return {"names": len(queues), "agree": len(agree),
            "removed": sum(1 for q in agree if q.get("ours") not in (USE, ABSENT))}  # fmt: skip


def summarised(result: dict[str, Any]) -> dict[str, Any]:
    """RESULT with each broker's agreeing rows replaced by their counts: what the panel shows, a few KB instead of
    up to 80 KB for an analysis task on the 700-queue demo grid (the cache keeps many).

    Usage: ``vm.verdict(vm.summarised(check)) == vm.verdict(check)``
    """
    brokers = [
        {**b, "counts": counts(b), "queues": [q for q in b.get("queues", []) if not q.get("agree", True)]}
        for b in result.get("brokers", [])
    ]
    return {**result, "brokers": brokers}


def broker_line(b: dict[str, Any]) -> str:
    """One broker's comparison in a sentence: how many names agree, each side's candidates.

    Usage: ``broker_line(check["brokers"][0])``
    """
    broker = str(b.get("broker", ""))
    names = NAMES.get(broker, ("queue", "queues"))
    n = counts(b)
    ours = len(b.get("ours", {}).get("candidates", {}))
    theirs = len(b.get("jedi", {}).get("candidates", {}))
    label = BROKERS.get(broker, broker)
    if b.get("identical"):
        kept = (
            f"the same {_plural(ours, ('candidate', 'candidates'))} with the same weights"
            if ours
            else "no candidate on either side"
        )
        return f"{label}: {kept}; the same removal code for each of {_plural(n['removed'], names)} removed."
    return (
        f"{label}: {n['agree']} of {_plural(n['names'], names)} agree; ours {_plural(ours, ('candidate', 'candidates'))}, "
        f"PanDA's {theirs}."
    )


def failure_of(result: dict[str, Any]) -> str:
    """PanDA's error on the task in one line (a known PanDA 1.0.4 crash named as such), or ''."""
    for b in result.get("brokers", []):
        error = str(b.get("jedi", {}).get("error", "")).strip()
        if error:
            if b.get("panda_bug"):
                return f"a known PanDA {result.get('panda_version', '')} crash: {b['panda_bug']}"
            return error.splitlines()[-1]
    return ""


def verdict(result: dict[str, Any]) -> PandaVerdict:
    """The panel's content for a finished crosscheck RESULT (``TaskCheck.to_dict``).

    Usage: ``verdict(check).headline  # "PanDA 1.0.4 agrees"``
    """
    version = f"PanDA {result.get('panda_version', '1.0.4')}"
    rows = difference_rows(result)
    lines = [broker_line(b) for b in result.get("brokers", [])]
    failure = failure_of(result)
    if result.get("identical"):
        headline = f"{version} agrees"
    elif failure:
        headline = f"{version} failed on this task"
    else:
        kinds = {NAMES.get(r["broker"], ("queue", "queues")) for r in rows}
        names = kinds.pop() if len(kinds) == 1 else ("name", "names")
        headline = f"{version} differs on {_plural(len(rows), names)}"
    if not result.get("brokers"):
        headline, lines = (
            f"{version}: no broker takes this task",
            ["The task goes through none of the compared brokers."],
        )
    return PandaVerdict(bool(result.get("identical")), headline, lines, rows, profile_note(result), failure)
