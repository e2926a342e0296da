"""Run DIRAC's own TaskQueueDB and Matcher on converted grids: ``python driver.py < doc.json > out.json``.

This file runs only in DIRAC's separate venv (scripts/dirac.sh), never in the project's process: it imports the
unmodified ``DIRAC`` package. The input is the JSON document ``brokerage.crosscheck.dirac_convert.dirac_document``
writes (the MariaDB to use, then per grid the configuration, the jobs and the pilots); the output is one JSON
object with, per grid, every task queue DIRAC made (definition, Priority, jobs), the task queue of every job, and
per pilot the resource dictionary DIRAC's Matcher built, the Limiter's negative conditions and the ids of every
task queue ``TaskQueueDB.matchAndGetTaskQueue`` matches (all of them: ``numQueuesToGet=0``).

Fakes (services that need a DIRAC server): the configuration service is a cfg text loaded as the remote
configuration; the Resource Status System's site statuses (``Matcher.siteClient``) answer from the grid's site
mask; the JobDB the Limiter asks for running counts answers ``getCounters`` from the grid's counts, its attribute
names read from DIRAC's own JobDB.sql. TaskQueueDB itself runs on a real MariaDB, one fresh database per grid.
"""

import json
import os
import re
import sys
import time
import traceback

BASE_CFG = """DIRAC
{{
  Setup = Crosscheck
  Configuration
  {{
    Version = {version}
  }}
}}
Systems
{{
  WorkloadManagement
  {{
    Databases
    {{
      TaskQueueDB
      {{
        Host = {host}
        Port = {port}
        User = {user}
        Password = {password}
        DBName = {dbname}
      }}
    }}
  }}
}}
"""
TQ_TABLES = ("tq_Jobs", "tq_TQToSites", "tq_TQToGridCEs", "tq_TQToBannedSites", "tq_TQToPlatforms", "tq_TQToJobTypes",
             "tq_TQToTags", "tq_RAM_requirements", "tq_TaskQueues")  # fmt: skip


def cfg_list(values):
    return ", ".join(str(v) for v in values)


def grid_cfg(grid, db, version):
    """The configuration service's content for one grid: the database, the Registry, the Operations options."""
    lines = [
        BASE_CFG.format(
            version=version, dbname=db["dbname"], **{k: db[k] for k in ("host", "port", "user", "password")}
        )
    ]
    lines.append("Registry\n{\n  VO\n  {")
    for vo in sorted({g["VO"] for g in grid["groups"].values()}):
        lines.append(f"    {vo}\n    {{\n    }}")
    lines.append("  }\n  Groups\n  {")
    for name, g in sorted(grid["groups"].items()):
        props = ["NormalUser"] + (["JobSharing"] if g["JobSharing"] else [])
        lines.append(f"    {name}\n    {{\n      VO = {g['VO']}\n      Properties = {cfg_list(props)}")
        lines.append(f"      JobShare = {g['JobShare']}\n      AllowBackgroundTQs = {g['AllowBackgroundTQs']}\n    }}")
    lines.append("  }\n}\nOperations\n{\n  Defaults\n  {\n    Pilot\n    {\n      CheckVersion = False\n    }")
    lines.append("    JobScheduling\n    {")
    lines.append(f"      taskQueueCPUTimeIntervals = {cfg_list(grid['buckets'])}")
    lines.append(f"      CheckJobLimits = {grid['check_job_limits']}\n      CheckMatchingDelay = False")
    lines.append("      RunningLimit\n      {")
    lines += limit_sections(grid["running_limits"])
    lines.append("      }\n    }\n  }\n}\n")
    return "\n".join(lines)


def limit_sections(limits):
    """RunningLimit/<Site>[/CEs/<CE>]/<Attribute>/<Value> = <Limit> as nested cfg sections."""
    tree = {}
    for row in limits:
        node = tree.setdefault(row["Site"], {})
        if row.get("GridCE"):
            node = node.setdefault("CEs", {}).setdefault(row["GridCE"], {})
        node.setdefault(row["Attribute"], {})[row["Value"]] = row["Limit"]
    out = []

    def walk(node, depth):
        for key, value in node.items():
            pad = "  " * depth
            if isinstance(value, dict):
                out.append(f"{pad}{key}\n{pad}{{")
                walk(value, depth + 1)
                out.append(f"{pad}}}")
            else:
                out.append(f"{pad}{key} = {value}")

    walk(tree, 4)
    return out


class MaskStatus:
    """Stands in for the Resource Status System's SiteStatus: a site is usable when the grid's mask says Active or
    Degraded; with no mask every site is usable (the snapshot's convention)."""

    def __init__(self, mask):
        self.mask = mask

    def getUsableSites(self, siteNames=None):
        from DIRAC import S_OK

        names = [siteNames] if isinstance(siteNames, str) else list(siteNames or [])
        if self.mask is None:
            return S_OK(names)
        return S_OK([s for s in names if self.mask.get(s) in ("Active", "Degraded")])


class CountsJobDB:
    """Stands in for JobDB where the Limiter reads it: running counts per (site, attribute, value) from the grid."""

    def __init__(self, counts, attribute_names):
        self.counts = counts
        self.jobAttributeNames = attribute_names
        self.log = None

    def getCounters(self, table, attrList, condDict):
        from DIRAC import S_OK

        (att,) = attrList
        rows = [({att: r["Value"]}, r["Running"]) for r in self.counts
                if r["Site"] == condDict.get("Site") and r["Attribute"] == att]  # fmt: skip
        return S_OK(rows)


def job_attribute_names():
    """The Jobs table's columns, read from DIRAC's own JobDB.sql (what JobDB.__getAttributeNames would DESCRIBE)."""
    import DIRAC.WorkloadManagementSystem.DB as dbpkg

    with open(os.path.join(os.path.dirname(dbpkg.__file__), "JobDB.sql")) as f:
        sql = f.read()
    body = sql.split("CREATE TABLE `Jobs`", 1)[1].split(";", 1)[0]
    return re.findall(r"^\s*`(\w+)`", body, flags=re.M)


def fresh_database(db):
    """Drop and create the grid's database (DIRAC creates the tables itself in TaskQueueDB.__init__)."""
    import MySQLdb

    conn = MySQLdb.connect(host=db["host"], port=int(db["port"]), user=db["user"], passwd=db["password"])
    try:
        cur = conn.cursor()
        cur.execute(f"DROP DATABASE IF EXISTS `{db['dbname']}`")
        cur.execute(f"CREATE DATABASE `{db['dbname']}`")
        conn.commit()
    finally:
        conn.close()


def drop_database(db):
    import MySQLdb

    conn = MySQLdb.connect(host=db["host"], port=int(db["port"]), user=db["user"], passwd=db["password"])
    try:
        conn.cursor().execute(f"DROP DATABASE IF EXISTS `{db['dbname']}`")
    finally:
        conn.close()


def load_configuration(text):
    """Replace the configuration service's content (a new Version empties Operations' cache)."""
    from DIRAC.ConfigurationSystem.Client.ConfigurationData import gConfigurationData
    from diraccfg import CFG

    gConfigurationData.remoteCFG = CFG()
    gConfigurationData.loadRemoteCFGFromMem(text)


def definition_key(tqdb, definition):
    """A task queue definition as TaskQueueDB compares it: CPUTime bucketed, each multi-valued field a set."""
    key = {k: sorted({v.strip() for v in val if v.strip()}) if isinstance(val, list) else val
           for k, val in definition.items()}  # fmt: skip
    key["CPUTime"] = tqdb.fitCPUTimeToSegments(definition["CPUTime"])
    return json.dumps(key, sort_keys=True)


def insert_jobs(tqdb, grid):
    """Waiting jobs in JobID order through TaskQueueDB.insertJob; then each definition seen only on Matched jobs once
    (inserted and taken out again with deleteJob: an empty task queue, as a match leaves it); then the TaskQueuesAgent's
    recalculateTQSharesForAll."""
    waiting_defs = set()
    for job in grid["jobs"]:
        if job["Status"] != "Waiting":
            continue
        res = tqdb.insertJob(job["JobID"], dict(job["definition"]), job["Priority"])
        if not res["OK"]:
            raise RuntimeError(f"insertJob {job['JobID']}: {res['Message']}")
        waiting_defs.add(definition_key(tqdb, job["definition"]))
    for job in grid["jobs"]:
        key = definition_key(tqdb, job["definition"])
        if job["Status"] == "Waiting" or key in waiting_defs:
            continue
        waiting_defs.add(key)
        for step in (
            tqdb.insertJob(job["JobID"], dict(job["definition"]), job["Priority"]),
            tqdb.deleteJob(job["JobID"]),
        ):
            if not step["OK"]:
                raise RuntimeError(f"matched job {job['JobID']}: {step['Message']}")
    res = tqdb.recalculateTQSharesForAll()
    if not res["OK"]:
        raise RuntimeError(f"recalculateTQSharesForAll: {res['Message']}")


def task_queues(tqdb):
    """Every task queue (empty ones too) with its definition, Priority and jobs; the task queue of every job.
    Priority + 0E0 reads the FLOAT column as a double (as text MariaDB rounds it to 6 significant digits)."""
    res = tqdb._query("SELECT TQId, Owner, OwnerGroup, VO, CPUTime, Priority + 0E0 FROM tq_TaskQueues ORDER BY TQId")
    if not res["OK"]:
        raise RuntimeError(res["Message"])
    out = {}
    for tq_id, owner, group, vo, cpu, prio in res["Value"]:
        out[str(tq_id)] = {"Owner": owner, "OwnerGroup": group, "VO": vo, "CPUTime": int(cpu), "Priority": float(prio),
                           "Jobs": 0}  # fmt: skip
    for field in ("Sites", "GridCEs", "BannedSites", "Platforms", "JobTypes", "Tags"):
        res = tqdb._query(f"SELECT TQId, Value FROM tq_TQTo{field}")
        for tq_id, value in res["Value"]:
            out[str(tq_id)].setdefault(field, []).append(value)
    res = tqdb._query("SELECT JobId, TQId FROM tq_Jobs ORDER BY JobId")
    jobs = {str(j): int(t) for j, t in res["Value"]}
    for t in jobs.values():
        out[str(t)]["Jobs"] += 1
    for tq in out.values():
        for field in ("Sites", "GridCEs", "BannedSites", "Platforms", "JobTypes", "Tags"):
            if field in tq:
                tq[field] = sorted(tq[field])
    return out, jobs


def match_pilot(matcher, pilot, cred):
    """DIRAC's Matcher on one resource description: _getResourceDict (the description, credentials, mask), the
    Limiter's negative conditions, then every task queue matchAndGetTaskQueue returns."""
    started = time.perf_counter()
    try:
        resource = matcher._getResourceDict(dict(pilot), cred)
    except RuntimeError as exc:
        return {"status": "refused", "message": str(exc), "ms": 1000 * (time.perf_counter() - started)}
    negative = matcher.limiter.getNegativeCondForSite(resource["Site"], resource.get("GridCE"), checkDelay=False)
    res = matcher.tqDB.matchAndGetTaskQueue(resource, numQueuesToGet=0, negativeCond=negative)
    ms = 1000 * (time.perf_counter() - started)
    shown = {k: sorted(v) if isinstance(v, list) else v for k, v in resource.items()}
    if not res["OK"]:
        return {"status": "refused", "message": res["Message"], "resource": shown, "negative": negative, "ms": ms}
    ids = sorted(int(row[0]) for row in res["Value"])
    return {"status": "matched" if ids else "no_match", "resource": shown, "negative": negative, "taskqueues": ids,
            "ms": ms}  # fmt: skip


def run_grid(grid, db, index, attribute_names):
    from DIRAC.Core.Security import Properties
    from DIRAC.WorkloadManagementSystem.Client.Limiter import Limiter
    from DIRAC.WorkloadManagementSystem.Client.Matcher import Matcher
    from DIRAC.WorkloadManagementSystem.DB.TaskQueueDB import TaskQueueDB

    started = time.perf_counter()
    fresh_database(db)
    load_configuration(grid_cfg(grid, db, version=f"crosscheck-{os.getpid()}-{index}"))
    tqdb = TaskQueueDB()
    if grid["max_jobs_in_tq"] != 5000:  # the one constant without a configuration option (TaskQueueDB.__init__)
        tqdb._TaskQueueDB__maxJobsInTQ = int(grid["max_jobs_in_tq"])
    t0 = time.perf_counter()
    insert_jobs(tqdb, grid)
    insert_s = time.perf_counter() - t0
    tqs, jobs = task_queues(tqdb)
    fakes = CountsJobDB(grid["running_counts"], attribute_names)
    matcher = Matcher(pilotAgentsDB=object(), jobDB=fakes, tqDB=tqdb, jlDB=object())
    matcher.siteClient = MaskStatus(grid["mask"])
    # the Limiter's per-process caches (CS limits 300 s, counts 10 s): each grid is what a fresh process would see
    Limiter.csDictCache, Limiter.condCache = type(Limiter.csDictCache)(), type(Limiter.condCache)()
    Limiter.newCache = type(Limiter.newCache)(10, 300)
    matcher.limiter = Limiter(jobDB=fakes)
    cred = {"properties": [Properties.GENERIC_PILOT], "group": "hosts", "DN": "/CN=crosscheck"}
    pilots = [match_pilot(matcher, pilot, cred) for pilot in grid["pilots"]]
    return {"taskqueues": tqs, "jobs": jobs, "pilots": pilots, "insert_seconds": insert_s,
            "seconds": time.perf_counter() - started}  # fmt: skip


def main():
    doc = json.load(sys.stdin)
    result = os.fdopen(os.dup(1), "w")  # the answer's channel; DIRAC's logger writes to fd 1, sent to stderr
    os.dup2(2, 1)
    import DIRAC

    DIRAC.initialize(require_auth=False)
    from DIRAC import gLogger

    gLogger.setLevel("ERROR")
    attribute_names = job_attribute_names()
    db = dict(doc["db"])
    db.setdefault("dbname", f"TaskQueueDB_crosscheck_{os.getpid()}")
    out = {"dirac_version": DIRAC.__version__, "grids": []}
    try:
        for i, grid in enumerate(doc["grids"]):
            try:
                out["grids"].append(run_grid(grid, db, i, attribute_names))
            except Exception:
                out["grids"].append({"error": traceback.format_exc()})
    finally:
        drop_database(db)
    json.dump(out, result, default=str)
    result.close()


if __name__ == "__main__":
    main()
