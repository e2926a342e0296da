"""Build PanDA's task, dataset and file specs from the converted document and call the three brokers (PanDA venv only).

Imported by driver.py after its environment is set up; every class used here is PanDA's own, unmodified.
"""

import random
import time
import traceback

import fakes
from pandajedi.jedibrokerage.AtlasAnalJobBroker import AtlasAnalJobBroker
from pandajedi.jedibrokerage.AtlasProdJobBroker import AtlasProdJobBroker
from pandajedi.jedibrokerage.AtlasProdTaskBroker import AtlasProdTaskBroker
from pandajedi.jedicore.MsgWrapper import MsgWrapper
from pandaserver.taskbuffer.InputChunk import InputChunk
from pandaserver.taskbuffer.JediDatasetSpec import JediDatasetSpec
from pandaserver.taskbuffer.JediFileSpec import JediFileSpec
from pandaserver.taskbuffer.JediTaskSpec import JediTaskSpec

STATUS = {0: "SC_SUCCEEDED", 1: "SC_FAILED", 2: "SC_FATAL"}


def _upload_log(self, id):
    """MsgWrapper.uploadLog without the server: the errorDialog shape of a successful upload."""
    return f'<a href="offline://log/{id}">log</a> : {". ".join(self.bareMsg[-2:])}.'


MsgWrapper.uploadLog = _upload_log
MsgWrapper.sendMsg = lambda self, *a, **k: None


def reset_process_caches():
    """Empty JEDI's per-process caches (AtlasBrokerUtils.CACHE_*): each grid is a fresh JEDI process's view."""
    from pandajedi.jedibrokerage import AtlasBrokerUtils

    for name in dir(AtlasBrokerUtils):
        if name.startswith("CACHE_") and isinstance(getattr(AtlasBrokerUtils, name), dict):
            getattr(AtlasBrokerUtils, name).clear()


def panda_version():
    try:
        import PandaPkgInfo

        return PandaPkgInfo.release_version
    except ImportError:
        return "unknown"


class Env:
    """One grid: the fake task buffer (its SiteMapper is built once) and the DDM interface."""

    def __init__(self, grid, endpoints_json):
        self.grid = grid
        self.tb = fakes.FakeTaskBuffer(grid)
        self.ddm = fakes.OfflineDDMIF(grid, endpoints_json)
        self.tb.get_site_mapper()


def task_spec(doc):
    t = JediTaskSpec()
    for k, v in doc["spec"].items():
        setattr(t, k, v)
    t.frozenTime = fakes.ago(doc.get("frozen_age"))
    return t


def _dataset(t, d, master):
    ds = JediDatasetSpec()
    ds.jediTaskID = t.jediTaskID
    ds.datasetID = d["datasetID"]
    ds.datasetName = d["datasetName"]
    ds.type = "input" if master else "pseudo_input" if d.get("pseudo") else "input"
    ds.masterID = None if master else 1
    ds.nFiles = ds.nFilesToBeUsed = len(d["files"])
    ds.nFilesUsed = 0
    ds.state = "closed"
    ds.attributes = d.get("attributes")
    for i, fd in enumerate(d["files"]):
        f = JediFileSpec()
        f.jediTaskID = t.jediTaskID
        f.datasetID = ds.datasetID
        f.fileID = d["datasetID"] * 100000 + i
        f.lfn = fd["lfn"]
        f.scope = d.get("scope", "mc")
        f.GUID = f"guid-{f.fileID}"
        f.fsize = fd["fsize"]
        f.nEvents = fd.get("nEvents")
        f.startEvent = fd.get("startEvent")
        f.endEvent = fd.get("endEvent")
        f.status = "ready"
        ds.Files.append(f)
    return ds


def input_chunk(t, doc):
    dsets = doc.get("datasets", [])
    master = _dataset(t, dsets[0], True) if dsets else None
    chunk = InputChunk(t, masterDataset=master, secondaryDatasetList=[_dataset(t, d, False) for d in dsets[1:]],
                       ramCount=doc.get("chunk_ram", 0))  # fmt: skip
    if doc.get("scout"):
        chunk.setUseScout(True)
    if doc.get("merge"):
        chunk.isMerging = True
    return chunk


def output_specs(t, doc):
    out = []
    for i, (typ, token) in enumerate(doc.get("outputs", [])):
        d = JediDatasetSpec()
        d.jediTaskID = t.jediTaskID
        d.datasetID = 900000 + i
        d.datasetName = f"{t.taskName}.{typ}{i}"
        d.type = typ
        d.storageToken = token
        out.append(d)
    return out


def _result(st, capture, level, started, extra=None):
    return {"status": STATUS.get(getattr(st, "value", -1), str(st)), "log": capture.take(level),
            "ms": (time.perf_counter() - started) * 1000.0, **(extra or {})}  # fmt: skip


def run_prod(env, doc, capture, level):
    t = task_spec(doc)
    chunk = input_chunk(t, doc)
    started = time.perf_counter()
    broker = AtlasProdJobBroker(env.ddm, env.tb)
    broker.set_task_common_dict({})
    st, chunk = broker.doBrokerage(t, "WORLD", chunk, doc.get("task_params", {}))
    cands = {name: c.weight for name, c in chunk.siteCandidates.items()} if chunk is not None else {}
    return _result(st, capture, level, started, {"candidates": cands, "errorDialog": t.errorDialog})


def run_anal(env, doc, capture, level):
    t = task_spec(doc)
    chunk = input_chunk(t, doc)
    started = time.perf_counter()
    broker = AtlasAnalJobBroker(env.ddm, env.tb)
    broker.set_task_common_dict({})  # JobGenerator gives each task one dict shared by its chunks
    st, chunk = broker.doBrokerage(t, t.cloud, chunk, doc.get("task_params", {}))
    cands = {name: c.weight for name, c in chunk.siteCandidates.items()} if chunk is not None else {}
    return _result(st, capture, level, started, {"candidates": cands, "errorDialog": t.errorDialog})


def run_nucleus(env, doc, capture, level):
    t = task_spec(doc)
    t.nucleus = None
    t.status = "assigning"
    chunk = input_chunk(t, doc)
    env.tb.grid.setdefault("_output_specs", {})[t.jediTaskID] = output_specs(t, doc)
    env.tb.assigned = {}
    wq = env.tb.getWorkQueueMap().getQueueWithIDGshare(t.workQueue_ID, t.gshare)
    random.seed(doc.get("seed", 0))
    started = time.perf_counter()
    st = AtlasProdTaskBroker(env.tb, env.ddm).doBrokerage([(t.jediTaskID, [(t, "WORLD", chunk)])], "atlas",
                                                          t.prodSourceLabel, wq, t.resource_type)  # fmt: skip
    assigned = env.tb.assigned.get(t.jediTaskID, {})
    return _result(st, capture, level, started, {"nucleus": assigned.get("nucleus"), "errorDialog": t.errorDialog})


RUNNERS = {"prod": run_prod, "nucleus": run_nucleus, "anal": run_anal}


def run_task(env, doc, capture, level):
    out = {}
    for broker in doc["brokers"]:
        try:
            out[broker] = RUNNERS[broker](env, doc, capture, level)
        except Exception:
            out[broker] = {"status": "EXCEPTION", "error": traceback.format_exc(), "log": capture.take(level)}
    return out
