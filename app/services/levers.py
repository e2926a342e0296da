"""Levers of one queue or nucleus for one task on the dashboard's grid (``brokerage.whatif.levers``), memoised."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.state import AppState
from app.state.lru import Lru

MEMO = 256  # explanations kept per process: an operator clicks through a task's candidates


class Levers:
    """``brokerage explain`` for the dashboard: where a candidate stands and the verified levers (no grid count:
    the tuning page the levers link to shows each edit's whole-grid impact).

    Usage: ``levers.explain(4242, "CERN", "queue")["levers"]``
    """

    def __init__(self, state: AppState) -> None:
        self.state = state
        self._memo: Lru[dict[str, Any]] = Lru(MEMO)

    def explain(
        self, task: int, name: str, kind: str = "queue", overrides: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The explanation of NAME (a queue, or a nucleus when KIND is "nucleus") for TASK under the stored config
        with OVERRIDES, as ``brokerage explain --json`` prints it. KeyError names an unknown task or candidate."""
        from brokerage.whatif.levers import explain_queue
        from brokerage.whatif.levers_nucleus import explain_nucleus

        src = self.state.source()
        config = self.state.effective_config(overrides)
        key = (src.snap.key, config.fingerprint(), kind, int(task), name)
        fn = explain_nucleus if kind == "nucleus" else explain_queue
        return self._memo.get(key, lambda: fn(src.snap, int(task), name, config, cache=src.grid).to_dict())
