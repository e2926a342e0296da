"""The extra task-buffer methods AtlasAnalJobBroker calls (PanDA venv only): user and task job counts, the
Analysis Stabilizer's inputs, the Metrics rows (site classes, user and task evaluation, global-share usage) and
JEDI's cache/lock methods (always a cache miss and a free lock). Shapes copied from the real DB-proxy methods.
"""

import json

JOB_QUEUED = ("defined", "assigned", "activated", "starting")


class AnalysisFakes:
    """Mixed into FakeTaskBuffer; reads grid['user_jobs'], grid['task_jobs'], grid['trr'], grid['metrics']."""

    grid: dict

    def _log(self, name, *args):  # replaced by FakeTaskBuffer's
        pass

    def countJobsPerTarget_JEDI(self, target, is_user):
        self._log("countJobsPerTarget_JEDI")
        ret = {"nQueuedJobs": 0, "nQueuedCores": 0, "nRunJobs": 0, "nRunCores": 0}
        for r in self.grid.get("user_jobs", []):
            who = r["user"] if not r.get("wg") else r["wg"]
            if who != target or bool(not r.get("wg")) != bool(is_user):
                continue
            if r["status"] in (*JOB_QUEUED, "throttled"):
                ret["nQueuedJobs"] += r["n"]
                ret["nQueuedCores"] += r.get("cores", 0)
            elif r["status"] == "running":
                ret["nRunJobs"] += r["n"]
                ret["nRunCores"] += r.get("cores", 0)
        return ret

    def getUsersJobsStats_JEDI(self, prod_source_label=None):
        self._log("getUsersJobsStats_JEDI")
        out = {}
        for r in self.grid.get("user_jobs", []):
            per = out.setdefault(r["site"], {}).setdefault(r["gshare"], {})
            for who in (r["user"], "_total"):
                d = per.setdefault(who, {"nDefined": 0, "nAssigned": 0, "nActivated": 0, "nStarting": 0, "nQueue": 0,
                                         "nRunning": 0})  # fmt: skip
                if r["status"] in JOB_QUEUED:
                    d[f"n{r['status'].capitalize()}"] += r["n"]
                    d["nQueue"] += r["n"]
                elif r["status"] == "running":
                    d["nRunning"] += r["n"]
        return out

    def getFailureCountsForTask_JEDI(self, jediTaskID, timeWindow):
        self._log("getFailureCountsForTask_JEDI")
        out = {}
        for r in self.grid.get("task_jobs", {}).get(str(jediTaskID), []):
            if r["age"] <= timeWindow * 3600:
                d = out.setdefault(r["site"], {})
                d[r["status"]] = d.get(r["status"], 0) + r["n"]
        return out

    def getSitesUsedByTask_JEDI(self, jediTaskID):
        self._log("getSitesUsedByTask_JEDI")
        return True, []

    def get_origin_datasets(self, jedi_task_id, dataset_name, lfns):
        self._log("get_origin_datasets")
        return None

    def getSiteToRunRateStats(self, vo, exclude_rwq, starttime_min, starttime_max):
        self._log("getSiteToRunRateStats")
        return True, dict(self.grid.get("trr", {}))

    def getCache_JEDI(self, main_key, sub_key):
        self._log("getCache_JEDI")
        return None

    def updateCache_JEDI(self, main_key, sub_key, data):
        self._log("updateCache_JEDI")
        return True

    def lockProcess_JEDI(self, *args, **kwargs):
        self._log("lockProcess_JEDI")
        return True

    def unlockProcess_JEDI(self, *args, **kwargs):
        self._log("unlockProcess_JEDI")
        return True

    def querySQL(self, sql, var_map):
        """The Metrics / Task_Evaluation reads of AtlasBrokerUtils, by their :metric."""
        self._log("querySQL")
        m = self.grid.get("metrics", {})
        metric = var_map.get(":metric")
        if metric == "analy_site_eval":
            return [(site, c) for site, c in m.get("site_class", {}).items()]
        if metric == "gshare_preference":
            usage = m.get("gshare_usage", {}).get(var_map.get(":gshare"))
            return [] if usage is None else [(json.dumps(usage),)]
        if metric == "analy_user_eval":
            user = sql.split('value_json."', 1)[-1].split('"', 1)[0]
            ev = m.get("user_eval", {}).get(user)
            return [(None if ev is None else json.dumps(ev),)]
        if metric == "analy_task_eval":
            ev = m.get("task_eval", {}).get(str(var_map.get(":taskID")))
            return [] if ev is None else [(json.dumps(ev),)]
        raise NotImplementedError(f"offline querySQL: unexpected metric {metric!r}")
