"""A text progress bar for long reports: redrawn in place on a terminal, a few plain lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
REDRAW_S = 0.1  # a terminal redraw at most this often
LINE_STEPS = 4  # lines printed when the stream is not a terminal: 25 %, 50 %, 75 %, 100 %


def bar_text(done: int, total: int, unit: str = "tasks", width: int = WIDTH) -> str:
    """``[#####-----] 812/1915 tasks``.

    Usage: ``bar_text(1, 2) == "[" + "#" * 15 + "-" * 15 + "] 1/2 tasks"``
    """
    filled = width if total <= 0 else min(width, done * width // total)
    return f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total} {unit}"


class ProgressBar:
    """A ``progress(done, total)`` callback drawing a bar on STREAM (stderr by default).

    Usage: ``bar = ProgressBar(); build_report(..., progress=bar); bar.close()``
    """

    def __init__(self, stream: TextIO | None = None, unit: str = "tasks") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.unit = unit
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self._step = -1
        self._open = False

    def __call__(self, done: int, total: int) -> None:
        if self.tty:
            now = time.monotonic()
            if done < total and now - self._last_draw < REDRAW_S:
                return
            self._last_draw = now
            self.stream.write("\r" + bar_text(done, total, self.unit))
            self._open = True
        else:
            step = LINE_STEPS if total <= 0 else done * LINE_STEPS // total
            if step == self._step:
                return
            self._step = step
            self.stream.write(bar_text(done, total, self.unit) + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the in-place line on a terminal."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
