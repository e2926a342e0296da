"""What a command tells a person while and before it works: progress on stderr, and "did you mean" for names."""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable, Iterable

import click

SUGGESTIONS = 5  # names offered for an unknown one
REPORT_EVERY = 25  # percent between progress lines when stderr is not a terminal


def similar_names(name: str, choices: Iterable[str], limit: int = SUGGESTIONS) -> list[str]:
    """Names a person likely meant by NAME: prefix matches, then substring matches, then close spellings.

    Usage: ``similar_names("CERN", nuclei)  # ["CERN-PROD"]``
    """
    pool = sorted(set(map(str, choices)))
    low = name.lower()
    prefix = [c for c in pool if c.lower().startswith(low)]
    inside = [c for c in pool if low in c.lower() and c not in prefix]
    close = difflib.get_close_matches(name, pool, n=limit, cutoff=0.6)
    return list(dict.fromkeys([*prefix, *inside, *close]))[:limit]


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> str:
    """One sentence for an unknown NAME of KIND, with the likely meant names when there are any.

    Usage: ``fail(unknown_name("nucleus", "CERN", nuclei))``
    """
    pool = list(choices)
    guesses = similar_names(name, pool)
    hint = f"; did you mean {', '.join(guesses)}?" if guesses else f" ({len(pool)} known)"
    return f"unknown {kind} {name!r}{hint}"


def progress_line(label: str) -> Callable[[int, int], None]:
    """A (done, total) callback that shows LABEL's progress on stderr: one updating line on a terminal, a line
    every REPORT_EVERY percent otherwise (logs stay short).

    Usage: ``runs.run_grid(snap, config, progress=progress_line("brokering the grid"))``
    """
    tty = sys.stderr.isatty()
    last = [-REPORT_EVERY]

    def show(done: int, total: int) -> None:
        pct = 100 * done // max(total, 1)
        if tty:
            click.echo(f"\r{label}: {pct:3d} % ({done}/{total})", err=True, nl=done >= total)
        elif pct - last[0] >= REPORT_EVERY or done >= total:
            last[0] = pct
            click.echo(f"{label}: {pct} % ({done}/{total})", err=True)

    return show
