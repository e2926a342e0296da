"""Who may save gdpconfig: operators with hashed secrets, failed attempts rate-limited and logged; everyone else views."""

from __future__ import annotations

import getpass
import hashlib
import hmac
import logging
import os
import secrets
import sys
import time
from dataclasses import dataclass
from functools import cache

from limits import RateLimitItem, parse_many
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter

# "alice:scrypt$<salt>$<hash>,bob:scrypt$..." (print an entry with `python -m app.services.roles NAME`);
# "*:<entry>" lets any name save with one secret. Plain "name:secret" still works for local demos, with a warning.
OPERATORS_ENV = "BROKERAGE_OPERATORS"
# where failed-attempt counters live: memory:// per worker, or redis://host:port so every worker shares them
LIMIT_STORAGE_ENV = "BROKERAGE_AUTH_LIMIT_STORAGE"
# failed attempts allowed per client address and per operator name before further attempts are refused
CLIENT_LIMITS = "10/minute;50/hour"
USER_LIMITS = "5/minute;30/hour"
REFUSED = "unknown operator name or wrong secret: nothing was saved"  # one sentence for both: names stay private
_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}  # interactive-login cost (about 50 ms)

log = logging.getLogger("brokerage.auth")


@dataclass(frozen=True)
class SavePermission:
    """Whether a save may go ahead, and if not, why (shown to the person who tried)."""

    allowed: bool
    who: str
    why: str = ""


def hash_secret(secret: str, salt: bytes | None = None) -> str:
    """The stored form of SECRET: ``scrypt$<salt hex>$<hash hex>``.

    Usage: ``f"alice:{hash_secret('s3cret')}"`` is a BROKERAGE_OPERATORS entry
    """
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode("utf-8", "surrogatepass"), salt=salt, **_SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify_secret(stored: str, secret: str) -> bool:
    """Whether SECRET matches STORED (a hash_secret string, or a plain secret from an old configuration)."""
    given = secret.encode("utf-8", "surrogatepass")
    if stored.startswith("scrypt$"):
        try:
            _, salt, digest = stored.split("$")
            expected = bytes.fromhex(digest)
            got = hashlib.scrypt(given, salt=bytes.fromhex(salt), **_SCRYPT)
        except ValueError:
            log.error("malformed hashed secret in %s; expected scrypt$<salt>$<hash>", OPERATORS_ENV)
            return False
        return hmac.compare_digest(expected, got)
    _burn(given)  # plain entries cost as much as hashed ones, so timing does not tell them apart
    return hmac.compare_digest(stored.encode("utf-8", "surrogatepass"), given)


def _burn(given: bytes) -> None:
    hashlib.scrypt(given, salt=b"\0" * 16, **_SCRYPT)


def operators(env: str | None = None) -> dict[str, str]:
    """Operator name → stored secret (hashed or plain), parsed from BROKERAGE_OPERATORS (empty: nobody can save).

    Usage: ``operators("alice:s1,bob:s2")["bob"]``
    """
    text = os.environ.get(OPERATORS_ENV, "") if env is None else env
    out: dict[str, str] = {}
    for item in text.split(","):
        name, sep, secret = item.strip().partition(":")
        if sep and name.strip() and secret:
            out[name.strip()] = secret
    if any(not s.startswith("scrypt$") for s in out.values()):
        _warn_plain()
    return out


@cache
def _warn_plain() -> None:
    log.warning("%s holds plain-text secrets; store hashes (python -m app.services.roles NAME)", OPERATORS_ENV)


class AttemptLimiter:
    """Counts failed operator checks per client address and per name; refuses checks once either is over its limit.

    Usage: ``limiter.blocked("10.0.0.1", "alice")`` before checking, ``limiter.failed(...)`` after a failure
    """

    def __init__(self, storage_uri: str = "memory://") -> None:
        self.storage = storage_from_string(storage_uri)
        self.window = MovingWindowRateLimiter(self.storage)
        self.per_client: list[RateLimitItem] = parse_many(CLIENT_LIMITS)
        self.per_user: list[RateLimitItem] = parse_many(USER_LIMITS)

    def _checks(self, client: str, user: str) -> list[tuple[RateLimitItem, str, str]]:
        return [(item, "client", client) for item in self.per_client] + [(item, "user", user) for item in self.per_user]

    def blocked(self, client: str, user: str) -> int:
        """Seconds until CLIENT and USER may try again (0: they may try now)."""
        wait = 0
        for item, kind, who in self._checks(client, user):
            if not self.window.test(item, "operator-check", kind, who):
                reset, _ = self.window.get_window_stats(item, "operator-check", kind, who)
                wait = max(wait, int(reset - time.time()) + 1)
        return wait

    def failed(self, client: str, user: str) -> None:
        """Record one failed check of USER from CLIENT."""
        for item, kind, who in self._checks(client, user):
            self.window.hit(item, "operator-check", kind, who)

    def reset(self) -> None:
        """Forget every counter (tests, or an operator unlocking after a known incident)."""
        self.storage.reset()


@cache
def limiter() -> AttemptLimiter:
    """The process's attempt limiter (storage from BROKERAGE_AUTH_LIMIT_STORAGE, default in memory)."""
    return AttemptLimiter(os.environ.get(LIMIT_STORAGE_ENV, "memory://"))


def client_address() -> str:
    """The requesting client's address inside a Flask request (a Dash callback too), else 'local'."""
    from flask import has_request_context, request

    if has_request_context():
        return request.remote_addr or "unknown"
    return "local"


def check_operator(
    user: str | None, secret: str | None, env: str | None = None, client: str | None = None
) -> SavePermission:
    """Decide whether USER with SECRET holds the operator role; failures are rate-limited and logged.

    An unknown name and a wrong secret get the same answer, so names cannot be discovered by trying.
    Usage: ``check_operator("alice", "s3cret").allowed``
    """
    ops = operators(env)
    who = (user or "").strip()
    if not ops:
        return SavePermission(
            False, who, f"saving is disabled: no operators are configured (set {OPERATORS_ENV}=name:secret)"
        )
    if not who:
        return SavePermission(False, who, "saving needs the operator role: enter your operator name and secret")
    client = client or client_address()
    wait = limiter().blocked(client, who)
    if wait:
        log.warning("operator check refused (rate limit): user=%r client=%s", who[:64], client)
        return SavePermission(False, who, f"too many failed attempts: try again in {wait} s")
    expected = ops.get(who, ops.get("*"))
    if expected is None:
        _burn((secret or "").encode("utf-8", "surrogatepass"))  # as slow as a real check
        ok = False
    else:
        ok = verify_secret(expected, secret or "")
    if not ok:
        limiter().failed(client, who)
        log.warning("operator check failed: user=%r client=%s", who[:64], client)
        return SavePermission(False, who, REFUSED)
    return SavePermission(True, who)


def main(argv: list[str] | None = None) -> int:
    """Print a BROKERAGE_OPERATORS entry for NAME with a secret read from the terminal (never echoed).

    Usage: ``python -m app.services.roles alice``
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or ":" in args[0] or "," in args[0]:
        print("usage: python -m app.services.roles NAME   (no ':' or ',' in NAME)", file=sys.stderr)
        return 2
    secret = getpass.getpass(f"secret for {args[0]}: ")
    if not secret or secret != getpass.getpass("again: "):
        print("the secrets differ or are empty; nothing printed", file=sys.stderr)
        return 2
    print(f"{args[0]}:{hash_secret(secret)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
