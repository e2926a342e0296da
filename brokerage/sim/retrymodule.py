"""The retry module as the server runs it on a failed job (jedi-lifecycle.md §4.3-§4.4): the retrial rules' actions
on the job's input, the memory and cpuTime increases, and the error classes' extra allowed failure."""

from __future__ import annotations

import numpy as np

from brokerage.model.profiles import rule
from brokerage.sim import retry
from brokerage.sim.state import SimState


def on_failed(state: SimState, rows: np.ndarray) -> None:
    """retryModule.job_failure_postprocessing for failed jobs ROWS, before their inputs' attempts are counted: per
    error the rules acted on (no_retry, limit_retry, increase_memory, increase_cputime), and system-class errors give
    the inputs one more allowed failure. Counted per (source, code, action) for the run's output. The server calls
    it as each job fails (brokerage.sim.propagate), so it has no period of its own.

    Usage: ``retrymodule.on_failed(state, rows)``
    """
    j, f = state.jobs, state.files
    src, code = j["errorSource"][rows], j["errorCode"][rows]
    for s_code, e_code in set(zip(src.tolist(), code.tolist(), strict=True)):
        sel = rows[(src == s_code) & (code == e_code)]
        source = retry.SOURCES[s_code - 1] if s_code > 0 else ""
        fids = j["fileID"][sel]
        acted = [_act(state, rule, sel, fids) for rule in retry.preprocess_rules(state.retry_rules, source, e_code)]
        if retry.error_class(state.error_classes, source, e_code) == "system":
            f.maxFailure[fids] += 1
            acted.append("increase_max_failure")
        key = (source, int(e_code), ", ".join(acted) or "-")
        state.retries[key] = state.retries.get(key, 0) + len(sel)


def _act(state: SimState, rule: retry.RetryRule, sel: np.ndarray, fids: np.ndarray) -> str:
    """Carry out one retrial RULE for the failed jobs SEL (inputs FIDS); what was done, as counted."""
    f = state.files
    if not rule.active:
        return f"{rule.action} (inactive: logged only)"
    if rule.action == "no_retry":
        f.maxAttempt[fids] = f.attemptNr[fids] + 1  # the attempt that just failed is the last
    elif rule.action == "limit_retry":
        f.maxAttempt[fids] = np.minimum(f.maxAttempt[fids], int(rule.params.get("maxAttempt", 1)))
    elif rule.action == "increase_memory":
        for row in sel.tolist():
            increase_ram(state, row)
    elif rule.action == "increase_cputime":
        for row in sel.tolist():
            increase_cputime(state, row)
    else:
        return f"{rule.action} (not simulated)"
    return rule.action


def increase_cputime(state: SimState, row: int) -> None:
    """initialize_cpu_time_task (§4.3) for one job killed at its queue's maxtime: the task's cpuTime from it.

    Usage: ``increase_cputime(state, row)``
    """
    j, t, g = state.jobs, state.tasks, state.g
    tid, q = int(j["jediTaskID"][row]), int(j["computingSite"][row])
    pos = state.task_rows(np.array([tid]))[0]
    old = float(t.at[tid, "cpuTime"])
    fid = int(j["fileID"][row])
    events = t.at[tid, "nEventsPerUnit"] * (state.files.share[fid] if fid >= 0 else 1.0)  # the job's own events
    verdict = retry.increase_cputime(
        bool(state.jobs_finished[pos] > 0), float(g.maxtime_s[q]), float(g.corepower[q]),
        float(g.queue_cores[q]), int(j["coreCount"][row]), float(t.at[tid, "basewalltime"]),
        float(t.at[tid, "cpuEfficiency"]), max(int(events), 1), old,
    )  # fmt: skip
    pid = j["PandaID"][row : row + 1]
    if verdict.cpu_time is None:
        state.log.add(state.now, pid, "failed", "-", "retry_cputime_kept", old)
        return
    state.log.add(state.now, pid, "failed", "-", "retry_cputime", verdict.cpu_time, old)
    if verdict.cpu_time == old:
        return  # the same value written again (a later kill of the same task): nothing changes
    state.estimates_changed(tid, {"cputime": verdict.cpu_time})
    state.note_task(tid, f"retry module increase_cputime: {verdict.why}")


def increase_ram(state: SimState, row: int) -> None:
    """The memory increase on retry for one job that failed for memory: seed 003's rule (increase_ram_seed), or
    with switch memory_retry_as_jedi increaseRamLimitJobJEDI (§4.4): the task's ramCount (30 % rule) or its input's.

    Usage: ``increase_ram(state, row)``
    """
    if not rule(state.config, "memory_retry_as_jedi"):
        _increase_ram_seed(state, row)
        return
    j, f, t = state.jobs, state.files, state.tasks
    tid, fid = int(j["jediTaskID"][row]), int(j["fileID"][row])
    per_core, cores = bool(t.at[tid, "ramPerCore"]), int(j["coreCount"][row])
    base = float(t.at[tid, "baseRamCount"])
    norm = retry.job_ram(retry.min_ram_count(float(j["ramCount"][row]), base, cores, per_core), base, cores,
                         per_core)  # fmt: skip
    task_ram = state.task_ram[tid]
    raised = state.raised_ram.setdefault(tid, {})
    verdict = retry.increase_ram(norm, task_ram, np.fromiter(raised.values(), float, len(raised)),
                                 int(t.at[tid, "nFiles"]), bool(t.at[tid, "ramFixed"]))  # fmt: skip
    pid = j["PandaID"][row : row + 1]
    if verdict.task_ram is not None:
        state.estimates_changed(tid, {"ramcount": verdict.task_ram})
        state.note_task(tid, f"retry module increase_memory: {verdict.why}")
        state.log.add(state.now, pid, "failed", "-", "retry_task_ram", verdict.task_ram, task_ram)
    elif verdict.file_ram is not None:
        f.ramCount[fid] = raised[fid] = max(f.ramCount[fid], verdict.file_ram)
        state.log.add(state.now, pid, "failed", "-", "retry_ram", verdict.file_ram, norm)
    else:
        state.log.add(state.now, pid, "failed", "-", "retry_ram_kept", norm, task_ram)


def _increase_ram_seed(state: SimState, row: int) -> None:
    """Seed 003's memory increase for the job at ROW: its maxPSS in the task's unit ((maxPSS - baseRamCount) / cores
    for per-core tasks, as the seed's scouts measure it) against its chunk's ramCount; the task's own when 30 % of
    its jobs failed for memory."""
    j, f, t = state.jobs, state.files, state.tasks
    tid, fid, cores = int(j["jediTaskID"][row]), int(j["fileID"][row]), max(int(j["coreCount"][row]), 1)
    pss = float(j["maxPSS"][row])
    if tid in state.per_core:
        pss = (pss - float(t.at[tid, "baseRamCount"])) / cores
    state.memory_failed[tid] = n_mem = state.memory_failed.get(tid, 0) + 1
    made = int(state.jobs_made[state.task_rows(np.array([tid]))][0])
    task_ram = state.task_ram[tid]
    verdict = retry.increase_ram_seed(pss, float(j["ramCount"][row]), task_ram, n_mem, made)
    pid = j["PandaID"][row : row + 1]
    if verdict.task_ram is not None and verdict.task_ram > task_ram:
        state.estimates_changed(tid, {"ramcount": verdict.task_ram})
        state.note_task(tid, f"retry module increase_memory: {verdict.why}")
        state.log.add(state.now, pid, "failed", "-", "retry_task_ram", verdict.task_ram, task_ram)
    elif verdict.file_ram is not None:
        f.ramCount[fid] = state.raised_ram.setdefault(tid, {})[fid] = max(f.ramCount[fid], verdict.file_ram)
        state.log.add(state.now, pid, "failed", "-", "retry_ram", verdict.file_ram, float(j["ramCount"][row]))
    else:
        state.log.add(state.now, pid, "failed", "-", "retry_ram_kept", pss, task_ram)
