"""The auto-refresh control of a view with time: off / 1 / 5 / 15 minutes, and when the view was built."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from dash import dcc, html

from app import ids
from app.viewmodels.refresh import interval_ms, refresh_minutes, refresh_options


def refresh_control(raw: Any) -> html.Div:
    """The radio of refresh intervals (RAW: the URL's ?refresh=), the interval that reloads the view, and the time
    the view was built (UTC).

    Usage: ``refresh_control(refresh)`` in a page layout that takes ``refresh`` from its URL
    """
    minutes = refresh_minutes(raw)
    built = datetime.now(UTC)
    return html.Div(
        [
            html.Label("auto-refresh", htmlFor=ids.REFRESH_EVERY),
            dcc.RadioItems(id=ids.REFRESH_EVERY, options=refresh_options(), value=minutes, inline=True,
                           inputClassName="me-1", labelClassName="me-2"),
            html.Span(f"view built {built:%H:%M:%S} UTC", id=ids.REFRESH_AT, className="small text-muted",
                      **{"data-built": str(time.time_ns())}),
            dcc.Interval(id=ids.REFRESH_TICK, interval=interval_ms(minutes), disabled=minutes == 0),
            dcc.Store(id=ids.REFRESH_SINK),
        ],
        className="refresh-control",
    )  # fmt: skip
