"""The ``brokerage serve`` command (an entry point of the ``brokerage.commands`` group): the development server."""

from __future__ import annotations

import ipaddress
import sys

import click


def is_loopback(host: str) -> bool:
    """Whether HOST only listens on this machine (127.0.0.0/8, ::1 or localhost).

    Usage: ``is_loopback("127.0.0.1") and not is_loopback("0.0.0.0")``
    """
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, envvar="HOST", help="address to listen on ($HOST)")
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535), envvar="PORT",
              help="port to listen on ($PORT)")  # fmt: skip
@click.option("--debug", is_flag=True, help="Dash debug mode (reloader off); loopback hosts only")
@click.option(
    "--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://host:8786 (default: an embedded cluster)"
)
@click.option(
    "--workers", type=click.IntRange(0, 1024), help="worker processes of the embedded cluster (0: in-process)"
)
def serve(host: str, port: int, debug: bool, scheduler: str | None, workers: int | None) -> None:
    """Start the dashboard (development server; see the README for gunicorn)."""
    if scheduler is not None or workers is not None:
        from brokerage.runs import engine  # dask loads only when a command runs, never for `brokerage --help`

        engine.configure(address=scheduler, workers=workers)
    if debug and not is_loopback(host):
        # debug mode shows tracebacks and an interactive debugger on any error: never to other machines
        click.echo(
            f"error: --debug shows tracebacks and an interactive debugger, so it only serves a loopback host "
            f"(127.0.0.1, ::1, localhost), not {host!r}; drop --debug or use --host 127.0.0.1",
            err=True,
        )
        sys.exit(2)
    from app.main import app, services  # building the Dash app is slow: only when serving

    services.whatif.warm()  # the overview census and tuning baselines are ready by the first visit
    app.run(host=host, port=port, debug=debug)
