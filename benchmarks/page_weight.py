"""Bytes a browser transfers for each page's first load, compressed as served (the app's own bytes and the scripts)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PAGES = ("/", "/queues", "/nuclei", "/network", "/stabilizer", "/tasks", "/tuning", "/dirac")
APP_ROUTES = ("/_dash-layout", "/_dash-dependencies")
ENCODING = {"Accept-Encoding": "gzip, br"}


def measure(client: Any, path: str) -> tuple[int, int]:
    """(transferred, uncompressed) bytes of PATH."""
    plain = client.get(path)
    packed = client.get(path, headers=ENCODING)
    return len(packed.data), len(plain.data)


def main() -> None:
    """Measure every page against the app's configured data source (the embedded database by default)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    from app.main import app

    client = app.server.test_client()
    shared = {route: measure(client, route) for route in APP_ROUTES}
    html = client.get("/").data.decode()
    scripts = re.findall(r'<script src="([^"]+)"', html) + re.findall(r'<link rel="stylesheet" href="([^"]+)"', html)
    library = sum(measure(client, src.split("?")[0] if src.startswith("/") else src)[0] for src in scripts)
    rows = []
    for page in PAGES:
        sent, raw = measure(client, page)
        app_bytes = sent + sum(s for s, _ in shared.values())
        rows.append({"page": page, "html_bytes": sent, "html_uncompressed": raw, "app_first_load_bytes": app_bytes})
    out = {"pages": rows, "library_bytes": library, "scripts": len(scripts)}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{'page':<12} {'html sent':>10} {'html raw':>10} {'app first load':>15}")
    for r in rows:
        print(f"{r['page']:<12} {r['html_bytes']:>10} {r['html_uncompressed']:>10} {r['app_first_load_bytes']:>15}")
    print(f"library scripts and styles (cached after the first visit): {library} bytes in {len(scripts)} files")


if __name__ == "__main__":
    main()
