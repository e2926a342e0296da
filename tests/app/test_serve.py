"""`brokerage serve` (issue #19): debug mode, with its tracebacks and debugger, only ever listens on loopback."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from app.serve import is_loopback, serve


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "example.org", "192.168.0.1"])
def test_debug_on_a_non_loopback_host_is_refused(host: str) -> None:
    """--debug with a host other machines can reach exits 2 and says why, before anything is served."""
    result = CliRunner().invoke(serve, ["--host", host, "--debug"])
    assert result.exit_code == 2 and "loopback" in result.output and "debugger" in result.output


def test_loopback_hosts_are_recognised() -> None:
    """127.0.0.0/8, ::1 and localhost are loopback; the wildcard and public addresses are not."""
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "8.8.8.8", "host.example"))
