"""Adapter from the core's progress callbacks (done, total) to a Dash background callback's progress bar."""

from __future__ import annotations

from collections.abc import Callable

SetProgress = Callable[[tuple[int, str]], None]


def progress_bar(set_progress: SetProgress | None, unit: str = "") -> Callable[[int, int], None]:
    """A (done, total) callback that moves a dbc.Progress (value, label) through SET_PROGRESS; a no-op without one.

    Usage: ``run_grid(snap, cfg, progress=progress_bar(set_progress))``
    """

    def report(done: int, total: int) -> None:
        if set_progress is not None and total > 0:
            label = f"{done:,} / {total:,} {unit}" if unit else f"{int(100 * done / total)} %"
            set_progress((int(100 * done / total), label))

    return report
