"""Error boundary for page layouts and callbacks: a failure becomes an inline message, never a traceback."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from app.components.layout import error_alert

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def guarded(where: str) -> Callable[[F], F]:
    """Wrap a layout function or single-output callback so exceptions render as an inline alert."""

    def deco(fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                from dash.exceptions import PreventUpdate

                if isinstance(exc, PreventUpdate):
                    raise
                log.exception("%s failed", where)
                return error_alert(where, exc)

        return wrapper  # type: ignore[return-value]

    return deco
