"""In-page timing for browser benchmarks: from the user's input event to the frame that shows the result."""

from __future__ import annotations

from typing import Any

# Installed before the page loads. The start is the trusted input event's own timestamp (the moment the
# operator clicked or pressed Enter); the end is the first animation frame after the awaited DOM state appears,
# i.e. the frame that paints it. Playwright's own waits (actionability checks, polling) are not counted.
INIT_SCRIPT = """
window.__bench = {start: null, done: null, check: null, also: null, alsoDone: null};
for (const type of ['click', 'keydown']) {
  document.addEventListener(type, e => {
    if (type === 'keydown' && e.key !== 'Enter') { return; }
    if (window.__bench.check && window.__bench.start === null) { window.__bench.start = e.timeStamp; }
  }, true);
}
new MutationObserver(() => {
  const b = window.__bench;
  if (b.check && b.start !== null && b.done === null && b.check()) {
    b.done = -1;
    requestAnimationFrame(t => { b.done = t; });
  }
  if (b.also && b.start !== null && b.alsoDone === null && b.also()) {
    b.alsoDone = -1;
    requestAnimationFrame(t => { b.alsoDone = t; });
  }
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
"""


def arm(page: Any, condition_js: str, start: float | None = None, also_js: str | None = None) -> None:
    """Watch for CONDITION_JS (a JS expression) after the next click or Enter, or from START (a page timestamp);
    ALSO_JS is a second state timed from the same input (read it with ``also_elapsed_ms``)."""
    page.evaluate(
        "([c, s, a]) => { window.__bench = {start: s, done: null, check: new Function('return (' + c + ');'),"
        " also: a ? new Function('return (' + a + ');') : null, alsoDone: null}; }",
        [condition_js, start, also_js],
    )


def also_elapsed_ms(page: Any, timeout_ms: int = 60_000) -> float:
    """Wait for the ALSO_JS state of the last ``arm`` to be painted; milliseconds from the same input event."""
    page.wait_for_function("window.__bench.alsoDone !== null && window.__bench.alsoDone > 0", timeout=timeout_ms)
    return float(page.evaluate("window.__bench.alsoDone - window.__bench.start"))


def elapsed_ms(page: Any, timeout_ms: int = 60_000) -> float:
    """Wait for the armed condition to be painted; milliseconds from the input event to that frame."""
    page.wait_for_function("window.__bench.done !== null && window.__bench.done > 0", timeout=timeout_ms)
    return float(page.evaluate("window.__bench.done - window.__bench.start"))


def started_at(page: Any) -> float:
    """The page timestamp of the input event the last measurement started from."""
    return float(page.evaluate("window.__bench.start"))
