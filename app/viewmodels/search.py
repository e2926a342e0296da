"""The navbar search: a task id or name, queue, site, nucleus or user resolved to the page that answers it."""

from __future__ import annotations

from urllib.parse import quote

from brokerage.model.snapshot import GridSnapshot


def resolve(snap: GridSnapshot, text: str | None) -> tuple[str, str] | None:
    """(href, what) of the page for TEXT, or None when nothing in the snapshot has that name.

    Usage: ``resolve(snap, "ANALY_CERN")  # ("/queue?name=ANALY_CERN", "queue ANALY_CERN")``
    """
    q = str(text or "").strip()
    if not q:
        return None
    low = q.lower()
    tasks = snap.tasks
    if q.isdigit() and int(q) in set(tasks["jeditaskid"].astype(int)):
        return f"/task?id={int(q)}", f"task {q}"
    exact = _exact(snap.queues["panda_queue"], low)
    if exact:
        return f"/queue?name={quote(exact)}", f"queue {exact}"
    sites = snap.sites
    site = _exact(sites["site_name"], low) if len(sites) else None
    if site:
        role = str(sites.loc[sites["site_name"] == site, "role"].iloc[0])
        if role == "nucleus":
            return f"/network?nucleus={quote(site)}", f"nucleus {site}"
        return f"/queues?site={quote(site)}", f"site {site}"
    users = [*tasks.get("username", []), *snap.user_job_counts.get("produsername", [])]
    user = _exact(users, low)
    if user:
        return f"/stabilizer?user={quote(user)}", f"user {user}"
    names = tasks["taskname"].fillna("").astype(str)
    hit = tasks[names.str.lower() == low]
    if len(hit) == 1:
        tid = int(hit.iloc[0]["jeditaskid"])
        return f"/task?id={tid}", f"task {tid}"
    found = matches(snap, q, limit=2)
    return found[0] if len(found) == 1 else None  # one name contains it: that one; several: the list decides


def matches(snap: GridSnapshot, text: str | None, limit: int = 10) -> list[tuple[str, str]]:
    """(href, label) of every task, queue, site, nucleus and user whose name (or task id) starts with TEXT, then of
    those that contain it, ignoring case; at most LIMIT.

    Usage: ``matches(snap, "aglt")  # [("/queue?name=AGLT2_Q2", "queue AGLT2_Q2"), ...]``
    """
    low = str(text or "").strip().lower()
    if not low:
        return []
    found: list[tuple[str, str, str]] = []  # (name in lower case, href, label)
    for name in snap.queues["panda_queue"].astype(str):
        found.append((name.lower(), f"/queue?name={quote(name)}", f"queue {name}"))
    sites = snap.sites
    for name, role in zip(sites["site_name"].astype(str), sites["role"].astype(str), strict=False):
        href = f"/network?nucleus={quote(name)}" if role == "nucleus" else f"/queues?site={quote(name)}"
        found.append((name.lower(), href, f"{'nucleus' if role == 'nucleus' else 'site'} {name}"))
    users = {str(u) for u in [*snap.tasks.get("username", []), *snap.user_job_counts.get("produsername", [])] if u}
    found += [(u.lower(), f"/stabilizer?user={quote(u)}", f"user {u}") for u in sorted(users)]
    tasks = snap.tasks
    ids = tasks["jeditaskid"].astype(int).astype(str)
    names = tasks["taskname"].fillna("").astype(str)
    keep = ids.str.startswith(low) | names.str.lower().str.contains(low, regex=False)
    for tid, name in zip(ids[keep], names[keep], strict=True):
        key = tid if tid.startswith(low) else name.lower()
        found.append((key, f"/task?id={tid}", f"task {tid} · {name}" if name else f"task {tid}"))
    first = [f for f in found if f[0].startswith(low)]
    then = [f for f in found if low in f[0] and not f[0].startswith(low)]
    return [(href, label) for _, href, label in (first + then)[:limit]]


def _exact(values: object, low: str) -> str | None:
    """The first of VALUES equal to LOW ignoring case."""
    for v in values:  # type: ignore[attr-defined]
        if isinstance(v, str) and v.lower() == low:
            return v
    return None
