"""The input data of the demo grid's tasks: master and secondary datasets in ATLAS nomenclature, and their
replicas at DDM endpoints, mostly at the task's nucleus already, RAW on tape (``datasets``,
``dataset_replicas``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from brokerage.synth.common import DATASET_ID_BASE, IO_INTENSITY_CUTOFF
from brokerage.synth.sites import Sites

Scale = Callable[[np.ndarray], np.ndarray]  # events left per task -> a factor per task

# per master input type: (datatype, MB per event, events per file, median files)
_INPUT = {
    "evgen": ("pseudo", 0.0, 0, 0),
    "simul": ("EVNT", 0.05, 10000, 50),
    "urgent": ("EVNT", 0.05, 10000, 10),
    "pile": ("HITS", 1.0, 2000, 200),
    "reprocessing": ("RAW", 1.2, 2500, 1500),
    "deriv": ("AOD", 0.4, 10000, 300),
    "merge": ("HITS", 1.0, 200, 2000),
    "user": ("DAOD_PHYS", 0.04, 50000, 150),
}

PHYSICS = (
    "PhPy8EG_A14_ttbar_hdamp258p75_SingleLep",
    "PhPy8EG_A14_ttbar_hdamp258p75_dil",
    "Sh_2214_Zee_maxHTpTV2_BFilter",
    "Sh_2214_Wmunu_maxHTpTV2_CVetoBVeto",
    "PhPy8EG_AZNLO_Zmumu",
    "MGPy8EG_A14N23LO_SS_direct_1200_100",
    "PhPy8EG_PDF4LHC21_ggH125_gammagamma",
    "Py8EG_A14NNPDF23LO_jj_JZ2",
    "aMCPy8EG_NNPDF30NLO_A14N23LO_ttW",
)
_MINBIAS = (
    "mc23_13p6TeV.800831.Py8EG_minbias_inelastic_highjetphotonlepton.simul.HITS_FILT.e8514_s4159_s4114",
    "mc23_13p6TeV.900311.Epos_minbias_inelastic_lowjetphoton.simul.HITS_FILT.e8514_s4159_s4114",
)


@dataclass
class _Inputs:
    """Every dataset (masters first per task, then its secondaries) as parallel arrays."""

    task_of: np.ndarray  # index of the task reading it
    is_master: np.ndarray
    kind: np.ndarray  # -1 master, 0/1 minimum bias of a pile-up task, 2 another secondary
    nfiles: np.ndarray
    size: np.ndarray
    dsid: np.ndarray


def _masters(
    rng: np.random.Generator, ptype: np.ndarray, status: np.ndarray, scale: Scale | None = None
) -> dict[str, np.ndarray]:
    """Master input of every task: type by processing type, files, events (pseudo input for generation), size
    and the events used so far by the task's status; SCALE (events left -> a factor per task) grows the input
    (no extra draw)."""
    n = len(ptype)
    spec = [_INPUT[t] for t in ptype.tolist()]
    dtype = np.array([s[0] for s in spec], dtype=object)
    mb_ev = np.array([s[1] for s in spec])
    ev_file = np.array([s[2] for s in spec])
    med = np.array([s[3] for s in spec], dtype=float)
    pseudo = (dtype == "pseudo") | ((ptype == "user") & (rng.random(n) < 0.05))
    nfiles = np.where(pseudo, 0, np.maximum(1, np.round(rng.lognormal(np.log(np.maximum(med, 1)), 0.9)))).astype(
        np.int64
    )
    nevents = np.where(pseudo, np.round(np.exp(rng.uniform(np.log(1e5), np.log(2e7), n)), -3), nfiles * ev_file).astype(
        np.int64
    )
    size = np.round(nfiles * ev_file * mb_ev / 1024.0, 3)
    used_frac = np.select(
        [np.isin(status, ("assigning", "defined")), status == "ready", status == "scouting", status == "running"],
        [0.0, rng.uniform(0, 0.2, n), rng.uniform(0, 0.05, n), rng.uniform(0.1, 0.9, n)],
        rng.uniform(0, 0.5, n),
    )
    used = np.floor(nevents * used_frac).astype(np.int64)
    if scale is not None:
        k = scale(nevents - used)
        nfiles = np.round(nfiles * k).astype(np.int64)
        nevents = np.where(pseudo, np.round(nevents * k, -3), nfiles * ev_file).astype(np.int64)
        size = np.round(nfiles * ev_file * mb_ev / 1024.0, 3)
        used = np.floor(nevents * used_frac).astype(np.int64)
    return {
        "dtype": dtype,
        "mb_ev": mb_ev,
        "ev_file": ev_file,
        "pseudo": pseudo,
        "nfiles": nfiles,
        "nevents": nevents,
        "size": size,
        "used": used,
    }


def _secondaries(rng: np.random.Generator, ptype: np.ndarray, m: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Secondary inputs: two minimum-bias datasets per pile-up task, and a second input for a few other tasks."""
    n = len(ptype)
    sec_pile = ptype == "pile"
    sec_other = ~sec_pile & ~m["pseudo"] & (rng.random(n) < 0.06)
    sec_task = np.concatenate([np.flatnonzero(sec_pile), np.flatnonzero(sec_pile), np.flatnonzero(sec_other)])
    sec_kind = np.concatenate(
        [
            np.zeros(int(sec_pile.sum()), dtype=np.int64),
            np.ones(int(sec_pile.sum()), dtype=np.int64),
            np.full(int(sec_other.sum()), 2),
        ]
    )
    order = np.argsort(sec_task, kind="stable")
    sec_task, sec_kind = sec_task[order], sec_kind[order]
    k = len(sec_task)
    ev_file, mb_ev = m["ev_file"][sec_task], m["mb_ev"][sec_task]
    sec_nfiles = np.where(
        sec_kind < 2,
        rng.integers(5000, 20000, k),
        np.maximum(1, np.round(m["nfiles"][sec_task] * rng.uniform(0.1, 0.5, k))),
    ).astype(np.int64)
    sec_nev = np.where(sec_kind < 2, sec_nfiles * 5000, sec_nfiles * np.maximum(ev_file, 1))
    sec_size = np.round(
        np.where(sec_kind < 2, sec_nfiles * 5000 * 0.5 / 1024.0, sec_nfiles * np.maximum(ev_file, 1) * mb_ev / 1024.0),
        3,
    )
    return {"task": sec_task, "kind": sec_kind, "nfiles": sec_nfiles, "nevents": sec_nev, "size": sec_size}


def _names(
    rng: np.random.Generator, tid: np.ndarray, ptype: np.ndarray, m: dict[str, np.ndarray], d: _Inputs
) -> np.ndarray:
    """Dataset names in ATLAS nomenclature (minimum bias, pseudo, RAW, DAOD, HITS, EVNT, AOD)."""
    nd = len(d.task_of)
    dsn = rng.integers(500000, 999999, nd)
    phys = rng.integers(0, len(PHYSICS), nd)
    runs = rng.integers(470000, 490000, nd)
    dnames = []
    for t, k, ds, p, rn, i in zip(
        d.task_of.tolist(),
        d.kind.tolist(),
        dsn.tolist(),
        phys.tolist(),
        runs.tolist(),
        tid[d.task_of].tolist(),
        strict=True,
    ):
        dt = m["dtype"][t]
        if k in (0, 1):
            dnames.append(_MINBIAS[k])
        elif dt == "pseudo" or (k == -1 and m["nfiles"][t] == 0):
            dnames.append(f"pseudo_dataset.{i}")
        elif dt == "RAW":
            dnames.append(f"data24_13p6TeV.{rn:08d}.physics_Main.daq.RAW")
        elif dt == "DAOD_PHYS":
            dnames.append(f"mc23_13p6TeV.{ds}.{PHYSICS[p]}.deriv.DAOD_PHYS.e8514_s4162_r15540_p6266")
        elif ptype[t] == "merge":
            dnames.append(f"mc23_13p6TeV.{ds}.{PHYSICS[p]}.simul.HITS.e8514_s4162_tid{i - 7}_00")
        else:
            step = {"EVNT": "evgen", "HITS": "simul", "AOD": "recon"}[dt]
            dnames.append(f"mc23_13p6TeV.{ds}.{PHYSICS[p]}.{step}.{dt}.e8514_s4162{'_r15540' if dt == 'AOD' else ''}")
    return np.array(dnames, dtype=object)


def _inputs(
    rng: np.random.Generator, tid: np.ndarray, ptype: np.ndarray, m: dict[str, np.ndarray], sec: dict[str, np.ndarray]
) -> tuple[_Inputs, dict[str, Any]]:
    """Masters and secondaries in one table, each task's master first; and the ``datasets`` columns."""
    n, k = len(ptype), len(sec["task"])
    task_of = np.concatenate([np.arange(n), sec["task"]])
    is_master = np.concatenate([np.ones(n, dtype=bool), np.zeros(k, dtype=bool)])
    order = np.lexsort((~is_master, task_of))
    d = _Inputs(
        task_of=task_of[order],
        is_master=is_master[order],
        kind=np.concatenate([np.full(n, -1), sec["kind"]])[order],
        nfiles=np.concatenate([m["nfiles"], sec["nfiles"]])[order],
        size=np.concatenate([m["size"], sec["size"]])[order],
        dsid=DATASET_ID_BASE + np.arange(n + k),
    )
    datasets = {
        "jeditaskid": tid[d.task_of],
        "datasetid": d.dsid,
        "datasetname": _names(rng, tid, ptype, m, d),
        "is_master": d.is_master,
        "nfiles": d.nfiles,
        "size_gb": d.size,
        "nevents": np.concatenate([m["nevents"], sec["nevents"]])[order],
        "neventsused": np.concatenate([m["used"], np.zeros(k, dtype=np.int64)])[order],
        "_master_mb_per_event": m["mb_ev"],
    }
    return d, datasets


@dataclass
class _Copies:
    """Replicas before completeness: dataset, endpoint and position of each copy, and why it is where it is."""

    n_rep: np.ndarray  # copies of each dataset
    ds: np.ndarray  # index into _Inputs, grouped by dataset
    pos: np.ndarray  # 0 for a dataset's first copy
    ep: np.ndarray  # index into the endpoints
    local: np.ndarray  # first copy at the task's nucleus
    io_heavy: np.ndarray
    raw: np.ndarray  # master RAW (set with the tape copies, like the two below)
    tape_only: np.ndarray
    on_tape: np.ndarray


def _disk_copies(
    rng: np.random.Generator, sites: Sites, ep: dict[str, Any], d: _Inputs, nucleus: np.ndarray, io: np.ndarray
) -> tuple[_Copies, np.ndarray]:
    """1-4 disk copies per dataset (nuclei hold more; minimum bias 6-11), the first mostly at the task's nucleus;
    IO-intensive tasks were sent where their data is. Also the nucleus site of each copy's task."""
    nd = len(d.task_of)
    ep_site = ep["_site"]
    disk = np.flatnonzero(ep["type"] == "DATADISK")
    w = sites.weight[ep_site[disk]] * np.where(sites.nucleus[ep_site[disk]], 4.0, 1.0)
    w /= w.sum()
    n_rep = np.where(
        d.kind >= 0,
        np.where(d.kind < 2, rng.integers(6, 12, nd), rng.integers(1, 3, nd)),
        rng.choice([1, 2, 3, 4], size=nd, p=[0.3, 0.35, 0.22, 0.13]),
    )
    n_rep = np.where(d.nfiles > 0, n_rep, 0)
    r_ds = np.repeat(np.arange(nd), n_rep)
    r_first = np.cumsum(n_rep) - n_rep
    r_pos = np.arange(len(r_ds)) - np.repeat(r_first, n_rep)
    r_ep = disk[rng.choice(len(disk), size=len(r_ds), p=w)]
    lookup = np.full(sites.n, -1, dtype=np.int64)
    lookup[ep_site[disk]] = disk
    name_to_site = {s: i for i, s in enumerate(sites.name.tolist())}
    tasks = d.task_of[r_ds]
    nuc_site = np.array([name_to_site.get(x, -1) if x else -1 for x in nucleus[tasks].tolist()], dtype=np.int64)
    # input mostly at the nucleus already; IO-intensive tasks were sent where their data is
    io_heavy = io[tasks] > IO_INTENSITY_CUTOFF
    p_local = np.where(io_heavy, 0.9, 0.55)
    local = (r_pos == 0) & (nuc_site >= 0) & (d.is_master[r_ds] | io_heavy) & (rng.random(len(r_ds)) < p_local)
    r_ep = np.where(local, lookup[np.maximum(nuc_site, 0)], r_ep)
    unset = np.zeros(len(r_ds), dtype=bool)
    return _Copies(n_rep, r_ds, r_pos, r_ep, local, io_heavy, unset, unset, unset), nuc_site


def _tape_copies(
    rng: np.random.Generator,
    sites: Sites,
    ep: dict[str, Any],
    d: _Inputs,
    dtype: np.ndarray,
    c: _Copies,
    nuc_site: np.ndarray,
) -> None:
    """RAW and a few tape-only masters have their first copy on tape, RAW at its nucleus's tape (in place)."""
    nd = len(d.task_of)
    ep_site = ep["_site"]
    tape = np.flatnonzero(ep["type"] == "DATATAPE")
    tape_lookup = np.full(sites.n, -1, dtype=np.int64)
    tape_lookup[ep_site[tape]] = tape
    master = d.is_master[c.ds]
    c.raw = np.array([dtype[t] == "RAW" for t in d.task_of[c.ds].tolist()], dtype=bool) & master
    c.tape_only = master & ~c.raw & (np.repeat(rng.random(nd) < 0.03, c.n_rep))
    c.on_tape = ((c.raw | c.tape_only) & (c.pos == 0)) if len(tape) else np.zeros(len(c.ds), dtype=bool)
    if len(tape):
        # RAW sits on the tape of the nucleus when the nucleus has one (data carousel stages it from there)
        own_tape = tape_lookup[np.maximum(nuc_site, 0)]
        some_tape = tape[rng.integers(0, len(tape), len(c.ds))]
        c.ep = np.where(c.on_tape, np.where((nuc_site >= 0) & (own_tape >= 0) & c.raw, own_tape, some_tape), c.ep)


def _complete(
    rng: np.random.Generator, sites: Sites, ep: dict[str, Any], d: _Inputs, tid: np.ndarray, c: _Copies
) -> dict[str, Any]:
    """The ``dataset_replicas`` columns: extra copies of tape data mostly dropped, first copies mostly complete,
    pile-up minimum bias complete at every nucleus, one row per (dataset, endpoint)."""
    nd = len(d.task_of)
    drop = c.tape_only & (c.pos > 0)
    drop |= c.raw & (c.pos > 0) & (np.repeat(rng.random(nd), c.n_rep) > 0.3)
    full = np.where(c.pos == 0, rng.random(len(c.ds)) < 0.9, rng.random(len(c.ds)) < 0.6) | c.on_tape
    full |= c.local & c.io_heavy
    frac = np.where(full, 1.0, rng.uniform(0.05, 0.95, len(c.ds)))
    keep = ~drop
    r_ds, r_ep, frac = c.ds[keep], c.ep[keep], frac[keep]
    # pile-up minimum bias is kept complete at every nucleus
    ep_site = ep["_site"]
    disk = np.flatnonzero(ep["type"] == "DATADISK")
    mb = np.flatnonzero((d.kind >= 0) & (d.kind < 2))
    nuc_disk = disk[sites.nucleus[ep_site[disk]]]
    r_ds = np.concatenate([r_ds, np.repeat(mb, len(nuc_disk))])
    r_ep = np.concatenate([r_ep, np.tile(nuc_disk, len(mb))])
    frac = np.concatenate([frac, np.ones(len(mb) * len(nuc_disk))])
    pair = r_ds * (len(ep_site) + 1) + r_ep
    _, first = np.unique(pair, return_index=True)
    first = np.sort(first)
    r_ds, r_ep, frac = r_ds[first], r_ep[first], frac[first]
    return {
        "jeditaskid": tid[d.task_of[r_ds]],
        "datasetid": d.dsid[r_ds],
        "ddm_endpoint_name": ep["ddm_endpoint_name"][r_ep],
        "nfiles": np.round(d.nfiles[r_ds] * frac).astype(np.int64),
        "size_gb": np.round(d.size[r_ds] * frac, 3),
    }


def make_datasets(
    rng: np.random.Generator,
    tid: np.ndarray,
    ptype: np.ndarray,
    status: np.ndarray,
    nucleus: np.ndarray,
    io: np.ndarray,
    sites: Sites,
    ep: dict[str, Any],
    scale: Scale | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Master and secondary input datasets of every task, and their replicas at DDM endpoints; SCALE grows the
    master inputs (``_masters``)."""
    m = _masters(rng, ptype, status, scale)
    sec = _secondaries(rng, ptype, m)
    d, datasets = _inputs(rng, tid, ptype, m, sec)
    copies, nuc_site = _disk_copies(rng, sites, ep, d, nucleus, io)
    _tape_copies(rng, sites, ep, d, m["dtype"], copies, nuc_site)
    return datasets, _complete(rng, sites, ep, d, tid, copies)
