"""Hand-written inline SVG horizontal bar charts: no script, no external reference, readable offline."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

BLUE = "#3b6ea5"
GREY = "#d5dbe3"
TEXT = "#1f2933"
MUTED = "#5f6b7a"
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', sans-serif"
FONT_PX = 12
# Glyph widths at FONT_PX, generous for common sans fonts, to size the label and value columns without measuring
# text in a browser (an underestimate would clip labels at the left edge).
UPPER_PX, LOWER_PX, DIGIT_PX, NARROW_PX, OTHER_PX = 8.6, 6.9, 7.7, 4.4, 7.7
NARROW = frozenset(" .,:;'|!iljtfrI-()[]")
ROW_PX = 22
BAR_PX = 14
PAD_PX = 8


@dataclass(frozen=True)
class Bar:
    """One bar: LABEL, VALUE, an optional lighter OUTLINE bar behind it (e.g. the count before a filter),
    the TEXT written at its end (default: the formatted value) and a hover TIP."""

    label: str
    value: float
    outline: float | None = None
    text: str | None = None
    tip: str | None = None


def fmt_number(x: float) -> str:
    """Compact human form: thousands separators for large values, three significant digits for small ones.

    Usage: ``fmt_number(1234.5) == "1,234"``
    """
    if x != x:  # NaN
        return "n/a"
    a = abs(x)
    if a >= 100 or float(x).is_integer():
        return f"{x:,.0f}"
    if a >= 1:
        return f"{x:.3g}" if a < 10 else f"{x:.1f}"
    return f"{x:.3g}"


def text_px(text: str) -> float:
    """Estimated width of TEXT in pixels at FONT_PX.

    Usage: ``text_px("CERN-PROD") > text_px("cern")``
    """
    w = 0.0
    for ch in text:
        if ch in NARROW:
            w += NARROW_PX
        elif ch.isupper():
            w += UPPER_PX
        elif ch.isdigit():
            w += DIGIT_PX
        elif ch.islower():
            w += LOWER_PX
        else:
            w += OTHER_PX
    return w


def _clip(label: str, n: int) -> str:
    return label if len(label) <= n else label[: n - 1] + "…"


def bar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    width: int = 900,
    color: str = BLUE,
    max_label_chars: int = 36,
    chart_id: str = "",
) -> str:
    """An ``<svg>`` horizontal bar chart of BARS (top to bottom as given), TITLE as its accessible name.

    Usage: ``bar_chart([Bar("-status", 12), Bar("-cpucore", 4)], title="skips per criteria")``
    """
    ident = f' id="{escape(chart_id)}"' if chart_id else ""
    head = (
        f'<svg{ident} class="chart" role="img" aria-label="{escape(title)}" '
        f'font-family="{escape(FONT)}" font-size="{FONT_PX}"'
    )
    if not bars:
        return (
            f'{head} width="{width}" height="36" viewBox="0 0 {width} 36"><title>{escape(title)}</title>'
            f'<text x="8" y="22" fill="{MUTED}">nothing to show</text></svg>'
        )
    labels = [_clip(b.label, max_label_chars) for b in bars]
    texts = [b.text if b.text is not None else fmt_number(b.value) for b in bars]
    label_w = round(max(text_px(s) for s in labels)) + 12
    text_w = round(max(text_px(s) for s in texts)) + 12
    plot_w = max(60, width - label_w - text_w - PAD_PX)
    top = max(max(b.value, b.outline or 0.0) for b in bars)
    scale = plot_w / top if top > 0 else 0.0
    height = len(bars) * ROW_PX + 2 * PAD_PX
    parts = [f'{head} width="{width}" height="{height}" viewBox="0 0 {width} {height}"><title>{escape(title)}</title>']
    for i, (b, label, text) in enumerate(zip(bars, labels, texts, strict=True)):
        y = PAD_PX + i * ROW_PX
        bar_y = y + (ROW_PX - BAR_PX) / 2
        mid = y + ROW_PX / 2 + FONT_PX * 0.35
        w = max(0.0, b.value) * scale
        ow = max(0.0, b.outline or 0.0) * scale
        tip = escape(b.tip or f"{b.label}: {text}")
        parts.append(f"<g><title>{tip}</title>")
        parts.append(f'<text x="{label_w - 6}" y="{mid:.1f}" text-anchor="end" fill="{TEXT}">{escape(label)}</text>')
        if ow > 0:
            parts.append(f'<rect x="{label_w}" y="{bar_y:.1f}" width="{ow:.1f}" height="{BAR_PX}" fill="{GREY}"/>')
        # a value that rounds to no width still shows as a hairline, so a non-zero bar never looks empty
        shown = max(w, 1.0) if b.value > 0 else 0.0
        parts.append(f'<rect x="{label_w}" y="{bar_y:.1f}" width="{shown:.1f}" height="{BAR_PX}" fill="{color}"/>')
        parts.append(f'<text x="{label_w + max(w, ow) + 5:.1f}" y="{mid:.1f}" fill="{MUTED}">{escape(text)}</text>')
        parts.append("</g>")
    parts.append(
        f'<line x1="{label_w}" y1="{PAD_PX - 2}" x2="{label_w}" y2="{height - PAD_PX + 2}" stroke="{MUTED}" '
        'stroke-width="1"/></svg>'
    )
    return "".join(parts)
