"""Operator checks (issue #19): hashed secrets, one answer for unknown names and wrong secrets, rate limits, logs."""

from __future__ import annotations

import logging
import time

import pytest

from app.services.roles import REFUSED, check_operator, hash_secret, limiter, verify_secret


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


def test_failed_attempts_are_rate_limited_per_user_and_per_client() -> None:
    """After a few failures the name is refused from any client, and a client is refused for any name."""
    env = f"alice:{hash_secret('s3cret')},bob:{hash_secret('b0b')}"
    for i in range(5):
        assert check_operator("alice", f"guess{i}", env=env, client=f"10.1.0.{i}").why == REFUSED
    blocked = check_operator("alice", "s3cret", env=env, client="10.9.9.9")
    assert not blocked.allowed and "too many failed attempts" in blocked.why
    limiter().reset()
    for i in range(10):
        check_operator(f"user{i}", "guess", env=env, client="10.2.0.1")
    assert "too many failed attempts" in check_operator("bob", "b0b", env=env, client="10.2.0.1").why
    assert check_operator("bob", "b0b", env=env, client="10.2.0.2").allowed


def test_brute_force_is_slowed_to_a_few_guesses(caplog: pytest.LogCaptureFixture) -> None:
    """300 wrong secrets from one client get at most 10 real checks; every failure is logged as such."""
    env = f"alice:{hash_secret('s3cret')}"
    t0 = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="brokerage.auth"):
        verdicts = [check_operator("alice", f"g{i}", env=env, client="10.3.0.1") for i in range(300)]
    elapsed = time.perf_counter() - t0
    checked = sum(v.why == REFUSED for v in verdicts)
    assert checked <= 10 and all(not v.allowed for v in verdicts)
    assert sum("operator check failed" in r.getMessage() for r in caplog.records) == checked
    assert sum("rate limit" in r.getMessage() for r in caplog.records) == 300 - checked
    assert elapsed < 30
