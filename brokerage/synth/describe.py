"""Coverage facts of a grid: how many situations it holds that make each brokerage rule fire (tests check the
demo grid has a case for every rule)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from brokerage.model.snapshot import GridSnapshot
from brokerage.synth.common import (
    BASE_QUEUE_LENGTH,
    BASE_QUEUE_RATIO,
    BASE_USER_QUEUE,
    BASE_WAIT_H,
    CLASS_C_USAGE,
    DISK_THRESHOLD_GB,
    HEAVY_USER_RUNNING,
    INACTIVE_HOURS,
    IO_INTENSITY_CUTOFF,
    MAX_WAIT_H,
    MIN_BAD_JOBS,
    NETWORK_FRESH_MINUTES,
    NQUEUED_NUC_CAP,
    NQUEUED_NUC_CAP_FOR_JOBS,
    NQUEUED_SAT_CAP,
    STATIC_QR_RATIO,
    STORAGE_MIN_FREE_GB,
    TW_DONE_JOB_STAT_H,
)
from brokerage.synth.shares import COUNT_STATUSES


def _sizes(s: GridSnapshot) -> dict[str, int]:
    q, sites, t = s.queues, s.sites, s.tasks
    return {
        "queues": len(q),
        "sites": len(sites),
        "nuclei": int((sites["role"] == "nucleus").sum()),
        "satellites": int((sites["role"] == "satellite").sum()),
        "ddm_endpoints": len(s.ddm_endpoints),
        "network_rows": len(s.network),
        "tasks": len(t),
        "production_tasks": int((t["prodsourcelabel"] == "managed").sum()),
        "analysis_tasks": int((t["prodsourcelabel"] == "user").sum()),
        "users": len(s.users),
    }


def _network_facts(net: pd.DataFrame, taken: pd.Timestamp) -> dict[str, int]:
    fresh = net[net["ts"].isna() | (net["ts"] >= taken - pd.Timedelta(minutes=NETWORK_FRESH_MINUTES))]
    closeness = fresh[fresh["key"] == "AGIS_closeness"]
    queued = fresh[fresh["key"] == "Production Output_queued"]
    totals = queued.groupby("dst")["value"].sum()
    links = net[["src", "dst"]].drop_duplicates()
    mbps = net[net["key"].str.startswith("dashb_mbps_")][["src", "dst"]].drop_duplicates()
    return {
        "blocked_links": int((closeness["value"] == -1).sum()),
        "busy_links": int((queued["value"] > NQUEUED_SAT_CAP).sum()),
        "backlogged_nuclei": int((totals > NQUEUED_NUC_CAP).sum()),
        "links_full_nuclei": int((totals > NQUEUED_NUC_CAP_FOR_JOBS).sum()),
        "links_without_throughput": len(links) - len(mbps),
        "stale_network_rows": len(net) - len(fresh),
    }


def _storage_facts(sites: pd.DataFrame, ep: pd.DataFrame) -> dict[str, int]:
    role = dict(zip(sites["site_name"], sites["role"], strict=True))
    disk = ep[ep["type"] == "DATADISK"]
    avail = disk["space_free"] + disk["space_expired"]
    at_nucleus = disk["site_name"].map(role) == "nucleus"
    down = ep[["read_lan", "write_lan", "read_wan", "write_wan"]].isin(("OFF", "TEST"))
    return {
        "nearly_full_nuclei": int((at_nucleus & (avail < DISK_THRESHOLD_GB)).sum()),
        "full_storages": int((avail < STORAGE_MIN_FREE_GB).sum()),
        "tape_endpoints": int(ep["is_tape"].sum()),
        "blacklisted_endpoints": int(down.any(axis=1).sum()),
        "bare_nuclei_only": int((sites["bare_nucleus"] == "only").sum()),
        "bare_nuclei_allow": int((sites["bare_nucleus"] == "allow").sum()),
        "inactive_nuclei": int(((sites["role"] == "nucleus") & (sites["state"] != "ACTIVE")).sum()),
    }


def _queue_facts(s: GridSnapshot, taken: pd.Timestamp) -> dict[str, int]:
    q = s.queues
    jc = s.job_counts.pivot_table(index="panda_queue", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
    jc = jc.reindex(index=q["panda_queue"], columns=list(COUNT_STATUSES), fill_value=0)
    run, act, start = (jc[c].to_numpy(dtype=float) for c in ("running", "activated", "starting"))
    queued_all = act + start + jc["assigned"].to_numpy(dtype=float) + jc["defined"].to_numpy(dtype=float)
    online = (q["status"] == "online").to_numpy()
    hours = ((taken - q["laststart"]).dt.total_seconds() / 3600.0).to_numpy(dtype=float, na_value=np.inf)
    limit = np.where(q["transferringlimit"] > 0, q["transferringlimit"], 2000)
    maxio = q["maxdiskio"].to_numpy(dtype=float)
    return {
        "test_named_queues": int(q["panda_queue"].str.contains("test", case=False).sum()),
        "not_online_queues": int((~online).sum()),
        "inactive_queues": int(((hours > INACTIVE_HOURS) & (act + start > 0)).sum()),
        "no_pilot_queues": int((online & (q["npilot"] == 0)).sum()),
        "bootstrap_queues": int((online & (run == 0) & (queued_all == 0)).sum()),
        "nbatchjob_bootstrap_queues": int((online & (run < 20) & (q["nbatchjob"] > run)).sum()),
        "numslots_queues": int(q["numslots"].notna().sum()),
        "overloaded_queues": int((online & (act + start > 2 * run)).sum()),
        "many_transferring_queues": int((jc["transferring"].to_numpy() > np.maximum(limit, 2 * run)).sum()),
        "zero_share_queues": int((q["fairsharepolicy"] != "").sum()),
        "diskio_over_queues": int(((maxio > 0) & (q["diskio_avg"] > maxio)).sum()),
        "short_maxtime_queues": int(((q["maxtime"] > 0) & (q["maxtime"] < 86400)).sum()),
        "mintime_queues": int((q["mintime"] > 0).sum()),
        "high_memory_queues": int((q["minrss"] > 0).sum()),
        "vp_queues": int(q["is_vp"].sum()),
        "gpu_queues": int(q["catchall"].str.contains("gpu").sum()),
        "es_queues": int(q["jobseed"].isin(("es", "eshigh")).sum()),
        "any_release_queues": int(q["releases"].map(lambda r: "ANY" in r).sum()),
        "auto_release_queues": int(q["releases"].map(lambda r: "AUTO" in r).sum()),
        "explicit_release_queues": int(q["releases"].map(lambda r: "ANY" not in r and "AUTO" not in r).sum()),
        "direct_access_queues": int(q["direct_access_lan"].sum()),
    }


def _user_facts(s: GridSnapshot, taken: pd.Timestamp) -> dict[str, int]:
    """Bad (task, queue) history pairs, users over quota or running a lot, class C tasks under throttle."""
    t = s.tasks
    h = s.task_job_counts
    recent = h[h["modificationtime"] >= taken - pd.Timedelta(hours=TW_DONE_JOB_STAT_H)]
    per = recent.pivot_table(
        index=["jeditaskid", "panda_queue"], columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0
    )
    per = per.reindex(columns=["finished", "failed", "closed"], fill_value=0)
    usage = dict(zip(s.gshares["gshare"], s.gshares["usage_perc"], strict=True))
    uj = s.user_job_counts
    user_running = uj[uj["jobstatus"] == "running"].groupby("produsername")["njobs"].sum()
    ua = (t["gshare"] == "User Analysis") & (t["prodsourcelabel"] == "user")
    return {
        "bad_history_pairs": int((per["failed"] + per["closed"] > np.maximum(2 * per["finished"], MIN_BAD_JOBS)).sum()),
        "users_quota_exceeded": int(s.users["disk_quota_exceeded"].sum()),
        "heavy_users": int((user_running > HEAVY_USER_RUNNING).sum()),
        "class_c_throttled_tasks": int((ua & (t["task_class"] == -1)).sum())
        if usage.get("User Analysis", 0) > CLASS_C_USAGE
        else 0,
    }


def _task_facts(s: GridSnapshot) -> dict[str, int]:
    t = s.tasks
    reps = s.dataset_replicas.merge(s.ddm_endpoints[["ddm_endpoint_name", "is_tape"]], on="ddm_endpoint_name")
    tape_only = reps.groupby("datasetid")["is_tape"].all()
    return {
        "tasks_assigning": int((t["status"] == "assigning").sum()),
        "tasks_with_nucleus": int(t["nucleus"].notna().sum()),
        "tasks_pending": int((t["status"] == "pending").sum()),
        "scout_tasks": int(t["is_scout"].sum()),
        "merge_tasks": int(t["is_merge"].sum()),
        "urgent_or_express_tasks": int(((t["processingtype"] == "urgent") | (t["currentpriority"] >= 1000)).sum()),
        "high_priority_tasks": int(((t["currentpriority"] >= 800) & (t["prodsourcelabel"] == "managed")).sum()),
        "negative_t1weight_tasks": int((t["t1weight"] < 0).sum()),
        "fullchain_tasks": int((t["fullchain"] != "").sum()),
        "prestaging_tasks": int(t["inputprestaging"].sum()),
        "master_only_tasks": int(t["taskbrokeronmaster"].sum()),
        "io_intensive_tasks": int((t["iointensity"] > IO_INTENSITY_CUTOFF).sum()),
        "eventservice_tasks": int(t["eventservice"].sum()),
        "ipconnectivity_tasks": int((t["ipconnectivity"] != "").sum()),
        "direct_access_only_tasks": int((t["allowinputlan"] == "only").sum()),
        "preassigned_tasks": int(t["site"].notna().sum()),
        "container_tasks": int((t["container_name"] != "").sum()),
        "gpu_tasks": int(t["architecture"].str.contains("&").sum()),
        "cpu_spec_tasks": int(t["architecture"].str.contains("#").sum()),
        "included_site_tasks": int((t["includedsite"] != "").sum()),
        "excluded_site_tasks": int((t["excludedsite"] != "").sum()),
        "avoid_vp_tasks": int(t["avoidvp"].sum()),
        "tape_only_datasets": int(tape_only.sum()),
    }


def _stabilizer_pairs(s: GridSnapshot) -> int:
    """(PQ, user) pairs in User Analysis where the user's queue exceeds max_q_len (seed's Analysis Stabilizer)."""
    u = s.user_job_counts
    u = u[u["gshare"] == "User Analysis"]
    if not len(u):
        return 0
    queued_st = ("defined", "assigned", "activated", "starting")
    u = u.assign(
        q=np.where(u["jobstatus"].isin(queued_st), u["njobs"], 0),
        r=np.where(u["jobstatus"] == "running", u["njobs"], 0),
    )
    pairs = u.groupby(["panda_queue", "produsername"])[["q", "r"]].sum().reset_index()
    jc = s.job_counts[s.job_counts["gshare"] == "User Analysis"]
    per_q = jc.pivot_table(index="panda_queue", columns="jobstatus", values="njobs", aggfunc="sum", fill_value=0)
    per_q = per_q.reindex(columns=list(COUNT_STATUSES), fill_value=0)
    nQ = per_q[list(queued_st)].sum(axis=1)
    nR = per_q["running"]
    trr = s.queues.set_index("panda_queue")["trr"]
    n_users = pairs.groupby("panda_queue").size()
    p = pairs.assign(
        nQ=pairs["panda_queue"].map(nQ).fillna(0),
        nR=pairs["panda_queue"].map(nR).fillna(0),
        trr=pairs["panda_queue"].map(trr).fillna(0),
        nUsers=pairs["panda_queue"].map(n_users),
    )
    can = (p["nQ"] >= BASE_QUEUE_LENGTH) & (p["nQ"] >= BASE_WAIT_H * p["trr"])
    max_nq = np.maximum.reduce([np.full(len(p), BASE_QUEUE_LENGTH), STATIC_QR_RATIO * p["nR"], MAX_WAIT_H * p["trr"]])
    share = np.maximum(1.0 / p["nUsers"], np.where(p["nR"] > 0, p["r"] / p["nR"].where(p["nR"] > 0, 1), 0.0))
    max_len = np.maximum.reduce([np.full(len(p), BASE_USER_QUEUE), BASE_QUEUE_RATIO * p["nR"], max_nq * share])
    return int((can & (p["q"] > max_len)).sum())


def describe(snapshot: GridSnapshot) -> dict[str, int]:
    """Counts of the situations a snapshot holds that make brokerage rules fire (coverage facts).

    Usage: ``describe(demo_snapshot())["blocked_links"] > 0``
    """
    s = snapshot
    taken = pd.Timestamp(s.taken_at)
    facts = _sizes(s)
    facts.update(_network_facts(s.network, taken))
    facts.update(_storage_facts(s.sites, s.ddm_endpoints))
    facts.update(_queue_facts(s, taken))
    facts["stabilizer_throttled_pairs"] = _stabilizer_pairs(s)
    facts.update(_user_facts(s, taken))
    facts.update(_task_facts(s))
    return facts
