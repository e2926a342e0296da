"""The ``brokerage serve`` command (an entry point of the ``brokerage.commands`` group): the development server."""

from __future__ import annotations

import click

from brokerage.runs.options import cluster_options


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8050, show_default=True, type=click.IntRange(1, 65535))
@click.option("--debug", is_flag=True, help="Dash debug mode (reloader off)")
@cluster_options
def serve(host: str, port: int, debug: bool) -> None:
    """Start the dashboard (development server; see the README for gunicorn)."""
    from app.main import app, services  # building the Dash app is slow: only when serving

    services.whatif.warm()  # the overview census and tuning baselines are ready by the first visit
    app.run(host=host, port=port, debug=debug)
