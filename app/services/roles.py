"""Who may save gdpconfig: operators named in BROKERAGE_OPERATORS with a shared secret; everyone else views."""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass

OPERATORS_ENV = "BROKERAGE_OPERATORS"  # "alice:secret1,bob:secret2" or "*:shared-secret" (any name, one secret)


@dataclass(frozen=True)
class Verdict:
    """Whether a save may go ahead, and if not, why (shown to the person who tried)."""

    allowed: bool
    who: str
    why: str = ""


def operators(env: str | None = None) -> dict[str, str]:
    """Operator name → secret, parsed from BROKERAGE_OPERATORS (empty when unset: nobody can save).

    Usage: ``operators("alice:s1,bob:s2")["bob"]``
    """
    text = os.environ.get(OPERATORS_ENV, "") if env is None else env
    out: dict[str, str] = {}
    for item in text.split(","):
        name, sep, secret = item.strip().partition(":")
        if sep and name.strip() and secret:
            out[name.strip()] = secret
    return out


def check_operator(user: str | None, secret: str | None, env: str | None = None) -> Verdict:
    """Decide whether USER with SECRET holds the operator role.

    Usage: ``check_operator("alice", "s3cret").allowed``
    """
    ops = operators(env)
    who = (user or "").strip()
    if not ops:
        return Verdict(False, who, f"saving is disabled: no operators are configured (set {OPERATORS_ENV}=name:secret)")
    if not who:
        return Verdict(False, who, "saving needs the operator role: enter your operator name and secret")
    expected = ops.get(who, ops.get("*"))
    if expected is None:
        return Verdict(False, who, f"{who!r} is not an operator: viewers can explore what-ifs but not save")
    if not hmac.compare_digest(expected.encode(), (secret or "").encode()):
        return Verdict(False, who, f"wrong operator secret for {who!r}: nothing was saved")
    return Verdict(True, who)
