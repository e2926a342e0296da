"""Scalar reference of the ATLAS analysis job brokerage: one queue at a time, one rule at a time, as the seed reads."""

from __future__ import annotations

import fnmatch
import math
from typing import Any

import pandas as pd

from brokerage.model.gdpconfig import Config
from brokerage.model.snapshot import GridSnapshot
from tests.reference import software_reference
from tests.reference.production_reference import without_pilots

QUEUED = ("defined", "assigned", "activated", "starting")
CAP_QUEUED = ("defined", "assigned", "activated", "starting", "throttled")
DOWN = ("OFF", "TEST")
EPS_FLOOR = 0.001


def _rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: (None if _null(v) else v) for k, v in r.items()} for r in df.to_dict("records")]


def _null(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT


def _names(text: Any) -> list[str]:
    return [s.strip() for s in str(text or "").split(",") if s.strip()]


def _matches(queue: dict[str, Any], patterns: list[str]) -> bool:
    return any(
        fnmatch.fnmatchcase(queue["panda_queue"], p) or fnmatch.fnmatchcase(queue["atlas_site"], p) for p in patterns
    )


# ---------------------------------------------------------------- the Analysis Stabilizer (one PQ)


def stabilize(nQ: float, nR: float, trr: float, nR_user: float, nQ_user: float, nUsers: float, cfg: Config) -> dict:
    """The seed's Stabilizer for one PQ and one user."""
    can_throttle = True
    if nQ < cfg["BASE_QUEUE_LENGTH_PER_PQ"]:
        can_throttle = False
    if nQ < cfg["BASE_EXPECTED_WAIT_HOUR_ON_PQ"] * trr:
        can_throttle = False
    nQ_max = max(
        cfg["BASE_QUEUE_LENGTH_PER_PQ"], cfg["STATIC_MAX_QUEUE_RUNNING_RATIO"] * nR, cfg["MAX_EXPECTED_WAIT_HOUR"] * trr
    )
    user_share = nR_user / nR if nR > 0 else 0.0
    percentage = max(user_share, 1.0 / max(nUsers, 1))
    max_q_len = max(
        cfg["BASE_DEFAULT_QUEUE_LENGTH_PER_PQ_USER"], cfg["BASE_QUEUE_RATIO_ON_PQ"] * nR, nQ_max * percentage
    )
    throttled = can_throttle and nQ_user > max_q_len
    return {
        "nQ": nQ, "nR": nR, "trr": trr, "can_throttle": can_throttle, "nQ_max": nQ_max, "nR_user": nR_user,
        "nUsers": nUsers, "percentage": percentage, "max_q_len": max_q_len, "nQ_user": nQ_user, "throttled": throttled,
    }  # fmt: skip


# ---------------------------------------------------------------- the broker


def broker(snap: GridSnapshot, jeditaskid: int, config: Config | None = None) -> dict[str, Any]:
    """Analysis brokerage of one task: {status, throttled, pass, candidates [(queue, weight)], weights, skips, stabilizer}."""
    cfg = config or Config()
    task = next(t for t in _rows(snap.tasks) if t["jeditaskid"] == jeditaskid)
    user = task["username"] or ""
    wg = task["workinggroup"] or ""
    gshare = task["gshare"] or ""

    # 1. throttles
    throttled = _throttle(snap, task, user, wg, cfg)
    if throttled:
        return {"status": "pending", "throttled": throttled, "pass": 1, "candidates": [], "weights": {}, "skips": {},
                "stabilizer": {}}  # fmt: skip

    queues = _rows(snap.queues)
    counts = {
        q["panda_queue"]: dict.fromkeys(("defined", "assigned", "activated", "starting", "running"), 0.0)
        for q in queues
    }
    for r in _rows(snap.job_counts):  # VO atlas' jobs: JEDI counts the task's VO
        if r["gshare"] == gshare and r["vo"] == "atlas" and r["jobstatus"] in counts[r["panda_queue"]]:
            counts[r["panda_queue"]][r["jobstatus"]] += r["njobs"]

    # Stabilizer inputs: per-user counts at each PQ in the task's gshare
    per_user: dict[str, dict[str, list[float]]] = {}
    for r in _rows(snap.user_job_counts):  # VO atlas' users: a user is a (USERNAME, VO) pair
        if r["gshare"] != gshare or r["vo"] != "atlas" or r["jobstatus"] not in (*QUEUED, "running"):
            continue
        qr = per_user.setdefault(r["panda_queue"], {}).setdefault(r["produsername"], [0.0, 0.0])
        qr[0 if r["jobstatus"] in QUEUED else 1] += r["njobs"]
    stab = {}
    for q in queues:
        name = q["panda_queue"]
        users = {u for u, (nq, nr) in per_user.get(name, {}).items() if nq + nr > 0}
        nq_u, nr_u = per_user.get(name, {}).get(user, [0.0, 0.0])
        c = counts[name]
        stab[name] = stabilize(
            c["defined"] + c["assigned"] + c["activated"] + c["starting"], c["running"], q["trr"], nr_u, nq_u,
            len(users | {user}), cfg,
        )  # fmt: skip

    avail = _input_at_queues(snap, task, queues)
    history = _history(snap, task, queues, cfg)

    result = _one_pass(snap, task, cfg, queues, counts, stab, avail, history, use_locality=True)
    pass_no = 1
    if result["locality_removed"] > 0 and not result["alive"]:
        with_data = result["persistent_alive"]
        if not with_data or all(history[n]["closed"] > 0 for n in with_data):
            result = _one_pass(snap, task, cfg, queues, counts, stab, avail, history, use_locality=False)
            pass_no = 2

    skips = result["skips"]
    alive = result["alive"]
    stab_out = {n: stab[n] for n in result["persistent_alive"]}
    if not alive:
        return {"status": "pending", "throttled": None, "pass": pass_no, "candidates": [], "weights": {},
                "skips": skips, "stabilizer": stab_out}  # fmt: skip

    # 4. weights
    by_name = {q["panda_queue"]: q for q in queues}
    weights = _weights(task, cfg, [by_name[n] for n in alive], counts, stab)
    ranked = sorted(alive, key=lambda n: (-weights[n]["used"], n))
    top = cfg["MAX_SITE_CANDIDATES"]
    for n in ranked[top:]:
        skips[n] = "-low_weight"
    return {
        "status": "ok",
        "throttled": None,
        "pass": pass_no,
        "candidates": [(n, weights[n]["used"]) for n in ranked[:top]],
        "weights": weights,
        "skips": skips,
        "stabilizer": stab_out,
    }


def _throttle(snap: GridSnapshot, task: dict, user: str, wg: str, cfg: Config) -> dict | None:
    run_jobs = queued_jobs = run_cores = queued_cores = 0.0
    for r in _rows(snap.user_job_counts):
        mine = (r["workinggroup"] or "") == wg if wg else (r["produsername"] == user and not r["workinggroup"])
        if not mine or r["vo"] != (task.get("vo") or "atlas"):  # the task's VO's jobs of the user
            continue
        if r["jobstatus"] == "running":
            run_jobs += r["njobs"]
            run_cores += r["ncores"]
        elif r["jobstatus"] in CAP_QUEUED:
            queued_jobs += r["njobs"]
            queued_cores += r["ncores"]
    who = "GROUP" if wg else "USER"
    jobs_cap, cores_cap = cfg[f"CAP_RUNNING_{who}_JOBS"], cfg[f"CAP_RUNNING_{who}_CORES"]
    if jobs_cap is not None and run_jobs > jobs_cap:
        return {"rule": f"CAP_RUNNING_{who}_JOBS", "count": run_jobs}
    if jobs_cap is not None and queued_jobs > 2 * jobs_cap:
        return {"rule": f"2xCAP_RUNNING_{who}_JOBS", "count": queued_jobs}
    if cores_cap is not None and run_cores > cores_cap:
        return {"rule": f"CAP_RUNNING_{who}_CORES", "count": run_cores}
    if cores_cap is not None and queued_cores > 2 * cores_cap:
        return {"rule": f"2xCAP_RUNNING_{who}_CORES", "count": queued_cores}

    me = next((u for u in _rows(snap.users) if u["produsername"] == user), None)
    if me is not None and me["disk_quota_exceeded"]:
        return {"rule": "global disk quota"}

    if task["gshare"] != "User Analysis" or task["task_class"] is None:
        return None
    share = next((g for g in _rows(snap.gshares) if g["gshare"] == "User Analysis"), None)
    usage = share["usage_perc"] if share else 0.0
    if task["task_class"] == -1 and usage > cfg["USAGE_THROTTLE_CLASS_C"]:
        return {"rule": "USAGE_THROTTLE_CLASS_C", "usage": usage}
    if task["task_class"] == 0 and usage > cfg["USAGE_THROTTLE_CLASS_B"]:
        return {"rule": "USAGE_THROTTLE_CLASS_B", "usage": usage}
    if task["task_class"] == 1:
        slots = me["running_slots_hi"] if me else 0
        if slots > 0 and usage > max(cfg["USER_USAGE_THRESHOLD_A"] / slots, 1) * 100:
            return {"rule": "USER_USAGE_THRESHOLD_A", "usage": usage}
    return None


def _input_at_queues(snap: GridSnapshot, task: dict, queues: list[dict]) -> dict[str, Any]:
    tid = task["jeditaskid"]
    datasets = [d for d in _rows(snap.datasets) if d["jeditaskid"] == tid]
    total = sum(d["nfiles"] for d in datasets)
    replicas = [r for r in _rows(snap.dataset_replicas) if r["jeditaskid"] == tid]
    relations = _rows(snap.panda_ddm_relation)
    have = {}
    for q in queues:
        endpoints = {r["ddm_endpoint_name"] for r in relations if r["panda_queue"] == q["panda_queue"]}
        files = 0.0
        for d in datasets:
            best = 0.0
            for r in replicas:
                if r["datasetid"] == d["datasetid"] and r["ddm_endpoint_name"] in endpoints:
                    best = max(best, r["nfiles"])
            files += best
        have[q["panda_queue"]] = files
    return {"total": total, "have": have}


def _history(snap: GridSnapshot, task: dict, queues: list[dict], cfg: Config) -> dict[str, dict[str, float]]:
    start = pd.Timestamp(snap.taken_at) - pd.Timedelta(hours=cfg["TW_DONE_JOB_STAT"])
    out = {q["panda_queue"]: {"finished": 0.0, "failed": 0.0, "closed": 0.0} for q in queues}
    for r in _rows(snap.task_job_counts):
        mine = r["jeditaskid"] == task["jeditaskid"] and r["panda_queue"] in out
        if mine and r["modificationtime"] >= start and r["jobstatus"] in out[r["panda_queue"]]:
            out[r["panda_queue"]][r["jobstatus"]] += r["njobs"]
    return out


def _one_pass(
    snap: GridSnapshot,
    task: dict,
    cfg: Config,
    queues: list[dict],
    counts: dict[str, dict[str, float]],
    stab: dict[str, dict],
    avail: dict[str, Any],
    history: dict[str, dict[str, float]],
    use_locality: bool,
) -> dict[str, Any]:
    skips: dict[str, str] = {}
    site_list = _names(task["site"])
    included = _names(task["includedsite"])
    excluded = _names(task["excludedsite"])

    # 2. preliminary candidates
    candidates = []
    for q in queues:
        if q["type"] not in ("analysis", "unified") and not _matches(q, site_list):
            continue
        if excluded and _matches(q, excluded):
            skips[q["panda_queue"]] = "-excluded"
        elif included and not _matches(q, included):
            skips[q["panda_queue"]] = "-notincluded"
        elif site_list and not _matches(q, site_list):
            skips[q["panda_queue"]] = "-nonpreassigned"
        else:
            candidates.append(q)

    # input data locality (pass 1 only, unless suppressed)
    total = avail["total"]
    locality = use_locality and total > 0
    if task["taskpriority"] >= cfg["ANAL_LOCALITY_PRIORITY"]:
        locality = False
    cutoff = cfg["IO_INTENSITY_CUTOFF_USER"]
    if cutoff is not None and task["iointensity"] is not None and task["iointensity"] <= cutoff:
        locality = False
    someone_has_all = any(avail["have"][q["panda_queue"]] >= total for q in candidates)

    # VP overload: queued/running of the queue against the whole analysis grid
    sum_q = sum(_queued(counts[q["panda_queue"]]) for q in queues if q["type"] in ("analysis", "unified"))
    sum_r = sum(counts[q["panda_queue"]]["running"] for q in queues if q["type"] in ("analysis", "unified"))
    grand = sum_q / sum_r if sum_r > 0 else math.inf

    endpoints = {e["ddm_endpoint_name"]: e for e in _rows(snap.ddm_endpoints)}
    relations = _rows(snap.panda_ddm_relation)
    software = {r["panda_queue"]: r for r in _rows(snap.queue_software)}

    persistent_alive, alive, locality_removed = [], [], 0
    for q in candidates:
        name = q["panda_queue"]
        preassigned = _matches(q, site_list) or _matches(q, included)
        code = _persistent(task, cfg, q, counts[name], avail, locality, someone_has_all, preassigned, grand,
                           endpoints, relations, software, snap)  # fmt: skip
        if code:
            skips[name] = code
            locality_removed += code == "-input_data"
            continue
        persistent_alive.append(name)
        code = _temporary(cfg, counts[name], stab[name], history[name])
        if code:
            skips[name] = code
            continue
        alive.append(name)
    return {"skips": skips, "alive": alive, "persistent_alive": persistent_alive, "locality_removed": locality_removed}


def _queued(c: dict[str, float]) -> float:
    return c["defined"] + c["assigned"] + c["activated"] + c["starting"]


def _persistent(
    task: dict,
    cfg: Config,
    q: dict,
    c: dict[str, float],
    avail: dict[str, Any],
    locality: bool,
    someone_has_all: bool,
    preassigned: bool,
    grand: float,
    endpoints: dict[str, dict],
    relations: list[dict],
    software: dict[str, dict],
    snap: GridSnapshot,
) -> str:
    name = q["panda_queue"]
    # the queue status must be online unless the queues are pre-assigned
    if q["status"] != "online" and not preassigned:
        return "-status"
    # input data locality check
    if locality:
        have = avail["have"][name]
        if someone_has_all and have < avail["total"]:
            return "-input_data"
        if not someone_has_all and have <= 0:
            return "-input_data"
    # diskIO
    if task["diskio"] is not None:
        limit = q["maxdiskio"] if q["maxdiskio"] > 0 else cfg["MAX_DISKIO_DEFAULT"]
        if q["diskio_avg"] > limit and task["diskio"] > limit:
            return "-diskIO"
    # CPU core count matching
    task_cc = task["corecount"] or 0
    site_cc = q["corecount"]
    if task_cc > 1 and not site_cc > 1:
        return "-cpucore"
    if task_cc == 1 and not site_cc <= 1:
        return "-cpucore"
    if task["maxcorecount"] and site_cc > task["maxcorecount"]:
        return "-max_cpucore"
    # avoidVP or overloaded VP queues
    if q["is_vp"]:
        if task["avoidvp"]:
            return "-avoid_vp"
        nq, nr = _queued(c), c["running"]
        if nq > cfg["OVERLOAD_MIN_QUEUE"] and (nr == 0 or nq / nr > grand * cfg["OVERLOAD_RATIO_OFFSET"]):
            return "-overloaded_vp"
    # availability of ATLAS release/cache (ANY: not checked; AUTO: the queue's published software)
    passed, code, _ = software_reference.check(task, name, list(q["releases"]), software)
    if not passed:
        return code
    # memory: (baseRamCount + ramCount x coreCount) x 0.9 (MBPerCore) or (baseRamCount + ramCount) x 0.9 (MB)
    cores = 1 if task_cc == 1 else (site_cc if site_cc > 0 else max(task_cc, 1))
    # the seed checks the memory range for every task (a task without a request expects 0 MB)
    if task["ramunit"].startswith("MBPerCore"):
        mem = (task["baseramcount"] + task["ramcount"] * cores) * cfg["MEMORY_COMPENSATION"]
    else:
        mem = (task["baseramcount"] + task["ramcount"]) * cfg["MEMORY_COMPENSATION"]
    if q["maxrss"] > 0 and mem > q["maxrss"]:
        return "-lowmemory"
    if q["minrss"] > 0 and mem < q["minrss"]:
        return "-highmemory"
    # scratch disk: (0 or inputDiskCount) + outDiskCount x inputDiskCount + workDiskCount < maxwdir / coreCount
    input_mb = task["chunk_input_mb"] or 0
    need = (
        (0 if q["direct_access_lan"] else input_mb)
        + (task["outdiskcount"] or 0) * input_mb
        + (task["workdiskcount"] or 0)
    )
    if q["maxwdir"] > 0 and not q["maxwdir"] / max(site_cc, 1) > need:
        return "-disk"
    # 200 GB free in the local storage (the queue's output endpoint)
    rel = [r for r in relations if r["panda_queue"] == name]
    out = next((endpoints[r["ddm_endpoint_name"]] for r in rel if r["default_write"]), None)
    if out is None or not out["space_free"] + out["space_expired"] > cfg["STORAGE_MIN_FREE_SIZE"]:
        return "-disk"
    # blacklisted endpoints; a queue without the whole input must also transfer over WAN
    ins = [endpoints[r["ddm_endpoint_name"]] for r in rel]
    remote = avail["total"] > 0 and avail["have"][name] < avail["total"]
    if ins and not any(e["read_lan"] not in DOWN for e in ins):
        return "-read_lan_blacklist"
    if out["write_lan"] in DOWN:
        return "-write_lan_blacklist"
    if remote and ins and not any(e["write_wan"] not in DOWN for e in ins):
        return "-write_wan_blacklist"
    if remote and out["read_wan"] in DOWN:
        return "-read_wan_blacklist"
    # walltime: cpuTime x nEvents / (C x P x cpuEfficiency) + baseTime within [mintime, maxtime]
    if (task["cputime"] or 0) > 0 and (task["chunk_nevents"] or 0) > 0:
        eff = (task["cpuefficiency"] if task["cpuefficiency"] is not None else 90) / 100
        power = q["corepower"] if q["corepower"] > 0 else 10.0
        base = task["basewalltime"] or 0
        wall = base if eff <= 0 else task["cputime"] * task["chunk_nevents"] / (cores * power * eff) + base
        if q["maxtime"] > 0 and wall > q["maxtime"]:
            return "-shortwalltime"
        if q["mintime"] > 0 and wall < q["mintime"]:
            return "-longwalltime"
    # no pilot for the last NO_PILOT_HOURS
    if without_pilots(snap, q, cfg["NO_PILOT_HOURS"]):
        return "-nopilot"
    return ""


def _temporary(cfg: Config, c: dict[str, float], stab: dict, hist: dict[str, float]) -> str:
    # many failed or closed jobs of the task in the last TW_DONE_JOB_STAT hours
    if not hist["failed"] + hist["closed"] < max(2 * hist["finished"], cfg["MIN_BAD_JOBS_TO_SKIP_PQ"]):
        return "-badsite"
    # defined+activated+assigned+starting > 2 x max(20, running)
    if _queued(c) > 2 * max(cfg["ANAL_QUEUE_FLOOR"], c["running"]):
        return "-overloaded"
    # the user has too many queued jobs there (Analysis Stabilizer)
    if stab["throttled"]:
        return "-tmp_user_problem"
    return ""


def _weights(task: dict, cfg: Config, cands: list[dict], counts: dict, stab: dict) -> dict[str, dict[str, float]]:
    n_j = task["chunk_njobs"] or 0
    e1, e2 = cfg["SITE_CLASS_EPSILON_1"], cfg["SITE_CLASS_EPSILON_2"]
    tclass = 1 if task["task_class"] is None else task["task_class"]
    table = {  # task class -> weight at (hi, mid, lo) sites
        "SA": {1: n_j, 0: e1, -1: e2},
        "B": {1: e2, 0: n_j, -1: e1},
        "C": {1: e2, 0: e1, -1: n_j},
    }
    row = table["SA"] if tclass >= 1 else table["B"] if tclass == 0 else table["C"]
    rem = {
        q["panda_queue"]: max(stab[q["panda_queue"]]["max_q_len"] - stab[q["panda_queue"]]["nQ_user"], 0.0)
        for q in cands
    }
    n_pq = len(cands)
    total = sum(rem.values())
    out = {}
    for q in cands:
        name = q["panda_queue"]
        c = counts[name]
        # nRunning: the largest of Rreal, bootstrap min(nBatchJob, 20), numSlots > 0, nStarting when numSlots = 0
        rreal = c["running"]
        nrun = rreal
        cap = cfg["BOOTSTRAP_NBATCHJOB_CAP"]
        if rreal < cap and q["nbatchjob"] > rreal:
            nrun = max(nrun, min(q["nbatchjob"], cap))
        if q["numslots"] is not None and q["numslots"] > 0:
            nrun = max(nrun, q["numslots"])
        if q["numslots"] is not None and q["numslots"] == 0:
            nrun = max(nrun, c["starting"])
        original = (nrun + 1) / (c["activated"] + c["assigned"] + c["starting"] + c["defined"] + 1)
        if task["gshare"] in ("User Analysis", "Express Analysis"):
            sc = q["site_class"] if q["site_class"] is not None else 0
            w_s = row[int(sc)]
        else:
            w_s = n_j
        if total - n_j > 0:
            w_q = max(rem[name] - n_j / n_pq, EPS_FLOOR) / (total - n_j)
        elif total > 0:
            w_q = max(rem[name], EPS_FLOOR) / total
        else:
            w_q = 1 / n_pq
        new = w_s * w_q
        used = new if cfg["ANAL_BASIC_WEIGHT"] == "new" else original
        out[name] = {"original": original, "W_s": w_s, "W_q": w_q, "new": new, "used": used}
    return out
