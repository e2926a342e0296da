"""The fakes PanDA's brokers are fed with offline (runs in PanDA's own venv: stdlib and PanDA only, never numpy).

Everything above these fakes is PanDA's unmodified code: ``SiteMapper`` over a fake cursor (so SiteSpec, DdmSpec,
pseudo queues and nuclei are PanDA's own), ``AtlasDDMClient`` over a fake rucio client. Each fake returns the shape
of the real DB-proxy method (see shared/reference/jedi-offline.md §3). The grid is the JSON document
``brokerage.crosscheck.convert`` writes; times arrive as ages in seconds and become datetimes against PanDA's now.
"""

import copy
import datetime
import json
import logging

import rucio.client  # the stub in shim/
from fakes_anal import AnalysisFakes
from pandacommon.pandautils.PandaUtils import naive_utcnow
from pandajedi.jedicore import Interaction
from pandajedi.jediddm.AtlasDDMClient import AtlasDDMClient
from pandaserver.brokerage.SiteMapper import SiteMapper
from pandaserver.taskbuffer.db_proxy_mods.entity_module import EntityModule
from pandaserver.taskbuffer.GlobalShares import Share
from pandaserver.taskbuffer.ResourceSpec import ResourceSpec
from pandaserver.taskbuffer.WorkQueueMapper import WorkQueueMapper
from rucio.common.exception import DataIdentifierNotFound

DDM_ENDPOINT_COLUMNS = [
    "ddm_endpoint_name", "site_name", "ddm_spacetoken_name", "type", "is_tape", "blacklisted", "blacklisted_read",
    "blacklisted_write", "space_used", "space_free", "space_total", "space_expired", "space_timestamp",
    "space_min_free", "space_unavailable", "detailed_status",
]  # fmt: skip
RELATION_COLUMNS = [
    "panda_site_name", "ddm_endpoint_name", "is_local", "ddm_spacetoken_name", "is_tape", "default_read",
    "default_write", "roles", "order_read", "order_write", "scope", "blacklisted_read",
]  # fmt: skip
RESOURCE_TYPES = [("SCORE", 1, 1, None, 2000), ("MCORE", 2, None, None, 2000),
                  ("SCORE_HIMEM", 1, 1, 2001, None), ("MCORE_HIMEM", 2, None, 2001, None)]  # fmt: skip


def ago(seconds):
    """PanDA's naive UTC now minus SECONDS (None stays None)."""
    return None if seconds is None else naive_utcnow() - datetime.timedelta(seconds=seconds)


class _FakeCursor:
    """Answers the three SQLs of ``EntityModule.getSiteInfo`` / ``getDdmEndpoints`` from the grid."""

    def __init__(self, grid):
        self.grid = grid
        self.rows = []
        self.description = []
        self.arraysize = 100

    def execute(self, sql, var_map=None):
        g = self.grid
        if "FROM ATLAS_PANDA.ddm_endpoint" in sql and "panda_ddm_relation" not in sql:
            self.description = [(c.upper(),) for c in DDM_ENDPOINT_COLUMNS]
            self.rows = []
            for name, ep in g["ddm_endpoints"].items():
                row = dict(ep, ddm_endpoint_name=name, is_tape="Y" if ep.get("is_tape") else "N")
                row.setdefault("ddm_spacetoken_name", ep.get("type"))
                row["detailed_status"] = json.dumps(ep.get("detailed_status", {}))
                self.rows.append(tuple(row.get(c) for c in DDM_ENDPOINT_COLUMNS))
        elif "panda_ddm_relation" in sql and "de.site_name" not in sql:
            self.description = [(c.upper(),) for c in RELATION_COLUMNS]
            self.rows = []
            for rel in g["panda_ddm_relation"]:
                ep = g["ddm_endpoints"][rel["ddm_endpoint_name"]]
                row = dict(rel, ddm_spacetoken_name=ep.get("type"), is_tape="Y" if ep.get("is_tape") else "N")
                row["blacklisted_read"] = ep.get("blacklisted_read", "N")
                self.rows.append(tuple(row.get(c) for c in RELATION_COLUMNS))
        elif "Harvester_Slots" in sql:
            self.rows = [tuple(r) for r in g.get("harvester_slots", [])]
        else:
            raise NotImplementedError(f"offline cursor: unexpected SQL {sql[:200]}")

    def fetchall(self):
        return list(self.rows)


class _FakeConn:
    def begin(self):
        pass


class OfflineSiteDB:
    """Stand-in for the DB proxy; borrows the real methods, so SiteSpec filling is PanDA's own."""

    backend = "oracle"
    getSiteInfo = EntityModule.getSiteInfo
    getDdmEndpoints = EntityModule.getDdmEndpoints
    dump_error_message = EntityModule.dump_error_message
    create_tagged_logger = EntityModule.create_tagged_logger

    def __init__(self, grid):
        self.grid = grid
        self.cur = _FakeCursor(grid)
        self.conn = _FakeConn()
        self._log_stream = logging.getLogger("panda.log.OfflineSiteDB")

    def getClobObj(self, sql, var_map):
        rows = []
        for name, q in self.grid["queues"].items():
            data = dict(q["data"])
            data.setdefault("nickname", name)  # getSiteInfo keys sites by nickname (pitfall 4)
            rows.append((name, data, q.get("site"), q.get("role")))
        return True, rows

    def _commit(self):
        return True

    def _rollback(self):
        pass


class FakeTaskBuffer(AnalysisFakes):
    """taskBufferIF for the brokers: every method returns what JediTaskBuffer/TaskBuffer would."""

    def __init__(self, grid):
        self.grid = grid
        self.calls = []
        self.assigned = {}
        self._site_mapper = None
        self._wq_map = None

    def _log(self, name, *args):
        self.calls.append(name)

    # --- sites -----------------------------------------------------------------------------------------------
    def load_resource_types(self, formatting="spec"):
        self._log("load_resource_types")
        return [ResourceSpec(*r) for r in RESOURCE_TYPES]

    def getSiteInfo(self):
        self._log("getSiteInfo")
        return OfflineSiteDB(self.grid).getSiteInfo()

    def get_cloud_list(self):
        self._log("get_cloud_list")
        clouds = {q["data"].get("cloud", "").split(",")[0] for q in self.grid["queues"].values()}
        return sorted(c for c in clouds | {"WORLD"} if c)

    def get_site_mapper(self):
        self._log("get_site_mapper")
        if self._site_mapper is None:
            self._site_mapper = SiteMapper(self)
        return self._site_mapper

    def getConfigValue(self, component, key, app="pandaserver", vo=None, default=None):
        self._log("getConfigValue")
        return self.grid["config"].get(f"{component}:{key}", default)

    def getWorkQueueMap(self):
        self._log("getWorkQueueMap")
        if self._wq_map is None:
            m = WorkQueueMapper()
            rows = [
                tuple(wq.get(a) for a in ("queue_id", "queue_name", "queue_type", "VO", "queue_share", "queue_order",
                                           "criteria", "variables", "partitionID", "stretchable", "status",
                                           "queue_function"))
                for wq in self.grid.get("work_queues", [])
            ]  # fmt: skip
            leaves = [
                Share(gs["name"], gs.get("value", 1), gs.get("parent"), gs.get("prodsourcelabel", "managed"), None,
                      None, None, None, None, "atlas", gs.get("queue_id"), gs.get("throttled", "Y"))
                for gs in self.grid.get("gshares", [])
            ]  # fmt: skip
            m.makeMap(rows, leaves)
            self._wq_map = m
        return self._wq_map

    # --- job statistics (JOBS_SHARE_STATS rows, keyed by the unified queue name) ------------------------------
    def _rows(self):
        return self.grid.get("job_stats", [])

    def getJobStatisticsByGlobalShare(self, vo, exclude_rwq=False):
        self._log("getJobStatisticsByGlobalShare")
        ret = {}
        for r in self._rows():
            if r.get("vo", "atlas") != vo:  # PanDA selects one VO's rows (vo=:vo)
                continue
            d = ret.setdefault(r["site"], {}).setdefault(r["gshare"], {})
            d[r["status"]] = d.get(r["status"], 0) + r["n"]
        return True, ret

    def getJobStatisticsWithWorkQueue_JEDI(self, vo, prodSourceLabel, minPriority=None):
        self._log("getJobStatisticsWithWorkQueue_JEDI")
        return True, {}

    def getJobStatisticsByResourceTypeSite(self, workqueue):
        self._log("getJobStatisticsByResourceTypeSite")
        ret = {}
        for r in self._rows():
            if workqueue.is_global_share and r["gshare"] == workqueue.queue_name:
                d = ret.setdefault(r["site"], {}).setdefault(r["resource_type"], {})
                d[r["status"]] = d.get(r["status"], 0) + r["n"]
        return True, ret

    def get_num_jobs_with_status_by_nucleus(self, vo, job_status):
        self._log("get_num_jobs_with_status_by_nucleus")
        ret = {}
        for r in self.grid.get("transferring_by_nucleus", []):
            ret.setdefault(r["site"], {})[r["nucleus"]] = r["n"]
        return True, ret

    def getAvgDiskIO_JEDI(self):
        self._log("getAvgDiskIO_JEDI")
        return dict(self.grid.get("avg_diskio", {}))

    def get_core_statistics(self, vo, prod_source_label):
        self._log("get_core_statistics")
        return True, {}

    def get_distinct_resource_types_per_site(self, jedi_task_id, threshold=20.0):
        self._log("get_distinct_resource_types_per_site")
        return {}

    # --- site activity -----------------------------------------------------------------------------------------
    def getCurrentSiteData(self):
        self._log("getCurrentSiteData")
        return {s: {"getJob": v.get("getJob", 0), "updateJob": v.get("updateJob", 0)}
                for s, v in self.grid.get("site_data", {}).items()}  # fmt: skip

    def getInactiveSites_JEDI(self, flag, timeLimit):
        self._log("getInactiveSites_JEDI")
        return {s for s, v in self.grid.get("site_data", {}).items()
                if v.get("laststart_age") is not None and v["laststart_age"] > timeLimit * 3600}  # fmt: skip

    def checkProcessLock_JEDI(self, vo, prodSourceLabel, cloud, workqueue_id, resource_name, component, pid, checkBase):
        self._log("checkProcessLock_JEDI")
        return False

    def getNumReadyEvents(self, jediTaskID):
        self._log("getNumReadyEvents")
        return None

    def getNetworkMetrics(self, dst, keyList):
        self._log("getNetworkMetrics")
        nm, total = {}, {}
        for row in self.grid.get("network", []):
            if row["dst"] != dst or row["key"] not in keyList or row.get("age", 0) > 3600:
                continue
            nm.setdefault(row["src"], {})[row["key"]] = row["value"]
            total[row["key"]] = total.get(row["key"], 0) + row["value"]
        nm["total"] = total
        return nm

    def getPandaSiteToOutputStorageSiteMapping(self):
        self._log("getPandaSiteToOutputStorageSiteMapping")
        m = {}
        for rel in self.grid["panda_ddm_relation"]:
            if rel.get("default_write") == "Y":
                site = self.grid["ddm_endpoints"][rel["ddm_endpoint_name"]]["site_name"]
                m.setdefault(rel["panda_site_name"], {})[rel.get("scope") or "default"] = site
        return m

    def ups_load_worker_stats(self):
        self._log("ups_load_worker_stats")
        return copy.deepcopy(self.grid.get("worker_stats", {}))

    def ups_get_queues(self):
        self._log("ups_get_queues")
        return [n for n, q in self.grid["queues"].items()
                if q["data"].get("capability") == "ucore" and q["data"].get("workflow") == "pull_ups"]  # fmt: skip

    def load_sw_map(self):
        self._log("load_sw_map")
        return copy.deepcopy(self.grid.get("sw_tags", {}))

    def get_architecture_level_map(self):
        self._log("get_architecture_level_map")
        return {}

    def get_worker_node_gpu_map(self):
        self._log("get_worker_node_gpu_map")
        return {}

    # --- task brokerage ----------------------------------------------------------------------------------------
    def calculateWorldRWwithPrio_JEDI(self, vo, prodSourceLabel, workQueue, priority):
        self._log("calculateWorldRWwithPrio_JEDI")
        rw = self.grid.get("world_rw", {})
        if priority is None:
            return dict(rw.get("full", {}))
        return dict(rw.get(f"{workQueue.queue_name}:{priority}", {}))

    def calculateTaskWorldRW_JEDI(self, jediTaskID):
        self._log("calculateTaskWorldRW_JEDI")
        return self.grid.get("task_rw", {}).get(str(jediTaskID), 0)

    def getTaskParamsWithID_JEDI(self, jediTaskID, use_commit=True):
        self._log("getTaskParamsWithID_JEDI")
        return json.dumps(self.grid.get("task_params", {}).get(str(jediTaskID), {}))

    def updateTask_JEDI(self, taskSpec, criteria, oldStatus=None, updateDEFT=True, insertUnknown=None,
                        setFrozenTime=True, setOldModTime=False):  # fmt: skip
        self._log("updateTask_JEDI")
        return True, 1

    def getBackloggedNuclei(self):
        self._log("getBackloggedNuclei")
        cap = self.getConfigValue("taskbrokerage", "NQUEUED_NUC_CAP", "jedi")
        cap = 2000 if cap is None else cap
        tot = {}
        for r in self.grid.get("network", []):
            if r["key"] == "Production Output_queued" and r.get("age", 0) <= 3600:
                tot[r["dst"]] = tot.get(r["dst"], 0) + r["value"]
        return [d for d, v in tot.items() if v > cap]

    def getDatasetsWithJediTaskID_JEDI(self, jediTaskID, datasetTypes=None, getFiles=False):
        self._log("getDatasetsWithJediTaskID_JEDI")
        specs = self.grid.get("_output_specs", {}).get(jediTaskID, [])
        return True, [d for d in specs if not datasetTypes or d.type in datasetTypes]

    def setCloudToTasks_JEDI(self, taskCloudMap):
        self._log("setCloudToTasks_JEDI")
        self.assigned.update(taskCloudMap)
        return True

    def getTaskWithID_JEDI(self, jediTaskID, fullFlag=False, lockTask=False, pid=None, lockInterval=None,
                           clearError=False):  # fmt: skip
        self._log("getTaskWithID_JEDI")
        return True, self.grid.get("_task_specs", {}).get(jediTaskID)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"FakeTaskBuffer has no method {name!r} (add a fake)")


class FakeRucioClient:
    """The rucio calls AtlasDDMClient makes, answered from grid['rucio'] (dids, dataset_replicas, file_replicas,
    rules; a dataset without a rule counts as distributed, pitfall 7)."""

    grid = None

    def _r(self):
        return FakeRucioClient.grid.get("rucio", {})

    def get_metadata(self, scope, name):
        d = self._r().get("dids", {}).get(name)
        if d is None:
            raise DataIdentifierNotFound(f"{scope}:{name}")
        return {"scope": scope, "name": name, "did_type": "DATASET", "is_open": False, **d}

    def list_dataset_replicas(self, scope, name, deep=False):
        for rep in self._r().get("dataset_replicas", {}).get(name, []):
            yield dict(rep)

    def list_dataset_replicas_vp(self, scope, name):
        return iter([])

    def list_replicas(self, dids, resolve_archives=True):
        fr = self._r().get("file_replicas", {})
        for did in dids:
            rses = fr.get(did["name"])
            if rses:
                yield {
                    "scope": did["scope"],
                    "name": did["name"],
                    "rses": {r: [f"root://{r}/{did['name']}"] for r in rses},
                }

    def list_did_rules(self, scope, name):
        return iter(self._r().get("rules", {}).get(name, []))

    def list_content(self, scope, name):
        return iter({"scope": scope, "name": n} for n in self._r().get("contents", {}).get(name, []))

    def list_accounts(self, account_type=None, identity=None, **kwargs):
        """Every user has a rucio account named like the user (the finger lookup of check_global_quota)."""
        if account_type == "USER" and identity:
            yield {"account": identity, "email": ""}

    def get_account(self, account):
        return {"account": account, "email": ""}

    def get_local_account_usage(self, *args, **kwargs):
        return iter([])

    def get_global_account_usage(self, account, *args, **kwargs):
        if account in self._r().get("quota_exceeded", ()):
            yield {"bytes": 2 * 1000**4, "bytes_limit": 1000**4, "rse_expression": "type=SCRATCHDISK"}


def install_fake_rucio(grid, endpoints_json):
    """Make every rucio Client a FakeRucioClient over GRID and write the CRIC endpoints JSON (tape flags, pitfall 8)."""
    FakeRucioClient.grid = grid
    rucio.client.Client.impl = FakeRucioClient
    eps = {name: {"state": "ACTIVE", "is_tape": bool(ep.get("is_tape")), "site": ep["site_name"], "type": ep.get("type")}
           for name, ep in grid["ddm_endpoints"].items()}  # fmt: skip
    with open(endpoints_json, "w") as f:
        json.dump(eps, f)


class OfflineDDMIF:
    """JEDI's IPC proxy contract in-process: the StatusCode is stripped, failures raise (pitfall 6)."""

    def __init__(self, grid, endpoints_json):
        install_fake_rucio(grid, endpoints_json)
        self.impl = AtlasDDMClient(None)
        self.calls = []

    def getInterface(self, vo, group=None):
        return self

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = getattr(self.impl, name)

        def call(*args, **kwargs):
            kwargs.pop("useResultCache", None)
            self.calls.append(name)
            try:
                ret = fn(*args, **kwargs)
            except Exception as e:
                raise Interaction.JEDIFatalError(f"type={type(e).__name__} : {name} : {e}") from e
            if isinstance(ret, Interaction.StatusCode):
                status, value = ret, None
            elif isinstance(ret, (tuple, list)) and ret and isinstance(ret[0], Interaction.StatusCode):
                status = ret[0]
                value = (ret[1] if len(ret) == 2 else ret[1:]) if len(ret) > 1 else None
            else:
                return ret
            if status == Interaction.SC_SUCCEEDED:
                return value
            if status == Interaction.SC_FATAL:
                raise Interaction.JEDIFatalError(f"VO=atlas {value}")
            raise Interaction.JEDITemporaryError(f"VO=atlas {value}")

        return call
