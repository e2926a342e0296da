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
    if hit.empty:
        hit = tasks[names.str.lower().str.contains(low, regex=False)]
    if len(hit) >= 1:
        tid = int(hit.iloc[0]["jeditaskid"])
        return f"/task?id={tid}", f"task {tid}"
    return None


def _exact(values: object, low: str) -> str | None:
    """The first of VALUES equal to LOW ignoring case."""
    for v in values:  # type: ignore[attr-defined]
        if isinstance(v, str) and v.lower() == low:
            return v
    return None
