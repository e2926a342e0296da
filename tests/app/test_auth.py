"""Operator checks (issue #19): hashed secrets, one answer for unknown names and wrong secrets, rate limits, logs."""

from __future__ import annotations

import logging
import multiprocessing
import os
import tempfile
import time
from pathlib import Path

import pytest

from app.services.attempts import AttemptLimiter, SqliteCounters, counters_from, wait_after
from app.services.roles import REFUSED, check_operator, hash_secret, limiter, refuse_plain_secrets, verify_secret


def test_hashed_secrets_verify_and_hide_the_secret() -> None:
    """A hashed entry verifies the right secret only, and its text does not contain the secret."""
    stored = hash_secret("s3cret")
    assert stored.startswith("scrypt$") and "s3cret" not in stored
    assert verify_secret(stored, "s3cret") and not verify_secret(stored, "s3cret!")
    assert check_operator("alice", "s3cret", env=f"alice:{stored}", client="10.0.0.1").allowed


def test_unknown_name_and_wrong_secret_get_the_same_answer() -> None:
    """A viewer cannot tell an unknown operator name from a wrong secret."""
    env = f"alice:{hash_secret('s3cret')}"
    unknown = check_operator("mallory", "x", env=env, client="10.0.0.2")
    wrong = check_operator("alice", "x", env=env, client="10.0.0.3")
    assert not unknown.allowed and not wrong.allowed and unknown.why == wrong.why == REFUSED


def test_failed_attempts_are_limited_per_client_and_name_not_per_name() -> None:
    """After 5 failures of a name from one client that client must wait; the owner, from another address, still
    gets in (a stranger cannot lock the owner out); a client failing across 20 names waits for every name."""
    env = f"alice:{hash_secret('s3cret')},bob:{hash_secret('b0b')}"
    for i in range(5):
        assert check_operator("alice", f"guess{i}", env=env, client="10.1.0.1").why == REFUSED
    blocked = check_operator("alice", "s3cret", env=env, client="10.1.0.1")
    assert not blocked.allowed and blocked.why == "too many failed attempts: try again in 1 s"
    assert check_operator("alice", "s3cret", env=env, client="10.9.9.9").allowed
    limiter().reset()
    for i in range(20):
        check_operator(f"user{i}", "guess", env=env, client="10.2.0.1")
    assert "too many failed attempts" in check_operator("bob", "b0b", env=env, client="10.2.0.1").why
    assert check_operator("bob", "b0b", env=env, client="10.2.0.2").allowed


def test_the_wait_doubles_and_a_success_clears_it() -> None:
    """Failure k beyond the 5 free ones makes the next attempt wait 2**(k-1) s (1, 2, 4, ... up to 300 s) after
    it; a right secret resets the pair's count."""
    assert [wait_after(n, 5, 0) for n in (4, 5, 6, 7, 13, 40)] == [0, 1, 2, 4, 256, 300]
    assert wait_after(7, 5, 1.5) == 2.5
    lim = AttemptLimiter(SqliteCounters(Path(tempfile.mkdtemp()) / "a.sqlite"))
    assert [lim.reserve("c", "alice") for _ in range(6)] == [0, 0, 0, 0, 0, 1]
    lim.succeeded("c", "alice")
    assert lim.reserve("c", "alice") == 0


def _hammer(path: str, start: float) -> int:
    """In another process: 20 attempts on one pair as fast as possible, all at the clock time START (so no wait
    can run out, however slowly the machine goes); how many were let through."""
    counters = SqliteCounters(Path(path))
    while time.time() < start:
        time.sleep(0.001)
    return sum(counters.reserve([("pair", 5)], start) == 0 for _ in range(20))


def test_concurrent_attempts_from_many_processes_share_one_count() -> None:
    """Four processes trying the same name from the same client at once get 5 checks between them, not 5 each:
    the count and the check are one transaction in the shared counter file."""
    path = str(Path(tempfile.mkdtemp()) / "shared.sqlite")
    SqliteCounters(Path(path))
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        start = time.time() + 2
        passed = pool.starmap(_hammer, [(path, start)] * 4)
    assert sum(passed) == 5, passed


def test_plain_text_secrets_are_refused_at_start_up() -> None:
    """The production start-up refuses BROKERAGE_OPERATORS with a plain-text secret, naming the entry (hashed
    entries pass)."""
    with pytest.raises(SystemExit, match="plain-text secrets for 'bob'"):
        refuse_plain_secrets(f"alice:{hash_secret('s')},bob:hunter2")
    refuse_plain_secrets(f"alice:{hash_secret('s')}")


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="set REDIS_URL (scripts/services.sh start)")
def test_redis_counters_behave_as_the_file() -> None:
    """With BROKERAGE_AUTH_LIMIT_STORAGE=redis://..., the same 5 free failures then a 1 s wait, in one script."""
    lim = AttemptLimiter(counters_from(os.environ["REDIS_URL"], Path(tempfile.mkdtemp())))
    lim.reset()
    assert [lim.reserve("c", "alice") for _ in range(6)] == [0, 0, 0, 0, 0, 1]
    lim.succeeded("c", "alice")
    assert lim.reserve("c", "alice") == 0
    lim.reset()


def test_brute_force_is_slowed_to_a_few_guesses(caplog: pytest.LogCaptureFixture) -> None:
    """300 wrong secrets from one client get at most 6 real checks; every failure is logged as such."""
    env = f"alice:{hash_secret('s3cret')}"
    t0 = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="brokerage.auth"):
        verdicts = [check_operator("alice", f"g{i}", env=env, client="10.3.0.1") for i in range(300)]
    elapsed = time.perf_counter() - t0
    checked = sum(v.why == REFUSED for v in verdicts)
    assert checked <= 6 and all(not v.allowed for v in verdicts)
    assert sum("operator check failed" in r.getMessage() for r in caplog.records) == checked
    assert sum("rate limit" in r.getMessage() for r in caplog.records) == 300 - checked
    assert elapsed < 30
