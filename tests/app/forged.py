"""Forged callback requests: every server-side callback of the app with inputs its pages never send."""

from __future__ import annotations

import json
from typing import Any

FORGED: list[Any] = [
    "x", "9" * 5000, -1, 10**30, 1.5, {"a": [1]}, [None, "x"], True, None, "../../etc/passwd", "a\ud800",
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
]  # fmt: skip


def _outputs(out: str) -> Any:
    if not out.startswith(".."):
        item_id, _, prop = out.rpartition(".")
        return {"id": item_id, "property": prop}
    return [{"id": o.rpartition(".")[0], "property": o.rpartition(".")[2]} for o in out.strip(".").split("...")]


def forged_payloads(dependencies: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(callback output, payload) for every server-side callback with plain ids and each FORGED value."""
    out = []
    for dep in dependencies:
        if dep.get("clientside_function") or "{" in dep["output"] or any("{" in i["id"] for i in dep["inputs"]):
            continue
        for value in FORGED:
            inputs = [{**i, "value": value} for i in dep["inputs"]]
            state = [{**s, "value": value} for s in dep.get("state", [])]
            payload = {
                "output": dep["output"],
                "outputs": _outputs(dep["output"]),
                "inputs": inputs,
                "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"] if inputs else [],
                "state": state,
            }
            out.append((dep["output"], payload))
    return out


def post(client: Any, payload: dict[str, Any]) -> int:
    """POST PAYLOAD to the callback route; the status."""
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return int(client.post("/_dash-update-component", data=body, content_type="application/json").status_code)
