"""Run PanDA's own brokers on a converted grid: ``python driver.py --src PANDA_SRC --work DIR < doc.json > out.json``.

This file runs only in PanDA's separate venv (scripts/panda.sh), never in the project's process: it imports
PanDA's unmodified ``pandajedi``/``pandaserver`` from the unpacked sdist. The input is the JSON document
``brokerage.crosscheck.convert.jedi_document`` writes (one grid, many tasks); the output is one JSON object with,
per task and per broker, the status, the candidates' weights and every log line (INFO and above) the broker wrote.
Two runtime replacements only: ``MsgWrapper.uploadLog`` (the real one posts to a server) and ``sendMsg``.
"""

import argparse
import json
import os
import random
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
CFG_COMMON = "[logger]\nloghost = localhost\nmonport-apache = 9\nmonurlprefix = /nowhere\nmethod = POST\n" \
    "encoding = json\nlogdir = {logdir}\nlog_level = DEBUG\n"  # fmt: skip
CFG_SERVER = "[server]\npserverhost = localhost\nbackend = postgres\n"
CFG_JEDI = "[master]\nloggername = jedi\n[db]\nbackend = oracle\nnWorkers = 1\n[ddm]\n" \
    "modConfig = atlas:1:pandajedi.jediddm.AtlasDDMClient:AtlasDDMClient\nendpoints_json_path = {endpoints}\n"  # fmt: skip
BROKER_LOGGERS = ("AtlasProdJobBroker", "AtlasProdTaskBroker", "AtlasAnalJobBroker")


def setup_env(src, work):
    """PANDA_HOME with three small cfg files; sys.path gets the sdist and the shim packages. Before any PanDA import."""
    home = os.path.join(work, "home")
    logdir = os.path.join(work, "logs")
    endpoints = os.path.join(work, "cric_ddmendpoints.json")
    os.makedirs(os.path.join(home, "etc", "panda"), exist_ok=True)
    os.makedirs(logdir, exist_ok=True)
    for name, text in (("panda_common.cfg", CFG_COMMON.format(logdir=logdir)), ("panda_server.cfg", CFG_SERVER),
                       ("panda_jedi.cfg", CFG_JEDI.format(endpoints=endpoints))):  # fmt: skip
        with open(os.path.join(home, "etc", "panda", name), "w") as f:
            f.write(text)
    if not os.path.exists(endpoints):
        with open(endpoints, "w") as f:
            json.dump({}, f)
    os.environ["PANDA_HOME"] = home
    for p in (os.path.join(HERE, "shim"), HERE, src):
        if p not in sys.path:
            sys.path.insert(0, p)
    return endpoints


class Capture:
    """Collects the lines the brokers log (their loggers do not propagate, pitfall 14)."""

    def __init__(self, logging):
        self.records = []
        handler = logging.Handler(logging.DEBUG)
        handler.emit = lambda record: self.records.append(
            (record.name.split(".")[-1], record.levelno, record.getMessage())
        )
        for n in BROKER_LOGGERS:
            logging.getLogger(f"panda.log.{n}").addHandler(handler)

    def take(self, level):
        out = []
        for name, lvl, msg in self.records:
            if lvl >= level:
                out.append([name, msg.split("> ", 1)[-1] if msg.startswith("<") else msg])
        self.records = []
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--debug", action="store_true", help="keep the brokers' DEBUG lines too")
    args = ap.parse_args()
    endpoints = setup_env(args.src, args.work)
    import logging

    import runner

    doc = json.load(sys.stdin)
    capture = Capture(logging)
    out = {"panda_version": runner.panda_version(), "grids": []}
    for grid in doc["grids"]:
        random.seed(grid.get("seed", 0))
        runner.reset_process_caches()
        results = {}
        started = time.perf_counter()
        try:
            env = runner.Env(grid, endpoints)
        except Exception:
            out["grids"].append({"error": traceback.format_exc(), "tasks": {}})
            continue
        for task in grid["tasks"]:
            results[str(task["jediTaskID"])] = runner.run_task(
                env, task, capture, logging.DEBUG if args.debug else logging.INFO
            )
        out["grids"].append(
            {"tasks": results, "seconds": time.perf_counter() - started, "fake_calls": sorted(set(env.tb.calls))}
        )
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    main()
