"""Auto-refresh choices read from the URL: off or 1, 5, 15 minutes, nothing else."""

from __future__ import annotations

import json

import pytest
from plotly.utils import PlotlyJSONEncoder

from app.viewmodels.refresh import interval_ms, refresh_minutes, refresh_options


@pytest.mark.parametrize(("raw", "minutes"), [("1", 1), ("5", 5), ("15", 15), ("5m", 5), (None, 0), ("", 0),
                                              ("0", 0), ("2", 0), ("-5", 0), ("abc", 0), ("60", 0)])  # fmt: skip
def test_only_the_offered_intervals_are_taken_from_the_url(raw: object, minutes: int) -> None:
    """?refresh= takes off / 1 / 5 / 15 minutes; any other value leaves refresh off."""
    assert refresh_minutes(raw) == minutes


def test_options_and_interval() -> None:
    """The radio offers off, 1 min, 5 min, 15 min; the interval is the minutes in ms (a minute while off)."""
    assert [o["label"].strip() for o in refresh_options()] == ["off", "1 min", "5 min", "15 min"]
    assert (interval_ms(5), interval_ms(0)) == (300_000, 60_000)


@pytest.mark.parametrize("module", ["overview", "queues", "tasks", "stabilizer"])
def test_each_view_with_time_has_the_control(app_client: object, module: str) -> None:
    """Overview, queues, task states and stabilizer are built with the refresh control showing the URL's pick."""
    import dash

    layout = dash.page_registry[f"app.pages.{module}"]["layout"](refresh="5")
    text = json.dumps(layout, cls=PlotlyJSONEncoder)
    assert '"id": "refresh-every"' in text and '"value": 5' in text and '"id": "refresh-tick"' in text
