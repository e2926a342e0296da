"""Report files are bounded per user (issue #34 item 9): one user's large report never evicts another's files."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

import pytest

from app.services.reports import KEEP_S, ReportRefused, Reports, owner_of
from app.services.work import ReportFile


def _file(size: int) -> ReportFile:
    return ReportFile("r.csv", "text/csv", b"x" * size, secrets.token_hex(8))


def _reports(tmp_path: Path) -> Reports:
    """Bounds made small: 3 files or 1,000 bytes per user, 2,500 bytes in all."""
    return Reports(None, None, tmp_path, max_files=3, max_bytes=1000, total_bytes=2500)  # type: ignore[arg-type]


def test_a_users_new_report_evicts_only_that_users_oldest(tmp_path: Path) -> None:
    """Beyond 3 files or 1,000 bytes, the user's own oldest files go; 49 other users keep every file."""
    reports = _reports(tmp_path)
    others = [reports.save(_file(10), f"10.0.1.{i}") for i in range(49)]
    mine = [reports.save(_file(300), "10.0.0.7") for _ in range(3)]
    newest = reports.save(_file(450), "10.0.0.7")  # 300 * 3 + 450 > 1000: the two oldest of mine go
    assert all(m.path.is_file() for m in others)
    assert [m.path.is_file() for m in mine] == [False, False, True] and newest.path.is_file()
    assert reports.path_of(newest.path.parent.name, "r.csv") == newest.path


def test_a_report_above_the_users_bound_is_refused_and_nothing_is_removed(tmp_path: Path) -> None:
    """A single file above the per-user bound (1.1 GiB in the issue, 1,001 bytes here) is refused: no file of any
    user is removed and nothing is written."""
    reports = _reports(tmp_path)
    kept = [reports.save(_file(100), f"10.0.1.{i}") for i in range(5)]
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(ReportRefused, match="more than"):
        reports.save(_file(1001), "10.0.0.7")
    assert sorted(tmp_path.rglob("*")) == before and all(m.path.is_file() for m in kept)


def test_when_everyone_together_is_full_a_new_report_waits_for_expiry(tmp_path: Path) -> None:
    """At the total bound a new report is refused (other users' files stay) until files expire after KEEP_S."""
    reports = _reports(tmp_path)
    kept = [reports.save(_file(800), f"10.0.1.{i}") for i in range(3)]  # 2,400 of 2,500 bytes
    with pytest.raises(ReportRefused, match="storage is full"):
        reports.save(_file(200), "10.0.0.7")
    assert all(m.path.is_file() for m in kept)
    old = time.time() - KEEP_S - 60
    os.utime(kept[0].path, (old, old))
    assert reports.save(_file(200), "10.0.0.7").path.is_file() and not kept[0].path.exists()


def test_files_are_filed_under_a_digest_of_the_address(tmp_path: Path) -> None:
    """Report folders are named by a digest, so client addresses are not written to disk."""
    made = _reports(tmp_path).save(_file(1), "10.0.0.7")
    assert made.path.parent.parent.name == owner_of("10.0.0.7") and "10.0.0.7" not in str(made.path)
