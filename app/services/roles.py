"""Who may save gdpconfig: operators with hashed secrets, failed attempts rate-limited and logged; everyone else views."""

from __future__ import annotations

import getpass
import hashlib
import hmac
import logging
import os
import secrets
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from app.services.attempts import AttemptLimiter, counters_from

# "alice:scrypt$<salt>$<hash>,bob:scrypt$..." (print an entry with `python -m app.services.roles NAME`);
# "*:<entry>" lets any name save with one secret. Plain "name:secret" still works for local demos, with a warning.
OPERATORS_ENV = "BROKERAGE_OPERATORS"
# where failed-attempt counters live (app/services/attempts.py): a SQLite file in the cache folder by default,
# shared by the workers of one machine; redis://host:port/db shares them between machines
LIMIT_STORAGE_ENV = "BROKERAGE_AUTH_LIMIT_STORAGE"
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


def refuse_plain_secrets(env: str | None = None) -> None:
    """Stop start-up when BROKERAGE_OPERATORS holds a plain-text secret (the production command calls this).

    Usage: ``refuse_plain_secrets()`` in gunicorn's on_starting
    """
    plain = sorted(name for name, secret in operators(env).items() if not secret.startswith("scrypt$"))
    if plain:
        raise SystemExit(
            f"{OPERATORS_ENV} holds plain-text secrets for {', '.join(repr(n) for n in plain)}: store hashes "
            "instead (python -m app.services.roles NAME prints an entry); plain entries only work with `brokerage serve`"
        )


@cache
def _warn_plain() -> None:
    log.warning("%s holds plain-text secrets; store hashes (python -m app.services.roles NAME)", OPERATORS_ENV)


@cache
def limiter() -> AttemptLimiter:
    """The process's attempt limiter: counters shared by every worker (BROKERAGE_AUTH_LIMIT_STORAGE: redis://...
    or sqlite:///path; by default a SQLite file in the cache folder)."""
    root = Path(__file__).resolve().parent.parent.parent
    folder = Path(os.environ.get("BROKERAGE_CACHE_DIR", str(root / "data" / "cache")))
    return AttemptLimiter(counters_from(os.environ.get(LIMIT_STORAGE_ENV, "").strip(), folder))


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
    wait = limiter().reserve(client, who)  # counted as failed until the secret is found right
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
        log.warning("operator check failed: user=%r client=%s", who[:64], client)
        return SavePermission(False, who, REFUSED)
    limiter().succeeded(client, who)
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
